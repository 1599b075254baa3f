/// A 3×3 matrix of `Double` stored as nine fields, row-major (`mRC` is row R, column C).
///
/// Covariances of the object's world position (m²) and Jacobians of the measurement
/// models are of this size, so the per-update filter maths uses this hand-written type:
/// the compiler keeps it in registers and nothing is allocated.
public struct Matrix3: Hashable, Sendable {
    /// The first row (`m_rc`: row r, column c).
    public var m00, m01, m02: Double
    /// The second row.
    public var m10, m11, m12: Double
    /// The third row.
    public var m20, m21, m22: Double

    /// The matrix with these entries, row by row.
    @inlinable public init(_ m00: Double, _ m01: Double, _ m02: Double,
                           _ m10: Double, _ m11: Double, _ m12: Double,
                           _ m20: Double, _ m21: Double, _ m22: Double) {
        self.m00 = m00; self.m01 = m01; self.m02 = m02
        self.m10 = m10; self.m11 = m11; self.m12 = m12
        self.m20 = m20; self.m21 = m21; self.m22 = m22
    }

    /// A matrix from its three rows.
    @inlinable public init(rows r0: Vector3, _ r1: Vector3, _ r2: Vector3) {
        self.init(r0.x, r0.y, r0.z, r1.x, r1.y, r1.z, r2.x, r2.y, r2.z)
    }

    /// A matrix from its three columns.
    @inlinable public init(columns c0: Vector3, _ c1: Vector3, _ c2: Vector3) {
        self.init(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z)
    }

    /// `diag(d)`.
    @inlinable public init(diagonal d: Vector3) {
        self.init(d.x, 0, 0, 0, d.y, 0, 0, 0, d.z)
    }

    /// `I`.
    public static let identity = Matrix3(1, 0, 0, 0, 1, 0, 0, 0, 1)
    /// `0`.
    public static let zero = Matrix3(0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// `s·I`.
    @inlinable @inline(__always) public static func scaledIdentity(_ s: Double) -> Matrix3 { Matrix3(s, 0, 0, 0, s, 0, 0, 0, s) }
    /// `diag(d.x, d.y, d.z)`.
    @inlinable @inline(__always) public static func diagonal(_ d: Vector3) -> Matrix3 { Matrix3(d.x, 0, 0, 0, d.y, 0, 0, 0, d.z) }

    /// The outer product `a bᵀ`.
    @inlinable @inline(__always) public static func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
        Matrix3(a.x * b.x, a.x * b.y, a.x * b.z,
                a.y * b.x, a.y * b.y, a.y * b.z,
                a.z * b.x, a.z * b.y, a.z * b.z)
    }

    @inlinable @inline(__always) public var row0: Vector3 { Vector3(m00, m01, m02) }
    @inlinable @inline(__always) public var row1: Vector3 { Vector3(m10, m11, m12) }
    @inlinable @inline(__always) public var row2: Vector3 { Vector3(m20, m21, m22) }
    @inlinable @inline(__always) public var column0: Vector3 { Vector3(m00, m10, m20) }
    @inlinable @inline(__always) public var column1: Vector3 { Vector3(m01, m11, m21) }
    @inlinable @inline(__always) public var column2: Vector3 { Vector3(m02, m12, m22) }
    @inlinable @inline(__always) public var diagonal: Vector3 { Vector3(m00, m11, m22) }
    @inlinable @inline(__always) public var trace: Double { m00 + m11 + m22 }

    /// Element access by row and column (0-based); for tests and I/O, not the hot path.
    public subscript(row: Int, column: Int) -> Double {
        get {
            switch (row, column) {
            case (0, 0): return m00
            case (0, 1): return m01
            case (0, 2): return m02
            case (1, 0): return m10
            case (1, 1): return m11
            case (1, 2): return m12
            case (2, 0): return m20
            case (2, 1): return m21
            default: return m22
            }
        }
        set {
            switch (row, column) {
            case (0, 0): m00 = newValue
            case (0, 1): m01 = newValue
            case (0, 2): m02 = newValue
            case (1, 0): m10 = newValue
            case (1, 1): m11 = newValue
            case (1, 2): m12 = newValue
            case (2, 0): m20 = newValue
            case (2, 1): m21 = newValue
            default: m22 = newValue
            }
        }
    }

