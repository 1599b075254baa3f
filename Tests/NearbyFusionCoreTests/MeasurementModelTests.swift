import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// Analytic Jacobians against central finite differences, at seeded random geometry.
@Suite("Measurement models: Jacobians against finite differences")
struct MeasurementModelTests {
    static let step = 1e-6

    static func randomPose(_ noise: inout NoiseStream) -> (Vector3, Quaternion) {
        (Vector3(noise.uniform(-2, 2), noise.uniform(0.5, 2), noise.uniform(-2, 2)),
         Quaternion(angle: noise.uniform(-.pi, .pi), axis: Vector3(0.2 * noise.gaussian(), 1, 0.2 * noise.gaussian())))
    }

    /// A point in front of the device (inside ~60° of −Z), 1–8 m away.
    static func pointInFront(_ noise: inout NoiseStream, antenna: Vector3, orientation: Quaternion) -> Vector3 {
        let d = DeviceAngles.direction(azimuth: noise.uniform(-1, 1), elevation: noise.uniform(-0.8, 0.8))
        return antenna + noise.uniform(1, 8) * orientation.rotate(d)
    }

    @Test func rangeNoiseGrowsWithTheMeasuredRange() {
        let o = FusionOptions()
        let near = o.rangeModel(from: .zero, measured: 2), far = o.rangeModel(from: .zero, measured: 30)
        #expect(abs(near.variance - (0.06 * 0.06 + 0.01 * 0.01)) < 1e-12)
        #expect(abs(far.variance - (0.06 * 0.06 + 0.15 * 0.15)) < 1e-12)
        var flat = o
        flat.sensors.rangeErrorFraction = 0
        #expect(flat.rangeModel(from: .zero, measured: 30).variance == 0.06 * 0.06)
    }

