import Foundation

/// One hypothesis of the bank: a Gaussian `N(mean, covariance)` over the object's world
/// position (metres, m²) with a log weight.
@_spi(Internals) public struct PositionHypothesis: Sendable, Hashable {
    public var logWeight: Double
    /// (See ``logWeight``.)
    public var meanInWorld: Vector3
    /// (See ``meanInWorld``.)
    public var covariance: Matrix3
    /// The prior this hypothesis started from (its tile of the first range's sphere) and
    /// its prior log weight; `BatchRefinement` recomputes the hypothesis from them.
    public var priorMeanInWorld: Vector3
    /// (See ``priorMeanInWorld``.)
    public var priorCovariance: Matrix3
    /// (See ``priorCovariance``.)
    public var priorLogWeight: Double
    /// The constant velocity the batch of an object that may move fitted to this hypothesis,
    /// m/s, world frame (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`);
    /// zero for a still object.
    public var velocityInWorld = Vector3.zero
    /// That velocity's covariance `P_vv` (m²/s²) and its cross-covariance with the position
    /// `P_pv` (m²/s); zero for a still object.
    public var velocityCovariance = Matrix3.zero
    /// (See ``velocityCovariance``.)
    public var positionVelocityCovariance = Matrix3.zero
    /// How far a common range bias of one metre moves this hypothesis's batch solution,
    /// metres per metre (``FusionOptions/Sensors/rangeBiasStandardDeviation``, `BatchRefinement`).
    public var rangeBiasSensitivity = Vector3.zero
    /// The covariance without the considered range bias `σ_β² s sᵀ` (`consideredBiasVariance`
    /// the bias's `σ_β²`, m²; `s` ``rangeBiasSensitivity``), m²: what the measurements leave
    /// unknown about where this hypothesis lies, which a test of the next ranges against it
    /// reads (a common bias moves the solution and its prediction of the ranges together).
    /// ``covariance`` itself where the difference is not positive definite.
    /// (Inlined, as is ``remainingCovariance(less:)``: called on an element of the bank, an
    /// outlined call took a copy of the whole hypothesis.)
    @inline(__always)
    public func estimatedCovariance(consideredBiasVariance: Double) -> Matrix3 {
        guard consideredBiasVariance > 0 else { return covariance }
        return remainingCovariance(less: consideredBiasVariance * Matrix3.outer(rangeBiasSensitivity, rangeBiasSensitivity))
            ?? covariance
    }
    /// ``covariance`` less a considered share of it, `considered` (m²), symmetrised; `nil`
    /// where the difference is not positive definite.
    @inline(__always)
    public func remainingCovariance(less considered: Matrix3) -> Matrix3? {
        let rest = (covariance - considered).symmetrized
        return rest.isPositiveDefinite ? rest : nil
    }
    /// The unit vector from the antenna to this hypothesis's tile on the range sphere it was
    /// tiled on (zero when it was not tiled): a bias in that range moves the prior mean along it.
    public var priorRangeDirection = Vector3.zero
    /// The batch's quadratic model of this hypothesis, kept between refinements (empty until
    /// the first, and for a merged hypothesis).
    public var linearisation = BatchLinearisation()
    /// The moving batch's quadratic model of this hypothesis, kept between refinements of an
    /// object that may move (empty until the first).
    public var moving = MovingLinearisation()

    /// A hypothesis with this log-weight, mean (world frame, metres) and covariance (m²).
    public init(logWeight: Double, meanInWorld: Vector3, covariance: Matrix3) {
        self.logWeight = logWeight
        self.meanInWorld = meanInWorld
        self.covariance = covariance
        priorMeanInWorld = meanInWorld
        priorCovariance = covariance
        priorLogWeight = logWeight
    }
}

