// 2D FDTD proof 1: resonances of closed rectangles (dx != dy, non-square) against the
// eigenfrequencies of the 2D Yee scheme,
//   sin(w dt / 2) / (v dt) = sqrt( (sin(kx dx / 2) / dx)^2 + (sin(ky dy / 2) / dy)^2 ),
// (Taflove & Hagness, 3rd ed., eq. 4.15 restricted to 2D), with k = m pi / L between two walls of
// one kind and 2 pi m / L across a periodic axis. Which m are allowed depends on the main
// component (TM: Ez, TE: Hz): Ez ~ sin between PEC walls (m >= 1) and ~ cos between PMC walls
// (m >= 0); Hz the other way round; periodic m >= 0. The discrete solution obeys the relation
// exactly up to float32 rounding: the measured peaks (Blackman-Harris-windowed DTFT maximum,
// spectrum_util.h) must agree to 1e-4 relative, and their deviation from the continuum value
// v |k| / (2 pi) must be the predicted one (so the test can tell the discrete from the continuum
// answer). Cases: TM and TE in a PEC rectangle (indexed vacuum); TM with PEC x / PMC y walls and
// TE with periodic x / PEC y, both filled with eps_r = 2, mu_r = 1.5 as per-cell coefficient
// arrays (PMC ghosts, periodic copies, the coefficient-array path, magnetic materials).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "spectrum_util.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

using namespace vem;
using namespace vem_test;

