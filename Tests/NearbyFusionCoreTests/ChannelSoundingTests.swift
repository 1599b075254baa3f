import Foundation
@_spi(Internals) import NearbyFusion
@_spi(Internals) import NearbyFusionEvaluation
import NearbyFusionRecording
import NearbyFusionSimulation
import Testing
import TestHelpers

/// Bluetooth Channel Sounding accessories: distance only, their direction from camera
/// assistance. Every run is seeded.
@Suite("Bluetooth Channel Sounding accessories")
struct ChannelSoundingTests {
    /// A tag that converged just as it was picked up (`cs-carried` seed 34, at 22.0 s) is
    /// dragged by ranges alone and loses its convergence; tracked on as one Gaussian it stood
    /// 1.3–2.0 m off to the end while its σ shrank (final NEES 54). It is acquired afresh
    /// instead: from 28 s on no update holds a single hypothesis more than 1 m off, and the
    /// final NEES is that of an honest acquisition. With the rule off, the stale track returns.
    @Test func aTrackedTagThatLostItsConvergenceIsAcquiredAfresh() throws {
        func staleUpdates(_ run: ScenarioRun) -> Int {
            run.updates.filter { u in
                guard u.estimate.timestamp >= 28, u.hypothesisCount == 1, let m = u.moments else { return false }
                return (m.meanInWorld - u.truthInWorld).length > 1
            }.count
        }
        let scenario = ScenarioCatalogue.channelSoundingCarried(seed: 34)
        let run = ScenarioRun(scenario)
        #expect(staleUpdates(run) == 0)
        #expect(try #require(run.finalNEES) < 20)
        var off = FusionOptions()
        off.channelSounding.reacquireSeconds = 0
        let stale = ScenarioRun(scenario, options: off)
        #expect(staleUpdates(stale) > 10 && (stale.finalNEES ?? 0) > 20, "\(staleUpdates(stale)) stale updates, NEES \(stale.finalNEES ?? -1)")
    }

    /// The app said the tag moved, then stopped (`updateMotionState`): its fresh acquisition
    /// starts from where it was, widened by `carrySpeed × T` (``FusionOptions/Carry/speed``)
    /// instead of from the whole range sphere. Seeds 1–8 of the hinted carried tag (2.4 m in
    /// 3 s, then 13 s of sweeps), at the run's last update: the hypotheses within 1 m of the
    /// truth hold 0.245 of the weight on average with that prior and 0.143 without; the mean
    /// final NEES is 1.94 against 3.15.
    @Test func aTagTheAppSaysWasCarriedIsAcquiredFromWhereItWas() {
        func weightNearTruth(_ run: ScenarioRun) -> Double {
            guard let u = run.updates.last, let best = u.hypotheses.map(\.logWeight).max() else { return 0 }
            var total = 0.0, near = 0.0
            for h in u.hypotheses {
                let w = exp(h.logWeight - best)
                total += w
                if (h.meanInWorld - u.truthInWorld).length < 1 { near += w }
            }
            return near / total
        }
        var off = FusionOptions()
        off.carry.speed = 0
        var near = (with: 0.0, without: 0.0), nees = (with: 0.0, without: 0.0)
        for seed: UInt64 in 1...8 {
            let scenario = ScenarioCatalogue.channelSoundingCarried(seed: seed, hinted: true)
            let with = ScenarioRun(scenario), without = ScenarioRun(scenario, options: off)
            near.with += weightNearTruth(with) / 8
            near.without += weightNearTruth(without) / 8
            nees.with += (with.finalNEES ?? .infinity) / 8
            nees.without += (without.finalNEES ?? .infinity) / 8
        }
        #expect(near.with > 1.3 * near.without, "weight within 1 m of the truth: \(near.with) with the prior, \(near.without) without")
        #expect(nees.with < 0.8 * nees.without, "mean final NEES \(nees.with) with the prior, \(nees.without) without")
    }

