import Foundation

/// The error domain of Nearby Interaction's errors (`NSError.domain` of a bridged ``NIError``).
public let NIErrorDomain = "com.apple.NearbyInteraction"

/// An error that ends a session, with the codes and raw values of Nearby Interaction's
/// `NIError.Code`.
public struct NIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nearby Interaction's error codes, with their raw values.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        case unsupportedPlatform = -5889
        case invalidConfiguration = -5888
        case sessionFailed = -5887
        case resourceUsageTimeout = -5886
        case activeSessionsLimitExceeded = -5885
        case userDidNotAllow = -5884
        case invalidARConfiguration = -5883
        case accessoryPeerDeviceUnavailable = -5882
        case incompatiblePeerDevice = -5881
        case activeExtendedDistanceSessionsLimitExceeded = -5880
    }

    /// What went wrong.
    public var code: Code
    /// What went wrong, for people.
    public var message: String

    /// An error with `code` and `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `NIError code (raw value): message`.
    public var description: String { "NIError \(code) (\(code.rawValue)): \(message)" }

    // Apple's static members for the codes (`NIError.invalidARConfiguration` is a `Code`).
    /// The codes as static members of `NIError`, as Apple's bridged error spells them.
    public static var unsupportedPlatform: Code { .unsupportedPlatform }
    /// As ``Code/invalidConfiguration``.
    public static var invalidConfiguration: Code { .invalidConfiguration }
    /// As ``Code/sessionFailed``.
    public static var sessionFailed: Code { .sessionFailed }
    /// As ``Code/resourceUsageTimeout``.
    public static var resourceUsageTimeout: Code { .resourceUsageTimeout }
    /// As ``Code/activeSessionsLimitExceeded``.
    public static var activeSessionsLimitExceeded: Code { .activeSessionsLimitExceeded }
    /// As ``Code/userDidNotAllow``.
    public static var userDidNotAllow: Code { .userDidNotAllow }
    /// As ``Code/invalidARConfiguration``.
    public static var invalidARConfiguration: Code { .invalidARConfiguration }
    /// As ``Code/accessoryPeerDeviceUnavailable``.
    public static var accessoryPeerDeviceUnavailable: Code { .accessoryPeerDeviceUnavailable }
    /// As ``Code/incompatiblePeerDevice``.
    public static var incompatiblePeerDevice: Code { .incompatiblePeerDevice }
    /// As ``Code/activeExtendedDistanceSessionsLimitExceeded``.
    public static var activeExtendedDistanceSessionsLimitExceeded: Code { .activeExtendedDistanceSessionsLimitExceeded }
}

/// Bridged to `NSError` as Apple's is: domain ``NIErrorDomain``, code the raw value, the
/// message as the localised description.
extension NIError: CustomNSError, LocalizedError {
    /// ``NIErrorDomain``.
    public static var errorDomain: String { NIErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The message as the localised description.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    /// The message.
    public var errorDescription: String? { message }
}
