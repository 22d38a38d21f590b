// HarmonicCurrentSource (harmonic_current.h): amplitudes S = cb J in the field layout and the CPU
// update. CUDA: cuda/harmonic_current_cuda.cu.
#include "vem/harmonic_current.h"

#include <cmath>

#include "vem/error.h"

namespace vem {

namespace {

class HarmonicCurrentCpu final : public HarmonicCurrentSource::Backend {
 public:
  explicit HarmonicCurrentCpu(std::array<std::vector<float>, 3> s) : s_(std::move(s)) {}
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

HarmonicCurrentSource::HarmonicCurrentSource(FdtdEngine& engine, double frequency_hz,
                                             const std::array<std::vector<std::complex<float>>, 3>& j,
                                             double ramp_periods)
    : engine_(&engine), f_(frequency_hz), ramp_periods_(ramp_periods) {
  if (!(frequency_hz > 0) || !std::isfinite(frequency_hz))
    fail("harmonic current source: frequency ", frequency_hz, " Hz must be finite and > 0");
  if (!(ramp_periods >= 0) || !std::isfinite(ramp_periods))
    fail("harmonic current source: ramp_periods ", ramp_periods, " must be finite and >= 0");
  const FdtdOperator& op = engine.op();
  const YeeGrid& g = op.grid();
  const FieldLayout& L = op.layout();
  const std::size_t compact = std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  std::array<std::vector<float>, 3> s;
  for (int c = 0; c < 3; ++c) {
    if (j[c].size() != compact)
      fail("harmonic current source: J_", "xyz"[c], " has ", j[c].size(), " samples, expected ",
           compact, " = (nx+1)(ny+1)(nz+1)");
    s[c].assign(2 * std::size_t(L.size), 0.0f);
    const Component cc = Component(c);
    const int i0 = op.range_lo(cc, 0), i1 = op.range_hi(cc, 0);
    const int j0 = op.range_lo(cc, 1), j1 = op.range_hi(cc, 1);
    const int k0 = op.range_lo(cc, 2), k1 = op.range_hi(cc, 2);
    float* out = s[c].data();
    const std::complex<float>* in = j[c].data();
    for (std::size_t q = 0; q < compact; ++q)
      if (!std::isfinite(in[q].real()) || !std::isfinite(in[q].imag()))
        fail("harmonic current source: J_", "xyz"[c], " at compact index ", q, " (i = ", q % (g.nx + 1),
             ", j = ", (q / (g.nx + 1)) % (g.ny + 1), ", k = ", q / (std::size_t(g.nx + 1) * (g.ny + 1)),
             ") is not finite");
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = k0; k <= k1; ++k)
      for (int jj = j0; jj <= j1; ++jj)
        for (int i = i0; i <= i1; ++i) {
          const std::complex<float> v = in[i + std::size_t(g.nx + 1) * (jj + std::size_t(g.ny + 1) * k)];
          if (v == std::complex<float>(0.0f)) continue;
          const float cb = op.coefficients_at(cc, i, jj, k)[1];
          const std::int64_t o = L.at(i, jj, k);
          out[2 * o] = cb * v.real();
          out[2 * o + 1] = cb * v.imag();
        }
  }
  attach(std::move(s));
}

HarmonicCurrentSource::HarmonicCurrentSource(FdtdEngine& engine, double frequency_hz, double ramp_periods)
    : engine_(&engine), f_(frequency_hz), ramp_periods_(ramp_periods) {
  if (!(frequency_hz > 0) || !std::isfinite(frequency_hz))
    fail("harmonic current source: frequency ", frequency_hz, " Hz must be finite and > 0");
  if (!(ramp_periods >= 0) || !std::isfinite(ramp_periods))
    fail("harmonic current source: ramp_periods ", ramp_periods, " must be finite and >= 0");
  attach({});  // zero amplitudes
}

void HarmonicCurrentSource::attach(std::array<std::vector<float>, 3> s) {
  FdtdEngine& engine = *engine_;
  const std::size_t n = 2 * std::size_t(engine.op().layout().size);  // floats per component
  if (engine.fields_on_device()) {
#ifdef VEM_WITH_CUDA
    backend_ = make_harmonic_current_backend_cuda(s, n);
#else
    fail("harmonic current source: engine keeps fields on a device but the library was built without CUDA");
#endif
  } else {
    for (auto& v : s)
      if (v.empty()) v.assign(n, 0.0f);
    backend_ = std::make_unique<HarmonicCurrentCpu>(std::move(s));
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
