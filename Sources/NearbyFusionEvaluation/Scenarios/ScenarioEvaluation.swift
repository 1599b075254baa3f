import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation

/// One published estimate with the truth at that moment.
public struct EvaluatedUpdate: Sendable {
    /// What the engine published.
    public var estimate: NearbyObjectEstimate
    /// The object's true position expressed in the VIO's (drifting) world frame: the true
    /// position plus the VIO's current offset `sensed − true` device position. This is where
    /// the object appears to an app in that frame, so it is what a `worldTransform` must match.
    public var truthInWorld: Vector3
    /// True horizontal angle, from the true device pose to the true object, radians.
    public var trueHorizontalAngle: Double?
    /// True Δy (object − device), metres.
    public var trueHeightDifference: Double
    /// The object's true velocity, m/s, world frame.
    public var trueVelocity: Vector3
    /// The Cramér–Rao bound on the horizontal bearing from every range and direction so far
    /// at the simulator's own noise (for Channel Sounding its jitter and multipath,
    /// `ChannelSoundingModel.rangeFisherInformation`), evaluated at the truth (a static object), radians:
    /// `√(gᵀ J⁻¹ g)`, `J = Σ Hᵀ R⁻¹ H`, `g = ∂ψ/∂p`; `nil` while `J` is singular.
    public var bearingBound: Double?
    /// The bearing σ of the exact posterior from every range so far (``RangeOnlyPosterior``:
    /// true device positions, the simulator's own range noise), radians, seen from the true
    /// device position; computed only where ``ScenarioRun/init(_:objectID:options:cameraAssistance:exactPosteriorUntil:exactDistance:)``
    /// asks for it — a Channel Sounding object that has not moved yet, until the σ first falls
    /// to the requested angle — and `nil` elsewhere.
    public var posteriorBearing: Double? = nil
    /// The same bearing σ of the exact posterior under the engine's own radio model — the
    /// range error density the engine assumes for the radio (`FusionOptions.forRanging(_:)`:
    /// its σ, outliers and multipath) instead of the simulator's —, radians: what an ideal
    /// estimator that knows only what the engine is told about the radio allows. Computed where
    /// ``posteriorBearing`` is, until it first falls to the requested angle; the same value as
    /// ``posteriorBearing`` when the two models are the same.
    public var enginesModelPosteriorBearing: Double? = nil
    /// Where the engine published a `horizontalAngle`, the error of the exact posterior's own
    /// bearing (``RangeOnlyPosterior/meanBearing(from:)``, seen from the true device position;
    /// the posterior of ``posteriorBearing``, from every range so far) against the true
    /// bearing, radians, wrapped: what an ideal estimator that knows the radio's noise would
    /// have published at the same moment. Computed where ``posteriorBearing``'s posterior is
    /// followed (a Channel Sounding object that has not moved), at every update with an
    /// angle, and `nil` elsewhere.
    public var posteriorAngleError: Double? = nil
    /// The mean distance of the exact posterior under the simulated radio's own noise
    /// (``RangeOnlyPosterior/meanDistance(from:)`` from the true device position, metres):
    /// what an ideal estimator that knows the radio's noise — each range's σ at its signal, its
    /// short outliers and multipath (`ChannelSoundingModel.rangeErrorDensity(_:standardDeviation:)`)
    /// — but not its scale error and offset, and takes consecutive errors as independent,
    /// publishes; computed only where ``ScenarioRun/init(_:objectID:options:cameraAssistance:exactPosteriorUntil:exactDistance:)``
    /// asks for it (a still Channel Sounding object), from its first range on, and `nil` elsewhere.
    public var posteriorDistance: Double? = nil
    /// The Cramér–Rao bound on the distance of a ranges-only UWB object (a peer), metres: the
    /// spread `s` of an efficient estimator's distance at this update from the ranges so far,
    /// told when the object changes its velocity (nothing of how) and granted the radio's
    /// noise, its errors' correlation time and which ranges are stale repeats or outliers
    /// (``MovingDistanceBound``, evaluated at the truth); `nil` elsewhere and before the first
    /// range. That estimator's error is `N(radioBiasMetres, s²)`: it does not know the radio's offset.
    public var movingDistanceBound: Double? = nil
    /// From the true device position to the true object, metres, world frame.
    public var trueDistanceVector: Vector3
    /// The radio's own range for this update, metres (`nil` when it gave none).
    public var rawDistance: Double?
    /// What the simulated radio's scale error and offset alone make of the true distance `d`
    /// (`ChannelSoundingModel.rangeScaleError`, `.rangeOffset`): `s d + o`, metres, the error a
    /// range would still carry with every bit of noise, failure and multipath averaged away;
    /// for a UWB object, its radio's constant offset (`RadioModel.rangeBias`: +0.06 m for
    /// phone-to-phone UWB while walking, 0 elsewhere).
    public var radioBiasMetres: Double = 0
    /// The part of ``rawDistance`` that the simulated radio's outliers put there, metres
    /// (`Simulator.Output.rangeOutlierMetres`: non-line-of-sight or multipath excess, a short
    /// read); 0 without one. `rawDistance − rangeOutlierMetres` is the range the radio's noise,
    /// bias and scale alone would have read.
    public var rangeOutlierMetres: Double = 0
    /// The engine's mixture moments after this update.
    public var moments: MixtureMoments?
    /// Hypotheses in the bank after this update.
    public var hypothesisCount: Int
    /// The bank after this update (the estimator's machinery, `@_spi(Internals)`).
    @_spi(Internals) public var hypotheses: [PositionHypothesis]
}

