import Foundation

/// A still object's position from ranges alone as a grid of directions about the antenna
/// position of its first range, each direction holding a Gaussian over the distance along
/// it: the exact posterior's shape (a shell narrowing to a band, a ring, a mirror pair) at a
/// cost of one scalar filter step per live direction and range.
///
/// Position of direction `j`: `pⱼ = a₀ + ρⱼ uⱼ` (world frame, metres), `uⱼ` fixed unit
/// vectors on a Fibonacci sphere (`n` of them, about `√(4π/n)` radians apart: 9° at 500),
/// `ρⱼ ~ N(mⱼ, Pⱼ)`, weight `wⱼ` (relative to the heaviest's, kept in `(0, 1]`). Along one direction a few ranges narrow the distance
/// to about the range noise, a single peak, so one Gaussian per direction carries what a
/// radial grid would; across directions the posterior is left free.
///
/// A range `z` (metres) from antenna `a`, with `R` the radio's line-of-sight variance (m²):
/// 1. prediction `h = ‖pⱼ − a‖`, slope `H = uⱼ·(pⱼ − a)/h`, innovation `ν = z − h`, its
///    variance `S = H² Pⱼ + R`;
/// 2. weight `wⱼ ← wⱼ p_S(ν)`, `p_S` the robust density `RangeErrorDensity` at `S`:
///    `(1 − ε − η) N(ν; 0, S) + η q(ν) + ε/span`, read from tables at `R` with `ν` scaled by
///    `s = √(R/S)` (`N(ν; 0, S) = s N(sν; 0, R)` exactly; the multipath term `q` at `sν`, its
///    edges blurred by `R` instead of `S`); `R` is retabulated when a radio's noise is learned
///    (``tabulate(variance:)``);
/// 3. with a burst chain (`burstForgettingRate` `λ > 0`), the filtered probability `αⱼ` that
///    the range is line of sight: `ρ = e^{−λΔt}`, `α⁻ = α(1 − η(1 − ρ)) + (1 − α)(1 − η)(1 − ρ)`,
///    emissions `e_A = [(1 − ε − η)N + (1 − η)ε/span]/(1 − η)`, `e_B = [ηq + ηε/span]/η`,
///    `f_A = α⁻ e_A`, `f_B = (1 − α⁻) e_B`, `wⱼ ← wⱼ (f_A + f_B)`, `αⱼ = f_A/(f_A + f_B)`
///    (the forward pass of the batch's chain, `BatchRefinement.lineariseWithBursts`);
/// 4. the distance's scalar Kalman step, weighed by the range's line-of-sight share `π`
///    (`(1 − ε − η)N / p_S` independent, `αⱼ (1 − ε − η)N / [(1 − ε − η)N + (1 − η)ε/span]`
///    with the chain): `K = Pⱼ H / S`, `mⱼ ← mⱼ + π K ν`, `Pⱼ ← (1 − π K H) Pⱼ`;
/// 5. the weights divided by the largest, and the directions below `e^{−pruneMargin}` of it
///    (``pruneMargin`` nats) dropped.
///
/// A thinned window entry standing for `c` ranges (``add(rangeMetres:antennaInWorld:at:multiplicity:)``)
/// weighs `p_S(ν)^c` and steps the distance with `S_c = H² Pⱼ + R/c` in the gain, as `c`
/// identical ranges would.
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
/// range, about as many square roots and divisions, and no logarithm or exponential: the
/// weights are kept as ratios to the heaviest. The statistics (``bearingStandardDeviation(from:)``,
/// ``meanDistance(from:)``, ``moments``, ``summarise(_:)``) leave out the directions below
/// ``statisticsFloor`` of the heaviest, whose share of any of them is below `10⁻⁷`.
@_spi(Internals) public struct DirectionGrid: Sendable {
    /// One direction: its unit vector (world frame), the distance along it (mean, metres;
    /// variance, m²), its weight relative to the heaviest's and its probability of line of sight.
    struct Direction: Sendable {
        var unit: Vector3
        var distanceMetres: Double
        var distanceVariance: Double
        var weight: Double
        var lineOfSight: Double
        /// The coarse direction whose cluster this one belongs to (``summarise(_:)``).
        var cluster: Int
    }

