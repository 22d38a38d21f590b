// HarmonicCurrentSource (harmonic_current.h): the amplitude arrays and the CPU update. CUDA:
// harmonic_current_cuda.cu.
#include "vem/fdtd/extensions/harmonic_current.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

class HarmonicCurrentCpu final : public HarmonicCurrentSource::Backend {
 public:
  explicit HarmonicCurrentCpu(std::size_t n) {
    for (auto& v : s_) v.assign(n, 0.0f);
  }
  float* amplitudes(int c) override { return s_[c].data(); }
  void apply(FdtdEngine& eng, float cr, float ci) override {
    for (int c = 0; c < 3; ++c) {
      float* E = eng.raw_field(Component(c));
      const float* s = s_[c].data();
      const std::int64_t n = std::int64_t(s_[c].size() / 2);
#pragma omp parallel for schedule(static)
      for (std::int64_t o = 0; o < n; ++o) E[o] -= s[2 * o] * cr - s[2 * o + 1] * ci;
    }
  }

 private:
  std::array<std::vector<float>, 3> s_;
};

}  // namespace

HarmonicCurrentSource::HarmonicCurrentSource(FdtdEngine& engine, double frequency_hz, double ramp_periods)
    : engine_(&engine), f_(frequency_hz), ramp_periods_(ramp_periods) {
  if (!(frequency_hz > 0) || !std::isfinite(frequency_hz))
    fail("harmonic current source: frequency ", frequency_hz, " Hz must be finite and > 0");
  if (!(ramp_periods >= 0) || !std::isfinite(ramp_periods))
    fail("harmonic current source: ramp_periods ", ramp_periods, " must be finite and >= 0");
  const std::size_t n = 2 * std::size_t(engine.op().layout().size);  // floats per component
  if (engine.fields_on_device()) {
#ifdef VEM_WITH_CUDA
    backend_ = make_harmonic_current_backend_cuda(n);
#else
    fail("harmonic current source: engine keeps fields on a device but the library was built without CUDA");
#endif
  } else {
    backend_ = std::make_unique<HarmonicCurrentCpu>(n);
  }
  const float* amp[3] = {backend_->amplitudes(0), backend_->amplitudes(1), backend_->amplitudes(2)};
  fused_ = engine.set_fused_e_source(amp);
  engine.add_extension(this);
}

HarmonicCurrentSource::~HarmonicCurrentSource() {
  if (fused_) engine_->set_fused_e_source(nullptr);
  engine_->remove_extension(this);
}

double HarmonicCurrentSource::ramp(double t) const {
  if (t <= 0) return 0.0;
  const double tr = ramp_periods_ / f_;
  if (!(tr > 0) || t >= tr) return 1.0;
  const double u = t / tr;
  return u - std::sin(2.0 * kPi * u) / (2.0 * kPi);
}

void HarmonicCurrentSource::hook(FdtdEngine& eng, HookPoint where, int step) {
  // Fused: the phase is handed to the engine before this step's E update; else the separate
  // pass runs after it.
  if (where != (fused_ ? HookPoint::after_h : HookPoint::after_e)) return;
  const double t = (step + 0.5) * eng.op().dt();
  const double r = ramp(t), ph = 2.0 * kPi * f_ * t;
  const float cr = float(r * std::cos(ph)), ci = float(r * std::sin(ph));
  if (fused_)
    eng.set_fused_e_source_phase(cr, ci);
  else
    backend_->apply(eng, cr, ci);
}

}  // namespace vem
