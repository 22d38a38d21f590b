// Interface between solve_fdfd() and the backends (fdfd_cpu.cpp, fdfd_cuda.cu).
#pragma once

#include <string>
#include <vector>

#include "fdfd/fdfd_krylov.h"
#include "fdfd/fdfd_stencil.h"
#include "vem/fdfd_operator.h"
#include "vem/fdfd_solver.h"

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
};

// `o.storage` is resolved (cas or cis) on entry.
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

// Nominal bytes of one product with A (every array touched once per kernel).
inline double matvec_bytes(FdfdStorage s, FdfdMatvec m, double n_cells, double elem) {
  const double idx = 2.0;  // uint16 index
  if (m == FdfdMatvec::fused)
    return s == FdfdStorage::cas ? n_cells * (3 + 12 + 3) * elem
                                 : n_cells * ((3 + 3) * elem + 6 * idx);
  // H stage: read E (3N), coefficients, write t (3N); E stage: read E, t, coefficients, write y.
  return s == FdfdStorage::cas ? n_cells * ((3 + 6 + 3) + (3 + 3 + 6 + 3)) * elem
                               : n_cells * ((3 + 3) * elem + 3 * idx + (3 + 3 + 3) * elem + 3 * idx);
}

}  // namespace fdfd
}  // namespace vem
