import ARKit
import Dispatch
import Foundation
import NearbyFusion
import NearbyFusionRecording
import Synchronization

/// A nearby object as a session reports it, as Nearby Interaction's `NINearbyObject` (a
/// class there too; immutable here, hence Sendable).
public final class NINearbyObject: NSObject, @unchecked Sendable {
    /// As `NINearbyObject.VerticalDirectionEstimate`.
    public typealias VerticalDirectionEstimate = NearbyFusion.VerticalDirectionEstimate
    /// As `NINearbyObject.RemovalReason`.
    public typealias RemovalReason = NearbyFusion.RemovalReason

    /// The peer's token (peer sessions) or the accessory's (accessory sessions:
    /// ``NINearbyAccessoryConfiguration/accessoryDiscoveryToken``).
    public let discoveryToken: NIDiscoveryToken
    /// The accessory's identifier (accessory sessions), or `nil` for a peer.
    public let accessoryIdentifier: String?
    /// Metres, `nil` when unknown.
    public let distance: Float?
    /// Unit vector in the device frame, `nil` when unknown.
    public let direction: simd_float3?
    /// Radians, `nil` until the horizontal position is resolved (camera assistance).
    public let horizontalAngle: Float?
    /// `.unknown` when not published.
    public let verticalDirectionEstimate: VerticalDirectionEstimate
    /// The object's velocity, m/s, world frame, when the engine publishes it (beyond Nearby
    /// Interaction, see `NearbyObjectEstimate/velocity`).
    public var velocity: simd_float3? { estimate.velocity.map(simd_float3.init) }
    /// What the engine knows of the object's motion (beyond Nearby Interaction; the app's
    /// own hint when it gave one through ``NISession/updateMotionState(_:forObjectWithToken:)``).
    public var motion: NIMotionActivityState? { estimate.motion }
    /// Which way to move the device, and how far, to get the object's `horizontalAngle`
    /// soonest (beyond Nearby Interaction, whose convergence reasons say only what is missing;
    /// see `NearbyObjectEstimate/guidance`); `nil` once the angle is published.
    public var guidance: MotionGuidance? { estimate.guidance }
    /// The full estimate behind this object (the engine's own type, double precision).
    public let estimate: NearbyObjectEstimate

    init(token: NIDiscoveryToken, accessory: String?, estimate: NearbyObjectEstimate) {
        discoveryToken = token
        accessoryIdentifier = accessory
        distance = estimate.distance.map(Float.init)
        direction = estimate.direction.map(simd_float3.init)
        horizontalAngle = estimate.horizontalAngle.map(Float.init)
        verticalDirectionEstimate = estimate.verticalDirectionEstimate ?? .unknown
        self.estimate = estimate
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NINearbyObject else { return false }
        return discoveryToken == other.discoveryToken && accessoryIdentifier == other.accessoryIdentifier && estimate == other.estimate
    }

    public override var hash: Int { estimate.hashValue }

    public override var description: String {
        "NINearbyObject(\(accessoryIdentifier ?? discoveryToken.description), distance: \(distance.map { "\($0) m" } ?? "nil"))"
    }
}

/// Everything a session reports, in order — delivered both to the delegate and, identically,
/// to ``NISession/events``.
public enum NISessionEvent: Sendable, Hashable {
    case didStartRunning
    case didUpdate([NINearbyObject])
    case didRemove([NINearbyObject], reason: NINearbyObject.RemovalReason)
    case wasSuspended
    case suspensionEnded
    case didInvalidate(NIError)
    /// Only with camera assistance; `object` is `nil` for the session level.
    case didUpdateAlgorithmConvergence(NIAlgorithmConvergence, object: NINearbyObject?)
}

/// What a device can do, as Nearby Interaction's `NIDeviceCapability`.
public protocol NIDeviceCapability: Sendable {
    var supportsPreciseDistanceMeasurement: Bool { get }
    var supportsDirectionMeasurement: Bool { get }
    var supportsCameraAssistance: Bool { get }
    /// Apple: UWB beyond the usual distance. Here: `false` (the engine has one range limit).
    var supportsExtendedDistanceMeasurement: Bool { get }
    /// iOS 27: ranging to Bluetooth Channel Sounding accessories.
    var supportsBluetoothChannelSounding: Bool { get }
}

