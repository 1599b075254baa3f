import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation

/// The targets a simulated scenario can judge — for moving objects and for Bluetooth Channel
/// Sounding tags — and the χ² band they read. (Speed targets are measured by `Benchmarks/`; the real drone sessions' targets
/// by `evaluate FOLDER --targets`, ``RealSessionTargets``.)
public enum ScenarioTargets {
    /// The fewest runs over which a target judges a mean NEES or a rate of converged
    /// updates far off ("over ≥ 50 seeds").
    public static let minimumSeeds = 50

    /// Scenarios in which the engine must never converge (a still phone, a dark room, camera
    /// assistance off).
    static let neverConverging: Set<String> = ["still-phone", "dark-room", "camera-assistance-off"]
    /// Walking peers with a direction (the walking-peer targets).
    static let walkingPeers: Set<String> = ["walking-peer", "peer-stop-and-go"]
    /// Distance-only walking peers ("never wrong").
    static let distanceOnlyPeers: Set<String> = ["distance-only-walking-peer", "distance-only-turning-peer"]
    /// Tags picked up after convergence.
    static let pickedUpTags: Set<String> = ["tag-picked-up", "tag-picked-up-hinted", "tag-carried-away"]
    /// Channel Sounding tags at 2–8 m under coached sweeps plus a step.
    static let coachedChannelSounding: Set<String> = ["cs-coached-step", "cs-placed"]
    /// The Channel Sounding scenarios whose first angle and `worldTransform` are held to the
    /// exact posterior: coached, placed anew by each seed, and far. (The mean NEES of every
    /// Channel Sounding scenario whose posterior is followed is held to it.)
    public static let channelSoundingHeldToThePosterior: Set<String> = ["cs-coached-step", "cs-placed", "cs-far"]
    /// How many converged runs the Channel Sounding `worldTransform` median is judged over
    /// (`accuracy` runs more seeds for a scenario where fewer converge).
    public static let minimumConvergedRuns = 20
    /// The most seeds `accuracy` runs to find them; fewer converged runs in as many is missed.
    public static let maximumSeedsForConvergedRuns = 500
    /// The scenarios of the radio profiles measured on real radios (ScenarioCatalogue.radioProfileScenarios).
    public static let radioProfiles: Set<String> = Set(ScenarioCatalogue.radioProfileScenarios.map(\.name))
    /// The share of the raw ranges' p95 error that the published distance's p95 may reach
    /// under a radio profile: "well below" the ranges', not merely equal.
    public static let radioProfileP95Share = 0.8

