#include "vtkVEMFDTDSolver.h"

#include "vemArrayUtils.h"
#include "vemSnapshotStore.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkUnsignedShortArray.h"

#include "vem/field_sampling.h"
#include "vem/error.h"
#include "vem/fdtd_engine.h"
#include "vem/fdtd_harmonic.h"
#include "vem/sar.h"
#include "vem/fdtd_operator.h"
#include "vem/tfsf.h"
#include "vem/head_phantom.h"
#include "vem/tissue_properties.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <new>
#include <sstream>

vtkStandardNewMacro(vtkVEMFDTDSolver);

namespace
{

constexpr double kPi = 3.14159265358979323846;
// Cells between the CPML and the automatic total-field / scattered-field box: the steady-state
// runs' default (fdtd_harmonic.h), used by the transient plane wave too, so one AirPadding suits
// both analyses.
const int kTfsfMargin = vem::HarmonicPlaneWave().tfsf_margin;

// Everything about the grids that follows from the input geometry and the properties, without
// reading any array: computed by RequestInformation (for WHOLE_EXTENT and TIME_STEPS) and again
// by RequestData.
struct Plan
{
  vem_vtk::VoxelGrid voxels;       // the input's voxels
  bool points_as_voxels = false;
  std::array<int, 6> pad{};        // vacuum cells added per face
  std::array<int, 6> pml{};        // CPML cells added per face (outside the padding)
  std::array<int, 3> n_total{};    // computational grid (cells)
  std::array<int, 3> n_out{};      // output grid = voxels + padding
  std::array<int, 3> lo_total{};   // offset of voxel (0,0,0) in the computational grid
  std::array<double, 3> origin_total{};
  std::array<double, 3> origin_out{};
  double dt = 0;
  int steps = 0;
  std::vector<int> snapshot_steps;

  long long out_cells() const { return static_cast<long long>(n_out[0]) * n_out[1] * n_out[2]; }
  long long total_cells() const
  {
    return static_cast<long long>(n_total[0]) * n_total[1] * n_total[2];
  }
};

vem::BoundaryType ToBoundary(int t)
{
  switch (t)
  {
    case vtkVEMFDTDSolver::BOUNDARY_PEC:
      return vem::BoundaryType::pec;
    case vtkVEMFDTDSolver::BOUNDARY_PMC:
      return vem::BoundaryType::pmc;
    case vtkVEMFDTDSolver::BOUNDARY_PERIODIC:
      return vem::BoundaryType::periodic;
    default:
      return vem::BoundaryType::cpml;
  }
}

// The computational Yee grid of a plan (yee_grid.h).
vem::YeeGrid GridOf(const Plan& p)
{
  vem::YeeGrid g;
  g.nx = p.n_total[0];
  g.ny = p.n_total[1];
  g.nz = p.n_total[2];
  g.dx = p.voxels.spacing[0];
  g.dy = p.voxels.spacing[1];
  g.dz = p.voxels.spacing[2];
  g.origin = p.origin_total;
  return g;
}

// Index (i,j,k) of the sample of component c nearest to world position pos.
std::array<int, 3> NearestSample(const Plan& p, vem::Component c, const double pos[3])
{
  return vem::nearest_sample(GridOf(p), c, { pos[0], pos[1], pos[2] });
}

std::string DomainBounds(const Plan& p)
{
  std::ostringstream os;
  os << "[" << p.origin_total[0] << ", " << p.origin_total[0] + p.n_total[0] * p.voxels.spacing[0]
     << "] x [" << p.origin_total[1] << ", "
     << p.origin_total[1] + p.n_total[1] * p.voxels.spacing[1] << "] x [" << p.origin_total[2]
     << ", " << p.origin_total[2] + p.n_total[2] * p.voxels.spacing[2] << "] m";
  return os.str();
}

// The plane wave of the properties (angles in degrees -> radians), waveform left to the caller.
vem::PlaneWave PlaneWaveOf(vtkVEMFDTDSolver* self)
{
  const double deg = kPi / 180.0;
  vem::PlaneWave w;
  const double t = self->GetIncidentTheta(), ph = self->GetIncidentPhi(),
               psi = self->GetPolarization(), amp = self->GetIncidentAmplitude();
  if (!std::isfinite(t + ph + psi))
  {
    vem::fail("plane-wave angles (theta ", t, ", phi ", ph, ", polarization ", psi,
      " degrees) must be finite");
  }
  if (!(amp > 0) || !std::isfinite(amp))
  {
    vem::fail("incident amplitude ", amp, " V/m must be finite and > 0");
  }
  w.theta = t * deg;
  w.phi = ph * deg;
  w.psi = psi * deg;
  w.amplitude = amp;
  return w;
}

// The solver's message about a plane-wave box that meets the model, with the property to change.
[[noreturn]] void ThrowWithPaddingHint(const vem::Error& err, const Plan& p)
{
  const int pad = *std::min_element(p.pad.begin(), p.pad.end());
  if (pad > kTfsfMargin)
  {
    throw err;
  }
  vem::fail(err.what(), " (the plane wave's total-field box lies ", kTfsfMargin,
    " cells inside the CPML, so with AirPadding ", pad, " it cuts through the model; set ",
    "AirPadding to at least ", kTfsfMargin + 1, ")");
}

} // namespace

// Everything one solve builds before its sources: the setup (grid, boundaries, materials), the
// density per computational cell (steady state, when known) and the tissue frequency used.
struct vtkVEMFDTDSolver::Model
{
  vem::FdtdSetup setup;
  std::vector<float> density;
  double tissue_frequency = 0;
};

struct vtkVEMFDTDSolver::Internals
{
  Plan plan;
  vem_vtk::SnapshotStore store;
  vtkSmartPointer<vtkTable> probes;
  std::vector<vtkSmartPointer<vtkDataArray>> materials; // output-grid material arrays
  // Steady-state outputs (ports 2, 3, 4).
  vtkSmartPointer<vtkImageData> steady;
  vtkSmartPointer<vtkTable> summary, far;
  bool valid = false;
  vtkMTimeType solved_filter_mtime = 0;
  const void* solved_input = nullptr;
};

//------------------------------------------------------------------------------
vtkVEMFDTDSolver::vtkVEMFDTDSolver()
  : MaterialMode(PROPERTY_ARRAYS)
  , UseBuiltInTissueTable(true)
  , TissueFrequency(0.0)
  , AverageAtEdges(true)
  , Backend(BACKEND_AUTO)
  , DeviceIndex(0)
  , XLowBoundary(BOUNDARY_CPML)
  , XHighBoundary(BOUNDARY_CPML)
  , YLowBoundary(BOUNDARY_CPML)
  , YHighBoundary(BOUNDARY_CPML)
  , ZLowBoundary(BOUNDARY_CPML)
  , ZHighBoundary(BOUNDARY_CPML)
  , CPMLThickness(10)
  , AirPadding(8)
  , SourceType(SOURCE_ELECTRIC_DIPOLE)
  , SourceWaveform(WAVEFORM_MODULATED_GAUSSIAN)
  , SourceFrequency(900e6)
  , SourceBandwidth(0.0)
  , SourceAmplitude(1.0)
  , StopMode(STOP_AFTER_STEPS)
  , NumberOfSteps(1000)
  , SimulatedTime(5e-9)
  , CourantFactor(0.99)
  , SnapshotInterval(50)
  , KeepE(true)
  , KeepH(false)
  , KeepEMagnitude(true)
  , KeepMaterials(true)
  , MemoryBudgetMB(4096.0)
  , SpillToDisk(true)
  , ProbeAtSource(true)
  , ProgressInterval(10)
  , Analysis(ANALYSIS_TRANSIENT)
  , Illumination(ILLUMINATION_POINT_SOURCE)
  , IncidentTheta(0.0)
  , IncidentPhi(0.0)
  , Polarization(0.0)
  , IncidentAmplitude(1.0)
  , DipoleAxis(2)
  , DipoleLength(0.0)
  , AcceptedPower(1.0)
  , FeedCurrent(1.0)
  , DFTFrequencies(1, 900e6)
  , SteadyStateTolerance(1e-3)
  , MaxSteps(0)
  , FixedSteps(0)
  , DFTSampleInterval(0)
  , FarFieldStep(2.0)
  , ComputeAveragedSAR(true)
  , NumberOfSolves(0)
  , TimeStep(0.0)
  , LastMcellsPerSecond(0.0)
  , LastFieldEnergy(0.0)
  , LastSteps(0)
  , LastConverged(false)
  , LastRelativeChange(0.0)
  , Internal(new Internals)
{
  this->DipoleCentre[0] = 0.1;
  this->DipoleCentre[1] = 0.0;
  this->DipoleCentre[2] = 0.0;
  this->SourcePosition[0] = 0.1;
  this->SourcePosition[1] = 0.0;
  this->SourcePosition[2] = 0.0;
  this->SourcePolarization[0] = 0.0;
  this->SourcePolarization[1] = 0.0;
  this->SourcePolarization[2] = 1.0;
  this->SetNumberOfOutputPorts(5);
  const int cells = vtkDataObject::FIELD_ASSOCIATION_CELLS;
  this->SetInputArrayToProcess(0, 0, 0, cells, "permittivity");
  this->SetInputArrayToProcess(1, 0, 0, cells, "conductivity");
  this->SetInputArrayToProcess(2, 0, 0, cells, "None");
  this->SetInputArrayToProcess(3, 0, 0, cells, "None");
  this->SetInputArrayToProcess(4, 0, 0, cells, "tissue");
  this->SetInputArrayToProcess(5, 0, 0, cells, "density");
}

