import Foundation

/// The fusion core: device poses from VIO and UWB updates in, `NINearbyObject`-like
/// estimates and convergence coaching out.
///
/// A value type with no clocks, files, loggers or globals: the caller feeds time-ordered
/// poses (``ingest(_:)-(DevicePose)``) and UWB updates (``ingest(_:for:)``) and gets one
/// ``NearbyObjectEstimate`` per UWB update. Each object is a `PositionMixture` (a bank
/// of EKFs on its world position) plus the bookkeeping for coaching; see
/// `ConvergenceAnalysis` for how reasons are derived.
///
/// Per update (steady state, once the bank has collapsed into one tracked Gaussian) the work
/// is fixed-size 3×3 maths — the EKF steps, the convergence analysis with its closed-form
/// eigen-decomposition when a cheap bound does not settle it — and nothing is allocated on
/// the heap (see the benchmarks and `bench`).
public struct FusionEngine: Sendable {
    /// The options the engine was made with.
    public var options: FusionOptions { optionsBox.options }
    let optionsBox: OptionsBox
    /// What the device can measure: distance, direction, elevation, camera assistance, Channel Sounding.
    public let capabilities: DeviceCapabilities
    /// Camera assistance requested and supported.
    public let cameraAssistanceEnabled: Bool

    private var objects: [ObjectTracker] = []
    private var indexByID: [String: Int] = [:]
    private var latestPose: DevicePose?
    private var previousPose: DevicePose?
    /// Device path length while VIO tracked normally, metres: the sum of the chords between
    /// poses at least ``pathChordMetres`` apart (``pathAnchor`` the last one counted), so that
    /// the VIO's frame-to-frame jitter does not count as travel. Summing every 60 Hz step
    /// instead, the simulator's 2 mm of white noise per pose made a phone held still for 6 s
    /// travel 1.8 m (0.7 m of true hand tremor), `coached-sweep` 6.8 m for 6.0 m and
    /// `long-session` 327 m for 269 m; the chords give 0.0, 5.6 and 245 m. Drift grows with
    /// the distance the device really travels: the per-metre allowances
    /// (``FusionOptions/Motion/driftVariancePerMetre``, ``FusionOptions/Acquisition/vioDriftFraction``) read this.
    private var pathLength = 0.0
    private var pathAnchor: Vector3?
    /// How far the device has travelled while VIO tracked normally, metres (the chords of at
    /// least ``pathChordMetres``: frame-to-frame jitter does not count).
    public var pathLengthMetres: Double { pathLength }
    /// Shortest chord that counts toward ``pathLengthMetres``, metres: several times the VIO's
    /// jitter per frame, short against a hand's sweep.
    public static let pathChordMetres = 0.02
    /// The session-level convergence (lighting, VIO tracking), as last changed by a pose.
    public private(set) var sessionConvergence = AlgorithmConvergence(status: .unknown)

    /// An engine for a device with `capabilities`; camera assistance as Nearby Interaction runs it
    /// when `cameraAssistanceEnabled` and the device supports it; `options` for every object.
    public init(capabilities: DeviceCapabilities = .phone, cameraAssistanceEnabled: Bool = true,
                options: FusionOptions = FusionOptions()) {
        self.optionsBox = OptionsBox(options)
        self.capabilities = capabilities
        self.cameraAssistanceEnabled = cameraAssistanceEnabled && capabilities.supportsCameraAssistance
    }

    // MARK: Objects

    /// Registers an object (or returns the handle of one already registered), ranged by
    /// `ranging` (UWB, or Bluetooth Channel Sounding: distance only, noisier; see
    /// ``FusionOptions/forRanging(_:)``).
    @discardableResult
    public mutating func register(objectID: String, kind: ObjectKind = .accessory, ranging: RangingTechnology = .uwb) -> ObjectHandle {
        if let i = indexByID[objectID] {
            objects[i].removed = false
            return ObjectHandle(index: i)
        }
        objects.append(ObjectTracker(objectID: objectID, kind: kind, ranging: ranging, options: options))
        indexByID[objectID] = objects.count - 1
        return ObjectHandle(index: objects.count - 1)
    }

    /// Registers an object whose position is already known (for example saved from an
    /// earlier session, as an ARKit anchor would be): its estimate starts as
    /// `N(positionInWorld, covariance)` and is tracked by the EKF at once. Convergence still
    /// needs movement, as for any object.
    @discardableResult
    public mutating func register(objectID: String, kind: ObjectKind = .accessory, ranging: RangingTechnology = .uwb,
                                  knownPositionInWorld position: Vector3, covariance: Matrix3) -> ObjectHandle {
        let handle = register(objectID: objectID, kind: kind, ranging: ranging)
        objects[handle.index].resetEstimate()
        objects[handle.index].startTracking(meanInWorld: position, covariance: covariance.symmetrized,
                                            options: objects[handle.index].optionsBox.options)
        return handle
    }

    /// The handle of a registered object.
    public func handle(for objectID: String) -> ObjectHandle? { indexByID[objectID].map(ObjectHandle.init) }

    /// Ends tracking of an object (`removed` event); a later update starts afresh.
    public mutating func remove(objectID: String) {
        guard let i = indexByID[objectID] else { return }
        objects[i].remove()
    }

