#include "vtkVEMFDTDFilterBase.h"

#include "vemInputPiece.h"

#include "vemArrayUtils.h"
#include "vemParallel.h"
#include "vemVoxelModel.h"

#include "vtkAlgorithm.h"
#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"

#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/voxel_domain.h"

#include <algorithm>

namespace
{
constexpr double kDegree = 3.14159265358979323846 / 180.0;

vem::BoundaryType ToBoundary(int t)
{
  switch (t)
  {
    case vtkVEMFDTDFilterBase::BOUNDARY_PEC:
      return vem::BoundaryType::pec;
    case vtkVEMFDTDFilterBase::BOUNDARY_PMC:
      return vem::BoundaryType::pmc;
    case vtkVEMFDTDFilterBase::BOUNDARY_PERIODIC:
      return vem::BoundaryType::periodic;
    default:
      return vem::BoundaryType::cpml;
  }
}
} // namespace

//------------------------------------------------------------------------------
vtkVEMFDTDFilterBase::vtkVEMFDTDFilterBase()
  : Illumination(ILLUMINATION_POINT_SOURCE)
  , IncidentTheta(0.0)
  , IncidentPhi(0.0)
  , Polarization(0.0)
  , IncidentAmplitude(1.0)
  , DipoleAxis(2)
  , DipoleLength(0.0)
  , FeedCurrent(1.0)
  , SourceType(SOURCE_ELECTRIC_DIPOLE)
  , SourceAmplitude(1.0)
  , MaterialMode(PROPERTY_ARRAYS)
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
  , CourantFactor(0.99)
  , ProgressInterval(10)
  , Dimension(0)
  , Polarization2D(0)
  , IncidentAngle2D(0.0)
  , NumberOfSolves(0)
  , TimeStep(0.0)
  , LastMcellsPerSecond(0.0)
{
  // The defaults sit beside the Head Phantom's right ear.
  const double beside[3] = { 0.1, 0.0, 0.0 };
  for (int a = 0; a < 3; ++a)
  {
    this->DipoleCentre[a] = beside[a];
    this->SourcePosition[a] = beside[a];
    this->SourcePolarization[a] = a == 2 ? 1.0 : 0.0;
  }
  vem_vtk::SetDefaultMaterialArrays(this);
}

vtkVEMFDTDFilterBase::~vtkVEMFDTDFilterBase() = default;

void vtkVEMFDTDFilterBase::SetBoundary(int face, int type)
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

int vtkVEMFDTDFilterBase::GetBoundary(int face) const
{
  const int f[6] = { this->XLowBoundary, this->XHighBoundary, this->YLowBoundary,
    this->YHighBoundary, this->ZLowBoundary, this->ZHighBoundary };
  return (face >= 0 && face < 6) ? f[face] : -1;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDFilterBase::GetDomainOptions(vem::VoxelDomainOptions& o) const
{
  for (int f = 0; f < 6; ++f)
  {
    o.boundaries[f] = ToBoundary(this->GetBoundary(f));
  }
  o.cpml_thickness = this->CPMLThickness;
  o.air_padding = this->AirPadding;
  o.courant_factor = this->CourantFactor;
  if (this->Scheme < 0 || this->Scheme > static_cast<int>(vem::Scheme::s44))
  {
    vem::fail("Scheme = ", this->Scheme, ": must be 0 (yee), 1 (fv24), 2 (fv24_wb), 3 (s22) or 4 (s44)");
  }
  o.scheme = static_cast<vem::Scheme>(this->Scheme);
  if (this->FieldStorage < 0 || this->FieldStorage > static_cast<int>(vem::FieldStorage::bfloat16))
  {
    vem::fail("FieldStorage = ", this->FieldStorage, ": must be 0 (float32), 1 (float16) or 2 (bfloat16)");
  }
  o.field_storage = static_cast<vem::FieldStorage>(this->FieldStorage);
  o.subpixel_smoothing = this->SubpixelSmoothing;
  o.subpixel.full_tensor = this->SubpixelTensor == SUBPIXEL_TENSOR_FULL;
}

void vtkVEMFDTDFilterBase::GetPlaneWave(vem::HarmonicPlaneWave& w) const
{
  w.theta = this->IncidentTheta * kDegree;
  w.phi = this->IncidentPhi * kDegree;
  w.psi = this->Polarization * kDegree;
  w.amplitude = this->IncidentAmplitude;
}

void vtkVEMFDTDFilterBase::GetDipole(vem::HarmonicDipole& d) const
{
  for (int a = 0; a < 3; ++a)
  {
    d.centre[a] = this->DipoleCentre[a];
  }
  d.axis = this->DipoleAxis;
  d.length = this->DipoleLength;
  d.feed_current = this->FeedCurrent;
}

vem::Backend vtkVEMFDTDFilterBase::GetEngineBackend() const
{
  return this->Backend == BACKEND_CUDA
    ? vem::Backend::cuda
    : (this->Backend == BACKEND_CPU ? vem::Backend::cpu : vem::Backend::automatic);
}

void vtkVEMFDTDFilterBase::Get2DOptions(int& polarization, double& angle) const
{
  polarization = this->Polarization2D;
  angle = this->IncidentAngle2D * kDegree;
}

bool vtkVEMFDTDFilterBase::PointsAsVoxels()
{
  return vem_vtk::SelectedArrayIsPointData(
    this, this->MaterialMode == PROPERTY_ARRAYS ? 0 : 4);
}

int vtkVEMFDTDFilterBase::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector*)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  // Distributed: each rank asks only for the voxels of its piece of the model (vemInputPiece.h).
  const vem_vtk::ParallelContext ranks = vem_vtk::GlobalParallelContext();
  vem_vtk::RunGeometry g;
  bool known = false;
  try
  {
    known = this->SplitsOverRanks && ranks.distributed && this->InputGeometry(inputVector, g);
  }
  catch (const vem::Error&)
  {
    // a bad option: RequestData reports it (on the whole input, as on one rank)
  }
  if (known)
  {
    const vem_vtk::InputPiece plan = vem_vtk::PlanInputPiece(
      g, ranks, this->MaterialMode == PROPERTY_ARRAYS, this->AverageAtEdges);
    if (plan.split)
    {
      vem_vtk::RequestInputPiece(inInfo, plan, this->PointsAsVoxels());
      return 1;
    }
  }
  vem_vtk::RequestWholeInput(inInfo);
  return 1;
}

