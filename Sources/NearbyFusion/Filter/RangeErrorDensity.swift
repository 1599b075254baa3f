import Foundation

/// The robust density of a range residual `e = z − ‖p − a‖` (metres) whose Gaussian part
/// has variance `v` (m²): the range likelihood of the batch acquisition
/// (`BatchRefinement`, which weighs its angle residuals by the same density without the
/// multipath term), and the noise model the evaluation's Cramér–Rao bound reads. (The
/// tracking IMM still weighs a range by its symmetric part, `(1 − ε) N + ε/span`, behind a
/// χ² gate; a tracked Channel Sounding object is re-acquired when its ranges drift, see
/// `ObjectTracker.movedAwayFromItsRanges`.)
///
/// `p(e) = (1 − ε − η) N(e; 0, v) + η q(e) + ε/span`, three explanations of a range:
/// - **line of sight** with the radio's jitter, `N(e; 0, v)`;
/// - **multipath excess** (probability `η`): a reflected path close behind the direct one
///   that the radio cannot separate makes the range *long* by `b ~ U(b₀, b₁)`; with the
///   jitter on top, `q(e) = ∫ N(e − b; 0, v) db / (b₁ − b₀)
///   = [Φ((e − b₀)/√v) − Φ((e − b₁)/√v)] / (b₁ − b₀)`, flat between `b₀` and `b₁` and
///   falling off within a few `√v` outside. It is one-sided: a range too short by a metre
///   is not multipath, so it cannot hide behind this term;
/// - **gross outlier** (probability `ε`): uniform over `span`, so that no single range can
///   wipe out a hypothesis.
///
/// The batch weighs ranges through a two-state Markov chain when multipath comes in bursts
/// (``FusionOptions/Gating/rangeMultipathBurstSeconds``); this density is then the chain's
/// marginal, split by state into `(1 − η) p_A + η p_B`.
///
/// With `η = 0` this is the symmetric model the UWB radio uses (`(1 − ε) N + ε/span`);
/// Channel Sounding sets `η` (``FusionOptions/ChannelSounding/multipathProbability``), and
/// the simulator describes its own Channel Sounding noise with the same type.
public struct RangeErrorDensity: Sendable, Hashable {
    /// `log(1 − ε − η)`.
    public let logInlierProbability: Double
    /// `η / (b₁ − b₀)`, m⁻¹ (0 without a multipath term).
    public let excessDensity: Double
    /// `b₀`, `b₁`, metres.
    public let excessMinimum: Double, excessMaximum: Double
    /// `ε / span`, m⁻¹.
    public let outlierDensity: Double

    @inlinable
    /// The density with gross-outlier probability `ε` over `outlierSpan` metres and multipath
    /// probability `η` with excess in `excessRange` metres.
    public init(outlierProbability eps: Double, outlierSpan: Double, excessProbability eta: Double,
                excessRange: ClosedRange<Double>) {
        logInlierProbability = log(1 - eps - eta)
        let width = excessRange.upperBound - excessRange.lowerBound
        excessDensity = eta > 0 && width > 0 ? eta / width : 0
        excessMinimum = excessRange.lowerBound
        excessMaximum = excessRange.upperBound
        outlierDensity = eps / outlierSpan
    }

    /// `(1 − ε − η) N(e; 0, v)`, the line-of-sight part of `p(e)`.
    @inlinable public func inlier(_ e: Double, variance v: Double) -> Double {
        exp(logInlierProbability - 0.5 * e * e / v) / (2 * .pi * v).squareRoot()
    }

    /// `p(e) − (1 − ε − η) N(e; 0, v) = η q(e) + ε/span`: what explains `e` if the range is
    /// not line of sight. `Φ(x) = ½ erfc(−x/√2)`.
    @inlinable public func notInlier(_ e: Double, variance v: Double) -> Double {
        excess(e, variance: v) + outlierDensity
    }

    /// `η q(e)`, the multipath part of `p(e)` (0 without a multipath term).
    @inlinable public func excess(_ e: Double, variance v: Double) -> Double {
        guard excessDensity > 0 else { return 0 }
        return excess(e, inverseScale: 1 / (2 * v).squareRoot())
    }

