import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionRecording
import Testing
import TestHelpers

/// The vertical category and the coaching reasons from hand-built estimator states.
@Suite("Convergence analysis: vertical thresholds and reasons")
struct ConvergenceTests {
    static let device = Vector3(0, 1.4, 0)

    /// A movement history with an RMS extent of about 0.2 m.
    static var enoughMovement: MovementAccumulator {
        var m = MovementAccumulator()
        for k in 0..<200 { m.add(device + Vector3(0.3 * sin(Double(k) * 0.2), 0.25 * cos(Double(k) * 0.13), 0)) }
        return m
    }

    static func assess(_ hypotheses: [(Vector3, Double, Double)], movement: MovementAccumulator = enoughMovement,
                       options: FusionOptions = FusionOptions()) -> ConvergenceAssessment {
        var mixture = PositionMixture(capacity: 8)
        mixture.reset(hypotheses.map { PositionHypothesis(logWeight: log($0.2), meanInWorld: $0.0, covariance: .scaledIdentity($0.1 * $0.1)) })
        return ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: device, movement: movement,
                                          previous: (false, false), options: options)
    }

    @Test(arguments: [
        (1.0, VerticalDirectionEstimate.same), (-1.5, .same), (1.9, .unknown), (2.1, .unknown),
        (2.6, .above), (4.0, .above), (-2.6, .below), (-3.5, .below),
    ])
    func verticalCategoryUsesTheLevelToleranceAndNinetyFivePercent(heightDifference: Double, expected: VerticalDirectionEstimate) {
        // σ = 0.1 m: 1.9 m is within 2 m but not at 95 % (P(|Δy| ≤ 2) ≈ 84 %), 2.1 m is outside
        // it but not at 95 % either; 2.6 m is above at > 99 %.
        let a = Self.assess([(Vector3(0.5, Self.device.y + heightDifference, -4), 0.1, 1)])
        #expect(a.verticalCategory == expected)
    }

    @Test func aChannelSoundingAngleIsResolvedByItsBearingBeforeThePositionAcross() {
        // 4 m ahead, σ 0.5 m across the line of sight: a bearing σ of 0.5/4 rad = 7.2°.
        var mixture = PositionMixture(capacity: 2)
        mixture.reset(meanInWorld: Vector3(0, Self.device.y, -4), covariance: Matrix3.diagonal(Vector3(0.25, 0.01, 0.01)))
        func assess(_ options: FusionOptions, previousBearing: Bool = false) -> ConvergenceAssessment {
            ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                       previous: (false, false), previousBearing: previousBearing, options: options)
        }
        let channelSounding = FusionOptions().forRanging(.bluetoothChannelSounding)
        #expect(channelSounding.coaching.publishesAngleByBearingAlone && !FusionOptions().coaching.publishesAngleByBearingAlone)
        let cs = assess(channelSounding)
        #expect(abs(Angle.degrees(radians: cs.horizontalAngleStandardDeviation) - 7.2) < 0.1)
        // Within its 10°, while 0.5 m across exceeds its 0.4 m (10 % of 4 m): the horizontal
        // sweep is still asked for.
        #expect(cs.bearingResolved && !cs.horizontalResolved && cs.reasons.contains(.insufficientHorizontalSweep))
        // UWB's 3°: neither.
        let uwb = assess(FusionOptions())
        #expect(!uwb.bearingResolved && !uwb.horizontalResolved)
        // Hysteresis: 12° σ (0.84 m across) keeps a resolved bearing (10° × 1.5), not a new one.
        mixture.reset(meanInWorld: Vector3(0, Self.device.y, -4), covariance: Matrix3.diagonal(Vector3(0.84 * 0.84, 0.01, 0.01)))
        #expect(!assess(channelSounding).bearingResolved && assess(channelSounding, previousBearing: true).bearingResolved)
        // No angle before the device has moved.
        let still = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: MovementAccumulator(),
                                               previous: (false, false), previousBearing: true, options: channelSounding)
        #expect(!still.bearingResolved)
    }

    @Test func anObjectThatMayBeMovingIsHeldToThresholdsInProportion() {
        // 4 m ahead, σ 0.16 m across the line of sight (bearing σ 2.3°, within 3°): beyond a
        // still object's 12 cm, within a moving one's 25 cm.
        var mixture = PositionMixture(capacity: 2)
        mixture.reset(meanInWorld: Vector3(0, Self.device.y, -4), covariance: Matrix3.diagonal(Vector3(0.16 * 0.16, 0.0025, 0.0025)))
        func horizontal(movingShare w: Double) -> Bool {
            ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                       movingShare: w, previous: (false, false), options: FusionOptions()).horizontalResolved
        }
        // T = √((1 − w) 0.12² + w 0.25²): 0.12 m at w = 0, 0.155 m at w = 0.2, 0.196 m at 0.5.
        #expect(!horizontal(movingShare: 0) && !horizontal(movingShare: 0.2))
        #expect(horizontal(movingShare: 0.5) && horizontal(movingShare: 1))
        // Out-of-range shares are clamped: below 0 is a still object, above 1 a moving one.
        #expect(!horizontal(movingShare: -3) && horizontal(movingShare: 7))
    }

    @Test func anEstablishedCategoryIsHeldAcrossTheToleranceWhileTheHeightIsWellKnown() {
        var mixture = PositionMixture(capacity: 2)
        func assess(heightDifference dy: Double, sigma: Double, previous: VerticalDirectionEstimate) -> ConvergenceAssessment {
            mixture.reset(meanInWorld: Vector3(0.5, Self.device.y + dy, -4), covariance: .scaledIdentity(sigma * sigma))
            return ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                              previous: (true, true), previousCategory: previous, options: FusionOptions())
        }
        // 2.05 m up with σ 0.1 m: P(same) ≈ 0.31, P(above) ≈ 0.69, neither at 95 %.
        #expect(assess(heightDifference: 2.05, sigma: 0.1, previous: .unknown).verticalCategory == .unknown)
        let held = assess(heightDifference: 2.05, sigma: 0.1, previous: .same)
        #expect(held.verticalCategory == .same)
        #expect(held.verticalResolved && held.reasons.isEmpty)
        // Another category established replaces it; one below 5 % is dropped.
        #expect(assess(heightDifference: 2.3, sigma: 0.1, previous: .same).verticalCategory == .above)
        #expect(assess(heightDifference: 1.7, sigma: 0.1, previous: .above).verticalCategory == .same)
        // A height known only to σ 0.6 m (more than τ/4) is not held: the category is open.
        #expect(assess(heightDifference: 2.05, sigma: 0.6, previous: .same).verticalCategory == .unknown)
    }

    @Test func levelToleranceIsConfigurable() {
        var options = FusionOptions()
        options.coaching.levelTolerance = 0.5
        let a = Self.assess([(Vector3(0.5, Self.device.y + 1.0, -4), 0.1, 1)], options: options)
        #expect(a.verticalCategory == .above)
    }

    @Test func mirroredHypothesesAreAboveOrBelowAndAskForAVerticalSweep() {
        let a = Self.assess([(Vector3(0.5, Self.device.y + 3, -4), 0.05, 0.5), (Vector3(0.5, Self.device.y - 3, -4), 0.05, 0.5)])
        #expect(a.verticalCategory == .aboveOrBelow)
        #expect(a.reasons == [.insufficientVerticalSweep])
        #expect(a.horizontalResolved)
        #expect(!a.verticalResolved)
    }

    @Test func aWellDeterminedPositionHasNoReasons() {
        let a = Self.assess([(Vector3(0.5, 1.2, -4), 0.05, 1)])
        #expect(a.reasons.isEmpty)
        #expect(a.horizontalResolved && a.verticalResolved)
        #expect(a.horizontalAngleStandardDeviation < 0.02)
    }

    @Test func frontBackAmbiguityAsksForAHorizontalSweep() {
        let a = Self.assess([(Vector3(0.5, 1.4, -4), 0.05, 0.5), (Vector3(0.5, 1.4, 4), 0.05, 0.5)])
        #expect(a.reasons.contains(.insufficientHorizontalSweep))
        #expect(!a.horizontalResolved)
    }

    @Test func wideAcrossTheLineOfSightAsksForAHorizontalSweepOnly() {
        var mixture = PositionMixture(capacity: 2)
        // Object straight ahead (−Z): across the line of sight is X.
        mixture.reset(meanInWorld: Vector3(0, 1.4, -4), covariance: Matrix3(diagonal: Vector3(0.5 * 0.5, 0.05 * 0.05, 0.02 * 0.02)))
        let a = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                           previous: (false, false), options: FusionOptions())
        #expect(a.reasons == [.insufficientHorizontalSweep])
        #expect(a.principalAxes != nil)
    }

    @Test func stillDeviceIsAskedToMoveAndNothingElse() {
        var still = MovementAccumulator()
        for k in 0..<100 { still.add(Self.device + Vector3(0.002 * sin(Double(k)), 0, 0)) }
        let a = Self.assess([(Vector3(0.5, 1.4, -4), 0.5, 1)], movement: still)
        #expect(a.reasons == [.insufficientMovement])
        #expect(!a.horizontalResolved)
    }

    @Test func hysteresisKeepsAResolvedAxisResolved() {
        var mixture = PositionMixture(capacity: 2)
        mixture.reset(meanInWorld: Vector3(0, 1.4, -4), covariance: Matrix3(diagonal: Vector3(0.14 * 0.14, 0.05 * 0.05, 0.02 * 0.02)))
        let fresh = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                               previous: (false, false), options: FusionOptions())
        let kept = ConvergenceAnalysis.assess(mixture: mixture, antennaInWorld: Self.device, movement: Self.enoughMovement,
                                              previous: (true, true), options: FusionOptions())
        #expect(!fresh.horizontalResolved)
        #expect(kept.horizontalResolved)
    }
}
