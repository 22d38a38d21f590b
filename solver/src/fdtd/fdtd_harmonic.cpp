// Steady-state FDTD runs (fdtd_harmonic.h): excitation, DFT monitors, stopping, normalization,
// SAR and the near-to-far transform, on top of the engine and its extensions.
#include "vem/fdtd/fdtd_harmonic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/core/error.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/subpixel_tensor.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/core/waveform.h"
#include "harmonic_internal.h"

namespace vem {

namespace {

using cd = std::complex<double>;
using cf = std::complex<float>;

constexpr int kSamplesPerPeriod = 16;  // automatic DFT sampling: samples per shortest period

// Sum over the monitor's sampled steps n < steps ((n+1) % M == 0) of
// w((n + offset) dt) exp(-j w_f (n + offset) dt) M dt: the DFT of the source waveform taken the
// way the monitor takes the fields (offset 1 for E sample times).
cd sampled_dft(const Waveform& w, double offset, double dt, int M, int steps, double f) {
  cd s = 0;
  for (int n = M - 1; n < steps; n += M) {
    const double t = (n + offset) * dt;
    s += w.value(t) * std::exp(cd(0, -2 * kPi * f * t));
  }
  return s * (M * dt);
}

std::array<double, 2> angles_of(const std::array<double, 3>& d) {
  const double r = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  return {std::acos(std::clamp(d[2] / r, -1.0, 1.0)), std::atan2(d[1], d[0])};
}

// A monitored slab of the near-to-far box face (axis a, node plane p): the tangential E and H
// components over sample indices [p-1, p+1] along a and the box range +-1 across.
struct NtffFace {
  int axis = 0;
  std::vector<Component> comps;
  std::unique_ptr<DftMonitor> mon;
};

}  // namespace

DipoleSources add_thin_wire_dipole(FdtdSetup& s, const HarmonicDipole& dp, double f_default,
                                   const Waveform& waveform, double feed_current) {
  const YeeGrid& g = s.grid;
  g.validate();
  const int axis = dp.axis;
  if (axis < 0 || axis > 2) fail("dipole axis ", axis, " must be 0 (x), 1 (y) or 2 (z)");
  if (!(dp.length > 0) && !(f_default > 0))
    fail("dipole: no length given and no frequency for the default half-wavelength (", f_default, " Hz)");
  if (!std::isfinite(feed_current)) fail("dipole: feed current ", feed_current, " A is not finite");
  const std::array<int, 3> n = g.n();
  const std::array<double, 3> d = g.d();
  DipoleSources out;
  out.gap_length = d[axis];
  for (int a = 0; a < 3; ++a) {
    const double u = (dp.centre[a] - g.origin[a]) / d[a] - (a == axis ? 0.5 : 0.0);
    out.gap[a] = int(std::lround(u));
  }
  const double L = dp.length > 0 ? dp.length : kC0 / (2.0 * f_default);
  out.edges = std::max(1, 2 * int(std::lround((L / d[axis] - 1.0) / 2.0)) + 1);
  const int m = (out.edges - 1) / 2;
  for (int a = 0; a < 3; ++a) {
    const int lo = a == axis ? out.gap[a] - m : out.gap[a];
    const int hi = a == axis ? out.gap[a] + m : out.gap[a];
    const int lim_lo = s.boundaries.cpml_cells(2 * a) + 1;
    const int lim_hi = (a == axis ? n[a] - 1 : n[a]) - s.boundaries.cpml_cells(2 * a + 1) - 1;
    if (lo < lim_lo || hi > lim_hi)
      fail("the dipole (DipoleCentre (", dp.centre[0], ", ", dp.centre[1], ", ", dp.centre[2], ") m, ", out.edges,
           " edges of ", d[axis], " m along ", "xyz"[axis], ") spans sample indices ", lo, "..", hi, " along ",
           "xyz"[a], "; it must stay inside the non-CPML interior (", lim_lo, "..", lim_hi, ")");
  }
  PointSource feed;
  feed.kind = PointSource::Kind::electric_current;
  feed.i = out.gap[0];
  feed.j = out.gap[1];
  feed.k = out.gap[2];
  feed.direction = {0, 0, 0};
  feed.direction[axis] = 1.0;
  feed.amplitude = feed_current * out.gap_length;  // current moment over the gap edge, A m
  feed.waveform = waveform;
  s.sources.push_back(feed);
  for (int q = -m; q <= m; ++q) {
    if (q == 0) continue;
    PointSource pec = feed;
    pec.kind = PointSource::Kind::hard_e;
    pec.amplitude = 0.0;
    (axis == 0 ? pec.i : axis == 1 ? pec.j : pec.k) += q;
    s.sources.push_back(pec);
  }
  return out;
}

void HarmonicPlaneWave::validate() const {
  if (!std::isfinite(theta + phi + psi))
    fail("HarmonicPlaneWave angles (IncidentTheta, IncidentPhi, Polarization) = (", theta, ", ", phi, ", ", psi,
         ") rad: must be finite");
  if (!(amplitude > 0) || !std::isfinite(amplitude))
    fail("HarmonicPlaneWave::amplitude (IncidentAmplitude) = ", amplitude, " V/m: must be finite and > 0");
  if (tfsf_margin < 1) fail("HarmonicPlaneWave::tfsf_margin = ", tfsf_margin, " cells: must be >= 1");
}

void HarmonicDipole::validate() const {
  if (axis < 0 || axis > 2) fail("HarmonicDipole::axis (DipoleAxis) = ", axis, ": must be 0 (x), 1 (y) or 2 (z)");
  if (!std::isfinite(centre[0] + centre[1] + centre[2]))
    fail("HarmonicDipole::centre (DipoleCentre) = (", centre[0], ", ", centre[1], ", ", centre[2], ") m: must be finite");
  if (!(length >= 0) || !std::isfinite(length))
    fail("HarmonicDipole::length (DipoleLength) = ", length, " m: must be finite and >= 0 (0 = half a wavelength)");
  if (!(accepted_power >= 0) || !std::isfinite(accepted_power))
    fail("HarmonicDipole::accepted_power (AcceptedPower) = ", accepted_power, " W: must be finite and >= 0 ",
         "(0 = use the feed current)");
  if (!(radiated_power >= 0) || !std::isfinite(radiated_power))
    fail("HarmonicDipole::radiated_power = ", radiated_power, " W: must be finite and >= 0");
  if (accepted_power > 0 && radiated_power > 0)
    fail("HarmonicDipole::accepted_power (AcceptedPower) = ", accepted_power, " W and radiated_power = ",
         radiated_power, " W: give one of them, not both (the other 0)");
  if (!(feed_current >= 0) || !std::isfinite(feed_current))
    fail("HarmonicDipole::feed_current (FeedCurrent) = ", feed_current, " A: must be finite and >= 0");
  if (!(feed_current > 0) && !(accepted_power > 0) && !(radiated_power > 0))
    fail("HarmonicDipole::feed_current (FeedCurrent) = ", feed_current, " A: must be > 0 when the accepted power ",
         "(AcceptedPower) is 0");
}

std::string frequency_label(double f) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6gMHz", f / 1e6);
  std::string s(buf);
  std::replace(s.begin(), s.end(), '.', 'p');
  std::replace(s.begin(), s.end(), '+', 'p');
  return s;
}

