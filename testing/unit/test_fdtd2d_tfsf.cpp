// 2D FDTD proof 4: the TF/SF plane wave (tfsf2d.h) and the 2D near-to-far transform
// (near_to_far2d.h).
//  Leakage / incident field (empty grid, dx = 1 mm, dy = 1.1 mm, 48 x 44 cells, CPML 8, total-
//  field rectangle 5 cells inside the CPML; modulated Gaussian at the design frequency f0 = 15 GHz,
//  20 cells per wavelength): the largest DFT magnitude at f0 of any field (H times eta0) in the
//  scattered-field region (2 cells outside the rectangle, 1 cell clear of the CPML) relative to
//  the incident |A W(f0)| must be below -60 dB; the time-domain peak there (sampled every 5 steps),
//  which includes the 1D/2D dispersion mismatch away from f0, below -40 dB. Inside the rectangle
//  (2 cells from its edges) the main component's DFT must equal the incident phasor
//  A W(f0) e^{-j w0 delay(r)} (W the waveform's DFT at the sample times) within 1 % of |A W|.
//  TM and TE, along +x and at phi = 29 degrees.
//  Scattering: a dielectric circular cylinder (eps_r = 2, radius half a wavelength, 30 cells per
//  wavelength, per-cell permittivity from the area fraction inside the circle) lit at
//  phi = 29 degrees; the bistatic scattering width from the near-to-far transform on a rectangle in
//  the scattered-field region, against the exact series (Balanis, Advanced Engineering
//  Electromagnetics, sec. 11.5; Harrington sec. 5-8):
//    sigma(phi) = (4 / k) |sum_n a_n e^{j n (phi - phi_inc)}|^2,
//    a_n = [q J_n(ka) J_n'(k1 a) - J_n'(ka) J_n(k1 a)] / [H_n'(ka) J_n(k1 a) - q H_n(ka) J_n'(k1 a)],
//    H_n = H_n^(2), k1 = k sqrt(eps_r), q = sqrt(eps_r) (TM, Ez continuous with dEz/drho) or
//    1 / sqrt(eps_r) (TE, Hz continuous with (1/eps) dHz/drho);
//  within 1 dB wherever the exact width is within 20 dB of its peak, TM and TE.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <iostream>

#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd2d/extensions/dft_monitor2d.h"
#include "vem/fdtd2d/extensions/near_to_far2d.h"
#include "vem/fdtd2d/extensions/tfsf2d.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

using namespace vem;
using namespace vem_test;
using cd = std::complex<double>;

namespace {

// Largest |field| in a sample set, every `every` steps (time-domain leakage).
class PeakWatch final : public Fdtd2dExtension {
 public:
  PeakWatch(Fdtd2dEngine& e, std::vector<std::size_t> samples, int every) : e_(e), samples_(std::move(samples)), every_(every) {
    e_.add_extension(this);
  }
  ~PeakWatch() override { e_.remove_extension(this); }
  void hook(Fdtd2dEngine& eng, HookPoint where, int step) override {
    if (where != HookPoint::end_of_step || (step + 1) % every_ != 0) return;
    for (Component c : eng.op().components()) {
      const std::vector<float> f = eng.field(c);
      const double sc = is_electric(c) ? 1.0 : kEta0;
      for (std::size_t o : samples_) peak = std::max(peak, sc * std::fabs(f[o]));
    }
  }
  double peak = 0;

