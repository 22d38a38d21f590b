// The FDFD operator (fdfd_operator.h) on small grids, by assembling A column by column from the
// reference product: structure (wall rows, symmetry after SC-PML scaling, diagonal), the discrete
// plane-wave dispersion relation, the storage schemes, the right-hand side, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "vem/core/error.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_solver.h"

using namespace vem;
using cd = std::complex<double>;

namespace {

// A small anisotropic, lossy, magnetic, randomly filled problem with a PML on every face.
FdfdProblem random_problem(int nx, int ny, int nz, int pml, unsigned seed = 1) {
  FdfdProblem p;
  p.grid = {nx, ny, nz, 0.01, 0.012, 0.009};
  p.frequency = 2e9;
  p.pml = FdfdPml::uniform(pml);
  p.material_mode = MaterialMode::coefficient_array;
  const std::int64_t n = p.grid.cell_count();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  p.medium.eps_r.assign(3, std::vector<float>(n));
  p.medium.sigma_e.assign(3, std::vector<float>(n));
  p.medium.mu_r.assign(1, std::vector<float>(n));
  p.medium.sigma_m.assign(1, std::vector<float>(n));
  for (int a = 0; a < 3; ++a)
    for (std::int64_t c = 0; c < n; ++c) {
      p.medium.eps_r[a][c] = 1.0f + 5.0f * u(rng);
      p.medium.sigma_e[a][c] = 0.3f * u(rng);
    }
  for (std::int64_t c = 0; c < n; ++c) {
    p.medium.mu_r[0][c] = 1.0f + u(rng);
    p.medium.sigma_m[0][c] = 50.0f * u(rng);
  }
  p.medium.average_at_edges = true;
  p.incident.theta = 0.7;
  p.incident.phi = 2.1;
  p.incident.polarization = 0.4;
  return p;
}

std::vector<cd> assemble(const FdfdOperator& op) {
  const std::int64_t n = op.unknowns();
  std::vector<cd> A(n * n), e(n, 0.0), col(n);
  for (std::int64_t j = 0; j < n; ++j) {
    e[j] = 1.0;
    op.apply(e.data(), col.data());
    e[j] = 0.0;
    for (std::int64_t i = 0; i < n; ++i) A[i * n + j] = col[i];
  }
  return A;
}

}  // namespace

TEST(FdfdOperator, WallRowsAreIdentityAndScaledOperatorIsComplexSymmetric) {
  const FdfdOperator op(random_problem(6, 7, 5, 2));
  const std::int64_t n = op.unknowns(), N = op.cells();
  const auto A = assemble(op);
  const auto w = op.symmetrizer();
  const auto dg = op.diagonal();
  const YeeGrid& g = op.grid();
  double amax = 0;
  for (const cd& v : A) amax = std::max(amax, std::abs(v));
  double asym = 0, diag_err = 0;
  int walls = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const int a = int(r / N);
    const std::int64_t idx = r % N;
    const int i = int(idx % g.nx), j = int((idx / g.nx) % g.ny), k = int(idx / (std::int64_t(g.nx) * g.ny));
    if (op.is_wall(a, i, j, k)) {
      ++walls;
      for (std::int64_t c = 0; c < n; ++c) {
        ASSERT_EQ(A[r * n + c], c == r ? cd(1.0) : cd(0.0)) << "wall row " << r;
        ASSERT_EQ(A[c * n + r], c == r ? cd(1.0) : cd(0.0)) << "wall column " << r;
      }
    }
    diag_err = std::max(diag_err, std::abs(A[r * n + r] - dg[r]));
    for (std::int64_t c = 0; c < r; ++c)
      asym = std::max(asym, std::abs(w[r] * A[r * n + c] - w[c] * A[c * n + r]));
  }
  EXPECT_GT(walls, 0);
  double wmax = 0;
  for (const cd& v : w) wmax = std::max(wmax, std::abs(v));
  EXPECT_LT(asym, 1e-12 * wmax * amax);
  EXPECT_LT(diag_err, 1e-12 * amax);
  // Without the symmetrizer the PML (and eps) make A itself unsymmetric.
  double plain = 0;
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < r; ++c) plain = std::max(plain, std::abs(A[r * n + c] - A[c * n + r]));
  EXPECT_GT(plain, 1e-3 * amax);
}

