import Foundation

// Acquisition by a grid of directions (``FusionOptions/ChannelSounding/AcquisitionDensity/directionGrid``):
// a still Channel Sounding accessory's position held as `DirectionGrid`, updated once per
// range, and the bank written from its clusters for everything that reads a bank.
extension ObjectTracker {
    /// The grid a Channel Sounding accessory is acquired with, when the options ask for one
    /// (made once, at registration: nothing is allocated on the update path).
    static func makeDirectionGrid(kind: ObjectKind, ranging: RangingTechnology, options o: FusionOptions) -> DirectionGrid? {
        guard ranging == .bluetoothChannelSounding, kind == .accessory,
              o.channelSounding.acquisitionDensity == .directionGrid else { return nil }
        let sigma = o.sensors.rangeStandardDeviation
        let eta = o.gating.rangeMultipathProbability
        let burst = o.gating.rangeMultipathBurstSeconds > 0 && eta > 0 && eta < 1
            ? 1 / (o.gating.rangeMultipathBurstSeconds * (1 - eta)) : 0
        return DirectionGrid(directionCount: max(o.channelSounding.gridDirectionCount, 12),
                             clusterCount: max(min(o.acquisition.maximumHypotheses, 96), 1),
                             density: o.rangeErrorDensity, variance: sigma * sigma, burstForgettingRate: burst)
    }

    /// Whether this object's acquisition is the grid's: a still accessory with a grid.
    @inline(__always)
    var acquiresByGrid: Bool { directionGrid != nil && !mayMove }

    /// Starts the grid on the sphere of radius `r` (metres) about the antenna `a` (world frame)
    /// at `t` (seconds), each direction's distance at `r − 0.5 m` with σ `max(1 m, 2√R)` (`R`
    /// the range variance in use, learned: the grid's tables are made at it); weighs it by
    /// where a carried tag was (``carryOrigin``) and, with `replaysWindow`, by every range of
    /// the window, oldest first, through a fresh burst chain. Then writes the bank.
    mutating func startDirectionGrid(radiusMetres r: Double, antennaInWorld a: Vector3, at t: Double, replaysWindow: Bool,
                                     options o: FusionOptions) {
        // Taken out of the tracker while it is worked on, so that its storage is referenced
        // once and changed in place.
        guard var grid = directionGrid else { return }
        directionGrid = nil
        grid.tabulate(variance: o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation)
        // Each direction's distance starts wide of the radio's noise (a learned noisier radio's
        // first range may lie metres off).
        grid.start(rangeMetres: r, antennaInWorld: a, at: t, startStandardDeviationMetres: max(1, 2 * grid.variance.squareRoot()))
        if replaysWindow {
            grid.restartChain()
            for e in window.entries where e.hasRange {
                grid.add(rangeMetres: e.rangeMetres, antennaInWorld: e.antennaInWorld, at: e.timestamp, multiplicity: e.multiplicity)
            }
        }
        if let origin = carryOrigin, o.carry.speed > 0 {
            let spread = origin.covariance + Matrix3.scaledIdentity(o.carryDisplacementVariance(seconds: t - origin.since))
            grid.multiply(byGaussianWithMean: origin.meanInWorld, covariance: spread)
        }
        writeBank(from: &grid, options: o)
        directionGrid = grid
    }

    /// Weighs the grid by one range (metres, from the antenna `a`, at `t`) and writes the bank.
    mutating func addToDirectionGrid(rangeMetres z: Double, antennaInWorld a: Vector3, at t: Double, options o: FusionOptions) {
        guard var grid = directionGrid else { return }
        directionGrid = nil
        grid.tabulate(variance: o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation)
        grid.add(rangeMetres: z, antennaInWorld: a, at: t)
        writeBank(from: &grid, options: o)
        directionGrid = grid
    }

    /// Writes the bank from the grid as it stands (an update without a range: the drift's
    /// variance has grown).
    mutating func writeBankFromGrid(options o: FusionOptions) {
        guard var grid = directionGrid else { return }
        directionGrid = nil
        writeBank(from: &grid, options: o)
        directionGrid = grid
    }

    /// The bank as the grid's moment-matched clusters (`DirectionGrid.summarise(_:)`), each
    /// widened by what the batch adds for the VIO's drift since the acquisition began (a third
    /// of the random walk predicted since, `q I`) and by a considered range bias along its line
    /// from the grid's origin, `σ_β² u uᵀ` (a point fixed by ranges from about one place moves
    /// along that line with a common bias: ``PositionHypothesis/rangeBiasSensitivity``). An
    /// empty grid (every direction dropped) leaves an empty bank: the next range starts afresh.
    /// Clusters below ``FusionOptions/Acquisition/acquisitionPruneWeight`` of the weight are left out.
    mutating func writeBank(from grid: inout DirectionGrid, options o: FusionOptions) {
        let q = processVarianceSinceInitialisation / 3
        let biasVariance = o.sensors.rangeBiasStandardDeviation * o.sensors.rangeBiasStandardDeviation
        let origin = grid.originInWorld
        let floor = log(max(o.acquisition.acquisitionPruneWeight, 1e-300))
        var count = 0
        grid.summarise { logWeight, mean, covariance in
            // (What the acquisition's pruning would drop at once is not written.)
            guard logWeight >= floor else { return }
            let u = (mean - origin).normalized
            let sensitivity = biasVariance > 0 && u.isFinite ? u : .zero
            var c = covariance + Matrix3.scaledIdentity(q)
            if biasVariance > 0 { c = c + biasVariance * Matrix3.outer(sensitivity, sensitivity) }
            mixture.setHypothesis(count, logWeight: logWeight, meanInWorld: mean, covariance: c.symmetrized,
                                  rangeBiasSensitivity: sensitivity)
            count += 1
        }
        mixture.removeHypotheses(from: count)
        mixture.normalizeWeights()
    }

    /// The grid's bearing σ from `a` (radians) while it holds the acquisition; `nil` otherwise.
    /// (Inlined: an outlined call from `publish` copied the whole tracker on every update.)
    @inline(__always)
    func gridBearingStandardDeviation(from a: Vector3) -> Double? {
        guard phase == .acquiring, acquiresByGrid, let grid = directionGrid, !grid.isEmpty else { return nil }
        return grid.bearingStandardDeviation(from: a)
    }
}
