import Foundation
import NearbyFusion
import NearbyFusionTestSupport
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing

@Suite("EKF steps and the hypothesis bank")
struct FilterTests {
    /// For a linear measurement the EKF update is the Kalman update: compare with the
    /// closed form (information form) of the posterior.
    @Test func scalarUpdateEqualsTheKalmanPosterior() throws {
        struct Linear: ScalarMeasurementModel {
            var h: Vector3
            var variance: Double
            var gate: Double { .infinity }
            func predicted(_ p: Vector3) -> Double { h.dot(p) }
            func jacobian(_ p: Vector3) -> Vector3 { h }
            func residual(_ z: Double, _ zhat: Double) -> Double { z - zhat }
        }
        var mean = Vector3(1, 2, 3)
        var covariance = Matrix3(2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 0.5)
        let model = Linear(h: Vector3(0.6, -0.8, 0), variance: 0.04)
        let priorInfo = try #require(covariance.inverse)
        let expectedCovariance = try #require((priorInfo + (1 / model.variance) * Matrix3.outer(model.h, model.h)).inverse)
        let expectedMean = expectedCovariance * (priorInfo * mean + (2.5 / model.variance) * model.h)
        let outcome = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 2.5)
        #expect(outcome.accepted)
        #expect((mean - expectedMean).length < 1e-10)
        let d = covariance - expectedCovariance
        #expect(abs(d.m00) + abs(d.m01) + abs(d.m11) + abs(d.m12) + abs(d.m22) < 1e-10)
    }

    @Test func mahalanobisGateRejectsANonLineOfSightRange() {
        var mean = Vector3(0, 0, -4)
        var covariance = Matrix3.scaledIdentity(0.01)
        let model = RangeModel(antennaInWorld: .zero, standardDeviation: 0.06, gate: 6.63)
        let before = (mean, covariance)
        let outcome = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 5.2)
        #expect(!outcome.accepted)
        #expect(outcome.normalizedInnovationSquared > 6.63)
        #expect(mean == before.0 && covariance == before.1)
        let inlier = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model, measured: 4.05)
        #expect(inlier.accepted)
    }

    @Test func josephFormKeepsCovarianceSymmetricPositiveDefinite() throws {
        var noise = NoiseStream(seed: 31, source: "joseph")
        var mean = Vector3(0.3, 1.2, -4)
        var covariance = Matrix3.scaledIdentity(4)
        for k in 0..<500 {
            let a = Vector3(noise.uniform(-0.3, 0.3), noise.uniform(1, 1.8), noise.uniform(-0.2, 0.2))
            let model = RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: .infinity)
            _ = EKFUpdate.update(mean: &mean, covariance: &covariance, model: model,
                                 measured: (Vector3(0.5, 1.3, -4) - a).length + noise.gaussian(standardDeviation: 0.06))
            if k % 3 == 0 {
                let d = DirectionModel(antennaInWorld: a, worldFromDevice: .identity, azimuthStandardDeviation: 0.05,
                                       elevationStandardDeviation: 0.09, gate: .infinity)
                _ = EKFUpdate.update(mean: &mean, covariance: &covariance, model: d,
                                     measured: d.predicted(Vector3(0.5, 1.3, -4)))
            }
            #expect(covariance == covariance.transposed)
            let e = try #require(SymmetricEigen3.lapack(covariance))
            #expect(e.values.x > 0)
        }
        #expect((mean - Vector3(0.5, 1.3, -4)).length < 0.1)
    }

    @Test func sphereTilingIsSymmetricAboutTheDevicesHorizontalPlane() {
        var mixture = PositionMixture(capacity: 96)
        let antenna = Vector3(0.2, 1.4, -0.1)
        mixture.initialize(rangeMetres: 4, antennaInWorld: antenna, forwardInWorld: Vector3(0, 0, -1), options: FusionOptions())
        #expect(mixture.count > 40 && mixture.count <= 96)
        for h in mixture.hypotheses {
            #expect(abs((h.meanInWorld - antenna).length - 4) < 1e-9)
            let mirrored = Vector3(h.meanInWorld.x, 2 * antenna.y - h.meanInWorld.y, h.meanInWorld.z)
            #expect(mixture.hypotheses.contains { ($0.meanInWorld - mirrored).length < 1e-9 })
        }
        let total = mixture.hypotheses.reduce(0.0) { $0 + exp($1.logWeight) }
        #expect(abs(total - 1) < 1e-12)
    }

    @Test func movementAccumulatorMeasuresTheSpreadOfPositions() throws {
        var movement = MovementAccumulator()
        for k in 0..<1000 { movement.add(Vector3(0.3 * sin(2 * .pi * Double(k) / 100), 1.4, -2)) }
        let e = try #require(SymmetricEigen3.lapack(movement.covariance))
        // RMS of a sine of amplitude 0.3 m over whole periods is 0.3/√2.
        #expect(abs(e.values.z.squareRoot() - 0.3 / 2.0.squareRoot()) < 0.01)
        #expect(e.values.y < 1e-12)
    }
}
