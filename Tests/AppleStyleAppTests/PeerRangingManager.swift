// A peer-ranging manager written the way current Nearby Interaction apps are: Swift 6, a
// `@MainActor` manager whose `NISessionDelegate` methods are `nonisolated` and hop back with
// `Task { @MainActor in … }`, one shared `ARSession` handed over with `setARSession(_:)`, a
// configuration kept per peer and run again after `.timeout` or `sessionSuspensionEnded`,
// camera assistance dropped on `invalidARConfiguration`, extended distance when the device has
// it, coaching from the convergence reasons. The only change from that app: the import below
// (was `import NearbyInteraction`). Where its updates come from is the harness's one line,
// `NISession.defaultDataSource = …`.
import ARKit
import Foundation
import NearbyFusionSession

@MainActor
final class PeerRangingManager: NSObject {
    /// What the UI shows for one peer.
    struct PeerView: Equatable {
        var distance: Float?
        var direction: simd_float3?
        var horizontalAngle: Float?
        var vertical: NINearbyObject.VerticalDirectionEstimate = .unknown
        var worldPosition: simd_float4?
        var coaching = ""
        var converged = false
        var updates = 0
    }

    /// Every update and status change as the UI received it, in order (what a test compares).
    enum Event: Equatable {
        case update(distance: Float?, direction: simd_float3?, horizontalAngle: Float?,
                    vertical: NINearbyObject.VerticalDirectionEstimate, worldPosition: simd_float4?)
        case convergence(String)
        case removed(NINearbyObject.RemovalReason)
    }

    private let arSession = ARSession()
    private var sessions: [NIDiscoveryToken: NISession] = [:]
    private var configurations: [NIDiscoveryToken: NINearbyPeerConfiguration] = [:]
    private var cameraAssistance = true
    private(set) var peers: [NIDiscoveryToken: PeerView] = [:]
    private(set) var events: [Event] = []
    private(set) var lastError: NIError?

    override init() {
        super.init()
        let configuration = ARWorldTrackingConfiguration()
        configuration.worldAlignment = .gravity
        arSession.run(configuration)
    }

    /// The other phone's discovery token arrived over the app's own channel.
    func peer(didShareDiscoveryTokenData data: Data) {
        guard let token = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NIDiscoveryToken.self, from: data) else { return }
        startRanging(to: token)
    }

    func startRanging(to token: NIDiscoveryToken) {
        let session = sessions[token] ?? NISession()
        session.delegate = self
        let configuration = NINearbyPeerConfiguration(peerToken: token)
        if cameraAssistance && NISession.deviceCapabilities.supportsCameraAssistance {
            configuration.isCameraAssistanceEnabled = true
            session.setARSession(arSession)
        }
        if NISession.deviceCapabilities.supportsExtendedDistanceMeasurement {
            configuration.isExtendedDistanceMeasurementEnabled = true
        }
        sessions[token] = session
        configurations[token] = configuration
        peers[token, default: PeerView()] = peers[token] ?? PeerView()
        session.run(configuration)
    }

    func stop() {
        for session in sessions.values { session.invalidate() }
        sessions.removeAll()
    }

    /// The sessions, for the harness to wait on.
    var allSessions: [NISession] { Array(sessions.values) }

    private func token(of session: NISession) -> NIDiscoveryToken? {
        sessions.first { $0.value === session }?.key
    }
}

extension PeerRangingManager: NISessionDelegate {
    nonisolated func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) {
        guard let object = nearbyObjects.first else { return }
        let transform = session.worldTransform(for: object)
        Task { @MainActor in
            guard let token = self.token(of: session) else { return }
            var view = self.peers[token] ?? PeerView()
            view.updates += 1
            view.distance = object.distance
            view.direction = object.direction
            view.horizontalAngle = object.horizontalAngle
            view.vertical = object.verticalDirectionEstimate
            view.worldPosition = transform?.columns.3
            self.peers[token] = view
            self.events.append(.update(distance: object.distance, direction: object.direction, horizontalAngle: object.horizontalAngle,
                                       vertical: object.verticalDirectionEstimate, worldPosition: transform?.columns.3))
        }
    }

    nonisolated func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?) {
        guard object != nil else { return }
        let status = convergence.status
        Task { @MainActor in
            guard let token = self.token(of: session) else { return }
            var view = self.peers[token] ?? PeerView()
            switch status {
            case .converged:
                view.converged = true
                view.coaching = ""
            case .notConverged(let reasons):
                view.coaching = reasons.map(\.localizedDescription).joined(separator: " ")
            case .unknown:
                view.coaching = ""
            }
            self.peers[token] = view
            self.events.append(.convergence("\(status)"))
        }
    }

    nonisolated func session(_ session: NISession, didRemove nearbyObjects: [NINearbyObject], reason: NINearbyObject.RemovalReason) {
        Task { @MainActor in
            self.events.append(.removed(reason))
            guard let token = self.token(of: session) else { return }
            switch reason {
            case .timeout:
                // The peer may come back: run its configuration again.
                if let configuration = self.configurations[token] { session.run(configuration) }
            case .peerEnded:
                self.sessions[token] = nil
                self.configurations[token] = nil
            @unknown default:
                break
            }
        }
    }

    nonisolated func sessionSuspensionEnded(_ session: NISession) {
        Task { @MainActor in
            guard let token = self.token(of: session), let configuration = self.configurations[token] else { return }
            session.run(configuration)
        }
    }

    nonisolated func session(_ session: NISession, didInvalidateWith error: Error) {
        let error = error as? NIError
        Task { @MainActor in
            self.lastError = error
            guard let token = self.token(of: session) else { return }
            if error?.code == .invalidARConfiguration {
                // Camera assistance cannot run here: range without it.
                self.cameraAssistance = false
                self.sessions[token] = nil
                self.startRanging(to: token)
            }
        }
    }
}
