// SAR (vem/fdtd/extensions/sar.h) on constructed volumes whose answers are known by hand (1 mm cubic voxels,
// tissue density 1000 kg/m^3, so 1 g = 1000 voxels and 10 g = 10000 voxels):
//  - uniform block: sigma = 1 S/m, |E|^2 = 100 V^2/m^2: local SAR = 1 * 100 / (2 * 1000) =
//    0.05 W/kg everywhere, whole-body 0.05, every 1 g and 10 g average 0.05. Side of the centred
//    1 g cube: M(4) = 729, M(5) = 1331 voxels, f = (1000 - 729) / 602 = 0.45017, side =
//    (9 + 2 f) mm = 9.9003 mm; 10 g: M(10) = 9261, M(11) = 12167, f = 0.25430, side 21.5086 mm.
//  - single hot voxel: only one voxel absorbs, P = 1/2 * 1 S/m * 2000 V^2/m^2 * 1e-9 m^3 = 1e-6 W;
//    peak 1 g SAR = 1e-6 W / 1e-3 kg = 1e-3 W/kg, 10 g: 1e-4 W/kg; whole-body 1e-6 / 0.027 kg.
//  - half-filled box at a tissue/air boundary (tissue in k < 15, air above): a voxel at depth m
//    below the top tissue layer has a valid 1 g cube iff m >= 4 (m = 4: air 0.5634 * 121 = 68.2 of
//    1068.2 voxel volumes = 6.4 %; m = 3: 209.5 of 1209.5 = 17.3 % > 10 %); shallower voxels and
//    voxels at the grid edge (outside = air) are assigned 0.05 from valid cubes containing them.
// Each case runs on the CPU and on the GPU (skipped without one).
#include <cmath>
#include <complex>
#include <iostream>

#include "test_support.h"
#include "threads_util.h"
#include "vem/core/error.h"
#include "vem/fdfd/fdfd_operator.h"
#include "vem/fdtd/extensions/sar.h"

using namespace vem;

namespace {

SarInput make_volume(int nx, int ny, int nz) {
  SarInput in;
  in.grid = {nx, ny, nz, 1e-3, 1e-3, 1e-3};
  const std::size_t n = std::size_t(in.grid.cell_count());
  in.sigma.assign(n, 0.0f);
  in.density.assign(n, 0.0f);
  in.e_squared.assign(n, 0.0f);
  return in;
}

std::size_t idx(const SarInput& in, int i, int j, int k) {
  return i + std::size_t(in.grid.nx) * (j + std::size_t(in.grid.ny) * k);
}

// A lumpy ellipsoid of tissue (pseudo-random densities and conductivities, a field decaying
// from one side) in air: many invalid cubes near its surface.
SarInput irregular_volume() {
  SarInput in = make_volume(36, 32, 28);
  unsigned s = 12345;
  for (int k = 0; k < 28; ++k)
    for (int j = 0; j < 32; ++j)
      for (int i = 0; i < 36; ++i) {
        const double r = std::hypot(std::hypot(i - 18.0, j - 16.0), (k - 14.0) * 1.2);
        if (r > 13) continue;
        s = s * 1103515245u + 12345u;
        const std::size_t q = idx(in, i, j, k);
        in.density[q] = 900.0f + float(s % 300);
        in.sigma[q] = 0.3f + 0.001f * float((s >> 8) % 1000);
        in.e_squared[q] = float(100.0 * std::exp(-0.02 * (i - 8) * (i - 8)));
      }
  return in;
}

}  // namespace

class SarAveraging : public testing::TestWithParam<Backend> {};

