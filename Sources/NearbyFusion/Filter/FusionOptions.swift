import Foundation

/// Every tunable of the fusion engine, with its unit. Defaults describe a current
/// phone's UWB radio and ARKit VIO; see the article "How it works".
public struct FusionOptions: Sendable, Hashable {
    // MARK: Sensor models
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

    // MARK: Outlier handling
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
    /// `η`, the probability that a range is long by an unresolved multipath excess
    /// `U(0, L)` (the one-sided term of ``RangeErrorDensity``), and `L`, metres. 0 for UWB,
    /// whose 500 MHz resolves reflections 30 cm behind the direct path (its rarer
    /// non-line-of-sight ranges are the gross outliers above); Channel Sounding sets both.
    public var rangeMultipathProbability: Double = 0
    public var rangeMultipathMaximumExcess: Double = 0
    /// Mean duration of a multipath burst, seconds: a reflected path lasts while the geometry
    /// that makes it does, so long ranges come in runs. The batch acquisition then weighs the
    /// ranges through a two-state Markov chain (line of sight / multipath, stationary
    /// multipath probability `η`) instead of as independent draws (`BatchRefinement`).
    /// 0 (UWB): independent.
    public var rangeMultipathBurstSeconds: Double = 0
    /// Span of the uniform outlier density for each direction angle, radians.
    public var angleOutlierSpan: Double = .pi
    /// The shortest time, seconds, between two updates of one object that are both fused: an
    /// update sooner than this after the last fused one is published (its distance, the
    /// estimate as it stands) but not fused. A radio's rate is the receiver's choice, and
    /// real range errors last far longer than the interval of a fast one: on the LIAS planar
    /// UWB session (`nearby-fusion convert lias-planar-uwb`, ~88 Hz per anchor) they are
    /// correlated 0.88 at 10 ms and 0.7 at 0.1 s. Each fused update is weighed as an
    /// independent draw, so at 88 Hz the filter counted the same error nine times over: it
    /// converged 7 of 8 anchors with heights up to 1.9 m wrong (a planar path cannot show
    /// the height) and a mean NEES of 1,664, against 491 for the same session at 10 Hz.
    /// Every count in these options (rejections before a reset, the eight-range trend, the
    /// probation, the blocked-path allowance of 600 ranges = 60 s) also means a span of time
    /// only at the rate it was set for, ~10 Hz. 0.09 s lets every 10 Hz radio through
    /// untouched (the simulated UWB, the real drone sessions' 5.7 Hz per anchor, 2–5 Hz
    /// Channel Sounding), whatever their timing jitter; 0 fuses every update.
    public var minimumFusionInterval: Double = 0.09
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

    // MARK: Process noise
    /// Random-walk intensity of an object's world position, m²/s: absorbs slow VIO drift.
    /// `P ← P + q Δt I`. (An object that may move is followed by its velocity: the IMM's
    /// constant-velocity model while tracked, the moving batch while acquired.)
    public var accessoryRandomWalk: Double = 1e-6
    /// Extra position variance per metre the device travels, m²/m (VIO drift grows
    /// with distance travelled). `P ← P + k_d Δs I`, `Δs` the chords of the device's path
    /// (``FusionEngine/pathLengthMetres``: VIO jitter is not travel).
    public var driftVariancePerMetre: Double = 1e-4
    /// σ of a constant bias the ranges may carry, metres: 0 (the default) takes them as
    /// unbiased, as Nearby Interaction's calibrated UWB is and the simulator's ranges are.
    /// Research UWB boards ship with an uncalibrated antenna delay: the real sessions here carry
    /// +0.14 to +0.31 m per anchor (LIAS planar UWB, against anchors surveyed to the
    /// millimetre) and a few decimetres (NTU VIRAL), while the filter, weighing each range as
    /// independent, claimed centimetres (mean NEES 491 and 89).
    ///
    /// The bias is *considered*, not estimated: the estimates do not change, the covariance the
    /// coaching and the outputs read does. A still object's batch adds `σ_β² s sᵀ` to each
    /// hypothesis, `s` the shift of its solution per metre of common bias
    /// (`BatchRefinement.refine(_:window:options:addedVariance:)`), and a tracked object keeps
    /// the share it had when it was handed over. On such hardware 0.1 m brings the reported
    /// uncertainty in line with the errors without changing the angles (`evaluate
    /// --range-bias 0.1`); larger values make the coaching withhold `worldTransform` longer.
    /// Not for the simulated radios, which have no bias: a considered one only makes them
    /// cautious, and a watch's ranges alone then converge far later.
    public var rangeBiasStandardDeviation: Double = 0

