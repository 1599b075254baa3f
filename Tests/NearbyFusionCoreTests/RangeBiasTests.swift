import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// ``FusionOptions/Sensors/rangeBiasStandardDeviation``: a range bias considered in the covariance.
@Suite("a considered range bias")
struct RangeBiasTests {
    /// The watch's path at `t` seconds, world frame, metres: a circle of 0.6 m with a 0.3 m bob
    /// and a slow 0.4 m sway toward and away from the tag.
    static func watchPosition(at t: Double) -> Vector3 {
        Vector3(0.6 * sin(0.9 * t), 1.4 + 0.3 * sin(1.7 * t), 0.6 * cos(0.9 * t) - 0.4 * sin(0.5 * t))
    }

    /// A watch (distance only) circling and bobbing 4 m from a still tag for `seconds`, every
    /// range longer by `offset` metres (seeded noise); the engine's state at the end.
    static func acquire(offset: Double, seconds: Double = 6, options: FusionOptions) -> (snapshot: ObjectStateSnapshot, estimate: NearbyObjectEstimate) {
        var engine = FusionEngine(capabilities: .distanceOnly, options: options)
        let tag = engine.register(objectID: "tag")
        let truth = Vector3(1.0, 0.8, -4.0)
        var noise = NoiseStream(seed: 11, source: "range-bias-test")
        var estimate = NearbyObjectEstimate(timestamp: 0, objectID: "tag", distance: nil, direction: nil)
        var t = 0.0
        while t < seconds {
            let position = Self.watchPosition(at: t)
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            let r = (truth - position).length + noise.gaussian(standardDeviation: 0.05) + offset
            estimate = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
            t += 0.1
        }
        return (engine.snapshot(tag), estimate)
    }

    /// The largest absolute entry.
    static func largest(_ m: Matrix3) -> Double {
        [m.m00, m.m01, m.m02, m.m10, m.m11, m.m12, m.m20, m.m21, m.m22].map(abs).max()!
    }

    @Test func eachHypothesisKnowsHowFarACommonBiasMovesIt() throws {
        // `s = A⁻¹ Σ c π g / v` is the derivative of the batch solution with respect to a
        // common offset of the ranges: compared with the solutions for ranges 1 cm longer.
        var options = FusionOptions()
        options.sensors.rangeBiasStandardDeviation = 0.1
        let base = Self.acquire(offset: 0, options: options).snapshot
        let shifted = Self.acquire(offset: 0.01, options: options).snapshot
        try #require(base.hypothesisCount > 1)
        var compared = 0
        for h in base.hypotheses where h.logWeight > log(1e-3) {
            // The same tile in the other bank (its prior 1 cm further out, on the longer first range).
            guard let k = shifted.hypotheses.min(by: {
                ($0.priorMeanInWorld - h.priorMeanInWorld).length < ($1.priorMeanInWorld - h.priorMeanInWorld).length
            }), (k.priorMeanInWorld - h.priorMeanInWorld).length < 0.05 else { continue }
            let moved = (k.meanInWorld - h.meanInWorld) / 0.01
            #expect((moved - h.rangeBiasSensitivity).length < 0.1 * max(h.rangeBiasSensitivity.length, 0.1),
                    "moved \(moved) per metre, sensitivity \(h.rangeBiasSensitivity)")
            // Ranges longer move the solution away from the device, about a metre per metre
            // along the line of sight.
            #expect(h.rangeBiasSensitivity.length > 0.5 && h.rangeBiasSensitivity.length < 3)
            compared += 1
        }
        #expect(compared >= 1)
    }

    @Test func theBiasWidensTheCovarianceAlongItsSensitivityAndChangesNoEstimate() throws {
        var options = FusionOptions()
        let plain = Self.acquire(offset: 0, options: options).snapshot
        options.sensors.rangeBiasStandardDeviation = 0.2
        let considered = Self.acquire(offset: 0, options: options).snapshot
        try #require(plain.hypothesisCount == considered.hypothesisCount)
        for (p, c) in zip(plain.hypotheses, considered.hypotheses) {
            #expect(p.meanInWorld == c.meanInWorld && p.logWeight == c.logWeight)
            let s = c.rangeBiasSensitivity
            let added = c.covariance - p.covariance
            // σ_β² s sᵀ, exactly.
            let expected = 0.04 * Matrix3.outer(s, s)
            #expect(Self.largest(added - expected) < 1e-9 * max(Self.largest(expected), 1))
        }
        // Without the option nothing is added: the published outputs are those of a default engine.
        let again = Self.acquire(offset: 0, options: FusionOptions())
        #expect(again.snapshot.hypotheses == plain.hypotheses)
    }

    @Test func aTrackedObjectKeepsTheBiasShareItHadAtTheHandOver() throws {
        // Long enough to converge and hand over to the tracking filter.
        var options = FusionOptions()
        options.sensors.rangeBiasStandardDeviation = 0.1
        let considered = Self.acquire(offset: 0, seconds: 40, options: options)
        let plain = Self.acquire(offset: 0, seconds: 40, options: FusionOptions())
        try #require(considered.snapshot.kinematics != nil && plain.snapshot.kinematics != nil, "both tracked by the end")
        let wide = try #require(considered.snapshot.moments?.covariance), narrow = try #require(plain.snapshot.moments?.covariance)
        // Tracked for tens of seconds, the plain filter claims millimetres along the line of
        // sight; the considered bias keeps centimetres there.
        #expect(wide.trace > narrow.trace + 0.1 * 0.1 * 0.5, "trace \(wide.trace) vs \(narrow.trace)")
    }
}

