// The Mie series against published values and against internal identities.
//
// Published values:
//  - Bohren & Huffman's BHMIE test case (their program CALLBHMIE: m = 1.55, radius 0.525 um,
//    wavelength 0.6328 um): Q_ext = Q_sca = 3.10543, Q_back = 2.92534, g = 0.63314.
//  - The same sphere with m = 1.55 - 0.1j and m = 1.5 - 0.5j, x = 2.5 (reference values used in
//    the test-suite of S. Prahl's miepython, which reproduces BHMIE/MIEV0).
//  - Wiscombe's MIEV0 test cases (NCAR/TN-140+STR, 1979; Appl. Opt. 19, 1505, 1980), in the
//    e^{+jwt} convention used here: cases 5-7, 10, 14 (S1, S2 at 0..180 deg), 17, 18.
// Identities: optical theorem Q_ext = (4 / x^2) Re S(0) (any sphere) and Q_ext = Q_sca (lossless);
// the angular integral of |S1|^2 + |S2|^2 gives Q_sca; the Rayleigh limit; continuity of
// tangential E and normal D across the surface; the uniform internal field 3 / (eps + 2) of a
// small sphere.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "vem/core/error.h"
#include "vem/models/mie.h"
#include "vem/core/yee_grid.h"

using namespace vem;
using cd = std::complex<double>;

namespace {
constexpr double kDeg = kPi / 180.0;
}

TEST(Mie, BohrenHuffmanDielectric) {
  const double x = 2.0 * kPi * 0.525 / 0.6328;
  const auto s = MieSphere::from_size_parameter(x, 1.55);
  EXPECT_NEAR(s.q_ext(), 3.10543, 1e-5);
  EXPECT_NEAR(s.q_sca(), 3.10543, 1e-5);
  EXPECT_NEAR(s.q_back(), 2.92534, 1e-5);
  EXPECT_NEAR(s.asymmetry(), 0.63314, 1e-5);
}

TEST(Mie, BohrenHuffmanAbsorbing) {
  const double x = 2.0 * kPi * 0.525 / 0.6328;
  const auto s = MieSphere::from_size_parameter(x, cd(1.55, -0.1));
  EXPECT_NEAR(s.q_ext(), 2.86165188243, 1e-7);
  EXPECT_NEAR(s.q_sca(), 1.66424911991, 1e-7);
  EXPECT_NEAR(s.q_back(), 0.20599534080, 1e-7);
  EXPECT_NEAR(s.asymmetry(), 0.80128972639, 1e-7);
  const auto t = MieSphere::from_size_parameter(2.5, cd(1.5, -0.5));
  EXPECT_NEAR(t.q_ext(), 2.562873497454734, 1e-7);
  EXPECT_NEAR(t.q_sca(), 1.097071819088392, 1e-7);
  EXPECT_NEAR(t.q_back(), 0.123586468179818, 1e-7);
  EXPECT_NEAR(t.asymmetry(), 0.748905978948507, 1e-7);
}

TEST(Mie, WiscombeMiev0Cases) {
  // Case 5 and 6: small spheres with m < 1 (the Rayleigh-regime switch of MIEV0).
  {
    const auto s = MieSphere::from_size_parameter(0.099, 0.75);
    EXPECT_NEAR(s.q_sca(), 0.000007, 1e-6);
    EXPECT_NEAR(s.asymmetry(), 0.001448, 1e-6);
    const cd s1 = s.s1(kPi);
    EXPECT_NEAR(s1.real(), 1.81756e-8, 1e-12);
    EXPECT_NEAR(s1.imag(), -1.64810e-4, 1e-9);
  }
  {
    const auto s = MieSphere::from_size_parameter(0.101, 0.75);
    EXPECT_NEAR(s.q_sca(), 0.000008, 1e-6);
    EXPECT_NEAR(s.asymmetry(), 0.001507, 1e-6);
  }
  {  // case 7
    const auto s = MieSphere::from_size_parameter(10.0, 0.75);
    EXPECT_NEAR(s.q_sca(), 2.232265, 1e-6);
    EXPECT_NEAR(s.asymmetry(), 0.896473, 1e-6);
    EXPECT_NEAR(s.s1(kPi).real(), -1.07857, 1e-5);
    EXPECT_NEAR(s.s1(kPi).imag(), -3.60881e-2, 1e-6);
  }
  {  // case 10: large, nearly real |m x| (needs the deep start of the D_n recurrence)
    const auto s = MieSphere::from_size_parameter(100.0, cd(1.33, -1e-5));
    EXPECT_NEAR(s.q_sca(), 2.096594, 1e-6);
    EXPECT_NEAR(s.asymmetry(), 0.868959, 1e-6);
  }
  {  // cases 17 and 18: strongly absorbing, large |m|
    const auto s = MieSphere::from_size_parameter(1.0, cd(10, -10));
    EXPECT_NEAR(s.q_sca(), 2.049405, 1e-6);
    EXPECT_NEAR(s.asymmetry(), -0.110664, 1e-6);
    const auto t = MieSphere::from_size_parameter(100.0, cd(10, -10));
    EXPECT_NEAR(t.q_sca(), 1.836785, 1e-6);
    EXPECT_NEAR(t.asymmetry(), 0.556215, 1e-6);
  }
}

