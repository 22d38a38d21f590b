#include "vtkVEMFDFDSolver.h"

#include "vemArrayUtils.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "vem/error.h"
#include "vem/fdfd_operator.h"
#include "vem/fdfd_problem.h"
#include "vem/fdfd_solver.h"
#include "vem/head_phantom.h"
#include "vem/near_to_far.h"
#include "vem/sar.h"
#include "vem/tissue_properties.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <new>
#include <sstream>

vtkStandardNewMacro(vtkVEMFDFDSolver);

namespace
{

constexpr double kPi = 3.14159265358979323846;

// Grids that follow from the input geometry and the properties.
struct Plan
{
  vem_vtk::VoxelGrid voxels;
  int pad = 0, pml = 0;
  std::array<int, 3> n_total{}; // computational grid (cells)
  std::array<int, 3> n_out{};   // output grid = voxels + padding
  std::array<double, 3> origin_total{};
  std::array<double, 3> origin_out{};
  long long out_cells() const { return static_cast<long long>(n_out[0]) * n_out[1] * n_out[2]; }
  long long total_cells() const
  {
    return static_cast<long long>(n_total[0]) * n_total[1] * n_total[2];
  }
};

Plan MakePlan(vtkVEMFDFDSolver* self, const int extent[6], const double spacing[3],
  const double origin[3], bool points_as_voxels)
{
  Plan p;
  p.voxels = vem_vtk::VoxelGridFromExtent(extent, spacing, origin, points_as_voxels);
  p.pad = self->GetAirPadding();
  p.pml = self->GetPMLThickness();
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
    p.n_out[a] = p.voxels.n[a] + 2 * p.pad;
    p.n_total[a] = p.n_out[a] + 2 * p.pml;
    p.origin_out[a] = p.voxels.origin[a] - p.pad * spacing[a];
    p.origin_total[a] = p.origin_out[a] - p.pml * spacing[a];
  }
  return p;
}

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

bool PointsAsVoxels(vtkVEMFDFDSolver* self)
{
  const int idx = self->GetMaterialMode() == vtkVEMFDFDSolver::PROPERTY_ARRAYS ? 0 : 4;
  return vem_vtk::SelectedArrayIsPointData(self, idx);
}

// Spherical angles of a unit direction.
void Angles(const std::array<double, 3>& d, double& theta, double& phi)
{
  theta = std::acos(std::max(-1.0, std::min(1.0, d[2])));
  phi = std::atan2(d[1], d[0]);
}

} // namespace

//------------------------------------------------------------------------------
vtkVEMFDFDSolver::vtkVEMFDFDSolver()
  : MaterialMode(PROPERTY_ARRAYS)
  , UseBuiltInTissueTable(true)
  , AverageAtEdges(true)
  , Frequency(900e6)
  , IncidentTheta(0.0)
  , IncidentPhi(0.0)
  , Polarization(0.0)
  , PMLThickness(10)
  , AirPadding(8)
  , Tolerance(1e-6)
  , MaxIterations(20000)
  , Precision(PRECISION_COMPLEX128)
  , Storage(STORAGE_AUTO)
  , Method(METHOD_AUTO)
  , Backend(BACKEND_AUTO)
  , DeviceIndex(0)
  , ProgressInterval(10)
  , RCSAngleStep(2.0)
  , NumberOfSolves(0)
  , LastIterations(0)
  , LastTrueResidual(0.0)
  , LastSolveSeconds(0.0)
  , LastConverged(false)
{
  this->SetNumberOfOutputPorts(3);
  const int cells = vtkDataObject::FIELD_ASSOCIATION_CELLS;
  this->SetInputArrayToProcess(0, 0, 0, cells, "permittivity");
  this->SetInputArrayToProcess(1, 0, 0, cells, "conductivity");
  this->SetInputArrayToProcess(2, 0, 0, cells, "None");
  this->SetInputArrayToProcess(3, 0, 0, cells, "None");
  this->SetInputArrayToProcess(4, 0, 0, cells, "tissue");
  this->SetInputArrayToProcess(5, 0, 0, cells, "density");
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
    const Plan p = MakePlan(this, ext, spacing, origin, PointsAsVoxels(this));
    int whole[6] = { 0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2] };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
    outInfo->Set(vtkDataObject::SPACING(), spacing, 3);
    outInfo->Set(vtkDataObject::ORIGIN(), p.origin_out.data(), 3);
    outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
    outInfo->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDFD Solver: " << err.what());
    return 0;
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
  auto clear = [&]() {
    output->Initialize();
    residuals->Initialize();
    rcs->Initialize();
  };
  bool done = false;
  try
  {
    done = this->Solve(input, inputVector, output, residuals, rcs);
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("FDFD Solver: " << err.what());
    clear();
    return 0;
  }
  catch (const std::bad_alloc&)
  {
    vtkErrorMacro("FDFD Solver: out of host memory for the grid of this input (voxels plus "
      << this->AirPadding << " padding and " << this->PMLThickness
      << " PML cells per face); use coarser voxels or less padding.");
    clear();
    return 0;
  }
  catch (const std::exception& err)
  {
    vtkErrorMacro("FDFD Solver: " << err.what());
    clear();
    return 0;
  }
  if (!done)
  {
    clear();
    vtkWarningMacro("FDFD Solver: the solve was aborted; no output was produced.");
    this->SetProgressText("FDFD: aborted");
    return 1;
  }
  return 1;
}

