import Foundation

// The batch of an object that may move: its position and a constant velocity over the
// window, solved in 3×3 blocks, and kept between updates as a quadratic model.
extension BatchRefinement {
    /// The normal equations of the moving batch, in 3×3 blocks: the state is `z = (x, v)`,
    /// `x` the position at the time the equations are anchored to (`now`, or a kept model's
    /// anchor, ``MovingLinearisation/anchorTime``) and `v` a constant velocity (world frame,
    /// metres and m/s).
    public struct MovingNormalEquations: Sendable, Hashable {
        /// `A_xx`, `A_xv`, `A_vv`: the blocks of the information matrix (1/m², 1/(m·m/s)… per
        /// the state's units).
        public var axx = Matrix3.zero, axv = Matrix3.zero, avv = Matrix3.zero
        /// `b_x`, `b_v`: minus the gradient of the cost.
        public var bx = Vector3.zero, bv = Vector3.zero
        /// `K_xx`, `K_xv`, `K_vv`: the ranges' curvature that Gauss–Newton leaves out of the
        /// Hessian, `K = Σ w e (I − g gᵀ)/r` in the same blocks (``addRange(_:range:gradient:age:multiplicity:density:shortOutlierDensity:)``).
        /// With the robust weights held, the Hessian of the cost is `A − K`; ``newtonStep()`` takes it.
        public var kxx = Matrix3.zero, kxv = Matrix3.zero, kvv = Matrix3.zero
        /// `Σ c log p(e)` of the residuals added.
        public var logLikelihood = 0.0

        /// No terms.
        public init() {}

        /// Adds one residual `e` whose gradient with respect to the position at its time is
        /// `g`, the entry `τ` seconds older than the anchor (negative when newer):
        /// `∂h/∂x = g`, `∂h/∂v = −τ g`, so `A_xx += w g gᵀ`, `A_xv −= τ w g gᵀ`,
        /// `A_vv += τ² w g gᵀ`, `b_x += w e g`, `b_v −= τ w e g`. Returns the share of the
        /// residual's density that is the inlier's, `π`.
        @inline(__always) @discardableResult
        mutating func add(_ e: Double, gradient g: Vector3, age tau: Double, multiplicity c: Double,
                          density: RangeErrorDensity.AtVariance) -> Double {
            let robust = density.robustWeight(e, multiplicity: c)
            accumulate(e, weight: robust.weight, logTerm: c * log(robust.density), gradient: g, age: tau)
            return robust.weight * density.variance / max(c, 1e-300)
        }

        /// A range residual `e = z − h` at `r = h(p) = ‖p − a‖` (metres), added as
        /// ``add(_:gradient:age:multiplicity:density:)`` adds any residual — a short one
        /// (`e < 0`) with the gross outliers' density `shortOutlierDensity` (m⁻¹) in place of
        /// `ε/span` — and its
        /// curvature: `∇²h = (I − g gᵀ)/r`, so the Hessian of `½ w e²` is
        /// `w g gᵀ − w e (I − g gᵀ)/r`. Gauss–Newton keeps the first term; the second goes to `K`
        /// as `M = (w e / r)(I − g gᵀ)`: `K_xx += M`, `K_xv −= τ M`, `K_vv += τ² M`. Returns `π`.
        @inline(__always) @discardableResult
        mutating func addRange(_ e: Double, range r: Double, gradient g: Vector3, age tau: Double,
                               multiplicity c: Double, density: RangeErrorDensity.AtVariance, shortOutlierDensity: Double) -> Double {
            let robust = density.robustWeight(e, multiplicity: c,
                                              outlierDensity: e < 0 ? shortOutlierDensity : density.density.outlierDensity)
            let w = robust.weight
            accumulate(e, weight: w, logTerm: c * log(robust.density), gradient: g, age: tau)
            // `M = (w e / r)(I − g gᵀ)` is symmetric: its upper triangle only (``mirrorLowerTriangles()``).
            let q = w * e / r
            let m00 = q * (1 - g.x * g.x), m01 = q * (0 - g.x * g.y), m02 = q * (0 - g.x * g.z)
            let m11 = q * (1 - g.y * g.y), m12 = q * (0 - g.y * g.z), m22 = q * (1 - g.z * g.z)
            kxx.addUpperTriangle(1, m00, m01, m02, m11, m12, m22)
            kxv.addUpperTriangle(-tau, m00, m01, m02, m11, m12, m22)
            kvv.addUpperTriangle(tau * tau, m00, m01, m02, m11, m12, m22)
            return w * density.variance / max(c, 1e-300)
        }

        /// Values a residual takes in the moving batch's slots (``summing(_:)``): `e`, `w`,
        /// `c log p(e)`, `g` (3), `τ`, and `q = w e / r` for a range (NaN for an angle).
        static let slotWidth = 8
        /// The most residuals an entry adds: a range, an azimuth and an elevation.
        static let slotsPerEntry = 3

