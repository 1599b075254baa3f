/// A scalar measurement `z = h(p) + v`, `v ~ N(0, σ²)`, of the object's world position `p`.
///
/// A model states its prediction, its Jacobian `H = ∂h/∂p` (a row, stored as a
/// `Vector3`) and how residuals are formed (angles wrap), so that one EKF update
/// (`EKFUpdate`) serves every kind of measurement.
public protocol ScalarMeasurementModel {
    /// Measurement noise variance `σ²`, in the measurement's unit squared.
    var variance: Double { get }
    /// Chi-square gate on `ν²/S` (1 degree of freedom) beyond which the measurement is
    /// treated as an outlier.
    var gate: Double { get }
    /// `h(p)`.
    func predicted(_ objectInWorld: Vector3) -> Double
    /// `∂h/∂p` at `p`.
    func jacobian(_ objectInWorld: Vector3) -> Vector3
    /// `z − ẑ`, wrapped where the measurement is an angle.
    func residual(_ measured: Double, _ predicted: Double) -> Double
    /// `h(p)` and `∂h/∂p` together (a model overrides it to share their common work, e.g. one
    /// rotation into the device frame). Every estimator step — the EKF, the IMM's models and
    /// the batch solver — linearises through it.
    func linearised(at objectInWorld: Vector3) -> (predicted: Double, jacobian: Vector3)
    /// Second-order terms for a curved `h` under the state covariance `P`: the mean shift
    /// `½ tr(∇²h P)` added to the prediction and the variance `½ tr((∇²h P)²)` added to
    /// `S` (the second-order EKF). A model that is nearly linear returns `(0, 0)`.
    func secondOrderTerms(_ objectInWorld: Vector3, covariance: Matrix3) -> (meanShift: Double, variance: Double)
}

extension ScalarMeasurementModel {
    /// `h(p)` and `H` at `objectInWorld`, in one call.
    @inlinable public func linearised(at objectInWorld: Vector3) -> (predicted: Double, jacobian: Vector3) {
        (predicted(objectInWorld), jacobian(objectInWorld))
    }

    /// The first-order normalised innovation squared `ν²/s` of a measurement `z` against a
    /// Gaussian `N(p, P)`: `ν = z ⊖ h(p)`, `s = H P Hᵀ + σ²` — the quantity every gate
    /// compares with its chi-square bound.
    @inlinable public func normalizedInnovationSquared(_ z: Double, at objectInWorld: Vector3, covariance: Matrix3) -> Double {
        let nu = residual(z, predicted(objectInWorld))
        return nu * nu / (covariance.quadraticForm(jacobian(objectInWorld)) + variance)
    }

    /// The signed first-order normalised innovation `ν/√s` (see above).
    @inlinable public func normalizedInnovation(_ z: Double, at objectInWorld: Vector3, covariance: Matrix3) -> Double {
        residual(z, predicted(objectInWorld)) / (covariance.quadraticForm(jacobian(objectInWorld)) + variance).squareRoot()
    }

    /// The second-order terms of `h` over a Gaussian `(p, P)`: the mean shift `½ tr(∇²h P)` and the
    /// variance `½ tr((∇²h P)²)` a first-order update leaves out.
    @inlinable public func secondOrderTerms(_ objectInWorld: Vector3, covariance: Matrix3) -> (meanShift: Double, variance: Double) {
        (0, 0)
    }
}

/// A 2-dimensional measurement `z = h(p) + v`, `v ~ N(0, R)`.
public protocol PlanarMeasurementModel {
    /// Measurement noise covariance `R`.
    var covariance: SymmetricMatrix2 { get }
    /// Chi-square gate on `νᵀS⁻¹ν` (2 degrees of freedom).
    var gate: Double { get }
    /// `h(p)`.
    func predicted(_ objectInWorld: Vector3) -> Vector2
    /// `∂h/∂p` at `p` (2×3).
    func jacobian(_ objectInWorld: Vector3) -> Jacobian2x3
    /// `z − ẑ`, angles wrapped into `(−π, π]`.
    func residual(_ measured: Vector2, _ predicted: Vector2) -> Vector2
    /// `h(p)` and `∂h/∂p` together (see ``ScalarMeasurementModel/linearised(at:)``).
    func linearised(at objectInWorld: Vector3) -> (predicted: Vector2, jacobian: Jacobian2x3)
    /// Whether a linearisation made at `a` stands for one at `b` once carried to first order,
    /// `h(b) ≈ h(a) + H (b − a)` with the same `H`: whether `b` is so close to `a` that the
    /// second-order term this drops is a negligible fraction of the measurement noise.
    func carriesLinearisation(from a: Vector3, to b: Vector3) -> Bool
}

extension PlanarMeasurementModel {
    /// `h(p)` and `H` at `objectInWorld`, in one call.
    @inlinable public func linearised(at objectInWorld: Vector3) -> (predicted: Vector2, jacobian: Jacobian2x3) {
        (predicted(objectInWorld), jacobian(objectInWorld))
    }

    /// Never, unless the model bounds its curvature.
    @inlinable public func carriesLinearisation(from a: Vector3, to b: Vector3) -> Bool { false }
}
