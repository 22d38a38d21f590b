// A voxel model placed in an FDFD grid: the voxels, `air_padding` cells of vacuum on every face,
// then `pml_thickness` SC-PML cells on every face (fdfd_problem.h). This is how the FDFDSolver
// filter and a C++ user turn an image of voxels into an FdfdProblem; the output grid is the
// voxels plus the padding (the PML cells are not output).
//
// Indices (x fastest, yee_grid.h): voxel (i,j,k) is computational cell (i,j,k) + pad + pml on
// each axis; output cell (I,J,K) is computational cell (I,J,K) + pml.
// Option names in messages are the C++ members with the ParaView property in parentheses.
//
//   vem::FdfdVoxelOptions vo;            // 900 MHz, +z incidence, 8 cells of air, 10 PML cells
//   const vem::FdfdVoxelDomain d = vem::make_fdfd_voxel_domain({64, 64, 40}, {2e-3, 2e-3, 2e-3},
//                                                              {-0.064, -0.064, -0.04}, vo);
//   vem::FdfdProblem p = d.problem();    // grid, frequency, PML, incident wave; materials: yours
//   d.set_label_materials(p, labels, tissues.lookup(values, vo.frequency));
//   const vem::FdfdSolution s = vem::solve_fdfd(p, solver_options);
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/subpixel_smoothing.h"
#include "vem/core/voxel_placement.h"
#include "vem/fdfd/fdfd_problem.h"
#include "vem/fdtd/extensions/near_to_far.h"  // NtffBox
#include "vem/models/tissue_properties.h"     // LabelProperties

namespace vem {

struct FdfdVoxelOptions {
  double frequency = 900e6;  // Hz (Frequency), finite and > 0
  PlaneWave incident;        // radians (IncidentTheta, IncidentPhi, Polarization: degrees there)
  int pml_thickness = 10;    // SC-PML cells per face (PMLThickness), >= 0; 0 = bare PEC wall
  int air_padding = 8;       // vacuum cells per face, voxels to PML (AirPadding), >= 0
  // Subpixel smoothing of the permittivity at material interfaces (core/subpixel_smoothing.h, the
  // same implementation as the FDTD voxel domain): set_label_materials then gives each E sample
  // the anisotropic average over its dual cell (coefficient_array mode). Off by default.
  // subpixel.frequency 0 means `frequency` (the conductivity averaged as a complex permittivity).
  bool subpixel_smoothing = false;
  SubpixelOptions subpixel;

  // Throws vem::Error naming the option (FdfdVoxelOptions::member (Property)), its value and the
  // limit; the angles as PlaneWave::validate.
  void validate() const;
};

// Per computational cell, from set_label_materials: what the materials give each cell (vacuum:
// eps_r 1, sigma 0, label 0, density 0 in the padding and the PML).
struct FdfdLabelCells {
  std::vector<float> eps_r, sigma_e, label, density;  // -, S/m, -, kg/m^3
};

struct FdfdVoxelDomain : VoxelPlacement {  // voxels, padding and PML cells: voxel_placement.h
  FdfdVoxelOptions options;

  int pad_cells() const { return pad[0]; }  // the same on every face
  int pml_cells() const { return pml[0]; }  // the same on every face
  // grid(), frequency, uniform PML and incident wave from the options; materials left at their
  // defaults (all vacuum) for the caller.
  FdfdProblem problem() const;
  // The near-to-far-field box in the middle of the air padding (pad / 2 cells from the model and
  // from the PML); there is room for it when pad >= 2.
  bool has_ntff_room() const { return pad_cells() >= 2; }
  NtffBox ntff_box() const;

  // Indexed materials from per-voxel labels (voxel order) and their properties (TissueTable::
  // lookup): material 0 is vacuum (padding and PML), material q + 1 is props.labels[q]. Sets
  // p.material_mode, p.materials and p.material_index (p.average_at_edges is the caller's).
  // Labels without properties become vacuum. With options.subpixel_smoothing: p.material_mode =
  // coefficient_array and p.medium the smoothed per-sample medium (subpixel_label_medium; the
  // returned cells and p.material_index stay per cell, the staircase). Throws vem::Error for more than 65535 distinct
  // labels or a label count other than the voxel count.
  FdfdLabelCells set_label_materials(FdfdProblem& p, const std::vector<std::uint16_t>& labels,
                                     const LabelProperties& props) const;
  // With options.subpixel_smoothing (nothing otherwise): p's materials (indexed, or per-cell
  // arrays in coefficient_array mode, each distinct value a material: subpixel_array_medium) replaced
  // by the smoothed per-sample medium, p.material_mode = coefficient_array; the conductivity is
  // averaged as a complex permittivity at options.frequency unless subpixel.frequency says otherwise.
  // set_label_materials calls it; the FDFD Solver filter calls it for property arrays.
  void smooth_materials(FdfdProblem& p) const;
};

// The domain of `voxels` cells of `spacing` (m, > 0) with voxel (0,0,0) at `voxel_origin`.
// Validates the options and the geometry (throws vem::Error).
FdfdVoxelDomain make_fdfd_voxel_domain(const std::array<int, 3>& voxels,
                                       const std::array<double, 3>& spacing,
                                       const std::array<double, 3>& voxel_origin,
                                       const FdfdVoxelOptions& options);

}  // namespace vem
