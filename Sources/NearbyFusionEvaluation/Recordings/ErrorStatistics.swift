import Foundation
import NearbyFusion
import NearbyFusionRecording

/// Summary statistics of a set of errors, named as `evo` names them.
public struct ErrorStatistics: Codable, Sendable, Equatable {
    /// How many errors.
    public var count: Int
    /// The largest.
    public var max: Double
    /// The arithmetic mean.
    public var mean: Double
    /// The median (linear interpolation).
    public var median: Double
    /// The smallest.
    public var min: Double
    /// `√(Σ eᵢ² / n)`.
    public var rmse: Double
    /// Population standard deviation `√(Σ (eᵢ − ē)² / n)` (as numpy's default, which evo uses).
    public var std: Double
    /// The 95th percentile (linear interpolation).
    public var p95: Double

    /// The figures as given (for ``ErrorSketch/statistics``).
    init(count: Int, max: Double, mean: Double, median: Double, min: Double, rmse: Double, std: Double, p95: Double) {
        self.count = count
        self.max = max
        self.mean = mean
        self.median = median
        self.min = min
        self.rmse = rmse
        self.std = std
        self.p95 = p95
    }

    /// `nil` for no values, or when any value is not finite. Every figure of a finite set
    /// is finite, however large its values (up to `Double.greatestFiniteMagnitude`): sums
    /// are taken of the values divided by the largest magnitude `M`, so `Σ eᵢ²` cannot
    /// overflow (`rmse = M √(Σ (eᵢ/M)² / n)`), and quantiles interpolate as
    /// `a + f (b − a)` on scaled values.
    public init?(_ values: [Double]) {
        guard !values.isEmpty, values.allSatisfy(\.isFinite) else { return nil }
        let sorted = values.sorted()
        let n = Double(values.count)
        count = values.count
        max = sorted.last!
        min = sorted.first!
        let scale = Swift.max(abs(max), abs(min), .leastNormalMagnitude)
        let scaled = values.map { $0 / scale }
        let scaledMean = scaled.reduce(0, +) / n
        mean = scale * scaledMean
        median = Statistics.quantile(sorted: sorted, 0.5)
        p95 = Statistics.quantile(sorted: sorted, 0.95)
        rmse = scale * (scaled.reduce(0) { $0 + $1 * $1 } / n).squareRoot()
        std = scale * (scaled.reduce(0) { $0 + ($1 - scaledMean) * ($1 - scaledMean) } / n).squareRoot()
    }
}

/// Order statistics: the one quantile every table of the package uses (evaluation,
/// `accuracy`, `bench`).
public enum Statistics {
    /// The arithmetic mean of `values`; `nil` for no data.
    public static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// The `q`-quantile (0…1) of `values` by linear interpolation; `nil` for no data.
    public static func quantile(_ values: [Double], _ q: Double) -> Double? {
        values.isEmpty ? nil : quantile(sorted: values.sorted(), q)
    }

    /// The `q`-quantile of non-empty, ascending finite values by linear interpolation,
    /// `a + f (b − a)` with the difference taken at half scale (no overflow between
    /// ±1.8e308).
    public static func quantile(sorted: [Double], _ q: Double) -> Double {
        let x = min(max(q, 0), 1) * Double(sorted.count - 1)
        let i = Int(x.rounded(.down)), f = x - Double(i)
        guard i + 1 < sorted.count, f > 0 else { return sorted[i] }
        let a = sorted[i], b = sorted[i + 1]
        return a + 2 * (f * (b / 2 - a / 2))
    }
}
