import Foundation

// One update of one object: the entry point and the fusion step it dispatches.

/// Immutable options shared by an engine and its objects' updates.
final class OptionsBox: Sendable {
    let options: FusionOptions
    /// `options.rangeErrorDensity`, built once (it takes a logarithm).
    let rangeErrorDensity: RangeErrorDensity
    /// `log₂(6/(6 − 8φ + 2φ²))`, `φ` the Channel Sounding radio's lag-one error correlation
    /// (``FusionOptions/ChannelSounding/errorCorrelation``, clamped to [0, 0.95]): what its
    /// learned noise level adds to the level read as if its errors were independent
    /// (`ObjectTracker.learnChannelSoundingRangeNoise`).
    let correlatedScatterCorrection: Double
    init(_ options: FusionOptions) {
        self.options = options
        rangeErrorDensity = options.rangeErrorDensity
        let phi = options.channelSounding.errorCorrelation.isFinite ? min(max(options.channelSounding.errorCorrelation, 0), 0.95) : 0
        correlatedScatterCorrection = log2(6 / (6 - 8 * phi + 2 * phi * phi))
    }
}

extension ObjectTracker {
    /// What an object's update needs from the engine. The options are the tracker's own
    /// (`optionsBox`): a reference to them here would be retained and released on every
    /// update, as the engine builds the context while it holds the tracker for writing.
    struct Context {
        let capabilities: DeviceCapabilities
        let cameraAssistanceEnabled: Bool
        /// Device path length while VIO tracked normally, metres.
        let pathLength: Double
        /// The device pose at the update's time, if any pose has arrived.
        let devicePose: DevicePose?
        /// VIO is limited by light or features.
        let lightingLimited: Bool
    }

    /// One UWB update for this object: fusion, then what is published, every output within
    /// the format's bounds (``NearbyObjectEstimate/withholdOutputsBeyondBounds()``).
    /// (Inlined into the engine's one call: returned from a call, the estimate was written field
    /// by field and then copied whole, and the copy's wide loads waited on the narrow stores.)
    @inline(__always)
    mutating func ingest(_ measurement: UWBMeasurement, context: Context) -> NearbyObjectEstimate {
        var estimate = fuseAndPublish(measurement, context: context)
        estimate.withholdOutputsBeyondBounds()
        return estimate
    }

