import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a simulated recording from a script or a built-in scenario.",
        discussion: "Built-in scenarios: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", ")
            + ". --tum/--euroc replace the device path with a recorded one.")

    @Argument(help: "A simulation script (format: the article 'Simulation scripts' of NearbyFusionSimulation's documentation; examples in Datasets/scripts/).",
              completion: .file(extensions: ["sim"]))
    var script: String?

    @Option(help: "A built-in scenario instead of a script.", completion: .list(ScenarioCatalogue.all.map(\.name)))
    var scenario: String?

    @Option(help: "The random seed (the same seed gives the same bytes).")
    var seed: UInt64 = 1

    @Option(name: .shortAndLong, help: "Where to write the recording (- for standard output).")
    var output: String = "-"

    @Option(help: "Use this TUM trajectory (timestamp tx ty tz qx qy qz qw) as the device path.", completion: .file())
    var tum: String?

    @Option(help: "Use this EuRoC ground-truth CSV as the device path.", completion: .file(extensions: ["csv"]))
    var euroc: String?

    func validate() throws {
        if tum != nil && euroc != nil { throw ValidationError("give --tum or --euroc, not both") }
        switch (script, scenario) {
        case (nil, nil): throw ValidationError("give a SCRIPT or --scenario NAME")
        case (_?, _?): throw ValidationError("give a SCRIPT or --scenario NAME, not both")
        case (nil, let name?):
            guard ScenarioCatalogue.all.contains(where: { $0.name == name }) else {
                throw ValidationError("unknown scenario '\(name)'; known: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", "))
            }
        default: break
        }
    }

    func run() throws {
        var simulation: SimulationScenario
        if let script {
            guard let data = FileManager.default.contents(atPath: script) else {
                throw CommandFailure(message: "\(script): \(RecordingError.cannotOpen(script))")
            }
            let text: String
            do { text = try RecordingError.utf8Text(data, file: script) } catch { throw CommandFailure(message: error.description) }
            do {
                simulation = try SimulationScript.parse(text, file: script,
                                                        directory: (script as NSString).deletingLastPathComponent, seed: seed)
            } catch {
                throw CommandFailure(message: error.description)
            }
        } else {
            simulation = ScenarioCatalogue.all.first(where: { $0.name == scenario })!.make(seed)
        }
        do {
            if let tum {
                simulation.useRecordedPath(try TrajectoryFormats.readTUM(path: tum))
            } else if let euroc {
                simulation.useRecordedPath(try TrajectoryFormats.readEuRoC(path: euroc))
            }
        } catch {
            throw CommandFailure(message: error.description)
        }
        let text = Simulator.recordingText(for: simulation)
        let file = try OutputFile(path: output)
        try file.write(text)
        try file.commit()
    }
}
