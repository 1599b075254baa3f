import Foundation

/// A still object's position from ranges alone as a grid of directions about the antenna
/// position of its first range, each direction holding a Gaussian over the distance along
/// it: the exact posterior's shape (a shell narrowing to a band, a ring, a mirror pair) at a
/// cost of one scalar filter step per live direction and range.
///
/// Position of direction `j`: `pⱼ = a₀ + ρⱼ uⱼ` (world frame, metres), `uⱼ` fixed unit
/// vectors on a Fibonacci sphere (`n` of them, about `√(4π/n)` radians apart: 9° at 500),
/// `ρⱼ ~ N(mⱼ, Pⱼ)`, log weight `ℓⱼ`. Along one direction a few ranges narrow the distance
/// to about the range noise, a single peak, so one Gaussian per direction carries what a
/// radial grid would; across directions the posterior is left free.
///
/// A range `z` (metres) from antenna `a`, with `R` the radio's line-of-sight variance (m²):
/// 1. prediction `h = ‖pⱼ − a‖`, slope `H = uⱼ·(pⱼ − a)/h`, innovation `ν = z − h`, its
///    variance `S = H² Pⱼ + R`;
/// 2. weight `ℓⱼ ← ℓⱼ + log p_S(ν)`, `p_S` the robust density `RangeErrorDensity` at `S`:
///    `(1 − ε − η) N(ν; 0, S) + η q(ν) + ε/span`, read from tables at `R` with `ν` scaled by
///    `s = √(R/S)` (`N(ν; 0, S) = s N(sν; 0, R)` exactly; the multipath term `q` at `sν`, its
///    edges blurred by `R` instead of `S`);
/// 3. with a burst chain (`burstForgettingRate` `λ > 0`), the filtered probability `αⱼ` that
///    the range is line of sight: `ρ = e^{−λΔt}`, `α⁻ = α(1 − η(1 − ρ)) + (1 − α)(1 − η)(1 − ρ)`,
///    emissions `e_A = [(1 − ε − η)N + (1 − η)ε/span]/(1 − η)`, `e_B = [ηq + ηε/span]/η`,
///    `f_A = α⁻ e_A`, `f_B = (1 − α⁻) e_B`, `ℓⱼ ← ℓⱼ + log(f_A + f_B)`, `αⱼ = f_A/(f_A + f_B)`
///    (the forward pass of the batch's chain, `BatchRefinement.lineariseWithBursts`);
/// 4. the distance's scalar Kalman step, weighed by the range's line-of-sight share `π`
///    (`(1 − ε − η)N / p_S` independent, `αⱼ (1 − ε − η)N / [(1 − ε − η)N + (1 − η)ε/span]`
///    with the chain): `K = Pⱼ H / S`, `mⱼ ← mⱼ + π K ν`, `Pⱼ ← (1 − π K H) Pⱼ`;
/// 5. directions more than ``pruneMargin`` nats below the best are dropped.
///
/// A direction stands for its cell of the sphere, `4π/n` steradians: the tangential spread
/// of a point spread evenly over a square cell of side `δ = √(4π/n)` at distance `m`,
/// `(δm)²/12` on each axis across `u`, is part of every covariance the grid reports
/// (``moments``, ``summarise(_:)``), which keeps a cluster of one direction positive definite.
///
/// For a bank of Gaussians (the engine's convergence analysis and guidance read one), the
/// grid is summarised as moment-matched clusters: each direction belongs to the nearest of
/// `clusterCount` coarser Fibonacci directions, and each cluster is reported with its share of
/// the weight, its mean and its covariance (``summarise(_:)``); together they have the grid's
/// own mean and covariance.
///
/// Storage is made at ``init(directionCount:clusterCount:density:variance:burstForgettingRate:)`` and
/// reused by every ``start(rangeMetres:antennaInWorld:at:startOffsetMetres:startStandardDeviationMetres:)``
/// and ``summarise(_:)``: nothing is allocated per range. Cost: `O(live directions)` per
/// range, about as many square roots and divisions.
@_spi(Internals) public struct DirectionGrid: Sendable {
    /// One direction: its unit vector (world frame), the distance along it (mean, metres;
    /// variance, m²), its log weight (nats) and its probability of line of sight.
    struct Direction: Sendable {
        var unit: Vector3
        var distanceMetres: Double
        var distanceVariance: Double
        var logWeight: Double
        var lineOfSight: Double
        /// The coarse direction whose cluster this one belongs to (``summarise(_:)``).
        var cluster: Int
    }

