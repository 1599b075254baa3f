import Foundation

/// Immutable options shared by an engine and its objects' updates.
final class OptionsBox: Sendable {
    let options: FusionOptions
    /// `options.rangeErrorDensity`, built once (it takes a logarithm).
    let rangeErrorDensity: RangeErrorDensity
    init(_ options: FusionOptions) {
        self.options = options
        rangeErrorDensity = options.rangeErrorDensity
    }
}

extension ObjectTracker {
    /// What an object's update needs from the engine. The options travel by reference (a
    /// shared immutable box): copying their ~400 bytes on every update showed in profiles.
    struct Context {
        let optionsBox: OptionsBox
        /// Read once per update and passed down as an argument (each read copies the
        /// struct out of the box).
        var options: FusionOptions { optionsBox.options }
        let capabilities: DeviceCapabilities
        let cameraAssistanceEnabled: Bool
        /// Device path length while VIO tracked normally, metres.
        let pathLength: Double
        /// The device pose at the update's time, if any pose has arrived.
        let devicePose: DevicePose?
        /// VIO is limited by light or features.
        let lightingLimited: Bool
    }

    /// One UWB update for this object: fusion, then what is published, every output within
    /// the format's bounds (``NearbyObjectEstimate/withholdOutputsBeyondBounds()``).
    mutating func ingest(_ measurement: UWBMeasurement, context: Context) -> NearbyObjectEstimate {
        var estimate = fuseAndPublish(measurement, context: context)
        estimate.withholdOutputsBeyondBounds()
        return estimate
    }

    @inline(__always)
    private mutating func fuseAndPublish(_ measurement: UWBMeasurement, context: Context) -> NearbyObjectEstimate {
        let t = measurement.timestamp
        let capabilities = context.capabilities

        // Sanitise the raw measurement: a non-finite or non-positive range, or a
        // non-finite or zero direction, is treated as absent (never propagated).
        var rawDistance = measurement.distance.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        if !capabilities.supportsPreciseDistanceMeasurement { rawDistance = nil }
        var rawDirection = measurement.directionInDevice.flatMap { $0.isFinite && $0.length > 1e-9 ? $0.normalized : nil }
        if !capabilities.supportsDirectionMeasurement || ranging == .bluetoothChannelSounding { rawDirection = nil }

        var estimate = NearbyObjectEstimate(timestamp: t, objectID: objectID, distance: rawDistance, direction: rawDirection)
        // An update at no finite time cannot be placed among the poses (its interpolated pose
        // would be NaN, and a Channel Sounding object's fused distance with it): the radio's
        // own values are passed through, nothing is fused and no state changes.
        guard t.isFinite else { return estimate }
        if firstUpdateTime == nil { firstUpdateTime = t }
        removed = false
        guard context.cameraAssistanceEnabled, let devicePose = context.devicePose else {
            if context.cameraAssistanceEnabled {
                estimate.convergence = AlgorithmConvergence(status: .unknown)
                estimate.verticalDirectionEstimate = .unknown
            }
            // No estimate to refer to: a Channel Sounding object's ranges, smoothed.
            if ranging == .bluetoothChannelSounding {
                publishSmoothedDistance(into: &estimate, at: t, raw: rawDistance, reference: nil, context: context, options: context.options)
            }
            return estimate
        }
        // Read once: each read of `context.options` copies the ~500-byte struct out of its box
        // (four copies per update were 2.5 % of a steady-state update's instructions).
        let options = context.options
        let antennaInWorld = devicePose.positionInWorld + devicePose.worldFromDevice.rotate(options.antennaOffsetInDevice)
        if let r = rawDistance, r <= options.maximumRange { lastUsableRangeTime = t }
        // At most one fused update per `minimumFusionInterval`: a faster radio repeats errors
        // that last longer than its interval, and would be counted as independent. (A time
        // before the last fused one — an API caller's clock restarted — is fused.)
        let sinceFused = t - (lastFusionTime ?? -.infinity)
        if devicePose.tracking == .normal, !(sinceFused >= 0 && sinceFused < options.minimumFusionInterval) {
            lastFusionTime = t
            fuse(range: rawDistance, direction: rawDirection, at: t, pose: devicePose, antennaInWorld: antennaInWorld, context: context,
                 options: options)
        }
        publish(into: &estimate, at: t, pose: devicePose, antennaInWorld: antennaInWorld, context: context, options: options)
        if ranging == .bluetoothChannelSounding {
            publishSmoothedDistance(into: &estimate, at: t, raw: rawDistance, reference: mixture.isEmpty ? nil : estimate.distance,
                                    context: context, options: options)
        }
        return estimate
    }

    /// A Channel Sounding object's published distance (`DistanceSmoother`): the fused
    /// distance `reference` corrected by the ranges once they disagree with it (a tag picked
    /// up), outliers down-weighted; without a reference — the app says the tag moves, or
    /// camera assistance is off — its ranges smoothed ("outliers are filtered and results
    /// smoothed", as Apple describes the radio's distance).
    @inline(__always)
    private mutating func publishSmoothedDistance(into estimate: inout NearbyObjectEstimate, at t: Double, raw: Double?,
                                                  reference: Double?, context: Context, options: FusionOptions) {
        let usable = raw.flatMap { $0 <= options.maximumRange ? $0 : nil }
        // (A range beyond reach, before any other, is passed on as the radio gave it.)
        estimate.distance = distanceSmoother.update(
            at: t, range: usable, reference: reference, generation: estimateGeneration,
            density: context.optionsBox.rangeErrorDensity, variance: options.rangeVariance(measured: usable ?? 0),
            residualIntensity: options.distanceResidualAccelerationIntensity, freeIntensity: options.accelerationIntensity,
            minimumInterval: options.minimumFusionInterval) ?? estimate.distance
    }

