// Mie series for a plane wave on a homogeneous (lossy) non-magnetic sphere in vacuum: the
// analytical reference of the FDFD and FDTD validations.
//
// Conventions. This project uses e^{+j w t}: a passive sphere has eps_r = eps' - j eps'' and
// refractive index m = n - j kappa (kappa >= 0), the convention of Wiscombe's MIEV0. Bohren &
// Huffman (BH, "Absorption and Scattering of Light by Small Particles", 1983) use e^{-i w t};
// internally the series is evaluated with BH's formulas for conj(m) and every complex output is
// conjugated back, so a_n, b_n, S1, S2 and the fields below are the complex conjugates of BH's
// (and equal MIEV0's S1, S2).
//
// Numerics (BH ch. 4 and app. A, Wiscombe 1980): the logarithmic derivative D_n(mx) by downward
// recurrence from n = max(nstop, |mx| + 10 |mx|^(1/3)) + 16 (BH's |mx| + 15 loses digits for
// large, nearly real mx), the Riccati-Bessel psi_n(x), chi_n(x) by upward recurrence,
// nstop = x + 4 x^(1/3) + 2. Internal fields use psi_n(m k r) / psi_n(m x) formed as
// a product of ratios, so they stay finite for absorbing spheres (|Im(m)| x up to ~ 600).
//
// Incident field for the fields and the RCS: E_inc = x_hat exp(-j k0 z), |E0| = 1 V/m, i.e. an
// x-polarized wave travelling along +z; the sphere is centred at the origin. E-plane = xz-plane
// (phi = 0), H-plane = yz-plane (phi = 90 deg); theta is measured from +z (0 = forward).
#pragma once

#include <array>
#include <complex>
#include <vector>

namespace vem {

class MieSphere {
 public:
  // radius (m) > 0, frequency (Hz) > 0, eps_r of the sphere (Re > 0 or lossy, Im <= 0).
  MieSphere(double radius, double frequency, std::complex<double> eps_r);
  // Dimensionless case: size parameter x = k0 a > 0 and refractive index m (Im(m) <= 0); the
  // length unit is 1/k0 (k0 = 1 m^-1, radius = x m).
  static MieSphere from_size_parameter(double x, std::complex<double> m);

  double radius() const { return a_; }
  double k0() const { return k0_; }
  double size_parameter() const { return x_; }
  std::complex<double> index() const { return m_; }
  int terms() const { return int(an_.size()); }  // nstop
  // Scattering coefficients, n = 1..terms() (e^{jwt} convention: conj of BH's).
  std::complex<double> a(int n) const { return std::conj(an_[n - 1]); }
  std::complex<double> b(int n) const { return std::conj(bn_[n - 1]); }

  // Efficiencies (cross-section / (pi a^2)); q_back is BH's 4 |S1(180 deg)|^2 / x^2, the
  // monostatic RCS over pi a^2.
  double q_ext() const { return qext_; }
  double q_sca() const { return qsca_; }
  double q_abs() const { return qext_ - qsca_; }
  double q_back() const { return qback_; }
  double asymmetry() const { return g_; }  // <cos theta>
  // Cross-sections, m^2.
  double sigma_ext() const { return qext_ * kPiA2(); }
  double sigma_sca() const { return qsca_ * kPiA2(); }
  double sigma_abs() const { return q_abs() * kPiA2(); }

  // Amplitude functions at scattering angle theta (rad), e^{jwt} convention (= MIEV0's).
  std::complex<double> s1(double theta) const;
  std::complex<double> s2(double theta) const;
  // Bistatic RCS (m^2) for the x-polarized incidence above: 4 pi (|S2|^2 cos^2 phi +
  // |S1|^2 sin^2 phi) / k0^2.
  double rcs(double theta, double phi) const;
  double rcs_e_plane(double theta) const { return rcs(theta, 0.0); }
  double rcs_h_plane(double theta) const;

  // Total electric field (V/m, e^{jwt} phasor, Cartesian components) at point r (m): the
  // internal field for |r| < a, incident + scattered outside.
  std::array<std::complex<double>, 3> e_field(const std::array<double, 3>& r) const;

 private:
  std::array<std::complex<double>, 2> s12(double theta) const;  // (S1, S2), one series sum
  MieSphere() = default;
  void compute();
  double kPiA2() const { return 3.14159265358979323846 * a_ * a_; }

  double a_ = 0, k0_ = 0, x_ = 0;
  std::complex<double> m_;       // e^{jwt} convention
  std::complex<double> mb_;      // BH convention: conj(m_)
  // BH-convention coefficients (index n-1): scattering a, b; internal c_n psi_n(mx), d_n psi_n(mx).
  std::vector<std::complex<double>> an_, bn_, chat_, dhat_, dmx_;
  double qext_ = 0, qsca_ = 0, qback_ = 0, g_ = 0;
};

}  // namespace vem
