/// VIO tracking quality, as ARKit's `ARCamera.TrackingState`.
public enum TrackingState: Sendable, Hashable {
    case normal
    case limited(LimitedReason)
    case notAvailable

    /// Why tracking is limited (ARKit's `ARCamera.TrackingState.Reason`).
    public enum LimitedReason: String, Sendable, Hashable, CaseIterable {
        case initializing, relocalizing, excessiveMotion, insufficientFeatures
    }

    /// The recording-format spelling of the state (`normal`, `limited`, `notAvailable`).
    public var name: String {
        switch self {
        case .normal: return "normal"
        case .limited: return "limited"
        case .notAvailable: return "notAvailable"
        }
    }
}

/// One visual-inertial odometry pose of the device (ARKit conventions).
public struct DevicePose: Sendable, Hashable {
    /// Time, seconds (any origin; non-decreasing through a stream).
    public var timestamp: Double
    /// Position of the device (camera) in the world frame, metres.
    public var positionInWorld: Vector3
    /// Rotation world-from-device: `v_world = worldFromDevice.rotate(v_device)`.
    public var worldFromDevice: Quaternion
    /// VIO tracking quality.
    public var tracking: TrackingState
    /// ARKit's ambient light estimate in lumens (1000 ≈ a well-lit room); `nil` if not given.
    public var ambientIntensity: Double?

    /// A pose at `timestamp` (seconds): position in the world frame (metres), orientation
    /// world-from-device, VIO tracking state and ambient light (lumens).
    public init(timestamp: Double, positionInWorld: Vector3, worldFromDevice: Quaternion,
                tracking: TrackingState = .normal, ambientIntensity: Double? = nil) {
        self.timestamp = timestamp
        self.positionInWorld = positionInWorld
        self.worldFromDevice = worldFromDevice
        self.tracking = tracking
        self.ambientIntensity = ambientIntensity
    }

    /// The device's forward axis (−Z of the device, where the rear camera and the UWB
    /// cone look) in the world frame.
    public var forwardInWorld: Vector3 { worldFromDevice.rotate(Vector3(0, 0, -1)) }
}