TEST_P(SarAveraging, UniformBlockAveragesEqualTheLocalSar) {
  VEM_REQUIRE_BACKEND(GetParam());
  SarInput in = make_volume(30, 30, 30);
  for (int k = 2; k < 28; ++k)
    for (int j = 2; j < 28; ++j)
      for (int i = 2; i < 28; ++i) {
        const std::size_t q = idx(in, i, j, k);
        in.sigma[q] = 1.0f; in.density[q] = 1000.0f; in.e_squared[q] = 100.0f;
      }
  const auto loc = local_sar(in);
  EXPECT_FLOAT_EQ(loc[idx(in, 15, 15, 15)], 0.05f);
  EXPECT_EQ(loc[idx(in, 0, 0, 0)], 0.0f);
  EXPECT_NEAR(whole_body_sar(in), 0.05, 1e-9);
  for (double m : {1e-3, 1e-2}) {
    const AveragedSar a = spatial_average_sar(in, m, GetParam());
    std::cout << "  " << m * 1e3 << " g: peak " << a.peak << " W/kg, side " << a.peak_side_m * 1e3
              << " mm; valid " << a.valid << ", assigned " << a.assigned << ", unassigned "
              << a.unassigned << "\n";
    EXPECT_NEAR(a.peak, 0.05, 0.05 * 1e-5);
    EXPECT_EQ(a.unassigned, 0u);
    EXPECT_EQ(a.valid + a.assigned, std::size_t(26 * 26 * 26));
    const double side = m < 5e-3 ? (9 + 2 * 271.0 / 602.0) : (21 + 2 * 739.0 / 2906.0);
    EXPECT_NEAR(a.side_m[idx(in, 15, 15, 15)] * 1e3, side, 1e-4);
    EXPECT_EQ(a.status[idx(in, 15, 15, 15)], 1);
    EXPECT_EQ(a.status[idx(in, 2, 2, 2)], 2);  // block corner: from a valid cube
    for (std::size_t q = 0; q < a.sar.size(); ++q)
      if (in.density[q] > 0) ASSERT_NEAR(a.sar[q], 0.05, 0.05 * 1e-5) << q;
      else ASSERT_EQ(a.status[q], 0) << q;
  }
}

TEST_P(SarAveraging, SingleHotVoxelGivesVoxelPowerOverTargetMass) {
  VEM_REQUIRE_BACKEND(GetParam());
  SarInput in = make_volume(30, 30, 30);
  for (std::size_t q = 0; q < in.density.size(); ++q) { in.density[q] = 1000.0f; in.sigma[q] = 1.0f; }
  in.e_squared[idx(in, 15, 15, 15)] = 2000.0f;
  EXPECT_FLOAT_EQ(local_sar(in)[idx(in, 15, 15, 15)], 1.0f);
  EXPECT_NEAR(whole_body_sar(in), 1e-6 / 0.027, 1e-12);
  const AveragedSar a1 = spatial_average_sar(in, 1e-3, GetParam());
  const AveragedSar a10 = spatial_average_sar(in, 1e-2, GetParam());
  std::cout << "  peak 1 g " << a1.peak << " W/kg, 10 g " << a10.peak << " W/kg\n";
  EXPECT_NEAR(a1.peak, 1e-3, 1e-8);
  EXPECT_NEAR(a10.peak, 1e-4, 1e-9);
  EXPECT_NEAR(a1.sar[idx(in, 15, 15, 15)], 1e-3, 1e-8);
  EXPECT_NEAR(a10.sar[idx(in, 15, 15, 15)], 1e-4, 1e-9);
  // a voxel 7 cells away: its 1 g cube (half-width 4 + fraction) misses the hot voxel
  EXPECT_EQ(a1.sar[idx(in, 22, 15, 15)], 0.0f);
}

TEST_P(SarAveraging, HalfFilledBoxAtTissueAirBoundaryFollowsTheTenPercentAirRule) {
  VEM_REQUIRE_BACKEND(GetParam());
  SarInput in = make_volume(40, 40, 30);
  for (int k = 0; k < 15; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 40; ++i) {
        const std::size_t q = idx(in, i, j, k);
        in.sigma[q] = 1.0f; in.density[q] = 1000.0f; in.e_squared[q] = 100.0f;
      }
  const AveragedSar a = spatial_average_sar(in, 1e-3, GetParam());
  std::cout << "  valid " << a.valid << ", assigned " << a.assigned << ", unassigned "
            << a.unassigned << "; side at depth 4: " << a.side_m[idx(in, 20, 20, 10)] * 1e3 << " mm\n";
  EXPECT_EQ(a.status[idx(in, 20, 20, 10)], 1);  // depth 4: valid
  EXPECT_EQ(a.status[idx(in, 20, 20, 11)], 2);  // depth 3: invalid, assigned
  EXPECT_EQ(a.status[idx(in, 20, 20, 14)], 2);  // top layer
  EXPECT_EQ(a.status[idx(in, 0, 20, 7)], 2);    // grid edge (outside counts as air)
  EXPECT_EQ(a.status[idx(in, 20, 20, 20)], 0);  // air
  EXPECT_NEAR(a.side_m[idx(in, 20, 20, 10)] * 1e3, 9 + 2 * 271.0 / 481.0, 1e-4);
  for (int k = 5; k < 15; ++k) EXPECT_NEAR(a.sar[idx(in, 20, 20, k)], 0.05, 1e-7) << k;
  EXPECT_NEAR(a.peak, 0.05, 1e-7);
  // depth >= 4 and >= 4 from the x / y grid edges and >= 4 above the bottom: valid
  std::size_t expect_valid = 0;
  for (int k = 0; k < 15; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 40; ++i)
        if (a.status[idx(in, i, j, k)] == 1) ++expect_valid;
  EXPECT_EQ(expect_valid, a.valid);
  EXPECT_EQ(a.valid + a.assigned + a.unassigned, std::size_t(40 * 40 * 15));
}

