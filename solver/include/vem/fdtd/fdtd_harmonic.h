// Steady-state (time-harmonic) FDTD runs in one call: a plane wave (TF/SF, tfsf.h) or a thin-wire
// half-wave dipole drives the grid, running DFT monitors (dft_monitor.h) accumulate the complex
// fields at the requested frequencies on the engine (GPU or CPU) while it steps, the run stops on
// the steady-state criterion or a step count, and the result carries the normalized phasors,
// local and mass-averaged SAR (sar.h), the whole-body SAR and the far field (near_to_far.h:
// bistatic RCS for a plane wave, radiation pattern and gain for the dipole).
//
// Excitation (chosen from the number of frequencies):
//   one frequency  -> CW: a sinusoid with a smooth ramp (waveform.h). The phasors are the
//                     steady-state windows of DftMonitor::check_steady_state(); the run stops when
//                     the relative change between windows of `periods_per_check` periods is
//                     below `steady_state_tolerance` (or at `max_steps`).
//   several        -> pulse: a modulated Gaussian whose -20 dB band covers all of them. The
//                     phasors are the accumulated DFTs divided by the DFT of the source waveform
//                     (a transfer function, so each frequency is normalized exactly); the run
//                     stops when the accumulated DFTs change by less than the tolerance between
//                     checks (the pulse has left the domain or decayed), or at `max_steps`.
// Materials are those of the FdtdSetup (a single-frequency model: give the tissue values at the
// frequency of interest).
//
// Normalization (all outputs scaled consistently; SI units):
//   plane wave: the incident field has peak amplitude `amplitude` (V/m) at every frequency;
//               phase reference: the TF/SF source's 1D origin (TfsfSource::delay).
//   dipole:     `accepted_power` > 0 scales to that accepted power (W) at each frequency,
//               `radiated_power` > 0 to that power flowing out through the near-to-far box
//               (radiated by antenna and body together); otherwise the feed current has peak
//               amplitude `feed_current` (A). Accepted power
//               P = -1/2 Re(E_gap conj(I) d_gap) (the power the gap current source delivers).
//
// Dipole model: a straight thin wire of PEC edges (the axial E samples along the wire are held
// at zero: zero-amplitude hard_e sources) with a one-edge delta gap at its centre fed by an
// electric current source (source.h). Its length is the nearest odd number of edges to `length`
// (default: half the free-space wavelength of the first frequency).
//
// DFT sampling: the monitors accumulate every `dft_sample_interval` steps (0 = automatic: the
// largest interval giving at least 16 samples per period of the highest frequency present in the
// excitation; exact for band-limited fields, see dft_monitor.h). 1 = every step.
// CW time step: the run lowers dt (below the setup's dt or Courant choice, by less than one part
// in M K) so that one period is exactly M K steps (K >= 16 samples of M steps): every
// steady-state window then spans whole periods, where the DFT of a sinusoid has no image term.
//
// Cost: the stepping is the engine's (CPU or CUDA), the monitors add 3 components x frequencies
// of accumulation every M steps (plus 6 thin slabs for the far field); each steady-state check
// copies the whole-volume phasors to the host; SAR averaging runs on the GPU with a CUDA engine.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_setup.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/core/waveform.h"

namespace vem {

enum class HarmonicSource { plane_wave, dipole };

struct HarmonicPlaneWave {
  double theta = 0.0, phi = 0.0;  // propagation direction, rad (the convention of tfsf.h)
  double psi = 0.0;               // polarization from theta_hat towards phi_hat, rad
  double amplitude = 1.0;         // V/m, peak
  // Total-field box: node indices; box_hi[0] < 0 means automatic (`tfsf_margin` cells inside the
  // CPML interface on every face). The scatterer must lie inside it; its faces must be vacuum.
  std::array<int, 3> box_lo{0, 0, 0}, box_hi{-1, -1, -1};
  int tfsf_margin = 5;

  // Angles finite, amplitude finite and > 0, margin >= 1 (throws vem::Error; messages name the
  // member and the ParaView property: IncidentTheta, IncidentPhi, Polarization in degrees there).
  void validate() const;
};

struct HarmonicDipole {
  std::array<double, 3> centre{0, 0, 0};  // m, world coordinates; snapped to the nearest E_axis sample
  int axis = 2;                           // 0: x, 1: y, 2: z
  double length = 0.0;                    // m; 0 = half the free-space wavelength at frequencies[0]
  double feed_current = 1.0;              // A, peak (used when both powers are <= 0)
  double accepted_power = 0.0;            // W; > 0 normalizes to this accepted power
  double radiated_power = 0.0;            // W; > 0 normalizes to this power leaving the NTFF box

