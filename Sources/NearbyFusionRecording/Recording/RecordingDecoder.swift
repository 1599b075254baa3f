import NearbyFusion
/// Turns one parsed JSON line into a ``RecordingEvent``, validating every key as the
/// recording format requires. Stateless apart from the previous time and the declared
/// objects, which ``RecordingReader`` carries from line to line.
struct RecordingDecoder {
    let file: String
    var line = 0
    var lastTime: Double?
    var declaredObjects: Set<String> = []
    var rangingByObject: [String: RangingTechnology] = [:]
    var sawHeader = false

    init(file: String) { self.file = file }

    func error(_ key: String?, _ message: String) -> RecordingError {
        RecordingError(file: file, line: line, key: key, message: message)
    }

    /// One line (the header first, then events). Long on purpose: one `case` per line type
    /// of the spec.
    mutating func decode(_ value: JSONValue) throws(RecordingError) -> RecordingEvent {
        guard case .object = value else { throw error(nil, "expected a JSON object, found \(value.typeName)") }
        let type = try requiredString(value, "type")
        if !sawHeader {
            guard type == "header" else { throw error("type", "the first line must be the header, found '\(type)'") }
            sawHeader = true
            return .header(try header(value))
        }
        switch type {
        case "header": throw error("type", "a second header")
        case "pose": return .pose(try pose(value))
        case "uwb", "range":
            let t = try time(value)
            let object = try objectID(value)
            let distance: Double?
            switch value["distance"] {
            case nil, .null?: distance = nil
            case .number(let d)?:
                guard d.isFinite else { throw error("distance", "not a finite number") }
                guard d >= 0 else { throw error("distance", "negative distance \(d)") }
                guard d <= Self.largestDistance else {
                    throw error("distance", "distance \(d.formatted) m is beyond any radio's range (at most \(Int(Self.largestDistance)) m)")
                }
                distance = d
            case let other?: throw error("distance", "expected a number or null, found \(other.typeName)")
            }
            let direction: Vector3?
            switch value["direction"] {
            case nil, .null?: direction = nil
            case let v?:
                guard rangingByObject[object] != .bluetoothChannelSounding else {
                    throw error("direction", "object '\(object)' is ranged by Bluetooth Channel Sounding, which gives no direction (expected null or no key)")
                }
                let d = try vector3(v, key: "direction")
                let n = d.length
                guard abs(n - 1) <= 1e-3 else { throw error("direction", "not a unit vector (norm \(n))") }
                direction = d
            }
            return .uwb(objectID: object, UWBMeasurement(timestamp: t, distance: distance, directionInDevice: direction))
        case "removed":
            let t = try time(value)
            let object = try objectID(value)
            let reasonName = try requiredString(value, "reason")
            guard let reason = RemovalReason(rawValue: reasonName) else {
                throw error("reason", "unknown removal reason '\(reasonName)' (expected timeout or peerEnded)")
            }
            return .removed(objectID: object, timestamp: t, reason: reason)
        case "truth":
            let t: Double? = value["t"] == nil ? nil : try time(value)
            let object = try objectID(value)
            guard let p = value["position"] else { throw error("position", "missing required key") }
            return .truth(objectID: object, timestamp: t, positionInWorld: try vector3(p, key: "position"))
        case "motionState":
            let t = try time(value)
            let object = try objectID(value)
            let name = try requiredString(value, "state")
            guard let state = MotionActivityState(rawValue: name) else {
                throw error("state", "unknown motion state '\(name)' (expected moving, stationary or unknown)")
            }
            return .motionState(objectID: object, timestamp: t, state: state)
        default:
            throw error("type", "unknown type '\(type)'")
        }
    }

