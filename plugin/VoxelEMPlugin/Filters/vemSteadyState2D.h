// FDTD Steady State on a 2D image (one voxel along an axis): a CW run of the 2D solver at the one
// DFT frequency until its phasors settle (vem::run_steady_state_2d), and the filter's three
// outputs from it. What a 2D run gives (per unit length along the normal):
//   port 0: "E_real", "E_imag" (V/m peak phasors e^{jwt} relative to a cos(wt) source, 3
//     components in x, y, z at the cell centres), "H_real", "H_imag" (A/m), "E_magnitude" (|E| of
//     the cell-centred phasor), the materials; field data frequency_Hz, steps, converged,
//     relative_change, time_step_dt, backend;
//   port 1: summary (frequency_Hz, steps, converged, relative_change);
//   port 2: plane wave: bistatic scattering width (phi_deg from the plane's first axis towards its
//     second, scattering_width_m, scattering_width_dBm) from near_to_far_2d on a contour 2 cells
//     inside the CPML; point source: the far-field magnitude |F| (far_field_magnitude).
// Not available in 2D (a warning says so once per run): SAR, 1 g / 10 g averages, absorbed /
// accepted / radiated power, feed impedance, several DFT frequencies (refused), the dipole.
#ifndef vemSteadyState2D_h
#define vemSteadyState2D_h

#include "vemFDTDRun.h"
#include "vemSteadyStateOutputs.h"

#include <functional>
#include <string>
#include <vector>

namespace vem_vtk
{

struct SteadyState2DRequest
{
  TransientRequest run;      // model, source, engine (the waveform is replaced by a CW sinusoid)
  std::vector<double> frequencies;
  double tolerance = 1e-3;
  int max_steps = 0;         // 0 = automatic
  double far_field_step_deg = 2.0;
  std::function<bool(int, int, double)> progress;
};

struct SteadyState2DResult
{
  SteadyStateOutputs outputs;
  int steps = 0;
  bool converged = false;
  bool aborted = false;
  double relative_change = 1.0;
  double dt = 0.0;
  std::string backend;
};

/// Throws vem::Error (the solver's messages; several frequencies or a dipole are refused).
SteadyState2DResult RunSteadyState2D(vtkAlgorithm* self, const ArrayLookup& lookup,
  vtkImageData* input, SteadyState2DRequest& request, std::vector<std::string>& warnings);

} // namespace vem_vtk

#endif
