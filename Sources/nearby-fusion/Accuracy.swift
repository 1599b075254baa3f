import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Synchronization

struct Accuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure accuracy, convergence time and consistency over seeded simulated scenarios.",
        discussion: """
        Runs each built-in scenario with seeds 1…N (or from --first-seed on) through the engine in memory and prints, per \
        scenario: horizontalAngle error (median, p95, over every published angle), worldTransform \
        position error (median, p95), time of first convergence (median, max, and how many runs \
        never converged), the worst horizontal-angle error at a `converged` update, the mean \
        NEES of the final position (3 is ideal), and the p95 error of the published distance \
        against the raw ranges' at the updates with a range before a worldTransform is published \
        (where the distance is the ranges' own, late spikes set aside, or for a Channel Sounding \
        tag its ranges smoothed). Objects that move get a second table, which \
        times the first angle and the report of `moving`, measures stale transforms, velocity \
        errors and status changes, and scores the published `motion` against the true velocity \
        (the share of updates said `moving` while the object moves and `stationary` while it \
        keeps still, the runs said `stationary` while it moved, the wait for `stationary` after \
        a stop); Bluetooth \
        Channel Sounding tags a third, which times the first angle against the Cramér–Rao bound \
        and against the exact posterior of the tag's position from its ranges (a grid, followed \
        to the end of the run, afresh after the tag moved — from where it was when the app said \
        so, as the engine) under the simulated radio's own noise, and beside it how many runs \
        the exact posterior under the engine's radio model (what the engine is told of the \
        radio, which the --cs-* options set) allows 10° within 3 s of the bound (the two: \
        0.3–1.5 s more per run), scores the \
        published distance against the raw ranges (throughout, and while the tag itself moves) \
        with its lag, and sets the engine's mean NEES beside the posterior's own. The radio \
        profiles of real radios (`cs-ifft-*`, `cs-phase-*`, `cs-rtt-*`, `peer-uwb-*`) get a \
        fourth table instead: the published distance against the raw ranges at the updates \
        that have a range (median, p95, p99 and their ratios), its p95 at the failed \
        procedures beside the last range's, held, the error the radio's scale and offset \
        alone leave (what no estimator reaches without knowing them, while device and tag \
        keep still), the p95 of the ranges without the radio's outliers (its multipath or \
        non-line-of-sight excess and short reads taken out: its noise, bias and scale alone, \
        which a published distance beats only by averaging that noise over time), and its lag; \
        a still profile, whose seeds set the tag at several distances, has those figures again \
        distance by distance beneath it (the pooled p95 is the furthest distances', where a \
        scale error grows). A fifth table \
        closes the loop: simulated users steer the device by what the engine publishes — the \
        convergence reasons alone, each answered with a sweep, or the guidance's steps (a \
        walking pace, a reaction time, steps off by a random share and now and then the wrong \
        way), toward the angle or, for an app that asks for it, toward worldTransform — for a \
        UWB tag in front and behind, a distance-only watch, a Channel Sounding tag \
        near and far and a still peer (`loop-*`, 40 s at most), and times the first angle and \
        worldTransform, the device's path to the angle and the first angle's error, the \
        policies side by side. Under the \
        tables, every target for moving objects, Channel Sounding tags, radio profiles and the guidance that \
        the scenarios run can judge, with what was measured and a verdict: met, missed, or not \
        judged (the mean-NEES band and the rate of converged angles far off need 50 seeds); \
        beside a walking peer's published distance, an efficient estimator told when the peer \
        changes its velocity (the Cramér–Rao bound of its distance under the radio's own \
        lasting errors, at the truth). A \
        Channel Sounding tag's worldTransform is judged over at least 20 converged runs: with 50 \
        seeds or more, where fewer converge, more seeds are run for that target alone (at most 500 \
        in all; fewer than 20 converged runs in 500 is missed), unless the exact posterior comes \
        near determining the position in none of the seeds asked for (at least 50): then an \
        engine that never publishes it leaves the target unjudged and no more seeds run.
        """)

    @Option(help: "Seeds per scenario.")
    var seeds: Int = 20

    @Option(help: ArgumentHelp("The first seed: seeds FIRST…FIRST+N−1 run. Tables of one engine over disjoint sets of seeds (1, 51, 101 with --seeds 50) show how far a row moves by the draw alone, and what a change moves beyond it.", valueName: "FIRST"))
    var firstSeed: Int = 1

    @Option(help: "Scenarios to run (default: all).", completion: .list(ScenarioCatalogue.all.map(\.name)))
    var scenario: [String] = []

    @OptionGroup var engine: EngineOptions

    @Option(help: ArgumentHelp("The simulator's VIO drift, as a fraction of the path travelled (default: each scenario's, 0.005), for every scenario run.", valueName: "FRACTION"))
    var vioDrift: Double?

    @Flag(help: "Print one JSON document instead of the tables: each table's rows with their figures as numbers (null where the table shows —, {count, of} for k/n), and the targets.")
    var json = false

    /// What `--json` prints: the three tables' rows and the targets.
    struct Document: Encodable {
        var seeds: Int
        var firstSeed: Int
        var scenarios: [TableRow]
        var movingObjects: [TableRow]
        var channelSounding: [TableRow]
        var radioProfiles: [TableRow]
        var radioProfilesByDistance: [TableRow]
        var closedLoop: [TableRow]
        var targets: [TargetCheck]
    }

    func validate() throws {
        guard seeds >= 1 else { throw ValidationError("--seeds must be at least 1") }
        guard firstSeed >= 1 else { throw ValidationError("--first-seed must be at least 1") }
        // The last seed that may run: the tables' and the extra worldTransform seeds'.
        guard !firstSeed.addingReportingOverflow(max(seeds, ScenarioTargets.maximumSeedsForConvergedRuns)).overflow else {
            throw ValidationError("--first-seed \(firstSeed) with --seeds \(seeds) runs past the largest seed, \(Int.max)")
        }
        if let vioDrift { guard vioDrift.isFinite, vioDrift >= 0 else { throw ValidationError("--vio-drift must be a fraction of the path, 0 or more") } }
        for name in scenario where !ScenarioCatalogue.all.contains(where: { $0.name == name })
            && !ClosedLoop.scenarios.contains(where: { $0.name == name }) {
            throw ValidationError("unknown scenario '\(name)'")
        }
    }

    func run() throws {
        let selected = ScenarioCatalogue.all.filter { scenario.isEmpty || scenario.contains($0.name) }
        let options = engine.fusionOptions
        // Each scenario is simulated once per seed; its runs give its row in every table.
        var rows: [TableRow] = [], motionRows: [TableRow] = [], channelSoundingRows: [TableRow] = [], profileRows: [TableRow] = []
        var profileByDistanceRows: [TableRow] = []
        var targets: [TargetCheck] = []
        let progress = Mutex((bar: ProgressBar(total: selected.count * seeds, minimumTotal: 2, items: "runs"), done: 0))
        for (name, make) in selected {
            let object = make(1).objects.first
            let profile = ScenarioTargets.radioProfiles.contains(name)
            // A Channel Sounding object's exact posterior: its time to 10° and its final NEES
            // (under the engine's own range model, which a radio profile's is not: none there).
            let posterior = object?.ranging == .bluetoothChannelSounding && !profile ? Angle.radians(degrees: 10) : nil
            let first = firstSeed - 1
            let runs = Self.runs(make, seeds: first..<(first + seeds), options: options, vioDrift: vioDrift,
                                 exactPosteriorUntil: posterior, exactDistance: profile) {
                progress.withLock { $0.done += 1; $0.bar.update($0.done) }
            }
            rows.append(Self.accuracyRow(name, runs))
            if object?.moves == true { motionRows.append(Self.motionRow(name, runs)) }
            if profile {
                profileRows.append(Self.radioProfileRow(name, runs))
                profileByDistanceRows += Self.radioProfileRowsByDistance(name, runs)
            } else if object?.ranging == .bluetoothChannelSounding {
                channelSoundingRows.append(Self.channelSoundingRow(name, runs))
            }
            targets += ScenarioTargets.checks(for: make(1), runs: runs, moreRuns: Self.moreConvergedRuns(name, make, runs: runs, firstSeed: firstSeed,
                                                                                                     options: options, vioDrift: vioDrift))
        }
        progress.withLock { $0.bar.finish() }
        // Simulated users who follow the reasons alone or the guidance, side by side.
        var loopRows: [TableRow] = []
        for loop in ClosedLoop.scenarios where scenario.isEmpty || scenario.contains(loop.name) {
            var byPolicy: [SimulatedUser.Policy: [ClosedLoopResult]] = [:]
            for policy in SimulatedUser.Policy.allCases {
                let list = Self.inParallel(seeds) { k in
                    ClosedLoop.run(loop.make(UInt64(firstSeed + k)), user: SimulatedUser(policy: policy), seconds: ClosedLoop.runSeconds, options: options)
                }
                byPolicy[policy] = list
                loopRows.append(Self.closedLoopRow(loop.name, policy: policy, list))
            }
            targets += ClosedLoop.checks(scenario: loop.name, reasons: byPolicy[.reasons] ?? [], guidance: byPolicy[.guidance] ?? [])
        }
        if json {
            print(try Evaluate.encode(Document(seeds: seeds, firstSeed: firstSeed, scenarios: rows, movingObjects: motionRows,
                                               channelSounding: channelSoundingRows, radioProfiles: profileRows,
                                               radioProfilesByDistance: profileByDistanceRows, closedLoop: loopRows,
                                               targets: targets)))
            return
        }
        if !rows.isEmpty {
            print("| scenario | angle err median ° | angle err p95 ° | position err median m | position err p95 m | first converged median s | max s | never | worst angle err when converged ° | mean NEES | distance err before a worldTransform, p95 m: raw | published |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            rows.forEach { print($0.markdown) }
        }
        if !motionRows.isEmpty {
            print("")
            print("| moving object | first horizontalAngle median s | max s | 'moving' reported after start of motion median s | max s | never | worldTransform > 50 cm off for, longest median s | max s | velocity err median m/s | converged ↔ not after first, changes/min median | max | `motion` right while it moves | while still | 'stationary' while it moves, runs | 'stationary' after a stop median s | max s | stops missed |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            motionRows.forEach { print($0.markdown) }
        }
        if !channelSoundingRows.isEmpty {
            print("")
            print("| Channel Sounding | bound allows 10° at, median s | first horizontalAngle median s | angle later than the bound, median s | max s | never an angle | angle RMSE / bound | the exact posterior's, same updates before the tag moves | converged > 20° off | worldTransform err median m | distance err median m: raw | published | while the tag moves: raw | published | published distance lag median s | max s | posterior allows 10° at, median s | max s | angle later than the posterior, median s | max s | runs: posterior never allows 10° | runs: posterior within 3 s of the bound | runs: posterior of the engine's radio model within 3 s of the bound | runs: angle within 3 s of the bound | of the posterior | mean NEES: engine | exact posterior |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            channelSoundingRows.forEach { print($0.markdown) }
        }
        if !profileRows.isEmpty {
            print("")
            print("| radio profile | ranges failed | distance err at updates with a range, median m: raw | published | published / raw | p95 m: raw | published | published / raw | p99 m: raw | published | at failed procedures, p95 m: last range held | published | the radio's scale and offset alone, m: median | p95 | the ranges without the radio's outliers, p95 m | published distance lag median s | max s | exact posterior, a still tag: distance err median m | p95 m | lag median s |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            profileRows.forEach { print($0.markdown) }
        }
        if !profileByDistanceRows.isEmpty {
            print("")
            print("| still radio profile | distance m | runs | updates with a range | distance err median m: raw | published | published / raw | p95 m: raw | published | published / raw |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            profileByDistanceRows.forEach { print($0.markdown) }
        }
        if !loopRows.isEmpty {
            print("")
            print("| closed loop | user follows | first horizontalAngle median s | p90 s | never | first worldTransform median s | never | device path to the angle, median m | angle err at the first, median ° |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            loopRows.forEach { print($0.markdown) }
        }
        if !targets.isEmpty {
            print("")
            // Not judged: too few seeds, or (with enough) what the exact posterior leaves open.
            let openReason = "what the exact posterior leaves open: see each row"
            print(TargetCheck.table(targets, subjectHeader: "scenario",
                                    notJudgedReason: seeds >= ScenarioTargets.minimumSeeds ? openReason
                                        : "they need --seeds \(ScenarioTargets.minimumSeeds) or more, or " + openReason))
        }
    }

    /// The runs of seeds `seeds.lowerBound + 1 … seeds.upperBound`, in parallel (each run is
    /// independent and seeded: the same tables whatever the number of cores), collected in seed
    /// order; `finished` is called as each one ends.
    static func runs(_ make: @Sendable (UInt64) -> SimulationScenario, seeds: Range<Int>, options: FusionOptions, vioDrift: Double?,
                     exactPosteriorUntil posterior: Double?, exactDistance: Bool = false,
                     finished: @Sendable () -> Void = {}) -> [ScenarioRun] {
        inParallel(seeds.count) { k in
            var scenario = make(UInt64(seeds.lowerBound + k + 1))
            if let vioDrift { scenario.vio.driftFraction = vioDrift }
            let run = ScenarioRun(scenario, options: options, exactPosteriorUntil: posterior, exactDistance: exactDistance)
            finished()
            return run
        }
    }

    /// `body(0) … body(count − 1)` on every core, collected in index order.
    static func inParallel<T: Sendable>(_ count: Int, _ body: @Sendable (Int) -> T) -> [T] {
        let results = Mutex([T?](repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: count) { k in
            let value = body(k)
            results.withLock { $0[k] = value }
        }
        return results.withLock { $0 }.map { $0! }
    }

    /// For a Channel Sounding scenario whose `worldTransform` is judged over
    /// ``ScenarioTargets/minimumConvergedRuns`` converged runs, when the seeds run (at least
    /// 50) left fewer converged: runs of the next seeds, 50 at a time, until enough converge or
    /// ``ScenarioTargets/maximumSeedsForConvergedRuns`` seeds in all have run (none otherwise, nor
    /// where the exact posterior determines the position in none of the runs). The tables keep the
    /// seeds asked for; only that target reads these. `runs` are those of seeds `firstSeed…`.
    static func moreConvergedRuns(_ name: String, _ make: @Sendable (UInt64) -> SimulationScenario, runs: [ScenarioRun], firstSeed: Int,
                                  options: FusionOptions, vioDrift: Double?) -> [ScenarioRun] {
        guard ScenarioTargets.channelSoundingHeldToThePosterior.contains(name), runs.count >= ScenarioTargets.minimumSeeds,
              !ScenarioTargets.positionUndeterminedByThePosterior(runs) else { return [] }
        var more: [ScenarioRun] = []
        var converged = runs.filter { $0.firstConvergedTime != nil }.count
        var next = runs.count
        let cap = ScenarioTargets.maximumSeedsForConvergedRuns, first = firstSeed - 1
        while converged < ScenarioTargets.minimumConvergedRuns && next < cap {
            let batch = min(50, cap - next)
            let added = Self.runs(make, seeds: (first + next)..<(first + next + batch), options: options, vioDrift: vioDrift,
                                  exactPosteriorUntil: nil)
            more += added
            converged += added.filter { $0.firstConvergedTime != nil }.count
            next += batch
        }
        return more
    }

    /// The closed-loop table's row: one scenario, one policy (the policy is the first cell).
    static func closedLoopRow(_ name: String, policy: SimulatedUser.Policy, _ results: [ClosedLoopResult]) -> TableRow {
        let angles = results.compactMap(\.firstAngleSeconds), transforms = results.compactMap(\.firstWorldTransformSeconds)
        let errors = results.compactMap(\.firstAngleError).map { Angle.degrees(radians: $0) }
        let all = results.map { $0.firstAngleSeconds ?? ClosedLoop.runSeconds }
        return TableRow(name: name, cells: [
            ("policy", .text(policy.rawValue)),
            ("firstAngleMedianSeconds", .figure(ClosedLoop.medianFirstAngle(results), digits: 1)),
            ("firstAngleP90Seconds", .figure(Statistics.quantile(all, 0.9), digits: 1)),
            ("neverAnAngle", .fraction(results.count - angles.count, of: results.count)),
            ("firstWorldTransformMedianSeconds", .figure(ClosedLoop.medianFirstWorldTransform(results), digits: 1)),
            ("neverAWorldTransform", .fraction(results.count - transforms.count, of: results.count)),
            ("metresWalkedMedian", .figure(ClosedLoop.medianMetres(results), digits: 1)),
            ("firstAngleErrorMedianDegrees", .figure(Statistics.quantile(errors, 0.5), digits: 1)),
        ])
    }

    /// The first table's row: every scenario.
    static func accuracyRow(_ name: String, _ runs: [ScenarioRun]) -> TableRow {
        var angleErrors: [Double] = [], positionErrors: [Double] = [], converged: [Double] = [], nees: [Double] = []
        var rawBeforeLocated: [Double] = [], publishedBeforeLocated: [Double] = []
        var never = 0
        var worst = 0.0
        for run in runs {
            angleErrors += run.horizontalAngleErrors
            positionErrors += run.positionErrors
            if let t = run.firstConvergedTime { converged.append(t) } else { never += 1 }
            worst = max(worst, run.worstConvergedAngleError)
            if let n = run.finalNEES { nees.append(n) }
            for pair in run.pairedDistanceErrorsBeforeLocated {
                rawBeforeLocated.append(pair.raw)
                publishedBeforeLocated.append(pair.published)
            }
        }
        func degrees(_ x: Double?) -> Cell { .figure(x.map { Angle.degrees(radians: $0) }, digits: 2) }
        return TableRow(name: name, cells: [
            ("angleErrorMedianDegrees", degrees(Statistics.quantile(angleErrors, 0.5))),
            ("angleErrorP95Degrees", degrees(Statistics.quantile(angleErrors, 0.95))),
            ("positionErrorMedianMetres", .figure(Statistics.quantile(positionErrors, 0.5), digits: 3)),
            ("positionErrorP95Metres", .figure(Statistics.quantile(positionErrors, 0.95), digits: 3)),
            ("firstConvergedMedianSeconds", .figure(Statistics.quantile(converged, 0.5), digits: 1)),
            ("firstConvergedMaxSeconds", .figure(converged.max(), digits: 1)),
            ("runsNeverConverged", .fraction(never, of: runs.count)),
            ("worstConvergedAngleErrorDegrees", degrees(converged.isEmpty ? nil : worst)),
            ("meanNEES", .figure(Statistics.mean(nees), digits: 2)),
            ("distanceErrorBeforeLocatedP95MetresRaw", .figure(Statistics.quantile(rawBeforeLocated, 0.95), digits: 3)),
            ("distanceErrorBeforeLocatedP95MetresPublished", .figure(Statistics.quantile(publishedBeforeLocated, 0.95), digits: 3)),
        ])
    }

    /// The third table's row: a Bluetooth Channel Sounding accessory (distance only).
    static func channelSoundingRow(_ name: String, _ runs: [ScenarioRun]) -> TableRow {
        func format(_ x: Double?, _ digits: Int = 1) -> Cell { .figure(x, digits: digits) }
        var boundTimes: [Double] = [], firstAngles: [Double] = [], delays: [Double] = []
        var never = 0
        var positions: [Double] = [], rawDistance: [Double] = [], publishedDistance: [Double] = [], lags: [Double] = []
        // The same while the tag itself moves (carried: as fast as `evaluate`'s moving truth).
        var rawWhileMoving: [Double] = [], publishedWhileMoving: [Double] = []
        var posteriorTimes: [Double] = [], posteriorDelays: [Double] = [], posteriorNever = 0
        // Runs whose first angle comes within 3 s of the bound's (and of the posterior's) 10°,
        // out of the runs where that yardstick allows 10° at all; and the runs where the exact
        // posterior itself allows 10° within 3 s of the bound — the most any estimator can
        // score on the first (the bound is local: it does not see a banana or a mirror).
        var onTimeForBound = 0, boundAllowed = 0, onTimeForPosterior = 0, posteriorOnTimeForBound = 0
        // The same for the exact posterior under the engine's own radio model: what an ideal
        // estimator told only what the engine is told about the radio could score.
        var enginesModelPosteriorOnTimeForBound = 0
        // The final NEES of the engine and of the exact posterior's Gaussian summary (a still
        // tag only): a mirror or a banana makes even the ideal posterior's NEES exceed 3 at a
        // fixed truth, so the engine's is judged against it as well as against the χ² band.
        var engineNEES: [Double] = [], posteriorNEES: [Double] = []
        for run in runs {
            if let n = run.finalNEES { engineNEES.append(n) }
            if let n = run.posteriorFinalNEES { posteriorNEES.append(n) }
            if let lag = run.distanceLag() { lags.append(lag) }
            if let allowed = run.posteriorAllows(degrees: 10) {
                posteriorTimes.append(allowed)
                // A run with no angle at all counts as late by the rest of the run.
                let first = run.firstAngleTime ?? run.updates.last?.estimate.timestamp ?? allowed
                posteriorDelays.append(max(first - allowed, 0))
                if let angle = run.firstAngleTime, angle - allowed <= 3 { onTimeForPosterior += 1 }
            } else { posteriorNever += 1 }
            if let onTime = run.onTimeForBound(degrees: 10, within: 3) {
                boundAllowed += 1
                if onTime.angle { onTimeForBound += 1 }
                if onTime.posterior { posteriorOnTimeForBound += 1 }
                if onTime.enginesModelPosterior { enginesModelPosteriorOnTimeForBound += 1 }
            }
            let bound = run.boundAllows(degrees: 10)
            if let bound { boundTimes.append(bound) }
            if let first = run.firstAngleTime {
                firstAngles.append(first)
                if let bound { delays.append(max(first - bound, 0)) }
            } else { never += 1 }
            let distances = run.distanceErrors
            publishedDistance += distances.published.map(\.error)
            publishedWhileMoving += distances.published.filter(\.moving).map(\.error)
            rawDistance += distances.raw.map(\.error)
            rawWhileMoving += distances.raw.filter(\.moving).map(\.error)
            positions += run.positionErrors
        }
        let ratio = ScenarioRun.angleRMSEOverBound(runs)
        let (convergedFar, converged) = ScenarioRun.convergedAngles(runs, beyond: Angle.radians(degrees: 20))
        return TableRow(name: name, cells: [
            ("boundAllows10DegreesMedianSeconds", format(Statistics.quantile(boundTimes, 0.5))),
            ("firstAngleMedianSeconds", format(Statistics.quantile(firstAngles, 0.5))),
            ("angleLaterThanBoundMedianSeconds", format(Statistics.quantile(delays, 0.5))),
            ("angleLaterThanBoundMaxSeconds", format(delays.max())),
            ("runsWithoutAngle", .fraction(never, of: runs.count)),
            ("angleRMSEOverBound", format(ratio, 2)),
            ("posteriorAngleRMSEOverBound", format(ScenarioRun.posteriorAngleRMSEOverBound(runs)?.posterior, 2)),
            ("convergedBeyond20Degrees", .fraction(convergedFar, of: converged)),
            ("worldTransformErrorMedianMetres", format(Statistics.quantile(positions, 0.5), 3)),
            ("rawDistanceErrorMedianMetres", format(Statistics.quantile(rawDistance, 0.5), 3)),
            ("publishedDistanceErrorMedianMetres", format(Statistics.quantile(publishedDistance, 0.5), 3)),
            ("rawDistanceErrorWhileMovingMedianMetres", format(Statistics.quantile(rawWhileMoving, 0.5), 3)),
            ("publishedDistanceErrorWhileMovingMedianMetres", format(Statistics.quantile(publishedWhileMoving, 0.5), 3)),
            ("publishedDistanceLagMedianSeconds", format(Statistics.quantile(lags, 0.5), 2)),
            ("publishedDistanceLagMaxSeconds", format(lags.max(), 2)),
            ("posteriorAllows10DegreesMedianSeconds", format(Statistics.quantile(posteriorTimes, 0.5))),
            ("posteriorAllows10DegreesMaxSeconds", format(posteriorTimes.max())),
            ("angleLaterThanPosteriorMedianSeconds", format(Statistics.quantile(posteriorDelays, 0.5))),
            ("angleLaterThanPosteriorMaxSeconds", format(posteriorDelays.max())),
            ("runsPosteriorNeverAllows10Degrees", .fraction(posteriorNever, of: runs.count)),
            ("runsPosteriorWithin3SecondsOfBound", .fraction(posteriorOnTimeForBound, of: boundAllowed)),
            ("runsEnginesModelPosteriorWithin3SecondsOfBound", .fraction(enginesModelPosteriorOnTimeForBound, of: boundAllowed)),
            ("runsAngleWithin3SecondsOfBound", .fraction(onTimeForBound, of: boundAllowed)),
            ("runsAngleWithin3SecondsOfPosterior", .fraction(onTimeForPosterior, of: runs.count - posteriorNever)),
            ("meanNEES", format(Statistics.mean(engineNEES), 2)),
            ("posteriorMeanNEES", format(Statistics.mean(posteriorNEES), 2)),
        ])
    }

    /// The fourth table's row: a radio profile measured on real radios — the published
    /// distance against the raw ranges, at every update that has both.
    static func radioProfileRow(_ name: String, _ runs: [ScenarioRun]) -> TableRow {
        func metres(_ x: Double?) -> Cell { .figure(x, digits: 3) }
        var raw: [Double] = [], published: [Double] = [], lags: [Double] = []
        var heldInGaps: [Double] = [], publishedInGaps: [Double] = [], bias: [Double] = [], withoutOutliers: [Double] = []
        var posterior: [Double] = [], posteriorLags: [Double] = []
        var failed = 0, ranged = 0
        for run in runs {
            let paired = run.pairedDistanceErrors
            raw += paired.map(\.raw)
            published += paired.map(\.published)
            bias += paired.map(\.radioBias)
            withoutOutliers += paired.map(\.withoutOutliers)
            let gaps = run.gapDistanceErrors
            heldInGaps += gaps.map(\.heldRaw)
            publishedInGaps += gaps.map(\.published)
            for update in run.updates { ranged += 1; if update.rawDistance == nil { failed += 1 } }
            if let lag = run.distanceLag() { lags.append(lag) }
            posterior += run.posteriorDistanceErrors
            if let lag = run.posteriorDistanceLag() { posteriorLags.append(lag) }
        }
        return TableRow(name: name, cells: [("rangesFailed", .fraction(failed, of: ranged))] + medianAndP95Cells(raw: raw, published: published) + [
            ("rawDistanceErrorP99Metres", metres(Statistics.quantile(raw, 0.99))),
            ("publishedDistanceErrorP99Metres", metres(Statistics.quantile(published, 0.99))),
            ("heldRangeErrorInFailuresP95Metres", metres(Statistics.quantile(heldInGaps, 0.95))),
            ("publishedDistanceErrorInFailuresP95Metres", metres(Statistics.quantile(publishedInGaps, 0.95))),
            ("radioBiasErrorMedianMetres", metres(Statistics.quantile(bias, 0.5))),
            ("radioBiasErrorP95Metres", metres(Statistics.quantile(bias, 0.95))),
            ("rangeErrorWithoutOutliersP95Metres", metres(Statistics.quantile(withoutOutliers, 0.95))),
            ("publishedDistanceLagMedianSeconds", .figure(Statistics.quantile(lags, 0.5), digits: 2)),
            ("publishedDistanceLagMaxSeconds", .figure(lags.max(), digits: 2)),
            ("posteriorDistanceErrorMedianMetres", metres(Statistics.quantile(posterior, 0.5))),
            ("posteriorDistanceErrorP95Metres", metres(Statistics.quantile(posterior, 0.95))),
            ("posteriorDistanceLagMedianSeconds", .figure(Statistics.quantile(posteriorLags, 0.5), digits: 2)),
        ])
    }

    /// The fourth table's rows again, distance by distance, for a radio profile whose device and
    /// tag keep their distance through each run (within 0.5 m) while its seeds set it apart: a
    /// row per distance (the true one at a run's first update, to the nearest half metre), with
    /// the published distance against the raw ranges at the updates with a range. The pooled
    /// row mixes errors that grow with the distance (a scale error), so its p95 is the furthest
    /// distances'; these rows show each. None when the runs do not keep still or share one distance.
    static func radioProfileRowsByDistance(_ name: String, _ runs: [ScenarioRun]) -> [TableRow] {
        var groups: [Double: [ScenarioRun]] = [:]
        for run in runs {
            let distances = run.updates.map(\.trueDistanceVector.length)
            guard let near = distances.min(), let far = distances.max() else { continue }
            guard far - near < 0.5 else { return [] }
            groups[(distances[0] * 2).rounded() / 2, default: []].append(run)
        }
        guard groups.count >= 2 else { return [] }
        return groups.keys.sorted().map { distance in
            let group = groups[distance] ?? []
            let paired = group.flatMap(\.pairedDistanceErrors)
            let raw = paired.map(\.raw), published = paired.map(\.published)
            return TableRow(name: name, cells: [
                ("distanceMetres", .figure(distance, digits: 1)),
                ("runs", .integer(group.count)),
                ("updatesWithRange", .integer(paired.count)),
            ] + medianAndP95Cells(raw: raw, published: published))
        }
    }

    /// The raw ranges' and the published distance's median and p95 errors (metres) and the
    /// published over the raw, from the errors at the same updates.
    static func medianAndP95Cells(raw: [Double], published: [Double]) -> [(key: String, cell: Cell)] {
        func metres(_ x: Double?) -> Cell { .figure(x, digits: 3) }
        let rm = Statistics.quantile(raw, 0.5), pm = Statistics.quantile(published, 0.5)
        let r95 = Statistics.quantile(raw, 0.95), p95 = Statistics.quantile(published, 0.95)
        return [
            ("rawDistanceErrorMedianMetres", metres(rm)),
            ("publishedDistanceErrorMedianMetres", metres(pm)),
            ("publishedOverRawMedian", ratioCell(pm, rm)),
            ("rawDistanceErrorP95Metres", metres(r95)),
            ("publishedDistanceErrorP95Metres", metres(p95)),
            ("publishedOverRawP95", ratioCell(p95, r95)),
        ]
    }

    /// `a/b` to two decimals; none without both, or for `b ≤ 0`.
    static func ratioCell(_ a: Double?, _ b: Double?) -> Cell {
        guard let a, let b, b > 0 else { return .figure(nil, digits: 2) }
        return .figure(a / b, digits: 2)
    }

    /// The second table's row: a scenario whose object moves (peers that walk, a tag picked up).
    static func motionRow(_ name: String, _ runs: [ScenarioRun]) -> TableRow {
        func seconds(_ x: Double?) -> Cell { .figure(x, digits: 1) }
        func share(_ x: Double?) -> Cell { .figure(x, digits: 2) }
        var firstAngle: [Double] = [], reported: [Double] = [], stale: [Double] = [], velocityErrors: [Double] = []
        var changes: [Double] = []
        var started = 0
        var motionScore = MotionReportScore(), runsSaidStationaryWhileMoving = 0
        for run in runs {
            let score = run.motionReportScore
            motionScore.merge(score)
            if score.stationaryWhileMoving > 0 { runsSaidStationaryWhileMoving += 1 }
            if let t = run.firstAngleTime { firstAngle.append(t) }
            if run.motionStart != nil {
                started += 1
                if let t = run.movingReportedAfter { reported.append(t) }
            }
            stale.append(run.longestStaleTransform(beyond: 0.5))
            if let c = run.convergenceChangesPerMinute { changes.append(c) }
            velocityErrors += run.updates.compactMap { u in u.estimate.velocity.map { ($0 - u.trueVelocity).length } }
        }
        return TableRow(name: name, cells: [
            ("firstAngleMedianSeconds", seconds(Statistics.quantile(firstAngle, 0.5))),
            ("firstAngleMaxSeconds", seconds(firstAngle.max())),
            ("movingReportedAfterStartMedianSeconds", seconds(Statistics.quantile(reported, 0.5))),
            ("movingReportedAfterStartMaxSeconds", seconds(reported.max())),
            ("runsNeverReportedMoving", started == 0 ? .none : .fraction(started - reported.count, of: started)),
            ("staleWorldTransformLongestMedianSeconds", seconds(Statistics.quantile(stale, 0.5))),
            ("staleWorldTransformLongestMaxSeconds", seconds(stale.max())),
            ("velocityErrorMedianMetresPerSecond", .figure(Statistics.quantile(velocityErrors, 0.5), digits: 2)),
            ("convergenceChangesPerMinuteMedian", seconds(Statistics.quantile(changes, 0.5))),
            ("convergenceChangesPerMinuteMax", seconds(changes.max())),
            ("motionMovingShare", share(motionScore.movingShare)),
            ("motionStationaryShare", share(motionScore.stationaryShare)),
            ("runsSaidStationaryWhileMoving", motionScore.movingUpdates == 0 ? .none : .fraction(runsSaidStationaryWhileMoving, of: runs.count)),
            ("stationaryAfterStopMedianSeconds", seconds(Statistics.quantile(motionScore.stationaryLags, 0.5))),
            ("stationaryAfterStopMaxSeconds", seconds(motionScore.stationaryLags.max())),
            ("stopsMissed", motionScore.stops == 0 ? .none : .fraction(motionScore.missedStops, of: motionScore.stops)),
        ])
    }
}

/// One cell of an accuracy table: a figure (`—` when there is none; `null` in JSON), or a
/// count out of a total (`k/n`; `{"count": k, "of": n}`), or nothing that applies.
enum Cell: Encodable {
    case figure(Double?, digits: Int)
    case fraction(Int, of: Int)
    case integer(Int)
    case text(String)
    case none

    var markdown: String {
        switch self {
        case .figure(let x?, let digits): return String(format: "%.\(digits)f", x)
        case .figure(nil, _), .none: return "—"
        case .fraction(let k, let n): return "\(k)/\(n)"
        case .integer(let n): return "\(n)"
        case .text(let text): return text
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .figure(let x?, _): try container.encode(x)
        case .figure(nil, _), .none: try container.encodeNil()
        case .fraction(let k, let n): try container.encode(["count": k, "of": n])
        case .integer(let n): try container.encode(n)
        case .text(let text): try container.encode(text)
        }
    }
}

/// A row of an accuracy table: the scenario and its named cells, in column order.
struct TableRow: Encodable {
    var name: String
    var cells: [(key: String, cell: Cell)]

    var markdown: String { "| \(name) | " + cells.map(\.cell.markdown).joined(separator: " | ") + " |" }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: Key(stringValue: "scenario"))
        for (key, cell) in cells { try container.encode(cell, forKey: Key(stringValue: key)) }
    }
}
