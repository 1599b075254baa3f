import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation

/// The exact posterior of a still object's position from ranges alone, on a grid: what an
/// ideal estimator with perfect odometry and the radio's own noise model knows, for
/// comparison with the Cramér–Rao bound.
///
/// The bound `√(gᵀ J⁻¹ g)` is local: it is the spread of an efficient estimator *at the
/// truth*, and it cannot see that ranges from a few metres of hand motion leave a banana of
/// positions on the range sphere (heights ±2 m apart, each with its own bearing) that explain
/// every range almost equally well. This posterior sees it. Flat prior over the shell
/// `|‖p − a₀‖ − r₀| ≤ shellHalfWidthMetres` around the first range `r₀` from `a₀`; each range
/// `z` from `a` multiplies it by the radio's error density `p(z − ‖p − a‖)`
/// (`RangeErrorDensity`; ranges independent — the simulator's multipath bursts make
/// neighbouring ranges share their excess, so treating them as independent makes this
/// posterior slightly *narrower* than the true one, as the bound is).
///
/// Cost: `O(points)` per range (a square root and a table lookup each), with the points
/// below `e^-30` of the best dropped as they fall; the grid's spacing is chosen for about
/// 250,000 points in the first shell (16 cm at 4 m, 27 cm at 11.5 m — 2° and 1.4° of
/// bearing: fine enough to judge a 10° σ).
public struct RangeOnlyPosterior: Sendable {
    /// Grid points, metres, world frame (structure of arrays).
    private var x: [Double], y: [Double], z: [Double]
    /// Log-likelihood of each point, nats.
    private var logLikelihood: [Double]
    /// `log p(e)` of the density given at `init`, at 1 mm steps over ±8 m.
    private let logDensity: LogDensityTable
    /// Points whose log-likelihood falls this far below the best are dropped, nats.
    private static let pruneMargin = 30.0

    /// Number of grid points still carrying weight.
    public var pointCount: Int { x.count }

    /// The first range `r₀` (metres) from `a₀`, and the radio's error density with the
    /// variance of its Gaussian part (m²).
    public init(firstRangeMetres r0: Double, antennaInWorld a0: Vector3, density: RangeErrorDensity, variance: Double,
                shellHalfWidthMetres: Double = 3, targetPointCount: Double = 250_000) {
        self.init(firstRangeMetres: r0, antennaInWorld: a0,
                  logDensity: LogDensityTable(from: -8, to: 8, step: 0.001) { density.density($0, variance: variance) },
                  shellHalfWidthMetres: shellHalfWidthMetres, targetPointCount: targetPointCount)
    }

    /// The same from a tabulated density (``LogDensityTable``), which every later range takes
    /// unless ``add(rangeMetres:antennaInWorld:logDensity:)`` gives its own.
    public init(firstRangeMetres r0: Double, antennaInWorld a0: Vector3, logDensity: LogDensityTable,
                shellHalfWidthMetres: Double = 3, targetPointCount: Double = 250_000) {
        self.logDensity = logDensity
        let outer = r0 + shellHalfWidthMetres, inner = max(r0 - shellHalfWidthMetres, 0)
        let volume = 4 / 3 * Double.pi * (outer * outer * outer - inner * inner * inner)
        let h = Foundation.cbrt(volume / targetPointCount)
        let n = Int((outer / h).rounded(.up))
        x = []; y = []; z = []; logLikelihood = []
        for i in -n...n {
            for j in -n...n {
                for k in -n...n {
                    let d = Vector3(Double(i) * h, Double(j) * h, Double(k) * h)
                    let r = d.length
                    guard r >= inner, r <= outer else { continue }
                    x.append(a0.x + d.x); y.append(a0.y + d.y); z.append(a0.z + d.z)
                    logLikelihood.append(0)
                }
            }
        }
        add(rangeMetres: r0, antennaInWorld: a0)
    }

