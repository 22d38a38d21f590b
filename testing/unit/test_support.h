// Helpers shared by the unit tests: running a test on each backend, skipping CUDA visibly when no
// device is usable (CI has no GPU).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"

namespace vem_test {

// Use in a test body: VEM_REQUIRE_BACKEND(backend); skips with the reason when CUDA is absent.
#define VEM_REQUIRE_BACKEND(b)                                                         \
  do {                                                                                 \
    std::string vem_why_;                                                              \
    if ((b) == vem::Backend::cuda && !vem::cuda_available(&vem_why_))                  \
      GTEST_SKIP() << "CUDA backend not tested here: " << vem_why_;                    \
  } while (0)

// VEM_TEST_SMALL_GRIDS=1 (set by `scripts/device_check.sh ... sanitize`): the heavy CUDA tests
// run smaller grids / fewer steps / fewer iterations, through the same kernels and code paths, so
// that compute-sanitizer (which instruments every access of every kernel) finishes. Normal runs
// (unset, empty or 0) are unchanged. Use: vem_test::small_or(normal, small).
inline bool small_grids() {
  const char* v = std::getenv("VEM_TEST_SMALL_GRIDS");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}
template <class T>
T small_or(T normal, T small) {
  return small_grids() ? small : normal;
}

inline std::string backend_param_name(const testing::TestParamInfo<vem::Backend>& info) {
  return vem::backend_name(info.param);
}

// Relative L2 difference ||a - b|| / ||b|| of two complex fields of the same layout.
inline double rel_diff(const std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

#define VEM_INSTANTIATE_BACKENDS(Suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                            \
                           testing::Values(vem::Backend::cpu, vem::Backend::cuda),     \
                           vem_test::backend_param_name)

}  // namespace vem_test