    @inline(__always)
    mutating func fuseAndPublish(_ measurement: UWBMeasurement, context: Context) -> NearbyObjectEstimate {
        let t = measurement.timestamp
        let capabilities = context.capabilities

        // Sanitise the raw measurement: a non-finite or non-positive range, or a
        // non-finite or zero direction, is treated as absent (never propagated).
        var rawDistance = measurement.distance.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        if !capabilities.supportsPreciseDistanceMeasurement { rawDistance = nil }
        var rawDirection = measurement.directionInDevice.flatMap { $0.isFinite && $0.length > 1e-9 ? $0.normalized : nil }
        if !capabilities.supportsDirectionMeasurement || ranging == .bluetoothChannelSounding { rawDirection = nil }

        var estimate = NearbyObjectEstimate(timestamp: t, objectID: objectID, distance: rawDistance, direction: rawDirection)
        // An update at no finite time cannot be placed among the poses (its interpolated pose
        // would be NaN, and a Channel Sounding object's fused distance with it): the radio's
        // own values are passed through, nothing is fused and no state changes.
        guard t.isFinite else { return estimate }
        if firstUpdateTime == nil { firstUpdateTime = t }
        removed = false
        guard context.cameraAssistanceEnabled, let devicePose = context.devicePose else {
            if context.cameraAssistanceEnabled {
                estimate.convergence = AlgorithmConvergence(status: .unknown)
                estimate.verticalDirectionEstimate = .unknown
            }
            // No estimate to refer to: a Channel Sounding object's ranges, smoothed.
            if ranging == .bluetoothChannelSounding {
                let options = optionsBox.options
                let stale = rawDistance.map { $0 <= options.coaching.maximumRange && isStaleRepeat($0) } ?? false
                publishSmoothedDistance(into: &estimate, at: t, raw: rawDistance, isStaleRepeat: stale, reference: nil, context: context,
                                        options: options)
            }
            return estimate
        }
        // Read once: each read of `optionsBox.options` copies the ~860-byte struct out of its box
        // (four copies per update were 2.5 % of a steady-state update's instructions).
        let options = optionsBox.options
        let antennaInWorld = devicePose.positionInWorld + devicePose.worldFromDevice.rotate(options.sensors.antennaOffsetInDevice)
        // A stale repeat (``isStaleRepeat(_:)``) is published as the radio gave it but
        // fused as no range: it is no new measurement.
        var fusedDistance = rawDistance
        var stale = false
        if let r = rawDistance, r <= options.coaching.maximumRange {
            if isStaleRepeat(r) {
                fusedDistance = nil
                stale = true
            } else {
                if mayMove {
                    noteRangeScatter(r, at: t, variance: options.rangeVariance(measured: r) * rangeVarianceScale)
                } else if ranging == .bluetoothChannelSounding {
                    noteChannelSoundingRange(r, at: t, antennaInWorld: antennaInWorld, pose: devicePose, context: context)
                }
                if let last = lastUsableRangeTime, t > last {
                    let interval = t - last
                    meanRangeInterval = meanRangeInterval.map { 0.9 * $0 + 0.1 * interval } ?? interval
                }
                lastUsableRangeTime = t
            }
        }
        // At most one fused update per `minimumFusionInterval`: a faster radio repeats errors
        // that last longer than its interval, and would be counted as independent. (A time
        // before the last fused one — an API caller's clock restarted — is fused.)
        let sinceFused = t - (lastFusionTime ?? -.infinity)
        if devicePose.tracking == .normal, !(sinceFused >= 0 && sinceFused < options.sensors.minimumFusionInterval),
           fusedDistance != nil || rawDistance == nil || rawDirection != nil {
            lastFusionTime = t
            if ranging == .bluetoothChannelSounding {
                fuseChannelSounding(range: fusedDistance, at: t, pose: devicePose, antennaInWorld: antennaInWorld, context: context)
            } else if rangeNoiseLevel == 0 {
                fuse(range: fusedDistance, direction: rawDirection, at: t, pose: devicePose, antennaInWorld: antennaInWorld,
                     context: context, options: options)
            } else {
                fuseWithLearnedRangeNoise(range: fusedDistance, direction: rawDirection, at: t, pose: devicePose,
                                          antennaInWorld: antennaInWorld, context: context)
            }
        }
        publish(into: &estimate, at: t, pose: devicePose, antennaInWorld: antennaInWorld, context: context, options: options)
        if ranging == .bluetoothChannelSounding {
            publishChannelSoundingDistance(into: &estimate, at: t, raw: rawDistance, isStaleRepeat: stale, context: context)
        } else if estimate.worldTransform == nil, let r = rawDistance, r <= options.coaching.maximumRange {
            // Not located yet: its range, a late outlier of the ranges' own trend set aside
            // (`RangeSpikeGuard`).
            let sigma = (options.rangeVariance(measured: r) * rangeVarianceScale).squareRoot()
            estimate.distance = spikeGuard.publish(range: r, at: t, isStaleRepeat: stale, configuredSigma: sigma,
                                                   stillObjectFrom: mayMove ? nil : antennaInWorld)
        }
        return estimate
    }

