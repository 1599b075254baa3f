import Foundation

/// The eigen-decomposition `A = V diag(λ) Vᵀ` of a symmetric 3×3 matrix, eigenvalues
/// ascending, eigenvectors orthonormal (the columns of `V`).
public struct SymmetricEigen3: Sendable, Equatable {
    /// `λ₀ ≤ λ₁ ≤ λ₂`.
    public var values: Vector3
    /// Unit eigenvectors; `vectors[k]` belongs to eigenvalue `k`.
    public var vector0: Vector3
    /// The eigenvector of the second eigenvalue (unit).
    public var vector1: Vector3
    /// The eigenvector of the third eigenvalue (unit).
    public var vector2: Vector3

    @inlinable
    /// A decomposition with these eigenvalues and unit eigenvectors.
    public init(values: Vector3, vector0: Vector3, vector1: Vector3, vector2: Vector3) {
        self.values = values
        self.vector0 = vector0
        self.vector1 = vector1
        self.vector2 = vector2
    }

    /// The eigenvector of eigenvalue `k` (0, 1 or 2).
    public func vector(_ k: Int) -> Vector3 { k == 0 ? vector0 : (k == 1 ? vector1 : vector2) }

    /// The eigenvalue `k` (0, 1 or 2).
    public func value(_ k: Int) -> Double { k == 0 ? values.x : (k == 1 ? values.y : values.z) }

    /// Decomposes `matrix` in closed form (Smith, "Eigenvalues of a symmetric 3 × 3 matrix",
    /// CACM 1961): with `q = tr A / 3`, `p = √(‖A − qI‖²_F / 6)`, `B = (A − qI)/p` and
    /// `r = det B / 2`, the eigenvalues are `q + 2p cos(φ + 2πk/3)`, `φ = acos(r)/3`.
    /// Each eigenvector is the largest cross product of two rows of `A − λI` (orthogonal to
    /// both); a repeated eigenvalue takes the completion of the distinct one's vector.
    /// Fixed-size and branch-light: the per-update path uses it (see the benchmarks).
    /// Accuracy: ~1e-12‖A‖ for well-separated eigenvalues, degrading to ~√ε‖A‖ (a few 1e-8,
    /// up to ~2e-7 in the worst cases tested) near a repeated one — acos near ±1 — which is
    /// far below the centimetre-scale thresholds it serves. `nil` for non-finite input.
    @inlinable
    public static func analytic(_ matrix: Matrix3) -> SymmetricEigen3? {
        guard matrix.isFinite else { return nil }
        let a = matrix.symmetrized
        let p1 = a.m01 * a.m01 + a.m02 * a.m02 + a.m12 * a.m12
        let scale = Swift.max(Swift.abs(a.m00), Swift.abs(a.m11), Swift.abs(a.m22), p1.squareRoot(), 1e-300)
        if p1 <= 1e-30 * scale * scale {
            // Diagonal: the axes are the eigenvectors; sort the three pairs by swaps.
            var e0 = (a.m00, Vector3(1, 0, 0)), e1 = (a.m11, Vector3(0, 1, 0)), e2 = (a.m22, Vector3(0, 0, 1))
            if e0.0 > e1.0 { swap(&e0, &e1) }
            if e1.0 > e2.0 { swap(&e1, &e2) }
            if e0.0 > e1.0 { swap(&e0, &e1) }
            return SymmetricEigen3(values: Vector3(e0.0, e1.0, e2.0), vector0: e0.1, vector1: e1.1, vector2: e2.1)
        }
        let q = a.trace / 3
        let p2 = (a.m00 - q) * (a.m00 - q) + (a.m11 - q) * (a.m11 - q) + (a.m22 - q) * (a.m22 - q) + 2 * p1
        let p = (p2 / 6).squareRoot()
        let b = (1 / p) * (a - Matrix3.scaledIdentity(q))
        let r = Swift.min(Swift.max(b.determinant / 2, -1), 1)
        let phi = Foundation.acos(r) / 3
        let l2 = q + 2 * p * Foundation.cos(phi)                        // largest
        let l0 = q + 2 * p * Foundation.cos(phi + 2 * Double.pi / 3)    // smallest
        let l1 = 3 * q - l0 - l2
        let v2 = eigenvector(a, l2)
        var v0 = eigenvector(a, l0)
        // Make v0 orthogonal to v2 (exactly, even when l0 is nearly repeated).
        v0 = (v0 - v0.dot(v2) * v2)
        if v0.lengthSquared < 1e-20 { v0 = anyPerpendicular(v2) }
        v0 = v0.normalized
        let v1 = v2.cross(v0).normalized
        return SymmetricEigen3(values: Vector3(l0, l1, l2), vector0: v0, vector1: v1, vector2: v2)
    }

