import Dispatch
import Foundation
import NearbyFusion
import NearbyFusionRecording
import Synchronization

/// A nearby object as a session reports it (as `NINearbyObject`).
public struct NINearbyObject: Sendable, Hashable {
    /// The peer's token (peer sessions), or `nil` for an accessory.
    public var discoveryToken: DiscoveryToken?
    /// The accessory's identifier (accessory sessions), or `nil` for a peer.
    public var accessoryIdentifier: String?
    /// Metres, `nil` when unknown.
    public var distance: Float?
    /// Unit vector in the device frame, `nil` when unknown.
    public var direction: Vector3?
    /// Radians, `nil` until the horizontal position is resolved (camera assistance).
    public var horizontalAngle: Float?
    /// `.unknown` when not published.
    public var verticalDirectionEstimate: VerticalDirectionEstimate
    /// The object's velocity, m/s, world frame, when the engine publishes it (beyond Nearby
    /// Interaction, see ``NearbyObjectEstimate/velocity``).
    public var velocity: Vector3? { estimate.velocity }
    /// What the engine knows of the object's motion (beyond Nearby Interaction; the app's
    /// own hint when it gave one through ``NISession/updateMotionState(_:forObjectWithToken:)``).
    public var motion: NIMotionActivityState? { estimate.motion }
    /// The full estimate behind this object (for ``NISession/worldTransform(for:)``).
    var estimate: NearbyObjectEstimate

    init(token: DiscoveryToken?, accessory: String?, estimate: NearbyObjectEstimate) {
        discoveryToken = token
        accessoryIdentifier = accessory
        distance = estimate.distance.map(Float.init)
        direction = estimate.direction
        horizontalAngle = estimate.horizontalAngle.map(Float.init)
        verticalDirectionEstimate = estimate.verticalDirectionEstimate ?? .unknown
        self.estimate = estimate
    }
}

/// Everything a session reports, in order — delivered both to the delegate and, identically,
/// to ``NISession/events``.
public enum NISessionEvent: Sendable, Hashable {
    case didStartRunning
    case didUpdate([NINearbyObject])
    case didRemove([NINearbyObject], reason: RemovalReason)
    case wasSuspended
    case suspensionEnded
    case didInvalidate(NIError)
    /// Only with camera assistance; `object` is `nil` for the session level.
    case didUpdateAlgorithmConvergence(AlgorithmConvergence, object: NINearbyObject?)
}

/// The callbacks of Nearby Interaction's `NISessionDelegate`; each has an empty default.
/// They arrive on the session's ``NISession/delegateQueue``.
public protocol NISessionDelegate: AnyObject, Sendable {
    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject])
    func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: RemovalReason)
    func sessionDidStartRunning(_ session: NISession)
    func sessionWasSuspended(_ session: NISession)
    func sessionSuspensionEnded(_ session: NISession)
    func session(_ session: NISession, didInvalidateWith error: NIError)
    func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: AlgorithmConvergence, for object: NINearbyObject?)
}

