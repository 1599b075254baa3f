import Foundation

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fast, seedable generator whose output
/// is identical on every platform, so a seed reproduces a recording bit for bit.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits (Steele, Lea and Flood's SplitMix64).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One independent random stream per noise source: the stream's generator is seeded
/// from the scenario seed and the source's name (FNV-1a), so adding a source never
/// shifts the numbers another source draws.
public struct NoiseStream: Sendable {
    private var generator: SplitMix64
    private var spareGaussian: Double?

    /// The stream of the noise source `source` in the scenario seeded `seed`.
    public init(seed: UInt64, source: String) {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in source.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var mixer = SplitMix64(seed: seed ^ h)
        generator = SplitMix64(seed: mixer.next())
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    public mutating func uniform() -> Double { Double(generator.next() >> 11) * 0x1.0p-53 }

    /// Uniform in `[a, b)`.
    public mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * uniform() }

    /// `true` with probability `p`.
    public mutating func bernoulli(_ p: Double) -> Bool { uniform() < p }

    /// A standard normal sample (Box–Muller; the second value of each pair is kept).
    public mutating func gaussian() -> Double {
        if let g = spareGaussian { spareGaussian = nil; return g }
        var u1 = uniform()
        while u1 <= 0 { u1 = uniform() }
        let u2 = uniform()
        let r = (-2 * log(u1)).squareRoot()
        spareGaussian = r * sin(2 * .pi * u2)
        return r * cos(2 * .pi * u2)
    }

    /// `N(0, σ²)`.
    public mutating func gaussian(standardDeviation s: Double) -> Double { s * gaussian() }
}
