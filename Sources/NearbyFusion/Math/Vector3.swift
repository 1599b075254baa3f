/// A 3-vector of `Double`, used for positions (metres) and directions (unitless).
///
/// A plain struct of three stored doubles: no heap storage, no SIMD-module dependency,
/// so the fixed-size filter maths stays allocation-free and portable. The frame a
/// value is expressed in is part of the name of every variable that holds one
/// (`devicePositionInWorld`, `directionInDevice`).
public struct Vector3: Hashable, Sendable, CustomStringConvertible {
    /// Components, in the frame the name of the value gives (world or device), usually metres.
    public var x: Double
    /// (See ``x``.)
    public var y: Double
    /// (See ``x``.)
    public var z: Double

    /// The vector `(x, y, z)`.
    @inlinable public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x; self.y = y; self.z = z
    }

    /// Builds a vector from an array of exactly three elements.
    @inlinable public init?(_ array: [Double]) {
        guard array.count == 3 else { return nil }
        self.init(array[0], array[1], array[2])
    }

    /// `(0, 0, 0)`.
    public static let zero = Vector3(0, 0, 0)
    /// World up (+Y, gravity-aligned), as in ARKit's world frame.
    public static let worldUp = Vector3(0, 1, 0)

    @inlinable @inline(__always) public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable @inline(__always) public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    /// `−a`.
    @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }
    @inlinable @inline(__always) public static func * (s: Double, a: Vector3) -> Vector3 { Vector3(s * a.x, s * a.y, s * a.z) }
    @inlinable @inline(__always) public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(s * a.x, s * a.y, s * a.z) }
    @inlinable @inline(__always) public static func / (a: Vector3, s: Double) -> Vector3 { Vector3(a.x / s, a.y / s, a.z / s) }
    @inlinable @inline(__always) public static func += (a: inout Vector3, b: Vector3) { a = a + b }
    @inlinable @inline(__always) public static func -= (a: inout Vector3, b: Vector3) { a = a - b }

    /// Dot product `a·b`.
    @inlinable @inline(__always) public func dot(_ b: Vector3) -> Double { x * b.x + y * b.y + z * b.z }

    /// Cross product `a × b` (right-handed).
    @inlinable @inline(__always) public func cross(_ b: Vector3) -> Vector3 {
        Vector3(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }

    /// Euclidean norm `‖a‖`.
    @inlinable @inline(__always) public var length: Double { (x * x + y * y + z * z).squareRoot() }

    /// Squared Euclidean norm `‖a‖²`.
    @inlinable @inline(__always) public var lengthSquared: Double { x * x + y * y + z * z }
    /// `‖v‖` computed as `m √((x/m)² + (y/m)² + (z/m)²)` with `m` the largest |component|:
    /// finite for every finite vector (`length` overflows past ~1e154). For reports and
    /// evaluation, not the per-update path.
    public var scaledLength: Double {
        let m = Swift.max(abs(x), abs(y), abs(z))
        guard m > 0, m.isFinite else { return m == 0 ? 0 : .infinity }
        let a = x / m, b = y / m, c = z / m
        return m * (a * a + b * b + c * c).squareRoot()
    }

    /// `a / ‖a‖`; the zero vector stays zero (never NaN).
    @inlinable @inline(__always) public var normalized: Vector3 {
        let n = length
        return n > 0 ? self / n : .zero
    }

    /// True when every component is finite.
    @inlinable @inline(__always) public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    /// The components as an array `[x, y, z]` (for I/O only; allocates).
    public var array: [Double] { [x, y, z] }

    /// `(x, y, z)`.
    public var description: String { "(\(x), \(y), \(z))" }
}
