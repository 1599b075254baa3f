import Foundation

/// Batch re-linearisation of the hypotheses (a windowed, iterated MAP smoother).
///
/// An EKF linearises each measurement once, at the estimate of the moment. Right after
/// the sphere is tiled a hypothesis can sit far from where its measurements point, and
/// the information it accumulates along wrong directions makes it overconfident (the
/// classic failure of range-only EKFs). While an object is being acquired, each
/// hypothesis `i` is therefore recomputed from its tile prior `N(μ₀ᵢ, P₀ᵢ)` and every
/// stored update (`MeasurementWindow`):
///
/// 1. The robust negative log posterior
///    `f(x) = ½ (x − μ₀)ᵀ P₀⁻¹ (x − μ₀) − Σ_k c_k log((1 − ε) N(e_k(x); 0, R_k) + ε/span)`
///    (`c_k` the entry's multiplicity, `e_k` range, azimuth and elevation residuals; a range's
///    term is ``RangeErrorDensity``'s `log p(e)`, which adds the one-sided multipath part for
///    Channel Sounding) is
///    minimised by Gauss–Newton from the prior mean with iteratively reweighted normal
///    equations: each residual gets the inlier probability
///    `π_k = (1 − ε) N(e_k) / ((1 − ε) N(e_k) + ε/span)` (for a range, its line-of-sight
///    share of `p(e_k)`; the other parts are treated as locally flat, as EM does),
///    `A = P₀⁻¹ + Σ c_k π_k H_kᵀ R_k⁻¹ H_k`, `b = P₀⁻¹(μ₀ − x) + Σ c_k π_k H_kᵀ R_k⁻¹ e_k`,
///    `δ = A⁻¹ b`, with a backtracking line search (`δ` halved until `f` decreases; steps
///    capped at 1 m). Starting from the prior mean, not the last solution, keeps each
///    hypothesis in the basin its own prior selects.
/// 2. Laplace approximation at the minimum `x*`: `μᵢ = x*`, `Pᵢ = A(x*)⁻¹` — every
///    measurement linearised at the final estimate.
/// 3. Evidence: `log wᵢ = log w₀ᵢ − f(x*) − ½ log det(2π P₀ᵢ) + ½ log det(2π Pᵢ)
///    + Σ_k c_k log N-normalisers`, plus `c_k log ρ(θ_k)` for each entry whose direction
///    was missing, `θ_k` the off-axis angle of `x*` then (see
///    ``FusionOptions/missingDirectionLikelihood(offAxisAngle:)``).
/// 4. A considered range bias (``FusionOptions/Sensors/rangeBiasStandardDeviation`` `σ_β`): ranges
///    all longer by `β` — the first one too, whose sphere the tile prior sits on, so that its
///    mean moves by `β u₀` (`PositionHypothesis.priorRangeDirection`) — move the minimum by
///    `s β`, `s = A⁻¹ (Σ_k c_k π_k g_k / v_k + P₀⁻¹ u₀)`: differentiating the stationarity
///    condition `P₀⁻¹ (x − μ₀) = Σ_k c_k π_k g_k (z_k − ‖x − a_k‖ − β) / v_k` with respect to
///    `β`. Then `Pᵢ ← A⁻¹ + σ_β² s sᵀ`. The mean and the evidence are unchanged; `s` is kept on
///    the hypothesis (`PositionHypothesis.rangeBiasSensitivity`).
@_spi(Internals) public enum BatchRefinement {
    struct Constants {
        /// The robust densities of a range residual and of an angle residual (the latter
        /// symmetric, `(1 − ε) N + ε/span`: ``RangeErrorDensity`` without its multipath term).
        let rangeDensity, angleDensity: RangeErrorDensity
        /// The range density at the nominal variance `σ_r²`, and the angle density at the
        /// azimuth's and the elevation's: every residual of a window pass is weighed at one of them.
        let range, azimuth, elevation: RangeErrorDensity.AtVariance
        /// The moving batch's density of gross outliers short of the prediction, m⁻¹
        /// (``FusionOptions/Gating/movingShortOutlierFraction`` of `ε/span`).
        let shortRangeOutlierDensity: Double
        let options: FusionOptions
        /// `1/T` of the moving batch's fading memory, 1/s (``FusionOptions/Motion/movingBatchMemory``).
        let inverseMemory: Double
        /// The multipath chain (``FusionOptions/Gating/rangeMultipathBurstSeconds``): `η` and the rate
        /// `λ + μ = 1/(τ (1 − η))` at which it forgets its state, 1/s; 0 for independent ranges.
        let multipathProbability: Double
        let burstForgettingRate: Double
        /// `ρ_j = exp(−(λ + μ)(t_j − t_prev))` for each window entry (the previous range's
        /// time), filled once per refinement: they do not depend on the position.
        var persistence: UnsafeBufferPointer<Double>? = nil
        /// `σ_β²`, m² (``FusionOptions/Sensors/rangeBiasStandardDeviation``).
        let biasVariance: Double
        /// The weight from which a hypothesis's burst chain is smoothed again at every update:
        /// 1 %, or the weight of the ``smoothedEveryUpdate``-th heaviest hypothesis if that is
        /// more (set by each refinement).
        var everyUpdateSmoothingWeight = 0.01
        /// Where each linearisation of the whole window is counted (``refine(_:window:options:addedVariance:)``
        /// returns the count): set by each refinement; `nil` elsewhere.
        var windowPasses: UnsafeMutablePointer<Int>? = nil
        /// Where the entries those linearisations read are counted (a pass over `n` entries
        /// adds `n`): set by each refinement of an object; `nil` elsewhere.
        var windowEntries: UnsafeMutablePointer<Int>? = nil
        /// Storage a window pass works in (``scratchCount(entries:)`` doubles for the window
        /// at hand), kept by the object between updates: `nil` takes a temporary allocation,
        /// which lies on the heap for all but the shortest windows.
        var scratch: UnsafeMutableBufferPointer<Double>? = nil
        /// The range density's line-of-sight and multipath terms as the object keeps them, fitted
        /// at ``range``'s variance (``RangeDensityPieces``), read by ``rangeInlier(_:)`` and
        /// ``rangeExcess(_:)``; `nil`: computed.
        var densityPieces: RangeDensityPieces.View? = nil
        /// Whether the refinement's window holds an entry with a direction, and one with a
        /// missing direction: found by the burst chain's scan of the window
        /// (``withConstants(_:window:scratch:_:)``), so that its passes skip the window's
        /// directions when there are none (a Channel Sounding object's); `true` elsewhere.
        var windowHasDirections = true, windowHasMissingDirections = true
        /// How many of the heaviest hypotheses at most are smoothed at every update: in a bank
        /// that nothing has resolved yet (a still phone's, whose tiles all hold a few per cent)
        /// the others wait ``smoothingPeriodOfTheRest`` updates, as hypotheses under 1 % do.
        static let smoothedEveryUpdate = 8
        /// Updates after which the burst chain of a hypothesis outside the heaviest is smoothed
        /// again; in between, its newest ranges keep their filtered weights (`α π`, not `γ π`).
        /// A still phone's bank, dozens of tiles of a few per cent each that the ranges cannot
        /// tell apart, spends most of its window passes on these smoothings (`bench --scenario
        /// cs-ifft-still` counts the passes).
        static let smoothingPeriodOfTheRest = 16
        /// The lengths a burst chain's Gauss–Newton step tries — the whole step, then ½, ¼ and ⅛
        /// of it — before a kept model is given up and the hypothesis re-solved (eight, down to
        /// 1/128, without a chain), or the solve from the prior stops where it is (ten, down to
        /// 1/512, without a chain; ``descend(from:tolerance:trials:_:)``). The chain's step weighs each range
        /// by its line-of-sight posterior and leaves out the slope of the multipath term, so
        /// near the fixed point it settles at the step climbs the chain's exact cost at every
        /// length: the search fails whatever it tries. A decrease found only below ⅛ of the step
        /// is rare, next to those failures, and moves the hypothesis by a sixteenth of a step or
        /// less, while each shorter length tried costs a pass of the window (`bench`'s window
        /// entries per acquiring update count them).
        static let burstChainStepTrials = 4

