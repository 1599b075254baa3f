import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// The scenarios' targets as `accuracy` judges them (`ScenarioTargets`): the χ² band they read,
/// and verdicts that follow the runs — met where the engine does what the target asks,
/// missed where it cannot.
@Suite("targets judged from seeded runs")
struct ScenarioTargetTests {
    /// Quantiles against published tables (Abramowitz & Stegun, table 26.8), to 4–5 digits.
    @Test func chiSquareQuantilesMatchTheTables() {
        let table: [(p: Double, k: Double, x: Double)] = [
            (0.975, 10, 20.4832), (0.025, 10, 3.24697), (0.95, 3, 7.81473), (0.5, 1, 0.454936),
            (0.99, 30, 50.8922), (0.05, 2, 0.102587), (0.975, 100, 129.561), (0.025, 100, 74.2219),
        ]
        for row in table {
            let x = ScenarioTargets.chiSquareQuantile(row.p, degreesOfFreedom: row.k)
            #expect(abs(x - row.x) < 1e-4 * row.x, "χ²(\(row.k)) at \(row.p): \(x), table \(row.x)")
        }
        // The band of 50 final NEES values of a 3-D position, which the targets table quotes.
        let band = ScenarioTargets.meanNEESBand(runs: 50)
        #expect(abs(band.lowerBound - 2.3597) < 1e-3 && abs(band.upperBound - 3.7160) < 1e-3, "\(band)")
        // More runs, a narrower band around the dimension.
        let wide = ScenarioTargets.meanNEESBand(runs: 10), narrow = ScenarioTargets.meanNEESBand(runs: 1000)
        #expect(wide.lowerBound < narrow.lowerBound && narrow.lowerBound < 3 && 3 < narrow.upperBound && narrow.upperBound < wide.upperBound)
    }

    /// A mean NEES target's text says how the mean is made up: the median, and the runs beyond
    /// χ²(3)'s 99.9 % point (16.27) with the others' mean — one run at 100 among values near 3
    /// carries a mean of 26.5 that the median (2.5) and the others' mean (2.0) show is its doing.
    @Test func aMeanNEESSaysWhichRunsMakeIt() throws {
        #expect(abs(ScenarioTargets.chiSquareQuantile(0.999, degreesOfFreedom: 3) - 16.2662) < 1e-3)
        #expect(ScenarioTargets.neesSpread([1, 2, 3, 100]) == "; median 2.500, 1 beyond χ²(3)'s 99.9 % point 16.27 (the others' mean 2.000)")
        #expect(ScenarioTargets.neesSpread([1, 2, 3]) == "; median 2.000, 0 beyond χ²(3)'s 99.9 % point 16.27")
        #expect(ScenarioTargets.neesSpread([]) == "")
        // In a target's text: the walking peer's, over four seeds (not judged: it takes 50).
        let (scenario, runs) = Self.runs("walking-peer", seeds: 4)
        let check = try #require(ScenarioTargets.checks(for: scenario, runs: runs).first { $0.target.hasPrefix("mean NEES") })
        let nees = runs.compactMap(\.finalNEES)
        #expect(nees.count == 4)
        #expect(check.measured.hasSuffix(ScenarioTargets.neesSpread(nees)), "\(check.measured)")
        #expect(check.verdict == .notJudged)
    }

    static func runs(_ name: String, seeds: Int, cameraAssistance: Bool? = nil) -> (SimulationScenario, [ScenarioRun]) {
        let make = ScenarioCatalogue.all.first { $0.name == name }!.make
        return (make(1), (0..<seeds).map { ScenarioRun(make(UInt64($0 + 1)), cameraAssistance: cameraAssistance) })
    }

    static func verdicts(_ checks: [TargetCheck]) -> [String: TargetCheck.Verdict] {
        Dictionary(checks.map { ($0.target, $0.verdict) }, uniquingKeysWith: { a, _ in a })
    }

