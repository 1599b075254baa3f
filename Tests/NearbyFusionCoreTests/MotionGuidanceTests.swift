import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionSimulation
import TestHelpers
import Testing

@Suite("guidance: where to move, and how far")
struct MotionGuidanceTests {
    static func mixture(_ hypotheses: [(weight: Double, mean: Vector3, covariance: Matrix3)]) -> PositionMixture {
        var m = PositionMixture(capacity: 16)
        m.reset(hypotheses.map { PositionHypothesis(logWeight: log($0.weight), meanInWorld: $0.mean, covariance: $0.covariance) })
        return m
    }

    /// A distance-only object after a sweep along the world's x axis: two mirror images
    /// across the line travelled, 4 m in front and 4 m behind, each known to 5 cm. Ranges
    /// along x cannot tell them apart; a step forward or back can, and is advised — the
    /// shortest that separates them, at σ 0.06 m ranges well under a metre.
    @Test func aMirrorAcrossTheLineTravelledAsksForAStepOffIt() throws {
        let small = 0.0025 * Matrix3.identity
        let m = Self.mixture([(0.5, Vector3(2, 0, -4), small), (0.5, Vector3(2, 0, 4), small)])
        let g = try #require(MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: .identity,
                                                 rangeVariance: 0.06 * 0.06, rangesPerMetre: 10, threshold: Angle.radians(degrees: 3)))
        #expect(g.direction == .forward || g.direction == .back, "\(g)")
        #expect(g.distanceMetres <= 1, "\(g)")
        #expect(g.expectedBearingStandardDeviation <= Angle.radians(degrees: 3))
        // Along the line travelled the mirror stays: the expected spread is the whole 127°
        // (a squared chord of 2(1 − cos 127°) = 3.2 between the two, weighed ¼).
        let along = MotionGuidance.expectedUncertainty(mixture: m, start: .zero, step: Vector3(0.1, 0, 0), count: 10,
                                                       rangeVariance: 0.06 * 0.06, across: Vector3(1, 0, 0)).bearingVariance
        #expect(along > 0.25 * 3.2 - 1e-6, "\(along) rad²")
    }

    /// One hypothesis 5 m ahead whose position is uncertain across the line of sight (σ 1 m
    /// along x, 5 cm along it): a step toward it tells nothing across; a step to the side
    /// does. The advice is left or right; turned by 90° (the device facing +x) the same world
    /// motion is forward or back, and the displacement is given in the device's frame.
    @Test func aBearingUncertainAcrossTheLineOfSightAsksForASidewaysStep() throws {
        let covariance = Matrix3(1, 0, 0, 0, 0.0025, 0, 0, 0, 0.0025)
        let m = Self.mixture([(1, Vector3(0, 0, -5), covariance)])
        let facingAhead = try #require(MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: .identity,
                                                           rangeVariance: 0.01, rangesPerMetre: 10, threshold: Angle.radians(degrees: 3)))
        #expect(facingAhead.direction == .left || facingAhead.direction == .right, "\(facingAhead)")
        #expect(abs(facingAhead.displacementInDevice.x) > 0.99 * facingAhead.distanceMetres)
        // The device yawed 90° to the right (its −z, forward, is the world's +x).
        let turned = Quaternion(x: 0, y: -sin(Double.pi / 4), z: 0, w: cos(Double.pi / 4))
        #expect((turned.rotate(Vector3(0, 0, -1)) - Vector3(1, 0, 0)).length < 1e-9)
        let facingRight = try #require(MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: turned,
                                                           rangeVariance: 0.01, rangesPerMetre: 10, threshold: Angle.radians(degrees: 3)))
        #expect(facingRight.direction == .forward || facingRight.direction == .back, "\(facingRight)")
        #expect(abs(facingRight.displacementInDevice.z) > 0.99 * facingRight.distanceMetres)
    }

    /// A position already known to the threshold is advised nothing longer than needed: no
    /// motion reduces its bearing variance by a tenth beyond what it has, or the shortest step does.
    @Test func anEstimateAlreadyResolvedIsAdvisedNoLongMotion() {
        let m = Self.mixture([(1, Vector3(0, 0, -5), 0.0001 * Matrix3.identity)])
        let g = MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: .identity,
                                    rangeVariance: 0.01, rangesPerMetre: 10, threshold: Angle.radians(degrees: 3))
        #expect(g == nil || g!.distanceMetres == MotionGuidance.candidateLengths[0], "\(String(describing: g))")
    }

    /// Each direction's uncertainties, accumulated along one path, are the direct sums at every
    /// candidate length (five hypotheses of a seeded draw, a path 30° off the x axis).
    @Test func theAccumulatedScoresAreTheDirectSums() {
        var noise = NoiseStream(seed: 5, source: "guidance-scores")
        let m = Self.mixture((0..<5).map { _ in
            let mean = Vector3(noise.gaussian(standardDeviation: 3), noise.gaussian(standardDeviation: 0.5), -4 + noise.gaussian(standardDeviation: 2))
            let a = Vector3(noise.gaussian(standardDeviation: 0.3), noise.gaussian(standardDeviation: 0.3), noise.gaussian(standardDeviation: 0.3))
            return (0.2, mean, Matrix3.outer(a, a) + 0.01 * Matrix3.identity)
        })
        let unit = Vector3(cos(Double.pi / 6), 0, sin(Double.pi / 6))
        let start = Vector3(0.1, 1.2, 0.3)
        let across = Vector3(0.6, 0, 0.8)
        let directions = MotionGuidance.Directions(forwardInWorld: Vector3(0, 0, -1), halfAngle: 1, variance: 0.003)
        let accumulated = MotionGuidance.directionScores(mixture: m, start: start, unit: unit, rangeVariance: 0.02, directions: directions,
                                                         directionVariance: 0.003, across: across, minimumWeight: 0.01)
        for (l, length) in MotionGuidance.candidateLengths.enumerated() {
            let count = Int((length / 0.25).rounded())
            let direct = MotionGuidance.expectedUncertainty(mixture: m, start: start, step: 0.25 * unit, count: count, rangeVariance: 0.02,
                                                            directions: directions, directionVariance: 0.003, across: across)
            #expect(abs(accumulated[l].bearingVariance - direct.bearingVariance) <= 1e-9 * max(1, direct.bearingVariance), "\(length) m")
            #expect(abs(accumulated[l].horizontalPositionVariance - direct.horizontalPositionVariance)
                    <= 1e-9 * max(1, direct.horizontalPositionVariance), "\(length) m")
        }
    }

    /// A tag in the cone of a radio that measures directions: every direction's bearing
    /// tells across the line of sight, so half a metre is enough; with ranges alone (the same
    /// estimate, a distance-only radio) a longer step is needed.
    @Test func directionsInTheConeMakeTheShortestStepEnough() throws {
        let m = Self.mixture([(1, Vector3(0.5, 0, -4), Matrix3(0.25, 0, 0, 0, 0.01, 0, 0, 0, 0.01))])
        let directions = MotionGuidance.Directions(forwardInWorld: Vector3(0, 0, -1), halfAngle: Angle.radians(degrees: 55),
                                                   variance: pow(Angle.radians(degrees: 3), 2))
        let withDirections = try #require(MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: .identity,
                                                              rangeVariance: 0.0036, rangesPerMetre: 14, threshold: Angle.radians(degrees: 3),
                                                              positionLimit: 0.1, directions: directions))
        #expect(withDirections.distanceMetres <= 0.5, "\(withDirections)")
        let rangesAlone = try #require(MotionGuidance.best(mixture: m, antennaInWorld: .zero, worldFromDevice: .identity,
                                                           rangeVariance: 0.0036, rangesPerMetre: 14, threshold: Angle.radians(degrees: 3),
                                                           positionLimit: 0.1))
        #expect(rangesAlone.distanceMetres > withDirections.distanceMetres, "\(rangesAlone)")
    }

    /// In the engine: a distance-only watch gets guidance while it has no angle, none once the
    /// angle is published, and every step advised is at most 2 m; none when turned off.
    @Test func theEnginePublishesGuidanceUntilTheAngle() {
        var off = FusionOptions()
        off.coaching.guidanceInterval = 0
        #expect(ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 1), options: off).updates.allSatisfy { $0.estimate.guidance == nil })
        let run = ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 1))
        let withGuidance = run.updates.filter { $0.estimate.guidance != nil }
        #expect(!withGuidance.isEmpty)
        #expect(run.updates.allSatisfy { $0.estimate.horizontalAngle == nil || $0.estimate.guidance == nil })
        #expect(withGuidance.allSatisfy { $0.estimate.guidance!.distanceMetres <= 2 })
        #expect(run.updates.contains { $0.estimate.horizontalAngle != nil })
    }
}
