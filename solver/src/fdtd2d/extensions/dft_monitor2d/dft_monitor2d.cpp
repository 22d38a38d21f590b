// Running DFT of the 2D fields (dft_monitor2d.h): the bookkeeping (weights, steady-state windows)
// and the CPU accumulation; the CUDA accumulation implements dft2d::Backend in dft_monitor2d_cuda.cu.
// Definitions as in 3D (dft_monitor.cpp): S(f) = sum_n F(t_n) e^{-j 2 pi f t_n} dt_s (dt_s = dt times
// the sample interval), E at t = (step + 1) dt, H at (step + 1/2) dt; a CW steady-state window of
// length W gives the phasor P = (2 / W) (S(now) - S(previous check)).
#include "vem/fdtd2d/extensions/dft_monitor2d.h"

#include <algorithm>
#include <cmath>

#include "fdtd2d/extensions/dft_monitor2d/dft_monitor2d_backend.h"
#include "vem/core/error.h"

namespace vem {

namespace {

constexpr int kMaxFrequencies2d = 64;

class Dft2dCpu final : public dft2d::Backend {
 public:
  Dft2dCpu(const Fdtd2dOperator& op, int nf, int nc, std::array<int, 2> lo, std::array<int, 2> dims)
      : op_(op), nf_(nf), lo_(lo), dims_(dims), nbox_(std::size_t(dims[0]) * dims[1]) {
    acc_.assign(std::size_t(nc) * nf * nbox_ * 2, 0.0f);
  }
  void accumulate(Fdtd2dEngine& eng, int slot, Component c, const float* wr, const float* wi) override {
    const FieldLayout2D& L = op_.layout();
    const float* F = eng.raw_field(c);
    float* acc = acc_.data() + std::size_t(slot) * nf_ * nbox_ * 2;
    const int nf = nf_, d0 = dims_[0], d1 = dims_[1];
    const std::size_t nbox = nbox_;
#pragma omp parallel for schedule(static)
    for (int jj = 0; jj < d1; ++jj) {
      const std::int64_t row = L.at(lo_[0], lo_[1] + jj);
      for (int ii = 0; ii < d0; ++ii) {
        const float v = F[row + ii];
        if (v == 0.0f) continue;
        const std::size_t b = std::size_t(d0) * jj + ii;
        for (int f = 0; f < nf; ++f) {
          float* a = acc + 2 * (f * nbox + b);
          a[0] += v * wr[f];
          a[1] += v * wi[f];
        }
      }
    }
  }
  std::vector<std::complex<float>> read(int slot, int f) const override { return copy_out(acc_, slot, f); }
  std::vector<std::complex<float>> read_phasor(int slot, int f) const override { return copy_out(p_, slot, f); }
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
      for (std::size_t i = 0; i < nbox_; ++i) {
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
  std::vector<std::complex<float>> copy_out(const std::vector<float>& v, int slot, int f) const {
    std::vector<std::complex<float>> out(nbox_);
    if (v.empty()) return out;
    const float* a = v.data() + 2 * ((std::size_t(slot) * nf_ + f) * nbox_);
    for (std::size_t q = 0; q < nbox_; ++q) out[q] = {a[2 * q], a[2 * q + 1]};
    return out;
  }
  const Fdtd2dOperator& op_;
  int nf_;
  std::array<int, 2> lo_, dims_;
  std::size_t nbox_;
  std::vector<float> acc_, s_prev_, p_;  // interleaved re/im, [slot][f][sample]
};

}  // namespace

namespace dft2d {
std::unique_ptr<Backend> make_backend_cpu(const Fdtd2dOperator& op, int nf, int nc, std::array<int, 2> lo,
                                          std::array<int, 2> dims) {
  return std::make_unique<Dft2dCpu>(op, nf, nc, lo, dims);
}
}  // namespace dft2d

struct DftMonitor2d::Impl {
  Fdtd2dEngine* engine;
  std::vector<double> freqs;
  std::vector<Component> comps;
  std::array<int, 2> lo{}, hi{};
  int interval = 1;
  int steps = 0, checks = 0;
  double t_prev = 0;
  std::unique_ptr<dft2d::Backend> backend;