        /// The step lengths a line search tries: ``burstChainStepTrials`` with a burst chain,
        /// `otherwise` without one.
        @inline(__always)
        func stepTrials(otherwise: Int) -> Int { burstForgettingRate > 0 ? Self.burstChainStepTrials : otherwise }

        init(_ o: FusionOptions) {
            rangeDensity = o.rangeErrorDensity
            shortRangeOutlierDensity = rangeDensity.outlierDensity * min(max(o.gating.movingShortOutlierFraction, 0), 1)
            angleDensity = RangeErrorDensity(outlierProbability: o.gating.outlierProbability, outlierSpan: o.gating.angleOutlierSpan,
                                             excessProbability: 0, excessRange: 0...0)
            range = rangeDensity.at(variance: o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation)
            azimuth = angleDensity.at(variance: o.sensors.azimuthStandardDeviation * o.sensors.azimuthStandardDeviation)
            elevation = angleDensity.at(variance: o.sensors.elevationStandardDeviation * o.sensors.elevationStandardDeviation)
            options = o
            inverseMemory = o.motion.movingBatchMemory > 0 ? 1 / o.motion.movingBatchMemory : 0
            biasVariance = o.sensors.rangeBiasStandardDeviation * o.sensors.rangeBiasStandardDeviation
            multipathProbability = rangeDensity.excessProbability
            burstForgettingRate = o.burstForgettingRate(multipathProbability: multipathProbability)
        }

        /// `(1 − ε − η) N(e; 0, v)` of the range density at ``range``'s variance, m⁻¹: off the
        /// object's ``densityPieces`` when it has them, else from the density's own form.
        @inline(__always)
        func rangeInlier(_ e: Double) -> Double {
            if let pieces = densityPieces { return pieces.inlier(e) }
            return range.inlier(e)
        }

        /// `η q(e)` of the range density at ``range``'s variance, m⁻¹: off the object's
        /// ``densityPieces`` when it has them, else from the density's own form.
        @inline(__always)
        func rangeExcess(_ e: Double) -> Double {
            if let pieces = densityPieces { return pieces.excess(e) }
            return range.excess(e)
        }
    }

    /// Adds one robust residual (``RangeErrorDensity/AtVariance/robustWeight(_:multiplicity:)``) to the
    /// normal equations of a fixed point: `c π/v · g gᵀ` to `a`, `c π e/v · g` to `b`, and
    /// `c log p(e)` to `logSum`.
    @inline(__always)
    static func accumulate(_ e: Double, gradient g: Vector3, multiplicity c: Double,
                           density: RangeErrorDensity.AtVariance, a: inout Matrix3, b: inout Vector3,
                           logSum: inout RangeErrorDensity.LogSum) {
        let robust = density.robustWeight(e, multiplicity: c)
        a += robust.weight * Matrix3.outer(g, g)
        b += (robust.weight * e) * g
        logSum.add(robust.density, multiplicity: c)
    }