    // MARK: Motion (the tracking IMM, see InteractingMultipleModel)
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
    public var steadyTurnRate: Double = 0.5
    /// The steady walking model, or `nil` when ``steadyAccelerationIntensity`` is 0.
    @inlinable public var steadyMotion: SteadyMotion? {
        steadyAccelerationIntensity > 0
            ? SteadyMotion(accelerationIntensity: Vector3(steadyAccelerationIntensity, verticalAccelerationIntensity, steadyAccelerationIntensity),
                           settleRate: steadySettleRate, turnRate: steadyTurnRate)
            : nil
    }
    /// `diag(q_a, q_a,vertical, q_a)`, m²/s³, world axes (+Y up).
    public var accelerationIntensities: Vector3 { Vector3(accelerationIntensity, verticalAccelerationIntensity, accelerationIntensity) }
    /// While an object that may move (a peer, or one the app says moves) is reported
    /// `moving`, the position thresholds of the coaching are
    /// at least this, metres: a moving object is located only as well as the latest few
    /// measurements allow, and its `horizontalAngle` (still held to
    /// `horizontalAngleThreshold`) and a `worldTransform` of where it is now are what
    /// matter, not a decimetre fix no sweep can give. An estimate that combines a still and
    /// a moving model, the moving one with probability `w`, is held to
    /// `√((1 − w) T² + w max(T, this)²)` (`ConvergenceAnalysis`).
    public var movingPositionThreshold: Double = 0.25
    /// Fading memory of the acquisition batch of an object that may move, seconds: an update
    /// `τ` old counts `exp(−τ/T)` times in its position-and-velocity fit
    /// (`BatchRefinement.refineMoving(_:window:now:start:options:addedVariance:)`). A
    /// constant velocity over the whole window is what a friend walking steadily past does
    /// and what a friend who turns and stops does not: with the whole window a turning
    /// friend's estimate grows overconfident, while a short memory makes a steady walker's
    /// cautious. 20 s keeps both honest (`accuracy --scenario distance-only-walking-peer
    /// --scenario distance-only-turning-peer` shows their NEES). 0 disables the fading.
    public var movingBatchMemory: Double = 20
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

    /// Systematic VIO drift as a fraction of the distance travelled: 0.5 %, the simulator's
    /// figure (published measurements suggest ARKit may drift more: Kim et al., *Sensors*
    /// 22(24):9873, 2022, a relative pose error of ~2 cm/s; the tracked estimate's
    /// ``driftVariancePerMetre`` is a random walk instead — the two are not yet one model).
    /// It is the drift's *magnitude* per metre;
    /// its direction `u` is unknown, so each axis carries `f²/3` of its variance
    /// (`E[u uᵀ] = I/3` for a direction uniform on the sphere). How the acquisition batch
    /// applies it to a fixed point: ``considersDriftGeometry``. Not to an object that may move:
    /// its batch's velocity absorbs a steady drift.
    public var vioDriftFraction: Double = 0.005

