// Distributed FDTD (issue 17) with a coefficient-array medium averaged at the material edges (the
// form TissueProperties' property arrays take in the ParaView filters), against one domain: each
// piece keeps its neighbours' cells beside its cuts (decomposition.h piece_setup, fdtd_setup.h
// PerCellMedium::array_lo/array_n), so its update coefficients, and then every field sample and
// probe, equal the single-domain run's bit for bit. Also piece_field_with_owner_planes
// (distributed_output.h): every sample of every piece's array, the shared planes and the edges
// where two or three cuts meet included, equals the single-domain value bit for bit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>

#include "mpi_test_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_fdtd.h"
#include "vem/fdtd/distributed/distributed_output.h"

using namespace vem;
using vem_mpi_test::bit_mismatches;
using vem_mpi_test::world_rank;
using vem_mpi_test::world_size;

namespace {

constexpr int kNx = 22, kNy = 20, kNz = 18, kSteps = 90;

// Anisotropic lossy medium varying cell by cell (random blocks, so edges are everywhere), CPML and
// PEC faces, two point sources, probes.
FdtdSetup global_setup() {
  FdtdSetup s;
  s.grid = {kNx, kNy, kNz, 1.0e-3, 1.1e-3, 0.9e-3};
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::pec,
                       BoundaryType::cpml, BoundaryType::cpml, BoundaryType::pmc};
  for (auto& c : s.boundaries.cpml) c.thickness = 4;
  s.material_mode = MaterialMode::coefficient_array;
  s.medium.average_at_edges = true;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  const std::size_t n = std::size_t(s.grid.cell_count());
  s.medium.eps_r.assign(3, std::vector<float>(n));
  s.medium.sigma_e.assign(1, std::vector<float>(n));
  s.medium.mu_r.assign(1, std::vector<float>(n));
  for (std::size_t c = 0; c < n; ++c) {
    const float block = float((c / 3) % 7);
    for (int a = 0; a < 3; ++a) s.medium.eps_r[a][c] = 1.0f + block * (2.0f + a) + 0.5f * u(rng);
    s.medium.sigma_e[0][c] = 0.2f * u(rng);
    s.medium.mu_r[0][c] = 1.0f + 0.3f * u(rng);
  }
  PointSource p;
  p.i = 9; p.j = 10; p.k = 9;
  p.direction = {0.3, 0.5, 1.0};
  p.waveform = Waveform::differentiated_gaussian_for_bandwidth(60e9);
  s.sources.push_back(p);
  p.i = 11; p.j = 10; p.k = 6;  // on planes that the splits below cut
  p.direction = {1.0, 0.0, 0.2};
  s.sources.push_back(p);
  for (int c = 0; c < 6; ++c) {
    Probe q;
    q.component = Component(c);
    q.i = 11; q.j = 10; q.k = 9;
    q.name = component_name(Component(c));
    s.probes.push_back(q);
  }
  return s;
}

struct Reference {
  std::unique_ptr<FdtdOperator> op;
  std::unique_ptr<FdtdEngine> engine;
};
Reference& reference() {
  static Reference r = [] {
    Reference ref;
    ref.op = std::make_unique<FdtdOperator>(global_setup());
    ref.engine = make_engine(*ref.op, Backend::cpu);
    ref.engine->run(kSteps);
    return ref;
  }();
  return r;
}

std::vector<std::array<int, 3>> splits() {
  const int n = world_size();
  std::vector<std::array<int, 3>> out{{n, 1, 1}, {1, n, 1}, {1, 1, n}};
  if (n == 4) out.push_back({2, 2, 1});
  if (n == 4) out.push_back({1, 2, 2});
  if (n == 8) out.push_back({2, 2, 2});
  return out;
}

}  // namespace

