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

#include "vem/core/subpixel_smoothing.h"
#include "vem/core/voxel_placement.h"
#include "vem/core/yee_grid.h"
#include "vem/fdtd/boundary.h"
#include "vem/fdtd/fdtd_setup.h"
#include "vem/models/tissue_properties.h"  // LabelProperties

namespace vem {

struct VoxelDomainOptions {
  std::array<BoundaryType, 6> boundaries{BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                                         BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml};
  int cpml_thickness = 10;       // cells (CPMLThickness), 1..1000
  int air_padding = 8;           // cells of vacuum per non-periodic face (AirPadding), >= 0
  double courant_factor = 0.99;  // dt / Courant limit (CourantFactor), (0, 1]
  // Spatial update scheme (Scheme; vem/fdtd/schemes/fdtd_scheme.h): yee, or a high-order one on
  // cubic voxels, whose own Courant limit sets dt (courant_factor times it).
  Scheme scheme = Scheme::yee;
  // How the engines store E and H (FieldStorage; FdtdSetup::field_storage): float32, or float16 /
  // bfloat16 with float32 arithmetic (half the field memory and bytes per step; scheme yee, not
  // with the full-tensor subpixel smoothing).
  FieldStorage field_storage = FieldStorage::float32;
  // Subpixel smoothing of the permittivity at material interfaces (core/subpixel_smoothing.h):
  // set_label_materials gives each E sample the anisotropic average over its dual cell (Meep's
  // scheme, diagonal) in coefficient-array mode instead of its cell's material. Off by default.
  // subpixel.full_tensor adds the off-diagonal elements (run_fdtd_harmonic applies them with the
  // SubpixelTensorExtension; not with s44).
  bool subpixel_smoothing = false;
  SubpixelOptions subpixel;  // supersampling; frequency for the conductivity (0: volume mean)

  // Throws vem::Error naming the option, its value and the limit.
  void validate() const;
  BoundarySpec boundary_spec() const;
};

struct VoxelDomain : VoxelPlacement {  // voxels, padding and CPML cells: voxel_placement.h
  double dt = 0;                        // courant_factor x the Courant limit, s
  VoxelDomainOptions options;

  BoundarySpec boundaries() const { return options.boundary_spec(); }
  // World bounds of the computational grid, "[x0, x1] x [y0, y1] x [z0, z1] m".
  std::string bounds() const;
  // Sample of component c nearest to world position p; throws vem::Error naming `what` when it
  // lies outside the grid, or inside a CPML layer when `outside_cpml`.
  std::array<int, 3> sample_at(Component c, const std::array<double, 3>& p, const std::string& what,
                               bool outside_cpml) const;
  // Output-grid copy (CPML cells dropped) of a computational-grid array, into component `comp` of
  // `components`-component tuples at dst.
  void crop_to_output(const std::vector<float>& total, float* dst, int components, int comp) const;
  // Materials from per-voxel labels (voxel order) and their properties (TissueTable::lookup) into
  // s.grid (= grid()), s.materials (0 vacuum, q + 1 = props.labels[q]; labels without properties
  // are vacuum) and either s.material_index (indexed, the staircase) or, with
  // options.subpixel_smoothing, s.medium (coefficient_array, the smoothed per-sample medium of
  // subpixel_label_medium, shared with the FDFD voxel domain). Throws vem::Error for a label count
  // other than the voxel count or more than 65535 distinct labels.
  void set_label_materials(FdtdSetup& s, const std::vector<std::uint16_t>& labels, const LabelProperties& props) const;
  // With options.subpixel_smoothing (nothing otherwise): replaces the materials of s (on this
  // domain's grid) by the smoothed per-sample medium, s.material_mode = coefficient_array:
  // indexed materials (labels) through subpixel_label_medium, per-cell arrays through
  // subpixel_array_medium (each distinct value a material). The ParaView filters call it after
  // building either kind of model; set_label_materials calls it itself.
  void smooth_materials(FdtdSetup& s) const;
  // Mass density (kg/m^3) of every computational cell for SAR (HarmonicOptions::density): the
  // label's density where it is a tissue density (extensions/sar.h is_tissue_density), 0 in the
  // padding, the CPML, air and labels without properties. Same label order as set_label_materials.
  std::vector<float> tissue_density(const std::vector<std::uint16_t>& labels, const LabelProperties& props) const;
};

// The domain of `voxels` cells of `spacing` (m, > 0) with voxel (0,0,0) at `voxel_origin`.
// Validates the options and the geometry (throws vem::Error).
VoxelDomain make_voxel_domain(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                              const std::array<double, 3>& voxel_origin, const VoxelDomainOptions& options);

}  // namespace vem
