// Memory layout shared by every field, coefficient and index array of an engine (CPU and CUDA):
// one padded box per array, sample (i,j,k) at  origin + i + j*sy + k*sz.
//  - x is fastest; the x pitch is a multiple of 32 elements and sample i = 0 of every row sits at
//    a 32-byte boundary (kXOffset = 8 floats), so warps read whole sectors.
//  - one ghost layer on every side (i, j, k = -1 and = N) holds the H samples just outside the
//    domain that PMC, periodic (and, for a subdomain, halo) faces need, and the clamped material
//    of the boundary node planes. Index N along an axis is a real node plane for components that
//    have N+1 samples there (see yee_grid.h).
#pragma once

#include <array>
#include <cstdint>

namespace vem {

struct FieldLayout {
  static constexpr int kXOffset = 8;
  int nx = 0, ny = 0, nz = 0;
  std::int64_t pitch = 0;   // elements per x row
  std::int64_t sy = 0;      // = pitch
  std::int64_t sz = 0;      // = pitch * (ny + 2)
  std::int64_t origin = 0;  // offset of sample (0,0,0)
  std::int64_t size = 0;    // elements per array

  static FieldLayout for_grid(int nx, int ny, int nz) {
    FieldLayout l;
    l.nx = nx; l.ny = ny; l.nz = nz;
    l.pitch = ((kXOffset + nx + 1 + 31) / 32) * 32;
    l.sy = l.pitch;
    l.sz = l.pitch * (ny + 2);
    l.origin = kXOffset + l.sy + l.sz;
    l.size = l.sz * (nz + 2);
    return l;
  }
  std::int64_t at(int i, int j, int k) const { return origin + i + j * sy + k * sz; }
  // The sample (i, j, k) at offset o: at()'s inverse (floor division: ghost planes give -1).
  std::array<int, 3> sample(std::int64_t o) const {
    const std::int64_t rel = o - origin;
    const std::int64_t k = (rel + sz) / sz - 1, rem = rel - k * sz;
    const std::int64_t j = (rem + sy) / sy - 1;
    return {int(rem - j * sy), int(j), int(k)};
  }
};

}  // namespace vem
