import Foundation
import NearbyFusion
import NearbyFusionRecording
import NearbyFusionSimulation

// Simulated users who do what the engine tells them, as the session runs.

/// A simulated user who follows the engine's advice as it comes: Nearby Interaction's
/// convergence reasons alone, each answered with a fixed sweep, or the guidance
/// (`NearbyObjectEstimate.guidance`), each step taken at a walking pace (half a metre or
/// less: by the hand, faster), after a reaction
/// time, its length off by a random share and, some of the time, the wrong way.
public struct SimulatedUser: Sendable, Hashable {
    /// What the user follows.
    public enum Policy: String, Sendable, Hashable, CaseIterable {
        /// The reasons alone: a sideways sweep for missing movement or a missing horizontal
        /// sweep (or no advice at all while the angle is missing), an up-and-down sweep for a
        /// missing vertical one.
        case reasons
        /// The guidance's steps while there is guidance; the reasons' sweeps otherwise.
        case guidance
        /// As `guidance`, with an app that asks the guidance for `worldTransform`
        /// (`FusionOptions.Coaching.guidanceOutput`): steps until the position is published.
        case guidanceToWorldTransform = "guidance to worldTransform"
    }

    /// What the user follows.
    public var policy: Policy
    /// Walking pace, m/s.
    public var walkingSpeed = 0.7
    /// The pace of a move of the hand alone (a step of half a metre or less), m/s.
    public var handSpeed = 1.0
    /// From advice to motion, seconds (advice that changes while the user moves waits for the motion's end).
    public var reactionSeconds = 0.8
    /// The standard deviation of a step's length error, as a share of the step.
    public var overshoot = 0.2
    /// How often a step is taken the wrong way: one of the three other horizontal ways, at
    /// random (up for down, down for up).
    public var wrongDirectionProbability = 0.1
    /// A sweep's length, seconds: two periods of a 0.3 m side-to-side (or 0.25 m up-and-down) sweep.
    public var sweepSeconds = 3.2

    /// A user following `policy`, with the default pace, reaction and compliance.
    public init(policy: Policy) { self.policy = policy }
}

/// What one closed-loop run measured.
public struct ClosedLoopResult: Sendable, Hashable {
    /// When the first `horizontalAngle` was published, seconds (`nil`: not within the run).
    public var firstAngleSeconds: Double?
    /// When the first `worldTransform` was published, seconds.
    public var firstWorldTransformSeconds: Double?
    /// The device's path length until the first angle (or the run's end), metres.
    public var metresWalked: Double
    /// The first published angle's error against the truth, radians.
    public var firstAngleError: Double?

    /// A run's measurements (seconds, metres, radians; `nil` where nothing was published).
    public init(firstAngleSeconds: Double? = nil, firstWorldTransformSeconds: Double? = nil, metresWalked: Double,
                firstAngleError: Double? = nil) {
        self.firstAngleSeconds = firstAngleSeconds
        self.firstWorldTransformSeconds = firstWorldTransformSeconds
        self.metresWalked = metresWalked
        self.firstAngleError = firstAngleError
    }
}

/// Closed-loop runs: the scenarios a simulated user steers, and the run itself.
public enum ClosedLoop {
    /// A scenario whose device path the user steers (from the catalogue's objects and radios).
    public struct Scenario: Sendable {
        /// Its name in `accuracy`'s closed-loop table.
        public var name: String
        /// The catalogue scenario whose objects and radio it takes, by seed.
        public var make: @Sendable (UInt64) -> SimulationScenario
    }

    /// A UWB tag in front of the user, one behind, a distance-only watch's tag, a Channel
    /// Sounding tag near and far, and a still peer.
    public static let scenarios: [Scenario] = [
        Scenario(name: "loop-uwb-in-front", make: { ScenarioCatalogue.coached(seed: $0) }),
        Scenario(name: "loop-uwb-behind", make: { ScenarioCatalogue.behindUser(seed: $0) }),
        Scenario(name: "loop-distance-only", make: { ScenarioCatalogue.distanceOnly(seed: $0) }),
        Scenario(name: "loop-cs-near", make: { ScenarioCatalogue.channelSoundingTag(seed: $0) }),
        Scenario(name: "loop-cs-far", make: { ScenarioCatalogue.channelSoundingFar(seed: $0) }),
        Scenario(name: "loop-still-peer", make: { ScenarioCatalogue.stillPeer(seed: $0) }),
    ]

