/// The `distance` a UWB object publishes until it is located (no `worldTransform` yet): the
/// radio's range as given, unless it breaks the trend of the ranges kept before it — then the
/// trend's value in its place.
///
/// A UWB range errs long when it errs far: the receiver missed the first path (a body, a wall,
/// a floor in the way) and timed a later reflection, 0.2–2 m further. Before an object is
/// located nothing but its ranges says what its distance is — an accessory not located yet,
/// a watch ranged without directions for half a minute, a phone-to-phone peer that never is —,
/// and phone-to-phone UWB between walking people errs slowly as well (errors correlated over
/// seconds: a few centimetres from one range to the next at 10 Hz). No smoothing takes out
/// what lasts — an average over less than the errors' correlation time keeps them, and a
/// longer one lags a walker —, so what is published follows the ranges as given and sets
/// aside only what they themselves call an outlier.
///
/// - **Trend**: the Theil–Sen line through the last ``trendRanges`` ranges kept `(tᵢ, rᵢ)`,
///   read at the new range's time `t`: slope `b = median_{i<j} (rⱼ − rᵢ)/(tⱼ − tᵢ)`, value
///   `r̂ = median_i (rᵢ + b (t − tᵢ))`. A walker's range rate and the slow error are in the
///   line; a range set aside is not.
/// - **Scale**: `σ̂ = median_k |d_k| / 0.6745` over the last ``scaleSamples`` residuals
///   `d = r − r̂` (a normal error's median absolute value is 0.6745 σ; the outliers among the
///   residuals move the median little while they are fewer than half), the configured range σ
///   until ``minimumScaleSamples`` residuals have come.
/// - **Long**: a range with `d > k σ̂` (`k` = ``threshold``) is set aside, and `r̂` (at least
///   0) is published in its place — unless it is the ``levelShiftRanges``-th in a row: ranges
///   that agree to leave the trend show a new level (the peer stepped behind a wall), so the
///   trend starts afresh on them and this range is published as given. For an object that
///   keeps still (an accessory), only if the device's motion does not explain it either: a
///   range that grew by no more than `‖a − a′‖ + k σ̂` since the last one kept, `a′` and `a`
///   the antenna then and now, is kept (``deviceMotionExplains(growth:from:to:sigma:)``) —
///   a user's sweep bends a range's line within the seven ranges, which a straight trend
///   would otherwise take for a spike.
/// - **Short**: a range with `d < −k σ̂` is published as given and the trend starts afresh on
///   it: the ranges the trend holds came late (a session that starts behind an obstacle),
///   this one did not. A line built on late ranges would otherwise set the first good ones
///   aside.
/// - **Stale repeats** (`ObjectTracker.isStaleRepeat(_:)`) are no new range: the last value
///   published is published again, and nothing joins the trend.
/// - A gap of more than ``maximumGapSeconds`` since the last range kept, or a clock that ran
///   back, starts the trend afresh; until it holds ``trendRanges`` ranges, they are published as
///   given (a line through fewer extrapolates with an error near a white radio's own noise, and
///   would set aside good ranges).
///
/// While the ranges keep to their trend the published distance is the range itself: no lag.
/// Nothing is allocated: the ranges and residuals are kept in fixed rings.
@_spi(Internals) public struct RangeSpikeGuard: Sendable {
    /// `k`: how many σ̂ a range's residual may reach before it is set aside.
    public static let threshold = 4.0
    /// A gap after which the trend starts again, seconds.
    public static let maximumGapSeconds = 1.0
    /// How many long ranges set aside in a row show a new level.
    public static let levelShiftRanges = 3
    /// How many recent ranges the trend is fitted to.
    static let trendRanges = 7
    /// How many residuals the scale is the median of, and how many it needs.
    static let scaleSamples = 15
    static let minimumScaleSamples = 5

    /// The recent fresh ranges, a ring of ``trendRanges`` (in the first seven lanes): times
    /// (seconds) and ranges (metres).
    var times = SIMD8<Double>(), ranges = SIMD8<Double>()
    var rangeCount = 0, nextRange = 0
    /// The long ranges set aside in a row, up to
    /// ``levelShiftRanges`` − 1 of them.
    var setAsideTimes = SIMD2<Double>(), setAsideRanges = SIMD2<Double>()
    var setAsideCount = 0
    /// The last distance published, metres.
    var lastPublished: Double?
    /// The antenna's position at the last range kept, world frame, metres (`nil`: not given).
    var lastKeptAntenna: Vector3?
    /// The last residuals `|d|` (metres), a ring of ``scaleSamples`` (in the first fifteen
    /// lanes), and how many it holds.
    var residuals = SIMD16<Double>()
    var residualCount = 0, nextResidual = 0

