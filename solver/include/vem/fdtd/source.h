// Point sources and probes.
//
// A point source sits at the samples (i,j,k) of the three E (or H) components; its direction
// vector weights the components, so any polarization is possible (normalized internally).
//   electric_current: soft current-moment source, moment I*l = amplitude * w(t) (A m), injected
//                     as J = I l / (dx dy dz) in the E update (Ampere: eps dE/dt = curl H - J).
//   magnetic_current: soft magnetic-current-moment source, amplitude in V m, M = K l/(dx dy dz).
//   hard_e / hard_h:  the field components are overwritten with amplitude * w(t) (V/m or A/m).
// Source times: J is sampled at (n+1/2) dt for the E update to (n+1) dt; M at n dt.
#pragma once

#include <array>
#include <string>

#include "vem/core/waveform.h"
#include "vem/core/yee_grid.h"

namespace vem {

struct PointSource {
  enum class Kind { electric_current, magnetic_current, hard_e, hard_h };
  Kind kind = Kind::electric_current;
  int i = 0, j = 0, k = 0;                 // sample index (see yee_grid.h)
  std::array<double, 3> direction{0, 0, 1};
  double amplitude = 1.0;                  // A m, V m, V/m or A/m according to kind
  Waveform waveform;
};

const char* source_kind_name(PointSource::Kind k);
PointSource::Kind source_kind_from_name(const std::string& name);

// Records one field component at one sample every step. E samples are taken at t = s dt after
// step s, H samples at t = (s - 1/2) dt (see probe_time()).
struct Probe {
  std::string name;
  Component component = Component::Ez;
  int i = 0, j = 0, k = 0;
};

}  // namespace vem