/// The outcome of running a scenario through the engine in memory.
public struct ScenarioRun: Sendable {
    /// Every published estimate with its truth, in order.
    public var updates: [EvaluatedUpdate] = []
    /// Every change of the session-level convergence.
    public var sessionChanges: [SessionConvergenceUpdate] = []
    /// NEES `(μ − p)ᵀ C⁻¹ (μ − p)` of the exact posterior's Gaussian summary
    /// (``RangeOnlyPosterior/moments()``) at the object's last range, true frame: what the
    /// engine's ``finalNEES`` compares with. `nil` unless the posterior was followed (see
    /// ``init(_:objectID:options:cameraAssistance:exactPosteriorUntil:exactDistance:)``) or when the object
    /// was still moving at its last range.
    public var posteriorFinalNEES: Double?
    /// The exact posterior's spread at the object's last range (true frame), when it is
    /// followed: its σ horizontally across the line of sight and in height, metres, and the
    /// distance from the true device position to its mean, metres.
    public var posteriorFinalSpread: (acrossLineOfSight: Double, height: Double, distance: Double)?

    /// Whether the exact posterior at the last range (``posteriorFinalSpread``) comes near
    /// determining the position as far as a Channel Sounding `worldTransform` asks: σ across the
    /// line of sight at most `h max(T_h, f d)` and in height at most `h max(T_v, f d)` (`T_h`,
    /// `T_v`, `f`: `FusionOptions.ChannelSounding.positionThreshold`,
    /// `.verticalPositionThreshold` and `.positionFractionOfDistance`; `h` the coaching's
    /// hysteresis, `FusionOptions.Coaching.hysteresis`, 1.5, within which a converged estimate
    /// stays converged). Beyond that no estimator publishes the position honestly: it would
    /// claim half as much again less uncertainty than the ideal one has. `nil` where no posterior
    /// is followed.
    public func posteriorDeterminesPosition(_ thresholds: FusionOptions.ChannelSounding = FusionOptions.ChannelSounding(),
                                            hysteresis: Double = FusionOptions.Coaching().hysteresis) -> Bool? {
        guard let spread = posteriorFinalSpread else { return nil }
        let fromDistance = thresholds.positionFractionOfDistance * spread.distance
        return spread.acrossLineOfSight <= hysteresis * max(thresholds.positionThreshold, fromDistance)
            && spread.height <= hysteresis * max(thresholds.verticalPositionThreshold, fromDistance)
    }

    /// A Channel Sounding range's log-density for the exact posterior of its distance
    /// (``EvaluatedUpdate/posteriorDistance``): `radio`'s error density at σ `sigma` (metres),
    /// tabulated every σ/25 from 8σ short (and the longest short read, 20σ, more where the radio reads short outliers)
    /// to 8σ long (and the longest multipath excess more).
    static func rangeLogDensity(_ radio: ChannelSoundingModel, standardDeviation sigma: Double) -> LogDensityTable {
        let long = radio.multipathProbability > 0 ? radio.multipathExcessRange.upperBound : 0
        let sigma = max(sigma, 1e-3)
        let short = radio.shortOutlierProbability > 0 ? ChannelSoundingModel.shortReadMultiples.most * sigma : 0
        return LogDensityTable(from: -8 * sigma - short, to: 8 * sigma + long, step: sigma / 25) {
            radio.rangeErrorDensity($0, standardDeviation: sigma)
        }
    }

    /// The half-width of the first shell of that posterior, metres: 3 m, or more where the
    /// first range may lie further off (5σ, and a short outlier's 20σ).
    static func shellHalfWidth(_ radio: ChannelSoundingModel, standardDeviation sigma: Double) -> Double {
        max(3, 5 * sigma + (radio.shortOutlierProbability > 0 ? ChannelSoundingModel.shortReadMultiples.most * sigma : 0))
    }

    /// Points in the first shell of the posterior under the engine's radio model
    /// (``EvaluatedUpdate/enginesModelPosteriorBearing``): fewer than the radio's own grid's
    /// 250,000, as its wider density keeps more of them alive for longer — a spacing of 22 cm
    /// at 4 m (3° of bearing), fine enough to tell when a σ falls to 10°.
    static let enginesModelPointCount = 100_000.0

