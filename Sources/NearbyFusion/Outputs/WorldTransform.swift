/// A rigid 4×4 transform in the world frame: rotation `R` and translation `t` (metres).
///
/// Serialised as 16 numbers **column-major** (as `simd_float4x4`'s columns):
/// `[R₀₀ R₁₀ R₂₀ 0, R₀₁ R₁₁ R₂₁ 0, R₀₂ R₁₂ R₂₂ 0, tₓ t_y t_z 1]`.
public struct WorldTransform: Sendable, Hashable {
    /// The rotation `R`, world from object (the identity: an accessory's orientation is not observed).
    public var rotation: Matrix3
    /// The translation column: the object's position in the world frame, metres.
    public var translation: Vector3

    /// A transform with rotation `rotation` and translation `translation` (metres, world frame).
    public init(rotation: Matrix3 = .identity, translation: Vector3) {
        self.rotation = rotation
        self.translation = translation
    }

    /// The 16 elements, column-major.
    public var columnMajor: [Double] {
        let r = rotation
        return [r.m00, r.m10, r.m20, 0, r.m01, r.m11, r.m21, 0, r.m02, r.m12, r.m22, 0,
                translation.x, translation.y, translation.z, 1]
    }

    /// Reads 16 column-major elements; `nil` unless there are 16 and the last row is
    /// `[0 0 0 1]`.
    public init?(columnMajor e: [Double]) {
        guard e.count == 16, e[3] == 0, e[7] == 0, e[11] == 0, e[15] == 1 else { return nil }
        rotation = Matrix3(e[0], e[4], e[8], e[1], e[5], e[9], e[2], e[6], e[10])
        translation = Vector3(e[12], e[13], e[14])
    }

    /// A pose `(position, orientation)` as a transform.
    public init(positionInWorld: Vector3, worldFromLocal: Quaternion) {
        self.init(rotation: worldFromLocal.rotationMatrix, translation: positionInWorld)
    }

    /// Applies the transform to a point: `R p + t`.
    public func apply(_ p: Vector3) -> Vector3 { rotation * p + translation }
}
