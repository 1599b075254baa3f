import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSession
import NearbyFusionSimulatedSources
import NearbyFusionSimulation
import Synchronization
import Testing
import TestHelpers

/// Collects delegate callbacks as ``NISessionEvent``s, in arrival order.
final class RecordingDelegate: NISessionDelegate {
    let received = Mutex<[NISessionEvent]>([])
    var events: [NISessionEvent] { received.withLock { $0 } }
    func add(_ e: NISessionEvent) { received.withLock { $0.append(e) } }
    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) { add(.didUpdate(nearbyObjects)) }
    func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: RemovalReason) { add(.didRemove(nearbyObjects, reason: reason)) }
    func sessionDidStartRunning(_ session: NISession) { add(.didStartRunning) }
    func sessionWasSuspended(_ session: NISession) { add(.wasSuspended) }
    func sessionSuspensionEnded(_ session: NISession) { add(.suspensionEnded) }
    func session(_ session: NISession, didInvalidateWith error: Error) { add(.didInvalidate(error as! NIError)) }
    func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?) {
        add(.didUpdateAlgorithmConvergence(convergence, object: object))
    }
}

extension NISessionEvent {
    var isUpdate: Bool { if case .didUpdate = self { return true } else { return false } }
    var invalidationCode: NIError.Code? { if case .didInvalidate(let e) = self { return e.code } else { return nil } }
}

/// The session API. Serialized: the limit on active sessions is process-wide.
@Suite("Session API", .serialized, HoldsSessionSlots())
struct SessionTests {
    static func pose(_ t: Double, x: Double = 0) -> SourceEvent {
        .pose(DevicePose(timestamp: t, positionInWorld: Vector3(x, 1.4, 0), worldFromDevice: .identity))
    }
    static func uwb(_ t: Double, _ id: String = "tag") -> SourceEvent {
        .uwb(objectID: id, UWBMeasurement(timestamp: t, distance: 4, directionInDevice: Vector3(0, 0, -1)))
    }
    static func accessory(_ id: String = "tag", cameraAssistance: Bool = true) throws -> NINearbyAccessoryConfiguration {
        let c = try NINearbyAccessoryConfiguration(data: NINearbyAccessoryConfiguration.data(forAccessory: id))
        c.isCameraAssistanceEnabled = cameraAssistance
        return c
    }

