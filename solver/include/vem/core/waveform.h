// Source time functions. All times in seconds, frequencies in Hz. value(t) is dimensionless
// (multiplied by the source amplitude).
//   gaussian:                 exp(-((t - t0)/tau)^2)
//   differentiated_gaussian:  -sqrt(2e) (t - t0)/tau exp(-((t - t0)/tau)^2)   (peak 1)
//   modulated_gaussian:       exp(-((t - t0)/tau)^2) sin(2 pi f0 (t - t0))
//   sinusoid (CW):            ramp(t) sin(2 pi f0 t), ramp = smooth raised-cosine from 0 to 1
//                             over `ramp_periods` periods.
// make_* helpers choose tau and t0 from a bandwidth so the pulse starts smoothly (t0 = 4.5 tau,
// where the Gaussian is 1.6e-9 of its peak).
#pragma once

#include <string>

namespace vem {

struct Waveform {
  enum class Kind { gaussian, differentiated_gaussian, modulated_gaussian, sinusoid };
  Kind kind = Kind::gaussian;
  double tau = 0;     // s
  double t0 = 0;      // s
  double f0 = 0;      // Hz (modulated_gaussian, sinusoid)
  double ramp_periods = 3.0;

  double value(double t) const;
  void validate() const;

  // Gaussian whose spectrum stays above -20 dB of its peak up to f_max.
  static Waveform gaussian_for_bandwidth(double f_max);
  static Waveform differentiated_gaussian_for_bandwidth(double f_max);
  // Modulated Gaussian centred on f0 with -20 dB full bandwidth `bandwidth`.
  static Waveform modulated_gaussian(double f0, double bandwidth);
  static Waveform sinusoid(double f0, double ramp_periods = 3.0);
};

const char* waveform_name(Waveform::Kind k);
Waveform::Kind waveform_from_name(const std::string& name);

}  // namespace vem
