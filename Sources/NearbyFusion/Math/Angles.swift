import Foundation

/// Angle helpers. All angles are radians.
public enum Angle {
    /// Degrees → radians.
    @inlinable public static func radians(degrees: Double) -> Double { degrees * .pi / 180 }
    /// Radians → degrees.
    @inlinable public static func degrees(radians: Double) -> Double { radians * 180 / .pi }

    /// Wraps an angle into `(−π, π]`: `θ − 2π·round(θ/2π)`, with `−π` mapped to `π`.
    /// Non-finite input is returned unchanged (the caller validates).
    @inlinable public static func wrapped(_ angle: Double) -> Double {
        // Already in (−π, π]: `round(θ/2π)` is 0 there, and `θ − 0` is `θ`.
        if angle > -.pi && angle <= .pi { return angle }
        guard angle.isFinite else { return angle }
        var a = angle - 2 * .pi * (angle / (2 * .pi)).rounded()
        if a <= -.pi { a += 2 * .pi }
        if a > .pi { a -= 2 * .pi }
        return a
    }
}

/// The standard normal cumulative distribution `Φ(x) = ½ erfc(−x/√2)`.
func standardNormalCDF(_ x: Double) -> Double {
    0.5 * erfc(-x / 2.0.squareRoot())
}
