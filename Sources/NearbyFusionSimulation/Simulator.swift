import Foundation
import NearbyFusion
import NearbyFusionRecording

/// A simulated nearby object (truth).
public struct SimulatedObject: Sendable, Hashable {
    public var id: String
    public var kind: ObjectKind
    /// Position at `t = 0`, world frame, metres.
    public var positionInWorld: Vector3
    /// Constant velocity (a slowly walking peer), m/s.
    public var velocityInWorld: Vector3
    /// From each change's time on, the object moves at that velocity instead (m/s; zero to
    /// stop): a tag picked up and put down, a peer who walks, turns and stops. In time order.
    public var velocityChanges: [VelocityChange] = []
    /// The object is removed at this time, seconds, for `removalReason`.
    public var removedAt: Double?
    public var removalReason: RemovalReason = .timeout
    /// The radio that ranges to it (Channel Sounding objects are sensed by the scenario's
    /// ``SimulationScenario/channelSounding`` model).
    public var ranging: RangingTechnology = .uwb

    /// From `time` (seconds) on, the object moves at `velocityInWorld` (m/s, world frame).
    public struct VelocityChange: Sendable, Hashable {
        public var time: Double
        public var velocityInWorld: Vector3
        public init(time: Double, velocityInWorld: Vector3) {
            self.time = time
            self.velocityInWorld = velocityInWorld
        }
    }

    public init(id: String, kind: ObjectKind = .accessory, positionInWorld: Vector3, velocityInWorld: Vector3 = .zero,
                removedAt: Double? = nil) {
        self.id = id
        self.kind = kind
        self.positionInWorld = positionInWorld
        self.velocityInWorld = velocityInWorld
        self.removedAt = removedAt
    }

    /// The position at `t` seconds: the start position moved by each piece of constant
    /// velocity up to `t`.
    public func position(at t: Double) -> Vector3 {
        var p = positionInWorld, since = 0.0, v = velocityInWorld
        for change in velocityChanges where change.time < t {
            p += (change.time - since) * v
            since = change.time
            v = change.velocityInWorld
        }
        return p + (t - since) * v
    }

    /// The velocity at `t` seconds, m/s.
    public func velocity(at t: Double) -> Vector3 {
        velocityChanges.last(where: { $0.time < t })?.velocityInWorld ?? velocityInWorld
    }

    /// Whether the object ever moves (its truth is then written with a time at every update).
    public var moves: Bool { velocityInWorld != .zero || velocityChanges.contains { $0.velocityInWorld != .zero } }
}

/// A Bluetooth Channel Sounding link's sensing model (distance only). Its defaults are the
/// figures the engine's Channel Sounding noise model cites (`FusionOptions`): a 0.35 m
/// jitter for phone-class antennas, multipath that adds 0.2–1.5 m of positive excess in
/// bursts (80 MHz resolves paths only ~1.9 m apart), 10 % of procedures failing (a `nil`
/// distance), and a rate that drops when other Bluetooth or Wi-Fi traffic rises.
public struct ChannelSoundingModel: Sendable, Hashable {
    /// Procedures per second with no other traffic.
    public var rateHz: Double = 5
    /// Range noise σ, metres.
    public var rangeStandardDeviation: Double = 0.35
    /// Probability that a procedure's range carries multipath excess, and the mean length of
    /// a burst of such procedures.
    public var multipathProbability: Double = 0.15
    public var multipathMeanBurstLength: Double = 3
    /// Positive excess of a multipath range, metres (uniform).
    public var multipathExcessRange: ClosedRange<Double> = 0.2...1.5
    /// Probability that a procedure fails (the update carries `distance: null`).
    public var failedProcedureProbability: Double = 0.1
    /// Every `trafficPeriod` seconds the share of procedures lost to other traffic is drawn
    /// anew, uniformly in this range: the rate varies between 5 and 2.5 Hz.
    public var trafficLossRange: ClosedRange<Double> = 0...0.5
    public var trafficPeriod: Double = 3
    public init() {}

