// Solving the scattered-field FDFD system A x = b (fdfd_operator.h) with a matrix-free Krylov
// method, on the CPU (OpenMP; the reference and the fallback) or on a CUDA GPU (cuBLAS for the
// BLAS-1 operations of the paper's baseline, or fused kernels).
//
// Methods
//  - bicgstab: van der Vorst's BiCGSTAB as in the paper (two products with A per iteration),
//    optionally with a right Jacobi (diagonal) preconditioner.
//  - cocg: conjugate orthogonal CG (van der Vorst & Melissen 1990) on the complex-symmetric
//    form diag(W eps) A (SC-PML symmetrization), one product with A per iteration; with jacobi,
//    the diagonal of diag(W eps) A preconditions it. Needs no extra operator storage: the
//    symmetrizer only weights the (unconjugated) inner products.
//  - cocr: conjugate orthogonal conjugate residual (Sogabe & Zhang 2007) on the same symmetrized
//    form, one product with A per iteration; its residual decreases almost monotonically where
//    COCG's climbs by orders of magnitude before converging, which is what single precision
//    (complex64) would need (in practice complex64 still loses it: see below). No preconditioner.
//  - automatic: cocg in complex128, bicgstab in complex64.
// Measured (CPU, c128, dielectric sphere of the paper, iterations to 1e-6; BiCGSTAB does two
// products per iteration): 28^3 cells: BiCGSTAB 557 (1114 products), BiCGSTAB + Jacobi 1308,
// COCG 358, COCG + Jacobi 1056, COCR 353; 48^3 cells: BiCGSTAB 1764 (3528), + Jacobi 3901,
// COCG 828, + Jacobi 2317, COCR 792. COCG needs 3-4x fewer products and ~13 instead of ~18
// vector passes per product; Jacobi scaling hurts (as the paper found). In complex64, COCG and
// COCR lose conjugacy and stall on the 48^3 sphere; BiCGSTAB converges, but the true residual
// stops near 1e-4 (rounding of the curl-curl terms, ~10^3 times larger than b): ask complex64
// for tolerances >= ~1e-4.
// Both stop when the recursively updated residual satisfies ||b - A x||_2 <= tol ||b||_2 (the
// norm of the unsymmetrized system, so every method is held to the same criterion). At the end
// the true residual is recomputed on the host in double precision.
//
// Breakdown (rho, (r0, v), omega or (p, A p) vanishing relative to the vectors involved) is
// detected and reported; the method restarts from the current iterate up to `max_restarts`
// times. Without convergence the best iterate seen is returned, with a warning that gives the
// residual it reached.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_problem.h"
#include "vem/fdfd/fdfd_time_domain.h"
#include "vem/fdtd/fdtd_engine.h"  // Backend