    /// A radio profile's targets compare the published distance with the raw ranges at the
    /// same updates: at 45 m the inverse-FFT radio fails most procedures, yet a distance is
    /// published at every update, so the pairs are exactly the updates with a range; and the
    /// targets table judges them under "radio profiles".
    @Test func radioProfilesAreJudgedOnTheUpdatesWithARange() {
        let (scenario, runs) = Self.runs("cs-ifft-still", seeds: 9)
        let far = runs[8]
        let ranged = far.updates.filter { $0.rawDistance != nil }.count
        #expect(far.pairedDistanceErrors.count == ranged)
        #expect(ranged < far.updates.count / 2, "\(ranged) ranges of \(far.updates.count) updates at 45 m")
        let checks = ScenarioTargets.checks(for: scenario, runs: runs).filter { $0.area == .radioProfiles }
        #expect(checks.count == 2)
        #expect(checks.allSatisfy { $0.verdict != .notJudged })
        #expect(ScenarioTargets.checks(for: Self.runs("cs-rtt-walk", seeds: 2).0, runs: Self.runs("cs-rtt-walk", seeds: 2).1)
            .filter { $0.area == .radioProfiles }.contains { $0.target.contains("lag") })
    }

    /// The radio's scale and offset alone, beside a profile's errors: at every update with a
    /// range and a published distance, `|s d + o|` of the true distance — the phase-slope
    /// radio's `13.7 % d + 0.22 m`, phone-to-phone UWB's constant +0.06 m — and nothing for a
    /// radio whose ranges carry none.
    @Test func aProfilesOwnBiasIsScoredAtTheUpdatesWithARange() {
        let (_, phase) = Self.runs("cs-phase-still", seeds: 1)
        let run = phase[0]
        let bias = run.pairedDistanceErrors.map(\.radioBias)
        #expect(!bias.isEmpty)
        let paired = run.updates.filter { $0.rawDistance != nil && $0.estimate.distance != nil }
        for (u, b) in zip(paired, bias) {
            #expect(abs(b - (0.137 * u.trueDistanceVector.length + 0.22)) < 1e-9)
        }
        // The raw ranges scatter about the biased distance: their median error is the bias's,
        // give or take the noise, far from zero.
        let rawMedian = Statistics.quantile(run.pairedDistanceErrors.map(\.raw), 0.5)!
        let biasMedian = Statistics.quantile(bias, 0.5)!
        #expect(biasMedian > 0.5 && abs(rawMedian - biasMedian) < 0.5 * biasMedian, "raw \(rawMedian) m, bias \(biasMedian) m")
        let (_, rtt) = Self.runs("cs-rtt-still", seeds: 1)
        let rttBias = rtt[0].pairedDistanceErrors.map(\.radioBias)
        #expect(rttBias.allSatisfy { $0 == 0 } && !rttBias.isEmpty)
        let (_, peer) = Self.runs("peer-uwb-friend-walking", seeds: 1)
        let peerBias = peer[0].pairedDistanceErrors.map(\.radioBias)
        #expect(!peerBias.isEmpty && peerBias.allSatisfy { abs($0 - 0.06) < 1e-12 })
        let (_, tag) = Self.runs("coached-sweep", seeds: 1)
        let tagBias = tag[0].pairedDistanceErrors.map(\.radioBias)
        #expect(tagBias.allSatisfy { $0 == 0 } && !tagBias.isEmpty)
    }

    /// The ranges without the radio's outliers, beside a profile's errors: at every update with
    /// a range and a published distance, the range less the part its outliers put there, against
    /// the truth — below the raw ranges' p95 for a walking peer (its non-line-of-sight tail taken
    /// out), the raw error itself for a radio that draws no outliers — and quoted beside the p95
    /// target.
    @Test func aProfilesRangesWithoutTheirOutliersAreScoredBesideTheP95() throws {
        let (scenario, peer) = Self.runs("peer-uwb-friend-walking", seeds: 2)
        let paired = peer.flatMap(\.pairedDistanceErrors)
        let updates = peer.flatMap { $0.updates.filter { $0.rawDistance != nil && $0.estimate.distance != nil } }
        #expect(paired.count == updates.count && !paired.isEmpty)
        for (pair, u) in zip(paired, updates) {
            #expect(abs(pair.withoutOutliers - abs(u.rawDistance! - u.rangeOutlierMetres - u.trueDistanceVector.length)) < 1e-12)
        }
        #expect(updates.contains { $0.rangeOutlierMetres > 0 })
        let raw95 = try #require(Statistics.quantile(paired.map(\.raw), 0.95))
        let clean95 = try #require(Statistics.quantile(paired.map(\.withoutOutliers), 0.95))
        #expect(clean95 < raw95)
        let p95 = ScenarioTargets.checks(for: scenario, runs: peer).first { $0.target.contains("p95") }
        #expect(p95?.measured.contains(String(format: "the ranges without the radio's outliers: %.3f m", clean95)) == true)
        let (_, tag) = Self.runs("coached-sweep", seeds: 1)
        let plain = tag[0].pairedDistanceErrors
        #expect(!plain.isEmpty && plain.allSatisfy { $0.withoutOutliers == $0.raw })
    }

    /// The angle RMSE over the bound is judged over 50 seeds or more, like the other
    /// statistical targets, with the exact posterior's ratio at the same updates beside it.
    @Test func theAngleRMSETargetIsJudgedOverFiftySeedsBesideTheExactPosterior() throws {
        let coached = ScenarioCatalogue.all.first { $0.name == "cs-coached-step" }!.make
        let run = ScenarioRun(coached(1), exactPosteriorUntil: Angle.radians(degrees: 10))
        let ratios = try #require(ScenarioRun.posteriorAngleRMSEOverBound([run]))
        func check(_ runs: [ScenarioRun]) throws -> TargetCheck {
            try #require(ScenarioTargets.checks(for: coached(1), runs: runs).first { $0.target.hasPrefix("angle RMSE ≤ 1.3 × the bound") })
        }
        let few = try check(Array(repeating: run, count: 3))
        #expect(few.target == "angle RMSE ≤ 1.3 × the bound (≥ 50 seeds)" && few.verdict == .notJudged)
        #expect(few.measured == String(format: "%.2f ×; the exact posterior at the same updates: %.2f ×", ratios.engine, ratios.posterior),
                "\(few.measured)")
        let many = try check(Array(repeating: run, count: 50))
        #expect(many.verdict == (ratios.engine <= 1.3 ? .met : .missed))
    }

    /// A position that no estimator could publish honestly is not judged: a tag 10 m away,
    /// ranged over a coached step's few metres, whose height the exact posterior leaves
    /// metres open in every run (`cs-far`), while a coached tag at 3 m comes near.
    @Test func aPositionTheExactPosteriorLeavesOpenIsNotJudged() throws {
        let far = ScenarioCatalogue.all.first { $0.name == "cs-far" }!.make
        let run = ScenarioRun(far(1), exactPosteriorUntil: Angle.radians(degrees: 10))
        let spread = try #require(run.posteriorFinalSpread)
        #expect(spread.height > 1.5 * max(0.6, 0.1 * spread.distance), "height σ \(spread.height) m at \(spread.distance) m")
        #expect(run.posteriorDeterminesPosition() == false)
        let runs = Array(repeating: run, count: 50)
        #expect(ScenarioTargets.positionUndeterminedByThePosterior(runs))
        #expect(!ScenarioTargets.positionUndeterminedByThePosterior(Array(runs.prefix(10))), "judged over 50 runs at least")
        let check = ScenarioTargets.checks(for: far(1), runs: runs).first { $0.target.hasPrefix("worldTransform median") }
        #expect(check?.verdict == .notJudged && check?.measured.contains("in 0 of 50") == true, "\(String(describing: check))")
        let coached = ScenarioCatalogue.all.first { $0.name == "cs-coached-step" }!.make
        let near = ScenarioRun(coached(1), exactPosteriorUntil: Angle.radians(degrees: 10))
        #expect(near.posteriorDeterminesPosition() == true, "\(String(describing: near.posteriorFinalSpread))")
    }

    /// The Channel Sounding targets held to the exact posterior: the first angle against the
    /// posterior's own count, less one, judged only over 50 seeds; the NEES band or the
    /// posterior's NEES; the worldTransform over at least 20 converged runs, counting the runs
    /// of more seeds (`moreRuns`), and not judged before enough have run.
    @Test func channelSoundingTargetsAreHeldToTheExactPosterior() {
        let make = ScenarioCatalogue.all.first { $0.name == "cs-coached-step" }!.make
        let runs = (1...2).map { ScenarioRun(make(UInt64($0)), exactPosteriorUntil: Angle.radians(degrees: 10)) }
        let few = ScenarioTargets.checks(for: make(1), runs: runs)
        let angle = few.first { $0.target.hasPrefix("first horizontalAngle within 3 s") }
        #expect(angle?.verdict == .notJudged && angle?.measured.contains("the exact posterior") == true)
        #expect(few.contains { $0.target.hasSuffix("or at most the exact posterior's") && $0.verdict == .notJudged })
        let transform = few.first { $0.target.hasPrefix("worldTransform median ≤ 0.5 m over ≥ 20 converged runs") }
        #expect(transform?.verdict == .notJudged)
        // Fifty seeds (the same two runs, 25 times each): the angle target is judged, and the
        // runs of more seeds count toward the converged ones.
        // The planar sweeps' mirror stays open: their NEES is held to the posterior's too, and
        // a radio profile's (no posterior: its noise is not the engine's model) to the band.
        let planar = ScenarioCatalogue.all.first { $0.name == "cs-planar-sweeps" }!.make
        let planarChecks = ScenarioTargets.checks(for: planar(1), runs: [ScenarioRun(planar(1), exactPosteriorUntil: Angle.radians(degrees: 10))])
        #expect(planarChecks.contains { $0.target.hasSuffix("or at most the exact posterior's") })
        let rtt = ScenarioCatalogue.all.first { $0.name == "cs-rtt-still" }!.make
        let rttChecks = ScenarioTargets.checks(for: rtt(1), runs: [ScenarioRun(rtt(1))])
        #expect(rttChecks.contains { $0.target == "mean NEES over ≥ 50 seeds inside the χ² 95 % band" })
        let fifty = Array(repeating: runs, count: 25).flatMap { $0 }
        let judged = ScenarioTargets.checks(for: make(1), runs: fifty, moreRuns: runs)
        #expect(judged.first { $0.target.hasPrefix("first horizontalAngle within 3 s") }?.verdict != .notJudged)
        let counted = judged.first { $0.target.hasPrefix("worldTransform median") }
        #expect(counted?.measured.contains("runs of 52") == true || counted?.measured.contains("in 52 runs") == true, "\(counted?.measured ?? "")")
        // cs-far is held to the same targets.
        let far = ScenarioCatalogue.all.first { $0.name == "cs-far" }!.make
        #expect(ScenarioTargets.checks(for: far(1), runs: runs).contains { $0.target.hasPrefix("worldTransform median ≤ 0.5 m over") })
    }

    /// A still friend converges as an accessory does: every still-peer target met on a few
    /// seeds; a phone held still never converges.
    @Test func theStillPeerMeetsItsTargetsAndAStillPhoneNeverConverges() {
        let (peer, peerRuns) = Self.runs("still-peer", seeds: 3)
        let checks = ScenarioTargets.checks(for: peer, runs: peerRuns)
        #expect(checks.count == 4 && checks.allSatisfy { $0.area == .movingObjects && $0.verdict == .met }, "\(checks)")
        let (phone, phoneRuns) = Self.runs("still-phone", seeds: 2)
        #expect(ScenarioTargets.checks(for: phone, runs: phoneRuns).map(\.verdict) == [.met])
        // A scenario with no target of its own gets no row.
        let (coached, coachedRuns) = Self.runs("coached-sweep", seeds: 1)
        #expect(ScenarioTargets.checks(for: coached, runs: coachedRuns).isEmpty)
    }

    /// Without camera assistance a walking friend gets no angle and no worldTransform: the
    /// angle and position targets are missed, not met by default; the NEES band is not
    /// judged on fewer than 50 runs.
    @Test func aWalkingPeerWithoutCameraAssistanceMissesItsTargets() {
        let (walker, runs) = Self.runs("walking-peer", seeds: 2, cameraAssistance: false)
        let v = Self.verdicts(ScenarioTargets.checks(for: walker, runs: runs))
        #expect(v["horizontalAngle within 3 s of the start of sweeping"] == .missed)
        #expect(v["angle error median ≤ 3°"] == .missed && v["angle error p95 ≤ 8°"] == .missed)
        #expect(v["worldTransform median ≤ 30 cm"] == .missed)
        #expect(v["mean NEES over ≥ 50 seeds inside the χ² 95 % band"] == .notJudged)
        // With it, the same two seeds meet them.
        let (_, assisted) = Self.runs("walking-peer", seeds: 2)
        let w = Self.verdicts(ScenarioTargets.checks(for: walker, runs: assisted))
        #expect(w["horizontalAngle within 3 s of the start of sweeping"] == .met && w["angle error median ≤ 3°"] == .met)
    }

    /// The start of sweeping is read from the device path: the coached motion holds still
    /// for its first second.
    @Test func sweepingStartsAfterTheLeadingStillSegments() {
        let (walker, _) = Self.runs("walking-peer", seeds: 0)
        #expect(ScenarioTargets.sweepingStart(of: walker) == 1)
        let (carried, _) = Self.runs("cs-carried", seeds: 0)
        #expect(ScenarioTargets.walks(carried))
        let (planar, _) = Self.runs("cs-planar-sweeps", seeds: 0)
        #expect(!ScenarioTargets.walks(planar))
    }
}

