import Foundation
import NearbyFusion
import NearbyFusionRecording

/// How the phone is held.
public enum DeviceHold: String, Sendable, Hashable {
    /// Upright, screen toward the user, the rear camera (−Z) looking ahead.
    case portrait
    /// Turned 90° about the screen normal; the radio's direction is absent.
    case landscape
}

/// One step of a device motion script. Durations in seconds, lengths in metres,
/// angles in radians; "forward" is the current heading, "right" is clockwise of it.
public enum MotionSegment: Sendable, Hashable {
    /// Held still (hand tremor only).
    case still(duration: Double)
    /// Side-to-side sweeps `A sin(2πτ/T)` along the horizontal right axis; a hand sweep
    /// pivots at the body, so the phone comes `arcDepth·sin²(2πτ/T)` back toward the user
    /// at the ends.
    case sweepSideways(duration: Double, amplitude: Double = 0.3, period: Double = 1.6, arcDepth: Double = 0.05)
    /// Up-and-down sweeps `A sin(2πτ/T)` along world up.
    case sweepUpDown(duration: Double, amplitude: Double = 0.25, period: Double = 1.6)
    /// A figure-eight in the device's vertical plane: right `A sin ωτ`, up `A/2 sin 2ωτ`.
    case figureEight(duration: Double, amplitude: Double = 0.25, period: Double = 3)
    /// Walks `distance` along the heading (negative: backwards), smoothly.
    case walk(duration: Double, distance: Double)
    /// Walks `distance` to the right of the heading, smoothly (circling an object if
    /// combined with `turn`).
    case sidestep(duration: Double, distance: Double)
    /// Turns on the spot by `angle` (positive clockwise seen from above), smoothly.
    case turn(duration: Double, angle: Double)
    /// Changes the hold (instantaneous).
    case hold(DeviceHold)

    /// The segment's length, seconds (0 for a change of hold).
    public var duration: Double {
        switch self {
        case .still(let d), .sweepSideways(let d, _, _, _), .sweepUpDown(let d, _, _), .figureEight(let d, _, _),
             .walk(let d, _), .sidestep(let d, _), .turn(let d, _):
            return d
        case .hold: return 0
        }
    }
}

/// Where the device truly is: a pose for every time of the simulation.
public protocol DevicePath: Sendable {
    /// Seconds the path lasts (from 0).
    var duration: Double { get }
    /// The true device pose at `t` seconds (clamped to the path).
    func pose(at t: Double) -> (positionInWorld: Vector3, worldFromDevice: Quaternion)
}

extension DevicePath {
    /// Landscape when the device's X axis is closer to vertical than 45°: the radio gives no direction then.
    public func isLandscape(at t: Double) -> Bool {
        abs(pose(at: t).worldFromDevice.rotate(Vector3(1, 0, 0)).y) > 0.7071
    }
}

/// A recorded trajectory (for example a TUM or EuRoC ground truth, see
/// `TrajectoryFormats`) used as the true device path: positions interpolated linearly,
/// orientations by slerp, time rebased so that the first pose is at 0.
public struct SampledDevicePath: DevicePath {
    /// The samples' times, seconds from 0, ascending.
    public let times: [Double]
    /// The device's positions, world frame, metres.
    public let positions: [Vector3]
    /// The device's orientations, world-from-device.
    public let orientations: [Quaternion]
    /// The last sample's time, seconds.
    public var duration: Double { times.last ?? 0 }

    /// - Parameters:
    ///   - poses: the recorded path, in time order (times are taken from the first pose).
    ///   - offset: added to every position (to place the path in a scene), metres.
    public init(poses: [DevicePose], offset: Vector3 = .zero) {
        let t0 = poses.first?.timestamp ?? 0
        times = poses.map { $0.timestamp - t0 }
        positions = poses.map { $0.positionInWorld + offset }
        orientations = poses.map(\.worldFromDevice)
    }

    /// The same path moved rigidly (a translation and a rotation about world up) so that it
    /// starts at `start` with the device's horizontal forward along world −Z, where the
    /// scripted scenarios start; object placements then mean the same for both.
    public func aligned(start: Vector3 = Vector3(0, 1.4, 0)) -> SampledDevicePath {
        guard let p0 = positions.first, let q0 = orientations.first else { return self }
        let f = q0.rotate(Vector3(0, 0, -1))
        let heading = atan2(f.x, -f.z)
        let yaw = Quaternion(angle: heading.isFinite ? heading : 0, axis: .worldUp)
        return SampledDevicePath(times: times, positions: positions.map { start + yaw.rotate($0 - p0) },
                                 orientations: orientations.map { (yaw * $0).normalized })
    }

    init(times: [Double], positions: [Vector3], orientations: [Quaternion]) {
        self.times = times
        self.positions = positions
        self.orientations = orientations
    }