  // Axis 0..2, finite centre, length >= 0, powers >= 0 and not both, and a feed current > 0 when
  // both powers are 0 (throws vem::Error naming the member and the ParaView property).
  void validate() const;
};

struct HarmonicOptions {
  HarmonicSource source = HarmonicSource::plane_wave;
  HarmonicPlaneWave plane_wave;
  HarmonicDipole dipole;
  std::vector<double> frequencies;  // Hz, > 0; at least one

  // Stopping.
  double steady_state_tolerance = 1e-3;  // relative change between checks
  int periods_per_check = 2;             // CW: window length in periods of frequencies[0]
  int max_steps = 0;                     // 0 = automatic (enough for 400 periods of the lowest frequency, or 20 transits of the pulse)
  int fixed_steps = 0;                   // > 0: run exactly this many steps, no steady-state test
  int dft_sample_interval = 0;           // 0 = automatic (see above)

  // Outputs.
  // Mass density per cell (kg/m^3, cell_count() entries, <= 0 for air); empty = no SAR.
  std::vector<float> density;
  bool averaged_sar = true;  // 1 g and 10 g averages (needs cubic cells and a density)
  // Near-to-far transform on a box `ntff_margin` cells inside the CPML interface: for a plane
  // wave it must lie in the scattered-field region, between the CPML and the TF/SF box (so
  // ntff_margin < tfsf_margin - 1); for the dipole it must enclose antenna and scatterer.
  bool far_field = true;
  int ntff_margin = 2;
  double far_field_step_deg = 2.0;  // angle step of the tables: 0..180 (plane wave), 0..360 (dipole)

  // Execution.
  Backend backend = Backend::automatic;
  int device_index = 0;
  EngineTuning tuning;
  // Called every `progress_interval` steps with (steps done, steps at most, last relative
  // change or 1); returning false aborts: the result is then marked aborted and holds no fields.
  std::function<bool(int, int, double)> progress;
  int progress_interval = 200;

  // Every check that does not need the grid: frequencies (at least one, finite, > 0, distinct
  // labels), tolerance, step counts, far-field step, and the source's own validate(). Messages
  // name the member, the ParaView property (FDTDSteadyState), the value and the limit.
  // run_fdtd_harmonic calls it first.
  void validate() const;
};

// "900MHz", "433p92MHz": a frequency as it appears in array names (f / 1e6 to 6 significant
// digits, '.' and '+' written as 'p'). HarmonicOptions::validate() refuses two frequencies with
// the same label.
std::string frequency_label(double frequency);

// The steady-state form of a point current-moment source (source.h): a one-edge (Hertzian) dipole
// at `position` along the one axis `polarization` points along, fed with |amplitude| / edge
// length (amplitude in A m; a negative amplitude or direction flips the phasors: phasor_sign).
// Refuses hard sources (they have no steady-state form) and polarizations off the axes.
struct PointDipole {
  HarmonicDipole dipole;
  float phasor_sign = 1.0f;
};
PointDipole point_source_as_dipole(PointSource::Kind kind, const std::array<double, 3>& position,
                                   const std::array<double, 3>& polarization, double amplitude,
                                   const YeeGrid& grid);

// One row per angle of the far-field tables (the columns of FDFDSolver's RCS table).
// Plane wave: theta_deg is the scattering angle from the forward direction k towards e_hat
// (E plane) or towards h_hat = k x e_hat (H plane), 0..180 (180 = backscatter); values are the
// bistatic RCS, m^2.
// Dipole (axis a, then b = a+1, c = a+2 cyclically): E plane = the (c, a) plane, the direction
// cos(t) a_hat + sin(t) c_hat; H plane = the (b, c) plane, cos(t) b_hat + sin(t) c_hat; t =
// theta_deg in 0..360; values are the gain 4 pi U / P_accepted (linear; IEEE gain, antenna and
// any lossy body together).
struct FarFieldRow {
  double theta_deg = 0;
  double e_plane = 0, h_plane = 0;
};

struct HarmonicFrequencyResult {
  double frequency = 0;  // Hz
  // Normalized E phasors (V/m, peak) in the compact layout of FdtdEngine::field():
  // (nx+1)(ny+1)(nz+1) values, x fastest, each component at its Yee position (yee_grid.h).
  std::vector<std::complex<float>> ex, ey, ez;
  // Per cell (x fastest): |E|^2 at the cell centre (sar.h cell_centre_e_squared), V^2/m^2.
  std::vector<float> e_squared;
  // SAR (only with a density): local, 1 g and 10 g averaged (W/kg; status arrays of sar.h),
  // from the absorbed power density of sar.h cell_absorbed_power_density (each E sample's own
  // conductivity as the engine applies it).
  bool has_sar = false;
  std::vector<float> local_sar;
  AveragedSar sar_1g, sar_10g;
  double whole_body_sar = 0;  // W/kg
  double peak_local_sar = 0;  // W/kg
  std::array<int, 3> peak_local_voxel{-1, -1, -1};
  double absorbed_power = 0;  // W, dissipated in the tissue (density > 0) voxels

