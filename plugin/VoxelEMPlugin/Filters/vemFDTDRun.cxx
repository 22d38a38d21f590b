#include "vemFDTDRun.h"

#include "vemVoxelModel.h"

#include "vtkDataObject.h"
#include "vtkIdList.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkNew.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vem/core/error.h"
#include "vem/core/field_sampling.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd2d/extensions/tfsf2d.h"
#include "vem/fdtd2d/fdtd2d_engine.h"
#include "vem/fdtd2d/fdtd2d_operator.h"
#ifdef VEM_WITH_MPI
#include "vem/fdtd/distributed/distributed_fdtd.h"
#include "vem/fdtd/distributed/distributed_extensions.h"
#include "vem/fdtd/distributed/distributed_output.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace vem_vtk
{

// Declared in the order they are built: destroyed in reverse (the plane wave detaches from its
// engine, the engine goes before its operator).
struct FDTDRun::Engines
{
  std::unique_ptr<vem::FdtdOperator> op3;
  std::unique_ptr<vem::FdtdEngine> engine3;
  std::unique_ptr<vem::TfsfSource> tfsf3;
  std::unique_ptr<vem::SubpixelTensorExtension> tensor3; // SubpixelTensor = Full (after the plane wave)
#ifdef VEM_WITH_MPI
  std::unique_ptr<vem::DistributedFdtd> dist; // a distributed 3D run (engine3, op3 then empty)
  std::unique_ptr<vem::DistributedTfsfSource> tfsfd; // its plane wave
#endif
  std::unique_ptr<vem::Fdtd2dOperator> op2;
  std::unique_ptr<vem::Fdtd2dEngine> engine2;
  std::unique_ptr<vem::Tfsf2dSource> tfsf2;

  // The 3D engine stepping this rank's grid (the whole grid, or the rank's piece).
  vem::FdtdEngine* Engine3() const
  {
#ifdef VEM_WITH_MPI
    if (this->dist)
    {
      return &this->dist->engine();
    }
#endif
    return this->engine3.get();
  }
  double Dt3() const
  {
#ifdef VEM_WITH_MPI
    if (this->dist)
    {
      return this->dist->dt();
    }
#endif
    return this->op3->dt();
  }
};

FDTDRun::FDTDRun() = default;
FDTDRun::~FDTDRun()
{
  this->Clear();
}

void FDTDRun::Clear()
{
  if (this->E)
  {
    this->E->tensor3.reset();
    this->E->tfsf3.reset();
    this->E->engine3.reset();
#ifdef VEM_WITH_MPI
    this->E->tfsfd.reset();
    this->E->dist.reset();
#endif
    this->E->tfsf2.reset();
    this->E->engine2.reset();
  }
  this->E.reset();
  this->MaterialArrays.clear();
  this->InputPiece = ModelPiece();
  this->BackendName.clear();
  this->DecompositionText.clear();
}

bool FDTDRun::Started() const
{
  return this->E && (this->E->Engine3() || this->E->engine2);
}

void FDTDRun::Start(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  const TransientRequest& r, std::vector<std::string>& warnings)
{
  this->Clear();
  r.options.validate();
  VoxelModel model;
  BuildVoxelModel(self, lookup, input, r.model, model);
  if (!model.warning.empty())
  {
    warnings.push_back(model.warning);
  }
  this->Geom = model.geometry;
  std::unique_ptr<Engines> e(new Engines);
  std::string warning;
  if (!this->Geom.Is2D())
  {
    const vem::VoxelDomain& d = this->Geom.domain;
    const vem::TransientExcitation x = vem::add_transient_excitation(model.setup, d, r.options);
    this->SourceWaveform = x.waveform;
    if (r.parallel.distributed)
    {
      this->StartDistributed(*e, model, x, r, warnings);
      this->MaterialArrays = model.materials;
      this->InputPiece = model.piece;
      this->InputPiece.fill = nullptr; // used; its arrays moved into the piece
      this->E = std::move(e);
      return;
    }
    e->op3.reset(new vem::FdtdOperator(model.setup));
    e->engine3 = vem::make_engine(*e->op3, r.backend, r.device, &warning);
    if (x.plane_wave)
    {
      try
      {
        e->tfsf3.reset(new vem::TfsfSource(*e->engine3, x.wave, x.box));
      }
      catch (const vem::Error& err)
      {
        ThrowWithPaddingHint(err, d, r.options.plane_wave.tfsf_margin);
      }
    }
    // The full smoothed permittivity tensor (SubpixelSmoothing with SubpixelTensor = Full), when
    // the medium has off-diagonal rows; after the plane wave so that its E corrections enter D.
    e->tensor3 = vem::attach_subpixel_tensor(*e->engine3);
    this->BackendName = e->engine3->backend();
  }
  else
  {
    const vem::VoxelDomain2D d = this->Geom.Domain2D();
    vem::Fdtd2dSetup setup = vem::setup_2d(model.setup, d, r.options2d.polarization);
    r.options2d.validate();
    vem::TransientExcitation2D x;
    try
    {
      x = vem::add_transient_excitation_2d(setup, d, r.options, r.options2d);
    }
    catch (const vem::Error& err)
    {
      if (r.options.illumination != vem::Illumination::plane_wave)
      {
        throw;
      }
      ThrowWithPaddingHint(err, d.domain, r.options.plane_wave.tfsf_margin);
    }
    this->SourceWaveform = x.waveform;
    e->op2.reset(new vem::Fdtd2dOperator(setup));
    e->engine2 = vem::make_fdtd2d_engine(*e->op2, r.backend, r.device, &warning);
    if (x.plane_wave)
    {
      e->tfsf2.reset(new vem::Tfsf2dSource(*e->engine2, x.wave, x.box));
    }
    this->BackendName = e->engine2->backend() + " (2D " +
      vem::polarization_name(r.options2d.polarization) + ")";
    this->Geom.domain.dt = e->op2->dt();
  }
  if (!warning.empty())
  {
    warnings.push_back(warning);
  }
  this->MaterialArrays = model.materials;
  this->E = std::move(e);
}


void FDTDRun::StartDistributed(Engines& e, VoxelModel& model, const vem::TransientExcitation& x,
  const TransientRequest& r, std::vector<std::string>& warnings)
{
#ifdef VEM_WITH_MPI
  vem::DistributedOptions o;
  o.backend = r.backend;
  // One GPU per node-local rank: rank modulo VEM_GPUS_PER_NODE (default 1).
  o.device_index = -1;
  o.devices_per_node = vem_vtk::GpusPerNode();
  if (model.piece.split)
  {
    // The input was split by the pipeline: this rank holds only its piece's materials.
    o.cells = model.piece.cells;
    o.fill_materials = model.piece.fill;
  }
  const MPI_Comm comm = *static_cast<const MPI_Comm*>(r.parallel.comm.get());
  e.dist.reset(new vem::DistributedFdtd(comm, model.setup, o));
  if (x.plane_wave)
  {
    // Every rank the same 1D incident grid; each corrects the TF/SF targets it updates.
    try
    {
      e.tfsfd.reset(new vem::DistributedTfsfSource(*e.dist, x.wave, x.box));
    }
    catch (const vem::Error& err)
    {
      ThrowWithPaddingHint(err, this->Geom.domain, r.options.plane_wave.tfsf_margin);
    }
  }
  const vem::Decomposition& dec = e.dist->decomposition();
  const std::array<int, 3> lo = e.dist->piece_lo(), cells = dec.piece_cells(e.dist->rank());
  const vem::VoxelDomain& d = this->Geom.domain;
  std::array<int, 3> first;
  PieceOutputCells(d, lo, cells, this->Geom.piece_lo, this->Geom.piece_cells, first);
  this->PieceCellLo = lo;
  for (auto& m : model.materials)
  {
    m = model.piece.split ? m : CropOutputArray(m, d, this->Geom.piece_lo, this->Geom.piece_cells);
  }
  this->BackendName = e.dist->engine().backend() + " on " + std::to_string(e.dist->size()) + " ranks";
  this->DecompositionText = dec.describe();
  (void)warnings;
#else
  (void)e, (void)model, (void)x, (void)r, (void)warnings;
  vem::fail("this VoxelEM plugin was built without MPI (VEM_ENABLE_MPI=OFF or no VTK::ParallelMPI): ",
    "it cannot split a model over ", r.parallel.size, " ranks");
#endif
}

int FDTDRun::Advance(int steps, const std::function<bool(int)>& callback, int interval)
{
  if (!this->Started() || steps <= 0)
  {
    return 0;
  }
  const vem::StepCallback cb = [&](int done, int) { return !callback || callback(done); };
#ifdef VEM_WITH_MPI
  if (this->E->dist)
  {
    return this->E->dist->run(steps, cb, interval);
  }
#endif
  return this->E->engine3 ? this->E->engine3->run(steps, cb, interval)
                          : this->E->engine2->run(steps, cb, interval);
}

int FDTDRun::Steps() const
{
  if (!this->Started())
  {
    return 0;
  }
  return this->E->Engine3() ? this->E->Engine3()->steps_completed()
                            : this->E->engine2->steps_completed();
}

double FDTDRun::Dt() const
{
  if (!this->Started())
  {
    return this->Geom.domain.dt;
  }
  return this->E->Engine3() ? this->E->Dt3() : this->E->op2->dt();
}

double FDTDRun::FieldEnergy() const
{
  if (!this->Started())
  {
    return 0.0;
  }
#ifdef VEM_WITH_MPI
  if (this->E->dist)
  {
    // Collective: the pieces' energies summed over the ranks.
    double local = this->E->dist->engine().field_energy(), sum = 0.0;
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, this->E->dist->comm());
    return sum;
  }
#endif
  return this->E->engine3 ? this->E->engine3->field_energy() : this->E->engine2->field_energy();
}

