import Foundation
import NearbyFusion

/// Whether the algorithm has converged, as Nearby Interaction's `NIAlgorithmConvergenceStatus`.
public enum NIAlgorithmConvergenceStatus: Sendable, Hashable {
    /// Not yet estimable (camera assistance has nothing to judge yet).
    case unknown
    /// Not converged, with what the user should do.
    case notConverged([Reason])
    /// Converged: every output is published.
    case converged

    /// Why the algorithm has not converged, as `NIAlgorithmConvergenceStatus.Reason`.
    public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The reason's name, as the recording format writes it.
        public let rawValue: String
        /// The reason named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Move the device: it has hardly moved since ranging began.
        public static let insufficientMovement = Reason(rawValue: "insufficientMovement")
        /// Sweep sideways: the horizontal direction to the object is not yet determined.
        public static let insufficientHorizontalSweep = Reason(rawValue: "insufficientHorizontalSweep")
        /// Sweep up and down: the height (or above/below) is not yet determined.
        public static let insufficientVerticalSweep = Reason(rawValue: "insufficientVerticalSweep")
        /// More light: VIO cannot track the device.
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

        /// The reason's name.
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
    /// The status and, when not converged, its reasons.
    public let status: NIAlgorithmConvergenceStatus

    /// A convergence with `status`.
    public init(status: NIAlgorithmConvergenceStatus) { self.status = status }

    init(_ convergence: AlgorithmConvergence) { status = NIAlgorithmConvergenceStatus(convergence.status) }

    /// Equal when their statuses are.
    public static func == (a: NIAlgorithmConvergence, b: NIAlgorithmConvergence) -> Bool { a.status == b.status }
    /// Hashes the status.
    public func hash(into hasher: inout Hasher) { hasher.combine(status) }
    /// `NIAlgorithmConvergence(status)`.
    public var description: String { "NIAlgorithmConvergence(\(status))" }
}
