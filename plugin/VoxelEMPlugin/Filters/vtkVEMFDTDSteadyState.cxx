#include "vtkVEMFDTDSteadyState.h"

#include "vemInputPiece.h"

#include "vemArrayUtils.h"
#include "vemSteadyState2D.h"
#include "vemSteadyStateOutputs.h"
#include "vemParallel.h"
#include "vemVoxelModel.h"

#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "vem/core/error.h"
#include "vem/fdtd/fdtd_harmonic.h"
#ifdef VEM_WITH_MPI
#include "vem/fdtd/distributed/distributed_harmonic.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

vtkStandardNewMacro(vtkVEMFDTDSteadyState);

struct vtkVEMFDTDSteadyState::Internals
{
  vem_vtk::SteadyStateOutputs outputs;
};

//------------------------------------------------------------------------------
vtkVEMFDTDSteadyState::vtkVEMFDTDSteadyState()
  : AcceptedPower(1.0)
  , DFTFrequencies(1, 900e6)
  , SteadyStateTolerance(1e-3)
  , MaxSteps(0)
  , FixedSteps(0)
  , DFTSampleInterval(0)
  , FarFieldStep(2.0)
  , ComputeAveragedSAR(true)
  , LastSteps(0)
  , LastConverged(false)
  , LastRelativeChange(0.0)
  , Internal(new Internals)
{
  this->SetNumberOfOutputPorts(3);
  this->SplitsOverRanks = true;
}

vtkVEMFDTDSteadyState::~vtkVEMFDTDSteadyState() = default;

void vtkVEMFDTDSteadyState::SetNumberOfDFTFrequencies(int n)
{
  const std::size_t size = static_cast<std::size_t>(std::max(0, n));
  if (this->DFTFrequencies.size() != size)
  {
    this->DFTFrequencies.resize(size, 0.0);
    this->Modified();
  }
}

int vtkVEMFDTDSteadyState::GetNumberOfDFTFrequencies() const
{
  return static_cast<int>(this->DFTFrequencies.size());
}

void vtkVEMFDTDSteadyState::SetDFTFrequency(int i, double f)
{
  if (i < 0)
  {
    return;
  }
  const std::size_t at = static_cast<std::size_t>(i);
  if (at >= this->DFTFrequencies.size())
  {
    this->DFTFrequencies.resize(at + 1, 0.0);
  }
  else if (this->DFTFrequencies[at] == f)
  {
    return;
  }
  this->DFTFrequencies[at] = f;
  this->Modified();
}

double vtkVEMFDTDSteadyState::GetDFTFrequency(int i) const
{
  return i >= 0 && static_cast<std::size_t>(i) < this->DFTFrequencies.size()
    ? this->DFTFrequencies[static_cast<std::size_t>(i)]
    : 0.0;
}

void vtkVEMFDTDSteadyState::ClearDFTFrequencies()
{
  this->SetNumberOfDFTFrequencies(0);
}

vtkTable* vtkVEMFDTDSteadyState::GetSummaryOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(1));
}

vtkTable* vtkVEMFDTDSteadyState::GetFarFieldOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(2));
}

int vtkVEMFDTDSteadyState::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port > 0)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
int vtkVEMFDTDSteadyState::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vem_vtk::RunGeometry g;
  this->InformationDomain(inputVector, outputVector->GetInformationObject(0), g);
  return 1;
}

