import Foundation

/// The `distance` a Channel Sounding object publishes: the fused distance of its position
/// estimate (the *reference*), corrected by a robust two-state Kalman filter over the raw
/// ranges once they significantly disagree with it.
///
/// The reference, `ρ = Σ wᵢ ‖μᵢ − a‖` for a still object, follows the device's own motion
/// exactly and averages every range the estimate has taken: median error 0.11 m against the
/// raw ranges' 0.27 m on the coached path. But it is the distance to where a *still* object
/// is estimated to be. A tag picked up and carried changes its ranges long before the
/// estimate lets it go — the eight-range trend test (`ObjectTracker.movedAwayFromItsRanges`)
/// needs about 2 s, and without the app's motion hint the published distance stood still
/// that long, up to a metre off (`cs-carried`: lag 0.9 s in the median run); with the hint
/// nothing is fused while the tag moves and the raw range was published, multipath and all.
///
/// State `x = (d, u)`: `d` the distance now, metres; `u` the rate of change of `d` that the
/// reference does not explain, m/s (the object's own radial speed while a reference
/// exists; the whole range rate, the device's motion included, while none does).
///
/// - **Prediction** over `Δt` (s), with the reference's change `Δρ` since the last update
///   (0 when either end has no reference, or the estimate started over in between — a
///   re-tiled bank's jump is not motion):
///   `d⁻ = d + Δρ + u Δt`, `u⁻ = u`, `P⁻ = F P Fᵀ + q [[Δt³/3, Δt²/2], [Δt²/2, Δt]]`,
///   `F = [[1, Δt], [0, 1]]` — white acceleration noise of intensity `q` (m²/s³),
///   ``FusionOptions/ChannelSounding/distanceResidualAccelerationIntensity`` under a reference,
///   ``FusionOptions/Motion/accelerationIntensity`` (the moving model's) without one.
/// - **Correction** by a range `z` (at most one per ``FusionOptions/Sensors/minimumFusionInterval``,
///   as the estimate fuses them): innovation `ν = z − d⁻`, `s = P⁻_dd + σ²`; the range is
///   line of sight with probability `π = (1 − ε − η) N(ν; 0, s) / p(ν)` under the radio's
///   ``RangeErrorDensity`` (its multipath term makes long ranges suspect, its outlier term
///   any far one), and is fused with variance `σ²/π`: `k = P⁻ e₁ / (P⁻_dd + σ²/π)`,
///   `x ← x⁻ + k ν`, `P ← P⁻ − k e₁ᵀ P⁻` (skipped when `π < 10⁻³`).
/// - **Published**: `ρ + g (d − ρ)` with `g = clamp(|d − ρ| / √P_dd − 1.5, 0, 1)` — the
///   reference while the filter's distance lies within 1.5σ of it, the filter's beyond 2.5σ,
///   a linear ramp between (no jump when the evidence turns); `d` while there is no
///   reference. (A later ramp, from 2σ to 3σ, trims a still tag's error a little but
///   follows a carried tag worse than its raw ranges.)
///
/// A carried tag's published distance then follows its ranges with a lag of a few tenths
/// of a second instead of standing where the still estimate left it; the price is a still
/// tag's error a little above the fused distance alone, as the ramp opens on noise now and
/// then (`nearby-fusion accuracy` prints both beside the raw ranges').
@_spi(Internals) public struct DistanceSmoother: Sendable, Hashable {
    /// `d`, metres, and `u`, m/s.
    public private(set) var distance = 0.0, rate = 0.0
    /// `P = [[P_dd, P_du], [P_du, P_uu]]` (m², m²/s, m²/s²).
    public private(set) var pdd = 0.0, pdu = 0.0, puu = 0.0
    /// Whether a range has started the filter.
    public private(set) var isStarted = false
    /// Time of the last update (prediction), and of the last range fused, seconds.
    var lastTime = 0.0, lastRangeTime = -Double.infinity
    /// The reference at the last update and the estimate it came from (`nil`: none).
    var lastReference: Double?
    var lastGeneration = 0

    /// `P_uu` when the filter starts, (m/s)²: a walking pace.
    static let initialRateVariance = 1.0
    /// Added to `P_uu` when a reference appears or goes, (m/s)²: the device's radial speed
    /// while it sweeps (±0.3 m at ~0.5 Hz: ~0.5 m/s).
    static let rateVarianceOnSwitch = 0.25

    public init() {}

