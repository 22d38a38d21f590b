// The time-domain preconditioner of the FDFD solver (fdfd_time_domain.h), its outer flexible
// GCR (fdfd_solver.h) and the pieces it adds to the FDTD engine (the harmonic current source,
// harmonic_current.h; the Crank-Nicolson CPML, boundary.h), on each backend (CUDA skips without
// a GPU).
//
// Problem: test_fdfd_solver's coarse sphere (2 cm cells, 16^3 + 6-cell PML, eps_r 4 and a lossy
// eps_r 2, 0.05 S/m cap, oblique incidence), with edge-averaged materials (the engine's
// coefficient-array mode) and as a staircase (indexed mode). Reference: CPU COCG to 1e-11.
//
// What the steady state of one FDTD run reproduces (measured, CPU, steady tolerance 1e-4, the
// default 5-period Hann-integral ramp): ||A M b - b|| / ||b|| = 1.1e-4 and ||M b - x|| / ||x|| =
// 4.3e-5; GCR reaches 5e-11 in 3 outer iterations. During development: with the plain
// (Roden-Gedney) CPML instead of the matched Crank-Nicolson one the residual of one application
// was 0.22 (all of it in the PML rows) and GCR needed 14 outer iterations to 1e-8; with the
// matched CPML but a 1-period raised-cosine ramp, 4.0e-3 (the static charge the ramp leaves).
// Tolerances: one application's residual < 2e-3 and solution error < 1e-3; GCR to 1e-8 in at
// most 5 outer iterations, within 1e-6 of the COCG solution.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fdfd_test_problems.h"
#include "test_support.h"
#include "vem/core/error.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdfd/fdfd_time_domain.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;
using vem_test::rel_diff;
using cd = std::complex<double>;

namespace {

std::vector<cd> reference(const FdfdOperator& op) {
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.method = FdfdMethod::cocg;
  o.tolerance = 1e-11;
  const FdfdSolution s = solve_fdfd(op, o);
  EXPECT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  return s.e_scat;
}

// GCR with the time-domain preconditioner to 1e-8 on `backend`.
FdfdSolution solve_gcr_td(const FdfdOperator& op, Backend backend) {
  FdfdSolverOptions o;
  o.backend = backend;
  o.preconditioner = FdfdPreconditioner::time_domain;
  o.tolerance = 1e-8;
  return solve_fdfd(op, o);
}

class FdfdTimeDomain : public testing::TestWithParam<Backend> {};

}  // namespace

// One application of M to b: how close A M b is to b (the preconditioner's quality).
TEST_P(FdfdTimeDomain, OneApplicationIsAnApproximateInverse) {
  VEM_REQUIRE_BACKEND(GetParam());
  for (bool averaged : {true, false}) {
    const FdfdOperator op(vem_test::coarse_sphere_problem(averaged));
    FdfdTimeDomainOptions to;
    to.steady_tolerance = 1e-4;
    FdfdTimeDomainPreconditioner pre(op, to, GetParam());
    const std::vector<cd> b = op.rhs();
    std::vector<cd> z, az(b.size());
    const TimeDomainApplyStats st = pre.apply(b, z);
    op.apply(z.data(), az.data());
    const double res = rel_diff(az, b);
    const double err = rel_diff(z, reference(op));
    std::printf("[td] %s averaged=%d: P=%d steps/period, %d periods (%s, change %.2e), "
                "||A M b - b||/||b|| = %.3e, ||M b - x||/||x|| = %.3e, %.2f s\n",
                pre.backend().c_str(), int(averaged), pre.steps_per_period(), st.periods,
                st.settled ? "settled" : "not settled", st.last_change, res, err, st.seconds);
    EXPECT_TRUE(st.settled);
    EXPECT_LT(res, 2e-3);
    EXPECT_LT(err, 1e-3);
  }
}

TEST_P(FdfdTimeDomain, GcrConvergesToTheCocgSolution) {
  VEM_REQUIRE_BACKEND(GetParam());
  const FdfdOperator op(vem_test::coarse_sphere_problem(true));
  const std::vector<cd> ref = reference(op);
  const FdfdSolution s = solve_gcr_td(op, GetParam());
  std::printf("[td] GCR: %d outer iterations, %lld FDTD steps, true residual %.3e, vs COCG %.3e; "
              "history:", s.stats.iterations, (long long)s.stats.preconditioner_steps,
              s.stats.true_relative_residual, rel_diff(s.e_scat, ref));
  for (double h : s.stats.history) std::printf(" %.2e", h);
  std::printf("\n");
  EXPECT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  EXPECT_EQ(s.stats.method, FdfdMethod::gcr);
  EXPECT_LT(s.stats.true_relative_residual, 1.1e-8);
  EXPECT_LE(s.stats.iterations, 5);
  EXPECT_LT(rel_diff(s.e_scat, ref), 1e-6);
  EXPECT_EQ(s.stats.preconditioner_periods.size(), std::size_t(s.stats.iterations));
  EXPECT_GT(s.stats.preconditioner_steps, 0);
  // On the GPU the residual goes to the FDTD and back without host copies.
  EXPECT_EQ(s.stats.preconditioner_on_device, GetParam() == Backend::cuda);
}

