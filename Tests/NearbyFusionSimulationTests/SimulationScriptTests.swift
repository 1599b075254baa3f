import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("Simulation scripts")
struct SimulationScriptTests {
    static let scripts = TestSupport.packageRoot.appendingPathComponent("Datasets/scripts")

    static func parse(_ name: String, seed: UInt64 = 1) throws -> SimulationScenario {
        let text = try String(contentsOf: scripts.appendingPathComponent(name), encoding: .utf8)
        return try SimulationScript.parse(text, file: name, directory: scripts.path, seed: seed)
    }

    @Test(arguments: [("coached-sweep.sim", "coached-sweep"), ("floor-above.sim", "floor-above"), ("two-tags.sim", "two-tags")])
    func scriptsReproduceTheirBuiltInScenarioByteForByte(script: String, scenario: String) throws {
        let make = try #require(ScenarioCatalogue.all.first { $0.name == scenario }?.make)
        #expect(Simulator.recordingText(for: try Self.parse(script)) == Simulator.recordingText(for: make(1)))
    }

    @Test func aBusyScriptParsesEveryStatement() throws {
        let s = try Self.parse("office-walk.sim")
        #expect(s.objects.map(\.id) == ["lamp", "friend"])
        #expect(s.objects[1].kind == .peer && s.objects[1].velocityInWorld == Vector3(0.25, 0, 0))
        #expect(s.objects[1].removedAt == 18 && s.objects[1].removalReason == .peerEnded)
        #expect(s.vio.ambientIntensity == 300)
        #expect(s.radio.nlosProbability == 0.1 && s.radio.nlosMeanBurstLength == 4 && s.radio.dropoutProbability == 0.03)
        #expect(s.radio.bodyOcclusionBiasRange == 0.3...0.7 && s.radio.occluders.count == 1)
        #expect(abs(s.trajectory.duration - 22.4) < 1e-9)
        let events = Simulator.events(for: s)
        #expect(events.contains { if case .removed("friend", _, .peerEnded) = $0 { return true } else { return false } })
    }

    @Test func aRecordedPathReplacesTheMotion() throws {
        let text = "object tag accessory at 0 1 -4\npath tum ../tum-fr1-xyz/groundtruth.txt\n"
        let s = try SimulationScript.parse(text, file: "real.sim", directory: Self.scripts.path, seed: 1)
        #expect(abs(s.trajectory.duration - 29.9) < 0.2)
        #expect(s.tremorAmplitude == 0)
        // Scene statements in any order: a `start` after the `path` still places it.
        let later = try SimulationScript.parse(text + "start 2 1.5 -1\n", file: "real.sim", directory: Self.scripts.path, seed: 1)
        #expect((later.trajectory.pose(at: 0).positionInWorld - Vector3(2, 1.5, -1)).length < 1e-12)
    }

    static let errors: [(String, String)] = [
        ("object a accessory at 0 1 -4\njump 3\n", "bad.sim:2: unknown statement 'jump'"),
        ("object a accessory at 0 1 -4\nsweep-sideways 3 amplitude\n", "bad.sim:2: expected a number for amplitude"),
        ("object a accessory at 0 1 -4\nsweep-sideways 3 speed 2\n", "bad.sim:2: unknown option 'speed'"),
        ("object a accessory at 0 1 -4\nstill -1\n", "bad.sim:2: the duration must be positive"),
        ("object a lamp at 0 1 -4\nstill 1\n", "bad.sim:1: unknown object kind 'lamp' (accessory or peer)"),
        ("object a accessory 0 1 -4\nstill 1\n", "bad.sim:1: expected 'at', found '0'"),
        ("still 1\n", "bad.sim: no object: add e.g. 'object tag accessory at 0 1 -4'"),
        ("object a accessory at 0 1 -4\n", "bad.sim: no motion: add e.g. 'still 2' or 'sweep-sideways 3'"),
        ("object a accessory at 0 1 -4\nradio nlos 1.5\nstill 1\n", "bad.sim:2: nlos must be between 0 and 1"),
        ("object a accessory at 0 1 -4\nhold sideways\n", "bad.sim:2: unknown hold 'sideways' (portrait or landscape)"),
        ("object a accessory at 0 1 -4\nstill 1 2\n", "bad.sim:2: unexpected '2'"),
        ("device toaster\n", "bad.sim:1: unknown device profile 'toaster' (phone, phone-without-elevation, watch, no-camera-assistance)"),
    ]

    @Test(arguments: errors)
    func badScriptsNameTheLine(text: String, message: String) {
        #expect(throws: ScriptError.self) { try SimulationScript.parse(text, file: "bad.sim", seed: 1) }
        do { _ = try SimulationScript.parse(text, file: "bad.sim", seed: 1) } catch { #expect(error.description == message) }
    }

    @Test func theCommandRunsAScript() throws {
        let result = try TestSupport.run(["simulate", "Datasets/scripts/coached-sweep.sim", "--seed", "1"])
        #expect(result.status == 0)
        let onDisk = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl"), encoding: .utf8)
        #expect(result.stdout == onDisk)
        let neither = try TestSupport.run(["simulate"])
        #expect(neither.status == 64)
    }
}
