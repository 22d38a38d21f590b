// The transient analysis of a voxel model (fdtd_transient.h).
#include "vem/fdtd/fdtd_transient.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "vem/core/error.h"

namespace vem {

void TransientOptions::validate() const {
  if (!(frequency > 0) || !std::isfinite(frequency))
    fail("TransientOptions::frequency (SourceFrequency) = ", frequency, " Hz: must be finite and > 0");
  if (!(bandwidth >= 0) || !std::isfinite(bandwidth))
    fail("TransientOptions::bandwidth (SourceBandwidth) = ", bandwidth, " Hz: must be finite and >= 0 (0 = the source frequency)");
  if (!stop_at_time && (steps < 1 || steps > 100000000))
    fail("TransientOptions::steps (NumberOfSteps) = ", steps, ": must be in 1..100000000");
  if (stop_at_time && (!(simulated_time > 0) || !std::isfinite(simulated_time)))
    fail("TransientOptions::simulated_time (SimulatedTime) = ", simulated_time, " s: must be finite and > 0");
  if (snapshot_interval < 1)
    fail("TransientOptions::snapshot_interval (SnapshotInterval) = ", snapshot_interval, " steps: must be >= 1");
  if (progress_interval < 1)
    fail("TransientOptions::progress_interval (ProgressInterval) = ", progress_interval, " steps: must be >= 1");
  for (std::size_t q = 0; q < probe_positions.size(); ++q) {
    const auto& p = probe_positions[q];
    if (!std::isfinite(p[0] + p[1] + p[2]))
      fail("TransientOptions::probe_positions (ProbePositions) #", q + 1, " = (", p[0], ", ", p[1], ", ", p[2],
           ") m: must be finite");
  }
  switch (illumination) {
    case Illumination::plane_wave:
      plane_wave.validate();
      break;
    case Illumination::dipole:
      // Zero first: HarmonicDipole::validate() would point at AcceptedPower, a steady-state option.
      if (dipole.feed_current == 0)
        fail("HarmonicDipole::feed_current (FeedCurrent) = 0 A: must be > 0 in the transient analysis (it drives ",
             "the dipole; AcceptedPower applies to the steady state only)");
      dipole.validate();
      break;
    case Illumination::point_source: {
      if (source_kind != PointSource::Kind::electric_current && source_kind != PointSource::Kind::hard_e)
        fail("TransientOptions::source_kind (SourceType) = ", source_kind_name(source_kind),
             ": must be electric_current or hard_e");
      const auto& p = source_polarization;
      if (!std::isfinite(p[0] + p[1] + p[2]) || std::fabs(p[0]) + std::fabs(p[1]) + std::fabs(p[2]) == 0)
        fail("TransientOptions::source_polarization (SourcePolarization) = (", p[0], ", ", p[1], ", ", p[2],
             "): must be a finite non-zero vector");
      const auto& x = source_position;
      if (!std::isfinite(x[0] + x[1] + x[2]))
        fail("TransientOptions::source_position (SourcePosition) = (", x[0], ", ", x[1], ", ", x[2], ") m: must be finite");
      if (!std::isfinite(source_amplitude))
        fail("TransientOptions::source_amplitude (SourceAmplitude) = ", source_amplitude, ": must be finite");
      break;
    }
  }
}

Waveform TransientOptions::make_waveform() const {
  const double bw = bandwidth > 0 ? bandwidth : frequency;
  switch (waveform) {
    case WaveformShape::sinusoid:
      return Waveform::sinusoid(frequency);
    case WaveformShape::gaussian:
      return Waveform::gaussian_for_bandwidth(bw);
    case WaveformShape::differentiated_gaussian:
      return Waveform::differentiated_gaussian_for_bandwidth(bw);
    case WaveformShape::modulated_gaussian:
    default:
      return Waveform::modulated_gaussian(frequency, bw);
  }
}

int TransientOptions::step_count(double dt) const {
  if (!stop_at_time) return steps;
  const double n = std::ceil(simulated_time / dt - 1e-9);
  if (n > 1e8)
    fail("TransientOptions::simulated_time (SimulatedTime) = ", simulated_time, " s needs ", n, " steps of ", dt,
         " s: limit 1e8 steps");
  return std::max(1, int(n));
}

std::vector<int> TransientOptions::snapshot_steps(double dt) const {
  if (snapshot_interval < 1) validate();  // throws (the loop below needs a positive interval)
  const int n = step_count(dt);
  std::vector<int> out;
  for (int s = snapshot_interval; s < n; s += snapshot_interval) out.push_back(s);
  out.push_back(n);
  return out;
}

TransientExcitation add_transient_excitation(FdtdSetup& setup, const VoxelDomain& d, const TransientOptions& o) {
  o.validate();
  TransientExcitation x;
  x.waveform = o.make_waveform();
  switch (o.illumination) {
    case Illumination::plane_wave:
      x.plane_wave = true;
      x.wave.theta = o.plane_wave.theta;
      x.wave.phi = o.plane_wave.phi;
      x.wave.psi = o.plane_wave.psi;
      x.wave.amplitude = o.plane_wave.amplitude;
      x.wave.waveform = x.waveform;
      x.wave.design_frequency = o.frequency;
      x.box = automatic_tfsf_box(setup.grid, setup.boundaries, o.plane_wave.tfsf_margin);
      break;
    case Illumination::dipole:
      add_thin_wire_dipole(setup, o.dipole, o.frequency, x.waveform, o.dipole.feed_current);
      break;
    case Illumination::point_source: {
      const auto& pol = o.source_polarization;
      int dominant = 0;
      for (int a = 1; a < 3; ++a)
        if (std::fabs(pol[a]) > std::fabs(pol[dominant])) dominant = a;
      const std::array<int, 3> s = d.sample_at(Component(dominant), o.source_position, "the source position (SourcePosition)", true);
      PointSource src;
      src.kind = o.source_kind;
      src.i = s[0];
      src.j = s[1];
      src.k = s[2];
      src.direction = pol;
      src.amplitude = o.source_amplitude;
      src.waveform = x.waveform;
      setup.sources.push_back(src);
      break;
    }
  }
  std::vector<std::pair<std::string, std::array<double, 3>>> points;
  if (o.probe_at_source && o.illumination != Illumination::plane_wave) {
    const bool dipole = o.illumination == Illumination::dipole;
    points.push_back({dipole ? "feed" : "source", dipole ? o.dipole.centre : o.source_position});
  }
  for (std::size_t q = 0; q < o.probe_positions.size(); ++q)
    points.push_back({"probe" + std::to_string(q), o.probe_positions[q]});
  for (const auto& p : points) {
    for (int c = 0; c < 3; ++c) {
      const Component comp = Component(c);
      const std::array<int, 3> idx = d.sample_at(comp, p.second, "probe '" + p.first + "' (ProbePositions, ProbeAtSource)", false);
      setup.probes.push_back({p.first + "_" + component_name(comp), comp, idx[0], idx[1], idx[2]});
    }
  }
  return x;
}

std::unique_ptr<SubpixelTensorExtension> attach_subpixel_tensor(FdtdEngine& engine) {
  const FdtdSetup& s = engine.op().setup();
  if (s.medium.inverse_eps_rows.empty() || s.material_mode != MaterialMode::coefficient_array) return nullptr;
  return std::make_unique<SubpixelTensorExtension>(engine);
}

}  // namespace vem
