import Foundation
import NearbyFusion
import NearbyFusionRecording

/// What a session runs, as Nearby Interaction's `NIConfiguration`: a class (so that
/// `let configuration = …; configuration.isCameraAssistanceEnabled = true` works as it does
/// with Apple's). ``NISession/run(_:)`` takes a copy: changing a configuration after `run`
/// changes nothing until it is run again.
open class NIConfiguration: NSObject {
    /// Fuse VIO with the radio: `horizontalAngle`, `verticalDirectionEstimate`,
    /// `worldTransform` and convergence callbacks.
    public var isCameraAssistanceEnabled = false
    /// Accepted and kept (Apple: UWB ranging beyond the usual distance on supporting
    /// hardware); it changes nothing here: the engine fuses ranges up to
    /// `FusionOptions/maximumRange` either way.
    public var isExtendedDistanceMeasurementEnabled = false

    override init() {}

    /// A copy with the same settings (`NSCopying`). The base class has nothing to copy; a
    /// session run with it (or with a subclass of the app's own) is invalidated with
    /// `invalidConfiguration`.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// The same object, the same radio and the same settings.
    func sameSettings(as other: NIConfiguration) -> Bool {
        isCameraAssistanceEnabled == other.isCameraAssistanceEnabled
            && isExtendedDistanceMeasurementEnabled == other.isExtendedDistanceMeasurementEnabled
    }
}

/// Interaction with another device running a session, as `NINearbyPeerConfiguration`.
public final class NINearbyPeerConfiguration: NIConfiguration {
    /// The peer's token, as its app shared it.
    public let peerDiscoveryToken: NIDiscoveryToken

    /// Ranging with the peer whose token is `peerToken`.
    public init(peerToken: NIDiscoveryToken) { peerDiscoveryToken = peerToken }

    public override func copy(with zone: NSZone? = nil) -> Any {
        let c = NINearbyPeerConfiguration(peerToken: peerDiscoveryToken)
        c.isCameraAssistanceEnabled = isCameraAssistanceEnabled
        c.isExtendedDistanceMeasurementEnabled = isExtendedDistanceMeasurementEnabled
        return c
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NINearbyPeerConfiguration else { return false }
        return peerDiscoveryToken == other.peerDiscoveryToken && sameSettings(as: other)
    }

    public override var hash: Int { peerDiscoveryToken.hash }
}

/// Interaction with an accessory, as `NINearbyAccessoryConfiguration`, ranged by UWB or,
/// since iOS 27, by Bluetooth Channel Sounding.
///
/// Accessory configuration data (what a UWB accessory sends over Bluetooth before ranging)
/// is, here: the magic `NFAC`, a version byte (1), then the accessory's identifier in UTF-8
/// (1–64 bytes) — the object id its data source reports it under. A Channel Sounding
/// accessory is reported under its Bluetooth identifier's `uuidString`.
public final class NINearbyAccessoryConfiguration: NIConfiguration {
    /// The accessory's identifier: the object identifier its data source reports it under.
    public let accessoryIdentifier: String
    /// The accessory's Bluetooth identifier, when the app gave one.
    public let bluetoothPeerIdentifier: UUID?
    /// The Bluetooth identifier of a Channel Sounding accessory, and the one it had before
    /// (reconnection); `nil` for UWB accessories.
    public let bluetoothChannelSoundingIdentifier: UUID?
    /// The identifier a Channel Sounding accessory had before (reconnection), if any.
    public let previousBluetoothIdentifier: UUID?
    /// The accessory's token, as Apple's `accessoryDiscoveryToken`: the nearby object of
    /// the session that runs it carries it. Derived from the identifier (FNV-1a, 128 bits), so the same
    /// accessory always has the same token.
    public let accessoryDiscoveryToken: NIDiscoveryToken

    /// The radio this configuration ranges with.
    public var ranging: RangingTechnology { bluetoothChannelSoundingIdentifier == nil ? .uwb : .bluetoothChannelSounding }

