/// What the device's radio and camera can do (as `NIDeviceCapability`).
public struct DeviceCapabilities: Sendable, Hashable {
    /// The radio measures distance (UWB ranging).
    public var supportsPreciseDistanceMeasurement: Bool
    /// The radio measures direction (angle of arrival) inside its field of view.
    public var supportsDirectionMeasurement: Bool
    /// Camera assistance (VIO fusion) is available. Without it the engine publishes
    /// only the raw `distance` and `direction` and no convergence.
    public var supportsCameraAssistance: Bool
    /// The direction includes elevation. Not part of `NIDeviceCapability`; an extension
    /// of the recording header (`device.supportsElevationMeasurement`, default `true`).
    /// A direction whose device-frame `y` is exactly 0 is also taken as azimuth-only.
    public var supportsElevationMeasurement: Bool
    /// The device ranges to accessories with Bluetooth Channel Sounding (iOS 27's
    /// `NIDeviceCapability.supportsBluetoothChannelSounding`): distance only, its direction
    /// from camera assistance. Recording header `device.supportsBluetoothChannelSounding`,
    /// default `true`.
    public var supportsBluetoothChannelSounding: Bool

    /// A device with these capabilities (a phone's by default).
    public init(supportsPreciseDistanceMeasurement: Bool = true, supportsDirectionMeasurement: Bool = true,
                supportsCameraAssistance: Bool = true, supportsElevationMeasurement: Bool = true,
                supportsBluetoothChannelSounding: Bool = true) {
        self.supportsPreciseDistanceMeasurement = supportsPreciseDistanceMeasurement
        self.supportsDirectionMeasurement = supportsDirectionMeasurement
        self.supportsCameraAssistance = supportsCameraAssistance
        self.supportsElevationMeasurement = supportsElevationMeasurement
        self.supportsBluetoothChannelSounding = supportsBluetoothChannelSounding
    }

    /// A current iPhone: distance, direction with elevation, camera assistance.
    public static let phone = DeviceCapabilities()
    /// A phone whose radio gives azimuth but no elevation.
    public static let phoneWithoutElevation = DeviceCapabilities(supportsElevationMeasurement: false)
    /// A watch: distance only, no direction.
    public static let distanceOnly = DeviceCapabilities(supportsDirectionMeasurement: false, supportsElevationMeasurement: false)
}