extension DeviceCapabilities: NIDeviceCapability {
    /// No extended distance: no data source measures it.
    public var supportsExtendedDistanceMeasurement: Bool { false }
}

/// The callbacks of Nearby Interaction's `NISessionDelegate`, with Apple's signatures; each
/// has an empty default (Apple's are optional). They arrive on the session's
/// ``NISession/delegateQueue``.
public protocol NISessionDelegate: AnyObject {
    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject])
    func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: NINearbyObject.RemovalReason)
    func sessionDidStartRunning(_ session: NISession)
    func sessionWasSuspended(_ session: NISession)
    func sessionSuspensionEnded(_ session: NISession)
    func session(_ session: NISession, didInvalidateWith error: Error)
    func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?)
    /// Apple: the data a third-party accessory needs to start ranging. Never called here:
    /// the data sources need no accessory handshake.
    func session(_ session: NISession, didGenerateShareableConfigurationData shareableConfigurationData: Data, for object: NINearbyObject)
}

extension NISessionDelegate {
    /// Does nothing unless the delegate implements it (Apple's methods are optional).
    public func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: NINearbyObject.RemovalReason) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func sessionDidStartRunning(_ session: NISession) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func sessionWasSuspended(_ session: NISession) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func sessionSuspensionEnded(_ session: NISession) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func session(_ session: NISession, didInvalidateWith error: Error) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?) {}
    /// Does nothing unless the delegate implements it (Apple's delegate methods are optional).
    public func session(_ session: NISession, didGenerateShareableConfigurationData shareableConfigurationData: Data, for object: NINearbyObject) {}
}

/// A ranging session with one peer or accessory, shaped like `NISession`.
///
/// Lifecycle: `run` ends in exactly one of *running* (`sessionDidStartRunning`),
/// *suspended* (`sessionWasSuspended`) or *invalidated* (`didInvalidateWith`). `pause` stops
/// updates; `run` with the same configuration resumes them, same tokens, same estimate. A
/// suspension (from the data source) ends with `sessionSuspensionEnded`, after which the
/// session waits for `run`: it never resumes by itself. `invalidate` ends the session for
/// good: its token dies (peers can no longer use it) and `run` then only reports
/// `didInvalidateWith(.sessionFailed)`.
///
/// All state lives on one serial queue; the data source's events are processed there as they
/// arrive. Callbacks go to the delegate on ``delegateQueue`` and, in the same order, to
/// ``events``.
public final class NISession: @unchecked Sendable {
    /// At most this many sessions run at once (as the system's limit).
    public static let maximumActiveSessions = 8

    enum State { case idle, running, paused, suspended, invalidated }

    private let source: NearbyDataSource
    private let queue = DispatchQueue(label: "nearby-fusion.session")
    private let ownDelegateQueue = DispatchQueue(label: "nearby-fusion.session.delegate")
    /// The delegate (weak, as Apple's) and the queue its callbacks go to. Apple's delegates
    /// are not `Sendable` (view controllers): the session only calls it on the delegate
    /// queue, as Nearby Interaction does, and holds it behind a lock.
    private struct Delegation: @unchecked Sendable {
        weak var delegate: (any NISessionDelegate)?
        var queue: DispatchQueue?
    }
    private let delegation: Mutex<Delegation>
    private let token: NIDiscoveryToken
    private let continuation: AsyncStream<NISessionEvent>.Continuation
    /// The session's events, identical in content and order to the delegate callbacks;
    /// finishes when the session is invalidated (a later `run` is reported to the delegate
    /// only).
    public let events: AsyncStream<NISessionEvent>

    // Confined to `queue`.
    private var state = State.idle
    private var runConfiguration: NIConfiguration?
    /// The engine with the configured object, fed through the replay's own driver (one
    /// dispatch of events to the engine for recordings, simulations and sessions alike).
    private var driver: ReplayDriver?
    /// The time of the last pose or update, seconds (for the events the source gives none).
    private var lastEventTime = 0.0
    private var objectID: String?
    /// The object's token (the peer's, or the accessory's) and, for an accessory, its identifier.
    private var objectToken: NIDiscoveryToken?
    private var accessoryIdentifier: String?
    private var lastObjectStatus: ConvergenceStatus?
    /// What the app last said about the object's motion (kept across a new configuration).
    private var motionState = MotionActivityState.unknown
    private var sourceStarted = false
    private var sourceSuspended = false
    /// The app's AR session (``setARSession(_:)``), checked by each run with camera assistance.
    private var arSession: ARSession?

