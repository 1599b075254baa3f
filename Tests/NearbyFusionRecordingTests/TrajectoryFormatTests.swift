import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

@Suite("TUM and EuRoC trajectories")
struct TrajectoryFormatTests {
    static let tumFile = TestSupport.packageRoot.appendingPathComponent("Datasets/tum-fr1-xyz/groundtruth.txt").path

    @Test func tumGroundTruthBecomesAnUprightARKitPath() throws {
        let poses = try TrajectoryFormats.readTUM(path: Self.tumFile)
        #expect(poses.count == 3000)
        let first = try #require(poses.first)
        // TUM's first row: 1.3563 0.6305 1.6380 → (x, z, −y) in ARKit's Y-up world.
        #expect((first.positionInWorld - Vector3(1.3563, 1.6380, -0.6305)).length < 1e-9)
        // The Kinect looks down at a desk: the device's −Z points below the horizon and its
        // top edge (+Y) points up.
        #expect(first.forwardInWorld.y < -0.2)
        #expect(first.worldFromDevice.rotate(Vector3(0, 1, 0)).y > 0.5)
        // Heights stay in a handheld range (world +Y is up).
        #expect(poses.allSatisfy { $0.positionInWorld.y > 1.2 && $0.positionInWorld.y < 2.0 })
    }

    @Test func euRoCRowsUseNanosecondsAndScalarFirstQuaternions() throws {
        let csv = """
        #timestamp, p_RS_R_x [m], p_RS_R_y [m], p_RS_R_z [m], q_RS_w [], q_RS_x [], q_RS_y [], q_RS_z [], v_RS_R_x [m s^-1]
        1403636579758555392,4.688319,-1.786938,0.783338,0.534108,-0.153029,-0.827383,-0.082152,-0.027876
        1403636579763555584,4.688177,-1.786770,0.787350,1.0,0.0,0.0,0.0,-0.040716
        """
        let path = try TestSupport.temporaryFile(csv, name: "data.csv")
        let poses = try TrajectoryFormats.readEuRoC(path: path)
        #expect(poses.count == 2)
        // 5.000192 ms apart; seconds since the epoch as a Double resolve about 0.24 µs.
        #expect(abs(poses[1].timestamp - poses[0].timestamp - 0.005000192) < 5e-7)
        #expect((poses[0].positionInWorld - Vector3(4.688319, 0.783338, 1.786938)).length < 1e-9)
        // Identity body attitude (x forward, z up): the device looks along the body's +x,
        // i.e. world +X of EuRoC, which is ARKit +X too; its top edge is up.
        #expect((poses[1].forwardInWorld - Vector3(1, 0, 0)).length < 1e-9)
        #expect((poses[1].worldFromDevice.rotate(Vector3(0, 1, 0)) - Vector3(0, 1, 0)).length < 1e-9)
    }

    @Test func badTrajectoryLinesNameFileLineAndColumn() throws {
        let cases: [(String, String)] = [
            ("1 2 3\n", "traj.txt:1: expected 8 columns (timestamp tx ty tz qx qy qz qw), found 3"),
            ("1 0 0 0 0 0 0 2\n", "traj.txt:1: key 'qx..qw': not a unit quaternion (norm 2.0)"),
            ("# c\n1 0 0 0 0 0 0 1\n0.5 0 0 0 0 0 0 1\n", "traj.txt:3: key 'timestamp': time goes backwards (0.5 after 1.0)"),
            ("1 0 x 0 0 0 0 1\n", "traj.txt:1: key 'ty': not a number: 'x'"),
        ]
        for (text, message) in cases {
            let path = try TestSupport.temporaryFile(text, name: "traj.txt")
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/"
            do { _ = try TrajectoryFormats.readTUM(path: path); Issue.record("accepted \(text)") } catch {
                #expect(error.description.replacingOccurrences(of: directory, with: "") == message)
            }
        }
    }

