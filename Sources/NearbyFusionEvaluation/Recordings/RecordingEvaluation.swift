import Foundation
import NearbyFusion
import NearbyFusionRecording

/// Accuracy of the engine on one object of a recording that carries `truth` lines.
public struct ObjectEvaluation: Codable, Sendable {
    /// The object's identifier (or the row's name for a pooled total).
    public var object: String
    /// Radio updates scored.
    public var updates: Int
    /// |horizontalAngle − truth| of every published horizontal angle, degrees.
    public var horizontalAngleErrorDegrees: ErrorStatistics?
    /// ‖worldTransform translation − truth‖ of every published transform, metres.
    public var positionErrorMetres: ErrorStatistics?
    /// Share of updates (0…1) in which each output was published.
    public var availability: [String: Double]
    /// Truth category (rows: same, above, below) → published estimate (columns: unknown,
    /// same, above, below, aboveOrBelow, null) → count.
    public var verticalConfusion: [String: [String: Int]]
    /// Seconds from the object's first update to its first `converged` status.
    public var timeToConvergenceSeconds: Double?
    /// Share of `converged` updates whose horizontal angle was more than 15° off.
    public var falseConvergedRate: Double?
    /// Mean NEES `(p̂ − p)ᵀ P⁻¹ (p̂ − p)` of the position over converged updates (3 is ideal).
    public var meanNEES: Double?
    /// The same per minute from the first convergence on (element `k`: converged updates in
    /// `[k, k + 1)` minutes after it; `nil` for a minute without one): whether a long
    /// session's covariance stays honest, grows overconfident as ranges pile up, or forgets
    /// a well-located object as the device travels.
    public var meanNEESByMinute: [Double?]?
    /// The mean NEES over the converged updates at which the object's truth was moving
    /// (``ObjectEvaluation/truthMotion(times:positions:)``; updates in transition count in
    /// neither this mean nor the still one); `nil` unless some converged update was. A moving object's covariance is
    /// honest only if it is so while the object moves: a tag picked up is followed with its
    /// still model certain for the first ~0.7 s, and its NEES then (tens) is hidden in a
    /// run's mean by the seconds it lies still.
    public var meanNEESWhileMoving: Double?
    /// The mean NEES over the other converged updates, when ``meanNEESWhileMoving`` is given.
    public var meanNEESWhileStill: Double?
    /// The Cramér–Rao lower bound on the position error, `√tr(J⁻¹)` with `J` the Fisher
    /// information of every range and direction so far (evaluated at the truth, nominal
    /// noise), median over converged updates, metres.
    public var crlbPositionMetres: Double?
    /// Statistical efficiency: RMSE of the converged position error over the RMS of the
    /// bound at the same updates (1 is the best any unbiased estimator can do).
    public var rmseOverCRLB: Double?
    /// The 1σ bearing, degrees, at which the next figure is taken: the σ at which the engine
    /// publishes this object's horizontal angle (`FusionOptions.coaching.horizontalAngleThreshold`
    /// of its radio: 3° for UWB, 10° for Channel Sounding).
    public var boundAngleDegrees: Double?
    /// Seconds from the object's first update to the first update at which the Cramér–Rao
    /// bound allows a horizontal angle within ``boundAngleDegrees``: the
    /// 1σ bound on the bearing, `√(eᵀ J⁻¹ e) / d_h` with `e` the horizontal unit vector
    /// across the line of sight and `d_h` the horizontal distance (evaluated at the truth).
    public var boundAllowsAngleAfterSeconds: Double?
    /// First convergence minus that moment, seconds (negative: converged before the bound
    /// allowed the angle).
    public var convergenceLagSeconds: Double?
    /// Share of updates converged from the first convergence on (0…1).
    public var convergedShareAfterFirst: Double?
    /// Changes of status between converged and not converged from the first convergence
    /// to the last update, per minute.
    public var statusChangesPerMinute: Double?
    /// Baseline without camera assistance: the radio's own direction, projected to a
    /// horizontal angle with the device pose. Share of updates that have one…
    public var rawDirectionAvailability: Double?
    /// …and its horizontal-angle error, degrees.
    public var rawHorizontalAngleErrorDegrees: ErrorStatistics?
    /// The radio itself against the truth (``RangeErrorSummary``): what a user of their own
    /// UWB hardware needs before any fusion — its bias, its noise, and how long its errors last.
    public var rangeError: RangeErrorSummary?
    /// The published `distance` against the truth, beside the raw ranges' error, and its lag
    /// (``DistanceErrorSummary``; per object, not pooled).
    public var distanceError: DistanceErrorSummary?
    /// Whether the published `motion` told the truth (``MotionReportSummary``; the truth's
    /// motion from its speed before and after each update,
    /// ``ObjectEvaluation/truthMotion(times:positions:)``); per object, not pooled; `nil` before the first
    /// convergence.
    public var motionReport: MotionReportSummary?
    /// Raw values, for pooling across recordings (not encoded).
    var angleErrors: [Double] = []
    var positionErrors: [Double] = []
    var convergedCount = 0
    var falseConvergedCount = 0
    var neesValues: [Double] = []
    /// Per converged update with a NEES: seconds since the first convergence (per object, not
    /// pooled).
    var neesTimes: [Double] = []
    /// Per converged update with a NEES: its index in ``motionSeries`` (whether the truth
    /// was moving then is read at the end, ``truthMotion(times:positions:)``).
    var neesUpdates: [Int] = []
    /// Truth moving at least this fast, m/s, counts as moving: a person's slowest walk is
    /// ~0.3 m/s, while the VIO's drift and noise move a still object's truth in the app's
    /// frame by 5–12 mm from one line to the next (`truthMotion` takes the speed over a
    /// quarter second each side of an update: under 0.1 m/s on every shipped still object).
    public static let movingTruthSpeed = 0.1

