// A voxel model placed in a computational grid (voxel_placement.h).
#include "vem/core/voxel_placement.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

VoxelPlacement place_voxels(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                            const std::array<double, 3>& voxel_origin, const std::array<int, 6>& pad,
                            const std::array<int, 6>& pml) {
  VoxelPlacement p;
  p.voxels = voxels;
  p.spacing = spacing;
  p.voxel_origin = voxel_origin;
  p.pad = pad;
  p.pml = pml;
  for (int a = 0; a < 3; ++a) {
    if (voxels[a] < 1)
      fail("the voxel model has ", voxels[a], " voxels along ", "xyz"[a], "; it needs at least one on each axis");
    if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
      fail("the voxel spacing along ", "xyz"[a], " is ", spacing[a], " m; it must be finite and > 0 (metres)");
    if (!std::isfinite(voxel_origin[a]))
      fail("the voxel origin along ", "xyz"[a], " is ", voxel_origin[a], " m; it must be finite");
    const std::int64_t out = std::int64_t(voxels[a]) + pad[2 * a] + pad[2 * a + 1];
    const std::int64_t total = out + pml[2 * a] + pml[2 * a + 1];
    if (total > (1 << 30))
      fail("the grid would have ", total, " cells along ", "xyz"[a], " (", voxels[a],
           " voxels + padding + absorbing layers); limit 2^30");
    p.n_out[a] = int(out);
    p.n_total[a] = int(total);
    p.lo_total[a] = pad[2 * a] + pml[2 * a];
    p.origin_out[a] = voxel_origin[a] - pad[2 * a] * spacing[a];
    p.origin_total[a] = p.origin_out[a] - pml[2 * a] * spacing[a];
  }
  return p;
}

YeeGrid VoxelPlacement::grid() const {
  YeeGrid g;
  g.nx = n_total[0];
  g.ny = n_total[1];
  g.nz = n_total[2];
  g.dx = spacing[0];
  g.dy = spacing[1];
  g.dz = spacing[2];
  g.origin = origin_total;
  return g;
}

std::int64_t VoxelPlacement::total_index(std::int64_t v) const {
  const std::int64_t i = v % voxels[0];
  const std::int64_t j = (v / voxels[0]) % voxels[1];
  const std::int64_t k = v / (std::int64_t(voxels[0]) * voxels[1]);
  return (i + lo_total[0]) + n_total[0] * ((j + lo_total[1]) + std::int64_t(n_total[1]) * (k + lo_total[2]));
}

}  // namespace vem
