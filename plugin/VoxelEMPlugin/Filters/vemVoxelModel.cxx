#include "vemVoxelModel.h"

#include "vemArrayUtils.h"
#include "vemInputPiece.h"
#include "vemParallel.h"

#include "vtkAlgorithm.h"
#include "vtkDataObject.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkNew.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vem/core/error.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/models/tissue_properties.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace vem_vtk
{

vem::VoxelDomain DomainFromGeometry(const int extent[6], const double spacing[3],
  const double origin[3], bool pointsAsVoxels, const vem::VoxelDomainOptions& options)
{
  const VoxelGrid v = VoxelGridOfInput(extent, spacing, origin, pointsAsVoxels);
  return vem::make_voxel_domain(v.n, v.spacing, v.origin, options);
}

RunGeometry GeometryOfInput(const int extent[6], const double spacing[3], const double origin[3],
  bool pointsAsVoxels, const vem::VoxelDomainOptions& options, int dimension)
{
  if (dimension != DIMENSION_AUTOMATIC && dimension != DIMENSION_3D)
  {
    vem::fail("Dimension = ", dimension, ": must be 0 (automatic: 2D for an image with one voxel ",
      "along one axis) or 3 (3D)");
  }
  VoxelGrid v = VoxelGridOfInput(extent, spacing, origin, pointsAsVoxels, true);
  RunGeometry g;
  g.normal = dimension == DIMENSION_3D ? -1 : vem::flat_axis(v.n);
  if (!g.Is2D())
  {
    g.domain = vem::make_voxel_domain(v.n, v.spacing, v.origin, options);
    return g;
  }
  if (options.scheme != vem::Scheme::yee)
  {
    vem::fail("Scheme = ", vem::scheme_name(options.scheme), ": the high-order schemes run on 3D models; ",
      "this image is 2D (one voxel along ", "xyz"[g.normal], "): use Scheme yee, or Dimension 3");
  }
  if (options.field_storage != vem::FieldStorage::float32)
  {
    vem::fail("FieldStorage = ", vem::field_storage_name(options.field_storage),
      ": the 2-byte field storages are for 3D models; this image is 2D (one voxel along ", "xyz"[g.normal],
      "), where the fields are float32: use FieldStorage float32, or Dimension 3");
  }
  const int n = g.normal;
  g.flat = extent[2 * n + 1] == extent[2 * n];
  if (g.flat)
  {
    // The spacing along a flat image's normal means nothing; the voxel's thickness is in-plane.
    v.spacing[n] = std::min(v.spacing[(n + 1) % 3], v.spacing[(n + 2) % 3]);
  }
  g.domain = vem::make_voxel_domain_2d(v.n, v.spacing, v.origin, options, n).domain;
  return g;
}

vtkSmartPointer<vtkDataArray> CropOutputArray(vtkDataArray* full, const vem::VoxelDomain& d,
  const std::array<int, 3>& lo, const std::array<int, 3>& n)
{
  vtkSmartPointer<vtkDataArray> a = vtkSmartPointer<vtkDataArray>::Take(full->NewInstance());
  a->SetName(full->GetName());
  a->SetNumberOfComponents(full->GetNumberOfComponents());
  a->SetNumberOfTuples(static_cast<vtkIdType>(n[0]) * n[1] * n[2]);
  vtkIdType o = 0;
  for (int k = 0; k < n[2]; ++k)
  {
    for (int j = 0; j < n[1]; ++j)
    {
      for (int i = 0; i < n[0]; ++i, ++o)
      {
        const vtkIdType src = (lo[0] + i) +
          static_cast<vtkIdType>(d.n_out[0]) * ((lo[1] + j) + static_cast<vtkIdType>(d.n_out[1]) * (lo[2] + k));
        a->SetTuple(o, src, full);
      }
    }
  }
  return a;
}

void PieceOutputCells(const vem::VoxelDomain& d, const std::array<int, 3>& pieceLo,
  const std::array<int, 3>& pieceCells, std::array<int, 3>& outLo, std::array<int, 3>& outCells,
  std::array<int, 3>& first)
{
  const int pml[3] = { d.pml[0], d.pml[2], d.pml[4] };
  for (int a = 0; a < 3; ++a)
  {
    // Output cells are computational cells pml[a] .. pml[a] + n_out[a] - 1.
    const int begin = std::max(pieceLo[a], pml[a]);
    const int end = std::min(pieceLo[a] + pieceCells[a], pml[a] + d.n_out[a]);
    outLo[a] = std::max(0, std::min(begin - pml[a], d.n_out[a]));
    outCells[a] = std::max(0, end - begin);
    first[a] = begin - pieceLo[a];
  }
}

std::array<int, 3> RunGeometry::OutputCells() const
{
  if (this->IsPiece())
  {
    return this->piece_cells;
  }
  return { this->domain.n_out[0], this->domain.n_out[1], this->domain.n_out[2] };
}

long long RunGeometry::OutputCellCount() const
{
  const std::array<int, 3> n = this->OutputCells();
  return static_cast<long long>(n[0]) * n[1] * n[2];
}

void RunGeometry::PieceExtent(int ext[6]) const
{
  const std::array<int, 3> n = this->OutputCells();
  for (int a = 0; a < 3; ++a)
  {
    ext[2 * a] = this->IsPiece() ? this->piece_lo[a] : 0;
    ext[2 * a + 1] = ext[2 * a] + n[a];
  }
}

void SetOutputGeometry(vtkInformation* info, const RunGeometry& g)
{
  SetOutputGeometry(info, g.domain);
  if (g.flat)
  {
    int whole[6] = { 0, g.domain.n_out[0], 0, g.domain.n_out[1], 0, g.domain.n_out[2] };
    whole[2 * g.normal + 1] = 0;
    info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
  }
}

void SetOutputGeometry(vtkImageData* image, const RunGeometry& g)
{
  SetOutputGeometry(image, g.domain);
  if (g.flat)
  {
    int ext[6] = { 0, g.domain.n_out[0], 0, g.domain.n_out[1], 0, g.domain.n_out[2] };
    ext[2 * g.normal + 1] = 0;
    image->SetExtent(ext);
  }
}

vtkSmartPointer<vtkDataArray> OutputArray(
  const vem::VoxelDomain& d, const std::string& name, const std::vector<float>& total)
{
  vtkNew<vtkFloatArray> a;
  a->SetName(name.c_str());
  a->SetNumberOfTuples(d.out_cells());
  d.crop_to_output(total, a->GetPointer(0), 1, 0);
  return a.GetPointer();
}

void SetOutputGeometry(vtkImageData* image, const vem::VoxelDomain& d)
{
  image->SetExtent(0, d.n_out[0], 0, d.n_out[1], 0, d.n_out[2]);
  image->SetSpacing(d.spacing.data());
  image->SetOrigin(d.origin_out.data());
}

void SetOutputGeometry(vtkInformation* info, const vem::VoxelDomain& d)
{
  const int whole[6] = { 0, d.n_out[0], 0, d.n_out[1], 0, d.n_out[2] };
  info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
  info->Set(vtkDataObject::SPACING(), d.spacing.data(), 3);
  info->Set(vtkDataObject::ORIGIN(), d.origin_out.data(), 3);
}

vem::LabelProperties LookupLabels(const VoxelModelRequest& r, const std::vector<std::int64_t>& values,
  const std::vector<std::int64_t>& counts)
{
  const vem::TissueTable tissues = LoadTissueTable(r.builtin_tissue_table, r.tissue_table_file);
  if (!(r.tissue_frequency > 0) || !std::isfinite(r.tissue_frequency))
  {
    vem::fail("the tissue frequency ", r.tissue_frequency, " Hz must be > 0 (", r.tissue_frequency_origin, ")");
  }
  return tissues.lookup(values, r.tissue_frequency, &counts);
}

LabelTable AddLabelMaterials(const vem::LabelProperties& props, vem::FdtdSetup& setup)
{
  if (props.labels.size() + 1 > 65536)
  {
    vem::fail("too many distinct labels (", props.labels.size(), "); at most 65535");
  }
  LabelTable t;
  setup.material_mode = vem::MaterialMode::indexed;
  setup.materials.push_back(vem::Material::vacuum());
  t.material.assign(65536, 0);
  t.density.assign(1, 0.0);
  for (std::size_t q = 0; q < props.labels.size(); ++q)
  {
    setup.materials.push_back(vem::Material::isotropic(
      props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
    t.density.push_back(props.density[q]);
    t.material[static_cast<std::size_t>(props.labels[q])] = static_cast<std::uint16_t>(q + 1);
  }
  return t;
}

void SetGridAndBoundaries(VoxelModel& m)
{
  const auto& h = m.domain.spacing;
  if (h[0] > 0.05 || h[1] > 0.05 || h[2] > 0.05)
  {
    m.warning = "voxel size " + std::to_string(h[0]) + " x " + std::to_string(h[1]) + " x " +
      std::to_string(h[2]) + " m is large; lengths are in metres (millimetre data needs a spacing of 0.001).";
  }
  m.setup.grid = m.domain.grid();
  m.setup.courant_factor = m.domain.options.courant_factor;
  m.setup.scheme = m.domain.options.scheme;
  m.setup.field_storage = m.domain.options.field_storage;
  m.setup.boundaries = m.domain.boundaries();
}

namespace
{

// Label mode: one material per distinct label (material 0: the padding's vacuum).
void LabelMaterials(vtkDataArray* labelsArray, vtkImageData* input, const VoxelGrid& g,
  const VoxelModelRequest& r, VoxelModel& m)
{
  const vem::VoxelDomain& d = m.domain;
  vem::FdtdSetup& setup = m.setup;
  std::vector<ArraySelection> selection{ { Quantity::labels, labelsArray->GetName() ? labelsArray->GetName() : "" } };
  CheckArraySelections(input, selection);
  const std::vector<std::uint16_t> labels = ReadLabels(labelsArray, g, "label");
  std::vector<std::int64_t> values, counts;
  UniqueLabels(labels, values, counts);
  const vem::LabelProperties props = LookupLabels(r, values, counts);
  const LabelTable table = AddLabelMaterials(props, setup);
  const std::vector<std::uint16_t>& toMaterial = table.material;
  const std::vector<double>& materialDensity = table.density;
  const std::int64_t nTotal = d.total_cells(), nVox = d.voxel_count();
  setup.material_index.assign(static_cast<std::size_t>(nTotal), 0);
  for (std::int64_t v = 0; v < nVox; ++v)
  {
    setup.material_index[static_cast<std::size_t>(d.total_index(v))] =
      toMaterial[labels[static_cast<std::size_t>(v)]];
  }
  if (r.density)
  {
    m.density.assign(static_cast<std::size_t>(nTotal), 0.0f);
    for (std::int64_t v = 0; v < nVox; ++v)
    {
      const std::size_t t = static_cast<std::size_t>(d.total_index(v));
      m.density[t] = static_cast<float>(materialDensity[setup.material_index[t]]);
    }
  }
  if (r.keep_materials)
  {
    std::vector<float> eps(static_cast<std::size_t>(nTotal), 1.0f), sig(eps.size(), 0.0f),
      lab(eps.size(), 0.0f);
    for (std::int64_t v = 0; v < nVox; ++v)
    {
      const std::size_t t = static_cast<std::size_t>(d.total_index(v));
      const vem::Material& mat = setup.materials[setup.material_index[t]];
      eps[t] = static_cast<float>(mat.eps_r[0]);
      sig[t] = static_cast<float>(mat.sigma_e[0]);
      lab[t] = labels[static_cast<std::size_t>(v)];
    }
    m.materials.push_back(OutputArray(d, "permittivity", eps));
    m.materials.push_back(OutputArray(d, "conductivity", sig));
    m.materials.push_back(OutputArray(d, "tissue", lab));
  }
}

// Property-array mode: per-voxel coefficient arrays (and the density, slot 5).
void ArrayMaterials(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  const VoxelGrid& g, int association, const VoxelModelRequest& r, VoxelModel& m)
{
  const vem::VoxelDomain& d = m.domain;
  vem::PerCellMedium& medium = m.setup.medium;
  m.setup.material_mode = vem::MaterialMode::coefficient_array;
  medium.average_at_edges = r.average_at_edges;
  const auto totalIndex = [&d](long long v) { return static_cast<long long>(d.total_index(v)); };
  for (const std::string& w : ReadPropertyArrays(self, lookup, input, g, association, r.density,
         d.total_cells(), totalIndex, medium, m.density))
  {
    m.warning += (m.warning.empty() ? "" : " ") + w;
  }
  if (!r.keep_materials)
  {
    return;
  }
  const std::pair<const char*, const std::vector<std::vector<float>>*> kept[2] = {
    { "permittivity", &medium.eps_r }, { "conductivity", &medium.sigma_e }
  };
  for (const auto& k : kept)
  {
    const int nc = static_cast<int>(k.second->size());
    if (nc == 0)
    {
      continue;
    }
    vtkNew<vtkFloatArray> o;
    o->SetName(k.first);
    o->SetNumberOfComponents(nc);
    o->SetNumberOfTuples(d.out_cells());
    for (int c = 0; c < nc; ++c)
    {
      d.crop_to_output((*k.second)[c], o->GetPointer(0), nc, c);
    }
    m.materials.push_back(o.GetPointer());
  }
}

} // namespace

void BuildVoxelModel(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  const VoxelModelRequest& r, VoxelModel& m)
{
  const int primary = r.label_mode ? 4 : 0;
  int association = -1;
  vtkDataArray* primaryArray = ResolvePrimaryMaterialArray(lookup(primary, association),
    self->GetInputArrayInformation(primary), primary, input, r.label_mode, association);
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  // On several ranks the input may be this rank's piece of the image: the geometry is the whole's.
  int whole[6];
  const bool piece = r.split_over_ranks && WholeInputExtent(self, whole);
  m.geometry = GeometryOfInput(piece ? whole : input->GetExtent(), input->GetSpacing(),
    input->GetOrigin(), points, r.domain, r.dimension);
  m.domain = m.geometry.domain;
  SetGridAndBoundaries(m);
  if (piece && PlanInputPiece(m.geometry, GlobalParallelContext(), !r.label_mode, r.average_at_edges).split)
  {
    BuildVoxelModelPiece(self, lookup, input, primaryArray, association, r, GlobalParallelContext(), m);
    return;
  }
  const VoxelGrid g =
    VoxelGridFromExtent(input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points, true);
  if (r.label_mode)
  {
    LabelMaterials(primaryArray, input, g, r, m);
  }
  else
  {
    ArrayMaterials(self, lookup, input, g, association, r, m);
  }
  // SubpixelSmoothing: the smoothed per-sample medium replaces either kind of model (the material
  // arrays kept for the output stay the voxels' own values).
  m.domain.smooth_materials(m.setup);
  for (float& rho : m.density)
  {
    rho = vem::is_tissue_density(rho) ? rho : 0.0f; // gases (air 1.16 kg/m^3) are air for SAR
  }
  if (!m.density.empty())
  {
    m.materials.push_back(OutputArray(m.domain, "density", m.density));
  }
}

void ThrowWithPaddingHint(const std::exception& err, const vem::VoxelDomain& d, int margin)
{
  // Periodic faces (and a 2D model's normal faces) have no padding and no box face.
  int pad = d.options.air_padding;
  for (int f = 0; f < 6; ++f)
  {
    if (d.options.boundaries[f] != vem::BoundaryType::periodic)
    {
      pad = std::min(pad, d.pad[f]);
    }
  }
  if (pad > margin)
  {
    throw vem::Error(err.what());
  }
  vem::fail(err.what(), " (the plane wave's total-field box lies ", margin,
    " cells inside the CPML, so with AirPadding ", pad, " it cuts through the model; set ",
    "AirPadding to at least ", margin + 1, ")");
}

} // namespace vem_vtk
