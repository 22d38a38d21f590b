// Distributed 1 g / 10 g SAR averaging without a gather (issue 17; distributed_extensions.h
// distributed_spatial_average_sar): each rank gives its piece's density and power density; the
// averaged SAR, status and side of its cells, the peak, its voxel and side and the counts must equal
// spatial_average_sar on the whole grid bit for bit, for splits along each axis, 3D splits, uneven
// pieces, pieces thinner than the halo (a cube crossing two cuts), voxels growing past the halo
// (lone tissue voxels in air: their side from the owners' table entries) and the fallback to the
// gather. The bytes each rank receives are bounded by its halo boxes (reported by the API).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "mpi_test_util.h"
#include "vem/fdtd/distributed/decomposition.h"
#include "vem/fdtd/distributed/distributed_extensions.h"

using namespace vem;
using namespace vem_mpi_test;

namespace {

constexpr int kNx = 40, kNy = 34, kNz = 30;
constexpr double kD = 2e-3;  // 10 g: R = 6 for rho_min 900 kg/m^3

YeeGrid grid() {
  YeeGrid g;
  g.nx = kNx; g.ny = kNy; g.nz = kNz;
  g.dx = g.dy = g.dz = kD;
  return g;
}

// An ellipsoid of tissue: a uniform core (equal averages: ties for the peak), a random shell, a
// thin plate, lone voxels in the air (cubes growing far past the halo) and, with `sparse`, one
// voxel of the lightest tissue (10 kg/m^3: R = 26, most splits' boxes the whole grid: gather).
void phantom(std::vector<float>& rho, std::vector<float>& pd, bool sparse) {
  const std::size_t n = std::size_t(kNx) * kNy * kNz;
  rho.assign(n, 1.2f);
  pd.assign(n, 0.0f);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int k = 0; k < kNz; ++k)
    for (int j = 0; j < kNy; ++j)
      for (int i = 0; i < kNx; ++i) {
        const std::size_t q = i + std::size_t(kNx) * (j + std::size_t(kNy) * k);
        const double x = (i - 19.3) / 15.0, y = (j - 16.1) / 12.5, z = (k - 14.7) / 11.0;
        const double r2 = x * x + y * y + z * z;
        const float a = u(rng), b = u(rng);
        if (r2 < 0.25) { rho[q] = 1000.0f; pd[q] = 50.0f; }
        else if (r2 < 1.0) { rho[q] = 900.0f + 200.0f * a; pd[q] = 40.0f * b * b; }
        else if (i == 36 && j > 4 && j < 30 && k > 3 && k < 27) { rho[q] = 1050.0f; pd[q] = 30.0f * a; }
      }
  for (const auto& v : {std::array<int, 3>{1, 1, 1}, {38, 2, 27}, {3, 31, 14}, {20, 32, 28}}) {
    const std::size_t q = v[0] + std::size_t(kNx) * (v[1] + std::size_t(kNy) * v[2]);
    rho[q] = 950.0f;
    pd[q] = 7.0f;
  }
  if (sparse) rho[5 + std::size_t(kNx) * (30 + std::size_t(kNy) * 3)] = kMinTissueDensity;
}

std::vector<float> piece(const Decomposition& d, int rank, const std::vector<float>& all) {
  const auto lo = d.piece_lo(rank), c = d.piece_cells(rank);
  std::vector<float> out;
  for (int k = 0; k < c[2]; ++k)
    for (int j = 0; j < c[1]; ++j)
      for (int i = 0; i < c[0]; ++i)
        out.push_back(all[(lo[0] + i) + std::size_t(kNx) * ((lo[1] + j) + std::size_t(kNy) * (lo[2] + k))]);
  return out;
}

struct Ref {
  std::vector<AveragedSar> s;
};

const std::vector<AveragedSar>& reference(bool sparse) {
  static std::vector<AveragedSar> ref[2];
  auto& r = ref[sparse ? 1 : 0];
  if (r.empty()) {
    SarInput in;
    in.grid = grid();
    phantom(in.density, in.power_density, sparse);
    r = spatial_average_sar(in, std::vector<double>{1e-3, 1e-2}, Backend::cpu);
  }
  return r;
}

