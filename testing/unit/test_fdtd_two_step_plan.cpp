// The plan of temporal blocking (solver/src/fdtd/cuda/fused_step.h, plan_two_step), checked on the
// host: it needs no GPU, so CI runs it. On a model with a 10-cell CPML on every face, a point
// source in the interior and a probe inside the y CPML, with and without shell tiles:
//  - every sample (i, j, k), 0 <= i <= nx etc., is stored by exactly one of: an interior tile's
//    core, a shell tile's core, a block of the rest's step 2;
//  - the rest's step 1 covers every step-2 sample and its neighbours one sample away (inside the
//    grid);
//  - an interior tile's computed samples (its core grown by 2 towards the low faces and 1 towards
//    the high ones) are plain: inside every update range, outside every CPML slab;
//  - no interior or shell tile has a source or probe within its core grown by 2 / 1;
//  - a shell tile of a one-axis class meets no slab of another axis and, of its own axis, only the
//    slab it names for each set; a tile of a two-axis class (32 x 16 only) meets only the slabs it
//    names, of its two axes; the general tiles are whole (z chunks of 16 planes) or cut into
//    pieces of at most 8 or 6 planes, the two-axis ones whole or in pieces of 7; the x faces'
//    tiles (16 x 32 threads) have cores of at most 13 x 29 samples, the others 29 x 13; on a grid
//    of 200 x 176 x 150 most shell tiles are of a one-axis class.
// The GPU agreement test (test_fdtd_cpu_cuda_agreement.cpp, TwoStepsPerPassMatchOnePass) runs the
// plans' kernels; this one shows the plan is whole on its own, for grids other than the tests'.
// Also the persistent kernel's sample plan (plan_persistent; its kernel in the agreement test's
// PersistentHoistedAndChainedSamplesMatchTwoPass): every sample dealt out once, a warp's samples of
// a round all plain or all not, plain meaning what the kernel assumes of it, and the warps' loads
// within one task of the mean.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "test_support.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_operator.h"
#if VEM_WITH_CUDA
#include "fdtd/cuda/fused_step.h"
#include "fdtd/engine_common.h"
#endif

using namespace vem;

namespace {

#if VEM_WITH_CUDA
FdtdSetup plan_setup(int nx, int ny, int nz) {
  FdtdSetup s;
  s.grid = {nx, ny, nz, 1e-3, 1e-3, 1e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml);
  for (auto& c : s.boundaries.cpml) c.thickness = 10;
  s.materials = {Material::vacuum()};
  PointSource src;
  src.i = nx / 2; src.j = ny / 3; src.k = nz / 2;
  src.direction = {0.0, 0.0, 1.0};
  src.waveform = Waveform::gaussian_for_bandwidth(50e9);
  s.sources = {src};
  s.probes = {{"ez in the y CPML", Component::Ez, nx / 3, 4, nz / 3}};
  return s;
}

// The folded slabs of one kind, as the engine fills them (axis order; the boxes of PsiBox).
onepass::CpmlSet slab_set(const FdtdOperator& op, bool electric) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  onepass::CpmlSet cs;
  for (int a = 0; a < 3; ++a)
    for (const CpmlSlab& sl : op.cpml_slabs()) {
      if (sl.axis != a) continue;
      const PsiBox b(sl, electric, n);
      if (b.size() == 0) continue;
      onepass::Slab& d = cs.s[cs.count++];
      for (int x = 0; x < 3; ++x) {
        d.o[x] = b.o[x];
        d.d[x] = b.d[x];
      }
      d.axis = a;
    }
  onepass::finish_cpml_set(cs, n);
  return cs;
}

bool box_meets(const onepass::Slab& s, const int lo[3], const int hi[3]) {
  for (int a = 0; a < 3; ++a)
    if (s.d[a] <= 0 || s.o[a] > hi[a] || s.o[a] + s.d[a] - 1 < lo[a]) return false;
  return true;
}
#endif

}  // namespace

