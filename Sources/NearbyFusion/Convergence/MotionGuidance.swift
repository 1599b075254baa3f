import Foundation

/// Which way to move the device, and how far, so that an object's `horizontalAngle` (or,
/// when the app asks, its `worldTransform`) is published soonest — an extension of this
/// framework beside Nearby Interaction's convergence reasons, which say what is missing but
/// not where to go.
///
/// Published while that output is withheld and a position estimate exists
/// (``NearbyObjectEstimate/guidance``, ``FusionOptions/Coaching/guidanceOutput``), `nil` once
/// it is published.
public struct MotionGuidance: Sendable, Hashable {
    /// Where to move, as people move: in the device's horizontal plane, or up and down.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        case left, right, forward, back, up, down
    }

    /// The output the guidance works toward.
    public enum Output: String, Sendable, Hashable, CaseIterable {
        /// `horizontalAngle`: the bearing (and, unless the bearing alone publishes it, the
        /// horizontal position across the line of sight).
        case horizontalAngle
        /// `worldTransform`: the horizontal position and the height as well.
        case worldTransform
    }

    /// Where to move the device.
    public var direction: Direction
    /// How far, metres.
    public var distanceMetres: Double
    /// The displacement in the device frame (x right, y up, z toward the user), metres:
    /// `direction` levelled into the world's horizontal plane (or the world's vertical) and
    /// expressed in the device's axes at the time of the advice.
    public var displacementInDevice: Vector3
    /// The standard deviation of the object's bearing the motion is expected to leave,
    /// radians (`MotionGuidance.expectedUncertainty(mixture:start:step:count:rangeVariance:across:minimumWeight:)`).
    public var expectedBearingStandardDeviation: Double

    /// Advice to move `distanceMetres` toward `direction` (`displacementInDevice` the same, in the
    /// device's frame), expected to leave the bearing's σ at `expectedBearingStandardDeviation` radians.
    public init(direction: Direction, distanceMetres: Double, displacementInDevice: Vector3,
                expectedBearingStandardDeviation: Double) {
        self.direction = direction
        self.distanceMetres = distanceMetres
        self.displacementInDevice = displacementInDevice
        self.expectedBearingStandardDeviation = expectedBearingStandardDeviation
    }
}

extension MotionGuidance {
    /// The step in words: "forward 0.75 m".
    public var stepText: String { "\(direction.rawValue) \(String(format: "%.2f", distanceMetres)) m" }
    /// The advice in words: "move forward 0.75 m".
    public var advice: String { "move " + stepText }

    /// Whether `other` advises another motion: another direction or another distance (`nil`:
    /// no advice, which differs from any).
    public func differs(from other: MotionGuidance?) -> Bool {
        direction != other?.direction || distanceMetres != other?.distanceMetres
    }

    /// What a motion is expected to leave of the estimate's uncertainty: the bearing's
    /// variance, radians², and the largest variance of the horizontal position, m².
    @_spi(Internals) public struct Uncertainty: Sendable, Hashable {
        /// The bearing's variance, radians².
        public var bearingVariance: Double
        /// The horizontal position's variance across the line of sight, m².
        public var horizontalPositionVariance: Double
        /// The position's variance along the line of sight (horizontally) and in height, m²:
        /// what the vertical sweep is asked for.
        public var verticalPositionVariance: Double

        /// The three variances (radians², m², m²).
        public init(bearingVariance: Double, horizontalPositionVariance: Double, verticalPositionVariance: Double = 0) {
            self.bearingVariance = bearingVariance
            self.horizontalPositionVariance = horizontalPositionVariance
            self.verticalPositionVariance = verticalPositionVariance
        }

        static let unknown = Uncertainty(bearingVariance: .infinity, horizontalPositionVariance: .infinity, verticalPositionVariance: .infinity)

