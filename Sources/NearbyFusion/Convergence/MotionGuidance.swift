import Foundation

/// Which way to move the device, and how far, so that an object's bearing is resolved
/// soonest — an extension of this framework beside Nearby Interaction's convergence reasons,
/// which say what is missing but not where to go.
///
/// Published while the object has no `horizontalAngle` and a position estimate exists
/// (``NearbyObjectEstimate/guidance``), `nil` once the angle is published.
public struct MotionGuidance: Sendable, Hashable {
    /// Where to move, as people move: in the device's horizontal plane, or up and down.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        case left, right, forward, back, up, down
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
    /// radians (``MotionGuidance/expectedBearingVariance(mixture:path:rangeVariance:)``).
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
    /// The step lengths considered, metres: the smallest that achieves the information is
    /// advised, and none longer than 2 m.
    public static let candidateLengths: [Double] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0]

    /// The motion of the device, among the six directions × ``candidateLengths``, that most
    /// reduces the bearing's expected variance: the shortest whose expected σ is within
    /// `threshold` (radians), else the one with the least expected variance (the shorter on a
    /// tie within 5 %). `nil` for an empty mixture, or when no motion is expected to reduce
    /// the variance by a tenth.
    ///
    /// - Parameters:
    ///   - mixture: the position estimate `Σ wᵢ N(μᵢ, Pᵢ)`, world frame.
    ///   - antennaInWorld: where the device's antenna is now, metres.
    ///   - worldFromDevice: the device's orientation.
    ///   - rangeVariance: the variance of one range, m².
    ///   - rangesPerMetre: how many ranges a metre of the motion brings (the radio's rate
    ///     over a walking pace).
    ///   - threshold: the bearing σ the angle is published at, radians.
    @_spi(Internals) public static func best(mixture: PositionMixture, antennaInWorld a: Vector3, worldFromDevice: Quaternion,
                                             rangeVariance: Double, rangesPerMetre: Double, threshold: Double) -> MotionGuidance? {
        guard !mixture.isEmpty, rangeVariance > 0, rangesPerMetre > 0 else { return nil }
        // The heaviest ``maximumHypotheses`` (pairs cost their square), each holding at least ``minimumWeight``.
        let floor = max(minimumWeight, BatchRefinement.heaviestWeight(rank: maximumHypotheses, in: mixture))
        let now = expectedBearingVariance(mixture: mixture, start: a, step: .zero, count: 0, rangeVariance: rangeVariance,
                                          minimumWeight: floor)
        guard now.isFinite else { return nil }
        var best: (guidance: MotionGuidance, variance: Double)?
        let threshold2 = threshold * threshold
        for length in candidateLengths {
            var shortestMeeting: (MotionGuidance, Double)?
            for direction in Direction.allCases {
                let unit = worldDirection(direction, worldFromDevice: worldFromDevice)
                // At most ``maximumRangesPerPath`` ranges, each weighing as many as it stands for.
                let ranges = max(1, Int((length * rangesPerMetre).rounded()))
                let count = min(ranges, maximumRangesPerPath)
                let variance = expectedBearingVariance(mixture: mixture, start: a, step: (length / Double(count)) * unit, count: count,
                                                       rangeVariance: rangeVariance * Double(count) / Double(ranges), minimumWeight: floor)
                guard variance.isFinite else { continue }
                let guidance = MotionGuidance(direction: direction, distanceMetres: length,
                                              displacementInDevice: worldFromDevice.conjugate.rotate(length * unit),
                                              expectedBearingStandardDeviation: variance.squareRoot())
                if variance <= threshold2, variance < (shortestMeeting?.1 ?? .infinity) { shortestMeeting = (guidance, variance) }
                if best == nil || variance < 0.95 * best!.variance { best = (guidance, variance) }
            }
            if let shortestMeeting { return shortestMeeting.0 }
        }
        guard let best, best.variance <= 0.9 * now else { return nil }
        return best.guidance
    }

    /// The most ranges a candidate path is scored with (more are folded into them by
    /// dividing the range variance).
    static let maximumRangesPerPath = 8

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

    /// The bearing variance, radians², expected once the ranges along a straight path are
    /// fused into the mixture `Σ wᵢ N(μᵢ, Pᵢ)`: from `start` in `count` steps of `step`
    /// (world frame, metres), a range at each `pₖ = start + k step`, `k = 1…count`, the
    /// bearing seen from the path's end:
    ///
    /// `V = Σᵢ wᵢ gᵢᵀ P⁺ᵢ gᵢ + Σ_{i<j} wᵢ wⱼ (ψᵢ − ψⱼ)² exp(−Bᵢⱼ)`
    ///
    /// - each hypothesis's own part: the range information along the path,
    ///   `Jᵢ = Σₖ uᵢₖ uᵢₖᵀ / σ²` (`uᵢₖ` the unit vector from `pₖ` to `μᵢ`, the range's
    ///   gradient), gives `P⁺ᵢ = (Pᵢ⁻¹ + Jᵢ)⁻¹` — the expected Fisher information of the
    ///   ranges, linearised at each hypothesis; `gᵢ` is the gradient of the world bearing
    ///   `ψ = atan2(x, −z)` seen from the path's end;
    /// - the spread between hypotheses, `Σ_{i<j} wᵢwⱼ (ψᵢ − ψⱼ)²` (which is `Σ wᵢ (ψᵢ − ψ̄)²`
    ///   for small spreads), each pair discounted by the chance the ranges still confuse
    ///   them, `exp(−Bᵢⱼ)` with the Bhattacharyya distance of the two range sequences they
    ///   predict, `Bᵢⱼ = Σₖ (‖μᵢ − pₖ‖ − ‖μⱼ − pₖ‖)² / (8σ²)`: a motion that makes two
    ///   hypotheses predict different ranges separates them.
    ///
    /// Hypotheses holding less than `minimumWeight` are left out (their weights are not
    /// renormalised: what they hold is neither separated nor counted). `count = 0` gives the
    /// variance now. Allocates nothing.
    @_spi(Internals) public static func expectedBearingVariance(mixture: PositionMixture, start: Vector3, step: Vector3, count: Int,
                                                                rangeVariance sigma2: Double,
                                                                minimumWeight: Double = MotionGuidance.minimumWeight) -> Double {
        let end = start + Double(count) * step
        let single = mixture.count == 1
        let hypotheses = mixture.hypotheses
        var own = 0.0, spread = 0.0
        for i in hypotheses.indices {
            let h = hypotheses[i]
            let w = single ? 1 : exp(h.logWeight)
            guard w >= minimumWeight else { continue }
            var covariance = h.covariance
            if count > 0, let information = covariance.inverse {
                var total = information
                for k in 1...count {
                    let d = h.meanInWorld - (start + Double(k) * step)
                    let r = d.length
                    guard r > 1e-6 else { continue }
                    total += (1 / (sigma2 * r * r)) * Matrix3.outer(d, d)
                }
                if let updated = total.inverse { covariance = updated }
            }
            let d = h.meanInWorld - end
            let rho2 = d.x * d.x + d.z * d.z
            guard rho2 > 0.05 * 0.05 else { own += w * .pi * .pi; continue }
            own += w * covariance.quadraticForm(Vector3(-d.z / rho2, 0, d.x / rho2))
            guard !single else { continue }
            for j in (i + 1)..<hypotheses.count {
                let other = hypotheses[j]
                let v = exp(other.logWeight)
                guard v >= minimumWeight else { continue }
                let e = other.meanInWorld - end
                // ψᵢ − ψⱼ from the two horizontal directions, wrapped to (−π, π].
                let dpsi = atan2(d.x * (-e.z) - (-d.z) * e.x, d.x * e.x + d.z * e.z)
                var b = 0.0
                if count > 0 {
                    for k in 1...count {
                        let p = start + Double(k) * step
                        let dr = (h.meanInWorld - p).length - (other.meanInWorld - p).length
                        b += dr * dr
                    }
                }
                spread += w * v * dpsi * dpsi * exp(-b / (8 * sigma2))
            }
        }
        return own + spread
    }

    /// The least weight of a hypothesis the guidance weighs.
    public static let minimumWeight = 0.01
    /// The most hypotheses the guidance weighs: the heaviest.
    static let maximumHypotheses = 12
}