    /// Normal equations and robust log-likelihood of the window at `x`; `biasGradient` is
    /// `Σ c π g / v` over the ranges, what a common range bias would move in `b` (see
    /// ``FusionOptions/Sensors/rangeBiasStandardDeviation``).
    static func linearise(at x: Vector3, window: MeasurementWindow, k: Constants,
                          priorInformation: Matrix3, priorMean: Vector3) -> (a: Matrix3, b: Vector3, logLikelihood: Double, biasGradient: Vector3) {
        k.windowPasses?.pointee += 1
        k.windowEntries?.pointee += window.entries.count
        if k.burstForgettingRate > 0 {
            let chain = lineariseWithBursts(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: priorMean)
            return (chain.a, chain.b, chain.logLikelihood, chain.biasGradient)
        }
        var a = priorInformation
        var b = priorInformation * (priorMean - x)
        var logs = RangeErrorDensity.LogSum()
        var biasGradient = Vector3.zero
        // Each residual and its gradient come from the measurement models the EKF uses
        // (``RangeModel``, ``AzimuthModel``, ``DirectionModel``), linearised at `x`.
        for e in window.entries {
            if e.hasRange, let range = weightedRange(of: e, at: x, k: k) {
                let w = range.weight, g = range.gradient
                a += w * Matrix3.outer(g, g)
                b += (w * range.residual) * g
                biasGradient += w * g
                logs.add(range.density, multiplicity: e.multiplicity)
            }
            accumulateDirection(of: e, at: x, k: k, a: &a, b: &b, logSum: &logs)
        }
        return (a, b, logs.value, biasGradient)
    }

    /// An entry's range at `x`, through the nominal range model: its gradient, residual,
    /// robust weight and density `p(e)` (``RangeErrorDensity/AtVariance/robustWeight(_:multiplicity:)``); `nil`
    /// when `x` sits on the antenna.
    ///
    /// The nominal σ_r, not σ(z) (``FusionOptions/Sensors/rangeErrorFraction``): the window spans
    /// seconds, over which the long-range error σ(z) models is mostly one common offset that
    /// the hypotheses' priors and the gate already absorb, and weighing the window's far
    /// ranges by it as if their errors were independent only slows the acquisition of a far
    /// object down; the tracking EKF, which integrates minutes of ranges, needs it.
    @inline(__always)
    static func weightedRange(of e: WindowEntry, at x: Vector3, k: Constants)
        -> (gradient: Vector3, residual: Double, weight: Double, density: Double)? {
        let model = k.options.nominalRangeModel(from: e.antennaInWorld)
        let (r, g) = model.linearised(at: x)
        guard r > 1e-6 else { return nil }
        let residual = model.residual(e.rangeMetres, r)
        let robust = k.range.robustWeight(residual, multiplicity: e.multiplicity)
        return (g, residual, robust.weight, robust.density)
    }

    /// Calls `body(residual, density, gradient)` for an entry's direction residuals at the
    /// position `p` (azimuth, and elevation when it has one), the density at the angle's
    /// variance and the gradient taken with respect to `p`. Nothing on the device's ±Y axis,
    /// where the azimuth is undefined. The residuals are the angles from the prediction to the
    /// measured direction ``WindowEntry/directionInDevice`` (``DirectionModel/linearisedInnovation(measuredDirection:at:)``:
    /// one short arc tangent each, none for the prediction's own angles), or, for an entry
    /// given by its angles alone, the angles' differences. An entry with a measured direction is
    /// read through its axes (``WindowEntry/azimuthAxisUInWorld``, and ``WindowEntry/elevationAxisInWorld``
    /// with an elevation): the same innovations and Jacobian, with dot products in place of the
    /// model's rotations.
    @inline(__always)
    static func forEachDirectionResidual(of e: WindowEntry, at p: Vector3, k: Constants,
                                         _ body: (Double, RangeErrorDensity.AtVariance, Vector3) -> Void) {
        let o = k.options
        switch e.direction {
        case .none:
            return
        case .azimuth:
            if e.directionInDevice != .zero, e.azimuthAxisWInWorld != .zero {
                // The same innovation and Jacobian from the entry's axes (``WindowEntry/azimuthAxisUInWorld``):
                // `atan2(u·d, w·d)` and `((u·d) w − (w·d) u)/ρ²`, `ρ² = (u·d)² + (w·d)²`.
                let d = p - e.antennaInWorld
                let uDotD = e.azimuthAxisUInWorld.dot(d), wDotD = e.azimuthAxisWInWorld.dot(d)
                let rho2 = uDotD * uDotD + wDotD * wDotD
                guard rho2 > 1e-18 else { return }
                body(Angle.nearAtan2(uDotD, wDotD), k.azimuth, (uDotD * e.azimuthAxisWInWorld - wDotD * e.azimuthAxisUInWorld) / rho2)
                return
            }
            let model = o.azimuthModel(from: e.antennaInWorld, worldFromDevice: e.worldFromDevice)
            let residual: Double, g: Vector3
            if e.directionInDevice != .zero {
                (residual, g) = model.linearisedInnovation(measuredDirection: e.directionInDevice, at: p)
            } else {
                let (h, gradient) = model.linearised(at: p)
                (residual, g) = (model.residual(e.angles.x, h), gradient)
            }
            guard g != .zero else { return }
            body(residual, k.azimuth, g)
        case .azimuthElevation:
            if e.directionInDevice != .zero, e.elevationAxisInWorld != .zero {
                // The same innovations and Jacobian from the entry's axes (``WindowEntry/elevationAxisInWorld``):
                // `ρ_v = √((u·d)² + (w·d)²)`, `v_y = e_y·d`; an angle beyond the density's reach
                // stood for (``angleResidual(_:_:density:)``).
                let d = p - e.antennaInWorld
                let u = e.azimuthAxisUInWorld, w = e.azimuthAxisWInWorld, y = e.elevationAxisInWorld
                let uDotD = u.dot(d), wDotD = w.dot(d), vy = y.dot(d)
                let rho2 = uDotD * uDotD + wDotD * wDotD
                guard rho2 > 1e-18 else { return }
                let m = e.directionInDevice
                let rhoM = (m.x * m.x + m.z * m.z).squareRoot(), rhoV = rho2.squareRoot()
                let n2 = rho2 + vy * vy
                body(angleResidual(uDotD, wDotD, density: k.azimuth), k.azimuth, (uDotD * w - wDotD * u) / rho2)
                body(angleResidual(m.y * rhoV - rhoM * vy, m.y * vy + rhoM * rhoV, density: k.elevation), k.elevation,
                     (rhoV / n2) * y - (vy / (rhoV * n2)) * (uDotD * u + wDotD * w))
                return
            }
            let model = o.directionModel(from: e.antennaInWorld, worldFromDevice: e.worldFromDevice)
            let residual: Vector2, j: Jacobian2x3
            if e.directionInDevice != .zero {
                (residual, j) = model.linearisedInnovation(measuredDirection: e.directionInDevice, at: p)
            } else {
                let (h, jacobian) = model.linearised(at: p)
                (residual, j) = (model.residual(e.angles, h), jacobian)
            }
            guard j.row0 != .zero else { return }
            body(residual.x, k.azimuth, j.row0)
            body(residual.y, k.elevation, j.row1)
        }
    }

