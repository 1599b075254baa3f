import Foundation
import BenchmarkFixtures

// Steady-state engine updates for instruction counting (`Benchmarks/instructions.sh` runs it
// under callgrind with two update counts and divides the difference): the steps of
// `TrackingFixture` — the coached path's tag, tracked from the first update, one pose and one
// update per step — as the timed "Engine update with outputs" benchmarks run them; or, with
// `c-reference`, the hand-written C EKF step on the same updates (`ReferenceFixture`), which
// the engine's range + direction update is compared with.
// Deterministic: the simulation is seeded.
//
//   SteadyStateUpdates COUNT MODE     MODE: range+direction | range | channel-sounding | c-reference

/// Runs `count` steps of `mode` on fixtures held in locals (a global variable would be checked
/// for exclusive access at every step, and counted with it). Returns what to print.
func run(count: Int, mode: String) -> String {
    if mode == "c-reference" {
        var reference = ReferenceFixture()
        reference.steps(from: 0, count: count)
        return "\(count) C reference steps, position (\(reference.position.map { String(format: "%.3f", $0) }.joined(separator: ", ")))"
    }
    var fixture = TrackingFixture(ranging: mode == "channel-sounding" ? .bluetoothChannelSounding : .uwb)
    var published = 0
    for step in 0..<count where fixture.step(step, range: true, direction: mode == "range+direction").horizontalAngle != nil {
        published += 1
    }
    return "\(count) updates, \(published) with a horizontal angle"
}

let arguments = CommandLine.arguments
let modes = ["range+direction", "range", "channel-sounding", "c-reference"]
guard arguments.count == 3, let count = Int(arguments[1]), count > 0, modes.contains(arguments[2]) else {
    print("usage: SteadyStateUpdates COUNT " + modes.joined(separator: "|"))
    exit(64)
}
print(run(count: count, mode: arguments[2]))