TEST(TwoStepPlan, CoversEverySampleOnceWithAndWithoutShellTiles) {
#if !VEM_WITH_CUDA
  GTEST_SKIP() << "built without CUDA: the plan of temporal blocking belongs to the CUDA engine";
#else
  for (const std::array<int, 3> dims :
       {std::array<int, 3>{96, 80, 70}, std::array<int, 3>{61, 130, 45}, std::array<int, 3>{200, 176, 150}}) {
    const FdtdOperator op(plan_setup(dims[0], dims[1], dims[2]));
    const onepass::Grid g = onepass::grid_for(op);
    const onepass::CpmlSet ch = slab_set(op, false), ce = slab_set(op, true);
    ASSERT_EQ(ch.count, 6);
    ASSERT_EQ(ce.count, 6);
    const FieldLayout& L = op.layout();
    std::vector<std::array<int, 3>> keep_out;
    for (const auto& ps : op.sources())
      for (int a = 0; a < 3; ++a)
        if (ps.active[a]) keep_out.push_back(L.sample(ps.offset[a]));
    for (const auto& pr : op.probes()) keep_out.push_back(L.sample(pr.offset));
    const int n[3] = {g.nx, g.ny, g.nz};
    const std::size_t samples = std::size_t(n[0] + 1) * (n[1] + 1) * (n[2] + 1);
    auto at = [&](int i, int j, int k) { return i + std::size_t(n[0] + 1) * (j + std::size_t(n[1] + 1) * k); };
    // general_chunk: the general shell tiles cut into pieces of 8 planes (the engine's default from
    // 32 M cells) or whole (below)
    // edges: the tiles of two axes in classes of their own (shell_edges, the engine's default)
    // shell_chunk: the shell tiles' planes (0: the interior's 16)
    // edge_chunk: the two-axis classes' tiles cut into pieces of at most that many planes
    struct C { bool shell; int general_chunk; bool edges; int shell_chunk = 0; int edge_chunk = 0; };
    for (const C c : {C{false, 8, false}, C{true, 8, false}, C{true, 0, false}, C{true, 0, true}, C{true, 0, true, 5},
                      C{true, 8, true, 24}, C{true, 6, true, 14, 7}}) {
      const bool shell = c.shell;
      const std::string label = std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " + std::to_string(n[2]) +
                                (shell ? ", shell tiles, general ones " +
                                             (c.general_chunk ? "in pieces of " + std::to_string(c.general_chunk) + " planes"
                                                              : std::string("whole")) +
                                             (c.edges ? ", two-axis classes" : "") +
                                             (c.shell_chunk ? ", " + std::to_string(c.shell_chunk) + " planes a tile"
                                                            : std::string()) +
                                             (c.edge_chunk ? ", two-axis ones in pieces of " +
                                                                 std::to_string(c.edge_chunk) + " planes"
                                                           : std::string())
                                       : ", no shell tiles");
      const onepass::TwoStepPlan plan =
          onepass::plan_two_step(g, ch, ce, keep_out, 16, 16, 8, true, shell, true, c.general_chunk, c.edges,
                                 c.shell_chunk, c.edge_chunk);
      EXPECT_FALSE(plan.interior.empty()) << label;
      EXPECT_EQ(plan.shell_tiles() > 0, shell) << label;
      // every class the plan fills has a kernel in the one launch (the engine's set-up check)
      onepass::ShellLists lists;
      for (int shape = 0; shape < 2; ++shape)
        for (int cls = 0; cls < onepass::TwoStepPlan::kShellClasses; ++cls)
          lists.count[shape][cls] = int(plan.shell[shape][cls].size());
      EXPECT_NO_THROW(onepass::check_shell_lists(lists)) << label;
      std::vector<int> stored(samples, 0), first(samples, 0);
      auto mark = [&](std::vector<int>& v, int i0, int i1, int j0, int j1, int k0, int k1) {
        for (int k = k0; k <= k1; ++k)
          for (int j = j0; j <= j1; ++j)
            for (int i = i0; i <= i1; ++i) {
              ASSERT_TRUE(i >= 0 && i <= n[0] && j >= 0 && j <= n[1] && k >= 0 && k <= n[2]) << label;
              ++v[at(i, j, k)];
            }
      };
      auto clear_of_keep_out = [&](const onepass::TwoStepTile& t) {
        for (const auto& s : keep_out)
          if (s[0] >= t.i0 - 2 && s[0] <= t.i0 + t.cw && s[1] >= t.j0 - 2 && s[1] <= t.j0 + t.ch && s[2] >= t.k0 - 2 &&
              s[2] <= t.k1 + 1)
            return false;
        return true;
      };
      for (const auto& t : plan.interior) {
        mark(stored, t.i0, t.i0 + t.cw - 1, t.j0, t.j0 + t.ch - 1, t.k0, t.k1);
        EXPECT_TRUE(clear_of_keep_out(t)) << label << ": interior tile at " << t.i0 << ", " << t.j0 << ", " << t.k0;
        // computed samples: plain (every range; no slab)
        const int lo[3] = {t.i0 - 2, t.j0 - 2, t.k0 - 2}, hi[3] = {t.i0 + t.cw, t.j0 + t.ch, t.k1 + 1};
        for (int a = 0; a < 3; ++a)
          for (int c = 0; c < 6; ++c) {
            EXPECT_GE(lo[a], g.lo[c][a]) << label;
            EXPECT_LE(hi[a], g.hi[c][a]) << label;
          }
        EXPECT_LT(hi[2], g.nz) << label;
        for (const onepass::CpmlSet* cs : {&ch, &ce})
          for (int p = 0; p < cs->count; ++p) EXPECT_FALSE(box_meets(cs->s[p], lo, hi)) << label << ": interior tile meets a slab";
      }
      for (int shape = 0; shape < 2; ++shape)
        for (int cls = 0; cls < onepass::TwoStepPlan::kShellClasses; ++cls)
          for (const auto& t : plan.shell[shape][cls]) {
            mark(stored, t.i0, t.i0 + t.cw - 1, t.j0, t.j0 + t.ch - 1, t.k0, t.k1);
            EXPECT_TRUE(clear_of_keep_out(t)) << label << ": shell tile at " << t.i0 << ", " << t.j0 << ", " << t.k0;
            EXPECT_LE(t.cw, shape == 1 ? 13 : 29) << label;
            EXPECT_LE(t.ch, shape == 1 ? 29 : 13) << label;
            const int planes = c.shell_chunk > 0 ? c.shell_chunk : 16;
            const int cut = cls == 0 ? c.general_chunk : (cls >= 4 ? c.edge_chunk : 0);
            EXPECT_LE(t.k1 - t.k0 + 1, cut > 0 ? std::min(cut, planes) : planes) << label << ", class " << cls;
            if (cls == 0) continue;
            EXPECT_TRUE(shape == 1 ? cls == 1 : cls >= 2) << label << ": class " << cls << " in shape " << shape;
            EXPECT_TRUE(cls < 4 || c.edges) << label << ": class " << cls << " without two-axis classes";
            // the axes of the class: one (1-3), or two (4: x and y, 5: x and z, 6: y and z)
            const int first = cls < 4 ? cls - 1 : (cls == 6 ? 1 : 0), second = cls < 4 ? -1 : (cls == 4 ? 1 : 2);
            const int lo[3] = {t.i0 - 2, t.j0 - 2, t.k0 - 2}, hi[3] = {t.i0 + t.cw, t.j0 + t.ch, t.k1 + 1};
            for (int e = 0; e < 2; ++e) {
              const onepass::CpmlSet& cs = e ? ce : ch;
              const int named = e ? t.se : t.sh, named2 = e ? t.se2 : t.sh2;
              if (named >= 0) EXPECT_EQ(cs.s[named].axis, first) << label;
              if (second < 0) EXPECT_EQ(named2, -1) << label;
              if (named2 >= 0) EXPECT_EQ(cs.s[named2].axis, second) << label;
              for (int p = 0; p < cs.count; ++p)
                if (p != named && p != named2)
                  EXPECT_FALSE(box_meets(cs.s[p], lo, hi)) << label << ": class " << cls << " tile meets slab " << p;
            }
          }
      for (const auto& b : plan.second)
        mark(stored, b.i0, std::min(b.i0 + 31, b.ilast), b.j0, std::min(b.j0 + onepass::kPassTileY - 1, b.jlast), b.k0, b.k1);
      for (const auto& b : plan.first)
        mark(first, b.i0, std::min(b.i0 + 31, b.ilast), b.j0, std::min(b.j0 + onepass::kPassTileY - 1, b.jlast), b.k0, b.k1);
      std::size_t wrong = 0, step1_missing = 0;
      for (int k = 0; k <= n[2]; ++k)
        for (int j = 0; j <= n[1]; ++j)
          for (int i = 0; i <= n[0]; ++i)
            wrong += stored[at(i, j, k)] != 1;
      // step 2's samples and their neighbours within the grid are computed by step 1
      for (const auto& b : plan.second)
        for (int k = b.k0 - 1; k <= b.k1 + 1; ++k)
          for (int j = b.j0 - 1; j <= std::min(b.j0 + onepass::kPassTileY - 1, b.jlast) + 1; ++j)
            for (int i = b.i0 - 1; i <= std::min(b.i0 + 31, b.ilast) + 1; ++i)
              if (i >= 0 && i <= n[0] && j >= 0 && j <= n[1] && k >= 0 && k <= n[2]) step1_missing += first[at(i, j, k)] == 0;
      EXPECT_EQ(wrong, 0u) << label << ": samples stored other than once";
      EXPECT_EQ(step1_missing, 0u) << label << ": samples step 2 reads that step 1 does not compute";
      // the keep-out samples are the rest's
      for (const auto& s : keep_out) {
        bool in_rest = false;
        for (const auto& b : plan.second)
          in_rest = in_rest || (s[0] >= b.i0 && s[0] <= std::min(b.i0 + 31, b.ilast) && s[1] >= b.j0 &&
                                s[1] <= std::min(b.j0 + onepass::kPassTileY - 1, b.jlast) && s[2] >= b.k0 && s[2] <= b.k1);
        EXPECT_TRUE(in_rest) << label << ": source or probe at " << s[0] << ", " << s[1] << ", " << s[2];
      }
      if (shell) {
        EXPECT_GT(plan.shell[1][1].size(), 0u) << label << ": the x faces in 16 x 32 tiles";
        // On a grid of some size most shell tiles are of a face, not an edge (on the small ones the
        // edges' general tiles, cut into 8-plane pieces, are the most).
        std::size_t one_axis = 0, all = plan.shell_tiles();
        for (int shape = 0; shape < 2; ++shape)
          for (int cls = 1; cls < 4; ++cls) one_axis += plan.shell[shape][cls].size();
        if (n[0] >= 150 && n[1] >= 150 && n[2] >= 150)
          EXPECT_GT(one_axis, all / 2) << label << ": most shell tiles meet the slabs of one axis only";
        // With two-axis classes, on the large grid, every class of two axes has tiles, and the
        // general ones are fewer than the tiles of two axes (the corners and the x faces' few; on
        // the narrow grids most edge tiles reach a third axis's slab too).
        if (c.edges && n[0] >= 150 && n[1] >= 150 && n[2] >= 150) {
          const std::size_t two = plan.shell[0][4].size() + plan.shell[0][5].size() + plan.shell[0][6].size();
          for (int cls = 4; cls < 7; ++cls) EXPECT_GT(plan.shell[0][cls].size(), 0u) << label << ": class " << cls;
          EXPECT_LT(plan.shell[0][0].size() + plan.shell[1][0].size(), two) << label;
        }
      }
    }
  }
#endif
}

