// Distributed FDTD failures (issue 17): bad decompositions and bad input give the same readable
// message on every rank; a rank failing while stepping, in a callback or while building its piece
// ends the call on every rank with that rank's message, within seconds (no rank waits forever for
// a dead neighbour's halo planes). ctest gives this program a short time limit.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>

#include "mpi_test_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_fdtd.h"

using namespace vem;
using vem_mpi_test::bit_mismatches;
using vem_mpi_test::world_rank;
using vem_mpi_test::world_size;

namespace {

FdtdSetup small_setup(int nx = 24, int ny = 12, int nz = 10, int cpml = 4) {
  FdtdSetup s;
  s.grid = {nx, ny, nz, 1e-3, 1e-3, 1e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, cpml);
  s.boundaries.face[4] = s.boundaries.face[5] = BoundaryType::pec;
  s.materials = {Material::isotropic("air", 1, 0, 1)};
  PointSource p;
  p.i = nx / 2; p.j = ny / 2; p.k = nz / 2;
  p.waveform = Waveform::differentiated_gaussian_for_bandwidth(60e9);
  s.sources = {p};
  return s;
}

// Runs `f`, expects a vem::Error whose message contains every string of `parts`; returns it.
template <class F>
std::string expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error";
  return {};
}

// Throws on one rank at one step, at a hook point inside the leap-frog step.
class FailAt : public EngineExtension {
 public:
  explicit FailAt(int step) : step_(step) {}
  void hook(FdtdEngine&, HookPoint where, int step) override {
    if (where == HookPoint::after_h && step == step_) fail("injected failure at step ", step);
  }

 private:
  int step_;
};

}  // namespace

TEST(DistributedErrors, PieceThinnerThanTheCpmlIsNamedOnEveryRank) {
  const int n = world_size();
  if (n < 2) GTEST_SKIP() << "needs 2 or more ranks (a cut)";
  DistributedOptions opt;
  std::vector<int> xs(n, 1);
  xs[0] = 3;  // x-low piece of 3 cells, CPML 4
  xs[n - 1] = 24 - 3 - (n - 2);
  opt.cells = {xs, {12}, {10}};
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, small_setup(), opt); },
               {"rank 0 of", "piece 0 along x has 3 cells", "thinner than the x-low CPML (4 cells",
                "at least 5 cells"});
}

TEST(DistributedErrors, FullSmoothedTensorIsRefusedOnEveryRank) {
  FdtdSetup s = small_setup();
  InverseEpsRow row;
  row.i = 5; row.j = 4; row.k = 3;
  row.inv[0] = 0.01f;
  s.medium.inverse_eps_rows = {row};
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, s, {}); },
               {"rank 0 of", "off-diagonal inverse-permittivity rows", "full_tensor"});
}

TEST(DistributedErrors, MoreRanksThanCellsIsNamedOnEveryRank) {
  const int n = world_size();
  if (n < 2) GTEST_SKIP() << "needs 2 or more ranks";
  DistributedOptions opt;
  opt.ranks = {1, 1, n};
  FdtdSetup s = small_setup(24, 12, 1);
  s.sources[0].k = 0;
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, s, opt); },
               {std::to_string(n) + " ranks along z but only 1 cells", "more ranks than cells"});
  // The automatic choice: no axis can take the ranks (1 x 1 x 1 cell).
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, small_setup(1, 1, 1, 1), {}); },
               {"more ranks than cells"});
}

TEST(DistributedErrors, NoValidAutomaticSplitIsExplained) {
  const int n = world_size();
  if (n < 2) GTEST_SKIP() << "needs 2 or more ranks";
  // 11 x 11 x 11 cells, CPML 5 on every face: no piece of a cut axis can hold a CPML + 1 cell.
  FdtdSetup s = small_setup(11, 11, 11, 5);
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, 5);
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, s, {}); },
               {"no split of the 11 x 11 x 11-cell grid over " + std::to_string(n) + " ranks is valid",
                "thinner than the"});
}

TEST(DistributedErrors, RankCountMismatchAndBadSourceAreNamed) {
  const int n = world_size();
  DistributedOptions opt;
  opt.ranks = {n + 1, 1, 1};
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, small_setup(), opt); },
               {std::to_string(n + 1) + " pieces for " + std::to_string(n) + " ranks"});
  FdtdSetup s = small_setup();
  s.sources[0].i = 99;
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, s, {}); },
               {"source 0 at sample (99, 6, 5) is outside the grid of 24 x 12 x 10 cells"});
  // A high-order scheme cannot be cut yet.
  if (n > 1) {
    FdtdSetup h = small_setup();
    h.scheme = Scheme::fv24;
    expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, h, {}); }, {"scheme fv24", "2-layer halo"});
  }
}

TEST(DistributedErrors, PieceFailingToBuildEndsEveryRankWithItsMessage) {
  const int n = world_size();
  DistributedOptions opt;
  opt.fill_materials = [&](const std::array<int, 3>& lo, const std::array<int, 3>& cells, FdtdSetup& piece) {
    if (world_rank() == n - 1)
      fail("material file for cells from (", lo[0], ", ", lo[1], ", ", lo[2], ") not readable");
    piece.material_index.assign(std::size_t(cells[0]) * cells[1] * cells[2], 0);
  };
  expect_error([&] { DistributedFdtd run(MPI_COMM_WORLD, small_setup(), opt); },
               {"rank " + std::to_string(n - 1) + " of " + std::to_string(n), "not readable"});
}

TEST(DistributedErrors, RankFailingMidRunEndsEveryRankWithoutHang) {
  const int n = world_size();
  // Large planes (rendezvous-size messages) and a failure in the middle of a chunk.
  FdtdSetup s = small_setup(40, 40, 40, 4);
  DistributedOptions opt;
  opt.ranks = {1, 1, n};
  DistributedFdtd run(MPI_COMM_WORLD, s, opt);
  FailAt fail_at(37);
  if (world_rank() == n - 1) run.engine().add_extension(&fail_at);
  const auto t0 = std::chrono::steady_clock::now();
  expect_error([&] { run.run(200, {}, 50); },
               {"distributed FDTD: rank " + std::to_string(n - 1) + " of " + std::to_string(n),
                "injected failure at step 37"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 20.0);
  // The object refuses further use on every rank.
  expect_error([&] { run.run(1); }, {"failed earlier"});
  if (world_rank() == n - 1) run.engine().remove_extension(&fail_at);
}

TEST(DistributedErrors, CallbackFailingOnOneRankEndsEveryRank) {
  const int n = world_size();
  DistributedOptions opt;
  DistributedFdtd run(MPI_COMM_WORLD, small_setup(), opt);
  int calls = 0;
  expect_error([&] {
    run.run(100, [&](int done, int) {
      ++calls;
      if (world_rank() == 0 && done >= 20) fail("callback gave up at ", done, " steps");
      return true;
    }, 10);
  }, {"rank 0 of " + std::to_string(n), "callback gave up at 20 steps"});
  EXPECT_EQ(calls, 2);
}

TEST(DistributedErrors, StopRequestedOnOneRankStopsEveryRank) {
  DistributedFdtd run(MPI_COMM_WORLD, small_setup(), {});
  const int done = run.run(100, [&](int d, int) { return !(world_rank() == world_size() - 1 && d >= 30); }, 10);
  EXPECT_EQ(done, 30);
  EXPECT_EQ(run.steps_completed(), 30);
}
