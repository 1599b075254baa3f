import Foundation

extension FusionOptions {
    /// The radio and its errors.
    public struct Sensors: Sendable, Hashable {
        /// UWB range noise σ, metres.
        public var rangeStandardDeviation: Double = 0.06
        /// `k`, the part of the range error that grows with the range, as a fraction of it:
        /// the noise of a range `z` is `σ(z)² = σ_r² + (k z)²`. Two effects scale with
        /// distance: the jitter (the received SNR falls as `1/z²`, and the time-of-arrival
        /// error as `1/√SNR`, i.e. as `z`) and the systematic error of clock and antenna-delay
        /// calibration (a scale error). Measured on the real NTU VIRAL sessions
        /// (NTU VIRAL): the update-to-update jitter alone is
        /// 0.03–0.05 m within 20 m, 0.06–0.10 m at 20–35 m and 0.15 m beyond; against the
        /// filter's own prediction the long ranges (25–30 m) run 0.5–1.5 m off for seconds at
        /// a time, which a constant 6 cm makes a string of rejections and a reset. With
        /// `k = 0.005` a 30 m range has σ 0.16 m, a 5 m range 0.062 m.
        public var rangeErrorFraction: Double = 0.005
        /// UWB azimuth noise σ, radians (device frame).
        public var azimuthStandardDeviation: Double = Angle.radians(degrees: 3)
        /// UWB elevation noise σ, radians (device frame).
        public var elevationStandardDeviation: Double = Angle.radians(degrees: 5)
        /// Half-angle of the cone around the device's −Z axis inside which the radio
        /// reports a direction, radians.
        public var fieldOfViewHalfAngle: Double = Angle.radians(degrees: 55)
        /// Position of the UWB antenna relative to the VIO camera, device frame, metres.
        public var antennaOffsetInDevice: Vector3 = .zero
        /// The shortest time, seconds, between two updates of one object that are both fused: an
        /// update sooner than this after the last fused one is published (its distance, the
        /// estimate as it stands) but not fused. A radio's rate is the receiver's choice, and
        /// real range errors last far longer than the interval of a fast one: on the LIAS planar
        /// UWB session (`nearby-fusion convert lias-planar-uwb`, ~88 Hz per anchor) they are
        /// correlated 0.88 at 10 ms and 0.7 at 0.1 s. Each fused update is weighed as an
        /// independent draw, so at 88 Hz the filter would count the same error nine times over
        /// and claim nine times the information the ranges hold.
        /// Every count in these options (rejections before a reset, the eight-range trend, the
        /// probation, the blocked-path allowance of 600 ranges = 60 s) also means a span of time
        /// only at the rate it was set for, ~10 Hz. 0.09 s lets every 10 Hz radio through
        /// untouched (the simulated UWB, the real drone sessions' 5.7 Hz per anchor, 2–5 Hz
        /// Channel Sounding), whatever their timing jitter; 0 fuses every update.
        public var minimumFusionInterval: Double = 0.09
        /// σ of a constant bias the ranges may carry, metres: 0 (the default) takes them as
        /// unbiased, as Nearby Interaction's calibrated UWB is and the simulator's ranges are.
        /// Research UWB boards ship with an uncalibrated antenna delay: the real sessions here carry
        /// +0.14 to +0.31 m per anchor (LIAS planar UWB, against anchors surveyed to the
        /// millimetre) and a few decimetres (NTU VIRAL), while the filter, weighing each range as
        /// independent, claims centimetres (`nearby-fusion evaluate` prints each anchor's mean NEES).
        ///
        /// The bias is *considered*, not estimated: the estimates do not change, the covariance the
        /// coaching and the outputs read does. A still object's batch adds `σ_β² s sᵀ` to each
        /// hypothesis, `s` the shift of its solution per metre of common bias
        /// (`BatchRefinement.refine(_:window:options:addedVariance:)`), and a tracked object keeps
        /// the share it had when it was handed over. On such hardware 0.1 m widens the reported
        /// uncertainty toward the errors without changing the angles (compare `evaluate` of the
        /// NTU VIRAL sessions with and without `--range-bias 0.1`), though not all the way: what
        /// a common bias does not explain stays; larger values make the coaching withhold
        /// `worldTransform` longer, or for good.
        /// Not for the simulated UWB radios, which have no bias: a considered one only makes them
        /// cautious, and a watch's ranges alone then converge far later. A Channel Sounding
        /// object considers the larger of this and ``FusionOptions/ChannelSounding/rangeBiasFractionOfDistance``
        /// times its distance.
        public var rangeBiasStandardDeviation: Double = 0

        public init() {}
    }

    /// Gates, outliers and the runs of rejected ranges that restart an estimate.
}
