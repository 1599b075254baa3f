import Foundation
import NearbyFusion
import NearbyFusionRecording
import Testing

@Suite("bench, CSV output and the progress bar")
struct BenchAndFormatTests {
    @Test func benchReportsTheDocumentedKeysAndCountsAllocations() throws {
        let result = try CommandLineTests.run(["bench", "Datasets/tum-fr1-xyz-uwb.jsonl", "--passes", "2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let value = try JSONLineParser.parse(result.stdout)
        for key in ["p50Nanoseconds", "p90Nanoseconds", "p99Nanoseconds", "mallocsPerUpdate", "updatesPerSecond"] {
            #expect(value[key] != nil, "missing \(key)")
        }
        guard case .number(let p50)? = value["p50Nanoseconds"], case .number(let p99)? = value["p99Nanoseconds"],
              case .number(let mallocs)? = value["mallocsPerUpdate"], case .number(let rate)? = value["updatesPerSecond"] else {
            Issue.record("not numbers"); return
        }
        // Nanoseconds, not a reinterpreted bit pattern: an update costs more than 1 ns, and
        // the median block is within a factor 20 of the mean latency the rate implies.
        let meanNanoseconds = 1e9 / rate
        #expect(p50 >= 1 && p50 <= p99, "p50 \(p50) ns, p99 \(p99) ns")
        #expect(p50 > meanNanoseconds / 20 && p50 < meanNanoseconds * 20, "p50 \(p50) ns, mean \(meanNanoseconds) ns")
        // 30 s of which ~1.6 s is acquisition: tracking updates allocate nothing.
        #expect(mallocs < 0.1, "mallocs per update \(mallocs)")
        // The negative control: one array per update inside the timed bracket is counted.
        let control = try CommandLineTests.run(["bench", "Datasets/tum-fr1-xyz-uwb.jsonl", "--passes", "1", "--json", "--allocate-for-test"])
        guard case .number(let controlMallocs)? = try JSONLineParser.parse(control.stdout)["mallocsPerUpdate"] else {
            Issue.record("no control figure"); return
        }
        #expect(controlMallocs >= 1 && controlMallocs < 1.1 + mallocs)
    }

    @Test func replayWritesCSV() throws {
        let result = try CommandLineTests.run(["replay", "Datasets/dark-room.jsonl", "--format", "csv", "--output", "-"])
        #expect(result.status == 0)
        let rows = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(rows.first?.hasPrefix("t,object,distance,direction_x,") == true)
        #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 26 })
        // The session-level row: empty object, lighting reason.
        #expect(rows.contains { $0.contains(",,") && $0.hasSuffix("notConverged,insufficientLighting") })
    }

    @Test func progressBarOnlyOnATerminal() throws {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { return }
        // A big enough file: the long-session scenario, made on demand.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let recording = dir.appendingPathComponent("long.jsonl").path
        #expect(try CommandLineTests.run(["simulate", "--scenario", "long-session", "--seed", "1", "--output", recording]).status == 0)
        let estimates = dir.appendingPathComponent("estimates.jsonl").path
        let silent = try CommandLineTests.run(["replay", recording, "--output", estimates])
        #expect(silent.status == 0 && silent.stderr.isEmpty)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        let typescript = dir.appendingPathComponent("typescript").path
        process.arguments = ["-qfec", "\(CommandLineTests.executable.path) replay \(recording) --output \(estimates) > \(dir.path)/summary.txt", typescript]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let screen = try String(contentsOfFile: typescript, encoding: .utf8)
        #expect(screen.contains("100%"))
        #expect(screen.contains("█"))
    }
}
