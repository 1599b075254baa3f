@_spi(Internals) import NearbyFusion
import Testing

/// The tests that decide an estimate no longer holds (`RestartTests`), each fed the ranges of
/// the situation it is meant to tell apart.
@Suite("restart tests")
struct RestartTestsTests {
    let o = FusionOptions()

    /// Feeds `ranges` as rejected ranges with the given context; the 1-based index of the one
    /// that called for a restart, or `nil`.
    func firstRestart(_ ranges: [(range: Double, excess: Double)], acquiringWithDirections: Bool = false, converged: Bool = false,
                      heldStill: Bool = false, hasConverged: Bool = false, withDirections: Bool = true,
                      stillIsLikelier: Bool = true, tests: inout RestartTests) -> Int? {
        for (k, r) in ranges.enumerated() {
            if tests.rejectionCallsForARestart(rangeMetres: r.range, excess: r.excess, acquiringWithDirections: acquiringWithDirections,
                                               converged: converged, heldStill: heldStill, hasConverged: hasConverged,
                                               withDirections: withDirections, stillIsLikelier: stillIsLikelier, options: o) {
                return k + 1
            }
        }
        return nil
    }

    @Test func anObjectNotYetConvergedStartsAgainAfterFiveRejectionsInARow() {
        var tests = RestartTests()
        let ranges = Array(repeating: (range: 4.0, excess: 1.2), count: 10)
        #expect(firstRestart(ranges, tests: &tests) == o.gating.rejectionsBeforeReset)
        tests.clearRejections()
        #expect(tests.consecutiveRejections == 0 && tests.rejectedRangeCount == 0)
    }

    @Test func whileAcquiringWithDirectionsOnlyShortRangesRestartSoon() {
        // Long ranges are a multipath burst more often than a bank too near: they wait for the
        // converged limit; short ones (no multipath shortens a range) restart after five.
        var long = RestartTests(), short = RestartTests()
        let longRanges = Array(repeating: (range: 5.0, excess: 1.0), count: 40)
        let shortRanges = Array(repeating: (range: 3.0, excess: -1.0), count: 40)
        #expect(firstRestart(longRanges, acquiringWithDirections: true, tests: &long) == o.gating.rejectionsBeforeResetWhenConverged)
        #expect(firstRestart(shortRanges, acquiringWithDirections: true, tests: &short) == o.gating.rejectionsBeforeReset)
    }

