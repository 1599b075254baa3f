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
        let sigma = o.sensors.rangeStandardDeviation, density = o.rangeErrorDensity
        return DirectionGrid(directionCount: max(o.channelSounding.gridDirectionCount, 12),
                             clusterCount: max(min(o.acquisition.maximumHypotheses, 96), 1), density: density,
                             variance: sigma * sigma, burstForgettingRate: o.burstForgettingRate(multipathProbability: density.excessProbability))
    }

    /// Whether this object's acquisition is the grid's: a still accessory with a grid.
    @inline(__always)
    var acquiresByGrid: Bool { directionGrid != nil && !mayMove }

    /// Whether the grid holds the estimate now: the object is being acquired by it.
    @inline(__always)
    var gridHoldsEstimate: Bool { phase == .acquiring && acquiresByGrid }

    /// Runs `body` on the grid taken out of the tracker, so that its storage is referenced once
    /// and changed in place (a copy left in the tracker would make every change copy it), then
    /// puts it back. Nothing happens without a grid.
    @inline(__always)
    mutating func updateDirectionGrid(_ body: (inout ObjectTracker, inout DirectionGrid) -> Void) {
        guard var grid = directionGrid else { return }
        directionGrid = nil
        body(&self, &grid)
        directionGrid = grid
    }

    /// Starts the grid on the sphere of radius `r` (metres) about the antenna `a` (world frame)
    /// at `t` (seconds), each direction's distance at `r − 0.5 m` with σ `max(1 m, 2√R)` (`R`
    /// the range variance in use, learned: the grid's tables are made at it); weighs it by
    /// where a carried tag was (``carryOrigin``) and, with `replaysWindow`, by every range of
    /// the window, oldest first, through a fresh burst chain. Then writes the bank.
    mutating func startDirectionGrid(radiusMetres r: Double, antennaInWorld a: Vector3, at t: Double, replaysWindow: Bool,
                                     options o: FusionOptions) {
        updateDirectionGrid { tracker, grid in
            grid.tabulate(variance: o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation)
            // Each direction's distance starts wide of the radio's noise (a learned noisier
            // radio's first range may lie metres off).
            grid.start(rangeMetres: r, antennaInWorld: a, at: t, startStandardDeviationMetres: max(1, 2 * grid.variance.squareRoot()))
            if replaysWindow {
                grid.restartChain()
                for e in tracker.window.entries where e.hasRange {
                    grid.add(rangeMetres: e.rangeMetres, antennaInWorld: e.antennaInWorld, at: e.timestamp, multiplicity: e.multiplicity)
                }
            }
            if let origin = tracker.carryOrigin, o.carry.speed > 0 {
                let spread = origin.covariance + Matrix3.scaledIdentity(o.carryDisplacementVariance(seconds: t - origin.since))
                grid.multiply(byGaussianWithMean: origin.meanInWorld, covariance: spread)
            }
            tracker.writeBank(from: &grid, options: o)
        }
    }

    /// Weighs the grid by one range (metres, from the antenna `a`, at `t`) and writes the bank.
    mutating func addToDirectionGrid(rangeMetres z: Double, antennaInWorld a: Vector3, at t: Double, options o: FusionOptions) {
        updateDirectionGrid { tracker, grid in
            grid.tabulate(variance: o.sensors.rangeStandardDeviation * o.sensors.rangeStandardDeviation)
            grid.add(rangeMetres: z, antennaInWorld: a, at: t)
            tracker.writeBank(from: &grid, options: o)
        }
    }

    /// Writes the bank from the grid as it stands (an update without a range: the drift's
    /// variance has grown).
    mutating func writeBankFromGrid(options o: FusionOptions) {
        updateDirectionGrid { tracker, grid in tracker.writeBank(from: &grid, options: o) }
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
        guard gridHoldsEstimate, let grid = directionGrid, !grid.isEmpty else { return nil }
        return grid.bearingStandardDeviation(from: a)
    }
}
