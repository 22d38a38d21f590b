// The time-domain preconditioner of the FDFD solver: M v ~ A^{-1} v computed by running the FDTD
// engine (CPU or CUDA) to the time-harmonic steady state of a current source built from v.
// After C. C. Stolk, "A time-domain preconditioner for the Helmholtz equation" (arXiv:2006.16861,
// 2020): a leap-frog time-domain solver whose time-harmonic solution satisfies the
// frequency-domain equations, with a smoothly windowed forcing, used as the preconditioner of a
// Krylov method.
// The outer method is flexible GCR (fdfd_solver.h, FdfdPreconditioner::time_domain), so M may
// vary from one application to the next (each stops on its own steady-state test).
//
// Why it is (almost) exact. A leap-frog Yee run at angular frequency w reaches a steady state
// (harmonic_current.h) that solves, sample by sample,
//   (j w~ eps0 eps_r + sigma cos(w dt/2)) E = curl H - J,   j w~ mu0 mu_r H = -curl E,
//   w~ = 2 sin(w dt / 2) / dt
// (magnetic loss likewise). So the FDTD grid is set up to reproduce the FDFD problem at w_t:
//   - the time step and run frequency: a period of P = 16 K steps (K >= 1, so the DFT samples
//     every K steps and every steady-state window holds whole periods), dt = 2 sin(pi/P) / w_t
//     (<= the Courant choice), w = 2 pi / (P dt), hence w~ = w_t exactly;
//   - the materials: eps_r and mu_r of the FDFD samples, conductivities divided by cos(pi/P), so
//     the loss term equals the FDFD one; indexed models stay indexed (the engine's cheapest
//     mode), averaged ones become per-cell arrays with the same edge averaging;
//   - the source: A x = v  <=>  curl (1/mu) curl x - k0^2 eps x = -k0^2 eps v, and Maxwell with
//     a current J gives curl (1/mu) curl E - k0^2 eps E = -j w mu0 J, hence
//     J = -j w_t eps0 eps_c v  (eps_c complex, per E sample, fdfd_operator.h);
//   - the PML: the SC-PML's profile (same thickness, grading, sigma_max, kappa_max) as a
//     Crank-Nicolson CPML matched to the SC-PML stretch at w_t (CpmlParameters::match_frequency,
//     boundary.h): its steady state is the SC-PML's exactly. (With the usual Roden-Gedney CPML
//     the residual of one application was 0.22, all of it in the PML rows.)
//   - the source turn-on: a ramp that leaves no static charge behind (harmonic_current.h).
// What remains between M and A^{-1} is the steady-state tolerance, the transients' leakage into
// the last window and float32: one application reproduces A^{-1} v to ~1e-4 (test_fdfd_time_domain),
// and the outer GCR corrects the rest (2-3 outer iterations to 1e-6).
// The PEC wall samples are identity rows of A: there z = v.
//
// Cost of one application: the FDTD steps until the steady-state test passes (7-16 periods on
// the benchmark's spheres and head; a lossless resonator can take up to max_periods), with the
// source amplitudes read inside the E update (CUDA) or one extra pass over E (CPU). On the GPU
// the vectors stay on the device (apply_device); on the CPU they are host vectors anyway.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_setup.h"

namespace vem {

class DftMonitor;
namespace fdfd_td {
// FDFD vector <-> FDTD field layout (src/fdfd/fdfd_time_domain_device.h).
struct LayoutMap {
  int nx, ny, nz;            // cells
  long long sy, sz, origin;  // FDTD field layout (field_layout.h)
};
}  // namespace fdfd_td

struct FdfdTimeDomainOptions {
  // An application ends when the phasor of one window of `periods_per_check` periods differs
  // from the previous window's by less than this (relative 2-norm over the volume), in (0, 1).
  double steady_tolerance = 1e-3;
  int periods_per_check = 1;     // >= 1
  int max_periods = 200;         // per application, >= 2 * periods_per_check
  // Turn-on of the source (harmonic_current.h: a Hann-integral ramp, charge-free after whole
  // periods >= 2), >= 0. Defaults from a scan on the coarse bench head and the 1 cm sphere
  // (results/fdfd.md): ramp 4-8 x tolerance 1e-3..1e-2; ramp 5 with 1e-3 needed the fewest
  // FDTD periods in all (2 outer iterations, 24-28 periods).
  double ramp_periods = 5.0;
  double courant_factor = 0.99;  // dt <= courant_factor * Courant limit, in (0, 1]
  // Flexible GCR: basis vectors kept before a restart, >= 1 (2-3 outer iterations are typical).
  int gcr_restart = 10;
  EngineTuning tuning;  // of the FDTD engine (CUDA; fdtd_engine.h)

