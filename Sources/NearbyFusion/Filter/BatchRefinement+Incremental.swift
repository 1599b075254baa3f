import Foundation

/// One hypothesis's batch, kept between updates as the quadratic model of its cost at a
/// linearisation point `x̂` (``point``): with `δ = x − x̂`,
/// `f(x̂ + δ) ≈ f(x̂) − bᵀδ + ½ δᵀ A δ`, `b = −∇f(x̂)` and `A` the reweighted Gauss–Newton
/// matrix `P₀⁻¹ + Σ_k c_k π_k H_kᵀ R_k⁻¹ H_k` at `x̂` (``BatchRefinement``'s normal equations).
///
/// Every term is a sum over the window's entries, each linearised at `x̂`, so a new entry adds
/// its own terms and nothing else is recomputed (``BatchRefinement/refine(_:window:options:addedVariance:)``):
/// the incremental smoothing of iSAM2 with one fixed-size block per hypothesis. The model is
/// rebuilt — the hypothesis re-solved from its prior — when its minimum moves further than
/// ``BatchRefinement/isWithinLinearisation(_:from:sigma:tolerance:)`` allows (iSAM2's fluid
/// relinearisation), and whenever the window is reshaped (thinned, cut back or cleared).
@_spi(Internals) public struct BatchLinearisation: Sendable, Hashable {
    /// `x̂`, world frame, metres.
    public var point = Vector3.zero
    /// `A` at `x̂`, 1/m² (prior information included).
    public var information = Matrix3.zero
    /// `b = −∇f(x̂)`, 1/m.
    public var gradient = Vector3.zero
    /// `K = Σ w e (I − g gᵀ)/r` over the ranges without a burst chain, 1/m²: their curvature,
    /// which Gauss–Newton leaves out of `A`. With the robust weights held, the cost's Hessian
    /// at `x̂` is `A − K` (`BatchRefinement.newtonStep(_:k:)`). Summed only with
    /// ``FusionOptions/Acquisition/stillBatchNewtonSteps``; zero otherwise.
    public var curvature = Matrix3.zero
    /// `f(x̂)`: the prior's quadratic term minus the window's robust log-likelihood.
    public var cost = 0.0
    /// `Σ c_k π_k g_k / v_k` over the ranges, 1/m (what a common range bias moves in `b`).
    public var biasGradient = Vector3.zero
    /// `D = Σ_k L_k I_k`, each entry's information weighted by the path travelled when it was
    /// made, 1/m (``FusionOptions/Acquisition/considersDriftGeometry``).
    public var pathWeightedInformation = Matrix3.zero
    /// `Σ c_k log ρ(θ_k)` over the entries with a missing direction at `x̂`, and its gradient
    /// with respect to the position, 1/m: the evidence at `x̂ + δ` takes the first-order value.
    public var logMissing = 0.0
    /// (See ``logMissing``.)
    public var logMissingGradient = Vector3.zero
    /// Which window the terms sum (``MeasurementWindow/revision``) and how many of its
    /// entries; `-1`: no model yet.
    public var windowRevision: UInt64 = 0
    /// (See ``windowRevision``.)
    public var entryCount = -1
    /// How many entries the window held when the model was last linearised afresh.
    public var rebuiltAtEntryCount = 0
    /// With a burst chain (``FusionOptions/Gating/rangeMultipathBurstSeconds``): the forward
    /// pass's `α(A)` after the last range, the time of that range (−∞ before the first), and
    /// the information with every range weighed as independent (`P₀⁻¹ + Σ I_k`, what the drift
    /// is considered through). A new range continues the forward pass: its weight in `A` and
    /// `b` is its filtered `α(A) π` until the next rebuild smooths it (`γ(A) π`), while `f`
    /// takes the chain's exact `−log s_k`.
    public var forwardLineOfSight = 1.0
    /// (See ``forwardLineOfSight``.)
    public var lastRangeTime = -Double.infinity
    /// (See ``forwardLineOfSight``.)
    public var independentInformation = Matrix3.zero

