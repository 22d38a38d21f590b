#include "vemSteadyState2D.h"

#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkStringArray.h"
#include "vtkTable.h"

#include "vem/core/error.h"
#include "vem/fdtd2d/extensions/near_to_far2d.h"

#include <cmath>
#include <complex>

namespace vem_vtk
{
namespace
{
vtkSmartPointer<vtkDoubleArray> Column(const char* name, int components = 1)
{
  vtkSmartPointer<vtkDoubleArray> a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  return a;
}

void AddComplex(vtkCellData* cd, const char* re, const char* im, const std::vector<std::complex<float>>& v)
{
  vtkNew<vtkFloatArray> a, b;
  a->SetName(re);
  b->SetName(im);
  a->SetNumberOfComponents(3);
  b->SetNumberOfComponents(3);
  a->SetNumberOfTuples(static_cast<vtkIdType>(v.size() / 3));
  b->SetNumberOfTuples(static_cast<vtkIdType>(v.size() / 3));
  for (std::size_t q = 0; q < v.size(); ++q)
  {
    a->GetPointer(0)[q] = v[q].real();
    b->GetPointer(0)[q] = v[q].imag();
  }
  cd->AddArray(a);
  cd->AddArray(b);
}
} // namespace

SteadyState2DResult RunSteadyState2D(vtkAlgorithm* self, const ArrayLookup& lookup,
  vtkImageData* input, SteadyState2DRequest& r, std::vector<std::string>& warnings)
{
  if (r.frequencies.size() != 1)
  {
    vem::fail("HarmonicOptions::frequencies (DFTFrequencies): ", r.frequencies.size(),
      " frequencies: a 2D run takes exactly one (a CW steady state)");
  }
  const double f = r.frequencies[0];
  if (!(f > 0) || !std::isfinite(f))
  {
    vem::fail("HarmonicOptions::frequencies (DFTFrequencies) = ", f, " Hz: must be finite and > 0");
  }
  if (r.max_steps < 0)
  {
    vem::fail("HarmonicOptions::max_steps (MaxSteps) = ", r.max_steps, ": must be >= 0 (0 = automatic)");
  }
  r.run.options.waveform = vem::WaveformShape::sinusoid;
  r.run.options.frequency = f;
  r.run.options.probe_at_source = false;
  FDTDRun run;
  run.Start(self, lookup, input, r.run, warnings);
  vem::Fdtd2dEngine* engine = run.Engine2D();
  if (!engine)
  {
    vem::fail("internal: the 2D steady state got a 3D model");
  }
  warnings.push_back("2D run: SAR, the 1 g / 10 g averages, absorbed / accepted / radiated power "
                     "and the feed impedance are not computed in 2D (outputs 1-2 hold the "
                     "frequency, convergence and the far field per unit length)");
  SteadyState2DResult res;
  const vem::SteadyState2dResult ss =
    vem::run_steady_state_2d(*engine, f, r.tolerance, r.max_steps, r.progress);
  res.aborted = ss.aborted;
  if (ss.aborted)
  {
    return res;
  }
  res.steps = ss.steps;
  res.converged = ss.converged;
  res.relative_change = ss.relative_change;
  res.dt = run.Dt();
  res.backend = run.Backend();
  if (!ss.converged)
  {
    warnings.push_back("the 2D run stopped at " + std::to_string(ss.steps) +
      " steps before its phasors settled (relative change " + std::to_string(ss.relative_change) +
      "); raise MaxSteps or SteadyStateTolerance");
  }

  // Port 0: phasors at the cell centres.
  const RunGeometry& g = run.Geometry();
  const vem::VoxelDomain2D d2 = g.Domain2D();
  const vem::Polarization2D pol = engine->op().polarization();
  vtkSmartPointer<vtkImageData> img = vtkSmartPointer<vtkImageData>::New();
  SetOutputGeometry(img, g);
  vtkCellData* cd = img->GetCellData();
  const std::vector<std::complex<float>> e = vem::cell_centred_phasor_2d(ss.phasors, d2, pol, true);
  AddComplex(cd, "E_real", "E_imag", e);
  AddComplex(cd, "H_real", "H_imag", vem::cell_centred_phasor_2d(ss.phasors, d2, pol, false));
  vtkNew<vtkFloatArray> mag;
  mag->SetName("E_magnitude");
  mag->SetNumberOfTuples(static_cast<vtkIdType>(e.size() / 3));
  for (std::size_t o = 0; o < e.size() / 3; ++o)
  {
    mag->SetValue(static_cast<vtkIdType>(o),
      std::sqrt(std::norm(e[3 * o]) + std::norm(e[3 * o + 1]) + std::norm(e[3 * o + 2])));
  }
  cd->AddArray(mag);
  cd->SetActiveScalars("E_magnitude");
  for (const auto& m : run.Materials())
  {
    cd->AddArray(m);
  }
  vtkFieldData* fd = img->GetFieldData();
  const std::pair<const char*, double> values[5] = { { "frequency_Hz", f },
    { "steps", double(ss.steps) }, { "converged", ss.converged ? 1.0 : 0.0 },
    { "relative_change", ss.relative_change }, { "time_step_dt", res.dt } };
  vtkNew<vtkTable> summary;
  for (const auto& v : values)
  {
    vtkSmartPointer<vtkDoubleArray> a = Column(v.first);
    a->InsertNextValue(v.second);
    fd->AddArray(a);
    if (std::string(v.first) != "time_step_dt")
    {
      vtkSmartPointer<vtkDoubleArray> c = Column(v.first);
      c->InsertNextValue(v.second);
      summary->AddColumn(c);
    }
  }
  vtkNew<vtkStringArray> name;
  name->SetName("backend");
  name->InsertNextValue(res.backend);
  fd->AddArray(name);

  // Port 2: the far field through a contour 2 cells inside the CPML (in the scattered field).
  vtkNew<vtkTable> far;
  const vem::BoundarySpec2D b = d2.boundaries();
  vem::NearToFarContour2D contour;
  contour.lo = { b.cpml_cells(0) + 2, b.cpml_cells(2) + 2 };
  contour.hi = { d2.nx() - b.cpml_cells(1) - 2, d2.ny() - b.cpml_cells(3) - 2 };
  std::vector<double> phi;
  const double step = r.far_field_step_deg > 0 ? r.far_field_step_deg : 2.0;
  for (double deg = 0; deg < 360 - 1e-9; deg += step)
  {
    phi.push_back(deg * vem::kPi / 180.0);
  }
  const std::vector<std::complex<double>> F =
    vem::near_to_far_2d(engine->op(), contour, f, ss.phasors, phi);
  vtkSmartPointer<vtkDoubleArray> phiCol = Column("phi_deg");
  for (double p : phi)
  {
    phiCol->InsertNextValue(p * 180.0 / vem::kPi);
  }
  far->AddColumn(phiCol);
  if (r.run.options.illumination == vem::Illumination::plane_wave)
  {
    const double a = r.run.options.plane_wave.amplitude;
    const std::vector<double> sw = vem::scattering_width_2d(
      F, pol == vem::Polarization2D::tm ? a : a / vem::kEta0);
    vtkSmartPointer<vtkDoubleArray> m = Column("scattering_width_m"), db = Column("scattering_width_dBm");
    for (double v : sw)
    {
      m->InsertNextValue(v);
      db->InsertNextValue(10.0 * std::log10(std::max(v, 1e-300)));
    }
    far->AddColumn(m);
    far->AddColumn(db);
  }
  else
  {
    vtkSmartPointer<vtkDoubleArray> m = Column("far_field_magnitude");
    for (const auto& v : F)
    {
      m->InsertNextValue(std::abs(v));
    }
    far->AddColumn(m);
  }
  res.outputs.fields = img;
  res.outputs.summary = summary.GetPointer();
  res.outputs.far = far.GetPointer();
  return res;
}

} // namespace vem_vtk
