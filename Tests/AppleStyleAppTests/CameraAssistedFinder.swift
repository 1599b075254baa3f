// An app that runs its own AR session and hands it to Nearby Interaction for camera
// assistance, written as for iOS. The only change from that app: the import below (was
// `import NearbyInteraction`); `import ARKit` is the package's stand-in on Linux.
import ARKit
import Foundation
import NearbyFusionSession

final class CameraAssistedFinder: NSObject, NISessionDelegate, ARSessionDelegate {
    let arSession = ARSession()
    var session: NISession?
    var updates = 0
    var hasConverged = false
    var invalidation: Error?

    func start(accessoryData: Data, worldAlignment: ARConfiguration.WorldAlignment = .gravity) throws {
        let arConfiguration = ARWorldTrackingConfiguration()
        arConfiguration.worldAlignment = worldAlignment
        arConfiguration.isCollaborationEnabled = false
        arConfiguration.userFaceTrackingEnabled = false
        arConfiguration.initialWorldMap = nil
        arSession.delegate = self
        arSession.run(arConfiguration)

        let session = NISession()
        session.delegate = self
        session.setARSession(arSession)
        let configuration = try NINearbyAccessoryConfiguration(data: accessoryData)
        configuration.isCameraAssistanceEnabled = true
        session.run(configuration)
        self.session = session
    }

    // MARK: ARSessionDelegate

    func sessionShouldAttemptRelocalization(_ session: ARSession) -> Bool { false }

    // MARK: NISessionDelegate

    func session(_ session: NISession, didUpdate nearbyObjects: [NINearbyObject]) { updates += 1 }

    func session(_ session: NISession, didUpdateAlgorithmConvergence convergence: NIAlgorithmConvergence, for object: NINearbyObject?) {
        if case .converged = convergence.status { hasConverged = true }
    }

    func session(_ session: NISession, didInvalidateWith error: Error) { invalidation = error }
}