        /// `max(V_ψ/θ², V_h/L_h², V_v/L_v²)`: 1 or less meets what the output is published at
        /// (`θ` the bearing threshold, radians; `L_h` the horizontal position threshold and
        /// `L_v` the vertical one, metres, each `nil` when not asked for).
        func cost(threshold theta: Double, positionLimit: Double?, verticalLimit: Double? = nil) -> Double {
            var c = bearingVariance / (theta * theta)
            if let l = positionLimit { c = max(c, horizontalPositionVariance / (l * l)) }
            if let l = verticalLimit { c = max(c, verticalPositionVariance / (l * l)) }
            return c
        }
    }

    /// Directions the radio measures along the way (UWB inside its cone): `(I − uuᵀ)/(r²σ_d²)`
    /// of information per measurement at a hypothesis inside the cone — a bearing fixes the
    /// position across the line of sight.
    @_spi(Internals) public struct Directions: Sendable, Hashable {
        /// The device's forward axis (`−z`), world frame, held along the motion.
        public var forwardInWorld: Vector3
        /// `cos` of the cone's half-angle.
        public var coneCosine: Double
        /// The variance of one direction's angles, radians².
        public var variance: Double

        /// A radio measuring directions inside `halfAngle` (radians) of `forwardInWorld`, each angle with `variance` (radians²).
        public init(forwardInWorld: Vector3, halfAngle: Double, variance: Double) {
            self.forwardInWorld = forwardInWorld
            self.coneCosine = cos(halfAngle)
            self.variance = variance
        }

        /// The unit vector from `p` to `mean`, its squared distance (m²), and whether it lies
        /// inside the cone.
        @inline(__always)
        func seen(_ mean: Vector3, from p: Vector3) -> Sight {
            let d = mean - p
            let r2 = d.lengthSquared
            let r = r2.squareRoot()
            guard r > 1e-6 else { return Sight(unit: .zero, distanceSquared: r2, inside: false) }
            return Sight(unit: (1 / r) * d, distanceSquared: r2, inside: d.dot(forwardInWorld) >= coneCosine * r)
        }

        /// A hypothesis seen from a point of the path (``seen(_:from:)``).
        struct Sight {
            var unit: Vector3
            var distanceSquared: Double
            var inside: Bool
            static let none = Sight(unit: .zero, distanceSquared: 0, inside: false)
        }

        /// What a direction measured from `p` tells two hypotheses apart, `Δ²` (radians²,
        /// to be divided by `8σ_d²`): the squared angle between the two directions when both lie
        /// inside the cone (`‖uᵢ − uⱼ‖²`), 1 when only one does — a direction present or absent
        /// tells them apart — and 0 when neither does.
        @inline(__always)
        static func separation(_ a: Sight, _ b: Sight) -> Double {
            if a.inside && b.inside { return (a.unit - b.unit).lengthSquared }
            return a.inside != b.inside ? 1 : 0
        }

        /// Adds the information of a direction at a hypothesis seen as `sight` (inside the
        /// cone), of variance `v` per measurement: `(I − uuᵀ)/(r² v)`.
        @inline(__always)
        static func addInformation(to information: inout Matrix3, sight: Sight, measurementVariance v: Double) {
            guard sight.inside else { return }
            information += (1 / (v * sight.distanceSquared)) * (Matrix3.identity - Matrix3.outer(sight.unit, sight.unit))
        }
    }

    /// The step lengths considered, metres: the smallest that achieves the information is
    /// advised, and none longer than 2 m. Each is a whole number of `pathSpacing`.
    public static let candidateLengths: [Double] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
    /// The spacing of the points a path is scored at, metres: each stands for the ranges of
    /// its 0.25 m.
    static let pathSpacing = 0.25
    /// Points along the longest path.
    static let pathPoints = 8
    /// The least weight of a hypothesis the guidance weighs.
    public static let minimumWeight = 0.01
    /// The most hypotheses the guidance weighs: the heaviest.
    static let maximumHypotheses = 12

