// Issue 15, proof: the high-order schemes next to PEC and PMC walls, and their stability.
//
// Walls (every scheme, s44 included). The engine resolves the wide stencil's points beyond a PEC or PMC face by images
// (vem/fdtd/schemes/fdtd_scheme.h), which makes the wall an exact symmetry plane: a standing
// wave E_y = sin(k x) between two PEC x walls (E_y = cos(k x) between PMC walls), k = m pi / L,
// must oscillate at exactly the frequency of the periodic lattice's relation (D) for that k,
// to 1e-4 in phase velocity. A reduced-order or zero-padded wall would shift it (the control:
// the same mode's measured velocity differs from Yee's relation by > 1e-3 for every high-order
// scheme, so the test tells the stencils apart).
//
// Stability (leap-frog schemes; s44's, which is dissipative, is in test_fdtd_schemes_s44): 1e5
// steps in a small lossless cavity (PEC x, PMC y, periodic z walls; random
// initial E and H) at 0.99 of each scheme's own Courant limit; every field stays bounded
// (max |E| at the end below 10x its initial maximum, energy within 2x of the initial one).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>

#include "test_support.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;
using namespace vem_test;

namespace {

const Scheme kSchemes[] = {Scheme::yee, Scheme::fv24, Scheme::fv24_wb, Scheme::s22};

class SchemeWalls : public ::testing::TestWithParam<Backend> {};

TEST_P(SchemeWalls, StandingWaveBetweenWallsHasTheLatticeFrequency) {
  VEM_REQUIRE_BACKEND(GetParam());
  const int N = 20, m = 2;  // 20 cells per wavelength
  const double h = 1e-3;
  for (BoundaryType wall : {BoundaryType::pec, BoundaryType::pmc})
    for (Scheme sc : {Scheme::yee, Scheme::fv24, Scheme::fv24_wb, Scheme::s22, Scheme::s44}) {
      FdtdSetup s;
      s.grid.nx = N; s.grid.ny = 1; s.grid.nz = 1;
      s.grid.dx = s.grid.dy = s.grid.dz = h;
      s.boundaries = BoundarySpec::all(BoundaryType::periodic);
      s.boundaries.face[0] = s.boundaries.face[1] = wall;
      s.materials = {Material::vacuum()};
      s.scheme = sc;
      s.probes.push_back({"p", Component::Ey, 3, 0, 0});
      FdtdOperator op(s);
      auto eng = make_engine(op, GetParam());
      const double k = m * kPi / (N * h);
      std::vector<float> f(std::size_t(N + 1) * 2 * 2, 0.0f);
      for (int kk = 0; kk <= 1; ++kk)
        for (int j = 0; j <= 1; ++j)
          for (int i = 0; i <= N; ++i)
            f[i + (N + 1) * (j + 2 * kk)] = float(wall == BoundaryType::pec ? std::sin(k * i * h) : std::cos(k * i * h));
      eng->set_field(Component::Ey, f);
      const int steps = 800;
      eng->run(steps);
      const std::vector<float> x = eng->probes().values[0];
      double num = 0, den = 0;
      // s44: its zero-initialised earlier time levels excite the parasitic roots of (D44),
      // which decay as 0.63^n: fit from step 100 (test_fdtd_schemes_s44.cpp).
      for (int q = sc == Scheme::s44 ? 100 : 1; q + 1 < steps; ++q) {
        num += double(x[q]) * (double(x[q + 1]) + double(x[q - 1]));
        den += 2.0 * double(x[q]) * double(x[q]);
      }
      const double v = std::acos(num / den) / op.dt() / k;
      const double vp = scheme_numerical_omega(op.scheme().stencil, h, op.dt(), kC0, {k, 0, 0}) / k;
      const double vy = scheme_numerical_omega(SchemeStencil{}, h, op.dt(), kC0, {k, 0, 0}) / k;
      std::cout << boundary_name(wall) << " " << std::setw(8) << scheme_name(sc) << "  v/c measured "
                << std::setprecision(9) << v / kC0 << "  predicted " << vp / kC0 << "  Yee relation " << vy / kC0 << "\n";
      EXPECT_LT(std::fabs(v / vp - 1), 1e-4) << boundary_name(wall) << " " << scheme_name(sc);
      if (sc != Scheme::yee) EXPECT_GT(std::fabs(v / vy - 1), 1e-3) << scheme_name(sc);
    }
}

TEST_P(SchemeWalls, BoundedFor1e5StepsAt099OfTheLimit) {
  VEM_REQUIRE_BACKEND(GetParam());
  for (Scheme sc : kSchemes) {
    FdtdSetup s;
    s.grid.nx = 4; s.grid.ny = 4; s.grid.nz = 3;
    s.grid.dx = s.grid.dy = s.grid.dz = 1e-3;
    s.boundaries = BoundarySpec::all(BoundaryType::periodic);
    s.boundaries.face[0] = s.boundaries.face[1] = BoundaryType::pec;
    s.boundaries.face[2] = s.boundaries.face[3] = BoundaryType::pmc;
    s.materials = {Material::vacuum()};
    s.scheme = sc;
    s.courant_factor = 0.99;
    FdtdOperator op(s);
    auto eng = make_engine(op, GetParam());
    std::mt19937 rng(15);
    std::uniform_real_distribution<float> u(-1, 1);
    double max0 = 0;
    for (int c = 0; c < 6; ++c) {
      std::vector<float> f(std::size_t(5 * 5 * 4));
      for (auto& v : f) v = u(rng) * (c < 3 ? 1.0f : float(1 / kEta0));
      // Tangential E and normal H on the PEC x walls (i = 0, 4) are not degrees of freedom
      // (odd images: zero on the wall); a non-zero constant there would drive the cavity.
      if (c == 1 || c == 2 || c == 3)
        for (int kk = 0; kk < 4; ++kk)
          for (int j = 0; j < 5; ++j) f[0 + 5 * (j + 5 * kk)] = f[4 + 5 * (j + 5 * kk)] = 0.0f;
      eng->set_field(static_cast<Component>(c), f);
    }
    // set_field keeps only the samples the layout updates; measure after one step.
    eng->run(1);
    for (int c = 0; c < 3; ++c)
      for (float v : eng->field(static_cast<Component>(c))) max0 = std::max(max0, double(std::fabs(v)));
    const double e0 = eng->field_energy();
    eng->run(100000);
    double max1 = 0;
    bool finite = true;
    for (int c = 0; c < 3; ++c)
      for (float v : eng->field(static_cast<Component>(c))) {
        finite = finite && std::isfinite(v);
        max1 = std::max(max1, double(std::fabs(v)));
      }
    const double e1 = eng->field_energy();
    std::cout << std::setw(8) << scheme_name(sc) << "  S = " << op.scheme().courant << "  max|E| "
              << max0 << " -> " << max1 << "  energy " << e0 << " -> " << e1 << "\n";
    EXPECT_TRUE(finite) << scheme_name(sc);
    EXPECT_LT(max1, 10 * max0) << scheme_name(sc);
    EXPECT_LT(e1, 2 * e0) << scheme_name(sc);
    EXPECT_GT(e1, 0.5 * e0) << scheme_name(sc);
  }
}

}  // namespace

VEM_INSTANTIATE_BACKENDS(SchemeWalls);
