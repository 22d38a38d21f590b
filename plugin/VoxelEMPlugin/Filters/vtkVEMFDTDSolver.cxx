#include "vtkVEMFDTDSolver.h"

#include "vemArrayUtils.h"
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
#include "vem/core/field_sampling.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_transient.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

vtkStandardNewMacro(vtkVEMFDTDSolver);

struct vtkVEMFDTDSolver::Internals
{
  vem::VoxelDomain domain;
  std::vector<int> snapshot_steps;
  vem_vtk::SnapshotStore store;
  vtkSmartPointer<vtkTable> probes;
  std::vector<vtkSmartPointer<vtkDataArray>> materials; // output-grid material arrays
};

namespace
{

// The filter's properties as the solver's transient options (the plane wave and the dipole are
// the base class's).
vem::TransientOptions Options(vtkVEMFDTDSolver* self, const std::vector<double>& probes)
{
  vem::TransientOptions o;
  o.illumination = static_cast<vem::Illumination>(self->GetIllumination());
  o.waveform = static_cast<vem::WaveformShape>(self->GetSourceWaveform());
  o.frequency = self->GetSourceFrequency();
  o.bandwidth = self->GetSourceBandwidth();
  o.source_kind = self->GetSourceType() == vtkVEMFDTDFilterBase::SOURCE_HARD_E
    ? vem::PointSource::Kind::hard_e
    : vem::PointSource::Kind::electric_current;
  for (int a = 0; a < 3; ++a)
  {
    o.source_position[a] = self->GetSourcePosition()[a];
    o.source_polarization[a] = self->GetSourcePolarization()[a];
  }
  o.source_amplitude = self->GetSourceAmplitude();
  o.stop_at_time = self->GetStopMode() == vtkVEMFDTDSolver::STOP_AFTER_TIME;
  o.steps = self->GetNumberOfSteps();
  o.simulated_time = self->GetSimulatedTime();
  o.snapshot_interval = self->GetSnapshotInterval();
  for (std::size_t q = 0; q + 2 < probes.size(); q += 3)
  {
    o.probe_positions.push_back({ probes[q], probes[q + 1], probes[q + 2] });
  }
  o.probe_at_source = self->GetProbeAtSource();
  o.progress_interval = self->GetProgressInterval();
  return o;
}

// Cell-centred E or H of the engine on the output grid (3 components).
std::vector<float> CellCentredVector(vem::FdtdEngine& engine, const vem::VoxelDomain& d, int first)
{
  std::vector<float> v(static_cast<std::size_t>(3 * d.out_cells()), 0.0f);
  for (int c = 0; c < 3; ++c)
  {
    const vem::Component comp = static_cast<vem::Component>(first + c);
    vem::cell_centred(d.grid(), engine.field(comp), comp, { d.pml[0], d.pml[2], d.pml[4] },
      d.n_out, v.data(), 3, c);
  }
  return v;
}

} // namespace

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
  vem::VoxelDomain d;
  if (!this->InformationDomain(inputVector, outInfo, d))
  {
    return 1;
  }
  try
  {
    std::vector<double> times;
    for (int s : Options(this, this->ProbePositions).snapshot_steps(d.dt))
    {
      times.push_back(s * d.dt);
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
    vem_vtk::FillSnapshotImage(output, in.store, t, in.domain, in.materials, this->LastBackend);
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDTD Solver: " << err.what());
    output->Initialize();
    return 0;
  }
  table->ShallowCopy(in.probes);
  return 1;
}

