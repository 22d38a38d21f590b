// A voxel model placed in a computational grid (what the FDTD and FDFD voxel domains share):
// on every face, `pad` cells of vacuum next to the voxels, then `pml` absorbing cells outside them.
// The output grid is the voxels plus the padding; the absorbing cells are not output.
//
// Indices (x fastest, yee_grid.h): voxel (i,j,k) is computational cell (i,j,k) + lo_total;
// output cell (I,J,K) is computational cell (I,J,K) + (pml[0], pml[2], pml[4]).
// Faces are numbered as in boundary.h: 0 x-low, 1 x-high, 2 y-low, 3 y-high, 4 z-low, 5 z-high.
#pragma once

#include <array>
#include <cstdint>

#include "vem/core/yee_grid.h"

namespace vem {

struct VoxelPlacement {
  std::array<int, 3> voxels{};          // the model's voxels per axis
  std::array<double, 3> spacing{};      // m
  std::array<double, 3> voxel_origin{}; // world corner of voxel (0,0,0), m
  std::array<int, 6> pad{};             // vacuum cells per face
  std::array<int, 6> pml{};             // absorbing cells per face, outside the padding
  std::array<int, 3> n_total{};         // computational grid, cells
  std::array<int, 3> n_out{};           // output grid = voxels + padding
  std::array<int, 3> lo_total{};        // computational index of voxel (0,0,0)
  std::array<double, 3> origin_total{}; // world corner of the computational grid, m
  std::array<double, 3> origin_out{};   // world corner of the output grid, m

  std::int64_t voxel_count() const { return std::int64_t(voxels[0]) * voxels[1] * voxels[2]; }
  std::int64_t out_cells() const { return std::int64_t(n_out[0]) * n_out[1] * n_out[2]; }
  std::int64_t total_cells() const { return std::int64_t(n_total[0]) * n_total[1] * n_total[2]; }
  YeeGrid grid() const;  // the computational grid
  // Computational cell index of voxel v (v = i + nx (j + ny k) over the voxels).
  std::int64_t total_index(std::int64_t v) const;
  // Computational cell index of output cell (I,J,K).
  std::int64_t out_to_total(int I, int J, int K) const {
    return (I + pml[0]) + std::int64_t(n_total[0]) * ((J + pml[2]) + std::int64_t(n_total[1]) * (K + pml[4]));
  }
};

// Places `voxels` cells of `spacing` (m) with voxel (0,0,0) at `voxel_origin`. Throws vem::Error
// naming the axis and value for fewer than one voxel, a spacing that is not finite and > 0, a
// non-finite origin, or more than 2^30 cells along an axis.
VoxelPlacement place_voxels(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                            const std::array<double, 3>& voxel_origin, const std::array<int, 6>& pad,
                            const std::array<int, 6>& pml);

}  // namespace vem