std::vector<Decomposition> cases() {
  const int n = world_size();
  const std::array<int, 3> N{kNx, kNy, kNz};
  std::vector<Decomposition> out;
  if (n == 1) out.push_back(even_decomposition(N, {1, 1, 1}));
  if (n == 2) {
    out.push_back(even_decomposition(N, {2, 1, 1}));
    out.push_back(decomposition_from_cells({{{kNx}, {11, 23}, {kNz}}}));
    out.push_back(decomposition_from_cells({{{kNx}, {kNy}, {19, 11}}}));
  }
  if (n == 3) {
    // pieces 4 cells thick, thinner than the halo R = 6: cubes cross two cuts
    out.push_back(decomposition_from_cells({{{14, 4, 22}, {kNy}, {kNz}}}));
    out.push_back(decomposition_from_cells({{{kNx}, {4, 4, 26}, {kNz}}}));
    out.push_back(decomposition_from_cells({{{kNx}, {kNy}, {12, 5, 13}}}));
  }
  if (n == 4) {
    out.push_back(even_decomposition(N, {2, 2, 1}));
    out.push_back(decomposition_from_cells({{{17, 23}, {kNy}, {9, 21}}}));
    out.push_back(decomposition_from_cells({{{kNx}, {3, 13, 4, 14}, {kNz}}}));
  }
  if (n == 8) {
    out.push_back(even_decomposition(N, {2, 2, 2}));
    out.push_back(decomposition_from_cells({{{15, 25}, {20, 14}, {4, 26}}}));
  }
  return out;
}

void compare(const Decomposition& d, const std::vector<AveragedSar>& got, const std::vector<AveragedSar>& want) {
  const int rank = world_rank();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t m = 0; m < got.size(); ++m) {
    const AveragedSar& g = got[m];
    const AveragedSar& w = want[m];
    SCOPED_TRACE("mass " + std::to_string(w.target_mass_kg) + " " + d.describe());
    EXPECT_EQ(g.target_mass_kg, w.target_mass_kg);
    EXPECT_EQ(g.peak, w.peak);
    EXPECT_EQ(g.peak_voxel, w.peak_voxel);
    EXPECT_EQ(g.peak_side_m, w.peak_side_m);
    EXPECT_EQ(g.valid, w.valid);
    EXPECT_EQ(g.assigned, w.assigned);
    EXPECT_EQ(g.unassigned, w.unassigned);
    EXPECT_EQ(bit_mismatches(g.sar, piece(d, rank, w.sar)), 0u);
    EXPECT_EQ(bit_mismatches(g.side_m, piece(d, rank, w.side_m)), 0u);
    std::vector<float> gs(g.status.begin(), g.status.end()), ws(w.status.begin(), w.status.end());
    EXPECT_EQ(bit_mismatches(gs, piece(d, rank, ws)), 0u);
  }
}

}  // namespace

TEST(DistributedSarAveraging, ReferenceMeetsTheEdgeCases) {
  const auto& ref = reference(false);
  for (const AveragedSar& s : ref) {
    EXPECT_GT(s.valid, 0u);
    EXPECT_GT(s.assigned, 0u);
    EXPECT_GT(s.unassigned, 0u);  // the lone voxels
  }
  // ties: the uniform core gives the peak's value to more than one voxel of the 1 g average
  std::size_t equal = 0;
  for (std::size_t q = 0; q < ref[0].sar.size(); ++q) equal += ref[0].status[q] == 1 && ref[0].sar[q] == ref[0].peak;
  EXPECT_GT(equal, 1u);  // the tie-break (lowest global index) is exercised
  if (world_rank() == 0) std::cout << "  1 g peak " << ref[0].peak << " W/kg on " << equal << " voxels\n";
}

