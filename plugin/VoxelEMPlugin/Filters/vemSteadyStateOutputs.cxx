#include "vemSteadyStateOutputs.h"

#include "vemVoxelModel.h"

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
#include "vem/core/field_sampling.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>

namespace vem_vtk
{

namespace
{
vtkSmartPointer<vtkDoubleArray> DoubleColumn(const char* name, int components = 1)
{
  vtkSmartPointer<vtkDoubleArray> a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  return a;
}
} // namespace

OutputWindow OutputWindow::Whole(const vem::VoxelDomain& d)
{
  OutputWindow w;
  w.grid = d.grid();
  w.first = { d.pml[0], d.pml[2], d.pml[4] };
  w.cells = d.n_out;
  return w;
}

OutputWindow OutputWindow::Piece(const vem::VoxelDomain& d, const std::array<int, 3>& pieceLo,
  const std::array<int, 3>& pieceCells)
{
  OutputWindow w;
  w.piece = true;
  w.grid = d.grid();
  w.grid.nx = pieceCells[0];
  w.grid.ny = pieceCells[1];
  w.grid.nz = pieceCells[2];
  const double h[3] = { w.grid.dx, w.grid.dy, w.grid.dz };
  for (int a = 0; a < 3; ++a)
  {
    w.grid.origin[a] += pieceLo[a] * h[a];
  }
  PieceOutputCells(d, pieceLo, pieceCells, w.out_lo, w.cells, w.first);
  return w;
}

SteadyStateOutputs MakeSteadyStateOutputs(const vem::HarmonicResult& res,
  const vem::HarmonicOptions& opt, const vem::VoxelDomain& p, const OutputWindow& window,
  float phasorSign, const std::vector<vtkSmartPointer<vtkDataArray>>& materials,
  double tissueFrequency)
{
  SteadyStateOutputs out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> suffix;
  for (double f : opt.frequencies)
  {
    suffix.push_back(opt.frequencies.size() > 1 ? "_" + vem::frequency_label(f) : std::string());
  }
  // Port 2: the phasors and SAR per frequency, then the materials.
  const vem::YeeGrid& grid = window.grid;
  const std::array<int, 3>& first = window.first;
  const std::array<int, 3>& nCells = window.cells;
  const long long nOut = static_cast<long long>(nCells[0]) * nCells[1] * nCells[2];
  const long long nTotal = grid.cell_count();
  auto crop = [&](const std::vector<float>& total, const std::string& name, bool root) {
    if (static_cast<long long>(total.size()) != nTotal)
    {
      vem::fail("the steady-state array '", name, "' has ", total.size(), " values for a grid of ",
        nTotal, " cells");
    }
    vtkSmartPointer<vtkFloatArray> a = vtkSmartPointer<vtkFloatArray>::New();
    a->SetName(name.c_str());
    a->SetNumberOfTuples(nOut);
    float* dst = a->GetPointer(0);
    long long o = 0;
    for (int K = 0; K < nCells[2]; ++K)
      for (int J = 0; J < nCells[1]; ++J)
        for (int I = 0; I < nCells[0]; ++I, ++o)
        {
          const float v = total[static_cast<std::size_t>((I + first[0]) +
            static_cast<long long>(grid.nx) * ((J + first[1]) + static_cast<long long>(grid.ny) * (K + first[2])))];
          dst[o] = root ? std::sqrt(std::max(0.0f, v)) : v;
        }
    return a;
  };
  auto world = [&](const std::array<int, 3>& v) {
    std::array<double, 3> x;
    for (int a = 0; a < 3; ++a)
    {
      x[a] = v[a] < 0 ? nan : p.origin_total[a] + (v[a] + 0.5) * p.spacing[a];
    }
    return x;
  };
  vtkNew<vtkImageData> img;
  img->SetExtent(window.out_lo[0], window.out_lo[0] + nCells[0], window.out_lo[1],
    window.out_lo[1] + nCells[1], window.out_lo[2], window.out_lo[2] + nCells[2]);
  img->SetSpacing(p.spacing.data());
  img->SetOrigin(p.origin_out.data());
  vtkCellData* cd = img->GetCellData();

  // Per-frequency values for the field data and the summary table.
  struct Row
  {
    double f, wbsar, peak, ps1, ps10, absorbed, accepted, radiated, zr, zi, csca;
    std::array<double, 3> loc1, loc10;
  };
  std::vector<Row> rows;
  for (std::size_t q = 0; q < res.frequencies.size(); ++q)
  {
    const vem::HarmonicFrequencyResult& fr = res.frequencies[q];
    const std::string& sfx = suffix[q];
    // E phasors at the cell centres.
    const std::vector<std::complex<float>>* comps[3] = { &fr.ex, &fr.ey, &fr.ez };
    vtkNew<vtkFloatArray> re, im;
    re->SetName(("E_real" + sfx).c_str());
    im->SetName(("E_imag" + sfx).c_str());
    for (vtkFloatArray* a : { re.GetPointer(), im.GetPointer() })
    {
      a->SetNumberOfComponents(3);
      a->SetNumberOfTuples(nOut);
    }
    std::vector<float> part;
    for (int c = 0; c < 3; ++c)
    {
      const std::vector<std::complex<float>>& v = *comps[c];
      for (int ri = 0; ri < 2; ++ri)
      {
        part.resize(v.size());
        for (std::size_t s = 0; s < v.size(); ++s)
        {
          part[s] = phasorSign * (ri == 0 ? v[s].real() : v[s].imag());
        }
        vem::cell_centred(grid, part, static_cast<vem::Component>(c), first, nCells,
          (ri == 0 ? re : im)->GetPointer(0), 3, c);
      }
    }
    cd->AddArray(re);
    cd->AddArray(im);
    cd->AddArray(crop(fr.e_squared, "E_magnitude" + sfx, true));
    if (fr.has_sar)
    {
      cd->AddArray(crop(fr.local_sar, "SAR" + sfx, false));
      if (!fr.sar_1g.sar.empty() && !fr.sar_10g.sar.empty())  // skipped for non-cubic voxels
      {
        cd->AddArray(crop(fr.sar_1g.sar, "SAR_1g" + sfx, false));
        cd->AddArray(crop(fr.sar_10g.sar, "SAR_10g" + sfx, false));
      }
    }
    Row r;
    r.f = fr.frequency;
    const bool sar = fr.has_sar;
    const bool avg = sar && opt.averaged_sar && !fr.sar_1g.sar.empty();
    r.wbsar = sar ? fr.whole_body_sar : nan;
    r.peak = sar ? fr.peak_local_sar : nan;
    r.absorbed = sar ? fr.absorbed_power : nan;
    const vem::AveragedSar* av[2] = { &fr.sar_1g, &fr.sar_10g };
    double* ps[2] = { &r.ps1, &r.ps10 };
    std::array<double, 3>* loc[2] = { &r.loc1, &r.loc10 };
    for (int m = 0; m < 2; ++m)
    {
      const bool valid = avg && av[m]->valid > 0;
      *ps[m] = valid ? av[m]->peak : nan;
      *loc[m] = valid ? world(av[m]->peak_voxel) : std::array<double, 3>{ nan, nan, nan };
      if (avg && !valid)
      {
        std::ostringstream w;
        w << "no valid " << (m == 0 ? "1 g" : "10 g") << " averaging cube at " << fr.frequency
          << " Hz (too little tissue, or more than 10 % air in every cube); its peak spatial-average "
          << "SAR is NaN.";
        out.warnings.push_back(w.str());
      }
    }
    const bool dipole = opt.source == vem::HarmonicSource::dipole;
    r.accepted = dipole ? fr.accepted_power : nan;
    r.radiated = fr.has_far_field ? fr.radiated_power : nan;
    r.zr = dipole ? fr.feed_impedance.real() : nan;
    r.zi = dipole ? fr.feed_impedance.imag() : nan;
    r.csca = !dipole && fr.has_far_field ? fr.scattering_cross_section : nan;
    rows.push_back(r);
  }
  for (const auto& m : materials)
  {
    cd->AddArray(m);
  }
  const std::string active = (cd->GetArray(("SAR" + suffix[0]).c_str()) ? "SAR" : "E_magnitude") + suffix[0];
  cd->SetActiveScalars(active.c_str());

  // Field data: one tuple per frequency, and the run's scalars.
  vtkFieldData* fd = img->GetFieldData();
  struct Col
  {
    const char* field;    // field-data name
    const char* column;   // summary column ("" = field data only)
    double Row::*value;
  };
  const Col cols[] = {
    { "frequency_Hz", "frequency_Hz", &Row::f },
    { "whole_body_SAR_W_per_kg", "whole_body_SAR_W_per_kg", &Row::wbsar },
    { "peak_local_SAR_W_per_kg", "peak_local_SAR_W_per_kg", &Row::peak },
    { "psSAR1g_W_per_kg", "psSAR1g_W_per_kg", &Row::ps1 },
    { "psSAR10g_W_per_kg", "psSAR10g_W_per_kg", &Row::ps10 },
    { "absorbed_power_W", "absorbed_power_W", &Row::absorbed },
    { "accepted_power_W", "accepted_power_W", &Row::accepted },
    { "radiated_power_W", "radiated_power_W", &Row::radiated },
    { "scattering_cross_section_m2", "scattering_cross_section_m2", &Row::csca },
  };
  for (const Col& c : cols)
  {
    auto a = DoubleColumn(c.field);
    for (const Row& r : rows)
    {
      a->InsertNextValue(r.*(c.value));
    }
    fd->AddArray(a);
  }
  {
    auto l1 = DoubleColumn("psSAR1g_location_m", 3), l10 = DoubleColumn("psSAR10g_location_m", 3),
         z = DoubleColumn("feed_impedance_ohm", 2);
    for (const Row& r : rows)
    {
      l1->InsertNextTuple(r.loc1.data());
      l10->InsertNextTuple(r.loc10.data());
      const double zz[2] = { r.zr, r.zi };
      z->InsertNextTuple(zz);
    }
    fd->AddArray(l1);
    fd->AddArray(l10);
    fd->AddArray(z);
  }
  auto addScalar = [&](const char* name, double v) {
    auto a = DoubleColumn(name);
    a->InsertNextValue(v);
    fd->AddArray(a);
  };
  auto addInt = [&](const char* name, int v) {
    vtkNew<vtkIntArray> a;
    a->SetName(name);
    a->InsertNextValue(v);
    fd->AddArray(a);
  };
  addInt("steps", res.steps);
  addInt("converged", res.converged ? 1 : 0);
  addScalar("relative_change", res.last_relative_change);
  addScalar("time_step_dt", res.dt);
  addScalar("simulated_time", res.simulated_time);
  addInt("dft_sample_interval", res.dft_sample_interval);
  addScalar("tissue_frequency_Hz", tissueFrequency);
  {
    vtkNew<vtkStringArray> a;
    a->SetName("backend");
    a->InsertNextValue(res.backend);
    fd->AddArray(a);
  }

  // Port 3: the summary table (the same values, one row per frequency).
  vtkNew<vtkTable> summary;
  {
    auto add = [&](const char* name, auto get) {
      auto a = DoubleColumn(name);
      for (const Row& r : rows)
      {
        a->InsertNextValue(get(r));
      }
      summary->AddColumn(a);
    };
    add("frequency_Hz", [](const Row& r) { return r.f; });
    add("whole_body_SAR_W_per_kg", [](const Row& r) { return r.wbsar; });
    add("peak_local_SAR_W_per_kg", [](const Row& r) { return r.peak; });
    add("psSAR1g_W_per_kg", [](const Row& r) { return r.ps1; });
    add("psSAR1g_x_m", [](const Row& r) { return r.loc1[0]; });
    add("psSAR1g_y_m", [](const Row& r) { return r.loc1[1]; });
    add("psSAR1g_z_m", [](const Row& r) { return r.loc1[2]; });
    add("psSAR10g_W_per_kg", [](const Row& r) { return r.ps10; });
    add("psSAR10g_x_m", [](const Row& r) { return r.loc10[0]; });
    add("psSAR10g_y_m", [](const Row& r) { return r.loc10[1]; });
    add("psSAR10g_z_m", [](const Row& r) { return r.loc10[2]; });
    add("absorbed_power_W", [](const Row& r) { return r.absorbed; });
    add("accepted_power_W", [](const Row& r) { return r.accepted; });
    add("radiated_power_W", [](const Row& r) { return r.radiated; });
    add("feed_impedance_real_ohm", [](const Row& r) { return r.zr; });
    add("feed_impedance_imag_ohm", [](const Row& r) { return r.zi; });
    add("scattering_cross_section_m2", [](const Row& r) { return r.csca; });
    vtkNew<vtkIntArray> steps, conv;
    steps->SetName("steps");
    conv->SetName("converged");
    for (std::size_t q = 0; q < rows.size(); ++q)
    {
      steps->InsertNextValue(res.steps);
      conv->InsertNextValue(res.converged ? 1 : 0);
    }
    summary->AddColumn(steps);
    summary->AddColumn(conv);
  }

  // Port 4: the far field.
  vtkNew<vtkTable> far;
  {
    const bool dipole = opt.source == vem::HarmonicSource::dipole;
    const char* names[5] = { "theta_deg", dipole ? "gain_E_plane_dBi" : "rcs_E_plane_dBsm",
      dipole ? "gain_H_plane_dBi" : "rcs_H_plane_dBsm", dipole ? "gain_E_plane" : "rcs_E_plane_m2",
      dipole ? "gain_H_plane" : "rcs_H_plane_m2" };
    auto fcol = DoubleColumn("frequency_Hz");
    vtkSmartPointer<vtkDoubleArray> c[5];
    for (int k = 0; k < 5; ++k)
    {
      c[k] = DoubleColumn(names[k]);
    }
    bool missing = false;
    for (const vem::HarmonicFrequencyResult& fr : res.frequencies)
    {
      if (!fr.has_far_field)
      {
        missing = true;
        continue;
      }
      for (const vem::FarFieldRow& r : fr.far_field)
      {
        fcol->InsertNextValue(fr.frequency);
        c[0]->InsertNextValue(r.theta_deg);
        c[1]->InsertNextValue(10.0 * std::log10(std::max(r.e_plane, 1e-300)));
        c[2]->InsertNextValue(10.0 * std::log10(std::max(r.h_plane, 1e-300)));
        c[3]->InsertNextValue(r.e_plane);
        c[4]->InsertNextValue(r.h_plane);
      }
    }
    if (missing)
    {
      out.warnings.push_back(std::string("the steady-state run computed no far field (no room for ") +
        "the near-to-far-field box between the model and the " + (dipole ? "CPML" : "total-field box") +
        "; increase AirPadding); the far-field table stays empty.");
    }
    else
    {
      if (opt.frequencies.size() > 1)
      {
        far->AddColumn(fcol);
      }
      for (int k = 0; k < 5; ++k)
      {
        far->AddColumn(c[k]);
      }
    }
  }

  out.fields = img.GetPointer();
  out.summary = summary.GetPointer();
  out.far = far.GetPointer();
  return out;
}

} // namespace vem_vtk