namespace vem {

enum class FdfdPrecision { complex128, complex64 };
enum class FdfdStorage { automatic, cas, cis };
// Where the CIS tables live on the GPU: constant memory while they fit (kFdfdConstantBytes),
// global memory beyond. The CPU ignores it.
enum class FdfdTablePlacement { automatic, constant_memory, global_memory };
// gcr: flexible GCR (Eisenstat, Elman & Schultz 1983; flexible as in Vuik 1995), the outer
// method of the time-domain preconditioner (below); it runs on the host in double precision
// (products with FdfdOperator::apply, OpenMP) and needs no symmetry. automatic picks it when the
// preconditioner is time_domain.
enum class FdfdMethod { automatic, bicgstab, cocg, cocr, gcr };
// jacobi: diagonal scaling (BiCGSTAB, COCG).
// time_domain: M v = the FDTD engine's steady state driven by a current built from v
// (fdfd_time_domain.h), an approximate inverse of A whose error is the PML's discrete mismatch,
// the steady-state tolerance and float32; each outer GCR step costs one FDTD run to steady
// state on the chosen backend (CUDA: the FDTD engine's GPU kernels) and one host product.
// complex128 only; no refinement or regularization.
enum class FdfdPreconditioner { none, jacobi, time_domain };
// GPU BLAS-1 implementation: cublas = one cuBLAS call per vector operation (the paper);
// fused = our kernels fusing the vector updates and reductions of one solver step.
enum class FdfdBlas { cublas, fused };
// GPU matrix-vector product: two_stage = the paper's H-stage kernel writing t (3N), then the
// E-stage kernel; fused = one kernel that recomputes the four t values each E row needs
// (no t array: less memory traffic, more arithmetic; neighbours come from the caches).
enum class FdfdMatvec { two_stage, fused };
// Mixed-precision iterative refinement (complex64 inner solves, complex128 outer loop):
//     x = 0;  repeat:  r = b - A x  (double, on the host: FdfdOperator::apply);
//                      stop when ||r|| <= tol ||b||;
//                      solve A d = r / ||r||  in the working precision to `inner_tolerance`;
//                      x += ||r|| d  (x accumulated in double).
// Each outer step divides the true residual by roughly the accuracy the inner solve really
// attained (~1e-2..1e-4 in complex64), so complex64 reaches 1e-6 and beyond in a few outer steps
// at little more than the single-precision cost. automatic: on in complex64, off in complex128.
// The outer loop stops early when an outer step gains less than 10% (stagnation, status
// breakdown, with a message naming the residual reached).
// Inner method: BiCGSTAB (what automatic picks in complex64). COCG/COCR lose conjugacy in single
// precision and may not reach even the inner tolerance: with refinement they get at most
// max(500, max_iterations / 5) iterations per inner solve, and an outer step that gains nothing
// switches the inner method to BiCGSTAB (the warning says so). Measured (CPU, 2 threads, paper sphere at
// 1 cm = 32^3 + 8-cell PML, tol 1e-6): c128 COCG 828 products, true residual 9.5e-7; c64 BiCGSTAB
// alone 4651 products, true residual stuck at 6.9e-4; c64 BiCGSTAB + refinement 2 outer steps,
// 4170 products, true residual 5.1e-7; c64 COCG + refinement: the inner COCG stalls (6000
// iterations, no progress), then BiCGSTAB finishes (5.1e-7 after 10170 products in all). On 24^3
// cells c64 COCG inner solves do converge (unit test).
enum class FdfdRefinement { automatic, off, on };
// Grad-div regularization (Shin & Fan, Opt. Express 21 (2013) 22578; the discrete form and why
// it leaves the solution unchanged are in fdfd_operator.h, "Grad-div regularization"): the
// Krylov method solves (A + Q) y = b with Q = (s / k0^2) G M D diag(eps), then x = y + Q y.
// The residual b - (A + Q) y equals b - A x, so the stopping test is the unregularized one; the
// symmetrized form diag(W eps)(A + Q) stays complex-symmetric (COCG/COCR apply unchanged).
// s = regularization_scale (1: curl curl - grad div = -Laplacian in a uniform medium).
// Measured (CPU, COCG to 1e-6, results/fdfd.md): it does NOT cut iterations in this formulation
// (sphere 52^3: 977 -> 1112 at s = 1, 2631 at s = 4, 10540 at s = 0.1; coarse head 40x40x23:
// 3585 -> 5382), because A = I - curl curl / (k0^2 eps) already has the gradient fields as an
// eigenspace with eigenvalue exactly 1. It makes Jacobi usable (coarse head: Jacobi alone
// stalls, grad-div + Jacobi 6480), still behind plain COCG on the heads. H100, full head:
// COCG 22809 iterations; grad-div and grad-div + Jacobi both hit 30000 (true residual 7e-3 /
// 1e-3), at 0.82 / 0.86 ms per iteration against 0.78. Hence off by default.
// Cost: two-stage product +2 N values per product; fused product: recomputed, no extra bytes.
enum class FdfdRegularization { none, grad_div };

const char* fdfd_name(FdfdPrecision v);
const char* fdfd_name(FdfdStorage v);
const char* fdfd_name(FdfdTablePlacement v);
const char* fdfd_name(FdfdMethod v);
const char* fdfd_name(FdfdPreconditioner v);
const char* fdfd_name(FdfdBlas v);
const char* fdfd_name(FdfdMatvec v);
const char* fdfd_name(FdfdRefinement v);
const char* fdfd_name(FdfdRegularization v);

// Bytes of constant memory the CUDA backend reserves for the CIS tables.
constexpr std::size_t kFdfdConstantBytes = 60 * 1024;

struct FdfdSolverOptions {
  Backend backend = Backend::automatic;
  int device_index = 0;
  FdfdPrecision precision = FdfdPrecision::complex128;
  FdfdStorage storage = FdfdStorage::automatic;   // automatic: CIS when available, else CAS
  FdfdTablePlacement tables = FdfdTablePlacement::automatic;
  FdfdMethod method = FdfdMethod::automatic;
  FdfdPreconditioner preconditioner = FdfdPreconditioner::none;
  FdfdBlas blas = FdfdBlas::cublas;
  FdfdMatvec matvec = FdfdMatvec::two_stage;
  double tolerance = 1e-6;     // relative residual, in (0, 1)
  int max_iterations = 20000;  // >= 1
  int max_restarts = 5;        // after breakdowns (per inner solve with refinement)
  FdfdRefinement refinement = FdfdRefinement::automatic;
  double inner_tolerance = 1e-3;  // refinement: relative tolerance of each inner solve, in (0, 1)
  int max_refinements = 30;       // refinement: outer steps at most (>= 1)
  FdfdRegularization regularization = FdfdRegularization::none;
  double regularization_scale = 1.0;  // s, finite and > 0
  FdfdTimeDomainOptions time_domain;  // preconditioner time_domain (fdfd_time_domain.h)
  bool keep_history = true;
  // Called every `progress_interval` iterations with (iteration, relative residual); returning
  // false stops the solve (status stopped, best iterate returned). With refinement the
  // iteration count is cumulative over the inner solves and the residual is relative to ||b||
  // (inner estimate times the outer true residual); it is also called after each outer step
  // with the true residual.
  std::function<bool(int, double)> progress;
  int progress_interval = 50;