    /// An empty model (the hypothesis is solved in full at its next refinement).
    public init() {}
}

extension BatchRefinement {
    /// Adds one window entry's terms, linearised at `model.point`, to `model`: for a range,
    /// with residual `e`, gradient `g`, robust weight `w = c π / v` and robust density `p`,
    /// `A += w g gᵀ`, `b += w e g`, `f −= c log p(e)`, bias gradient `+= w g`, and the range's
    /// curvature `K += (w e / r)(I − g gᵀ)` (`∇²‖x − a‖ = (I − g gᵀ)/r`, with
    /// ``FusionOptions/Acquisition/stillBatchNewtonSteps``); the same but `K` for
    /// each angle residual (with the symmetric angle density); `D += L I_k` with `I_k` the
    /// entry's information; for a missing direction, `c log ρ(θ)` and its gradient
    /// `c (ρ'(θ)/ρ) ∇θ`, `∇θ = R (e_z + cos θ u) / (‖v‖ sin θ)` with `v = Rᵀ(x − a)`, `u = v/‖v‖`.
    /// Returns the smallest share of the entry's residuals that the line of sight or multipath
    /// explain, `1 − (ε/span)/p(e)` (for a symmetric density, `π`; 1 without any residual).
    ///
    /// With a burst chain, a range continues the forward pass from ``BatchLinearisation/forwardLineOfSight``:
    /// `ρ = exp(−Δt (λ + μ))` from the last range, `P(A) = α(1 − η(1 − ρ)) + (1 − α)(1 − η)(1 − ρ)`
    /// (`1 − η` for the first), `s = P(A) p_A(e)^c + (1 − P(A)) p_B(e)^c`, `f −= log s`,
    /// `α ← P(A) p_A^c / s`, and its weight in `A` and `b` is `α c π_A / v`
    /// (``BatchRefinement/lineariseWithBursts(at:window:k:priorInformation:priorMean:)``).
    @inline(__always) @discardableResult
    static func add(_ e: WindowEntry, to model: inout BatchLinearisation, k: Constants) -> Double {
        var logs = RangeErrorDensity.LogSum()
        let share = add(e, to: &model, k: k, logSum: &logs)
        model.cost -= logs.value
        return share
    }

