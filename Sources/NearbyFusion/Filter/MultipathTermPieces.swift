import Foundation

/// The multipath term `η q(e)` of a ``RangeErrorDensity`` at one variance `v` (m²), as
/// piecewise Chebyshev series: what a Channel Sounding object's burst chain reads for every
/// range of its window at every pass (`BatchRefinement.lineariseWithBursts`), with a few dozen
/// multiply–adds where its two complementary error functions took two exponentials each.
///
/// `q` is smooth on the scale `σ = √v` (the uniform excess `U(b₀, b₁)` blurred by the jitter),
/// and negligible more than `10σ` outside `[b₀, b₁]`: there `η q(e) < 10⁻²³ η/(b₁ − b₀)`, far
/// below the last bit of the gross outliers' `ε/span` it is always added to (``isUsable(for:variance:)``
/// asks for `ε > 0`). So `[b₀ − 10σ, b₁ + 10σ]` is cut into pieces of width `w = σ/4`, and on
/// piece `i`, with `t = 2((e − e₀)/w − i) − 1 ∈ [−1, 1]` (`e₀ = b₀ − 10σ`),
///
/// `η q(e) ≈ Σⱼ cᵢⱼ Tⱼ(t)`, `j = 0 … 10`, `Tⱼ` the Chebyshev polynomials,
///
/// the series that interpolates `η q` at the piece's 11 Chebyshev nodes
/// `tₖ = cos(π(k + ½)/11)`: `cᵢⱼ = (2/11) Σₖ η q(e(tₖ)) Tⱼ(tₖ)` (`cᵢ₀` halved). It is summed by
/// Clenshaw's recurrence, `βⱼ = 2t βⱼ₊₁ − βⱼ₊₂ + cᵢⱼ`, `η q ≈ t β₁ − β₂ + cᵢ₀`. Relative
/// error about `10⁻¹⁴` wherever `η q` exceeds `10⁻⁷` of its plateau (its whole shape for any
/// σ: the pieces scale with it), and 0 beyond the pieces. Outside the pieces' reach (no `ε`,
/// no multipath term, or a σ so small that more than ``maximumPieceCount`` pieces would be
/// needed) the density's own `erfc` form stands (``RangeErrorDensity/excess(_:variance:)``).
///
/// The storage is made once (``init(capacity:)``, at the object's registration) and the series
/// are fitted again in it when the density or the variance changes (``prepare(_:variance:)``,
/// a noise level learned): nothing is allocated per update.
@_spi(Internals) public struct MultipathTermPieces: Sendable {
    /// Chebyshev terms per piece (degree 10).
    public static let termCount = 11
    /// The most pieces kept (a σ down to about 1.5 cm for the Channel Sounding defaults).
    public static let maximumPieceCount = 400
    /// Pieces per σ, and how many σ past each end of the plateau they reach.
    static let piecesPerSigma = 4.0, reachInSigmas = 10.0
    /// `Tⱼ(tₖ) = cos(jπ(k + ½)/n)` at `j · n + k` (`n` = ``termCount``): row 1 holds the nodes
    /// `tₖ` themselves. Computed once: a fit reads them for every piece.
    static let cosines: [Double] = (0..<(termCount * termCount)).map { index in
        let j = index / termCount, k = index % termCount
        return cos(Double(j) * .pi * (Double(k) + 0.5) / Double(termCount))
    }

    /// The density and variance the series hold (`nil`: none yet, or not usable).
    public private(set) var density: RangeErrorDensity?
    /// (See ``density``.) m².
    public private(set) var variance = 0.0
    /// `e₀`, metres, `1/w`, 1/m, and how many pieces.
    private(set) var lowerEdge = 0.0, inverseWidth = 0.0, count = 0
    /// `cᵢⱼ` at `i · termCount + j`, m⁻¹.
    private var coefficients: ContiguousArray<Double>

