import Foundation
@_spi(Internals) import NearbyFusion

/// The Cramér–Rao bound on the distance to an object that moves, from its ranges so far,
/// for an estimator told when the object changes its velocity and nothing of how: the spread
/// of an efficient (unbiased) estimator that takes the path between two changes as straight
/// and at a constant pace, with ranges whose errors last. A reference for a peer's published
/// distance, not a floor under every estimator: one that assumes more of the motion (that a
/// walker keeps most of its pace through a turn) can do better where that holds.
///
/// The object's path is `p(t) = p₀ + Σⱼ τⱼ(t) vⱼ`: `p₀` its position at the first range's
/// time `t₀` (world frame, metres), `vⱼ` its velocity over the `j`-th stretch between two
/// changes (m/s) and `τⱼ(t)` the time, seconds, that `[t₀, t]` spends in that stretch. Over the
/// parameters `θ = (p₀, v₁, …, v_S)` a range at `t` toward the unit vector `u` (from the
/// antenna to the object) has the gradient `h = (uᵀ, τ₁(t) uᵀ, …, τ_S(t) uᵀ)`, and so has the
/// distance published then.
///
/// The ranges' errors are a first-order autoregressive process of standard deviation `σ` and
/// correlation time `T`: `eᵢ = φᵢ eᵢ₋₁ + √(1 − φᵢ²) σ wᵢ`, `φᵢ = e^{−(tᵢ − tᵢ₋₁)/T}` between
/// consecutive ranges (white noise with `T = 0`). Its precision matrix is tridiagonal, so the
/// Fisher information grows by one whitened row per range, `J ← J + wᵢ wᵢᵀ`,
/// `wᵢ = (hᵢ − φᵢ hᵢ₋₁)/(σ √(1 − φᵢ²))` (`w₀ = h₀/σ`). A range left out (a stale repeat, an
/// outlier the estimator is granted to know) only lengthens the gap to the next. The prior
/// information is `diag(ε I₃, σ_v⁻² I₃, …)`: no knowledge of `p₀` (`ε = 10⁻⁶ m⁻²`) and each
/// stretch's velocity within `σ_v` (m/s) per axis, what an estimator of a person's pace may
/// assume. The bound on the distance at `t` is `s² = hᵀ J⁻¹ h`.
public struct MovingDistanceBound: Sendable {
    /// When the object's velocity changes after `t₀`, seconds, ascending: the stretches begin
    /// at `t₀` and at each of these.
    public let stretchStarts: [Double]
    /// `t₀`, seconds: the first range's time (the first stretch's start).
    public var originTime: Double { stretchStarts[0] }
    /// `σ`, metres, and `T`, seconds, of the ranges' errors.
    public let rangeStandardDeviation: Double, correlationSeconds: Double
    /// `J`, row-major, `n × n` with `n = 3 (S + 1)`.
    private var information: [Double]
    /// The last range's time and gradient `hᵢ₋₁`; `nil` before the first.
    private var previous: (time: Double, gradient: [Double])?

    /// Parameters: the first range's time `t₀` (seconds), the times of the object's velocity
    /// changes (seconds; those at or before `t₀` are ignored), `σ` (metres), `T` (seconds; 0 for
    /// independent errors) and `σ_v` (m/s).
    public init(originTime t0: Double, velocityChanges: [Double], rangeStandardDeviation sigma: Double,
                correlationSeconds: Double, velocityPriorStandardDeviation sigmaV: Double = 1) {
        stretchStarts = [t0] + velocityChanges.filter { $0 > t0 }.sorted()
        rangeStandardDeviation = sigma
        self.correlationSeconds = correlationSeconds
        let n = 3 * (stretchStarts.count + 1)
        information = [Double](repeating: 0, count: n * n)
        for i in 0..<n { information[i * n + i] = i < 3 ? 1e-6 : 1 / (sigmaV * sigmaV) }
    }

    /// The number of parameters, `3 (S + 1)`.
    public var parameterCount: Int { 3 * (stretchStarts.count + 1) }