//------------------------------------------------------------------------------
// Runs the simulation and fills the snapshot store, probe table and material arrays. Returns
// false if aborted. Throws vem::Error.
bool vtkVEMFDTDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector)
{
  Internals& in = *this->Internal;
  vem::TransientOptions opt = Options(this, this->ProbePositions);
  this->GetPlaneWave(opt.plane_wave);
  this->GetDipole(opt.dipole);
  opt.validate();
  if (!(this->MemoryBudgetMB >= 1) || !std::isfinite(this->MemoryBudgetMB))
  {
    vem::fail("MemoryBudgetMB = ", this->MemoryBudgetMB, " MiB: must be finite and >= 1");
  }
  vem_vtk::VoxelModelRequest request;
  this->GetModelRequest(request);
  request.tissue_frequency = this->TissueFrequency > 0 ? this->TissueFrequency : this->SourceFrequency;
  request.tissue_frequency_origin = "TissueFrequency, or SourceFrequency when it is 0";
  request.keep_materials = this->KeepMaterials;
  vem_vtk::VoxelModel model;
  vem_vtk::BuildVoxelModel(this,
    [&](int idx, int& assoc) { return this->GetInputArrayToProcess(idx, inputVector, assoc); },
    input, request, model);
  if (!model.warning.empty())
  {
    vtkWarningMacro("FDTD Solver: " << model.warning);
  }
  in.domain = model.domain;
  in.materials = model.materials;
  const vem::VoxelDomain& d = in.domain;
  vem::FdtdSetup& setup = model.setup;
  const vem::TransientExcitation x = vem::add_transient_excitation(setup, d, opt);
  in.snapshot_steps = opt.snapshot_steps(d.dt);
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
    d.out_cells(), fields, static_cast<long long>(this->MemoryBudgetMB * 1048576.0), spill);
  in.store.CheckCapacity(static_cast<int>(in.snapshot_steps.size()));

  this->UpdateProgress(0.0);
  this->SetProgressText("FDTD: building the operator");
  const vem::FdtdOperator op(setup);
  this->TimeStep = op.dt();
  std::string warning;
  std::unique_ptr<vem::FdtdEngine> engine =
    vem::make_engine(op, this->GetEngineBackend(), this->DeviceIndex, &warning);
  if (!warning.empty())
  {
    vtkWarningMacro("FDTD Solver: " << warning);
  }
  this->LastBackend = engine->backend();
  std::unique_ptr<vem::TfsfSource> tfsf; // declared after the engine: detached before it
  if (x.plane_wave)
  {
    try
    {
      tfsf.reset(new vem::TfsfSource(*engine, x.wave, x.box));
    }
    catch (const vem::Error& err)
    {
      vem_vtk::ThrowWithPaddingHint(err, d, opt.plane_wave.tfsf_margin);
    }
  }

  // Time stepping, snapshot by snapshot.
  const auto start = std::chrono::steady_clock::now();
  auto rate = [&](int done) {
    const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return sec > 0 ? static_cast<double>(d.total_cells()) * done / sec / 1e6 : 0.0;
  };
  char text[256];
  int done = 0;
  for (int target : in.snapshot_steps)
  {
    const int base = done;
    done += engine->run(
      target - done,
      [&](int ran, int) {
        std::snprintf(text, sizeof(text), "FDTD (%s): step %d / %d, %.1f Mcells/s",
          this->LastBackend.c_str(), base + ran, steps, rate(base + ran));
        this->SetProgressText(text);
        this->UpdateProgress(0.999 * (base + ran) / steps);
        return !this->CheckAbort();
      },
      opt.progress_interval);
    if (done < target || this->CheckAbort())
    {
      this->SetProgressText("FDTD: aborted");
      return false;
    }
    // Snapshot at `target` steps: E at target dt, H half a step earlier.
    std::vector<std::vector<float>> data;
    std::vector<float> e;
    if (this->KeepE || this->KeepEMagnitude)
    {
      e = CellCentredVector(*engine, d, 0);
    }
    if (this->KeepEMagnitude)
    {
      std::vector<float> mag(static_cast<std::size_t>(d.out_cells()));
      for (std::size_t o = 0; o < mag.size(); ++o)
      {
        mag[o] = std::sqrt(e[3 * o] * e[3 * o] + e[3 * o + 1] * e[3 * o + 1] + e[3 * o + 2] * e[3 * o + 2]);
      }
      data.push_back(std::move(mag));
    }
    if (this->KeepH)
    {
      data.insert(data.begin(), CellCentredVector(*engine, d, 3));
    }
    if (this->KeepE)
    {
      data.insert(data.begin(), std::move(e));
    }
    in.store.Add(target, target * op.dt(), data);
  }
  this->LastMcellsPerSecond = rate(done);
  this->LastFieldEnergy = engine->field_energy();

  in.probes = vem_vtk::ProbeTable(engine->probes(), engine->steps_completed(), op.dt(), x.waveform);


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
