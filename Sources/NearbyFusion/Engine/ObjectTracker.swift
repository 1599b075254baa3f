import Foundation

/// Everything the engine keeps about one nearby object, and the object's whole update:
/// fusion through its lifecycle (``Phase``), then what is published.
struct ObjectTracker: Sendable {
    /// Where an object's estimate is in its life.
    enum Phase: Sendable, Hashable {
        /// No estimate: before the first range, after a removal or a reset.
        case idle
        /// A static object being located: a Gaussian sum over its position, every
        /// hypothesis re-solved from the window of updates (`BatchRefinement`).
        case acquiring
        /// One Gaussian, tracked by the stationary / constant-velocity IMM
        /// (`InteractingMultipleModel`): the object may keep still or move.
        case tracking
    }

    let objectID: String
    let kind: ObjectKind
    /// The radio that ranges to it.
    let ranging: RangingTechnology
    /// The engine's options for this object's radio (``FusionOptions/forRanging(_:)``),
    /// shared by reference.
    let optionsBox: OptionsBox
    /// Changed only by the transitions: ``resetEstimate()``, `initialise` (→ acquiring) and
    /// ``startTracking(meanInWorld:covariance:options:)``.
    var phase = Phase.idle
    /// The position estimate the convergence analysis and the outputs read: the Gaussian
    /// sum while acquiring, the IMM's combined position (one hypothesis) while tracking.
    var mixture: PositionMixture

    /// The position estimate the engine reports (``FusionEngine/moments(_:)``, the snapshot):
    /// ``mixture``'s moments, or — while the object is acquired and what its ranges leave open
    /// is a turn about the device — its moments on the spheres about the latest antenna
    /// position (``PositionMixture/momentsOnSphere(about:)``). Two cases:
    ///
    /// - **An object that may move.** Ranges alone do not tell a relative path from the same
    ///   path rotated about the device: with the object at `x + v (t − t₀)` and the device at
    ///   `a + w (t − t₀)`, every range `‖(x − a) + (v − w)(t − t₀)‖` is unchanged when `x − a`
    ///   and `v − w` turn together by any rotation, which moves `x` on the sphere of its
    ///   distance about `a`.
    /// - **A still object ranged from about one place**: every antenna position of the window
    ///   within ``sphereCentreFraction`` of the object's distance from the latest. Its ranges
    ///   then fix only that distance about (nearly) one centre. A device that walked leaves a
    ///   ring about its path instead, whose centre is not the device: there the flat moments
    ///   stand.
    ///
    /// A hypothesis whose bearing the ranges have not fixed is spread over that sphere, tens of
    /// degrees across; its Gaussian, flat in the tangent plane, would claim the distance from
    /// the device to centimetres at points the sphere puts metres inside it.
    var reportedMoments: MixtureMoments {
        guard phase == .acquiring, let a = window.entries.last?.antennaInWorld else { return mixture.moments }
        if mayMove { return mixture.momentsOnSphere(about: a) }
        return isRangedFromAboutOnePlace(latest: a) ? mixture.momentsOnSphere(about: a) : mixture.moments
    }

    /// Whether every antenna position of the window lies within ``sphereCentreFraction`` of
    /// the fused distance from `a`, the latest (world frame, metres): a still object's ranges
    /// then all come from about one place.
    @inline(__always)
    func isRangedFromAboutOnePlace(latest a: Vector3) -> Bool {
        let reach = Self.sphereCentreFraction * fusedDistance(from: a)
        for e in window.entries where (e.antennaInWorld - a).lengthSquared > reach * reach { return false }
        return true
    }