    /// One cluster's sums over its directions: `Σ w`, `Σ w p`, `Σ w (p pᵀ + Σ_cell)`.
    struct ClusterSums: Sendable {
        var weight = 0.0
        var first = Vector3.zero
        var second = Matrix3.zero
    }

    /// Directions more than this many nats below the best are dropped.
    public static let pruneMargin = 30.0
    /// The tables' step and half-width, metres (residuals beyond are clamped).
    static let tableStep = 0.002, tableHalfWidth = 10.0

    private var directions: ContiguousArray<Direction>
    /// The Fibonacci sphere's unit vectors, computed once, and the cluster of each.
    private let units: ContiguousArray<Vector3>, clusterOfUnit: ContiguousArray<Int>
    /// `(4π/n)/12`, rad²: a direction's cell spread across it, per axis, per metre² of distance.
    private let cellAngularVariance: Double
    private var clusterSums: ContiguousArray<ClusterSums>
    /// `(1 − ε − η) N(e; 0, R)` and `η q(e)` at `e = −tableHalfWidth + k tableStep`, m⁻¹.
    private let inlierTable: ContiguousArray<Double>, excessTable: ContiguousArray<Double>
    /// `ε/span`, m⁻¹, and `η`.
    private let outlierDensity: Double, multipathProbability: Double
    /// `R`, m²: the line-of-sight variance the tables are at.
    public let variance: Double
    /// `λ`, 1/s: 0 takes ranges as independent.
    public let burstForgettingRate: Double
    /// `a₀`, world frame, metres: where the first range was measured from.
    public private(set) var originInWorld = Vector3.zero
    private var lastRangeTime = -Double.infinity

    /// Grid of `directionCount` directions, summarised in at most `clusterCount` clusters, for
    /// a radio with error density `density` whose line-of-sight part has `variance` (m²);
    /// `burstForgettingRate` (1/s, `1/(τ(1 − η))` for bursts of mean `τ` seconds) > 0 weighs
    /// the ranges through the multipath chain.
    public init(directionCount: Int, clusterCount: Int = 64, density: RangeErrorDensity, variance: Double,
                burstForgettingRate: Double = 0) {
        let n = max(directionCount, 1), k = max(min(clusterCount, n), 1)
        units = ContiguousArray(Self.fibonacciSphere(n))
        let centres = Self.fibonacciSphere(k)
        clusterOfUnit = ContiguousArray(units.map { u in
            var best = 0
            for i in centres.indices where centres[i].dot(u) > centres[best].dot(u) { best = i }
            return best
        })
        cellAngularVariance = 4 * .pi / Double(n) / 12
        clusterSums = ContiguousArray(repeating: ClusterSums(), count: k)
        let count = Int(2 * Self.tableHalfWidth / Self.tableStep) + 1
        let errors = (0..<count).map { -Self.tableHalfWidth + Double($0) * Self.tableStep }
        inlierTable = ContiguousArray(errors.map { density.inlier($0, variance: variance) })
        excessTable = ContiguousArray(errors.map { density.excess($0, variance: variance) })
        outlierDensity = density.outlierDensity
        multipathProbability = density.excessProbability
        self.variance = variance
        self.burstForgettingRate = multipathProbability > 0 && multipathProbability < 1 ? max(burstForgettingRate, 0) : 0
        directions = []
        directions.reserveCapacity(n)
    }

    /// `n` unit vectors on the Fibonacci sphere: `y = 1 − 2(i + ½)/n`, azimuth `i π(3 − √5)`.
    static func fibonacciSphere(_ n: Int) -> [Vector3] {
        let golden = Double.pi * (3 - 5.0.squareRoot())
        return (0..<n).map { i in
            let y = 1 - 2 * (Double(i) + 0.5) / Double(n)
            let r = (1 - y * y).squareRoot(), phi = Double(i) * golden
            return Vector3(cos(phi) * r, y, sin(phi) * r)
        }
    }

    /// Live directions.
    public var count: Int { directions.count }
    /// Whether nothing has been started (or every direction was dropped).
    public var isEmpty: Bool { directions.isEmpty }

