/// Running scatter of the device (antenna) positions at which ranges were accepted:
/// `n`, `Σa`, `Σaaᵀ`, so that the covariance `C = Σaaᵀ/n − ā āᵀ` of the positions is
/// available at any time in O(1) memory. `√λ_max(C)` is the RMS extent of the motion
/// along its principal axis, metres.
@_spi(Internals) public struct MovementAccumulator: Sendable, Hashable {
    public private(set) var count: Int = 0
    private var sum = Vector3.zero
    private var sumOfOuter = Matrix3.zero
    /// The first position, subtracted for numerical conditioning far from the origin.
    private var origin: Vector3?

    public init() {}

    /// Adds one position (world frame, metres).
    public mutating func add(_ positionInWorld: Vector3) {
        if origin == nil { origin = positionInWorld }
        let d = positionInWorld - origin!
        count += 1
        sum += d
        sumOfOuter += Matrix3.outer(d, d)
    }

    /// The scatter covariance `C`, m² (zero before two positions).
    public var covariance: Matrix3 {
        guard count > 1 else { return .zero }
        let n = Double(count)
        let mean = sum / n
        return ((1 / n) * sumOfOuter - Matrix3.outer(mean, mean)).symmetrized
    }
}
