import Foundation

// When an estimate starts over: the restart tests on rejected ranges and their re-tiling.
extension ObjectTracker {
    /// Counts a rejected range and says whether the estimate should start again: after
    /// `rejectionsBeforeReset` rejections in a row (`rejectionsBeforeResetWhenConverged` once
    /// converged). A converged object held still (ranges alone cannot show its motion, see
    /// `track`) whose rejected range is too long by more than `blockedRangeExcess` is behind
    /// a blocked line of sight, which lengthens ranges by metres for tens of seconds (sbs_01's
    /// anchor101 at 257–290 s: +5 to +15 m; a reset there re-acquired from those ranges and
    /// converged 10 m off): such ranges leave the estimate standing for
    /// `rejectionsBeforeResetWhenBlocked`, while any other rejection (too short, which no
    /// blocked path gives, or long by less, which a wrong estimate gives) counts toward the
    /// usual limit. A blocked path is also *erratic*: its ranges jump by metres from one to
    /// the next (anchor101: 70, 64, 41, 55, 40, 34, 30, 35, 40 m at 6 Hz), while a tag
    /// carried away lengthens them smoothly, by walking speed × the interval. So a long
    /// range counts as blocked only while at least four of the last eight steps between
    /// rejected ranges exceeded `blockedRangeJump`; a tag carried away from a watch is still
    /// re-acquired after the usual 30 rejections instead of standing stale for a minute.
    mutating func rejectionCallsForARestart(_ entry: WindowEntry, directionless: Bool, options o: FusionOptions) -> Bool {
        let converged = phase == .tracking && hasConverged && ranging == .uwb && !mayMove && motionHint != .moving
        return restarts.rejectionCallsForARestart(
            rangeMetres: entry.rangeMetres, excess: entry.rangeMetres - fusedDistance(from: entry.antennaInWorld),
            acquiringWithDirections: phase == .acquiring && !directionless && ranging == .uwb,
            converged: converged, heldStill: converged && directionless, hasConverged: hasConverged,
            withDirections: !directionless, stillIsLikelier: motion.movingProbability < 0.5, options: o)
    }

    /// Whether a Channel Sounding object's ranges have drifted away from its estimate: the
    /// median of the last eight signed normalised innovations `ν/√s` (each the weighted mean
    /// over the hypotheses, `Σ wᵢ νᵢ/√sᵢ`, while acquiring) beyond 1.5 (3.4σ for a still
    /// object, whose median of eight has σ ≈ 1.25/√8 = 0.44). The median, not the mean: a
    /// still tag's multipath comes in bursts of ranges all too long by up to 2 m, and two such
    /// bursts within eight ranges carried the mean past 1.5 and restarted a good acquisition
    /// (`Datasets/cs-coached-step.jsonl` lost its angle at 12 s and 22 s); a tag carried away
    /// moves every range. Its wide range gate (σ 0.38 m) would otherwise
    /// let a carried tag drag the estimate along the line of sight by ranges alone, bearing
    /// stale, and re-converge there.
    /// The caller then acquires it afresh (a still accessory's first trend of long ranges while
    /// it is acquired: re-solved on probation, see `fuse`). (A tag carried around the user at a constant range
    /// changes no range: a distance-only radio cannot see that motion at all.)
    mutating func movedAwayFromItsRanges(_ entry: WindowEntry, options o: FusionOptions) -> Bool {
        guard !mixture.isEmpty else { return false }
        let model = o.rangeModel(from: entry.antennaInWorld, measured: entry.rangeMetres)
        var nu = 0.0
        // Without the considered range bias: a constant bias moved the solution, and shows in
        // no trend of its ranges.
        let bias = o.sensors.rangeBiasStandardDeviation * o.sensors.rangeBiasStandardDeviation
        let tracked = phase == .tracking && considersRangeBias
        // Each hypothesis read in place (its covariance methods are inlined: an outlined call
        // copied the hypothesis, ~1.4 kB).
        let hypotheses = mixture.hypotheses
        for i in hypotheses.indices {
            let w = hypotheses.count == 1 ? 1 : exp(hypotheses[i].logWeight)
            // (A tracked object's one hypothesis carries the share handed over, `consideredCovariance`.)
            let covariance = tracked ? hypotheses[i].remainingCovariance(less: consideredCovariance) ?? hypotheses[i].covariance
                : hypotheses[i].estimatedCovariance(consideredBiasVariance: bias)
            nu += w * model.normalizedInnovation(entry.rangeMetres, at: hypotheses[i].meanInWorld, covariance: covariance)
        }
        guard nu.isFinite else { return false }
        return restarts.rangesTrendAway(adding: nu, options: o)
    }

