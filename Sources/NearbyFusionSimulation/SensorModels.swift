import Foundation
import NearbyFusion
import NearbyFusionRecording

// How the simulated device senses: the UWB and Channel Sounding radios, what blocks them, the VIO.

/// The UWB radio's sensing model.
public struct RadioModel: Sendable, Hashable {
    /// What the simulated device can measure.
    public var capabilities: DeviceCapabilities = .phone
    /// Updates per second per object.
    public var rateHz: Double = 10
    /// Range noise σ, metres.
    public var rangeStandardDeviation: Double = 0.06
    /// Azimuth and elevation noise σ, radians.
    public var azimuthStandardDeviation: Double = Angle.radians(degrees: 3)
    /// (See ``azimuthStandardDeviation``.)
    public var elevationStandardDeviation: Double = Angle.radians(degrees: 5)
    /// Direction only inside this half-angle around device −Z, radians.
    public var fieldOfViewHalfAngle: Double = Angle.radians(degrees: 55)
    /// Probability that one range is non-line-of-sight, and its positive bias range, metres.
    public var nlosProbability: Double = 0
    /// (See ``nlosProbability``.)
    public var nlosBiasRange: ClosedRange<Double> = 0.5...2.0
    /// Mean length, in updates, of a non-line-of-sight burst. 1 draws each update
    /// independently; longer bursts follow a two-state Markov chain whose stationary NLOS
    /// probability is `nlosProbability` (leave NLOS with probability 1/L, enter it with
    /// probability (1/L)·π/(1 − π)).
    public var nlosMeanBurstLength: Double = 1
    /// Boxes (a wall, furniture) that add a positive range bias, metres, when the line of
    /// sight crosses them.
    public var occluders: [Occluder] = []
    /// When set, the user's body (modelled as a box 0.45 m wide behind the phone) adds a
    /// bias from this range to ranges whose line of sight passes through it.
    public var bodyOcclusionBiasRange: ClosedRange<Double>? = nil
    /// Probability that a whole update is lost.
    public var dropoutProbability: Double = 0.02
    /// Probability that the direction is missing inside the field of view.
    public var directionDropoutProbability: Double = 0.05
    /// UWB antenna relative to the camera, device frame, metres.
    public var antennaOffsetInDevice: Vector3 = .zero
    public init() {}
}

/// A Bluetooth Channel Sounding link's sensing model (distance only). Its defaults are the
/// figures the engine's Channel Sounding noise model cites (`FusionOptions`): a 0.35 m
/// jitter for phone-class antennas, multipath that adds 0.2–1.5 m of positive excess in
/// bursts (80 MHz resolves paths only ~1.9 m apart), 10 % of procedures failing (a `nil`
/// distance), and a rate that drops when other Bluetooth or Wi-Fi traffic rises.
public struct ChannelSoundingModel: Sendable, Hashable {
    /// Procedures per second with no other traffic.
    public var rateHz: Double = 5
    /// Range noise σ, metres.
    public var rangeStandardDeviation: Double = 0.35
    /// Probability that a procedure's range carries multipath excess, and the mean length of
    /// a burst of such procedures.
    public var multipathProbability: Double = 0.15
    /// Mean length of a multipath burst, procedures.
    public var multipathMeanBurstLength: Double = 3
    /// Positive excess of a multipath range, metres (uniform).
    public var multipathExcessRange: ClosedRange<Double> = 0.2...1.5
    /// Probability that a procedure fails (the update carries `distance: null`).
    public var failedProcedureProbability: Double = 0.1
    /// Every `trafficPeriod` seconds the share of procedures lost to other traffic is drawn
    /// anew, uniformly in this range: the rate varies between 5 and 2.5 Hz.
    public var trafficLossRange: ClosedRange<Double> = 0...0.5
    /// How often the traffic loss is drawn anew, seconds.
    public var trafficPeriod: Double = 3
    public init() {}

    /// The density of this model's range error (jitter, plus the multipath excess in a
    /// `multipathProbability` share of ranges), as the engine writes one.
    public var rangeErrorDensity: RangeErrorDensity {
        RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: multipathProbability,
                          excessRange: multipathExcessRange)
    }

    /// The Fisher information one of these ranges carries, m⁻²: with the defaults 0.73/σ²,
    /// so the Cramér–Rao bound is 1.17× the one of the jitter alone (which no estimator can
    /// reach: a multipath range tells less). Bursts make neighbouring ranges share their
    /// excess; the bound treats them as independent, so it stays optimistic.
    public var rangeFisherInformation: Double {
        rangeErrorDensity.fisherInformation(variance: rangeStandardDeviation * rangeStandardDeviation)
    }
}