  // Throws vem::Error naming the option as FdfdSolverOptions::member (ParaView property), its
  // value and the limit: tolerance or inner_tolerance outside (0, 1), max_iterations < 1,
  // negative restarts or device index, max_refinements < 1, regularization_scale not finite or
  // <= 0, a method / preconditioner / precision / refinement / regularization combination that
  // does not run, and time_domain (FdfdTimeDomainOptions::validate) with that preconditioner.
  // solve_fdfd calls it.
  void validate() const;
};

// The same as o.validate() (the older spelling).
inline void validate(const FdfdSolverOptions& o) { o.validate(); }

enum class FdfdStatus { converged, max_iterations, breakdown, stopped };
const char* fdfd_name(FdfdStatus v);

struct FdfdSolveStats {
  FdfdStatus status = FdfdStatus::max_iterations;
  int iterations = 0;           // solver iterations (BiCGSTAB: 2 products each)
  int matvecs = 0;              // products with A
  int restarts = 0;             // after breakdowns
  double relative_residual = 1; // recursive estimate at the returned iterate
  double true_relative_residual = 1;  // ||b - A x|| / ||b||, recomputed in double on the host
  std::vector<double> history;  // relative residual after each iteration (index 0: start = 1);
                                // with refinement: the inner estimates scaled to ||b||
  // Iterative refinement (empty / 0 / false without): the true relative residual ||b - A x|| /
  // ||b|| (double, host) before the first and after each outer step, and the cumulative
  // iteration count at which it was taken (true_history_iterations[0] = 0).
  bool refined = false;
  int refinements = 0;          // outer steps taken
  std::vector<double> true_history;
  std::vector<int> true_history_iterations;
  std::string message;          // breakdown / non-convergence / fallback explanation ("" if none)

  // What ran.
  std::string backend;          // "cpu (16 threads)" or "cuda:<device>"
  FdfdPrecision precision = FdfdPrecision::complex128;
  FdfdStorage storage = FdfdStorage::cas;          // resolved (never automatic)
  FdfdTablePlacement tables = FdfdTablePlacement::global_memory;  // resolved, CIS on GPU only
  FdfdMethod method = FdfdMethod::automatic;
  FdfdPreconditioner preconditioner = FdfdPreconditioner::none;
  FdfdBlas blas = FdfdBlas::fused;
  FdfdMatvec matvec = FdfdMatvec::two_stage;
  FdfdRegularization regularization = FdfdRegularization::none;
  double regularization_scale = 0;  // s when grad_div, else 0
  std::size_t h_table_entries = 0, e_table_entries = 0;  // CIS tables
  // Time-domain preconditioner (zero otherwise): FDTD steps over all applications, the FDTD's
  // steps per period and time step, the seconds spent in the applications (part of
  // solve_seconds), and the FDTD engine ("cpu" or "cuda:<device>").
  std::int64_t preconditioner_steps = 0;
  int preconditioner_steps_per_period = 0;
  double preconditioner_dt = 0;
  double preconditioner_seconds = 0;
  double preconditioner_step_seconds = 0;     // of which FDTD stepping (and steady-state checks)
  double preconditioner_prepare_seconds = 0;  // of which source / engine set-up
  std::string preconditioner_backend;
  std::vector<int> preconditioner_periods;  // FDTD periods of each application
  bool preconditioner_on_device = false;    // vectors went GPU -> FDTD -> GPU without host copies

  // Cost.
  double setup_seconds = 0;     // operator -> backend (coefficients, uploads)
  double solve_seconds = 0;     // the iterations alone
  double bytes_per_iteration = 0;  // by our count: every array touched once per kernel/call
  double bytes_per_matvec = 0;
  std::int64_t device_bytes = 0;   // memory the backend allocated for vectors and coefficients
};

// The solution: scattered E at the E samples, 3 N entries ([x | y | z] blocks of N, sample
// (i,j,k) at i + nx (j + ny k); positions in yee_grid.h), V/m, e^{jwt} phasors.
struct FdfdSolution {
  std::vector<cdouble> e_scat;
  FdfdSolveStats stats;
  std::string warning;  // non-empty when the caller should be told something (not converged, ...)
};

// Builds the operator and solves. Throws vem::Error for bad input or an unusable backend.
FdfdSolution solve_fdfd(const FdfdProblem& problem, const FdfdSolverOptions& options = {});
// Same with an operator built beforehand (reuse across solver settings).
FdfdSolution solve_fdfd(const FdfdOperator& op, const FdfdSolverOptions& options = {});

// Derived fields (3 N entries each, layouts as above; H at H sample positions).
struct FdfdFields {
  std::vector<cdouble> e_scat, h_scat, e_total, h_total, e_inc, h_inc;
};
FdfdFields fdfd_fields(const FdfdOperator& op, const std::vector<cdouble>& e_scat);

// True when the FDFD CUDA backend can run (built with CUDA and a device is usable).
bool fdfd_cuda_available(std::string* why = nullptr);

}  // namespace vem
