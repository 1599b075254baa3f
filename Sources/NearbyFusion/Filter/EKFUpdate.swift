import Foundation

/// What one EKF measurement update did.
@_spi(Internals) public struct UpdateOutcome: Sendable, Equatable {
    /// The normalised innovation squared `d² = νᵀ S⁻¹ ν` (Mahalanobis distance squared).
    public var normalizedInnovationSquared: Double
    /// `det(2π S)` (the Gaussian's normaliser), kept so that the likelihood is computed
    /// only by those who need it (a single-hypothesis update does not).
    public var normaliser: Double
    /// `false` when `d²` exceeded the model's gate and the state was left unchanged.
    public var accepted: Bool

    /// An outcome with the normalised innovation squared, its normaliser and whether the gate accepted it.
    @inlinable public init(normalizedInnovationSquared: Double, normaliser: Double, accepted: Bool) {
        self.normalizedInnovationSquared = normalizedInnovationSquared
        self.normaliser = normaliser
        self.accepted = accepted
    }

    /// `N(ν; 0, S) = e^{−d²/2} / √det(2π S)` (0 when `S` is not positive).
    @inlinable public var likelihood: Double {
        normaliser > 0 && normaliser.isFinite ? exp(-0.5 * normalizedInnovationSquared) / normaliser.squareRoot() : 0
    }

    /// `log N(ν; 0, S) = −½ (d² + log det(2π S))`.
    @inlinable public var logLikelihood: Double {
        normaliser > 0 && normaliser.isFinite ? -0.5 * (normalizedInnovationSquared + log(normaliser)) : -.infinity
    }
}

/// The EKF correction step on a 3-D position state `(x, P)`, written as numbered steps:
///
/// 1. innovation `ν = z ⊖ h(x)` and its covariance `S = H P Hᵀ + R`;
/// 2. Mahalanobis gate: reject when `νᵀ S⁻¹ ν` exceeds the chi-square gate;
/// 3. gain `K = P Hᵀ S⁻¹` and state `x ← x + K ν`;
/// 4. Joseph form `P ← (I − K H) P (I − K H)ᵀ + K R Kᵀ`, which stays symmetric
///    positive semi-definite under round-off, unlike `(I − K H) P`.
///
/// Everything is fixed-size and on the stack.
@_spi(Internals) public enum EKFUpdate {
    /// The scalar update. `gated: false` skips step 2 (used by tests).
    @inlinable
    public static func update<M: ScalarMeasurementModel>(
        mean: inout Vector3, covariance: inout Matrix3, model: M, measured z: Double, gated: Bool = true
    ) -> UpdateOutcome {
        // (1) innovation and its variance, with the model's second-order terms:
        //     ν = z ⊖ (h(x) + ½tr(∇²h P)), S = hᵀPh + ½tr((∇²h P)²) + σ².
        let (predicted, h) = model.linearised(at: mean)
        let second = model.secondOrderTerms(mean, covariance: covariance)
        let nu = model.residual(z, predicted + second.meanShift)
        let ph = covariance * h
        let s = h.dot(ph) + second.variance + model.variance
        guard s > 0, s.isFinite, nu.isFinite else {
            return UpdateOutcome(normalizedInnovationSquared: .infinity, normaliser: 0, accepted: false)
        }
        let d2 = nu * nu / s
        let normaliser = 2 * .pi * s
        // (2) gate.
        if gated && d2 > model.gate {
            return UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: false)
        }
        // (3) gain and state.
        let k = ph / s
        mean += k * nu
        // (4) Joseph form with A = I − k hᵀ (the effective noise includes the second-order variance).
        let a = Matrix3.identity - Matrix3.outer(k, h)
        covariance = (a * covariance * a.transposed + (model.variance + second.variance) * Matrix3.outer(k, k)).symmetrized
        return UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: true)
    }

    /// The 2-dimensional update.
    @inlinable
    public static func update<M: PlanarMeasurementModel>(
        mean: inout Vector3, covariance: inout Matrix3, model: M, measured z: Vector2, gated: Bool = true
    ) -> UpdateOutcome {
        // (1) innovation ν and S = H P Hᵀ + R; (2) gate.
        let i = PlanarInnovation(model: model, measured: z, mean: mean, covariance: covariance)
        guard let sInverse = i.sInverse else { return i.outcome(accepted: false) }
        if gated && i.normalizedInnovationSquared > model.gate { return i.outcome(accepted: false) }
        let h = i.jacobian, nu = i.innovation, r = model.covariance
        let ph0 = i.ph0, ph1 = i.ph1
        // (3) K = P Hᵀ S⁻¹, with columns k0, k1; x ← x + K ν.
        let k0 = sInverse.a * ph0 + sInverse.b * ph1
        let k1 = sInverse.b * ph0 + sInverse.c * ph1
        mean += k0 * nu.x + k1 * nu.y
        // (4) Joseph form, A = I − k0 h0ᵀ − k1 h1ᵀ; K R Kᵀ = Σᵢⱼ Rᵢⱼ kᵢ kⱼᵀ.
        let a = Matrix3.identity - Matrix3.outer(k0, h.row0) - Matrix3.outer(k1, h.row1)
        let krk = r.a * Matrix3.outer(k0, k0) + r.b * (Matrix3.outer(k0, k1) + Matrix3.outer(k1, k0))
            + r.c * Matrix3.outer(k1, k1)
        covariance = (a * covariance * a.transposed + krk).symmetrized
        return i.outcome(accepted: true)
    }
}