TEST(MpiDistributedMedium, AveragedCoefficientArraysEqualOneDomainBitForBit) {
  const Reference& ref = reference();
  for (const auto& ranks : splits()) {
    SCOPED_TRACE(std::to_string(ranks[0]) + "x" + std::to_string(ranks[1]) + "x" + std::to_string(ranks[2]));
    DistributedOptions o;
    o.ranks = ranks;
    DistributedFdtd run(MPI_COMM_WORLD, global_setup(), o);
    run.run(kSteps);
    for (int c = 0; c < 6; ++c) {
      const std::vector<float> all = run.gather_field(Component(c), 0);
      if (run.rank() == 0)
        EXPECT_EQ(bit_mismatches(all, ref.engine->field(Component(c))), 0u) << component_name(Component(c));
    }
    const ProbeRecord p = run.probes(), q = ref.engine->probes();
    ASSERT_EQ(p.values.size(), q.values.size());
    for (std::size_t k = 0; k < p.values.size(); ++k) EXPECT_EQ(bit_mismatches(p.values[k], q.values[k]), 0u);
  }
}

TEST(MpiDistributedMedium, PieceFieldWithOwnerPlanesEqualsOneDomainEverywhere) {
  const Reference& ref = reference();
  for (const auto& ranks : splits()) {
    SCOPED_TRACE(std::to_string(ranks[0]) + "x" + std::to_string(ranks[1]) + "x" + std::to_string(ranks[2]));
    DistributedOptions o;
    o.ranks = ranks;
    DistributedFdtd run(MPI_COMM_WORLD, global_setup(), o);
    run.run(kSteps);
    const auto lo = run.piece_lo(), m = run.decomposition().piece_cells(run.rank());
    for (int c = 0; c < 6; ++c) {
      const std::vector<float> piece = piece_field_with_owner_planes(run, Component(c));
      const std::vector<float> whole = ref.engine->field(Component(c));
      // The reference's samples of the piece's box (node planes lo .. lo + m along each axis).
      std::vector<float> expect(std::size_t(m[0] + 1) * (m[1] + 1) * (m[2] + 1));
      for (int k = 0; k <= m[2]; ++k)
        for (int j = 0; j <= m[1]; ++j)
          for (int i = 0; i <= m[0]; ++i)
            expect[std::size_t(i) + std::size_t(m[0] + 1) * (j + std::size_t(m[1] + 1) * k)] =
                whole[std::size_t(lo[0] + i) + std::size_t(kNx + 1) * ((lo[1] + j) + std::size_t(kNy + 1) * (lo[2] + k))];
      // Samples beyond the grid along their half-offset axis (index n) are padding: skip them by
      // comparing only where the reference layout holds a sample of c.
      std::size_t bad = 0;
      const int a = axis_of(Component(c));
      const bool electric = is_electric(Component(c));
      for (int k = 0; k <= m[2]; ++k)
        for (int j = 0; j <= m[1]; ++j)
          for (int i = 0; i <= m[0]; ++i) {
            const int g[3] = {lo[0] + i, lo[1] + j, lo[2] + k};
            const int nmax[3] = {kNx, kNy, kNz};
            bool padding = false;
            for (int b = 0; b < 3; ++b) {
              const bool half = electric ? b == a : b != a;  // E_a half-offset along a; H_a along the others
              if (half && g[b] == nmax[b]) padding = true;
            }
            if (padding) continue;
            const std::size_t q = std::size_t(i) + std::size_t(m[0] + 1) * (j + std::size_t(m[1] + 1) * k);
            if (std::memcmp(&piece[q], &expect[q], 4) != 0 && !(piece[q] == 0 && expect[q] == 0)) ++bad;
          }
      EXPECT_EQ(bad, 0u) << "rank " << run.rank() << " " << component_name(Component(c));
    }
  }
}