    private init(identifier: String, bluetoothPeer: UUID?, channelSounding: UUID?, previous: UUID?) {
        accessoryIdentifier = identifier
        bluetoothPeerIdentifier = bluetoothPeer
        bluetoothChannelSoundingIdentifier = channelSounding
        previousBluetoothIdentifier = previous
        accessoryDiscoveryToken = Self.token(for: identifier)
    }

    /// Ranging with a Bluetooth Channel Sounding accessory (iOS 27): distance only; its
    /// direction comes from camera assistance. Running it on a device without Channel
    /// Sounding (`supportsBluetoothChannelSounding`) invalidates the session with
    /// `NIError.Code.unsupportedPlatform`.
    public convenience init(bluetoothChannelSoundingIdentifier bluetoothIdentifier: UUID, previousBluetoothIdentifier: UUID?) {
        self.init(identifier: bluetoothIdentifier.uuidString, bluetoothPeer: nil, channelSounding: bluetoothIdentifier,
                  previous: previousBluetoothIdentifier)
    }

    /// Reads accessory configuration data; throws `NIError(.invalidConfiguration)` for
    /// anything malformed.
    public convenience init(data: Data) throws {
        try self.init(accessoryData: data, bluetoothPeerIdentifier: nil)
    }

    /// Reads accessory configuration data (`NFAC`, version 1, the identifier); throws
    /// `NIError(.invalidConfiguration)` for anything malformed.
    public convenience init(accessoryData data: Data, bluetoothPeerIdentifier: UUID?) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 6, bytes.count <= 69, Array(bytes.prefix(4)) == Array("NFAC".utf8) else {
            throw NIError(.invalidConfiguration, "accessory configuration data must start with 'NFAC' and hold 1–64 identifier bytes")
        }
        guard bytes[4] == 1 else { throw NIError(.invalidConfiguration, "unsupported accessory configuration version \(bytes[4])") }
        guard let identifier = String(bytes: bytes[5...], encoding: .utf8), !identifier.isEmpty else {
            throw NIError(.invalidConfiguration, "the accessory identifier is not UTF-8")
        }
        self.init(identifier: identifier, bluetoothPeer: bluetoothPeerIdentifier, channelSounding: nil, previous: nil)
    }

    /// The configuration data an accessory with this identifier sends.
    public static func data(forAccessory identifier: String) -> Data {
        Data(Array("NFAC".utf8) + [1] + Array(identifier.utf8))
    }

    /// FNV-1a over the identifier's UTF-8, 128 bits (two 64-bit lanes with different offsets).
    static func token(for identifier: String) -> NIDiscoveryToken {
        var lanes: [UInt64] = [0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142]
        for k in lanes.indices {
            for byte in identifier.utf8 { lanes[k] = (lanes[k] ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        let bytes = lanes.flatMap { lane in (0..<8).map { UInt8(truncatingIfNeeded: lane >> (8 * $0)) } }
        return NIDiscoveryToken(data: Data(NIDiscoveryToken.magic + bytes))!
    }

    public override func copy(with zone: NSZone? = nil) -> Any {
        let c = NINearbyAccessoryConfiguration(identifier: accessoryIdentifier, bluetoothPeer: bluetoothPeerIdentifier,
                                               channelSounding: bluetoothChannelSoundingIdentifier, previous: previousBluetoothIdentifier)
        c.isCameraAssistanceEnabled = isCameraAssistanceEnabled
        c.isExtendedDistanceMeasurementEnabled = isExtendedDistanceMeasurementEnabled
        return c
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NINearbyAccessoryConfiguration else { return false }
        return accessoryIdentifier == other.accessoryIdentifier && bluetoothPeerIdentifier == other.bluetoothPeerIdentifier
            && bluetoothChannelSoundingIdentifier == other.bluetoothChannelSoundingIdentifier
            && previousBluetoothIdentifier == other.previousBluetoothIdentifier && sameSettings(as: other)
    }

    public override var hash: Int { accessoryIdentifier.hashValue }
}
