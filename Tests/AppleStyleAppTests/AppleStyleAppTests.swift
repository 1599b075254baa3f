// The harness: it chooses where each session's updates come from (the one line an app adds,
// `NISession.defaultDataSource = …`), plays the network between two phones, and checks what
// the app shows. The app itself (AccessoryFinder.swift) is written as for Apple's framework.
import Foundation
import NearbyFusion
import NearbyFusionSession
import NearbyFusionSimulatedSources
import NearbyFusionSimulation
import TestHelpers
import Testing

@Suite("An app written for Apple's Nearby Interaction", .serialized, HoldsSessionSlots())
struct AppleStyleAppTests {
    static let datasets = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Datasets")

    @Test func theAccessoryFinderCoachesConvergesAndPlacesItsArrowOnARecording() async throws {
        let source = try RecordingSource(path: Self.datasets.appendingPathComponent("coached-sweep.jsonl").path)
        NISession.defaultDataSource = source
        let app = AccessoryFinder()
        app.start(accessoryData: NINearbyAccessoryConfiguration.data(forAccessory: "tag"))
        while !source.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        let session = try #require(app.session)
        session.waitUntilIdle()
        #expect(app.failure == nil)
        #expect(app.distanceText.hasSuffix(" m"))
        #expect(app.arrowDirection.map { abs(($0 * $0).sum().squareRoot() - 1) < 1e-4 } == true)
        #expect(app.arrowAngleDegrees != nil)
        // The world position of the tag, from the transform's translation column.
        let position = try #require(app.arrowPosition)
        #expect(position.w == 1 && abs(position.x - -1.5) < 0.3 && abs(position.z - -4.8) < 0.3)
        #expect(app.hasConverged)
        #expect(app.coachingMessages.contains(NIAlgorithmConvergenceStatus.Reason.insufficientMovement.localizedDescription))
        #expect(app.heightHint == "at your level")
        #expect(session.configuration is NINearbyAccessoryConfiguration)
        app.stop()
    }

    @Test func anAppsOwnARSessionIsCheckedAsNearbyInteractionChecksIt() async throws {
        let recording = Self.datasets.appendingPathComponent("coached-sweep.jsonl").path
        // Gravity-aligned world tracking: camera assistance runs and converges.
        let source = try RecordingSource(path: recording)
        NISession.defaultDataSource = source
        let app = CameraAssistedFinder()
        try app.start(accessoryData: NINearbyAccessoryConfiguration.data(forAccessory: "tag"))
        while !source.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        app.session?.waitUntilIdle()
        #expect(app.invalidation == nil)
        #expect(app.updates > 50 && app.hasConverged)
        app.session?.invalidate()

        // A camera-aligned world: Nearby Interaction refuses it.
        NISession.defaultDataSource = try RecordingSource(path: recording)
        let refused = CameraAssistedFinder()
        try refused.start(accessoryData: NINearbyAccessoryConfiguration.data(forAccessory: "tag"), worldAlignment: .camera)
        refused.session?.waitUntilIdle()
        #expect((refused.invalidation as? NIError)?.code == .invalidARConfiguration)
        #expect(refused.updates == 0)
        NISession.defaultDataSource = ManualSource()
    }

    @Test func twoPhonesShareTokensThroughNSKeyedArchiverAndADeadTokenInvalidatesTheSession() throws {
        let link = SimulatedPeerLink(
            pathA: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 8)]),
            pathB: DeviceTrajectory(segments: [.still(duration: 1), .sweepUpDown(duration: 8)], startPosition: Vector3(1.2, 1.3, -3.5), heading: .pi),
            seed: 7)
        NISession.defaultDataSource = link.sourceA
        let alice = PeerFinder()
        NISession.defaultDataSource = link.sourceB
        let bob = PeerFinder()
        let aliceData = try #require(alice.discoveryTokenData()), bobData = try #require(bob.discoveryTokenData())
        link.connect(tokenA: try #require(alice.session.discoveryToken), tokenB: try #require(bob.session.discoveryToken))
        alice.receive(discoveryTokenData: bobData)
        bob.receive(discoveryTokenData: aliceData)
        link.advance(seconds: 3)
        alice.session.waitUntilIdle()
        bob.session.waitUntilIdle()
        #expect(alice.updates > 20 && bob.updates > 20)
        #expect(abs(try #require(alice.peerDistance) - 3.7) < 0.5)
        #expect(alice.invalidation == nil && bob.invalidation == nil)
        // Bob's session ends: a phone that runs with his old token is told, through
        // `session(_:didInvalidateWith error: Error)`.
        bob.session.invalidate()
        NISession.defaultDataSource = ManualSource()
        let late = PeerFinder()
        late.receive(discoveryTokenData: bobData)
        late.session.waitUntilIdle()
        #expect(late.invalidation?.code == .invalidConfiguration)
        alice.session.invalidate()
        late.session.invalidate()
    }
}