    /// ``add(_:to:k:)`` with the entry's `c log p` terms summed into `logSum` rather than
    /// taken from `f` at once: the caller takes `logSum`'s value from `f` once the entries are in
    /// (one logarithm for many of them).
    @inline(__always) @discardableResult
    static func add(_ e: WindowEntry, to model: inout BatchLinearisation, k: Constants,
                    logSum: inout RangeErrorDensity.LogSum) -> Double {
        let x = model.point
        var information = Matrix3.zero
        var b = Vector3.zero
        var logTerm = 0.0
        var share = 1.0
        var independent = Matrix3.zero
        if e.hasRange {
            let rangeModel = k.options.nominalRangeModel(from: e.antennaInWorld)
            let (r, g) = rangeModel.linearised(at: x)
            if r > 1e-6 {
                let residual = rangeModel.residual(e.rangeMetres, r), inverseVariance = k.range.inverseVariance, c = e.multiplicity
                // Weighed as independent: `c π / v`, `c log p(e)`.
                let robust = k.range.robustWeight(residual, multiplicity: c)
                let inlier = robust.inlier, excess = robust.excess
                let outlier = k.rangeDensity.outlierDensity
                share = robust.share
                let w = robust.weight
                independent = w * Matrix3.outer(g, g)
                if k.burstForgettingRate > 0 {
                    let lineOfSight = inlier + (1 - k.multipathProbability) * outlier
                    let (emitA, emitB, top) = burstEmissions(lineOfSight: lineOfSight, excess: excess, k: k, multiplicity: c)
                    let first = !model.lastRangeTime.isFinite
                    let rho = first ? 0 : exp(-max(e.timestamp - model.lastRangeTime, 0) * k.burstForgettingRate)
                    let step = burstForwardStep(model.forwardLineOfSight, first: first, persistence: rho, emitA: emitA, emitB: emitB, k: k)
                    logSum.add(step.scale)
                    logTerm += top
                    model.forwardLineOfSight = step.alpha
                    model.lastRangeTime = e.timestamp
                    let chained = model.forwardLineOfSight * (c * inlier / lineOfSight) * inverseVariance
                    information += chained * Matrix3.outer(g, g)
                    b += (chained * residual) * g
                    model.biasGradient += chained * g
                } else {
                    information += independent
                    b += (w * residual) * g
                    model.biasGradient += w * g
                    logSum.add(robust.density, multiplicity: c)
                    if k.options.acquisition.stillBatchNewtonSteps {
                        model.curvature += (w * residual / r) * (Matrix3.identity - Matrix3.outer(g, g))
                    }
                }
            }
        }
        forEachDirectionResidual(of: e, at: x, k: k) { residual, density, g in
            let robust = density.robustWeight(residual, multiplicity: e.multiplicity)
            let outer = robust.weight * Matrix3.outer(g, g)
            information += outer
            independent += outer
            b += (robust.weight * residual) * g
            logSum.add(robust.density, multiplicity: e.multiplicity)
            share = min(share, robust.share)
        }
        model.information += information
        // (Read only for a burst chain's drift: without one it is `information`.)
        if k.burstForgettingRate > 0 { model.independentInformation += independent }
        model.gradient += b
        model.cost -= logTerm
        if k.options.acquisition.considersDriftGeometry {
            model.pathWeightedInformation += e.pathLengthMetres * independent
        }
        if e.directionMissing && e.direction == .none {
            let (logRho, gradient) = logMissingDirection(of: e, at: x, options: k.options)
            model.logMissing += e.multiplicity * logRho
            model.logMissingGradient += e.multiplicity * gradient
        }
        return share
    }

    /// `log ρ(θ)` of a missing direction at `x` (``FusionOptions/missingDirectionLikelihood(offAxisAngle:)``)
    /// and its gradient with respect to `x` (world frame, 1/m). With
    /// `ρ(θ) = ρ₀ + (1 − ρ₀) σ(s)`, `s = (θ − θ_e)/w`: `dρ/dθ = (1 − ρ₀) σ(s)(1 − σ(s))/w`.
    @inline(__always)
    static func logMissingDirection(of e: WindowEntry, at x: Vector3, options o: FusionOptions) -> (Double, Vector3) {
        let v = e.worldFromDevice.inverseRotate(x - e.antennaInWorld)
        let length = v.length
        // θ = acos(−v_z/‖v‖) (``DeviceAngles/offAxisAngle(_:)``); its sine and cosine are read
        // off `v`, and the logistic `σ` behind ρ is read off ρ itself, `σ = (ρ − ρ₀)/(1 − ρ₀)`.
        let cosine = max(-1, min(1, -v.z / max(length, 1e-300)))
        let theta = acos(cosine)
        let rho0 = o.acquisition.missingDirectionLikelihood
        let likelihood = o.missingDirectionLikelihood(offAxisAngle: theta)
        let rho = max(likelihood, 1e-300)
        // (No direction is marked missing where a missing one says nothing, `ρ₀ = 1`.)
        guard rho0 < 1 else { return (log(rho), .zero) }
        let sigma = (likelihood - rho0) / (1 - rho0)
        let width = max(o.acquisition.fieldOfViewEdgeWidth, 1e-6)
        let sine = (v.x * v.x + v.y * v.y).squareRoot() / max(length, 1e-300)
        guard length > 1e-9, sine > 1e-9 else { return (log(rho), .zero) }
        let dRho = (1 - rho0) * sigma * (1 - sigma) / width
        // ∂θ/∂v = (e_z + cos θ · u) / (‖v‖ sin θ), into the world frame by R.
        let u = v / length
        let dTheta = (Vector3(0, 0, 1) + cosine * u) / (length * sine)
        return (log(rho), (dRho / rho) * e.worldFromDevice.rotate(dTheta))
    }

