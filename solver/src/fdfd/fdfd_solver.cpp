// solve_fdfd(): option resolution, host vectors, backend dispatch, final true residual.
#include "vem/fdfd/fdfd_solver.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "fdfd/fdfd_backend.h"
#include "vem/core/error.h"

namespace vem {

bool fdfd_cuda_available(std::string* why) { return fdfd::cuda_usable(why); }

FdfdSolution solve_fdfd(const FdfdProblem& problem, const FdfdSolverOptions& options) {
  options.validate();
  const FdfdOperator op(problem);
  return solve_fdfd(op, options);
}

FdfdSolution solve_fdfd(const FdfdOperator& op, const FdfdSolverOptions& options) {
  options.validate();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  FdfdSolution sol;
  std::string notes;
  auto note = [&](const std::string& s) {
    if (!notes.empty()) notes += "; ";
    notes += s;
  };

  FdfdSolverOptions o = options;
  // Backend.
  if (o.backend == Backend::automatic) {
    std::string why;
    if (fdfd::cuda_usable(&why)) {
      o.backend = Backend::cuda;
    } else {
      o.backend = Backend::cpu;
      note("no usable CUDA device (" + why + "); solved on the CPU");
    }
  } else if (o.backend == Backend::cuda) {
    std::string why;
    if (!fdfd::cuda_usable(&why)) fail("FDFD: the CUDA backend was requested but ", why);
  }
  // Method.
  const bool time_domain = o.preconditioner == FdfdPreconditioner::time_domain;
  if (o.method == FdfdMethod::automatic)
    o.method = time_domain ? FdfdMethod::gcr
               : o.precision == FdfdPrecision::complex128 ? FdfdMethod::cocg : FdfdMethod::bicgstab;
  // Iterative refinement.
  if (o.refinement == FdfdRefinement::automatic)
    o.refinement = o.precision == FdfdPrecision::complex64 ? FdfdRefinement::on : FdfdRefinement::off;
  // Storage.
  if (o.storage == FdfdStorage::automatic) {
    o.storage = op.cis_available() ? FdfdStorage::cis : FdfdStorage::cas;
  } else if (o.storage == FdfdStorage::cis && !op.cis_available()) {
    fail("FDFD: CIS storage was requested but is unavailable: ", op.cis_unavailable_reason(),
         "; use CAS (coefficient arrays) or automatic");
  }
  if (op.material_in_pml())
    note("non-vacuum material inside the PML: the scattered-field source then lies in the "
         "absorbing layer and results near it are unreliable");

  // Host vectors.
  fdfd::HostVectors hv;
  hv.b = op.rhs();
  if (o.preconditioner == FdfdPreconditioner::jacobi) {
    hv.minv = op.diagonal();
    if (o.regularization == FdfdRegularization::grad_div) {  // diag(A + Q)
      const std::vector<cdouble> dq = op.grad_div_diagonal(o.regularization_scale);
      for (std::size_t i = 0; i < dq.size(); ++i) hv.minv[i] += dq[i];
    }
    for (auto& v : hv.minv) v = 1.0 / v;
  }
  if (o.method == FdfdMethod::cocg || o.method == FdfdMethod::cocr) {
    hv.d = op.symmetrizer();
    hv.wm = hv.d;
    if (!hv.minv.empty())
      for (std::size_t i = 0; i < hv.wm.size(); ++i) hv.wm[i] *= hv.minv[i];
  }

  fdfd::KrylovParams kp;
  kp.tolerance = o.tolerance;
  kp.max_iterations = o.max_iterations;
  kp.max_restarts = o.max_restarts;
  kp.keep_history = o.keep_history;
  kp.progress = o.progress;
  kp.progress_interval = o.progress_interval;
  // A scalar counts as zero when it falls below `breakdown_eps` relative to the magnitudes of
  // the terms of its inner product: 10 eps in double. In single precision the ratio reaches the
  // rounding-noise floor (~eps) in long BiCGSTAB runs that still converge (restarting there
  // throws the Krylov space away and stalls), so only near-exact zeros (1e-12) count.
  kp.breakdown_eps = o.precision == FdfdPrecision::complex128
                         ? 10.0 * std::numeric_limits<double>::epsilon()
                         : 1e-12;
  const double host_setup = std::chrono::duration<double>(Clock::now() - t0).count();

  fdfd::BackendResult br = o.backend == Backend::cuda ? fdfd::solve_cuda(op, o, hv, kp)
                                                      : fdfd::solve_cpu(op, o, hv, kp);

  // Grad-div: the backend returned y of (A + Q) y = b; x = y + Q y (refinement did it per step).
  if (o.refinement != FdfdRefinement::on) fdfd::regularized_to_solution(op, o, br.x);

  // True residual in double on the host.
  {
    std::vector<cdouble> ax(br.x.size());
    op.apply(br.x.data(), ax.data());
    double rr = 0, bb = 0;
    for (std::size_t i = 0; i < ax.size(); ++i) {
      rr += std::norm(hv.b[i] - ax[i]);
      bb += std::norm(hv.b[i]);
    }
    sol.stats.true_relative_residual = bb > 0 ? std::sqrt(rr / bb) : 0.0;
  }

  FdfdSolveStats& st = sol.stats;
  st.status = br.krylov.status;
  st.iterations = br.krylov.iterations;
  st.matvecs = br.krylov.matvecs;
  st.restarts = br.krylov.restarts;
  st.relative_residual = br.krylov.relative_residual;
  st.history = std::move(br.krylov.history);
  st.refined = o.refinement == FdfdRefinement::on;
  st.refinements = br.krylov.refinements;
  st.true_history = std::move(br.krylov.true_history);
  st.true_history_iterations = std::move(br.krylov.true_history_iterations);
  st.message = br.krylov.message;
  st.backend = br.backend;
  st.precision = o.precision;
  st.storage = o.storage;
  st.tables = br.tables;
  st.method = o.method;
  st.preconditioner = o.preconditioner;
  st.blas = o.blas;
  st.matvec = o.matvec;
  st.regularization = o.regularization;
  st.regularization_scale =
      o.regularization == FdfdRegularization::grad_div ? o.regularization_scale : 0.0;
  if (o.storage == FdfdStorage::cis) {
    st.h_table_entries = op.h_table().size();
    st.e_table_entries = op.e_table().size();
  }
  st.setup_seconds = host_setup + br.setup_seconds;
  st.solve_seconds = br.solve_seconds;
  st.bytes_per_iteration = br.bytes_per_iteration;
  st.bytes_per_matvec = br.bytes_per_matvec;
  st.device_bytes = br.device_bytes;
  st.preconditioner_steps = br.td_steps;
  st.preconditioner_steps_per_period = br.td_steps_per_period;
  st.preconditioner_dt = br.td_dt;
  st.preconditioner_seconds = br.td_seconds;
  st.preconditioner_backend = br.td_backend;
  st.preconditioner_periods = br.td_periods;
  st.preconditioner_on_device = br.td_on_device;
  st.preconditioner_step_seconds = br.td_step_seconds;
  st.preconditioner_prepare_seconds = br.td_prepare_seconds;
  sol.e_scat = std::move(br.x);
  if (st.status != FdfdStatus::converged)
    note(st.message);
  else if (st.refined && !st.message.empty())
    note(st.message);  // e.g. the inner method was switched
  sol.warning = notes;
  return sol;
}

FdfdFields fdfd_fields(const FdfdOperator& op, const std::vector<cdouble>& e_scat) {
  FdfdFields f;
  f.e_scat = e_scat;
  f.h_scat = op.scattered_h(e_scat);
  f.e_inc = op.incident_e();
  f.h_inc = op.incident_h();
  f.e_total.resize(e_scat.size());
  f.h_total.resize(e_scat.size());
  for (std::size_t i = 0; i < e_scat.size(); ++i) {
    f.e_total[i] = f.e_inc[i] + f.e_scat[i];
    f.h_total[i] = f.h_inc[i] + f.h_scat[i];
  }
  return f;
}

}  // namespace vem
