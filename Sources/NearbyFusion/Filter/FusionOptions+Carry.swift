import Foundation

extension FusionOptions {
    /// An accessory the app says is carried.
    public struct Carry: Sendable, Hashable {
        /// The speed, m/s, at which a person carries an accessory that no direction reaches (a
        /// Channel Sounding tag) while the app says it moves (`updateMotionState(.moving)`).
        /// Ranges alone cannot follow it then: the estimate is dropped, and the tag is acquired
        /// afresh once the app says it stopped. But it has not gone just anywhere: carried for
        /// `T` seconds, it lies within about `v T` of where it was, in a direction nobody knows,
        /// `E[d dᵀ] = (v T)² I / 3`. So the fresh acquisition's tiles are weighted by that
        /// prior, `N(μᵢ; μ₀, Pᵢ + P₀ + (v T)²/3 I)` with `(μ₀, P₀)` the estimate's moments when
        /// the app said it moved, until the object converges again. People walk at 1.2–1.4 m/s
        /// (the speed pedestrian-signal timing assumes is 1.2 m/s); 1.4 m/s is the brisk end,
        /// so the prior is wide rather than wrong. 0 acquires the tag afresh with no prior.
        public var speed: Double = 1.4

        public init() {}
    }
}
