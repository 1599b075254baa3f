import Foundation
import NearbyFusion
import NearbyFusionRecording
import Synchronization

/// What a data source delivers to a session.
public enum SourceEvent: Sendable, Hashable {
    case pose(DevicePose)
    case uwb(objectID: String, UWBMeasurement)
    case removed(objectID: String, reason: RemovalReason)
    /// The system suspended ranging (as when an app goes to the background).
    case suspended
    /// The suspension is over; the session waits for `run` again.
    case suspensionEnded
}

/// Where a session's poses and UWB updates come from: the app's own feed
/// (``ManualSource``), a recording (``RecordingSource``), or the simulator
/// (`SimulatedSource`, `SimulatedPeerLink`). The session code is the same for all.
public protocol NearbyDataSource: AnyObject, Sendable {
    /// What the device can do.
    var capabilities: DeviceCapabilities { get }
    /// The AR/VIO configuration the source runs; checked each time the source starts.
    var arConfiguration: ARConfigurationDescription? { get }
    /// Starts delivering events to `sink`, one at a time, from any thread.
    func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void)
    /// Stops delivering (idempotent).
    func stop()
}

/// The app's own feed: it calls ``send(_:)`` with each VIO pose and UWB update.
public final class ManualSource: NearbyDataSource {
    public let capabilities: DeviceCapabilities
    private let state: Mutex<(sink: (@Sendable (SourceEvent) -> Void)?, ar: ARConfigurationDescription?)>

    public init(capabilities: DeviceCapabilities = .phone, arConfiguration: ARConfigurationDescription? = ARConfigurationDescription()) {
        self.capabilities = capabilities
        state = Mutex((nil, arConfiguration))
    }

    public var arConfiguration: ARConfigurationDescription? { state.withLock { $0.ar } }

    /// Changes the AR configuration (it is checked when the source next starts).
    public func setARConfiguration(_ configuration: ARConfigurationDescription?) { state.withLock { $0.ar = configuration } }

    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) { state.withLock { $0.sink = sink } }
    public func stop() { state.withLock { $0.sink = nil } }

    /// Whether a session is listening.
    public var isStarted: Bool { state.withLock { $0.sink != nil } }

    /// Delivers one event (dropped while no session listens). Returns once the session
    /// has processed it.
    public func send(_ event: SourceEvent) {
        let sink = state.withLock { $0.sink }
        sink?(event)
    }
}

/// Replays a list of events (a recording, or a simulation made in advance), as fast as
/// possible or paced in real time, on a background thread.
public final class RecordingSource: NearbyDataSource {
    public let capabilities: DeviceCapabilities
    public let arConfiguration: ARConfigurationDescription?
    let events: [SourceEvent]
    /// Seconds of recording per second of wall time (`.infinity`: as fast as possible).
    let speed: Double
    /// Waits the given number of seconds between paced events (the source's clock; the
    /// default sleeps the thread, tests inject one that records or skips the wait).
    let sleep: @Sendable (Double) -> Void
    private let running = Mutex<Int>(0)   // generation: a stop or restart ends the previous thread
    private let position = Mutex<Int>(0)

    /// Reads a recording file. Throws its `RecordingError`.
    public convenience init(path: String, speed: Double = .infinity,
                            sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws {
        var reader = try RecordingReader(path: path)
        let header = try reader.readHeader()
        var list: [SourceEvent] = []
        while let e = try reader.next() {
            switch e {
            case .pose(let p): list.append(.pose(p))
            case .uwb(let id, let m): list.append(.uwb(objectID: id, m))
            case .removed(let id, _, let reason): list.append(.removed(objectID: id, reason: reason))
            default: break
            }
        }
        self.init(events: list, capabilities: header.capabilities, arConfiguration: header.arConfiguration ?? ARConfigurationDescription(), speed: speed,
                  sleep: sleep)
    }

    /// - Parameters:
    ///   - events: what the source delivers, in order.
    ///   - capabilities: the device's capabilities.
    ///   - arConfiguration: the AR session's configuration, as a recording's header gives it.
    ///   - speed: seconds of recording per second of wall time (`.infinity`: as fast as
    ///     possible).
    ///   - sleep: how the source waits `(t₁ − t₀)/speed` seconds between paced events.
    public init(events: [SourceEvent], capabilities: DeviceCapabilities, arConfiguration: ARConfigurationDescription?,
                speed: Double = .infinity, sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.events = events
        self.sleep = sleep
        self.capabilities = capabilities
        self.arConfiguration = arConfiguration
        self.speed = speed
    }

    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) {
        let generation = running.withLock { $0 += 1; return $0 }
        let thread = Thread { [self] in
            var lastTime: Double?
            while true {
                guard running.withLock({ $0 }) == generation else { return }
                let index = position.withLock { p -> Int in defer { p += 1 }; return p }
                guard index < events.count else { return }
                let event = events[index]
                if speed.isFinite, let t = Self.time(of: event) {
                    if let last = lastTime, t > last { sleep((t - last) / speed) }
                    lastTime = t
                }
                sink(event)
            }
        }
        thread.start()
    }

    public func stop() { running.withLock { $0 += 1 } }

    /// Whether every event has been delivered.
    public var isFinished: Bool { position.withLock { $0 } >= events.count }

    static func time(of e: SourceEvent) -> Double? {
        switch e {
        case .pose(let p): return p.timestamp
        case .uwb(_, let m): return m.timestamp
        default: return nil
        }
    }
}
