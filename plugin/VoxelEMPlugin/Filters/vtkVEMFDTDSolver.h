/**
 * @class   vtkVEMFDTDSolver
 * @brief   FDTD simulation of a voxel model: a time series of fields (transient) or
 *          steady-state phasors, SAR and far field (steady state, DFT)
 *
 * Input: vtkImageData whose voxels are its cells (cell arrays, preferred) or its points (point
 * arrays are then taken as one voxel per point). Materials come either from per-voxel arrays
 * (MaterialMode 0: relative permittivity, conductivity in S/m, optionally relative permeability
 * and magnetic conductivity in ohm/m; 1- or 3-component for diagonal anisotropy) or from an
 * integer label array and a tissue table (MaterialMode 1). Input array indices: 0 permittivity,
 * 1 conductivity, 2 permeability, 3 magnetic conductivity, 4 labels, 5 mass density (kg/m^3,
 * optional, array mode only: SAR in the steady-state mode; in label mode the tissue table gives
 * the density). Lengths are metres, times seconds, angles degrees, frequencies hertz.
 *
 * The computational grid is the voxel grid plus AirPadding cells of vacuum on every
 * non-periodic face plus CPMLThickness cells on every CPML face (the CPML cells are not output).
 *
 * Analysis (ANALYSIS_TRANSIENT, the default and the behaviour of earlier versions):
 *   the engine (vem::make_engine: CUDA or CPU) steps the grid NumberOfSteps / SimulatedTime and
 *   the fields are snapshots in time. Illumination:
 *   - point source (default): a point dipole (SourcePosition, SourcePolarization, SourceType,
 *     SourceAmplitude) with the waveform SourceWaveform / SourceFrequency / SourceBandwidth;
 *   - plane wave: a total-field / scattered-field plane wave (vem::TfsfSource) of peak amplitude
 *     IncidentAmplitude (V/m) with the same waveform, arriving from IncidentTheta / IncidentPhi
 *     with polarization angle Polarization (FDFDSolver's convention: k = (sin t cos p,
 *     sin t sin p, cos t), E0 = cos(psi) theta_hat + sin(psi) phi_hat). The total-field box is
 *     automatic, the steady-state runs' default (vem::HarmonicPlaneWave::tfsf_margin, 5 cells
 *     inside the CPML on every face): the model must lie inside it and its faces in vacuum, so
 *     AirPadding must be at least 6; cells outside the box hold the scattered field only.
 *     ProbeAtSource is ignored;
 *   - half-wave dipole: the steady state's thin-wire dipole (DipoleCentre, DipoleAxis,
 *     DipoleLength; vem::add_thin_wire_dipole) fed at its gap with FeedCurrent (A, peak) times
 *     the source waveform (AcceptedPower needs the steady state and is not used); with
 *     ProbeAtSource the probe "feed" records the E field at DipoleCentre.
 *   Tissue tables are evaluated at TissueFrequency, or at SourceFrequency when it is 0.
 *   Output port 0: vtkImageData over the voxel grid plus padding, one time step per snapshot
 *   (TIME_STEPS = snapshot times of E, s dt). Cell arrays at the cell centres: "E" (V/m) and "H"
 *   (A/m), 3 components, each Yee component averaged over the 4 (E) or 2 (H) samples around the
 *   centre; "E_magnitude" = |E| of the interpolated vector; "permittivity" and "conductivity" as
 *   used (and "tissue" in label mode). H is half a time step behind E (field data "time_H").
 *   Output port 1: vtkTable of the probes, one row per time step ("step", "time", then one
 *   column per probe component, "source_waveform").
 *   Ports 2, 3 and 4 are empty (an image without cells, tables without columns).
 *   The solve runs once per change of the input or of a property; requests for other times read
 *   the cached snapshots (in memory up to MemoryBudgetMB, then spilled to a temporary folder, or
 *   an error if spilling is off).
 *
 * Analysis ANALYSIS_STEADY_STATE (one call of vem::run_fdtd_harmonic, fdtd_harmonic.h):
 *   running DFTs at DFTFrequencies (Hz, at least one). One frequency: CW excitation, the run stops
 *   when the relative change of the phasors between checks is below SteadyStateTolerance. Several:
 *   a pulse covering them, phasors normalized by the source spectrum, stop when they no longer
 *   change. MaxSteps caps the run (0 = automatic), FixedSteps > 0 runs exactly that many steps
 *   without the criterion. DFTSampleInterval: steps between DFT samples (0 = automatic).
 *   Illumination:
 *   - plane wave: as above, incident peak amplitude IncidentAmplitude at every frequency, the
 *     same automatic TF/SF box (AirPadding >= 6); the near-to-far box lies 2 cells inside the
 *     CPML, in the scattered-field region;
 *   - half-wave dipole: a thin PEC wire along DipoleAxis (0 x, 1 y, 2 z) centred at DipoleCentre
 *     (world, snapped to the nearest E sample), DipoleLength (0 = half the free-space wavelength at
 *     the first frequency; rounded to an odd number of edges), fed at a one-edge centre gap;
 *     normalized to AcceptedPower (W) when > 0, otherwise to a feed current of FeedCurrent (A, peak);
 *     the wire must stay inside the near-to-far box (2 cells inside the CPML);
 *   - point source: mapped to a one-edge dipole (a Hertzian dipole: the gap only, no wire) at
 *     SourcePosition along the axis of SourcePolarization (which must be along x, y or z) with the
 *     current moment SourceAmplitude (A m), i.e. a feed current |SourceAmplitude| / edge length (a
 *     negative direction or amplitude flips the sign of the phasors); not power-normalized.
 *     SourceType "hard E" is refused.
 *   Tissue tables are evaluated at TissueFrequency, or at the first DFT frequency when it is 0
 *   (one material model for all frequencies; a warning says so when several are requested).
 *   Output ports 0 and 1 are empty (no cells / no rows, no TIME_STEPS).
 *   Output port 2: vtkImageData with the extent, origin and spacing port 0 has in the transient
 *   mode (voxels + padding, CPML dropped), cell data for each frequency: "E_real", "E_imag" (V/m,
 *   peak phasors e^{jwt}, 3 components: each Yee component averaged over its 4 samples around the
 *   cell centre), "E_magnitude" = sqrt(|E|^2) at the cell centre as the SAR uses it (|Ex|^2
 *   averaged over the 4 x edges, likewise y, z; sar.h), and with a density: "SAR" (local,
 *   absorbed power density / rho from each E sample's own conductivity (sar.h), W/kg), "SAR_1g",
 *   "SAR_10g" (IEC/IEEE 62704-1 cube averages, only with ComputeAveragedSAR and cubic voxels;
 *   with other voxels they are skipped with a warning and their table values are NaN). With one
 *   frequency the names are exactly these;
 *   with several each gets the suffix "_<f>MHz", f = frequency / 1e6 printed with up to 6
 *   significant digits and '.' written as 'p' ("SAR_900MHz", "E_real_1800MHz",
 *   "SAR_1g_433p92MHz"). Materials, once: "permittivity", "conductivity", "density" (when known;
 *   the density used for SAR: values below 10 kg/m^3, gases such as the tables' air at 1.16, are
 *   air and written as 0),
 *   "tissue" (label mode). For a plane wave, cells outside the total-field box hold the scattered
 *   field only. Field data (arrays with one tuple per frequency, in the order of DFTFrequencies):
 *   "frequency_Hz", "whole_body_SAR_W_per_kg", "peak_local_SAR_W_per_kg", "psSAR1g_W_per_kg",
 *   "psSAR1g_location_m" (3 components, world centre of the peak cube), "psSAR10g_W_per_kg",
 *   "psSAR10g_location_m", "absorbed_power_W", "accepted_power_W", "radiated_power_W",
 *   "scattering_cross_section_m2", "feed_impedance_ohm" (2 components: real, imaginary); and one
 *   value each: "steps", "converged" (1/0), "relative_change", "time_step_dt", "simulated_time",
 *   "dft_sample_interval", "tissue_frequency_Hz" (label mode; NaN otherwise), "backend".
 *   Quantities that do not apply are NaN (SAR without a density, feed quantities and accepted
 *   power for a plane wave, the cross-section for a dipole, 1 g / 10 g without ComputeAveragedSAR
 *   or cubic voxels, or when no averaging cube is valid).
 *   Output port 3: vtkTable "summary", one row per frequency: frequency_Hz,
 *   whole_body_SAR_W_per_kg, peak_local_SAR_W_per_kg, psSAR1g_W_per_kg, psSAR1g_x_m, psSAR1g_y_m,
 *   psSAR1g_z_m, psSAR10g_W_per_kg, psSAR10g_x_m, psSAR10g_y_m, psSAR10g_z_m, absorbed_power_W,
 *   accepted_power_W, radiated_power_W, feed_impedance_real_ohm, feed_impedance_imag_ohm,
 *   scattering_cross_section_m2, steps, converged (same NaN rule; the same values as the field
 *   data of port 2).
 *   Output port 4: vtkTable far field in FarFieldStep steps. Plane wave, theta 0..180: FDFDSolver's
 *   columns "theta_deg" (scattering angle from the forward direction towards E0 in the E plane,
 *   towards k x E0 in the H plane; 180 = backscatter), "rcs_E_plane_dBsm", "rcs_H_plane_dBsm",
 *   "rcs_E_plane_m2", "rcs_H_plane_m2". Dipole (and point source) along axis a, theta 0..360:
 *   "theta_deg", "gain_E_plane_dBi", "gain_H_plane_dBi", "gain_E_plane", "gain_H_plane"
 *   (linear, 4 pi U / accepted power, so losses in the body count); with b = a+1, c = a+2
 *   cyclically the E-plane direction is cos(t) a_hat + sin(t) c_hat (theta from the axis), the
 *   H-plane direction cos(t) b_hat + sin(t) c_hat (for a z dipole: the xz and xy planes). With
 *   several frequencies a first column "frequency_Hz" is added and the rows of each frequency
 *   follow each other in the order of DFTFrequencies.
 *   A run that does not meet the criterion before MaxSteps still gives outputs, with converged 0
 *   and a warning.
 *
 * Progress reports steps and Mcells/s (transient) or steps and the relative change (steady
 * state); AbortExecute stops the run at the next progress interval and leaves every output port
 * empty (no partial result). Errors (vtkErrorMacro, with the solver's message naming the array,
 * value and limit) also leave every port empty.
 */
