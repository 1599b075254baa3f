import Foundation

/// What the measurements gathered so far determine about one object's position, and the
/// coaching that follows from it. Produced by
/// `ConvergenceAnalysis.assess(mixture:antennaInWorld:movement:movementAlreadySufficient:movingShare:previous:previousCategory:previousBearing:bearingStandardDeviation:options:)`.
@_spi(Internals) public struct ConvergenceAssessment: Sendable, Equatable {
    /// The mixture mean `μ̄ = Σ wᵢ μᵢ`, world frame, metres.
    public var meanInWorld: Vector3
    /// Reasons that come from this object's estimator state (movement, sweeps). Session
    /// conditions (lighting) and signal are added by the engine.
    public var reasons: ConvergenceReasons
    /// The horizontal position is determined (the bearing, and the position across the line
    /// of sight): the horizontal angle may be published, and the horizontal sweep is done.
    public var horizontalResolved: Bool
    /// The bearing alone is determined (its σ within ``FusionOptions/Coaching/horizontalAngleThreshold``,
    /// the device having moved): the horizontal angle may be published where
    /// ``FusionOptions/Coaching/publishesAngleByBearingAlone`` says so, before the position across the
    /// line of sight is resolved.
    public var bearingResolved: Bool
    /// The height is determined (category established and σ small).
    public var verticalResolved: Bool
    /// Standard deviation of the object's world bearing from the device, radians
    /// (including the spread between hypotheses).
    public var horizontalAngleStandardDeviation: Double
    /// The established vertical category (`aboveOrBelow` when only the off-level is
    /// established, `unknown` when nothing is).
    public var verticalCategory: VerticalDirectionEstimate
    /// Probabilities that `Δy > τ`, `Δy < −τ` and `|Δy| ≤ τ`.
    public var probabilityAbove: Double
    /// (See ``probabilityAbove``.)
    public var probabilityBelow: Double
    /// (See ``probabilityBelow``.)
    public var probabilitySame: Double
    /// Principal axes of the within-hypothesis covariance `Σ wᵢ Pᵢ` (m², ascending); `nil`
    /// when the cheap projection bound already showed every axis within its threshold.
    public var principalAxes: SymmetricEigen3?
    /// RMS extent of the device's motion along its principal axis, metres (the threshold
    /// itself once movement has latched as sufficient).
    public var movementExtent: Double
}

/// Convergence and coaching from observability.
///
/// The estimator's own state says what is and is not determined; no timers are
/// involved. Two kinds of uncertainty are looked at:
///
/// 1. **Local information.** The within-hypothesis covariance `P_w = Σ wᵢ Pᵢ` is the
///    inverse of the information the measurements gave each hypothesis (plus its
///    prior). Its eigen-decomposition `P_w = Σₖ λₖ vₖ vₖᵀ` (closed form, validated against
///    LAPACK `dsyev`; computed only when the projection bound below does not decide) gives the
///    principal axes; a large `σₖ = √λₖ` is a direction the measurements hardly
///    constrain. In the line-of-sight frame (`e_⊥` horizontal across the line of sight,
///    `e_∥` horizontal along it, up), the part across, `σₖ |vₖ·e_⊥|`, above
///    `horizontalPositionThreshold` asks for a horizontal sweep; the rest,
///    `σₖ √((vₖ·e_∥)² + vₖ_y²)`, above `verticalPositionThreshold` asks for a vertical
///    sweep (along the line of sight the range fixes the distance, so what is left there
///    is the elevation ↔ horizontal-distance trade-off on the range sphere).
/// 2. **Global ambiguity.** Hypotheses that the motion cannot tell apart survive side by
///    side: the bearing spread `σ_ψ² = Σ wᵢ (gᵢᵀPᵢgᵢ + (ψᵢ − ψ̄)²)` (with
///    `ψ = atan2(d_x, −d_z)` the world bearing from the antenna and `g = ∂ψ/∂p`) above
///    `horizontalAngleThreshold` asks for a horizontal sweep; the spread of the means
///    horizontally and vertically likewise; an above/below mirror (the probabilities of
///    `Δy > τ` and `Δy < −τ` both substantial) asks for a vertical sweep.
/// 3. **Movement.** If the device's positions while ranging have an RMS extent below
///    `minimumMovement`, no geometry has been gathered at all: the user is asked to move
///    (and nothing else, since sweeping advice would be premature).
///
/// Position thresholds are `T_s = max(threshold, positionThresholdFractionOfDistance × distance)`
/// for an object that keeps still and `T_m = max(T_s, movingPositionThreshold)` for one that
/// moves; an estimate that is a moving object's with probability `w` (``assess(mixture:antennaInWorld:movement:movementAlreadySufficient:movingShare:previous:previousCategory:previousBearing:bearingStandardDeviation:options:)``'s
/// `movingShare`) is held to `T = √((1 − w) T_s² + w T_m²)`, the bound the models' own part
/// of its covariance, `Σⱼ wⱼ Pⱼ`, meets when each model's covariance meets its own threshold
/// (the spread between the models' means, `Σⱼ wⱼ (pⱼ − p)(pⱼ − p)ᵀ`, is judged on top).
/// Once an axis is resolved it is unresolved again only past `hysteresis ×` its threshold;
/// an established vertical category (probability ≥ p) is held until another is established
/// or its own probability falls below 1 − p.
@_spi(Internals) public enum ConvergenceAnalysis {
    /// `Φ(x)`, exactly 0 or 1 beyond ±9 (where it differs from them by less than 1e-19).
    @inline(__always)
    static func clampedNormalCDF(_ x: Double) -> Double {
        if x > 9 { return 1 }
        if x < -9 { return 0 }
        return standardNormalCDF(x)
    }

