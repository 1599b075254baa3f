import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// Every file in `Datasets/` is regenerated bit for bit from its seed and replays to the
/// outcome its `Datasets/README.md` row promises.
@Suite("Datasets")
struct DatasetTests {
    static let datasets = TestSupport.datasets

    /// (file, scenario, first convergence window in seconds or nil for never, final vertical estimate)
    static let expectations: [(String, Double?, Double?, VerticalDirectionEstimate?)] = [
        ("still-phone", nil, nil, nil),
        ("sideways-sweep", 1.0, 3.0, .same),
        ("coached-sweep", 1.0, 4.0, .same),
        ("floor-above", nil, nil, .above),
        ("behind-user", 15.0, 30.0, .same),
        ("distance-only", 20.0, 38.0, .same),
        ("dark-room", nil, nil, nil),
        ("nlos-20-percent", 1.0, 6.0, .same),
        ("camera-assistance-off", nil, nil, nil),
        ("two-tags", 1.0, 3.0, .same),
        ("walking-peer", 1.0, 3.0, .same),
        ("landscape-hold", nil, nil, .same),
        ("tum-fr1-xyz-uwb", 1.0, 3.0, .same),
        ("still-peer", 1.0, 4.0, .same),
        ("peer-stop-and-go", 1.0, 4.0, .same),
        ("tag-picked-up", 1.0, 3.0, .same),
        ("tag-picked-up-hinted", 1.0, 3.0, .same),
        ("tag-carried-away", 1.0, 3.0, .same),
        ("cs-coached-step", nil, nil, nil),
    ]

    /// The scenario behind a dataset file (the TUM one: the coached scenario's object along
    /// the real TUM path, as `simulate --scenario coached-sweep --tum …` makes it).
    static func scenario(_ name: String) throws -> SimulationScenario {
        if name == "tum-fr1-xyz-uwb" {
            var s = ScenarioCatalogue.coached(seed: 1)
            let poses = try TrajectoryFormats.readTUM(path: datasets.appendingPathComponent("tum-fr1-xyz/groundtruth.txt").path)
            s.useRecordedPath(poses)
            return s
        }
        let make = try #require(ScenarioCatalogue.all.first { $0.name == name }?.make)
        return make(1)
    }

    @Test(arguments: expectations.map(\.0))
    func datasetIsReproducibleFromItsSeed(name: String) throws {
        let onDisk = try String(contentsOf: Self.datasets.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
        #expect(Simulator.recordingText(for: try Self.scenario(name)) == onDisk)
    }

    @Test(arguments: expectations)
    func datasetReplaysToItsDocumentedOutcome(name: String, earliest: Double?, latest: Double?, vertical: VerticalDirectionEstimate?) throws {
        var angleTimes: [Double] = []
        let summary = try RecordingReplay.run(path: Self.datasets.appendingPathComponent("\(name).jsonl").path) { line in
            if case .object(let e) = line, e.horizontalAngle != nil { angleTimes.append(e.timestamp) }
        }
        let object = try #require(summary.objects.first)
        if let earliest, let latest {
            let t = try #require(object.firstConvergedTime)
            #expect(t >= earliest && t <= latest, "\(name) converged at \(t)")
            let error = try #require(object.finalEstimate?.worldTransform.map { ($0.translation - object.truthInWorld!).length })
            #expect(error < 0.25)
        } else {
            #expect(object.firstConvergedTime == nil)
        }
        #expect(object.finalEstimate?.verticalDirectionEstimate == vertical)
        if name == "two-tags" {
            // The second tag converges too, before it is removed at 8 s.
            let bag = try #require(summary.objects.last)
            #expect(bag.objectID == "bag" && (bag.firstConvergedTime ?? 99) < 3)
            #expect((bag.finalEstimate?.timestamp ?? 99) < 8)
        }
        if name == "cs-coached-step" {
            // Distance only: an angle once the sweeps and the step determine it (the bound
            // allows 10° at 13 s), held to the end of the coached part.
            let first = try #require(angleTimes.first)
            #expect(first >= 12 && first <= 17, "first angle at \(first)")
            #expect(angleTimes.count >= 25, "\(angleTimes.count) angles")
        }
        if name == "walking-peer" || name == "landscape-hold" {
            #expect(object.finalEstimate?.horizontalAngle != nil)
        }
    }
}
