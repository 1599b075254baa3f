import Foundation
import NearbyFusion
import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// The simulator: determinism, independent noise streams, and sensing statistics that
/// match the configured model.
@Suite("Simulator")
struct SimulatorTests {
    /// A still device with noiseless VIO, so the sensed pose is the true pose and every
    /// range residual is the radio's own error.
    static func stillScenario(seconds: Double = 120, seed: UInt64 = 5, object: Vector3 = Vector3(0.8, 1.2, -4)) -> SimulationScenario {
        var s = SimulationScenario(name: "still", trajectory: DeviceTrajectory(segments: [.still(duration: seconds)]),
                                   objects: [SimulatedObject(id: "tag", positionInWorld: object)], seed: seed)
        s.tremorAmplitude = 0
        s.vio.positionNoise = 0
        s.vio.orientationNoise = 0
        s.vio.driftFraction = 0
        return s
    }

    static func uwbUpdates(_ events: [RecordingEvent]) -> [(DevicePose, UWBMeasurement)] {
        var pose: DevicePose?
        var out: [(DevicePose, UWBMeasurement)] = []
        for e in events {
            if case .pose(let p) = e { pose = p }
            if case .uwb(_, let m) = e, let p = pose { out.append((p, m)) }
        }
        return out
    }

    static func standardDeviation(_ x: [Double]) -> Double {
        let mean = x.reduce(0, +) / Double(x.count)
        return (x.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(x.count - 1)).squareRoot()
    }

    @Test func oneSeedGivesOneByteStreamAndAnotherSeedAnother() {
        let a = Simulator.recordingText(for: ScenarioCatalogue.coached(seed: 42))
        #expect(a == Simulator.recordingText(for: ScenarioCatalogue.coached(seed: 42)))
        #expect(a != Simulator.recordingText(for: ScenarioCatalogue.coached(seed: 43)))
    }