void HarmonicOptions::validate() const {
  if (frequencies.empty())
    fail("HarmonicOptions::frequencies (DFTFrequencies): none given; need at least one (Hz)");
  for (std::size_t q = 0; q < frequencies.size(); ++q) {
    const double f = frequencies[q];
    if (!(f > 0) || !std::isfinite(f))
      fail("HarmonicOptions::frequencies (DFTFrequencies) #", q + 1, " = ", f, " Hz: must be finite and > 0");
    for (std::size_t r = 0; r < q; ++r)
      if (frequency_label(frequencies[r]) == frequency_label(f))
        fail("HarmonicOptions::frequencies (DFTFrequencies) #", r + 1, " = ", frequencies[r], " Hz and #", q + 1, " = ",
             f, " Hz: must differ in 6 significant digits in MHz (both are '", frequency_label(f), "')");
  }
  if (!(steady_state_tolerance > 0 && steady_state_tolerance < 1))
    fail("HarmonicOptions::steady_state_tolerance (SteadyStateTolerance) = ", steady_state_tolerance,
         ": must be in (0, 1)");
  if (periods_per_check < 1)
    fail("HarmonicOptions::periods_per_check = ", periods_per_check, ": must be >= 1");
  if (max_steps < 0) fail("HarmonicOptions::max_steps (MaxSteps) = ", max_steps, ": must be >= 0 (0 = automatic)");
  if (fixed_steps < 0)
    fail("HarmonicOptions::fixed_steps (FixedSteps) = ", fixed_steps, ": must be >= 0 (0 = use the criterion)");
  if (dft_sample_interval < 0)
    fail("HarmonicOptions::dft_sample_interval (DFTSampleInterval) = ", dft_sample_interval,
         ": must be >= 0 (0 = automatic)");
  if (far_field && !(far_field_step_deg > 0 && far_field_step_deg <= 90))
    fail("HarmonicOptions::far_field_step_deg (FarFieldStep) = ", far_field_step_deg, " deg: must be in (0, 90]");
  if (far_field && ntff_margin < 1) fail("HarmonicOptions::ntff_margin = ", ntff_margin, " cells: must be >= 1");
  if (progress_interval < 1)
    fail("HarmonicOptions::progress_interval (ProgressInterval) = ", progress_interval, ": must be >= 1");
  if (source == HarmonicSource::plane_wave) {
    plane_wave.validate();
  } else {
    dipole.validate();
    if (dipole.radiated_power > 0 && !far_field)
      fail("HarmonicDipole::radiated_power = ", dipole.radiated_power,
           " W: normalizing to a radiated power needs the near-to-far box (far_field = true)");
  }
}