    /// Starts afresh from a first range `r` (metres) measured from `a` (world frame) at `t`
    /// (seconds): every direction at distance `r − offset` with standard deviation `σ`
    /// (metres; a long first range, multipath, lies up to the excess beyond the truth), then
    /// weighed by the range itself.
    public mutating func start(rangeMetres r: Double, antennaInWorld a: Vector3, at t: Double,
                               startOffsetMetres offset: Double = 0.5, startStandardDeviationMetres sigma: Double = 1.0) {
        directions.removeAll(keepingCapacity: true)
        originInWorld = a
        let alpha = 1 - multipathProbability
        for (u, cluster) in zip(units, clusterOfUnit) {
            directions.append(Direction(unit: u, distanceMetres: max(r - offset, 0), distanceVariance: sigma * sigma,
                                        logWeight: 0, lineOfSight: alpha, cluster: cluster))
        }
        lastRangeTime = -Double.infinity
        add(rangeMetres: r, antennaInWorld: a, at: t)
    }

    /// Weighs the grid by one range `z` (metres) measured from `a` (world frame) at `t`
    /// (seconds), steps each direction's distance (steps 1–4 of the type's description) and
    /// drops the directions that fell behind (step 5). A non-finite range, antenna position or
    /// time changes nothing.
    public mutating func add(rangeMetres z: Double, antennaInWorld a: Vector3, at t: Double) {
        guard !directions.isEmpty, z.isFinite, a.isFinite, t.isFinite else { return }
        let r = variance, eta = multipathProbability, outlier = outlierDensity
        let inverseStep = 1 / Self.tableStep, last = Double(inlierTable.count - 1) - 1e-9
        let chained = burstForgettingRate > 0
        let first = lastRangeTime == -.infinity
        let persistence = first || !chained ? 0 : exp(-max(t - lastRangeTime, 0) * burstForgettingRate)
        lastRangeTime = t
        let b = originInWorld - a
        var best = -Double.infinity
        inlierTable.withUnsafeBufferPointer { inlierAt in
            excessTable.withUnsafeBufferPointer { excessAt in
                directions.withUnsafeMutableBufferPointer { grid in
                    for j in grid.indices {
                        var d = grid[j]
                        let offset = b + d.distanceMetres * d.unit
                        let h = offset.length
                        guard h > 1e-9 else { continue }
                        let slope = d.unit.dot(offset) / h
                        let x = slope * slope * d.distanceVariance / r
                        let s = r * (1 + x)
                        let nu = z - h
                        let scale = 1 / (1 + x).squareRoot()
                        let u = min(max((nu * scale + Self.tableHalfWidth) * inverseStep, 0), last)
                        let k = Int(u), f = u - Double(k)
                        let inlier = (inlierAt[k] + f * (inlierAt[k + 1] - inlierAt[k])) * scale
                        let excess = excessAt[k] + f * (excessAt[k + 1] - excessAt[k])
                        let share: Double
                        if chained {
                            let los = inlier + (1 - eta) * outlier
                            let emitA = los / (1 - eta), emitB = (excess + eta * outlier) / eta
                            let predicted = first ? 1 - eta
                                : d.lineOfSight * (1 - eta * (1 - persistence)) + (1 - d.lineOfSight) * (1 - eta) * (1 - persistence)
                            let fA = predicted * emitA, total = fA + (1 - predicted) * emitB
                            d.logWeight += log(max(total, 1e-300))
                            d.lineOfSight = total > 0 ? fA / total : 1 - eta
                            share = los > 0 ? d.lineOfSight * inlier / los : 0
                        } else {
                            let total = inlier + excess + outlier
                            d.logWeight += log(max(total, 1e-300))
                            share = total > 0 ? inlier / total : 0
                        }
                        let gain = share * d.distanceVariance * slope / s
                        d.distanceMetres += gain * nu
                        d.distanceVariance -= gain * slope * d.distanceVariance
                        best = max(best, d.logWeight)
                        grid[j] = d
                    }
                }
            }
        }
        prune(below: best - Self.pruneMargin)
    }

    /// Drops the directions whose log weight is below `floor` (or not a number).
    private mutating func prune(below floor: Double) {
        directions.removeAll { !($0.logWeight >= floor) }
    }