    /// The density of this model's range error (jitter, plus the multipath excess in a
    /// `multipathProbability` share of ranges), as the engine writes one.
    public var rangeErrorDensity: RangeErrorDensity {
        RangeErrorDensity(outlierProbability: 0, outlierSpan: 1, excessProbability: multipathProbability,
                          excessRange: multipathExcessRange)
    }

    /// The Fisher information one of these ranges carries, m⁻²: with the defaults 0.73/σ²,
    /// so the Cramér–Rao bound is 1.17× the one of the jitter alone (which no estimator can
    /// reach: a multipath range tells less). Bursts make neighbouring ranges share their
    /// excess; the bound treats them as independent, so it stays optimistic.
    public var rangeFisherInformation: Double {
        rangeErrorDensity.fisherInformation(variance: rangeStandardDeviation * rangeStandardDeviation)
    }
}

/// The UWB radio's sensing model.
public struct RadioModel: Sendable, Hashable {
    public var capabilities: DeviceCapabilities = .phone
    /// Updates per second per object.
    public var rateHz: Double = 10
    /// Range noise σ, metres.
    public var rangeStandardDeviation: Double = 0.06
    /// Azimuth and elevation noise σ, radians.
    public var azimuthStandardDeviation: Double = Angle.radians(degrees: 3)
    public var elevationStandardDeviation: Double = Angle.radians(degrees: 5)
    /// Direction only inside this half-angle around device −Z, radians.
    public var fieldOfViewHalfAngle: Double = Angle.radians(degrees: 55)
    /// Probability that one range is non-line-of-sight, and its positive bias range, metres.
    public var nlosProbability: Double = 0
    public var nlosBiasRange: ClosedRange<Double> = 0.5...2.0
    /// Mean length, in updates, of a non-line-of-sight burst. 1 draws each update
    /// independently; longer bursts follow a two-state Markov chain whose stationary NLOS
    /// probability is `nlosProbability` (leave NLOS with probability 1/L, enter it with
    /// probability (1/L)·π/(1 − π)).
    public var nlosMeanBurstLength: Double = 1
    /// Boxes (a wall, furniture) that add a positive range bias, metres, when the line of
    /// sight crosses them.
    public var occluders: [Occluder] = []
    /// When set, the user's body (modelled as a box 0.45 m wide behind the phone) adds a
    /// bias from this range to ranges whose line of sight passes through it.
    public var bodyOcclusionBiasRange: ClosedRange<Double>? = nil
    /// Probability that a whole update is lost.
    public var dropoutProbability: Double = 0.02
    /// Probability that the direction is missing inside the field of view.
    public var directionDropoutProbability: Double = 0.05
    /// UWB antenna relative to the camera, device frame, metres.
    public var antennaOffsetInDevice: Vector3 = .zero
    public init() {}
}

/// An axis-aligned box in the world that biases ranges through it (non-line-of-sight).
public struct Occluder: Sendable, Hashable {
    public var minimumCorner: Vector3
    public var maximumCorner: Vector3
    /// Positive range bias, metres, drawn uniformly per update.
    public var biasRange: ClosedRange<Double>

    public init(minimumCorner: Vector3, maximumCorner: Vector3, biasRange: ClosedRange<Double>) {
        self.minimumCorner = minimumCorner
        self.maximumCorner = maximumCorner
        self.biasRange = biasRange
    }

    /// Whether the segment from `a` to `b` crosses the box (slab test).
    public func blocks(from a: Vector3, to b: Vector3) -> Bool {
        var t0 = 0.0, t1 = 1.0
        let d = b - a
        for (o, dir, lo, hi) in [(a.x, d.x, minimumCorner.x, maximumCorner.x), (a.y, d.y, minimumCorner.y, maximumCorner.y),
                                 (a.z, d.z, minimumCorner.z, maximumCorner.z)] {
            if abs(dir) < 1e-12 {
                if o < lo || o > hi { return false }
            } else {
                var ta = (lo - o) / dir, tb = (hi - o) / dir
                if ta > tb { swap(&ta, &tb) }
                t0 = max(t0, ta); t1 = min(t1, tb)
                if t0 > t1 { return false }
            }
        }
        return true
    }
}

