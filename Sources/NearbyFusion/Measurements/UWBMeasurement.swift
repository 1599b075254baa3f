/// One Nearby Interaction update for one object, as `NINearbyObject` reports it.
public struct UWBMeasurement: Sendable, Hashable {
    /// Time, seconds.
    public var timestamp: Double
    /// Measured range from the device's UWB antenna to the object, metres; `nil` when
    /// the radio gave none.
    public var distance: Double?
    /// Measured unit direction from the device to the object **in the device frame**;
    /// `nil` outside the radio's field of view or on devices without direction finding.
    public var directionInDevice: Vector3?

    /// An update at `timestamp` (seconds): distance (metres) and unit direction (device frame),
    /// each `nil` when the radio gave none.
    public init(timestamp: Double, distance: Double?, directionInDevice: Vector3?) {
        self.timestamp = timestamp
        self.distance = distance
        self.directionInDevice = directionInDevice
    }
}

/// The kind of nearby object (recording format: `accessory` or `peer`).
public enum ObjectKind: String, Sendable, Hashable, CaseIterable {
    /// A third-party UWB accessory, usually stationary.
    case accessory
    /// Another phone or watch; may move while the session runs.
    case peer
}

/// Which radio ranges to an object (the recording header's per-object `ranging`).
public enum RangingTechnology: String, Sendable, Hashable, CaseIterable {
    /// Ultra Wideband: distance, and a direction inside the radio's cone.
    case uwb
    /// Bluetooth 6 Channel Sounding (iOS 27, `NINearbyAccessoryConfiguration(
    /// bluetoothChannelSoundingIdentifier:previousBluetoothIdentifier:)`): distance only,
    /// noisier than UWB, at a lower and varying rate; a procedure may fail (`nil` distance).
    case bluetoothChannelSounding
}

/// Why an object was removed (as `NINearbyObject.RemovalReason`).
public enum RemovalReason: String, Sendable, Hashable, CaseIterable {
    case timeout, peerEnded
}