    /// The motion of the device, among the six directions × ``candidateLengths``, that
    /// leaves the least of what withholds the angle — the bearing's variance against its
    /// threshold and, unless the angle is published by its bearing alone, the horizontal
    /// position's against its own (`Uncertainty`): the shortest that meets both, else
    /// the one that comes closest (the shorter on a tie within 5 %). `nil` for an empty
    /// mixture, or when no motion is expected to reduce that cost by a tenth.
    ///
    /// Each direction is scored along one path, its information and pair distances
    /// accumulated point by point and read at each candidate length (`directionScores`),
    /// over the heaviest `maximumHypotheses` holding at least ``minimumWeight``,
    /// renormalised — or, when those hold less than half the weight (a fresh tiling), a
    /// systematic sample of `maximumHypotheses` tiles. Allocates nothing.
    ///
    /// - Parameters:
    ///   - mixture: the position estimate `Σ wᵢ N(μᵢ, Pᵢ)`, world frame.
    ///   - antennaInWorld: where the device's antenna is now, metres.
    ///   - worldFromDevice: the device's orientation.
    ///   - rangeVariance: the variance of one range, m².
    ///   - rangesPerMetre: how many ranges a metre of the motion brings (the radio's rate
    ///     over a walking pace).
    ///   - threshold: the bearing σ the angle is published at, radians.
    ///   - positionLimit: the horizontal position σ it is published at, metres (`nil`: the
    ///     bearing alone is asked for).
    ///   - verticalLimit: the σ along the line of sight and in height `worldTransform` is
    ///     published at, metres (`nil`: only the angle is asked for).
    ///   - directions: the directions the radio measures along the way (`nil`: none).
    ///   - previous: the direction advised last, kept while it does within 10 % as well.
    @_spi(Internals) public static func best(mixture: PositionMixture, antennaInWorld a: Vector3, worldFromDevice: Quaternion,
                                             rangeVariance: Double, rangesPerMetre: Double, threshold: Double,
                                             positionLimit: Double? = nil, verticalLimit: Double? = nil, directions: Directions? = nil,
                                             previous: Direction? = nil) -> MotionGuidance? {
        guard !mixture.isEmpty, rangeVariance > 0, rangesPerMetre > 0, threshold > 0 else { return nil }
        let floor = max(minimumWeight, BatchRefinement.heaviestWeight(rank: maximumHypotheses, in: mixture))
        // Across the line of sight to the mixture's mean, as the convergence analysis reads it.
        let across = ConvergenceAnalysis.horizontalAxes(toward: mixture.moments.meanInWorld, from: a).across
        let selection = Selection(mixture, floor: floor)
        let now = selection.uncertainty(from: a, across: across)
            .cost(threshold: threshold, positionLimit: positionLimit, verticalLimit: verticalLimit)
        guard now.isFinite else { return nil }
        // Per direction, the uncertainty at each candidate length, and its cost, scored length
        // by length for every direction at once: the shortest length at which one meets the
        // thresholds ends the search there, its longer paths never walked.
        var scores = InlineArray<6, InlineArray<6, Uncertainty>>(repeating: InlineArray(repeating: .unknown))
        var costs = InlineArray<6, InlineArray<6, Double>>(repeating: InlineArray(repeating: .infinity))
        var units = InlineArray<6, Vector3>(repeating: .zero)
        for (d, direction) in Direction.allCases.enumerated() { units[d] = worldDirection(direction, worldFromDevice: worldFromDevice) }
        let pointRangeVariance = rangeVariance / (rangesPerMetre * pathSpacing)
        let pointDirectionVariance = (directions?.variance ?? 0) / (rangesPerMetre * pathSpacing)
        var paths = InlineArray<6, PathScores> { d in
            PathScores(selection, start: a, unit: units[d], rangeVariance: pointRangeVariance, directions: directions,
                       directionVariance: pointDirectionVariance, across: across)
        }
        func advice(_ chosen: Int, _ l: Int) -> MotionGuidance {
            // The advice in force is kept while it does within 10 % as well (and meets the
            // thresholds when the best does): a user is not sent back and forth between two
            // motions that would do about as well.
            var d = chosen
            if let previous, let p = Direction.allCases.firstIndex(of: previous), p != chosen,
               costs[p][l] <= 1.1 * costs[chosen][l], costs[p][l] <= 1 || costs[chosen][l] > 1 {
                d = p
            }
            let length = candidateLengths[l]
            return MotionGuidance(direction: Direction.allCases[d], distanceMetres: length,
                                  displacementInDevice: worldFromDevice.conjugate.rotate(length * units[d]),
                                  expectedBearingStandardDeviation: scores[d][l].bearingVariance.squareRoot())
        }
        var best: (d: Int, l: Int)?
        for l in 0..<candidateLengths.count {
            for d in 0..<6 {
                scores[d][l] = paths[d].advance()
                let c = scores[d][l].cost(threshold: threshold, positionLimit: positionLimit, verticalLimit: verticalLimit)
                costs[d][l] = c.isFinite ? c : .infinity
            }
            var meeting: Int?
            for d in 0..<6 where costs[d][l] <= 1 && costs[d][l] < (meeting.map { costs[$0][l] } ?? .infinity) {
                meeting = d
            }
            if let meeting { return advice(meeting, l) }
            for d in 0..<6 where costs[d][l] < 0.95 * (best.map { costs[$0.d][$0.l] } ?? .infinity) {
                best = (d, l)
            }
        }
        guard let best, costs[best.d][best.l] <= 0.9 * now else { return nil }
        return advice(best.d, best.l)
    }

