// FDTD bistatic RCS of a lossy dielectric sphere (coarse CI version): TFSF plane wave
// (x-polarized, travelling +z, the Mie convention of mie.h) on a staircased sphere, running DFT
// monitors (E and H at their true sample times) on a closed box in the scattered-field region,
// the near-to-far transform of near_to_far.h, compared with the Mie series (mie.h).
// Sphere: radius 10 mm, eps_r = 3 - 0.5j at 10 GHz (sigma = 0.5 w eps0 = 0.278 S/m), k0 a = 2.09;
// grid 1 mm (30 cells per free-space wavelength, 17 in the sphere), CPML 8.
// Tolerance (stated looser for the coarse staircase grid): bistatic RCS within 2 dB of Mie at
// every angle of the E and H planes (theta 0..180 deg by 30 deg; the deep side lobes, 20-25 dB
// below forward, carry the largest errors: measured 1.3 dB on the CPU), within 0.5 dB where the
// Mie RCS is above 10 % of its forward value (measured 0.33 dB), and the scattering
// cross-section within 10 % (measured +2.0 %). The measured figures are printed.
#include <chrono>
#include <cmath>
#include <complex>
#include <iostream>

#include "spectrum_util.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/models/mie.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/tfsf.h"

using namespace vem;
using namespace vem_test;

class FdtdSphereRcs : public testing::TestWithParam<Backend> {};

TEST_P(FdtdSphereRcs, LossyDielectricSphereBistaticRcsMatchesMie) {
  VEM_REQUIRE_BACKEND(GetParam());
  const auto t_start = std::chrono::steady_clock::now();
  const double f = 10e9, a = 10e-3, d = 1e-3;
  const std::complex<double> eps(3.0, -0.5);
  const int N = 46, c = 23, pml = 8;
  FdtdSetup s;
  s.grid = {N, N, N, d, d, d};
  s.grid.origin = {-c * d, -c * d, -c * d};  // sphere centre = node (c, c, c) = world origin
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, pml);
  for (auto& p : s.boundaries.cpml) { p.grading_order = 4.0; p.sigma_factor = 0.75; p.kappa_max = 3.0; p.alpha_max = 0.05; }
  const double sigma = -eps.imag() * 2 * kPi * f * kEps0;
  s.materials = {Material::vacuum(), Material::isotropic("sphere", eps.real(), sigma)};
  s.material_index.assign(s.grid.cell_count(), 0);
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        const double x = (i + 0.5 - c) * d, y = (j + 0.5 - c) * d, z = (k + 0.5 - c) * d;
        if (x * x + y * y + z * z <= a * a) s.material_index[i + N * (j + N * k)] = 1;
      }
  const ThreadsForGrid threads(s.grid.cell_count());
  FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
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
  DftMonitor mon(*eng, {f},
                 {Component::Ex, Component::Ey, Component::Ez, Component::Hx, Component::Hy, Component::Hz}, mb);
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
  const double e0 = pw.amplitude * std::abs(dtft(wv, 0, steps, op.dt(), op.dt(), f));
  const NearToFarTransform nf(s.grid, f, e, h, nb, {0.0, 0.0, 0.0});
  const MieSphere mie(a, f, eps);
  double worst_db = 0;
  for (double phi : {0.0, 0.5 * kPi})
    for (int td = 0; td <= 180; td += 30) {
      const double th = td * kPi / 180;
      const double rf = nf.rcs(th, phi, e0), rm = mie.rcs(th, phi);
      const double db = 10 * std::log10(rf / rm);
      worst_db = std::max(worst_db, std::fabs(db));
      std::cout << "  " << (phi == 0 ? "E" : "H") << "-plane theta " << td << " deg: FDTD "
                << rf * 1e4 << " cm^2, Mie " << rm * 1e4 << " cm^2, " << db << " dB\n";
      EXPECT_LT(std::fabs(db), 2.0) << "theta " << td << " phi " << phi;
      if (rm > 0.1 * mie.rcs(0.0, 0.0)) {
        EXPECT_LT(std::fabs(db), 0.5) << "theta " << td << " phi " << phi;
      }
    }
  const double csca = nf.scattering_cross_section(16, 32, e0);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::cout << "  scattering cross-section FDTD " << csca * 1e4 << " cm^2, Mie " << mie.sigma_sca() * 1e4
            << " cm^2 (ratio " << csca / mie.sigma_sca() << "); worst RCS error " << worst_db
            << " dB; " << secs << " s on " << eng->backend() << "\n";
  RecordProperty("worst_rcs_err_db", std::to_string(worst_db));
  RecordProperty("csca_ratio", std::to_string(csca / mie.sigma_sca()));
  EXPECT_NEAR(csca / mie.sigma_sca(), 1.0, 0.10);
}

VEM_INSTANTIATE_BACKENDS(FdtdSphereRcs);
