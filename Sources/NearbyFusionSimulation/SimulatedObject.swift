import Foundation
import NearbyFusion
import NearbyFusionRecording

// The truth of a simulated object: where it is, and how it moves.

/// A simulated nearby object (truth).
public struct SimulatedObject: Sendable, Hashable {
    /// The object's identifier in the recording.
    public var id: String
    /// Accessory or peer.
    public var kind: ObjectKind
    /// Position at `t = 0`, world frame, metres.
    public var positionInWorld: Vector3
    /// Constant velocity (a slowly walking peer), m/s.
    public var velocityInWorld: Vector3
    /// From each change's time on, the object moves at that velocity instead (m/s; zero to
    /// stop): a tag picked up and put down, a peer who walks, turns and stops. In time order.
    public var velocityChanges: [VelocityChange] = []
    /// The object is removed at this time, seconds, for `removalReason`.
    public var removedAt: Double?
    /// Why it is removed at ``removedAt``.
    public var removalReason: RemovalReason = .timeout
    /// The radio that ranges to it (Channel Sounding objects are sensed by the scenario's
    /// ``SimulationScenario/channelSounding`` model).
    public var ranging: RangingTechnology = .uwb

    /// From `time` (seconds) on, the object moves at `velocityInWorld` (m/s, world frame).
    public struct VelocityChange: Sendable, Hashable {
        /// When, seconds.
        public var time: Double
        /// The new velocity, world frame, m/s.
        public var velocityInWorld: Vector3
        /// A change to `velocityInWorld` at `time` seconds.
        public init(time: Double, velocityInWorld: Vector3) {
            self.time = time
            self.velocityInWorld = velocityInWorld
        }
    }

    /// An object starting at `positionInWorld` with these properties.
    public init(id: String, kind: ObjectKind = .accessory, positionInWorld: Vector3, velocityInWorld: Vector3 = .zero,
                removedAt: Double? = nil) {
        self.id = id
        self.kind = kind
        self.positionInWorld = positionInWorld
        self.velocityInWorld = velocityInWorld
        self.removedAt = removedAt
    }

    /// The position at `t` seconds: the start position moved by each piece of constant
    /// velocity up to `t`.
    public func position(at t: Double) -> Vector3 {
        var p = positionInWorld, since = 0.0, v = velocityInWorld
        for change in velocityChanges where change.time < t {
            p += (change.time - since) * v
            since = change.time
            v = change.velocityInWorld
        }
        return p + (t - since) * v
    }

    /// The velocity at `t` seconds, m/s.
    public func velocity(at t: Double) -> Vector3 {
        velocityChanges.last(where: { $0.time < t })?.velocityInWorld ?? velocityInWorld
    }

    /// Whether the object ever moves (its truth is then written with a time at every update).
    public var moves: Bool { velocityInWorld != .zero || velocityChanges.contains { $0.velocityInWorld != .zero } }
}