#ifndef vtkVEMFDTDSolver_h
#define vtkVEMFDTDSolver_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkImageAlgorithm.h"
#include "vtkTimeStamp.h"

#include <memory>
#include <string>
#include <vector>

class vtkImageData;
class vtkTable;

class VOXELEMFILTERS_EXPORT vtkVEMFDTDSolver : public vtkImageAlgorithm
{
public:
  static vtkVEMFDTDSolver* New();
  vtkTypeMacro(vtkVEMFDTDSolver, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum MaterialModes
  {
    PROPERTY_ARRAYS = 0,
    LABELS_AND_TISSUE_TABLE = 1
  };
  enum Backends
  {
    BACKEND_AUTO = 0,
    BACKEND_CUDA = 1,
    BACKEND_CPU = 2
  };
  enum BoundaryTypes
  {
    BOUNDARY_CPML = 0,
    BOUNDARY_PEC = 1,
    BOUNDARY_PMC = 2,
    BOUNDARY_PERIODIC = 3
  };
  enum Waveforms
  {
    WAVEFORM_MODULATED_GAUSSIAN = 0,
    WAVEFORM_SINUSOID = 1,
    WAVEFORM_GAUSSIAN = 2,
    WAVEFORM_DIFFERENTIATED_GAUSSIAN = 3
  };
  enum SourceTypes
  {
    SOURCE_ELECTRIC_DIPOLE = 0, // soft current-moment source (A m)
    SOURCE_HARD_E = 1           // E components forced to amplitude * w(t) (V/m)
  };
  enum StopModes
  {
    STOP_AFTER_STEPS = 0,
    STOP_AFTER_TIME = 1
  };
  enum Analyses
  {
    ANALYSIS_TRANSIENT = 0,    // time series of snapshots (ports 0, 1)
    ANALYSIS_STEADY_STATE = 1  // DFT phasors, SAR, far field (ports 2, 3, 4)
  };
  enum Illuminations
  {
    ILLUMINATION_POINT_SOURCE = 0,
    ILLUMINATION_PLANE_WAVE = 1,
    ILLUMINATION_HALF_WAVE_DIPOLE = 2
  };

  // Analysis and illumination.
  vtkSetClampMacro(Analysis, int, 0, 1);
  vtkGetMacro(Analysis, int);
  vtkSetClampMacro(Illumination, int, 0, 2);
  vtkGetMacro(Illumination, int);

  // Plane wave (degrees; V/m peak).
  vtkSetMacro(IncidentTheta, double);
  vtkGetMacro(IncidentTheta, double);
  vtkSetMacro(IncidentPhi, double);
  vtkGetMacro(IncidentPhi, double);
  vtkSetMacro(Polarization, double);
  vtkGetMacro(Polarization, double);
  vtkSetMacro(IncidentAmplitude, double);
  vtkGetMacro(IncidentAmplitude, double);

  // Half-wave dipole.
  vtkSetVector3Macro(DipoleCentre, double);
  vtkGetVector3Macro(DipoleCentre, double);
  vtkSetClampMacro(DipoleAxis, int, 0, 2);
  vtkGetMacro(DipoleAxis, int);
  /// m; 0 = half the free-space wavelength at the first DFT frequency.
  vtkSetMacro(DipoleLength, double);
  vtkGetMacro(DipoleLength, double);
  /// W; > 0 normalizes the dipole to this accepted power, 0 uses FeedCurrent.
  vtkSetMacro(AcceptedPower, double);
  vtkGetMacro(AcceptedPower, double);
  /// A, peak.
  vtkSetMacro(FeedCurrent, double);
  vtkGetMacro(FeedCurrent, double);

  // Steady state.
  void SetNumberOfDFTFrequencies(int n);
  int GetNumberOfDFTFrequencies() const;
  void SetDFTFrequency(int i, double f);
  double GetDFTFrequency(int i) const;
  void ClearDFTFrequencies();
  vtkSetMacro(SteadyStateTolerance, double);
  vtkGetMacro(SteadyStateTolerance, double);
  /// 0 = automatic.
  vtkSetClampMacro(MaxSteps, int, 0, 1000000000);
  vtkGetMacro(MaxSteps, int);
  /// > 0: exactly this many steps, no steady-state criterion.
  vtkSetClampMacro(FixedSteps, int, 0, 1000000000);
  vtkGetMacro(FixedSteps, int);
  /// Steps between DFT samples; 0 = automatic.
  vtkSetClampMacro(DFTSampleInterval, int, 0, 1000000);
  vtkGetMacro(DFTSampleInterval, int);
  /// Theta step of the far-field tables, degrees.
  vtkSetClampMacro(FarFieldStep, double, 0.01, 90.0);
  vtkGetMacro(FarFieldStep, double);
  vtkSetMacro(ComputeAveragedSAR, bool);
  vtkGetMacro(ComputeAveragedSAR, bool);

  // Materials.
  vtkSetClampMacro(MaterialMode, int, 0, 1);
  vtkGetMacro(MaterialMode, int);
  vtkSetStdStringFromCharMacro(TissueTableFile);
  vtkGetCharFromStdStringMacro(TissueTableFile);
  vtkSetMacro(UseBuiltInTissueTable, bool);
  vtkGetMacro(UseBuiltInTissueTable, bool);
  /// Frequency for the tissue table, Hz; 0 (default) = the source frequency (transient) or the
  /// first DFT frequency (steady state).
  vtkSetMacro(TissueFrequency, double);
  vtkGetMacro(TissueFrequency, double);
  /// Average eps/sigma over the cells around each E sample (property-array mode).
  vtkSetMacro(AverageAtEdges, bool);
  vtkGetMacro(AverageAtEdges, bool);

  // Engine.
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(DeviceIndex, int, 0, 1024);
  vtkGetMacro(DeviceIndex, int);

  // Boundaries, padding.
  vtkSetClampMacro(XLowBoundary, int, 0, 3);
  vtkGetMacro(XLowBoundary, int);
  vtkSetClampMacro(XHighBoundary, int, 0, 3);
  vtkGetMacro(XHighBoundary, int);
  vtkSetClampMacro(YLowBoundary, int, 0, 3);
  vtkGetMacro(YLowBoundary, int);
  vtkSetClampMacro(YHighBoundary, int, 0, 3);
  vtkGetMacro(YHighBoundary, int);
  vtkSetClampMacro(ZLowBoundary, int, 0, 3);
  vtkGetMacro(ZLowBoundary, int);
  vtkSetClampMacro(ZHighBoundary, int, 0, 3);
  vtkGetMacro(ZHighBoundary, int);
  void SetBoundary(int face, int type);
  int GetBoundary(int face) const;
  vtkSetClampMacro(CPMLThickness, int, 1, 1000);
  vtkGetMacro(CPMLThickness, int);
  vtkSetClampMacro(AirPadding, int, 0, 100000);
  vtkGetMacro(AirPadding, int);

  // Source.
  vtkSetClampMacro(SourceType, int, 0, 1);
  vtkGetMacro(SourceType, int);
  vtkSetVector3Macro(SourcePosition, double);
  vtkGetVector3Macro(SourcePosition, double);
  vtkSetVector3Macro(SourcePolarization, double);
  vtkGetVector3Macro(SourcePolarization, double);
  vtkSetClampMacro(SourceWaveform, int, 0, 3);
  vtkGetMacro(SourceWaveform, int);
  vtkSetMacro(SourceFrequency, double);
  vtkGetMacro(SourceFrequency, double);
  /// -20 dB bandwidth of the Gaussian pulses, Hz; 0 = the source frequency.
  vtkSetMacro(SourceBandwidth, double);
  vtkGetMacro(SourceBandwidth, double);
  vtkSetMacro(SourceAmplitude, double);
  vtkGetMacro(SourceAmplitude, double);

  // Time stepping.
  vtkSetClampMacro(StopMode, int, 0, 1);
  vtkGetMacro(StopMode, int);
  vtkSetClampMacro(NumberOfSteps, int, 1, 100000000);
  vtkGetMacro(NumberOfSteps, int);
  vtkSetMacro(SimulatedTime, double);
  vtkGetMacro(SimulatedTime, double);
  vtkSetMacro(CourantFactor, double);
  vtkGetMacro(CourantFactor, double);

  // Snapshots.
  vtkSetClampMacro(SnapshotInterval, int, 1, 100000000);
  vtkGetMacro(SnapshotInterval, int);
  vtkSetMacro(KeepE, bool);
  vtkGetMacro(KeepE, bool);
  vtkSetMacro(KeepH, bool);
  vtkGetMacro(KeepH, bool);
  vtkSetMacro(KeepEMagnitude, bool);
  vtkGetMacro(KeepEMagnitude, bool);
  vtkSetMacro(KeepMaterials, bool);
  vtkGetMacro(KeepMaterials, bool);
  vtkSetClampMacro(MemoryBudgetMB, double, 1.0, 1e9);
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

  vtkSetClampMacro(ProgressInterval, int, 1, 1000000);
  vtkGetMacro(ProgressInterval, int);

  ///@{
  /// Results of the last solve (information only).
  vtkGetMacro(NumberOfSolves, int);
  vtkGetMacro(TimeStep, double);
  vtkGetMacro(LastMcellsPerSecond, double);
  const char* GetLastBackend() const { return this->LastBackend.c_str(); }
  vtkGetMacro(LastFieldEnergy, double);
  /// Steady state: steps run, criterion met, last relative change.
  vtkGetMacro(LastSteps, int);
  vtkGetMacro(LastConverged, bool);
  vtkGetMacro(LastRelativeChange, double);
  ///@}

  /// Output ports 1 to 4.
  vtkTable* GetProbeOutput();
  vtkImageData* GetSteadyStateOutput();
  vtkTable* GetSummaryOutput();
  vtkTable* GetFarFieldOutput();

protected:
  vtkVEMFDTDSolver();
  ~vtkVEMFDTDSolver() override;

  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int MaterialMode;
  std::string TissueTableFile;
  bool UseBuiltInTissueTable;
  double TissueFrequency;
  bool AverageAtEdges;
  int Backend;
  int DeviceIndex;
  int XLowBoundary, XHighBoundary, YLowBoundary, YHighBoundary, ZLowBoundary, ZHighBoundary;
  int CPMLThickness;
  int AirPadding;
  int SourceType;
  double SourcePosition[3];
  double SourcePolarization[3];
  int SourceWaveform;
  double SourceFrequency;
  double SourceBandwidth;
  double SourceAmplitude;
  int StopMode;
  int NumberOfSteps;
  double SimulatedTime;
  double CourantFactor;
  int SnapshotInterval;
  bool KeepE, KeepH, KeepEMagnitude, KeepMaterials;
  double MemoryBudgetMB;
  bool SpillToDisk;
  std::string SpillDirectory;
  std::vector<double> ProbePositions;
  bool ProbeAtSource;
  int ProgressInterval;
  int Analysis;
  int Illumination;
  double IncidentTheta, IncidentPhi, Polarization, IncidentAmplitude;
  double DipoleCentre[3];
  int DipoleAxis;
  double DipoleLength;
  double AcceptedPower;
  double FeedCurrent;
  std::vector<double> DFTFrequencies;
  double SteadyStateTolerance;
  int MaxSteps;
  int FixedSteps;
  int DFTSampleInterval;
  double FarFieldStep;
  bool ComputeAveragedSAR;

  int NumberOfSolves;
  double TimeStep;
  double LastMcellsPerSecond;
  std::string LastBackend;
  double LastFieldEnergy;
  int LastSteps;
  bool LastConverged;
  double LastRelativeChange;

private:
  vtkVEMFDTDSolver(const vtkVEMFDTDSolver&) = delete;
  void operator=(const vtkVEMFDTDSolver&) = delete;

  struct Model;
  // Both return false when aborted and throw vem::Error.
  bool Solve(vtkImageData* input, vtkInformationVector** inputVector);
  bool SolveSteadyState(vtkImageData* input, vtkInformationVector** inputVector);
  void BuildModel(vtkImageData* input, vtkInformationVector** inputVector, bool steady, Model& m);

  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
