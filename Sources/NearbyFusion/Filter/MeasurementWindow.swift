import Foundation

/// Which parts of a direction an update carries.
public enum DirectionContent: UInt8, Sendable, Hashable {
    /// No direction (outside the radio's cone, landscape hold, or no direction finding).
    case none
    /// Azimuth only (a radio without elevation, or a direction with device-frame `y` = 0).
    case azimuth
    /// Azimuth and elevation.
    case azimuthElevation
}

/// One UWB update with the device pose it was made from, in the form every estimator step
/// reads: the batch window, the acquisition gate and the tracking filter. Absent parts are
/// `nil`-free for speed: `hasRange` and `direction` say what the entry holds.
@_spi(Internals) public struct WindowEntry: Sendable, Hashable {
    /// Antenna position in the world frame, metres.
    public var antennaInWorld: Vector3
    /// World-from-device rotation at the update.
    public var worldFromDevice: Quaternion
    /// Measured range, metres (valid when `hasRange`).
    public var rangeMetres: Double
    /// Measured azimuth and elevation, radians (see ``DeviceAngles``); elevation 0 for
    /// azimuth only.
    public var angles: Vector2
    /// The measured direction in the device frame as given (the engine gives it unit length;
    /// zero without one): what the tracking filter and the batch form their angle residuals
    /// from (``DirectionModel/linearisedInnovation(measuredDirection:at:)``). An entry made from
    /// its ``angles`` alone leaves it zero, and the batch then takes the angles' differences.
    public var directionInDevice: Vector3 = .zero
    /// (See ``angles``.)
    public var hasRange: Bool
    /// (See ``hasRange``.)
    public var direction: DirectionContent
    /// A range with no direction on a direction-capable device held in portrait: the
    /// object was probably outside the radio's field of view.
    public var directionMissing: Bool
    /// How many original updates this entry stands for (thinning doubles it).
    public var multiplicity: Double
    /// Time of the update, seconds (the recording's clock). The batch of an object that may
    /// move places it at `x − v (t_now − t)` then (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`).
    public var timestamp: Double
    /// How far the device had travelled since the acquisition began when the update was
    /// made, metres (set as the entry joins the window): what
    /// ``FusionOptions/Acquisition/considersDriftGeometry`` weighs each measurement's information by.
    public var pathLengthMetres: Double = 0
    /// For an entry with a measured direction `m` (``directionInDevice``) whose horizontal part
    /// `(m_x, m_z)` is not zero, its azimuth innovation's two axes in the world frame, set with it:
    /// with `e_x`, `e_z` the device's X and Z axes in the world and
    /// `(m̂_x, m̂_z) = (m_x, m_z)/√(m_x² + m_z²)`, `u = m̂_z e_x − m̂_x e_z` and
    /// `w = m̂_x e_x + m̂_z e_z` (unit, orthogonal, spanning the device's XZ plane); zero for any
    /// other entry. For an object at `p`, `d = p − a` and `v = Rᵀ d`: `u·d = m̂_z v_x − m̂_x v_z`
    /// and `w·d = m̂_x v_x + m̂_z v_z`, the two arguments of the azimuth innovation's arc tangent
    /// (``AzimuthModel/linearisedInnovation(measuredDirection:at:)``, scaled alike by
    /// `1/√(m_x² + m_z²)`), and `ρ² = v_x² + v_z² = (u·d)² + (w·d)²`, so that the batch forms the
    /// innovation and its Jacobian `R(−v_z, 0, v_x)ᵀ/ρ² = ((u·d) w − (w·d) u)/ρ²` with two dot
    /// products instead of two rotations (`BatchRefinement.forEachDirectionResidual`).
    public var azimuthAxisUInWorld = Vector3.zero
    /// (See ``azimuthAxisUInWorld``.)
    public var azimuthAxisWInWorld = Vector3.zero
    /// For an entry with azimuth and elevation and its axes ``azimuthAxisUInWorld``: the device's
    /// Y axis in the world frame, `e_y` (zero for any other entry). With it `v_y = e_y·d`, and
    /// the elevation innovation (``DirectionModel/linearisedInnovation(measuredDirection:at:)``)
    /// and its Jacobian `R(−v_y v_x/(ρ n²), ρ/n², −v_y v_z/(ρ n²))ᵀ` (`n² = ρ² + v_y²`) become
    /// `(ρ/n²) e_y − (v_y/(ρ n²)) ((u·d) u + (w·d) w)`: `v_x e_x + v_z e_z`, the part of `d` in the
    /// device's XZ plane, is `(u·d) u + (w·d) w`. Three dot products in place of three rotations.
    public var elevationAxisInWorld = Vector3.zero

    /// An entry: where the antenna was, the device's orientation, the range and the angles measured.
    public init(antennaInWorld: Vector3, worldFromDevice: Quaternion, rangeMetres: Double, angles: Vector2,
                hasRange: Bool, direction: DirectionContent, directionMissing: Bool, multiplicity: Double,
                timestamp: Double) {
        self.antennaInWorld = antennaInWorld
        self.worldFromDevice = worldFromDevice
        self.rangeMetres = rangeMetres
        self.angles = angles
        self.hasRange = hasRange
        self.direction = direction
        self.directionMissing = directionMissing
        self.multiplicity = multiplicity
        self.timestamp = timestamp
    }

