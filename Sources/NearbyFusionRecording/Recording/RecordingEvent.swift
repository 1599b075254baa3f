import NearbyFusion
/// The AR/VIO configuration declared in a recording header (as `ARWorldTrackingConfiguration`).
public struct ARConfigurationDescription: Sendable, Hashable {
    /// ARKit's world alignment (`gravity` is the only one camera assistance accepts).
    public var worldAlignment: String = "gravity"
    /// Collaborative sessions (must be off).
    public var collaborationEnabled = false
    /// Face tracking with the front camera (must be off).
    public var userFaceTrackingEnabled = false
    /// Whether the session started from a saved world map (must not).
    public var initialWorldMap = false
    /// Whether ARKit may relocalise (must not).
    public var relocalizationEnabled = false
    public init() {}

    /// Nearby Interaction accepts only a gravity-aligned world with collaboration, face
    /// tracking, an initial world map and relocalisation all off.
    public var isValidForNearbyInteraction: Bool {
        worldAlignment == "gravity" && !collaborationEnabled && !userFaceTrackingEnabled && !initialWorldMap
            && !relocalizationEnabled
    }
}

/// A recording's first line.
public struct RecordingHeader: Sendable, Hashable {
    /// The device's name, for people.
    public var deviceName: String
    /// What the device can measure.
    public var capabilities: DeviceCapabilities
    /// The AR session the VIO ran, when the recording says.
    public var arConfiguration: ARConfigurationDescription?
    /// The objects ranged, in the header's order.
    public var objects: [(id: String, kind: ObjectKind)]
    /// Objects ranged by something other than UWB (the header's per-object `ranging`; absent
    /// means `uwb`).
    public var rangingByObject: [String: RangingTechnology]

    /// A header; objects not in `rangingByObject` are ranged by UWB.
    public init(deviceName: String, capabilities: DeviceCapabilities, arConfiguration: ARConfigurationDescription? = nil,
                objects: [(id: String, kind: ObjectKind)], rangingByObject: [String: RangingTechnology] = [:]) {
        self.deviceName = deviceName
        self.capabilities = capabilities
        self.arConfiguration = arConfiguration
        self.objects = objects
        self.rangingByObject = rangingByObject
    }

    /// The radio that ranges to `objectID`.
    public func ranging(of objectID: String) -> RangingTechnology { rangingByObject[objectID] ?? .uwb }

    /// Why Nearby Interaction would refuse to run the recorded session, or `nil`: an AR
    /// configuration it does not accept (`invalidARConfiguration`), or a Channel Sounding
    /// accessory on a device that says it has no Channel Sounding (`invalidConfiguration`).
    /// Every command that replays a recording checks it (`RecordingReplay.drive`).
    public var sessionError: (key: String, message: String)? {
        if let ar = arConfiguration, !ar.isValidForNearbyInteraction {
            return ("arConfiguration", "invalidARConfiguration: Nearby Interaction needs a gravity-aligned world with collaboration, face tracking, initial world map and relocalisation off")
        }
        if !capabilities.supportsBluetoothChannelSounding,
           let id = objects.map(\.id).first(where: { ranging(of: $0) == .bluetoothChannelSounding }) {
            return ("objects", "invalidConfiguration: object '\(id)' is ranged by Bluetooth Channel Sounding, but the device says supportsBluetoothChannelSounding: false")
        }
        return nil
    }

    /// Equal when every field is.
    public static func == (a: RecordingHeader, b: RecordingHeader) -> Bool {
        a.deviceName == b.deviceName && a.capabilities == b.capabilities && a.arConfiguration == b.arConfiguration
            && a.objects.map(\.id) == b.objects.map(\.id) && a.objects.map(\.kind) == b.objects.map(\.kind)
            && a.rangingByObject == b.rangingByObject
    }

    /// Hashes every field.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(deviceName)
        hasher.combine(objects.map(\.id))
    }
}

/// One line of a recording (see the format's specification, RecordingFormat in this module's documentation).
public enum RecordingEvent: Sendable, Hashable {
    case header(RecordingHeader)
    case pose(DevicePose)
    case uwb(objectID: String, UWBMeasurement)
    case removed(objectID: String, timestamp: Double, reason: RemovalReason)
    /// Ground truth: the object's world position (static when `timestamp` is `nil`).
    case truth(objectID: String, timestamp: Double?, positionInWorld: Vector3)
    /// What the app knows about the object's motion from `timestamp` on (a `motionState`
    /// line, as `NISession.updateMotionState(_:forObjectWithToken:)`).
    case motionState(objectID: String, timestamp: Double, state: MotionActivityState)

    /// The event's time, if it has one.
    public var timestamp: Double? {
        switch self {
        case .header: return nil
        case .pose(let p): return p.timestamp
        case .uwb(_, let m): return m.timestamp
        case .removed(_, let t, _): return t
        case .truth(_, let t, _): return t
        case .motionState(_, let t, _): return t
        }
    }
}
