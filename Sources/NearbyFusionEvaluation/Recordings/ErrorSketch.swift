import Foundation
import NearbyFusion
import NearbyFusionRecording

/// A summary of a set of non-negative errors that merges across machines: the evaluation of
/// a fleet of recordings in shards, each shard's sketch written to JSON and the sketches
/// merged (`nearby-fusion merge`).
///
/// - `count`, `min`, `max` are exact, and so are `mean = Σx/n`, `rmse = √(Σx²/n)` and
///   `std = √(Σx²/n − mean²)` up to the order of the floating-point sums.
/// - Quantiles come from a histogram of logarithmic buckets: bucket `k` holds
///   `x ∈ [x₀ γᵏ, x₀ γᵏ⁺¹)` with `γ = 1.01` and `x₀ = 10⁻⁹` (values below `x₀` in bucket
///   `−1`), and a quantile is reported as the geometric centre of its bucket, clamped to
///   `[min, max]`, and interpolated between neighbouring ranks as `ErrorStatistics` does:
///   within 0.5 % of the exact quantile.
///
/// Merging is exact and order-free: bucket counts and extremes add up the same whatever
/// the shards.
public struct ErrorSketch: Codable, Sendable, Equatable {
    /// How many values.
    public private(set) var count = 0
    /// Their sum, and the sum of their squares.
    public private(set) var sum = 0.0
    /// (See ``sum``.)
    public private(set) var sumOfSquares = 0.0
    /// The smallest and the largest value (±∞ while empty).
    public private(set) var min = Double.infinity
    /// (See ``min``.)
    public private(set) var max = -Double.infinity
    /// `[bucket, count]` pairs, ascending by bucket.
    public private(set) var buckets: [[Int]] = []

    static let growth = 1.01
    static let smallest = 1e-9
    /// The largest count a decoded sketch may hold (2⁴⁰, a trillion values): a million such
    /// sketches still add up without overflow.
    public static let largestCount = 1 << 40

    public init() {}

    /// The sketch of `values` (non-finite and negative values are left out: errors are
    /// non-negative, and every figure of this package is finite).
    public init(_ values: [Double]) {
        var counts: [Int: Int] = [:]
        for x in values where x.isFinite && x >= 0 {
            count += 1
            sum += x
            sumOfSquares += x * x
            min = Swift.min(min, x)
            max = Swift.max(max, x)
            counts[Self.bucket(of: x), default: 0] += 1
        }
        buckets = counts.sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
    }

    /// The bucket of `x ≥ 0`: `⌊log(x/x₀)/log γ⌋`, or −1 below `x₀`.
    static func bucket(of x: Double) -> Int {
        x < smallest ? -1 : Int((log(x / smallest) / log(growth)).rounded(.down))
    }

    /// The geometric centre of bucket `k`.
    static func centre(of k: Int) -> Double {
        k < 0 ? 0 : smallest * pow(growth, Double(k) + 0.5)
    }

    /// Adds another sketch's values.
    public mutating func merge(_ other: ErrorSketch) {
        guard other.count > 0 else { return }
        count += other.count
        sum += other.sum
        sumOfSquares += other.sumOfSquares
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
        var counts = Dictionary(uniqueKeysWithValues: buckets.map { ($0[0], $0[1]) })
        for pair in other.buckets { counts[pair[0], default: 0] += pair[1] }
        buckets = counts.sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
    }

    /// The `q`-quantile (0…1) as ``ErrorStatistics`` interpolates it — `x₍ᵢ₎ + f (x₍ᵢ₊₁₎ − x₍ᵢ₎)`
    /// with `i + f = q (n − 1)` — each order statistic read as its bucket's centre clamped to
    /// `[min, max]`, so within 0.5 % of the exact interpolated quantile; `nil` when empty.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let x = Swift.min(Swift.max(q, 0), 1) * Double(count - 1)
        let rank = Int(x.rounded(.down)), f = x - Double(rank)
        let lower = value(atRank: rank)
        guard f > 0, rank + 1 < count else { return lower }
        let upper = value(atRank: rank + 1)
        return lower + 2 * (f * (upper / 2 - lower / 2))
    }

    /// The value of order statistic `rank` (0-based), to the buckets' resolution.
    private func value(atRank rank: Int) -> Double {
        var seen = 0
        for pair in buckets {
            seen += pair[1]
            if seen > rank { return Swift.min(Swift.max(Self.centre(of: pair[0]), min), max) }
        }
        return max
    }

    /// The figures of ``ErrorStatistics`` from the sketch; `nil` when empty.
    public var statistics: ErrorStatistics? {
        guard count > 0, let median = quantile(0.5), let p95 = quantile(0.95) else { return nil }
        let n = Double(count)
        let mean = sum / n
        return ErrorStatistics(count: count, max: max, mean: mean, median: median, min: min,
                               rmse: (sumOfSquares / n).squareRoot(), std: Swift.max(sumOfSquares / n - mean * mean, 0).squareRoot(),
                               p95: p95)
    }

    // An empty sketch has infinite extremes, which JSON cannot hold: they are written as 0.
    enum CodingKeys: String, CodingKey { case count, sum, sumOfSquares, min, max, buckets }

    /// Reads a sketch, refusing an inconsistent one: counts out of range, buckets repeated or out
    /// of order, counts that do not add up, non-finite sums.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        count = try c.decode(Int.self, forKey: .count)
        sum = try c.decode(Double.self, forKey: .sum)
        sumOfSquares = try c.decode(Double.self, forKey: .sumOfSquares)
        buckets = try c.decode([[Int]].self, forKey: .buckets)
        min = count > 0 ? try c.decode(Double.self, forKey: .min) : .infinity
        max = count > 0 ? try c.decode(Double.self, forKey: .max) : -.infinity
        // Counts beyond `largestCount`, buckets out of order or repeated, or counts that do
        // not add up are a corrupt document, not something to merge.
        var total = 0, previous = Int.min, ordered = true
        for pair in buckets {
            guard pair.count == 2, pair[1] > 0, pair[1] <= Self.largestCount, pair[0] > previous else { ordered = false; break }
            previous = pair[0]
            total += pair[1]
            if total > Self.largestCount { ordered = false; break }
        }
        guard ordered, count >= 0, count <= Self.largestCount, total == count,
              sum.isFinite, sumOfSquares.isFinite, min <= max || count == 0 else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "an inconsistent error sketch"))
        }
    }

    /// Writes the sketch (an empty one's extremes as 0).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(count, forKey: .count)
        try c.encode(sum, forKey: .sum)
        try c.encode(sumOfSquares, forKey: .sumOfSquares)
        try c.encode(count > 0 ? min : 0, forKey: .min)
        try c.encode(count > 0 ? max : 0, forKey: .max)
        try c.encode(buckets, forKey: .buckets)
    }
}