VEM_INSTANTIATE_BACKENDS(SarAveraging);

TEST(SarInputs, CellCentreFieldAndErrors) {
  YeeGrid g{3, 3, 3, 1e-3, 1e-3, 1e-3};
  const std::size_t nc = 4 * 4 * 4;
  std::vector<std::complex<float>> ex(nc, {3.0f, 0.0f}), ey(nc, {0.0f, 4.0f}), ez(nc, 0.0f);
  const auto e2 = cell_centre_e_squared(g, ex, ey, ez);
  ASSERT_EQ(e2.size(), 27u);
  for (float v : e2) EXPECT_FLOAT_EQ(v, 25.0f);
  SarInput in = make_volume(4, 4, 4);
  EXPECT_THROW(whole_body_sar(in), Error);  // no tissue
  in.sigma.pop_back();
  EXPECT_THROW(local_sar(in), Error);
  SarInput b = make_volume(4, 4, 4);
  b.grid.dz = 2e-3;
  try {
    spatial_average_sar(b, 1e-3);
    FAIL() << "non-cubic voxels accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cubic"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spatial_average_sar(make_volume(4, 4, 4), -1.0), Error);
}

// Edge-based absorbed power density (cell_absorbed_power_density): a tissue block (cells
// 2..6 in x, 2..5 in y, 3..6 in z of an 9 x 8 x 10 grid, density 1000) whose E samples carry
// sigma = 0.7 S/m when they belong to a tissue cell (staircase rule of yee_grid.h), with
// pseudo-random phasors. Exact checks: (1) the power summed over the tissue voxels equals
// sum over edges 1/2 sigma_e |E_e|^2 V (conservation, 1e-5 relative: float sums); (2) a voxel
// whose 12 edges all lie inside the block gets the mean of its edges' power densities
// (4 edges per axis, each shared by 4 tissue voxels); (3) air voxels get 0.
TEST(SarInputs, EdgeBasedPowerDensityConservesThePowerOfEveryEdge) {
  YeeGrid g{9, 8, 10, 1e-3, 1e-3, 1e-3};
  const std::size_t sx = 10, sxy = 10 * 9, nc = sxy * 11;
  auto in_block = [](int i, int j, int k) { return i >= 2 && i <= 6 && j >= 2 && j <= 5 && k >= 3 && k <= 6; };
  std::vector<float> rho(g.cell_count(), 0.0f);
  for (int k = 0; k < 10; ++k)
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 9; ++i)
        if (in_block(i, j, k)) rho[i + 9 * (j + 8 * k)] = 1000.0f;
  std::array<std::vector<float>, 3> sig;
  std::vector<std::complex<float>> e[3];
  unsigned seed = 12345;
  auto rnd = [&]() { seed = seed * 1103515245u + 12345u; return float((seed >> 8) % 1000) / 100.0f - 5.0f; };
  double total = 0;
  for (int a = 0; a < 3; ++a) {
    sig[a].assign(nc, 0.0f);
    e[a].assign(nc, 0.0f);
    for (int k = 0; k <= 10; ++k)
      for (int j = 0; j <= 8; ++j)
        for (int i = 0; i <= 9; ++i) {
          const std::size_t s = i + sx * j + sxy * k;
          e[a][s] = {rnd(), rnd()};
          const int idx[3] = {i, j, k};
          if (idx[a] < g.n()[a] && in_block(i, j, k)) sig[a][s] = 0.7f;
          total += 0.5 * sig[a][s] * std::norm(e[a][s]) * 1e-9;
        }
  }
  const auto p = cell_absorbed_power_density(g, e[0], e[1], e[2], sig, rho);
  double sum = 0;
  for (std::size_t q = 0; q < p.size(); ++q) {
    if (rho[q] <= 0) EXPECT_EQ(p[q], 0.0f);
    sum += p[q] * 1e-9;
  }
  EXPECT_NEAR(sum / total, 1.0, 1e-5);
  // interior voxel (4, 3, 4): its edges are (4..5, 3..4, 4..5) corners, all inside the block
  double mean = 0;
  const int i = 4, j = 3, k = 4;
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int ob = 0; ob < 2; ++ob)
      for (int oc = 0; oc < 2; ++oc) {
        int idx[3] = {i, j, k};
        idx[b] += ob;
        idx[c] += oc;
        const std::size_t s = idx[0] + sx * idx[1] + sxy * idx[2];
        mean += 0.5 * sig[a][s] * std::norm(e[a][s]) / 4.0;
      }
  }
  EXPECT_NEAR(p[i + 9 * (j + 8 * k)] / mean, 1.0, 1e-5);
  EXPECT_THROW(cell_absorbed_power_density(g, e[0], e[1], e[2], sig, std::vector<float>(5)), Error);
}

