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
    /// A constant range offset, metres (an antenna delay left uncalibrated; positive: long).
    public var rangeBias: Double = 0
    /// The correlation time, seconds, of the range noise: an AR(1) process
    /// `eₖ = φ eₖ₋₁ + √(1 − φ²) σ wₖ`, `φ = e^{−Δt/τ}`, whose σ stays ``rangeStandardDeviation``
    /// (0: white noise).
    public var rangeErrorCorrelationSeconds: Double = 0
    /// Probability that an update repeats the previous update's range (a stale value a
    /// ranging stack passed on again) instead of a new one.
    public var staleRepeatProbability: Double = 0
    public init() {}

    /// Phone-to-phone UWB while walking, from real logs of two Android phones against RTK
    /// truth, 10–22 m apart: bias +0.06 m; σ 0.09–0.12 m with one phone walking, 0.19 m with
    /// both (`bothWalking`); a positive tail to +0.56 m (4 % of ranges 0.2–0.56 m long);
    /// errors correlated in time (0.81 at 1 s, 0.53 at 2 s, 0.23 at 3 s: `τ` = 2.5 s fits
    /// the three within 0.15); 8 % of ranges stale repeats of the previous one. Ranges only
    /// (the logs carry no angles).
    public static func walkingPeerPhoneToPhone(bothWalking: Bool = false) -> RadioModel {
        var radio = RadioModel()
        radio.capabilities = DeviceCapabilities(supportsPreciseDistanceMeasurement: true, supportsDirectionMeasurement: false,
                                                supportsCameraAssistance: true, supportsElevationMeasurement: false)
        radio.rangeStandardDeviation = bothWalking ? 0.19 : 0.11
        radio.rangeBias = 0.06
        radio.nlosProbability = 0.04
        radio.nlosBiasRange = 0.2...0.56
        radio.rangeErrorCorrelationSeconds = 2.5
        radio.staleRepeatProbability = 0.08
        return radio
    }
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
    /// A range reads `d (1 + rangeScaleError) + rangeOffset` before its noise, `d` the true
    /// distance (a scale error of the estimator, and a fixed offset), metres per metre and metres.
    public var rangeScaleError: Double = 0
    /// (See ``rangeScaleError``.)
    public var rangeOffset: Double = 0
    /// The lag-1 correlation `φ` of consecutive procedures' Gaussian errors (an AR(1)
    /// process, `eₖ = φ eₖ₋₁ + √(1 − φ²) σ wₖ`, σ unchanged); 0: independent.
    public var errorCorrelation: Double = 0
    /// Probability that a procedure's range is a *short* outlier: it reads short by
    /// `σ · 3 · (20/3)^U`, `U` uniform — log-uniform from 3σ to 20σ (``shortReadMultiples``), so
    /// that about half of them lie beyond 5σ (an iFFT estimator locking on a spurious early peak).
    public var shortOutlierProbability: Double = 0
    /// How far short a short outlier reads, in multiples of σ: log-uniform between these two
    /// (``shortOutlierProbability``).
    public static let shortReadMultiples = (least: 3.0, most: 20.0)
    /// The received signal strength, dBm, that sets the failure rate and the noise of a
    /// radio whose figures depend on it: `RSSI = signalAtOneMetre − 20 log₁₀(d / 1 m) + s`,
    /// free-space path loss plus shadowing `s ~ N(0, shadowingStandardDeviation²)` drawn once
    /// per object and run. A figure given at the strong and the weak signal is interpolated
    /// linearly between ``strongSignal`` and ``weakSignal`` (and held beyond them).
    public var signalAtOneMetre: Double = -45
    /// (See ``signalAtOneMetre``.) dB.
    public var shadowingStandardDeviation: Double = 2
    /// The RSSI, dBm, at which the figures given for a strong signal hold (5 m in free space).
    public var strongSignal: Double = -59
    /// The RSSI, dBm, at which the figures given for a weak signal hold (45 m in free space).
    public var weakSignal: Double = -78
    /// The failure probability at ``weakSignal`` (``failedProcedureProbability`` holds at
    /// ``strongSignal``); `nil`: the same at every signal.
    public var failedProcedureProbabilityAtWeakSignal: Double?
    /// The range noise σ at ``weakSignal``, metres (``rangeStandardDeviation`` holds at
    /// ``strongSignal``); `nil`: the same at every signal.
    public var rangeStandardDeviationAtWeakSignal: Double?
    public init() {}

    // MARK: Radio profiles from real Channel Sounding logs
    //
    // nRF54L-class Channel Sounding, board to board, a still initiator and a still reflector,
    // 2 Hz, flags every 5 m from 5 m to 45 m, each log one estimator's ranges (failed
    // procedures kept as failures): held-out real logs the engine is evaluated on. Robust σ
    // is the scaled median absolute deviation; the strong and weak figures are those at 5 m
    // and 45 m. The three estimators are those Ulsamer, Mazur and Knauth compare on BLE6
    // hardware ("Study of BLE6 Ranging Performance in a Utility Basement", CEUR-WS Vol-4047,
    // 2025).

    /// What the three logs share: 2 procedures a second, no other traffic, consecutive errors
    /// correlated 0.2 (0.06–0.38 measured), no multipath term unless a profile adds one.
    private static var boardToBoardLog: ChannelSoundingModel {
        var m = ChannelSoundingModel()
        m.rateHz = 2
        m.errorCorrelation = 0.2
        m.trafficLossRange = 0...0
        m.multipathProbability = 0
        return m
    }

    /// The inverse-FFT estimator: a tight core (robust σ 0.10 m strong, 0.27 m weak);
    /// failures from 9 % to 85 % of procedures as the signal falls; outliers mostly short
    /// (6.5 % beyond −3σ, 3 % beyond −5σ), a few long (2 %, 0.2–1.5 m); a scale error of
    /// −2.7 % of the distance; consecutive errors correlated 0.2 (0.06–0.38 measured).
    public static var inverseFFT: ChannelSoundingModel {
        var m = boardToBoardLog
        m.rangeStandardDeviation = 0.10
        m.rangeStandardDeviationAtWeakSignal = 0.27
        m.failedProcedureProbability = 0.09
        m.failedProcedureProbabilityAtWeakSignal = 0.85
        m.shortOutlierProbability = 0.065
        m.multipathProbability = 0.02
        m.multipathMeanBurstLength = 1
        m.rangeScaleError = -0.027
        return m
    }

    /// The phase-slope estimator: σ 0.3 m strong, 1.9 m weak; failures 0 % to 61 %; reads
    /// *long* by 0.9 m at 5 m to 5 m at 35 m (`d · 13.7 % + 0.22 m`); consecutive errors
    /// correlated 0.2.
    public static var phaseSlope: ChannelSoundingModel {
        var m = boardToBoardLog
        m.rangeStandardDeviation = 0.3
        m.rangeStandardDeviationAtWeakSignal = 1.9
        m.failedProcedureProbability = 0
        m.failedProcedureProbabilityAtWeakSignal = 0.61
        m.rangeScaleError = 0.137
        m.rangeOffset = 0.22
        return m
    }

    /// The round-trip-time estimator: almost never fails (1 %); symmetric errors whose σ
    /// the signal sets, 1.6 m strong to 4.6 m weak; consecutive errors correlated 0.2.
    public static var roundTripTime: ChannelSoundingModel {
        var m = boardToBoardLog
        m.rangeStandardDeviation = 1.6
        m.rangeStandardDeviationAtWeakSignal = 4.6
        m.failedProcedureProbability = 0.01
        return m
    }

    /// The RSSI, dBm, at `distance` metres with shadowing `shadowing` dB.
    public func signal(atDistance distance: Double, shadowing: Double) -> Double {
        signalAtOneMetre - 20 * log10(max(distance, 0.1)) + shadowing
    }

    /// A figure given at the strong signal (`strong`) and perhaps at the weak one, at `rssi` dBm.
    func interpolated(_ strong: Double, weak: Double?, at rssi: Double) -> Double {
        guard let weak, weakSignal < strongSignal else { return strong }
        let f = min(max((strongSignal - rssi) / (strongSignal - weakSignal), 0), 1)
        return strong + f * (weak - strong)
    }

    /// The σ of a procedure's Gaussian error at `distance` metres with shadowing `shadowing`
    /// dB, metres (``rangeStandardDeviation``, interpolated toward
    /// ``rangeStandardDeviationAtWeakSignal`` as the signal falls).
    public func rangeStandardDeviation(atDistance distance: Double, shadowing: Double) -> Double {
        dependsOnSignal ? rangeStandardDeviation(atSignal: signal(atDistance: distance, shadowing: shadowing)) : rangeStandardDeviation
    }

    /// The same σ at a received signal strength of `rssi` dBm, metres.
    func rangeStandardDeviation(atSignal rssi: Double) -> Double {
        interpolated(rangeStandardDeviation, weak: rangeStandardDeviationAtWeakSignal, at: rssi)
    }

    /// A short outlier's reading below the true range, metres, for σ `sigma` (metres) and `u` in
    /// [0, 1]: `σ m (M/m)ᵘ` (``shortReadMultiples``).
    static func shortRead(standardDeviation sigma: Double, _ u: Double) -> Double {
        sigma * shortReadMultiples.least * pow(shortReadMultiples.most / shortReadMultiples.least, u)
    }

    /// The density of a successful procedure's range error `e` (metres) whose Gaussian error
    /// has σ `sigma` (metres), m⁻¹, without the scale error and offset (which no estimator
    /// can tell from the distance without a reference) and without the correlation between
    /// consecutive procedures: what this model draws, term by term —
    /// `p(e) = (1 − s)(1 − η) N(e; 0, σ²) + s (1 − η) S(e) + (1 − s) η Q(e) + s η (S ∗ U)(e)`,
    /// `s` the short-outlier probability (``shortOutlierProbability``), `η` the multipath
    /// probability (the bursts' stationary share), `U` the excess's uniform density on
    /// `[b₀, b₁]`, `Q = N ∗ U` (`RangeErrorDensity`'s excess term), and
    /// `S(e) = g(e/σ)/σ` the short outlier's reading, `g(x) = ∫₀¹ φ(x + 3 (20/3)ᵘ) du` with `φ`
    /// the standard normal density (tabulated once); `S ∗ U` by the
    /// midpoint rule over 16 steps of the excess.
    public func rangeErrorDensity(_ e: Double, standardDeviation sigma: Double) -> Double {
        let v = sigma * sigma
        let s = min(max(shortOutlierProbability, 0), 1), eta = min(max(multipathProbability, 0), 0.999)
        let gaussian = exp(-0.5 * e * e / v) / (2 * Double.pi * v).squareRoot()
        var p = (1 - s) * (1 - eta) * gaussian
        if s > 0 { p += s * (1 - eta) * ShortReadKernel.value(e / sigma) / sigma }
        if eta > 0 {
            // `η Q(e)`, as the engine's density computes it (its tails without cancellation).
            let excess = RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: eta,
                                           excessRange: multipathExcessRange)
            p += (1 - s) * excess.excess(e, variance: v)
            if s > 0 {
                let b0 = multipathExcessRange.lowerBound, b1 = multipathExcessRange.upperBound, steps = 16
                var sum = 0.0
                for k in 0..<steps {
                    sum += ShortReadKernel.value((e - (b0 + (b1 - b0) * (Double(k) + 0.5) / Double(steps))) / sigma)
                }
                p += s * eta * sum / Double(steps) / sigma
            }
        }
        return p
    }

    /// `g(x) = ∫₀¹ φ(x + 3 (20/3)ᵘ) du`, the density in units of σ of a short outlier's reading
    /// (the offset log-uniform from 3σ to 20σ short, the Gaussian error on top): by the
    /// midpoint rule over 256 steps of `u`, tabulated every 0.005 on `[−26, 6]` and
    /// interpolated linearly; 0 outside (below `10⁻⁸` there).
    enum ShortReadKernel {
        static let lower = -26.0, step = 0.005
        static let table: [Double] = {
            let count = Int(32 / step) + 1, steps = 256
            return (0..<count).map { k in
                let x = lower + Double(k) * step
                var sum = 0.0
                for j in 0..<steps {
                    let y = x + ChannelSoundingModel.shortRead(standardDeviation: 1, (Double(j) + 0.5) / Double(steps))
                    sum += exp(-0.5 * y * y)
                }
                return sum / Double(steps) / (2 * Double.pi).squareRoot()
            }
        }()

        static func value(_ x: Double) -> Double {
            let u = (x - lower) / step
            guard u >= 0, u < Double(table.count - 1) else { return 0 }
            let k = Int(u), f = u - Double(k)
            return table[k] + f * (table[k + 1] - table[k])
        }
    }

    /// Whether any figure depends on the signal.
    var dependsOnSignal: Bool { failedProcedureProbabilityAtWeakSignal != nil || rangeStandardDeviationAtWeakSignal != nil }

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

