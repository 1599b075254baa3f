import Foundation

// What an object publishes after its update: convergence, outputs, the Channel Sounding distance.
extension ObjectTracker {
    /// A Channel Sounding object's published distance (`DistanceSmoother`): the fused
    /// distance `reference` corrected by the ranges once they disagree with it (a tag picked
    /// up), outliers down-weighted; without a reference — the app says the tag moves, or
    /// camera assistance is off — its ranges smoothed ("outliers are filtered and results
    /// smoothed", as Apple describes the radio's distance).
    /// `isStaleRepeat`: the range repeats the last one as no new measurement (``isStaleRepeat(_:)``).
    @inline(__always)
    mutating func publishSmoothedDistance(into estimate: inout NearbyObjectEstimate, at t: Double, raw: Double?, isStaleRepeat: Bool,
                                          reference: Double?, context: Context, options: FusionOptions) {
        let usable = raw.flatMap { $0 <= options.coaching.maximumRange ? $0 : nil }
        // (A range beyond reach, before any other, is passed on as the radio gave it.)
        estimate.distance = distanceSmoother.update(
            at: t, range: usable, isStaleRepeat: isStaleRepeat, reference: reference, generation: estimateGeneration,
            density: optionsBox.rangeErrorDensity, variance: options.rangeVariance(measured: usable ?? 0),
            residualIntensity: options.channelSounding.distanceResidualAccelerationIntensity, freeIntensity: options.motion.accelerationIntensity,
            minimumInterval: options.sensors.minimumFusionInterval, filter: options.distanceFilter,
            varianceFloor: rangeScatterVarianceFloor) ?? estimate.distance
    }

    /// The motion that publishes the output asked for soonest (`MotionGuidance.best`,
    /// ``FusionOptions/Coaching/guidanceOutput``), computed afresh
    /// at most once per ``FusionOptions/Coaching/guidanceInterval``: ranges come at the radio's
    /// measured rate over ``FusionOptions/Coaching/guidanceWalkingSpeed``.
    /// `wantsPosition`: the app asks for `worldTransform`.
    mutating func currentGuidance(at t: Double, antennaInWorld: Vector3, worldFromDevice: Quaternion, wantsPosition: Bool,
                                  capabilities: DeviceCapabilities, options: FusionOptions) -> MotionGuidance? {
        // Afresh once per interval, and as soon as the bank has halved or doubled (the first
        // directions resolve a fresh tiling within an update or two).
        let count = mixture.count
        let bankChanged = count * 2 <= guidanceBankSize || count >= guidanceBankSize * 2
        if t - guidanceTime >= options.coaching.guidanceInterval || t < guidanceTime || bankChanged {
            guidanceBankSize = count
            let interval = max(meanRangeInterval ?? 0.2, 1e-3)
            let rangesPerMetre = 1 / (interval * max(options.coaching.guidanceWalkingSpeed, 0.05))
            let distance = fusedDistance(from: antennaInWorld)
            // A UWB radio that measures directions gives them inside its cone along the way.
            let directions = ranging == .uwb && capabilities.supportsDirectionMeasurement
                ? MotionGuidance.Directions(forwardInWorld: worldFromDevice.rotate(Vector3(0, 0, -1)),
                                            halfAngle: options.sensors.fieldOfViewHalfAngle,
                                            variance: options.sensors.azimuthStandardDeviation * options.sensors.azimuthStandardDeviation)
                : nil
            // What withholds the angle: its bearing, and (unless the bearing alone publishes it)
            // the horizontal position across the line of sight (`ConvergenceAnalysis`);
            // `worldTransform` asks for the horizontal position and the height too.
            let fromDistance = options.coaching.positionThresholdFractionOfDistance * distance
            let positionLimit = options.coaching.publishesAngleByBearingAlone && !wantsPosition ? nil
                : max(options.coaching.horizontalPositionThreshold, fromDistance)
            let verticalLimit = wantsPosition ? max(options.coaching.verticalPositionThreshold, fromDistance) : nil
            guidance = MotionGuidance.best(mixture: mixture, antennaInWorld: antennaInWorld, worldFromDevice: worldFromDevice,
                                           rangeVariance: options.rangeVariance(measured: distance),
                                           rangesPerMetre: rangesPerMetre,
                                           threshold: options.coaching.horizontalAngleThreshold, positionLimit: positionLimit, verticalLimit: verticalLimit,
                                           directions: directions, previous: guidance?.direction)
            guidanceTime = t
        }
        return guidance
    }

