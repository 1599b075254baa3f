import NearbyFusion
import Foundation

/// Reads a recording line by line, in constant memory (a recording of hours is never
/// loaded whole): the file is read in 1 MiB chunks and each line is parsed and validated
/// as it comes. Every error is a ``RecordingError`` naming file, line and key.
///
/// ```swift
/// var reader = try RecordingReader(path: "Datasets/sweep.jsonl")
/// while let event = try reader.next() { … }
/// ```
public struct RecordingReader {
    /// `nil` for a recording given as bytes (``init(bytes:name:)``).
    private let handle: FileHandle?
    private let displayName: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEOF = false
    private var decoder: RecordingDecoder
    private var fast = FastLineDecoder()
    /// The header, once the first line has been read.
    public private(set) var header: RecordingHeader?
    /// Bytes of the file consumed so far (for progress reports).
    public private(set) var bytesConsumed = 0

    /// When `false`, every line goes through the strict JSON parser (the fast path is only
    /// an optimisation and must agree with it; tests compare the two).
    public var usesFastPath = true

    /// Opens `path` (`-` for standard input).
    public init(path: String) throws(RecordingError) {
        if path == "-" {
            handle = FileHandle.standardInput
            displayName = "<stdin>"
        } else {
            guard let h = FileHandle(forReadingAtPath: path) else {
                throw RecordingError(file: path, line: 0, message: RecordingError.cannotOpen(path))
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw RecordingError(file: path, line: 0, message: "is a directory, not a recording")
            }
            handle = h
            displayName = path
        }
        decoder = RecordingDecoder(file: displayName)
    }

    /// Reads a recording held in memory; `name` stands for the file in messages.
    public init(bytes: [UInt8], name: String) {
        handle = nil
        displayName = name
        buffer = bytes
        atEOF = true
        decoder = RecordingDecoder(file: name)
    }

    /// Reads and returns the header (the first line).
    public mutating func readHeader() throws(RecordingError) -> RecordingHeader {
        if let header { return header }
        guard let event = try next() else {
            throw RecordingError(file: displayName, line: 1, message: "empty recording (no header line)")
        }
        guard case .header(let h) = event else { throw RecordingError(file: displayName, line: 1, message: "missing header") }
        return h
    }

    /// The next event, or `nil` at the end of the file. Blank lines are skipped.
    public mutating func next() throws(RecordingError) -> RecordingEvent? {
        while true {
            guard let (range, terminated) = nextLine() else {
                if decoder.line == 0 || !decoder.sawHeader {
                    throw RecordingError(file: displayName, line: max(decoder.line, 1), message: "empty recording (no header line)")
                }
                return nil
            }
            decoder.line += 1
            // Skip blank lines (white space only); a line of JSON starts with '{' at once.
            if range.isEmpty { continue }
            if buffer[range.lowerBound] != UInt8(ascii: "{") {
                var blank = true
                for k in range where !(buffer[k] == 0x20 || buffer[k] == 0x09 || buffer[k] == 0x0D) { blank = false; break }
                if blank { continue }
            }
            // UTF-8, and nothing else, on every path (the fast decoder does not look inside
            // values it skips).
            if let problem = buffer.withUnsafeBufferPointer({ Self.encodingProblem(UnsafeBufferPointer(rebasing: $0[range]), firstLine: decoder.line == 1) }) {
                throw RecordingError(file: displayName, line: decoder.line, message: problem)
            }
            if usesFastPath && decoder.sawHeader {
                let event: RecordingEvent? = buffer.withUnsafeBufferPointer { all in
                    fast.decode(UnsafeBufferPointer(rebasing: all[range]), lastTime: decoder.lastTime)
                }
                if let event {
                    decoder.lastTime = event.timestamp
                    return event
                }
            }
            let parsed: Result<JSONValue, JSONLineParser.SyntaxError> = buffer.withUnsafeBufferPointer { all in
                do throws(JSONLineParser.SyntaxError) {
                    return .success(try JSONLineParser.parse(UnsafeBufferPointer(rebasing: all[range])))
                } catch { return .failure(error) }
            }
            switch parsed {
            case .failure(let e):
                if !terminated {
                    throw RecordingError(file: displayName, line: decoder.line,
                                         message: "truncated last line (no newline, invalid JSON: \(e.message))")
                }
                throw RecordingError(file: displayName, line: decoder.line, message: "invalid JSON at column \(e.offset + 1): \(e.message)")
            case .success(let value):
                let event = try decoder.decode(value)
                if case .header(let h) = event {
                    header = h
                    fast.declare(h)
                }
                return event
            }
        }
    }