    // MARK: Where updates come from

    private static let defaultSource = Mutex<(any NearbyDataSource)?>(nil)

    /// The data source `NISession()` uses — the one line Apple-style code adds: a recording
    /// (`RecordingSource`), the simulator, the app's own feed (`ManualSource`, the default),
    /// or one side of a simulated peer link. Read when each session is created.
    public static var defaultDataSource: any NearbyDataSource {
        get { defaultSource.withLock { source in
            if let source { return source }
            let manual = ManualSource()
            source = manual
            return manual
        } }
        set { defaultSource.withLock { $0 = newValue } }
    }

    /// What the device of ``defaultDataSource`` can do (Apple: the device's).
    public static var deviceCapabilities: any NIDeviceCapability { defaultDataSource.capabilities }

    /// Whether the device ranges at all (Apple deprecated it for the class's `deviceCapabilities`).
    @available(*, deprecated, message: "Use deviceCapabilities.supportsPreciseDistanceMeasurement")
    public static var isSupported: Bool { defaultDataSource.capabilities.supportsPreciseDistanceMeasurement }

    /// A session on ``defaultDataSource``, as Apple's `NISession()`.
    public convenience init() {
        self.init(source: Self.defaultDataSource)
    }

    /// - Parameters:
    ///   - source: where poses and radio updates come from.
    ///   - delegateQueue: the serial queue for callbacks (default: a queue of the session's own).
    public convenience init(source: any NearbyDataSource, delegateQueue: DispatchQueue? = nil) {
        var generator = SystemRandomNumberGenerator()
        self.init(source: source, delegateQueue: delegateQueue, tokenGenerator: &generator)
    }

    /// A session whose discovery token is drawn from `tokenGenerator` (16 bytes) instead of
    /// system entropy: for tests that need the same tokens on every run. Two live sessions
    /// must not share a token (as two devices never do): seed each one differently.
    public init<G: RandomNumberGenerator>(source: any NearbyDataSource, delegateQueue: DispatchQueue? = nil,
                                          tokenGenerator: inout G) {
        self.source = source
        delegation = Mutex(Delegation(delegate: nil, queue: delegateQueue))
        token = NIDiscoveryToken(using: &tokenGenerator)
        (events, continuation) = AsyncStream.makeStream(of: NISessionEvent.self, bufferingPolicy: .unbounded)
        TokenRegistry.shared.issue(token, to: ObjectIdentifier(self))
    }

    deinit {
        TokenRegistry.shared.revoke(token, session: ObjectIdentifier(self))
        continuation.finish()
    }

    /// The engine's settings (beyond Nearby Interaction, which has none to set): read when a
    /// `run` starts an engine — the first run, or a run with another configuration. For
    /// example `FusionOptions.sensors.rangeBiasStandardDeviation` for UWB hardware whose antenna
    /// delay is not calibrated, as Apple's is.
    public var fusionOptions: FusionOptions {
        get { engineOptions.withLock { $0 } }
        set { engineOptions.withLock { $0 = newValue } }
    }
    private let engineOptions = Mutex(FusionOptions())

    /// The delegate (held weakly, as in Nearby Interaction).
    public var delegate: (any NISessionDelegate)? {
        get { delegation.withLock { $0 }.delegate }
        set {
            let replacement = Delegation(delegate: newValue, queue: nil)
            delegation.withLock { $0.delegate = replacement.delegate }
        }
    }

    /// Where delegate callbacks are delivered (serial), as Apple's settable `delegateQueue`.
    /// `nil` (the default) is a queue of the session's own: Linux has no main run loop to
    /// deliver on, as Apple's `nil` (the main queue) would.
    public var delegateQueue: DispatchQueue? {
        get { delegation.withLock { $0.queue } }
        set { delegation.withLock { $0.queue = newValue } }
    }

