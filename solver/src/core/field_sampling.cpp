#include "vem/core/field_sampling.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

std::array<int, 3> nearest_sample(const YeeGrid& grid, Component c, const std::array<double, 3>& p) {
  // Position of sample (0,0,0) of c, then round to the nearest sample.
  const std::array<double, 3> p0 = grid.position(c, 0, 0, 0);
  const std::array<double, 3> d = grid.d();
  std::array<int, 3> idx{};
  for (int a = 0; a < 3; ++a) idx[a] = int(std::lround((p[a] - p0[a]) / d[a]));
  return idx;
}

void cell_centred(const YeeGrid& grid, const std::vector<float>& f, Component c,
                  const std::array<int, 3>& first, const std::array<int, 3>& count, float* dst,
                  int stride, int offset) {
  const std::int64_t NX = grid.nx + 1, NY = grid.ny + 1;
  if (std::int64_t(f.size()) != NX * NY * (grid.nz + 1))
    fail("cell_centred: field has ", f.size(), " values, expected ", NX * NY * (grid.nz + 1));
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  for (int a = 0; a < 3; ++a)
    if (first[a] < 0 || count[a] < 0 || first[a] + count[a] > n[a])
      fail("cell_centred: box along ", "xyz"[a], " [", first[a], ", ", first[a] + count[a],
           ") is outside the grid of ", n[a], " cells");
  const int a = axis_of(c);
  const int b = (a + 1) % 3, d = (a + 2) % 3;
  const std::int64_t s[3] = {1, NX, NX * NY};
  const bool electric = is_electric(c);
#pragma omp parallel for
  for (int K = 0; K < count[2]; ++K)
    for (int J = 0; J < count[1]; ++J) {
      std::int64_t o = first[0] + NX * ((first[1] + J) + NY * std::int64_t(first[2] + K));
      float* out = dst + std::int64_t(stride) * (std::int64_t(count[0]) * (J + std::int64_t(count[1]) * K)) + offset;
      for (int I = 0; I < count[0]; ++I, ++o) {
        out[std::int64_t(stride) * I] =
            electric ? 0.25f * (f[o] + f[o + s[b]] + f[o + s[d]] + f[o + s[b] + s[d]])
                     : 0.5f * (f[o] + f[o + s[a]]);
      }
    }
}

}  // namespace vem
