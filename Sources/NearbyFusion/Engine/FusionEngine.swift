import Foundation

/// The fusion core: device poses from VIO and UWB updates in, `NINearbyObject`-like
/// estimates and convergence coaching out.
///
/// A value type with no clocks, files, loggers or globals: the caller feeds time-ordered
/// poses (``ingest(_:)-(DevicePose)``) and UWB updates (``ingest(_:for:)``) and gets one
/// ``NearbyObjectEstimate`` per UWB update. Each object is a ``PositionMixture`` (a bank
/// of EKFs on its world position) plus the bookkeeping for coaching; see
/// ``ConvergenceAnalysis`` for how reasons are derived.
///
/// Per update (steady state, once the bank has collapsed into one tracked Gaussian) the work
/// is fixed-size 3×3 maths — the EKF steps, the convergence analysis with its closed-form
/// eigen-decomposition when a cheap bound does not settle it — and nothing is allocated on
/// the heap (see the benchmarks and `bench`).
public struct FusionEngine: Sendable {
    public var options: FusionOptions { optionsBox.options }
    let optionsBox: OptionsBox
    public let capabilities: DeviceCapabilities
    /// Camera assistance requested and supported.
    public let cameraAssistanceEnabled: Bool

    private var objects: [ObjectTracker] = []
    private var indexByID: [String: Int] = [:]
    private var latestPose: DevicePose?
    private var previousPose: DevicePose?
    /// Device path length while VIO tracked normally, metres.
    private var pathLength = 0.0
    public private(set) var sessionConvergence = AlgorithmConvergence(status: .unknown)

    public init(capabilities: DeviceCapabilities = .phone, cameraAssistanceEnabled: Bool = true,
                options: FusionOptions = FusionOptions()) {
        self.optionsBox = OptionsBox(options)
        self.capabilities = capabilities
        self.cameraAssistanceEnabled = cameraAssistanceEnabled && capabilities.supportsCameraAssistance
    }

    // MARK: Objects

    /// Registers an object (or returns the handle of one already registered).
    @discardableResult
    public mutating func register(objectID: String, kind: ObjectKind = .accessory) -> ObjectHandle {
        if let i = indexByID[objectID] {
            objects[i].removed = false
            return ObjectHandle(index: i)
        }
        objects.append(ObjectTracker(objectID: objectID, kind: kind, capacity: options.maximumHypotheses,
                                     windowCapacity: options.batchWindowCapacity))
        indexByID[objectID] = objects.count - 1
        return ObjectHandle(index: objects.count - 1)
    }

    /// Registers an object whose position is already known (for example saved from an
    /// earlier session, as an ARKit anchor would be): its estimate starts as
    /// `N(positionInWorld, covariance)` and is tracked by the EKF at once. Convergence still
    /// needs movement, as for any object.
    @discardableResult
    public mutating func register(objectID: String, kind: ObjectKind = .accessory, knownPositionInWorld position: Vector3,
                                  covariance: Matrix3) -> ObjectHandle {
        let handle = register(objectID: objectID, kind: kind)
        objects[handle.index].resetEstimate()
        objects[handle.index].mixture.reset(meanInWorld: position, covariance: covariance.symmetrized)
        objects[handle.index].settled = true
        return handle
    }

    /// The handle of a registered object.
    public func handle(for objectID: String) -> ObjectHandle? { indexByID[objectID].map(ObjectHandle.init) }

    /// Ends tracking of an object (`removed` event); a later update starts afresh.
    public mutating func remove(objectID: String) {
        guard let i = indexByID[objectID] else { return }
        objects[i].resetEstimate()
        objects[i].removed = true
        objects[i].lastRangeTime = nil
        objects[i].firstUpdateTime = nil
        objects[i].hasConverged = false
    }

    /// The object's current position estimate (mixture mean and covariance, world frame,
    /// metres and m²), or `nil` before the first range. Allocation-free.
    public func moments(_ handle: ObjectHandle) -> MixtureMoments? {
        let o = objects[handle.index]
        return o.mixture.isEmpty ? nil : o.mixture.moments
    }