TEST(FdfdOperator, DiscretePlaneWaveSatisfiesTheYeeDispersionRelation) {
  // Vacuum, no PML (PEC walls): for E = E0 exp(-j k.r) sampled at the E positions and any k,
  // (A E)_a = (1 - |s|^2 / k0^2) E_a at rows whose stencil stays away from the walls, with
  // s_a = 2 sin(k_a d_a / 2) / d_a, provided E0 . s = 0 (discrete divergence-free).
  FdfdProblem p;
  p.grid = {9, 8, 7, 0.01, 0.013, 0.008};
  p.frequency = 3e9;
  p.pml = FdfdPml::uniform(0);
  const FdfdOperator op(p);
  const double k0 = op.k0();
  const double kv[3] = {31.0, -22.0, 17.0};
  const double d[3] = {p.grid.dx, p.grid.dy, p.grid.dz};
  double s[3], s2 = 0;
  for (int a = 0; a < 3; ++a) {
    s[a] = 2.0 * std::sin(kv[a] * d[a] / 2.0) / d[a];
    s2 += s[a] * s[a];
  }
  // E0 perpendicular to s (the discrete divergence is then zero).
  const double e0[3] = {s[1], -s[0], 0.0};
  const std::int64_t N = op.cells();
  std::vector<cd> x(3 * N), y(3 * N);
  const Component ec[3] = {Component::Ex, Component::Ey, Component::Ez};
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < p.grid.nz; ++k)
      for (int j = 0; j < p.grid.ny; ++j)
        for (int i = 0; i < p.grid.nx; ++i) {
          const auto r = p.grid.position(ec[a], i, j, k);
          x[a * N + op.linear(i, j, k)] =
              e0[a] * std::polar(1.0, -(kv[0] * r[0] + kv[1] * r[1] + kv[2] * r[2]));
        }
  op.apply(x.data(), y.data());
  const double expect = 1.0 - s2 / (k0 * k0);
  int checked = 0;
  for (int a = 0; a < 3; ++a) {
    if (e0[a] == 0.0) continue;
    for (int k = 2; k < p.grid.nz - 2; ++k)
      for (int j = 2; j < p.grid.ny - 2; ++j)
        for (int i = 2; i < p.grid.nx - 2; ++i) {
          const std::int64_t r = a * N + op.linear(i, j, k);
          EXPECT_NEAR(std::abs(y[r] - expect * x[r]), 0.0, 1e-11 * std::abs(expect * x[r]) + 1e-12);
          ++checked;
        }
  }
  EXPECT_GT(checked, 50);
}

TEST(FdfdOperator, CoefficientIndexTablesReproduceTheCoefficients) {
  FdfdProblem p;
  p.grid = {12, 10, 11, 0.01, 0.01, 0.01};
  p.frequency = 1e9;
  p.pml = FdfdPml::uniform(3);
  p.materials = {Material::vacuum(), Material::isotropic("lossy", 4.0, 0.1),
                 Material::isotropic("magnetic", 2.0, 0.0, 3.0)};
  p.material_index.assign(p.grid.cell_count(), 0);
  for (int k = 4; k < 7; ++k)
    for (int j = 4; j < 7; ++j)
      for (int i = 4; i < 8; ++i) p.material_index[i + 12 * (j + 10 * k)] = (i + j) % 2 ? 1 : 2;
  p.average_at_edges = true;
  const FdfdOperator op(p);
  ASSERT_TRUE(op.cis_available());
  // Symmetric PML layers give bit-identical profiles on both faces: few unique pairs.
  EXPECT_LT(op.h_table().size(), 200u);
  EXPECT_LT(op.e_table().size(), 400u);
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < p.grid.nz; ++k)
      for (int j = 0; j < p.grid.ny; ++j)
        for (int i = 0; i < p.grid.nx; ++i) {
          const auto idx = op.linear(i, j, k);
          const CoefficientPair h = op.h_coefficients(a, i, j, k);
          const CoefficientPair e = op.e_coefficients(a, i, j, k);
          const CoefficientPair& ht = op.h_table()[op.h_index(a)[idx]];
          const CoefficientPair& et = op.e_table()[op.e_index(a)[idx]];
          ASSERT_EQ(h.c1, ht.c1);
          ASSERT_EQ(h.c2, ht.c2);
          ASSERT_EQ(e.c1, et.c1);
          ASSERT_EQ(e.c2, et.c2);
        }
}