    /// Whether a truth sampled at `times` (seconds, ascending) was moving at each sample: its
    /// speed is taken over the quarter second before the sample and the quarter second after
    /// it (each span at least 0.15 s; at the ends of the record, the one there is); `true`
    /// where both are ``movingTruthSpeed`` or more, `false` where both are less, `nil` — in
    /// transition — where they disagree. A report made right at a start or a stop is then
    /// neither right nor wrong, and a stop is dated within a few hundredths of a second of
    /// when it happens (a trailing half-second window saw it up to 0.5 s late).
    public static func truthMotion(times: [Double], positions: [Vector3]) -> [Bool?] {
        var out = [Bool?](repeating: nil, count: min(times.count, positions.count))
        var lower = 0, upper = 0
        for k in out.indices {
            while lower < k && times[lower] < times[k] - 0.25 { lower += 1 }
            if upper < k { upper = k }
            while upper + 1 < out.count && times[upper + 1] <= times[k] + 0.25 { upper += 1 }
            func fast(_ a: Int, _ b: Int) -> Bool? {
                let span = times[b] - times[a]
                return span >= 0.15 ? (positions[b] - positions[a]).length / span >= movingTruthSpeed : nil
            }
            let halves = [fast(lower, k), fast(k, upper)].compactMap { $0 }
            out[k] = halves.isEmpty ? false : (halves.allSatisfy { $0 } ? true : (halves.contains(true) ? nil : false))
        }
        return out
    }
    var crlbValues: [Double] = []
    var convergedErrors: [Double] = []
    var rawAngleErrors: [Double] = []
    var rawDirectionCount = 0
    /// Each range's error against the truth, `(t, z − ‖p − a‖)`, seconds and metres.
    var rangeErrorSeries: [(time: Double, error: Double)] = []
    /// The true distance from the antenna at every scored update, and the published one where
    /// there is one, `(t, d, d̂)`: seconds, metres.
    var distanceSeries: [(time: Double, truth: Double, published: Double?)] = []
    /// At every update with a range, a published distance and a truth before the object is
    /// located (no `worldTransform`): `|z − d|` and `|d̂ − d|`, metres.
    var beforeLocatedDistanceErrors: [(raw: Double, published: Double)] = []
    /// Updates from the first convergence on, how many of them converged, status changes
    /// among them, and the seconds they span (for pooling).
    var stability = ConvergenceStability()
    /// Per scored update: its time, the truth, what `motion` said and whether it was
    /// converged (scored at the end, with the truth's speed centred on each update).
    var motionSeries: [(time: Double, truth: Vector3, reported: MotionActivityState?, converged: Bool)] = []