// FDFD fields: fdfd_absorbed_power_density takes each sample's conductivity from the operator's
// complex permittivity (sigma = -Im(eps_c) w eps0) and the layout of fdfd_fields. Checked against
// the total dissipated power sum 1/2 sigma |E|^2 V over the samples of lossy cells (staircase:
// a sample takes the material of cell (i,j,k)), to 1e-5.
TEST(SarInputs, FdfdPowerDensityUsesTheOperatorConductivity) {
  FdfdProblem p;
  p.grid = {14, 12, 10, 2e-3, 2e-3, 2e-3};
  p.frequency = 900e6;
  p.pml = FdfdPml::uniform(2);
  p.materials = {Material::vacuum(), Material::isotropic("tissue", 42.0, 0.99)};
  p.material_index.assign(p.grid.cell_count(), 0);
  p.average_at_edges = false;
  std::vector<float> rho(p.grid.cell_count(), 0.0f);
  for (int k = 4; k < 7; ++k)
    for (int j = 4; j < 8; ++j)
      for (int i = 5; i < 9; ++i) {
        p.material_index[i + 14 * (j + 12 * k)] = 1;
        rho[i + 14 * (j + 12 * k)] = 1040.0f;
      }
  const FdfdOperator op(p);
  const std::size_t N = p.grid.cell_count();
  std::vector<std::complex<double>> e(3 * N);
  unsigned seed = 99;
  auto rnd = [&]() { seed = seed * 1103515245u + 12345u; return double((seed >> 8) % 1000) / 100.0 - 5.0; };
  for (auto& v : e) v = {rnd(), rnd()};
  double total = 0;
  for (std::size_t q = 0; q < N; ++q)
    if (p.material_index[q] == 1)
      for (int a = 0; a < 3; ++a) total += 0.5 * 0.99 * std::norm(e[a * N + q]) * 8e-9;
  const auto pd = fdfd_absorbed_power_density(op, e, rho);
  double sum = 0;
  for (float v : pd) sum += v * 8e-9;
  EXPECT_NEAR(sum / total, 1.0, 1e-5);
}

// The assignment of invalid voxels against a brute-force gather written here: voxel q gets the
// largest average of the valid cubes (status 1) that contain it, cube u spanning
// |a - i|, |b - j|, |c - k| <= floor(side_u / 2d) voxels (the cube whose fractional last layer
// reaches at least half a voxel, sar.h); with none it stays unassigned. Exact equality, on both
// backends (each run on its own result).
TEST_P(SarAveraging, AssignmentEqualsBruteForceGather) {
  VEM_REQUIRE_BACKEND(GetParam());
  const SarInput in = irregular_volume();
  const int nx = in.grid.nx, ny = in.grid.ny, nz = in.grid.nz;
  for (double m : {1e-3, 3e-3}) {  // 10 g has no valid cube in this small volume
    const AveragedSar a = spatial_average_sar(in, m, GetParam());
    ASSERT_GT(a.assigned + a.unassigned, 0u);
    std::size_t checked = 0;
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const std::size_t q = idx(in, i, j, k);
          if (a.status[q] != 2 && a.status[q] != 3) continue;
          float best = -1.0f;
          for (int c = 0; c < nz; ++c)
            for (int b = 0; b < ny; ++b)
              for (int x = 0; x < nx; ++x) {
                const std::size_t u = idx(in, x, b, c);
                if (a.status[u] != 1) continue;
                const int r = int(std::floor(a.side_m[u] / (2 * in.grid.dx)));
                if (std::abs(x - i) <= r && std::abs(b - j) <= r && std::abs(c - k) <= r) best = std::max(best, a.sar[u]);
              }
          ++checked;
          if (best < 0) {
            ASSERT_EQ(a.status[q], 3) << "voxel " << i << " " << j << " " << k;
          } else {
            ASSERT_EQ(a.status[q], 2) << "voxel " << i << " " << j << " " << k;
            ASSERT_EQ(a.sar[q], best) << "voxel " << i << " " << j << " " << k;
          }
        }
    std::cout << "  " << m * 1e3 << " g: " << checked << " invalid-cube voxels checked (" << a.assigned
              << " assigned, " << a.unassigned << " unassigned) on " << backend_name(GetParam()) << "\n";
  }
}