    /// The pose at `t` seconds: positions interpolated linearly, orientations by slerp.
    public func pose(at t: Double) -> (positionInWorld: Vector3, worldFromDevice: Quaternion) {
        guard let last = times.indices.last else { return (.zero, .identity) }
        if t <= times[0] { return (positions[0], orientations[0]) }
        if t >= times[last] { return (positions[last], orientations[last]) }
        // Binary search for the segment [k, k + 1] containing t.
        var lo = 0, hi = last
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if times[mid] <= t { lo = mid } else { hi = mid }
        }
        let span = times[hi] - times[lo]
        let u = span > 0 ? (t - times[lo]) / span : 0
        return (positions[lo] + u * (positions[hi] - positions[lo]), Quaternion.slerp(orientations[lo], orientations[hi], u))
    }
}

/// The device's true trajectory: a motion script played from a start position and heading.
public struct DeviceTrajectory: DevicePath {
    /// Where the device stands at the start of a segment.
    public struct State: Sendable, Hashable {
        /// Device position in the world, metres.
        public var positionInWorld: Vector3
        /// Heading: clockwise angle from world −Z seen from above, radians.
        public var heading: Double
        /// Portrait or landscape.
        public var hold: DeviceHold
    }

    /// The motions, in order.
    public let segments: [MotionSegment]
    /// Where the script starts.
    public let start: State
    private let starts: [(time: Double, state: State)]
    /// The whole script's length, seconds.
    public let duration: Double

    /// `segments` played from `startPosition` (metres), facing `heading` (radians, clockwise
    /// from −Z seen from above), held `hold`.
    public init(segments: [MotionSegment], startPosition: Vector3 = Vector3(0, 1.4, 0), heading: Double = 0,
                hold: DeviceHold = .portrait) {
        self.segments = segments
        start = State(positionInWorld: startPosition, heading: heading, hold: hold)
        var t = 0.0
        var s = start
        var list: [(Double, State)] = []
        for seg in segments {
            list.append((t, s))
            s = Self.state(of: seg, from: s, at: seg.duration)
            t += seg.duration
        }
        starts = list
        duration = t
    }

    /// Unit forward (heading) and right vectors in the world's horizontal plane.
    static func axes(_ heading: Double) -> (forward: Vector3, right: Vector3) {
        (Vector3(sin(heading), 0, -cos(heading)), Vector3(cos(heading), 0, sin(heading)))
    }

    static func smoothstep(_ x: Double) -> Double {
        let u = min(max(x, 0), 1)
        return u * u * (3 - 2 * u)
    }

    static func state(of segment: MotionSegment, from s: State, at tau: Double) -> State {
        var out = s
        let (forward, right) = axes(s.heading)
        switch segment {
        case .still: break
        case .sweepSideways(let d, let a, let period, let arc):
            let phase = 2 * .pi * min(tau, d) / period
            out.positionInWorld = s.positionInWorld + a * sin(phase) * right - arc * sin(phase) * sin(phase) * forward
        case .sweepUpDown(let d, let a, let period):
            out.positionInWorld = s.positionInWorld + a * sin(2 * .pi * min(tau, d) / period) * Vector3.worldUp
        case .figureEight(let d, let a, let period):
            let w = 2 * .pi * min(tau, d) / period
            out.positionInWorld = s.positionInWorld + a * sin(w) * right + 0.5 * a * sin(2 * w) * Vector3.worldUp
        case .walk(let d, let distance):
            out.positionInWorld = s.positionInWorld + distance * smoothstep(tau / d) * forward
        case .sidestep(let d, let distance):
            out.positionInWorld = s.positionInWorld + distance * smoothstep(tau / d) * right
        case .turn(let d, let angle):
            out.heading = s.heading + angle * smoothstep(tau / d)
        case .hold(let h):
            out.hold = h
        }
        return out
    }

    /// The true state at time `t` (seconds from the script's start; clamped to it).
    public func state(at t: Double) -> State {
        guard let index = starts.lastIndex(where: { $0.time <= t }) else { return start }
        let (t0, s0) = starts[index]
        return Self.state(of: segments[index], from: s0, at: t - t0)
    }

    /// The true pose at `t` seconds.
    public func pose(at t: Double) -> (positionInWorld: Vector3, worldFromDevice: Quaternion) {
        let s = state(at: t)
        return (s.positionInWorld, Self.orientation(heading: s.heading, hold: s.hold))
    }

    /// The world-from-device rotation for a heading and hold: a rotation by `−heading`
    /// about world +Y (so that device −Z points along the heading), then, in landscape,
    /// 90° about the device's Z axis.
    public static func orientation(heading: Double, hold: DeviceHold) -> Quaternion {
        let yaw = Quaternion(angle: -heading, axis: .worldUp)
        switch hold {
        case .portrait: return yaw
        case .landscape: return yaw * Quaternion(angle: .pi / 2, axis: Vector3(0, 0, 1))
        }
    }
}