long long FDTDRun::ComputationalCells() const
{
  return static_cast<long long>(this->Geom.domain.total_cells());
}

std::vector<float> FDTDRun::CellCentred(bool electric) const
{
  const vem::VoxelDomain& d = this->Geom.domain;
  if (!this->Started())
  {
    return std::vector<float>(static_cast<std::size_t>(3 * d.out_cells()), 0.0f);
  }
  if (this->E->engine2)
  {
    return vem::cell_centred_2d(*this->E->engine2, this->Geom.Domain2D(), electric);
  }
  const std::array<int, 3> n = this->Geom.OutputCells();
  std::vector<float> v(static_cast<std::size_t>(3 * this->Geom.OutputCellCount()), 0.0f);
  const vem::FdtdEngine& engine = *this->E->Engine3();
  // The output cells in the engine's grid: after the CPML cells, or (a piece) where the rank's
  // output cells start in its piece of the computational grid.
  std::array<int, 3> first{ d.pml[0], d.pml[2], d.pml[4] };
  for (int a = 0; a < 3 && this->Geom.IsPiece(); ++a)
  {
    first[a] += this->Geom.piece_lo[a] - this->PieceCellLo[a];
  }
  for (int c = 0; c < 3; ++c)
  {
    const vem::Component comp = static_cast<vem::Component>((electric ? 0 : 3) + c);
#ifdef VEM_WITH_MPI
    if (this->E->dist)
    {
      // Collective: the piece's samples with the shared planes from their owners (edges where two
      // cuts meet included), so that the output equals the single-domain run's.
      vem::cell_centred(engine.op().grid(), vem::piece_field_with_owner_planes(*this->E->dist, comp), comp,
        first, n, v.data(), 3, c);
      continue;
    }
#endif
    vem::cell_centred(engine.op().grid(), engine.field(comp), comp, first, n, v.data(), 3, c);
  }
  return v;
}

