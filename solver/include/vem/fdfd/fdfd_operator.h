// The FDFD operator: everything about an FdfdProblem that the iterative solver needs, resolved
// once on the host in double precision - per-sample coefficients (both storage schemes of the
// paper), the right-hand side, the incident field, the diagonal and the symmetrizer - plus a
// reference matrix-vector product. The backends (CPU, CUDA) copy what they need from here.
//
// Notation. Component a in {0,1,2} = {x,y,z}; b = a+1, c = a+2 (cyclic). p = (i,j,k) is a sample
// index, e_b the unit step along axis b, s_b^e / s_b^h the SC-PML stretch at integer /
// half-integer positions along b (1 outside the PML), d_b the cell size, k0 = w / c0,
// eps_a / mu_a the complex relative constants of the sample (fdfd_problem.h).
//
// H stage (paper eqs. 6-8, written as x_h = -A_h x_e + y_h, eq. 14), on the H_a sample at p:
//     t_a(p) = h_ab(p) [E_c(p + e_b) - E_c(p)] - h_ac(p) [E_b(p + e_c) - E_b(p)],
//     h_ab = 1 / (k0 mu_a s_b^h d_b),
// i.e. t = (1 / (k0 mu)) curl E, and eta0 H_scat = j t + eta0 (1/mu - 1) H_inc (eq. 3).
// E stage (eqs. 9-11 / 13 and 16), on the E_a sample at p:
//     y_a(p) = x_a(p) - { e_ab(p) [t_c(p) - t_c(p - e_b)] - e_ac(p) [t_b(p) - t_b(p - e_c)] },
//     e_ab = 1 / (k0 eps_a s_b^e d_b),
// so  A = I - (1 / (k0^2 eps)) curl_s (1/mu) curl_s,  the paper's x_e - A_e A_h x_e (eq. 15),
// with the paper's pairs of coefficients that differ only in sign (eq. 17) stored once.
// PEC walls: E samples on the outer node planes are identity rows (y = x) and are read as zero
// by the H stage, so the operator is exactly block-diagonal (walls | interior).
//
// Right-hand side (eqs. 9-11 with eq. 3 substituted):
//     b_a = (1/eps_a - 1) E_inc,a  -  j { e_ab [g_c(p) - g_c(p - e_b)] - e_ac [g_b(p) - g_b(p - e_c)] },
//     g = eta0 (1/mu - 1) H_inc  (zero unless mu != 1).
//
// Symmetry: with W_a(p) = s_x s_y s_z evaluated at the E_a sample position, diag(W eps) A is
// complex-symmetric (SC-PML symmetrization, Shin & Fan 2012) - the COCG solver uses this.
//
// Grad-div regularization (Shin & Fan, "Accelerated solution of the frequency-domain Maxwell's
// equations by engineering the eigenvalue distribution of the operator", Opt. Express 21 (2013)
// 22578). Nodes n = (i,j,k) at integer positions; interior nodes have 1 <= n_a <= n_a - 1 on
// every axis, all others (on the PEC walls) carry phi = 0.
//   Stretched divergence, E samples -> interior nodes (reads no wall sample):
//     (D v)(n) = sum_a [v_a(n) - v_a(n - e_a)] / (s_a^e(n_a) d_a),
//   stretched gradient, nodes -> E samples (zero on the wall samples, since phi = 0 there):
//     (G phi)_a(p) = [phi(p + e_a) - phi(p)] / (s_a^h(p_a) d_a).
//   With P_a = s_b^e s_c^e at the E_a sample, W_n = s_x^e s_y^e s_z^e at the node and Delta the
//   unstretched node divergence: D = W_n^-1 Delta diag(P), G = -diag(1/s^h) Delta^T, and
//   W_a = s_a^h P_a.
//   Two exact discrete identities (separable stretching; proof: the mixed second differences
//   cancel because each stretch depends on one coordinate only, and the masking agrees):
//     (i)  curl_h G = 0, hence A G = G (the H stage of a gradient vanishes; wall rows are
//          identity rows and G phi is zero there);
//     (ii) D curl_e = 0, hence D diag(eps) A = D diag(eps).
//   Q = (s / k0^2) G M D diag(eps), M = diag over the interior nodes. By (i), A Q = Q, so
//     A + Q = A (I + Q):   solve (A + Q) y = b, then x = y + Q y solves A x = b
//   (by (ii) also A + Q = (I + Q) A: the same operator, the left form A' x = b + Q b).
//   The right form keeps the residual: b - (A + Q) y = b - A x, so the stopping test and the
//   true residual are those of the unregularized system, and no rho = D(eps E) has to be
//   formed (the left form's right-hand side term). Symmetry: diag(W eps) Q =
//     -(s / k0^2) diag(eps P) Delta^T diag(M / W_n) Delta diag(P eps)
//   is complex-symmetric, so diag(W eps) (A + Q) is too and COCG / COCR apply unchanged.
//   Scale: M = 1 / eps_n^2 with eps_n the arithmetic mean of the eps_a of the six E samples
//   around the node. In a uniform medium without PML, Q = (s / (k0^2 eps)) grad div and
//     A + Q = I - (1 / (k0^2 eps)) (curl curl - s grad div),
//   i.e. for s = 1 the (negative) vector Laplacian: the gradient fields, an eigenspace of A with
//   eigenvalue exactly 1, move to 1 - s lambda_L / (k0^2 eps) (lambda_L >= 0 the eigenvalues of
//   -Laplacian on the nodes) and join the transverse spectrum.
//   Cost: the two-stage product writes phi (N values) in the H stage and reads it in the E
//   stage; eps and the stretches come from the E-stage coefficients (eps_a s_b = 1 / (k0 d_b
//   e_ab)) and 1-D profiles, so no per-sample array is added.
//
// Storage schemes (paper sec. 3):
//  CAS  (coefficient arrays): 12 arrays of N complex coefficients, (h_ab, h_ac) and (e_ab, e_ac)
//       per component, x fastest.
//  CIS  (coefficient indices): the unique (h_ab, h_ac) pairs and the unique (e_ab, e_ac) pairs
//       in two tables, and per sample one 16-bit index per component (12 N bytes in all).
//       Built when each table has at most kFdfdCisMaxEntries entries.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "vem/fdfd/fdfd_problem.h"