int vtkVEMFDTDSteadyState::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* input = vtkImageData::GetData(inputVector[0]);
  vtkImageData* fields = vtkImageData::GetData(outputVector, 0);
  vtkTable* summary = vtkTable::GetData(outputVector, 1);
  vtkTable* far = vtkTable::GetData(outputVector, 2);
  if (!input || !fields || !summary || !far)
  {
    vtkErrorMacro("FDTD Steady State: the input must be a vtkImageData.");
    return 0;
  }
  vem_vtk::SteadyStateOutputs& out = this->Internal->outputs;
  if (this->GetRunState(input) == RUN_NONE)
  {
    out = vem_vtk::SteadyStateOutputs();
  }
  // After an error (reported once) or an abort every output is empty; the request succeeds so
  // that the executive adds no second message.
  if (this->Run(input, [&]() { return this->Solve(input, inputVector); }) != RUN_SOLVED)
  {
    out = vem_vtk::SteadyStateOutputs();
    fields->Initialize();
    summary->Initialize();
    far->Initialize();
    return 1;
  }
  fields->ShallowCopy(out.fields);
  // A distributed run's tables are the same on every rank (reduced by the solver); only rank 0
  // outputs them, so that gathered views and parallel writers show each row once.
  if (out.fields && vem_vtk::GlobalParallelContext().rank != 0 &&
    vem_vtk::GlobalParallelContext().distributed)
  {
    summary->Initialize();
    far->Initialize();
  }
  else
  {
    summary->ShallowCopy(out.summary);
    far->ShallowCopy(out.far);
  }
  return 1;
}