    /// The entry for one sanitised update: a range counts up to `maximumRange`; a
    /// direction is azimuth only when the radio has no elevation or its device-frame `y`
    /// is exactly 0; a range without a direction is marked `directionMissing` when the
    /// radio could have given one (direction-capable, portrait hold: the device's +X axis
    /// within ~45° of horizontal). `timestamp` is the update's time (the pose's when `nil`).
    /// `computesElevationAngles: false` leaves a full direction's ``angles`` and axes
    /// (``azimuthAxisUInWorld``, ``elevationAxisInWorld``) at zero, for an entry read through
    /// ``directionInDevice`` alone (the tracking filter's; a batch that reads such an entry
    /// takes the direction model's rotations).
    public init(range: Double?, direction: Vector3?, pose: DevicePose, antennaInWorld: Vector3,
                capabilities: DeviceCapabilities, options o: FusionOptions, timestamp: Double? = nil,
                computesElevationAngles: Bool = true) {
        self.init(antennaInWorld: antennaInWorld, worldFromDevice: pose.worldFromDevice, rangeMetres: 0, angles: Vector2(0, 0),
                  hasRange: false, direction: .none, directionMissing: false, multiplicity: 1,
                  timestamp: timestamp ?? pose.timestamp)
        if let r = range, r <= o.coaching.maximumRange { hasRange = true; rangeMetres = r }
        if let d = direction {
            directionInDevice = d
            if !capabilities.supportsElevationMeasurement || d.y == 0 {
                self.direction = .azimuth
                angles = Vector2(atan2(d.x, -d.z), 0)
                setAzimuthAxes(of: d, worldFromDevice: pose.worldFromDevice)
            } else {
                self.direction = .azimuthElevation
                guard computesElevationAngles else { return }
                angles = DeviceAngles.azimuthElevation(d)
                if setAzimuthAxes(of: d, worldFromDevice: pose.worldFromDevice) {
                    elevationAxisInWorld = pose.worldFromDevice.rotate(Vector3(0, 1, 0))
                }
            }
        } else if hasRange, capabilities.supportsDirectionMeasurement, o.acquisition.missingDirectionLikelihood < 1,
                  abs(pose.worldFromDevice.rotate(Vector3(1, 0, 0)).y) < 0.7 {
            directionMissing = true
        }
    }
}

extension WindowEntry {
    /// Sets ``azimuthAxisUInWorld`` and ``azimuthAxisWInWorld`` for the measured direction `d`
    /// (device frame) of a device oriented `q`; `false`, and nothing set, where `d` has no
    /// horizontal part.
    @discardableResult
    private mutating func setAzimuthAxes(of d: Vector3, worldFromDevice q: Quaternion) -> Bool {
        let horizontal = (d.x * d.x + d.z * d.z).squareRoot()
        guard horizontal > 0, horizontal.isFinite else { return false }
        let mx = d.x / horizontal, mz = d.z / horizontal
        let ex = q.rotate(Vector3(1, 0, 0)), ez = q.rotate(Vector3(0, 0, 1))
        azimuthAxisUInWorld = mz * ex - mx * ez
        azimuthAxisWInWorld = mx * ex + mz * ez
        return true
    }
}

/// The UWB updates seen since an object's estimate was initialised, kept for batch
/// re-linearisation (`BatchRefinement`), in a fixed-capacity buffer.
///
/// When the buffer is full, neighbouring entries are thinned pairwise (one is kept with
/// the multiplicity of both), so the window always spans the whole history at a
/// decreasing density and never grows: memory per object is `capacity` entries.
@_spi(Internals) public struct MeasurementWindow: Sendable {
    public private(set) var entries: ContiguousArray<WindowEntry>
    /// (See ``entries``.)
    public let capacity: Int
    /// Counts the changes other than an append (clearing, cutting back, thinning): a model
    /// summing the entries (``BatchLinearisation``) is valid only for the revision it was made from.
    public private(set) var revision: UInt64 = 0

    /// A window holding at most `capacity` entries.
    public init(capacity: Int) {
        self.capacity = max(capacity, 4)
        entries = []
        entries.reserveCapacity(self.capacity)
    }

    /// Forgets every entry (keeping the storage).
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        revision &+= 1
    }

    /// Removes the latest entries back to (and including) the `count`-th latest with a range.
    public mutating func removeLatest(ranges count: Int) {
        var left = count
        revision &+= 1
        while left > 0, let last = entries.last {
            if last.hasRange { left -= 1 }
            entries.removeLast()
        }
    }

    /// Keeps `entry`, thinning the oldest when full.
    public mutating func append(_ entry: WindowEntry) {
        if entries.count == capacity { thin() }
        entries.append(entry)
    }

    /// Keeps every other entry, each carrying the multiplicity of the pair it replaces (and
    /// the time of the first of the two).
    private mutating func thin() {
        revision &+= 1
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
