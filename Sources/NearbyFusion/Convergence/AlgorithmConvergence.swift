/// Why camera assistance has not converged (as `NIAlgorithmConvergenceStatus.Reason`),
/// a set. Each reason tells the user what to do.
public struct ConvergenceReasons: OptionSet, Sendable, Hashable {
    /// One bit per reason, in the order of the static members.
    public let rawValue: UInt8
    /// The set whose bits are `rawValue`.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Move the device: it has hardly moved since ranging began.
    public static let insufficientMovement = ConvergenceReasons(rawValue: 1 << 0)
    /// Sweep sideways: the horizontal position across the line of sight is not determined.
    public static let insufficientHorizontalSweep = ConvergenceReasons(rawValue: 1 << 1)
    /// Sweep up and down: the height, or whether the object is above or below, is not determined.
    public static let insufficientVerticalSweep = ConvergenceReasons(rawValue: 1 << 2)
    /// Turn on a light: VIO is limited by low light or too few features.
    public static let insufficientLighting = ConvergenceReasons(rawValue: 1 << 3)
    /// Move closer: ranges are missing, too weak, or too far to use.
    public static let insufficientSignalStrength = ConvergenceReasons(rawValue: 1 << 4)

    /// All reasons in the recording format's order, with their spellings.
    public static let named: [(ConvergenceReasons, String)] = [
        (.insufficientMovement, "insufficientMovement"),
        (.insufficientHorizontalSweep, "insufficientHorizontalSweep"),
        (.insufficientVerticalSweep, "insufficientVerticalSweep"),
        (.insufficientLighting, "insufficientLighting"),
        (.insufficientSignalStrength, "insufficientSignalStrength"),
    ]

    /// The reasons withholding `horizontalAngle` and `verticalDirectionEstimate`.
    public static let withholdingHorizontal: ConvergenceReasons =
        [.insufficientMovement, .insufficientHorizontalSweep, .insufficientLighting, .insufficientSignalStrength]

    /// The recording-format names of the reasons in this set (allocates; for I/O).
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }

    /// The reason spelled `name`, or `nil`.
    public init?(name: String) {
        guard let match = Self.named.first(where: { $0.1 == name }) else { return nil }
        self = match.0
    }
}

/// Camera assistance status (as `NIAlgorithmConvergenceStatus`).
public enum ConvergenceStatus: Sendable, Hashable {
    /// Not enough data to judge (no range yet, or VIO not tracking).
    case unknown
    /// Every output is determined by the measurements.
    case converged
    /// The user must act; the reasons say how.
    case notConverged(ConvergenceReasons)

    /// The reasons (empty unless `notConverged`).
    public var reasons: ConvergenceReasons {
        if case .notConverged(let r) = self { return r }
        return []
    }

    /// `unknown`, `converged` or `notConverged` (the recording format's `status`).
    public var name: String {
        switch self {
        case .unknown: return "unknown"
        case .converged: return "converged"
        case .notConverged: return "notConverged"
        }
    }

    /// Whether the status is `converged` (every output published).
    public var isConverged: Bool { if case .converged = self { return true } else { return false } }
}