    /// The largest eigenvalue alone, by the same closed form (no eigenvectors).
    @inlinable
    public static func largestEigenvalue(_ a: Matrix3) -> Double {
        let p1 = a.m01 * a.m01 + a.m02 * a.m02 + a.m12 * a.m12
        let q = a.trace / 3
        let p2 = (a.m00 - q) * (a.m00 - q) + (a.m11 - q) * (a.m11 - q) + (a.m22 - q) * (a.m22 - q) + 2 * p1
        guard p2 > 0, p2.isFinite else { return Swift.max(a.m00, a.m11, a.m22) }
        let p = (p2 / 6).squareRoot()
        let b = (1 / p) * (a - Matrix3.scaledIdentity(q))
        let r = Swift.min(Swift.max(b.determinant / 2, -1), 1)
        return q + 2 * p * Foundation.cos(Foundation.acos(r) / 3)
    }

    /// A unit vector in the null space of `A − λI`: the longest cross product of two of its rows.
    @inlinable
    static func eigenvector(_ a: Matrix3, _ lambda: Double) -> Vector3 {
        let r0 = Vector3(a.m00 - lambda, a.m01, a.m02)
        let r1 = Vector3(a.m10, a.m11 - lambda, a.m12)
        let r2 = Vector3(a.m20, a.m21, a.m22 - lambda)
        let c0 = r0.cross(r1), c1 = r0.cross(r2), c2 = r1.cross(r2)
        let n0 = c0.lengthSquared, n1 = c1.lengthSquared, n2 = c2.lengthSquared
        if n0 >= n1 && n0 >= n2 && n0 > 0 { return c0 / n0.squareRoot() }
        if n1 >= n2 && n1 > 0 { return c1 / n1.squareRoot() }
        if n2 > 0 { return c2 / n2.squareRoot() }
        // A − λI has rank ≤ 1: any vector perpendicular to its non-zero row.
        let row = r0.lengthSquared > r1.lengthSquared ? (r0.lengthSquared > r2.lengthSquared ? r0 : r2) : (r1.lengthSquared > r2.lengthSquared ? r1 : r2)
        return row.lengthSquared > 0 ? anyPerpendicular(row.normalized) : Vector3(1, 0, 0)
    }

    /// A unit vector perpendicular to the unit vector `v`.
    @inlinable
    static func anyPerpendicular(_ v: Vector3) -> Vector3 {
        let helper = Swift.abs(v.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
        return v.cross(helper).normalized
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
        let scale = Swift.max(Swift.abs(a.m00) + Swift.abs(a.m11) + Swift.abs(a.m22) + Swift.abs(a.m01) + Swift.abs(a.m02) + Swift.abs(a.m12), 1e-300)
        func rotate(_ p: Int, _ q: Int) {
            let apq = a[p, q]
            if Swift.abs(apq) <= 1e-300 { return }
            let theta = (a[q, q] - a[p, p]) / (2 * apq)
            let t = (theta >= 0 ? 1.0 : -1.0) / (Swift.abs(theta) + (theta * theta + 1).squareRoot())
            let c = 1 / (t * t + 1).squareRoot(), s = t * c
            var j = Matrix3.identity
            j[p, p] = c; j[q, q] = c; j[p, q] = s; j[q, p] = -s
            a = j.transposed * a * j
            v = v * j
        }
        for _ in 0..<32 {
            if Swift.abs(a.m01) + Swift.abs(a.m02) + Swift.abs(a.m12) <= 1e-15 * scale { break }
            rotate(0, 1); rotate(0, 2); rotate(1, 2)
        }
        // Sort ascending by swaps (no arrays: no heap allocation).
        var e0 = (a.m00, v.column0), e1 = (a.m11, v.column1), e2 = (a.m22, v.column2)
        if e0.0 > e1.0 { swap(&e0, &e1) }
        if e1.0 > e2.0 { swap(&e1, &e2) }
        if e0.0 > e1.0 { swap(&e0, &e1) }
        return SymmetricEigen3(values: Vector3(e0.0, e1.0, e2.0), vector0: e0.1, vector1: e1.1, vector2: e2.1)
    }
}