    /// Multiplies the grid by a Gaussian prior `N(p; μ, Σ)` over the position (metres, m²,
    /// world frame) — where a carried tag was — and drops what fell behind. A `Σ` that
    /// cannot be inverted leaves the grid unchanged.
    public mutating func multiply(byGaussianWithMean mean: Vector3, covariance: Matrix3) {
        guard let inverse = covariance.inverse, inverse.isFinite else { return }
        var best = -Double.infinity
        for j in directions.indices {
            let p = originInWorld + directions[j].distanceMetres * directions[j].unit
            directions[j].logWeight -= 0.5 * inverse.quadraticForm(p - mean)
            best = max(best, directions[j].logWeight)
        }
        prune(below: best - Self.pruneMargin)
    }

    /// The bearing σ seen from `a` (world frame), radians: `√(Σ wⱼ (ψⱼ − ψ̄)² / Σ wⱼ)`,
    /// `ψ = atan2(d_x, −d_z)` of `d = pⱼ − a`, about the circular mean `ψ̄`, `wⱼ = e^{ℓⱼ − max ℓ}`;
    /// π when the grid is empty.
    public func bearingStandardDeviation(from a: Vector3) -> Double {
        guard let best = directions.lazy.map(\.logWeight).max() else { return .pi }
        return Angle.circularSpread(count: directions.count, weight: { exp(directions[$0].logWeight - best) }, angle: { j in
            let p = originInWorld + directions[j].distanceMetres * directions[j].unit - a
            return atan2(p.x, -p.z)
        })
    }

    /// A direction's own covariance, m²: its distance's variance along `u` and its cell's
    /// spread across, `Pⱼ uuᵀ + (4π/n)/12 · mⱼ² (I − uuᵀ)`.
    @inline(__always)
    func cellCovariance(_ d: Direction) -> Matrix3 {
        let along = Matrix3.outer(d.unit, d.unit)
        return d.distanceVariance * along + (cellAngularVariance * d.distanceMetres * d.distanceMetres) * (Matrix3.identity - along)
    }

    /// The grid's mean (world frame, metres) and covariance (m²):
    /// `μ = Σ wⱼ pⱼ`, `C = Σ wⱼ ((pⱼ − μ)(pⱼ − μ)ᵀ + C_cell,ⱼ)`, weights normalised, `C_cell`
    /// each direction's own (``cellCovariance(_:)``); `nil` when empty.
    public var moments: MixtureMoments? {
        guard let best = directions.lazy.map(\.logWeight).max() else { return nil }
        var total = 0.0, sum = Vector3.zero
        for d in directions {
            let w = exp(d.logWeight - best)
            total += w
            sum += w * (originInWorld + d.distanceMetres * d.unit)
        }
        let mean = (1 / total) * sum
        var covariance = Matrix3.zero
        for d in directions {
            let offset = originInWorld + d.distanceMetres * d.unit - mean
            covariance = covariance + (exp(d.logWeight - best) / total) * (Matrix3.outer(offset, offset) + cellCovariance(d))
        }
        return MixtureMoments(meanInWorld: mean, covariance: covariance.symmetrized)
    }

    /// Calls `body(logWeight, meanInWorld, covariance)` for each cluster that holds a live
    /// direction, in the coarse directions' order: `log(Wᵢ/W)`, `μᵢ = Σ wⱼ pⱼ / Wᵢ` (world
    /// frame, metres) and `Cᵢ = Σ wⱼ (pⱼ pⱼᵀ + C_cell,ⱼ) / Wᵢ − μᵢ μᵢᵀ` (m²), the sums over the
    /// cluster's directions, `wⱼ = e^{ℓⱼ − max ℓ}`, `Wᵢ = Σ wⱼ`, `W = Σ Wᵢ`. The clusters'
    /// mixture has the grid's ``moments``.
    public mutating func summarise(_ body: (_ logWeight: Double, _ meanInWorld: Vector3, _ covariance: Matrix3) -> Void) {
        guard let best = directions.lazy.map(\.logWeight).max() else { return }
        for i in clusterSums.indices { clusterSums[i] = ClusterSums() }
        var total = 0.0
        for d in directions {
            let w = exp(d.logWeight - best), p = originInWorld + d.distanceMetres * d.unit
            clusterSums[d.cluster].weight += w
            clusterSums[d.cluster].first += w * p
            clusterSums[d.cluster].second = clusterSums[d.cluster].second + w * (Matrix3.outer(p, p) + cellCovariance(d))
            total += w
        }
        for sums in clusterSums where sums.weight > 0 {
            let mean = (1 / sums.weight) * sums.first
            body(log(sums.weight / total), mean, ((1 / sums.weight) * sums.second - Matrix3.outer(mean, mean)).symmetrized)
        }
    }
}
