import Foundation

extension FusionOptions {
    /// The published `distance` of a Channel Sounding object (`DistanceSmoother`): how it
    /// learns the radio's noise and which ranges it disbelieves.
    ///
    /// Real radios are not their datasheets: a Channel Sounding round-trip-time estimator's
    /// σ is 1.6–4.6 m where the configured one is 0.38 m, an inverse-FFT one misreads short
    /// by metres now and then, and consecutive errors are correlated. The filter therefore
    /// estimates the noise it sees, weighs every range by how far it lies from the others in
    /// both directions, and leaves the estimate's distance only when several ranges agree.
    public struct DistanceFilter: Sendable, Hashable {
        /// Degrees of freedom `n` of the Student-t range error: its tails make a range many σ
        /// off, short or long, weigh `(n + 1)/(n + δ²)` of one on the line (`δ²` its
        /// normalised innovation) instead of pulling the distance all the way. 6: a range 5σ
        /// off weighs 0.23; a Gaussian (`n → ∞`) would take it whole.
        public var degreesOfFreedom: Double = 6
        /// The forgetting factor `λ` per range of the noise estimate (a variational-Bayes
        /// inverse-gamma posterior on the range variance, see `DistanceSmoother`): the
        /// estimate remembers about `1/(1 − λ)` ranges, 10 here — five seconds at 2 Hz, so a
        /// radio three times noisier than configured is weighed as such within seconds.
        public var noiseForgetting: Double = 0.9
        /// The weight of the configured σ in the noise estimate, in ranges `m` (the prior's
        /// shape `α₀ = m/2`): the estimate starts there and is drawn back to it with the
        /// forgotten share of each update, so that a few quiet ranges cannot talk it down to
        /// nothing. 3 beside the 10 ranges remembered: a radio three times noisier than
        /// configured is learned as more than twice as noisy after 20 ranges.
        public var noisePriorRanges: Double = 3
        /// Bounds on the learned σ as multiples of the configured one.
        public var noiseScaleRange: ClosedRange<Double> = 0.25...25
        /// The largest lag-1 correlation of consecutive range errors the filter allows for
        /// (it estimates it from its normalised innovations and weighs the ranges as
        /// `(1 − φ)/(1 + φ)` independent ones: errors that last are not averaged away).
        ///
        /// 0.4: consecutive procedures of real Channel Sounding radios correlate 0.06–0.38
        /// (board to board, 2 Hz, every estimator and distance). Innovations correlate beyond
        /// that when the filter's constant rate follows a walker's start, stop or turn late —
        /// its own lag, not the radio's — and allowing for it there feeds on itself: a larger
        /// φ trusts the ranges less, the filter follows later and its innovations correlate
        /// more. Without camera assistance, where the filter's distance is published alone, a
        /// bound of 0.8 lets a walk toward an inverse-FFT tag and back be published with a p95
        /// error above the raw ranges'.
        public var maximumErrorCorrelation: Double = 0.4
        /// How long after the last fused range, seconds, the object's own radial rate `u` still
        /// moves the published distance while the estimate gives a reference. Through a longer
        /// gap (failed procedures) no range shows the motion going on: the published distance
        /// holds where the ranges left it (the device's own motion, which the reference
        /// follows, included), while the filter's prediction and its growing variance wait for
        /// the next range. One or two misreadings that suggested a rate can then move the
        /// published distance, but cannot walk it on through the failures after them. 1 s:
        /// two ranges at 2 Hz. `.infinity` carries the rate through any gap.
        public var rateHorizonSeconds: Double = 1

        public init() {}
    }
}