    /// Multiplies the posterior by one range's likelihood `p(z − ‖p − a‖)` under the density
    /// given at `init`, then drops the points that fell more than 30 nats below the best.
    public mutating func add(rangeMetres zMetres: Double, antennaInWorld a: Vector3) {
        add(rangeMetres: zMetres, antennaInWorld: a, logDensity: logDensity)
    }

    /// The same under this range's own density (a radio whose noise its signal sets).
    public mutating func add(rangeMetres zMetres: Double, antennaInWorld a: Vector3, logDensity: LogDensityTable) {
        var best = -Double.infinity
        for i in x.indices {
            let dx = x[i] - a.x, dy = y[i] - a.y, dz = z[i] - a.z
            logLikelihood[i] += logDensity(zMetres - (dx * dx + dy * dy + dz * dz).squareRoot())
            best = max(best, logLikelihood[i])
        }
        prune(below: best - Self.pruneMargin)
    }

    /// Drops the points whose log-likelihood is below `floor`.
    private mutating func prune(below floor: Double) {
        var kept = 0
        for i in x.indices where logLikelihood[i] >= floor {
            x[kept] = x[i]; y[kept] = y[i]; z[kept] = z[i]; logLikelihood[kept] = logLikelihood[i]
            kept += 1
        }
        x.removeLast(x.count - kept); y.removeLast(y.count - kept); z.removeLast(z.count - kept)
        logLikelihood.removeLast(logLikelihood.count - kept)
    }

    /// Multiplies the posterior by a Gaussian prior `N(p; μ, Σ)` over the position (metres,
    /// m², world frame): a carried tag's prior of where it was, widened by how far it could
    /// have been carried (`FusionOptions.carry.speed`), as the engine weighs its tiles.
    /// Then drops the points that fell more than 30 nats below the best. A `Σ` that cannot
    /// be inverted leaves the posterior unchanged.
    public mutating func multiply(byGaussianWithMean mean: Vector3, covariance: Matrix3) {
        guard let inverse = covariance.inverse, inverse.isFinite else { return }
        var best = -Double.infinity
        for i in x.indices {
            logLikelihood[i] -= 0.5 * inverse.quadraticForm(Vector3(x[i], y[i], z[i]) - mean)
            best = max(best, logLikelihood[i])
        }
        prune(below: best - Self.pruneMargin)
    }

    /// The posterior's bearing σ seen from `a`, radians: `√(Σ wᵢ (ψᵢ − ψ̄)²)` with
    /// `ψ = atan2(d_x, −d_z)`, `d = pᵢ − a`, around the circular mean `ψ̄` (the spread the
    /// engine's coaching reads, `ConvergenceAssessment.horizontalAngleStandardDeviation`).
    public func bearingStandardDeviation(from a: Vector3) -> Double {
        guard let best = logLikelihood.max() else { return .pi }
        return Angle.circularSpread(count: x.count, weight: { exp(logLikelihood[$0] - best) },
                                    angle: { atan2(x[$0] - a.x, -(z[$0] - a.z)) })
    }

    /// The posterior's circular mean bearing seen from `a`, radians: `ψ̄ = atan2(Σ wᵢ sin ψᵢ,
    /// Σ wᵢ cos ψᵢ)` with `ψ = atan2(d_x, −d_z)`, `d = pᵢ − a`, `wᵢ ∝ exp(ℓᵢ)` — the bearing an
    /// ideal estimator publishes, about which ``bearingStandardDeviation(from:)`` measures its
    /// spread. `sin ψ = d_x/ρ` and `cos ψ = −d_z/ρ` (`ρ` the horizontal distance), so no arc
    /// tangent per point. `nil` when no point carries weight off the vertical through `a`.
    public func meanBearing(from a: Vector3) -> Double? {
        guard let best = logLikelihood.max() else { return nil }
        var sinSum = 0.0, cosSum = 0.0
        for i in x.indices {
            let dx = x[i] - a.x, minusDz = a.z - z[i]
            let rho = (dx * dx + minusDz * minusDz).squareRoot()
            guard rho > 0 else { continue }
            let w = exp(logLikelihood[i] - best) / rho
            sinSum += w * dx
            cosSum += w * minusDz
        }
        return sinSum == 0 && cosSum == 0 ? nil : atan2(sinSum, cosSum)
    }