        /// Empty equations summing the residuals in `slots` (``slotWidth`` values each, in the
        /// order the window's entries add them): `A_xx = Σ w g gᵀ`, `A_xv = Σ (−τ) w g gᵀ`,
        /// `A_vv = Σ τ² w g gᵀ`, `b_x = Σ (w e) g`, `b_v = Σ (−τ w e) g`, `log L = Σ c log p(e)`,
        /// and over the ranges `M = q (I − g gᵀ)`, `K_xx = Σ M`, `K_xv = Σ (−τ) M`, `K_vv = Σ τ² M`
        /// (``add(_:gradient:age:multiplicity:density:)``, ``addRange(_:range:gradient:age:multiplicity:density:shortOutlierDensity:)``).
        /// Each sum runs over the slots in their order with the same products, so the result is
        /// the residuals added one by one, to the bit; summed a few sums at a time, the loops
        /// keep their sums in registers (all of them at once do not fit), with no call to a
        /// mathematical library among them. Upper triangles only (``mirrorLowerTriangles()``).
        static func summing(_ slots: UnsafeBufferPointer<Double>) -> MovingNormalEquations {
            var n = MovingNormalEquations()
            let count = slots.count / slotWidth
            guard count > 0, let base = slots.baseAddress else { return n }
            // `A_xx` and `log L`.
            var a00 = 0.0, a01 = 0.0, a02 = 0.0, a11 = 0.0, a12 = 0.0, a22 = 0.0, logs = 0.0
            for i in 0..<count {
                let s = base + slotWidth * i
                let w = s[1], gx = s[3], gy = s[4], gz = s[5]
                a00 += w * (gx * gx); a01 += w * (gx * gy); a02 += w * (gx * gz)
                a11 += w * (gy * gy); a12 += w * (gy * gz); a22 += w * (gz * gz)
                logs += s[2]
            }
            n.axx = Matrix3(a00, a01, a02, 0, a11, a12, 0, 0, a22)
            n.logLikelihood = logs
            // `A_xv` and `A_vv`.
            var v00 = 0.0, v01 = 0.0, v02 = 0.0, v11 = 0.0, v12 = 0.0, v22 = 0.0
            (a00, a01, a02, a11, a12, a22) = (0, 0, 0, 0, 0, 0)
            for i in 0..<count {
                let s = base + slotWidth * i
                let w = s[1], gx = s[3], gy = s[4], gz = s[5], tau = s[6]
                let p00 = w * (gx * gx), p01 = w * (gx * gy), p02 = w * (gx * gz)
                let p11 = w * (gy * gy), p12 = w * (gy * gz), p22 = w * (gz * gz)
                let u = -tau, u2 = tau * tau
                a00 += u * p00; a01 += u * p01; a02 += u * p02; a11 += u * p11; a12 += u * p12; a22 += u * p22
                v00 += u2 * p00; v01 += u2 * p01; v02 += u2 * p02; v11 += u2 * p11; v12 += u2 * p12; v22 += u2 * p22
            }
            n.axv = Matrix3(a00, a01, a02, 0, a11, a12, 0, 0, a22)
            n.avv = Matrix3(v00, v01, v02, 0, v11, v12, 0, 0, v22)
            // `b_x` and `b_v`.
            var bx = Vector3.zero, bv = Vector3.zero
            for i in 0..<count {
                let s = base + slotWidth * i
                let e = s[0], w = s[1], tau = s[6]
                let g = Vector3(s[3], s[4], s[5])
                bx += (w * e) * g
                bv += (-tau * w * e) * g
            }
            n.bx = bx
            n.bv = bv
            // `K_xx`, then `K_xv` and `K_vv`, over the ranges.
            (a00, a01, a02, a11, a12, a22) = (0, 0, 0, 0, 0, 0)
            for i in 0..<count {
                let s = base + slotWidth * i
                let q = s[7], gx = s[3], gy = s[4], gz = s[5]
                guard !q.isNaN else { continue }
                a00 += q * (1 - gx * gx); a01 += q * (0 - gx * gy); a02 += q * (0 - gx * gz)
                a11 += q * (1 - gy * gy); a12 += q * (0 - gy * gz); a22 += q * (1 - gz * gz)
            }
            n.kxx = Matrix3(a00, a01, a02, 0, a11, a12, 0, 0, a22)
            (a00, a01, a02, a11, a12, a22) = (0, 0, 0, 0, 0, 0)
            (v00, v01, v02, v11, v12, v22) = (0, 0, 0, 0, 0, 0)
            for i in 0..<count {
                let s = base + slotWidth * i
                let q = s[7], gx = s[3], gy = s[4], gz = s[5], tau = s[6]
                guard !q.isNaN else { continue }
                let m00 = q * (1 - gx * gx), m01 = q * (0 - gx * gy), m02 = q * (0 - gx * gz)
                let m11 = q * (1 - gy * gy), m12 = q * (0 - gy * gz), m22 = q * (1 - gz * gz)
                let u = -tau, u2 = tau * tau
                a00 += u * m00; a01 += u * m01; a02 += u * m02; a11 += u * m11; a12 += u * m12; a22 += u * m22
                v00 += u2 * m00; v01 += u2 * m01; v02 += u2 * m02; v11 += u2 * m11; v12 += u2 * m12; v22 += u2 * m22
            }
            n.kxv = Matrix3(a00, a01, a02, 0, a11, a12, 0, 0, a22)
            n.kvv = Matrix3(v00, v01, v02, 0, v11, v12, 0, 0, v22)
            return n
        }

        /// The terms of one residual `e` with robust weight `w` and `c log p(e)` (see
        /// ``add(_:gradient:age:multiplicity:density:)``).
        @inline(__always)
        private mutating func accumulate(_ e: Double, weight w: Double, logTerm: Double, gradient g: Vector3, age tau: Double) {
            // `w g gᵀ` is symmetric: its upper triangle only (``mirrorLowerTriangles()``).
            let p00 = w * (g.x * g.x), p01 = w * (g.x * g.y), p02 = w * (g.x * g.z)
            let p11 = w * (g.y * g.y), p12 = w * (g.y * g.z), p22 = w * (g.z * g.z)
            axx.addUpperTriangle(1, p00, p01, p02, p11, p12, p22)
            axv.addUpperTriangle(-tau, p00, p01, p02, p11, p12, p22)
            avv.addUpperTriangle(tau * tau, p00, p01, p02, p11, p12, p22)
            bx += (w * e) * g
            bv += (-tau * w * e) * g
            logLikelihood += logTerm
        }

        /// Completes the six sums of residual terms, which ``add(_:gradient:age:multiplicity:density:)``
        /// and ``addRange(_:range:gradient:age:multiplicity:density:shortOutlierDensity:)`` keep on
        /// their upper triangles (each term is symmetric, so the lower triangles summed apart would
        /// hold the same numbers): `A_ij = A_ji` for `i > j`. Every sum of terms is completed before
        /// it is read.
        @inline(__always)
        mutating func mirrorLowerTriangles() {
            axx = axx.mirroredUpperTriangle; axv = axv.mirroredUpperTriangle; avv = avv.mirroredUpperTriangle
            kxx = kxx.mirroredUpperTriangle; kxv = kxv.mirroredUpperTriangle; kvv = kvv.mirroredUpperTriangle
        }

        /// `self` with the measurement sums `m` added, each scaled by `d`: `A += d A_m`,
        /// `K += d K_m`, `b += d b_m`, `log L += d log L_m`.
        @inline(__always)
        func adding(_ m: MovingNormalEquations, scaledBy d: Double) -> MovingNormalEquations {
            var n = self
            n.axx += d * m.axx
            n.axv += d * m.axv
            n.avv += d * m.avv
            n.kxx += d * m.kxx
            n.kxv += d * m.kxv
            n.kvv += d * m.kvv
            n.bx += d * m.bx
            n.bv += d * m.bv
            n.logLikelihood += d * m.logLikelihood
            return n
        }

        /// The Newton step `δ = (A − K)⁻¹ b`, by the same Schur complement as ``solve()``, when
        /// the Hessian `H = A − K` is positive definite (both 3×3 pivots pass
        /// ``Matrix3/isPositiveDefinite``) and `δ` descends (`bᵀδ > 0`); `nil` otherwise, and the
        /// Gauss–Newton step is taken instead.
        ///
        /// Gauss–Newton drops `K`. Where the ranges alone fix the object, `K` is small against
        /// `A` and changes nothing; along the valley of a range-only moving object (where it is
        /// and how it moves trade against each other), `A` is small too, and without `K`
        /// Gauss–Newton converges linearly, each step a fixed fraction of the last. With `K`
        /// the steps converge quadratically. Only the step changes: the covariance and the
        /// evidence still take `A` (the Laplace approximation with the expected information).
        @_spi(Internals) public func newtonStep() -> (dx: Vector3, dv: Vector3)? {
            guard let step = schurSolve(axx - kxx, axv - kxv, avv - kvv, positiveDefinite: true),
                  step.dx.isFinite, step.dv.isFinite, bx.dot(step.dx) + bv.dot(step.dv) > 0 else { return nil }
            return (step.dx, step.dv)
        }