    /// The uncertainty expected after a straight motion along `unit` (world frame) from
    /// `start`, at each of ``candidateLengths``: the sums of
    /// `expectedUncertainty(mixture:start:step:count:rangeVariance:across:minimumWeight:)`
    /// accumulated along one path of `pathPoints` points `pathSpacing` apart — the
    /// information `Pᵢ⁻¹ + Σₖ uᵢₖuᵢₖᵀ/σ²` and the pair distances `Σₖ (rᵢₖ − rⱼₖ)²` — and read
    /// at each length's end. `rangeVariance` is the variance a point's ranges have together,
    /// m², `directionVariance` its directions', radians².
    @_spi(Internals) public static func directionScores(mixture: PositionMixture, start: Vector3, unit: Vector3, rangeVariance sigma2: Double,
                                                        directions: Directions? = nil, directionVariance: Double = 0,
                                                        across: Vector3, minimumWeight floor: Double) -> InlineArray<6, Uncertainty> {
        directionScores(Selection(mixture, floor: floor), start: start, unit: unit, rangeVariance: sigma2, directions: directions,
                        directionVariance: directionVariance, across: across)
    }

    /// ``directionScores(mixture:start:unit:rangeVariance:directions:directionVariance:across:minimumWeight:)``
    /// over hypotheses already selected.
    static func directionScores(_ selected: Selection, start: Vector3, unit: Vector3, rangeVariance sigma2: Double,
                                directions: Directions?, directionVariance: Double, across: Vector3) -> InlineArray<6, Uncertainty> {
        var out = InlineArray<6, Uncertainty>(repeating: .unknown)
        var path = PathScores(selected, start: start, unit: unit, rangeVariance: sigma2, directions: directions,
                              directionVariance: directionVariance, across: across)
        for l in 0..<candidateLengths.count { out[l] = path.advance() }
        return out
    }

    /// A direction in the world frame: the device's right (`+x`) or forward (`−z`) levelled
    /// into the horizontal plane, or the world's up.
    static func worldDirection(_ direction: Direction, worldFromDevice q: Quaternion) -> Vector3 {
        func level(_ v: Vector3) -> Vector3 {
            let h = Vector3(v.x, 0, v.z)
            let n = h.length
            return n > 1e-9 ? (1 / n) * h : Vector3(1, 0, 0)
        }
        switch direction {
        case .right: return level(q.rotate(Vector3(1, 0, 0)))
        case .left: return -1 * level(q.rotate(Vector3(1, 0, 0)))
        case .forward: return level(q.rotate(Vector3(0, 0, -1)))
        case .back: return -1 * level(q.rotate(Vector3(0, 0, -1)))
        case .up: return Vector3(0, 1, 0)
        case .down: return Vector3(0, -1, 0)
        }
    }