    /// `η q(e)` with `1/√(2v)` given (``AtVariance``).
    @inlinable func excess(_ e: Double, inverseScale: Double) -> Double {
        guard excessDensity > 0 else { return 0 }
        // Φ(x₀) − Φ(x₁), x₀ = (e − b₀)/√v > x₁ = (e − b₁)/√v, from the tails that do not
        // cancel: ½[erfc(−x₀/√2) − erfc(−x₁/√2)] left of the plateau, ½[erfc(x₁/√2) − erfc(x₀/√2)]
        // right of it (both terms tiny there; their difference as 1 − 1 would be 0 or noise).
        let u0 = (e - excessMinimum) * inverseScale, u1 = (e - excessMaximum) * inverseScale
        let q: Double
        if u1 > 0 { q = 0.5 * (erfc(u1) - erfc(u0)) }
        else if u0 < 0 { q = 0.5 * (erfc(-u0) - erfc(-u1)) }
        else { q = 1 - 0.5 * (erfc(u0) + erfc(-u1)) }
        return excessDensity * q
    }

    /// The density at one variance `v` (m²), with what each evaluation needs computed once
    /// (``AtVariance``): the batch evaluates it for every range of its window at the same `v`.
    @_spi(Internals) @inlinable public func at(variance v: Double) -> AtVariance { AtVariance(self, variance: v) }

    /// ``RangeErrorDensity`` at a fixed variance `v`, m²: `(1 − ε − η)/√(2πv)`, `1/v` and
    /// `1/√(2v)` computed once, so that an evaluation divides only by `p(e)`.
    @_spi(Internals) public struct AtVariance: Sendable, Hashable {
        /// The density.
        public let density: RangeErrorDensity
        /// `v`, m², and `1/v`.
        public let variance: Double, inverseVariance: Double
        /// `(1 − ε − η)/√(2πv)`, m⁻¹.
        @usableFromInline let inlierScale: Double
        /// `1/√(2v)`, m⁻¹.
        @usableFromInline let excessInverseScale: Double
        /// `e_far²`, m² (or rad²): beyond `±e_far` the line-of-sight term is below `2⁻⁵⁴` of the
        /// gross outliers' density, `(1 − ε − η) N(e; 0, v) < 2⁻⁵⁴ ε/span` for
        /// `e² > 2v [ln((1 − ε − η)/(√(2πv) ε/span)) + 54 ln 2]`. There `p(e)` is `ε/span` plus the
        /// multipath term to the last bit, and the robust weight `c π/v` is below `2⁻⁵⁴ c/v`:
        /// any residual beyond `e_far` stands for any other (∞ without gross outliers).
        public let farResidualSquared: Double
        /// For an angle density: `tan e_far` where `e_far < π/2` (∞ otherwise), so that an angle
        /// `atan2(y, x)` lies beyond `e_far` where `x < 0` or `|y| > x tan e_far`; and `2 e_far`, a
        /// value beyond it that stands for any such angle (``BatchRefinement``'s angle residuals,
        /// which then take no arc tangent).
        public let farAngleTangent: Double, farAngleStandIn: Double

        @inlinable init(_ density: RangeErrorDensity, variance v: Double) {
            self.density = density
            variance = v
            inverseVariance = 1 / v
            inlierScale = exp(density.logInlierProbability) / (2 * .pi * v).squareRoot()
            excessInverseScale = 1 / (2 * v).squareRoot()
            let margin = log(inlierScale / density.outlierDensity) + 54 * M_LN2
            let far = density.outlierDensity > 0 && margin.isFinite ? 2 * v * max(margin, 0) : .infinity
            farResidualSquared = far.isNaN ? .infinity : far
            let angle = farResidualSquared.squareRoot()
            farAngleTangent = angle < .pi / 2 ? tan(angle) : .infinity
            farAngleStandIn = 2 * angle
        }

        /// `(1 − ε − η) N(e; 0, v)`.
        @inlinable public func inlier(_ e: Double) -> Double { inlierScale * exp(-0.5 * e * e * inverseVariance) }

        /// `η q(e)`.
        @inlinable public func excess(_ e: Double) -> Double { density.excess(e, inverseScale: excessInverseScale) }

        /// For a residual `e` of an entry standing for `c` updates: `π = (1 − ε − η) N(e)/p(e)`,
        /// the robust weight `c π / v`, `p(e)` itself (whose `c log p(e)` the caller sums,
        /// ``LogSum``), its parts, and `share`, the part of `p(e)` that the line of sight or
        /// multipath explain, `(p(e) − ε/span)/p(e)`.
        @inlinable public func robustWeight(_ e: Double, multiplicity c: Double)
            -> (weight: Double, density: Double, inlier: Double, excess: Double, share: Double) {
            robustWeight(e, multiplicity: c, outlierDensity: density.outlierDensity)
        }