/// `log N(x; μ, P)` for a 3-D Gaussian (−∞ when `P` is singular).
func logGaussianDensity(_ x: Vector3, mean: Vector3, covariance: Matrix3) -> Double {
    guard let inverse = covariance.inverse else { return -.infinity }
    let det = covariance.determinant
    guard det > 0 else { return -.infinity }
    return -0.5 * (inverse.quadraticForm(x - mean) + log(det) + 3 * log(2 * Double.pi))
}

/// The first two moments of a mixture: `μ̄ = Σ wᵢ μᵢ`,
/// `P̄ = Σ wᵢ (Pᵢ + (μᵢ − μ̄)(μᵢ − μ̄)ᵀ)`.
public struct MixtureMoments: Sendable, Hashable {
    /// `μ̄`, world frame, metres.
    public var meanInWorld: Vector3
    /// `P̄`, m².
    public var covariance: Matrix3
}

/// A Gaussian sum (a bank of EKFs) over one object's world position.
///
/// A first range only says "somewhere on a sphere around the antenna"; one Gaussian
/// cannot represent that, so the sphere is tiled with hypotheses
/// (``initialize(rangeMetres:antennaInWorld:forwardInWorld:options:)``), each an EKF.
/// Every measurement updates every hypothesis (the EKF steps of `EKFUpdate`) and
/// re-weights it by its robust likelihood
/// `wᵢ ← wᵢ [(1 − ε) N(νᵢ; 0, Sᵢ) + ε/span]`; motion then decides. Hypotheses mirrored
/// about the horizontal plane through the device get the same likelihood from any
/// motion confined to that plane, so the above/below ambiguity survives until a
/// vertical sweep (or an elevation measurement) tells them apart.
///
/// Storage is a pre-allocated contiguous buffer of `maximumHypotheses`; updates,
/// pruning and merging never grow it, so the per-update path does not allocate.
@_spi(Internals) public struct PositionMixture: Sendable {
    public private(set) var hypotheses: ContiguousArray<PositionHypothesis>
    /// Bank capacity.
    public let capacity: Int
    /// The bank is one hypothesis exactly as ``reset(meanInWorld:covariance:)`` made it (every
    /// other mutation clears this): the next such reset need only write its mean and
    /// covariance, not the whole hypothesis (its kept batch models are nearly a kilobyte; a
    /// tracked object is reset on every update).
    private var isFreshSingle = false

