import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// End to end: the real `nearby-fusion` executable, its outputs and exit codes.
@Suite("nearby-fusion command")
struct CommandLineTests {
    @Test func accuracyPrintsTheSameTablesEveryTimeWhateverTheThreads() throws {
        // Seeds run in parallel; the tables are collected in seed order, so they never differ.
        let arguments = ["accuracy", "--seeds", "4", "--scenario", "coached-sweep", "--scenario", "cs-planar-sweeps"]
        let first = try TestSupport.run(arguments), second = try TestSupport.run(arguments)
        #expect(first.status == 0 && first.stdout == second.stdout)
        let rows = first.stdout.split(separator: "\n")
        #expect(rows.contains { $0.hasPrefix("| coached-sweep |") && $0.contains("| 0/4 |") })
        // The planar sweeps' exact posterior never allows 10° (the mirror), in every run.
        let planar = try #require(rows.last { $0.hasPrefix("| cs-planar-sweeps |") })
        let cells = planar.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(cells.count == 27 && cells[20] == "4/4", "\(planar)")
        // Nor, beside it, does the posterior under the engine's radio model, within 3 s of the bound.
        #expect(cells.count == 27 && cells[22].hasPrefix("0/"), "\(planar)")
        // …and its NEES, followed to the end, sits beside the engine's.
        #expect(cells.count == 27 && Double(cells[25]) != nil && Double(cells[26]) != nil, "\(planar)")
        // A still tag has no error "while the tag moves"; no angle, no angle RMSE, the engine's
        // or the exact posterior's.
        #expect(cells.count == 27 && cells[12] == "—" && cells[13] == "—", "\(planar)")
        #expect(cells.count == 27 && cells[6] == "—" && cells[7] == "—", "\(planar)")
        // The targets under the tables: the planar sweeps never publish an angle more
        // than 15° off; the NEES band is not judged on four runs.
        #expect(rows.contains("| Channel Sounding | cs-planar-sweeps | no published angle more than 15° off | no angle published | met |"), "\(first.stdout)")
        #expect(rows.contains { $0.hasPrefix("| Channel Sounding | cs-planar-sweeps | mean NEES over ≥ 50 seeds") && $0.hasSuffix("| not judged |") })
        #expect(rows.last?.hasPrefix("targets: ") == true && rows.last?.contains("not judged (they need --seeds 50 or more, or what the exact posterior leaves open") == true)
        // The options that reproduce the documented alternatives reach the engine and the
        // simulator, and bad values are refused.
        for bad in [["--stationary-decision", "0.4"], ["--drift-variance=-1"], ["--batch-drift", "nan"], ["--vio-drift=-0.1"],
                    ["--moving-short-outliers", "1.5"], ["--moving-short-outliers=-0.1"]] {
            #expect(try TestSupport.run(["accuracy", "--seeds", "1", "--scenario", "still-phone"] + bad).status == 64, "\(bad)")
        }
        let noDrift = try TestSupport.run(["accuracy", "--seeds", "2", "--scenario", "coached-sweep", "--vio-drift", "0"])
        let lessVariance = try TestSupport.run(["accuracy", "--seeds", "2", "--scenario", "coached-sweep", "--drift-variance", "3e-5"])
        let defaults = try TestSupport.run(["accuracy", "--seeds", "2", "--scenario", "coached-sweep"])
        #expect(noDrift.status == 0 && lessVariance.status == 0 && noDrift.stdout != defaults.stdout && lessVariance.stdout != defaults.stdout)
        #expect(try TestSupport.run(["accuracy", "--seeds", "0"]).status != 0)
        #expect(try TestSupport.run(["accuracy", "--scenario", "no-such"]).stderr.contains("unknown scenario 'no-such'"))
        #expect(try TestSupport.run(["accuracy", "--steady-walk=-1"]).stderr.contains("--steady-walk must be"))
        #expect(try TestSupport.run(["replay", "Datasets/walking-peer.jsonl", "--output", "-", "--steady-walk", "nan"]).status == 64)
        // The steady walking model reaches the engine: the walker's estimates change.
        let plain = try TestSupport.run(["replay", "Datasets/walking-peer.jsonl", "--output", "-"])
        let steady = try TestSupport.run(["replay", "Datasets/walking-peer.jsonl", "--output", "-", "--steady-walk", "0.1"])
        #expect(plain.status == 0 && steady.status == 0 && plain.stdout != steady.stdout)
    }

