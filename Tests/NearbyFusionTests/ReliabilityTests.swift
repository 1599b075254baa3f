import Foundation
import NearbyFusion
import NearbyFusionRecording
import Testing

/// Figures that cannot break: every statistic is finite or absent, on every edge.
@Suite("statistics that cannot break")
struct ReliabilityTests {
    @Test func statisticsAreFiniteOrAbsentOnEveryEdge() throws {
        #expect(ErrorStatistics([]) == nil)
        #expect(ErrorStatistics([1, .nan]) == nil && ErrorStatistics([.infinity]) == nil)
        let one = try #require(ErrorStatistics([2.5]))
        #expect(one.median == 2.5 && one.p95 == 2.5 && one.std == 0 && one.rmse == 2.5)
        // Values near the largest Double: Σ e² overflowed, and a − a interpolated to NaN.
        let huge = try #require(ErrorStatistics([1e308, 1e308, 1.7e308, 3]))
        for x in [huge.max, huge.mean, huge.median, huge.min, huge.rmse, huge.std, huge.p95] { #expect(x.isFinite) }
        #expect(abs(huge.median - 1e308) < 1e293 && abs(huge.rmse / 1.10567e308 - 1) < 1e-4)
        // Ordinary values are what they were.
        let s = try #require(ErrorStatistics([1, 2, 3, 4]))
        #expect(s.mean == 2.5 && s.median == 2.5 && abs(s.rmse - 2.7386127875) < 1e-9 && abs(s.std - 1.1180339887) < 1e-9)
        #expect(Vector3(1e308, 1e308, 0).scaledLength.isFinite && Vector3(3, 4, 0).scaledLength == 5)
    }

    @Test func aValidRecordingWithHugeTruthEvaluatesToFiniteFigures() throws {
        // Issue 10, item 5: `evaluate --json` died, the table printed inf and -nan.
        let text = try String(contentsOfFile: CommandLineTests.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl").path, encoding: .utf8)
            .replacingOccurrences(of: #""position":[-1.5,1,-4.8]"#, with: #""position":[0.9,1.2,1e308]"#)
        #expect(text.contains("1e308"))
        let path = try RecordingTests.temporaryFile(text, name: "huge-truth.jsonl")
        let json = try CommandLineTests.run(["evaluate", path, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(!json.stdout.contains("inf") && !json.stdout.contains("nan"))
        _ = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let table = try CommandLineTests.run(["evaluate", path])
        #expect(table.status == 0 && !table.stdout.contains("inf") && !table.stdout.contains("nan") && table.stdout.contains("1e+308"))
        let replay = try CommandLineTests.run(["replay", path])
        #expect(replay.status == 0 && replay.stdout.contains("1e+308 m from truth") && !replay.stdout.contains("inf"))
    }
}
