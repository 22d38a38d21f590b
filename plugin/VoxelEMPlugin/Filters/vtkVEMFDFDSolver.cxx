#include "vtkVEMFDFDSolver.h"

#include "vemArrayUtils.h"
#include "vemFDFDOutputs.h"

#include "vtkDataArray.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "vem/core/error.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdfd/fdfd_voxel_domain.h"
#include "vem/models/tissue_properties.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

vtkStandardNewMacro(vtkVEMFDFDSolver);

namespace
{

// The voxels of the input (cells, or points taken as voxels) in the grid the options give.
vem::FdfdVoxelDomain MakeDomain(const int extent[6], const double spacing[3],
  const double origin[3], bool pointsAsVoxels, const vem::FdfdVoxelOptions& options)
{
  const vem_vtk::VoxelGrid v = vem_vtk::VoxelGridOfInput(extent, spacing, origin, pointsAsVoxels);
  return vem::make_fdfd_voxel_domain(v.n, v.spacing, v.origin, options);
}

// The properties as solver options (checked by FdfdVoxelOptions / FdfdSolverOptions::validate).
vem::FdfdVoxelOptions VoxelOptions(vtkVEMFDFDSolver* self)
{
  const double deg = vem::kPi / 180.0;
  vem::FdfdVoxelOptions o;
  o.frequency = self->GetFrequency();
  o.incident.theta = self->GetIncidentTheta() * deg;
  o.incident.phi = self->GetIncidentPhi() * deg;
  o.incident.polarization = self->GetPolarization() * deg;
  o.pml_thickness = self->GetPMLThickness();
  o.air_padding = self->GetAirPadding();
  o.subpixel_smoothing = self->GetSubpixelSmoothing();
  return o;
}

vem::FdfdSolverOptions SolverOptions(vtkVEMFDFDSolver* self)
{
  // Indexed by the enumerations of vtkVEMFDFDSolver.h (the setters clamp to their range).
  static const vem::Backend backends[] = { vem::Backend::automatic, vem::Backend::cuda,
    vem::Backend::cpu };
  static const vem::FdfdStorage storages[] = { vem::FdfdStorage::automatic,
    vem::FdfdStorage::cas, vem::FdfdStorage::cis };
  static const vem::FdfdMethod methods[] = { vem::FdfdMethod::automatic,
    vem::FdfdMethod::bicgstab, vem::FdfdMethod::cocg, vem::FdfdMethod::cocr, vem::FdfdMethod::gcr };
  vem::FdfdSolverOptions o;
  o.backend = backends[self->GetBackend()];
  o.device_index = self->GetDeviceIndex();
  o.precision = self->GetPrecision() == vtkVEMFDFDSolver::PRECISION_COMPLEX64
    ? vem::FdfdPrecision::complex64
    : vem::FdfdPrecision::complex128;
  o.storage = storages[self->GetStorage()];
  o.method = methods[self->GetMethod()];
  if (self->GetMethod() == vtkVEMFDFDSolver::METHOD_GCR_TIME_DOMAIN)
  {
    o.preconditioner = vem::FdfdPreconditioner::time_domain;
  }
  o.blas = vem::FdfdBlas::fused;
  o.tolerance = self->GetTolerance();
  o.max_iterations = self->GetMaxIterations();
  o.progress_interval = self->GetProgressInterval();
  return o;
}

bool PointsAsVoxels(vtkVEMFDFDSolver* self)
{
  const int idx = self->GetMaterialMode() == vtkVEMFDFDSolver::PROPERTY_ARRAYS ? 0 : 4;
  return vem_vtk::SelectedArrayIsPointData(self, idx);
}

} // namespace

//------------------------------------------------------------------------------
vtkVEMFDFDSolver::vtkVEMFDFDSolver()
{
  this->SetNumberOfOutputPorts(3);
  vem_vtk::SetDefaultMaterialArrays(this);
}

vtkVEMFDFDSolver::~vtkVEMFDFDSolver() = default;

vtkTable* vtkVEMFDFDSolver::GetResidualOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(1));
}

vtkTable* vtkVEMFDFDSolver::GetRCSOutput()
{
  return vtkTable::SafeDownCast(this->GetOutputDataObject(2));
}

int vtkVEMFDFDSolver::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == 1 || port == 2)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

