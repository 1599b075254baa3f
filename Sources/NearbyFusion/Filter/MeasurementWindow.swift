/// One stored UWB update with the device pose it was made from, for batch
/// re-linearisation. Absent parts are `nil`-free for speed: `hasRange`/`angleKind` say
/// which measurements the entry holds.
public struct WindowEntry: Sendable, Hashable {
    /// Antenna position in the world frame, metres.
    public var antennaInWorld: Vector3
    /// World-from-device rotation at the update.
    public var worldFromDevice: Quaternion
    /// Measured range, metres (valid when `hasRange`).
    public var rangeMetres: Double
    /// Measured azimuth and elevation, radians (see ``DeviceAngles``).
    public var angles: Vector2
    public var hasRange: Bool
    /// 0: no direction, 1: azimuth only, 2: azimuth and elevation.
    public var angleKind: UInt8
    /// A range with no direction on a direction-capable device held in portrait: the
    /// object was probably outside the radio's field of view.
    public var directionMissing: Bool
    /// How many original updates this entry stands for (thinning doubles it).
    public var multiplicity: Double

    public init(antennaInWorld: Vector3, worldFromDevice: Quaternion, rangeMetres: Double, angles: Vector2,
                hasRange: Bool, angleKind: UInt8, directionMissing: Bool, multiplicity: Double) {
        self.antennaInWorld = antennaInWorld
        self.worldFromDevice = worldFromDevice
        self.rangeMetres = rangeMetres
        self.angles = angles
        self.hasRange = hasRange
        self.angleKind = angleKind
        self.directionMissing = directionMissing
        self.multiplicity = multiplicity
    }
}

/// The UWB updates seen since an object's estimate was initialised, kept for batch
/// re-linearisation (``BatchRefinement``), in a fixed-capacity buffer.
///
/// When the buffer is full, neighbouring entries are thinned pairwise (one is kept with
/// the multiplicity of both), so the window always spans the whole history at a
/// decreasing density and never grows: memory per object is `capacity` entries.
public struct MeasurementWindow: Sendable {
    public private(set) var entries: ContiguousArray<WindowEntry>
    public let capacity: Int

    public init(capacity: Int) {
        self.capacity = max(capacity, 4)
        entries = []
        entries.reserveCapacity(self.capacity)
    }

    public mutating func removeAll() { entries.removeAll(keepingCapacity: true) }

    public mutating func append(_ entry: WindowEntry) {
        if entries.count == capacity { thin() }
        entries.append(entry)
    }

    /// Keeps every other entry, each carrying the multiplicity of the pair it replaces.
    private mutating func thin() {
        var write = 0
        var read = 0
        while read < entries.count {
            var kept = entries[read]
            if read + 1 < entries.count { kept.multiplicity += entries[read + 1].multiplicity }
            entries[write] = kept
            write += 1
            read += 2
        }
        entries.removeLast(entries.count - write)
    }
}
