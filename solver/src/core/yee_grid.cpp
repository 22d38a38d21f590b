#include "vem/core/yee_grid.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

const char* component_name(Component c) {
  static const char* names[] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};
  return names[static_cast<int>(c)];
}

Component component_from_name(const std::string& name) {
  for (int c = 0; c < 6; ++c)
    if (name == component_name(static_cast<Component>(c))) return static_cast<Component>(c);
  fail("unknown field component '", name, "' (expected Ex, Ey, Ez, Hx, Hy or Hz)");
}

std::array<double, 3> YeeGrid::position(Component c, int i, int j, int k) const {
  // Offsets in cells per component, from the table in yee_grid.h.
  static const double off[6][3] = {{0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5},
                                   {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}};
  const double* o = off[static_cast<int>(c)];
  return {origin[0] + (i + o[0]) * dx, origin[1] + (j + o[1]) * dy, origin[2] + (k + o[2]) * dz};
}

void YeeGrid::validate() const {
  const int ns[3] = {nx, ny, nz};
  const double ds[3] = {dx, dy, dz};
  const char* axis = "xyz";
  for (int a = 0; a < 3; ++a) {
    if (ns[a] <= 0)
      fail("grid size n", axis[a], " = ", ns[a], " must be a positive number of cells");
    if (!std::isfinite(ds[a]) || ds[a] <= 0)
      fail("grid spacing d", axis[a], " = ", ds[a], " m must be finite and positive");
  }
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(origin[a])) fail("grid origin component ", axis[a], " is not finite");
  // No size limit here: the FDTD engines index the padded layout with 64-bit offsets. Where an
  // algorithm indexes with 32 bits it checks its own limit (FdfdProblem::validate; the CUDA
  // engine's high-order kernels).
}

double YeeGrid::courant_limit_dt() const {
  return 1.0 / (kC0 * std::sqrt(1.0 / (dx * dx) + 1.0 / (dy * dy) + 1.0 / (dz * dz)));
}

}  // namespace vem
