import Foundation
import NearbyFusion

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

    public var duration: Double {
        switch self {
        case .still(let d), .sweepSideways(let d, _, _, _), .sweepUpDown(let d, _, _), .figureEight(let d, _, _),
             .walk(let d, _), .sidestep(let d, _), .turn(let d, _):
            return d
        case .hold: return 0
        }
    }
}

/// The device's true trajectory: a motion script played from a start position and heading.
public struct DeviceTrajectory: Sendable {
    public struct State: Sendable, Hashable {
        /// Device position in the world, metres.
        public var positionInWorld: Vector3
        /// Heading: clockwise angle from world −Z seen from above, radians.
        public var heading: Double
        public var hold: DeviceHold
    }

    public let segments: [MotionSegment]
    public let start: State
    private let starts: [(time: Double, state: State)]
    public let duration: Double

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
