// High-order spatial stencils for the 3D FDTD engine (issue 15): every scheme's coefficients and
// its Courant limit are defined HERE and nowhere else.
//
// Sources. M. F. Hadi, "The case for higher computational density in the memory-bound FDTD
// method within multicore environments", Int. J. Antennas Propag. 2012, 280359
// (../shared/papers/highorder-fdtd-hadi.md) compares five update equations on Yee's staggered
// cubic mesh: Yee, FV24 [Hadi, IEEE TAP 55(8) 2007], FV24-WB (FV24 without its D_bx3 terms),
// S{2,2} [Zygiridis & Tsiboukis, JCP 226 2007] and S44 [Hwang & Ihm, JLT 24(2) 2006]. That paper
// gives the STENCIL of each scheme (which field samples enter the update of H_x, its eqs. 1-4)
// but explicitly not the coefficients ("the various coefficients which are specific to each
// algorithm will not be detailed here"). The coefficients below are therefore derived here, from
// the dispersion relation of the stencil, with the conditions written next to each scheme.
//
// Stencil (all schemes but S44's time stepping). The derivative d/da of a field F at the sample
// being updated (a = x, y, z; b, d the two other axes; half-integer offsets along a, integer
// offsets along b, d; h = cell size, cubic cells):
//   D_a F = (1/h) sum_{p in {1/2, 3/2}} [ w_p0  (F(+p) - F(-p))
//                                       + w_p1  sum_{4 axis neighbours (+-1,0),(0,+-1) in (b,d)} (...)
//                                       + w_p2  sum_{4 diagonal neighbours (+-1,+-1) in (b,d)} (...) ]
// The curl uses D_a in place of the Yee difference everywhere (bulk and CPML). For a plane wave
// exp(j k.r) D_a has the symbol j K_a with (theta_a = k_a h)
//   K_a h = 2 sum_p sin(p theta_a) [ w_p0 + 2 w_p1 (cos theta_b + cos theta_d)
//                                          + 4 w_p2 cos theta_b cos theta_d ],
// and the same symbol acts on E and H, so the discrete curl-curl has the eigenvalue |K|^2 on
// divergence-free fields and the leap-frog dispersion relation is
//   sin(w dt / 2) = (v dt / 2) |K|,                                            (D)
// stable while v dt max|K| <= 2: the Courant number S = c dt / h is limited to
// S_max = 2 / max_theta |K| h, found numerically over the zone (SchemeStencil::courant_limit).
// For yee, fv24_wb and fv24 the maximum is the corner theta = (pi, pi, pi), where
// K_a h = 2 (T_1/2 - T_3/2), T_p = w_p0 - 4 w_p1 + 4 w_p2, so S_max = 1 / (sqrt(3) |T_1/2 - T_3/2|)
// (Yee: 1/sqrt(3)); for s22 it lies inside the zone (test_fdtd_schemes_dispersion checks both).
//
// Design conditions (Taylor expansion of (D) in theta; S = c dt / h the Courant number in use):
//   consistency                A_1/2 + 3 A_3/2 = 1,           A_p = w_p0 + 4 w_p1 + 4 w_p2
//   |K|^2 h^2 = |theta|^2 - 2 alpha sum theta_a^4 - 2 beta sum_a theta_a^2 (|theta|^2 - theta_a^2) + O(theta^6)
//   with alpha = (A_1/2 + 27 A_3/2) / 24 and beta = B_1/2 + 3 B_3/2, B_p = w_p1 + 2 w_p2.
//   Leap-frog in time wants |K|^2 h^2 = (2/S)^2 sin^2(S|theta|/2) = |theta|^2 - S^2 |theta|^4/12 + ...,
//   i.e. alpha = beta = S^2 / 24: the time error of leap-frog is cancelled by the space error,
//   isotropically (no direction dependence at fourth order).
//
// Schemes:
//  yee      w_1/2,0 = 1. Second order. S_max = 1/sqrt(3) = 0.577.
//  fv24_wb  Hadi's FV24 stencil without the D_bx3 terms (wide centre difference D_bx2, wide
//           diagonal-neighbour differences D_bx4): w_1/2,0, w_3/2,0, w_3/2,2 from the three
//           conditions above:  w_3/2,2 = S^2/144,  A_3/2 = -(1 - S^2)/24,  w_1/2,0 = 1 + (1 - S^2)/8,
//           w_3/2,0 = A_3/2 - 4 w_3/2,2. Fourth-order dispersion error at every frequency below
//           the design: the wide-band variant. (S = 0: Fang's (2,4) stencil 9/8, -1/24.)
//  fv24     The full FV24 stencil (D_bx1 narrow, D_bx2 wide, D_bx3 wide axis-neighbour, D_bx4 wide
//           diagonal-neighbour differences), narrow-band: the four weights make (D) EXACT at the
//           design resolution N_d cells per wavelength (FdtdSetup::scheme_design_cells_per_wavelength)
//           along the axes, the face diagonals and the body diagonals, plus consistency (four
//           linear equations). As the paper says of FV24: "extreme phase accuracy for a narrow
//           band around the design frequency".
//  s22      The S{2,2} stencil of Zygiridis & Tsiboukis as eq. (3) of the paper writes it
//           (narrow and wide centre differences, narrow and wide axis-neighbour differences):
//           w_1/2,0, w_3/2,0, w_1/2,1, w_3/2,1 from the same four conditions as fv24.
//  s44      Fourth-order centred space differences (9/8, -1/24: w_1/2,0 = 9/8, w_3/2,0 = -1/24,
//           Fang's (2,4) stencil) with the fourth-order staggered BACKWARD time differences of
//           Hwang & Ihm [JLT 24(2) 2006] in place of leap-frog, as eq. (4) of the paper writes
//           the update: H^{n+1/2} = D_ax1 H^{n-1/2} + D_ax2 H^{n-3/2} + D_ax3 H^{n-5/2}
//           + D_ax4 H^{n-7/2} + D_bx1 [narrow curl E^n] + D_bx2 [wide curl E^n] (and E alike, from
//           H^{n+1/2}). The time derivative at t^n from the five samples t^{n+1/2} ... t^{n-7/2}:
//             dF/dt|^n = (22 F^{n+1/2} - 17 F^{n-1/2} - 9 F^{n-3/2} + 5 F^{n-5/2} - F^{n-7/2}) / (24 dt)
//           the unique weights of those five points that are exact for polynomials of degree 4
//           (moments sum_i c_i t_i^m = delta_m1, m = 0..4, t_i = 1/2, -1/2, ..., -7/2; the one-sided
//           "staggered backward differentiation" that Xiao & Tang, IEEE TAP 54(10) 2006, analyse as
//           Hwang's scheme). The paper's eq. (4) has exactly these five time levels. Lossless update:
//             F^{n+1/2} = (17 F^{n-1/2} + 9 F^{n-3/2} - 5 F^{n-5/2} + F^{n-7/2}) / 22 + (24/22) (dt/eps) curl
//           Loss (sigma) enters as sigma (F^{n+1/2} + F^{n-1/2}) / 2 (second order in the loss term;
//           exact Hwang-Ihm when lossless); with r = sigma dt / (2 eps), recovered from the engine's
//           leap-frog coefficients (a = (1 - r)/(1 + r), b = (dt/eps)/(1 + r)) by s44_coefficients
//           below, so no further coefficient storage: D_a1..4 = (17/24 - r, 9/24, -5/24, 1/24) /
//           (22/24 + r), D_b = b (1 + r) / (22/24 + r). Soft sources are scaled by the same
//           (1 + r) / (22/24 + r) (the current enters where the curl does); the CPML correction
//           uses D_b too (the CPML's psi recursion is the leap-frog one, psi^n from D_a F^n: the
//           stretched curl at t^n; a first-order-in-time approximation inside the PML only).
//           Dispersion relation (von Neumann, zeta = exp(j w dt / 2), q = v dt |K|):
//             22 zeta^8 - 24 j q zeta^7 - 17 zeta^6 - 9 zeta^4 + 5 zeta^2 - 1 = 0            (D44)
//           (and its conjugate for -q): eight roots, two physical (near exp(+-j v|k| dt / 2)) and six
//           parasitic ones (|zeta| ~ 0.79 at q -> 0: they decay as 0.63^n per step). The
//           physical roots have |zeta| < 1: the scheme is dissipative (high frequencies damp);
//           scheme_numerical_omega returns Re w of the physical root. Stability: every root in
//           the unit disk for 0 <= q <= 1; at q = 1 the root zeta = j (z = -1, the Nyquist mode)
//           reaches the circle (check: 22 - 24 + 17 - 9 - 5 - 1 = 0) and for q > 1 leaves it. So
//           v dt max|K| <= 1 (HALF the leap-frog bound 2): with max|K| h = 2 sqrt(3) (9/8 + 1/24)
//           = 7/sqrt(3) at the corner, S_max = sqrt(3)/7 = 0.2474 (3/7 of Yee's 1/sqrt(3)).
//           test_fdtd_schemes_s44.cpp checks the root moduli on both sides of q = 1.
//           Storage: three more time levels of all six components (F^{n-3/2}, F^{n-5/2}, F^{n-7/2}
//           and E alike): 6 x 3 x 4 = 72 bytes per cell more than leap-frog's 24 (96 in all for
//           the fields), float32.
//           The earlier levels start at zero (fields identically zero before t = 0, exact for
//           sources switched on at t = 0); FdtdEngine::set_field sets the current level only, so
//           an initial field set that way also excites the parasitic roots, which decay within
//           ~100 steps (the tests fit after them). Not yet with s44: FdtdEngine::set_fused_e_source
//           users other than the CUDA bulk path (rescaled there) and the extensions that
//           assume leap-frog (the subpixel full tensor refuses it). TF/SF works with s44
//           (corrections with D_b, 1D grid stepped by the same backward differences: tfsf.cpp).
//
// The transverse weights of the paper's FV24 are not symmetric in the two transverse axes
// (D_bx3 carries only in-plane neighbours); here both transverse axes get the same weight, which
// keeps one scalar symbol per axis and the exact relation (D) - a deliberate simplification.
//
// The weights depend on S (and N_d): dt is found with them, by fixed-point iteration of
// S = courant_factor * S_max(weights(S)) (scheme_design). Non-cubic cells: refused for the
// high-order schemes (the conditions above assume dx = dy = dz).
//
// Boundaries (both engines, from one set of resolve tables: build_high_order_stencil in
// solver/src/fdtd/engine_common.cpp, used by fdtd_engine_cpu.cpp and fdtd_engine_cuda.cu): a wide stencil reaches 2
// samples beyond the sample's own cell, which the layout's single ghost layer does not hold.
// The engine does not store more ghosts; it resolves every stencil point outside the domain to
// a sample inside it: periodic axes wrap; PEC faces (and the PEC that terminates a CPML) mirror
// with the parity of the image theory (tangential E and normal H odd, normal E and tangential H
// even); PMC faces the opposite parity. This is the operator of the mirrored, infinite lattice
// restricted to fields of that symmetry, so it keeps the interior scheme's skew symmetry and
// Courant limit (no reduced-order cells), and a PEC or PMC wall is a symmetry plane exactly as in
// the continuum. Subdomain faces (halo exchange of one layer) are refused for now.
// Material interfaces: each sample keeps its own (a, b) coefficients, as in the paper, with the
// full wide stencil across the interface (staircase, first order in the interface position as
// for Yee). The CPML stretches the high-order derivative D_a (psi <- b psi + c D_a F).
#pragma once

