import Foundation

// Acquisition: the bank of hypotheses re-solved from the window, and its collapse into one.
extension ObjectTracker {
    /// The acquisition step: random-walk prediction `P ← P + (q Δt + k_d Δs) I`, the entry
    /// stored in the window, every hypothesis's batch brought up to date (`BatchRefinement`),
    /// and the range checked against the hypotheses (accepted if one holding ≥ 1 % of the
    /// weight explains it within its gate).
    /// A missing direction re-weights the hypotheses through the batch's evidence.
    mutating func acquire(_ entry: WindowEntry, dt: Double, ds: Double, pathLength: Double,
                                  options o: FusionOptions) -> Bool {
        // The random walk absorbs VIO drift; an object that may move is followed by its batch's
        // velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`).
        let q = o.motion.accessoryRandomWalk * dt + o.motion.driftVariancePerMetre * ds
        mixture.predict(addedVariance: q)
        processVarianceSinceInitialisation += q
        if entry.hasRange || entry.direction != .none {
            var stored = entry
            stored.pathLengthMetres = pathLength - pathLengthAtInitialisation
            window.append(stored)
        }
        if acquiresByGrid {
            // The grid takes each range once; the window is kept for a re-solution (`retile`).
            if entry.hasRange {
                addToDirectionGrid(rangeMetres: entry.rangeMetres, antennaInWorld: entry.antennaInWorld, at: entry.timestamp, options: o)
            } else {
                writeBankFromGrid(options: o)
            }
            return entry.hasRange && bankExplains(entry.rangeMetres, from: entry.antennaInWorld, options: o)
        }
        updatesSinceRefinement += 1
        if updatesSinceRefinement >= o.acquisition.batchRefinementInterval {
            let added = acquisitionAddedVariance(pathLength: pathLength, options: o)
            if mayMove {
                // An object that may walk: its position now and a velocity, from the whole window
                // (`o` carries the range noise learned from it, `learnMovingRangeNoise`).
                let start = acquisitionStartTime, scale = movingInformationScale(options: o)
                let work = passScratch.withUnsafeMutableBufferPointer { scratch in
                    BatchRefinement.refineMoving(&mixture, window: window, now: entry.timestamp, start: start, options: o,
                                                 addedVariance: added, informationScale: scale, scratch: scratch)
                }
                addWindowWork(work)
                learnMovingRangeNoise(now: entry.timestamp, options: o)
            } else {
                addWindowWork(refineStillBatch(options: o, addedVariance: added))
            }
            updatesSinceRefinement = 0
        }
        return entry.hasRange && bankExplains(entry.rangeMetres, from: entry.antennaInWorld, options: o)
    }

    /// `BatchRefinement.refine` of the bank from the window, in the object's own storage: its
    /// pass scratch, and its range density's pieces fitted at the range variance of `o` (fitted
    /// again first when that changed: a noise level learned). Returns the refinement's work.
    mutating func refineStillBatch(options o: FusionOptions, addedVariance: Double) -> BatchRefinement.WindowWork {
        let density = o.rangeErrorDensity, variance = o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation
        densityPieces.prepare(density, variance: variance)
        return densityPieces.withView(for: density, variance: variance) { pieces in
            passScratch.withUnsafeMutableBufferPointer { scratch in
                BatchRefinement.refine(&mixture, window: window, options: o, addedVariance: addedVariance, scratch: scratch,
                                       densityPieces: pieces)
            }
        }
    }

    /// Adds a refinement's work to the object's counts (``ObjectStateSnapshot/windowPasses``,
    /// ``ObjectStateSnapshot/windowEntriesLinearised``).
    mutating func addWindowWork(_ work: BatchRefinement.WindowWork) {
        windowPasses += work.passes
        windowEntriesLinearised += work.entries
    }

