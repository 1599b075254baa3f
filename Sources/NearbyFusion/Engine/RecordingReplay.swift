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
    public var objectID: String
    public var kind: ObjectKind
    public var updates = 0
    public var firstUpdateTime: Double?
    /// Time of the first `converged` status, seconds.
    public var firstConvergedTime: Double?
    /// The last estimate published.
    public var finalEstimate: NearbyObjectEstimate?
    /// Every change of convergence status, in order: `(t, status)`.
    public var coachingTimeline: [(time: Double, status: ConvergenceStatus)] = []
    /// The object's ground truth position, when the recording has it (static or last).
    public var truthInWorld: Vector3?
}

/// The outcome of replaying a recording.
public struct ReplaySummary: Sendable {
    public var file: String
    public var header: RecordingHeader
    public var poseCount = 0
    public var uwbCount = 0
    public var estimateLineCount = 0
    public var firstTime: Double?
    public var lastTime: Double?
    public var objects: [ReplayObjectSummary] = []
    public var sessionTimeline: [(time: Double, status: ConvergenceStatus)] = []
}

/// An error that stops a replay before it starts (the recording itself is readable).
public struct ReplayError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Runs a ``FusionEngine`` over a recording, streaming: events are read, fused and
/// handed to `emit` one at a time.
public enum RecordingReplay {
    /// Replays the recording at `path` (`-` for standard input).
    /// - Parameters:
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
        var reader = try RecordingReader(path: path)
        let header = try reader.readHeader()
        if let ar = header.arConfiguration, !ar.isValidForNearbyInteraction {
            throw ReplayError(description: "\(path):1: key 'arConfiguration': invalidARConfiguration: Nearby Interaction needs a gravity-aligned world with collaboration, face tracking, initial world map and relocalisation off")
        }
        var engine = FusionEngine(capabilities: header.capabilities,
                                  cameraAssistanceEnabled: cameraAssistance ?? header.capabilities.supportsCameraAssistance,
                                  options: options)
        var summary = ReplaySummary(file: path, header: header)
        var slot: [String: Int] = [:]
        var handles: [ObjectHandle] = []
        for (id, kind) in header.objects {
            handles.append(engine.register(objectID: id, kind: kind))
            slot[id] = summary.objects.count
            summary.objects.append(ReplayObjectSummary(objectID: id, kind: kind))
        }
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
            if let t = event.timestamp {
                if summary.firstTime == nil { summary.firstTime = t }
                summary.lastTime = t
            }
            switch event {
            case .header: break
            case .pose(let pose):
                summary.poseCount += 1
                if let change = engine.ingest(pose) {
                    summary.sessionTimeline.append((change.timestamp, change.convergence.status))
                    summary.estimateLineCount += 1
                    try emit(.session(change))
                }
            case .uwb(let id, let m):
                summary.uwbCount += 1
                let k = slot[id]!
                let estimate = engine.ingest(m, for: handles[k])
                // In place: copying the summary out and back would copy its arrays.
                summary.objects[k].updates += 1
                if summary.objects[k].firstUpdateTime == nil { summary.objects[k].firstUpdateTime = m.timestamp }
                if let status = estimate.convergence?.status {
                    if summary.objects[k].coachingTimeline.last?.status != status { summary.objects[k].coachingTimeline.append((m.timestamp, status)) }
                    if status.isConverged && summary.objects[k].firstConvergedTime == nil { summary.objects[k].firstConvergedTime = m.timestamp }
                }
                summary.objects[k].finalEstimate = estimate
                summary.estimateLineCount += 1
                try emit(.object(estimate))
            case .removed(let id, _, _):
                engine.remove(objectID: id)
            case .truth(let id, _, let p):
                if let k = slot[id] { summary.objects[k].truthInWorld = p }
                onTruth(id, p)
            }
        }
        return summary
    }
}
