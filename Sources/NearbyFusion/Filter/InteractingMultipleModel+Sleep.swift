import Foundation

// A sleeping moving model: while an object lies still, only the stationary model runs (see
// "A sleeping moving model" in `InteractingMultipleModel`'s discussion).
extension InteractingMultipleModel {
    /// How many consecutive updates the probability of motion must stay below
    /// `wakeProbability / 4` before the moving models sleep.
    public static let sleepAfterUpdates = 10

    /// Counts an update whose probability of motion (unpinned) stayed below a quarter of
    /// ``wakeProbability``, with no steady model in play; after ``sleepAfterUpdates`` of them
    /// in a row the moving models sleep. Any other update starts the count again.
    mutating func noteQuietUpdate() {
        guard !movingAsleep else { return }
        guard !hasSteadyModel, movingProbability < wakeProbability / 4 else { quietUpdates = 0; return }
        quietUpdates += 1
        if quietUpdates >= Self.sleepAfterUpdates {
            let pm = moving.positionCovariance, ps = stationary.positionCovariance
            let excess = max((pm.m00 + pm.m11 + pm.m22) - (ps.m00 + ps.m11 + ps.m22), 0) / 3
            let offset = (moving.positionInWorld - stationary.positionInWorld).lengthSquared / 3
            guard excess.isFinite, offset.isFinite else { quietUpdates = 0; return }
            sleepingSpread = SleepingSpread(excess: excess, offset: offset)
            movingAsleep = true
            quietUpdates = 0
            trail = SleepTrail()
        }
    }

    /// Whether the measurement whose robust factors are `f_s` and `f_m` lifts the probability
    /// of motion to ``wakeProbability``: `μ_m Λ_m f_m ≥ w (μ_m Λ_m f_m + (1 − μ_m) Λ_s f_s)`,
    /// with the likelihoods of the update's earlier measurements.
    @inline(__always)
    func wakes(stationaryFactor fS: Double, movingFactor fM: Double) -> Bool {
        let m = manoeuvringProbability * movingLikelihood * fM
        let s = (1 - manoeuvringProbability) * stationaryLikelihood * fS
        return m >= wakeProbability * (m + s)
    }

    /// Wakes sleeping moving models. At a prediction (`predicted == false`) they start as what
    /// they stand for, the stationary model on the velocity prior (`v = 0`, `P_pv = 0`,
    /// `P_vv = σ_v² I`), and the prediction mixes and predicts them as usual. In the middle of an
    /// update they start where the awake manoeuvring model would be: the stationary model on
    /// the velocity prior at the oldest step of the ``SleepTrail``, then every step since run
    /// by constant velocity and corrected by the step's measurements, carried from the
    /// stationary model's linearisation to its own mean to first order (``SleepTrail/replay(velocityCovariance:)``),
    /// up to the measurement that wakes it; the likelihood of this update's earlier
    /// measurements and the probability of motion are then the replayed model's. With no
    /// trail, or a replay that is not finite, they start as the stationary model.
    public mutating func wakeMovingModel(predicted: Bool) {
        guard movingAsleep else { return }
        movingAsleep = false
        quietUpdates = 0
        moving = stationary
        if predicted, trail.count > 0 {
            let replayed = trail.replay(velocityCovariance: stationary.velocityCovariance)
            if replayed.model.isFinite && replayed.movingProbability.isFinite && replayed.movingLikelihood.isFinite {
                moving = replayed.model
                manoeuvringProbability = replayed.movingProbability
                movingLikelihood = replayed.movingLikelihood
            }
        }
        steady = moving
    }

    /// `N(ν; 0, S) = e^{−d²/2} / √det(2π S)` from `d²` and `det(2π S)`: ``UpdateOutcome/likelihood``.
    @inline(__always)
    static func density(_ d2: Double, normaliser: Double) -> Double {
        UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: false).likelihood
    }
}

extension Vector3 {
    /// `Σ aᵢ bᵢ cᵢ`: `aᵀ diag(c) b`, the bilinear form of a diagonal covariance `c`.
    @inline(__always)
    func dot(_ b: Vector3, weightedBy c: Vector3) -> Double { x * b.x * c.x + y * b.y * c.y + z * b.z * c.z }
}

