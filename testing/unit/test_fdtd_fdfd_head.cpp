// FDTD against FDFD on the procedural head phantom (issue #5): the same voxel head, the same
// plane wave, solved in the time domain to steady state (vem::run_fdtd_harmonic, CW) and in the
// frequency domain (vem::solve_fdfd, COCG, complex128, relative residual 1e-6); compared inside
// the head by |E| and by SAR.
//
// Problem (both solvers, one grid): head_phantom.h at scale 1 in cubic voxels (SAR averaging needs
// cubic voxels; the FDFD benchmark's head case has 2.2 x 2.2 x 2.8 mm cells, so the in-plane 2.2 mm
// is used on every axis), cut below at z = -95 mm (the lower edge of the phantom's default image;
// everything below is air, so the head floats and lies wholly inside the TF/SF box), tissues of
// head_phantom_tissue_table() at 900 MHz (Gabriel 1996), air and sinus air as vacuum with density
// 0. Staircase materials in both solvers (FDTD indexed mode; FDFD average_at_edges = false), so the
// two discretize the same Yee grid identically. Incident wave: unit amplitude, travelling +x
// (theta = 90 deg, phi = 0), polarized along theta_hat = -z: the FDFD benchmark's head case,
// hitting the head on its (-x) side. (bench_fdfd's head case itself is a synthetic 16-material
// ellipsoid in 2.2 x 2.2 x 2.8 mm cells; its size, frequency and incidence are what is reused here,
// with the phantom's real tissues instead.) The two solvers' phase references differ (FDFD: the grid
// centre; FDTD: the TF/SF source's origin), so only magnitudes are compared.
// Domain: the head's bounding box (170 x 206 x 176 mm) plus, on every face, an air gap, the 5 cells
// between run_fdtd_harmonic's TF/SF box and the PML (its default margin; the FDFD grid has the
// same cells there), and a 10-cell PML: FDTD CPML (boundary.h defaults), FDFD SC-PML
// (fdfd_problem.h defaults, R0 1e-8, order 3). Same grid, same cells, same PML thickness.
//   full size (CUDA only):  2.2 mm, gap 10 cells: 128 x 144 x 130 cells (2.40 M, 7.2 M FDFD
//                           unknowns; the FDFD benchmark's head case has 2.38 M cells),
//                           269,490 tissue voxels.
//   coarse (CPU, in CI):    6.6 mm (3 x), gap 3 cells: 62 x 68 x 63 cells (0.27 M), 10,096 tissue
//                           voxels. Shells are at least one voxel thick (head_phantom_fill's
//                           min_layer), so the coarse head is a cruder head: the comparison is
//                           solver against solver on one grid, which is what this test is about.
// Compared over tissue voxels (density > 0): |E| at cell centres (sqrt of sar.h
// cell_centre_e_squared; for FDFD of fdfd_fields' total E mapped to the compact layout) as the
// relative L2 difference ||E_fdtd| - |E_fdfd|| / ||E_fdfd||; whole-head SAR, psSAR1g and psSAR10g
// from sigma |E|^2 / 2 at cell centres, and again from the edge-based absorbed power
// (cell_absorbed_power_density, what run_fdtd_harmonic reports; its own psSAR10g must equal ours
// from its phasors). IEC 62704-1 averaging on the CPU for both, so only the fields differ.
//
// Steady state: tolerance 1e-3 (relative change of the phasors over 2-period windows). Measured on
// the coarse head: 1e-3 stops after 900 steps (10 periods) with |E| difference 6.58e-4; 1e-4 after
// 1080 steps with 6.47e-4: the remaining difference is not the transient (it is the solvers'
// different time discretization: (w dt)^2 / 8 = 6e-4 at 6.6 mm), so 1e-3 suffices. Full size:
// 2720 steps (10 periods) to 6.1e-4.
// Measured (FDTD vs FDFD; relative differences):
//                    |E| L2     whole-head   psSAR1g    psSAR10g   edge psSAR10g
//   coarse, CPU      6.6e-4     +0.10 %      +0.08 %    +0.08 %    +0.19 %
//   full, H100       1.6e-4     +0.010 %     -0.018 %   +0.013 %   +0.021 %
// (testing/benchmarks/results/gpu_tests_issue5.md). Cost: coarse 900 FDTD steps (3-6 s) + 3084
// COCG iterations (34-60 s, one thread, CPU) = 40-70 s on the 2-core development machine depending
// on its load (39 s of CPU time); full on the H100 alone: FDTD 2720 steps 2.7 s, COCG 11,602
// iterations 20.7 s, 31 s in all (50 s when sharing the GPU with other tests).
// Tolerances: coarse: |E| 1 %, whole-head / psSAR1g / psSAR10g (both SAR forms) 2 %; full: |E| 1 %,
// whole-head and psSAR1g 2 %, psSAR10g 5 % (the criterion; measured 0.013 %).
// Every figure is printed and recorded with RecordProperty (device_check.sh merges them into the
// JUnit XML).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <iostream>
#include <sstream>

