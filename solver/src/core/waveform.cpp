#include "vem/core/waveform.h"

#include <cmath>

#include "vem/core/error.h"
#include "vem/core/yee_grid.h"

namespace vem {

double Waveform::value(double t) const {
  switch (kind) {
    case Kind::gaussian: {
      const double x = (t - t0) / tau;
      return std::exp(-x * x);
    }
    case Kind::differentiated_gaussian: {
      const double x = (t - t0) / tau;
      return -std::sqrt(2.0 * std::exp(1.0)) * x * std::exp(-x * x);
    }
    case Kind::modulated_gaussian: {
      const double x = (t - t0) / tau;
      return std::exp(-x * x) * std::sin(2.0 * kPi * f0 * (t - t0));
    }
    case Kind::sinusoid: {
      if (t <= 0) return 0.0;
      const double tr = ramp_periods / f0;
      const double ramp = (tr > 0 && t < tr) ? 0.5 * (1.0 - std::cos(kPi * t / tr)) : 1.0;
      return ramp * std::sin(2.0 * kPi * f0 * t);
    }
  }
  return 0.0;
}

void Waveform::validate() const {
  if (kind != Kind::sinusoid && (!std::isfinite(tau) || tau <= 0))
    fail("waveform ", waveform_name(kind), ": tau = ", tau, " s must be finite and > 0");
  if (!std::isfinite(t0)) fail("waveform ", waveform_name(kind), ": t0 is not finite");
  if ((kind == Kind::modulated_gaussian || kind == Kind::sinusoid) && (!std::isfinite(f0) || f0 <= 0))
    fail("waveform ", waveform_name(kind), ": frequency f0 = ", f0, " Hz must be finite and > 0");
  if (kind == Kind::sinusoid && (!std::isfinite(ramp_periods) || ramp_periods < 0))
    fail("waveform sinusoid: ramp_periods = ", ramp_periods, " must be finite and >= 0");
}

Waveform Waveform::gaussian_for_bandwidth(double f_max) {
  if (!(f_max > 0) || !std::isfinite(f_max)) fail("Gaussian bandwidth f_max = ", f_max, " Hz must be > 0");
  Waveform w;
  w.kind = Kind::gaussian;
  w.tau = std::sqrt(std::log(10.0)) / (kPi * f_max);  // spectrum at f_max is 10% (-20 dB)
  w.t0 = 4.5 * w.tau;
  return w;
}

Waveform Waveform::differentiated_gaussian_for_bandwidth(double f_max) {
  Waveform w = gaussian_for_bandwidth(f_max);
  w.kind = Kind::differentiated_gaussian;
  return w;
}

Waveform Waveform::modulated_gaussian(double f0, double bandwidth) {
  if (!(f0 > 0) || !(bandwidth > 0)) fail("modulated Gaussian needs f0 > 0 and bandwidth > 0");
  Waveform w;
  w.kind = Kind::modulated_gaussian;
  w.f0 = f0;
  w.tau = 2.0 * std::sqrt(std::log(10.0)) / (kPi * bandwidth);
  w.t0 = 4.5 * w.tau;
  return w;
}

Waveform Waveform::sinusoid(double f0, double ramp_periods) {
  if (!(f0 > 0)) fail("sinusoid frequency f0 = ", f0, " Hz must be > 0");
  Waveform w;
  w.kind = Kind::sinusoid;
  w.f0 = f0;
  w.ramp_periods = ramp_periods;
  return w;
}

const char* waveform_name(Waveform::Kind k) {
  switch (k) {
    case Waveform::Kind::gaussian: return "gaussian";
    case Waveform::Kind::differentiated_gaussian: return "differentiated_gaussian";
    case Waveform::Kind::modulated_gaussian: return "modulated_gaussian";
    case Waveform::Kind::sinusoid: return "sinusoid";
  }
  return "?";
}

Waveform::Kind waveform_from_name(const std::string& name) {
  for (auto k : {Waveform::Kind::gaussian, Waveform::Kind::differentiated_gaussian,
                 Waveform::Kind::modulated_gaussian, Waveform::Kind::sinusoid})
    if (name == waveform_name(k)) return k;
  fail("unknown waveform '", name,
       "' (expected gaussian, differentiated_gaussian, modulated_gaussian or sinusoid)");
}

}  // namespace vem
