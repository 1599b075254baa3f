import Foundation

/// What is known about an object's motion (as iOS 27's `NIMotionActivityState`): given by
/// the app as a hint, and estimated by the engine.
public enum MotionActivityState: String, Sendable, Hashable, CaseIterable {
    case unknown
    case stationary
    case moving
}

/// How fast an object switches between keeping still and moving, per second: the prior the
/// motion model starts from (see `InteractingMultipleModel`).
public struct MotionPrior: Sendable, Hashable {
    /// Rate of starting to move while still, 1/s (`λ_sm`).
    public var startRate: Double
    /// Rate of stopping while moving, 1/s (`λ_ms`).
    public var stopRate: Double
    /// Probability of moving when the track starts.
    public var initialMovingProbability: Double

    /// A prior: switching rates still → moving and back (1/s), and the moving probability at the start.
    public init(startRate: Double, stopRate: Double, initialMovingProbability: Double) {
        self.startRate = startRate
        self.stopRate = stopRate
        self.initialMovingProbability = initialMovingProbability
    }
}

/// Which scalar measurements the stationary model's gate rejects for both models of an
/// `InteractingMultipleModel` (used for ranges to objects expected to keep still).
///
/// A burst of non-line-of-sight ranges, all too long by 0.5–2 m with no change of direction,
/// is otherwise indistinguishable from the object walking away, and the wider moving model
/// would follow it out along the line of sight. Multipath only ever *lengthens* a range, so
/// a range too *short* for the stationary model is not explained by it: it is evidence that
/// the object moved (or that the estimate is wrong), and each model weighs it for itself.
@_spi(Internals) public enum StationaryGate: Sendable, Hashable {
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

/// The steady walking model of an `InteractingMultipleModel`: its acceleration intensity
/// and how it trades with the manoeuvring model.
public struct SteadyMotion: Sendable, Hashable {
    /// White-acceleration intensity, m²/s³ per axis (world x, y, z).
    public var accelerationIntensity: Vector3
    /// Rate of settling from a manoeuvre into a steady walk, 1/s (`λ_settle`).
    public var settleRate: Double
    /// Rate of a steady walk turning, starting or stopping a manoeuvre, 1/s (`λ_turn`).
    public var turnRate: Double

