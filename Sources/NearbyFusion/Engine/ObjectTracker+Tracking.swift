import Foundation

// Tracking: the interacting multiple model of a collapsed object, and its start from a first measurement.
extension ObjectTracker {
    /// The tracking step: the IMM's mixing and prediction (the shared random walk
    /// `q Δt + k_d Δs` for VIO drift), then range and direction corrections of both models,
    /// then the mode probabilities. The mixture mirrors the published position
    /// (`InteractingMultipleModel.published(certainty:)`), its covariance plus the share a
    /// considered range bias had at the hand-over (``FusionOptions/Sensors/rangeBiasStandardDeviation``).
    ///
    /// An object expected to keep still, ranged by UWB on a device that measures no
    /// direction, is held stationary unless the app says otherwise: ranges alone cannot tell its motion from
    /// a range bias or the odometry's drift (measured on the real distance-only drone sessions:
    /// letting them decide handed the mode to the moving model, which then converged metres
    /// off). A moved tag is then recovered, as before the motion model, by the rejected-range
    /// reset.
    ///
    /// - Parameter rangesAlone: a UWB object on a device without direction finding (Channel
    ///   Sounding objects have their own test for motion, `movedAwayFromItsRanges`).
    mutating func track(_ entry: WindowEntry, dt: Double, ds: Double, rangesAlone: Bool,
                                options o: FusionOptions) -> Bool {
        let hint = motionHint == .unknown && !mayMove && rangesAlone ? .stationary : motionHint
        let q = o.motion.accessoryRandomWalk * dt + o.motion.driftVariancePerMetre * ds
        motion.predict(seconds: dt, prior: motionPrior(o), hint: hint, accelerationIntensity: o.accelerationIntensities,
                    velocityPriorVariance: o.motion.velocityPriorStandardDeviation * o.motion.velocityPriorStandardDeviation,
                    addedPositionVariance: q, steady: o.steadyMotion)
        var rangeAccepted = false
        let a = entry.antennaInWorld, rotation = entry.worldFromDevice
        // An object expected to keep still: while it is most probably still, its stationary
        // model's range gate decides for a range too long (NLOS bursts are not motion) — and,
        // with ranges alone, for any range; once motion is the likelier mode, each model gates
        // ranges for itself. A range too short while directions come is weighed by both models:
        // no multipath shortens a range, and a tag picked up and carried toward the user would
        // otherwise be reported `moving` only once its directions alone had shown it, a few
        // tenths of a second later (`accuracy --scenario tag-picked-up` prints when it is).
        let directionless = rangesAlone || ranging == .bluetoothChannelSounding
        var stationaryGate: StationaryGate = mayMove || motion.movingProbability >= 0.5 ? .off
            : (directionless ? .everyMeasurement : .positiveResiduals)
        // Ranges that run away smoothly are a carry, not a burst: for eight ranges from the one
        // that shows it, each model gates them for itself, and the moving model starts from the
        // run's line (`seedMovingModelFromRunAway`).
        var runsAway = false
        if stationaryGate == .positiveResiduals, entry.hasRange {
            if rangesRunAway(entry.rangeMetres - (motion.stationary.positionInWorld - a).length, at: entry.timestamp, options: o) {
                seedMovingModelFromRunAway(antennaInWorld: a, options: o)
            }
            // (The range that recognises a run sets the count to eight.)
            if restarts.runAwayRangesLeft > 0 {
                stationaryGate = .off
                runsAway = true
            }
        }
        if entry.hasRange {
            rangeAccepted = motion.update(model: o.rangeModel(from: a, measured: entry.rangeMetres),
                                       measured: entry.rangeMetres, outlierProbability: o.gating.outlierProbability,
                                       outlierSpan: o.gating.rangeOutlierSpan, stationaryGate: stationaryGate)
        }
        switch entry.direction {
        case .none: break
        case .azimuth:
            _ = motion.update(model: o.azimuthModel(from: a, worldFromDevice: rotation),
                           measured: entry.angles.x, outlierProbability: o.gating.outlierProbability, outlierSpan: o.gating.angleOutlierSpan)
        case .azimuthElevation:
            _ = motion.update(model: o.directionModel(from: a, worldFromDevice: rotation), measuredDirection: entry.directionInDevice,
                              outlierProbability: o.gating.outlierProbability, outlierSpan: o.gating.angleOutlierSpan)
        }
        motion.updateModeProbabilities(hint: hint)
        // A range let through to the moving model because the ranges run away counts as
        // rejected (toward a restart, see `rejectionCallsForARestart`) until the moving model
        // is the likelier: a carry too slow to turn the modes is still caught by the restart.
        if runsAway && motion.movingProbability < 0.5 { rangeAccepted = false }
        let published = motion.publishedPosition(certainty: o.motion.modeCertainty)
        publishedVelocity = published.velocityInWorld
        mixture.reset(meanInWorld: published.positionInWorld,
                      covariance: considersRangeBias ? published.positionCovariance + consideredCovariance : published.positionCovariance)
        return rangeAccepted
    }

