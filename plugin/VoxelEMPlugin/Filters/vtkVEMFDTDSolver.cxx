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
#include "vem/fdtd_operator.h"
#include "vem/head_phantom.h"
#include "vem/tissue_properties.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <sstream>

vtkStandardNewMacro(vtkVEMFDTDSolver);

namespace
{

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

} // namespace

struct vtkVEMFDTDSolver::Internals
{
  Plan plan;
  vem_vtk::SnapshotStore store;
  vtkSmartPointer<vtkTable> probes;
  std::vector<vtkSmartPointer<vtkDataArray>> materials; // output-grid material arrays
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
  , NumberOfSolves(0)
  , TimeStep(0.0)
  , LastMcellsPerSecond(0.0)
  , LastFieldEnergy(0.0)
  , Internal(new Internals)
{
  this->SourcePosition[0] = 0.1;
  this->SourcePosition[1] = 0.0;
  this->SourcePosition[2] = 0.0;
  this->SourcePolarization[0] = 0.0;
  this->SourcePolarization[1] = 0.0;
  this->SourcePolarization[2] = 1.0;
  this->SetNumberOfOutputPorts(2);
  const int cells = vtkDataObject::FIELD_ASSOCIATION_CELLS;
  this->SetInputArrayToProcess(0, 0, 0, cells, "permittivity");
  this->SetInputArrayToProcess(1, 0, 0, cells, "conductivity");
  this->SetInputArrayToProcess(2, 0, 0, cells, "None");
  this->SetInputArrayToProcess(3, 0, 0, cells, "None");
  this->SetInputArrayToProcess(4, 0, 0, cells, "tissue");
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

//------------------------------------------------------------------------------
int vtkVEMFDTDSolver::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == 1)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
// Builds the plan from the input's extent, spacing and origin. Throws vem::Error.
static Plan MakePlan(vtkVEMFDTDSolver* self, const int extent[6], const double spacing[3],
  const double origin[3], bool points_as_voxels)
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
  vtkInformation* tableInfo = outputVector->GetInformationObject(1);
  tableInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
  tableInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  int ext[6];
  double spacing[3], origin[3];
  if (!vem_vtk::ReadInputGeometry(inInfo, ext, spacing, origin))
  {
    vtkErrorMacro("FDTD Solver: the input has no whole extent (is it a vtkImageData?)");
    return 0;
  }
  try
  {
    const Plan p = MakePlan(this, ext, spacing, origin, PointsAsVoxels(this));
    int whole[6] = { 0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2] };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
    outInfo->Set(vtkDataObject::SPACING(), spacing, 3);
    outInfo->Set(vtkDataObject::ORIGIN(), p.origin_out.data(), 3);
    std::vector<double> times;
    for (int s : p.snapshot_steps)
    {
      times.push_back(s * p.dt);
    }
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(),
      static_cast<int>(times.size()));
    double range[2] = { times.front(), times.back() };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
    this->TimeStep = p.dt;
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
  // The whole input, and no time: the simulation time is this filter's own.
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  int whole[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), whole, 6);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::EXACT_EXTENT(), 1);
  inInfo->Remove(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
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
  if (!input || !output || !table)
  {
    vtkErrorMacro("FDTD Solver: the input must be a vtkImageData.");
    return 0;
  }
  Internals& in = *this->Internal;

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
    bool aborted = false;
    try
    {
      aborted = !this->Solve(input, inputVector);
    }
    catch (const vem::Error& err)
    {
      vtkErrorMacro("FDTD Solver: " << err.what());
      in.store.Clear();
      output->Initialize();
      table->Initialize();
      return 0;
    }
    catch (const std::bad_alloc&)
    {
      vtkErrorMacro("FDTD Solver: out of host memory for a grid of "
        << in.plan.n_total[0] << " x " << in.plan.n_total[1] << " x " << in.plan.n_total[2]
        << " cells; use coarser voxels, less padding, or fewer snapshots.");
      in.store.Clear();
      output->Initialize();
      table->Initialize();
      return 0;
    }
    if (aborted)
    {
      in.store.Clear();
      output->Initialize();
      table->Initialize();
      vtkWarningMacro("FDTD Solver: the run was aborted; no output was produced. "
                      "It runs again at the next update.");
      return 1;
    }
    in.valid = true;
    in.solved_filter_mtime = filterMTime;
    in.solved_input = input;
  }

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
// Runs the simulation and fills the snapshot store, probe table and material arrays.
// Returns false if aborted. Throws vem::Error.
bool vtkVEMFDTDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector)
{
  Internals& in = *this->Internal;
  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  const int primary = labelMode ? 4 : 0;

  // Arrays and the voxel grid they define.
  int association = -1;
  vtkDataArray* primaryArray = vem_vtk::ResolvePrimaryMaterialArray(
    this->GetInputArrayToProcess(primary, inputVector, association),
    this->GetInputArrayInformation(primary), primary, input, labelMode, association);
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  in.plan = MakePlan(this, input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points);
  const Plan& p = in.plan;
  if (p.voxels.spacing[0] > 0.05 || p.voxels.spacing[1] > 0.05 || p.voxels.spacing[2] > 0.05)
  {
    vtkWarningMacro("FDTD Solver: voxel size " << p.voxels.spacing[0] << " x " << p.voxels.spacing[1]
                                               << " x " << p.voxels.spacing[2]
                                               << " m is large; lengths are in metres "
                                                  "(millimetre data needs a spacing of 0.001).");
  }

  // Setup.
  vem::FdtdSetup setup;
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

  double tissueFrequency = 0;
  if (labelMode)
  {
    const std::vector<std::uint16_t> labels = vem_vtk::ReadLabels(primaryArray, p.voxels, "label");
    const vem::TissueTable tissues =
      vem_vtk::LoadTissueTable(this->UseBuiltInTissueTable, this->TissueTableFile);
    tissueFrequency = this->TissueFrequency > 0 ? this->TissueFrequency : this->SourceFrequency;
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
    for (std::size_t q = 0; q < props.labels.size(); ++q)
    {
      setup.materials.push_back(vem::Material::isotropic(
        props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
      toMaterial[static_cast<std::size_t>(props.labels[q])] = static_cast<std::uint16_t>(q + 1);
    }
    setup.material_index.assign(static_cast<std::size_t>(nTotal), 0);
    for (long long v = 0; v < nVox; ++v)
    {
      setup.material_index[static_cast<std::size_t>(totalIndex(v))] =
        toMaterial[labels[static_cast<std::size_t>(v)]];
    }
    if (this->KeepMaterials)
    {
      std::vector<float> eps(static_cast<std::size_t>(nTotal), 1.0f), sig(eps.size(), 0.0f),
        lab(eps.size(), 0.0f);
      for (long long v = 0; v < nVox; ++v)
      {
        const std::size_t t = static_cast<std::size_t>(totalIndex(v));
        const vem::Material& m = setup.materials[setup.material_index[t]];
        eps[t] = static_cast<float>(m.eps_r[0]);
        sig[t] = static_cast<float>(m.sigma_e[0]);
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
    const Slot slots[4] = {
      { 0, "permittivity", true, true, 1.0f, &setup.medium.eps_r, "permittivity", "permittivity" },
      { 1, "conductivity", false, false, 0.0f, &setup.medium.sigma_e, "conductivity", "conductivity" },
      { 2, "permeability", false, true, 1.0f, &setup.medium.mu_r, "permeability", nullptr },
      { 3, "magnetic conductivity", false, false, 0.0f, &setup.medium.sigma_m,
        "magnetic_conductivity", nullptr },
    };
    for (const Slot& s : slots)
    {
      int assoc = -1;
      vtkDataArray* a = vem_vtk::ResolvePropertyArray(
        this->GetInputArrayToProcess(s.idx, inputVector, assoc),
        this->GetInputArrayInformation(s.idx), s.idx, input, s.what, s.fallback, s.required,
        true, false, association, assoc);
      if (!a)
      {
        continue;
      }
      const int nc = a->GetNumberOfComponents();
      for (int c = 0; c < nc; ++c)
      {
        const std::vector<float> vox = vem_vtk::ReadVoxelValues(a, c, p.voxels, s.what, s.positive);
        std::vector<float> total(static_cast<std::size_t>(nTotal), s.pad);
        for (long long v = 0; v < nVox; ++v)
        {
          total[static_cast<std::size_t>(totalIndex(v))] = vox[static_cast<std::size_t>(v)];
        }
        s.dst->push_back(std::move(total));
      }
      if (this->KeepMaterials && (s.idx <= 1))
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
  }

  // Source.
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
  const double f0 = this->SourceFrequency;
  if (!(f0 > 0) || !std::isfinite(f0))
  {
    vem::fail("source frequency ", f0, " Hz must be > 0");
  }
  const double bw = this->SourceBandwidth > 0 ? this->SourceBandwidth : f0;
  switch (this->SourceWaveform)
  {
    case WAVEFORM_SINUSOID:
      src.waveform = vem::Waveform::sinusoid(f0);
      break;
    case WAVEFORM_GAUSSIAN:
      src.waveform = vem::Waveform::gaussian_for_bandwidth(bw);
      break;
    case WAVEFORM_DIFFERENTIATED_GAUSSIAN:
      src.waveform = vem::Waveform::differentiated_gaussian_for_bandwidth(bw);
      break;
    default:
      src.waveform = vem::Waveform::modulated_gaussian(f0, bw);
      break;
  }
  setup.sources.push_back(src);

  // Probes: the three E components nearest to each position.
  std::vector<std::pair<std::string, std::array<double, 3>>> probePoints;
  if (this->ProbeAtSource)
  {
    probePoints.push_back({ "source", { this->SourcePosition[0], this->SourcePosition[1],
                                        this->SourcePosition[2] } });
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
    waveCol->InsertNextValue(src.waveform.value(s * op.dt()));
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
  (void)tissueFrequency;
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
  os << indent << "NumberOfSolves: " << this->NumberOfSolves << ", LastBackend: "
     << this->LastBackend << "\n";
}