    /// What every residual of the moving batch counts when its range errors last:
    /// `κ = (1 − ρ)/(1 + ρ)`, `ρ` the correlation of consecutive errors — with
    /// ``FusionOptions/Motion/rangeErrorCorrelationSeconds`` `τ` > 0, `ρ = e^{−Δt/τ}`, `Δt` the
    /// object's mean interval between fused ranges (`meanRangeInterval`, at least
    /// ``FusionOptions/Sensors/minimumFusionInterval``); with `τ` = 0 and
    /// ``FusionOptions/Motion/learnsRangeErrorCorrelation``, `ρ = φ̂` learned from the batch's
    /// residuals (`learnMovingRangeNoise(now:options:)`); 1 otherwise. (Inlined, as is
    /// ``bankExplains(_:from:options:longBy:)``: an outlined call from a mutating method copied
    /// the whole tracker.)
    @inline(__always)
    func movingInformationScale(options o: FusionOptions) -> Double {
        let tau = o.motion.rangeErrorCorrelationSeconds
        guard tau > 0 else {
            guard learnsRangeErrorCorrelation(o) else { return 1 }
            let phi = learnedRangeErrorCorrelation
            return (1 - phi) / (1 + phi)
        }
        let rho = exp(-max(fusedRangeInterval(o), 1e-3) / tau)
        return (1 - rho) / (1 + rho)
    }

    /// Whether the correlation of consecutive range errors is learned from the moving batch's
    /// residuals: no correlation time is set (``FusionOptions/Motion/rangeErrorCorrelationSeconds``
    /// 0) and ``FusionOptions/Motion/learnsRangeErrorCorrelation``.
    @inline(__always)
    func learnsRangeErrorCorrelation(_ o: FusionOptions) -> Bool {
        o.motion.rangeErrorCorrelationSeconds == 0 && o.motion.learnsRangeErrorCorrelation
    }

    /// `Δt`, seconds: the object's mean interval between fused ranges (`meanRangeInterval`), at
    /// least ``FusionOptions/Sensors/minimumFusionInterval`` and that interval before any.
    @inline(__always)
    func fusedRangeInterval(_ o: FusionOptions) -> Double {
        max(meanRangeInterval ?? o.sensors.minimumFusionInterval, o.sensors.minimumFusionInterval)
    }