    /// The uncertainty expected once the ranges along a straight path are fused into the
    /// mixture `Σ wᵢ N(μᵢ, Pᵢ)`: from `start` in `count` steps of `step` (world frame,
    /// metres), a range at each `pₖ = start + k step`, `k = 1…count`, seen from the path's end:
    ///
    /// `V_ψ = Σᵢ wᵢ gᵢᵀ P⁺ᵢ gᵢ + Σ_{i<j} wᵢ wⱼ δᵢⱼ² exp(−Bᵢⱼ)`, `δᵢⱼ² = 2(1 − cos(ψᵢ − ψⱼ))`,
    /// `C = Σᵢ wᵢ P⁺ᵢ + Σ_{i<j} wᵢ wⱼ (μᵢ − μⱼ)(μᵢ − μⱼ)ᵀ exp(−Bᵢⱼ)`, `V_h = e_⊥ᵀ C e_⊥`,
    /// `V_v = e_∥ᵀ C e_∥ + C_yy`
    ///
    /// - each hypothesis's own part: the range information along the path,
    ///   `Jᵢ = Σₖ uᵢₖ uᵢₖᵀ / σ²` (`uᵢₖ` the unit vector from `pₖ` to `μᵢ`, the range's
    ///   gradient), gives `P⁺ᵢ = (Pᵢ⁻¹ + Jᵢ)⁻¹` — the expected Fisher information of the
    ///   ranges, linearised at each hypothesis (plus `Directions`' where the radio measures
    ///   them, `(I − uᵢₖuᵢₖᵀ)/(rᵢₖ²σ_d²)` inside the cone); `gᵢ` is the gradient of the world bearing
    ///   `ψ = atan2(x, −z)` seen from the path's end, `e_⊥` the horizontal unit vector across
    ///   the line of sight (`across`) and `e_∥` the one along it — along it the range pins the
    ///   position down but for the elevation ↔ distance trade-off, which with the height is
    ///   the vertical sweep's to resolve (`V_v`);
    /// - the spread between hypotheses (`δᵢⱼ²`, the squared chord between two bearings, is
    ///   `(ψᵢ − ψⱼ)²` to second order, and `Σ_{i<j} wᵢwⱼ (ψᵢ − ψⱼ)²` is `Σ wᵢ (ψᵢ − ψ̄)²` for
    ///   small spreads, and likewise for the means), each pair discounted by the chance the
    ///   ranges still confuse them, `exp(−Bᵢⱼ)` with the Bhattacharyya distance of the two
    ///   range sequences they predict, `Bᵢⱼ = Σₖ (‖μᵢ − pₖ‖ − ‖μⱼ − pₖ‖)² / (8σ²)` (plus, with
    ///   `Directions`, `Σₖ Δ²ᵢⱼₖ/(8σ_d²)` of the directions they predict): a motion that makes
    ///   two hypotheses predict different measurements separates them.
    ///
    /// Hypotheses holding less than `minimumWeight` are left out and the rest renormalised.
    /// `count = 0` gives the uncertainty now. Allocates nothing.
    @_spi(Internals) public static func expectedUncertainty(mixture: PositionMixture, start: Vector3, step: Vector3, count: Int,
                                                            rangeVariance sigma2: Double, directions: Directions? = nil,
                                                            directionVariance: Double = 0, across: Vector3,
                                                            minimumWeight: Double = MotionGuidance.minimumWeight) -> Uncertainty {
        let end = start + Double(count) * step
        let single = mixture.count == 1
        let hypotheses = mixture.hypotheses
        var total = 0.0
        for h in hypotheses {
            let w = single ? 1 : exp(h.logWeight)
            if w >= minimumWeight, h.covariance.inverse != nil { total += w }
        }
        guard total > 0 else { return .unknown }
        var sums = UncertaintySums(across: across)
        for i in hypotheses.indices {
            let h = hypotheses[i]
            let w = single ? 1 : exp(h.logWeight)
            guard w >= minimumWeight, let information = h.covariance.inverse else { continue }
            var info = information
            if count > 0 {
                for k in 1...count {
                    let d = h.meanInWorld - (start + Double(k) * step)
                    let r = d.length
                    if r > 1e-6 { info += (1 / (sigma2 * r * r)) * Matrix3.outer(d, d) }
                    if let directions {
                        Directions.addInformation(to: &info, sight: directions.seen(h.meanInWorld, from: start + Double(k) * step),
                                                  measurementVariance: directionVariance)
                    }
                }
            }
            sums.addOwn(weight: w / total, mean: h.meanInWorld, covariance: info.inverse, from: end)
            for j in (i + 1)..<hypotheses.count {
                let other = hypotheses[j]
                let v = exp(other.logWeight)
                guard v >= minimumWeight, other.covariance.inverse != nil else { continue }
                var b = 0.0, separation = 0.0
                if count > 0 {
                    for k in 1...count {
                        let p = start + Double(k) * step
                        let dr = (h.meanInWorld - p).length - (other.meanInWorld - p).length
                        b += dr * dr
                        if let directions {
                            separation += Directions.separation(directions.seen(h.meanInWorld, from: p), directions.seen(other.meanInWorld, from: p))
                        }
                    }
                }
                let directionPart = directions == nil ? 0 : separation / (8 * directionVariance)
                sums.addPair(w / total, h.meanInWorld, v / total, other.meanInWorld, from: end,
                             confusion: exp(-b / (8 * sigma2) - directionPart))
            }
        }
        return sums.uncertainty
    }
}

