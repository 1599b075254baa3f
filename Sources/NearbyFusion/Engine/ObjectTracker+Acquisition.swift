import Foundation

// Acquisition: the bank of hypotheses re-solved from the window, and its collapse into one.
extension ObjectTracker {
    /// The acquisition step: random-walk prediction `P ← P + (q Δt + k_d Δs) I`, the entry
    /// stored in the window, every hypothesis's batch brought up to date (`BatchRefinement`),
    /// and the range checked against the hypotheses (accepted if one holding ≥ 1 % of the
    /// weight explains it within its gate).
    /// A missing direction re-weights the hypotheses through the batch's evidence.
    mutating func acquire(_ entry: WindowEntry, dt: Double, ds: Double, pathLength: Double,
                                  options o: FusionOptions) -> Bool {
        // The random walk absorbs VIO drift; an object that may move is followed by its batch's
        // velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`).
        let q = o.motion.accessoryRandomWalk * dt + o.motion.driftVariancePerMetre * ds
        mixture.predict(addedVariance: q)
        processVarianceSinceInitialisation += q
        if entry.hasRange || entry.direction != .none {
            var stored = entry
            stored.pathLengthMetres = pathLength - pathLengthAtInitialisation
            window.append(stored)
        }
        updatesSinceRefinement += 1
        if updatesSinceRefinement >= o.acquisition.batchRefinementInterval {
            let added = acquisitionAddedVariance(pathLength: pathLength, options: o)
            if mayMove {
                // An object that may walk: its position now and a velocity, from the whole window.
                BatchRefinement.refineMoving(&mixture, window: window, now: entry.timestamp,
                                             start: acquisitionStartTime, options: o, addedVariance: added)
            } else {
                BatchRefinement.refine(&mixture, window: window, options: o, addedVariance: added)
            }
            updatesSinceRefinement = 0
        }
        return entry.hasRange && bankExplains(entry.rangeMetres, from: entry.antennaInWorld, options: o)
    }

    /// Whether a hypothesis holding at least 1 % of the weight explains a range `r` measured
    /// from `a` within its gate.
    func bankExplains(_ r: Double, from a: Vector3, options o: FusionOptions) -> Bool {
        let model = o.rangeModel(from: a, measured: r)
        for h in mixture.hypotheses where h.logWeight > log(0.01) {
            if model.normalizedInnovationSquared(r, at: h.meanInWorld, covariance: h.covariance) <= o.gating.rangeGate {
                return true
            }
        }
        return false
    }

    /// Settles an acquisition: once both axes are resolved and 99 % of the weight lies in
    /// one cluster (within 3σ of the heaviest hypothesis), the cluster is collapsed into one
    /// Gaussian and tracked. No merging while acquiring: each hypothesis keeps its own prior,
    /// so that mirror images stay exact mirrors (a merge on one side only would tilt the
    /// evidence).
    ///
    /// An object that may move and that no direction reaches (a peer ranged from a watch)
    /// is never handed to the tracking filter: its batch, position and velocity over the
    /// window (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`), is
    /// the estimator. Ranges alone observe a walker's velocity only through the observer's
    /// manoeuvres over tens of seconds (velocity σ still 0.7 m/s when
    /// `distance-only-walking-peer` converges at 31 s); an EKF started there linearises each
    /// range once and diverged within 3 s (seed 1: 2.5 m off, bearing σ beyond 180°), the
    /// classic failure of range-only tracking filters, while the batch re-linearises the
    /// window at every update and stayed within decimetres.
    mutating func settleIfResolved(options o: FusionOptions, directionless: Bool) {
        mixture.pruneAndMerge(minimumWeight: o.acquisition.acquisitionPruneWeight, mergeDistanceSquared: 0)
        if mayMove && directionless { return }
        let resolved = coaching.previousResolution
        if resolved.horizontal && resolved.vertical, let cluster = mixture.dominantCluster(mahalanobisSquared: 9),
           cluster.weight > 0.99 {
            let c = cluster.merged
            // An object that may move hands its batch's velocity to the motion model.
            let kinematics = mayMove
                ? KinematicGaussian(positionInWorld: c.meanInWorld, velocityInWorld: c.velocityInWorld, positionCovariance: c.covariance,
                                    crossCovariance: c.positionVelocityCovariance, velocityCovariance: c.velocityCovariance)
                : nil
            startTracking(meanInWorld: c.meanInWorld, covariance: c.covariance, options: o, kinematics: kinematics)
            // A considered range bias stays after the hand-over (``FusionOptions/Sensors/rangeBiasStandardDeviation``):
            // the IMM weighs every range as independent, and a bias does not average out.
            considersRangeBias = o.sensors.rangeBiasStandardDeviation > 0
            consideredCovariance = o.sensors.rangeBiasStandardDeviation * o.sensors.rangeBiasStandardDeviation
                * Matrix3.outer(c.rangeBiasSensitivity, c.rangeBiasSensitivity)
        }
    }

