import NearbyFusion
/// Writes estimate lines straight into a byte buffer (no `String` per number): the
/// `replay` hot path. Numbers are written with up to 9 decimals — 1 nm, 1 nrad, 1 ns — and
/// trailing zeros trimmed (`3.2`, `0.081`, `-4.8`), which is what the estimate format
/// needs; recordings, which must round-trip bit for bit, use ``JSONLines`` instead.
public enum EstimateEncoder {
    /// Appends `d` as JSON; non-finite values (which the engine never publishes) as `null`.
    ///
    /// `|d| < 1e9`: `n = round(|d| · 10⁹)` is written as its integer part `n / 10⁹`, then, if
    /// `n mod 10⁹ ≠ 0`, a point and those nine digits with trailing zeros removed. The
    /// characters are formed right to left in a 24-byte stack buffer (sign, at most ten integer
    /// digits, point, nine fraction digits) and appended to `out` in one copy.
    @inlinable
    public static func appendNumber(_ d: Double, to out: inout [UInt8]) {
        guard d.isFinite else { append("null", to: &out); return }
        let magnitude = Swift.abs(d)
        guard magnitude < 1e9 else { out.append(contentsOf: "\(d)".utf8); return }
        let scaled = UInt64((magnitude * 1e9).rounded())
        if scaled == 0 { out.append(UInt8(ascii: "0")); return }
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { b in
            var i = b.count
            var fraction = scaled % 1_000_000_000
            let integer = scaled / 1_000_000_000
            if fraction > 0 {
                var width = 9
                while fraction % 10 == 0 { fraction /= 10; width -= 1 }
                // `width` digits, leading zeros of the fraction included.
                i = writeDigits(fraction, count: width, endingAt: i, in: b)
                i -= 1; b[i] = UInt8(ascii: ".")
            }
            var count = 1, power: UInt64 = 10
            while count < 10 && integer >= power { count += 1; power &*= 10 }
            i = writeDigits(integer, count: count, endingAt: i, in: b)
            if d < 0 { i -= 1; b[i] = UInt8(ascii: "-") }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[i...]))
        }
    }

    /// "00", "01", … "99": two decimal digits per division.
    @usableFromInline static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Writes the last `count` decimal digits of `value` (leading zeros included) so that they
    /// end just before index `end` of `b`; returns the index of the first one.
    @inlinable @inline(__always)
    static func writeDigits(_ value: UInt64, count: Int, endingAt end: Int, in b: UnsafeMutableRawBufferPointer) -> Int {
        var v = value, i = end, left = count
        let pairs = digitPairs.utf8Start
        while left >= 2 {
            let k = Int(truncatingIfNeeded: v % 100) &* 2
            v /= 100
            i -= 2
            b[i] = pairs[k]
            b[i + 1] = pairs[k + 1]
            left -= 2
        }
        if left == 1 { i -= 1; b[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10) }
        return i
    }

    @inlinable
    static func append(_ s: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    static func appendString(_ s: String, to out: inout [UInt8]) {
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: JSONLines.string(s).utf8)
        }
    }

    static func appendConvergence(_ c: AlgorithmConvergence, to out: inout [UInt8]) {
        append("{\"status\":\"", to: &out)
        switch c.status {
        case .unknown: append("unknown", to: &out)
        case .converged: append("converged", to: &out)
        case .notConverged: append("notConverged", to: &out)
        }
        append("\",\"reasons\":[", to: &out)
        var first = true
        for (reason, name) in ConvergenceReasons.named where c.status.reasons.contains(reason) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: name.utf8)
            out.append(UInt8(ascii: "\""))
        }
        append("]}", to: &out)
    }

    /// Appends `[x,y,z]`, or `null`.
    static func appendVector(_ v: Vector3?, to out: inout [UInt8]) {
        guard let v else { append("null", to: &out); return }
        out.append(UInt8(ascii: "[")); appendNumber(v.x, to: &out); out.append(UInt8(ascii: ","))
        appendNumber(v.y, to: &out); out.append(UInt8(ascii: ",")); appendNumber(v.z, to: &out); out.append(UInt8(ascii: "]"))
    }

    /// Appends one estimate line (no newline).
    public static func append(_ e: NearbyObjectEstimate, to out: inout [UInt8]) {
        append("{\"t\":", to: &out); appendNumber(e.timestamp, to: &out)
        append(",\"object\":", to: &out); appendString(e.objectID, to: &out)
        append(",\"distance\":", to: &out)
        if let d = e.distance { appendNumber(d, to: &out) } else { append("null", to: &out) }
        append(",\"direction\":", to: &out)
        appendVector(e.direction, to: &out)
        append(",\"horizontalAngle\":", to: &out)
        if let a = e.horizontalAngle { appendNumber(a, to: &out) } else { append("null", to: &out) }
        append(",\"verticalDirectionEstimate\":", to: &out)
        if let v = e.verticalDirectionEstimate {
            out.append(UInt8(ascii: "\"")); out.append(contentsOf: v.rawValue.utf8); out.append(UInt8(ascii: "\""))
        } else { append("null", to: &out) }
        append(",\"worldTransform\":", to: &out)
        if let w = e.worldTransform {
            let r = w.rotation, t = w.translation
            // Column-major, without building an array.
            out.append(UInt8(ascii: "["))
            appendNumber(r.m00, to: &out); out.append(UInt8(ascii: ",")); appendNumber(r.m10, to: &out); out.append(UInt8(ascii: ","))
            appendNumber(r.m20, to: &out); append(",0,", to: &out)
            appendNumber(r.m01, to: &out); out.append(UInt8(ascii: ",")); appendNumber(r.m11, to: &out); out.append(UInt8(ascii: ","))
            appendNumber(r.m21, to: &out); append(",0,", to: &out)
            appendNumber(r.m02, to: &out); out.append(UInt8(ascii: ",")); appendNumber(r.m12, to: &out); out.append(UInt8(ascii: ","))
            appendNumber(r.m22, to: &out); append(",0,", to: &out)
            appendNumber(t.x, to: &out); out.append(UInt8(ascii: ",")); appendNumber(t.y, to: &out); out.append(UInt8(ascii: ","))
            appendNumber(t.z, to: &out); append(",1]", to: &out)
        } else { append("null", to: &out) }
        append(",\"convergence\":", to: &out)
        if let c = e.convergence { appendConvergence(c, to: &out) } else { append("null", to: &out) }
        append(",\"velocity\":", to: &out)
        appendVector(e.velocity, to: &out)
        append(",\"motion\":", to: &out)
        if let m = e.motion {
            out.append(UInt8(ascii: "\"")); out.append(contentsOf: m.rawValue.utf8); out.append(UInt8(ascii: "\""))
        } else { append("null", to: &out) }
        append(",\"guidance\":", to: &out)
        if let g = e.guidance {
            append("{\"direction\":\"", to: &out); out.append(contentsOf: g.direction.rawValue.utf8)
            append("\",\"distance\":", to: &out); appendNumber(g.distanceMetres, to: &out)
            append(",\"displacement\":", to: &out); appendVector(g.displacementInDevice, to: &out)
            append(",\"expectedAngleSigma\":", to: &out); appendNumber(g.expectedBearingStandardDeviation, to: &out)
            out.append(UInt8(ascii: "}"))
        } else { append("null", to: &out) }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends one session-level line (no newline).
    public static func append(_ u: SessionConvergenceUpdate, to out: inout [UInt8]) {
        append("{\"t\":", to: &out); appendNumber(u.timestamp, to: &out)
        append(",\"convergence\":", to: &out); appendConvergence(u.convergence, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension EstimateStreamLine {
    /// Appends the line's JSON (no newline).
    public func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .object(let e): EstimateEncoder.append(e, to: &out)
        case .session(let s): EstimateEncoder.append(s, to: &out)
        }
    }
}
