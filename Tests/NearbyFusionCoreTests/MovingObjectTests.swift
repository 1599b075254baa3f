import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// Objects that move: peers that keep still or walk, tags picked up and put down, and the
/// app's motion hint. Every run is seeded.
@Suite("moving objects and peers")
struct MovingObjectTests {
    static func degrees(_ r: Double) -> Double { Angle.degrees(radians: r) }

    @Test func aStillPeerConvergesLikeAnAccessoryOnTheSamePath() {
        for seed: UInt64 in 1...5 {
            let peer = ScenarioRun(ScenarioCatalogue.stillPeer(seed: seed))
            let accessory = ScenarioRun(ScenarioCatalogue.coached(seed: seed))
            // Sweeping starts at 1 s: converged within 3 s of it, as the accessory is.
            let t = peer.firstConvergedTime
            #expect(t != nil && t! <= 4.0, "seed \(seed): still peer converged at \(String(describing: t))")
            #expect(accessory.firstConvergedTime != nil)
            let errors = peer.horizontalAngleErrors.map(Self.degrees)
            #expect(Statistics.quantile(errors, 0.5)! <= 2, "seed \(seed)")
            #expect(Statistics.quantile(peer.positionErrors, 0.5)! <= 0.10, "seed \(seed)")
        }
    }

    @Test func aWalkingPeerGetsAnAngleAndATransformOfWhereItIsNow() {
        var errors: [Double] = [], positions: [Double] = []
        for seed: UInt64 in 1...5 {
            let run = ScenarioRun(ScenarioCatalogue.peerStopAndGo(seed: seed))
            // Walking from the start: an angle within 3 s of the start of sweeping (1 s).
            let first = run.firstAngleTime
            #expect(first != nil && first! <= 4.0, "seed \(seed): first angle at \(String(describing: first))")
            #expect(Self.degrees(run.worstConvergedAngleError) < 15, "seed \(seed)")
            errors += run.horizontalAngleErrors.map(Self.degrees)
            positions += run.positionErrors
            // The estimate says the peer moves while it walks (4–6.5 s it stands).
            let walking = run.updates.filter { $0.estimate.timestamp > 7.5 && $0.estimate.timestamp < 11.5 }
            #expect(walking.filter { $0.estimate.motion == .moving }.count * 2 > walking.count, "seed \(seed)")
        }
        #expect(Statistics.quantile(errors, 0.5)! <= 3)
        #expect(Statistics.quantile(errors, 0.95)! <= 8)
        #expect(Statistics.quantile(positions, 0.5)! <= 0.30)
    }