    /// Whether at least ``FusionOptions/ChannelSounding/approachRangeCount`` of a Channel Sounding object's
    /// last ``FusionOptions/ChannelSounding/approachRangeWindow`` (≤ 8) normalised range innovations lie below
    /// −``FusionOptions/ChannelSounding/approachThreshold`` (`shortRangeBits`, one bit per innovation, newest
    /// in bit 0): ranges running short. (Inlined: an outlined call
    /// from `publish` copied the whole tracker, +190 instructions per UWB update.)
    @inline(__always)
    func rangesRunShort(_ o: FusionOptions) -> Bool {
        ranging == .bluetoothChannelSounding && restarts.rangesRunShort(o)
    }

    /// Takes the excess `e = z − ‖p_s − a‖` of a range over the still model's prediction and
    /// says whether the last eight run away smoothly (``FusionOptions/Gating/runAwayStep``): every
    /// `|eₖ − eₖ₋₁| ≤ step`, `e₈ − e₁ ≥ rise`, and each half rising too, `e₄ − e₁ ≥ rise/4`
    /// and `e₈ − e₅ ≥ rise/4` (a flat run that ends in the onset of a small multipath burst,
    /// +0.2 then +0.5 m, can pass the first two; a carry rises throughout). Without it, a tag
    /// carried straight away from the user — its direction unchanged, every range too long
    /// for the still model and set aside as multipath — would never be reported `moving`, and
    /// would stand stale, more than 50 cm off, for seconds until a run of rejected ranges
    /// restarted it (`accuracy --scenario tag-carried-away` prints how long it stands off).
    mutating func rangesRunAway(_ excess: Double, at seconds: Double, options o: FusionOptions) -> Bool {
        restarts.rangesRunAway(excess, at: seconds, options: o)
    }

    /// Forgets the estimate and acquires the object afresh from a range `r` measured at this
    /// update (by default its own).
    mutating func startOver(from entry: WindowEntry, rangeMetres r: Double? = nil, at t: Double, pose: DevicePose,
                                    context: Context) {
        resetEstimate()
        hasConverged = false
        initialise(rangeMetres: r ?? entry.rangeMetres, at: t, pose: pose, antennaInWorld: entry.antennaInWorld, context: context)
    }

    /// The path the device travelled, metres, since the `count`-th latest range in the window
    /// (counting this update's, which is not stored yet, as the first): the whole window's
    /// path when it holds fewer. `pathLength` is the session's; the window's entries hold theirs
    /// from the acquisition's start (`acquire`), so both are read from there.
    func pathOverLastRanges(_ count: Int, pathLength: Double) -> Double {
        let now = pathLength - pathLengthAtInitialisation
        var seen = 1
        var earliest = now
        for e in window.entries.reversed() where e.hasRange {
            earliest = e.pathLengthMetres
            seen += 1
            if seen == count { break }
        }
        return max(now - earliest, 0)
    }

    /// The median of the run's last (up to five; a restart always has five) rejected ranges,
    /// metres: where a restart tiles the range sphere. The tiles' priors hold their range as a Gaussian with the
    /// range's σ, and the batch starts from them, so a sphere tiled on a multipath range — the
    /// fifth rejected one as often as any — keeps every hypothesis in the multipath mode, the
    /// line-of-sight ranges (most of them) discarded as outliers, and the object is placed too
    /// far by about the reflection's excess. The rejected ranges of one run agree when the
    /// estimate is what is wrong; the median takes the majority.
    var medianRejectedRange: Double { restarts.medianRejectedRange }

