import Foundation

/// The line-of-sight and multipath terms of a ``RangeErrorDensity`` at one variance `v` (m²),
/// `(1 − ε − η) N(e; 0, v)` and `η q(e)`, as piecewise Chebyshev series: what a Channel
/// Sounding object's burst chain reads for every range of its window at every pass
/// (`BatchRefinement.lineariseWithBursts`), with a few dozen multiply–adds each where the
/// Gaussian took an exponential and the multipath term two complementary error functions
/// (two exponentials each) — and with no call to a mathematical library inside the pass.
///
/// Both terms are smooth on the scale `σ = √v` (`q` is the uniform excess `U(b₀, b₁)` blurred
/// by the jitter) and negligible more than `10σ` from where they live: beyond `±10σ` the
/// Gaussian term is below `e⁻⁵⁰ ≈ 2·10⁻²²` of its peak, and beyond `[b₀ − 10σ, b₁ + 10σ]` the
/// multipath term below `10⁻²³ η/(b₁ − b₀)` — far below the last bit of the gross outliers'
/// `ε/span` that every density, emission and weight adds them to (``isUsable(for:variance:)``
/// asks for `ε > 0`). Each span is cut into pieces of width `w = σ/4`, and on piece `i`, with
/// `t = 2((e − e₀)/w − i) − 1 ∈ [−1, 1]` (`e₀` the span's lower end, `−10σ` or `b₀ − 10σ`),
///
/// `f(e) ≈ Σⱼ cᵢⱼ Tⱼ(t)`, `j = 0 … 10`, `Tⱼ` the Chebyshev polynomials,
///
/// the series that interpolates the term `f` at the piece's 11 Chebyshev nodes
/// `tₖ = cos(π(k + ½)/11)`: `cᵢⱼ = (2/11) Σₖ f(e(tₖ)) Tⱼ(tₖ)` (`cᵢ₀` halved). It is summed by
/// Clenshaw's recurrence, `βⱼ = 2t βⱼ₊₁ − βⱼ₊₂ + cᵢⱼ`, `f ≈ t β₁ − β₂ + cᵢ₀`. Relative error
/// about `10⁻¹⁴` wherever a term exceeds `10⁻⁷` of its peak (its whole shape for any σ: the
/// pieces scale with it), and 0 beyond the pieces. Outside the pieces' reach (no `ε`, no
/// multipath term, or a σ so small that more than ``maximumPieceCount`` pieces would be
/// needed) the density's own forms stand (``RangeErrorDensity/inlier(_:variance:)``,
/// ``RangeErrorDensity/excess(_:variance:)``).
///
/// The storage is made once (``init(capacity:)``, at the object's registration) and the series
/// are fitted again in it when the density or the variance changes (``prepare(_:variance:)``,
/// a noise level learned): nothing is allocated per update.
@_spi(Internals) public struct RangeDensityPieces: Sendable {
    /// Chebyshev terms per piece (degree 10).
    public static let termCount = 11
    /// The most pieces the multipath term may take (a σ down to about 1.6 cm for the Channel
    /// Sounding defaults); the Gaussian term always takes ``inlierPieceCount``.
    public static let maximumPieceCount = 400
    /// Pieces per σ, and how many σ past each end they reach.
    static let piecesPerSigma = 4.0, reachInSigmas = 10.0
    /// The Gaussian term's pieces: `±10σ` at four per σ.
    public static let inlierPieceCount = 80
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
    /// `1/w`, 1/m; each term's `e₀`, metres, and how many pieces (the Gaussian's are first).
    private(set) var inverseWidth = 0.0
    private(set) var inlierLowerEdge = 0.0, excessLowerEdge = 0.0, excessCount = 0
    /// `cᵢⱼ` at `i · termCount + j`, m⁻¹: the Gaussian term's pieces, then the multipath term's.
    private var coefficients: ContiguousArray<Double>

    /// Storage for the Gaussian term and `capacity` pieces of the multipath term (0: none;
    /// such pieces are never usable).
    public init(capacity: Int = maximumPieceCount) {
        let pieces = capacity > 0 ? Self.inlierPieceCount + min(capacity, Self.maximumPieceCount) : 0
        coefficients = ContiguousArray(repeating: 0, count: pieces * Self.termCount)
    }