        /// Solves `A δ = b` by the Schur complement of the position block, and returns `δ`,
        /// the position block of `A⁻¹` and `log det A`:
        /// `S = A_vv − A_xvᵀ A_xx⁻¹ A_xv`, `δ_v = S⁻¹ (b_v − A_xvᵀ A_xx⁻¹ b_x)`,
        /// `δ_x = A_xx⁻¹ (b_x − A_xv δ_v)`, `(A⁻¹)_xx = A_xx⁻¹ + A_xx⁻¹ A_xv S⁻¹ A_xvᵀ A_xx⁻¹`,
        /// `(A⁻¹)_xv = −A_xx⁻¹ A_xv S⁻¹`, `(A⁻¹)_vv = S⁻¹`, `det A = det A_xx · det S`. `nil` when a
        /// block is singular. (Inlined: returned from a call, the 273-byte result was built
        /// and then copied whole.)
        @inline(__always)
        @_spi(Internals) public func solve() -> (dx: Vector3, dv: Vector3, positionCovariance: Matrix3, crossCovariance: Matrix3,
                         velocityCovariance: Matrix3, logDeterminant: Double)? {
            guard let s = schurSolve(axx, axv, avv, positiveDefinite: false) else { return nil }
            let detX = axx.determinant, detS = s.schur.determinant
            guard detX > 0, detS > 0 else { return nil }
            let positionCovariance = (s.xxInverse + s.k * s.schurInverse * s.k.transposed).symmetrized
            // (A⁻¹)_xv = −A_xx⁻¹ A_xv S⁻¹.
            return (s.dx, s.dv, positionCovariance, -1 * (s.k * s.schurInverse), s.schurInverse.symmetrized,
                    log(detX) + log(detS))
        }

        /// `[H_xx H_xv; H_xvᵀ H_vv] δ = b` by the Schur complement of the position block
        /// (``solve()``'s equations with `H` for `A`), with the factors `H_xx⁻¹`,
        /// `K = H_xx⁻¹ H_xv`, `S` and `S⁻¹`. `nil` when a pivot is singular or, with
        /// `positiveDefinite`, not positive definite.
        @inline(__always)
        private func schurSolve(_ hxx: Matrix3, _ hxv: Matrix3, _ hvv: Matrix3, positiveDefinite: Bool)
            -> (dx: Vector3, dv: Vector3, xxInverse: Matrix3, k: Matrix3, schur: Matrix3, schurInverse: Matrix3)? {
            guard !positiveDefinite || hxx.isPositiveDefinite, let xxInverse = hxx.inverse else { return nil }
            let k = xxInverse * hxv
            let schur = (hvv - hxv.transposed * k).symmetrized
            guard !positiveDefinite || schur.isPositiveDefinite, let schurInverse = schur.inverse else { return nil }
            let dv = schurInverse * (bv - hxv.transposed * (xxInverse * bx))
            let dx = xxInverse * (bx - hxv * dv)
            return (dx, dv, xxInverse, k, schur, schurInverse)
        }
    }

    /// The prior's normal equations and cost for the state `(x, v)` anchored at `t_m`: the
    /// tile's prior on the position at the start `t₀` of the acquisition,
    /// `x − v τ₀ ~ N(μ₀, P₀)` (`τ₀ = t_m − t₀`), and `v ~ N(0, σ_v² I)`. With
    /// `u = x − τ₀ v − μ₀` and `Λ = P₀⁻¹`: `A_xx = Λ`, `A_xv = −τ₀ Λ`, `A_vv = τ₀² Λ + σ_v⁻² I`,
    /// `b_x = −Λ u`, `b_v = τ₀ Λ u − v/σ_v²`, cost `½ uᵀ Λ u + ½ |v|²/σ_v²` (exactly quadratic).
    @inline(__always)
    static func movingPrior(position x: Vector3, velocity v: Vector3, anchor: Double, start: Double, priorInformation: Matrix3,
                            priorMean: Vector3, velocityInformation: Double) -> (equations: MovingNormalEquations, cost: Double) {
        var n = MovingNormalEquations()
        let tau0 = anchor - start
        let u = x - tau0 * v - priorMean
        let lu = priorInformation * u
        n.axx = priorInformation
        n.axv = (-tau0) * priorInformation
        n.avv = (tau0 * tau0) * priorInformation + Matrix3.scaledIdentity(velocityInformation)
        n.bx = -1 * lu
        n.bv = tau0 * lu - velocityInformation * v
        return (n, 0.5 * u.dot(lu) + 0.5 * velocityInformation * v.lengthSquared)
    }

    /// Adds the terms of `entries` for the state `(x, v)` anchored at `t_m` to `n`: each
    /// entry's residuals evaluated at the position `x − v (t_m − t_k)`, weighed by the fading
    /// memory relative to the anchor, `c_k = m_k exp((t_k − t_m)/T)` (`m_k` its multiplicity,
    /// `T` = ``FusionOptions/Motion/movingBatchMemory``), so that at a later `now` the
    /// window's faded sums are these times `exp(−(now − t_m)/T)`. Returns the least inlier
    /// share `π` of the ranges added (1 without any) and whether an entry's direction is
    /// missing.
    @inline(__always) @discardableResult
    static func addMoving<C: Collection<WindowEntry>>(_ entries: C, position x: Vector3, velocity v: Vector3, anchor: Double,
                                                      k: Constants, to n: inout MovingNormalEquations) -> (share: Double, missing: Bool) {
        var share = 1.0, missing = false
        for e in entries {
            let tau = anchor - e.timestamp
            share = min(share, addMoving(e, weight: e.multiplicity * exp(-tau * k.inverseMemory), age: tau, position: x,
                                         velocity: v, k: k, to: &n))
            missing = missing || (e.directionMissing && e.direction == .none)
        }
        n.mirrorLowerTriangles()
        return (share, missing)
    }