  // Throws vem::Error naming the option (FdfdTimeDomainOptions::member), its value and limits.
  void validate() const;
};

// The same as o.validate() (the older spelling).
inline void validate(const FdfdTimeDomainOptions& o) { o.validate(); }

struct TimeDomainApplyStats {
  int steps = 0;
  int periods = 0;
  double last_change = 1.0;  // window-to-window change when it stopped
  bool settled = false;      // the steady-state test passed (else max_periods or stopped)
  bool stopped = false;      // keep_going returned false
  double seconds = 0;          // all of it; of which:
  double prepare_seconds = 0;  //   source amplitudes, engine and monitor set-up
  double step_seconds = 0;     //   stepping and steady-state checks (the rest: reading the phasor)
};

class FdfdTimeDomainPreconditioner {
 public:
  FdfdTimeDomainPreconditioner(const FdfdOperator& op, const FdfdTimeDomainOptions& o,
                               Backend backend, int device_index = 0);
  ~FdfdTimeDomainPreconditioner();

  // z = M v (3 N entries each, the FDFD layout). `keep_going` is called after every
  // steady-state check; returning false stops (stats.stopped). steady_tolerance > 0 replaces
  // the options' value for this application.
  TimeDomainApplyStats apply(const std::vector<cdouble>& v, std::vector<cdouble>& z,
                             const std::function<bool()>& keep_going = {},
                             double steady_tolerance = 0);

  // The same with v and z complex128 vectors in the memory of the CUDA device the FDTD runs
  // on (device_path() true): no host copies; the residual becomes source amplitudes and the
  // phasors the result in two kernels.
  bool device_path() const { return factors_dev_ != nullptr; }
  TimeDomainApplyStats apply_device(const void* v, void* z, const std::function<bool()>& keep_going = {},
                                    double steady_tolerance = 0);

  const FdtdSetup& fdtd_setup() const { return setup_; }
  int steps_per_period() const { return period_steps_; }
  int dft_sample_interval() const { return sample_interval_; }
  double dt() const { return dt_; }
  double run_frequency() const { return f_run_; }  // Hz, the FDTD's (warped) CW frequency
  // "cpu" or "cuda" until the first application, then the engine's own name ("cuda:<device>").
  std::string backend() const { return backend_name_; }

 private:
  const FdfdOperator& op_;
  FdfdTimeDomainOptions o_;
  Backend backend_;
  int device_;
  FdtdSetup setup_;
  std::unique_ptr<FdtdOperator> fdtd_;
  int period_steps_ = 0, sample_interval_ = 1;
  double dt_ = 0, f_run_ = 0;
  std::string backend_name_;
  // cb (-j w_t eps0 eps_c) per E sample, complex64, 3 N: on the host for the CPU engine, on the
  // device for CUDA (device path).
  std::vector<std::complex<float>> factors_;
  void* factors_dev_ = nullptr;
  fdfd_td::LayoutMap map_{};

  TimeDomainApplyStats run(const void* v, void* z, const std::function<bool()>& keep_going,
                           double steady_tolerance);
  void step_to_steady_state(FdtdEngine& eng, DftMonitor& mon, TimeDomainApplyStats& st,
                            const std::function<bool()>& keep_going, double tol) const;
};

}  // namespace vem