    /// The variance per axis, m², of a translation by half the systematic drift over `L`
    /// metres of path, `f L / 2` in a direction nobody knows: `(f L / 2)² / 3`
    /// (``vioDriftFraction``). What a fixed point's acquisition adds without
    /// ``considersDriftGeometry``, and where the considered term cannot be computed.
    @inlinable public func driftTranslationVariance(pathMetres L: Double) -> Double {
        let half = 0.5 * vioDriftFraction * L
        return half * half / 3
    }
    /// Considers the systematic drift through the acquisition's geometry (the default) rather
    /// than as a translation. A drift growing with the path, `f Lᵢ u` at update `i` (`u` a unit
    /// direction nobody knows), moves the fixed point the batch solves by `f A⁻¹ D u`
    /// (`A = P₀⁻¹ + Σ Iᵢ`, `D = Σ Lᵢ Iᵢ`, `Iᵢ` each measurement's robustly weighted information
    /// at the solution, `Lᵢ` the path travelled since the acquisition began), while the object,
    /// seen in the drifting frame, has moved by `f L_T u`; each refined covariance gets
    /// `(f²/3) (A⁻¹D − L_T I)(A⁻¹D − L_T I)ᵀ`. When the information comes evenly along the
    /// path this is the translation's `(f L_T/2)²/3 I` (what `false` adds); a range-only
    /// geometry distorts more than it translates, across the directions it leaves weak: for
    /// range-only acquisitions the translation leaves the estimate overconfident, the geometry
    /// does not (`--no-drift-geometry` on the command line compares the two). A path with no
    /// drift at all (the LIAS trolley's motion capture) is held back for the phone's drift it
    /// does not have: `--batch-drift 0` there.
    public var considersDriftGeometry = true

    // MARK: Multi-hypothesis initialisation
    /// Angular spacing of the hypotheses placed on the first range's sphere, radians.
    public var initialAngularSpacing: Double = Angle.radians(degrees: 24)
    /// Upper bound on hypotheses per object (the bank is pre-allocated to this size).
    public var maximumHypotheses: Int = 96
    /// Hypotheses whose normalised weight falls below this are dropped.
    public var pruneWeight: Double = 1e-4
    /// While acquiring (batch mode) hypotheses are only dropped below this weight: the
    /// evidence for one can recover when new motion arrives, so pruning is gentler.
    public var acquisitionPruneWeight: Double = 1e-6
    /// Two hypotheses merge (moment matching) when `Δμᵀ (P₁ + P₂)⁻¹ Δμ` is below this.
    public var mergeDistanceSquared: Double = 1.0
    /// Likelihood of *no* direction for a hypothesis that lies well inside the field of
    /// view (relative to 1 outside it): the radio usually reports a direction there.
    /// Only applied in portrait hold on direction-capable devices. 1 disables it.
    public var missingDirectionLikelihood: Double = 0.25
    /// Where the likelihood of a missing direction rises from `missingDirectionLikelihood`
    /// to 1: a logistic step centred `fieldOfViewMargin` inside the field-of-view edge, of
    /// width `fieldOfViewEdgeWidth` (radians), so that hypotheses near the edge — and
    /// mirror images on either side of it — are judged smoothly, not by a hard cut.
    public var fieldOfViewMargin: Double = Angle.radians(degrees: 5)
    public var fieldOfViewEdgeWidth: Double = Angle.radians(degrees: 3)

    /// `ρ + (1 − ρ) / (1 + exp(−(θ − θ_e)/w))`: the likelihood that the radio reports no
    /// direction for an object `offAxisAngle` (θ, radians) from the device's −Z axis, with
    /// `θ_e = fieldOfViewHalfAngle − fieldOfViewMargin`.
    public func missingDirectionLikelihood(offAxisAngle theta: Double) -> Double {
        let edge = fieldOfViewHalfAngle - fieldOfViewMargin
        let rho = missingDirectionLikelihood
        return rho + (1 - rho) / (1 + exp(-(theta - edge) / max(fieldOfViewEdgeWidth, 1e-6)))
    }

    /// Updates kept per object for batch re-linearisation (thinned when full).
    public var batchWindowCapacity: Int = 160
    /// UWB updates between two batch re-linearisations (only while not converged).
    public var batchRefinementInterval: Int = 1

