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
    /// The peers this source replays, by the discovery token that stands for each (the
    /// recording's object identifier as the value), or `nil` for a source whose peers are
    /// live sessions with tokens of their own. A session that runs with a peer token asks the
    /// source: a token it does not list names no peer of this recording.
    var recordedPeers: [NIDiscoveryToken: String]? { get }
}

extension NearbyDataSource {
    /// Live peers only: `nil`.
    public var recordedPeers: [NIDiscoveryToken: String]? { nil }
}

/// The app's own feed: it calls ``send(_:)`` with each VIO pose and UWB update.
public final class ManualSource: NearbyDataSource {
    /// What the device can do.
    public let capabilities: DeviceCapabilities
    private let state: Mutex<(sink: (@Sendable (SourceEvent) -> Void)?, ar: ARConfigurationDescription?)>

    /// A feed for a device with `capabilities` whose AR session runs `arConfiguration`.
    public init(capabilities: DeviceCapabilities = .phone, arConfiguration: ARConfigurationDescription? = ARConfigurationDescription()) {
        self.capabilities = capabilities
        state = Mutex((nil, arConfiguration))
    }

    /// The AR configuration, checked when the source starts.
    public var arConfiguration: ARConfigurationDescription? { state.withLock { $0.ar } }

    /// Changes the AR configuration (it is checked when the source next starts).
    public func setARConfiguration(_ configuration: ARConfigurationDescription?) { state.withLock { $0.ar = configuration } }

    /// Lets ``send(_:)`` deliver to `sink`.
    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) { state.withLock { $0.sink = sink } }
    /// Stops delivering: events sent now are dropped.
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
    /// What the recorded device could do (its header).
    public let capabilities: DeviceCapabilities
    /// The recorded AR configuration.
    public let arConfiguration: ARConfigurationDescription?
    let events: [SourceEvent]
    /// Seconds of recording per second of wall time (`.infinity`: as fast as possible).
    let speed: Double
    /// Waits the given number of seconds between paced events (the source's clock; the
    /// default sleeps the thread, tests inject one that records or skips the wait).
    let sleep: @Sendable (Double) -> Void
    private let running = Mutex<Int>(0)   // generation: a stop or restart ends the previous thread
    private let position = Mutex<Int>(0)

    /// The discovery tokens of the recording's peers, in the header's order: as if each had
    /// arrived over the app's own channel, for `NINearbyPeerConfiguration(peerToken:)`. The
    /// same recording always gives the same tokens (each is derived from the recording's
    /// content and the peer's identifier), and they survive `NSKeyedArchiver`. Empty for a
    /// source made from events without a header.
    public let recordedPeerTokens: [NIDiscoveryToken]
    /// Each recorded peer's identifier by its token (see ``recordedPeerTokens``).
    public let recordedPeers: [NIDiscoveryToken: String]?

    /// Reads a recording file. Throws its `RecordingError`.
    public convenience init(path: String, speed: Double = .infinity,
                            sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws {
        try self.init(recording: RecordingReader.readAll(path: path), speed: speed, sleep: sleep)
    }

    /// Replays a recording's events (its header first, as `RecordingReader` reads them or
    /// `RecordingWriter` writes them): poses, radio updates and removals are delivered;
    /// `truth` and `motionState` lines are the recorder's, not the source's.
    public convenience init(recording: [RecordingEvent], speed: Double = .infinity,
                            sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) throws {
        guard case .header(let header)? = recording.first else {
            throw RecordingError(file: "<recording>", line: 1, message: "the first event must be the header")
        }
        var list: [SourceEvent] = []
        // FNV-1a over every line as the format writes it: the recording's fingerprint.
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for e in recording {
            for byte in JSONLines.line(e, header: header).utf8 { digest = (digest ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            switch e {
            case .pose(let p): list.append(.pose(p))
            case .uwb(let id, let m): list.append(.uwb(objectID: id, m))
            case .removed(let id, _, let reason): list.append(.removed(objectID: id, reason: reason))
            default: break
            }
        }
        let peers = header.objects.filter { $0.kind == .peer }.map(\.id)
        let fingerprint = String(digest, radix: 16)
        let tokens = peers.map { NINearbyAccessoryConfiguration.token(for: "recorded peer \(fingerprint) \($0)") }
        self.init(events: list, capabilities: header.capabilities, arConfiguration: header.arConfiguration ?? ARConfigurationDescription(),
                  speed: speed, sleep: sleep, recordedPeers: Array(zip(tokens, peers)))
    }

    /// - Parameters:
    ///   - events: what the source delivers, in order.
    ///   - capabilities: the device's capabilities.
    ///   - arConfiguration: the AR session's configuration, as a recording's header gives it.
    ///   - speed: seconds of recording per second of wall time (`.infinity`: as fast as
    ///     possible).
    ///   - sleep: how the source waits `(t₁ − t₀)/speed` seconds between paced events.
    public convenience init(events: [SourceEvent], capabilities: DeviceCapabilities, arConfiguration: ARConfigurationDescription?,
                            speed: Double = .infinity, sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.init(events: events, capabilities: capabilities, arConfiguration: arConfiguration, speed: speed, sleep: sleep, recordedPeers: [])
    }

    private init(events: [SourceEvent], capabilities: DeviceCapabilities, arConfiguration: ARConfigurationDescription?,
                 speed: Double, sleep: @escaping @Sendable (Double) -> Void, recordedPeers: [(NIDiscoveryToken, String)]) {
        recordedPeerTokens = recordedPeers.map(\.0)
        self.recordedPeers = Dictionary(recordedPeers, uniquingKeysWith: { first, _ in first })
        self.events = events
        self.sleep = sleep
        self.capabilities = capabilities
        self.arConfiguration = arConfiguration
        self.speed = speed
    }

    /// Delivers the events from where it stopped, on a thread of its own.
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

    /// Stops delivering; ``start(delivering:)`` resumes.
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
