import Foundation

/// The tests that decide, from an object's ranges alone, that its estimate no longer holds:
/// the run of rejected ranges (`ObjectTracker.rejectionCallsForARestart`, which states the
/// rules and why), the trend of a Channel Sounding object's normalised range innovations
/// (`movedAwayFromItsRanges`, `rangesRunShort`) and a still object's ranges running away
/// smoothly (`rangesRunAway`). One per object; fixed-size rings of eight and bit masks, so
/// that an update allocates nothing. The tracker passes in what it knows of the estimate (its
/// phase, convergence, motion) and acts on the answers.
@_spi(Internals) public struct RestartTests: Sendable {
    public init() {}

    // MARK: The run of rejected ranges

    /// Rejected ranges in a row.
    public var consecutiveRejections = 0
    /// Of those, the ones a blocked line of sight or a multipath burst does not explain.
    public var unexplainedRejections = 0
    /// Whether each of the last eight steps between rejected ranges jumped by more than
    /// ``FusionOptions/Gating/blockedRangeJump`` (bit 0 the latest).
    public var rejectedRangeJumps: UInt8 = 0
    /// The run's last rejected ranges, metres (a ring of eight; the newest at
    /// `(rejectedRangeCount − 1) mod 8`), and how many.
    public var rejectedRanges = SIMD8<Double>()
    /// (See ``rejectedRanges``.)
    public var rejectedRangeCount = 0
    /// Of the run's rejected ranges, those shorter than the estimate's distance.
    public var shortRejections = 0

    // MARK: A Channel Sounding object's range trend

    /// The last eight signed normalised range innovations `ν/√s` (a ring), and how many.
    public var rangeTrend = SIMD8<Double>()
    /// (See ``rangeTrend``.)
    public var rangeTrendCount = 0
    /// Which of them ran short (below −``FusionOptions/ChannelSounding/approachThreshold``), bit 0 the newest.
    public var shortRangeBits: UInt8 = 0

    // MARK: A still object's ranges running away

    /// The last eight range excesses over the still model's prediction, `z − ‖p_s − a‖`,
    /// metres (a ring), and how many.
    public var rangeExcess = SIMD8<Double>()
    /// (See ``rangeExcess``.)
    public var rangeExcessCount = 0
    /// The times of ``rangeExcess``, seconds (the same ring).
    public var rangeExcessTimes = SIMD8<Double>()
    /// How many more ranges the last recognised run-away (``rangesRunAway(_:at:options:)``)
    /// stands for: eight from the range that recognised it, one fewer with each range after.
    public var runAwayRangesLeft = 0
    /// Which of the steps between them exceeded ``FusionOptions/Gating/runAwayStep``, bit 0 the newest.
    public var roughRangeSteps: UInt8 = 0

    /// Forgets the run of rejected ranges (an accepted range, or a bank that starts again).
    @inline(__always)
    public mutating func clearRejections() {
        consecutiveRejections = 0
        unexplainedRejections = 0
        rejectedRangeJumps = 0
        rejectedRangeCount = 0
        shortRejections = 0
    }

    /// Forgets the trends (a new estimate).
    @inline(__always)
    public mutating func clearTrends() {
        rangeTrendCount = 0
        rangeExcessCount = 0
        roughRangeSteps = 0
        runAwayRangesLeft = 0
    }

    /// Counts a rejected range of `rangeMetres`, `excess` metres beyond the estimate's
    /// distance, and says whether the estimate should start again.
    ///
    /// - While a UWB object with directions is acquired (`acquiringWithDirections`):
    ///   `rejectionsBeforeReset` ranges too short, or `rejectionsBeforeResetWhenConverged` in
    ///   all.
    /// - A `converged` still UWB object: `rejectionsBeforeResetWhenConverged` (or
    ///   `rejectionsBeforeReset` before it first converged) of the rejections nothing explains,
    ///   or `rejectionsBeforeResetWhenBlocked` in a row. Explained: a range of an object
    ///   `heldStill` (no direction) too long by more than `blockedRangeExcess` while at least
    ///   four of the last eight steps between rejected ranges jumped by more than
    ///   `blockedRangeJump` (a blocked line of sight); or, `withDirections`, a long range while
    ///   the still model is the likelier and one of the last seven steps between excesses was
    ///   rough (a multipath burst).
    /// - Any other object: the limit for its convergence, in a row.
    public mutating func rejectionCallsForARestart(rangeMetres: Double, excess: Double, acquiringWithDirections: Bool, converged: Bool,
                                            heldStill: Bool, hasConverged: Bool, withDirections: Bool, stillIsLikelier: Bool,
                                            options o: FusionOptions) -> Bool {
        consecutiveRejections += 1
        // The step from the run's previous rejected range (the ring's newest), if any.
        let jumped = rejectedRangeCount > 0 && abs(rangeMetres - rejectedRanges[(rejectedRangeCount - 1) & 7]) > o.gating.blockedRangeJump
        rejectedRangeJumps = rejectedRangeJumps << 1 | (jumped ? 1 : 0)
        rejectedRanges[rejectedRangeCount & 7] = rangeMetres
        rejectedRangeCount += 1
        if excess < 0 { shortRejections += 1 }
        if acquiringWithDirections {
            return shortRejections >= o.gating.rejectionsBeforeReset || consecutiveRejections >= o.gating.rejectionsBeforeResetWhenConverged
        }
        let blocked = heldStill && rejectedRangeJumps.nonzeroBitCount >= 4 && excess > o.gating.blockedRangeExcess
        let scattered = converged && withDirections && excess > 0 && stillIsLikelier && roughRangeSteps & 0x7F != 0
        if !(blocked || scattered) { unexplainedRejections += 1 }
        let limit = hasConverged ? o.gating.rejectionsBeforeResetWhenConverged : o.gating.rejectionsBeforeReset
        return converged
            ? unexplainedRejections >= limit || consecutiveRejections >= o.gating.rejectionsBeforeResetWhenBlocked
            : consecutiveRejections >= limit
    }