    /// The checks `scenario` (its seed-1 instance; the name, the device path and whether its
    /// object moves are what is read) can judge from `runs`; empty when it has no
    /// target.
    ///
    /// `moreRuns`: runs of more seeds, beyond `runs`, for the Channel Sounding `worldTransform`
    /// target (``minimumConvergedRuns``); without them it is judged from `runs` alone.
    public static func checks(for scenario: SimulationScenario, runs: [ScenarioRun],
                              moreRuns: [ScenarioRun] = []) -> [TargetCheck] {
        let name = scenario.name
        var checks: [TargetCheck] = []
        func check(_ area: TargetCheck.Area, _ target: String, _ measured: String, _ met: Bool?) {
            checks.append(TargetCheck(area: area, subject: name, target: target, measured: measured,
                                      verdict: met.map { $0 ? .met : .missed } ?? .notJudged))
        }
        let object = scenario.objects.first
        let sweepStart = sweepingStart(of: scenario)
        let angles = runs.flatMap(\.horizontalAngleErrors), positions = runs.flatMap(\.positionErrors)
        let judged = runs.count >= minimumSeeds

        if neverConverging.contains(name) {
            let converged = runs.filter { $0.firstConvergedTime != nil }.count
            check(.movingObjects, "never converges", "converged in \(converged)/\(runs.count) runs", converged == 0)
        }
        if name == "still-peer" {
            let late = runs.map { ($0.firstConvergedTime ?? .infinity) - sweepStart }
            check(.movingObjects, "first converged within 3 s of the start of sweeping", "latest \(seconds(late.max()))", (late.max() ?? .infinity) <= 3)
            angleChecks(median: 2, p95: 6, angles, check)
            positionCheck(median: 0.10, positions, check)
        }
        if walkingPeers.contains(name) {
            let late = runs.map { ($0.firstAngleTime ?? .infinity) - sweepStart }
            check(.movingObjects, "horizontalAngle within 3 s of the start of sweeping", "latest \(seconds(late.max()))", (late.max() ?? .infinity) <= 3)
            angleChecks(median: 3, p95: 8, angles, check)
            positionCheck(median: 0.30, positions, check)
        }
        if walkingPeers.contains(name) || distanceOnlyPeers.contains(name) {
            let worst = runs.map(\.worstConvergedAngleError).max() ?? 0
            let convergedRuns = runs.filter { $0.firstConvergedTime != nil }.count
            check(.movingObjects, "never converged more than 15° off",
                  convergedRuns == 0 ? "never converged" : "worst converged \(degrees(worst)) (\(convergedRuns)/\(runs.count) runs converge)",
                  worst <= Angle.radians(degrees: 15))
        }
        if pickedUpTags.contains(name) {
            let started = runs.filter { $0.motionStart != nil }
            let reported = started.map { $0.movingReportedAfter ?? .infinity }
            check(.movingObjects, "`motion` says moving within 1 s of the start of motion",
                  "latest \(seconds(reported.max())) over \(started.count) runs", !started.isEmpty && (reported.max() ?? .infinity) <= 1)
            let stale = runs.map { $0.longestStaleTransform(beyond: 0.5) }.max() ?? 0
            check(.movingObjects, "no worldTransform more than 50 cm off for more than 1 s", "longest \(seconds(stale))", stale <= 1)
        }
        if object?.moves == true || object?.ranging == .bluetoothChannelSounding {
            let area: TargetCheck.Area = object?.ranging == .bluetoothChannelSounding ? .channelSounding : .movingObjects
            let nees = runs.compactMap(\.finalNEES)
            let band = meanNEESBand(runs: nees.count)
            let mean = Statistics.mean(nees)
            let measured = "\(mean.map { String(format: "%.3f", $0) } ?? "—") over \(nees.count) runs (band \(String(format: "%.3f–%.3f", band.lowerBound, band.upperBound)))"
                + neesSpread(nees)
            let posterior = Statistics.mean(runs.compactMap(\.posteriorFinalNEES))
            if object?.ranging == .bluetoothChannelSounding, posterior != nil {
                // Where even the exact posterior's Gaussian summary scores above the band (a
                // mirror, a banana), the engine is held to the posterior's own NEES: every
                // Channel Sounding scenario whose posterior is followed (not a radio profile's,
                // whose noise is not the engine's model).
                check(area, "mean NEES over ≥ \(minimumSeeds) seeds inside the χ² 95 % band, or at most the exact posterior's",
                      measured + (posterior.map { String(format: "; the exact posterior's %.3f", $0) } ?? ""),
                      nees.count >= minimumSeeds ? mean.map { m in band.contains(m) || posterior.map { m <= $0 } == true } ?? false : nil)
            } else {
                check(area, "mean NEES over ≥ \(minimumSeeds) seeds inside the χ² 95 % band", measured,
                      nees.count >= minimumSeeds ? mean.map { band.contains($0) } ?? false : nil)
            }
        }
        if channelSoundingHeldToThePosterior.contains(name) {
            // The bound is local (it sees no banana, no mirror): the exact posterior says how
            // many runs any estimator could give an honest 10° within 3 s of it.
            let timing = runs.compactMap { $0.onTimeForBound(degrees: 10, within: 3) }
            let allowed = timing.count, onTime = timing.filter(\.angle).count, posteriorOnTime = timing.filter(\.posterior).count
            let enginesModelOnTime = timing.filter(\.enginesModelPosterior).count
            check(.channelSounding, "first horizontalAngle within 3 s of the bound's 10° in as many runs as the exact posterior, less one (≥ \(minimumSeeds) seeds)",
                  "\(onTime)/\(allowed) runs (the exact posterior: \(posteriorOnTime)/\(allowed); under the engine's radio model: \(enginesModelOnTime)/\(allowed))",
                  judged ? allowed > 0 && onTime >= posteriorOnTime - 1 : nil)
            let converged = (runs + moreRuns).filter { $0.firstConvergedTime != nil }
            let convergedPositions = converged.flatMap(\.positionErrors)
            let median = Statistics.quantile(convergedPositions, 0.5)
            // Where the exact posterior comes near determining the position in none of the runs
            // (``ScenarioRun/posteriorDeterminesPosition(_:hysteresis:)``), no estimator can
            // publish it honestly: an engine that never publishes it leaves the target unjudged.
            let undetermined = positionUndeterminedByThePosterior(runs)
            let determined = runs.compactMap { $0.posteriorDeterminesPosition() }
            check(.channelSounding, "worldTransform median ≤ 0.5 m over ≥ \(minimumConvergedRuns) converged runs",
                  (median.map { String(format: "%.3f m over %d converged runs of %d", $0, converged.count, runs.count + moreRuns.count) }
                      ?? "never published in \(runs.count + moreRuns.count) runs")
                      + (determined.isEmpty ? "" : "; the exact posterior comes near determining the position in \(determined.filter { $0 }.count) of \(determined.count)"),
                  converged.count >= minimumConvergedRuns ? median.map { $0 <= 0.5 } ?? false
                      : undetermined && converged.isEmpty ? nil
                      : runs.count + moreRuns.count >= maximumSeedsForConvergedRuns ? false : nil)
        }
        if coachedChannelSounding.contains(name) {
            let ratio = ScenarioRun.angleRMSEOverBound(runs)
            let exact = ScenarioRun.posteriorAngleRMSEOverBound(runs).map { p in
                p.updates == p.of ? String(format: "; the exact posterior at the same updates: %.2f ×", p.posterior)
                    : String(format: "; at the %d of its %d angles where the exact posterior is followed %.2f ×, the exact posterior's %.2f ×",
                             p.updates, p.of, p.engine, p.posterior)
            } ?? ""
            // Pooled over a few runs, the ratio is as much the draw's as the engine's (over 20
            // seeds it spans 0.8–1.5 from one set to the next, the exact posterior's as well):
            // judged over as many seeds as the other statistical targets.
            check(.channelSounding, "angle RMSE ≤ 1.3 × the bound (≥ \(minimumSeeds) seeds)",
                  (ratio.map { String(format: "%.2f ×", $0) } ?? "no angle") + exact, judged ? ratio.map { $0 <= 1.3 } : nil)
            let (far, converged) = ScenarioRun.convergedAngles(runs, beyond: Angle.radians(degrees: 20))
            check(.channelSounding, "converged more than 20° off on < 0.1 % of updates (≥ \(minimumSeeds) seeds)",
                  "\(far)/\(converged) converged updates", judged ? Double(far) < 0.001 * Double(converged) || far == 0 : nil)
        }
        if name == "cs-planar-sweeps" {
            let worst = angles.max()
            check(.channelSounding, "no published angle more than 15° off", worst.map(degrees) ?? "no angle published", (worst ?? 0) <= Angle.radians(degrees: 15))
        }
        if radioProfiles.contains(name) {
            let paired = runs.flatMap(\.pairedDistanceErrors)
            let published = paired.map(\.published), raw = paired.map(\.raw), withoutOutliers = paired.map(\.withoutOutliers)
            // Beside each figure, the exact posterior's under the radio's own noise, where it is
            // followed (a still tag): what an ideal estimator that does not know the radio's
            // scale error and offset reaches.
            // And, beside the p95, the radio's ranges without their outliers: its noise, bias and scale
            // alone, which a published distance beats only by averaging that noise over time.
            let posterior = runs.flatMap(\.posteriorDistanceErrors)
            func beside(_ label: String, _ errors: [Double], _ q: Double, over r: Double) -> String {
                guard let e = Statistics.quantile(errors, q) else { return "" }
                return "; \(label): " + String(format: "%.3f m (%.2f ×)", e, e / r)
            }
            // For a peer, an efficient estimator told when the peer changes its velocity and
            // nothing of how (``MovingDistanceBound``, the Cramér–Rao bound at the truth).
            func ideal(_ q: Double, over r: Double) -> String {
                if let b = ScenarioRun.movingDistanceBoundQuantile(runs, q) {
                    return "; an efficient estimator told when the peer turns: " + String(format: "%.3f m (%.2f ×)", b, b / r)
                }
                return beside("the exact posterior", posterior, q, over: r)
            }
            if let pm = Statistics.quantile(published, 0.5), let rm = Statistics.quantile(raw, 0.5),
               let p95 = Statistics.quantile(published, 0.95), let r95 = Statistics.quantile(raw, 0.95) {
                check(.radioProfiles, "published distance median error ≤ the raw ranges' (at the updates with a range)",
                      String(format: "%.3f m against %.3f m (%.2f ×)", pm, rm, pm / rm) + ideal(0.5, over: rm), pm <= rm)
                check(.radioProfiles, String(format: "published distance p95 error ≤ %.1f × the raw ranges'", radioProfileP95Share),
                      String(format: "%.3f m against %.3f m (%.2f ×)", p95, r95, p95 / r95) + ideal(0.95, over: r95)
                          + beside("the ranges without the radio's outliers", withoutOutliers, 0.95, over: r95),
                      p95 <= radioProfileP95Share * r95)
            } else {
                check(.radioProfiles, "published distance median error ≤ the raw ranges' (at the updates with a range)", "no distance published", false)
            }
            if walks(scenario) {
                let lag = Statistics.quantile(runs.compactMap { $0.distanceLag() }, 0.5)
                let idealLag = Statistics.quantile(runs.compactMap { $0.posteriorDistanceLag() }, 0.5)
                check(.radioProfiles, "published distance lag ≤ 0.3 s while the user walks (median run)",
                      (lag.map { String(format: "%.2f s", $0) } ?? "—") + (idealLag.map { String(format: "; the exact posterior: %.2f s", $0) } ?? ""),
                      lag.map { $0 <= 0.3 })
            }
        } else if object?.ranging == .bluetoothChannelSounding {
            let errors = runs.map(\.distanceErrors)
            let published = Statistics.quantile(errors.flatMap { $0.published.map(\.error) }, 0.5)
            let raw = Statistics.quantile(errors.flatMap { $0.raw.map(\.error) }, 0.5)
            if let published, let raw {
                check(.channelSounding, "published distance median error ≤ half the raw ranges'",
                      String(format: "%.3f m against %.3f m (%.2f ×)", published, raw, published / raw), published <= 0.5 * raw)
            }
            if walks(scenario) {
                let lag = Statistics.quantile(runs.compactMap { $0.distanceLag() }, 0.5)
                check(.channelSounding, "published distance lag ≤ 0.3 s while the user walks (median run)", lag.map { String(format: "%.2f s", $0) } ?? "—",
                      lag.map { $0 <= 0.3 })
            }
        }
        return checks
    }