    /// One entry's terms (``addMoving(_:position:velocity:anchor:k:to:)``) with its faded weight
    /// `c` and its age `τ` relative to the anchor given; returns its ranges' inlier share.
    @inline(__always) @discardableResult
    static func addMoving(_ e: WindowEntry, weight c: Double, age tau: Double, position x: Vector3, velocity v: Vector3,
                          k: Constants, to n: inout MovingNormalEquations) -> Double {
        var share = 1.0
        let p = x - tau * v
        if e.hasRange {
            let model = k.options.nominalRangeModel(from: e.antennaInWorld)
            let (r, g) = model.linearised(at: p)
            if r > 1e-6 {
                share = n.addRange(model.residual(e.rangeMetres, r), range: r, gradient: g, age: tau,
                                   multiplicity: c, density: k.range, shortOutlierDensity: k.shortRangeOutlierDensity)
            }
        }
        forEachDirectionResidual(of: e, at: p, k: k) { residual, density, g in
            n.add(residual, gradient: g, age: tau, multiplicity: c, density: density)
        }
        return share
    }

    /// Normal equations and cost of the whole window for the state `(x, v)` at `now`
    /// (``movingPrior(position:velocity:anchor:start:priorInformation:priorMean:velocityInformation:)``
    /// plus every entry, ``addMoving(_:position:velocity:anchor:k:to:)``, with the entries'
    /// faded weights `m_k exp(−(now − t_k)/T)` computed once per refinement,
    /// ``MovingProblem/fadedWeights``), and the window's terms alone (what a kept model
    /// starts from).
    static func lineariseMoving(position x: Vector3, velocity v: Vector3, priorInformation: Matrix3, priorMean: Vector3,
                                problem p: MovingProblem)
        -> (total: MovingNormalEquations, cost: Double, measurements: MovingNormalEquations, missing: Bool) {
        p.k.windowPasses?.pointee += 1
        p.k.windowEntries?.pointee += p.window.entries.count
        let k = p.k, slots = p.slots, width = MovingNormalEquations.slotWidth
        var missing = false
        var count = 0
        // Each residual's robust weight and `c log p(e)` (the calls to `exp` and `log`) into its
        // slot, then the sums over the slots (what ``addMoving(_:weight:age:position:velocity:k:to:)``
        // adds entry by entry, to the bit).
        func fill(_ residual: Double, _ robust: (weight: Double, density: Double), _ c: Double, _ g: Vector3, _ tau: Double,
                  _ q: Double) {
            let s = width * count
            slots[s] = residual
            slots[s + 1] = robust.weight
            slots[s + 2] = c * log(robust.density)
            slots[s + 3] = g.x
            slots[s + 4] = g.y
            slots[s + 5] = g.z
            slots[s + 6] = tau
            slots[s + 7] = q
            count += 1
        }
        p.window.entries.withUnsafeBufferPointer { entries in
            for j in entries.indices {
                let e = entries[j]
                let c = p.fadedWeights[j], tau = p.now - e.timestamp
                let position = x - tau * v
                if e.hasRange {
                    let model = k.options.nominalRangeModel(from: e.antennaInWorld)
                    let (r, g) = model.linearised(at: position)
                    if r > 1e-6 {
                        let residual = model.residual(e.rangeMetres, r)
                        let robust = k.range.robustWeight(residual, multiplicity: c,
                                                          outlierDensity: residual < 0 ? k.shortRangeOutlierDensity
                                                                                       : k.range.density.outlierDensity)
                        fill(residual, (robust.weight, robust.density), c, g, tau, robust.weight * residual / r)
                    }
                }
                if e.direction != .none {
                    forEachDirectionResidual(of: e, at: position, k: k) { residual, density, g in
                        let robust = density.robustWeight(residual, multiplicity: c)
                        fill(residual, (robust.weight, robust.density), c, g, tau, .nan)
                    }
                }
                missing = missing || (e.directionMissing && e.direction == .none)
            }
        }
        var m = MovingNormalEquations.summing(UnsafeBufferPointer(rebasing: slots[0..<(width * count)]))
        m.mirrorLowerTriangles()
        let prior = movingPrior(position: x, velocity: v, anchor: p.now, start: p.start, priorInformation: priorInformation,
                                priorMean: priorMean, velocityInformation: p.velocityInformation)
        return (prior.equations.adding(m, scaledBy: p.informationScale), prior.cost - p.informationScale * m.logLikelihood, m, missing)
    }
}

/// One hypothesis's moving batch kept between updates: the window's terms linearised at a
/// point `(x̂, v̂)` anchored at a time `t_m` (``BatchRefinement/addMoving(_:position:velocity:anchor:k:to:)``),
/// so that a new update adds its own terms and nothing else is recomputed — the moving
/// counterpart of ``BatchLinearisation``.
///
/// The fading memory is what makes this possible: every entry's weight falls by the same
/// factor `exp(−Δt/T)` as time passes, so the window's sums at `now` are the kept sums times
/// `d = exp(−(now − t_m)/T)`, and the model of the whole cost at `now` is
/// `f(x̂ + δx, v̂ + δv) ≈ f₀(δ) + d (−log L_m − b_mᵀδ + ½ δᵀ A_m δ)`, `f₀` the prior's exact
/// quadratic. The model is rebuilt at the minimum — the window linearised afresh, anchored at
/// `now` — when the step moves a position the window reads by more than the linearisation
/// holds for, when a new range is an outlier at the model's point, and whenever the window is
/// reshaped.
@_spi(Internals) public struct MovingLinearisation: Sendable, Hashable {
    /// `x̂`, the position at ``anchorTime``, world frame, metres.
    public var position = Vector3.zero
    /// `v̂`, world frame, m/s.
    public var velocity = Vector3.zero
    /// `t_m`, seconds (the recording's clock).
    public var anchorTime = 0.0
    /// The acquisition start `t₀` the tile prior holds at, seconds.
    public var startTime = 0.0
    /// The window's terms at the point, weighed relative to the anchor (no prior).
    public var measurements = BatchRefinement.MovingNormalEquations()
    /// Whether an entry the terms sum has a missing direction (its evidence is then evaluated
    /// at the solution over the window).
    public var hasMissingDirections = false
    /// Which window the terms sum (``MeasurementWindow/revision``) and how many of its entries;
    /// `-1`: no model yet.
    public var windowRevision: UInt64 = 0
    /// (See ``windowRevision``.)
    public var entryCount = -1
    /// The hypothesis's normalised log weight when the model was last linearised, nats.
    public var logWeightAtLinearisation = 0.0

    /// How far, nats, a hypothesis's normalised log weight may fall below
    /// ``logWeightAtLinearisation`` before its kept model is dropped and the hypothesis
    /// re-solved from its last solution (as ``FusionOptions/Acquisition/relinearisationTolerance``
    /// 0 does at every update).
    ///
    /// A kept model is a local one. A new range that is an outlier at its point (a walker's
    /// ranges carry errors correlated over seconds) makes it iterate, and the iterations can
    /// carry it into another basin of the six-dimensional cost, from which the model, judged
    /// by its own reach, does not return; its weight, read off that basin, then falls by
    /// nats per update, and a falling weight widens the reach it is judged by (the tolerance
    /// scales with `√(0.01/w)`). Re-solved after every two nats of decline, a hypothesis is
    /// pruned only on the word of fresh solutions, as the exact batch (`--relinearisation 0`)
    /// prunes it.
    public static let weightFallBeforeResolving = 2.0

