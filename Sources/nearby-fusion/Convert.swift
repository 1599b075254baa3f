import ArgumentParser
import Foundation
import NearbyFusionRecording

/// Public datasets with real radios, converted to the recording format.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a public dataset with real UWB ranges to a recording.",
        discussion: """
        lias-planar-uwb FOLDER: the LIAS planar UWB dataset (Jiang et al., ICRA 2023, MIT licence; \
        FOLDER holds UWB_dynamic_exp_fast.csv and motion_capture_dynamic_exp_fast.csv, as \
        the dataset ships them): a trolley's tag ranging to eight surveyed anchors, \
        the trolley's motion-capture pose as the device path. The conventions applied and what \
        the ranges carry are in the documentation of LIASPlanarUWB (NearbyFusionRecording).
        """)

    @Argument(help: "The dataset's format: lias-planar-uwb.", completion: .list(["lias-planar-uwb"]))
    var format: String

    @Argument(help: "The dataset's folder.", completion: .directory)
    var folder: String

    @Option(name: .shortAndLong, help: "Where to write the recording (- for standard output).")
    var output: String = "-"

    @Option(help: "Which tag is the device's antenna (0, 1 or 2).")
    var tag = 0

    @Option(help: "Range updates per anchor per second (the rows are thinned to at most this).")
    var rangeRate = 10.0

    @Option(help: "Device poses per second.")
    var poseRate = 60.0

    @Option(help: "Metres subtracted from every range (an antenna-delay calibration of your own).")
    var rangeOffset = 0.0

    func validate() throws {
        guard format == "lias-planar-uwb" else { throw ValidationError("unknown format '\(format)'; known: lias-planar-uwb") }
        guard (0...2).contains(tag) else { throw ValidationError("--tag must be 0, 1 or 2") }
        guard rangeRate.isFinite, rangeRate > 0, poseRate.isFinite, poseRate > 0 else {
            throw ValidationError("--range-rate and --pose-rate must be positive")
        }
        guard rangeOffset.isFinite else { throw ValidationError("--range-offset must be a finite number of metres") }
    }

    func run() throws {
        var options = LIASPlanarUWB.Options()
        options.tag = tag
        options.rangeRateHz = rangeRate
        options.poseRateHz = poseRate
        options.rangeOffsetMetres = rangeOffset
        let directory = URL(fileURLWithPath: folder)
        let text: String
        do {
            text = try LIASPlanarUWB.recordingText(
                uwbPath: directory.appendingPathComponent("UWB_dynamic_exp_fast.csv").path,
                motionCapturePath: directory.appendingPathComponent("motion_capture_dynamic_exp_fast.csv").path,
                options: options)
        } catch {
            throw CommandFailure(message: error.description)
        }
        let file = try OutputFile(path: output)
        try file.write(text)
        try file.commit()
    }
}
