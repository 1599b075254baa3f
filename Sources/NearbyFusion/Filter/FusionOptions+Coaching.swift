import Foundation

extension FusionOptions {
    /// The thresholds the convergence reasons are judged by.
    public struct Coaching: Sendable, Hashable {
        /// Largest standard deviation of the horizontal angle to publish it, radians.
        public var horizontalAngleThreshold: Double = Angle.radians(degrees: 3)
        /// How often an object's guidance (``NearbyObjectEstimate/guidance``) is computed afresh,
        /// seconds; between, the last is published. 0 computes none.
        public var guidanceInterval: Double = 1
        /// The pace at which a user follows guidance, m/s: with the radio's rate, how many
        /// ranges a step of guidance brings.
        public var guidanceWalkingSpeed: Double = 0.7
        /// The output the guidance works toward: `horizontalAngle` (the default; none once it
        /// is published) or `worldTransform` (the height too; none once it is published).
        public var guidanceOutput = MotionGuidance.Output.horizontalAngle
        /// Whether `horizontalAngle` is published once its bearing σ alone is within
        /// ``horizontalAngleThreshold`` (`true`), or only once the horizontal position is resolved
        /// too (`false`: the bearing *and* the position across the line of sight within
        /// ``horizontalPositionThreshold``). UWB keeps `false`: at 4 m its 12 cm across is 1.7°,
        /// finer than its 3°, and UWB reaches it within seconds. Channel Sounding sets `true`
        /// (``forRanging(_:)``): its 35 cm or 10 % of the distance across is 5.7° at any distance,
        /// so with `false` its 10° angle threshold would never act — the angle would wait for
        /// 5.7°, well after the Cramér–Rao bound allows 10°.
        /// `insufficientHorizontalSweep` keeps its meaning
        /// either way: it stands until the position across is resolved, for `worldTransform`.
        public var publishesAngleByBearingAlone: Bool = false
        /// Largest standard deviation across the line of sight (horizontal) of the position
        /// along any principal axis of its covariance, metres, at or below 6 m away…
        public var horizontalPositionThreshold: Double = 0.12
        /// …and the same for the rest (vertical, and the elevation ↔ distance trade-off).
        public var verticalPositionThreshold: Double = 0.12
        /// Beyond 6 m both position thresholds grow to this fraction of the distance (a
        /// 5°-elevation radio cannot place an object 8 m away to 12 cm in a few seconds).
        public var positionThresholdFractionOfDistance: Double = 0.02
        /// Probability at which a vertical category (`same`, `above`, `below`) is established.
        public var verticalProbability: Double = 0.95
        /// |Δy| up to which the object counts as on the device's level, metres.
        public var levelTolerance: Double = 2.0
        /// Once resolved, an axis is unresolved again only when its standard deviation
        /// exceeds `hysteresis ×` the threshold (stops coaching from flickering).
        public var hysteresis: Double = 1.5
        /// Smallest RMS spread of the device's positions while ranging (largest principal
        /// axis), metres, below which the user is asked to move.
        public var minimumMovement: Double = 0.05
        /// Ambient light, lumens, below which VIO is lighting-limited.
        public var minimumAmbientIntensity: Double = 100
        /// Seconds without a usable range (a valid one within ``maximumRange``) after which the
        /// signal counts as insufficient.
        public var signalTimeout: Double = 2.0
        /// Ranges beyond this, metres, are too far to use (never fused; when every range for
        /// ``signalTimeout`` seconds is beyond it, the signal is reported insufficient). UWB in
        /// line of sight ranges usefully to tens of metres: the real NTU
        /// VIRAL sessions give usable ranges to 45 m, and a lone reading of 60–120 m among
        /// 20–30 m neighbours is a multipath ghost. Their noise is ``FusionOptions/Sensors/rangeErrorFraction``'s.
        public var maximumRange: Double = 60
        /// While an object that may move (a peer, or one the app says moves) is reported
        /// `moving`, the position thresholds of the coaching are
        /// at least this, metres: a moving object is located only as well as the latest few
        /// measurements allow, and its `horizontalAngle` (still held to
        /// `horizontalAngleThreshold`) and a `worldTransform` of where it is now are what
        /// matter, not a decimetre fix no sweep can give. An estimate that combines a still and
        /// a moving model, the moving one with probability `w`, is held to
        /// `√((1 − w) T² + w max(T, this)²)` (`ConvergenceAnalysis`).
        public var movingPositionThreshold: Double = 0.25

        public init() {}
    }

    /// A Bluetooth Channel Sounding radio, which `forRanging(_:)` applies.
}
