/// The median of the first `n` lanes of `v` (the mean of the two middle ones when `n` is even:
/// of eight, the 4th and 5th smallest), by an insertion sort of a copy on the stack — for the
/// few values the engine's robust tests take a median of, with nothing allocated. 0 when
/// `n < 1`; `n` at most `v.scalarCount`.
@inline(__always)
func laneMedian<V: SIMD>(_ v: V, count n: Int) -> Double where V.Scalar == Double {
    guard n > 0 else { return 0 }
    let count = min(n, V.scalarCount)
    return withUnsafeTemporaryAllocation(of: Double.self, capacity: V.scalarCount) { buffer in
        // Copied out of the vector once: sorting its lanes in place wrote and re-read single
        // lanes of a vector held in memory, which stalled on every access.
        withUnsafeBytes(of: v) { lanes in
            for i in 0..<count { buffer[i] = lanes.load(fromByteOffset: i * MemoryLayout<Double>.stride, as: Double.self) }
        }
        return sortedMedian(buffer.baseAddress!, count: count)
    }
}

/// The median of the `n` values at `s`, which it sorts in place (insertion sort): the mean of
/// the two middle ones when `n` is even; 0 when `n < 1`.
@inline(__always)
func sortedMedian(_ s: UnsafeMutablePointer<Double>, count n: Int) -> Double {
    guard n > 0 else { return 0 }
    for i in 1..<n {
        let x = s[i]
        var j = i - 1
        while j >= 0 && s[j] > x { s[j + 1] = s[j]; j -= 1 }
        s[j + 1] = x
    }
    return n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])
}
