import Foundation
import NearbyFusion
import NearbyFusionRecording

// The runner: a scenario in, a recording's events out.

/// Produces a recording from a scenario. Deterministic: one seed, one byte stream.
public enum Simulator {
    /// The recording's events in time order: header, then poses, UWB updates, each preceded
    /// by its objects' timed truth (in the VIO frame), and removals.
    public static func events(for s: SimulationScenario) -> [RecordingEvent] { simulate(s).events }

    /// A simulated recording with, for every `pose` event, the device's true pose (what
    /// the sensed pose would be without VIO noise and drift).
    public struct Output: Sendable {
        /// The recording's events, header first.
        public var events: [RecordingEvent]
        /// `(t, true position, true world-from-device)`, one per pose event, in order.
        public var trueDevicePoses: [(time: Double, positionInWorld: Vector3, worldFromDevice: Quaternion)]
        /// Per Channel Sounding object whose radio's figures depend on its signal, the
        /// shadowing the run drew for it, dB (``ChannelSoundingModel/signal(atDistance:shadowing:)``).
        public var channelSoundingShadowing: [String: Double] = [:]
        /// One value per `uwb` event, in order: the part of its range, metres, that the radio's
        /// outliers put there — a UWB range's non-line-of-sight excess (bursts, walls, the
        /// user's body), a Channel Sounding range's multipath excess and short read (negative)
        /// — and 0 for a range without one or an event without a range. The range less this is
        /// what the radio's noise, bias and scale alone would have read (a stale repeat carries
        /// the part of the range it repeats).
        public var rangeOutlierMetres: [Double] = []
    }

    /// Runs the simulation: the recording and the truth that sensing hides. Poses at the
    /// VIO's rate and radio ticks at the radio's, merged in time order (UWB ticks fall half a
    /// VIO frame after the poses they follow).
    public static func simulate(_ s: SimulationScenario) -> Output {
        var run = SimulationRun(s)
        let duration = s.trajectory.duration
        let poseCount = Int((duration * s.vio.rateHz).rounded(.down))
        let uwbCount = Int((duration * s.radio.rateHz).rounded(.down))
        var poseIndex = 0, uwbIndex = 0
        let uwbOffset = 0.5 / s.vio.rateHz
        while poseIndex <= poseCount || uwbIndex <= uwbCount {
            let tPose = Double(poseIndex) / s.vio.rateHz
            let tUWB = Double(uwbIndex) / s.radio.rateHz + uwbOffset
            if poseIndex <= poseCount && (tPose <= tUWB || uwbIndex > uwbCount) {
                run.writePose(at: tPose)
                poseIndex += 1
            } else {
                run.writeRadioTick(at: tUWB, tick: uwbIndex)
                uwbIndex += 1
            }
        }
        return Output(events: run.events, trueDevicePoses: run.trueDevicePoses, channelSoundingShadowing: run.channelSounding.shadowing,
                      rangeOutlierMetres: run.rangeOutlierMetres)
    }

    /// The recording as JSON Lines text (each line ends with a newline).
    public static func recordingText(for s: SimulationScenario) -> String {
        JSONLines.text(events(for: s))
    }

    static func round4(_ x: Double) -> Double { JSONLines.rounded(x, places: 4) }
    static func round6(_ x: Double) -> Double { JSONLines.rounded(x, places: 6) }
    static func round6(_ v: Vector3) -> Vector3 { JSONLines.rounded(v, places: 6) }
    static func round9(_ v: Vector3) -> Vector3 { JSONLines.rounded(v, places: 9) }
    static func round9(_ q: Quaternion) -> Quaternion { JSONLines.rounded(q, places: 9) }
}

/// One simulation in progress: the scenario's seeded noise streams (one per source, so that
/// changing how one is used leaves the others' draws alone), the device's true path so far,
/// and the events written.
struct SimulationRun {
    let s: SimulationScenario
    var vioNoise, rangeNoise, angleNoise, nlosNoise, dropNoise, occlusionNoise, staleNoise: NoiseStream
    var inBurst: [String: Bool] = [:]
    /// Per UWB object: the last range's Gaussian error (metres, for correlated noise) and the
    /// last range reported (metres, for stale repeats).
    var lastRangeError: [String: Double] = [:]
    var lastReportedRange: [String: Double] = [:]
    /// The outlier part of each `uwb` event's range (``Simulator/Output/rangeOutlierMetres``),
    /// and of the last range reported per object (for stale repeats), metres.
    var rangeOutlierMetres: [Double] = []
    var lastReportedOutlier: [String: Double] = [:]
    var channelSounding: ChannelSoundingSensor
    /// Hand tremor: three sinusoids per axis (4–10 Hz) with seeded frequencies and phases.
    let tremorTerms: [(axis: Vector3, amplitude: Double, frequency: Double, phase: Double)]
    /// The direction the VIO drifts in, a unit vector in the world frame.
    let driftDirection: Vector3
    var events: [RecordingEvent] = []
    var trueDevicePoses: [(time: Double, positionInWorld: Vector3, worldFromDevice: Quaternion)] = []
    /// Sensed − true device position at the last pose, metres (where the app sees the world).
    var vioOffset = Vector3.zero
    /// True device path length so far, metres.
    var pathLength = 0.0
    var lastTruePosition: Vector3?
    var removed = Set<String>()
    var hinted = Set<SimulationScenario.MotionHint>()