    enum CodingKeys: String, CodingKey {
        case object, updates, horizontalAngleErrorDegrees, positionErrorMetres, availability, verticalConfusion,
             timeToConvergenceSeconds, falseConvergedRate, meanNEES, meanNEESByMinute, meanNEESWhileMoving, meanNEESWhileStill,
             crlbPositionMetres, rmseOverCRLB,
             boundAngleDegrees, boundAllowsAngleAfterSeconds, convergenceLagSeconds, convergedShareAfterFirst, statusChangesPerMinute,
             rawDirectionAvailability, rawHorizontalAngleErrorDegrees, rangeError, distanceError, motionReport
    }

    /// Every figure that is absent when it has nothing to measure, except the times that can
    /// be *never* — ``timeToConvergenceSeconds``, ``boundAllowsAngleAfterSeconds`` and
    /// ``convergenceLagSeconds`` — which are written as `null`: a JSON consumer then reads
    /// "never", not a missing key or a number.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(object, forKey: .object)
        try c.encode(updates, forKey: .updates)
        try c.encodeIfPresent(horizontalAngleErrorDegrees, forKey: .horizontalAngleErrorDegrees)
        try c.encodeIfPresent(positionErrorMetres, forKey: .positionErrorMetres)
        try c.encode(availability, forKey: .availability)
        try c.encode(verticalConfusion, forKey: .verticalConfusion)
        try c.encode(timeToConvergenceSeconds, forKey: .timeToConvergenceSeconds)
        try c.encodeIfPresent(falseConvergedRate, forKey: .falseConvergedRate)
        try c.encodeIfPresent(meanNEES, forKey: .meanNEES)
        try c.encodeIfPresent(meanNEESByMinute, forKey: .meanNEESByMinute)
        try c.encodeIfPresent(meanNEESWhileMoving, forKey: .meanNEESWhileMoving)
        try c.encodeIfPresent(meanNEESWhileStill, forKey: .meanNEESWhileStill)
        try c.encodeIfPresent(crlbPositionMetres, forKey: .crlbPositionMetres)
        try c.encodeIfPresent(rmseOverCRLB, forKey: .rmseOverCRLB)
        try c.encodeIfPresent(boundAngleDegrees, forKey: .boundAngleDegrees)
        try c.encode(boundAllowsAngleAfterSeconds, forKey: .boundAllowsAngleAfterSeconds)
        try c.encode(convergenceLagSeconds, forKey: .convergenceLagSeconds)
        try c.encodeIfPresent(convergedShareAfterFirst, forKey: .convergedShareAfterFirst)
        try c.encodeIfPresent(statusChangesPerMinute, forKey: .statusChangesPerMinute)
        try c.encodeIfPresent(rawDirectionAvailability, forKey: .rawDirectionAvailability)
        try c.encodeIfPresent(rawHorizontalAngleErrorDegrees, forKey: .rawHorizontalAngleErrorDegrees)
        try c.encodeIfPresent(rangeError, forKey: .rangeError)
        try c.encodeIfPresent(distanceError, forKey: .distanceError)
        try c.encodeIfPresent(motionReport, forKey: .motionReport)
    }
}

/// A radio's range errors against the truth, `e = z − ‖p − a‖` (metres; `p` the object's
/// true position, `a` the antenna's), over every range of one object: per object only (a
/// fleet's pooled row leaves it out: biases differ from radio to radio).
public struct RangeErrorSummary: Codable, Sendable, Hashable {
    /// Ranges with a truth.
    public var count: Int
    /// The median error, metres: a constant bias (an uncalibrated antenna delay) shows here.
    public var medianMetres: Double
    /// `1.4826 × median |e − median|`, metres: the spread about it, robust to outliers (σ for
    /// Gaussian errors).
    public var robustStandardDeviationMetres: Double
    /// The correlation of the errors (less their median, clipped at ±5 robust σ) with the
    /// errors about one second later (the first range at least 1 s later, within 1.5 s): 0
    /// for independent ranges, near 1 for errors that last — then ranges a second apart are
    /// not independent measurements, whatever a filter that weighs them so claims. `nil`
    /// with fewer than 10 such pairs.
    public var correlationAfterOneSecond: Double?

