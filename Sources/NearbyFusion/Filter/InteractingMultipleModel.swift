import Foundation

/// What is known about an object's motion (as iOS 27's `NIMotionActivityState`): given by
/// the app as a hint, and estimated by the engine.
public enum MotionActivityState: String, Sendable, Hashable, CaseIterable {
    case unknown
    case stationary
    case moving
}

/// How fast an object switches between keeping still and moving, per second: the prior the
/// motion model starts from (see ``InteractingMultipleModel``).
public struct MotionPrior: Sendable, Hashable {
    /// Rate of starting to move while still, 1/s (`λ_sm`).
    public var startRate: Double
    /// Rate of stopping while moving, 1/s (`λ_ms`).
    public var stopRate: Double
    /// Probability of moving when the track starts.
    public var initialMovingProbability: Double

    public init(startRate: Double, stopRate: Double, initialMovingProbability: Double) {
        self.startRate = startRate
        self.stopRate = stopRate
        self.initialMovingProbability = initialMovingProbability
    }
}

/// Which scalar measurements the stationary model's gate rejects for both models of an
/// ``InteractingMultipleModel`` (used for ranges to objects expected to keep still).
///
/// A burst of non-line-of-sight ranges, all too long by 0.5–2 m with no change of direction,
/// is otherwise indistinguishable from the object walking away, and the wider moving model
/// would follow it out along the line of sight. Multipath only ever *lengthens* a range, so
/// a range too *short* for the stationary model is not explained by it: it is evidence that
/// the object moved (or that the estimate is wrong), and each model weighs it for itself.
public enum StationaryGate: Sendable, Hashable {
    /// Each model gates for itself.
    case off
    /// Measurements the stationary model gates out with a positive residual `z − h(p)` (a
    /// range too long) are outliers for both models. For objects with a direction: the
    /// directions confirm or deny the motion a short range suggests.
    case positiveResiduals
    /// Every measurement the stationary model gates out is an outlier for both. For objects
    /// with ranges alone, where a short range has nothing else to confirm it.
    case everyMeasurement
}

/// An interacting multiple model (IMM) filter over an object's position and velocity with
/// two motion models: **stationary** (`p' = p`) and **constant velocity** driven by white
/// acceleration noise (see ``KinematicGaussian``). The data choose between them: a tag on
/// a table, a tag picked up and carried, a peer who walks, stops and walks again.
///
/// Each update, in the numbered steps of Blom and Bar-Shalom's IMM:
///
/// 1. **Mode transition** over `Δt`, a two-state Markov chain with rates `λ_sm` (start) and
///    `λ_ms` (stop): `Π = [[1 − π_sm, π_sm], [π_ms, 1 − π_ms]]`, `π = 1 − e^{−λΔt}`.
/// 2. **Mixing**: predicted mode probabilities `c̄_j = Σᵢ Πᵢⱼ μᵢ`, mixing weights
///    `μᵢ|ⱼ = Πᵢⱼ μᵢ / c̄_j`, and each model starts from the moment-matched
///    `x₀ⱼ = Σᵢ μᵢ|ⱼ xᵢ`, `P₀ⱼ = Σᵢ μᵢ|ⱼ (Pᵢ + (xᵢ − x₀ⱼ)(xᵢ − x₀ⱼ)ᵀ)` (6-D, by blocks).
/// 3. **Prediction** of each model with its own dynamics.
/// 4. **Correction** of each model by every measurement of the update, accumulating its
///    likelihood `Λⱼ = Πₖ N(νₖⱼ; 0, Sₖⱼ)` (robust: `(1 − ε) N + ε/span` per measurement).
/// 5. **Mode probabilities** `μⱼ ∝ Λⱼ c̄ⱼ`.
/// 6. **Output**: the combined `x = Σ μⱼ xⱼ`, `P = Σ μⱼ (Pⱼ + (xⱼ − x)(xⱼ − x)ᵀ)`.
///
/// A hint from the app (``MotionActivityState``) pins the mode: `stationary` or `moving`
/// gives that model probability 1 and no transitions; `unknown` returns to the prior.
public struct InteractingMultipleModel: Sendable, Hashable {
    /// The stationary model's estimate.
    public var stationary: KinematicGaussian
    /// The constant-velocity model's estimate.
    public var moving: KinematicGaussian
    /// `μ_m`, the probability that the object is moving.
    public var movingProbability: Double
    /// The likelihood of each model's corrections in this update, `Λⱼ` (for the mode
    /// probabilities). A product of at most three robust factors, each at least the outlier
    /// density (≥ 0.002 with the default spans), so it is kept in the linear domain: no
    /// logarithm per measurement, and no underflow.
    var stationaryLikelihood = 1.0
    var movingLikelihood = 1.0

