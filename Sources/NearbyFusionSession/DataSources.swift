import Foundation
import NearbyFusion
import NearbyFusionSimulation
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
/// (``SimulatedSource``, ``SimulatedPeerLink``). The session code is the same for all.
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
    private let running = Mutex<Int>(0)   // generation: a stop or restart ends the previous thread
    private let position = Mutex<Int>(0)

    /// Reads a recording file. Throws its ``RecordingError``.
    public convenience init(path: String, speed: Double = .infinity) throws {
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
        self.init(events: list, capabilities: header.capabilities, arConfiguration: header.arConfiguration ?? ARConfigurationDescription(), speed: speed)
    }

    public init(events: [SourceEvent], capabilities: DeviceCapabilities, arConfiguration: ARConfigurationDescription?, speed: Double = .infinity) {
        self.events = events
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
                    if let last = lastTime, t > last { Thread.sleep(forTimeInterval: (t - last) / speed) }
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

/// The simulator running live: a scenario's recording delivered as a ``RecordingSource``.
public final class SimulatedSource: NearbyDataSource {
    let inner: RecordingSource
    public var capabilities: DeviceCapabilities { inner.capabilities }
    public var arConfiguration: ARConfigurationDescription? { inner.arConfiguration }

    public init(scenario: SimulationScenario, speed: Double = .infinity) {
        var list: [SourceEvent] = []
        for e in Simulator.events(for: scenario) {
            switch e {
            case .pose(let p): list.append(.pose(p))
            case .uwb(let id, let m): list.append(.uwb(objectID: id, m))
            case .removed(let id, _, let reason): list.append(.removed(objectID: id, reason: reason))
            default: break
            }
        }
        inner = RecordingSource(events: list, capabilities: scenario.radio.capabilities, arConfiguration: ARConfigurationDescription(), speed: speed)
    }

    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) { inner.start(delivering: sink) }
    public func stop() { inner.stop() }
    public var isFinished: Bool { inner.isFinished }
}

/// Two simulated phones ranging to each other: each has its own path and VIO, the range
/// between them is shared (the interaction is bidirectional) and each gets its own
/// direction to the other. Each phone's ``source`` feeds that phone's session; a peer is
/// reported under the hexadecimal of its discovery token. When one side stops (its session
/// is invalidated), the other is told `removed(peerEnded)`.
public final class SimulatedPeerLink: Sendable {
    public let sourceA: ManualSource
    public let sourceB: ManualSource
    let pathA: DeviceTrajectory
    let pathB: DeviceTrajectory
    private let state: Mutex<(tokenA: DiscoveryToken?, tokenB: DiscoveryToken?, noise: NoiseStream, step: Int, endedA: Bool, endedB: Bool,
                               seenA: Bool, seenB: Bool)>

    public init(pathA: DeviceTrajectory, pathB: DeviceTrajectory, seed: UInt64) {
        sourceA = ManualSource()
        sourceB = ManualSource()
        self.pathA = pathA
        self.pathB = pathB
        state = Mutex((nil, nil, NoiseStream(seed: seed, source: "peer-link"), 0, false, false, false, false))
    }

    /// Tells the link which token each phone's session has (exchanged in-process).
    public func connect(tokenA: DiscoveryToken, tokenB: DiscoveryToken) {
        state.withLock { $0.tokenA = tokenA; $0.tokenB = tokenB }
    }

    /// Advances both phones by `seconds` (VIO at 60 Hz, UWB at 10 Hz), delivering to each
    /// source that a session listens on.
    public func advance(seconds: Double) {
        let steps = Int((seconds * 60).rounded())
        for _ in 0..<steps {
            let (k, tokenA, tokenB, uwb, noise) = state.withLock { s -> (Int, DiscoveryToken?, DiscoveryToken?, Bool, (Double, Double, Double, Double, Double)) in
                s.step += 1
                let n = (s.noise.gaussian(standardDeviation: 0.06), s.noise.gaussian(standardDeviation: Angle.radians(degrees: 3)),
                         s.noise.gaussian(standardDeviation: Angle.radians(degrees: 5)), s.noise.gaussian(standardDeviation: Angle.radians(degrees: 3)),
                         s.noise.gaussian(standardDeviation: Angle.radians(degrees: 5)))
                return (s.step, s.tokenA, s.tokenB, s.step % 6 == 0, n)
            }
            let t = Double(k) / 60
            let a = pathA.pose(at: t), b = pathB.pose(at: t)
            sourceA.send(.pose(DevicePose(timestamp: t, positionInWorld: a.positionInWorld, worldFromDevice: a.worldFromDevice)))
            sourceB.send(.pose(DevicePose(timestamp: t, positionInWorld: b.positionInWorld, worldFromDevice: b.worldFromDevice)))
            guard uwb, let tokenA, let tokenB else { continue }
            let range = (b.positionInWorld - a.positionInWorld).length + noise.0
            let aAlive = sourceA.isStarted, bAlive = sourceB.isStarted
            func direction(from p: (positionInWorld: Vector3, worldFromDevice: Quaternion), to q: Vector3, _ az: Double, _ el: Double) -> Vector3? {
                let v = p.worldFromDevice.inverseRotate(q - p.positionInWorld)
                guard DeviceAngles.offAxisAngle(v) <= Angle.radians(degrees: 55) else { return nil }
                let angles = DeviceAngles.azimuthElevation(v)
                return DeviceAngles.direction(azimuth: angles.x + az, elevation: angles.y + el)
            }
            if aAlive && bAlive {
                sourceA.send(.uwb(objectID: tokenB.description, UWBMeasurement(timestamp: t + 0.004, distance: range,
                                                                                 directionInDevice: direction(from: a, to: b.positionInWorld, noise.1, noise.2))))
                sourceB.send(.uwb(objectID: tokenA.description, UWBMeasurement(timestamp: t + 0.004, distance: range,
                                                                                 directionInDevice: direction(from: b, to: a.positionInWorld, noise.3, noise.4))))
            }
            // A side that was running and stopped ends the interaction for the other, once.
            let (tellA, tellB) = state.withLock { s -> (Bool, Bool) in
                if aAlive { s.seenA = true }
                if bAlive { s.seenB = true }
                var ta = false, tb = false
                if s.seenB && !bAlive && aAlive && !s.endedB { s.endedB = true; ta = true }
                if s.seenA && !aAlive && bAlive && !s.endedA { s.endedA = true; tb = true }
                return (ta, tb)
            }
            if tellA { sourceA.send(.removed(objectID: tokenB.description, reason: .peerEnded)) }
            if tellB { sourceB.send(.removed(objectID: tokenA.description, reason: .peerEnded)) }
        }
    }
}