/// The last steps a sleeping moving model slept through (at most ``capacity``), each with the
/// stationary model's prediction, the mode transition and the measurements that corrected
/// it, as linearised rows carried to the step's predicted mean `p̄`: enough to run the awake
/// filter's manoeuvring model and mode probability over them when it wakes, with no
/// linearisation of its own. Fixed-size: nothing is allocated.
struct SleepTrail: Sendable, Hashable {
    /// How many steps are kept.
    static let capacity = 8

    /// A measurement's robust weighing (step 4): the stationary model's factor
    /// `(1 − ε) N(ν; 0, S_s) + ε/span`, and `1 − ε` and `ε/span` for the manoeuvring model's.
    struct Robust: Sendable, Hashable {
        var stationaryFactor = 1.0, inlier = 1.0, outlier = 0.0
    }

    /// One scalar measurement row: `h = ∂h/∂p`, the innovation carried to the step's predicted
    /// mean `ν̄ = ν + hᵀ(p_lin − p̄)` (first order, `p_lin` the stationary mean it was
    /// linearised at), its variance `r` (m² or rad²) and gate. The two rows of a direction
    /// are a pair, gated and weighed together (`gate` and `robust` on the first row).
    struct Row: Sendable, Hashable {
        var h = Vector3.zero, innovation = 0.0, variance = 0.0, gate = 0.0
        var robust = Robust()
        var pairedWithNext = false
    }

    /// One step: the stationary model's predicted position `p̄` and covariance `P̄_pp`, the step
    /// `Δt` (s), `Q_a` (m²/s³ per axis), the random walk `q` (m²), `σ_v²` (m²/s²), the
    /// probability of motion before the step and the step's transitions `π_sm`, `π_ms`, and
    /// up to three rows (a range and a direction).
    struct Step: Sendable, Hashable {
        static func == (a: Step, b: Step) -> Bool {
            a.position == b.position && a.covariance == b.covariance && a.seconds == b.seconds
                && a.accelerationIntensity == b.accelerationIntensity && a.addedPositionVariance == b.addedPositionVariance
                && a.velocityPriorVariance == b.velocityPriorVariance && a.excessVariance == b.excessVariance
                && a.movingProbabilityBefore == b.movingProbabilityBefore && a.stillToMoving == b.stillToMoving
                && a.movingToStill == b.movingToStill && a.rowCount == b.rowCount
                && (0..<3).allSatisfy { a.rows[$0] == b.rows[$0] }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(position)
            hasher.combine(covariance)
            hasher.combine(seconds)
            hasher.combine(rowCount)
            for k in 0..<rowCount { hasher.combine(rows[k]) }
        }

        var position = Vector3.zero, covariance = Matrix3.zero
        var seconds = 0.0, accelerationIntensity = Vector3.zero, addedPositionVariance = 0.0, velocityPriorVariance = 0.0
        /// `e`, m² per world axis: the manoeuvring model's position variance beyond the
        /// stationary model's when it fell asleep (``InteractingMultipleModel/sleepingSpread``).
        var excessVariance = 0.0
        var movingProbabilityBefore = 0.0, stillToMoving = 0.0, movingToStill = 0.0
        /// The rows, in the order they corrected the step (the first ``rowCount`` are set).
        /// Fixed-size storage indexed in place: an accessor that yielded a stored property
        /// per index was a coroutine call per read or write.
        var rows = InlineArray<3, Row>(repeating: Row())
        var rowCount = 0

        /// `C = (Δt² σ_v² + e) I + Q_a Δt³/3` (m² per world axis): what the prediction of the
        /// stationary model started on the velocity prior adds to its position covariance,
        /// with the manoeuvring model's excess `e` it held when it fell asleep.
        var spread: Vector3 {
            let t = seconds
            return (t * t * velocityPriorVariance + excessVariance) * Vector3(1, 1, 1) + (t * t * t / 3) * accelerationIntensity
        }

        subscript(row k: Int) -> Row {
            get { rows[k] }
            set { rows[k] = newValue }
        }