    /// Starts both models at the same position with zero velocity: `N(p, P_pp)` and
    /// `v ~ N(0, σ_v² I)`.
    public init(positionInWorld: Vector3, positionCovariance: Matrix3, velocityPriorVariance: Double,
                movingProbability: Double) {
        self.init(kinematics: KinematicGaussian(positionInWorld: positionInWorld, velocityInWorld: .zero,
                                                positionCovariance: positionCovariance,
                                                velocityCovariance: Matrix3.scaledIdentity(velocityPriorVariance)),
                  velocityPriorVariance: velocityPriorVariance, movingProbability: movingProbability)
    }

    /// Starts from a position and velocity already estimated together (the batch of an object
    /// that may move): the moving model takes `kinematics` as it is; the stationary model its
    /// position, with the velocity prior (it is a hypothesis that the object keeps still).
    public init(kinematics: KinematicGaussian, velocityPriorVariance: Double, movingProbability: Double) {
        stationary = KinematicGaussian(positionInWorld: kinematics.positionInWorld, velocityInWorld: .zero,
                                       positionCovariance: kinematics.positionCovariance,
                                       velocityCovariance: Matrix3.scaledIdentity(velocityPriorVariance))
        moving = kinematics
        self.movingProbability = min(max(movingProbability, 0), 1)
    }

    /// A placeholder for an object that is not tracked.
    public static let idle = InteractingMultipleModel(positionInWorld: .zero, positionCovariance: .identity,
                                                      velocityPriorVariance: 1, movingProbability: 0)

    /// Both models and the mode probability are finite (one branch-free sum, as
    /// ``KinematicGaussian/isFinite``).
    @inlinable @inline(__always)
    public var isFinite: Bool { (stationary.componentSum + moving.componentSum + movingProbability) * 0 == 0 }

    // MARK: Steps 1–3

    /// Mixes the two models (steps 1–2) and predicts each over `dt` seconds (step 3).
    /// `hint` pins the mode; `q` (m²) is the position random walk both models share (VIO
    /// drift, already multiplied by Δt or the distance travelled).
    public mutating func predict(seconds dt: Double, prior: MotionPrior, hint: MotionActivityState,
                                 accelerationIntensity qa: Vector3, velocityPriorVariance: Double,
                                 addedPositionVariance q: Double) {
        // (1) Transition probabilities over dt.
        var piSM = 1 - exp(-prior.startRate * max(dt, 0))
        var piMS = 1 - exp(-prior.stopRate * max(dt, 0))
        // A pinned mode takes the whole probability at this step: every model hands its
        // estimate over to it through the mixing below (so a hint that the object has
        // stopped starts the stationary model where the moving one had followed it).
        switch hint {
        case .stationary: piSM = 0; piMS = 1
        case .moving: piSM = 1; piMS = 0
        case .unknown: break
        }
        let muS = 1 - movingProbability, muM = movingProbability
        // (2) Predicted mode probabilities and mixing weights.
        let cS = (1 - piSM) * muS + piMS * muM
        let cM = piSM * muS + (1 - piMS) * muM
        // Both mixes read both previous estimates. The moving model is mixed first, in place
        // (it reads the stationary one, still untouched); the stationary one then needs the
        // previous moving estimate, saved before — the only copy of a model per step (there
        // were four: both saved, both results copied back).
        let wSS = (1 - piSM) * muS / cS, wSM = piMS * muM / cS
        let previousMoving = moving
        if cM > 1e-12 {
            Self.mix(into: &moving, weight: (1 - piMS) * muM / cM, stationary, weight: piSM * muS / cM)
        }
        if cS > 1e-12 {
            Self.mix(into: &stationary, weight: wSS, previousMoving, weight: wSM)
        }
        movingProbability = min(max(cM / max(cS + cM, 1e-300), 0), 1)
        // (3) Prediction.
        stationary.predictStationary(addedPositionVariance: q, velocityPriorVariance: velocityPriorVariance)
        moving.predictConstantVelocity(seconds: dt, accelerationIntensity: qa, addedPositionVariance: q)
        stationaryLikelihood = 1
        movingLikelihood = 1
    }