/// The targets of real distance-only sessions, as `evaluate --targets` judges them.
@Suite("real-session targets judged from an evaluation")
struct RealSessionTargetTests {
    static func evaluation() throws -> ObjectEvaluation {
        let path = TestSupport.packageRoot.appendingPathComponent("Datasets/distance-only.jsonl").path
        return try #require(try RecordingEvaluation.evaluate(path: path).objects.first)
    }

    /// Each verdict turns when its own figure crosses the threshold, and a bound that never
    /// allows the angle leaves the timing not judged instead of met. (The shipped simulated
    /// watch converges 24.8 s after the local bound allows 3°, with a 2.85° median: its
    /// sweeps leave the front/back mirror open until the step forward, which the bound at
    /// the truth does not see — the two it misses, below.)
    @Test func eachVerdictFollowsItsOwnFigure() throws {
        var o = try Self.evaluation()
        o.convergenceLagSeconds = 5
        o.horizontalAngleErrorDegrees = ErrorStatistics((1...100).map { Double($0) / 100 })
        func verdicts(_ e: ObjectEvaluation) -> [TargetCheck.Verdict] { RealSessionTargets.checks(for: e, subject: "tag").map(\.verdict) }
        #expect(verdicts(o) == [.met, .met, .met, .met, .met], "\(RealSessionTargets.checks(for: o, subject: "tag"))")
        var late = o; late.convergenceLagSeconds = 15.5
        #expect(verdicts(late) == [.missed, .met, .met, .met, .met])
        var never = o; never.convergenceLagSeconds = nil
        #expect(verdicts(never)[0] == .missed)
        var unbounded = o; unbounded.boundAllowsAngleAfterSeconds = nil
        #expect(verdicts(unbounded)[0] == .notJudged)
        var unsteady = o; unsteady.convergedShareAfterFirst = 0.89; unsteady.statusChangesPerMinute = 1.2
        #expect(verdicts(unsteady) == [.met, .missed, .met, .met, .missed])
        var coarse = o; coarse.horizontalAngleErrorDegrees = ErrorStatistics((0..<100).map { Double($0) / 10 })
        #expect(verdicts(coarse) == [.met, .met, .missed, .missed, .met])
    }