    /// An empty model (the hypothesis is solved in full at its next refinement).
    public init() {}

    init(position: Vector3, velocity: Vector3, anchorTime: Double, startTime: Double, measurements: BatchRefinement.MovingNormalEquations,
         hasMissingDirections: Bool, windowRevision: UInt64, entryCount: Int, logWeight: Double) {
        self.position = position
        self.velocity = velocity
        self.anchorTime = anchorTime
        self.startTime = startTime
        self.measurements = measurements
        self.hasMissingDirections = hasMissingDirections
        self.windowRevision = windowRevision
        self.entryCount = entryCount
        self.logWeightAtLinearisation = logWeight
    }
}

extension BatchRefinement {
    /// The terms of `entries` for the state `(x, v)` anchored at `anchor` (seconds), without
    /// any prior (``addMoving(_:position:velocity:anchor:k:to:)``): what a kept moving model
    /// sums, however it was built.
    public static func movingTerms<C: Collection<WindowEntry>>(of entries: C, position x: Vector3, velocity v: Vector3,
                                                              anchor: Double, options o: FusionOptions) -> MovingNormalEquations {
        var n = MovingNormalEquations()
        addMoving(entries, position: x, velocity: v, anchor: anchor, k: Constants(o), to: &n)
        return n
    }
}

extension BatchRefinement {
    /// The terms of `window` for the state `(x, v)` at `now`, without any prior, as a window
    /// pass of the moving batch sums them: through residual slots
    /// (``MovingNormalEquations/summing(_:)``), each entry weighed `m_k exp(−(now − t_k)/T)`.
    /// The same numbers, to the bit, as ``movingTerms(of:position:velocity:anchor:options:)``
    /// entry by entry.
    public static func movingWindowTerms(of window: MeasurementWindow, position x: Vector3, velocity v: Vector3, now: Double,
                                         options o: FusionOptions) -> MovingNormalEquations {
        let k = Constants(o)
        let count = max(window.entries.count, 1)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: scratchCount(entries: count)) { storage in
            let faded = UnsafeMutableBufferPointer(rebasing: storage[0..<count])
            for (j, e) in window.entries.enumerated() { faded[j] = e.multiplicity * exp(-(now - e.timestamp) * k.inverseMemory) }
            let problem = MovingProblem(window: window, now: now, start: now, k: k, velocityInformation: 1, logVelocityPriorNormaliser: 0,
                                        addedVariance: 0, fadedWeights: UnsafeBufferPointer(faded),
                                        slots: UnsafeMutableBufferPointer(rebasing: storage[count...]), informationScale: 1)
            return lineariseMoving(position: x, velocity: v, priorInformation: .identity, priorMean: x, problem: problem).measurements
        }
    }
}

extension BatchRefinement {
    /// Refines every hypothesis of an object that may move (a peer, or an object the app
    /// says moves) from `window`: the classic target-motion analysis of a range-only (or
    /// bearing-poor) target, solved per hypothesis as a MAP estimate of its position now
    /// `x` and a constant velocity `v` over the window.
    ///
    /// With `τ_k = now − t_k` and `p_k = x − τ_k v` where the object was at update `k`,
    /// `f(x, v) = ½ uᵀ P₀⁻¹ u + ½ |v|²/σ_v² − Σ_k c_k log p(e_k(p_k))`, `u = x − τ₀ v − μ₀`
    /// (the tile prior on where it was when the acquisition began, `τ₀ = now − t₀`), is
    /// minimised from the hypothesis's last solution on the 6×6 normal equations
    /// (`MovingNormalEquations`, solved by 3×3 blocks), with the line search of
    /// ``refine(_:window:options:addedVariance:)`` but Newton steps: the reweighted Gauss–Newton
    /// matrix `A` less the ranges' curvature `K` (``MovingNormalEquations/newtonStep()``), `A`
    /// alone where `A − K` is not positive definite. Laplace
    /// approximation: `μᵢ = x*`, `Pᵢ = (A⁻¹)_xx + q I`, `vᵢ = v*` with `(A⁻¹)_vv` and `(A⁻¹)_xv`. Evidence:
    /// `log wᵢ = log w₀ᵢ − f* − ½ log det(2π P₀ᵢ) − ½ log det(2π σ_v² I) + ½ log det(2π A⁻¹)`
    /// (the map from `(p(t₀), v)` to `(x, v)` has unit Jacobian).
    ///
    /// No walker keeps one velocity for long, so the window's updates fade: one `τ` seconds
    /// old counts `exp(−τ/T)` times (`c_k ← c_k e^{−τ_k/T}`, ``FusionOptions/Motion/movingBatchMemory``),
    /// the information-filter form of a velocity that wanders.
    ///
    /// Between updates each hypothesis keeps its cost as a quadratic model
    /// (``MovingLinearisation``): a new update adds its own terms, and the minimum of the model,
    /// `δ = (A − K)⁻¹ b`, is taken while it holds (``movingStepIsWithinLinearisation(_:_:model:now:firstEntryTime:offset:k:tolerance:)``);
    /// otherwise the hypothesis is re-solved from its last solution as above and the model
    /// rebuilt there — the solve stopping, after at least one step, once the model linearised
    /// afresh at its point holds over its step to the minimum (`solveMoving`). The model
    /// anchored at `t_m` reports the state at `now` through `x(now) = x(t_m) + s v`,
    /// `s = now − t_m`: `P_xx = C_xx + s (C_xv + C_xvᵀ) + s² C_vv`, `P_xv = C_xv + s C_vv`,
    /// `P_vv = C_vv` (`C = A⁻¹`), and `f* = f̂ − ½ bᵀδ`.
    ///
    /// Whether the motion is observable is exactly what the Laplace covariance says: ranges
    /// alone determine a moving object only once the observer's own motion breaks the
    /// ambiguity between where it is and how it moves; until then `(A⁻¹)_xx` stays wide and
    /// the convergence analysis withholds the angle. (A fixed point with its covariance
    /// inflated by the walk, `(σ_v T / 2)²`, cannot say this: it claims the same spread
    /// whether or not the geometry has pinned the walker down.)
    /// - Parameters:
    ///   - mixture: the bank; each hypothesis is re-solved from its last solution, under its
    ///     own tile prior, and gets a velocity.
    ///   - window: the stored updates, each with its time.
    ///   - now: the time of the latest update, seconds (the position solved for is this one).
    ///   - start: when the acquisition began, seconds (the tile priors hold then).
    ///   - o: the noise, outlier, velocity-prior and memory settings.
    ///   - addedVariance: m², added to each position covariance (VIO drift over the window).
    ///   - informationScale: `κ` in (0, 1], what every residual counts: the window's sums enter
    ///     the cost as `κ Σ …` (errors that last; see the Derivations article, "Errors that
    ///     last"); the missing directions' evidence is left whole. The kept models hold their
    ///     sums without it.
    ///
    /// - Returns: how many times the whole window was linearised, as
    ///   ``refine(_:window:options:addedVariance:)`` counts them.
    @discardableResult
    public static func refineMoving(_ mixture: inout PositionMixture, window: MeasurementWindow, now: Double, start: Double,
                                    options o: FusionOptions, addedVariance: Double = 0, informationScale: Double = 1) -> Int {
        refineMoving(&mixture, window: window, now: now, start: start, options: o, addedVariance: addedVariance,
                     informationScale: informationScale, scratch: nil).passes
    }