    /// A peer walking at 0.3 m/s keeps its status: its mode probability wanders, and judging
    /// the combined covariance by a still object's thresholds whenever the report read
    /// `stationary` flipped it 27 times a minute (median of 20 seeds) before.
    @Test func aWalkingPeersStatusDoesNotFlicker() throws {
        var rates: [Double] = []
        for seed: UInt64 in 1...5 {
            let run = ScenarioRun(ScenarioCatalogue.walkingPeer(seed: seed))
            rates.append(try #require(run.convergenceChangesPerMinute, "seed \(seed) never converged"))
            let first = try #require(run.firstConvergedTime)
            let after = run.updates.filter { $0.estimate.timestamp >= first }
            let converged = after.filter { $0.estimate.convergence?.status.isConverged == true }.count
            #expect(Double(converged) >= 0.9 * Double(after.count), "seed \(seed): \(converged) of \(after.count)")
        }
        #expect(Statistics.quantile(rates, 0.5)! <= 3, "changes per minute: \(rates)")
    }

    @Test func aTagPickedUpIsReportedMovingWithinASecondAndNeverLeftBehind() throws {
        var delays: [Double] = []
        for seed: UInt64 in 1...5 {
            let run = ScenarioRun(ScenarioCatalogue.tagPickedUp(seed: seed))
            #expect(run.motionStart.map { abs($0 - 11) < 0.15 } == true)
            let after = try #require(run.movingReportedAfter, "seed \(seed): never reported moving")
            // The target is 1 s (accuracy --seeds 50: the worst of 50 seeds takes 0.9 s).
            #expect(after <= 1.0, "seed \(seed): moving reported \(after) s after it started")
            delays.append(after)
            #expect(run.longestStaleTransform(beyond: 0.5) <= 1.0, "seed \(seed)")
            // Put down at 14.5 s: settled again, converged where it now lies.
            let last = try #require(run.updates.last)
            #expect(last.estimate.motion == .stationary, "seed \(seed)")
            #expect(last.estimate.convergence?.status.isConverged == true, "seed \(seed)")
            let error = try #require(last.estimate.worldTransform.map { ($0.translation - last.truthInWorld).length })
            #expect(error < 0.2, "seed \(seed): \(error) m from where it was put down")
            // While carried, the published velocity points the way the tag goes (its size lags:
            // it is the mode-weighted IMM velocity, about half the 0.84 m/s at first).
            let carried = run.updates.filter { $0.estimate.timestamp > 12.5 && $0.estimate.timestamp < 14.4 }
            let along = carried.compactMap { u in u.estimate.velocity.map { $0.dot(u.trueVelocity.normalized) } }
            #expect(!along.isEmpty && along.allSatisfy { $0 > 0 }, "seed \(seed): \(along)")
            #expect(along.isEmpty || Statistics.quantile(along, 0.5)! > 0.3, "seed \(seed): \(along)")
        }
        #expect(Statistics.quantile(delays, 0.5)! <= 1.0)
    }

    /// The convergence analysis holds an estimate that is a moving object's with probability
    /// `w` to `√((1 − w) T_still² + w T_moving²)`. Judged by a still object's 12 cm, a tag picked
    /// up without the app's hint left `converged` ("sweep") while it was followed, in every
    /// seed, and a still friend's status dropped for 0.1–0.3 s whenever a few noisy
    /// directions raised the moving model's probability (6 of 20 seeds).
    @Test func noSweepIsAskedForWhileTheOnlyDoubtIsWhetherTheObjectMoves() {
        var carriedKeptConverged = 0
        for seed: UInt64 in 1...10 {
            let run = ScenarioRun(ScenarioCatalogue.tagPickedUp(seed: seed))
            let carried = run.updates.filter { $0.estimate.timestamp >= 11 && $0.estimate.timestamp <= 15.5 }
            if carried.allSatisfy({ $0.estimate.convergence?.status.isConverged == true }) { carriedKeptConverged += 1 }
            #expect(run.longestStaleTransform(beyond: 0.5) <= 1.0, "seed \(seed)")
            #expect(Self.degrees(run.worstConvergedAngleError) < 15, "seed \(seed)")
        }
        #expect(carriedKeptConverged >= 8, "\(carriedKeptConverged) of 10 carried tags kept converged")
        var stillPeersWithChanges = 0
        for seed: UInt64 in 1...20 {
            let run = ScenarioRun(ScenarioCatalogue.stillPeer(seed: seed))
            if (run.convergenceChangesPerMinute ?? 0) > 0 { stillPeersWithChanges += 1 }
        }
        #expect(stillPeersWithChanges <= 2, "\(stillPeersWithChanges) of 20 still peers changed status after converging")
    }

    /// A tag carried straight away from the user: its direction hardly changes and every
    /// range runs long, as a multipath burst's do, so the still model set them all aside for
    /// both motion models. Before the ranges' smooth run away was told from a burst
    /// (``FusionOptions/Gating/runAwayStep``), 29 of 50 runs never said `moving` and a transform
    /// more than 50 cm off stood for up to 2.7 s, until 30 rejected ranges restarted it.
    @Test func aTagCarriedStraightAwayIsFollowed() throws {
        for seed: UInt64 in 1...5 {
            let run = ScenarioRun(ScenarioCatalogue.tagCarriedAway(seed: seed))
            let after = try #require(run.movingReportedAfter, "seed \(seed): never reported moving")
            #expect(after <= 1.0, "seed \(seed): moving reported \(after) s after it started")
            #expect(run.longestStaleTransform(beyond: 0.5) <= 1.0, "seed \(seed)")
            let last = try #require(run.updates.last)
            #expect(last.estimate.motion == .stationary && last.estimate.convergence?.status.isConverged == true, "seed \(seed)")
            let error = try #require(last.estimate.worldTransform.map { ($0.translation - last.truthInWorld).length })
            #expect(error < 0.25, "seed \(seed): \(error) m from where it was put down")
        }
        // Still tags' excesses do not run away: no tag of the still scenarios is reported
        // moving (below), and the accuracy tables of every other scenario are unchanged.
    }

    /// Once the ranges' smooth run away is recognised, the moving model is restarted on the
    /// run's line and the ranges that follow are weighed by both models: the moving model had
    /// seen none of the run (each range was set aside as multipath for both), so one range let
    /// through at a time turned the modes only as its uncertainty grew. Seed 105 recognises the
    /// run 0.8 s after the carry starts and said `moving` 0.4 s later (1.2 s in all, past the 1 s
    /// the moving objects are held to); handed the run, it says so at the next range.
    @Test func aRecognisedRunAwayIsHandedToTheMovingModel() throws {
        for seed: UInt64 in [105, 1, 2, 3, 4, 5] {
            let run = ScenarioRun(ScenarioCatalogue.tagCarriedAway(seed: seed))
            let after = try #require(run.movingReportedAfter, "seed \(seed): never reported moving")
            #expect(after <= 0.95, "seed \(seed): moving reported \(after) s after it started")
        }
    }

    /// Two people walking, phone to phone, ranges only: the bank's bearing is tens of degrees
    /// uncertain at the end, each hypothesis spread round the device on the sphere of its
    /// distance. Reported flat, the heaviest claimed the distance from the device to centimetres
    /// at points the sphere puts metres inside it, and these seeds' final NEES was 145–278; on
    /// the sphere it is that of an honest estimate.
    @Test func aRangeOnlyWalkerIsReportedOnTheSphereItsRangesAllow() throws {
        for seed: UInt64 in [12, 13, 14] {
            let run = ScenarioRun(ScenarioCatalogue.phoneToPhonePeer(seed: seed, bothWalking: true))
            let nees = try #require(run.finalNEES)
            #expect(nees < 10, "seed \(seed): final NEES \(nees)")
        }
    }

    /// Ten minutes of sweeping and walking with 10 % NLOS in bursts: a run of 30 long ranges
    /// that scatter (multipath: 0.6–2 m too long, jumping by up to a metre from one to the
    /// next) while the directions still agree used to restart a converged tag (seed 10's
    /// keys at 344.9 s: a second of "move", then "sweep"). Scattered long ranges now leave it
    /// standing; smooth ones (a slow carry away) still count.
    @Test func aMultipathRunDoesNotRestartAConvergedTagWithDirections() throws {
        let run = ScenarioRun(ScenarioCatalogue.longSession(seed: 10), objectID: "keys")
        let first = try #require(run.firstConvergedTime)
        let after = run.updates.filter { $0.estimate.timestamp >= first }
        let notConverged = after.filter { $0.estimate.convergence?.status.isConverged != true }
        #expect(notConverged.isEmpty, "not converged at \(notConverged.prefix(3).map { $0.estimate.timestamp }) s")
    }

    /// A restart tiles the range sphere at the median of the rejected ranges, not at the last
    /// one: `nlos-20-percent` seed 2 restarted its acquisition twice on a multipath range
    /// (0.7 and 1.2 m long), every hypothesis then held the multipath mode, and it converged
    /// 1.49 m too far for 1.2 s. (Still objects: the suite lives here with the other
    /// stationary-model tests.)
    @Test func aRestartIsNotTiledOnAMultipathRange() throws {
        let run = ScenarioRun(ScenarioCatalogue.nlos(seed: 2))
        let worst = try #require(run.positionErrors.max())
        #expect(worst < 0.5, "a worldTransform \(worst) m off")
    }

    /// No multipath shortens a range. Long-session seed 13's keys settled on its first 1.6 s
    /// of ranges, all 1.1–1.9 m long, and stood converged 1.45 m too far for 2.7 s while 30
    /// line-of-sight ranges were rejected as too short: five short ones now start it again.
    /// Seed 17's bag, well acquired at 4.6 m, was restarted by five ranges 0.9–1.9 m *long*
    /// and tiled on them (1.7 m off for 1.7 s): long runs now wait for the converged limit.
    @Test func anAcquisitionRestartsOnShortRangesNotOnAMultipathBurst() {
        for (seed, object) in [(UInt64(13), "keys"), (17, "bag")] {
            let run = ScenarioRun(ScenarioCatalogue.longSession(seed: seed), objectID: object)
            #expect(run.longestStaleTransform(beyond: 0.5) <= 0.5, "seed \(seed) \(object)")
        }
    }

    /// A range too short now counts as motion for a tag with directions: still tags, with
    /// their NLOS bursts and direction noise, must still never be reported moving.
    @Test func stillTagsAreNeverReportedMoving() {
        let scenarios: [(String, (UInt64) -> SimulationScenario)] = [
            ("coached", { ScenarioCatalogue.coached(seed: $0) }), ("sideways", ScenarioCatalogue.sidewaysSweep),
            ("nlos", ScenarioCatalogue.nlos), ("two tags", ScenarioCatalogue.twoTags),
        ]
        for (name, make) in scenarios {
            for seed: UInt64 in 1...5 {
                for object in make(seed).objects.map(\.id) {
                    let run = ScenarioRun(make(seed), objectID: object)
                    #expect(run.updates.count > 50, "\(name) seed \(seed) \(object)")
                    let moving = run.updates.filter { $0.estimate.motion == .moving }
                    #expect(moving.isEmpty, "\(name) seed \(seed) \(object): moving at \(moving.first?.estimate.timestamp ?? 0) s")
                }
            }
        }
    }

    /// A tag pinned still (the app's hint, or a watch's ranges alone) runs its stationary model
    /// only: the moving models are neither predicted nor corrected, and nothing reads them —
    /// what they hold when the pin is lifted changes nothing that follows, because the
    /// manoeuvring model then starts from the stationary one.
    @Test func aTagPinnedStillRunsOneModelAndItsMovingModelsAreNeverRead() {
        let prior = FusionOptions().motion.accessoryMotionPrior
        let qa = Vector3(0.5, 0.05, 0.5)
        func step(_ imm: inout InteractingMultipleModel, _ k: Int, hint: MotionActivityState) {
            imm.predict(seconds: 0.1, prior: prior, hint: hint, accelerationIntensity: qa, velocityPriorVariance: 1,
                        addedPositionVariance: 1e-6)
            let a = Vector3(0.1 * Double(k % 5), 1.4, 0)
            let truth = Vector3(0.5, 1.2, -4)
            _ = imm.update(model: RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: 6.63),
                           measured: (truth - a).length + 0.01 * Double(k % 3 - 1), outlierProbability: 0.05, outlierSpan: 10)
            let d = DirectionModel(antennaInWorld: a, worldFromDevice: .identity, azimuthStandardDeviation: 0.05,
                                   elevationStandardDeviation: 0.09, gate: 9.21)
            _ = imm.update(model: d, measured: d.predicted(truth), outlierProbability: 0.05, outlierSpan: 2 * .pi)
            imm.updateModeProbabilities(hint: hint)
        }
        var imm = InteractingMultipleModel(positionInWorld: Vector3(0.4, 1.2, -3.9), positionCovariance: .scaledIdentity(0.04),
                                           velocityPriorVariance: 1, movingProbability: 0.3)
        for k in 0..<5 { step(&imm, k, hint: .unknown) }
        #expect(!imm.movingIdle && imm.movingProbability > 0)
        step(&imm, 5, hint: .stationary)
        #expect(imm.movingIdle && imm.movingProbability == 0)
        let pinned = imm.moving
        for k in 6..<12 { step(&imm, k, hint: .stationary) }
        // Not run while pinned: the manoeuvring model is as the first pinned step left it.
        #expect(imm.moving == pinned)
        #expect(imm.published(certainty: 0.99) == imm.stationary && imm.combined.positionInWorld == imm.stationary.positionInWorld)
        // Whatever the idle models hold, the same estimates once the pin is lifted.
        var scrambled = imm
        scrambled.moving.positionInWorld = Vector3(9, 9, 9)
        scrambled.moving.velocityInWorld = Vector3(-3, 0, 3)
        scrambled.steady = scrambled.moving
        for k in 12..<20 {
            step(&imm, k, hint: .unknown)
            step(&scrambled, k, hint: .unknown)
            #expect(imm.combined == scrambled.combined && imm.movingProbability == scrambled.movingProbability)
        }
        #expect(!imm.movingIdle && imm.moving != pinned)
    }

