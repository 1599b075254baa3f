import Foundation
import Synchronization

/// Identifies a session to its peers (as `NIDiscoveryToken`): 16 random bytes, valid
/// exactly as long as the session that issued it.
///
/// `Codable` as a base64 string of a 20-byte payload: the magic `NFDT`, then the 16 bytes.
/// Decoding untrusted data never crashes: anything else is a `DecodingError`.
public struct DiscoveryToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The token's 16 bytes.
    public let bytes: [UInt8]

    static let magic: [UInt8] = Array("NFDT".utf8)

    init<G: RandomNumberGenerator>(using generator: inout G) {
        bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A fresh random token (system entropy).
    static func random() -> DiscoveryToken {
        var g = SystemRandomNumberGenerator()
        return DiscoveryToken(using: &g)
    }

    /// The token's serialised form (the magic and the 16 bytes).
    public var data: Data { Data(Self.magic + bytes) }

    /// Reads a token from its serialised form; `nil` for anything else.
    public init?(data: Data) {
        guard data.count == 20, Array(data.prefix(4)) == Self.magic else { return nil }
        bytes = Array(data.suffix(16))
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.utf8.count <= 64, let data = Data(base64Encoded: text), let token = DiscoveryToken(data: data) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a discovery token")
        }
        self = token
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data.base64EncodedString())
    }

    /// Hexadecimal, as used for the object identifiers of peers.
    public var description: String { bytes.map { String(format: "%02x", $0) }.joined() }
}

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
