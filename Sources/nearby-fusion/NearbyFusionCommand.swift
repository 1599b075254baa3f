import ArgumentParser

@main
struct NearbyFusionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-fusion",
        abstract: "UWB + VIO fusion in the manner of Nearby Interaction's camera assistance.",
        discussion: """
        Exit codes: 0 success; 1 a recording or file could not be read or is invalid \
        (the message names file, line and key); 2 `coach` expectations failed; \
        64 bad command-line arguments.
        """,
        subcommands: [Replay.self, Evaluate.self, Coach.self, Report.self, Simulate.self, Accuracy.self, Bench.self])
}
