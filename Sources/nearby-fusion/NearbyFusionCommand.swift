import ArgumentParser

@main
struct NearbyFusionCommand: ParsableCommand {
    /// The tool's version and the recording format version it reads and writes.
    static let version = "nearby-fusion 0.5.0 (nearby-recording format 1)"

    static let configuration = CommandConfiguration(
        commandName: "nearby-fusion",
        abstract: "UWB + VIO fusion in the manner of Nearby Interaction's camera assistance.",
        discussion: """
        Exit codes: 0 success; 1 a recording or file could not be read or is invalid \
        (the message names file, line and key); 2 `coach` expectations failed; \
        64 bad command-line arguments.
        """,
        version: NearbyFusionCommand.version,
        subcommands: [Replay.self, Evaluate.self, Merge.self, Coach.self, Report.self, Simulate.self, Convert.self, Accuracy.self, Bench.self])
}
