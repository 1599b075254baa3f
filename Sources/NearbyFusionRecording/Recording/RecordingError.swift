import NearbyFusion
import Foundation
/// A problem in a recording, located by file, line (1-based) and key.
///
/// Its description reads `FILE:LINE: key 'KEY': MESSAGE` (the key part only when one
/// key is at fault), e.g. `walk.jsonl:12: key 'orientation': not a unit quaternion (norm 1.2)`.
public struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, as it was named (`<stdin>` for standard input).
    public var file: String
    /// The line, from 1 (0: the file as a whole, e.g. it cannot be opened).
    public var line: Int
    /// The key at fault, when one is (`device.name`, `objects[2].kind`, `t`…).
    public var key: String?
    /// What is wrong, in words.
    public var message: String

    /// An error at `file`:`line`, naming `key` when given.
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

extension RecordingError {
    /// The bytes of a file read whole (a trajectory, a dataset's CSV), or the error naming it.
    static func contents(ofFile path: String) throws(RecordingError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RecordingError(file: path, line: 0, message: cannotOpen(path))
        }
        return data
    }

    /// Why `path` cannot be read, in the words of a message: `cannot open file (REASON)`, the
    /// reason the system gives when it is asked to open it (`No such file or directory`,
    /// `Permission denied`…), `is a directory` for a folder, `not a regular file` for a FIFO or a
    /// device (a file read whole must be a regular one); plain `cannot open file` when it opens
    /// now (it changed since, or the read itself failed). The probe opens without blocking
    /// (`O_NONBLOCK`: a FIFO with no writer, a device, answer at once) and reads nothing.
    public static func cannotOpen(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return "cannot open file (\(String(cString: strerror(errno))))" }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return "cannot open file (is a directory)" }
            if status.st_mode & S_IFMT != S_IFREG { return "cannot open file (not a regular file)" }
        }
        return "cannot open file"
    }

    /// The text of a file the tools read whole (TUM and EuRoC trajectories, coaching
    /// expectations, simulation scripts), or the error that names the first line that is not
    /// UTF-8 and the column of its first bad byte — never a lossy decode that would turn
    /// bytes into U+FFFD and report some later, unrelated complaint.
    public static func utf8Text(_ data: Data, file: String) throws(RecordingError) -> String {
        if let text = String(validating: data, as: UTF8.self) { return text }
        var lineNumber = 0
        var problem: RecordingError?
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            while start <= bytes.count, problem == nil {
                lineNumber += 1
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if let message = RecordingReader.encodingProblem(line, firstLine: lineNumber == 1) {
                    problem = RecordingError(file: file, line: lineNumber, message: message)
                }
                start = end + 1
            }
        }
        throw problem ?? RecordingError(file: file, line: 0, message: "not valid UTF-8")
    }
}