    /// Storage for `capacity` pieces (0: none; such pieces are never usable).
    public init(capacity: Int = maximumPieceCount) {
        coefficients = ContiguousArray(repeating: 0, count: max(min(capacity, Self.maximumPieceCount), 0) * Self.termCount)
    }

    /// Fits the series to `density` at variance `v` (m²) unless they already hold them; after
    /// it, ``isUsable(for:variance:)`` says whether they stand for `η q` at that variance.
    public mutating func prepare(_ density: RangeErrorDensity, variance v: Double) {
        guard self.density != density || variance != v else { return }
        self.density = nil
        variance = v
        let sigma = v.squareRoot()
        let width = sigma / Self.piecesPerSigma
        guard density.excessDensity > 0, density.outlierDensity > 0, sigma.isFinite, sigma > 0 else { return }
        let lower = density.excessMinimum - Self.reachInSigmas * sigma
        let span = density.excessMaximum + Self.reachInSigmas * sigma - lower
        let needed = (span / width).rounded(.up)
        guard needed.isFinite, needed * Double(Self.termCount) <= Double(coefficients.count) else { return }
        let n = Self.termCount
        // The nodes' values on the stack: fitting allocates nothing.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { values in
            coefficients.withUnsafeMutableBufferPointer { c in
                for i in 0..<Int(needed) {
                    let start = lower + Double(i) * width
                    for k in 0..<n { values[k] = density.excess(start + 0.5 * (Self.cosines[n + k] + 1) * width, variance: v) }
                    for j in 0..<n {
                        var sum = 0.0
                        for k in 0..<n { sum += values[k] * Self.cosines[j * n + k] }
                        c[i * n + j] = (j == 0 ? 1.0 : 2.0) / Double(n) * sum
                    }
                }
            }
        }
        lowerEdge = lower
        inverseWidth = 1 / width
        count = Int(needed)
        self.density = density
    }

    /// Whether the series stand for `density`'s `η q` at variance `v` (fitted by
    /// ``prepare(_:variance:)``).
    @inlinable public func isUsable(for density: RangeErrorDensity, variance v: Double) -> Bool {
        self.density == density && variance == v
    }

    /// Calls `body` with the series read in place, or `nil` when they are not usable for
    /// `density` at `v`.
    public func withView<R>(for density: RangeErrorDensity, variance v: Double, _ body: (View?) -> R) -> R {
        guard isUsable(for: density, variance: v) else { return body(nil) }
        return coefficients.withUnsafeBufferPointer { c in
            body(View(lowerEdge: lowerEdge, inverseWidth: inverseWidth, count: count, coefficients: c.baseAddress!))
        }
    }

    /// The series read in place (valid inside ``withView(for:variance:_:)`` only).
    public struct View {
        let lowerEdge: Double, inverseWidth: Double, count: Int
        let coefficients: UnsafePointer<Double>

        /// `η q(e)`, m⁻¹, for a residual `e`, metres: Clenshaw's sum on its piece, 0 beyond the
        /// pieces (and for a NaN).
        @inline(__always)
        public func value(_ e: Double) -> Double {
            let x = (e - lowerEdge) * inverseWidth
            guard x >= 0, x < Double(count) else { return 0 }
            let i = Int(x)
            let t = 2 * (x - Double(i)) - 1, twoT = 2 * t
            let c = coefficients + i &* MultipathTermPieces.termCount
            // βⱼ = 2t βⱼ₊₁ − βⱼ₊₂ + cⱼ from j = 10 down to 1, written out.
            var b1 = c[10], b2 = 0.0, b0: Double
            b0 = twoT * b1 - b2 + c[9]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[8]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[7]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[6]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[5]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[4]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[3]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[2]; b2 = b1; b1 = b0
            b0 = twoT * b1 - b2 + c[1]; b2 = b1; b1 = b0
            return t * b1 - b2 + c[0]
        }
    }
}