/// The VIO's sensing model and the scene.
public struct VIOModel: Sendable, Hashable {
    public var rateHz: Double = 60
    /// White position noise σ, metres, and orientation noise σ, radians.
    public var positionNoise: Double = 0.002
    public var orientationNoise: Double = Angle.radians(degrees: 0.2)
    /// Drift as a fraction of the distance travelled (a fixed random direction).
    public var driftFraction: Double = 0.005
    /// ARKit's ambient intensity of the scene, lumens (below ~50 tracking is limited by
    /// insufficient features).
    public var ambientIntensity: Double = 1000
    /// Seconds of `limited(initializing)` at the start.
    public var initializingDuration: Double = 0.3
    /// Speed above which tracking is `limited(excessiveMotion)`, m/s.
    public var excessiveSpeed: Double = 2.5
    public init() {}
}

/// A complete, seeded simulation: truth (device trajectory, objects) and sensing
/// (VIO, radio).
public struct SimulationScenario: Sendable {
    public var name: String
    public var trajectory: any DevicePath
    public var objects: [SimulatedObject]
    public var radio = RadioModel()
    public var vio = VIOModel()
    public var deviceName = "phone"
    /// Amplitude of each of the hand-tremor sinusoids, metres (0 for a recorded path,
    /// which has its own).
    public var tremorAmplitude = 0.0015
    public var seed: UInt64
    /// The sensing model of objects ranged by Bluetooth Channel Sounding.
    public var channelSounding = ChannelSoundingModel()
    /// What the app tells the engine about objects' motion (`motionState` lines), written
    /// at the first radio tick at or after each hint's time.
    public var motionHints: [MotionHint] = []

    /// The app says `state` about object `objectID` at `time` seconds.
    public struct MotionHint: Sendable, Hashable {
        public var time: Double
        public var objectID: String
        public var state: MotionActivityState
        public init(time: Double, objectID: String, state: MotionActivityState) {
            self.time = time
            self.objectID = objectID
            self.state = state
        }
    }

    /// Replaces the scripted motion with a recorded device path (TUM, EuRoC, …), moved
    /// rigidly to start at `start` facing −Z (``SampledDevicePath/aligned(start:)``). A
    /// recorded hand already trembles, so no synthetic tremor is added.
    public mutating func useRecordedPath(_ poses: [DevicePose], start: Vector3 = Vector3(0, 1.4, 0)) {
        trajectory = SampledDevicePath(poses: poses).aligned(start: start)
        tremorAmplitude = 0
    }

    public init(name: String, trajectory: any DevicePath, objects: [SimulatedObject], seed: UInt64) {
        self.name = name
        self.trajectory = trajectory
        self.objects = objects
        self.seed = seed
    }
}

/// Produces a recording from a scenario. Deterministic: one seed, one byte stream.
public enum Simulator {
    /// The recording's events in time order: header, then poses, UWB updates, each preceded
    /// by its objects' timed truth (in the VIO frame), and removals.
    public static func events(for s: SimulationScenario) -> [RecordingEvent] { simulate(s).events }

    /// A simulated recording with, for every `pose` event, the device's true pose (what
    /// the sensed pose would be without VIO noise and drift).
    public struct Output: Sendable {
        public var events: [RecordingEvent]
        /// `(t, true position, true world-from-device)`, one per pose event, in order.
        public var trueDevicePoses: [(time: Double, positionInWorld: Vector3, worldFromDevice: Quaternion)]
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
        return Output(events: run.events, trueDevicePoses: run.trueDevicePoses)
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

/// Senses Channel Sounding objects for ``Simulator``, with its own seeded streams (so that
/// adding such an object changes no UWB draw).
struct ChannelSoundingSensor {
    let model: ChannelSoundingModel
    var rangeNoise: NoiseStream
    var multipathNoise: NoiseStream
    var trafficNoise: NoiseStream
    var failureNoise: NoiseStream
    var inBurst: [String: Bool] = [:]
    var trafficLoss = 0.0
    var trafficBlock = -1