    /// Assesses one object. `movingShare` (0…1) is the probability that the estimate judged
    /// is a moving object's: 1 while it is reported moving, the motion model's moving
    /// probability while the published estimate combines a still and a moving model, 0 for
    /// a still object. `previous` carries the last horizontal/vertical resolution,
    /// `previousCategory` the last vertical category and `previousBearing` the last bearing
    /// resolution, for the hysteresis. `bearingStandardDeviation` (radians), when given, is the
    /// bearing σ judged in place of the mixture's `σ_ψ` (a density that holds the bearing's
    /// spread better than its Gaussians do: `DirectionGrid`'s weighted circular spread).
    public static func assess(mixture: PositionMixture, antennaInWorld a: Vector3, movement: MovementAccumulator,
                              movementAlreadySufficient: Bool = false, movingShare: Double = 0,
                              previous: (horizontal: Bool, vertical: Bool), previousCategory: VerticalDirectionEstimate = .unknown,
                              previousBearing: Bool = false, bearingStandardDeviation: Double? = nil,
                              options: FusionOptions) -> ConvergenceAssessment {
        assess(mixture: mixture, antennaInWorld: a,
               movementExtent: movementExtent(covariance: movement.covariance, alreadySufficient: movementAlreadySufficient, options: options),
               movingShare: movingShare, previous: previous, previousCategory: previousCategory, previousBearing: previousBearing,
               bearingStandardDeviation: bearingStandardDeviation, options: options)
    }

    /// How far the device has moved, metres: `√λ_max` of the scatter covariance `C` of its
    /// positions (``MovementAccumulator/covariance``) — or ``FusionOptions/Coaching/minimumMovement``
    /// once it has moved enough (`alreadySufficient`: movement latches, what it gathered stays).
    @inline(__always)
    static func movementExtent(covariance: @autoclosure () -> Matrix3, alreadySufficient: Bool, options: FusionOptions) -> Double {
        alreadySufficient ? options.coaching.minimumMovement : max(SymmetricEigen3.largestEigenvalue(covariance()), 0).squareRoot()
    }

