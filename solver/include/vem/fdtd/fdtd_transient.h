// The transient (time-series) analysis of a voxel model: its options and how they become sources,
// probes and a step plan on an FdtdSetup. The ParaView filter FDTDSolver translates its properties
// into TransientOptions and reports validate()'s message, so a C++ user and a ParaView user get the
// same message for the same bad value. Messages name the C++ member, the ParaView property in
// parentheses, the value and the limit.
//
// Illumination:
//   point_source: a point source (source.h) at the sample of the polarization's dominant
//                 component nearest to `source_position`, weighted by `source_polarization`;
//   plane_wave:   a TF/SF plane wave (tfsf.h) of peak `plane_wave.amplitude`, its box
//                 `plane_wave.tfsf_margin` cells inside the CPML (the model must lie inside it);
//   dipole:       the steady state's thin-wire dipole (add_thin_wire_dipole, fdtd_harmonic.h)
//                 fed with `dipole.feed_current` (A, peak) times the waveform.
// All three use the waveform `waveform` at `frequency` (bandwidth `bandwidth`, 0 = frequency).
// Probes: the three E components nearest to each probe position (named "probe<q>_Ex", ...) and,
// with `probe_at_source`, at the source position or the dipole centre ("source_Ex" / "feed_Ex").
//
// A transient run, in order: a VoxelDomain and its setup (smooth_materials for subpixel
// smoothing), add_transient_excitation, FdtdOperator, make_engine, the plane wave's TfsfSource
// (x.plane_wave), then attach_subpixel_tensor (the full smoothed permittivity tensor, when the
// medium has one), then step. Destroy in reverse order.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "vem/core/waveform.h"
#include "vem/fdtd/extensions/subpixel_tensor.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/fdtd_setup.h"
#include "vem/fdtd/voxel_domain.h"

namespace vem {

enum class Illumination { point_source, plane_wave, dipole };
enum class WaveformShape { modulated_gaussian, sinusoid, gaussian, differentiated_gaussian };

struct TransientOptions {
  Illumination illumination = Illumination::point_source;

  // Waveform (SourceWaveform, SourceFrequency, SourceBandwidth).
  WaveformShape waveform = WaveformShape::modulated_gaussian;
  double frequency = 900e6;  // Hz, > 0: carrier, or bandwidth of the Gaussians when bandwidth is 0
  double bandwidth = 0.0;    // Hz, -20 dB bandwidth of the Gaussian pulses; 0 = frequency

  // Point source (SourceType, SourcePosition, SourcePolarization, SourceAmplitude).
  PointSource::Kind source_kind = PointSource::Kind::electric_current;  // or hard_e
  std::array<double, 3> source_position{0.1, 0.0, 0.0};                // m
  std::array<double, 3> source_polarization{0.0, 0.0, 1.0};             // any finite non-zero vector
  double source_amplitude = 1.0;                                        // A m, or V/m for hard_e

  HarmonicPlaneWave plane_wave;  // radians, V/m; the box is automatic
  HarmonicDipole dipole;         // feed_current drives it; accepted_power is steady-state only

  // Stopping and snapshots (StopMode, NumberOfSteps, SimulatedTime, SnapshotInterval).
  bool stop_at_time = false;
  int steps = 1000;              // 1..1e8
  double simulated_time = 5e-9;  // s, > 0 (with stop_at_time)
  int snapshot_interval = 50;    // steps between snapshots, >= 1 (the last step is always one)

  std::vector<std::array<double, 3>> probe_positions;  // m (ProbePositions)
  bool probe_at_source = true;                         // (ProbeAtSource)
  int progress_interval = 10;                          // steps between progress calls (ProgressInterval), >= 1

  // Throws vem::Error for a bad value (independent of the grid).
  void validate() const;
  Waveform make_waveform() const;
  // Steps of the run with time step dt (validates simulated_time against the 1e8-step limit).
  int step_count(double dt) const;
  // Steps after which a snapshot is taken: every snapshot_interval, and the last step.
  std::vector<int> snapshot_steps(double dt) const;
};

// What a transient run attaches besides the setup's own sources: the plane wave, if any.
struct TransientExcitation {
  Waveform waveform;
  bool plane_wave = false;
  PlaneWave wave;  // with `waveform` and the design frequency
  TfsfBox box;     // automatic, plane_wave.tfsf_margin cells inside the CPML
};

// Validates `o`, then appends the point source or the dipole's sources and the probes to `setup`
// (whose grid and boundaries are the domain's). Throws vem::Error for a source or probe outside
// the grid, a point source inside the CPML, a dipole leaving the interior.
TransientExcitation add_transient_excitation(FdtdSetup& setup, const VoxelDomain& domain, const TransientOptions& o);

// The full smoothed inverse-permittivity tensor of subpixel smoothing (SubpixelOptions::full_tensor,
// VoxelDomainOptions::subpixel; ParaView: SubpixelTensor = Full): a SubpixelTensorExtension on
// `engine` when its operator's medium has inverse_eps_rows (coefficient-array mode), else nullptr
// (the diagonal medium: nothing to attach, no cost). Attach it after the plane wave's TfsfSource
// and any other extension that adds to E after the E update, so that their increments enter its
// stored D (as run_fdtd_harmonic does); destroy it before the engine. Call it before stepping (D
// starts from the engine's present E). Throws vem::Error for scheme s44 (build_tensor_sample_list).
// A distributed run (DistributedFdtd) refuses such a medium instead.
std::unique_ptr<SubpixelTensorExtension> attach_subpixel_tensor(FdtdEngine& engine);

}  // namespace vem