    /// The summary of `(time, error)` pairs in time order; `nil` when empty.
    public init?(_ series: [(time: Double, error: Double)]) {
        guard !series.isEmpty else { return nil }
        let sorted = series.map(\.error).sorted()
        let median = Self.median(sorted)
        let spread = 1.4826 * Self.median(sorted.map { abs($0 - median) }.sorted())
        count = series.count
        medianMetres = median
        robustStandardDeviationMetres = spread
        let clip = max(5 * spread, 1e-9)
        func centred(_ e: Double) -> Double { min(max(e - median, -clip), clip) }
        var sxy = 0.0, sxx = 0.0, syy = 0.0, sx = 0.0, sy = 0.0, n = 0.0
        var j = 0
        for (t, e) in series {
            while j < series.count && series[j].time < t + 1 { j += 1 }
            guard j < series.count else { break }
            guard series[j].time <= t + 1.5 else { continue }
            let x = centred(e), y = centred(series[j].error)
            sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y; n += 1
        }
        if n >= 10 {
            let cov = sxy / n - sx / n * sy / n
            let vx = sxx / n - sx / n * sx / n, vy = syy / n - sy / n * sy / n
            let r = cov / (vx * vy).squareRoot()
            correlationAfterOneSecond = r.isFinite ? r : nil
        }
    }