    /// A snapshot of an object's estimator state.
    public func snapshot(_ handle: ObjectHandle) -> ObjectStateSnapshot {
        let o = objects[handle.index]
        return ObjectStateSnapshot(objectID: o.objectID, moments: o.mixture.isEmpty ? nil : o.mixture.moments,
                                   hypothesisCount: o.mixture.count, hypotheses: Array(o.mixture.hypotheses),
                                   assessment: o.lastAssessment)
    }

    // MARK: Poses

    /// Takes a VIO pose. Returns the new session-level convergence when it changed.
    ///
    /// Session level: `notConverged([insufficientLighting])` while ARKit's ambient
    /// intensity is below `minimumAmbientIntensity` or tracking is limited by
    /// insufficient features; `unknown` otherwise (the session itself never claims
    /// convergence: objects do).
    public mutating func ingest(_ pose: DevicePose) -> SessionConvergenceUpdate? {
        var pose = pose
        // Recordings allow |‖q‖ − 1| ≤ 1e-3; rotate only with a unit quaternion.
        let n = pose.worldFromDevice.norm
        if n > 0, n.isFinite, n != 1 { pose.worldFromDevice = pose.worldFromDevice.normalized }
        guard pose.positionInWorld.isFinite, n > 0, n.isFinite, pose.timestamp.isFinite else { return nil }
        if let last = latestPose, last.tracking == .normal, pose.tracking == .normal {
            pathLength += (pose.positionInWorld - last.positionInWorld).length
        }
        previousPose = latestPose
        latestPose = pose
        guard cameraAssistanceEnabled else { return nil }
        let status: ConvergenceStatus = lightingLimited(pose) ? .notConverged(.insufficientLighting) : .unknown
        guard status != sessionConvergence.status else { return nil }
        sessionConvergence = AlgorithmConvergence(status: status)
        return SessionConvergenceUpdate(timestamp: pose.timestamp, convergence: sessionConvergence)
    }

    private func lightingLimited(_ pose: DevicePose) -> Bool {
        if case .limited(.insufficientFeatures) = pose.tracking { return true }
        if let lux = pose.ambientIntensity, lux < options.minimumAmbientIntensity { return true }
        return false
    }

    /// The device pose at `t`: the latest pose with its position extrapolated at the
    /// velocity of the last two poses, `a(t) = a₁ + (a₁ − a₀)(t − t₁)/(t₁ − t₀)`, for at
    /// most 0.1 s (UWB and VIO clocks tick at different rates).
    private func pose(at t: Double) -> DevicePose? {
        guard var p = latestPose else { return nil }
        if let q = previousPose, p.timestamp > q.timestamp {
            let dt = min(max(t - p.timestamp, 0), 0.1)
            let v = (p.positionInWorld - q.positionInWorld) / (p.timestamp - q.timestamp)
            if v.isFinite { p.positionInWorld += dt * v }
        }
        return p
    }

    // MARK: UWB updates

    /// Takes one UWB update for a registered object and returns what is published.
    public mutating func ingest(_ measurement: UWBMeasurement, for handle: ObjectHandle) -> NearbyObjectEstimate {
        let devicePose = pose(at: measurement.timestamp)
        let context = ObjectTracker.Context(
            optionsBox: optionsBox, capabilities: capabilities, cameraAssistanceEnabled: cameraAssistanceEnabled,
            pathLength: pathLength, devicePose: devicePose, lightingLimited: devicePose.map(lightingLimited) ?? false)
        // In place on the array element: no copy of the tracker's buffers.
        return objects[handle.index].ingest(measurement, context: context)
    }

    /// Registers the object if needed and ingests the update.
    public mutating func ingest(_ measurement: UWBMeasurement, forObject objectID: String) -> NearbyObjectEstimate {
        let h = register(objectID: objectID)
        return ingest(measurement, for: h)
    }

}