    /// How far, as a fraction of a still object's distance, the antenna may have been from its
    /// latest position over the window for the object to be reported on the sphere about it
    /// (``reportedMoments``): the sphere's centre is then known to a tenth of its radius.
    static let sphereCentreFraction = 0.1
    var window: MeasurementWindow
    /// A still Channel Sounding accessory's acquisition density when the options ask for a grid
    /// of directions (``FusionOptions/ChannelSounding/AcquisitionDensity/directionGrid``): the bank is then
    /// written from it (`writeBankFromGrid(options:)`) instead of re-solved from the window.
    var directionGrid: DirectionGrid?
    /// The motion model; meaningful only while ``phase`` is `tracking`. Stored, not
    /// optional, so that each update works on it in place (no copy of its ~500 bytes in and
    /// out of an optional).
    var motion = InteractingMultipleModel.idle
    /// The velocity published after the last tracking step, m/s, world frame.
    var publishedVelocity = Vector3.zero
    /// The tests that say the estimate no longer holds, from its ranges (``RestartTests``).
    var restarts = RestartTests()
    /// Ranges left before a still Channel Sounding accessory's acquisition, re-solved after its
    /// ranges ran long, may publish again (see `fuse`); 0 outside such a probation.
    var probationRangesLeft = 0
    /// The share of a tracked object's position covariance a considered range bias gives it
    /// (``FusionOptions/Sensors/rangeBiasStandardDeviation``), fixed at hand-off, m².
    var consideredCovariance = Matrix3.zero
    /// Whether it is added (a flag, so that the steady-state update skips the 3×3 sum).
    var considersRangeBias = false
    /// The published distance of a Channel Sounding object (`DistanceSmoother`).
    var distanceSmoother = DistanceSmoother()
    /// The published distance of a peer not located yet (`RangeSpikeGuard`).
    var spikeGuard = RangeSpikeGuard()
    /// Changes whenever the position estimate starts over (a reset, a first range, a
    /// re-tiled bank): the smoother does not read its jump as motion.
    var estimateGeneration = 0
    /// What the app says about the object's motion (`updateMotionState`).
    var motionHint = MotionActivityState.unknown
    /// The motion last decided from the IMM (see ``decideMotion(_:)``).
    var reportedMotion = MotionActivityState.unknown
    var updatesSinceRefinement = 0
    /// Linearisations of the whole window since the object was registered (``ObjectStateSnapshot/windowPasses``).
    var windowPasses = 0
    /// The window entries those linearisations read (``ObjectStateSnapshot/windowEntriesLinearised``).
    var windowEntriesLinearised = 0
    /// The storage the acquisition's window passes work in (`BatchRefinement.scratchCount(entries:)`
    /// doubles for a full window), made once: a temporary allocation that large lies on the heap.
    var passScratch: ContiguousArray<Double>
    /// The range density's line-of-sight and multipath terms as piecewise series
    /// (`RangeDensityPieces`), for a radio whose ranges may be multipath (Channel Sounding):
    /// storage made once, fitted again when the noise in use changes
    /// (`refineStillBatch(options:addedVariance:)`).
    var densityPieces: RangeDensityPieces
    /// Σ q of every prediction since the bank was tiled, m² (VIO drift the batch adds back).
    var processVarianceSinceInitialisation = 0.0
    /// When the current acquisition began (its first range), seconds.
    var acquisitionStartTime = 0.0
    /// Device path length when the bank was tiled, metres.
    var pathLengthAtInitialisation = 0.0
    var movement = MovementAccumulator()
    /// Time of the last prediction, seconds.
    var lastPredictionTime: Double?
    /// Device path length (metres) at the last prediction.
    var pathLengthAtLastPrediction = 0.0
    /// Time the object was registered or first updated, seconds.
    var firstUpdateTime: Double?
    /// Time of the last usable range the radio reported (valid, and within
    /// ``FusionOptions/Coaching/maximumRange``; fused or not), seconds.
    var lastUsableRangeTime: Double?
    /// The range variance the object's ranges are weighed with, as `2^level` times
    /// ``FusionOptions/Sensors/rangeStandardDeviation``'s square: for an object that may move,
    /// learned from its ranges' scatter and its batch's residuals
    /// (`learnMovingRangeNoise(now:options:)`), 0 to 4; for a Channel Sounding object, from
    /// its ranges' scatter alone (`learnChannelSoundingRangeNoise(at:antennaInWorld:pose:context:)`), −3 to −1
    /// (a quieter radio), 0, or 2 to 8.
    var rangeNoiseLevel = 0
    /// `2^rangeNoiseLevel`: the factor on the configured range variance. (Inlined: called
    /// from the update, a getter on the tracker took a copy of the whole tracker.)
    var rangeVarianceScale: Double {
        @inline(__always) get { Double(sign: .plus, exponent: rangeNoiseLevel, significand: 1) }
    }
    /// The ranges' own scatter (`noteRangeScatter(_:at:variance:)`,
    /// `noteChannelSoundingRange(_:at:antennaInWorld:pose:context:)`): the last two fresh ranges
    /// and their times, the variance estimate, m², and how many second differences it holds.
    var rangeScatterHistory: ((t: Double, r: Double)?, (t: Double, r: Double)?) = (nil, nil)
    /// (See ``rangeScatterHistory``.)
    var rangeScatterVariance = 0.0
    /// (See ``rangeScatterHistory``.)
    var rangeScatterCount = 0
    /// `φ̂`, the correlation of consecutive range errors learned from the moving batch's
    /// residuals (`learnMovingRangeNoise(now:options:)`), 0 to 0.98; 0 until learned, and
    /// for errors that pass as independent. Kept across acquisitions (it is the radio's).
    var learnedRangeErrorCorrelation = 0.0
    /// The mean of `ln(d²/6)` over the same second differences `d` (metres; the mean of the
    /// first 20, then an exponential average over about 20): the robust scatter a Channel
    /// Sounding object's noise is learned from (`learnChannelSoundingRangeNoise(at:antennaInWorld:pose:context:)`).
    var rangeLogScatter = 0.0
    /// The mean interval between usable ranges, seconds (an exponential average over about
    /// ten): the radio's rate, which sets how many ranges a step of guidance brings.
    var meanRangeInterval: Double?
    /// What tells a stale repeat from an honest one (``isStaleRepeat(_:)``).
    var staleRepeats = StaleRepeatDetector()
    /// The guidance last computed, and when (it is computed afresh at most once per
    /// ``FusionOptions/Coaching/guidanceInterval``).
    var guidance: MotionGuidance?
    var guidanceTime = -Double.infinity
    /// The bank's size when the guidance was last computed.
    var guidanceBankSize = 0
    /// Time of the last update that was fused (``FusionOptions/Sensors/minimumFusionInterval``),
    /// seconds.
    var lastFusionTime: Double?
    /// This estimate has been published as converged (a converged estimate tolerates longer
    /// runs of rejected ranges before it is reset).
    var hasConverged = false
    /// A tracked Channel Sounding object that has converged: when its status fell back to
    /// not converged (seconds), and whether the next range should acquire it afresh
    /// (``FusionOptions/ChannelSounding/reacquireSeconds``).
    var unconvergedSince: Double?
    var reacquires = false
    /// Where an object no direction reaches was (its estimate's moments, world frame, m and
    /// m²) when the app said it started to move, and since when (seconds): the prior of its
    /// fresh acquisition (``FusionOptions/Carry/speed``); `nil` once it converged again.
    var carryOrigin: CarryOrigin?
    struct CarryOrigin: Sendable {
        var meanInWorld: Vector3
        var covariance: Matrix3
        var since: Double
    }
    /// What the coaching remembers between updates (latched movement, hysteresis).
    var coaching = CoachingMemory()
    var removed = false