    /// Learns the range noise of an object that may move: a radio noisier than
    /// ``FusionOptions/Sensors/rangeStandardDeviation`` `σ₀` (phone-to-phone UWB between
    /// walking people: σ 0.1–0.2 m, errors that last seconds) is trusted less — by its batch,
    /// its gates and its restart tests (`fuseAndPublish` hands them `2ˡ σ₀²`) —, or the
    /// batch's evidence would call a wrong hypothesis certain, its covariance claim several
    /// times too little, and its ranges, rejected, restart the acquisition again and again.
    ///
    /// Two variance ratios to `σ₀²`, the larger of which sets the level `l = round(log₂ ρ)`,
    /// 0 to 4 (×1 to ×16), when `log₂ ρ` lies at least 0.75 from the level in use:
    /// - the ranges' own scatter, `ρ_Δ` (`noteRangeScatter`), once 30 second differences hold
    ///   it: white noise, whatever the estimate, kept across acquisitions;
    /// - the batch's residuals, once one hypothesis holds half the weight (the residuals of a
    ///   bank nothing has resolved yet measure its tiles, not the radio): at its solution `(x, v)` at `now`, each
    ///   fresh range's `eₖ = rₖ − ‖x − (now − tₖ) v − aₖ‖` (thinned entries left out), clipped
    ///   at 3σ (`σ² = 2ˡ σ₀²` the variance in use), `ρ_e = mean(eₖ²)/σ₀²` once there are 20:
    ///   this one also sees errors that last.
    /// A new level drops the hypotheses' kept models (`MovingLinearisation`): each is solved
    /// again at the next update. `o`: the options in use (their σ is the learned one).
    ///
    /// The same residuals of the heaviest hypothesis, whatever its weight, clipped to `±3σ`,
    /// give the correlation of consecutive errors (``learnedRangeErrorCorrelation``, read by
    /// `movingInformationScale(options:)`): over the `n` pairs of consecutive fresh entries
    /// no more than `1.5 Δt` apart (`Δt` the mean interval between fused ranges),
    /// `ρ̂ = Σ eₖ eₖ₋₁ / Σ ½ (eₖ² + eₖ₋₁²)`, once `n ≥ 50`; `φ̂ = min(ρ̂, 0.98)` where
    /// `ρ̂ > 3/√n` (beyond what independent errors give by chance: `ρ̂`'s standard deviation is
    /// `1/√n` for them), else 0. The batch's own fit absorbs the slowest part of a lasting
    /// error, so `φ̂` reads below the radio's correlation: the discount it sets is the least
    /// the residuals prove.
    mutating func learnMovingRangeNoise(now: Double, options o: FusionOptions) {
        let scale = rangeVarianceScale
        let s0 = o.sensors.rangeStandardDeviation / scale.squareRoot()
        guard s0 > 0 else { return }
        var ratio = rangeScatterCount >= 30 ? rangeScatterVariance / (s0 * s0) : 0
        // The residuals are read for the level once one hypothesis holds half the weight, and
        // for the correlation while it is learned; otherwise the window is not walked.
        if let heaviest = mixture.heaviestIndex, case let topLogWeight = mixture.hypotheses[heaviest].logWeight,
           learnsRangeErrorCorrelation(o) || topLogWeight > log(0.5) {
            let topMean = mixture.hypotheses[heaviest].meanInWorld, topVelocity = mixture.hypotheses[heaviest].velocityInWorld
            let clip = 3 * s0 * scale.squareRoot()
            let pairGap = 1.5 * fusedRangeInterval(o)
            var sum = 0.0, count = 0, lagged = 0.0, paired = 0.0, pairs = 0
            var previous: (t: Double, e: Double)?
            for e in window.entries where e.hasRange && e.multiplicity == 1 {
                let p = topMean - (now - e.timestamp) * topVelocity
                let residual = min(max(e.rangeMetres - (p - e.antennaInWorld).length, -clip), clip)
                sum += residual * residual
                count += 1
                if let q = previous, e.timestamp - q.t <= pairGap {
                    lagged += residual * q.e
                    paired += 0.5 * (residual * residual + q.e * q.e)
                    pairs += 1
                }
                previous = (e.timestamp, residual)
            }
            if topLogWeight > log(0.5), count >= 20 { ratio = max(ratio, sum / Double(count) / (s0 * s0)) }
            if pairs >= 50, paired > 0 {
                let rho = lagged / paired
                learnedRangeErrorCorrelation = rho > 3 / Double(pairs).squareRoot() ? min(rho, 0.98) : 0
            }
        }
        guard ratio > 0 else { return }
        let exponent = log2(ratio)
        guard abs(exponent - Double(rangeNoiseLevel)) >= 0.75 else { return }
        let level = max(0, min(4, Int(exponent.rounded())))
        guard level != rangeNoiseLevel else { return }
        rangeNoiseLevel = level
        mixture.transformEach { $0.moving = MovingLinearisation() }
    }

    /// The ranges' own scatter (`ρ_Δ` of `learnMovingRangeNoise`): the second difference `d`
    /// of the last three fresh ranges (``secondDifference(_:at:)``); `σ̂²` the mean of
    /// `min(d², 9 · 6 σ²)/6` over the first 50 (`σ²` the variance in use: outliers clipped),
    /// then `σ̂² ← 0.98 σ̂² + 0.02 min(d², 54 σ²)/6`.
    mutating func noteRangeScatter(_ r: Double, at t: Double, variance: Double) {
        guard let d = secondDifference(r, at: t) else { return }
        let sample = min(d * d, 54 * variance) / 6
        // The mean of the first 50, then an exponential average over about the last 50.
        let gain = max(1 / Double(rangeScatterCount + 1), 0.02)
        rangeScatterVariance += gain * (sample - rangeScatterVariance)
        rangeScatterCount += 1
    }

    /// Over three consecutive fresh ranges at even intervals (within a quarter of each other,
    /// under a second), the second difference `d = r₃ − 2 r₂ + r₁` (metres), white noise of
    /// variance `6 σ²` plus the curvature of the true range over the intervals (millimetres at
    /// 10 Hz and walking pace); `nil` until three such ranges have come. Notes `r` (metres,
    /// at `t`, seconds) as the newest.
    mutating func secondDifference(_ r: Double, at t: Double) -> Double? {
        defer { rangeScatterHistory = (rangeScatterHistory.1, (t, r)) }
        guard let first = rangeScatterHistory.0, let second = rangeScatterHistory.1 else { return nil }
        let h1 = second.t - first.t, h2 = t - second.t
        guard h1 > 0, h2 > 0, max(h1, h2) < 1, abs(h2 - h1) <= 0.25 * max(h1, h2) else { return nil }
        return r - 2 * second.r + first.r
    }

