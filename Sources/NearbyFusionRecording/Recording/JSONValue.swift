import NearbyFusion
/// A parsed JSON value. Objects keep their keys in file order.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// Equal values (objects compare their members in order).
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Hashes the value.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o): for (k, v) in o { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// The value of `key` in an object (`nil` if absent or not an object).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A strict RFC 8259 parser for one line of JSON, over UTF-8 bytes.
///
/// Numbers are parsed with `Double(String)` after the grammar has been checked, so
/// `1e400` becomes `inf` and is then rejected by the recording reader as non-finite.
/// Nesting deeper than 64 levels is refused (no unbounded recursion on hostile input).
public struct JSONLineParser {
    /// Why a line is not valid JSON, with the byte offset (0-based) where it failed.
    public struct SyntaxError: Error, Sendable, Equatable {
        /// The byte offset, from 0, where parsing failed.
        public var offset: Int
        /// What was expected.
        public var message: String
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses exactly one JSON value (surrounded by optional white space).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(SyntaxError) -> JSONValue {
        var p = JSONLineParser(bytes)
        p.skipSpace()
        let v = try p.value()
        p.skipSpace()
        guard p.i == bytes.count else { throw SyntaxError(offset: p.i, message: "unexpected text after the JSON value") }
        return v
    }

    /// Parses a `String` (convenience for tests).
    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var utf8 = Array(text.utf8)
        let result: Result<JSONValue, SyntaxError> = utf8.withUnsafeMutableBufferPointer { buffer in
            do throws(SyntaxError) { return .success(try parse(UnsafeBufferPointer(buffer))) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    private func fail(_ message: String) -> SyntaxError { SyntaxError(offset: i, message: message) }

    private mutating func value() throws(SyntaxError) -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end of line (truncated JSON?)") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character '\(Character(Unicode.Scalar(bytes[i])))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of line (truncated JSON?)") }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        if depth > 64 { throw fail("nesting deeper than 64 levels") }
    }

    private mutating func object() throws(SyntaxError) -> JSONValue {
        try enter(); defer { depth -= 1 }
        i += 1
        var members: [(String, JSONValue)] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of line (truncated JSON?)") }
            guard bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a key string") }
            let keyStart = i
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw i < bytes.count ? fail("expected ':'") : fail("unexpected end of line (truncated JSON?)")
            }
            i += 1
            skipSpace()
            let v = try value()
            if members.contains(where: { $0.0 == key }) { throw SyntaxError(offset: keyStart, message: "duplicate key '\(key)'") }
            members.append((key, v))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of line (truncated JSON?)") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array() throws(SyntaxError) -> JSONValue {
        try enter(); defer { depth -= 1 }
        i += 1
        var elements: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
        while true {
            skipSpace()
            elements.append(try value())
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of line (truncated JSON?)") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func string() throws(SyntaxError) -> String {
        i += 1
        let start = i
        var simple = true
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                if simple {
                    let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                    i += 1
                    return s
                }
                break
            }
            if c < 0x20 { throw fail("control character in string") }
            if c == UInt8(ascii: "\\") { simple = false; i += 2; continue }
            i += 1
        }
        guard i < bytes.count else { throw fail("unterminated string (truncated JSON?)") }
        // Slow path with escapes.
        var scalars = String.UnicodeScalarView()
        var k = start
        var raw: [UInt8] = []
        func flush() { if !raw.isEmpty { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() } }
        while k < i {
            let c = bytes[k]
            if c != UInt8(ascii: "\\") { raw.append(c); k += 1; continue }
            flush()
            guard k + 1 < i else { throw SyntaxError(offset: k, message: "bad escape") }
            let e = bytes[k + 1]
            k += 2
            switch e {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                guard k + 4 <= i, let v = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[k..<k + 4]), as: UTF8.self), radix: 16)
                else { throw SyntaxError(offset: k, message: "bad \\u escape") }
                k += 4
                var scalarValue = v
                if (0xD800..<0xDC00).contains(v), k + 6 <= i, bytes[k] == UInt8(ascii: "\\"), bytes[k + 1] == UInt8(ascii: "u"),
                   let low = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[k + 2..<k + 6]), as: UTF8.self), radix: 16),
                   (0xDC00..<0xE000).contains(low) {
                    scalarValue = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { throw SyntaxError(offset: k, message: "bad \\u escape") }
                scalars.append(scalar)
            default: throw SyntaxError(offset: k - 1, message: "bad escape")
            }
        }
        flush()
        i += 1
        return String(scalars)
    }

    private mutating func number() throws(SyntaxError) -> Double {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("bad number") }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else { while i < bytes.count, isDigit(bytes[i]) { i += 1 } }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("bad number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("bad number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        guard let d = Double(text) else { throw SyntaxError(offset: start, message: "bad number") }
        return d
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}
