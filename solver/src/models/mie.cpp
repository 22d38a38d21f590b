// Mie series (see mie.h). Formulas: Bohren & Huffman (1983) eqs. 4.50-4.53, 4.56-4.62, 4.74 and
// their BHMIE program (app. A), evaluated for the BH-convention index conj(m).
#include "vem/models/mie.h"

#include <algorithm>
#include <cmath>

#include "vem/core/error.h"
#include "vem/core/yee_grid.h"

namespace vem {

namespace {

using cd = std::complex<double>;
constexpr cd kI{0.0, 1.0};

// Logarithmic derivative D_n(z) = psi_n'(z) / psi_n(z), n = 0..nmax, by downward recurrence.
std::vector<cd> log_derivative(cd z, int nmax) {
  // Start well above |z|: for nearly real z the downward recurrence damps errors only for
  // n > |z|, through a transition region of width ~ |z|^(1/3) (BH's |z| + 15 is not enough for
  // x = 100, m = 1.33: Wiscombe's case 10 then misses Q_sca in the 5th digit).
  const double az = std::abs(z);
  const int start = std::max(nmax, int(az + 10.0 * std::cbrt(az))) + 16;
  std::vector<cd> d(start + 1, 0.0);
  for (int n = start; n >= 1; --n) {
    const cd nz = double(n) / z;
    d[n - 1] = nz - 1.0 / (d[n] + nz);
  }
  d.resize(nmax + 1);
  return d;
}

// sin(z1) / sin(z2) for Im z >= 0 without overflow: sin z = -e^{-iz} (1 - e^{2iz}) / (2i).
cd sin_ratio(cd z1, cd z2) {
  return std::exp(-kI * (z1 - z2)) * (1.0 - std::exp(2.0 * kI * z1)) /
         (1.0 - std::exp(2.0 * kI * z2));
}

}  // namespace

MieSphere::MieSphere(double radius, double frequency, cd eps_r) {
  if (!std::isfinite(radius) || radius <= 0) fail("Mie: sphere radius = ", radius, " m must be > 0");
  if (!std::isfinite(frequency) || frequency <= 0)
    fail("Mie: frequency = ", frequency, " Hz must be > 0");
  if (!std::isfinite(eps_r.real()) || !std::isfinite(eps_r.imag()) || eps_r.imag() > 0 ||
      eps_r == cd(0.0))
    fail("Mie: eps_r = ", eps_r, " must be finite, non-zero, with Im(eps_r) <= 0 (e^{jwt})");
  a_ = radius;
  k0_ = 2.0 * kPi * frequency / kC0;
  x_ = k0_ * a_;
  m_ = std::sqrt(eps_r);  // principal root: Re > 0, Im <= 0 for Im(eps) <= 0
  compute();
}

MieSphere MieSphere::from_size_parameter(double x, cd m) {
  if (!std::isfinite(x) || x <= 0) fail("Mie: size parameter x = ", x, " must be > 0");
  if (!std::isfinite(m.real()) || !std::isfinite(m.imag()) || m.imag() > 0 || m == cd(0.0))
    fail("Mie: refractive index m = ", m, " must be finite, non-zero, Im(m) <= 0 (e^{jwt})");
  MieSphere s;
  s.k0_ = 1.0;
  s.a_ = x;
  s.x_ = x;
  s.m_ = m;
  s.compute();
  return s;
}

void MieSphere::compute() {
  mb_ = std::conj(m_);
  const double x = x_;
  const int nstop = int(x + 4.0 * std::cbrt(x) + 2.0);
  const cd y = mb_ * x;
  dmx_ = log_derivative(y, nstop);
  an_.assign(nstop, 0.0);
  bn_.assign(nstop, 0.0);
  chat_.assign(nstop, 0.0);
  dhat_.assign(nstop, 0.0);
  // psi_{-1} = cos x, psi_0 = sin x; chi_{-1} = -sin x, chi_0 = cos x; xi = psi - i chi.
  double psi0 = std::cos(x), psi1 = std::sin(x);
  double chi0 = -std::sin(x), chi1 = std::cos(x);
  cd xi1(psi1, -chi1);
  for (int n = 1; n <= nstop; ++n) {
    const double fn = 2.0 * n - 1.0;
    const double psi = fn * psi1 / x - psi0;
    const double chi = fn * chi1 / x - chi0;
    const cd xi(psi, -chi);
    const cd dn = dmx_[n];
    const cd ta = dn / mb_ + double(n) / x;
    const cd tb = mb_ * dn + double(n) / x;
    an_[n - 1] = (ta * psi - psi1) / (ta * xi - xi1);
    bn_[n - 1] = (tb * psi - psi1) / (tb * xi - xi1);
    const cd dxi = xi1 - double(n) * xi / x;  // xi_n'(x)
    chat_[n - 1] = kI * mb_ / (dxi - mb_ * dn * xi);
    dhat_[n - 1] = kI * mb_ / (mb_ * dxi - dn * xi);
    psi0 = psi1; psi1 = psi;
    chi0 = chi1; chi1 = chi;
    xi1 = xi;
  }
  double sext = 0, ssca = 0, gsum = 0;
  cd back = 0;
  for (int n = 1; n <= nstop; ++n) {
    const cd an = an_[n - 1], bn = bn_[n - 1];
    const double w = 2.0 * n + 1.0;
    sext += w * (an + bn).real();
    ssca += w * (std::norm(an) + std::norm(bn));
    back += w * (n % 2 ? -1.0 : 1.0) * (an - bn);
    gsum += w / (double(n) * (n + 1)) * (an * std::conj(bn)).real();
    if (n < nstop) {
      const cd an1 = an_[n], bn1 = bn_[n];
      gsum += double(n) * (n + 2) / (n + 1.0) *
              (an * std::conj(an1) + bn * std::conj(bn1)).real();
    }
  }
  qext_ = 2.0 * sext / (x * x);
  qsca_ = 2.0 * ssca / (x * x);
  qback_ = std::norm(back) / (x * x);
  g_ = qsca_ > 0 ? 4.0 * gsum / (x * x * qsca_) : 0.0;
}

std::array<cd, 2> MieSphere::s12(double theta) const {
  const double mu = std::cos(theta);
  double pi0 = 0, pi1 = 1;
  cd s1 = 0, s2 = 0;
  for (int n = 1; n <= terms(); ++n) {
    const double tau = n * mu * pi1 - (n + 1) * pi0;
    const double fn = (2.0 * n + 1.0) / (double(n) * (n + 1));
    s1 += fn * (an_[n - 1] * pi1 + bn_[n - 1] * tau);
    s2 += fn * (an_[n - 1] * tau + bn_[n - 1] * pi1);
    const double p = ((2.0 * n + 1.0) * mu * pi1 - (n + 1.0) * pi0) / n;
    pi0 = pi1;
    pi1 = p;
  }
  return {std::conj(s1), std::conj(s2)};
}

cd MieSphere::s1(double theta) const { return s12(theta)[0]; }

cd MieSphere::s2(double theta) const { return s12(theta)[1]; }

double MieSphere::rcs(double theta, double phi) const {
  const double c = std::cos(phi), s = std::sin(phi);
  const auto sa = s12(theta);
  return 4.0 * kPi * (std::norm(sa[1]) * c * c + std::norm(sa[0]) * s * s) / (k0_ * k0_);
}

double MieSphere::rcs_h_plane(double theta) const { return rcs(theta, 0.5 * kPi); }

std::array<cd, 3> MieSphere::e_field(const std::array<double, 3>& rv) const {
  double r = std::sqrt(rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]);
  double theta = 0, phi = 0;
  if (r < 1e-9 * a_) {
    r = 1e-9 * a_;  // the centre: the limit along +z
  } else {
    theta = std::acos(std::clamp(rv[2] / r, -1.0, 1.0));
    phi = std::atan2(rv[1], rv[0]);
  }
  const int nstop = terms();
  const double mu = std::cos(theta), st = std::sin(theta);
  const double cp = std::cos(phi), sp = std::sin(phi);
  std::vector<double> pin(nstop + 1), taun(nstop + 1);
  {
    double pi0 = 0, pi1 = 1;
    for (int n = 1; n <= nstop; ++n) {
      pin[n] = pi1;
      taun[n] = n * mu * pi1 - (n + 1) * pi0;
      const double p = ((2.0 * n + 1.0) * mu * pi1 - (n + 1.0) * pi0) / n;
      pi0 = pi1;
      pi1 = p;
    }
  }
  cd er = 0, et = 0, ep = 0;  // spherical components (BH convention)
  cd in = 1.0;                // i^n
  if (r < a_) {
    const cd rho = mb_ * k0_ * r;
    const cd y = mb_ * x_;
    const std::vector<cd> drho = log_derivative(rho, nstop);
    cd ratio = sin_ratio(rho, y);  // psi_n(rho) / psi_n(m x), n = 0
    for (int n = 1; n <= nstop; ++n) {
      in *= kI;
      ratio *= (dmx_[n] + double(n) / y) / (drho[n] + double(n) / rho);
      const cd en = in * (2.0 * n + 1.0) / (double(n) * (n + 1));
      // c_n j_n(rho) and c_n [rho j_n]'/rho; same for d_n.
      const cd cz = chat_[n - 1] * ratio / rho;
      const cd dz = dhat_[n - 1] * ratio / rho;
      const cd dzp = dhat_[n - 1] * drho[n] * ratio / rho;
      // c_n M_o1n - i d_n N_e1n
      er += en * (-kI) * (cp * double(n) * (n + 1) * st * pin[n] * dz / rho);
      et += en * (cp * pin[n] * cz - kI * cp * taun[n] * dzp);
      ep += en * (-sp * taun[n] * cz + kI * sp * pin[n] * dzp);
    }
  } else {
    const double rho = k0_ * r;
    double psi0 = std::cos(rho), psi1 = std::sin(rho);
    double chi0 = -std::sin(rho), chi1 = std::cos(rho);
    cd xi1(psi1, -chi1);
    for (int n = 1; n <= nstop; ++n) {
      in *= kI;
      const double fn = 2.0 * n - 1.0;
      const double psi = fn * psi1 / rho - psi0;
      const double chi = fn * chi1 / rho - chi0;
      const cd xi(psi, -chi);
      const cd dxi = xi1 - double(n) * xi / rho;
      const cd h = xi / rho, hp = dxi / rho;  // h_n(rho), [rho h_n]'/rho
      const cd en = in * (2.0 * n + 1.0) / (double(n) * (n + 1));
      const cd an = an_[n - 1], bn = bn_[n - 1];
      // i a_n N_e1n - b_n M_o1n
      er += en * kI * an * (cp * double(n) * (n + 1) * st * pin[n] * h / rho);
      et += en * (kI * an * cp * taun[n] * hp - bn * cp * pin[n] * h);
      ep += en * (-kI * an * sp * pin[n] * hp + bn * sp * taun[n] * h);
      psi0 = psi1; psi1 = psi;
      chi0 = chi1; chi1 = chi;
      xi1 = xi;
    }
  }
  std::array<cd, 3> e{er * st * cp + et * mu * cp - ep * sp, er * st * sp + et * mu * sp + ep * cp,
                      er * mu - et * st};
  if (r >= a_) e[0] += std::exp(kI * k0_ * rv[2]);  // incident x_hat e^{ikz} (BH)
  for (auto& v : e) v = std::conj(v);
  return e;
}

}  // namespace vem