/// One direction's path of ``MotionGuidance/pathPoints`` points ``MotionGuidance/pathSpacing``
/// apart from `start` along `unit` (world frame), walked one candidate length at a time
/// (``MotionGuidance/candidateLengths``): the information `Pᵢ⁻¹ + Σₖ uᵢₖuᵢₖᵀ/σ²` and the pair
/// distances `Σₖ (rᵢₖ − rⱼₖ)²` accumulated point by point, and the uncertainty read at each
/// length's end (``MotionGuidance/directionScores(mixture:start:unit:rangeVariance:directions:directionVariance:across:minimumWeight:)``).
/// `rangeVariance` is the variance a point's ranges have together, m², `directionVariance` its
/// directions', radians². Fixed-size: nothing is allocated.
struct PathScores {
    var selection: Selection
    let start: Vector3, unit: Vector3
    let sigma2: Double, directions: MotionGuidance.Directions?, directionVariance: Double
    let across: Vector3
    var pairDistance = InlineArray<66, Double>(repeating: 0)
    var pairDirection = InlineArray<66, Double>(repeating: 0)
    /// The points walked so far, and the candidate length read next.
    var point = 0, next = 0

    init(_ selection: Selection, start: Vector3, unit: Vector3, rangeVariance: Double, directions: MotionGuidance.Directions?,
         directionVariance: Double, across: Vector3) {
        self.selection = selection
        self.start = start
        self.unit = unit
        sigma2 = rangeVariance
        self.directions = directions
        self.directionVariance = directionVariance
        self.across = across
    }

