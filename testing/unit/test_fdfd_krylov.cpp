// The Krylov templates of the FDFD solver (solver/src/fdfd/fdfd_krylov.h) on small dense
// matrices through a minimal Ops: convergence, breakdown detection/reporting with restarts,
// best-iterate return without convergence, and the stop callback.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <vector>

#include "../../solver/src/fdfd/fdfd_krylov.h"

using namespace vem;
using namespace vem::fdfd;
using cd = std::complex<double>;

namespace {

// Dense reference Ops (double), vectors are cd arrays of size n.
struct DenseOps {
  using C = cd;
  int n;
  std::vector<cd> A;  // row-major
  std::vector<std::unique_ptr<cd[]>> pool;
  C* alloc() {
    pool.emplace_back(new cd[std::size_t(n)]());
    return pool.back().get();
  }
  void matvec(const C* x, C* y) {
    for (int i = 0; i < n; ++i) {
      cd s = 0;
      for (int j = 0; j < n; ++j) s += A[i * n + j] * x[j];
      y[i] = s;
    }
  }
  void copy(const C* s, C* d) { for (int i = 0; i < n; ++i) d[i] = s[i]; }
  void zero(C* x) { for (int i = 0; i < n; ++i) x[i] = 0.0; }
  void axpy(cd a, const C* x, C* y) { for (int i = 0; i < n; ++i) y[i] += a * x[i]; }
  void residual(const C* b, const C* ax, C* r) { for (int i = 0; i < n; ++i) r[i] = b[i] - ax[i]; }
  void diag_mul(const C* d, const C* x, C* y) { for (int i = 0; i < n; ++i) y[i] = d[i] * x[i]; }
  double nrm2sq(const C* x) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::norm(x[i]);
    return s;
  }
  DotNorm dotc_norm(const C* a, const C* b) {
    cd d = 0;
    for (int i = 0; i < n; ++i) d += std::conj(a[i]) * b[i];
    return {d, nrm2sq(b)};
  }
  void bicg_p(C* p, const C* r, const C* v, cd beta, cd omega) {
    for (int i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
  }
  double axpy_nrm2sq(cd a, const C* x, C* y) {
    axpy(a, x, y);
    return nrm2sq(y);
  }
  DotNorm bicg_xr(C* x, const C* ph, const C* sh, C* r, const C* t, const C* r0, cd alpha,
                  cd omega) {
    for (int i = 0; i < n; ++i) {
      const cd s = r[i], shi = sh[i];
      x[i] += alpha * ph[i] + omega * shi;
      r[i] = s - omega * t[i];
    }
    return dotc_norm(r0, r);
  }
  WDot wdotu(const C* w, const C* a, const C* b) {
    cd d = 0;
    double ab = 0;
    for (int i = 0; i < n; ++i) {
      const cd v = w[i] * a[i] * b[i];
      d += v;
      ab += std::abs(v.real()) + std::abs(v.imag());
    }
    return {d, ab};
  }
  WDot cocg_xr(C* x, C* r, const C* p, const C* q, const C* wm, cd alpha, double* rr) {
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    *rr = nrm2sq(r);
    return wm ? wdotu(wm, r, r) : WDot{0.0, 0.0};
  }
  WDot cocr_pq(C* p, C* q, const C* r, const C* ar, const C* d, cd beta) {
    for (int i = 0; i < n; ++i) {
      p[i] = r[i] + beta * p[i];
      q[i] = ar[i] + beta * q[i];
    }
    return wdotu(d, q, q);
  }
  void cocg_p(C* p, const C* minv, const C* r, cd beta) {
    for (int i = 0; i < n; ++i) p[i] = (minv ? minv[i] * r[i] : r[i]) + beta * p[i];
  }
};

// Complex-symmetric, diagonally dominant-ish random matrix.
DenseOps random_symmetric(int n, unsigned seed) {
  DenseOps ops{n, std::vector<cd>(n * n), {}};
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      const cd v(g(rng) / n, g(rng) / n);
      ops.A[i * n + j] = ops.A[j * n + i] = v;
    }
  for (int i = 0; i < n; ++i) ops.A[i * n + i] += cd(2.0 + 0.1 * i, -0.3);
  return ops;
}

double true_residual(DenseOps& ops, const std::vector<cd>& b, const cd* x) {
  std::vector<cd> ax(ops.n);
  ops.matvec(x, ax.data());
  double rr = 0, bb = 0;
  for (int i = 0; i < ops.n; ++i) {
    rr += std::norm(b[i] - ax[i]);
    bb += std::norm(b[i]);
  }
  return std::sqrt(rr / bb);
}

}  // namespace