#include <array>
#include <complex>
#include <string>

namespace vem {

enum class Scheme { yee, fv24, fv24_wb, s22, s44 };
const char* scheme_name(Scheme s);
Scheme scheme_from_name(const std::string& name);  // "yee", "fv24", "fv24_wb", "s22", "s44"

struct SchemeStencil {
  // Time stepping: leap-frog (false) or Hwang & Ihm's fourth-order backward differences (s44).
  bool backward4 = false;
  // w[p][cls]: p = 0 the half-cell offset, p = 1 the 3/2-cell offset; cls 0 centre, 1 the four
  // axis neighbours, 2 the four diagonal neighbours (see above).
  double w[2][3] = {{1, 0, 0}, {0, 0, 0}};
  // K_a h for the derivative along axis a of a plane wave with phases theta = k h per axis.
  double symbol(int axis, const std::array<double, 3>& theta) const;
  // |K| h.
  double symbol_norm(const std::array<double, 3>& theta) const;
  // Largest Courant number S = c dt / h for which the time stepping with this stencil is stable:
  // 2 / max|K|h (leap-frog), 1 / max|K|h (backward4, see s44 above).
  double courant_limit() const;
  bool is_yee() const;
};

struct SchemeDesign {
  Scheme scheme = Scheme::yee;
  double courant = 0;         // S = c0 dt / h used
  double courant_limit = 0;   // S_max of the weights
  SchemeStencil stencil;
};

// The weights of `scheme` for the Courant number S and design resolution (cells per wavelength).
SchemeStencil scheme_stencil(Scheme scheme, double courant, double design_cells_per_wavelength);

// The weights and S for dt = courant_factor * limit (the weights depend on S: fixed point).
SchemeDesign scheme_design_for_factor(Scheme scheme, double courant_factor,
                                      double design_cells_per_wavelength);
// The weights for a given S (explicit dt), with its limit (the caller checks S <= limit).
SchemeDesign scheme_design_for_courant(Scheme scheme, double courant,
                                       double design_cells_per_wavelength);

// Numerical angular frequency (rad/s) of the plane wave of wave vector k (rad/m) on cubic cells
// h in a medium of speed v, from (D); NaN above the stability limit. backward4 (s44): Re w of the
// physical root of (D44), the one nearest exp(j v |k| dt / 2).
double scheme_numerical_omega(const SchemeStencil& st, double h, double dt, double v,
                              const std::array<double, 3>& k);
// (D44) for q = v dt |K|: its eight roots zeta (solved as a polynomial, Durand-Kerner).
std::array<std::complex<double>, 8> s44_roots(double q);
// The physical root of (D44) for the plane wave k: |zeta|^2 is the amplitude factor per step.
std::complex<double> s44_physical_root(const SchemeStencil& st, double h, double dt, double v,
                                       const std::array<double, 3>& k);

// s44 per-sample update coefficients from the leap-frog pair (a, b) of the sample (see s44 above):
//   F^{n+1/2} = c[0] F^{n-1/2} + c[1] F^{n-3/2} + c[2] F^{n-5/2} + c[3] F^{n-7/2} + cb * curl.
// b == 0 (a sample held fixed, e.g. PEC): c = (a, 0, 0, 0), cb = 0, as leap-frog.
#if defined(__CUDACC__)
#define VEM_S44_HD __host__ __device__ __forceinline__
#else
#define VEM_S44_HD inline
#endif
struct S44Coefficients { float c[4]; float cb; };
VEM_S44_HD S44Coefficients s44_coefficients(float a, float b) {
  S44Coefficients k;
  if (b == 0.0f || !(1.0f + a > 1e-30f)) {
    k.c[0] = a; k.c[1] = k.c[2] = k.c[3] = 0.0f; k.cb = 0.0f;
    return k;
  }
  const float r = (1.0f - a) / (1.0f + a);
  const float inv = 1.0f / (22.0f / 24.0f + r);
  k.c[0] = (17.0f / 24.0f - r) * inv;
  k.c[1] = (9.0f / 24.0f) * inv;
  k.c[2] = (-5.0f / 24.0f) * inv;
  k.c[3] = (1.0f / 24.0f) * inv;
  k.cb = b * (1.0f + r) * inv;
  return k;
}

}  // namespace vem
