import Foundation

// The batch of an object that may move: its position now and a constant velocity over the
// window, solved in 3×3 blocks.
extension BatchRefinement {
    /// The normal equations of the moving batch, in 3×3 blocks: the state is `z = (x, v)`,
    /// `x` the position now and `v` a constant velocity (world frame, metres and m/s).
    struct MovingNormalEquations {
        var axx = Matrix3.zero, axv = Matrix3.zero, avv = Matrix3.zero
        var bx = Vector3.zero, bv = Vector3.zero
        var logLikelihood = 0.0

        /// Adds one residual `e` whose gradient with respect to the position at its time is
        /// `g`, the entry `τ` seconds old: `∂h/∂x = g`, `∂h/∂v = −τ g`, so
        /// `A_xx += w g gᵀ`, `A_xv −= τ w g gᵀ`, `A_vv += τ² w g gᵀ`, `b_x += w e g`,
        /// `b_v −= τ w e g`.
        @inline(__always)
        mutating func add(_ e: Double, variance v: Double, gradient g: Vector3, age tau: Double, multiplicity c: Double,
                          density: RangeErrorDensity) {
            let (w, logTerm) = BatchRefinement.robustWeight(e, variance: v, multiplicity: c, density: density)
            let ggT = w * Matrix3.outer(g, g)
            axx += ggT
            axv += (-tau) * ggT
            avv += (tau * tau) * ggT
            bx += (w * e) * g
            bv += (-tau * w * e) * g
            logLikelihood += logTerm
        }

        /// Solves `A δ = b` by the Schur complement of the position block, and returns `δ`,
        /// the position block of `A⁻¹` and `log det A`:
        /// `S = A_vv − A_xvᵀ A_xx⁻¹ A_xv`, `δ_v = S⁻¹ (b_v − A_xvᵀ A_xx⁻¹ b_x)`,
        /// `δ_x = A_xx⁻¹ (b_x − A_xv δ_v)`, `(A⁻¹)_xx = A_xx⁻¹ + A_xx⁻¹ A_xv S⁻¹ A_xvᵀ A_xx⁻¹`,
        /// `(A⁻¹)_xv = −A_xx⁻¹ A_xv S⁻¹`, `(A⁻¹)_vv = S⁻¹`, `det A = det A_xx · det S`. `nil` when a
        /// block is singular.
        func solve() -> (dx: Vector3, dv: Vector3, positionCovariance: Matrix3, crossCovariance: Matrix3,
                         velocityCovariance: Matrix3, logDeterminant: Double)? {
            guard let axxInverse = axx.inverse else { return nil }
            let k = axxInverse * axv                       // A_xx⁻¹ A_xv
            let schur = (avv - axv.transposed * k).symmetrized
            guard let schurInverse = schur.inverse else { return nil }
            let detX = axx.determinant, detS = schur.determinant
            guard detX > 0, detS > 0 else { return nil }
            let dv = schurInverse * (bv - axv.transposed * (axxInverse * bx))
            let dx = axxInverse * (bx - axv * dv)
            let positionCovariance = (axxInverse + k * schurInverse * k.transposed).symmetrized
            // (A⁻¹)_xv = −A_xx⁻¹ A_xv S⁻¹.
            return (dx, dv, positionCovariance, -1 * (k * schurInverse), schurInverse.symmetrized, log(detX) + log(detS))
        }
    }

