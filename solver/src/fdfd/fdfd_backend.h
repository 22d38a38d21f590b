// Interface between solve_fdfd() and the backends (fdfd_cpu.cpp, fdfd_cuda.cu).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "fdfd/fdfd_krylov.h"
#include "fdfd/fdfd_stencil.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdfd/fdfd_time_domain.h"

namespace vem {
namespace fdfd {

// Host vectors (3N, double) the solve needs besides the operator's coefficients.
struct HostVectors {
  std::vector<cdouble> b;     // right-hand side
  std::vector<cdouble> minv;  // 1/diag(A) with Jacobi, else empty
  std::vector<cdouble> d;     // COCG: symmetrizer W eps, else empty
  std::vector<cdouble> wm;    // COCG: weight of rho (d o minv, or d), else empty
};

// What a backend hands back.
struct BackendResult {
  KrylovResult krylov;
  std::vector<cdouble> x;  // 3N
  std::string backend;
  FdfdTablePlacement tables = FdfdTablePlacement::global_memory;
  double setup_seconds = 0, solve_seconds = 0;
  double bytes_per_iteration = 0, bytes_per_matvec = 0;
  std::int64_t device_bytes = 0;
  // Time-domain preconditioner only (FdfdSolveStats has the meanings).
  std::int64_t td_steps = 0;
  int td_steps_per_period = 0;
  double td_dt = 0, td_seconds = 0, td_prepare_seconds = 0, td_step_seconds = 0;
  std::string td_backend;
  std::vector<int> td_periods;
  bool td_on_device = false;
};

// Grad-div regularization (fdfd_operator.h): the Krylov method solved (A + Q) y = b; this turns
// y into the solution x = y + Q y, in double on the host (once per solve or outer step).
inline void regularized_to_solution(const FdfdOperator& op, const FdfdSolverOptions& o,
                                    std::vector<cdouble>& y) {
  if (o.regularization != FdfdRegularization::grad_div) return;
  std::vector<cdouble> q(y.size());
  op.grad_div(o.regularization_scale, y.data(), q.data());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += q[i];
}

// The 1-D profiles of the grad-div term (fdfd_stencil.h, GradDiv) on the host: se[a] has
// n_a + 1 entries, gsh[a] n_a; T precision.
template <class T>
struct GradDivProfiles {
  std::vector<Cx<T>> se[3], gsh[3];
  T inv_d[3], kd[3], c36;
  GradDivProfiles(const FdfdOperator& op, double s) {
    const YeeGrid& g = op.grid();
    const int n[3] = {g.nx, g.ny, g.nz};
    const double d[3] = {g.dx, g.dy, g.dz};
    for (int a = 0; a < 3; ++a) {
      for (int q = 0; q <= n[a]; ++q) {
        const cdouble v = op.stretch_e(a, q);
        se[a].push_back({T(v.real()), T(v.imag())});
      }
      for (int q = 0; q < n[a]; ++q) {
        const cdouble v = 1.0 / (op.stretch_h(a, q) * d[a]);
        gsh[a].push_back({T(v.real()), T(v.imag())});
      }
      inv_d[a] = T(1.0 / d[a]);
      kd[a] = T(op.k0() * d[a]);
    }
    c36 = T(36.0 * s / (op.k0() * op.k0()));
  }
};

// One run of the chosen method (o.method resolved) from x = 0.
template <class Ops>
KrylovResult run_method(Ops& ops, FdfdMethod m, const typename Ops::C* b, typename Ops::C* x,
                        const typename Ops::C* minv, const typename Ops::C* d,
                        const typename Ops::C* wm, const KrylovParams& kp) {
  return m == FdfdMethod::bicgstab ? bicgstab(ops, b, x, minv, kp)
         : m == FdfdMethod::cocg   ? cocg(ops, b, x, d, minv, wm, kp)
                                   : cocr(ops, b, x, d, kp);
}

// Flexible GCR on the backend's vectors with the time-domain preconditioner (fdfd_time_domain.h,
// built by the caller on the same backend): each application downloads r, runs the FDTD to
// steady state and uploads z. The steady-state tolerance of an application is loosened once the
// residual nears the target: max(steady_tolerance, min(0.1, 0.2 tol / ||r||)) (an application
// only has to divide the residual by ||r|| / tol, and GCR's minimization does the rest).
template <class Ops>
KrylovResult run_time_domain_gcr(Ops& ops, FdfdTimeDomainPreconditioner& pre,
                                 const FdfdSolverOptions& o, const KrylovParams& kp,
                                 const typename Ops::C* b, typename Ops::C* x, BackendResult& out) {
  using C = typename Ops::C;
  out.td_steps_per_period = pre.steps_per_period();
  out.td_dt = pre.dt();
  std::vector<cdouble> zh;
  int done = 0;
  auto precondition = [&](const C* r, C* z, double rel) {
    const double tol = std::max(o.time_domain.steady_tolerance,
                                std::min(0.1, 0.2 * kp.tolerance / std::max(rel, 1e-300)));
    auto keep_going = [&]() { return !kp.progress || kp.progress(done, rel); };
    TimeDomainApplyStats st;
    bool on_device = false;
    if constexpr (Ops::kOnDevice && std::is_same<C, Cx<double>>::value) {
      if (pre.device_path()) {  // GPU vectors straight into and out of the FDTD (no host copies)
        st = pre.apply_device(r, z, keep_going, tol);
        on_device = true;
        out.td_on_device = true;
      }
    }
    if (!on_device) st = pre.apply(ops.download(r), zh, keep_going, tol);
    out.td_steps += st.steps;
    out.td_seconds += st.seconds;
    out.td_prepare_seconds += st.prepare_seconds;
    out.td_step_seconds += st.step_seconds;
    out.td_periods.push_back(st.periods);
    ++done;
    if (st.stopped) return false;
    if (!on_device) ops.upload_to(zh, z);
    return true;
  };
  KrylovResult res = gcr(ops, b, x, o.time_domain.gcr_restart, precondition, kp);
  out.td_backend = pre.backend();  // the engine's name once it has run
  return res;
}

// Mixed-precision iterative refinement (fdfd_solver.h, FdfdRefinement): the outer loop in
// double on the host (true residual with FdfdOperator::apply, x accumulated in `xh`), the inner
// solves A d = r / ||r|| with `ops` in its working precision. `b` and `x` are backend vectors
// used as the inner right-hand side and solution; Ops additionally provides
// upload_to(const std::vector<cdouble>&, C*) and download(const C*).
template <class Ops>
KrylovResult refine(Ops& ops, const FdfdOperator& op, const FdfdSolverOptions& o,
                    const HostVectors& hv, const KrylovParams& kp, typename Ops::C* b,
                    typename Ops::C* x, const typename Ops::C* minv, const typename Ops::C* d,
                    const typename Ops::C* wm, std::vector<cdouble>& xh) {
  const std::size_t n = hv.b.size();
  auto norm = [](const std::vector<cdouble>& v) {
    double s = 0;
    for (const cdouble& z : v) s += std::norm(z);
    return std::sqrt(s);
  };
  KrylovResult res;
  xh.assign(n, cdouble(0));
  std::vector<cdouble> r = hv.b, ax(n), dx, rs(n);
  const double bnorm = norm(hv.b);
  if (kp.keep_history) res.history.push_back(1.0);
  res.true_history.push_back(1.0);
  res.true_history_iterations.push_back(0);
  if (bnorm == 0.0) {
    res.status = FdfdStatus::converged;
    res.relative_residual = 0.0;
    res.message = "zero right-hand side (nothing scatters): the scattered field is zero";
    return res;
  }
  double rel = 1.0;
  std::string why, switched;
  FdfdMethod method = o.method;
  auto name_of = [](FdfdMethod m) {
    return m == FdfdMethod::bicgstab ? "BiCGSTAB" : m == FdfdMethod::cocg ? "COCG" : "COCR";
  };
  while (true) {
    if (rel <= o.tolerance) {
      res.status = FdfdStatus::converged;
      break;
    }
    if (res.refinements >= o.max_refinements) {
      res.status = FdfdStatus::max_iterations;
      why = "reached max_refinements = " + std::to_string(o.max_refinements);
      break;
    }
    const int remaining = kp.max_iterations - res.iterations;
    if (remaining <= 0) {
      res.status = FdfdStatus::max_iterations;
      why = "reached max_iterations = " + std::to_string(kp.max_iterations);
      break;
    }
    KrylovParams ik = kp;
    // Ask the inner solve for inner_tolerance, or less when less is needed to finish.
    ik.tolerance = std::max(o.inner_tolerance, std::min(0.5, 0.5 * o.tolerance / rel));
    // COCG/COCR may stall in single precision (lost conjugacy): give them a share of the budget
    // and fall back to BiCGSTAB when an outer step gains nothing.
    ik.max_iterations = method == FdfdMethod::bicgstab
                            ? remaining
                            : std::min(remaining, std::max(500, kp.max_iterations / 5));
    const int base = res.iterations;
    const double scale = rel;
    if (kp.progress)
      ik.progress = [&kp, base, scale](int it, double rr) { return kp.progress(base + it, scale * rr); };
    const double rnorm = rel * bnorm;
    for (std::size_t i = 0; i < n; ++i) rs[i] = r[i] / rnorm;
    ops.upload_to(rs, b);
    ops.zero(x);
    const KrylovResult in = run_method(ops, method, b, x, minv, d, wm, ik);
    res.iterations += in.iterations;
    res.matvecs += in.matvecs;
    res.restarts += in.restarts;
    ++res.refinements;
    if (kp.keep_history)
      for (std::size_t i = 1; i < in.history.size(); ++i) res.history.push_back(scale * in.history[i]);
    dx = ops.download(x);
    regularized_to_solution(op, o, dx);
    for (std::size_t i = 0; i < n; ++i) xh[i] += rnorm * dx[i];
    op.apply(xh.data(), ax.data());
    for (std::size_t i = 0; i < n; ++i) r[i] = hv.b[i] - ax[i];
    double new_rel = norm(r) / bnorm;
    res.true_history.push_back(new_rel);
    res.true_history_iterations.push_back(res.iterations);
    if (!std::isfinite(new_rel) || new_rel > rel) {
      // The correction made things worse: undo it and stop.
      for (std::size_t i = 0; i < n; ++i) xh[i] -= rnorm * dx[i];
      op.apply(xh.data(), ax.data());
      for (std::size_t i = 0; i < n; ++i) r[i] = hv.b[i] - ax[i];
      new_rel = rel;
    }
    const double old = rel;
    rel = new_rel;
    if (in.status == FdfdStatus::stopped) {
      res.status = FdfdStatus::stopped;
      why = "was stopped";
      break;
    }
    if (rel <= o.tolerance) continue;  // converged (checked at the top)
    if (!(rel < 0.9 * old)) {
      if (method != FdfdMethod::bicgstab) {
        switched = std::string("the inner ") + name_of(method) +
                   " solve stalled in working precision (" +
                   (in.message.empty() ? std::string(fdfd_name(in.status)) : in.message) +
                   "); continued with BiCGSTAB";
        method = FdfdMethod::bicgstab;
        continue;
      }
      res.status = FdfdStatus::breakdown;
      why = "stagnated (an outer step gained less than 10%; inner " + std::string(name_of(method)) +
            ": " + (in.message.empty() ? std::string(fdfd_name(in.status)) : in.message) + ")";
      break;
    }
    if (kp.progress && !kp.progress(res.iterations, rel)) {
      res.status = FdfdStatus::stopped;
      why = "was stopped";
      break;
    }
  }
  res.relative_residual = rel;
  if (!switched.empty()) res.message = "iterative refinement: " + switched;
  if (res.status != FdfdStatus::converged)
    res.message = (switched.empty() ? std::string() : res.message + "; ") +
                  "iterative refinement (" + std::string(name_of(method)) + ", " +
                  std::to_string(res.refinements) + " outer steps, " +
                  std::to_string(res.iterations) + " iterations) " + why +
                  "; returning the last iterate, true relative residual " + detail::fmt(rel) +
                  " (tolerance " + detail::fmt(o.tolerance) + ")";
  return res;
}

// `o.storage` is resolved (cas or cis) on entry; with refinement on, `o.refinement` is `on`.
BackendResult solve_cpu(const FdfdOperator& op, const FdfdSolverOptions& o,
                        const HostVectors& hv, const KrylovParams& kp);
BackendResult solve_cuda(const FdfdOperator& op, const FdfdSolverOptions& o,
                         const HostVectors& hv, const KrylovParams& kp);
bool cuda_usable(std::string* why);

// One CAS coefficient array on the host (OpenMP): stage 0 = H (h_ab, h_ac), 1 = E (e_ab, e_ac);
// which = 0 for the first, 1 for the second of the pair; out has N entries.
// Instantiated for float and double in fdfd_cpu.cpp (compiled with OpenMP, unlike the .cu).
template <class T>
void cas_coefficients(const FdfdOperator& op, int stage, int a, int which, Cx<T>* out);
// Host conversion of a 3N double vector (OpenMP).
template <class T>
void convert_vector(const std::vector<cdouble>& in, Cx<T>* out);
template <class T>
void convert_back(const Cx<T>* in, std::int64_t n, cdouble* out);

// Nominal bytes of one product with A (every array touched once per kernel).
// With grad-div, the two-stage product also writes phi (N) in the H stage and reads it in the
// E stage; the fused product recomputes it (no extra bytes; 1-D profiles not counted).
inline double matvec_bytes(FdfdStorage s, FdfdMatvec m, double n_cells, double elem,
                           bool grad_div = false) {
  const double idx = 2.0;  // uint16 index
  if (grad_div && m == FdfdMatvec::two_stage)
    return matvec_bytes(s, m, n_cells, elem) + 2.0 * n_cells * elem;
  if (m == FdfdMatvec::fused)
    return s == FdfdStorage::cas ? n_cells * (3 + 12 + 3) * elem
                                 : n_cells * ((3 + 3) * elem + 6 * idx);
  // H stage: read E (3N), coefficients, write t (3N); E stage: read E, t, coefficients, write y.
  return s == FdfdStorage::cas ? n_cells * ((3 + 6 + 3) + (3 + 3 + 6 + 3)) * elem
                               : n_cells * ((3 + 3) * elem + 3 * idx + (3 + 3 + 3) * elem + 3 * idx);
}

}  // namespace fdfd
}  // namespace vem
