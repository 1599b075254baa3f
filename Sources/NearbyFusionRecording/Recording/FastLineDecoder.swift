import NearbyFusion
/// A fast path for valid `pose`, `uwb`/`range` and timed `truth` lines: scans the bytes once, parses numbers
/// without building strings or a JSON tree, and allocates nothing.
///
/// It accepts only what it fully understands and validates exactly as the strict path does
/// (required keys, types, finite numbers, unit quaternion and direction, time order,
/// declared objects). Anything else — another line type, a nested value under an unknown
/// key, an escape in a string, a duplicate key, a number it cannot parse exactly, or any
/// invalid value — returns `nil`, and the caller runs the strict parser on the line, which
/// produces the event or the precise error. Numbers use Clinger's fast path: a decimal
/// mantissa of at most 19 digits below 2⁵³ and a power of ten up to 10²² are both exact
/// doubles, so one multiplication or division gives the correctly rounded value; other
/// numbers fall back.
struct FastLineDecoder {
    static let powersOfTen: [Double] = (0...22).map { k in var p = 1.0; for _ in 0..<k { p *= 10 }; return p }

    /// Objects declared in the header, as UTF-8 bytes, with their `String` ids.
    var objectBytes: [[UInt8]] = []
    var objectIDs: [String] = []
    /// Whether each object's radio gives directions (a Channel Sounding object's direction
    /// is an error, which the strict decoder reports).
    var objectTakesDirection: [Bool] = []

    mutating func declare(_ header: RecordingHeader) {
        objectIDs = header.objects.map(\.id)
        objectBytes = objectIDs.map { Array($0.utf8) }
        objectTakesDirection = objectIDs.map { header.ranging(of: $0) == .uwb }
    }

    /// Key bits, for presence and duplicate checks.
    enum Key: UInt16 {
        case type = 1, t = 2, position = 4, orientation = 8, tracking = 16, trackingReason = 32,
             ambientIntensity = 64, object = 128, distance = 256, direction = 512
    }

    /// Decodes one line, or returns `nil` to defer to the strict path.
    func decode(_ bytes: UnsafeBufferPointer<UInt8>, lastTime: Double?) -> RecordingEvent? {
        var scanner = Scanner(b: bytes)
        return decode(&scanner, lastTime: lastTime)
    }

    /// A cursor over one line. Its methods are mutating members (not closures capturing a
    /// local), so the compiler checks exclusive access statically, not at run time.
    struct Scanner {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        var n: Int { b.count }

        @inline(__always) mutating func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0D { i += 1 } }
        @inline(__always) mutating func expect(_ c: UInt8) -> Bool { skipSpace(); if i < n && b[i] == c { i += 1; return true }; return false }

