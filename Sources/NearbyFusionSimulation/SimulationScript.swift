import Foundation
import NearbyFusion
import NearbyFusionRecording

/// A problem in a simulation script, located by file and line.
public struct ScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The script's file.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// What is wrong.
    public var message: String
    /// `FILE:LINE: MESSAGE`, or `FILE: MESSAGE` for a problem with the whole script (line 0).
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}

/// The text form of a simulation: one statement per line, `#` starts a comment. Scene
/// statements may come in any order; motion statements play in order. Lengths in metres,
/// durations in seconds, angles in **degrees**, light in lumens. Example:
///
/// ```
/// device phone                       # phone | phone-without-elevation | watch | no-camera-assistance
/// object tag accessory at -1.5 1.0 -4.8
/// light 800
/// radio nlos 0.2 burst 3
/// still 1
/// sweep-sideways 4.8 amplitude 0.3 period 1.6
/// sweep-up-down 3.2
/// walk 3 distance 1.5
/// ```
///
/// Statements (`[…]` optional, any order of `key value` pairs):
/// - `device PROFILE`
/// - `start X Y Z [heading DEG]` — where the device starts (default 0 1.4 0, heading 0 = −Z)
/// - `object ID accessory|peer at X Y Z [velocity VX VY VZ] [removed T [timeout|peerEnded]]`
/// - `light LUMENS`
/// - `radio [rate HZ] [range-sigma M] [azimuth-sigma DEG] [elevation-sigma DEG] [fov DEG] [nlos P]
///   [burst UPDATES] [nlos-bias MIN MAX] [dropout P] [direction-dropout P] [antenna X Y Z]`
/// - `vio [rate HZ] [noise M] [orientation-noise DEG] [drift FRACTION] [initializing S]`
/// - `tremor M` — amplitude of each hand-tremor sinusoid
/// - `body-occlusion MIN MAX` — bias for ranges through the user's body
/// - `wall X0 Y0 Z0 X1 Y1 Z1 bias MIN MAX` — an axis-aligned occluding box
/// - `path tum|euroc FILE` — a recorded device path instead of the motion statements
/// - motions: `still S`, `sweep-sideways S [amplitude M] [period S] [arc M]`,
///   `sweep-up-down S [amplitude M] [period S]`, `figure-eight S [amplitude M] [period S]`,
///   `walk S distance M`, `sidestep S distance M`, `turn S angle DEG`, `hold portrait|landscape`
public enum SimulationScript {
    /// Parses a script. `path` statements are resolved relative to `directory`.
    public static func parse(_ text: String, file: String = "script", directory: String = ".", seed: UInt64) throws(ScriptError) -> SimulationScenario {
        var builder = ScenarioBuilder()
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let content = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let keyword = words.first else { continue }
            var cursor = Cursor(words: words, index: 1, file: file, line: lineNumber)
            if try !builder.readMotion(keyword, &cursor), try !builder.readScene(keyword, &cursor, directory: directory) {
                throw cursor.error("unknown statement '\(keyword)'")
            }
            try cursor.end()
        }
        return try builder.scenario(file: file, seed: seed)
    }

    /// What the statements read so far describe.
    struct ScenarioBuilder {
        var segments: [MotionSegment] = []
        var objects: [SimulatedObject] = []
        var radio = RadioModel()
        var vio = VIOModel()
        var start = Vector3(0, 1.4, 0), heading = 0.0
        var deviceName = "phone"
        var tremor = 0.0015
        var recordedPoses: [DevicePose]?

        /// A scene statement (device, objects, light, radio, VIO, occluders, recorded path);
        /// `false` if `keyword` is none.
        ///
        /// Long on purpose: one `case` per statement of the script format, in the order the
        /// format's documentation lists them.
        mutating func readScene(_ keyword: String, _ cursor: inout Cursor, directory: String) throws(ScriptError) -> Bool {
            switch keyword {
            case "device":
                let profile = try cursor.word("a device profile")
                switch profile {
                case "phone": radio.capabilities = .phone
                case "phone-without-elevation": radio.capabilities = .phoneWithoutElevation
                case "watch": radio.capabilities = .distanceOnly; deviceName = "watch"
                case "no-camera-assistance": radio.capabilities.supportsCameraAssistance = false
                default: throw cursor.error("unknown device profile '\(profile)' (phone, phone-without-elevation, watch, no-camera-assistance)")
                }
            case "start":
                start = try cursor.vector()
                try cursor.options { key, c throws(ScriptError) in
                    guard key == "heading" else { return false }
                    heading = Angle.radians(degrees: try c.number(key)); return true
                }
            case "object":
                let id = try cursor.word("an object id")
                let kindName = try cursor.word("accessory or peer")
                guard let kind = ObjectKind(rawValue: kindName) else { throw cursor.error("unknown object kind '\(kindName)' (accessory or peer)") }
                try cursor.expect("at")
                var object = SimulatedObject(id: id, kind: kind, positionInWorld: try cursor.vector())
                try cursor.options { key, c throws(ScriptError) in
                    switch key {
                    case "velocity": object.velocityInWorld = try c.vector()
                    case "removed":
                        object.removedAt = try c.number("removed")
                        if let next = c.peek, let reason = RemovalReason(rawValue: next) { c.index += 1; object.removalReason = reason }
                    default: return false
                    }
                    return true
                }
                guard !objects.contains(where: { $0.id == id }) else { throw cursor.error("duplicate object '\(id)'") }
                objects.append(object)
            case "light": vio.ambientIntensity = try cursor.number("light")
            case "tremor": tremor = try cursor.number("tremor")
            case "body-occlusion": radio.bodyOcclusionBiasRange = try cursor.range()
            case "wall":
                let a = try cursor.vector(), b = try cursor.vector()
                try cursor.expect("bias")
                radio.occluders.append(Occluder(minimumCorner: Vector3(min(a.x, b.x), min(a.y, b.y), min(a.z, b.z)),
                                                maximumCorner: Vector3(max(a.x, b.x), max(a.y, b.y), max(a.z, b.z)),
                                                biasRange: try cursor.range()))
            case "radio":
                try cursor.options { key, c throws(ScriptError) in
                    switch key {
                    case "rate": radio.rateHz = try c.positive(key)
                    case "range-sigma": radio.rangeStandardDeviation = try c.number(key)
                    case "azimuth-sigma": radio.azimuthStandardDeviation = Angle.radians(degrees: try c.number(key))
                    case "elevation-sigma": radio.elevationStandardDeviation = Angle.radians(degrees: try c.number(key))
                    case "fov": radio.fieldOfViewHalfAngle = Angle.radians(degrees: try c.number(key))
                    case "nlos": radio.nlosProbability = try c.probability(key)
                    case "burst": radio.nlosMeanBurstLength = max(1, try c.number(key))
                    case "nlos-bias": radio.nlosBiasRange = try c.range()
                    case "dropout": radio.dropoutProbability = try c.probability(key)
                    case "direction-dropout": radio.directionDropoutProbability = try c.probability(key)
                    case "antenna": radio.antennaOffsetInDevice = try c.vector()
                    default: return false
                    }
                    return true
                }
            case "vio":
                try cursor.options { key, c throws(ScriptError) in
                    switch key {
                    case "rate": vio.rateHz = try c.positive(key)
                    case "noise": vio.positionNoise = try c.number(key)
                    case "orientation-noise": vio.orientationNoise = Angle.radians(degrees: try c.number(key))
                    case "drift": vio.driftFraction = try c.number(key)
                    case "initializing": vio.initializingDuration = try c.number(key)
                    default: return false
                    }
                    return true
                }
            case "path": recordedPoses = try Self.readPath(&cursor, directory: directory)
            default: return false
            }
            return true
        }

        /// A motion statement, appended to the device's trajectory; `false` if `keyword` is
        /// none.
        mutating func readMotion(_ keyword: String, _ cursor: inout Cursor) throws(ScriptError) -> Bool {
            switch keyword {
            case "still": segments.append(.still(duration: try cursor.duration()))
            case "sweep-sideways":
                let d = try cursor.duration()
                var amplitude = 0.3, period = 1.6, arc = 0.05
                try cursor.options { key, c throws(ScriptError) in
                    switch key {
                    case "amplitude": amplitude = try c.number(key)
                    case "period": period = try c.positive(key)
                    case "arc": arc = try c.number(key)
            default: return false
                }
                return true
            }
            segments.append(.sweepSideways(duration: d, amplitude: amplitude, period: period, arcDepth: arc))
        case "sweep-up-down", "figure-eight":
            let d = try cursor.duration()
            var amplitude = 0.25, period = keyword == "figure-eight" ? 3.0 : 1.6
            try cursor.options { key, c throws(ScriptError) in
                switch key {
                case "amplitude": amplitude = try c.number(key)
                case "period": period = try c.positive(key)
                default: return false
                }
                return true
            }
            segments.append(keyword == "figure-eight" ? .figureEight(duration: d, amplitude: amplitude, period: period)
                                                      : .sweepUpDown(duration: d, amplitude: amplitude, period: period))
        case "walk", "sidestep":
            let d = try cursor.duration()
            try cursor.expect("distance")
            let distance = try cursor.number("distance")
            segments.append(keyword == "walk" ? .walk(duration: d, distance: distance) : .sidestep(duration: d, distance: distance))
        case "turn":
            let d = try cursor.duration()
            try cursor.expect("angle")
            segments.append(.turn(duration: d, angle: Angle.radians(degrees: try cursor.number("angle"))))
        case "hold":
            let h = try cursor.word("portrait or landscape")
            guard let hold = DeviceHold(rawValue: h) else { throw cursor.error("unknown hold '\(h)' (portrait or landscape)") }
            segments.append(.hold(hold))
            default: return false
            }
            return true
        }

        /// `path tum|euroc FILE`: the recorded device poses.
        static func readPath(_ cursor: inout Cursor, directory: String) throws(ScriptError) -> [DevicePose] {
            let format = try cursor.word("tum or euroc")
            let name = try cursor.word("a file")
            let resolved = name.hasPrefix("/") ? name : (directory as NSString).appendingPathComponent(name)
            do {
                switch format {
                case "tum": return try TrajectoryFormats.readTUM(path: resolved)
                case "euroc": return try TrajectoryFormats.readEuRoC(path: resolved)
                default: throw cursor.error("unknown path format '\(format)' (tum or euroc)")
                }
            } catch let e as RecordingError {
                throw cursor.error("path: \(e.description)")
            } catch let e as ScriptError {
                throw e
            } catch {
                throw cursor.error("path: \(error)")
            }
        }

        /// The scenario, once every statement is read (so that `start` may come before or
        /// after `path`).
        func scenario(file: String, seed: UInt64) throws(ScriptError) -> SimulationScenario {
            guard !objects.isEmpty else { throw ScriptError(file: file, line: 0, message: "no object: add e.g. 'object tag accessory at 0 1 -4'") }
            if recordedPoses != nil, !segments.isEmpty {
                throw ScriptError(file: file, line: 0, message: "give either a path or motion statements, not both")
            }
            if recordedPoses == nil, !segments.contains(where: { $0.duration > 0 }) {
                throw ScriptError(file: file, line: 0, message: "no motion: add e.g. 'still 2' or 'sweep-sideways 3'")
            }
            var scenario = SimulationScenario(name: (file as NSString).lastPathComponent,
                                              trajectory: DeviceTrajectory(segments: segments, startPosition: start, heading: heading),
                                              objects: objects, seed: seed)
            scenario.radio = radio
            scenario.vio = vio
            scenario.deviceName = deviceName
            scenario.tremorAmplitude = tremor
            if let recordedPoses { scenario.useRecordedPath(recordedPoses, start: start) }
            return scenario
        }
    }

    /// Reads the words of one statement.
    struct Cursor {
        let words: [String]
        var index: Int
        let file: String
        let line: Int

        func error(_ message: String) -> ScriptError { ScriptError(file: file, line: line, message: message) }
        var peek: String? { index < words.count ? words[index] : nil }

        mutating func word(_ what: String) throws(ScriptError) -> String {
            guard let w = peek else { throw error("expected \(what)") }
            index += 1
            return w
        }

        mutating func expect(_ keyword: String) throws(ScriptError) {
            let w = try word("'\(keyword)'")
            guard w == keyword else { throw error("expected '\(keyword)', found '\(w)'") }
        }

        mutating func number(_ what: String) throws(ScriptError) -> Double {
            let w = try word("a number for \(what)")
            guard let d = Double(w), d.isFinite else { throw error("\(what): '\(w)' is not a number") }
            return d
        }

        mutating func positive(_ what: String) throws(ScriptError) -> Double {
            let d = try number(what)
            guard d > 0 else { throw error("\(what) must be positive") }
            return d
        }

        mutating func probability(_ what: String) throws(ScriptError) -> Double {
            let d = try number(what)
            guard (0...1).contains(d) else { throw error("\(what) must be between 0 and 1") }
            return d
        }

        mutating func duration() throws(ScriptError) -> Double {
            let d = try number("the duration in seconds")
            guard d > 0 else { throw error("the duration must be positive") }
            return d
        }

        mutating func vector() throws(ScriptError) -> Vector3 {
            Vector3(try number("x"), try number("y"), try number("z"))
        }

        mutating func range() throws(ScriptError) -> ClosedRange<Double> {
            let a = try number("the lower bound"), b = try number("the upper bound")
            guard a <= b else { throw error("the lower bound \(a) exceeds the upper bound \(b)") }
            return a...b
        }

        /// Reads `key value…` pairs; `handle` returns false for an unknown key.
        mutating func options(_ handle: (String, inout Cursor) throws(ScriptError) -> Bool) throws(ScriptError) {
            while let key = peek {
                index += 1
                guard try handle(key, &self) else { throw error("unknown option '\(key)'") }
            }
        }

        func end() throws(ScriptError) {
            if let extra = peek { throw error("unexpected '\(extra)'") }
        }
    }
}
