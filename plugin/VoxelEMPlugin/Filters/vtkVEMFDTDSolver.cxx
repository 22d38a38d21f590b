#include "vtkVEMFDTDSolver.h"

#include "vemInputPiece.h"

#include "vemArrayUtils.h"
#include "vemFDTDRun.h"
#include "vemParallel.h"
#include "vemSnapshotStore.h"
#include "vemTransientOutputs.h"
#include "vemVoxelModel.h"

#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "vem/core/error.h"
#include "vem/fdtd/fdtd_transient.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

vtkStandardNewMacro(vtkVEMFDTDSolver);

struct vtkVEMFDTDSolver::Internals
{
  vem_vtk::RunGeometry geometry;
  std::vector<int> snapshot_steps;
  vem_vtk::SnapshotStore store;
  vtkSmartPointer<vtkTable> probes;
  std::vector<vtkSmartPointer<vtkDataArray>> materials; // output-grid material arrays
  vem_vtk::ModelPiece piece;                            // split input: the extent read
};


//------------------------------------------------------------------------------
vtkVEMFDTDSolver::vtkVEMFDTDSolver()
  : SourceWaveform(WAVEFORM_MODULATED_GAUSSIAN)
  , SourceFrequency(900e6)
  , SourceBandwidth(0.0)
  , StopMode(STOP_AFTER_STEPS)
  , NumberOfSteps(1000)
  , SimulatedTime(5e-9)
  , SnapshotInterval(50)
  , KeepE(true)
  , KeepH(false)
  , KeepEMagnitude(true)
  , KeepMaterials(true)
  , MemoryBudgetMB(4096.0)
  , SpillToDisk(true)
  , ProbeAtSource(true)
  , LastFieldEnergy(0.0)
  , Internal(new Internals)
{
  this->SetNumberOfOutputPorts(2);
  this->SplitsOverRanks = true;
}

vtkVEMFDTDSolver::~vtkVEMFDTDSolver() = default;

void vtkVEMFDTDSolver::SetNumberOfProbePositions(int n)
{
  const std::size_t size = 3 * static_cast<std::size_t>(std::max(0, n));
  if (this->ProbePositions.size() != size)
  {
    this->ProbePositions.resize(size, 0.0);
    this->Modified();
  }
}