    // MARK: Convergence (coaching) thresholds
    /// Largest standard deviation of the horizontal angle to publish it, radians.
    public var horizontalAngleThreshold: Double = Angle.radians(degrees: 3)
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
    /// 20–30 m neighbours is a multipath ghost. Their noise is ``rangeErrorFraction``'s.
    public var maximumRange: Double = 60

    // MARK: Bluetooth Channel Sounding (see forRanging(_:))
    /// Range noise σ of a Channel Sounding accessory, metres. Phone-class antennas and the
    /// standard's phase-based ranging over at most 80 MHz give a jitter of 0.3–0.6 m
    /// ("±0.5 m is the best to expect" without super-resolution estimators; decimetres only
    /// with them): Bluetooth SIG, *Channel Sounding technical overview* (2024), §2.2;
    /// Ulsamer, Mazur and Knauth, "Study of BLE6 Ranging Performance in a Utility
    /// Basement", CEUR-WS Vol-4047 (2025), which measures IFFT/slope/RTT estimators on BLE6
    /// hardware in open ground and under strong multipath. 0.38 m, in that range, is the
    /// smallest σ whose mean NEES over 50 seeded coached runs stays inside the χ² band
    /// (0.35 m gave an angle RMSE 1.18× the Cramér–Rao bound but NEES 4.1 with ranges
    /// weighed independently, 3.84 with the multipath burst chain,
    /// ``channelSoundingMultipathBurstSeconds``).
    public var channelSoundingRangeStandardDeviation: Double = 0.38
    /// Probability of a gross outlier among Channel Sounding ranges (a failed phase
    /// unwrapping, a ghost path), uniform over ``rangeOutlierSpan``: the insurance that keeps
    /// one such range from wiping out a hypothesis, and softens the edge of the multipath term
    /// below (with 0.05 a range just past `L` cost a hypothesis 3 nats, and a far tag's
    /// bank was pruned down to its mirror image overhead).
    public var channelSoundingOutlierProbability: Double = 0.1
    /// Multipath of a Channel Sounding range (``RangeErrorDensity``'s one-sided term): the
    /// probability `η` that a reflected path close behind the direct one makes the range
    /// long — 80 MHz resolves paths only `c / 2B` ≈ 1.9 m apart, so such a path biases the
    /// range long, often for several procedures in a row — and the largest such excess `L`,
    /// metres: that resolution plus the jitter.
    public var channelSoundingMultipathProbability: Double = 0.2
    public var channelSoundingMultipathMaximumExcess: Double = 2.5
    /// Mean duration of a Channel Sounding multipath burst, seconds
    /// (``rangeMultipathBurstSeconds``). A reflection that the 80 MHz band cannot separate
    /// persists while the hand moves less than a fraction of a metre; no published figure
    /// for phones exists, so this is the scale of the simulator's bursts (3 procedures at
    /// 2.5–5 Hz, 0.6–1.2 s), to be measured on real recordings when there are some.
    public var channelSoundingMultipathBurstSeconds: Double = 0.8
    /// White-acceleration intensity, m²/s³, of the part of a Channel Sounding object's
    /// distance that its position estimate does not explain (`DistanceSmoother`, which
    /// smooths the published `distance`): the estimate follows the device's own motion, so
    /// this is the object's own radial motion — none for a still tag, a carry when it is
    /// picked up. 0.1 against 0.5 (50 seeds each): a still tag's published error 0.105 m
    /// (median, `cs-coached-step`) against 0.107 m, `cs-planar-sweeps`' lag 1.00 s against
    /// 1.27 s; `cs-carried`'s error while carried the same (0.28 m), its lag 0.25 s against 0.17 s.
    public var distanceResidualAccelerationIntensity: Double = 0.1
    /// Ranges a still Channel Sounding accessory's acquisition publishes nothing after it was
    /// re-solved because its ranges ran long (a multipath burst, or the tag carried away: the
    /// range-trend test cannot tell them apart); ranges running long again within them start
    /// it afresh. Ten: the trend test needs eight ranges to fire, so a tag still being carried
    /// away is caught before its old place is shown.
    public var probationRanges: Int = 10
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
    public var approachRangeWindow: Int = 5
    public var approachRangeCount: Int = 3
    public var approachThreshold: Double = 1.0
    /// Seconds without a range before the signal counts as insufficient, for Channel
    /// Sounding (2–5 procedures per second, fewer under Wi-Fi or Bluetooth traffic, some
    /// failing).
    public var channelSoundingSignalTimeout: Double = 3.0
    /// Seconds a tracked Channel Sounding object that had converged may stay not converged
    /// before its next range acquires it afresh (0: never). Ranges alone cannot steer one
    /// Gaussian back across the line of sight: a tag dragged off while it converged can stand
    /// metres off with a shrinking σ, its ranges still explained because the error is
    /// lateral. Acquired afresh, the window's batch re-solves it (and its `motion` is
    /// `unknown` until it converges again).
    public var channelSoundingReacquireSeconds: Double = 3.0
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
    public var carrySpeed: Double = 1.4

