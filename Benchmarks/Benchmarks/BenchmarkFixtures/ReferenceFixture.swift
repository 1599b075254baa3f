import CReferenceEKF
import NearbyFusion

/// The hand-written C EKF step (`nf_reference_ekf_step`) on the updates of ``TrackingFixture``
/// that carry both a range and a direction: antennas, rotations and measurements flattened once
/// into arrays the loop reads in place, and the step's state (position and covariance) carried
/// across calls. Shared by the timed benchmarks and the instruction counter, so that both
/// compare the engine with the same C step on the same updates.
public struct ReferenceFixture: Sendable {
    /// Three per update: the antenna position, world frame, metres.
    var antennas: [Double] = []
    /// Four per update: the world-from-device rotation `(x, y, z, w)`.
    var rotations: [Double] = []
    /// Three per update: range (metres), azimuth and elevation (radians).
    var measured: [Double] = []
    /// The state: position (metres) and covariance (m², row-major).
    public var position: [Double] = [-1.5, 1.0, -4.8]
    public var covariance: [Double] = [0.0009, 0, 0, 0, 0.0009, 0, 0, 0, 0.0009]
    /// How many updates the loop cycles through.
    public let count: Int

    public init(_ fixture: TrackingFixture = TrackingFixture()) {
        for (pose, m) in zip(fixture.poses, fixture.updates) {
            guard let r = m.distance, let d = m.directionInDevice else { continue }
            let angles = DeviceAngles.azimuthElevation(d), q = pose.worldFromDevice
            antennas += [pose.positionInWorld.x, pose.positionInWorld.y, pose.positionInWorld.z]
            rotations += [q.x, q.y, q.z, q.w]
            measured += [r, angles.x, angles.y]
        }
        count = measured.count / 3
    }

    /// Steps `first ..< first + n` of the loop (each the update `k mod count`): the random walk,
    /// the range, the azimuth and the elevation, as the engine's fixture is configured.
    public mutating func steps(from first: Int, count n: Int) {
        let count = self.count
        guard count > 0 else { return }
        let (antennas, rotations, measured) = (self.antennas, self.rotations, self.measured)
        position.withUnsafeMutableBufferPointer { p in
            covariance.withUnsafeMutableBufferPointer { pp in
                antennas.withUnsafeBufferPointer { a in
                    rotations.withUnsafeBufferPointer { q in
                        measured.withUnsafeBufferPointer { z in
                            for k in first..<(first + n) {
                                let i = k % count
                                nf_reference_ekf_step(p.baseAddress, pp.baseAddress, a.baseAddress! + 3 * i, q.baseAddress! + 4 * i,
                                                      z[3 * i], z[3 * i + 1], z[3 * i + 2], 0.06, 0.052, 0.087, 1e-6)
                            }
                        }
                    }
                }
            }
        }
    }
}