    @Test func eachNoiseSourceHasItsOwnStream() {
        // Turning NLOS on changes ranges but not a single pose, direction or dropout.
        var clean = ScenarioCatalogue.coached(seed: 7)
        clean.radio.nlosProbability = 0
        var biased = clean
        biased.radio.nlosProbability = 0.3
        let a = Simulator.events(for: clean), b = Simulator.events(for: biased)
        #expect(a.count == b.count)
        var rangesDiffer = 0
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.uwb(_, let m), .uwb(_, let n)):
                #expect(m.timestamp == n.timestamp && m.directionInDevice == n.directionInDevice)
                if m.distance != n.distance { rangesDiffer += 1 }
            default:
                #expect(x == y)
            }
        }
        #expect(rangesDiffer > 10)
    }

    @Test func rangeNoiseMatchesTheConfiguredStandardDeviation() throws {
        let s = Self.stillScenario()
        let residuals = Self.uwbUpdates(Simulator.events(for: s)).compactMap { pose, m in
            m.distance.map { $0 - (s.objects[0].positionInWorld - pose.positionInWorld).length }
        }
        #expect(residuals.count > 1000)
        // σ̂ of n samples has a relative standard error of 1/√(2n) ≈ 2 %; allow 8 % (and the 0.1 mm rounding).
        #expect(abs(Self.standardDeviation(residuals) / 0.06 - 1) < 0.08)
        #expect(abs(residuals.reduce(0, +) / Double(residuals.count)) < 0.006)
    }

    @Test func nlosRateAndBiasMatchTheModel() {
        var s = Self.stillScenario(seconds: 200)
        s.radio.nlosProbability = 0.2
        let residuals = Self.uwbUpdates(Simulator.events(for: s)).compactMap { pose, m in
            m.distance.map { $0 - (s.objects[0].positionInWorld - pose.positionInWorld).length }
        }
        // NLOS adds 0.5–2 m; with σ 6 cm, residuals above 0.35 m are NLOS.
        let rate = Double(residuals.filter { $0 > 0.35 }.count) / Double(residuals.count)
        #expect(abs(rate - 0.2) < 0.03)
        #expect(residuals.filter { $0 > 2.3 }.isEmpty)
    }

    @Test func nlosBurstsLastTheConfiguredLengthOnAverage() {
        var s = Self.stillScenario(seconds: 400)
        s.radio.nlosProbability = 0.2
        s.radio.nlosMeanBurstLength = 8
        s.radio.dropoutProbability = 0
        let flags = Self.uwbUpdates(Simulator.events(for: s)).compactMap { pose, m in
            m.distance.map { $0 - (s.objects[0].positionInWorld - pose.positionInWorld).length > 0.35 }
        }
        var bursts: [Int] = [], run = 0
        for f in flags { if f { run += 1 } else if run > 0 { bursts.append(run); run = 0 } }
        let meanLength = Double(bursts.reduce(0, +)) / Double(bursts.count)
        let rate = Double(flags.filter { $0 }.count) / Double(flags.count)
        #expect(abs(meanLength - 8) < 2)
        #expect(abs(rate - 0.2) < 0.06)
    }

    // MARK: Radio profiles

    /// The Channel Sounding ranges of a still tag `distance` metres ahead under `model`, over
    /// `seconds`: the residuals of the ranges that came, and how many procedures failed.
    static func channelSoundingResiduals(_ model: ChannelSoundingModel, distance: Double, seconds: Double = 600,
                                         seed: UInt64 = 9) -> (residuals: [Double], failed: Int, procedures: Int) {
        var s = stillScenario(seconds: seconds, seed: seed, object: Vector3(0, 1.4, -distance))
        s.objects[0].ranging = .bluetoothChannelSounding
        s.channelSounding = model
        var residuals: [Double] = [], failed = 0, procedures = 0
        for (pose, m) in uwbUpdates(Simulator.events(for: s)) {
            procedures += 1
            guard let r = m.distance else { failed += 1; continue }
            residuals.append(r - (s.objects[0].positionInWorld - pose.positionInWorld).length)
        }
        return (residuals, failed, procedures)
    }

    static func median(_ x: [Double]) -> Double { x.sorted()[x.count / 2] }
    /// The scaled median absolute deviation (σ of the core).
    static func robustSigma(_ x: [Double]) -> Double { let m = median(x); return 1.4826 * median(x.map { abs($0 - m) }) }
    static func lagOneCorrelation(_ x: [Double]) -> Double {
        let mean = x.reduce(0, +) / Double(x.count)
        let c0 = x.map { ($0 - mean) * ($0 - mean) }.reduce(0, +)
        let c1 = zip(x, x.dropFirst()).map { ($0 - mean) * ($1 - mean) }.reduce(0, +)
        return c1 / c0
    }

    /// The inverse-FFT profile at 5 m and 45 m: its core σ, failures rising as the signal
    /// falls, its short outliers, its scale error and its correlation, as documented.
    @Test func inverseFFTProfileHasItsCoreFailuresShortOutliersAndScaleError() {
        var model = ChannelSoundingModel.inverseFFT
        model.shadowingStandardDeviation = 0   // the figures at exactly 5 m and 45 m
        let near = Self.channelSoundingResiduals(model, distance: 5)
        let far = Self.channelSoundingResiduals(model, distance: 45, seconds: 1500)
        // Failures: 9 % strong, 85 % weak.
        #expect(abs(Double(near.failed) / Double(near.procedures) - 0.09) < 0.03)
        #expect(abs(Double(far.failed) / Double(far.procedures) - 0.85) < 0.04)
        // The core: σ ≈ 0.10 m at 5 m, and centred on the −2.7 % scale error.
        #expect(abs(Self.robustSigma(near.residuals) - 0.10) < 0.02)
        #expect(abs(Self.median(far.residuals) - (-0.027 * 45)) < 0.1)
        // Short outliers: beyond −3σ far more often than beyond +3σ.
        let sigma = Self.robustSigma(near.residuals), centre = Self.median(near.residuals)
        let short = near.residuals.filter { $0 - centre < -3 * sigma }.count, long = near.residuals.filter { $0 - centre > 3 * sigma }.count
        #expect(Double(short) / Double(near.residuals.count) > 0.04)
        #expect(short > 2 * long)
        // Consecutive errors are correlated (0.2 on the core).
        let core = near.residuals.filter { abs($0 - centre) < 3 * sigma }
        #expect(abs(Self.lagOneCorrelation(core) - 0.2) < 0.1)
    }

    /// The density a Channel Sounding model states for its range error is the one it draws
    /// from: a unit mass, the mean its short outliers and multipath give, and the share of
    /// ranges beyond 3σ short that a long log of a still tag shows; its σ is the signal's.
    @Test func channelSoundingErrorDensityIsWhatTheModelDraws() {
        var model = ChannelSoundingModel.inverseFFT
        model.shadowingStandardDeviation = 0
        let sigma = model.rangeStandardDeviation(atDistance: 5, shadowing: 0)
        #expect(abs(sigma - 0.10) < 1e-3)
        #expect(abs(model.rangeStandardDeviation(atDistance: 45, shadowing: 0) - 0.27) < 1e-3)
        #expect(abs(ChannelSoundingModel.roundTripTime.rangeStandardDeviation(atDistance: 45, shadowing: 0) - 4.6) < 1e-2)
        // ∫ p, ∫ e p and P(e < −3σ) by the midpoint rule over [−25σ, 25σ].
        let step = sigma / 200
        var mass = 0.0, mean = 0.0, beyond = 0.0
        for k in 0..<20_000 {
            let e = -25 * sigma + (Double(k) + 0.5) * step
            let p = model.rangeErrorDensity(e, standardDeviation: sigma) * step
            mass += p
            mean += e * p
            if e < -3 * sigma { beyond += p }
        }
        #expect(abs(mass - 1) < 2e-3, "\(mass)")
        // Short reads 3σ(20/3)ᵘ (mean 3σ(20/3 − 1)/ln(20/3)) in 6.5 %, less those also long;
        // multipath 0.2–1.5 m (mean 0.85 m) in 2 %.
        let shortMean = 3 * sigma * (20.0 / 3 - 1) / log(20.0 / 3)
        #expect(abs(mean - (-0.065 * shortMean + 0.02 * 0.85)) < 2e-3, "\(mean)")
        let drawn = Self.channelSoundingResiduals(model, distance: 5, seconds: 1200).residuals.map { $0 + 0.027 * 5 }
        let drawnBeyond = Double(drawn.filter { $0 < -3 * sigma }.count) / Double(drawn.count)
        #expect(abs(drawnBeyond - beyond) < 0.02, "drawn \(drawnBeyond), density \(beyond)")
        #expect(beyond > 0.05)
        // The run keeps the shadowing it drew for a Channel Sounding tag whose figures follow
        // the signal, and none for a UWB one.
        var scenario = Self.stillScenario(seconds: 5, object: Vector3(0, 1.4, -20))
        #expect(Simulator.simulate(scenario).channelSoundingShadowing.isEmpty)
        scenario.objects[0].ranging = .bluetoothChannelSounding
        scenario.channelSounding = .roundTripTime
        let shadowing = Simulator.simulate(scenario).channelSoundingShadowing
        #expect(shadowing.keys.sorted() == ["tag"] && shadowing["tag"]!.isFinite && shadowing["tag"] != 0)
    }

    /// The phase-slope profile reads long by about 0.9 m at 5 m and 5 m at 35 m; the
    /// round-trip-time one is symmetric with a σ the signal sets, 1.6 m strong, wider weak.
    @Test func phaseSlopeReadsLongAndRoundTripTimeIsWideAndSymmetric() {
        var phase = ChannelSoundingModel.phaseSlope, rtt = ChannelSoundingModel.roundTripTime
        phase.shadowingStandardDeviation = 0
        rtt.shadowingStandardDeviation = 0
        let phaseNear = Self.channelSoundingResiduals(phase, distance: 5)
        let phaseFar = Self.channelSoundingResiduals(phase, distance: 35, seconds: 1200)
        #expect(abs(Self.median(phaseNear.residuals) - 0.9) < 0.15)
        #expect(abs(Self.median(phaseFar.residuals) - 5.0) < 0.5)
        let rttNear = Self.channelSoundingResiduals(rtt, distance: 5)
        let rttFar = Self.channelSoundingResiduals(rtt, distance: 45)
        #expect(abs(Self.median(rttNear.residuals)) < 0.3)
        #expect(abs(Self.standardDeviation(rttNear.residuals) - 1.6) < 0.25)
        #expect(Self.standardDeviation(rttFar.residuals) > 3.5)
        #expect(Double(rttFar.failed) / Double(rttFar.procedures) < 0.03)
    }

    /// Phone-to-phone UWB: a bias, errors correlated over seconds, stale repeats; and a
    /// profile whose figures are zero changes no range of the default radio.
    @Test func walkingPeerProfileHasBiasCorrelationAndStaleRepeats() {
        var s = Self.stillScenario(seconds: 600, object: Vector3(0, 1.4, -12))
        s.radio = .walkingPeerPhoneToPhone()
        s.radio.dropoutProbability = 0
        let updates = Self.uwbUpdates(Simulator.events(for: s))
        let residuals = updates.compactMap { pose, m in m.distance.map { $0 - (s.objects[0].positionInWorld - pose.positionInWorld).length } }
        #expect(updates.allSatisfy { $0.1.directionInDevice == nil })
        #expect(abs(Self.median(residuals) - 0.06) < 0.04)
        // Stale repeats: the same range twice in a row (a still device, 0.1 mm rounding: a fresh
        // range repeats the last by chance about 0.1 % of the time).
        let ranges = updates.compactMap { $0.1.distance }
        let repeats = zip(ranges, ranges.dropFirst()).filter { $0 == $1 }.count
        #expect(abs(Double(repeats) / Double(ranges.count - 1) - 0.08) < 0.02)
        // Correlated over seconds: at 10 Hz, φ = e^{−0.1/2.5} ≈ 0.96 per update (on the core: the
        // positive tail is drawn afresh each time).
        let centre = Self.median(residuals)
        #expect(Self.lagOneCorrelation(residuals.filter { abs($0 - centre) < 0.3 }) > 0.75)
        var plain = Self.stillScenario(seconds: 30)
        let before = Simulator.recordingText(for: plain)
        plain.radio.rangeBias = 0
        plain.radio.staleRepeatProbability = 0
        plain.radio.rangeErrorCorrelationSeconds = 0
        #expect(Simulator.recordingText(for: plain) == before)
    }

    /// The part of each range that the radio's outliers put there is recorded beside the
    /// recording, one value per `uwb` event: taken out, a walking peer's ranges keep only their
    /// bias and correlated noise (no long tail), each non-line-of-sight excess is one the profile
    /// draws, and a stale repeat carries the part of the range it repeats; an inverse-FFT radio's
    /// short reads come out as negative parts, its multipath as positive ones, and its ranges
    /// without them have no tail.
    @Test func theOutlierPartOfEachRangeIsRecordedBesideTheRecording() {
        var s = Self.stillScenario(seconds: 300, object: Vector3(0, 1.4, -12))
        s.radio = .walkingPeerPhoneToPhone()
        let output = Simulator.simulate(s)
        let updates = Self.uwbUpdates(output.events)
        #expect(output.rangeOutlierMetres.count == updates.count && !updates.isEmpty)
        var withOutlier = 0, ranged = 0, previous: (range: Double, outlier: Double)?
        for ((pose, m), outlier) in zip(updates, output.rangeOutlierMetres) {
            guard let r = m.distance else { #expect(outlier == 0); previous = nil; continue }
            ranged += 1
            let truth = (s.objects[0].positionInWorld - pose.positionInWorld).length
            // Without its outlier part: the +0.06 m bias and σ 0.11 m noise, nothing beyond 6σ.
            #expect(abs(r - outlier - truth - 0.06) < 0.66, "range \(r) m, outlier part \(outlier) m, truth \(truth) m")
            if outlier != 0 {
                withOutlier += 1
                #expect(outlier >= 0.2 - 1e-9 && outlier <= 0.56 + 1e-9)
            }
            if let previous, previous.range == r { #expect(previous.outlier == outlier) }
            previous = (r, outlier)
        }
        // 4 % non-line-of-sight, and stale repeats of them.
        #expect(abs(Double(withOutlier) / Double(ranged) - 0.043) < 0.015, "\(withOutlier) of \(ranged)")

        var model = ChannelSoundingModel.inverseFFT
        model.shadowingStandardDeviation = 0
        var cs = Self.stillScenario(seconds: 600, seed: 9, object: Vector3(0, 1.4, -5))
        cs.objects[0].ranging = .bluetoothChannelSounding
        cs.channelSounding = model
        let csOutput = Simulator.simulate(cs)
        var raw: [Double] = [], clean: [Double] = [], short = 0
        for ((pose, m), outlier) in zip(Self.uwbUpdates(csOutput.events), csOutput.rangeOutlierMetres) {
            guard let r = m.distance else { #expect(outlier == 0); continue }
            let truth = (cs.objects[0].positionInWorld - pose.positionInWorld).length
            raw.append(r - truth)
            clean.append(r - outlier - truth)
            // A short read (3σ to 20σ short, σ 0.10 m here) or a multipath excess.
            if outlier < 0 { short += 1; #expect(outlier <= -0.3 + 1e-9 && outlier >= -2 - 1e-9) }
            if outlier > 0 { #expect(model.multipathExcessRange.contains(outlier)) }
        }
        #expect(Double(short) / Double(raw.count) > 0.04)
        let sigma = Self.robustSigma(clean), centre = Self.median(clean)
        #expect(clean.filter { abs($0 - centre) > 4.5 * sigma }.isEmpty)
        #expect(Double(raw.filter { $0 - centre < -4 * sigma }.count) / Double(raw.count) > 0.03)
    }

    @Test func directionIsAvailableOnlyInsideTheFieldOfViewAtTheConfiguredRate() {
        let inside = Self.uwbUpdates(Simulator.events(for: Self.stillScenario(object: Vector3(1.5, 1.6, -4))))
        let availability = Double(inside.filter { $0.1.directionInDevice != nil }.count) / Double(inside.count)
        #expect(abs(availability - 0.95) < 0.02)   // 5 % direction dropouts inside the cone
        // 60° off axis (outside the 55° cone): never.
        let outside = Self.uwbUpdates(Simulator.events(for: Self.stillScenario(object: Vector3(4 * sin(1.05), 1.4, -4 * cos(1.05)))))
        #expect(outside.allSatisfy { $0.1.directionInDevice == nil })
        // Behind the user: never.
        let behind = Self.uwbUpdates(Simulator.events(for: Self.stillScenario(object: Vector3(0, 1.4, 4))))
        #expect(behind.allSatisfy { $0.1.directionInDevice == nil })
    }

    @Test func angleNoiseMatchesTheModelAzimuthBetterThanElevation() {
        let s = Self.stillScenario(seconds: 200, object: Vector3(1.0, 1.6, -4))
        var az: [Double] = [], el: [Double] = []
        for (pose, m) in Self.uwbUpdates(Simulator.events(for: s)) {
            guard let d = m.directionInDevice else { continue }
            let truth = DeviceAngles.azimuthElevation(pose.worldFromDevice.inverseRotate(s.objects[0].positionInWorld - pose.positionInWorld))
            let measured = DeviceAngles.azimuthElevation(d)
            az.append(Angle.wrapped(measured.x - truth.x)); el.append(measured.y - truth.y)
        }
        #expect(abs(Angle.degrees(radians: Self.standardDeviation(az)) - 3) < 0.3)
        #expect(abs(Angle.degrees(radians: Self.standardDeviation(el)) - 5) < 0.5)
    }

    @Test func dropoutsRemoveTheConfiguredShareOfUpdates() {
        var s = Self.stillScenario(seconds: 200)
        s.radio.dropoutProbability = 0.1
        let count = Self.uwbUpdates(Simulator.events(for: s)).count
        #expect(abs(Double(count) / 2000 - 0.9) < 0.02)
    }

    @Test func landscapeHoldHasNoDirectionAndWallsBiasRanges() {
        let events = Simulator.events(for: ScenarioCatalogue.landscapeHold(seed: 1))
        let updates = Self.uwbUpdates(events)
        #expect(updates.filter { $0.1.timestamp > 1.1 }.allSatisfy { $0.1.directionInDevice == nil })
        #expect(updates.filter { $0.1.timestamp < 0.9 }.contains { $0.1.directionInDevice != nil })

        var walled = Self.stillScenario(seconds: 20)
        walled.radio.occluders = [Occluder(minimumCorner: Vector3(-2, 0, -2.1), maximumCorner: Vector3(3, 3, -1.9), biasRange: 0.5...0.8)]
        let residuals = Self.uwbUpdates(Simulator.events(for: walled)).compactMap { pose, m in
            m.distance.map { $0 - (walled.objects[0].positionInWorld - pose.positionInWorld).length }
        }
        #expect(residuals.allSatisfy { $0 > 0.3 })
        #expect(Occluder(minimumCorner: Vector3(-1, -1, -1), maximumCorner: Vector3(1, 1, 1), biasRange: 1...1)
            .blocks(from: Vector3(-5, 0, 0), to: Vector3(5, 0, 0)))
        #expect(!Occluder(minimumCorner: Vector3(-1, -1, -1), maximumCorner: Vector3(1, 1, 1), biasRange: 1...1)
            .blocks(from: Vector3(-5, 2, 0), to: Vector3(5, 2, 0)))
    }

    @Test func bodyOcclusionBiasesObjectsBehindTheUser() {
        var s = Self.stillScenario(seconds: 20, object: Vector3(0, 1.2, 4))
        s.radio.bodyOcclusionBiasRange = 0.3...0.6
        let residuals = Self.uwbUpdates(Simulator.events(for: s)).compactMap { pose, m in
            m.distance.map { $0 - (s.objects[0].positionInWorld - pose.positionInWorld).length }
        }
        #expect(Statistics.quantile(residuals, 0.5)! > 0.25)
        var front = Self.stillScenario(seconds: 20)
        front.radio.bodyOcclusionBiasRange = 0.3...0.6
        let frontResiduals = Self.uwbUpdates(Simulator.events(for: front)).compactMap { pose, m in
            m.distance.map { $0 - (front.objects[0].positionInWorld - pose.positionInWorld).length }
        }
        #expect(abs(Statistics.quantile(frontResiduals, 0.5)!) < 0.02)
    }

    @Test func removedObjectsStopAndWalkingPeersCarryTimedTruth() {
        let events = Simulator.events(for: ScenarioCatalogue.twoTags(seed: 1))
        let removal = events.firstIndex { if case .removed(let id, let t, .timeout) = $0 { return id == "bag" && t >= 8 } else { return false } }
        #expect(removal != nil)
        #expect(!events[(removal ?? 0)...].contains { if case .uwb(let id, _) = $0 { return id == "bag" } else { return false } })
        let peer = Simulator.events(for: ScenarioCatalogue.walkingPeer(seed: 1))
        let truths = peer.compactMap { e -> (Double, Vector3)? in if case .truth(_, let t?, let p) = e { return (t, p) } else { return nil } }
        #expect(truths.count > 100)
        if let first = truths.first, let last = truths.last {
            // 0.3 m/s, plus what the VIO drifts meanwhile (0.5 % of the device's path).
            #expect(abs((last.1.x - first.1.x) / (last.0 - first.0) - 0.3) < 0.01)
        }
    }

    @Test func truthIsWrittenWhereTheAppSeesTheObject() throws {
        // Timed truth before each update: the true position plus the VIO's offset (sensed −
        // true device position) of the latest pose — the frame the engine and the app live in.
        let scenario = ScenarioCatalogue.coached(seed: 3)
        let simulation = Simulator.simulate(scenario)
        let object = try #require(scenario.objects.first)
        var poseIndex = -1, sensed: Vector3?, checked = 0
        for e in simulation.events {
            switch e {
            case .pose(let p): poseIndex += 1; sensed = p.positionInWorld
            case .truth(_, let t, let p):
                let t = try #require(t, "every truth line is timed")
                let offset = try #require(sensed) - simulation.trueDevicePoses[poseIndex].positionInWorld
                #expect((p - (object.position(at: t) + offset)).length < 2e-6)
                checked += 1
            default: break
            }
        }
        #expect(checked > 90)
    }

    @Test func vioTrackingStatesFollowTheScene() {
        let dark = Simulator.events(for: ScenarioCatalogue.darkRoom(seed: 1))
        let poses = dark.compactMap { e -> DevicePose? in if case .pose(let p) = e { return p } else { return nil } }
        #expect(poses.first?.tracking == .limited(.initializing))
        #expect(poses.last?.tracking == .limited(.insufficientFeatures))
        #expect(poses.allSatisfy { $0.ambientIntensity == 20 })
        var shaken = Self.stillScenario(seconds: 3)
        shaken.trajectory = DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 1, amplitude: 0.5, period: 0.3)])
        let shakenPoses = Simulator.events(for: shaken).compactMap { e -> DevicePose? in if case .pose(let p) = e { return p } else { return nil } }
        #expect(shakenPoses.contains { $0.tracking == .limited(.excessiveMotion) })
    }
}