    @Test func evaluateTargetsPrintsTheTable() throws {
        let result = try TestSupport.run(["evaluate", "Datasets/distance-only.jsonl", "--targets"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains("| distance only | distance-only.jsonl tag | ≥ 90 % of updates converged after the first convergence | 100.0 % | met |"))
        #expect(lines.contains { $0.hasPrefix("| distance only | distance-only.jsonl tag | first convergence within 15 s of the bound allowing 3° | +22.8 s") && $0.hasSuffix("| missed |") })
        #expect(lines.last == "targets: 3 met, 2 missed", "\(result.stdout)")
        #expect(try TestSupport.run(["evaluate", "Datasets/distance-only.jsonl", "--targets", "--json"]).status == 64)
    }
}

/// `accuracy --json`: the same figures as the tables, as numbers.
@Suite("accuracy as JSON")
struct AccuracyJSONTests {
    @Test func theJSONCarriesTheTablesFiguresAndTheTargets() throws {
        let arguments = ["accuracy", "--seeds", "3", "--scenario", "still-peer", "--scenario", "tag-picked-up", "--scenario", "cs-planar-sweeps"]
        let text = try TestSupport.run(arguments), json = try TestSupport.run(arguments + ["--json"])
        #expect(text.status == 0 && json.status == 0, "\(json.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(document["seeds"] as? Int == 3)
        let scenarios = try #require(document["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["scenario"] as? String } == ["still-peer", "tag-picked-up", "cs-planar-sweeps"])
        // Every cell of the first table's rows, formatted as the table does, is the table's cell.
        let keys = ["angleErrorMedianDegrees", "angleErrorP95Degrees", "positionErrorMedianMetres", "positionErrorP95Metres",
                    "firstConvergedMedianSeconds", "firstConvergedMaxSeconds", "runsNeverConverged", "worstConvergedAngleErrorDegrees", "meanNEES",
                    "distanceErrorBeforeLocatedP95MetresRaw", "distanceErrorBeforeLocatedP95MetresPublished"]
        let digits = [2, 2, 3, 3, 1, 1, 0, 2, 2, 3, 3]
        let lines = text.stdout.split(separator: "\n").map(String.init)
        for row in scenarios {
            let name = try #require(row["scenario"] as? String)
            let line = try #require(lines.first { $0.hasPrefix("| \(name) |") })
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.dropFirst()
            let fromJSON = zip(keys, digits).map { key, d -> String in
                if let x = row[key] as? Double, !(row[key] is [String: Any]) { return String(format: "%.\(d)f", x) }
                if let f = row[key] as? [String: Int], let k = f["count"], let n = f["of"] { return "\(k)/\(n)" }
                return "—"
            }
            #expect(Array(cells) == fromJSON, "\(name)")
        }
        #expect((document["movingObjects"] as? [[String: Any]])?.map { $0["scenario"] as? String } == ["tag-picked-up"])
        let planar = try #require((document["channelSounding"] as? [[String: Any]])?.first)
        #expect(planar["runsPosteriorNeverAllows10Degrees"] as? [String: Int] == ["count": 3, "of": 3])
        #expect(planar["angleRMSEOverBound"] is NSNull && planar["posteriorAngleRMSEOverBound"] is NSNull)
        // The targets: as many as the table's rows, with the same verdicts.
        let targets = try #require(document["targets"] as? [[String: Any]])
        let tableTargets = Array(lines.drop { !$0.hasPrefix("| area |") }.dropFirst(2).prefix { $0.hasPrefix("|") })
        #expect(targets.count == tableTargets.count && !targets.isEmpty)
        #expect(zip(targets, tableTargets).allSatisfy { t, line in line.hasSuffix("| \(t["verdict"] as? String ?? "?") |") })
    }

    /// The first table scores the distance an object publishes before it is located against
    /// its raw ranges: with one range in five non-line-of-sight (seeds 1–10), the late ones set
    /// aside bring the published p95 well below the raw ranges'.
    @Test func theDistanceBeforeAWorldTransformIsScoredAgainstTheRanges() throws {
        let json = try TestSupport.run(["accuracy", "--seeds", "10", "--scenario", "nlos-20-percent", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let row = try #require((document["scenarios"] as? [[String: Any]])?.first)
        let raw = try #require(row["distanceErrorBeforeLocatedP95MetresRaw"] as? Double)
        let published = try #require(row["distanceErrorBeforeLocatedP95MetresPublished"] as? Double)
        #expect(raw > 0.5 && published < 0.85 * raw, "published \(published) m against raw \(raw) m")
    }
}
