import NearbyFusion
import Foundation

/// The LIAS planar UWB dataset (Jiang et al., "Efficient Pose Estimation via UWB
/// measurements", ICRA 2023; MIT licence) as a
/// recording: a trolley carrying three UWB tags ranges to eight fixed anchors while motion
/// capture tracks it. Real two-way ranges (1 cm resolution, ≈100 Hz) and a real moving
/// platform, with anchors surveyed to the millimetre — the one real session here whose truth
/// is better than the ranges.
///
/// **Files.** `UWB_dynamic_exp_fast.csv`: no header; a wall-clock time
/// (`YYYY-MM-DD H:MM:SS.fff`) and 24 ranges in metres, anchor-major (`a0-t0, a0-t1, a0-t2,
/// a1-t0, …`), an empty field a failed range. `motion_capture_dynamic_exp_fast.csv`: one
/// header line, then the time, the rigid body's position `x y z` (metres, world **+Z up**)
/// and its orientation as `w x y z` (the dataset README's order: read as `x y z w`, the body's
/// z axis tumbles through the whole session, while as `w x y z` it points down throughout,
/// as a trolley's does).
///
/// **Geometry, checked against the ranges.** The README gives the tags in a z-up body frame;
/// the motion-capture body is that frame turned 180° about its x axis (z down). So a tag at
/// `t` (README) is at `p + R Rₓ(π) t` in the world. Every other reading (x y z w, or the
/// tags without the turn) leaves the ranges 0.08–0.2 m of robust spread about each anchor's
/// median error; this one leaves 0.04–0.06 m for all three tags.
///
/// **Conversion.** World: `p_A = M p` (`M`: Z-up to Y-up, as for TUM). The device is the
/// trolley, with the chosen tag as its antenna: its position is the tag's, its frame has
/// −Z along the README body's +x (forward), +Y up: `R_A = M R Rₓ(π) B` with `B` the
/// x-forward, y-left, z-up body-from-device rotation. Times are seconds since the first
/// motion-capture sample. The device has distance only (`supportsDirectionMeasurement:
/// false`); each anchor is an accessory `anchorK` with a static `truth` line.
///
/// **What the ranges carry** (tag 0 against the surveyed anchors): a constant excess of
/// +0.14 to +0.31 m per anchor (an uncalibrated antenna delay; the dataset's calibration
/// session is not included), and about it a robust σ of 7 cm with 0.2 % of ranges more than
/// 0.3 m off. `rangeOffsetMetres` subtracts a calibration constant of your own from every
/// range; by default the ranges are written as recorded.
public enum LIASPlanarUWB {
    /// The anchors in the dataset's world frame (Z up), metres (its README).
    public static let anchorsInDatasetWorld: [Vector3] = [
        Vector3(-3.4203, 3.0053, 1.0442), Vector3(0.0016, 3.0110, 1.0446), Vector3(3.6056, 2.9795, 1.0463),
        Vector3(3.6011, -0.0008, 1.0422), Vector3(3.5674, -3.0087, 1.0443), Vector3(-0.0072, -2.9652, 1.0444),
        Vector3(-3.4673, -2.9587, 1.0445), Vector3(-3.4858, -0.0098, 1.0457),
    ]
    /// The tags in the README's z-up body frame, metres.
    public static let tagsInBody: [Vector3] = [
        Vector3(-0.0689, -0.1423, 0.0011), Vector3(-0.0750, 0.1402, 0.0016), Vector3(0.2034, 0.1451, -0.0008),
    ]
    /// `Rₓ(π)`: the README's body frame in the motion-capture body's.
    static let captureBodyFromBody = Quaternion(angle: .pi, axis: Vector3(1, 0, 0))

    /// How the conversion thins and calibrates the dataset.
    public struct Options: Sendable {
        /// Which tag is the device's antenna (0, 1 or 2).
        public var tag = 0
        /// Range updates per anchor per second: the ≈100 Hz rows are thinned to at most this
        /// (Nearby Interaction updates at about 10 Hz).
        public var rangeRateHz = 10.0
        /// Device poses per second (the capture runs at ≈120 Hz; ARKit at 60).
        public var poseRateHz = 60.0
        /// Subtracted from every range, metres (an antenna-delay calibration).
        public var rangeOffsetMetres = 0.0
        public init() {}
    }

    /// The recording's events, header first, ordered by time.
    public static func events(uwbPath: String, motionCapturePath: String, options: Options = Options()) throws(RecordingError) -> [RecordingEvent] {
        try events(uwb: RecordingError.contents(ofFile: uwbPath), uwbFile: uwbPath, motionCapture: RecordingError.contents(ofFile: motionCapturePath),
                   motionCaptureFile: motionCapturePath, options: options)
    }