    /// Runs `scenario` through a fresh engine (a `ReplayDriver`, as a replay of its
    /// recording would) and records the updates of the object
    /// `objectID` (the scenario's first object when `nil` or not found).
    ///
    /// With `exactPosteriorUntil` (radians), a Channel Sounding object's exact posterior
    /// (``RangeOnlyPosterior``) is followed from its first range — afresh from its first range
    /// after each time it moved, as an app's hint restarts the engine, and, when the scenario's
    /// app said it moved, weighted by the engine's prior of where it was
    /// (``RangeOnlyPosterior/multiply(byGaussianWithMean:covariance:)``, `options.carrySpeed`) — to the end of the run,
    /// which gets the posterior's NEES at the last range (``posteriorFinalNEES``); each update
    /// before the object first moves carries the posterior's bearing σ
    /// (``EvaluatedUpdate/posteriorBearing``) until that first falls to the given angle; and,
    /// beside it, the exact posterior under the engine's own radio model (`options`), its
    /// bearing σ (``EvaluatedUpdate/enginesModelPosteriorBearing``) until that falls to the
    /// angle, before the object first moves. About 0.3–1.5 s per run in all.
    ///
    /// With `exactDistance`, a Channel Sounding object that never moves gets a second exact
    /// posterior, under the simulated radio's own noise range by range (each range's σ at the
    /// signal the run gave it, `ChannelSoundingModel`'s short outliers and multipath, not its
    /// scale error and offset), followed from its first range to the end of the run: every
    /// update from then on carries its mean distance (``EvaluatedUpdate/posteriorDistance``).
    public init(_ scenario: SimulationScenario, objectID: String? = nil, options: FusionOptions = FusionOptions(),
                cameraAssistance: Bool? = nil, exactPosteriorUntil: Double? = nil, exactDistance: Bool = false) {
        let simulation = Simulator.simulate(scenario)
        let events = simulation.events
        guard case .header(let header)? = events.first else { return }
        var driver = ReplayDriver(header: header, options: options, cameraAssistance: cameraAssistance)
        guard let object = scenario.objects.first(where: { $0.id == objectID }) ?? scenario.objects.first else { return }
        let objectID = object.id
        var lastPose: DevicePose?
        var poseIndex = -1
        var fisher = Matrix3.zero
        // One range's information at the simulator's own noise (Channel Sounding: jitter and
        // multipath, `ChannelSoundingModel.rangeFisherInformation`).
        let rangeInformation = object.ranging == .bluetoothChannelSounding ? scenario.channelSounding.rangeFisherInformation
            : 1 / (scenario.radio.rangeStandardDeviation * scenario.radio.rangeStandardDeviation)
        var posterior: RangeOnlyPosterior?
        // The posterior under the engine's own radio model (followed, like the bearing of the
        // other, until it allows the angle or the object first moves); none where both models
        // are the same.
        var enginesModelPosterior: RangeOnlyPosterior?
        var enginesModelAllowed = false
        let scenarioVariance = scenario.channelSounding.rangeStandardDeviation * scenario.channelSounding.rangeStandardDeviation
        let enginesRadio = options.forRanging(.bluetoothChannelSounding)
        let enginesVariance = enginesRadio.sensors.rangeStandardDeviation * enginesRadio.sensors.rangeStandardDeviation
        let sameModel = enginesRadio.rangeErrorDensity == scenario.channelSounding.rangeErrorDensity && enginesVariance == scenarioVariance
        let followPosterior = exactPosteriorUntil != nil && object.ranging == .bluetoothChannelSounding
        // The exact posterior of the distance under the radio's own noise, range by range.
        let radio = scenario.channelSounding
        var distancePosterior: RangeOnlyPosterior?
        let followDistance = exactDistance && object.ranging == .bluetoothChannelSounding && !object.moves
        // The bearing σ is reported for the first acquisition only, until it allows the angle;
        // an object that moved gets a posterior anew from its first range once it is still again.
        var posteriorAllowed = false, moved = false
        // The posterior's moments when the app said the tag moved, and that time (seconds).
        var carryOrigin: (mean: Vector3, covariance: Matrix3, since: Double)?
        var lastTruth = Vector3.zero, lastDevice = Vector3.zero
        // Which `uwb` event this is, counted over every object (`Simulator.Output.rangeOutlierMetres`).
        var radioEvent = -1
        // The distance bound of a ranges-only UWB object, from its first range on, and the last
        // range it was given (a range equal to it to the bit is a stale repeat).
        let followsMovingBound = object.ranging != .bluetoothChannelSounding && !scenario.radio.capabilities.supportsDirectionMeasurement
        var movingBound: MovingDistanceBound?
        var lastRange: Double?
        for e in events {
            if case .uwb = e { radioEvent += 1 }
            switch driver.apply(e) {
            case .pose(let p, let change)?:
                lastPose = p
                poseIndex += 1
                if let change { sessionChanges.append(change) }
            case .uwb(let k, let m, let est, _)?:
                guard driver.objectIDs[k] == objectID, let pose = lastPose, poseIndex >= 0 else { continue }
                let device = simulation.trueDevicePoses[poseIndex]
                let truth = object.position(at: m.timestamp)
                let vioOffset = pose.positionInWorld - device.positionInWorld
                let snap = driver.engine.snapshot(driver.handle(ofSlot: k))
                // Fisher information of this update at the truth (true device pose).
                let toObject = truth - device.positionInWorld
                if let r = m.distance, r > 0 {
                    let u = toObject.normalized
                    fisher += rangeInformation * Matrix3.outer(u, u)
                }
                if m.directionInDevice != nil {
                    let h = DirectionModel(antennaInWorld: device.positionInWorld, worldFromDevice: device.worldFromDevice,
                                           azimuthStandardDeviation: scenario.radio.azimuthStandardDeviation,
                                           elevationStandardDeviation: scenario.radio.elevationStandardDeviation, gate: 0).jacobian(truth)
                    fisher += (1 / pow(scenario.radio.azimuthStandardDeviation, 2)) * Matrix3.outer(h.row0, h.row0)
                        + (1 / pow(scenario.radio.elevationStandardDeviation, 2)) * Matrix3.outer(h.row1, h.row1)
                }
                let rho2 = toObject.x * toObject.x + toObject.z * toObject.z
                let g = Vector3(-toObject.z / rho2, 0, toObject.x / rho2)
                // gᵀ J⁻¹ g = Σₖ (vₖ·g)² / λₖ; none while J is numerically singular (a few ranges
                // from nearly one place), where an adjugate inverse would be garbage.
                var bound: Double?
                if let e = SymmetricEigen3.analytic(fisher), e.values.x > 1e-9 * max(e.values.z, 1e-300) {
                    var v = 0.0
                    for k in 0..<3 { let c = e.vector(k).dot(g); v += c * c / e.value(k) }
                    bound = v.squareRoot()
                }
                var posteriorBearing: Double?, enginesModelBearing: Double?
                if followPosterior, let limit = exactPosteriorUntil {
                    if object.velocity(at: m.timestamp).length > 0 {
                        // An app that says the tag moves gives the engine where it was and since
                        // when (``FusionOptions/Carry/speed``); the posterior gets the same prior.
                        if let p = posterior, carryOrigin == nil,
                           let hint = scenario.motionHints.last(where: { $0.objectID == objectID && $0.state == .moving && $0.time <= m.timestamp }) {
                            let moments = p.moments()
                            carryOrigin = (moments.meanInWorld, moments.covariance, hint.time)
                        }
                        moved = true
                        posterior = nil
                        enginesModelPosterior = nil
                    } else if let r = m.distance, r > 0 {
                        if posterior == nil {
                            posterior = RangeOnlyPosterior(firstRangeMetres: r, antennaInWorld: device.positionInWorld,
                                                           density: scenario.channelSounding.rangeErrorDensity, variance: scenarioVariance)
                            if let origin = carryOrigin, options.carry.speed > 0 {
                                let carried = options.carryDisplacementVariance(seconds: m.timestamp - origin.since)
                                posterior!.multiply(byGaussianWithMean: origin.mean,
                                                    covariance: origin.covariance + Matrix3.scaledIdentity(carried))
                            }
                            carryOrigin = nil
                        } else {
                            posterior!.add(rangeMetres: r, antennaInWorld: device.positionInWorld)
                        }
                        lastTruth = truth
                        lastDevice = device.positionInWorld
                        if !posteriorAllowed && !moved {
                            let sigma = posterior!.bearingStandardDeviation(from: device.positionInWorld)
                            posteriorBearing = sigma
                            posteriorAllowed = sigma <= limit
                        }
                        if sameModel {
                            enginesModelBearing = posteriorBearing
                        } else if !enginesModelAllowed && !moved {
                            if enginesModelPosterior == nil {
                                enginesModelPosterior = RangeOnlyPosterior(firstRangeMetres: r, antennaInWorld: device.positionInWorld,
                                                                           density: enginesRadio.rangeErrorDensity, variance: enginesVariance,
                                                                           targetPointCount: Self.enginesModelPointCount)
                            } else {
                                enginesModelPosterior!.add(rangeMetres: r, antennaInWorld: device.positionInWorld)
                            }
                            let sigma = enginesModelPosterior!.bearingStandardDeviation(from: device.positionInWorld)
                            enginesModelBearing = sigma
                            enginesModelAllowed = sigma <= limit
                            if enginesModelAllowed { enginesModelPosterior = nil }
                        }
                    }
                }
                // The exact posterior's own bearing where the engine published an angle.
                var posteriorAngleError: Double?
                if est.horizontalAngle != nil, !moved, let p = posterior, let mean = p.meanBearing(from: device.positionInWorld) {
                    posteriorAngleError = Angle.wrapped(mean - atan2(toObject.x, -toObject.z))
                }
                var posteriorDistance: Double?
                if followDistance {
                    if let r = m.distance, r > 0 {
                        let sigma = radio.rangeStandardDeviation(atDistance: toObject.length,
                                                                 shadowing: simulation.channelSoundingShadowing[objectID] ?? 0)
                        let table = Self.rangeLogDensity(radio, standardDeviation: sigma)
                        if distancePosterior == nil {
                            distancePosterior = RangeOnlyPosterior(firstRangeMetres: r, antennaInWorld: device.positionInWorld, logDensity: table,
                                                                   shellHalfWidthMetres: Self.shellHalfWidth(radio, standardDeviation: sigma))
                        } else {
                            distancePosterior!.add(rangeMetres: r, antennaInWorld: device.positionInWorld, logDensity: table)
                        }
                    }
                    posteriorDistance = distancePosterior?.meanDistance(from: device.positionInWorld)
                }
                let outlierMetres = m.distance != nil && simulation.rangeOutlierMetres.indices.contains(radioEvent)
                    ? simulation.rangeOutlierMetres[radioEvent] : 0
                var movingDistanceBound: Double?
                if followsMovingBound, toObject.length > 0 {
                    let u = toObject.normalized
                    if let r = m.distance, r > 0 {
                        if movingBound == nil {
                            movingBound = MovingDistanceBound(originTime: m.timestamp, velocityChanges: object.velocityChanges.map(\.time),
                                                              rangeStandardDeviation: scenario.radio.rangeStandardDeviation,
                                                              correlationSeconds: scenario.radio.rangeErrorCorrelationSeconds,
                                                              velocityPriorStandardDeviation: options.motion.velocityPriorStandardDeviation)
                        }
                        if r != lastRange && outlierMetres == 0 { movingBound!.addRange(at: m.timestamp, toward: u) }
                        lastRange = r
                    }
                    movingDistanceBound = movingBound?.distanceStandardDeviation(at: m.timestamp, toward: u)
                }
                updates.append(EvaluatedUpdate(
                    estimate: est, truthInWorld: truth + vioOffset,
                    trueHorizontalAngle: HorizontalAngle.angle(objectInWorld: truth, devicePositionInWorld: device.positionInWorld,
                                                               worldFromDevice: device.worldFromDevice),
                    trueHeightDifference: truth.y - device.positionInWorld.y, trueVelocity: object.velocity(at: m.timestamp),
                    bearingBound: bound, posteriorBearing: posteriorBearing, enginesModelPosteriorBearing: enginesModelBearing,
                    posteriorAngleError: posteriorAngleError,
                    posteriorDistance: posteriorDistance, movingDistanceBound: movingDistanceBound, trueDistanceVector: toObject,
                    rawDistance: m.distance,
                    radioBiasMetres: object.ranging == .bluetoothChannelSounding
                        ? scenario.channelSounding.rangeScaleError * toObject.length + scenario.channelSounding.rangeOffset
                        : scenario.radio.rangeBias,
                    rangeOutlierMetres: outlierMetres,
                    moments: snap.moments, hypothesisCount: snap.hypothesisCount, hypotheses: snap.hypotheses))
            default: break
            }
        }
        // (One pass over the grid for both: its moments.)
        if let moments = posterior?.moments() {
            let toMean = moments.meanInWorld - lastDevice
            let horizontal = Vector3(toMean.x, 0, toMean.z)
            if horizontal.length > 1e-9 {
                let across = Vector3(-horizontal.z, 0, horizontal.x) / horizontal.length
                posteriorFinalSpread = (moments.covariance.quadraticForm(across).squareRoot(), moments.covariance.m11.squareRoot(),
                                        toMean.length)
            }
            if let inverse = moments.covariance.inverse {
                posteriorFinalNEES = inverse.quadraticForm(moments.meanInWorld - lastTruth)
            }
        }
    }

