// The Krylov solvers, written once over a backend "Ops" (CPU: OpenMP loops; CUDA: cuBLAS calls
// or fused kernels) so that both backends run the same algorithm step for step.
//
// Ops provides (C = Cx<T>, vectors of n = 3N entries in backend memory):
//   C* alloc();                                    zero-initialised vector owned by Ops
//   void matvec(const C* x, C* y);                 y = A x
//   void copy(const C* s, C* d);  void zero(C* x);
//   void axpy(cdouble a, const C* x, C* y);        y += a x
//   void residual(const C* b, const C* ax, C* r);  r = b - ax
//   void diag_mul(const C* d, const C* x, C* y);   y = d o x   (elementwise)
//   double nrm2sq(const C* x);
//   DotNorm dotc_norm(const C* a, const C* b);     {a^H b, ||b||^2}
//   void bicg_p(C* p, const C* r, const C* v, cdouble beta, cdouble omega);  p = r + beta (p - omega v)
//   double axpy_nrm2sq(cdouble a, const C* x, C* y);                          y += a x; ||y||^2
//   DotNorm bicg_xr(C* x, const C* ph, const C* sh, C* r, const C* t, const C* r0,
//                   cdouble alpha, cdouble omega);
//        x += alpha ph + omega sh;  r = r - omega t  (r holds s on entry; sh may alias r);
//        returns {r0^H r, ||r||^2}
//   WDot wdotu(const C* w, const C* a, const C* b);  {sum w a b, sum |w a b|}
//   WDot cocg_xr(C* x, C* r, const C* p, const C* q, const C* wm, cdouble alpha, double* rr);
//        x += alpha p;  r -= alpha q;  *rr = ||r||^2;  returns {sum wm r r, sum |wm r r|}
//        (wm may be null: then no weighted sum, {0, 0})
//   void cocg_p(C* p, const C* minv, const C* r, cdouble beta);  p = minv o r + beta p (minv may be null)
//   WDot cocr_pq(C* p, C* q, const C* r, const C* ar, const C* d, cdouble beta);
//        p = r + beta p;  q = ar + beta q;  returns {sum d q q, sum |d q q|}
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "vem/fdfd/fdfd_solver.h"

