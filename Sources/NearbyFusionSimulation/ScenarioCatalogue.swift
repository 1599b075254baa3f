import Foundation
import NearbyFusion
import NearbyFusionRecording

/// Named scenarios: the situations the fusion core must handle, used by the tests and
/// to make `Datasets/`. Each takes a seed; the motion is the coached one
/// (sideways sweeps of ±30 cm, then up-down sweeps of ±25 cm) unless the name says otherwise.
public enum ScenarioCatalogue {
    /// Still 1 s, sideways sweeps 4 s, up-down sweeps 3 s, still 1 s.
    public static let coachedMotion: [MotionSegment] = [
        .still(duration: 1), .sweepSideways(duration: 4.8), .sweepUpDown(duration: 3.2), .still(duration: 1),
    ]

    /// A phone held still for 6 s, object 4 m ahead: should keep asking to move.
    public static func stillPhone(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "still-phone", trajectory: DeviceTrajectory(segments: [.still(duration: 6)]),
                           objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(0.5, 1.2, -4))], seed: seed)
    }

    /// Sideways sweeps only, object 4 m ahead and a little to the right, at device height.
    public static func sidewaysSweep(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "sideways-sweep",
                           trajectory: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 6.4)]),
                           objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(1.0, 1.3, -3.9))], seed: seed)
    }

    /// The coached motion, object at `position` (default 5 m ahead-left, 0.4 m lower).
    public static func coached(seed: UInt64, position: Vector3 = Vector3(-1.5, 1.0, -4.8),
                               capabilities: DeviceCapabilities = .phone) -> SimulationScenario {
        var s = SimulationScenario(name: "coached-sweep", trajectory: DeviceTrajectory(segments: coachedMotion),
                                   objects: [SimulatedObject(id: "tag", positionInWorld: position)], seed: seed)
        s.radio.capabilities = capabilities
        return s
    }

    /// An object one floor up (3 m above the device, 4 m away horizontally) with a radio
    /// that gives azimuth but no elevation: horizontal sweeps leave it `aboveOrBelow`;
    /// the up-down sweeps that follow make it `above`.
    public static func floorAbove(seed: UInt64) -> SimulationScenario {
        var s = SimulationScenario(
            name: "floor-above",
            trajectory: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 6.4), .sweepUpDown(duration: 4.8), .still(duration: 1)]),
            objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(0.8, 4.4, -3.9))], seed: seed)
        s.radio.capabilities = .phoneWithoutElevation
        return s
    }

    /// An object 4 m behind the user (no UWB direction ever): the coached sweeps, a 1 m
    /// step sideways for a longer baseline, and the sweeps again, the last up-down ones wider
    /// (±35 cm) as a coached user would when asked again.
    public static func behindUser(seed: UInt64) -> SimulationScenario {
        SimulationScenario(
            name: "behind-user",
            trajectory: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 6.4), .sweepUpDown(duration: 4.8),
                                                    .sidestep(duration: 2, distance: 1.0), .sweepSideways(duration: 3.2),
                                                    .sweepUpDown(duration: 8, amplitude: 0.35), .still(duration: 1)]),
            objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(-0.7, 1.1, 3.9))], seed: seed)
    }

    /// A watch-like distance-only device: sweeps, a figure-eight, a step forward and one
    /// sideways, and the sweeps again.
    public static func distanceOnly(seed: UInt64) -> SimulationScenario {
        var s = SimulationScenario(
            name: "distance-only",
            trajectory: DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 6.4), .sweepUpDown(duration: 4.8),
                                                    .figureEight(duration: 6), .walk(duration: 2, distance: 0.6),
                                                    .sidestep(duration: 2, distance: 1.0), .sweepSideways(duration: 4.8),
                                                    .sweepUpDown(duration: 8, amplitude: 0.35), .still(duration: 1)]),
            objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(1.2, 1.0, -4.2))], seed: seed)
        s.radio.capabilities = .distanceOnly
        s.deviceName = "watch"
        return s
    }

    /// The coached motion in a dark room (ARKit ambient 20 lm, tracking limited).
    public static func darkRoom(seed: UInt64) -> SimulationScenario {
        var s = coached(seed: seed)
        s.name = "dark-room"
        s.vio.ambientIntensity = 20
        return s
    }

    /// The coached motion with 20 % of ranges non-line-of-sight (+0.5–2 m).
    public static func nlos(seed: UInt64) -> SimulationScenario {
        var s = coached(seed: seed, position: Vector3(1.2, 1.6, -5.5))
        s.name = "nlos-20-percent"
        s.radio.nlosProbability = 0.2
        return s
    }

    /// The coached motion on a device without camera assistance.
    public static func cameraAssistanceOff(seed: UInt64) -> SimulationScenario {
        var s = coached(seed: seed)
        s.name = "camera-assistance-off"
        s.radio.capabilities.supportsCameraAssistance = false
        return s
    }

    /// Two accessories at once (one ahead-left on the floor below the table, one to the
    /// right at head height); the second stops answering at 8 s (a `removed` timeout).
    public static func twoTags(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "two-tags", trajectory: DeviceTrajectory(segments: coachedMotion + [.still(duration: 2)]),
                           objects: [SimulatedObject(id: "keys", positionInWorld: Vector3(-1.2, 0.3, -3.5)),
                                     SimulatedObject(id: "bag", positionInWorld: Vector3(2.5, 1.6, -4.0), removedAt: 8)],
                           seed: seed)
    }

    /// A peer (another phone) walking slowly (0.3 m/s) across the room while the user sweeps.
    public static func walkingPeer(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "walking-peer", trajectory: DeviceTrajectory(segments: coachedMotion + coachedMotion),
                           objects: [SimulatedObject(id: "friend", kind: .peer, positionInWorld: Vector3(-2.5, 1.3, -4.5),
                                                     velocityInWorld: Vector3(0.3, 0, 0))],
                           seed: seed)
    }

    /// A friend's phone left on a table (a peer that keeps still) where the coached
    /// scenario's tag lies: it should converge as the accessory does.
    public static func stillPeer(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "still-peer", trajectory: DeviceTrajectory(segments: coachedMotion + [.still(duration: 2)]),
                           objects: [SimulatedObject(id: "friend", kind: .peer, positionInWorld: Vector3(-1.5, 1.0, -4.8))],
                           seed: seed)
    }

    /// A friend who walks across the room at 0.8 m/s, stops, turns back at 1.2 m/s, slows to
    /// 0.4 m/s and stops again, 3–6 m away, while the user sweeps.
    public static func peerStopAndGo(seed: UInt64) -> SimulationScenario {
        var friend = SimulatedObject(id: "friend", kind: .peer, positionInWorld: Vector3(-2.6, 1.3, -5.0),
                                     velocityInWorld: Vector3(0.75, 0, 0.25))
        friend.velocityChanges = [
            .init(time: 4, velocityInWorld: .zero), .init(time: 6.5, velocityInWorld: Vector3(-1.1, 0, 0.45)),
            .init(time: 9, velocityInWorld: Vector3(0.1, 0, -0.4)), .init(time: 12, velocityInWorld: .zero),
            .init(time: 15, velocityInWorld: Vector3(0.6, 0, 0.3)),
        ]
        return SimulationScenario(name: "peer-stop-and-go", trajectory: DeviceTrajectory(segments: coachedMotion + coachedMotion),
                                  objects: [friend], seed: seed)
    }

    /// A tag that converges on the table, is picked up at 11 s, carried 2.7 m to the right
    /// and forward at ~0.8 m/s, and put down at 14.5 s, while the user keeps sweeping.
    /// `hinted`: the app reports the motion (`motionState` lines), as an accessory with an
    /// accelerometer lets it.
    public static func tagPickedUp(seed: UInt64, hinted: Bool = false) -> SimulationScenario {
        var tag = SimulatedObject(id: "tag", positionInWorld: Vector3(-1.2, 0.8, -4.0))
        tag.velocityChanges = [
            .init(time: 11, velocityInWorld: Vector3(0.6, 0.5, 0.1)), .init(time: 11.6, velocityInWorld: Vector3(0.8, 0, 0.25)),
            .init(time: 14.5, velocityInWorld: .zero),
        ]
        var s = SimulationScenario(name: hinted ? "tag-picked-up-hinted" : "tag-picked-up",
                                   trajectory: DeviceTrajectory(segments: coachedMotion + [.sweepSideways(duration: 6.4), .still(duration: 3.6)]),
                                   objects: [tag], seed: seed)
        if hinted {
            s.motionHints = [.init(time: 11, objectID: "tag", state: .moving), .init(time: 14.6, objectID: "tag", state: .stationary)]
        }
        return s
    }

    /// The tag of ``tagPickedUp(seed:hinted:)`` picked up at 11 s and carried straight away
    /// from the user along the line of sight (0.8 m/s horizontally, 2.8 m, lifted in the
    /// first 0.6 s), put down at 14.5 s: its direction hardly changes, and every range runs
    /// longer, as a multipath burst's do.
    public static func tagCarriedAway(seed: UInt64) -> SimulationScenario {
        var s = tagPickedUp(seed: seed)
        s.name = "tag-carried-away"
        let p = s.objects[0].positionInWorld
        let away = Vector3(p.x, 0, p.z).normalized
        s.objects[0].velocityChanges = [
            .init(time: 11, velocityInWorld: 0.8 * away + Vector3(0, 0.5, 0)), .init(time: 11.6, velocityInWorld: 0.8 * away),
            .init(time: 14.5, velocityInWorld: .zero),
        ]
        return s
    }

    /// A watch (distance only) ranging to a friend who walks slowly past: no direction ever,
    /// a moving target — it may converge only if the geometry allows, and never wrongly.
    public static func distanceOnlyWalkingPeer(seed: UInt64) -> SimulationScenario {
        var s = distanceOnly(seed: seed)
        s.name = "distance-only-walking-peer"
        s.objects = [SimulatedObject(id: "friend", kind: .peer, positionInWorld: Vector3(-2.0, 1.3, -4.5),
                                     velocityInWorld: Vector3(0.1, 0, 0.05))]
        return s
    }

    /// A watch ranging to a friend who walks at 0.4 m/s, turns a right angle at 12 s, stops at
    /// 22 s and walks back at 30 s: no constant velocity explains their ranges, and ranges
    /// alone cannot follow the turns — nothing may be published wrong.
    public static func distanceOnlyTurningPeer(seed: UInt64) -> SimulationScenario {
        var s = distanceOnlyWalkingPeer(seed: seed)
        s.name = "distance-only-turning-peer"
        s.objects[0].velocityInWorld = Vector3(0.4, 0, 0)
        s.objects[0].velocityChanges = [.init(time: 12, velocityInWorld: Vector3(0, 0, 0.4)), .init(time: 22, velocityInWorld: .zero),
                                        .init(time: 30, velocityInWorld: Vector3(-0.4, 0, 0))]
        return s
    }

    // MARK: Bluetooth Channel Sounding accessories (distance only)

    /// The coached sweeps, a 1 m step toward the object and one sideways, and the sweeps
    /// again, for a Channel Sounding tag at `position` (default 3.8 m ahead-left, lower). Without a direction, motion
    /// confined to one vertical plane (sideways and up-down sweeps, a sidestep) leaves the
    /// object's mirror image across that plane — in front of or behind the user — explaining
    /// every range as well as the object itself; the step forward breaks that symmetry.
    public static let channelSoundingMotion: [MotionSegment] = [
        .still(duration: 1), .sweepSideways(duration: 4.8), .sweepUpDown(duration: 3.2), .walk(duration: 2, distance: 1),
        .sidestep(duration: 2, distance: 1), .sweepSideways(duration: 4.8), .sweepUpDown(duration: 4.8, amplitude: 0.5),
        .still(duration: 1),
    ]

    /// A Channel Sounding tag at `position` under coached sweeps and a step (the `cs-*` family).
    public static func channelSoundingTag(seed: UInt64, position: Vector3 = Vector3(-1.1, 0.9, -3.6),
                                          name: String = "cs-coached-step") -> SimulationScenario {
        var tag = SimulatedObject(id: "tag", positionInWorld: position)
        tag.ranging = .bluetoothChannelSounding
        return SimulationScenario(name: name, trajectory: DeviceTrajectory(segments: channelSoundingMotion), objects: [tag], seed: seed)
    }

    /// Sideways and up-down sweeps only, all in one vertical plane: the front/back mirror
    /// stays open. Never a published wrong angle.
    public static func channelSoundingPlanar(seed: UInt64) -> SimulationScenario {
        var s = channelSoundingTag(seed: seed, name: "cs-planar-sweeps")
        s.trajectory = DeviceTrajectory(segments: [.still(duration: 1), .sweepSideways(duration: 6.4), .sweepUpDown(duration: 4.8),
                                                   .sweepSideways(duration: 6.4), .still(duration: 1)])
        return s
    }

    /// The coached sweeps and the step of `cs-coached-step` with the tag placed anew by each
    /// seed: 2–8 m away (uniform), within ±0.8 rad (±46°) of the user's first heading, at a
    /// height of 0.4–2.2 m (the phone is held at 1.4 m) — a drawer, a table, a shelf — from
    /// the seed's own `placement` stream. One fixed place scores the estimator at one point
    /// of the range sphere; this row scores it over the distances the targets name.
    public static func channelSoundingPlaced(seed: UInt64) -> SimulationScenario {
        var placement = NoiseStream(seed: seed, source: "placement")
        let distance = placement.uniform(2, 8), bearing = placement.uniform(-0.8, 0.8), height = 1.4 + placement.uniform(-1, 0.8)
        let horizontal = (max(distance * distance - (height - 1.4) * (height - 1.4), 0)).squareRoot()
        return channelSoundingTag(seed: seed, position: Vector3(horizontal * sin(bearing), height, -horizontal * cos(bearing)),
                                  name: "cs-placed")
    }

    /// A Channel Sounding tag 8–15 m away (11.5 m here).
    public static func channelSoundingFar(seed: UInt64) -> SimulationScenario {
        channelSoundingTag(seed: seed, position: Vector3(3.0, 0.8, -11.0), name: "cs-far")
    }

    /// A Channel Sounding tag picked up at 22 s and carried 2.4 m at 0.8 m/s, then put down,
    /// while the user keeps sweeping; `hinted`: the app passes the accessory's own motion.
    public static func channelSoundingCarried(seed: UInt64, hinted: Bool = false) -> SimulationScenario {
        var s = channelSoundingTag(seed: seed, name: hinted ? "cs-carried-hinted" : "cs-carried")
        s.trajectory = DeviceTrajectory(segments: channelSoundingMotion + [.sweepSideways(duration: 4.8), .sweepUpDown(duration: 4.8),
                                                                           .sweepSideways(duration: 4.8)])
        s.objects[0].velocityChanges = [.init(time: 22, velocityInWorld: Vector3(0.75, 0, 0.25)), .init(time: 25, velocityInWorld: .zero)]
        if hinted {
            s.motionHints = [.init(time: 22, objectID: "tag", state: .moving), .init(time: 25.1, objectID: "tag", state: .stationary)]
        }
        return s
    }

    // MARK: Radio profiles of real radios

    /// The Channel Sounding profiles (``ChannelSoundingModel/inverseFFT``, ``ChannelSoundingModel/phaseSlope``,
    /// ``ChannelSoundingModel/roundTripTime``) by scenario name stem.
    public static let channelSoundingProfiles: [(stem: String, model: ChannelSoundingModel)] = [
        ("cs-ifft", .inverseFFT), ("cs-phase", .phaseSlope), ("cs-rtt", .roundTripTime),
    ]

    /// A still phone and a still Channel Sounding tag at the phone's height, as the real logs
    /// were taken (a still initiator and a still reflector): 60 s at the profile's 2 Hz, the tag
    /// `5 + 5 ((seed − 1) mod 9)` metres ahead — seeds 1–9 visit the logs' nine flags, 5 m to
    /// 45 m. Nothing moves: the published distance is all there is to score.
    public static func channelSoundingProfileStill(seed: UInt64, stem: String, model: ChannelSoundingModel) -> SimulationScenario {
        let distance = 5 + 5 * Double((seed &- 1) % 9)
        var tag = SimulatedObject(id: "tag", positionInWorld: Vector3(0, 1.4, -distance))
        tag.ranging = .bluetoothChannelSounding
        var s = SimulationScenario(name: stem + "-still", trajectory: DeviceTrajectory(segments: [.still(duration: 60)]),
                                   objects: [tag], seed: seed)
        s.channelSounding = model
        return s
    }

    /// The user walks 12 m toward a still Channel Sounding tag 20 m ahead (at about 1 m/s),
    /// stands, and walks back, with the profile's radio: the published distance must follow
    /// the walk (its lag) without the profile's outliers.
    public static func channelSoundingProfileWalk(seed: UInt64, stem: String, model: ChannelSoundingModel) -> SimulationScenario {
        var tag = SimulatedObject(id: "tag", positionInWorld: Vector3(2.0, 1.0, -20))
        tag.ranging = .bluetoothChannelSounding
        var s = SimulationScenario(name: stem + "-walk",
                                   trajectory: DeviceTrajectory(segments: [.still(duration: 2), .walk(duration: 12, distance: 12),
                                                                           .still(duration: 3), .walk(duration: 12, distance: -12),
                                                                           .still(duration: 3)]),
                                   objects: [tag], seed: seed)
        s.channelSounding = model
        return s
    }

    /// Phone-to-phone UWB with a friend who walks 10–22 m away
    /// (``RadioModel/walkingPeerPhoneToPhone(bothWalking:)``, ranges only): `bothWalking`,
    /// the user walks too (the noisier profile); otherwise the user stands and sweeps.
    public static func phoneToPhonePeer(seed: UInt64, bothWalking: Bool) -> SimulationScenario {
        let user: [MotionSegment] = bothWalking
            ? [.still(duration: 1), .walk(duration: 10, distance: 8), .turn(duration: 2, angle: .pi / 2), .walk(duration: 10, distance: 8),
               .still(duration: 2)]
            : coachedMotion + coachedMotion + coachedMotion
        var friend = SimulatedObject(id: "friend", kind: .peer, positionInWorld: Vector3(4.0, 1.3, -12), velocityInWorld: Vector3(0.6, 0, -0.2))
        friend.velocityChanges = [.init(time: 12, velocityInWorld: Vector3(0, 0, -0.5)), .init(time: 20, velocityInWorld: Vector3(-0.5, 0, 0))]
        var s = SimulationScenario(name: bothWalking ? "peer-uwb-both-walking" : "peer-uwb-friend-walking",
                                   trajectory: DeviceTrajectory(segments: user), objects: [friend], seed: seed)
        s.radio = .walkingPeerPhoneToPhone(bothWalking: bothWalking)
        return s
    }

    /// The coached motion with the phone turned to landscape half-way through the sideways
    /// sweeps: the radio stops giving a direction.
    public static func landscapeHold(seed: UInt64) -> SimulationScenario {
        SimulationScenario(name: "landscape-hold",
                           trajectory: DeviceTrajectory(segments: [.still(duration: 1), .hold(.landscape), .sweepSideways(duration: 6.4),
                                                                   .sweepUpDown(duration: 4.8), .still(duration: 1)]),
                           objects: [SimulatedObject(id: "tag", positionInWorld: Vector3(0.9, 1.2, -4.2))], seed: seed)
    }

    /// Ten minutes for throughput: the user sweeps, walks around the room, turns, holds the
    /// phone still, in landscape for a while, with two accessories and 10 % NLOS in bursts.
    public static func longSession(seed: UInt64) -> SimulationScenario {
        var loop: [MotionSegment] = coachedMotion
        // A closed loop: every walk, step and turn is undone before it repeats.
        loop += [.walk(duration: 3, distance: 1.5), .turn(duration: 2, angle: .pi / 4), .figureEight(duration: 6),
                 .turn(duration: 2, angle: -.pi / 4), .walk(duration: 3, distance: -1.5), .sidestep(duration: 3, distance: -1),
                 .hold(.landscape), .sweepSideways(duration: 3.2), .hold(.portrait), .sidestep(duration: 3, distance: 1),
                 .still(duration: 4.8)]
        var segments: [MotionSegment] = []
        while segments.reduce(0, { $0 + $1.duration }) < 600 { segments += loop }
        var s = SimulationScenario(name: "long-session", trajectory: DeviceTrajectory(segments: segments),
                                   objects: [SimulatedObject(id: "keys", positionInWorld: Vector3(-1.2, 0.3, -3.5)),
                                             SimulatedObject(id: "bag", positionInWorld: Vector3(2.5, 1.6, -4.0))],
                                   seed: seed)
        s.radio.nlosProbability = 0.1
        s.radio.nlosMeanBurstLength = 5
        return s
    }

    /// Every named scenario.
    public static let all: [(name: String, make: @Sendable (UInt64) -> SimulationScenario)] = [
        ("still-phone", stillPhone), ("sideways-sweep", sidewaysSweep), ("coached-sweep", { coached(seed: $0) }),
        ("floor-above", floorAbove), ("behind-user", behindUser), ("distance-only", distanceOnly),
        ("dark-room", darkRoom), ("nlos-20-percent", nlos), ("camera-assistance-off", cameraAssistanceOff),
        ("two-tags", twoTags), ("walking-peer", walkingPeer), ("landscape-hold", landscapeHold),
        ("long-session", longSession), ("still-peer", stillPeer), ("peer-stop-and-go", peerStopAndGo),
        ("tag-picked-up", { tagPickedUp(seed: $0) }), ("tag-picked-up-hinted", { tagPickedUp(seed: $0, hinted: true) }),
        ("tag-carried-away", tagCarriedAway),
        ("distance-only-walking-peer", distanceOnlyWalkingPeer), ("distance-only-turning-peer", distanceOnlyTurningPeer),
        ("cs-coached-step", { channelSoundingTag(seed: $0) }), ("cs-placed", channelSoundingPlaced),
        ("cs-planar-sweeps", channelSoundingPlanar),
        ("cs-far", channelSoundingFar), ("cs-carried", { channelSoundingCarried(seed: $0) }),
        ("cs-carried-hinted", { channelSoundingCarried(seed: $0, hinted: true) }),
    ] + radioProfileScenarios

    /// The scenarios of the radio profiles: each Channel Sounding profile still and walking, and
    /// the phone-to-phone UWB peer.
    public static let radioProfileScenarios: [(name: String, make: @Sendable (UInt64) -> SimulationScenario)] = {
        var list: [(name: String, make: @Sendable (UInt64) -> SimulationScenario)] = []
        for (stem, model) in channelSoundingProfiles {
            list.append((stem + "-still", { seed in channelSoundingProfileStill(seed: seed, stem: stem, model: model) }))
            list.append((stem + "-walk", { seed in channelSoundingProfileWalk(seed: seed, stem: stem, model: model) }))
        }
        list.append(("peer-uwb-friend-walking", { phoneToPhonePeer(seed: $0, bothWalking: false) }))
        list.append(("peer-uwb-both-walking", { phoneToPhonePeer(seed: $0, bothWalking: true) }))
        return list
    }()
}
