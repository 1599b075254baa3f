// The harness for recorded peers: a recording's peer stands behind a discovery token
// (`RecordingSource.recordedPeerTokens`) that reaches the app as any peer's token does —
// archived over the app's own channel — and a live peer session, captured with
// `CapturingSource`, replays into the same app with the same updates in the same order.
import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSession
import NearbyFusionSimulatedSources
import NearbyFusionSimulation
import Synchronization
import Testing

/// Nested in the app's suite, which is serialized: every test here sets the process-wide
/// `NISession.defaultDataSource`, as the app's other tests do.
extension AppleStyleAppTests {
    @Suite("A recorded peer session replays through the app's own code")
    struct RecordedPeerTests {
        /// Waits, off the main actor (other suites may keep it busy for seconds), until the source
        /// has delivered everything and every session has processed it; then ends the sessions
        /// (the running-session limit is process-wide) and lets the manager's main-actor hops
        /// run, in order, before the caller reads what the app shows.
        static func settle(_ manager: PeerRangingManager, until finished: @Sendable () -> Bool) async throws {
            let sessions = await manager.allSessions
            var waited = 0
            while !finished() && waited < 60_000 { try await Task.sleep(for: .milliseconds(5)); waited += 5 }
            for session in sessions { session.waitUntilIdle() }
            for session in sessions { session.invalidate() }
            for _ in 0..<20 { await MainActor.run {} }
        }

        /// The token as the app receives it from the other phone: archived, sent, unarchived.
        static func overTheAppsChannel(_ token: NIDiscoveryToken) throws -> Data {
            try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        }

        @Test(arguments: ["still-peer", "walking-peer"])
        func aRecordedPeerIsRangedWithTheTokenTheRecordingOffers(recording: String) async throws {
            let source = try RecordingSource(path: AppleStyleAppTests.datasets.appendingPathComponent("\(recording).jsonl").path)
            let token = try #require(source.recordedPeerTokens.first)
            #expect(source.recordedPeerTokens.count == 1)
            NISession.defaultDataSource = source
            let manager = await PeerRangingManager()
            await manager.peer(didShareDiscoveryTokenData: try Self.overTheAppsChannel(token))
            try await Self.settle(manager) { source.isFinished }
            #expect(await manager.lastError == nil)
            let view = try #require(await manager.peers[token])
            #expect(view.updates > 100, "\(view.updates) updates")
            #expect(view.distance != nil && view.horizontalAngle != nil && view.direction != nil)
            #expect(view.worldPosition?.w == 1)
            #expect(view.converged)
            let events = await manager.events
            #expect(events.contains { if case .convergence(let s) = $0 { return s.hasPrefix("notConverged") }; return false })
            await manager.stop()
            NISession.defaultDataSource = ManualSource()
        }

        @Test func aRecordedRemovalReachesTheAppAndRangingGoesOn() async throws {
            // The still peer's recording with its peer timing out at 8 s and coming back: the
            // app is told `.timeout` (and runs its kept configuration again), and the peer's
            // updates go on after it.
            var events = try RecordingReader.readAll(path: AppleStyleAppTests.datasets.appendingPathComponent("still-peer.jsonl").path)
            let cut = try #require(events.firstIndex { ($0.timestamp ?? 0) >= 8 })
            events.insert(.removed(objectID: "friend", timestamp: 8, reason: .timeout), at: cut)
            let source = try RecordingSource(recording: events)
            NISession.defaultDataSource = source
            let manager = await PeerRangingManager()
            let token = try #require(source.recordedPeerTokens.first)
            await manager.peer(didShareDiscoveryTokenData: try Self.overTheAppsChannel(token))
            try await Self.settle(manager) { source.isFinished }
            let seen = await manager.events
            let removal = try #require(seen.firstIndex(of: .removed(.timeout)))
            #expect(seen[(removal + 1)...].contains { if case .update = $0 { return true }; return false },
                    "no update after the timeout: \(seen.count - removal - 1) events after it")
            await manager.stop()
            NISession.defaultDataSource = ManualSource()
        }