    /// What the app knows about an object's motion (as iOS 27's
    /// `NISession.updateMotionState(_:forObjectWithToken:)`): `stationary` or `moving` pins
    /// the motion model until the app says `unknown`. A moving object that has a direction
    /// is tracked from its next range and direction instead of being located as a static one;
    /// one that has none (a Channel Sounding tag) is not fused while it moves, and is acquired
    /// afresh once it stops, from where it was (``FusionOptions/Carry/speed``).
    public mutating func updateMotionState(_ state: MotionActivityState, for handle: ObjectHandle) {
        objects[handle.index].motionHint = state
    }

    /// The object's current position estimate (mixture mean and covariance, world frame,
    /// metres and m²), or `nil` before the first range. Allocation-free. While an object is
    /// acquired and its ranges leave it free to turn about the device — an object that may move
    /// (a peer), or a still one ranged from within a tenth of its distance — each hypothesis is
    /// taken on the sphere of its distance about the device, not on its tangent plane
    /// (<doc:Derivations#An-estimate-reported-on-its-sphere>).
    public func moments(_ handle: ObjectHandle) -> MixtureMoments? {
        let o = objects[handle.index]
        return o.mixture.isEmpty ? nil : o.reportedMoments
    }

    /// What an object's estimate is doing before its next update.
    public enum EstimatePhase: Sendable, Hashable {
        /// No estimate yet (before the first range, after a removal or a reset).
        case none
        /// Being located: every hypothesis of the bank refined from the window at each update (its batch kept between updates).
        case acquiring
        /// One Gaussian, tracked by the motion models.
        case tracking
    }

    /// The phase of the object's estimate, read in place (no copy, no allocation).
    public func phase(of handle: ObjectHandle) -> EstimatePhase {
        switch objects[handle.index].phase {
        case .idle: return .none
        case .acquiring: return .acquiring
        case .tracking: return .tracking
        }
    }

    /// A snapshot of an object's estimator state.
    public func snapshot(_ handle: ObjectHandle) -> ObjectStateSnapshot {
        let o = objects[handle.index]
        return ObjectStateSnapshot(objectID: o.objectID, moments: o.mixture.isEmpty ? nil : o.reportedMoments,
                                   hypothesisCount: o.mixture.count, hypotheses: Array(o.mixture.hypotheses),
                                   assessment: o.coaching.lastAssessment, kinematics: o.phase == .tracking ? o.motion.combined : nil,
                                   movingProbability: o.phase == .tracking ? o.motion.movingProbability : nil,
                                   rangeVarianceScale: o.rangeVarianceScale, windowPasses: o.windowPasses,
                                   windowEntriesLinearised: o.windowEntriesLinearised,
                                   distanceFilter: o.ranging == .bluetoothChannelSounding ? o.distanceSmoother : nil)
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
        if pose.tracking != .normal {
            pathAnchor = nil
        } else if let anchor = pathAnchor {
            let chord = (pose.positionInWorld - anchor).length
            if chord >= Self.pathChordMetres {
                pathLength += chord
                pathAnchor = pose.positionInWorld
            }
        } else {
            pathAnchor = pose.positionInWorld
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
        if let lux = pose.ambientIntensity, lux < optionsBox.options.coaching.minimumAmbientIntensity { return true }
        return false
    }

    /// The device pose at `t`: the latest pose with its position extrapolated at the
    /// velocity of the last two poses, `a(t) = a₁ + (a₁ − a₀)(t − t₁)/(t₁ − t₀)`, for at
    /// most 0.1 s (UWB and VIO clocks tick at different rates).
    private static func pose(at t: Double, latest: DevicePose?, previous: DevicePose?) -> DevicePose? {
        guard var p = latest else { return nil }
        if let q = previous, p.timestamp > q.timestamp {
            let dt = min(max(t - p.timestamp, 0), 0.1)
            let v = (p.positionInWorld - q.positionInWorld) / (p.timestamp - q.timestamp)
            if v.isFinite { p.positionInWorld += dt * v }
        }
        return p
    }

    // MARK: UWB updates

    /// Takes one UWB update for a registered object and returns what is published.
    public mutating func ingest(_ measurement: UWBMeasurement, for handle: ObjectHandle) -> NearbyObjectEstimate {
        // (A static function of the two poses: the method it was, on the engine's value, copied
        // the whole engine on every update.)
        let devicePose = Self.pose(at: measurement.timestamp, latest: latestPose, previous: previousPose)
        let limited = if let devicePose { lightingLimited(devicePose) } else { false }
        let context = ObjectTracker.Context(
            capabilities: capabilities, cameraAssistanceEnabled: cameraAssistanceEnabled,
            pathLength: pathLength, devicePose: devicePose, lightingLimited: limited)
        // In place on the array element: no copy of the tracker's buffers.
        return objects[handle.index].ingest(measurement, context: context)
    }

    /// Registers the object if needed and ingests the update.
    public mutating func ingest(_ measurement: UWBMeasurement, forObject objectID: String) -> NearbyObjectEstimate {
        let h = register(objectID: objectID)
        return ingest(measurement, for: h)
    }

}
