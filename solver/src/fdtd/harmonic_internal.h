// Internal pieces of run_fdtd_harmonic (fdtd_harmonic.cpp) shared with the distributed steady-state
// run (distributed/distributed_harmonic.cpp, issue 17): the plan (time step, excitation, DFT
// sampling, boxes, step limits), the stepping loop with its stopping rule, the normalization of
// the phasors and the far-field tables. One implementation, so both runs take the same steps and
// normalize the same way.
#pragma once

#include <array>
#include <chrono>
#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_harmonic.h"

namespace vem::harmonic_detail {

// The stage clock of both steady-state runs (HarmonicTimings): lap() is the seconds since the
// previous lap, since_lap() the same without starting a new one, since_start() the whole call.
struct StageClock {
  using clock = std::chrono::steady_clock;
  clock::time_point start = clock::now(), last = start;
  double lap() {
    const auto now = clock::now();
    const double s = std::chrono::duration<double>(now - last).count();
    last = now;
    return s;
  }
  double since_lap() const { return std::chrono::duration<double>(clock::now() - last).count(); }
  double since_start() const { return std::chrono::duration<double>(clock::now() - start).count(); }
};

struct Plan {
  FdtdSetup setup;  // the caller's setup with the run's dt and the dipole's sources
  bool cw = true, dipole = false;
  double f_lo = 0, f_hi = 0, design_f = 0, dt = 0;
  int M = 1;
  Waveform wave;
  std::array<int, 3> gap{-1, -1, -1};  // dipole
  int axis = 2, dipole_edges = 0;
  double gap_len = 0;
  std::array<int, 3> tf_lo{0, 0, 0}, tf_hi{0, 0, 0};  // plane wave
  NtffBox nbox;                                        // far_field
  int check_steps = 1, min_steps = 0, max_steps = 0;
};

// Validates the options against the setup (the checks of run_fdtd_harmonic, same messages);
// check_density = false leaves the density's size to the caller (distributed: per piece).
Plan make_plan(const FdtdSetup& setup_in, const HarmonicOptions& o, bool check_density = true);
// The TF/SF plane wave of the plan.
PlaneWave plane_wave_of(const Plan& p, const HarmonicOptions& o);

struct Stepping {
  int done = 0;
  bool aborted = false, converged = false, have_window = false;
  double change = 1.0;
  double seconds = 0;
};
// The loop of run_fdtd_harmonic: run_chunk(chunk, base) steps `chunk` steps (progress from `base`)
// and returns the steps done (< chunk: aborted); check() runs the steady-state checks after a full
// window and returns the new change (nullopt: none yet, CW's first window); keep_going(done,
// change) is the progress callback after a check (false: abort).
Stepping step(const Plan& p, const HarmonicOptions& o, const std::function<int(int chunk, int base)>& run_chunk,
              const std::function<std::optional<double>()>& check,
              const std::function<bool(int done, double change)>& keep_going);
// Fills res's run fields from the stepping (steps, time, change, rates, warnings); throws for a
// CW run that ended before two windows.
void finish(HarmonicResult& res, const Plan& p, const HarmonicOptions& o, const Stepping& s, std::int64_t ncell,
            const std::string& engine_warning);

// The dipole's feed-current scale at frequency f: to the accepted power (p_unit: W per A^2 of feed
// current), to the radiated power (p_rad_unit: W per A^2 leaving the near-to-far box; read only
// when radiated_power > 0), or the given feed current. Throws when the power to normalize to is 0.
double dipole_scale(const HarmonicOptions& o, double f, double p_unit, double p_rad_unit);

// Raw phasor -> phasor per unit of the driving quantity (incident amplitude / feed current) at
// frequency f after `done` steps.
std::complex<double> unit(const Plan& p, int done, double f);

// The far-field tables. rcs(dirs) / pattern(dirs): values for the directions (theta, phi).
using Directions = std::vector<std::array<double, 2>>;
std::vector<FarFieldRow> plane_wave_table(const std::array<double, 3>& k, const std::array<double, 3>& eh,
                                          const std::array<double, 3>& hh, double step_deg,
                                          const std::function<std::vector<double>(const Directions&)>& rcs);
std::vector<FarFieldRow> dipole_table(int axis, double step_deg, double accepted_unit,
                                      const std::function<std::vector<std::array<std::complex<double>, 2>>(const Directions&)>& pattern);

}  // namespace vem::harmonic_detail
