// Subpixel smoothing (core/subpixel_smoothing.h) in the FDTD engine on the CPU, with a lossy
// sphere: the conductivity path (complex averaging at the run's frequency) against Mie (mie.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include "mie_rcs_error.h"
#include "spectrum_util.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/core/subpixel_smoothing.h"
#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/models/mie.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;

namespace {

using vem_test::RcsError;

std::string str(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

}  // namespace

// FDTD on the CPU with a lossy sphere (the case of test_fdtd_sphere_rcs: a = 10 mm, eps_r 3 - 0.5j
// at 10 GHz, 1 mm cells, TF/SF, DFT monitors, near-to-far): staircase against smoothed with the
// conductivity averaged as a complex permittivity at 10 GHz. Angles every 10 deg where Mie is
// within 20 dB of the plane's maximum. Asserted: the smoothed worst error and C_sca error below
// the staircase's, the smoothed worst below 1 dB.
namespace {

RcsError fdtd_lossy_sphere(bool smoothed) {
  const double f = 10e9, a = 10e-3, d = 1e-3;
  const std::complex<double> eps(3.0, -0.5);
  const int N = 46, c = 23, pml = 8;
  FdtdSetup s;
  s.grid = {N, N, N, d, d, d};
  s.grid.origin = {-c * d, -c * d, -c * d};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, pml);
  for (auto& p : s.boundaries.cpml) { p.grading_order = 4.0; p.sigma_factor = 0.75; p.kappa_max = 3.0; p.alpha_max = 0.05; }
  const double sigma = -eps.imag() * 2 * kPi * f * kEps0;
  s.materials = {Material::vacuum(), Material::isotropic("sphere", eps.real(), sigma)};
  if (smoothed) {
    SubpixelOptions so;
    so.frequency = f;
    so.samples = 8;  // as measured in subpixel.md
    s.material_mode = MaterialMode::coefficient_array;
    s.medium = subpixel_smoothed_medium(s.grid, s.materials, SphereGeometry({0, 0, 0}, a, 1, 0), so);
  } else {
    paint_sphere(s.grid, {0, 0, 0}, a, 1, s.material_index);
  }
  FdtdOperator op(s);
  auto eng = make_engine(op, Backend::cpu);
  PlaneWave pw;
  pw.waveform = Waveform::modulated_gaussian(f, 8e9);
  TfsfBox tf;
  tf.lo = {c - 13, c - 13, c - 13};
  tf.hi = {c + 13, c + 13, c + 13};
  TfsfSource src(*eng, pw, tf);
  NtffBox nb;
  nb.lo = {c - 16, c - 16, c - 16};
  nb.hi = {c + 16, c + 16, c + 16};
  DftBox mb;
  mb.lo = {nb.lo[0] - 1, nb.lo[1] - 1, nb.lo[2] - 1};
  mb.hi = {nb.hi[0] + 1, nb.hi[1] + 1, nb.hi[2] + 1};
  DftMonitor mon(*eng, {f}, {Component::Ex, Component::Ey, Component::Ez, Component::Hx, Component::Hy, Component::Hz}, mb);
  const int steps = 1400;
  eng->run(steps, {}, 200);
  const std::int64_t NN = s.grid.cell_count();
  std::vector<std::complex<double>> e(3 * NN), h(3 * NN);
  for (int q = 0; q < 6; ++q) {
    const auto v = mon.spectrum(Component(q), 0);
    auto& dst = q < 3 ? e : h;
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i)
          dst[(q % 3) * NN + i + std::int64_t(N) * (j + std::int64_t(N) * k)] =
              std::complex<double>(v[i + std::size_t(N + 1) * (j + std::size_t(N + 1) * k)]);
  }
  std::vector<double> wv(steps);
  for (int n = 0; n < steps; ++n) wv[n] = pw.waveform.value((n + 1) * op.dt());
  const double e0 = pw.amplitude * std::abs(vem_test::dtft(wv, 0, steps, op.dt(), op.dt(), f));
  const NearToFarTransform nf(s.grid, f, e, h, nb, {0.0, 0.0, 0.0});
  const MieSphere mie(a, f, eps);
  const RcsError r = vem_test::rcs_error(
      [&](double th, int p) { return nf.rcs(th, p == 0 ? 0.0 : 0.5 * kPi, e0); }, mie,
      nf.scattering_cross_section(16, 32, e0), 20.0, 10);
  std::printf("  FDTD CPU lossy sphere %s: worst %.3f dB (%c plane %g deg, %d angles), rms %.3f dB, C_sca ratio %.4f\n",
              smoothed ? "smoothed" : "staircase", r.worst_db, r.plane, r.worst_deg, r.compared, r.rms_db, r.csca_ratio);
  return r;
}

}  // namespace

TEST(FdtdSubpixelSphereCpu, LossySphereSmoothedBeatsStaircase) {
  const vem_test::ThreadsForGrid threads(46 * 46 * 46);
  const RcsError st = fdtd_lossy_sphere(false), sm = fdtd_lossy_sphere(true);
  EXPECT_LT(sm.worst_db, st.worst_db);
  EXPECT_LT(std::fabs(sm.csca_ratio - 1), std::fabs(st.csca_ratio - 1));
  EXPECT_LT(sm.worst_db, 1.0);
  RecordProperty("staircase_worst_db", str(st.worst_db));
  RecordProperty("smoothed_worst_db", str(sm.worst_db));
  RecordProperty("staircase_csca_ratio", str(st.csca_ratio));
  RecordProperty("smoothed_csca_ratio", str(sm.csca_ratio));
}

