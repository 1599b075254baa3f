import Foundation

extension FusionOptions {
    /// How objects and the VIO move: process noise and the tracking IMM.
    public struct Motion: Sendable, Hashable {
        /// Random-walk intensity of an object's world position, m²/s: absorbs slow VIO drift.
        /// `P ← P + q Δt I`. (An object that may move is followed by its velocity: the IMM's
        /// constant-velocity model while tracked, the moving batch while acquired.)
        public var accessoryRandomWalk: Double = 1e-6
        /// Extra position variance per metre the device travels, m²/m (VIO drift grows
        /// with distance travelled). `P ← P + k_d Δs I`, `Δs` the chords of the device's path
        /// (``FusionEngine/pathLengthMetres``: VIO jitter is not travel).
        public var driftVariancePerMetre: Double = 1e-4
        /// Horizontal white-acceleration intensity `q_a` of the constant-velocity model,
        /// m²/s³: a person walking, turning and stopping changes velocity by about 1 m/s within
        /// a second or two.
        public var accelerationIntensity: Double = 0.5
        /// Vertical white-acceleration intensity, m²/s³: a phone or a tag carried by someone
        /// walking keeps its height to within centimetres of bob.
        public var verticalAccelerationIntensity: Double = 0.05
        /// Horizontal white-acceleration intensity, m²/s³, of a third motion model for the IMM:
        /// a *steady* walk (vertical: ``verticalAccelerationIntensity``) beside the still model
        /// and the manoeuvring one (``accelerationIntensity``, which follows starts, turns and
        /// stops). 0, the default, leaves it out; `--steady-walk` sets it on the command line.
        ///
        /// Why a third model: driven hard enough to follow a friend who stops and turns, the
        /// constant-velocity model fits a slow walker's velocity no better than ±0.27 m/s
        /// (`walking-peer`, 0.3 m/s at 4.5 m, directions worth ~24 cm each), so the still model
        /// explains the walk as well and the walker is said `stationary` now and then. A gentle
        /// model averages the velocity over seconds, and the manoeuvring model still takes the
        /// turns; a friend who stops and turns is said `stationary` mid-walk a little more often.
        /// A moving object's update costs about a third more (three models instead of two), a
        /// still one's a little (the steady model is left out while it holds under 10⁻⁴ of the
        /// probability). `nearby-fusion accuracy --steady-walk 0.1` shows what it changes; off by
        /// default.
        public var steadyAccelerationIntensity: Double = 0
        /// Rates, 1/s, at which a manoeuvre settles into a steady walk (`λ_settle`) and a steady
        /// walk turns into a manoeuvre (`λ_turn`), ``SteadyMotion``. 0.5 and 0.5 (a turn or a
        /// change of pace every two seconds or so, each over in about two).
        public var steadySettleRate: Double = 0.5
        /// `λ_turn`, 1/s (see ``steadySettleRate``).
        public var steadyTurnRate: Double = 0.5
        /// Fading memory of the acquisition batch of an object that may move, seconds: an update
        /// `τ` old counts `exp(−τ/T)` times in its position-and-velocity fit
        /// (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`). A
        /// constant velocity over the whole window is what a friend walking steadily past does
        /// and what a friend who turns and stops does not: with the whole window a turning
        /// friend's estimate grows overconfident, while a short memory makes a steady walker's
        /// cautious. 20 s keeps both honest (`accuracy --scenario distance-only-walking-peer
        /// --scenario distance-only-turning-peer` shows their NEES). 0 disables the fading.
        public var movingBatchMemory: Double = 20
        /// The correlation time `τ`, seconds, of the range errors of an object that may move while
        /// its batch over position and velocity is its estimator (a peer ranged from a device
        /// without direction finding, or any walker before a direction reaches it): every residual
        /// of that batch counts `(1 − ρ)/(1 + ρ)`, `ρ = e^{−Δt/τ}`, `Δt` the object's mean
        /// interval between fused ranges. That is what `n` ranges spaced `Δt` apart tell of a
        /// level when their errors are a first-order autoregressive process with that `ρ`:
        /// `n (1 − ρ)/(1 + ρ)` independent ranges' worth. The estimates hardly move; the covariance
        /// and the evidence between hypotheses stop counting one lasting error as many. (The
        /// evidence of directions the radio did not give, which says where the antenna's cone is
        /// and nothing of the range errors, is left whole.)
        ///
        /// 0 (the default) leaves the correlation to be learned from the ranges
        /// (``learnsRangeErrorCorrelation``) or, without that, weighs every range as an
        /// independent draw. Phone-to-phone UWB while both walk keeps its errors for seconds
        /// (correlated 0.81 at 1 s, 0.53 at 2 s; the simulator's `RadioModel.walkingPeerPhoneToPhone`):
        /// weighed as independent, its batch claims a small fraction of its errors
        /// (`accuracy --scenario peer-uwb-both-walking --no-learned-range-correlation`: mean NEES
        /// far above 3). Not all of that is the errors' doing:
        /// the walker there also turns, which the batch's constant velocity does not explain,
        /// and discounting every term widens the covariance whatever made it too narrow. The
        /// weighting is conservative: it discounts what lasting errors do tell, the range's change
        /// from one update to the next, as much as their level, so the profile's own 2.5 s makes
        /// the estimate cautious.
        public var rangeErrorCorrelationSeconds: Double = 0
        /// With ``rangeErrorCorrelationSeconds`` 0, whether the correlation of consecutive range
        /// errors is learned, object by object, from its moving batch's residuals (`true`, the
        /// default) or the ranges are taken as independent (`false`). The lag-one correlation
        /// `ρ̂` of the heaviest hypothesis's residuals, once 50 pairs of consecutive ranges hold
        /// it and it stands beyond `3/√n` of what independent errors give by chance, sets
        /// `κ = (1 − ρ̂)/(1 + ρ̂)` as the correlation time above does. Independent errors (the
        /// simulated watch's walking friend) keep `κ` = 1; the phone-to-phone profile's lasting
        /// errors read a `ρ̂` well below their own correlation (the batch's own fit absorbs
        /// their slowest part), and its bank calls one of two mirror images certain far less often (compare
        /// `accuracy --scenario peer-uwb-both-walking --scenario peer-uwb-friend-walking` with
        /// and without `--no-learned-range-correlation`). Objects that keep still are weighed as
        /// their radio's model says, whatever this says.
        public var learnsRangeErrorCorrelation = true
        /// Standard deviation of the velocity of an object that starts to move, m/s (the
        /// stationary model's velocity prior, handed to the moving model when they mix).
        public var velocityPriorStandardDeviation: Double = 1.0
        /// An accessory usually lies still: it starts to move rarely (0.005/s, once in a few
        /// minutes of handling at most) and, once carried, is put down within seconds.
        public var accessoryMotionPrior = MotionPrior(startRate: 0.005, stopRate: 0.3, initialMovingProbability: 0.005)
        /// A peer is a person with a phone: no preference between walking and standing.
        public var peerMotionPrior = MotionPrior(startRate: 0.1, stopRate: 0.1, initialMovingProbability: 0.5)
        /// The moving mode's probability at which the estimate reports `moving` (held until
        /// ``stationaryDecisionProbability`` is reached; `unknown` before either).
        public var motionDecisionProbability: Double = 0.8
        /// The still mode's probability at which the estimate reports `stationary` (held until
        /// ``motionDecisionProbability`` is reached).
        ///
        /// Higher than the moving one because the two mistakes do not cost the same: `stationary`
        /// said of a friend who walks on, or of a tag being carried away, tells the user to stop
        /// following it, while `stationary` said a few tenths of a second late only delays what
        /// the user already sees. Reporting the still mode at probability `P` is the Bayes decision
        /// when a false `stationary` costs `P/(1 − P)` times a late one: 19 at 0.95, 4 at 0.8.
        /// The price is a `stationary` a few tenths of a second later after a stop
        /// (`--stationary-decision` sets it on the command line). The estimates, their
        /// covariances and the convergence do not depend on it (the thresholds the coaching holds
        /// a moving object to are released only once the still model alone is published, at 0.99).
        public var stationaryDecisionProbability: Double = 0.95
        /// Mode probability above which that mode's own estimate is published instead of the
        /// IMM's combination (the other mode's share is then below 1 %).
        public var modeCertainty: Double = 0.99
        /// Whether the moving models of an object that lies still sleep (`--awake-moving-model`
        /// keeps them running): once the probability of motion has stayed below a quarter of
        /// `1 − modeCertainty` for ten updates, only the stationary model is predicted and
        /// corrected, the moving one being weighed from the stationary innovations, until a
        /// measurement would lift the probability of motion to `1 − modeCertainty`, where the
        /// moving model would start to count in the published estimate, or a second range in a
        /// row falls outside the stationary model's gate (`InteractingMultipleModel`, "A
        /// sleeping moving model").
        public var movingModelSleeps = true

        public init() {}
    }

    /// The bank of hypotheses and the batch that re-solves them.
}