    /// Fits the series to `density` at variance `v` (m²) unless they already hold them; after
    /// it, ``isUsable(for:variance:)`` says whether they stand for its terms at that variance.
    public mutating func prepare(_ density: RangeErrorDensity, variance v: Double) {
        guard self.density != density || variance != v else { return }
        self.density = nil
        variance = v
        let sigma = v.squareRoot()
        let width = sigma / Self.piecesPerSigma
        guard density.excessDensity > 0, density.outlierDensity > 0, sigma.isFinite, sigma > 0 else { return }
        let excessLower = density.excessMinimum - Self.reachInSigmas * sigma
        let span = density.excessMaximum + Self.reachInSigmas * sigma - excessLower
        let needed = (span / width).rounded(.up)
        guard needed.isFinite, (needed + Double(Self.inlierPieceCount)) * Double(Self.termCount) <= Double(coefficients.count) else {
            return
        }
        let inlierLower = -Self.reachInSigmas * sigma
        fit(from: 0, pieces: Self.inlierPieceCount, lowerEdge: inlierLower, width: width) { density.inlier($0, variance: v) }
        fit(from: Self.inlierPieceCount, pieces: Int(needed), lowerEdge: excessLower, width: width) { density.excess($0, variance: v) }
        inverseWidth = 1 / width
        inlierLowerEdge = inlierLower
        excessLowerEdge = excessLower
        excessCount = Int(needed)
        self.density = density
    }

    /// The series of `f` on `pieces` pieces of `width` metres from `lowerEdge`, stored from piece
    /// `first` on (see the type's comment).
    private mutating func fit(from first: Int, pieces: Int, lowerEdge: Double, width: Double, _ f: (Double) -> Double) {
        let n = Self.termCount
        // The nodes' values on the stack: fitting allocates nothing.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { values in
            coefficients.withUnsafeMutableBufferPointer { c in
                for i in 0..<pieces {
                    let start = lowerEdge + Double(i) * width
                    for k in 0..<n { values[k] = f(start + 0.5 * (Self.cosines[n + k] + 1) * width) }
                    for j in 0..<n {
                        var sum = 0.0
                        for k in 0..<n { sum += values[k] * Self.cosines[j * n + k] }
                        c[(first + i) * n + j] = (j == 0 ? 1.0 : 2.0) / Double(n) * sum
                    }
                }
            }
        }
    }

    /// Whether the series stand for `density`'s terms at variance `v` (fitted by
    /// ``prepare(_:variance:)``).
    @inlinable public func isUsable(for density: RangeErrorDensity, variance v: Double) -> Bool {
        self.density == density && variance == v
    }

    /// Calls `body` with the series read in place, or `nil` when they are not usable for
    /// `density` at `v`.
    public func withView<R>(for density: RangeErrorDensity, variance v: Double, _ body: (View?) -> R) -> R {
        guard isUsable(for: density, variance: v) else { return body(nil) }
        return coefficients.withUnsafeBufferPointer { c in
            body(View(inverseWidth: inverseWidth, inlierLowerEdge: inlierLowerEdge, excessLowerEdge: excessLowerEdge,
                      excessCount: excessCount, coefficients: c.baseAddress!))
        }
    }

    /// The series read in place (valid inside ``withView(for:variance:_:)`` only).
    public struct View {
        let inverseWidth: Double, inlierLowerEdge: Double, excessLowerEdge: Double, excessCount: Int
        let coefficients: UnsafePointer<Double>

        /// `(1 − ε − η) N(e; 0, v)`, m⁻¹, for a residual `e`, metres: 0 beyond `±10σ` (and for a NaN).
        @inline(__always)
        public func inlier(_ e: Double) -> Double {
            Self.sum(coefficients, at: (e - inlierLowerEdge) * inverseWidth, count: RangeDensityPieces.inlierPieceCount)
        }

        /// `η q(e)`, m⁻¹, for a residual `e`, metres: 0 beyond the pieces (and for a NaN).
        @inline(__always)
        public func excess(_ e: Double) -> Double {
            Self.sum(coefficients + RangeDensityPieces.inlierPieceCount &* RangeDensityPieces.termCount,
                     at: (e - excessLowerEdge) * inverseWidth, count: excessCount)
        }

        /// Clenshaw's sum of the piece that `x` (in piece widths from the first's lower end) falls
        /// in, among `count` from `c`; 0 outside them.
        @inline(__always)
        static func sum(_ coefficients: UnsafePointer<Double>, at x: Double, count: Int) -> Double {
            guard x >= 0, x < Double(count) else { return 0 }
            let i = Int(x)
            let t = 2 * (x - Double(i)) - 1, twoT = 2 * t
            let c = coefficients + i &* RangeDensityPieces.termCount
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
