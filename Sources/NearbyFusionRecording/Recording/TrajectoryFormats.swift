import NearbyFusion
import Foundation

/// Device trajectories in the formats the field uses, converted to the recording
/// format's conventions (ARKit world: +Y up; device: +X right, +Y top, +Z out of the
/// screen, camera along −Z; quaternion world-from-device).
///
/// **TUM** (`timestamp tx ty tz qx qy qz qw`, seconds, metres; the TUM RGB-D benchmark's
/// ground truth): the world is the motion-capture frame with **+Z up**, the pose is the
/// camera's **optical** frame (+X right, +Y down, +Z forward). Applied:
/// `p_A = M p_T`, `R_A = M R_T O` with `M` the rotation by −90° about X (`(x, y, z) ↦
/// (x, z, −y)`: Z-up to Y-up) and `O = diag(1, −1, −1)` (device from optical: the rotation
/// by 180° about X).
///
/// **EuRoC** ground-truth CSV (`timestamp [ns], p x y z [m], q w x y z, …`; extra columns
/// ignored): world **+Z up**, pose of the body (IMU) frame, taken by default as **x
/// forward, y left, z up**. Applied: `p_A = M p_E`, `R_A = M R_E B` with `B` the
/// body-from-device rotation (device −Z = body +x, device +Y = body +z, device +X = body −y).
/// Pass another `bodyFromDevice` for rigs whose IMU is mounted differently.
public enum TrajectoryFormats {
    /// `M`: Z-up world to ARKit's Y-up world.
    public static let yUpFromZUp = Quaternion(angle: -.pi / 2, axis: Vector3(1, 0, 0))
    /// `O`: the camera optical frame (+Y down, +Z forward) to the device frame.
    public static let opticalFromDevice = Quaternion(angle: .pi, axis: Vector3(1, 0, 0))
    /// `B` for an x-forward, y-left, z-up body.
    public static let forwardLeftUpBodyFromDevice = Quaternion(
        rotationMatrix: Matrix3(columns: Vector3(0, -1, 0), Vector3(0, 0, 1), Vector3(-1, 0, 0)))

    /// Reads a TUM trajectory. Lines starting with `#` and the column header
    /// `timestamp tx ty tz qx qy qz qw` are skipped; every other line must hold eight
    /// finite numbers, a unit quaternion (±1e-3) and a non-decreasing time.
    public static func readTUM(path: String) throws(RecordingError) -> [DevicePose] {
        try readTUM(RecordingError.contents(ofFile: path), file: path)
    }

    /// Reads a TUM trajectory from its bytes; `file` names it in errors.
    public static func readTUM(_ data: Data, file: String) throws(RecordingError) -> [DevicePose] {
        try readLines(data, file: file) { fields, line, fail throws(RecordingError) -> DevicePose? in
            if fields.first == "timestamp" { return nil }
            guard fields.count == 8 else { throw fail(nil, "expected 8 columns (timestamp tx ty tz qx qy qz qw), found \(fields.count)") }
            let v = try numbers(fields, names: ["timestamp", "tx", "ty", "tz", "qx", "qy", "qz", "qw"], fail: fail)
            let q = Quaternion(x: v[4], y: v[5], z: v[6], w: v[7])
            guard abs(q.norm - 1) <= 1e-3 else { throw fail("qx..qw", "not a unit quaternion (norm \(q.norm))") }
            return DevicePose(timestamp: v[0], positionInWorld: yUpFromZUp.rotate(Vector3(v[1], v[2], v[3])),
                              worldFromDevice: (yUpFromZUp * q.normalized * opticalFromDevice).normalized)
        }
    }

    /// Reads an EuRoC ground-truth CSV (`#`-comment header, comma-separated, time in ns).
    public static func readEuRoC(path: String, bodyFromDevice: Quaternion = forwardLeftUpBodyFromDevice) throws(RecordingError) -> [DevicePose] {
        try readEuRoC(RecordingError.contents(ofFile: path), file: path, bodyFromDevice: bodyFromDevice)
    }

    /// Reads an EuRoC ground-truth CSV from its bytes; `file` names it in errors.
    public static func readEuRoC(_ data: Data, file: String,
                                 bodyFromDevice: Quaternion = forwardLeftUpBodyFromDevice) throws(RecordingError) -> [DevicePose] {
        try readLines(data, file: file, separator: ",") { fields, line, fail throws(RecordingError) -> DevicePose? in
            guard fields.count >= 8 else { throw fail(nil, "expected at least 8 columns (timestamp, p x y z, q w x y z), found \(fields.count)") }
            let v = try numbers(Array(fields.prefix(8)), names: ["timestamp", "p_x", "p_y", "p_z", "q_w", "q_x", "q_y", "q_z"], fail: fail)
            let q = Quaternion(x: v[5], y: v[6], z: v[7], w: v[4])
            guard abs(q.norm - 1) <= 1e-3 else { throw fail("q_w..q_z", "not a unit quaternion (norm \(q.norm))") }
            // Nanoseconds since the epoch exceed a Double's integer precision; parse them exactly
            // and split into seconds and remainder (seconds as a Double then resolve ~0.2 µs).
            let t: Double
            if let ns = Int64(fields[0].trimmingCharacters(in: .whitespaces)) {
                t = Double(ns / 1_000_000_000) + Double(ns % 1_000_000_000) * 1e-9
            } else {
                t = v[0] * 1e-9
            }
            return DevicePose(timestamp: t, positionInWorld: yUpFromZUp.rotate(Vector3(v[1], v[2], v[3])),
                              worldFromDevice: (yUpFromZUp * q.normalized * bodyFromDevice).normalized)
        }
    }

    /// One TUM line for a position and orientation already in the recording format's
    /// frame (no conversion: compare TUM files written by the same convention).
    public static func tumLine(timestamp: Double, positionInWorld p: Vector3, orientation q: Quaternion = .identity) -> String {
        [timestamp, p.x, p.y, p.z, q.x, q.y, q.z, q.w].map { String(format: "%.9g", $0) }.joined(separator: " ")
    }

    private static func numbers(_ fields: [Substring], names: [String],
                                fail: (String?, String) -> RecordingError) throws(RecordingError) -> [Double] {
        var out: [Double] = []
        for (k, f) in fields.enumerated() {
            guard let d = Double(f.trimmingCharacters(in: .whitespaces)) else { throw fail(names[k], "not a number: '\(f)'") }
            guard d.isFinite else { throw fail(names[k], "not a finite number") }
            out.append(d)
        }
        return out
    }

    private static func readLines(_ data: Data, file path: String, separator: Character? = nil,
                                  _ parse: ([Substring], Int, (String?, String) -> RecordingError) throws(RecordingError) -> DevicePose?)
    throws(RecordingError) -> [DevicePose] {
        let text = try RecordingError.utf8Text(data, file: path)
        var poses: [DevicePose] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields: [Substring] = separator.map { line.split(separator: $0, omittingEmptySubsequences: false) }
                ?? line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let n = lineNumber
            let fail = { (key: String?, message: String) in RecordingError(file: path, line: n, key: key, message: message) }
            guard let pose = try parse(fields, n, fail) else { continue }
            if let last = poses.last, pose.timestamp < last.timestamp {
                throw fail("timestamp", "time goes backwards (\(pose.timestamp) after \(last.timestamp))")
            }
            poses.append(pose)
        }
        return poses
    }
}
