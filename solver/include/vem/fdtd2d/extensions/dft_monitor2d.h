// Running DFT of the 2D fields (the counterpart of dft_monitor.h, same definitions: e^{+jwt},
// S_c(f) = sum_n c(t_n) e^{-j 2 pi f t_n} dt with E at (n+1) dt and H at (n+1/2) dt, optional
// decimation by sample_interval, CW steady-state windows giving phasors). Accumulated where the
// engine keeps its fields (CPU arrays or CUDA kernels), in a box of sample indices.
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "vem/fdtd/extensions/dft_monitor.h"  // SteadyStateCheck
#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

struct DftBox2D {
  std::array<int, 2> lo{0, 0}, hi{-1, -1};  // inclusive; hi < 0 = up to N (whole plane)
};

class DftMonitor2d final : public Fdtd2dExtension {
 public:
  // Throws vem::Error for no/non-positive frequencies, components not of the polarization, a bad box.
  DftMonitor2d(Fdtd2dEngine& engine, std::vector<double> frequencies_hz,
               std::vector<Component> components, const DftBox2D& box = {}, int sample_interval = 1);
  ~DftMonitor2d() override;
  DftMonitor2d(const DftMonitor2d&) = delete;
  DftMonitor2d& operator=(const DftMonitor2d&) = delete;
  void hook(Fdtd2dEngine& engine, HookPoint where, int step) override;

  const std::vector<double>& frequencies() const;
  const std::vector<Component>& components() const;
  int steps_accumulated() const;
  // Compact (nx+1)(ny+1) layout of Fdtd2dEngine::field(), 0 outside the box.
  std::vector<std::complex<float>> spectrum(Component c, int freq_index) const;
  SteadyStateCheck check_steady_state();
  std::vector<std::complex<float>> phasor(Component c, int freq_index) const;  // after 2 checks
  double steps_per_period(int freq_index) const;

  struct Impl;
 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vem