    /// One block of the expanded Joseph update, `A − k bᵀ − a lᵀ + s k lᵀ`, as
    /// `A − k (b − s l)ᵀ − a lᵀ`: two fused outer products (36 flops, against 63 for three
    /// separate ones). See `KinematicGaussian` for where `k, a, l, b, s` come from.
    @inlinable @inline(__always)
    public static func josephBlock(_ m: Matrix3, k: Vector3, b: Vector3, a: Vector3, l: Vector3, s: Double) -> Matrix3 {
        let c = b - s * l
        return Matrix3(m.m00 - k.x * c.x - a.x * l.x, m.m01 - k.x * c.y - a.x * l.y, m.m02 - k.x * c.z - a.x * l.z,
                       m.m10 - k.y * c.x - a.y * l.x, m.m11 - k.y * c.y - a.y * l.y, m.m12 - k.y * c.z - a.y * l.z,
                       m.m20 - k.z * c.x - a.z * l.x, m.m21 - k.z * c.y - a.z * l.y, m.m22 - k.z * c.z - a.z * l.z)
    }

    /// The same for a block on the diagonal (`b = a`, `l = k`), whose result is symmetric:
    /// the six upper elements are computed and mirrored, so that the block stays exactly
    /// symmetric.
    @inlinable @inline(__always)
    public static func symmetricJosephBlock(_ m: Matrix3, k: Vector3, a: Vector3, s: Double) -> Matrix3 {
        let c = a - s * k
        let m00 = m.m00 - k.x * c.x - a.x * k.x, m11 = m.m11 - k.y * c.y - a.y * k.y, m22 = m.m22 - k.z * c.z - a.z * k.z
        let m01 = m.m01 - k.x * c.y - a.x * k.y, m02 = m.m02 - k.x * c.z - a.x * k.z, m12 = m.m12 - k.y * c.z - a.y * k.z
        return Matrix3(m00, m01, m02, m01, m11, m12, m02, m12, m22)
    }

    /// `Aᵀ`.
    @inlinable @inline(__always) public var transposed: Matrix3 { Matrix3(m00, m10, m20, m01, m11, m21, m02, m12, m22) }

    /// `A += s S` on the upper triangle of `A` only (`m00 m01 m02 m11 m12 m22`), `S` symmetric
    /// given by its upper triangle; `s = 1` adds `S` itself (no product). For sums of symmetric
    /// terms, each formed once, completed by ``mirroredUpperTriangle`` before they are read.
    @inline(__always)
    mutating func addUpperTriangle(_ s: Double, _ s00: Double, _ s01: Double, _ s02: Double,
                                   _ s11: Double, _ s12: Double, _ s22: Double) {
        if s == 1 {
            m00 += s00; m01 += s01; m02 += s02; m11 += s11; m12 += s12; m22 += s22
        } else {
            m00 += s * s00; m01 += s * s01; m02 += s * s02; m11 += s * s11; m12 += s * s12; m22 += s * s22
        }
    }

    /// The symmetric matrix of `A`'s upper triangle: `A_ij` for `i ≤ j`, `A_ji` below.
    @inline(__always)
    var mirroredUpperTriangle: Matrix3 { Matrix3(m00, m01, m02, m01, m11, m12, m02, m12, m22) }

    /// `(A + Aᵀ)/2`: removes the round-off asymmetry a covariance picks up.
    @inlinable @inline(__always) public var symmetrized: Matrix3 {
        let a = 0.5 * (m01 + m10), b = 0.5 * (m02 + m20), c = 0.5 * (m12 + m21)
        return Matrix3(m00, a, b, a, m11, c, b, c, m22)
    }