/// Step 1 of a 2-dimensional update, shared by every filter that takes a direction: at the
/// position `x` with covariance `P`, the Jacobian `H` (rows `h₀`, `h₁`), the innovation
/// `ν = z ⊖ h(x)`, the columns `P h₀`, `P h₁` of `P Hᵀ`, `S = H P Hᵀ + R`, `S⁻¹` (`nil` when
/// `S` is singular or `ν` not finite), `d² = νᵀ S⁻¹ ν` and `det(2π S)`.
@_spi(Internals) public struct PlanarInnovation: Sendable {
    public let jacobian: Jacobian2x3
    /// (See ``jacobian``.)
    public let innovation: Vector2
    /// (See ``innovation``.)
    public let ph0: Vector3, ph1: Vector3
    /// (See ``ph0``.)
    public let sInverse: SymmetricMatrix2?
    /// (See ``sInverse``.)
    public let normalizedInnovationSquared: Double
    /// (See ``normalizedInnovationSquared``.)
    public let normaliser: Double

    /// The innovation of `z` against the Gaussian `(mean, covariance)` under `model`, and what its
    /// update needs (`PH₀ᵀ`, `PH₁ᵀ`, `S⁻¹`).
    @inlinable
    public init<M: PlanarMeasurementModel>(model: M, measured z: Vector2, mean: Vector3, covariance: Matrix3) {
        self.init(model: model, measured: z, linearisation: model.linearised(at: mean), covariance: covariance)
    }

    /// The same from a linearisation already made at (or carried to) the mean: `h(x)` and `H`.
    @inlinable
    public init<M: PlanarMeasurementModel>(model: M, measured z: Vector2,
                                          linearisation: (predicted: Vector2, jacobian: Jacobian2x3), covariance: Matrix3) {
        self.init(innovation: model.residual(z, linearisation.predicted), jacobian: linearisation.jacobian,
                  noise: model.covariance, covariance: covariance)
    }

    /// The same from an innovation `ν` already formed (``DirectionModel/linearisedInnovation(measuredDirection:at:)``),
    /// the Jacobian `H` at the mean and the measurement noise `R`.
    @inlinable
    public init(innovation: Vector2, jacobian: Jacobian2x3, noise r: SymmetricMatrix2, covariance: Matrix3) {
        self.jacobian = jacobian
        self.innovation = innovation
        ph0 = covariance * jacobian.row0
        ph1 = covariance * jacobian.row1
        let s = SymmetricMatrix2(a: jacobian.row0.dot(ph0) + r.a, b: jacobian.row0.dot(ph1) + r.b, c: jacobian.row1.dot(ph1) + r.c)
        if let inverse = s.inverse, innovation.x.isFinite, innovation.y.isFinite {
            sInverse = inverse
            normalizedInnovationSquared = inverse.quadraticForm(innovation)
            normaliser = 4 * .pi * .pi * s.determinant
        } else {
            sInverse = nil
            normalizedInnovationSquared = .infinity
            normaliser = 0
        }
    }

    /// The outcome of the update, accepted or not.
    @inlinable public func outcome(accepted: Bool) -> UpdateOutcome {
        UpdateOutcome(normalizedInnovationSquared: normalizedInnovationSquared, normaliser: normaliser, accepted: accepted)
    }
}
