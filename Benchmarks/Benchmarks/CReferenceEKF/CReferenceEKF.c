#include "CReferenceEKF.h"
#include <math.h>

/// `v ← R v` for the unit quaternion `(x, y, z, w)`: `v + w t + u × t`, `t = 2 u × v`.
static void rotate(const double q[4], const double v[3], double out[3], int inverse) {
    double ux = inverse ? -q[0] : q[0], uy = inverse ? -q[1] : q[1], uz = inverse ? -q[2] : q[2], w = q[3];
    double tx = 2 * (uy * v[2] - uz * v[1]), ty = 2 * (uz * v[0] - ux * v[2]), tz = 2 * (ux * v[1] - uy * v[0]);
    out[0] = v[0] + w * tx + (uy * tz - uz * ty);
    out[1] = v[1] + w * ty + (uz * tx - ux * tz);
    out[2] = v[2] + w * tz + (ux * ty - uy * tx);
}

/// The Kalman update with a scalar measurement: `S = h P hᵀ + σ²`, `K = P hᵀ / S`,
/// `p += K ν`, `P ← P − K (P hᵀ)ᵀ`.
static void scalar_update(double p[3], double P[9], const double h[3], double innovation, double variance) {
    double Ph[3];
    for (int i = 0; i < 3; i++) Ph[i] = P[3 * i] * h[0] + P[3 * i + 1] * h[1] + P[3 * i + 2] * h[2];
    double S = h[0] * Ph[0] + h[1] * Ph[1] + h[2] * Ph[2] + variance;
    double K[3] = {Ph[0] / S, Ph[1] / S, Ph[2] / S};
    for (int i = 0; i < 3; i++) p[i] += K[i] * innovation;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) P[3 * i + j] -= K[i] * Ph[j];
}

static double wrap(double angle) { return atan2(sin(angle), cos(angle)); }

void nf_reference_ekf_step(double p[3], double P[9], const double a[3], const double q[4], double range, double azimuth,
                           double elevation, double sigmaRange, double sigmaAzimuth, double sigmaElevation, double qAdded) {
    P[0] += qAdded; P[4] += qAdded; P[8] += qAdded;
    // Range: h = ‖p − a‖, H = (p − a)ᵀ / h.
    double d[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (r > 1e-9) {
        double h[3] = {d[0] / r, d[1] / r, d[2] / r};
        scalar_update(p, P, h, range - r, sigmaRange * sigmaRange);
    }
    // Direction, as two sequential scalar updates (uncorrelated azimuth and elevation noise):
    // v = Rᵀ(p − a); ∂α/∂v = (−v_z, 0, v_x)/ρ² and ∂ε/∂v = (−v_x v_y, ρ², −v_z v_y)/(ρ ‖v‖²),
    // ρ² = v_x² + v_z², each taken to the world frame by R.
    for (int k = 0; k < 2; k++) {
        double w[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, v[3];
        rotate(q, w, v, 1);
        double rho2 = v[0] * v[0] + v[2] * v[2], rho = sqrt(rho2), n2 = rho2 + v[1] * v[1];
        if (rho2 < 1e-12) return;
        double gradient[3], world[3];
        if (k == 0) {
            gradient[0] = -v[2] / rho2; gradient[1] = 0; gradient[2] = v[0] / rho2;
            rotate(q, gradient, world, 0);
            scalar_update(p, P, world, wrap(azimuth - atan2(v[0], -v[2])), sigmaAzimuth * sigmaAzimuth);
        } else {
            gradient[0] = -v[0] * v[1] / (rho * n2); gradient[1] = rho / n2; gradient[2] = -v[2] * v[1] / (rho * n2);
            rotate(q, gradient, world, 0);
            scalar_update(p, P, world, elevation - atan2(v[1], rho), sigmaElevation * sigmaElevation);
        }
    }
    // Symmetrised.
    double p01 = 0.5 * (P[1] + P[3]), p02 = 0.5 * (P[2] + P[6]), p12 = 0.5 * (P[5] + P[7]);
    P[1] = P[3] = p01; P[2] = P[6] = p02; P[5] = P[7] = p12;
}