namespace
{
// One field component as the display sampler reads it: the value at the centre of computational
// cell c = (c0, c1, c2) is w * sum of f[origin + c . step + off[t]], t < n (the 1, 2 or 4 samples
// around the centre that FDTD Solver's cell_centred / cell_centred_2d average, in their order).
struct Gather
{
  const float* f = nullptr;
  std::int64_t origin = 0;
  std::int64_t step[3] = { 0, 0, 0 };
  std::int64_t off[4] = { 0, 0, 0, 0 };
  int n = 0;
  float w = 1.0f;
  int comp3 = 0; // the 3D component (x, y, z) it is
  bool electric = true;
  std::vector<float> hold; // a host copy (compact layout) when the engine's array is not readable
};

// Reads one sample value, summed in the solver's order.
inline float Centre(const Gather& g, std::int64_t o)
{
  const float* f = g.f + o;
  switch (g.n)
  {
    case 1:
      return f[g.off[0]];
    case 2:
      return (f[g.off[0]] + f[g.off[1]]) * g.w;
    default:
      return (f[g.off[0]] + f[g.off[1]] + f[g.off[2]] + f[g.off[3]]) * g.w;
  }
}

int Cells(const RunGeometry& g, int a)
{
  return std::max(1, g.domain.n_out[a]);
}
} // namespace

