/**
 * @class   vtkVEMFDFDSolver
 * @brief   Frequency-domain (FDFD) plane-wave scattering by a voxel model
 *
 * Input: vtkImageData whose voxels are its cells (cell arrays, preferred) or its points (point
 * arrays are then taken as one voxel per point), with the same material conventions as
 * vtkVEMFDTDSolver: per-voxel arrays (MaterialMode 0: relative permittivity, conductivity in
 * S/m, optionally relative permeability and magnetic conductivity; 1 or 3 components) or an
 * integer label array and a tissue table evaluated at Frequency (MaterialMode 1). Input array
 * indices: 0 permittivity, 1 conductivity, 2 permeability, 3 magnetic conductivity, 4 labels,
 * 5 mass density (kg/m^3, optional: for SAR in array mode; the tissue table gives it in label
 * mode). Lengths are metres.
 *
 * The computational grid is the voxel grid plus AirPadding vacuum cells on every face plus
 * PMLThickness SC-PML cells (vem/fdfd/fdfd_voxel_domain.h). A unit plane wave (|E0| = 1 V/m,
 * e^{+jwt}) arrives from the direction given by IncidentTheta / IncidentPhi (degrees; the wave travels
 * along k = (sin t cos p, sin t sin p, cos t)) with polarization angle Polarization (degrees:
 * E0 = cos(psi) theta_hat + sin(psi) phi_hat). vem::solve_fdfd solves for the scattered field
 * (CUDA or CPU, complex128 or complex64 with mixed-precision iterative refinement).
 *
 * Output port 0: vtkImageData over the voxel grid plus padding (PML cells dropped). Cell data at
 * the cell centres (each Yee component averaged over its 4 samples around the centre):
 * "E_scat_real", "E_scat_imag", "E_total_real", "E_total_imag" (V/m, 3 components, phasors),
 * "E_magnitude" = sqrt(|Ex|^2 + |Ey|^2 + |Ez|^2) of the total field (peak amplitude), "SAR"
 * = p / rho (W/kg; where a density is known; 0 in air, i.e. rho below vem::kMinTissueDensity),
 * p the absorbed power density from each E sample's own conductivity (sar.h
 * fdfd_absorbed_power_density: sigma |E|^2 / 2 per sample, shared among the tissue cells around
 * it, so the total is the dissipated power and air edges do not leak into tissue), and the materials
 * used ("permittivity", "conductivity", "tissue" in label mode).
 * Output port 1: vtkTable of the residual history: "iteration", "relative_residual" (the
 * solver's estimate, relative to ||b||), "true_relative_residual" (||b - A x|| / ||b|| in double,
 * measured at the outer steps of iterative refinement; NaN elsewhere).
 * Output port 2: vtkTable of the bistatic RCS from the near-to-far-field transform on a box in
 * the middle of the air padding: "theta_deg" (0 = forward, 180 = backscatter), measured in the
 * E-plane (k, E0) and the H-plane (k, k x E0): "rcs_E_plane_dBsm", "rcs_H_plane_dBsm", and the
 * same in m^2 ("rcs_E_plane_m2", "rcs_H_plane_m2"). For the default incidence (along +z, E along
 * x) these are the xz- and yz-planes of the Mie convention (vem/models/mie.h). Empty (with a warning)
 * when AirPadding < 2 leaves no room for the box.
 *
 * Progress reports the iteration and the residual; AbortExecute stops between iterations and
 * leaves empty outputs. Errors go to vtkErrorMacro with the solver's message. The properties are
 * checked by the solver (vem::FdfdVoxelOptions::validate in vem/fdfd/fdfd_voxel_domain.h,
 * vem::FdfdSolverOptions::validate), whose messages name the C++ member and the property.
 */
#ifndef vtkVEMFDFDSolver_h
#define vtkVEMFDFDSolver_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkImageAlgorithm.h"

#include <string>

class vtkImageData;
class vtkTable;

class VOXELEMFILTERS_EXPORT vtkVEMFDFDSolver : public vtkImageAlgorithm
{
public:
  static vtkVEMFDFDSolver* New();
  vtkTypeMacro(vtkVEMFDFDSolver, vtkImageAlgorithm);
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
  enum Precisions
  {
    PRECISION_COMPLEX128 = 0,
    PRECISION_COMPLEX64 = 1
  };
  enum StorageSchemes
  {
    STORAGE_AUTO = 0,
    STORAGE_CAS = 1,
    STORAGE_CIS = 2
  };
  enum Methods
  {
    METHOD_AUTO = 0,
    METHOD_BICGSTAB = 1,
    METHOD_COCG = 2,
    METHOD_COCR = 3,
    /// Flexible GCR preconditioned by FDTD runs to steady state (vem::FdfdPreconditioner::time_domain).
    METHOD_GCR_TIME_DOMAIN = 4
  };