    /// The model of the whole window at `x` with the prior `N(μ₀, Λ⁻¹)`: `A = Λ`,
    /// `b = Λ(μ₀ − x)`, `f = ½ (x − μ₀)ᵀ Λ (x − μ₀)`, then every entry (``add(_:to:k:)``); with a
    /// burst chain, `A`, `b` and `f` then come from the forward–backward pass over the window.
    static func linearisation(at x: Vector3, window: MeasurementWindow, k: Constants,
                              priorInformation: Matrix3, priorMean: Vector3) -> BatchLinearisation {
        k.windowPasses?.pointee += 1
        k.windowEntries?.pointee += window.entries.count
        var model = BatchLinearisation()
        model.point = x
        model.information = priorInformation
        model.independentInformation = priorInformation
        model.gradient = priorInformation * (priorMean - x)
        model.cost = 0.5 * priorInformation.quadraticForm(x - priorMean)
        model.windowRevision = window.revision
        model.entryCount = window.entries.count
        model.rebuiltAtEntryCount = window.entries.count
        guard k.burstForgettingRate > 0 else {
            var logs = RangeErrorDensity.LogSum()
            for e in window.entries { add(e, to: &model, k: k, logSum: &logs) }
            model.cost -= logs.value
            return model
        }
        // The chain smoothed over the whole window (each range weighed by `γ(A) π`), in one
        // forward–backward pass that also sums the independent information the drift reads.
        var independent = (Matrix3.zero, Matrix3.zero)
        let chain = lineariseWithBursts(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: priorMean,
                                        independent: &independent)
        model.information = chain.a
        model.gradient = chain.b
        model.cost -= chain.logLikelihood
        model.biasGradient = chain.biasGradient
        model.forwardLineOfSight = chain.forwardLineOfSight
        model.lastRangeTime = chain.lastRangeTime
        model.independentInformation += independent.0
        if k.options.acquisition.considersDriftGeometry { model.pathWeightedInformation = independent.1 }
        if k.windowHasMissingDirections { addMissingDirections(of: window, at: x, options: k.options, to: &model) }
        return model
    }

    /// The missing directions' `Σ c log ρ(θ)` and its gradient at `x` into `model` (the burst
    /// chain's linearisation; without a chain, ``add(_:to:k:)`` takes them entry by entry).
    /// (Out of line: inlined, it changes how the still batch's loop beside it compiles.)
    @inline(never)
    static func addMissingDirections(of window: MeasurementWindow, at x: Vector3, options o: FusionOptions,
                                     to model: inout BatchLinearisation) {
        for e in window.entries where e.directionMissing && e.direction == .none {
            let (logRho, gradient) = logMissingDirection(of: e, at: x, options: o)
            model.logMissing += e.multiplicity * logRho
            model.logMissingGradient += e.multiplicity * gradient
        }
    }

