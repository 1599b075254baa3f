import Foundation
import Synchronization

/// Identifies a session to its peers, as Nearby Interaction's `NIDiscoveryToken`: 16 random
/// bytes, valid exactly as long as the session that issued it.
///
/// A class, as Apple's: `NSSecureCoding` (so `NSKeyedArchiver` and
/// `NSKeyedUnarchiver.unarchivedObject(ofClass:from:)` carry it between peers, as every peer
/// app does; the archive holds the 20-byte payload under the key `token`) and `Codable` (a
/// base64 string of the payload). The payload is the magic `NFDT`, then the 16 bytes.
/// Decoding untrusted data never crashes: anything else fails to decode.
public final class NIDiscoveryToken: NSObject, NSSecureCoding, Codable, @unchecked Sendable {
    /// The token's 16 bytes (immutable: the class is Sendable).
    public let bytes: [UInt8]

    static let magic: [UInt8] = Array("NFDT".utf8)

    init<G: RandomNumberGenerator>(using generator: inout G) {
        bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The token's serialised form (the magic and the 16 bytes).
    public var data: Data { Data(Self.magic + bytes) }

    /// Reads a token from its serialised form; `nil` for anything else.
    public init?(data: Data) {
        guard data.count == 20, Array(data.prefix(4)) == Self.magic else { return nil }
        bytes = Array(data.suffix(16))
    }

    // MARK: NSSecureCoding

    /// Tokens decode only with secure coding, as Apple's.
    public static var supportsSecureCoding: Bool { true }

    /// Archives the 20-byte payload under the key `token`.
    public func encode(with coder: NSCoder) { coder.encode(data as NSData, forKey: "token") }

    /// Unarchives a token; `nil` for anything but a 20-byte payload with the magic.
    public init?(coder: NSCoder) {
        guard let payload = coder.decodeObject(of: NSData.self, forKey: "token") as Data?,
              payload.count == 20, Array(payload.prefix(4)) == Self.magic else { return nil }
        bytes = Array(payload.suffix(16))
    }

    // MARK: Codable

    /// Decodes a token from the base64 of its payload; throws for anything else.
    public required init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.utf8.count <= 64, let data = Data(base64Encoded: text), let token = NIDiscoveryToken(data: data) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a discovery token")
        }
        bytes = token.bytes
    }

    /// Encodes the token as the base64 of its payload.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data.base64EncodedString())
    }

    // MARK: Equality (by value, as Apple's tokens compare)

    public override func isEqual(_ object: Any?) -> Bool { (object as? NIDiscoveryToken)?.bytes == bytes }
    public override var hash: Int { bytes.hashValue }

    /// Hexadecimal, as used for the object identifiers of peers.
    public override var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The engine-side name of ``NIDiscoveryToken``.
public typealias DiscoveryToken = NIDiscoveryToken

/// Which tokens are alive (their session not invalidated) and which peers are taken.
final class TokenRegistry: Sendable {
    static let shared = TokenRegistry()
    private let state = Mutex<(alive: [DiscoveryToken: ObjectIdentifier], peers: [DiscoveryToken: ObjectIdentifier], running: Set<ObjectIdentifier>)>(([:], [:], []))

    func issue(_ token: DiscoveryToken, to session: ObjectIdentifier) { state.withLock { _ = $0.alive[token] = session } }
    func isAlive(_ token: DiscoveryToken) -> Bool { state.withLock { $0.alive[token] != nil } }
    func owner(of token: DiscoveryToken) -> ObjectIdentifier? { state.withLock { $0.alive[token] } }

    func revoke(_ token: DiscoveryToken, session: ObjectIdentifier) {
        state.withLock {
            $0.alive[token] = nil
            $0.peers = $0.peers.filter { $0.value != session }
            $0.running.remove(session)
        }
    }

    /// Claims `peer` for `session`; false if another live session already runs with it.
    func claim(peer: DiscoveryToken, for session: ObjectIdentifier) -> Bool {
        state.withLock {
            if let holder = $0.peers[peer], holder != session { return false }
            $0.peers[peer] = session
            return true
        }
    }

    /// Marks a session running; false when `limit` sessions already run.
    func startRunning(_ session: ObjectIdentifier, limit: Int) -> Bool {
        state.withLock {
            if $0.running.contains(session) { return true }
            guard $0.running.count < limit else { return false }
            $0.running.insert(session)
            return true
        }
    }

    func stopRunning(_ session: ObjectIdentifier) { state.withLock { _ = $0.running.remove(session) } }
}