namespace {

enum class Wall { pec, pmc, periodic };

struct Mode {
  int m[2];
  double f_discrete, f_continuum;
};

std::vector<Mode> rect_modes(const YeeGrid2D& g, const Wall w[2], Polarization2D pol, double v, double dt,
                             double f_max) {
  const int n[2] = {g.nx, g.ny};
  const double d[2] = {g.dx, g.dy};
  std::vector<Mode> out;
  int lo[2], hi[2];
  for (int a = 0; a < 2; ++a) {
    const bool sine = (w[a] == Wall::pec) == (pol == Polarization2D::tm);
    lo[a] = (w[a] != Wall::periodic && sine) ? 1 : 0;
    hi[a] = w[a] == Wall::periodic ? n[a] / 2 : n[a] - 1;
  }
  for (int p = lo[0]; p <= hi[0]; ++p)
    for (int q = lo[1]; q <= hi[1]; ++q) {
      if (p == 0 && q == 0) continue;
      const int m[2] = {p, q};
      double s2 = 0, k2 = 0;
      for (int a = 0; a < 2; ++a) {
        const double k = (w[a] == Wall::periodic ? 2.0 : 1.0) * m[a] * kPi / (n[a] * d[a]);
        s2 += std::pow(std::sin(0.5 * k * d[a]) / d[a], 2);
        k2 += k * k;
      }
      const double om = 2.0 / dt * std::asin(v * dt * std::sqrt(s2));
      Mode md{{p, q}, om / (2 * kPi), v * std::sqrt(k2) / (2 * kPi)};
      if (md.f_discrete < f_max) out.push_back(md);
    }
  std::sort(out.begin(), out.end(), [](const Mode& x, const Mode& y) { return x.f_discrete < y.f_discrete; });
  return out;
}

std::string name_of(const Mode& m) {
  std::ostringstream os;
  os << "(" << m.m[0] << "," << m.m[1] << ")";
  return os.str();
}

// Rings the rectangle of `s` with a broadband soft source and checks every isolated mode below
// f_check; returns the number checked.
int check_resonances(Fdtd2dSetup s, Backend backend, const Wall walls[2], double v, double f_check) {
  const auto t0 = std::chrono::steady_clock::now();
  PointSource src;
  src.i = 4;
  src.j = 3;
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(50e9);
  if (s.polarization == Polarization2D::tm) {
    src.kind = PointSource::Kind::electric_current;  // Ez line current
    src.direction = {0, 0, 1};
    s.probes = {{"ez", Component::Ez, 5, 7, 0}, {"hx", Component::Hx, 9, 6, 0}, {"hy", Component::Hy, 3, 8, 0},
                {"ez2", Component::Ez, 10, 2, 0}};
  } else {
    src.kind = PointSource::Kind::electric_current;  // Ex and Ey
    src.direction = {1.0, 0.8, 0};
    s.probes = {{"hz", Component::Hz, 8, 1, 0}, {"ex", Component::Ex, 2, 3, 0}, {"ey", Component::Ey, 7, 2, 0},
                {"hz2", Component::Hz, 3, 7, 0}};
  }
  s.sources = {src};
  const ThreadsForGrid threads(s.grid.cell_count());
  Fdtd2dOperator op(s);
  auto eng = make_fdtd2d_engine(op, backend);
  const double dt = op.dt();
  const int skip = int(std::ceil(2.0 * src.waveform.t0 / dt)) + 10;
  const std::size_t n_rec = 1u << 16;
  eng->run(skip + int(n_rec), {}, 4096);
  const ProbeRecord rec = eng->probes();

  Channels ch;
  ch.dt = dt;
  ch.window = blackman_harris(n_rec);
  for (const auto& vals : rec.values) {
    std::vector<double> x(vals.begin() + skip, vals.begin() + skip + n_rec);
    double rms = 0;
    for (double q : x) rms += q * q;
    rms = std::sqrt(rms / double(x.size()));
    EXPECT_GT(rms, 0.0) << "a probe recorded nothing";
    if (!(rms > 0)) return 0;
    for (double& q : x) q /= rms;
    ch.x.push_back(std::move(x));
  }
  const std::size_t n_fft = 4 * n_rec;
  const std::vector<double> p = summed_power_spectrum(ch, n_fft);
  const double df = 1.0 / (double(n_fft) * dt);
  const double pmax = *std::max_element(p.begin() + 1, p.end());
  const std::vector<std::size_t> peaks = local_maxima(p, 1e-8 * pmax);
  EXPECT_FALSE(peaks.empty());
  if (peaks.empty()) return 0;

  const std::vector<Mode> all = rect_modes(s.grid, walls, s.polarization, v, dt, 2 * f_check);
  std::vector<Mode> chosen;
  for (std::size_t i = 0; i < all.size() && all[i].f_discrete <= f_check; ++i) {
    bool isolated = true;
    for (std::size_t j = 0; j < all.size(); ++j)
      if (j != i && std::fabs(all[j].f_discrete - all[i].f_discrete) < 0.015 * all[i].f_discrete) isolated = false;
    if (isolated) chosen.push_back(all[i]);
  }
  EXPECT_GE(chosen.size(), 4u);
  double worst = 0;
  int checked = 0;
  for (const Mode& m : chosen) {
    std::size_t best = peaks[0];
    for (std::size_t b : peaks)
      if (std::fabs(b * df - m.f_discrete) < std::fabs(best * df - m.f_discrete)) best = b;
    const double f_meas = refine_peak(ch, best * df, 1.5 * df, 1e-9 * m.f_discrete);
    const double rel = (f_meas - m.f_discrete) / m.f_discrete;
    const double dev_pred = (m.f_discrete - m.f_continuum) / m.f_continuum;
    const double dev_meas = (f_meas - m.f_continuum) / m.f_continuum;
    std::cout << std::setprecision(9) << "  mode " << name_of(m) << ": measured " << f_meas * 1e-9 << " GHz, Yee "
              << m.f_discrete * 1e-9 << " GHz (rel. err " << std::setprecision(3) << rel
              << "); deviation from continuum measured " << dev_meas << ", predicted " << dev_pred << "\n";
    EXPECT_LT(std::fabs(rel), 1e-4) << "mode " << name_of(m);
    EXPECT_LT(std::fabs(dev_meas - dev_pred), 1e-4) << "mode " << name_of(m);
    if (std::fabs(dev_pred) > 1e-3) EXPECT_NEAR(dev_meas / dev_pred, 1.0, 0.1) << "mode " << name_of(m);
    worst = std::max(worst, std::fabs(rel));
    ++checked;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "  " << checked << " modes, worst relative error vs the 2D Yee relation " << worst << ", " << secs
            << " s on " << eng->backend() << "\n";
  testing::Test::RecordProperty("modes_checked", checked);
  testing::Test::RecordProperty("worst_rel_err_yee", std::to_string(worst));
  return checked;
}

Fdtd2dSetup rect(Polarization2D pol) {
  Fdtd2dSetup s;
  s.grid.nx = 13;
  s.grid.ny = 11;
  s.grid.dx = 1.0e-3;
  s.grid.dy = 1.3e-3;
  s.polarization = pol;
  s.boundaries = BoundarySpec2D::all(BoundaryType::pec);
  s.materials = {Material::vacuum()};
  return s;
}

Fdtd2dSetup filled(Fdtd2dSetup s) {  // eps_r = 2, mu_r = 1.5 as per-cell arrays
  s.material_mode = MaterialMode::coefficient_array;
  s.medium.eps_r = {std::vector<float>(s.grid.cell_count(), 2.0f)};
  s.medium.mu_r = {std::vector<float>(s.grid.cell_count(), 1.5f)};
  return s;
}

}  // namespace

class Fdtd2dCavity : public testing::TestWithParam<Backend> {};

TEST_P(Fdtd2dCavity, TmPecRectangleMatchesYeeEigenfrequencies) {
  VEM_REQUIRE_BACKEND(GetParam());
  const Wall w[2] = {Wall::pec, Wall::pec};
  EXPECT_GE(check_resonances(rect(Polarization2D::tm), GetParam(), w, kC0, 60e9), 4);
}

TEST_P(Fdtd2dCavity, TePecRectangleMatchesYeeEigenfrequencies) {
  VEM_REQUIRE_BACKEND(GetParam());
  const Wall w[2] = {Wall::pec, Wall::pec};
  EXPECT_GE(check_resonances(rect(Polarization2D::te), GetParam(), w, kC0, 60e9), 4);
}

TEST_P(Fdtd2dCavity, TmPecPmcFilledRectangle) {
  VEM_REQUIRE_BACKEND(GetParam());
  Fdtd2dSetup s = filled(rect(Polarization2D::tm));
  s.boundaries.face[2] = s.boundaries.face[3] = BoundaryType::pmc;
  const Wall w[2] = {Wall::pec, Wall::pmc};
  EXPECT_GE(check_resonances(s, GetParam(), w, kC0 / std::sqrt(3.0), 60e9 / std::sqrt(3.0)), 4);
}

TEST_P(Fdtd2dCavity, TePeriodicPecFilledRectangle) {
  VEM_REQUIRE_BACKEND(GetParam());
  Fdtd2dSetup s = filled(rect(Polarization2D::te));
  s.boundaries.face[0] = s.boundaries.face[1] = BoundaryType::periodic;
  const Wall w[2] = {Wall::periodic, Wall::pec};
  EXPECT_GE(check_resonances(s, GetParam(), w, kC0 / std::sqrt(3.0), 60e9 / std::sqrt(3.0)), 4);
}

VEM_INSTANTIATE_BACKENDS(Fdtd2dCavity);