#include "test_support.h"
#include "threads_util.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/models/head_phantom.h"
#include "vem/fdtd/extensions/sar.h"

using namespace vem;

namespace {

constexpr double kFrequency = 900e6;
constexpr int kPml = 10, kTfsfMargin = 5;  // run_fdtd_harmonic's default TF/SF margin
// Bounding box of the head's tissue at scale 1 (measured on a 2 mm raster, 1 mm added), with the
// cut at z = -95 mm.
constexpr double kHeadLo[3] = {-0.085, -0.097, -0.095};
constexpr double kHeadHi[3] = {0.085, 0.109, 0.081};

// Steady-state tolerance of the FDTD run and the tolerances (relative) of the comparison.
constexpr double kCoarseSteadyState = 1e-3, kFullSteadyState = 1e-3;
constexpr double kCoarseE = 0.01, kCoarseWb = 0.02, kCoarse1g = 0.02, kCoarse10g = 0.02;
constexpr double kFullE = 0.01, kFullWb = 0.02, kFull1g = 0.02, kFull10g = 0.05;
constexpr double kEdge10g = 0.02;  // psSAR10g from the edge-based absorbed power, both sizes

struct HeadCase {
  YeeGrid grid;
  std::vector<Material> materials;
  std::vector<std::uint16_t> label;
  std::vector<float> sigma, density;  // per cell
  std::int64_t tissue_voxels = 0;
};

HeadCase make_head(double d, int gap) {
  HeadCase h;
  const int border = kPml + kTfsfMargin + gap;
  int n[3], inner[3];
  for (int a = 0; a < 3; ++a) {
    inner[a] = int(std::ceil((kHeadHi[a] - kHeadLo[a]) / d));
    n[a] = inner[a] + 2 * border;
  }
  h.grid = {n[0], n[1], n[2], d, d, d};
  for (int a = 0; a < 3; ++a)
    h.grid.origin[a] = 0.5 * (kHeadLo[a] + kHeadHi[a]) - 0.5 * inner[a] * d - border * d;
  const std::size_t cells = std::size_t(h.grid.cell_count());
  std::vector<std::uint8_t> lab(cells);
  const int ext[6] = {0, n[0] - 1, 0, n[1] - 1, 0, n[2] - 1};
  head_phantom_fill(HeadPhantomGeometry{}, h.grid.origin, {d, d, d}, ext, lab.data());
  const TissueTable table = head_phantom_tissue_table();
  std::vector<std::int64_t> labels;
  for (int l = 0; l < kHeadTissueCount; ++l) labels.push_back(l);
  const LabelProperties props = table.lookup(labels, kFrequency);
  for (int l = 0; l < kHeadTissueCount; ++l) {
    const bool air = l == kAir || l == kSinusAir;
    h.materials.push_back(air ? Material::vacuum()
                              : Material::isotropic(head_tissue_name(l), props.dielectric[l].eps_r,
                                                    props.dielectric[l].sigma));
  }
  h.label.resize(cells);
  h.sigma.resize(cells);
  h.density.resize(cells);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::size_t q = i + std::size_t(n[0]) * (j + std::size_t(n[1]) * k);
        const bool in_box = i >= border && i < n[0] - border && j >= border && j < n[1] - border &&
                            k >= border && k < n[2] - border;
        const int l = in_box ? lab[q] : int(kAir);  // the cut below the neck
        h.label[q] = std::uint16_t(l);
        const bool air = l == kAir || l == kSinusAir;
        h.sigma[q] = float(h.materials[l].sigma_e[0]);
        h.density[q] = air ? 0.0f : float(props.density[l]);
        h.tissue_voxels += air ? 0 : 1;
      }
  return h;
}

struct Figures {
  double e_rel_l2 = 0, e_rel_max = 0;
  double wb[2] = {0, 0}, ps1[2] = {0, 0}, ps10[2] = {0, 0};  // [fdtd, fdfd]
  double fdtd_seconds = 0, fdfd_seconds = 0, fdtd_change = 0, fdfd_residual = 0;
  int fdtd_steps = 0, fdfd_iterations = 0;
  bool fdtd_converged = false, fdfd_converged = false;
  std::string fdtd_backend, fdfd_backend;
  // SAR from the edge-based absorbed power (sar.h cell_absorbed_power_density, what
  // run_fdtd_harmonic reports) for both fields, and run_fdtd_harmonic's own figures.
  double wb_edge[2] = {0, 0}, ps1_edge[2] = {0, 0}, ps10_edge[2] = {0, 0};
  double own_wb = 0, own_ps1 = 0, own_ps10 = 0;
};

