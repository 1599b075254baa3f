/// Camera assistance convergence for one object or the session.
public struct AlgorithmConvergence: Sendable, Hashable {
    /// `converged`, `notConverged` with its reasons, or `unknown`.
    public var status: ConvergenceStatus
    /// A convergence with `status`.
    public init(status: ConvergenceStatus) { self.status = status }
}

/// What the engine publishes for one object at one update (as `NINearbyObject`). Every
/// output that is not available is `nil`.
public struct NearbyObjectEstimate: Sendable, Hashable {
    /// Time, seconds.
    public var timestamp: Double
    /// The object's identifier.
    public var objectID: String
    /// Distance from the device to the object, metres.
    public var distance: Double?
    /// Unit direction from the device to the object in the **device frame**.
    public var direction: Vector3?
    /// Radians in `(−π, π]`, positive clockwise seen from above (see ``HorizontalAngle``).
    public var horizontalAngle: Double?
    /// `nil` while withheld by a convergence reason.
    public var verticalDirectionEstimate: VerticalDirectionEstimate?
    /// The object's pose in the world frame; `nil` until converged.
    public var worldTransform: WorldTransform?
    /// `nil` when camera assistance is off.
    public var convergence: AlgorithmConvergence?
    /// The object's velocity, m/s, world frame, while it is tracked and its horizontal angle
    /// is published (beyond Nearby Interaction; the estimate format's `velocity`).
    public var velocity: Vector3?
    /// What the engine knows of the object's motion (the app's hint when it gave one); `nil`
    /// when camera assistance is off (the estimate format's `motion`).
    public var motion: MotionActivityState?
    /// Which way to move the device, and how far, to get the object's `horizontalAngle` (or,
    /// with ``FusionOptions/Coaching/guidanceOutput``, its `worldTransform`) soonest (beyond
    /// Nearby Interaction, whose reasons say only what is missing); `nil` once that output is
    /// published, before any estimate, and when camera assistance is off
    /// (``FusionOptions/Coaching/guidanceInterval``).
    public var guidance: MotionGuidance?

    /// An estimate with the given outputs (each `nil` when not available).
    public init(timestamp: Double, objectID: String, distance: Double? = nil, direction: Vector3? = nil,
                horizontalAngle: Double? = nil, verticalDirectionEstimate: VerticalDirectionEstimate? = nil,
                worldTransform: WorldTransform? = nil, convergence: AlgorithmConvergence? = nil,
                velocity: Vector3? = nil, motion: MotionActivityState? = nil) {
        self.timestamp = timestamp
        self.objectID = objectID
        self.distance = distance
        self.direction = direction
        self.horizontalAngle = horizontalAngle
        self.verticalDirectionEstimate = verticalDirectionEstimate
        self.worldTransform = worldTransform
        self.convergence = convergence
        self.velocity = velocity
        self.motion = motion
    }
}

/// A change of the session-level convergence (conditions that are not about one object).
public struct SessionConvergenceUpdate: Sendable, Hashable {
    /// Time of the change, seconds.
    public var timestamp: Double
    /// The session-level convergence from then on (lighting, VIO tracking).
    public var convergence: AlgorithmConvergence

    /// A change at `timestamp` (seconds) to `convergence`.
    public init(timestamp: Double, convergence: AlgorithmConvergence) {
        self.timestamp = timestamp
        self.convergence = convergence
    }
}

// MARK: - Bounds of what is published

extension NearbyObjectEstimate {
    /// The largest magnitude, metres, of a published position coordinate (world frame): the
    /// recording format's bound on the coordinates it accepts (1,000 km from the VIO origin),
    /// so that whatever the engine publishes can be written and read back.
    public static let largestCoordinateMetres = 1e6
    /// The largest published distance, metres: the recording format's bound on a range
    /// (no UWB or Channel Sounding radio reaches a kilometre).
    public static let largestDistanceMetres = 1e3

    /// Withholds (`nil`) an output beyond the format's bounds: a `worldTransform` whose
    /// translation has a coordinate beyond ±``largestCoordinateMetres`` (an object estimated
    /// just past the edge of an accepted VIO frame), and a `distance` beyond
    /// ``largestDistanceMetres``. Everything else is left as it is.
    @inline(__always)
    mutating func withholdOutputsBeyondBounds() {
        if let w = worldTransform {
            let p = w.translation
            let m = Self.largestCoordinateMetres
            if !(abs(p.x) <= m && abs(p.y) <= m && abs(p.z) <= m) { worldTransform = nil }
        }
        if let d = distance, !(d <= Self.largestDistanceMetres) { distance = nil }
    }
}