    /// The steady walking model: its white-acceleration intensity per world axis (m²/s³) and the
    /// rates (1/s) at which a manoeuvre settles and a steady walk turns.
    public init(accelerationIntensity: Vector3, settleRate: Double, turnRate: Double) {
        self.accelerationIntensity = accelerationIntensity
        self.settleRate = settleRate
        self.turnRate = turnRate
    }
}

/// An interacting multiple model (IMM) filter over an object's position and velocity with
/// two motion models: **stationary** (`p' = p`) and **constant velocity** driven by white
/// acceleration noise (see `KinematicGaussian`). The data choose between them: a tag on
/// a table, a tag picked up and carried, a peer who walks, stops and walks again. Optionally
/// (``SteadyMotion``, `FusionOptions.motion.steadyAccelerationIntensity`) a third: a *steady* walk,
/// constant velocity with a gentle acceleration intensity, beside the *manoeuvring* one
/// (``moving``); the steps below then run over three modes, and "moving" is either.
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
///
/// **A sleeping moving model** (model-set adaptation, as in Li's variable-structure multiple
/// model estimation): an object that lies still needs only its stationary model, and the
/// moving ones cost half of every update. Once the probability of motion has stayed below a
/// quarter of ``wakeProbability`` for ``sleepAfterUpdates`` updates, the moving models stop
/// running (``movingAsleep``), and what the manoeuvring model held beyond the stationary one is
/// kept as two variances per world axis (m²): its excess `e = max(tr P_m − tr P_s, 0)/3` and
/// its offset `o = |p_m − p_s|²/3`. A sleeping model stands for the one the mix would start
/// from the stationary model — its position, `v = 0`, `P_vv = σ_v² I`, its covariance widened by
/// `e` — predicted over `Δt` by constant velocity: its mean is the stationary model's and its
/// position covariance the stationary one's plus `C = diag(Δt² σ_v² + e + q_a Δt³/3)`. Each
/// measurement `z` weighs it against the stationary model as the awake filter would, from
/// the stationary innovation `ν` and its covariance `S_s`:
///
///     S_m = S_s + H C Hᵀ,    Λ_m ← Λ_m ((1 − ε) N(ν; 0, S_m) + ε/span)
///
/// (one quadratic form, no linearisation or correction of its own), and the mode
/// probabilities run through steps 1, 5 and 6 as usual. The stationary model's mix takes the
/// sleeping model's share `w = (π_ms μ_m + π_ws μ_w)/c̄_s` as the spread it would bring,
/// `P_s ← P_s + w (e + o) I`. When a measurement would lift the probability of motion to
/// ``wakeProbability`` — the level at which the moving model starts to count in what is
/// published (`1 − certainty`, ``published(certainty:)``) — the model wakes where the awake
/// filter's would be: the last steps it slept through (``SleepTrail``) are run again by the
/// awake recursion from the stationary start, and the measurement corrects both models. A
/// second range in a row that the stationary gate sets aside (`StationaryGate`) wakes it too:
/// through a run of them the awake moving model spreads step after step, unconstrained along
/// the line of sight, which a sleeping model's one-step spread leaves out. While it sleeps
/// every published output is the stationary model's.
@_spi(Internals) public struct InteractingMultipleModel: Sendable, Hashable {
    /// The stationary model's estimate.
    public var stationary: KinematicGaussian
    /// The manoeuvring constant-velocity model's estimate (the acceleration intensity of
    /// starts, turns and stops).
    public var moving: KinematicGaussian
    /// The steady constant-velocity model's estimate (a gentle acceleration intensity: a
    /// person walking on, whose velocity the data can average over seconds); used only when
    /// ``predict(seconds:prior:hint:accelerationIntensity:velocityPriorVariance:addedPositionVariance:steady:)``
    /// is given a ``SteadyMotion``.
    public var steady: KinematicGaussian
    /// `μ_m`, the probability of the manoeuvring model, and `μ_w`, of the steady one.
    public var manoeuvringProbability: Double
    /// (See ``manoeuvringProbability``.)
    public var steadyProbability = 0.0
    /// Whether the steady model takes part (set by each prediction).
    public private(set) var hasSteadyModel = false
    /// The likelihood of each model's corrections in this update, `Λⱼ` (for the mode
    /// probabilities). A product of at most three robust factors, each at least the outlier
    /// density (≥ 0.002 with the default spans), so it is kept in the linear domain: no
    /// logarithm per measurement, and no underflow.
    var stationaryLikelihood = 1.0
    var movingLikelihood = 1.0
    var steadyLikelihood = 1.0
    /// Whether the moving models sit out this step: the mode is pinned `stationary`
    /// (``predict(seconds:prior:hint:accelerationIntensity:velocityPriorVariance:addedPositionVariance:steady:)``),
    /// so they hold no probability and nothing reads them. ``moving`` and ``steady`` are then
    /// stale until the pin is lifted.
    public private(set) var movingIdle = false
    /// The probability of motion at which sleeping moving models wake, and a quarter of which
    /// they fall asleep below (see the type's discussion); 0, the default: they never sleep.
    public var wakeProbability = 0.0
    /// Ranges in a row the stationary gate set aside while the moving model slept.
    var rejectedInARow = 0
    /// Whether the moving models sleep: ``moving`` and ``steady`` are stale, and stand for the
    /// stationary model started on the velocity prior (``combined`` and the published estimate
    /// are the stationary model's).
    public internal(set) var movingAsleep = false
    /// Updates in a row with the probability of motion below the sleeping level.
    var quietUpdates = 0
    /// The steps the moving model slept through, to start it where it would be when it wakes.
    var trail = SleepTrail()
    /// What the manoeuvring model held beyond the stationary one when it fell asleep, per world
    /// axis: `e = max(tr P_pp,m − tr P_pp,s, 0)/3` and `o = |p_m − p_s|²/3` (m²).
    var sleepingSpread = SleepingSpread()

    /// See ``sleepingSpread``.
    struct SleepingSpread: Sendable, Hashable { var excess = 0.0, offset = 0.0 }

    /// `μ_m + μ_w`, the probability that the object is moving. Setting it keeps the split
    /// between the two moving models (all to the manoeuvring one when both are 0).
    public var movingProbability: Double {
        get { manoeuvringProbability + steadyProbability }
        set {
            let total = manoeuvringProbability + steadyProbability
            if total > 0 && steadyProbability > 0 {
                steadyProbability = newValue * (steadyProbability / total)
                manoeuvringProbability = newValue - steadyProbability
            } else {
                manoeuvringProbability = newValue
                steadyProbability = 0
            }
        }
    }

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
        steady = kinematics
        manoeuvringProbability = min(max(movingProbability, 0), 1)
    }

    /// A placeholder for an object that is not tracked.
    public static let idle = InteractingMultipleModel(positionInWorld: .zero, positionCovariance: .identity,
                                                      velocityPriorVariance: 1, movingProbability: 0)

    /// Both models and the mode probability are finite (one branch-free sum, as
    /// `KinematicGaussian.isFinite`).
    @inlinable @inline(__always)
    public var isFinite: Bool {
        let sum = stationary.componentSum + moving.componentSum + manoeuvringProbability
        return (hasSteadyModel ? sum + steady.componentSum + steadyProbability : sum) * 0 == 0
    }