    /// Convergence and outputs from the estimate after fusion.
    mutating func publish(into estimate: inout NearbyObjectEstimate, at t: Double, pose devicePose: DevicePose,
                                  antennaInWorld: Vector3, context: Context, options: FusionOptions) {
        var reasons: ConvergenceReasons = []
        if context.lightingLimited { reasons.insert(.insufficientLighting) }
        // Signal: how long since the radio last gave a usable range — one within reach
        // (`maximumRange`), fused or not: while VIO is limited nothing is fused, yet the signal
        // is fine. Ranges all beyond reach for `signalTimeout` are as unusable as none; a lone
        // ghost beyond it among good ranges is not (eee_01's anchor100, converged at 29 m,
        // flashed `insufficientSignalStrength` on each 60–69 m multipath reading).
        let signalAge = t - (lastUsableRangeTime ?? firstUpdateTime ?? t)
        if signalAge > options.coaching.signalTimeout { reasons.insert(.insufficientSignalStrength) }
        let motionNow = decideMotion(options)
        estimate.motion = motionNow
        guard !mixture.isEmpty else {
            // Nothing estimated yet: `unknown`, unless a reason already withholds it (nil).
            estimate.convergence = AlgorithmConvergence(status: reasons.isEmpty ? .unknown : .notConverged(reasons))
            estimate.verticalDirectionEstimate = reasons.isEmpty ? .unknown : nil
            return
        }
        // (The movement's extent computed here: the accumulator passed on was copied whole.)
        let extent = ConvergenceAnalysis.movementExtent(covariance: movement.covariance, alreadySufficient: coaching.movementSufficient,
                                                        options: options)
        var assessment = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: antennaInWorld, movementExtent: extent,
                                                    movingShare: movingShare(motionNow, options: options),
                                                    previous: coaching.previousResolution,
                                                    previousCategory: coaching.lastAssessment?.verticalCategory ?? .unknown,
                                                    previousBearing: coaching.previousBearing,
                                                    bearingStandardDeviation: gridBearingStandardDeviation(from: antennaInWorld),
                                                    options: options)
        if (probationRangesLeft > 0 || rangesRunShort(options)) && assessment.movementExtent >= options.coaching.minimumMovement {
            // On probation (re-solved after its ranges ran long, see `fuse`), or while its
            // ranges run short (``FusionOptions/ChannelSounding/approachRangeWindow``): nothing is resolved —
            // a tag carried away or toward the user would otherwise be shown where it was.
            assessment.horizontalResolved = false
            assessment.bearingResolved = false
            assessment.reasons.insert(.insufficientHorizontalSweep)
        }
        if assessment.movementExtent >= options.coaching.minimumMovement { coaching.movementSufficient = true }
        coaching.previousResolution = (assessment.horizontalResolved, assessment.verticalResolved)
        coaching.previousBearing = assessment.bearingResolved
        coaching.lastAssessment = assessment
        reasons.formUnion(assessment.reasons)