    /// `h` at time `t` (seconds) toward `u` (unit, world frame): `(uᵀ, τ₁(t) uᵀ, …)`.
    @_spi(Internals) public func gradient(at t: Double, toward u: Vector3) -> [Double] {
        var h = [u.x, u.y, u.z]
        for (j, start) in stretchStarts.enumerated() {
            let end = j + 1 < stretchStarts.count ? stretchStarts[j + 1] : .infinity
            let tau = max(0, min(t, end) - start)
            h += [tau * u.x, tau * u.y, tau * u.z]
        }
        return h
    }

    /// Adds a range taken at `t` (seconds, after the last one added) toward `u`: `J += w wᵀ`.
    public mutating func addRange(at t: Double, toward u: Vector3) {
        let h = gradient(at: t, toward: u)
        var w = h.map { $0 / rangeStandardDeviation }
        if let p = previous, correlationSeconds > 0 {
            let phi = exp(-max(t - p.time, 0) / correlationSeconds)
            let scale = 1 / (rangeStandardDeviation * max(1 - phi * phi, 1e-12).squareRoot())
            for i in w.indices { w[i] = (h[i] - phi * p.gradient[i]) * scale }
        }
        let n = parameterCount
        for i in 0..<n where w[i] != 0 {
            for j in 0..<n { information[i * n + j] += w[i] * w[j] }
        }
        previous = (t, h)
    }

    /// `s = √(hᵀ J⁻¹ h)`, metres: the bound on the error of a distance published at `t`
    /// toward `u` from the ranges added so far; `nil` if `J` is not numerically positive definite.
    public func distanceStandardDeviation(at t: Double, toward u: Vector3) -> Double? {
        let h = gradient(at: t, toward: u)
        guard let y = Self.choleskySolve(information, h, n: parameterCount) else { return nil }
        var s2 = 0.0
        for i in h.indices { s2 += h[i] * y[i] }
        return s2 >= 0 && s2.isFinite ? s2.squareRoot() : nil
    }

    /// `A⁻¹ b` for a symmetric positive-definite `A` (row-major, `n × n`) by its Cholesky
    /// factor `A = L Lᵀ`, forward and back substitution; `nil` where a pivot is not positive.
    @_spi(Internals) public static func choleskySolve(_ a: [Double], _ b: [Double], n: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var s = a[i * n + j]
                for k in 0..<j { s -= l[i * n + k] * l[j * n + k] }
                if i == j {
                    guard s > 0, s.isFinite else { return nil }
                    l[i * n + i] = s.squareRoot()
                } else {
                    l[i * n + j] = s / l[j * n + j]
                }
            }
        }
        var y = b
        for i in 0..<n {
            for k in 0..<i { y[i] -= l[i * n + k] * y[k] }
            y[i] /= l[i * n + i]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for k in (i + 1)..<n { y[i] -= l[k * n + i] * y[k] }
            y[i] /= l[i * n + i]
        }
        return y
    }

    /// The `q`-quantile (0 < q < 1) of `|X|` pooled over the normal laws `X ~ N(mᵢ, sᵢ²)`
    /// (metres), each weighing the same: the error of an efficient estimator with bias `mᵢ` and
    /// spread `sᵢ` at each update, read as one sample. By bisection on
    /// `F(x) = (1/n) Σ [Φ((x − mᵢ)/sᵢ) − Φ((−x − mᵢ)/sᵢ)]`; `nil` for no laws.
    public static func quantileOfAbsoluteError(means: [Double], standardDeviations: [Double], _ q: Double) -> Double? {
        guard !means.isEmpty, means.count == standardDeviations.count else { return nil }
        func cdf(_ x: Double) -> Double {
            var total = 0.0
            for (m, s) in zip(means, standardDeviations) {
                total += s > 0 ? standardNormalCDF((x - m) / s) - standardNormalCDF((-x - m) / s) : (abs(m) <= x ? 1 : 0)
            }
            return total / Double(means.count)
        }
        var low = 0.0
        var high = zip(means, standardDeviations).map { abs($0) + 10 * $1 }.max() ?? 0
        guard high > 0 else { return 0 }
        for _ in 0..<100 {
            let mid = 0.5 * (low + high)
            if cdf(mid) < q { low = mid } else { high = mid }
        }
        return 0.5 * (low + high)
    }
}
