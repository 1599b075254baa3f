import Foundation
import NearbyFusion
import NearbyFusionRecording

/// One measurable target — for moving objects, Bluetooth Channel Sounding tags or real
/// distance-only sessions — judged on what a command measured: `nearby-fusion accuracy`
/// judges the simulated scenarios' (``ScenarioTargets``), `evaluate --targets` the real
/// distance-only sessions' (``RealSessionTargets``), so that each target has a command that
/// reproduces its figure and a verdict that does not depend on who reads the table.
public struct TargetCheck: Codable, Sendable, Hashable {
    /// Whether the measurement meets the target.
    public enum Verdict: String, Codable, Sendable, Hashable {
        case met
        case missed
        /// The measurement cannot decide: the target asks for more seeds than were run (the
        /// consistency band and the converged-far rate are defined over at least 50), or the
        /// bound it is timed from never allows the angle.
        case notJudged = "not judged"
    }

    /// What a target is about.
    public enum Area: String, Codable, Sendable, Hashable {
        /// Objects that move, and the consistency of every object's estimate.
        case movingObjects = "moving objects"
        /// Bluetooth Channel Sounding tags (distance only; the direction from camera assistance).
        case channelSounding = "Channel Sounding"
        /// Real sessions of a device that measures no direction.
        case distanceOnly = "distance only"
        /// The published distance under the radio profiles measured on real radios.
        case radioProfiles = "radio profiles"
        /// Simulated users who follow the guidance against those who follow the reasons alone.
        case guidance = "guidance"
    }

    /// What the target is about.
    public var area: Area
    /// What it is judged on: a scenario, or a recording's object.
    public var subject: String
    /// The target, named by what it measures.
    public var target: String
    /// What was measured, with the figures the verdict reads.
    public var measured: String
    /// Met, missed, or not judged.
    public var verdict: Verdict

    /// A judged target.
    public init(area: Area, subject: String, target: String, measured: String, verdict: Verdict) {
        self.area = area
        self.subject = subject
        self.target = target
        self.measured = measured
        self.verdict = verdict
    }

    /// `checks` as a Markdown table (`| area | <subject> | target | measured | verdict |`)
    /// followed by a blank line and the count of each verdict; `notJudgedReason` explains
    /// the `not judged` ones.
    public static func table(_ checks: [TargetCheck], subjectHeader: String, notJudgedReason: String) -> String {
        var lines = ["| area | \(subjectHeader) | target | measured | verdict |", "| --- | --- | --- | --- | --- |"]
        for c in checks { lines.append("| \(c.area.rawValue) | \(c.subject) | \(c.target) | \(c.measured) | \(c.verdict.rawValue) |") }
        let met = checks.filter { $0.verdict == .met }.count, missed = checks.filter { $0.verdict == .missed }.count
        let notJudged = checks.count - met - missed
        lines.append("")
        lines.append("targets: \(met) met, \(missed) missed" + (notJudged > 0 ? ", \(notJudged) not judged (\(notJudgedReason))" : ""))
        return lines.joined(separator: "\n")
    }
}

/// The targets of real distance-only sessions (a device that measures no direction,
/// ranging to objects that keep still, such as the NTU VIRAL drone sessions), judged per
/// object from its evaluation: first convergence within 15 s of the moment the Cramér–Rao
/// bound allows the angle (``ObjectEvaluation/boundAngleDegrees``, 3° for UWB); at least 90 %
/// of updates converged from the first convergence on; `horizontalAngle` error median ≤ 2°
/// and p95 ≤ 6°; at most one change of status a minute.
public enum RealSessionTargets {
    /// The targets judged on `o`, named `subject` in the table.
    public static func checks(for o: ObjectEvaluation, subject: String) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        func check(_ target: String, _ measured: String, _ met: Bool?) {
            checks.append(TargetCheck(area: .distanceOnly, subject: subject, target: target, measured: measured,
                                      verdict: met.map { $0 ? .met : .missed } ?? .notJudged))
        }
        let bound = o.boundAngleDegrees.map { String(format: "%g°", $0) } ?? "its angle"
        if let allowed = o.boundAllowsAngleAfterSeconds {
            if let lag = o.convergenceLagSeconds {
                check("first convergence within 15 s of the bound allowing \(bound)",
                      String(format: "%+.1f s (bound at %.1f s)", lag, allowed), lag <= 15)
            } else {
                check("first convergence within 15 s of the bound allowing \(bound)", String(format: "never (bound at %.1f s)", allowed), false)
            }
        } else {
            check("first convergence within 15 s of the bound allowing \(bound)", "the bound never allows it", nil)
        }
        let share = o.convergedShareAfterFirst
        check("≥ 90 % of updates converged after the first convergence", share.map { String(format: "%.1f %%", 100 * $0) } ?? "never converged",
              share.map { $0 >= 0.9 } ?? false)
        let angles = o.horizontalAngleErrorDegrees
        check("horizontalAngle error median ≤ 2°", angles.map { String(format: "%.2f°", $0.median) } ?? "no angle", angles.map { $0.median <= 2 } ?? false)
        check("horizontalAngle error p95 ≤ 6°", angles.map { String(format: "%.2f°", $0.p95) } ?? "no angle", angles.map { $0.p95 <= 6 } ?? false)
        let changes = o.statusChangesPerMinute
        check("≤ 1 status change a minute after the first convergence", changes.map { String(format: "%.2f", $0) } ?? "never converged",
              changes.map { $0 <= 1 } ?? false)
        return checks
    }
}