    /// The angle `atan2(y, x)`, radians (``Angle/nearAtan2(_:_:)``), or, where it lies beyond the
    /// angle density's far residual `e_far` (``RangeErrorDensity/AtVariance/farAngleTangent``:
    /// `x < 0`, or `|y| > x tan e_far`), a stand-in of the same sign beyond it
    /// (``RangeErrorDensity/AtVariance/farAngleStandIn``; `+` for `y = 0`, where `atan2` gives π)
    /// and no arc tangent: the two have the same density to the last bit and robust weights
    /// below `2⁻⁵⁴ c/v`. (A hypothesis tens of degrees off the measured direction, most of a
    /// bank's early on.)
    @inline(__always)
    static func angleResidual(_ y: Double, _ x: Double, density: RangeErrorDensity.AtVariance) -> Double {
        if density.farAngleTangent < .infinity, x < 0 || abs(y) > density.farAngleTangent * x {
            return y < 0 ? -density.farAngleStandIn : density.farAngleStandIn
        }
        return Angle.nearAtan2(y, x)
    }

    /// Adds an entry's direction residuals at `x` to the normal equations of a fixed point,
    /// weighed by the symmetric robust angle density, and their `c log p` to `logSum`.
    @inline(__always)
    static func accumulateDirection(of e: WindowEntry, at x: Vector3, k: Constants, a: inout Matrix3, b: inout Vector3,
                                    logSum: inout RangeErrorDensity.LogSum) {
        forEachDirectionResidual(of: e, at: x, k: k) { residual, density, g in
            accumulate(residual, gradient: g, multiplicity: e.multiplicity, density: density, a: &a, b: &b, logSum: &logSum)
        }
    }

    /// `Σ c_k log ρ(θ_k)` over the entries whose direction was missing, `θ_k` the off-axis
    /// angle of the object at `position(e)` then (``FusionOptions/missingDirectionLikelihood(offAxisAngle:)``).
    @inline(__always)
    static func logMissingDirections(_ window: MeasurementWindow, k: Constants, position: (WindowEntry) -> Vector3) -> Double {
        var sum = 0.0
        for e in window.entries where e.directionMissing && e.direction == .none {
            let theta = DeviceAngles.offAxisAngle(e.worldFromDevice.inverseRotate(position(e) - e.antennaInWorld))
            sum += e.multiplicity * log(max(k.options.missingDirectionLikelihood(offAxisAngle: theta), 1e-300))
        }
        return sum
    }