PointDipole point_source_as_dipole(PointSource::Kind kind, const std::array<double, 3>& position,
                                   const std::array<double, 3>& pol, double amplitude, const YeeGrid& grid) {
  if (kind != PointSource::Kind::electric_current)
    fail("TransientOptions::source_kind (SourceType) = ", source_kind_name(kind), ": a ",
         "hard or magnetic point source has no steady-state form; use an electric current moment, a half-wave ",
         "dipole or a plane wave");
  int axis = -1, nonzero = 0;
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(pol[a])) nonzero = 99;
    else if (pol[a] != 0) {
      ++nonzero;
      axis = a;
    }
  }
  if (nonzero != 1)
    fail("TransientOptions::source_polarization (SourcePolarization) = (", pol[0], ", ", pol[1], ", ", pol[2],
         "): in the steady state a point source is a one-edge dipole and must point along x, y or z");
  if (!(amplitude != 0) || !std::isfinite(amplitude))
    fail("TransientOptions::source_amplitude (SourceAmplitude) = ", amplitude, " A m: must be finite and non-zero");
  PointDipole out;
  const double edge = grid.d()[axis];
  out.dipole.centre = position;
  out.dipole.axis = axis;
  out.dipole.length = edge;
  out.dipole.accepted_power = 0.0;
  // The solver feeds a positive current; a negative direction or amplitude flips the phasors.
  out.dipole.feed_current = std::fabs(amplitude) / edge;
  out.phasor_sign = (pol[axis] > 0) == (amplitude > 0) ? 1.0f : -1.0f;
  return out;
}