    /// The convergence analysis's state carried from one update to the next.
    struct CoachingMemory: Sendable {
        /// The device has moved enough while ranging this estimate (latched).
        var movementSufficient = false
        /// Last verdicts, for the hysteresis of `ConvergenceAnalysis`.
        var previousResolution = (horizontal: false, vertical: false)
        /// The bearing alone was resolved at the last update (see
        /// `ConvergenceAssessment.bearingResolved`).
        var previousBearing = false
        var lastAssessment: ConvergenceAssessment?
        /// The position is judged by a moving object's thresholds (see `holdsMovingThresholds`).
        var movingThresholdsHeld = false
    }

    init(objectID: String, kind: ObjectKind, ranging: RangingTechnology, options: FusionOptions) {
        self.objectID = objectID
        self.kind = kind
        self.ranging = ranging
        let radioOptions = options.forRanging(ranging)
        self.optionsBox = OptionsBox(radioOptions)
        let capacity = radioOptions.acquisition.maximumHypotheses, windowCapacity = radioOptions.acquisition.batchWindowCapacity
        self.mixture = PositionMixture(capacity: capacity)
        self.window = MeasurementWindow(capacity: windowCapacity)
        self.passScratch = ContiguousArray(repeating: 0, count: BatchRefinement.scratchCount(entries: windowCapacity))
        let density = radioOptions.rangeErrorDensity
        var pieces = RangeDensityPieces(capacity: density.excessDensity > 0 ? RangeDensityPieces.maximumPieceCount : 0)
        pieces.prepare(density, variance: radioOptions.sensors.rangeStandardDeviation * radioOptions.sensors.rangeStandardDeviation)
        self.densityPieces = pieces
        self.directionGrid = Self.makeDirectionGrid(kind: kind, ranging: ranging, options: radioOptions)
    }

