import Foundation
import NearbyFusion
import NearbyFusionRecording

/// The published `distance` against the truth, beside the radio's own ranges: how much the
/// fusion removes from the raw error, and how far it lags (per object: `evaluate`'s
/// `distanceError`, and the simulator's `ScenarioRun.distanceLag`).
public struct DistanceErrorSummary: Codable, Sendable, Hashable {
    /// Updates that published a distance and had a truth.
    public var count: Int
    /// `|d̂ − ‖p − a‖|` over those updates, metres: the median and the 95th percentile.
    public var publishedMedianMetres: Double
    /// (See ``publishedMedianMetres``.)
    public var publishedP95Metres: Double
    /// `|z − ‖p − a‖|` over every range with a truth, metres (`nil` without ranges).
    public var rawMedianMetres: Double?
    /// (See ``rawMedianMetres``.)
    public var rawP95Metres: Double?
    /// How far the published distance lags the true one, seconds (``lag(truth:published:maximum:)``);
    /// `nil` with fewer than ten published distances.
    public var lagSeconds: Double?
    /// The updates before the object is located (no `worldTransform` published) that have a
    /// range and a published distance; until then a UWB object's distance is its ranges' own,
    /// late spikes set aside, and a Channel Sounding tag's its ranges smoothed.
    public var beforeLocatedCount: Int?
    /// `|z − ‖p − a‖|` and `|d̂ − ‖p − a‖|` at those updates, metres: their 95th percentiles
    /// (`nil` without such updates).
    public var beforeLocatedRawP95Metres: Double?
    /// (See ``beforeLocatedRawP95Metres``.)
    public var beforeLocatedPublishedP95Metres: Double?

    /// Sets the figures before the object is located from the `(|z − d|, |d̂ − d|)` pairs
    /// of those updates, metres.
    public mutating func noteBeforeLocated(_ pairs: [(raw: Double, published: Double)]) {
        beforeLocatedCount = pairs.count
        beforeLocatedRawP95Metres = Statistics.quantile(pairs.map(\.raw), 0.95)
        beforeLocatedPublishedP95Metres = Statistics.quantile(pairs.map(\.published), 0.95)
    }

    /// The summary of `(t, d, d̂)` at every scored update — the true distance `d` and the
    /// published one `d̂` where there is one — with the raw ranges' errors `z − d`; `nil`
    /// when nothing was published.
    public init?(_ series: [(time: Double, truth: Double, published: Double?)], rawErrors: [Double]) {
        let published = series.compactMap { u in u.published.map { (time: u.time, distance: $0, truth: u.truth) } }
        let errors = published.map { abs($0.distance - $0.truth) }.filter(\.isFinite).sorted()
        guard !errors.isEmpty else { return nil }
        count = errors.count
        publishedMedianMetres = Statistics.quantile(sorted: errors, 0.5)
        publishedP95Metres = Statistics.quantile(sorted: errors, 0.95)
        let raw = rawErrors.map(abs).filter(\.isFinite).sorted()
        rawMedianMetres = raw.isEmpty ? nil : Statistics.quantile(sorted: raw, 0.5)
        rawP95Metres = raw.isEmpty ? nil : Statistics.quantile(sorted: raw, 0.95)
        lagSeconds = Self.lag(truth: series.map { ($0.time, $0.truth) }, published: published.map { ($0.time, $0.distance) })
    }

    /// How far a published distance lags the true one, seconds: the shift `τ` in `0…maximum`
    /// (10 ms steps) that minimises the RMS of `d̂(t) − d(t − τ)` over the published
    /// distances, their mean removed (a constant offset — a range bias the fusion keeps — is
    /// not a lag), the true distance `d` interpolated linearly between its samples (held
    /// before the first and after the last). `nil` with fewer than ten published distances.
    /// Both series are taken in time order; one pass per shift (`O(n)`, no search).
    public static func lag(truth: [(time: Double, distance: Double)], published: [(time: Double, distance: Double)],
                           maximum: Double = 3) -> Double? {
        let truth = truth.filter { $0.time.isFinite && $0.distance.isFinite }.sorted { $0.time < $1.time }
        let published = published.filter { $0.time.isFinite && $0.distance.isFinite }.sorted { $0.time < $1.time }
        guard published.count >= 10, let first = truth.first, let last = truth.last else { return nil }
        var best = (lag: 0.0, cost: Double.infinity)
        for step in 0...Int((max(maximum, 0) * 100).rounded()) {
            let tau = Double(step) / 100
            var sum = 0.0, sumSquares = 0.0
            var j = 0
            for p in published {
                let t = p.time - tau
                let d: Double
                if t <= first.time { d = first.distance }
                else if t >= last.time { d = last.distance }
                else {
                    while truth[j + 1].time <= t { j += 1 }
                    let a = truth[j], b = truth[j + 1]
                    let f = (t - a.time) / max(b.time - a.time, 1e-12)
                    d = a.distance + f * (b.distance - a.distance)
                }
                let e = p.distance - d
                sum += e
                sumSquares += e * e
            }
            let cost = sumSquares - sum * sum / Double(published.count)
            if cost < best.cost { best = (tau, cost) }
        }
        return best.lag
    }
}
