import Foundation

/// Every tunable of the fusion engine, with its unit. Defaults describe a current
/// phone's UWB radio and ARKit VIO; see the article "How it works".
public struct FusionOptions: Sendable, Hashable {
    /// The radio and its errors.
    public var sensors = Sensors()
    /// Gates, outliers and the runs of rejected ranges that restart an estimate.
    public var gating = Gating()
    /// How objects and the VIO move: process noise and the tracking IMM.
    public var motion = Motion()
    /// The bank of hypotheses and the batch that re-solves them.
    public var acquisition = Acquisition()
    /// The thresholds the convergence reasons are judged by.
    public var coaching = Coaching()
    /// A Bluetooth Channel Sounding radio, which `forRanging(_:)` applies.
    public var channelSounding = ChannelSounding()
    /// An accessory the app says is carried.
    public var carry = Carry()
    /// The published distance of an object no direction reaches: its learned noise, its
    /// robust weights, the agreement it needs before it leaves the estimate's distance.
    public var distanceFilter = DistanceFilter()

    /// The steady walking model, or `nil` when ``FusionOptions/Motion/steadyAccelerationIntensity`` is 0.
    @inlinable public var steadyMotion: SteadyMotion? {
        motion.steadyAccelerationIntensity > 0
            ? SteadyMotion(accelerationIntensity: Vector3(motion.steadyAccelerationIntensity, motion.verticalAccelerationIntensity, motion.steadyAccelerationIntensity),
                           settleRate: motion.steadySettleRate, turnRate: motion.steadyTurnRate)
            : nil
    }
    /// `diag(q_a, q_a,vertical, q_a)`, m²/s³, world axes (+Y up).
    public var accelerationIntensities: Vector3 { Vector3(motion.accelerationIntensity, motion.verticalAccelerationIntensity, motion.accelerationIntensity) }
    /// The variance per axis, m², of a translation by half the systematic drift over `L`
    /// metres of path, `f L / 2` in a direction nobody knows: `(f L / 2)² / 3`
    /// (``FusionOptions/Acquisition/vioDriftFraction``). What a fixed point's acquisition adds without
    /// ``FusionOptions/Acquisition/considersDriftGeometry``, and where the considered term cannot be computed.
    @inlinable public func driftTranslationVariance(pathMetres L: Double) -> Double {
        let half = 0.5 * acquisition.vioDriftFraction * L
        return half * half / 3
    }
    /// `ρ + (1 − ρ) / (1 + exp(−(θ − θ_e)/w))`: the likelihood that the radio reports no
    /// direction for an object `offAxisAngle` (θ, radians) from the device's −Z axis, with
    /// `θ_e = fieldOfViewHalfAngle − fieldOfViewMargin`.
    public func missingDirectionLikelihood(offAxisAngle theta: Double) -> Double {
        let edge = sensors.fieldOfViewHalfAngle - acquisition.fieldOfViewMargin
        let rho = acquisition.missingDirectionLikelihood
        return rho + (1 - rho) / (1 + exp(-(theta - edge) / max(acquisition.fieldOfViewEdgeWidth, 1e-6)))
    }
    /// The variance per axis, m², of where a tag carried for `T` seconds may be now relative
    /// to where it was: `(v T)² / 3`, `v` = ``FusionOptions/Carry/speed`` (a length `v T` in a direction
    /// nobody knows). What the engine's fresh acquisition after a reported carry widens its
    /// prior by, and the evaluation's exact posterior with it.
    @inlinable public func carryDisplacementVariance(seconds T: Double) -> Double {
        let reach = carry.speed * max(T, 0)
        return reach * reach / 3
    }
    /// The options for an object ranged by `ranging`: for Channel Sounding, its range noise
    /// and outlier rate replace UWB's everywhere (batch acquisition, gates, the IMM), a
    /// missing direction carries no information (`missingDirectionLikelihood = 1`: the radio
    /// never gives one), the signal timeout is longer, and the coaching thresholds are the
    /// radio's (`channelSounding.angleThreshold`, `channelSounding.positionThreshold`), and
    /// the angle is published by its bearing σ alone (``FusionOptions/Coaching/publishesAngleByBearingAlone``);
    /// the acquisition's relinearisation tolerance is scaled by
    /// ``FusionOptions/ChannelSounding/relinearisationToleranceScale``.
    public func forRanging(_ ranging: RangingTechnology) -> FusionOptions {
        guard ranging == .bluetoothChannelSounding else { return self }
        var o = self
        o.sensors.rangeStandardDeviation = channelSounding.rangeStandardDeviation
        o.gating.outlierProbability = channelSounding.outlierProbability
        o.gating.movingShortOutlierFraction = 1
        o.gating.rangeMultipathProbability = channelSounding.multipathProbability
        o.gating.rangeMultipathMaximumExcess = channelSounding.multipathMaximumExcess
        o.gating.rangeMultipathBurstSeconds = channelSounding.multipathBurstSeconds
        o.acquisition.relinearisationTolerance *= max(channelSounding.relinearisationToleranceScale, 0)
        o.acquisition.missingDirectionLikelihood = 1
        o.coaching.signalTimeout = channelSounding.signalTimeout
        o.coaching.horizontalAngleThreshold = channelSounding.angleThreshold
        o.coaching.publishesAngleByBearingAlone = true
        o.coaching.horizontalPositionThreshold = channelSounding.positionThreshold
        o.coaching.verticalPositionThreshold = channelSounding.verticalPositionThreshold
        o.coaching.positionThresholdFractionOfDistance = channelSounding.positionFractionOfDistance
        return o
    }
    public init() {}