    @Test func theAppsHintIsTakenAtOnce() throws {
        let run = ScenarioRun(ScenarioCatalogue.tagPickedUp(seed: 3, hinted: true))
        #expect(run.movingReportedAfter == 0)
        #expect(run.longestStaleTransform(beyond: 0.5) <= 1.0)
        #expect(run.updates.last?.estimate.motion == .stationary)
        // Through the engine's API: the hint is what is reported, and `unknown` hands back.
        var engine = FusionEngine()
        let tag = engine.register(objectID: "tag")
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        engine.updateMotionState(.moving, for: tag)
        let moving = engine.ingest(UWBMeasurement(timestamp: 0.1, distance: 3, directionInDevice: Vector3(0, 0, -1)), for: tag)
        #expect(moving.motion == .moving)
        engine.updateMotionState(.unknown, for: tag)
        let back = engine.ingest(UWBMeasurement(timestamp: 0.2, distance: 3, directionInDevice: Vector3(0, 0, -1)), for: tag)
        #expect(back.motion != .moving || engine.snapshot(tag).movingProbability.map { $0 >= 0.8 } == true)
    }

    @Test func aDistanceOnlyWalkingPeerIsLocatedWhenTheGeometryAllowsAndNeverPublishedWrong() {
        // A watch ranging to a friend who walks slowly past (no direction ever). The batch
        // estimates where the friend is now and how they walk; before it did (a fixed point
        // whose covariance counted the walk, `(σ_v T/2)²`), no run converged and the final NEES
        // averaged 0.14 (±17 m claimed for a 0.1 m/s walker).
        var nees: [Double] = []
        for seed: UInt64 in 1...20 {
            let run = ScenarioRun(ScenarioCatalogue.distanceOnlyWalkingPeer(seed: seed))
            if seed <= 3 {
                #expect(run.firstConvergedTime != nil, "seed \(seed): never converged")
            }
            #expect(run.horizontalAngleErrors.allSatisfy { Self.degrees($0) < 15 }, "seed \(seed)")
            #expect(run.positionErrors.allSatisfy { $0 < 0.5 }, "seed \(seed)")
            // Ranges alone: never `moving` or `stationary` claimed, and no velocity published.
            #expect(run.updates.allSatisfy { $0.estimate.velocity == nil && ($0.estimate.motion ?? .unknown) == .unknown }, "seed \(seed)")
            if let n = run.finalNEES { nees.append(n) }
        }
        // Mean NEES of the final position over 20 seeds inside the χ²(3) band of the mean,
        // 3 ± 1.96·√(6/20): 2.70. It was 1.63 (cautious, below the band) while the batch also
        // added a fixed point's systematic VIO drift, which the fit's velocity absorbs
        // (`acquisitionAddedVariance`); 0.14 before the batch had a velocity.
        let mean = nees.reduce(0, +) / Double(nees.count)
        let half = 1.96 * (6.0 / 20).squareRoot()
        #expect(nees.count == 20)
        #expect(mean > 3 - half && mean < 3 + half, "mean NEES \(mean)")
    }

    @Test func aDistanceOnlyPeerWhoTurnsAndStopsIsNeverPublishedWrongNorClaimedTooWell() {
        // No constant velocity explains a friend who turns, stops and walks back: the batch's
        // updates fade (20 s) and the trend of the range innovations restarts it. With the
        // whole window and no trend test the final NEES averaged 29 over these 20 seeds
        // (seed 17: 1.3 m off at σ 0.1 m, bearing σ 4°, one degree from publishing an angle
        // ~35° off).
        var nees: [Double] = []
        for seed: UInt64 in 1...20 {
            let run = ScenarioRun(ScenarioCatalogue.distanceOnlyTurningPeer(seed: seed))
            #expect(run.horizontalAngleErrors.allSatisfy { Self.degrees($0) < 15 }, "seed \(seed)")
            #expect(run.positionErrors.allSatisfy { $0 < 0.5 }, "seed \(seed)")
            if let n = run.finalNEES { nees.append(n) }
        }
        let mean = nees.reduce(0, +) / Double(nees.count)
        let half = 1.96 * (6.0 / 20).squareRoot()
        #expect(nees.count == 20)
        #expect(mean > 3 - half && mean < 3 + half, "mean NEES \(mean)")
    }