    /// ``assess(mixture:antennaInWorld:movement:movementAlreadySufficient:movingShare:previous:previousCategory:previousBearing:bearingStandardDeviation:options:)``
    /// with the movement's extent given (``movementExtent(covariance:alreadySufficient:options:)``).
    static func assess(mixture: PositionMixture, antennaInWorld a: Vector3, movementExtent extent: Double, movingShare: Double,
                       previous: (horizontal: Bool, vertical: Bool), previousCategory: VerticalDirectionEstimate,
                       previousBearing: Bool, bearingStandardDeviation: Double?, options: FusionOptions) -> ConvergenceAssessment {
        let tau = options.coaching.levelTolerance
        let m = MixtureStatistics(mixture, antennaInWorld: a, levelTolerance: tau, bearingSigma: bearingStandardDeviation)
        let category = verticalCategory(m, previous: previousCategory, probability: options.coaching.verticalProbability, levelTolerance: tau)

        // Decompose uncertainty in the line-of-sight frame: e_⊥ (horizontal, across the line
        // of sight: it moves the horizontal angle), e_∥ (horizontal, along it) and up. Along
        // the line of sight the range pins the position down, so what uncertainty remains
        // there is the elevation ↔ horizontal-distance trade-off on the range sphere: a
        // vertical-geometry problem, coached as a vertical sweep.
        let (along, across) = Self.horizontalAxes(toward: m.meanInWorld, from: a)

        let distance = (m.meanInWorld - a).length
        let hScale = (previous.horizontal ? options.coaching.hysteresis : 1)
        let vScale = (previous.vertical ? options.coaching.hysteresis : 1)
        // A moving object (``FusionOptions/Coaching/movingPositionThreshold``) is held to what tracking
        // it can give, an object that may be moving to the mean square of the two thresholds
        // weighted by that probability: T = √((1 − w) T_s² + w T_m²). The angle threshold stays.
        let w = min(max(movingShare, 0), 1)
        let fromDistance = options.coaching.positionThresholdFractionOfDistance * distance
        var horizontalLimit = max(options.coaching.horizontalPositionThreshold, fromDistance)
        var verticalLimit = max(options.coaching.verticalPositionThreshold, fromDistance)
        if w > 0 {
            let moving = options.coaching.movingPositionThreshold
            let hMoving = max(horizontalLimit, moving), vMoving = max(verticalLimit, moving)
            horizontalLimit = ((1 - w) * horizontalLimit * horizontalLimit + w * hMoving * hMoving).squareRoot()
            verticalLimit = ((1 - w) * verticalLimit * verticalLimit + w * vMoving * vMoving).squareRoot()
        }
        horizontalLimit *= hScale
        verticalLimit *= vScale
        let local = localWeakness(m.withinCovariance, across: across, along: along,
                                  horizontalLimit: horizontalLimit, verticalLimit: verticalLimit)
        // Global spread of the hypotheses' means, in the same frame.
        let spreadH = m.horizontalSpread.quadraticForm(across).squareRoot()
        let spreadV = (m.horizontalSpread.quadraticForm(along) + m.verticalSpread).squareRoot()

        let horizontalResolved = m.bearingSigma <= options.coaching.horizontalAngleThreshold * hScale
            && max(local.horizontal, spreadH) <= horizontalLimit
        let bearingResolved = m.bearingSigma <= options.coaching.horizontalAngleThreshold * (previousBearing ? options.coaching.hysteresis : 1)
        let categoryEstablished = category == .same || category == .above || category == .below
        let verticalResolved = categoryEstablished
            && max(local.vertical, spreadV) <= verticalLimit

        var reasons: ConvergenceReasons = []
        if extent < options.coaching.minimumMovement {
            reasons.insert(.insufficientMovement)
        } else {
            if !horizontalResolved { reasons.insert(.insufficientHorizontalSweep) }
            if !verticalResolved { reasons.insert(.insufficientVerticalSweep) }
        }
        return ConvergenceAssessment(
            meanInWorld: m.meanInWorld, reasons: reasons, horizontalResolved: horizontalResolved && extent >= options.coaching.minimumMovement,
            bearingResolved: bearingResolved && extent >= options.coaching.minimumMovement,
            verticalResolved: verticalResolved && extent >= options.coaching.minimumMovement,
            horizontalAngleStandardDeviation: m.bearingSigma, verticalCategory: category,
            probabilityAbove: m.above, probabilityBelow: m.below, probabilitySame: m.same,
            principalAxes: local.axes, movementExtent: extent)
    }

    /// The horizontal unit vectors along the line of sight from `a` to `mean` (world frame;
    /// straight ahead, `−Z`, when `mean` is above or below `a`) and across it, `(−along_z, 0, along_x)`.
    static func horizontalAxes(toward mean: Vector3, from a: Vector3) -> (along: Vector3, across: Vector3) {
        var along = Vector3(mean.x - a.x, 0, mean.z - a.z)
        if along.lengthSquared < 1e-6 { along = Vector3(0, 0, -1) }
        along = along.normalized
        return (along, Vector3(-along.z, 0, along.x))
    }

