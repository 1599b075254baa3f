import NearbyFusion
/// Serialises recordings and estimate streams as JSON Lines, byte-for-byte
/// deterministic: keys in the order of the format's examples, numbers in Swift's
/// shortest round-trip form (so a value read back is the same `Double`).
public enum JSONLines {
    /// `x` to `places` decimal places, as written recordings store numbers: what a sensor
    /// resolves (micrometres, microseconds; 1e-9 for a quaternion's components), without the
    /// float noise of a conversion, so that the same input writes the same bytes.
    @inlinable public static func rounded(_ x: Double, places: Int) -> Double {
        let scale = Self.powersOfTen[places]
        return (x * scale).rounded() / scale
    }

    /// Each component to `places` decimal places (``rounded(_:places:)``).
    @inlinable public static func rounded(_ v: Vector3, places: Int) -> Vector3 {
        Vector3(rounded(v.x, places: places), rounded(v.y, places: places), rounded(v.z, places: places))
    }

    /// Each component to `places` decimal places (``rounded(_:places:)``), not renormalised.
    @inlinable public static func rounded(_ q: Quaternion, places: Int) -> Quaternion {
        Quaternion(x: rounded(q.x, places: places), y: rounded(q.y, places: places),
                   z: rounded(q.z, places: places), w: rounded(q.w, places: places))
    }

    @usableFromInline static let powersOfTen: [Double] = (0...15).map { (0..<$0).reduce(1.0) { r, _ in r * 10 } }

    /// A JSON number; non-finite values (never produced by the engine) become `null`.
    public static func number(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// A JSON string literal with the required escapes.
    public static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count) + String(c.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func numbers(_ values: [Double]) -> String { "[" + values.map(number).joined(separator: ",") + "]" }

    /// One recording line (no trailing newline).
    public static func line(_ event: RecordingEvent) -> String {
        switch event {
        case .header(let h):
            let c = h.capabilities
            var device = "{\"name\":\(string(h.deviceName)),\"supportsPreciseDistanceMeasurement\":\(c.supportsPreciseDistanceMeasurement),"
                + "\"supportsDirectionMeasurement\":\(c.supportsDirectionMeasurement),\"supportsCameraAssistance\":\(c.supportsCameraAssistance)"
            if !c.supportsElevationMeasurement { device += ",\"supportsElevationMeasurement\":false" }
            if !c.supportsBluetoothChannelSounding { device += ",\"supportsBluetoothChannelSounding\":false" }
            device += "}"
            var s = "{\"type\":\"header\",\"format\":\"nearby-recording\",\"version\":1,\"device\":\(device)"
            if let a = h.arConfiguration {
                s += ",\"arConfiguration\":{\"worldAlignment\":\(string(a.worldAlignment)),\"collaborationEnabled\":\(a.collaborationEnabled),"
                    + "\"userFaceTrackingEnabled\":\(a.userFaceTrackingEnabled),\"initialWorldMap\":\(a.initialWorldMap),"
                    + "\"relocalizationEnabled\":\(a.relocalizationEnabled)}"
            }
            s += ",\"objects\":[" + h.objects.map { o in
                let ranging = h.ranging(of: o.id) == .uwb ? "" : ",\"ranging\":\"\(h.ranging(of: o.id).rawValue)\""
                return "{\"id\":\(string(o.id)),\"kind\":\"\(o.kind.rawValue)\"\(ranging)}"
            }.joined(separator: ",") + "]}"
            return s
        case .pose(let p):
            var s = "{\"type\":\"pose\",\"t\":\(number(p.timestamp)),\"position\":\(numbers(p.positionInWorld.array)),"
                + "\"orientation\":\(numbers(p.worldFromDevice.array)),\"tracking\":\"\(p.tracking.name)\""
            if case .limited(let reason) = p.tracking { s += ",\"trackingReason\":\"\(reason.rawValue)\"" }
            if let a = p.ambientIntensity { s += ",\"ambientIntensity\":\(number(a))" }
            return s + "}"
        case .uwb(let id, let m):
            return "{\"type\":\"uwb\",\"t\":\(number(m.timestamp)),\"object\":\(string(id)),\"distance\":\(m.distance.map(number) ?? "null"),"
                + "\"direction\":\(m.directionInDevice.map { numbers($0.array) } ?? "null")}"
        case .removed(let id, let t, let reason):
            return "{\"type\":\"removed\",\"t\":\(number(t)),\"object\":\(string(id)),\"reason\":\"\(reason.rawValue)\"}"
        case .truth(let id, let t, let p):
            let time = t.map { "\"t\":\(number($0))," } ?? ""
            return "{\"type\":\"truth\",\(time)\"object\":\(string(id)),\"position\":\(numbers(p.array))}"
        case .motionState(let id, let t, let state):
            return "{\"type\":\"motionState\",\"t\":\(number(t)),\"object\":\(string(id)),\"state\":\"\(state.rawValue)\"}"
        }
    }

    /// One recording line for `event` in a recording whose header is `header`: as
    /// ``line(_:)-(RecordingEvent)``, except that updates of an object not ranged by UWB are
    /// written as the spec's neutral `range` lines (no `direction` key: such radios give none).
    public static func line(_ event: RecordingEvent, header: RecordingHeader) -> String {
        if case .uwb(let id, let m) = event, header.ranging(of: id) != .uwb {
            return "{\"type\":\"range\",\"t\":\(number(m.timestamp)),\"object\":\(string(id)),\"distance\":\(m.distance.map(number) ?? "null")}"
        }
        return line(event)
    }

    /// A whole recording: `events` (header first) one line each, every line ended by a
    /// newline; empty when the first event is not a header.
    public static func text(_ events: [RecordingEvent]) -> String {
        guard case .header(let header)? = events.first else { return "" }
        var out = ""
        for e in events { out += line(e, header: header); out += "\n" }
        return out
    }

    /// One estimate line (no trailing newline); see ``EstimateEncoder`` for the number
    /// format. With camera assistance off, `convergence` is `null` (see the format's
    /// specification).
    public static func line(_ e: NearbyObjectEstimate) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        EstimateEncoder.append(e, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// One session-level convergence line (no `object`).
    public static func line(_ u: SessionConvergenceUpdate) -> String {
        var out: [UInt8] = []
        EstimateEncoder.append(u, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
