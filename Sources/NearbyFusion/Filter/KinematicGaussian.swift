/// A Gaussian over an object's world position and velocity, `x = (p, v)`, metres and m/s,
/// world frame, with its 6×6 covariance held as three 3×3 blocks:
///
///     P = ⎡ P_pp   P_pv ⎤
///         ⎣ P_pvᵀ  P_vv ⎦
///
/// Every measurement of this engine observes the position only (`H = [h  0]`), so the
/// updates below work block by block in fixed-size 3×3 maths: no 6×6 product is formed and
/// nothing is allocated.
@_spi(Internals) public struct KinematicGaussian: Sendable, Hashable {
    /// `p`, metres, world frame.
    public var positionInWorld: Vector3
    /// `v`, m/s, world frame.
    public var velocityInWorld: Vector3
    /// `P_pp`, m².
    public var positionCovariance: Matrix3
    /// `P_pv`, m²/s.
    public var crossCovariance: Matrix3
    /// `P_vv`, m²/s².
    public var velocityCovariance: Matrix3

    /// A Gaussian over position and velocity, its covariance in 3×3 blocks.
    public init(positionInWorld: Vector3, velocityInWorld: Vector3, positionCovariance: Matrix3,
                crossCovariance: Matrix3 = .zero, velocityCovariance: Matrix3) {
        self.positionInWorld = positionInWorld
        self.velocityInWorld = velocityInWorld
        self.positionCovariance = positionCovariance
        self.crossCovariance = crossCovariance
        self.velocityCovariance = velocityCovariance
    }

    /// Every component is finite: `(Σ xᵢ) · 0 = 0` exactly when no component is NaN or ±∞
    /// (a sum that overflows to ∞ from finite parts of ~10³⁰⁸ is reported too, which no sound
    /// state reaches). One branch-free sum instead of 33 tests and branches. Inlined (an
    /// outlined call copied the 264-byte struct).
    @inlinable @inline(__always)
    public var isFinite: Bool { componentSum * 0 == 0 }

    /// The sum of all 33 components (NaN if any is NaN or ∞ − ∞; see ``isFinite``).
    @inlinable @inline(__always)
    public var componentSum: Double {
        let p = positionCovariance, c = crossCovariance, v = velocityCovariance
        var s = positionInWorld.x + positionInWorld.y + positionInWorld.z
        s += velocityInWorld.x + velocityInWorld.y + velocityInWorld.z
        s += (p.m00 + p.m01 + p.m02) + (p.m10 + p.m11 + p.m12) + (p.m20 + p.m21 + p.m22)
        s += (c.m00 + c.m01 + c.m02) + (c.m10 + c.m11 + c.m12) + (c.m20 + c.m21 + c.m22)
        s += (v.m00 + v.m01 + v.m02) + (v.m10 + v.m11 + v.m12) + (v.m20 + v.m21 + v.m22)
        return s
    }

    // MARK: Prediction

    /// The stationary model: the object stays where it is, `p' = p`, and its velocity is
    /// zero — held as `v = 0` with the *prior* covariance `σ_v² I` it would have if it
    /// started to move, so that mixing into the moving model (`InteractingMultipleModel`)
    /// hands it a realistic velocity uncertainty:
    ///
    ///     p' = p,   P_pp' = P_pp + q I,   v' = 0,   P_pv' = 0,   P_vv' = σ_v² I
    ///
    /// `q` (m²) is the random walk that absorbs slow VIO drift, already multiplied by Δt or
    /// the distance travelled.
    public mutating func predictStationary(addedPositionVariance q: Double, velocityPriorVariance: Double) {
        if q > 0 { positionCovariance += Matrix3.scaledIdentity(q) }
        velocityInWorld = .zero
        crossCovariance = .zero
        velocityCovariance = Matrix3.scaledIdentity(velocityPriorVariance)
    }