        /// The bytes of a string without escapes (its range), or nil.
        mutating func string() -> Range<Int>? {
            skipSpace()
            guard i < n, b[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            let start = i
            while i < n, b[i] != UInt8(ascii: "\"") {
                if b[i] == UInt8(ascii: "\\") || b[i] < 0x20 { return nil }
                i += 1
            }
            guard i < n else { return nil }
            let r = start..<i
            i += 1
            return r
        }

        func equals(_ r: Range<Int>, _ s: StaticString) -> Bool {
            guard r.count == s.utf8CodeUnitCount else { return false }
            let p = s.utf8Start
            for k in 0..<r.count where b[r.lowerBound + k] != p[k] { return false }
            return true
        }

        /// A JSON number. Clinger's fast path when exact; otherwise `strtod` on a stack copy
        /// of the token (correctly rounded as well). `nil` when the grammar is not JSON's or
        /// the value is not finite.
        mutating func number() -> Double? {
            skipSpace()
            let start = i
            var negative = false
            if i < n, b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
            var mantissa: UInt64 = 0
            var digits = 0
            var exponent = 0
            var exact = true
            guard i < n, b[i] >= 0x30, b[i] <= 0x39 else { return nil }
            if b[i] == 0x30 { i += 1; if i < n, b[i] >= 0x30, b[i] <= 0x39 { return nil } }   // no leading zeros
            while i < n, b[i] >= 0x30, b[i] <= 0x39 {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(b[i] - 0x30); if mantissa > 0 { digits += 1 } } else { exact = false; exponent += 1 }
                i += 1
            }
            if i < n, b[i] == UInt8(ascii: ".") {
                i += 1
                guard i < n, b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                while i < n, b[i] >= 0x30, b[i] <= 0x39 {
                    if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(b[i] - 0x30); if mantissa > 0 { digits += 1 }; exponent -= 1 } else { exact = false }
                    i += 1
                }
            }
            if i < n, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
                i += 1
                var negativeExponent = false
                if i < n, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { negativeExponent = b[i] == UInt8(ascii: "-"); i += 1 }
                guard i < n, b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                var e = 0
                while i < n, b[i] >= 0x30, b[i] <= 0x39 {
                    if e < 100_000 { e = e * 10 + Int(b[i] - 0x30) }
                    i += 1
                }
                exponent += negativeExponent ? -e : e
            }
            if exact, mantissa < (1 << 53), exponent >= -22, exponent <= 22 {
                var value = Double(mantissa)
                if exponent < 0 { value /= FastLineDecoder.powersOfTen[-exponent] } else if exponent > 0 { value *= FastLineDecoder.powersOfTen[exponent] }
                return negative ? -value : value
            }
            return Self.strtod(b, start..<i)
        }

        /// `strtod` of a token of at most 63 bytes, through a NUL-terminated stack copy.
        static func strtod(_ b: UnsafeBufferPointer<UInt8>, _ token: Range<Int>) -> Double? {
            guard token.count < 64 else { return nil }
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Double? in
                for k in 0..<token.count { buffer[k] = CChar(bitPattern: b[token.lowerBound + k]) }
                buffer[token.count] = 0
                let value = NearbyFusionRecording.parseDouble(buffer.baseAddress!)
                return value.isFinite ? value : nil
            }
        }

        mutating func vector3() -> Vector3? {
            guard expect(UInt8(ascii: "[")), let x = number(), expect(UInt8(ascii: ",")), let y = number(),
                  expect(UInt8(ascii: ",")), let z = number(), expect(UInt8(ascii: "]")) else { return nil }
            return Vector3(x, y, z)
        }

        mutating func quaternion() -> Quaternion? {
            guard expect(UInt8(ascii: "[")), let x = number(), expect(UInt8(ascii: ",")), let y = number(),
                  expect(UInt8(ascii: ",")), let z = number(), expect(UInt8(ascii: ",")), let w = number(),
                  expect(UInt8(ascii: "]")) else { return nil }
            return Quaternion(x: x, y: y, z: z, w: w)
        }

        mutating func null() -> Bool {
            skipSpace()
            guard i + 4 <= n, b[i] == UInt8(ascii: "n"), b[i + 1] == UInt8(ascii: "u"), b[i + 2] == UInt8(ascii: "l"), b[i + 3] == UInt8(ascii: "l") else { return false }
            i += 4
            return true
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard i + count <= n else { return false }
            for k in 0..<count where b[i + k] != word.utf8Start[k] { return false }
            i += count
            return true
        }

        /// Skips a scalar or an array of scalars (an unknown key's value); false otherwise.
        mutating func skipValue() -> Bool {
            skipSpace()
            guard i < n else { return false }
            if b[i] == UInt8(ascii: "[") {
                i += 1
                if expect(UInt8(ascii: "]")) { return true }
                repeat { guard skipScalar() else { return false } } while expect(UInt8(ascii: ","))
                return expect(UInt8(ascii: "]"))
            }
            return skipScalar()
        }

        mutating func skipScalar() -> Bool {
            skipSpace()
            guard i < n else { return false }
            if b[i] == UInt8(ascii: "\"") { return string() != nil }
            if null() || literal("true") || literal("false") { return true }
            return number() != nil
        }
    }

    /// Decodes one line, or returns `nil` for anything it does not handle (the strict
    /// decoder then takes the line and names what is wrong).
    ///
    /// Long on purpose: the keys come in any order and each fills the locals that the
    /// per-type checks at the end read, in one pass over the bytes — the replay's hot path.
    /// It is kept honest by the differential fuzz target and tests against the strict decoder.
    func decode(_ sc: inout Scanner, lastTime: Double?) -> RecordingEvent? {
        guard sc.expect(UInt8(ascii: "{")) else { return nil }
        var seen: UInt16 = 0
        var isPose = false, isUWB = false, isTruth = false
        var t = 0.0
        var position = Vector3.zero
        var orientation = Quaternion.identity
        var tracking: TrackingState?
        var trackingReasonRange: Range<Int>?
        var trackingIsLimited = false
        var ambient: Double?
        var objectIndex = -1
        var unknownKeys = 0
        var distance: Double?
        var direction: Vector3?
        if sc.expect(UInt8(ascii: "}")) { return nil }
        repeat {
            guard let key = sc.string(), sc.expect(UInt8(ascii: ":")) else { return nil }
            var bit: Key?
            // Dispatch on (length, first byte) before comparing the whole key.
            let first = key.isEmpty ? 0 : sc.b[key.lowerBound]
            let known: Bool
            switch (key.count, first) {
            case (4, UInt8(ascii: "t")), (1, UInt8(ascii: "t")), (8, UInt8(ascii: "p")), (11, UInt8(ascii: "o")),
                 (8, UInt8(ascii: "t")), (14, UInt8(ascii: "t")), (16, UInt8(ascii: "a")), (6, UInt8(ascii: "o")),
                 (8, UInt8(ascii: "d")), (9, UInt8(ascii: "d")):
                known = true
            default:
                known = false
            }
            if !known {
                // An unknown key: ignored. A second one could repeat the first, which the
                // strict decoder rejects as a duplicate: one verdict, so it decides.
                unknownKeys += 1
                guard unknownKeys < 2, sc.skipValue() else { return nil }
            } else if sc.equals(key, "type") {
                bit = .type
                guard let v = sc.string() else { return nil }
                if sc.equals(v, "pose") { isPose = true } else if sc.equals(v, "uwb") || sc.equals(v, "range") { isUWB = true }
                else if sc.equals(v, "truth") { isTruth = true } else { return nil }
            } else if sc.equals(key, "t") {
                bit = .t
                guard let v = sc.number() else { return nil }
                t = v
            } else if sc.equals(key, "position") {
                bit = .position
                guard let v = sc.vector3(), abs(v.x) <= RecordingDecoder.largestCoordinate, abs(v.y) <= RecordingDecoder.largestCoordinate,
                      abs(v.z) <= RecordingDecoder.largestCoordinate else { return nil }   // the strict decoder names it
                position = v
            } else if sc.equals(key, "orientation") {
                bit = .orientation
                guard let q = sc.quaternion() else { return nil }
                orientation = q
            } else if sc.equals(key, "tracking") {
                bit = .tracking
                guard let v = sc.string() else { return nil }
                if sc.equals(v, "normal") { tracking = .normal } else if sc.equals(v, "notAvailable") { tracking = .notAvailable }
                else if sc.equals(v, "limited") { trackingIsLimited = true } else { return nil }
            } else if sc.equals(key, "trackingReason") {
                bit = .trackingReason
                guard let v = sc.string() else { return nil }
                trackingReasonRange = v
            } else if sc.equals(key, "ambientIntensity") {
                bit = .ambientIntensity
                if !sc.null() {
                    guard let v = sc.number(), v >= 0 else { return nil }
                    ambient = v
                }
            } else if sc.equals(key, "object") {
                bit = .object
                guard let v = sc.string() else { return nil }
                for (k, bytes) in objectBytes.enumerated() where bytes.count == v.count {
                    var match = true
                    for j in 0..<bytes.count where bytes[j] != sc.b[v.lowerBound + j] { match = false; break }
                    if match { objectIndex = k; break }
                }
                guard objectIndex >= 0 else { return nil }
            } else if sc.equals(key, "distance") {
                bit = .distance
                if !sc.null() {
                    guard let v = sc.number(), v >= 0, v <= RecordingDecoder.largestDistance else { return nil }
                    distance = v
                }
            } else if sc.equals(key, "direction") {
                bit = .direction
                if !sc.null() {
                    guard let v = sc.vector3(), abs(v.length - 1) <= 1e-3 else { return nil }
                    direction = v
                }
            } else {
                unknownKeys += 1
                guard unknownKeys < 2, sc.skipValue() else { return nil }   // see above
            }
            if let bit {
                guard seen & bit.rawValue == 0 else { return nil }   // duplicate key
                seen |= bit.rawValue
            }
        } while sc.expect(UInt8(ascii: ","))
        guard sc.expect(UInt8(ascii: "}")) else { return nil }
        sc.skipSpace()
        guard sc.i == sc.n, seen & Key.t.rawValue != 0, abs(t) <= RecordingDecoder.largestTime else { return nil }
        if let last = lastTime, t < last { return nil }
        if isPose {
            guard seen & (Key.position.rawValue | Key.orientation.rawValue | Key.tracking.rawValue) ==
                    (Key.position.rawValue | Key.orientation.rawValue | Key.tracking.rawValue),
                  seen & (Key.object.rawValue | Key.distance.rawValue | Key.direction.rawValue) == 0,
                  abs(orientation.norm - 1) <= 1e-3 else { return nil }
            if trackingIsLimited {
                guard let r = trackingReasonRange else { return nil }
                let reason: TrackingState.LimitedReason
                if sc.equals(r, "initializing") { reason = .initializing } else if sc.equals(r, "relocalizing") { reason = .relocalizing }
                else if sc.equals(r, "excessiveMotion") { reason = .excessiveMotion } else if sc.equals(r, "insufficientFeatures") { reason = .insufficientFeatures }
                else { return nil }
                tracking = .limited(reason)
            }
            guard let tracking else { return nil }
            return .pose(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: orientation, tracking: tracking, ambientIntensity: ambient))
        }
        if isUWB {
            guard objectIndex >= 0, seen & (Key.position.rawValue | Key.orientation.rawValue | Key.tracking.rawValue) == 0,
                  direction == nil || objectTakesDirection[objectIndex] else { return nil }
            return .uwb(objectID: objectIDs[objectIndex], UWBMeasurement(timestamp: t, distance: distance, directionInDevice: direction))
        }
        if isTruth {
            // Timed truth only (a static one has no `t` and leaves the time order alone; the
            // strict decoder reads it). Keys of other line types: the strict decoder decides.
            let foreign = Key.orientation.rawValue | Key.tracking.rawValue | Key.trackingReason.rawValue
                | Key.ambientIntensity.rawValue | Key.distance.rawValue | Key.direction.rawValue
            guard objectIndex >= 0, seen & Key.position.rawValue != 0, seen & foreign == 0 else { return nil }
            return .truth(objectID: objectIDs[objectIndex], timestamp: t, positionInWorld: position)
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strtod` of a NUL-terminated C string (correctly rounded, as C requires).
@usableFromInline
func parseDouble(_ text: UnsafePointer<CChar>) -> Double { strtod(text, nil) }
