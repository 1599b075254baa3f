import Foundation
import NearbyFusion
import NearbyFusionRecording

/// What a coaching expectation file says must hold, and whether it did.
///
/// One expectation per line (`#` comments):
///
/// ```
/// QUANTIFIER FROM TO SUBJECT CLAUSE
/// always     0.4  1.0  tag  includes insufficientMovement
/// eventually 1.0  4.0  tag  status converged
/// always     3.0  end  tag  vertical same
/// always     0    end  session excludes insufficientLighting
/// ```
///
/// - `QUANTIFIER`: `always` (every update in the window satisfies the clause; a window
///   with no update fails) or `eventually` (at least one does).
/// - `FROM TO`: seconds from the recording's first timestamp, inclusive; `TO` may be `end`.
/// - `SUBJECT`: an object id, or `session` for session-level convergence (judged on the
///   status in force at every moment of the window).
/// - `CLAUSE`: `status unknown|converged|notConverged`; `reasons R1,R2` (exactly that set;
///   `reasons none`); `includes R`; `excludes R`; `vertical unknown|same|above|below|aboveOrBelow|null`;
///   `available OUTPUT`; `withheld OUTPUT` (OUTPUT: distance, direction, horizontalAngle,
///   verticalDirectionEstimate, worldTransform); `angle-within DEGREES` (every published
///   horizontalAngle within that of the truth; needs `truth` lines); `motion
///   moving|stationary|unknown` (the object's published `motion`; `null` where it has none);
///   `guidance left|right|forward|back|up|down|none|any` (the published guidance's direction,
///   `none` when there is none, `any` when there is one); `guidance-not DIRECTION` (no guidance
///   that way); `guidance-step METRES` (guidance of at least that distance).
public struct CoachingExpectation: Sendable, Hashable {
    /// `always`: every update in the window satisfies the clause; `eventually`: one does.
    public enum Quantifier: String, Sendable { case always, eventually }
    /// What an update must satisfy (the clauses of the expectation language).
    public enum Clause: Sendable, Hashable {
        case status(String)
        case reasons(ConvergenceReasons)
        case includes(ConvergenceReasons)
        case excludes(ConvergenceReasons)
        case vertical(String)
        case available(String)
        case withheld(String)
        case angleWithin(Double)
        case motion(String)
        case guidance(String)
        case guidanceNot(String)
        case guidanceStep(Double)
    }

    /// The line of the expectation file, from 1.
    public var line: Int
    /// `always` or `eventually`.
    public var quantifier: Quantifier
    /// The window, seconds from the recording's first timestamp, inclusive (`to` may be infinite: `end`).
    public var from: Double
    /// (See ``from``.)
    public var to: Double
    /// An object's identifier, or `session`.
    public var subject: String
    /// The clause every (or one) update must satisfy.
    public var clause: Clause
    /// The expectation as written (for reports).
    public var text: String

    /// The outputs `available` and `withheld` name.
    public static let outputs = ["distance", "direction", "horizontalAngle", "verticalDirectionEstimate", "worldTransform"]

