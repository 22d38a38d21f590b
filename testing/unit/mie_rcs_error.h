// The RCS error of a computed dielectric sphere against Mie (the subpixel-smoothing and sphere
// tests): over the E and H planes, 0..180 deg in `step_deg` steps, at the angles where Mie is
// within `window_db` of that plane's maximum (over the same angles): the worst |10 log10(RCS /
// RCS_Mie)| and where, the rms of the same dB errors, and C_sca / C_sca,Mie.
#pragma once

#include <algorithm>
#include <cmath>

#include "vem/core/yee_grid.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/models/mie.h"

namespace vem_test {

struct RcsError {
  double worst_db = 0, worst_deg = 0;
  char plane = 'E';
  int compared = 0;
  double rms_db = 0;  // rms of the dB error over the compared angles
  double csca_ratio = 0;
  // Filled by callers that run a solver.
  double seconds = 0;
  int steps = 0;
  bool converged = false;
};

// rcs_e_h(theta_rad, plane): the computed RCS in the E (plane 0) or H (plane 1) plane; csca: the
// computed scattering cross-section.
template <class Rcs>
RcsError rcs_error(const Rcs& rcs_e_h, const vem::MieSphere& mie, double csca, double window_db = 20.0,
                   int step_deg = 2) {
  constexpr double kDeg = vem::kPi / 180;
  RcsError r;
  double mx[2] = {0, 0};
  for (int t = 0; t <= 180; t += step_deg) {
    mx[0] = std::max(mx[0], mie.rcs_e_plane(t * kDeg));
    mx[1] = std::max(mx[1], mie.rcs_h_plane(t * kDeg));
  }
  for (int t = 0; t <= 180; t += step_deg) {
    const double th = t * kDeg;
    const double ref[2] = {mie.rcs_e_plane(th), mie.rcs_h_plane(th)};
    for (int p = 0; p < 2; ++p) {
      if (ref[p] < mx[p] * std::pow(10.0, -window_db / 10)) continue;
      ++r.compared;
      const double db = std::fabs(10 * std::log10(rcs_e_h(th, p) / ref[p]));
      r.rms_db += db * db;
      if (db > r.worst_db) {
        r.worst_db = db;
        r.worst_deg = t;
        r.plane = p == 0 ? 'E' : 'H';
      }
    }
  }
  r.rms_db = std::sqrt(r.rms_db / std::max(1, r.compared));
  r.csca_ratio = csca / mie.sigma_sca();
  return r;
}

// rcs_error of a steady-state result's far-field table, one row every 2 deg from 0 to 180 (the
// table of sphere_rcs_options; the caller checks it has 91 rows).
inline RcsError rcs_error(const vem::HarmonicFrequencyResult& fr, const vem::MieSphere& mie, double window_db = 20.0) {
  return rcs_error(
      [&](double th, int p) {
        const vem::FarFieldRow& row = fr.far_field[std::size_t(std::lround(th * 180 / vem::kPi / 2.0))];
        return p == 0 ? row.e_plane : row.h_plane;
      },
      mie, fr.scattering_cross_section, window_db);
}

// The steady state of the sphere RCS runs: a plane wave polarized along +x travelling along +z
// (the Mie convention of mie.h) at f, tolerance 1e-4, the far field every 2 deg.
inline vem::HarmonicOptions sphere_rcs_options(double f, vem::Backend backend) {
  vem::HarmonicOptions o;
  o.source = vem::HarmonicSource::plane_wave;
  o.plane_wave.theta = 0.0;
  o.plane_wave.phi = 0.0;
  o.plane_wave.psi = 0.0;
  o.frequencies = {f};
  o.steady_state_tolerance = 1e-4;
  o.far_field = true;
  o.far_field_step_deg = 2.0;
  o.backend = backend;
  return o;
}

}  // namespace vem_test