    /// The carry's prior under hostile input: hints at random, poses that jump by kilometres,
    /// clocks that step back, ranges absent, tiny, huge or not numbers (seeded). Every
    /// published number stays finite.
    @Test func theCarrysPriorNeverPublishesANaN() {
        var random = SplitMix64(seed: 15)
        var engine = FusionEngine()
        let tag = engine.register(objectID: "tag", ranging: .bluetoothChannelSounding)
        var t = 0.0, position = Vector3(0, 1.4, 0)
        let hints: [MotionActivityState] = [.moving, .stationary, .unknown]
        for step in 0..<4000 {
            t += Double.random(in: 0.2...0.4, using: &random) * (Double.random(in: 0...1, using: &random) < 0.02 ? -5 : 1)
            position += Vector3(Double.random(in: -0.05...0.05, using: &random), Double.random(in: -0.02...0.02, using: &random),
                                Double.random(in: -0.05...0.05, using: &random))
            if Double.random(in: 0...1, using: &random) < 0.002 { position += Vector3(2_000, 0, -1_000) }
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: position, worldFromDevice: .identity))
            if Double.random(in: 0...1, using: &random) < 0.03 { engine.updateMotionState(hints[step % 3], for: tag) }
            let roll = Double.random(in: 0...1, using: &random)
            let distance: Double? = roll < 0.05 ? nil : roll < 0.07 ? .nan : roll < 0.09 ? 1e9 : roll < 0.1 ? 1e-9
                : (Vector3(1, 0.9, -3.6) - position).length + Double.random(in: -0.4...0.8, using: &random)
            let e = engine.ingest(UWBMeasurement(timestamp: t, distance: distance, directionInDevice: nil), for: tag)
            let numbers = [e.distance, e.horizontalAngle, e.direction?.x, e.direction?.y, e.direction?.z,
                           e.worldTransform?.translation.x, e.worldTransform?.translation.y, e.worldTransform?.translation.z,
                           e.velocity?.x, e.velocity?.y, e.velocity?.z].compactMap { $0 }
            let finite = numbers.allSatisfy { $0.isFinite }
            #expect(finite, "step \(step) at \(t): \(numbers)")
            if let m = engine.moments(tag) { #expect(m.meanInWorld.isFinite && m.covariance.isFinite, "step \(step)") }
        }
    }

    @Test func reweighingPriorsMultipliesTheWeightsAndKeepsThemNormalised() {
        var mixture = PositionMixture(capacity: 4)
        mixture.reset([PositionHypothesis(logWeight: log(0.5), meanInWorld: Vector3(-1, 0, -3), covariance: .scaledIdentity(0.1)),
                       PositionHypothesis(logWeight: log(0.5), meanInWorld: Vector3(1, 0, -3), covariance: .scaledIdentity(0.1))])
        mixture.reweighPriors { $0.meanInWorld.x > 0 ? log(3) : 0 }
        let w = mixture.hypotheses.map { exp($0.logWeight) }, prior = mixture.hypotheses.map { exp($0.priorLogWeight) }
        #expect(abs(w[0] - 0.25) < 1e-12 && abs(w[1] - 0.75) < 1e-12, "\(w)")
        #expect(abs(prior[0] - 0.25) < 1e-12 && abs(prior[1] - 0.75) < 1e-12, "\(prior)")
        // A factor that is not finite everywhere leaves the mixture as it was.
        let before = mixture.hypotheses
        mixture.reweighPriors { $0.meanInWorld.x > 0 ? -.infinity : 0 }
        #expect(mixture.hypotheses == before)
    }

    static func degrees(_ r: Double) -> Double { Angle.degrees(radians: r) }

    /// Every `converged` update of `run` has an angle within 20° of the truth.
    static func expectNeverConvergedFarOff(_ run: ScenarioRun, seed: UInt64) throws {
        for u in run.updates where u.estimate.convergence?.status.isConverged == true {
            let a = try #require(u.estimate.horizontalAngle), t = try #require(u.trueHorizontalAngle)
            #expect(degrees(abs(Angle.wrapped(a - t))) < 20, "seed \(seed) at \(u.estimate.timestamp)")
        }
    }

    static let header = #"{"type":"header","format":"nearby-recording","version":1,"device":{"name":"phone"},"objects":[{"id":"tag","kind":"accessory","ranging":"bluetoothChannelSounding"},{"id":"keys","kind":"accessory"}]}"#
    static let pose = #"{"type":"pose","t":0.0,"position":[0,1.4,0],"orientation":[0,0,0,1],"tracking":"normal"}"#

    @Test func rangeLinesAndTheRangingKeyAreRead() throws {
        let text = [Self.header, Self.pose, #"{"type":"range","t":0.1,"object":"tag","distance":3.4}"#,
                    #"{"type":"range","t":0.2,"object":"tag","distance":null}"#,
                    #"{"type":"uwb","t":0.3,"object":"tag","distance":3.5,"direction":null}"#,
                    #"{"type":"range","t":0.4,"object":"keys","distance":2.0,"direction":[0,0,-1]}"#].joined(separator: "\n") + "\n"
        let path = try TestSupport.temporaryFile(text, name: "cs.jsonl")
        let events = try RecordingReader.readAll(path: path)
        guard case .header(let h)? = events.first else { Issue.record("no header"); return }
        #expect(h.ranging(of: "tag") == .bluetoothChannelSounding && h.ranging(of: "keys") == .uwb)
        let updates = events.compactMap { e -> (String, UWBMeasurement)? in if case .uwb(let id, let m) = e { return (id, m) } else { return nil } }
        #expect(updates.map(\.0) == ["tag", "tag", "tag", "keys"])
        #expect(updates[0].1.distance == 3.4 && updates[1].1.distance == nil && updates[3].1.directionInDevice != nil)
        // Written back: the header keeps `ranging`, and the Channel Sounding updates are `range` lines.
        let written = JSONLines.line(.uwb(objectID: "tag", updates[0].1), header: h)
        #expect(written == #"{"type":"range","t":0.1,"object":"tag","distance":3.4}"#)
        #expect(JSONLines.line(.header(h)).contains(#"{"id":"tag","kind":"accessory","ranging":"bluetoothChannelSounding"}"#))
    }

    @Test func aDirectionForAChannelSoundingObjectIsAnErrorNamingLineAndKey() throws {
        for type in ["range", "uwb"] {
            let text = [Self.header, Self.pose, #"{"type":"\#(type)","t":0.1,"object":"tag","distance":3.4,"direction":[0,0,-1]}"#]
                .joined(separator: "\n") + "\n"
            let message = try TestSupport.readingError(text)
            #expect(message == "recording.jsonl:3: key 'direction': object 'tag' is ranged by Bluetooth Channel Sounding, which gives no direction (expected null or no key)", "\(type): \(String(describing: message))")
        }
    }

    @Test func aChannelSoundingObjectOnADeviceWithoutItIsRefusedByEveryCommand() throws {
        let header = Self.header.replacingOccurrences(of: #""device":{"name":"phone"}"#,
                                                      with: #""device":{"name":"phone","supportsBluetoothChannelSounding":false}"#)
        let path = try TestSupport.temporaryFile([header, Self.pose].joined(separator: "\n") + "\n", name: "cs-unsupported.jsonl")
        let expected = "Error: \(path):1: key 'objects': invalidConfiguration: object 'tag' is ranged by Bluetooth Channel Sounding, but the device says supportsBluetoothChannelSounding: false\n"
        let output = path + ".out"
        for arguments in [["replay", path], ["evaluate", path], ["report", path, "--output", output]] {
            let result = try TestSupport.run(arguments)
            #expect(result.status == 1, "\(arguments[0])")
            #expect(result.stderr == expected, "\(arguments[0]): \(result.stderr)")
        }
    }

    @Test func anInvalidARConfigurationIsRefusedByEveryCommandAlike() throws {
        // Issue 10, item 4: replay refused it, evaluate, report and coach accepted it.
        let text = try String(contentsOfFile: TestSupport.packageRoot.appendingPathComponent("Datasets/still-phone.jsonl").path, encoding: .utf8)
            .replacingOccurrences(of: #""collaborationEnabled":false"#, with: #""collaborationEnabled":true"#)
        let path = try TestSupport.temporaryFile(text, name: "bad-ar.jsonl")
        let expect = try TestSupport.temporaryFile("always 0 end tag status unknown\n", name: "any.expect")
        var messages: Set<String> = []
        for arguments in [["replay", path], ["evaluate", path], ["report", path, "--output", path + ".html"], ["coach", path, "--expect", expect]] {
            let result = try TestSupport.run(arguments)
            #expect(result.status == 1, "\(arguments[0]) accepted it")
            messages.insert(result.stderr)
        }
        #expect(messages.count == 1 && messages.first!.contains("invalidARConfiguration"), "\(messages)")
    }

    @Test func planarSweepsNeverPublishAnAngle() {
        // Every motion in one vertical plane: the mirror behind the user explains every range.
        for seed: UInt64 in 1...5 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingPlanar(seed: seed))
            #expect(run.horizontalAngleErrors.allSatisfy { Self.degrees($0) <= 15 }, "seed \(seed)")
            #expect(run.firstConvergedTime == nil, "seed \(seed)")
        }
    }

    @Test func tagsPlacedAnewAreWhereTheScenarioSaysAndNeverConvergedFarOff() throws {
        // `cs-placed`: each seed draws the tag's place (2–8 m, ±0.8 rad of the first heading,
        // 0.4–2.2 m high), the same seed the same place.
        var distances: [Double] = []
        for seed: UInt64 in 1...8 {
            let scenario = ScenarioCatalogue.channelSoundingPlaced(seed: seed)
            let p = scenario.objects[0].positionInWorld
            #expect(p == ScenarioCatalogue.channelSoundingPlaced(seed: seed).objects[0].positionInWorld)
            let offset = p - Vector3(0, 1.4, 0)
            distances.append(offset.length)
            #expect(offset.length >= 2 - 1e-9 && offset.length <= 8 + 1e-9, "seed \(seed): \(offset.length) m")
            #expect(p.y >= 0.4 && p.y <= 2.2, "seed \(seed)")
            #expect(abs(atan2(p.x, -p.z)) <= 0.8 + 1e-9, "seed \(seed)")
            let run = ScenarioRun(scenario)
            try Self.expectNeverConvergedFarOff(run, seed: seed)
        }
        // The seeds spread the places (not one place eight times).
        #expect(distances.max()! - distances.min()! > 2, "\(distances)")
    }

    @Test func coachedSweepsAndStepsGiveAnAngleSoonAfterTheBoundAllowsIt() throws {
        var delays: [Double] = [], errors: [Double] = [], raw: [Double] = [], published: [Double] = [], lags: [Double] = []
        for seed: UInt64 in 1...6 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: seed))
            if let lag = run.distanceLag() { lags.append(lag) }
            // Nothing converged far off, ever.
            try Self.expectNeverConvergedFarOff(run, seed: seed)
            if let bound = run.boundAllows(degrees: 10), let first = run.firstAngleTime { delays.append(first - bound) }
            errors += run.horizontalAngleErrors.map(Self.degrees)
            for u in run.updates {
                if let d = u.estimate.distance { published.append(abs(d - u.trueDistanceVector.length)) }
                if let r = u.rawDistance { raw.append(abs(r - u.trueDistanceVector.length)) }
            }
        }
        #expect(delays.count >= 4, "an angle in \(delays.count) of 6 runs")
        #expect(Statistics.quantile(delays, 0.5)! <= 3, "\(delays)")
        #expect(Statistics.quantile(errors, 0.5)! <= 10)
        // The published distance is the fused one: over 20 seeds its median error is 0.49× the
        // raw one (accuracy); on these six, at most 0.6×.
        #expect(Statistics.quantile(published, 0.5)! <= 0.6 * Statistics.quantile(raw, 0.5)!)
        // …and it follows the walking user: median lag ≤ 0.3 s (the issue's bound).
        #expect(lags.count == 6 && Statistics.quantile(lags, 0.5)! <= 0.3, "\(lags)")
    }

    @Test func theAngleIsPublishedAtItsBearingThresholdWhileTheSweepIsStillAskedFor() {
        // Channel Sounding: an angle from 10° σ of the bearing, with `insufficientHorizontalSweep`
        // standing until the position across the line of sight is resolved for `worldTransform`.
        var early = 0
        for seed: UInt64 in 1...3 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: seed))
            early += run.updates.filter {
                $0.estimate.horizontalAngle != nil && $0.estimate.worldTransform == nil
                    && $0.estimate.convergence?.status.reasons.contains(.insufficientHorizontalSweep) == true
            }.count
        }
        #expect(early > 0)
        // UWB keeps its rule: no angle while the horizontal sweep is asked for.
        for seed: UInt64 in 1...3 {
            let run = ScenarioRun(ScenarioCatalogue.coached(seed: seed))
            #expect(!run.updates.contains {
                $0.estimate.horizontalAngle != nil && $0.estimate.convergence?.status.reasons.contains(.insufficientHorizontalSweep) == true
            }, "seed \(seed)")
        }
    }

    @Test func theExactPosteriorSeesTheMirrorThatTheBoundDoesNot() throws {
        let tag = Vector3(-1.1, 0.9, -3.6)
        let model = ChannelSoundingModel()
        let variance = model.rangeStandardDeviation * model.rangeStandardDeviation
        func posterior(_ path: (Int) -> Vector3)
            -> (sigma: Double, device: Vector3, moments: (meanInWorld: Vector3, covariance: Matrix3), bearing: Double?) {
            var p: RangeOnlyPosterior?
            var device = Vector3.zero
            for k in 0..<60 {
                device = path(k)
                let r = (tag - device).length   // exact ranges: the posterior is then centred on the tag
                if p == nil {
                    p = RangeOnlyPosterior(firstRangeMetres: r, antennaInWorld: device, density: model.rangeErrorDensity,
                                           variance: variance)
                } else {
                    p!.add(rangeMetres: r, antennaInWorld: device)
                }
            }
            return (p!.bearingStandardDeviation(from: device), device, p!.moments(), p!.meanBearing(from: device))
        }
        func bearing(of point: Vector3, from device: Vector3) -> Double { atan2(point.x - device.x, -(point.z - device.z)) }
        // Sweeps in the device's vertical plane z = 0: the mirror at z = +3.6 m explains every
        // range, so the bearing is open by ~180° (σ about 90°) — the bound at the truth is finite.
        let planar = posterior { k in Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), 0) }
        #expect(Angle.degrees(radians: planar.sigma) > 60, "\(Angle.degrees(radians: planar.sigma))°")
        // The same sweeps plus a 1 m step toward the tag break the mirror.
        let stepped = posterior { k in
            Vector3(0.6 * sin(0.4 * Double(k)), 1.4 + 0.5 * cos(0.3 * Double(k)), -min(Double(k) / 30, 1))
        }
        #expect(Angle.degrees(radians: stepped.sigma) < 10, "\(Angle.degrees(radians: stepped.sigma))°")
        // The posterior's own bearing (its circular mean): on the tag's once the step broke the
        // mirror; between the tag's (−17°) and its mirror's (−163°) while both explain the ranges.
        let steppedError = try #require(stepped.bearing.map { Angle.wrapped($0 - bearing(of: tag, from: stepped.device)) })
        #expect(abs(Angle.degrees(radians: steppedError)) < 2, "\(Angle.degrees(radians: steppedError))°")
        let planarBearing = try #require(planar.bearing)
        let tagBearing = bearing(of: tag, from: planar.device)
        let mirrorBearing = bearing(of: Vector3(tag.x, tag.y, -tag.z), from: planar.device)
        #expect(abs(Angle.wrapped(planarBearing - tagBearing)) > Angle.radians(degrees: 45)
                && abs(Angle.wrapped(planarBearing - mirrorBearing)) > Angle.radians(degrees: 45),
                "\(Angle.degrees(radians: planarBearing))° between \(Angle.degrees(radians: tagBearing))° and \(Angle.degrees(radians: mirrorBearing))°")
        // Its Gaussian summary: after the step, centred on the tag within its own spread; after
        // the planar sweeps, half-way between the tag and its mirror (z ≈ 0), spread ±3.6 m in z.
        let m = stepped.moments, e = m.meanInWorld - tag
        #expect(m.covariance.inverse.map { $0.quadraticForm(e) }.map { $0 < 3 } == true, "\(e)")
        #expect(abs(planar.moments.meanInWorld.z) < 0.5 && planar.moments.covariance.m22.squareRoot() > 3,
                "\(planar.moments.meanInWorld), σ_z \(planar.moments.covariance.m22.squareRoot())")
        // Followed in a scenario run only for a Channel Sounding object, until it allows the angle.
        let run = ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: 1), exactPosteriorUntil: Angle.radians(degrees: 10))
        let allowed = run.posteriorAllows(degrees: 10)
        #expect(allowed != nil)
        #expect(run.updates.allSatisfy { u in u.posteriorBearing == nil || u.estimate.timestamp <= allowed! })
        #expect(run.posteriorFinalNEES != nil)
        // At every published angle, the exact posterior's own angle error beside the engine's,
        // and nowhere else; the engine's ratio to the bound at those updates is the one the
        // angle RMSE target reads.
        #expect(run.updates.contains { $0.estimate.horizontalAngle != nil })
        #expect(run.updates.allSatisfy { ($0.estimate.horizontalAngle != nil) == ($0.posteriorAngleError != nil) })
        let ratios = try #require(ScenarioRun.posteriorAngleRMSEOverBound([run]))
        #expect(ratios.updates == ratios.of && ratios.updates == run.publishedAngles.count)
        #expect(abs(ratios.engine - ScenarioRun.angleRMSEOverBound([run])!) < 1e-12)
        #expect(ratios.posterior.isFinite && ratios.posterior > 0)
        // A tag that moved: a posterior anew from its first range after it stopped (its NEES at
        // the end is where the tag lies now), and no bearing σ reported after the move began.
        let carried = ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: 1), exactPosteriorUntil: Angle.radians(degrees: 10))
        #expect(carried.posteriorFinalNEES.map { $0.isFinite && $0 >= 0 } == true)
        #expect(carried.updates.allSatisfy { $0.posteriorBearing == nil || $0.estimate.timestamp < 22 })
        #expect(ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: 1)).updates.allSatisfy { $0.posteriorBearing == nil })
        let uwb = ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 1), exactPosteriorUntil: Angle.radians(degrees: 10))
        #expect(uwb.updates.allSatisfy { $0.posteriorBearing == nil && $0.posteriorAngleError == nil })
        #expect(ScenarioRun.posteriorAngleRMSEOverBound([uwb]) == nil)
    }

    /// The exact posterior's mean distance: from a still device, about the mean of Gaussian
    /// ranges (a density tabulated by `LogDensityTable` giving the same posterior as the one
    /// given to `init`); per range under the radio's own noise in a scenario run, better than
    /// the raw ranges on a walk with a round-trip-time radio, and followed only where asked for
    /// a still Channel Sounding tag.
    @Test func theExactPosteriorsMeanDistanceIsTheIdealOne() throws {
        var noise = NoiseStream(seed: 4, source: "posterior-distance")
        let tag = Vector3(3, 0.5, -9), device = Vector3(0, 1.4, 0)
        let truth = (tag - device).length
        let ranges = (0..<40).map { _ in truth + noise.gaussian(standardDeviation: 0.3) }
        let density = RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: 0, excessRange: 0...0)
        var byDensity = RangeOnlyPosterior(firstRangeMetres: ranges[0], antennaInWorld: device, density: density, variance: 0.09,
                                           targetPointCount: 50_000)
        let table = LogDensityTable(from: -3, to: 3, step: 0.001) { density.density($0, variance: 0.09) }
        var byTable = RangeOnlyPosterior(firstRangeMetres: ranges[0], antennaInWorld: device, logDensity: table, targetPointCount: 50_000)
        for r in ranges.dropFirst() {
            byDensity.add(rangeMetres: r, antennaInWorld: device)
            byTable.add(rangeMetres: r, antennaInWorld: device, logDensity: table)
        }
        let mean = ranges.reduce(0, +) / Double(ranges.count)
        #expect(abs(byDensity.meanDistance(from: device) - mean) < 0.02, "\(byDensity.meanDistance(from: device)) against \(mean)")
        #expect(abs(byTable.meanDistance(from: device) - byDensity.meanDistance(from: device)) < 1e-9)
        // A table asked for a step it cannot take keeps its two ends; a zero density is −10⁶.
        let flat = LogDensityTable(from: -1, to: 1, step: 0) { _ in 0.5 }
        #expect(flat(0.3) == log(0.5) && flat(.nan) == log(0.5))
        #expect(LogDensityTable(from: -1, to: 1, step: 0.5) { _ in 0 }(0.2) == -1e6)
        // Walked toward and back with a round-trip-time radio (σ 1.6–4.6 m): every update from
        // the first range on carries it, and its errors are well below the ranges'.
        let scenario = ScenarioCatalogue.channelSoundingProfileWalk(seed: 2, stem: "cs-rtt", model: .roundTripTime)
        let run = ScenarioRun(scenario, exactDistance: true)
        let first = try #require(run.updates.firstIndex { $0.rawDistance != nil })
        #expect(run.updates[first...].allSatisfy { $0.posteriorDistance.map(\.isFinite) == true })
        let raw = run.pairedDistanceErrors.map(\.raw).sorted(), ideal = run.posteriorDistanceErrors.sorted()
        #expect(ideal.count == raw.count)
        #expect(ideal[ideal.count / 2] < 0.7 * raw[raw.count / 2], "median \(ideal[ideal.count / 2]) against \(raw[raw.count / 2])")
        #expect(run.posteriorDistanceLag() != nil)
        #expect(ScenarioRun(scenario).updates.allSatisfy { $0.posteriorDistance == nil })
        // An object that moves, or a UWB one, gets none.
        #expect(ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: 1), exactDistance: true).updates.allSatisfy { $0.posteriorDistance == nil })
        #expect(ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 1), exactDistance: true).updates.allSatisfy { $0.posteriorDistance == nil })
    }

    /// The exact posterior under the engine's own radio model, beside the simulated radio's:
    /// under the engine's default model — a wider jitter, more and longer multipath than the
    /// simulated radio's — it allows 10° no sooner on any of three seeds, and later on at least
    /// one; told the radio's σ, multipath probability and largest excess (its excess starts at
    /// 0.2 m, the engine's at 0), it comes at least half-way back to the radio's own moment
    /// (seeds 1–3: 14.6, 16.4, 16.4 s untold; 13.4, 13.8, 14.8 s told; 13.2, 13.2, 14.8 s the
    /// radio's own).
    @Test func theExactPosteriorUnderTheEnginesRadioModelIsFollowedBesideTheRadiosOwn() {
        let limit = Angle.radians(degrees: 10)
        var later = 0
        for seed: UInt64 in 1...3 {
            let scenario = ScenarioCatalogue.channelSoundingTag(seed: seed)
            let run = ScenarioRun(scenario, exactPosteriorUntil: limit)
            guard let own = run.posteriorAllows(degrees: 10) else { Issue.record("seed \(seed): no posterior moment"); continue }
            let engines = run.enginesModelPosteriorAllows(degrees: 10) ?? .infinity
            #expect(engines >= own, "seed \(seed): \(engines) s against \(own) s")
            if engines > own { later += 1 }
            let radio = scenario.channelSounding
            var told = FusionOptions()
            told.channelSounding.rangeStandardDeviation = radio.rangeStandardDeviation
            told.channelSounding.multipathProbability = radio.multipathProbability
            told.channelSounding.multipathMaximumExcess = radio.multipathExcessRange.upperBound
            let toldRun = ScenarioRun(scenario, options: told, exactPosteriorUntil: limit)
            let toldMoment = toldRun.enginesModelPosteriorAllows(degrees: 10) ?? .infinity
            #expect(toldRun.posteriorAllows(degrees: 10) == own)
            #expect(abs(toldMoment - own) <= 0.5 * (engines - own), "seed \(seed): \(toldMoment) s, \(engines) s untold, against \(own) s")
        }
        #expect(later >= 1)
        // Neither posterior for a UWB object.
        let uwb = ScenarioRun(ScenarioCatalogue.distanceOnly(seed: 1), exactPosteriorUntil: limit)
        #expect(uwb.updates.allSatisfy { $0.enginesModelPosteriorBearing == nil && $0.posteriorBearing == nil })
    }

    @Test func theEngineIsNoMoreOverconfidentThanTheExactPosteriorWhereTheBandIsOutOfReach() {
        // Planar sweeps (the mirror): even the exact posterior's Gaussian summary scores above
        // the χ² band at this fixed place (accuracy, the Channel Sounding table). The engine's
        // mean NEES must stay at or under the ideal's; seeds 1–8: 5.19 against 6.53.
        // A tag put down after a carry the app reported: the posterior gets the engine's prior of
        // where the tag was (``FusionOptions/Carry/speed``), and the engine must again stay at or
        // under it: 1.94 against 2.06 (3.61 for a posterior started afresh from a flat prior).
        let cases: [(make: @Sendable (UInt64) -> SimulationScenario, idealAboveTheBand: Bool)] = [
            (ScenarioCatalogue.channelSoundingPlanar, true),
            ({ ScenarioCatalogue.channelSoundingCarried(seed: $0, hinted: true) }, false),
        ]
        var hintedIdeal = 0.0
        for (make, idealAboveTheBand) in cases {
            var engine: [Double] = [], ideal: [Double] = []
            for seed: UInt64 in 1...8 {
                let run = ScenarioRun(make(seed), exactPosteriorUntil: Angle.radians(degrees: 10))
                if let n = run.finalNEES, let p = run.posteriorFinalNEES { engine.append(n); ideal.append(p) }
            }
            #expect(engine.count == 8)
            let e = Statistics.mean(engine) ?? .infinity, p = Statistics.mean(ideal) ?? 0
            #expect(e <= p && (!idealAboveTheBand || p > 3), "engine \(e), exact posterior \(p)")
            if !idealAboveTheBand { hintedIdeal = p }
        }
        // Without the prior, the hinted run's posterior is the flat one again.
        var off = FusionOptions()
        off.carry.speed = 0
        let flat = (1...8).compactMap { (seed: UInt64) in
            ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: seed, hinted: true), options: off,
                        exactPosteriorUntil: Angle.radians(degrees: 10)).posteriorFinalNEES
        }
        #expect(flat.count == 8 && (Statistics.mean(flat) ?? 0) > 3 && hintedIdeal < 0.8 * (Statistics.mean(flat) ?? 0),
                "flat \(flat), with the prior \(hintedIdeal)")
    }

    @Test func aMultipathBurstDuringAcquisitionDoesNotThrowTheSweepsAway() {
        // Seed 17: six of seven ranges 0.7–1.1 m long from 11.8 s; the trend test fires at
        // 13.4 s, just as the exact posterior allows 10°. Clearing the window there left the
        // run without an angle; setting the burst aside and re-solving keeps the sweeps.
        let run = ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: 17))
        let errors = run.horizontalAngleErrors.map(Self.degrees)
        #expect(!errors.isEmpty)
        #expect(errors.allSatisfy { $0 < 15 }, "\(errors.max() ?? 0)°")
    }

    @Test func aTrendOfAStillTagIsReSolvedFromTheWindowShortOrLong() {
        // `cs-far` (11.5 m): seed 18's ranges run short of the bank at 11.0 s (median of eight
        // normalised innovations −1.56: a bank that multipath had pulled long), seed 27's long
        // at 16.4 s with the range then 1–2 m long, which only the radio's multipath term
        // explains. The user sweeps in place. Both used to start the acquisition afresh, the
        // window cleared, and ended without an angle; re-solved from the window they publish
        // one, and a right one.
        for seed: UInt64 in [18, 27] {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingFar(seed: seed))
            let errors = run.horizontalAngleErrors.map(Self.degrees)
            #expect(!errors.isEmpty, "seed \(seed): no angle")
            #expect(errors.allSatisfy { $0 < 15 }, "seed \(seed): \(errors.max() ?? 0)°")
        }
    }

    /// An inverse-FFT radio reads about 2.7 % of the distance short. Walked toward and back
    /// (`cs-ifft-walk`, seeds 1–10), its ranges weighed as independent and unbiased put the
    /// tag decimetres off with a covariance that claims a fraction of that; the bias the radio
    /// may carry, considered (``FusionOptions/ChannelSounding/rangeBiasFractionOfDistance``),
    /// keeps the final NEES near the χ² range. The same runs with the bias taken as zero claim
    /// several times too much.
    @Test func aBiasedRadioWalkedTowardIsNotCalledCertain() {
        func meanNEES(bias: Double) -> Double {
            var options = FusionOptions()
            options.channelSounding.rangeBiasFractionOfDistance = bias
            let nees = (1...10).compactMap { (seed: UInt64) in
                ScenarioRun(ScenarioCatalogue.channelSoundingProfileWalk(seed: seed, stem: "cs-ifft", model: .inverseFFT),
                            options: options).finalNEES
            }
            #expect(nees.count == 10)
            return nees.reduce(0, +) / Double(max(nees.count, 1))
        }
        let considered = meanNEES(bias: FusionOptions().channelSounding.rangeBiasFractionOfDistance)
        let ignored = meanNEES(bias: 0)
        #expect(considered < 6, "\(considered)")
        #expect(ignored > 2 * considered, "\(ignored) against \(considered)")
    }

    /// A considered bias is no uncertainty the next ranges reduce: the trend test that catches
    /// a tag carried off reads the covariance without it, before and after the hand-over to
    /// tracking. Carried sideways (`cs-carried` seeds 72 and 111, from 22 s) just as they
    /// converged, under a considered bias of 0.3 m (`--range-bias 0.3`) with the bias inside
    /// the test these runs stayed converged at the old place, 40° off.
    @Test func aTagCarriedOffAsItConvergesIsNotHeldByTheConsideredBias() {
        var options = FusionOptions()
        options.sensors.rangeBiasStandardDeviation = 0.3
        for seed: UInt64 in [72, 111] {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: seed), options: options)
            #expect(run.worstConvergedAngleError < Angle.radians(degrees: 20), "seed \(seed): \(Self.degrees(run.worstConvergedAngleError))°")
        }
    }

    @Test func aTagCarriedAwayWhileOnProbationIsNotShownWhereItWas() {
        // The tag carried away from 22 s (0.79 m/s for 3 s) during acquisitions re-solved after
        // a long trend: the probation keeps the old place unpublished until the trend fires
        // again; without it (probationRanges 0) these runs show it more than 15° off.
        func worst(seed: UInt64, probation: Int) -> Double {
            var scenario = ScenarioCatalogue.channelSoundingCarried(seed: seed)
            scenario.objects[0].velocityChanges = [.init(time: 22, velocityInWorld: Vector3(-0.75, 0, -0.25)),
                                                   .init(time: 25, velocityInWorld: .zero)]
            var options = FusionOptions()
            options.channelSounding.probationRanges = probation
            let run = ScenarioRun(scenario, options: options)
            return run.updates.filter { $0.estimate.timestamp > 22 }.compactMap { u in
                u.estimate.horizontalAngle.flatMap { a in u.trueHorizontalAngle.map { Self.degrees(abs(Angle.wrapped(a - $0))) } }
            }.max() ?? 0
        }
        for seed: UInt64 in [32, 36] {
            #expect(worst(seed: seed, probation: FusionOptions().channelSounding.probationRanges) < 15, "seed \(seed)")
            #expect(worst(seed: seed, probation: 0) > 15, "seed \(seed): the probation is what guards it")
        }
    }

    @Test func aTagCarriedTowardTheUserWithoutAHintLosesItsAngleWhileItsRangesRunShort() {
        // `cs-carried`: picked up at 22 s and carried toward the user, no hint. Ranges running
        // short (3 of the last 5 below −1σ, ``FusionOptions/ChannelSounding/approachRangeWindow``) withhold the
        // angle before the eight-range trend test restarts the acquisition. Seeds 1–12: 5 runs
        // and 26 updates show an angle > 15° off in 22–27 s; 10 runs and 43 updates without it.
        func staleAngles(_ options: FusionOptions) -> (runs: Int, updates: Int) {
            var runs = 0, updates = 0
            for seed: UInt64 in 1...12 {
                let run = ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: seed), options: options)
                let wrong = run.updates.filter { u in
                    guard u.estimate.timestamp >= 22, u.estimate.timestamp <= 27, let a = u.estimate.horizontalAngle,
                          let t = u.trueHorizontalAngle else { return false }
                    return Self.degrees(abs(Angle.wrapped(a - t))) > 15
                }.count
                if wrong > 0 { runs += 1 }
                updates += wrong
            }
            return (runs, updates)
        }
        let now = staleAngles(FusionOptions())
        #expect(now.runs <= 6 && now.updates <= 30, "\(now)")
        var off = FusionOptions()
        off.channelSounding.approachRangeCount = 6   // more than the window: never
        let without = staleAngles(off)
        #expect(without.runs >= now.runs + 3 && without.updates >= now.updates + 10, "\(without) vs \(now)")
    }

    @Test func aCarriedTagTheAppReportsIsNeverConvergedWrong() throws {
        for seed: UInt64 in 1...6 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingCarried(seed: seed, hinted: true))
            try Self.expectNeverConvergedFarOff(run, seed: seed)
            // While the app says it moves, no angle is published.
            let carried = run.updates.filter { $0.estimate.timestamp > 22.1 && $0.estimate.timestamp < 25 }
            #expect(carried.allSatisfy { $0.estimate.horizontalAngle == nil }, "seed \(seed)")
        }
    }

    /// The range variance scale learned for the tag of `scenario` under `options`, after each simulated second.
    static func learnedScales(_ scenario: SimulationScenario, options: FusionOptions = FusionOptions()) -> [Double] {
        let events = Simulator.events(for: scenario)
        guard case .header(let header)? = events.first else { return [] }
        var driver = ReplayDriver(header: header, options: options)
        var scales: [Double] = [], nextSecond = 1.0
        for event in events {
            if case .pose(let p, _)? = driver.apply(event), p.timestamp >= nextSecond {
                scales.append(driver.engine.snapshot(driver.handle(ofSlot: 0)).rangeVarianceScale)
                nextSecond += 1
            }
        }
        return scales
    }

    /// A round-trip-time radio (σ 1.6 m at 5 m to 4.6 m at 45 m, against the configured
    /// 0.38 m) is weighed with at least 8× the configured variance within 10 s of a still
    /// session at any of the nine distances, and keeps it; a radio as configured (the coached
    /// step's, multipath bursts and sweeps included) keeps the configured σ throughout; an
    /// inverse-FFT radio, whose core is far quieter at short range, is weighed with a smaller
    /// variance there (never below ⅛ of the configured one, never a larger one anywhere).
    @Test func aFarNoisierRadioIsTrustedAsMuchAsItDeserves() {
        for seed: UInt64 in 1...9 {
            let rtt = Self.learnedScales(ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-rtt", model: .roundTripTime))
            #expect(rtt[9...].allSatisfy { $0 >= 8 }, "seed \(seed): \(rtt)")
            let ifft = Self.learnedScales(ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-ifft", model: .inverseFFT))
            #expect(ifft.allSatisfy { $0 <= 1 && $0 >= 0.125 }, "seed \(seed): \(ifft)")
            if seed <= 2 { #expect((ifft.last ?? 1) < 1, "seed \(seed) (\(5 * seed) m): \(ifft)") }
        }
        for seed: UInt64 in 1...6 {
            let coached = Self.learnedScales(ScenarioCatalogue.channelSoundingTag(seed: seed))
            #expect(coached.allSatisfy { $0 == 1 }, "seed \(seed): \(coached)")
        }
    }

    /// A still tag ranged by a round-trip-time radio (σ 1.6–4.6 m) from a still device: its
    /// ranges now and then run to one side for eight procedures, which sets off the trend test,
    /// and the newest of them may lie metres off. From one place, the bank re-solved from the
    /// window, the trend's ranges kept, is judged by those ranges rather than by that one, and
    /// the estimate's fused distance does not jump by more than 3 m from one range to the next
    /// after the fifth second. Judged by the newest range alone, with a long trend's ranges set
    /// aside as a multipath burst, such a range started the acquisition afresh on itself in
    /// these four runs of `cs-rtt-still`: seeds 24 at 7 s (8 m short) and 27 at 11 s (9 m short,
    /// after one 13 m short), whose fused distance jumped by about 10 m (seed 27's for 11 s),
    /// and seeds 10 at 44.5 s and 29 at 15.5 s (ranges 6.6 and 6.8 m long).
    @Test func aNoisyRadiosOneFarRangeDoesNotStartAStillTagAfresh() {
        var jumps: [(seed: UInt64, time: Double, metres: Double)] = []
        for seed: UInt64 in [10, 24, 27, 29] {
            let events = Simulator.events(for: ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-rtt", model: .roundTripTime))
            guard case .header(let header)? = events.first else {
                Issue.record("seed \(seed): no header")
                continue
            }
            var driver = ReplayDriver(header: header)
            var device = Vector3.zero, last: Double?, judged = 0
            for event in events {
                switch driver.apply(event) {
                case .pose(let p, _)?:
                    device = p.positionInWorld
                case .uwb(_, let m, _, _)? where m.distance != nil:
                    let hypotheses = driver.engine.snapshot(driver.handle(ofSlot: 0)).hypotheses
                    guard !hypotheses.isEmpty else { continue }
                    let fused = hypotheses.reduce(0.0) { $0 + exp($1.logWeight) * ($1.meanInWorld - device).length }
                    if let previous = last, m.timestamp >= 5 {
                        judged += 1
                        if abs(fused - previous) > 3 { jumps.append((seed, m.timestamp, fused - previous)) }
                    }
                    last = fused
                default:
                    continue
                }
            }
            // A still minute at 2 Hz: about a hundred ranges after the fifth second.
            #expect(judged >= 90, "seed \(seed): \(judged) ranges judged")
        }
        #expect(jumps.isEmpty, "\(jumps)")
    }

    /// A still tag 5 m away with the inverse-FFT radio (its core σ well under the configured
    /// 0.38 m, its misreadings short by a few tenths of a metre): over the six 5 m runs of
    /// seeds 1–50, the published distance's median error lies within 2 cm of the raw ranges'
    /// own median error. Weighed with the configured σ, the short misreadings counted as noise
    /// and pulled it 3 cm further short than the ranges; learned quieter, they are outliers.
    @Test func aQuietRadiosShortMisreadingsDoNotPullTheDistanceShort() {
        var raw: [Double] = [], published: [Double] = []
        for seed: UInt64 in stride(from: 1, through: 50, by: 9) {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-ifft", model: .inverseFFT))
            for u in run.updates {
                guard let r = u.rawDistance, let d = u.estimate.distance else { continue }
                raw.append(r - u.trueDistanceVector.length)
                published.append(d - u.trueDistanceVector.length)
            }
        }
        let rawMedian = Statistics.quantile(raw, 0.5) ?? .nan, publishedMedian = Statistics.quantile(published, 0.5) ?? .nan
        #expect(raw.count > 500)
        #expect(abs(publishedMedian - rawMedian) < 0.02, "published \(publishedMedian) m, raw \(rawMedian) m")
    }

    /// The round-trip-time radio's consecutive errors correlate 0.2, which shrinks the second
    /// differences its noise is read from to 0.75 of their variance: allowed for (the default
    /// ``FusionOptions/ChannelSounding/errorCorrelation``), the level learned over a still
    /// minute at each of the nine distances lies on average within a third of a level of the
    /// radio's own `log₂(σ²/σ₀²)` (−0.24 over seeds 1–9), and at each within the 1.27 levels
    /// the level's hysteresis lets it stand (`0.75 + s`, `s` = 0.52); read as independent, it
    /// lies about 0.4 of a level lower on average (−0.69).
    @Test func aCorrelatedRadiosNoiseIsLearnedAtItsLevel() {
        let configured = FusionOptions().channelSounding.rangeStandardDeviation
        var independent = FusionOptions()
        independent.channelSounding.errorCorrelation = 0
        var offsets: [Double] = [], offsetsAsIndependent: [Double] = []
        for seed: UInt64 in 1...9 {
            let scenario = ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-rtt", model: .roundTripTime)
            let run = Simulator.simulate(scenario)
            guard let device = run.trueDevicePoses.first?.positionInWorld, let tag = scenario.objects.first?.positionInWorld else {
                Issue.record("seed \(seed): no device or tag")
                continue
            }
            let sigma = ChannelSoundingModel.roundTripTime.rangeStandardDeviation(atDistance: (tag - device).length,
                                                                                  shadowing: run.channelSoundingShadowing["tag"] ?? 0)
            let radioLevel = log2(sigma * sigma / (configured * configured))
            guard let learned = Self.learnedScales(scenario).last,
                  let asIndependent = Self.learnedScales(scenario, options: independent).last else {
                Issue.record("seed \(seed): no scale learned")
                continue
            }
            offsets.append(log2(learned) - radioLevel)
            offsetsAsIndependent.append(log2(asIndependent) - radioLevel)
            #expect(abs(log2(learned) - radioLevel) <= 1.3, "seed \(seed): level \(log2(learned)) against the radio's \(radioLevel)")
        }
        let mean = offsets.reduce(0, +) / Double(max(offsets.count, 1))
        let meanAsIndependent = offsetsAsIndependent.reduce(0, +) / Double(max(offsetsAsIndependent.count, 1))
        #expect(abs(mean) <= 1.0 / 3, "mean offset \(mean) levels: \(offsets)")
        #expect(meanAsIndependent <= mean - 0.3, "read as independent: \(meanAsIndependent) against \(mean)")
    }

    @Test func theEngineUsesTheRadiosNoise() {
        let o = FusionOptions()
        let cs = o.forRanging(.bluetoothChannelSounding)
        #expect(cs.sensors.rangeStandardDeviation == o.channelSounding.rangeStandardDeviation)
        #expect(cs.acquisition.missingDirectionLikelihood == 1)
        #expect(o.forRanging(.uwb) == o)
        // A missing direction says nothing for Channel Sounding, while for UWB on a phone held
        // in portrait it moves weight out of the radio's cone (−Z).
        func massInCone(_ ranging: RangingTechnology) -> Double {
            var engine = FusionEngine()
            let tag = engine.register(objectID: "tag", ranging: ranging)
            _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
            for k in 1...5 { _ = engine.ingest(UWBMeasurement(timestamp: 0.1 * Double(k), distance: 3, directionInDevice: nil), for: tag) }
            return engine.snapshot(tag).hypotheses.filter { h in
                DeviceAngles.offAxisAngle(h.meanInWorld - Vector3(0, 1.4, 0)) < Angle.radians(degrees: 40)
            }.map { exp($0.logWeight) }.reduce(0, +)
        }
        #expect(massInCone(.bluetoothChannelSounding) > 2 * massInCone(.uwb))
        var engine = FusionEngine()
        let tag = engine.register(objectID: "tag", ranging: .bluetoothChannelSounding)
        _ = engine.ingest(DevicePose(timestamp: 0, positionInWorld: Vector3(0, 1.4, 0), worldFromDevice: .identity))
        let first = engine.ingest(UWBMeasurement(timestamp: 0.1, distance: 3, directionInDevice: Vector3(0, 0, -1)), for: tag)
        #expect(first.direction == nil, "a Channel Sounding update never publishes a radio direction")
    }

    // MARK: The range error density (multipath is one-sided)

    /// The density at a fixed variance, whose constants the batch computes once per window
    /// pass, gives what the density gives for that variance, within 10⁻¹² of the scale each
    /// quantity lives on: `p(e)` and its parts (of `p(e)`), the robust weight `c π / v` (of `c/v`)
    /// and the share the line of sight or multipath explain — for the engine's
    /// Channel Sounding density, the simulator's and UWB's symmetric one, from 10 m short to
    /// 10 m long, at decimetre and metre noise.
    @Test func theDensityAtAFixedVarianceIsTheDensity() {
        let densities = [FusionOptions().forRanging(.bluetoothChannelSounding).rangeErrorDensity, ChannelSoundingModel().rangeErrorDensity,
                         FusionOptions().rangeErrorDensity]
        func close(_ a: Double, _ b: Double, scale: Double) -> Bool { abs(a - b) <= 1e-12 * scale }
        var compared = 0
        for density in densities {
            for sigma in [0.1, 0.38, 1.6] {
                let v = sigma * sigma
                let fixed = density.at(variance: v)
                #expect(fixed.variance == v && close(fixed.inverseVariance, 1 / v, scale: 1 / v))
                for k in -200...200 {
                    let e = Double(k) * 0.05, c = k % 3 == 0 ? 2.0 : 1.0
                    let inlier = density.inlier(e, variance: v), excess = density.excess(e, variance: v)
                    let total = inlier + excess + density.outlierDensity
                    let robust = fixed.robustWeight(e, multiplicity: c)
                    // (Where nothing but a subnormal density explains `e` — the simulator's density
                    // has no outlier term —, its few significant bits say nothing.)
                    guard total > 1e-200 else { continue }
                    #expect(close(fixed.inlier(e), inlier, scale: total) && close(fixed.excess(e), excess, scale: total),
                            "e \(e), σ \(sigma)")
                    #expect(close(robust.weight, c * (inlier / total) / v, scale: c / v)
                            && close(robust.density, total, scale: total)
                            && close(robust.share, (inlier + excess) / total, scale: 1), "e \(e), σ \(sigma)")
                    compared += 1
                }
            }
        }
        #expect(compared > 3 * 3 * 300)
    }

    /// `LogSum` takes one logarithm for a run of densities and gives their sum of logarithms:
    /// over 10,000 densities from 10⁻⁸ to 10³ (and multiplicities 1 to 3) within 10⁻¹² nats per
    /// term, past the products that would underflow or overflow; a zero density gives `−∞`, a
    /// NaN NaN, as the sum does.
    @Test func aLogSumIsTheSumOfTheLogarithms() {
        var noise = NoiseStream(seed: 31, source: "log-sum")
        var logs = RangeErrorDensity.LogSum(), direct = 0.0
        for k in 0..<10_000 {
            // Runs of small densities, then of large ones: the product leaves [10⁻¹⁵⁰, 10¹⁵⁰] both ways.
            let decade = (k / 500) % 2 == 0 ? noise.uniform(-8, 0) : noise.uniform(0, 3)
            let p = pow(10, decade), c = k % 7 == 0 ? Double(1 + k % 3) : 1
            logs.add(p, multiplicity: c)
            direct += c * log(p)
        }
        #expect(abs(logs.value - direct) < 1e-12 * 10_000, "\(logs.value) against \(direct)")
        var zero = RangeErrorDensity.LogSum()
        zero.add(0.5); zero.add(0); zero.add(2)
        #expect(zero.value == -.infinity)
        var nan = RangeErrorDensity.LogSum()
        nan.add(0.5); nan.add(.nan)
        #expect(nan.value.isNaN)
        #expect(RangeErrorDensity.LogSum().value == 0)
    }

    @Test func theRangeErrorDensityIsADensityAndItsInformationIsRight() {
        let sigma = 0.35, v = sigma * sigma
        // A pure Gaussian carries exactly 1/σ² (UWB's bound is unchanged).
        #expect(RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: 0, excessRange: 0...0)
            .fisherInformation(variance: v) == 1 / v)
        // The simulator's Channel Sounding noise (15 % of ranges long by U(0.2, 1.5) m): computed
        // independently (numpy, analytic p′ over a fine grid) 0.7264/σ².
        let simulated = ChannelSoundingModel().rangeErrorDensity
        let information = simulated.fisherInformation(variance: v) * v
        #expect(abs(information - 0.7264) < 0.002, "\(information)")
        // It integrates to 1 (no outlier term, so no mass outside the grid).
        var mass = 0.0
        let h = 0.001
        for k in 0...8000 { mass += simulated.density(-2 + Double(k) * h, variance: v) * h }
        #expect(abs(mass - 1) < 1e-3, "\(mass)")
        // Far right of the plateau it is tiny but positive and decreasing (no 1 − 1 cancellation,
        // which made the information of the first version 9× too large).
        let tail = [3.5, 4.0, 4.5].map { simulated.notInlier($0, variance: v) }
        #expect(tail.allSatisfy { $0 > 0 } && tail[0] > tail[1] && tail[1] > tail[2], "\(tail)")
        // One-sided: a range 1.5 m long is likely multipath; one 1.5 m short is not.
        let engine = FusionOptions().forRanging(.bluetoothChannelSounding).rangeErrorDensity
        #expect(engine.density(1.5, variance: v) > 5 * engine.density(-1.5, variance: v))
    }

    @Test func longMultipathRangesPullTheBatchLessThanASymmetricModelWould() throws {
        // A device sweeping sideways 4 m from a tag; one range in six 1 m long. The
        // one-sided model explains them as multipath; the symmetric one (η = 0, the same gross
        // outlier rate) is pulled outwards by them. Independent ranges: isolated long ranges
        // every sixth procedure are not the bursts the chain expects (see FilterTests for those).
        let tag = Vector3(0, 1.4, -4)
        func solve(multipath eta: Double) -> Double {
            var o = FusionOptions().forRanging(.bluetoothChannelSounding)
            o.gating.rangeMultipathProbability = eta
            o.gating.rangeMultipathBurstSeconds = 0
            var window = MeasurementWindow(capacity: 128)
            for k in 0..<60 {
                let x = 0.5 * sin(Double(k) * 0.2), y = 1.4 + 0.3 * sin(Double(k) * 0.13)
                let pose = DevicePose(timestamp: Double(k) * 0.2, positionInWorld: Vector3(x, y, 0), worldFromDevice: .identity)
                let r = (tag - pose.positionInWorld).length + (k % 6 == 0 ? 1.0 : 0)
                window.append(WindowEntry(range: r, direction: nil, pose: pose, antennaInWorld: pose.positionInWorld,
                                          capabilities: .phone, options: o))
            }
            var mixture = PositionMixture(capacity: 4)
            mixture.reset(meanInWorld: Vector3(0, 1.4, -4.3), covariance: Matrix3.scaledIdentity(0.25))
            BatchRefinement.refine(&mixture, window: window, options: o)
            return (mixture.hypotheses[0].meanInWorld - tag).length
        }
        let oneSided = solve(multipath: 0.2), symmetric = solve(multipath: 0)
        #expect(oneSided < 0.1, "\(oneSided)")
        #expect(oneSided < 0.5 * symmetric, "one-sided \(oneSided) m, symmetric \(symmetric) m")
    }

    /// Acquired by the grid of directions (``FusionOptions/ChannelSounding/AcquisitionDensity/directionGrid``),
    /// a still tag coached through sweeps and a step (`cs-coached-step`, seeds 1–8) gets its
    /// first angle within 15° of the truth in at least 7 runs, as the bank does; the bank
    /// itself is then the grid's clusters (no more than the grid's clusters, each its own
    /// prior: nothing re-solves it), and the published distance is the grid's, within 0.3 m
    /// of the truth at the last update of every run.
    @Test func aGridOfDirectionsLocatesAStillTag() throws {
        var grid = FusionOptions()
        grid.channelSounding.acquisitionDensity = .directionGrid
        var good = 0
        for seed: UInt64 in 1...8 {
            let run = ScenarioRun(ScenarioCatalogue.channelSoundingTag(seed: seed), options: grid)
            if let first = run.horizontalAngleErrors.first, first <= Angle.radians(degrees: 15) { good += 1 }
            let acquiring = run.updates.filter { $0.hypothesisCount > 1 }
            #expect(acquiring.count > 20 && acquiring.allSatisfy { $0.hypothesisCount <= 96 })
            for u in acquiring.suffix(1) {
                #expect(u.hypotheses.allSatisfy { $0.meanInWorld == $0.priorMeanInWorld && $0.linearisation.entryCount == -1 })
            }
            let last = try #require(run.updates.last)
            let distance = try #require(last.estimate.distance)
            #expect(abs(distance - last.trueDistanceVector.length) < 0.3, "seed \(seed): \(distance) m against \(last.trueDistanceVector.length) m")
            #expect(run.updates.allSatisfy { $0.estimate.distance?.isFinite ?? true && $0.estimate.horizontalAngle?.isFinite ?? true })
        }
        #expect(good >= 7, "\(good) of 8 first angles within 15°")
    }

    /// Acquired by the grid, the convergence analysis judges the grid's own bearing spread, not
    /// its clusters': a grid made alone and fed the same ranges from the same antenna positions
    /// (a synthetic sweep, 3.3 ranges a second with seeded noise, no multipath) gives the
    /// engine's bearing σ at every update of the acquisition, and the engine's bank is never
    /// larger than the grid's clusters.
    @Test func theEngineJudgesTheGridsOwnBearingSpread() throws {
        var o = FusionOptions()
        o.channelSounding.acquisitionDensity = .directionGrid
        var engine = FusionEngine(options: o)
        let tag = engine.register(objectID: "tag", ranging: .bluetoothChannelSounding)
        let radio = o.forRanging(.bluetoothChannelSounding)
        let eta = radio.gating.rangeMultipathProbability, sigma = radio.sensors.rangeStandardDeviation
        var grid = DirectionGrid(directionCount: o.channelSounding.gridDirectionCount, clusterCount: 96,
                                 density: radio.rangeErrorDensity, variance: sigma * sigma,
                                 burstForgettingRate: 1 / (radio.gating.rangeMultipathBurstSeconds * (1 - eta)))
        var random = NoiseStream(seed: 23, source: "grid test ranges")
        let truth = Vector3(1.2, 1.0, -4.0)
        var compared = 0
        for k in 0..<150 {
            let t = 0.1 * Double(k)
            let p = Vector3(0.5 * sin(0.6 * t), 1.4 + 0.3 * sin(0.9 * t), -0.02 * t)
            _ = engine.ingest(DevicePose(timestamp: t, positionInWorld: p, worldFromDevice: .identity))
            guard k % 3 == 0 else { continue }
            let r = (truth - p).length + random.gaussian(standardDeviation: 0.3)
            _ = engine.ingest(UWBMeasurement(timestamp: t, distance: r, directionInDevice: nil), for: tag)
            if grid.isEmpty { grid.start(rangeMetres: r, antennaInWorld: p, at: t) } else { grid.add(rangeMetres: r, antennaInWorld: p, at: t) }
            let snapshot = engine.snapshot(tag)
            guard snapshot.hypothesisCount > 1, let assessment = snapshot.assessment else { continue }
            let expected = grid.bearingStandardDeviation(from: p)
            #expect(abs(assessment.horizontalAngleStandardDeviation - expected) < 1e-9,
                    "at \(t) s: the engine's σ \(assessment.horizontalAngleStandardDeviation), the grid's \(expected)")
            #expect(snapshot.hypothesisCount <= 96)
            compared += 1
        }
        #expect(compared > 20, "\(compared) updates compared")
    }

    /// A radio four and more times noisier than configured (`cs-rtt-still`, a round-trip-time
    /// estimator, σ 1.6–4.6 m) makes the engine learn its noise and re-solve the acquisition
    /// (`learnChannelSoundingRangeNoise`): the grid starts afresh and replays the window. Its
    /// published distance stays finite and, over seeds 1–4, its median error is below the raw
    /// ranges'.
    @Test func aGridReSolvedForALearnedNoisierRadioStillBeatsItsRanges() throws {
        var grid = FusionOptions()
        grid.channelSounding.acquisitionDensity = .directionGrid
        var published: [Double] = [], raw: [Double] = []
        for seed: UInt64 in 1...4 {
            let scenario = ScenarioCatalogue.channelSoundingProfileStill(seed: seed, stem: "cs-rtt", model: .roundTripTime)
            let run = ScenarioRun(scenario, options: grid)
            for u in run.updates {
                guard let r = u.rawDistance, let d = u.estimate.distance else { continue }
                #expect(d.isFinite)
                published.append(abs(d - u.trueDistanceVector.length))
                raw.append(abs(r - u.trueDistanceVector.length))
            }
        }
        published.sort(); raw.sort()
        let medians = (published[published.count / 2], raw[raw.count / 2])
        #expect(!published.isEmpty && medians.0 < medians.1, "published \(medians.0) m, raw \(medians.1) m")
    }

    @Test func evaluateTakesTheBoundAtTheAngleTheRadioPublishesAt() throws {
        // Channel Sounding publishes an angle at 10° σ, UWB at 3°: `evaluate`'s "bound allows"
        // moment (and its lag) is taken at that σ, so a Channel Sounding recording gets one.
        let datasets = TestSupport.datasets
        let cs = try #require(RecordingEvaluation.evaluate(path: datasets.appendingPathComponent("cs-coached-step.jsonl").path).objects.first)
        #expect(cs.boundAngleDegrees.map { abs($0 - 10) < 1e-9 } == true)
        let allowed = try #require(cs.boundAllowsAngleAfterSeconds)
        #expect(allowed > 10 && allowed < 16, "\(allowed)")
        let uwb = try #require(RecordingEvaluation.evaluate(path: datasets.appendingPathComponent("coached-sweep.jsonl").path).objects.first)
        #expect(uwb.boundAngleDegrees.map { abs($0 - 3) < 1e-9 } == true)
    }
}
