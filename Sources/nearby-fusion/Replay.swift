import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionRecording

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the fusion engine over a recording and write the estimate stream.",
        discussion: "Prints a human summary on standard output (on standard error when --output is -).")

    @Argument(help: "A recording in the nearby-recording JSON Lines format (- for standard input).",
              completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(name: .shortAndLong, help: "Where to write the estimate stream (- for standard output).")
    var output: String?

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case jsonl, csv
    }

    @Option(help: "Estimate stream format: jsonl (the recording format's estimates) or csv.")
    var format: Format = .jsonl

    @Flag(inversion: .prefixedNo, help: "Override the header's camera assistance capability.")
    var cameraAssistance: Bool?

    @OptionGroup var engine: EngineOptions

    @Option(help: "Also write the fused object positions (each published worldTransform) as a TUM trajectory, for evo.")
    var tum: String?

    @Option(help: "With --tum: write the recording's truth at the same times as a TUM trajectory.")
    var truthTum: String?

    @Option(help: "With --tum: the object to export (default: the header's first).")
    var object: String?

    func validate() throws {
        if truthTum != nil && tum == nil { throw ValidationError("--truth-tum needs --tum") }
    }

    /// The header's first object (the TUM export's default); read before the replay.
    var firstObject: String? {
        guard tum != nil, recording != "-", var reader = try? RecordingReader(path: recording) else { return nil }
        return (try? reader.readHeader())?.objects.first?.id
    }

    func run() throws {
        var sink: OutputFile?
        if let output { sink = try OutputFile(path: output) }
        if format == .csv { try sink?.write(line: EstimateCSV.header) }
        let size = (try? FileManager.default.attributesOfItem(atPath: recording)[.size] as? Int) ?? 0
        let progress = ProgressBar(total: size)
        let tumSink = try tum.map { try OutputFile(path: $0) }
        let truthSink = try truthTum.map { try OutputFile(path: $0) }
        // Truth for the exported object: static, or the latest timed truth line. The replay
        // sees truth lines in file order, so a timed truth is matched to the next estimate.
        var truthByObject: [String: Vector3] = [:]
        let exportedObject = object ?? firstObject
        let summary: ReplaySummary
        do {
            summary = try RecordingReplay.run(path: recording, options: engine.fusionOptions, cameraAssistance: cameraAssistance, pipelined: true, onTruth: { id, p in
                truthByObject[id] = p
            }, onProgress: progress.update) { line in
                if format == .csv { try sink?.write(line: EstimateCSV.row(line)) } else { try sink?.writeLine { line.appendJSON(to: &$0) } }
                if let tumSink, case .object(let e) = line, e.objectID == exportedObject, let w = e.worldTransform {
                    try tumSink.write(line: TrajectoryFormats.tumLine(timestamp: e.timestamp, positionInWorld: w.translation))
                    if let truthSink, let p = truthByObject[e.objectID] {
                        try truthSink.write(line: TrajectoryFormats.tumLine(timestamp: e.timestamp, positionInWorld: p))
                    }
                }
            }
            progress.finish()
            // An object the recording does not have is an error, and no output is left behind
            // (nothing is committed before this point).
            if let object, !summary.objects.contains(where: { $0.objectID == object }) {
                let known = summary.objects.map(\.objectID).joined(separator: ", ")
                throw CommandFailure(message: "--object '\(object)': the recording has no such object (it has: \(known))")
            }
            try sink?.commit()
            try tumSink?.commit()
            try truthSink?.commit()
        } catch let e as RecordingError {
            throw CommandFailure(message: e.description)
        } catch let e as ReplayError {
            throw CommandFailure(message: e.description)
        }
        let text = ReplayReport.text(summary)
        if output == "-" { FileHandle.standardError.write(Data(text.utf8)) } else { print(text, terminator: "") }
    }
}

/// A one-line failure: printed as `error: …`, exit code 1.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension CommandFailure: LocalizedError {
    var errorDescription: String? { message }
}