    init(model: ChannelSoundingModel, seed: UInt64) {
        self.model = model
        rangeNoise = NoiseStream(seed: seed, source: "cs.range")
        multipathNoise = NoiseStream(seed: seed, source: "cs.multipath")
        trafficNoise = NoiseStream(seed: seed, source: "cs.traffic")
        failureNoise = NoiseStream(seed: seed, source: "cs.failure")
    }

    /// The procedure at radio tick `tick` (time `t`): `nil` when no procedure runs then (the
    /// Channel Sounding rate is a fraction of the radio tick rate, less what traffic takes),
    /// `.some(nil)` when it fails, else the measured range, metres.
    mutating func measure(_ o: SimulatedObject, objectPosition: Vector3, antenna: Vector3, tick: Int, at t: Double,
                          radioRateHz: Double) -> Double?? {
        let every = max(1, Int((radioRateHz / model.rateHz).rounded()))
        guard tick % every == 0 else { return nil }
        let block = Int(t / model.trafficPeriod)
        if block != trafficBlock {
            trafficBlock = block
            trafficLoss = trafficNoise.uniform(model.trafficLossRange.lowerBound, model.trafficLossRange.upperBound)
        }
        if trafficNoise.bernoulli(trafficLoss) { return nil }
        if failureNoise.bernoulli(model.failedProcedureProbability) { return .some(nil) }
        var r = (objectPosition - antenna).length + rangeNoise.gaussian(standardDeviation: model.rangeStandardDeviation)
        // Multipath excess in Markov bursts (mean length `multipathMeanBurstLength`).
        let exit = 1 / max(model.multipathMeanBurstLength, 1)
        let pi = min(max(model.multipathProbability, 0), 0.999)
        let now = inBurst[o.id] ?? false
        let multipath = now ? !multipathNoise.bernoulli(exit) : multipathNoise.bernoulli(exit * pi / (1 - pi))
        inBurst[o.id] = multipath
        if multipath { r += multipathNoise.uniform(model.multipathExcessRange.lowerBound, model.multipathExcessRange.upperBound) }
        return .some(max(r, 0.05))
    }
}

/// One simulation in progress: the scenario's seeded noise streams (one per source, so that
/// changing how one is used leaves the others' draws alone), the device's true path so far,
/// and the events written.
struct SimulationRun {
    let s: SimulationScenario
    var vioNoise, rangeNoise, angleNoise, nlosNoise, dropNoise, occlusionNoise: NoiseStream
    var inBurst: [String: Bool] = [:]
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
                }
                continue
            }
            if dropNoise.bernoulli(s.radio.dropoutProbability) { continue }
            let distance = s.radio.capabilities.supportsPreciseDistanceMeasurement
                ? sensedRange(of: o, at: objectPosition, antenna: antenna, devicePosition: p, worldFromDevice: q) : nil
            let direction = sensedDirection(to: objectPosition - antenna, worldFromDevice: q, hold: hold)
            events.append(.uwb(objectID: o.id, UWBMeasurement(timestamp: Simulator.round6(t), distance: distance.map(Simulator.round4),
                                                             directionInDevice: direction)))
        }
    }

    /// A UWB range, metres: the true distance plus white noise, plus a positive excess for
    /// non-line-of-sight (independent, or in bursts: a two-state Markov chain with mean
    /// burst length `L` and stationary probability `π`, leaving a burst with probability
    /// `1/L` and entering one with `π/(L(1 − π))`), walls and the user's body; at least 1 cm.
    mutating func sensedRange(of o: SimulatedObject, at objectPosition: Vector3, antenna: Vector3,
                              devicePosition p: Vector3, worldFromDevice q: Quaternion) -> Double {
        var r = (objectPosition - antenna).length + rangeNoise.gaussian(standardDeviation: s.radio.rangeStandardDeviation)
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
        return max(r, 0.01)
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