    /// When the object first starts to move after having kept still (a tag picked up),
    /// seconds; `nil` when it never does so.
    public var motionStart: Double? {
        var wasStill = false
        for u in updates {
            let moving = u.trueVelocity.length > 0.05
            if !moving { wasStill = true } else if wasStill { return u.estimate.timestamp }
        }
        return nil
    }

    /// Seconds from ``motionStart`` to the first estimate that says `moving`; `nil` when it
    /// never does.
    public var movingReportedAfter: Double? {
        guard let start = motionStart,
              let first = updates.first(where: { $0.estimate.timestamp >= start && $0.estimate.motion == .moving }) else { return nil }
        return first.estimate.timestamp - start
    }

    /// How well the published `motion` told the truth from the first convergence on
    /// (`MotionReportScore` of NearbyFusionRecording; the truth moves at
    /// `ObjectEvaluation.movingTruthSpeed`, 0.1 m/s, or more).
    public var motionReportScore: MotionReportScore {
        MotionReportScore(updates.lazy.map {
            (truthMoving: $0.trueVelocity.length >= ObjectEvaluation.movingTruthSpeed, reported: $0.estimate.motion,
             converged: $0.estimate.convergence?.status.isConverged == true, time: $0.estimate.timestamp)
        })
    }

    /// Changes between converged and not converged per minute after the first convergence
    /// (as `evaluate`'s "changes/min" counts them); `nil` before any convergence.
    public var convergenceChangesPerMinute: Double? {
        var stability = ConvergenceStability()
        for u in updates { stability.add(converged: u.estimate.convergence?.status.isConverged == true, at: u.estimate.timestamp) }
        return stability.changesPerMinute
    }

