import Foundation

/// How the command prints a number: fixed-point with `decimals` decimals while its magnitude
/// is below a million, three significant digits with an exponent beyond (a position error of
/// 1e308 m prints as `1e+308`, not as 309 digits); `—` for a missing or non-finite figure.
public enum Figure {
    /// `x` with `decimals` decimals, or with an exponent beyond a million; `—` for none.
    public static func text(_ x: Double?, decimals: Int) -> String {
        guard let x, x.isFinite else { return "—" }
        return abs(x) < 1e6 ? String(format: "%.\(decimals)f", x) : String(format: "%.3g", x)
    }
}