    /// Brings a hypothesis's model up to date with the window and returns the step to its
    /// minimum, `δ = A⁻¹ b`, once the step is small enough for the model to hold
    /// (``isWithinLinearisation(_:from:sigma:tolerance:)``). A longer step is a Gauss–Newton
    /// iteration: the model is rebuilt at `x̂ + δ` — the window linearised afresh — and kept if
    /// its cost is no higher (otherwise `δ` is halved). `nil` when the hypothesis must be
    /// re-solved from its prior instead: no model yet, the window was reshaped since, `A` is
    /// singular, or eight iterations did not bring the step within the model's reach.
    @inline(__always)
    static func extend(_ model: inout BatchLinearisation, window: MeasurementWindow, k: Constants,
                       priorInformation: Matrix3, priorMean: Vector3, logWeight: Double) -> Vector3? {
        guard k.options.acquisition.relinearisationTolerance > 0, model.entryCount >= 0, model.windowRevision == window.revision,
              model.entryCount <= window.entries.count else { return nil }
        let previous = model
        var share = 1.0
        var logs = RangeErrorDensity.LogSum()
        window.entries.withUnsafeBufferPointer { entries in
            for j in model.entryCount..<entries.count { share = min(share, add(entries[j], to: &model, k: k, logSum: &logs)) }
        }
        model.cost -= logs.value
        model.entryCount = window.entries.count
        if share < 0.5 {
            // A new entry the model's point does not explain (an outlier there, `π < ½`) may pull
            // the minimum out of the plateau its robust density makes, further than a model that
            // weighs it at the old point can see; and for a hypothesis that holds weight it may be
            // the first of a run that says the window's old entries were the outliers (a
            // multipath burst the acquisition settled on), which only re-weighing them all can
            // tell. A hypothesis holding 1 % of the weight or more is re-solved from its prior;
            // a lighter one's minimum is found with the new entries evaluated exactly, and the
            // window linearised afresh there.
            // (A burst chain weighs such runs itself.)
            guard exp(logWeight) < 0.01 || k.burstForgettingRate > 0 else { return nil }
            guard let x = minimum(of: previous, with: window.entries[previous.entryCount...], k: k) else { return nil }
            model = linearisation(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: priorMean)
        }
        return converge(&model, window: window, k: k, priorInformation: priorInformation, priorMean: priorMean,
                        logWeight: logWeight, iterations: 8)
    }

    /// Brings a model's minimum within its reach: the step `δ = A⁻¹ b` once the model holds
    /// there (``isWithinLinearisation(_:from:sigma:tolerance:)``, the missing directions' term
    /// within half a nat, a burst chain smoothed recently enough); until then Gauss–Newton
    /// iterations — the model rebuilt at `x̂ + δ`, the window linearised afresh, kept if its cost
    /// is no higher (otherwise `δ` is halved, at most seven times, a burst chain's three; steps
    /// capped at 1 m). `nil` when `A` is singular,
    /// the line search fails, or `iterations` did not suffice. A model built at a tile's prior
    /// mean solves the hypothesis this way from its prior.
    static func converge(_ model: inout BatchLinearisation, window: MeasurementWindow, k: Constants,
                         priorInformation: Matrix3, priorMean: Vector3, logWeight: Double, iterations limit: Int) -> Vector3? {
        let base = k.options.acquisition.relinearisationTolerance
        guard base > 0 else { return nil }
        // The newest antenna position, or the tile's own centre's stand-in before any entry.
        let antenna = window.entries.last?.antennaInWorld ?? priorMean
        let sigma = k.options.sensors.rangeStandardDeviation
        // The tolerance scales with the weight: once a hypothesis gains weight it tightens, and
        // the model is rebuilt.
        let weight = exp(logWeight)
        let tolerance = weightedTolerance(base, weight: weight)
        // A burst chain's newest ranges carry filtered weights: the chain is smoothed again at
        // every update for a hypothesis holding 1 % of the weight or more and among the eight
        // heaviest (`Constants.everyUpdateSmoothingWeight`), after
        // `Constants.smoothingPeriodOfTheRest` updates for any other.
        let smoothingPeriod = k.burstForgettingRate <= 0 ? Int.max
            : weight >= k.everyUpdateSmoothingWeight ? 1 : Constants.smoothingPeriodOfTheRest
        // Whether model `m` holds over its step `δ`: the step within reach; the missing
        // directions' term, taken to first order, changing by at most half a nat over it, whatever
        // the weight (a logistic extrapolated linearly over a long step can turn a light
        // hypothesis behind the user into a heavy one in front); and with Newton steps
        // (``FusionOptions/Acquisition/stillBatchNewtonSteps``) Gauss–Newton's step `A⁻¹b` within
        // reach as well — the point is then as close to the minimum as Gauss–Newton would have
        // kept it, Newton's steps only getting there sooner. (Newton's step alone can be short
        // far from the minimum: beyond a range's minimum its model curves up more steeply than
        // the cost, and a short step would be taken as the minimum.)
        let newton = k.options.acquisition.stillBatchNewtonSteps
        func holds(_ m: BatchLinearisation, _ delta: Vector3, gaussNewton: Vector3?) -> Bool {
            guard isWithinLinearisation(delta, from: m.point - antenna, sigma: sigma, tolerance: tolerance),
                  abs(m.logMissingGradient.dot(delta)) <= 0.5 else { return false }
            guard newton else { return true }
            guard let gaussNewton else { return false }
            return isWithinLinearisation(gaussNewton, from: m.point - antenna, sigma: sigma, tolerance: tolerance)
        }
        guard var (delta, gaussNewton) = newtonStep(model, k: k) else { return nil }
        var iterations = 0
        while !holds(model, delta, gaussNewton: gaussNewton) || model.entryCount - model.rebuiltAtEntryCount >= smoothingPeriod {
            guard iterations < limit else { return nil }
            iterations += 1
            // A Gauss–Newton iteration from the model's point: steps capped at 1 m and halved
            // until the cost does not rise, as the solve from the prior does (a burst chain's down
            // to ⅛ of the step, ``Constants/burstChainStepTrials``) — unless the step is
            // one the model holds over and the rebuild only smooths the burst chain again: then
            // the rebuilt model is taken as it is. (Its cost may be a few hundredths of a nat
            // above the model's, the newest ranges' filtered weights having pointed the step; a
            // line search would halve such a step and then re-solve the hypothesis from its prior
            // for nothing.)
            let smoothingOnly = holds(model, delta, gaussNewton: gaussNewton)
            var step = delta.length > 1 ? delta / delta.length : delta
            var accepted = false
            for _ in 0..<k.stepTrials(otherwise: 8) {
                let candidate = linearisation(at: model.point + step, window: window, k: k, priorInformation: priorInformation,
                                              priorMean: priorMean)
                if smoothingOnly || candidate.cost <= model.cost + 1e-9, let next = newtonStep(candidate, k: k) {
                    model = candidate
                    (delta, gaussNewton) = next
                    accepted = true
                    break
                }
                step = 0.5 * step
            }
            guard accepted else { return nil }
        }
        return delta
    }

