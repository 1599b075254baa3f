import Foundation

/// Batch re-linearisation of the hypotheses (a windowed, iterated MAP smoother).
///
/// An EKF linearises each measurement once, at the estimate of the moment. Right after
/// the sphere is tiled a hypothesis can sit far from where its measurements point, and
/// the information it accumulates along wrong directions makes it overconfident (the
/// classic failure of range-only EKFs). While an object is being acquired, each
/// hypothesis `i` is therefore recomputed from its tile prior `N(μ₀ᵢ, P₀ᵢ)` and every
/// stored update (``MeasurementWindow``):
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
public enum BatchRefinement {
    struct Constants {
        let azVariance, elVariance: Double
        /// The robust densities of a range residual and of an angle residual (the latter
        /// symmetric, `(1 − ε) N + ε/span`: ``RangeErrorDensity`` without its multipath term).
        let rangeDensity, angleDensity: RangeErrorDensity
        let options: FusionOptions

        init(_ o: FusionOptions) {
            azVariance = o.azimuthStandardDeviation * o.azimuthStandardDeviation
            elVariance = o.elevationStandardDeviation * o.elevationStandardDeviation
            rangeDensity = o.rangeErrorDensity
            angleDensity = RangeErrorDensity(outlierProbability: o.outlierProbability, outlierSpan: o.angleOutlierSpan,
                                             excessProbability: 0, excessRange: 0...0)
            options = o
        }
    }

    /// The robust term of one residual `e` with variance `v` under `density`: with the
    /// line-of-sight probability `π = (1 − ε − η) N(e; 0, v) / p(e)`, adds `c π/v · g gᵀ` to
    /// `a`, `c π e/v · g` to `b`, and returns `c log p(e)`.
    @inline(__always)
    static func accumulate(_ e: Double, variance v: Double, gradient g: Vector3, multiplicity c: Double,
                           density: RangeErrorDensity, a: inout Matrix3, b: inout Vector3) -> Double {
        let inlier = density.inlier(e, variance: v)
        let total = inlier + density.notInlier(e, variance: v)
        let w = c * (inlier / total) / v
        a += w * Matrix3.outer(g, g)
        b += (w * e) * g
        return c * log(total)
    }

    /// Normal equations and robust log-likelihood of the window at `x`.
    static func linearise(at x: Vector3, window: MeasurementWindow, k: Constants,
                          priorInformation: Matrix3, priorMean: Vector3) -> (a: Matrix3, b: Vector3, logLikelihood: Double) {
        var a = priorInformation
        var b = priorInformation * (priorMean - x)
        var logLikelihood = 0.0
        // Each residual and its gradient come from the measurement models the EKF uses
        // (``RangeModel``, ``AzimuthModel``, ``DirectionModel``), linearised at `x`.
        let o = k.options
        for e in window.entries {
            let c = e.multiplicity
            if e.hasRange {
                // The nominal σ_r, not σ(z) (``FusionOptions/rangeErrorFraction``):
                // measured, σ(z) here made acquisition slower on every distance-only path
                // (behind-user: 13 of 20 runs no longer converged within the run) and put
                // eee_01's angle p95 at 5.1° instead of 3.3°. The window spans seconds, over which
                // the long-range error σ(z) models is mostly one common offset that the
                // hypotheses' priors and the gate already absorb; the tracking EKF, which
                // integrates minutes of ranges, needs it.
                let model = o.nominalRangeModel(from: e.antennaInWorld)
                let (r, g) = model.linearised(at: x)
                if r > 1e-6 {
                    logLikelihood += accumulate(model.residual(e.rangeMetres, r), variance: model.variance, gradient: g,
                                                multiplicity: c, density: k.rangeDensity, a: &a, b: &b)
                }
            }
            switch e.direction {
            case .none: break
            case .azimuth:
                let model = o.azimuthModel(from: e.antennaInWorld, worldFromDevice: e.worldFromDevice)
                let (h, g) = model.linearised(at: x)
                guard g != .zero else { break }   // on the device's ±Y axis: no information
                logLikelihood += accumulate(model.residual(e.angles.x, h), variance: k.azVariance, gradient: g, multiplicity: c,
                                            density: k.angleDensity, a: &a, b: &b)
            case .azimuthElevation:
                let model = o.directionModel(from: e.antennaInWorld, worldFromDevice: e.worldFromDevice)
                let (h, j) = model.linearised(at: x)
                guard j.row0 != .zero else { break }
                let residual = model.residual(e.angles, h)
                logLikelihood += accumulate(residual.x, variance: k.azVariance, gradient: j.row0, multiplicity: c,
                                            density: k.angleDensity, a: &a, b: &b)
                logLikelihood += accumulate(residual.y, variance: k.elVariance, gradient: j.row1, multiplicity: c,
                                            density: k.angleDensity, a: &a, b: &b)
            }
        }
        return (a, b, logLikelihood)
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
    ///   drift (``FusionOptions/vioDriftFraction``).
    public static func refine(_ mixture: inout PositionMixture, window: MeasurementWindow, options o: FusionOptions,
                              addedVariance: Double = 0) {
        let k = Constants(o)
        mixture.transformEach { h in
            guard let priorInformation = h.priorCovariance.inverse else { return }
            let mu0 = h.priorMeanInWorld
            func cost(_ x: Vector3, _ logLikelihood: Double) -> Double {
                0.5 * priorInformation.quadraticForm(x - mu0) - logLikelihood
            }
            var x = mu0
            var current = linearise(at: x, window: window, k: k, priorInformation: priorInformation, priorMean: mu0)
            var f = cost(x, current.logLikelihood)
            for _ in 0..<20 {
                guard let inverse = current.a.inverse else { return }
                var step = inverse * current.b
                let n = step.length
                if n > 1 { step = step / n }
                var accepted = false
                for _ in 0..<10 {
                    let candidate = x + step
                    let next = linearise(at: candidate, window: window, k: k, priorInformation: priorInformation, priorMean: mu0)
                    let fNext = cost(candidate, next.logLikelihood)
                    if fNext <= f + 1e-9 {
                        x = candidate
                        current = next
                        let decrease = f - fNext
                        f = fNext
                        accepted = decrease > 1e-7 && step.length > 1e-5
                        break
                    }
                    step = 0.5 * step
                }
                if !accepted { break }
            }
            guard x.isFinite, let covariance = current.a.inverse, covariance.isFinite, covariance.determinant > 0 else { return }
            var logMissing = 0.0
            for e in window.entries where e.directionMissing && e.direction == .none {
                let theta = DeviceAngles.offAxisAngle(e.worldFromDevice.inverseRotate(x - e.antennaInWorld))
                logMissing += e.multiplicity * log(max(k.options.missingDirectionLikelihood(offAxisAngle: theta), 1e-300))
            }
            let logPriorNormaliser = -0.5 * (log(max(h.priorCovariance.determinant, 1e-300)) + 3 * log(2 * .pi))
            let logVolume = 0.5 * (log(covariance.determinant) + 3 * log(2 * .pi))
            h.meanInWorld = x
            h.covariance = (covariance + Matrix3.scaledIdentity(max(addedVariance, 0))).symmetrized
            h.logWeight = h.priorLogWeight - f + logPriorNormaliser + logVolume + logMissing
        }
        mixture.normalizeWeights()
    }
}