    /// One cluster's sums over its directions: `Σ w`, `Σ w p`, `Σ w p pᵀ`, and the cells'
    /// parts `Σ w (Pⱼ − k mⱼ²) u uᵀ` and `Σ w k mⱼ²` (``cellCovariance(_:)``'s two terms).
    struct ClusterSums: Sendable {
        var weight = 0.0
        var first = Vector3.zero
        var second = Matrix3.zero
        var isotropic = 0.0
    }

    /// Directions more than this many nats below the best are dropped.
    public static let pruneMargin = 30.0
    /// The weight, relative to the heaviest, below which a direction is left out of the statistics.
    public static let statisticsFloor = 1e-10
    /// `e^{−pruneMargin}`.
    static let pruneFloor = exp(-pruneMargin)
    /// Entries of each table, over `±max(10 m, 8√R)` (residuals beyond are clamped).
    static let tableCount = 10_001

    private var directions: ContiguousArray<Direction>
    /// The Fibonacci sphere's unit vectors, computed once, and the cluster of each.
    private let units: ContiguousArray<Vector3>, clusterOfUnit: ContiguousArray<Int>
    /// `k = (4π/n)/12`, rad²: a direction's cell spread across it, per axis, per metre² of distance.
    private let cellAngularVariance: Double
    private var clusterSums: ContiguousArray<ClusterSums>
    /// `(1 − ε − η) N(e; 0, R)` and `η q(e)` at `e = −tableHalfWidth + k tableStep`, m⁻¹.
    private var inlierTable: ContiguousArray<Double>, excessTable: ContiguousArray<Double>
    /// The tables' half-width and step, metres.
    private var tableHalfWidth = 10.0, tableStep = 0.002
    /// The radio's error density the tables hold.
    private let density: RangeErrorDensity
    /// `ε/span`, m⁻¹, and `η`.
    private let outlierDensity: Double, multipathProbability: Double
    /// `R`, m²: the line-of-sight variance the tables are at (``tabulate(variance:)``).
    public private(set) var variance: Double
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
        inlierTable = ContiguousArray(repeating: 0, count: Self.tableCount)
        excessTable = ContiguousArray(repeating: 0, count: Self.tableCount)
        self.density = density
        outlierDensity = density.outlierDensity
        multipathProbability = density.excessProbability
        self.variance = 0
        self.burstForgettingRate = density.excessProbability > 0 && density.excessProbability < 1 ? max(burstForgettingRate, 0) : 0
        directions = []
        directions.reserveCapacity(n)
        tabulate(variance: variance)
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

