import Foundation

/// A unit quaternion `[x, y, z, w]` (vector part first, as in the recording format),
/// used as the world-from-device rotation of a VIO pose.
public struct Quaternion: Hashable, Sendable {
    /// The vector part `(x, y, z)` and the scalar part `w`.
    public var x: Double
    /// (See ``x``.)
    public var y: Double
    /// (See ``x``.)
    public var z: Double
    /// The scalar part.
    public var w: Double

    /// The quaternion `w + x i + y j + z k` (not normalised).
    @inlinable public init(x: Double, y: Double, z: Double, w: Double) {
        self.x = x; self.y = y; self.z = z; self.w = w
    }

    /// No rotation.
    public static let identity = Quaternion(x: 0, y: 0, z: 0, w: 1)

    /// The rotation by `angle` radians about the unit `axis` (right-hand rule):
    /// `q = [sin(θ/2)·axis, cos(θ/2)]`.
    @inlinable public init(angle: Double, axis: Vector3) {
        let a = axis.normalized
        let s = Foundation.sin(0.5 * angle)
        self.init(x: s * a.x, y: s * a.y, z: s * a.z, w: Foundation.cos(0.5 * angle))
    }

    /// `‖q‖`.
    @inlinable @inline(__always) public var norm: Double { (x * x + y * y + z * z + w * w).squareRoot() }

    /// `q/‖q‖`.
    @inlinable @inline(__always) public var normalized: Quaternion {
        let n = norm
        return Quaternion(x: x / n, y: y / n, z: z / n, w: w / n)
    }

    /// The conjugate `q* = [−v, w]`, the inverse rotation for a unit quaternion.
    @inlinable @inline(__always) public var conjugate: Quaternion { Quaternion(x: -x, y: -y, z: -z, w: w) }

    /// The Hamilton product `p ⊗ q` (apply `q` first, then `p`).
    @inlinable @inline(__always) public static func * (p: Quaternion, q: Quaternion) -> Quaternion {
        Quaternion(x: p.w * q.x + p.x * q.w + p.y * q.z - p.z * q.y,
                   y: p.w * q.y - p.x * q.z + p.y * q.w + p.z * q.x,
                   z: p.w * q.z + p.x * q.y - p.y * q.x + p.z * q.w,
                   w: p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z)
    }

    /// Rotates `v`: `v' = v + 2w (u × v) + 2 u × (u × v)` with `u = [x, y, z]`
    /// (equal to `q v q*` for a unit quaternion, with fewer operations).
    @inlinable @inline(__always) public func rotate(_ v: Vector3) -> Vector3 {
        let u = Vector3(x, y, z)
        let t = 2 * u.cross(v)
        return v + w * t + u.cross(t)
    }

    /// Rotates `v` by the inverse rotation `q*`.
    @inlinable @inline(__always) public func inverseRotate(_ v: Vector3) -> Vector3 { conjugate.rotate(v) }

    /// The rotation matrix `R(q)` with `R v = q v q*`.
    @inlinable @inline(__always) public var rotationMatrix: Matrix3 {
        let xx = x * x, yy = y * y, zz = z * z
        let xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z
        return Matrix3(1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
                       2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
                       2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy))
    }

    /// The unit quaternion of a rotation matrix (Shepperd's method: the branch on the
    /// largest of `w², x², y², z²` keeps the square root well conditioned), with `w ≥ 0`.
    public init(rotationMatrix r: Matrix3) {
        let t = r.trace
        var q: Quaternion
        if t > 0 {
            let s = (t + 1).squareRoot() * 2
            q = Quaternion(x: (r.m21 - r.m12) / s, y: (r.m02 - r.m20) / s, z: (r.m10 - r.m01) / s, w: 0.25 * s)
        } else if r.m00 > r.m11 && r.m00 > r.m22 {
            let s = (1 + r.m00 - r.m11 - r.m22).squareRoot() * 2
            q = Quaternion(x: 0.25 * s, y: (r.m01 + r.m10) / s, z: (r.m02 + r.m20) / s, w: (r.m21 - r.m12) / s)
        } else if r.m11 > r.m22 {
            let s = (1 + r.m11 - r.m00 - r.m22).squareRoot() * 2
            q = Quaternion(x: (r.m01 + r.m10) / s, y: 0.25 * s, z: (r.m12 + r.m21) / s, w: (r.m02 - r.m20) / s)
        } else {
            let s = (1 + r.m22 - r.m00 - r.m11).squareRoot() * 2
            q = Quaternion(x: (r.m02 + r.m20) / s, y: (r.m12 + r.m21) / s, z: 0.25 * s, w: (r.m10 - r.m01) / s)
        }
        if q.w < 0 { q = Quaternion(x: -q.x, y: -q.y, z: -q.z, w: -q.w) }
        self = q.normalized
    }

    /// Spherical linear interpolation from `a` (`u = 0`) to `b` (`u = 1`) along the
    /// shorter arc: `q(u) = sin((1−u)Ω)/sin Ω · a + sin(uΩ)/sin Ω · b`, `cos Ω = |a·b|`
    /// (normalised linear interpolation when the two are within ~0.06°).
    public static func slerp(_ a: Quaternion, _ b: Quaternion, _ u: Double) -> Quaternion {
        var d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
        var b = b
        if d < 0 { d = -d; b = Quaternion(x: -b.x, y: -b.y, z: -b.z, w: -b.w) }
        let wa: Double, wb: Double
        if d > 0.9999995 {
            wa = 1 - u; wb = u
        } else {
            let omega = acos(d), s = sin(omega)
            wa = sin((1 - u) * omega) / s; wb = sin(u * omega) / s
        }
        return Quaternion(x: wa * a.x + wb * b.x, y: wa * a.y + wb * b.y, z: wa * a.z + wb * b.z, w: wa * a.w + wb * b.w).normalized
    }

    /// The components as `[x, y, z, w]` (for I/O only; allocates).
    public var array: [Double] { [x, y, z, w] }
}