int vtkVEMFDFDSolver::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  int ext[6];
  double spacing[3], origin[3];
  if (!vem_vtk::ReadInputGeometry(inInfo, ext, spacing, origin))
  {
    vtkErrorMacro("FDFD Solver: the input has no whole extent (is it a vtkImageData?)");
    return 0;
  }
  try
  {
    // The output grid needs only the padding and the PML; the other options are checked (and
    // their errors reported) in RequestData, which clears the outputs.
    vem::FdfdVoxelOptions grid;
    grid.pml_thickness = this->PMLThickness;
    grid.air_padding = this->AirPadding;
    const vem::FdfdVoxelDomain d = MakeDomain(ext, spacing, origin, PointsAsVoxels(this), grid);
    int whole[6] = { 0, d.n_out[0], 0, d.n_out[1], 0, d.n_out[2] };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
    outInfo->Set(vtkDataObject::SPACING(), spacing, 3);
    outInfo->Set(vtkDataObject::ORIGIN(), d.origin_out.data(), 3);
    outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
    outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  }
  catch (const vem::Error&)
  {
    // Reported once, by RequestData.
  }
  return 1;
}

int vtkVEMFDFDSolver::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector*)
{
  vem_vtk::RequestWholeInput(inputVector[0]->GetInformationObject(0));
  return 1;
}

int vtkVEMFDFDSolver::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* input = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  vtkTable* residuals = vtkTable::GetData(outputVector, 1);
  vtkTable* rcs = vtkTable::GetData(outputVector, 2);
  if (!input || !output || !residuals || !rcs)
  {
    vtkErrorMacro("FDFD Solver: the input must be a vtkImageData.");
    return 0;
  }
  // After an error (reported once) or an abort every output is empty; the request succeeds so
  // that the executive adds no second message.
  if (vem_vtk::RunOnce(this, "FDFD Solver", input, false, this->RunState, this->RunMTime,
        this->RunInput,
        [&]() { return this->Solve(input, inputVector, output, residuals, rcs); }) != vem_vtk::RUN_SOLVED)
  {
    output->Initialize();
    residuals->Initialize();
    rcs->Initialize();
    this->SetProgressText("FDFD: no output");
  }
  return 1;
}