    /// A walker ranged without directions, acquired afresh 21 m away after it turned
    /// (`peer-uwb-friend-walking` seed 94, at 20.9 s): a run in which kept models were once
    /// carried into another basin by ranges whose errors last for seconds, their weights then
    /// falling by nats per update, and the hypotheses beside the peer pruned on that word
    /// (what ``MovingLinearisation/weightFallBeforeResolving`` guards against). With kept
    /// models it ends with its error inside the covariance, as the exact batch, re-solved at
    /// every update, does.
    @Test func aHypothesisIsPrunedOnlyOnTheWordOfFreshSolutions() throws {
        let scenario = ScenarioCatalogue.phoneToPhonePeer(seed: 94, bothWalking: false)
        let kept = ScenarioRun(scenario)
        var exactOptions = FusionOptions()
        exactOptions.acquisition.relinearisationTolerance = 0
        let exact = ScenarioRun(scenario, options: exactOptions)
        let keptNEES = try #require(kept.finalNEES), exactNEES = try #require(exact.finalNEES)
        #expect(exactNEES < 16.3, "the exact batch: NEES \(exactNEES)")   // χ²(3) 99.9 %
        #expect(keptNEES < 16.3, "NEES \(keptNEES)")
    }

    /// Two people walking, their phones ranging without directions over a link whose errors
    /// last seconds (`peer-uwb-both-walking`, seeds 1–20): weighed as independent, the bank's
    /// own hypotheses claim centimetres where they are decimetres off (the mean NEES of the
    /// bank's flat moments is above the χ² band; the reported moments, on the sphere, hide it).
    /// With the errors' correlation time considered (``FusionOptions/Motion/rangeErrorCorrelationSeconds``,
    /// 1 s), the reported mean NEES lies in the χ² band of 20 runs, and every published angle
    /// (none may be) is within 15° of the truth.
    @Test func lastingRangeErrorsOfAWalkerAreNotCountedAsMany() throws {
        func nees(_ tau: Double) throws -> (reported: Double, flat: Double, worstAngle: Double) {
            var o = FusionOptions()
            o.motion.rangeErrorCorrelationSeconds = tau
            o.motion.learnsRangeErrorCorrelation = false
            var reported: [Double] = [], flat: [Double] = [], worst = 0.0
            for seed: UInt64 in 1...20 {
                let run = ScenarioRun(ScenarioCatalogue.phoneToPhonePeer(seed: seed, bothWalking: true), options: o)
                if let n = run.finalNEES { reported.append(n) }
                let last = try #require(run.updates.last)
                var bank = PositionMixture(capacity: max(last.hypotheses.count, 1))
                bank.reset(last.hypotheses)
                if !bank.isEmpty, let inverse = bank.moments.covariance.inverse {
                    flat.append(inverse.quadraticForm(bank.moments.meanInWorld - last.truthInWorld))
                }
                for a in run.publishedAngles { worst = max(worst, abs(a.error)) }
            }
            func mean(_ v: [Double]) -> Double { v.reduce(0, +) / Double(max(v.count, 1)) }
            return (mean(reported), mean(flat), worst)
        }
        let independent = try nees(0), lasting = try nees(1)
        let band = ScenarioTargets.meanNEESBand(runs: 20)
        #expect(independent.flat > band.upperBound, "independent: the bank's own mean NEES \(independent.flat)")
        #expect(band.contains(lasting.reported), "1 s: mean NEES \(lasting.reported), band \(band)")
        #expect(lasting.worstAngle < Angle.radians(degrees: 15), "worst published angle \(lasting.worstAngle) rad")
    }

    /// A friend walking 10–22 m away while the user sweeps in place, their phones ranging
    /// without directions over a link whose errors last seconds (`peer-uwb-friend-walking`,
    /// seeds 51–100): the sweeps leave the friend's mirror image across their plane explaining
    /// the ranges almost as well, and weighed as independent the lasting errors make one of the
    /// two certain — the wrong one in several runs, reported metres off with a covariance that
    /// claims far less (NEES beyond χ²(3)'s 99.9 % point). With the correlation learned from the
    /// batch's residuals (``FusionOptions/Motion/learnsRangeErrorCorrelation``, the default),
    /// no run is. (Both weigh short ranges as the still batch does,
    /// ``FusionOptions/Gating/movingShortOutlierFraction`` 1, so that the correlation alone
    /// makes the difference: with the default one-sided weighing, one run of these 50 ends on
    /// the wrong mirror image at its last update.)
    @Test func aWalkersLastingRangeErrorsLearnedFromTheResidualsMakeNoMirrorCertain() {
        func beyond(learning: Bool) -> (beyond: Int, runs: Int) {
            var o = FusionOptions()
            o.gating.movingShortOutlierFraction = 1
            o.motion.learnsRangeErrorCorrelation = learning
            var beyond = 0, runs = 0
            for seed: UInt64 in 51...100 {
                guard let n = ScenarioRun(ScenarioCatalogue.phoneToPhonePeer(seed: seed, bothWalking: false), options: o).finalNEES else { continue }
                runs += 1
                if n > 16.27 { beyond += 1 }
            }
            return (beyond, runs)
        }
        let independent = beyond(learning: false), learned = beyond(learning: true)
        #expect(independent.beyond >= 3, "independent: \(independent.beyond) of \(independent.runs) runs beyond 16.27")
        #expect(learned.runs == 50 && learned.beyond == 0, "learned: \(learned.beyond) of \(learned.runs) runs beyond 16.27")
    }

    /// A radio whose errors are independent teaches no correlation: the watch ranging a friend
    /// who walks at a steady pace (`distance-only-walking-peer`, seeds 1–10) is estimated alike
    /// with the correlation learned and with the ranges taken as independent.
    @Test func independentRangeErrorsTeachNoCorrelation() {
        var independent = FusionOptions()
        independent.motion.learnsRangeErrorCorrelation = false
        for seed: UInt64 in 1...10 {
            let scenario = ScenarioCatalogue.distanceOnlyWalkingPeer(seed: seed)
            let learned = ScenarioRun(scenario), plain = ScenarioRun(scenario, options: independent)
            #expect(learned.updates.count == plain.updates.count && learned.finalNEES == plain.finalNEES
                    && learned.positionErrors == plain.positionErrors, "seed \(seed)")
        }
    }

    /// A friend who walks past the watch within centimetres of it (`distance-only-turning-peer`,
    /// seed 49, at 34.3 s): the ranges of the pass fall metres short of most of the bank's ring
    /// of hypotheses about the device. Taken as gross outliers, as a long range may be, they
    /// leave the ring where it was and only the few hypotheses that happened to follow them —
    /// all going the wrong way — survive: the final position 1.1 m off with a covariance of
    /// centimetres. A UWB range is rarely short by far
    /// (``FusionOptions/Gating/movingShortOutlierFraction``): the ring follows the pass.
    @Test func aWalkerPassingTheDeviceIsNotReportedCertainTheWrongWay() throws {
        var symmetric = FusionOptions()
        symmetric.gating.movingShortOutlierFraction = 1
        let scenario = ScenarioCatalogue.distanceOnlyTurningPeer(seed: 49)
        let oneSided = try #require(ScenarioRun(scenario).finalNEES)
        let bothSides = try #require(ScenarioRun(scenario, options: symmetric).finalNEES)
        #expect(bothSides > 16.27, "short outliers as likely as long ones: NEES \(bothSides)")
        #expect(oneSided < 16.27, "NEES \(oneSided)")   // χ²(3) 99.9 %
    }

    @Test func walkingPeersAreConsistent() {
        // Mean NEES of the final position over 50 seeds inside the χ²(3) 95 % band of the mean,
        // 3 ± 1.96·√(6/50).
        var nees: [Double] = []
        for seed: UInt64 in 1...50 {
            if let n = ScenarioRun(ScenarioCatalogue.peerStopAndGo(seed: seed)).finalNEES { nees.append(n) }
        }
        let mean = nees.reduce(0, +) / Double(nees.count)
        let half = 1.96 * (6.0 / Double(nees.count)).squareRoot()
        #expect(nees.count == 50)
        #expect(mean > 3 - half && mean < 3 + half, "mean NEES \(mean)")
    }
}

