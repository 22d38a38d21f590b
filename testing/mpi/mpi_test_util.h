// Helpers shared by the distributed-FDTD test programs (testing/mpi): the world communicator's
// size and rank, and the count of float samples whose bits differ (a size mismatch counts as more
// than any element count; +0 and -0 are the same sample).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace vem_mpi_test {

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline std::size_t bit_mismatches(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size()) + 1;
  std::size_t bad = 0;
  for (std::size_t q = 0; q < a.size(); ++q)
    if (std::memcmp(&a[q], &b[q], 4) != 0 && !(a[q] == 0 && b[q] == 0)) ++bad;
  return bad;
}

}  // namespace vem_mpi_test