  // Materials.
  vtkSetClampMacro(MaterialMode, int, 0, 1);
  vtkGetMacro(MaterialMode, int);
  vtkSetStdStringFromCharMacro(TissueTableFile);
  vtkGetCharFromStdStringMacro(TissueTableFile);
  vtkSetMacro(UseBuiltInTissueTable, bool);
  vtkGetMacro(UseBuiltInTissueTable, bool);
  /// Average eps/sigma over the cells around each E sample.
  vtkSetMacro(AverageAtEdges, bool);
  vtkGetMacro(AverageAtEdges, bool);
  /// Subpixel smoothing of the permittivity at material interfaces
  /// (vem::FdfdVoxelOptions::subpixel_smoothing, vem/core/subpixel_smoothing.h).
  vtkSetMacro(SubpixelSmoothing, bool);
  vtkGetMacro(SubpixelSmoothing, bool);
  vtkBooleanMacro(SubpixelSmoothing, bool);

  // Excitation.
  /// Hz (> 0).
  vtkSetMacro(Frequency, double);
  vtkGetMacro(Frequency, double);
  /// Degrees.
  vtkSetMacro(IncidentTheta, double);
  vtkGetMacro(IncidentTheta, double);
  vtkSetMacro(IncidentPhi, double);
  vtkGetMacro(IncidentPhi, double);
  vtkSetMacro(Polarization, double);
  vtkGetMacro(Polarization, double);

  // Grid.
  vtkSetClampMacro(PMLThickness, int, 0, 1000);
  vtkGetMacro(PMLThickness, int);
  vtkSetClampMacro(AirPadding, int, 0, 100000);
  vtkGetMacro(AirPadding, int);

  // Solver.
  vtkSetMacro(Tolerance, double);
  vtkGetMacro(Tolerance, double);
  vtkSetClampMacro(MaxIterations, int, 1, 100000000);
  vtkGetMacro(MaxIterations, int);
  vtkSetClampMacro(Precision, int, 0, 1);
  vtkGetMacro(Precision, int);
  vtkSetClampMacro(Storage, int, 0, 2);
  vtkGetMacro(Storage, int);
  vtkSetClampMacro(Method, int, 0, 4);
  vtkGetMacro(Method, int);
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(DeviceIndex, int, 0, 1024);
  vtkGetMacro(DeviceIndex, int);
  vtkSetClampMacro(ProgressInterval, int, 1, 1000000);
  vtkGetMacro(ProgressInterval, int);

  // RCS table.
  /// Angular step of the RCS cuts, degrees (0 < step <= 90).
  vtkSetClampMacro(RCSAngleStep, double, 0.01, 90.0);
  vtkGetMacro(RCSAngleStep, double);

  ///@{
  /// Results of the last solve (information only).
  vtkGetMacro(NumberOfSolves, int);
  vtkGetMacro(LastIterations, int);
  vtkGetMacro(LastTrueResidual, double);
  vtkGetMacro(LastSolveSeconds, double);
  vtkGetMacro(LastConverged, bool);
  const char* GetLastBackend() const { return this->LastBackend.c_str(); }
  const char* GetLastMethod() const { return this->LastMethod.c_str(); }
  ///@}

  /// Output ports 1 and 2.
  vtkTable* GetResidualOutput();
  vtkTable* GetRCSOutput();

protected:
  vtkVEMFDFDSolver();
  ~vtkVEMFDFDSolver() override;

  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int MaterialMode = PROPERTY_ARRAYS;
  std::string TissueTableFile;
  bool UseBuiltInTissueTable = true;
  bool AverageAtEdges = true;
  bool SubpixelSmoothing = false;
  double Frequency = 900e6;
  double IncidentTheta = 0.0, IncidentPhi = 0.0, Polarization = 0.0;
  int PMLThickness = 10;
  int AirPadding = 8;
  double Tolerance = 1e-6;
  int MaxIterations = 20000;
  int Precision = PRECISION_COMPLEX128;
  int Storage = STORAGE_AUTO;
  int Method = METHOD_AUTO;
  int Backend = BACKEND_AUTO;
  int DeviceIndex = 0;
  int ProgressInterval = 10;
  double RCSAngleStep = 2.0;

  int NumberOfSolves = 0;
  int LastIterations = 0;
  double LastTrueResidual = 0.0;
  double LastSolveSeconds = 0.0;
  bool LastConverged = false;
  std::string LastBackend;
  std::string LastMethod;

private:
  // The outcome of the last run for a pipeline state (vem_vtk::RunOnce): an error or an abort is
  // reported once, not again for the other ports' requests.
  int RunState = 0;
  unsigned long RunMTime = 0;
  const void* RunInput = nullptr;

  vtkVEMFDFDSolver(const vtkVEMFDFDSolver&) = delete;
  void operator=(const vtkVEMFDFDSolver&) = delete;

  // Returns false when aborted. Throws vem::Error.
  bool Solve(vtkImageData* input, vtkInformationVector** inputVector, vtkImageData* output,
    vtkTable* residuals, vtkTable* rcs);
};

#endif