    /// Hands the moving model the run of ranges the stationary gate set aside: the ranges of a
    /// tag carried along its line of sight were each too long for the still model, so they were
    /// weighed as a multipath burst's, for neither model, and the moving model — mixed mostly from
    /// the still one while the tag lay still — never saw the carry. Let through one at a time once
    /// the run is recognised (``rangesRunAway(_:at:options:)``), each would lie as far from the
    /// moving model's prediction as from the still one's, and the modes would turn only as the
    /// moving model's uncertainty grew, several ranges later.
    ///
    /// What the manoeuvring model holds *along the line of sight* is replaced by the run's
    /// least-squares line `e(t) ≈ ê + ė (t − t₈)` through the last eight excesses over the still
    /// model (``RestartTests/runAwayLine()``); what it holds across it — the directions it has
    /// followed all along, a lift of the tag included — is kept. With `u` the unit vector from
    /// the antenna to the still model's position `p_s`, `Π = I − u uᵀ`, and the model's `(p, v, P)`:
    ///
    ///     p ← Π p + (uᵀp_s + ê) u,          v ← Π v + ė u,
    ///     P_pp ← Π P_pp Π + σ_r² u uᵀ,      P_vv ← Π P_vv Π + σ_r² / Σ(tₖ − t̄)² · u uᵀ,
    ///     P_pv ← Π P_pv Π,
    ///
    /// `σ_r` the range noise: the line's end and slope, and nothing of the stale radial state
    /// the model had. The modes then follow the evidence as usual: the next ranges lie where the
    /// moving model predicts and outside the still model's gate.
    mutating func seedMovingModelFromRunAway(antennaInWorld a: Vector3, options o: FusionOptions) {
        guard let line = restarts.runAwayLine() else { return }
        motion.wakeMovingModel(predicted: true)
        let ps = motion.stationary.positionInWorld
        let d = ps - a
        let r = d.length
        guard r > 1e-6, line.excess.isFinite, line.rate.isFinite else { return }
        let u = d / r
        // (`o` carries the learned range noise already: `fuseWithLearnedRangeNoise`.)
        let rangeVariance = o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation
        let radial = Matrix3.outer(u, u), across = Matrix3.identity - radial
        var m = motion.moving
        m.positionInWorld = across * m.positionInWorld + (u.dot(ps) + line.excess) * u
        m.velocityInWorld = across * m.velocityInWorld + line.rate * u
        m.positionCovariance = (across * m.positionCovariance * across + rangeVariance * radial).symmetrized
        m.velocityCovariance = (across * m.velocityCovariance * across + (rangeVariance * line.rateVarianceFactor) * radial).symmetrized
        m.crossCovariance = across * m.crossCovariance * across
        guard m.isFinite else { return }
        motion.moving = m
    }

    /// Starts tracking from one range `r` and one direction `(α, ε)`: the object is at
    /// `p = a + r R d(α, ε)`, with the covariance of that point under the measurement noise,
    /// `P = σ_r² (Rd)(Rd)ᵀ + σ_α² (r R ∂d/∂α)(·)ᵀ + σ_ε² (r R ∂d/∂ε)(·)ᵀ`, where
    /// `d = (cos ε sin α, sin ε, −cos ε cos α)`, `∂d/∂α = (cos ε cos α, 0, cos ε sin α)`,
    /// `∂d/∂ε = (−sin ε sin α, cos ε, sin ε cos α)`.
    mutating func startTracking(fromRange r: Double, angles: Vector2, pose: DevicePose, antennaInWorld a: Vector3,
                                        at t: Double, context: Context) {
        let o = optionsBox.options
        let alpha = angles.x, epsilon = angles.y
        let rotation = pose.worldFromDevice
        let d = rotation.rotate(DeviceAngles.direction(azimuth: alpha, elevation: epsilon))
        let dAlpha = rotation.rotate(Vector3(cos(epsilon) * cos(alpha), 0, cos(epsilon) * sin(alpha)))
        let dEpsilon = rotation.rotate(Vector3(-sin(epsilon) * sin(alpha), cos(epsilon), sin(epsilon) * cos(alpha)))
        let sa = r * o.sensors.azimuthStandardDeviation, se = r * o.sensors.elevationStandardDeviation
        let covariance = (o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation) * Matrix3.outer(d, d)
            + (sa * sa) * Matrix3.outer(dAlpha, dAlpha) + (se * se) * Matrix3.outer(dEpsilon, dEpsilon)
        resetEstimate()
        window.removeAll()
        startTracking(meanInWorld: a + r * d, covariance: covariance.symmetrized, options: o)
        movement.add(a)
        lastPredictionTime = t
        pathLengthAtLastPrediction = context.pathLength
    }
}
