import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionSimulation

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a simulated recording of a built-in scenario (optionally along a recorded device path).",
        discussion: "Scenarios: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", "))

    @Option(help: "The scenario's name.")
    var scenario: String

    @Option(help: "The random seed (the same seed gives the same bytes).")
    var seed: UInt64 = 1

    @Option(name: .shortAndLong, help: "Where to write the recording (- for standard output).")
    var output: String = "-"

    @Option(help: "Use this TUM trajectory (timestamp tx ty tz qx qy qz qw) as the device path.")
    var tum: String?

    @Option(help: "Use this EuRoC ground-truth CSV as the device path.")
    var euroc: String?

    func validate() throws {
        if tum != nil && euroc != nil { throw ValidationError("give --tum or --euroc, not both") }
        guard ScenarioCatalogue.all.contains(where: { $0.name == scenario }) else {
            throw ValidationError("unknown scenario '\(scenario)'; known: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", "))
        }
    }

    func run() throws {
        let make = ScenarioCatalogue.all.first(where: { $0.name == scenario })!.make
        var simulation = make(seed)
        do {
            if let tum {
                simulation.trajectory = SampledDevicePath(poses: try TrajectoryFormats.readTUM(path: tum)).aligned()
                simulation.tremorAmplitude = 0
            } else if let euroc {
                simulation.trajectory = SampledDevicePath(poses: try TrajectoryFormats.readEuRoC(path: euroc)).aligned()
                simulation.tremorAmplitude = 0
            }
        } catch {
            throw CommandFailure(message: error.description)
        }
        let text = Simulator.recordingText(for: simulation)
        if output == "-" {
            FileHandle.standardOutput.write(Data(text.utf8))
        } else if !FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) {
            throw CommandFailure(message: "\(output): cannot create output file")
        }
    }
}
