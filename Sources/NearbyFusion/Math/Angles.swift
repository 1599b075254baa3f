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

    /// `atan2(y, x)`, radians, for the angle between two nearly parallel vectors (an
    /// innovation, a residual), cheaply: where `x > 0` and `|y| ≤ x/8` it is `atan t`,
    /// `t = y/x`, summed as its series `t − t³/3 + t⁵/5 − … + t¹⁷/17` (the series alternates, so
    /// what is left out is at most its first term, `t¹⁹/19 ≤ 8⁻¹⁸ t/19 < 3·10⁻¹⁸ t`, a thirtieth of
    /// the last bit at most); elsewhere `atan2` itself. Within a couple of units in the last
    /// place of `atan2`; where the series applies it costs one division and a polynomial of degree 8 in `t²`.
    @inlinable @inline(__always) public static func nearAtan2(_ y: Double, _ x: Double) -> Double {
        guard x > 0, abs(y) <= 0.125 * x else { return atan2(y, x) }
        let t = y / x, u = t * t
        var s = 1.0 / 17
        s = s * -u + 1.0 / 15
        s = s * -u + 1.0 / 13
        s = s * -u + 1.0 / 11
        s = s * -u + 1.0 / 9
        s = s * -u + 1.0 / 7
        s = s * -u + 1.0 / 5
        s = s * -u + 1.0 / 3
        return t - t * u * s
    }

    /// The weighted spread of `count` angles about their circular mean, radians:
    /// `√(Σ wᵢ (ψᵢ − ψ̄)² / Σ wᵢ)`, `ψ̄ = atan2(Σ wᵢ sin ψᵢ, Σ wᵢ cos ψᵢ)`, each difference
    /// wrapped to (−π, π]. `weight(i)` (≥ 0, not all 0) and `angle(i)` (radians) are read twice
    /// each, once per pass. The bearing σ of a weighted point set (`DirectionGrid`, and the
    /// evaluation's exact posterior).
    @_spi(Internals) @inlinable public static func circularSpread(count: Int, weight: (Int) -> Double, angle: (Int) -> Double) -> Double {
        var sinSum = 0.0, cosSum = 0.0, total = 0.0
        for i in 0..<count {
            let w = weight(i), psi = angle(i)
            sinSum += w * sin(psi); cosSum += w * cos(psi); total += w
        }
        let mean = atan2(sinSum, cosSum)
        var spread = 0.0
        for i in 0..<count {
            let dpsi = wrapped(angle(i) - mean)
            spread += weight(i) * dpsi * dpsi
        }
        return (spread / total).squareRoot()
    }
}

/// The standard normal cumulative distribution `Φ(x) = ½ erfc(−x/√2)`.
@_spi(Internals) public func standardNormalCDF(_ x: Double) -> Double {
    0.5 * erfc(-x / 2.0.squareRoot())
}