    /// `fuse` with the range noise learned from the ranges (`learnMovingRangeNoise`,
    /// `learnChannelSoundingRangeNoise`). Out of line: an object weighed as configured never
    /// pays for the options' copy.
    @inline(never)
    mutating func fuseWithLearnedRangeNoise(range: Double?, direction: Vector3?, at t: Double, pose: DevicePose,
                                            antennaInWorld: Vector3, context: Context) {
        fuse(range: range, direction: direction, at: t, pose: pose, antennaInWorld: antennaInWorld, context: context,
             options: withLearnedRangeNoise(optionsBox.options))
    }

    /// `fuse` for a Channel Sounding object: with its learned range noise, and the range bias it
    /// considers at its distance (``FusionOptions/considerChannelSoundingRangeBias(distanceMetres:)``:
    /// the fused distance from `antennaInWorld`, or `range` before there is an estimate).
    /// Out of line: a UWB update never pays for the options' copy.
    @inline(never)
    mutating func fuseChannelSounding(range: Double?, at t: Double, pose: DevicePose, antennaInWorld: Vector3, context: Context) {
        var options = optionsBox.options
        if rangeNoiseLevel != 0 { applyLearnedRangeNoise(to: &options) }
        options.considerChannelSoundingRangeBias(distanceMetres: mixture.isEmpty ? (range ?? 0) : fusedDistance(from: antennaInWorld))
        fuse(range: range, direction: nil, at: t, pose: pose, antennaInWorld: antennaInWorld, context: context, options: options)
    }

    /// A Channel Sounding object's published distance, with its reference the estimate's fused
    /// distance, which `publish` has put in `distance` (``publishSmoothedDistance(into:at:raw:isStaleRepeat:reference:context:options:)``,
    /// with the learned range noise). Out of line: a UWB update never pays for it.
    @inline(never)
    mutating func publishChannelSoundingDistance(into estimate: inout NearbyObjectEstimate, at t: Double, raw: Double?,
                                                 isStaleRepeat: Bool, context: Context) {
        let options = rangeNoiseLevel == 0 ? optionsBox.options : withLearnedRangeNoise(optionsBox.options)
        publishSmoothedDistance(into: &estimate, at: t, raw: raw, isStaleRepeat: isStaleRepeat,
                                reference: mixture.isEmpty ? nil : estimate.distance, context: context, options: options)
    }

    /// `o` with its range σ the learned one: ``FusionOptions/Sensors/rangeStandardDeviation``
    /// times `√(2^level)` (`rangeNoiseLevel`).
    func withLearnedRangeNoise(_ o: FusionOptions) -> FusionOptions {
        var learned = o
        applyLearnedRangeNoise(to: &learned)
        return learned
    }

    /// ``withLearnedRangeNoise(_:)`` in place.
    func applyLearnedRangeNoise(to o: inout FusionOptions) {
        o.sensors.rangeStandardDeviation *= rangeVarianceScale.squareRoot()
    }

    /// Whether a usable range `r` (metres) is a stale repeat — the last range passed on
    /// again by the ranging stack rather than a new measurement —, and notes it
    /// (``StaleRepeatDetector``).
    @inline(__always)
    mutating func isStaleRepeat(_ r: Double) -> Bool { staleRepeats.isStale(r) }