    /// The step to a model's minimum: with ``FusionOptions/Acquisition/stillBatchNewtonSteps``,
    /// Newton's `δ = (A − K)⁻¹ b` where the Hessian `A − K` is positive definite
    /// (``Matrix3/isPositiveDefinite``) and `δ` descends (`bᵀδ > 0`); Gauss–Newton's
    /// `δ = A⁻¹ b` elsewhere and by default. Beside it, Gauss–Newton's step (`nil` when `A` is
    /// singular or the step not finite), which the option's reach test reads too. `nil` when
    /// no step is finite.
    ///
    /// Where the ranges cross at wide angles `K` is small against `A` and changes nothing. Where
    /// they do not (a short sweep seen from afar, the ranges' shell curving away from the line
    /// the device moved along), `A` is small across the shell too: Gauss–Newton's steps then
    /// overshoot or fall short by a fixed fraction each time, and Newton's converge
    /// quadratically. Only the step changes: the covariance and the evidence still take `A`
    /// (the Laplace approximation with the expected information: the observed `A − K` would
    /// claim a height that a path in one plane does not measure, from the ranges' residuals).
    @inline(__always)
    static func newtonStep(_ model: BatchLinearisation, k: Constants) -> (step: Vector3, gaussNewton: Vector3?)? {
        let gaussNewton = model.information.inverse.map { $0 * model.gradient }.flatMap { $0.isFinite ? $0 : nil }
        if k.options.acquisition.stillBatchNewtonSteps {
            let hessian = model.information - model.curvature
            if hessian.isPositiveDefinite, let inverse = hessian.inverse {
                let delta = inverse * model.gradient
                if delta.isFinite && model.gradient.dot(delta) > 0 { return (delta, gaussNewton) }
            }
        }
        return gaussNewton.map { ($0, $0) }
    }