    /// The longest run of time, seconds, during which every published `worldTransform` was
    /// more than `metres` from the truth (a stale position left behind a moving object).
    public func longestStaleTransform(beyond metres: Double) -> Double {
        var longest = 0.0, runStart: Double?
        for u in updates {
            guard let w = u.estimate.worldTransform else { continue }
            if (w.translation - u.truthInWorld).length > metres {
                if runStart == nil { runStart = u.estimate.timestamp }
                longest = max(longest, u.estimate.timestamp - runStart!)
            } else {
                runStart = nil
            }
        }
        return longest
    }

    /// When the Cramér–Rao bound first allows a bearing σ of `degrees`, seconds.
    public func boundAllows(degrees: Double) -> Double? { firstTime(\.bearingBound, atMost: degrees) }

    /// When the exact posterior's bearing σ (``EvaluatedUpdate/posteriorBearing``) first falls
    /// to `degrees`, seconds; `nil` when it never does in the updates that carry it.
    public func posteriorAllows(degrees: Double) -> Double? { firstTime(\.posteriorBearing, atMost: degrees) }

    /// The same for the exact posterior under the engine's own radio model
    /// (``EvaluatedUpdate/enginesModelPosteriorBearing``).
    public func enginesModelPosteriorAllows(degrees: Double) -> Double? { firstTime(\.enginesModelPosteriorBearing, atMost: degrees) }