//------------------------------------------------------------------------------
// One call of vem::run_fdtd_harmonic, then the outputs. Returns false when aborted. Throws
// vem::Error.
bool vtkVEMFDTDSteadyState::Solve(vtkImageData* input, vtkInformationVector** inputVector)
{
  {
    vem::VoxelDomainOptions domain;
    this->GetDomainOptions(domain);
    if (vem_vtk::GeometryOfInput(input->GetExtent(), input->GetSpacing(), input->GetOrigin(),
          this->PointsAsVoxels(), domain, this->Dimension)
          .Is2D())
    {
      return this->Solve2D(input, inputVector);
    }
  }
  vem::HarmonicOptions opt;
  opt.frequencies = this->DFTFrequencies;
  opt.steady_state_tolerance = this->SteadyStateTolerance;
  opt.max_steps = this->MaxSteps;
  opt.fixed_steps = this->FixedSteps;
  opt.dft_sample_interval = this->DFTSampleInterval;
  opt.far_field = true;
  opt.far_field_step_deg = this->FarFieldStep;
  opt.backend = this->GetEngineBackend();
  opt.device_index = this->DeviceIndex;
  opt.progress_interval = this->ProgressInterval;
  opt.source = this->Illumination == ILLUMINATION_PLANE_WAVE ? vem::HarmonicSource::plane_wave
                                                             : vem::HarmonicSource::dipole;
  this->GetPlaneWave(opt.plane_wave);
  this->GetDipole(opt.dipole);
  opt.dipole.accepted_power = this->AcceptedPower;
  const bool pointSource = this->Illumination == ILLUMINATION_POINT_SOURCE;
  if (pointSource)
  {
    opt.dipole = vem::HarmonicDipole(); // replaced by the point source's below, once the grid is known
  }
  opt.validate();

  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  vem_vtk::VoxelModelRequest request;
  this->GetModelRequest(request);
  request.tissue_frequency = this->TissueFrequency > 0 ? this->TissueFrequency : opt.frequencies[0];
  request.tissue_frequency_origin = "TissueFrequency, or the first DFT frequency when it is 0";
  request.density = true;
  vem_vtk::VoxelModel model;
  vem_vtk::BuildVoxelModel(this,
    [&](int idx, int& assoc) { return this->GetInputArrayToProcess(idx, inputVector, assoc); },
    input, request, model);
  if (!model.warning.empty())
  {
    vtkWarningMacro("FDTD Steady State: " << model.warning);
  }
  if (labelMode && opt.frequencies.size() > 1)
  {
    vtkWarningMacro("FDTD Steady State: the tissue table is evaluated at "
      << request.tissue_frequency << " Hz only; the results at the other DFT frequencies use "
      << "these material values (one material model per run).");
  }
  float phasorSign = 1.0f;
  if (pointSource)
  {
    const vem::PointDipole pd = vem::point_source_as_dipole(this->SourceType == SOURCE_HARD_E
        ? vem::PointSource::Kind::hard_e
        : vem::PointSource::Kind::electric_current,
      { this->SourcePosition[0], this->SourcePosition[1], this->SourcePosition[2] },
      { this->SourcePolarization[0], this->SourcePolarization[1], this->SourcePolarization[2] },
      this->SourceAmplitude, model.domain.grid());
    opt.dipole = pd.dipole;
    phasorSign = pd.phasor_sign;
    opt.validate();
  }
  opt.averaged_sar = !model.density.empty() && this->ComputeAveragedSAR;
  opt.density = std::move(model.density);
  char text[256];
  opt.progress = [&](int done, int total, double rel) {
    std::snprintf(text, sizeof(text),
      "FDTD steady state: step %d / %d at most, relative change %.2e (tolerance %.1e)", done,
      total, rel, opt.steady_state_tolerance);
    this->SetProgressText(text);
    this->UpdateProgress(total > 0 ? 0.95 * std::min(1.0, static_cast<double>(done) / total) : 0.0);
    return !this->CheckAbort();
  };

  this->UpdateProgress(0.0);
  this->SetProgressText("FDTD steady state: building the operator");
  vem::HarmonicResult res;
  vem_vtk::OutputWindow window = vem_vtk::OutputWindow::Whole(model.domain);
  const vem_vtk::ParallelContext ranks = vem_vtk::GlobalParallelContext();
  try
  {
    if (ranks.distributed)
    {
#ifdef VEM_WITH_MPI
      // Several ParaView ranks: each steps its piece; DFT, SAR and the far field are reduced, so
      // every scalar is the single-domain run's on every rank and each rank keeps its piece's arrays.
      vem::DistributedOptions dist;
      dist.backend = opt.backend;
      // One GPU per node-local rank: rank modulo VEM_GPUS_PER_NODE (default 1).
      dist.device_index = -1;
      dist.devices_per_node = vem_vtk::GpusPerNode();
      if (model.piece.split)
      {
        // The input was split by the pipeline: this rank holds only its piece's materials.
        dist.cells = model.piece.cells;
        dist.fill_materials = model.piece.fill;
      }
      const MPI_Comm comm = *static_cast<const MPI_Comm*>(ranks.comm.get());
      vem::DistributedHarmonicResult dres = vem::run_fdtd_harmonic_distributed(comm, model.setup, opt, dist);
      res = std::move(dres.result);
      window = vem_vtk::OutputWindow::Piece(model.domain, dres.piece_cells.lo, dres.piece_cells.dims());
      for (auto& m : model.materials)
      {
        m = model.piece.split ? m : vem_vtk::CropOutputArray(m, model.domain, window.out_lo, window.cells);
      }
#else
      vem::fail("this VoxelEM plugin was built without MPI: it cannot split a model over ", ranks.size, " ranks");
#endif
    }
    else
    {
      res = vem::run_fdtd_harmonic(model.setup, opt);
    }
  }
  catch (const vem::Error& err)
  {
    if (opt.source != vem::HarmonicSource::plane_wave)
    {
      throw;
    }
    vem_vtk::ThrowWithPaddingHint(err, model.domain, opt.plane_wave.tfsf_margin);
  }
  if (res.aborted || this->CheckAbort())
  {
    this->SetProgressText("FDTD steady state: aborted");
    return false;
  }
  if (!res.warning.empty())
  {
    vtkWarningMacro("FDTD Steady State: " << res.warning);
  }
  this->TimeStep = res.dt;
  this->LastBackend = res.backend;
  this->LastMcellsPerSecond = res.mcells_per_second;
  this->LastSteps = res.steps;
  this->LastConverged = res.converged;
  this->LastRelativeChange = res.last_relative_change;

  this->SetProgressText("FDTD steady state: output arrays");
  this->UpdateProgress(0.97);
  this->Internal->outputs = vem_vtk::MakeSteadyStateOutputs(res, opt, model.domain, window, phasorSign,
    model.materials,
    labelMode ? request.tissue_frequency : std::numeric_limits<double>::quiet_NaN());
  vem_vtk::AddInputExtent(this->Internal->outputs.fields, model.piece);
  for (const std::string& w : this->Internal->outputs.warnings)
  {
    vtkWarningMacro("FDTD Steady State: " << w);
  }
  ++this->NumberOfSolves;
  std::snprintf(text, sizeof(text), "FDTD steady state (%s): %d steps, %s (relative change %.2e)",
    res.backend.c_str(), res.steps, res.converged ? "converged" : "not converged",
    res.last_relative_change);
  this->SetProgressText(text);
  this->UpdateProgress(1.0);
  return true;
}

