import NearbyFusion
/// A problem in a recording, located by file, line (1-based) and key.
///
/// Its description reads `FILE:LINE: key 'KEY': MESSAGE` (the key part only when one
/// key is at fault), e.g. `walk.jsonl:12: key 'orientation': not a unit quaternion (norm 1.2)`.
public struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var key: String?
    public var message: String

    public init(file: String, line: Int, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// Control characters (and DEL) in the message or the key are shown escaped (`\u{0}`),
    /// never written raw to a terminal.
    public var description: String {
        let text = key.map { "\(file):\(line): key '\($0)': \(message)" } ?? "\(file):\(line): \(message)"
        return Self.printable(text)
    }

    static func printable(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        for scalar in s.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