    /// Normal equations and log-likelihood of the window at `x` when multipath comes in bursts
    /// (``FusionOptions/Gating/rangeMultipathBurstSeconds``): each range is line of sight (state A)
    /// or multipath (state B) and the state is a two-state Markov chain in time, so that a
    /// run of long ranges is one reflection that lasted, not many independent ones that each
    /// pull the fit.
    ///
    /// - Emissions, splitting ``RangeErrorDensity`` by state: `p_A(e) = [(1 − ε − η) N(e; 0, v)
    ///   + (1 − η) ε/span] / (1 − η)`, `p_B(e) = [η q(e) + η ε/span] / η`, so that
    ///   `(1 − η) p_A + η p_B = p(e)`; an entry of multiplicity `c` emits `p^c`.
    /// - Transitions over the gap `Δt` between ranges, stationary `P(B) = η`, mean burst `τ`:
    ///   with `ρ = exp(−Δt/(τ(1 − η)))`, `P(A→B) = η (1 − ρ)`, `P(B→B) = η + (1 − η) ρ`. With
    ///   `ρ = 0` the ranges are independent and this is exactly the likelihood of
    ///   ``linearise(at:window:k:priorInformation:priorMean:)``.
    /// - Forward–backward (scaled): `log L = Σ log s_k`, the posterior `γ_k(A)`; the normal
    ///   equations weigh range `k` by `c γ_k(A) π_k / v`, `π_k` the line-of-sight share of
    ///   `p_A(e_k)` — the EM weights of this model, as the independent case uses
    ///   `(1 − ε − η) N / p(e)`.
    /// Scratch lives in a temporary stack allocation (ten values per entry): nothing on the heap.
    /// `forwardLineOfSight` is the forward pass's last `α(A)` and `lastRangeTime` the last range's
    /// time (−∞ without one): where a later range continues the chain (``BatchLinearisation``).
    /// With `independent`, the same pass also sums each range's and angle's information weighed
    /// as independent (`c π / v · g gᵀ`, π its line-of-sight share of `p(e)`) into `.0`, and the
    /// same weighted by the path travelled when it was made into `.1`
    /// (``BatchLinearisation/independentInformation``, ``BatchLinearisation/pathWeightedInformation``).
    static func lineariseWithBursts(at x: Vector3, window: MeasurementWindow, k: Constants,
                                    priorInformation: Matrix3, priorMean: Vector3,
                                    independent: UnsafeMutablePointer<(Matrix3, Matrix3)>? = nil)
        -> (a: Matrix3, b: Vector3, logLikelihood: Double, biasGradient: Vector3, forwardLineOfSight: Double, lastRangeTime: Double) {
        let count = window.entries.count
        // In the object's own storage when it has some, else a temporary allocation. (The passes
        // are a static function that adds to `chain`: a local function writing variables it
        // captures has each of them checked for exclusive access at run time.)
        var chain = BurstChainSums(a: priorInformation, b: priorInformation * (priorMean - x), logs: RangeErrorDensity.LogSum(),
                                   tops: 0, biasGradient: .zero, forward: 1 - k.multipathProbability, lastRangeTime: -.infinity)
        if let scratch = k.scratch, scratch.count >= BurstChainSums.width * max(count, 1) {
            burstChainPasses(at: x, window: window, k: k, independent: independent, scratch: scratch, into: &chain)
        } else {
            withUnsafeTemporaryAllocation(of: Double.self, capacity: BurstChainSums.width * max(count, 1)) { scratch in
                burstChainPasses(at: x, window: window, k: k, independent: independent, scratch: scratch, into: &chain)
            }
        }
        // Directions (none for Channel Sounding) are independent of the chain.
        if k.windowHasDirections {
            for e in window.entries where e.direction != .none {
                guard let independent else {
                    accumulateDirection(of: e, at: x, k: k, a: &chain.a, b: &chain.b, logSum: &chain.logs)
                    continue
                }
                var information = Matrix3.zero
                accumulateDirection(of: e, at: x, k: k, a: &information, b: &chain.b, logSum: &chain.logs)
                chain.a += information
                independent.pointee.0 += information
                independent.pointee.1 += e.pathLengthMetres * information
            }
        }
        return (chain.a, chain.b, chain.logs.value + chain.tops, chain.biasGradient, chain.forward, chain.lastRangeTime)
    }

    /// What the burst chain's two passes (``lineariseWithBursts(at:window:k:priorInformation:priorMean:independent:)``)
    /// sum over the window's ranges: the normal equations (from the prior's on), the scaled
    /// `log s` and the emissions' scales, the bias gradient, the forward pass's last `α(A)` and
    /// the last range's time (−∞ without one).
    struct BurstChainSums {
        /// Values kept per range in the scratch: `e`, `g` (3), `1/v`, the line-of-sight share,
        /// `α_A`, `ρ` into it, the scaled emissions of A and B.
        static let width = 10
        var a: Matrix3, b: Vector3, logs: RangeErrorDensity.LogSum, tops: Double, biasGradient: Vector3
        var forward: Double, lastRangeTime: Double
    }