    /// The variance, m², the batch adds to each refined hypothesis for the VIO drift since the
    /// window began: a third of the random walk predicted since (its average over the window)
    /// plus, for a fixed point, the systematic drift — considered through the acquisition's
    /// geometry (``FusionOptions/Acquisition/considersDriftGeometry``, the default: the batch adds it) or,
    /// without, as a translation by half the drift over the path travelled since, `f L / 2`
    /// in a direction nobody knows: `(f L / 2)² / 3` per axis (``FusionOptions/Acquisition/vioDriftFraction``).
    ///
    /// An object that may move is fitted with a velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`),
    /// and a drift that grows with the path — at a steady rate while the user walks steadily —
    /// moves the object's apparent position at a steady velocity: the fit's velocity absorbs
    /// it and its position *now* is where the app sees the object, so only the random walk is
    /// added. (With `(f L/2)²` too, `distance-only-walking-peer`'s mean NEES over 50 seeds was
    /// 1.59, cautious, and it converged 0.9 s later; `distance-only-turning-peer` 2.96, now
    /// 3.16.)
    @inline(__always)
    func acquisitionAddedVariance(pathLength: Double, options o: FusionOptions) -> Double {
        guard !mayMove else { return processVarianceSinceInitialisation / 3 }
        // Considered through the geometry instead (``FusionOptions/Acquisition/considersDriftGeometry``).
        if o.acquisition.considersDriftGeometry { return processVarianceSinceInitialisation / 3 }
        return processVarianceSinceInitialisation / 3 + o.driftTranslationVariance(pathMetres: pathLength - pathLengthAtInitialisation)
    }

    /// Forgets the estimate of an object no direction reaches that the app says moves,
    /// keeping where it was (its moments) and since when: the prior of its acquisition once it
    /// stops (``FusionOptions/Carry/speed``). (Out of line: the steady-state update never
    /// comes here.)
    @inline(never)
    mutating func dropWhileCarried(at t: Double) {
        let m = mixture.moments
        resetEstimate()
        hasConverged = false
        if m.meanInWorld.isFinite && m.covariance.isFinite {
            carryOrigin = CarryOrigin(meanInWorld: m.meanInWorld, covariance: m.covariance, since: t)
        }
    }

    /// Weights freshly tiled hypotheses by where the object was when the app said it started
    /// to move (``carryOrigin``; ``FusionOptions/Carry/speed``): tile `i` by
    /// `N(μᵢ; μ₀, Pᵢ + P₀ + (v T)²/3 I)`, `T` the seconds since, the chance that a point
    /// carried at up to `v` from `N(μ₀, P₀)` for `T` seconds lies in the tile.
    mutating func weighByCarryOrigin(at t: Double, options o: FusionOptions) {
        guard let origin = carryOrigin, o.carry.speed > 0 else { return }
        let spread = origin.covariance + Matrix3.scaledIdentity(o.carryDisplacementVariance(seconds: t - origin.since))
        mixture.reweighPriors { h in logGaussianDensity(h.meanInWorld, mean: origin.meanInWorld, covariance: spread + h.covariance) }
    }

    /// Tiles the first range's sphere with hypotheses and starts a new window.
    mutating func initialise(rangeMetres r: Double, at t: Double, pose: DevicePose,
                                     antennaInWorld a: Vector3, context: Context) {
        let options = context.options, pathLength = context.pathLength
        mixture.initialize(rangeMetres: r, antennaInWorld: a, forwardInWorld: pose.forwardInWorld, options: options)
        weighByCarryOrigin(at: t, options: options)
        estimateGeneration &+= 1
        phase = .acquiring
        window.removeAll()   // the first range is in the tiles' priors
        processVarianceSinceInitialisation = 0
        acquisitionStartTime = t
        pathLengthAtInitialisation = pathLength
        updatesSinceRefinement = 0
        movement.add(a)
        lastPredictionTime = t
        pathLengthAtLastPrediction = pathLength
        restarts.consecutiveRejections = 0
    }
}