    /// The median of the run's last (up to five) rejected ranges, metres; 0 with none.
    public var medianRejectedRange: Double {
        let n = min(rejectedRangeCount, 5)
        guard n > 0 else { return 0 }
        var v = SIMD8<Double>()
        for k in 0..<n { v[k] = rejectedRanges[(rejectedRangeCount - 1 - k) & 7] }
        return Self.median(v, count: n)
    }

    /// Takes a normalised range innovation `ν/√s` and says whether the median of the last
    /// eight lies beyond ±1.5: ranges that drifted away from the estimate.
    public mutating func rangesTrendAway(adding nu: Double, options o: FusionOptions) -> Bool {
        rangeTrend[rangeTrendCount % 8] = nu
        rangeTrendCount += 1
        shortRangeBits = shortRangeBits << 1 | (nu < -o.channelSounding.approachThreshold ? 1 : 0)
        guard rangeTrendCount >= 8 else { return false }
        // A median beyond ±1.5 needs at least four of the eight beyond it on that side (the
        // 5th–8th smallest are ≥ the 5th): counted with two vector compares, so the sort runs
        // only when it could decide.
        let high = SIMD8<Double>(repeating: 1.5), low = SIMD8<Double>(repeating: -1.5)
        let above = (rangeTrend .> high), below = (rangeTrend .< low)
        var countAbove = 0, countBelow = 0
        for k in 0..<8 { if above[k] { countAbove += 1 }; if below[k] { countBelow += 1 } }
        guard countAbove >= 4 || countBelow >= 4 else { return false }
        return abs(Self.median(rangeTrend)) > 1.5
    }

    /// Whether at least ``FusionOptions/ChannelSounding/approachRangeCount`` of the last
    /// ``FusionOptions/ChannelSounding/approachRangeWindow`` (≤ 8) innovations ran short.
    @inline(__always)
    public func rangesRunShort(_ o: FusionOptions) -> Bool {
        let window = min(o.channelSounding.approachRangeWindow, 8)
        guard window > 0, rangeTrendCount >= window else { return false }
        return (shortRangeBits & UInt8(truncatingIfNeeded: (1 << window) - 1)).nonzeroBitCount >= o.channelSounding.approachRangeCount
    }

    /// Takes a range's excess over the still model's prediction and says whether the last
    /// eight run away smoothly: every `|eₖ − eₖ₋₁| ≤ step`, `e₈ − e₁ ≥ rise`, `e₄ − e₁ ≥ rise/4`
    /// and `e₈ − e₅ ≥ rise/4` (``FusionOptions/Gating/runAwayStep``, ``FusionOptions/Gating/runAwayRise``).
    /// `seconds` is the range's time, kept for ``runAwayLine()``.
    public mutating func rangesRunAway(_ excess: Double, at seconds: Double = 0, options o: FusionOptions) -> Bool {
        guard o.gating.runAwayStep > 0, excess.isFinite else { return false }
        // A ring of eight: after this one is stored at `n`, eₖ (k = 1…8, e₈ this one) sits at
        // `(n + k) mod 8`; bit j of `roughRangeSteps` says whether the step into the
        // (j + 1)-th newest exceeded the limit.
        let n = rangeExcessCount & 7
        let previous = rangeExcess[(n + 7) & 7]
        rangeExcess[n] = excess
        rangeExcessTimes[n] = seconds
        roughRangeSteps = roughRangeSteps << 1 | (abs(excess - previous) > o.gating.runAwayStep ? 1 : 0)
        rangeExcessCount += 1
        if runAwayRangesLeft > 0 { runAwayRangesLeft -= 1 }
        guard rangeExcessCount >= 8, roughRangeSteps & 0x7F == 0 else { return false }
        let e1 = rangeExcess[(n + 1) & 7], e4 = rangeExcess[(n + 4) & 7], e5 = rangeExcess[(n + 5) & 7]
        let rise = o.gating.runAwayRise
        let runs = excess - e1 >= rise && e4 - e1 >= rise / 4 && excess - e5 >= rise / 4
        if runs { runAwayRangesLeft = 8 }
        return runs
    }

    /// The least-squares line through the last eight range excesses against their times,
    /// `e(t) ≈ e(t₈) + ė (t − t₈)`: the excess at the latest range, metres, its rate `ė`, m/s,
    /// and `1/Σ(tₖ − t̄)²`, s⁻², which times the excesses' variance is the rate's. `nil` with fewer
    /// than eight or no spread in time.
    public func runAwayLine() -> (excess: Double, rate: Double, rateVarianceFactor: Double)? {
        guard rangeExcessCount >= 8 else { return nil }
        let meanT = rangeExcessTimes.sum() / 8, meanE = rangeExcess.sum() / 8
        let dt = rangeExcessTimes - SIMD8(repeating: meanT), de = rangeExcess - SIMD8(repeating: meanE)
        let stt = (dt * dt).sum()
        guard stt > 1e-9, stt.isFinite else { return nil }
        let rate = (dt * de).sum() / stt
        let latest = rangeExcessTimes[(rangeExcessCount - 1) & 7]
        return (meanE + rate * (latest - meanT), rate, 1 / stt)
    }

    /// The median of the first `n` (1…8) values (the mean of the two middle ones when `n` is
    /// even: of eight, the 4th and 5th smallest), by an insertion sort on the stack.
    public static func median(_ v: SIMD8<Double>, count n: Int = 8) -> Double { laneMedian(v, count: n) }
}