    /// Bytes that are not UTF-8 are named by line and column, in a trajectory and in every
    /// other text file a command reads whole (coaching expectations, simulation scripts):
    /// before, each was decoded lossily and the user saw a complaint about some U+FFFD.
    @Test func invalidUTF8InTextInputsIsNamedByLineAndColumn() throws {
        let dir = Scratch.directory.appendingPathComponent("utf8-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ first: String, _ bad: [UInt8]) throws -> String {
            let url = dir.appendingPathComponent(name)
            try (Data(first.utf8) + Data(bad)).write(to: url)
            return url.path
        }
        let tum = try write("t.tum", "1 0 0 0 0 0 0 1\n", Array("2 0".utf8) + [0xC3, 0x28] + Array(" 0 0 0 0 1\n".utf8))
        do { _ = try TrajectoryFormats.readTUM(path: tum); Issue.record("accepted invalid UTF-8") } catch {
            #expect(error.description == tum + ":2: invalid UTF-8 at column 4")
        }
        let euroc = try write("e.csv", "#t,x\n", [0x31, 0xE2, 0x82])
        do { _ = try TrajectoryFormats.readEuRoC(path: euroc); Issue.record("accepted invalid UTF-8") } catch {
            #expect(error.description == euroc + ":2: invalid UTF-8 at column 2 (truncated sequence)")
        }
        let expect = try write("x.expect", "# expectations\n", Array("at 2 s ".utf8) + [0xFF] + Array("\n".utf8))
        let coach = try TestSupport.run(["coach", "Datasets/coached-sweep.jsonl", "--expect", expect])
        #expect(coach.status != 0)
        #expect(coach.stderr.contains(expect + ":2: invalid UTF-8 at column 8"))
        let script = try write("s.script", "seed 1\n", [0xED, 0xA0, 0x80])
        let simulate = try TestSupport.run(["simulate", script])
        #expect(simulate.status != 0)
        #expect(simulate.stderr.contains(script + ":2: invalid UTF-8 at column 1"))
    }

    @Test func sampledPathInterpolatesAndAlignsToTheScenarioStart() throws {
        let poses = try TrajectoryFormats.readTUM(path: Self.tumFile)
        let path = SampledDevicePath(poses: poses).aligned()
        let start = path.pose(at: 0)
        #expect((start.positionInWorld - Vector3(0, 1.4, 0)).length < 1e-12)
        let f = start.worldFromDevice.rotate(Vector3(0, 0, -1))
        #expect(abs(f.x) < 1e-9 && f.z < 0)
        // Between two samples (10 ms apart) the interpolated position lies between them.
        let a = path.pose(at: path.times[10]).positionInWorld, b = path.pose(at: path.times[11]).positionInWorld
        let mid = path.pose(at: 0.5 * (path.times[10] + path.times[11])).positionInWorld
        #expect((mid - 0.5 * (a + b)).length < 1e-9)
        #expect(abs(path.duration - (poses.last!.timestamp - poses.first!.timestamp)) < 1e-9)
    }

    @Test func replayExportsEstimatesAndTruthAsTUM() throws {
        let dir = Scratch.directory.appendingPathComponent("tum-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let estimates = dir.appendingPathComponent("est.tum").path, truth = dir.appendingPathComponent("truth.tum").path
        let result = try TestSupport.run(["replay", "Datasets/coached-sweep.jsonl", "--tum", estimates, "--truth-tum", truth])
        #expect(result.status == 0)
        let e = try String(contentsOfFile: estimates, encoding: .utf8).split(separator: "\n")
        let t = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n")
        #expect(e.count > 50 && e.count == t.count)
        let fields = e[e.count - 1].split(separator: " ").compactMap { Double($0) }
        let truthFields = t[t.count - 1].split(separator: " ").compactMap { Double($0) }
        #expect(fields.count == 8 && fields[0] == truthFields[0])
        #expect((Vector3(fields[1], fields[2], fields[3]) - Vector3(truthFields[1], truthFields[2], truthFields[3])).length < 0.2)
        // The truth where the app sees the tag: its world position plus the VIO's drift (cm).
        #expect((Vector3(truthFields[1], truthFields[2], truthFields[3]) - Vector3(-1.5, 1, -4.8)).length < 0.05)
    }
}