    /// The configuration last run (a copy), `nil` before the first `run`.
    public var configuration: NIConfiguration? { queue.sync { runConfiguration?.copy() as? NIConfiguration } }

    /// This session's token while it is valid; `nil` once the session is invalidated.
    public var discoveryToken: NIDiscoveryToken? { TokenRegistry.shared.isAlive(token) ? token : nil }

    /// What this session's device can do (from its data source).
    public var deviceCapabilities: any NIDeviceCapability { source.capabilities }

    /// The object's pose in the world (camera assistance, once converged); `nil` otherwise.
    public func worldTransform(for object: NINearbyObject) -> simd_float4x4? { object.estimate.worldTransform.map(simd_float4x4.init) }

    /// What the app knows about the object's motion (iOS 27), for example from the
    /// accessory's own accelerometer: `stationary` or `moving` pins the engine's motion model
    /// until `unknown` (see `FusionEngine/updateMotionState(_:for:)`). The token is the
    /// peer's for a peer session and `nil` (or the accessory object's) for an accessory; a
    /// token of another peer is ignored, as the session has no such object.
    public func updateMotionState(_ state: NIMotionActivityState, forObjectWithToken objectToken: DiscoveryToken?) {
        queue.sync {
            if let objectToken, let peer = runConfiguration as? NINearbyPeerConfiguration, peer.peerDiscoveryToken != objectToken { return }
            motionState = state
            guard var driver, let objectID else { return }
            _ = driver.apply(.motionState(objectID: objectID, timestamp: lastEventTime, state: state))
            self.driver = driver
        }
    }

    /// Waits until every event so far has been processed and delivered (for tests and
    /// command-line tools).
    public func waitUntilIdle() {
        queue.sync {}
        callbackQueue.sync {}
    }

    // MARK: Lifecycle

    /// Runs `configuration` (a copy of it: later changes to it take effect only when it is
    /// run again).
    public func run(_ configuration: NIConfiguration) {
        let copy = configuration.copy() as? NIConfiguration ?? configuration
        queue.sync { runLocked(copy) }
    }

    /// Stops updates until the next `run`; the token and the estimate are kept.
    public func pause() {
        queue.sync {
            guard state == .running || state == .suspended else { return }
            stopSource()
            state = .paused
        }
    }

    /// Ends the session for good: its token stops being valid and peers are told.
    public func invalidate() {
        queue.sync { invalidateLocked(error: nil) }
    }