    /// A still Channel Sounding object's fresh range `r` (metres, at `t`): its scatter noted
    /// — `ℓ`, the mean of `ln(max(d², 10⁻⁸ m²)/6)` over the second differences `d`
    /// (``secondDifference(_:at:)``) of the first 20, then `ℓ ← 0.95 ℓ + 0.05 ln(…)` (a radio's
    /// noise changes with its signal as the user walks) — and its noise learned from it
    /// (`learnChannelSoundingRangeNoise(at:antennaInWorld:pose:context:)`). Unclipped,
    /// for a radio whose noise may be ten times the configured σ, and robust all the same: a
    /// range metres off moves `ℓ` by a share of its logarithm, not by its square. Out of line:
    /// a UWB update never pays for it.
    @inline(never)
    mutating func noteChannelSoundingRange(_ r: Double, at t: Double, antennaInWorld: Vector3, pose: DevicePose, context: Context) {
        guard let d = secondDifference(r, at: t) else { return }
        rangeLogScatter += max(1 / Double(rangeScatterCount + 1), 0.05) * (log(max(d * d, 1e-8) / 6) - rangeLogScatter)
        rangeScatterCount += 1
        learnChannelSoundingRangeNoise(at: t, antennaInWorld: antennaInWorld, pose: pose, context: context)
    }

    /// The least range variance, m², that a still Channel Sounding object's ranges' own scatter
    /// allows: the published distance's noise floor (``DistanceSmoother``), which does not
    /// depend on any filter's prediction. From `ℓ`, the mean of `ln(d²/6)` over the ranges'
    /// second differences `d` (`noteChannelSoundingRange(_:at:antennaInWorld:pose:context:)`),
    /// `σ̂² = exp(ℓ + γ + ln 2) · 6/(6 − 8φ + 2φ²)` (`φ` the radio's lag-one error correlation,
    /// ``FusionOptions/ChannelSounding/errorCorrelation``), taken one standard deviation of its
    /// own logarithm low: `σ̂² · 2^{−s}`, `s = π/(√2 ln 2 √min(n, 39))` over `n` differences — the
    /// least noise the scatter allows, as `learnChannelSoundingRangeNoise` reads it. 0 before
    /// five differences (and for any other object: no scatter is kept for it this way).
    var rangeScatterVarianceFloor: Double {
        guard ranging == .bluetoothChannelSounding, !mayMove, rangeScatterCount >= 5 else { return 0 }
        // `log₂(6/(6 − 8φ + 2φ²))` less `s`, in nats.
        return exp(rangeScatterLogVariance + (optionsBox.correlatedScatterCorrection - rangeLogScatterSpread) * 0.6931471805599453)
    }

    /// `ln σ̂² = ℓ + γ + ln 2`: the range variance, m², the second differences give read as
    /// independent errors (`γ + ln 2` is minus the mean of `ln z²` for a standard normal `z`).
    var rangeScatterLogVariance: Double { rangeLogScatter + 0.5772156649015329 + 0.6931471805599453 }

    /// `s = π/(√2 ln 2 √min(n, 39))`: the standard deviation, in `log₂`, of the range variance
    /// read from `ℓ` over `n` second differences (one `ln z²` has standard deviation `π/√2`;
    /// 39 is the exponential average's effective count, `(2 − g)/g` for its gain `g = 0.05`).
    var rangeLogScatterSpread: Double { 3.204862591065631 / Double(min(rangeScatterCount, 39)).squareRoot() }