    /// Sets the range bias a Channel Sounding object at `distanceMetres` considers:
    /// ``FusionOptions/Sensors/rangeBiasStandardDeviation`` at least
    /// ``FusionOptions/ChannelSounding/rangeBiasFractionOfDistance`` times the distance.
    mutating func considerChannelSoundingRangeBias(distanceMetres d: Double) {
        let scaled = channelSounding.rangeBiasFractionOfDistance * d
        if scaled.isFinite, scaled > sensors.rangeBiasStandardDeviation { sensors.rangeBiasStandardDeviation = scaled }
    }
}

extension FusionOptions {
    /// The robust density of a range residual (``RangeErrorDensity``) with these options'
    /// outlier and multipath probabilities (excess `U(0, L)`).
    @inlinable public var rangeErrorDensity: RangeErrorDensity { rangeErrorDensity(outlierProbability: gating.outlierProbability) }

    /// The forgetting rate of the multipath burst chain, 1/s: `λ = 1/(τ(1 − η))` for bursts of
    /// mean ``FusionOptions/Gating/rangeMultipathBurstSeconds`` `τ` and a multipath probability
    /// `η` (the range density's, ``RangeErrorDensity/excessProbability``); 0, ranges
    /// independent, without bursts or with `η` outside (0, 1).
    @inlinable func burstForgettingRate(multipathProbability eta: Double) -> Double {
        gating.rangeMultipathBurstSeconds > 0 && eta > 0 && eta < 1 ? 1 / (gating.rangeMultipathBurstSeconds * (1 - eta)) : 0
    }

    /// The same density with gross-outlier probability `ε`.
    @inlinable func rangeErrorDensity(outlierProbability eps: Double) -> RangeErrorDensity {
        RangeErrorDensity(outlierProbability: eps, outlierSpan: gating.rangeOutlierSpan,
                          excessProbability: gating.rangeMultipathProbability, excessRange: 0...max(gating.rangeMultipathMaximumExcess, 0))
    }

    /// The information one range carries, m⁻², under the radio's noise model: jitter and
    /// multipath, without the gross-outlier insurance (``RangeErrorDensity/fisherInformation(variance:)``;
    /// `1/σ_r²` for UWB). The evaluation's Cramér–Rao bound reads it.
    public var rangeFisherInformation: Double {
        rangeErrorDensity(outlierProbability: 0).fisherInformation(variance: sensors.rangeStandardDeviation * sensors.rangeStandardDeviation)
    }

    /// The range model from `antennaInWorld` with these options' noise and gate: the one
    /// every estimator step (batch solver, acquisition gate, IMM) uses.
    /// The range model with the nominal noise `σ_r` alone: the batch acquisition's (see
    /// `BatchRefinement`, which explains why it does not use `σ(z)`).
    @inlinable public func nominalRangeModel(from antennaInWorld: Vector3) -> RangeModel {
        RangeModel(antennaInWorld: antennaInWorld, standardDeviation: sensors.rangeStandardDeviation, gate: gating.rangeGate)
    }

    /// The noise grows with the measured range `z`: `σ(z)² = σ_r² + (k z)²` (see
    /// ``FusionOptions/Sensors/rangeErrorFraction``).
    @inlinable public func rangeModel(from antennaInWorld: Vector3, measured z: Double) -> RangeModel {
        RangeModel(antennaInWorld: antennaInWorld, standardDeviation: rangeVariance(measured: z).squareRoot(), gate: gating.rangeGate)
    }

    /// The variance of a range `z` (metres), m²: `σ_r² + (f z)²` (``FusionOptions/Sensors/rangeStandardDeviation``,
    /// ``FusionOptions/Sensors/rangeErrorFraction``).
    @inlinable public func rangeVariance(measured z: Double) -> Double {
        let proportional = sensors.rangeErrorFraction * z
        return sensors.rangeStandardDeviation * sensors.rangeStandardDeviation + proportional * proportional
    }

    /// The azimuth-only model (1 degree of freedom: the range gate's χ² bound).
    @inlinable public func azimuthModel(from antennaInWorld: Vector3, worldFromDevice: Quaternion) -> AzimuthModel {
        AzimuthModel(antennaInWorld: antennaInWorld, worldFromDevice: worldFromDevice, standardDeviation: sensors.azimuthStandardDeviation,
                     gate: gating.rangeGate)
    }

    /// The azimuth + elevation model.
    @inlinable public func directionModel(from antennaInWorld: Vector3, worldFromDevice: Quaternion) -> DirectionModel {
        DirectionModel(antennaInWorld: antennaInWorld, worldFromDevice: worldFromDevice, azimuthStandardDeviation: sensors.azimuthStandardDeviation,
                       elevationStandardDeviation: sensors.elevationStandardDeviation, gate: gating.directionGate)
    }
}
