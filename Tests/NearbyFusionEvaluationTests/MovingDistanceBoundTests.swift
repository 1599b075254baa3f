import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionSimulation
import Testing

/// The Cramér–Rao bound on a moving object's distance (`MovingDistanceBound`): its whitened
/// information against the dense generalised least squares it stands for, and its place beside
/// a peer's distance targets.
@Suite("the distance bound of an object that moves")
struct MovingDistanceBoundTests {
    /// Ranges from a device at the origin to an object along −z that turns once, with errors
    /// correlated over 1.5 s: the bound equals `√(gᵀ (P⁻¹ + Hᵀ Σ⁻¹ H)⁻¹ g)` with the dense
    /// covariance `Σᵢⱼ = σ² e^{−|tᵢ − tⱼ|/T}` at every update, irregular gaps and a skipped
    /// range included — and independent errors leave a smaller bound than lasting ones.
    @Test func theWhitenedInformationIsTheDenseOnes() throws {
        let sigma = 0.15, correlation = 1.5, change = 2.0
        var times: [Double] = []
        var t = 0.3
        while t < 4 { times.append(t); t += times.count % 3 == 0 ? 0.25 : 0.1 }
        let skipped = 7
        var bound = MovingDistanceBound(originTime: times[0], velocityChanges: [-1, change], rangeStandardDeviation: sigma,
                                        correlationSeconds: correlation)
        #expect(bound.parameterCount == 9)
        let u = Vector3(0.1, 0.05, -1).normalized
        var used: [Double] = []
        var previousBound = Double.infinity
        for (i, time) in times.enumerated() {
            if i != skipped { bound.addRange(at: time, toward: u); used.append(time) }
            let s = try #require(bound.distanceStandardDeviation(at: time, toward: u))
            // Dense: H (m × 9), Σ (m × m), P⁻¹ diag(10⁻⁶ I₃, I₆).
            let rows = used.map { bound.gradient(at: $0, toward: u) }
            let n = 9, m = rows.count
            var covariance = [Double](repeating: 0, count: m * m)
            for a in 0..<m { for b in 0..<m { covariance[a * m + b] = sigma * sigma * exp(-abs(used[a] - used[b]) / correlation) } }
            var information = [Double](repeating: 0, count: n * n)
            for k in 0..<n { information[k * n + k] = k < 3 ? 1e-6 : 1 }
            for j in 0..<n {
                let column = rows.map { $0[j] }
                let solved = try #require(MovingDistanceBound.choleskySolve(covariance, column, n: m))
                for k in 0..<n { for a in 0..<m { information[k * n + j] += rows[a][k] * solved[a] } }
            }
            let g = bound.gradient(at: time, toward: u)
            let y = try #require(MovingDistanceBound.choleskySolve(information, g, n: n))
            let dense = zip(g, y).map(*).reduce(0, +).squareRoot()
            #expect(abs(s - dense) < 1e-6 * dense, "t \(time): whitened \(s) m, dense \(dense) m")
            previousBound = s
        }
        // Independent errors tell more than lasting ones.
        var white = MovingDistanceBound(originTime: times[0], velocityChanges: [change], rangeStandardDeviation: sigma, correlationSeconds: 0)
        for time in times { white.addRange(at: time, toward: u) }
        let last = try #require(times.last)
        #expect(try #require(white.distanceStandardDeviation(at: last, toward: u)) < previousBound)
    }

    /// The pooled quantile of `|N(mᵢ, sᵢ²)|`: the half-normal's 95th percentile `1.95996 s` for
    /// one centred law, `m` itself for spreads of zero, and the bisection's root for a mixture.
    @Test func theQuantileOfTheAbsoluteErrorIsTheMixtures() throws {
        let single = try #require(MovingDistanceBound.quantileOfAbsoluteError(means: [0], standardDeviations: [0.2], 0.95))
        #expect(abs(single - 1.959964 * 0.2) < 1e-6)
        let median = try #require(MovingDistanceBound.quantileOfAbsoluteError(means: [0], standardDeviations: [1], 0.5))
        #expect(abs(median - 0.674490) < 1e-6)
        let point = try #require(MovingDistanceBound.quantileOfAbsoluteError(means: [0.3, -0.3], standardDeviations: [0, 0], 0.5))
        #expect(abs(point - 0.3) < 1e-9)
        let mixture = try #require(MovingDistanceBound.quantileOfAbsoluteError(means: [0.06, 0.06], standardDeviations: [0.1, 0.3], 0.95))
        let phi = standardNormalCDF
        let f = 0.5 * ((phi((mixture - 0.06) / 0.1) - phi((-mixture - 0.06) / 0.1)) + (phi((mixture - 0.06) / 0.3) - phi((-mixture - 0.06) / 0.3)))
        #expect(abs(f - 0.95) < 1e-9)
        #expect(MovingDistanceBound.quantileOfAbsoluteError(means: [], standardDeviations: [], 0.5) == nil)
    }

    /// A walking peer's runs carry the bound at every update from its first range: the radio's
    /// σ at the first, and little below it after (errors that last seconds look like motion); a
    /// tag with directions carries none; and the peer's p95 target quotes the bound's estimator
    /// beside the engine.
    @Test func aPeersDistanceTargetsQuoteTheBound() throws {
        let make = try #require(ScenarioCatalogue.all.first { $0.name == "peer-uwb-friend-walking" }).make
        let scenario = make(3)
        let run = ScenarioRun(scenario)
        let bounds = run.updates.compactMap(\.movingDistanceBound)
        #expect(bounds.count == run.updates.count && !bounds.isEmpty)
        let sigma = scenario.radio.rangeStandardDeviation
        #expect(abs(bounds[0] - sigma) < 0.01 * sigma)
        // Errors that last 2.5 s look like motion over any shorter stretch: little is averaged.
        let median = try #require(Statistics.quantile(bounds, 0.5))
        #expect(bounds.allSatisfy { $0 > 0.8 * sigma } && median < sigma, "median \(median) m, least \(bounds.min()!) m")
        #expect(run.movingDistanceBoundErrors.allSatisfy { $0.bias == scenario.radio.rangeBias })
        let p95 = try #require(ScenarioRun.movingDistanceBoundQuantile([run], 0.95))
        let check = try #require(ScenarioTargets.checks(for: scenario, runs: [run]).first { $0.target.contains("p95") })
        #expect(check.measured.contains(String(format: "an efficient estimator told when the peer turns: %.3f m", p95)), "\(check.measured)")
        let tag = ScenarioRun(try #require(ScenarioCatalogue.all.first { $0.name == "coached-sweep" }).make(1))
        #expect(tag.updates.allSatisfy { $0.movingDistanceBound == nil })
    }
}