    /// ``refineMoving(_:window:now:start:options:addedVariance:informationScale:)`` with the
    /// entries' faded weights in `scratch` (at least one double per entry; a shorter or `nil`
    /// one takes a temporary allocation). Returns the window linearisations and the entries
    /// they read.
    static func refineMoving(_ mixture: inout PositionMixture, window: MeasurementWindow, now: Double, start: Double,
                             options o: FusionOptions, addedVariance: Double, informationScale: Double,
                             scratch: UnsafeMutableBufferPointer<Double>?) -> WindowWork {
        var work = WindowWork()
        withUnsafeMutablePointer(to: &work.passes) { counter in
            withUnsafeMutablePointer(to: &work.entries) { entryCounter in
                var k = Constants(o)
                k.windowPasses = counter
                k.windowEntries = entryCounter
                let sigmaV = max(o.motion.velocityPriorStandardDeviation, 1e-3)
                // The entries' faded weights at `now`, shared by every hypothesis (in `scratch`, or a
                // temporary allocation).
                let count = max(window.entries.count, 1), needed = scratchCount(entries: count)
                func run(_ storage: UnsafeMutableBufferPointer<Double>) {
                    let faded = UnsafeMutableBufferPointer(rebasing: storage[0..<count])
                    let slots = UnsafeMutableBufferPointer(rebasing: storage[count..<needed])
                    for (j, e) in window.entries.enumerated() { faded[j] = e.multiplicity * exp(-(now - e.timestamp) * k.inverseMemory) }
                    let problem = MovingProblem(window: window, now: now, start: start, k: k, velocityInformation: 1 / (sigmaV * sigmaV),
                                                logVelocityPriorNormaliser: -0.5 * 3 * log(2 * .pi * sigmaV * sigmaV),
                                                addedVariance: max(addedVariance, 0), fadedWeights: UnsafeBufferPointer(faded), slots: slots,
                                                informationScale: informationScale.isFinite ? min(max(informationScale, 1e-3), 1) : 1)
                    refineMoving(&mixture, problem: problem)
                }
                if let scratch, scratch.count >= needed {
                    run(UnsafeMutableBufferPointer(rebasing: scratch[0..<needed]))
                } else {
                    withUnsafeTemporaryAllocation(of: Double.self, capacity: needed) { run($0) }
                }
            }
        }
        return work
    }

    /// ``refineMoving(_:window:now:start:options:addedVariance:)`` with its shared terms prepared.
    static func refineMoving(_ mixture: inout PositionMixture, problem: MovingProblem) {
        mixture.transformEach { h in
            guard let priorInformation = h.priorCovariance.inverse else { return }
            // The kept model, extended by the new entries, while it holds.
            if let total = extendMoving(&h.moving, problem: problem, priorInformation: priorInformation,
                                        priorMean: h.priorMeanInWorld, logWeight: h.logWeight) {
                let model = h.moving
                settleMoving(&h, model: model, total: total.equations, cost: total.cost, solution: total.solution,
                             moves: true, problem: problem)
                return
            }
            solveMoving(&h, priorInformation: priorInformation, problem: problem)
        }
        mixture.normalizeWeights()
    }

    /// What every hypothesis's moving batch shares at one refinement.
    struct MovingProblem {
        let window: MeasurementWindow
        /// The time solved for and the acquisition's start, seconds.
        let now, start: Double
        let k: Constants
        /// `1/σ_v²`, s²/m², and `−(3/2) log(2π σ_v²)`.
        let velocityInformation, logVelocityPriorNormaliser: Double
        /// m², added to each position covariance.
        let addedVariance: Double
        /// Each window entry's weight at `now`, `m_k exp(−(now − t_k)/T)`.
        let fadedWeights: UnsafeBufferPointer<Double>
        /// Storage for a window pass's residual slots (``MovingNormalEquations/summing(_:)``):
        /// ``MovingNormalEquations/slotsPerEntry`` slots per entry.
        let slots: UnsafeMutableBufferPointer<Double>
        /// `κ`: what every measurement term counts (`fadedWeights` and the kept models hold
        /// the terms without it).
        let informationScale: Double
    }

