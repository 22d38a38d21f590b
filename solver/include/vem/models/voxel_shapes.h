// Voxelized shapes for building models (tests, benchmarks, examples): a cell belongs to a shape
// when its centre lies strictly inside it. Cells are indexed x fastest (i + nx (j + ny k)) as
// everywhere else (yee_grid.h); positions are world coordinates in metres.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/subpixel_smoothing.h"
#include "vem/core/yee_grid.h"

namespace vem {

// Sets `label` on every cell whose centre origin + ((i + 1/2) dx, (j + 1/2) dy, (k + 1/2) dz) is
// closer than `radius` to `centre`; other cells keep their value. `cells` is resized to
// grid.cell_count() (new entries 0) when its size differs. Returns the number of cells set.
std::int64_t paint_sphere(const YeeGrid& grid, const std::array<double, 3>& centre, double radius,
                          std::uint16_t label, std::vector<std::uint16_t>& cells);

// Fraction (0..1) of each cell's volume inside the sphere, from samples^3 points per cell on a
// regular sub-grid (cells wholly inside or outside are exact 1 / 0 without sampling). For
// sub-cell material averaging of curved dielectric surfaces: eps_cell = eps_out + (eps_in -
// eps_out) fraction keeps the object's volume (its polarizability) on coarse grids.
std::vector<float> sphere_volume_fraction(const YeeGrid& grid, const std::array<double, 3>& centre, double radius,
                                          int samples = 8);

// The sphere as an analytic sub-voxel geometry for subpixel smoothing (subpixel_smoothing.h):
// `inside` material within `radius` of `centre`, `outside` elsewhere; exact membership, exact
// box tests (nearest / farthest point of a box) and the radial normal. For
// subpixel_smoothed_medium(grid, materials, SphereGeometry(...), options).
class SphereGeometry final : public SubpixelGeometry {
 public:
  SphereGeometry(const std::array<double, 3>& centre, double radius, int inside, int outside = 0);
  int material_at(const std::array<double, 3>& p) const override;
  bool uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& material) const override;
  bool normal_at(const std::array<double, 3>& p, std::array<double, 3>& n) const override;

 private:
  std::array<double, 3> c_;
  double r_;
  int in_, out_;
};

}  // namespace vem
