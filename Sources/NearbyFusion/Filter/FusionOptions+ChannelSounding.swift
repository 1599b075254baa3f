import Foundation

extension FusionOptions {
    /// A Bluetooth Channel Sounding radio, which ``FusionOptions/forRanging(_:)`` applies in place of UWB's figures.
    public struct ChannelSounding: Sendable, Hashable {
        /// Range noise σ of a Channel Sounding accessory, metres. Phone-class antennas and the
        /// standard's phase-based ranging over at most 80 MHz give a jitter of 0.3–0.6 m
        /// ("±0.5 m is the best to expect" without super-resolution estimators; decimetres only
        /// with them): Bluetooth SIG, *Channel Sounding technical overview* (2024), §2.2;
        /// Ulsamer, Mazur and Knauth, "Study of BLE6 Ranging Performance in a Utility
        /// Basement", CEUR-WS Vol-4047 (2025), which measures IFFT/slope/RTT estimators on BLE6
        /// hardware in open ground and under strong multipath. 0.38 m, in that range, trades
        /// two of the simulated radio's targets against each other: a smaller σ lets a far tag
        /// publish its first angle sooner, but puts a coached tag's converged `worldTransform`
        /// further off (its median past 0.5 m at 0.35–0.37 m) and a planar sweep's mean NEES
        /// further above the χ² band. Compare `accuracy --seeds 50 --scenario cs-coached-step
        /// --scenario cs-planar-sweeps --scenario cs-far` with and without `--cs-range-sigma 0.35`.
        public var rangeStandardDeviation: Double = 0.38
        /// σ of the range bias a Channel Sounding radio may carry, as a fraction of the
        /// object's distance: a Channel Sounding object considers a common bias of σ
        /// `f · d` in every refinement and update (``FusionOptions/Sensors/rangeBiasStandardDeviation``,
        /// whose value applies instead where it is larger), `d` its fused distance in metres
        /// (its range before it has an estimate).
        ///
        /// Channel Sounding ranges are not calibrated the way a phone's UWB is. Measured board
        /// to board, an inverse-FFT estimator reads about 2.7 % of the distance short
        /// (0.1–1.2 m at 5–45 m), a phase-slope one 0.9–5 m long, a round-trip-time one
        /// without bias. Weighed as unbiased, the ranges of a walk toward such a radio put the tag
        /// decimetres to metres off with a covariance that claims a fraction of that; the share
        /// of the position a common bias moves is considered instead (`σ_β² s sᵀ`, the
        /// Derivations article, "A range bias, considered"). A bias that grows with the distance
        /// costs a tag swept at arm's length little. 0.025: compare the mean NEES of
        /// `accuracy --scenario cs-ifft-walk --scenario cs-phase-walk --seeds 50` with and
        /// without `--cs-range-bias-fraction 0`. 0 takes the ranges as unbiased.
        public var rangeBiasFractionOfDistance: Double = 0.025
        /// Probability of a gross outlier among Channel Sounding ranges (a failed phase
        /// unwrapping, a ghost path), uniform over ``FusionOptions/Gating/rangeOutlierSpan``: the insurance that keeps
        /// one such range from wiping out a hypothesis, and softens the edge of the multipath term
        /// below (with 0.05 a range just past `L` cost a hypothesis 3 nats, and a far tag's
        /// bank was pruned down to its mirror image overhead).
        public var outlierProbability: Double = 0.1
        /// Multipath of a Channel Sounding range (``RangeErrorDensity``'s one-sided term): the
        /// probability `η` that a reflected path close behind the direct one makes the range
        /// long — 80 MHz resolves paths only `c / 2B` ≈ 1.9 m apart, so such a path biases the
        /// range long, often for several procedures in a row — and the largest such excess `L`,
        /// metres: that resolution plus the jitter.
        public var multipathProbability: Double = 0.2
        /// The largest multipath excess `L`, metres (see ``multipathProbability``).
        public var multipathMaximumExcess: Double = 2.5
        /// The lag-one correlation `φ` of consecutive Channel Sounding procedures' range errors
        /// that the noise learned from a radio's ranges allows for (`ObjectTracker`'s
        /// `learnChannelSoundingRangeNoise`): correlated errors shrink the second differences the
        /// noise is read from, `E[d²] = (6 − 8φ + 2φ²) σ²` instead of `6σ²` for independent ones,
        /// so a radio read as if they were independent has its variance taken as 0.75 of what it
        /// is at `φ = 0.2` (0.42 of a learned level, each level a factor of two in variance).
        /// Measured board to board, consecutive errors of all three estimators correlate
        /// 0.06–0.38 (Ulsamer, Mazur and Knauth, above): 0.2. It sets the learned level only;
        /// whether a radio is noisier than ``rangeStandardDeviation`` at all is judged as if its
        /// errors were independent (the least noise its differences allow), and whether it is
        /// quieter with this correlation allowed for (the most). 0 reads them as
        /// independent (compare `accuracy --scenario cs-rtt-still --seeds 50` with
        /// `--cs-error-correlation 0`); values beyond [0, 0.95] are taken as the nearer end.
        public var errorCorrelation: Double = 0.2
        /// Mean duration of a Channel Sounding multipath burst, seconds
        /// (``FusionOptions/Gating/rangeMultipathBurstSeconds``). A reflection that the 80 MHz band cannot separate
        /// persists while the hand moves less than a fraction of a metre; no published figure
        /// for phones exists, so this is the scale of the simulator's bursts (3 procedures at
        /// 2.5–5 Hz, 0.6–1.2 s), to be measured on real recordings when there are some.
        public var multipathBurstSeconds: Double = 0.8
        /// What ``FusionOptions/Acquisition/relinearisationTolerance`` is multiplied by for a
        /// Channel Sounding tag. Its σ is nearly four times UWB's, so the same fraction of it
        /// allows steps twice as long, while its burst chain's weights move with the residuals:
        /// a fraction of 0.003 keeps the converged `worldTransform` where the window solved
        /// whole puts it (compare `accuracy --scenario cs-coached-step --seeds 50` with
        /// `--relinearisation 0`).
        public var relinearisationToleranceScale: Double = 0.1
        /// White-acceleration intensity, m²/s³, of the part of a Channel Sounding object's
        /// distance that its position estimate does not explain (`DistanceSmoother`, which
        /// smooths the published `distance`): the estimate follows the device's own motion, so
        /// this is the object's own radial motion — none for a still tag, a carry when it is
        /// picked up. 0.1 rather than 0.5: a still tag's published distance errs less (its p95
        /// before a `worldTransform`, `cs-coached-step`) and lags less behind planar sweeps
        /// (`cs-planar-sweeps`), while a carried tag's is followed within a few hundredths of a
        /// second and a few centimetres as closely (`cs-carried`).
        public var distanceResidualAccelerationIntensity: Double = 0.1
        /// Ranges a still Channel Sounding accessory's acquisition publishes nothing after it was
        /// re-solved because its ranges ran long (a multipath burst, or the tag carried away: the
        /// range-trend test cannot tell them apart); ranges running long again within them start
        /// it afresh. Ten: the trend test needs eight ranges to fire, so a tag still being carried
        /// away is caught before its old place is shown.
        public var probationRanges: Int = 10
        /// The longest path, metres, the device may travel over the eight ranges of a trend
        /// (`ObjectTracker.movedAwayFromItsRanges`) for a still accessory being acquired to be
        /// re-solved from its window rather than acquired afresh, when its ranges ran *short*,
        /// and for a range that ran long to count as explained by the radio's multipath
        /// excess. Within it the user sweeps or steps in place, and a trend is a burst or a
        /// bank that an earlier one pulled long: the window that located the tag is kept.
        /// Beyond it the user walks, and ranges taken metres apart disagree through the
        /// radio's errors that grow with distance (a real estimator's scale error, a phase
        /// estimator's long bias): held together in one window they make a confident wrong
        /// place, so the acquisition starts afresh. 2 m: a step and a sweep, not a walk.
        public var inPlaceTrendPathMetres: Double = 2
        /// A Channel Sounding object whose ranges run *short*: at least
        /// ``approachRangeCount`` of its last ``approachRangeWindow`` normalised innovations
        /// `ν/√s` below −``approachThreshold`` publish no angle and no `worldTransform` until they
        /// no longer do (the estimate itself is untouched). No multipath shortens a range, so a
        /// run of short ones is a tag carried toward the user — or a bank that has not yet caught
        /// up, whose angle is not worth showing either. For a still tag whose innovations are
        /// standard normal, 3 of 5 below −1 happens on `Σₖ₌₃⁵ C(5,k) 0.16ᵏ 0.84⁵⁻ᵏ` = 3.2 % of
        /// updates; the eight-range trend test that restarts the acquisition needs four beyond
        /// 1.5 at the median, ~2 s of walking, during which a tag carried toward the user would
        /// otherwise be shown where it was. A window of 0 turns it off; windows beyond 8 count the
        /// last 8.
        public var approachRangeWindow: Int = 5
        /// How many of ``approachRangeWindow`` innovations must run short.
        public var approachRangeCount: Int = 3
        /// How far below zero a normalised innovation `ν/√s` runs short.
        public var approachThreshold: Double = 1.0
        /// Seconds without a range before the signal counts as insufficient, for Channel
        /// Sounding (2–5 procedures per second, fewer under Wi-Fi or Bluetooth traffic, some
        /// failing).
        public var signalTimeout: Double = 3.0
        /// Seconds a tracked Channel Sounding object that had converged may stay not converged
        /// before its next range acquires it afresh (0: never). Ranges alone cannot steer one
        /// Gaussian back across the line of sight: a tag dragged off while it converged can stand
        /// metres off with a shrinking σ, its ranges still explained because the error is
        /// lateral. Acquired afresh, the window's batch re-solves it (and its `motion` is
        /// `unknown` until it converges again).
        public var reacquireSeconds: Double = 3.0
        /// Coaching thresholds for a Channel Sounding accessory: the bearing σ at which its
        /// horizontal angle is published (radians), and the position σ across the line of sight
        /// and in height (metres, at least `positionFractionOfDistance` of the
        /// distance) at which it converges. Ranges 7× noisier than UWB's and no direction put a
        /// decimetre fix out of reach of hand sweeps: the bound after coached sweeps and a 1 m
        /// step at 5 m is a few degrees, so an angle is published at 10° σ and a
        /// `worldTransform` at 35 cm.
        public var angleThreshold: Double = Angle.radians(degrees: 10)
        /// The position σ across the line of sight, metres, at which a Channel Sounding object converges.
        public var positionThreshold: Double = 0.35
        /// …or this fraction of the distance, if larger.
        public var positionFractionOfDistance: Double = 0.1
        /// …and in height, metres. From ranges alone the height is seen only through the
        /// curvature of range against the device's height, `∂²r/∂h² ≈ 1/r`: ±50 cm sweeps at
        /// 4 m with 0.4 m noise bound it to about ±0.5 m, so a `worldTransform` is published at
        /// 0.6 m σ in height (its error is in the accuracy table).
        public var verticalPositionThreshold: Double = 0.6

