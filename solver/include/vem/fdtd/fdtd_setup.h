// The complete description of an FDTD problem, as plain data (no VTK). An FdtdOperator is built
// from it (validation, time step, coefficients) and an engine steps the operator.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/field_storage.h"
#include "vem/fdtd/boundary.h"
#include "vem/fdtd/schemes/fdtd_scheme.h"
#include "vem/core/material.h"
#include "vem/fdtd/source.h"
#include "vem/core/yee_grid.h"

namespace vem {

// How materials are given.
//  indexed:           one 16-bit index per cell into `table` (segmented phantoms). The GPU keeps
//                     the coefficient table in constant memory while it fits
//                     (kConstantTableCapacity in fdtd_engine.h), in global memory beyond.
//  coefficient_array: per-cell, per-axis eps_r, sigma_e (and optionally mu_r, sigma_m) arrays,
//                     turned into per-sample update-coefficient arrays (the layout of
//                     Demir & Elsherbeni) for continuously varying media.
enum class MaterialMode { indexed, coefficient_array };

// One E sample's row of a smoothed inverse permittivity tensor (subpixel smoothing with
// SubpixelOptions::full_tensor, core/subpixel_smoothing.h): sample (i, j, k) of E_component has
//   eps0 E_c = inv_cc D_c + inv[0] <D_{c+1}>_c + inv[1] <D_{c+2}>_c   (c+1, c+2 cyclic)
// with inv_cc = 1 / eps_r of the medium arrays (the engines' diagonal) and <D_b>_c the mean of the
// four D_b samples around the E_c sample. The engines are diagonal: these rows act only through
// the SubpixelTensorExtension (fdtd/extensions/subpixel_tensor.h), which run_fdtd_harmonic
// attaches when the list is not empty.
struct InverseEpsRow {
  std::int32_t i = 0, j = 0, k = 0;
  std::uint8_t component = 0;  // 0, 1, 2: Ex, Ey, Ez
  float inv[2] = {0.0f, 0.0f};  // (c, c+1) and (c, c+2) elements of eps_r^-1
};

struct PerCellMedium {
  // Each array has grid.cell_count() entries, x fastest (index i + nx (j + ny k)), or is empty.
  // A single array per quantity means isotropic; three (x, y, z) means diagonal anisotropy.
  std::vector<std::vector<float>> eps_r;    // required: 1 or 3 arrays
  std::vector<std::vector<float>> sigma_e;  // S/m; empty means lossless
  std::vector<std::vector<float>> mu_r;     // empty means 1
  std::vector<std::vector<float>> sigma_m;  // ohm/m; empty means 0
  // Average each E sample's permittivity/conductivity over the (up to) four cells that share its
  // edge, and each H sample's permeability over the two cells sharing its face. Off: staircase
  // (the material of cell (i,j,k), as in indexed mode).
  bool average_at_edges = true;
  // Off-diagonal rows of the inverse permittivity (see InverseEpsRow; empty: diagonal medium).
  std::vector<InverseEpsRow> inverse_eps_rows;
  // FDTD only. Arrays covering more cells than the grid: a piece of a distributed run keeps its
  // neighbours' cells beside its cuts, so that the averages at a cut equal the whole grid's
  // (decomposition.h piece_setup). Grid cell (i, j, k) is array cell (i - array_lo[0], j -
  // array_lo[1], k - array_lo[2]) of an array_n[0] x array_n[1] x array_n[2] box (x fastest), and a
  // cell index is first clamped to [clamp_lo, clamp_hi] (the whole model's cells, in this grid's
  // indices), as a whole grid clamps at its own faces. array_n[0] == 0 (default): the arrays hold
  // exactly the grid's cells and indices clamp to the grid.
  std::array<int, 3> array_lo{0, 0, 0};
  std::array<int, 3> array_n{0, 0, 0};
  std::array<int, 3> clamp_lo{0, 0, 0};
  std::array<int, 3> clamp_hi{0, 0, 0};
  bool has_array_box() const { return array_n[0] > 0; }
};

struct FdtdSetup {
  YeeGrid grid;
  double courant_factor = 0.99;  // dt = courant_factor * courant_limit when dt == 0
  double dt = 0.0;               // s; 0 selects from courant_factor; above the limit is refused
  BoundarySpec boundaries;
  // Spatial update scheme (vem/fdtd/schemes/fdtd_scheme.h: coefficients, Courant limits,
  // boundary handling). yee is the default and unchanged; the high-order schemes need cubic cells
  // and derive dt from their own limit (courant_factor times it). The narrow-band schemes (fv24,
  // s22) are exact at scheme_design_cells_per_wavelength along the axes and diagonals.
  Scheme scheme = Scheme::yee;
  double scheme_design_cells_per_wavelength = 20.0;
  // How the engines keep E and H in memory (vem/core/field_storage.h): float32 (default), or
  // float16 / bfloat16 with float32 arithmetic (half the field bytes; the error it brings is
  // measured in testing/benchmarks/results/fdtd_reduced_storage.md). The narrow kinds take the
  // Yee scheme and diagonal media (no inverse_eps_rows).
  FieldStorage field_storage = FieldStorage::float32;

  MaterialMode material_mode = MaterialMode::indexed;
  std::vector<Material> materials;             // indexed mode: the table
  std::vector<std::uint16_t> material_index;   // indexed mode: cell_count() entries, or empty = all 0
  PerCellMedium medium;                        // coefficient_array mode

  std::vector<PointSource> sources;
  std::vector<Probe> probes;
};

}  // namespace vem