void vtkVEMFDTDSolver::SetProbePosition(int i, double x, double y, double z)
{
  if (i < 0)
  {
    return;
  }
  const std::size_t at = 3 * static_cast<std::size_t>(i);
  if (at + 3 > this->ProbePositions.size())
  {
    this->ProbePositions.resize(at + 3, 0.0);
  }
  double* p = &this->ProbePositions[at];
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
int vtkVEMFDTDSolver::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
  outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  vem_vtk::RunGeometry g;
  if (!this->InformationDomain(inputVector, outInfo, g))
  {
    return 1;
  }
  try
  {
    std::vector<double> times;
    vem_vtk::TransientRequest r;
    this->GetTransientRequest(r);
    for (int s : r.options.snapshot_steps(g.domain.dt))
    {
      times.push_back(s * g.domain.dt);
    }
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), times.data(),
      static_cast<int>(times.size()));
    const double range[2] = { times.front(), times.back() };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
  }
  catch (const vem::Error&)
  {
    // Reported once by RequestData.
  }
  return 1;
}

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
  if (this->GetRunState(input) == RUN_NONE)
  {
    in.store.Clear();
    in.probes = nullptr;
    in.materials.clear();
  }
  // After an error (reported once) or an abort every output is empty; the request succeeds so
  // that the executive adds no second message.
  if (this->Run(input, [&]() { return this->Solve(input, inputVector); }) != RUN_SOLVED)
  {
    in.store.Clear();
    output->Initialize();
    table->Initialize();
    return 1;
  }

  // Port 0: the snapshot nearest to the requested time; port 1: the probe table.
  const double t = outInfo->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP())
    ? outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP())
    : std::numeric_limits<double>::infinity();
  try
  {
    vem_vtk::FillSnapshotImage(output, in.store, t, in.geometry, in.materials, this->LastBackend);
    vem_vtk::AddInputExtent(output, in.piece);
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDTD Solver: " << err.what());
    output->Initialize();
    return 0;
  }
  // A distributed run's probe table is the same on every rank (gathered by the solver); only rank
  // 0 outputs it, so that ParaView's gathered views and parallel writers show each row once.
  const vem_vtk::ParallelContext ranks = vem_vtk::GlobalParallelContext();
  if (in.geometry.IsPiece() && ranks.rank != 0)
  {
    table->Initialize();
  }
  else
  {
    table->ShallowCopy(in.probes);
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDSolver::GetTransientRequest(vem_vtk::TransientRequest& r)
{
  vem::TransientOptions& o = r.options;
  o.illumination = static_cast<vem::Illumination>(this->Illumination);
  o.waveform = static_cast<vem::WaveformShape>(this->SourceWaveform);
  o.frequency = this->SourceFrequency;
  o.bandwidth = this->SourceBandwidth;
  o.source_kind = this->SourceType == SOURCE_HARD_E ? vem::PointSource::Kind::hard_e
                                                    : vem::PointSource::Kind::electric_current;
  for (int a = 0; a < 3; ++a)
  {
    o.source_position[a] = this->SourcePosition[a];
    o.source_polarization[a] = this->SourcePolarization[a];
  }
  o.source_amplitude = this->SourceAmplitude;
  o.stop_at_time = this->StopMode == STOP_AFTER_TIME;
  o.steps = this->NumberOfSteps;
  o.simulated_time = this->SimulatedTime;
  o.snapshot_interval = this->SnapshotInterval;
  for (std::size_t q = 0; q + 2 < this->ProbePositions.size(); q += 3)
  {
    o.probe_positions.push_back(
      { this->ProbePositions[q], this->ProbePositions[q + 1], this->ProbePositions[q + 2] });
  }
  o.probe_at_source = this->ProbeAtSource;
  o.progress_interval = this->ProgressInterval;
  this->GetPlaneWave(o.plane_wave);
  this->GetDipole(o.dipole);
  int polarization = 0;
  this->Get2DOptions(polarization, r.options2d.incident_angle);
  r.options2d.polarization = static_cast<vem::Polarization2D>(polarization);
  this->GetModelRequest(r.model);
  r.model.tissue_frequency =
    this->TissueFrequency > 0 ? this->TissueFrequency : this->SourceFrequency;
  r.model.tissue_frequency_origin = "TissueFrequency, or SourceFrequency when it is 0";
  r.model.keep_materials = this->KeepMaterials;
  r.backend = this->GetEngineBackend();
  r.device = this->DeviceIndex;
  // On several ParaView ranks (pvbatch / pvserver under mpirun) a 3D model is split over them.
  r.parallel = vem_vtk::GlobalParallelContext();
}

bool vtkVEMFDTDSolver::StartRun(vem_vtk::FDTDRun& run, vtkImageData* input,
  vtkInformationVector** inputVector, vem_vtk::TransientRequest& r)
{
  this->UpdateProgress(0.0);
  this->SetProgressText("FDTD: building the operator");
  std::vector<std::string> warnings;
  run.Start(this,
    [&](int idx, int& assoc) { return this->GetInputArrayToProcess(idx, inputVector, assoc); },
    input, r, warnings);
  for (const std::string& w : warnings)
  {
    vtkWarningMacro(<< this->Label() << ": " << w);
  }
  this->TimeStep = run.Dt();
  this->LastBackend = run.Backend();
  return true;
}

//------------------------------------------------------------------------------
// Runs the simulation and fills the snapshot store, probe table and material arrays. Returns
// false if aborted. Throws vem::Error.
bool vtkVEMFDTDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector)
{
  Internals& in = *this->Internal;
  vem_vtk::TransientRequest r;
  this->GetTransientRequest(r);
  r.options.validate();
  if (!(this->MemoryBudgetMB >= 1) || !std::isfinite(this->MemoryBudgetMB))
  {
    vem::fail("MemoryBudgetMB = ", this->MemoryBudgetMB, " MiB: must be finite and >= 1");
  }
  vem_vtk::FDTDRun run;
  this->StartRun(run, input, inputVector, r);
  in.geometry = run.Geometry();
  in.materials = run.Materials();
  in.piece = run.Piece();
  in.snapshot_steps = r.options.snapshot_steps(run.Dt());
  const int steps = in.snapshot_steps.back();

  std::vector<vem_vtk::SnapshotStore::Field> fields;
  const std::pair<bool, vem_vtk::SnapshotStore::Field> kept[3] = { { this->KeepE, { "E", 3 } },
    { this->KeepH, { "H", 3 } }, { this->KeepEMagnitude, { "E_magnitude", 1 } } };
  for (const auto& k : kept)
  {
    if (k.first)
    {
      fields.push_back(k.second);
    }
  }
  const std::string spill =
    this->SpillToDisk ? (this->SpillDirectory.empty() ? "auto" : this->SpillDirectory) : "";
  in.store.Reset(
    in.geometry.OutputCellCount(), fields, static_cast<long long>(this->MemoryBudgetMB * 1048576.0), spill);
  in.store.CheckCapacity(static_cast<int>(in.snapshot_steps.size()));

  // Time stepping, snapshot by snapshot.
  const auto start = std::chrono::steady_clock::now();
  auto rate = [&](int done) {
    const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return sec > 0 ? static_cast<double>(run.ComputationalCells()) * done / sec / 1e6 : 0.0;
  };
  char text[256];
  int done = 0;
  for (int target : in.snapshot_steps)
  {
    const int base = done;
    done += run.Advance(
      target - done,
      [&](int ran) {
        std::snprintf(text, sizeof(text), "FDTD (%s): step %d / %d, %.1f Mcells/s",
          this->LastBackend.c_str(), base + ran, steps, rate(base + ran));
        this->SetProgressText(text);
        this->UpdateProgress(0.999 * (base + ran) / steps);
        return !this->CheckAbort();
      },
      r.options.progress_interval);
    if (done < target || this->CheckAbort())
    {
      this->SetProgressText("FDTD: aborted");
      return false;
    }
    // Snapshot at `target` steps: E at target dt, H half a step earlier.
    in.store.Add(target, target * run.Dt(),
      vem_vtk::SnapshotArrays(run, this->KeepE, this->KeepH, this->KeepEMagnitude));
  }
  this->LastMcellsPerSecond = rate(done);
  this->LastFieldEnergy = run.FieldEnergy();
  in.probes = vem_vtk::ProbeTable(run.Probes(), run.Steps(), run.Dt(), run.Waveform());

  ++this->NumberOfSolves;
  std::snprintf(text, sizeof(text), "FDTD (%s): %d steps, %.1f Mcells/s", this->LastBackend.c_str(),
    done, this->LastMcellsPerSecond);
  this->SetProgressText(text);
  return true;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDSolver::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Waveform: " << this->SourceWaveform << ", " << this->SourceFrequency << " Hz, "
     << "bandwidth " << this->SourceBandwidth << " Hz\n";
  os << indent << "Steps: " << this->NumberOfSteps << " (mode " << this->StopMode << ", time "
     << this->SimulatedTime << " s), snapshot every " << this->SnapshotInterval << "\n";
  os << indent << "Probes: " << this->GetNumberOfProbePositions() << ", at source "
     << this->ProbeAtSource << "\n";
}
