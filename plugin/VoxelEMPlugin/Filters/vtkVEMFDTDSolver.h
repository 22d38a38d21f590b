/**
 * @class   vtkVEMFDTDSolver
 * @brief   FDTD simulation of a voxel model, output as a time series of fields
 *
 * Input: vtkImageData whose voxels are its cells (cell arrays, preferred) or its points (point
 * arrays are then taken as one voxel per point). Materials come either from per-voxel arrays
 * (MaterialMode 0: relative permittivity, conductivity in S/m, optionally relative permeability
 * and magnetic conductivity in ohm/m; 1- or 3-component for diagonal anisotropy) or from an
 * integer label array and a tissue table evaluated at the tissue frequency (MaterialMode 1).
 * Input array indices: 0 permittivity, 1 conductivity, 2 permeability, 3 magnetic conductivity,
 * 4 labels. Lengths are metres, times seconds.
 *
 * The computational grid is the voxel grid plus AirPadding cells of vacuum on every
 * non-periodic face plus CPMLThickness cells on every CPML face (the CPML cells are not output).
 * A point dipole source (position in world coordinates, polarization vector, waveform) drives
 * it; the engine (vem::make_engine: CUDA or CPU) steps it.
 *
 * Output port 0: vtkImageData over the voxel grid plus padding, one time step per snapshot
 * (TIME_STEPS = snapshot times of E, s dt). Cell arrays at the cell centres: "E" (V/m) and "H"
 * (A/m), 3 components, each Yee component averaged over the 4 (E) or 2 (H) samples around the
 * centre; "E_magnitude" = |E| of the interpolated vector; "permittivity" and "conductivity" as
 * used (and "tissue" in label mode). H is half a time step behind E (field data "time_H").
 * Output port 1: vtkTable of the probes, one row per time step ("step", "time", then one
 * column per probe component, "source_waveform").
 *
 * The solve runs once per change of the input or of a property; requests for other times read
 * the cached snapshots (in memory up to MemoryBudgetMB, then spilled to a temporary folder, or
 * an error if spilling is off). Progress reports steps and Mcells/s; AbortExecute stops the run
 * at the next progress interval and leaves empty outputs (no partial result).
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

  // Materials.
  vtkSetClampMacro(MaterialMode, int, 0, 1);
  vtkGetMacro(MaterialMode, int);
  vtkSetStdStringFromCharMacro(TissueTableFile);
  vtkGetCharFromStdStringMacro(TissueTableFile);
  vtkSetMacro(UseBuiltInTissueTable, bool);
  vtkGetMacro(UseBuiltInTissueTable, bool);
  /// Frequency for the tissue table, Hz; 0 (default) = the source frequency.
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
  ///@}

  /// Output port 1.
  vtkTable* GetProbeOutput();

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

  int NumberOfSolves;
  double TimeStep;
  double LastMcellsPerSecond;
  std::string LastBackend;
  double LastFieldEnergy;

private:
  vtkVEMFDTDSolver(const vtkVEMFDTDSolver&) = delete;
  void operator=(const vtkVEMFDTDSolver&) = delete;

  bool Solve(vtkImageData* input, vtkInformationVector** inputVector);

  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