double rel(double a, double b) { return (a - b) / b; }

Figures compare(const HeadCase& h, Backend backend, double steady_tol) {
  Figures r;
  const YeeGrid& g = h.grid;
  const std::int64_t N = g.cell_count();

  // FDTD: CW plane wave to steady state.
  FdtdSetup s;
  s.grid = g;
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, kPml);
  s.materials = h.materials;
  s.material_index = h.label;
  HarmonicOptions o;
  o.source = HarmonicSource::plane_wave;
  o.plane_wave.theta = 0.5 * kPi;
  o.plane_wave.phi = 0.0;
  o.plane_wave.psi = 0.0;
  o.plane_wave.amplitude = 1.0;
  o.plane_wave.tfsf_margin = kTfsfMargin;
  o.frequencies = {kFrequency};
  o.steady_state_tolerance = steady_tol;
  o.density = h.density;
  o.averaged_sar = true;
  o.far_field = false;
  o.backend = backend;
  const HarmonicResult fd = run_fdtd_harmonic(s, o);
  EXPECT_FALSE(fd.aborted);
  EXPECT_EQ(fd.frequencies.size(), 1u);
  r.fdtd_steps = fd.steps;
  r.fdtd_seconds = fd.seconds;
  r.fdtd_change = fd.last_relative_change;
  r.fdtd_converged = fd.converged;
  r.fdtd_backend = fd.backend;
  std::cout << "  FDTD (" << fd.backend << "): " << fd.steps << " steps, " << fd.seconds << " s, "
            << fd.mcells_per_second << " Mcells/s, DFT interval " << fd.dft_sample_interval
            << ", last relative change " << fd.last_relative_change
            << (fd.converged ? " (converged)" : " (NOT converged)") << ", TF/SF box " << fd.tfsf_lo[0] << ".."
            << fd.tfsf_hi[0] << (fd.warning.empty() ? "" : ", warning: " + fd.warning) << "\n";
  const HarmonicFrequencyResult& ff = fd.frequencies.at(0);
  if (ff.has_sar) {
    r.own_wb = ff.whole_body_sar;
    r.own_ps1 = ff.sar_1g.peak;
    r.own_ps10 = ff.sar_10g.peak;
  }

  // FDFD: scattered-field COCG.
  FdfdProblem p;
  p.grid = g;
  p.frequency = kFrequency;
  p.pml = FdfdPml::uniform(kPml);
  p.incident.theta = 0.5 * kPi;
  p.incident.phi = 0.0;
  p.incident.polarization = 0.0;
  p.materials = h.materials;
  p.material_index = h.label;
  p.average_at_edges = false;
  const FdfdOperator op(p);
  FdfdSolverOptions so;
  so.backend = backend;
  so.method = FdfdMethod::cocg;
  so.precision = FdfdPrecision::complex128;
  so.tolerance = 1e-6;
  so.max_iterations = 20000;
  so.keep_history = false;
  const FdfdSolution sol = solve_fdfd(op, so);
  r.fdfd_iterations = sol.stats.iterations;
  r.fdfd_seconds = sol.stats.solve_seconds;
  r.fdfd_residual = sol.stats.true_relative_residual;
  r.fdfd_converged = sol.stats.status == FdfdStatus::converged;
  r.fdfd_backend = sol.stats.backend;
  std::cout << "  FDFD (" << sol.stats.backend << "): COCG " << sol.stats.iterations << " iterations, "
            << sol.stats.solve_seconds << " s, true relative residual " << sol.stats.true_relative_residual
            << " (" << fdfd_name(sol.stats.status) << ")\n";
  const FdfdFields fields = fdfd_fields(op, sol.e_scat);
  const std::size_t np = std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  std::vector<std::complex<float>> ec[3];
  for (int c = 0; c < 3; ++c) {
    ec[c].assign(np, {0.0f, 0.0f});
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i)
          ec[c][i + std::size_t(g.nx + 1) * (j + std::size_t(g.ny + 1) * k)] =
              std::complex<float>(fields.e_total[c * N + i + std::int64_t(g.nx) * (j + std::int64_t(g.ny) * k)]);
  }
  const std::vector<float> e2_fdfd = cell_centre_e_squared(g, ec[0], ec[1], ec[2]);
  const std::vector<float>& e2_fdtd = ff.e_squared;
  EXPECT_EQ(e2_fdtd.size(), std::size_t(N));

  // |E| in tissue.
  double num = 0, den = 0;
  for (std::int64_t q = 0; q < N; ++q) {
    if (h.density[q] <= 0) continue;
    const double a = std::sqrt(double(e2_fdtd[q])), b = std::sqrt(double(e2_fdfd[q]));
    num += (a - b) * (a - b);
    den += b * b;
    r.e_rel_max = std::max(r.e_rel_max, std::fabs(a - b));
  }
  r.e_rel_l2 = std::sqrt(num / den);
  r.e_rel_max /= std::sqrt(den / double(h.tissue_voxels));  // max |difference| over the RMS |E|

  // SAR from both fields with one SarInput (CPU averaging for both).
  SarInput in;
  in.grid = g;
  in.sigma = h.sigma;
  in.density = h.density;
  const std::vector<float>* e2[2] = {&e2_fdtd, &e2_fdfd};
  for (int w = 0; w < 2; ++w) {
    in.e_squared = *e2[w];
    r.wb[w] = whole_body_sar(in);
    r.ps1[w] = spatial_average_sar(in, 1e-3, Backend::cpu).peak;
    r.ps10[w] = spatial_average_sar(in, 1e-2, Backend::cpu).peak;
  }
  // Edge-based absorbed power: every E sample (i,j,k) has the conductivity of cell (i,j,k)
  // (yee_grid.h staircase; samples on the outer node planes are far from the head: 0).
  std::array<std::vector<float>, 3> edge_sigma;
  for (int c = 0; c < 3; ++c) {
    edge_sigma[c].assign(np, 0.0f);
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i)
          edge_sigma[c][i + std::size_t(g.nx + 1) * (j + std::size_t(g.ny + 1) * k)] =
              h.sigma[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)];
  }
  const std::vector<std::complex<float>>* fe[2][3] = {{&ff.ex, &ff.ey, &ff.ez}, {&ec[0], &ec[1], &ec[2]}};
  SarInput pin;
  pin.grid = g;
  pin.density = h.density;
  for (int w = 0; w < 2; ++w) {
    pin.power_density = cell_absorbed_power_density(g, *fe[w][0], *fe[w][1], *fe[w][2], edge_sigma, h.density);
    r.wb_edge[w] = whole_body_sar(pin);
    r.ps1_edge[w] = spatial_average_sar(pin, 1e-3, Backend::cpu).peak;
    r.ps10_edge[w] = spatial_average_sar(pin, 1e-2, Backend::cpu).peak;
  }
  std::cout << "  tissue voxels " << h.tissue_voxels << ": |E| relative L2 difference " << r.e_rel_l2
            << ", largest |difference| " << r.e_rel_max << " x RMS |E|\n"
            << "  whole-head SAR  FDTD " << r.wb[0] << " FDFD " << r.wb[1] << " W/kg (" << 100 * rel(r.wb[0], r.wb[1]) << " %)\n"
            << "  psSAR1g         FDTD " << r.ps1[0] << " FDFD " << r.ps1[1] << " W/kg (" << 100 * rel(r.ps1[0], r.ps1[1]) << " %)\n"
            << "  psSAR10g        FDTD " << r.ps10[0] << " FDFD " << r.ps10[1] << " W/kg (" << 100 * rel(r.ps10[0], r.ps10[1]) << " %)\n"
            << "  edge-based absorbed power (run_fdtd_harmonic's SAR): whole-head FDTD " << r.wb_edge[0]
            << " FDFD " << r.wb_edge[1] << " (" << 100 * rel(r.wb_edge[0], r.wb_edge[1]) << " %), psSAR1g FDTD "
            << r.ps1_edge[0] << " FDFD " << r.ps1_edge[1] << " (" << 100 * rel(r.ps1_edge[0], r.ps1_edge[1])
            << " %), psSAR10g FDTD " << r.ps10_edge[0] << " FDFD " << r.ps10_edge[1] << " ("
            << 100 * rel(r.ps10_edge[0], r.ps10_edge[1]) << " %)\n"
            << "  run_fdtd_harmonic's own: whole-head " << r.own_wb << ", psSAR1g " << r.own_ps1 << ", psSAR10g "
            << r.own_ps10 << " W/kg\n";
  return r;
}