    /// Normal equations and robust log-likelihood of the window for the state `(x, v)` at
    /// time `now`: each entry's residual is evaluated at the position `x − v (now − t_k)`.
    /// The prior is the tile's, on the position at the start `t₀` of the acquisition,
    /// `x − v τ₀ ~ N(μ₀, P₀)` (`τ₀ = now − t₀`), and `v ~ N(0, σ_v² I)`:
    /// with `u = x − τ₀ v − μ₀` and `Λ = P₀⁻¹`, `A_xx = Λ`, `A_xv = −τ₀ Λ`,
    /// `A_vv = τ₀² Λ + σ_v⁻² I`, `b_x = −Λ u`, `b_v = τ₀ Λ u − v/σ_v²`.
    static func lineariseMoving(position x: Vector3, velocity v: Vector3, now: Double, start: Double,
                                window: MeasurementWindow, k: Constants, priorInformation: Matrix3,
                                priorMean: Vector3, velocityInformation: Double) -> MovingNormalEquations {
        var n = MovingNormalEquations()
        let tau0 = now - start
        let u = x - tau0 * v - priorMean
        let lu = priorInformation * u
        n.axx = priorInformation
        n.axv = (-tau0) * priorInformation
        n.avv = (tau0 * tau0) * priorInformation + Matrix3.scaledIdentity(velocityInformation)
        n.bx = -1 * lu
        n.bv = tau0 * lu - velocityInformation * v
        let o = k.options
        for e in window.entries {
            let tau = max(now - e.timestamp, 0)
            // Fading memory: an update `τ` old counts `exp(−τ/T)` (T = movingBatchMemory).
            let c = e.multiplicity * exp(-tau * k.inverseMemory)
            let p = x - tau * v
            if e.hasRange {
                let model = o.nominalRangeModel(from: e.antennaInWorld)
                let (r, g) = model.linearised(at: p)
                if r > 1e-6 {
                    n.add(model.residual(e.rangeMetres, r), variance: model.variance, gradient: g, age: tau, multiplicity: c,
                          density: k.rangeDensity)
                }
            }
            forEachDirectionResidual(of: e, at: p, k: k) { residual, variance, g in
                n.add(residual, variance: variance, gradient: g, age: tau, multiplicity: c, density: k.angleDensity)
            }
        }
        return n
    }