    /// How a mean NEES is made up, for the targets' text: the median of the runs' final
    /// NEES values, and how many lie beyond the 99.9 % point of χ² with `d` degrees of
    /// freedom (16.27 for a 3-D position: once in a thousand runs of an honest estimator), with
    /// the mean of the others when there are any. A mean outside the band with a median inside
    /// it and a few runs far beyond that point is those runs' doing (an estimate settled on the
    /// wrong side of an ambiguity, with a covariance that does not cover it), not a covariance
    /// too small or too large on every run. Empty for no runs.
    public static func neesSpread(_ nees: [Double], dimension d: Int = 3) -> String {
        guard let median = Statistics.quantile(nees, 0.5) else { return "" }
        let tail = chiSquareQuantile(0.999, degreesOfFreedom: Double(d))
        let rest = nees.filter { $0 <= tail }
        var text = String(format: "; median %.3f, %d beyond χ²(%d)'s 99.9 %% point %.2f", median, nees.count - rest.count, d, tail)
        if rest.count < nees.count, let restMean = Statistics.mean(rest) {
            text += String(format: " (the others' mean %.3f)", restMean)
        }
        return text
    }

    /// The 95 % band of the mean of `runs` NEES values of dimension `dimension` under a
    /// consistent filter: `[χ²₀.₀₂₅(n d)/n, χ²₀.₉₇₅(n d)/n]` — the sum of `n` independent
    /// χ²(d) values is χ²(n d). For 50 runs of a 3-D position: 2.36–3.72.
    public static func meanNEESBand(runs n: Int, dimension d: Int = 3) -> ClosedRange<Double> {
        guard n > 0 else { return 0...Double.infinity }
        let k = Double(n * d)
        return chiSquareQuantile(0.025, degreesOfFreedom: k) / Double(n)...chiSquareQuantile(0.975, degreesOfFreedom: k) / Double(n)
    }