  std::array<int, 2> dims() const { return {hi[0] - lo[0] + 1, hi[1] - lo[1] + 1}; }
  int slot_of(Component c) const {
    for (std::size_t s = 0; s < comps.size(); ++s)
      if (comps[s] == c) return int(s);
    fail("DftMonitor2d: component ", component_name(c), " is not monitored");
  }
  void check_index(int fi) const {
    if (fi < 0 || fi >= int(freqs.size()))
      fail("DftMonitor2d: frequency index ", fi, " out of range (", freqs.size(), " frequencies)");
  }
  // Box values to the compact (nx+1)(ny+1) layout; 0 where the component has no sample.
  std::vector<std::complex<float>> compact(Component c, const std::vector<std::complex<float>>& box) const {
    const YeeGrid2D& g = engine->op().grid();
    const auto n = g.samples(c);
    const auto d = dims();
    std::vector<std::complex<float>> out(std::size_t(g.nx + 1) * (g.ny + 1), 0.0f);
    for (int j = 0; j < d[1]; ++j)
      for (int i = 0; i < d[0]; ++i) {
        const int gi = lo[0] + i, gj = lo[1] + j;
        if (gi < n[0] && gj < n[1]) out[gi + std::size_t(g.nx + 1) * gj] = box[i + std::size_t(d[0]) * j];
      }
    return out;
  }
};

DftMonitor2d::DftMonitor2d(Fdtd2dEngine& engine, std::vector<double> frequencies_hz, std::vector<Component> components,
                           const DftBox2D& box, int sample_interval)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.engine = &engine;
  m.freqs = std::move(frequencies_hz);
  m.comps = std::move(components);
  m.interval = sample_interval;
  if (sample_interval < 1) fail("DftMonitor2d: sample_interval = ", sample_interval, ": must be >= 1");
  if (m.freqs.empty()) fail("DftMonitor2d: frequencies = {}: give at least one");
  if (int(m.freqs.size()) > kMaxFrequencies2d)
    fail("DftMonitor2d: ", m.freqs.size(), " frequencies: at most ", kMaxFrequencies2d, " per monitor");
  for (std::size_t f = 0; f < m.freqs.size(); ++f)
    if (!std::isfinite(m.freqs[f]) || !(m.freqs[f] > 0))
      fail("DftMonitor2d: frequencies[", f, "] = ", m.freqs[f], " Hz: must be finite and > 0");
  if (m.comps.empty()) fail("DftMonitor2d: components = {}: give at least one");
  const Polarization2D pol = engine.op().polarization();
  for (std::size_t a = 0; a < m.comps.size(); ++a) {
    if (!in_polarization(m.comps[a], pol))
      fail("DftMonitor2d: components[", a, "] = ", component_name(m.comps[a]), ": not a field of ",
           polarization_name(pol));
    for (std::size_t b = a + 1; b < m.comps.size(); ++b)
      if (m.comps[a] == m.comps[b]) fail("DftMonitor2d: component ", component_name(m.comps[a]), " listed twice");
  }
  const YeeGrid2D& g = engine.op().grid();
  const int n[2] = {g.nx, g.ny};
  for (int a = 0; a < 2; ++a) {
    m.lo[a] = box.lo[a];
    m.hi[a] = box.hi[a] < 0 ? n[a] : box.hi[a];
    if (m.lo[a] < 0 || m.hi[a] > n[a] || m.lo[a] > m.hi[a])
      fail("DftMonitor2d: box ", "xy"[a], " range [", box.lo[a], ", ", box.hi[a], "]: must lie in [0, ", n[a], "]");
  }
  const int nf = int(m.freqs.size()), nc = int(m.comps.size());
  m.backend = engine.fields_on_device() ? dft2d::make_backend_cuda(engine.op(), nf, nc, m.lo, m.dims())
                                        : dft2d::make_backend_cpu(engine.op(), nf, nc, m.lo, m.dims());
  m.t_prev = engine.time_of_e();
  engine.add_extension(this);
}

DftMonitor2d::~DftMonitor2d() { impl_->engine->remove_extension(this); }

void DftMonitor2d::hook(Fdtd2dEngine& eng, HookPoint where, int step) {
  if (where != HookPoint::end_of_step) return;
  Impl& m = *impl_;
  ++m.steps;
  if ((step + 1) % m.interval != 0) return;
  const double dt = eng.op().dt();
  const double weight = dt * m.interval;
  float wr[kMaxFrequencies2d], wi[kMaxFrequencies2d];
  for (std::size_t s = 0; s < m.comps.size(); ++s) {
    const double t = is_electric(m.comps[s]) ? (step + 1.0) * dt : (step + 0.5) * dt;
    for (std::size_t f = 0; f < m.freqs.size(); ++f) {
      const double ph = 2.0 * kPi * m.freqs[f] * t;
      wr[f] = float(std::cos(ph) * weight);
      wi[f] = float(-std::sin(ph) * weight);
    }
    m.backend->accumulate(eng, int(s), m.comps[s], wr, wi);
  }
}

const std::vector<double>& DftMonitor2d::frequencies() const { return impl_->freqs; }
const std::vector<Component>& DftMonitor2d::components() const { return impl_->comps; }
int DftMonitor2d::steps_accumulated() const { return impl_->steps; }

std::vector<std::complex<float>> DftMonitor2d::spectrum(Component c, int fi) const {
  impl_->check_index(fi);
  return impl_->compact(c, impl_->backend->read(impl_->slot_of(c), fi));
}

std::vector<std::complex<float>> DftMonitor2d::phasor(Component c, int fi) const {
  if (impl_->checks < 2)
    fail("DftMonitor2d: no steady-state window yet (call check_steady_state() at least twice)");
  impl_->check_index(fi);
  return impl_->compact(c, impl_->backend->read_phasor(impl_->slot_of(c), fi));
}

double DftMonitor2d::steps_per_period(int fi) const {
  impl_->check_index(fi);
  return 1.0 / (impl_->freqs[fi] * impl_->engine->op().dt());
}

SteadyStateCheck DftMonitor2d::check_steady_state() {
  Impl& m = *impl_;
  const double t_now = m.engine->time_of_e();
  const std::size_t nf = m.freqs.size();
  SteadyStateCheck r;
  if (m.checks == 0) {
    std::vector<double> unused;
    m.backend->window(true, 0.0, unused);
  } else {
    const double win = t_now - m.t_prev;
    if (!(win > 0)) fail("DftMonitor2d: check_steady_state() called twice without stepping");
    r.window_s = win;
    std::vector<double> sums(3 * nf, 0.0);
    m.backend->window(false, 2.0 / win, sums);
    r.spectrum_change = 0;
    for (std::size_t f = 0; f < nf; ++f) {
      const double num = sums[3 * f], den = sums[3 * f + 1], s2 = sums[3 * f + 2];
      const double ds2 = den * (0.5 * win) * (0.5 * win);  // ||S - S_prev||^2 = ||P||^2 (W/2)^2
      r.spectrum_change = std::max(r.spectrum_change, s2 > 0 ? std::sqrt(ds2 / s2) : (ds2 > 0 ? 1.0 : 0.0));
      if (m.checks >= 2) {
        r.has_previous = true;
        const double rc = den > 0 ? std::sqrt(num / den) : (num > 0 ? 1.0 : 0.0);
        r.relative_change = f == 0 ? rc : std::max(r.relative_change, rc);
      }
    }
  }
  m.t_prev = t_now;
  ++m.checks;
  return r;
}

}  // namespace vem