/// `evaluate`'s range errors against the truth (``RangeErrorSummary``).
@Suite("range errors against the truth")
struct RangeErrorSummaryTests {
    @Test func biasSpreadAndHowLongErrorsLast() throws {
        // 10 Hz for 200 s: a 0.2 m bias plus AR(1) errors of stationary σ 0.07 m whose
        // correlation after 0.1 s is 0.9 (after 1 s, 0.9¹⁰ = 0.35); then independent ones.
        var noise = NoiseStream(seed: 3, source: "range-error-summary")
        var correlated: [(time: Double, error: Double)] = [], independent: [(time: Double, error: Double)] = []
        var e = 0.0
        for k in 0..<2000 {
            e = 0.9 * e + (1 - 0.81).squareRoot() * noise.gaussian(standardDeviation: 0.07)
            correlated.append((Double(k) * 0.1, 0.2 + e))
            independent.append((Double(k) * 0.1, 0.2 + noise.gaussian(standardDeviation: 0.07)))
        }
        let c = try #require(RangeErrorSummary(correlated)), i = try #require(RangeErrorSummary(independent))
        #expect(abs(c.medianMetres - 0.2) < 0.02 && abs(i.medianMetres - 0.2) < 0.01)
        #expect(abs(i.robustStandardDeviationMetres - 0.07) < 0.007 && abs(c.robustStandardDeviationMetres - 0.07) < 0.015)
        let rc = try #require(c.correlationAfterOneSecond), ri = try #require(i.correlationAfterOneSecond)
        #expect(abs(rc - 0.35) < 0.12, "correlated: \(rc)")
        #expect(abs(ri) < 0.08, "independent: \(ri)")
        #expect(RangeErrorSummary([]) == nil)
        #expect(RangeErrorSummary([(0, 0.1)])?.correlationAfterOneSecond == nil)
    }

    @Test func aSimulatedRadioIsUnbiasedAndIndependent() throws {
        let report = try RecordingEvaluation.evaluate(path: TestSupport.packageRoot.appendingPathComponent("Datasets/coached-sweep.jsonl").path)
        let e = try #require(report.objects.first?.rangeError)
        // The simulator's UWB: σ 6 cm, no bias, independent draws.
        #expect(abs(e.medianMetres) < 0.02 && e.robustStandardDeviationMetres > 0.03 && e.robustStandardDeviationMetres < 0.08)
        #expect(abs(try #require(e.correlationAfterOneSecond)) < 0.3)
        // Every range of the 101 updates (2 % of them dropped).
        #expect(e.count > 90 && e.count <= 101)
    }
}
