// A voxel model placed in an FDTD grid: the voxels, `air_padding` cells of vacuum on every
// non-periodic face, then `cpml_thickness` CPML cells on every CPML face. This is how the ParaView
// filters (FDTDSolver, FDTDSteadyState) and a C++ user turn an image of voxels into a YeeGrid; the
// output grid is the voxels plus the padding (the CPML cells are not output).
//
// Indices: voxel (i,j,k) is computational cell (i,j,k) + lo_total (x fastest, yee_grid.h);
// output cell (I,J,K) is computational cell (I,J,K) + (pml[0], pml[2], pml[4]).
// Option names in messages are the C++ members with the ParaView property in parentheses.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vem/core/yee_grid.h"
#include "vem/fdtd/boundary.h"

namespace vem {

struct VoxelDomainOptions {
  std::array<BoundaryType, 6> boundaries{BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                                         BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml};
  int cpml_thickness = 10;       // cells (CPMLThickness), 1..1000
  int air_padding = 8;           // cells of vacuum per non-periodic face (AirPadding), >= 0
  double courant_factor = 0.99;  // dt / Courant limit (CourantFactor), (0, 1]

  // Throws vem::Error naming the option, its value and the limit.
  void validate() const;
  BoundarySpec boundary_spec() const;
};

struct VoxelDomain {
  std::array<int, 3> voxels{};          // the model's voxels per axis
  std::array<double, 3> spacing{};      // m
  std::array<double, 3> voxel_origin{}; // world corner of voxel (0,0,0), m
  std::array<int, 6> pad{};             // vacuum cells per face (x-low, x-high, y-low, ...)
  std::array<int, 6> pml{};             // CPML cells per face, outside the padding
  std::array<int, 3> n_total{};         // computational grid, cells
  std::array<int, 3> n_out{};           // output grid = voxels + padding
  std::array<int, 3> lo_total{};        // computational index of voxel (0,0,0)
  std::array<double, 3> origin_total{}; // world corner of the computational grid, m
  std::array<double, 3> origin_out{};   // world corner of the output grid, m
  double dt = 0;                        // courant_factor x the Courant limit, s
  VoxelDomainOptions options;

  std::int64_t voxel_count() const { return std::int64_t(voxels[0]) * voxels[1] * voxels[2]; }
  std::int64_t out_cells() const { return std::int64_t(n_out[0]) * n_out[1] * n_out[2]; }
  std::int64_t total_cells() const { return std::int64_t(n_total[0]) * n_total[1] * n_total[2]; }
  YeeGrid grid() const;
  BoundarySpec boundaries() const { return options.boundary_spec(); }
  // Computational cell index of voxel v (v = i + nx (j + ny k) over the voxels).
  std::int64_t total_index(std::int64_t v) const;
  // World bounds of the computational grid, "[x0, x1] x [y0, y1] x [z0, z1] m".
  std::string bounds() const;
  // Sample of component c nearest to world position p; throws vem::Error naming `what` when it
  // lies outside the grid, or inside a CPML layer when `outside_cpml`.
  std::array<int, 3> sample_at(Component c, const std::array<double, 3>& p, const std::string& what,
                               bool outside_cpml) const;
  // Output-grid copy (CPML cells dropped) of a computational-grid array, into component `comp` of
  // `components`-component tuples at dst.
  void crop_to_output(const std::vector<float>& total, float* dst, int components, int comp) const;
};

// The domain of `voxels` cells of `spacing` (m, > 0) with voxel (0,0,0) at `voxel_origin`.
// Validates the options and the geometry (throws vem::Error).
VoxelDomain make_voxel_domain(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                              const std::array<double, 3>& voxel_origin, const VoxelDomainOptions& options);

}  // namespace vem
