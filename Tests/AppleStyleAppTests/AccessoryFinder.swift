// An accessory finder written as an iOS app writes it against Apple's Nearby Interaction.
// The only change from that app: the import below (was `import NearbyInteraction`). Where
// its updates come from is chosen by the one other allowed line, `NISession.defaultDataSource
// = …`, which the test harness (AppleStyleAppTests.swift) sets before the app starts.
import Foundation
import NearbyFusionSession

final class AccessoryFinder: NSObject, NISessionDelegate {
    var session: NISession?
    var configuration: NINearbyAccessoryConfiguration?

    // What the UI would show.
    var distanceText = "—"
    var arrowDirection: simd_float3?
    var arrowAngleDegrees: Float?
    var arrowPosition: simd_float4?
    var heightHint = ""
    var coachingMessages: [String] = []
    var hasConverged = false
    var lostAccessory = false
    var failure: Error?

    func start(accessoryData: Data) {
        guard NISession.deviceCapabilities.supportsPreciseDistanceMeasurement else {
            failure = NSError(domain: "AccessoryFinder", code: 1)
            return
        }
        session = NISession()
        session?.delegate = self
        do {
            configuration = try NINearbyAccessoryConfiguration(data: accessoryData)
        } catch {
            failure = error
            return
        }
        if NISession.deviceCapabilities.supportsCameraAssistance {
            configuration?.isCameraAssistanceEnabled = true
        }
        if let configuration {
            session?.run(configuration)
        }
    }

    func stop() {
        session?.invalidate()
        session = nil
    }

    // MARK: NISessionDelegate

    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) {
        guard let accessory = nearbyObjects.first else { return }
        if let distance = accessory.distance {
            distanceText = String(format: "%.2f m", distance)
        }
        if let direction = accessory.direction {
            arrowDirection = direction
        }
        if let horizontalAngle = accessory.horizontalAngle {
            arrowAngleDegrees = horizontalAngle * 180 / .pi
        }
        if let transform = session.worldTransform(for: accessory) {
            arrowPosition = transform.columns.3
        }
        switch accessory.verticalDirectionEstimate {
        case .above: heightHint = "above you"
        case .below: heightHint = "below you"
        case .same: heightHint = "at your level"
        case .aboveOrBelow: heightHint = "above or below you"
        case .unknown: heightHint = ""
        }
    }

    func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?) {
        switch convergence.status {
        case .converged:
            hasConverged = true
        case .notConverged(let reasons):
            coachingMessages.append(contentsOf: reasons.map { $0.localizedDescription })
        case .unknown:
            break
        }
    }

    func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: NINearbyObject.RemovalReason) {
        if reason == .timeout { lostAccessory = true }
    }

    func sessionWasSuspended(_ session: NISession) {}

    func sessionSuspensionEnded(_ session: NISession) {
        if let configuration { session.run(configuration) }
    }

    func session(_ session: NISession, didInvalidateWith error: Error) {
        failure = error
    }
}

/// Two phones: each shares its discovery token with the other through `NSKeyedArchiver`
/// (over the app's own network; here the harness carries the bytes), then ranges to it.
final class PeerFinder: NSObject, NISessionDelegate {
    let session = NISession()
    var peerDistance: Float?
    var updates = 0
    var invalidation: NIError?

    override init() {
        super.init()
        session.delegate = self
    }

    /// The bytes to send to the other phone.
    func discoveryTokenData() -> Data? {
        guard let token = session.discoveryToken else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
    }

    /// The other phone's bytes arrived: range to it.
    func receive(discoveryTokenData data: Data) {
        guard let peerToken = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: data) else { return }
        let configuration = NINearbyPeerConfiguration(peerToken: peerToken)
        session.run(configuration)
    }

    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) {
        guard let peer = nearbyObjects.first else { return }
        updates += 1
        peerDistance = peer.distance
    }

    func session(_ session: NISession, didInvalidateWith error: Error) {
        invalidation = error as? NIError
    }
}