    /// Walks on to the next candidate length and returns the uncertainty expected there;
    /// `.unknown` past the last length or without a hypothesis.
    mutating func advance() -> MotionGuidance.Uncertainty {
        let n = selection.count
        guard n > 0 else { return .unknown }
        // Read through spans: an element read from an `InlineArray` value copied the whole
        // array (a 288-byte memcpy per read of a mean).
        let weightsCopy = selection.weights, meansCopy = selection.means
        let weights = weightsCopy.span, means = meansCopy.span
        var ranges = InlineArray<12, Double>(repeating: 0)
        var seen = InlineArray<12, MotionGuidance.Directions.Sight>(repeating: .none)
        while point < MotionGuidance.pathPoints {
            point += 1
            let k = point
            let p = start + (Double(k) * MotionGuidance.pathSpacing) * unit
            for i in 0..<n {
                let d = means[i] - p
                let r = d.length
                ranges[i] = r
                if r > 1e-6 { selection.information[i] += (1 / (sigma2 * r * r)) * Matrix3.outer(d, d) }
                if let directions {
                    seen[i] = directions.seen(means[i], from: p)
                    MotionGuidance.Directions.addInformation(to: &selection.information[i], sight: seen[i],
                                                             measurementVariance: directionVariance)
                }
            }
            var pair = 0
            for i in 0..<n {
                for j in (i + 1)..<max(n, i + 1) {
                    let dr = ranges[i] - ranges[j]
                    pairDistance[pair] += dr * dr
                    if directions != nil { pairDirection[pair] += MotionGuidance.Directions.separation(seen[i], seen[j]) }
                    pair += 1
                }
            }
            guard next < MotionGuidance.candidateLengths.count,
                  abs(Double(k) * MotionGuidance.pathSpacing - MotionGuidance.candidateLengths[next]) < 1e-9 else { continue }
            var sums = UncertaintySums(across: across)
            var bearings = InlineArray<12, (Double, Double)>(repeating: (0, 0))
            for i in 0..<n { bearings[i] = UncertaintySums.horizontalUnit(means[i] - p) }
            pair = 0
            for i in 0..<n {
                sums.addOwn(weight: weights[i], mean: means[i], covariance: selection.information[i].inverse, from: p)
                for j in (i + 1)..<max(n, i + 1) {
                    let directionPart = directions == nil ? 0 : pairDirection[pair] / (8 * directionVariance)
                    sums.addPair(weights[i], means[i], bearings[i], weights[j], means[j], bearings[j],
                                 confusion: exp(-pairDistance[pair] / (8 * sigma2) - directionPart))
                    pair += 1
                }
            }
            next += 1
            return sums.uncertainty
        }
        return .unknown
    }
}

/// The hypotheses the guidance weighs (`MotionGuidance.directionScores`): the heaviest
/// `MotionGuidance.maximumHypotheses` holding at least `floor`, renormalised — or, when they
/// hold less than half the weight (a fresh tiling: dozens of tiles of about the same weight),
/// a systematic sample of the bank, every (count/12)-th tile, each standing for its neighbours
/// in the tiling. Their weights, means (world, metres) and information `P⁻¹` (m⁻²).
struct Selection {
    var weights = InlineArray<12, Double>(repeating: 0)
    var means = InlineArray<12, Vector3>(repeating: .zero)
    var information = InlineArray<12, Matrix3>(repeating: .zero)
    var count = 0

    init(_ mixture: PositionMixture, floor: Double) {
        var total = 0.0
        for h in mixture.hypotheses where count < MotionGuidance.maximumHypotheses {
            let w = mixture.count == 1 ? 1 : exp(h.logWeight)
            if w >= floor { total += take(h, weight: w) }
        }
        if total < 0.5 {
            count = 0
            total = 0
            let hypotheses = mixture.hypotheses
            let n = MotionGuidance.maximumHypotheses
            for k in 0..<n {
                let h = hypotheses[min(hypotheses.count - 1, Int((Double(k) + 0.5) * Double(hypotheses.count) / Double(n)))]
                total += take(h, weight: exp(h.logWeight))
            }
        }
        guard total > 0 else { count = 0; return }
        for i in 0..<count { weights[i] /= total }
    }

    /// Takes a hypothesis whose covariance is invertible; returns the weight taken.
    private mutating func take(_ h: PositionHypothesis, weight w: Double) -> Double {
        guard let inverse = h.covariance.inverse else { return 0 }
        weights[count] = w
        means[count] = h.meanInWorld
        information[count] = inverse
        count += 1
        return w
    }

    /// The uncertainty now, seen from `p` (no new measurement, no separation).
    func uncertainty(from p: Vector3, across: Vector3) -> MotionGuidance.Uncertainty {
        var sums = UncertaintySums(across: across)
        for i in 0..<count {
            sums.addOwn(weight: weights[i], mean: means[i], covariance: information[i].inverse, from: p)
            for j in (i + 1)..<max(count, i + 1) {
                sums.addPair(weights[i], means[i], weights[j], means[j], from: p, confusion: 1)
            }
        }
        return sums.uncertainty
    }
}

