import NearbyFusion
import NearbyFusionSimulation

/// The coached scenario's poses and UWB updates once the object is tracked (after 4 s),
/// replayed in a loop, with the engine state carried across iterations. Shared by the timed
/// benchmarks (`FusionBenchmarks`) and the instruction counter (`SteadyStateUpdates`).
public struct TrackingFixture: Sendable {
    public var poses: [DevicePose] = []
    public var updates: [UWBMeasurement] = []
    public var engine: FusionEngine
    public var handle: ObjectHandle
    public var handles: [ObjectHandle] = []

    public init(capabilities: DeviceCapabilities = .phone, objects: Int = 1, ranging: RangingTechnology = .uwb) {
        let events = Simulator.events(for: ScenarioCatalogue.coached(seed: 1))
        var engine = FusionEngine(capabilities: capabilities)
        var lastPose: DevicePose?
        for e in events {
            if case .pose(let p) = e { lastPose = p }
            if case .uwb(_, let m) = e, m.timestamp > 4, let p = lastPose { poses.append(p); updates.append(m) }
        }
        var handles: [ObjectHandle] = []
        for k in 0..<objects {
            // Every object is placed where the recording's tag is, so each one's updates are
            // consistent with the ranges replayed to it.
            let position = Vector3(-1.5, 1.0, -4.8)
            handles.append(engine.register(objectID: "tag\(k)", ranging: ranging, knownPositionInWorld: position,
                                           covariance: .scaledIdentity(0.05 * 0.05)))
        }
        self.engine = engine
        self.handles = handles
        handle = handles[0]
    }

    /// Step `n` of the loop for the first object: the pose, then the update (its range and
    /// direction kept or dropped), both moved on by 20 s per lap so that time keeps going
    /// forward. Returns what the engine publishes.
    @inlinable
    public mutating func step(_ n: Int, range: Bool, direction: Bool) -> NearbyObjectEstimate {
        let k = n % updates.count
        let lap = Double(n / updates.count) * 20
        var pose = poses[k], m = updates[k]
        if !range { m.distance = nil }
        if !direction { m.directionInDevice = nil }
        pose.timestamp += lap
        m.timestamp += lap
        _ = engine.ingest(pose)
        return engine.ingest(m, for: handle)
    }
}