    /// The median, metres, of `rₖ − d(aₖ)` over the ranges of a trend of innovations
    /// (`movedAwayFromItsRanges(_:options:)`): `entry`'s range and the (up to) seven latest
    /// before it in the window, each less the fused distance from the antenna it was measured
    /// from (``fusedDistance(from:)``). How far the trend lies beyond the estimate as it now
    /// stands; fixed-size, it allocates nothing.
    func medianTrendOffset(newest entry: WindowEntry) -> Double {
        var offsets = SIMD8<Double>()
        offsets[0] = entry.rangeMetres - fusedDistance(from: entry.antennaInWorld)
        var count = 1
        for e in window.entries.reversed() where e.hasRange {
            guard count < 8 else { break }
            offsets[count] = e.rangeMetres - fusedDistance(from: e.antennaInWorld)
            count += 1
        }
        return RestartTests.median(offsets, count: count)
    }

    /// Restarts a still object's acquisition from this update's range *keeping what was
    /// measured*: the range's sphere is tiled afresh and every new hypothesis is re-solved at
    /// once from the stored window (`BatchRefinement.refine(_:window:options:addedVariance:)`),
    /// with the random walk and the drift accumulated since the window began.
    ///
    /// The rejections that call for it say the *hypotheses* are wrong (pruned to a wrong
    /// basin, or tiled on a first range that was long), not the measurements: a fixed object
    /// has not gone anywhere, and the window's ranges, robustly weighted, still describe it.
    /// Clearing them threw information away that motion had paid for. Measured on the real
    /// drone session eee_01 (NTU VIRAL): anchor100's bank, pruned to a
    /// wrong basin 31 m off while the drone climbed straight up (a vertical line leaves the
    /// bearing about it free), was restarted at 56 s; the restart forgot the climb, the only
    /// motion that fixed the anchor's height, and the height stayed open (σ 1 m, 2.5 m too
    /// high, `same` published while the anchor was 3.3 m below) until the drone climbed again
    /// at 80 s. Re-solved from the window, it converges within two seconds of the moment the
    /// Cramér–Rao bound allows 3°.
    ///
    /// Unless the object did move: then the window's old ranges pull the re-solved bank back
    /// where it was, and it no longer explains the range it was tiled on. That is checked, and
    /// the caller then clears the window as before (returns `false`). Without the check, a tag
    /// carried away from a watch while it is being acquired would be re-solved where it was,
    /// and published further off for longer.
    ///
    /// - Parameters:
    ///   - radiusMetres: the sphere tiled: the median of the rejected ranges of the run that
    ///     called for it (see `medianRejectedRange`).
    ///   - range: the range, metres, measured from the entry's antenna, that the re-solved bank
    ///     must explain (the tiled median).
    ///
    /// (A trend of innovations re-solves the bank at its own distance and judges it by the
    /// trend's ranges instead: see `fuse` and ``medianTrendOffset(newest:)``.)
    mutating func retile(from entry: WindowEntry, radiusMetres: Double, explaining range: Double,
                         pose: DevicePose, pathLength: Double, options o: FusionOptions) -> Bool {
        // This range is not added to the window: the new tiles' priors hold the median it was
        // tiled on (as a first range is held).
        retile(radiusMetres: radiusMetres, antennaInWorld: entry.antennaInWorld, at: entry.timestamp, pose: pose,
               pathLength: pathLength, options: o)
        return bankExplains(range, from: entry.antennaInWorld, options: o)
    }

    /// Tiles the sphere of `radiusMetres` around the antenna `a` (world frame, metres) afresh,
    /// weighed by where a carried object may be at `t` (seconds), and re-solves every tile from
    /// the window (the acquisition's random walk and drift since it began added): a new
    /// estimate (``estimateGeneration``), its rejections forgotten.
    mutating func retile(radiusMetres: Double, antennaInWorld a: Vector3, at t: Double, pose: DevicePose, pathLength: Double,
                         options o: FusionOptions) {
        if acquiresByGrid {
            // The grid starts on the sphere and takes the window's ranges again.
            startDirectionGrid(radiusMetres: radiusMetres, antennaInWorld: a, at: t, replaysWindow: true, options: o)
        } else {
            mixture.initialize(rangeMetres: radiusMetres, antennaInWorld: a, forwardInWorld: pose.forwardInWorld, options: o)
            weighByCarryOrigin(at: t, options: o)
            let added = acquisitionAddedVariance(pathLength: pathLength, options: o)
            addWindowWork(refineStillBatch(options: o, addedVariance: added))
        }
        estimateGeneration &+= 1
        restarts.clearRejections()
        updatesSinceRefinement = 0
    }
}
