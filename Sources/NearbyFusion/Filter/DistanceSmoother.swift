import Foundation

/// The `distance` a Channel Sounding object publishes: the fused distance of its position
/// estimate (the *reference*), corrected by a robust two-state Kalman filter over the raw
/// ranges once they significantly disagree with it.
///
/// The reference, `ρ = Σ wᵢ ‖μᵢ − a‖` for a still object, follows the device's own motion
/// exactly and averages every range the estimate has taken: on the coached path its median
/// error is well under half the raw ranges' (`nearby-fusion accuracy --scenario
/// cs-coached-step` prints both). But it is the distance to where a *still* object is
/// estimated to be. A tag picked up and carried changes its ranges long before the estimate
/// lets it go — the eight-range trend test (`ObjectTracker.movedAwayFromItsRanges`) needs
/// about 2 s, through which the reference alone would stand still, up to a metre off; and
/// with the app's motion hint nothing is fused while the tag moves, so the reference alone
/// would leave the raw range to be published, multipath and all.
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
///   any far one), `s = P⁻_dd + R` with the learned `R` below, and is fused with variance
///   `R/(π w_t)` (`w_t` below): `k = P⁻ e₁ / (P⁻_dd + R/(π w_t))`, `x ← x⁻ + k ν`,
///   `P ← P⁻ − k e₁ᵀ P⁻` (skipped when `π w_t < 10⁻³`).
/// - **Published**: `ρ + g (d − ρ)` with `g = clamp((|d − ρ| / √P_dd − 1) / 1.5, 0, 1)` —
///   the reference while the filter's distance lies within 1σ of it, the filter's beyond 2.5σ,
///   a linear ramp between (no jump when the evidence turns) — but the reference alone unless
///   the newest fused range and another of the last three lie beyond the learned σ,
///   `√(R n/(n − 2))`, on the side of `d − ρ`: a distance is believed to have left the
///   estimate's only when several ranges agree, the newest among them, so one misreading (and
///   the rate it suggests, through the failed procedures after it) moves nothing, and two that
///   a range back on the estimate's distance contradicts move nothing more. And
///   never beyond every range it has, nor further than two of them support: on the side of
///   `d − ρ`, at most the furthest of `ρ` and the last three fused ranges (the rate that two
///   misreadings leave in `u` would carry `d` past both), and at most one learned σ past the
///   second furthest of those ranges (one far range among them — a noisy radio's — does not
///   set how far the distance goes). `d` while there is no reference.
/// - **No motion the ranges do not show**: under a reference, `d` is published as
///   `d̃ = d − u · max(0, t − t_r − H)`, `t_r` the time of the last fused range and `H`
///   ``FusionOptions/DistanceFilter/rateHorizonSeconds``: through a longer gap the rate stops
///   moving what is published, so two misreadings on one side (they agree to leave) move the
///   distance once but do not walk it on through the failures after them. The filter's own
///   prediction is left whole: the next range is weighed against it, with the variance the
///   gap grew.
/// - **Outliers of either sign**: the range error is Student-t with `n` degrees of freedom
///   (``FusionOptions/DistanceFilter/degreesOfFreedom``), written as a Gaussian of variance
///   `R/w` with the conditional weight `w_t = (n + 1)/(n + δ²)`, `δ² = ν²/s`: the range is
///   fused with variance `R/(π w_t)`. A range 5σ short (an inverse-FFT estimator locking on a
///   spurious early peak) weighs 0.23 of one on the line; multipath alone only ever explains
///   long ones.
/// - **A filter gone astray starts again**: three ranges in a row fused with a first-pass
///   weight `π w_t` under 0.05, all on one side of their predicted distances `d⁻`, whose
///   offsets `zₖ − d⁻ₖ` have a mean `ō` beyond what their own scatter `s` explains,
///   `|ō| √3 / s ≥ 6.965` (Student's t with two degrees of freedom, 99 %), restart the filter
///   at `d = d⁻ + ō`, `u = 0`, `P_dd = max(R n/(n − 2), σ₀²)`, `P_uu` a walking pace (the learned
///   noise kept). A rate taken from a few misreadings would otherwise carry `d` away from
///   every range that follows, each rejected in turn as an outlier of the prediction.
/// - **Stale repeats**: a range the object's tracker calls a stale repeat — the last value
///   passed on again, where the radio's resolution makes an honest repeat unlikely
///   (`ObjectTracker.isStaleRepeat(_:)`) — is no new measurement: it is not fused.
/// - **Learned noise**: `R` is not the configured `σ₀²` but the mean of a variational-Bayes
///   inverse-gamma posterior on the Student-t scale², `R ~ IG(α, β)`, with forgetting `λ`
///   (``FusionOptions/DistanceFilter/noiseForgetting``) toward the prior `σ₀² (n − 2)/n` (the
///   scale whose variance is `σ₀²`) of `m` ranges' weight, `α₀ = m/2`
///   (``FusionOptions/DistanceFilter/noisePriorRanges``): predicted `α⁻ = λα + (1 − λ)α₀`,
///   `β⁻ = λβ + (1 − λ)α₀σ₀²(n − 2)/n`; then `α = α⁻ + ½`, `β = β⁻ + ½ π w_t (ν⁺² + P⁺_dd)`
///   with the post-fit residual `ν⁺ = z − d⁺` and variance `P⁺_dd`, the update and `β`
///   iterated three times to their fixed point (`R = β/α` feeds the next pass); `R` kept
///   within ``FusionOptions/DistanceFilter/noiseScaleRange`` of the prior. The radio's variance
///   is `R n/(n − 2)` (``learnedVariance``). A radio three times noisier than configured is
///   weighed as such within about `1/(1 − λ)` ranges. A range that agrees with another of the
///   last two to leave the reference (both beyond `√(R n/(n − 2))` on one side) shows motion, not
///   noise: it is fused once, with the noise as it stands, and teaches the noise nothing.
/// - **A noise floor from the ranges' own scatter**: the variational-Bayes estimate learns
///   from innovations, and a filter that believes the radio quieter than it is weighs the
///   ranges that would teach it otherwise as outliers (`π w_t` small), so it learns slowly
///   just when it matters. A floor that does not depend on the filter's prediction may be
///   given — the object's ranges' own scatter, from their second differences (the tracker
///   keeps it) — and the variance in use is then `max(R n/(n − 2), σ²_floor)`: in the gain
///   (`R ≥ σ²_floor (n − 2)/n`), in the test that the ranges leave the reference and in a
///   restart.
/// - **Correlated errors**: `φ = ⟨eₖ eₖ₋₁⟩ / ⟨eₖ²⟩` over the normalised innovations
///   `eₖ = νₖ/√sₖ` (clamped to ±3) with the same forgetting, kept in
///   `[0,` ``FusionOptions/DistanceFilter/maximumErrorCorrelation`` `]`; each range is fused with
///   `R (1 + φ)/(1 − φ)`: errors that last are not averaged away as if independent.
///
/// A carried tag's published distance then follows its ranges with a lag of a few tenths
/// of a second instead of standing where the still estimate left it, while a lone range
/// metres short moves nothing; the price is a still tag's error a little above the fused
/// distance alone, as the ramp opens on noise now and then (`nearby-fusion accuracy` prints
/// both beside the raw ranges').
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
    /// The inverse-gamma posterior of the range variance: `α` (ranges) and `β` (m²).
    public private(set) var noiseShape = 0.0, noiseRate = 0.0
    /// The forgetting sums of `eₖ eₖ₋₁` and `eₖ²`, and the last `eₖ`.
    var correlationProduct = 0.0, correlationPower = 0.0
    var lastNormalisedInnovation: Double?

    /// On which side of the reference the last three fused ranges lay, newest first: +1
    /// beyond `+σ`, −1 beyond `−σ` (`σ² =` ``learnedVariance``), 0 within (or no reference).
    var newestSide: Int8 = 0, middleSide: Int8 = 0, oldestSide: Int8 = 0
    /// The last three fused ranges, newest first, metres (`+∞` for one not yet fused: a NaN would
    /// make the smoother unequal to itself).
    var newestRange = Double.infinity, middleRange = Double.infinity, oldestRange = Double.infinity

    /// How many ranges in a row the filter has all but rejected on one side of its predicted
    /// distance (the side of `newestRejectedOffset`), and the last three ranges' offsets `z − d⁻`
    /// from it, metres, newest first (`restartIfAstray(range:predicted:weight:variance:)`).
    var rejectedRun = 0
    var newestRejectedOffset = 0.0, middleRejectedOffset = 0.0, oldestRejectedOffset = 0.0
    /// A range fused with a first-pass weight `π w_t` below this counts as rejected.
    static let rejectedWeight = 0.05
    /// Ranges rejected in a row on one side after which the filter may start again.
    static let rejectedRunLength = 3
    /// Student's t with two degrees of freedom at 99 % (one-sided): how far the rejected ranges'
    /// mean must lie from the prediction, in standard errors of their own scatter.
    static let rejectedRunStudentT = 6.965

    /// Whether the ranges have left the reference consistently on the side of `d − ρ`: the
    /// newest fused range and another of the last three beyond the learned σ on that side.
    func rangesAgreeToLeave(_ difference: Double) -> Bool {
        let side: Int8 = difference > 0 ? 1 : -1
        return newestSide == side && (middleSide == side || oldestSide == side)
    }

    /// `n/(n − 2)`: the variance of a Student-t error of unit scale with `n` degrees of
    /// freedom (1 for `n ≤ 2`, whose variance is unbounded).
    var tailFactor = 1.0
    /// The learned scale² of the Student-t range error, `R = β/α`, m² (before the correlation's inflation).
    public var learnedScaleSquared: Double { noiseShape > 0 ? noiseRate / noiseShape : 0 }
    /// The learned variance of a range, m²: `R n/(n − 2)`, at least ``varianceFloor`` — the
    /// radio's noise as the filter sees it.
    public var learnedVariance: Double { max(learnedScaleSquared * tailFactor, varianceFloor) }
    /// The least range variance the filter uses, m², as given at its last update (the ranges'
    /// own scatter; 0: none).
    public private(set) var varianceFloor = 0.0

    /// The estimated lag-1 correlation of consecutive range errors.
    public var errorCorrelation: Double { correlationPower > 0 ? correlationProduct / correlationPower : 0 }

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
    ///   - isStaleRepeat: whether `range` repeats the last one as no new measurement: it is
    ///     not fused (the published distance is still computed).
    ///   - reference: the fused distance of the current estimate, metres (`nil`: none).
    ///   - generation: changes whenever the estimate starts over.
    ///   - density: the radio's range error density.
    ///   - sigma2: the Gaussian variance of a range, `σ²`, m².
    ///   - residualIntensity: `q` under a reference, m²/s³.
    ///   - freeIntensity: `q` without one, m²/s³.
    ///   - minimumInterval: ranges sooner than this after the last fused one are not fused, seconds.
    ///   - filter: the noise learning and the robust weights.
    ///   - floor: the least range variance to use, m², whatever the noise learned from the
    ///     innovations (the ranges' own scatter); 0 (or not finite): none.
    public mutating func update(at t: Double, range: Double?, isStaleRepeat: Bool = false, reference: Double?, generation: Int,
                                density: RangeErrorDensity, variance sigma2: Double,
                                residualIntensity: Double, freeIntensity: Double, minimumInterval: Double,
                                filter: FusionOptions.DistanceFilter = .init(), varianceFloor floor: Double = 0) -> Double? {
        varianceFloor = floor.isFinite ? max(floor, 0) : 0
        defer {
            lastReference = reference
            lastGeneration = generation
        }
        if !isStarted || !(t >= lastTime) {
            // The first range starts the filter (a clock that ran back restarts it).
            guard let z = range else { isStarted = false; return reference }
            start(at: t, range: z, variance: sigma2, filter: filter)
            return published(reference, at: t, filter: filter)
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
        if let z = range, !isStaleRepeat, t - lastRangeTime >= minimumInterval {
            var side: Int8 = 0
            if let rho = reference {
                let scale = max(learnedVariance, 1e-12).squareRoot()
                side = z - rho > scale ? 1 : (z - rho < -scale ? -1 : 0)
            }
            // Ranges that agree to leave the reference (this one and another of the last two
            // beyond √R on one side) show motion, not noise: they teach the noise nothing.
            let leaving = side != 0 && (side == newestSide || side == middleSide)
            let predicted = distance
            let weight = correct(z, density: density, priorVariance: sigma2, filter: filter, learnsNoise: !leaving)
            restartIfAstray(range: z, predicted: predicted, weight: weight, variance: sigma2)
            oldestSide = middleSide
            middleSide = newestSide
            newestSide = side
            oldestRange = middleRange
            middleRange = newestRange
            newestRange = z
            lastRangeTime = t
        }
        if !(distance + rate + pdd + pdu + puu + noiseRate).isFinite {
            // Never a NaN in the outputs (options that make the filter diverge): start again
            // from the next range.
            isStarted = false
            return reference ?? range
        }
        if range == nil && reference == nil { return nil }
        return published(reference, at: t, filter: filter)
    }

    /// Notes a range `z` (metres) fused with first-pass weight `π w_t` (`weight`) against the
    /// predicted distance `d⁻` (`predicted`, metres), and starts the filter again from the
    /// last ``rejectedRunLength`` `k` ranges when it has gone astray: all `k` all but rejected
    /// (`π w_t` below ``rejectedWeight``) on one side of their predictions, their offsets
    /// `oⱼ = zⱼ − d⁻ⱼ` of mean `ō` and sample standard deviation `s` with `|ō| √k / s ≥`
    /// ``rejectedRunStudentT`` (Student's t with `k − 1` degrees of freedom: the ranges agree
    /// with one another on a distance the prediction misses). A rate the filter took from a
    /// few misreadings otherwise carries its distance away from every range that follows,
    /// each rejected in turn as an outlier of the prediction (a robust filter's divergence);
    /// gross outliers in a row on one side that also agree with one another are far less
    /// likely than that, and a radio noisier than learned scatters its ranges too widely to
    /// pass. Restart: `d = d⁻ + ō`, `u = 0`, `P_dd` the larger of the learned variance and
    /// `σ₀²` (`variance`, m²), `P_du = 0`, `P_uu` a walking pace; the learned noise and
    /// correlation are kept.
    private mutating func restartIfAstray(range z: Double, predicted: Double, weight: Double, variance sigma2: Double) {
        let onTheRunsSide = rejectedRun > 0 && (newestRejectedOffset > 0) == (z > predicted)
        rejectedRun = weight < Self.rejectedWeight ? (onTheRunsSide ? rejectedRun + 1 : 1) : 0
        oldestRejectedOffset = middleRejectedOffset
        middleRejectedOffset = newestRejectedOffset
        newestRejectedOffset = z - predicted
        guard rejectedRun >= Self.rejectedRunLength else { return }
        let a = newestRejectedOffset, b = middleRejectedOffset, c = oldestRejectedOffset
        let mean = (a + b + c) / 3
        let spread = (((a - mean) * (a - mean) + (b - mean) * (b - mean) + (c - mean) * (c - mean)) / 2).squareRoot()
        guard abs(mean) * Double(Self.rejectedRunLength).squareRoot() >= Self.rejectedRunStudentT * spread else { return }
        distance = predicted + mean
        rate = 0
        pdd = max(learnedVariance, sigma2)
        pdu = 0
        puu = Self.initialRateVariance
        rejectedRun = 0
    }

    /// `d = z`, `P_dd = σ₀²`, `u = 0`, `P_uu` a walking pace; the noise posterior at its prior.
    private mutating func start(at t: Double, range z: Double, variance sigma2: Double, filter: FusionOptions.DistanceFilter) {
        noiseShape = max(filter.noisePriorRanges / 2, 0.25)
        let n = filter.degreesOfFreedom
        tailFactor = n > 2 ? n / (n - 2) : 1
        noiseRate = noiseShape * sigma2 / tailFactor
        correlationProduct = 0
        correlationPower = 0
        lastNormalisedInnovation = nil
        newestSide = 0
        middleSide = 0
        oldestSide = 0
        newestRange = z
        middleRange = .infinity
        oldestRange = .infinity
        rejectedRun = 0
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

    /// The weighted update, then the noise and the correlation (see the type's comment): the
    /// variational-Bayes fixed point, iterated ``noiseIterations`` times — the noise from the
    /// update's residual, the update again with that noise — as one pass from a noise too small
    /// leaves the residual small too, and a noisier radio than configured is learned too slowly.
    /// Returns the first pass's weight `π w_t` (0 when it is not finite).
    @inline(__always)
    private mutating func correct(_ z: Double, density: RangeErrorDensity, priorVariance sigma2: Double,
                                  filter: FusionOptions.DistanceFilter, learnsNoise: Bool) -> Double {
        let lower = filter.noiseScaleRange.lowerBound, upper = max(filter.noiseScaleRange.upperBound, lower)
        let priorScale2 = sigma2 / tailFactor
        let phi = min(max(errorCorrelation, 0), min(max(filter.maximumErrorCorrelation, 0), 0.95))
        let n = max(filter.degreesOfFreedom, 0.5)
        let lambda = min(max(filter.noiseForgetting, 0), 1)
        let alpha0 = max(filter.noisePriorRanges / 2, 0.25)
        // The noise posterior predicted by forgetting: `α⁻ = λα + (1 − λ)α₀`, `β⁻ = λβ + (1 − λ)α₀σ₀²`.
        let shape = lambda * noiseShape + (1 - lambda) * alpha0
        let ratePredicted = lambda * noiseRate + (1 - lambda) * alpha0 * priorScale2
        let nu = z - distance
        var learned = ratePredicted / shape
        var beta = ratePredicted
        var posterior: (d: Double, u: Double, pdd: Double, pdu: Double, puu: Double)?
        var firstS = 0.0, firstWeight = 0.0
        // The scale² in use is at least the floor's, `σ²_floor (n − 2)/n`.
        let floorScale2 = varianceFloor / tailFactor
        for iteration in 0..<(learnsNoise ? Self.noiseIterations : 1) {
            let scale2 = max(min(max(learned, lower * lower * priorScale2), upper * upper * priorScale2), floorScale2)
            let r = scale2 * (1 + phi) / (1 - phi)
            let s = pdd + r
            if iteration == 0 { firstS = s }
            let inlier = density.inlier(nu, variance: s)
            let lineOfSight = inlier / (inlier + density.notInlier(nu, variance: s))
            let weight = lineOfSight * (n + 1) / (n + nu * nu / s)
            if iteration == 0 { firstWeight = weight.isFinite ? weight : 0 }
            guard weight >= 1e-3, weight.isFinite else { break }
            let denominator = pdd + r / weight
            let kd = pdd / denominator, ku = pdu / denominator
            let d = distance + kd * nu
            let newPdd = pdd - kd * pdd
            posterior = (d, rate + ku * nu, newPdd, pdu - kd * pdu, puu - ku * pdu)
            // `β = β⁻ + ½ w (ν⁺² + P⁺_dd)`, with the post-fit residual `ν⁺ = z − d⁺`.
            let residual = z - d
            beta = ratePredicted + 0.5 * weight * (residual * residual + newPdd)
            learned = beta / (shape + 0.5)
        }
        // The correlation, from the first pass's normalised innovation.
        let e = min(max(nu / firstS.squareRoot(), -3), 3)
        if e.isFinite {
            if let previous = lastNormalisedInnovation {
                correlationProduct = lambda * correlationProduct + (1 - lambda) * e * previous
                correlationPower = lambda * correlationPower + (1 - lambda) * e * e
            }
            lastNormalisedInnovation = e
        }
        guard let posterior else { return firstWeight }
        (distance, rate, pdd, pdu, puu) = posterior
        if learnsNoise {
            noiseShape = shape + 0.5
            noiseRate = beta
        }
        return firstWeight
    }

    /// Passes of the variational-Bayes update per range.
    static let noiseIterations = 3

    /// `ρ + g (d̃ − ρ)`, `g = clamp((|d̃ − ρ|/√P_dd − 1)/1.5, 0, 1)`, once the ranges agree to
    /// leave `ρ`, with `d̃ = d − u · max(0, t − t_r − H)` (the rate held to its horizon), and
    /// on the side of `d̃ − ρ` at most the furthest of `ρ` and the last three fused ranges and
    /// at most one learned σ past the second furthest of them (``leavingBound(_:_:_:_:sigma:up:)``);
    /// `d` without a reference.
    @inline(__always)
    private func published(_ reference: Double?, at t: Double, filter: FusionOptions.DistanceFilter) -> Double {
        guard let rho = reference else { return distance }
        // `u` has stood since the last fused range (the prediction leaves it as it is): what it
        // added beyond the horizon is taken back out.
        // (A negative or NaN horizon is none.)
        let horizon = filter.rateHorizonSeconds >= 0 ? filter.rateHorizonSeconds : 0
        let beyond = max(t - lastRangeTime - horizon, 0)
        let shown = distance - rate * beyond
        let difference = shown - rho
        guard rangesAgreeToLeave(difference) else { return rho }
        let g = min(max((abs(difference) / max(pdd, 1e-12).squareRoot() - 1) / 1.5, 0), 1)
        // Never beyond every range it has (nor the reference), nor more than one learned σ beyond
        // what two of them support: on the side it leaves to, at most the furthest of `ρ` and the
        // last three fused ranges, and at most σ past the second furthest of those ranges.
        let up = difference > 0
        let bound = Self.leavingBound(rho, newestRange, middleRange, oldestRange, sigma: max(learnedVariance, 1e-12).squareRoot(), up: up)
        let value = up ? min(rho + g * difference, bound) : max(rho + g * difference, bound)
        return value.isFinite ? value : rho
    }

    /// How far, on the side `up` (larger) or down, the published distance may go: the furthest
    /// of `rho` and the ranges `a`, `b`, `c` (metres; one not yet fused is not finite and left
    /// out), but with two or more ranges no further than `sigma` (metres) past the second
    /// furthest of them — and never short of `rho`. One range alone, however far, does not set
    /// how far the distance goes.
    @inline(__always)
    static func leavingBound(_ rho: Double, _ a: Double, _ b: Double, _ c: Double, sigma: Double, up: Bool) -> Double {
        // The ranges in the side's orientation (`+r` up, `−r` down): the largest two.
        var first = -Double.infinity, second = -Double.infinity
        rank(a, up: up, first: &first, second: &second)
        rank(b, up: up, first: &first, second: &second)
        rank(c, up: up, first: &first, second: &second)
        let oriented = up ? rho : -rho
        var bound = max(oriented, first)
        if second.isFinite { bound = min(bound, max(oriented, second + sigma)) }
        return up ? bound : -bound
    }

    /// Ranks a finite range `r` (metres), in the side's orientation, among the largest two so far.
    @inline(__always)
    private static func rank(_ r: Double, up: Bool, first: inout Double, second: inout Double) {
        guard r.isFinite else { return }
        let x = up ? r : -r
        if x > first {
            second = first
            first = x
        } else if x > second {
            second = x
        }
    }
}
