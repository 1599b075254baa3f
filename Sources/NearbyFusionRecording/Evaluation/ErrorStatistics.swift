import NearbyFusion
import Foundation

/// Summary statistics of a set of errors, named as `evo` names them.
public struct ErrorStatistics: Codable, Sendable, Equatable {
    public var count: Int
    public var max: Double
    public var mean: Double
    public var median: Double
    public var min: Double
    /// `√(Σ eᵢ² / n)`.
    public var rmse: Double
    /// Population standard deviation `√(Σ (eᵢ − ē)² / n)` (as numpy's default, which evo uses).
    public var std: Double
    /// The 95th percentile (linear interpolation).
    public var p95: Double

    /// `nil` for no values.
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let n = Double(values.count)
        count = values.count
        max = sorted.last!
        min = sorted.first!
        mean = values.reduce(0, +) / n
        median = Self.quantile(sorted, 0.5)
        p95 = Self.quantile(sorted, 0.95)
        rmse = (values.reduce(0) { $0 + $1 * $1 } / n).squareRoot()
        let m = mean
        std = (values.reduce(0) { $0 + ($1 - m) * ($1 - m) } / n).squareRoot()
    }

    /// The `q`-quantile of sorted values by linear interpolation.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let x = q * Double(sorted.count - 1)
        let i = Int(x.rounded(.down)), f = x - Double(i)
        return i + 1 < sorted.count ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i]
    }
}