    /// The minimum of `q(x) − Σ_new c log p(e(x))`: a model's quadratic `q` (the entries it
    /// holds, linearised at its point) and the new entries evaluated exactly, by the same
    /// reweighted Gauss–Newton as the solve from the prior (``BatchRefinement/descend(from:tolerance:trials:_:)``),
    /// from the model's point. Each iteration costs only the new entries. With `δ = x − x̂`:
    /// `q(x) = f(x̂) − bᵀδ + ½ δᵀAδ`, its gradient `−(b − Aδ)` and its Gauss–Newton matrix `A`.
    /// `nil` when the normal equations become singular.
    static func minimum(of model: BatchLinearisation, with newEntries: ArraySlice<WindowEntry>, k: Constants) -> Vector3? {
        let end = descend(from: model.point, tolerance: k.options.acquisition.solveStepTolerance) { x in
            var terms = BatchLinearisation()
            terms.point = x
            for e in newEntries { add(e, to: &terms, k: k) }
            let delta = x - model.point
            let cost = model.cost - model.gradient.dot(delta) + 0.5 * model.information.quadraticForm(delta) + terms.cost
            return (cost, model.information + terms.information, model.gradient - model.information * delta + terms.gradient, ())
        }
        guard let (x, _) = end, x.isFinite else { return nil }
        return x
    }

    /// A reach tolerance `τ` scaled to a hypothesis holding `w` of the weight: `τ √(0.01/w)`
    /// within `[0.1 τ, 100 τ]` — a tenth for a hypothesis holding all the weight (whose
    /// covariance the convergence and the outputs read), 100× at 10⁻⁶ (whose evidence need only
    /// say that it stays light). The still batch's and the moving batch's models share it.
    @inline(__always)
    static func weightedTolerance(_ base: Double, weight: Double) -> Double {
        base * min(max(0.1, (0.01 / max(weight, 1e-300)).squareRoot()), 100)
    }

    /// Whether a model linearised at `x̂` still holds at `x̂ + δ`: the range's second-order term
    /// over the step, `‖δ‖² / (2 r)` (`r = ‖x̂ − a‖`, metres, from the newest antenna position
    /// `a`), stays within `tolerance` times the range's σ — where a step leaves every range's
    /// linearisation error a fraction of its noise, and the angles' (`‖δ‖²/r²` radians) a
    /// fraction of theirs.
    @inline(__always)
    static func isWithinLinearisation(_ delta: Vector3, from offset: Vector3, sigma: Double, tolerance: Double) -> Bool {
        delta.lengthSquared <= 2 * tolerance * sigma * max(offset.length, 0.1)
    }

    /// Sets a hypothesis from its model's minimum `x̂ + δ` (the Laplace approximation of
    /// ``BatchRefinement``, steps 2–4): mean `x̂ + δ`, covariance
    /// `A⁻¹ + σ_β² s sᵀ + drift + q I`, log weight
    /// `log w₀ − f* − ½ log det(2π P₀) + ½ log det(2π A⁻¹) + log ρ-terms`, with the model's
    /// `f* = f(x̂) − bᵀδ + ½ δᵀ(A − K)δ` (`K = 0` unless
    /// ``FusionOptions/Acquisition/stillBatchNewtonSteps``) and the missing directions'
    /// `Σ c log ρ` to first order.
    /// Leaves the hypothesis as it was when `A` cannot be inverted to a positive-definite
    /// covariance. `pathLengthMetres` is the path travelled since the acquisition began.
    @inline(__always)
    static func settle(_ h: inout PositionHypothesis, model: BatchLinearisation, step delta: Vector3, k: Constants,
                       priorInformation: Matrix3, pathLengthMetres now: Double, addedVariance: Double) {
        let x = model.point + delta
        guard x.isFinite, let covariance = model.information.inverse, covariance.isFinite else { return }
        let determinant = covariance.determinant
        guard determinant > 0 else { return }
        let f = model.cost - model.gradient.dot(delta) + 0.5 * (model.information - model.curvature).quadraticForm(delta)
        let logMissing = model.logMissing + model.logMissingGradient.dot(delta)
        let logPriorNormaliser = -0.5 * (log(max(h.priorCovariance.determinant, 1e-300)) + 3 * log(2 * .pi))
        let logVolume = 0.5 * (log(determinant) + 3 * log(2 * .pi))
        h.meanInWorld = x
        // Considered, not estimated: a common range bias β ~ N(0, σ_β²) moves the solution by
        // `s β`, `s = A⁻¹ (Σ c π g / v + P₀⁻¹ u₀)`; the covariance gets `σ_β² s sᵀ`.
        let sensitivity = covariance * (model.biasGradient + priorInformation * h.priorRangeDirection)
        let considered = k.biasVariance * Matrix3.outer(sensitivity, sensitivity)
        var drift = Matrix3.zero
        if k.options.acquisition.considersDriftGeometry && model.entryCount != 0 {
            // A burst chain's drift is considered with every range weighed as independent.
            let inverse = k.burstForgettingRate > 0 ? model.independentInformation.inverse : covariance
            drift = consideredDrift(inverseInformation: inverse, pathWeightedInformation: model.pathWeightedInformation,
                                    pathLengthMetres: now, options: k.options)
        }
        h.covariance = (covariance + considered + drift + Matrix3.scaledIdentity(max(addedVariance, 0))).symmetrized
        h.rangeBiasSensitivity = sensitivity
        h.logWeight = h.priorLogWeight - f + logPriorNormaliser + logVolume + logMissing
    }