    /// What the assessment reads from the mixture `Σ wᵢ N(μᵢ, Pᵢ)`, seen from the antenna `a`.
    struct MixtureStatistics {
        /// `μ = Σ wᵢ μᵢ`, metres, world frame.
        var meanInWorld = Vector3.zero
        /// `Σ wᵢ Pᵢ`, m² (the local part of the covariance).
        var withinCovariance = Matrix3.zero
        /// `Σ wᵢ (μᵢ − μ)(μᵢ − μ)ᵀ` restricted to x/z, m² (the global part, horizontally).
        var horizontalSpread = Matrix3.zero
        /// `Σ wᵢ (μᵢ,y − μ_y)²`, m².
        var verticalSpread = 0.0
        /// `√(Σ wᵢ (gᵢᵀ Pᵢ gᵢ + (ψᵢ − ψ̄)²))`, radians: each hypothesis's own bearing variance
        /// (`g` the gradient of the bearing `ψ = atan2(x, −z)`) plus its spread around the
        /// circular mean `ψ̄`.
        var bearingSigma = 0.0
        /// `Σ wᵢ Φ((Δyᵢ − τ)/σᵢ)`, `Σ wᵢ Φ((−τ − Δyᵢ)/σᵢ)` and the rest: the probabilities
        /// of the object being above, below, or within ±τ of the antenna's height.
        var above = 0.0, below = 0.0, same = 0.0

        /// `bearingSigma`, when given (radians), is taken as ``bearingSigma`` and the mixture's
        /// own is not computed.
        init(_ mixture: borrowing PositionMixture, antennaInWorld a: Vector3, levelTolerance tau: Double, bearingSigma given: Double? = nil) {
            if mixture.count == 1 {
                // (Its fields read in place: a copy of the whole hypothesis showed in profiles.)
                setSingle(meanInWorld: mixture.hypotheses[0].meanInWorld, covariance: mixture.hypotheses[0].covariance,
                          antennaInWorld: a, levelTolerance: tau)
                if let given { bearingSigma = given }
                return
            }
            var sinSum = 0.0, cosSum = 0.0
            for h in mixture.hypotheses {
                let w = exp(h.logWeight)
                meanInWorld += w * h.meanInWorld
                withinCovariance += w * h.covariance
                let d = h.meanInWorld - a
                if given == nil {
                    let psi = atan2(d.x, -d.z)
                    sinSum += w * sin(psi); cosSum += w * cos(psi)
                }
                let dy = d.y
                let sy = max(h.covariance.m11, 1e-12).squareRoot()
                above += w * clampedNormalCDF((dy - tau) / sy)
                below += w * clampedNormalCDF((-tau - dy) / sy)
            }
            let meanBearing = atan2(sinSum, cosSum)
            var bearingVariance = 0.0
            for h in mixture.hypotheses {
                let w = exp(h.logWeight)
                if given == nil {
                    let d = h.meanInWorld - a
                    let own = Self.ownBearingVariance(h.covariance, offset: d)
                    let dpsi = Angle.wrapped(atan2(d.x, -d.z) - meanBearing)
                    bearingVariance += w * (own + dpsi * dpsi)
                }
                let dm = h.meanInWorld - meanInWorld
                horizontalSpread += w * Matrix3.outer(Vector3(dm.x, 0, dm.z), Vector3(dm.x, 0, dm.z))
                verticalSpread += w * dm.y * dm.y
            }
            bearingSigma = given ?? bearingVariance.squareRoot()
            same = max(0, 1 - above - below)
        }

        /// The same for one hypothesis `N(μ, P)` (a tracked object's): `μ`, `P`, no spread,
        /// and its own bearing variance `gᵀPg` — what the sums above give with `w = 1`,
        /// without them.
        @inline(__always)
        private mutating func setSingle(meanInWorld mu: Vector3, covariance p: Matrix3, antennaInWorld a: Vector3,
                                        levelTolerance tau: Double) {
            meanInWorld = mu
            withinCovariance = p
            let d = mu - a
            let sy = max(p.m11, 1e-12).squareRoot()
            above = clampedNormalCDF((d.y - tau) / sy)
            below = clampedNormalCDF((-tau - d.y) / sy)
            bearingSigma = Self.ownBearingVariance(p, offset: d).squareRoot()
            same = max(0, 1 - above - below)
        }

