// Small signal-processing helpers for the physics tests (written for this project, no external
// code): discrete-time Fourier transforms at arbitrary frequencies with the true sample times,
// a radix-2 FFT for coarse spectra, windows, and a high-resolution spectral-peak refinement.
//
// Conventions: X(f) = sum_n x_n w_n exp(-j 2 pi f t_n) dt with t_n = t_first + n dt. This is the
// exp(+j omega t) phasor convention used by the analytic formulas in the tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <functional>
#include <vector>

namespace vem_test {

using cplx = std::complex<double>;
constexpr double kTwoPi = 6.28318530717958647692;

// 4-term Blackman-Harris window (highest side lobe -92 dB, main-lobe half width 4 bins): the
// leakage of one resonance onto the peak of another a few bins away is below 1e-4 of a bin.
inline std::vector<double> blackman_harris(std::size_t n) {
  std::vector<double> w(n);
  const double a0 = 0.35875, a1 = 0.48829, a2 = 0.14128, a3 = 0.01168;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = kTwoPi * double(i) / double(n - 1);
    w[i] = a0 - a1 * std::cos(x) + a2 * std::cos(2 * x) - a3 * std::cos(3 * x);
  }
  return w;
}

// X(f) of samples x[first .. first+count) taken at t = t_first + n dt (n counted from `first`),
// optionally windowed (window.size() == count or empty for rectangular). The phasor is
// advanced by multiplication and re-anchored every 1024 samples, keeping it exact to ~1e-13.
template <class T>
cplx dtft(const std::vector<T>& x, std::size_t first, std::size_t count, double t_first,
          double dt, double f, const std::vector<double>& window = {}) {
  cplx sum = 0;
  const cplx rot = std::polar(1.0, -kTwoPi * f * dt);
  cplx ph = 0;
  for (std::size_t n = 0; n < count; ++n) {
    if (n % 1024 == 0) ph = std::polar(1.0, -kTwoPi * f * (t_first + double(n) * dt));
    const double w = window.empty() ? 1.0 : window[n];
    sum += double(x[first + n]) * w * ph;
    ph *= rot;
  }
  return sum * dt;
}

// In-place radix-2 complex FFT (forward, exp(-j...)); a.size() must be a power of two.
inline void fft(std::vector<cplx>& a) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const double ang = -kTwoPi / double(len);
    for (std::size_t i = 0; i < n; i += len) {
      for (std::size_t k = 0; k < len / 2; ++k) {
        const cplx w = std::polar(1.0, ang * double(k));
        const cplx u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
    }
  }
}

// A set of real time series sharing one time axis (several probes of one run).
struct Channels {
  std::vector<std::vector<double>> x;  // each normalized by the caller as wanted
  double dt = 0;
  std::vector<double> window;          // applied to every channel
};

// Power spectrum summed over channels, |X_c(f)|^2, from a zero-padded FFT: bin b is frequency
// b / (n_fft dt). Used to find the peaks coarsely.
inline std::vector<double> summed_power_spectrum(const Channels& ch, std::size_t n_fft) {
  std::vector<double> p(n_fft / 2, 0.0);
  for (const auto& x : ch.x) {
    std::vector<cplx> a(n_fft, 0.0);
    for (std::size_t n = 0; n < x.size(); ++n) a[n] = x[n] * (ch.window.empty() ? 1.0 : ch.window[n]);
    fft(a);
    for (std::size_t b = 0; b < n_fft / 2; ++b) p[b] += std::norm(a[b]);
  }
  return p;
}

// Local maxima of a spectrum above `floor` (absolute), as bin indices.
inline std::vector<std::size_t> local_maxima(const std::vector<double>& p, double floor) {
  std::vector<std::size_t> out;
  for (std::size_t b = 1; b + 1 < p.size(); ++b)
    if (p[b] > floor && p[b] >= p[b - 1] && p[b] > p[b + 1]) out.push_back(b);
  return out;
}

// Summed windowed power S(f) = sum_c |X_c(f)|^2 at an arbitrary frequency.
inline double summed_power(const Channels& ch, double f) {
  double s = 0;
  for (const auto& x : ch.x) s += std::norm(dtft(x, 0, x.size(), 0.0, ch.dt, f, ch.window));
  return s;
}

// Maximizes a unimodal function on [a, b] by golden-section search to an interval of `tol`.
inline double golden_max(const std::function<double(double)>& fn, double a, double b, double tol) {
  const double r = 0.5 * (std::sqrt(5.0) - 1.0);
  double c = b - r * (b - a), d = a + r * (b - a);
  double fc = fn(c), fd = fn(d);
  while (b - a > tol) {
    if (fc > fd) {
      b = d; d = c; fd = fc;
      c = b - r * (b - a); fc = fn(c);
    } else {
      a = c; c = d; fc = fd;
      d = a + r * (b - a); fd = fn(d);
    }
  }
  return 0.5 * (a + b);
}

// Frequency of the spectral peak near f_coarse: the maximum of the continuous windowed DTFT power
// (the exact frequency of an undamped sinusoid for a symmetric window, up to leakage from other
// components), searched within +-half_width and located to `tol` Hz.
inline double refine_peak(const Channels& ch, double f_coarse, double half_width, double tol) {
  return golden_max([&](double f) { return summed_power(ch, f); }, f_coarse - half_width,
                    f_coarse + half_width, tol);
}

}  // namespace vem_test