TEST(FdfdOperator, ManyUniqueCoefficientsDisableCisButAutomaticFallsBackToCas) {
  FdfdProblem p = random_problem(30, 30, 30, 2, 7);  // ~27000 random cells per axis
  const FdfdOperator op(p);
  EXPECT_FALSE(op.cis_available());
  EXPECT_NE(op.cis_unavailable_reason().find("unique"), std::string::npos);
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.storage = FdfdStorage::cis;
  o.max_iterations = 2;
  try {
    solve_fdfd(op, o);
    FAIL() << "CIS should have been refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CIS"), std::string::npos) << e.what();
  }
  o.storage = FdfdStorage::automatic;
  const FdfdSolution s = solve_fdfd(op, o);
  EXPECT_EQ(s.stats.storage, FdfdStorage::cas);
}

TEST(FdfdOperator, RightHandSideVanishesInVacuumAndFollowsTheContrast) {
  FdfdProblem p;
  p.grid = {10, 10, 10, 0.01, 0.01, 0.01};
  p.frequency = 1e9;
  p.pml = FdfdPml::uniform(2);
  {
    const FdfdOperator op(p);
    for (const cd& v : op.rhs()) ASSERT_EQ(v, cd(0.0));
    FdfdSolverOptions o;
    o.backend = Backend::cpu;
    const FdfdSolution s = solve_fdfd(op, o);
    EXPECT_EQ(s.stats.status, FdfdStatus::converged);
    for (const cd& v : s.e_scat) ASSERT_EQ(v, cd(0.0));
  }
  // One dielectric cell (staircase): b = (1/eps - 1) E_inc on its three E samples only.
  p.materials = {Material::vacuum(), Material::isotropic("d", 4.0, 0.05)};
  p.material_index.assign(p.grid.cell_count(), 0);
  p.material_index[5 + 10 * (5 + 10 * 5)] = 1;
  const FdfdOperator op(p);
  const auto b = op.rhs();
  const auto einc = op.incident_e();
  const cd eps = cd(4.0, -0.05 / (op.omega() * kEps0));
  int nonzero = 0;
  for (std::size_t r = 0; r < b.size(); ++r) {
    if (b[r] == cd(0.0)) continue;
    ++nonzero;
    EXPECT_NEAR(std::abs(b[r] - (1.0 / eps - 1.0) * einc[r]), 0.0, 1e-14);
    EXPECT_EQ(std::int64_t(r % op.cells()), op.linear(5, 5, 5));
  }
  EXPECT_EQ(nonzero, 1);  // x-polarized along +z: only E_x is excited
}