    /// The same from the two files' bytes (errors name `uwbFile` and `motionCaptureFile`).
    public static func events(uwb: Data, uwbFile: String, motionCapture: Data, motionCaptureFile: String,
                              options: Options = Options()) throws(RecordingError) -> [RecordingEvent] {
        guard tagsInBody.indices.contains(options.tag) else {
            throw RecordingError(file: uwbFile, line: 0, message: "tag \(options.tag) does not exist (0, 1 or 2)")
        }
        let capture = try readCapture(motionCapture, file: motionCaptureFile)
        guard let origin = capture.first?.time else {
            throw RecordingError(file: motionCaptureFile, line: 0, message: "no motion-capture samples")
        }
        let ranges = try readRanges(uwb, file: uwbFile)
        let bodyToDevice = captureBodyFromBody * TrajectoryFormats.forwardLeftUpBodyFromDevice
        let lever = captureBodyFromBody.rotate(tagsInBody[options.tag])
        let m = TrajectoryFormats.yUpFromZUp

        var poses: [RecordingEvent] = []
        var nextPose = -Double.infinity
        // Seconds since the first sample, to the microsecond (the clock's millisecond
        // readings minus an origin ~10⁸ s leave digits below that which are noise).
        func since(_ time: Double) -> Double { JSONLines.rounded(time - origin, places: 6) }
        for s in capture where since(s.time) >= nextPose {
            let t = since(s.time)
            nextPose = t + 1 / options.poseRateHz - 1e-6
            poses.append(.pose(DevicePose(timestamp: t, positionInWorld: JSONLines.rounded(m.rotate(s.position + s.orientation.rotate(lever)), places: 6),
                                          worldFromDevice: JSONLines.rounded((m * s.orientation * bodyToDevice).normalized, places: 9))))
        }
        let lastCapture = since(capture[capture.count - 1].time)
        var updates: [RecordingEvent] = []
        var nextRange = -Double.infinity
        for row in ranges {
            let t = since(row.time)
            // Ranges outside the captured span have no pose to go with.
            guard t >= 0, t <= lastCapture, t >= nextRange else { continue }
            nextRange = t + 1 / options.rangeRateHz - 1e-6
            for anchor in anchorsInDatasetWorld.indices {
                let d = row.ranges[anchor * tagsInBody.count + options.tag].map { $0 - options.rangeOffsetMetres }
                updates.append(.uwb(objectID: "anchor\(anchor)",
                                    UWBMeasurement(timestamp: t, distance: d.flatMap { $0 > 0 && $0 <= RecordingDecoder.largestDistance ? $0 : nil },
                                                   directionInDevice: nil)))
            }
        }
        let header = RecordingHeader(
            deviceName: "lias-trolley-tag\(options.tag)",
            capabilities: DeviceCapabilities(supportsPreciseDistanceMeasurement: true, supportsDirectionMeasurement: false,
                                             supportsCameraAssistance: true),
            objects: anchorsInDatasetWorld.indices.map { (id: "anchor\($0)", kind: .accessory) })
        var out: [RecordingEvent] = [.header(header)]
        out += anchorsInDatasetWorld.enumerated().map { .truth(objectID: "anchor\($0.offset)", timestamp: nil, positionInWorld: JSONLines.rounded(m.rotate($0.element), places: 6)) }
        // Merge by time; at equal times the pose first (the update then uses it).
        var i = 0, j = 0
        while i < poses.count || j < updates.count {
            if j == updates.count || (i < poses.count && poses[i].timestamp! <= updates[j].timestamp!) {
                out.append(poses[i]); i += 1
            } else {
                out.append(updates[j]); j += 1
            }
        }
        return out
    }

    /// The recording as JSON Lines text.
    public static func recordingText(uwbPath: String, motionCapturePath: String, options: Options = Options()) throws(RecordingError) -> String {
        try RecordingWriter.text(events(uwbPath: uwbPath, motionCapturePath: motionCapturePath, options: options), name: uwbPath)
    }

    struct CaptureSample { var time: Double; var position: Vector3; var orientation: Quaternion }
    struct RangeRow { var time: Double; var ranges: [Double?] }

