// Subpixel smoothing of the permittivity at material interfaces: the anisotropic averaging of
// Farjadpour et al., Opt. Lett. 31, 2972 (2006) and Oskooi, Kottke & Johnson, Opt. Lett. 34,
// 2778 (2009) (the scheme of Meep), reduced to the diagonal that the FDTD and FDFD engines use.
//
// For each E sample (component c at its Yee position p) the averaging region is the sample's dual
// cell, the box of one cell size per axis centred on p. Where it holds one material, the sample
// takes that material (staircase and smoothing agree). Where it straddles an interface, with the
// fill fractions f_m of the materials in the box (supersampled, `samples`^3 points),
//   <eps> = sum f_m eps_m,  <1/eps> = sum f_m / eps_m,
//   eps_eff = P <1/eps>^-1 + (1 - P) <eps>,  P = n n^T (n: unit normal of the interface),
// i.e. the field component normal to the interface sees the harmonic mean and the tangential ones
// the arithmetic mean (each exact for a planar interface; Farjadpour 2006, Oskooi 2009).
// The engines are diagonal, so the sample keeps the diagonal element of the inverse tensor along
// its own axis (the E = eps^-1 D update):
//   1 / eps_eff,cc = n_c^2 <1/eps> + (1 - n_c^2) / <eps>.
// This is an approximation: Meep keeps the off-diagonal terms n_a n_b (<1/eps> - 1/<eps>) (the
// tensor of Kottke, Farjadpour & Johnson, Phys. Rev. E 77, 036611 (2008)), which couple the E
// components where the normal is oblique to the axes; testing/benchmarks/results/subpixel.md
// measures what the diagonal version gives. SubpixelDiagonal::tensor keeps the diagonal of eps_eff
// instead (same for axis-aligned normals). SubpixelOptions::full_tensor (FDTD) keeps the
// off-diagonal terms as well, applied by fdtd/extensions/subpixel_tensor.h: on the issue-15 sphere
// at 5 mm it takes the worst RCS angle from 1.20 dB (this diagonal) to 0.05 dB (subpixel.md).
// Anisotropic (diagonal) materials enter with their c-th component.
//
// Normal n: from the geometry where it has an analytic one (SphereGeometry: radial), otherwise the
// first moment of the permittivity over the supersampled box, n ~ sum (x_s - p) eps(x_s), which for
// a small box is the direction of the gradient of the smoothed fill fraction (Meep estimates its
// normals from a first moment of eps as well). A box with no preferred direction (a thin symmetric sheet through p: moment below
// 1e-6 of its scale) gets n = 0: the arithmetic mean.
//
// Conductivity (choice): with SubpixelOptions::frequency f > 0 the formula is applied to the complex
// permittivity eps_m - j sigma_m / (2 pi f eps0), and eps_r = Re eps_eff, sigma = -Im eps_eff 2 pi f
// eps0: consistent at f (exact for FDFD, and for an FDTD run at that frequency). With f = 0 the
// formula acts on eps_r alone and sigma is the volume-fraction (arithmetic) mean, exact for
// tangential fields, over-estimating the loss of the normal field where a lossy and a lossless
// material share a box. Magnetic properties are not smoothed: each H sample takes the material at
// its own position (mu_r, sigma_m), arrays left empty when every material has mu_r 1, sigma_m 0.
//
// Geometry sources (what each gives):
//  - analytic shapes (SphereGeometry in models/voxel_shapes.h): the interface is known exactly;
//    fill fractions to the supersampling (error ~ 1/samples of the box for a cut box) and the exact
//    normal. (With the full tensor Meep reports second-order convergence for smooth interfaces; with
//    this diagonal version subpixel.md measures second order for the sphere's cross-section and
//    about first order for its worst RCS angle.)
//  - label volumes (LabelGeometry): the interface is known only to voxel precision. The indicator of
//    each material at the voxel centres is interpolated trilinearly and a point belongs to the
//    material with the largest interpolated indicator (for two materials, the 0.5 level set): a
//    plane of voxel faces is reproduced exactly, a staircased curve is replaced by a smoother
//    surface that cuts the corners, but the shape itself is still the voxel model's: what the
//    smoothing removes is the staircase's field error at the interface, not the geometric error
//    of the voxelization, so convergence with cell size stays limited by how the labels were made.
//
// Output: a PerCellMedium of three eps_r and three sigma_e arrays holding, at cell (i,j,k), the
// value for the E_c sample (i,j,k), with average_at_edges = false, so that the FDTD operator
// (coefficient_array mode) and the FDFD operator read each sample's own value. It only changes
// material coefficients, so it works with every update scheme. E samples on the grid's upper planes
// (index n along an axis) read the cell below (the operators clamp), as in the staircase.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/material.h"
#include "vem/core/voxel_placement.h"
#include "vem/core/yee_grid.h"
#include "vem/fdtd/fdtd_setup.h"  // PerCellMedium

