// The near-to-far transform (near_to_far.h) on its own: the exact near fields of a z-directed
// Hertzian dipole, sampled at the Yee positions, must give the dipole's far-field pattern,
// radiated power and zero cross-polarization; and bad boxes are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
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
