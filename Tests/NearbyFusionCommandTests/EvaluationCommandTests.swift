import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("evaluate and coach")
struct EvaluationCommandTests {
    static let datasets = TestSupport.datasets

    @Test func errorStatisticsUseEvoNames() throws {
        let s = try #require(ErrorStatistics([1, 2, 3, 4]))
        #expect(s.max == 4 && s.min == 1 && s.mean == 2.5 && s.median == 2.5)
        #expect(abs(s.rmse - (30.0 / 4).squareRoot()) < 1e-12)
        #expect(abs(s.std - (1.25).squareRoot()) < 1e-12)   // population standard deviation
        #expect(ErrorStatistics([]) == nil)
    }

    @Test func evaluationScoresAConvergingRecording() throws {
        let report = try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent("coached-sweep.jsonl").path)
        let o = try #require(report.objects.first)
        #expect(o.updates > 90)
        #expect(try #require(o.horizontalAngleErrorDegrees).median < 2)
        #expect(try #require(o.positionErrorMetres).median < 0.1)
        #expect(try #require(o.timeToConvergenceSeconds) < 3)
        #expect(o.falseConvergedRate == 0)
        #expect(o.availability["distance"] == 1)
        #expect((o.availability["worldTransform"] ?? 0) > 0.5)
        // The object is at the device's level: every published vertical estimate is `same`.
        #expect(o.verticalConfusion["same"]?["same"] ?? 0 > 50)
        #expect(o.verticalConfusion["same"]?["above"] == 0 && o.verticalConfusion["same"]?["below"] == 0)
        #expect(o.meanNEES != nil)
    }

    @Test func theBoundOnTheAngleAndTheStabilityAfterConvergenceAreScored() throws {
        // Distance only: the first range says nothing about the bearing; the bound allows
        // 3° only once the sweep has made a baseline, and the engine converges after that.
        let report = try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent("distance-only.jsonl").path)
        let o = try #require(report.objects.first)
        let allowed = try #require(o.boundAllowsAngleAfterSeconds)
        let converged = try #require(o.timeToConvergenceSeconds)
        #expect(allowed > 1 && allowed < converged)
        #expect(abs(try #require(o.convergenceLagSeconds) - (converged - allowed)) < 1e-9)
        #expect(o.convergedShareAfterFirst == 1 && o.statusChangesPerMinute == 0)
        // With a direction on every update the bound allows the angle at once.
        let direct = try #require(try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent("coached-sweep.jsonl").path).objects.first)
        #expect(try #require(direct.boundAllowsAngleAfterSeconds) < 0.2)
        // A horizontal bound: straight across the line of sight, 1/√J_xx over the distance.
        var fisher = Matrix3.zero
        fisher.m00 = 1 / (0.1 * 0.1)
        let bound = try #require(RecordingEvaluation.horizontalAngleBound(fisher: fisher, object: Vector3(0, 0, -5), device: .zero))
        #expect(abs(bound - 0.1 / 5) < 1e-6)
    }

    /// A 10-minute session (`long-session`, seed 1) gets its NEES per minute after the first
    /// convergence: one entry per minute up to the last converged update, each a mean of
    /// positive NEES values, bracketing the whole session's mean; a 36 s recording gets one.
    @Test func theNEESIsAlsoScoredPerMinute() throws {
        let path = try TestSupport.temporaryFile(Simulator.recordingText(for: ScenarioCatalogue.all.first { $0.name == "long-session" }!.make(1)))
        let o = try #require(try RecordingEvaluation.evaluate(path: path).objects.first)
        let byMinute = try #require(o.meanNEESByMinute)
        let first = try #require(o.timeToConvergenceSeconds)
        #expect(byMinute.count >= 9 && byMinute.count <= 11, "\(byMinute.count) minutes after the first convergence at \(first) s")
        let means = byMinute.compactMap { $0 }
        #expect(means.count == byMinute.count && means.allSatisfy { $0 > 0 })
        let mean = try #require(o.meanNEES)
        #expect(means.min()! <= mean && mean <= means.max()!)
        let short = try #require(try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent("distance-only.jsonl").path).objects.first)
        // The same values summed in another order: equal to rounding.
        let shortMean = try #require(short.meanNEES), shortMinute = try #require(short.meanNEESByMinute?.first ?? nil)
        #expect(short.meanNEESByMinute?.count == 1 && abs(shortMinute - shortMean) <= 1e-12 * shortMean, "\(shortMinute) vs \(shortMean)")
    }

    /// A moving object's NEES is also split by whether its truth was moving: the picked-up
    /// tag's pickup (its still model certain while the tag already moves) shows there, and
    /// not in a run's mean, which the seconds it lies still dominate. Still objects, whose
    /// truth in the app's frame jitters with the VIO's noise, get no split.
    @Test func theNEESIsSplitByWhetherTheObjectMoves() throws {
        func evaluated(_ name: String) throws -> ObjectEvaluation {
            try #require(try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent(name).path).objects.first)
        }
        let picked = try evaluated("tag-picked-up.jsonl")
        let moving = try #require(picked.meanNEESWhileMoving), still = try #require(picked.meanNEESWhileStill)
        #expect(moving > 3 * still && still > 1 && still < 4, "while moving \(moving), while still \(still)")
        let mean = try #require(picked.meanNEES)
        #expect(still < mean && mean < moving)
        let walker = try evaluated("walking-peer.jsonl")
        // Walking throughout (after the first half second): every converged update is moving.
        let walkerMean = try #require(walker.meanNEES)
        #expect(walker.meanNEESWhileMoving.map { abs($0 - walkerMean) < 1e-9 * walkerMean } == true && walker.meanNEESWhileStill == nil)
        for name in ["coached-sweep.jsonl", "still-peer.jsonl", "nlos-20-percent.jsonl"] {
            let o = try evaluated(name)
            #expect(o.meanNEESWhileMoving == nil && o.meanNEESWhileStill == nil, "\(name)")
        }
        // In the JSON, and in the text.
        #expect(try CommandLineTests.evaluated("meanNEESWhileMoving", of: "Datasets/tag-picked-up.jsonl", []) == moving)
        let text = try TestSupport.run(["evaluate", "Datasets/tag-picked-up.jsonl"])
        #expect(text.stdout.contains(String(format: "while moving %.2f; while still %.2f", moving, still)))
    }

    /// `evaluate` scores the published `motion` against the timed truth: the picked-up tag
    /// is said `moving` on most of its carry and `stationary` on nearly all its still updates;
    /// a tag that never moves has no moving update, and a walking friend no still one.
    @Test func theMotionReportIsScored() throws {
        func evaluated(_ name: String) throws -> MotionReportSummary {
            let o = try #require(try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent(name).path).objects.first)
            return try #require(o.motionReport, "\(name)")
        }
        let picked = try evaluated("tag-picked-up.jsonl")
        #expect(picked.movingUpdates > 20 && (picked.movingShare ?? 0) > 0.5 && (picked.stationaryShare ?? 0) > 0.9, "\(picked)")
        // Never said `stationary` while carried, and said so 1.1 s after the put-down
        // (`FusionOptions.motion.stationaryDecisionProbability`: at 0.8 it was said once mid-carry,
        // at 12.91 s, and 0.4 s after the stop); with the app's hint, neither and at once.
        #expect(picked.stationaryWhileMoving == 0 && picked.stops == 1 && picked.missedStops == 0, "\(picked)")
        #expect(picked.stationaryAfterStopMaximumSeconds.map { $0 > 0.5 && $0 <= 1.5 } == true, "\(picked)")
        let hinted = try evaluated("tag-picked-up-hinted.jsonl")
        #expect(hinted.movingShare == 1 && hinted.stationaryWhileMoving == 0, "\(hinted)")
        #expect(hinted.stationaryAfterStopMaximumSeconds.map { $0 <= 0.2 } == true, "\(hinted)")
        let still = try evaluated("coached-sweep.jsonl")
        #expect(still.movingUpdates == 0 && still.movingShare == nil && (still.stationaryShare ?? 0) > 0.9, "\(still)")
        let walker = try evaluated("walking-peer.jsonl")
        #expect(walker.stillUpdates == 0 && walker.stationaryShare == nil && walker.movingShare != nil, "\(walker)")
        let text = try TestSupport.run(["evaluate", "Datasets/tag-picked-up.jsonl"])
        #expect(text.stdout.contains(String(format: "'moving' on %.0f%% of %d updates while the truth moves", 100 * picked.movingShare!, picked.movingUpdates)))
        #expect(text.stdout.contains("'stationary' while moving 0×; 'stationary' after a stop median"))
        let json = try TestSupport.run(["evaluate", "Datasets/tag-picked-up.jsonl", "--json"])
        #expect(json.stdout.contains("\"motionReport\"") && json.stdout.contains("\"movingShare\""))
    }

    @Test func evaluateReadsStandardInput() throws {
        let process = Process()
        process.executableURL = TestSupport.executable
        process.arguments = ["evaluate", "-", "--json"]
        process.currentDirectoryURL = TestSupport.packageRoot
        process.standardInput = try FileHandle(forReadingFrom: Self.datasets.appendingPathComponent("coached-sweep.jsonl"))
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let fromStdin = try JSONSerialization.jsonObject(with: stdout) as? [String: Any]
        let objects = try #require(fromStdin?["objects"] as? [[String: Any]])
        #expect(objects.count == 1 && objects[0]["object"] as? String == "tag")
        // The same figures as from the file.
        let fromFile = try RecordingEvaluation.evaluate(path: Self.datasets.appendingPathComponent("coached-sweep.jsonl").path)
        #expect(objects[0]["updates"] as? Int == fromFile.objects[0].updates)
    }

    @Test func evaluateCommandPrintsJSONAndFolderTables() throws {
        let one = try TestSupport.run(["evaluate", "Datasets/floor-above.jsonl", "--json"])
        #expect(one.status == 0)
        let value = try JSONLineParser.parse(one.stdout.replacingOccurrences(of: "\n", with: " "))
        #expect(value["objects"] != nil)
        let folder = try TestSupport.run(["evaluate", "Datasets"])
        #expect(folder.status == 0)
        #expect(folder.stdout.contains("| coached-sweep.jsonl |") && folder.stdout.contains("| **total** |"))
        // The progress bar is for terminals: a pipe gets nothing on standard error.
        #expect(folder.stderr.isEmpty)
        let missing = try TestSupport.run(["evaluate", "no-such-place"])
        #expect(missing.status == 1 && missing.stderr == "Error: no-such-place: no such file or folder\n")
    }

    /// Every `Datasets/expectations/NAME.expect`, checked against `Datasets/NAME.jsonl`.
    static var shippedExpectationNames: [String] {
        let folder = TestSupport.packageRoot.appendingPathComponent("Datasets/expectations").path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return files.filter { $0.hasSuffix(".expect") }.map { String($0.dropLast(".expect".count)) }.sorted()
    }

    @Test func everyShippedExpectationFileIsChecked() {
        #expect(Self.shippedExpectationNames.count >= 9, "\(Self.shippedExpectationNames)")
        #expect(Self.shippedExpectationNames.contains("walking-peer"))
    }

    @Test(arguments: shippedExpectationNames)
    func shippedExpectationsPass(name: String) throws {
        let result = try TestSupport.run(["coach", "Datasets/\(name).jsonl", "--expect", "Datasets/expectations/\(name).expect"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(!result.stdout.contains("FAIL"))
    }

    @Test func aWrongExpectationFailsWithWhatWasReported() throws {
        let path = try TestSupport.temporaryFile("""
        always     0.35 0.95 tag  status converged
        eventually 0    0.9  tag  available worldTransform
        always     0    end  session excludes insufficientLighting

        """, name: "wrong.expect")
        let result = try TestSupport.run(["coach", "Datasets/coached-sweep.jsonl", "--expect", path])
        #expect(result.status == 2)
        #expect(result.stdout.contains("FAIL  line 1: always     0.35 0.95 tag  status converged\n      at 0.41 s reported notConverged(insufficientMovement)"))
        #expect(result.stdout.contains("FAIL  line 2"))
        #expect(result.stdout.contains("PASS  line 3"))
        #expect(result.stdout.hasSuffix("1 passed, 2 failed\n"))
    }

    /// The `motion` clause reads the published `motion`: the shipped picked-up tag is said
    /// `moving` through its carry, but not at the pickup itself — `always … motion moving`
    /// from 11.0 s reports, with its time, the update that still said `stationary`.
    @Test func theMotionClauseChecksThePublishedMotion() throws {
        let path = try TestSupport.temporaryFile("""
        always     4.0  11.0 tag  motion stationary
        eventually 11.0 12.0 tag  motion moving
        always     12.0 14.5 tag  motion moving
        always     11.0 14.5 tag  motion moving
        always     0    0.2  tag  motion null

        """, name: "motion.expect")
        let result = try TestSupport.run(["coach", "Datasets/tag-picked-up.jsonl", "--expect", path])
        #expect(result.status == 2)
        #expect(result.stdout.contains("PASS  line 1") && result.stdout.contains("PASS  line 2") && result.stdout.contains("PASS  line 3"))
        #expect(result.stdout.contains("FAIL  line 4: always     11.0 14.5 tag  motion moving\n      at 11.01 s reported motion stationary"), "\(result.stdout)")
        #expect(result.stdout.contains("FAIL  line 5"), "an object being acquired says `unknown`, not nothing")
    }

    /// Guidance clauses: a distance-only watch is advised a step of half a metre or more within
    /// 2 s, never up, and nothing once its angle is published; asking for a step it never got
    /// (3 m: the longest advised is 2 m) fails with what was published.
    @Test func guidanceIsCheckable() throws {
        let path = try TestSupport.temporaryFile("""
        eventually 0    2    tag  guidance-step 0.5
        always     0    end  tag  guidance-not up
        always     25   end  tag  guidance none
        eventually 0    end  tag  guidance-step 3

        """, name: "guidance.expect")
        let result = try TestSupport.run(["coach", "Datasets/distance-only.jsonl", "--expect", path])
        #expect(result.status == 2)
        #expect(result.stdout.contains("PASS  line 1") && result.stdout.contains("PASS  line 2") && result.stdout.contains("PASS  line 3"),
                "\(result.stdout)")
        #expect(result.stdout.contains("FAIL  line 4"), "\(result.stdout)")
    }

    @Test func badExpectationFilesNameTheLine() throws {
        let cases: [(String, String)] = [
            ("sometimes 0 1 tag status converged\n", "x.expect:1: key 'quantifier': expected always or eventually, found 'sometimes'"),
            ("always 0 1 tag status happy\n", "x.expect:1: key 'status': unknown status 'happy'"),
            ("\nalways 2 1 tag status converged\n", "x.expect:2: key 'to': the window ends (1) before it starts (2)"),
            ("always 0 1 tag includes insufficientPatience\n", "x.expect:1: key 'reasons': unknown reason 'insufficientPatience'"),
            ("always 0 1 session vertical same\n", "x.expect:1: key 'subject': the session has only a convergence status"),
            ("always 0 1 tag\n", "x.expect:1: expected 'QUANTIFIER FROM TO SUBJECT CLAUSE ARGUMENT' (6 words), found 4"),
            ("always 0 1 tag motion walking\n", "x.expect:1: key 'motion': unknown motion 'walking' (moving, stationary, unknown, null)"),
            ("always 0 1 session motion moving\n", "x.expect:1: key 'subject': the session has only a convergence status"),
            ("always 0 1 tag guidance sideways\n",
             "x.expect:1: key 'guidance': unknown guidance 'sideways' (left, right, forward, back, up, down, none, any)"),
            ("always 0 1 tag guidance-not none\n", "x.expect:1: key 'guidance-not': unknown guidance 'none' (left, right, forward, back, up, down)"),
            ("always 0 1 tag guidance-step -1\n", "x.expect:1: key 'guidance-step': '-1' is not a positive number of metres"),
            ("always 0 1 session guidance none\n", "x.expect:1: key 'subject': the session has only a convergence status"),
        ]
        for (text, message) in cases {
            do { _ = try CoachingExpectation.parse(text, file: "x.expect"); Issue.record("accepted \(text)") } catch {
                #expect(error.description == message)
            }
        }
    }
}
