import Foundation
import BenchmarkFixtures

// Steady-state engine updates for instruction counting (`Benchmarks/instructions.sh` runs it
// under callgrind with two update counts and divides the difference): the steps of
// `TrackingFixture` — the coached path's tag, tracked from the first update, one pose and one
// update per step — as the timed "Engine update with outputs" benchmarks run them.
// Deterministic: the simulation is seeded.
//
//   SteadyStateUpdates COUNT MODE     MODE: range+direction | range | channel-sounding
let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[1]), count > 0,
      ["range+direction", "range", "channel-sounding"].contains(arguments[2]) else {
    print("usage: SteadyStateUpdates COUNT range+direction|range|channel-sounding")
    exit(64)
}
let mode = arguments[2]
var fixture = TrackingFixture(ranging: mode == "channel-sounding" ? .bluetoothChannelSounding : .uwb)
var published = 0
for step in 0..<count where fixture.step(step, range: true, direction: mode == "range+direction").horizontalAngle != nil {
    published += 1
}
print("\(count) updates, \(published) with a horizontal angle")
