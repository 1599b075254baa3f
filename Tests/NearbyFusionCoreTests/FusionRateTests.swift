import Foundation
@_spi(Internals) import NearbyFusion
import NearbyFusionSimulation
import Testing
import TestHelpers

/// ``FusionOptions/Sensors/minimumFusionInterval``: a radio faster than the engine's fusion rate
/// repeats its errors; the engine does not count them as new information.
@Suite("a fast radio")
struct FusionRateTests {
    /// A watch (distance only, poses at 100 Hz) on `RangeBiasTests`' path near a still tag for
    /// 12 s; its ranges, every `every`-th of a 100 Hz stream, carry a slowly varying error
    /// (first-order Gauss–Markov, τ 0.5 s, σ 5 cm; seeded) plus 1 cm of white jitter, as the
    /// real LIAS ranges do. The engine's position covariance and NEES at the end.
    static func run(every: Int, seed: UInt64 = 5, options: FusionOptions) -> (trace: Double, nees: Double) {
        var engine = FusionEngine(capabilities: .distanceOnly, options: options)
        let tag = engine.register(objectID: "tag")
        let truth = Vector3(1.0, 0.8, -3.5)
        var noise = NoiseStream(seed: seed, source: "fusion-rate-test")
        let phi = exp(-0.01 / 0.5), sigma = 0.05
        var slow = noise.gaussian(standardDeviation: sigma)
        for k in 0..<1200 {
            let t = Double(k) * 0.01
            let position = RangeBiasTests.watchPosition(at: t)
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            slow = phi * slow + noise.gaussian(standardDeviation: sigma * (1 - phi * phi).squareRoot())
            let jitter = noise.gaussian(standardDeviation: 0.01)
            guard k % every == 0 else { continue }
            let r = (truth - position).length + slow + jitter
            _ = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
        }
        let moments = engine.snapshot(tag).moments!
        let nees = moments.covariance.inverse!.quadraticForm(moments.meanInWorld - truth)
        return (moments.covariance.trace, nees)
    }

    /// The same session at 10 Hz and at 100 Hz ends with the same uncertainty; fusing every
    /// 100 Hz range (interval 0, the engine before) claimed several times less while the
    /// errors did not shrink with it: over eight seeds its mean NEES is far above the
    /// 10 Hz one's.
    @Test func aHundredHertzRadioIsNotTenTimesMoreCertain() {
        var everyUpdate = FusionOptions()
        everyUpdate.sensors.minimumFusionInterval = 0
        var nees = (slow: 0.0, fast: 0.0, counted: 0.0)
        for seed: UInt64 in 1...8 {
            let slow = Self.run(every: 10, seed: seed, options: FusionOptions())
            let fast = Self.run(every: 1, seed: seed, options: FusionOptions())
            let counted = Self.run(every: 1, seed: seed, options: everyUpdate)
            #expect(fast.trace / slow.trace > 0.6 && fast.trace / slow.trace < 1.6, "seed \(seed): \(fast.trace) vs \(slow.trace) m²")
            #expect(counted.trace / slow.trace < 0.35, "seed \(seed): \(counted.trace) vs \(slow.trace) m²")
            nees.slow += slow.nees / 8
            nees.fast += fast.nees / 8
            nees.counted += counted.nees / 8
        }
        #expect(nees.fast < 1.5 * nees.slow)
        #expect(nees.counted > 2 * nees.slow)
    }
}

/// A ranging stack that passes the last range on again (8 % of the ranges of real phone-to-
/// phone logs): the repeat is no new measurement and is not fused, while a coarse radio's
/// honest repeats are.
@Suite("stale repeats")
struct StaleRepeatTests {
    /// The watch session of `FusionRateTests` at 10 Hz (σ 5 cm). `repeats`: every other range
    /// replaced by a repeat of the one before, `offset` added to it (0: a stale repeat to the
    /// bit); otherwise those updates are left out. `resolution`: the fresh ranges rounded to
    /// it, metres (0: not rounded); `nudge` is added to a rounded range equal to the last one.
    /// The final position covariance's trace and mean, and how many ranges equalled the last.
    static func run(repeats: Bool, offset: Double = 0, resolution: Double = 0, nudge: Double = 0,
                    seed: UInt64 = 3) -> (trace: Double, mean: Vector3, equal: Int) {
        var engine = FusionEngine(capabilities: .distanceOnly, options: FusionOptions())
        let tag = engine.register(objectID: "tag")
        let truth = Vector3(1.0, 0.8, -3.5)
        var noise = NoiseStream(seed: seed, source: "stale-repeat-test")
        var last = 0.0, equal = 0
        for k in 0..<1200 {
            let t = Double(k) * 0.01
            let position = RangeBiasTests.watchPosition(at: t)
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            guard k % 10 == 0 else { continue }
            var fresh = (truth - position).length + noise.gaussian(standardDeviation: 0.05)
            if resolution > 0 { fresh = (fresh / resolution).rounded() * resolution }
            if k % 20 == 10, !repeats, resolution == 0 { continue }
            let r = k % 20 == 10 && repeats ? last + offset : (fresh == last ? fresh + nudge : fresh)
            if r == last { equal += 1 }
            last = r
            _ = engine.ingest(UWBMeasurement(timestamp: t + 0.001, distance: r, directionInDevice: nil), for: tag)
        }
        let moments = engine.snapshot(tag).moments!
        return (moments.covariance.trace, moments.meanInWorld, equal)
    }

    @Test func aStaleRepeatIsNotFused() {
        // Repeats are called stale once they come more often than chance (from the third
        // here on): the session ends about as certain as the one without them, not more.
        let fresh = Self.run(repeats: false)
        let stale = Self.run(repeats: true)
        #expect(abs(stale.trace / fresh.trace - 1) < 0.05, "\(stale.trace) vs \(fresh.trace) m²")
        // The same values 0.1 mm apart are measurements, and fused: the claimed uncertainty
        // shrinks as if they were independent (what a repeat to the bit did before).
        let counted = Self.run(repeats: true, offset: 1e-4)
        #expect(counted.trace < 0.8 * fresh.trace, "\(counted.trace) vs \(fresh.trace) m²")
    }

    @Test func aRadioThatReportsCentimetresRepeatsItselfHonestly() {
        #expect(RangeResolution.decimalDigits(of: 3.98) == 2)
        #expect(RangeResolution.decimalDigits(of: Double(Float(3.98))) == 2)
        #expect(RangeResolution.decimalDigits(of: 12.843) == 3)
        #expect(RangeResolution.decimalDigits(of: 4.7828) == 4)
        #expect(RangeResolution.decimalDigits(of: 4.123456) == 6)
        #expect(RangeResolution.decimalDigits(of: 4.1234567891) == 7)
        // Every range of a 2 cm radio, its honest repeats included, against the same ranges
        // with each repeat nudged by a micrometre (no longer a repeat): the same session.
        let honest = Self.run(repeats: false, resolution: 0.02)
        let nudged = Self.run(repeats: false, resolution: 0.02, nudge: 1e-6)
        #expect(honest.equal >= 3, "\(honest.equal) honest repeats")
        #expect(abs(honest.trace / nudged.trace - 1) < 0.005, "\(honest.trace) vs \(nudged.trace) m²")
    }
}