// The exactness argument holds beyond the isotropic dielectric: a diagonally anisotropic,
// lossy, magnetic block given as per-cell arrays (the engine's coefficient-array mode), a PML with
// real stretching (kappa_max = 3, which the Crank-Nicolson CPML carries in 1/kappa), and a bare
// PEC wall on one face. GCR still needs only a few outer iterations.
TEST_P(FdfdTimeDomain, AnisotropicMagneticMediumAndStretchedPml) {
  VEM_REQUIRE_BACKEND(GetParam());
  const int n = 24;
  const double h = 0.015;
  FdfdProblem p;
  p.grid = {n, n, n, h, h, h};
  p.frequency = 1.2e9;
  p.pml = FdfdPml::uniform(6);
  p.pml.thickness[4] = 0;  // z-low: PEC
  p.pml.kappa_max = 3.0;
  p.material_mode = MaterialMode::coefficient_array;
  const std::int64_t cells = p.grid.cell_count();
  p.medium.eps_r.assign(3, std::vector<float>(cells, 1.0f));
  p.medium.sigma_e.assign(3, std::vector<float>(cells, 0.0f));
  p.medium.mu_r.assign(1, std::vector<float>(cells, 1.0f));
  p.medium.sigma_m.assign(1, std::vector<float>(cells, 0.0f));
  p.medium.average_at_edges = true;
  for (int k = 4; k < 16; ++k)
    for (int j = 9; j < 16; ++j)
      for (int i = 8; i < 17; ++i) {
        const std::int64_t c = i + n * (j + std::int64_t(n) * k);
        p.medium.eps_r[0][c] = 3.0f;
        p.medium.eps_r[1][c] = 5.0f;
        p.medium.eps_r[2][c] = 8.0f;
        p.medium.sigma_e[0][c] = 0.1f;
        p.medium.sigma_e[2][c] = 0.4f;
        p.medium.mu_r[0][c] = 2.0f;
        p.medium.sigma_m[0][c] = 200.0f;  // ohm/m
      }
  p.incident.theta = 0.7;
  p.incident.phi = 1.1;
  p.incident.polarization = 0.4;
  const FdfdOperator op(p);
  const std::vector<cd> ref = reference(op);
  FdfdTimeDomainPreconditioner pre(op, {}, GetParam());
  const std::vector<cd> b = op.rhs();
  std::vector<cd> z, az(b.size());
  pre.apply(b, z);
  op.apply(z.data(), az.data());
  const double res = rel_diff(az, b);
  const FdfdSolution s = solve_gcr_td(op, GetParam());
  std::printf("[td] anisotropic/magnetic/kappa: one application %.3e; GCR %d outer iterations, "
              "true residual %.2e, vs COCG %.2e\n", res, s.stats.iterations,
              s.stats.true_relative_residual, rel_diff(s.e_scat, ref));
  EXPECT_LT(res, 5e-3);
  EXPECT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  EXPECT_LE(s.stats.iterations, 5);
  EXPECT_LT(rel_diff(s.e_scat, ref), 1e-6);
}

// The Crank-Nicolson CPML (match_frequency) with alpha = 0 stays bounded long after a broadband
// pulse (zero-mean, so no static field remains) has been radiated: over 4000 steps (125 periods
// of the run frequency) the field energy falls far below its peak and keeps falling.
TEST_P(FdfdTimeDomain, CrankNicolsonCpmlStaysBounded) {
  VEM_REQUIRE_BACKEND(GetParam());
  const FdfdOperator op(vem_test::coarse_sphere_problem(false));
  FdfdTimeDomainPreconditioner pre(op, {}, GetParam());
  FdtdSetup s = pre.fdtd_setup();
  PointSource src;
  src.i = 9;
  src.j = 12;
  src.k = 14;
  src.direction = {1, 1, 1};
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(3e9);
  s.sources.push_back(src);
  const FdtdOperator fop(s);
  EXPECT_TRUE(fop.cpml_profile(0).lagged);
  auto eng = make_engine(fop, GetParam());
  double peak = 0, mid = 0, last = 0;
  const int chunks = 40, per = 100;
  for (int c = 0; c < chunks; ++c) {
    eng->run(per);
    const double e = eng->field_energy();
    ASSERT_TRUE(std::isfinite(e)) << "energy not finite after " << (c + 1) * per << " steps";
    peak = std::max(peak, e);
    if (c == chunks / 2) mid = e;
    last = e;
  }
  std::printf("[td] CN-CPML: energy peak %.3e J, at %d steps %.3e, at %d steps %.3e\n", peak,
              (chunks / 2 + 1) * per, mid, chunks * per, last);
  // Measured (CPU): 1.6e-7 of the peak at 4000 steps, 9.8e-7 at 2100: still decaying (the
  // dielectric sphere rings). A growing late-time field would fail the second test.
  EXPECT_LT(last, 1e-5 * peak);
  EXPECT_LT(last, mid);
}

TEST(FdfdTimeDomainOptions, BadInputIsReported) {
  const FdfdOperator op(vem_test::coarse_sphere_problem(false));
  auto expect_error = [&](FdfdSolverOptions o, const char* what) {
    try {
      solve_fdfd(op, o);
      ADD_FAILURE() << "no error for " << what;
    } catch (const vem::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.preconditioner = FdfdPreconditioner::time_domain;
  FdfdSolverOptions bad = o;
  bad.time_domain.steady_tolerance = 0;
  expect_error(bad, "steady_tolerance");
  bad = o;
  bad.time_domain.max_periods = 1;
  expect_error(bad, "max_periods");
  bad = o;
  bad.time_domain.courant_factor = 1.5;
  expect_error(bad, "courant_factor");
  bad = o;
  bad.precision = FdfdPrecision::complex64;
  expect_error(bad, "complex128");
  bad = o;
  bad.method = FdfdMethod::cocg;
  expect_error(bad, "GCR method");
  FdfdSolverOptions gcr_alone;
  gcr_alone.method = FdfdMethod::gcr;
  expect_error(gcr_alone, "outer method of the time_domain preconditioner");
}

VEM_INSTANTIATE_BACKENDS(FdfdTimeDomain);