void record(const Figures& r) {
  auto str = [](double v) {
    std::ostringstream os;
    os.precision(6);
    os << v;
    return os.str();
  };
  testing::Test::RecordProperty("e_rel_l2", str(r.e_rel_l2));
  testing::Test::RecordProperty("e_max_diff_over_rms", str(r.e_rel_max));
  testing::Test::RecordProperty("wb_sar_fdtd", str(r.wb[0]));
  testing::Test::RecordProperty("wb_sar_fdfd", str(r.wb[1]));
  testing::Test::RecordProperty("pssar1g_fdtd", str(r.ps1[0]));
  testing::Test::RecordProperty("pssar1g_fdfd", str(r.ps1[1]));
  testing::Test::RecordProperty("pssar10g_fdtd", str(r.ps10[0]));
  testing::Test::RecordProperty("pssar10g_fdfd", str(r.ps10[1]));
  testing::Test::RecordProperty("pssar10g_rel_diff", str(rel(r.ps10[0], r.ps10[1])));
  testing::Test::RecordProperty("edge_wb_sar_fdtd", str(r.wb_edge[0]));
  testing::Test::RecordProperty("edge_wb_sar_fdfd", str(r.wb_edge[1]));
  testing::Test::RecordProperty("edge_pssar1g_fdtd", str(r.ps1_edge[0]));
  testing::Test::RecordProperty("edge_pssar1g_fdfd", str(r.ps1_edge[1]));
  testing::Test::RecordProperty("edge_pssar10g_fdtd", str(r.ps10_edge[0]));
  testing::Test::RecordProperty("edge_pssar10g_fdfd", str(r.ps10_edge[1]));
  testing::Test::RecordProperty("harmonic_pssar10g", str(r.own_ps10));
  testing::Test::RecordProperty("fdtd_steps", r.fdtd_steps);
  testing::Test::RecordProperty("fdtd_seconds", str(r.fdtd_seconds));
  testing::Test::RecordProperty("fdtd_last_change", str(r.fdtd_change));
  testing::Test::RecordProperty("fdfd_iterations", r.fdfd_iterations);
  testing::Test::RecordProperty("fdfd_seconds", str(r.fdfd_seconds));
  testing::Test::RecordProperty("fdfd_true_residual", str(r.fdfd_residual));
  testing::Test::RecordProperty("fdtd_backend", r.fdtd_backend);
  testing::Test::RecordProperty("fdfd_backend", r.fdfd_backend);
}