        /// ``robustWeight(_:multiplicity:)`` with the gross outliers' density `ε/span` replaced by
        /// `outlierDensity`, m⁻¹ (the moving batch's short side,
        /// ``FusionOptions/Gating/movingShortOutlierFraction``).
        @inlinable public func robustWeight(_ e: Double, multiplicity c: Double, outlierDensity: Double)
            -> (weight: Double, density: Double, inlier: Double, excess: Double, share: Double) {
            let inlier = inlier(e), excess = excess(e)
            let total = inlier + excess + outlierDensity
            let inverseTotal = 1 / total
            return (c * inlier * inverseTotal * inverseVariance, total, inlier, excess, (inlier + excess) * inverseTotal)
        }
    }

    /// `Σₖ cₖ log pₖ` over many densities `pₖ`, with one logarithm for a run of factors instead
    /// of one each: the `pₖ` of multiplicity 1 are multiplied together, and the product's
    /// logarithm is taken into the sum once it leaves `[10⁻¹⁵⁰, 10¹⁵⁰]` (a density of a range
    /// or an angle moves it by a few decades at most, so it never under- or overflows) and at
    /// the end; an entry standing for `c ≠ 1` updates adds `c log p` at once. A zero density
    /// gives `−∞` and a NaN NaN, as the sum of logarithms would. The result differs from that
    /// sum by rounding only (`n` products carry a relative error of about `n` units in the
    /// last place, `n · 10⁻¹⁶` nats).
    @_spi(Internals) public struct LogSum: Sendable {
        /// The logarithms taken so far, and the product not yet taken.
        @usableFromInline var sum = 0.0, product = 1.0

        /// Nothing summed.
        @inlinable public init() {}

        /// Adds `c log p`.
        @inlinable @inline(__always) public mutating func add(_ p: Double, multiplicity c: Double = 1) {
            if c == 1 {
                product *= p
                if !(product > 1e-150 && product < 1e150) {
                    sum += log(product)
                    product = 1
                }
            } else {
                sum += c * log(p)
            }
        }

        /// `Σₖ cₖ log pₖ`.
        @inlinable public var value: Double { sum + log(product) }
    }

    /// `η`, the probability of the multipath term.
    @inlinable public var excessProbability: Double { excessDensity * (excessMaximum - excessMinimum) }

    /// `p(e)`, m⁻¹.
    @inlinable public func density(_ e: Double, variance v: Double) -> Double {
        inlier(e, variance: v) + notInlier(e, variance: v)
    }

    /// The Fisher information one range carries about its own mean, m⁻²:
    /// `I = ∫ p′(e)² / p(e) de`, with
    /// `p′(e) = −(1 − ε − η) N(e; 0, v) e/v + η [N(e − b₀; 0, v) − N(e − b₁; 0, v)] / (b₁ − b₀)`
    /// (the uniform term is flat). `1/v` for a pure Gaussian; less when some ranges may be
    /// multipath, because those tell less about where the object is. By the trapezoidal rule
    /// over `[−10√v, b₁ + 10√v]`, 4,000 steps (a closed form does not exist); exactly `1/v`
    /// for a pure Gaussian.
    public func fisherInformation(variance v: Double) -> Double {
        if excessDensity == 0 && outlierDensity == 0 { return 1 / v }
        let sigma = v.squareRoot()
        let lower = -10 * sigma, upper = max(excessMaximum, 0) + 10 * sigma
        let steps = 4000
        let h = (upper - lower) / Double(steps)
        let normaliser = 1 / (2 * .pi * v).squareRoot()
        func gaussian(_ x: Double) -> Double { normaliser * exp(-0.5 * x * x / v) }
        var sum = 0.0
        for k in 0...steps {
            let e = lower + Double(k) * h
            let p = density(e, variance: v)
            guard p > 1e-300 else { continue }
            let dp = -inlier(e, variance: v) * e / v + excessDensity * (gaussian(e - excessMinimum) - gaussian(e - excessMaximum))
            sum += (k == 0 || k == steps ? 0.5 : 1) * dp * dp / p
        }
        return sum * h
    }
}