/// One step of a stationary AR(1) error of lag-1 correlation `φ`: `φ eₖ₋₁ + √(1 − φ²) w`, with
/// `w` a fresh draw of the error's own σ (so that σ is unchanged); the fresh draw itself for the
/// first error (the process starts stationary) or when `φ` is 0.
func autoregressive(_ fresh: Double, previous: Double?, correlation phi: Double) -> Double {
    guard phi > 0, let previous else { return fresh }
    return phi * previous + (1 - phi * phi).squareRoot() * fresh
}

/// Senses Channel Sounding objects for ``Simulator``, with its own seeded streams (so that
/// adding such an object changes no UWB draw).
struct ChannelSoundingSensor {
    let model: ChannelSoundingModel
    var rangeNoise: NoiseStream
    var multipathNoise: NoiseStream
    var trafficNoise: NoiseStream
    var failureNoise: NoiseStream
    var outlierNoise: NoiseStream
    var signalNoise: NoiseStream
    var inBurst: [String: Bool] = [:]
    var trafficLoss = 0.0
    var trafficBlock = -1
    /// Per object: the last procedure's Gaussian error (metres) and the shadowing (dB).
    var lastError: [String: Double] = [:]
    var shadowing: [String: Double] = [:]
    /// The part of the last range measured that its short read and multipath excess put
    /// there, metres (``Simulator/Output/rangeOutlierMetres``).
    var lastOutlierMetres = 0.0