    /// The variance per axis, m², of where a tag carried for `T` seconds may be now relative
    /// to where it was: `(v T)² / 3`, `v` = ``carrySpeed`` (a length `v T` in a direction
    /// nobody knows). What the engine's fresh acquisition after a reported carry widens its
    /// prior by, and the evaluation's exact posterior with it.
    @inlinable public func carryDisplacementVariance(seconds T: Double) -> Double {
        let reach = carrySpeed * max(T, 0)
        return reach * reach / 3
    }
    /// Coaching thresholds for a Channel Sounding accessory: the bearing σ at which its
    /// horizontal angle is published (radians), and the position σ across the line of sight
    /// and in height (metres, at least `channelSoundingPositionFractionOfDistance` of the
    /// distance) at which it converges. Ranges 7× noisier than UWB's and no direction put a
    /// decimetre fix out of reach of hand sweeps: the bound after coached sweeps and a 1 m
    /// step at 5 m is a few degrees, so an angle is published at 10° σ and a
    /// `worldTransform` at 35 cm.
    public var channelSoundingAngleThreshold: Double = Angle.radians(degrees: 10)
    public var channelSoundingPositionThreshold: Double = 0.35
    public var channelSoundingPositionFractionOfDistance: Double = 0.1
    /// …and in height, metres. From ranges alone the height is seen only through the
    /// curvature of range against the device's height, `∂²r/∂h² ≈ 1/r`: ±50 cm sweeps at
    /// 4 m with 0.4 m noise bound it to about ±0.5 m, so a `worldTransform` is published at
    /// 0.6 m σ in height (its error is in the accuracy table).
    public var channelSoundingVerticalPositionThreshold: Double = 0.6

    /// The options for an object ranged by `ranging`: for Channel Sounding, its range noise
    /// and outlier rate replace UWB's everywhere (batch acquisition, gates, the IMM), a
    /// missing direction carries no information (`missingDirectionLikelihood = 1`: the radio
    /// never gives one), the signal timeout is longer, and the coaching thresholds are the
    /// radio's (`channelSoundingAngleThreshold`, `channelSoundingPositionThreshold`), and
    /// the angle is published by its bearing σ alone (``publishesAngleByBearingAlone``).
    public func forRanging(_ ranging: RangingTechnology) -> FusionOptions {
        guard ranging == .bluetoothChannelSounding else { return self }
        var o = self
        o.rangeStandardDeviation = channelSoundingRangeStandardDeviation
        o.outlierProbability = channelSoundingOutlierProbability
        o.rangeMultipathProbability = channelSoundingMultipathProbability
        o.rangeMultipathMaximumExcess = channelSoundingMultipathMaximumExcess
        o.rangeMultipathBurstSeconds = channelSoundingMultipathBurstSeconds
        o.missingDirectionLikelihood = 1
        o.signalTimeout = channelSoundingSignalTimeout
        o.horizontalAngleThreshold = channelSoundingAngleThreshold
        o.publishesAngleByBearingAlone = true
        o.horizontalPositionThreshold = channelSoundingPositionThreshold
        o.verticalPositionThreshold = channelSoundingVerticalPositionThreshold
        o.positionThresholdFractionOfDistance = channelSoundingPositionFractionOfDistance
        return o
    }

