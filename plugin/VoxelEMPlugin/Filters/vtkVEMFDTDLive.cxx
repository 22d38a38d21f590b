#include "vtkVEMFDTDLive.h"

#include "vemArrayUtils.h"
#include "vemFDTDRun.h"
#include "vemTransientOutputs.h"
#include "vemVoxelModel.h"

#include "vtkCellData.h"
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
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"

#include "vem/core/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

vtkStandardNewMacro(vtkVEMFDTDLive);

struct vtkVEMFDTDLive::LiveInternals
{
  vem_vtk::FDTDRun run;
  vem_vtk::TransientRequest request;
  // The materials sampled for the display (at DisplayStride `materialsStride`; reset with the run).
  std::vector<vtkSmartPointer<vtkDataArray>> displayMaterials;
  int materialsStride = 0;
};

namespace
{
using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t)
{
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The MTime of everything upstream of the filter's input (0 without an input).
unsigned long UpstreamMTimeOf(vtkAlgorithm* self)
{
  vtkAlgorithm* up = self->GetNumberOfInputConnections(0) > 0 ? self->GetInputAlgorithm(0, 0) : nullptr;
  return up ? vem_vtk::PipelineMTime(up) : 0;
}

vtkSmartPointer<vtkFloatArray> FloatArray(const char* name, int nc, long long tuples)
{
  vtkSmartPointer<vtkFloatArray> a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(nc);
  a->SetNumberOfTuples(static_cast<vtkIdType>(tuples));
  return a;
}
} // namespace

//------------------------------------------------------------------------------
vtkVEMFDTDLive::vtkVEMFDTDLive()
  : StepsPerTick(50)
  , MaximumSteps(0)
  , Paused(false)
  , DisplayStride(0)
  , MaximumDisplayCells(1048576)
  , Live(new LiveInternals)
{
  this->SnapshotInterval = 1000000; // unused here; keeps TransientOptions' checks quiet
}

vtkVEMFDTDLive::~vtkVEMFDTDLive() = default;

void vtkVEMFDTDLive::Modified()
{
  this->Superclass::Modified();
  if (!this->Quiet)
  {
    this->ConfigChanged = true;
  }
}

void vtkVEMFDTDLive::QuietModified()
{
  const bool was = this->Quiet;
  this->Quiet = true;
  this->Modified();
  this->Quiet = was;
}

void vtkVEMFDTDLive::SetStepsPerTick(int n)
{
  if (n != this->StepsPerTick)
  {
    this->StepsPerTick = n;
    // A bad value restarts the run, which reports it.
    n >= 1 ? this->QuietModified() : this->Modified();
  }
}

void vtkVEMFDTDLive::SetMaximumSteps(int n)
{
  if (n != this->MaximumSteps)
  {
    this->MaximumSteps = n;
    n >= 0 ? this->QuietModified() : this->Modified();
  }
}

void vtkVEMFDTDLive::SetPaused(bool p)
{
  if (p != this->Paused)
  {
    this->Paused = p;
    this->QuietModified();
  }
}

void vtkVEMFDTDLive::SetDisplayStride(int n)
{
  if (n != this->DisplayStride)
  {
    this->DisplayStride = n;
    n >= 0 ? this->QuietModified() : this->Modified();
  }
}

void vtkVEMFDTDLive::SetMaximumDisplayCells(int n)
{
  if (n != this->MaximumDisplayCells)
  {
    this->MaximumDisplayCells = n;
    n >= 1 ? this->QuietModified() : this->Modified();
  }
}

int vtkVEMFDTDLive::StrideOf(const vem_vtk::RunGeometry& g) const
{
  return vem_vtk::DisplayStrideFor(g, std::max(0, this->DisplayStride), std::max(1, this->MaximumDisplayCells));
}

int vtkVEMFDTDLive::GetCurrentDisplayStride() const
{
  return this->Live->run.Started() ? this->StrideOf(this->Live->run.Geometry()) : 0;
}

void vtkVEMFDTDLive::Reset()
{
  this->ResetRequested = true;
  this->TickRequested = false;
  this->QuietModified();
}