    /// Convergence and outputs from the estimate after fusion.
    private mutating func publish(into estimate: inout NearbyObjectEstimate, at t: Double, pose devicePose: DevicePose,
                                  antennaInWorld: Vector3, context: Context, options: FusionOptions) {
        var reasons: ConvergenceReasons = []
        if context.lightingLimited { reasons.insert(.insufficientLighting) }
        // Signal: how long since the radio last gave a usable range — one within reach
        // (`maximumRange`), fused or not: while VIO is limited nothing is fused, yet the signal
        // is fine. Ranges all beyond reach for `signalTimeout` are as unusable as none; a lone
        // ghost beyond it among good ranges is not (eee_01's anchor100, converged at 29 m,
        // flashed `insufficientSignalStrength` on each 60–69 m multipath reading).
        let signalAge = t - (lastUsableRangeTime ?? firstUpdateTime ?? t)
        if signalAge > options.signalTimeout { reasons.insert(.insufficientSignalStrength) }
        let motionNow = decideMotion(options)
        estimate.motion = motionNow
        guard !mixture.isEmpty else {
            // Nothing estimated yet: `unknown`, unless a reason already withholds it (nil).
            estimate.convergence = AlgorithmConvergence(status: reasons.isEmpty ? .unknown : .notConverged(reasons))
            estimate.verticalDirectionEstimate = reasons.isEmpty ? .unknown : nil
            return
        }
        var assessment = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: antennaInWorld,
                                                    movement: movement, movementAlreadySufficient: coaching.movementSufficient,
                                                    movingShare: movingShare(motionNow, options: options),
                                                    previous: coaching.previousResolution,
                                                    previousCategory: coaching.lastAssessment?.verticalCategory ?? .unknown,
                                                    previousBearing: coaching.previousBearing, options: options)
        if (probationRangesLeft > 0 || rangesRunShort(options)) && assessment.movementExtent >= options.minimumMovement {
            // On probation (re-solved after its ranges ran long, see `fuse`), or while its
            // ranges run short (``FusionOptions/approachRangeWindow``): nothing is resolved —
            // a tag carried away or toward the user would otherwise be shown where it was.
            assessment.horizontalResolved = false
            assessment.bearingResolved = false
            assessment.reasons.insert(.insufficientHorizontalSweep)
        }
        if assessment.movementExtent >= options.minimumMovement { coaching.movementSufficient = true }
        coaching.previousResolution = (assessment.horizontalResolved, assessment.verticalResolved)
        coaching.previousBearing = assessment.bearingResolved
        coaching.lastAssessment = assessment
        reasons.formUnion(assessment.reasons)