        let status: ConvergenceStatus = reasons.isEmpty ? .converged : .notConverged(reasons)
        estimate.convergence = AlgorithmConvergence(status: status)
        let mean = assessment.meanInWorld
        // The angle: once the horizontal position is resolved, or (Channel Sounding,
        // ``FusionOptions/Coaching/publishesAngleByBearingAlone``) once the bearing alone is, while the
        // horizontal sweep asked for `worldTransform` may still stand.
        let horizontalAvailable = options.coaching.publishesAngleByBearingAlone
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
        // Guidance while the output the app asks for is withheld (`worldTransform` is published
        // once converged, below).
        let wantsPosition = options.coaching.guidanceOutput == .worldTransform
        if options.coaching.guidanceInterval > 0, !horizontalAvailable || (wantsPosition && !status.isConverged) {
            estimate.guidance = currentGuidance(at: t, antennaInWorld: antennaInWorld, worldFromDevice: devicePose.worldFromDevice,
                                                wantsPosition: wantsPosition, capabilities: context.capabilities, options: options)
        } else {
            guidance = nil
            guidanceTime = -.infinity
        }
        if ranging == .bluetoothChannelSounding {
            // The fused range, outliers removed: the weighted distance of the hypotheses (the
            // mixture's mean lies inside the range sphere while it is still spread over it).
            estimate.distance = fusedDistance(from: antennaInWorld)
        }
        // A tracked Channel Sounding object that converged and has not been converged for
        // ``FusionOptions/ChannelSounding/reacquireSeconds`` is acquired afresh at its next
        // range (`fuse`): one Gaussian fed ranges alone cannot come back across the line of
        // sight. Not while the app says it keeps still.
        if phase == .tracking, hasConverged, ranging == .bluetoothChannelSounding, !status.isConverged,
           motionHint != .stationary, options.channelSounding.reacquireSeconds > 0 {
            let since = unconvergedSince ?? t
            unconvergedSince = since
            if t - since >= options.channelSounding.reacquireSeconds { reacquires = true }
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
    /// covariance `Σⱼ wⱼ (Pⱼ + (pⱼ − p)(pⱼ − p)ᵀ)` fails whenever a few noisy directions raise
    /// the moving model's probability to 0.1–0.5 (its mean is dragged decimetres by the noise
    /// it follows): a still friend's status would drop to "sweep" for a few tenths of a second
    /// (`still-peer`), and an unhinted tag picked up (`tag-picked-up`) would leave `converged`
    /// while its estimate followed it, advice no sweep answers.
    @inline(__always)
    mutating func movingShare(_ motionNow: MotionActivityState, options: FusionOptions) -> Double {
        if holdsMovingThresholds(motionNow, options: options) { return 1 }
        guard phase == .tracking else { return 0 }
        switch motion.certainMode(options.motion.modeCertainty) {
        case .moving?: return 1
        case .stationary?: return 0
        case nil: return motion.movingProbability
        }
    }

    /// Whether the convergence analysis judges this object's position by a moving object's
    /// thresholds (``FusionOptions/Coaching/movingPositionThreshold``): from the first update reported
    /// `moving` of an object that may move, until its stationary model alone is published
    /// (probability ≥ ``FusionOptions/Motion/modeCertainty``) or the estimate starts over. The
    /// published covariance is the IMM's combination while neither mode is certain, and it
    /// carries the moving mode's share whatever the reported motion says: judging it by a
    /// still object's thresholds as soon as the report turned `stationary` flipped a walking
    /// peer's status 19 times a minute (`Datasets/walking-peer.jsonl`) as its mode
    /// probability wandered between 0.1 and 0.9.
    mutating func holdsMovingThresholds(_ motionNow: MotionActivityState, options: FusionOptions) -> Bool {
        guard mayMove, phase == .tracking else {
            coaching.movingThresholdsHeld = false
            return false
        }
        if motionNow == .moving { coaching.movingThresholdsHeld = true }
        else if motion.certainMode(options.motion.modeCertainty) == .stationary { coaching.movingThresholdsHeld = false }
        return coaching.movingThresholdsHeld
    }

    /// `Σ wᵢ ‖μᵢ − a‖`, metres: the distance the estimate gives, whatever its bearing.
    /// (Inlined: an outlined call from `publish` copied the whole tracker.)
    @inline(__always)
    func fusedDistance(from antennaInWorld: Vector3) -> Double {
        if gridHoldsEstimate, let d = directionGrid?.meanDistance(from: antennaInWorld) { return d }
        if mixture.count == 1 { return (mixture.hypotheses[0].meanInWorld - antennaInWorld).length }
        var d = 0.0
        for h in mixture.hypotheses { d += exp(h.logWeight) * (h.meanInWorld - antennaInWorld).length }
        return d
    }
}