TEST(DistributedSarAveraging, HaloEqualsSingleDomainBitForBit) {
  const auto& ref = reference(false);
  std::vector<float> rho, pd;
  phantom(rho, pd, false);
  const YeeGrid g = grid();
  const int rank = world_rank();
  for (const Decomposition& d : cases()) {
    SarAveragingReport rep;
    const auto got = distributed_spatial_average_sar(MPI_COMM_WORLD, d, g, piece(d, rank, rho), piece(d, rank, pd),
                                                     {1e-3, 1e-2}, SarAveraging::automatic, Backend::cpu, 0, &rep);
    compare(d, got, ref);
    ASSERT_TRUE(rep.halo) << rep.reason;
    EXPECT_GE(rep.min_tissue_density, 900.0);
    EXPECT_LT(rep.min_tissue_density, 901.0);
    EXPECT_EQ(rep.halo_cells, 6);  // 0.899 * 900 kg/m^3 * (2 mm)^3 * 13^3 > 10 g > ... * 11^3
    // The table box: the piece +-R (and the entry below), clamped to the grid.
    const auto lo = d.piece_lo(rank), c = d.piece_cells(rank);
    const std::array<int, 3> N{kNx, kNy, kNz};
    long long box = 1;
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(rep.table_box.lo[a], std::max(0, lo[a] - 7));
      EXPECT_EQ(rep.table_box.hi[a], std::min(N[a] - 1, lo[a] + c[a] - 1 + 6));
      box *= rep.table_box.hi[a] - rep.table_box.lo[a] + 1;
    }
    EXPECT_LE(rep.dilation_cells, rep.halo_cells);
    EXPECT_LE(rep.bytes_received, rep.bytes_halo_bound);
    if (d.size() > 1) {
      EXPECT_GT(rep.bytes_received, 0);
      EXPECT_LT(box, (long long)kNx * kNy * kNz);  // never the whole grid
    }
    long long residual = 0, rounds = rep.residual_rounds;
    MPI_Allreduce(&rep.residual_voxels, &residual, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GE(residual, 4);  // at least the lone voxels (both masses) grew past R
    EXPECT_GT(rounds, 0);
    if (rank == 0)
      std::cout << "  " << d.describe() << ": R " << rep.halo_cells << ", rmax " << rep.dilation_cells
                << ", rank 0 received " << rep.bytes_received << " B (bound " << rep.bytes_halo_bound
                << ", residual " << rep.residual_bytes << " B, " << rep.residual_rounds << " rounds; the gather: "
                << 8LL * kNx * kNy * kNz << " B on the root)\n";
  }
}

TEST(DistributedSarAveraging, SparseTissueFallsBackToTheGather) {
  const auto& ref = reference(true);
  std::vector<float> rho, pd;
  phantom(rho, pd, true);
  const int rank = world_rank();
  for (const Decomposition& d : cases()) {
    SarAveragingReport rep;
    const auto got = distributed_spatial_average_sar(MPI_COMM_WORLD, d, grid(), piece(d, rank, rho),
                                                     piece(d, rank, pd), {1e-3, 1e-2}, SarAveraging::automatic,
                                                     Backend::cpu, d.size() - 1, &rep);
    compare(d, got, ref);
    EXPECT_EQ(rep.min_tissue_density, 10.0);
    EXPECT_EQ(rep.halo_cells, 26);
    // expected: gather on several ranks when every rank's box +-26 is the whole grid
    bool all_whole = true;
    const std::array<int, 3> N{kNx, kNy, kNz};
    for (int r = 0; r < d.size(); ++r)
      for (int a = 0; a < 3; ++a)
        all_whole = all_whole && d.piece_lo(r)[a] - 27 <= 0 && d.piece_lo(r)[a] + d.piece_cells(r)[a] - 1 + 26 >= N[a] - 1;
    const bool gathers = d.size() > 1 && all_whole;
    EXPECT_EQ(rep.halo, !gathers) << d.describe();
    if (gathers) EXPECT_NE(rep.reason.find("whole grid"), std::string::npos) << rep.reason;
    // forced halo on the same model: still equal (every box the whole grid)
    const auto halo = distributed_spatial_average_sar(MPI_COMM_WORLD, d, grid(), piece(d, rank, rho),
                                                      piece(d, rank, pd), {1e-3, 1e-2}, SarAveraging::halo,
                                                      Backend::cpu, 0, &rep);
    compare(d, halo, ref);
    EXPECT_TRUE(rep.halo);
  }
}

TEST(DistributedSarAveraging, ForcedGatherEqualsToo) {
  const auto& ref = reference(false);
  std::vector<float> rho, pd;
  phantom(rho, pd, false);
  const int rank = world_rank();
  const Decomposition d = cases().front();
  SarAveragingReport rep;
  const auto got = distributed_spatial_average_sar(MPI_COMM_WORLD, d, grid(), piece(d, rank, rho), piece(d, rank, pd),
                                                   {1e-3, 1e-2}, SarAveraging::gather, Backend::cpu, 0, &rep);
  compare(d, got, ref);
  EXPECT_FALSE(rep.halo);
}

TEST(DistributedSarAveraging, BadInputEndsEveryRank) {
  std::vector<float> rho, pd;
  phantom(rho, pd, false);
  const int rank = world_rank();
  const Decomposition d = cases().front();
  std::vector<float> r = piece(d, rank, rho), p = piece(d, rank, pd);
  if (rank == world_size() - 1) p[0] = -1.0f;
  try {
    distributed_spatial_average_sar(MPI_COMM_WORLD, d, grid(), r, p, {1e-2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(world_size() - 1)), std::string::npos) << e.what();
  }
}