    /// The byte range of the next line and whether it ended with a newline.
    private mutating func nextLine() -> (Range<Int>, Bool)? {
        while true {
            let from = start
            let newline: Int? = buffer.withUnsafeBufferPointer { all -> Int? in
                guard from < all.count, let base = all.baseAddress,
                      let hit = memchr(base + from, 0x0A, all.count - from) else { return nil }
                return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            }
            if let nl = newline {
                let r = start..<nl
                bytesConsumed += nl + 1 - start
                start = nl + 1
                return (r, true)
            }
            if atEOF {
                guard start < buffer.count else { return nil }
                let r = start..<buffer.count
                bytesConsumed += buffer.count - start
                start = buffer.count
                return (r, false)
            }
            // Compact and read more.
            if start > 0 { buffer.removeFirst(start); start = 0 }
            let chunk = handle?.readData(ofLength: 1 << 20) ?? Data()
            if chunk.isEmpty { atEOF = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    /// Reads a whole recording into memory (for tests and small files).
    public static func readAll(path: String, fastPath: Bool = true) throws(RecordingError) -> [RecordingEvent] {
        var reader = try RecordingReader(path: path)
        reader.usesFastPath = fastPath
        var events: [RecordingEvent] = []
        while let e = try reader.next() { events.append(e) }
        return events
    }

    /// What is wrong with a line's encoding, or `nil` when it is UTF-8: a byte-order mark or
    /// UTF-16 at the start of the file is named as such; otherwise the column of the first
    /// byte that does not start a valid UTF-8 sequence (overlong forms, surrogates and code
    /// points past U+10FFFF included).
    static func encodingProblem(_ b: UnsafeBufferPointer<UInt8>, firstLine: Bool) -> String? {
        if firstLine && b.count >= 2 {
            if b[0] == 0xEF && b.count >= 3 && b[1] == 0xBB && b[2] == 0xBF {
                return "UTF-8 byte-order mark at the start of the file: remove it (recordings are UTF-8 without a BOM)"
            }
            if (b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF) {
                return "UTF-16 text (byte-order mark): recordings are UTF-8"
            }
        }
        var i = 0
        let n = b.count
        while i < n {
            // Eight bytes at a time while they are ASCII and not NUL (a recording's lines are):
            // no byte with its top bit set, and none zero, `(w − 0x01…01) & ~w & 0x80…80 = 0`.
            if i + 8 <= n, let base = b.baseAddress {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let high: UInt64 = 0x8080_8080_8080_8080
                if w & high == 0 && (w &- 0x0101_0101_0101_0101) & ~w & high == 0 { i += 8; continue }
            }
            let c = b[i]
            if c < 0x80 {
                if c == 0 { return "a NUL byte at column \(i + 1) (UTF-16 or binary data? recordings are UTF-8 text)" }
                i += 1
                continue
            }
            let need: Int, lowest: UInt32
            var scalar: UInt32
            if c & 0xE0 == 0xC0 { need = 1; scalar = UInt32(c & 0x1F); lowest = 0x80 }
            else if c & 0xF0 == 0xE0 { need = 2; scalar = UInt32(c & 0x0F); lowest = 0x800 }
            else if c & 0xF8 == 0xF0 { need = 3; scalar = UInt32(c & 0x07); lowest = 0x10000 }
            else { return "invalid UTF-8 at column \(i + 1)" }
            guard i + need < n else { return "invalid UTF-8 at column \(i + 1) (truncated sequence)" }
            for k in 1...need {
                let d = b[i + k]
                guard d & 0xC0 == 0x80 else { return "invalid UTF-8 at column \(i + 1)" }
                scalar = scalar << 6 | UInt32(d & 0x3F)
            }
            if scalar < lowest || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) {
                return "invalid UTF-8 at column \(i + 1)"
            }
            i += need + 1
        }
        return nil
    }
}
