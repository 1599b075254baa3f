/// An error that ends a session, with the codes and raw values of Nearby Interaction's
/// `NIError.Code`.
public struct NIError: Error, Sendable, Hashable, CustomStringConvertible {
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

    public var code: Code
    /// What went wrong, for people.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "NIError \(code) (\(code.rawValue)): \(message)" }
}