vtkVEMFDTDSolver::~vtkVEMFDTDSolver() = default;

void vtkVEMFDTDSolver::SetBoundary(int face, int type)
{
  int* f[6] = { &this->XLowBoundary, &this->XHighBoundary, &this->YLowBoundary,
    &this->YHighBoundary, &this->ZLowBoundary, &this->ZHighBoundary };
  if (face < 0 || face > 5 || type < 0 || type > 3 || *f[face] == type)
  {
    return;
  }
  *f[face] = type;
  this->Modified();
}

int vtkVEMFDTDSolver::GetBoundary(int face) const
{
  const int f[6] = { this->XLowBoundary, this->XHighBoundary, this->YLowBoundary,
    this->YHighBoundary, this->ZLowBoundary, this->ZHighBoundary };
  return (face >= 0 && face < 6) ? f[face] : -1;
}

void vtkVEMFDTDSolver::SetNumberOfProbePositions(int n)
{
  n = std::max(0, n);
  if (static_cast<int>(this->ProbePositions.size()) != 3 * n)
  {
    this->ProbePositions.resize(3 * static_cast<std::size_t>(n), 0.0);
    this->Modified();
  }
}

void vtkVEMFDTDSolver::SetProbePosition(int i, double x, double y, double z)
{
  if (i < 0)
  {
    return;
  }
  if (3 * static_cast<std::size_t>(i) + 3 > this->ProbePositions.size())
  {
    this->ProbePositions.resize(3 * static_cast<std::size_t>(i) + 3, 0.0);
  }
  double* p = &this->ProbePositions[3 * static_cast<std::size_t>(i)];
  if (p[0] != x || p[1] != y || p[2] != z)
  {
    p[0] = x;
    p[1] = y;
    p[2] = z;
    this->Modified();
  }
}

void vtkVEMFDTDSolver::ClearProbePositions()
{
  this->SetNumberOfProbePositions(0);
}

int vtkVEMFDTDSolver::GetNumberOfProbePositions() const
{
  return static_cast<int>(this->ProbePositions.size() / 3);
}

vtkTable* vtkVEMFDTDSolver::GetProbeOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(1));
}

vtkImageData* vtkVEMFDTDSolver::GetSteadyStateOutput()
{
  return vtkImageData::SafeDownCast(this->GetOutputDataObject(2));
}

vtkTable* vtkVEMFDTDSolver::GetSummaryOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(3));
}

vtkTable* vtkVEMFDTDSolver::GetFarFieldOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(4));
}

void vtkVEMFDTDSolver::SetNumberOfDFTFrequencies(int n)
{
  n = std::max(0, n);
  if (static_cast<int>(this->DFTFrequencies.size()) != n)
  {
    this->DFTFrequencies.resize(static_cast<std::size_t>(n), 0.0);
    this->Modified();
  }
}

int vtkVEMFDTDSolver::GetNumberOfDFTFrequencies() const
{
  return static_cast<int>(this->DFTFrequencies.size());
}

void vtkVEMFDTDSolver::SetDFTFrequency(int i, double f)
{
  if (i < 0)
  {
    return;
  }
  if (static_cast<std::size_t>(i) >= this->DFTFrequencies.size())
  {
    this->DFTFrequencies.resize(static_cast<std::size_t>(i) + 1, 0.0);
  }
  else if (this->DFTFrequencies[static_cast<std::size_t>(i)] == f)
  {
    return;
  }
  this->DFTFrequencies[static_cast<std::size_t>(i)] = f;
  this->Modified();
}

double vtkVEMFDTDSolver::GetDFTFrequency(int i) const
{
  return i >= 0 && static_cast<std::size_t>(i) < this->DFTFrequencies.size()
    ? this->DFTFrequencies[static_cast<std::size_t>(i)]
    : 0.0;
}

void vtkVEMFDTDSolver::ClearDFTFrequencies()
{
  this->SetNumberOfDFTFrequencies(0);
}

//------------------------------------------------------------------------------
int vtkVEMFDTDSolver::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == 1 || port == 3 || port == 4)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
// Builds the plan from the input's extent, spacing and origin. Throws vem::Error.
// `timeSteps`: also the step count and snapshot steps of the transient analysis (from the
// stopping properties, which the steady-state analysis does not use).
static Plan MakePlan(vtkVEMFDTDSolver* self, const int extent[6], const double spacing[3],
  const double origin[3], bool points_as_voxels, bool timeSteps)
{
  Plan p;
  p.points_as_voxels = points_as_voxels;
  p.voxels = vem_vtk::VoxelGridFromExtent(extent, spacing, origin, points_as_voxels);
  for (int a = 0; a < 3; ++a)
  {
    if (p.voxels.n[a] < 1)
    {
      vem::fail("the input image has no voxels along ", "xyz"[a], " (extent ", extent[2 * a], "..",
        extent[2 * a + 1], " with ", points_as_voxels ? "point" : "cell",
        " arrays); it needs at least one voxel on each axis");
    }
    if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
    {
      vem::fail("the input spacing along ", "xyz"[a], " is ", spacing[a], "; it must be > 0 (metres)");
    }
  }
  for (int a = 0; a < 3; ++a)
  {
    const int tlo = self->GetBoundary(2 * a), thi = self->GetBoundary(2 * a + 1);
    const bool periodic = tlo == vtkVEMFDTDSolver::BOUNDARY_PERIODIC ||
      thi == vtkVEMFDTDSolver::BOUNDARY_PERIODIC;
    for (int s = 0; s < 2; ++s)
    {
      const int f = 2 * a + s;
      const int t = self->GetBoundary(f);
      p.pad[f] = periodic ? 0 : self->GetAirPadding();
      p.pml[f] = t == vtkVEMFDTDSolver::BOUNDARY_CPML ? self->GetCPMLThickness() : 0;
    }
    p.n_out[a] = p.voxels.n[a] + p.pad[2 * a] + p.pad[2 * a + 1];
    p.n_total[a] = p.n_out[a] + p.pml[2 * a] + p.pml[2 * a + 1];
    p.lo_total[a] = p.pad[2 * a] + p.pml[2 * a];
    p.origin_out[a] = p.voxels.origin[a] - p.pad[2 * a] * spacing[a];
    p.origin_total[a] = p.origin_out[a] - p.pml[2 * a] * spacing[a];
  }
  vem::YeeGrid g;
  g.nx = p.n_total[0];
  g.ny = p.n_total[1];
  g.nz = p.n_total[2];
  g.dx = spacing[0];
  g.dy = spacing[1];
  g.dz = spacing[2];
  g.validate();
  const double cf = self->GetCourantFactor();
  if (!(cf > 0 && cf <= 1))
  {
    vem::fail("Courant factor ", cf, " must be in (0, 1]");
  }
  p.dt = cf * g.courant_limit_dt();
  if (!timeSteps)
  {
    return p;
  }
  if (self->GetStopMode() == vtkVEMFDTDSolver::STOP_AFTER_TIME)
  {
    const double t = self->GetSimulatedTime();
    if (!(t > 0) || !std::isfinite(t))
    {
      vem::fail("simulated time ", t, " s must be > 0");
    }
    const double steps = std::ceil(t / p.dt - 1e-9);
    if (steps > 1e8)
    {
      vem::fail("simulated time ", t, " s needs ", steps, " steps of ", p.dt, " s (limit 1e8)");
    }
    p.steps = std::max(1, static_cast<int>(steps));
  }
  else
  {
    p.steps = self->GetNumberOfSteps();
  }
  const int interval = self->GetSnapshotInterval();
  for (int s = interval; s < p.steps; s += interval)
  {
    p.snapshot_steps.push_back(s);
  }
  p.snapshot_steps.push_back(p.steps);
  return p;
}

static bool PointsAsVoxels(vtkVEMFDTDSolver* self)
{
  const int idx = self->GetMaterialMode() == vtkVEMFDTDSolver::PROPERTY_ARRAYS ? 0 : 4;
  return vem_vtk::SelectedArrayIsPointData(self, idx);
}