        /// How a still Channel Sounding accessory is located before it is tracked
        /// (``AcquisitionDensity``).
        public var acquisitionDensity: AcquisitionDensity = .bank
        /// Directions of the grid when ``acquisitionDensity`` is ``AcquisitionDensity/directionGrid``
        /// (about `√(4π/n)` radians apart: 9° at 500).
        public var gridDirectionCount: Int = 500

        /// How a still Channel Sounding accessory's position is held from its ranges while it
        /// is acquired.
        public enum AcquisitionDensity: String, Sendable, Hashable, CaseIterable {
            /// A bank of Gaussians tiling the first range's sphere, every one re-solved from the
            /// window of updates (`BatchRefinement`): the ranges linearised again at each
            /// hypothesis's solution, so that its Gaussian is the posterior's own near its peak.
            case bank
            /// A grid of directions about the first range's antenna position, each holding a
            /// Gaussian over the distance along it, updated by each range once
            /// (`DirectionGrid`): the posterior's shape kept without a window's re-solution,
            /// several times cheaper per range. The convergence analysis reads the grid's
            /// bearing spread and distance, the coaching and the hand-off to tracking its
            /// moment-matched clusters.
            case directionGrid = "grid"
        }

        public init() {}
    }

    /// An accessory the app says is carried.
}