namespace harmonic_detail {

Plan make_plan(const FdtdSetup& setup_in, const HarmonicOptions& o, bool check_density) {
  // ---- validation -------------------------------------------------------------------------
  o.validate();
  setup_in.grid.validate();
  // A 2-byte field storage (FdtdSetup::field_storage) puts a floor under the change of the DFT
  // phasors between checks: measured on the head at 2 mm (fdtd_reduced_storage.md), float16
  // levels off at 5e-3, bfloat16 at 4e-2 and growing. A tolerance below the floor never stops.
  if (o.fixed_steps == 0 && setup_in.field_storage != FieldStorage::float32) {
    const bool half = setup_in.field_storage == FieldStorage::float16;
    if (!half)
      fail("FieldStorage = bfloat16 with the steady-state test (HarmonicOptions::fixed_steps = 0): the rounding "
           "to 8 significant bits keeps the DFT phasors changing by 4e-2 and more between checks, so the run never "
           "settles; use float32 or float16, or a fixed number of steps (fixed_steps)");
    if (o.steady_state_tolerance < 1e-2)
      fail("HarmonicOptions::steady_state_tolerance (SteadyStateTolerance) = ", o.steady_state_tolerance,
           " with FieldStorage = float16: the rounding keeps the DFT phasors changing by about 5e-3 between checks, "
           "so the tolerance must be >= 0.01 (or use float32, or fixed_steps)");
  }
  const YeeGrid& g = setup_in.grid;
  const std::int64_t ncell = g.cell_count();
  if (check_density && !o.density.empty() && std::int64_t(o.density.size()) != ncell)
    fail("HarmonicOptions::density (DensityArray): the density array has ", o.density.size(), " entries, the grid has ",
         ncell, " cells");

  Plan p;
  p.cw = o.frequencies.size() == 1;
  p.f_lo = *std::min_element(o.frequencies.begin(), o.frequencies.end());
  p.f_hi = *std::max_element(o.frequencies.begin(), o.frequencies.end());
  const bool cw = p.cw;
  const double f_lo = p.f_lo, f_hi = p.f_hi;
  const std::array<int, 3> n = g.n();
  const std::array<double, 3> d = g.d();
  const auto& bs = setup_in.boundaries;
  std::array<int, 3> pml_lo{}, pml_hi{};
  for (int a = 0; a < 3; ++a) {
    pml_lo[a] = bs.cpml_cells(2 * a);
    pml_hi[a] = bs.cpml_cells(2 * a + 1);
  }
  p.setup = setup_in;
  FdtdSetup& s = p.setup;

  // ---- time step, excitation waveform and DFT sampling --------------------------------------
  // The largest time step: the given one, or courant_factor times the Courant limit of the scheme
  // (Yee's, or a high-order scheme's own at the design resolution: fdtd_scheme.h; the operator
  // then checks the slightly lower dt chosen below against that scheme's limit).
  double dt_max = s.dt > 0 ? s.dt : s.courant_factor * g.courant_limit_dt();
  if (s.dt <= 0 && s.scheme != Scheme::yee)
    dt_max = scheme_design_for_factor(s.scheme, s.courant_factor, s.scheme_design_cells_per_wavelength).courant *
             g.dx / kC0;
  int M = 1;
  Waveform wave;
  double design_f = f_lo;
  if (cw) {
    // A period is exactly M K steps (K >= 16 samples): the steady-state windows then hold whole
    // periods, where the DFT of a sinusoid has no image term (dt is lowered slightly for that).
    const double T = 1.0 / f_lo;
    if (o.dft_sample_interval > 0) {
      M = o.dft_sample_interval;
    } else {
      M = std::max(1, int(std::floor(T / (kSamplesPerPeriod * dt_max))));
    }
    const int K = int(std::ceil(T / (M * dt_max) - 1e-9));
    if (K < 3)
      fail("HarmonicOptions::dft_sample_interval (DFTSampleInterval) = ", M, " steps: leaves ", K,
           " samples per period at ", f_lo, " Hz; at least 3 are needed (0 = automatic)");
    s.dt = T / (double(M) * K);
    wave = Waveform::sinusoid(f_lo, 3.0);
  } else {
    const double fc = 0.5 * (f_lo + f_hi);
    const double bw = std::max(1.5 * (f_hi - f_lo), 0.5 * fc);
    wave = Waveform::modulated_gaussian(fc, bw);
    design_f = fc;
    s.dt = dt_max;
    M = o.dft_sample_interval > 0 ? o.dft_sample_interval
                                  : DftMonitor::nyquist_interval(dt_max, fc + 0.5 * bw, kSamplesPerPeriod);
  }
  const double dt = s.dt;
  p.dt = dt;
  p.M = M;
  p.wave = wave;
  p.design_f = design_f;

  // ---- dipole: PEC arms (zero hard sources) and the gap current source (1 A) ------------------
  p.dipole = o.source == HarmonicSource::dipole;
  const bool dipole = p.dipole;
  p.axis = o.dipole.axis;
  if (dipole) {
    const DipoleSources ds = add_thin_wire_dipole(s, o.dipole, f_lo, wave, 1.0);
    p.gap = ds.gap;
    p.gap_len = ds.gap_length;
    p.dipole_edges = ds.edges;
  }

  // ---- boxes ---------------------------------------------------------------------------------
  if (!dipole) {
    if (o.plane_wave.box_hi[0] < 0) {
      const TfsfBox b = automatic_tfsf_box(g, bs, o.plane_wave.tfsf_margin);
      p.tf_lo = b.lo;
      p.tf_hi = b.hi;
    } else {
      p.tf_lo = o.plane_wave.box_lo;
      p.tf_hi = o.plane_wave.box_hi;
    }
  }
  if (o.far_field) {
    NtffBox& nbox = p.nbox;
    for (int a = 0; a < 3; ++a) {
      nbox.lo[a] = pml_lo[a] + o.ntff_margin;
      nbox.hi[a] = n[a] - pml_hi[a] - o.ntff_margin;
      if (nbox.lo[a] < 1 || nbox.hi[a] > n[a] - 1 || nbox.lo[a] >= nbox.hi[a])
        fail("the near-to-far box (", o.ntff_margin, " cells inside the CPML) does not fit along ",
             "xyz"[a], ": node planes ", nbox.lo[a], "..", nbox.hi[a], " of 0..", n[a]);
      if (!dipole && !(nbox.lo[a] < p.tf_lo[a] - 1 && nbox.hi[a] > p.tf_hi[a] + 1))
        fail("the near-to-far box (node planes ", nbox.lo[a], "..", nbox.hi[a], " along ", "xyz"[a],
             ") must enclose the TF/SF box (", p.tf_lo[a], "..", p.tf_hi[a],
             ") with at least one cell between them: use ntff_margin < tfsf_margin - 1");
    }
    if (dipole) {
      for (int a = 0; a < 3; ++a) {
        const int m = (p.dipole_edges - 1) / 2;
        const int lo = a == p.axis ? p.gap[a] - m : p.gap[a], hi = a == p.axis ? p.gap[a] + m + 1 : p.gap[a];
        if (lo <= nbox.lo[a] || hi >= nbox.hi[a])
          fail("the dipole (DipoleCentre, DipoleLength) reaches the near-to-far box along ", "xyz"[a], " (node planes ",
               nbox.lo[a], "..", nbox.hi[a], ", ", o.ntff_margin, " cells inside the CPML); move it inward, shorten it ",
               "or add AirPadding");
      }
    }
  }

  // ---- step counts ---------------------------------------------------------------------------
  const double T_check = o.periods_per_check / (cw ? f_lo : design_f);
  int check_steps = std::max(1, int(std::lround(T_check / dt)));
  check_steps = std::max(M, (check_steps / M) * M);  // whole numbers of samples (CW: of periods)
  int min_steps;
  if (cw) {
    min_steps = int(std::ceil((3.0 + 2.0 * o.periods_per_check) / (f_lo * dt)));
  } else {
    const double diag = std::sqrt(n[0] * d[0] * n[0] * d[0] + n[1] * d[1] * n[1] * d[1] + n[2] * d[2] * n[2] * d[2]);
    min_steps = int(std::ceil((2.0 * wave.t0 + diag / kC0) / dt));
  }
  int max_steps = o.max_steps > 0 ? o.max_steps : std::max(min_steps, 0) + int(std::ceil(400.0 / (f_lo * dt)));
  if (o.fixed_steps > 0) {
    max_steps = o.fixed_steps;
    if (cw && o.fixed_steps < 2 * check_steps)
      fail("HarmonicOptions::fixed_steps (FixedSteps) = ", o.fixed_steps, ": must be at least two steady-state windows (",
           2 * check_steps, " steps = ", 2 * o.periods_per_check, " periods at ", f_lo, " Hz), or 0");
  }
  p.check_steps = check_steps;
  p.min_steps = min_steps;
  p.max_steps = max_steps;
  return p;
}

PlaneWave plane_wave_of(const Plan& p, const HarmonicOptions& o) {
  PlaneWave pw;
  pw.theta = o.plane_wave.theta;
  pw.phi = o.plane_wave.phi;
  pw.psi = o.plane_wave.psi;
  pw.amplitude = o.plane_wave.amplitude;
  pw.waveform = p.wave;
  pw.design_frequency = p.design_f;
  return pw;
}

Stepping step(const Plan& p, const HarmonicOptions& o, const std::function<int(int, int)>& run_chunk,
              const std::function<std::optional<double>()>& check, const std::function<bool(int, double)>& keep_going) {
  Stepping st;
  const int max_steps = p.max_steps;
  const auto t_start = std::chrono::steady_clock::now();
  int checks = 0;
  while (st.done < max_steps) {
    const int chunk = std::min(p.check_steps, max_steps - st.done);
    const int got = run_chunk(chunk, st.done);
    st.done += got;
    if (got < chunk) {
      st.aborted = true;
      break;
    }
    if (chunk < p.check_steps) break;  // a partial last window: no check (fixed / max steps)
    ++checks;
    const std::optional<double> c = check();
    if (p.cw) st.have_window = checks >= 2;
    if (c) st.change = *c;
    if (o.progress && !keep_going(st.done, st.change)) {
      st.aborted = true;
      break;
    }
    if (o.fixed_steps == 0 && st.done >= p.min_steps && st.change < o.steady_state_tolerance) {
      st.converged = true;
      break;
    }
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return st;
}

double dipole_scale(const HarmonicOptions& o, double f, double p_unit, double p_rad_unit) {
  if (o.dipole.accepted_power > 0) {
    if (!(p_unit > 0))
      fail("the dipole accepts no power at ", f, " Hz (", p_unit, " W per A^2): cannot normalize to an accepted power");
    return std::sqrt(o.dipole.accepted_power / p_unit);
  }
  if (o.dipole.radiated_power > 0) {
    if (!(p_rad_unit > 0))
      fail("no power leaves the near-to-far box at ", f, " Hz (", p_rad_unit,
           " W per A^2): cannot normalize to a radiated power");
    return std::sqrt(o.dipole.radiated_power / p_rad_unit);
  }
  return o.dipole.feed_current;
}

void finish(HarmonicResult& res, const Plan& p, const HarmonicOptions& o, const Stepping& st, std::int64_t ncell,
            const std::string& engine_warning) {
  const int done = st.done;
  res.seconds = st.seconds;
  res.steps = done;
  res.simulated_time = done * p.dt;
  res.last_relative_change = st.change;
  res.converged = st.converged;
  res.mcells_per_second = res.seconds > 0 ? double(done) * double(ncell) / res.seconds * 1e-6 : 0.0;
  if (st.aborted) {
    res.aborted = true;
    return;
  }
  if (p.cw && !st.have_window)
    fail("HarmonicOptions::max_steps (MaxSteps) / fixed_steps (FixedSteps): the run of ", done,
         " steps ended before two steady-state windows of ", p.check_steps, " steps; raise them (0 = automatic)");
  if (!res.converged && o.fixed_steps == 0) {
    res.warning = "not converged: relative change of the DFT phasors " + std::to_string(st.change) + " after " +
                  std::to_string(done) + " steps (tolerance " + std::to_string(o.steady_state_tolerance) +
                  "); the fields are those of the last window";
  }
  if (!engine_warning.empty()) res.warning += (res.warning.empty() ? "" : "; ") + engine_warning;
}

cd unit(const Plan& p, int done, double f) {
  if (p.cw) return cd(0, 1);  // the source runs as sin(w t): phasor -j per unit amplitude
  if (!p.dipole) return 1.0 / sampled_dft(p.wave, 1.0, p.dt, p.M, done, f);  // incident E at the E sample times
  cd wj = 0;  // J at (n + 1/2) dt, every step
  for (int s_ = 0; s_ < done; ++s_) {
    const double t = (s_ + 0.5) * p.dt;
    wj += p.wave.value(t) * std::exp(cd(0, -2 * kPi * f * t));
  }
  return 1.0 / (wj * p.dt);
}

std::vector<FarFieldRow> plane_wave_table(const std::array<double, 3>& k, const std::array<double, 3>& eh,
                                          const std::array<double, 3>& hh, double step_deg,
                                          const std::function<std::vector<double>(const Directions&)>& rcs) {
  const int steps = std::max(1, int(std::lround(180.0 / step_deg)));
  Directions dirs;
  std::vector<FarFieldRow> rows;
  for (int q = 0; q <= steps; ++q) {
    FarFieldRow row;
    row.theta_deg = 180.0 * q / steps;
    const double t = row.theta_deg * kPi / 180.0;
    for (int plane = 0; plane < 2; ++plane) {
      const auto& u = plane == 0 ? eh : hh;
      std::array<double, 3> dir;
      for (int a = 0; a < 3; ++a) dir[a] = std::cos(t) * k[a] + std::sin(t) * u[a];
      const auto ang = angles_of(dir);
      dirs.push_back({ang[0], ang[1]});
    }
    rows.push_back(row);
  }
  const std::vector<double> v = rcs(dirs);
  for (std::size_t q = 0; q < rows.size(); ++q) {
    rows[q].e_plane = v[2 * q];
    rows[q].h_plane = v[2 * q + 1];
  }
  return rows;
}

std::vector<FarFieldRow> dipole_table(int axis, double step_deg, double accepted_unit,
                                      const std::function<std::vector<std::array<cd, 2>>(const Directions&)>& pattern) {
  const int b = (axis + 1) % 3, c = (axis + 2) % 3;
  const int steps = std::max(1, int(std::lround(360.0 / step_deg)));
  Directions dirs;
  std::vector<FarFieldRow> rows;
  for (int q = 0; q <= steps; ++q) {
    FarFieldRow row;
    row.theta_deg = 360.0 * q / steps;
    const double t = row.theta_deg * kPi / 180.0;
    for (int plane = 0; plane < 2; ++plane) {
      std::array<double, 3> dir{0, 0, 0};
      if (plane == 0) {
        dir[axis] = std::cos(t);
        dir[c] = std::sin(t);
      } else {
        dir[b] = std::cos(t);
        dir[c] = std::sin(t);
      }
      const auto ang = angles_of(dir);
      dirs.push_back({ang[0], ang[1]});
    }
    rows.push_back(row);
  }
  const auto F = pattern(dirs);
  for (std::size_t q = 0; q < rows.size(); ++q)
    for (int plane = 0; plane < 2; ++plane) {
      const auto& f = F[2 * q + plane];
      const double U = (std::norm(f[0]) + std::norm(f[1])) / (2.0 * kEta0);
      (plane == 0 ? rows[q].e_plane : rows[q].h_plane) = 4.0 * kPi * U / accepted_unit;
    }
  return rows;
}

}  // namespace harmonic_detail

HarmonicResult run_fdtd_harmonic(const FdtdSetup& setup_in, const HarmonicOptions& o) {
  using namespace harmonic_detail;
  StageClock stages;
  auto lap = [&stages]() { return stages.lap(); };  // seconds since the previous lap
  HarmonicTimings tm;
  const Plan plan = make_plan(setup_in, o);
  tm.plan = lap();
  const YeeGrid& g = setup_in.grid;
  const std::int64_t ncell = g.cell_count();
  const bool cw = plan.cw, dipole = plan.dipole;
  const std::array<int, 3> n = g.n();
  const std::array<double, 3> d = g.d();
  const FdtdSetup& s = plan.setup;
  const int M = plan.M;
  const int axis = plan.axis;
  const double gap_len = plan.gap_len;
  const int* gap = plan.gap.data();

  HarmonicResult res;
  if (dipole) {
    res.dipole_gap = plan.gap;
    res.dipole_edges = plan.dipole_edges;
  }

  // ---- operator, engine, extensions --------------------------------------------------------
  FdtdOperator op(s);
  tm.op = lap();
  std::string engine_warning;
  auto eng = make_engine(op, o.backend, o.device_index, &engine_warning, o.tuning);
  tm.engine = lap();
  res.backend = eng->backend();
  res.dt = plan.dt;
  res.dft_sample_interval = M;

  std::unique_ptr<TfsfSource> tfsf;
  if (!dipole) {
    TfsfBox box;
    box.lo = plan.tf_lo;
    box.hi = plan.tf_hi;
    tfsf = std::make_unique<TfsfSource>(*eng, plane_wave_of(plan, o), box);
    tm.extensions_tfsf = stages.since_lap();
    res.tfsf_lo = plan.tf_lo;
    res.tfsf_hi = plan.tf_hi;
  }

  // The full smoothed permittivity tensor (subpixel_tensor.h), after the TF/SF source so that its
  // E corrections enter the stored D.
  const std::unique_ptr<SubpixelTensorExtension> tensor = attach_subpixel_tensor(*eng);

  DftMonitor main(*eng, o.frequencies, {Component::Ex, Component::Ey, Component::Ez}, {}, M);

  const NtffBox& nbox = plan.nbox;
  std::vector<NtffFace> faces;
  if (o.far_field) {
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        const int p = side == 0 ? nbox.lo[a] : nbox.hi[a];
        NtffFace face;
        face.axis = a;
        const int b = (a + 1) % 3, c = (a + 2) % 3;
        face.comps = {static_cast<Component>(b), static_cast<Component>(c), static_cast<Component>(3 + b),
                      static_cast<Component>(3 + c)};
        DftBox db;
        for (int q = 0; q < 3; ++q) {
          db.lo[q] = q == a ? p - 1 : nbox.lo[q] - 1;
          db.hi[q] = q == a ? p + 1 : nbox.hi[q] + 1;
        }
        face.mon = std::make_unique<DftMonitor>(*eng, o.frequencies, face.comps, db, M);
        faces.push_back(std::move(face));
      }
  }

