// Mixed-precision iterative refinement of the FDFD solver (fdfd_solver.h, FdfdRefinement):
// complex64 inner solves under a complex128 outer loop reach a true residual that complex64
// alone cannot, and agree with the complex128 solution; the outer history is recorded; the
// progress callback sees cumulative iterations and can stop the solve. On each backend (CUDA
// skips without a GPU). Problem: a small lossy dielectric sphere, 24^3 cells with a 6-cell PML.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#include "test_support.h"
#include "vem/core/error.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;
using vem_test::rel_diff;
using cd = std::complex<double>;

namespace {

const FdfdOperator& small_sphere() {
  static const FdfdOperator op = [] {
    const double h = 0.02;
    const int pml = 6, n = 12 + 2 * pml;
    FdfdProblem p;
    p.grid = {n, n, n, h, h, h};
    p.frequency = 1e9;
    p.pml = FdfdPml::uniform(pml);
    p.materials = {Material::vacuum(), Material::isotropic("dielectric", 4.0, 0.02)};
    p.material_index.assign(p.grid.cell_count(), 0);
    p.average_at_edges = true;
    const double c = 0.5 * n * h;
    paint_sphere(p.grid, {c, c, c}, 0.09, 1, p.material_index);
    return FdfdOperator(p);
  }();
  return op;
}

const std::vector<cd>& reference() {
  static const std::vector<cd> ref = [] {
    FdfdSolverOptions o;
    o.backend = Backend::cpu;
    o.method = FdfdMethod::cocg;
    o.tolerance = 1e-11;
    const FdfdSolution s = solve_fdfd(small_sphere(), o);
    EXPECT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
    return s.e_scat;
  }();
  return ref;
}

class FdfdRefinementTest : public testing::TestWithParam<Backend> {};

}  // namespace

TEST_P(FdfdRefinementTest, Complex64ReachesTheComplex128Tolerance) {
  VEM_REQUIRE_BACKEND(GetParam());
  const auto& ref = reference();
  for (FdfdMethod m : {FdfdMethod::bicgstab, FdfdMethod::cocg}) {
    FdfdSolverOptions o;
    o.backend = GetParam();
    o.precision = FdfdPrecision::complex64;  // refinement automatic: on
    o.method = m;
    o.tolerance = 1e-8;
    o.inner_tolerance = 1e-3;
    const FdfdSolution s = solve_fdfd(small_sphere(), o);
    const double d = rel_diff(s.e_scat, ref);
    std::printf("  %s complex64 + refinement, %s: %s, %d outer steps, %d iterations, true residual "
                "%.2e, |x - ref| %.2e\n",
                s.stats.backend.c_str(), fdfd_name(m), fdfd_name(s.stats.status),
                s.stats.refinements, s.stats.iterations, s.stats.true_relative_residual, d);
    for (std::size_t i = 0; i < s.stats.true_history.size(); ++i)
      std::printf("    outer %zu: iteration %d, true residual %.3e\n", i,
                  s.stats.true_history_iterations[i], s.stats.true_history[i]);
    EXPECT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
    EXPECT_TRUE(s.stats.refined);
    EXPECT_GE(s.stats.refinements, 2);
    EXPECT_LT(s.stats.true_relative_residual, 1.01e-8);
    EXPECT_LT(d, 1e-6);
    // Outer history: one entry before the first and one after each outer step, decreasing.
    ASSERT_EQ(s.stats.true_history.size(), std::size_t(s.stats.refinements + 1));
    ASSERT_EQ(s.stats.true_history_iterations.size(), s.stats.true_history.size());
    EXPECT_EQ(s.stats.true_history.front(), 1.0);
    EXPECT_EQ(s.stats.true_history_iterations.back(), s.stats.iterations);
    for (std::size_t i = 1; i < s.stats.true_history.size(); ++i)
      EXPECT_LT(s.stats.true_history[i], s.stats.true_history[i - 1]);
    EXPECT_NEAR(s.stats.true_history.back(), s.stats.true_relative_residual,
                1e-3 * s.stats.true_relative_residual);
    // Inner history: one entry per iteration, relative to ||b||.
    EXPECT_EQ(s.stats.history.size(), std::size_t(s.stats.iterations + 1));
    EXPECT_LT(s.stats.history.back(), 1e-6);
  }
}

TEST_P(FdfdRefinementTest, OffMeansOneSinglePrecisionSolve) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdfdSolverOptions o;
  o.backend = GetParam();
  o.precision = FdfdPrecision::complex64;
  o.refinement = FdfdRefinement::off;
  o.tolerance = 1e-4;
  const FdfdSolution s = solve_fdfd(small_sphere(), o);
  EXPECT_FALSE(s.stats.refined);
  EXPECT_EQ(s.stats.refinements, 0);
  EXPECT_TRUE(s.stats.true_history.empty());
  EXPECT_LT(s.stats.true_relative_residual, 1e-2);
}

TEST_P(FdfdRefinementTest, ProgressSeesCumulativeIterationsAndCanStop) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdfdSolverOptions o;
  o.backend = GetParam();
  o.precision = FdfdPrecision::complex64;
  o.refinement = FdfdRefinement::on;
  o.tolerance = 1e-9;
  o.progress_interval = 5;
  std::vector<int> seen;
  o.progress = [&](int it, double rel) {
    EXPECT_TRUE(std::isfinite(rel));
    seen.push_back(it);
    return it < 40;
  };
  const FdfdSolution s = solve_fdfd(small_sphere(), o);
  EXPECT_EQ(s.stats.status, FdfdStatus::stopped) << s.warning;
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  EXPECT_GE(seen.back(), 40);
  EXPECT_LE(s.stats.iterations, 45);
  EXPECT_NE(s.warning.find("stopped"), std::string::npos) << s.warning;
  EXPECT_EQ(s.e_scat.size(), std::size_t(small_sphere().unknowns()));
}

TEST(FdfdRefinement, BadOptionsAreRejected) {
  FdfdSolverOptions o;
  o.inner_tolerance = 0.0;
  EXPECT_THROW(validate(o), Error);
  o.inner_tolerance = 1e-3;
  o.max_refinements = 0;
  EXPECT_THROW(validate(o), Error);
  EXPECT_STREQ(fdfd_name(FdfdRefinement::on), "on");
}

VEM_INSTANTIATE_BACKENDS(FdfdRefinementTest);