void vtkVEMFDTDLive::Tick()
{
  this->TickRequested = true;
  this->QuietModified();
}

bool vtkVEMFDTDLive::GetRunning() const
{
  return this->Live->run.Started() && !this->Failed && !this->Paused &&
    (this->MaximumSteps <= 0 || this->Live->run.Steps() < this->MaximumSteps);
}

bool vtkVEMFDTDLive::GetNeedsUpdate()
{
  if (!this->GetRunning() || this->ConfigChanged || this->ResetRequested)
  {
    return false;
  }
  this->Tick();
  return true;
}

int vtkVEMFDTDLive::GetCurrentStep() const
{
  return this->Live->run.Steps();
}

double vtkVEMFDTDLive::GetCurrentTime() const
{
  return this->Live->run.Steps() * this->Live->run.Dt();
}

//------------------------------------------------------------------------------
int vtkVEMFDTDLive::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
  outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  vem_vtk::RunGeometry g;
  if (this->InformationDomain(inputVector, outInfo, g))
  {
    vem_vtk::SetDisplayGeometry(outInfo, g, vem_vtk::MakeDisplaySampling(g, this->StrideOf(g)));
  }
  return 1;
}

// Starts the run from step 0; false (reported once) on an error.
bool vtkVEMFDTDLive::Restart(vtkImageData* input, vtkInformationVector** inputVector)
{
  LiveInternals& L = *this->Live;
  L.run.Clear();
  const int status = vem_vtk::RunReported(this, this->Label(), [&]() {
    if (this->StepsPerTick < 1)
    {
      vem::fail("StepsPerTick = ", this->StepsPerTick, ": must be >= 1");
    }
    if (this->MaximumSteps < 0)
    {
      vem::fail("MaximumSteps = ", this->MaximumSteps, ": must be >= 0 (0 = no limit)");
    }
    if (this->DisplayStride < 0)
    {
      vem::fail("DisplayStride = ", this->DisplayStride, ": must be >= 0 (0 = automatic, 1 = every cell)");
    }
    if (this->MaximumDisplayCells < 1)
    {
      vem::fail("MaximumDisplayCells = ", this->MaximumDisplayCells, ": must be >= 1");
    }
    L.displayMaterials.clear();
    L.materialsStride = 0;
    L.request = vem_vtk::TransientRequest();
    this->GetTransientRequest(L.request);
    L.request.options.stop_at_time = false;
    L.request.options.steps = 1;
    L.request.options.snapshot_interval = 1;
    return this->StartRun(L.run, input, inputVector, L.request);
  });
  this->Failed = status != 1;
  if (this->Failed)
  {
    L.run.Clear();
  }
  return !this->Failed;
}

int vtkVEMFDTDLive::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* input = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  vtkTable* table = vtkTable::GetData(outputVector, 1);
  if (!input || !output || !table)
  {
    vtkErrorMacro("FDTD Live: the input must be a vtkImageData.");
    return 0;
  }
  LiveInternals& L = *this->Live;
  const unsigned long upstream = UpstreamMTimeOf(this);
  const bool changed =
    this->ConfigChanged || upstream != this->UpstreamMTime || input != this->InputSeen;
  if (changed || this->ResetRequested)
  {
    // A property or the input changed (or Reset): the run starts again at step 0.
    this->ConfigChanged = false;
    this->ResetRequested = false;
    this->TickRequested = false;
    this->UpstreamMTime = upstream;
    this->InputSeen = input;
    ++this->NumberOfResets;
    this->Restart(input, inputVector);
  }
  if (this->Failed)
  {
    output->Initialize();
    table->Initialize();
    return 1;
  }
  if (this->TickRequested)
  {
    this->TickRequested = false;
    int n = this->Paused ? 0 : this->StepsPerTick;
    if (this->MaximumSteps > 0)
    {
      n = std::min(n, this->MaximumSteps - L.run.Steps());
    }
    const auto start = Clock::now();
    const int done = L.run.Advance(
      n, [&](int) { return !this->CheckAbort(); }, std::max(1, this->ProgressInterval));
    this->LastTickSeconds = Since(start);
    if (done > 0 && this->LastTickSeconds > 0)
    {
      this->LastMcellsPerSecond =
        static_cast<double>(L.run.ComputationalCells()) * done / this->LastTickSeconds / 1e6;
    }
    char text[256];
    std::snprintf(text, sizeof(text), "FDTD live (%s): step %d, %.1f Mcells/s",
      L.run.Backend().c_str(), L.run.Steps(), this->LastMcellsPerSecond);
    this->SetProgressText(text);
  }
  const auto start = Clock::now();
  this->FillOutputs(output, table);
  this->LastOutputSeconds = Since(start);
  return 1;
}