    /// Advances the filter to `t` (seconds) and fuses `range` (metres, `nil` when the
    /// procedure failed); returns the distance to publish, metres — `nil` before the first
    /// range, or when there is neither a range nor a reference (Nearby Interaction's `distance`
    /// is nil when a procedure fails).
    ///
    /// - Parameters:
    ///   - t: the update's time, seconds.
    ///   - range: the radio's range, metres (`nil`: the procedure failed, or beyond reach).
    ///   - reference: the fused distance of the current estimate, metres (`nil`: none).
    ///   - generation: changes whenever the estimate starts over.
    ///   - density: the radio's range error density.
    ///   - sigma2: the Gaussian variance of a range, `σ²`, m².
    ///   - residualIntensity: `q` under a reference, m²/s³.
    ///   - freeIntensity: `q` without one, m²/s³.
    ///   - minimumInterval: ranges sooner than this after the last fused one are not fused, seconds.
    public mutating func update(at t: Double, range: Double?, reference: Double?, generation: Int,
                                density: RangeErrorDensity, variance sigma2: Double,
                                residualIntensity: Double, freeIntensity: Double, minimumInterval: Double) -> Double? {
        defer {
            lastReference = reference
            lastGeneration = generation
        }
        if !isStarted || !(t >= lastTime) {
            // The first range starts the filter (a clock that ran back restarts it).
            guard let z = range else { isStarted = false; return reference }
            start(at: t, range: z, variance: sigma2)
            return published(reference)
        }
        let dt = t - lastTime
        lastTime = t
        let continuous = generation == lastGeneration
        var referenceStep = 0.0
        if continuous, let now = reference, let before = lastReference { referenceStep = now - before }
        if (reference == nil) != (lastReference == nil) {
            // What `u` measures changed (the object's own radial speed ↔ the whole range
            // rate): the device's radial speed, ~0.5 m/s while it sweeps, is added or taken
            // away — its variance is added. (An estimate that starts over changes neither.)
            puu += Self.rateVarianceOnSwitch
        }
        predict(dt, referenceStep: referenceStep, intensity: reference == nil ? freeIntensity : residualIntensity)
        if let z = range, t - lastRangeTime >= minimumInterval {
            correct(z, density: density, variance: sigma2)
            lastRangeTime = t
        }
        if !(distance + rate + pdd + pdu + puu).isFinite {
            // Never a NaN in the outputs (options that make the filter diverge): start again
            // from the next range.
            isStarted = false
            return reference ?? range
        }
        if range == nil && reference == nil { return nil }
        return published(reference)
    }

    /// `d = z`, `P_dd = σ²`, `u = 0`, `P_uu` a walking pace.
    private mutating func start(at t: Double, range z: Double, variance sigma2: Double) {
        distance = z
        rate = 0
        pdd = sigma2
        pdu = 0
        puu = Self.initialRateVariance
        lastTime = t
        lastRangeTime = t
        isStarted = true
    }

    /// `d⁻ = d + Δρ + u Δt`, `P⁻ = F P Fᵀ + Q`.
    @inline(__always)
    private mutating func predict(_ dt: Double, referenceStep: Double, intensity q: Double) {
        distance += referenceStep + rate * dt
        let dt2 = dt * dt
        pdd += 2 * dt * pdu + dt2 * puu + q * dt2 * dt / 3
        pdu += dt * puu + q * dt2 / 2
        puu += q * dt
    }

    /// The line-of-sight-weighted update (see the type's comment).
    @inline(__always)
    private mutating func correct(_ z: Double, density: RangeErrorDensity, variance sigma2: Double) {
        let nu = z - distance
        let s = pdd + sigma2
        let inlier = density.inlier(nu, variance: s)
        let lineOfSight = inlier / (inlier + density.notInlier(nu, variance: s))
        guard lineOfSight >= 1e-3, lineOfSight.isFinite else { return }
        let denominator = pdd + sigma2 / lineOfSight
        let kd = pdd / denominator, ku = pdu / denominator
        distance += kd * nu
        rate += ku * nu
        let newPdd = pdd - kd * pdd, newPdu = pdu - kd * pdu, newPuu = puu - ku * pdu
        pdd = newPdd
        pdu = newPdu
        puu = newPuu
    }

    /// `ρ + g (d − ρ)`, `g = clamp(|d − ρ|/√P_dd − 2, 0, 1)`; `d` without a reference.
    @inline(__always)
    private func published(_ reference: Double?) -> Double {
        guard let rho = reference else { return distance }
        let difference = distance - rho
        let g = min(max(abs(difference) / max(pdd, 1e-12).squareRoot() - 1.5, 0), 1)
        let value = rho + g * difference
        return value.isFinite ? value : rho
    }
}