    // MARK: Steps 1–3

    /// Mixes the models (steps 1–2) and predicts each over `dt` seconds (step 3).
    /// `hint` pins the mode; `q` (m²) is the position random walk every model shares (VIO
    /// drift, already multiplied by Δt or the distance travelled); `steady`, when given, adds
    /// the steady walking model and its transitions.
    ///
    /// With the steady model the chain has three states. Each leaves at a total rate split
    /// among its exits (`π = 1 − e^{−λ Δt}` for the total, shared in proportion to the rates,
    /// so that no row exceeds 1 over a long gap): still → manoeuvring at `λ_sm` (a start is a
    /// manoeuvre); manoeuvring → still at `λ_ms`, → steady at `λ_settle`; steady → still at
    /// `λ_ms`, → manoeuvring at `λ_turn`.
    public mutating func predict(seconds dt: Double, prior: MotionPrior, hint: MotionActivityState,
                                 accelerationIntensity qa: Vector3, velocityPriorVariance: Double,
                                 addedPositionVariance q: Double, steady steadyMotion: SteadyMotion? = nil) {
        let t = max(dt, 0)
        // A sleeping model wakes when the app pins the mode, or when sleeping is turned off.
        if movingAsleep && (hint != .unknown || wakeProbability <= 0) { wakeMovingModel(predicted: false) }
        hasSteadyModel = steadyMotion != nil && !movingAsleep
        // (1) Transition probabilities over dt (the last ones again when Δt and the rates are
        // those of the previous step, as they are at a steady update rate).
        let key = TransitionProbabilities.Key(seconds: t, startRate: prior.startRate, stopRate: prior.stopRate,
                                              settleRate: steadyMotion?.settleRate ?? -1, turnRate: steadyMotion?.turnRate ?? -1)
        if transitions.key != key { transitions = TransitionProbabilities(key) }
        var piSM = transitions.stillToManoeuvring, piMS = transitions.manoeuvringToStill
        var piMW = transitions.manoeuvringToSteady, piWS = transitions.steadyToStill, piWM = transitions.steadyToManoeuvring
        // A pinned mode takes the whole probability at this step: every model hands its
        // estimate over to it through the mixing below (so a hint that the object has
        // stopped starts the stationary model where the moving ones had followed it). A
        // hint of motion lets the two moving models share it.
        switch hint {
        case .stationary: piSM = 0; piMS = 1; piMW = 0; piWS = 1; piWM = 0
        case .moving: piSM = 1; piMS = 0; piWS = 0
        case .unknown: break
        }
        let muS = 1 - movingProbability, muM = manoeuvringProbability, muW = steadyProbability
        // (2) Predicted mode probabilities and mixing weights.
        let cS = (1 - piSM) * muS + piMS * muM + piWS * muW
        let cM = piSM * muS + (1 - piMS - piMW) * muM + piWM * muW
        let cW = piMW * muM + (1 - piWS - piWM) * muW
        if movingAsleep {
            // Asleep: the moving models are the stationary one, so no mix changes anything; the
            // steady model's share, if any, goes to the manoeuvring one (`μ_w = 0` while asleep).
            manoeuvringProbability = min(max((cM + cW) / max(cS + cM + cW, 1e-300), 0), 1)
            steadyProbability = 0
            // The stationary model's mix (step 2) with the sleeping model, of weight
            // `w = (π_ms μ_m + π_ws μ_w) / c̄_s` and the spread it had when it fell asleep:
            // `P_pp ← P_pp + w (e + o) I`.
            if cS > 1e-12 {
                let w = (piMS * muM + piWS * muW) / cS
                stationary.positionCovariance += Matrix3.scaledIdentity(w * (sleepingSpread.excess + sleepingSpread.offset))
            }
            stationary.predictStationary(addedPositionVariance: q, velocityPriorVariance: velocityPriorVariance)
            movingIdle = false
            trail.begin { step in
                step.position = stationary.positionInWorld
                step.covariance = stationary.positionCovariance
                step.seconds = t
                step.accelerationIntensity = qa
                step.addedPositionVariance = q
                step.velocityPriorVariance = velocityPriorVariance
                step.excessVariance = sleepingSpread.excess
                step.movingProbabilityBefore = muM
                step.stillToMoving = piSM
                step.movingToStill = piMS
            }
            stationaryLikelihood = 1
            movingLikelihood = 1
            steadyLikelihood = 1
            return
        }
        // Every mix reads the previous estimates. The manoeuvring model is mixed first, in
        // place (it reads the stationary and steady ones, still untouched); the stationary
        // one then needs the previous manoeuvring estimate, saved before, and the steady one
        // last the same (no still object starts on the steady model) — the only copy of a
        // model per step.
        // Pinned still: once the stationary model has taken the moving models' estimates over
        // (the mix below, at the first pinned step), they hold no probability and nothing reads
        // them — the mixes give them weight 0 — and they are neither predicted nor corrected (a
        // still tag the app says is still pays for one model). When the pin is lifted, the
        // manoeuvring model starts from the stationary one, as the mix would start it from a
        // model of no weight (here also where no time has passed and the mix does not run).
        if movingIdle && hint != .stationary {
            moving = stationary
            movingIdle = false
        }
        let previousMoving = moving
        if cM > 1e-12 {
            Self.mix(into: &moving, weight: (1 - piMS - piMW) * muM / cM, stationary, weight: piSM * muS / cM,
                     steady, weight: piWM * muW / cM)
        }
        if cS > 1e-12 {
            Self.mixPosition(into: &stationary, weight: (1 - piSM) * muS / cS, previousMoving, weight: piMS * muM / cS,
                             steady, weight: piWS * muW / cS)
        }
        // A steady model that would hold less than 10⁻⁴ of the probability (a tag lying
        // still) is left out of this step — its share goes to the manoeuvring model — and
        // starts again from the manoeuvring model when it is back (three models cost a
        // third more per update than two).
        var cM1 = cM, cW1 = cW
        if hasSteadyModel && cW < Self.steadyActivation * (cS + cM + cW) {
            hasSteadyModel = false
            cM1 = cM + cW
            cW1 = 0
        }
        if hasSteadyModel {
            if cW > 1e-12 {
                Self.mix(into: &steady, weight: (1 - piWS - piWM) * muW / cW, previousMoving, weight: piMW * muM / cW)
            } else {
                steady = moving
            }
        }
        let total = max(cS + cM1 + cW1, 1e-300)
        manoeuvringProbability = min(max(cM1 / total, 0), 1)
        steadyProbability = hasSteadyModel ? min(max(cW1 / total, 0), 1) : 0
        // (3) Prediction.
        stationary.predictStationary(addedPositionVariance: q, velocityPriorVariance: velocityPriorVariance)
        movingIdle = hint == .stationary
        if !movingIdle { moving.predictConstantVelocity(seconds: dt, accelerationIntensity: qa, addedPositionVariance: q) }
        if hasSteadyModel, let w = steadyMotion {
            steady.predictConstantVelocity(seconds: dt, accelerationIntensity: w.accelerationIntensity, addedPositionVariance: q)
        }
        stationaryLikelihood = 1
        movingLikelihood = 1
        steadyLikelihood = 1
    }