namespace vem {
namespace fdfd {

struct DotNorm {
  cdouble dot;
  double norm2;
};
struct WDot {
  cdouble dot;
  double abs_sum;
};

struct KrylovParams {
  double tolerance = 1e-6;
  int max_iterations = 1000;
  int max_restarts = 5;
  bool keep_history = true;
  std::function<bool(int, double)> progress;
  int progress_interval = 50;
  double breakdown_eps = 1e-15;  // relative size under which a scalar counts as zero
};

struct KrylovResult {
  FdfdStatus status = FdfdStatus::max_iterations;
  int iterations = 0, matvecs = 0, restarts = 0;
  double relative_residual = 1.0;
  std::vector<double> history;
  std::string message;
  // Iterative refinement only (fdfd_backend.h: refine()).
  int refinements = 0;
  std::vector<double> true_history;
  std::vector<int> true_history_iterations;
};

namespace detail {

// Keeps the best iterate seen (copied only when the residual has at least halved since the last
// copy, so the copies cost O(log(1/tol)) vector copies in all).
template <class Ops>
struct BestIterate {
  using C = typename Ops::C;
  Ops& ops;
  C* best = nullptr;   // null: the best is the initial guess x = 0
  double saved = 1.0;  // relative residual of the saved iterate (x = 0 has 1)
  void offer(const C* x, double rel) {
    if (rel <= 0.5 * saved) {
      if (!best) best = ops.alloc();
      ops.copy(x, best);
      saved = rel;
    }
  }
  // Before a restart: continue from the saved iterate when x is no longer usable (non-finite)
  // or far worse than it (a residual non-monotone method's peaks stay within ~10^4).
  void rewind(C* x, double current_rel) {
    if (!std::isfinite(current_rel) || current_rel > 1e6 * saved) {
      if (best)
        ops.copy(best, x);
      else
        ops.zero(x);
    }
  }
  // At the end without convergence: restore the saved iterate when it is better than x.
  bool restore(C* x, double current_rel) {
    if (!(saved < current_rel) && std::isfinite(current_rel)) return false;
    if (best)
      ops.copy(best, x);
    else
      ops.zero(x);
    return true;
  }
};

inline std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

// Start of every method: the history's first entry; true (with `res` complete) when b = 0.
inline bool zero_rhs(double bnorm, const KrylovParams& prm, KrylovResult& res) {
  if (prm.keep_history) res.history.push_back(1.0);
  if (bnorm != 0.0) return false;
  res.status = FdfdStatus::converged;
  res.relative_residual = 0.0;
  res.message = "zero right-hand side (nothing scatters): the scattered field is zero";
  return true;
}

// How a method that did not converge ended, for its message.
inline std::string ending(FdfdStatus status, const std::string& breakdown) {
  return status == FdfdStatus::breakdown ? "broke down (" + breakdown + ")"
         : status == FdfdStatus::stopped ? "was stopped"
                                         : "did not converge";
}

// End of every method: the status after a breakdown, the best iterate when not converged, and
// the message naming the method.
template <class Ops>
void finish(const char* method, double rel, const std::string& breakdown, const KrylovParams& prm,
            BestIterate<Ops>& best, typename Ops::C* x, KrylovResult& res) {
  res.relative_residual = rel;
  if (res.status != FdfdStatus::converged) {
    if (res.status == FdfdStatus::max_iterations && !breakdown.empty() &&
        res.iterations < prm.max_iterations)
      res.status = FdfdStatus::breakdown;
    if (best.restore(x, rel)) res.relative_residual = best.saved;
    res.message = std::string(method) + " " + ending(res.status, breakdown) + " after " + std::to_string(res.iterations) +
                  " iterations; returning the best iterate, relative residual " +
                  fmt(res.relative_residual) + " (tolerance " + fmt(prm.tolerance) + ")";
  } else if (res.restarts > 0) {
    res.message = std::string(method) + " converged after " + std::to_string(res.restarts) +
                  " restart(s); last breakdown: " + breakdown;
  }
}

}  // namespace detail

// BiCGSTAB (van der Vorst 1992), right-preconditioned by diag(minv) when minv != nullptr.
// x must be zero on entry (initial guess 0).
template <class Ops>
KrylovResult bicgstab(Ops& ops, const typename Ops::C* b, typename Ops::C* x,
                      const typename Ops::C* minv, const KrylovParams& prm) {
  using C = typename Ops::C;
  KrylovResult res;
  const double bnorm = std::sqrt(ops.nrm2sq(b));
  if (detail::zero_rhs(bnorm, prm, res)) return res;
  C* r = ops.alloc();
  C* r0 = ops.alloc();
  C* p = ops.alloc();
  C* v = ops.alloc();
  C* t = ops.alloc();
  C* ph = minv ? ops.alloc() : p;
  C* sh = minv ? ops.alloc() : r;
  detail::BestIterate<Ops> best{ops};

  ops.copy(b, r);
  ops.copy(b, r0);
  double rnorm2 = bnorm * bnorm, r0norm = bnorm;
  cdouble rho = rnorm2;  // r0^H r
  cdouble rho_old = 1.0, alpha = 1.0, omega = 1.0;
  bool first = true;
  const double eps = prm.breakdown_eps;
  double rel = 1.0;
  std::string breakdown;

  auto restart = [&](const std::string& why) -> bool {
    breakdown = why;
    if (res.restarts >= prm.max_restarts) return false;
    ++res.restarts;
    best.rewind(x, rel);
    ops.matvec(x, t);
    ++res.matvecs;
    ops.residual(b, t, r);
    ops.copy(r, r0);
    rnorm2 = ops.nrm2sq(r);
    r0norm = std::sqrt(rnorm2);
    rel = std::sqrt(rnorm2) / bnorm;
    rho = rnorm2;
    first = true;
    return true;
  };

  while (res.iterations < prm.max_iterations) {
    if (std::abs(rho) <= eps * r0norm * std::sqrt(rnorm2)) {
      if (!restart("rho = (r0, r) vanished (BiCGSTAB breakdown)")) break;
      continue;
    }
    if (first) {
      ops.copy(r, p);
      first = false;
    } else {
      const cdouble beta = (rho / rho_old) * (alpha / omega);
      ops.bicg_p(p, r, v, beta, omega);
    }
    if (minv) ops.diag_mul(minv, p, ph);
    ops.matvec(ph, v);
    ++res.matvecs;
    const DotNorm sv = ops.dotc_norm(r0, v);
    if (std::abs(sv.dot) <= eps * r0norm * std::sqrt(sv.norm2)) {
      if (!restart("(r0, A p) vanished (BiCGSTAB breakdown)")) break;
      continue;
    }
    alpha = rho / sv.dot;
    const double snorm2 = ops.axpy_nrm2sq(-alpha, v, r);  // r <- s = r - alpha v
    ++res.iterations;
    if (std::sqrt(snorm2) <= prm.tolerance * bnorm) {  // converged at the half step
      ops.axpy(alpha, ph, x);
      rel = std::sqrt(snorm2) / bnorm;
      if (prm.keep_history) res.history.push_back(rel);
      res.status = FdfdStatus::converged;
      break;
    }
    if (minv) ops.diag_mul(minv, r, sh);
    ops.matvec(sh, t);
    ++res.matvecs;
    const DotNorm tt = ops.dotc_norm(r, t);  // {s^H t, ||t||^2}
    if (tt.norm2 == 0.0) {
      // A sh = 0 with s != 0: cannot happen for a nonsingular A; treat as breakdown.
      if (!restart("A s = 0 (BiCGSTAB breakdown)")) break;
      continue;
    }
    omega = std::conj(tt.dot) / tt.norm2;  // t^H s / t^H t
    const DotNorm rr = ops.bicg_xr(x, ph, sh, r, t, r0, alpha, omega);
    rho_old = rho;
    rho = rr.dot;
    rnorm2 = rr.norm2;
    rel = std::sqrt(rnorm2) / bnorm;
    if (prm.keep_history) res.history.push_back(rel);
    best.offer(x, rel);
    if (rel <= prm.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (!std::isfinite(rel)) {
      if (!restart("the residual became non-finite")) break;
      continue;
    }
    if (std::abs(omega) <= eps) {
      if (!restart("omega vanished (BiCGSTAB stagnation)")) break;
      continue;
    }
    if (prm.progress && res.iterations % std::max(1, prm.progress_interval) == 0 &&
        !prm.progress(res.iterations, rel)) {
      res.status = FdfdStatus::stopped;
      break;
    }
  }
  detail::finish<Ops>("BiCGSTAB", rel, breakdown, prm, best, x, res);
  return res;
}

// COCG on the complex-symmetric system diag(d) A x = diag(d) b, preconditioned by
// M = diag(d) (minv == nullptr) or M = diag(d) diag(A) (minv = 1/diag(A)): the residual kept
// is r = b - A x, the search direction p = minv o r + beta p, rho = sum wm r r with
// wm = d o minv (or d), and alpha = rho / sum d p (A p). x must be zero on entry.
template <class Ops>
KrylovResult cocg(Ops& ops, const typename Ops::C* b, typename Ops::C* x,
                  const typename Ops::C* d, const typename Ops::C* minv,
                  const typename Ops::C* wm, const KrylovParams& prm) {
  using C = typename Ops::C;
  KrylovResult res;
  const double bnorm = std::sqrt(ops.nrm2sq(b));
  if (detail::zero_rhs(bnorm, prm, res)) return res;
  C* r = ops.alloc();
  C* p = ops.alloc();
  C* q = ops.alloc();
  detail::BestIterate<Ops> best{ops};
  const double eps = prm.breakdown_eps;
  double rel = 1.0;
  std::string breakdown;

  ops.copy(b, r);
  WDot rho = ops.wdotu(wm, r, r);
  ops.zero(p);
  ops.cocg_p(p, minv, r, 0.0);

  auto restart = [&](const std::string& why) -> bool {
    breakdown = why;
    if (res.restarts >= prm.max_restarts) return false;
    ++res.restarts;
    best.rewind(x, rel);
    ops.matvec(x, q);
    ++res.matvecs;
    ops.residual(b, q, r);
    rel = std::sqrt(ops.nrm2sq(r)) / bnorm;
    rho = ops.wdotu(wm, r, r);
    ops.zero(p);
    ops.cocg_p(p, minv, r, 0.0);
    return true;
  };

  while (res.iterations < prm.max_iterations) {
    if (std::abs(rho.dot) <= eps * rho.abs_sum) {
      if (!restart("rho = r^T W r vanished (COCG breakdown)")) break;
      continue;
    }
    ops.matvec(p, q);
    ++res.matvecs;
    const WDot mu = ops.wdotu(d, p, q);
    if (std::abs(mu.dot) <= eps * mu.abs_sum) {
      if (!restart("p^T W A p vanished (COCG breakdown)")) break;
      continue;
    }
    const cdouble alpha = rho.dot / mu.dot;
    double rnorm2 = 0;
    const WDot rho_new = ops.cocg_xr(x, r, p, q, wm, alpha, &rnorm2);
    ++res.iterations;
    rel = std::sqrt(rnorm2) / bnorm;
    if (prm.keep_history) res.history.push_back(rel);
    best.offer(x, rel);
    if (rel <= prm.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (!std::isfinite(rel)) {
      if (!restart("the residual became non-finite")) break;
      continue;
    }
    const cdouble beta = rho_new.dot / rho.dot;
    rho = rho_new;
    ops.cocg_p(p, minv, r, beta);
    if (prm.progress && res.iterations % std::max(1, prm.progress_interval) == 0 &&
        !prm.progress(res.iterations, rel)) {
      res.status = FdfdStatus::stopped;
      break;
    }
  }
  detail::finish<Ops>("COCG", rel, breakdown, prm, best, x, res);
  return res;
}

// COCR (Sogabe & Zhang, J. Comput. Appl. Math. 199 (2007) 297) on the complex-symmetric
// diag(d^1/2) A diag(d^-1/2), written for r = b - A x: alpha = (r, A r)_d / (A p, A p)_d,
// beta = (r', A r')_d / (r, A r)_d with (u, v)_d = sum d u v (unconjugated). One product with A
// per iteration like COCG, one more vector update, and a residual that behaves like that of a
// minimal-residual method (no large intermediate peaks). x must be zero on entry.
template <class Ops>
KrylovResult cocr(Ops& ops, const typename Ops::C* b, typename Ops::C* x,
                  const typename Ops::C* d, const KrylovParams& prm) {
  using C = typename Ops::C;
  KrylovResult res;
  const double bnorm = std::sqrt(ops.nrm2sq(b));
  if (detail::zero_rhs(bnorm, prm, res)) return res;
  C* r = ops.alloc();
  C* ar = ops.alloc();
  C* p = ops.alloc();
  C* q = ops.alloc();
  detail::BestIterate<Ops> best{ops};
  const double eps = prm.breakdown_eps;
  double rel = 1.0;
  std::string breakdown;
  WDot rho{}, mu{};

  auto start = [&]() {
    ops.matvec(r, ar);
    ++res.matvecs;
    rho = ops.wdotu(d, r, ar);
    ops.zero(p);
    ops.zero(q);
    mu = ops.cocr_pq(p, q, r, ar, d, 0.0);
  };
  auto restart = [&](const std::string& why) -> bool {
    breakdown = why;
    if (res.restarts >= prm.max_restarts) return false;
    ++res.restarts;
    best.rewind(x, rel);
    ops.matvec(x, q);
    ++res.matvecs;
    ops.residual(b, q, r);
    rel = std::sqrt(ops.nrm2sq(r)) / bnorm;
    start();
    return true;
  };

  ops.copy(b, r);
  start();
  while (res.iterations < prm.max_iterations) {
    if (std::abs(rho.dot) <= eps * rho.abs_sum) {
      if (!restart("(r, A r) vanished (COCR breakdown)")) break;
      continue;
    }
    if (std::abs(mu.dot) <= eps * mu.abs_sum) {
      if (!restart("(A p, A p) vanished (COCR breakdown)")) break;
      continue;
    }
    const cdouble alpha = rho.dot / mu.dot;
    double rnorm2 = 0;
    ops.cocg_xr(x, r, p, q, nullptr, alpha, &rnorm2);
    ++res.iterations;
    rel = std::sqrt(rnorm2) / bnorm;
    if (prm.keep_history) res.history.push_back(rel);
    best.offer(x, rel);
    if (rel <= prm.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (!std::isfinite(rel)) {
      if (!restart("the residual became non-finite")) break;
      continue;
    }
    ops.matvec(r, ar);
    ++res.matvecs;
    const WDot rho_new = ops.wdotu(d, r, ar);
    const cdouble beta = rho_new.dot / rho.dot;
    rho = rho_new;
    mu = ops.cocr_pq(p, q, r, ar, d, beta);
    if (prm.progress && res.iterations % std::max(1, prm.progress_interval) == 0 &&
        !prm.progress(res.iterations, rel)) {
      res.status = FdfdStatus::stopped;
      break;
    }
  }
  detail::finish<Ops>("COCR", rel, breakdown, prm, best, x, res);
  return res;
}

// Flexible GCR (Eisenstat, Elman & Schultz 1983; flexible: Vuik 1995) with a right
// preconditioner that may change between applications (fdfd_solver.h: FdfdMethod::gcr):
//   r = b;  repeat:  z = M r;  q = A z;  q -= sum_i beta_i q_i, z -= sum_i beta_i z_i with
//   beta_i = (q_i^H q) / ||q_i||^2 (modified Gram-Schmidt);  alpha = (q^H r) / ||q||^2;
//   x += alpha z;  r -= alpha q.
// Each step minimizes ||b - A x|| over the span of the kept z_i. After `restart` kept pairs the
// basis is dropped and r recomputed as b - A x. `precondition(r, z, rel)` computes z = M r and
// returns false to stop (status stopped). x must be zero on entry.
template <class Ops, class Precondition>
KrylovResult gcr(Ops& ops, const typename Ops::C* b, typename Ops::C* x, int restart,
                 Precondition&& precondition, const KrylovParams& prm) {
  using C = typename Ops::C;
  KrylovResult res;
  const double bnorm = std::sqrt(ops.nrm2sq(b));
  if (detail::zero_rhs(bnorm, prm, res)) return res;
  C* r = ops.alloc();
  ops.copy(b, r);
  std::vector<C*> zs, qs;       // pool, reused after a restart
  std::vector<double> qnorm2;
  int kept = 0;
  double rel = 1.0;
  std::string breakdown;
  while (res.iterations < prm.max_iterations) {
    if (kept == restart) {
      kept = 0;
      ++res.restarts;
      ops.matvec(x, qs[0]);
      ++res.matvecs;
      ops.residual(b, qs[0], r);
    }
    if (kept == int(zs.size())) {
      zs.push_back(ops.alloc());
      qs.push_back(ops.alloc());
      qnorm2.push_back(0.0);
    }
    C* z = zs[kept];
    C* q = qs[kept];
    if (!precondition(r, z, rel)) {
      res.status = FdfdStatus::stopped;
      break;
    }
    ops.matvec(z, q);
    ++res.matvecs;
    for (int i = 0; i < kept; ++i) {
      const cdouble beta = ops.dotc_norm(qs[i], q).dot / qnorm2[i];
      ops.axpy(-beta, qs[i], q);
      ops.axpy(-beta, zs[i], z);
    }
    const DotNorm rq = ops.dotc_norm(r, q);  // {r^H q, ||q||^2}
    if (!(rq.norm2 > 0) || !std::isfinite(rq.norm2)) {
      breakdown = "the preconditioned direction A z vanished or is not finite (GCR breakdown)";
      res.status = FdfdStatus::breakdown;
      break;
    }
    qnorm2[kept] = rq.norm2;
    const cdouble alpha = std::conj(rq.dot) / rq.norm2;
    ops.axpy(alpha, z, x);
    ops.axpy(-alpha, q, r);
    ++kept;
    ++res.iterations;
    rel = std::sqrt(ops.nrm2sq(r)) / bnorm;
    if (prm.keep_history) res.history.push_back(rel);
    if (rel <= prm.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (prm.progress && !prm.progress(res.iterations, rel)) {
      res.status = FdfdStatus::stopped;
      break;
    }
  }
  res.relative_residual = rel;
  if (res.status != FdfdStatus::converged) {  // GCR minimizes the residual: the last iterate is the best
    res.message = "GCR " + detail::ending(res.status, breakdown) + " after " + std::to_string(res.iterations) +
                  " outer iterations; returning the last iterate, relative residual " +
                  detail::fmt(rel) + " (tolerance " + detail::fmt(prm.tolerance) + ")";
  }
  return res;
}

}  // namespace fdfd
}  // namespace vem