/// Immutable options shared by an engine and its objects' updates.
final class OptionsBox: Sendable {
    let options: FusionOptions
    init(_ options: FusionOptions) { self.options = options }
}

extension ObjectTracker {
    /// What an object's update needs from the engine. The options travel by reference (a
    /// shared immutable box): copying their ~400 bytes on every update showed in profiles.
    struct Context {
        let optionsBox: OptionsBox
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

    /// One UWB update for this object: fusion, then what is published.
    mutating func ingest(_ measurement: UWBMeasurement, context: Context) -> NearbyObjectEstimate {
        let t = measurement.timestamp
        let options = context.options, capabilities = context.capabilities
        if firstUpdateTime == nil { firstUpdateTime = t }
        removed = false

        // Sanitise the raw measurement: a non-finite or non-positive range, or a
        // non-finite or zero direction, is treated as absent (never propagated).
        var rawDistance = measurement.distance.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        if !capabilities.supportsPreciseDistanceMeasurement { rawDistance = nil }
        var rawDirection = measurement.directionInDevice.flatMap { $0.isFinite && $0.length > 1e-9 ? $0.normalized : nil }
        if !capabilities.supportsDirectionMeasurement { rawDirection = nil }

        var estimate = NearbyObjectEstimate(timestamp: t, objectID: objectID, distance: rawDistance, direction: rawDirection)
        guard context.cameraAssistanceEnabled else { return estimate }
        guard let devicePose = context.devicePose else {
            estimate.convergence = AlgorithmConvergence(status: .unknown)
            estimate.verticalDirectionEstimate = .unknown
            return estimate
        }
        let antennaInWorld = devicePose.positionInWorld + devicePose.worldFromDevice.rotate(options.antennaOffsetInDevice)
        if let r = rawDistance {
            lastRangeMetres = r
            lastRangeTime = t
        }

        if devicePose.tracking == .normal {
            fuse(range: rawDistance, direction: rawDirection, at: t, pose: devicePose, antennaInWorld: antennaInWorld, context: context)
        }

        // Convergence and outputs.
        var reasons: ConvergenceReasons = []
        if context.lightingLimited { reasons.insert(.insufficientLighting) }
        // Signal: how long since the radio last gave a usable range (fused or not: while VIO
        // is limited nothing is fused, yet the signal is fine).
        let signalAge = t - (lastRangeTime ?? firstUpdateTime ?? t)
        if signalAge > options.signalTimeout || (lastRangeMetres ?? 0) > options.maximumRange {
            reasons.insert(.insufficientSignalStrength)
        }
        guard !mixture.isEmpty else {
            // Nothing estimated yet: `unknown`, unless a reason already withholds it (nil).
            estimate.convergence = AlgorithmConvergence(status: reasons.isEmpty ? .unknown : .notConverged(reasons))
            estimate.verticalDirectionEstimate = reasons.isEmpty ? .unknown : nil
            return estimate
        }
        let assessment = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: antennaInWorld,
                                                    movement: movement, movementAlreadySufficient: movementSufficient,
                                                    previous: previousResolution, options: options)
        if assessment.movementExtent >= options.minimumMovement { movementSufficient = true }
        previousResolution = (assessment.horizontalResolved, assessment.verticalResolved)
        lastAssessment = assessment
        reasons.formUnion(assessment.reasons)

        let status: ConvergenceStatus = reasons.isEmpty ? .converged : .notConverged(reasons)
        estimate.convergence = AlgorithmConvergence(status: status)
        let mean = assessment.meanInWorld
        let horizontalAvailable = reasons.isDisjoint(with: .withholdingHorizontal) && assessment.horizontalResolved
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
        if status.isConverged {
            hasConverged = true
            let toObject = mean - antennaInWorld
            estimate.worldTransform = WorldTransform(translation: mean)
            estimate.distance = toObject.length
            // Camera assistance widens the field of view: the direction comes from the
            // world estimate, inside the radio's cone or not.
            estimate.direction = devicePose.worldFromDevice.inverseRotate(toObject).normalized
        }
        return estimate
    }

