import Foundation

extension FusionOptions {
    /// Gates, outliers and the runs of rejected ranges that restart an estimate.
    public struct Gating: Sendable, Hashable {
        /// Chi-square gate for one range (1 dof); 6.63 is the 99 % quantile.
        public var rangeGate: Double = 6.63
        /// Chi-square gate for one direction (2 dof); 9.21 is the 99 % quantile.
        public var directionGate: Double = 9.21
        /// Prior probability that a measurement is an outlier (non-line-of-sight range,
        /// multipath bearing). Used in the robust component likelihood
        /// `(1 − ε) N(ν; 0, S) + ε / span`, so one outlier cannot wipe out the right hypothesis.
        public var outlierProbability: Double = 0.2
        /// Span of the uniform outlier density for ranges, metres.
        public var rangeOutlierSpan: Double = 10
        /// In the batch of an object that may move (its position and velocity from the
        /// window's ranges, `BatchRefinement.refineMoving`), the density of gross outliers
        /// *short* of the prediction, as a fraction of ``outlierProbability``'s `ε/span`, which
        /// the long ones keep. A UWB range errs long when it errs far — a blocked or missed first
        /// path arrives late, never early (phone-to-phone logs between walking people: a tail
        /// to +0.56 m and none below) — so a range metres short of a hypothesis is evidence
        /// against it, not an outlier it may set aside. Weighed symmetrically, a walker's ring of
        /// hypotheses about a device it passes within centimetres set aside the short ranges of
        /// the pass and kept only the few that happened to follow them, whichever way they went
        /// (`accuracy --scenario distance-only-turning-peer --first-seed 49 --seeds 1
        /// --moving-short-outliers 1`: a position 1.1 m off reported with NEES 262). 1 weighs
        /// both sides alike; Channel Sounding, whose iFFT estimator reads short when it errs,
        /// sets 1 (``FusionOptions/forRanging(_:)``). A still object's batch weighs both sides
        /// alike whatever this says: real anchors' ranges carry short errors too.
        public var movingShortOutlierFraction: Double = 0.001
        /// `η`, the probability that a range is long by an unresolved multipath excess
        /// `U(0, L)` (the one-sided term of ``RangeErrorDensity``), and `L`, metres. 0 for UWB,
        /// whose 500 MHz resolves reflections 30 cm behind the direct path (its rarer
        /// non-line-of-sight ranges are the gross outliers above); Channel Sounding sets both.
        public var rangeMultipathProbability: Double = 0
        /// The largest multipath excess `L`, metres (see ``rangeMultipathProbability``).
        public var rangeMultipathMaximumExcess: Double = 0
        /// Mean duration of a multipath burst, seconds: a reflected path lasts while the geometry
        /// that makes it does, so long ranges come in runs. The batch acquisition then weighs the
        /// ranges through a two-state Markov chain (line of sight / multipath, stationary
        /// multipath probability `η`) instead of as independent draws (`BatchRefinement`).
        /// 0 (UWB): independent.
        public var rangeMultipathBurstSeconds: Double = 0
        /// Span of the uniform outlier density for each direction angle, radians.
        public var angleOutlierSpan: Double = .pi
        /// Consecutive rejected ranges after which the estimate is re-initialised from the
        /// next range, before the object has converged (a first range that was NLOS leaves
        /// the whole bank on too large a sphere).
        public var rejectionsBeforeReset: Int = 5
        /// The same, once converged (long occlusions should not discard a good estimate).
        public var rejectionsBeforeResetWhenConverged: Int = 30
        /// The same for a converged object held still on a device without direction finding
        /// whose rejected ranges are all too long (a blocked line of sight, not motion): 60 s of
        /// ranges at 10 Hz. If it was in fact carried away, it is re-acquired after that.
        public var rejectionsBeforeResetWhenBlocked: Int = 600
        /// How much longer than the estimate predicts a rejected range must be to count as a
        /// blocked line of sight (above), metres: more than a converged estimate's error and the
        /// long-range noise (σ 0.16 m at 30 m) explain.
        public var blockedRangeExcess: Double = 1.0
        /// A step between consecutive rejected ranges larger than this, metres, is a jump: a
        /// blocked path's ranges jump by metres, a carried tag's move by walking speed × the
        /// interval (≈ 0.15 m at 10 Hz).
        public var blockedRangeJump: Double = 1.0
        /// A tracked UWB object expected to keep still whose last eight ranges run away from its
        /// still model *smoothly* — each excess `z − ‖p_s − a‖` within this many metres of the one
        /// before, and the last at least ``runAwayRise`` beyond the first — is being carried away
        /// (along the line of sight, where its direction does not change): those ranges are no
        /// longer set aside for both motion models as a multipath burst's are, and the moving
        /// model follows them. A burst of multipath lengthens ranges by a step of 0.5–2 m and
        /// then scatters them; a carry lengthens each by walking speed × the interval (0.08 m at
        /// 0.8 m/s and 10 Hz); a still tag's excesses differ by its range noise (σ √2 × 6 cm).
        /// 0 turns the test off.
        public var runAwayStep: Double = 0.35
        /// Metres: see ``runAwayStep`` (0.4 m over eight ranges is 4.7σ of a still tag's noise).
        public var runAwayRise: Double = 0.4

        public init() {}
    }

    /// How objects and the VIO move: process noise and the tracking IMM.
}
