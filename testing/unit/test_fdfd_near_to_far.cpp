// The near-to-far transform (near_to_far.h) on its own: the exact near fields of a z-directed
// Hertzian dipole, sampled at the Yee positions, must give the dipole's far-field pattern,
// radiated power and zero cross-polarization; and bad boxes are refused.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "vem/core/error.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/core/yee_grid.h"

using namespace vem;
using cd = std::complex<double>;

namespace {

struct Dipole {
  double k;
  cd il{1e-3, 0.0};  // current moment, A m
  // E and H (Cartesian) at r relative to the dipole (e^{jwt}, Balanis eqs. 4-8, 4-10).
  void fields(const std::array<double, 3>& p, std::array<cd, 3>& e, std::array<cd, 3>& h) const {
    const double r = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    const double ct = p[2] / r, st = std::sqrt(std::max(0.0, 1 - ct * ct));
    const double ph = std::atan2(p[1], p[0]);
    const cd jkr(0.0, k * r);
    const cd ex = std::exp(-jkr);
    const cd er = kEta0 * il * ct / (2 * kPi * r * r) * (1.0 + 1.0 / jkr) * ex;
    const cd et = cd(0.0, kEta0 * k) * il * st / (4 * kPi * r) *
                  (1.0 + 1.0 / jkr - 1.0 / (k * r * k * r)) * ex;
    const cd hp = cd(0.0, k) * il * st / (4 * kPi * r) * (1.0 + 1.0 / jkr) * ex;
    const double cp = std::cos(ph), sp = std::sin(ph);
    e = {er * st * cp + et * ct * cp, er * st * sp + et * ct * sp, er * ct - et * st};
    h = {-hp * sp, hp * cp, 0.0};
  }
};

}  // namespace

TEST(FdfdNearToFar, HertzianDipolePatternAndPower) {
  const double f = 1e9, h = 0.01;  // lambda / 30
  const int n = 40;
  YeeGrid g{n, n, n, h, h, h};
  g.origin = {-0.2, -0.2, -0.2};
  const std::array<double, 3> centre{0.0031, -0.0017, 0.0023};  // off the grid points
  const Dipole d{2 * kPi * f / kC0};
  const std::int64_t N = g.cell_count();
  std::vector<cd> e(3 * N), hv(3 * N);
  const Component ec[3] = {Component::Ex, Component::Ey, Component::Ez};
  const Component hc[3] = {Component::Hx, Component::Hy, Component::Hz};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const std::int64_t idx = i + std::int64_t(n) * (j + std::int64_t(n) * k);
          std::array<cd, 3> fe, fh;
          auto pe = g.position(ec[c], i, j, k);
          d.fields({pe[0] - centre[0], pe[1] - centre[1], pe[2] - centre[2]}, fe, fh);
          e[c * N + idx] = fe[c];
          auto ph = g.position(hc[c], i, j, k);
          d.fields({ph[0] - centre[0], ph[1] - centre[1], ph[2] - centre[2]}, fe, fh);
          hv[c * N + idx] = fh[c];
        }
  NtffBox box;
  box.lo = {5, 5, 5};
  box.hi = {35, 35, 35};
  const NearToFarTransform nf(g, f, e, hv, box, centre);
  EXPECT_EQ(nf.patches(), 6u * 30 * 30);
  const double f0 = kEta0 * d.k * std::abs(d.il) / (4 * kPi);  // |F_theta| at theta = 90 deg
  for (double th : {0.3, 0.8, 1.5708, 2.2, 2.9})
    for (double ph : {0.0, 0.7, 2.0, 4.0}) {
      const auto F = nf.pattern(th, ph);
      EXPECT_NEAR(std::abs(F[0]) / f0, std::sin(th), 0.01) << th << " " << ph;
      EXPECT_LT(std::abs(F[1]) / f0, 0.005) << th << " " << ph;
      // Phase: F_theta = j eta k Il sin(theta) / (4 pi) (phase origin at the dipole).
      EXPECT_NEAR(std::arg(F[0]), 0.5 * kPi, 0.02) << th << " " << ph;
    }
  // Radiated power: (1/2 eta) int |F|^2 dOmega = eta (k Il)^2 / (12 pi).
  const double p_exact = kEta0 * std::norm(d.k * d.il) / (12 * kPi);
  EXPECT_NEAR(nf.scattering_cross_section() / (2 * kEta0) / p_exact, 1.0, 0.01);
  EXPECT_NEAR(nf.power_out() / p_exact, 1.0, 0.01);
}

TEST(FdfdNearToFar, RejectsBadBoxes) {
  YeeGrid g{10, 10, 10, 0.01, 0.01, 0.01};
  std::vector<cd> e(3 * 1000), h(3 * 1000);
  NtffBox b;
  b.lo = {0, 2, 2};
  b.hi = {8, 8, 8};
  EXPECT_THROW(NearToFarTransform(g, 1e9, e, h, b, {0, 0, 0}), Error);
  b.lo = {2, 2, 2};
  b.hi = {10, 8, 8};
  EXPECT_THROW(NearToFarTransform(g, 1e9, e, h, b, {0, 0, 0}), Error);
  b.hi = {8, 2, 8};
  EXPECT_THROW(NearToFarTransform(g, 1e9, e, h, b, {0, 0, 0}), Error);
  b.hi = {8, 8, 8};
  EXPECT_THROW(NearToFarTransform(g, 0.0, e, h, b, {0, 0, 0}), Error);
  std::vector<cd> small(10);
  EXPECT_THROW(NearToFarTransform(g, 1e9, small, h, b, {0, 0, 0}), Error);
  EXPECT_NO_THROW(NearToFarTransform(g, 1e9, e, h, b, {0, 0, 0}));
}

