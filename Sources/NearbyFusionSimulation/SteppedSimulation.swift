import Foundation
import NearbyFusion
import NearbyFusionRecording

// A simulation run one radio tick at a time, for a simulated user who reacts to what the
// engine publishes: the path is steered as the session runs.

/// A device path a simulated user steers while the simulation runs: motions are appended at
/// its end, and between them the device is held still where the last one left it.
///
/// Single-threaded: one simulation appends and reads it (a reference, so that the scenario
/// holding it sees what is appended). Times are seconds from 0, positions metres, world frame.
public final class SteerablePath: DevicePath, @unchecked Sendable {
    private var segments: [MotionSegment] = []
    private var trajectory: DeviceTrajectory
    private let startPosition: Vector3, heading: Double

    /// A path that starts at `startPosition` (metres), facing `heading` (radians, clockwise
    /// from −Z seen from above), held still until a motion is appended.
    public init(startPosition: Vector3 = Vector3(0, 1.4, 0), heading: Double = 0) {
        self.startPosition = startPosition
        self.heading = heading
        trajectory = DeviceTrajectory(segments: [], startPosition: startPosition, heading: heading)
    }

    /// Unbounded: the device is held where the last motion left it.
    public var duration: Double { .infinity }
    /// When the last motion appended ends, seconds.
    public var motionEnd: Double { trajectory.duration }
    /// Whether the device is still moving at `t` (a motion appended has not ended).
    public func isMoving(at t: Double) -> Bool { t < trajectory.duration }

    /// Appends `segment` to start at `t` seconds (held still until then, if the path ended before).
    public func append(_ segment: MotionSegment, at t: Double) {
        if t > trajectory.duration + 1e-9 { segments.append(.still(duration: t - trajectory.duration)) }
        segments.append(segment)
        trajectory = DeviceTrajectory(segments: segments, startPosition: startPosition, heading: heading)
    }

    /// The true pose at `t` seconds.
    public func pose(at t: Double) -> (positionInWorld: Vector3, worldFromDevice: Quaternion) {
        trajectory.pose(at: min(t, trajectory.duration))
    }

    /// The length of the path (metres, sampled every 0.05 s) from 0 to `t` seconds, tremor excluded.
    public func lengthWalked(until t: Double) -> Double {
        var length = 0.0
        var last = pose(at: 0).positionInWorld
        var tau = 0.05
        while tau <= t + 1e-9 {
            let p = pose(at: tau).positionInWorld
            length += (p - last).length
            last = p
            tau += 0.05
        }
        return length
    }
}

/// A simulation written one radio tick at a time (the same events, in the same order, as
/// ``Simulator/simulate(_:)`` writes for the same scenario): a simulated user reads what the
/// engine publishes after each tick and steers the scenario's ``SteerablePath``.
public struct SteppedSimulation: Sendable {
    var run: SimulationRun
    let scenario: SimulationScenario
    var poseIndex = 0, radioTick = 0
    var headerPending = true

    /// A stepped run of `scenario` (its trajectory is typically a ``SteerablePath``).
    public init(_ scenario: SimulationScenario) {
        self.scenario = scenario
        run = SimulationRun(scenario)
    }

    /// The time of the next radio tick, seconds.
    public var nextRadioTime: Double { Double(radioTick) / scenario.radio.rateHz + 0.5 / scenario.vio.rateHz }

    /// Writes the poses up to the next radio tick and the tick itself (header first, on the
    /// first call) and returns those events.
    public mutating func advance() -> [RecordingEvent] {
        var out: [RecordingEvent] = []
        if headerPending { out.append(contentsOf: run.events); headerPending = false }
        run.events.removeAll(keepingCapacity: true)
        let tRadio = nextRadioTime
        while Double(poseIndex) / scenario.vio.rateHz <= tRadio {
            run.writePose(at: Double(poseIndex) / scenario.vio.rateHz)
            poseIndex += 1
        }
        run.writeRadioTick(at: tRadio, tick: radioTick)
        radioTick += 1
        out.append(contentsOf: run.events)
        run.events.removeAll(keepingCapacity: true)
        return out
    }

    /// The device's true pose at the last pose written.
    public var lastTrueDevicePose: (time: Double, positionInWorld: Vector3, worldFromDevice: Quaternion)? {
        run.trueDevicePoses.last
    }
}