bool DisplaySampling::Full() const
{
  return this->stride == 1;
}

long long DisplaySampling::Count() const
{
  return static_cast<long long>(this->cells[0].size()) * static_cast<long long>(this->cells[1].size()) *
    static_cast<long long>(this->cells[2].size());
}

int DisplayStrideFor(const RunGeometry& g, int requested, long long maxCells)
{
  if (requested >= 1)
  {
    return requested;
  }
  const int largest = std::max(Cells(g, 0), std::max(Cells(g, 1), Cells(g, 2)));
  for (int s = 1; s < largest; ++s)
  {
    long long count = 1;
    for (int a = 0; a < 3; ++a)
    {
      count *= (Cells(g, a) + s - 1) / s;
    }
    if (count <= std::max(1LL, maxCells))
    {
      return s;
    }
  }
  return std::max(1, largest);
}

DisplaySampling MakeDisplaySampling(const RunGeometry& g, int stride)
{
  DisplaySampling s;
  s.stride = std::max(1, stride);
  for (int a = 0; a < 3; ++a)
  {
    const long long n = Cells(g, a), m = (n + s.stride - 1) / s.stride;
    s.cells[a].resize(static_cast<std::size_t>(m));
    for (long long i = 0; i < m; ++i)
    {
      s.cells[a][static_cast<std::size_t>(i)] = static_cast<int>(std::min(n - 1, (2 * i + 1) * n / (2 * m)));
    }
  }
  return s;
}

namespace
{
void DisplayGeometry(const RunGeometry& g, const DisplaySampling& s, int ext[6], double spacing[3])
{
  for (int a = 0; a < 3; ++a)
  {
    const int m = static_cast<int>(s.cells[a].size());
    ext[2 * a] = 0;
    ext[2 * a + 1] = (g.flat && a == g.normal) ? 0 : m;
    spacing[a] = g.domain.spacing[a] * Cells(g, a) / m;
  }
}
} // namespace

void SetDisplayGeometry(vtkInformation* info, const RunGeometry& g, const DisplaySampling& s)
{
  int ext[6];
  double spacing[3];
  DisplayGeometry(g, s, ext, spacing);
  info->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), ext, 6);
  info->Set(vtkDataObject::SPACING(), spacing, 3);
  info->Set(vtkDataObject::ORIGIN(), g.domain.origin_out.data(), 3);
}