TEST(FdfdOperator, IncidentWaveConventions) {
  PlaneWave w;  // x-polarized, along +z
  const auto k = w.direction();
  const auto e = w.e_polarization();
  EXPECT_NEAR(k[2], 1.0, 1e-15);
  EXPECT_NEAR(e[0], 1.0, 1e-15);
  const std::array<double, 3> o{0, 0, 0};
  const double f = 1e9, k0 = 2 * kPi * f / kC0;
  const auto ei = incident_e(w, o, f, {0.0, 0.0, 0.1});
  EXPECT_NEAR(std::abs(ei[0] - std::polar(1.0, -k0 * 0.1)), 0.0, 1e-15);  // e^{jwt}: e^{-jkz}
  const auto hi = incident_h(w, o, f, {0.0, 0.0, 0.0});
  EXPECT_NEAR(hi[1].real(), 1.0 / kEta0, 1e-15);  // H = z x E / eta0 = y / eta0
  PlaneWave v;
  v.theta = 1.0;
  v.phi = 0.5;
  v.polarization = 0.3;
  const auto kk = v.direction(), ee = v.e_polarization(), hh = v.h_polarization();
  EXPECT_NEAR(kk[0] * ee[0] + kk[1] * ee[1] + kk[2] * ee[2], 0.0, 1e-15);
  EXPECT_NEAR(kk[0] * hh[0] + kk[1] * hh[1] + kk[2] * hh[2], 0.0, 1e-15);
  EXPECT_NEAR(ee[0] * ee[0] + ee[1] * ee[1] + ee[2] * ee[2], 1.0, 1e-15);
}

TEST(FdfdOperator, RejectsBadInput) {
  auto expect_error = [](const FdfdProblem& p, const char* needle) {
    try {
      FdfdOperator op(p);
      ADD_FAILURE() << "no error for: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message '" << e.what() << "' lacks '" << needle << "'";
    }
  };
  FdfdProblem good;
  good.grid = {12, 12, 12, 0.01, 0.01, 0.01};
  good.frequency = 1e9;
  good.pml = FdfdPml::uniform(3);
  EXPECT_NO_THROW(FdfdOperator{good});

  FdfdProblem p = good;
  p.frequency = 0.0;
  expect_error(p, "frequency");
  p.frequency = -1e9;
  expect_error(p, "frequency");
  p.frequency = std::nan("");
  expect_error(p, "frequency");
  p = good;
  p.grid.nx = 0;
  expect_error(p, "nx");
  p = good;
  p.grid.dz = 0.0;
  expect_error(p, "dz");
  p = good;
  p.pml = FdfdPml::uniform(6);
  expect_error(p, "PML");
  p = good;
  p.pml.thickness[3] = -1;
  expect_error(p, "FdfdPml::thickness");
  p = good;
  p.pml.reflection = 1.5;
  expect_error(p, "R0");
  p = good;
  p.materials = {Material::isotropic("bad", -2.0)};
  expect_error(p, "eps_r");
  p = good;
  p.materials = {Material::isotropic("bad", 2.0, -0.1)};
  expect_error(p, "sigma_e");
  p = good;
  p.materials = {Material::vacuum()};
  p.material_index.assign(good.grid.cell_count(), 3);
  expect_error(p, "material_index");
  p = good;
  p.material_index.assign(10, 0);
  expect_error(p, "material_index");
  p = good;
  p.material_mode = MaterialMode::coefficient_array;
  expect_error(p, "eps_r");
  p.medium.eps_r.assign(1, std::vector<float>(good.grid.cell_count(), 2.0f));
  p.medium.eps_r[0][17] = 0.0f;
  expect_error(p, "eps_r");
  p.medium.eps_r[0][17] = 2.0f;
  p.medium.sigma_e.assign(2, std::vector<float>(good.grid.cell_count(), 0.0f));
  expect_error(p, "sigma_e");
}

TEST(FdfdOperator, RejectsBadSolverOptions) {
  FdfdProblem p;
  p.grid = {8, 8, 8, 0.01, 0.01, 0.01};
  p.frequency = 1e9;
  p.pml = FdfdPml::uniform(2);
  for (double tol : {0.0, 1.0, -1e-6, 2.0, std::nan("")}) {
    FdfdSolverOptions o;
    o.tolerance = tol;
    try {
      solve_fdfd(p, o);
      ADD_FAILURE() << "tolerance " << tol << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tolerance"), std::string::npos) << e.what();
    }
  }
  FdfdSolverOptions o;
  o.max_iterations = 0;
  EXPECT_THROW(solve_fdfd(p, o), Error);
  FdfdProblem z = p;
  z.grid.ny = 0;
  EXPECT_THROW(solve_fdfd(z, FdfdSolverOptions{}), Error);
}