    /// One update of an object's estimate.
    ///
    /// Two regimes:
    /// - **acquisition** (an accessory whose estimate has not settled on one resolved
    ///   hypothesis): the update is stored in the window and every hypothesis is
    ///   re-solved from its prior and the whole window (``BatchRefinement``), warm-started
    ///   from its last solution, so no hypothesis is judged by measurements linearised
    ///   far from it;
    /// - **tracking** (settled, or a peer that may move): the EKF steps of
    ///   ``PositionMixture`` — predict, range, direction (or its absence) — fixed-size
    ///   and allocation-free.
    private mutating func fuse(range: Double?, direction: Vector3?, at t: Double,
                               pose: DevicePose, antennaInWorld a: Vector3, context: Context) {
        let o = context.options, capabilities = context.capabilities, pathLength = context.pathLength
        var entry = WindowEntry(antennaInWorld: a, worldFromDevice: pose.worldFromDevice, rangeMetres: 0, angles: Vector2(0, 0),
                                hasRange: false, angleKind: 0, directionMissing: false, multiplicity: 1)
        if let r = range, r <= o.maximumRange { entry.hasRange = true; entry.rangeMetres = r }
        if let d = direction {
            if !capabilities.supportsElevationMeasurement || d.y == 0 {
                entry.angleKind = 1
                entry.angles = Vector2(atan2(d.x, -d.z), 0)
            } else {
                entry.angleKind = 2
                entry.angles = DeviceAngles.azimuthElevation(d)
            }
        } else if entry.hasRange, capabilities.supportsDirectionMeasurement, o.missingDirectionLikelihood < 1,
                  abs(pose.worldFromDevice.rotate(Vector3(1, 0, 0)).y) < 0.7 {
            // Portrait hold, direction-capable radio, a range but no direction: the object
            // is probably outside the field of view.
            entry.directionMissing = true
        }

        if mixture.isEmpty {
            guard entry.hasRange else { return }
            initialise(rangeMetres: entry.rangeMetres, at: t, pose: pose, antennaInWorld: a, context: context)
            return
        }
        // Predict: random walk P ← P + (q Δt + k_d Δs) I.
        let dt = max(t - (lastPredictionTime ?? t), 0)
        let ds = max(pathLength - pathLengthAtLastPrediction, 0)
        let q = (kind == .peer ? o.peerRandomWalk : o.accessoryRandomWalk) * dt + o.driftVariancePerMetre * ds
        mixture.predict(addedVariance: q)
        processVarianceSinceInitialisation += q
        lastPredictionTime = t
        pathLengthAtLastPrediction = pathLength

        let acquiring = kind == .accessory && !settled
        // The window feeds batch acquisition only; a settled object returns to acquisition
        // only through a reset, which empties it, so tracking updates need not be stored.
        if acquiring && (entry.hasRange || entry.angleKind > 0) { window.append(entry) }

        var rangeAccepted = false
        if acquiring {
            updatesSinceRefinement += 1
            if updatesSinceRefinement >= o.batchRefinementInterval {
                let systematic = 0.5 * o.vioDriftFraction * (pathLength - pathLengthAtInitialisation)
                BatchRefinement.refine(&mixture, window: window, options: o,
                                       addedVariance: processVarianceSinceInitialisation / 3 + systematic * systematic)
                updatesSinceRefinement = 0
            }
            if entry.hasRange {
                // Accepted if some hypothesis with ≥ 1 % of the weight explains it.
                for h in mixture.hypotheses where h.logWeight > log(0.01) {
                    let d = h.meanInWorld - a
                    let residual = entry.rangeMetres - d.length
                    let u = d.normalized
                    let s = h.covariance.quadraticForm(u) + o.rangeStandardDeviation * o.rangeStandardDeviation
                    if residual * residual / s <= o.rangeGate { rangeAccepted = true; break }
                }
            }
        } else {
            if entry.hasRange {
                let sigma = o.rangeStandardDeviation, gate = o.rangeGate
                rangeAccepted = mixture.update(
                    model: { _ in RangeModel(antennaInWorld: a, standardDeviation: sigma, gate: gate) },
                    measured: entry.rangeMetres, outlierProbability: o.outlierProbability, outlierSpan: o.rangeOutlierSpan)
            }
            let q = pose.worldFromDevice
            if entry.angleKind == 1 {
                let sigma = o.azimuthStandardDeviation, gate = o.rangeGate
                _ = mixture.update(
                    model: { _ in AzimuthModel(antennaInWorld: a, worldFromDevice: q, standardDeviation: sigma, gate: gate) },
                    measured: entry.angles.x, outlierProbability: o.outlierProbability, outlierSpan: o.angleOutlierSpan)
            } else if entry.angleKind == 2 {
                let sa = o.azimuthStandardDeviation, se = o.elevationStandardDeviation, gate = o.directionGate
                _ = mixture.update(
                    model: { _ in DirectionModel(antennaInWorld: a, worldFromDevice: q, azimuthStandardDeviation: sa,
                                                 elevationStandardDeviation: se, gate: gate) },
                    measured: entry.angles, outlierProbability: o.outlierProbability, outlierSpan: o.angleOutlierSpan)
            } else if entry.directionMissing {
                mixture.reweight { mean in
                    o.missingDirectionLikelihood(offAxisAngle: DeviceAngles.offAxisAngle(q.inverseRotate(mean - a)))
                }
            }
        }
        if entry.hasRange {
            if rangeAccepted {
                consecutiveRejections = 0
                movement.add(a)
            } else {
                consecutiveRejections += 1
                let limit = hasConverged ? o.rejectionsBeforeResetWhenConverged : o.rejectionsBeforeReset
                if consecutiveRejections >= limit {
                    // The estimate no longer explains the ranges (a first NLOS range, or the
                    // object moved): start again from this range.
                    resetEstimate()
                    hasConverged = false
                    initialise(rangeMetres: entry.rangeMetres, at: t, pose: pose, antennaInWorld: a, context: context)
                    return
                }
            }
        }
        if acquiring {
            // No merging while acquiring: each hypothesis keeps its own prior, so that mirror
            // images stay exact mirrors (a merge on one side only would tilt the evidence).
            mixture.pruneAndMerge(minimumWeight: o.acquisitionPruneWeight, mergeDistanceSquared: 0)
            if previousResolution.horizontal && previousResolution.vertical,
               let cluster = mixture.dominantCluster(mahalanobisSquared: 9), cluster.weight > 0.99 {
                // Settled: 99 % of the weight lies in one cluster of hypotheses (within 3σ of the
                // heaviest); collapse it into one Gaussian and track it with the EKF.
                mixture.reset([cluster.merged])
                settled = true
            }
        } else {
            mixture.pruneAndMerge(minimumWeight: o.pruneWeight, mergeDistanceSquared: o.mergeDistanceSquared)
        }
        let m = mixture.moments
        if !m.meanInWorld.isFinite || !m.covariance.isFinite {
            // Never publish NaN: drop the estimate and start again from the next range.
            resetEstimate()
        }
    }

    /// Tiles the first range's sphere with hypotheses and starts a new window.
    private mutating func initialise(rangeMetres r: Double, at t: Double, pose: DevicePose,
                                     antennaInWorld a: Vector3, context: Context) {
        let options = context.options, pathLength = context.pathLength
        mixture.initialize(rangeMetres: r, antennaInWorld: a, forwardInWorld: pose.forwardInWorld, options: options)
        window.removeAll()   // the first range is in the tiles' priors
        processVarianceSinceInitialisation = 0
        pathLengthAtInitialisation = pathLength
        updatesSinceRefinement = 0
        movement.add(a)
        lastPredictionTime = t
        pathLengthAtLastPrediction = pathLength
        consecutiveRejections = 0
    }
}
