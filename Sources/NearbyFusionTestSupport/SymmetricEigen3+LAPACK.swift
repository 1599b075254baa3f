import CLAPACK
import NearbyFusion

/// The reference the closed-form 3×3 eigen-decomposition of the core is checked against.
///
/// LAPACK is linked here, in test support, and not by the core: on 3×3 matrices `dsyev`'s
/// call overhead makes it 8× slower than the closed form (see `Benchmarks/`), so no
/// per-update path calls it, and an app that imports `NearbyFusion` need not install
/// `liblapack-dev`.
extension SymmetricEigen3 {
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
}
