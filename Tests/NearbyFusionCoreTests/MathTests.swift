import Foundation
import NearbyFusion
import NearbyFusionTestSupport
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("Maths: quaternions, transforms, angles, eigen-decomposition")
struct MathTests {
    @Test func quaternionRotationMatrixRoundTrip() {
        var noise = NoiseStream(seed: 11, source: "quaternions")
        for _ in 0..<200 {
            let q = Quaternion(angle: noise.uniform(-3, 3), axis: Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian()))
            let back = Quaternion(rotationMatrix: q.rotationMatrix)
            // q and −q are the same rotation.
            let sameSign = abs(back.x - q.x) + abs(back.y - q.y) + abs(back.z - q.z) + abs(back.w - q.w)
            let flipped = abs(back.x + q.x) + abs(back.y + q.y) + abs(back.z + q.z) + abs(back.w + q.w)
            #expect(min(sameSign, flipped) < 1e-12)
            let v = Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian())
            #expect((q.rotate(v) - q.rotationMatrix * v).length < 1e-12)
            #expect((q.inverseRotate(q.rotate(v)) - v).length < 1e-12)
        }
    }

    @Test func worldTransformIsColumnMajorWithTranslationLast() {
        let q = Quaternion(angle: 0.7, axis: Vector3(0, 1, 0))
        let t = WorldTransform(positionInWorld: Vector3(1.02, 0.47, -2.97), worldFromLocal: q)
        let elements = t.columnMajor
        #expect(Array(elements[12..<16]) == [1.02, 0.47, -2.97, 1])
        #expect(elements[3] == 0 && elements[7] == 0 && elements[11] == 0)
        // First column is R's first column.
        #expect(abs(elements[0] - q.rotationMatrix.m00) < 1e-15 && abs(elements[2] - q.rotationMatrix.m20) < 1e-15)
        #expect(WorldTransform(columnMajor: elements) == t)
        #expect(WorldTransform(columnMajor: Array(elements.dropLast())) == nil)
    }

    @Test func horizontalAngleIsPositiveToTheRightSeenFromAbove() {
        let device = Vector3(0, 1.4, 0)
        let facingMinusZ = Quaternion.identity
        // Object ahead and to the right (+X when looking along −Z): positive.
        let right = HorizontalAngle.angle(objectInWorld: Vector3(1, 1.4, -1), devicePositionInWorld: device, worldFromDevice: facingMinusZ)!
        #expect(abs(right - .pi / 4) < 1e-12)
        let left = HorizontalAngle.angle(objectInWorld: Vector3(-1, 1.4, -1), devicePositionInWorld: device, worldFromDevice: facingMinusZ)!
        #expect(abs(left + .pi / 4) < 1e-12)
        // Straight behind is +π, never −π.
        let behind = HorizontalAngle.angle(objectInWorld: Vector3(0, 1.4, 3), devicePositionInWorld: device, worldFromDevice: facingMinusZ)!
        #expect(behind == .pi)
        // Height does not matter.
        let above = HorizontalAngle.angle(objectInWorld: Vector3(1, 4, -1), devicePositionInWorld: device, worldFromDevice: facingMinusZ)!
        #expect(abs(above - .pi / 4) < 1e-12)
        // Turning the device 90° clockwise (now facing +X) puts an object at +X straight ahead.
        let facingPlusX = Quaternion(angle: -.pi / 2, axis: .worldUp)
        #expect((facingPlusX.rotate(Vector3(0, 0, -1)) - Vector3(1, 0, 0)).length < 1e-12)
        let ahead = HorizontalAngle.angle(objectInWorld: Vector3(3, 1.4, 0), devicePositionInWorld: device, worldFromDevice: facingPlusX)!
        #expect(abs(ahead) < 1e-12)
        // Directly overhead has no horizontal angle.
        #expect(HorizontalAngle.angle(objectInWorld: Vector3(0, 5, 0), devicePositionInWorld: device, worldFromDevice: facingMinusZ) == nil)
        // A phone held flat, screen up (−Z points down): the top edge gives forward.
        let flat = Quaternion(angle: -.pi / 2, axis: Vector3(1, 0, 0))
        #expect((flat.rotate(Vector3(0, 1, 0)) - Vector3(0, 0, -1)).length < 1e-12)
        let flatRight = HorizontalAngle.angle(objectInWorld: Vector3(2, 0, -2), devicePositionInWorld: device, worldFromDevice: flat)!
        #expect(abs(flatRight - .pi / 4) < 1e-9)
    }

    static let wrapCases: [(Double, Double)] = [
        (0, 0), (Double.pi, Double.pi), (-Double.pi, Double.pi), (3 * Double.pi, Double.pi),
        (2 * Double.pi + 0.1, 0.1), (-2 * Double.pi - 0.1, -0.1), (7, 7 - 2 * Double.pi),
    ]

    @Test(arguments: wrapCases)
    func angleWrapsIntoHalfOpenInterval(input: Double, expected: Double) {
        let w = Angle.wrapped(input)
        #expect(abs(w - expected) < 1e-12)
        #expect(w > -.pi && w <= .pi)
    }

    /// The short arc tangent is `atan2` to a couple of units in the last place where its
    /// series applies (`x > 0`, `|y| ≤ x/8`, its edge included), and `atan2` itself elsewhere:
    /// behind, at right angles, across ±π, at zero and at non-finite input.
    @Test func nearArcTangentIsTheArcTangent() {
        var noise = NoiseStream(seed: 31, source: "near-atan2")
        var largestUlps = 0.0
        for k in 0..<20_000 {
            let x = noise.uniform(1e-3, 50)
            let y = k == 0 ? 0.125 * x : k == 1 ? -0.125 * x : noise.uniform(-0.13, 0.13) * x
            let exact = atan2(y, x)
            let ulps = abs(Angle.nearAtan2(y, x) - exact) / max(exact.magnitude.ulp, Double.leastNormalMagnitude)
            largestUlps = max(largestUlps, ulps)
        }
        #expect(largestUlps <= 2, "\(largestUlps) ulps")
        for (y, x) in [(1.0, -1.0), (0.2, -3.0), (1e-3, -1.0), (-1e-3, -1.0), (1.0, 0.0), (-2.0, 1e-3), (0.0, 0.0), (0.3, 2.0)] {
            #expect(Angle.nearAtan2(y, x) == atan2(y, x), "(\(y), \(x))")
        }
        #expect(Angle.nearAtan2(.nan, 1).isNaN && Angle.nearAtan2(0.01, .nan).isNaN)
        #expect(Angle.nearAtan2(1, .infinity) == 0)
    }

    @Test func lapackEigenDecompositionReconstructsTheMatrix() throws {
        var noise = NoiseStream(seed: 5, source: "eigen")
        for _ in 0..<100 {
            let b = Matrix3(noise.gaussian(), noise.gaussian(), noise.gaussian(), noise.gaussian(), noise.gaussian(),
                            noise.gaussian(), noise.gaussian(), noise.gaussian(), noise.gaussian())
            let a = (b * b.transposed).symmetrized
            for decomposition in [SymmetricEigen3.lapack(a), SymmetricEigen3.jacobi(a), SymmetricEigen3.analytic(a)] {
                let e = try #require(decomposition)
                #expect(e.values.x <= e.values.y && e.values.y <= e.values.z)
                var rebuilt = Matrix3.zero
                for k in 0..<3 { rebuilt += e.value(k) * Matrix3.outer(e.vector(k), e.vector(k)) }
                let error = (rebuilt - a)
                #expect(abs(error.m00) + abs(error.m01) + abs(error.m02) + abs(error.m11) + abs(error.m12) + abs(error.m22) < 1e-9)
                #expect(abs(e.vector0.dot(e.vector1)) < 1e-9 && abs(e.vector1.length - 1) < 1e-9)
            }
        }
        #expect(SymmetricEigen3.lapack(Matrix3(.nan, 0, 0, 0, 1, 0, 0, 0, 1)) == nil)
        #expect(SymmetricEigen3.analytic(Matrix3(.nan, 0, 0, 0, 1, 0, 0, 0, 1)) == nil)
    }

    /// The closed form against LAPACK on the hard cases: repeated eigenvalues, rank
    /// deficiency, diagonal input, covariance-like scales (1e-6 … 1e2 m²).
    @Test func closedFormEigenAgreesWithLAPACKOnHardCases() throws {
        var noise = NoiseStream(seed: 6, source: "eigen-hard")
        var cases: [Matrix3] = [
            .identity, .zero, Matrix3(diagonal: Vector3(3, 1, 2)), Matrix3.scaledIdentity(1e-6),
            Matrix3.outer(Vector3(1, 2, 3), Vector3(1, 2, 3)),                                  // rank 1
            Matrix3.outer(Vector3(1, 0, 1), Vector3(1, 0, 1)) + Matrix3.outer(Vector3(0, 1, 0), Vector3(0, 1, 0)),  // rank 2
        ]
        for _ in 0..<200 {
            let q = Quaternion(angle: noise.uniform(-3, 3), axis: Vector3(noise.gaussian(), noise.gaussian(), noise.gaussian()))
            let r = q.rotationMatrix
            let scaleExponent = noise.uniform(-6, 2)
            let d0 = pow(10, scaleExponent) * noise.uniform(0.1, 1)
            // Half the cases with two (nearly) equal eigenvalues.
            let d1 = noise.bernoulli(0.5) ? d0 * (1 + 1e-9 * noise.gaussian()) : pow(10, scaleExponent) * noise.uniform(0.1, 1)
            let d2 = pow(10, noise.uniform(-6, 2))
            cases.append((r * Matrix3(diagonal: Vector3(d0, d1, d2)) * r.transposed).symmetrized)
        }
        for a in cases {
            let reference = try #require(SymmetricEigen3.lapack(a))
            let closed = try #require(SymmetricEigen3.analytic(a))
            let norm = max(abs(reference.values.x), abs(reference.values.z), 1e-300)
            // The trigonometric method is accurate to ~√ε‖A‖ near repeated eigenvalues.
            #expect((closed.values - reference.values).length <= 5e-7 * norm)
            var rebuilt = Matrix3.zero
            for k in 0..<3 { rebuilt += closed.value(k) * Matrix3.outer(closed.vector(k), closed.vector(k)) }
            let e = rebuilt - a
            #expect(max(abs(e.m00), abs(e.m01), abs(e.m02), abs(e.m11), abs(e.m12), abs(e.m22)) <= 5e-7 * norm)
            #expect(abs(closed.vector0.dot(closed.vector2)) < 1e-9 && abs(closed.vector1.length - 1) < 1e-9)
        }
    }
}