        mutating func append(_ row: Row) {
            guard rowCount < 3 else { return }
            rows[rowCount] = row
            rowCount += 1
        }
    }

    /// The steps, a ring of ``capacity`` slots (fixed-size storage indexed in place).
    var steps = InlineArray<8, Step>(repeating: Step())
    /// The slot of the newest step, and how many steps are held.
    var newest = 0, count = 0

    subscript(slot k: Int) -> Step {
        get { steps[k] }
        set { steps[k] = newValue }
    }

    static func == (a: SleepTrail, b: SleepTrail) -> Bool {
        a.newest == b.newest && a.count == b.count && a.newestPosition == b.newestPosition && a.newestSpread == b.newestSpread
            && (0..<capacity).allSatisfy { a.steps[$0] == b.steps[$0] }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(newest)
        hasher.combine(count)
        for k in 0..<Self.capacity { hasher.combine(steps[k]) }
    }

    /// The newest step's predicted position `p̄` (world frame, metres) and ``Step/spread`` (m² per
    /// world axis), kept beside it so that the per-measurement path reads them without copying
    /// the step.
    private(set) var newestPosition = Vector3.zero, newestSpread = Vector3.zero

    /// Starts a step, dropping the oldest when full: `set` sets the step's fields in its slot
    /// (every field but the rows, which start empty). In place: a step is a few hundred bytes,
    /// and building one to copy it in cost as much again.
    @inline(__always)
    mutating func begin(_ set: (inout Step) -> Void) {
        newest = count == 0 ? 0 : (newest + 1) % Self.capacity
        count = min(count + 1, Self.capacity)
        (newestPosition, newestSpread) = Self.start(&steps[newest], set)
    }

    /// Empties `step`'s rows, lets `set` write its other fields, and returns its predicted
    /// position and spread.
    @inline(__always)
    private static func start(_ step: inout Step, _ set: (inout Step) -> Void) -> (position: Vector3, spread: Vector3) {
        step.rowCount = 0
        set(&step)
        return (step.position, step.spread)
    }

    /// Records a scalar row linearised at `p`.
    mutating func record(h: Vector3, innovation nu: Double, at p: Vector3, variance r: Double, gate: Double, robust: Robust) {
        guard count > 0 else { return }
        steps[newest].append(Row(h: h, innovation: nu + h.dot(p - newestPosition), variance: r, gate: gate, robust: robust))
    }

    /// Records a direction linearised at `p`, its rows a pair (the noise covariance diagonal, as
    /// ``KinematicGaussian/update(model:innovation:gated:)`` takes it).
    mutating func record(jacobian h: Jacobian2x3, innovation nu: Vector2, at p: Vector3, covariance r: SymmetricMatrix2,
                         gate: Double, robust: Robust) {
        guard count > 0, steps[newest].rowCount <= 1 else { return }
        let d = p - newestPosition
        steps[newest].append(Row(h: h.row0, innovation: nu.x + h.row0.dot(d), variance: r.a, gate: gate, robust: robust,
                                 pairedWithNext: true))
        steps[newest].append(Row(h: h.row1, innovation: nu.y + h.row1.dot(d), variance: r.c))
    }