    /// Forgets the position estimate (a re-initialisation starts from the next range).
    mutating func resetEstimate() {
        phase = .idle
        estimateGeneration &+= 1
        mixture.removeAll()   // keeping its storage: a reset on the update path allocates nothing
        window.removeAll()
        reportedMotion = .unknown
        restarts.clearTrends()
        probationRangesLeft = 0
        unconvergedSince = nil
        reacquires = false
        consideredCovariance = .zero
        considersRangeBias = false
        updatesSinceRefinement = 0
        movement = MovementAccumulator()
        restarts.clearRejections()
        coaching = CoachingMemory()
    }

    /// Ends tracking (a `removed` event); a later update starts afresh.
    mutating func remove() {
        resetEstimate()
        distanceSmoother = DistanceSmoother()
        spikeGuard = RangeSpikeGuard()
        carryOrigin = nil
        removed = true
        lastUsableRangeTime = nil
        meanRangeInterval = nil
        rangeNoiseLevel = 0
        rangeScatterHistory = (nil, nil)
        rangeScatterVariance = 0
        rangeScatterCount = 0
        learnedRangeErrorCorrelation = 0
        rangeLogScatter = 0
        staleRepeats = StaleRepeatDetector()
        guidance = nil
        guidanceTime = -.infinity
        guidanceBankSize = 0
        lastFusionTime = nil
        firstUpdateTime = nil
        hasConverged = false
    }

    /// Starts tracking from a known Gaussian position (an earlier session's anchor, or an
    /// acquisition that has settled).
    mutating func startTracking(meanInWorld: Vector3, covariance: Matrix3, options: FusionOptions,
                                kinematics: KinematicGaussian? = nil) {
        let prior = motionPrior(options)
        let velocityPriorVariance = options.motion.velocityPriorStandardDeviation * options.motion.velocityPriorStandardDeviation
        let movingProbability = motionHint == .moving ? 1 : (motionHint == .stationary ? 0 : prior.initialMovingProbability)
        if let kinematics {
            motion = InteractingMultipleModel(kinematics: kinematics, velocityPriorVariance: velocityPriorVariance,
                                              movingProbability: movingProbability)
        } else {
            motion = InteractingMultipleModel(positionInWorld: meanInWorld, positionCovariance: covariance,
                                              velocityPriorVariance: velocityPriorVariance, movingProbability: movingProbability)
        }
        motion.wakeProbability = options.motion.movingModelSleeps ? 1 - options.motion.modeCertainty : 0
        mixture.reset(meanInWorld: meanInWorld, covariance: covariance)
        publishedVelocity = .zero
        phase = .tracking
    }

