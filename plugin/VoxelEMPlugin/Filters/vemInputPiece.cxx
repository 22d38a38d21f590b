#include "vemInputPiece.h"

#include "vemArrayUtils.h"

#include "vtkAlgorithm.h"
#include "vtkDataObject.h"
#include "vtkExecutive.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vem/core/error.h"
#include "vem/fdtd/extensions/sar.h"

#include <algorithm>
#include <memory>

namespace vem_vtk
{

namespace
{

// The setup the decomposition is chosen for: the grid, boundaries, scheme and the kind of
// materials (their values do not change the choice).
vem::FdtdSetup SetupOfGeometry(const RunGeometry& g, bool coefficientArrays, bool averageAtEdges)
{
  vem::FdtdSetup s;
  s.grid = g.domain.grid();
  s.boundaries = g.domain.boundaries();
  s.scheme = g.domain.options.scheme;
  s.field_storage = g.domain.options.field_storage;
  s.material_mode =
    coefficientArrays ? vem::MaterialMode::coefficient_array : vem::MaterialMode::indexed;
  s.medium.average_at_edges = averageAtEdges;
  return s;
}

// Index of computational cell c in the box (first `lo`, `n` cells per axis), or -1 outside it.
long long BoxIndex(const std::array<int, 3>& c, const std::array<int, 3>& lo, const std::array<int, 3>& n)
{
  for (int a = 0; a < 3; ++a)
  {
    if (c[a] < lo[a] || c[a] >= lo[a] + n[a])
    {
      return -1;
    }
  }
  return (c[0] - lo[0]) +
    static_cast<long long>(n[0]) * ((c[1] - lo[1]) + static_cast<long long>(n[1]) * (c[2] - lo[2]));
}

long long Count(const std::array<int, 3>& n)
{
  return static_cast<long long>(n[0]) * n[1] * n[2];
}

// Calls f(o, c) for each output cell of the rank's output piece (o: its index in the piece's
// output array, x fastest; c: its computational cell).
template <class F>
void ForEachOutputCell(const vem::VoxelDomain& d, const InputPiece& plan, F f)
{
  std::array<int, 3> outLo, outCells, first;
  PieceOutputCells(d, plan.cellLo, plan.cellCount, outLo, outCells, first);
  const int pml[3] = { d.pml[0], d.pml[2], d.pml[4] };
  long long o = 0;
  for (int k = 0; k < outCells[2]; ++k)
  {
    for (int j = 0; j < outCells[1]; ++j)
    {
      for (int i = 0; i < outCells[0]; ++i, ++o)
      {
        f(o, std::array<int, 3>{ outLo[0] + i + pml[0], outLo[1] + j + pml[1], outLo[2] + k + pml[2] });
      }
    }
  }
}

long long OutputCellCount(const vem::VoxelDomain& d, const InputPiece& plan)
{
  std::array<int, 3> outLo, outCells, first;
  PieceOutputCells(d, plan.cellLo, plan.cellCount, outLo, outCells, first);
  return Count(outCells);
}

vtkSmartPointer<vtkFloatArray> NewArray(const char* name, int components, long long tuples)
{
  vtkSmartPointer<vtkFloatArray> a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  a->SetNumberOfTuples(tuples);
  return a;
}

// A per-cell array of the box cut to the rank's piece cells (x fastest).
template <class T>
std::vector<T> PieceOfBox(const std::vector<T>& box, const InputPiece& plan)
{
  std::vector<T> out(static_cast<std::size_t>(Count(plan.cellCount)));
  std::size_t o = 0;
  for (int k = 0; k < plan.cellCount[2]; ++k)
  {
    for (int j = 0; j < plan.cellCount[1]; ++j)
    {
      for (int i = 0; i < plan.cellCount[0]; ++i, ++o)
      {
        const std::array<int, 3> c{ plan.cellLo[0] + i, plan.cellLo[1] + j, plan.cellLo[2] + k };
        out[o] = box[static_cast<std::size_t>(BoxIndex(c, plan.boxLo, plan.boxCount))];
      }
    }
  }
  return out;
}

} // namespace

InputPiece PlanInputPiece(
  const RunGeometry& g, const ParallelContext& p, bool coefficientArrays, bool averageAtEdges)
{
  InputPiece plan;
  // Subpixel smoothing averages over the whole model's labels before the pieces exist: whole input.
  if (!p.distributed || p.size < 2 || g.Is2D() || g.domain.options.subpixel_smoothing)
  {
    return plan;
  }
  const vem::FdtdSetup s = SetupOfGeometry(g, coefficientArrays, averageAtEdges);
  try
  {
    plan.decomposition = vem::choose_decomposition(s, p.size, true);
  }
  catch (const std::exception&)
  {
    return plan; // the run reports why (the solver's message), as on a whole input
  }
  plan.split = true;
  plan.rank = p.rank;
  plan.cellLo = plan.decomposition.piece_lo(p.rank);
  plan.cellCount = plan.decomposition.piece_cells(p.rank);
  vem::piece_material_box(s, plan.decomposition, p.rank, plan.boxLo, plan.boxCount);
  const vem::VoxelDomain& d = g.domain;
  for (int a = 0; a < 3; ++a)
  {
    const int first = std::max(0, plan.boxLo[a] - d.lo_total[a]);
    const int last = std::min(d.voxels[a] - 1, plan.boxLo[a] + plan.boxCount[a] - 1 - d.lo_total[a]);
    plan.voxelCount[a] = std::max(0, last - first + 1);
    plan.voxelLo[a] = plan.voxelCount[a] > 0 ? first : std::min(first, d.voxels[a] - 1);
  }
  return plan;
}

void RequestInputPiece(vtkInformation* inInfo, const InputPiece& plan, bool pointsAsVoxels)
{
  int whole[6], ext[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  for (int a = 0; a < 3; ++a)
  {
    if (whole[2 * a + 1] == whole[2 * a])
    {
      ext[2 * a] = ext[2 * a + 1] = whole[2 * a]; // a flat axis: its one voxel
      continue;
    }
    const int n = plan.HasVoxels() ? plan.voxelCount[a] : 1;
    ext[2 * a] = whole[2 * a] + plan.voxelLo[a];
    ext[2 * a + 1] = ext[2 * a] + n - (pointsAsVoxels ? 1 : 0);
  }
  RequestInputExtent(inInfo, ext);
}

bool WholeInputExtent(vtkAlgorithm* self, int whole[6])
{
  vtkExecutive* e = self->GetExecutive();
  vtkInformation* in = e && self->GetNumberOfInputPorts() > 0 && e->GetNumberOfInputConnections(0) > 0
    ? e->GetInputInformation(0, 0)
    : nullptr;
  if (!in || !in->Has(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT()))
  {
    return false;
  }
  in->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  return true;
}

void BuildVoxelModelPiece(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  vtkDataArray* primary, int association, const VoxelModelRequest& r, const ParallelContext& p,
  VoxelModel& m)
{
  const InputPiece plan = PlanInputPiece(m.geometry, p, !r.label_mode, r.average_at_edges);
  const vem::VoxelDomain& d = m.domain;
  const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  m.piece.split = true;
  for (int a = 0; a < 3; ++a)
  {
    const std::vector<int>& cuts = plan.decomposition.cuts[a];
    m.piece.cells[a].clear();
    for (std::size_t q = 0; q + 1 < cuts.size(); ++q)
    {
      m.piece.cells[a].push_back(cuts[q + 1] - cuts[q]);
    }
  }
  std::copy(input->GetExtent(), input->GetExtent() + 6, m.piece.input_extent.begin());

  // The voxels this rank holds (its piece of the image; `first`: their place in the whole image).
  int whole[6];
  WholeInputExtent(self, whole);
  VoxelGrid held =
    VoxelGridFromExtent(input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points, true);
  for (int a = 0; a < 3; ++a)
  {
    held.first[a] = whole[2 * a + 1] == whole[2 * a] ? 0 : input->GetExtent()[2 * a] - whole[2 * a];
  }
  // Computational cell -> index of the held voxel there, or -1 (padding, CPML, not held).
  const auto heldVoxel = [&](const std::array<int, 3>& c) -> long long {
    std::array<int, 3> v;
    for (int a = 0; a < 3; ++a)
    {
      v[a] = c[a] - d.lo_total[a] - held.first[a];
      if (v[a] < 0 || v[a] >= held.n[a])
      {
        return -1;
      }
    }
    return v[0] + static_cast<long long>(held.n[0]) * (v[1] + static_cast<long long>(held.n[1]) * v[2]);
  };
  // Held voxel v -> its index in the box's arrays, or -1 outside the box.
  const auto boxIndexOfVoxel = [&](long long v) -> long long {
    const std::array<int, 3> c{ static_cast<int>(v % held.n[0]) + held.first[0] + d.lo_total[0],
      static_cast<int>((v / held.n[0]) % held.n[1]) + held.first[1] + d.lo_total[1],
      static_cast<int>(v / (static_cast<long long>(held.n[0]) * held.n[1])) + held.first[2] + d.lo_total[2] };
    return BoxIndex(c, plan.boxLo, plan.boxCount);
  };

  // 1. Each rank reads its piece (a bad value fails on the rank that holds it).
  std::string error;
  std::vector<std::uint16_t> labels;
  std::vector<long long> histogram;
  auto medium = std::make_shared<vem::PerCellMedium>();
  std::vector<float> boxDensity;
  try
  {
    for (int a = 0; a < 3 && plan.HasVoxels(); ++a)
    {
      if (held.first[a] > plan.voxelLo[a] || held.first[a] + held.n[a] < plan.voxelLo[a] + plan.voxelCount[a])
      {
        vem::fail("the input holds voxels ", held.first[a], "..", held.first[a] + held.n[a] - 1,
          " along ", "xyz"[a], ", but this rank's piece needs ", plan.voxelLo[a], "..",
          plan.voxelLo[a] + plan.voxelCount[a] - 1, " (the upstream filter did not produce the extent requested)");
      }
    }
    if (r.label_mode)
    {
      std::vector<ArraySelection> selection{ { Quantity::labels, primary->GetName() ? primary->GetName() : "" } };
      CheckArraySelections(input, selection);
      labels = ReadLabels(primary, held, "label");
      // Each voxel counted by the rank whose piece holds it: the counts sum to the whole image's.
      histogram.assign(65536, 0);
      const std::array<int, 3>& lo = plan.cellLo;
      const std::array<int, 3>& n = plan.cellCount;
      for (int k = lo[2]; k < lo[2] + n[2]; ++k)
      {
        for (int j = lo[1]; j < lo[1] + n[1]; ++j)
        {
          for (int i = lo[0]; i < lo[0] + n[0]; ++i)
          {
            const long long v = heldVoxel({ i, j, k });
            if (v >= 0)
            {
              ++histogram[labels[static_cast<std::size_t>(v)]];
            }
          }
        }
      }
    }
    else
    {
      m.setup.material_mode = vem::MaterialMode::coefficient_array;
      m.setup.medium.average_at_edges = r.average_at_edges;
      medium->average_at_edges = r.average_at_edges;
      for (const std::string& w : ReadPropertyArrays(self, lookup, input, held, association,
             r.density, Count(plan.boxCount), boxIndexOfVoxel, *medium, boxDensity))
      {
        m.warning += (m.warning.empty() ? "" : " ") + w;
      }
    }
  }
  catch (const std::exception& e)
  {
    error = e.what();
  }
  CheckOnEveryRank(p, error);

  // 2. The piece's materials, density and output arrays.
  std::vector<float> density; // piece cells
  if (r.label_mode)
  {
    SumOverRanks(p, histogram); // collective: every rank the whole image's label counts
    try
    {
      std::vector<std::int64_t> values, counts;
      for (int l = 0; l < 65536; ++l)
      {
        if (histogram[static_cast<std::size_t>(l)])
        {
          values.push_back(l);
          counts.push_back(histogram[static_cast<std::size_t>(l)]);
        }
      }
      const LabelTable table = AddLabelMaterials(LookupLabels(r, values, counts), m.setup);
      // Label mode's box is the piece's cells.
      auto index = std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(Count(plan.cellCount)), 0);
      std::vector<float> label(index->size(), 0.0f);
      std::size_t o = 0;
      for (int k = 0; k < plan.cellCount[2]; ++k)
      {
        for (int j = 0; j < plan.cellCount[1]; ++j)
        {
          for (int i = 0; i < plan.cellCount[0]; ++i, ++o)
          {
            const long long v = heldVoxel({ plan.cellLo[0] + i, plan.cellLo[1] + j, plan.cellLo[2] + k });
            if (v >= 0)
            {
              const std::uint16_t l = labels[static_cast<std::size_t>(v)];
              (*index)[o] = table.material[l];
              label[o] = l;
            }
          }
        }
      }
      if (r.density)
      {
        density.resize(index->size());
        for (std::size_t q = 0; q < index->size(); ++q)
        {
          density[q] = static_cast<float>(table.density[(*index)[q]]);
        }
      }
      if (r.keep_materials)
      {
        const long long nOut = OutputCellCount(d, plan);
        auto eps = NewArray("permittivity", 1, nOut), sig = NewArray("conductivity", 1, nOut),
             lab = NewArray("tissue", 1, nOut);
        ForEachOutputCell(d, plan, [&](long long q, const std::array<int, 3>& c) {
          const std::size_t b = static_cast<std::size_t>(BoxIndex(c, plan.cellLo, plan.cellCount));
          const vem::Material& mat = m.setup.materials[(*index)[b]];
          eps->SetValue(q, static_cast<float>(mat.eps_r[0]));
          sig->SetValue(q, static_cast<float>(mat.sigma_e[0]));
          lab->SetValue(q, label[b]);
        });
        m.materials = { eps, sig, lab };
      }
      const std::array<int, 3> cells = plan.cellCount;
      m.piece.fill = [index, cells](const std::array<int, 3>&, const std::array<int, 3>& n, vem::FdtdSetup& piece) {
        if (n != cells)
        {
          vem::fail("the input piece holds ", cells[0], " x ", cells[1], " x ", cells[2],
            " cells, the solver's piece ", n[0], " x ", n[1], " x ", n[2]);
        }
        piece.material_index = std::move(*index);
      };
    }
    catch (const std::exception& e)
    {
      error = e.what();
    }
  }
  else
  {
    try
    {
      if (r.density && !boxDensity.empty())
      {
        density = PieceOfBox(boxDensity, plan);
      }
      if (r.keep_materials)
      {
        const long long nOut = OutputCellCount(d, plan);
        const std::pair<const char*, const std::vector<std::vector<float>>*> kept[2] = {
          { "permittivity", &medium->eps_r }, { "conductivity", &medium->sigma_e }
        };
        for (const auto& k : kept)
        {
          const int nc = static_cast<int>(k.second->size());
          if (nc == 0)
          {
            continue;
          }
          auto out = NewArray(k.first, nc, nOut);
          ForEachOutputCell(d, plan, [&](long long q, const std::array<int, 3>& c) {
            const std::size_t b = static_cast<std::size_t>(BoxIndex(c, plan.boxLo, plan.boxCount));
            for (int comp = 0; comp < nc; ++comp)
            {
              out->SetTypedComponent(q, comp, (*k.second)[static_cast<std::size_t>(comp)][b]);
            }
          });
          m.materials.push_back(out);
        }
      }
      const std::array<int, 3> boxLo = plan.boxLo, boxCount = plan.boxCount;
      m.piece.fill = [medium, boxLo, boxCount](const std::array<int, 3>& lo, const std::array<int, 3>& n,
                       vem::FdtdSetup& piece) {
        // The solver's box (piece.medium, or the piece's cells) must be the one read.
        for (int a = 0; a < 3; ++a)
        {
          const int first = piece.medium.has_array_box() ? lo[a] + piece.medium.array_lo[a] : lo[a];
          const int count = piece.medium.has_array_box() ? piece.medium.array_n[a] : n[a];
          if (first != boxLo[a] || count != boxCount[a])
          {
            vem::fail("the input piece holds cells ", boxLo[a], "..", boxLo[a] + boxCount[a] - 1, " along ",
              "xyz"[a], ", the solver's piece needs ", first, "..", first + count - 1);
          }
        }
        piece.medium.eps_r = std::move(medium->eps_r);
        piece.medium.sigma_e = std::move(medium->sigma_e);
        piece.medium.mu_r = std::move(medium->mu_r);
        piece.medium.sigma_m = std::move(medium->sigma_m);
      };
    }
    catch (const std::exception& e)
    {
      error = e.what();
    }
  }
  CheckOnEveryRank(p, error);
  for (float& rho : density)
  {
    rho = vem::is_tissue_density(rho) ? rho : 0.0f; // gases (air 1.16 kg/m^3) are air for SAR
  }
  m.density = std::move(density);
  if (!m.density.empty())
  {
    const long long nOut = OutputCellCount(d, plan);
    auto rho = NewArray("density", 1, nOut);
    ForEachOutputCell(d, plan, [&](long long q, const std::array<int, 3>& c) {
      rho->SetValue(q, m.density[static_cast<std::size_t>(BoxIndex(c, plan.cellLo, plan.cellCount))]);
    });
    m.materials.push_back(rho);
  }
}

void AddInputExtent(vtkImageData* output, const ModelPiece& piece)
{
  if (!output || !piece.split)
  {
    return;
  }
  vtkNew<vtkIntArray> a;
  a->SetName("input_extent");
  for (int v : piece.input_extent)
  {
    a->InsertNextValue(v);
  }
  output->GetFieldData()->AddArray(a);
}

} // namespace vem_vtk
