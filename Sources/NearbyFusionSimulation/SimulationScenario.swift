import Foundation
import NearbyFusion
import NearbyFusionRecording

// A scenario: the truth (device path, objects) and the sensing models, seeded.

/// A complete, seeded simulation: truth (device trajectory, objects) and sensing
/// (VIO, radio).
public struct SimulationScenario: Sendable {
    /// The scenario's name (`simulate --scenario NAME`).
    public var name: String
    /// The device's true path.
    public var trajectory: any DevicePath
    /// The objects, in the header's order.
    public var objects: [SimulatedObject]
    /// The UWB radio's model and the device's capabilities.
    public var radio = RadioModel()
    /// The VIO's model and the scene's light.
    public var vio = VIOModel()
    /// The header's device name.
    public var deviceName = "phone"
    /// Amplitude of each of the hand-tremor sinusoids, metres (0 for a recorded path,
    /// which has its own).
    public var tremorAmplitude = 0.0015
    /// The seed every noise stream derives from.
    public var seed: UInt64
    /// The sensing model of objects ranged by Bluetooth Channel Sounding.
    public var channelSounding = ChannelSoundingModel()
    /// What the app tells the engine about objects' motion (`motionState` lines), written
    /// at the first radio tick at or after each hint's time.
    public var motionHints: [MotionHint] = []

    /// The app says `state` about object `objectID` at `time` seconds.
    public struct MotionHint: Sendable, Hashable {
        /// When, seconds.
        public var time: Double
        /// About which object.
        public var objectID: String
        /// What the app says.
        public var state: MotionActivityState
        /// A hint `state` about `objectID` at `time` seconds.
        public init(time: Double, objectID: String, state: MotionActivityState) {
            self.time = time
            self.objectID = objectID
            self.state = state
        }
    }

    /// Replaces the scripted motion with a recorded device path (TUM, EuRoC, …), moved
    /// rigidly to start at `start` facing −Z (``SampledDevicePath/aligned(start:)``). A
    /// recorded hand already trembles, so no synthetic tremor is added.
    public mutating func useRecordedPath(_ poses: [DevicePose], start: Vector3 = Vector3(0, 1.4, 0)) {
        trajectory = SampledDevicePath(poses: poses).aligned(start: start)
        tremorAmplitude = 0
    }

    /// A scenario with the default radio and VIO models.
    public init(name: String, trajectory: any DevicePath, objects: [SimulatedObject], seed: UInt64) {
        self.name = name
        self.trajectory = trajectory
        self.objects = objects
        self.seed = seed
    }
}
