import Foundation

extension FusionOptions {
    /// The bank of hypotheses, the window and the batch that re-solves them, and the VIO drift it considers.
    public struct Acquisition: Sendable, Hashable {
        /// Systematic VIO drift as a fraction of the distance travelled: 0.5 %, the simulator's
        /// figure (published measurements suggest ARKit may drift more: Kim et al., *Sensors*
        /// 22(24):9873, 2022, a relative pose error of ~2 cm/s; the tracked estimate's
        /// ``FusionOptions/Motion/driftVariancePerMetre`` is a random walk instead — the two are not yet one model).
        /// It is the drift's *magnitude* per metre;
        /// its direction `u` is unknown, so each axis carries `f²/3` of its variance
        /// (`E[u uᵀ] = I/3` for a direction uniform on the sphere). How the acquisition batch
        /// applies it to a fixed point: ``considersDriftGeometry``. Not to an object that may move:
        /// its batch's velocity absorbs a steady drift.
        public var vioDriftFraction: Double = 0.005
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
        /// The width of that logistic step, radians (see ``fieldOfViewMargin``).
        public var fieldOfViewEdgeWidth: Double = Angle.radians(degrees: 3)
        /// Updates kept per object for batch re-linearisation (thinned when full).
        public var batchWindowCapacity: Int = 160
        /// UWB updates between two batch re-linearisations (only while not converged).
        public var batchRefinementInterval: Int = 1
        /// How far a hypothesis's batch solution may move from the point its batch was last
        /// linearised at: while the range's curvature over the step, `‖δ‖²/(2r)`, stays within
        /// this fraction of the range's σ, each update only adds its own terms to the
        /// hypothesis's normal equations (`BatchLinearisation`); beyond it the window is
        /// linearised afresh at the new minimum. The fraction applies to a hypothesis holding 1 %
        /// of the weight and scales with `√(0.01/w)`, from a tenth of it for the heaviest to 100×
        /// for the lightest (the Derivations article, "Keeping the batch between updates").
        /// 0 re-solves every hypothesis from its prior and the whole window at every refinement
        /// (the exact batch). The batch of an object that may move takes
        /// ``movingBatchToleranceScale`` of it, a Channel Sounding tag's
        /// ``FusionOptions/ChannelSounding/relinearisationToleranceScale``.
        ///
        /// Over three disjoint sets of 50 seeds, `accuracy` with 0.03 and with 0.01 differ by
        /// no more than one set of seeds differs from the next, and so do the real sessions
        /// (`evaluate`), while a UWB acquisition linearises its window less often;
        /// `--relinearisation 0` and `bench` compare any fraction with the exact batch (the
        /// repository's `Results/relinearisation.md` sets six of them side by side).
        public var relinearisationTolerance: Double = 0.03
        /// How close to its minimum the still batch's Gauss–Newton brings a hypothesis — the
        /// solve from its prior, and a kept model's minimum with the new updates evaluated
        /// exactly: it stops once the step `δ = A⁻¹ b` has `δᵀ A δ` (dimensionless, the step
        /// in the hypothesis's own σ, squared) below this. 10⁻⁴ stops within 1 % of a σ along
        /// every axis, where the cost is within 5·10⁻⁵ nats of its minimum. 0 iterates on until
        /// the cost falls by less than 10⁻⁷ nats or the step is below 10 µm: reweighted
        /// Gauss–Newton converges linearly, and about half of a solve's linearisations then go
        /// to that last hundredth of a σ (compare `bench` with `--solve-tolerance 0`).
        public var solveStepTolerance: Double = 1e-4
        /// What ``relinearisationTolerance`` is multiplied by for the batch of an object that may
        /// move (a peer ranged without directions). Along a range-only walker's valley,
        /// where it is and how it moves trade against each other, a kept model allowed longer
        /// steps settles where the batch re-solved at every update (`--relinearisation 0`) does
        /// not: for a walker ranged for 20 s from a moving device (σ 5 cm), the kept bank at 2/3,
        /// and at 1, leaves the re-solved one by more than 3σ within 5 s, at 1/3 it stays within
        /// 1σ throughout (`swift test --filter 'KeptModelAgrees|TwiceTheDefaultReach'` checks
        /// both). A larger fraction linearises a peer's window less often and drifts further
        /// from the re-solved batch: compare `bench` and `accuracy --seeds 50` over the
        /// range-only peer scenarios at several `--relinearisation` values (the repository's
        /// `Results/relinearisation.md` does, the exact batch included).
        public var movingBatchToleranceScale: Double = 1.0 / 3
        /// Whether the batch of a still object steps by Newton's method — the Gauss–Newton
        /// matrix less the ranges' curvature, `(A − K)⁻¹ b`, where that is positive definite —
        /// and keeps its model's minimum there (`BatchRefinement.newtonStep(_:k:)`). A kept model
        /// is still rebuilt until Gauss–Newton's own step lies within reach too, so its point is
        /// as close to the minimum as without the option; Newton's steps only get it there in
        /// fewer relinearisations: a UWB acquisition linearises its window about a quarter less often (`bench` counts it).
        /// Off by default: the published outputs differ from Gauss–Newton's, in both directions,
        /// by about as much as one seed differs from the next — `accuracy`, `evaluate` and
        /// `bench` with `--still-batch-newton` compare the two. The covariance and the evidence
        /// take `A` either way. (The batch of an object that may move always takes Newton steps.)
        public var stillBatchNewtonSteps = false

        public init() {}
    }

    /// The thresholds the convergence reasons are judged by.
}