int vtkVEMFDTDFilterBase::GetRunState(vtkDataObject* input)
{
  return vem_vtk::PipelineMTime(this) == this->StateMTime && input == this->StateInput ? this->State
                                                                               : RUN_NONE;
}

int vtkVEMFDTDFilterBase::Run(vtkDataObject* input, const std::function<bool()>& solve)
{
  return vem_vtk::RunOnce(
    this, this->Label(), input, true, this->State, this->StateMTime, this->StateInput, solve);
}

bool vtkVEMFDTDFilterBase::InputGeometry(vtkInformationVector** inputVector, vem_vtk::RunGeometry& g)
{
  int ext[6];
  double spacing[3], origin[3];
  if (!vem_vtk::ReadInputGeometry(inputVector[0]->GetInformationObject(0), ext, spacing, origin))
  {
    return false;
  }
  vem::VoxelDomainOptions options;
  this->GetDomainOptions(options);
  // The geometry only: a bad option is reported once, by RequestData.
  try
  {
    g = vem_vtk::GeometryOfInput(
      ext, spacing, origin, this->PointsAsVoxels(), options, this->Dimension);
  }
  catch (const vem::Error&)
  {
    return false;
  }
  return true;
}

bool vtkVEMFDTDFilterBase::InformationDomain(
  vtkInformationVector** inputVector, vtkInformation* outInfo, vem_vtk::RunGeometry& g)
{
  int ext[6];
  double spacing[3], origin[3];
  if (!vem_vtk::ReadInputGeometry(inputVector[0]->GetInformationObject(0), ext, spacing, origin))
  {
    vtkErrorMacro(<< this->Label() << ": the input has no whole extent (is it a vtkImageData?)");
    return false;
  }
  if (!this->InputGeometry(inputVector, g))
  {
    return false;
  }
  vem_vtk::SetOutputGeometry(outInfo, g);
  // Distributed: each rank produces its own piece of the output (its part of the grid), not the
  // whole extent.
  if (this->SplitsOverRanks && !g.Is2D() && vem_vtk::GlobalParallelContext().distributed)
  {
    outInfo->Set(vtkAlgorithm::CAN_PRODUCE_SUB_EXTENT(), 1);
  }
  this->TimeStep = g.domain.dt;
  return true;
}

void vtkVEMFDTDFilterBase::GetModelRequest(vem_vtk::VoxelModelRequest& r) const
{
  this->GetDomainOptions(r.domain);
  r.label_mode = this->MaterialMode == LABELS_AND_TISSUE_TABLE;
  r.average_at_edges = this->AverageAtEdges;
  r.builtin_tissue_table = this->UseBuiltInTissueTable;
  r.tissue_table_file = this->TissueTableFile;
  r.dimension = this->Dimension;
  // On several ParaView ranks each reads and builds only its piece of a 3D model.
  r.split_over_ranks = this->SplitsOverRanks && vem_vtk::GlobalParallelContext().distributed;
}

//------------------------------------------------------------------------------
void vtkVEMFDTDFilterBase::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MaterialMode: " << this->MaterialMode << ", Backend: " << this->Backend
     << " (device " << this->DeviceIndex << ")\n";
  os << indent << "Boundaries:";
  for (int f = 0; f < 6; ++f)
  {
    os << " " << this->GetBoundary(f);
  }
  os << ", CPML " << this->CPMLThickness << ", padding " << this->AirPadding << ", Courant "
     << this->CourantFactor << "\n";
  os << indent << "Scheme: " << this->Scheme << ", SubpixelSmoothing: " << this->SubpixelSmoothing
     << ", SubpixelTensor: " << (this->SubpixelTensor == SUBPIXEL_TENSOR_FULL ? "full" : "diagonal")
     << "\n";
  os << indent << "Dimension: " << this->Dimension << ", Polarization2D: " << this->Polarization2D
     << ", IncidentAngle2D: " << this->IncidentAngle2D << " deg\n";
  os << indent << "Illumination: " << this->Illumination << "; source type " << this->SourceType
     << " at (" << this->SourcePosition[0] << ", " << this->SourcePosition[1] << ", "
     << this->SourcePosition[2] << "); plane wave " << this->IncidentTheta << " / "
     << this->IncidentPhi << " / " << this->Polarization << " deg, " << this->IncidentAmplitude
     << " V/m; dipole at (" << this->DipoleCentre[0] << ", " << this->DipoleCentre[1] << ", "
     << this->DipoleCentre[2] << ") axis " << this->DipoleAxis << ", " << this->DipoleLength
     << " m, " << this->FeedCurrent << " A\n";
  os << indent << "NumberOfSolves: " << this->NumberOfSolves << ", LastBackend: "
     << this->LastBackend << "\n";
}
