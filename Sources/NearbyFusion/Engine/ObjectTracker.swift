/// Everything the engine keeps about one nearby object.
struct ObjectTracker: Sendable {
    let objectID: String
    let kind: ObjectKind
    var mixture: PositionMixture
    var window: MeasurementWindow
    var updatesSinceRefinement = 0
    /// Σ q of every prediction since the bank was tiled, m² (VIO drift the batch adds back).
    var processVarianceSinceInitialisation = 0.0
    /// Device path length when the bank was tiled, metres.
    var pathLengthAtInitialisation = 0.0
    var movement = MovementAccumulator()
    /// Time of the last prediction, seconds.
    var lastPredictionTime: Double?
    /// Device path length (metres) at the last prediction.
    var pathLengthAtLastPrediction = 0.0
    /// Time the object was registered or first updated, seconds.
    var firstUpdateTime: Double?
    var lastRangeMetres: Double?
    /// Time of the last valid range the radio reported, seconds.
    var lastRangeTime: Double?
    var consecutiveRejections = 0
    var hasConverged = false
    /// The bank has collapsed to one resolved hypothesis: EKF tracking instead of batch acquisition.
    var settled = false
    /// The device has moved enough while ranging this estimate (latched).
    var movementSufficient = false
    var previousResolution = (horizontal: false, vertical: false)
    var lastAssessment: ConvergenceAssessment?
    var removed = false

    init(objectID: String, kind: ObjectKind, capacity: Int, windowCapacity: Int) {
        self.objectID = objectID
        self.kind = kind
        self.mixture = PositionMixture(capacity: capacity)
        self.window = MeasurementWindow(capacity: windowCapacity)
    }

    /// Forgets the position estimate (a re-initialisation starts from the next range).
    mutating func resetEstimate() {
        mixture = PositionMixture(capacity: mixture.capacity)
        window.removeAll()
        updatesSinceRefinement = 0
        movement = MovementAccumulator()
        consecutiveRejections = 0
        previousResolution = (false, false)
        settled = false
        lastAssessment = nil
    }
}

/// A cheap reference to an object registered with a ``FusionEngine`` (an index), so the
/// per-update path does no string hashing.
public struct ObjectHandle: Sendable, Hashable {
    public let index: Int
}

/// A read-only view of an object's estimator state, for evaluation and tests.
public struct ObjectStateSnapshot: Sendable {
    public var objectID: String
    /// The mixture's mean and covariance (world frame, metres, m²); `nil` before the
    /// first range.
    public var moments: MixtureMoments?
    /// Number of hypotheses in the bank.
    public var hypothesisCount: Int
    /// The hypotheses themselves.
    public var hypotheses: [PositionHypothesis]
    /// The last convergence assessment.
    public var assessment: ConvergenceAssessment?
}
