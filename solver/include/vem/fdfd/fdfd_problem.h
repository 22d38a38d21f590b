// The scattered-field FDFD problem (Demir, PIER 2012, eqs. 1-16): plain data, no VTK.
//
// Conventions (SI units throughout: m, s, Hz, S/m, V/m, A/m):
//  - Time dependence e^{+j w t} (w = 2 pi f). Lossy media enter as complex relative constants
//      eps_c = eps_r - j sigma_e / (w eps0),    mu_c = mu_r - j sigma_m / (w mu0),
//    per axis (diagonal anisotropy), so passive media have Im(eps_c), Im(mu_c) <= 0.
//  - The Yee grid and its staggering are those of yee_grid.h. The unknowns are the scattered
//    electric field samples E_x, E_y, E_z at sample indices (i,j,k) with 0 <= i < nx,
//    0 <= j < ny, 0 <= k < nz (3 N unknowns, N = nx ny nz, the paper's storage). The samples on
//    the outer node planes (e.g. E_x with j == 0, k == 0; those with j == ny or k == nz are not
//    stored) are the PEC wall behind the PML and are identically zero.
//  - H is eliminated (paper eqs. 13-16): only E is solved for; H follows from eq. (3).
//  - The background (where the incident wave lives) is vacuum; total = incident + scattered.
//
// The PML is a stretched-coordinate PML (SC-PML, Chew & Weedon 1994; Shin & Fan, J. Comput.
// Phys. 231 (2012) 3406): each derivative d/da becomes (1/s_a) d/da with
//     s_a(rho) = kappa(rho) - j sigma(rho) / (w eps0),
//     sigma(rho) = sigma_max rho^m,  kappa(rho) = 1 + (kappa_max - 1) rho^m,
//     sigma_max = -(m + 1) ln(R0) / (2 eta0 L),    L = thickness * d_a,
// where rho in [0, 1] is the depth into the layer measured from its inner interface. Why SC-PML
// (rather than the UPML the paper's [7, 12] fold into eps and mu): it leaves eps and mu - and with
// them the number of distinct coefficient tuples the CIS scheme stores - untouched outside the
// layer and only multiplies the difference operators by 1-D profiles; it is exact for any
// (anisotropic, lossy) medium reaching the layer; and after the diagonal scaling
// diag(s_x s_y s_z eps) the operator is complex-symmetric, which the COCG solver exploits. Shin &
// Fan also show SC-PML gives better-conditioned systems (fewer Krylov iterations) than UPML.
// The PML occupies the outer `thickness` cells of the grid (the grid you give includes it, as in
// boundary.h), backed by PEC. Keep scatterers out of it.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_setup.h"  // MaterialMode, PerCellMedium
#include "vem/core/material.h"
#include "vem/core/yee_grid.h"

namespace vem {

using cdouble = std::complex<double>;

// Incident plane wave of unit amplitude (|E0| = 1 V/m), travelling along
//     k_hat = (sin(theta) cos(phi), sin(theta) sin(phi), cos(theta))
// with polarization  E0 = cos(psi) theta_hat + sin(psi) phi_hat, where
//     theta_hat = (cos(theta) cos(phi), cos(theta) sin(phi), -sin(theta)),
//     phi_hat   = (-sin(phi), cos(phi), 0).
// theta = phi = psi = 0 is the paper's x-polarized wave travelling along +z.
//     E_inc(r) = E0 exp(-j k0 k_hat . (r - r0)),    H_inc = k_hat x E_inc / eta0.
// r0 is `phase_origin` when `phase_origin_set`, else the centre of the grid.
// Option names in messages are the C++ members with the ParaView property in parentheses
// (the FDFDSolver filter's angles are in degrees; these are radians).
struct PlaneWave {
  double theta = 0.0;        // rad
  double phi = 0.0;          // rad
  double polarization = 0.0; // psi, rad
  bool phase_origin_set = false;
  std::array<double, 3> phase_origin{0, 0, 0};  // m

  std::array<double, 3> direction() const;     // k_hat
  std::array<double, 3> e_polarization() const; // E0 (unit, real)
  std::array<double, 3> h_polarization() const; // k_hat x E0 (unit, real; H0 = this / eta0)

  // Throws vem::Error naming the angle (or the phase origin) that is not finite.
  void validate() const;
};

// SC-PML parameters (see the header comment). thickness[f] is in cells for face f
// (0: x-low, 1: x-high, 2: y-low, 3: y-high, 4: z-low, 5: z-high); 0 = bare PEC wall.
struct FdfdPml {
  std::array<int, 6> thickness{10, 10, 10, 10, 10, 10};
  double grading_order = 3.0;  // m
  double reflection = 1e-8;    // R0: theoretical normal-incidence reflection of the layer
  double kappa_max = 1.0;      // >= 1; real stretching (helps evanescent waves)

  static FdfdPml uniform(int cells) {
    FdfdPml p;
    p.thickness = {cells, cells, cells, cells, cells, cells};
    return p;
  }

  // Throws vem::Error for a negative thickness, a grading order < 0, R0 outside (0, 1) or
  // kappa_max < 1 (the thickness against the grid is FdfdProblem::validate's).
  void validate() const;
};

struct FdfdProblem {
  YeeGrid grid;               // includes the PML cells
  double frequency = 0.0;     // Hz, > 0
  FdfdPml pml;
  PlaneWave incident;

  // Materials, as in FdtdSetup: `indexed` = one 16-bit index per cell into `materials`
  // (material_index empty = all cells material 0); `coefficient_array` = per-cell arrays in
  // `medium` (float; 1 array = isotropic, 3 = diagonal anisotropy; sigma_e/mu_r/sigma_m optional).
  MaterialMode material_mode = MaterialMode::indexed;
  std::vector<Material> materials{Material::vacuum()};
  std::vector<std::uint16_t> material_index;
  PerCellMedium medium;
  // How a sample takes its material. false (the project's staircase convention, yee_grid.h): the
  // material of cell (i,j,k). true: E samples average eps_c over the (up to) four cells sharing
  // their edge, H samples take the harmonic mean of mu_c over the two cells sharing their face.
  // In coefficient_array mode medium.average_at_edges is used instead of this flag.
  bool average_at_edges = false;

  // Throws vem::Error naming the problem: non-positive/non-finite frequency, bad grid, bad
  // materials or indices, PML leaving no interior, bad PML parameters (FdfdPml::validate), angles
  // that are not finite (PlaneWave::validate). FdfdOperator's constructor calls it.
  void validate() const;
};

// The same as p.validate() (the older spelling).
inline void validate(const FdfdProblem& p) { p.validate(); }

// Incident fields at world position r (m) for frequency f (Hz), e^{jwt} phasors.
std::array<cdouble, 3> incident_e(const PlaneWave& w, const std::array<double, 3>& origin,
                                  double frequency, const std::array<double, 3>& r);
std::array<cdouble, 3> incident_h(const PlaneWave& w, const std::array<double, 3>& origin,
                                  double frequency, const std::array<double, 3>& r);
// The phase origin actually used for a problem (phase_origin or the grid centre).
std::array<double, 3> phase_origin(const FdfdProblem& p);

}  // namespace vem
