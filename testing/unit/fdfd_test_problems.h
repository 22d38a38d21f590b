// Problems shared by the FDFD unit tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_problem.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/models/mie.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/models/voxel_shapes.h"

namespace vem_test {

// The paper's dielectric sphere (a = 7.2 cm) on a coarse 2 cm grid: 16^3 cells plus a 6-cell
// SC-PML (28^3), 1 GHz, eps_r 4 with a lossy cap (eps_r 2, 0.05 S/m) for x > 3 cm, an oblique
// incident wave (theta 0.3, phi 0.2 rad). average_at_edges: the E samples average the
// permittivity of the cells around their edge (else staircase). inner < 16 shrinks the cube and
// the sphere together (radius and cap scaled by inner / 16, same cells; the compute-sanitizer runs).
inline vem::FdfdProblem coarse_sphere_problem(bool average_at_edges, int inner = 16, int pml = 6) {
  using namespace vem;
  const double h = 0.02, scale = inner / 16.0;
  const double radius = 0.072 * scale, cap = 0.03 * scale;
  const int n = inner + 2 * pml;
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
        if (x * x + y * y + z * z < radius * radius)
          p.material_index[i + n * (j + std::int64_t(n) * k)] = x > cap ? 2 : 1;
      }
  p.incident.theta = 0.3;
  p.incident.phi = 0.2;
  return p;
}

// A sphere of radius a (m) and eps_r / sigma (S/m) centred in a cube of side `inner` (m) of
// cubic cells h, plus a `pml`-cell SC-PML on every face; edge-averaged permittivity (the paper's
// sphere: a = 7.2 cm, eps_r 4, in a 32 cm cube at 1 GHz). Used by the FDFD tests and bench_fdfd.
inline vem::FdfdProblem dielectric_sphere_problem(double h, int pml, double inner, double a, double eps,
                                                  double sigma, double f = 1e9) {
  using namespace vem;
  const int n = int(std::lround(inner / h)) + 2 * pml;
  FdfdProblem p;
  p.grid = {n, n, n, h, h, h};
  p.frequency = f;
  p.pml = FdfdPml::uniform(pml);
  p.materials = {Material::vacuum(), Material::isotropic("sphere", eps, sigma)};
  p.material_index.assign(p.grid.cell_count(), 0);
  p.average_at_edges = true;
  const double c = 0.5 * n * h;
  paint_sphere(p.grid, {c, c, c}, a, 1, p.material_index);
  return p;
}

// Bistatic RCS of a solved sphere problem against Mie, every 5 degrees in the E- and H-planes
// where Mie is within `window_db` of the plane's maximum (the deep nulls excluded), through the
// near-to-far transform on a box 3 cells inside a `pml`-cell PML; and sigma_sca.
struct MieAccuracy {
  double worst_e_db = 0, worst_h_db = 0, sigma_rel_err = 0;
};
inline MieAccuracy sphere_rcs_against_mie(const vem::FdfdProblem& p, const vem::FdfdOperator& op,
                                          const std::vector<vem::cdouble>& e_scat, int pml, double radius,
                                          double eps_r, double window_db = 15.0) {
  using namespace vem;
  const FdfdFields f = fdfd_fields(op, e_scat);
  NtffBox box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = pml + 3;
    box.hi[a] = p.grid.n()[a] - pml - 3;
  }
  const NearToFarTransform nf(p.grid, p.frequency, f.e_scat, f.h_scat, box, phase_origin(p));
  const MieSphere mie(radius, p.frequency, eps_r);
  MieAccuracy acc;
  double emax = -1e9, hmax = -1e9;
  for (int t = 0; t <= 180; t += 5) {
    emax = std::max(emax, 10 * std::log10(mie.rcs_e_plane(t * kPi / 180)));
    hmax = std::max(hmax, 10 * std::log10(mie.rcs_h_plane(t * kPi / 180)));
  }
  for (int t = 0; t <= 180; t += 5) {
    const double th = t * kPi / 180;
    const double me = 10 * std::log10(mie.rcs_e_plane(th)), mh = 10 * std::log10(mie.rcs_h_plane(th));
    if (me > emax - window_db)
      acc.worst_e_db = std::max(acc.worst_e_db, std::fabs(10 * std::log10(nf.rcs(th, 0)) - me));
    if (mh > hmax - window_db)
      acc.worst_h_db = std::max(acc.worst_h_db, std::fabs(10 * std::log10(nf.rcs(th, 0.5 * kPi)) - mh));
  }
  acc.sigma_rel_err = nf.scattering_cross_section() / mie.sigma_sca() - 1.0;
  return acc;
}

}  // namespace vem_test