TEST(SarAgreement, CudaMatchesCpuOnAnIrregularVolume) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const SarInput in = irregular_volume();
  for (double m : {1e-3, 1e-2}) {
    const AveragedSar c = spatial_average_sar(in, m, Backend::cpu);
    const AveragedSar g = spatial_average_sar(in, m, Backend::cuda);
    EXPECT_EQ(c.valid, g.valid);
    EXPECT_EQ(c.assigned, g.assigned);
    EXPECT_NEAR(c.peak, g.peak, 1e-6 * c.peak);
    for (std::size_t q = 0; q < c.sar.size(); ++q) {
      ASSERT_EQ(c.status[q], g.status[q]) << q;
      ASSERT_NEAR(c.sar[q], g.sar[q], 1e-5 * c.peak + 1e-12) << q;
    }
  }
}

// The GPU builds the CPU's summed-volume tables (the same sums in the same order), grows the same
// cubes from a lower bound and dilates over the tissue's bounding box only (sar_cuda.cu): its
// results equal the CPU's exactly, for sigma |E|^2 and for power-density input, several masses in
// one call (tables shared) against one CPU call each, with a tissue island in the grid's corner
// (too light for a valid cube: unassigned) so that the box reaches the grid's edge on three faces.
TEST(SarAgreement, CudaEqualsCpuExactly) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  SarInput in = irregular_volume();
  for (int k = 0; k < 5; ++k)
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 7; ++i) {
        const std::size_t q = idx(in, i, j, k);
        in.density[q] = 1100.0f; in.sigma[q] = 0.5f; in.e_squared[q] = 50.0f + float(i);
      }
  SarInput pin = in;
  pin.power_density.resize(in.density.size());
  for (std::size_t q = 0; q < in.density.size(); ++q)
    pin.power_density[q] = float(0.5 * in.sigma[q] * in.e_squared[q] * (1.0 + 0.1 * double(q % 7)));
  pin.sigma.clear();
  pin.e_squared.clear();
  const std::vector<double> masses = {1e-3, 3e-3, 1e-2};
  for (const SarInput* v : {&in, &pin}) {
    const std::vector<AveragedSar> g = spatial_average_sar(*v, masses, Backend::cuda);
    ASSERT_EQ(g.size(), masses.size());
    for (std::size_t m = 0; m < masses.size(); ++m) {
      const AveragedSar c = spatial_average_sar(*v, masses[m], Backend::cpu);
      std::cout << "  " << (v == &in ? "sigma |E|^2" : "power density") << ", " << masses[m] * 1e3 << " g: valid "
                << c.valid << ", assigned " << c.assigned << ", unassigned " << c.unassigned << ", peak " << c.peak
                << " W/kg\n";
      EXPECT_EQ(g[m].target_mass_kg, masses[m]);
      EXPECT_EQ(g[m].valid, c.valid);
      EXPECT_EQ(g[m].assigned, c.assigned);
      EXPECT_EQ(g[m].unassigned, c.unassigned);
      EXPECT_EQ(g[m].peak, c.peak);
      EXPECT_EQ(g[m].peak_voxel, c.peak_voxel);
      EXPECT_EQ(g[m].peak_side_m, c.peak_side_m);
      ASSERT_EQ(g[m].sar.size(), c.sar.size());
      for (std::size_t q = 0; q < c.sar.size(); ++q) {
        ASSERT_EQ(g[m].status[q], c.status[q]) << q;
        ASSERT_EQ(g[m].sar[q], c.sar[q]) << q;
        ASSERT_EQ(g[m].side_m[q], c.side_m[q]) << q;
      }
    }
    EXPECT_GT(g[0].unassigned, 0u);  // the island
    EXPECT_GT(g[0].valid, 0u);
  }
}