    /// The time, seconds, of the first update whose `bearing` (radians, where it is given) is at
    /// most `degrees`; `nil` when none is.
    private func firstTime(_ bearing: KeyPath<EvaluatedUpdate, Double?>, atMost degrees: Double) -> Double? {
        let limit = Angle.radians(degrees: degrees)
        return updates.first { $0[keyPath: bearing].map { $0 <= limit } == true }?.estimate.timestamp
    }

    /// Against the Cramér–Rao bound's moment for `degrees` (``boundAllows(degrees:)``):
    /// whether the first angle, and whether the exact posterior's own moment
    /// (``posteriorAllows(degrees:)``), and the moment of the posterior under the engine's own
    /// radio model (``enginesModelPosteriorAllows(degrees:)``), come within `seconds` of it;
    /// `nil` when the bound never allows that angle in the run.
    public func onTimeForBound(degrees: Double, within seconds: Double) -> (angle: Bool, posterior: Bool, enginesModelPosterior: Bool)? {
        guard let bound = boundAllows(degrees: degrees) else { return nil }
        let angle = firstAngleTime.map { $0 - bound <= seconds } ?? false
        let posterior = posteriorAllows(degrees: degrees).map { $0 - bound <= seconds } ?? false
        let enginesModel = enginesModelPosteriorAllows(degrees: degrees).map { $0 - bound <= seconds } ?? false
        return (angle, posterior, enginesModel)
    }

    /// Time of the first published `horizontalAngle`, seconds.
    public var firstAngleTime: Double? { updates.first { $0.estimate.horizontalAngle != nil }?.estimate.timestamp }

    /// Time of the first `converged` status, seconds.
    public var firstConvergedTime: Double? { updates.first { $0.estimate.convergence?.status.isConverged == true }?.estimate.timestamp }

    /// |horizontalAngle error| of every published horizontal angle, radians.
    public var horizontalAngleErrors: [Double] {
        updates.compactMap { u in
            guard let a = u.estimate.horizontalAngle, let t = u.trueHorizontalAngle else { return nil }
            return abs(Angle.wrapped(a - t))
        }
    }

    /// Position error of every published worldTransform, metres.
    public var positionErrors: [Double] {
        updates.compactMap { u in u.estimate.worldTransform.map { ($0.translation - u.truthInWorld).length } }
    }

    /// Largest |horizontal angle error| at a `converged` update, radians.
    public var worstConvergedAngleError: Double {
        updates.filter { $0.estimate.convergence?.status.isConverged == true }
            .compactMap { u in u.estimate.horizontalAngle.flatMap { a in u.trueHorizontalAngle.map { abs(Angle.wrapped(a - $0)) } } }
            .max() ?? 0
    }

    /// How far the published distance lags the true one, seconds
    /// (`DistanceErrorSummary.lag(truth:published:maximum:)`, as `evaluate` measures it):
    /// over the updates that publish a distance, against the true distance at every update.
    /// `nil` with fewer than ten such updates.
    public func distanceLag(maximum: Double = 3) -> Double? {
        DistanceErrorSummary.lag(truth: updates.map { ($0.estimate.timestamp, $0.trueDistanceVector.length) },
                                 published: updates.compactMap { u in u.estimate.distance.map { (u.estimate.timestamp, $0) } },
                                 maximum: maximum)
    }

