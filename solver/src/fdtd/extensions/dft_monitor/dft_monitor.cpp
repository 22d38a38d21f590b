// Running DFT monitors (dft_monitor.h): the operator-side bookkeeping and the CPU accumulation.
// The CUDA accumulation is in dft_monitor_cuda.cu.
#include "vem/fdtd/extensions/dft_monitor.h"

#include <algorithm>
#include <cmath>

#include "fdtd/engine_common.h"
#include "vem/core/error.h"

namespace vem {

namespace {

constexpr int kMaxDftFrequencies = 64;

class DftCpu final : public DftMonitor::Backend {
 public:
  DftCpu(const FdtdOperator& op, int nf, int nc, std::array<int, 3> lo, std::array<int, 3> dims)
      : op_(op), nf_(nf), lo_(lo), dims_(dims) {
    nbox_ = std::size_t(dims[0]) * dims[1] * dims[2];
    acc_.assign(std::size_t(nc) * nf * nbox_ * 2, 0.0f);
  }
  void accumulate(FdtdEngine& eng, int slot, Component c, const float* wr, const float* wi) override {
    const FieldLayout& L = op_.layout();
    const float* F = eng.raw_field(c);
    float* acc = acc_.data() + std::size_t(slot) * nf_ * nbox_ * 2;
    const int nf = nf_;
    const std::size_t nbox = nbox_;
    const int d0 = dims_[0], d1 = dims_[1], d2 = dims_[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int kk = 0; kk < d2; ++kk)
      for (int jj = 0; jj < d1; ++jj) {
        const std::int64_t row = L.at(lo_[0], lo_[1] + jj, lo_[2] + kk);
        const std::size_t b0 = std::size_t(d0) * (jj + std::size_t(d1) * kk);
        for (int ii = 0; ii < d0; ++ii) {
          const float v = F[row + ii];
          if (v == 0.0f) continue;
          for (int f = 0; f < nf; ++f) {
            float* a = acc + 2 * (f * nbox + b0 + ii);
            a[0] += v * wr[f];
            a[1] += v * wi[f];
          }
        }
      }
  }
  std::vector<std::complex<float>> read(int slot, int f) const override {
    return copy_out(acc_, slot, f);
  }
  std::vector<std::complex<float>> read_phasor(int slot, int f) const override {
    return copy_out(p_, slot, f);
  }
  const std::complex<float>* phasor_data(int slot, int f) const override {
    return reinterpret_cast<const std::complex<float>*>(p_.data() + 2 * ((std::size_t(slot) * nf_ + f) * nbox_));
  }
  void window(bool first, double scale, std::vector<double>& out) override {
    if (first) {
      s_prev_ = acc_;
      p_.assign(acc_.size(), 0.0f);
      return;
    }
    const std::size_t chunks = acc_.size() / (2 * nbox_);  // slots x frequencies
    for (std::size_t q = 0; q < chunks; ++q) {
      const int f = int(q % nf_);
      const std::size_t o = q * nbox_ * 2;
      double num = 0, den = 0, s2 = 0;
#pragma omp parallel for reduction(+ : num, den, s2) schedule(static)
      for (std::int64_t i = 0; i < std::int64_t(nbox_); ++i) {
        const std::size_t a = o + 2 * i;
        const double sr = acc_[a], si = acc_[a + 1];
        const float pr = float(scale * (sr - s_prev_[a])), pi = float(scale * (si - s_prev_[a + 1]));
        const double dr = double(pr) - p_[a], di = double(pi) - p_[a + 1];
        num += dr * dr + di * di;
        den += double(pr) * pr + double(pi) * pi;
        s2 += sr * sr + si * si;
        p_[a] = pr;
        p_[a + 1] = pi;
        s_prev_[a] = acc_[a];
        s_prev_[a + 1] = acc_[a + 1];
      }
      out[3 * f] += num;
      out[3 * f + 1] += den;
      out[3 * f + 2] += s2;
    }
  }