    /// Learns the range noise of a Channel Sounding object from its ranges' scatter: a radio
    /// far noisier than ``FusionOptions/ChannelSounding/rangeStandardDeviation`` `σ₀` (a
    /// round-trip-time estimator's σ is 1.6–4.6 m) is trusted as much as it deserves — by its
    /// batch, its gates, its restart tests and the published distance —, or its estimate,
    /// weighing each range as if it were ten times better, chases one range after another;
    /// and a radio far quieter (an inverse-FFT estimator's core is 0.10–0.27 m) is trusted
    /// more, or its short misreadings, within `σ₀` of the truth, are averaged in as noise and
    /// pull the distance short.
    ///
    /// `ℓ` (``noteChannelSoundingRange(_:at:antennaInWorld:pose:context:)``) is the mean of `ln(d²/6)`, and for Gaussian `d` of variance
    /// `6σ²`, `E[ln(d²/6)] = ln σ² − (γ + ln 2)`: `σ̂² = exp(ℓ + γ + ln 2)`, `ρ = σ̂²/σ₀²`. One
    /// `ln z²` has standard deviation `π/√2`, so over `n` differences `log₂ ρ` has
    /// `s = π/(√2 n^{1/2} ln 2)` (1.0 at 10; 0.52 from 39 on, the exponential average's
    /// effective count, `(2 − g)/g` for the gain `g = 0.05`).
    /// The level is `l = round(log₂ ρ)`, 2 to 8 (×4 to ×256), once `log₂ ρ − 2s ≥ 1.5` and
    /// `log₂ ρ` lies at least `0.75 + s` from the level in use: a radio within a factor of
    /// two of `σ₀` is weighed as configured, since the multipath bursts the configured figures
    /// account for and the sweeps' curvature move `ρ` that much, and a radio eight times
    /// noisier is caught within ten differences (five seconds at 2 Hz). A quieter radio's level
    /// is `l = round(log₂ ρ_φ)`, −1 to −3 (×½ to ×⅛, σ down to 0.35 `σ₀`), once 20 differences
    /// have come and `log₂ ρ_φ + s ≤ −1` (below): the most noise the differences allow, with the
    /// correlation's correction and a margin of `s`, is under half of `σ₀²`. A radio nearer
    /// `σ₀` keeps it, since its multipath and outliers are what `σ₀` covers.
    ///
    /// Correlated errors shrink the second differences: with a lag-one correlation `φ`
    /// (``FusionOptions/ChannelSounding/errorCorrelation``), `E[d²] = (6 − 8φ + 2φ²) σ²`, so
    /// the level is read from `log₂ ρ_φ = log₂ ρ + log₂(6/(6 − 8φ + 2φ²))` (+0.42 at
    /// `φ = 0.2`): `l = round(log₂ ρ_φ)`, changed when `log₂ ρ_φ` lies at least `0.75 + s`
    /// from the level in use. The gate `log₂ ρ − 2s ≥ 1.5` stays on the independent reading,
    /// the least noise the differences allow: a radio counts as noisier than `σ₀` only if it
    /// would be with independent errors, and as quieter only if it would be with correlated ones.
    ///
    /// A new level while the object is acquired tiles the bank afresh on the sphere of its
    /// fused distance around the antenna `a` (world frame, metres) at `t` (seconds) and re-solves every tile from
    /// the window with the learned noise: the old tiles were weighed and pruned with ranges
    /// trusted several times too much, and a still phone's bank, which no range can resolve
    /// across the line of sight, had lost the bearings that the noise had happened to disfavour.
    mutating func learnChannelSoundingRangeNoise(at t: Double, antennaInWorld a: Vector3, pose: DevicePose, context: Context) {
        let s0 = optionsBox.options.sensors.rangeStandardDeviation
        guard rangeScatterCount >= 5, s0 > 0 else { return }
        // `log₂ ρ = (ℓ + γ + ln 2 − ln σ₀²)/ln 2`.
        let independent = (rangeScatterLogVariance - 2 * log(s0)) * 1.4426950408889634
        // `log₂ ρ_φ`: the second differences of errors correlated `φ` have variance `(6 − 8φ + 2φ²) σ²`.
        let exponent = independent + optionsBox.correlatedScatterCorrection
        let spread = rangeLogScatterSpread
        guard abs(exponent - Double(rangeNoiseLevel)) >= 0.75 + spread else { return }
        let level = independent - 2 * spread >= 1.5 ? max(2, min(8, Int(exponent.rounded())))
            : rangeScatterCount >= 20 && exponent + spread <= -1 ? max(-3, min(-1, Int(exponent.rounded()))) : 0
        guard level != rangeNoiseLevel else { return }
        rangeNoiseLevel = level
        guard phase == .acquiring, !mixture.isEmpty else { return }
        retile(radiusMetres: fusedDistance(from: a), antennaInWorld: a, at: t, pose: pose, pathLength: context.pathLength,
               options: withLearnedRangeNoise(optionsBox.options))
    }