    @Test func rangeJacobianMatchesFiniteDifferences() {
        var noise = NoiseStream(seed: 21, source: "range")
        for _ in 0..<100 {
            let (a, q) = Self.randomPose(&noise)
            let p = Self.pointInFront(&noise, antenna: a, orientation: q)
            let model = RangeModel(antennaInWorld: a, standardDeviation: 0.06, gate: 6.63)
            let h = model.jacobian(p)
            for (k, e) in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)].enumerated() {
                let numeric = (model.predicted(p + Self.step * e) - model.predicted(p - Self.step * e)) / (2 * Self.step)
                let analytic = [h.x, h.y, h.z][k]
                #expect(abs(numeric - analytic) < 1e-7)
            }
        }
    }

    @Test func directionJacobianMatchesFiniteDifferences() {
        var noise = NoiseStream(seed: 22, source: "direction")
        for _ in 0..<100 {
            let (a, q) = Self.randomPose(&noise)
            let p = Self.pointInFront(&noise, antenna: a, orientation: q)
            let model = DirectionModel(antennaInWorld: a, worldFromDevice: q, azimuthStandardDeviation: 0.05,
                                       elevationStandardDeviation: 0.09, gate: 9.21)
            let h = model.jacobian(p)
            for (k, e) in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)].enumerated() {
                let plus = model.predicted(p + Self.step * e), minus = model.predicted(p - Self.step * e)
                let numericAz = Angle.wrapped(plus.x - minus.x) / (2 * Self.step)
                let numericEl = (plus.y - minus.y) / (2 * Self.step)
                #expect(abs(numericAz - [h.row0.x, h.row0.y, h.row0.z][k]) < 1e-6)
                #expect(abs(numericEl - [h.row1.x, h.row1.y, h.row1.z][k]) < 1e-6)
            }
        }
    }

    /// A linearisation carried to a nearby point: carried only within the stated reach, and
    /// there within 1 % of a σ of the exact `h` (a wrong sign or a missing shift is off by
    /// whole σ); not carried 30 cm away.
    @Test func directionLinearisationIsCarriedOnlyWhereItHolds() {
        var noise = NoiseStream(seed: 23, source: "carried direction")
        var carried = 0
        for _ in 0..<200 {
            let (a, q) = Self.randomPose(&noise)
            let p = Self.pointInFront(&noise, antenna: a, orientation: q)
            let model = DirectionModel(antennaInWorld: a, worldFromDevice: q, azimuthStandardDeviation: 0.05,
                                       elevationStandardDeviation: 0.09, gate: 9.21)
            let offset = noise.uniform(0.001, 0.06) * Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian()).normalized
            let b = p + offset
            let base = model.linearised(at: p)
            let exact = model.predicted(b)
            let firstOrder = base.predicted + Vector2(base.jacobian.row0.dot(offset), base.jacobian.row1.dot(offset))
            let error = model.residual(exact, firstOrder)
            if model.carriesLinearisation(from: p, to: b) {
                carried += 1
                #expect(max(abs(error.x), abs(error.y)) <= 0.01 * 0.05, "dropped term \(error) at offset \(offset.length) m")
            }
            #expect(!model.carriesLinearisation(from: p, to: p + Vector3(0.3, 0, 0)))
        }
        #expect(carried > 20)
    }

    @Test func azimuthJacobianMatchesFiniteDifferences() {
        var noise = NoiseStream(seed: 23, source: "azimuth")
        for _ in 0..<100 {
            let (a, q) = Self.randomPose(&noise)
            let p = Self.pointInFront(&noise, antenna: a, orientation: q)
            let model = AzimuthModel(antennaInWorld: a, worldFromDevice: q, standardDeviation: 0.05, gate: 6.63)
            let h = model.jacobian(p)
            for (k, e) in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)].enumerated() {
                let numeric = Angle.wrapped(model.predicted(p + Self.step * e) - model.predicted(p - Self.step * e)) / (2 * Self.step)
                #expect(abs(numeric - [h.x, h.y, h.z][k]) < 1e-6)
            }
        }
    }

    /// The innovation formed from the measured vector is the difference of the angles, wrapped,
    /// behind the device (azimuth across ±π) and steeply up or down included.
    @Test func directionInnovationFromTheMeasuredVectorIsTheDifferenceOfTheAngles() {
        var noise = NoiseStream(seed: 25, source: "innovation")
        var largest = 0.0
        for k in 0..<400 {
            let (a, q) = Self.randomPose(&noise)
            let model = DirectionModel(antennaInWorld: a, worldFromDevice: q, azimuthStandardDeviation: 0.05,
                                       elevationStandardDeviation: 0.09, gate: 9.21)
            // Every fourth point behind the device, where the azimuth crosses ±π.
            let behind = k % 4 == 0
            let az = behind ? .pi + noise.uniform(-0.3, 0.3) : noise.uniform(-1, 1)
            let p = a + noise.uniform(0.5, 8) * q.rotate(DeviceAngles.direction(azimuth: az, elevation: noise.uniform(-1.4, 1.4)))
            let measured = DeviceAngles.direction(azimuth: az + noise.uniform(-0.2, 0.2), elevation: noise.uniform(-1.5, 1.5))
            let fromVector = model.linearisedInnovation(measuredDirection: 3 * measured, at: p)
            let fromAngles = model.residual(DeviceAngles.azimuthElevation(measured), model.predicted(p))
            largest = max(largest, abs(fromVector.innovation.x - fromAngles.x), abs(fromVector.innovation.y - fromAngles.y))
            #expect(fromVector.jacobian == model.jacobian(p))
            #expect(abs(fromVector.innovation.x) <= .pi && abs(fromVector.innovation.y) <= .pi)
        }
        #expect(largest < 1e-12, "largest difference \(largest) rad")
    }

    /// An azimuth-only model's innovation formed from the measured vector is the wrapped
    /// difference of the azimuths, behind the device included, with the same Jacobian.
    @Test func azimuthInnovationFromTheMeasuredVectorIsTheDifferenceOfTheAzimuths() {
        var noise = NoiseStream(seed: 26, source: "azimuth-innovation")
        var largest = 0.0
        for k in 0..<400 {
            let (a, q) = Self.randomPose(&noise)
            let model = AzimuthModel(antennaInWorld: a, worldFromDevice: q, standardDeviation: 0.05, gate: 6.63)
            let az = k % 4 == 0 ? .pi + noise.uniform(-0.3, 0.3) : noise.uniform(-1, 1)
            let p = a + noise.uniform(0.5, 8) * q.rotate(DeviceAngles.direction(azimuth: az, elevation: noise.uniform(-1.2, 1.2)))
            let measured = DeviceAngles.direction(azimuth: az + noise.uniform(-0.2, 0.2), elevation: 0)
            let fromVector = model.linearisedInnovation(measuredDirection: 2 * measured, at: p)
            let fromAngle = model.residual(atan2(measured.x, -measured.z), model.predicted(p))
            largest = max(largest, abs(fromVector.innovation - fromAngle))
            #expect(fromVector.jacobian == model.jacobian(p))
        }
        #expect(largest < 1e-12, "largest difference \(largest) rad")
    }

    @Test func azimuthResidualWrapsAcrossBehind() {
        let model = AzimuthModel(antennaInWorld: .zero, worldFromDevice: .identity, standardDeviation: 0.05, gate: 6.63)
        #expect(abs(model.residual(-3.1, 3.1) - (2 * .pi - 6.2)) < 1e-12)
    }

    @Test func deviceAnglesRoundTrip() {
        var noise = NoiseStream(seed: 24, source: "angles")
        for _ in 0..<100 {
            let az = noise.uniform(-3, 3), el = noise.uniform(-1.5, 1.5)
            let back = DeviceAngles.azimuthElevation(DeviceAngles.direction(azimuth: az, elevation: el))
            #expect(abs(Angle.wrapped(back.x - az)) < 1e-12 && abs(back.y - el) < 1e-12)
        }
        // Straight ahead along −Z is azimuth 0, elevation 0; +X is azimuth +π/2 (right).
        #expect(DeviceAngles.azimuthElevation(Vector3(0, 0, -1)) == Vector2(0, 0))
        #expect(abs(DeviceAngles.azimuthElevation(Vector3(1, 0, 0)).x - .pi / 2) < 1e-15)
    }
    /// The range's second-order terms, `½ tr(∇²h P)` and `½ tr((∇²h P)²)` with
    /// `∇²h = (I − uuᵀ)/r`, computed without a 3×3 product, equal the matrix products.
    @Test func rangeSecondOrderTermsMatchTheMatrixProducts() {
        let model = RangeModel(antennaInWorld: Vector3(0.1, 1.4, 0.2), standardDeviation: 0.06, gate: 6.63)
        let covariances = [Matrix3(0.04, 0.01, -0.005, 0.01, 0.09, 0.002, -0.005, 0.002, 0.01), Matrix3.scaledIdentity(0.25),
                           Matrix3(1.0, 0.3, 0.2, 0.3, 0.5, -0.1, 0.2, -0.1, 0.8)]
        for p in covariances {
            for object in [Vector3(-1.5, 1.0, -4.8), Vector3(3, 0.2, 1), Vector3(0.1, 1.4, -0.7)] {
                let d = object - model.antennaInWorld, r = d.length, u = d / r
                let m = (1 / r) * (Matrix3.identity - Matrix3.outer(u, u)) * p
                let terms = model.secondOrderTerms(object, covariance: p)
                #expect(abs(terms.meanShift - 0.5 * m.trace) <= 1e-14 * max(1, abs(m.trace)))
                #expect(abs(terms.variance - 0.5 * (m * m).trace) <= 1e-13 * max(1, (m * m).trace))
            }
        }
    }
}