// The engine's set-up check of the shell lists (check_shell_lists): a tile in a class its shape has
// no kernel for is refused with the reason, in one launch and with a launch a class.
TEST(TwoStepPlan, ShellListsWithoutAKernelAreRefused) {
#if !VEM_WITH_CUDA
  GTEST_SKIP() << "built without CUDA: the plan of temporal blocking belongs to the CUDA engine";
#else
  auto expect_refused = [](const onepass::ShellLists& lists, const char* what) {
    try {
      onepass::check_shell_lists(lists);
      ADD_FAILURE() << what << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no kernel for"), std::string::npos) << e.what();
    }
  };
  onepass::ShellLists ok;
  ok.count[0][0] = ok.count[1][1] = ok.count[0][2] = ok.count[0][3] = ok.count[0][6] = 3;
  EXPECT_NO_THROW(onepass::check_shell_lists(ok));
  onepass::ShellLists wrong_shape = ok;
  wrong_shape.count[1][2] = 1;  // a y-face class in the x faces' shape
  expect_refused(wrong_shape, "a tile in shape 1, class 2");
  onepass::ShellLists classes = ok;
  classes.one_launch = false;
  EXPECT_NO_THROW(onepass::check_shell_lists(classes));
  classes.count[1][3] = 2;  // a z-face class in the x faces' shape
  expect_refused(classes, "a tile in shape 1, class 3 with a launch a class");
#endif
}