namespace vem {

struct CoefficientPair {
  cdouble c1, c2;  // (h_ab, h_ac) or (e_ab, e_ac)
};

constexpr std::size_t kFdfdCisMaxEntries = 65536;  // 16-bit indices

class FdfdOperator {
 public:
  explicit FdfdOperator(const FdfdProblem& problem);  // validates; throws vem::Error

  const FdfdProblem& problem() const { return p_; }
  const YeeGrid& grid() const { return p_.grid; }
  double omega() const { return omega_; }
  double k0() const { return k0_; }
  std::int64_t cells() const { return n_; }           // N
  std::int64_t unknowns() const { return 3 * n_; }    // 3 N
  std::int64_t linear(int i, int j, int k) const {
    return i + std::int64_t(p_.grid.nx) * (j + std::int64_t(p_.grid.ny) * k);
  }

  // Complex relative constants seen by the E_a / H_a sample at (i,j,k).
  cdouble eps_at(int a, int i, int j, int k) const;
  cdouble mu_at(int a, int i, int j, int k) const;
  // SC-PML stretch along `axis` at integer node position q (0..n) / at q + 1/2 (0..n-1).
  cdouble stretch_e(int axis, int q) const { return se_[axis][q]; }
  cdouble stretch_h(int axis, int q) const { return sh_[axis][q]; }
  // True for the identity rows: E_a samples on the outer node planes of the other two axes.
  bool is_wall(int a, int i, int j, int k) const;

  // Coefficients of one sample, computed directly (CAS content).
  CoefficientPair h_coefficients(int a, int i, int j, int k) const;
  CoefficientPair e_coefficients(int a, int i, int j, int k) const;

  // CIS content: available when both tables fit (cis_available()); otherwise empty and
  // cis_unavailable_reason() says why.
  bool cis_available() const { return cis_ok_; }
  const std::string& cis_unavailable_reason() const { return cis_why_; }
  const std::vector<CoefficientPair>& h_table() const { return h_table_; }
  const std::vector<CoefficientPair>& e_table() const { return e_table_; }
  const std::vector<std::uint16_t>& h_index(int a) const { return h_index_[a]; }  // N each
  const std::vector<std::uint16_t>& e_index(int a) const { return e_index_[a]; }

  // Vectors of 3 N entries, [x | y | z] blocks of N, sample (i,j,k) at linear(i,j,k).
  std::vector<cdouble> rhs() const;
  std::vector<cdouble> incident_e() const;  // at E sample positions
  std::vector<cdouble> incident_h() const;  // at H sample positions
  std::vector<cdouble> diagonal() const;    // diag(A)
  std::vector<cdouble> symmetrizer() const; // W eps: diag(W eps) A is complex-symmetric

  // Reference product y = A x (double precision, OpenMP); x, y hold 3 N entries.
  void apply(const cdouble* x, cdouble* y) const;
  // Grad-div term (see above): out = Q x, Q = (s / k0^2) G M D diag(eps) (double, OpenMP);
  // x, out hold 3 N entries. grad_div_diagonal(s) = diag(Q).
  void grad_div(double s, const cdouble* x, cdouble* out) const;
  std::vector<cdouble> grad_div_diagonal(double s) const;

  // Scattered H (A/m, 3 N entries at H sample positions) from the scattered E (eq. 3).
  std::vector<cdouble> scattered_h(const std::vector<cdouble>& e_scat) const;

  // Non-vacuum material inside the PML (the scattered-field source then sits in the layer).
  bool material_in_pml() const { return material_in_pml_; }

 private:
  cdouble cell_eps(int a, std::int64_t cell) const;
  cdouble cell_mu(int a, std::int64_t cell) const;
  void build_stretch();
  void build_cis();
  void check_pml_material();

  FdfdProblem p_;
  std::int64_t n_ = 0;
  double omega_ = 0, k0_ = 0;
  std::array<std::vector<cdouble>, 3> se_, sh_;
  // Per-material complex constants (indexed mode), per axis.
  std::vector<std::array<cdouble, 3>> mat_eps_, mat_mu_;
  bool cis_ok_ = false;
  std::string cis_why_;
  std::vector<CoefficientPair> h_table_, e_table_;
  std::array<std::vector<std::uint16_t>, 3> h_index_, e_index_;
  bool material_in_pml_ = false;
};

}  // namespace vem