    /// The forward pass over the window's ranges (emissions, `s_k`, `α_k(A)`, kept in `scratch`)
    /// and the backward pass that weighs each range by its posterior `γ_k(A)`, added to `sums`
    /// (the normal equations at `x` start as the prior's; the forward pass starts at `1 − η`, and
    /// its last `α(A)` replaces `sums.forward`).
    /// (Out of line: inlined, it changes how the still batch's own loop beside it compiles.)
    @inline(never)
    static func burstChainPasses(at x: Vector3, window: MeasurementWindow, k: Constants,
                                 independent: UnsafeMutablePointer<(Matrix3, Matrix3)>?,
                                 scratch: UnsafeMutableBufferPointer<Double>, into sums: inout BurstChainSums) {
        var a = sums.a, b = sums.b, logs = sums.logs, tops = sums.tops, biasGradient = sums.biasGradient
        let o = k.options
        let eta = k.multipathProbability
        let outlier = k.rangeDensity.outlierDensity
        let width = BurstChainSums.width
        guard let base = scratch.baseAddress else { return }
        var lastRangeTime = sums.lastRangeTime
        // The independent information and its path-weighted sum, each symmetric term on its upper
        // triangle (`w gᵢgⱼ` formed as `w (gᵢ gⱼ)`, as `w · outer(g, g)` forms it), in local sums
        // completed and added once the window is through.
        var independentUpper = Matrix3.zero, pathWeightedUpper = Matrix3.zero
        // Per range: e, g (3), 1/v, line-of-sight share, α_A, ρ into it, scaled emissions A, B.
        var m = 0
        var alphaA = 1 - eta
        for (index, e) in window.entries.enumerated() where e.hasRange {
            let model = o.nominalRangeModel(from: e.antennaInWorld)
            let (r, g) = model.linearised(at: x)
            guard r > 1e-6 else { continue }
            let residual = model.residual(e.rangeMetres, r), inverseVariance = k.range.inverseVariance, c = e.multiplicity
            let inlier = k.rangeInlier(residual)
            let losPart = inlier + (1 - eta) * outlier
            // Emissions (densities of order 1/m; the forward pass renormalises each step).
            // An entry standing for c updates emits p^c, scaled by the larger of the two.
            let excess = k.rangeExcess(residual)
            if independent != nil {
                let w = c * inlier * inverseVariance / (inlier + excess + outlier)
                let i00 = w * (g.x * g.x), i01 = w * (g.x * g.y), i02 = w * (g.x * g.z)
                let i11 = w * (g.y * g.y), i12 = w * (g.y * g.z), i22 = w * (g.z * g.z)
                independentUpper.addUpperTriangle(1, i00, i01, i02, i11, i12, i22)
                // (Scaled here: a scale known only at run time would cost a branch per range.)
                let l = e.pathLengthMetres
                pathWeightedUpper.addUpperTriangle(1, l * i00, l * i01, l * i02, l * i11, l * i12, l * i22)
            }
            let (emitA, emitB, top) = burstEmissions(lineOfSight: losPart, excess: excess, k: k, multiplicity: c)
            // ρ of the gap from the previous range (``refine`` fills them; none: independent).
            let rho = m == 0 ? 0 : (k.persistence?[index] ?? 0)
            let step = burstForwardStep(alphaA, first: m == 0, persistence: rho, emitA: emitA, emitB: emitB, k: k)
            logs.add(step.scale)
            tops += top
            alphaA = step.alpha
            // The range's slot (`m < count`, the scratch holding `width` values per entry: its
            // offsets computed without overflow checks).
            let slot = base + m &* width
            slot[0] = residual
            slot[1] = g.x; slot[2] = g.y; slot[3] = g.z
            slot[4] = inverseVariance
            slot[5] = c * inlier / losPart
            slot[6] = alphaA
            slot[7] = rho
            slot[8] = emitA; slot[9] = emitB
            m += 1
            lastRangeTime = e.timestamp
        }
        let forward = alphaA
        if let independent {
            independent.pointee.0 += independentUpper.mirroredUpperTriangle
            independent.pointee.1 += pathWeightedUpper.mirroredUpperTriangle
        }
        // Backward pass: β_k(s) = Σ_s' P(s→s'; ρ_{k+1}) p_{s'}(e_{k+1}) β_{k+1}(s'), scaled.
        var betaA = 1.0, betaB = 1.0
        for j in stride(from: m - 1, through: 0, by: -1) {
            let slot = base + j &* width
            let aA = slot[6]
            let posteriorA = aA * betaA / (aA * betaA + (1 - aA) * betaB)
            let w = posteriorA * slot[5] * slot[4]
            let g = Vector3(slot[1], slot[2], slot[3])
            a += w * Matrix3.outer(g, g)
            b += (w * slot[0]) * g
            biasGradient += w * g
            let rho = slot[7]
            let nextA = slot[8] * betaA, nextB = slot[9] * betaB
            let fromA = (1 - eta * (1 - rho)) * nextA + eta * (1 - rho) * nextB
            let fromB = (1 - eta) * (1 - rho) * nextA + (eta + (1 - eta) * rho) * nextB
            let scale = max(fromA, fromB)
            betaA = fromA / scale
            betaB = fromB / scale
        }
        sums = BurstChainSums(a: a, b: b, logs: logs, tops: tops, biasGradient: biasGradient, forward: forward,
                              lastRangeTime: lastRangeTime)
    }

    /// A range's emissions under the burst chain: `p_A = [(1 − ε − η) N + (1 − η) ε/span]/(1 − η)`
    /// (`lineOfSight` the bracket) and `p_B = [η q + η ε/span]/η`, each to the power `c` for an
    /// entry standing for `c` updates, scaled by the larger (`top` its logarithm).
    @inline(__always)
    static func burstEmissions(lineOfSight: Double, excess: Double, k: Constants, multiplicity c: Double)
        -> (emitA: Double, emitB: Double, top: Double) {
        let eta = k.multipathProbability
        var emitA = lineOfSight / (1 - eta)
        var emitB = (excess + eta * k.rangeDensity.outlierDensity) / eta
        var top = 0.0
        if c != 1 {
            let logA = c * log(emitA), logB = c * log(emitB)
            top = max(logA, logB)
            emitA = exp(logA - top)
            emitB = exp(logB - top)
        }
        return (emitA, emitB, top)
    }

    /// One step of the chain's forward pass from the filtered `α(A)`: over a gap of persistence
    /// `ρ`, `P(A) = α(1 − η(1 − ρ)) + (1 − α)(1 − η)(1 − ρ)` (`1 − η` for the first range),
    /// `s = P(A) p_A + (1 − P(A)) p_B`; returns `s` (whose `log s` the caller sums, ``RangeErrorDensity/LogSum``)
    /// and the new `α(A) = P(A) p_A / s`.
    @inline(__always)
    static func burstForwardStep(_ alpha: Double, first: Bool, persistence rho: Double, emitA: Double, emitB: Double,
                                 k: Constants) -> (scale: Double, alpha: Double) {
        let eta = k.multipathProbability
        let predicted = first ? 1 - eta : alpha * (1 - eta * (1 - rho)) + (1 - alpha) * (1 - eta) * (1 - rho)
        let fA = predicted * emitA, fB = (1 - predicted) * emitB
        let s = fA + fB
        return (s, fA / s)
    }