/// The motion model's algebra, block by block, against the dense 6×6 equations.
@Suite("kinematic Gaussian and IMM")
struct KinematicGaussianTests {
    /// A dense 6×6 matrix, row-major, for checking the block forms only.
    struct Dense: Equatable {
        var m: [[Double]]
        init(_ m: [[Double]]) { self.m = m }
        static func zero() -> Dense { Dense(Array(repeating: Array(repeating: 0, count: 6), count: 6)) }
        static func * (a: Dense, b: Dense) -> Dense {
            var c = Dense.zero()
            for i in 0..<6 { for j in 0..<6 { for k in 0..<6 { c.m[i][j] += a.m[i][k] * b.m[k][j] } } }
            return c
        }
        var transposed: Dense { var c = Dense.zero(); for i in 0..<6 { for j in 0..<6 { c.m[i][j] = m[j][i] } }; return c }
        static func + (a: Dense, b: Dense) -> Dense {
            var c = a; for i in 0..<6 { for j in 0..<6 { c.m[i][j] += b.m[i][j] } }; return c
        }
        init(_ g: KinematicGaussian) {
            self = .zero()
            let blocks = [[g.positionCovariance, g.crossCovariance], [g.crossCovariance.transposed, g.velocityCovariance]]
            for bi in 0..<2 { for bj in 0..<2 { for i in 0..<3 { for j in 0..<3 { m[3 * bi + i][3 * bj + j] = blocks[bi][bj][i, j] } } } }
        }
        func maxDifference(_ o: Dense) -> Double {
            var d = 0.0; for i in 0..<6 { for j in 0..<6 { d = max(d, abs(m[i][j] - o.m[i][j])) } }; return d
        }
    }

    /// The IMM's manoeuvring model, corrected by a direction through the stationary model's
    /// linearisation carried to its mean, lands where its own exact update does (within 2 % of
    /// the correction: the Jacobian's change over the models' distance), and the stationary model
    /// is corrected exactly.
    @Test func carriedDirectionLinearisationMatchesTheModelsOwn() {
        let a = Vector3(0, 1.4, 0)
        let q = Quaternion(angle: 0.3, axis: Vector3(0, 1, 0))
        let model = DirectionModel(antennaInWorld: a, worldFromDevice: q, azimuthStandardDeviation: 0.05,
                                   elevationStandardDeviation: 0.09, gate: 9.21)
        let object = Vector3(-1.0, 1.2, -3.0)
        var imm = InteractingMultipleModel(positionInWorld: object, positionCovariance: .scaledIdentity(0.02 * 0.02),
                                           velocityPriorVariance: 1, movingProbability: 0.01)
        imm.moving.positionInWorld = object + Vector3(0.012, -0.005, 0.008)
        imm.moving.positionCovariance = .scaledIdentity(0.1 * 0.1)
        #expect(model.carriesLinearisation(from: imm.stationary.positionInWorld, to: imm.moving.positionInWorld))
        let measured = model.predicted(object + Vector3(0.25, 0.1, 0))
        var stationary = imm.stationary, moving = imm.moving
        _ = stationary.update(model: model, measured: measured)
        _ = moving.update(model: model, measured: measured)
        let before = imm.moving.positionInWorld
        _ = imm.update(model: model, measured: measured, outlierProbability: 0.2, outlierSpan: .pi)
        #expect(imm.stationary == stationary)
        let step = (moving.positionInWorld - before).length
        #expect(step > 0.05)
        #expect((imm.moving.positionInWorld - moving.positionInWorld).length <= 0.02 * step)
        #expect(abs(imm.moving.positionCovariance.m00 - moving.positionCovariance.m00) <= 1e-2 * moving.positionCovariance.m00)
    }

    static func randomGaussian(_ rng: inout SplitMix64) -> KinematicGaussian {
        // P = L Lᵀ from a random lower-triangular L: a valid 6×6 covariance.
        var l = Dense.zero()
        for i in 0..<6 { for j in 0...i { l.m[i][j] = Double(rng.next() % 1000) / 1000 - (i == j ? -0.5 : 0.5) } }
        let p = l * l.transposed
        func block(_ r: Int, _ c: Int) -> Matrix3 {
            Matrix3(p.m[r][c], p.m[r][c + 1], p.m[r][c + 2], p.m[r + 1][c], p.m[r + 1][c + 1], p.m[r + 1][c + 2],
                    p.m[r + 2][c], p.m[r + 2][c + 1], p.m[r + 2][c + 2])
        }
        return KinematicGaussian(positionInWorld: Vector3(1, 0.5, -3), velocityInWorld: Vector3(0.3, 0, -0.2),
                                 positionCovariance: block(0, 0), crossCovariance: block(0, 3), velocityCovariance: block(3, 3))
    }

    @Test func constantVelocityPredictionIsFPFtPlusQ() {
        var rng = SplitMix64(seed: 11)
        let g = Self.randomGaussian(&rng)
        var predicted = g
        let dt = 0.1, qa = Vector3(0.5, 0.05, 0.5)
        predicted.predictConstantVelocity(seconds: dt, accelerationIntensity: qa, addedPositionVariance: 0)
        var f = Dense.zero(), q = Dense.zero()
        for i in 0..<6 { f.m[i][i] = 1 }
        for i in 0..<3 {
            f.m[i][i + 3] = dt
            let a = [qa.x, qa.y, qa.z][i]
            q.m[i][i] = a * dt * dt * dt / 3; q.m[i][i + 3] = a * dt * dt / 2; q.m[i + 3][i] = a * dt * dt / 2; q.m[i + 3][i + 3] = a * dt
        }
        let expected = f * Dense(g) * f.transposed + q
        #expect(Dense(predicted).maxDifference(expected) < 1e-12)
        #expect((predicted.positionInWorld - (g.positionInWorld + dt * g.velocityInWorld)).length < 1e-15)
    }