    /// The constant-velocity model driven by white acceleration noise of intensity
    /// `Q_a = diag(q_x, q_y, q_z)` (m²/s³ per world axis), over `Δt` seconds, plus the
    /// stationary random walk `q` (m²) on position:
    ///
    ///     p' = p + Δt v,   v' = v
    ///     P_pp' = P_pp + Δt (P_pv + P_pvᵀ) + Δt² P_vv + Q_a Δt³/3 + q I
    ///     P_pv' = P_pv + Δt P_vv + Q_a Δt²/2
    ///     P_vv' = P_vv + Q_a Δt
    ///
    /// (`F = [I  Δt I; 0  I]`, `Q` the discretised continuous white-noise acceleration model.)
    public mutating func predictConstantVelocity(seconds dt: Double, accelerationIntensity qa: Vector3,
                                                 addedPositionVariance q: Double) {
        guard dt > 0 else {
            if q > 0 { positionCovariance += Matrix3.scaledIdentity(q) }
            return
        }
        positionInWorld += dt * velocityInWorld
        let cross = crossCovariance
        positionCovariance = positionCovariance + dt * (cross + cross.transposed) + (dt * dt) * velocityCovariance
            + Matrix3.diagonal((dt * dt * dt / 3) * qa) + Matrix3.scaledIdentity(max(q, 0))
        crossCovariance = cross + dt * velocityCovariance + Matrix3.diagonal((dt * dt / 2) * qa)
        velocityCovariance += Matrix3.diagonal(dt * qa)
    }

    // MARK: Correction

    /// One scalar measurement of the position, `z = h(p) + w`, `w ~ N(0, σ²)`, through a
    /// ``ScalarMeasurementModel`` (range, azimuth), in numbered steps:
    ///
    /// 1. `h = ∂h/∂p` at `p`; innovation `ν = z ⊖ (h(p) + m)` and `s = hᵀ P_pp h + r`, with
    ///    the model's second-order mean shift `m` and `r = σ² + ` its second-order variance;
    /// 2. Mahalanobis gate on `ν²/s`;
    /// 3. gain `K = P Hᵀ / s` with `H = [hᵀ 0]`: `k_p = P_pp h / s`, `k_v = P_pvᵀ h / s`;
    ///    state `p += k_p ν`, `v += k_v ν`;
    /// 4. Joseph form `P ← (I − K H) P (I − K H)ᵀ + r K Kᵀ`, expanded: with
    ///    `ã = P Hᵀ = (a, b)`, `a = P_pp h`, `b = P_pvᵀ h`, and `hᵀ P h + r = s` it is exactly
    ///    `P − K ãᵀ − ã Kᵀ + s K Kᵀ` for any gain `K` — symmetric by construction, computed
    ///    per block as `A − k (b − s l)ᵀ − a lᵀ` (``Matrix3/josephBlock(_:k:b:a:l:s:)``; the
    ///    diagonal blocks by their upper triangle) instead of two 3×3 products:
    ///
    ///        P_pp ← P_pp − k_p aᵀ − a k_pᵀ + s k_p k_pᵀ
    ///        P_pv ← P_pv − k_p bᵀ − a k_vᵀ + s k_p k_vᵀ
    ///        P_vv ← P_vv − k_v bᵀ − b k_vᵀ + s k_v k_vᵀ
    @inlinable
    public mutating func update<M: ScalarMeasurementModel>(model: M, measured z: Double, gated: Bool = true) -> UpdateOutcome {
        let (h, nu, r) = linearisedInnovation(model: model, measured: z)
        return correct(h: h, innovation: nu, noiseVariance: r, gate: gated ? model.gate : .infinity)
    }

    /// Step 1 of ``update(model:measured:gated:)``: `h = ∂h/∂p` at the mean `p`, the innovation
    /// `ν = z ⊖ (h(p) + m)` and the noise variance `r = σ² +` the second-order variance.
    @inlinable @inline(__always)
    func linearisedInnovation<M: ScalarMeasurementModel>(model: M, measured z: Double)
        -> (h: Vector3, innovation: Double, noiseVariance: Double) {
        linearisedInnovation(model: model, measured: z, linearisation: model.linearised(at: positionInWorld))
    }

    /// The same from `model`'s linearisation `(h(p), ∂h/∂p)` already made at this Gaussian's mean.
    @inlinable @inline(__always)
    func linearisedInnovation<M: ScalarMeasurementModel>(model: M, measured z: Double,
                                                        linearisation: (predicted: Double, jacobian: Vector3))
        -> (h: Vector3, innovation: Double, noiseVariance: Double) {
        let second = model.secondOrderTerms(positionInWorld, covariance: positionCovariance)
        return (linearisation.jacobian, model.residual(z, linearisation.predicted + second.meanShift),
                model.variance + second.variance)
    }

