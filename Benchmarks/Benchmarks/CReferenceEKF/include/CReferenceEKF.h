// A hand-written, fixed-size EKF step in C: the reference the engine's per-update cost is
// compared with (`swift package benchmark`, "C reference EKF step" beside "Engine update with
// outputs"). Position-only state, world frame, metres; the same measurement models as the
// engine's (RangeModel, DirectionModel), no gates, no outlier weights, no outputs.
#ifndef C_REFERENCE_EKF_H
#define C_REFERENCE_EKF_H

/// One step: the random walk `P += q I`, then a range `r = ‖p − a‖` (σ_r), then azimuth and
/// elevation `(atan2(v_x, −v_z), atan2(v_y, √(v_x² + v_z²)))` of `v = Rᵀ(p − a)` (σ_α, σ_ε),
/// `R` the world-from-device rotation as a unit quaternion `(x, y, z, w)`. Each is a Kalman
/// update `K = P Hᵀ S⁻¹`, `p += K ν`, `P = (I − K H) P` symmetrised. `p[3]`, `P[9]` row-major.
void nf_reference_ekf_step(double p[3], double P[9], const double antenna[3], const double rotation[4],
                           double range, double azimuth, double elevation, double sigmaRange, double sigmaAzimuth,
                           double sigmaElevation, double q);

#endif
