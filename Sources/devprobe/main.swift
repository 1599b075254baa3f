import Foundation
import NearbyFusion
import NearbyFusionSimulation

let names = CommandLine.arguments.count > 1 ? Array(CommandLine.arguments.dropFirst()) : ScenarioCatalogue.all.map(\.name)
for name in names {
    guard let make = ScenarioCatalogue.all.first(where: { $0.name == name })?.make else { continue }
    var angleErrors: [Double] = [], posErrors: [Double] = [], conv: [Double] = [], worst: [Double] = [], nees: [Double] = []
    var never = 0
    for seed in UInt64(1)...20 {
        var sc = make(seed)
        if ProcessInfo.processInfo.environment["NODRIFT"] != nil { sc.vio.driftFraction = 0; sc.vio.positionNoise = 0; sc.vio.orientationNoise = 0 }
        var opts = FusionOptions()
        if let m = ProcessInfo.processInfo.environment["MERGE"] { opts.mergeDistanceSquared = Double(m)! }
        if let m = ProcessInfo.processInfo.environment["PRUNE"] { opts.pruneWeight = Double(m)! }
        let run = ScenarioRun(sc, options: opts)
        angleErrors += run.horizontalAngleErrors
        posErrors += run.positionErrors
        if let c = run.firstConvergedTime { conv.append(c) } else { never += 1 }
        worst.append(run.worstConvergedAngleError)
        if let n = run.finalNEES { nees.append(n) }
    }
    func d(_ x: Double?) -> String { x.map { String(format: "%.2f", Angle.degrees(radians: $0)) } ?? "-" }
    func m(_ x: Double?) -> String { x.map { String(format: "%.3f", $0) } ?? "-" }
    print(name.padding(toLength: 22, withPad: " ", startingAt: 0),
          "angle med \(d(Statistics.quantile(angleErrors, 0.5)))° p95 \(d(Statistics.quantile(angleErrors, 0.95)))°",
          "pos med \(m(Statistics.quantile(posErrors, 0.5))) p95 \(m(Statistics.quantile(posErrors, 0.95)))",
          "conv med \(m(Statistics.quantile(conv, 0.5))) max \(m(conv.max())) never \(never)",
          "worstConv \(d(worst.max()))° NEES \(m(nees.isEmpty ? nil : nees.reduce(0, +) / Double(nees.count)))")
}

if ProcessInfo.processInfo.environment["TRACE"] != nil, let name = names.first,
   let make = ScenarioCatalogue.all.first(where: { $0.name == name })?.make {
    let run = ScenarioRun(make(UInt64(ProcessInfo.processInfo.environment["TRACE"]!) ?? 1))
    for (k, u) in run.updates.enumerated() where k % (Int(ProcessInfo.processInfo.environment["EVERY"] ?? "5") ?? 5) == 0 {
        let e = u.estimate
        let a = u.moments.map { String(format: "(%.2f %.2f %.2f) sd(%.2f %.2f %.2f)", $0.meanInWorld.x, $0.meanInWorld.y, $0.meanInWorld.z,
                                       $0.covariance.m00.squareRoot(), $0.covariance.m11.squareRoot(), $0.covariance.m22.squareRoot()) } ?? "-"
        print(String(format: "%5.1f", e.timestamp), "n=\(u.hypothesisCount)", a,
              "truth (\(String(format: "%.2f %.2f %.2f", u.truthInWorld.x, u.truthInWorld.y, u.truthInWorld.z)))",
              e.convergence.map { $0.status.name + " " + $0.status.reasons.names.joined(separator: ",") } ?? "-",
              e.verticalDirectionEstimate?.rawValue ?? "nil",
              snapshotInfo(u))
    }
}
func snapshotInfo(_ u: EvaluatedUpdate) -> String {
    guard ProcessInfo.processInfo.environment["HYP"] != nil else { return "" }
    return "\n      " + u.hypotheses.sorted { $0.logWeight > $1.logWeight }.prefix(8).map {
        String(format: "w=%.3f (%.2f %.2f %.2f) sd(%.2f %.2f %.2f) prior (%.2f %.2f %.2f) pw %.2f", exp($0.logWeight), $0.meanInWorld.x, $0.meanInWorld.y, $0.meanInWorld.z,
               $0.covariance.m00.squareRoot(), $0.covariance.m11.squareRoot(), $0.covariance.m22.squareRoot(),
               $0.priorMeanInWorld.x, $0.priorMeanInWorld.y, $0.priorMeanInWorld.z, $0.priorLogWeight) }.joined(separator: "\n      ")
}

