import NearbyFusion

/// How well an object's published `motion` (`moving` / `stationary` / `unknown`) tells the
/// truth, from its first convergence on: the share of updates that say `moving` while the
/// truth moves and `stationary` while it keeps still, how often a report of `moving` turned
/// to `stationary` while the object was in fact still moving (a carried tag or a walking
/// friend said to have stopped), and how long after the object stopped `stationary` was
/// said. Counted as updates stream in, and mergeable like ``ConvergenceStability``.
///
/// The one definition behind `accuracy`'s `motion` columns and `evaluate`'s `motion` line.
/// What counts as moving is the caller's: the simulator's true velocity at 0.1 m/s or more in
/// `accuracy`, the timed truth's speed over half a second in `evaluate`
/// (``ObjectEvaluation/movingTruthSpeed``).
public struct MotionReportScore: Sendable, Hashable {
    /// Updates (from the first convergence on) at which the truth moved, and those of them
    /// that said `moving`.
    public private(set) var movingUpdates = 0, reportedMoving = 0
    /// Updates at which the truth kept still, and those of them that said `stationary`.
    public private(set) var stillUpdates = 0, reportedStationary = 0
    /// Changes of the report from `moving` to `stationary` at an update whose truth moved.
    public private(set) var stationaryWhileMoving = 0
    /// Seconds from each stop of the truth (moving → still) to the first `stationary` after
    /// it, for the stops that got one before the object moved again or the record ended.
    public private(set) var stationaryLags: [Double] = []
    /// Stops that got no `stationary` before the object moved again or the record ended.
    public private(set) var missedStops = 0

    private var started = false
    private var truthWasMoving: Bool?
    private var previousReport: MotionActivityState?
    private var stopTime: Double?

    public init() {}

    /// Counts one update at `t`, seconds: whether the truth moved, what the engine said
    /// (`nil` when it said nothing), and whether it was converged (counting starts at the
    /// first converged update).
    public mutating func add(truthMoving: Bool, reported: MotionActivityState?, converged: Bool, at t: Double) {
        if converged { started = true }
        guard started else { return }
        if truthMoving {
            movingUpdates += 1
            if reported == .moving { reportedMoving += 1 }
            if previousReport == .moving && reported == .stationary { stationaryWhileMoving += 1 }
            if stopTime != nil { missedStops += 1; stopTime = nil }
        } else {
            stillUpdates += 1
            if reported == .stationary { reportedStationary += 1 }
            if truthWasMoving == true { stopTime = t }
            if let stop = stopTime, reported == .stationary {
                stationaryLags.append(t - stop)
                stopTime = nil
            }
        }
        truthWasMoving = truthMoving
        previousReport = reported
    }

    /// Closes the record: a stop still waiting for `stationary` is missed.
    public mutating func finish() {
        if stopTime != nil { missedStops += 1; stopTime = nil }
    }

    /// Adds another object's or run's counts (call ``finish()`` on each first).
    public mutating func merge(_ other: MotionReportScore) {
        movingUpdates += other.movingUpdates; reportedMoving += other.reportedMoving
        stillUpdates += other.stillUpdates; reportedStationary += other.reportedStationary
        stationaryWhileMoving += other.stationaryWhileMoving
        stationaryLags += other.stationaryLags; missedStops += other.missedStops
    }

    /// The share of moving updates that said `moving` (`nil` without any).
    public var movingShare: Double? { movingUpdates > 0 ? Double(reportedMoving) / Double(movingUpdates) : nil }
    /// The share of still updates that said `stationary` (`nil` without any).
    public var stationaryShare: Double? { stillUpdates > 0 ? Double(reportedStationary) / Double(stillUpdates) : nil }
    /// The stops of the truth counted (reported or missed).
    public var stops: Int { stationaryLags.count + missedStops }
}

/// ``MotionReportScore``'s shares as `evaluate` publishes them per object (`motionReport` in
/// `--json`). Only the shares: a recording's timed truth gives its speed over half a second
/// (``ObjectEvaluation/movingTruthSpeed``), so a stop is seen up to 0.5 s late — a prompt
/// `stationary` would count as said while the object moved, and the lag after a stop would
/// read short. `accuracy`, with the simulator's exact velocity, gives those too.
public struct MotionReportSummary: Codable, Sendable, Hashable {
    /// Updates (from the first convergence on) whose truth moved, and the share of them that
    /// said `moving` (`nil` when none moved).
    public var movingUpdates: Int
    public var movingShare: Double?
    /// Updates whose truth kept still, and the share of them that said `stationary` (`nil`
    /// when none did).
    public var stillUpdates: Int
    public var stationaryShare: Double?

    /// The summary of a score; `nil` when it counted no update (never converged, or no truth).
    public init?(_ score: MotionReportScore) {
        guard score.movingUpdates + score.stillUpdates > 0 else { return nil }
        movingUpdates = score.movingUpdates
        movingShare = score.movingShare
        stillUpdates = score.stillUpdates
        stationaryShare = score.stationaryShare
    }
}