    /// Refines every hypothesis of `mixture` in place from `window`.
    /// - Parameters:
    ///   - mixture: the bank; each hypothesis is re-solved from its own tile prior.
    ///   - window: the stored updates (ranges, directions, missing directions).
    ///   - o: the noise, outlier and gate settings of the measurement models.
    ///   - addedVariance: m², added to each refined covariance, `Pᵢ ← A⁻¹ + q I`. A
    ///   batch treats the object and the VIO frame as fixed; the engine passes what VIO drift
    ///   does to a batch estimate: a third of the random-walk variance accumulated over the
    ///   window (the variance of a random walk's average) plus `(f·L/2)²` for systematic
    ///   drift (``FusionOptions/Acquisition/vioDriftFraction``).
    ///   - densityPieces: the range density's terms as an object keeps them
    ///   (``RangeDensityPieces``), read where they are fitted at the range variance of `o`;
    ///   `nil` or another variance: computed from the density.
    /// - Returns: how many times the whole window was linearised (a hypothesis solved from its
    ///   prior, or its model rebuilt): the refinement's work, the same on every machine.
    @discardableResult
    public static func refine(_ mixture: inout PositionMixture, window: MeasurementWindow, options o: FusionOptions,
                              addedVariance: Double = 0, densityPieces: RangeDensityPieces? = nil) -> Int {
        guard let densityPieces else {
            return refine(&mixture, window: window, options: o, addedVariance: addedVariance, scratch: nil).passes
        }
        let variance = o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation
        return densityPieces.withView(for: o.rangeErrorDensity, variance: variance) { pieces in
            refine(&mixture, window: window, options: o, addedVariance: addedVariance, scratch: nil, densityPieces: pieces).passes
        }
    }

    /// ``refine(_:window:options:addedVariance:)`` working in `scratch` (``scratchCount(entries:)``
    /// doubles for `window`; a shorter or `nil` one takes temporary allocations), reading the
    /// range density's terms off `densityPieces` when given (fitted at the variance of `o`,
    /// ``RangeDensityPieces``). Returns the window linearisations and the entries they read.
    static func refine(_ mixture: inout PositionMixture, window: MeasurementWindow, options o: FusionOptions,
                       addedVariance: Double, scratch: UnsafeMutableBufferPointer<Double>?,
                       densityPieces: RangeDensityPieces.View? = nil) -> WindowWork {
        var work = WindowWork()
        withUnsafeMutablePointer(to: &work.passes) { counter in
            withUnsafeMutablePointer(to: &work.entries) { entries in
                withConstants(o, window: window, scratch: scratch) { constants in
                    var k = constants
                    k.windowPasses = counter
                    k.windowEntries = entries
                    k.densityPieces = densityPieces
                    refineEach(&mixture, window: window, k: k, addedVariance: addedVariance)
                }
            }
        }
        return work
    }

    /// A refinement's work: how many times it linearised the whole window, and how many
    /// entries those linearisations read (a pass over a long window costs more than one over a
    /// short one).
    struct WindowWork {
        var passes = 0, entries = 0
    }

    /// Doubles of storage a window pass over `n` entries works in: ten per entry for a burst
    /// chain's forward–backward pass (``lineariseWithBursts(at:window:k:priorInformation:priorMean:independent:)``)
    /// and one for its persistences `ρ_j` (``withConstants(_:window:scratch:_:)``); for the moving
    /// batch (``refineMoving(_:window:now:start:options:addedVariance:informationScale:)``), one per
    /// entry for its faded weight and three residual slots of eight (``MovingNormalEquations/summing(_:)``).
    static func scratchCount(entries n: Int) -> Int {
        max(BurstChainSums.width + 1, 1 + MovingNormalEquations.slotsPerEntry * MovingNormalEquations.slotWidth) * max(n, 1)
    }

    /// Calls `body` with the constants of `o` for `window`: with a burst chain, its persistences
    /// `ρ_j` filled, in the first entries of `scratch` (the rest left to the window passes,
    /// ``Constants/scratch``) or, without enough of it, in a temporary allocation.
    static func withConstants<R>(_ o: FusionOptions, window: MeasurementWindow, scratch: UnsafeMutableBufferPointer<Double>? = nil,
                                 _ body: (Constants) -> R) -> R {
        var k = Constants(o)
        k.scratch = scratch
        guard k.burstForgettingRate > 0 else { return body(k) }
        let count = max(window.entries.count, 1)
        func run(_ persistence: UnsafeMutableBufferPointer<Double>) -> R {
            var previous: Double?
            var directions = false, missing = false
            for (j, e) in window.entries.enumerated() {
                persistence[j] = previous.map { exp(-max(e.timestamp - $0, 0) * k.burstForgettingRate) } ?? 0
                if e.hasRange { previous = e.timestamp }
                if e.direction != .none { directions = true } else if e.directionMissing { missing = true }
            }
            k.persistence = UnsafeBufferPointer(persistence)
            k.windowHasDirections = directions
            k.windowHasMissingDirections = missing
            return body(k)
        }
        if let scratch, scratch.count >= scratchCount(entries: count) {
            k.scratch = UnsafeMutableBufferPointer(rebasing: scratch[count...])
            return run(UnsafeMutableBufferPointer(rebasing: scratch[0..<count]))
        }
        k.scratch = nil
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { run($0) }
    }

