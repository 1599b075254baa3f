import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Synchronization
import NearbyFusionSession

/// The simulator running live: a scenario's recording delivered as a `RecordingSource`.
public final class SimulatedSource: NearbyDataSource {
    let inner: RecordingSource
    /// The scenario's device capabilities.
    public var capabilities: DeviceCapabilities { inner.capabilities }
    /// A valid AR configuration.
    public var arConfiguration: ARConfigurationDescription? { inner.arConfiguration }

    /// The events of `scenario`, simulated now, delivered at `speed` (seconds of scenario per
    /// second of wall time; `.infinity`: as fast as possible).
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

    /// Delivers the events on a thread of its own.
    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) { inner.start(delivering: sink) }
    /// Stops delivering.
    public func stop() { inner.stop() }
    /// Whether every event has been delivered.
    public var isFinished: Bool { inner.isFinished }
}

/// Two simulated phones ranging to each other: each has its own path and VIO, the range
/// between them is shared (the interaction is bidirectional) and each gets its own
/// direction to the other. Each phone's `source` feeds that phone's session; a peer is
/// reported under the hexadecimal of its discovery token. When one side stops (its session
/// is invalidated), the other is told `removed(peerEnded)`.
public final class SimulatedPeerLink: Sendable {
    /// Phone A's data source.
    public let sourceA: ManualSource
    /// Phone B's data source.
    public let sourceB: ManualSource
    let pathA: DeviceTrajectory
    let pathB: DeviceTrajectory
    /// Both phones' radio (noise, field of view, rate) and VIO rate: the simulator's models,
    /// so a link and a scenario with the same models sense alike.
    let radio: RadioModel
    let vio: VIOModel
    private let state: Mutex<(tokenA: DiscoveryToken?, tokenB: DiscoveryToken?, noise: NoiseStream, step: Int, endedA: Bool, endedB: Bool,
                               seenA: Bool, seenB: Bool)>

    /// Two phones walking `pathA` and `pathB`, sensed with `radio` and `vio`, noise seeded by `seed`.
    public init(pathA: DeviceTrajectory, pathB: DeviceTrajectory, seed: UInt64, radio: RadioModel = RadioModel(),
                vio: VIOModel = VIOModel()) {
        sourceA = ManualSource()
        sourceB = ManualSource()
        self.pathA = pathA
        self.pathB = pathB
        self.radio = radio
        self.vio = vio
        state = Mutex((nil, nil, NoiseStream(seed: seed, source: "peer-link"), 0, false, false, false, false))
    }

    /// Tells the link which token each phone's session has (exchanged in-process).
    public func connect(tokenA: DiscoveryToken, tokenB: DiscoveryToken) {
        state.withLock { $0.tokenA = tokenA; $0.tokenB = tokenB }
    }

    /// Advances both phones by `seconds` (VIO at the VIO model's rate, UWB at the radio's,
    /// on VIO frames), delivering to each source that a session listens on.
    public func advance(seconds: Double) {
        let steps = Int((seconds * vio.rateHz).rounded())
        let framesPerRange = max(Int((vio.rateHz / radio.rateHz).rounded()), 1)
        let radio = self.radio
        for _ in 0..<steps {
            let (k, tokenA, tokenB, uwb, noise) = state.withLock { s -> (Int, DiscoveryToken?, DiscoveryToken?, Bool, (Double, Double, Double, Double, Double)) in
                s.step += 1
                let n = (s.noise.gaussian(standardDeviation: radio.rangeStandardDeviation),
                         s.noise.gaussian(standardDeviation: radio.azimuthStandardDeviation),
                         s.noise.gaussian(standardDeviation: radio.elevationStandardDeviation),
                         s.noise.gaussian(standardDeviation: radio.azimuthStandardDeviation),
                         s.noise.gaussian(standardDeviation: radio.elevationStandardDeviation))
                return (s.step, s.tokenA, s.tokenB, s.step % framesPerRange == 0, n)
            }
            let t = Double(k) / vio.rateHz
            let a = pathA.pose(at: t), b = pathB.pose(at: t)
            sourceA.send(.pose(DevicePose(timestamp: t, positionInWorld: a.positionInWorld, worldFromDevice: a.worldFromDevice)))
            sourceB.send(.pose(DevicePose(timestamp: t, positionInWorld: b.positionInWorld, worldFromDevice: b.worldFromDevice)))
            guard uwb, let tokenA, let tokenB else { continue }
            let range = (b.positionInWorld - a.positionInWorld).length + noise.0
            let aAlive = sourceA.isStarted, bAlive = sourceB.isStarted
            func direction(from p: (positionInWorld: Vector3, worldFromDevice: Quaternion), to q: Vector3, _ az: Double, _ el: Double) -> Vector3? {
                let v = p.worldFromDevice.inverseRotate(q - p.positionInWorld)
                guard DeviceAngles.offAxisAngle(v) <= radio.fieldOfViewHalfAngle else { return nil }
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
