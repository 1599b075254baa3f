import Foundation
import NearbyFusion
import NearbyFusionRecording

/// How well an object holds its convergence once it first has it: from the first converged
/// update on, how many updates there were, how many of them were converged, how often the
/// status changed (converged ↔ not) and the seconds they span. Counted as updates stream in,
/// and mergeable: a fleet's pool adds the counts and the seconds of its recordings.
///
/// The one definition behind `evaluate`'s "converged after first" and "changes/min" columns
/// and `accuracy`'s "converged ↔ not after first" column.
public struct ConvergenceStability: Sendable, Hashable {
    /// The first converged update's time, seconds (`nil` until then).
    public private(set) var firstConvergedAt: Double?
    /// Updates from the first converged one on (it included), and the converged ones among them.
    public internal(set) var updates = 0
    /// (See ``updates``.)
    public internal(set) var converged = 0
    /// Status changes after the first convergence (that one is not a change).
    public internal(set) var changes = 0
    /// From the first converged update to the last update, seconds.
    public internal(set) var seconds = 0.0
    private var wasConverged = false

    public init() {}

    /// Counts already gathered (a pool's).
    init(updates: Int, converged: Int, changes: Int, seconds: Double) {
        self.updates = updates; self.converged = converged; self.changes = changes; self.seconds = seconds
    }

    /// Adds another object's or recording's counts and seconds (its changes stay its own:
    /// the boundary between two objects is not a change).
    public mutating func merge(_ other: ConvergenceStability) {
        updates += other.updates; converged += other.converged; changes += other.changes; seconds += other.seconds
        if let t = other.firstConvergedAt { firstConvergedAt = min(firstConvergedAt ?? t, t) }
    }

    /// Counts one update at time `t`, seconds, converged or not.
    public mutating func add(converged isConverged: Bool, at t: Double) {
        if isConverged, firstConvergedAt == nil { firstConvergedAt = t }
        if let first = firstConvergedAt {
            updates += 1
            if isConverged { converged += 1 }
            if isConverged != wasConverged, t > first { changes += 1 }
            seconds = t - first
        }
        wasConverged = isConverged
    }

    /// The share of updates converged from the first convergence on (`nil` before it).
    public var convergedShare: Double? { updates > 0 ? Double(converged) / Double(updates) : nil }

    /// Status changes per minute after the first convergence (`nil` until it spans any time).
    public var changesPerMinute: Double? { seconds > 0 ? Double(changes) / (seconds / 60) : nil }
}