void SetDisplayGeometry(vtkImageData* image, const RunGeometry& g, const DisplaySampling& s)
{
  int ext[6];
  double spacing[3];
  DisplayGeometry(g, s, ext, spacing);
  image->SetExtent(ext);
  image->SetSpacing(spacing);
  image->SetOrigin(g.domain.origin_out.data());
}

vtkSmartPointer<vtkDataArray> SampleCells(vtkDataArray* full, const RunGeometry& g, const DisplaySampling& s)
{
  vtkNew<vtkIdList> src, dst;
  const vtkIdType count = static_cast<vtkIdType>(s.Count());
  src->SetNumberOfIds(count);
  dst->SetNumberOfIds(count);
  const vtkIdType n0 = Cells(g, 0), n1 = Cells(g, 1);
  vtkIdType o = 0;
  for (int k : s.cells[2])
  {
    for (int j : s.cells[1])
    {
      for (int i : s.cells[0])
      {
        src->SetId(o, i + n0 * (j + n1 * static_cast<vtkIdType>(k)));
        dst->SetId(o, o);
        ++o;
      }
    }
  }
  vtkSmartPointer<vtkDataArray> a;
  a.TakeReference(full->NewInstance());
  a->SetName(full->GetName());
  a->SetNumberOfComponents(full->GetNumberOfComponents());
  a->SetNumberOfTuples(count);
  a->InsertTuples(dst, src, full);
  return a;
}