namespace vem {

// Which diagonal the engines keep of the effective tensor (they are diagonal):
//  inverse: the diagonal of eps_eff^-1, 1/eps_cc = n_c^2 <1/eps> + (1 - n_c^2) / <eps> (Meep's
//           E = eps^-1 D update with the off-diagonal terms dropped; the default);
//  tensor:  the diagonal of eps_eff itself, eps_cc = n_c^2 / <1/eps> + (1 - n_c^2) <eps>.
// Both are exact when the normal is along an axis and differ for oblique normals.
enum class SubpixelDiagonal { inverse, tensor };

struct SubpixelOptions {
  // Supersampling points per axis in a straddling dual cell, 2..64. Cost: samples^3 geometry
  // queries per smoothed sample (label volumes: about 10 us per smoothed sample and thread at 4,
  // 8x that at 8; a 100^3 model of 4-voxel blocks has 1.3e6 smoothed samples). 4 by default: on the
  // 7.2 cm sphere at 10 mm cells, 4, 8 and 16 give worst RCS errors of 2.42, 2.48 and 2.50 dB.
  int samples = 4;
  double frequency = 0.0;  // Hz: > 0 complex averaging at this frequency; 0 arithmetic sigma
  SubpixelDiagonal diagonal = SubpixelDiagonal::inverse;
  // FDTD: keep the off-diagonal elements n_c n_b (<1/eps> - 1/<eps>) of eps_eff^-1 as well (the
  // full tensor of Kottke, Farjadpour & Johnson 2008, as Meep): the result's inverse_eps_rows
  // (fdtd_setup.h InverseEpsRow), applied by the SubpixelTensorExtension
  // (fdtd/extensions/subpixel_tensor.h) that run_fdtd_harmonic attaches. Rows are made only where
  // every material of the dual cell is lossless (sigma_e 0) and isotropic in eps_r; lossy boxes
  // keep the diagonal. Needs diagonal == inverse (the extension's diagonal is the medium's). The
  // FDFD operators are diagonal and refuse it. Measured: testing/benchmarks/results/subpixel.md.
  bool full_tensor = false;

  // Throws vem::Error naming `owner`'s member, its value and the limit.
  void validate(const char* owner = "SubpixelOptions") const;
};

// A sub-voxel description of the materials: indices into the materials table of the smoothing call.
class SubpixelGeometry {
 public:
  virtual ~SubpixelGeometry() = default;
  // Material index at world point p (m).
  virtual int material_at(const std::array<double, 3>& p) const = 0;
  // True (and `material`) when the box [lo, hi] surely holds one material; false when it may not.
  virtual bool uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& material) const = 0;
  // The unit normal of the interface near p when the geometry knows it analytically.
  virtual bool normal_at(const std::array<double, 3>& p, std::array<double, 3>& n) const {
    (void)p;
    (void)n;
    return false;
  }
};

// Labels on the voxels of a placement (material_per_voxel: one index into the materials table per
// voxel, voxel order i + nx (j + ny k)); `outside` outside the voxels (padding, absorbing layers),
// except along the `periodic` axes, where the voxels repeat (a periodic voxel domain has no padding
// there, so its dual cells at the faces reach into the opposite side of the model, as the fields do).
// Trilinear indicator interpolation between voxel centres (see above).
class LabelGeometry final : public SubpixelGeometry {
 public:
  LabelGeometry(const VoxelPlacement& placement, const std::vector<std::uint16_t>& material_per_voxel,
                int outside = 0, const std::array<bool, 3>& periodic = {false, false, false});
  int material_at(const std::array<double, 3>& p) const override;
  bool uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& material) const override;

 private:
  int voxel(long i, long j, long k) const;
  std::array<int, 3> n_;
  std::array<double, 3> h_, origin_;
  const std::vector<std::uint16_t>& m_;
  int outside_;
  std::array<bool, 3> periodic_;
};

struct SubpixelStats {
  std::int64_t samples = 0;            // E samples computed (3 per cell)
  std::int64_t interface_samples = 0;  // straddling an interface (smoothed)
  std::int64_t analytic_normals = 0;   // of those: normal from the geometry
  std::int64_t moment_normals = 0;     // from the first moment
  std::int64_t no_normal = 0;          // no direction: arithmetic mean
  std::int64_t tensor_rows = 0;        // full_tensor: samples with off-diagonal elements
};

// 1 / eps_eff,cc for a sample of axis c: n_c^2 <1/eps> + (1 - n_c^2) / <eps> (n unit or 0).
inline double subpixel_inverse_eps(double mean_eps, double mean_inv_eps, double n_c) {
  return n_c * n_c * mean_inv_eps + (1.0 - n_c * n_c) / mean_eps;
}

// The smoothed per-sample medium of `geometry` on `grid` (see the header). Validates the options,
// the grid and the materials; throws vem::Error for a material index outside the table.
PerCellMedium subpixel_smoothed_medium(const YeeGrid& grid, const std::vector<Material>& materials,
                                       const SubpixelGeometry& geometry, const SubpixelOptions& options,
                                       SubpixelStats* stats = nullptr);

// The shared voxel-domain path (FDTD voxel_domain.h and FDFD fdfd_voxel_domain.h): labels of the
// placement's voxels as material indices (material 0 outside the voxels), smoothed on its grid.
// `periodic`: the axes along which the domain is periodic (LabelGeometry).
PerCellMedium subpixel_label_medium(const VoxelPlacement& placement,
                                    const std::vector<std::uint16_t>& material_per_voxel,
                                    const std::vector<Material>& materials, const SubpixelOptions& options,
                                    SubpixelStats* stats = nullptr,
                                    const std::array<bool, 3>& periodic = {false, false, false});

// Property arrays instead of labels (the ParaView filters' "Property arrays" mode): the voxels'
// distinct tuples of `cells` (per computational cell, eps_r / sigma_e / mu_r / sigma_m, 1 or 3
// components each, the coefficient_array input) become the materials (material 0 vacuum: outside
// the voxels and every voxel holding vacuum's values), then as subpixel_label_medium. The arrays are taken as piecewise constant: each
// distinct value is a material of its own, so smooth (graded) arrays are not averaged across their
// gradients, and more than 65535 distinct tuples among the voxels is refused (vem::Error naming the
// count). cells.average_at_edges is replaced (the result has average_at_edges = false).
PerCellMedium subpixel_array_medium(const VoxelPlacement& placement, const PerCellMedium& cells,
                                    const SubpixelOptions& options, SubpixelStats* stats = nullptr,
                                    const std::array<bool, 3>& periodic = {false, false, false});

}  // namespace vem