    static func readCapture(_ data: Data, file: String) throws(RecordingError) -> [CaptureSample] {
        var out: [CaptureSample] = []
        try forEachRow(data, file: file, skipFirst: true) { fields, fail throws(RecordingError) in
            guard fields.count >= 8 else { throw fail(nil, "expected 8 columns (time, x y z, w x y z), found \(fields.count)") }
            let time = try wallClockSeconds(fields[0], fail: fail)
            var v: [Double] = []
            for (k, name) in ["x", "y", "z", "qw", "qx", "qy", "qz"].enumerated() {
                guard let d = Double(fields[k + 1].trimmingCharacters(in: .whitespaces)), d.isFinite else {
                    throw fail(name, "not a finite number: '\(fields[k + 1])'")
                }
                v.append(d)
            }
            // The recording's bounds, so that what `convert` writes reads back: positions (less
            // a margin for the tag's lever arm on the trolley) and the session's span.
            for (k, name) in ["x", "y", "z"].enumerated() where abs(v[k]) > RecordingDecoder.largestCoordinate - 10 {
                throw fail(name, "a coordinate beyond \(Int(RecordingDecoder.largestCoordinate - 10)) m of the origin")
            }
            if let first = out.first, time - first.time > RecordingDecoder.largestTime {
                throw fail("time", "more than \(Int(RecordingDecoder.largestTime)) s after the first sample")
            }
            let q = Quaternion(x: v[4], y: v[5], z: v[6], w: v[3])
            guard abs(q.norm - 1) <= 1e-3 else { throw fail("qw..qz", "not a unit quaternion (norm \(q.norm))") }
            if let last = out.last, time < last.time { throw fail("time", "time goes backwards") }
            out.append(CaptureSample(time: time, position: Vector3(v[0], v[1], v[2]), orientation: q.normalized))
        }
        return out
    }

    static func readRanges(_ data: Data, file: String) throws(RecordingError) -> [RangeRow] {
        var out: [RangeRow] = []
        let columns = anchorsInDatasetWorld.count * tagsInBody.count
        try forEachRow(data, file: file, skipFirst: false) { fields, fail throws(RecordingError) in
            guard fields.count == columns + 1 else { throw fail(nil, "expected \(columns + 1) columns (time and \(columns) ranges), found \(fields.count)") }
            let time = try wallClockSeconds(fields[0], fail: fail)
            var ranges: [Double?] = []
            ranges.reserveCapacity(columns)
            for k in 1...columns {
                let field = fields[k].trimmingCharacters(in: .whitespaces)
                if field.isEmpty { ranges.append(nil); continue }
                guard let d = Double(field), d.isFinite else {
                    throw fail("a\((k - 1) / tagsInBody.count)-t\((k - 1) % tagsInBody.count)", "not a finite number: '\(field)'")
                }
                guard abs(d) <= RecordingDecoder.largestDistance else {
                    throw fail("a\((k - 1) / tagsInBody.count)-t\((k - 1) % tagsInBody.count)",
                               "a range beyond \(Int(RecordingDecoder.largestDistance)) m: '\(field)'")
                }
                ranges.append(d)
            }
            if let last = out.last, time < last.time { throw fail("time", "time goes backwards") }
            out.append(RangeRow(time: time, ranges: ranges))
        }
        return out
    }

    /// `YYYY-MM-DD H:MM:SS.fff` as seconds since 2000-01-01 (days from the civil calendar,
    /// so a session may cross midnight).
    static func wallClockSeconds(_ field: Substring, fail: (String?, String) -> RecordingError) throws(RecordingError) -> Double {
        let parts = field.trimmingCharacters(in: .whitespaces).split(separator: " ")
        let date = parts.first?.split(separator: "-") ?? [], clock = parts.count == 2 ? parts[1].split(separator: ":") : []
        guard parts.count == 2, date.count == 3, clock.count == 3,
              let y = Int(date[0]), let mo = Int(date[1]), let d = Int(date[2]), (1970...9999).contains(y), (1...12).contains(mo),
              (1...31).contains(d),
              let h = Int(clock[0]), let mi = Int(clock[1]), let s = Double(clock[2]), s.isFinite,
              (0..<24).contains(h), (0..<60).contains(mi), s >= 0, s < 61 else {
            throw fail("time", "not a time of the form YYYY-MM-DD H:MM:SS.fff: '\(field)'")
        }
        // Days since 2000-03-01 by the civil-from-days inverse (March-based years).
        let yy = mo <= 2 ? y - 1 : y, mm = mo <= 2 ? mo + 9 : mo - 3
        let days = 365 * (yy - 2000) + (yy / 4 - 500) - (yy / 100 - 20) + (yy / 400 - 5) + (153 * mm + 2) / 5 + d - 1
        return Double(days) * 86_400 + Double(h * 3600 + mi * 60) + s
    }

    private static func forEachRow(_ data: Data, file path: String, skipFirst: Bool,
                                   _ body: ([Substring], (String?, String) -> RecordingError) throws(RecordingError) -> Void) throws(RecordingError) {
        var lineNumber = 0
        for bytes in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if skipFirst && lineNumber == 1 { continue }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let message = Array(bytes).withUnsafeBufferPointer { RecordingReader.encodingProblem($0, firstLine: false) }
                throw RecordingError(file: path, line: lineNumber, message: message ?? "not valid UTF-8")
            }
            let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            let n = lineNumber
            try body(line.split(separator: ",", omittingEmptySubsequences: false)) { key, message in
                RecordingError(file: path, line: n, key: key, message: message)
            }
        }
    }
}