    /// `--first-seed` moves every run — the scenarios' and the closed loops' — to other seeds:
    /// seed 2 alone is the second run of seeds 1–2, and seed 1 is the default.
    @Test func accuracyRunsTheSeedsItIsToldToStartFrom() throws {
        let scenarios = ["--scenario", "coached-sweep", "--scenario", "loop-uwb-in-front"]
        func rows(_ extra: [String]) throws -> [String] {
            let result = try TestSupport.run(["accuracy"] + extra + scenarios)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("| coached-sweep |") || $0.hasPrefix("| loop-uwb-in-front |") }
        }
        let first = try rows(["--seeds", "1"]), second = try rows(["--seeds", "1", "--first-seed", "2"])
        #expect(first.count == 4 && second.count == 4)
        #expect(try rows(["--seeds", "1", "--first-seed", "1"]) == first)
        // Every row differs: the closed loops' seeds moved with the scenarios'.
        #expect(zip(first, second).allSatisfy { $0 != $1 }, "\(first)\n\(second)")
        // The JSON says which seeds ran.
        let json = try TestSupport.run(["accuracy", "--seeds", "2", "--first-seed", "7", "--json", "--scenario", "coached-sweep"])
        let document = try JSONLineParser.parse(json.stdout.split(separator: "\n").joined())
        #expect(document["firstSeed"] == .number(7) && document["seeds"] == .number(2))
        #expect(try TestSupport.run(["accuracy", "--first-seed", "0"]).status == 64)
        let pastTheLast = try TestSupport.run(["accuracy", "--first-seed", "\(Int.max - 10)"])
        #expect(pastTheLast.status == 64 && pastTheLast.stderr.contains("runs past the largest seed"), "\(pastTheLast.stderr)")
    }

    /// `key` of the first object in `evaluate RECORDING --json EXTRA…`, or NaN when it is null.
    static func evaluated(_ key: String, of recording: String, _ extra: [String]) throws -> Double {
        let result = try TestSupport.run(["evaluate", recording, "--json"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        let value = try JSONLineParser.parse(result.stdout.split(separator: "\n").joined())
        guard case .array(let objects)? = value["objects"], case .number(let n)? = objects.first?[key] else { return .nan }
        return n
    }

    /// The share of `Datasets/cs-coached-step.jsonl`'s updates that publish a `horizontalAngle`
    /// under `evaluate … --json EXTRA…` (NaN when it is missing).
    static func channelSoundingAngleAvailability(_ extra: [String]) throws -> Double {
        let result = try TestSupport.run(["evaluate", "Datasets/cs-coached-step.jsonl", "--json"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        let value = try JSONLineParser.parse(result.stdout.split(separator: "\n").joined())
        guard case .array(let objects)? = value["objects"],
              case .number(let share)? = objects.first?["availability"]?["horizontalAngle"] else { return .nan }
        return share
    }

    /// `evaluate` scores the distance published before a `worldTransform` against the raw
    /// ranges of the same updates: the shipped recording with one range in five
    /// non-line-of-sight publishes a p95 well below its ranges' there; one whose ranges are
    /// clean (`behind-user`) publishes them as given.
    @Test func evaluateScoresTheDistanceBeforeAWorldTransform() throws {
        func beforeLocated(_ recording: String) throws -> (raw: Double, published: Double, count: Double) {
            let result = try TestSupport.run(["evaluate", recording, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let value = try JSONLineParser.parse(result.stdout.split(separator: "\n").joined())
            guard case .array(let objects)? = value["objects"], let d = objects.first?["distanceError"],
                  case .number(let raw)? = d["beforeLocatedRawP95Metres"], case .number(let published)? = d["beforeLocatedPublishedP95Metres"],
                  case .number(let count)? = d["beforeLocatedCount"] else { return (.nan, .nan, .nan) }
            return (raw, published, count)
        }
        let nlos = try beforeLocated("Datasets/nlos-20-percent.jsonl"), clean = try beforeLocated("Datasets/behind-user.jsonl")
        #expect(nlos.count >= 20 && nlos.published < 0.8 * nlos.raw, "\(nlos)")
        #expect(clean.count >= 100 && clean.published == clean.raw, "\(clean)")
        let text = try TestSupport.run(["evaluate", "Datasets/nlos-20-percent.jsonl"])
        #expect(text.stdout.contains(String(format: "before a worldTransform  published p95 %.3f m; raw ranges p95 %.3f m", nlos.published, nlos.raw)),
                "\(text.stdout)")
    }

    /// `accuracy` breaks a still radio profile down by distance: nine seeds of `cs-ifft-still`
    /// visit its nine distances, 5 m to 45 m, and each row's raw and published figures are
    /// those of its run alone, which together make the pooled row's updates; the raw ranges'
    /// median error grows with the distance (the radio's scale error). A walk, whose distance
    /// changes within each run, has no such rows, and the text prints the table.
    @Test func accuracyBreaksAStillRadioProfileDownByDistance() throws {
        let result = try TestSupport.run(["accuracy", "--scenario", "cs-ifft-still", "--scenario", "cs-ifft-walk", "--seeds", "9", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let value = try JSONLineParser.parse(result.stdout.split(separator: "\n").joined())
        guard case .array(let rows)? = value["radioProfilesByDistance"], case .array(let pooled)? = value["radioProfiles"] else {
            Issue.record("no radioProfilesByDistance in \(result.stdout.prefix(400))")
            return
        }
        func number(_ v: JSONValue?) -> Double? { if case .number(let x)? = v { return x } else { return nil } }
        func text(_ v: JSONValue?) -> String? { if case .string(let x)? = v { return x } else { return nil } }
        #expect(rows.count == 9 && rows.allSatisfy { text($0["scenario"]) == "cs-ifft-still" && number($0["runs"]) == 1 })
        #expect(rows.compactMap { number($0["distanceMetres"]) } == stride(from: 5.0, through: 45, by: 5).map { $0 })
        let medians = rows.compactMap { number($0["rawDistanceErrorMedianMetres"]) }
        #expect(medians.count == 9 && medians.last! > 3 * medians.first!, "\(medians)")
        let updates = rows.compactMap { number($0["updatesWithRange"]) }.reduce(0, +)
        let still = pooled.first { text($0["scenario"]) == "cs-ifft-still" }
        let ranged = still.flatMap { row -> Double? in
            guard case .object? = row["rangesFailed"], let failed = number(row["rangesFailed"]?["count"]), let of = number(row["rangesFailed"]?["of"]) else { return nil }
            return of - failed
        }
        #expect(ranged != nil && updates > 0 && updates <= ranged!, "\(updates) rows' updates, \(String(describing: ranged)) with a range")
        let table = try TestSupport.run(["accuracy", "--scenario", "cs-ifft-still", "--seeds", "9"])
        #expect(table.stdout.contains("| still radio profile | distance m | runs |") && table.stdout.contains("| cs-ifft-still | 45.0 | 1 |"))
    }

    /// `--cs-angle-threshold` (degrees) reaches a Channel Sounding object's publication rule:
    /// at 14° the recorded tag has an angle on more of its updates than at the default 10°,
    /// and 10° given explicitly changes nothing. Values outside (0, 45] are refused.
    @Test func theChannelSoundingAngleThresholdReachesTheEngine() throws {
        let angleAvailability = Self.channelSoundingAngleAvailability
        let plain = try angleAvailability([])
        let ten = try angleAvailability(["--cs-angle-threshold", "10"])
        let wider = try angleAvailability(["--cs-angle-threshold", "14"])
        #expect(plain > 0 && ten == plain && wider > plain, "angle on \(plain), \(ten), \(wider) of the updates")
        for bad in [["--cs-angle-threshold", "0"], ["--cs-angle-threshold=-3"], ["--cs-angle-threshold", "nan"], ["--cs-angle-threshold", "46"]] {
            let result = try TestSupport.run(["evaluate", "Datasets/cs-coached-step.jsonl"] + bad)
            #expect(result.status == 64 && result.stderr.contains("--cs-angle-threshold must be"), "\(bad): \(result.stderr)")
        }
    }

    /// `--cs-range-sigma`, `--cs-multipath-probability` and `--cs-multipath-excess` (the
    /// Channel Sounding radio the engine assumes) reach the engine: the defaults given
    /// explicitly change nothing; a radio taken as twice as noisy publishes the recorded tag's
    /// angle on fewer updates; a different multipath model changes the estimate stream;
    /// `--cs-error-correlation` moves the round-trip-time radio's published distance, and its
    /// default given explicitly does not. Values that make no radio are refused.
    @Test func theChannelSoundingRadioModelReachesTheEngine() throws {
        let angleAvailability = Self.channelSoundingAngleAvailability
        let plain = try angleAvailability([])
        let explicit = try angleAvailability(["--cs-range-sigma", "0.38", "--cs-multipath-probability", "0.2", "--cs-multipath-excess", "2.5"])
        let noisier = try angleAvailability(["--cs-range-sigma", "0.76"])
        #expect(plain > 0 && explicit == plain && noisier < plain, "angle on \(plain), \(explicit), \(noisier) of the updates")
        let stream = try TestSupport.run(["replay", "Datasets/cs-coached-step.jsonl", "--output", "-"])
        let fewerReflections = try TestSupport.run(["replay", "Datasets/cs-coached-step.jsonl", "--output", "-",
                                                    "--cs-multipath-probability", "0.05", "--cs-multipath-excess", "1.5"])
        #expect(stream.status == 0 && fewerReflections.status == 0 && fewerReflections.stdout != stream.stdout)
        // The errors' correlation the learned noise allows for: the round-trip-time radio is
        // learned noisier with it than read as independent, and its published distance moves.
        func roundTripMedian(_ extra: [String]) throws -> Double {
            let result = try TestSupport.run(["accuracy", "--scenario", "cs-rtt-still", "--seeds", "3", "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let value = try JSONLineParser.parse(result.stdout.split(separator: "\n").joined())
            guard case .array(let profiles)? = value["radioProfiles"],
                  case .number(let median)? = profiles.first?["publishedDistanceErrorMedianMetres"] else { return .nan }
            return median
        }
        let allowed = try roundTripMedian([]), stated = try roundTripMedian(["--cs-error-correlation", "0.2"])
        let independent = try roundTripMedian(["--cs-error-correlation", "0"])
        #expect(allowed.isFinite && stated == allowed && independent != allowed, "\(allowed), \(stated), \(independent)")
        for (bad, option) in [(["--cs-range-sigma", "0"], "--cs-range-sigma"), (["--cs-range-sigma", "nan"], "--cs-range-sigma"),
                              (["--cs-error-correlation", "1"], "--cs-error-correlation"),
                              (["--cs-error-correlation=-0.1"], "--cs-error-correlation"),
                              (["--cs-error-correlation", "nan"], "--cs-error-correlation"),
                              (["--cs-multipath-probability", "0.9"], "--cs-multipath-probability"),
                              (["--cs-multipath-probability=-0.1"], "--cs-multipath-probability"),
                              (["--cs-multipath-excess", "0"], "--cs-multipath-excess"), (["--cs-multipath-excess", "inf"], "--cs-multipath-excess")] {
            let result = try TestSupport.run(["evaluate", "Datasets/cs-coached-step.jsonl"] + bad)
            #expect(result.status == 64 && result.stderr.contains("\(option) must be"), "\(bad): \(result.stderr)")
        }
    }

    @Test func stillBatchNewtonStepsReachTheEngine() throws {
        // behind-user.jsonl's tag is acquired from ranges alone for 20 s: Newton steps change
        // the estimate stream (a valley Gauss–Newton stops short in), and `evaluate` takes the flag.
        let plain = try TestSupport.run(["replay", "Datasets/behind-user.jsonl", "--output", "-"])
        let newton = try TestSupport.run(["replay", "Datasets/behind-user.jsonl", "--output", "-", "--still-batch-newton"])
        #expect(plain.status == 0 && newton.status == 0)
        #expect(newton.stdout != plain.stdout)
        #expect(try TestSupport.run(["evaluate", "Datasets/behind-user.jsonl", "--still-batch-newton"]).status == 0)
    }

    @Test func rangeBiasReachesTheEngineInEveryCommandThatReplays() throws {
        // distance-only.jsonl's watch: the considered bias widens what the coaching reads.
        func nees(_ extra: [String]) throws -> Double { try Self.evaluated("meanNEES", of: "Datasets/distance-only.jsonl", extra) }
        let plain = try nees([]), considered = try nees(["--range-bias", "0.1"])
        #expect(considered < 0.9 * plain, "mean NEES \(plain) → \(considered)")
        // replay: the estimate stream changes; coach and report accept it too.
        let replayed = try TestSupport.run(["replay", "Datasets/distance-only.jsonl", "--output", "-", "--range-bias", "0.3"])
        let plainReplay = try TestSupport.run(["replay", "Datasets/distance-only.jsonl", "--output", "-"])
        #expect(replayed.status == 0 && replayed.stdout != plainReplay.stdout)
        let coach = try TestSupport.run(["coach", "Datasets/coached-sweep.jsonl", "--expect", "Datasets/expectations/coached-sweep.expect",
                                  "--range-bias", "0"])
        #expect(coach.status == 0, "\(coach.stdout)")
        let html = Scratch.directory.appendingPathComponent("report-\(UUID().uuidString).html").path
        #expect(try TestSupport.run(["report", "Datasets/distance-only.jsonl", "--output", html, "--range-bias", "0.1"]).status == 0)
        for bad in ["nan", "-0.5", "inf"] {
            let result = try TestSupport.run(["evaluate", "Datasets/distance-only.jsonl", "--range-bias=\(bad)"])
            #expect(result.status == 64, "--range-bias=\(bad): \(result.stderr)")
        }
    }

    /// `--fusion-interval` reaches the engine: at 0.5 s a 10 Hz recording is fused at 2 Hz, and
    /// its watch, which converges at 32 s with every update fused (the default for a 10 Hz
    /// radio), does not converge within the recording's 36 s.
    @Test func fusionIntervalReachesTheEngine() throws {
        func firstConverged(_ extra: [String]) throws -> Double {
            try Self.evaluated("timeToConvergenceSeconds", of: "Datasets/distance-only.jsonl", extra)
        }
        let plain = try firstConverged([]), sparse = try firstConverged(["--fusion-interval", "0.5"])
        #expect(plain == (try firstConverged(["--fusion-interval", "0"])), "a 10 Hz radio is fused whole by default")
        #expect(plain.isFinite && sparse.isNaN, "first converged \(plain) s → \(sparse) s")
        for bad in ["nan", "-0.1", "inf"] {
            let result = try TestSupport.run(["replay", "Datasets/distance-only.jsonl", "--fusion-interval=\(bad)"])
            #expect(result.status == 64, "--fusion-interval=\(bad): \(result.stderr)")
        }
    }

    @Test func replayWritesTheEstimateStreamAndPrintsASummary() throws {
        let output = Scratch.directory.appendingPathComponent("estimates-\(UUID().uuidString).jsonl").path
        let result = try TestSupport.run(["replay", "Datasets/coached-sweep.jsonl", "--output", output])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("first converged   at"))
        #expect(result.stdout.contains("coaching timeline"))
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        let events = try RecordingReader.readAll(path: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl").path)
        let uwbCount = events.filter { if case .uwb = $0 { return true } else { return false } }.count
        #expect(lines.filter { $0.contains("\"object\"") }.count == uwbCount)
        for line in lines {
            let value = try JSONLineParser.parse(String(line))
            #expect(value["t"] != nil && value["convergence"] != nil)
        }
        #expect(lines.last.map { $0.contains("\"status\":\"converged\"") } == true)
    }

    @Test func pipelinedReplayEqualsSequentialReplay() throws {
        let path = TestSupport.packageRoot.appendingPathComponent("Datasets/two-tags.jsonl").path
        var sequential: [String] = [], pipelined: [String] = []
        let a = try RecordingReplay.run(path: path, pipelined: false) { sequential.append($0.jsonLine) }
        let b = try RecordingReplay.run(path: path, pipelined: true) { pipelined.append($0.jsonLine) }
        #expect(sequential == pipelined)
        #expect(a.uwbCount == b.uwbCount && a.poseCount == b.poseCount)
        // A bad line after many good ones: the same error, after the same estimates.
        let text = try String(contentsOfFile: path, encoding: .utf8) + #"{"type":"uwb","t":99,"object":"keys","distance":"far"}"# + "\n"
        let bad = try TestSupport.temporaryFile(text, name: "bad.jsonl")
        for mode in [false, true] {
            var count = 0
            do {
                _ = try RecordingReplay.run(path: bad, pipelined: mode) { _ in count += 1 }
                Issue.record("accepted")
            } catch let e as RecordingError {
                #expect(e.line == text.split(separator: "\n").count && e.key == "distance")
                #expect(count == sequential.count)
            }
        }
    }

    @Test func replayToStandardOutputSendsTheSummaryToStandardError() throws {
        let result = try TestSupport.run(["replay", "Datasets/still-phone.jsonl", "--output", "-"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("{\"t\":") })
        #expect(result.stderr.contains("first converged   never"))
        #expect(result.stderr.contains("insufficientMovement"))
    }

    @Test func aBadRecordingIsOneLineNamingFileLineAndKey() throws {
        let path = Scratch.directory.appendingPathComponent("bad-\(UUID().uuidString).jsonl").path
        let text = try String(contentsOfFile: TestSupport.packageRoot.appendingPathComponent("Datasets/still-phone.jsonl").path, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[5] = lines[5].replacingOccurrences(of: "\"orientation\":[", with: "\"orientation\":[0.5,")
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let result = try TestSupport.run(["replay", path, "--output", path + ".estimates"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: \(path):6: key 'orientation': expected 4 numbers, found 5\n")
    }

    @Test func missingFileAndBadArgumentsFailCleanly() throws {
        let missing = try TestSupport.run(["replay", "no/such/file.jsonl"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "Error: no/such/file.jsonl:0: cannot open file (No such file or directory)\n")
        // The system's reason, for the other files the commands read whole.
        let expectations = try TestSupport.run(["coach", TestSupport.packageRoot.appendingPathComponent("Datasets/still-phone.jsonl").path,
                                                "--expect", "no/such/expectations.txt"])
        #expect(expectations.status == 1)
        #expect(expectations.stderr == "Error: no/such/expectations.txt: cannot open file (No such file or directory)\n")
        let folder = Scratch.directory.path
        let script = try TestSupport.run(["simulate", folder])
        #expect(script.status == 1)
        #expect(script.stderr == "Error: \(folder): cannot open file (is a directory)\n")
        let badScenario = try TestSupport.run(["simulate", "--scenario", "moonwalk"])
        #expect(badScenario.status == 64)
        #expect(badScenario.stderr.contains("unknown scenario 'moonwalk'"))
    }

    @Test func simulateIsDeterministicPerSeed() throws {
        let a = try TestSupport.run(["simulate", "--scenario", "coached-sweep", "--seed", "9"])
        let b = try TestSupport.run(["simulate", "--scenario", "coached-sweep", "--seed", "9"])
        let c = try TestSupport.run(["simulate", "--scenario", "coached-sweep", "--seed", "10"])
        #expect(a.status == 0 && !a.stdout.isEmpty)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout != c.stdout)
    }
}

/// The command's behaviour at its edges (issue 12).
@Suite("nearby-fusion command edges")
struct CommandEdgeTests {
    @Test func versionIsPrinted() throws {
        let result = try TestSupport.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "nearby-fusion 0.5.0 (nearby-recording format 1)\n")
    }

    @Test func shellCompletionKnowsRecordingsScriptsAndScenarios() throws {
        let bash = try TestSupport.run(["--generate-completion-script", "bash"])
        #expect(bash.status == 0)
        #expect(bash.stdout.contains("jsonl") && bash.stdout.contains("sim") && bash.stdout.contains("expect"))
        #expect(bash.stdout.contains("coached-sweep") && bash.stdout.contains("cs-carried-hinted"))
        let zsh = try TestSupport.run(["--generate-completion-script", "zsh"])
        #expect(zsh.status == 0 && zsh.stdout.contains("still-peer"))
    }

    @Test func anUnknownObjectIsAnErrorAndLeavesNoFile() throws {
        let dir = try OutputSafetyTests.folder()
        let result = try TestSupport.run(["replay", "Datasets/two-tags.jsonl", "--object", "nosuch", "--tum", dir + "/t.tum",
                                               "--output", dir + "/e.jsonl"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: --object 'nosuch': the recording has no such object (it has: keys, bag)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        let known = try TestSupport.run(["replay", "Datasets/two-tags.jsonl", "--object", "bag", "--tum", dir + "/t.tum"])
        #expect(known.status == 0)
        #expect(try String(contentsOfFile: dir + "/t.tum", encoding: .utf8).split(separator: "\n").count > 10)
    }
}

extension CommandEdgeTests {
    @Test func aFolderWithABadFileEvaluatesTheGoodOnesAndListsTheBad() throws {
        let dir = try OutputSafetyTests.folder()
        for name in ["coached-sweep", "two-tags"] {
            try FileManager.default.copyItem(atPath: TestSupport.packageRoot.appendingPathComponent("Datasets/\(name).jsonl").path,
                                             toPath: "\(dir)/\(name).jsonl")
        }
        try #"{"type":"header""#.write(toFile: dir + "/broken.jsonl", atomically: false, encoding: .utf8)
        let table = try TestSupport.run(["evaluate", dir])
        #expect(table.status == 1)
        #expect(table.stdout.contains("| coached-sweep.jsonl | 101 |") && table.stdout.contains("| two-tags.jsonl | 200 |"))
        #expect(table.stderr.hasPrefix("1 of 3 recordings could not be evaluated:\n  \(dir)/broken.jsonl:1: truncated last line"))
        let json = try TestSupport.run(["evaluate", dir, "--json"])
        #expect(json.status == 1)
        let value = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((value["failed"] as? [String])?.count == 1 && (value["recordings"] as? [Any])?.count == 2)
    }

    /// The first scenario's mean NEES in `accuracy --json`'s output.
    static func meanNEES(ofAccuracyJSON stdout: String) throws -> Double {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        let rows = try #require(object["scenarios"] as? [[String: Any]])
        return try #require(rows.first?["meanNEES"] as? Double)
    }

    /// `--learned-range-correlation` is the default, and `--no-learned-range-correlation` takes a
    /// peer's ranges as independent again: on two runs of phone-to-phone UWB whose errors last
    /// (`peer-uwb-friend-walking`, seeds 86–87) the mean NEES is then a mirror image's.
    @Test func theCommandLineReachesTheLearnedRangeCorrelation() throws {
        let arguments = ["accuracy", "--scenario", "peer-uwb-friend-walking", "--seeds", "2", "--first-seed", "86", "--json"]
        let plain = try TestSupport.run(arguments)
        let learned = try TestSupport.run(arguments + ["--learned-range-correlation"])
        let independent = try TestSupport.run(arguments + ["--no-learned-range-correlation"])
        #expect(plain.status == 0 && learned.status == 0 && independent.status == 0)
        #expect(plain.stdout == learned.stdout && plain.stdout != independent.stdout)
        #expect(try Self.meanNEES(ofAccuracyJSON: plain.stdout) < 16.27 && Self.meanNEES(ofAccuracyJSON: independent.stdout) > 16.27)
    }

    /// `--moving-short-outliers 1` sets aside a walker's short ranges as readily as its long
    /// ones: the watch's friend who walks past it within centimetres
    /// (`distance-only-turning-peer`, seed 49) is then reported the wrong way along the path,
    /// certain of it.
    @Test func theCommandLineReachesTheShortOutliers() throws {
        let arguments = ["accuracy", "--scenario", "distance-only-turning-peer", "--seeds", "1", "--first-seed", "49", "--json"]
        let plain = try TestSupport.run(arguments)
        let symmetric = try TestSupport.run(arguments + ["--moving-short-outliers", "1"])
        #expect(plain.status == 0 && symmetric.status == 0)
        #expect(try Self.meanNEES(ofAccuracyJSON: plain.stdout) < 16.27 && Self.meanNEES(ofAccuracyJSON: symmetric.stdout) > 16.27)
    }
}
