import ArgumentParser
import NearbyFusion

/// Engine settings a command line may change (the rest are ``FusionOptions``' defaults).
struct EngineOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The σ, metres, of a constant bias the ranges may carry (an uncalibrated antenna delay), considered in the covariance the coaching and the outputs read; 0 (the default) takes ranges as unbiased, as Nearby Interaction's calibrated UWB is. See FusionOptions.sensors.rangeBiasStandardDeviation.", valueName: "METRES"))
    var rangeBias = 0.0

    @Flag(help: "Keep the moving models of an object that lies still running on every update (slower). By default they sleep while the probability of motion stays below a quarter of 1 %, weighed from the still model's innovations, and wake where it would reach 1 % or at a second range in a row outside the still model's gate. See FusionOptions.motion.movingModelSleeps.")
    var awakeMovingModel = false

    @Option(help: ArgumentHelp("The shortest time, seconds, between two fused updates of one object: a faster radio's other updates are published, not fused (its errors last longer than its interval). 0 fuses every update. See FusionOptions.sensors.minimumFusionInterval.", valueName: "SECONDS"))
    var fusionInterval = FusionOptions().sensors.minimumFusionInterval

    @Option(help: ArgumentHelp("The horizontal acceleration intensity, m²/s³, of a third motion model for objects that move: a steady walk, beside the still and the manoeuvring ones (0.1 suits people walking). 0 (the default) leaves it out. See FusionOptions.motion.steadyAccelerationIntensity.", valueName: "M2/S3"))
    var steadyWalk = 0.0

    @Option(help: ArgumentHelp("The still mode's probability at which `motion` says `stationary` (0.5–1; `moving` is said at 0.8). See FusionOptions.motion.stationaryDecisionProbability.", valueName: "P"))
    var stationaryDecision = FusionOptions().motion.stationaryDecisionProbability

    @Option(help: ArgumentHelp("Position variance added per metre the device travels, m²/m (the VIO drift a tracked object's random walk covers). See FusionOptions.motion.driftVariancePerMetre.", valueName: "M2/M"))
    var driftVariance = FusionOptions().motion.driftVariancePerMetre

    @Option(help: ArgumentHelp("The systematic VIO drift the acquisition batch allows for, as a fraction of the path travelled (its magnitude, in a direction nobody knows: a third of its variance on each axis). See FusionOptions.acquisition.vioDriftFraction.", valueName: "FRACTION"))
    var batchDrift = FusionOptions().acquisition.vioDriftFraction

    @Flag(inversion: .prefixedNo, help: "Consider the VIO's systematic drift through the acquisition's geometry (the default) or, with --no-drift-geometry, as a plain translation (distance-only estimates then overconfident). See FusionOptions.acquisition.considersDriftGeometry.")
    var driftGeometry = FusionOptions().acquisition.considersDriftGeometry

    @Option(help: ArgumentHelp("The correlation time, seconds, of the range errors of a peer (or any object that may move) that no direction reaches: each of its ranges counts (1 − ρ)/(1 + ρ) in its batch, ρ = exp(−Δt/τ), so that an error lasting seconds is not counted as many. 0 (the default) learns ρ from the batch's residuals, or, with --no-learned-range-correlation, takes the errors as independent. See FusionOptions.motion.rangeErrorCorrelationSeconds.", valueName: "SECONDS"))
    var rangeErrorCorrelation = FusionOptions().motion.rangeErrorCorrelationSeconds

    @Option(help: ArgumentHelp("In the batch of an object that may move, how likely a gross outlier short of the prediction is, as a fraction of a long one: 0.001 (the default) weighs a UWB range far short of a hypothesis as evidence against it (a first path never arrives early); 1 sets aside short ranges as readily as long ones. Channel Sounding always takes 1. See FusionOptions.gating.movingShortOutlierFraction.", valueName: "FRACTION"))
    var movingShortOutliers = FusionOptions().gating.movingShortOutlierFraction

    @Flag(inversion: .prefixedNo, help: "With --range-error-correlation 0, learn the correlation of a moving object's consecutive range errors from its batch's residuals (the default: ρ̂ of the best hypothesis's residuals, once 50 pairs stand beyond chance) or, with --no-learned-range-correlation, take them as independent. See FusionOptions.motion.learnsRangeErrorCorrelation.")
    var learnedRangeCorrelation = FusionOptions().motion.learnsRangeErrorCorrelation

    @Option(help: ArgumentHelp("How far an acquisition hypothesis's solution may move before its window is linearised afresh, as the fraction of the range σ its curvature over the step may reach; within it each update only adds its own terms. 0 re-solves every hypothesis from the whole window at every update (the exact batch, slower). See FusionOptions.acquisition.relinearisationTolerance.", valueName: "FRACTION"))
    var relinearisation = FusionOptions().acquisition.relinearisationTolerance

    @Option(help: ArgumentHelp("How close to its minimum a still object's acquisition batch solves each hypothesis: it stops once its Gauss–Newton step δ has δᵀAδ below this, the step in the hypothesis's own σ, squared (0.0001, within 1 % of a σ, by default). 0 iterates on until the cost falls by less than 1e-7 nats or the step is below 10 µm (slower; compare with accuracy and bench --solve-tolerance 0). See FusionOptions.acquisition.solveStepTolerance.", valueName: "SQUARED-SIGMAS"))
    var solveTolerance = FusionOptions().acquisition.solveStepTolerance

    @Flag(help: "Step a still object's acquisition batch by Newton's method (the ranges' curvature included) instead of Gauss–Newton: UWB acquisition linearises its window about a quarter less often, its outputs a little different. See FusionOptions.acquisition.stillBatchNewtonSteps.")
    var stillBatchNewton = false

    @Option(help: ArgumentHelp("The bearing σ, degrees, at which a Bluetooth Channel Sounding object's horizontalAngle is published and its horizontal sweep judged enough (10 by default). A larger one gives an earlier, rougher angle (compare with accuracy --scenario cs-coached-step --cs-angle-threshold 14). See FusionOptions.channelSounding.angleThreshold.", valueName: "DEGREES"))
    var csAngleThreshold: Double?

    @Option(help: ArgumentHelp("The σ of the range bias a Bluetooth Channel Sounding radio may carry, as a fraction of the object's distance, considered in the covariance (0.025 by default; --range-bias applies instead where it is larger). 0 takes its ranges as unbiased (compare with accuracy --scenario cs-ifft-walk --cs-range-bias-fraction 0). See FusionOptions.channelSounding.rangeBiasFractionOfDistance.", valueName: "FRACTION"))
    var csRangeBiasFraction = FusionOptions().channelSounding.rangeBiasFractionOfDistance

    @Option(help: ArgumentHelp("The range noise σ, metres, the engine assumes for a Bluetooth Channel Sounding radio: the Gaussian core of its range error (0.38 by default), from which it learns a noisier radio's. Set it, --cs-multipath-probability and --cs-multipath-excess to your radio's figures (compare with accuracy --scenario cs-far --cs-range-sigma 0.35 --cs-multipath-probability 0.15 --cs-multipath-excess 1.5, the simulated radio's). See FusionOptions.channelSounding.rangeStandardDeviation.", valueName: "METRES"))
    var csRangeSigma = FusionOptions().channelSounding.rangeStandardDeviation

    @Option(help: ArgumentHelp("The probability, below 0.9, that a Bluetooth Channel Sounding range is made long by a reflected path the radio cannot separate from the direct one (0.2 by default; 0 for none). See FusionOptions.channelSounding.multipathProbability.", valueName: "P"))
    var csMultipathProbability = FusionOptions().channelSounding.multipathProbability

    @Option(help: ArgumentHelp("The largest excess, metres, such a reflected path adds to a Bluetooth Channel Sounding range (2.5 by default). See FusionOptions.channelSounding.multipathMaximumExcess.", valueName: "METRES"))
    var csMultipathExcess = FusionOptions().channelSounding.multipathMaximumExcess

    @Option(help: ArgumentHelp("The lag-one correlation, 0 to below 1, of consecutive Bluetooth Channel Sounding procedures' range errors that the noise learned from a noisier radio's ranges allows for (0.2 by default, as measured board to board; 0 reads them as independent, and learns such a radio as less noisy). See FusionOptions.channelSounding.errorCorrelation.", valueName: "CORRELATION"))
    var csErrorCorrelation = FusionOptions().channelSounding.errorCorrelation

    @Option(help: ArgumentHelp("How a still Bluetooth Channel Sounding accessory is located from its ranges before it is tracked: bank (the default), a bank of Gaussians re-solved from the window of updates, or grid, a grid of directions each holding a Gaussian distance, updated once per range (several times faster; compare accuracy --scenario cs-coached-step with each). See FusionOptions.channelSounding.acquisitionDensity.", valueName: "DENSITY"))
    var csAcquisition = FusionOptions().channelSounding.acquisitionDensity.rawValue

    @Option(help: ArgumentHelp("The speed, m/s, at which an accessory no direction reaches (a Channel Sounding tag) is taken to be carried while the app says it moves: its fresh acquisition, once it stops, starts from where it was, widened by that speed times the time it moved. 0 acquires it afresh with no prior. See FusionOptions.carry.speed.", valueName: "M/S"))
    var carrySpeed = FusionOptions().carry.speed

    @Option(help: ArgumentHelp("How often, seconds, an object's guidance (where to move the device, and how far) is computed afresh while its output is withheld; 0 computes none. See FusionOptions.coaching.guidanceInterval.", valueName: "SECONDS"))
    var guidanceInterval = FusionOptions().coaching.guidanceInterval

    @Option(help: ArgumentHelp("The output the guidance works toward: horizontalAngle (the default) or worldTransform (guided on until the position is published). See FusionOptions.coaching.guidanceOutput.", valueName: "OUTPUT"))
    var guidanceOutput = FusionOptions().coaching.guidanceOutput.rawValue

    func validate() throws {
        guard guidanceInterval.isFinite, guidanceInterval >= 0 else { throw ValidationError("--guidance-interval must be a number of seconds, 0 or more") }
        guard MotionGuidance.Output(rawValue: guidanceOutput) != nil else {
            throw ValidationError("--guidance-output must be horizontalAngle or worldTransform")
        }
        guard steadyWalk.isFinite, steadyWalk >= 0 else { throw ValidationError("--steady-walk must be an acceleration intensity in m²/s³, 0 or more") }
        guard rangeBias.isFinite, rangeBias >= 0 else { throw ValidationError("--range-bias must be a number of metres, 0 or more") }
        guard stationaryDecision.isFinite, stationaryDecision >= 0.5, stationaryDecision <= 1 else { throw ValidationError("--stationary-decision must be a probability from 0.5 to 1") }
        guard driftVariance.isFinite, driftVariance >= 0 else { throw ValidationError("--drift-variance must be a number of m²/m, 0 or more") }
        guard batchDrift.isFinite, batchDrift >= 0 else { throw ValidationError("--batch-drift must be a fraction of the path, 0 or more") }
        guard rangeErrorCorrelation.isFinite, rangeErrorCorrelation >= 0 else { throw ValidationError("--range-error-correlation must be a number of seconds, 0 or more") }
        guard movingShortOutliers.isFinite, movingShortOutliers >= 0, movingShortOutliers <= 1 else {
            throw ValidationError("--moving-short-outliers must be a fraction from 0 to 1")
        }
        guard relinearisation.isFinite, relinearisation >= 0 else { throw ValidationError("--relinearisation must be a fraction of the range σ, 0 or more") }
        guard solveTolerance.isFinite, solveTolerance >= 0 else { throw ValidationError("--solve-tolerance must be a number, 0 or more") }
        guard fusionInterval.isFinite, fusionInterval >= 0 else { throw ValidationError("--fusion-interval must be a number of seconds, 0 or more") }
        guard carrySpeed.isFinite, carrySpeed >= 0 else { throw ValidationError("--carry-speed must be a speed in m/s, 0 or more") }
        if let t = csAngleThreshold, !(t.isFinite && t > 0 && t <= 45) { throw ValidationError("--cs-angle-threshold must be a number of degrees above 0 and at most 45") }
        guard csRangeBiasFraction.isFinite, csRangeBiasFraction >= 0 else { throw ValidationError("--cs-range-bias-fraction must be a fraction of the distance, 0 or more") }
        guard csRangeSigma.isFinite, csRangeSigma > 0 else { throw ValidationError("--cs-range-sigma must be a number of metres above 0") }
        let outliers = FusionOptions().channelSounding.outlierProbability
        guard csMultipathProbability.isFinite, csMultipathProbability >= 0, csMultipathProbability + outliers < 1 else {
            throw ValidationError("--cs-multipath-probability must be a probability from 0 to below \(1 - outliers) (the rest is the line of sight's and the outliers')")
        }
        guard csMultipathExcess.isFinite, csMultipathExcess > 0 else { throw ValidationError("--cs-multipath-excess must be a number of metres above 0") }
        guard csErrorCorrelation.isFinite, csErrorCorrelation >= 0, csErrorCorrelation < 1 else {
            throw ValidationError("--cs-error-correlation must be a correlation from 0 to below 1")
        }
        guard FusionOptions.ChannelSounding.AcquisitionDensity(rawValue: csAcquisition) != nil else {
            throw ValidationError("--cs-acquisition must be bank or grid")
        }
    }

    var fusionOptions: FusionOptions {
        var o = FusionOptions()
        o.sensors.rangeBiasStandardDeviation = rangeBias
        o.motion.movingModelSleeps = !awakeMovingModel
        o.sensors.minimumFusionInterval = fusionInterval
        o.motion.steadyAccelerationIntensity = steadyWalk
        o.acquisition.considersDriftGeometry = driftGeometry
        o.motion.stationaryDecisionProbability = stationaryDecision
        o.motion.driftVariancePerMetre = driftVariance
        o.acquisition.vioDriftFraction = batchDrift
        o.acquisition.relinearisationTolerance = relinearisation
        o.acquisition.solveStepTolerance = solveTolerance
        o.motion.rangeErrorCorrelationSeconds = rangeErrorCorrelation
        o.motion.learnsRangeErrorCorrelation = learnedRangeCorrelation
        o.gating.movingShortOutlierFraction = movingShortOutliers
        o.acquisition.stillBatchNewtonSteps = stillBatchNewton
        o.carry.speed = carrySpeed
        o.coaching.guidanceInterval = guidanceInterval
        o.coaching.guidanceOutput = MotionGuidance.Output(rawValue: guidanceOutput) ?? .horizontalAngle
        if let t = csAngleThreshold { o.channelSounding.angleThreshold = Angle.radians(degrees: t) }
        o.channelSounding.rangeBiasFractionOfDistance = csRangeBiasFraction
        o.channelSounding.rangeStandardDeviation = csRangeSigma
        o.channelSounding.multipathProbability = csMultipathProbability
        o.channelSounding.multipathMaximumExcess = csMultipathExcess
        o.channelSounding.errorCorrelation = csErrorCorrelation
        o.channelSounding.acquisitionDensity = FusionOptions.ChannelSounding.AcquisitionDensity(rawValue: csAcquisition) ?? .bank
        return o
    }
}
