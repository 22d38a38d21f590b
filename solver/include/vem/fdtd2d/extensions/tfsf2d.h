// 2D total-field / scattered-field plane wave at any angle phi in the plane (the 3D TF/SF of
// tfsf.h with theta = 90 degrees): an auxiliary 1D grid with dispersion matched to the 2D grid
// along the propagation direction at a design frequency, corrections on the rectangle's edges.
// TM: E_inc = A z_hat g(t - delay(r)), H_inc = k_hat x E_inc / eta0.
// TE: E_inc = A (z_hat x k_hat) g(t - delay(r)) (in the plane, perpendicular to k), H_inc =
//     (A / eta0) z_hat g(t - delay(r)).
// Direction k = (cos phi, sin phi). The in-plane fields (TM: H, TE: E) are those of the grid's
// own discrete plane wave at the design frequency (the continuum k_hat x ... up to O((k d)^2);
// tfsf2d.cpp), so that the corrections cancel it: leakage ~ -100 dB at f_design when oblique. The box must be in vacuum, 2 cells inside the CPML/grid edge.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "vem/core/waveform.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

struct PlaneWave2D {
  double phi = 0.0;               // propagation direction from +x towards +y, radians
  double amplitude = 1.0;         // peak E, V/m
  Waveform waveform;
  double design_frequency = 0.0;  // Hz; 0: the waveform's f0
};

struct TfsfBox2D {
  std::array<int, 2> lo{0, 0}, hi{0, 0};  // node indices of the total-field rectangle's edges
};
// `margin` cells inside the CPML (inside the grid edge without CPML); throws when too small.
TfsfBox2D automatic_tfsf_box_2d(const YeeGrid2D& grid, const BoundarySpec2D& b, int margin);

class Tfsf2dSource final : public Fdtd2dExtension {
 public:
  Tfsf2dSource(Fdtd2dEngine& engine, const PlaneWave2D& wave, const TfsfBox2D& box);  // attaches
  ~Tfsf2dSource() override;                                                           // detaches
  Tfsf2dSource(const Tfsf2dSource&) = delete;
  Tfsf2dSource& operator=(const Tfsf2dSource&) = delete;
  void hook(Fdtd2dEngine& engine, HookPoint where, int step) override;
  // Travel time from the 1D source node to world (x, y): the incident phasor at f_design is
  // A G(f) e^{-j w delay} (the reference for scattering-width normalisation).
  double delay(const std::array<double, 2>& r) const;

  struct Impl;
 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vem
