/**
 * @class   vtkVEMFDTDSolver
 * @brief   Transient FDTD simulation of a voxel model: a time series of E and H, and probe signals
 *
 * The voxel model, boundaries, illumination and engine are vtkVEMFDTDFilterBase's; the options of
 * this analysis are vem::TransientOptions (fdtd_transient.h), which checks them. The engine
 * (vem::make_engine: CUDA or CPU) steps the grid NumberOfSteps / SimulatedTime and the fields are
 * snapshots in time. Illumination:
 *   - point source (default): a point dipole (SourcePosition, SourcePolarization, SourceType,
 *     SourceAmplitude) with the waveform SourceWaveform / SourceFrequency / SourceBandwidth;
 *   - plane wave: a total-field / scattered-field plane wave (vem::TfsfSource) of peak amplitude
 *     IncidentAmplitude (V/m) with the same waveform, arriving from IncidentTheta / IncidentPhi
 *     with polarization angle Polarization (FDFDSolver's convention: k = (sin t cos p,
 *     sin t sin p, cos t), E0 = cos(psi) theta_hat + sin(psi) phi_hat). The total-field box is
 *     automatic (vem::HarmonicPlaneWave::tfsf_margin, 5 cells inside the CPML on every face): the
 *     model must lie inside it and its faces in vacuum, so AirPadding must be at least 6; cells
 *     outside the box hold the scattered field only. ProbeAtSource is ignored;
 *   - half-wave dipole: the steady state's thin-wire dipole (DipoleCentre, DipoleAxis,
 *     DipoleLength; vem::add_thin_wire_dipole) fed at its gap with FeedCurrent (A, peak) times
 *     the source waveform; with ProbeAtSource the probe "feed" records the E field at DipoleCentre.
 * Tissue tables are evaluated at TissueFrequency, or at SourceFrequency when it is 0.
 *
 * Output port 0: vtkImageData over the voxel grid plus padding, one time step per snapshot
 * (TIME_STEPS = snapshot times of E, s dt). Cell arrays at the cell centres: "E" (V/m) and "H"
 * (A/m), 3 components, each Yee component averaged over the 4 (E) or 2 (H) samples around the
 * centre; "E_magnitude" = |E| of the interpolated vector; "permittivity" and "conductivity" as
 * used (and "tissue" in label mode). H is half a time step behind E (field data "time_H").
 * Output port 1: vtkTable of the probes, one row per time step ("step", "time", then one column
 * per probe component, "source_waveform").
 * The solve runs once per change of the input or of a property; requests for other times read
 * the cached snapshots (in memory up to MemoryBudgetMB, then spilled to a temporary folder, or an
 * error if spilling is off). Progress reports steps and Mcells/s; AbortExecute stops the run at
 * the next progress interval and leaves both outputs empty.
 *
 * 2D (an image with one voxel along one axis, vtkVEMFDTDFilterBase): the same outputs on the
 * image's plane (a flat input gives a flat output): E and H in 3D axes (TM: E along the normal, H
 * in the plane; TE the reverse), probes of the polarization's three components named with their
 * 3D names. The point source is a line source (SourceAmplitude in A for the current), the plane
 * wave travels at IncidentAngle2D in the plane; the half-wave dipole is refused.
 */
#ifndef vtkVEMFDTDSolver_h
#define vtkVEMFDTDSolver_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkVEMFDTDFilterBase.h"

#include <memory>
#include <string>
#include <vector>

class vtkTable;
namespace vem_vtk
{
class FDTDRun;
struct TransientRequest;
}

class VOXELEMFILTERS_EXPORT vtkVEMFDTDSolver : public vtkVEMFDTDFilterBase
{
public:
  static vtkVEMFDTDSolver* New();
  vtkTypeMacro(vtkVEMFDTDSolver, vtkVEMFDTDFilterBase);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum Waveforms
  {
    WAVEFORM_MODULATED_GAUSSIAN = 0,
    WAVEFORM_SINUSOID = 1,
    WAVEFORM_GAUSSIAN = 2,
    WAVEFORM_DIFFERENTIATED_GAUSSIAN = 3
  };
  enum StopModes
  {
    STOP_AFTER_STEPS = 0,
    STOP_AFTER_TIME = 1
  };

