import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing

/// ``FusionOptions/rangeBiasStandardDeviation``: a range bias considered in the covariance.
@Suite("a considered range bias")
struct RangeBiasTests {
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
            let position = Vector3(0.6 * sin(0.9 * t), 1.4 + 0.3 * sin(1.7 * t), 0.6 * cos(0.9 * t) - 0.4 * sin(0.5 * t))
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
        options.rangeBiasStandardDeviation = 0.1
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
        options.rangeBiasStandardDeviation = 0.2
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
        options.rangeBiasStandardDeviation = 0.1
        let considered = Self.acquire(offset: 0, seconds: 40, options: options)
        let plain = Self.acquire(offset: 0, seconds: 40, options: FusionOptions())
        try #require(considered.snapshot.kinematics != nil && plain.snapshot.kinematics != nil, "both tracked by the end")
        let wide = try #require(considered.snapshot.moments?.covariance), narrow = try #require(plain.snapshot.moments?.covariance)
        // Tracked for tens of seconds, the plain filter claims millimetres along the line of
        // sight; the considered bias keeps centimetres there.
        #expect(wide.trace > narrow.trace + 0.1 * 0.1 * 0.5, "trace \(wide.trace) vs \(narrow.trace)")
    }
}