if ProcessInfo.processInfo.environment["LIK"] != nil {
    var sc = ScenarioCatalogue.behindUser(seed: 1)
    sc.vio.driftFraction = 0
    let ev = Simulator.events(for: sc)
    var pose: DevicePose?
    let cands: [(String, Vector3)] = [("truth", Vector3(-0.7, 1.1, 3.9)), ("top", Vector3(-0.7, 5.2, 0.0)), ("bottom", Vector3(-0.7, -2.4, 0))]
    var ll = [Double](repeating: 0, count: cands.count)
    for e in ev {
        if case .pose(let p) = e { pose = p }
        if case .uwb(_, let m) = e, let p = pose, let r = m.distance {
            if m.timestamp > 7.4 { break }
            for (k, c) in cands.enumerated() {
                let res = r - (c.1 - p.positionInWorld).length
                ll[k] += -0.5 * res * res / 0.0036
            }
            if Int(m.timestamp * 10) % 10 == 0 { print(String(format: "%.1f", m.timestamp), ll.map { String(format: "%.1f", $0) }) }
        }
    }
}

if ProcessInfo.processInfo.environment["BATCH"] != nil {
    var sc = ScenarioCatalogue.behindUser(seed: 1)
    sc.vio.driftFraction = 0; sc.vio.positionNoise = 0; sc.vio.orientationNoise = 0
    let ev = Simulator.events(for: sc)
    var pose: DevicePose?
    var window = MeasurementWindow(capacity: 160)
    var first: (Double, Vector3)?
    var incMix: PositionMixture?
    for e in ev {
        if case .pose(let p) = e { pose = p }
        if case .uwb(_, let m) = e, let p = pose, let r = m.distance {
            if m.timestamp > Double(ProcessInfo.processInfo.environment["BATCH"]!)! { break }
            if m.timestamp < 0.3 { continue }
            if first == nil { first = (r, p.positionInWorld); print("first", r, p.positionInWorld); continue }
            window.append(WindowEntry(antennaInWorld: p.positionInWorld, worldFromDevice: p.worldFromDevice, rangeMetres: r,
                                      angles: Vector2(0, 0), hasRange: true, angleKind: 0, directionMissing: m.directionInDevice == nil, multiplicity: 1))
            if ProcessInfo.processInfo.environment["INC"] != nil {
                if incMix == nil {
                    incMix = PositionMixture(capacity: 96)
                    incMix!.initialize(rangeMetres: first!.0, antennaInWorld: first!.1, forwardInWorld: Vector3(0, 0, -1), options: FusionOptions())
                }
                BatchRefinement.refine(&incMix!, window: window, options: FusionOptions())
                if ProcessInfo.processInfo.environment["INC"] == "prune" { incMix!.pruneAndMerge(minimumWeight: 1e-4, mergeDistanceSquared: 1) }
                let best = incMix!.hypotheses.max(by: { $0.logWeight < $1.logWeight })!
                let beh = incMix!.hypotheses.first(where: { abs($0.priorMeanInWorld.z - 3.98) < 0.01 && abs($0.priorMeanInWorld.y - 1.40) < 0.02 })
                print(String(format: "%.1f n=%d best (%.2f %.2f %.2f) w=%.3f behind %@", m.timestamp, incMix!.count, best.meanInWorld.x, best.meanInWorld.y, best.meanInWorld.z, exp(best.logWeight),
                             beh.map { String(format: "(%.2f %.2f %.2f) w=%.4f", $0.meanInWorld.x, $0.meanInWorld.y, $0.meanInWorld.z, exp($0.logWeight)) } ?? "gone"))
            }
        }
    }
    print("window", window.entries.count, window.entries.map(\.multiplicity).reduce(0, +))
    var mix = PositionMixture(capacity: 96)
    mix.initialize(rangeMetres: first!.0, antennaInWorld: first!.1, forwardInWorld: Vector3(0, 0, -1), options: FusionOptions())
    BatchRefinement.refine(&mix, window: window, options: FusionOptions())
    for h in mix.hypotheses.sorted(by: { $0.logWeight > $1.logWeight }).prefix(6) {
        print(String(format: "w=%.3f (%.2f %.2f %.2f) prior (%.2f %.2f %.2f) sd(%.2f %.2f %.2f)", exp(h.logWeight), h.meanInWorld.x, h.meanInWorld.y, h.meanInWorld.z,
                     h.priorMeanInWorld.x, h.priorMeanInWorld.y, h.priorMeanInWorld.z,
                     h.covariance.m00.squareRoot(), h.covariance.m11.squareRoot(), h.covariance.m22.squareRoot()))
    }
}

