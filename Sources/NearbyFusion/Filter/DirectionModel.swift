import Foundation

/// Azimuth and elevation of a device-frame direction, radians.
///
/// Device frame (portrait): +X right edge, +Y top edge, +Z out of the screen; the UWB
/// cone looks along −Z. With `v` the direction:
/// - azimuth `α = atan2(v_x, −v_z)`, positive toward the device's right;
/// - elevation `ε = atan2(v_y, √(v_x² + v_z²))`, positive toward the top edge.
public enum DeviceAngles {
    /// `(α, ε)` of the device-frame vector `v` (any length but zero).
    @inlinable public static func azimuthElevation(_ v: Vector3) -> Vector2 {
        Vector2(atan2(v.x, -v.z), atan2(v.y, (v.x * v.x + v.z * v.z).squareRoot()))
    }

    /// The unit device-frame vector with azimuth `α` and elevation `ε`:
    /// `(cos ε sin α, sin ε, −cos ε cos α)`.
    @inlinable public static func direction(azimuth: Double, elevation: Double) -> Vector3 {
        Vector3(cos(elevation) * sin(azimuth), sin(elevation), -cos(elevation) * cos(azimuth))
    }

    /// The angle, radians, between `v` (device frame) and the device's −Z axis.
    @inlinable public static func offAxisAngle(_ v: Vector3) -> Double {
        acos(max(-1, min(1, -v.z / max(v.length, 1e-300))))
    }
}

/// UWB angle of arrival: the object's azimuth and elevation in the device frame.
///
/// With `v = Rᵀ (p − a)` (world → device, `R` world-from-device, `a` the antenna):
/// `h(p) = (atan2(v_x, −v_z), atan2(v_y, ρ))`, `ρ = √(v_x² + v_z²)`.
/// Its Jacobian is `H = J_v Rᵀ` with
/// `∂α/∂v = (−v_z, 0, v_x) / ρ²` and
/// `∂ε/∂v = (−v_y v_x / ρ, ρ, −v_y v_z / ρ) / ‖v‖²`;
/// each row of `H`, as a world-frame vector, is `R (∂·/∂v)ᵀ`.
/// Azimuth noise is usually smaller than elevation noise (antenna geometry), so `R` is
/// `diag(σ_α², σ_ε²)`.
public struct DirectionModel: PlanarMeasurementModel, Sendable {
    /// Antenna position in the world frame, metres.
    public var antennaInWorld: Vector3
    /// The device's orientation, world-from-device.
    public var worldFromDevice: Quaternion
    /// `R = diag(σ_α², σ_ε²)`, rad².
    public var covariance: SymmetricMatrix2
    /// Chi-square gate (2 dof) on the normalised innovation.
    public var gate: Double

    /// The model of a direction measured from `antennaInWorld` by a device oriented
    /// `worldFromDevice`, with azimuth and elevation noise σ (radians) and `gate`.
    public init(antennaInWorld: Vector3, worldFromDevice: Quaternion,
                azimuthStandardDeviation: Double, elevationStandardDeviation: Double, gate: Double) {
        self.antennaInWorld = antennaInWorld
        self.worldFromDevice = worldFromDevice
        self.covariance = SymmetricMatrix2(diagonal: azimuthStandardDeviation * azimuthStandardDeviation,
                                           elevationStandardDeviation * elevationStandardDeviation)
        self.gate = gate
    }

    /// `h(p)`: azimuth and elevation of `objectInWorld` in the device frame, radians.
    @inlinable public func predicted(_ objectInWorld: Vector3) -> Vector2 {
        DeviceAngles.azimuthElevation(worldFromDevice.inverseRotate(objectInWorld - antennaInWorld))
    }

    /// `H`, the two rows above, per metre.
    @inlinable public func jacobian(_ objectInWorld: Vector3) -> Jacobian2x3 {
        Self.jacobian(deviceFrame: worldFromDevice.inverseRotate(objectInWorld - antennaInWorld), worldFromDevice: worldFromDevice)
    }