// The ParaView filters split the input image over the ranks (each reads its piece of the pipeline's
// extent), so they cannot hand the whole model's arrays to the solver: each rank fills its piece's
// box (the cells piece_setup names in piece.medium, its neighbours' beside the cuts) from its own
// piece of the image. Same coefficients, same fields as one domain, bit for bit.
TEST(MpiDistributedMedium, PerPieceFilledAveragedArraysEqualOneDomainBitForBit) {
  const Reference& ref = reference();
  const FdtdSetup whole = global_setup();
  for (const auto& ranks : splits()) {
    SCOPED_TRACE(std::to_string(ranks[0]) + "x" + std::to_string(ranks[1]) + "x" + std::to_string(ranks[2]));
    FdtdSetup g = global_setup();
    g.medium.eps_r.clear();
    g.medium.sigma_e.clear();
    g.medium.mu_r.clear();
    DistributedOptions o;
    o.ranks = ranks;
    int filled_cells = 0;
    o.fill_materials = [&](const std::array<int, 3>& lo, const std::array<int, 3>&, FdtdSetup& piece) {
      PerCellMedium& m = piece.medium;
      ASSERT_TRUE(m.has_array_box());
      const auto& n = m.array_n;
      const std::size_t count = std::size_t(n[0]) * n[1] * n[2];
      filled_cells = int(count);
      auto box = [&](const std::vector<std::vector<float>>& src, std::vector<std::vector<float>>& dst) {
        dst.assign(src.size(), std::vector<float>(count));
        for (std::size_t q = 0; q < src.size(); ++q)
          for (int k = 0; k < n[2]; ++k)
            for (int j = 0; j < n[1]; ++j)
              for (int i = 0; i < n[0]; ++i) {
                const int gi = lo[0] + m.array_lo[0] + i, gj = lo[1] + m.array_lo[1] + j, gk = lo[2] + m.array_lo[2] + k;
                dst[q][std::size_t(i) + std::size_t(n[0]) * (j + std::size_t(n[1]) * k)] =
                    src[q][std::size_t(gi) + std::size_t(kNx) * (gj + std::size_t(kNy) * gk)];
              }
      };
      box(whole.medium.eps_r, m.eps_r);
      box(whole.medium.sigma_e, m.sigma_e);
      box(whole.medium.mu_r, m.mu_r);
    };
    DistributedFdtd run(MPI_COMM_WORLD, g, o);
    const auto cells = run.decomposition().piece_cells(run.rank());
    if (world_size() > 1)  // every piece has a cut: its box holds the neighbours' cells beside it
      EXPECT_GT(filled_cells, cells[0] * cells[1] * cells[2]);
    else
      EXPECT_EQ(filled_cells, cells[0] * cells[1] * cells[2]);
    run.run(kSteps);
    for (int c = 0; c < 6; ++c) {
      const std::vector<float> all = run.gather_field(Component(c), 0);
      if (run.rank() == 0)
        EXPECT_EQ(bit_mismatches(all, ref.engine->field(Component(c))), 0u) << component_name(Component(c));
    }
  }
}

// A filler that ignores the box (fills only the piece's own cells) is refused with the sizes, on
// every rank, and the setup without arrays or a filler is refused before any piece is built.
TEST(MpiDistributedMedium, PerPieceFillWithoutTheBoxIsRefused) {
  if (world_size() == 1) GTEST_SKIP() << "needs a cut";
  FdtdSetup g = global_setup();
  g.medium.eps_r.clear();
  g.medium.sigma_e.clear();
  g.medium.mu_r.clear();
  DistributedOptions o;
  o.ranks = {world_size(), 1, 1};
  try {
    DistributedFdtd run(MPI_COMM_WORLD, g, o);
    FAIL() << "accepted a setup without arrays and without a filler";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fill each piece's box"), std::string::npos) << e.what();
  }
  o.fill_materials = [](const std::array<int, 3>&, const std::array<int, 3>& cells, FdtdSetup& piece) {
    piece.medium.eps_r.assign(1, std::vector<float>(std::size_t(cells[0]) * cells[1] * cells[2], 2.0f));
  };
  try {
    DistributedFdtd run(MPI_COMM_WORLD, g, o);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed FDTD: rank"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eps_r"), std::string::npos) << e.what();
  }
}