    /// `a ← mix(a, b)` (``mix(_:weight:_:weight:)``), in place: `a` is not copied in or out.
    @inline(__always)
    static func mix(into a: inout KinematicGaussian, weight wa: Double, _ b: KinematicGaussian, weight wb: Double) {
        if wb <= 1e-12 { return }
        if wa <= 1e-12 { a = b; return }
        let p = wa * a.positionInWorld + wb * b.positionInWorld
        let v = wa * a.velocityInWorld + wb * b.velocityInWorld
        let dpa = a.positionInWorld - p, dva = a.velocityInWorld - v
        let dpb = b.positionInWorld - p, dvb = b.velocityInWorld - v
        a.positionInWorld = p
        a.velocityInWorld = v
        a.positionCovariance = (wa * (a.positionCovariance + Matrix3.outer(dpa, dpa))
                                + wb * (b.positionCovariance + Matrix3.outer(dpb, dpb))).symmetrized
        a.crossCovariance = wa * (a.crossCovariance + Matrix3.outer(dpa, dva)) + wb * (b.crossCovariance + Matrix3.outer(dpb, dvb))
        a.velocityCovariance = (wa * (a.velocityCovariance + Matrix3.outer(dva, dva))
                                + wb * (b.velocityCovariance + Matrix3.outer(dvb, dvb))).symmetrized
    }

    /// The moment-matched mixture of two kinematic Gaussians with weights summing to one
    /// (step 2): `p = w_a p_a + w_b p_b`, `v` likewise, and each covariance block
    /// `Σ wᵢ (Pᵢ + δᵢ δᵢᵀ)` with `δᵢ` the model's offset from the mixed mean.
    static func mix(_ a: KinematicGaussian, weight wa: Double, _ b: KinematicGaussian, weight wb: Double) -> KinematicGaussian {
        var mixed = a
        mix(into: &mixed, weight: wa, b, weight: wb)
        return mixed
    }

    // MARK: Step 4

    /// Corrects both models with one scalar measurement (step 4) and multiplies each model's
    /// likelihood by its robust factor `(1 − ε) N(ν; 0, s) + ε/span`. Returns whether
    /// either model accepted it.
    ///
    /// `stationaryGate`: which measurements the stationary model's gate rejects for both
    /// models (neither is corrected; both get the outlier density, so the mode probabilities
    /// do not move); see ``StationaryGate``.
    public mutating func update<M: ScalarMeasurementModel>(model: M, measured z: Double,
                                                          outlierProbability eps: Double, outlierSpan: Double,
                                                          stationaryGate: StationaryGate = .off) -> Bool {
        let outlier = eps / outlierSpan, inlier = 1 - eps
        if stationaryGate != .off {
            // The stationary model's first-order `ν = z ⊖ h(p)` and `ν²/s`, `s = hᵀPh + σ²`, from
            // one linearisation.
            let (predicted, h) = model.linearised(at: stationary.positionInWorld)
            let nu = model.residual(z, predicted)
            let nis = nu * nu / (stationary.positionCovariance.quadraticForm(h) + model.variance)
            if nis > model.gate && (stationaryGate == .everyMeasurement || nu > 0) {
                // Both models get the same factor: the mode probabilities do not move.
                return false
            }
        }
        let s = stationary.update(model: model, measured: z)
        let m = moving.update(model: model, measured: z)
        stationaryLikelihood *= inlier * s.likelihood + outlier
        movingLikelihood *= inlier * m.likelihood + outlier
        return s.accepted || m.accepted
    }

