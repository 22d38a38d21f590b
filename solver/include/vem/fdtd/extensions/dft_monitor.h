// Running DFT monitors: frequency-domain fields accumulated on the engine while it steps (CPU
// loops or CUDA kernels, next to each other in src/fdtd/extensions/dft_monitor/dft_monitor.cpp and
// src/fdtd/extensions/dft_monitor/dft_monitor_cuda.cu), attached as an EngineExtension (fdtd_engine.h).
//
// For every requested frequency f and component c, at every sample (i,j,k) of a box of sample
// indices (yee_grid.h: each component at its own staggered position), the monitor accumulates
//     S_c(f) = sum_n  c(t_n) exp(-j 2 pi f t_n) dt          (e^{+jwt} convention)
// with the true sample time of each step n (0-based): E at t_n = (n+1) dt, H at (n+1/2) dt.
// Units: V s/m for E, A s/m for H (the DFT of a pulse; divide by the DFT of the source to get a
// transfer function).
//
// Decimation: with sample_interval M > 1 only every M-th step is accumulated (steps n with
// (n + 1) % M == 0, counted from the engine's first step), each weighted M dt: the same sum
// sampled at M dt. It is exact for fields band-limited below 1 / (2 M dt) (Nyquist), which a
// smooth excitation guarantees up to the grid's own high-frequency noise; nyquist_interval()
// picks M from the highest frequency present. openEMS samples its DFTs the same way. Cost per
// step drops by M; this is what makes whole-volume monitors cheap.
//
// CW runs: check_steady_state() (call it from run()'s callback, every whole number of periods)
// forms, on the device holding the accumulators (no host copy; it keeps two more copies of the
// accumulators there), the phasor over the window since the previous check,
//     P_c = 2 (S_c(now) - S_c(previous)) / (t_now - t_previous)      (V/m, A/m amplitude),
// and returns the relative change max_f ||P(f) - P_previous(f)|| / ||P(f)|| (2-norm over all
// monitored samples and components). phasor() returns the last window's P. For exact CW
// phasors the window must be a whole number of periods: steps_per_period() helps to choose the
// callback interval (the check uses the exact window length, so a non-integer number of
// periods only leaves a small oscillating term).
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"

namespace vem {

struct DftBox {
  // Inclusive sample-index ranges; hi < 0 means "up to N" on that axis (whole volume by default).
  std::array<int, 3> lo{0, 0, 0}, hi{-1, -1, -1};
};

struct SteadyStateCheck {
  double relative_change = 1.0;  // max over frequencies; 1 until two windows exist
  bool has_previous = false;     // false on the first check (nothing to compare with)
  double window_s = 0;           // length of the last window, s
  // max over frequencies of ||S(now) - S(previous check)|| / ||S(now)||: the change of the
  // accumulated spectra themselves (a pulse run has converged when it is small); 1 on the first check.
  double spectrum_change = 1.0;
};

class DftMonitor final : public EngineExtension {
 public:
  // Attaches itself to `engine` (detaches in the destructor; must not outlive the engine).
  // Accumulation starts with the next step. Throws vem::Error for empty / non-positive frequencies, no components or a bad box.
  DftMonitor(FdtdEngine& engine, std::vector<double> frequencies_hz,
             std::vector<Component> components, const DftBox& box = {}, int sample_interval = 1);
  // The largest M with at least `samples_per_period` samples per period of f_max (>= 1).
  static int nyquist_interval(double dt, double f_max, double samples_per_period = 16.0);
  int sample_interval() const { return interval_; }
  int samples_accumulated() const { return samples_; }
  ~DftMonitor() override;
  DftMonitor(const DftMonitor&) = delete;
  DftMonitor& operator=(const DftMonitor&) = delete;

  void hook(FdtdEngine& engine, HookPoint where, int step) override;

  const std::vector<double>& frequencies() const { return freqs_; }
  const std::vector<Component>& components() const { return comps_; }
  const std::array<int, 3>& box_lo() const { return lo_; }
  const std::array<int, 3>& box_hi() const { return hi_; }
  std::array<int, 3> box_dims() const { return {hi_[0] - lo_[0] + 1, hi_[1] - lo_[1] + 1, hi_[2] - lo_[2] + 1}; }
  int steps_accumulated() const { return steps_; }

  // Accumulated S_c(f) in the box, x fastest (box_dims()); samples that do not exist for c are 0.
  std::vector<std::complex<float>> box_spectrum(Component c, int freq_index) const;
  // The same in the compact layout of FdtdEngine::field(): (nx+1)(ny+1)(nz+1), 0 outside the box.
  std::vector<std::complex<float>> spectrum(Component c, int freq_index) const;
  // Phasor from the last steady-state window (compact layout); throws before two checks.
  std::vector<std::complex<float>> phasor(Component c, int freq_index) const;
  // The same in the box layout of box_spectrum().
  std::vector<std::complex<float>> box_phasor(Component c, int freq_index) const;

  // The last window's phasors in the box layout where the engine keeps its fields (host memory
  // for the CPU engine, device memory for CUDA; no copy), for consumers that stay there
  // (fdfd_time_domain.h). Valid until the next check. Throws before two checks. Samples that do
  // not exist for c hold 0.
  const std::complex<float>* phasor_data(Component c, int freq_index) const;

  SteadyStateCheck check_steady_state();
  // dt-steps per period of frequency freq_index (generally not an integer).
  double steps_per_period(int freq_index) const;

  struct Backend {  // CPU or CUDA accumulation (internal)
    virtual ~Backend() = default;
    virtual void accumulate(FdtdEngine& eng, int comp_slot, Component c, const float* w_re,
                            const float* w_im) = 0;
    virtual std::vector<std::complex<float>> read(int comp_slot, int freq_index) const = 0;
    // Steady-state window, where the accumulators live (no host copy): for every sample
    //   P = scale (S - S_prev);  sums per frequency over all slots:
    //   out[3f] += |P - P_old|^2,  out[3f+1] += |P|^2,  out[3f+2] += |S|^2;
    // then P_old = P, S_prev = S. first = true only records S_prev (P_old = 0).
    virtual void window(bool first, double scale, std::vector<double>& out) = 0;
    virtual std::vector<std::complex<float>> read_phasor(int comp_slot, int freq_index) const = 0;
    // The last window's phasors where they live (box layout; host or device memory).
    virtual const std::complex<float>* phasor_data(int comp_slot, int freq_index) const = 0;
  };

 private:
  // The box layout in the compact one; a box over every sample is that layout already (moved).
  std::vector<std::complex<float>> to_compact(Component c, std::vector<std::complex<float>> box) const;
  int slot_of(Component c) const;
  void require_phasor(int freq_index) const;  // throws before two checks or for a bad index
  void zero_missing(Component c, std::vector<std::complex<float>>& box) const;

  FdtdEngine* engine_;
  std::vector<double> freqs_;
  std::vector<Component> comps_;
  std::array<int, 3> lo_{}, hi_{};
  int steps_ = 0, samples_ = 0, interval_ = 1;
  std::unique_ptr<Backend> backend_;
  // steady-state bookkeeping: S at the previous check and P of the last window live with the
  // accumulators (Backend::window)
  double t_prev_ = 0;
  int checks_ = 0;
};

// Internal: CUDA accumulation backend (dft_monitor_cuda.cu; only with VEM_WITH_CUDA).
std::unique_ptr<DftMonitor::Backend> make_dft_backend_cuda(const FdtdOperator& op, int nfreq,
                                                           int ncomp, std::array<int, 3> lo,
                                                           std::array<int, 3> dims);

}  // namespace vem