        @Test func aRecordingsPeerTokensAreStableAndItsOwn() throws {
            let still = AppleStyleAppTests.datasets.appendingPathComponent("still-peer.jsonl").path
            let walking = AppleStyleAppTests.datasets.appendingPathComponent("walking-peer.jsonl").path
            let a = try RecordingSource(path: still), b = try RecordingSource(path: still), c = try RecordingSource(path: walking)
            #expect(a.recordedPeerTokens == b.recordedPeerTokens)
            #expect(a.recordedPeerTokens != c.recordedPeerTokens)
            // An accessory recording offers none.
            #expect(try RecordingSource(path: AppleStyleAppTests.datasets.appendingPathComponent("coached-sweep.jsonl").path).recordedPeerTokens.isEmpty)
            // The token survives the channel and still names the peer.
            let data = try Self.overTheAppsChannel(a.recordedPeerTokens[0])
            let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: data))
            #expect(a.recordedPeers?[back] == "friend")
        }

        @Test func aTokenOfAnotherRecordingOrOfNoPeerInvalidatesTheSession() async throws {
            let walking = try RecordingSource(path: AppleStyleAppTests.datasets.appendingPathComponent("walking-peer.jsonl").path)
            let still = try RecordingSource(path: AppleStyleAppTests.datasets.appendingPathComponent("still-peer.jsonl").path)
            let accessoryToken = try NINearbyAccessoryConfiguration(data: NINearbyAccessoryConfiguration.data(forAccessory: "friend")).accessoryDiscoveryToken
            for token in [walking.recordedPeerTokens[0], accessoryToken] {
                NISession.defaultDataSource = still
                let manager = await PeerRangingManager()
                await manager.peer(didShareDiscoveryTokenData: try Self.overTheAppsChannel(token))
                try await Self.settle(manager) { true }
                let error = await manager.lastError
                #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
                #expect(await manager.events.isEmpty)
                await manager.stop()
            }
            NISession.defaultDataSource = ManualSource()
        }

        @Test func aLivePeerSessionCapturedReplaysWithTheSameUpdatesInTheSameOrder() async throws {
            // Live: two simulated phones; Alice's app runs on a source that records what it is fed.
            let link = SimulatedPeerLink(
                pathA: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 4.8), .sweepUpDown(duration: 3.2)]),
                pathB: DeviceTrajectory(segments: [.still(duration: 2), .walk(duration: 6, distance: 2)], startPosition: Vector3(-1.5, 1.3, -4), heading: .pi / 2),
                seed: 11)
            var bobGenerator = SplitMix64(seed: 2)
            let bob = NISession(source: link.sourceB, tokenGenerator: &bobGenerator)
            var aliceGenerator = SplitMix64(seed: 1)
            let aliceToken = NISession(source: ManualSource(), tokenGenerator: &aliceGenerator)   // Alice's token, for Bob
            let bobToken = try #require(bob.discoveryToken)
            let lines = Mutex<[String]>([])
            let capture = try CapturingSource(wrapping: link.sourceA, objects: [(id: bobToken.description, kind: .peer)]) { line in
                lines.withLock { $0.append(line) }
            }
            NISession.defaultDataSource = capture
            let live = await PeerRangingManager()
            await live.peer(didShareDiscoveryTokenData: try Self.overTheAppsChannel(bobToken))
            let alice = try #require(await live.allSessions.first)
            link.connect(tokenA: try #require(aliceToken.discoveryToken), tokenB: bobToken)
            bob.run(NINearbyPeerConfiguration(peerToken: try #require(aliceToken.discoveryToken)))
            link.advance(seconds: 9)
            try await Self.settle(live) { true }
            #expect(capture.eventsNotRecorded == 0, "\(String(describing: capture.firstRecordingError))")
            #expect(await live.lastError == nil)
            let liveEvents = await live.events
            #expect(liveEvents.count > 80)
            #expect(liveEvents.contains(.convergence("converged")))
            alice.invalidate()
            bob.invalidate()
            aliceToken.invalidate()

            // Replay: the captured recording, its peer's token from the recording.
            let text = lines.withLock { $0.joined(separator: "\n") } + "\n"
            var reader = RecordingReader(bytes: Array(text.utf8), name: "capture")
            var recorded: [RecordingEvent] = []
            while let event = try reader.next() { recorded.append(event) }
            let source = try RecordingSource(recording: recorded)
            NISession.defaultDataSource = source
            let replay = await PeerRangingManager()
            await replay.peer(didShareDiscoveryTokenData: try Self.overTheAppsChannel(try #require(source.recordedPeerTokens.first)))
            try await Self.settle(replay) { source.isFinished }
            #expect(await replay.lastError == nil)
            let replayed = await replay.events
            let firstDifference = zip(replayed, liveEvents).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(replayed == liveEvents,
                    "replayed \(replayed.count) events against \(liveEvents.count) live; first difference at \(String(describing: firstDifference))")
            await replay.stop()
            NISession.defaultDataSource = ManualSource()
        }
    }
}