/// An axis-aligned box in the world that biases ranges through it (non-line-of-sight).
public struct Occluder: Sendable, Hashable {
    /// The box's corners, world frame, metres.
    public var minimumCorner: Vector3
    /// (See ``minimumCorner``.)
    public var maximumCorner: Vector3
    /// Positive range bias, metres, drawn uniformly per update.
    public var biasRange: ClosedRange<Double>

    /// A box between the corners whose ranges through it run long by `biasRange` metres.
    public init(minimumCorner: Vector3, maximumCorner: Vector3, biasRange: ClosedRange<Double>) {
        self.minimumCorner = minimumCorner
        self.maximumCorner = maximumCorner
        self.biasRange = biasRange
    }

    /// Whether the segment from `a` to `b` crosses the box (slab test).
    public func blocks(from a: Vector3, to b: Vector3) -> Bool {
        var t0 = 0.0, t1 = 1.0
        let d = b - a
        for (o, dir, lo, hi) in [(a.x, d.x, minimumCorner.x, maximumCorner.x), (a.y, d.y, minimumCorner.y, maximumCorner.y),
                                 (a.z, d.z, minimumCorner.z, maximumCorner.z)] {
            if abs(dir) < 1e-12 {
                if o < lo || o > hi { return false }
            } else {
                var ta = (lo - o) / dir, tb = (hi - o) / dir
                if ta > tb { swap(&ta, &tb) }
                t0 = max(t0, ta); t1 = min(t1, tb)
                if t0 > t1 { return false }
            }
        }
        return true
    }
}

/// The VIO's sensing model and the scene.
public struct VIOModel: Sendable, Hashable {
    /// Poses per second.
    public var rateHz: Double = 60
    /// White position noise σ, metres, and orientation noise σ, radians.
    public var positionNoise: Double = 0.002
    /// (See ``positionNoise``.)
    public var orientationNoise: Double = Angle.radians(degrees: 0.2)
    /// Drift as a fraction of the distance travelled (a fixed random direction).
    public var driftFraction: Double = 0.005
    /// ARKit's ambient intensity of the scene, lumens (below ~50 tracking is limited by
    /// insufficient features).
    public var ambientIntensity: Double = 1000
    /// Seconds of `limited(initializing)` at the start.
    public var initializingDuration: Double = 0.3
    /// Speed above which tracking is `limited(excessiveMotion)`, m/s.
    public var excessiveSpeed: Double = 2.5
    public init() {}
}

/// Senses Channel Sounding objects for ``Simulator``, with its own seeded streams (so that
/// adding such an object changes no UWB draw).
struct ChannelSoundingSensor {
    let model: ChannelSoundingModel
    var rangeNoise: NoiseStream
    var multipathNoise: NoiseStream
    var trafficNoise: NoiseStream
    var failureNoise: NoiseStream
    var inBurst: [String: Bool] = [:]
    var trafficLoss = 0.0
    var trafficBlock = -1

    init(model: ChannelSoundingModel, seed: UInt64) {
        self.model = model
        rangeNoise = NoiseStream(seed: seed, source: "cs.range")
        multipathNoise = NoiseStream(seed: seed, source: "cs.multipath")
        trafficNoise = NoiseStream(seed: seed, source: "cs.traffic")
        failureNoise = NoiseStream(seed: seed, source: "cs.failure")
    }

    /// The procedure at radio tick `tick` (time `t`): `nil` when no procedure runs then (the
    /// Channel Sounding rate is a fraction of the radio tick rate, less what traffic takes),
    /// `.some(nil)` when it fails, else the measured range, metres.
    mutating func measure(_ o: SimulatedObject, objectPosition: Vector3, antenna: Vector3, tick: Int, at t: Double,
                          radioRateHz: Double) -> Double?? {
        let every = max(1, Int((radioRateHz / model.rateHz).rounded()))
        guard tick % every == 0 else { return nil }
        let block = Int(t / model.trafficPeriod)
        if block != trafficBlock {
            trafficBlock = block
            trafficLoss = trafficNoise.uniform(model.trafficLossRange.lowerBound, model.trafficLossRange.upperBound)
        }
        if trafficNoise.bernoulli(trafficLoss) { return nil }
        if failureNoise.bernoulli(model.failedProcedureProbability) { return .some(nil) }
        var r = (objectPosition - antenna).length + rangeNoise.gaussian(standardDeviation: model.rangeStandardDeviation)
        // Multipath excess in Markov bursts (mean length `multipathMeanBurstLength`).
        let exit = 1 / max(model.multipathMeanBurstLength, 1)
        let pi = min(max(model.multipathProbability, 0), 0.999)
        let now = inBurst[o.id] ?? false
        let multipath = now ? !multipathNoise.bernoulli(exit) : multipathNoise.bernoulli(exit * pi / (1 - pi))
        inBurst[o.id] = multipath
        if multipath { r += multipathNoise.uniform(model.multipathExcessRange.lowerBound, model.multipathExcessRange.upperBound) }
        return .some(max(r, 0.05))
    }
}