    /// The same lag for the exact posterior's mean distance (``EvaluatedUpdate/posteriorDistance``),
    /// over the updates that carry one; `nil` with fewer than ten.
    public func posteriorDistanceLag(maximum: Double = 3) -> Double? {
        DistanceErrorSummary.lag(truth: updates.map { ($0.estimate.timestamp, $0.trueDistanceVector.length) },
                                 published: updates.compactMap { u in u.posteriorDistance.map { (u.estimate.timestamp, $0) } },
                                 maximum: maximum)
    }

    /// The exact posterior's distance error `|d̄ − d|`, metres, at every update with a range
    /// and a posterior distance (``EvaluatedUpdate/posteriorDistance``): the moments
    /// ``pairedDistanceErrors`` scores the published distance at.
    public var posteriorDistanceErrors: [Double] {
        updates.compactMap { u in
            guard u.rawDistance != nil, let d = u.posteriorDistance, d.isFinite else { return nil }
            return abs(d - u.trueDistanceVector.length)
        }
    }

    /// The error law of the distance bound's estimator, `N(b, s²)` in metres (``EvaluatedUpdate/movingDistanceBound``,
    /// `b` the radio's offset), at every update with a range and a bound: the moments
    /// ``pairedDistanceErrors`` scores the published distance at.
    public var movingDistanceBoundErrors: [(bias: Double, standardDeviation: Double)] {
        updates.compactMap { u in
            guard u.rawDistance != nil, let s = u.movingDistanceBound else { return nil }
            return (u.radioBiasMetres, s)
        }
    }

    /// The `q`-quantile of the bound's absolute error pooled over `runs`' updates
    /// (``movingDistanceBoundErrors``, ``MovingDistanceBound/quantileOfAbsoluteError(means:standardDeviations:_:)``),
    /// metres; `nil` where no update has a bound.
    public static func movingDistanceBoundQuantile(_ runs: [ScenarioRun], _ q: Double) -> Double? {
        let laws = runs.flatMap(\.movingDistanceBoundErrors)
        return MovingDistanceBound.quantileOfAbsoluteError(means: laws.map(\.bias), standardDeviations: laws.map(\.standardDeviation), q)
    }

    /// Every published `horizontalAngle`: its signed error (radians, wrapped), the
    /// Cramér–Rao bound on the bearing at that update (radians; `nil` where it is not
    /// computed) and whether the update was `converged`.
    public var publishedAngles: [(error: Double, bound: Double?, converged: Bool)] {
        updates.compactMap { u in
            guard let a = u.estimate.horizontalAngle, let t = u.trueHorizontalAngle else { return nil }
            return (Angle.wrapped(a - t), u.bearingBound, u.estimate.convergence?.status.isConverged == true)
        }
    }

    /// `Σ e²` over the published angles and `Σ b²` over the bounds they have, radians²: the
    /// sums behind ``angleRMSEOverBound(_:)``, which adds them across runs instead of
    /// averaging ratios.
    public var angleSquaredSums: (errors: Double, bounds: Double) {
        publishedAngles.reduce(into: (errors: 0.0, bounds: 0.0)) { sums, angle in
            sums.errors += angle.error * angle.error
            if let b = angle.bound { sums.bounds += b * b }
        }
    }

    /// The published distance's and the raw ranges' absolute errors against the true
    /// distance, metres, per update that has one, with whether the object itself moved
    /// then (`ObjectEvaluation.movingTruthSpeed` of NearbyFusionRecording, or faster).
    public var distanceErrors: (published: [(error: Double, moving: Bool)], raw: [(error: Double, moving: Bool)]) {
        var published: [(error: Double, moving: Bool)] = [], raw: [(error: Double, moving: Bool)] = []
        for u in updates {
            let truth = u.trueDistanceVector.length, moving = u.trueVelocity.length >= ObjectEvaluation.movingTruthSpeed
            if let d = u.estimate.distance { published.append((abs(d - truth), moving)) }
            if let r = u.rawDistance { raw.append((abs(r - truth), moving)) }
        }
        return (published, raw)
    }

    /// The raw range's and the published distance's absolute errors, metres, at every update
    /// that has both: the two compared on the same moments (a radio that fails often far away
    /// has few raw ranges there, while a distance is published at every update). Beside them,
    /// `radioBias`: `|s d + o|`, metres, the error of a distance that averaged the radio's noise,
    /// failures and multipath away perfectly but, as no estimator can without a reference, kept
    /// its scale error and offset (``EvaluatedUpdate/radioBiasMetres``). Where the device and
    /// the object keep still, the ranges cannot tell such an error from the distance itself: no
    /// published distance can do much better than it. And `withoutOutliers`: the absolute error
    /// of the raw range less the part the radio's outliers put there
    /// (``EvaluatedUpdate/rangeOutlierMetres``) — the radio's noise, bias and scale alone, which a
    /// published distance can beat only by averaging that noise over time (little, where its
    /// errors last for seconds).
    public var pairedDistanceErrors: [(raw: Double, published: Double, moving: Bool, radioBias: Double, withoutOutliers: Double)] {
        updates.compactMap { u in
            guard let errors = Self.distanceErrors(at: u), let raw = u.rawDistance else { return nil }
            return (errors.raw, errors.published, u.trueVelocity.length >= ObjectEvaluation.movingTruthSpeed, abs(u.radioBiasMetres),
                    abs(raw - u.rangeOutlierMetres - u.trueDistanceVector.length))
        }
    }