/// The sums behind ``MotionGuidance/Uncertainty``: the bearing variance and the horizontal
/// covariance `C_h` (its x–x, x–z and z–z parts), seen from one point, read across the line of sight.
struct UncertaintySums {
    var bearing = 0.0, xx = 0.0, xz = 0.0, zz = 0.0, yy = 0.0
    /// The horizontal unit vector across the line of sight, world frame: what moves the
    /// horizontal angle (along it, the range pins the position down).
    var across: Vector3

    /// A hypothesis's own part, `w gᵀP⁺g` and `w [P⁺]_h` (`P⁺` not invertible: its bearing
    /// unknown, `π²`).
    mutating func addOwn(weight w: Double, mean: Vector3, covariance: Matrix3?, from p: Vector3) {
        guard let c = covariance else { bearing += w * .pi * .pi; xx += w * 1e6; zz += w * 1e6; yy += w * 1e6; return }
        let d = mean - p
        let rho2 = d.x * d.x + d.z * d.z
        bearing += w * (rho2 > 0.05 * 0.05 ? c.quadraticForm(Vector3(-d.z / rho2, 0, d.x / rho2)) : .pi * .pi)
        xx += w * c.m00
        xz += w * c.m02
        zz += w * c.m22
        yy += w * c.m11
    }

    /// A pair's spread, discounted by the chance `confusion` the ranges still confuse them.
    mutating func addPair(_ wi: Double, _ mi: Vector3, _ wj: Double, _ mj: Vector3, from p: Vector3, confusion: Double) {
        addPair(wi, mi, Self.horizontalUnit(mi - p), wj, mj, Self.horizontalUnit(mj - p), confusion: confusion)
    }

    /// The horizontal unit vector toward `d` (x, z), or (0, 0) straight above or below.
    @inline(__always)
    static func horizontalUnit(_ d: Vector3) -> (Double, Double) {
        let n = (d.x * d.x + d.z * d.z).squareRoot()
        return n > 1e-9 ? (d.x / n, d.z / n) : (0, 0)
    }

    /// A pair's spread with the bearings' horizontal unit vectors `ui`, `uj` given: `(ψᵢ − ψⱼ)²`
    /// taken as the squared chord `‖ûᵢ − ûⱼ‖² = 2(1 − cos(ψᵢ − ψⱼ))` — the same to second
    /// order, 4 for a mirror straight behind, and no arc tangent per pair.
    @inline(__always)
    mutating func addPair(_ wi: Double, _ mi: Vector3, _ ui: (Double, Double), _ wj: Double, _ mj: Vector3, _ uj: (Double, Double),
                          confusion: Double) {
        let chord2 = 2 * (1 - (ui.0 * uj.0 + ui.1 * uj.1))
        let f = wi * wj * confusion
        bearing += f * chord2
        let dx = mi.x - mj.x, dz = mi.z - mj.z, dy = mi.y - mj.y
        xx += f * dx * dx
        xz += f * dx * dz
        zz += f * dz * dz
        yy += f * dy * dy
    }

    /// `V_ψ`, `V_h = e_⊥ᵀ C_h e_⊥` and `V_v = e_∥ᵀ C_h e_∥ + C_yy` (`e_∥` along the line of sight).
    var uncertainty: MotionGuidance.Uncertainty {
        let x = across.x, z = across.z
        let across = xx * x * x + 2 * xz * x * z + zz * z * z
        // e_∥ = (e_⊥z, 0, −e_⊥x): e_∥ᵀ C e_∥ = xx z² − 2 xz x z + zz x².
        let along = xx * z * z - 2 * xz * x * z + zz * x * x
        return MotionGuidance.Uncertainty(bearingVariance: bearing, horizontalPositionVariance: across, verticalPositionVariance: along + yy)
    }
}
