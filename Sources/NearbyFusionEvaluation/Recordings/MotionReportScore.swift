import Foundation
import NearbyFusion
import NearbyFusionRecording

/// How well an object's published `motion` (`moving` / `stationary` / `unknown`) tells the
/// truth, from its first convergence on: the share of updates that say `moving` while the
/// truth moves and `stationary` while it keeps still, how often a report of `moving` turned
/// to `stationary` while the object was in fact still moving (a carried tag or a walking
/// friend said to have stopped), and how long after the object stopped `stationary` was
/// said. Counted as updates stream in, and mergeable like ``ConvergenceStability``.
///
/// The one definition behind `accuracy`'s `motion` columns and `evaluate`'s `motion` line.
/// What counts as moving is the caller's: the simulator's true velocity at 0.1 m/s or more in
/// `accuracy`, the timed truth's speed over the half second centred on each update in
/// `evaluate` (``ObjectEvaluation/movingTruthSpeed``).
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
    /// A stop under way: when the truth stopped moving, whether it has been seen still since
    /// (not only in transition), and the wait for the first `stationary` after it.
    private var stop: PendingStop?
    private struct PendingStop: Sendable, Hashable {
        var time: Double
        var confirmed = false
        var lag: Double?
    }

    public init() {}

    /// The finished score of a whole record: each update's `(truthMoving, reported,
    /// converged, time)` added in order (``add(truthMoving:reported:converged:at:)``), then
    /// ``finish()``.
    public init<S: Sequence>(_ updates: S)
    where S.Element == (truthMoving: Bool?, reported: MotionActivityState?, converged: Bool, time: Double) {
        for u in updates { add(truthMoving: u.truthMoving, reported: u.reported, converged: u.converged, at: u.time) }
        finish()
    }

    /// Counts one update at `t`, seconds: whether the truth moved (`nil`: in transition, not
    /// scored — a truth measured over a window cannot say which side of a start or a stop
    /// the update lies), what the engine said (`nil` when it said nothing), and whether it
    /// was converged (counting starts at the first converged update).
    public mutating func add(truthMoving: Bool?, reported: MotionActivityState?, converged: Bool, at t: Double) {
        if converged { started = true }
        guard started else { return }
        if truthMoving != true, truthWasMoving == true, stop == nil { stop = PendingStop(time: t) }
        if var s = stop {
            if s.lag == nil, reported == .stationary { s.lag = t - s.time }
            if truthMoving == false { s.confirmed = true }
            stop = s
        }
        switch truthMoving {
        case true?:
            movingUpdates += 1
            if reported == .moving { reportedMoving += 1 }
            if previousReport == .moving && reported == .stationary { stationaryWhileMoving += 1 }
            // Moving again: a stop seen still and never said `stationary` was missed; one
            // seen only in transition was no stop.
            if let s = stop, s.confirmed { missedStops += 1 }
            stop = nil
            truthWasMoving = true
        case false?:
            stillUpdates += 1
            if reported == .stationary { reportedStationary += 1 }
            if let s = stop, let lag = s.lag {
                stationaryLags.append(lag)
                stop = nil
            }
            truthWasMoving = false
        case nil:
            break
        }
        previousReport = reported
    }

    /// Closes the record: a stop seen still and still waiting for `stationary` is missed.
    public mutating func finish() {
        if let s = stop, s.confirmed, s.lag == nil { missedStops += 1 }
        stop = nil
    }

    /// Adds another object's or run's counts (call ``finish()`` on each first).
    public mutating func merge(_ other: MotionReportScore) {
        movingUpdates += other.movingUpdates; reportedMoving += other.reportedMoving
        stillUpdates += other.stillUpdates; reportedStationary += other.reportedStationary
        stationaryWhileMoving += other.stationaryWhileMoving
        stationaryLags += other.stationaryLags; missedStops += other.missedStops
    }

    /// The share of moving updates that said `moving` (`nil` without any).
    /// (See ``movingUpdates``.)
    public var movingShare: Double? { movingUpdates > 0 ? Double(reportedMoving) / Double(movingUpdates) : nil }
    /// The share of still updates that said `stationary` (`nil` without any).
    /// (See ``stillUpdates``.)
    public var stationaryShare: Double? { stillUpdates > 0 ? Double(reportedStationary) / Double(stillUpdates) : nil }
    /// The stops of the truth counted (reported or missed).
    public var stops: Int { stationaryLags.count + missedStops }
}

/// ``MotionReportScore``'s figures as `evaluate` publishes them per object (`motionReport`
/// in `--json`).
public struct MotionReportSummary: Codable, Sendable, Hashable {
    /// Updates (from the first convergence on) whose truth moved, and the share of them that
    /// said `moving` (`nil` when none moved).
    public var movingUpdates: Int
    /// (See ``movingUpdates``.)
    public var movingShare: Double?
    /// Updates whose truth kept still, and the share of them that said `stationary` (`nil`
    /// when none did).
    public var stillUpdates: Int
    /// (See ``stillUpdates``.)
    public var stationaryShare: Double?
    /// Times the report turned from `moving` to `stationary` while the truth moved.
    public var stationaryWhileMoving: Int
    /// Stops of the truth, and how many got no `stationary` before it moved again or ended.
    public var stops: Int
    /// (See ``stops``.)
    public var missedStops: Int
    /// Seconds from a stop to `stationary`: median and largest over the stops that got one.
    public var stationaryAfterStopMedianSeconds: Double?
    /// (See ``stationaryAfterStopMedianSeconds``.)
    public var stationaryAfterStopMaximumSeconds: Double?

    /// The summary of a finished score; `nil` when it counted no update (never converged, or
    /// no truth).
    public init?(_ score: MotionReportScore) {
        guard score.movingUpdates + score.stillUpdates > 0 else { return nil }
        movingUpdates = score.movingUpdates
        movingShare = score.movingShare
        stillUpdates = score.stillUpdates
        stationaryShare = score.stationaryShare
        stationaryWhileMoving = score.stationaryWhileMoving
        stops = score.stops
        missedStops = score.missedStops
        stationaryAfterStopMedianSeconds = Statistics.quantile(score.stationaryLags, 0.5)
        stationaryAfterStopMaximumSeconds = score.stationaryLags.max()
    }
}
