// A stand-in for the part of ARKit that Nearby Interaction's camera assistance reads, for
// Linux and macOS, where Apple ships no ARKit: an app's `import ARKit`, its world-tracking
// configuration and its `NISession.setARSession(_:)` call then build unchanged. It tracks
// nothing: poses come from `NISession.defaultDataSource`, as every other update does here.
import Foundation

/// What an AR session tracks and how (ARKit's `ARConfiguration`); only the properties
/// Nearby Interaction checks are kept.
open class ARConfiguration: NSObject, @unchecked Sendable {
    /// How the session's world axes are chosen.
    public enum WorldAlignment: Int, Sendable {
        /// y up (against gravity), x and z fixed when the session starts: the only one
        /// Nearby Interaction accepts.
        case gravity
        /// y up, −z towards true north.
        case gravityAndHeading
        /// The camera's own axes.
        case camera
    }

    /// Whether the device can run this configuration (always, for the stand-in).
    open class var isSupported: Bool { true }
    /// Default `.gravity`, as in ARKit.
    open var worldAlignment: WorldAlignment = .gravity
    /// Default `true`, as in ARKit.
    open var isLightEstimationEnabled = true

    public override init() {}
}

/// A saved map of a space (ARKit's `ARWorldMap`): opaque here.
open class ARWorldMap: NSObject, @unchecked Sendable {
    public override init() {}
}

/// World tracking (ARKit's `ARWorldTrackingConfiguration`), the configuration camera
/// assistance needs.
open class ARWorldTrackingConfiguration: ARConfiguration, @unchecked Sendable {
    /// Default `false`. Nearby Interaction requires `false`.
    open var isCollaborationEnabled = false
    /// Default `false`. Nearby Interaction requires `false`.
    open var userFaceTrackingEnabled = false
    /// Default `nil`. Nearby Interaction requires `nil`.
    open var initialWorldMap: ARWorldMap?
}

/// What an AR session asks its delegate (ARKit's `ARSessionObserver`); every method has a
/// default.
public protocol ARSessionObserver: AnyObject {
    /// Whether to try to relocalise after an interruption. Nearby Interaction requires
    /// `false` (ARKit's behaviour when the delegate does not implement it).
    func sessionShouldAttemptRelocalization(_ session: ARSession) -> Bool
}

extension ARSessionObserver {
    /// No relocalisation, as camera assistance requires.
    public func sessionShouldAttemptRelocalization(_ session: ARSession) -> Bool { false }
}

/// ARKit's `ARSessionDelegate` (frame and anchor callbacks are not delivered by the
/// stand-in).
public protocol ARSessionDelegate: ARSessionObserver {}

/// An AR session (ARKit's `ARSession`): holds the configuration it runs and its delegate, so
/// that Nearby Interaction can check them.
open class ARSession: NSObject, @unchecked Sendable {
    /// Options for `run(_:options:)`.
    public struct RunOptions: OptionSet, Sendable {
        /// One bit per option.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// ARKit's run options (accepted and ignored here: no camera runs).
        public static let resetTracking = RunOptions(rawValue: 1 << 0)
        /// (See ``resetTracking``.)
        public static let removeExistingAnchors = RunOptions(rawValue: 1 << 1)
        /// (See ``removeExistingAnchors``.)
        public static let stopTrackedRaycasts = RunOptions(rawValue: 1 << 2)
        /// (See ``stopTrackedRaycasts``.)
        public static let resetSceneReconstruction = RunOptions(rawValue: 1 << 3)
    }

    private let lock = NSLock()
    private var runningConfiguration: ARConfiguration?
    private weak var weakDelegate: (any ARSessionDelegate)?

    public override init() {}

    /// The configuration the session last ran (the object itself; ARKit keeps a copy).
    open var configuration: ARConfiguration? { lock.withLock { runningConfiguration } }

    /// The delegate (held weakly, as in ARKit).
    open var delegate: (any ARSessionDelegate)? {
        get { lock.withLock { weakDelegate } }
        set { lock.withLock { weakDelegate = newValue } }
    }

    /// Runs (or re-runs) the session with `configuration`.
    open func run(_ configuration: ARConfiguration, options: RunOptions = []) {
        lock.withLock { runningConfiguration = configuration }
    }

    /// Pauses the session; its configuration is kept.
    open func pause() {}
}