    /// Runs `scenario`'s objects and radio with the device steered by `user` for at most
    /// `seconds`, until the first object's `worldTransform` is published. Seeded by the
    /// scenario's seed (the user's choices by their own stream): deterministic.
    public static func run(_ base: SimulationScenario, user: SimulatedUser, seconds: Double = 40,
                           options: FusionOptions = FusionOptions()) -> ClosedLoopResult {
        var scenario = base
        var options = options
        if user.policy == .guidanceToWorldTransform { options.coaching.guidanceOutput = .worldTransform }
        let path = SteerablePath()
        scenario.trajectory = path
        scenario.motionHints = []
        var simulation = SteppedSimulation(scenario)
        var noise = NoiseStream(seed: scenario.seed, source: "user." + (user.policy == .reasons ? "reasons" : "guidance"))
        guard let object = scenario.objects.first else { return ClosedLoopResult(metresWalked: 0) }
        var driver: ReplayDriver?
        var result = ClosedLoopResult(metresWalked: 0)
        var idleSince: Double?
        while simulation.nextRadioTime <= seconds {
            let t = simulation.nextRadioTime
            var latest: NearbyObjectEstimate?
            for event in simulation.advance() {
                if case .header(let header) = event { driver = ReplayDriver(header: header, options: options); continue }
                if case .uwb(let k, _, let estimate, _)? = driver?.apply(event), driver?.objectIDs[k] == object.id { latest = estimate }
            }
            guard let estimate = latest else { continue }
            if estimate.horizontalAngle != nil, result.firstAngleSeconds == nil {
                result.firstAngleSeconds = t
                result.metresWalked = path.lengthWalked(until: t)
                if let device = simulation.lastTrueDevicePose, let published = estimate.horizontalAngle,
                   let truth = HorizontalAngle.angle(objectInWorld: object.position(at: t), devicePositionInWorld: device.positionInWorld,
                                                      worldFromDevice: device.worldFromDevice) {
                    result.firstAngleError = abs(Angle.wrapped(published - truth))
                }
            }
            if estimate.worldTransform != nil, result.firstWorldTransformSeconds == nil {
                result.firstWorldTransformSeconds = t
                break
            }
            if path.isMoving(at: t) { idleSince = nil; continue }
            let since = idleSince ?? t
            idleSince = since
            guard t - since >= user.reactionSeconds else { continue }
            path.append(motion(for: estimate, user: user, noise: &noise), at: t)
            idleSince = nil
        }
        if result.firstAngleSeconds == nil { result.metresWalked = path.lengthWalked(until: seconds) }
        return result
    }

