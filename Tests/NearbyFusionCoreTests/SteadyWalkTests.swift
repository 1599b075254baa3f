import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// The IMM's optional third model, a steady walk (`FusionOptions.motion.steadyAccelerationIntensity`,
/// `--steady-walk`). Every run is seeded.
@Suite("steady walking model")
struct SteadyWalkTests {
    static let steady = SteadyMotion(accelerationIntensity: Vector3(0.1, 0.05, 0.1), settleRate: 0.5, turnRate: 0.5)

    /// The three-way mixing is the moment match `x₀ⱼ = Σᵢ μᵢ|ⱼ xᵢ`,
    /// `P₀ⱼ = Σᵢ μᵢ|ⱼ (Pᵢ + (xᵢ − x₀ⱼ)(xᵢ − x₀ⱼ)ᵀ)`, and the published estimate of an object
    /// that is neither certainly still nor certainly moving is the three models' combination.
    @Test func threeModelsMixByMomentMatching() {
        var imm = InteractingMultipleModel(positionInWorld: .zero, positionCovariance: .scaledIdentity(0.01),
                                           velocityPriorVariance: 1, movingProbability: 0.5)
        imm.stationary.positionInWorld = Vector3(0, 0, 0)
        imm.moving.positionInWorld = Vector3(1, 0, 0)
        imm.moving.velocityInWorld = Vector3(0.5, 0, 0)
        imm.steady.positionInWorld = Vector3(0, 0, 2)
        imm.steady.velocityInWorld = Vector3(0, 0, 0.3)
        imm.manoeuvringProbability = 0.3
        imm.steadyProbability = 0.2
        // Predict with no time passing: no transitions, no motion; only the mixing acts
        // (each model mixes only with itself), so the combination is the three as they were.
        let before = imm
        imm.predict(seconds: 0, prior: FusionOptions().motion.peerMotionPrior, hint: .unknown, accelerationIntensity: Vector3(0.5, 0.05, 0.5),
                    velocityPriorVariance: 1, addedPositionVariance: 0, steady: Self.steady)
        #expect(imm.hasSteadyModel)
        #expect(abs(imm.steadyProbability - 0.2) < 1e-12 && abs(imm.manoeuvringProbability - 0.3) < 1e-12)
        let combined = imm.published(certainty: 0.99)
        let weights = [0.5, 0.3, 0.2], models = [before.stationary, before.moving, before.steady]
        var mean = Vector3.zero
        for (w, m) in zip(weights, models) { mean += w * m.positionInWorld }
        var covariance = Matrix3.zero
        for (w, m) in zip(weights, models) {
            let d = m.positionInWorld - mean
            covariance += w * (m.positionCovariance + Matrix3.outer(d, d))
        }
        #expect((combined.positionInWorld - mean).length < 1e-12)
        let difference = combined.positionCovariance - covariance
        let largest = [difference.row0, difference.row1, difference.row2].map { max(abs($0.x), abs($0.y), abs($0.z)) }.max()!
        #expect(largest < 1e-12)
        #expect((combined.velocityInWorld - (0.3 * Vector3(0.5, 0, 0) + 0.2 * Vector3(0, 0, 0.3))).length < 1e-12)
    }

    /// A hint that the object stopped hands all three models to the still one; a hint that it
    /// moves leaves the still model nothing and lets the two moving ones share the motion by
    /// their likelihoods.
    @Test func hintsPinTheStillModelOrShareTheMovingOnes() {
        var imm = InteractingMultipleModel(positionInWorld: Vector3(0, 0, -4), positionCovariance: .scaledIdentity(0.01),
                                           velocityPriorVariance: 1, movingProbability: 0.5)
        imm.steadyProbability = 0.25
        imm.manoeuvringProbability = 0.25
        var still = imm
        still.predict(seconds: 0.1, prior: FusionOptions().motion.peerMotionPrior, hint: .stationary, accelerationIntensity: Vector3(0.5, 0.05, 0.5),
                      velocityPriorVariance: 1, addedPositionVariance: 0, steady: Self.steady)
        #expect(still.movingProbability == 0)
        var moving = imm
        moving.predict(seconds: 0.1, prior: FusionOptions().motion.peerMotionPrior, hint: .moving, accelerationIntensity: Vector3(0.5, 0.05, 0.5),
                       velocityPriorVariance: 1, addedPositionVariance: 0, steady: Self.steady)
        #expect(abs(moving.movingProbability - 1) < 1e-12)
        let range = RangeModel(antennaInWorld: .zero, standardDeviation: 0.06, gate: 6.63)
        _ = moving.update(model: range, measured: 4.0, outlierProbability: 0.2, outlierSpan: 10)
        moving.updateModeProbabilities(hint: .moving)
        #expect(abs(moving.movingProbability - 1) < 1e-12 && moving.steadyProbability > 0 && moving.manoeuvringProbability > 0)
    }

    /// Off by default: the engine's outputs are those of the two-model filter.
    @Test func offByDefault() {
        #expect(FusionOptions().steadyMotion == nil)
        var o = FusionOptions()
        o.motion.steadyAccelerationIntensity = 0.1
        #expect(o.steadyMotion?.accelerationIntensity == Vector3(0.1, o.motion.verticalAccelerationIntensity, 0.1))
    }

    /// On `walking-peer` (0.3 m/s, seeds 1–6) the steady model locates the walker better and
    /// says `moving` on more of its updates than the two models alone (50 seeds: angle median
    /// 1.50° → 1.22°, `moving` 66 % → 85 %).
    @Test func aSteadyWalkerIsFollowedBetter() {
        var on = FusionOptions()
        on.motion.steadyAccelerationIntensity = 0.1
        var anglesOff: [Double] = [], anglesOn: [Double] = []
        var scoreOff = MotionReportScore(), scoreOn = MotionReportScore()
        for seed: UInt64 in 1...6 {
            let off = ScenarioRun(ScenarioCatalogue.walkingPeer(seed: seed))
            let steady = ScenarioRun(ScenarioCatalogue.walkingPeer(seed: seed), options: on)
            anglesOff += off.horizontalAngleErrors
            anglesOn += steady.horizontalAngleErrors
            scoreOff.merge(off.motionReportScore)
            scoreOn.merge(steady.motionReportScore)
        }
        let medianOff = Statistics.quantile(anglesOff, 0.5)!, medianOn = Statistics.quantile(anglesOn, 0.5)!
        #expect(medianOn < 0.9 * medianOff, "angle median \(medianOff) → \(medianOn) rad")
        #expect(scoreOn.movingShare! > scoreOff.movingShare! + 0.1, "moving \(scoreOff.movingShare!) → \(scoreOn.movingShare!)")
    }
}
