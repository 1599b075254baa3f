import NearbyFusion
/// One line of an estimate stream.
public enum EstimateStreamLine: Sendable, Hashable {
    case object(NearbyObjectEstimate)
    case session(SessionConvergenceUpdate)

    /// The JSON Lines text of the line (no newline).
    public var jsonLine: String {
        switch self {
        case .object(let e): return JSONLines.line(e)
        case .session(let s): return JSONLines.line(s)
        }
    }
}

/// What happened to one object during a replay.
public struct ReplayObjectSummary: Sendable {
    /// The object's identifier.
    public var objectID: String
    /// Accessory or peer.
    public var kind: ObjectKind
    /// Radio updates replayed for it.
    public var updates = 0
    /// Time of its first update, seconds.
    public var firstUpdateTime: Double?
    /// Time of the first `converged` status, seconds.
    public var firstConvergedTime: Double?
    /// The last estimate published.
    public var finalEstimate: NearbyObjectEstimate?
    /// Every change of convergence status, in order: `(t, status)`.
    public var coachingTimeline: [(time: Double, status: ConvergenceStatus)] = []
    /// Every change of the guidance's advice (direction or distance; `nil` when it ends), in order.
    public var guidanceTimeline: [(time: Double, guidance: MotionGuidance?)] = []
    /// The object's ground truth position, when the recording has it (static or last).
    public var truthInWorld: Vector3?
}

/// The outcome of replaying a recording.
public struct ReplaySummary: Sendable {
    /// The recording.
    public var file: String
    /// Its header.
    public var header: RecordingHeader
    /// Poses replayed.
    public var poseCount = 0
    /// Radio updates replayed (UWB and Channel Sounding).
    public var uwbCount = 0
    /// Lines of the estimate stream written.
    public var estimateLineCount = 0
    /// Time of the first and the last event, seconds.
    public var firstTime: Double?
    /// (See ``firstTime``.)
    public var lastTime: Double?
    /// Each object's summary, in the header's order.
    public var objects: [ReplayObjectSummary] = []
    /// Each change of the session-level convergence: seconds from the first event, and the status.
    public var sessionTimeline: [(time: Double, status: ConvergenceStatus)] = []
}

/// An error that stops a replay before it starts (the recording itself is readable).
public struct ReplayError: Error, Sendable, CustomStringConvertible {
    /// The refusal, naming file, line 1 and the key, as every command prints it.
    public var description: String
}

/// Runs a `FusionEngine` over a recording, streaming: events are read, fused and
/// handed to `emit` one at a time.
public enum RecordingReplay {
    /// Replays the recording at `path` (`-` for standard input).
    /// - Parameters:
    ///   - path: the recording (`-` for standard input).
    ///   - options: the engine's options.
    ///   - cameraAssistance: overrides the header's `supportsCameraAssistance` when not `nil`.
    ///   - emit: receives every estimate line in order.
    ///   - onTruth: receives every truth line (object, world position) as it is read.
    ///   - onProgress: receives the bytes consumed so far, every 4096 events (every batch
    ///     of 512 when pipelined).
    ///   - pipelined: parse on a background thread while fusing on the calling one (same
    ///     results, same errors; faster on two or more cores).
    public static func run(path: String, options: FusionOptions = FusionOptions(), cameraAssistance: Bool? = nil,
                           pipelined: Bool = false,
                           onTruth: (String, Vector3) -> Void = { _, _ in },
                           onProgress: (Int) -> Void = { _ in },
                           emit: (EstimateStreamLine) throws -> Void) throws -> ReplaySummary {
        var summary: ReplaySummary?
        try drive(path: path, options: options, cameraAssistance: cameraAssistance, pipelined: pipelined, onProgress: onProgress,
                  start: { header in
            var s = ReplaySummary(file: path, header: header)
            s.objects = header.objects.map { ReplayObjectSummary(objectID: $0.id, kind: $0.kind) }
            summary = s
        }) { step in
            if let t = step.timestamp {
                if summary!.firstTime == nil { summary!.firstTime = t }
                summary!.lastTime = t
            }
            switch step {
            case .pose(_, let change):
                summary!.poseCount += 1
                if let change {
                    summary!.sessionTimeline.append((change.timestamp, change.convergence.status))
                    summary!.estimateLineCount += 1
                    try emit(.session(change))
                }
            case .uwb(let k, let m, let estimate, _):
                summary!.uwbCount += 1
                // In place: copying the summary out and back would copy its arrays.
                summary!.objects[k].updates += 1
                if summary!.objects[k].firstUpdateTime == nil { summary!.objects[k].firstUpdateTime = m.timestamp }
                if let status = estimate.convergence?.status {
                    if summary!.objects[k].coachingTimeline.last?.status != status { summary!.objects[k].coachingTimeline.append((m.timestamp, status)) }
                    if status.isConverged && summary!.objects[k].firstConvergedTime == nil { summary!.objects[k].firstConvergedTime = m.timestamp }
                }
                let advice = estimate.guidance, last = summary!.objects[k].guidanceTimeline.last?.guidance
                if let advice, advice.differs(from: last) {
                    summary!.objects[k].guidanceTimeline.append((m.timestamp, advice))
                } else if advice == nil, last != nil {
                    summary!.objects[k].guidanceTimeline.append((m.timestamp, nil))
                }
                summary!.objects[k].finalEstimate = estimate
                summary!.estimateLineCount += 1
                try emit(.object(estimate))
            case .removed, .motionState: break
            case .truth(let k, _, let p):
                summary!.objects[k].truthInWorld = p
                onTruth(summary!.objects[k].objectID, p)
            }
        }
        return summary!
    }