        /// A hypothesis's own bearing variance, rad², seen from the antenna at offset `d`
        /// (its mean less the antenna, world frame, metres): `gᵀPg` with the bearing's gradient
        /// `g = (−d_z, 0, d_x)/ρ²`, `ρ² = d_x² + d_z²`; π² within 5 cm of the vertical through
        /// the antenna, directly above or below it, where the bearing is undefined.
        @inline(__always)
        static func ownBearingVariance(_ covariance: Matrix3, offset d: Vector3) -> Double {
            let rho2 = d.x * d.x + d.z * d.z
            guard rho2 >= 0.05 * 0.05 else { return .pi * .pi }
            return covariance.quadraticForm(Vector3(-d.z / rho2, 0, d.x / rho2))
        }
    }

    /// The vertical category the probabilities establish (≥ `p`): `same`, `above`, `below`,
    /// `aboveOrBelow` when only the sign is open, else `unknown`.
    ///
    /// Hysteresis: an established category is held while it keeps a probability of at least
    /// 1 − p and no other is established, and the height σ is at most τ/4. An object whose
    /// height is well known but close to ±τ (a drone flying at about the anchor's level ± τ)
    /// would otherwise drop to `unknown` and back on every small change of height, and ask
    /// for a vertical sweep each time, although the sweep would tell it nothing it does not
    /// know.
    static func verticalCategory(_ m: MixtureStatistics, previous: VerticalDirectionEstimate, probability p: Double,
                                 levelTolerance tau: Double) -> VerticalDirectionEstimate {
        var category: VerticalDirectionEstimate
        if m.same >= p { category = .same }
        else if m.above >= p { category = .above }
        else if m.below >= p { category = .below }
        else if m.above + m.below >= p { category = .aboveOrBelow }
        else { category = .unknown }
        if category == .unknown, (m.withinCovariance.m11 + m.verticalSpread).squareRoot() <= 0.25 * tau {
            switch previous {
            case .same where m.same >= 1 - p, .above where m.above >= 1 - p, .below where m.below >= 1 - p:
                category = previous
            default: break
            }
        }
        return category
    }

    /// Local information: how far the within-hypothesis covariance `P` leaves the position
    /// open across the line of sight (`horizontal`, metres) and along it or vertically
    /// (`vertical`), from its principal axes. The eigen-decomposition is needed only when a
    /// cheap bound does not settle it: for a unit e, eᵀPe = Σₖ λₖ (vₖ·e)² ≥ maxₖ λₖ (vₖ·e)²,
    /// so √(e_⊥ᵀ P e_⊥) bounds every axis's part across the line of sight, and
    /// √(e_∥ᵀ P e_∥ + P_yy) every axis's remaining part; within both limits those bounds are
    /// returned as they are (and no axes).
    static func localWeakness(_ covariance: Matrix3, across: Vector3, along: Vector3, horizontalLimit: Double,
                              verticalLimit: Double) -> (horizontal: Double, vertical: Double, axes: SymmetricEigen3?) {
        let horizontalBound = covariance.quadraticForm(across).squareRoot()
        let verticalBound = (covariance.quadraticForm(along) + covariance.m11).squareRoot()
        guard horizontalBound > horizontalLimit || verticalBound > verticalLimit else {
            return (horizontalBound, verticalBound, nil)
        }
        guard let axes = SymmetricEigen3.analytic(covariance) else { return (.infinity, .infinity, nil) }
        var horizontal = 0.0, vertical = 0.0
        for k in 0..<3 {
            let sigma = max(axes.value(k), 0).squareRoot()
            let v = axes.vector(k)
            horizontal = max(horizontal, sigma * abs(v.dot(across)))
            let alongPart = v.dot(along)
            vertical = max(vertical, sigma * (alongPart * alongPart + v.y * v.y).squareRoot())
        }
        return (horizontal, vertical, axes)
    }
}
