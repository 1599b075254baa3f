import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("bench, CSV output and the progress bar")
struct BenchAndFormatTests {
    @Test func benchReportsTheDocumentedKeysAndCountsAllocations() throws {
        let result = try TestSupport.run(["bench", "Datasets/tum-fr1-xyz-uwb.jsonl", "--passes", "2", "--json"])
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
        // the median block is within a factor 300 of the mean latency the rate implies. A unit
        // slipped by a thousand fails that; a machine busy with other work does not (the mean
        // takes every pause the process suffers: 29× the median was seen under load).
        let meanNanoseconds = 1e9 / rate
        #expect(p50 >= 1 && p50 <= p99, "p50 \(p50) ns, p99 \(p99) ns")
        #expect(p50 > meanNanoseconds / 300 && p50 < meanNanoseconds * 300, "p50 \(p50) ns, mean \(meanNanoseconds) ns")
        // 30 s of which ~1.6 s is acquisition: tracking updates allocate nothing.
        #expect(mallocs < 0.1, "mallocs per update \(mallocs)")
        // The negative control: an array (malloc) and a temporary allocation too large for the
        // stack (posix_memalign, as the Swift runtime takes it) per update inside the timed
        // bracket are both counted.
        let control = try TestSupport.run(["bench", "Datasets/tum-fr1-xyz-uwb.jsonl", "--passes", "1", "--json", "--allocate-for-test"])
        guard case .number(let controlMallocs)? = try JSONLineParser.parse(control.stdout)["mallocsPerUpdate"] else {
            Issue.record("no control figure"); return
        }
        #expect(controlMallocs >= 2 && controlMallocs < 2.1 + mallocs, "control mallocs per update \(controlMallocs)")
        // With the steady walking model, a walking friend's updates allocate nothing either.
        let steady = try TestSupport.run(["bench", "Datasets/walking-peer.jsonl", "--passes", "2", "--json", "--steady-walk", "0.1"])
        guard case .number(let steadyMallocs)? = try JSONLineParser.parse(steady.stdout)["mallocsPerUpdate"] else {
            Issue.record("no steady figure: \(steady.stderr)"); return
        }
        #expect(steadyMallocs < 0.1, "mallocs per update \(steadyMallocs)")
    }