    @Test func blockJosephUpdateEqualsTheDense6x6JosephForm() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<20 {
            let g = Self.randomGaussian(&rng)
            var updated = g
            let model = RangeModel(antennaInWorld: Vector3(0, 1.4, 0), standardDeviation: 0.06, gate: .infinity)
            let z = model.predicted(g.positionInWorld) + 0.05
            // Make second-order terms vanish for the comparison: they are the model's, tested elsewhere.
            let h = model.jacobian(g.positionInWorld)
            let second = model.secondOrderTerms(g.positionInWorld, covariance: g.positionCovariance)
            let r = model.variance + second.variance
            _ = updated.update(model: model, measured: z, gated: false)
            // Dense: H = [hᵀ 0], K = P Hᵀ / s, P' = (I − K H) P (I − K H)ᵀ + r K Kᵀ.
            let p = Dense(g)
            let hRow = [h.x, h.y, h.z, 0, 0, 0]
            var ph = [Double](repeating: 0, count: 6)
            for i in 0..<6 { for j in 0..<6 { ph[i] += p.m[i][j] * hRow[j] } }
            var s = r; for i in 0..<6 { s += hRow[i] * ph[i] }
            let k = ph.map { $0 / s }
            var a = Dense.zero(), kk = Dense.zero()
            for i in 0..<6 { for j in 0..<6 { a.m[i][j] = (i == j ? 1 : 0) - k[i] * hRow[j]; kk.m[i][j] = r * k[i] * k[j] } }
            let expected = a * p * a.transposed + kk
            #expect(Dense(updated).maxDifference(expected) < 1e-10)
            let nu = z - (model.predicted(g.positionInWorld) + second.meanShift)
            #expect((updated.velocityInWorld - (g.velocityInWorld + nu * Vector3(k[3], k[4], k[5]))).length < 1e-12)
        }
    }

    @Test func aStationaryHintHandsTheMovingEstimateOver() {
        var imm = InteractingMultipleModel(positionInWorld: .zero, positionCovariance: Matrix3.scaledIdentity(0.01),
                                           velocityPriorVariance: 1, movingProbability: 0.5)
        imm.stationary.positionInWorld = Vector3(0, 0, 0)
        imm.moving.positionInWorld = Vector3(2, 0, 0)
        imm.movingProbability = 0.9
        imm.predict(seconds: 0.1, prior: FusionOptions().motion.accessoryMotionPrior, hint: .stationary,
                    accelerationIntensity: Vector3(0.5, 0.05, 0.5), velocityPriorVariance: 1, addedPositionVariance: 0)
        #expect(imm.movingProbability == 0)
        // 10 % stationary at 0, 90 % moving at 2: the stationary model starts at 1.8.
        #expect(abs(imm.stationary.positionInWorld.x - 1.8) < 1e-9)
    }

    /// A still tag 4 m away, known to 2 cm: a range 0.3 m (5σ) too long is multipath for both
    /// models under either rule, while one 0.3 m too short is evidence of motion unless the
    /// object has ranges alone.
    @Test func aRangeTooShortIsMotionUnlessRangesAreAllThereIs() {
        let options = FusionOptions()
        func movingProbability(after z: Double, _ gate: StationaryGate) -> (before: Double, after: Double) {
            var imm = InteractingMultipleModel(positionInWorld: Vector3(0, 0, -4), positionCovariance: .scaledIdentity(0.02 * 0.02),
                                               velocityPriorVariance: 1, movingProbability: 0.005)
            imm.predict(seconds: 0.1, prior: options.motion.accessoryMotionPrior, hint: .unknown,
                        accelerationIntensity: options.accelerationIntensities, velocityPriorVariance: 1, addedPositionVariance: 0)
            let before = imm.movingProbability
            _ = imm.update(model: RangeModel(antennaInWorld: .zero, standardDeviation: 0.06, gate: options.gating.rangeGate), measured: z,
                           outlierProbability: options.gating.outlierProbability, outlierSpan: options.gating.rangeOutlierSpan, stationaryGate: gate)
            imm.updateModeProbabilities(hint: .unknown)
            return (before, imm.movingProbability)
        }
        for gate in [StationaryGate.positiveResiduals, .everyMeasurement] {
            let long = movingProbability(after: 4.3, gate)
            #expect(abs(long.after - long.before) < 1e-12, "\(gate): a long range moved the mode")
        }
        let short = movingProbability(after: 3.7, .positiveResiduals)
        #expect(short.after > 3 * short.before, "short range: \(short)")
        let shortAlone = movingProbability(after: 3.7, .everyMeasurement)
        #expect(abs(shortAlone.after - shortAlone.before) < 1e-12)
        let free = movingProbability(after: 4.3, .off)
        #expect(free.after > 3 * free.before, "each model gating for itself: \(free)")
    }
}

/// The real distance-only drone sessions of `../shared/datasets/ntu-viral/`, when present
/// (they are development data, not shipped): a moving platform ranging to fixed anchors.
@Suite("real distance-only sessions")
struct RealSessionTests {
    static let folder = TestSupport.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/datasets/ntu-viral")
    static let sessionsPresent = FileManager.default.fileExists(atPath: folder.path)
    static let absent: Comment = "needs the NTU VIRAL sessions at ../shared/datasets/ntu-viral (development data, not shipped)"

    @Test(.enabled(if: sessionsPresent, absent), arguments: ["eee_01", "sbs_01"])
    func fixedAnchorsAreNeverConvergedWrongAndAnglesStayAccurate(session: String) throws {
        let path = Self.folder.appendingPathComponent("\(session).jsonl").path
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing")
        let report = try RecordingEvaluation.evaluate(path: path)
        let pooled = RecordingEvaluation.pooled(report.objects, name: session)
        // The bounds: no false convergence, angle median ≤ 2°, p95 ≤ 6°.
        #expect(pooled.falseConvergedRate == 0)
        let angles = try #require(pooled.horizontalAngleErrorDegrees)
        #expect(angles.median <= 2 && angles.p95 <= 6, "median \(angles.median)°, p95 \(angles.p95)°")
        // Once converged, the anchors stay so: ≥ 90 % of later updates, ≤ 1 status change a
        // minute (before the range noise grew with distance and the vertical category held:
        // 57 % and 3.7 a minute).
        let share = try #require(pooled.convergedShareAfterFirst)
        let changes = try #require(pooled.statusChangesPerMinute)
        #expect(share >= 0.9, "converged after first \(share)")
        #expect(changes <= 1, "\(changes) status changes a minute")
        // First convergence within 15 s of the moment the Cramér–Rao bound allows a 3° angle
        // (the bound): measured 11.4 s for eee_01 (anchor101), ≤ 3 s for sbs_01.
        // eee_01's anchor100 took 16.6 s while an acquisition restart cleared its window.
        let lag = try #require(pooled.convergenceLagSeconds)
        #expect(lag <= 15, "convergence \(lag) s after the bound allows 3°")
        // Every anchor, not just the pool: no worldTransform metres off, and each holds its
        // convergence (sbs_01's anchor101 lost it to 30 s of blocked, +5–15 m ranges, was
        // re-acquired from them and published 11 m off, converged for 77 % of the rest).
        for object in report.objects {
            if let position = object.positionErrorMetres {
                #expect(position.max <= 2, "\(session) \(object.object): worldTransform up to \(position.max) m off")
            }
            if let share = object.convergedShareAfterFirst {
                #expect(share >= 0.85, "\(session) \(object.object): converged after first \(share)")
            }
        }
    }
}