    /// Refines every hypothesis of an object that may move (a peer, or an object the app
    /// says moves) from `window`: the classic target-motion analysis of a range-only (or
    /// bearing-poor) target, solved per hypothesis as a MAP estimate of its position now
    /// `x` and a constant velocity `v` over the window.
    ///
    /// With `τ_k = now − t_k` and `p_k = x − τ_k v` where the object was at update `k`,
    /// `f(x, v) = ½ uᵀ P₀⁻¹ u + ½ |v|²/σ_v² − Σ_k c_k log p(e_k(p_k))`, `u = x − τ₀ v − μ₀`
    /// (the tile prior on where it was when the acquisition began, `τ₀ = now − t₀`), is
    /// minimised by the same reweighted Gauss–Newton as ``refine(_:window:options:addedVariance:)``
    /// (but from the hypothesis's last solution, not its prior) on the 6×6 normal equations (`MovingNormalEquations`, solved by 3×3 blocks). Laplace
    /// approximation: `μᵢ = x*`, `Pᵢ = (A⁻¹)_xx + q I`, `vᵢ = v*` with `(A⁻¹)_vv` and `(A⁻¹)_xv`. Evidence:
    /// `log wᵢ = log w₀ᵢ − f* − ½ log det(2π P₀ᵢ) − ½ log det(2π σ_v² I) + ½ log det(2π A⁻¹)`
    /// (the map from `(p(t₀), v)` to `(x, v)` has unit Jacobian).
    ///
    /// No walker keeps one velocity for long, so the window's updates fade: one `τ` seconds
    /// old counts `exp(−τ/T)` times (`c_k ← c_k e^{−τ_k/T}`, ``FusionOptions/Motion/movingBatchMemory``),
    /// the information-filter form of a velocity that wanders.
    ///
    /// Whether the motion is observable is exactly what the Laplace covariance says: ranges
    /// alone determine a moving object only once the observer's own motion breaks the
    /// ambiguity between where it is and how it moves; until then `(A⁻¹)_xx` stays wide and
    /// the convergence analysis withholds the angle. Replaces a fixed point inflated by
    /// `(σ_v T / 2)²`, which by 35 s called a 0.1 m/s walker ±17 m (mean NEES 0.14 on
    /// `distance-only-walking-peer`).
    /// - Parameters:
    ///   - mixture: the bank; each hypothesis is re-solved from its last solution, under its
    ///     own tile prior, and gets a velocity.
    ///   - window: the stored updates, each with its time.
    ///   - now: the time of the latest update, seconds (the position solved for is this one).
    ///   - start: when the acquisition began, seconds (the tile priors hold then).
    ///   - o: the noise, outlier, velocity-prior and memory settings.
    ///   - addedVariance: m², added to each position covariance (VIO drift over the window).
    public static func refineMoving(_ mixture: inout PositionMixture, window: MeasurementWindow, now: Double, start: Double,
                                    options o: FusionOptions, addedVariance: Double = 0) {
        let k = Constants(o)
        let sigmaV = max(o.motion.velocityPriorStandardDeviation, 1e-3)
        let velocityInformation = 1 / (sigmaV * sigmaV)
        let logVelocityPriorNormaliser = -0.5 * 3 * log(2 * .pi * sigmaV * sigmaV)
        mixture.transformEach { h in
            guard let priorInformation = h.priorCovariance.inverse else { return }
            let mu0 = h.priorMeanInWorld
            func cost(_ x: Vector3, _ v: Vector3, _ logLikelihood: Double) -> Double {
                let u = x - (now - start) * v - mu0
                return 0.5 * priorInformation.quadraticForm(u) + 0.5 * velocityInformation * v.lengthSquared - logLikelihood
            }
            func linearise(_ x: Vector3, _ v: Vector3) -> MovingNormalEquations {
                lineariseMoving(position: x, velocity: v, now: now, start: start, window: window, k: k,
                                priorInformation: priorInformation, priorMean: mu0, velocityInformation: velocityInformation)
            }
            // From the last solution (the tile's point, standing still, at first): a
            // hypothesis's basin moves with its object, and the 6-D problem re-solved from
            // its prior each time could land in another basin when thinning reshaped the
            // window (distance-only-walking-peer seed 1 at 24.6 s: 0.6 m → 6 m off).
            var x = h.meanInWorld, v = h.velocityInWorld
            var current = linearise(x, v)
            var f = cost(x, v, current.logLikelihood)
            for _ in 0..<20 {
                guard let solution = current.solve() else { return }
                var dx = solution.dx, dv = solution.dv
                // Steps capped at 1 m of position and 1 m/s of velocity.
                let scale = min(1, 1 / max(dx.length, 1e-12), 1 / max(dv.length, 1e-12))
                dx = scale * dx
                dv = scale * dv
                var accepted = false
                for _ in 0..<10 {
                    let cx = x + dx, cv = v + dv
                    let next = linearise(cx, cv)
                    let fNext = cost(cx, cv, next.logLikelihood)
                    if fNext <= f + 1e-9 {
                        x = cx
                        v = cv
                        current = next
                        let decrease = f - fNext
                        f = fNext
                        accepted = decrease > 1e-7 && (dx.length > 1e-5 || dv.length > 1e-5)
                        break
                    }
                    dx = 0.5 * dx
                    dv = 0.5 * dv
                }
                if !accepted { break }
            }
            guard x.isFinite, v.isFinite, let solution = current.solve(), solution.positionCovariance.isFinite,
                  solution.positionCovariance.determinant > 0 else { return }
            let logMissing = logMissingDirections(window, k: k) { x - max(now - $0.timestamp, 0) * v }
            let logPriorNormaliser = -0.5 * (log(max(h.priorCovariance.determinant, 1e-300)) + 3 * log(2 * .pi))
                + logVelocityPriorNormaliser
            let logVolume = 0.5 * (-solution.logDeterminant + 6 * log(2 * .pi))
            h.meanInWorld = x
            h.velocityInWorld = v
            h.velocityCovariance = solution.velocityCovariance
            h.positionVelocityCovariance = solution.crossCovariance
            h.covariance = (solution.positionCovariance + Matrix3.scaledIdentity(max(addedVariance, 0))).symmetrized
            h.logWeight = h.priorLogWeight - f + logPriorNormaliser + logVolume + logMissing
        }
        mixture.normalizeWeights()
    }
}