    /// Re-solves a hypothesis from its last solution (the Gauss–Newton of
    /// ``refineMoving(_:window:now:start:options:addedVariance:)``), rebuilds its model there,
    /// anchored at `now`, and settles it. Leaves it as it was (and drops its model) when the
    /// equations become singular.
    ///
    /// The solve stops as a kept model is judged: once, after at least one step, the window
    /// linearised afresh at its point `(x, v)` makes a model whose step to its minimum holds
    /// (``movingStepIsWithinLinearisation(_:_:model:now:firstEntryTime:offset:k:tolerance:)``,
    /// at the hypothesis's tolerance, ``movingTolerance(logWeight:k:)``), the hypothesis is
    /// settled at that minimum, `(x + δx, v + δv)`, and the model kept at `(x, v)` — what the
    /// next update's extension would have found had the model been built a step earlier.
    /// Iterating on to a decrease of 10⁻⁷ nats moves it by less than the model's own reach and
    /// costs a window linearisation per iteration along the slowly converging valley of a
    /// range-only walker. With a tolerance of 0 (the exact batch) it iterates to that decrease.
    static func solveMoving(_ h: inout PositionHypothesis, priorInformation: Matrix3, problem p: MovingProblem) {
        let mu0 = h.priorMeanInWorld
        func linearise(_ x: Vector3, _ v: Vector3) -> (total: MovingNormalEquations, cost: Double,
                                                        measurements: MovingNormalEquations, missing: Bool) {
            lineariseMoving(position: x, velocity: v, priorInformation: priorInformation, priorMean: mu0, problem: p)
        }
        func model(at x: Vector3, _ v: Vector3, _ terms: (measurements: MovingNormalEquations, missing: Bool)) -> MovingLinearisation {
            MovingLinearisation(position: x, velocity: v, anchorTime: p.now, startTime: p.start, measurements: terms.measurements,
                                hasMissingDirections: terms.missing, windowRevision: p.window.revision,
                                entryCount: p.window.entries.count, logWeight: h.logWeight)
        }
        // From the last solution (the tile's point, standing still, at first): a
        // hypothesis's basin moves with its object, and the 6-D problem re-solved from
        // its prior each time could land in another basin when thinning reshaped the
        // window (distance-only-walking-peer seed 1 at 24.6 s: 0.6 m → 6 m off).
        var x = h.meanInWorld, v = h.velocityInWorld
        var current = linearise(x, v)
        var f = current.cost
        let tolerance = movingTolerance(logWeight: h.logWeight, k: p.k)
        let antenna = p.window.entries.last?.antennaInWorld ?? mu0
        for iteration in 0..<20 {
            guard let solution = current.total.solve() else { h.moving = MovingLinearisation(); return }
            let newton = current.total.newtonStep()
            if iteration > 0, tolerance > 0, let first = p.window.entries.first {
                // The model linearised here holds over its step: settled at its minimum.
                var held = solution
                if let newton { (held.dx, held.dv) = newton }
                let kept = model(at: x, v, (current.measurements, current.missing))
                if held.dx.isFinite, held.dv.isFinite, solution.positionCovariance.isFinite, solution.positionCovariance.determinant > 0,
                   movingStepIsWithinLinearisation(held.dx, held.dv, model: kept, now: p.now, firstEntryTime: first.timestamp,
                                                   offset: x + held.dx - antenna, k: p.k, tolerance: tolerance) {
                    h.moving = kept
                    settleMoving(&h, model: kept, total: current.total, cost: f, solution: held, moves: true, problem: p)
                    return
                }
            }
            var (dx, dv) = cappedMovingStep(newton?.dx ?? solution.dx, newton?.dv ?? solution.dv)
            var accepted = false
            for _ in 0..<10 {
                let cx = x + dx, cv = v + dv
                let next = linearise(cx, cv)
                if next.cost <= f + 1e-9 {
                    x = cx
                    v = cv
                    current = next
                    let decrease = f - next.cost
                    f = next.cost
                    accepted = decrease > 1e-7 && (dx.length > 1e-5 || dv.length > 1e-5)
                    break
                }
                dx = 0.5 * dx
                dv = 0.5 * dv
            }
            if !accepted { break }
        }
        guard x.isFinite, v.isFinite, let solution = current.total.solve(), solution.positionCovariance.isFinite,
              solution.positionCovariance.determinant > 0 else { h.moving = MovingLinearisation(); return }
        h.moving = model(at: x, v, (current.measurements, current.missing))
        let kept = h.moving
        settleMoving(&h, model: kept, total: current.total, cost: f, solution: solution, moves: false, problem: p)
    }

    /// Sets a hypothesis from a model's minimum `(x̂ + δx, v̂ + δv)` at its anchor `t_m` (the
    /// model's point itself when `moves` is false), carried to `now`:
    /// `x = x̂ + δx + s (v̂ + δv)`, `P_xx = C_xx + s (C_xv + C_xvᵀ) + s² C_vv + q I`,
    /// `P_xv = C_xv + s C_vv`, `P_vv = C_vv` (`s = now − t_m`, `C = A⁻¹`, `q` the added
    /// variance), and its log weight
    /// `log w₀ − f* − ½ log det(2π P₀) − ½ log det(2π σ_v² I) + ½ log det(2π A⁻¹) + Σ c log ρ`,
    /// `f* = f̂ − ½ bᵀδ` at the model's minimum (`δ = H⁻¹ b`, `H` the Newton Hessian `A − K` or,
    /// when that is not positive definite, `A`), the missing directions' `ρ` evaluated at the
    /// solution. Leaves the hypothesis as it was when the covariance is not positive definite.
    static func settleMoving(_ h: inout PositionHypothesis, model: MovingLinearisation, total n: MovingNormalEquations, cost: Double,
                             solution: (dx: Vector3, dv: Vector3, positionCovariance: Matrix3, crossCovariance: Matrix3,
                                        velocityCovariance: Matrix3, logDeterminant: Double),
                             moves: Bool, problem p: MovingProblem) {
        let dx = moves ? solution.dx : .zero, dv = moves ? solution.dv : .zero
        let s = p.now - model.anchorTime
        let v = model.velocity + dv
        let x = model.position + dx + s * v
        let pxv = solution.crossCovariance + s * solution.velocityCovariance
        let pxx = solution.positionCovariance + s * (solution.crossCovariance + solution.crossCovariance.transposed)
            + (s * s) * solution.velocityCovariance
        guard x.isFinite, v.isFinite, pxx.isFinite, pxx.determinant > 0 else { return }
        // f* = f̂ − bᵀδ + ½ δᵀHδ = f̂ − ½ bᵀδ at the model's minimum δ = H⁻¹b.
        let f = moves ? cost - 0.5 * (n.bx.dot(dx) + n.bv.dot(dv)) : cost
        let now = p.now
        let logMissing = model.hasMissingDirections
            ? logMissingDirections(p.window, k: p.k) { x - max(now - $0.timestamp, 0) * v } : 0
        let logPriorNormaliser = -0.5 * (log(max(h.priorCovariance.determinant, 1e-300)) + 3 * log(2 * .pi))
            + p.logVelocityPriorNormaliser
        let logVolume = 0.5 * (-solution.logDeterminant + 6 * log(2 * .pi))
        h.meanInWorld = x
        h.velocityInWorld = v
        h.velocityCovariance = solution.velocityCovariance
        h.positionVelocityCovariance = pxv
        h.covariance = (pxx + Matrix3.scaledIdentity(p.addedVariance)).symmetrized
        h.logWeight = h.priorLogWeight - f + logPriorNormaliser + logVolume + logMissing
    }