    static func median(_ sorted: [Double]) -> Double {
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// The evaluation of one recording.
public struct RecordingEvaluationReport: Codable, Sendable {
    /// The recording's path.
    public var recording: String
    /// Each object's evaluation, in the header's order.
    public var objects: [ObjectEvaluation]
}

/// Replays a recording through the engine and scores what it publishes against the
/// recording's `truth` lines (static or timed; a timed object uses its latest truth at or
/// before each update). The true horizontal angle and height difference use the
/// recording's own device poses, so VIO error is charged to the recording, not the engine.
public enum RecordingEvaluation {

    /// Categories of the vertical confusion table.
    public static let truthCategories = ["same", "above", "below"]
    /// The columns of the vertical confusion table: what was published.
    public static let estimateCategories = ["unknown", "same", "above", "below", "aboveOrBelow", "null"]

    /// The Cramér–Rao bound on the horizontal angle to `p` from `c`, radians: `√(eᵀ J⁻¹ e) / d_h`,
    /// `e = (−u_z, 0, u_x)/d_h` across the horizontal line of sight `u = p − c`. `J` gets a
    /// prior of 10⁻⁶ m⁻² (σ 1 km) per axis so that a rank-deficient `J` (ranges from one place,
    /// or from a plane) still bounds what it does determine. `nil` when `p` is straight above
    /// or below `c`.
    public static func horizontalAngleBound(fisher: Matrix3, object p: Vector3, device c: Vector3) -> Double? {
        let u = Vector3(p.x - c.x, 0, p.z - c.z)
        let dh = u.length
        guard dh > 1e-6, let inverse = (fisher + Matrix3.scaledIdentity(1e-6)).inverse else { return nil }
        let e = Vector3(-u.z / dh, 0, u.x / dh)
        let variance = inverse.quadraticForm(e)
        return variance >= 0 ? variance.squareRoot() / dh : nil
    }

    /// The truth's vertical category for a height difference `Δy` (object − device, metres):
    /// `same` within ±τ, else `above` or `below`.
    public static func trueVerticalCategory(heightDifference dy: Double, levelTolerance tau: Double) -> VerticalDirectionEstimate {
        abs(dy) <= tau ? .same : (dy > 0 ? .above : .below)
    }

    /// The horizontal angle the radio's own direction gives (the baseline without camera
    /// assistance), radians; `nil` for a direction straight up or down.
    public static func rawHorizontalAngle(directionInDevice d: Vector3, pose: DevicePose) -> Double? {
        HorizontalAngle.angle(objectInWorld: pose.positionInWorld + pose.worldFromDevice.rotate(d),
                              devicePositionInWorld: pose.positionInWorld, worldFromDevice: pose.worldFromDevice)
    }

    /// Replays the recording at `path` and scores every object that has `truth` lines.
    public static func evaluate(path: String, options: FusionOptions = FusionOptions()) throws -> RecordingEvaluationReport {
        var evaluator: RecordingEvaluator?
        try RecordingReplay.drive(path: path, options: options, withMoments: true, start: { h in
            evaluator = RecordingEvaluator(header: h, options: options)
        }) { step in evaluator?.observe(step) }
        return evaluator?.report(recording: path) ?? RecordingEvaluationReport(recording: path, objects: [])
    }

    /// Pools several objects (for a folder's total row).
    public static func pooled(_ list: [ObjectEvaluation], name: String) -> ObjectEvaluation {
        var total = ObjectEvaluation(object: name, updates: 0, availability: [:], verticalConfusion: [:])
        var rawCount = 0
        var availabilityWeighted: [String: Double] = [:]
        var times: [Double] = [], boundTimes: [Double] = [], lags: [Double] = []
        for o in list {
            total.updates += o.updates
            total.angleErrors += o.angleErrors
            total.positionErrors += o.positionErrors
            total.convergedCount += o.convergedCount
            total.falseConvergedCount += o.falseConvergedCount
            total.neesValues += o.neesValues
            total.crlbValues += o.crlbValues
            total.convergedErrors += o.convergedErrors
            total.rawAngleErrors += o.rawAngleErrors
            rawCount += o.rawDirectionCount
            for (k, v) in o.availability { availabilityWeighted[k, default: 0] += v * Double(o.updates) }
            for (row, columns) in o.verticalConfusion {
                for (column, count) in columns { total.verticalConfusion[row, default: [:]][column, default: 0] += count }
            }
            if let t = o.timeToConvergenceSeconds { times.append(t) }
            if let t = o.boundAllowsAngleAfterSeconds { boundTimes.append(t) }
            if let t = o.convergenceLagSeconds { lags.append(t) }
            total.stability.merge(o.stability)
        }
        total.availability = availabilityWeighted.mapValues { $0 / Double(max(total.updates, 1)) }
        total.rawDirectionCount = rawCount
        total.timeToConvergenceSeconds = times.isEmpty ? nil : ErrorStatistics(times)?.median
        total.finish()
        // Medians over the objects; the lag is the worst object's (a target holds for each).
        total.boundAllowsAngleAfterSeconds = ErrorStatistics(boundTimes)?.median
        total.convergenceLagSeconds = lags.max()
        return total
    }
}

/// One object's running score while a recording replays (``RecordingEvaluation/evaluate(path:options:)``).
struct ObjectScorer {
    static let outputs = ["distance", "direction", "horizontalAngle", "verticalDirectionEstimate", "worldTransform"]
    var evaluation: ObjectEvaluation
    /// Updates publishing each output.
    var availability: [String: Int]
    var firstUpdate: Double?
    /// Time of the first update at which the bound allows the angle, seconds (the first
    /// convergence's is `evaluation.stability.firstConvergedAt`).
    var boundAllowsTime: Double?
    /// The latest truth (static, or timed at or before the update), world frame.
    var truth: Vector3?
    /// Takes a `truth` line: `p` (static, or timed at or before the next update).
    mutating func observeTruth(_ p: Vector3) {
        truth = p
    }
    /// Fisher information of every range and direction so far, at the truth.
    var fisher = Matrix3.zero
    /// What the object's radio gives (``FusionOptions/forRanging(_:)``), read at its first
    /// scored update: the information of one range, m⁻² (``FusionOptions/rangeFisherInformation``),
    /// and the bearing σ, radians, at which the engine publishes its angle.
    var radio: (rangeInformation: Double, publishedAngle: Double)?

    init(object: String) {
        var confusion: [String: [String: Int]] = [:]
        for t in RecordingEvaluation.truthCategories {
            confusion[t] = Dictionary(uniqueKeysWithValues: RecordingEvaluation.estimateCategories.map { ($0, 0) })
        }
        evaluation = ObjectEvaluation(object: object, updates: 0, availability: [:], verticalConfusion: confusion)
        availability = Dictionary(uniqueKeysWithValues: Self.outputs.map { ($0, 0) })
    }

    /// Scores one update and what the engine published for it.
    mutating func score(_ m: UWBMeasurement, estimate e: NearbyObjectEstimate, moments: MixtureMoments?, pose: DevicePose?,
                        header: RecordingHeader, options: FusionOptions) {
        evaluation.updates += 1
        if firstUpdate == nil { firstUpdate = m.timestamp }
        if e.distance != nil { availability["distance"]! += 1 }
        if e.direction != nil { availability["direction"]! += 1 }
        if e.horizontalAngle != nil { availability["horizontalAngle"]! += 1 }
        if e.verticalDirectionEstimate != nil { availability["verticalDirectionEstimate"]! += 1 }
        if e.worldTransform != nil { availability["worldTransform"]! += 1 }
        let converged = e.convergence?.status.isConverged == true
        if converged, evaluation.timeToConvergenceSeconds == nil { evaluation.timeToConvergenceSeconds = m.timestamp - firstUpdate! }
        evaluation.stability.add(converged: converged, at: m.timestamp)
        guard let p = truth, let device = pose else { return }
        evaluation.motionSeries.append((m.timestamp, p, e.motion, converged))
        let trueAngle = HorizontalAngle.angle(objectInWorld: p, devicePositionInWorld: device.positionInWorld,
                                              worldFromDevice: device.worldFromDevice)
        if radio == nil {
            let o = options.forRanging(header.ranging(of: evaluation.object))
            radio = (o.rangeFisherInformation, o.coaching.horizontalAngleThreshold)
            evaluation.boundAngleDegrees = Angle.degrees(radians: o.coaching.horizontalAngleThreshold)
        }
        accumulateInformation(m, truth: p, device: device, trueAngle: trueAngle, header: header, options: options)
        let trueDistance = (p - (device.positionInWorld + device.worldFromDevice.rotate(options.sensors.antennaOffsetInDevice))).length
        if trueDistance.isFinite {
            evaluation.distanceSeries.append((m.timestamp, trueDistance, e.distance.flatMap { $0.isFinite ? $0 : nil }))
            if e.worldTransform == nil, let r = m.distance, r > 0, r.isFinite, let d = e.distance, d.isFinite,
               header.capabilities.supportsPreciseDistanceMeasurement {
                evaluation.beforeLocatedDistanceErrors.append((abs(r - trueDistance), abs(d - trueDistance)))
            }
        }
        if boundAllowsTime == nil,
           let bound = RecordingEvaluation.horizontalAngleBound(fisher: fisher, object: p, device: device.positionInWorld),
           bound <= radio!.publishedAngle {
            boundAllowsTime = m.timestamp
            evaluation.boundAllowsAngleAfterSeconds = m.timestamp - firstUpdate!
        }
        var angleError: Double?
        if let a = e.horizontalAngle, let trueAngle {
            angleError = abs(Angle.degrees(radians: Angle.wrapped(a - trueAngle)))
            evaluation.angleErrors.append(angleError!)
        }
        if let w = e.worldTransform { evaluation.positionErrors.append((w.translation - p).scaledLength) }
        let dy = p.y - device.positionInWorld.y
        let truthCategory = RecordingEvaluation.trueVerticalCategory(heightDifference: dy, levelTolerance: options.coaching.levelTolerance).rawValue
        evaluation.verticalConfusion[truthCategory]![e.verticalDirectionEstimate?.rawValue ?? "null"]! += 1
        if converged {
            evaluation.convergedCount += 1
            if let w = e.worldTransform, let bound = fisher.inverse, bound.trace > 0 {
                evaluation.crlbValues.append(bound.trace.squareRoot())
                evaluation.convergedErrors.append((w.translation - p).scaledLength)
            }
            if let error = angleError, error > 15 { evaluation.falseConvergedCount += 1 }
            if let moments, let inverse = moments.covariance.inverse {
                evaluation.neesValues.append(inverse.quadraticForm(moments.meanInWorld - p))
                evaluation.neesTimes.append(m.timestamp - (evaluation.stability.firstConvergedAt ?? m.timestamp))
                evaluation.neesUpdates.append(evaluation.motionSeries.count - 1)
            }
        }
    }

    /// Adds this update's Fisher information at the truth, `J += Hᵀ R⁻¹ H` (range with the
    /// radio's own noise model — Channel Sounding's jitter is ~6× UWB's and some of its ranges
    /// are multipath, so each carries `I < 1/σ²`: ``FusionOptions/rangeFisherInformation`` —
    /// azimuth, and elevation where measured), and scores the raw direction as a horizontal angle (the baseline without
    /// camera assistance).
    private mutating func accumulateInformation(_ m: UWBMeasurement, truth p: Vector3, device: DevicePose, trueAngle: Double?,
                                                header: RecordingHeader, options: FusionOptions) {
        if let r = m.distance, r > 0, header.capabilities.supportsPreciseDistanceMeasurement, let radio {
            let u = (p - device.positionInWorld).normalized
            fisher += radio.rangeInformation * Matrix3.outer(u, u)
            let antenna = device.positionInWorld + device.worldFromDevice.rotate(options.sensors.antennaOffsetInDevice)
            let error = r - (p - antenna).length
            if error.isFinite { evaluation.rangeErrorSeries.append((m.timestamp, error)) }
        }
        if let d = m.directionInDevice, header.capabilities.supportsDirectionMeasurement {
            evaluation.rawDirectionCount += 1
            let model = DirectionModel(antennaInWorld: device.positionInWorld, worldFromDevice: device.worldFromDevice,
                                       azimuthStandardDeviation: options.sensors.azimuthStandardDeviation,
                                       elevationStandardDeviation: options.sensors.elevationStandardDeviation, gate: 0)
            let h = model.jacobian(p)
            fisher += (1 / (options.sensors.azimuthStandardDeviation * options.sensors.azimuthStandardDeviation)) * Matrix3.outer(h.row0, h.row0)
            if header.capabilities.supportsElevationMeasurement && d.y != 0 {
                fisher += (1 / (options.sensors.elevationStandardDeviation * options.sensors.elevationStandardDeviation)) * Matrix3.outer(h.row1, h.row1)
            }
            // Baseline: the raw direction as a horizontal angle.
            if let raw = RecordingEvaluation.rawHorizontalAngle(directionInDevice: d, pose: device), let trueAngle {
                evaluation.rawAngleErrors.append(abs(Angle.degrees(radians: Angle.wrapped(raw - trueAngle))))
            }
        }
    }

    /// The mean of `values` per whole minute of `seconds` (each ≥ 0): element `k` over
    /// `[60k, 60k + 60)`, `nil` where none fell or the mean is not finite; `nil` for no values.
    static func meansByMinute(values: [Double], seconds: [Double]) -> [Double?]? {
        guard let last = seconds.max(), last.isFinite else { return nil }
        var sums = [Double](repeating: 0, count: Int(last / 60) + 1), counts = [Int](repeating: 0, count: sums.count)
        for (v, t) in zip(values, seconds) where t >= 0 {
            sums[Int(t / 60)] += v
            counts[Int(t / 60)] += 1
        }
        return zip(sums, counts).map { sum, n in
            let mean = sum / Double(n)
            return n > 0 && mean.isFinite ? mean : nil
        }
    }

    /// The evaluation with its statistics computed.
    func finished() -> ObjectEvaluation {
        var r = evaluation
        let n = Double(max(r.updates, 1))
        r.availability = availability.mapValues { Double($0) / n }
        r.finish()
        r.rangeError = RangeErrorSummary(evaluation.rangeErrorSeries)
        r.distanceError = DistanceErrorSummary(evaluation.distanceSeries, rawErrors: evaluation.rangeErrorSeries.map(\.error))
        r.distanceError?.noteBeforeLocated(evaluation.beforeLocatedDistanceErrors)
        // One rule for whether the truth moves, for the motion score and the NEES split.
        let truthMoving = ObjectEvaluation.truthMotion(times: evaluation.motionSeries.map(\.time),
                                                       positions: evaluation.motionSeries.map(\.truth))
        r.motionReport = MotionReportSummary(MotionReportScore(zip(evaluation.motionSeries, truthMoving).map {
            (truthMoving: $1, reported: $0.reported, converged: $0.converged, time: $0.time)
        }))
        r.meanNEESByMinute = Self.meansByMinute(values: evaluation.neesValues, seconds: evaluation.neesTimes)
        let neesMoving = evaluation.neesUpdates.map { truthMoving[$0] }
        if neesMoving.contains(true) {
            // Updates in transition (`nil`) count in neither mean.
            func mean(moving: Bool) -> Double? {
                let v = zip(evaluation.neesValues, neesMoving).filter { $0.1 == moving }.map(\.0)
                return v.isEmpty ? nil : v.reduce(0, +) / Double(v.count)
            }
            r.meanNEESWhileMoving = mean(moving: true)
            r.meanNEESWhileStill = mean(moving: false)
        }
        if let first = evaluation.stability.firstConvergedAt, let allowed = boundAllowsTime { r.convergenceLagSeconds = first - allowed }
        return r
    }
}

extension ObjectEvaluation {
    mutating func finish() {
        finish(angle: ErrorStatistics(angleErrors), position: ErrorStatistics(positionErrors), nees: ErrorStatistics(neesValues),
               crlb: ErrorStatistics(crlbValues), convergedErrors: ErrorStatistics(convergedErrors), raw: ErrorStatistics(rawAngleErrors))
    }

    /// The published figures from the statistics of each error series (exact, or from a
    /// fleet's sketches: ``EvaluationPool/total(name:)``) and the counters.
    mutating func finish(angle: ErrorStatistics?, position: ErrorStatistics?, nees: ErrorStatistics?, crlb: ErrorStatistics?,
                         convergedErrors: ErrorStatistics?, raw: ErrorStatistics?) {
        horizontalAngleErrorDegrees = angle
        positionErrorMetres = position
        falseConvergedRate = convergedCount > 0 ? Double(falseConvergedCount) / Double(convergedCount) : nil
        // Every figure is finite or absent (`null` in JSON, `—` in tables).
        meanNEES = nees?.mean
        crlbPositionMetres = crlb?.median
        if let rmse = convergedErrors?.rmse, let rmsBound = crlb?.rmse, rmsBound > 0 {
            let ratio = rmse / rmsBound
            rmseOverCRLB = ratio.isFinite ? ratio : nil
        }
        convergedShareAfterFirst = stability.convergedShare
        statusChangesPerMinute = stability.changesPerMinute
        rawDirectionAvailability = updates > 0 ? Double(rawDirectionCount) / Double(updates) : nil
        rawHorizontalAngleErrorDegrees = raw
    }
}

/// The evaluation of a recording, fed one replay step at a time: what
/// ``RecordingEvaluation/evaluate(path:options:)`` does over a whole file, for a caller that
/// replays the recording anyway (the HTML report scores it in the same pass, so a recording
/// read from standard input, which cannot be read twice, gets its evaluation table too).
/// The steps must come from a replay made `withMoments: true` with the same `options`.
public struct RecordingEvaluator {
    let header: RecordingHeader
    let options: FusionOptions
    var scorers: [ObjectScorer]   // per object, in header order
    var pose: DevicePose?

    /// An evaluator for a recording with `header`, replayed with `options`.
    public init(header: RecordingHeader, options: FusionOptions = FusionOptions()) {
        self.header = header
        self.options = options
        scorers = header.objects.map { ObjectScorer(object: $0.0) }
    }

    /// Scores one step of the replay.
    public mutating func observe(_ step: RecordingReplay.Step) {
        switch step {
        case .pose(let p, _): pose = p
        case .truth(let k, _, let p): scorers[k].observeTruth(p)
        case .removed, .motionState: break
        case .uwb(let k, let m, let e, let moments):
            scorers[k].score(m, estimate: e, moments: moments, pose: pose, header: header, options: options)
        }
    }

    /// The evaluation so far, named `recording`.
    public func report(recording: String) -> RecordingEvaluationReport {
        RecordingEvaluationReport(recording: recording, objects: scorers.map { $0.finished() })
    }
}