    /// `run(_:)` on the session's queue. Long on purpose: Nearby Interaction's checks for a
    /// run, in order — an invalidated session, the radio and camera assistance the device
    /// lacks, the peer's or accessory's token, the active-session limit, the AR
    /// configuration — each invalidating with its own `NIError`, then a new engine unless the
    /// same configuration resumes, then running (or suspended, if the source is).
    private func runLocked(_ new: NIConfiguration) {
        if state == .invalidated {
            emit(.didInvalidate(NIError(.sessionFailed, "the session was invalidated; create a new session")))
            return
        }
        let capabilities = source.capabilities
        let ranging = (new as? NINearbyAccessoryConfiguration)?.ranging ?? .uwb
        if ranging == .bluetoothChannelSounding {
            guard capabilities.supportsBluetoothChannelSounding else {
                return invalidateLocked(error: NIError(.unsupportedPlatform, "the device has no Bluetooth Channel Sounding"))
            }
        } else {
            guard capabilities.supportsPreciseDistanceMeasurement else {
                return invalidateLocked(error: NIError(.unsupportedPlatform, "the device has no UWB ranging"))
            }
        }
        if new.isCameraAssistanceEnabled && !capabilities.supportsCameraAssistance {
            return invalidateLocked(error: NIError(.invalidConfiguration, "camera assistance is not supported on this device"))
        }
        let id: String, objectToken: NIDiscoveryToken, accessoryIdentifier: String?
        if let peer = new as? NINearbyPeerConfiguration, let recorded = source.recordedPeers {
            // A recorded peer: its token stands for the recording's object.
            guard let recordedID = recorded[peer.peerDiscoveryToken] else {
                return invalidateLocked(error: NIError(.invalidConfiguration, "the peer's token names no peer of this recording"))
            }
            id = recordedID
            (objectToken, accessoryIdentifier) = (peer.peerDiscoveryToken, nil)
        } else if let peer = new as? NINearbyPeerConfiguration {
            guard peer.peerDiscoveryToken != token else {
                return invalidateLocked(error: NIError(.invalidConfiguration, "a session cannot range with its own token"))
            }
            guard TokenRegistry.shared.isAlive(peer.peerDiscoveryToken) else {
                return invalidateLocked(error: NIError(.invalidConfiguration, "the peer's token is not valid (its session ended)"))
            }
            guard TokenRegistry.shared.claim(peer: peer.peerDiscoveryToken, for: ObjectIdentifier(self)) else {
                return invalidateLocked(error: NIError(.invalidConfiguration, "another session already ranges with this peer"))
            }
            id = peer.peerDiscoveryToken.description
            (objectToken, accessoryIdentifier) = (peer.peerDiscoveryToken, nil)
        } else if let accessory = new as? NINearbyAccessoryConfiguration {
            id = accessory.accessoryIdentifier
            (objectToken, accessoryIdentifier) = (accessory.accessoryDiscoveryToken, accessory.accessoryIdentifier)
        } else {
            return invalidateLocked(error: NIError(.invalidConfiguration, "unknown configuration type"))
        }
        guard TokenRegistry.shared.startRunning(ObjectIdentifier(self), limit: Self.maximumActiveSessions) else {
            return invalidateLocked(error: NIError(.activeSessionsLimitExceeded, "\(Self.maximumActiveSessions) sessions are already running"))
        }
        // Checked each time the source starts, not only when it was attached.
        if let ar = source.arConfiguration, !ar.isValidForNearbyInteraction {
            return invalidateLocked(error: NIError(.invalidARConfiguration,
                                                   "the AR session must be gravity-aligned with collaboration, face tracking, initial world map and relocalisation off"))
        }
        if new.isCameraAssistanceEnabled, let arSession, let problem = Self.cameraAssistanceProblem(arSession) {
            return invalidateLocked(error: NIError(.invalidARConfiguration, problem))
        }
        let same = runConfiguration.map { $0.isEqual(new) } ?? false
        if !same || driver == nil {
            let header = RecordingHeader(deviceName: "session", capabilities: capabilities,
                                         objects: [(id, new is NINearbyPeerConfiguration ? .peer : .accessory)],
                                         rangingByObject: ranging == .uwb ? [:] : [id: ranging])
            var d = ReplayDriver(header: header, options: fusionOptions, cameraAssistance: new.isCameraAssistanceEnabled)
            _ = d.apply(.motionState(objectID: id, timestamp: lastEventTime, state: motionState))
            driver = d
            objectID = id
            self.objectToken = objectToken
            self.accessoryIdentifier = accessoryIdentifier
            lastObjectStatus = nil
        }
        runConfiguration = new
        if sourceSuspended {
            state = .suspended
            emit(.wasSuspended)
            return
        }
        state = .running
        emit(.didStartRunning)
        startSource()
    }

    /// Provides the AR session camera assistance works with, as Nearby Interaction's
    /// `setARSession(_:)`; call it before ``run(_:)``. Here it supplies no poses (they come
    /// from the session's data source, as every update does); what it is checked for is
    /// Apple's: each run with camera assistance requires a world-tracking configuration with
    /// `worldAlignment == .gravity`, collaboration, user face tracking and an initial world
    /// map all off, and a delegate that does not ask for relocalisation — otherwise the
    /// session is invalidated with `invalidARConfiguration`.
    public func setARSession(_ session: ARSession) {
        queue.sync { arSession = session }
    }

    /// Why camera assistance cannot use `session`, or `nil`.
    static func cameraAssistanceProblem(_ session: ARSession) -> String? {
        guard let c = session.configuration as? ARWorldTrackingConfiguration else {
            return "the AR session must run an ARWorldTrackingConfiguration"
        }
        if c.worldAlignment != .gravity { return "the AR session's worldAlignment must be .gravity" }
        if c.isCollaborationEnabled { return "the AR session must have isCollaborationEnabled = false" }
        if c.userFaceTrackingEnabled { return "the AR session must have userFaceTrackingEnabled = false" }
        if c.initialWorldMap != nil { return "the AR session must have no initialWorldMap" }
        if session.delegate?.sessionShouldAttemptRelocalization(session) == true {
            return "the AR session's delegate must return false from sessionShouldAttemptRelocalization(_:)"
        }
        return nil
    }