int vtkVEMFDTDSolver::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkInformation* steadyInfo = outputVector->GetInformationObject(2);
  // Only port 0 of the transient analysis is a time series.
  for (int port = 0; port < 5; ++port)
  {
    vtkInformation* info = outputVector->GetInformationObject(port);
    info->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
    info->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  }
  const bool steady = this->Analysis == ANALYSIS_STEADY_STATE;
  int ext[6];
  double spacing[3], origin[3];
  if (!vem_vtk::ReadInputGeometry(inInfo, ext, spacing, origin))
  {
    vtkErrorMacro("FDTD Solver: the input has no whole extent (is it a vtkImageData?)");
    return 0;
  }
  try
  {
    const Plan p = MakePlan(this, ext, spacing, origin, PointsAsVoxels(this), !steady);
    int whole[6] = { 0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2] };
    // Ports 0 and 2 share the grid (the one not used by the analysis stays empty).
    for (vtkInformation* info : { outInfo, steadyInfo })
    {
      info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
      info->Set(vtkDataObject::SPACING(), spacing, 3);
      info->Set(vtkDataObject::ORIGIN(), p.origin_out.data(), 3);
    }
    this->TimeStep = p.dt;
    if (steady)
    {
      return 1;
    }
    std::vector<double> times;
    for (int s : p.snapshot_steps)
    {
      times.push_back(s * p.dt);
    }
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(),
      static_cast<int>(times.size()));
    double range[2] = { times.front(), times.back() };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDTD Solver: " << err.what());
    return 0;
  }
  return 1;
}

int vtkVEMFDTDSolver::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector*)
{
  vem_vtk::RequestWholeInput(inputVector[0]->GetInformationObject(0));
  return 1;
}

//------------------------------------------------------------------------------
namespace
{

// Component c at the centres of the output cells (the computational grid less the CPML cells),
// into component `comp` of the 3-component array dst (field_sampling.h).
void CellCentred(const std::vector<float>& f, vem::Component c, const Plan& p, float* dst, int comp)
{
  vem::cell_centred(GridOf(p), f, c, { p.pml[0], p.pml[2], p.pml[4] }, p.n_out, dst, 3, comp);
}

} // namespace

int vtkVEMFDTDSolver::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* input = vtkImageData::GetData(inputVector[0]);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  vtkTable* table = vtkTable::GetData(outputVector, 1);
  vtkImageData* steadyOut = vtkImageData::GetData(outputVector, 2);
  vtkTable* summaryOut = vtkTable::GetData(outputVector, 3);
  vtkTable* farOut = vtkTable::GetData(outputVector, 4);
  if (!input || !output || !table || !steadyOut || !summaryOut || !farOut)
  {
    vtkErrorMacro("FDTD Solver: the input must be a vtkImageData.");
    return 0;
  }
  Internals& in = *this->Internal;
  // Every port empty: after an error or an abort, and the ports the analysis does not use.
  auto clearSteady = [&]() {
    steadyOut->Initialize();
    summaryOut->Initialize();
    farOut->Initialize();
  };
  auto clearAll = [&]() {
    in.store.Clear();
    in.steady = nullptr;
    in.summary = nullptr;
    in.far = nullptr;
    output->Initialize();
    table->Initialize();
    clearSteady();
  };

  // Solve again when this filter or anything upstream was modified (the pipeline MTime), or
  // the input is another data object. The input's own MTime is no guide: the pipeline touches
  // it on every request.
  vtkDemandDrivenPipeline* exec = vtkDemandDrivenPipeline::SafeDownCast(this->GetExecutive());
  const vtkMTimeType filterMTime =
    std::max(this->GetMTime(), exec ? exec->GetPipelineMTime() : vtkMTimeType(0));
  const bool stale = !in.valid || filterMTime != in.solved_filter_mtime || input != in.solved_input;
  if (stale)
  {
    in.valid = false;
    in.store.Clear();
    in.probes = nullptr;
    in.materials.clear();
    in.steady = nullptr;
    in.summary = nullptr;
    in.far = nullptr;
    bool aborted = false;
    try
    {
      aborted = !this->Solve(input, inputVector);
    }
    catch (const vem::Error& err)
    {
      vtkErrorMacro("FDTD Solver: " << err.what());
      clearAll();
      return 0;
    }
    catch (const std::bad_alloc&)
    {
      vtkErrorMacro("FDTD Solver: out of host memory for a grid of "
        << in.plan.n_total[0] << " x " << in.plan.n_total[1] << " x " << in.plan.n_total[2]
        << " cells; use coarser voxels, less padding, or fewer snapshots.");
      clearAll();
      return 0;
    }
    catch (const std::exception& err)
    {
      vtkErrorMacro("FDTD Solver: " << err.what());
      clearAll();
      return 0;
    }
    if (aborted)
    {
      clearAll();
      vtkWarningMacro("FDTD Solver: the run was aborted; no output was produced. "
                      "It runs again at the next update.");
      return 1;
    }
    in.valid = true;
    in.solved_filter_mtime = filterMTime;
    in.solved_input = input;
  }

  // Steady state: ports 2-4 from the cache, ports 0 and 1 empty.
  if (in.steady)
  {
    output->Initialize();
    table->Initialize();
    steadyOut->ShallowCopy(in.steady);
    summaryOut->ShallowCopy(in.summary);
    farOut->ShallowCopy(in.far);
    return 1;
  }
  clearSteady();

  // Port 0: the snapshot nearest to the requested time.
  const Plan& p = in.plan;
  int snap = in.store.Size() - 1;
  if (outInfo->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP()) && in.store.Size() > 0)
  {
    const double t = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
    double best = std::numeric_limits<double>::infinity();
    for (int s = 0; s < in.store.Size(); ++s)
    {
      const double dist = std::fabs(in.store.Time(s) - t);
      if (dist < best)
      {
        best = dist;
        snap = s;
      }
    }
  }
  output->Initialize();
  output->SetExtent(0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2]);
  output->SetSpacing(p.voxels.spacing.data());
  output->SetOrigin(p.origin_out.data());
  if (snap < 0)
  {
    return 1;
  }
  try
  {
    const auto& fields = in.store.Fields();
    for (int f = 0; f < static_cast<int>(fields.size()); ++f)
    {
      vtkNew<vtkFloatArray> a;
      a->SetName(fields[f].name.c_str());
      a->SetNumberOfComponents(fields[f].components);
      a->SetNumberOfTuples(p.out_cells());
      in.store.Read(snap, f, a->GetPointer(0));
      output->GetCellData()->AddArray(a);
    }
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDTD Solver: " << err.what());
    output->Initialize();
    return 0;
  }
  if (output->GetCellData()->GetArray("E_magnitude"))
  {
    output->GetCellData()->SetActiveScalars("E_magnitude");
  }
  if (output->GetCellData()->GetArray("E"))
  {
    output->GetCellData()->SetActiveVectors("E");
  }
  for (const auto& m : in.materials)
  {
    output->GetCellData()->AddArray(m);
  }
  const double time = in.store.Time(snap);
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), time);
  auto addScalar = [&](const char* name, double v) {
    vtkNew<vtkDoubleArray> a;
    a->SetName(name);
    a->InsertNextValue(v);
    output->GetFieldData()->AddArray(a);
  };
  addScalar("time_E", time);
  addScalar("time_H", time - 0.5 * p.dt);
  addScalar("time_step_dt", p.dt);
  {
    vtkNew<vtkIntArray> a;
    a->SetName("step");
    a->InsertNextValue(in.store.Step(snap));
    output->GetFieldData()->AddArray(a);
  }
  {
    vtkNew<vtkStringArray> a;
    a->SetName("backend");
    a->InsertNextValue(this->LastBackend);
    output->GetFieldData()->AddArray(a);
  }

  // Port 1: the probe table.
  if (in.probes)
  {
    table->ShallowCopy(in.probes);
  }
  return 1;
}