//------------------------------------------------------------------------------
bool vtkVEMFDFDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector,
  vtkImageData* output, vtkTable* residuals, vtkTable* rcsTable)
{
  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  const int primary = labelMode ? 4 : 0;
  // The options first, before any array is read (solve_fdfd checks opt again).
  const vem::FdfdVoxelOptions vo = VoxelOptions(this);
  vem::FdfdSolverOptions opt = SolverOptions(this);
  vo.validate();
  opt.validate();

  int association = -1;
  vtkDataArray* primaryArray = vem_vtk::ResolvePrimaryMaterialArray(
    this->GetInputArrayToProcess(primary, inputVector, association),
    this->GetInputArrayInformation(primary), primary, input, labelMode, association);
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  const vem::FdfdVoxelDomain d =
    MakeDomain(input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points, vo);
  const vem_vtk::VoxelGrid voxels{ d.voxels, d.spacing, d.voxel_origin };
  if (d.spacing[0] > 0.05 || d.spacing[1] > 0.05 || d.spacing[2] > 0.05)
  {
    vtkWarningMacro("FDFD Solver: voxel size " << d.spacing[0] << " x " << d.spacing[1] << " x "
      << d.spacing[2] << " m is large; lengths are in metres.");
  }

  vem::FdfdProblem prob = d.problem();
  // Density per computational cell for SAR (empty: no SAR) and the material arrays of the output.
  std::vector<float> rhoCells;
  std::vector<vtkSmartPointer<vtkFloatArray>> materialArrays;
  if (labelMode)
  {
    std::vector<vem_vtk::ArraySelection> selection{ { vem_vtk::Quantity::labels,
      primaryArray->GetName() ? primaryArray->GetName() : "" } };
    vem_vtk::CheckArraySelections(input, selection);
    const std::vector<std::uint16_t> labels = vem_vtk::ReadLabels(primaryArray, voxels, "label");
    const vem::TissueTable tissues =
      vem_vtk::LoadTissueTable(this->UseBuiltInTissueTable, this->TissueTableFile);
    std::vector<std::int64_t> values, counts;
    vem_vtk::UniqueLabels(labels, values, counts);
    prob.average_at_edges = this->AverageAtEdges;
    vem::FdfdLabelCells cells =
      d.set_label_materials(prob, labels, tissues.lookup(values, this->Frequency, &counts));
    materialArrays = { vem_vtk::OutputGridArray(d, "permittivity", cells.eps_r),
      vem_vtk::OutputGridArray(d, "conductivity", cells.sigma_e),
      vem_vtk::OutputGridArray(d, "tissue", cells.label) };
    rhoCells = std::move(cells.density);
  }
  else
  {
    prob.material_mode = vem::MaterialMode::coefficient_array;
    prob.medium.average_at_edges = this->AverageAtEdges;
    std::vector<float> density;
    auto totalIndex = [&d](long long v) { return static_cast<long long>(d.total_index(v)); };
    for (const std::string& w : vem_vtk::ReadPropertyArrays(this,
           [&](int idx, int& assoc) { return this->GetInputArrayToProcess(idx, inputVector, assoc); },
           input, voxels, association, true, d.total_cells(), totalIndex, prob.medium, density))
    {
      vtkWarningMacro("FDFD Solver: " << w);
    }
    materialArrays.push_back(vem_vtk::OutputGridArray(d, "permittivity", prob.medium.eps_r.front()));
    if (!prob.medium.sigma_e.empty())
    {
      materialArrays.push_back(vem_vtk::OutputGridArray(d, "conductivity", prob.medium.sigma_e.front()));
    }
    if (!density.empty() && !prob.medium.sigma_e.empty()) // SAR needs both
    {
      rhoCells = std::move(density);
    }
    // SubpixelSmoothing (set_label_materials does it for labels). The material arrays of the
    // output stay the voxels' own values.
    d.smooth_materials(prob);
  }
  if (!d.has_ntff_room())
  {
    vtkWarningMacro("FDFD Solver: AirPadding " << d.pad_cells() << " leaves no room for the near-to-far-"
      "field box between the model and the PML (needs >= 2); the RCS table stays empty.");
  }

  // Operator and solve.
  this->UpdateProgress(0.0);
  this->SetProgressText("FDFD: building the operator");
  const vem::FdfdOperator op(prob);
  const double logTol = std::log(std::max(1e-300, this->Tolerance));
  char text[256];
  opt.progress = [&](int it, double rel) {
    const double frac =
      rel > 0 && std::isfinite(rel) ? std::log(std::min(1.0, rel)) / logTol : 0.0;
    std::snprintf(text, sizeof(text), "FDFD: iteration %d, residual %.2e (tolerance %.1e)", it,
      rel, this->Tolerance);
    this->SetProgressText(text);
    this->UpdateProgress(std::max(0.0, std::min(0.95, 0.95 * frac)));
    return !this->CheckAbort();
  };
  this->SetProgressText("FDFD: solving");
  const vem::FdfdSolution sol = vem::solve_fdfd(op, opt);
  const vem::FdfdSolveStats& st = sol.stats;
  this->LastIterations = st.iterations;
  this->LastTrueResidual = st.true_relative_residual;
  this->LastSolveSeconds = st.solve_seconds;
  this->LastConverged = st.status == vem::FdfdStatus::converged;
  this->LastBackend = st.backend;
  this->LastMethod = vem::fdfd_name(st.method);
  if (st.status == vem::FdfdStatus::stopped)
  {
    return false;
  }
  ++this->NumberOfSolves;
  if (!sol.warning.empty())
  {
    vtkWarningMacro("FDFD Solver: " << sol.warning);
  }

  // Outputs: fields at the output cell centres, the residual history, the bistatic RCS.
  this->SetProgressText("FDFD: fields");
  this->UpdateProgress(0.96);
  const vem::FdfdFields f = vem::fdfd_fields(op, sol.e_scat);
  vem_vtk::FillFDFDFieldImage(output, d, op, f, rhoCells, materialArrays);
  vem_vtk::FillFDFDResidualTable(residuals, st);
  if (d.has_ntff_room())
  {
    this->SetProgressText("FDFD: near-to-far-field transform");
    this->UpdateProgress(0.98);
  }
  vem_vtk::FillFDFDRCSTable(rcsTable, d, prob, f, this->RCSAngleStep);

  std::snprintf(text, sizeof(text), "FDFD (%s, %s): %d iterations, true residual %.2e, %.2f s",
    st.backend.c_str(), this->LastMethod.c_str(), st.iterations, st.true_relative_residual,
    st.solve_seconds);
  this->SetProgressText(text);
  this->UpdateProgress(1.0);
  return true;
}

void vtkVEMFDFDSolver::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MaterialMode: " << this->MaterialMode << "\n";
  os << indent << "Frequency: " << this->Frequency << "\n";
  os << indent << "IncidentTheta: " << this->IncidentTheta << "\n";
  os << indent << "IncidentPhi: " << this->IncidentPhi << "\n";
  os << indent << "Polarization: " << this->Polarization << "\n";
  os << indent << "PMLThickness: " << this->PMLThickness << "\n";
  os << indent << "AirPadding: " << this->AirPadding << "\n";
  os << indent << "SubpixelSmoothing: " << this->SubpixelSmoothing << "\n";
  os << indent << "Tolerance: " << this->Tolerance << "\n";
  os << indent << "MaxIterations: " << this->MaxIterations << "\n";
  os << indent << "Precision: " << this->Precision << "\n";
  os << indent << "Storage: " << this->Storage << "\n";
  os << indent << "Method: " << this->Method << "\n";
  os << indent << "Backend: " << this->Backend << "\n";
  os << indent << "DeviceIndex: " << this->DeviceIndex << "\n";
  os << indent << "RCSAngleStep: " << this->RCSAngleStep << "\n";
  os << indent << "NumberOfSolves: " << this->NumberOfSolves << "\n";
}
