import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing

/// The direction grid against the exact posterior it stands in for. Every run is seeded.
@Suite("Direction grid")
struct DirectionGridTests {
    static let model = ChannelSoundingModel()
    static var variance: Double { model.rangeStandardDeviation * model.rangeStandardDeviation }

    /// Exact ranges from a device path to a tag at (−1.1, 0.9, −3.6) m: the grid's bearing σ,
    /// the last device position and the grid's moments.
    static func grid(burstForgettingRate: Double = 0, _ path: (Int) -> Vector3)
        -> (sigma: Double, device: Vector3, moments: MixtureMoments, grid: DirectionGrid) {
        let tag = Vector3(-1.1, 0.9, -3.6)
        var g = DirectionGrid(directionCount: 500, density: model.rangeErrorDensity, variance: variance,
                              burstForgettingRate: burstForgettingRate)
        var device = Vector3.zero
        for k in 0..<60 {
            device = path(k)
            let r = (tag - device).length
            if k == 0 { g.start(rangeMetres: r, antennaInWorld: device, at: 0) } else { g.add(rangeMetres: r, antennaInWorld: device, at: 0.2 * Double(k)) }
        }
        return (g.bearingStandardDeviation(from: device), device, g.moments!, g)
    }

    /// Sweeps in the device's vertical plane leave the tag's mirror across it (σ about 90°,
    /// as the exact posterior); a 1 m step toward the tag breaks it, and the grid's Gaussian
    /// summary then covers the tag.
    @Test func theGridSeesTheMirrorAsTheExactPosteriorDoes() {
        let tag = Vector3(-1.1, 0.9, -3.6)
        let planar = Self.grid { k in Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), 0) }
        #expect(Angle.degrees(radians: planar.sigma) > 60, "\(Angle.degrees(radians: planar.sigma))°")
        #expect(abs(planar.moments.meanInWorld.z) < 0.5 && planar.moments.covariance.m22.squareRoot() > 3,
                "\(planar.moments.meanInWorld)")
        let stepped = Self.grid { k in
            Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), -min(Double(k) / 30, 1))
        }
        #expect(Angle.degrees(radians: stepped.sigma) < 10, "\(Angle.degrees(radians: stepped.sigma))°")
        let e = stepped.moments.meanInWorld - tag
        #expect(stepped.moments.covariance.inverse.map { $0.quadraticForm(e) < 3 } == true, "\(e)")
        #expect(stepped.grid.count < planar.grid.count, "\(stepped.grid.count) live against \(planar.grid.count)")
    }

    /// The clusters a bank reads hold the grid's own mean and covariance, each cluster's
    /// covariance positive definite: over a mirror pair left open by planar sweeps (many
    /// clusters) and after the step that resolves it (few).
    @Test func theClustersHoldTheGridsMoments() {
        let planar = Self.grid { k in Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), 0) }
        let stepped = Self.grid { k in
            Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), -min(Double(k) / 30, 1))
        }
        var counts: [Int] = []
        for run in [planar, stepped] {
            var grid = run.grid
            var weights: [Double] = [], means: [Vector3] = [], covariances: [Matrix3] = []
            grid.summarise { logWeight, mean, covariance in
                weights.append(exp(logWeight)); means.append(mean); covariances.append(covariance)
            }
            counts.append(weights.count)
            #expect(abs(weights.reduce(0, +) - 1) < 1e-12)
            let definite = covariances.allSatisfy { $0.isPositiveDefinite }
            #expect(definite)
            var mean = Vector3.zero
            for (w, m) in zip(weights, means) { mean += w * m }
            var covariance = Matrix3.zero
            for i in weights.indices {
                let d = means[i] - mean
                covariance = covariance + weights[i] * (covariances[i] + Matrix3.outer(d, d))
            }
            let grid0 = run.moments
            #expect((mean - grid0.meanInWorld).length < 1e-9)
            let difference = covariance - grid0.covariance
            let largest = [difference.m00, difference.m01, difference.m02, difference.m11, difference.m12, difference.m22]
                .map { abs($0) }.max() ?? 0
            #expect(largest < 1e-9 * max(grid0.covariance.m00 + grid0.covariance.m11 + grid0.covariance.m22, 1), "\(largest) m²")
        }
        #expect(counts[0] > counts[1] && counts[0] <= 64, "\(counts) clusters")
    }

    /// With a persistence of zero (an infinite forgetting rate) the burst chain weighs each
    /// range as the independent density does: the same weights, distances and moments.
    @Test func theChainWithoutMemoryIsTheIndependentDensity() {
        let path: (Int) -> Vector3 = { k in Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), -min(Double(k) / 30, 1)) }
        let independent = Self.grid(path), chained = Self.grid(burstForgettingRate: 1e12, path)
        #expect(independent.grid.count == chained.grid.count)
        #expect((independent.moments.meanInWorld - chained.moments.meanInWorld).length < 1e-9)
        #expect(abs(independent.sigma - chained.sigma) < 1e-9)
        // And a chain with memory weighs a run of long ranges as one reflection: not the same.
        let remembering = Self.grid(burstForgettingRate: 1, path)
        #expect((remembering.moments.meanInWorld - independent.moments.meanInWorld).length > 0 || remembering.grid.count != independent.grid.count)
    }

    /// On simulated Channel Sounding runs (the simulator's own radio, the true device path),
    /// the grid's bearing σ first allows 10° at the update the exact posterior's does, within
    /// one range, in nearly every run.
    @Test func theGridAllowsTheAngleWhenTheExactPosteriorDoes() {
        let limit = Angle.radians(degrees: 10)
        var agree = 0, runs = 0
        for seed in UInt64(1)...6 {
            let scenario = ScenarioCatalogue.channelSoundingTag(seed: seed)
            let simulation = Simulator.simulate(scenario)
            let tag = scenario.objects[0]
            let v = scenario.channelSounding.rangeStandardDeviation * scenario.channelSounding.rangeStandardDeviation
            var grid = DirectionGrid(directionCount: 500, density: scenario.channelSounding.rangeErrorDensity, variance: v)
            var posterior: RangeOnlyPosterior?
            var poseIndex = -1
            var gridTime: Double?, posteriorTime: Double?
            for event in simulation.events {
                switch event {
                case .pose: poseIndex += 1
                case .uwb(_, let m):
                    guard poseIndex >= 0, let r = m.distance, r > 0, tag.velocity(at: m.timestamp).length == 0 else { continue }
                    let a = simulation.trueDevicePoses[poseIndex].positionInWorld
                    if posterior == nil {
                        posterior = RangeOnlyPosterior(firstRangeMetres: r, antennaInWorld: a, density: scenario.channelSounding.rangeErrorDensity,
                                                       variance: v, targetPointCount: 60_000)
                        grid.start(rangeMetres: r, antennaInWorld: a, at: m.timestamp)
                    } else {
                        posterior!.add(rangeMetres: r, antennaInWorld: a)
                        grid.add(rangeMetres: r, antennaInWorld: a, at: m.timestamp)
                    }
                    if posteriorTime == nil, posterior!.bearingStandardDeviation(from: a) <= limit { posteriorTime = m.timestamp }
                    if gridTime == nil, grid.bearingStandardDeviation(from: a) <= limit { gridTime = m.timestamp }
                default: break
                }
            }
            runs += 1
            switch (gridTime, posteriorTime) {
            case let (g?, p?) where abs(g - p) <= 0.5: agree += 1
            case (nil, nil): agree += 1
            default: break
            }
        }
        #expect(agree >= runs - 1, "\(agree) of \(runs) runs agree")
    }
}