  tm.extensions = lap();
  // ---- stepping -----------------------------------------------------------------------------
  const int max_steps = plan.max_steps;
  double change_now = 1.0;  // for the progress callback inside a chunk
  const Stepping st = step(
      plan, o,
      [&](int chunk, int base) {
        return eng->run(
            chunk,
            [&](int k, int) {
              if (!o.progress) return true;
              return o.progress(base + k, max_steps, change_now);
            },
            std::max(1, o.progress_interval));
      },
      [&]() -> std::optional<double> {
        using clock = StageClock::clock;
        const auto t_check = clock::now();
        struct AddCheck {  // adds the check's wall time to tm.checks however it returns
          clock::time_point t0;
          double& sum;
          ~AddCheck() { sum += std::chrono::duration<double>(clock::now() - t0).count(); }
        } add_check{t_check, tm.checks};
        if (cw) {
          const SteadyStateCheck sc = main.check_steady_state();
          double worst = sc.has_previous ? sc.relative_change : 1.0;
          for (auto& face : faces) {
            const SteadyStateCheck fc = face.mon->check_steady_state();
            if (fc.has_previous) worst = std::max(worst, fc.relative_change);
          }
          if (sc.has_previous) change_now = worst;
          return sc.has_previous ? std::optional<double>(worst) : std::nullopt;
        }
        // pulse: the change of the accumulated spectra between checks (computed where they live)
        change_now = main.check_steady_state().spectrum_change;
        return change_now;
      },
      [&](int done, double change) { return o.progress(done, max_steps, change); });
  finish(res, plan, o, st, ncell, engine_warning);
  tm.stepping = lap() - tm.checks;
  if (res.aborted) {
    tm.total = stages.since_start();
    res.timings = tm;
    return res;
  }
  const int done = st.done;

