import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionEvaluation

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a self-contained HTML report (inline SVG, no network) of a replay.",
        discussion: """
        At the top: the device's capabilities and, when the recording has truth, the evaluation \
        table. Per object: a top-down (X–Z) view, a zoomed view of the object's neighbourhood and a \
        side (X–Y) view of the device path with the true and estimated positions and the 2σ \
        ellipse, the top-down view with an arrow for each new piece of guidance (where the \
        engine told the user to move); then, on one shared time axis: horizontalAngle (fused, \
        raw radio, truth), its error with the filter's 2σ band, distance, the position error \
        with its 2σ band, the vertical estimate against truth, the published motion, the \
        guidance, and the coaching lanes (one per reason).
        """)

    @Argument(help: "A recording.", completion: .file(extensions: ["jsonl"]))
    var recording: String

    @Option(name: .shortAndLong, help: "The HTML file to write.")
    var output: String

    @OptionGroup var engine: EngineOptions

    func run() throws {
        let data: ReportData
        do { data = try ReportData.collect(path: recording, options: engine.fusionOptions) } catch let e as RecordingError {
            throw CommandFailure(message: e.description)
        } catch let e as ReplayError {
            throw CommandFailure(message: e.description)
        }
        let html = ReportHTML.render(data)
        let file = try OutputFile(path: output)
        try file.write(html)
        try file.commit()
        print("wrote \(output) (\(html.utf8.count / 1024) KiB, \(data.objectCount) object\(data.objectCount == 1 ? "" : "s"))")
    }
}