 private:
  Fdtd2dEngine& e_;
  std::vector<std::size_t> samples_;
  int every_;
};

cd waveform_dft(const Waveform& w, double f, double dt, int steps, double t_first) {
  cd s = 0;
  for (int n = 0; n < steps; ++n) {
    const double t = t_first + n * dt;
    s += w.value(t) * std::exp(cd(0, -2 * kPi * f * t)) * dt;
  }
  return s;
}

void check_leakage(Polarization2D pol, double phi, Backend backend) {
  const auto t0 = std::chrono::steady_clock::now();
  const double f0 = 15e9;
  Fdtd2dSetup s;
  s.grid.nx = 48;
  s.grid.ny = 44;
  s.grid.dx = 1.0e-3;
  s.grid.dy = 1.1e-3;
  s.polarization = pol;
  s.boundaries = BoundarySpec2D::all(BoundaryType::cpml, 8);
  s.materials = {Material::vacuum()};
  const ThreadsForGrid threads(s.grid.cell_count());
  Fdtd2dOperator op(s);
  auto eng = make_fdtd2d_engine(op, backend);
  const TfsfBox2D box = automatic_tfsf_box_2d(s.grid, s.boundaries, 5);
  PlaneWave2D pw;
  pw.phi = phi;
  pw.amplitude = 3.0;
  pw.waveform = Waveform::modulated_gaussian(f0, 10e9);
  Tfsf2dSource src(*eng, pw, box);
  const auto comps = op.components();
  DftMonitor2d mon(*eng, {f0}, {comps[0], comps[1], comps[2]});
  const std::size_t sx = s.grid.nx + 1;
  std::vector<std::size_t> sf;  // scattered-field samples
  for (int j = 9; j <= s.grid.ny - 9; ++j)
    for (int i = 9; i <= s.grid.nx - 9; ++i)
      if (i < box.lo[0] - 2 || i > box.hi[0] + 1 || j < box.lo[1] - 2 || j > box.hi[1] + 1) sf.push_back(i + sx * j);
  PeakWatch watch(*eng, sf, 5);
  const int steps = 1500;
  eng->run(steps, {}, 500);
  const double dt = op.dt();
  const bool tm = pol == Polarization2D::tm;
  // Main component: TM Ez (E times, A), TE Hz (H times, A / eta0).
  const cd W = waveform_dft(pw.waveform, f0, dt, steps, tm ? dt : 0.5 * dt);
  const double ref = pw.amplitude * std::abs(W);
  double leak = 0;
  for (int q = 0; q < 3; ++q) {
    const auto v = mon.spectrum(comps[q], 0);
    const double sc = is_electric(comps[q]) ? 1.0 : kEta0;
    for (std::size_t o : sf) leak = std::max(leak, sc * std::abs(v[o]));
  }
  const auto main = mon.spectrum(comps[0], 0);
  double inc_err = 0;
  for (int j = box.lo[1] + 2; j <= box.hi[1] - 3; ++j)
    for (int i = box.lo[0] + 2; i <= box.hi[0] - 3; ++i) {
      const cd exact = pw.amplitude * W * std::exp(cd(0, -2 * kPi * f0 * src.delay(s.grid.position(comps[0], i, j))));
      const cd num = cd(main[i + sx * j]) * (tm ? 1.0 : kEta0);
      inc_err = std::max(inc_err, std::abs(num - exact) / ref);
    }
  const double leak_db = 20 * std::log10(leak / ref), td_db = 20 * std::log10(watch.peak / pw.amplitude);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "  " << polarization_name(pol) << " phi " << phi << ": leakage at f0 " << leak_db << " dB, time domain "
            << td_db << " dB, incident-field error " << inc_err << " (" << secs << " s)\n";
  testing::Test::RecordProperty("leakage_db", std::to_string(leak_db));
  testing::Test::RecordProperty("incident_error", std::to_string(inc_err));
  EXPECT_LT(leak_db, -60.0);
  EXPECT_LT(td_db, -40.0);
  EXPECT_LT(inc_err, 0.01);
}

// Exact bistatic scattering width of a dielectric cylinder (see the top of the file).
double series_width(Polarization2D pol, double k, double a, double eps_r, double dphi) {
  const double k1 = k * std::sqrt(eps_r);
  const double q = pol == Polarization2D::tm ? std::sqrt(eps_r) : 1.0 / std::sqrt(eps_r);
  auto J = [](int n, double x) { return std::cyl_bessel_j(double(n), x); };
  auto Y = [](int n, double x) { return std::cyl_neumann(double(n), x); };
  // Derivatives: Z_n' = Z_{n-1} - (n / x) Z_n (n >= 1), Z_0' = -Z_1.
  auto Jp = [&](int n, double x) { return n == 0 ? -J(1, x) : J(n - 1, x) - n / x * J(n, x); };
  auto H = [&](int n, double x) { return cd(J(n, x), -Y(n, x)); };
  auto Hp = [&](int n, double x) { return n == 0 ? -H(1, x) : H(n - 1, x) - n / x * H(n, x); };
  cd sum = 0;
  const int nmax = int(k1 * a) + 15;
  for (int n = 0; n <= nmax; ++n) {
    const double x = k * a, x1 = k1 * a;
    const cd an = (q * J(n, x) * Jp(n, x1) - Jp(n, x) * J(n, x1)) / (Hp(n, x) * J(n, x1) - q * H(n, x) * Jp(n, x1));
    sum += (n == 0 ? 1.0 : 2.0) * an * std::cos(n * dphi);  // a_{-n} = a_n
  }
  return 4.0 / k * std::norm(sum);
}

void check_cylinder(Polarization2D pol, Backend backend) {
  const auto t0 = std::chrono::steady_clock::now();
  const double f0 = 1e9, lambda = kC0 / f0, k = 2 * kPi / lambda;
  const double a = 0.5 * lambda, eps_r = 2.0, phi_inc = 29.0 * kPi / 180.0;
  Fdtd2dSetup s;
  s.grid.dx = lambda / 30;
  s.grid.dy = lambda / 33;
  s.grid.nx = 74;
  s.grid.ny = 80;
  s.grid.origin = {-s.grid.nx / 2 * s.grid.dx, -s.grid.ny / 2 * s.grid.dy};
  s.polarization = pol;
  s.boundaries = BoundarySpec2D::all(BoundaryType::cpml, 10);
  s.material_mode = MaterialMode::coefficient_array;
  std::vector<float> eps(s.grid.cell_count(), 1.0f);
  const int sub = 8;
  for (int j = 0; j < s.grid.ny; ++j)
    for (int i = 0; i < s.grid.nx; ++i) {
      int in = 0;
      for (int v = 0; v < sub; ++v)
        for (int u = 0; u < sub; ++u) {
          const double x = s.grid.origin[0] + (i + (u + 0.5) / sub) * s.grid.dx;
          const double y = s.grid.origin[1] + (j + (v + 0.5) / sub) * s.grid.dy;
          in += x * x + y * y < a * a;
        }
      eps[i + std::size_t(s.grid.nx) * j] = float(1.0 + (eps_r - 1.0) * in / double(sub * sub));
    }
  s.medium.eps_r = {eps};
  const ThreadsForGrid threads(s.grid.cell_count());
  Fdtd2dOperator op(s);
  auto eng = make_fdtd2d_engine(op, backend);
  const TfsfBox2D box = automatic_tfsf_box_2d(s.grid, s.boundaries, 6);  // cylinder: 15 / 16.5 cells
  PlaneWave2D pw;
  pw.phi = phi_inc;
  pw.amplitude = 1.0;
  pw.waveform = Waveform::modulated_gaussian(f0, 0.8 * f0);
  Tfsf2dSource src(*eng, pw, box);
  const auto comps = op.components();
  DftMonitor2d mon(*eng, {f0}, {comps[0], comps[1], comps[2]});
  const int steps = 4000;
  eng->run(steps, {}, 1000);
  const double dt = op.dt();
  const bool tm = pol == Polarization2D::tm;
  const cd W = waveform_dft(pw.waveform, f0, dt, steps, tm ? dt : 0.5 * dt);
  const cd incident = pw.amplitude * W * (tm ? 1.0 : 1.0 / kEta0);
  NearToFarContour2D contour;
  contour.lo = {box.lo[0] - 3, box.lo[1] - 3};
  contour.hi = {box.hi[0] + 3, box.hi[1] + 3};
  std::vector<double> phi;
  for (int q = 0; q < 360; ++q) phi.push_back(q * kPi / 180.0);
  const auto far = near_to_far_2d(op, contour, f0, {mon.spectrum(comps[0], 0), mon.spectrum(comps[1], 0),
                                                    mon.spectrum(comps[2], 0)}, phi);
  const auto width = scattering_width_2d(far, incident);
  std::vector<double> exact(phi.size());
  for (std::size_t q = 0; q < phi.size(); ++q) exact[q] = series_width(pol, k, a, eps_r, phi[q] - phi_inc);
  const double peak = *std::max_element(exact.begin(), exact.end());
  double worst = 0;
  int counted = 0;
  for (std::size_t q = 0; q < phi.size(); ++q) {
    if (exact[q] < peak * 0.01) continue;
    const double d = 10 * std::log10(width[q] / exact[q]);
    worst = std::max(worst, std::fabs(d));
    ++counted;
    if (q % 30 == 0)
      std::cout << "    phi " << q << " deg: FDTD " << 10 * std::log10(width[q] / lambda) << " dB(lambda), exact "
                << 10 * std::log10(exact[q] / lambda) << "\n";
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "  " << polarization_name(pol) << " cylinder: worst |difference| " << worst << " dB over " << counted
            << " angles within 20 dB of the peak (" << secs << " s on " << eng->backend() << ")\n";
  testing::Test::RecordProperty("worst_db", std::to_string(worst));
  EXPECT_GT(counted, 90);
  EXPECT_LT(worst, 1.0);
}

}  // namespace

class Fdtd2dTfsf : public testing::TestWithParam<Backend> {};

TEST_P(Fdtd2dTfsf, TmLeakageAlongX) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_leakage(Polarization2D::tm, 0.0, GetParam());
}
TEST_P(Fdtd2dTfsf, TmLeakageOblique) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_leakage(Polarization2D::tm, 29.0 * kPi / 180.0, GetParam());
}
TEST_P(Fdtd2dTfsf, TeLeakageAlongX) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_leakage(Polarization2D::te, 0.0, GetParam());
}
TEST_P(Fdtd2dTfsf, TeLeakageOblique) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_leakage(Polarization2D::te, 29.0 * kPi / 180.0, GetParam());
}
TEST_P(Fdtd2dTfsf, TmDielectricCylinderScatteringWidth) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_cylinder(Polarization2D::tm, GetParam());
}
TEST_P(Fdtd2dTfsf, TeDielectricCylinderScatteringWidth) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_cylinder(Polarization2D::te, GetParam());
}

VEM_INSTANTIATE_BACKENDS(Fdtd2dTfsf);