    /// The `p`-quantile of the χ² distribution with `k` degrees of freedom: the `x` where
    /// the regularised lower incomplete gamma function `P(k/2, x/2)` equals `p`, by bisection
    /// (60 halvings of a bracket that holds it: below 10⁻¹² relative). `P` by its series
    /// `P(a, y) = e^{−y} y^a / Γ(a+1) Σₙ yⁿ / ((a+1)…(a+n))` below `y < a + 1`, by the
    /// continued fraction of `Q = 1 − P` (modified Lentz) above.
    public static func chiSquareQuantile(_ p: Double, degreesOfFreedom k: Double) -> Double {
        precondition(p > 0 && p < 1 && k > 0, "a χ² quantile needs 0 < p < 1 and k > 0")
        var low = 0.0, high = max(2 * k, 1)
        while regularisedGammaP(k / 2, high / 2) < p { high *= 2 }
        for _ in 0..<60 {
            let mid = 0.5 * (low + high)
            if regularisedGammaP(k / 2, mid / 2) < p { low = mid } else { high = mid }
        }
        return 0.5 * (low + high)
    }

    /// `P(a, y) = γ(a, y) / Γ(a)`, the regularised lower incomplete gamma function (see
    /// ``chiSquareQuantile(_:degreesOfFreedom:)``).
    static func regularisedGammaP(_ a: Double, _ y: Double) -> Double {
        guard y > 0 else { return 0 }
        let logPrefix = -y + a * log(y) - lgamma(a)
        if y < a + 1 {
            var term = 1 / a, sum = term, n = a
            for _ in 0..<1000 {
                n += 1
                term *= y / n
                sum += term
                if abs(term) < abs(sum) * 1e-16 { break }
            }
            return min(sum * exp(logPrefix), 1)
        }
        // Q(a, y) = e^{−y} y^a / Γ(a) · 1/(y + 1 − a − 1·(1 − a)/(y + 3 − a − …)).
        let tiny = 1e-300
        var b = y + 1 - a, c = 1 / tiny, d = 1 / b, h = d
        for i in 1...1000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return max(1 - exp(logPrefix) * h, 0)
    }