//------------------------------------------------------------------------------
bool vtkVEMFDFDSolver::Solve(vtkImageData* input, vtkInformationVector** inputVector,
  vtkImageData* output, vtkTable* residuals, vtkTable* rcsTable)
{
  const bool labelMode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  const int primary = labelMode ? 4 : 0;
  if (!(this->Frequency > 0) || !std::isfinite(this->Frequency))
  {
    vem::fail("frequency ", this->Frequency, " Hz must be > 0");
  }

  int association = -1;
  vtkDataArray* primaryArray = vem_vtk::ResolvePrimaryMaterialArray(
    this->GetInputArrayToProcess(primary, inputVector, association),
    this->GetInputArrayInformation(primary), primary, input, labelMode, association);
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  const Plan p = MakePlan(this, input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points);
  if (p.voxels.spacing[0] > 0.05 || p.voxels.spacing[1] > 0.05 || p.voxels.spacing[2] > 0.05)
  {
    vtkWarningMacro("FDFD Solver: voxel size " << p.voxels.spacing[0] << " x "
                                               << p.voxels.spacing[1] << " x " << p.voxels.spacing[2]
                                               << " m is large; lengths are in metres.");
  }

  vem::FdfdProblem prob;
  prob.grid = GridOf(p);
  prob.frequency = this->Frequency;
  prob.pml = vem::FdfdPml::uniform(p.pml);
  const double deg = kPi / 180.0;
  prob.incident.theta = this->IncidentTheta * deg;
  prob.incident.phi = this->IncidentPhi * deg;
  prob.incident.polarization = this->Polarization * deg;

  const long long nTotal = p.total_cells();
  const long long nVox = p.voxels.count();
  const int off = p.pad + p.pml;
  auto totalIndex = [&](long long v) {
    const long long i = v % p.voxels.n[0];
    const long long j = (v / p.voxels.n[0]) % p.voxels.n[1];
    const long long k = v / (static_cast<long long>(p.voxels.n[0]) * p.voxels.n[1]);
    return (i + off) + p.n_total[0] * ((j + off) + static_cast<long long>(p.n_total[1]) * (k + off));
  };
  // Output cell o -> computational cell.
  auto outToTotal = [&](int I, int J, int K) {
    return (I + p.pml) +
      p.n_total[0] * ((J + p.pml) + static_cast<long long>(p.n_total[1]) * (K + p.pml));
  };

  // Per computational cell: conductivity per axis (1 or 3 arrays) and density (for SAR).
  std::vector<std::vector<float>> sigmaCells;
  std::vector<float> rhoCells;
  std::vector<vtkSmartPointer<vtkFloatArray>> materialArrays;
  auto outputArray = [&](const char* name, const std::vector<float>& total) {
    vtkNew<vtkFloatArray> a;
    a->SetName(name);
    a->SetNumberOfTuples(p.out_cells());
    float* d = a->GetPointer(0);
    long long o = 0;
    for (int K = 0; K < p.n_out[2]; ++K)
      for (int J = 0; J < p.n_out[1]; ++J)
        for (int I = 0; I < p.n_out[0]; ++I, ++o)
          d[o] = total[static_cast<std::size_t>(outToTotal(I, J, K))];
    materialArrays.push_back(a.GetPointer());
  };

  if (labelMode)
  {
    const std::vector<std::uint16_t> labels = vem_vtk::ReadLabels(primaryArray, p.voxels, "label");
    const vem::TissueTable tissues =
      vem_vtk::LoadTissueTable(this->UseBuiltInTissueTable, this->TissueTableFile);
    std::vector<std::int64_t> values, counts;
    vem_vtk::UniqueLabels(labels, values, counts);
    const vem::LabelProperties props = tissues.lookup(values, this->Frequency, &counts);
    if (props.labels.size() + 1 > 65536)
    {
      vem::fail("too many distinct labels (", props.labels.size(), ")");
    }
    prob.material_mode = vem::MaterialMode::indexed;
    prob.average_at_edges = this->AverageAtEdges;
    prob.materials = { vem::Material::vacuum() };
    std::vector<std::uint16_t> toMaterial(65536, 0);
    std::vector<double> density(1, 0.0);
    for (std::size_t q = 0; q < props.labels.size(); ++q)
    {
      prob.materials.push_back(vem::Material::isotropic(
        props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
      density.push_back(props.density[q]);
      toMaterial[static_cast<std::size_t>(props.labels[q])] = static_cast<std::uint16_t>(q + 1);
    }
    prob.material_index.assign(static_cast<std::size_t>(nTotal), 0);
    std::vector<float> eps(static_cast<std::size_t>(nTotal), 1.0f), sig(eps.size(), 0.0f),
      lab(eps.size(), 0.0f);
    rhoCells.assign(eps.size(), 0.0f);
    for (long long v = 0; v < nVox; ++v)
    {
      const std::size_t t = static_cast<std::size_t>(totalIndex(v));
      const std::uint16_t m = toMaterial[labels[static_cast<std::size_t>(v)]];
      prob.material_index[t] = m;
      eps[t] = static_cast<float>(prob.materials[m].eps_r[0]);
      sig[t] = static_cast<float>(prob.materials[m].sigma_e[0]);
      lab[t] = labels[static_cast<std::size_t>(v)];
      rhoCells[t] = static_cast<float>(density[m]);
    }
    outputArray("permittivity", eps);
    outputArray("conductivity", sig);
    outputArray("tissue", lab);
    sigmaCells.push_back(std::move(sig));
  }
  else
  {
    prob.material_mode = vem::MaterialMode::coefficient_array;
    prob.medium.average_at_edges = this->AverageAtEdges;
    struct Slot
    {
      int idx;
      const char* what;
      bool required, positive;
      float pad;
      std::vector<std::vector<float>>* dst;
      const char* fallback;
    };
    std::vector<std::vector<float>> density;
    const Slot slots[5] = {
      { 0, "permittivity", true, true, 1.0f, &prob.medium.eps_r, "permittivity" },
      { 1, "conductivity", false, false, 0.0f, &prob.medium.sigma_e, "conductivity" },
      { 2, "permeability", false, true, 1.0f, &prob.medium.mu_r, nullptr },
      { 3, "magnetic conductivity", false, false, 0.0f, &prob.medium.sigma_m, nullptr },
      { 5, "density", false, false, 0.0f, &density, "density" },
    };
    for (const Slot& s : slots)
    {
      // Density (slot 5) is scalar and optional: without it there is no SAR.
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
    }
    if (!prob.medium.eps_r.empty())
    {
      outputArray("permittivity", prob.medium.eps_r[0]);
    }
    if (!prob.medium.sigma_e.empty())
    {
      outputArray("conductivity", prob.medium.sigma_e[0]);
      sigmaCells = prob.medium.sigma_e;
    }
    if (!density.empty())
    {
      rhoCells = std::move(density[0]);
    }
  }
  if (p.pad < 2)
  {
    vtkWarningMacro("FDFD Solver: AirPadding " << p.pad
                                               << " leaves no room for the near-to-far-field box "
                                                  "between the model and the PML (needs >= 2); "
                                                  "the RCS table stays empty.");
  }

  // Operator and solve.
  this->UpdateProgress(0.0);
  this->SetProgressText("FDFD: building the operator");
  const vem::FdfdOperator op(prob);
  vem::FdfdSolverOptions opt;
  opt.backend = this->Backend == BACKEND_CUDA
    ? vem::Backend::cuda
    : (this->Backend == BACKEND_CPU ? vem::Backend::cpu : vem::Backend::automatic);
  opt.device_index = this->DeviceIndex;
  opt.precision = this->Precision == PRECISION_COMPLEX64 ? vem::FdfdPrecision::complex64
                                                       : vem::FdfdPrecision::complex128;
  opt.storage = this->Storage == STORAGE_CAS ? vem::FdfdStorage::cas
    : this->Storage == STORAGE_CIS         ? vem::FdfdStorage::cis
                                           : vem::FdfdStorage::automatic;
  opt.method = this->Method == METHOD_BICGSTAB ? vem::FdfdMethod::bicgstab
    : this->Method == METHOD_COCG            ? vem::FdfdMethod::cocg
    : this->Method == METHOD_COCR            ? vem::FdfdMethod::cocr
    : this->Method == METHOD_GCR_TIME_DOMAIN ? vem::FdfdMethod::gcr
                                             : vem::FdfdMethod::automatic;
  if (this->Method == METHOD_GCR_TIME_DOMAIN)
  {
    opt.preconditioner = vem::FdfdPreconditioner::time_domain;
  }
  opt.blas = vem::FdfdBlas::fused;
  opt.tolerance = this->Tolerance;
  opt.max_iterations = this->MaxIterations;
  opt.progress_interval = this->ProgressInterval;
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

  // Fields at the output cell centres.
  this->SetProgressText("FDFD: fields");
  this->UpdateProgress(0.96);
  const vem::FdfdFields f = vem::fdfd_fields(op, sol.e_scat);
  const std::array<int, 3> n = p.n_total;
  const long long N = nTotal;
  auto sampleAt = [&](const std::vector<vem::cdouble>& v, int a, int i, int j, int k) {
    if (i >= n[0] || j >= n[1] || k >= n[2])
    {
      return vem::cdouble(0.0);
    }
    return v[static_cast<std::size_t>(
      a * N + i + n[0] * (j + static_cast<long long>(n[1]) * k))];
  };
  // Component a at the centre of computational cell (i,j,k): mean of its 4 samples.
  auto centred = [&](const std::vector<vem::cdouble>& v, int a, int i, int j, int k) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    vem::cdouble s = 0;
    for (int db = 0; db < 2; ++db)
      for (int dc = 0; dc < 2; ++dc)
      {
        int q[3] = { i, j, k };
        q[b] += db;
        q[c] += dc;
        s += sampleAt(v, a, q[0], q[1], q[2]);
      }
    return 0.25 * s;
  };
  const long long nOut = p.out_cells();
  auto make3 = [&](const char* name) {
    vtkSmartPointer<vtkFloatArray> a = vtkSmartPointer<vtkFloatArray>::New();
    a->SetName(name);
    a->SetNumberOfComponents(3);
    a->SetNumberOfTuples(nOut);
    return a;
  };
  vtkSmartPointer<vtkFloatArray> sRe = make3("E_scat_real"), sIm = make3("E_scat_imag"),
                                 tRe = make3("E_total_real"), tIm = make3("E_total_imag");
  vtkNew<vtkFloatArray> mag;
  mag->SetName("E_magnitude");
  mag->SetNumberOfTuples(nOut);
  const bool haveSar = !rhoCells.empty() && !sigmaCells.empty();
  // Absorbed power density from each E sample's own conductivity (sar.h): at tissue/air faces the
  // cell-centred |E|^2 would mix in the air side's normal field (|eps| times larger).
  const std::vector<float> powerDensity =
    haveSar ? vem::fdfd_absorbed_power_density(op, f.e_total, rhoCells) : std::vector<float>();
  vtkNew<vtkFloatArray> sar;
  sar->SetName("SAR");
  sar->SetNumberOfTuples(haveSar ? nOut : 0);
  long long o = 0;
  for (int K = 0; K < p.n_out[2]; ++K)
    for (int J = 0; J < p.n_out[1]; ++J)
      for (int I = 0; I < p.n_out[0]; ++I, ++o)
      {
        const int i = I + p.pml, j = J + p.pml, k = K + p.pml;
        double e2 = 0;
        const std::size_t t = static_cast<std::size_t>(outToTotal(I, J, K));
        for (int a = 0; a < 3; ++a)
        {
          const vem::cdouble es = centred(f.e_scat, a, i, j, k);
          const vem::cdouble et = centred(f.e_total, a, i, j, k);
          sRe->GetPointer(0)[3 * o + a] = static_cast<float>(es.real());
          sIm->GetPointer(0)[3 * o + a] = static_cast<float>(es.imag());
          tRe->GetPointer(0)[3 * o + a] = static_cast<float>(et.real());
          tIm->GetPointer(0)[3 * o + a] = static_cast<float>(et.imag());
          e2 += std::norm(et);
        }
        mag->SetValue(o, static_cast<float>(std::sqrt(e2)));
        if (haveSar)
        {
          const float rho = rhoCells[t];
          sar->SetValue(o, vem::is_tissue_density(rho) ? powerDensity[t] / rho : 0.0f);
        }
      }
  output->SetExtent(0, p.n_out[0], 0, p.n_out[1], 0, p.n_out[2]);
  output->SetSpacing(p.voxels.spacing.data());
  output->SetOrigin(p.origin_out.data());
  vtkCellData* cd = output->GetCellData();
  cd->AddArray(sRe);
  cd->AddArray(sIm);
  cd->AddArray(tRe);
  cd->AddArray(tIm);
  cd->AddArray(mag);
  if (haveSar)
  {
    cd->AddArray(sar);
  }
  for (auto& a : materialArrays)
  {
    cd->AddArray(a);
  }
  cd->SetActiveScalars("E_magnitude");

  // Residual history.
  {
    vtkNew<vtkIntArray> it;
    it->SetName("iteration");
    vtkNew<vtkDoubleArray> rel, tru;
    rel->SetName("relative_residual");
    tru->SetName("true_relative_residual");
    const vtkIdType rows = static_cast<vtkIdType>(st.history.size());
    it->SetNumberOfTuples(rows);
    rel->SetNumberOfTuples(rows);
    tru->SetNumberOfTuples(rows);
    for (vtkIdType r = 0; r < rows; ++r)
    {
      it->SetValue(r, static_cast<int>(r));
      rel->SetValue(r, st.history[static_cast<std::size_t>(r)]);
      tru->SetValue(r, std::numeric_limits<double>::quiet_NaN());
    }
    for (std::size_t q = 0; q < st.true_history.size(); ++q)
    {
      const vtkIdType r = st.true_history_iterations[q];
      if (r >= 0 && r < rows)
      {
        tru->SetValue(r, st.true_history[q]);
      }
    }
    if (rows > 0)
    {
      tru->SetValue(rows - 1, st.true_relative_residual);
    }
    residuals->Initialize();
    residuals->AddColumn(it);
    residuals->AddColumn(rel);
    residuals->AddColumn(tru);
  }

  // Bistatic RCS in the E- and H-planes of the incidence.
  rcsTable->Initialize();
  vtkNew<vtkDoubleArray> th, eDb, hDb, eM2, hM2;
  th->SetName("theta_deg");
  eDb->SetName("rcs_E_plane_dBsm");
  hDb->SetName("rcs_H_plane_dBsm");
  eM2->SetName("rcs_E_plane_m2");
  hM2->SetName("rcs_H_plane_m2");
  if (p.pad >= 2)
  {
    this->SetProgressText("FDFD: near-to-far-field transform");
    this->UpdateProgress(0.98);
    const int b = p.pad / 2;
    vem::NtffBox box;
    for (int a = 0; a < 3; ++a)
    {
      box.lo[a] = p.pml + b;
      box.hi[a] = n[a] - p.pml - b;
    }
    const vem::NearToFarTransform nf(
      prob.grid, prob.frequency, f.e_scat, f.h_scat, box, vem::phase_origin(prob));
    const std::array<double, 3> k = prob.incident.direction();
    const std::array<double, 3> e0 = prob.incident.e_polarization();
    const std::array<double, 3> h0 = prob.incident.h_polarization();
    const int steps = std::max(1, static_cast<int>(std::lround(180.0 / this->RCSAngleStep)));
    for (int s = 0; s <= steps; ++s)
    {
      const double tdeg = 180.0 * s / steps;
      const double t = tdeg * deg;
      double sig[2];
      for (int plane = 0; plane < 2; ++plane)
      {
        const std::array<double, 3>& u = plane == 0 ? e0 : h0;
        std::array<double, 3> d;
        for (int a = 0; a < 3; ++a)
        {
          d[a] = std::cos(t) * k[a] + std::sin(t) * u[a];
        }
        double ts, ps;
        Angles(d, ts, ps);
        sig[plane] = nf.rcs(ts, ps, 1.0);
      }
      th->InsertNextValue(tdeg);
      eM2->InsertNextValue(sig[0]);
      hM2->InsertNextValue(sig[1]);
      eDb->InsertNextValue(10.0 * std::log10(std::max(sig[0], 1e-300)));
      hDb->InsertNextValue(10.0 * std::log10(std::max(sig[1], 1e-300)));
    }
  }
  rcsTable->AddColumn(th);
  rcsTable->AddColumn(eDb);
  rcsTable->AddColumn(hDb);
  rcsTable->AddColumn(eM2);
  rcsTable->AddColumn(hM2);

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