    /// The estimate stream's numbers: `round(|d| · 10⁹)` as integer part, point, and the nine
    /// fraction digits with trailing zeros trimmed — checked against that definition written
    /// with `String`, on edge cases and 200,000 seeded values over sixteen decades.
    @Test func benchSplitsTheUpdatesIntoAcquisitionAndTracking() throws {
        // The coached sweep is acquired, then tracked: both parts, adding up to the whole; a
        // tracked update allocates nothing.
        let sweep = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--passes", "1", "--json"]).stdout)
        guard case .number(let all)? = sweep["updates"], case .number(let acquiring)? = sweep["acquiring"]?["updates"],
              case .number(let tracking)? = sweep["tracking"]?["updates"] else {
            Issue.record("missing keys: \(sweep)"); return
        }
        #expect(acquiring > 0 && tracking > 0 && acquiring + tracking == all)
        #expect(sweep["tracking"]?["mallocsPerUpdate"] == .number(0))
        // Nor does an acquiring one: the bank is tiled, solved and reset in storage it keeps
        // (a peer's first update resets its bank and starts tracking).
        #expect(sweep["acquiring"]?["mallocsPerUpdate"] == .number(0))
        let peer = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/walking-peer.jsonl", "--passes", "1", "--json"]).stdout)
        #expect(peer["acquiring"]?["mallocsPerUpdate"] == .number(0) && peer["mallocsPerUpdate"] == .number(0))
        // A Channel Sounding tag that never converges in its recording is acquired throughout.
        let cs = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/cs-coached-step.jsonl", "--passes", "1", "--json"]).stdout)
        #expect(cs["tracking"] == nil && cs["acquiring"]?["updates"] == cs["updates"])
        #expect(cs["acquiring"]?["mallocsPerUpdate"] == .number(0))
        // Acquired by the grid of directions, it is never re-solved from its window, and
        // allocates nothing either; an unknown density is refused.
        let grid = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/cs-coached-step.jsonl", "--passes", "1", "--json",
                                                             "--cs-acquisition", "grid"]).stdout)
        guard case .number(let bankPasses)? = cs["acquiring"]?["windowPassesPerUpdate"] else {
            Issue.record("no window passes: \(cs)"); return
        }
        #expect(bankPasses > 1 && grid["acquiring"]?["windowPassesPerUpdate"] == .number(0), "\(grid)")
        #expect(grid["acquiring"]?["mallocsPerUpdate"] == .number(0) && grid["acquiring"]?["updates"] == cs["acquiring"]?["updates"])
        let unknown = try TestSupport.run(["bench", "Datasets/cs-coached-step.jsonl", "--cs-acquisition", "particles"])
        #expect(unknown.status != 0 && unknown.stderr.contains("--cs-acquisition must be bank or grid"), "\(unknown.stderr)")
        // Nor does a walker's moving batch, ranged without directions (its faded weights once
        // took a temporary allocation per update, on the heap once the window outgrew the stack's).
        let walker = try JSONLineParser.parse(TestSupport.run(["bench", "--scenario", "peer-uwb-friend-walking", "--passes", "1", "--json"]).stdout)
        guard case .number(let walkerUpdates)? = walker["acquiring"]?["updates"] else {
            Issue.record("missing keys: \(walker)"); return
        }
        #expect(walkerUpdates > 100 && walker["acquiring"]?["mallocsPerUpdate"] == .number(0), "\(walker)")
        let text = try TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--passes", "1"]).stdout
        #expect(text.contains("\nacquiring        ") && text.contains("\ntracking         "), "\(text)")
        // The acquisition's work is counted, not timed: the same figure every run, for the
        // acquiring updates only.
        guard case .number(let work)? = sweep["acquiring"]?["windowPassesPerUpdate"] else {
            Issue.record("no window passes: \(sweep)"); return
        }
        let again = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--passes", "1", "--json"]).stdout)
        #expect(work > 1 && again["acquiring"]?["windowPassesPerUpdate"] == .number(work))
        #expect(sweep["tracking"]?["windowPassesPerUpdate"] == nil && sweep["windowPassesPerUpdate"] == nil)
        // So are the window entries those passes read: at least one per pass, and more where the
        // window is long.
        guard case .number(let entries)? = sweep["acquiring"]?["windowEntriesPerUpdate"] else {
            Issue.record("no window entries: \(sweep)"); return
        }
        #expect(entries >= work && again["acquiring"]?["windowEntriesPerUpdate"] == .number(entries))
        #expect(sweep["tracking"]?["windowEntriesPerUpdate"] == nil)
        #expect(text.contains(String(format: "%.2f window passes/update (%.0f entries)", work, entries)), "\(text)")
        // Its solves stop within 1 % of a σ of their minimum: iterated on to a step of 10 µm
        // (`--solve-tolerance 0`), the same sweep linearises its window more often; a negative
        // tolerance is refused.
        let iterated = try JSONLineParser.parse(TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--passes", "1", "--json",
                                                                 "--solve-tolerance", "0"]).stdout)
        guard case .number(let iteratedWork)? = iterated["acquiring"]?["windowPassesPerUpdate"] else {
            Issue.record("no window passes: \(iterated)"); return
        }
        #expect(iteratedWork > 1.2 * work, "\(iteratedWork) window passes per update iterated on, \(work) stopped")
        let negative = try TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--solve-tolerance=-1"])
        #expect(negative.status != 0 && negative.stderr.contains("--solve-tolerance must be a number, 0 or more"), "\(negative.stderr)")
    }

    @Test func benchTimesScenariosAndRecordingsInOneTable() throws {
        // A recording and two built-in scenarios: a header and one row each, in the order given,
        // with the session's UWB updates and how many of them were made while acquiring.
        let result = try TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", "--scenario", "still-peer", "--scenario", "cs-far",
                                          "--passes", "1", "--table"])
        let rows = result.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 5, "\(result.stdout)")
        #expect(rows.first?.hasPrefix("| recording | UWB updates | updates/s | of which acquiring |") == true)
        let cells = rows.dropFirst(2).map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        #expect(cells.map { $0.first } == ["Datasets/coached-sweep.jsonl", "still-peer", "cs-far"])
        for row in cells {
            let total = try #require(Int(row[1])), acquiring = try #require(Int(row[3]))
            #expect(acquiring > 0 && acquiring <= total, "\(row)")
        }
        // A Channel Sounding tag in cs-far is acquired throughout: no tracked update, and its
        // window linearised many times an update.
        #expect(cells[2][1] == cells[2][3] && cells[2][9] == "—")
        #expect((Double(cells[2][7]) ?? 0) > 1, "\(cells[2])")
        // Each pass reads the window: many entries per pass once it has filled.
        #expect((Double(cells[2][8]) ?? 0) > 10 * (Double(cells[2][7]) ?? .infinity), "\(cells[2])")
        // The same scenario from a file simulated with the same seed times the same updates.
        let sim = try TestSupport.run(["simulate", "--scenario", "still-peer", "--seed", "1"]).stdout
        let file = try TestSupport.temporaryFile(sim, name: "still-peer.jsonl")
        let fromFile = try TestSupport.run(["bench", file, "--passes", "1", "--table"]).stdout
        let fileRow = fromFile.split(separator: "\n").last.map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        #expect(fileRow?[1] == cells[1][1] && fileRow?[3] == cells[1][3])
        // A recording with no UWB update fails the command before anything is timed, wherever
        // it stands in the list.
        let posesOnly = try String(contentsOfFile: TestSupport.packageRoot.appendingPathComponent("Datasets/still-phone.jsonl").path,
                                   encoding: .utf8)
            .split(separator: "\n").filter { !$0.contains("\"type\":\"uwb\"") }.joined(separator: "\n") + "\n"
        let silent = try TestSupport.temporaryFile(posesOnly, name: "poses-only.jsonl")
        let failed = try TestSupport.run(["bench", "Datasets/coached-sweep.jsonl", silent, "--passes", "1", "--table"])
        #expect(failed.status != 0 && failed.stdout.isEmpty && failed.stderr.contains("poses-only.jsonl: no UWB updates to time"),
                "\(failed.stdout) \(failed.stderr)")
        // An unknown scenario names the ones there are; nothing to time is an error too.
        let unknown = try TestSupport.run(["bench", "--scenario", "nope"])
        #expect(unknown.status != 0 && unknown.stderr.contains("Unknown scenario 'nope'") && unknown.stderr.contains("cs-far"))
        #expect(try TestSupport.run(["bench"]).status != 0)
    }

    @Test func estimateNumbersHaveNineDecimalsTrimmed() {
        func reference(_ d: Double) -> String {
            guard d.isFinite else { return "null" }
            let m = abs(d)
            if m >= 1e9 { return "\(d)" }
            let scaled = UInt64((m * 1e9).rounded())
            if scaled == 0 { return "0" }
            var fraction = String(scaled % 1_000_000_000)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            return (d < 0 ? "-" : "") + String(scaled / 1_000_000_000) + (fraction.isEmpty ? "" : "." + fraction)
        }
        func encoded(_ d: Double) -> String {
            var out: [UInt8] = []
            EstimateEncoder.appendNumber(d, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        let edges: [Double] = [0, -0.0, 1, -1, 0.1, 3.2, -4.8, 0.081, 1e-9, 4e-10, 6e-10, -1e-9, 0.000000001, 0.999999999,
                               0.9999999995, 999_999_999.9999999, 999_999_999.999, 1e9, -1e9, 1.5e12, 123_456_789.123456789,
                               .pi, -.pi, .nan, .infinity, -.infinity, .ulpOfOne, 10, 100, 1_000_000]
        for d in edges { #expect(encoded(d) == reference(d), "\(d)") }
        var random = SplitMix64(seed: 11)
        for _ in 0..<200_000 {
            let d = (Double(random.next() % 2_000_001) / 1_000_000 - 1) * pow(10, Double(random.next() % 16) - 9)
            let text = encoded(d)
            guard text == reference(d) else { Issue.record("\(d): \(text) vs \(reference(d))"); return }
        }
    }

    @Test func replayWritesCSV() throws {
        let result = try TestSupport.run(["replay", "Datasets/dark-room.jsonl", "--format", "csv", "--output", "-"])
        #expect(result.status == 0)
        let rows = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(rows.first?.hasPrefix("t,object,distance,direction_x,") == true)
        #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 28 })
        // The session-level row: empty object, lighting reason.
        #expect(rows.contains { $0.contains(",,") && $0.hasSuffix("notConverged,insufficientLighting,,") })
    }

    @Test func progressBarOnlyOnATerminal() throws {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { return }
        // A big enough file: the long-session scenario, made on demand.
        let dir = Scratch.directory.appendingPathComponent("progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let recording = dir.appendingPathComponent("long.jsonl").path
        #expect(try TestSupport.run(["simulate", "--scenario", "long-session", "--seed", "1", "--output", recording]).status == 0)
        let estimates = dir.appendingPathComponent("estimates.jsonl").path
        let silent = try TestSupport.run(["replay", recording, "--output", estimates])
        #expect(silent.status == 0 && silent.stderr.isEmpty)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        let typescript = dir.appendingPathComponent("typescript").path
        process.arguments = ["-qfec", "\(TestSupport.executable.path) replay \(recording) --output \(estimates) > \(dir.path)/summary.txt", typescript]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let screen = try String(contentsOfFile: typescript, encoding: .utf8)
        #expect(screen.contains("100%"))
        #expect(screen.contains("█"))
    }
}