    /// Whether a hypothesis holding at least 1 % of the weight explains a range `r` measured
    /// from `a` within its gate, or, with `excess` (metres) > 0, as a range long by a multipath
    /// excess of at most `excess` (``RangeErrorDensity``'s one-sided term): `r − excess` within
    /// the gate, or `r` between the hypothesis's distance and that distance plus `excess`.
    @inline(__always)
    func bankExplains(_ r: Double, from a: Vector3, options o: FusionOptions, longBy excess: Double = 0) -> Bool {
        let model = o.rangeModel(from: a, measured: r)
        for h in mixture.hypotheses where h.logWeight > log(0.01) {
            if model.normalizedInnovationSquared(r, at: h.meanInWorld, covariance: h.covariance) <= o.gating.rangeGate {
                return true
            }
            guard excess > 0 else { continue }
            let long = r - (h.meanInWorld - a).length
            if long > 0 && long <= excess { return true }
            if long > excess,
               model.normalizedInnovationSquared(r - excess, at: h.meanInWorld, covariance: h.covariance) <= o.gating.rangeGate {
                return true
            }
        }
        return false
    }

    /// Settles an acquisition: once both axes are resolved and 99 % of the weight lies in
    /// one cluster (within 3σ of the heaviest hypothesis), the cluster is collapsed into one
    /// Gaussian and tracked. No merging while acquiring: each hypothesis keeps its own prior,
    /// so that mirror images stay exact mirrors (a merge on one side only would tilt the
    /// evidence).
    ///
    /// An object that may move and that no direction reaches (a peer ranged from a watch)
    /// is never handed to the tracking filter: its batch, position and velocity over the
    /// window (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`), is
    /// the estimator. Ranges alone observe a walker's velocity only through the observer's
    /// manoeuvres over tens of seconds, and its velocity is still uncertain by a walking pace
    /// when the position converges; an EKF started there linearises each range once and
    /// diverges within seconds, the classic failure of range-only tracking filters, while the
    /// batch re-linearises the window at every update.
    mutating func settleIfResolved(options o: FusionOptions, directionless: Bool) {
        mixture.pruneAndMerge(minimumWeight: o.acquisition.acquisitionPruneWeight, mergeDistanceSquared: 0)
        if mayMove && directionless { return }
        let resolved = coaching.previousResolution
        let biasVariance = o.sensors.rangeBiasStandardDeviation * o.sensors.rangeBiasStandardDeviation
        if resolved.horizontal && resolved.vertical,
           let cluster = mixture.dominantCluster(mahalanobisSquared: 9, consideredBiasVariance: biasVariance), cluster.weight > 0.99 {
            let c = cluster.merged
            // An object that may move hands its batch's velocity to the motion model.
            let kinematics = mayMove
                ? KinematicGaussian(positionInWorld: c.meanInWorld, velocityInWorld: c.velocityInWorld, positionCovariance: c.covariance,
                                    crossCovariance: c.positionVelocityCovariance, velocityCovariance: c.velocityCovariance)
                : nil
            // A considered range bias (``FusionOptions/Sensors/rangeBiasStandardDeviation``) stays
            // beside the tracking filter, not in it: `σ_β² s sᵀ` is no uncertainty the next
            // ranges reduce, and in the IMM's covariance it would let a tag carried away be
            // followed along its ranges, as if they told where a still tag lies, instead of
            // being caught by its rejected ranges. The outputs read the IMM's covariance plus it.
            let considered = biasVariance * Matrix3.outer(c.rangeBiasSensitivity, c.rangeBiasSensitivity)
            let tracked = c.remainingCovariance(less: considered)
            startTracking(meanInWorld: c.meanInWorld, covariance: tracked ?? c.covariance, options: o, kinematics: kinematics)
            considersRangeBias = tracked != nil && o.sensors.rangeBiasStandardDeviation > 0
            consideredCovariance = considersRangeBias ? considered : .zero
            mixture.reset(meanInWorld: c.meanInWorld, covariance: c.covariance)
        }
    }