 private:
  const FdtdOperator& op_;
  int nf_;
  std::array<int, 3> lo_, dims_;
  std::vector<std::complex<float>> copy_out(const std::vector<float>& v, int slot, int f) const {
    std::vector<std::complex<float>> out(nbox_);
    const float* a = v.data() + 2 * ((std::size_t(slot) * nf_ + f) * nbox_);
    for (std::size_t q = 0; q < nbox_; ++q) out[q] = {a[2 * q], a[2 * q + 1]};
    return out;
  }
  std::size_t nbox_ = 0;
  std::vector<float> acc_, s_prev_, p_;  // interleaved re/im, [slot][f][sample]
};

}  // namespace

DftMonitor::DftMonitor(FdtdEngine& engine, std::vector<double> frequencies_hz,
                       std::vector<Component> components, const DftBox& box, int sample_interval)
    : engine_(&engine), freqs_(std::move(frequencies_hz)), comps_(std::move(components)),
      interval_(sample_interval) {
  if (sample_interval < 1)
    fail("DFT monitor: sample interval ", sample_interval, " steps must be >= 1");
  if (freqs_.empty()) fail("DFT monitor: no frequencies given");
  if (int(freqs_.size()) > kMaxDftFrequencies)
    fail("DFT monitor: ", freqs_.size(), " frequencies requested; at most ", kMaxDftFrequencies,
         " per monitor (use several monitors)");
  for (double f : freqs_)
    if (!(f > 0) || !std::isfinite(f)) fail("DFT monitor: frequency ", f, " Hz must be finite and > 0");
  if (comps_.empty()) fail("DFT monitor: no field components given");
  for (std::size_t a = 0; a < comps_.size(); ++a)
    for (std::size_t b = a + 1; b < comps_.size(); ++b)
      if (comps_[a] == comps_[b]) fail("DFT monitor: component ", component_name(comps_[a]), " listed twice");
  const YeeGrid& g = engine.op().grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int a = 0; a < 3; ++a) {
    lo_[a] = box.lo[a];
    hi_[a] = box.hi[a] < 0 ? n[a] : box.hi[a];
    if (lo_[a] < 0 || hi_[a] > n[a] || lo_[a] > hi_[a])
      fail("DFT monitor: box ", "xyz"[a], " range [", box.lo[a], ", ", box.hi[a],
           "] is not inside the sample range [0, ", n[a], "]");
  }
  const auto dims = box_dims();
  if (engine.fields_on_device()) {
#ifdef VEM_WITH_CUDA
    backend_ = make_dft_backend_cuda(engine.op(), int(freqs_.size()), int(comps_.size()), lo_, dims);
#else
    fail("DFT monitor: engine keeps fields on a device but the library was built without CUDA");
#endif
  } else {
    backend_ = std::make_unique<DftCpu>(engine.op(), int(freqs_.size()), int(comps_.size()), lo_, dims);
  }
  t_prev_ = engine.time_of_e();
  engine.add_extension(this);
}

DftMonitor::~DftMonitor() { engine_->remove_extension(this); }

void DftMonitor::hook(FdtdEngine& eng, HookPoint where, int step) {
  if (where != HookPoint::end_of_step) return;
  ++steps_;
  if ((step + 1) % interval_ != 0) return;
  const double dt = eng.op().dt() * interval_;  // the weight of one sample
  const double dt_step = eng.op().dt();
  float wr[kMaxDftFrequencies], wi[kMaxDftFrequencies];
  for (std::size_t s = 0; s < comps_.size(); ++s) {
    const double t = is_electric(comps_[s]) ? (step + 1.0) * dt_step : (step + 0.5) * dt_step;
    for (std::size_t f = 0; f < freqs_.size(); ++f) {
      const double ph = 2.0 * kPi * freqs_[f] * t;
      wr[f] = float(std::cos(ph) * dt);
      wi[f] = float(-std::sin(ph) * dt);
    }
    backend_->accumulate(eng, int(s), comps_[s], wr, wi);
  }
  ++samples_;
}

int DftMonitor::nyquist_interval(double dt, double f_max, double samples_per_period) {
  if (!(dt > 0) || !(f_max > 0) || !(samples_per_period >= 2))
    fail("DFT monitor: nyquist_interval needs dt > 0, f_max > 0 and at least 2 samples per period (got dt ",
         dt, " s, f_max ", f_max, " Hz, ", samples_per_period, ")");
  return std::max(1, int(std::floor(1.0 / (f_max * dt * samples_per_period))));
}

int DftMonitor::slot_of(Component c) const {
  for (std::size_t s = 0; s < comps_.size(); ++s)
    if (comps_[s] == c) return int(s);
  fail("DFT monitor: component ", component_name(c), " is not monitored");
}