    /// One update of an object's estimate, by phase:
    /// - **idle**: the first usable range starts the estimate — straight into tracking
    ///   when the object may move and the update also has a direction (range and direction
    ///   place it), otherwise into acquisition (the first range's sphere, tiled);
    /// - **acquiring** (a static object not yet located): the update is stored in the
    ///   window and every hypothesis's batch over the whole window, from its prior, is brought
    ///   up to date (`BatchRefinement`: kept between updates, linearised afresh when its
    ///   minimum moves), so no hypothesis is judged by measurements linearised far from it;
    ///   once one resolved cluster holds 99 % of the weight it is collapsed into one Gaussian
    ///   and tracked;
    /// - **tracking**: the IMM steps (`InteractingMultipleModel`) — mix, predict, range,
    ///   direction — fixed-size and allocation-free.
    mutating func fuse(range: Double?, direction: Vector3?, at t: Double,
                               pose: DevicePose, antennaInWorld a: Vector3, context: Context, options o: FusionOptions) {
        // (A tracked object's filter reads the measured direction as a vector: its angles are
        // computed only for the window and for a start of tracking.)
        let entry = WindowEntry(range: range, direction: direction, pose: pose, antennaInWorld: a,
                                capabilities: context.capabilities, options: o, timestamp: t,
                                computesElevationAngles: phase != .tracking)
        // An object no direction reaches (Channel Sounding, or a device without direction
        // finding) cannot be followed while it moves: ranges alone leave its bearing free.
        // While the app says it moves, nothing is fused (its ranges, smoothed, are published:
        // `DistanceSmoother`); when the app says it stopped, it is acquired afresh.
        let directionless = !(context.capabilities.supportsDirectionMeasurement && ranging == .uwb)
        if directionless && motionHint == .moving {
            if phase != .idle { dropWhileCarried(at: t) }
            return
        }
        // The same trend test guards the moving batch of a walker no direction reaches: a
        // turn or a stop breaks its constant velocity, and the fit bends to the new ranges
        // while claiming decimetres (distance-only-turning-peer seed 17: 1.3 m off at σ 0.1 m,
        // bearing σ 4°, 5 s after the friend stopped) until enough ranges are rejected.
        if phase != .idle, ranging == .bluetoothChannelSounding || (directionless && mayMove), entry.hasRange {
            if movedAwayFromItsRanges(entry, options: o) {
                // A still accessory being acquired whose ranges ran *long*: a multipath burst
                // (a reflection lasts while the hand stays where it makes one) or the tag
                // carried away — the trend cannot tell which. The first time, the ranges of the
                // trend (the seven before this one) are set aside and the bank re-solved from
                // the rest of the window (`retile`, tiled at the bank's own distance: this range
                // may be a metre long), on probation: nothing is published for
                // ``FusionOptions/ChannelSounding/probationRanges`` ranges, and ranges running long again within
                // them start the acquisition afresh, as any other trend does (and as a re-solved
                // bank that does not explain this range does at once, see `retile`). Clearing the window
                // on every long trend threw away the sweeps and the step that had located the
                // tag: 6 of 50 `cs-coached-step` runs ended without an angle, 2 now.
                // While the user sweeps or steps in place (at most
                // ``FusionOptions/ChannelSounding/inPlaceTrendPathMetres`` over the trend), the
                // re-solved bank explains this range as the radio's density does — up to the
                // largest multipath excess long —, and ranges that ran *short* are re-solved too:
                // no multipath shortens a range, but a bank that an earlier burst pulled long
                // reads a still tag's true ranges as short. Those ranges are kept, and the same
                // probation and check apply: a tag brought closer leaves a re-solved bank that
                // the window's old ranges hold where it was, which does not explain this range,
                // and the acquisition starts afresh.
                // A radio learned noisier than configured has a trend in place judged by the
                // trend's eight ranges rather than by this one: the bank is kept if their median
                // offset from it (`medianTrendOffset(newest:)`), brought to this antenna, lies
                // within the gate. Such a radio's single range lies metres off now and then (a σ
                // of metres, a gate of 2.6σ), and judged alone it started a still tag's
                // acquisition afresh on itself, the distance published jumping by as much. A long
                // trend of such a radio is no sign of a burst (its noise hides an excess of at
                // most L) and, while the whole window was ranged from about one place, keeps its
                // ranges and is judged the same way; after a walk, its ranges are set aside and
                // this range judges, as for a radio as configured (a tag carried off moves the
                // newest range first). Judged by the set-aside ranges, a bank that the rest of the
                // window holds short would stay.
                if phase == .acquiring, !mayMove, probationRangesLeft == 0 {
                    let runsLong = RestartTests.median(restarts.rangeTrend) > 0
                    let inPlace = pathOverLastRanges(8, pathLength: context.pathLength) <= o.channelSounding.inPlaceTrendPathMetres
                    if runsLong || inPlace {
                        let byMedian = inPlace && rangeNoiseLevel > 0 && (!runsLong || isRangedFromAboutOnePlace(latest: a))
                        if runsLong && !byMedian { window.removeLatest(ranges: restarts.rangeTrend.scalarCount - 1) }
                        let excess = runsLong && inPlace && o.gating.rangeMultipathProbability > 0
                            ? max(o.gating.rangeMultipathMaximumExcess, 0) : 0
                        retile(radiusMetres: fusedDistance(from: a), antennaInWorld: a, at: t, pose: pose,
                               pathLength: context.pathLength, options: o)
                        let judged = byMedian
                            ? fusedDistance(from: a) + medianTrendOffset(newest: entry)
                            : entry.rangeMetres
                        if bankExplains(judged, from: a, options: o, longBy: excess) {
                            probationRangesLeft = o.channelSounding.probationRanges
                            restarts.rangeTrendCount = 0
                            return
                        }
                    }
                }
                startOver(from: entry, at: t, pose: pose, context: context)
                return
            }
            if probationRangesLeft > 0 { probationRangesLeft -= 1 }
        }
        if reacquires, phase == .tracking, entry.hasRange {
            reacquires = false
            unconvergedSince = nil
            startOver(from: entry, at: t, pose: pose, context: context)
            return
        }
        if phase != .tracking, mayMove, entry.hasRange, entry.direction == .azimuthElevation {
            // A range and a direction place the object at once; a static acquisition would
            // be wrong for something that may walk away.
            startTracking(fromRange: entry.rangeMetres, angles: entry.angles, pose: pose, antennaInWorld: a, at: t, context: context)
            return
        }
        if phase == .idle {
            guard entry.hasRange else { return }
            initialise(rangeMetres: entry.rangeMetres, at: t, pose: pose, antennaInWorld: a, context: context)
            return
        }
        let dt = max(t - (lastPredictionTime ?? t), 0)
        let ds = max(context.pathLength - pathLengthAtLastPrediction, 0)
        lastPredictionTime = t
        pathLengthAtLastPrediction = context.pathLength
        let rangeAccepted: Bool
        if phase == .acquiring {
            rangeAccepted = acquire(entry, dt: dt, ds: ds, pathLength: context.pathLength, options: o)
        } else {
            rangeAccepted = track(entry, dt: dt, ds: ds, rangesAlone: directionless && ranging == .uwb, options: o)
        }
        if entry.hasRange {
            if rangeAccepted {
                restarts.clearRejections()
                movement.add(a)
            } else if rejectionCallsForARestart(entry, directionless: directionless, options: o) {
                // The estimate no longer explains the ranges (a first NLOS range, or the
                // object moved): start again from the median of the rejected ranges — this one
                // may itself be a multipath range, and tiles on a sphere too large hold the
                // batch in the multipath mode (see `medianRejectedRange`).
                let radius = medianRejectedRange
                if !(phase == .acquiring && !mayMove
                     && retile(from: entry, radiusMetres: radius, explaining: radius, pose: pose, pathLength: context.pathLength,
                               options: o)) {
                    startOver(from: entry, rangeMetres: radius, at: t, pose: pose, context: context)
                }
                return
            }
        }
        if phase == .acquiring {
            settleIfResolved(options: o, directionless: directionless)
        } else if mixture.count > 1 {
            // (A bank of one, a tracked object's, has nothing to prune; the check below resets it if it is not finite.)
            mixture.pruneAndMerge(minimumWeight: o.acquisition.pruneWeight, mergeDistanceSquared: o.acquisition.mergeDistanceSquared)
        }
        let m = mixture.moments
        if !m.meanInWorld.isFinite || !m.covariance.isFinite || (phase == .tracking && !motion.isFinite) {
            // Never publish NaN: drop the estimate and start again from the next range.
            resetEstimate()
        }
    }
}