    /// Fills the tables for a line-of-sight variance `v` (m², a radio's learned noise), in the
    /// storage they have: `(1 − ε − η) N(e; 0, v)` and `η q(e)`, `q` the excess `U(0, L)` blurred
    /// by `v`, at `10,001` residuals over `±max(10 m, 8√v)`. Directions already weighed keep
    /// their weights; the next ranges are weighed at `v`. Nothing changes when `v` is the
    /// variance in use, or is not a positive finite number.
    public mutating func tabulate(variance v: Double) {
        guard v > 0, v.isFinite, v != variance else { return }
        variance = v
        tableHalfWidth = max(10, 8 * v.squareRoot())
        tableStep = 2 * tableHalfWidth / Double(Self.tableCount - 1)
        let (halfWidth, step, density) = (tableHalfWidth, tableStep, density)
        inlierTable.withUnsafeMutableBufferPointer { table in
            for k in table.indices { table[k] = density.inlier(-halfWidth + Double(k) * step, variance: v) }
        }
        excessTable.withUnsafeMutableBufferPointer { table in
            for k in table.indices { table[k] = density.excess(-halfWidth + Double(k) * step, variance: v) }
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
                                        weight: 1, lineOfSight: alpha, cluster: cluster))
        }
        lastRangeTime = -Double.infinity
        add(rangeMetres: r, antennaInWorld: a, at: t)
    }

    /// Weighs the grid by one range `z` (metres) measured from `a` (world frame) at `t`
    /// (seconds), steps each direction's distance (steps 1–4 of the type's description) and
    /// drops the directions that fell behind (step 5). A non-finite range, antenna position or
    /// time changes nothing.
    ///
    /// `multiplicity` `c` (a thinned window entry standing for `c` ranges) counts its density
    /// `c` times and steps the distance as `c` such ranges would, with `R/c`.
    public mutating func add(rangeMetres z: Double, antennaInWorld a: Vector3, at t: Double, multiplicity: Double = 1) {
        guard !directions.isEmpty, z.isFinite, a.isFinite, t.isFinite, multiplicity >= 1 else { return }
        let r = variance, eta = multipathProbability, outlier = outlierDensity, c = multiplicity
        let halfWidth = tableHalfWidth
        let inverseStep = 1 / tableStep, last = Double(inlierTable.count - 1) - 1e-9
        let chained = burstForgettingRate > 0
        let first = lastRangeTime == -.infinity
        let persistence = first || !chained ? 0 : exp(-max(t - lastRangeTime, 0) * burstForgettingRate)
        lastRangeTime = t
        let b = originInWorld - a
        var best = 0.0
        inlierTable.withUnsafeBufferPointer { inlierAt in
            excessTable.withUnsafeBufferPointer { excessAt in
                directions.withUnsafeMutableBufferPointer { grid in
                    for j in grid.indices {
                        var d = grid[j]
                        let offset = b + d.distanceMetres * d.unit
                        let h = offset.length
                        guard h > 1e-9 else { continue }
                        let slope = d.unit.dot(offset) / h
                        let s = slope * slope * d.distanceVariance + r
                        let nu = z - h
                        // The tables are at `R`: `N(ν; 0, S) = s N(sν; 0, R)` with `s = √(R/S)`.
                        let scale = (r / s).squareRoot()
                        let u = min(max((nu * scale + halfWidth) * inverseStep, 0), last)
                        let k = Int(u), f = u - Double(k)
                        let inlier = (inlierAt[k] + f * (inlierAt[k + 1] - inlierAt[k])) * scale
                        let excess = excessAt[k] + f * (excessAt[k + 1] - excessAt[k])
                        let share: Double, total: Double
                        if chained {
                            let los = inlier + (1 - eta) * outlier
                            let emitA = los / (1 - eta), emitB = (excess + eta * outlier) / eta
                            let predicted = first ? 1 - eta
                                : d.lineOfSight * (1 - eta * (1 - persistence)) + (1 - d.lineOfSight) * (1 - eta) * (1 - persistence)
                            let fA = predicted * emitA
                            total = fA + (1 - predicted) * emitB
                            d.lineOfSight = total > 0 ? fA / total : 1 - eta
                            share = los > 0 ? d.lineOfSight * inlier / los : 0
                        } else {
                            total = inlier + excess + outlier
                            share = total > 0 ? inlier / total : 0
                        }
                        d.weight *= c == 1 ? total : pow(total, c)
                        let gain = share * d.distanceVariance * slope / (slope * slope * d.distanceVariance + r / c)
                        d.distanceMetres += gain * nu
                        d.distanceVariance -= gain * slope * d.distanceVariance
                        best = max(best, d.weight)
                        grid[j] = d
                    }
                }
            }
        }
        rescale(by: best)
    }

    /// Divides every weight by `best` (the largest) and drops the directions that fall below
    /// `e^{−pruneMargin}` (or are not a number); a `best` that is not a positive finite number
    /// empties the grid.
    private mutating func rescale(by best: Double) {
        guard best > 0, best.isFinite else { directions.removeAll(keepingCapacity: true); return }
        let inverse = 1 / best, floor = Self.pruneFloor
        directions.withUnsafeMutableBufferPointer { grid in
            for j in grid.indices { grid[j].weight *= inverse }
        }
        directions.removeAll { !($0.weight >= floor) }
    }

    /// Forgets the burst chain's memory: the next range is weighed as a first one (a replay of
    /// older ranges after a ``start(rangeMetres:antennaInWorld:at:startOffsetMetres:startStandardDeviationMetres:)``
    /// at a later time).
    public mutating func restartChain() {
        lastRangeTime = -Double.infinity
        let alpha = 1 - multipathProbability
        for j in directions.indices { directions[j].lineOfSight = alpha }
    }

    /// Multiplies the grid by a Gaussian prior `N(p; μ, Σ)` over the position (metres, m²,
    /// world frame) — where a carried tag was — and drops what fell behind. A `Σ` that
    /// cannot be inverted leaves the grid unchanged.
    public mutating func multiply(byGaussianWithMean mean: Vector3, covariance: Matrix3) {
        guard let inverse = covariance.inverse, inverse.isFinite, !directions.isEmpty else { return }
        // In logarithms first: the factors of distant directions underflow.
        var best = -Double.infinity
        for d in directions {
            let p = originInWorld + d.distanceMetres * d.unit
            best = max(best, log(d.weight) - 0.5 * inverse.quadraticForm(p - mean))
        }
        guard best.isFinite else { return }
        for j in directions.indices {
            let p = originInWorld + directions[j].distanceMetres * directions[j].unit
            directions[j].weight = exp(log(directions[j].weight) - 0.5 * inverse.quadraticForm(p - mean) - best)
        }
        rescale(by: 1)
    }

    /// The bearing σ seen from `a` (world frame), radians: `√(Σ wⱼ (ψⱼ − ψ̄)² / Σ wⱼ)`,
    /// `ψ = atan2(d_x, −d_z)` of `d = pⱼ − a`, about the circular mean `ψ̄` (what
    /// `Angle.circularSpread(count:weight:angle:)` gives, from the horizontal unit vectors
    /// `(sin ψ, cos ψ) = (d_x, −d_z)/ρ` with one arctangent per direction); π when the grid is empty.
    public func bearingStandardDeviation(from a: Vector3) -> Double {
        guard !directions.isEmpty else { return .pi }
        let floor = Self.statisticsFloor, b = originInWorld - a
        var sinSum = 0.0, cosSum = 0.0, total = 0.0
        for d in directions where d.weight >= floor {
            let p = b + d.distanceMetres * d.unit
            let rho = (p.x * p.x + p.z * p.z).squareRoot()
            // Straight above or below the antenna a bearing is undefined; atan2(0, −0) is 0.
            let (sinPsi, cosPsi) = rho > 0 ? (p.x / rho, -p.z / rho) : (0.0, 1.0)
            sinSum += d.weight * sinPsi; cosSum += d.weight * cosPsi; total += d.weight
        }
        let norm = (sinSum * sinSum + cosSum * cosSum).squareRoot()
        let (sinMean, cosMean) = norm > 0 ? (sinSum / norm, cosSum / norm) : (0.0, 1.0)
        var spread = 0.0
        for d in directions where d.weight >= floor {
            let p = b + d.distanceMetres * d.unit
            let rho = (p.x * p.x + p.z * p.z).squareRoot()
            let (sinPsi, cosPsi) = rho > 0 ? (p.x / rho, -p.z / rho) : (0.0, 1.0)
            // ψ − ψ̄ in (−π, π]: atan2(sin(ψ − ψ̄), cos(ψ − ψ̄)).
            let dpsi = atan2(sinPsi * cosMean - cosPsi * sinMean, cosPsi * cosMean + sinPsi * sinMean)
            spread += d.weight * dpsi * dpsi
        }
        return (spread / total).squareRoot()
    }

    /// The weighted distance from `a` (world frame), metres: `Σ wⱼ ‖pⱼ − a‖ / Σ wⱼ`; `nil`
    /// when empty. What the ranges say of the distance, whatever the bearing (the mean
    /// position lies inside the range sphere while the grid is spread).
    public func meanDistance(from a: Vector3) -> Double? {
        guard !directions.isEmpty else { return nil }
        let floor = Self.statisticsFloor, b = originInWorld - a
        var total = 0.0, sum = 0.0
        for d in directions where d.weight >= floor {
            total += d.weight
            sum += d.weight * (b + d.distanceMetres * d.unit).length
        }
        return sum / total
    }

    /// A direction's own covariance, m²: its distance's variance along `u` and its cell's
    /// spread across, `Pⱼ uuᵀ + k mⱼ² (I − uuᵀ)`, `k = (4π/n)/12`.
    @inline(__always)
    func cellCovariance(_ d: Direction) -> Matrix3 {
        let cell = cellAngularVariance * d.distanceMetres * d.distanceMetres
        return (d.distanceVariance - cell) * Matrix3.outer(d.unit, d.unit) + Matrix3.scaledIdentity(cell)
    }

    /// The grid's mean (world frame, metres) and covariance (m²):
    /// `μ = Σ wⱼ pⱼ`, `C = Σ wⱼ ((pⱼ − μ)(pⱼ − μ)ᵀ + C_cell,ⱼ)`, weights normalised, `C_cell`
    /// each direction's own (``cellCovariance(_:)``); `nil` when empty.
    public var moments: MixtureMoments? {
        guard !directions.isEmpty else { return nil }
        let floor = Self.statisticsFloor
        var total = 0.0, sum = Vector3.zero
        for d in directions where d.weight >= floor {
            total += d.weight
            sum += d.weight * (originInWorld + d.distanceMetres * d.unit)
        }
        let mean = (1 / total) * sum
        var covariance = Matrix3.zero
        for d in directions where d.weight >= floor {
            let offset = originInWorld + d.distanceMetres * d.unit - mean
            covariance = covariance + (d.weight / total) * (Matrix3.outer(offset, offset) + cellCovariance(d))
        }
        return MixtureMoments(meanInWorld: mean, covariance: covariance.symmetrized)
    }

    /// Calls `body(logWeight, meanInWorld, covariance)` for each cluster that holds a live
    /// direction, in the coarse directions' order: `log(Wᵢ/W)`, `μᵢ = Σ wⱼ pⱼ / Wᵢ` (world
    /// frame, metres) and `Cᵢ = Σ wⱼ (pⱼ pⱼᵀ + C_cell,ⱼ) / Wᵢ − μᵢ μᵢᵀ` (m²), the sums over the
    /// cluster's directions, `Wᵢ = Σ wⱼ`, `W = Σ Wᵢ`. The clusters' mixture has the grid's
    /// ``moments``. The points are summed about the grid's origin `a₀` (the same covariance,
    /// without the cancellation of large world coordinates).
    public mutating func summarise(_ body: (_ logWeight: Double, _ meanInWorld: Vector3, _ covariance: Matrix3) -> Void) {
        guard !directions.isEmpty else { return }
        let floor = Self.statisticsFloor, k = cellAngularVariance
        var total = 0.0
        clusterSums.withUnsafeMutableBufferPointer { sums in
            for i in sums.indices { sums[i] = ClusterSums() }
            for d in directions where d.weight >= floor {
                let w = d.weight, q = d.distanceMetres * d.unit
                let cell = k * d.distanceMetres * d.distanceMetres
                sums[d.cluster].weight += w
                sums[d.cluster].first += w * q
                sums[d.cluster].second = sums[d.cluster].second + Matrix3.outer(w * q, q) + (w * (d.distanceVariance - cell)) * Matrix3.outer(d.unit, d.unit)
                sums[d.cluster].isotropic += w * cell
                total += w
            }
        }
        for sums in clusterSums where sums.weight > 0 {
            let inverse = 1 / sums.weight
            let mean = inverse * sums.first
            let covariance = inverse * sums.second + Matrix3.scaledIdentity(inverse * sums.isotropic) - Matrix3.outer(mean, mean)
            body(log(sums.weight / total), originInWorld + mean, covariance.symmetrized)
        }
    }
}