void FDTDRun::SampleDisplay(const DisplaySampling& s, float* e, float* h, float* magnitude) const
{
  const vem::VoxelDomain& d = this->Geom.domain;
  const std::int64_t m0 = static_cast<std::int64_t>(s.cells[0].size());
  const std::int64_t m1 = static_cast<std::int64_t>(s.cells[1].size());
  const std::int64_t count = static_cast<std::int64_t>(s.Count());
  // The components wanted.
  std::vector<Gather> gathers;
  const bool wantE = e || magnitude, wantH = h != nullptr;
  if (this->Started() && this->E->engine2)
  {
    vem::Fdtd2dEngine& engine = *this->E->engine2;
    const vem::Plane2D plane = vem::Plane2D::for_normal(this->Geom.normal);
    const vem::FieldLayout2D& L = engine.op().layout();
    for (const vem::Component c : engine.op().components())
    {
      if (vem::is_electric(c) ? !wantE : !wantH)
      {
        continue;
      }
      Gather gt;
      gt.electric = vem::is_electric(c);
      gt.comp3 = vem::axis_of(plane.to_3d(c));
      std::int64_t pitch;
      if (engine.fields_on_device())
      {
        gt.hold = engine.field(c); // compact, (nx+1)(ny+1)
        gt.f = gt.hold.data();
        pitch = L.nx + 1;
        gt.origin = 0;
      }
      else
      {
        gt.f = engine.raw_field(c);
        pitch = L.pitch;
        gt.origin = L.origin;
      }
      gt.step[plane.u] = 1;
      gt.step[plane.v] = pitch;
      gt.step[plane.normal] = 0;
      // fdtd2d_transient.cpp's centre(): averaged along the 2D axes where c sits on the nodes.
      const int a = vem::axis_of(c);
      const bool hx = gt.electric ? a == 0 : a != 0, hy = gt.electric ? a == 1 : a != 1;
      if (hx && hy)
      {
        gt.n = 1;
      }
      else if (hx)
      {
        gt.n = 2, gt.off[1] = pitch, gt.w = 0.5f;
      }
      else if (hy)
      {
        gt.n = 2, gt.off[1] = 1, gt.w = 0.5f;
      }
      else
      {
        gt.n = 4, gt.off[1] = 1, gt.off[2] = pitch, gt.off[3] = 1 + pitch, gt.w = 0.25f;
      }
      gathers.push_back(std::move(gt));
    }
  }
  else if (this->Started())
  {
    if (this->Geom.IsPiece())
    {
      vem::fail("the decimated display of a distributed run is not supported (FDTD Live runs on one rank)");
    }
    const vem::FdtdEngine& engine = *this->E->engine3;
    const std::int64_t NX = d.n_total[0] + 1, NY = d.n_total[1] + 1;
    const std::int64_t st[3] = { 1, NX, NX * NY };
    for (int q = 0; q < 6; ++q)
    {
      const vem::Component c = static_cast<vem::Component>(q);
      if (vem::is_electric(c) ? !wantE : !wantH)
      {
        continue;
      }
      Gather gt;
      gt.electric = vem::is_electric(c);
      gt.comp3 = vem::axis_of(c);
      gt.hold = engine.field(c); // compact, (nx+1)(ny+1)(nz+1)
      gt.f = gt.hold.data();
      for (int t = 0; t < 3; ++t)
      {
        gt.step[t] = st[t];
      }
      // field_sampling.cpp's cell_centred(): E_a over the 4 edges (b, d), H_a over the 2 faces.
      const int a = gt.comp3, b = (a + 1) % 3, dd = (a + 2) % 3;
      if (gt.electric)
      {
        gt.n = 4, gt.off[1] = st[b], gt.off[2] = st[dd], gt.off[3] = st[b] + st[dd], gt.w = 0.25f;
      }
      else
      {
        gt.n = 2, gt.off[1] = st[a], gt.w = 0.5f;
      }
      gathers.push_back(std::move(gt));
    }
  }
  // Per-axis offsets of the sampled cells, per component.
  const int lo[3] = { d.pml[0], d.pml[2], d.pml[4] };
  std::vector<std::array<std::vector<std::int64_t>, 3>> axisOffset(gathers.size());
  for (std::size_t q = 0; q < gathers.size(); ++q)
  {
    for (int a = 0; a < 3; ++a)
    {
      auto& v = axisOffset[q][a];
      v.resize(s.cells[a].size());
      for (std::size_t i = 0; i < v.size(); ++i)
      {
        v[i] = static_cast<std::int64_t>(s.cells[a][i] + lo[a]) * gathers[q].step[a];
      }
    }
  }
  const std::int64_t rows = m0 > 0 ? count / m0 : 0;
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < rows; ++row)
  {
    const std::int64_t J = row % m1, K = row / m1;
    float ev[3], hv[3];
    for (std::int64_t I = 0; I < m0; ++I)
    {
      ev[0] = ev[1] = ev[2] = hv[0] = hv[1] = hv[2] = 0.0f;
      for (std::size_t q = 0; q < gathers.size(); ++q)
      {
        const Gather& gt = gathers[q];
        const auto& ax = axisOffset[q];
        const float v = Centre(gt, gt.origin + ax[0][I] + ax[1][J] + ax[2][K]);
        (gt.electric ? ev : hv)[gt.comp3] = v;
      }
      const std::int64_t o = I + m0 * row;
      if (e)
      {
        e[3 * o] = ev[0], e[3 * o + 1] = ev[1], e[3 * o + 2] = ev[2];
      }
      if (h)
      {
        h[3 * o] = hv[0], h[3 * o + 1] = hv[1], h[3 * o + 2] = hv[2];
      }
      if (magnitude)
      {
        magnitude[o] = std::sqrt(ev[0] * ev[0] + ev[1] * ev[1] + ev[2] * ev[2]);
      }
    }
  }
}

vem::Fdtd2dEngine* FDTDRun::Engine2D() const
{
  return this->E ? this->E->engine2.get() : nullptr;
}

vem::ProbeRecord FDTDRun::Probes() const
{
  if (!this->Started())
  {
    return vem::ProbeRecord();
  }
#ifdef VEM_WITH_MPI
  if (this->E->dist)
  {
    return this->E->dist->probes(); // collective: every rank gets every probe
  }
#endif
  return this->E->engine3 ? this->E->engine3->probes() : this->E->engine2->probes();
}

} // namespace vem_vtk