  // Far field.
  bool has_far_field = false;
  std::vector<FarFieldRow> far_field;
  double scattering_cross_section = 0; // m^2 (plane wave)
  double radiated_power = 0;           // W, power out through the NTFF box (dipole: radiated)

  // Dipole feed.
  double accepted_power = 0;               // W, after normalization
  std::complex<double> feed_impedance{0, 0};  // ohm: V_gap / I_feed (V = -E_gap d_gap)
  double normalization = 1;                // factor applied to the raw phasors
};

// Wall time of run_fdtd_harmonic's stages, seconds (issue 16: the user-visible time explained).
// `stepping` is the stepping loop without the steady-state checks (the TF/SF and DFT hooks run
// inside it); the per-frequency stages are summed over the frequencies.
struct HarmonicTimings {
  double plan = 0;         // options checked, the run's setup (TF/SF box, dipole) made
  double op = 0;           // FdtdOperator built (coefficients, CPML profiles)
  double engine = 0;       // engine created: device memory, coefficients uploaded
  double extensions = 0;   // TF/SF source and DFT monitors created
  double extensions_tfsf = 0;  // of which the TF/SF source (correction lists, uploads)
  double stepping = 0;     // steps (with the TF/SF and DFT accumulation hooks)
  double checks = 0;       // steady-state checks (DFT phasors compared on the device)
  double phasors = 0;      // E phasors downloaded and normalized, |E|^2 at the cell centres
  double phasors_read = 0; // of which the E phasors read off the monitor (device -> host)
  double local_sar = 0;    // absorbed power density, local and whole-body SAR
  double averaged_sar = 0; // 1 g and 10 g averaged SAR (IEC/IEEE 62704-1)
  double far_field = 0;    // near-to-far transform and tables
  double far_field_transform = 0;  // of which the face slabs read and the transform built
  double total = 0;        // the whole call
};

struct HarmonicResult {
  std::vector<HarmonicFrequencyResult> frequencies;
  HarmonicTimings timings;
  int steps = 0;
  double dt = 0;                   // s
  double simulated_time = 0;       // s
  bool converged = false;          // steady-state / decay criterion met (false with fixed_steps)
  double last_relative_change = 1;
  bool aborted = false;
  int dft_sample_interval = 1;
  std::string backend;
  double seconds = 0;              // wall time of the stepping
  double mcells_per_second = 0;
  std::array<int, 3> tfsf_lo{0, 0, 0}, tfsf_hi{0, 0, 0};  // plane wave: the total-field box
  std::array<int, 3> dipole_gap{-1, -1, -1};              // dipole: the gap's E sample
  int dipole_edges = 0;
  std::string warning;             // e.g. "not converged: relative change 3e-3 after 40000 steps"
};

// The thin-wire dipole of the steady-state runs as plain sources, for transient runs too: appends
// to setup.sources the gap's electric current source (moment feed_current x gap length, A m,
// with `waveform`) and the zero-amplitude hard_e sources that hold the arms' axial E at zero (PEC).
// Length 0 means half the free-space wavelength at f_default. Throws vem::Error for a bad axis or
// a wire that leaves the non-CPML interior.
struct DipoleSources {
  std::array<int, 3> gap{-1, -1, -1};  // E sample of the feed gap (yee_grid.h)
  int edges = 0;                       // wire length in edges (odd), gap included
  double gap_length = 0;               // m
};
DipoleSources add_thin_wire_dipole(FdtdSetup& setup, const HarmonicDipole& dipole, double f_default,
                                   const Waveform& waveform, double feed_current);

// Throws vem::Error for bad options (no or non-positive frequencies, a dipole outside the grid or
// crossing the CPML, a density array of the wrong size, ...). The setup's own sources and probes
// are kept (the dipole adds its own).
HarmonicResult run_fdtd_harmonic(const FdtdSetup& setup, const HarmonicOptions& options);

}  // namespace vem