        let status: ConvergenceStatus = reasons.isEmpty ? .converged : .notConverged(reasons)
        estimate.convergence = AlgorithmConvergence(status: status)
        let mean = assessment.meanInWorld
        // The angle: once the horizontal position is resolved, or (Channel Sounding,
        // ``FusionOptions/publishesAngleByBearingAlone``) once the bearing alone is, while the
        // horizontal sweep asked for `worldTransform` may still stand.
        let horizontalAvailable = options.publishesAngleByBearingAlone
            ? reasons.subtracting(.insufficientHorizontalSweep).isDisjoint(with: .withholdingHorizontal) && assessment.bearingResolved
            : reasons.isDisjoint(with: .withholdingHorizontal) && assessment.horizontalResolved
        if horizontalAvailable {
            estimate.horizontalAngle = HorizontalAngle.angle(objectInWorld: mean, devicePositionInWorld: antennaInWorld,
                                                             worldFromDevice: devicePose.worldFromDevice)
            // The category is published once established (≥ 95 %): `same`, `above`, `below`,
            // or `aboveOrBelow` when only the sign is open. A vertical-sweep reason that
            // stands only because the height is not yet precise enough for worldTransform
            // does not hide an established category; one that stands because the category
            // itself is open leaves the estimate nil.
            if assessment.verticalCategory != .unknown {
                estimate.verticalDirectionEstimate = assessment.verticalCategory
            }
        }
        if phase == .tracking, horizontalAvailable { estimate.velocity = publishedVelocity }
        if ranging == .bluetoothChannelSounding {
            // The fused range, outliers removed: the weighted distance of the hypotheses (the
            // mixture's mean lies inside the range sphere while it is still spread over it).
            estimate.distance = fusedDistance(from: antennaInWorld)
        }
        // A tracked Channel Sounding object that converged and has not been converged for
        // ``FusionOptions/channelSoundingReacquireSeconds`` is acquired afresh at its next
        // range (`fuse`): one Gaussian fed ranges alone cannot come back across the line of
        // sight. Not while the app says it keeps still.
        if phase == .tracking, hasConverged, ranging == .bluetoothChannelSounding, !status.isConverged,
           motionHint != .stationary, options.channelSoundingReacquireSeconds > 0 {
            let since = unconvergedSince ?? t
            unconvergedSince = since
            if t - since >= options.channelSoundingReacquireSeconds { reacquires = true }
        } else {
            unconvergedSince = nil
        }
        if status.isConverged {
            if !hasConverged {
                hasConverged = true
                carryOrigin = nil   // converged again: where it was before a carry no longer matters
            }
            let toObject = mean - antennaInWorld
            estimate.worldTransform = WorldTransform(translation: mean)
            estimate.distance = toObject.length
            // Camera assistance widens the field of view: the direction comes from the
            // world estimate, inside the radio's cone or not.
            estimate.direction = devicePose.worldFromDevice.inverseRotate(toObject).normalized
        }
    }

    /// The probability that the estimate the convergence analysis judges is a moving object's
    /// (`ConvergenceAnalysis`'s `movingShare`, which sets its position thresholds): 1 while a
    /// moving object's thresholds are held (below); else that of the published estimate — 0 or
    /// 1 when one model is certain and published alone, the moving model's probability while
    /// the published estimate combines the two. Judged by a still object's 12 cm, the combined
    /// covariance `Σⱼ wⱼ (Pⱼ + (pⱼ − p)(pⱼ − p)ᵀ)` failed whenever a few noisy directions raised
    /// the moving model's probability to 0.1–0.5 (its mean is dragged 0.3–0.7 m by the noise
    /// it follows): a still friend's status dropped to "sweep" for 0.1–0.3 s in 6 of 20 runs
    /// (`still-peer`), and every unhinted tag picked up (`tag-picked-up`, 50 of 50 runs) left
    /// `converged` while its estimate followed it, advice no sweep answers.
    @inline(__always)
    private mutating func movingShare(_ motionNow: MotionActivityState, options: FusionOptions) -> Double {
        if holdsMovingThresholds(motionNow, options: options) { return 1 }
        guard phase == .tracking else { return 0 }
        switch motion.certainMode(options.modeCertainty) {
        case .moving?: return 1
        case .stationary?: return 0
        case nil: return motion.movingProbability
        }
    }

    /// Whether the convergence analysis judges this object's position by a moving object's
    /// thresholds (``FusionOptions/movingPositionThreshold``): from the first update reported
    /// `moving` of an object that may move, until its stationary model alone is published
    /// (probability ≥ ``FusionOptions/modeCertainty``) or the estimate starts over. The
    /// published covariance is the IMM's combination while neither mode is certain, and it
    /// carries the moving mode's share whatever the reported motion says: judging it by a
    /// still object's thresholds as soon as the report turned `stationary` flipped a walking
    /// peer's status 19 times a minute (`Datasets/walking-peer.jsonl`) as its mode
    /// probability wandered between 0.1 and 0.9.
    private mutating func holdsMovingThresholds(_ motionNow: MotionActivityState, options: FusionOptions) -> Bool {
        guard mayMove, phase == .tracking else {
            coaching.movingThresholdsHeld = false
            return false
        }
        if motionNow == .moving { coaching.movingThresholdsHeld = true }
        else if motion.certainMode(options.modeCertainty) == .stationary { coaching.movingThresholdsHeld = false }
        return coaching.movingThresholdsHeld
    }

    /// `Σ wᵢ ‖μᵢ − a‖`, metres: the distance the estimate gives, whatever its bearing.
    /// (Inlined: an outlined call from `publish` copied the whole tracker.)
    @inline(__always)
    func fusedDistance(from antennaInWorld: Vector3) -> Double {
        if mixture.count == 1 { return (mixture.hypotheses[0].meanInWorld - antennaInWorld).length }
        var d = 0.0
        for h in mixture.hypotheses { d += exp(h.logWeight) * (h.meanInWorld - antennaInWorld).length }
        return d
    }

    /// One update of an object's estimate, by phase:
    /// - **idle**: the first usable range starts the estimate — straight into tracking
    ///   when the object may move and the update also has a direction (range and direction
    ///   place it), otherwise into acquisition (the first range's sphere, tiled);
    /// - **acquiring** (a static object not yet located): the update is stored in the
    ///   window and every hypothesis is re-solved from its prior and the whole window
    ///   (`BatchRefinement`), so no hypothesis is judged by measurements linearised far
    ///   from it; once one resolved cluster holds 99 % of the weight it is collapsed into
    ///   one Gaussian and tracked;
    /// - **tracking**: the IMM steps (`InteractingMultipleModel`) — mix, predict, range,
    ///   direction — fixed-size and allocation-free.
    private mutating func fuse(range: Double?, direction: Vector3?, at t: Double,
                               pose: DevicePose, antennaInWorld a: Vector3, context: Context, options o: FusionOptions) {
        let entry = WindowEntry(range: range, direction: direction, pose: pose, antennaInWorld: a,
                                capabilities: context.capabilities, options: o, timestamp: t)
        // An object no direction reaches (Channel Sounding, or a device without direction
        // finding) cannot be followed while it moves: ranges alone leave its bearing free.
        // While the app says it moves, nothing is fused (its ranges, smoothed, are published:
        // `DistanceSmoother`); when the app says it stopped, it is acquired afresh.
        let directionless = !(context.capabilities.supportsDirectionMeasurement && ranging == .uwb)
        if directionless && motionHint == .moving {
            if phase != .idle { dropWhileCarried(at: t) }
            return
        }
        // The same trend test guards the moving batch of a walker no direction reaches: a
        // turn or a stop breaks its constant velocity, and the fit bends to the new ranges
        // while claiming decimetres (distance-only-turning-peer seed 17: 1.3 m off at σ 0.1 m,
        // bearing σ 4°, 5 s after the friend stopped) until enough ranges are rejected.
        if phase != .idle, ranging == .bluetoothChannelSounding || (directionless && mayMove), entry.hasRange {
            if movedAwayFromItsRanges(entry, options: o) {
                // A still accessory being acquired whose ranges ran *long*: a multipath burst
                // (a reflection lasts while the hand stays where it makes one) or the tag
                // carried away — the trend cannot tell which. The first time, the ranges of the
                // trend (the seven before this one) are set aside and the bank re-solved from
                // the rest of the window (`retile`, tiled at the bank's own distance: this range
                // may be a metre long), on probation: nothing is published for
                // ``FusionOptions/probationRanges`` ranges, and ranges running long again within
                // them start the acquisition afresh, as any other trend does (and as a re-solved
                // bank that does not explain this range does at once, see `retile`). Clearing the window
                // on every long trend threw away the sweeps and the step that had located the
                // tag: 6 of 50 `cs-coached-step` runs ended without an angle, 2 now.
                if phase == .acquiring, !mayMove, probationRangesLeft == 0, Self.median(rangeTrend) > 0 {
                    window.removeLatest(ranges: rangeTrend.scalarCount - 1)
                    if retile(from: entry, radiusMetres: fusedDistance(from: a), explaining: entry.rangeMetres, pose: pose,
                              pathLength: context.pathLength,
                              options: o) {
                        probationRangesLeft = o.probationRanges
                        rangeTrendCount = 0
                        return
                    }
                }
                startOver(from: entry, at: t, pose: pose, context: context)
                return
            }
            if probationRangesLeft > 0 { probationRangesLeft -= 1 }
        }
        if reacquires, phase == .tracking, entry.hasRange {
            reacquires = false
            unconvergedSince = nil
            startOver(from: entry, at: t, pose: pose, context: context)
            return
        }
        if phase != .tracking, mayMove, entry.hasRange, entry.direction == .azimuthElevation {
            // A range and a direction place the object at once; a static acquisition would
            // be wrong for something that may walk away.
            startTracking(fromRange: entry.rangeMetres, angles: entry.angles, pose: pose, antennaInWorld: a, at: t, context: context)
            return
        }
        if phase == .idle {
            guard entry.hasRange else { return }
            initialise(rangeMetres: entry.rangeMetres, at: t, pose: pose, antennaInWorld: a, context: context)
            return
        }
        let dt = max(t - (lastPredictionTime ?? t), 0)
        let ds = max(context.pathLength - pathLengthAtLastPrediction, 0)
        lastPredictionTime = t
        pathLengthAtLastPrediction = context.pathLength
        let rangeAccepted: Bool
        if phase == .acquiring {
            rangeAccepted = acquire(entry, dt: dt, ds: ds, pathLength: context.pathLength, options: o)
        } else {
            rangeAccepted = track(entry, dt: dt, ds: ds, rangesAlone: directionless && ranging == .uwb, options: o)
        }
        if entry.hasRange {
            if rangeAccepted {
                clearRejections()
                movement.add(a)
            } else if rejectionCallsForARestart(entry, directionless: directionless, options: o) {
                // The estimate no longer explains the ranges (a first NLOS range, or the
                // object moved): start again from the median of the rejected ranges — this one
                // may itself be a multipath range, and tiles on a sphere too large hold the
                // batch in the multipath mode (see `medianRejectedRange`).
                let radius = medianRejectedRange
                if !(phase == .acquiring && !mayMove
                     && retile(from: entry, radiusMetres: radius, explaining: radius, pose: pose, pathLength: context.pathLength,
                               options: o)) {
                    startOver(from: entry, rangeMetres: radius, at: t, pose: pose, context: context)
                }
                return
            }
        }
        if phase == .acquiring {
            settleIfResolved(options: o, directionless: directionless)
        } else {
            mixture.pruneAndMerge(minimumWeight: o.pruneWeight, mergeDistanceSquared: o.mergeDistanceSquared)
        }
        let m = mixture.moments
        if !m.meanInWorld.isFinite || !m.covariance.isFinite || (phase == .tracking && !motion.isFinite) {
            // Never publish NaN: drop the estimate and start again from the next range.
            resetEstimate()
        }
    }

    /// Counts a rejected range and says whether the estimate should start again: after
    /// `rejectionsBeforeReset` rejections in a row (`rejectionsBeforeResetWhenConverged` once
    /// converged). A converged object held still (ranges alone cannot show its motion, see
    /// `track`) whose rejected range is too long by more than `blockedRangeExcess` is behind
    /// a blocked line of sight, which lengthens ranges by metres for tens of seconds (sbs_01's
    /// anchor101 at 257–290 s: +5 to +15 m; a reset there re-acquired from those ranges and
    /// converged 10 m off): such ranges leave the estimate standing for
    /// `rejectionsBeforeResetWhenBlocked`, while any other rejection (too short, which no
    /// blocked path gives, or long by less, which a wrong estimate gives) counts toward the
    /// usual limit. A blocked path is also *erratic*: its ranges jump by metres from one to
    /// the next (anchor101: 70, 64, 41, 55, 40, 34, 30, 35, 40 m at 6 Hz), while a tag
    /// carried away lengthens them smoothly, by walking speed × the interval. So a long
    /// range counts as blocked only while at least four of the last eight steps between
    /// rejected ranges exceeded `blockedRangeJump`; a tag carried away from a watch is still
    /// re-acquired after the usual 30 rejections instead of standing stale for a minute.
    private mutating func rejectionCallsForARestart(_ entry: WindowEntry, directionless: Bool, options o: FusionOptions) -> Bool {
        consecutiveRejections += 1
        // The step from the run's previous rejected range (the ring's newest), if any.
        let jumped = rejectedRangeCount > 0
            && abs(entry.rangeMetres - rejectedRanges[(rejectedRangeCount - 1) & 7]) > o.blockedRangeJump
        rejectedRangeJumps = rejectedRangeJumps << 1 | (jumped ? 1 : 0)
        rejectedRanges[rejectedRangeCount & 7] = entry.rangeMetres
        rejectedRangeCount += 1
        let converged = phase == .tracking && hasConverged && ranging == .uwb && !mayMove && motionHint != .moving
        let heldStill = converged && directionless
        let excess = entry.rangeMetres - fusedDistance(from: entry.antennaInWorld)
        // No multipath shortens a range: while a UWB object with directions is acquired, a run
        // with `rejectionsBeforeReset` ranges too short says the bank is too far — converged
        // on a burst of multipath ranges (long-session seed 13's keys: its first 1.6 s of
        // ranges 1.1–1.9 m long, converged 1.45 m too far, stood there 2.7 s until 30
        // rejections) — or the object came closer. (Tracked, the IMM weighs short ranges with
        // both models; real distance-only ranges run short by decimetres for seconds, and
        // this rule made the NTU VIRAL drone sessions wildly overconfident.)
        if excess < 0 { shortRejections += 1 }
        if phase == .acquiring && !directionless && ranging == .uwb {
            // The other way round, a bank too near: only the object carried away makes one, and
            // a run of long ranges is far more often a multipath burst against a good bank
            // (long-session seed 17's bag, 4.6 m, acquired for 1.1 s, restarted on the fifth
            // of 0.9–1.9 m-long ranges and tiled on them: 1.7 m off for 1.7 s). Long runs wait
            // for the converged limit.
            return shortRejections >= o.rejectionsBeforeReset || consecutiveRejections >= o.rejectionsBeforeResetWhenConverged
        }
        let blocked = heldStill && rejectedRangeJumps.nonzeroBitCount >= 4 && excess > o.blockedRangeExcess
        // With directions: long ranges that scatter (a step beyond ``FusionOptions/runAwayStep``
        // among the last seven, see `rangesRunAway`) while the still model is the likelier
        // are a multipath burst, however long it lasts; smooth ones (a slow carry away) count.
        let scattered = converged && !directionless && excess > 0 && motion.movingProbability < 0.5
            && roughRangeSteps & 0x7F != 0
        if !(blocked || scattered) { unexplainedRejections += 1 }
        let limit = hasConverged ? o.rejectionsBeforeResetWhenConverged : o.rejectionsBeforeReset
        return converged
            ? unexplainedRejections >= limit || consecutiveRejections >= o.rejectionsBeforeResetWhenBlocked
            : consecutiveRejections >= limit
    }

    /// Whether a Channel Sounding object's ranges have drifted away from its estimate: the
    /// median of the last eight signed normalised innovations `ν/√s` (each the weighted mean
    /// over the hypotheses, `Σ wᵢ νᵢ/√sᵢ`, while acquiring) beyond 1.5 (3.4σ for a still
    /// object, whose median of eight has σ ≈ 1.25/√8 = 0.44). The median, not the mean: a
    /// still tag's multipath comes in bursts of ranges all too long by up to 2 m, and two such
    /// bursts within eight ranges carried the mean past 1.5 and restarted a good acquisition
    /// (`Datasets/cs-coached-step.jsonl` lost its angle at 12 s and 22 s); a tag carried away
    /// moves every range. Its wide range gate (σ 0.38 m) would otherwise
    /// let a carried tag drag the estimate along the line of sight by ranges alone, bearing
    /// stale, and re-converge there.
    /// The caller then acquires it afresh (a still accessory's first trend of long ranges while
    /// it is acquired: re-solved on probation, see `fuse`). (A tag carried around the user at a constant range
    /// changes no range: a distance-only radio cannot see that motion at all.)
    mutating func movedAwayFromItsRanges(_ entry: WindowEntry, options o: FusionOptions) -> Bool {
        guard !mixture.isEmpty else { return false }
        let model = o.rangeModel(from: entry.antennaInWorld, measured: entry.rangeMetres)
        var nu = 0.0
        for h in mixture.hypotheses {
            let w = mixture.count == 1 ? 1 : exp(h.logWeight)
            nu += w * model.normalizedInnovation(entry.rangeMetres, at: h.meanInWorld, covariance: h.covariance)
        }
        guard nu.isFinite else { return false }
        rangeTrend[rangeTrendCount % 8] = nu
        rangeTrendCount += 1
        shortRangeBits = shortRangeBits << 1 | (nu < -o.approachThreshold ? 1 : 0)
        guard rangeTrendCount >= 8 else { return false }
        // A median beyond ±1.5 needs at least four of the eight beyond it on that side (the
        // 5th–8th smallest are ≥ the 5th): counted with two vector compares, so the sort runs
        // only when it could decide.
        let high = SIMD8<Double>(repeating: 1.5), low = SIMD8<Double>(repeating: -1.5)
        let above = (rangeTrend .> high), below = (rangeTrend .< low)
        var countAbove = 0, countBelow = 0
        for k in 0..<8 { if above[k] { countAbove += 1 }; if below[k] { countBelow += 1 } }
        guard countAbove >= 4 || countBelow >= 4 else { return false }
        return abs(Self.median(rangeTrend)) > 1.5
    }

    /// Whether at least ``FusionOptions/approachRangeCount`` of a Channel Sounding object's
    /// last ``FusionOptions/approachRangeWindow`` (≤ 8) normalised range innovations lie below
    /// −``FusionOptions/approachThreshold`` (`shortRangeBits`, one bit per innovation, newest
    /// in bit 0): ranges running short. (Inlined: an outlined call
    /// from `publish` copied the whole tracker, +190 instructions per UWB update.)
    @inline(__always)
    func rangesRunShort(_ o: FusionOptions) -> Bool {
        let window = min(o.approachRangeWindow, 8)
        guard ranging == .bluetoothChannelSounding, window > 0, rangeTrendCount >= window else { return false }
        return (shortRangeBits & UInt8(truncatingIfNeeded: (1 << window) - 1)).nonzeroBitCount >= o.approachRangeCount
    }

    /// The median of the first `n` (1…8) values (the mean of the two middle ones when `n` is
    /// even: of eight, the 4th and 5th smallest), by an insertion sort on the stack.
    static func median(_ v: SIMD8<Double>, count n: Int = 8) -> Double {
        var s = v
        for i in 1..<n {
            let x = s[i]
            var j = i - 1
            while j >= 0 && s[j] > x { s[j + 1] = s[j]; j -= 1 }
            s[j + 1] = x
        }
        return n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])
    }

    /// The acquisition step: random-walk prediction `P ← P + (q Δt + k_d Δs) I`, the entry
    /// stored in the window, every hypothesis re-solved, and the range checked against the
    /// hypotheses (accepted if one holding ≥ 1 % of the weight explains it within its gate).
    /// A missing direction re-weights the hypotheses through the batch's evidence.
    private mutating func acquire(_ entry: WindowEntry, dt: Double, ds: Double, pathLength: Double,
                                  options o: FusionOptions) -> Bool {
        // The random walk absorbs VIO drift; an object that may move is followed by its batch's
        // velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`).
        let q = o.accessoryRandomWalk * dt + o.driftVariancePerMetre * ds
        mixture.predict(addedVariance: q)
        processVarianceSinceInitialisation += q
        if entry.hasRange || entry.direction != .none {
            var stored = entry
            stored.pathLengthMetres = pathLength - pathLengthAtInitialisation
            window.append(stored)
        }
        updatesSinceRefinement += 1
        if updatesSinceRefinement >= o.batchRefinementInterval {
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
    private func bankExplains(_ r: Double, from a: Vector3, options o: FusionOptions) -> Bool {
        let model = o.rangeModel(from: a, measured: r)
        for h in mixture.hypotheses where h.logWeight > log(0.01) {
            if model.normalizedInnovationSquared(r, at: h.meanInWorld, covariance: h.covariance) <= o.rangeGate {
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
    private mutating func settleIfResolved(options o: FusionOptions, directionless: Bool) {
        mixture.pruneAndMerge(minimumWeight: o.acquisitionPruneWeight, mergeDistanceSquared: 0)
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
            // A considered range bias stays after the hand-over (``FusionOptions/rangeBiasStandardDeviation``):
            // the IMM weighs every range as independent, and a bias does not average out.
            considersRangeBias = o.rangeBiasStandardDeviation > 0
            consideredCovariance = o.rangeBiasStandardDeviation * o.rangeBiasStandardDeviation
                * Matrix3.outer(c.rangeBiasSensitivity, c.rangeBiasSensitivity)
        }
    }

    /// The tracking step: the IMM's mixing and prediction (the shared random walk
    /// `q Δt + k_d Δs` for VIO drift), then range and direction corrections of both models,
    /// then the mode probabilities. The mixture mirrors the published position
    /// (`InteractingMultipleModel.published(certainty:)`), its covariance plus the share a
    /// considered range bias had at the hand-over (``FusionOptions/rangeBiasStandardDeviation``).
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
    private mutating func track(_ entry: WindowEntry, dt: Double, ds: Double, rangesAlone: Bool,
                                options o: FusionOptions) -> Bool {
        let hint = motionHint == .unknown && !mayMove && rangesAlone ? .stationary : motionHint
        let q = o.accessoryRandomWalk * dt + o.driftVariancePerMetre * ds
        motion.predict(seconds: dt, prior: motionPrior(o), hint: hint, accelerationIntensity: o.accelerationIntensities,
                    velocityPriorVariance: o.velocityPriorStandardDeviation * o.velocityPriorStandardDeviation,
                    addedPositionVariance: q, steady: o.steadyMotion)
        var rangeAccepted = false
        let a = entry.antennaInWorld, rotation = entry.worldFromDevice
        // An object expected to keep still: while it is most probably still, its stationary
        // model's range gate decides for a range too long (NLOS bursts are not motion) — and,
        // with ranges alone, for any range; once motion is the likelier mode, each model gates
        // ranges for itself. A range too short while directions come is weighed by both models:
        // no multipath shortens a range, and a tag picked up and carried toward the user was
        // otherwise reported `moving` only once its directions alone had shown it (0.9 s after
        // the pickup in the median run, up to 1.2 s; now 0.7 s and 0.9 s over 50 seeds).
        let directionless = rangesAlone || ranging == .bluetoothChannelSounding
        var stationaryGate: StationaryGate = mayMove || motion.movingProbability >= 0.5 ? .off
            : (directionless ? .everyMeasurement : .positiveResiduals)
        var runsAway = false
        if stationaryGate == .positiveResiduals, entry.hasRange,
           rangesRunAway(entry.rangeMetres - (motion.stationary.positionInWorld - a).length, options: o) {
            stationaryGate = .off
            runsAway = true
        }
        if entry.hasRange {
            rangeAccepted = motion.update(model: o.rangeModel(from: a, measured: entry.rangeMetres),
                                       measured: entry.rangeMetres, outlierProbability: o.outlierProbability,
                                       outlierSpan: o.rangeOutlierSpan, stationaryGate: stationaryGate)
        }
        switch entry.direction {
        case .none: break
        case .azimuth:
            _ = motion.update(model: o.azimuthModel(from: a, worldFromDevice: rotation),
                           measured: entry.angles.x, outlierProbability: o.outlierProbability, outlierSpan: o.angleOutlierSpan)
        case .azimuthElevation:
            _ = motion.update(model: o.directionModel(from: a, worldFromDevice: rotation),
                           measured: entry.angles, outlierProbability: o.outlierProbability, outlierSpan: o.angleOutlierSpan)
        }
        motion.updateModeProbabilities(hint: hint)
        // A range let through to the moving model because the ranges run away counts as
        // rejected (toward a restart, see `rejectionCallsForARestart`) until the moving model
        // is the likelier: a carry too slow to turn the modes is still caught by the restart.
        if runsAway && motion.movingProbability < 0.5 { rangeAccepted = false }
        let published = motion.publishedPosition(certainty: o.modeCertainty)
        publishedVelocity = published.velocityInWorld
        mixture.reset(meanInWorld: published.positionInWorld,
                      covariance: considersRangeBias ? published.positionCovariance + consideredCovariance : published.positionCovariance)
        return rangeAccepted
    }

    /// Takes the excess `e = z − ‖p_s − a‖` of a range over the still model's prediction and
    /// says whether the last eight run away smoothly (``FusionOptions/runAwayStep``): every
    /// `|eₖ − eₖ₋₁| ≤ step`, `e₈ − e₁ ≥ rise`, and each half rising too, `e₄ − e₁ ≥ rise/4`
    /// and `e₈ − e₅ ≥ rise/4` (a flat run that ends in the onset of a small multipath burst,
    /// +0.2 then +0.5 m, passed the first two four times in 400 minutes of `long-session`
    /// objects; a carry rises throughout). Without it, a tag carried straight away
    /// from the user — its direction unchanged, every range too long for the still model and
    /// set aside as multipath — was never reported `moving` and stood stale, more than 50 cm
    /// off, for 2.4 s (median of 20 seeds; 2.7 s at worst) until 30 rejected ranges restarted it.
    mutating func rangesRunAway(_ excess: Double, options o: FusionOptions) -> Bool {
        guard o.runAwayStep > 0, excess.isFinite else { return false }
        // A ring of eight: after this one is stored at `n`, eₖ (k = 1…8, e₈ this one) sits at
        // `(n + k) mod 8`; bit j of `roughRangeSteps` says whether the step into the
        // (j + 1)-th newest exceeded the limit.
        let n = rangeExcessCount & 7
        let previous = rangeExcess[(n + 7) & 7]
        rangeExcess[n] = excess
        roughRangeSteps = roughRangeSteps << 1 | (abs(excess - previous) > o.runAwayStep ? 1 : 0)
        rangeExcessCount += 1
        guard rangeExcessCount >= 8, roughRangeSteps & 0x7F == 0 else { return false }
        let e1 = rangeExcess[(n + 1) & 7], e4 = rangeExcess[(n + 4) & 7], e5 = rangeExcess[(n + 5) & 7]
        let rise = o.runAwayRise
        return excess - e1 >= rise && e4 - e1 >= rise / 4 && excess - e5 >= rise / 4
    }

    /// Forgets the estimate and acquires the object afresh from a range `r` measured at this
    /// update (by default its own).
    private mutating func startOver(from entry: WindowEntry, rangeMetres r: Double? = nil, at t: Double, pose: DevicePose,
                                    context: Context) {
        resetEstimate()
        hasConverged = false
        initialise(rangeMetres: r ?? entry.rangeMetres, at: t, pose: pose, antennaInWorld: entry.antennaInWorld, context: context)
    }

    /// The median of the run's last (up to five; a restart always has five) rejected ranges,
    /// metres: where a restart tiles the range sphere. The tiles' priors hold their range as a Gaussian with the
    /// range's σ, and the batch starts from them, so a sphere tiled on a multipath range — the
    /// fifth rejected one as often as any — keeps every hypothesis in the multipath mode, the
    /// line-of-sight ranges (most of them) discarded as outliers: `nlos-20-percent` seed 2
    /// converged 1.49 m too far and stayed so for 1.2 s. The rejected ranges of one run agree
    /// when the estimate is what is wrong; the median takes the majority.
    var medianRejectedRange: Double {
        let n = min(rejectedRangeCount, 5)
        guard n > 0 else { return 0 }
        var v = SIMD8<Double>()
        for k in 0..<n { v[k] = rejectedRanges[(rejectedRangeCount - 1 - k) & 7] }
        return Self.median(v, count: n)
    }

    /// Restarts a still object's acquisition from this update's range *keeping what was
    /// measured*: the range's sphere is tiled afresh and every new hypothesis is re-solved at
    /// once from the stored window (`BatchRefinement.refine(_:window:options:addedVariance:)`),
    /// with the random walk and the drift accumulated since the window began.
    ///
    /// The rejections that call for it say the *hypotheses* are wrong (pruned to a wrong
    /// basin, or tiled on a first range that was long), not the measurements: a fixed object
    /// has not gone anywhere, and the window's ranges, robustly weighted, still describe it.
    /// Clearing them threw information away that motion had paid for. Measured on the real
    /// drone session eee_01 (NTU VIRAL): anchor100's bank, pruned to a
    /// wrong basin 31 m off while the drone climbed straight up (a vertical line leaves the
    /// bearing about it free), was restarted at 56 s; the restart forgot the climb, the only
    /// motion that fixed the anchor's height, and the height stayed open (σ 1 m, 2.5 m too
    /// high, `same` published while the anchor was 3.3 m below) until the drone climbed again
    /// at 80 s. Re-solved from the window, it converges within two seconds of the moment the
    /// Cramér–Rao bound allows 3°.
    ///
    /// Unless the object did move: then the window's old ranges pull the re-solved bank back
    /// where it was, and it no longer explains the range it was tiled on. That is checked, and
    /// the caller then clears the window as before (returns `false`). Without the check, a tag
    /// carried away from a watch while it was being acquired (48 runs: 4 start times × 4
    /// directions × 3 seeds) was published more than 15° off on 1,456 updates instead of 1,362.
    ///
    /// - Parameters:
    ///   - radiusMetres: the sphere tiled: the median of the rejected ranges (after a run of
    ///     them, see `medianRejectedRange`), or the bank's own distance (after ranges that ran
    ///     long, a multipath burst's maybe).
    ///   - range: the range, metres, measured from the entry's antenna, that the re-solved bank
    ///     must explain (the tiled median, or the entry's own range).
    private mutating func retile(from entry: WindowEntry, radiusMetres: Double, explaining range: Double, pose: DevicePose,
                                 pathLength: Double, options o: FusionOptions) -> Bool {
        mixture.initialize(rangeMetres: radiusMetres, antennaInWorld: entry.antennaInWorld,
                           forwardInWorld: pose.forwardInWorld, options: o)
        weighByCarryOrigin(at: entry.timestamp, options: o)
        estimateGeneration &+= 1
        clearRejections()
        // This range is not added to the window: tiled on it, the new tiles' priors hold it (as
        // a first range is held); tiled at the bank's distance, it is one of the long ones.
        BatchRefinement.refine(&mixture, window: window, options: o,
                               addedVariance: acquisitionAddedVariance(pathLength: pathLength, options: o))
        updatesSinceRefinement = 0
        return bankExplains(range, from: entry.antennaInWorld, options: o)
    }

    /// The variance, m², the batch adds to each refined hypothesis for the VIO drift since the
    /// window began: a third of the random walk predicted since (its average over the window)
    /// plus, for a fixed point, the systematic drift — considered through the acquisition's
    /// geometry (``FusionOptions/considersDriftGeometry``, the default: the batch adds it) or,
    /// without, as a translation by half the drift over the path travelled since, `f L / 2`
    /// in a direction nobody knows: `(f L / 2)² / 3` per axis (``FusionOptions/vioDriftFraction``).
    ///
    /// An object that may move is fitted with a velocity (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`),
    /// and a drift that grows with the path — at a steady rate while the user walks steadily —
    /// moves the object's apparent position at a steady velocity: the fit's velocity absorbs
    /// it and its position *now* is where the app sees the object, so only the random walk is
    /// added. (With `(f L/2)²` too, `distance-only-walking-peer`'s mean NEES over 50 seeds was
    /// 1.59, cautious, and it converged 0.9 s later; `distance-only-turning-peer` 2.96, now
    /// 3.16.)
    @inline(__always)
    private func acquisitionAddedVariance(pathLength: Double, options o: FusionOptions) -> Double {
        guard !mayMove else { return processVarianceSinceInitialisation / 3 }
        // Considered through the geometry instead (``FusionOptions/considersDriftGeometry``).
        if o.considersDriftGeometry { return processVarianceSinceInitialisation / 3 }
        return processVarianceSinceInitialisation / 3 + o.driftTranslationVariance(pathMetres: pathLength - pathLengthAtInitialisation)
    }

    /// Forgets the estimate of an object no direction reaches that the app says moves,
    /// keeping where it was (its moments) and since when: the prior of its acquisition once it
    /// stops (``FusionOptions/carrySpeed``). (Out of line: the steady-state update never
    /// comes here.)
    @inline(never)
    private mutating func dropWhileCarried(at t: Double) {
        let m = mixture.moments
        resetEstimate()
        hasConverged = false
        if m.meanInWorld.isFinite && m.covariance.isFinite {
            carryOrigin = CarryOrigin(meanInWorld: m.meanInWorld, covariance: m.covariance, since: t)
        }
    }

    /// Weights freshly tiled hypotheses by where the object was when the app said it started
    /// to move (``carryOrigin``; ``FusionOptions/carrySpeed``): tile `i` by
    /// `N(μᵢ; μ₀, Pᵢ + P₀ + (v T)²/3 I)`, `T` the seconds since, the chance that a point
    /// carried at up to `v` from `N(μ₀, P₀)` for `T` seconds lies in the tile.
    private mutating func weighByCarryOrigin(at t: Double, options o: FusionOptions) {
        guard let origin = carryOrigin, o.carrySpeed > 0 else { return }
        let spread = origin.covariance + Matrix3.scaledIdentity(o.carryDisplacementVariance(seconds: t - origin.since))
        mixture.reweighPriors { h in logGaussianDensity(h.meanInWorld, mean: origin.meanInWorld, covariance: spread + h.covariance) }
    }

    /// Tiles the first range's sphere with hypotheses and starts a new window.
    private mutating func initialise(rangeMetres r: Double, at t: Double, pose: DevicePose,
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
        consecutiveRejections = 0
    }

    /// Starts tracking from one range `r` and one direction `(α, ε)`: the object is at
    /// `p = a + r R d(α, ε)`, with the covariance of that point under the measurement noise,
    /// `P = σ_r² (Rd)(Rd)ᵀ + σ_α² (r R ∂d/∂α)(·)ᵀ + σ_ε² (r R ∂d/∂ε)(·)ᵀ`, where
    /// `d = (cos ε sin α, sin ε, −cos ε cos α)`, `∂d/∂α = (cos ε cos α, 0, cos ε sin α)`,
    /// `∂d/∂ε = (−sin ε sin α, cos ε, sin ε cos α)`.
    private mutating func startTracking(fromRange r: Double, angles: Vector2, pose: DevicePose, antennaInWorld a: Vector3,
                                        at t: Double, context: Context) {
        let o = context.options
        let alpha = angles.x, epsilon = angles.y
        let rotation = pose.worldFromDevice
        let d = rotation.rotate(DeviceAngles.direction(azimuth: alpha, elevation: epsilon))
        let dAlpha = rotation.rotate(Vector3(cos(epsilon) * cos(alpha), 0, cos(epsilon) * sin(alpha)))
        let dEpsilon = rotation.rotate(Vector3(-sin(epsilon) * sin(alpha), cos(epsilon), sin(epsilon) * cos(alpha)))
        let sa = r * o.azimuthStandardDeviation, se = r * o.elevationStandardDeviation
        let covariance = (o.rangeStandardDeviation * o.rangeStandardDeviation) * Matrix3.outer(d, d)
            + (sa * sa) * Matrix3.outer(dAlpha, dAlpha) + (se * se) * Matrix3.outer(dEpsilon, dEpsilon)
        resetEstimate()
        window.removeAll()
        startTracking(meanInWorld: a + r * d, covariance: covariance.symmetrized, options: o)
        movement.add(a)
        lastPredictionTime = t
        pathLengthAtLastPrediction = context.pathLength
    }
}
