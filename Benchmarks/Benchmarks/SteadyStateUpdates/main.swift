import Foundation
import NearbyFusion
import NearbyFusionSimulation

// Steady-state engine updates for instruction counting (`Benchmarks/instructions.sh` runs it
// under callgrind with two update counts and divides the difference): the coached path's
// poses and UWB updates after 4 s, an object registered where the recording's tag is (so it
// is tracked from the first update), one pose and one update per step, time moved on by
// 20 s per lap. Deterministic: the simulation is seeded.
//
//   SteadyStateUpdates COUNT MODE     MODE: range+direction | range | channel-sounding
let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[1]), count > 0,
      ["range+direction", "range", "channel-sounding"].contains(arguments[2]) else {
    print("usage: SteadyStateUpdates COUNT range+direction|range|channel-sounding")
    exit(64)
}
let mode = arguments[2]
var poses: [DevicePose] = [], updates: [UWBMeasurement] = []
var lastPose: DevicePose?
for event in Simulator.events(for: ScenarioCatalogue.coached(seed: 1)) {
    if case .pose(let p) = event { lastPose = p }
    if case .uwb(_, let m) = event, m.timestamp > 4, let p = lastPose { poses.append(p); updates.append(m) }
}
var engine = FusionEngine()
let tag = engine.register(objectID: "tag", ranging: mode == "channel-sounding" ? .bluetoothChannelSounding : .uwb,
                          knownPositionInWorld: Vector3(-1.5, 1.0, -4.8), covariance: .scaledIdentity(0.05 * 0.05))
var published = 0
for step in 0..<count {
    let k = step % updates.count
    let lap = Double(step / updates.count) * 20
    var pose = poses[k], m = updates[k]
    if mode != "range+direction" { m.directionInDevice = nil }
    pose.timestamp += lap
    m.timestamp += lap
    _ = engine.ingest(pose)
    if engine.ingest(m, for: tag).horizontalAngle != nil { published += 1 }
}
print("\(count) updates, \(published) with a horizontal angle")