    /// The motion `user` makes on `estimate`: a step of the guidance (its length off by the
    /// user's overshoot, the wrong way now and then) or a sweep for the reasons.
    static func motion(for estimate: NearbyObjectEstimate, user: SimulatedUser, noise: inout NoiseStream) -> MotionSegment {
        if user.policy != .reasons, let g = estimate.guidance {
            let length = g.distanceMetres * max(0.2, 1 + noise.gaussian(standardDeviation: user.overshoot))
            var direction = g.direction
            if noise.uniform(0, 1) < user.wrongDirectionProbability {
                // The wrong way: one of the three other ways in the horizontal plane (up and down: the other).
                switch direction {
                case .up: direction = .down
                case .down: direction = .up
                default:
                    let others = [MotionGuidance.Direction.left, .right, .forward, .back].filter { $0 != direction }
                    direction = others[min(Int(noise.uniform(0, 3)), 2)]
                }
            }
            let pace = length <= 0.5 ? user.handSpeed : user.walkingSpeed
            let duration = max(length / max(pace, 0.1), 0.3)
            switch direction {
            case .forward: return .walk(duration: duration, distance: length)
            case .back: return .walk(duration: duration, distance: -length)
            // Half a metre or less to the side is a move of the hand: briskly from the start, as
            // a sweep starts (a quarter period, ending at the step's length); further, a sidestep.
            case .right, .left:
                let signed = direction == .right ? length : -length
                return length <= 0.5 ? .sweepSideways(duration: duration, amplitude: signed, period: 4 * duration, arcDepth: 0)
                    : .sidestep(duration: duration, distance: signed)
            // A raise (or lowering) of the hand: a quarter period of an up-and-down sweep ends at its amplitude.
            case .up: return .sweepUpDown(duration: 0.8, amplitude: min(length, 0.4), period: 3.2)
            case .down: return .sweepUpDown(duration: 0.8, amplitude: -min(length, 0.4), period: 3.2)
            }
        }
        let reasons = estimate.convergence?.status.reasons ?? []
        if reasons.contains(.insufficientVerticalSweep) && !reasons.contains(.insufficientHorizontalSweep)
            && !reasons.contains(.insufficientMovement) {
            return .sweepUpDown(duration: user.sweepSeconds)
        }
        return .sweepSideways(duration: user.sweepSeconds)
    }
}

extension ClosedLoop {
    /// Seconds a closed-loop run lasts at most; a run without an angle counts as this long.
    public static let runSeconds = 40.0

    /// The median time to the first `horizontalAngle`, seconds, a run without one counting as
    /// ``runSeconds``.
    public static func medianFirstAngle(_ results: [ClosedLoopResult]) -> Double? {
        Statistics.quantile(results.map { $0.firstAngleSeconds ?? runSeconds }, 0.5)
    }

    /// The median time to the first `worldTransform`, seconds, a run without one counting as
    /// ``runSeconds``.
    public static func medianFirstWorldTransform(_ results: [ClosedLoopResult]) -> Double? {
        Statistics.quantile(results.map { $0.firstWorldTransformSeconds ?? runSeconds }, 0.5)
    }

    /// The median path length to the first angle (or the run's end), metres.
    public static func medianMetres(_ results: [ClosedLoopResult]) -> Double? {
        Statistics.quantile(results.map(\.metresWalked), 0.5)
    }

    /// Following the guidance against following the reasons alone, by scenario: a Channel
    /// Sounding tag and a distance-only watch get their first angle at least twice as soon
    /// (median) with no more metres walked; a UWB tag in front is never later (median). Judged
    /// over at least ``ScenarioTargets/minimumSeeds`` seeds.
    public static func checks(scenario name: String, reasons: [ClosedLoopResult], guidance: [ClosedLoopResult]) -> [TargetCheck] {
        guard let r = medianFirstAngle(reasons), let g = medianFirstAngle(guidance),
              let rm = medianMetres(reasons), let gm = medianMetres(guidance) else { return [] }
        let judged = min(reasons.count, guidance.count) >= ScenarioTargets.minimumSeeds
        func check(_ target: String, _ measured: String, _ met: Bool) -> TargetCheck {
            TargetCheck(area: .guidance, subject: name, target: target, measured: measured,
                        verdict: !judged ? .notJudged : (met ? .met : .missed))
        }
        let angles = String(format: "%.1f s following the guidance, %.1f s the reasons", g, r)
        switch name {
        case "loop-cs-near", "loop-cs-far", "loop-distance-only":
            return [check("first horizontalAngle at least 2× sooner following the guidance (median)", angles, g <= 0.5 * r),
                    check("no more metres walked following the guidance (median)",
                          String(format: "%.1f m following the guidance, %.1f m the reasons", gm, rm), gm <= rm)]
        case "loop-uwb-in-front":
            return [check("first horizontalAngle no later following the guidance (median)", angles, g <= r)]
        default:
            return []
        }
    }
}
