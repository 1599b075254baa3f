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

    public var description: String {
        if let key { return "\(file):\(line): key '\(key)': \(message)" }
        return "\(file):\(line): \(message)"
    }
}