    /// The same for a direction (outlier density `ε/span²`).
    public mutating func update<M: PlanarMeasurementModel>(model: M, measured z: Vector2,
                                                          outlierProbability eps: Double, outlierSpan: Double) -> Bool {
        let outlier = eps / (outlierSpan * outlierSpan), inlier = 1 - eps
        let s = stationary.update(model: model, measured: z)
        let m = moving.update(model: model, measured: z)
        stationaryLikelihood *= inlier * s.likelihood + outlier
        movingLikelihood *= inlier * m.likelihood + outlier
        return s.accepted || m.accepted
    }

    // MARK: Steps 5–6

    /// Step 5: `μⱼ ∝ Λⱼ c̄ⱼ`, after every measurement of the update. A pinned mode stays.
    public mutating func updateModeProbabilities(hint: MotionActivityState) {
        defer { stationaryLikelihood = 1; movingLikelihood = 1 }
        guard hint == .unknown else { return }
        let ws = (1 - movingProbability) * stationaryLikelihood, wm = movingProbability * movingLikelihood
        guard ws + wm > 0, (ws + wm).isFinite else { return }
        // Kept off exact 0 and 1 so that either model can always take over again.
        movingProbability = min(max(wm / (ws + wm), 1e-6), 1 - 1e-6)
    }

    /// Step 6: the combined estimate.
    public var combined: KinematicGaussian {
        Self.mix(stationary, weight: 1 - movingProbability, moving, weight: movingProbability)
    }

    /// What is published: the estimate of a mode whose probability is at least `certainty`
    /// (a tag lying still: its stationary model alone, as a static filter would give),
    /// otherwise the combined estimate (step 6), whose covariance carries the spread
    /// between the modes.
    public func published(certainty: Double) -> KinematicGaussian {
        switch certainMode(certainty) {
        case .moving?: return moving
        case .stationary?: return stationary
        case nil: return combined
        }
    }

    /// The two motion models.
    enum Mode { case stationary, moving }

    /// The model published alone: the one whose probability is at least `certainty` (the
    /// moving one first), or `nil` for the combined estimate.
    @inline(__always)
    func certainMode(_ certainty: Double) -> Mode? {
        if movingProbability >= certainty { return .moving }
        if 1 - movingProbability >= certainty { return .stationary }
        return nil
    }

    /// The position, its covariance and the velocity of ``published(certainty:)``, without
    /// the cross and velocity covariances the engine does not publish (the same values: the
    /// position block of step 6 is `Σ μⱼ (P_pp,j + (pⱼ − p)(pⱼ − p)ᵀ)`, computed as `mix` does).
    @inline(__always)
    public func publishedPosition(certainty: Double) -> (positionInWorld: Vector3, positionCovariance: Matrix3, velocityInWorld: Vector3) {
        switch certainMode(certainty) {
        case .moving?: return (moving.positionInWorld, moving.positionCovariance, moving.velocityInWorld)
        case .stationary?: return (stationary.positionInWorld, stationary.positionCovariance, stationary.velocityInWorld)
        case nil: break
        }
        // Neither mode is certain, so both weights exceed 1 − certainty: none of `mix`'s
        // negligible-weight shortcuts applies.
        let wb = movingProbability, wa = 1 - movingProbability
        let p = wa * stationary.positionInWorld + wb * moving.positionInWorld
        let v = wa * stationary.velocityInWorld + wb * moving.velocityInWorld
        let dpa = stationary.positionInWorld - p, dpb = moving.positionInWorld - p
        let covariance = (wa * (stationary.positionCovariance + Matrix3.outer(dpa, dpa))
                          + wb * (moving.positionCovariance + Matrix3.outer(dpb, dpb))).symmetrized
        return (p, covariance, v)
    }
}