    /// Brings a hypothesis's kept moving model up to date with the window (the new entries'
    /// terms added at its point) and returns the normal equations and cost at `now` with
    /// their solution, once the solution's step holds
    /// (``movingStepIsWithinLinearisation(_:_:model:now:firstEntryTime:offset:k:tolerance:)``). `nil` when
    /// the hypothesis must be re-solved instead: no model yet, the window was reshaped or the
    /// acquisition restarted since, the hypothesis's weight fell by more than
    /// ``MovingLinearisation/weightFallBeforeResolving`` since the model was linearised, the
    /// equations are singular, or eight iterations did not
    /// bring the step within the model's reach. A new range that is an outlier at the model's
    /// point (`π < ½`: it may move the minimum into another basin) makes at least one
    /// iteration, the window linearised afresh at the model's minimum.
    ///
    /// The model's minimum is its Newton step (``MovingNormalEquations/newtonStep()``), the
    /// Gauss–Newton step where the Hessian is not positive definite.
    @inline(__always)
    static func extendMoving(_ model: inout MovingLinearisation, problem p: MovingProblem, priorInformation: Matrix3,
                             priorMean: Vector3, logWeight: Double)
        -> (equations: MovingNormalEquations, cost: Double,
            solution: (dx: Vector3, dv: Vector3, positionCovariance: Matrix3, crossCovariance: Matrix3,
                       velocityCovariance: Matrix3, logDeterminant: Double))? {
        let window = p.window, now = p.now, start = p.start, k = p.k, velocityInformation = p.velocityInformation
        let antenna = window.entries.last?.antennaInWorld ?? priorMean
        let tolerance = movingTolerance(logWeight: logWeight, k: k)
        guard tolerance > 0, model.entryCount >= 0, model.windowRevision == window.revision, model.startTime == start,
              model.entryCount <= window.entries.count, let first = window.entries.first,
              logWeight >= model.logWeightAtLinearisation - MovingLinearisation.weightFallBeforeResolving else { return nil }
        var outlier = false
        if model.entryCount < window.entries.count {
            let added = addMoving(window.entries[model.entryCount...], position: model.position, velocity: model.velocity,
                                  anchor: model.anchorTime, k: k, to: &model.measurements)
            model.hasMissingDirections = model.hasMissingDirections || added.missing
            model.entryCount = window.entries.count
            // A range the model's point does not explain may pull the minimum out of the plateau
            // the robust density makes, further than a model that weighs it there can see: the
            // window is linearised afresh at least once.
            outlier = added.share < 0.5
        }
        // The model's minimum at `now`; while its step leaves the model's reach (or once after an
        // outlier), Newton iterations: the window linearised afresh at the minimum carried to `now` (anchored
        // there), kept if its cost is no higher than the model's at its point (otherwise the
        // step is halved; steps capped at 1 m and 1 m/s), at most eight.
        var iterations = 0
        while true {
            let prior = movingPrior(position: model.position, velocity: model.velocity, anchor: model.anchorTime, start: start,
                                    priorInformation: priorInformation, priorMean: priorMean, velocityInformation: velocityInformation)
            let d = exp(-max(now - model.anchorTime, 0) * k.inverseMemory) * p.informationScale
            let total = prior.equations.adding(model.measurements, scaledBy: d)
            let cost = prior.cost - d * model.measurements.logLikelihood
            guard var solution = total.solve(), solution.dx.isFinite, solution.dv.isFinite else { return nil }
            if let newton = total.newtonStep() { (solution.dx, solution.dv) = newton }
            let s = now - model.anchorTime
            let offset = model.position + solution.dx + s * (model.velocity + solution.dv) - antenna
            if movingStepIsWithinLinearisation(solution.dx, solution.dv, model: model, now: now, firstEntryTime: first.timestamp,
                                               offset: offset, k: k, tolerance: tolerance) && !(outlier && iterations == 0) {
                return (total, cost, solution)
            }
            guard iterations < 8 else { return nil }
            iterations += 1
            var (dx, dv) = cappedMovingStep(solution.dx, solution.dv)
            var accepted = false
            for _ in 0..<8 {
                let v = model.velocity + dv, x = model.position + dx + s * v
                let candidate = lineariseMoving(position: x, velocity: v, priorInformation: priorInformation, priorMean: priorMean,
                                                problem: p)
                if candidate.cost <= cost + 1e-9 {
                    model = MovingLinearisation(position: x, velocity: v, anchorTime: now, startTime: start,
                                                measurements: candidate.measurements, hasMissingDirections: candidate.missing,
                                                windowRevision: window.revision, entryCount: window.entries.count,
                                                logWeight: logWeight)
                    accepted = true
                    break
                }
                dx = 0.5 * dx
                dv = 0.5 * dv
            }
            guard accepted else { return nil }
        }
    }

    /// The fraction of the range's σ a moving hypothesis holding `w = exp(logWeight)` of the
    /// weight may move by its model's curvature before the window is linearised afresh:
    /// ``FusionOptions/Acquisition/relinearisationTolerance`` times
    /// ``FusionOptions/Acquisition/movingBatchToleranceScale``, scaled to the weight as the still
    /// batch's is (``weightedTolerance(_:weight:)``); 0 (the exact batch) when either is 0.
    @inline(__always)
    static func movingTolerance(logWeight: Double, k: Constants) -> Double {
        let base = k.options.acquisition.relinearisationTolerance * max(k.options.acquisition.movingBatchToleranceScale, 0)
        guard base > 0 else { return 0 }
        return weightedTolerance(base, weight: exp(logWeight))
    }

    /// A step of the moving batch (Newton's or Gauss–Newton's), scaled down (both parts alike)
    /// to at most 1 m of position and 1 m/s of velocity.
    @inline(__always)
    static func cappedMovingStep(_ dx: Vector3, _ dv: Vector3) -> (Vector3, Vector3) {
        let scale = min(1, 1 / max(dx.length, 1e-12), 1 / max(dv.length, 1e-12))
        return (scale * dx, scale * dv)
    }

    /// Whether a moving model linearised at `(x̂, v̂)` still holds after the step `(δx, δv)`:
    /// the step moves the object's position at time `t` by `δx + (t − t_m) δv`, and the
    /// range's second-order term over it, weighed by the fading memory,
    /// `exp(−(now − t)/T) ‖δp(t)‖² / (2 r)`, must stay within `tolerance` times the range's σ
    /// (``isWithinLinearisation(_:from:sigma:tolerance:)``) — checked now, at the window's
    /// first entry and one memory `T` ago (the displacement is affine in `t`; the fading
    /// weighs the past less).
    @inline(__always)
    static func movingStepIsWithinLinearisation(_ dx: Vector3, _ dv: Vector3, model: MovingLinearisation, now: Double,
                                               firstEntryTime: Double, offset: Vector3, k: Constants, tolerance: Double) -> Bool {
        let sigma = k.options.sensors.rangeStandardDeviation
        let reach = 2 * tolerance * sigma * max(offset.length, 0.1)
        func holds(at t: Double) -> Bool {
            let moved = dx + (t - model.anchorTime) * dv
            return exp(-max(now - t, 0) * k.inverseMemory) * moved.lengthSquared <= reach
        }
        let memory = 1 / max(k.inverseMemory, 1e-12)
        return holds(at: now) && holds(at: firstEntryTime) && (now - memory <= firstEntryTime || holds(at: now - memory))
    }
}