//------------------------------------------------------------------------------
bool vtkVEMFDTDSteadyState::Solve2D(vtkImageData* input, vtkInformationVector** inputVector)
{
  vem_vtk::SteadyState2DRequest r;
  vem::TransientOptions& o = r.run.options;
  o.illumination = static_cast<vem::Illumination>(this->Illumination);
  o.source_kind = this->SourceType == SOURCE_HARD_E ? vem::PointSource::Kind::hard_e
                                                    : vem::PointSource::Kind::electric_current;
  for (int a = 0; a < 3; ++a)
  {
    o.source_position[a] = this->SourcePosition[a];
    o.source_polarization[a] = this->SourcePolarization[a];
  }
  o.source_amplitude = this->SourceAmplitude;
  this->GetPlaneWave(o.plane_wave);
  this->GetDipole(o.dipole);
  int polarization = 0;
  this->Get2DOptions(polarization, r.run.options2d.incident_angle);
  r.run.options2d.polarization = static_cast<vem::Polarization2D>(polarization);
  this->GetModelRequest(r.run.model);
  r.frequencies = this->DFTFrequencies;
  r.run.model.tissue_frequency = this->TissueFrequency > 0
    ? this->TissueFrequency
    : (r.frequencies.empty() ? 0.0 : r.frequencies[0]);
  r.run.model.tissue_frequency_origin = "TissueFrequency, or the first DFT frequency when it is 0";
  r.run.backend = this->GetEngineBackend();
  r.run.device = this->DeviceIndex;
  r.tolerance = this->SteadyStateTolerance;
  r.max_steps = this->FixedSteps > 0 ? this->FixedSteps : this->MaxSteps;
  r.far_field_step_deg = this->FarFieldStep;
  char text[256];
  r.progress = [&](int done, int total, double rel) {
    std::snprintf(text, sizeof(text), "FDTD steady state (2D): step %d / %d at most, relative change %.2e",
      done, total, rel);
    this->SetProgressText(text);
    this->UpdateProgress(total > 0 ? 0.95 * std::min(1.0, static_cast<double>(done) / total) : 0.0);
    return !this->CheckAbort();
  };
  std::vector<std::string> warnings;
  const vem_vtk::SteadyState2DResult res = vem_vtk::RunSteadyState2D(this,
    [&](int idx, int& assoc) { return this->GetInputArrayToProcess(idx, inputVector, assoc); },
    input, r, warnings);
  for (const std::string& w : warnings)
  {
    vtkWarningMacro("FDTD Steady State: " << w);
  }
  if (res.aborted || this->CheckAbort())
  {
    this->SetProgressText("FDTD steady state: aborted");
    return false;
  }
  this->TimeStep = res.dt;
  this->LastBackend = res.backend;
  this->LastSteps = res.steps;
  this->LastConverged = res.converged;
  this->LastRelativeChange = res.relative_change;
  this->Internal->outputs = res.outputs;
  ++this->NumberOfSolves;
  return true;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDSteadyState::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "DFTFrequencies:";
  for (double f : this->DFTFrequencies)
  {
    os << " " << f;
  }
  os << " Hz; tolerance " << this->SteadyStateTolerance << ", max steps " << this->MaxSteps
     << ", fixed steps " << this->FixedSteps << ", DFT sample interval " << this->DFTSampleInterval
     << ", far-field step " << this->FarFieldStep << " deg, averaged SAR "
     << this->ComputeAveragedSAR << ", accepted power " << this->AcceptedPower << " W\n";
}
