import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSession
import Testing
import TestHelpers

/// The code of the DocC tutorials (NearbyFusion.docc), run: the calls are the articles',
/// with paths from the package root.
@Suite("documentation examples")
struct DocumentationExampleTests {
    static func path(_ relative: String) -> String { TestSupport.packageRoot.appendingPathComponent(relative).path }

    @Test func feedingARecordedTrajectory() throws {
        var angles = 0
        let summary = try RecordingReplay.run(path: Self.path("Datasets/coached-sweep.jsonl")) { line in
            if case .object(let estimate) = line, estimate.horizontalAngle != nil { angles += 1 }
        }
        #expect(angles > 50)
        #expect(summary.objects.map(\.objectID) == ["tag"] && summary.objects[0].firstConvergedTime != nil)

        var engine = FusionEngine(capabilities: .phone)
        let tag = engine.register(objectID: "tag", kind: .accessory)
        _ = engine.ingest(DevicePose(timestamp: 0.00, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        let estimate = engine.ingest(UWBMeasurement(timestamp: 0.01, distance: 4.2, directionInDevice: Vector3(0, 0, -1)),
                                     for: tag)
        #expect(estimate.distance == 4.2)
        #expect(estimate.convergence?.status == .notConverged(.insufficientMovement))
    }

    @Test func validatingCoaching() throws {
        let file = Self.path("Datasets/expectations/coached-sweep.expect")
        let expectations = try CoachingExpectation.parse(String(contentsOfFile: file, encoding: .utf8), file: file)
        let verdicts = try CoachingCheck.check(recording: Self.path("Datasets/coached-sweep.jsonl"), expectations: expectations)
        #expect(!verdicts.isEmpty)
        for verdict in verdicts {
            #expect(verdict.passed, "\(verdict.expectation.text): \(verdict.detail)")
        }
    }

    /// The event-stream loop of the session's migration article ends at the convergence it waits for.
    /// (It holds ``SessionSlots``: the session-limit test fills every slot now and then.)
    @Test func theSessionEventLoopEnds() async throws {
        let converged = try await SessionSlots.exclusively { () async throws -> Bool in
            let session = NISession(source: try RecordingSource(path: Self.path("Datasets/coached-sweep.jsonl")))
            let configuration = try NINearbyAccessoryConfiguration(data: NINearbyAccessoryConfiguration.data(forAccessory: "tag"))
            configuration.isCameraAssistanceEnabled = true
            session.run(configuration)
            var converged = false
            for await event in session.events {
                if case .didUpdateAlgorithmConvergence(let convergence, _?) = event, case .converged = convergence.status {
                    converged = true
                    break
                }
            }
            session.invalidate()
            return converged
        }
        #expect(converged)
    }
}
