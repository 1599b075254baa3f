import Foundation
import NearbyFusion
import NearbyFusionRecording

/// Everything a folder's total row needs, in a form that merges across machines: counts and
/// sums add up, errors are kept as ``ErrorSketch``es. A fleet of recordings is evaluated in
/// shards (`evaluate FOLDER --shard K/N --json`, whose document carries its pool under
/// `pool`), and `merge` adds the pools and prints the total as one machine would have — every
/// count, share, mean and RMSE the same, medians and 95th percentiles to the sketches' 0.5 %.
public struct EvaluationPool: Codable, Sendable, Equatable {
    /// The version of this document's layout (1).
    public var version = 1
    /// Recordings evaluated (with truth), skipped (no truth) and failed.
    public var recordings = 0, skipped = 0, failed = 0
    /// Radio updates scored.
    public var updates = 0
    /// Updates publishing each output, summed over objects.
    public var published: [String: Int] = [:]
    /// Updates with a direction from the radio itself.
    public var rawDirectionCount = 0
    /// Converged updates, and those more than 15° off.
    public var convergedCount = 0, falseConvergedCount = 0
    /// ``ConvergenceStability``'s counts, flat in the JSON document.
    public var updatesAfterFirst = 0, convergedAfterFirst = 0, statusChanges = 0
    /// Seconds from the first convergence to the last update, summed over objects.
    public var secondsAfterFirst = 0.0
    /// The four counts above as one ``ConvergenceStability``.
    var stability: ConvergenceStability {
        get { ConvergenceStability(updates: updatesAfterFirst, converged: convergedAfterFirst, changes: statusChanges, seconds: secondsAfterFirst) }
        set {
            updatesAfterFirst = newValue.updates; convergedAfterFirst = newValue.converged
            statusChanges = newValue.changes; secondsAfterFirst = newValue.seconds
        }
    }
    /// Truth category → published estimate → count, summed over objects.
    public var verticalConfusion: [String: [String: Int]] = [:]
    /// Per update: horizontal-angle errors (°), position errors (m), NEES, CRLB √tr (m), the
    /// errors of converged updates (m), the raw radio's angle errors (°).
    public var angleErrors = ErrorSketch(), positionErrors = ErrorSketch(), nees = ErrorSketch()
    /// (See ``angleErrors``.)
    public var crlb = ErrorSketch(), convergedErrors = ErrorSketch(), rawAngleErrors = ErrorSketch()
    /// Per object: time to first convergence, and when the bound first allows 3°, seconds.
    public var timesToConvergence = ErrorSketch(), boundTimes = ErrorSketch()
    /// The worst object's convergence lag, seconds.
    public var worstLag: Double?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case version, recordings, skipped, failed, updates, published, rawDirectionCount, convergedCount, falseConvergedCount,
             updatesAfterFirst, convergedAfterFirst, statusChanges, secondsAfterFirst, verticalConfusion,
             angleErrors, positionErrors, nees, crlb, convergedErrors, rawAngleErrors, timesToConvergence, boundTimes, worstLag
    }

    /// Reads a shard's pool, refusing what no evaluation writes: a count below 0 or beyond
    /// ``ErrorSketch/largestCount``, a non-finite time, an inconsistent sketch. (A pool that
    /// reads is one that merges without overflow.)
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int {
            let n = try c.decode(Int.self, forKey: key)
            guard n >= 0, n <= ErrorSketch.largestCount else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "a count out of range (\(n))")
            }
            return n
        }
        func counts(_ table: [String: Int], _ key: CodingKeys) throws -> [String: Int] {
            guard table.values.allSatisfy({ $0 >= 0 && $0 <= ErrorSketch.largestCount }) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "a count out of range")
            }
            return table
        }
        version = try c.decode(Int.self, forKey: .version)
        recordings = try count(.recordings); skipped = try count(.skipped); failed = try count(.failed)
        updates = try count(.updates)
        published = try counts(c.decode([String: Int].self, forKey: .published), .published)
        rawDirectionCount = try count(.rawDirectionCount)
        convergedCount = try count(.convergedCount); falseConvergedCount = try count(.falseConvergedCount)
        updatesAfterFirst = try count(.updatesAfterFirst); convergedAfterFirst = try count(.convergedAfterFirst)
        statusChanges = try count(.statusChanges)
        secondsAfterFirst = try c.decode(Double.self, forKey: .secondsAfterFirst)
        guard secondsAfterFirst.isFinite, secondsAfterFirst >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: .secondsAfterFirst, in: c, debugDescription: "not a finite duration")
        }
        verticalConfusion = try c.decode([String: [String: Int]].self, forKey: .verticalConfusion)
        for (_, row) in verticalConfusion { _ = try counts(row, .verticalConfusion) }
        angleErrors = try c.decode(ErrorSketch.self, forKey: .angleErrors)
        positionErrors = try c.decode(ErrorSketch.self, forKey: .positionErrors)
        nees = try c.decode(ErrorSketch.self, forKey: .nees)
        crlb = try c.decode(ErrorSketch.self, forKey: .crlb)
        convergedErrors = try c.decode(ErrorSketch.self, forKey: .convergedErrors)
        rawAngleErrors = try c.decode(ErrorSketch.self, forKey: .rawAngleErrors)
        timesToConvergence = try c.decode(ErrorSketch.self, forKey: .timesToConvergence)
        boundTimes = try c.decode(ErrorSketch.self, forKey: .boundTimes)
        worstLag = try c.decodeIfPresent(Double.self, forKey: .worstLag)
        if let lag = worstLag, !lag.isFinite {
            throw DecodingError.dataCorruptedError(forKey: .worstLag, in: c, debugDescription: "not a finite number")
        }
    }

    /// The pool of some recordings' objects.
    public init(_ reports: [RecordingEvaluationReport], skipped: Int = 0, failed: Int = 0) {
        recordings = reports.count
        self.skipped = skipped
        self.failed = failed
        let objects = reports.flatMap(\.objects)
        var times: [Double] = [], bounds: [Double] = []
        var angle: [Double] = [], position: [Double] = [], nees: [Double] = [], crlb: [Double] = [], converged: [Double] = [], raw: [Double] = []
        for o in objects {
            updates += o.updates
            for (k, share) in o.availability { published[k, default: 0] += Int((share * Double(o.updates)).rounded()) }
            rawDirectionCount += o.rawDirectionCount
            convergedCount += o.convergedCount
            falseConvergedCount += o.falseConvergedCount
            stability.merge(o.stability)
            for (row, columns) in o.verticalConfusion {
                for (column, n) in columns { verticalConfusion[row, default: [:]][column, default: 0] += n }
            }
            angle += o.angleErrors; position += o.positionErrors; nees += o.neesValues
            crlb += o.crlbValues; converged += o.convergedErrors; raw += o.rawAngleErrors
            if let t = o.timeToConvergenceSeconds { times.append(t) }
            if let t = o.boundAllowsAngleAfterSeconds { bounds.append(t) }
            if let lag = o.convergenceLagSeconds { worstLag = Swift.max(worstLag ?? lag, lag) }
        }
        angleErrors = ErrorSketch(angle); positionErrors = ErrorSketch(position); self.nees = ErrorSketch(nees)
        self.crlb = ErrorSketch(crlb); convergedErrors = ErrorSketch(converged); rawAngleErrors = ErrorSketch(raw)
        timesToConvergence = ErrorSketch(times); boundTimes = ErrorSketch(bounds)
    }

    /// Adds another shard's pool.
    public mutating func merge(_ other: EvaluationPool) {
        recordings += other.recordings; skipped += other.skipped; failed += other.failed
        updates += other.updates
        for (k, n) in other.published { published[k, default: 0] += n }
        rawDirectionCount += other.rawDirectionCount
        convergedCount += other.convergedCount; falseConvergedCount += other.falseConvergedCount
        stability.merge(other.stability)
        for (row, columns) in other.verticalConfusion {
            for (column, n) in columns { verticalConfusion[row, default: [:]][column, default: 0] += n }
        }
        angleErrors.merge(other.angleErrors); positionErrors.merge(other.positionErrors); nees.merge(other.nees)
        crlb.merge(other.crlb); convergedErrors.merge(other.convergedErrors); rawAngleErrors.merge(other.rawAngleErrors)
        timesToConvergence.merge(other.timesToConvergence); boundTimes.merge(other.boundTimes)
        if let lag = other.worstLag { worstLag = Swift.max(worstLag ?? lag, lag) }
    }

    /// The total row, computed as ``RecordingEvaluation/pooled(_:name:)`` computes it.
    public func total(name: String = "total") -> ObjectEvaluation {
        var t = ObjectEvaluation(object: name, updates: updates, availability: [:], verticalConfusion: verticalConfusion)
        let n = Double(Swift.max(updates, 1))
        t.availability = published.mapValues { Double($0) / n }
        t.convergedCount = convergedCount; t.falseConvergedCount = falseConvergedCount
        t.stability = stability
        t.rawDirectionCount = rawDirectionCount
        t.finish(angle: angleErrors.statistics, position: positionErrors.statistics, nees: nees.statistics, crlb: crlb.statistics,
                 convergedErrors: convergedErrors.statistics, raw: rawAngleErrors.statistics)
        t.timeToConvergenceSeconds = timesToConvergence.statistics?.median
        t.boundAllowsAngleAfterSeconds = boundTimes.statistics?.median
        t.convergenceLagSeconds = worstLag
        return t
    }
}