    /// The engine's answer to one event of a recording, as ``drive(path:options:cameraAssistance:pipelined:withMoments:onProgress:start:step:)`` reports it.
    /// Objects are identified by their index in the header's `objects`.
    public enum Step {
        /// A pose, and the session-level convergence if it changed.
        case pose(DevicePose, sessionChange: SessionConvergenceUpdate?)
        /// A UWB update, what the engine published for it, and (when asked for) the
        /// object's estimate after it.
        case uwb(object: Int, UWBMeasurement, NearbyObjectEstimate, moments: MixtureMoments?)
        case removed(object: Int, timestamp: Double, reason: RemovalReason)
        case truth(object: Int, timestamp: Double?, positionInWorld: Vector3)
        /// The app's motion hint, already given to the engine.
        case motionState(object: Int, timestamp: Double, state: MotionActivityState)

        /// The event's time, if it has one.
        public var timestamp: Double? {
            switch self {
            case .pose(let p, _): return p.timestamp
            case .uwb(_, let m, _, _): return m.timestamp
            case .removed(_, let t, _): return t
            case .truth(_, let t, _): return t
            case .motionState(_, let t, _): return t
            }
        }
    }

    /// The replay loop of every tool that reads a recording: reads it (streaming, or
    /// pipelined on a second thread), feeds each event to a fresh ``ReplayDriver`` and hands
    /// each step to `step`.
    /// - Parameters:
    ///   - path: the recording (`-` for standard input).
    ///   - options: the engine's options.
    ///   - cameraAssistance: overrides the header's `supportsCameraAssistance` when not `nil`.
    ///   - pipelined: parse on a background thread while fusing on the calling one.
    ///   - withMoments: also report each object's mixture moments after its updates (for
    ///     scoring; off on the fast path).
    ///   - onProgress: receives the bytes consumed so far.
    ///   - start: receives the header before any event (it may throw to refuse the recording).
    ///   - step: receives each pose, update (with its estimate), truth, removal and motion hint.
    public static func drive(path: String, options: FusionOptions = FusionOptions(), cameraAssistance: Bool? = nil,
                             pipelined: Bool = false, withMoments: Bool = false,
                             onProgress: (Int) -> Void = { _ in },
                             start: (RecordingHeader) throws -> Void = { _ in },
                             step: (Step) throws -> Void) throws {
        try drive(reader: RecordingReader(path: path), name: path, options: options, cameraAssistance: cameraAssistance,
                  pipelined: pipelined, withMoments: withMoments, onProgress: onProgress, start: start, step: step)
    }

    /// ``drive(path:options:cameraAssistance:pipelined:withMoments:onProgress:start:step:)``
    /// over a reader that has not read its header yet (a recording held in memory,
    /// ``RecordingReader/init(bytes:name:)``); `name` stands for the file in messages.
    public static func drive(reader: RecordingReader, name: String, options: FusionOptions = FusionOptions(),
                             cameraAssistance: Bool? = nil, pipelined: Bool = false, withMoments: Bool = false,
                             onProgress: (Int) -> Void = { _ in },
                             start: (RecordingHeader) throws -> Void = { _ in },
                             step: (Step) throws -> Void) throws {
        var reader = reader
        let header = try reader.readHeader()
        // One verdict for every command: what Nearby Interaction would refuse, refused here.
        if let (key, message) = header.sessionError {
            throw ReplayError(description: "\(name):1: key '\(key)': \(message)")
        }
        try start(header)
        var driver = ReplayDriver(header: header, options: options, cameraAssistance: cameraAssistance)
        var eventCount = 0
        let pipeline = pipelined ? EventPipeline(reader: reader) : nil
        defer { pipeline?.cancel() }
        var pending: [RecordingEvent] = []
        var pendingIndex = 0
        /// The next event, from the pipeline's batches or straight from the reader.
        func nextEvent() throws -> RecordingEvent? {
            guard let pipeline else { return try reader.next() }
            while pendingIndex == pending.count {
                switch pipeline.next() {
                case .events(let batch, let bytes): pending = batch; pendingIndex = 0; onProgress(bytes)
                case .failure(let error): throw error
                case .end: return nil
                }
            }
            pendingIndex += 1
            return pending[pendingIndex - 1]
        }
        while let event = try nextEvent() {
            eventCount += 1
            if pipeline == nil, eventCount & 4095 == 0 { onProgress(reader.bytesConsumed) }
            if let s = driver.apply(event, withMoments: withMoments) { try step(s) }
        }
    }
}