    /// Steps 2–4 of ``update(model:measured:gated:)`` for a linearised scalar measurement.
    @inlinable
    mutating func correct(h: Vector3, innovation nu: Double, noiseVariance r: Double, gate: Double) -> UpdateOutcome {
        let a = positionCovariance * h
        let b = crossCovariance.transposed * h
        let s = h.dot(a) + r
        guard s > 0, s.isFinite, nu.isFinite else {
            return UpdateOutcome(normalizedInnovationSquared: .infinity, normaliser: 0, accepted: false)
        }
        let d2 = nu * nu / s
        let normaliser = 2 * .pi * s
        // (2)
        if d2 > gate { return UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: false) }
        // (3)
        let kp = a / s
        positionInWorld += kp * nu
        // (4)
        positionCovariance = Matrix3.symmetricJosephBlock(positionCovariance, k: kp, a: a, s: s)
        // Uncorrelated velocity (`P_pv = 0`, the stationary model after each prediction):
        // `b = 0`, so `k_v = 0` and the velocity and its blocks are left exactly as they are.
        guard b != .zero else {
            return UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: true)
        }
        let kv = b / s
        velocityInWorld += kv * nu
        crossCovariance = Matrix3.josephBlock(crossCovariance, k: kp, b: b, a: a, l: kv, s: s)
        velocityCovariance = Matrix3.symmetricJosephBlock(velocityCovariance, k: kv, a: b, s: s)
        return UpdateOutcome(normalizedInnovationSquared: d2, normaliser: normaliser, accepted: true)
    }

    /// A direction (azimuth and elevation) through a ``PlanarMeasurementModel`` with a
    /// diagonal noise covariance `R = diag(σ_α², σ_ε²)`:
    ///
    /// 1. both rows `h_α, h_ε` and the innovation `ν` at the prior `p`; the joint
    ///    `S = H P_pp Hᵀ + R` (2×2) and its gate on `νᵀ S⁻¹ ν` (2 degrees of freedom);
    /// 2. if accepted, two scalar corrections in sequence at that same linearisation, the
    ///    second with its innovation moved by what the first did, `ν_ε − h_ε·Δp`. With a
    ///    diagonal `R` this equals the joint 2-D update exactly, and the product of the two
    ///    scalar likelihoods equals the joint one.
    @inlinable
    public mutating func update<M: PlanarMeasurementModel>(model: M, measured z: Vector2, gated: Bool = true) -> UpdateOutcome {
        update(model: model, measured: z, linearisation: model.linearised(at: positionInWorld), gated: gated)
    }

    /// The same from a linearisation `(h(p), H)` already made at this Gaussian's mean (or
    /// carried to it, ``PlanarMeasurementModel/carriesLinearisation(from:to:)``).
    @inlinable
    public mutating func update<M: PlanarMeasurementModel>(model: M, measured z: Vector2,
                                                          linearisation: (predicted: Vector2, jacobian: Jacobian2x3),
                                                          gated: Bool = true) -> UpdateOutcome {
        update(model: model, innovation: PlanarInnovation(model: model, measured: z, linearisation: linearisation,
                                                          covariance: positionCovariance), gated: gated)
    }

    /// The same from the innovation already formed against this Gaussian's mean and position
    /// covariance (step 1).
    @inlinable
    public mutating func update<M: PlanarMeasurementModel>(model: M, innovation i: PlanarInnovation, gated: Bool = true) -> UpdateOutcome {
        guard i.sInverse != nil else { return i.outcome(accepted: false) }
        if gated && i.normalizedInnovationSquared > model.gate { return i.outcome(accepted: false) }
        let h = i.jacobian, nu = i.innovation, r = model.covariance
        let before = positionInWorld
        _ = correct(h: h.row0, innovation: nu.x, noiseVariance: r.a, gate: .infinity)
        _ = correct(h: h.row1, innovation: nu.y - h.row1.dot(positionInWorld - before), noiseVariance: r.c, gate: .infinity)
        return i.outcome(accepted: true)
    }
}
