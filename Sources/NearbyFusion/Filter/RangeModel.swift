/// UWB two-way range: the distance from the device's antenna to the object.
///
/// `h(p) = ‖p − a‖`, with `a` the antenna position in the world frame (the VIO camera
/// position plus the antenna's lever arm rotated into the world). Its Jacobian is the
/// unit line-of-sight vector, `H = (p − a)ᵀ / ‖p − a‖`. At `p = a` the gradient is
/// undefined; the model returns the zero row there (no information) rather than NaN.
public struct RangeModel: ScalarMeasurementModel, Sendable {
    /// Antenna position in the world frame, metres.
    public var antennaInWorld: Vector3
    /// Range noise variance, m².
    public var variance: Double
    /// Chi-square gate (1 dof) on the normalised innovation.
    public var gate: Double

    public init(antennaInWorld: Vector3, standardDeviation: Double, gate: Double) {
        self.antennaInWorld = antennaInWorld
        self.variance = standardDeviation * standardDeviation
        self.gate = gate
    }

    @inlinable public func predicted(_ objectInWorld: Vector3) -> Double {
        (objectInWorld - antennaInWorld).length
    }

    @inlinable public func jacobian(_ objectInWorld: Vector3) -> Vector3 {
        (objectInWorld - antennaInWorld).normalized
    }

    @inlinable public func residual(_ measured: Double, _ predicted: Double) -> Double { measured - predicted }
}