    public init() {}
}

extension FusionOptions {
    /// The robust density of a range residual (``RangeErrorDensity``) with these options'
    /// outlier and multipath probabilities (excess `U(0, L)`).
    @inlinable public var rangeErrorDensity: RangeErrorDensity { rangeErrorDensity(outlierProbability: outlierProbability) }

    /// The same density with gross-outlier probability `ε`.
    @inlinable func rangeErrorDensity(outlierProbability eps: Double) -> RangeErrorDensity {
        RangeErrorDensity(outlierProbability: eps, outlierSpan: rangeOutlierSpan,
                          excessProbability: rangeMultipathProbability, excessRange: 0...max(rangeMultipathMaximumExcess, 0))
    }

    /// The information one range carries, m⁻², under the radio's noise model: jitter and
    /// multipath, without the gross-outlier insurance (``RangeErrorDensity/fisherInformation(variance:)``;
    /// `1/σ_r²` for UWB). The evaluation's Cramér–Rao bound reads it.
    public var rangeFisherInformation: Double {
        rangeErrorDensity(outlierProbability: 0).fisherInformation(variance: rangeStandardDeviation * rangeStandardDeviation)
    }

    /// The range model from `antennaInWorld` with these options' noise and gate: the one
    /// every estimator step (batch solver, acquisition gate, IMM) uses.
    /// The range model with the nominal noise `σ_r` alone: the batch acquisition's (see
    /// `BatchRefinement`, which explains why it does not use `σ(z)`).
    @inlinable public func nominalRangeModel(from antennaInWorld: Vector3) -> RangeModel {
        RangeModel(antennaInWorld: antennaInWorld, standardDeviation: rangeStandardDeviation, gate: rangeGate)
    }

    /// The noise grows with the measured range `z`: `σ(z)² = σ_r² + (k z)²` (see
    /// ``rangeErrorFraction``).
    @inlinable public func rangeModel(from antennaInWorld: Vector3, measured z: Double) -> RangeModel {
        RangeModel(antennaInWorld: antennaInWorld, standardDeviation: rangeVariance(measured: z).squareRoot(), gate: rangeGate)
    }

    /// The variance of a range `z` (metres), m²: `σ_r² + (f z)²` (``rangeStandardDeviation``,
    /// ``rangeErrorFraction``).
    @inlinable public func rangeVariance(measured z: Double) -> Double {
        let proportional = rangeErrorFraction * z
        return rangeStandardDeviation * rangeStandardDeviation + proportional * proportional
    }

    /// The azimuth-only model (1 degree of freedom: the range gate's χ² bound).
    @inlinable public func azimuthModel(from antennaInWorld: Vector3, worldFromDevice: Quaternion) -> AzimuthModel {
        AzimuthModel(antennaInWorld: antennaInWorld, worldFromDevice: worldFromDevice, standardDeviation: azimuthStandardDeviation,
                     gate: rangeGate)
    }

    /// The azimuth + elevation model.
    @inlinable public func directionModel(from antennaInWorld: Vector3, worldFromDevice: Quaternion) -> DirectionModel {
        DirectionModel(antennaInWorld: antennaInWorld, worldFromDevice: worldFromDevice, azimuthStandardDeviation: azimuthStandardDeviation,
                       elevationStandardDeviation: elevationStandardDeviation, gate: directionGate)
    }
}
