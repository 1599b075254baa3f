import Foundation
import NearbyFusion
import NearbyFusionRecording

/// What a session runs (as `NIConfiguration`).
public protocol NIConfiguration: Sendable {
    /// Fuse VIO with UWB: `horizontalAngle`, `verticalDirectionEstimate`, `worldTransform`
    /// and convergence callbacks.
    var isCameraAssistanceEnabled: Bool { get set }
}

/// Interaction with another device running a session (as `NINearbyPeerConfiguration`).
public struct NINearbyPeerConfiguration: NIConfiguration, Hashable {
    public let peerDiscoveryToken: DiscoveryToken
    public var isCameraAssistanceEnabled = false

    public init(peerToken: DiscoveryToken) { peerDiscoveryToken = peerToken }
}

/// Interaction with an accessory (as `NINearbyAccessoryConfiguration`), ranged by UWB or,
/// since iOS 27, by Bluetooth Channel Sounding.
///
/// Accessory configuration data (what a UWB accessory sends over Bluetooth before ranging)
/// is, here: the magic `NFAC`, a version byte (1), then the accessory's identifier in UTF-8
/// (1–64 bytes) — the object id its data source reports it under. A Channel Sounding
/// accessory is reported under its Bluetooth identifier's `uuidString`.
public struct NINearbyAccessoryConfiguration: NIConfiguration, Hashable {
    public let accessoryIdentifier: String
    public let bluetoothPeerIdentifier: UUID?
    /// The Bluetooth identifier of a Channel Sounding accessory, and the one it had before
    /// (reconnection); `nil` for UWB accessories.
    public let bluetoothChannelSoundingIdentifier: UUID?
    public let previousBluetoothIdentifier: UUID?
    public var isCameraAssistanceEnabled = false

    /// The radio this configuration ranges with.
    public var ranging: RangingTechnology { bluetoothChannelSoundingIdentifier == nil ? .uwb : .bluetoothChannelSounding }

    /// Ranging with a Bluetooth Channel Sounding accessory (iOS 27): distance only; its
    /// direction comes from camera assistance. Running it on a device without Channel
    /// Sounding (`DeviceCapabilities.supportsBluetoothChannelSounding`) invalidates the
    /// session with `NIError.Code.unsupportedPlatform`.
    public init(bluetoothChannelSoundingIdentifier bluetoothIdentifier: UUID, previousBluetoothIdentifier: UUID?) {
        accessoryIdentifier = bluetoothIdentifier.uuidString
        bluetoothPeerIdentifier = nil
        bluetoothChannelSoundingIdentifier = bluetoothIdentifier
        self.previousBluetoothIdentifier = previousBluetoothIdentifier
    }

    /// Reads accessory configuration data; throws `NIError(.invalidConfiguration)` for
    /// anything malformed.
    public init(data: Data) throws {
        try self.init(accessoryData: data, bluetoothPeerIdentifier: nil)
    }

    public init(accessoryData data: Data, bluetoothPeerIdentifier: UUID?) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 6, bytes.count <= 69, Array(bytes.prefix(4)) == Array("NFAC".utf8) else {
            throw NIError(.invalidConfiguration, "accessory configuration data must start with 'NFAC' and hold 1–64 identifier bytes")
        }
        guard bytes[4] == 1 else { throw NIError(.invalidConfiguration, "unsupported accessory configuration version \(bytes[4])") }
        guard let identifier = String(bytes: bytes[5...], encoding: .utf8), !identifier.isEmpty else {
            throw NIError(.invalidConfiguration, "the accessory identifier is not UTF-8")
        }
        accessoryIdentifier = identifier
        self.bluetoothPeerIdentifier = bluetoothPeerIdentifier
        bluetoothChannelSoundingIdentifier = nil
        previousBluetoothIdentifier = nil
    }

    /// The configuration data an accessory with this identifier sends.
    public static func data(forAccessory identifier: String) -> Data {
        Data(Array("NFAC".utf8) + [1] + Array(identifier.utf8))
    }
}
