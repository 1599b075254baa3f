import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import Synchronization

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Score the engine against a recording's truth (or every recording in a folder, in parallel).",
        discussion: """
        Statistics are named as evo names them (max, mean, median, min, rmse, std; plus p95). \
        horizontalAngle errors are in degrees over every published angle; position errors in metres \
        over every published worldTransform; availability is the share of updates publishing each \
        output; the vertical confusion table counts truth category (|Δy| within the level tolerance: \
        same) against what was published; falseConvergedRate is the share of converged updates more \
        than 15° off; meanNEES is over converged updates (3 is ideal). "bound allows its angle after" is the \
        first moment the Cramér–Rao bound (every range and direction so far, at the truth, with the \
        radio's noise model) allows the 1σ horizontal angle at which the engine publishes one for that \
        radio: 3° for UWB, 10° for Bluetooth Channel Sounding; "lag" is the first convergence minus that moment (the folder total: \
        the worst object's); "converged after first" is the share of updates converged from the first \
        convergence on, and "changes/min" the status changes per minute over that span. "distance \
        error" sets the published distance beside the raw ranges, and "before a worldTransform" does \
        so at the updates before the object is located, where the distance is the ranges' own, late \
        spikes set aside (a Channel Sounding tag's: its ranges smoothed).
        """)

    @Argument(help: "A recording with truth lines (`-` reads standard input), or a folder of them (*.jsonl, searched recursively).",
              completion: .file(extensions: ["jsonl"]))
    var recording: String?

    @Option(help: ArgumentHelp("A file listing recordings, one path per line (blank lines and lines starting with # are skipped), evaluated as a folder is.", valueName: "FILE"),
            completion: .file())
    var paths: String?

    @OptionGroup var engine: EngineOptions

    @Flag(help: "Print one JSON document instead of text (for a folder, with its mergeable `pool`).")
    var json = false

    @Flag(help: "Also judge the targets of real distance-only sessions, per object: first convergence within 15 s of the bound allowing the angle, ≥ 90 % converged after it, angle error median ≤ 2° and p95 ≤ 6°, ≤ 1 status change a minute.")
    var targets = false

    @Option(help: ArgumentHelp("Evaluate only shard K of N of a folder: the recordings whose index in path order is K − 1 modulo N. Merge the shards' --json documents with `merge`.", valueName: "K/N"))
    var shard: Shard?

    /// `K/N`: shard K (1…N) of N.
    struct Shard: ExpressibleByArgument, Sendable, CustomStringConvertible {
        var index: Int, count: Int
        var description: String { "\(index)/\(count)" }
        init?(argument: String) {
            let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(k) else { return nil }
            index = k; count = n
        }
    }

    func validate() throws {
        guard (recording == nil) != (paths == nil) else { throw ValidationError("give a recording or folder, or --paths FILE (not both)") }
        if shard != nil, recording == "-" { throw ValidationError("--shard applies to a folder of recordings") }
        if targets && json { throw ValidationError("--targets prints a table: the --json document already has every figure it reads") }
    }

    func run() throws {
        if let paths { try runFolder(files: try Self.readList(paths)); return }
        guard let recording else { return }
        if recording == "-" { try runOne(recording); return }   // standard input: one recording
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: recording, isDirectory: &isDirectory) else {
            throw CommandFailure(message: "\(recording): no such file or folder")
        }
        if isDirectory.boolValue { try runFolder(files: Self.recordings(in: recording)) } else if shard != nil {
            throw CommandFailure(message: "\(recording): --shard applies to a folder of recordings")
        } else { try runOne(recording) }
    }

    func evaluate(_ path: String) throws -> RecordingEvaluationReport {
        do { return try RecordingEvaluation.evaluate(path: path, options: engine.fusionOptions) } catch let e as RecordingError {
            throw CommandFailure(message: e.description)
        }
    }

    /// Every `*.jsonl` under `folder`, in path order.
    static func recordings(in folder: String) throws -> [String] {
        var files: [String] = []
        if let walker = FileManager.default.enumerator(at: URL(fileURLWithPath: folder), includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "jsonl" { files.append(url.path) }
        }
        guard !files.isEmpty else { throw CommandFailure(message: "\(folder): no .jsonl recordings") }
        return files.sorted()
    }

    /// The recordings a `--paths` file lists, in its order.
    static func readList(_ path: String) throws -> [String] {
        try InputFile.requireRegular(path, what: "a list of recordings")
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw CommandFailure(message: "\(path): cannot read the list of recordings (not a UTF-8 text file, or missing)")
        }
        let files = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard !files.isEmpty else { throw CommandFailure(message: "\(path): the list names no recording") }
        return files
    }

    func runOne(_ recording: String) throws {
        let report = try evaluate(recording)
        if json { print(try Self.encode(report)); return }
        print("recording \(report.recording)")
        for o in report.objects {
            print("\nobject \(o.object) (\(o.updates) updates)")
            Self.printStatistics("horizontalAngle error (°)", o.horizontalAngleErrorDegrees)
            Self.printStatistics("position error (m)", o.positionErrorMetres)
            print("  time to convergence   " + (o.timeToConvergenceSeconds.map { String(format: "%.2f s", $0) } ?? "never"))
            print("  bound allows \(o.boundAngleDegrees.map { String(format: "%g", ($0 * 1e6).rounded() / 1e6) + "°" } ?? "—") after "
                  + (o.boundAllowsAngleAfterSeconds.map { String(format: "%.2f s", $0) } ?? "never")
                  + "  (convergence " + (o.convergenceLagSeconds.map { String(format: "%+.2f s", $0) } ?? "—") + " after that)")
            print("  after first converged " + (o.convergedShareAfterFirst.map { String(format: "%.0f%% of updates converged", 100 * $0) } ?? "—")
                  + ", " + (o.statusChangesPerMinute.map { String(format: "%.2f status changes per minute", $0) } ?? "—"))
            print("  false converged rate  " + (o.falseConvergedRate.map { String(format: "%.3f", $0) } ?? "—"))
            print("  mean NEES (converged) " + (o.meanNEES.map { String(format: "%.2f", $0) } ?? "—")
                  + (o.meanNEESWhileMoving.map { String(format: "; while moving %.2f", $0) } ?? "")
                  + (o.meanNEESWhileMoving == nil ? "" : "; while still " + (o.meanNEESWhileStill.map { String(format: "%.2f", $0) } ?? "—")))
            if let byMinute = o.meanNEESByMinute, byMinute.count > 1 {
                print("    by minute after first converged  " + byMinute.map { $0.map { String(format: "%.1f", $0) } ?? "—" }.joined(separator: ", "))
            }
            if let e = o.rangeError {
                print("  range error vs truth  " + String(format: "median %+.3f m, robust σ %.3f m", e.medianMetres, e.robustStandardDeviationMetres)
                      + ", correlation after 1 s " + (e.correlationAfterOneSecond.map { String(format: "%.2f", $0) } ?? "—") + " (n \(e.count))")
            }
            if let d = o.distanceError {
                print("  distance error        " + String(format: "published median %.3f m, p95 %.3f m", d.publishedMedianMetres, d.publishedP95Metres)
                      + (d.rawMedianMetres.map { m in String(format: "; raw ranges median %.3f m, p95 %.3f m", m, d.rawP95Metres ?? .nan) } ?? "")
                      + "; lag " + (d.lagSeconds.map { String(format: "%.2f s", $0) } ?? "—") + " (n \(d.count))")
                if let raw = d.beforeLocatedRawP95Metres, let published = d.beforeLocatedPublishedP95Metres {
                    print("    before a worldTransform  " + String(format: "published p95 %.3f m; raw ranges p95 %.3f m", published, raw)
                          + " (n \(d.beforeLocatedCount ?? 0))")
                }
            }
            if let m = o.motionReport {
                func percent(_ x: Double?) -> String { x.map { String(format: "%.0f%%", 100 * $0) } ?? "—" }
                print("  motion (converged on) 'moving' on \(percent(m.movingShare)) of \(m.movingUpdates) updates while the truth moves, "
                      + "'stationary' on \(percent(m.stationaryShare)) of \(m.stillUpdates) while it keeps still; "
                      + "'stationary' while moving \(m.stationaryWhileMoving)×"
                      + (m.stops == 0 ? "" : "; 'stationary' after a stop median "
                         + (m.stationaryAfterStopMedianSeconds.map { String(format: "%.2f s", $0) } ?? "—") + ", max "
                         + (m.stationaryAfterStopMaximumSeconds.map { String(format: "%.2f s", $0) } ?? "—")
                         + " (\(m.missedStops) of \(m.stops) stops missed)"))
            }
            print("  availability          " + ["distance", "direction", "horizontalAngle", "verticalDirectionEstimate", "worldTransform"]
                .map { "\($0) \(String(format: "%.0f%%", 100 * (o.availability[$0] ?? 0)))" }.joined(separator: ", "))
            print("  vertical confusion    truth ↓ / published →  " + RecordingEvaluation.estimateCategories.map { $0.padding(toLength: 14, withPad: " ", startingAt: 0) }.joined())
            for row in RecordingEvaluation.truthCategories {
                let counts = RecordingEvaluation.estimateCategories.map { String(o.verticalConfusion[row]?[$0] ?? 0).padding(toLength: 14, withPad: " ", startingAt: 0) }
                print("                        \(row.padding(toLength: 24, withPad: " ", startingAt: 0))" + counts.joined())
            }
        }
        if targets { print(""); Self.printTargets([report]) }
    }

    static func printStatistics(_ title: String, _ s: ErrorStatistics?) {
        guard let s else { print("  \(title.padding(toLength: 27, withPad: " ", startingAt: 0)) none published"); return }
        func g(_ x: Double) -> String { Figure.text(x, decimals: 3) }
        print("  \(title.padding(toLength: 27, withPad: " ", startingAt: 0))"
            + "max \(g(s.max))  mean \(g(s.mean))  median \(g(s.median))  min \(g(s.min))  rmse \(g(s.rmse))  std \(g(s.std))  p95 \(g(s.p95))  (n \(s.count))")
    }

    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    struct FolderReport: Encodable {
        var recordings: [RecordingEvaluationReport]
        var skipped: [String]
        /// Recordings that could not be read, each with its one-line error.
        var failed: [String]
        var total: ObjectEvaluation
        /// The shard evaluated (`K/N`), if any.
        var shard: String?
        /// What `merge` adds up across shards.
        var pool: EvaluationPool
    }

    /// Evaluates `files` (a folder's, or a `--paths` list's) in parallel, or this run's shard
    /// of them.
    func runFolder(files all: [String]) throws {
        var files = all
        if let shard { files = files.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element) }
        let paths = files, options = engine.fusionOptions
        guard !files.isEmpty else {
            throw CommandFailure(message: "\(recording ?? self.paths ?? ""): no recording in shard \(shard?.description ?? "")")
        }
        let results = Mutex([Result<RecordingEvaluationReport, Error>?](repeating: nil, count: files.count))
        // Progress on standard error while it works (a terminal only), one step per recording.
        let progress = Mutex((bar: ProgressBar(total: files.count, minimumTotal: 2, items: "recordings"), done: 0))
        DispatchQueue.concurrentPerform(iterations: files.count) { k in
            let r: Result<RecordingEvaluationReport, Error> = Result { try RecordingEvaluation.evaluate(path: paths[k], options: options) }
            results.withLock { $0[k] = r }
            progress.withLock { $0.done += 1; $0.bar.update($0.done) }
        }
        progress.withLock { $0.bar.finish() }
        var reports: [RecordingEvaluationReport] = []
        var skipped: [String] = []
        var failed: [String] = []
        for (k, r) in results.withLock({ $0 }).enumerated() {
            switch r! {
            case .success(let report):
                if report.objects.allSatisfy({ $0.verticalConfusion.values.allSatisfy { $0.values.allSatisfy { $0 == 0 } } }) {
                    skipped.append(files[k])   // no truth lines
                } else {
                    reports.append(report)
                }
            case .failure(let error):
                // One bad file does not hide the others: they are evaluated, it is listed.
                failed.append((error as? RecordingError)?.description ?? (error as? ReplayError)?.description ?? "\(files[k]): \(error)")
            }
        }
        let rows = reports.map { RecordingEvaluation.pooled($0.objects, name: $0.recording) }
        // Pooled over every object, not over the recordings' rows: a time's median is then the
        // median of the objects' times (not of the recordings' medians), as a fleet's merged
        // pool computes it.
        let total = RecordingEvaluation.pooled(reports.flatMap(\.objects), name: "total")
        if json {
            let pool = EvaluationPool(reports, skipped: skipped.count, failed: failed.count)
            print(try Self.encode(FolderReport(recordings: reports, skipped: skipped, failed: failed, total: total,
                                               shard: shard?.description, pool: pool)))
            try Self.failIfAny(failed, of: files.count)
            return
        }
        Self.printTable(rows + [total])
        for s in skipped { print("skipped (no truth): \(s)") }
        if targets { print(""); Self.printTargets(reports) }
        try Self.failIfAny(failed, of: files.count)
    }

    /// The Markdown table of `evaluate FOLDER` (and of `merge`): one row per recording and
    /// one for the radio's own direction under it.
    static func printTable(_ rows: [ObjectEvaluation]) {
        func f(_ x: Double?, _ format: String) -> String {
            guard let x, x.isFinite else { return "—" }
            return abs(x) < 1e6 ? String(format: format, x) : Figure.text(x, decimals: 0)
        }
        print("| recording | updates | angle err median ° | p95 ° | position err median m | p95 m | converged after s | angle available | transform available | CRLB √tr m | RMSE/CRLB | mean NEES | false converged | bound allows its angle after s | lag s | converged after first | changes/min |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows {
            let name = r.object == "total" ? "**total**" : (r.object as NSString).lastPathComponent
            print("| \(name) | \(r.updates) | \(f(r.horizontalAngleErrorDegrees?.median, "%.2f")) | \(f(r.horizontalAngleErrorDegrees?.p95, "%.2f")) | "
                + "\(f(r.positionErrorMetres?.median, "%.3f")) | \(f(r.positionErrorMetres?.p95, "%.3f")) | \(f(r.timeToConvergenceSeconds, "%.1f")) | "
                + "\(f(r.availability["horizontalAngle"].map { $0 * 100 }, "%.0f%%")) | \(f(r.availability["worldTransform"].map { $0 * 100 }, "%.0f%%")) | "
                + "\(f(r.crlbPositionMetres, "%.3f")) | \(f(r.rmseOverCRLB, "%.2f")) | \(f(r.meanNEES, "%.2f")) | \(f(r.falseConvergedRate, "%.3f")) | "
                + "\(f(r.boundAllowsAngleAfterSeconds, "%.1f")) | \(f(r.convergenceLagSeconds, "%+.1f")) | "
                + "\(f(r.convergedShareAfterFirst.map { $0 * 100 }, "%.0f%%")) | \(f(r.statusChangesPerMinute, "%.2f")) |")
            // Baseline: what the radio alone gives (its direction, no camera assistance).
            print("| \(r.object == "total" ? "total" : name) — raw UWB direction | \(r.updates) | \(f(r.rawHorizontalAngleErrorDegrees?.median, "%.2f")) | "
                + "\(f(r.rawHorizontalAngleErrorDegrees?.p95, "%.2f")) | — | — | — | \(f(r.rawDirectionAvailability.map { $0 * 100 }, "%.0f%%")) | — | — | — | — | — | — | — | — | — |")
        }
    }

    /// The targets of real distance-only sessions (``RealSessionTargets``), one row
    /// per target and object.
    static func printTargets(_ reports: [RecordingEvaluationReport]) {
        let checks = reports.flatMap { report in
            report.objects.flatMap { RealSessionTargets.checks(for: $0, subject: "\((report.recording as NSString).lastPathComponent) \($0.object)") }
        }
        print(TargetCheck.table(checks, subjectHeader: "recording, object", notJudgedReason: "the bound never allows the angle"))
    }

    /// Lists the recordings that could not be evaluated on standard error and exits 1.
    static func failIfAny(_ failed: [String], of total: Int) throws {
        guard !failed.isEmpty else { return }
        var text = "\(failed.count) of \(total) recordings could not be evaluated:\n"
        for f in failed { text += "  \(f)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        throw ExitCode.failure
    }
}