    /// An empty bank of at most `capacity` hypotheses.
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        hypotheses = []
        hypotheses.reserveCapacity(self.capacity)
    }

    /// Whether the bank holds no hypothesis.
    public var isEmpty: Bool { hypotheses.isEmpty }
    /// (See ``isEmpty``.)
    public var count: Int { hypotheses.count }

    /// Empties the bank, keeping its storage (nothing is allocated when it is filled again).
    public mutating func removeAll() {
        isFreshSingle = false
        hypotheses.removeAll(keepingCapacity: true)
    }

    /// Replaces the bank with one Gaussian (used by tests and when a prior is known).
    public mutating func reset(meanInWorld: Vector3, covariance: Matrix3) {
        defer { isFreshSingle = true }
        // A bank of one (a tracked object's, reset on every update) is overwritten in place:
        // only the fields the initialiser sets from its arguments when it is still as the last
        // reset left it.
        if isFreshSingle && hypotheses.count == 1 {
            hypotheses.withUnsafeMutableBufferPointer { h in
                h[0].meanInWorld = meanInWorld
                h[0].covariance = covariance
                h[0].priorMeanInWorld = meanInWorld
                h[0].priorCovariance = covariance
            }
            return
        }
        let hypothesis = PositionHypothesis(logWeight: 0, meanInWorld: meanInWorld, covariance: covariance)
        if hypotheses.count == 1 { hypotheses[0] = hypothesis; return }
        hypotheses.removeAll(keepingCapacity: true)
        hypotheses.append(hypothesis)
    }

    /// Replaces the bank with the given hypotheses (weights are renormalised; at most
    /// `capacity` are kept). For priors known from elsewhere, and for tests.
    public mutating func reset(_ list: [PositionHypothesis]) {
        isFreshSingle = false
        hypotheses.removeAll(keepingCapacity: true)
        hypotheses.append(contentsOf: list.prefix(capacity))
        normalize()
    }

    /// Sets hypothesis `i` (at most ``count``: `count` appends, within ``capacity``) to
    /// `N(μ, P)` with log weight `logWeight` (its prior the same) and the sensitivity of its
    /// position to a common range bias (``PositionHypothesis/rangeBiasSensitivity``): the bank as another density
    /// summarises it (`DirectionGrid`), which ``BatchRefinement`` never re-solves. Only these
    /// fields are written into a hypothesis already there (its kept batch models, nearly a
    /// kilobyte, are left as they are: nothing reads them while the bank is written this way).
    /// Follow with ``removeHypotheses(from:)`` and ``normalizeWeights()``.
    public mutating func setHypothesis(_ i: Int, logWeight: Double, meanInWorld: Vector3, covariance: Matrix3,
                                       rangeBiasSensitivity: Vector3 = .zero) {
        isFreshSingle = false
        if i < hypotheses.count {
            hypotheses.withUnsafeMutableBufferPointer { h in
                h[i].rangeBiasSensitivity = rangeBiasSensitivity
                h[i].logWeight = logWeight
                h[i].meanInWorld = meanInWorld
                h[i].covariance = covariance
                h[i].priorLogWeight = logWeight
                h[i].priorMeanInWorld = meanInWorld
                h[i].priorCovariance = covariance
            }
        } else if i == hypotheses.count, i < capacity {
            var h = PositionHypothesis(logWeight: logWeight, meanInWorld: meanInWorld, covariance: covariance)
            h.rangeBiasSensitivity = rangeBiasSensitivity
            hypotheses.append(h)
        }
    }

    /// Drops the hypotheses from index `i` on (keeping the storage).
    public mutating func removeHypotheses(from i: Int) {
        isFreshSingle = false
        guard i < hypotheses.count else { return }
        hypotheses.removeSubrange(max(i, 0)...)
    }

    /// Tiles the sphere of radius `r` around `a` with hypotheses.
    ///
    /// Elevation bands `εₖ = k Δ` (world frame, symmetric about the horizontal plane
    /// through `a`, k = −K…K, plus the poles), each with `nₖ = max(1, round(2π cos εₖ / Δ))`
    /// azimuths starting at the device's horizontal forward direction. Hypothesis `i` has
    /// mean `a + r uᵢ` and covariance
    /// `σ_r'² uuᵀ + σ_α² e_α e_αᵀ + σ_ε² e_ε e_εᵀ` with tangential σ equal to half the
    /// spacing (`σ_α = r cos ε · 2π/(2nₖ)`, `σ_ε = r Δ/2`) and the radial σ inflated by
    /// the sphere's curvature over one tangential σ, `σ_r'² = σ_r² + (σ_t²/2r)²`.
    public mutating func initialize(rangeMetres r: Double, antennaInWorld a: Vector3,
                                    forwardInWorld: Vector3, options: FusionOptions) {
        isFreshSingle = false
        hypotheses.removeAll(keepingCapacity: true)
        let spacing = max(options.acquisition.initialAngularSpacing, Angle.radians(degrees: 5))
        var yaw0 = atan2(forwardInWorld.x, -forwardInWorld.z)
        if !yaw0.isFinite { yaw0 = 0 }
        let bands = Int((Double.pi / 2 / spacing).rounded(.down))
        let poles = Double(bands) * spacing < .pi / 2 - 0.5 * spacing
        // The band elevations, in a stack allocation (no heap: tiling happens on the update path).
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * bands + 3) { elevations in
            var count = 0
            for k in -bands...bands { elevations[count] = Double(k) * spacing; count += 1 }
            if poles { elevations[count] = .pi / 2; elevations[count + 1] = -.pi / 2; count += 2 }
            let bandElevations = UnsafeBufferPointer(rebasing: elevations[0..<count])
            tile(bandElevations, spacing: spacing, radiusMetres: r, antennaInWorld: a, yaw0: yaw0, options: options)
        }
        normalize()
        let logEqual = -log(Double(hypotheses.count))
        hypotheses.withUnsafeMutableBufferPointer { h in for i in h.indices { h[i].priorLogWeight = logEqual } }
    }

    /// Places the tiles of ``initialize(rangeMetres:antennaInWorld:forwardInWorld:options:)`` on
    /// the given band elevations (radians, world frame).
    private mutating func tile(_ elevations: UnsafeBufferPointer<Double>, spacing: Double, radiusMetres r: Double,
                               antennaInWorld a: Vector3, yaw0: Double, options: FusionOptions) {
        // Count first so that an undersized bank coarsens evenly rather than truncating.
        var spacingScale = 1.0
        while true {
            var total = 0
            for e in elevations { total += max(1, Int((2 * .pi * cos(e) / (spacing * spacingScale)).rounded())) }
            if total <= capacity { break }
            spacingScale *= 1.1
        }
        let radius = max(r, 0.05)
        for e in elevations {
            let n = max(1, Int((2 * .pi * cos(e) / (spacing * spacingScale)).rounded()))
            let azimuthStep = 2 * .pi / Double(n)
            for j in 0..<n {
                let yaw = yaw0 + Double(j) * azimuthStep
                // World-frame unit vectors: radial u, east e_α (increasing yaw), up e_ε.
                let u = Vector3(cos(e) * sin(yaw), sin(e), -cos(e) * cos(yaw))
                let eAlpha = Vector3(cos(yaw), 0, sin(yaw))
                let eEpsilon = u.cross(eAlpha).normalized
                let sigmaAlpha = n == 1 ? radius * spacing * spacingScale / 2 : radius * max(cos(e), 0.2) * azimuthStep / 2
                let sigmaEpsilon = radius * spacing * spacingScale / 2
                let sigmaT = max(sigmaAlpha, sigmaEpsilon)
                let curvature = sigmaT * sigmaT / (2 * radius)
                let sigmaRadial2 = options.sensors.rangeStandardDeviation * options.sensors.rangeStandardDeviation + curvature * curvature
                let p = sigmaRadial2 * Matrix3.outer(u, u) + (sigmaAlpha * sigmaAlpha) * Matrix3.outer(eAlpha, eAlpha)
                    + (sigmaEpsilon * sigmaEpsilon) * Matrix3.outer(eEpsilon, eEpsilon)
                var tile = PositionHypothesis(logWeight: 0, meanInWorld: a + radius * u, covariance: p.symmetrized)
                tile.priorRangeDirection = u
                hypotheses.append(tile)
            }
        }
    }

    /// Multiplies every hypothesis's prior weight, and its weight, by `exp(logFactor(h))`
    /// (a prior over the object's position that the tiles of the range sphere did not hold:
    /// `w̃ᵢ ∝ wᵢ ∫ N(p; μᵢ, Pᵢ) f(p) dp`, the caller's `logFactor` that integral's logarithm),
    /// then renormalises both. `BatchRefinement` keeps the factor: it re-solves each
    /// hypothesis from its prior weight. A factor that is not finite for every hypothesis
    /// leaves the mixture unchanged.
    public mutating func reweighPriors(_ logFactor: (PositionHypothesis) -> Double) {
        isFreshSingle = false
        // Twice through the factors rather than into an array: nothing allocated.
        for h in hypotheses where !logFactor(h).isFinite { return }
        hypotheses.withUnsafeMutableBufferPointer { h in
            for i in h.indices {
                let f = logFactor(h[i])
                h[i].priorLogWeight += f
                h[i].logWeight += f
            }
        }
        if let logPriorTotal = logTotal(\.priorLogWeight) {
            hypotheses.withUnsafeMutableBufferPointer { h in for i in h.indices { h[i].priorLogWeight -= logPriorTotal } }
        }
        normalize()
    }

    /// Applies `body` to every hypothesis in place (used by `BatchRefinement`).
    public mutating func transformEach(_ body: (inout PositionHypothesis) -> Void) {
        isFreshSingle = false
        hypotheses.withUnsafeMutableBufferPointer { h in for i in h.indices { body(&h[i]) } }
    }

    /// Renormalises the weights so that they sum to one.
    public mutating func normalizeWeights() { normalize() }

    /// Prediction: the position is a random walk, `P ← P + q I` for every hypothesis
    /// (`q` in m², already multiplied by Δt or Δs by the caller).
    public mutating func predict(addedVariance q: Double) {
        isFreshSingle = false
        guard q > 0 else { return }
        hypotheses.withUnsafeMutableBufferPointer { h in
            for i in h.indices { h[i].covariance += Matrix3.scaledIdentity(q) }
        }
    }

    /// Updates every hypothesis with a scalar measurement (range or azimuth) and
    /// re-weights it by `(1 − ε) N(ν; 0, S) + ε/span`. Returns `true` if at least one
    /// hypothesis holding 1 % of the weight or more accepted it (passed its gate).
    public mutating func update<M: ScalarMeasurementModel>(
        model: (Vector3) -> M, measured z: Double, outlierProbability: Double, outlierSpan: Double
    ) -> Bool {
        updateEach(logOutlierDensity: log(outlierProbability / outlierSpan), outlierProbability: outlierProbability) { mean, covariance in
            EKFUpdate.update(mean: &mean, covariance: &covariance, model: model(mean), measured: z)
        }
    }

    /// The same for a 2-dimensional measurement (azimuth and elevation); the outlier
    /// density is `ε / span²`.
    public mutating func update<M: PlanarMeasurementModel>(
        model: (Vector3) -> M, measured z: Vector2, outlierProbability: Double, outlierSpan: Double
    ) -> Bool {
        updateEach(logOutlierDensity: log(outlierProbability / (outlierSpan * outlierSpan)), outlierProbability: outlierProbability) { mean, covariance in
            EKFUpdate.update(mean: &mean, covariance: &covariance, model: model(mean), measured: z)
        }
    }

    /// Runs one EKF step on every hypothesis and applies the robust weight
    /// `wᵢ ← wᵢ [(1 − ε) N(νᵢ; 0, Sᵢ) + outlier density]`.
    private mutating func updateEach(logOutlierDensity: Double, outlierProbability: Double,
                                     _ step: (inout Vector3, inout Matrix3) -> UpdateOutcome) -> Bool {
        isFreshSingle = false
        if hypotheses.count == 1 {
            // One hypothesis (tracking): its weight stays 1; only the EKF step matters.
            return hypotheses.withUnsafeMutableBufferPointer { h in step(&h[0].meanInWorld, &h[0].covariance).accepted }
        }
        var acceptedBySignificant = false
        let logInlier = log(1 - outlierProbability)
        hypotheses.withUnsafeMutableBufferPointer { h in
            for i in h.indices {
                let outcome = step(&h[i].meanInWorld, &h[i].covariance)
                h[i].logWeight += Self.logSumExp(logInlier + outcome.logLikelihood, logOutlierDensity)
                if outcome.accepted && h[i].logWeight > log(0.01) { acceptedBySignificant = true }
            }
        }
        normalize()
        return acceptedBySignificant
    }

    /// Multiplies the weight of each hypothesis for which `factor` returns a value
    /// (`wᵢ ← wᵢ · factor(μᵢ)`), then renormalises; used for "no direction reported".
    public mutating func reweight(_ factor: (Vector3) -> Double) {
        isFreshSingle = false
        hypotheses.withUnsafeMutableBufferPointer { h in
            for i in h.indices { h[i].logWeight += log(max(factor(h[i].meanInWorld), 1e-300)) }
        }
        normalize()
    }

    /// Inflates every covariance by `q I` (m²): used when measurements keep failing
    /// their gates, so that a moved object can be re-acquired.
    public mutating func inflate(by q: Double) { predict(addedVariance: q) }

    /// `log(eᵃ + eᵇ)` without overflow.
    static func logSumExp(_ a: Double, _ b: Double) -> Double {
        let m = max(a, b)
        guard m > -.infinity else { return -.infinity }
        return m + log(exp(a - m) + exp(b - m))
    }

    /// Renormalises the log weights so that `Σ exp(logWᵢ) = 1`.
    mutating func normalize() {
        isFreshSingle = false
        guard let logTotal = logTotal(\.logWeight) else {
            // Every weight underflowed: restart from equal weights rather than NaN.
            let equal = -log(Double(max(hypotheses.count, 1)))
            hypotheses.withUnsafeMutableBufferPointer { h in for i in h.indices { h[i].logWeight = equal } }
            return
        }
        hypotheses.withUnsafeMutableBufferPointer { h in for i in h.indices { h[i].logWeight -= logTotal } }
    }

    /// `log Σ exp(vᵢ)` of one log weight of every hypothesis (`logWeight` or
    /// `priorLogWeight`), from the largest; `nil` when the largest is not finite.
    @inline(__always)
    private func logTotal(_ value: KeyPath<PositionHypothesis, Double>) -> Double? {
        var maximum = -Double.infinity
        for h in hypotheses where h[keyPath: value] > maximum { maximum = h[keyPath: value] }
        guard maximum.isFinite else { return nil }
        var sum = 0.0
        for h in hypotheses { sum += exp(h[keyPath: value] - maximum) }
        return maximum + log(sum)
    }

    /// Drops hypotheses lighter than `minimumWeight` (always keeping the heaviest), then
    /// merges pairs closer than `mergeDistanceSquared` in the metric `(P₁ + P₂)⁻¹` by
    /// moment matching: `w = w₁ + w₂`, `μ = (w₁μ₁ + w₂μ₂)/w`,
    /// `P = Σₖ wₖ (Pₖ + (μₖ − μ)(μₖ − μ)ᵀ)/w`. Non-finite hypotheses are dropped too.
    public mutating func pruneAndMerge(minimumWeight: Double, mergeDistanceSquared: Double) {
        if hypotheses.count == 1 {
            if !hypotheses[0].meanInWorld.isFinite || !hypotheses[0].covariance.isFinite { removeAll() }
            return
        }
        isFreshSingle = false
        let logMinimum = log(minimumWeight)
        var i = 0
        // Fields read in place: a hypothesis (its batch model included) is too large to copy
        // for a comparison.
        while i < hypotheses.count && hypotheses.count > 1 {
            if hypotheses[i].logWeight < logMinimum || !hypotheses[i].meanInWorld.isFinite || !hypotheses[i].covariance.isFinite {
                hypotheses.swapAt(i, hypotheses.count - 1)
                hypotheses.removeLast()
            } else {
                i += 1
            }
        }
        var a = 0
        while mergeDistanceSquared > 0 && a < hypotheses.count {
            var b = a + 1
            while b < hypotheses.count {
                let d = hypotheses[a].meanInWorld - hypotheses[b].meanInWorld
                let sum = hypotheses[a].covariance + hypotheses[b].covariance
                // Cheap rejection before the 3×3 inverse.
                if d.lengthSquared <= 9 * mergeDistanceSquared * sum.trace,
                   let inverse = sum.inverse, inverse.quadraticForm(d) < mergeDistanceSquared {
                    hypotheses[a] = Self.merged(hypotheses[a], hypotheses[b])
                    hypotheses.swapAt(b, hypotheses.count - 1)
                    hypotheses.removeLast()
                } else {
                    b += 1
                }
            }
            a += 1
        }
        normalize()
    }

    /// The index of the heaviest hypothesis (the first of equals); `nil` for an empty bank. Read
    /// by index: `max(by:)` over the hypotheses copied each one it compared (~1.4 kB).
    public var heaviestIndex: Int? {
        var heaviest: Int?
        for i in hypotheses.indices where heaviest.map({ hypotheses[i].logWeight > hypotheses[$0].logWeight }) ?? true {
            heaviest = i
        }
        return heaviest
    }

    /// Moment-matched merge. The merged hypothesis keeps the heavier one's prior, with a
    /// prior weight that preserves the two priors' total density at the merged mean:
    /// `w₀ N(μ; μ₀, P₀) = w₀ₐ N(μ; μ₀ₐ, P₀ₐ) + w₀ᵦ N(μ; μ₀ᵦ, P₀ᵦ)`.
    /// The hypotheses within `Δμᵀ (P_best + Pᵢ)⁻¹ Δμ < mahalanobisSquared` of the heaviest,
    /// moment-matched into one, with their total weight; `nil` for an empty bank.
    public func dominantCluster(mahalanobisSquared: Double, consideredBiasVariance: Double = 0) -> (merged: PositionHypothesis, weight: Double)? {
        guard let heaviest = heaviestIndex else { return nil }
        let best = hypotheses[heaviest]
        var merged: PositionHypothesis?
        // The considered range bias moves every hypothesis with the same `β`: it does not make
        // two of them the same place.
        let bestCovariance = best.estimatedCovariance(consideredBiasVariance: consideredBiasVariance)
        for h in hypotheses {
            let d = h.meanInWorld - best.meanInWorld
            let sum = h.estimatedCovariance(consideredBiasVariance: consideredBiasVariance) + bestCovariance
            guard let inverse = sum.inverse, inverse.quadraticForm(d) < mahalanobisSquared else { continue }
            merged = merged.map { Self.merged($0, h) } ?? h
        }
        guard let result = merged else { return nil }
        return (result, exp(result.logWeight))
    }

    static func merged(_ a: PositionHypothesis, _ b: PositionHypothesis) -> PositionHypothesis {
        let m = max(a.logWeight, b.logWeight)
        let wa = exp(a.logWeight - m), wb = exp(b.logWeight - m)
        let w = wa + wb
        let mean = (wa * a.meanInWorld + wb * b.meanInWorld) / w
        let da = a.meanInWorld - mean, db = b.meanInWorld - mean
        let p = (wa / w) * (a.covariance + Matrix3.outer(da, da)) + (wb / w) * (b.covariance + Matrix3.outer(db, db))
        let keep = wa >= wb ? a : b
        var result = PositionHypothesis(logWeight: m + log(w), meanInWorld: mean, covariance: p.symmetrized)
        // The velocities of an object that may move merge the same way:
        // `v̄ = Σ w v`, `P_vv = Σ w (P_vv + δv δvᵀ)`, `P_pv = Σ w (P_pv + δp δvᵀ)`.
        let velocity = (wa * a.velocityInWorld + wb * b.velocityInWorld) / w
        let dva = a.velocityInWorld - velocity, dvb = b.velocityInWorld - velocity
        result.velocityInWorld = velocity
        result.velocityCovariance = ((wa / w) * (a.velocityCovariance + Matrix3.outer(dva, dva))
            + (wb / w) * (b.velocityCovariance + Matrix3.outer(dvb, dvb))).symmetrized
        result.positionVelocityCovariance = (wa / w) * (a.positionVelocityCovariance + Matrix3.outer(da, dva))
            + (wb / w) * (b.positionVelocityCovariance + Matrix3.outer(db, dvb))
        result.rangeBiasSensitivity = (wa * a.rangeBiasSensitivity + wb * b.rangeBiasSensitivity) / w
        result.priorMeanInWorld = keep.priorMeanInWorld
        result.priorRangeDirection = keep.priorRangeDirection
        result.priorCovariance = keep.priorCovariance
        let la = a.priorLogWeight + logGaussianDensity(mean, mean: a.priorMeanInWorld, covariance: a.priorCovariance)
        let lb = b.priorLogWeight + logGaussianDensity(mean, mean: b.priorMeanInWorld, covariance: b.priorCovariance)
        let lk = logGaussianDensity(mean, mean: keep.priorMeanInWorld, covariance: keep.priorCovariance)
        let total = logSumExp(la, lb)
        result.priorLogWeight = total.isFinite && lk.isFinite ? total - lk : keep.priorLogWeight
        return result
    }

    /// The mixture's mean and covariance with each hypothesis taken as lying on the sphere of
    /// its distance about `a` (world frame, metres) rather than on its tangent plane.
    ///
    /// A hypothesis `N(μ, P)` at distance `r = ‖μ − a‖` along `u = (μ − a)/r` whose uncertainty
    /// across the line of sight is a rotation about `a` — every position it allows at the same
    /// distance — lies on the sphere, not on the plane its Gaussian is flat in: a point `t` across
    /// the line of sight (`t ~ N(0, P_t)`, `P_t = Π P Π`, `Π = I − u uᵀ`) sits `‖t‖²/(2r)` inside
    /// the plane, to second order. Its moments are then
    ///
    ///     μ' = μ − tr(P_t)/(2r) u,      P' = P + tr(P_t²)/(2r²) u uᵀ
    ///
    /// (`E‖t‖² = tr P_t`, `Var ‖t‖² = 2 tr P_t²`, and `t` and `‖t‖²` are uncorrelated), mixed as
    /// ``moments`` mixes. Where the rotation is a few degrees the terms vanish; where it is tens
    /// of degrees — a range-only object that moves, or a still one ranged from one place, see
    /// `ObjectTracker.reportedMoments` — a Gaussian flat in the plane claims the distance from
    /// the device to centimetres at points the sphere puts metres inside it. A hypothesis
    /// within 10 cm of `a` is taken as it is.
    public func momentsOnSphere(about a: Vector3) -> MixtureMoments {
        mixedMoments { h in
            let d = h.meanInWorld - a
            let r = d.length
            guard r > 0.1, r.isFinite else { return (h.meanInWorld, h.covariance) }
            let u = d / r
            let across = Matrix3.identity - Matrix3.outer(u, u)
            let pt = across * h.covariance * across
            let squared = pt * pt
            return (h.meanInWorld - (pt.trace / (2 * r)) * u, h.covariance + (squared.trace / (2 * r * r)) * Matrix3.outer(u, u))
        }
    }

    /// The mixture's mean and covariance (see ``MixtureMoments``).
    public var moments: MixtureMoments {
        if hypotheses.count == 1 { return MixtureMoments(meanInWorld: hypotheses[0].meanInWorld, covariance: hypotheses[0].covariance) }
        return mixedMoments { ($0.meanInWorld, $0.covariance) }
    }

    /// The moments of the hypotheses each taken as the Gaussian `component(h)` gives:
    /// `μ̄ = Σ wᵢ μᵢ`, `P̄ = Σ wᵢ (Pᵢ + (μᵢ − μ̄)(μᵢ − μ̄)ᵀ)`, `wᵢ` the normalised weights (1 for a
    /// lone hypothesis), symmetrised. ``moments`` and ``momentsOnSphere(about:)`` share it.
    @inline(__always)
    private func mixedMoments(_ component: (PositionHypothesis) -> (mean: Vector3, covariance: Matrix3)) -> MixtureMoments {
        var mean = Vector3.zero
        for h in hypotheses { mean += (hypotheses.count == 1 ? 1 : exp(h.logWeight)) * component(h).mean }
        var p = Matrix3.zero
        for h in hypotheses {
            let c = component(h)
            let d = c.mean - mean
            p += (hypotheses.count == 1 ? 1 : exp(h.logWeight)) * (c.covariance + Matrix3.outer(d, d))
        }
        return MixtureMoments(meanInWorld: mean, covariance: p.symmetrized)
    }
}