TEST(FdfdKrylov, BicgstabAndCocgConverge) {
  DenseOps ops = random_symmetric(40, 3);
  std::vector<cd> b(40);
  for (int i = 0; i < 40; ++i) b[i] = cd(std::sin(i), std::cos(3.0 * i));
  KrylovParams kp;
  kp.tolerance = 1e-10;
  kp.max_iterations = 200;
  {
    cd* x = ops.alloc();
    const KrylovResult r = bicgstab(ops, b.data(), x, nullptr, kp);
    EXPECT_EQ(r.status, FdfdStatus::converged) << r.message;
    EXPECT_LE(r.matvecs, 2 * r.iterations);  // one fewer when converged at a half step
    EXPECT_GE(r.matvecs, 2 * r.iterations - 1);
    EXPECT_LT(true_residual(ops, b, x), 1e-9);
    EXPECT_EQ(int(r.history.size()), r.iterations + 1);
  }
  {
    cd* x = ops.alloc();
    std::vector<cd> ones(40, 1.0);
    const KrylovResult r = cocg(ops, b.data(), x, ones.data(), nullptr, ones.data(), kp);
    EXPECT_EQ(r.status, FdfdStatus::converged) << r.message;
    EXPECT_EQ(r.matvecs, r.iterations);
    EXPECT_LT(true_residual(ops, b, x), 1e-9);
  }
  {
    cd* x = ops.alloc();
    std::vector<cd> ones(40, 1.0);
    const KrylovResult r = cocr(ops, b.data(), x, ones.data(), kp);
    EXPECT_EQ(r.status, FdfdStatus::converged) << r.message;
    EXPECT_LT(true_residual(ops, b, x), 1e-9);
  }
  {  // Jacobi-preconditioned variants
    std::vector<cd> minv(40), ones(40, 1.0);
    for (int i = 0; i < 40; ++i) minv[i] = 1.0 / ops.A[i * 40 + i];
    cd* x = ops.alloc();
    KrylovResult r = bicgstab(ops, b.data(), x, minv.data(), kp);
    EXPECT_EQ(r.status, FdfdStatus::converged) << r.message;
    EXPECT_LT(true_residual(ops, b, x), 1e-9);
    cd* y = ops.alloc();
    r = cocg(ops, b.data(), y, ones.data(), minv.data(), minv.data(), kp);
    EXPECT_EQ(r.status, FdfdStatus::converged) << r.message;
    EXPECT_LT(true_residual(ops, b, y), 1e-9);
  }
}

TEST(FdfdKrylov, BreakdownIsDetectedReportedAndRestartsAreBounded) {
  // A = [[0, 1], [1, 0]], b = (1, 0): (r0, A r0) = 0 and r0^T A r0 = 0 at the first step.
  DenseOps ops{2, {0.0, 1.0, 1.0, 0.0}, {}};
  const std::vector<cd> b{1.0, 0.0};
  KrylovParams kp;
  kp.max_iterations = 50;
  kp.max_restarts = 3;
  {
    cd* x = ops.alloc();
    const KrylovResult r = bicgstab(ops, b.data(), x, nullptr, kp);
    EXPECT_EQ(r.status, FdfdStatus::breakdown);
    EXPECT_EQ(r.restarts, 3);
    EXPECT_NE(r.message.find("broke down"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("residual"), std::string::npos) << r.message;
  }
  {
    cd* x = ops.alloc();
    const std::vector<cd> ones(2, 1.0);
    const KrylovResult r = cocg(ops, b.data(), x, ones.data(), nullptr, ones.data(), kp);
    EXPECT_EQ(r.status, FdfdStatus::breakdown);
    EXPECT_EQ(r.restarts, 3);
    EXPECT_NE(r.message.find("COCG broke down"), std::string::npos) << r.message;
    // The best iterate is returned: here the initial guess.
    EXPECT_EQ(x[0], cd(0.0));
    EXPECT_DOUBLE_EQ(r.relative_residual, 1.0);
  }
}

TEST(FdfdKrylov, NonConvergenceReturnsTheBestIterateWithItsResidual) {
  DenseOps ops = random_symmetric(60, 5);
  for (int i = 0; i < 60; ++i) ops.A[i * 60 + i] -= cd(2.0 + 0.1 * i, 0.0);  // indefinite, harder
  std::vector<cd> b(60, cd(1.0, 0.5));
  KrylovParams kp;
  kp.tolerance = 1e-14;
  kp.max_iterations = 6;
  cd* x = ops.alloc();
  const KrylovResult r = bicgstab(ops, b.data(), x, nullptr, kp);
  EXPECT_EQ(r.status, FdfdStatus::max_iterations);
  EXPECT_NE(r.message.find("did not converge"), std::string::npos) << r.message;
  double best = 1.0;
  for (double h : r.history) best = std::min(best, h);
  EXPECT_LE(r.relative_residual, 2.0 * best + 1e-15);
  EXPECT_NEAR(true_residual(ops, b, x), r.relative_residual, 1e-8);
}

TEST(FdfdKrylov, ProgressCallbackStops) {
  DenseOps ops = random_symmetric(30, 9);
  std::vector<cd> b(30, 1.0);
  KrylovParams kp;
  kp.tolerance = 1e-15;
  kp.max_iterations = 100;
  kp.progress_interval = 2;
  int calls = 0;
  kp.progress = [&](int it, double rel) {
    ++calls;
    EXPECT_GT(rel, 0.0);
    return it < 4;
  };
  cd* x = ops.alloc();
  std::vector<cd> ones(30, 1.0);
  const KrylovResult r = cocg(ops, b.data(), x, ones.data(), nullptr, ones.data(), kp);
  EXPECT_EQ(r.status, FdfdStatus::stopped);
  EXPECT_EQ(r.iterations, 4);
  EXPECT_EQ(calls, 2);
}
