#include "vemFDFDOutputs.h"

#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkImageData.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkTable.h"

#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/sar.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>

namespace vem_vtk
{

vtkSmartPointer<vtkFloatArray> OutputGridArray(
  const vem::FdfdVoxelDomain& d, const char* name, const std::vector<float>& total)
{
  auto a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(d.out_cells());
  float* dst = a->GetPointer(0);
  long long o = 0;
  for (int K = 0; K < d.n_out[2]; ++K)
    for (int J = 0; J < d.n_out[1]; ++J)
      for (int I = 0; I < d.n_out[0]; ++I, ++o)
        dst[o] = total[static_cast<std::size_t>(d.out_to_total(I, J, K))];
  return a;
}

void FillFDFDFieldImage(vtkImageData* output, const vem::FdfdVoxelDomain& d,
  const vem::FdfdOperator& op, const vem::FdfdFields& f, const std::vector<float>& density,
  const std::vector<vtkSmartPointer<vtkFloatArray>>& materials)
{
  const std::array<int, 3> n = d.n_total;
  const long long N = d.total_cells();
  auto sampleAt = [&](const std::vector<vem::cdouble>& v, int a, int i, int j, int k) {
    if (i >= n[0] || j >= n[1] || k >= n[2])
    {
      return vem::cdouble(0.0);
    }
    return v[static_cast<std::size_t>(a * N + i + n[0] * (j + static_cast<long long>(n[1]) * k))];
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
  const long long nOut = d.out_cells();
  auto make3 = [&](const char* name) {
    auto a = vtkSmartPointer<vtkFloatArray>::New();
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
  const bool haveSar = !density.empty();
  // Absorbed power density from each E sample's own conductivity (sar.h): at tissue/air faces the
  // cell-centred |E|^2 would mix in the air side's normal field (|eps| times larger).
  const std::vector<float> powerDensity =
    haveSar ? vem::fdfd_absorbed_power_density(op, f.e_total, density) : std::vector<float>();
  vtkNew<vtkFloatArray> sar;
  sar->SetName("SAR");
  sar->SetNumberOfTuples(haveSar ? nOut : 0);
  long long o = 0;
  for (int K = 0; K < d.n_out[2]; ++K)
    for (int J = 0; J < d.n_out[1]; ++J)
      for (int I = 0; I < d.n_out[0]; ++I, ++o)
      {
        const int i = I + d.pml_cells(), j = J + d.pml_cells(), k = K + d.pml_cells();
        double e2 = 0;
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
          const std::size_t t = static_cast<std::size_t>(d.out_to_total(I, J, K));
          const float rho = density[t];
          sar->SetValue(o, vem::is_tissue_density(rho) ? powerDensity[t] / rho : 0.0f);
        }
      }
  output->SetExtent(0, d.n_out[0], 0, d.n_out[1], 0, d.n_out[2]);
  output->SetSpacing(d.spacing.data());
  output->SetOrigin(d.origin_out.data());
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
  for (const auto& a : materials)
  {
    cd->AddArray(a);
  }
  cd->SetActiveScalars("E_magnitude");
}

void FillFDFDResidualTable(vtkTable* table, const vem::FdfdSolveStats& st)
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
  table->Initialize();
  table->AddColumn(it);
  table->AddColumn(rel);
  table->AddColumn(tru);
}

void FillFDFDRCSTable(vtkTable* table, const vem::FdfdVoxelDomain& d, const vem::FdfdProblem& p,
  const vem::FdfdFields& f, double stepDeg)
{
  table->Initialize();
  vtkNew<vtkDoubleArray> th, eDb, hDb, eM2, hM2;
  th->SetName("theta_deg");
  eDb->SetName("rcs_E_plane_dBsm");
  hDb->SetName("rcs_H_plane_dBsm");
  eM2->SetName("rcs_E_plane_m2");
  hM2->SetName("rcs_H_plane_m2");
  if (d.has_ntff_room())
  {
    const vem::NearToFarTransform nf(
      p.grid, p.frequency, f.e_scat, f.h_scat, d.ntff_box(), vem::phase_origin(p));
    const std::array<double, 3> k = p.incident.direction();
    const std::array<double, 3> e0 = p.incident.e_polarization();
    const std::array<double, 3> h0 = p.incident.h_polarization();
    const double deg = vem::kPi / 180.0;
    const int steps = std::max(1, static_cast<int>(std::lround(180.0 / stepDeg)));
    for (int s = 0; s <= steps; ++s)
    {
      const double tdeg = 180.0 * s / steps;
      const double t = tdeg * deg;
      double sig[2];
      for (int plane = 0; plane < 2; ++plane)
      {
        const std::array<double, 3>& u = plane == 0 ? e0 : h0;
        std::array<double, 3> dir;
        for (int a = 0; a < 3; ++a)
        {
          dir[a] = std::cos(t) * k[a] + std::sin(t) * u[a];
        }
        // Spherical angles of the unit direction.
        const double theta = std::acos(std::max(-1.0, std::min(1.0, dir[2])));
        const double phi = std::atan2(dir[1], dir[0]);
        sig[plane] = nf.rcs(theta, phi, 1.0);
      }
      th->InsertNextValue(tdeg);
      eM2->InsertNextValue(sig[0]);
      hM2->InsertNextValue(sig[1]);
      eDb->InsertNextValue(10.0 * std::log10(std::max(sig[0], 1e-300)));
      hDb->InsertNextValue(10.0 * std::log10(std::max(sig[1], 1e-300)));
    }
  }
  table->AddColumn(th);
  table->AddColumn(eDb);
  table->AddColumn(hDb);
  table->AddColumn(eM2);
  table->AddColumn(hM2);
}

} // namespace vem_vtk