TEST(Mie, WiscombeCase14AmplitudeFunctions) {
  const auto s = MieSphere::from_size_parameter(1.0, cd(1.5, -1.0));
  EXPECT_NEAR(s.q_sca(), 0.6634538, 1e-6);
  EXPECT_NEAR(s.asymmetry(), 0.192136, 1e-6);
  const double ref[7][4] = {{0.584080, 0.190515, 0.584080, 0.190515},
                            {0.565702, 0.187200, 0.500161, 0.145611},
                            {0.517525, 0.178443, 0.287964, 0.041054},
                            {0.456340, 0.167167, 0.0362285, -0.0618265},
                            {0.400212, 0.156643, -0.174875, -0.122959},
                            {0.362157, 0.149391, -0.305682, -0.143846},
                            {0.348844, 0.146829, -0.348844, -0.146829}};
  for (int i = 0; i < 7; ++i) {
    const double th = 30.0 * i * kDeg;
    EXPECT_NEAR(s.s1(th).real(), ref[i][0], 1e-6) << 30 * i << " deg";
    EXPECT_NEAR(s.s1(th).imag(), ref[i][1], 1e-6) << 30 * i << " deg";
    EXPECT_NEAR(s.s2(th).real(), ref[i][2], 1e-6) << 30 * i << " deg";
    EXPECT_NEAR(s.s2(th).imag(), ref[i][3], 1e-6) << 30 * i << " deg";
  }
}

TEST(Mie, OpticalTheoremAndAngularIntegral) {
  for (cd m : {cd(2.0, 0.0), cd(1.33, 0.0), cd(2.0, -0.5), cd(4.0, -3.0)}) {
    for (double x : {0.3, 1.509, 6.0}) {
      const auto s = MieSphere::from_size_parameter(x, m);
      // Q_ext from the forward amplitude.
      EXPECT_NEAR(s.q_ext(), 4.0 / (x * x) * s.s1(0.0).real(), 1e-10 * s.q_ext());
      if (m.imag() == 0.0) EXPECT_NEAR(s.q_ext(), s.q_sca(), 1e-10 * s.q_sca());
      if (m.imag() < 0.0) EXPECT_GT(s.q_abs(), 0.0);
      // Q_sca = (1 / x^2) int (|S1|^2 + |S2|^2) sin(theta) d theta   (Simpson, 2000 panels)
      const int n = 2000;
      double sum = 0;
      for (int i = 0; i <= n; ++i) {
        const double th = kPi * i / n;
        const double w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        sum += w * (std::norm(s.s1(th)) + std::norm(s.s2(th))) * std::sin(th);
      }
      const double qsca = sum * (kPi / n) / 3.0 / (x * x);
      EXPECT_NEAR(qsca, s.q_sca(), 1e-6 * s.q_sca()) << "x = " << x << " m = " << m;
    }
  }
}