struct Tolerances {
  double e, wb, ps1, ps10;
};

// Solves the head on `backend` by both solvers, records the figures, and checks them.
void run_and_check(const HeadCase& h, Backend backend, double steady_state, const Tolerances& tol,
                   const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  std::cout << "  " << what << ": " << h.grid.nx << " x " << h.grid.ny << " x " << h.grid.nz << " cells of "
            << h.grid.dx * 1e3 << " mm, " << h.tissue_voxels << " tissue voxels\n";
  const Figures r = compare(h, backend, steady_state);
  record(r);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "  " << secs << " s in all\n";
  testing::Test::RecordProperty("total_seconds", std::to_string(secs));
  EXPECT_TRUE(r.fdtd_converged);
  EXPECT_TRUE(r.fdfd_converged);
  EXPECT_LT(r.e_rel_l2, tol.e);
  EXPECT_LT(std::fabs(rel(r.wb[0], r.wb[1])), tol.wb);
  EXPECT_LT(std::fabs(rel(r.ps1[0], r.ps1[1])), tol.ps1);
  EXPECT_LT(std::fabs(rel(r.ps10[0], r.ps10[1])), tol.ps10);
  EXPECT_LT(std::fabs(rel(r.ps10_edge[0], r.ps10_edge[1])), kEdge10g);
  EXPECT_NEAR(r.own_ps10 / r.ps10_edge[0], 1.0, 1e-3);  // the same computation on the same phasors
}

}  // namespace

// Coarse head (6.6 mm voxels) on the CPU, in CI.
TEST(FdtdFdfdHead, CoarseHeadCpuAgrees) {
  const HeadCase h = make_head(6.6e-3, 3);
  const vem_test::ThreadsForGrid threads(h.grid.cell_count());
  run_and_check(h, Backend::cpu, kCoarseSteadyState, {kCoarseE, kCoarseWb, kCoarse1g, kCoarse10g}, "coarse head");
}

// Full-size head (2.2 mm voxels, 2.4 M cells): both solvers on the GPU.
TEST(FdtdFdfdHead, FullHeadCudaAgrees) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << "CUDA backend not tested here (full-size FDTD/FDFD head comparison needs a GPU): " << why;
  if (!fdfd_cuda_available(&why)) GTEST_SKIP() << "FDFD CUDA backend not usable: " << why;
  run_and_check(make_head(2.2e-3, 10), Backend::cuda, kFullSteadyState, {kFullE, kFullWb, kFull1g, kFull10g},
                "full head");
}