    /// `∂h/∂p` from `v = Rᵀ(p − a)`; zero rows at the device's ±Y axis (`ρ = 0`).
    @inlinable static func jacobian(deviceFrame v: Vector3, worldFromDevice: Quaternion) -> Jacobian2x3 {
        let rho2 = v.x * v.x + v.z * v.z
        let n2 = rho2 + v.y * v.y
        guard rho2 > 1e-18 else { return Jacobian2x3(row0: .zero, row1: .zero) }
        let rho = rho2.squareRoot()
        let dAzimuth = Vector3(-v.z / rho2, 0, v.x / rho2)
        let dElevation = Vector3(-v.y * v.x / (rho * n2), rho / n2, -v.y * v.z / (rho * n2))
        return Jacobian2x3(row0: worldFromDevice.rotate(dAzimuth), row1: worldFromDevice.rotate(dElevation))
    }

    /// `h(p)` and `∂h/∂p` from one rotation `v = Rᵀ(p − a)`.
    @inlinable public func linearised(at objectInWorld: Vector3) -> (predicted: Vector2, jacobian: Jacobian2x3) {
        let v = worldFromDevice.inverseRotate(objectInWorld - antennaInWorld)
        return (DeviceAngles.azimuthElevation(v), Self.jacobian(deviceFrame: v, worldFromDevice: worldFromDevice))
    }

    /// `z − h(p)`, the azimuth wrapped to (−π, π].
    @inlinable public func residual(_ measured: Vector2, _ predicted: Vector2) -> Vector2 {
        Vector2(Angle.wrapped(measured.x - predicted.x), Angle.wrapped(measured.y - predicted.y))
    }

    /// `z ⊖ h(p)` and `∂h/∂p` from the measured device-frame direction `m` (any length but
    /// zero) instead of its angles: one arc tangent per angle (``Angle/nearAtan2(_:_:)``, as
    /// the angles are small where the model fits), none for `m`'s own angles.
    ///
    /// With `v = Rᵀ(p − a)` and `ρ_m`, `ρ_v` the vectors' distances from the device's Y axis:
    /// - `α_m − α_p = atan2(m_z v_x − m_x v_z, m_x v_x + m_z v_z)`, the angle from `(v_x, −v_z)`
    ///   to `(m_x, −m_z)`, already wrapped (into [−π, π], where ``residual(_:_:)`` gives π for −π);
    /// - `ε_m − ε_p = atan2(m_y ρ_v − ρ_m v_y, m_y v_y + ρ_m ρ_v)`, the angle from `(ρ_v, v_y)` to
    ///   `(ρ_m, m_y)` (both elevations lie in [−π/2, π/2], so the difference needs no wrap).
    ///
    /// The same innovation as ``residual(_:_:)`` of `DeviceAngles.azimuthElevation(m)` and
    /// ``predicted(_:)``, to the last bits of the arithmetic.
    @inlinable public func linearisedInnovation(measuredDirection m: Vector3, at objectInWorld: Vector3)
        -> (innovation: Vector2, jacobian: Jacobian2x3) {
        let v = worldFromDevice.inverseRotate(objectInWorld - antennaInWorld)
        let rhoM = (m.x * m.x + m.z * m.z).squareRoot(), rhoV = (v.x * v.x + v.z * v.z).squareRoot()
        let innovation = Vector2(Angle.nearAtan2(m.z * v.x - m.x * v.z, m.x * v.x + m.z * v.z),
                                 Angle.nearAtan2(m.y * rhoV - rhoM * v.y, m.y * v.y + rhoM * rhoV))
        return (innovation, Self.jacobian(deviceFrame: v, worldFromDevice: worldFromDevice))
    }

    /// The fraction of the smaller angle σ that the second-order term of a carried
    /// linearisation may reach (``carriesLinearisation(from:to:)``).
    public static let carriedCurvatureFraction = 0.01

    /// Whether `h(b) ≈ h(a) + H_a (b − a)` (and `H_b ≈ H_a`) holds within a negligible share of
    /// the noise. Both angles curve on the scale of `ρ`, the distance of `v = Rᵀ(a − antenna)`
    /// from the device's Y axis (the azimuth's Hessian is of order `1/ρ²`, the elevation's
    /// of `1/‖v‖² ≤ 1/ρ²`), so the dropped term is at most about `‖b − a‖²/ρ²` radians and
    /// the Jacobian's relative change `‖b − a‖/ρ`. Carried when
    /// `‖b − a‖² ≤ κ min(σ_α, σ_ε) ρ²`, `κ` = ``carriedCurvatureFraction``: the term is at most
    /// 1 % of a σ, and the Jacobian changes by at most `√(κσ)` (2 % at σ = 0.05 rad).
    @inlinable public func carriesLinearisation(from a: Vector3, to b: Vector3) -> Bool {
        let v = worldFromDevice.inverseRotate(a - antennaInWorld)
        let rho2 = v.x * v.x + v.z * v.z
        let sigma = min(covariance.a, covariance.c).squareRoot()
        return (b - a).lengthSquared <= Self.carriedCurvatureFraction * sigma * rho2
    }
}

