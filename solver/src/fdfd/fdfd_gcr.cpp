// Flexible GCR with the time-domain preconditioner (fdfd_solver.h: FdfdMethod::gcr,
// FdfdPreconditioner::time_domain; fdfd_time_domain.h).
//
//   r = b, x = 0
//   repeat:  z = M r  (an FDTD run to steady state),  q = A z  (host, double)
//            orthogonalize q against the kept q_i (modified Gram-Schmidt, conjugated inner
//            products), applying the same combination to z; normalize
//            alpha = q^H r;  x += alpha z;  r -= alpha q        (r stays b - A x)
// Each step minimizes ||b - A x|| over the span of the kept z_i, whatever M did (flexible: M
// may change between applications). After `gcr_restart` kept vectors the basis is dropped and
// GCR continues from x. The residual is recomputed from scratch (b - A x) at every restart and
// at the end, so the reported residual is the true one.
#include <chrono>
#include <cmath>

#include "fdfd/fdfd_backend.h"
#include "vem/error.h"
#include "vem/fdfd_time_domain.h"

namespace vem {
namespace fdfd {

namespace {

using V = std::vector<cdouble>;

cdouble dotc(const V& a, const V& b) {
  double re = 0, im = 0;
  const std::int64_t n = std::int64_t(a.size());
#pragma omp parallel for reduction(+ : re, im) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const cdouble p = std::conj(a[i]) * b[i];
    re += p.real();
    im += p.imag();
  }
  return {re, im};
}
double nrm2(const V& a) { return std::sqrt(dotc(a, a).real()); }
void axpy(cdouble a, const V& x, V& y) {
  const std::int64_t n = std::int64_t(x.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void scale(cdouble a, V& x) {
  const std::int64_t n = std::int64_t(x.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) x[i] *= a;
}

}  // namespace

BackendResult solve_time_domain(const FdfdOperator& op, const FdfdSolverOptions& o,
                                const HostVectors& hv, const KrylovParams& kp) {
  using Clock = std::chrono::steady_clock;
  const auto t_setup = Clock::now();
  BackendResult br;
  FdfdTimeDomainPreconditioner pre(op, o.time_domain, o.backend, o.device_index);
  br.backend = "host gcr + fdtd " + pre.backend();
  br.td_backend = pre.backend();
  br.td_steps_per_period = pre.steps_per_period();
  br.td_dt = pre.dt();
  br.setup_seconds = std::chrono::duration<double>(Clock::now() - t_setup).count();
  // Bytes of one outer step by our count: the product (host, double) reads x and the
  // coefficients; not comparable with the GPU rows, so reported as the FDTD's own traffic only.
  const auto t0 = Clock::now();
  KrylovResult& res = br.krylov;
  const std::size_t n = hv.b.size();
  V x(n, cdouble(0)), r = hv.b, q(n), z;
  const double bnorm = nrm2(hv.b);
  if (kp.keep_history) res.history.push_back(1.0);
  if (bnorm == 0.0) {
    res.status = FdfdStatus::converged;
    res.relative_residual = 0.0;
    res.message = "zero right-hand side (nothing scatters): the scattered field is zero";
    br.x = std::move(x);
    return br;
  }
  std::vector<V> zs, qs;
  double rel = 1.0;
  bool stopped = false;
  std::string why;
  while (res.iterations < kp.max_iterations) {
    if (int(zs.size()) >= o.time_domain.gcr_restart) {  // restart: true residual, empty basis
      zs.clear();
      qs.clear();
      op.apply(x.data(), q.data());
      ++res.matvecs;
      for (std::size_t i = 0; i < n; ++i) r[i] = hv.b[i] - q[i];
      ++res.restarts;
    }
    auto keep_going = [&]() { return !kp.progress || kp.progress(res.iterations, rel); };
    const TimeDomainApplyStats ps = pre.apply(r, z, keep_going);
    br.td_steps += ps.steps;
    br.td_periods.push_back(ps.periods);
    br.td_seconds += ps.seconds;
    if (!ps.settled && ps.periods < o.time_domain.max_periods) {  // stopped from the callback
      stopped = true;
      break;
    }
    op.apply(z.data(), q.data());
    ++res.matvecs;
    for (std::size_t i = 0; i < qs.size(); ++i) {
      const cdouble beta = dotc(qs[i], q);
      axpy(-beta, qs[i], q);
      axpy(-beta, zs[i], z);
    }
    const double qn = nrm2(q);
    if (!(qn > 0) || !std::isfinite(qn)) {
      why = "the preconditioned direction vanished or is not finite (GCR breakdown)";
      res.status = FdfdStatus::breakdown;
      break;
    }
    scale(1.0 / qn, q);
    scale(1.0 / qn, z);
    const cdouble alpha = dotc(q, r);
    axpy(alpha, z, x);
    axpy(-alpha, q, r);
    ++res.iterations;
    rel = nrm2(r) / bnorm;
    if (kp.keep_history) res.history.push_back(rel);
    if (rel <= kp.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (kp.progress && !kp.progress(res.iterations, rel)) {
      stopped = true;
      break;
    }
    zs.push_back(std::move(z));
    qs.push_back(q);
    z = V();
  }
  if (stopped) res.status = FdfdStatus::stopped;
  res.relative_residual = rel;
  if (res.status != FdfdStatus::converged) {
    const std::string what = res.status == FdfdStatus::breakdown ? "broke down (" + why + ")"
                             : res.status == FdfdStatus::stopped ? "was stopped"
                                                                 : "did not converge";
    res.message = "GCR with the time-domain preconditioner " + what + " after " +
                  std::to_string(res.iterations) + " outer iterations; returning the last iterate, "
                  "relative residual " + detail::fmt(rel) + " (tolerance " + detail::fmt(kp.tolerance) + ")";
  }
  br.solve_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  br.x = std::move(x);
  return br;
}

}  // namespace fdfd
}  // namespace vem
