/**
 * @class   vtkVEMFDTDFilterBase
 * @brief   What the two FDTD filters share: the voxel model (materials, boundaries, padding), the
 *          illumination and the engine
 *
 * vtkVEMFDTDSolver (the transient time series) and vtkVEMFDTDSteadyState (phasors, SAR, far
 * field) derive from it. Input: vtkImageData whose voxels are its cells (cell arrays, preferred) or
 * its points (point arrays are then taken as one voxel per point). Materials come either from
 * per-voxel arrays (MaterialMode 0: relative permittivity, conductivity in S/m, optionally relative
 * permeability and magnetic conductivity in ohm/m; 1- or 3-component for diagonal anisotropy) or
 * from an integer label array and a tissue table (MaterialMode 1). Input array indices: 0
 * permittivity, 1 conductivity, 2 permeability, 3 magnetic conductivity, 4 labels, 5 mass density
 * (kg/m^3, steady state only). The computational grid is vem::VoxelDomain (voxel_domain.h): the
 * voxels plus AirPadding cells of vacuum on every non-periodic face plus CPMLThickness cells on
 * every CPML face (not output). Lengths are metres, times seconds, angles degrees, frequencies
 * hertz.
 *
 * The properties are translated into the solver's option types (vem::VoxelDomainOptions,
 * vem::TransientOptions, vem::HarmonicOptions), whose validate() gives the error messages: the same
 * as a C++ user of the solver gets. Errors (one vtkErrorMacro each) and aborts leave every output
 * empty.
 *
 * 2D: an image with exactly one voxel along one axis (a 1-cell-thick image, or a flat image with
 * one point along that axis) runs the 2D solver (vem/fdtd2d, fdtd2d_transient.h) in that plane,
 * unless Dimension is 3 (3D). Polarization2D 0 = TM (E along the normal), 1 = TE (E in the plane);
 * IncidentAngle2D (degrees) is the plane wave's direction in the plane, from the plane's first
 * axis u towards its second v ((u, v) = (x, y), (y, z), (z, x) for the normal z, x, y).
 */
#ifndef vtkVEMFDTDFilterBase_h
#define vtkVEMFDTDFilterBase_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkImageAlgorithm.h"

#include <functional>
#include <string>

namespace vem
{
struct VoxelDomain;
struct VoxelDomainOptions;
struct HarmonicPlaneWave;
struct HarmonicDipole;
enum class Backend;
}
namespace vem_vtk
{
struct VoxelModelRequest;
struct RunGeometry;
}

class VOXELEMFILTERS_EXPORT vtkVEMFDTDFilterBase : public vtkImageAlgorithm
{
public:
  vtkTypeMacro(vtkVEMFDTDFilterBase, vtkImageAlgorithm);
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
  enum SubpixelTensors
  {
    SUBPIXEL_TENSOR_DIAGONAL = 0,
    SUBPIXEL_TENSOR_FULL = 1
  };
  enum SourceTypes
  {
    SOURCE_ELECTRIC_DIPOLE = 0, // soft current-moment source (A m)
    SOURCE_HARD_E = 1           // E components forced to amplitude * w(t) (V/m)
  };
  enum Illuminations
  {
    ILLUMINATION_POINT_SOURCE = 0,
    ILLUMINATION_PLANE_WAVE = 1,
    ILLUMINATION_HALF_WAVE_DIPOLE = 2
  };

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

  // Half-wave dipole (m, axis 0 x / 1 y / 2 z, A peak).
  vtkSetVector3Macro(DipoleCentre, double);
  vtkGetVector3Macro(DipoleCentre, double);
  vtkSetClampMacro(DipoleAxis, int, 0, 2);
  vtkGetMacro(DipoleAxis, int);
  vtkSetMacro(DipoleLength, double);
  vtkGetMacro(DipoleLength, double);
  vtkSetMacro(FeedCurrent, double);
  vtkGetMacro(FeedCurrent, double);

  // Point source.
  vtkSetClampMacro(SourceType, int, 0, 1);
  vtkGetMacro(SourceType, int);
  vtkSetVector3Macro(SourcePosition, double);
  vtkGetVector3Macro(SourcePosition, double);
  vtkSetVector3Macro(SourcePolarization, double);
  vtkGetVector3Macro(SourcePolarization, double);
  vtkSetMacro(SourceAmplitude, double);
  vtkGetMacro(SourceAmplitude, double);

  // Materials.
  vtkSetClampMacro(MaterialMode, int, 0, 1);
  vtkGetMacro(MaterialMode, int);
  vtkSetStdStringFromCharMacro(TissueTableFile);
  vtkGetCharFromStdStringMacro(TissueTableFile);
  vtkSetMacro(UseBuiltInTissueTable, bool);
  vtkGetMacro(UseBuiltInTissueTable, bool);
  /// Hz; 0 = the analysis's own frequency (source frequency or first DFT frequency).
  vtkSetMacro(TissueFrequency, double);
  vtkGetMacro(TissueFrequency, double);
  vtkSetMacro(AverageAtEdges, bool);
  vtkGetMacro(AverageAtEdges, bool);

  // Engine.
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(DeviceIndex, int, 0, 1024);
  vtkGetMacro(DeviceIndex, int);

