// Problems shared by the FDFD unit tests.
#pragma once

#include <cstdint>

#include "vem/fdfd_problem.h"

namespace vem_test {

// The paper's dielectric sphere (a = 7.2 cm) on a coarse 2 cm grid: 16^3 cells plus a 6-cell
// SC-PML (28^3), 1 GHz, eps_r 4 with a lossy cap (eps_r 2, 0.05 S/m) for x > 3 cm, an oblique
// incident wave (theta 0.3, phi 0.2 rad). average_at_edges: the E samples average the
// permittivity of the cells around their edge (else staircase).
inline vem::FdfdProblem coarse_sphere_problem(bool average_at_edges) {
  using namespace vem;
  const double h = 0.02;
  const int pml = 6, n = 16 + 2 * pml;
  FdfdProblem p;
  p.grid = {n, n, n, h, h, h};
  p.frequency = 1e9;
  p.pml = FdfdPml::uniform(pml);
  p.materials = {Material::vacuum(), Material::isotropic("dielectric", 4.0),
                 Material::isotropic("lossy", 2.0, 0.05)};
  p.material_index.assign(p.grid.cell_count(), 0);
  p.average_at_edges = average_at_edges;
  const double c = 0.5 * n * h;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = (i + 0.5) * h - c, y = (j + 0.5) * h - c, z = (k + 0.5) * h - c;
        if (x * x + y * y + z * z < 0.072 * 0.072)
          p.material_index[i + n * (j + std::int64_t(n) * k)] = x > 0.03 ? 2 : 1;
      }
  p.incident.theta = 0.3;
  p.incident.phi = 0.2;
  return p;
}

}  // namespace vem_test