    /// When the device starts to sweep, seconds: the length of the leading `still` segments
    /// of a scripted path (0 for a recorded one).
    public static func sweepingStart(of scenario: SimulationScenario) -> Double {
        guard let path = scenario.trajectory as? DeviceTrajectory else { return 0 }
        var t = 0.0
        for segment in path.segments {
            switch segment {
            case .still(let d): t += d
            case .hold: continue
            default: return t
            }
        }
        return t
    }

    /// Whether the user walks (a step or a walk in the device path).
    public static func walks(_ scenario: SimulationScenario) -> Bool {
        guard let path = scenario.trajectory as? DeviceTrajectory else { return true }
        return path.segments.contains { if case .walk = $0 { return true }; if case .sidestep = $0 { return true }; return false }
    }

    private static func angleChecks(median: Double, p95: Double, _ angles: [Double],
                                    _ check: (TargetCheck.Area, String, String, Bool?) -> Void) {
        let m = Statistics.quantile(angles, 0.5), p = Statistics.quantile(angles, 0.95)
        check(.movingObjects, String(format: "angle error median ≤ %g°", median), m.map(degrees) ?? "no angle", m.map { $0 <= Angle.radians(degrees: median) } ?? false)
        check(.movingObjects, String(format: "angle error p95 ≤ %g°", p95), p.map(degrees) ?? "no angle", p.map { $0 <= Angle.radians(degrees: p95) } ?? false)
    }

    private static func positionCheck(median: Double, _ positions: [Double], _ check: (TargetCheck.Area, String, String, Bool?) -> Void) {
        let m = Statistics.quantile(positions, 0.5)
        check(.movingObjects, String(format: "worldTransform median ≤ %g cm", median * 100), m.map { String(format: "%.1f cm", $0 * 100) } ?? "never published",
              m.map { $0 <= median } ?? false)
    }

    /// Whether the exact posterior, followed in `runs` (at least ``minimumSeeds`` of them),
    /// comes near determining the position as a Channel Sounding `worldTransform` asks
    /// (``ScenarioRun/posteriorDeterminesPosition(_:hysteresis:)``) in none of them.
    public static func positionUndeterminedByThePosterior(_ runs: [ScenarioRun]) -> Bool {
        let determined = runs.compactMap { $0.posteriorDeterminesPosition() }
        return determined.count >= minimumSeeds && !determined.contains(true)
    }

    private static func degrees(_ radians: Double) -> String { String(format: "%.2f°", Angle.degrees(radians: radians)) }
    private static func seconds(_ x: Double?) -> String {
        guard let x else { return "—" }
        return x.isFinite ? String(format: "%.1f s", x) : "never"
    }
}
