import ArgumentParser
import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation

struct Accuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure accuracy, convergence time and consistency over seeded simulated scenarios.",
        discussion: """
        Runs each built-in scenario with seeds 1…N through the engine in memory and prints, per \
        scenario: horizontalAngle error (median, p95, over every published angle), worldTransform \
        position error (median, p95), time of first convergence (median, max, and how many runs \
        never converged), the worst horizontal-angle error at a `converged` update, and the mean \
        NEES of the final position (3 is ideal).
        """)

    @Option(help: "Seeds per scenario.")
    var seeds: Int = 20

    @Option(help: "Scenarios to run (default: all).")
    var scenario: [String] = []

    func validate() throws {
        guard seeds >= 1 else { throw ValidationError("--seeds must be at least 1") }
        for name in scenario where !ScenarioCatalogue.all.contains(where: { $0.name == name }) {
            throw ValidationError("unknown scenario '\(name)'")
        }
    }

    func run() throws {
        let selected = ScenarioCatalogue.all.filter { scenario.isEmpty || scenario.contains($0.name) }
        func degrees(_ x: Double?) -> String { x.map { String(format: "%.2f", Angle.degrees(radians: $0)) } ?? "—" }
        func metres(_ x: Double?) -> String { x.map { String(format: "%.3f", $0) } ?? "—" }
        func seconds(_ x: Double?) -> String { x.map { String(format: "%.1f", $0) } ?? "—" }
        print("| scenario | angle err median ° | angle err p95 ° | position err median m | position err p95 m | first converged median s | max s | never | worst angle err when converged ° | mean NEES |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (name, make) in selected {
            var angleErrors: [Double] = [], positionErrors: [Double] = [], converged: [Double] = [], nees: [Double] = []
            var never = 0
            var worst = 0.0
            for seed in 1...seeds {
                let run = ScenarioRun(make(UInt64(seed)))
                angleErrors += run.horizontalAngleErrors
                positionErrors += run.positionErrors
                if let t = run.firstConvergedTime { converged.append(t) } else { never += 1 }
                worst = max(worst, run.worstConvergedAngleError)
                if let n = run.finalNEES { nees.append(n) }
            }
            let meanNEES = nees.isEmpty ? "—" : String(format: "%.2f", nees.reduce(0, +) / Double(nees.count))
            print("| \(name) | \(degrees(Statistics.quantile(angleErrors, 0.5))) | \(degrees(Statistics.quantile(angleErrors, 0.95))) | "
                + "\(metres(Statistics.quantile(positionErrors, 0.5))) | \(metres(Statistics.quantile(positionErrors, 0.95))) | "
                + "\(seconds(Statistics.quantile(converged, 0.5))) | \(seconds(converged.max())) | \(never)/\(seeds) | "
                + "\(converged.isEmpty ? "—" : degrees(worst)) | \(meanNEES) |")
        }
    }
}