    private func invalidateLocked(error: NIError?) {
        guard state != .invalidated else { return }
        stopSource()
        state = .invalidated
        TokenRegistry.shared.revoke(token, session: ObjectIdentifier(self))
        if let error { emit(.didInvalidate(error)) }
        continuation.finish()
    }

    private func startSource() {
        guard !sourceStarted else { return }
        sourceStarted = true
        source.start { [weak self] event in self?.receive(event) }
    }

    private func stopSource() {
        guard sourceStarted else { return }
        sourceStarted = false
        source.stop()
        TokenRegistry.shared.stopRunning(ObjectIdentifier(self))
    }

    // MARK: Data

    private func receive(_ event: SourceEvent) {
        queue.sync { process(event) }
    }

    private func process(_ event: SourceEvent) {
        switch event {
        case .suspended:
            sourceSuspended = true
            if state == .running { state = .suspended; emit(.wasSuspended) }
            return
        case .suspensionEnded:
            sourceSuspended = false
            if state == .suspended { state = .paused; emit(.suspensionEnded) }
            return
        default: break
        }
        guard state == .running, var driver, let objectID, let objectToken, let configuration = runConfiguration else { return }
        defer { self.driver = driver }
        let cameraAssistance = configuration.isCameraAssistanceEnabled
        switch event {
        case .pose(let p):
            lastEventTime = p.timestamp
            if case .pose(_, let change?)? = driver.apply(.pose(p)), cameraAssistance {
                emit(.didUpdateAlgorithmConvergence(NIAlgorithmConvergence(change.convergence), object: nil))
            }
        case .uwb(let id, let m):
            guard id == objectID else { return }
            lastEventTime = m.timestamp
            guard case .uwb(_, _, let estimate, _)? = driver.apply(.uwb(objectID: id, m)) else { return }
            let object = NINearbyObject(token: objectToken, accessory: accessoryIdentifier, estimate: estimate)
            emit(.didUpdate([object]))
            if cameraAssistance, let status = estimate.convergence?.status, status != lastObjectStatus {
                lastObjectStatus = status
                emit(.didUpdateAlgorithmConvergence(NIAlgorithmConvergence(status: NIAlgorithmConvergenceStatus(status)), object: object))
            }
        case .removed(let id, let reason):
            guard id == objectID else { return }
            _ = driver.apply(.removed(objectID: id, timestamp: lastEventTime, reason: reason))
            emit(.didRemove([NINearbyObject(token: objectToken, accessory: accessoryIdentifier,
                                            estimate: NearbyObjectEstimate(timestamp: 0, objectID: id))], reason: reason))
        default: break
        }
    }

    /// The queue callbacks go to: the app's ``delegateQueue`` or the session's own.
    private var callbackQueue: DispatchQueue { delegateQueue ?? ownDelegateQueue }

    /// Sends one event to the stream and, on the delegate queue, to the delegate.
    private func emit(_ event: NISessionEvent) {
        continuation.yield(event)
        callbackQueue.async { [weak self] in
            guard let self, let delegate = self.delegate else { return }
            switch event {
            case .didStartRunning: delegate.sessionDidStartRunning(self)
            case .didUpdate(let objects): delegate.session(self, didUpdate: objects)
            case .didRemove(let objects, let reason): delegate.session(self, didRemove: objects, reason: reason)
            case .wasSuspended: delegate.sessionWasSuspended(self)
            case .suspensionEnded: delegate.sessionSuspensionEnded(self)
            case .didInvalidate(let error): delegate.session(self, didInvalidateWith: error)
            case .didUpdateAlgorithmConvergence(let c, let object): delegate.session(self, didUpdateAlgorithmConvergence: c, for: object)
            }
        }
    }
}

/// Nearby Interaction's name for what the app knows of an object's motion (iOS 27).
public typealias NIMotionActivityState = MotionActivityState