extension NISessionDelegate {
    public func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) {}
    public func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: RemovalReason) {}
    public func sessionDidStartRunning(_ session: NISession) {}
    public func sessionWasSuspended(_ session: NISession) {}
    public func sessionSuspensionEnded(_ session: NISession) {}
    public func session(_ session: NISession, didInvalidateWith error: NIError) {}
    public func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: AlgorithmConvergence, for object: NINearbyObject?) {}
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
    /// Where delegate callbacks are delivered (serial).
    public let delegateQueue: DispatchQueue
    private struct WeakDelegate { weak var value: (any NISessionDelegate)? }
    private let delegateBox = Mutex(WeakDelegate())
    private let token: DiscoveryToken
    private let continuation: AsyncStream<NISessionEvent>.Continuation
    /// The session's events, identical in content and order to the delegate callbacks;
    /// finishes when the session is invalidated (a later `run` is reported to the delegate
    /// only).
    public let events: AsyncStream<NISessionEvent>

    // Confined to `queue`.
    private var state = State.idle
    private var configuration: (any NIConfiguration)?
    private var engine: FusionEngine?
    private var handle: ObjectHandle?
    private var objectID: String?
    private var lastObjectStatus: ConvergenceStatus?
    /// What the app last said about the object's motion (kept across a new configuration).
    private var motionState = MotionActivityState.unknown
    private var sourceStarted = false
    private var sourceSuspended = false

    /// - Parameters:
    ///   - source: where poses and UWB updates come from (default: the app's own feed).
    ///   - delegateQueue: the serial queue for callbacks (default: a queue of its own).
    public init(source: NearbyDataSource = ManualSource(), delegateQueue: DispatchQueue? = nil) {
        self.source = source
        self.delegateQueue = delegateQueue ?? DispatchQueue(label: "nearby-fusion.session.delegate")
        token = DiscoveryToken.random()
        (events, continuation) = AsyncStream.makeStream(of: NISessionEvent.self, bufferingPolicy: .unbounded)
        TokenRegistry.shared.issue(token, to: ObjectIdentifier(self))
    }

    deinit {
        TokenRegistry.shared.revoke(token, session: ObjectIdentifier(self))
        continuation.finish()
    }

    /// The delegate (held weakly, as in Nearby Interaction).
    public var delegate: (any NISessionDelegate)? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }

    /// This session's token while it is valid; `nil` once the session is invalidated.
    public var discoveryToken: DiscoveryToken? { TokenRegistry.shared.isAlive(token) ? token : nil }

    /// What the device can do (from its data source).
    public var deviceCapabilities: DeviceCapabilities { source.capabilities }

    /// The object's pose in the world (camera assistance, once converged); `nil` otherwise.
    public func worldTransform(for object: NINearbyObject) -> WorldTransform? { object.estimate.worldTransform }

    /// What the app knows about the object's motion (iOS 27), for example from the
    /// accessory's own accelerometer: `stationary` or `moving` pins the engine's motion model
    /// until `unknown` (see ``FusionEngine/updateMotionState(_:for:)``). The token is the
    /// peer's for a peer session and `nil` (or the accessory object's) for an accessory; a
    /// token of another peer is ignored, as the session has no such object.
    public func updateMotionState(_ state: NIMotionActivityState, forObjectWithToken objectToken: DiscoveryToken?) {
        queue.sync {
            if let objectToken, let peer = configuration as? NINearbyPeerConfiguration, peer.peerDiscoveryToken != objectToken { return }
            motionState = state
            guard var engine, let handle else { return }
            engine.updateMotionState(state, for: handle)
            self.engine = engine
        }
    }

    /// Waits until every event so far has been processed and delivered (for tests and
    /// command-line tools).
    public func waitUntilIdle() {
        queue.sync {}
        delegateQueue.sync {}
    }

    // MARK: Lifecycle

    public func run(_ configuration: any NIConfiguration) {
        queue.sync { runLocked(configuration) }
    }

    public func pause() {
        queue.sync {
            guard state == .running || state == .suspended else { return }
            stopSource()
            state = .paused
        }
    }

    public func invalidate() {
        queue.sync { invalidateLocked(error: nil) }
    }

    private func runLocked(_ new: any NIConfiguration) {
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
        let id: String
        if let peer = new as? NINearbyPeerConfiguration {
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
        } else if let accessory = new as? NINearbyAccessoryConfiguration {
            id = accessory.accessoryIdentifier
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
        let same = configuration.map { Self.sameConfiguration($0, new) } ?? false
        if !same || engine == nil {
            var e = FusionEngine(capabilities: capabilities, cameraAssistanceEnabled: new.isCameraAssistanceEnabled)
            handle = e.register(objectID: id, kind: new is NINearbyPeerConfiguration ? .peer : .accessory, ranging: ranging)
            if let handle { e.updateMotionState(motionState, for: handle) }
            engine = e
            objectID = id
            lastObjectStatus = nil
        }
        configuration = new
        if sourceSuspended {
            state = .suspended
            emit(.wasSuspended)
            return
        }
        state = .running
        emit(.didStartRunning)
        startSource()
    }

    static func sameConfiguration(_ a: any NIConfiguration, _ b: any NIConfiguration) -> Bool {
        if let x = a as? NINearbyPeerConfiguration, let y = b as? NINearbyPeerConfiguration { return x == y }
        if let x = a as? NINearbyAccessoryConfiguration, let y = b as? NINearbyAccessoryConfiguration { return x == y }
        return false
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
        guard state == .running, var engine, let handle, let objectID, let configuration else { return }
        defer { self.engine = engine }
        let cameraAssistance = configuration.isCameraAssistanceEnabled
        switch event {
        case .pose(let p):
            if let change = engine.ingest(p), cameraAssistance {
                emit(.didUpdateAlgorithmConvergence(change.convergence, object: nil))
            }
        case .uwb(let id, let m):
            guard id == objectID else { return }
            let estimate = engine.ingest(m, for: handle)
            let object = nearbyObject(estimate)
            emit(.didUpdate([object]))
            if cameraAssistance, let status = estimate.convergence?.status, status != lastObjectStatus {
                lastObjectStatus = status
                emit(.didUpdateAlgorithmConvergence(AlgorithmConvergence(status: status), object: object))
            }
        case .removed(let id, let reason):
            guard id == objectID else { return }
            engine.remove(objectID: id)
            emit(.didRemove([nearbyObject(NearbyObjectEstimate(timestamp: 0, objectID: id))], reason: reason))
        default: break
        }
    }

    private func nearbyObject(_ e: NearbyObjectEstimate) -> NINearbyObject {
        if let peer = configuration as? NINearbyPeerConfiguration {
            return NINearbyObject(token: peer.peerDiscoveryToken, accessory: nil, estimate: e)
        }
        return NINearbyObject(token: nil, accessory: objectID, estimate: e)
    }

    /// Sends one event to the stream and, on the delegate queue, to the delegate.
    private func emit(_ event: NISessionEvent) {
        continuation.yield(event)
        delegateQueue.async { [weak self] in
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