TEST(Mie, RayleighLimit) {
  for (cd eps : {cd(4.0, 0.0), cd(10.0, -5.0)}) {
    const double x = 0.01;
    const cd m = std::sqrt(eps);
    const auto s = MieSphere::from_size_parameter(x, m);
    const cd alpha = (eps - 1.0) / (eps + 2.0);
    const double qsca = 8.0 / 3.0 * std::pow(x, 4) * std::norm(alpha);
    const double qabs = -4.0 * x * alpha.imag();  // e^{jwt}: Im(alpha) < 0 for loss
    EXPECT_NEAR(s.q_sca(), qsca, 1e-3 * qsca);
    if (eps.imag() != 0.0) EXPECT_NEAR(s.q_abs(), qabs, 1e-3 * qabs);
    // Uniform internal field 3 / (eps + 2) x_hat (corrections O((m x)^2) ~ 1e-3 here).
    const auto e = s.e_field({0.3 * x, -0.2 * x, 0.1 * x});
    const cd expect = 3.0 / (eps + 2.0);
    EXPECT_NEAR(std::abs(e[0] - expect), 0.0, 1e-2 * std::abs(expect));
    EXPECT_LT(std::abs(e[1]) + std::abs(e[2]), 1e-2 * std::abs(expect));
  }
}

TEST(Mie, FieldsAreContinuousAcrossTheSurface) {
  const cd eps(4.0, -2.0);
  const MieSphere s(0.05, 1e9, eps);
  const double a = s.radius();
  for (double th : {0.0, 0.3, 1.1, 1.9, 2.5, kPi}) {
    for (double ph : {0.2, 1.3, 4.0}) {
      const double n[3] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
      const double d = 1e-7;
      const auto ei = s.e_field({a * (1 - d) * n[0], a * (1 - d) * n[1], a * (1 - d) * n[2]});
      const auto eo = s.e_field({a * (1 + d) * n[0], a * (1 + d) * n[1], a * (1 + d) * n[2]});
      const cd ri = ei[0] * n[0] + ei[1] * n[1] + ei[2] * n[2];
      const cd ro = eo[0] * n[0] + eo[1] * n[1] + eo[2] * n[2];
      double scale = 0;
      for (int c = 0; c < 3; ++c) scale = std::max(scale, std::abs(eo[c]));
      EXPECT_NEAR(std::abs(eps * ri - ro), 0.0, 1e-4 * scale) << th << " " << ph;
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(std::abs((ei[c] - ri * n[c]) - (eo[c] - ro * n[c])), 0.0, 1e-4 * scale);
    }
  }
}

TEST(Mie, FarFieldMatchesAmplitudeFunctions) {
  // At k r >> 1 the scattered field approaches (e^{-jkr} / (j k r)) (S2 cos(phi) theta_hat -
  // S1 sin(phi) phi_hat) in the e^{jwt} convention.
  const MieSphere s(0.072, 1e9, 4.0);
  const double k = s.k0(), r = 2000.0 / k;
  for (double th : {0.4, 1.2, 2.6}) {
    const double ph = 0.0;  // E-plane: theta-polarized
    const std::array<double, 3> p{r * std::sin(th) * std::cos(ph), r * std::sin(th) * std::sin(ph),
                                  r * std::cos(th)};
    auto e = s.e_field(p);
    e[0] -= std::exp(cd(0.0, -k * p[2]));  // remove the incident wave
    const cd eth = e[0] * std::cos(th) * std::cos(ph) + e[1] * std::cos(th) * std::sin(ph) -
                   e[2] * std::sin(th);
    const cd expect = std::exp(cd(0.0, -k * r)) / cd(0.0, k * r) * s.s2(th);
    EXPECT_NEAR(std::abs(eth - expect), 0.0, 2e-3 * std::abs(expect)) << th;
  }
}

TEST(Mie, PaperSphereNumbers) {
  // The FDFD validation case: a = 7.2 cm, eps_r = 4, 1 GHz.
  const MieSphere s(0.072, 1e9, 4.0);
  EXPECT_NEAR(s.size_parameter(), 2.0 * kPi * 1e9 / kC0 * 0.072, 1e-12);
  EXPECT_NEAR(s.q_ext(), s.q_sca(), 1e-9);
  EXPECT_NEAR(s.rcs_e_plane(kPi), s.rcs_h_plane(kPi), 1e-12);  // back-scatter: |S1| = |S2|
  EXPECT_NEAR(s.rcs_e_plane(kPi), s.q_back() * kPi * 0.072 * 0.072, 1e-12);
}

TEST(Mie, RejectsBadInput) {
  EXPECT_THROW(MieSphere(0.0, 1e9, 4.0), Error);
  EXPECT_THROW(MieSphere(0.1, -1.0, 4.0), Error);
  EXPECT_THROW(MieSphere(0.1, 1e9, cd(4.0, 1.0)), Error);  // gain in e^{jwt}
  EXPECT_THROW(MieSphere::from_size_parameter(-1.0, 1.5), Error);
}