    @Test func errorCodesHaveNearbyInteractionsRawValues() {
        let expected: [(NIError.Code, Int)] = [(.unsupportedPlatform, -5889), (.invalidConfiguration, -5888), (.sessionFailed, -5887),
                                               (.resourceUsageTimeout, -5886), (.activeSessionsLimitExceeded, -5885), (.userDidNotAllow, -5884),
                                               (.invalidARConfiguration, -5883), (.accessoryPeerDeviceUnavailable, -5882), (.incompatiblePeerDevice, -5881),
                                               (.activeExtendedDistanceSessionsLimitExceeded, -5880)]
        for (code, raw) in expected { #expect(code.rawValue == raw) }
        #expect(NIError.Code.allCases.count == 10)
        // Bridged as Apple's: NIErrorDomain, the raw value as the code, the message for people.
        let error: Error = NIError(.invalidARConfiguration, "the AR session's worldAlignment must be .gravity")
        let bridged = error as NSError
        #expect(bridged.domain == NIErrorDomain && NIErrorDomain == "com.apple.NearbyInteraction")
        #expect(bridged.code == -5883)
        #expect(error.localizedDescription == "the AR session's worldAlignment must be .gravity")
        #expect((error as? NIError)?.code == NIError.invalidARConfiguration)
    }

    /// Runs an accessory session over a simulated scenario to its end: the session (still
    /// running) and every event its delegate received.
    static func runToEnd(_ scenario: SimulationScenario) async throws -> (session: NISession, events: [NISessionEvent]) {
        let source = SimulatedSource(scenario: scenario)
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        session.run(try Self.accessory())
        while !source.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        session.waitUntilIdle()
        return (session, delegate.events)
    }

    @Test func anAccessorySessionFromTheSimulatorConverges() async throws {
        let (session, events) = try await Self.runToEnd(ScenarioCatalogue.coached(seed: 1))
        #expect(events.first == .didStartRunning)
        let updates = events.compactMap { if case .didUpdate(let o) = $0 { return o.first } else { return nil } }
        #expect(updates.count > 90)
        #expect(updates.allSatisfy { $0.accessoryIdentifier == "tag" && $0.discoveryToken == (try? Self.accessory())?.accessoryDiscoveryToken })
        let last = try #require(updates.last)
        #expect(session.worldTransform(for: last) != nil)
        #expect(last.horizontalAngle != nil && last.verticalDirectionEstimate == .same)
        #expect(events.contains { if case .didUpdateAlgorithmConvergence(let c, let o?) = $0 { return c.status == .converged && o.accessoryIdentifier == "tag" } else { return false } })
        session.invalidate()
    }

    /// The guidance reaches the app on each object: a step to take while the angle is missing
    /// (within the first 2 s of a coached sweep), none once it is published.
    @Test func objectsCarryTheGuidanceUntilTheAngle() async throws {
        let (session, events) = try await Self.runToEnd(ScenarioCatalogue.coached(seed: 2))
        let updates = events.compactMap { if case .didUpdate(let o) = $0 { return o.first } else { return nil } }
        #expect(updates.prefix(20).contains { $0.guidance != nil && $0.horizontalAngle == nil })
        #expect(updates.allSatisfy { $0.horizontalAngle == nil || $0.guidance == nil })
        session.invalidate()
    }

    @Test func delegateAndAsyncSequenceDeliverTheSameEventsInTheSameOrder() async throws {
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        session.run(try Self.accessory())
        for k in 0..<30 { source.send(Self.pose(Double(k) * 0.1, x: 0.3 * sin(Double(k)))); source.send(Self.uwb(Double(k) * 0.1 + 0.01)) }
        source.send(.removed(objectID: "tag", reason: .timeout))
        source.send(.suspended)
        source.send(.suspensionEnded)
        session.run(try Self.accessory())
        session.invalidate()
        session.waitUntilIdle()
        var streamed: [NISessionEvent] = []
        for await e in session.events { streamed.append(e) }
        #expect(streamed == delegate.events)
        // Start, 30 updates, convergence changes, the removal, suspension and its end, start again.
        #expect(streamed.count >= 35)
        #expect(streamed.contains(.wasSuspended) && streamed.contains(.suspensionEnded))
    }

    @Test func channelSoundingAccessoriesRunOnlyWhereSupportedAndPauseInTheBackground() throws {
        let id = UUID()
        let configuration = NINearbyAccessoryConfiguration(bluetoothChannelSoundingIdentifier: id, previousBluetoothIdentifier: nil)
        configuration.isCameraAssistanceEnabled = true
        #expect(configuration.ranging == .bluetoothChannelSounding && configuration.accessoryIdentifier == id.uuidString)
        // A device without Channel Sounding: the session is invalidated, as Nearby Interaction does.
        let unsupported = NISession(source: ManualSource(capabilities: DeviceCapabilities(supportsBluetoothChannelSounding: false)))
        let refused = RecordingDelegate()
        unsupported.delegate = refused
        unsupported.run(configuration)
        unsupported.waitUntilIdle()
        #expect(refused.events.contains { if case .didInvalidate(let e) = $0 { return e.code == .unsupportedPlatform } else { return false } })
        // A device with it: distances arrive, a radio direction never (the radio gives none);
        // the background suspends the session, and it resumes only when run again.
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        session.run(configuration)
        for k in 0..<5 { source.send(Self.pose(Double(k) * 0.2)); source.send(Self.uwb(Double(k) * 0.2 + 0.01, id.uuidString)) }
        source.send(.suspended)
        source.send(Self.uwb(1.5, id.uuidString))
        source.send(.suspensionEnded)
        session.waitUntilIdle()
        let updates = delegate.events.compactMap { e -> NINearbyObject? in if case .didUpdate(let o) = e { return o.first } else { return nil } }
        #expect(updates.count == 5, "no update while suspended")
        #expect(updates.allSatisfy { $0.distance != nil && $0.direction == nil && $0.accessoryIdentifier == id.uuidString })
        #expect(delegate.events.contains(.wasSuspended) && delegate.events.contains(.suspensionEnded))
        session.run(configuration)
        source.send(Self.pose(2.0)); source.send(Self.uwb(2.01, id.uuidString))
        session.waitUntilIdle()
        #expect(delegate.events.filter { if case .didUpdate = $0 { return true } else { return false } }.count == 6)
        session.invalidate()
    }

    @Test func updateMotionStateReachesTheEstimate() throws {
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        session.run(try Self.accessory())
        for k in 0..<5 { source.send(Self.pose(Double(k) * 0.1)); source.send(Self.uwb(Double(k) * 0.1 + 0.01)) }
        session.waitUntilIdle()
        session.updateMotionState(.moving, forObjectWithToken: nil)
        for k in 5..<8 { source.send(Self.pose(Double(k) * 0.1)); source.send(Self.uwb(Double(k) * 0.1 + 0.01)) }
        session.waitUntilIdle()
        let motions = delegate.events.compactMap { e -> MotionActivityState? in
            if case .didUpdate(let objects) = e { return objects.first?.motion } else { return nil }
        }
        #expect(motions.count == 8)
        #expect(motions.prefix(5).allSatisfy { $0 != .moving })
        #expect(motions.suffix(3).allSatisfy { $0 == .moving })
        session.invalidate()
    }

    @Test func theEngineOptionsApplyFromTheNextRun() throws {
        // Ranges beyond `maximumRange` are never fused: with 1 m, the 4 m ranges leave the
        // signal insufficient after the 2 s timeout; with the defaults they do not.
        func reasons(_ options: FusionOptions?) throws -> ConvergenceReasons {
            let source = ManualSource()
            let session = NISession(source: source)
            let delegate = RecordingDelegate()
            session.delegate = delegate
            if let options { session.fusionOptions = options }
            session.run(try Self.accessory())
            for k in 0..<30 { source.send(Self.pose(Double(k) * 0.1)); source.send(Self.uwb(Double(k) * 0.1 + 0.01)) }
            session.waitUntilIdle()
            session.invalidate()
            let last = delegate.events.compactMap { e -> NINearbyObject? in
                if case .didUpdate(let objects) = e { return objects.first } else { return nil }
            }.last
            return try #require(last?.estimate.convergence).status.reasons
        }
        var short = FusionOptions()
        short.coaching.maximumRange = 1
        #expect(try reasons(short).contains(.insufficientSignalStrength))
        #expect(try !reasons(nil).contains(.insufficientSignalStrength))
        let session = NISession(source: ManualSource())
        session.fusionOptions.sensors.rangeBiasStandardDeviation = 0.2
        #expect(session.fusionOptions.sensors.rangeBiasStandardDeviation == 0.2)
        session.invalidate()
    }

    /// A deterministic generator (SplitMix64) for injected randomness.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func injectedRandomnessGivesTheSameTokenOnEveryRun() throws {
        var expected = Seeded(state: 42)
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &expected) }
        var first = Seeded(state: 42), other = Seeded(state: 43)
        let a = NISession(source: ManualSource(), tokenGenerator: &first)
        let b = NISession(source: ManualSource(), tokenGenerator: &other)
        #expect(try #require(a.discoveryToken).bytes == bytes)
        #expect(a.discoveryToken != b.discoveryToken)
        // The generator moved on: a third session from it gets a new token.
        let c = NISession(source: ManualSource(), tokenGenerator: &first)
        #expect(c.discoveryToken != a.discoveryToken)
        for s in [a, b, c] { s.invalidate() }
    }

    @Test func aPacedRecordingSourceWaitsThroughItsInjectedClock() throws {
        let waits = Mutex<[Double]>([])
        let events = [Self.pose(0), Self.uwb(0.1), Self.pose(0.1), Self.pose(0.4)]
        let source = RecordingSource(events: events, capabilities: .phone, arConfiguration: nil, speed: 2,
                                     sleep: { seconds in waits.withLock { $0.append(seconds) } })
        let delivered = Mutex(0)
        source.start { _ in delivered.withLock { $0 += 1 } }
        let deadline = Date().addingTimeInterval(10)
        while !source.isFinished || delivered.withLock({ $0 }) < events.count, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        // Recording time over speed, between consecutive timed events that move forward;
        // nothing waited on the real clock.
        let recorded = waits.withLock { $0 }
        #expect(recorded.count == 2)
        #expect(abs(recorded[0] - 0.05) < 1e-12 && abs(recorded[1] - 0.15) < 1e-12, "\(recorded)")
    }

    @Test func pausedSessionResumesWithTheSameTokenAndEstimate() throws {
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let token = try #require(session.discoveryToken)
        session.run(try Self.accessory())
        source.send(Self.pose(0)); source.send(Self.uwb(0.05))
        session.pause()
        source.send(Self.pose(0.1)); source.send(Self.uwb(0.15))   // not listened to while paused
        session.waitUntilIdle()
        let whilePaused = delegate.events.filter(\.isUpdate).count
        session.run(try Self.accessory())
        source.send(Self.pose(0.2)); source.send(Self.uwb(0.25))
        session.waitUntilIdle()
        #expect(session.discoveryToken == token)
        #expect(whilePaused == 1)
        #expect(delegate.events.filter(\.isUpdate).count == 2)
        #expect(delegate.events.filter { $0 == .didStartRunning }.count == 2)
        session.invalidate()
    }

    @Test func aSuspendedSessionWaitsForRunAndARunWhileSuspendedReportsSuspended() throws {
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        session.run(try Self.accessory())
        source.send(.suspended)
        source.send(Self.uwb(0.1))                      // ignored: suspended
        session.run(try Self.accessory())               // ends in "suspended"
        source.send(.suspensionEnded)
        source.send(Self.pose(0.2)); source.send(Self.uwb(0.25))   // still ignored: not resumed by itself
        session.waitUntilIdle()
        #expect(delegate.events == [.didStartRunning, .wasSuspended, .wasSuspended, .suspensionEnded])
        session.run(try Self.accessory())
        source.send(Self.pose(0.3)); source.send(Self.uwb(0.35))
        session.waitUntilIdle()
        let resumed = try #require(delegate.events.lastIndex(of: .didStartRunning))
        #expect(resumed == 4)
        #expect(delegate.events[(resumed + 1)...].contains { $0.isUpdate })
        session.invalidate()
    }

    @Test func anInvalidatedSessionCannotRunAndItsTokenIsDead() throws {
        let a = NISession(source: ManualSource()), b = NISession(source: ManualSource())
        let delegate = RecordingDelegate()
        a.delegate = delegate
        let tokenA = try #require(a.discoveryToken)
        a.invalidate()
        #expect(a.discoveryToken == nil)
        a.run(try Self.accessory())
        a.waitUntilIdle()
        #expect(delegate.events.map(\.invalidationCode) == [.sessionFailed])
        // A peer with the dead token: invalid configuration.
        let delegateB = RecordingDelegate()
        b.delegate = delegateB
        b.run(NINearbyPeerConfiguration(peerToken: tokenA))
        b.waitUntilIdle()
        #expect(delegateB.events.map(\.invalidationCode) == [.invalidConfiguration])
    }

    @Test func misusedConfigurationsAreInvalid() throws {
        // Its own token.
        let a = NISession(source: ManualSource()), da = RecordingDelegate()
        a.delegate = da
        a.run(NINearbyPeerConfiguration(peerToken: try #require(a.discoveryToken)))
        a.waitUntilIdle()
        #expect(da.events.map(\.invalidationCode) == [.invalidConfiguration])
        // One session per peer.
        let peer = NISession(source: ManualSource())
        let b = NISession(source: ManualSource()), c = NISession(source: ManualSource())
        let db = RecordingDelegate(), dc = RecordingDelegate()
        b.delegate = db; c.delegate = dc
        b.run(NINearbyPeerConfiguration(peerToken: try #require(peer.discoveryToken)))
        c.run(NINearbyPeerConfiguration(peerToken: try #require(peer.discoveryToken)))
        b.waitUntilIdle(); c.waitUntilIdle()
        #expect(db.events == [.didStartRunning])
        #expect(dc.events.map(\.invalidationCode) == [.invalidConfiguration])
        // Malformed accessory data.
        for bad in [Data(), Data("NFAC".utf8), Data("XXXX\u{1}tag".utf8), Data([0x4E, 0x46, 0x41, 0x43, 2, 0x61])] {
            #expect(throws: NIError.self) { try NINearbyAccessoryConfiguration(data: bad) }
        }
        for s in [a, b, c, peer] { s.invalidate() }
    }

    @Test func capabilitiesAreCheckedBeforeRunning() throws {
        let noUWB = NISession(source: ManualSource(capabilities: DeviceCapabilities(supportsPreciseDistanceMeasurement: false)))
        let d1 = RecordingDelegate(); noUWB.delegate = d1
        noUWB.run(try Self.accessory())
        let noCamera = NISession(source: ManualSource(capabilities: DeviceCapabilities(supportsCameraAssistance: false)))
        let d2 = RecordingDelegate(); noCamera.delegate = d2
        noCamera.run(try Self.accessory(cameraAssistance: true))
        noUWB.waitUntilIdle(); noCamera.waitUntilIdle()
        #expect(d1.events.map(\.invalidationCode) == [.unsupportedPlatform])
        #expect(d2.events.map(\.invalidationCode) == [.invalidConfiguration])
        // A watch (distance only): updates carry no direction even if one is fed.
        let watchSource = ManualSource(capabilities: .distanceOnly)
        let watch = NISession(source: watchSource)
        let d3 = RecordingDelegate(); watch.delegate = d3
        #expect(watch.deviceCapabilities.supportsDirectionMeasurement == false)
        watch.run(try Self.accessory(cameraAssistance: false))
        watchSource.send(Self.pose(0)); watchSource.send(Self.uwb(0.1))
        watch.waitUntilIdle()
        let update = d3.events.compactMap { if case .didUpdate(let o) = $0 { return o.first } else { return nil } }.first
        #expect(update?.distance == 4 && update?.direction == nil && update?.horizontalAngle == nil)
        // Without camera assistance: no convergence callbacks at all.
        #expect(!d3.events.contains { if case .didUpdateAlgorithmConvergence = $0 { return true } else { return false } })
        watch.invalidate()
    }

    @Test func theARConfigurationIsCheckedEachTimeTheSourceStarts() throws {
        let source = ManualSource()
        let session = NISession(source: source)
        let delegate = RecordingDelegate(); session.delegate = delegate
        session.run(try Self.accessory())
        session.pause()
        var ar = ARConfigurationDescription()
        ar.collaborationEnabled = true
        source.setARConfiguration(ar)
        session.run(try Self.accessory())
        session.waitUntilIdle()
        #expect(delegate.events.map(\.invalidationCode) == [nil, .invalidARConfiguration])
        var world = ARConfigurationDescription()
        world.worldAlignment = "camera"
        let other = NISession(source: ManualSource(arConfiguration: world))
        let d2 = RecordingDelegate(); other.delegate = d2
        other.run(try Self.accessory())
        other.waitUntilIdle()
        #expect(d2.events.map(\.invalidationCode) == [.invalidARConfiguration])
    }

    @Test func tooManyRunningSessionsExceedTheLimit() async throws {
        // The limit is process-wide, and other suites (the Apple-style app, the documentation's
        // session loop) run in this process at the same time: while this test holds every slot
        // their sessions would be refused, so they take turns (`HoldsSessionSlots`). A session
        // another test ended may still hold its slot for a moment: an attempt that meets one is
        // discarded and retried; the assertions hold on an uncontended one.
        var delegates: [RecordingDelegate] = []
        for _ in 0..<200 {   // up to 10 s
            var sessions: [NISession] = []
            delegates = []
            for _ in 0..<(NISession.maximumActiveSessions + 1) {
                let s = NISession(source: ManualSource()), d = RecordingDelegate()
                s.delegate = d
                s.run(try Self.accessory())
                s.waitUntilIdle()
                sessions.append(s); delegates.append(d)
            }
            sessions.forEach { $0.invalidate() }
            if delegates.prefix(NISession.maximumActiveSessions).allSatisfy({ $0.events == [.didStartRunning] }) { break }
            // Waiting without blocking a thread of the shared pool: the suites that hold the
            // sessions in the way need it to finish.
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(delegates.prefix(NISession.maximumActiveSessions).allSatisfy { $0.events == [.didStartRunning] })
        #expect(delegates.last?.events.map(\.invalidationCode) == [.activeSessionsLimitExceeded])
        // Once they are gone, sessions can run again.
        let again = NISession(source: ManualSource()), d = RecordingDelegate()
        again.delegate = d
        again.run(try Self.accessory())
        again.waitUntilIdle()
        #expect(d.events == [.didStartRunning])
        again.invalidate()
    }

    @Test func tokensRoundTripAndGarbageNeverCrashes() throws {
        let session = NISession(source: ManualSource())
        let token = try #require(session.discoveryToken)
        let encoded = try JSONEncoder().encode([token])
        #expect(try JSONDecoder().decode([DiscoveryToken].self, from: encoded) == [token])
        #expect(DiscoveryToken(data: token.data) == token)
        var noise = NoiseStream(seed: 99, source: "garbage")
        var garbage: [Data] = [Data(), Data("\"\"".utf8), Data("\"AAAA\"".utf8), Data("42".utf8), Data("[\"x\"]".utf8),
                               Data("\"\(String(repeating: "A", count: 10_000))\"".utf8)]
        for _ in 0..<200 {
            garbage.append(Data((0..<Int(noise.uniform(0, 64))).map { _ in UInt8(noise.uniform(0, 256)) }))
            let bytes = (0..<Int(noise.uniform(0, 30))).map { _ in UInt8(noise.uniform(0, 256)) }
            garbage.append(Data("\"\(Data(bytes).base64EncodedString())\"".utf8))
        }
        for g in garbage {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(DiscoveryToken.self, from: g) }
            _ = DiscoveryToken(data: g)
        }
        // NSSecureCoding: an archive round-trips; garbage and archives of other classes or
        // with a wrong payload unarchive as nothing.
        let archive = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: archive) == token)
        let notAToken = try NSKeyedArchiver.archivedData(withRootObject: "token" as NSString, requiringSecureCoding: true)
        #expect((try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: notAToken)) == nil)
        var tampered = archive
        if let range = tampered.range(of: Data("NFDT".utf8)) { tampered.replaceSubrange(range, with: Data("NFDX".utf8)) }
        #expect((try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: tampered)) == nil)
        for g in garbage.prefix(60) {
            #expect((try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: g)) == nil)
        }
        // Tokens of different sessions differ.
        #expect(NISession(source: ManualSource()).discoveryToken != token)
        session.invalidate()
    }

    /// The runnable example of the README: two simulated phones each run a session with the
    /// other, tokens exchanged over an in-process channel; both see the other; one ends and
    /// the other is told `peerEnded`.
    @Test func aPeerLinkSensesWithTheSimulatorsRadioModel() throws {
        var radio = RadioModel()
        radio.rateHz = 5
        radio.rangeStandardDeviation = 0
        let pathB = DeviceTrajectory(segments: [.still(duration: 3)], startPosition: Vector3(0, 1.4, -4))
        let link = SimulatedPeerLink(pathA: DeviceTrajectory(segments: [.still(duration: 3)]), pathB: pathB, seed: 3, radio: radio)
        let ranges = Mutex<[Double]>([])
        link.sourceA.start { event in
            if case .uwb(_, let m) = event, let d = m.distance { ranges.withLock { $0.append(d) } }
        }
        link.sourceB.start { _ in }
        let tokenA = try #require(DiscoveryToken(data: Data("NFDT".utf8 + [UInt8](repeating: 1, count: 16))))
        let tokenB = try #require(DiscoveryToken(data: Data("NFDT".utf8 + [UInt8](repeating: 2, count: 16))))
        link.connect(tokenA: tokenA, tokenB: tokenB)
        link.advance(seconds: 2)
        let seen = ranges.withLock { $0 }
        #expect(seen.count == 10)   // 5 Hz for 2 s
        let truth = (pathB.pose(at: 1).positionInWorld - DeviceTrajectory(segments: [.still(duration: 3)]).pose(at: 1).positionInWorld).length
        #expect(seen.allSatisfy { abs($0 - truth) < 1e-9 })   // σ 0: the exact range
    }

    @Test func twoPhonesRangeToEachOtherAndOneEnding() async throws {
        let link = SimulatedPeerLink(
            pathA: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 8)]),
            pathB: DeviceTrajectory(segments: [.still(duration: 1), .sweepUpDown(duration: 8)], startPosition: Vector3(1.2, 1.3, -3.5), heading: .pi),
            seed: 7)
        let alice = NISession(source: link.sourceA), bob = NISession(source: link.sourceB)
        let aliceSees = RecordingDelegate(), bobSees = RecordingDelegate()
        alice.delegate = aliceSees
        bob.delegate = bobSees
        // The in-process channel: each side sends its token, encoded, to the other.
        let (channel, send) = AsyncStream.makeStream(of: (from: String, data: Data).self)
        send.yield(("alice", try JSONEncoder().encode(try #require(alice.discoveryToken))))
        send.yield(("bob", try JSONEncoder().encode(try #require(bob.discoveryToken))))
        send.finish()
        var tokens: [String: DiscoveryToken] = [:]
        for await message in channel { tokens[message.from] = try JSONDecoder().decode(DiscoveryToken.self, from: message.data) }
        link.connect(tokenA: try #require(tokens["alice"]), tokenB: try #require(tokens["bob"]))
        alice.run(NINearbyPeerConfiguration(peerToken: try #require(tokens["bob"])))
        bob.run(NINearbyPeerConfiguration(peerToken: try #require(tokens["alice"])))
        link.advance(seconds: 5)
        alice.waitUntilIdle(); bob.waitUntilIdle()
        let aliceUpdates = aliceSees.events.compactMap { if case .didUpdate(let o) = $0 { return o.first } else { return nil } }
        let bobUpdates = bobSees.events.compactMap { if case .didUpdate(let o) = $0 { return o.first } else { return nil } }
        #expect(aliceUpdates.count > 40 && bobUpdates.count > 40)
        #expect(aliceUpdates.last?.discoveryToken == tokens["bob"] && bobUpdates.last?.discoveryToken == tokens["alice"])
        // Same range both ways (the interaction is bidirectional).
        #expect(aliceUpdates.last?.distance == bobUpdates.last?.distance)
        #expect(abs(Double(aliceUpdates.last?.distance ?? 0) - 3.7) < 0.5)
        bob.invalidate()
        link.advance(seconds: 0.5)
        alice.waitUntilIdle()
        #expect(aliceSees.events.contains { if case .didRemove(let o, .peerEnded) = $0 { return o.first?.discoveryToken == tokens["bob"] } else { return false } })
        #expect(!bobSees.events.contains { if case .didRemove = $0 { return true } else { return false } })
        alice.invalidate()
    }
}
