#include "vemFDTDRun.h"

#include "vemVoxelModel.h"

#include "vtkImageData.h"

#include "vem/core/error.h"
#include "vem/core/field_sampling.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd2d/extensions/tfsf2d.h"
#include "vem/fdtd2d/fdtd2d_engine.h"
#include "vem/fdtd2d/fdtd2d_operator.h"

namespace vem_vtk
{

// Declared in the order they are built: destroyed in reverse (the plane wave detaches from its
// engine, the engine goes before its operator).
struct FDTDRun::Engines
{
  std::unique_ptr<vem::FdtdOperator> op3;
  std::unique_ptr<vem::FdtdEngine> engine3;
  std::unique_ptr<vem::TfsfSource> tfsf3;
  std::unique_ptr<vem::Fdtd2dOperator> op2;
  std::unique_ptr<vem::Fdtd2dEngine> engine2;
  std::unique_ptr<vem::Tfsf2dSource> tfsf2;
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
    this->E->tfsf3.reset();
    this->E->engine3.reset();
    this->E->tfsf2.reset();
    this->E->engine2.reset();
  }
  this->E.reset();
  this->MaterialArrays.clear();
  this->BackendName.clear();
}

bool FDTDRun::Started() const
{
  return this->E && (this->E->engine3 || this->E->engine2);
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

int FDTDRun::Advance(int steps, const std::function<bool(int)>& callback, int interval)
{
  if (!this->Started() || steps <= 0)
  {
    return 0;
  }
  const vem::StepCallback cb = [&](int done, int) { return !callback || callback(done); };
  return this->E->engine3 ? this->E->engine3->run(steps, cb, interval)
                          : this->E->engine2->run(steps, cb, interval);
}

int FDTDRun::Steps() const
{
  if (!this->Started())
  {
    return 0;
  }
  return this->E->engine3 ? this->E->engine3->steps_completed()
                          : this->E->engine2->steps_completed();
}

double FDTDRun::Dt() const
{
  if (!this->Started())
  {
    return this->Geom.domain.dt;
  }
  return this->E->engine3 ? this->E->op3->dt() : this->E->op2->dt();
}

double FDTDRun::FieldEnergy() const
{
  if (!this->Started())
  {
    return 0.0;
  }
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
  std::vector<float> v(static_cast<std::size_t>(3 * d.out_cells()), 0.0f);
  for (int c = 0; c < 3; ++c)
  {
    const vem::Component comp = static_cast<vem::Component>((electric ? 0 : 3) + c);
    vem::cell_centred(d.grid(), this->E->engine3->field(comp), comp,
      { d.pml[0], d.pml[2], d.pml[4] }, d.n_out, v.data(), 3, c);
  }
  return v;
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
  return this->E->engine3 ? this->E->engine3->probes() : this->E->engine2->probes();
}

} // namespace vem_vtk