extension RealSessionTests {
    /// With a considered range bias of 0.1 m (``FusionOptions/Sensors/rangeBiasStandardDeviation``):
    /// the NEES against the survey falls from 80–100 to 24–44 and every target above still holds.
    @Test(.enabled(if: sessionsPresent, absent), arguments: ["eee_01", "sbs_01"])
    func aConsideredRangeBiasKeepsTheTargetsAndLowersTheNEES(session: String) throws {
        let path = Self.folder.appendingPathComponent("\(session).jsonl").path
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is missing")
        var options = FusionOptions()
        options.sensors.rangeBiasStandardDeviation = 0.1
        let plain = RecordingEvaluation.pooled(try RecordingEvaluation.evaluate(path: path).objects, name: session)
        let pooled = RecordingEvaluation.pooled(try RecordingEvaluation.evaluate(path: path, options: options).objects, name: session)
        let before = try #require(plain.meanNEES), after = try #require(pooled.meanNEES)
        #expect(after < 0.6 * before, "NEES \(before) → \(after)")
        #expect(pooled.falseConvergedRate == 0)
        let angles = try #require(pooled.horizontalAngleErrorDegrees)
        #expect(angles.median <= 2 && angles.p95 <= 6, "median \(angles.median)°, p95 \(angles.p95)°")
        #expect(try #require(pooled.convergedShareAfterFirst) >= 0.9)
        #expect(try #require(pooled.statusChangesPerMinute) <= 1)
        #expect(try #require(pooled.convergenceLagSeconds) <= 15)
    }
}

@Suite("a blocked line of sight")
struct BlockedLineOfSightTests {
    /// A distance-only device circling and bobbing 4 m from a still tag for 40 s, then
    /// `blocked` seconds of ranges too long by `excess` (seeded), then 10 s of clean ranges.
    /// Returns the statuses and worldTransform errors after the first 40 s.
    /// With `carriedAway`, the tag instead walks away from 40 s at that velocity (m/s) for
    /// `blocked` seconds, its ranges clean. Also returns the longest stretch, seconds, of
    /// published worldTransforms more than 1 m from the tag.
    static func run(blocked: Double, excess: ClosedRange<Double>, carriedAway: Vector3? = nil, options: FusionOptions = FusionOptions())
        -> (convergedAt40: Bool, convergedShare: Double, worstError: Double, longestStale: Double) {
        var engine = FusionEngine(capabilities: .distanceOnly, options: options)
        let tag = engine.register(objectID: "tag")
        let start = Vector3(1.0, 0.8, -4.0)
        var noise = NoiseStream(seed: 7, source: "blocked-test")
        var convergedAt40 = false, converged = 0, total = 0, worst = 0.0, longestStale = 0.0
        var staleSince: Double?
        let end = 40 + blocked + 10
        var t = 0.0
        while t < end {
            let truth = carriedAway.map { start + max(min(t, 40 + blocked) - 40, 0) * $0 } ?? start
            let position = Vector3(0.6 * sin(0.5 * t), 1.4 + 0.3 * sin(0.9 * t), 0.6 * cos(0.5 * t) - 0.3 * sin(0.23 * t))
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            var r = (truth - position).length + noise.gaussian(standardDeviation: 0.05)
            if carriedAway == nil && t >= 40 && t < 40 + blocked { r += noise.uniform(excess.lowerBound, excess.upperBound) }
            let e = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
            let isConverged = e.convergence?.status.isConverged == true
            if t >= 39.9 && t < 40 { convergedAt40 = isConverged }
            if t >= 40 {
                total += 1
                if isConverged { converged += 1 }
                if let w = e.worldTransform { worst = max(worst, (w.translation - truth).length) }
            }
            if let w = e.worldTransform, (w.translation - truth).length > 1 {
                if staleSince == nil { staleSince = t }
                longestStale = max(longestStale, t - staleSince!)
            } else {
                staleSince = nil
            }
            t += 0.1
        }
        return (convergedAt40, Double(converged) / Double(max(total, 1)), worst, longestStale)
    }

    @Test func aStillTagKeepsItsEstimateThroughLongRanges() {
        let held = Self.run(blocked: 20, excess: 3...10)
        #expect(held.convergedAt40)
        #expect(held.convergedShare > 0.99, "converged \(held.convergedShare)")
        #expect(held.worstError < 0.3, "worst \(held.worstError) m")
        // Without the rule (no range counts as blocked) the same ranges reset it.
        var o = FusionOptions()
        o.gating.blockedRangeExcess = .infinity
        let reset = Self.run(blocked: 20, excess: 3...10, options: o)
        #expect(reset.convergedShare < 0.8, "converged \(reset.convergedShare)")
    }

    @Test func aTagCarriedAwayIsNotLeftStandingAsIfBlocked() {
        // Its ranges grow by ~0.8 m/s, smoothly: no blocked path. It is re-acquired after the
        // usual 30 rejections; no worldTransform stands more than 1 m off for long. (Counting
        // every long rejection as blocked left it converged where it had been for 20 s.)
        let carried = Self.run(blocked: 20, excess: 0...0, carriedAway: Vector3(0.3, 0, -0.75))
        #expect(carried.convergedAt40)
        #expect(carried.longestStale < 5, "stale for \(carried.longestStale) s")
        var everyStepJumps = FusionOptions()
        everyStepJumps.gating.blockedRangeJump = 0
        let stale = Self.run(blocked: 20, excess: 0...0, carriedAway: Vector3(0.3, 0, -0.75), options: everyStepJumps)
        #expect(stale.longestStale > 10, "without the jump test: stale for \(stale.longestStale) s")
        // The blocked run keeps its estimate and is never stale.
        #expect(Self.run(blocked: 20, excess: 3...10).longestStale == 0)
    }

    @Test func rangesTooShortStillStartItAgain() {
        // No blocked path shortens a range: 20 s of ranges 1.5–3 m short (the tag was moved
        // closer) make the engine forget the old place, and no worldTransform is left there.
        let moved = Self.run(blocked: 20, excess: -3 ... -1.5)
        #expect(moved.convergedAt40)
        #expect(moved.convergedShare < 0.8, "converged \(moved.convergedShare)")
    }
}

@Suite("an acquisition restarted")
struct AcquisitionRestartTests {
    /// A distance-only device circling level (radius 0.6 m, 1.4 m up) for 15 s around a still
    /// tag 1 m above its plane — the circle fixes the bearing and leaves the above/below mirror
    /// open, so the tag stays in acquisition with its angle published — then six ranges 2 m
    /// too long (as after a blocked first range), which the bank rejects and restarts on, then
    /// 2.5 s of clean ranges. Returns whether the angle was right just before the burst, and
    /// for each update from the burst on its time and the published angle's error (nil: none).
    static func run() -> (rightBefore: Bool, after: [(t: Double, angleError: Double?)]) {
        var engine = FusionEngine(capabilities: .distanceOnly)
        let tag = engine.register(objectID: "tag")
        let truth = Vector3(1.0, 2.4, -4.0)
        var noise = NoiseStream(seed: 11, source: "restart-test")
        var rightBefore = false
        var after: [(Double, Double?)] = []
        var t = 0.0
        while t < 18 {
            let position = Vector3(0.6 * sin(0.6 * t), 1.4, 0.6 * cos(0.6 * t))
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            var r = (truth - position).length + noise.gaussian(standardDeviation: 0.05)
            if t >= 15 && t < 15.55 { r += 2 }
            let e = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
            let trueAngle = HorizontalAngle.angle(objectInWorld: truth, devicePositionInWorld: position, worldFromDevice: .identity)!
            let error = e.horizontalAngle.map { abs(Angle.wrapped($0 - trueAngle)) }
            if t >= 14.85 && t < 15 { rightBefore = error.map { $0 < Angle.radians(degrees: 3) } ?? false }
            if t >= 15 { after.append((t, error)) }
            t += 0.1
        }
        return (rightBefore, after)
    }