    /// The smallest share of the probability for which the steady model is kept.
    static let steadyActivation = 1e-4

    /// The transition probabilities of the last prediction and what they were computed for.
    var transitions = TransitionProbabilities(.init(seconds: 0, startRate: 0, stopRate: 0, settleRate: -1, turnRate: -1))

    /// Step 1's transition probabilities over `Δt` seconds: `π = 1 − e^{−λΔt}` for each state's
    /// total exit rate `λ`, shared among its exits in proportion to their rates (see
    /// ``predict(seconds:prior:hint:accelerationIntensity:velocityPriorVariance:addedPositionVariance:steady:)``).
    struct TransitionProbabilities: Sendable, Hashable {
        /// `Δt` (s) and the rates (1/s) they are for; the steady model's rates are −1 without it.
        struct Key: Sendable, Hashable {
            var seconds: Double, startRate: Double, stopRate: Double, settleRate: Double, turnRate: Double
        }
        var key: Key
        var stillToManoeuvring: Double, manoeuvringToStill: Double, manoeuvringToSteady = 0.0
        var steadyToStill = 0.0, steadyToManoeuvring = 0.0

        init(_ key: Key) {
            self.key = key
            let t = key.seconds
            stillToManoeuvring = 1 - exp(-key.startRate * t)
            manoeuvringToStill = 1 - exp(-key.stopRate * t)
            guard key.settleRate >= 0 else { return }
            let leaveM = key.stopRate + key.settleRate, leaveW = key.stopRate + key.turnRate
            let pM = 1 - exp(-leaveM * t), pW = 1 - exp(-leaveW * t)
            if leaveM > 0 { manoeuvringToStill = pM * (key.stopRate / leaveM); manoeuvringToSteady = pM * (key.settleRate / leaveM) }
            if leaveW > 0 { steadyToStill = pW * (key.stopRate / leaveW); steadyToManoeuvring = pW * (key.turnRate / leaveW) }
        }
    }

