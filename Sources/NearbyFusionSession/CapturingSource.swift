import Foundation
import NearbyFusion
import NearbyFusionRecording
import Synchronization

/// Records what a session is fed: a data source that passes another source's events on to
/// the session unchanged and writes each one, as it is delivered, to a recording
/// (`RecordingWriter`) — the poses, the radio updates of either radio, removals. Replayed
/// with ``RecordingSource``, the recording gives the same app code the same updates in the
/// same order.
///
/// The recording's header is written first, so the objects are declared up front: for a
/// peer, the identifier its updates arrive under (a live peer's is its token's
/// `description`; `SimulatedPeerLink`'s are). An event the recording cannot hold (an object
/// not declared, a value the format refuses) is still delivered to the session, and counted
/// in ``eventsNotRecorded`` with the first error kept in ``firstRecordingError``.
///
/// ```swift
/// let file = FileHandle(forWritingAtPath: "peer-session.jsonl")!
/// let capture = try CapturingSource(wrapping: liveSource, objects: [(id: peerToken.description, kind: .peer)]) { line in
///     file.write(Data((line + "\n").utf8))
/// }
/// NISession.defaultDataSource = capture        // the app runs as before
/// ```
public final class CapturingSource: NearbyDataSource {
    private let wrapped: any NearbyDataSource
    private let state: Mutex<(writer: RecordingWriter, notRecorded: Int, firstError: RecordingError?, lastTime: Double)>

    /// - Parameters:
    ///   - source: the source whose events the session receives.
    ///   - objects: the objects the recording declares, in order.
    ///   - deviceName: the header's device name.
    ///   - output: receives each line of the recording (without its newline), the header first.
    public init(wrapping source: any NearbyDataSource, objects: [(id: String, kind: ObjectKind)], deviceName: String = "phone",
                output: @escaping @Sendable (String) -> Void) throws(RecordingError) {
        wrapped = source
        let header = RecordingHeader(deviceName: deviceName, capabilities: source.capabilities, arConfiguration: source.arConfiguration,
                                     objects: objects)
        let writer = try RecordingWriter(header: header, name: "capture", output: output)
        state = Mutex((writer, 0, nil, 0))
    }

    /// The wrapped source's.
    public var capabilities: DeviceCapabilities { wrapped.capabilities }
    /// The wrapped source's.
    public var arConfiguration: ARConfigurationDescription? { wrapped.arConfiguration }
    /// The wrapped source's.
    public var recordedPeers: [NIDiscoveryToken: String]? { wrapped.recordedPeers }

    /// Events delivered to the session that the recording could not hold.
    public var eventsNotRecorded: Int { state.withLock { $0.notRecorded } }
    /// Why the first of them could not be recorded.
    public var firstRecordingError: RecordingError? { state.withLock { $0.firstError } }

    /// Starts the wrapped source; each event is recorded, then delivered.
    public func start(delivering sink: @escaping @Sendable (SourceEvent) -> Void) {
        wrapped.start { [self] event in
            record(event)
            sink(event)
        }
    }

    /// Stops the wrapped source.
    public func stop() { wrapped.stop() }

    private func record(_ event: SourceEvent) {
        state.withLock { s in
            let recorded: RecordingEvent
            switch event {
            case .pose(let p): recorded = .pose(p)
            case .uwb(let id, let m): recorded = .uwb(objectID: id, m)
            // A removal has no time of its own: the last event's.
            case .removed(let id, let reason): recorded = .removed(objectID: id, timestamp: s.lastTime, reason: reason)
            case .suspended, .suspensionEnded: return   // the system's, not the recording's
            }
            do throws(RecordingError) {
                try s.writer.append(recorded)
                if let t = recorded.timestamp { s.lastTime = t }
            } catch {
                s.notRecorded += 1
                if s.firstError == nil { s.firstError = error }
            }
        }
    }
}
