// Mapping between world positions / cell centres and the staggered Yee samples (yee_grid.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/yee_grid.h"

namespace vem {

// Index (i,j,k) of the sample of component c nearest to the world position p (m). The result may
// lie outside the grid; callers check it against their ranges.
std::array<int, 3> nearest_sample(const YeeGrid& grid, Component c, const std::array<double, 3>& p);

// Component c interpolated to the centres of the cells of a box of the grid: cells
// [first[a], first[a] + count[a]) along each axis. `compact` is FdtdEngine::field(c)'s layout
// ((nx+1)(ny+1)(nz+1), x fastest). E_a (on edges along a) is averaged over the 4 edges of the
// cell parallel to a; H_a (on faces normal to a) over the 2 faces normal to a. The result goes to
// dst[stride * cell + offset], cells numbered x fastest in the box.
void cell_centred(const YeeGrid& grid, const std::vector<float>& compact, Component c,
                  const std::array<int, 3>& first, const std::array<int, 3>& count, float* dst,
                  int stride = 1, int offset = 0);

}  // namespace vem
