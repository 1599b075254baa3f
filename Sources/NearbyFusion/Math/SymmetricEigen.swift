import CLAPACK

/// The eigen-decomposition `A = V diag(λ) Vᵀ` of a symmetric 3×3 matrix, eigenvalues
/// ascending, eigenvectors orthonormal (the columns of `V`).
public struct SymmetricEigen3: Sendable, Equatable {
    /// `λ₀ ≤ λ₁ ≤ λ₂`.
    public var values: Vector3
    /// Unit eigenvectors; `vectors[k]` belongs to eigenvalue `k`.
    public var vector0: Vector3
    public var vector1: Vector3
    public var vector2: Vector3

    /// The eigenvector of eigenvalue `k` (0, 1 or 2).
    public func vector(_ k: Int) -> Vector3 { k == 0 ? vector0 : (k == 1 ? vector1 : vector2) }

    /// The eigenvalue `k` (0, 1 or 2).
    public func value(_ k: Int) -> Double { k == 0 ? values.x : (k == 1 ? values.y : values.z) }

    /// Decomposes `matrix` (symmetric; only its lower triangle is read) with LAPACK's
    /// `dsyev` (Householder tridiagonalisation + implicit QL/QR). Returns `nil` when the
    /// input is not finite or LAPACK does not converge (`info ≠ 0`).
    ///
    /// The scratch space (9 + 3 + 64 doubles) lives on the stack, so a call allocates
    /// nothing on the heap.
    public static func lapack(_ matrix: Matrix3) -> SymmetricEigen3? {
        guard matrix.isFinite else { return nil }
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: 9 + 3 + 64) { buffer in
            let a = buffer.baseAddress!
            // Column-major, as Fortran expects.
            a[0] = matrix.m00; a[1] = matrix.m10; a[2] = matrix.m20
            a[3] = matrix.m01; a[4] = matrix.m11; a[5] = matrix.m21
            a[6] = matrix.m02; a[7] = matrix.m12; a[8] = matrix.m22
            let w = a + 9
            let work = a + 12
            var jobz = CChar(UInt8(ascii: "V")), uplo = CChar(UInt8(ascii: "L"))
            var n: Int32 = 3, lda: Int32 = 3, lwork: Int32 = 64, info: Int32 = 0
            dsyev_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, &info)
            guard info == 0 else { return nil }
            return SymmetricEigen3(values: Vector3(w[0], w[1], w[2]),
                                   vector0: Vector3(a[0], a[1], a[2]),
                                   vector1: Vector3(a[3], a[4], a[5]),
                                   vector2: Vector3(a[6], a[7], a[8]))
        }
    }

    /// Decomposes `matrix` with the cyclic Jacobi method, hand-written for 3×3: each
    /// sweep zeroes the three off-diagonal entries with plane rotations
    /// `A ← Jᵀ A J`, `tan 2θ = 2a_pq / (a_qq − a_pp)`, until they are below
    /// `1e-15·‖A‖`. Kept as the fixed-size alternative that the benchmarks compare with
    /// LAPACK. Returns `nil` for non-finite input.
    public static func jacobi(_ matrix: Matrix3) -> SymmetricEigen3? {
        guard matrix.isFinite else { return nil }
        var a = matrix.symmetrized
        var v = Matrix3.identity
        let scale = max(abs(a.m00) + abs(a.m11) + abs(a.m22) + abs(a.m01) + abs(a.m02) + abs(a.m12), 1e-300)
        for _ in 0..<32 {
            let off = abs(a.m01) + abs(a.m02) + abs(a.m12)
            if off <= 1e-15 * scale { break }
            for (p, q) in [(0, 1), (0, 2), (1, 2)] {
                let apq = a[p, q]
                if abs(apq) <= 1e-300 { continue }
                let theta = (a[q, q] - a[p, p]) / (2 * apq)
                let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                let c = 1 / (t * t + 1).squareRoot(), s = t * c
                var j = Matrix3.identity
                j[p, p] = c; j[q, q] = c; j[p, q] = s; j[q, p] = -s
                a = j.transposed * a * j
                v = v * j
            }
        }
        // Sort ascending.
        var pairs = [(a.m00, v.column0), (a.m11, v.column1), (a.m22, v.column2)]
        pairs.sort { $0.0 < $1.0 }
        return SymmetricEigen3(values: Vector3(pairs[0].0, pairs[1].0, pairs[2].0),
                               vector0: pairs[0].1, vector1: pairs[1].1, vector2: pairs[2].1)
    }
}