    /// The variance, m², the batch adds to each refined hypothesis for the VIO drift since the
    /// window began: a third of the random walk predicted since (its average over the window)
    /// plus, for a fixed point, the systematic drift — considered through the acquisition's
    /// geometry (``FusionOptions/Acquisition/considersDriftGeometry``, the default: the batch adds it) or,
    /// without, as a translation by half the drift over the path travelled since, `f L / 2`
    /// in a direction nobody knows: `(f L / 2)² / 3` per axis (``FusionOptions/Acquisition/vioDriftFraction``).
    ///
    /// An object that may move is fitted with a velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`),
    /// and a drift that grows with the path — at a steady rate while the user walks steadily —
    /// moves the object's apparent position at a steady velocity: the fit's velocity absorbs
    /// it and its position *now* is where the app sees the object, so only the random walk is
    /// added. (`(f L/2)²` on top would count the drift twice: a walking peer's covariance would
    /// be cautious, and its convergence later.)
    @inline(__always)
    func acquisitionAddedVariance(pathLength: Double, options o: FusionOptions) -> Double {
        guard !mayMove else { return processVarianceSinceInitialisation / 3 }
        // Considered through the geometry instead (``FusionOptions/Acquisition/considersDriftGeometry``).
        if o.acquisition.considersDriftGeometry { return processVarianceSinceInitialisation / 3 }
        return processVarianceSinceInitialisation / 3 + o.driftTranslationVariance(pathMetres: pathLength - pathLengthAtInitialisation)
    }

    /// Forgets the estimate of an object no direction reaches that the app says moves,
    /// keeping where it was (its moments) and since when: the prior of its acquisition once it
    /// stops (``FusionOptions/Carry/speed``). (Out of line: the steady-state update never
    /// comes here.)
    @inline(never)
    mutating func dropWhileCarried(at t: Double) {
        let m = mixture.moments
        resetEstimate()
        hasConverged = false
        if m.meanInWorld.isFinite && m.covariance.isFinite {
            carryOrigin = CarryOrigin(meanInWorld: m.meanInWorld, covariance: m.covariance, since: t)
        }
    }

    /// Weights freshly tiled hypotheses by where the object was when the app said it started
    /// to move (``carryOrigin``; ``FusionOptions/Carry/speed``): tile `i` by
    /// `N(μᵢ; μ₀, Pᵢ + P₀ + (v T)²/3 I)`, `T` the seconds since, the chance that a point
    /// carried at up to `v` from `N(μ₀, P₀)` for `T` seconds lies in the tile.
    mutating func weighByCarryOrigin(at t: Double, options o: FusionOptions) {
        guard let origin = carryOrigin, o.carry.speed > 0 else { return }
        let spread = origin.covariance + Matrix3.scaledIdentity(o.carryDisplacementVariance(seconds: t - origin.since))
        mixture.reweighPriors { h in logGaussianDensity(h.meanInWorld, mean: origin.meanInWorld, covariance: spread + h.covariance) }
    }

    /// Tiles the first range's sphere with hypotheses and starts a new window.
    mutating func initialise(rangeMetres r: Double, at t: Double, pose: DevicePose,
                                     antennaInWorld a: Vector3, context: Context) {
        let options = optionsBox.options, pathLength = context.pathLength
        window.removeAll()   // the first range is in the tiles' priors
        processVarianceSinceInitialisation = 0
        if acquiresByGrid {
            startDirectionGrid(radiusMetres: r, antennaInWorld: a, at: t, replaysWindow: false, options: options)
        } else {
            mixture.initialize(rangeMetres: r, antennaInWorld: a, forwardInWorld: pose.forwardInWorld, options: options)
            weighByCarryOrigin(at: t, options: options)
        }
        estimateGeneration &+= 1
        phase = .acquiring
        acquisitionStartTime = t
        pathLengthAtInitialisation = pathLength
        updatesSinceRefinement = 0
        movement.add(a)
        lastPredictionTime = t
        pathLengthAtLastPrediction = pathLength
        restarts.consecutiveRejections = 0
    }
}
