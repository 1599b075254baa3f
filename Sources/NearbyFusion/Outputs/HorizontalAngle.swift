import Foundation

/// The horizontal angle of the recording format.
public enum HorizontalAngle {
    /// The angle, radians in `(−π, π]`, in the world's horizontal plane, from the device's
    /// forward direction to the object; **positive clockwise seen from above** (+Y),
    /// i.e. when the object is to the right of someone looking along forward.
    ///
    /// With `f` the device's −Z axis in the world projected onto the horizontal plane and
    /// normalised, `r = f × up = (−f_z, 0, f_x)` its right, and `d` the horizontal part of
    /// `p − a`: `angle = atan2(d·r, d·f)`. When the device's −Z is within ~6° of vertical
    /// (the phone held flat), its +Y axis (the top edge) projected is used as forward.
    /// Returns `nil` when the object is (within 1 mm) straight above or below the device.
    public static func angle(objectInWorld p: Vector3, devicePositionInWorld a: Vector3,
                             worldFromDevice q: Quaternion) -> Double? {
        var f = q.rotate(Vector3(0, 0, -1))
        if f.x * f.x + f.z * f.z < 0.01 { f = q.rotate(Vector3(0, 1, 0)) }
        let fh = Vector3(f.x, 0, f.z).normalized
        let right = Vector3(-fh.z, 0, fh.x)
        let d = Vector3(p.x - a.x, 0, p.z - a.z)
        guard d.lengthSquared > 1e-6 else { return nil }
        // `atan2` lies in [−π, π]: only −π needs mapping into (−π, π] (what `Angle.wrapped` does there).
        let angle = atan2(d.dot(right), d.dot(fh))
        return angle == -.pi ? .pi : angle
    }
}