void DftMonitor::zero_missing(Component c, std::vector<std::complex<float>>& v) const {
  const YeeGrid& g = engine_->op().grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  const auto d = box_dims();
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < d[2]; ++k)
    for (int j = 0; j < d[1]; ++j)
      for (int i = 0; i < d[0]; ++i) {
        const int idx[3] = {lo_[0] + i, lo_[1] + j, lo_[2] + k};
        bool ok = true;
        for (int a = 0; a < 3; ++a) ok = ok && sample_exists(c, a, idx[a], n);
        if (!ok) v[i + std::size_t(d[0]) * (j + std::size_t(d[1]) * k)] = 0.0f;
      }
}

std::vector<std::complex<float>> DftMonitor::box_spectrum(Component c, int fi) const {
  if (fi < 0 || fi >= int(freqs_.size()))
    fail("DFT monitor: frequency index ", fi, " out of range (", freqs_.size(), " frequencies)");
  std::vector<std::complex<float>> v = backend_->read(slot_of(c), fi);
  zero_missing(c, v);
  return v;
}

std::vector<std::complex<float>> DftMonitor::to_compact(Component, std::vector<std::complex<float>> box) const {
  const YeeGrid& g = engine_->op().grid();
  const std::size_t sx = g.nx + 1, sy = g.ny + 1;
  const auto d = box_dims();
  if (lo_ == std::array<int, 3>{0, 0, 0} && d == std::array<int, 3>{g.nx + 1, g.ny + 1, g.nz + 1}) return box;
  std::vector<std::complex<float>> out(sx * sy * (g.nz + 1), 0.0f);
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < d[2]; ++k)
    for (int j = 0; j < d[1]; ++j)
      for (int i = 0; i < d[0]; ++i)
        out[(lo_[0] + i) + sx * ((lo_[1] + j) + sy * (lo_[2] + k))] =
            box[i + std::size_t(d[0]) * (j + std::size_t(d[1]) * k)];
  return out;
}

std::vector<std::complex<float>> DftMonitor::spectrum(Component c, int fi) const {
  return to_compact(c, box_spectrum(c, fi));
}

void DftMonitor::require_phasor(int fi) const {
  if (checks_ < 2)
    fail("DFT monitor: no steady-state window yet (call check_steady_state() at least twice)");
  if (fi < 0 || fi >= int(freqs_.size()))
    fail("DFT monitor: frequency index ", fi, " out of range (", freqs_.size(), " frequencies)");
}

std::vector<std::complex<float>> DftMonitor::box_phasor(Component c, int fi) const {
  require_phasor(fi);
  std::vector<std::complex<float>> box = backend_->read_phasor(slot_of(c), fi);
  zero_missing(c, box);  // as box_spectrum does
  return box;
}

const std::complex<float>* DftMonitor::phasor_data(Component c, int fi) const {
  require_phasor(fi);
  return backend_->phasor_data(slot_of(c), fi);
}

std::vector<std::complex<float>> DftMonitor::phasor(Component c, int fi) const {
  return to_compact(c, box_phasor(c, fi));
}

double DftMonitor::steps_per_period(int fi) const {
  return 1.0 / (freqs_.at(fi) * engine_->op().dt());
}

SteadyStateCheck DftMonitor::check_steady_state() {
  const double t_now = engine_->time_of_e();
  const std::size_t nf = freqs_.size();
  SteadyStateCheck r;
  if (checks_ == 0) {
    std::vector<double> unused;
    backend_->window(true, 0.0, unused);
  } else {
    const double win = t_now - t_prev_;
    if (!(win > 0)) fail("DFT monitor: check_steady_state() called twice without stepping");
    r.window_s = win;
    std::vector<double> sums(3 * nf, 0.0);
    backend_->window(false, 2.0 / win, sums);
    r.spectrum_change = 0;
    for (std::size_t f = 0; f < nf; ++f) {
      const double num = sums[3 * f], den = sums[3 * f + 1], s2 = sums[3 * f + 2];
      // ||S - S_prev||^2 = ||P||^2 (win / 2)^2
      const double ds2 = den * (0.5 * win) * (0.5 * win);
      r.spectrum_change = std::max(r.spectrum_change, s2 > 0 ? std::sqrt(ds2 / s2) : (ds2 > 0 ? 1.0 : 0.0));
      if (checks_ >= 2) {
        r.has_previous = true;
        const double rc = den > 0 ? std::sqrt(num / den) : (num > 0 ? 1.0 : 0.0);
        r.relative_change = f == 0 ? rc : std::max(r.relative_change, rc);
      }
    }
  }
  t_prev_ = t_now;
  ++checks_;
  return r;
}

}  // namespace vem
