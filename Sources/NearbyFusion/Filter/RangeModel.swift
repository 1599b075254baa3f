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

    /// The model of a range from `antennaInWorld` with noise σ `standardDeviation` (metres) and `gate`.
    public init(antennaInWorld: Vector3, standardDeviation: Double, gate: Double) {
        self.antennaInWorld = antennaInWorld
        self.variance = standardDeviation * standardDeviation
        self.gate = gate
    }

    /// `h(p) = ‖p − a‖`, metres.
    @inlinable public func predicted(_ objectInWorld: Vector3) -> Double {
        (objectInWorld - antennaInWorld).length
    }

    /// `H = (p − a)ᵀ / ‖p − a‖` (zero at `p = a`).
    @inlinable public func jacobian(_ objectInWorld: Vector3) -> Vector3 {
        (objectInWorld - antennaInWorld).normalized
    }

    /// `z − h(p)`, metres.
    @inlinable public func residual(_ measured: Double, _ predicted: Double) -> Double { measured - predicted }

    /// `‖p − a‖` and `(p − a)ᵀ/‖p − a‖` from one difference and one square root.
    @inlinable public func linearised(at objectInWorld: Vector3) -> (predicted: Double, jacobian: Vector3) {
        let d = objectInWorld - antennaInWorld
        let r = d.length
        // One division for the three components.
        return (r, r > 0 ? (1 / r) * d : .zero)
    }

    /// The range is curved: its Hessian is `∇²h = (I − uuᵀ)/r`. While a hypothesis is
    /// wide across the line of sight (right after the sphere is tiled), the expected range
    /// exceeds `‖μ − a‖` by `½ tr(∇²h P) = (tr P − uᵀPu)/(2r)` and the linearised `S`
    /// misses `½ tr((∇²h P)²)`; both are added so that wide hypotheses are neither pulled
    /// off the shell nor made overconfident. They vanish as `P` shrinks.
    @inlinable public func secondOrderTerms(_ objectInWorld: Vector3, covariance p: Matrix3) -> (meanShift: Double, variance: Double) {
        let d = objectInWorld - antennaInWorld
        let r = d.length
        guard r > 1e-6 else { return (0, 0) }
        // Both terms are at most (tr P / 2r) and its square: skip them once that is below
        // 1 % of the range noise (a tracked, converged object), as they change nothing.
        let bound = 0.5 * p.trace / r
        if bound * bound < 1e-4 * variance { return (0, 0) }
        // With `w = P u` and `s = uᵀ P u`, `M = ∇²h P = (P − u wᵀ)/r` (P symmetric) gives
        // `tr M = (tr P − s)/r` and `tr M² = (tr P² − 2 wᵀw + s²)/r²`, `tr P² = Σᵢⱼ Pᵢⱼ²`:
        // no 3×3 product.
        let u = d / r
        let w = p * u
        let s = u.dot(w)
        let squares = p.m00 * p.m00 + p.m11 * p.m11 + p.m22 * p.m22
            + 2 * (p.m01 * p.m01 + p.m02 * p.m02 + p.m12 * p.m12)
        let inverse = 1 / r
        return (0.5 * (p.trace - s) * inverse, 0.5 * (squares - 2 * w.dot(w) + s * s) * inverse * inverse)
    }
}