    /// The posterior's mean distance from `a` (metres, world frame): `Σ wᵢ ‖pᵢ − a‖`, `wᵢ ∝ exp(ℓᵢ)`
    /// normalised — the distance an ideal estimator publishes (the posterior mean minimises
    /// the expected squared error).
    public func meanDistance(from a: Vector3) -> Double {
        let best = logLikelihood.max() ?? 0
        var total = 0.0, sum = 0.0
        for i in x.indices {
            let w = exp(logLikelihood[i] - best)
            let dx = x[i] - a.x, dy = y[i] - a.y, dz = z[i] - a.z
            total += w
            sum += w * (dx * dx + dy * dy + dz * dz).squareRoot()
        }
        return sum / total
    }

    /// The posterior's mean (m, world) and covariance (m²): `μ = Σ wᵢ pᵢ`,
    /// `C = Σ wᵢ (pᵢ − μ)(pᵢ − μ)ᵀ`, `wᵢ ∝ exp(ℓᵢ)` normalised — the Gaussian summary whose
    /// NEES is comparable with an estimator's.
    public func moments() -> (meanInWorld: Vector3, covariance: Matrix3) {
        let best = logLikelihood.max() ?? 0
        var total = 0.0, sum = Vector3.zero
        for i in x.indices {
            let w = exp(logLikelihood[i] - best)
            total += w
            sum += w * Vector3(x[i], y[i], z[i])
        }
        let mean = (1 / total) * sum
        var covariance = Matrix3.zero
        for i in x.indices {
            let d = Vector3(x[i], y[i], z[i]) - mean
            covariance = covariance + (exp(logLikelihood[i] - best) / total) * Matrix3.outer(d, d)
        }
        return (mean, covariance.symmetrized)
    }
}

/// `log p(e)` of a range error density, tabulated at even steps over `[lower, upper]`
/// (metres) and interpolated linearly between them; held at its end values beyond (a range
/// further off than the table reaches is weighed as one at its edge), and at least `−10⁶`
/// where the density is zero.
public struct LogDensityTable: Sendable {
    /// `log p` at `lower + k · step`.
    private let values: [Double]
    /// The table's first abscissa and its step, metres.
    private let lower: Double, step: Double

    /// Tabulates `density` (m⁻¹, a function of the error in metres) from `lower` to `upper`
    /// metres every `step` metres (at least two entries, at most ten million; a step that is not
    /// positive and finite, or bounds that are not, give the two ends alone).
    public init(from lower: Double, to upper: Double, step: Double, density: (Double) -> Double) {
        let steps = (upper - lower) / step
        let takesStep = steps.isFinite && steps >= 1
        let count = takesStep ? Int(min(steps.rounded(), 1e7)) + 1 : 2
        let step = takesStep ? step : max(upper - lower, 0)
        values = (0..<count).map { k in
            let p = log(density(lower + Double(k) * step))
            return p.isNaN ? -1e6 : max(p, -1e6)
        }
        self.lower = lower
        self.step = step
    }

    /// `log p(e)`, nats (`e` NaN: the table's first entry).
    @inline(__always)
    public func callAsFunction(_ e: Double) -> Double {
        // (Below the table, or NaN: its first entry; beyond it: its last.)
        let v = (e - lower) / step
        let u = v >= 0 ? min(v, Double(values.count - 1) - 1e-9) : 0
        let k = Int(u), f = u - Double(k)
        return values[k] + f * (values[k + 1] - values[k])
    }
}