// The fast radiation vectors (separable phase per box face, issue 16) against the plain per-patch
// sum, on arbitrary fields: non-cubic cells, an off-centre phase origin, phases of many radians
// across the box, the poles, and a patch filter (the distributed runs' per-rank patches). The
// batched (OpenMP) calls give exactly the single-direction values, and the scattering
// cross-section is the same at any thread count.
TEST(FdfdNearToFar, FastRadiationVectorsMatchDirectSum) {
  YeeGrid g{23, 19, 17, 0.011, 0.009, 0.013};
  g.origin = {-0.1, -0.08, 0.02};
  const std::int64_t N = g.cell_count();
  std::vector<cd> e(3 * N), h(3 * N);
  std::uint64_t x = 12345;
  auto rnd = [&x]() {  // deterministic, in [-1, 1)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return double(x >> 11) / double(1ull << 52) - 1.0;
  };
  for (auto& v : e) v = {rnd(), rnd()};
  for (auto& v : h) v = {rnd() / kEta0, rnd() / kEta0};
  NtffBox box;
  box.lo = {2, 3, 1};
  box.hi = {20, 15, 15};
  const std::array<double, 3> origin{0.013, -0.021, 0.107};
  const double f = 6e9;  // ~0.26 m box, k = 126 rad/m: phases up to ~30 rad
  const NearToFarTransform all(g, f, e, h, box, origin);
  const auto sample = [&](Component c, int i, int j, int k) {
    return (is_electric(c) ? e : h)[axis_of(c) * N + i + std::int64_t(g.nx) * (j + std::int64_t(g.ny) * k)];
  };
  const NearToFarTransform some(g, f, sample, box, origin,
                                [](int a, int q, int u, int v) { return (a + q + u + 2 * v) % 3 != 0; });
  ASSERT_LT(some.patches(), all.patches());
  std::vector<std::array<double, 2>> dirs{{0.0, 0.0}, {kPi, 1.0}, {0.5 * kPi, 0.0}, {0.5 * kPi, 0.5 * kPi}};
  for (int q = 0; q < 40; ++q) dirs.push_back({std::fmod(0.37 * q + 0.1, kPi), std::fmod(1.13 * q, 2 * kPi) - kPi});
  for (const NearToFarTransform* nf : {&all, &some}) {
    const auto batch = nf->radiation_vectors(dirs);
    const auto pats = nf->patterns(dirs);
    const auto rcs = nf->rcs(dirs, 2.0);
    ASSERT_EQ(batch.size(), dirs.size());
    double peak = 0, worst = 0;
    for (std::size_t q = 0; q < dirs.size(); ++q) {
      const auto fast = nf->radiation_vectors(dirs[q][0], dirs[q][1]);
      const auto ref = nf->radiation_vectors_direct(dirs[q][0], dirs[q][1]);
      for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(batch[q][i], fast[i]) << q << " " << i;  // bit for bit
        peak = std::max(peak, std::abs(ref[i]));
        worst = std::max(worst, std::abs(fast[i] - ref[i]));
      }
      const auto p1 = nf->pattern(dirs[q][0], dirs[q][1]);
      EXPECT_EQ(pats[q][0], p1[0]);
      EXPECT_EQ(pats[q][1], p1[1]);
      EXPECT_EQ(rcs[q], nf->rcs(dirs[q][0], dirs[q][1], 2.0));
    }
    ASSERT_GT(peak, 0.0);
    EXPECT_LT(worst / peak, 1e-12) << worst << " of " << peak;
    // Scattering cross-section: the same quadrature from the direct sums; thread count independent.
    const int nt = 6, np = 12;
    std::vector<double> mu, w;
    gauss_legendre(nt, mu, w);
    double sum = 0;
    for (int i = 0; i < nt; ++i)
      for (int j = 0; j < np; ++j) {
        const double th = std::acos(mu[i]), ph = 2.0 * kPi * j / np;
        const auto F = NearToFarTransform::pattern_from(nf->radiation_vectors_direct(th, ph), nf->wavenumber(), th, ph);
        sum += w[i] * (std::norm(F[0]) + std::norm(F[1]));
      }
    const double ref_scs = sum * (2.0 * kPi / np) / 4.0;
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const double one = nf->scattering_cross_section(nt, np, 2.0);
    omp_set_num_threads(std::max(2, threads));
    const double many = nf->scattering_cross_section(nt, np, 2.0);
    omp_set_num_threads(threads);
    EXPECT_EQ(one, many);
    EXPECT_NEAR(many / ref_scs, 1.0, 1e-12);
  }
}