    /// The header line, every key of the spec checked in the spec's order. Long on purpose:
    /// a flat list of one check per key, each with its own message.
    private mutating func header(_ value: JSONValue) throws(RecordingError) -> RecordingHeader {
        let format = try requiredString(value, "format")
        guard format == "nearby-recording" else { throw error("format", "unknown format '\(format)' (expected nearby-recording)") }
        guard let versionValue = value["version"] else { throw error("version", "missing required key") }
        guard case .number(let version) = versionValue else { throw error("version", "expected a number, found \(versionValue.typeName)") }
        guard version.isFinite else { throw error("version", "not a finite number (out of range of a double)") }
        guard version == 1 else { throw error("version", "unsupported version \(version.formatted) (this reader supports 1)") }
        guard let device = value["device"] else { throw error("device", "missing required key") }
        guard case .object = device else { throw error("device", "expected an object, found \(device.typeName)") }
        let name: String
        switch device["name"] {
        case .string(let s)?: name = s
        case nil: name = "device"
        case let other?: throw error("device.name", "expected a string, found \(other.typeName)")
        }
        func flag(_ key: String, default d: Bool) throws(RecordingError) -> Bool {
            switch device[key] {
            case nil: return d
            case .bool(let b)?: return b
            case let other?: throw error("device.\(key)", "expected a boolean, found \(other.typeName)")
            }
        }
        let capabilities = DeviceCapabilities(
            supportsPreciseDistanceMeasurement: try flag("supportsPreciseDistanceMeasurement", default: true),
            supportsDirectionMeasurement: try flag("supportsDirectionMeasurement", default: true),
            supportsCameraAssistance: try flag("supportsCameraAssistance", default: true),
            supportsElevationMeasurement: try flag("supportsElevationMeasurement", default: true),
            supportsBluetoothChannelSounding: try flag("supportsBluetoothChannelSounding", default: true))
        var ar: ARConfigurationDescription?
        if let a = value["arConfiguration"], a != .null {
            guard case .object = a else { throw error("arConfiguration", "expected an object, found \(a.typeName)") }
            var c = ARConfigurationDescription()
            switch a["worldAlignment"] {
            case nil: break
            case .string(let s)?: c.worldAlignment = s
            case let other?: throw error("arConfiguration.worldAlignment", "expected a string, found \(other.typeName)")
            }
            func arFlag(_ key: String) throws(RecordingError) -> Bool {
                switch a[key] {
                case nil: return false
                case .bool(let b)?: return b
                case let other?: throw error("arConfiguration.\(key)", "expected a boolean, found \(other.typeName)")
                }
            }
            c.collaborationEnabled = try arFlag("collaborationEnabled")
            c.userFaceTrackingEnabled = try arFlag("userFaceTrackingEnabled")
            c.initialWorldMap = try arFlag("initialWorldMap")
            c.relocalizationEnabled = try arFlag("relocalizationEnabled")
            ar = c
        }
        guard let objectsValue = value["objects"] else { throw error("objects", "missing required key") }
        guard case .array(let list) = objectsValue else { throw error("objects", "expected an array, found \(objectsValue.typeName)") }
        var objects: [(id: String, kind: ObjectKind)] = []
        for (k, o) in list.enumerated() {
            guard case .string(let id)? = o["id"] else { throw error("objects[\(k)].id", "missing or not a string") }
            guard case .string(let kindName)? = o["kind"] else { throw error("objects[\(k)].kind", "missing or not a string") }
            guard let kind = ObjectKind(rawValue: kindName) else {
                throw error("objects[\(k)].kind", "unknown kind '\(kindName)' (expected accessory or peer)")
            }
            guard !declaredObjects.contains(id) else { throw error("objects[\(k)].id", "duplicate object '\(id)'") }
            switch o["ranging"] {
            case nil, .null?: break
            case .string(let name)?:
                guard let ranging = RangingTechnology(rawValue: name) else {
                    throw error("objects[\(k)].ranging", "unknown ranging '\(name)' (expected uwb or bluetoothChannelSounding)")
                }
                if ranging != .uwb { rangingByObject[id] = ranging }
            case let other?: throw error("objects[\(k)].ranging", "expected a string, found \(other.typeName)")
            }
            declaredObjects.insert(id)
            objects.append((id, kind))
        }
        return RecordingHeader(deviceName: name, capabilities: capabilities, arConfiguration: ar, objects: objects,
                               rangingByObject: rangingByObject)
    }