    /// ``refine(_:window:options:addedVariance:)`` for every hypothesis, with `k` prepared: a
    /// hypothesis whose model (``BatchLinearisation``) still holds is extended by the new
    /// entries and settled at its minimum; any other is re-solved from its prior
    /// (``solve(priorMean:window:k:priorInformation:)``) and its model rebuilt there.
    static func refineEach(_ mixture: inout PositionMixture, window: MeasurementWindow, k constants: Constants, addedVariance: Double) {
        let pathLength = window.entries.last?.pathLengthMetres ?? 0
        var adjusted = constants
        if adjusted.burstForgettingRate > 0 {
            adjusted.everyUpdateSmoothingWeight = max(0.01, heaviestWeight(rank: Constants.smoothedEveryUpdate, in: mixture))
        }
        // Read by the closure as a constant: a captured `var` was copied whole (~1.3 kB, the
        // options with it) at every call that passed it on.
        let k = adjusted
        mixture.transformEach { h in
            guard let priorInformation = h.priorCovariance.inverse else { return }
            if let delta = extend(&h.linearisation, window: window, k: k, priorInformation: priorInformation,
                                  priorMean: h.priorMeanInWorld, logWeight: h.logWeight) {
                settle(&h, model: h.linearisation, step: delta, k: k, priorInformation: priorInformation,
                       pathLengthMetres: pathLength, addedVariance: addedVariance)
                return
            }
            // A new hypothesis (or a reshaped window) under a burst chain — retiled over a long
            // window, where the solve from the prior costs most —: its model built at the prior
            // mean and brought within reach of the minimum, or, where that fails, the exact solve.
            // (Elsewhere the exact solve: a reach reached in a robust density's plateau is not its
            // minimum, while the solve keeps climbing out of it.)
            if k.burstForgettingRate > 0 {
                var fresh = linearisation(at: h.priorMeanInWorld, window: window, k: k, priorInformation: priorInformation,
                                          priorMean: h.priorMeanInWorld)
                if let delta = converge(&fresh, window: window, k: k, priorInformation: priorInformation,
                                        priorMean: h.priorMeanInWorld, logWeight: h.logWeight, iterations: 16) {
                    settle(&h, model: fresh, step: delta, k: k, priorInformation: priorInformation, pathLengthMetres: pathLength,
                           addedVariance: addedVariance)
                    h.linearisation = fresh
                    return
                }
            }
            guard let (x, _) = solve(priorMean: h.priorMeanInWorld, window: window, k: k, priorInformation: priorInformation) else { return }
            let model = linearisation(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: h.priorMeanInWorld)
            settle(&h, model: model, step: .zero, k: k, priorInformation: priorInformation, pathLengthMetres: pathLength,
                   addedVariance: addedVariance)
            h.linearisation = model
        }
        mixture.normalizeWeights()
    }

    /// The weight of the `rank`-th heaviest hypothesis (0 when there are fewer), without
    /// allocating: the `rank` heaviest weights kept in a stack buffer.
    public static func heaviestWeight(rank: Int, in mixture: PositionMixture) -> Double {
        guard mixture.count >= rank, rank > 0 else { return 0 }
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: rank) { top in
            var filled = 0
            for i in mixture.hypotheses.indices {
                let w = exp(mixture.hypotheses[i].logWeight)
                if filled < rank {
                    top[filled] = w
                    filled += 1
                } else if let smallest = top.indices.min(by: { top[$0] < top[$1] }), w > top[smallest] {
                    top[smallest] = w
                }
            }
            return top.min() ?? 0
        }
    }

    /// Step 1 for one hypothesis: the reweighted Gauss–Newton minimisation of `f` from its prior
    /// mean `mu0` (world frame, metres; ``descend(from:tolerance:trials:_:)``); the minimum and the
    /// normal equations there, or `nil` when they become singular.
    static func solve(priorMean mu0: Vector3, window: MeasurementWindow, k: Constants, priorInformation: Matrix3)
        -> (Vector3, (a: Matrix3, b: Vector3, logLikelihood: Double, biasGradient: Vector3))? {
        return descend(from: mu0, tolerance: k.options.acquisition.solveStepTolerance,
                       trials: k.stepTrials(otherwise: 10)) { x in
            let l = linearise(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: mu0)
            return (0.5 * priorInformation.quadraticForm(x - mu0) - l.logLikelihood, l.a, l.b, l)
        }
    }

    /// The reweighted Gauss–Newton of the still batch, from `start` (world frame, metres), with
    /// `evaluate(x)` giving the cost `f(x)`, its Gauss–Newton matrix `A` and `b = −∇f` there
    /// (and what else the caller keeps of the point): steps `δ = A⁻¹ b`, capped at 1 m and
    /// halved until the cost does not rise (`trials` lengths tried: ten, a burst chain's four,
    /// ``Constants/burstChainStepTrials``); at most 20 of them, stopped
    /// once `δᵀAδ = bᵀA⁻¹b` is below `tolerance` (``FusionOptions/Acquisition/solveStepTolerance``:
    /// within 1 % of a σ by default), or when an accepted step lowers the cost by less than
    /// 10⁻⁷ or is below 10 µm, or no halving lowers it. The last point and its evaluation;
    /// `nil` when `A` becomes singular. The solve from the prior and a kept model's minimum
    /// with new entries (``minimum(of:with:k:)``) both run it.
    @inline(__always)
    static func descend<Kept>(from start: Vector3, tolerance: Double, trials: Int = 10,
                              _ evaluate: (Vector3) -> (cost: Double, a: Matrix3, b: Vector3, kept: Kept))
        -> (Vector3, Kept)? {
        var x = start
        var current = evaluate(x)
        for _ in 0..<20 {
            guard let inverse = current.a.inverse else { return nil }
            var step = inverse * current.b
            if current.b.dot(step) < tolerance { break }
            let n = step.length
            if n > 1 { step = step / n }
            var accepted = false
            for _ in 0..<trials {
                let candidate = x + step
                let next = evaluate(candidate)
                if next.cost <= current.cost + 1e-9 {
                    let decrease = current.cost - next.cost
                    x = candidate
                    current = next
                    accepted = decrease > 1e-7 && step.length > 1e-5
                    break
                }
                step = 0.5 * step
            }
            if !accepted { break }
        }
        return (x, current.kept)
    }
}