    /// The awake filter's manoeuvring model and mode probability run over the trail, up to the
    /// newest step's last row. At the oldest step the model starts as the stationary model
    /// on the velocity prior, `N((p̄, 0), diag(P̄_pp − q I, σ_v² I))`, and `μ_m` as it was;
    /// at each step, as in the type's steps 1–5:
    ///
    ///     c̄_m = π_sm (1 − μ_m) + (1 − π_ms) μ_m,   c̄_s = 1 − c̄_m,
    ///     x_m ← mix(x_m with weight 1 − w, the stationary start with w),   w = π_sm (1 − μ_m) / c̄_m,
    ///     x_m ← constant-velocity prediction over Δt (``KinematicGaussian/predictConstantVelocity(seconds:accelerationIntensity:addedPositionVariance:)``),
    ///
    /// then each row corrects it at its own mean `p`, `ν = ν̄ − hᵀ(p − p̄)` — a range gated on
    /// `ν²/s`, a direction's pair on `νᵀ S⁻¹ ν` with `S = H P_pp Hᵀ + R` and applied as two
    /// scalar corrections in sequence — and weighs it, `Λ_m ← Λ_m ((1 − ε) N(ν; 0, S) + ε/span)`
    /// against the stationary factors recorded, `Λ_s`; a complete step ends with
    /// `μ_m ← μ_m Λ_m / (μ_m Λ_m + (1 − μ_m) Λ_s)`. Returns the model, the newest step's predicted
    /// `c̄_m` and its `Λ_m` so far. `velocityCovariance` is the prior `σ_v² I`.
    func replay(velocityCovariance: Matrix3) -> (model: KinematicGaussian, movingProbability: Double, movingLikelihood: Double) {
        let oldest = (newest - count + 1 + Self.capacity) % Self.capacity
        var m = KinematicGaussian(positionInWorld: .zero, velocityInWorld: .zero, positionCovariance: .zero, velocityCovariance: .zero)
        var mu = self[slot: oldest].movingProbabilityBefore
        var lambdaM = 1.0
        for k in 0..<count {
            let step = self[slot: (oldest + k) % Self.capacity]
            let cM = step.stillToMoving * (1 - mu) + (1 - step.movingToStill) * mu
            let cS = (1 - step.stillToMoving) * (1 - mu) + step.movingToStill * mu
            let share = cM > 1e-12 ? step.stillToMoving * (1 - mu) / cM : 1
            mu = cM / max(cM + cS, 1e-300)
            // The stationary model as the step found it, on the velocity prior.
            let fresh = KinematicGaussian(positionInWorld: step.position, velocityInWorld: .zero,
                                          positionCovariance: step.covariance - Matrix3.scaledIdentity(step.addedPositionVariance),
                                          velocityCovariance: velocityCovariance)
            if k == 0 { m = fresh } else { InteractingMultipleModel.mix(into: &m, weight: 1 - share, fresh, weight: share) }
            m.predictConstantVelocity(seconds: step.seconds, accelerationIntensity: step.accelerationIntensity,
                                      addedPositionVariance: step.addedPositionVariance)
            lambdaM = 1
            var lambdaS = 1.0
            var r = 0
            while r < step.rowCount {
                let row = step[row: r]
                let d = m.positionInWorld - step.position
                if row.pairedWithNext, r + 1 < step.rowCount {
                    let next = step[row: r + 1]
                    let nu = Vector2(row.innovation - row.h.dot(d), next.innovation - next.h.dot(d))
                    let ph0 = m.positionCovariance * row.h, ph1 = m.positionCovariance * next.h
                    let s = SymmetricMatrix2(a: row.h.dot(ph0) + row.variance, b: row.h.dot(ph1), c: next.h.dot(ph1) + next.variance)
                    var density = 0.0
                    if let inverse = s.inverse {
                        let d2 = inverse.quadraticForm(nu)
                        density = InteractingMultipleModel.density(d2, normaliser: 4 * .pi * .pi * s.determinant)
                        if d2 <= row.gate {
                            let before = m.positionInWorld
                            _ = m.correct(h: row.h, innovation: nu.x, noiseVariance: row.variance, gate: .infinity)
                            _ = m.correct(h: next.h, innovation: nu.y - next.h.dot(m.positionInWorld - before),
                                          noiseVariance: next.variance, gate: .infinity)
                        }
                    }
                    lambdaM *= row.robust.inlier * density + row.robust.outlier
                    r += 2
                } else {
                    let nu = row.innovation - row.h.dot(d)
                    let outcome = m.correct(h: row.h, innovation: nu, noiseVariance: row.variance, gate: row.gate)
                    lambdaM *= row.robust.inlier * outcome.likelihood + row.robust.outlier
                    r += 1
                }
                lambdaS *= row.robust.stationaryFactor
            }
            if k < count - 1 {
                let wm = mu * lambdaM, ws = (1 - mu) * lambdaS
                if wm + ws > 0, (wm + ws).isFinite { mu = min(max(wm / (wm + ws), 1e-6), 1 - 1e-6) }
            }
        }
        return (m, mu, lambdaM)
    }
}