    /// The motion prior of this kind of object. (Inlined, as `mayMove` below: an outlined
    /// call from a mutating method copied the whole tracker, ~1.2 kB, to read two fields.)
    @inline(__always)
    func motionPrior(_ options: FusionOptions) -> MotionPrior {
        kind == .peer ? options.motion.peerMotionPrior : options.motion.accessoryMotionPrior
    }

    /// Whether the object may be moving, as far as the app and its kind say: peers (people
    /// walk) unless the app says they keep still, and anything the app says moves.
    @inline(__always)
    var mayMove: Bool { motionHint == .moving || (kind == .peer && motionHint != .stationary) }

    /// The estimated motion after this update: the app's hint when it gave one; otherwise,
    /// while tracking, `moving` once the IMM's moving probability reaches
    /// ``FusionOptions/Motion/motionDecisionProbability`` and `stationary` once its still mode's
    /// reaches ``FusionOptions/Motion/stationaryDecisionProbability``, each held (hysteresis) until
    /// the other is reached, so that a slow walker whose mode probability wanders does not
    /// flip the report and the coaching with it; `unknown` before either.
    mutating func decideMotion(_ options: FusionOptions) -> MotionActivityState {
        if motionHint != .unknown { return motionHint }
        guard phase == .tracking else {
            reportedMotion = .unknown
            return .unknown
        }
        if motion.movingProbability >= options.motion.motionDecisionProbability { reportedMotion = .moving }
        else if 1 - motion.movingProbability >= options.motion.stationaryDecisionProbability { reportedMotion = .stationary }
        return reportedMotion
    }
}

/// A cheap reference to an object registered with a ``FusionEngine`` (an index), so the
/// per-update path does no string hashing.
public struct ObjectHandle: Sendable, Hashable {
    /// The object's place in the engine, in the order of registration.
    public let index: Int
}

/// A read-only view of an object's estimator state, for evaluation and tests.
public struct ObjectStateSnapshot: Sendable {
    /// The object's identifier.
    public var objectID: String
    /// The mixture's mean and covariance (world frame, metres, m²); `nil` before the
    /// first range.
    public var moments: MixtureMoments?
    /// Number of hypotheses in the bank.
    public var hypothesisCount: Int
    /// The hypotheses themselves (the estimator's machinery, `@_spi(Internals)`).
    @_spi(Internals) public var hypotheses: [PositionHypothesis]
    /// The last convergence assessment (`@_spi(Internals)`).
    @_spi(Internals) public var assessment: ConvergenceAssessment?
    /// The motion model's combined position and velocity while tracking (`@_spi(Internals)`).
    @_spi(Internals) public var kinematics: KinematicGaussian?
    /// The motion model's probability that the object moves, while tracking.
    public var movingProbability: Double?
    /// How many times ``FusionOptions/Sensors/rangeStandardDeviation``'s variance the object's
    /// ranges are weighed with, learned from them (`@_spi(Internals)`).
    @_spi(Internals) public var rangeVarianceScale: Double = 1
    /// How many times the acquisition has linearised its whole window of stored updates since
    /// the object was registered (a hypothesis solved from its prior, or its kept model rebuilt):
    /// the acquisition's work, counted the same on every machine.
    public var windowPasses = 0
    /// The window entries those linearisations read, summed: a pass over 160 entries costs
    /// about ten times one over 16, which ``windowPasses`` does not show. Counted the same on
    /// every machine.
    public var windowEntriesLinearised = 0
    /// A Channel Sounding object's published-distance filter (its learned noise among it,
    /// ``DistanceSmoother/learnedVariance``); `nil` for any other object (`@_spi(Internals)`).
    @_spi(Internals) public var distanceFilter: DistanceSmoother?
}