    init(model: ChannelSoundingModel, seed: UInt64) {
        self.model = model
        rangeNoise = NoiseStream(seed: seed, source: "cs.range")
        multipathNoise = NoiseStream(seed: seed, source: "cs.multipath")
        trafficNoise = NoiseStream(seed: seed, source: "cs.traffic")
        failureNoise = NoiseStream(seed: seed, source: "cs.failure")
        outlierNoise = NoiseStream(seed: seed, source: "cs.outlier")
        signalNoise = NoiseStream(seed: seed, source: "cs.signal")
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
        let d = (objectPosition - antenna).length
        var failure = model.failedProcedureProbability, sigma = model.rangeStandardDeviation
        if model.dependsOnSignal {
            if shadowing[o.id] == nil { shadowing[o.id] = signalNoise.gaussian(standardDeviation: model.shadowingStandardDeviation) }
            let rssi = model.signal(atDistance: d, shadowing: shadowing[o.id] ?? 0)
            failure = model.interpolated(failure, weak: model.failedProcedureProbabilityAtWeakSignal, at: rssi)
            sigma = model.rangeStandardDeviation(atSignal: rssi)
        }
        if failureNoise.bernoulli(failure) { return .some(nil) }
        // The Gaussian error, AR(1) across procedures (white when φ = 0: then exactly σ w).
        let phi = min(max(model.errorCorrelation, 0), 0.99)
        var error = rangeNoise.gaussian(standardDeviation: sigma)
        error = autoregressive(error, previous: lastError[o.id], correlation: phi)
        lastError[o.id] = error
        var r = d + error
        if model.rangeScaleError != 0 || model.rangeOffset != 0 { r += d * model.rangeScaleError + model.rangeOffset }
        let clean = r
        if model.shortOutlierProbability > 0, outlierNoise.bernoulli(model.shortOutlierProbability) {
            r -= ChannelSoundingModel.shortRead(standardDeviation: sigma, outlierNoise.uniform())
        }
        // Multipath excess in Markov bursts (mean length `multipathMeanBurstLength`).
        let exit = 1 / max(model.multipathMeanBurstLength, 1)
        let pi = min(max(model.multipathProbability, 0), 0.999)
        let now = inBurst[o.id] ?? false
        let multipath = now ? !multipathNoise.bernoulli(exit) : multipathNoise.bernoulli(exit * pi / (1 - pi))
        inBurst[o.id] = multipath
        if multipath { r += multipathNoise.uniform(model.multipathExcessRange.lowerBound, model.multipathExcessRange.upperBound) }
        let range = max(r, 0.05)
        lastOutlierMetres = range - max(clean, 0.05)
        return .some(range)
    }
}