  // Source waveform.
  vtkSetClampMacro(SourceWaveform, int, 0, 3);
  vtkGetMacro(SourceWaveform, int);
  vtkSetMacro(SourceFrequency, double);
  vtkGetMacro(SourceFrequency, double);
  /// -20 dB bandwidth of the Gaussian pulses, Hz; 0 = the source frequency.
  vtkSetMacro(SourceBandwidth, double);
  vtkGetMacro(SourceBandwidth, double);

  // Time stepping.
  vtkSetClampMacro(StopMode, int, 0, 1);
  vtkGetMacro(StopMode, int);
  vtkSetMacro(NumberOfSteps, int);
  vtkGetMacro(NumberOfSteps, int);
  vtkSetMacro(SimulatedTime, double);
  vtkGetMacro(SimulatedTime, double);

  // Snapshots.
  vtkSetMacro(SnapshotInterval, int);
  vtkGetMacro(SnapshotInterval, int);
  vtkSetMacro(KeepE, bool);
  vtkGetMacro(KeepE, bool);
  vtkSetMacro(KeepH, bool);
  vtkGetMacro(KeepH, bool);
  vtkSetMacro(KeepEMagnitude, bool);
  vtkGetMacro(KeepEMagnitude, bool);
  vtkSetMacro(KeepMaterials, bool);
  vtkGetMacro(KeepMaterials, bool);
  vtkSetMacro(MemoryBudgetMB, double);
  vtkGetMacro(MemoryBudgetMB, double);
  vtkSetMacro(SpillToDisk, bool);
  vtkGetMacro(SpillToDisk, bool);
  /// Folder for spilled snapshots; empty = the system temporary folder.
  vtkSetStdStringFromCharMacro(SpillDirectory);
  vtkGetCharFromStdStringMacro(SpillDirectory);

  // Probes: E components recorded every step at world positions (and at the source).
  void SetNumberOfProbePositions(int n);
  void SetProbePosition(int i, double x, double y, double z);
  void ClearProbePositions();
  int GetNumberOfProbePositions() const;
  vtkSetMacro(ProbeAtSource, bool);
  vtkGetMacro(ProbeAtSource, bool);

  /// Field energy at the end of the last run (J; information only).
  vtkGetMacro(LastFieldEnergy, double);

  /// Output port 1.
  vtkTable* GetProbeOutput();

protected:
  vtkVEMFDTDSolver();
  ~vtkVEMFDTDSolver() override;

  const char* Label() const override { return "FDTD Solver"; }
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  /// The properties as a run request (TransientOptions, 2D options, model, engine).
  void GetTransientRequest(vem_vtk::TransientRequest& r);
  /// Builds the run of `r` (filled by GetTransientRequest) on the input; reports its warnings.
  /// Throws vem::Error.
  bool StartRun(vem_vtk::FDTDRun& run, vtkImageData* input, vtkInformationVector** inputVector,
    vem_vtk::TransientRequest& r);

  int SourceWaveform;
  double SourceFrequency;
  double SourceBandwidth;
  int StopMode;
  int NumberOfSteps;
  double SimulatedTime;
  int SnapshotInterval;
  bool KeepE, KeepH, KeepEMagnitude, KeepMaterials;
  double MemoryBudgetMB;
  bool SpillToDisk;
  std::string SpillDirectory;
  std::vector<double> ProbePositions;
  bool ProbeAtSource;
  double LastFieldEnergy;

private:
  vtkVEMFDTDSolver(const vtkVEMFDTDSolver&) = delete;
  void operator=(const vtkVEMFDTDSolver&) = delete;

  // Returns false when aborted; throws vem::Error.
  bool Solve(vtkImageData* input, vtkInformationVector** inputVector);

  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
