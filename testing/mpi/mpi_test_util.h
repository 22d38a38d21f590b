// Helpers shared by the distributed-FDTD test programs (testing/mpi): the world communicator's
// size and rank, and the count of float samples whose bits differ (a size mismatch counts as more
// than any element count; +0 and -0 are the same sample).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
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

// A decomposition to test: `ranks` pieces per axis (0 0 0: automatic), or the cell counts of
// uneven pieces per axis in `cells`.
struct Case {
  std::string name;
  std::array<int, 3> ranks{0, 0, 0};
  std::array<std::vector<int>, 3> cells;
};

inline Case uneven(const std::string& name, std::vector<int> xs, std::vector<int> ys, std::vector<int> zs) {
  Case c;
  c.name = name;
  c.cells = {std::move(xs), std::move(ys), std::move(zs)};
  return c;
}

}  // namespace vem_mpi_test