/// The resolution a radio reports its ranges at, read off their values.
@_spi(Internals) public enum RangeResolution {
    /// How many decimal digits `r` needs: the least `k ≤ 6` with `r 10ᵏ` within 10⁻³ of a
    /// whole number, 7 when none is.
    public static func decimalDigits(of r: Double) -> Int {
        var scaled = r
        for k in 0...6 {
            if abs(scaled - scaled.rounded()) <= 1e-3 { return k }
            scaled *= 10
        }
        return 7
    }

    /// The step, metres, of ranges given to `digits` decimal digits: `10^−digits`.
    public static func step(digits: Int) -> Double {
        var q = 1.0
        for _ in 0..<max(digits, 0) { q /= 10 }
        return q
    }
}

/// Tells a stale repeat — the last range passed on again by the ranging stack rather than a
/// new measurement — from an honest one, range by range.
///
/// A radio that reports its ranges to a step `q` repeats itself honestly now and then.
/// One that reports whole centimetres or millimetres does so often — more often than it
/// steps by `q` while the devices keep still (the real drone and trolley sessions do) —,
/// and its repeats cannot be told from stale ones: they are fused. A radio that reports
/// tenths of a millimetre or finer (`q ≤ 10⁻⁴` m) almost never does: consecutive ranges
/// differ by `Δ`, spread over `σ_Δ`, and a fresh range equals the last one with
/// probability about `q / (√(2π) σ_Δ)`. A range equal to the last one to the bit is then
/// called stale once such repeats have come more often than chance allows:
/// `n₀ ≥ 2 + 3 E`, `n₀` the repeats so far (this one included) and `E` the sum of that
/// probability over the ranges. `q` is `10⁻ᵏ`, `k` the most decimal digits one of the
/// first 64 ranges needed (`r 10ᵏ` within a thousandth of a whole number: a value that
/// went through a 32-bit float still reads as the centimetres it was); `σ_Δ = √(π/2)`
/// times the mean `|Δ|` over about the last twenty ranges.
struct StaleRepeatDetector: Sendable {
    /// The last usable range, metres.
    var lastRangeMetres: Double?
    /// The most decimal digits a range has needed so far (7: finer than a micrometre), and
    /// how many ranges were read for it.
    var decimalDigits = 0, rangesReadForDigits = 0
    /// `q = 10^−decimalDigits`, metres.
    var stepMetres = 1.0
    /// The mean absolute difference of consecutive ranges, metres.
    var meanRangeStepMetres: Double?
    /// How many ranges repeated the last one to the bit, and how many honest repeats were to
    /// be expected (`n₀` and `E`).
    var repeatedRanges = 0, expectedHonestRepeats = 0.0

    /// Whether the usable range `r` (metres) is a stale repeat; notes it.
    @inline(__always)
    mutating func isStale(_ r: Double) -> Bool {
        defer { lastRangeMetres = r }
        if rangesReadForDigits < 64 {
            rangesReadForDigits += 1
            let digits = RangeResolution.decimalDigits(of: r)
            if digits > decimalDigits {
                decimalDigits = digits
                stepMetres = RangeResolution.step(digits: digits)
            }
        }
        guard let last = lastRangeMetres else { return false }
        let step = abs(r - last)
        let meanStep = meanRangeStepMetres.map { 0.95 * $0 + 0.05 * step } ?? step
        meanRangeStepMetres = meanStep
        // √(π/2) and √(2π).
        let spread = max(1.2533141373155001 * meanStep, stepMetres)
        expectedHonestRepeats += min(stepMetres / (2.5066282746310002 * spread), 1)
        guard step == 0, decimalDigits >= 4 else { return false }
        repeatedRanges += 1
        return Double(repeatedRanges) >= 2 + 3 * expectedHonestRepeats
    }
}