    private mutating func pose(_ value: JSONValue) throws(RecordingError) -> DevicePose {
        let t = try time(value)
        guard let p = value["position"] else { throw error("position", "missing required key") }
        let position = try vector3(p, key: "position")
        guard let o = value["orientation"] else { throw error("orientation", "missing required key") }
        let q = try numbers(o, key: "orientation", count: 4)
        let quaternion = Quaternion(x: q[0], y: q[1], z: q[2], w: q[3])
        guard abs(quaternion.norm - 1) <= 1e-3 else {
            throw error("orientation", "not a unit quaternion (norm \(quaternion.norm))")
        }
        let trackingName = try requiredString(value, "tracking")
        let tracking: TrackingState
        switch trackingName {
        case "normal": tracking = .normal
        case "notAvailable": tracking = .notAvailable
        case "limited":
            let reasonName = try requiredString(value, "trackingReason")
            guard let reason = TrackingState.LimitedReason(rawValue: reasonName) else {
                throw error("trackingReason", "unknown tracking reason '\(reasonName)'")
            }
            tracking = .limited(reason)
        default:
            throw error("tracking", "unknown tracking state '\(trackingName)' (expected normal, limited or notAvailable)")
        }
        var ambient: Double?
        switch value["ambientIntensity"] {
        case nil, .null?: ambient = nil
        case .number(let a)?:
            guard a.isFinite else { throw error("ambientIntensity", "not a finite number") }
            guard a >= 0 else { throw error("ambientIntensity", "negative intensity \(a)") }
            ambient = a
        case let other?: throw error("ambientIntensity", "expected a number, found \(other.typeName)")
        }
        return DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: quaternion,
                          tracking: tracking, ambientIntensity: ambient)
    }

    private func requiredString(_ value: JSONValue, _ key: String) throws(RecordingError) -> String {
        guard let v = value[key] else { throw error(key, "missing required key") }
        guard case .string(let s) = v else { throw error(key, "expected a string, found \(v.typeName)") }
        return s
    }

    private func objectID(_ value: JSONValue) throws(RecordingError) -> String {
        let id = try requiredString(value, "object")
        guard declaredObjects.contains(id) else { throw error("object", "object '\(id)' is not declared in the header") }
        return id
    }

    private mutating func time(_ value: JSONValue) throws(RecordingError) -> Double {
        guard let v = value["t"] else { throw error("t", "missing required key") }
        guard case .number(let t) = v else { throw error("t", "expected a number, found \(v.typeName)") }
        guard t.isFinite else { throw error("t", "not a finite number") }
        guard abs(t) <= Self.largestTime else {
            throw error("t", "a time beyond \(Int(Self.largestTime)) s of the clock's origin")
        }
        if let last = lastTime, t < last { throw error("t", "time goes backwards (\(t) after \(last))") }
        lastTime = t
        return t
    }

    private func numbers(_ v: JSONValue, key: String, count: Int) throws(RecordingError) -> [Double] {
        guard case .array(let elements) = v else { throw error(key, "expected an array of \(count) numbers, found \(v.typeName)") }
        guard elements.count == count else { throw error(key, "expected \(count) numbers, found \(elements.count)") }
        var out: [Double] = []
        out.reserveCapacity(count)
        for e in elements {
            guard case .number(let d) = e else { throw error(key, "expected numbers, found \(e.typeName)") }
            guard d.isFinite else { throw error(key, "not a finite number") }
            out.append(d)
        }
        return out
    }

    /// Positions are within this distance of the VIO origin, metres (1,000 km): a VIO session
    /// that has travelled further is not one this engine can use. The engine publishes no
    /// position beyond it either (``NearbyObjectEstimate/largestCoordinateMetres``), so that
    /// what is accepted can always be written back.
    static let largestCoordinate = NearbyObjectEstimate.largestCoordinateMetres
    /// Ranges are at most this, metres: UWB and Bluetooth Channel Sounding reach tens of
    /// metres; anything beyond a kilometre is a broken recording (ranges beyond
    /// `FusionOptions.coaching.maximumRange` are valid and never fused).
    static let largestDistance = NearbyObjectEstimate.largestDistanceMetres
    /// Times are within this many seconds of the clock's origin (about 317 years): any clock
    /// a device keeps — since boot, or Unix time in seconds — with consecutive times still
    /// apart by microseconds. Beyond it, neighbouring updates at a 100 Hz rate become the
    /// same number, and a span of 10³⁰⁰ s is no session anyone can draw or score.
    static let largestTime = 1e10

    private func vector3(_ v: JSONValue, key: String) throws(RecordingError) -> Vector3 {
        let n = try numbers(v, key: key, count: 3)
        guard n.allSatisfy({ abs($0) <= Self.largestCoordinate }) else {
            throw error(key, "a coordinate beyond \(Int(Self.largestCoordinate)) m of the origin")
        }
        return Vector3(n[0], n[1], n[2])
    }
}

extension Double {
    /// `1` for whole numbers, the shortest round-trip form otherwise.
    var formatted: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : "\(self)" }
}