    /// `a ← mix(a, b, c)`, in place: the three-way moment match, by the two-way
    /// ``mix(into:weight:_:weight:)`` when a weight is negligible.
    @inline(__always)
    static func mix(into a: inout KinematicGaussian, weight wa: Double, _ b: KinematicGaussian, weight wb: Double,
                    _ c: KinematicGaussian, weight wc: Double) {
        if wc <= 1e-12 { mix(into: &a, weight: wa, b, weight: wb); return }
        if wb <= 1e-12 { mix(into: &a, weight: wa, c, weight: wc); return }
        if wa <= 1e-12 { a = b; mix(into: &a, weight: wb, c, weight: wc); return }
        let p = wa * a.positionInWorld + wb * b.positionInWorld + wc * c.positionInWorld
        let v = wa * a.velocityInWorld + wb * b.velocityInWorld + wc * c.velocityInWorld
        let dpa = a.positionInWorld - p, dva = a.velocityInWorld - v
        let dpb = b.positionInWorld - p, dvb = b.velocityInWorld - v
        let dpc = c.positionInWorld - p, dvc = c.velocityInWorld - v
        a.positionInWorld = p
        a.velocityInWorld = v
        a.positionCovariance = (wa * (a.positionCovariance + Matrix3.outer(dpa, dpa)) + wb * (b.positionCovariance + Matrix3.outer(dpb, dpb))
                                + wc * (c.positionCovariance + Matrix3.outer(dpc, dpc))).symmetrized
        a.crossCovariance = wa * (a.crossCovariance + Matrix3.outer(dpa, dva)) + wb * (b.crossCovariance + Matrix3.outer(dpb, dvb))
            + wc * (c.crossCovariance + Matrix3.outer(dpc, dvc))
        a.velocityCovariance = (wa * (a.velocityCovariance + Matrix3.outer(dva, dva)) + wb * (b.velocityCovariance + Matrix3.outer(dvb, dvb))
                                + wc * (c.velocityCovariance + Matrix3.outer(dvc, dvc))).symmetrized
    }

