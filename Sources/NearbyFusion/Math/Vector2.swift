/// A 2-vector, used for the (azimuth, elevation) direction measurement, radians.
public struct Vector2: Hashable, Sendable {
    /// Components (for the direction models: azimuth and elevation, radians).
    public var x: Double
    /// (See ``x``.)
    public var y: Double
    /// The vector `(x, y)`.
    @inlinable public init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
    /// `a − b`.
    @inlinable public static func - (a: Vector2, b: Vector2) -> Vector2 { Vector2(a.x - b.x, a.y - b.y) }
    /// `a + b`.
    @inlinable public static func + (a: Vector2, b: Vector2) -> Vector2 { Vector2(a.x + b.x, a.y + b.y) }
}

/// A symmetric 2×2 matrix `[[a, b], [b, c]]`: a 2-dimensional covariance (rad²).
public struct SymmetricMatrix2: Hashable, Sendable {
    /// The entries of `[[a, b], [b, c]]`.
    public var a: Double
    /// (See ``a``.)
    public var b: Double
    /// (See ``a``.)
    public var c: Double
    /// The matrix `[[a, b], [b, c]]`.
    @inlinable public init(a: Double, b: Double, c: Double) { self.a = a; self.b = b; self.c = c }

    /// `diag(d0, d1)`.
    @inlinable public init(diagonal d0: Double, _ d1: Double) { self.init(a: d0, b: 0, c: d1) }

    /// `a c − b²`.
    @inlinable public var determinant: Double { a * c - b * b }

    /// The inverse `[[c, −b], [−b, a]] / det`, or `nil` when not positive definite.
    @inlinable public var inverse: SymmetricMatrix2? {
        let d = determinant
        guard d > 1e-300, d.isFinite else { return nil }
        return SymmetricMatrix2(a: c / d, b: -b / d, c: a / d)
    }

    /// The quadratic form `vᵀ M v`.
    @inlinable public func quadraticForm(_ v: Vector2) -> Double { a * v.x * v.x + 2 * b * v.x * v.y + c * v.y * v.y }

    /// `M v`.
    @inlinable public static func * (m: SymmetricMatrix2, v: Vector2) -> Vector2 {
        Vector2(m.a * v.x + m.b * v.y, m.b * v.x + m.c * v.y)
    }
}

/// A 2×3 Jacobian, stored as its two rows (each the gradient of one measurement
/// component with respect to the 3-D state).
public struct Jacobian2x3: Hashable, Sendable {
    /// The two rows (each the gradient of one measured angle, per metre).
    public var row0: Vector3
    /// (See ``row0``.)
    public var row1: Vector3
    /// The matrix with rows `row0` and `row1`.
    @inlinable public init(row0: Vector3, row1: Vector3) { self.row0 = row0; self.row1 = row1 }
}
