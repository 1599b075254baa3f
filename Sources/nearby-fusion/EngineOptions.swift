import ArgumentParser
import NearbyFusion

/// Engine settings a command line may change (the rest are ``FusionOptions``' defaults).
struct EngineOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The σ, metres, of a constant bias the ranges may carry (an uncalibrated antenna delay), considered in the covariance the coaching and the outputs read; 0 (the default) takes ranges as unbiased, as Nearby Interaction's calibrated UWB is. See FusionOptions.rangeBiasStandardDeviation.", valueName: "METRES"))
    var rangeBias = 0.0

    @Option(help: ArgumentHelp("The shortest time, seconds, between two fused updates of one object: a faster radio's other updates are published, not fused (its errors last longer than its interval). 0 fuses every update. See FusionOptions.minimumFusionInterval.", valueName: "SECONDS"))
    var fusionInterval = FusionOptions().minimumFusionInterval

    func validate() throws {
        guard rangeBias.isFinite, rangeBias >= 0 else { throw ValidationError("--range-bias must be a number of metres, 0 or more") }
        guard fusionInterval.isFinite, fusionInterval >= 0 else { throw ValidationError("--fusion-interval must be a number of seconds, 0 or more") }
    }

    var fusionOptions: FusionOptions {
        var o = FusionOptions()
        o.rangeBiasStandardDeviation = rangeBias
        o.minimumFusionInterval = fusionInterval
        return o
    }
}