  // ---- per-frequency results ----------------------------------------------------------------
  std::array<std::vector<float>, 3> edge_sigma;
  if (!o.density.empty()) edge_sigma = edge_conductivity(op);
  tm.local_sar += lap();
  const bool cubic = std::fabs(d[0] - d[1]) <= 1e-9 * d[0] && std::fabs(d[0] - d[2]) <= 1e-9 * d[0];
  const Backend sar_backend = eng->fields_on_device() ? Backend::cuda : Backend::cpu;
  const std::int64_t N = ncell;

  for (std::size_t fi = 0; fi < o.frequencies.size(); ++fi) {
    const double f = o.frequencies[fi];
    HarmonicFrequencyResult r;
    r.frequency = f;
    // Raw phasor -> normalized phasor: multiply by `unit` (to the driving quantity's unit phasor)
    // and then by the real scale of the normalization.
    auto raw = [&](const DftMonitor& mon, Component c) {
      return cw ? mon.phasor(c, int(fi)) : mon.spectrum(c, int(fi));
    };
    const cd unit = harmonic_detail::unit(plan, done, f);
    // Near-to-far transform of the unit-normalized fields (scale applied to powers below).
    std::unique_ptr<NearToFarTransform> nf;
    if (o.far_field) {
      // The NTFF samples straight from the face slabs (box layout), no whole-volume arrays.
      std::vector<std::vector<std::vector<cf>>> slab(faces.size());  // [face][comp slot]
      for (std::size_t q = 0; q < faces.size(); ++q)
        for (Component c : faces[q].comps)
          slab[q].push_back(cw ? faces[q].mon->box_phasor(c, int(fi)) : faces[q].mon->box_spectrum(c, int(fi)));
      // Per component, the slabs holding it in face order (the first that holds a sample serves it).
      struct SlabRef {
        const cf* v;
        std::array<int, 3> lo, dims;
      };
      std::array<std::vector<SlabRef>, 6> holding;
      for (std::size_t q = 0; q < faces.size(); ++q)
        for (std::size_t slot = 0; slot < faces[q].comps.size(); ++slot)
          holding[int(faces[q].comps[slot])].push_back(
              {slab[q][slot].data(), faces[q].mon->box_lo(), faces[q].mon->box_dims()});
      auto sample = [&](Component c, int i, int j, int k) -> cd {
        for (const SlabRef& sr : holding[int(c)]) {
          const int u = i - sr.lo[0], v = j - sr.lo[1], w = k - sr.lo[2];
          if (u < 0 || v < 0 || w < 0 || u >= sr.dims[0] || v >= sr.dims[1] || w >= sr.dims[2]) continue;
          return cd(sr.v[u + std::size_t(sr.dims[0]) * (v + std::size_t(sr.dims[1]) * w)]) * unit;
        }
        fail("internal error: the near-to-far transform asked for ", component_name(c), " at (",
             i, ", ", j, ", ", k, "), outside every monitored face slab");
      };
      std::array<double, 3> centre;
      for (int a = 0; a < 3; ++a) centre[a] = g.origin[a] + 0.5 * (nbox.lo[a] + nbox.hi[a]) * d[a];
      nf = std::make_unique<NearToFarTransform>(g, f, sample, nbox, centre);
    }
    tm.far_field_transform += stages.since_lap();
    tm.far_field += lap();
    double accepted_unit = 0;
    // The raw E phasors, read once (the dipole's gap sample comes from them too).
    r.ex = raw(main, Component::Ex);
    r.ey = raw(main, Component::Ey);
    r.ez = raw(main, Component::Ez);
    tm.phasors_read += stages.since_lap();
    double scale = 1.0;  // plane wave: the run already has the requested amplitude
    if (dipole) {
      const std::vector<cf>& eg = axis == 0 ? r.ex : axis == 1 ? r.ey : r.ez;
      const cd e_gap = cd(eg[gap[0] + std::size_t(n[0] + 1) * (gap[1] + std::size_t(n[1] + 1) * gap[2])]) * unit;
      const cd v = -e_gap * gap_len;  // per 1 A feed current
      const double p_unit = 0.5 * v.real();
      r.feed_impedance = v;
      accepted_unit = p_unit;
      const double p_rad_unit = o.dipole.accepted_power <= 0 && o.dipole.radiated_power > 0 ? nf->power_out() : 0.0;
      scale = dipole_scale(o, f, p_unit, p_rad_unit);
      r.accepted_power = p_unit * scale * scale;
    }
    r.normalization = scale;
    const cd factor = unit * scale;
    for (std::vector<cf>* v : {&r.ex, &r.ey, &r.ez}) {
      cf* x = v->data();
      const std::int64_t nv = std::int64_t(v->size());
#pragma omp parallel for schedule(static)
      for (std::int64_t q = 0; q < nv; ++q) x[q] = cf(cd(x[q]) * factor);
    }
    r.e_squared = cell_centre_e_squared(g, r.ex, r.ey, r.ez);
    tm.phasors += lap();

    if (!o.density.empty()) {
      SarInput in;
      in.grid = g;
      in.density = o.density;
      in.power_density = cell_absorbed_power_density(g, r.ex, r.ey, r.ez, edge_sigma, o.density);
      r.local_sar = local_sar(in);
      bool tissue = false;
      const double vol = d[0] * d[1] * d[2];
      for (std::int64_t c = 0; c < N; ++c) {
        if (is_tissue_density(o.density[c])) {
          tissue = true;
          r.absorbed_power += double(in.power_density[c]) * vol;
          if (r.local_sar[c] > r.peak_local_sar) {
            r.peak_local_sar = r.local_sar[c];
            r.peak_local_voxel = {int(c % n[0]), int((c / n[0]) % n[1]), int(c / (std::int64_t(n[0]) * n[1]))};
          }
        }
      }
      if (tissue) {
        r.has_sar = true;
        r.whole_body_sar = whole_body_sar(in);
        tm.local_sar += lap();
        if (o.averaged_sar) {
          if (cubic) {
            auto both = spatial_average_sar(in, std::vector<double>{1e-3, 1e-2}, sar_backend);
            r.sar_1g = std::move(both[0]);
            r.sar_10g = std::move(both[1]);
          } else if (fi == 0) {
            res.warning += std::string(res.warning.empty() ? "" : "; ") +
                           "1 g / 10 g averaged SAR skipped: the voxels are not cubic (IEC/IEEE 62704-1 cubes)";
          }
          tm.averaged_sar += lap();
        }
      } else if (fi == 0) {
        res.warning += std::string(res.warning.empty() ? "" : "; ") + "no SAR: the density is <= 0 everywhere";
      }
    }

    tm.local_sar += lap();  // the density-only work when no tissue (nothing otherwise)
    if (nf) {
      r.has_far_field = true;
      r.radiated_power = nf->power_out() * r.normalization * r.normalization;
      if (!dipole) {
        r.far_field = plane_wave_table(tfsf->k_hat(), tfsf->e_hat(), tfsf->h_hat(), o.far_field_step_deg,
                                       [&](const Directions& dirs) { return nf->rcs(dirs, o.plane_wave.amplitude); });
        r.scattering_cross_section = nf->scattering_cross_section(24, 48, o.plane_wave.amplitude);
      } else {
        r.far_field = dipole_table(axis, o.far_field_step_deg, accepted_unit,
                                   [&](const Directions& dirs) { return nf->patterns(dirs); });
      }
    }
    tm.far_field += lap();
    res.frequencies.push_back(std::move(r));
  }
  tm.total = stages.since_start();
  res.timings = tm;
  return res;
}

}  // namespace vem