    /// Seeds the streams, draws the tremor and the drift direction, and writes the header.
    init(_ s: SimulationScenario) {
        self.s = s
        var tremor = NoiseStream(seed: s.seed, source: "tremor")
        vioNoise = NoiseStream(seed: s.seed, source: "vio.noise")
        var driftNoise = NoiseStream(seed: s.seed, source: "vio.drift")
        rangeNoise = NoiseStream(seed: s.seed, source: "uwb.range")
        angleNoise = NoiseStream(seed: s.seed, source: "uwb.angle")
        nlosNoise = NoiseStream(seed: s.seed, source: "uwb.nlos")
        dropNoise = NoiseStream(seed: s.seed, source: "uwb.dropout")
        occlusionNoise = NoiseStream(seed: s.seed, source: "uwb.occlusion")
        staleNoise = NoiseStream(seed: s.seed, source: "uwb.stale")
        channelSounding = ChannelSoundingSensor(model: s.channelSounding, seed: s.seed)
        var terms: [(axis: Vector3, amplitude: Double, frequency: Double, phase: Double)] = []
        for axis in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)] {
            for _ in 0..<3 { terms.append((axis, s.tremorAmplitude, tremor.uniform(4, 10), tremor.uniform(0, 2 * .pi))) }
        }
        tremorTerms = terms
        driftDirection = Vector3(driftNoise.gaussian(), 0.3 * driftNoise.gaussian(), driftNoise.gaussian()).normalized
        events.append(.header(RecordingHeader(deviceName: s.deviceName, capabilities: s.radio.capabilities,
                                              arConfiguration: ARConfigurationDescription(),
                                              objects: s.objects.map { ($0.id, $0.kind) },
                                              rangingByObject: Dictionary(uniqueKeysWithValues: s.objects.filter { $0.ranging != .uwb }
                                                .map { ($0.id, $0.ranging) }))))
    }

    /// The device's true pose at `t`: the trajectory plus hand tremor, and how it is held.
    func truePose(_ t: Double) -> (Vector3, Quaternion, DeviceHold) {
        let (position, orientation) = s.trajectory.pose(at: t)
        var p = position
        for term in tremorTerms { p += term.amplitude * sin(2 * .pi * term.frequency * t + term.phase) * term.axis }
        return (p, orientation, s.trajectory.isLandscape(at: t) ? .landscape : .portrait)
    }

    /// One VIO pose: the true pose plus drift `k_d · s · d` (s the path length so far) and
    /// white position and orientation noise, with ARKit's tracking state.
    mutating func writePose(at tPose: Double) {
        let (p, q, _) = truePose(tPose)
        var speed = 0.0
        if let last = lastTruePosition {
            let step = (p - last).length
            pathLength += step
            speed = step * s.vio.rateHz
        }
        lastTruePosition = p
        let sensedPosition = p + (s.vio.driftFraction * pathLength) * driftDirection
            + Vector3(vioNoise.gaussian(standardDeviation: s.vio.positionNoise),
                      vioNoise.gaussian(standardDeviation: s.vio.positionNoise),
                      vioNoise.gaussian(standardDeviation: s.vio.positionNoise))
        let n = s.vio.orientationNoise
        let wobble = Quaternion(angle: (Vector3(vioNoise.gaussian(), vioNoise.gaussian(), vioNoise.gaussian()) * n).length,
                                axis: Vector3(vioNoise.gaussian(), vioNoise.gaussian(), vioNoise.gaussian()))
        let sensedOrientation = (q * wobble).normalized
        let tracking: TrackingState
        if tPose < s.vio.initializingDuration { tracking = .limited(.initializing) }
        else if s.vio.ambientIntensity < 50 { tracking = .limited(.insufficientFeatures) }
        else if speed > s.vio.excessiveSpeed { tracking = .limited(.excessiveMotion) }
        else { tracking = .normal }
        trueDevicePoses.append((Simulator.round6(tPose), p, q))
        vioOffset = Simulator.round6(sensedPosition) - p
        events.append(.pose(DevicePose(timestamp: Simulator.round6(tPose), positionInWorld: Simulator.round6(sensedPosition),
                                       worldFromDevice: Simulator.round9(sensedOrientation), tracking: tracking,
                                       ambientIntensity: s.vio.ambientIntensity)))
    }

    /// One radio tick: for each object still present, its removal, the app's motion hints
    /// now due, its timed truth — written where the app sees it, in the VIO's own drifting
    /// frame (true position + ``vioOffset``), the same truth `ScenarioRun` scores against, so
    /// that `evaluate`, `report`, `coach` and `accuracy` agree on a recording — and its
    /// measurement (UWB, or Channel Sounding through ``ChannelSoundingSensor``).
    mutating func writeRadioTick(at t: Double, tick: Int) {
        let (p, q, hold) = truePose(t)
        for o in s.objects {
            if removed.contains(o.id) { continue }
            if let r = o.removedAt, t >= r {
                removed.insert(o.id)
                events.append(.removed(objectID: o.id, timestamp: Simulator.round6(t), reason: o.removalReason))
                continue
            }
            let objectPosition = o.position(at: t)
            for hint in s.motionHints where hint.objectID == o.id && hint.time <= t && !hinted.contains(hint) {
                hinted.insert(hint)
                events.append(.motionState(objectID: o.id, timestamp: Simulator.round6(t), state: hint.state))
            }
            events.append(.truth(objectID: o.id, timestamp: Simulator.round6(t), positionInWorld: Simulator.round6(objectPosition + vioOffset)))
            let antenna = p + q.rotate(s.radio.antennaOffsetInDevice)
            if o.ranging == .bluetoothChannelSounding {
                if let m = channelSounding.measure(o, objectPosition: objectPosition, antenna: antenna,
                                                   tick: tick, at: t, radioRateHz: s.radio.rateHz) {
                    events.append(.uwb(objectID: o.id, UWBMeasurement(timestamp: Simulator.round6(t), distance: m.map(Simulator.round4), directionInDevice: nil)))
                    rangeOutlierMetres.append(m == nil ? 0 : channelSounding.lastOutlierMetres)
                }
                continue
            }
            if dropNoise.bernoulli(s.radio.dropoutProbability) { continue }
            var sensed = s.radio.capabilities.supportsPreciseDistanceMeasurement
                ? sensedRange(of: o, at: objectPosition, antenna: antenna, devicePosition: p, worldFromDevice: q) : nil
            if sensed != nil, s.radio.staleRepeatProbability > 0 {
                // A stale repeat: the previous range again (the fresh one is drawn all the same,
                // so that a repeat does not shift later draws).
                if staleNoise.bernoulli(s.radio.staleRepeatProbability), let previous = lastReportedRange[o.id] {
                    sensed = (previous, lastReportedOutlier[o.id] ?? 0)
                }
                lastReportedRange[o.id] = sensed?.range
                lastReportedOutlier[o.id] = sensed?.outlier
            }
            let distance = sensed?.range
            let direction = sensedDirection(to: objectPosition - antenna, worldFromDevice: q, hold: hold)
            events.append(.uwb(objectID: o.id, UWBMeasurement(timestamp: Simulator.round6(t), distance: distance.map(Simulator.round4),
                                                             directionInDevice: direction)))
            rangeOutlierMetres.append(sensed?.outlier ?? 0)
        }
    }

    /// A UWB range, metres: the true distance plus white noise, plus a positive excess for
    /// non-line-of-sight (independent, or in bursts: a two-state Markov chain with mean
    /// burst length `L` and stationary probability `π`, leaving a burst with probability
    /// `1/L` and entering one with `π/(L(1 − π))`), walls and the user's body; at least 1 cm.
    /// The white noise is AR(1) over updates when the radio gives it a correlation time `τ`
    /// (`eₖ = φ eₖ₋₁ + √(1 − φ²) σ wₖ`, `φ = e^{−Δt/τ}`, `Δt` one radio tick), and a constant
    /// ``RadioModel/rangeBias`` is added. Returns the range and what the non-line-of-sight
    /// excess, walls and body put into it, metres (``Simulator/Output/rangeOutlierMetres``).
    mutating func sensedRange(of o: SimulatedObject, at objectPosition: Vector3, antenna: Vector3,
                              devicePosition p: Vector3, worldFromDevice q: Quaternion) -> (range: Double, outlier: Double) {
        var error = rangeNoise.gaussian(standardDeviation: s.radio.rangeStandardDeviation)
        if s.radio.rangeErrorCorrelationSeconds > 0 {
            let phi = exp(-1 / (s.radio.rateHz * s.radio.rangeErrorCorrelationSeconds))
            error = autoregressive(error, previous: lastRangeError[o.id], correlation: phi)
            lastRangeError[o.id] = error
        }
        var r = (objectPosition - antenna).length + error + s.radio.rangeBias
        let clean = r
        let nlos: Bool
        if s.radio.nlosMeanBurstLength <= 1 {
            nlos = nlosNoise.bernoulli(s.radio.nlosProbability)
        } else {
            let exit = 1 / s.radio.nlosMeanBurstLength
            let pi = min(max(s.radio.nlosProbability, 0), 0.999)
            let now = inBurst[o.id] ?? false
            nlos = now ? !nlosNoise.bernoulli(exit) : nlosNoise.bernoulli(exit * pi / (1 - pi))
            inBurst[o.id] = nlos
        }
        if nlos {
            r += nlosNoise.uniform(s.radio.nlosBiasRange.lowerBound, s.radio.nlosBiasRange.upperBound)
        }
        for wall in s.radio.occluders where wall.blocks(from: antenna, to: objectPosition) {
            r += occlusionNoise.uniform(wall.biasRange.lowerBound, wall.biasRange.upperBound)
        }
        if let body = s.radio.bodyOcclusionBiasRange,
           Self.bodyBlocks(from: antenna, to: objectPosition, devicePosition: p, worldFromDevice: q) {
            r += occlusionNoise.uniform(body.lowerBound, body.upperBound)
        }
        let range = max(r, 0.01)
        return (range, range - max(clean, 0.01))
    }

    /// Whether the user's torso — 0.45 m wide, 0.6 m tall, 0.25 m deep, starting 0.3 m
    /// behind the phone — lies on the segment from the antenna to the object.
    static func bodyBlocks(from antenna: Vector3, to objectPosition: Vector3, devicePosition p: Vector3,
                           worldFromDevice q: Quaternion) -> Bool {
        let forward = Vector3(q.rotate(Vector3(0, 0, -1)).x, 0, q.rotate(Vector3(0, 0, -1)).z).normalized
        let right = Vector3(-forward.z, 0, forward.x)
        let centre = p - 0.425 * forward - Vector3(0, 0.25, 0)
        let torso = Occluder(minimumCorner: Vector3(-0.225, -0.3, -0.125), maximumCorner: Vector3(0.225, 0.3, 0.125),
                             biasRange: 0...0)
        // The segment in the torso's frame (right, up, −forward).
        func toLocal(_ v: Vector3) -> Vector3 { let d = v - centre; return Vector3(d.dot(right), d.y, -d.dot(forward)) }
        return torso.blocks(from: toLocal(antenna), to: toLocal(objectPosition))
    }

    /// A UWB direction in the device frame: the true azimuth and elevation plus white noise,
    /// only inside the radio's field of view, in portrait, and when not dropped (elevation 0
    /// on devices that measure none). The noise is drawn whether or not it is used, so that
    /// a direction's presence does not shift later draws.
    mutating func sensedDirection(to toObject: Vector3, worldFromDevice q: Quaternion, hold: DeviceHold) -> Vector3? {
        let inDevice = q.inverseRotate(toObject)
        let azNoise = angleNoise.gaussian(standardDeviation: s.radio.azimuthStandardDeviation)
        let elNoise = angleNoise.gaussian(standardDeviation: s.radio.elevationStandardDeviation)
        let dirDrop = angleNoise.bernoulli(s.radio.directionDropoutProbability)
        guard s.radio.capabilities.supportsDirectionMeasurement, hold == .portrait, !dirDrop,
              DeviceAngles.offAxisAngle(inDevice) <= s.radio.fieldOfViewHalfAngle else { return nil }
        let angles = DeviceAngles.azimuthElevation(inDevice)
        let elevation = s.radio.capabilities.supportsElevationMeasurement ? angles.y + elNoise : 0
        var d = DeviceAngles.direction(azimuth: angles.x + azNoise, elevation: elevation)
        if !s.radio.capabilities.supportsElevationMeasurement { d.y = 0 }
        return Simulator.round9(d).normalized
    }
}
