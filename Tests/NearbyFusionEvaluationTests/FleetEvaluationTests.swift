import Foundation
import NearbyFusionEvaluation
import NearbyFusionRecording
import Testing
import TestHelpers

/// Evaluation beyond one machine: error sketches, shards and `merge`.
@Suite("fleet evaluation")
struct FleetEvaluationTests {
    /// Seeded log-normal errors (SplitMix64 and Box–Muller): four decades of values.
    static func errors(_ n: Int, seed: UInt64) -> [Double] {
        var state = seed
        func uniform() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return (Double((z ^ (z >> 31)) >> 11) + 0.5) / 9_007_199_254_740_992
        }
        return (0..<n).map { _ in exp(2 * (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform()) - 3) }
    }

    /// The converged-after-first counts behind `evaluate`'s and `accuracy`'s columns: nothing
    /// counts before the first convergence, that one is not a change, and a pool adds counts.
    @Test func convergenceStabilityCountsFromTheFirstConvergence() throws {
        var s = ConvergenceStability()
        let statuses: [(Double, Bool)] = [(0, false), (1, false), (2, true), (3, true), (4, false), (5, true), (8, true)]
        for (t, c) in statuses { s.add(converged: c, at: t) }
        #expect(s.firstConvergedAt == 2 && s.updates == 5 && s.converged == 4 && s.changes == 2 && s.seconds == 6)
        #expect(try #require(s.convergedShare) == 0.8)
        #expect(try #require(s.changesPerMinute) == 20)
        var never = ConvergenceStability()
        never.add(converged: false, at: 1)
        #expect(never.convergedShare == nil && never.changesPerMinute == nil)
        var pool = never
        pool.merge(s)
        pool.merge(s)
        #expect(pool.updates == 10 && pool.changes == 4 && pool.seconds == 12 && pool.changesPerMinute == 20)
    }

    @Test func sketchQuantilesAreWithinHalfAPercentAndMergingIsExact() throws {
        let values = Self.errors(20_000, seed: 11)
        let whole = ErrorSketch(values)
        let exact = try #require(ErrorStatistics(values))
        let sketched = try #require(whole.statistics)
        #expect(sketched.count == exact.count && sketched.min == exact.min && sketched.max == exact.max)
        #expect(abs(sketched.mean - exact.mean) <= 1e-12 * exact.mean && abs(sketched.rmse - exact.rmse) <= 1e-12 * exact.rmse)
        #expect(abs(sketched.std - exact.std) <= 1e-9 * exact.std)
        for q in [0.05, 0.5, 0.9, 0.95, 0.99] {
            let reference = try #require(Statistics.quantile(values, q))
            let estimate = try #require(whole.quantile(q))
            #expect(abs(estimate - reference) <= 0.005 * reference, "q \(q): \(estimate) against \(reference)")
        }
        // An even count: the median lies between two values, as the exact statistics put it.
        let pair = ErrorSketch([1.0, 2.0])
        #expect(try abs(#require(pair.quantile(0.5)) - 1.5) <= 0.005 * 1.5)
        // Shards in any split merge into exactly the sketch of the whole (sums up to rounding).
        var merged = ErrorSketch(Array(values[12_000...]))
        merged.merge(ErrorSketch(Array(values[..<5_000])))
        merged.merge(ErrorSketch(Array(values[5_000..<12_000])))
        #expect(merged.buckets == whole.buckets && merged.count == whole.count && merged.min == whole.min && merged.max == whole.max)
        #expect(abs(merged.sum - whole.sum) <= 1e-12 * whole.sum)
        // It survives JSON.
        let decoded = try JSONDecoder().decode(ErrorSketch.self, from: JSONEncoder().encode(merged))
        #expect(decoded == merged)
        #expect(try JSONDecoder().decode(ErrorSketch.self, from: JSONEncoder().encode(ErrorSketch())).statistics == nil)
    }

    struct Folder: Decodable { var total: ObjectEvaluation; var pool: EvaluationPool }
    struct Merged: Decodable { var total: ObjectEvaluation; var pool: EvaluationPool }

    @Test func shardsMergeIntoTheTotalOfOneMachine() throws {
        let whole = try TestSupport.run(["evaluate", "Datasets", "--json"])
        #expect(whole.status == 0, "\(whole.stderr)")
        let reference = try JSONDecoder().decode(Folder.self, from: Data(whole.stdout.utf8)).total
        var shardFiles: [String] = []
        for k in 1...3 {
            let shard = try TestSupport.run(["evaluate", "Datasets", "--shard", "\(k)/3", "--json"])
            #expect(shard.status == 0, "\(shard.stderr)")
            shardFiles.append(try TestSupport.temporaryFile(shard.stdout, name: "shard\(k).json"))
        }
        let merged = try TestSupport.run(["merge", "--json"] + shardFiles)
        #expect(merged.status == 0, "\(merged.stderr)")
        let result = try JSONDecoder().decode(Merged.self, from: Data(merged.stdout.utf8))
        let total = result.total
        let shipped = try FileManager.default.contentsOfDirectory(atPath: TestSupport.datasets.path).filter { $0.hasSuffix(".jsonl") }
        #expect(result.pool.recordings == shipped.count)
        // Counts and shares: exactly one machine's.
        #expect(total.updates == reference.updates)
        #expect(Set(total.availability.keys) == Set(reference.availability.keys))
        #expect(total.availability.allSatisfy { abs($0.value - (reference.availability[$0.key] ?? -1)) <= 1e-12 })
        #expect(total.convergedShareAfterFirst == reference.convergedShareAfterFirst)
        #expect(total.falseConvergedRate == reference.falseConvergedRate)
        #expect(total.convergenceLagSeconds == reference.convergenceLagSeconds)
        #expect(total.verticalConfusion == reference.verticalConfusion)
        // Means to rounding, quantiles to the sketch's resolution.
        let a = try #require(total.horizontalAngleErrorDegrees), b = try #require(reference.horizontalAngleErrorDegrees)
        #expect(a.count == b.count && abs(a.mean - b.mean) <= 1e-9 * b.mean && abs(a.rmse - b.rmse) <= 1e-9 * b.rmse)
        #expect(abs(a.median - b.median) <= 0.01 * b.median && abs(a.p95 - b.p95) <= 0.01 * b.p95)
        #expect(abs(try #require(total.meanNEES) - (try #require(reference.meanNEES))) <= 1e-9 * (reference.meanNEES ?? 1))
        // Times too: the medians of the objects' times to convergence and of the moments the
        // bound allows the angle, within the sketch's 0.5 % (an even count of objects puts the
        // median between two of them, as one machine does).
        for (merged, single) in [(total.timeToConvergenceSeconds, reference.timeToConvergenceSeconds),
                                 (total.boundAllowsAngleAfterSeconds, reference.boundAllowsAngleAfterSeconds)] {
            let m = try #require(merged), r = try #require(single)
            #expect(abs(m - r) <= 0.005 * r + 1e-9, "merged \(m) s against \(r) s")
        }
        let p = try #require(total.positionErrorMetres), q = try #require(reference.positionErrorMetres)
        #expect(p.count == q.count && abs(p.rmse - q.rmse) <= 1e-9 * q.rmse)
        #expect(abs(p.median - q.median) <= 0.005 * q.median && abs(p.p95 - q.p95) <= 0.005 * q.p95)

        // A file that is not a shard is refused, naming it.
        let bogus = try TestSupport.temporaryFile("{\"total\": 1}\n", name: "bogus.json")
        let refused = try TestSupport.run(["merge", shardFiles[0], bogus])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("bogus.json") && refused.stderr.contains("key 'pool': missing"), "\(refused.stderr)")
        // A newer layout is named as such; a folder is not a shard.
        let newer = try TestSupport.temporaryFile("{\"pool\":{\"version\":2}}\n", name: "newer.json")
        let refusedNewer = try TestSupport.run(["merge", newer])
        #expect(refusedNewer.status == 1 && refusedNewer.stderr.contains("unsupported version 2"), "\(refusedNewer.stderr)")
        let folder = try TestSupport.run(["merge", "Datasets"])
        #expect(folder.status == 1 && folder.stderr.contains("a folder, not a shard document"), "\(folder.stderr)")
        // A device is never read (it would be read for ever).
        #expect(try TestSupport.run(["merge", "/dev/zero"]).stderr.contains("not a regular file"))
        #expect(try TestSupport.run(["evaluate", "--paths", "/dev/zero"]).stderr.contains("not a regular file"))
        // A list of recordings (a file of paths, comments and blank lines skipped) is a folder.
        let list = try TestSupport.temporaryFile("# nightly\nDatasets/coached-sweep.jsonl\n\nDatasets/two-tags.jsonl\n", name: "list.txt")
        let listed = try TestSupport.run(["evaluate", "--paths", list, "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try JSONDecoder().decode(Folder.self, from: Data(listed.stdout.utf8)).pool.recordings == 2)
        // A shard out of range is a usage error.
        #expect(try TestSupport.run(["evaluate", "Datasets", "--shard", "4/3"]).status != 0)
    }
}