    /// The absolute errors, metres, of `u`'s raw range and published distance; `nil` unless it has both.
    static func distanceErrors(at u: EvaluatedUpdate) -> (raw: Double, published: Double)? {
        guard let r = u.rawDistance, let d = u.estimate.distance else { return nil }
        let truth = u.trueDistanceVector.length
        return (abs(r - truth), abs(d - truth))
    }

    /// ``pairedDistanceErrors`` at the updates before the object is located (no
    /// `worldTransform` published): the absolute errors, metres, of the raw range and of the
    /// published distance. Until then a UWB object's distance is its ranges' own, late spikes
    /// set aside (`RangeSpikeGuard`), and a Channel Sounding tag's its ranges smoothed; after,
    /// it is the distance to the fused position.
    public var pairedDistanceErrorsBeforeLocated: [(raw: Double, published: Double)] {
        updates.compactMap { $0.estimate.worldTransform == nil ? Self.distanceErrors(at: $0) : nil }
    }

    /// At every update whose procedure failed (no range) after a first range: the absolute
    /// errors, metres, of the last range held (what an app that shows the last range shows
    /// through the failures) and of the published distance. An estimate that dead-reckons an
    /// imaginary motion through a gap shows here, where ``pairedDistanceErrors`` has no update.
    public var gapDistanceErrors: [(heldRaw: Double, published: Double)] {
        var last: Double?
        var errors: [(heldRaw: Double, published: Double)] = []
        for u in updates {
            if let r = u.rawDistance { last = r; continue }
            guard let held = last, let d = u.estimate.distance else { continue }
            let truth = u.trueDistanceVector.length
            errors.append((abs(held - truth), abs(d - truth)))
        }
        return errors
    }

    /// `√(Σ e² / Σ b²)` over the published angles of `runs` (``angleSquaredSums``): the angle
    /// RMSE as a multiple of the Cramér–Rao bound's RMS; `nil` without a bound.
    public static func angleRMSEOverBound(_ runs: [ScenarioRun]) -> Double? {
        var errors = 0.0, bounds = 0.0
        for run in runs {
            let sums = run.angleSquaredSums
            errors += sums.errors
            bounds += sums.bounds
        }
        return bounds > 0 ? (errors / bounds).squareRoot() : nil
    }

    /// `√(Σ e² / Σ b²)` of the exact posterior's bearing (``EvaluatedUpdate/posteriorAngleError``)
    /// at the updates of `runs` where the engine published an angle and the posterior was
    /// followed, over the Cramér–Rao bound's RMS there; beside it the engine's own ratio at the
    /// same updates and how many of its published angles those are. `nil` without such an
    /// update with a bound.
    public static func posteriorAngleRMSEOverBound(_ runs: [ScenarioRun]) -> (posterior: Double, engine: Double, updates: Int, of: Int)? {
        var posteriorErrors = 0.0, engineErrors = 0.0, bounds = 0.0, updates = 0, published = 0
        for run in runs {
            for u in run.updates {
                guard let a = u.estimate.horizontalAngle, let t = u.trueHorizontalAngle else { continue }
                published += 1
                guard let e = u.posteriorAngleError, let b = u.bearingBound else { continue }
                let engine = Angle.wrapped(a - t)
                posteriorErrors += e * e
                engineErrors += engine * engine
                bounds += b * b
                updates += 1
            }
        }
        guard bounds > 0 else { return nil }
        return ((posteriorErrors / bounds).squareRoot(), (engineErrors / bounds).squareRoot(), updates, published)
    }

    /// Over `runs`, the published angles at `converged` updates, and how many of them were
    /// more than `radians` off.
    public static func convergedAngles(_ runs: [ScenarioRun], beyond radians: Double) -> (beyond: Int, converged: Int) {
        var beyond = 0, converged = 0
        for run in runs {
            for angle in run.publishedAngles where angle.converged {
                converged += 1
                if abs(angle.error) > radians { beyond += 1 }
            }
        }
        return (beyond, converged)
    }

    /// NEES `(p̂ − p)ᵀ P⁻¹ (p̂ − p)` of the last update.
    public var finalNEES: Double? {
        guard let u = updates.last, let m = u.moments, let inv = m.covariance.inverse else { return nil }
        return inv.quadraticForm(m.meanInWorld - u.truthInWorld)
    }
}