    public init() {}

    /// The Theil–Sen line through the ranges kept, read at `t`: slope `b = median over pairs of
    /// (rⱼ − rᵢ)/(tⱼ − tᵢ)`, value `median(rᵢ + b (t − tᵢ))`.
    func trend(at t: Double) -> Double {
        // In a buffer on the stack: at most 21 slopes, then the seven values.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 32) { buffer in
            let s = buffer.baseAddress!
            var pairs = 0
            for i in 0..<rangeCount {
                // (Ranges within a microsecond of each other give no slope.)
                for j in (i + 1)..<max(rangeCount, i + 1) where abs(times[j] - times[i]) > 1e-6 {
                    s[pairs] = (ranges[j] - ranges[i]) / (times[j] - times[i])
                    pairs += 1
                }
            }
            let slope = sortedMedian(s, count: pairs)
            for i in 0..<rangeCount { s[i] = ranges[i] + slope * (t - times[i]) }
            return sortedMedian(s, count: rangeCount)
        }
    }

    /// Whether the device's own motion explains a still object's range growing by `growth`
    /// metres since the last range kept: `growth ≤ ‖a − a′‖ + k σ̂`, `a′` and `a` the antenna's
    /// positions then and now (world frame, metres). A still object's range cannot grow by
    /// more than the antenna moved away from it (the triangle inequality), so a range the
    /// bound allows is kept however the trend's line bent. `false` when either position is
    /// missing (an object that may move: no bound holds).
    @inline(__always)
    static func deviceMotionExplains(growth: Double, from previous: Vector3?, to current: Vector3?, sigma: Double) -> Bool {
        guard let previous, let current else { return false }
        return growth <= (current - previous).length + threshold * sigma
    }

    /// The distance to publish for the radio's `range` (metres, `nil`: none) at `t` (seconds);
    /// `nil` when there is no finite range.
    /// - Parameters:
    ///   - isStaleRepeat: the range repeats the last one as no new measurement.
    ///   - configuredSigma: the range σ in use, metres: the scale until the ranges give their own.
    ///   - antenna: for an object that keeps still, the device's antenna in the world frame,
    ///     metres (``deviceMotionExplains(growth:from:to:sigma:)``); `nil` for one that may move.
    public mutating func publish(range: Double?, at t: Double, isStaleRepeat: Bool, configuredSigma: Double,
                                 stillObjectFrom antenna: Vector3? = nil) -> Double? {
        guard let r = range, r.isFinite else { return nil }
        if isStaleRepeat { return lastPublished ?? r }
        let newest = (nextRange + Self.trendRanges - 1) % Self.trendRanges
        if rangeCount > 0 && !(t >= times[newest] && t - times[newest] <= Self.maximumGapSeconds) {
            rangeCount = 0
            nextRange = 0
            setAsideCount = 0
        }
        if rangeCount == Self.trendRanges, case let predicted = trend(at: t), predicted.isFinite {
            let residual = r - predicted
            var sigma = configuredSigma
            if residualCount >= Self.minimumScaleSamples {
                sigma = laneMedian(residuals, count: residualCount) / 0.6745
            }
            residuals[nextResidual] = abs(residual)
            nextResidual = (nextResidual + 1) % Self.scaleSamples
            residualCount = min(residualCount + 1, Self.scaleSamples)
            if residual < -Self.threshold * sigma {
                // Far short of the trend: the ranges the trend holds came late (a first path
                // missed), this one did not. The trend starts afresh on it.
                rangeCount = 0
                nextRange = 0
            } else if residual > Self.threshold * sigma,
                      !Self.deviceMotionExplains(growth: r - ranges[newest], from: lastKeptAntenna, to: antenna, sigma: sigma) {
                if setAsideCount < Self.levelShiftRanges - 1 {
                    setAsideTimes[setAsideCount] = t
                    setAsideRanges[setAsideCount] = r
                    setAsideCount += 1
                    lastPublished = max(predicted, 0)
                    return lastPublished
                }
                // The third in a row: a new level, the trend started afresh on these.
                rangeCount = 0
                nextRange = 0
                for i in 0..<setAsideCount {
                    times[nextRange] = setAsideTimes[i]
                    ranges[nextRange] = setAsideRanges[i]
                    nextRange += 1
                    rangeCount += 1
                }
            }
        }
        setAsideCount = 0
        times[nextRange] = t
        ranges[nextRange] = r
        nextRange = (nextRange + 1) % Self.trendRanges
        rangeCount = min(rangeCount + 1, Self.trendRanges)
        lastPublished = r
        lastKeptAntenna = antenna
        return r
    }
}