//------------------------------------------------------------------------------
// The model shared by both analyses: the plan (in Internal), the setup's grid, boundaries and
// materials, the output-grid material arrays (in Internal) and, when asked, the density per
// computational cell. Throws vem::Error.
void vtkVEMFDTDSolver::BuildModel(
  vtkImageData* input, vtkInformationVector** inputVector, bool steady, Model& m)
{
  Internals& in = *this->Internal;
  vem::FdtdSetup& setup = m.setup;
  std::vector<float>& density = m.density;
  const bool keepMaterials = steady || this->KeepMaterials;
  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  const int primary = labelMode ? 4 : 0;

  // Arrays and the voxel grid they define.
  int association = -1;
  vtkDataArray* primaryArray = vem_vtk::ResolvePrimaryMaterialArray(
    this->GetInputArrayToProcess(primary, inputVector, association),
    this->GetInputArrayInformation(primary), primary, input, labelMode, association);
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  in.plan =
    MakePlan(this, input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points, !steady);
  const Plan& p = in.plan;
  if (p.voxels.spacing[0] > 0.05 || p.voxels.spacing[1] > 0.05 || p.voxels.spacing[2] > 0.05)
  {
    vtkWarningMacro("FDTD Solver: voxel size " << p.voxels.spacing[0] << " x " << p.voxels.spacing[1]
                                               << " x " << p.voxels.spacing[2]
                                               << " m is large; lengths are in metres "
                                                  "(millimetre data needs a spacing of 0.001).");
  }

  // Setup.
  setup.grid = GridOf(p);
  setup.courant_factor = this->CourantFactor;
  for (int f = 0; f < 6; ++f)
  {
    setup.boundaries.face[f] = ToBoundary(this->GetBoundary(f));
    setup.boundaries.cpml[f].thickness = this->CPMLThickness;
  }

  const long long nTotal = p.total_cells();
  auto totalIndex = [&](long long v) {
    const long long i = v % p.voxels.n[0];
    const long long j = (v / p.voxels.n[0]) % p.voxels.n[1];
    const long long k = v / (static_cast<long long>(p.voxels.n[0]) * p.voxels.n[1]);
    return (i + p.lo_total[0]) +
      p.n_total[0] * ((j + p.lo_total[1]) + static_cast<long long>(p.n_total[1]) * (k + p.lo_total[2]));
  };
  const long long nVox = p.voxels.count();
  // Output-grid copy of a computational-grid array (drops the CPML cells).
  auto cropToOutput = [&](const std::vector<float>& total, vtkFloatArray* dst, int comps, int comp) {
    for (int K = 0; K < p.n_out[2]; ++K)
      for (int J = 0; J < p.n_out[1]; ++J)
        for (int I = 0; I < p.n_out[0]; ++I)
        {
          const long long o = I + p.n_out[0] * (J + static_cast<long long>(p.n_out[1]) * K);
          const long long t = (I + p.pml[0]) +
            p.n_total[0] * ((J + p.pml[2]) + static_cast<long long>(p.n_total[1]) * (K + p.pml[4]));
          dst->GetPointer(0)[comps * o + comp] = total[static_cast<std::size_t>(t)];
        }
  };

  if (labelMode)
  {
    const std::vector<std::uint16_t> labels = vem_vtk::ReadLabels(primaryArray, p.voxels, "label");
    const vem::TissueTable tissues =
      vem_vtk::LoadTissueTable(this->UseBuiltInTissueTable, this->TissueTableFile);
    const double tissueFrequency = this->TissueFrequency > 0
      ? this->TissueFrequency
      : (steady ? this->DFTFrequencies.at(0) : this->SourceFrequency);
    if (!(tissueFrequency > 0) || !std::isfinite(tissueFrequency))
    {
      vem::fail("the tissue frequency ", tissueFrequency, " Hz must be > 0 (TissueFrequency, or ",
        steady ? "the first DFT frequency" : "SourceFrequency", " when it is 0)");
    }
    m.tissue_frequency = tissueFrequency;
    std::vector<std::int64_t> values, counts;
    vem_vtk::UniqueLabels(labels, values, counts);
    const vem::LabelProperties props = tissues.lookup(values, tissueFrequency, &counts);
    if (props.labels.size() + 1 > 65536)
    {
      vem::fail("too many distinct labels (", props.labels.size(), ")");
    }
    // Material 0 is the vacuum of the padding; label values[q] -> material q + 1.
    setup.material_mode = vem::MaterialMode::indexed;
    setup.materials.push_back(vem::Material::vacuum());
    std::vector<std::uint16_t> toMaterial(65536, 0);
    std::vector<double> materialDensity(1, 0.0);  // material 0: the padding's vacuum
    for (std::size_t q = 0; q < props.labels.size(); ++q)
    {
      setup.materials.push_back(vem::Material::isotropic(
        props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
      materialDensity.push_back(props.density[q]);
      toMaterial[static_cast<std::size_t>(props.labels[q])] = static_cast<std::uint16_t>(q + 1);
    }
    setup.material_index.assign(static_cast<std::size_t>(nTotal), 0);
    for (long long v = 0; v < nVox; ++v)
    {
      setup.material_index[static_cast<std::size_t>(totalIndex(v))] =
        toMaterial[labels[static_cast<std::size_t>(v)]];
    }
    if (steady)
    {
      density.assign(static_cast<std::size_t>(nTotal), 0.0f);
      for (long long v = 0; v < nVox; ++v)
      {
        const std::size_t t = static_cast<std::size_t>(totalIndex(v));
        density[t] = static_cast<float>(materialDensity[setup.material_index[t]]);
      }
    }
    if (keepMaterials)
    {
      std::vector<float> eps(static_cast<std::size_t>(nTotal), 1.0f), sig(eps.size(), 0.0f),
        lab(eps.size(), 0.0f);
      for (long long v = 0; v < nVox; ++v)
      {
        const std::size_t t = static_cast<std::size_t>(totalIndex(v));
        const vem::Material& mat = setup.materials[setup.material_index[t]];
        eps[t] = static_cast<float>(mat.eps_r[0]);
        sig[t] = static_cast<float>(mat.sigma_e[0]);
        lab[t] = labels[static_cast<std::size_t>(v)];
      }
      const char* names[3] = { "permittivity", "conductivity", "tissue" };
      const std::vector<float>* src[3] = { &eps, &sig, &lab };
      for (int q = 0; q < 3; ++q)
      {
        vtkNew<vtkFloatArray> a;
        a->SetName(names[q]);
        a->SetNumberOfTuples(p.out_cells());
        cropToOutput(*src[q], a, 1, 0);
        in.materials.push_back(a.GetPointer());
      }
    }
  }
  else
  {
    setup.material_mode = vem::MaterialMode::coefficient_array;
    setup.medium.average_at_edges = this->AverageAtEdges;
    struct Slot
    {
      int idx;
      const char* what;
      bool required, positive;
      float pad;
      std::vector<std::vector<float>>* dst;
      const char* out;
      const char* fallback;
    };
    // Density (slot 5) only in the steady-state analysis (SAR): scalar, optional, and absent
    // without an error when only its default name "density" was looked for.
    std::vector<std::vector<float>> densityArrays;
    const Slot slots[5] = {
      { 0, "permittivity", true, true, 1.0f, &setup.medium.eps_r, "permittivity", "permittivity" },
      { 1, "conductivity", false, false, 0.0f, &setup.medium.sigma_e, "conductivity", "conductivity" },
      { 2, "permeability", false, true, 1.0f, &setup.medium.mu_r, "permeability", nullptr },
      { 3, "magnetic conductivity", false, false, 0.0f, &setup.medium.sigma_m,
        "magnetic_conductivity", nullptr },
      { 5, "density", false, false, 0.0f, &densityArrays, "density", "density" },
    };
    for (const Slot& s : slots)
    {
      if (s.idx == 5 && !steady)
      {
        continue;
      }
      int assoc = -1;
      vtkDataArray* a = vem_vtk::ResolvePropertyArray(
        this->GetInputArrayToProcess(s.idx, inputVector, assoc),
        this->GetInputArrayInformation(s.idx), s.idx, input, s.what, s.fallback, s.required,
        s.idx != 5, s.idx == 5, association, assoc);
      if (!a)
      {
        continue;
      }
      const int nc = vem_vtk::AppendPaddedComponents(
        a, p.voxels, s.what, s.positive, s.pad, nTotal, totalIndex, s.dst);
      if (keepMaterials && s.idx <= 1)
      {
        vtkNew<vtkFloatArray> o;
        o->SetName(s.out);
        o->SetNumberOfComponents(nc);
        o->SetNumberOfTuples(p.out_cells());
        for (int c = 0; c < nc; ++c)
        {
          cropToOutput((*s.dst)[c], o, nc, c);
        }
        in.materials.push_back(o.GetPointer());
      }
    }
    if (!densityArrays.empty())
    {
      density = std::move(densityArrays[0]);
    }
  }
  for (float& r : density)
  {
    r = vem::is_tissue_density(r) ? r : 0.0f;  // gases (air 1.16 kg/m^3) are air for SAR (sar.h)
  }
  if (!density.empty())
  {
    vtkNew<vtkFloatArray> a;
    a->SetName("density");
    a->SetNumberOfTuples(p.out_cells());
    cropToOutput(density, a, 1, 0);
    in.materials.push_back(a.GetPointer());
  }
}

//------------------------------------------------------------------------------
// Runs the simulation and fills the snapshot store, probe table and material arrays (transient),
// or the steady-state outputs. Returns false if aborted. Throws vem::Error.
bool vtkVEMFDTDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector)
{
  if (this->Analysis == ANALYSIS_STEADY_STATE)
  {
    return this->SolveSteadyState(input, inputVector);
  }
  Internals& in = *this->Internal;
  Model model;
  this->BuildModel(input, inputVector, false, model);
  vem::FdtdSetup& setup = model.setup;
  const Plan& p = in.plan;
  const long long nTotal = p.total_cells();
  const bool planeWave = this->Illumination == ILLUMINATION_PLANE_WAVE;
  const bool dipole = this->Illumination == ILLUMINATION_HALF_WAVE_DIPOLE;

  // Source waveform (point source and plane wave).
  const double f0 = this->SourceFrequency;
  if (!(f0 > 0) || !std::isfinite(f0))
  {
    vem::fail("source frequency ", f0, " Hz must be > 0");
  }
  const double bw = this->SourceBandwidth > 0 ? this->SourceBandwidth : f0;
  vem::Waveform waveform;
  switch (this->SourceWaveform)
  {
    case WAVEFORM_SINUSOID:
      waveform = vem::Waveform::sinusoid(f0);
      break;
    case WAVEFORM_GAUSSIAN:
      waveform = vem::Waveform::gaussian_for_bandwidth(bw);
      break;
    case WAVEFORM_DIFFERENTIATED_GAUSSIAN:
      waveform = vem::Waveform::differentiated_gaussian_for_bandwidth(bw);
      break;
    default:
      waveform = vem::Waveform::modulated_gaussian(f0, bw);
      break;
  }

  // Plane wave: a TF/SF source attached to the engine below; its box 3 cells inside the CPML.
  vem::PlaneWave wave;
  vem::TfsfBox box;
  if (planeWave)
  {
    wave = PlaneWaveOf(this);
    wave.waveform = waveform;
    wave.design_frequency = f0;
    box = vem::automatic_tfsf_box(setup.grid, setup.boundaries, kTfsfMargin);
  }
  else if (dipole)
  {
    // The steady state's thin-wire dipole (vem::add_thin_wire_dipole), fed with FeedCurrent (A,
    // peak) times the source waveform; AcceptedPower needs the steady state and is not used here.
    if (!(this->DipoleLength >= 0) || !std::isfinite(this->DipoleLength))
    {
      vem::fail("dipole length ", this->DipoleLength, " m must be >= 0 (0: half a wavelength)");
    }
    if (!(this->FeedCurrent > 0) || !std::isfinite(this->FeedCurrent))
    {
      vem::fail("feed current ", this->FeedCurrent, " A must be finite and > 0 (the transient ",
        "analysis drives the dipole with it; AcceptedPower applies to the steady state only)");
    }
    vem::HarmonicDipole dp;
    for (int a = 0; a < 3; ++a)
    {
      dp.centre[a] = this->DipoleCentre[a];
    }
    dp.axis = this->DipoleAxis;
    dp.length = this->DipoleLength;
    vem::add_thin_wire_dipole(setup, dp, f0, waveform, this->FeedCurrent);
  }
  else
  {
    const double* pol = this->SourcePolarization;
    if (!(std::fabs(pol[0]) + std::fabs(pol[1]) + std::fabs(pol[2]) > 0) ||
      !std::isfinite(pol[0] + pol[1] + pol[2]))
    {
      vem::fail("source polarization (", pol[0], ", ", pol[1], ", ", pol[2],
        ") must be a finite non-zero vector");
    }
    int dominant = 0;
    for (int a = 1; a < 3; ++a)
    {
      if (std::fabs(pol[a]) > std::fabs(pol[dominant]))
      {
        dominant = a;
      }
    }
    vem::PointSource src;
    src.kind = this->SourceType == SOURCE_HARD_E ? vem::PointSource::Kind::hard_e
                                                 : vem::PointSource::Kind::electric_current;
    const std::array<int, 3> sidx =
      NearestSample(p, static_cast<vem::Component>(dominant), this->SourcePosition);
    for (int a = 0; a < 3; ++a)
    {
      if (sidx[a] < 0 || sidx[a] > p.n_total[a])
      {
        vem::fail("the source position (", this->SourcePosition[0], ", ", this->SourcePosition[1],
          ", ", this->SourcePosition[2], ") m is outside the computational domain ", DomainBounds(p));
      }
      if (sidx[a] < p.pml[2 * a] || sidx[a] > p.n_total[a] - p.pml[2 * a + 1])
      {
        vem::fail("the source position (", this->SourcePosition[0], ", ", this->SourcePosition[1],
          ", ", this->SourcePosition[2], ") m lies in the CPML layer; move it inside ",
          "the padded model (the absorbing layer is the outer ", this->CPMLThickness, " cells of ",
          DomainBounds(p), ")");
      }
    }
    src.i = sidx[0];
    src.j = sidx[1];
    src.k = sidx[2];
    src.direction = { pol[0], pol[1], pol[2] };
    src.amplitude = this->SourceAmplitude;
    src.waveform = waveform;
    setup.sources.push_back(src);
  }

  // Probes: the three E components nearest to each position.
  std::vector<std::pair<std::string, std::array<double, 3>>> probePoints;
  if (this->ProbeAtSource && !planeWave)
  {
    const double* at = dipole ? this->DipoleCentre : this->SourcePosition;
    probePoints.push_back({ dipole ? "feed" : "source", { at[0], at[1], at[2] } });
  }
  for (int q = 0; q < this->GetNumberOfProbePositions(); ++q)
  {
    const double* x = &this->ProbePositions[3 * static_cast<std::size_t>(q)];
    probePoints.push_back({ "probe" + std::to_string(q), { x[0], x[1], x[2] } });
  }
  for (const auto& pp : probePoints)
  {
    for (int c = 0; c < 3; ++c)
    {
      const vem::Component comp = static_cast<vem::Component>(c);
      const std::array<int, 3> idx = NearestSample(p, comp, pp.second.data());
      for (int a = 0; a < 3; ++a)
      {
        if (idx[a] < 0 || idx[a] > p.n_total[a])
        {
          vem::fail("probe '", pp.first, "' at (", pp.second[0], ", ", pp.second[1], ", ",
            pp.second[2], ") m is outside the computational domain ", DomainBounds(p));
        }
      }
      setup.probes.push_back({ pp.first + "_" + vem::component_name(comp), comp, idx[0], idx[1], idx[2] });
    }
  }

  // Snapshot store.
  std::vector<vem_vtk::SnapshotStore::Field> fields;
  if (this->KeepE)
  {
    fields.push_back({ "E", 3 });
  }
  if (this->KeepH)
  {
    fields.push_back({ "H", 3 });
  }
  if (this->KeepEMagnitude)
  {
    fields.push_back({ "E_magnitude", 1 });
  }
  const std::string spill =
    this->SpillToDisk ? (this->SpillDirectory.empty() ? "auto" : this->SpillDirectory) : "";
  in.store.Reset(p.out_cells(), fields,
    static_cast<long long>(this->MemoryBudgetMB * 1048576.0), spill);
  in.store.CheckCapacity(static_cast<int>(p.snapshot_steps.size()));

  // Operator and engine.
  this->UpdateProgress(0.0);
  this->SetProgressText("FDTD: building the operator");
  const vem::FdtdOperator op(setup);
  if (std::fabs(op.dt() - p.dt) > 1e-9 * p.dt)
  {
    vtkWarningMacro("FDTD Solver: the operator's time step " << op.dt() << " s differs from the "
                                                             << "announced " << p.dt << " s");
  }
  this->TimeStep = op.dt();
  const vem::Backend backend = this->Backend == BACKEND_CUDA
    ? vem::Backend::cuda
    : (this->Backend == BACKEND_CPU ? vem::Backend::cpu : vem::Backend::automatic);
  std::string warning;
  std::unique_ptr<vem::FdtdEngine> engine = vem::make_engine(op, backend, this->DeviceIndex, &warning);
  if (!warning.empty())
  {
    vtkWarningMacro("FDTD Solver: " << warning);
  }
  this->LastBackend = engine->backend();
  // Declared after the engine: detached (destroyed) before it.
  std::unique_ptr<vem::TfsfSource> tfsf;
  if (planeWave)
  {
    try
    {
      tfsf.reset(new vem::TfsfSource(*engine, wave, box));
    }
    catch (const vem::Error& err)
    {
      ThrowWithPaddingHint(err, p);
    }
  }

  // Time stepping, snapshot by snapshot.
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  bool aborted = false;
  char text[256];
  const double cells = static_cast<double>(nTotal);
  auto rate = [&](int stepsDone) {
    const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return sec > 0 ? cells * stepsDone / sec / 1e6 : 0.0;
  };
  for (int target : p.snapshot_steps)
  {
    const int base = done;
    const int ran = engine->run(
      target - done,
      [&](int d, int) {
        const int now = base + d;
        std::snprintf(text, sizeof(text), "FDTD (%s): step %d / %d, %.1f Mcells/s",
          this->LastBackend.c_str(), now, p.steps, rate(now));
        this->SetProgressText(text);
        this->UpdateProgress(0.999 * now / p.steps);
        return !this->CheckAbort();
      },
      this->ProgressInterval);
    done += ran;
    if (done < target || this->CheckAbort())
    {
      aborted = true;
      break;
    }
    // Snapshot at `target` steps: E at target dt, H half a step earlier.
    std::vector<std::vector<float>> data;
    const long long nOut = p.out_cells();
    std::vector<float> evec;
    if (this->KeepE || this->KeepEMagnitude)
    {
      evec.assign(static_cast<std::size_t>(3 * nOut), 0.0f);
      for (int c = 0; c < 3; ++c)
      {
        const std::vector<float> f = engine->field(static_cast<vem::Component>(c));
        CellCentred(f, static_cast<vem::Component>(c), p, evec.data(), c);
      }
    }
    if (this->KeepE)
    {
      data.push_back(evec);
    }
    if (this->KeepH)
    {
      std::vector<float> hvec(static_cast<std::size_t>(3 * nOut), 0.0f);
      for (int c = 0; c < 3; ++c)
      {
        const std::vector<float> f = engine->field(static_cast<vem::Component>(3 + c));
        CellCentred(f, static_cast<vem::Component>(3 + c), p, hvec.data(), c);
      }
      data.push_back(std::move(hvec));
    }
    if (this->KeepEMagnitude)
    {
      std::vector<float> mag(static_cast<std::size_t>(nOut));
      for (long long o = 0; o < nOut; ++o)
      {
        const float* e = &evec[static_cast<std::size_t>(3 * o)];
        mag[static_cast<std::size_t>(o)] = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
      }
      data.push_back(std::move(mag));
    }
    in.store.Add(target, target * op.dt(), data);
  }
  if (aborted)
  {
    this->SetProgressText("FDTD: aborted");
    return false;
  }
  this->LastMcellsPerSecond = rate(done);
  this->LastFieldEnergy = engine->field_energy();

  // Probe table.
  const vem::ProbeRecord rec = engine->probes();
  vtkNew<vtkTable> t;
  vtkNew<vtkIntArray> stepCol;
  stepCol->SetName("step");
  vtkNew<vtkDoubleArray> timeCol, waveCol;
  timeCol->SetName("time");
  waveCol->SetName("source_waveform");
  const int nsteps = engine->steps_completed();
  for (int s = 1; s <= nsteps; ++s)
  {
    stepCol->InsertNextValue(s);
    timeCol->InsertNextValue(s * op.dt());
    waveCol->InsertNextValue(waveform.value(s * op.dt()));
  }
  t->AddColumn(stepCol);
  t->AddColumn(timeCol);
  for (std::size_t q = 0; q < rec.names.size(); ++q)
  {
    vtkNew<vtkFloatArray> col;
    col->SetName(rec.names[q].c_str());
    col->SetNumberOfTuples(static_cast<vtkIdType>(rec.values[q].size()));
    std::copy(rec.values[q].begin(), rec.values[q].end(), col->GetPointer(0));
    t->AddColumn(col);
  }
  t->AddColumn(waveCol);
  in.probes = t;

  ++this->NumberOfSolves;
  std::snprintf(text, sizeof(text), "FDTD (%s): %d steps, %.1f Mcells/s", this->LastBackend.c_str(),
    done, this->LastMcellsPerSecond);
  this->SetProgressText(text);
  return true;
}

//------------------------------------------------------------------------------
namespace
{

// "_900MHz", "_433p92MHz": the array-name suffix of a DFT frequency (see the class comment).
std::string FrequencySuffix(double f)
{
  char buf[64];
  std::snprintf(buf, sizeof(buf), "_%.6gMHz", f / 1e6);
  std::string s(buf);
  std::replace(s.begin(), s.end(), '.', 'p');
  std::replace(s.begin(), s.end(), '+', 'p');
  return s;
}

vtkSmartPointer<vtkDoubleArray> DoubleColumn(const char* name, int components = 1)
{
  vtkSmartPointer<vtkDoubleArray> a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  return a;
}

} // namespace

// The steady-state analysis: one call of vem::run_fdtd_harmonic, then the outputs of ports 2-4
// into Internal. Returns false when aborted. Throws vem::Error.
bool vtkVEMFDTDSolver::SolveSteadyState(vtkImageData* input, vtkInformationVector** inputVector)
{
  Internals& in = *this->Internal;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double>& freqs = this->DFTFrequencies;
  if (freqs.empty())
  {
    vem::fail("the steady-state analysis needs at least one DFT frequency (property DFTFrequencies, Hz)");
  }
  std::vector<std::string> suffix;
  for (std::size_t q = 0; q < freqs.size(); ++q)
  {
    if (!(freqs[q] > 0) || !std::isfinite(freqs[q]))
    {
      vem::fail("DFT frequency #", q + 1, " is ", freqs[q], " Hz; it must be finite and > 0");
    }
    suffix.push_back(freqs.size() > 1 ? FrequencySuffix(freqs[q]) : std::string());
    for (std::size_t r = 0; r < q; ++r)
    {
      if (freqs.size() > 1 && suffix[r] == suffix[q])
      {
        vem::fail("DFT frequencies #", r + 1, " (", freqs[r], " Hz) and #", q + 1, " (", freqs[q],
          " Hz) give the same array suffix '", suffix[q], "'; give distinct frequencies (6 ",
          "significant digits in MHz)");
      }
    }
  }
  if (!(this->SteadyStateTolerance > 0) || !std::isfinite(this->SteadyStateTolerance))
  {
    vem::fail("steady-state tolerance ", this->SteadyStateTolerance, " must be > 0");
  }

  Model model;
  this->BuildModel(input, inputVector, true, model);
  const Plan& p = in.plan;
  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  if (labelMode && freqs.size() > 1)
  {
    vtkWarningMacro("FDTD Solver: the tissue table is evaluated at "
      << model.tissue_frequency << " Hz only; the results at the other DFT frequencies use "
      << "these material values (one material model per run).");
  }

  vem::HarmonicOptions opt;
  opt.frequencies = freqs;
  float phasorSign = 1.0f;
  const double* d = p.voxels.spacing.data();
  switch (this->Illumination)
  {
    case ILLUMINATION_PLANE_WAVE:
    {
      opt.source = vem::HarmonicSource::plane_wave;
      const vem::PlaneWave w = PlaneWaveOf(this);
      opt.plane_wave.theta = w.theta;
      opt.plane_wave.phi = w.phi;
      opt.plane_wave.psi = w.psi;
      opt.plane_wave.amplitude = w.amplitude;
      opt.plane_wave.tfsf_margin = kTfsfMargin;  // box_hi < 0: the automatic box
      break;
    }
    case ILLUMINATION_HALF_WAVE_DIPOLE:
    {
      opt.source = vem::HarmonicSource::dipole;
      for (int a = 0; a < 3; ++a)
      {
        opt.dipole.centre[a] = this->DipoleCentre[a];
      }
      opt.dipole.axis = this->DipoleAxis;
      if (!(this->DipoleLength >= 0) || !std::isfinite(this->DipoleLength))
      {
        vem::fail("dipole length ", this->DipoleLength, " m must be >= 0 (0: half a wavelength)");
      }
      if (!(this->AcceptedPower >= 0) || !std::isfinite(this->AcceptedPower))
      {
        vem::fail("accepted power ", this->AcceptedPower, " W must be >= 0 (0: use the feed current)");
      }
      if (this->AcceptedPower == 0 && (!(this->FeedCurrent > 0) || !std::isfinite(this->FeedCurrent)))
      {
        vem::fail("feed current ", this->FeedCurrent, " A must be finite and > 0 when the ",
          "accepted power is 0");
      }
      opt.dipole.length = this->DipoleLength;
      opt.dipole.accepted_power = this->AcceptedPower;
      opt.dipole.feed_current = this->FeedCurrent;
      break;
    }
    default:
    {
      // A point source becomes a one-edge (Hertzian) dipole with the same current moment.
      if (this->SourceType == SOURCE_HARD_E)
      {
        vem::fail("a hard E-field point source has no steady-state form; use Source Type 'Electric ",
          "dipole (current moment)', a half-wave dipole or a plane wave");
      }
      const double* pol = this->SourcePolarization;
      int axis = -1, nonzero = 0;
      for (int a = 0; a < 3; ++a)
      {
        if (!std::isfinite(pol[a]))
        {
          nonzero = 99;
        }
        else if (pol[a] != 0)
        {
          ++nonzero;
          axis = a;
        }
      }
      if (nonzero != 1)
      {
        vem::fail("in the steady-state analysis a point source is a one-edge dipole along x, y or z; ",
          "the source polarization (", pol[0], ", ", pol[1], ", ", pol[2], ") is not along an axis");
      }
      if (!(this->SourceAmplitude != 0) || !std::isfinite(this->SourceAmplitude))
      {
        vem::fail("source amplitude ", this->SourceAmplitude, " A m must be finite and non-zero");
      }
      opt.source = vem::HarmonicSource::dipole;
      for (int a = 0; a < 3; ++a)
      {
        opt.dipole.centre[a] = this->SourcePosition[a];
      }
      opt.dipole.axis = axis;
      opt.dipole.length = d[axis];
      opt.dipole.accepted_power = 0.0;
      // The solver feeds a positive current; a negative direction or amplitude flips the sign of
      // the phasors (below), which SAR, far field and impedance do not see.
      opt.dipole.feed_current = std::fabs(this->SourceAmplitude) / d[axis];
      phasorSign = (pol[axis] > 0) == (this->SourceAmplitude > 0) ? 1.0f : -1.0f;
      break;
    }
  }
  const bool haveDensity = !model.density.empty();
  opt.steady_state_tolerance = this->SteadyStateTolerance;
  opt.max_steps = this->MaxSteps;
  opt.fixed_steps = this->FixedSteps;
  opt.dft_sample_interval = this->DFTSampleInterval;
  opt.density = std::move(model.density);
  opt.averaged_sar = haveDensity && this->ComputeAveragedSAR;
  opt.far_field = true;
  opt.far_field_step_deg = this->FarFieldStep;
  opt.backend = this->Backend == BACKEND_CUDA
    ? vem::Backend::cuda
    : (this->Backend == BACKEND_CPU ? vem::Backend::cpu : vem::Backend::automatic);
  opt.device_index = this->DeviceIndex;
  opt.progress_interval = this->ProgressInterval;
  char text[256];
  const double tol = this->SteadyStateTolerance;
  opt.progress = [&](int done, int total, double rel) {
    std::snprintf(text, sizeof(text),
      "FDTD steady state: step %d / %d at most, relative change %.2e (tolerance %.1e)", done,
      total, rel, tol);
    this->SetProgressText(text);
    this->UpdateProgress(total > 0 ? 0.95 * std::min(1.0, static_cast<double>(done) / total) : 0.0);
    return !this->CheckAbort();
  };

  this->UpdateProgress(0.0);
  this->SetProgressText("FDTD steady state: building the operator");
  vem::HarmonicResult res;
  try
  {
    res = vem::run_fdtd_harmonic(model.setup, opt);
  }
  catch (const vem::Error& err)
  {
    if (opt.source != vem::HarmonicSource::plane_wave)
    {
      throw;
    }
    ThrowWithPaddingHint(err, p);
  }
  if (res.aborted || this->CheckAbort())
  {
    this->SetProgressText("FDTD steady state: aborted");
    return false;
  }
  if (res.frequencies.size() != freqs.size())
  {
    vem::fail("the steady-state run returned ", res.frequencies.size(), " frequencies for ",
      freqs.size(), " requested");
  }
  if (!res.warning.empty())
  {
    vtkWarningMacro("FDTD Solver: " << res.warning);
  }
  this->TimeStep = res.dt;
  this->LastBackend = res.backend;
  this->LastMcellsPerSecond = res.mcells_per_second;
  this->LastSteps = res.steps;
  this->LastConverged = res.converged;
  this->LastRelativeChange = res.last_relative_change;

  // Port 2: the phasors and SAR per frequency, then the materials.
  this->SetProgressText("FDTD steady state: output arrays");
  this->UpdateProgress(0.97);
  const vem::YeeGrid grid = GridOf(p);
  const std::array<int, 3> first = { p.pml[0], p.pml[2], p.pml[4] };
  const long long nOut = p.out_cells();
  const long long nTotal = p.total_cells();
  auto crop = [&](const std::vector<float>& total, const std::string& name, bool root) {
    if (static_cast<long long>(total.size()) != nTotal)
    {
      vem::fail("the steady-state array '", name, "' has ", total.size(), " values for a grid of ",
        nTotal, " cells");
    }
    vtkSmartPointer<vtkFloatArray> a = vtkSmartPointer<vtkFloatArray>::New();
    a->SetName(name.c_str());
    a->SetNumberOfTuples(nOut);
    float* dst = a->GetPointer(0);
    long long o = 0;
    for (int K = 0; K < p.n_out[2]; ++K)
      for (int J = 0; J < p.n_out[1]; ++J)
        for (int I = 0; I < p.n_out[0]; ++I, ++o)
        {
          const float v = total[static_cast<std::size_t>((I + first[0]) +
            p.n_total[0] * ((J + first[1]) + static_cast<long long>(p.n_total[1]) * (K + first[2])))];
          dst[o] = root ? std::sqrt(std::max(0.0f, v)) : v;
        }
    return a;
  };
  auto world = [&](const std::array<int, 3>& v) {
    std::array<double, 3> x;
    for (int a = 0; a < 3; ++a)
    {
      x[a] = v[a] < 0 ? nan : p.origin_total[a] + (v[a] + 0.5) * p.voxels.spacing[a];
    }
    return x;
  };
  vtkNew<vtkImageData> img;
  img->SetExtent(0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2]);
  img->SetSpacing(p.voxels.spacing.data());
  img->SetOrigin(p.origin_out.data());
  vtkCellData* cd = img->GetCellData();

  // Per-frequency values for the field data and the summary table.
  struct Row
  {
    double f, wbsar, peak, ps1, ps10, absorbed, accepted, radiated, zr, zi, csca;
    std::array<double, 3> loc1, loc10;
  };
  std::vector<Row> rows;
  for (std::size_t q = 0; q < res.frequencies.size(); ++q)
  {
    const vem::HarmonicFrequencyResult& fr = res.frequencies[q];
    const std::string& sfx = suffix[q];
    // E phasors at the cell centres.
    const std::vector<std::complex<float>>* comps[3] = { &fr.ex, &fr.ey, &fr.ez };
    vtkNew<vtkFloatArray> re, im;
    re->SetName(("E_real" + sfx).c_str());
    im->SetName(("E_imag" + sfx).c_str());
    for (vtkFloatArray* a : { re.GetPointer(), im.GetPointer() })
    {
      a->SetNumberOfComponents(3);
      a->SetNumberOfTuples(nOut);
    }
    std::vector<float> part;
    for (int c = 0; c < 3; ++c)
    {
      const std::vector<std::complex<float>>& v = *comps[c];
      for (int ri = 0; ri < 2; ++ri)
      {
        part.resize(v.size());
        for (std::size_t s = 0; s < v.size(); ++s)
        {
          part[s] = phasorSign * (ri == 0 ? v[s].real() : v[s].imag());
        }
        vem::cell_centred(grid, part, static_cast<vem::Component>(c), first, p.n_out,
          (ri == 0 ? re : im)->GetPointer(0), 3, c);
      }
    }
    cd->AddArray(re);
    cd->AddArray(im);
    cd->AddArray(crop(fr.e_squared, "E_magnitude" + sfx, true));
    if (fr.has_sar)
    {
      cd->AddArray(crop(fr.local_sar, "SAR" + sfx, false));
      if (!fr.sar_1g.sar.empty() && !fr.sar_10g.sar.empty())  // skipped for non-cubic voxels
      {
        cd->AddArray(crop(fr.sar_1g.sar, "SAR_1g" + sfx, false));
        cd->AddArray(crop(fr.sar_10g.sar, "SAR_10g" + sfx, false));
      }
    }
    Row r;
    r.f = fr.frequency;
    const bool sar = fr.has_sar;
    const bool avg = sar && opt.averaged_sar && !fr.sar_1g.sar.empty();
    r.wbsar = sar ? fr.whole_body_sar : nan;
    r.peak = sar ? fr.peak_local_sar : nan;
    r.absorbed = sar ? fr.absorbed_power : nan;
    const vem::AveragedSar* av[2] = { &fr.sar_1g, &fr.sar_10g };
    double* ps[2] = { &r.ps1, &r.ps10 };
    std::array<double, 3>* loc[2] = { &r.loc1, &r.loc10 };
    for (int m = 0; m < 2; ++m)
    {
      const bool valid = avg && av[m]->valid > 0;
      *ps[m] = valid ? av[m]->peak : nan;
      *loc[m] = valid ? world(av[m]->peak_voxel) : std::array<double, 3>{ nan, nan, nan };
      if (avg && !valid)
      {
        vtkWarningMacro("FDTD Solver: no valid " << (m == 0 ? "1 g" : "10 g") << " averaging cube at "
          << fr.frequency << " Hz (too little tissue, or more than 10 % air in every cube); its "
          << "peak spatial-average SAR is NaN.");
      }
    }
    const bool dipole = opt.source == vem::HarmonicSource::dipole;
    r.accepted = dipole ? fr.accepted_power : nan;
    r.radiated = fr.has_far_field ? fr.radiated_power : nan;
    r.zr = dipole ? fr.feed_impedance.real() : nan;
    r.zi = dipole ? fr.feed_impedance.imag() : nan;
    r.csca = !dipole && fr.has_far_field ? fr.scattering_cross_section : nan;
    rows.push_back(r);
  }
  for (const auto& m : in.materials)
  {
    cd->AddArray(m);
  }
  const std::string active = (cd->GetArray(("SAR" + suffix[0]).c_str()) ? "SAR" : "E_magnitude") + suffix[0];
  cd->SetActiveScalars(active.c_str());

  // Field data: one tuple per frequency, and the run's scalars.
  vtkFieldData* fd = img->GetFieldData();
  struct Col
  {
    const char* field;    // field-data name
    const char* column;   // summary column ("" = field data only)
    double Row::*value;
  };
  const Col cols[] = {
    { "frequency_Hz", "frequency_Hz", &Row::f },
    { "whole_body_SAR_W_per_kg", "whole_body_SAR_W_per_kg", &Row::wbsar },
    { "peak_local_SAR_W_per_kg", "peak_local_SAR_W_per_kg", &Row::peak },
    { "psSAR1g_W_per_kg", "psSAR1g_W_per_kg", &Row::ps1 },
    { "psSAR10g_W_per_kg", "psSAR10g_W_per_kg", &Row::ps10 },
    { "absorbed_power_W", "absorbed_power_W", &Row::absorbed },
    { "accepted_power_W", "accepted_power_W", &Row::accepted },
    { "radiated_power_W", "radiated_power_W", &Row::radiated },
    { "scattering_cross_section_m2", "scattering_cross_section_m2", &Row::csca },
  };
  for (const Col& c : cols)
  {
    auto a = DoubleColumn(c.field);
    for (const Row& r : rows)
    {
      a->InsertNextValue(r.*(c.value));
    }
    fd->AddArray(a);
  }
  {
    auto l1 = DoubleColumn("psSAR1g_location_m", 3), l10 = DoubleColumn("psSAR10g_location_m", 3),
         z = DoubleColumn("feed_impedance_ohm", 2);
    for (const Row& r : rows)
    {
      l1->InsertNextTuple(r.loc1.data());
      l10->InsertNextTuple(r.loc10.data());
      const double zz[2] = { r.zr, r.zi };
      z->InsertNextTuple(zz);
    }
    fd->AddArray(l1);
    fd->AddArray(l10);
    fd->AddArray(z);
  }
  auto addScalar = [&](const char* name, double v) {
    auto a = DoubleColumn(name);
    a->InsertNextValue(v);
    fd->AddArray(a);
  };
  auto addInt = [&](const char* name, int v) {
    vtkNew<vtkIntArray> a;
    a->SetName(name);
    a->InsertNextValue(v);
    fd->AddArray(a);
  };
  addInt("steps", res.steps);
  addInt("converged", res.converged ? 1 : 0);
  addScalar("relative_change", res.last_relative_change);
  addScalar("time_step_dt", res.dt);
  addScalar("simulated_time", res.simulated_time);
  addInt("dft_sample_interval", res.dft_sample_interval);
  addScalar("tissue_frequency_Hz", labelMode ? model.tissue_frequency : nan);
  {
    vtkNew<vtkStringArray> a;
    a->SetName("backend");
    a->InsertNextValue(res.backend);
    fd->AddArray(a);
  }

  // Port 3: the summary table (the same values, one row per frequency).
  vtkNew<vtkTable> summary;
  {
    auto add = [&](const char* name, auto get) {
      auto a = DoubleColumn(name);
      for (const Row& r : rows)
      {
        a->InsertNextValue(get(r));
      }
      summary->AddColumn(a);
    };
    add("frequency_Hz", [](const Row& r) { return r.f; });
    add("whole_body_SAR_W_per_kg", [](const Row& r) { return r.wbsar; });
    add("peak_local_SAR_W_per_kg", [](const Row& r) { return r.peak; });
    add("psSAR1g_W_per_kg", [](const Row& r) { return r.ps1; });
    add("psSAR1g_x_m", [](const Row& r) { return r.loc1[0]; });
    add("psSAR1g_y_m", [](const Row& r) { return r.loc1[1]; });
    add("psSAR1g_z_m", [](const Row& r) { return r.loc1[2]; });
    add("psSAR10g_W_per_kg", [](const Row& r) { return r.ps10; });
    add("psSAR10g_x_m", [](const Row& r) { return r.loc10[0]; });
    add("psSAR10g_y_m", [](const Row& r) { return r.loc10[1]; });
    add("psSAR10g_z_m", [](const Row& r) { return r.loc10[2]; });
    add("absorbed_power_W", [](const Row& r) { return r.absorbed; });
    add("accepted_power_W", [](const Row& r) { return r.accepted; });
    add("radiated_power_W", [](const Row& r) { return r.radiated; });
    add("feed_impedance_real_ohm", [](const Row& r) { return r.zr; });
    add("feed_impedance_imag_ohm", [](const Row& r) { return r.zi; });
    add("scattering_cross_section_m2", [](const Row& r) { return r.csca; });
    vtkNew<vtkIntArray> steps, conv;
    steps->SetName("steps");
    conv->SetName("converged");
    for (std::size_t q = 0; q < rows.size(); ++q)
    {
      steps->InsertNextValue(res.steps);
      conv->InsertNextValue(res.converged ? 1 : 0);
    }
    summary->AddColumn(steps);
    summary->AddColumn(conv);
  }

  // Port 4: the far field.
  vtkNew<vtkTable> far;
  {
    const bool dipole = opt.source == vem::HarmonicSource::dipole;
    const char* names[5] = { "theta_deg", dipole ? "gain_E_plane_dBi" : "rcs_E_plane_dBsm",
      dipole ? "gain_H_plane_dBi" : "rcs_H_plane_dBsm", dipole ? "gain_E_plane" : "rcs_E_plane_m2",
      dipole ? "gain_H_plane" : "rcs_H_plane_m2" };
    auto fcol = DoubleColumn("frequency_Hz");
    vtkSmartPointer<vtkDoubleArray> c[5];
    for (int k = 0; k < 5; ++k)
    {
      c[k] = DoubleColumn(names[k]);
    }
    bool missing = false;
    for (const vem::HarmonicFrequencyResult& fr : res.frequencies)
    {
      if (!fr.has_far_field)
      {
        missing = true;
        continue;
      }
      for (const vem::FarFieldRow& r : fr.far_field)
      {
        fcol->InsertNextValue(fr.frequency);
        c[0]->InsertNextValue(r.theta_deg);
        c[1]->InsertNextValue(10.0 * std::log10(std::max(r.e_plane, 1e-300)));
        c[2]->InsertNextValue(10.0 * std::log10(std::max(r.h_plane, 1e-300)));
        c[3]->InsertNextValue(r.e_plane);
        c[4]->InsertNextValue(r.h_plane);
      }
    }
    if (missing)
    {
      vtkWarningMacro("FDTD Solver: the steady-state run computed no far field (no room for the "
                      "near-to-far-field box between the model and the "
        << (dipole ? "CPML" : "total-field box") << "; increase AirPadding); the far-field table "
                      "stays empty.");
    }
    else
    {
      if (freqs.size() > 1)
      {
        far->AddColumn(fcol);
      }
      for (int k = 0; k < 5; ++k)
      {
        far->AddColumn(c[k]);
      }
    }
  }

  in.steady = img.GetPointer();
  in.summary = summary.GetPointer();
  in.far = far.GetPointer();
  ++this->NumberOfSolves;
  std::snprintf(text, sizeof(text), "FDTD steady state (%s): %d steps, %s (relative change %.2e)",
    res.backend.c_str(), res.steps, res.converged ? "converged" : "not converged",
    res.last_relative_change);
  this->SetProgressText(text);
  this->UpdateProgress(1.0);
  return true;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDSolver::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MaterialMode: " << this->MaterialMode << "\n";
  os << indent << "Backend: " << this->Backend << " (device " << this->DeviceIndex << ")\n";
  os << indent << "Boundaries: " << this->XLowBoundary << " " << this->XHighBoundary << " "
     << this->YLowBoundary << " " << this->YHighBoundary << " " << this->ZLowBoundary << " "
     << this->ZHighBoundary << ", CPML " << this->CPMLThickness << ", padding "
     << this->AirPadding << "\n";
  os << indent << "Source: type " << this->SourceType << " at (" << this->SourcePosition[0] << ", "
     << this->SourcePosition[1] << ", " << this->SourcePosition[2] << "), waveform "
     << this->SourceWaveform << ", " << this->SourceFrequency << " Hz\n";
  os << indent << "Steps: " << this->NumberOfSteps << " (mode " << this->StopMode << ", time "
     << this->SimulatedTime << "), snapshot every " << this->SnapshotInterval << "\n";
  os << indent << "Analysis: " << this->Analysis << ", Illumination: " << this->Illumination
     << "\n";
  os << indent << "Plane wave: theta " << this->IncidentTheta << ", phi " << this->IncidentPhi
     << ", polarization " << this->Polarization << " deg, " << this->IncidentAmplitude << " V/m\n";
  os << indent << "Dipole: centre (" << this->DipoleCentre[0] << ", " << this->DipoleCentre[1]
     << ", " << this->DipoleCentre[2] << "), axis " << this->DipoleAxis << ", length "
     << this->DipoleLength << " m, accepted power " << this->AcceptedPower << " W, feed current "
     << this->FeedCurrent << " A\n";
  os << indent << "DFTFrequencies:";
  for (double f : this->DFTFrequencies)
  {
    os << " " << f;
  }
  os << " Hz; tolerance " << this->SteadyStateTolerance << ", max steps " << this->MaxSteps
     << ", fixed steps " << this->FixedSteps << ", DFT sample interval " << this->DFTSampleInterval
     << ", far-field step " << this->FarFieldStep << " deg, averaged SAR "
     << this->ComputeAveragedSAR << "\n";
  os << indent << "NumberOfSolves: " << this->NumberOfSolves << ", LastBackend: "
     << this->LastBackend << "\n";
}
