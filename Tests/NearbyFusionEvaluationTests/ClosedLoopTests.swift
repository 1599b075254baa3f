import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing

@Suite("closed loop: simulated users who follow the advice")
struct ClosedLoopTests {
    /// Stepped one radio tick at a time, a scripted scenario writes the events the whole
    /// simulation writes, in the same order (here the distance-only watch's first 20 s).
    @Test func aSteppedSimulationWritesTheSameEvents() {
        let scenario = ScenarioCatalogue.distanceOnly(seed: 3)
        let whole = Simulator.events(for: scenario)
        var stepped = SteppedSimulation(scenario)
        var events: [RecordingEvent] = []
        while stepped.nextRadioTime <= 20 { events += stepped.advance() }
        #expect(events.count > 1000)
        #expect(JSONLines.text(events) == JSONLines.text(Array(whole.prefix(events.count))))
    }

    /// A steered path holds still between motions and appends each where the last ended.
    @Test func aSteerablePathAppendsMotionsAtTheirTime() {
        let path = SteerablePath()
        #expect(path.pose(at: 5).positionInWorld == Vector3(0, 1.4, 0))
        path.append(.sidestep(duration: 1, distance: 1), at: 2)
        #expect(!path.isMoving(at: 3.5) && path.isMoving(at: 2.5))
        #expect((path.pose(at: 10).positionInWorld - Vector3(1, 1.4, 0)).length < 1e-9)
        #expect(abs(path.lengthWalked(until: 10) - 1) < 0.01)
    }

    /// A distance-only watch: users who follow the guidance get the angle at least twice as
    /// soon as users who answer the reasons with sweeps, over seeds 1–8 (median), with a
    /// shorter path. Users who always go another way than advised (along the line already
    /// travelled, two times in three) lose much of that.
    @Test func followingTheGuidanceResolvesADistanceOnlyWatchSooner() {
        func median(_ user: SimulatedUser) -> (angle: Double, metres: Double) {
            let results = (1...8).map { ClosedLoop.run(ScenarioCatalogue.distanceOnly(seed: UInt64($0)), user: user) }
            return (ClosedLoop.medianFirstAngle(results)!, ClosedLoop.medianMetres(results)!)
        }
        let reasons = median(SimulatedUser(policy: .reasons)), guidance = median(SimulatedUser(policy: .guidance))
        #expect(guidance.angle <= 0.5 * reasons.angle, "guidance \(guidance), reasons \(reasons)")
        #expect(guidance.metres <= reasons.metres)
        var contrary = SimulatedUser(policy: .guidance)
        contrary.wrongDirectionProbability = 1
        #expect(median(contrary).angle > guidance.angle, "\(median(contrary)) vs \(guidance)")
    }

    /// An app that asks the guidance for `worldTransform` is guided on after the angle, and
    /// gets the position sooner than one guided to the angle alone (UWB tag behind the user,
    /// seeds 1–8, median; a run without one counts as 40 s).
    @Test func guidanceTowardWorldTransformGetsThePositionSooner() {
        func median(_ policy: SimulatedUser.Policy) -> Double {
            let results = (1...8).map { ClosedLoop.run(ScenarioCatalogue.behindUser(seed: UInt64($0)), user: SimulatedUser(policy: policy)) }
            return ClosedLoop.medianFirstWorldTransform(results)!
        }
        let angle = median(.guidance), position = median(.guidanceToWorldTransform)
        #expect(position < angle, "worldTransform at \(position) s guided toward it, \(angle) s guided to the angle")
        var options = FusionOptions()
        options.coaching.guidanceOutput = .worldTransform
        let run = ScenarioRun(ScenarioCatalogue.behindUser(seed: 1), options: options)
        #expect(run.updates.contains { $0.estimate.horizontalAngle != nil && $0.estimate.worldTransform == nil && $0.estimate.guidance != nil })
        #expect(run.updates.allSatisfy { $0.estimate.worldTransform == nil || $0.estimate.guidance == nil })
    }

    /// The targets compare the two policies over 50 seeds, and are not judged over fewer.
    @Test func theTargetsCompareThePolicies() {
        let fast = ClosedLoopResult(firstAngleSeconds: 4, firstWorldTransformSeconds: nil, metresWalked: 2, firstAngleError: 0.01)
        let slow = ClosedLoopResult(firstAngleSeconds: nil, firstWorldTransformSeconds: nil, metresWalked: 20, firstAngleError: nil)
        let met = ClosedLoop.checks(scenario: "loop-cs-near", reasons: Array(repeating: slow, count: 50), guidance: Array(repeating: fast, count: 50))
        #expect(met.count == 2 && met.allSatisfy { $0.verdict == .met })
        let missed = ClosedLoop.checks(scenario: "loop-cs-near", reasons: Array(repeating: fast, count: 50), guidance: Array(repeating: slow, count: 50))
        #expect(missed.allSatisfy { $0.verdict == .missed })
        #expect(ClosedLoop.checks(scenario: "loop-cs-near", reasons: [slow], guidance: [fast]).allSatisfy { $0.verdict == .notJudged })
    }
}