    /// The position and its covariance of `mix(a, b, c)`, in place: `p = Σ wᵢ pᵢ`,
    /// `P_pp = Σ wᵢ (P_pp,ᵢ + δᵢ δᵢᵀ)`, `δᵢ = pᵢ − p`. For the stationary model, whose
    /// prediction then sets its velocity and the velocity's blocks afresh (the other blocks'
    /// mix would be thrown away).
    @inline(__always)
    static func mixPosition(into a: inout KinematicGaussian, weight wa: Double, _ b: KinematicGaussian, weight wb: Double,
                            _ c: KinematicGaussian, weight wc: Double) {
        let usesB = wb > 1e-12, usesC = wc > 1e-12
        if !usesB && !usesC { return }
        if wa <= 1e-12 && !(usesB && usesC) {
            let only = usesB ? b : c
            a.positionInWorld = only.positionInWorld
            a.positionCovariance = only.positionCovariance
            return
        }
        let wa1 = wa <= 1e-12 ? 0 : wa, wb1 = usesB ? wb : 0, wc1 = usesC ? wc : 0
        let p = wa1 * a.positionInWorld + wb1 * b.positionInWorld + wc1 * c.positionInWorld
        let dpa = a.positionInWorld - p, dpb = b.positionInWorld - p, dpc = c.positionInWorld - p
        var covariance = wa1 * (a.positionCovariance + Matrix3.outer(dpa, dpa)) + wb1 * (b.positionCovariance + Matrix3.outer(dpb, dpb))
        if usesC { covariance = covariance + wc1 * (c.positionCovariance + Matrix3.outer(dpc, dpc)) }
        a.positionInWorld = p
        a.positionCovariance = covariance.symmetrized
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
    /// do not move); see `StationaryGate`.
    public mutating func update<M: ScalarMeasurementModel>(model: M, measured z: Double,
                                                          outlierProbability eps: Double, outlierSpan: Double,
                                                          stationaryGate: StationaryGate = .off) -> Bool {
        let outlier = eps / outlierSpan, inlier = 1 - eps
        // The stationary model's linearisation, made once: the gate reads it, and so does the
        // stationary model's correction.
        let base = model.linearised(at: stationary.positionInWorld)
        if stationaryGate != .off {
            // The stationary model's first-order `ν = z ⊖ h(p)` and `ν²/s`, `s = hᵀPh + σ²`.
            let (predicted, h) = base
            let nu = model.residual(z, predicted)
            let nis = nu * nu / (stationary.positionCovariance.quadraticForm(h) + model.variance)
            if nis > model.gate && (stationaryGate == .everyMeasurement || nu > 0) {
                // Both models get the same factor: the mode probabilities do not move. A
                // sleeping model wakes at the second in a row: over a run of ranges set aside
                // the moving model spreads step after step, which a sleeping model's one-step
                // spread leaves out.
                if movingAsleep { if rejectedInARow >= 1 { wakeMovingModel(predicted: true) } else { rejectedInARow += 1 } }
                return false
            }
            rejectedInARow = 0
        }
        if movingAsleep {
            // The stationary model's step 1 of `KinematicGaussian.update(model:measured:gated:)`,
            // and the sleeping model's `s_m = s_s + Σ hᵢ² Cᵢ` at the same innovation.
            let (h, nu, r) = stationary.linearisedInnovation(model: model, measured: z, linearisation: base)
            let sS = stationary.positionCovariance.quadraticForm(h) + r
            let sM = sS + h.dot(h, weightedBy: trail.newestSpread)
            let fS = inlier * Self.density(nu * nu / sS, normaliser: 2 * .pi * sS) + outlier
            let fM = inlier * Self.density(nu * nu / sM, normaliser: 2 * .pi * sM) + outlier
            if !wakes(stationaryFactor: fS, movingFactor: fM) {
                stationaryLikelihood *= fS
                movingLikelihood *= fM
                trail.record(h: h, innovation: nu, at: stationary.positionInWorld, variance: r, gate: model.gate,
                             robust: SleepTrail.Robust(stationaryFactor: fS, inlier: inlier, outlier: outlier))
                return stationary.correct(h: h, innovation: nu, noiseVariance: r, gate: model.gate).accepted
            }
            wakeMovingModel(predicted: true)
        }
        let (h, nu, r) = stationary.linearisedInnovation(model: model, measured: z, linearisation: base)
        let s = stationary.correct(h: h, innovation: nu, noiseVariance: r, gate: model.gate)
        if movingIdle { return s.accepted }
        let m = moving.update(model: model, measured: z)
        stationaryLikelihood *= inlier * s.likelihood + outlier
        movingLikelihood *= inlier * m.likelihood + outlier
        guard hasSteadyModel else { return s.accepted || m.accepted }
        let w = steady.update(model: model, measured: z)
        steadyLikelihood *= inlier * w.likelihood + outlier
        return s.accepted || m.accepted || w.accepted
    }

    /// The same for a direction (outlier density `ε/span²`).
    ///
    /// The models of a tag lying still sit millimetres apart, and a direction's
    /// linearisation (two arc tangents and the Jacobian) is the update's dearest part: the
    /// manoeuvring model takes the stationary model's, carried to its own mean to first
    /// order, `h(p_m) ≈ h(p_s) + H_s (p_m − p_s)`, `H_m ≈ H_s`, when the model says the term
    /// this drops is negligible (``PlanarMeasurementModel/carriesLinearisation(from:to:)``).
    public mutating func update<M: PlanarMeasurementModel>(model: M, measured z: Vector2,
                                                          outlierProbability eps: Double, outlierSpan: Double) -> Bool {
        let outlier = eps / (outlierSpan * outlierSpan), inlier = 1 - eps
        let ps = stationary.positionInWorld
        let base = model.linearised(at: ps)
        if movingAsleep {
            let i = PlanarInnovation(model: model, measured: z, linearisation: base, covariance: stationary.positionCovariance)
            if let accepted = updateWhileAsleep(model: model, innovation: i, inlier: inlier, outlier: outlier) { return accepted }
        }
        let s = stationary.update(model: model, measured: z, linearisation: base)
        if movingIdle { return s.accepted }
        // (Read after a wake: the woken model starts where its replay left it.)
        let pm = moving.positionInWorld
        let m: UpdateOutcome
        if model.carriesLinearisation(from: ps, to: pm) {
            let d = pm - ps, h = base.jacobian
            m = moving.update(model: model, measured: z,
                              linearisation: (base.predicted + Vector2(h.row0.dot(d), h.row1.dot(d)), h))
        } else {
            m = moving.update(model: model, measured: z)
        }
        stationaryLikelihood *= inlier * s.likelihood + outlier
        movingLikelihood *= inlier * m.likelihood + outlier
        guard hasSteadyModel else { return s.accepted || m.accepted }
        let w = steady.update(model: model, measured: z)
        steadyLikelihood *= inlier * w.likelihood + outlier
        return s.accepted || m.accepted || w.accepted
    }

    /// ``update(model:measured:outlierProbability:outlierSpan:)`` for a direction given as the
    /// measured device-frame vector `m`: every model's innovation is formed from `m` itself
    /// (``DirectionModel/linearisedInnovation(measuredDirection:at:)``: two arc tangents of
    /// small angles where the angles of `m` and of the prediction take four, the same
    /// innovation to a couple of units in the last place). The manoeuvring model carries the
    /// stationary model's linearisation when the model allows it, as above:
    /// `ν_m = ν_s − H_s (p_m − p_s)`, `H_m ≈ H_s`.
    public mutating func update(model: DirectionModel, measuredDirection m: Vector3,
                                outlierProbability eps: Double, outlierSpan: Double) -> Bool {
        let outlier = eps / (outlierSpan * outlierSpan), inlier = 1 - eps
        // A model's innovation: `m` against its mean `p`, with its position covariance.
        func innovation(at p: Vector3, covariance: Matrix3) -> PlanarInnovation {
            let (nu, jacobian) = model.linearisedInnovation(measuredDirection: m, at: p)
            return PlanarInnovation(innovation: nu, jacobian: jacobian, noise: model.covariance, covariance: covariance)
        }
        let ps = stationary.positionInWorld
        let i = innovation(at: ps, covariance: stationary.positionCovariance)
        if movingAsleep {
            if let accepted = updateWhileAsleep(model: model, innovation: i, inlier: inlier, outlier: outlier) { return accepted }
        }
        // (A wake leaves the stationary model as it was: `i` still holds.)
        let s = stationary.update(model: model, innovation: i)
        if movingIdle { return s.accepted }
        let pm = moving.positionInWorld
        let movingInnovation: PlanarInnovation
        if model.carriesLinearisation(from: ps, to: pm) {
            let d = pm - ps, h = i.jacobian
            movingInnovation = PlanarInnovation(innovation: i.innovation - Vector2(h.row0.dot(d), h.row1.dot(d)),
                                                jacobian: h, noise: model.covariance, covariance: moving.positionCovariance)
        } else {
            movingInnovation = innovation(at: pm, covariance: moving.positionCovariance)
        }
        let mo = moving.update(model: model, innovation: movingInnovation)
        stationaryLikelihood *= inlier * s.likelihood + outlier
        movingLikelihood *= inlier * mo.likelihood + outlier
        guard hasSteadyModel else { return s.accepted || mo.accepted }
        let w = steady.update(model: model, innovation: innovation(at: steady.positionInWorld, covariance: steady.positionCovariance))
        steadyLikelihood *= inlier * w.likelihood + outlier
        return s.accepted || mo.accepted || w.accepted
    }

    /// A direction while the moving model sleeps, from the stationary model's innovation `i`:
    /// the sleeping model's `S_m = S_s + H C Hᵀ` at the same innovation weighs it; unless the
    /// measurement wakes it (then `nil`, the moving model awake and nothing corrected), both
    /// likelihoods take their robust factors `(1 − ε) N + ε/span²` (`inlier`, `outlier`), the
    /// step joins the trail and the stationary model is corrected. Returns whether it accepted.
    @inline(__always)
    mutating func updateWhileAsleep<M: PlanarMeasurementModel>(model: M, innovation i: PlanarInnovation,
                                                               inlier: Double, outlier: Double) -> Bool? {
        let h0 = i.jacobian.row0, h1 = i.jacobian.row1, c = trail.newestSpread, r = model.covariance
        let sM = SymmetricMatrix2(a: h0.dot(i.ph0) + r.a + h0.dot(h0, weightedBy: c),
                                  b: h0.dot(i.ph1) + r.b + h0.dot(h1, weightedBy: c),
                                  c: h1.dot(i.ph1) + r.c + h1.dot(h1, weightedBy: c))
        let fS = inlier * i.outcome(accepted: false).likelihood + outlier
        let fM = inlier * (sM.inverse.map { Self.density($0.quadraticForm(i.innovation), normaliser: 4 * .pi * .pi * sM.determinant) } ?? 0)
            + outlier
        if wakes(stationaryFactor: fS, movingFactor: fM) {
            wakeMovingModel(predicted: true)
            return nil
        }
        stationaryLikelihood *= fS
        movingLikelihood *= fM
        trail.record(jacobian: i.jacobian, innovation: i.innovation, at: stationary.positionInWorld, covariance: r, gate: model.gate,
                     robust: SleepTrail.Robust(stationaryFactor: fS, inlier: inlier, outlier: outlier))
        return stationary.update(model: model, innovation: i).accepted
    }

    // MARK: Steps 5–6

    /// Step 5: `μⱼ ∝ Λⱼ c̄ⱼ`, after every measurement of the update. A pinned mode stays.
    public mutating func updateModeProbabilities(hint: MotionActivityState) {
        defer { stationaryLikelihood = 1; movingLikelihood = 1; steadyLikelihood = 1 }
        switch hint {
        case .stationary: return
        case .moving:
            // Pinned to motion: the two moving models share it by their likelihoods.
            guard hasSteadyModel else { return }
            let wm = manoeuvringProbability * movingLikelihood, ww = steadyProbability * steadyLikelihood
            guard wm + ww > 0, (wm + ww).isFinite else { return }
            steadyProbability = ww / (wm + ww)
            manoeuvringProbability = 1 - steadyProbability
            return
        case .unknown: break
        }
        defer { if wakeProbability > 0 { noteQuietUpdate() } }
        let ws = (1 - movingProbability) * stationaryLikelihood, wm = manoeuvringProbability * movingLikelihood
        let ww = hasSteadyModel ? steadyProbability * steadyLikelihood : 0
        guard ws + wm + ww > 0, (ws + wm + ww).isFinite else { return }
        // Kept off exact 0 and 1 so that either mode, still or moving, can always take over again.
        let moving = min(max((wm + ww) / (ws + wm + ww), 1e-6), 1 - 1e-6)
        if ww > 0 {
            steadyProbability = moving * (ww / (wm + ww))
            manoeuvringProbability = moving - steadyProbability
        } else {
            manoeuvringProbability = moving
            steadyProbability = 0
        }
    }

    /// The two moving models combined, `μ_m/(μ_m + μ_w)` and `μ_w/(μ_m + μ_w)` (the
    /// manoeuvring model alone without the steady one; the stationary model while they sleep).
    public var movingEstimate: KinematicGaussian {
        if movingAsleep { return stationary }
        guard steadyProbability > 0 else { return moving }
        let total = movingProbability
        return Self.mix(moving, weight: manoeuvringProbability / total, steady, weight: steadyProbability / total)
    }

    /// Step 6: the combined estimate (the stationary model while the moving ones sleep).
    public var combined: KinematicGaussian {
        if movingAsleep { return stationary }
        guard steadyProbability > 0 else {
            return Self.mix(stationary, weight: 1 - movingProbability, moving, weight: movingProbability)
        }
        var mixed = stationary
        Self.mix(into: &mixed, weight: 1 - movingProbability, moving, weight: manoeuvringProbability, steady, weight: steadyProbability)
        return mixed
    }

    /// What is published: the estimate of a mode whose probability is at least `certainty`
    /// (a tag lying still: its stationary model alone, as a static filter would give),
    /// otherwise the combined estimate (step 6), whose covariance carries the spread
    /// between the modes.
    public func published(certainty: Double) -> KinematicGaussian {
        switch certainMode(certainty) {
        case .moving?: return movingEstimate
        case .stationary?: return stationary
        case nil: return combined
        }
    }

    /// The two motion models.
    enum Mode { case stationary, moving }

    /// The model published alone: the one whose probability is at least `certainty` (the
    /// moving one first), or `nil` for the combined estimate; the stationary one while the
    /// moving models sleep.
    @inline(__always)
    func certainMode(_ certainty: Double) -> Mode? {
        if movingAsleep { return .stationary }
        if movingProbability >= certainty { return .moving }
        if 1 - movingProbability >= certainty { return .stationary }
        return nil
    }

    /// The position, its covariance and the velocity of ``published(certainty:)``, without
    /// the cross and velocity covariances the engine does not publish (the same values: the
    /// position block of step 6 is `Σ μⱼ (P_pp,j + (pⱼ − p)(pⱼ − p)ᵀ)`, computed as `mix` does).
    @inline(__always)
    public func publishedPosition(certainty: Double) -> (positionInWorld: Vector3, positionCovariance: Matrix3, velocityInWorld: Vector3) {
        let mode = certainMode(certainty)
        if mode == .stationary { return (stationary.positionInWorld, stationary.positionCovariance, stationary.velocityInWorld) }
        if mode == .moving && steadyProbability == 0 { return (moving.positionInWorld, moving.positionCovariance, moving.velocityInWorld) }
        // The models in play: all of them, or the two moving ones when motion is certain. A
        // weight that is there exceeds 1 − certainty (or is the steady model's, kept above
        // 10⁻⁴), so none of `mix`'s negligible-weight shortcuts applies; a steady model with
        // no weight is left out (it may be stale).
        let total = mode == .moving ? movingProbability : 1
        let ws = mode == .moving ? 0 : 1 - movingProbability
        let wm = manoeuvringProbability / total, ww = steadyProbability / total
        var p = ws * stationary.positionInWorld + wm * moving.positionInWorld
        var v = ws * stationary.velocityInWorld + wm * moving.velocityInWorld
        if ww > 0 {
            p = p + ww * steady.positionInWorld
            v = v + ww * steady.velocityInWorld
        }
        let ds = stationary.positionInWorld - p, dm = moving.positionInWorld - p
        var covariance = ws * (stationary.positionCovariance + Matrix3.outer(ds, ds)) + wm * (moving.positionCovariance + Matrix3.outer(dm, dm))
        if ww > 0 {
            let dw = steady.positionInWorld - p
            covariance = covariance + ww * (steady.positionCovariance + Matrix3.outer(dw, dw))
        }
        return (p, covariance.symmetrized, v)
    }
}
