// Voxelized shapes (voxel_shapes.h).
#include "vem/voxel_shapes.h"

#include "vem/error.h"

namespace vem {

std::int64_t paint_sphere(const YeeGrid& g, const std::array<double, 3>& centre, double radius,
                          std::uint16_t label, std::vector<std::uint16_t>& cells) {
  g.validate();
  if (!(radius > 0)) fail("paint_sphere: radius ", radius, " m must be > 0");
  if (std::int64_t(cells.size()) != g.cell_count()) cells.resize(std::size_t(g.cell_count()), 0);
  std::int64_t count = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double x = g.origin[0] + (i + 0.5) * g.dx - centre[0];
        const double y = g.origin[1] + (j + 0.5) * g.dy - centre[1];
        const double z = g.origin[2] + (k + 0.5) * g.dz - centre[2];
        if (x * x + y * y + z * z < radius * radius) {
          cells[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = label;
          ++count;
        }
      }
  return count;
}

}  // namespace vem