    @inlinable @inline(__always) public static func + (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(a.m00 + b.m00, a.m01 + b.m01, a.m02 + b.m02,
                a.m10 + b.m10, a.m11 + b.m11, a.m12 + b.m12,
                a.m20 + b.m20, a.m21 + b.m21, a.m22 + b.m22)
    }
    @inlinable @inline(__always) public static func - (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(a.m00 - b.m00, a.m01 - b.m01, a.m02 - b.m02,
                a.m10 - b.m10, a.m11 - b.m11, a.m12 - b.m12,
                a.m20 - b.m20, a.m21 - b.m21, a.m22 - b.m22)
    }
    @inlinable @inline(__always) public static func * (s: Double, a: Matrix3) -> Matrix3 {
        Matrix3(s * a.m00, s * a.m01, s * a.m02, s * a.m10, s * a.m11, s * a.m12, s * a.m20, s * a.m21, s * a.m22)
    }
    @inlinable @inline(__always) public static func += (a: inout Matrix3, b: Matrix3) { a = a + b }

    /// `A v`.
    @inlinable @inline(__always) public static func * (a: Matrix3, v: Vector3) -> Vector3 {
        Vector3(a.m00 * v.x + a.m01 * v.y + a.m02 * v.z,
                a.m10 * v.x + a.m11 * v.y + a.m12 * v.z,
                a.m20 * v.x + a.m21 * v.y + a.m22 * v.z)
    }

    /// `A B`.
    @inlinable @inline(__always) public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: Vector3(a.row0.dot(b.column0), a.row0.dot(b.column1), a.row0.dot(b.column2)),
                Vector3(a.row1.dot(b.column0), a.row1.dot(b.column1), a.row1.dot(b.column2)),
                Vector3(a.row2.dot(b.column0), a.row2.dot(b.column1), a.row2.dot(b.column2)))
    }

    /// The quadratic form `vᵀ A v`.
    @inlinable @inline(__always) public func quadraticForm(_ v: Vector3) -> Double { v.dot(self * v) }

    /// `det(A)`.
    @inlinable @inline(__always) public var determinant: Double {
        m00 * (m11 * m22 - m12 * m21) - m01 * (m10 * m22 - m12 * m20) + m02 * (m10 * m21 - m11 * m20)
    }

    /// `A⁻¹` by the adjugate, or `nil` when `|det A|` is not above `1e-300`
    /// (singular to working precision).
    @inlinable @inline(__always) public var inverse: Matrix3? {
        let c00 = m11 * m22 - m12 * m21, c01 = m12 * m20 - m10 * m22, c02 = m10 * m21 - m11 * m20
        let det = m00 * c00 + m01 * c01 + m02 * c02
        guard abs(det) > 1e-300, det.isFinite else { return nil }
        let s = 1 / det
        return Matrix3(s * c00, s * (m02 * m21 - m01 * m22), s * (m01 * m12 - m02 * m11),
                       s * c01, s * (m00 * m22 - m02 * m20), s * (m02 * m10 - m00 * m12),
                       s * c02, s * (m01 * m20 - m00 * m21), s * (m00 * m11 - m01 * m10))
    }

    /// Whether a symmetric matrix is positive definite, by Sylvester's criterion: the leading
    /// minors `a₀₀`, `a₀₀a₁₁ − a₀₁a₁₀` and `det A` are all positive.
    @inlinable @inline(__always) public var isPositiveDefinite: Bool {
        m00 > 0 && m00 * m11 - m01 * m10 > 0 && determinant > 0
    }

    /// True when every element is finite.
    @inlinable @inline(__always) public var isFinite: Bool {
        m00.isFinite && m01.isFinite && m02.isFinite && m10.isFinite && m11.isFinite
            && m12.isFinite && m20.isFinite && m21.isFinite && m22.isFinite
    }
}