    /// Parses an expectation file.
    public static func parse(_ text: String, file: String) throws(RecordingError) -> [CoachingExpectation] {
        var out: [CoachingExpectation] = []
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let content = String(raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if content.isEmpty { continue }
            let w = content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let n = number
            func fail(_ key: String?, _ m: String) -> RecordingError { RecordingError(file: file, line: n, key: key, message: m) }
            guard w.count == 6 else { throw fail(nil, "expected 'QUANTIFIER FROM TO SUBJECT CLAUSE ARGUMENT' (6 words), found \(w.count)") }
            guard let q = Quantifier(rawValue: w[0]) else { throw fail("quantifier", "expected always or eventually, found '\(w[0])'") }
            guard let from = Double(w[1]), from.isFinite else { throw fail("from", "'\(w[1])' is not a number") }
            let to: Double
            if w[2] == "end" { to = .infinity } else {
                guard let t = Double(w[2]), t.isFinite else { throw fail("to", "'\(w[2])' is not a number or 'end'") }
                to = t
            }
            guard to >= from else { throw fail("to", "the window ends (\(w[2])) before it starts (\(w[1]))") }
            func reasons(_ s: String) throws(RecordingError) -> ConvergenceReasons {
                if s == "none" { return [] }
                var set: ConvergenceReasons = []
                for name in s.split(separator: ",") {
                    guard let r = ConvergenceReasons(name: String(name)) else { throw fail("reasons", "unknown reason '\(name)'") }
                    set.insert(r)
                }
                return set
            }
            let clause: Clause
            switch w[4] {
            case "status":
                guard ["unknown", "converged", "notConverged"].contains(w[5]) else { throw fail("status", "unknown status '\(w[5])'") }
                clause = .status(w[5])
            case "reasons": clause = .reasons(try reasons(w[5]))
            case "includes": clause = .includes(try reasons(w[5]))
            case "excludes": clause = .excludes(try reasons(w[5]))
            case "vertical":
                guard VerticalDirectionEstimate(rawValue: w[5]) != nil || w[5] == "null" else { throw fail("vertical", "unknown vertical estimate '\(w[5])'") }
                clause = .vertical(w[5])
            case "available", "withheld":
                guard outputs.contains(w[5]) else { throw fail(w[4], "unknown output '\(w[5])'") }
                clause = w[4] == "available" ? .available(w[5]) : .withheld(w[5])
            case "angle-within":
                guard let d = Double(w[5]), d > 0 else { throw fail("angle-within", "'\(w[5])' is not a positive number of degrees") }
                clause = .angleWithin(d)
            case "motion":
                guard MotionActivityState(rawValue: w[5]) != nil || w[5] == "null" else {
                    throw fail("motion", "unknown motion '\(w[5])' (moving, stationary, unknown, null)")
                }
                clause = .motion(w[5])
            case "guidance", "guidance-not":
                let names = MotionGuidance.Direction.allCases.map(\.rawValue) + (w[4] == "guidance" ? ["none", "any"] : [])
                guard names.contains(w[5]) else { throw fail(w[4], "unknown guidance '\(w[5])' (\(names.joined(separator: ", ")))") }
                clause = w[4] == "guidance" ? .guidance(w[5]) : .guidanceNot(w[5])
            case "guidance-step":
                guard let m = Double(w[5]), m > 0, m.isFinite else { throw fail("guidance-step", "'\(w[5])' is not a positive number of metres") }
                clause = .guidanceStep(m)
            default:
                throw fail("clause", "unknown clause '\(w[4])' (status, reasons, includes, excludes, vertical, available, withheld, angle-within, motion, guidance, guidance-not, guidance-step)")
            }
            if w[3] == "session" {
                switch clause {
                case .status, .reasons, .includes, .excludes: break
                default: throw fail("subject", "the session has only a convergence status")
                }
            }
            out.append(CoachingExpectation(line: n, quantifier: q, from: from, to: to, subject: w[3], clause: clause, text: content))
        }
        return out
    }
}

extension CoachingExpectation {
    /// "guidance forward 0.75 m", or "guidance none".
    static func guidanceText(_ g: MotionGuidance?) -> String {
        g.map { "guidance " + $0.stepText } ?? "guidance none"
    }
}

/// The verdict on one expectation.
public struct CoachingVerdict: Sendable {
    /// The expectation judged.
    public var expectation: CoachingExpectation
    /// Whether it held.
    public var passed: Bool
    /// Updates (or session states) in the window.
    public var considered: Int
    /// What was reported instead, when it failed.
    public var detail: String
}

/// Checks expectations against a replay of a recording.
public enum CoachingCheck {
    struct Sample {
        var time: Double
        var estimate: NearbyObjectEstimate?
        var session: ConvergenceStatus?
        var angleError: Double?
    }

    static func describe(_ s: ConvergenceStatus) -> String {
        switch s {
        case .notConverged(let r): return "notConverged(\(r.names.joined(separator: ",")))"
        default: return s.name
        }
    }

    /// What a replay of the recording reported: each object's updates (time from the first
    /// event, with the horizontal angle's error against the truth when it has one) and the
    /// session-level changes.
    struct Replayed {
        var samples: [String: [Sample]] = [:]
        var sessionChanges: [(Double, ConvergenceStatus)] = []
        /// The last object update's time, seconds from the start.
        var end = 0.0
    }

    /// Replays the recording at `path` and judges each expectation; throws the reader's or the
    /// replay's error.
    public static func check(recording path: String, expectations: [CoachingExpectation],
                             options: FusionOptions = FusionOptions()) throws -> [CoachingVerdict] {
        try check(reader: RecordingReader(path: path), name: path, expectations: expectations, options: options)
    }

    /// ``check(recording:expectations:options:)`` over a reader that has not read its header
    /// yet (a recording held in memory); `name` stands for the file in messages.
    public static func check(reader: RecordingReader, name: String, expectations: [CoachingExpectation],
                             options: FusionOptions = FusionOptions()) throws -> [CoachingVerdict] {
        let replayed = try replay(reader: reader, name: name, options: options)
        return expectations.map { verdict(on: $0, replayed) }
    }

    /// Replays the recording once and keeps what the expectations read.
    static func replay(reader: RecordingReader, name: String, options: FusionOptions) throws -> Replayed {
        var replayed = Replayed()
        var start: Double?
        var ids: [String] = []
        var truth: [Vector3?] = []
        var lastPose: DevicePose?
        try RecordingReplay.drive(reader: reader, name: name, options: options, start: { header in
            ids = header.objects.map(\.id)
            truth = Array(repeating: nil, count: ids.count)
        }) { step in
            if start == nil, let t = step.timestamp { start = t }
            let t0 = start ?? 0
            switch step {
            case .pose(let p, let change):
                lastPose = p
                if let c = change { replayed.sessionChanges.append((c.timestamp - t0, c.convergence.status)) }
            case .uwb(let k, let m, let e, _):
                var angleError: Double?
                if let a = e.horizontalAngle, let p = truth[k], let pose = lastPose,
                   let trueAngle = HorizontalAngle.angle(objectInWorld: p, devicePositionInWorld: pose.positionInWorld, worldFromDevice: pose.worldFromDevice) {
                    angleError = abs(Angle.degrees(radians: Angle.wrapped(a - trueAngle)))
                }
                replayed.samples[ids[k], default: []].append(Sample(time: m.timestamp - t0, estimate: e, angleError: angleError))
            case .truth(let k, _, let p): truth[k] = p
            case .removed, .motionState: break
            }
        }
        replayed.end = replayed.samples.values.flatMap { $0.map(\.time) }.max() ?? 0
        return replayed
    }

