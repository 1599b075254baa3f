import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// Seeded synthetic motion, named after what a user sees.
@Suite("Scenarios: what the user sees")
struct ScenarioTests {
    static func degrees(_ r: Double) -> Double { Angle.degrees(radians: r) }

    /// Every published output respects the withholding rules of the recording format.
    static func checkWithholding(_ run: ScenarioRun) {
        for u in run.updates {
            let e = u.estimate
            guard let status = e.convergence?.status else { continue }
            let reasons = status.reasons
            if !reasons.isDisjoint(with: .withholdingHorizontal) || status == .unknown {
                #expect(e.horizontalAngle == nil)
                #expect(e.verticalDirectionEstimate == nil || e.verticalDirectionEstimate == .unknown)
            }
            if !status.isConverged { #expect(e.worldTransform == nil) }
            if e.verticalDirectionEstimate == .unknown { #expect(e.horizontalAngle == nil) }
        }
    }

    @Test func stillPhoneAsksToMove() {
        let run = ScenarioRun(ScenarioCatalogue.stillPhone(seed: 1))
        let after = run.updates.filter { $0.estimate.timestamp > 1 }
        #expect(!after.isEmpty)
        for u in after {
            #expect(u.estimate.convergence?.status == .notConverged(.insufficientMovement))
            #expect(u.estimate.horizontalAngle == nil && u.estimate.worldTransform == nil)
            // The radio's own distance and direction are still published.
            #expect(u.estimate.distance != nil)
        }
        Self.checkWithholding(run)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func sweepingSidewaysResolvesHorizontalAngle(seed: UInt64) throws {
        let run = ScenarioRun(ScenarioCatalogue.sidewaysSweep(seed: seed))
        let last = try #require(run.updates.last)
        let angle = try #require(last.estimate.horizontalAngle)
        #expect(abs(Self.degrees(Angle.wrapped(angle - last.trueHorizontalAngle!))) < 3)
        // Published within 2 s of the sweep starting (it starts at 1 s).
        let first = try #require(run.updates.first { $0.estimate.horizontalAngle != nil })
        #expect(first.estimate.timestamp < 3)
        Self.checkWithholding(run)
    }

    @Test func objectOneFloorUpIsAboveOrBelowThenAboveAfterAVerticalSweep() throws {
        let run = ScenarioRun(ScenarioCatalogue.floorAbove(seed: 1))
        // Sideways sweeps run from 1 s to 7.4 s, then up-down sweeps.
        let sideways = run.updates.filter { $0.estimate.timestamp > 1 && $0.estimate.timestamp < 7.4 }
        #expect(sideways.contains { $0.estimate.verticalDirectionEstimate == .aboveOrBelow })
        #expect(!sideways.contains { $0.estimate.verticalDirectionEstimate == .above || $0.estimate.verticalDirectionEstimate == .below })
        #expect(sideways.contains { $0.estimate.convergence?.status.reasons.contains(.insufficientVerticalSweep) == true })
        #expect(sideways.contains { $0.estimate.horizontalAngle != nil })
        let end = run.updates.filter { $0.estimate.timestamp > 10 }
        #expect(!end.isEmpty)
        #expect(end.allSatisfy { $0.estimate.verticalDirectionEstimate == .above })
        #expect(!run.updates.contains { $0.estimate.verticalDirectionEstimate == .below || $0.estimate.verticalDirectionEstimate == .same })
        Self.checkWithholding(run)
    }

    @Test func objectBehindTheUserStillGetsAHorizontalAngleAfterSweeping() throws {
        let run = ScenarioRun(ScenarioCatalogue.behindUser(seed: 2))
        #expect(!run.updates.contains { $0.estimate.direction != nil && $0.estimate.worldTransform == nil })  // no UWB direction behind
        let published = run.updates.filter { $0.estimate.horizontalAngle != nil }
        #expect(published.count > 20)
        for u in published {
            #expect(abs(Self.degrees(Angle.wrapped(u.estimate.horizontalAngle! - u.trueHorizontalAngle!))) < 8)
        }
        // Behind means |angle| near 180°.
        #expect(abs(Self.degrees(published.last!.estimate.horizontalAngle!)) > 150)
        Self.checkWithholding(run)
    }

    @Test func distanceOnlyDeviceGetsAHorizontalAngleAfterSweeping() throws {
        let run = ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 3))
        let published = run.updates.filter { $0.estimate.horizontalAngle != nil }
        #expect(published.count > 20)
        #expect(run.worstConvergedAngleError < Angle.radians(degrees: 15))
        let errors = published.map { abs(Self.degrees(Angle.wrapped($0.estimate.horizontalAngle! - $0.trueHorizontalAngle!))) }
        #expect(Statistics.quantile(errors, 0.5)! < 3)
        Self.checkWithholding(run)
    }

    @Test func straightSidewaysSweepWithoutBearingNeverConverges() {
        // A watch swept along a perfectly straight line: range is symmetric about that line,
        // so the angle about it is unknown and nothing may be reported as converged.
        var scenario = SimulationScenario(
            name: "straight-line", trajectory: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 8, arcDepth: 0)]),
            objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(0.6, 1.4, -4))], seed: 4)
        scenario.radio.capabilities = .distanceOnly
        scenario.vio.positionNoise = 0
        let run = ScenarioRun(scenario)
        #expect(!run.updates.contains { $0.estimate.convergence?.status.isConverged == true })
        #expect(!run.updates.contains { $0.estimate.worldTransform != nil })
        #expect(run.updates.last?.estimate.convergence?.status.reasons.contains(.insufficientHorizontalSweep) == true)
        Self.checkWithholding(run)
    }

    @Test func darkRoomReportsInsufficientLightingAtSessionLevel() {
        let run = ScenarioRun(ScenarioCatalogue.darkRoom(seed: 1))
        #expect(run.sessionChanges.first?.convergence.status == .notConverged(.insufficientLighting))
        #expect(run.updates.allSatisfy { $0.estimate.horizontalAngle == nil })
        #expect(run.updates.dropFirst(3).allSatisfy { $0.estimate.convergence?.status.reasons.contains(.insufficientLighting) == true })
        // Ranges keep arriving: the radio is fine, only the light is not.
        #expect(run.updates.allSatisfy { $0.estimate.convergence?.status.reasons.contains(.insufficientSignalStrength) == false })
    }

    @Test func lightComingBackClearsTheSessionLevelReason() {
        var engine = FusionEngine()
        let dark = DevicePose(timestamp: 0, positionInWorld: .zero, worldFromDevice: .identity, ambientIntensity: 10)
        let lit = DevicePose(timestamp: 1, positionInWorld: .zero, worldFromDevice: .identity, ambientIntensity: 800)
        #expect(engine.ingest(dark)?.convergence.status == .notConverged(.insufficientLighting))
        #expect(engine.ingest(dark) == nil)   // only changes are reported
        #expect(engine.ingest(lit)?.convergence.status == .unknown)
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func nonLineOfSightRangesDoNotBreakConvergence(seed: UInt64) throws {
        let run = ScenarioRun(ScenarioCatalogue.nlos(seed: seed))
        let converged = try #require(run.firstConvergedTime)
        #expect(converged < 6)
        #expect(run.worstConvergedAngleError < Angle.radians(degrees: 15))
        #expect(Statistics.quantile(run.positionErrors, 0.5)! < 0.15)
        Self.checkWithholding(run)
    }

    static func expectOnlyRadioOutputs(_ run: ScenarioRun) {
        #expect(!run.updates.isEmpty)
        #expect(run.sessionChanges.isEmpty)
        for u in run.updates {
            #expect(u.estimate.horizontalAngle == nil && u.estimate.verticalDirectionEstimate == nil)
            #expect(u.estimate.worldTransform == nil && u.estimate.convergence == nil)
        }
        #expect(run.updates.contains { $0.estimate.direction != nil })
        #expect(run.updates.contains { $0.estimate.distance != nil })
    }

    @Test func deviceWithoutCameraAssistancePublishesOnlyTheRadiosOutputs() {
        Self.expectOnlyRadioOutputs(ScenarioRun(ScenarioCatalogue.cameraAssistanceOff(seed: 1)))
        // Asking for camera assistance on a device that lacks it changes nothing.
        Self.expectOnlyRadioOutputs(ScenarioRun(ScenarioCatalogue.cameraAssistanceOff(seed: 1), cameraAssistance: true))
    }

    @Test func cameraAssistanceDisabledPublishesOnlyTheRadiosOutputs() {
        // The same motion that converges with camera assistance on…
        #expect(ScenarioRun(ScenarioCatalogue.coached(seed: 1)).firstConvergedTime != nil)
        // …publishes only distance and direction with it off.
        Self.expectOnlyRadioOutputs(ScenarioRun(ScenarioCatalogue.coached(seed: 1), cameraAssistance: false))
    }

    /// The fusion core's accuracy targets on the coached motion, objects 3–8 m away.
    @Test func coachedMotionMeetsTheAccuracyTargets() {
        var angleErrors: [Double] = [], positionErrors: [Double] = []
        var noise = NoiseStream(seed: 77, source: "placement")
        for seed in UInt64(1)...12 {
            let distance = noise.uniform(3, 8), bearing = noise.uniform(-0.8, 0.8)
            let position = Vector3(distance * sin(bearing), 1.4 + noise.uniform(-1, 0.8), -distance * cos(bearing))
            let run = ScenarioRun(ScenarioCatalogue.coached(seed: seed, position: position))
            angleErrors += run.horizontalAngleErrors
            positionErrors += run.positionErrors
            let converged = run.firstConvergedTime
            #expect(converged != nil && converged! < 1 + 3, "seed \(seed) at \(position): first converged at \(String(describing: converged))")
            #expect(run.worstConvergedAngleError < Angle.radians(degrees: 15))
            Self.checkWithholding(run)
        }
        #expect(Self.degrees(Statistics.quantile(angleErrors, 0.5)!) <= 2)
        #expect(Self.degrees(Statistics.quantile(angleErrors, 0.95)!) <= 6)
        #expect(Statistics.quantile(positionErrors, 0.5)! <= 0.10)
    }

    /// Mean NEES of the final position over 60 seeded runs is inside the two-sided 95 %
    /// band of χ²(3·60)/60.
    @Test func filterIsConsistentOverSixtySeededRuns() {
        var total = 0.0
        let runs = 60
        for seed in 1...runs {
            let run = ScenarioRun(ScenarioCatalogue.coached(seed: UInt64(1000 + seed)))
            total += run.finalNEES ?? .infinity
        }
        let mean = total / Double(runs)
        // χ²(180): 2.5 % and 97.5 % quantiles are 144.4 and 219.4.
        #expect(mean > 144.4 / Double(runs) && mean < 219.4 / Double(runs), "mean NEES \(mean)")
    }

    @Test func rangesStoppingReportsInsufficientSignalStrength() {
        var engine = FusionEngine()
        let h = engine.register(objectID: "tag")
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        _ = engine.ingest(UWBMeasurement(timestamp: 0.1, distance: 4, directionInDevice: nil), for: h)
        let early = engine.ingest(UWBMeasurement(timestamp: 1.0, distance: nil, directionInDevice: nil), for: h)
        #expect(early.convergence?.status.reasons.contains(.insufficientSignalStrength) == false)
        let late = engine.ingest(UWBMeasurement(timestamp: 2.5, distance: nil, directionInDevice: nil), for: h)
        #expect(late.convergence?.status.reasons.contains(.insufficientSignalStrength) == true)
        #expect(late.horizontalAngle == nil)
        let beyondReach = FusionOptions().coaching.maximumRange + 5
        let far = engine.ingest(UWBMeasurement(timestamp: 2.6, distance: beyondReach, directionInDevice: nil), for: h)
        #expect(far.convergence?.status.reasons.contains(.insufficientSignalStrength) == true)
    }

    /// A lone multipath ghost beyond `maximumRange` among good ranges is no lost signal;
    /// ranges all beyond it for the signal timeout are.
    @Test func aLoneGhostRangeIsNotALostSignal() {
        var engine = FusionEngine()
        let h = engine.register(objectID: "tag")
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        let reach = FusionOptions().coaching.maximumRange
        func signalLost(_ t: Double, _ r: Double) -> Bool {
            let e = engine.ingest(UWBMeasurement(timestamp: t, distance: r, directionInDevice: nil), for: h)
            return e.convergence?.status.reasons.contains(.insufficientSignalStrength) == true
        }
        #expect(!signalLost(0.1, 29))
        #expect(!signalLost(0.2, reach + 5), "one ghost")
        #expect(!signalLost(0.3, 29))
        #expect(!signalLost(1.0, reach + 9))
        #expect(!signalLost(2.2, reach + 9), "1.9 s of ranges beyond reach")
        #expect(signalLost(2.4, reach + 9), "2.1 s of ranges beyond reach")
        #expect(!signalLost(2.5, 29))
    }

    @Test func removedObjectStartsAfresh() {
        var engine = FusionEngine()
        let h = engine.register(objectID: "tag")
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        _ = engine.ingest(UWBMeasurement(timestamp: 0.1, distance: 4, directionInDevice: nil), for: h)
        #expect(engine.snapshot(h).hypothesisCount > 1)
        engine.remove(objectID: "tag")
        #expect(engine.snapshot(h).hypothesisCount == 0)
    }

    @Test func badMeasurementsNeverProduceNaN() {
        var engine = FusionEngine()
        let h = engine.register(objectID: "tag")
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        for (k, d) in [Double.nan, -1, 0, .infinity, 4, 1e9].enumerated() {
            let e = engine.ingest(UWBMeasurement(timestamp: 0.1 * Double(k + 1), distance: d,
                                                 directionInDevice: Vector3(.nan, 0, -1)), for: h)
            #expect(e.distance.map(\.isFinite) ?? true)
            #expect(e.direction == nil)
        }
        #expect(engine.snapshot(h).moments?.meanInWorld.isFinite ?? true)
    }
}