  // Boundaries, padding, time step.
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
  vtkSetMacro(CPMLThickness, int);
  vtkGetMacro(CPMLThickness, int);
  vtkSetMacro(AirPadding, int);
  vtkGetMacro(AirPadding, int);
  vtkSetMacro(CourantFactor, double);
  vtkGetMacro(CourantFactor, double);
  /// Spatial update scheme (vem::Scheme: 0 yee, 1 fv24, 2 fv24_wb, 3 s22, 4 s44), 3D runs.
  vtkSetMacro(Scheme, int);
  vtkGetMacro(Scheme, int);
  /// Field storage of the 3D engines (vem::FieldStorage: 0 float32, 1 float16, 2 bfloat16; float32
  /// arithmetic in every case), checked by the solver (VoxelDomainOptions::field_storage).
  vtkSetMacro(FieldStorage, int);
  vtkGetMacro(FieldStorage, int);
  /// Subpixel smoothing of the permittivity at material interfaces
  /// (vem::VoxelDomainOptions::subpixel_smoothing, vem/core/subpixel_smoothing.h), 3D runs.
  vtkSetMacro(SubpixelSmoothing, bool);
  vtkGetMacro(SubpixelSmoothing, bool);
  vtkBooleanMacro(SubpixelSmoothing, bool);
  /// With SubpixelSmoothing: SUBPIXEL_TENSOR_FULL (default) also applies the off-diagonal elements
  /// of the smoothed inverse permittivity (vem::SubpixelOptions::full_tensor, the
  /// SubpixelTensorExtension) where the interface is lossless; SUBPIXEL_TENSOR_DIAGONAL keeps
  /// each sample's diagonal only. Refused with Scheme s44 and on several ranks (when rows exist).
  vtkSetClampMacro(SubpixelTensor, int, 0, 1);
  vtkGetMacro(SubpixelTensor, int);

  // 2D (values checked by the solver: one message, empty outputs).
  vtkSetMacro(Dimension, int);
  vtkGetMacro(Dimension, int);
  vtkSetMacro(Polarization2D, int);
  vtkGetMacro(Polarization2D, int);
  vtkSetMacro(IncidentAngle2D, double);
  vtkGetMacro(IncidentAngle2D, double);

  vtkSetMacro(ProgressInterval, int);
  vtkGetMacro(ProgressInterval, int);

  ///@{
  /// Results of the last solve (information only).
  vtkGetMacro(NumberOfSolves, int);
  vtkGetMacro(TimeStep, double);
  vtkGetMacro(LastMcellsPerSecond, double);
  const char* GetLastBackend() const { return this->LastBackend.c_str(); }
  ///@}

protected:
  /// FDTD Solver and FDTD Steady State split a 3D model over ParaView's MPI ranks (each rank
  /// outputs its piece); FDTD Live runs on one rank.
  bool SplitsOverRanks = false;
  vtkVEMFDTDFilterBase();
  ~vtkVEMFDTDFilterBase() override;

  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  /// What the last run gave for the current pipeline state (vem_vtk::RunOnce): nothing yet, a
  /// result, an error or an abort (each reported once; the same state does not run again). The
  /// state is current when neither this filter nor anything upstream changed (the pipeline
  /// MTime) and the input is the same data object; the input's own MTime is no guide, the
  /// pipeline touches it on every request.
  enum RunStates
  {
    RUN_NONE = 0,
    RUN_SOLVED = 1,
    RUN_FAILED = 2,
    RUN_ABORTED = 3
  };
  int GetRunState(vtkDataObject* input);
  /// Runs `solve` (vem_vtk::RunReported: each error reported once) unless the state is current,
  /// and records the outcome.
  int Run(vtkDataObject* input, const std::function<bool()>& solve);

  /// Whether the selected material array (permittivity or labels) is point data.
  bool PointsAsVoxels();

  /// The analysis's label for messages ("FDTD Solver", "FDTD Steady State").
  virtual const char* Label() const = 0;

  /// The run's geometry from the input's pipeline information (whole extent, spacing, origin)
  /// and the options; false when there is none or an option is bad (RequestData reports it).
  bool InputGeometry(vtkInformationVector** inputVector, vem_vtk::RunGeometry& g);
  /// RequestInformation's part: the domain of the input's geometry, set as the output's whole
  /// extent, spacing and origin. False when the geometry or an option is bad (RequestData
  /// reports it, once).
  bool InformationDomain(
    vtkInformationVector** inputVector, vtkInformation* outInfo, vem_vtk::RunGeometry& g);

  /// The materials and the domain of the properties (the analysis adds the tissue frequency,
  /// the density and which material arrays to keep).
  void GetModelRequest(vem_vtk::VoxelModelRequest& r) const;

  ///@{
  /// The properties as the solver's option types (angles converted to radians).
  void GetDomainOptions(vem::VoxelDomainOptions& o) const;
  void GetPlaneWave(vem::HarmonicPlaneWave& w) const;
  void GetDipole(vem::HarmonicDipole& d) const;
  vem::Backend GetEngineBackend() const;
  /// Polarization2D and IncidentAngle2D as the 2D solver's options (not validated here).
  void Get2DOptions(int& polarization, double& incidentAngleRadians) const;
  ///@}

  int Illumination;
  double IncidentTheta, IncidentPhi, Polarization, IncidentAmplitude;
  double DipoleCentre[3];
  int DipoleAxis;
  double DipoleLength;
  double FeedCurrent;
  int SourceType;
  double SourcePosition[3];
  double SourcePolarization[3];
  double SourceAmplitude;
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
  double CourantFactor;
  int Scheme = 0;
  int FieldStorage = 0;
  bool SubpixelSmoothing = false;
  int SubpixelTensor = SUBPIXEL_TENSOR_FULL;
  int ProgressInterval;
  int Dimension;
  int Polarization2D;
  double IncidentAngle2D;

  int NumberOfSolves;
  double TimeStep;
  double LastMcellsPerSecond;
  std::string LastBackend;

private:
  int State = RUN_NONE;
  unsigned long StateMTime = 0;
  const void* StateInput = nullptr;

  vtkVEMFDTDFilterBase(const vtkVEMFDTDFilterBase&) = delete;
  void operator=(const vtkVEMFDTDFilterBase&) = delete;
};

#endif
