import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionSimulation

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a simulated recording of a built-in scenario.",
        discussion: "Scenarios: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", "))

    @Option(help: "The scenario's name.")
    var scenario: String

    @Option(help: "The random seed (the same seed gives the same bytes).")
    var seed: UInt64 = 1

    @Option(name: .shortAndLong, help: "Where to write the recording (- for standard output).")
    var output: String = "-"

    func validate() throws {
        guard ScenarioCatalogue.all.contains(where: { $0.name == scenario }) else {
            throw ValidationError("unknown scenario '\(scenario)'; known: " + ScenarioCatalogue.all.map(\.name).joined(separator: ", "))
        }
    }

    func run() throws {
        let make = ScenarioCatalogue.all.first(where: { $0.name == scenario })!.make
        let text = Simulator.recordingText(for: make(seed))
        if output == "-" {
            FileHandle.standardOutput.write(Data(text.utf8))
        } else if !FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) {
            throw CommandFailure(message: "\(output): cannot create output file")
        }
    }
}
