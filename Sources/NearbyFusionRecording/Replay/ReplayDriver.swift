import NearbyFusion

/// A fusion engine set up from a recording's header, fed one ``RecordingEvent`` at a time:
/// the single place where a recorded event becomes an engine call. Replay
/// (``RecordingReplay/drive(path:options:cameraAssistance:pipelined:withMoments:onProgress:start:step:)``),
/// evaluation, `bench` and the simulator's in-memory scenario runs all step through
/// ``apply(_:withMoments:)``; they differ only in where the events come from and what they
/// do with each ``RecordingReplay/Step``.
///
/// Objects are known by their *slot*, their index in the header's `objects`.
public struct ReplayDriver: Sendable {
    /// The engine, after every event applied so far.
    public var engine: FusionEngine { fusion }
    @usableFromInline var fusion: FusionEngine
    /// The header's objects, by slot.
    public let objectIDs: [String]
    @usableFromInline let handles: [ObjectHandle]
    @usableFromInline let slotByID: [String: Int]
    /// The last identifier looked up and its slot: consecutive updates mostly name the same
    /// object, and comparing a short identifier is cheaper than hashing it.
    @usableFromInline var lastLookup: (id: String, slot: Int)?

    /// A fresh engine with the header's capabilities and objects (kind and radio).
    /// - Parameters:
    ///   - header: the recording's header.
    ///   - options: the engine's options.
    ///   - cameraAssistance: overrides the header's `supportsCameraAssistance` when not `nil`.
    public init(header: RecordingHeader, options: FusionOptions = FusionOptions(), cameraAssistance: Bool? = nil) {
        var engine = FusionEngine(capabilities: header.capabilities,
                                  cameraAssistanceEnabled: cameraAssistance ?? header.capabilities.supportsCameraAssistance,
                                  options: options)
        var handles: [ObjectHandle] = [], slots: [String: Int] = [:]
        for (id, kind) in header.objects {
            slots[id] = handles.count
            handles.append(engine.register(objectID: id, kind: kind, ranging: header.ranging(of: id)))
        }
        self.fusion = engine
        self.handles = handles
        self.slotByID = slots
        self.objectIDs = header.objects.map(\.id)
    }

    /// The slot of a declared object.
    @inlinable
    public mutating func slot(of objectID: String) -> Int? {
        if let last = lastLookup, last.id == objectID { return last.slot }
        guard let slot = slotByID[objectID] else { return nil }
        lastLookup = (objectID, slot)
        return slot
    }

    /// The phase of a declared object's estimate before its next update; `nil` for an object
    /// the header does not declare.
    @inlinable
    public mutating func phase(of objectID: String) -> FusionEngine.EstimatePhase? {
        slot(of: objectID).map(phase(ofSlot:))
    }

    /// The phase of the estimate of the object in `slot` (an index of the header's `objects`)
    /// before its next update.
    @inlinable
    public func phase(ofSlot slot: Int) -> FusionEngine.EstimatePhase { fusion.phase(of: handles[slot]) }

    /// The engine's handle of the object in `slot`.
    @inlinable
    public func handle(ofSlot slot: Int) -> ObjectHandle { handles[slot] }

    /// Applies one event and returns what the engine made of it: `nil` for a header, or for
    /// an event naming an object the header does not declare (the reader refuses those, so
    /// only a hand-built event list can contain one).
    /// - Parameters:
    ///   - event: the next event of the recording, in order.
    ///   - withMoments: also report the object's mixture moments after an update.
    ///
    /// Inlinable, so that the caller's `switch` on the returned step folds into this one:
    /// otherwise every event, poses included, returns the whole step (~350 bytes: the
    /// update's estimate and moments) by copy, which took a quarter of `bench`'s time.
    @inlinable @inline(__always)
    public mutating func apply(_ event: RecordingEvent, withMoments: Bool = false) -> RecordingReplay.Step? {
        switch event {
        case .header:
            return nil
        case .pose(let pose):
            return .pose(pose, sessionChange: fusion.ingest(pose))
        case .uwb(let id, let m):
            guard let k = slot(of: id) else { return nil }
            let estimate = fusion.ingest(m, for: handles[k])
            return .uwb(object: k, m, estimate, moments: withMoments ? fusion.moments(handles[k]) : nil)
        case .removed(let id, let t, let reason):
            guard let k = slot(of: id) else { return nil }
            fusion.remove(objectID: id)
            return .removed(object: k, timestamp: t, reason: reason)
        case .truth(let id, let t, let p):
            guard let k = slot(of: id) else { return nil }
            return .truth(object: k, timestamp: t, positionInWorld: p)
        case .motionState(let id, let t, let state):
            guard let k = slot(of: id) else { return nil }
            fusion.updateMotionState(state, for: handles[k])
            return .motionState(object: k, timestamp: t, state: state)
        }
    }
}
