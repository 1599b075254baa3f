import Foundation
import NearbyFusion

/// Whether the algorithm has converged, as Nearby Interaction's `NIAlgorithmConvergenceStatus`.
public enum NIAlgorithmConvergenceStatus: Sendable, Hashable {
    case unknown
    case notConverged([Reason])
    case converged

    /// Why the algorithm has not converged, as `NIAlgorithmConvergenceStatus.Reason`.
    public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let insufficientMovement = Reason(rawValue: "insufficientMovement")
        public static let insufficientHorizontalSweep = Reason(rawValue: "insufficientHorizontalSweep")
        public static let insufficientVerticalSweep = Reason(rawValue: "insufficientVerticalSweep")
        public static let insufficientLighting = Reason(rawValue: "insufficientLighting")
        /// Beyond Apple's list (see the recording format): ranges missing, too weak or too far.
        public static let insufficientSignalStrength = Reason(rawValue: "insufficientSignalStrength")

        /// What to tell the user, in English.
        public var localizedDescription: String {
            switch self {
            case .insufficientMovement: return "Move the device around."
            case .insufficientHorizontalSweep: return "Sweep the device from side to side."
            case .insufficientVerticalSweep: return "Sweep the device up and down."
            case .insufficientLighting: return "More light is needed."
            case .insufficientSignalStrength: return "Move closer to the object."
            default: return rawValue
            }
        }

        public var description: String { rawValue }
    }

    /// The engine's status in Nearby Interaction's terms; reasons in a fixed order
    /// (movement, horizontal sweep, vertical sweep, lighting, signal).
    init(_ status: ConvergenceStatus) {
        switch status {
        case .unknown: self = .unknown
        case .converged: self = .converged
        case .notConverged(let reasons):
            let table: [(ConvergenceReasons, Reason)] = [
                (.insufficientMovement, .insufficientMovement), (.insufficientHorizontalSweep, .insufficientHorizontalSweep),
                (.insufficientVerticalSweep, .insufficientVerticalSweep), (.insufficientLighting, .insufficientLighting),
                (.insufficientSignalStrength, .insufficientSignalStrength),
            ]
            self = .notConverged(table.filter { reasons.contains($0.0) }.map(\.1))
        }
    }
}

/// The convergence state of the algorithm camera assistance runs, as Nearby Interaction's
/// `NIAlgorithmConvergence` (a class there too).
public final class NIAlgorithmConvergence: Sendable, Hashable, CustomStringConvertible {
    public let status: NIAlgorithmConvergenceStatus

    public init(status: NIAlgorithmConvergenceStatus) { self.status = status }

    init(_ convergence: AlgorithmConvergence) { status = NIAlgorithmConvergenceStatus(convergence.status) }

    public static func == (a: NIAlgorithmConvergence, b: NIAlgorithmConvergence) -> Bool { a.status == b.status }
    public func hash(into hasher: inout Hasher) { hasher.combine(status) }
    public var description: String { "NIAlgorithmConvergence(\(status))" }
}