    /// The drift a fixed point's solution carries when the device path drifts by `f Lᵢ u`, `u`
    /// a unit direction nobody knows (``FusionOptions/Acquisition/considersDriftGeometry``), m²:
    /// `(f²/3) (A⁻¹D − L_T I)(A⁻¹D − L_T I)ᵀ` — the solution moves by `f (A⁻¹D − L_T I) u` and
    /// `E[u uᵀ] = I/3` for a direction uniform on the sphere —, `A = P₀⁻¹ + Σ Iᵢ`,
    /// `D = Σ Lᵢ Iᵢ` (``BatchLinearisation/pathWeightedInformation``), `Iᵢ` each range's and
    /// angle's robustly weighted information `wᵢ g gᵀ` and `L_T` (`pathLengthMetres`) the path
    /// travelled now. Where `A` has no finite inverse or that is not finite (a degenerate
    /// window), the translation by half the drift, `(f L_T / 2)² / 3 · I`, stands in.
    @inline(__always)
    static func consideredDrift(inverseInformation: Matrix3?, pathWeightedInformation: Matrix3, pathLengthMetres now: Double,
                                options o: FusionOptions) -> Matrix3 {
        func translation() -> Matrix3 { Matrix3.scaledIdentity(o.driftTranslationVariance(pathMetres: now)) }
        guard let inverse = inverseInformation, inverse.isFinite else { return translation() }
        let f = o.acquisition.vioDriftFraction
        let shift = inverse * pathWeightedInformation - Matrix3.scaledIdentity(now)
        let considered = (f * f / 3) * (shift * shift.transposed)
        return considered.isFinite ? considered : translation()
    }
}

extension BatchRefinement {
    /// `model` with one more entry's terms, linearised at the model's point (a burst chain's
    /// forward pass continued): what a refinement adds for each new update.
    public static func adding(_ entry: WindowEntry, to model: BatchLinearisation, options o: FusionOptions) -> BatchLinearisation {
        var extended = model
        add(entry, to: &extended, k: Constants(o))
        return extended
    }

    /// The model of `window` under hypothesis `h`'s tile prior, linearised at `x` (world frame,
    /// metres): what the model a hypothesis keeps must equal, however it was built (from its
    /// prior at once, or extended update by update). `nil` when the prior's covariance is singular.
    public static func linearisation(of h: PositionHypothesis, at x: Vector3, window: MeasurementWindow,
                                     options o: FusionOptions) -> BatchLinearisation? {
        guard let priorInformation = h.priorCovariance.inverse else { return nil }
        return withConstants(o, window: window) { k in
            linearisation(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: h.priorMeanInWorld)
        }
    }
}