/// Azimuth only, for radios that give no elevation: `h(p) = atan2(v_x, −v_z)`,
/// `∂α/∂p = R (−v_z, 0, v_x)ᵀ / ρ²`.
public struct AzimuthModel: ScalarMeasurementModel, Sendable {
    /// Antenna position in the world frame, metres.
    public var antennaInWorld: Vector3
    /// The device's orientation, world-from-device.
    public var worldFromDevice: Quaternion
    /// `σ_α²`, rad².
    public var variance: Double
    /// Chi-square gate (1 dof) on the normalised innovation.
    public var gate: Double

    /// The model of an azimuth measured from `antennaInWorld` by a device oriented
    /// `worldFromDevice`, with noise σ `standardDeviation` (radians) and `gate`.
    public init(antennaInWorld: Vector3, worldFromDevice: Quaternion, standardDeviation: Double, gate: Double) {
        self.antennaInWorld = antennaInWorld
        self.worldFromDevice = worldFromDevice
        self.variance = standardDeviation * standardDeviation
        self.gate = gate
    }

    /// `h(p)`: the azimuth of `objectInWorld` in the device frame, radians.
    @inlinable public func predicted(_ objectInWorld: Vector3) -> Double {
        let v = worldFromDevice.inverseRotate(objectInWorld - antennaInWorld)
        return atan2(v.x, -v.z)
    }

    /// `∂α/∂p`, per metre.
    @inlinable public func jacobian(_ objectInWorld: Vector3) -> Vector3 {
        linearised(at: objectInWorld).jacobian
    }

    /// `h(p)` and `∂h/∂p` from one rotation `v = Rᵀ(p − a)`.
    @inlinable public func linearised(at objectInWorld: Vector3) -> (predicted: Double, jacobian: Vector3) {
        let v = worldFromDevice.inverseRotate(objectInWorld - antennaInWorld)
        return (atan2(v.x, -v.z), Self.jacobian(deviceFrame: v, worldFromDevice: worldFromDevice))
    }

    /// `∂α/∂p = R (−v_z, 0, v_x)ᵀ / ρ²` at the device-frame offset `v` (zero on the device's
    /// ±Y axis, `ρ² ≤ 10⁻¹⁸`, where the azimuth is undefined).
    @inlinable static func jacobian(deviceFrame v: Vector3, worldFromDevice: Quaternion) -> Vector3 {
        let rho2 = v.x * v.x + v.z * v.z
        guard rho2 > 1e-18 else { return .zero }
        return worldFromDevice.rotate(Vector3(-v.z / rho2, 0, v.x / rho2))
    }

    /// `z − h(p)` wrapped to (−π, π].
    @inlinable public func residual(_ measured: Double, _ predicted: Double) -> Double {
        Angle.wrapped(measured - predicted)
    }

    /// `z ⊖ h(p)` and `∂h/∂p` from the measured device-frame direction `m` (any length but
    /// zero; its `y` is not read) instead of its azimuth: the angle from `(v_x, −v_z)` to
    /// `(m_x, −m_z)`, `atan2(m_z v_x − m_x v_z, m_x v_x + m_z v_z)` (``Angle/nearAtan2(_:_:)``,
    /// small where the model fits), as ``DirectionModel/linearisedInnovation(measuredDirection:at:)``
    /// forms its azimuth.
    @inlinable public func linearisedInnovation(measuredDirection m: Vector3, at objectInWorld: Vector3)
        -> (innovation: Double, jacobian: Vector3) {
        let v = worldFromDevice.inverseRotate(objectInWorld - antennaInWorld)
        return (Angle.nearAtan2(m.z * v.x - m.x * v.z, m.x * v.x + m.z * v.z),
                Self.jacobian(deviceFrame: v, worldFromDevice: worldFromDevice))
    }
}