// The persistent kernel's sample plan (fused_step.h, plan_persistent) on 64^3 (the thread count of
// four 256-thread blocks on 132 multiprocessors, as on an H100 or H200), on a flat grid and on a
// grid whose every sample is plain but for its faces, with the task weights the engine (2) and
// the agreement test (1) use, and 4:
//  - every sample (i, j, k), 0 <= i <= nx etc., is in the plan exactly once, with its coordinates
//    packed as the kernel unpacks them;
//  - a sample is marked plain exactly when the kernel's tests would all pass without it: inside
//    every update range (H_x and H_y below plane nz) and in no slab box of either set (checked
//    against the boxes, not the inner box the plan uses);
//  - each sample's tests word holds its update-range tests (H and E) and, for each set and axis,
//    the slab whose box holds it (checked against the boxes);
//  - each warp's 32 lanes of a round hold plain samples only, or other samples only (or none);
//  - the most loaded warp carries at most the mean load plus one task of the heavier kind
//    (longest task first to the least loaded warp);
//  - a grid with more than 1024 samples along an axis gets no plan.
TEST(PersistentPlan, DealsEverySampleOnceInWarpsOfOneKind) {
#if !VEM_WITH_CUDA
  GTEST_SKIP() << "built without CUDA: the sample plan belongs to the CUDA engine";
#else
  struct Case { std::array<int, 3> dims; int cpml; long long threads; };
  for (const Case c : {Case{{64, 64, 64}, 10, 4LL * 132 * 256}, Case{{90, 40, 12}, 3, 1024}, Case{{20, 24, 28}, 0, 2048}}) {
    FdtdSetup setup = plan_setup(c.dims[0], c.dims[1], c.dims[2]);
    if (c.cpml == 0)
      setup.boundaries = BoundarySpec::all(BoundaryType::pec);
    else
      for (auto& b : setup.boundaries.cpml) b.thickness = c.cpml;
    const FdtdOperator op(setup);
    const onepass::Grid g = onepass::grid_for(op);
    const onepass::CpmlSet ch = slab_set(op, false), ce = slab_set(op, true);
    const int n[3] = {g.nx, g.ny, g.nz};
    const std::size_t samples = std::size_t(n[0] + 1) * (n[1] + 1) * (n[2] + 1);
    auto at = [&](int i, int j, int k) { return i + std::size_t(n[0] + 1) * (j + std::size_t(n[1] + 1) * k); };
    auto in_range = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
    auto plain = [&](int i, int j, int k) {
      if (k >= n[2]) return false;
      for (int q = 0; q < 6; ++q) {
        if (!in_range(i, g.lo[q][0], g.hi[q][0]) || !in_range(j, g.lo[q][1], g.hi[q][1])) return false;
        if (q < 3 && !in_range(k, g.lo[q][2], g.hi[q][2])) return false;
      }
      const int p[3] = {i, j, k};
      for (const onepass::CpmlSet* cs : {&ch, &ce})
        for (int s = 0; s < cs->count; ++s)
          if (box_meets(cs->s[s], p, p)) return false;
      return true;
    };
    for (const int weight : {2, 4, 1}) {
      const std::string label = std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " + std::to_string(n[2]) +
                                ", CPML " + std::to_string(c.cpml) + ", weight " + std::to_string(weight);
      onepass::PersistentPlan plan;
      ASSERT_TRUE(onepass::plan_persistent(g, ch, ce, c.threads, weight, plan)) << label;
      ASSERT_EQ(plan.threads, c.threads) << label;
      ASSERT_EQ(plan.samples.size(), std::size_t(plan.rounds) * std::size_t(c.threads)) << label;
      std::vector<int> seen(samples, 0);
      ASSERT_EQ(plan.tests.size(), plan.samples.size()) << label;
      // the tests word the kernel would work out for (i, j, k)
      auto expected_tests = [&](int i, int j, int k) {
        unsigned w = 0;
        const int p[3] = {i, j, k};
        for (int set = 0; set < 2; ++set) {
          const onepass::CpmlSet& cs = set == 0 ? ch : ce;
          for (int q = 0; q < cs.count; ++q)
            if (box_meets(cs.s[q], p, p))
              w |= unsigned(q + 1) << ((set == 0 ? onepass::kTestsHSlabs : onepass::kTestsESlabs) + 3 * cs.s[q].axis);
        }
        for (int q = 0; q < 3; ++q) {
          if ((q == 2 || k < n[2]) && in_range(i, g.lo[3 + q][0], g.hi[3 + q][0]) && in_range(j, g.lo[3 + q][1], g.hi[3 + q][1]))
            w |= 1u << (onepass::kTestsHRange + q);
          if (in_range(i, g.lo[q][0], g.hi[q][0]) && in_range(j, g.lo[q][1], g.hi[q][1]) && in_range(k, g.lo[q][2], g.hi[q][2]))
            w |= 1u << (onepass::kTestsERange + q);
        }
        return w;
      };
      std::size_t wrong_mark = 0, wrong_tests = 0, mixed_warps = 0, plain_count = 0;
      const long long warps = c.threads / 32;
      std::vector<long long> load(static_cast<std::size_t>(warps), 0);
      for (int r = 0; r < plan.rounds; ++r)
        for (long long w = 0; w < warps; ++w) {
          int kinds = 0;  // bit 0: other samples, bit 1: plain ones
          for (int l = 0; l < 32; ++l) {
            const std::uint32_t v = plan.samples[std::size_t(r) * std::size_t(c.threads) + std::size_t(w) * 32 + std::size_t(l)];
            if (v == onepass::kPlanNone) continue;
            const int i = int(v & onepass::kPlanMask), j = int((v >> onepass::kPlanBits) & onepass::kPlanMask),
                      k = int((v >> (2 * onepass::kPlanBits)) & onepass::kPlanMask);
            ASSERT_TRUE(i <= n[0] && j <= n[1] && k <= n[2]) << label << ": packed sample " << v;
            ++seen[at(i, j, k)];
            wrong_tests += plan.tests[std::size_t(r) * std::size_t(c.threads) + std::size_t(w) * 32 + std::size_t(l)] !=
                           expected_tests(i, j, k);
            const bool marked = (v & onepass::kPlanPlain) != 0;
            wrong_mark += marked != plain(i, j, k);
            plain_count += marked;
            kinds |= marked ? 2 : 1;
          }
          mixed_warps += kinds == 3;
          if (kinds) load[std::size_t(w)] += kinds == 2 ? 1 : weight;
        }
      std::size_t not_once = 0;
      for (int v : seen) not_once += v != 1;
      EXPECT_EQ(not_once, 0u) << label << ": samples not dealt out exactly once";
      EXPECT_EQ(wrong_mark, 0u) << label << ": samples marked plain or not against the kernel's tests";
      EXPECT_EQ(wrong_tests, 0u) << label << ": samples whose tests word differs from their range tests and slabs";
      EXPECT_EQ(mixed_warps, 0u) << label << ": warp rounds mixing plain and other samples";
      if (c.cpml > 0) EXPECT_GT(plain_count, samples / 10) << label;
      const long long total = std::accumulate(load.begin(), load.end(), 0LL);
      const long long most = *std::max_element(load.begin(), load.end());
      EXPECT_LE(most, (total + warps - 1) / warps + weight) << label << ": the most loaded warp";
      std::cout << label << ": " << plan.rounds << " rounds, " << plain_count << " of " << samples
                << " samples plain, warp loads " << double(total) / double(warps) << " on average, " << most
                << " at most\n";
    }
  }
  onepass::PersistentPlan none;
  const FdtdOperator wide(plan_setup(1100, 30, 30));
  EXPECT_FALSE(onepass::plan_persistent(onepass::grid_for(wide), slab_set(wide, false), slab_set(wide, true), 4096, 4, none))
      << "1101 samples along x do not pack into 10 bits";
#endif
}