    @Test func aBlockedLineOfSightLeavesAConvergedStillObjectStandingButACarryDoesNot() {
        // Ranges metres too long that jump about (a blocked path): explained, so only the
        // blocked limit restarts it. Ranges that grow smoothly (a tag carried away from a
        // watch): unexplained, restarted at the converged limit.
        var blocked = RestartTests(), carried = RestartTests()
        var erratic: [(range: Double, excess: Double)] = [], smooth: [(range: Double, excess: Double)] = []
        for k in 0..<700 {
            let step = 0.08 * Double(k)
            erratic.append((range: k % 2 == 0 ? 40 : 52, excess: 8))
            smooth.append((range: 30 + step, excess: 2 + step))
        }
        #expect(firstRestart(erratic, converged: true, heldStill: true, hasConverged: true, withDirections: false, tests: &blocked)
                == o.gating.rejectionsBeforeResetWhenBlocked)
        #expect(firstRestart(smooth, converged: true, heldStill: true, hasConverged: true, withDirections: false, tests: &carried)
                == o.gating.rejectionsBeforeResetWhenConverged)
    }

    @Test func theMedianOfTheRunsLastFiveRejectedRangesIsWhereARestartTiles() {
        var tests = RestartTests()
        for r in [9.0, 4.1, 6.5, 4.0, 4.2, 7.9] {
            _ = tests.rejectionCallsForARestart(rangeMetres: r, excess: 1, acquiringWithDirections: false, converged: false, heldStill: false,
                                                hasConverged: false, withDirections: true, stillIsLikelier: true, options: o)
        }
        #expect(tests.medianRejectedRange == 4.2)   // of 4.1, 6.5, 4.0, 4.2, 7.9
        #expect(RestartTests().medianRejectedRange == 0)
        #expect(RestartTests.median(SIMD8(1, 8, 3, 5, 2, 7, 4, 6)) == 4.5)
        #expect(RestartTests.median(SIMD8(3, 1, 2, 0, 0, 0, 0, 0), count: 3) == 2)
    }

    @Test func aChannelSoundingTrendNeedsTheMedianOfEightNotTwoBursts() {
        // Every range drifting long: the median passes 1.5 at the eighth.
        var drift = RestartTests()
        let moved = (0..<8).map { _ in drift.rangesTrendAway(adding: 2.2, options: o) }
        #expect(moved == Array(repeating: false, count: 7) + [true])
        // Two bursts of very long ranges among ordinary ones: the mean would pass, the median
        // does not.
        var bursts = RestartTests()
        let innovations = [0.2, 4.5, 4.0, -0.3, 0.1, 0.3, 4.6, 0.0, -0.2, 0.4]   // the first eight's mean 1.68
        #expect(innovations.allSatisfy { !bursts.rangesTrendAway(adding: $0, options: o) })
        // Ranges running short: three of the last five below −1.
        var approach = RestartTests()
        for nu in [0.1, -1.4, 0.3, -1.2, -1.6] { _ = approach.rangesTrendAway(adding: nu, options: o) }
        #expect(approach.rangesRunShort(o))
        var still = RestartTests()
        for nu in [0.1, -1.4, 0.3, -0.2, -1.6] { _ = still.rangesTrendAway(adding: nu, options: o) }
        #expect(!still.rangesRunShort(o))
    }

    @Test func rangesRunAwaySmoothlyOnlyWhenACarryLengthensThem() {
        // A carry at 0.8 m/s and 10 Hz: 8 cm longer each time.
        var carry = RestartTests()
        let carried = (0..<8).map { carry.rangesRunAway(0.1 + 0.08 * Double($0), options: o) }
        #expect(carried == Array(repeating: false, count: 7) + [true])
        // A multipath burst: a step of 1.2 m, then scattered.
        var burst = RestartTests()
        let burstExcess = [0.0, 0.02, -0.01, 1.2, 0.9, 1.5, 1.1, 1.6, 1.3, 1.8]
        #expect(burstExcess.allSatisfy { !burst.rangesRunAway($0, options: o) })
        #expect(burst.roughRangeSteps & 0x7F != 0)
        // A still tag: its excesses wander by its noise and rise by nothing.
        var still = RestartTests()
        #expect([0.03, -0.05, 0.02, 0.06, -0.04, 0.01, -0.02, 0.05, 0.0].allSatisfy { !still.rangesRunAway($0, options: o) })
        still.clearTrends()
        #expect(still.rangeExcessCount == 0 && still.roughRangeSteps == 0)
    }

    @Test func aRunAwayIsFittedByItsLineAndStandsForEightRanges() throws {
        // The carry above, timed: 10 Hz from 11 s, 8 cm a range (0.8 m/s).
        var carry = RestartTests()
        #expect(carry.runAwayLine() == nil)
        for k in 0..<8 { _ = carry.rangesRunAway(0.1 + 0.08 * Double(k), at: 11 + 0.1 * Double(k), options: o) }
        let line = try #require(carry.runAwayLine())
        #expect(abs(line.rate - 0.8) < 1e-9 && abs(line.excess - 0.66) < 1e-9)
        // Σ(tₖ − t̄)² over eight ranges 0.1 s apart: 0.42 s².
        #expect(abs(line.rateVarianceFactor - 1 / 0.42) < 1e-6)
        #expect(carry.runAwayRangesLeft == 8)
        // A range that breaks the run (a step beyond the limit) does not end what it stands for
        // at once: the run is counted down range by range.
        _ = carry.rangesRunAway(1.5, at: 11.8, options: o)
        #expect(carry.runAwayRangesLeft == 7)
        // Without times there is no line.
        var untimed = RestartTests()
        for k in 0..<8 { _ = untimed.rangesRunAway(0.1 + 0.08 * Double(k), options: o) }
        #expect(untimed.runAwayLine() == nil)
    }
}