void vtkVEMFDTDLive::FillOutputs(vtkImageData* output, vtkTable* table)
{
  LiveInternals& L = *this->Live;
  const vem_vtk::RunGeometry& g = L.run.Geometry();
  output->Initialize();
  // The display grid: every stride-th cell (the full grid at stride 1).
  const vem_vtk::DisplaySampling sampling = vem_vtk::MakeDisplaySampling(g, this->StrideOf(g));
  vem_vtk::SetDisplayGeometry(output, g, sampling);
  vtkCellData* cd = output->GetCellData();
  // Only the arrays kept, written in place by one multi-threaded pass over the display cells.
  const long long n = sampling.Count();
  vtkSmartPointer<vtkFloatArray> e, h, mag;
  if (this->KeepE)
  {
    e = FloatArray("E", 3, n);
  }
  if (this->KeepH)
  {
    h = FloatArray("H", 3, n);
  }
  if (this->KeepEMagnitude)
  {
    mag = FloatArray("E_magnitude", 1, n);
  }
  L.run.SampleDisplay(sampling, e ? e->GetPointer(0) : nullptr, h ? h->GetPointer(0) : nullptr,
    mag ? mag->GetPointer(0) : nullptr);
  if (e)
  {
    cd->AddArray(e);
    cd->SetActiveVectors("E");
  }
  if (h)
  {
    cd->AddArray(h);
  }
  if (mag)
  {
    cd->AddArray(mag);
    cd->SetActiveScalars("E_magnitude");
  }
  if (sampling.Full())
  {
    for (const auto& m : L.run.Materials())
    {
      cd->AddArray(m);
    }
  }
  else
  {
    if (L.materialsStride != sampling.stride)
    {
      L.displayMaterials.clear();
      for (const auto& m : L.run.Materials())
      {
        L.displayMaterials.push_back(vem_vtk::SampleCells(m, g, sampling));
      }
      L.materialsStride = sampling.stride;
    }
    for (const auto& m : L.displayMaterials)
    {
      cd->AddArray(m);
    }
  }
  const double dt = L.run.Dt(), time = L.run.Steps() * dt;
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), time);
  vtkFieldData* fd = output->GetFieldData();
  const std::pair<const char*, double> scalars[3] = { { "time_E", time },
    { "time_H", time - 0.5 * dt }, { "time_step_dt", dt } };
  for (const auto& s : scalars)
  {
    vtkNew<vtkDoubleArray> a;
    a->SetName(s.first);
    a->InsertNextValue(s.second);
    fd->AddArray(a);
  }
  vtkNew<vtkIntArray> step;
  step->SetName("step");
  step->InsertNextValue(L.run.Steps());
  fd->AddArray(step);
  vtkNew<vtkStringArray> name;
  name->SetName("backend");
  name->InsertNextValue(L.run.Backend());
  fd->AddArray(name);
  table->ShallowCopy(vem_vtk::ProbeTable(L.run.Probes(), L.run.Steps(), dt, L.run.Waveform()));
}

//------------------------------------------------------------------------------
void vtkVEMFDTDLive::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "StepsPerTick: " << this->StepsPerTick << ", MaximumSteps: " << this->MaximumSteps
     << ", Paused: " << this->Paused << ", DisplayStride: " << this->DisplayStride
     << ", MaximumDisplayCells: " << this->MaximumDisplayCells << ", step " << this->GetCurrentStep() << ", resets "
     << this->NumberOfResets << "\n";
}
