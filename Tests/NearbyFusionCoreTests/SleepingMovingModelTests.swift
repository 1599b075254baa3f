import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionSimulation
import Testing
import TestHelpers

/// The IMM's sleeping moving model: on a still tag only the stationary model runs, and a
/// measurement that would lift the probability of motion wakes the moving model where the
/// awake filter's would be. Every run is seeded.
@Suite("sleeping moving model")
struct SleepingMovingModelTests {
    static let prior = FusionOptions().motion.accessoryMotionPrior
    static let qa = Vector3(0.5, 0.05, 0.5)

    /// One 10 Hz step of a device held 1.4 m up and swept ±0.3 m sideways, ranging (σ 6 cm)
    /// and taking a direction (σ 0.05 / 0.09 rad) to an object at `truth`, noise from `rng`.
    /// `asVector`: the direction is given as the measured device-frame vector
    /// (``InteractingMultipleModel/update(model:measuredDirection:outlierProbability:outlierSpan:)``)
    /// instead of its angles.
    static func step(_ imm: inout InteractingMultipleModel, _ k: Int, truth: Vector3, rng: inout NoiseStream,
                     asVector: Bool = false) {
        imm.predict(seconds: 0.1, prior: prior, hint: .unknown, accelerationIntensity: qa, velocityPriorVariance: 1,
                    addedPositionVariance: 1e-6)
        let a = Vector3(0.3 * sin(0.4 * Double(k)), 1.4, 0)
        _ = imm.update(model: RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: 6.63),
                       measured: (truth - a).length + rng.gaussian(standardDeviation: 0.06),
                       outlierProbability: 0.05, outlierSpan: 10, stationaryGate: .positiveResiduals)
        let d = DirectionModel(antennaInWorld: a, worldFromDevice: .identity, azimuthStandardDeviation: 0.05,
                               elevationStandardDeviation: 0.09, gate: 9.21)
        let noise = Vector2(rng.gaussian(standardDeviation: 0.05), rng.gaussian(standardDeviation: 0.09))
        let angles = d.predicted(truth) + noise
        if asVector {
            _ = imm.update(model: d, measuredDirection: DeviceAngles.direction(azimuth: angles.x, elevation: angles.y),
                           outlierProbability: 0.05, outlierSpan: 2 * .pi)
        } else {
            _ = imm.update(model: d, measured: angles, outlierProbability: 0.05, outlierSpan: 2 * .pi)
        }
        imm.updateModeProbabilities(hint: .unknown)
    }

    static func start() -> InteractingMultipleModel {
        InteractingMultipleModel(positionInWorld: Vector3(0.4, 1.2, -3.9), positionCovariance: .scaledIdentity(0.04),
                                 velocityPriorVariance: 1, movingProbability: 0.3)
    }

    /// A still tag: after the mode settles the moving model sleeps, and the stationary model
    /// the filter publishes stays within 3 mm of the awake filter's.
    @Test func aStillTagsMovingModelSleepsAndItsEstimateStaysTheAwakeOnes() {
        for seed: UInt64 in 1...5 {
            var rngAwake = NoiseStream(seed: seed, source: "sleep"), rngAsleep = NoiseStream(seed: seed, source: "sleep")
            var awake = Self.start(), sleeping = Self.start()
            sleeping.wakeProbability = 0.01
            let truth = Vector3(0.5, 1.2, -4)
            var asleepSteps = 0, largestGap = 0.0
            for k in 0..<100 {
                Self.step(&awake, k, truth: truth, rng: &rngAwake)
                Self.step(&sleeping, k, truth: truth, rng: &rngAsleep)
                if sleeping.movingAsleep { asleepSteps += 1 }
                if k >= 60 {
                    // Asleep, the published estimate is the stationary model.
                    #expect(!sleeping.movingAsleep || sleeping.combined == sleeping.stationary, "seed \(seed) step \(k)")
                    let gap = (sleeping.published(certainty: 0.99).positionInWorld
                        - awake.published(certainty: 0.99).positionInWorld).length
                    largestGap = max(largestGap, gap)
                    #expect(sleeping.movingProbability < 0.01, "seed \(seed) step \(k)")
                }
            }
            #expect(asleepSteps >= 50, "seed \(seed): asleep for \(asleepSteps) of 100 steps")
            // A tenth of the position's σ (about 3 cm): the sleeping model adds the moving
            // model's share to the stationary covariance but not its pull on the mean.
            #expect(largestGap < 3e-3, "seed \(seed): \(largestGap) m from the awake filter")
            #expect(awake.movingAsleep == false)
        }
    }

    /// A direction given as its measured vector moves the filter as its angles do, asleep (where
    /// the innovation is formed from the vector) and awake, and puts it to sleep and wakes it
    /// at the same steps.
    @Test func aDirectionGivenAsAVectorIsFusedAsItsAngles() {
        for seed: UInt64 in 1...3 {
            var rngA = NoiseStream(seed: seed, source: "vector"), rngV = NoiseStream(seed: seed, source: "vector")
            var angles = Self.start(), vectors = Self.start()
            angles.wakeProbability = 0.01
            vectors.wakeProbability = 0.01
            var truth = Vector3(0.5, 1.2, -4)
            var asleepSteps = 0
            for k in 0..<120 {
                // Picked up at step 80 and carried sideways at 0.6 m/s.
                if k >= 80 { truth.x += 0.06 }
                Self.step(&angles, k, truth: truth, rng: &rngA)
                Self.step(&vectors, k, truth: truth, rng: &rngV, asVector: true)
                #expect(angles.movingAsleep == vectors.movingAsleep, "seed \(seed) step \(k)")
                if vectors.movingAsleep { asleepSteps += 1 }
                let gap = (angles.combined.positionInWorld - vectors.combined.positionInWorld).length
                #expect(gap < 1e-9, "seed \(seed) step \(k): \(gap) m apart")
                #expect(abs(angles.movingProbability - vectors.movingProbability) < 1e-9, "seed \(seed) step \(k)")
            }
            #expect(asleepSteps >= 40, "seed \(seed): asleep for \(asleepSteps) steps")
            #expect(!vectors.movingAsleep, "seed \(seed): the carry woke it")
        }
    }

    /// The tag is picked up and carried sideways at 0.6 m/s: the measurement that makes motion
    /// likely wakes the moving model, and from there the filter says `moving` within a step or
    /// two of the awake filter and follows the tag as closely.
    @Test func aPickedUpTagWakesTheMovingModelAsSoonAsTheAwakeFilterSeesMotion() throws {
        for seed: UInt64 in 1...5 {
            var rngAwake = NoiseStream(seed: seed, source: "sleep"), rngAsleep = NoiseStream(seed: seed, source: "sleep")
            var awake = Self.start(), sleeping = Self.start()
            sleeping.wakeProbability = 0.01
            var truth = Vector3(0.5, 1.2, -4)
            for k in 0..<60 {
                Self.step(&awake, k, truth: truth, rng: &rngAwake)
                Self.step(&sleeping, k, truth: truth, rng: &rngAsleep)
            }
            var firstAwake: Int?, firstAsleep: Int?, squaredAwake = 0.0, squaredAsleep = 0.0
            for k in 60..<80 {
                truth.x += 0.06
                Self.step(&awake, k, truth: truth, rng: &rngAwake)
                Self.step(&sleeping, k, truth: truth, rng: &rngAsleep)
                if firstAwake == nil, awake.movingProbability > 0.5 { firstAwake = k }
                if firstAsleep == nil, sleeping.movingProbability > 0.5 { firstAsleep = k }
                if k >= 65 {
                    squaredAwake += (awake.published(certainty: 0.99).positionInWorld - truth).lengthSquared
                    squaredAsleep += (sleeping.published(certainty: 0.99).positionInWorld - truth).lengthSquared
                }
            }
            let a = try #require(firstAwake, "seed \(seed): the awake filter never saw motion")
            let s = try #require(firstAsleep, "seed \(seed): the sleeping filter never saw motion")
            #expect(s <= a + 2, "seed \(seed): moving at step \(s), awake filter at \(a)")
            #expect(!sleeping.movingAsleep)
            // From half a second into the carry: the published position as close to the tag as
            // the awake filter's (root mean square over the 15 steps).
            let rmsAwake = (squaredAwake / 15).squareRoot(), rmsAsleep = (squaredAsleep / 15).squareRoot()
            #expect(rmsAsleep <= 1.2 * rmsAwake + 0.01, "seed \(seed): \(rmsAsleep) m, awake \(rmsAwake) m")
        }
    }

    /// A filter whose tag has lain still for 4 s (40 steps, noise seeded `seed`), its moving
    /// model asleep, predicted over the next step with `hint`.
    static func settled(seed: UInt64, thenPredictWith hint: MotionActivityState) -> InteractingMultipleModel {
        var rng = NoiseStream(seed: seed, source: "sleep")
        var imm = start()
        imm.wakeProbability = 0.01
        for k in 0..<40 { step(&imm, k, truth: Vector3(0.5, 1.2, -4), rng: &rng) }
        #expect(imm.movingAsleep, "seed \(seed): not asleep after 4 s")
        imm.predict(seconds: 0.1, prior: prior, hint: hint, accelerationIntensity: qa, velocityPriorVariance: 1,
                    addedPositionVariance: 1e-6)
        return imm
    }

    /// Bad numbers never reach the sleeping filter's outputs: a NaN range is rejected by the
    /// models' gates whether the moving model sleeps or not.
    @Test func aNonFiniteMeasurementLeavesTheSleepingFilterFinite() {
        var imm = Self.settled(seed: 7, thenPredictWith: .unknown)
        _ = imm.update(model: RangeModel(antennaInWorld: Vector3(0, 1.4, 0), standardDeviation: 0.06, gate: 6.63),
                       measured: .nan, outlierProbability: 0.05, outlierSpan: 10, stationaryGate: .positiveResiduals)
        imm.updateModeProbabilities(hint: .unknown)
        #expect(imm.combined.isFinite && imm.movingProbability.isFinite)
    }

    /// A range the still model's gate sets aside (multipath: 1 m too long) leaves the sleeping
    /// model asleep; a second in a row wakes it, as a run of them would spread the awake moving
    /// model step after step. A range that passes the gate starts the count again.
    @Test func aRunOfRangesSetAsideWakesIt() {
        let a = Vector3(0, 1.4, 0), truth = Vector3(0.5, 1.2, -4)
        let model = RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: 6.63)
        func range(_ imm: inout InteractingMultipleModel, _ z: Double) -> Bool {
            imm.update(model: model, measured: z, outlierProbability: 0.05, outlierSpan: 10, stationaryGate: .positiveResiduals)
        }
        var imm = Self.settled(seed: 5, thenPredictWith: .unknown)
        let long = (truth - a).length + 1
        #expect(!range(&imm, long))
        #expect(imm.movingAsleep, "one range set aside woke it")
        _ = range(&imm, (truth - a).length)
        #expect(!range(&imm, long))
        #expect(imm.movingAsleep, "a range that passed the gate between two set aside")
        #expect(!range(&imm, long))
        #expect(!imm.movingAsleep, "two ranges in a row set aside left it asleep")
        #expect(imm.moving.isFinite && imm.movingProbability < 0.01)
    }

    /// The app's hint wakes the model at once, and a filter with sleeping turned off never sleeps.
    @Test func theAppsHintWakesItAndAZeroLevelNeverSleeps() {
        let imm = Self.settled(seed: 3, thenPredictWith: .moving)
        #expect(!imm.movingAsleep)
        #expect(imm.movingProbability > 0.5)
        var rng = NoiseStream(seed: 3, source: "sleep")
        var never = Self.start()
        for k in 0..<40 { Self.step(&never, k, truth: Vector3(0.5, 1.2, -4), rng: &rng); #expect(!never.movingAsleep) }
    }

    /// Through the engine, a still tag picked up at 11 s and put down at 14.5 s: the default
    /// (sleeping) and `movingModelSleeps = false` publish the same story — the same first
    /// convergence, `moving` within 1 s of the pick-up, positions within a few millimetres
    /// while it lies still.
    @Test func theEngineTellsTheSameStoryAsleepAndAwake() throws {
        var awakeOptions = FusionOptions()
        awakeOptions.motion.movingModelSleeps = false
        for seed: UInt64 in 1...3 {
            let sleeping = ScenarioRun(ScenarioCatalogue.tagPickedUp(seed: seed))
            let awake = ScenarioRun(ScenarioCatalogue.tagPickedUp(seed: seed), options: awakeOptions)
            #expect(sleeping.firstConvergedTime == awake.firstConvergedTime, "seed \(seed)")
            let after = try #require(sleeping.movingReportedAfter, "seed \(seed): never reported moving")
            #expect(after <= 1.0, "seed \(seed): moving \(after) s after the pick-up")
            #expect(sleeping.updates.count == awake.updates.count)
            var compared = 0
            for (s, a) in zip(sleeping.updates, awake.updates) where s.estimate.timestamp > 5 && s.estimate.timestamp < 10.9 {
                compared += 1
                guard let ps = s.estimate.worldTransform?.translation, let pa = a.estimate.worldTransform?.translation else {
                    Issue.record("seed \(seed): no transform at \(s.estimate.timestamp) s"); continue
                }
                #expect((ps - pa).length < 0.005, "seed \(seed) at \(s.estimate.timestamp) s")
                #expect(s.estimate.motion == a.estimate.motion, "seed \(seed) at \(s.estimate.timestamp) s")
            }
            #expect(compared >= 20, "seed \(seed): \(compared) updates compared")
        }
    }
}
