import NearbyFusion

/// Writes a recording event by event — a live session captured as it runs, or events a tool
/// makes — refusing whatever the reader would refuse, so that everything it writes replays.
///
/// Each event is written as ``JSONLines`` writes it and then read back by the reader's own
/// decoder, which checks the same things in the same order as ``RecordingReader``: the header
/// first and only once, the time order, the bounds on times, coordinates and distances, unit
/// quaternions and directions, declared objects, no direction for a Channel Sounding object.
/// An event that fails is not written, and the error names the line it would have been and
/// the key.
///
/// ```swift
/// var writer = try RecordingWriter(header: header) { line in file.write(line + "\n") }
/// try writer.append(.pose(pose))
/// try writer.append(.uwb(objectID: "tag", measurement))
/// ```
///
/// Capturing what an `NISession` is fed: write the data source's header (its device's
/// capabilities and the objects the app ranges), then each pose and radio update as the
/// source delivers it, the app's `updateMotionState` hints as `motionState` events, and
/// removals; `NearbyFusionSession`'s documentation shows it for a peer session.
public struct RecordingWriter {
    private var decoder: RecordingDecoder
    private let header: RecordingHeader
    private let output: (String) -> Void
    /// Lines written so far, the header included.
    public private(set) var linesWritten = 0

    /// Starts a recording with `header`, handing each line (without its newline) to `output`.
    /// `name` stands for the recording in errors.
    public init(header: RecordingHeader, name: String = "<recording>", output: @escaping (String) -> Void) throws(RecordingError) {
        self.header = header
        self.output = output
        decoder = RecordingDecoder(file: name)
        try write(.header(header))
    }

    /// Appends one event (not a header: the header is written by `init`).
    public mutating func append(_ event: RecordingEvent) throws(RecordingError) {
        try write(event)
    }

    private mutating func write(_ event: RecordingEvent) throws(RecordingError) {
        let line = JSONLines.line(event, header: header)
        var check = decoder
        check.line += 1
        let value: JSONValue
        do throws(JSONLineParser.SyntaxError) {
            value = try JSONLineParser.parse(line)
        } catch {
            throw RecordingError(file: check.file, line: check.line, message: "cannot be written as JSON: \(error.message)")
        }
        // JSON has no NaN: the two optional numbers a non-finite value would silently turn
        // into `null` are refused by name, and anything else that would not read back as it
        // was given is refused too.
        if case .uwb(_, let m) = event, let d = m.distance, !d.isFinite {
            throw RecordingError(file: check.file, line: check.line, key: "distance", message: "not a finite number")
        }
        if case .pose(let p) = event, let a = p.ambientIntensity, !a.isFinite {
            throw RecordingError(file: check.file, line: check.line, key: "ambientIntensity", message: "not a finite number")
        }
        let decoded = try check.decode(value)
        guard decoded == Self.asWritten(event, header: header) else {
            throw RecordingError(file: check.file, line: check.line, message: "does not read back as it was given")
        }
        decoder = check
        linesWritten += 1
        output(line)
    }

    /// `event` as the format holds it: an update of an object no direction reaches keeps no
    /// direction (its `range` line has none).
    private static func asWritten(_ event: RecordingEvent, header: RecordingHeader) -> RecordingEvent {
        if case .uwb(let id, var m) = event, header.ranging(of: id) != .uwb {
            m.directionInDevice = nil
            return .uwb(objectID: id, m)
        }
        return event
    }

    /// A whole recording, `events` header first, one line each ended by a newline, validated
    /// as ``append(_:)`` validates them.
    public static func text(_ events: [RecordingEvent], name: String = "<recording>") throws(RecordingError) -> String {
        guard case .header(let header)? = events.first else {
            throw RecordingError(file: name, line: 1, message: "the first event must be the header")
        }
        var out = ""
        var writer = try RecordingWriter(header: header, name: name) { out += $0; out += "\n" }
        for event in events.dropFirst() { try writer.append(event) }
        return out
    }
}
