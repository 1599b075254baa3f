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
    private let handle: FileHandle
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
                throw RecordingError(file: path, line: 0, message: "cannot open file")
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
            let chunk = handle.readData(ofLength: 1 << 20)
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
}
