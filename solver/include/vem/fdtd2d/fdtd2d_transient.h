// A 2D voxel model for the 2D FDTD solver: an image with exactly one voxel along one axis (the
// plane's normal, x, y or z), its 3D axes mapped onto the 2D solver's x, y, z, and the transient
// and CW steady-state runs the ParaView filters FDTDSolver / FDTDSteadyState / FDTDLive drive with
// it. VTK-free; the counterpart of voxel_domain.h and fdtd_transient.h.
//
// Axes: for normal n the 2D x axis is u = (n+1) mod 3 and the 2D y axis is v = (n+2) mod 3, so
// that (u, v, n) is right-handed and the 2D equations hold unchanged: normal z -> (x, y), normal
// x -> (y, z), normal y -> (z, x). The 2D "z" components (TM: Ez, TE: Hz) are the 3D components
// along the normal. Cell (p, q) of the 2D grid is the 3D cell with index p along u, q along v.
// The 3D domain (voxel_domain.h) is built with the normal faces periodic: no padding and no CPML
// along the normal, one cell thick; its other faces carry the usual padding and boundaries.
// dt is the 2D Courant limit times courant_factor (the normal spacing plays no part).
//
// Transient (TransientOptions, fdtd_transient.h; the same messages):
//   point_source: a line source through the sample of the polarization's components nearest to
//     source_position, weighted by source_polarization mapped to (u, v, n): TM uses the normal
//     component (a line current I = source_amplitude * w(t), A; hard_e: Ez), TE the in-plane ones
//     (a current sheet element of the same units). A polarization with no such component is
//     refused (it would radiate nothing).
//   plane_wave: a 2D TF/SF plane wave (tfsf2d.h) travelling at Transient2dOptions::incident_angle
//     in the plane (from u towards v), peak plane_wave.amplitude, its box plane_wave.tfsf_margin
//     cells inside the CPML. IncidentTheta / IncidentPhi / Polarization are 3D-only; the
//     polarization is Transient2dOptions::polarization (TM: E along the normal).
//   dipole: refused (a 3D wire).
// Probes: the polarization's three components nearest to each probe position, named with their 3D
// component names ("probe0_Ey" for TM with the normal along y); "source_..." at the source.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_setup.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/fdtd2d/extensions/tfsf2d.h"
#include "vem/fdtd2d/fdtd2d_engine.h"
#include "vem/fdtd2d/fdtd2d_setup.h"

namespace vem {

// What a 2D run needs beyond TransientOptions / HarmonicOptions.
struct Transient2dOptions {
  Polarization2D polarization = Polarization2D::tm;  // (Polarization2D): tm (0) or te (1)
  double incident_angle = 0.0;                      // rad (IncidentAngle2D, degrees there), finite
  // Throws vem::Error: "Transient2dOptions::member (Property) = value: limit".
  void validate() const;
};

// The axis of `voxels` with one voxel when exactly one axis has one: the plane's normal. -1
// otherwise (a 3D model; a line or a single voxel stays 3D, as before 2D existed).
int flat_axis(const std::array<int, 3>& voxels);

struct Plane2D {
  int normal = 2, u = 0, v = 1;  // 3D axes: normal, and those of the 2D x and y
  static Plane2D for_normal(int normal);
  int axis3(int axis2) const { return axis2 == 0 ? u : (axis2 == 1 ? v : normal); }
  int axis2(int axis3d) const { return axis3d == u ? 0 : (axis3d == v ? 1 : 2); }
  Component to_3d(Component c2) const;  // e.g. normal y: Ez -> Ey, Hx -> Hz
  Component to_2d(Component c3) const;
};

struct VoxelDomain2D {
  VoxelDomain domain;  // one cell along plane.normal; dt = the 2D time step
  Plane2D plane;
  YeeGrid2D grid() const;
  BoundarySpec2D boundaries() const;
  int nx() const { return domain.n_total[plane.u]; }
  int ny() const { return domain.n_total[plane.v]; }
  // 3D computational cell index of 2D cell (p, q).
  std::int64_t total_index(int p, int q) const;
  // 2D (x, y) of a 3D world position.
  std::array<double, 2> in_plane(const std::array<double, 3>& p) const { return {p[plane.u], p[plane.v]}; }
};

// The options with the normal's faces periodic (the domain BuildVoxelModel-style code should use).
VoxelDomainOptions domain_options_2d(const VoxelDomainOptions& o, int normal);
// Validates the options and the geometry like make_voxel_domain (throws vem::Error).
VoxelDomain2D make_voxel_domain_2d(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                                   const std::array<double, 3>& voxel_origin, const VoxelDomainOptions& options,
                                   int normal);

// The 2D setup of a 3D setup whose grid, boundaries and materials were built on d.domain (indexed
// table or per-cell arrays; anisotropic components permuted to (u, v, n)). No sources or probes.
Fdtd2dSetup setup_2d(const FdtdSetup& s3, const VoxelDomain2D& d, Polarization2D p);

struct TransientExcitation2D {
  Waveform waveform;
  bool plane_wave = false;
  PlaneWave2D wave;  // with `waveform` and the design frequency
  TfsfBox2D box;     // automatic, plane_wave.tfsf_margin cells inside the CPML
};

// Validates both options, then adds the line source and the probes to `setup`. Throws vem::Error
// (the messages of add_transient_excitation, and the 2D-only ones above).
TransientExcitation2D add_transient_excitation_2d(Fdtd2dSetup& setup, const VoxelDomain2D& d,
                                                  const TransientOptions& o, const Transient2dOptions& o2);

// The engine's fields at the output cells' centres (voxels + padding, CPML dropped), 3 components
// per cell in 3D axes (x, y, z), output-grid order (x fastest): E (electric) or H. Each sample
// averaged over its 1, 2 or 4 neighbours around the centre, as in 3D.
std::vector<float> cell_centred_2d(const Fdtd2dEngine& engine, const VoxelDomain2D& d, bool electric);
// The same for compact phasor arrays of the three polarization components (slot order).
std::vector<std::complex<float>> cell_centred_phasor_2d(
    const std::array<std::vector<std::complex<float>>, 3>& slots, const VoxelDomain2D& d, Polarization2D p,
    bool electric);

// CW steady state of a 2D model at one frequency: the source (TransientOptions' illumination, its
// waveform replaced by a ramped sinusoid at `frequency`) runs until the DFT phasors of the three
// components change by less than `tolerance` between windows of whole periods, or `max_steps`.
struct SteadyState2dResult {
  std::array<std::vector<std::complex<float>>, 3> phasors;  // compact, slot order; e^{jwt},
                                                            // normalized to a cos(wt) source
  int steps = 0;
  bool converged = false;
  double relative_change = 1.0;
  bool aborted = false;
};
// progress(done, max_steps, relative_change) returns false to abort.
SteadyState2dResult run_steady_state_2d(Fdtd2dEngine& engine, double frequency, double tolerance, int max_steps,
                                        const std::function<bool(int, int, double)>& progress);

}  // namespace vem