    /// The risk of keeping the window: a tag moved 2.2 m *while* it is being acquired leaves
    /// ranges of its old place there. They are outweighed as the new ones come (robust
    /// weights, the window's thinning), and the tag is re-acquired where it went, never
    /// published where it was: measured with this path (moved at 6 s, two other seeds) at
    /// 20.2–20.6 s, against 20.3–21.7 s when the restart cleared the window.
    @Test func aTagMovedDuringItsAcquisitionIsAcquiredWhereItWent() {
        var engine = FusionEngine(capabilities: .distanceOnly)
        let tag = engine.register(objectID: "tag")
        let before = Vector3(1.0, 2.4, -4.0), after = Vector3(-1.0, 1.2, -5.0)
        var noise = NoiseStream(seed: 3, source: "moved-during-acquisition")
        var firstRight: Double?
        var wrong = 0
        var t = 0.0
        while t < 40 {
            let truth = t < 6 ? before : after
            let position = Vector3(0.6 * sin(0.6 * t), 1.4 + 0.3 * sin(0.9 * t), 0.6 * cos(0.6 * t))
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            let r = (truth - position).length + noise.gaussian(standardDeviation: 0.05)
            let e = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
            if let w = e.worldTransform {
                if (w.translation - after).length < 0.3 { firstRight = firstRight ?? t } else { wrong += 1 }
            }
            t += 0.1
        }
        #expect(wrong == 0, "\(wrong) transforms published away from the tag")
        #expect((firstRight ?? .infinity) < 25, "first right transform at \(String(describing: firstRight)) s")
    }

    /// A tag carried away from a watch (0.8 m/s for 3 s) while it is being acquired: the
    /// restart may keep the window only if the re-solved bank explains the range it was tiled
    /// on. Kept regardless, the old ranges pulled the bank back where the tag had been and
    /// 24–58° wrong angles were published for up to a second (seeds 1–3 here: 10, 10 and 4
    /// updates); checked, none.
    @Test(arguments: [UInt64(1), 2, 3])
    func aTagCarriedAwayDuringItsAcquisitionGetsNoWrongAngle(seed: UInt64) {
        var engine = FusionEngine(capabilities: .distanceOnly)
        let tag = engine.register(objectID: "tag")
        let start = Vector3(1.0, 2.4, -4.0), velocity = Vector3(0, 0, -0.8)
        var noise = NoiseStream(seed: seed, source: "moved-acq")
        var worst = 0.0
        var t = 0.0
        while t < 30 {
            let truth = start + max(min(t, 9) - 6, 0) * velocity
            let position = Vector3(0.6 * sin(0.6 * t), 1.4 + 0.3 * sin(0.9 * t), 0.6 * cos(0.6 * t))
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            let r = (truth - position).length + noise.gaussian(standardDeviation: 0.05)
            let e = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
            if t > 6, let a = e.horizontalAngle,
               let trueAngle = HorizontalAngle.angle(objectInWorld: truth, devicePositionInWorld: position, worldFromDevice: .identity) {
                worst = max(worst, abs(Angle.wrapped(a - trueAngle)))
            }
            t += 0.1
        }
        #expect(worst < Angle.radians(degrees: 15), "an angle \(worst * 180 / .pi)° off")
    }

    /// The restart re-tiles the sphere but re-solves the new bank from the stored window: the
    /// circle already driven still fixes the bearing. Clearing the window (before) left no
    /// angle for the rest of the run (3 s; a new sweep was needed) — and on the real drone
    /// session eee_01 it cost anchor100 15 s of convergence (see `retile` in the tracker).
    @Test func aRestartedAcquisitionKeepsWhatMotionMeasured() {
        let run = Self.run()
        #expect(run.rightBefore)
        // Within 1 s of the burst's end the angle is back, and from then on every update
        // publishes it, within 3°.
        let settled = run.after.filter { $0.t >= 16.55 }
        #expect(!settled.isEmpty)
        for u in settled {
            #expect(u.angleError.map { $0 < Angle.radians(degrees: 3) } == true, "at \(u.t) s: \(String(describing: u.angleError))")
        }
        // Nothing wrong is published in between (a restart's bank spread over the sphere publishes
        // no angle rather than a wrong one).
        #expect(run.after.allSatisfy { ($0.angleError ?? 0) < Angle.radians(degrees: 5) })
    }
}

/// The range noise of an object that may move, learned from its batch's residuals.
@Suite("a peer's radio noise, learned")
struct LearnedPeerNoiseTests {
    /// A watch (distance only) circling 4–5 m from a friend who walks at 0.3 m/s, ranged at
    /// 10 Hz with white noise of σ `sigma` (seeded): the range variance scale the engine has
    /// learned after each second.
    static func learnedScales(sigma: Double, seconds: Int = 20, seed: UInt64) -> [Double] {
        var engine = FusionEngine(capabilities: .distanceOnly, options: FusionOptions())
        let friend = engine.register(objectID: "friend", kind: .peer)
        var noise = NoiseStream(seed: seed, source: "learned-peer-noise")
        let start = Vector3(1.5, 1.2, -4), velocity = Vector3(0.25, 0, -0.15)
        var scales: [Double] = []
        for k in 0..<(100 * seconds) {
            let t = Double(k) * 0.01
            let position = RangeBiasTests.watchPosition(at: t)
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            guard k % 10 == 0 else { continue }
            let r = (start + t * velocity - position).length + noise.gaussian(standardDeviation: sigma)
            _ = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: friend)
            if k % 100 == 90 { scales.append(engine.snapshot(friend).rangeVarianceScale) }
        }
        return scales
    }

    /// A radio three times noisier than the configured σ (0.06 m) is weighed with 8–16 times
    /// its variance within ten seconds, and keeps it; a radio as configured keeps its σ.
    @Test func aNoisierRadioIsTrustedLess() {
        for seed: UInt64 in 1...4 {
            let noisy = Self.learnedScales(sigma: 0.18, seed: seed), nominal = Self.learnedScales(sigma: 0.06, seed: seed)
            #expect(noisy[9...].allSatisfy { $0 >= 8 && $0 <= 16 }, "seed \(seed): \(noisy)")
            #expect(nominal.allSatisfy { $0 <= 2 }, "seed \(seed): \(nominal)")
        }
    }
}