    /// One expectation judged over the updates (or session states) in its window.
    static func verdict(on x: CoachingExpectation, _ replayed: Replayed) -> CoachingVerdict {
        let window: [Sample]
        if x.subject == "session" {
            // The status in force at FROM, then every change inside the window.
            var status: ConvergenceStatus = .unknown
            for (t, s) in replayed.sessionChanges where t <= x.from { status = s }
            var list = [Sample(time: x.from, session: status)]
            for (t, s) in replayed.sessionChanges where t > x.from && t <= min(x.to, replayed.end) { list.append(Sample(time: t, session: s)) }
            window = list
        } else {
            window = (replayed.samples[x.subject] ?? []).filter { $0.time >= x.from && $0.time <= x.to }
        }
        if window.isEmpty {
            return CoachingVerdict(expectation: x, passed: false, considered: 0,
                                   detail: replayed.samples[x.subject] == nil && x.subject != "session"
                                       ? "no object '\(x.subject)' in the recording" : "no update in the window")
        }
        var failures: [(Double, String)] = []
        var successes = 0
        for s in window {
            let (ok, reported) = evaluate(x.clause, s)
            if ok { successes += 1 } else { failures.append((s.time, reported)) }
        }
        switch x.quantifier {
        case .always:
            guard let first = failures.first else { return CoachingVerdict(expectation: x, passed: true, considered: window.count, detail: "") }
            return CoachingVerdict(expectation: x, passed: false, considered: window.count,
                                   detail: String(format: "at %.2f s reported %@ (%d of %d in the window)", first.0, first.1, failures.count, window.count))
        case .eventually:
            if successes > 0 { return CoachingVerdict(expectation: x, passed: true, considered: window.count, detail: "") }
            let last = failures.last!
            return CoachingVerdict(expectation: x, passed: false, considered: window.count,
                                   detail: String(format: "never in %d updates; last reported %@ at %.2f s", window.count, last.1, last.0))
        }
    }

    static func evaluate(_ clause: CoachingExpectation.Clause, _ s: Sample) -> (Bool, String) {
        let status = s.session ?? s.estimate?.convergence?.status
        let statusText = status.map(describe) ?? "no convergence (camera assistance off)"
        let reasons = status?.reasons ?? []
        switch clause {
        case .status(let name): return (status?.name == name, statusText)
        case .reasons(let set): return (status != nil && reasons == set, statusText)
        case .includes(let set): return (reasons.isSuperset(of: set), statusText)
        case .excludes(let set): return (reasons.isDisjoint(with: set), statusText)
        case .vertical(let v):
            let published = s.estimate?.verticalDirectionEstimate?.rawValue ?? "null"
            return (published == v, "vertical \(published)")
        case .available(let output), .withheld(let output):
            guard let e = s.estimate else { return (false, "no estimate") }
            let present: Bool
            switch output {
            case "distance": present = e.distance != nil
            case "direction": present = e.direction != nil
            case "horizontalAngle": present = e.horizontalAngle != nil
            case "verticalDirectionEstimate": present = e.verticalDirectionEstimate != nil
            default: present = e.worldTransform != nil
            }
            let wantPresent: Bool
            if case .available = clause { wantPresent = true } else { wantPresent = false }
            return (present == wantPresent, "\(output) \(present ? "published" : "withheld") (\(statusText))")
        case .angleWithin(let degrees):
            guard s.estimate?.horizontalAngle != nil else { return (true, "") }
            guard let error = s.angleError else { return (false, "no truth to compare with") }
            return (error <= degrees, String(format: "horizontalAngle %.1f° off", error))
        case .motion(let m):
            let published = s.estimate?.motion?.rawValue ?? "null"
            return (published == m, "motion \(published)")
        case .guidance(let d):
            let g = s.estimate?.guidance
            let published = g?.direction.rawValue ?? "none"
            return (d == "any" ? g != nil : published == d, CoachingExpectation.guidanceText(g))
        case .guidanceNot(let d):
            let g = s.estimate?.guidance
            return (g?.direction.rawValue != d, CoachingExpectation.guidanceText(g))
        case .guidanceStep(let metres):
            let g = s.estimate?.guidance
            return ((g?.distanceMetres ?? 0) >= metres - 1e-9, CoachingExpectation.guidanceText(g))
        }
    }
}
