// Proof item 5: the CPU and CUDA engines agree to 1e-5 relative L2 after 1000 steps on an
// odd-sized 97 x 61 x 43 domain with random materials from a table of 300 (anisotropic, lossy,
// magnetic), CPML on some faces, PEC / PMC / periodic on others, several sources of every kind.
// Both engines run float32; differences come from rounding order (FMA contraction on the GPU)
// only, which stays near 1e-6 for this stable, lossy problem.
// With VEM_TEST_SMALL_GRIDS=1 (compute-sanitizer runs, test_support.h) the domain is 33 x 25 x 23
// (same faces, CPML thickness, sources and probes at proportional places, 3^3-cell palette blocks
// so that the packed table still has more tuples than constant memory holds) and every run takes
// 30 % of the steps: the same kernels and launch variants, the same 1e-5 / bit-for-bit limits.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "test_support.h"
#include "vem/core/error.h"
#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

using vem_test::small_or;

// Steps of a run: `normal`, or 30 % of it on the small grid.
int steps(int normal) { return small_or(normal, (3 * normal) / 10); }

// The small grid has fewer cells than 65536, so a coefficient-array model with every cell its own
// values (palette 0) would fit the packed table: there the engines are told to read the arrays,
// the path they take by themselves at the normal size.
EngineTuning::Coefficients coefficients_for(MaterialMode mode, int palette,
                                            EngineTuning::Coefficients asked) {
  if (vem_test::small_grids() && mode == MaterialMode::coefficient_array && palette == 0 &&
      asked == EngineTuning::Coefficients::automatic)
    return EngineTuning::Coefficients::arrays;
  return asked;
}

struct Case {
  MaterialMode mode;
  EngineTuning::TablePlacement table;
  const char* name;
  int z_chunk = 0;
  EngineTuning::CpmlLaunch cpml = EngineTuning::CpmlLaunch::automatic;
  int palette = 0;  // > 0: a coefficient-array model whose values come from this many choices
  EngineTuning::Coefficients coefficients = EngineTuning::Coefficients::automatic;
  EngineTuning::Step step = EngineTuning::Step::automatic;  // one_pass: fused_step.h (issue 16)
};

// palette > 0 (coefficient arrays only): each cell's values are drawn from `palette` choices and
// averaged at the edges, so the model has a few thousand distinct coefficient tuples and the
// CUDA engine reads them as a table (FdtdOperator::coefficient_index); 0: every cell its own
// random values, more than 65536 distinct tuples, so the engines read the arrays.
FdtdSetup make_setup(MaterialMode mode, unsigned seed, int palette = 0) {
  FdtdSetup s;
  s.grid = small_or(YeeGrid{97, 61, 43, 1.0e-3, 1.3e-3, 0.8e-3}, YeeGrid{33, 25, 23, 1.0e-3, 1.3e-3, 0.8e-3});
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::periodic,
                       BoundaryType::periodic, BoundaryType::pec, BoundaryType::cpml};
  s.boundaries.face[4] = BoundaryType::pec;
  for (auto& c : s.boundaries.cpml) c.thickness = 8;
  s.boundaries.cpml[1].kappa_max = 3.0;
  s.boundaries.cpml[1].alpha_max = 0.05;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::int64_t n = s.grid.cell_count();
  if (mode == MaterialMode::indexed) {
    s.material_mode = MaterialMode::indexed;
    for (int m = 0; m < 300; ++m) {
      Material mat;
      mat.name = "random " + std::to_string(m);
      for (int a = 0; a < 3; ++a) {
        mat.eps_r[a] = 1.0 + 60.0 * u(rng);
        mat.sigma_e[a] = 2.0 * u(rng);
        mat.mu_r[a] = 1.0 + 2.0 * u(rng);
        mat.sigma_m[a] = 50.0 * u(rng);
      }
      s.materials.push_back(mat);
    }
    s.material_index.resize(n);
    std::uniform_int_distribution<int> pick(0, 299);
    for (auto& v : s.material_index) v = std::uint16_t(pick(rng));
  } else {
    s.material_mode = MaterialMode::coefficient_array;
    s.medium.eps_r.assign(3, std::vector<float>(n));
    s.medium.sigma_e.assign(1, std::vector<float>(n));
    s.medium.mu_r.assign(1, std::vector<float>(n));
    // palette > 0: constant over blocks of 6^3 cells (3^3 on the small grid), like a segmented model.
    std::uniform_int_distribution<int> pick(0, std::max(palette, 1) - 1);
    const YeeGrid& g = s.grid;
    auto fill = [&](std::vector<float>& arr, double lo, double span) {
      if (palette == 0) {
        for (auto& v : arr) v = float(lo + span * u(rng));
        return;
      }
      const int b = small_or(6, 3);
      const int bx = (g.nx + b - 1) / b, by = (g.ny + b - 1) / b, bz = (g.nz + b - 1) / b;
      std::vector<float> block(std::size_t(bx) * by * bz);
      for (auto& v : block) v = float(lo + span * pick(rng) / double(palette));
      for (int k = 0; k < g.nz; ++k)
        for (int j = 0; j < g.ny; ++j)
          for (int i = 0; i < g.nx; ++i)
            arr[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = block[i / b + bx * (j / b + by * (k / b))];
    };
    for (auto& arr : s.medium.eps_r) fill(arr, 1.0, 60.0);
    fill(s.medium.sigma_e[0], 0.0, 2.0);
    fill(s.medium.mu_r[0], 1.0, 1.0);
    s.medium.average_at_edges = palette > 0;
  }
  const Waveform w = Waveform::differentiated_gaussian_for_bandwidth(40e9);
  const bool small = vem_test::small_grids();
  PointSource j1; j1.i = small ? 14 : 40; j1.j = small ? 12 : 30; j1.k = small ? 9 : 20;
  j1.direction = {0.2, 0.3, 1.0}; j1.waveform = w;
  PointSource m1; m1.kind = PointSource::Kind::magnetic_current; m1.i = small ? 21 : 60; m1.j = small ? 4 : 10;
  m1.k = small ? 14 : 30; m1.direction = {1, 0, 0}; m1.amplitude = 377.0; m1.waveform = w;
  PointSource h1; h1.kind = PointSource::Kind::hard_e; h1.i = small ? 7 : 20; h1.j = 0; h1.k = small ? 5 : 10;
  h1.direction = {0, 1, 0}; h1.amplitude = 1e-3; h1.waveform = Waveform::modulated_gaussian(20e9, 20e9);
  s.sources = {j1, m1, h1};
  s.probes = small ? std::vector<Probe>{{"ez", Component::Ez, 17, 12, 9}, {"hy", Component::Hy, 4, 2, 20}}
                   : std::vector<Probe>{{"ez", Component::Ez, 50, 30, 20}, {"hy", Component::Hy, 10, 5, 40}};
  return s;
}

// make_setup with CPML on every face and the E sources only (the magnetic one removed; the hard E
// source moved off the no longer PEC face, inside the y CPML): a model whose whole step folds
// into the one-pass and persistent kernels.
FdtdSetup cpml_everywhere_setup(MaterialMode mode, unsigned seed) {
  FdtdSetup s = make_setup(mode, seed);
  for (int f = 0; f < 6; ++f) s.boundaries.face[f] = BoundaryType::cpml;
  s.sources.erase(std::remove_if(s.sources.begin(), s.sources.end(),
                                 [](const PointSource& p) { return p.kind == PointSource::Kind::magnetic_current; }),
                  s.sources.end());
  s.sources.back().j = 3;
  return s;
}

// The reference of the one-pass and persistent tests: two passes, stream launches.
EngineTuning two_pass_stream_tuning(MaterialMode mode) {
  EngineTuning two;
  two.step = EngineTuning::Step::two_pass;
  two.coefficients = coefficients_for(mode, 0, two.coefficients);
  two.graph = EngineTuning::Graph::off;
  return two;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

// Samples of `a` that differ from those of `b` (float comparison), and the squared norm of `b`
// (a test comparing zero fields would prove nothing).
std::pair<std::size_t, double> count_differences(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t differ = 0;
  double norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differ += a[i] != b[i];
    norm += double(b[i]) * b[i];
  }
  return {differ, norm};
}

}  // namespace

class CpuCudaAgreement : public testing::TestWithParam<Case> {};

TEST_P(CpuCudaAgreement, FieldsAgreeAfter1000Steps) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const Case c = GetParam();
  const FdtdOperator op(make_setup(c.mode, 1234, c.palette));
  auto cpu = make_engine(op, Backend::cpu);
  EngineTuning tuning;
  tuning.coefficients = coefficients_for(c.mode, c.palette, c.coefficients);
  tuning.table = c.table;
  tuning.z_chunk = c.z_chunk;
  tuning.cpml = c.cpml;
  tuning.step = c.step;
  auto gpu = make_engine(op, Backend::cuda, 0, nullptr, tuning);
  const int n = steps(1000);
  ASSERT_EQ(cpu->run(n), n);
  ASSERT_EQ(gpu->run(n), n);
  if (c.step == EngineTuning::Step::one_pass) EXPECT_EQ(gpu->one_pass_steps(), n);
  for (int ci = 0; ci < 6; ++ci) {
    const Component comp = Component(ci);
    const auto a = gpu->field(comp), b = cpu->field(comp);
    const double e = rel_l2(a, b);
    std::cout << c.name << " " << component_name(comp) << " relative L2 CUDA vs CPU = " << e << "\n";
    RecordProperty(std::string("rel_l2_") + component_name(comp), std::to_string(e));
    EXPECT_LT(e, 1e-5) << component_name(comp);
    double norm = 0;
    for (float v : b) norm += double(v) * v;
    EXPECT_GT(norm, 0.0) << component_name(comp) << " is identically zero: the test would be vacuous";
  }
  const auto pa = gpu->probes(), pb = cpu->probes();
  for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_LT(rel_l2(pa.values[p], pb.values[p]), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, CpuCudaAgreement,
    testing::Values(Case{MaterialMode::indexed, EngineTuning::TablePlacement::constant, "indexed_constant"},
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::global, "indexed_global"},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "coefficient_array"},
                    // The kernel variants the benchmark sweeps must compute the same function.
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::automatic,
                         "indexed_chunk7", 7},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "coefficient_array_chunk64", 64},
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::automatic,
                         "indexed_whole_column", 1024},
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::automatic,
                         "indexed_cpml_per_axis", 0, EngineTuning::CpmlLaunch::per_axis},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "coefficient_array_cpml_merged", 0, EngineTuning::CpmlLaunch::merged},
                    // Coefficient arrays read as a packed table (global memory: thousands of
                    // tuples), and the same forced into arrays.
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "coefficient_array_packed_table", 0, EngineTuning::CpmlLaunch::automatic, 3},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "coefficient_array_palette_as_arrays", 0, EngineTuning::CpmlLaunch::automatic, 3,
                         EngineTuning::Coefficients::arrays},
                    // One pass per step (issue 16): every coefficient path.
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::constant, "one_pass_indexed_constant", 0,
                         EngineTuning::CpmlLaunch::automatic, 0, EngineTuning::Coefficients::automatic,
                         EngineTuning::Step::one_pass},
                    Case{MaterialMode::indexed, EngineTuning::TablePlacement::global, "one_pass_indexed_global", 0,
                         EngineTuning::CpmlLaunch::per_axis, 0, EngineTuning::Coefficients::automatic,
                         EngineTuning::Step::one_pass},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "one_pass_coefficient_array", 0, EngineTuning::CpmlLaunch::automatic, 0,
                         EngineTuning::Coefficients::automatic, EngineTuning::Step::one_pass},
                    Case{MaterialMode::coefficient_array, EngineTuning::TablePlacement::automatic,
                         "one_pass_packed_table", 0, EngineTuning::CpmlLaunch::automatic, 3,
                         EngineTuning::Coefficients::automatic, EngineTuning::Step::one_pass}),
    [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// The two CPML launch layouts (fdtd_engine_cuda.cu: one launch per axis, or all slabs in one
// launch) and the two kernel launch modes (plain, programmatic dependent launch) make the same
// sums in the same order: the fields are bit for bit equal. The set-up has CPML on
// x-low, x-high and z-high, so the slabs overlap along four edges.
TEST(CpuCudaAgreementCpml, LaunchLayoutsAreBitwiseEqual) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(make_setup(mode, 99));
    using CL = EngineTuning::CpmlLaunch;
    using KL = EngineTuning::KernelLaunch;
    EngineTuning per_axis;
    per_axis.cpml = CL::per_axis;
    per_axis.launch = KL::plain;
    per_axis.coefficients = coefficients_for(mode, 0, per_axis.coefficients);
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, per_axis);
    ASSERT_EQ(ref->run(steps(500)), steps(500));
    // Also the programmatic dependent launch of the stepping kernels (EngineTuning::launch).
    const std::pair<CL, KL> variants[] = {{CL::merged, KL::plain}, {CL::merged, KL::programmatic},
                                          {CL::per_axis, KL::programmatic}};
    for (auto [layout, launch] : variants) {
      EngineTuning t;
      t.cpml = layout;
      t.launch = launch;
      t.coefficients = coefficients_for(mode, 0, t.coefficients);
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      ASSERT_EQ(eng->run(steps(500)), steps(500));
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        std::size_t differ = 0;
        for (std::size_t i = 0; i < fa.size(); ++i) differ += fa[i] != fb[i];
        EXPECT_EQ(differ, 0u) << (layout == CL::merged ? "merged" : "per axis")
                              << (launch == KL::programmatic ? ", programmatic launch " : ", plain launch ")
                              << component_name(Component(ci)) << ": " << differ << " samples differ";
      }
    }
  }
}

// The small-grid variants (issue 16, fdtd/cuda/graph_stepping.cuh): steps recorded in CUDA graphs
// (chunks of 32 and of 5 steps; runs of 37 steps so that remainder chunks and the update of an
// executable graph of the same length are exercised) and the L2 persisting window replay the
// same launches: fields and probes are bit for bit those of stream launches. The set-up has
// sources of every kind (per-step values), probes, periodic faces (ghost copies) and CPML.
TEST(CpuCudaAgreementGraph, GraphsAndL2WindowAreBitwiseEqual) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  setenv("VEM_CUDA_GRAPH_STRICT", "1", 1);  // a failed capture fails the test (no quiet fallback)
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(make_setup(mode, 5));
    using GR = EngineTuning::Graph;
    using LP = EngineTuning::L2Persist;
    EngineTuning base;
    base.graph = GR::off;
    base.l2_persist = LP::off;
    base.coefficients = coefficients_for(mode, 0, base.coefficients);
    const int n = steps(400);
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, base);
    ASSERT_EQ(ref->run(n, {}, 37), n);
    struct V { GR g; int chunk; LP l2; const char* name; };
    const V vs[] = {{GR::on, 0, LP::off, "graph 32"}, {GR::on, 5, LP::off, "graph 5"},
                    {GR::off, 0, LP::on, "l2 window"}, {GR::on, 0, LP::on, "graph 32 + l2 window"},
                    {GR::automatic, 0, LP::automatic, "automatic"}};
    for (const V& v : vs) {
      EngineTuning t = base;
      t.graph = v.g;
      t.graph_chunk = v.chunk;
      t.l2_persist = v.l2;
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      ASSERT_EQ(eng->run(n, {}, 37), n);
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        EXPECT_EQ(differ, 0u) << v.name << " " << component_name(Component(ci)) << ": " << differ << " samples differ";
        EXPECT_GT(norm, 0.0);
      }
      const auto pa = eng->probes(), pb = ref->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_EQ(pa.values[p], pb.values[p]) << v.name << " probe " << p;
    }
  }
}

// Coefficient arrays equal bit for bit to another of their kind are stored once by the CUDA engine
// (coefficient_arrays_stored): an isotropic, non-magnetic medium without edge averaging needs 4
// of the 12 (the a and b of E and of H); for the anisotropic, edge-averaged model of make_setup
// the count is that of the distinct arrays of each kind among the operator's 12 (at least 6: its
// three eps_r arrays make the E ones differ). The fields stay those of the packed table bit for
// bit (any pointer mixed up would change them), in two passes and in one.
TEST(CpuCudaAgreementPacked, EqualArraysStoredOnceAreBitwiseEqualToTable) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (int isotropic = 0; isotropic < 2; ++isotropic) {
    FdtdSetup s = make_setup(MaterialMode::coefficient_array, 11, 3);
    if (isotropic) {
      s.medium.eps_r.resize(1);
      s.medium.mu_r.clear();
      s.medium.average_at_edges = false;
    }
    const FdtdOperator op(s);
    ASSERT_NE(op.coefficient_index(), nullptr);
    int distinct = 0;  // arrays unequal to every earlier one of their kind (E a, E b, H a, H b)
    const auto& arr = op.coefficient_arrays();
    for (int q = 0; q < 12; ++q) {
      bool seen = false;
      for (int p = (q < 6 ? 0 : 6) + (q & 1); p < q; p += 2)
        seen = seen || (arr[p].size() == arr[q].size() &&
                        std::memcmp(arr[p].data(), arr[q].data(), arr[q].size() * sizeof(float)) == 0);
      distinct += seen ? 0 : 1;
    }
    std::cout << (isotropic ? "isotropic" : "anisotropic") << ": " << distinct << " distinct arrays\n";
    if (isotropic) EXPECT_EQ(distinct, 4);
    else EXPECT_GE(distinct, 6);
    for (EngineTuning::Step step : {EngineTuning::Step::two_pass, EngineTuning::Step::one_pass}) {
      EngineTuning arrays, table;
      arrays.coefficients = EngineTuning::Coefficients::arrays;
      table.coefficients = EngineTuning::Coefficients::table;
      arrays.step = table.step = step;
      auto ref = make_engine(op, Backend::cuda, 0, nullptr, table);
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, arrays);
      EXPECT_EQ(eng->coefficient_arrays_stored(), distinct);
      EXPECT_EQ(ref->coefficient_arrays_stored(), 0);
      ASSERT_EQ(ref->run(steps(300)), steps(300));
      ASSERT_EQ(eng->run(steps(300)), steps(300));
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        EXPECT_EQ(differ, 0u) << (isotropic ? "isotropic " : "anisotropic ") << component_name(Component(ci));
        EXPECT_GT(norm, 0.0);
      }
    }
  }
}

// A coefficient-array model read from its packed table (FdtdOperator::coefficient_index) gives the
// fields of the 12 arrays bit for bit: the same floats enter the same expressions. Two palettes:
// few tuples (constant-memory table) and thousands (global-memory table).
TEST(CpuCudaAgreementPacked, PackedTableIsBitwiseEqualToArrays) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (int palette : {1, 3}) {
    const FdtdOperator op(make_setup(MaterialMode::coefficient_array, 7, palette));
    ASSERT_NE(op.coefficient_index(), nullptr);
    std::cout << "palette " << palette << ": " << op.coefficient_index()->entries() << " distinct tuples\n";
    EngineTuning arrays, table;
    arrays.coefficients = EngineTuning::Coefficients::arrays;
    table.coefficients = EngineTuning::Coefficients::table;
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, arrays);
    auto eng = make_engine(op, Backend::cuda, 0, nullptr, table);
    ASSERT_EQ(ref->run(steps(300)), steps(300));
    ASSERT_EQ(eng->run(steps(300)), steps(300));
    for (int ci = 0; ci < 6; ++ci) {
      const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
      const auto [differ, norm] = count_differences(fa, fb);
      EXPECT_EQ(differ, 0u) << "palette " << palette << " " << component_name(Component(ci)) << ": "
                            << differ << " samples differ";
      EXPECT_GT(norm, 0.0);
    }
  }
}

// Same agreement with PMC faces (ghost mirroring) instead of periodic ones.
TEST(CpuCudaAgreementPmc, PmcFacesAgree) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  FdtdSetup s = make_setup(MaterialMode::indexed, 99);
  s.boundaries.face[2] = BoundaryType::pmc;
  s.boundaries.face[3] = BoundaryType::pmc;
  s.boundaries.face[4] = BoundaryType::pmc;
  const FdtdOperator op(s);
  auto cpu = make_engine(op, Backend::cpu);
  auto gpu = make_engine(op, Backend::cuda);
  cpu->run(steps(500));
  gpu->run(steps(500));
  for (int ci = 0; ci < 6; ++ci)
    EXPECT_LT(rel_l2(gpu->field(Component(ci)), cpu->field(Component(ci))), 1e-5) << ci;
}

// One pass per step (issue 16, fused_step.h) against the two-pass kernels on the same set-up
// (CPML with overlapping slab edges, periodic and PEC faces, a magnetic and a hard E source) and
// with PMC faces: within 1e-6 relative L2 per component (the number of samples that differ at all
// is printed), for several tiles and z chunks (one that does not divide the grid), with every
// step run as one pass.
TEST(CpuCudaAgreementOnePass, OnePassMatchesTwoPass) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (int pmc = 0; pmc < 2; ++pmc)
    for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
      FdtdSetup s = make_setup(mode, 4321);
      if (pmc) s.boundaries.face[2] = s.boundaries.face[3] = s.boundaries.face[4] = BoundaryType::pmc;
      const FdtdOperator op(s);
      EngineTuning two;
      two.step = EngineTuning::Step::two_pass;
      two.coefficients = coefficients_for(mode, 0, two.coefficients);
      auto ref = make_engine(op, Backend::cuda, 0, nullptr, two);
      const int n = steps(400);
      ASSERT_EQ(ref->run(n), n);
      EXPECT_EQ(ref->one_pass_steps(), 0);
      // Third value: 1 = the CPML by the slab kernels (E computed again), 0 = folded into the pass
      // (here only the H corrections fold: the magnetic source and the periodic / PMC faces make E
      // samples to compute again; CpuCudaAgreementOnePass.FoldedCpml covers the E ones). The short
      // z chunks give tiles clear of every face and slab (fused_step.cu's interior tiles); 64 and
      // 1000 give none on this grid.
      const int variants[][3] = {{8, 64, 0}, {4, 7, 0}, {8, 7, 0}, {16, 1000, 0}, {8, 64, 1}, {4, 7, 1}};
      for (const auto& v : variants) {
        EngineTuning t = two;
        t.step = EngineTuning::Step::one_pass;
        t.onepass_tile_y = v[0];
        t.onepass_z_chunk = v[1];
        t.onepass_cpml = v[2] ? EngineTuning::OnePassCpml::slab_kernels : EngineTuning::OnePassCpml::folded;
        auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
        ASSERT_EQ(eng->run(n / 2), n / 2);  // two runs: the arrays swap across run() calls too
        ASSERT_EQ(eng->run(n - n / 2), n - n / 2);
        EXPECT_EQ(eng->one_pass_steps(), n);
        for (int ci = 0; ci < 6; ++ci) {
          const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
          const auto [differ, norm] = count_differences(fa, fb);
          const double e = rel_l2(fa, fb);
          std::cout << (pmc ? "pmc " : "") << (mode == MaterialMode::indexed ? "indexed" : "arrays") << " tile 32x"
                    << v[0] << " chunk " << v[1] << (v[2] ? " slab kernels " : " folded ")
                    << component_name(Component(ci)) << ": rel L2 " << e << ", "
                    << differ << " of " << fa.size() << " samples differ\n";
          EXPECT_GT(norm, 0.0);
          EXPECT_LE(e, 1e-6) << component_name(Component(ci));
        }
        const auto pa = eng->probes(), pb = ref->probes();
        for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_LE(rel_l2(pa.values[p], pb.values[p]), 1e-6);
      }
    }
}

// The CPML folded into the one-pass step with nothing computed again (fused_step.cu): CPML on
// every face (one axis with kappa and alpha), electric sources only, so both the H and the E
// corrections run inside the pass, the H psi in two sets swapped per step. Against the two-pass
// kernels: within 1e-6 relative L2 per component and probe (the samples that differ at all are
// printed), indexed and arrays, several tiles / z chunks, runs split across run() calls, stream
// launches and CUDA graphs (re-captured per chunk, so each graph holds its own array and psi
// parity; odd chunk lengths on purpose), and a two-pass step in between (a DFT monitor attached
// for some steps makes the engine step in two passes: the slab kernels must find the current
// psi set).
TEST(CpuCudaAgreementOnePass, FoldedCpml) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  setenv("VEM_CUDA_GRAPH_STRICT", "1", 1);
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(cpml_everywhere_setup(mode, 77));
    const EngineTuning two = two_pass_stream_tuning(mode);
    const int n = steps(400);
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, two);
    ASSERT_EQ(ref->run(n), n);
    struct V { int ty, chunk; EngineTuning::Graph graph; int graph_chunk; bool two_pass_middle; const char* name; };
    const V variants[] = {{8, 64, EngineTuning::Graph::off, 0, false, "32x8/64 stream"},
                          {4, 7, EngineTuning::Graph::off, 0, false, "32x4/7 stream"},
                          {8, 7, EngineTuning::Graph::off, 0, false, "32x8/7 stream"},
                          {16, 0, EngineTuning::Graph::on, 7, false, "32x16/auto graphs of 7"},
                          {8, 0, EngineTuning::Graph::on, 32, true, "32x8/auto graphs of 32, two-pass middle"}};
    for (const V& v : variants) {
      EngineTuning t = two;
      t.step = EngineTuning::Step::one_pass;
      t.onepass_cpml = EngineTuning::OnePassCpml::folded;
      t.onepass_tile_y = v.ty;
      t.onepass_z_chunk = v.chunk;
      t.graph = v.graph;
      t.graph_chunk = v.graph_chunk;
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      int expected_one = n;
      if (v.two_pass_middle) {
        const int a = n / 3, b = n / 5;
        ASSERT_EQ(eng->run(a), a);
        {
          // A DFT monitor (an extension, attached while it lives) for b steps: those steps run in
          // two passes.
          DftMonitor mon(*eng, {20e9}, {Component::Ez});
          ASSERT_EQ(eng->run(b), b);
        }
        ASSERT_EQ(eng->run(n - a - b), n - a - b);
        expected_one = n - b;
      } else {
        ASSERT_EQ(eng->run(n / 2 + 1), n / 2 + 1);
        ASSERT_EQ(eng->run(n - n / 2 - 1), n - n / 2 - 1);
      }
      EXPECT_EQ(eng->one_pass_steps(), expected_one) << v.name;
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        const double e = rel_l2(fa, fb);
        std::cout << (mode == MaterialMode::indexed ? "indexed " : "arrays ") << v.name << " "
                  << component_name(Component(ci)) << ": rel L2 " << e << ", " << differ << " of " << fa.size()
                  << " samples differ\n";
        EXPECT_GT(norm, 0.0);
        EXPECT_LE(e, 1e-6) << v.name << " " << component_name(Component(ci));
      }
      const auto pa = eng->probes(), pb = ref->probes();
      for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_LE(rel_l2(pa.values[p], pb.values[p]), 1e-6) << v.name;
    }
  }
}

// Persistent stepping (EngineTuning::Step::persistent, fused_step.h launch_persistent): the steps
// of a run() in one cooperative kernel, an H and an E phase per step in place with grid barriers,
// the CPML folded into both, the E point sources (a soft and a hard one, the hard one inside the
// y CPML) applied and the probes recorded by the kernel. The model of FoldedCpml (CPML on every
// face, E sources only). Against the two-pass kernels: within 1e-6 relative L2 per component and
// probe (the differing samples are printed; the same expressions in the same order give the same
// floats), indexed and arrays, runs of odd and even lengths across run() calls, a run longer than
// one launch (1024 steps), and steps in two passes in between (a DFT monitor for some steps: the
// slab kernels must find the psi the kernel left). A model the kernel cannot step (periodic and
// PMC faces, a magnetic source) asked for persistent steps takes the one-pass step instead.
TEST(CpuCudaAgreementOnePass, PersistentMatchesTwoPass) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(cpml_everywhere_setup(mode, 91));
    const EngineTuning two = two_pass_stream_tuning(mode);
    struct V { int total; bool two_pass_middle; const char* name; };
    const int n = steps(400);
    const V variants[] = {{n, false, "split runs"}, {n, true, "two-pass middle"},
                          {1100, false, "1100 steps (two launches)"}};
    std::unique_ptr<FdtdEngine> ref;
    int ref_steps = 0;
    for (const V& v : variants) {
      if (ref_steps != v.total) {
        ref = make_engine(op, Backend::cuda, 0, nullptr, two);
        ASSERT_EQ(ref->run(v.total), v.total);
        ref_steps = v.total;
      }
      EngineTuning t = two;
      t.step = EngineTuning::Step::persistent;
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      int expected = v.total;
      if (v.two_pass_middle) {
        const int a = v.total / 3, b = v.total / 5;
        ASSERT_EQ(eng->run(a), a);
        {
          DftMonitor mon(*eng, {20e9}, {Component::Ez});
          ASSERT_EQ(eng->run(b), b);
        }
        ASSERT_EQ(eng->run(v.total - a - b), v.total - a - b);
        expected = v.total - b;
      } else if (v.total == n) {
        ASSERT_EQ(eng->run(n / 2 + 1), n / 2 + 1);
        ASSERT_EQ(eng->run(n - n / 2 - 1), n - n / 2 - 1);
      } else {
        ASSERT_EQ(eng->run(v.total), v.total);
      }
      EXPECT_EQ(eng->persistent_steps(), expected) << v.name;
      EXPECT_EQ(eng->one_pass_steps(), 0) << v.name;
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        const double e = rel_l2(fa, fb);
        std::cout << "persistent " << (mode == MaterialMode::indexed ? "indexed " : "arrays ") << v.name << " "
                  << component_name(Component(ci)) << ": rel L2 " << e << ", " << differ << " of " << fa.size()
                  << " samples differ\n";
        EXPECT_GT(norm, 0.0);
        EXPECT_LE(e, 1e-6) << v.name << " " << component_name(Component(ci));
      }
      const auto pa = eng->probes(), pb = ref->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      for (std::size_t p = 0; p < pa.values.size(); ++p) {
        ASSERT_EQ(pa.values[p].size(), std::size_t(v.total));
        EXPECT_LE(rel_l2(pa.values[p], pb.values[p]), 1e-6) << v.name << " probe " << p;
      }
    }
  }
  // Not possible for this model: the one-pass step, the same fields.
  const FdtdOperator op(make_setup(MaterialMode::indexed, 4321));
  EngineTuning t;
  t.step = EngineTuning::Step::two_pass;
  auto ref = make_engine(op, Backend::cuda, 0, nullptr, t);
  t.step = EngineTuning::Step::persistent;
  auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
  const int n = steps(200);
  ASSERT_EQ(ref->run(n), n);
  ASSERT_EQ(eng->run(n), n);
  EXPECT_EQ(eng->persistent_steps(), 0);
  EXPECT_EQ(eng->one_pass_steps(), n);
  for (int ci = 0; ci < 6; ++ci)
    EXPECT_LE(rel_l2(eng->field(Component(ci)), ref->field(Component(ci))), 1e-6) << component_name(Component(ci));
}

// Two steps per pass asked (over `t`) for a model with periodic faces (make_setup's): refused,
// the message naming temporal blocking and the periodic face.
static void expect_two_steps_refused(const FdtdOperator& op, EngineTuning t) {
  t.temporal_blocking = EngineTuning::TemporalBlocking::two_steps;
  try {
    make_engine(op, Backend::cuda, 0, nullptr, t);
    ADD_FAILURE() << "temporal blocking accepted a model with periodic faces";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("temporal blocking"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("periodic"), std::string::npos) << e.what();
  }
}

// Temporal blocking (EngineTuning::temporal_blocking, fused_step.h "two steps per pass"): the
// interior tiles take two steps per pass (E^n, H^{n-1/2} read once), the rest steps twice in
// one-pass blocks through a third set of arrays, the CPML psi of both kinds through a second set.
// The model of FoldedCpml: CPML on every face, a soft E source and a probe in the interior (the
// tiles around them are left to the one-pass blocks), a hard E source inside the y CPML. Against
// the one-pass step: every field sample and every probe value bit for bit, indexed, arrays and
// float16 storage, interior blocks of 32 x 16 and 32 x 32 threads, z chunks that do and do not
// divide the interior, both launch orders of the interior and the rest's first step, runs of odd
// length across run() calls (a single one-pass step ends them),
// and steps in two passes in between (a DFT monitor for some steps: the CPML psi must be where the
// slab kernels look). The shell tiles (VEM_TWO_STEP_SHELL=1: the CPML shell and the faces in
// two-step tiles too, the tiles next to the sources and probes, one of them in the y CPML, left to
// the rest) the same way, in both launch orders, with every class of tile in one launch and a
// launch a class (the two-axis classes too), the shell tiles' planes other than the interior's
// (VEM_TWO_STEP_SHELL_CHUNK), the general tiles cut or not, the x faces' tiles narrow or not, the tiles of two
// axes in classes of their own (the default) or general (VEM_TWO_STEP_SHELL_EDGES=0), the shell
// launch on a stream of its own beside the rest's steps (VEM_TWO_STEP_SHELL_STREAM=1, in both
// orders of the interior, and the interior launched after the shell but beside it:
// VEM_TWO_STEP_ORDER=shell_first), step 2's point sources and probes before the joins (the default with
// the shell beside the rest; VEM_TWO_STEP_TAIL=before_join) or after them (the default otherwise;
// VEM_TWO_STEP_TAIL=after_join); the engine must have stepped every pair with them. Pairs captured in CUDA graphs (VEM_TWO_STEP_GRAPH=1), with
// and without shell tiles, the same way; the interior tiles as the shell launch's last blocks
// (VEM_TWO_STEP_INTERIOR_IN_SHELL=1) and the rest's stream first (VEM_TWO_STEP_REST_FIRST=1), the
// packed pair that is the default from 2 M cells below 4 M. A model the pass cannot take whole
// (periodic faces, a magnetic source) is refused with the reason.
TEST(CpuCudaAgreementOnePass, TwoStepsPerPassMatchOnePass) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  setenv("VEM_CUDA_GRAPH_STRICT", "1", 1);  // the variants with pairs in graphs: a failed capture fails
  struct M { FdtdSetup setup; const char* name; };
  FdtdSetup half = cpml_everywhere_setup(MaterialMode::indexed, 77);
  half.field_storage = FieldStorage::float16;
  for (PointSource& p : half.sources) p.amplitude *= 1e-6;  // E within float16's range
  const M models[] = {{cpml_everywhere_setup(MaterialMode::indexed, 77), "indexed"},
                      {cpml_everywhere_setup(MaterialMode::coefficient_array, 77), "arrays"},
                      {half, "indexed float16"}};
  for (const M& m : models) {
    const FdtdOperator op(m.setup);
    const MaterialMode mode = op.material_mode();
    EngineTuning one = two_pass_stream_tuning(mode);
    one.step = EngineTuning::Step::one_pass;
    one.onepass_cpml = EngineTuning::OnePassCpml::folded;
    const int n = steps(400);
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, one);
    ASSERT_EQ(ref->run(n), n);
    // The hoisted slabs in the one-pass step's boundary tiles (VEM_ONEPASS_HOIST=1) give its fields.
    {
      setenv("VEM_ONEPASS_HOIST", "1", 1);
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, one);
      unsetenv("VEM_ONEPASS_HOIST");
      ASSERT_EQ(eng->run(n), n);
      for (int ci = 0; ci < 6; ++ci) {
        const auto [differ, norm] = count_differences(eng->field(Component(ci)), ref->field(Component(ci)));
        EXPECT_GT(norm, 0.0) << m.name;
        EXPECT_EQ(differ, 0u) << m.name << ", one pass with hoisted slabs " << component_name(Component(ci));
      }
      const auto pa = eng->probes(), pb = ref->probes();
      for (std::size_t p = 0; p < pa.values.size(); ++p)
        EXPECT_EQ(count_differences(pa.values[p], pb.values[p]).first, 0u) << m.name << ", hoisted, probe " << p;
    }
    // env: the engine's measurement switches (fdtd_engine_cuda.cu, setup_two_step), set while it is made.
    struct V {
      int ty, chunk;
      bool two_pass_middle;
      const char* env_name;
      const char* env_value;
      const char* name;
      const char* env2_name = nullptr;  // a second and a third switch
      const char* env2_value = nullptr;
      const char* env3_name = nullptr;
      const char* env3_value = nullptr;
    };
    const V variants[] = {{16, 64, false, nullptr, nullptr, "32x16, 64 planes"},
                          {16, 7, false, nullptr, nullptr, "32x16, 7 planes"},
                          {32, 5, false, nullptr, nullptr, "32x32, 5 planes"},
                          {16, 0, true, nullptr, nullptr, "32x16, two-pass middle"},
                          {16, 0, false, "VEM_TWO_STEP_ORDER", "interior_first", "32x16, interior launched first"},
                          {16, 0, false, "VEM_TWO_STEP_HOIST", "0", "32x16, rest with chained slabs"},
                          {16, 0, false, "VEM_TWO_STEP_ALIGN", "0", "32x16, interior box not aligned"},
                          {16, 5, false, "VEM_TWO_STEP_PASS_CHUNK", "3", "32x16, rest blocks of 3 planes"},
                          // 0.02 blocks a multiprocessor: 2-3 blocks, each looping over many tiles
                          {16, 7, false, "VEM_TWO_STEP_INTERIOR_GRID", "0.02", "32x16, 7 planes, interior in 2-3 blocks"},
                          {16, 0, false, "VEM_TWO_STEP_INTERIOR_GRID", "2", "32x16, interior in 2 blocks a multiprocessor"},
                          {16, 0, false, "VEM_SHARED_TABLE", "0", "32x16, material table in the constant bank"},
                          {32, 5, false, "VEM_SHARED_TABLE", "0", "32x32, 5 planes, material table in the constant bank"},
                          // the CPML shell and the faces in two-step tiles (the tiles next to the
                          // sources and probes, one of them in the y CPML, left to the rest)
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1", "32x16, 7 planes, shell tiles"},
                          {32, 5, false, "VEM_TWO_STEP_SHELL", "1", "32x32, 5 planes, shell tiles"},
                          {16, 0, true, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, two-pass middle"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, the interior forked after them",
                           "VEM_TWO_STEP_ORDER", "interior_after"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1", "32x16, 7 planes, shell tiles all 32 x 16",
                           "VEM_TWO_STEP_SHELL_NARROW", "0"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, general shell tiles in pieces of 3 planes",
                           "VEM_TWO_STEP_SHELL_GENERAL_CHUNK", "3"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, general shell tiles in pieces of 8 planes",
                           "VEM_TWO_STEP_SHELL_GENERAL_CHUNK", "8"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, two-axis shell tiles in pieces of 3 planes",
                           "VEM_TWO_STEP_SHELL_EDGE_CHUNK", "3"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1", "32x16, 7 planes, shell tiles a launch a class",
                           "VEM_TWO_STEP_SHELL_LAUNCH", "classes"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles of 5 planes",
                           "VEM_TWO_STEP_SHELL_CHUNK", "5"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1", "32x16, 7 planes, shell tiles with 64-bit offsets",
                           "VEM_TWO_STEP_OFFSETS", "64"},
                          // the shell tiles of two axes in the general class
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, two-axis tiles general",
                           "VEM_TWO_STEP_SHELL_EDGES", "0"},
                          {32, 5, false, "VEM_TWO_STEP_SHELL", "1", "32x32, 5 planes, shell tiles, two-axis tiles general",
                           "VEM_TWO_STEP_SHELL_EDGES", "0"},
                          // the shell launch beside the rest's steps
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles beside the rest",
                           "VEM_TWO_STEP_SHELL_STREAM", "1"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1",
                           "32x16, 7 planes, shell tiles beside the rest, the interior forked after them",
                           "VEM_TWO_STEP_SHELL_STREAM", "1", "VEM_TWO_STEP_ORDER", "interior_after"},
                          {16, 0, true, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles beside the rest, two-pass middle",
                           "VEM_TWO_STEP_SHELL_STREAM", "1"},
                          // the interior launched after the shell and beside it
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles launched before the interior beside them",
                           "VEM_TWO_STEP_ORDER", "shell_first"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1",
                           "32x16, 7 planes, shell tiles beside the rest, launched before the interior beside them",
                           "VEM_TWO_STEP_SHELL_STREAM", "1", "VEM_TWO_STEP_ORDER", "shell_first"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1",
                           "32x16, shell tiles beside the rest, step 2's sources and probes after the joins",
                           "VEM_TWO_STEP_SHELL_STREAM", "1", "VEM_TWO_STEP_TAIL", "after_join"},
                          {16, 0, false, "VEM_TWO_STEP_TAIL", "before_join", "32x16, step 2's sources and probes before the join"},
                          // pairs captured in CUDA graphs (the interior forked inside the capture)
                          {16, 0, false, "VEM_TWO_STEP_GRAPH", "1", "32x16, pairs in graphs"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1", "32x16, 7 planes, shell tiles, pairs in graphs",
                           "VEM_TWO_STEP_GRAPH", "1"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles beside the rest, pairs in graphs",
                           "VEM_TWO_STEP_GRAPH", "1", "VEM_TWO_STEP_SHELL_STREAM", "1"},
                          // the packed pair (the default from 2 M cells below 4 M): the interior
                          // tiles as the shell launch's last blocks, the rest's stream first
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, the interior in the shell launch",
                           "VEM_TWO_STEP_INTERIOR_IN_SHELL", "1"},
                          {16, 7, false, "VEM_TWO_STEP_SHELL", "1",
                           "32x16, 7 planes, shell tiles, the interior in the shell launch, the rest's stream first",
                           "VEM_TWO_STEP_INTERIOR_IN_SHELL", "1", "VEM_TWO_STEP_REST_FIRST", "1"},
                          {16, 0, true, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, the interior in the shell launch, two-pass middle",
                           "VEM_TWO_STEP_INTERIOR_IN_SHELL", "1", "VEM_TWO_STEP_REST_FIRST", "1"},
                          {16, 0, false, "VEM_TWO_STEP_SHELL", "1", "32x16, shell tiles, the rest's stream first",
                           "VEM_TWO_STEP_REST_FIRST", "1"}};
    for (const V& v : variants) {
      if (v.env_name) setenv(v.env_name, v.env_value, 1);
      if (v.env2_name) setenv(v.env2_name, v.env2_value, 1);
      if (v.env3_name) setenv(v.env3_name, v.env3_value, 1);
      EngineTuning t = one;
      t.temporal_blocking = EngineTuning::TemporalBlocking::two_steps;
      t.two_step_tile_y = v.ty;
      t.two_step_z_chunk = v.chunk;
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      if (v.env_name) unsetenv(v.env_name);
      if (v.env2_name) unsetenv(v.env2_name);
      if (v.env3_name) unsetenv(v.env3_name);
      int pairs_steps = 0, one_steps = n;
      if (v.two_pass_middle) {
        const int a = n / 3, b = n / 5;  // 133 + 80 + 187 at n = 400
        ASSERT_EQ(eng->run(a), a);
        {
          DftMonitor mon(*eng, {20e9}, {Component::Ez});
          ASSERT_EQ(eng->run(b), b);
        }
        ASSERT_EQ(eng->run(n - a - b), n - a - b);
        pairs_steps = a / 2 * 2 + (n - a - b) / 2 * 2;
        one_steps = n - b;
      } else {
        ASSERT_EQ(eng->run(n / 2 + 1), n / 2 + 1);
        ASSERT_EQ(eng->run(n - n / 2 - 1), n - n / 2 - 1);
        pairs_steps = (n / 2 + 1) / 2 * 2 + (n - n / 2 - 1) / 2 * 2;
      }
      const std::string label = std::string(m.name) + ", " + v.name;
      EXPECT_EQ(eng->two_step_steps(), pairs_steps) << label;
      const bool shell = v.env_name && std::string(v.env_name) == "VEM_TWO_STEP_SHELL";
      EXPECT_EQ(eng->two_step_shell_steps(), shell ? pairs_steps : 0) << label;
      EXPECT_EQ(eng->one_pass_steps(), one_steps) << label;
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        std::cout << "two steps per pass " << label << " " << component_name(Component(ci)) << ": " << differ
                  << " of " << fa.size() << " samples differ\n";
        EXPECT_GT(norm, 0.0) << label;
        EXPECT_EQ(differ, 0u) << label << " " << component_name(Component(ci));
      }
      const auto pa = eng->probes(), pb = ref->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      double probe_norm = 0;  // (the far probe in the CPML stays 0 in float16 with the scaled sources)
      for (std::size_t p = 0; p < pa.values.size(); ++p) {
        const auto [differ, norm] = count_differences(pa.values[p], pb.values[p]);
        probe_norm += norm;
        EXPECT_EQ(differ, 0u) << label << " probe " << p;
      }
      EXPECT_GT(probe_norm, 0.0) << label;
    }
  }
  // Periodic faces and a magnetic source: E samples computed again after the pass.
  expect_two_steps_refused(FdtdOperator(make_setup(MaterialMode::indexed, 4321)), EngineTuning{});
}

// An engine refused after it claimed the constant-memory table (here: two steps per pass asked
// for a model with periodic y faces, refused once the table is set up) gives the table back, so
// the next engine that asks for it gets it. Until session 31 the claim was given back by the
// engine's destructor only, which does not run when its constructor throws: every later engine
// of the process was refused the table ("in use by another live CUDA engine"), as
// Modes/CpuCudaAgreement's indexed_constant was after TwoStepsPerPassMatchOnePass in one process.
TEST(CpuCudaAgreementTable, ARefusedEngineGivesTheConstantTableBack) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(make_setup(MaterialMode::indexed, 4321));
  EngineTuning constant;
  constant.table = EngineTuning::TablePlacement::constant;
  for (const auto step : {EngineTuning::Step::automatic, EngineTuning::Step::one_pass}) {
    EngineTuning refused = constant;
    refused.step = step;
    expect_two_steps_refused(op, refused);
    EngineTuning next = constant;
    next.step = step;
    try {
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, next);
      EXPECT_EQ(eng->run(2), 2);
    } catch (const Error& e) {
      ADD_FAILURE() << "the engine after a refused one: " << e.what();
    }
  }
}

// Two steps per pass by default (EngineTuning::temporal_blocking automatic) from 2 M cells: a
// 130 x 128 x 121 model (2.01 M cells) of FoldedCpml's kind steps in pairs with EngineTuning{}
// (shell tiles beside the rest's steps, pairs in CUDA graphs: the defaults below 4 M cells)
// and gives the fields and probes of the same model without temporal blocking bit for bit; with a
// periodic face (which it cannot take) the default steps as before, without an error.
TEST(CpuCudaAgreementOnePass, TwoStepsPerPassByDefaultFromTwoMillionCells) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  FdtdSetup s = cpml_everywhere_setup(MaterialMode::indexed, 5);
  s.grid.nx = 130;
  s.grid.ny = 128;
  s.grid.nz = 121;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(0, int(s.materials.size()) - 1);
  s.material_index.resize(std::size_t(s.grid.cell_count()));
  for (auto& v : s.material_index) v = std::uint16_t(pick(rng));
  ASSERT_GE(s.grid.cell_count(), 2000000);
  const int n = small_or(60, 4);
  for (const bool periodic : {false, true}) {
    FdtdSetup m = s;
    if (periodic) m.boundaries.face[2] = m.boundaries.face[3] = BoundaryType::periodic;
    const FdtdOperator op(m);
    EngineTuning off;
    off.temporal_blocking = EngineTuning::TemporalBlocking::off;
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, off);
    auto eng = make_engine(op, Backend::cuda, 0, nullptr, EngineTuning{});
    ASSERT_EQ(ref->run(n), n);
    ASSERT_EQ(eng->run(n), n);
    const char* name = periodic ? "periodic y faces" : "CPML everywhere";
    EXPECT_EQ(ref->two_step_steps(), 0) << name;
    if (periodic) {
      EXPECT_EQ(eng->two_step_steps(), 0) << name;
    } else {
      EXPECT_EQ(eng->two_step_steps(), n / 2 * 2) << name;
      // with shell tiles, beside the rest's steps and in graphs below 4 M cells (the defaults)
      EXPECT_EQ(eng->two_step_shell_steps(), n / 2 * 2) << name;
    }
    for (int ci = 0; ci < 6; ++ci) {
      const auto [differ, norm] = count_differences(eng->field(Component(ci)), ref->field(Component(ci)));
      std::cout << "default, " << name << ", " << component_name(Component(ci)) << ": " << differ << " samples differ\n";
      EXPECT_GT(norm, 0.0) << name;
      EXPECT_EQ(differ, 0u) << name << " " << component_name(Component(ci));
    }
    const auto pa = eng->probes(), pb = ref->probes();
    ASSERT_EQ(pa.values.size(), pb.values.size());
    for (std::size_t p = 0; p < pa.values.size(); ++p)
      EXPECT_EQ(count_differences(pa.values[p], pb.values[p]).first, 0u) << name << " probe " << p;
  }
}

// The persistent kernel's two ways of walking a sample (EngineTuning::PersistentSamples): hoisted
// (every load first, the slabs' psi included) and chained (each slab's loads after the bulk
// update), and the hoisted samples' two ways of dealing them out (the sample plan, with the plain
// samples' tests known at compile time, or the grid-stride walk). All must give the two-pass
// fields and probes bit for bit.
TEST(CpuCudaAgreementOnePass, PersistentHoistedAndChainedSamplesMatchTwoPass) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  using PS = EngineTuning::PersistentSamples;
  struct M { FdtdSetup setup; const char* name; };
  const M models[] = {{cpml_everywhere_setup(MaterialMode::indexed, 91), "indexed"},
                      {cpml_everywhere_setup(MaterialMode::coefficient_array, 91), "arrays"}};
  for (const M& m : models) {
    const FdtdOperator op(m.setup);
    const MaterialMode mode = m.setup.material_mode;
    const EngineTuning two = two_pass_stream_tuning(mode);
    const int n = steps(300);
    auto ref = make_engine(op, Backend::cuda, 0, nullptr, two);
    ASSERT_EQ(ref->run(n), n);
    // (the first: hoisted, its samples from the sample plan, the default; the third: the same
    // with the material table read from the constant bank, VEM_SHARED_TABLE=0, instead of the
    // default copy in shared memory; the same as the first with coefficient arrays; the fourth:
    // hoisted with 64-bit offsets, VEM_PERSISTENT_OFFSETS=64, the path of the largest grids, which
    // walks the samples; the fifth: hoisted with 32-bit offsets walking the samples,
    // VEM_PERSISTENT_PLAN=walk; the sixth: the plan with every task weighing the same,
    // VEM_PERSISTENT_PLAN_WEIGHT=1; the seventh: the plan with the slabs' profile values loaded
    // after the bulk update, VEM_PERSISTENT_PROFILES=0; the eighth: the plan without its tests
    // words, VEM_PERSISTENT_TESTS=0)
    for (int variant = 0; variant < 8; ++variant) {
      const PS ps = variant == 1 ? PS::chained : PS::hoisted;
      EngineTuning t = two;
      t.step = EngineTuning::Step::persistent;
      t.persistent_samples = ps;
      if (variant == 2) setenv("VEM_SHARED_TABLE", "0", 1);
      if (variant == 3) setenv("VEM_PERSISTENT_OFFSETS", "64", 1);
      if (variant == 4) setenv("VEM_PERSISTENT_PLAN", "walk", 1);
      if (variant == 5) setenv("VEM_PERSISTENT_PLAN_WEIGHT", "1", 1);
      if (variant == 6) setenv("VEM_PERSISTENT_PROFILES", "0", 1);
      if (variant == 7) setenv("VEM_PERSISTENT_TESTS", "0", 1);
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      unsetenv("VEM_SHARED_TABLE");
      unsetenv("VEM_PERSISTENT_OFFSETS");
      unsetenv("VEM_PERSISTENT_PLAN");
      unsetenv("VEM_PERSISTENT_PLAN_WEIGHT");
      unsetenv("VEM_PERSISTENT_PROFILES");
      unsetenv("VEM_PERSISTENT_TESTS");
      ASSERT_EQ(eng->run(n), n);
      const std::string name = std::string(m.name) + (variant == 0   ? ", hoisted, plan"
                                                      : variant == 1 ? ", chained"
                                                      : variant == 2 ? ", hoisted, plan, constant-bank table"
                                                      : variant == 3 ? ", hoisted, 64-bit offsets"
                                                      : variant == 4 ? ", hoisted, walk"
                                                      : variant == 5 ? ", hoisted, plan, weight 1"
                                                      : variant == 6 ? ", hoisted, plan, profiles after the bulk update"
                                                                     : ", hoisted, plan without tests words");
      EXPECT_EQ(eng->persistent_steps(), n) << name;
      const bool planned = variant == 0 || variant == 2 || variant >= 5;
      EXPECT_EQ(eng->persistent_planned_steps(), planned ? n : 0) << name;
      for (int ci = 0; ci < 6; ++ci) {
        const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
        const auto [differ, norm] = count_differences(fa, fb);
        std::cout << name << " " << component_name(Component(ci)) << ": " << differ << " of " << fa.size()
                  << " samples differ\n";
        EXPECT_GT(norm, 0.0) << name;
        EXPECT_EQ(differ, 0u) << name << " " << component_name(Component(ci));
      }
      const auto pa = eng->probes(), pb = ref->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_EQ(pa.values[p], pb.values[p]) << name << " probe " << p;
    }
  }
}

// Narrow field storage (FdtdSetup::field_storage, vem/core/field_storage.h): the CPU engine rounds
// every stored value to float16 / bfloat16 in float arrays, the CUDA engine stores 2-byte elements.
// First the rounding itself against the CUDA conversions for all 2^32 floats, then the fields of
// every step kind (two passes with a DFT monitor attached, one pass with E computed again next to
// PMC / periodic faces and an H source, one pass with the CPML folded, persistent) against the
// CPU engine's, bit for bit, with the three kinds of point source and the probes. The narrow
// fields must differ from the float32 ones (the storage is really narrowed); how much is printed.
TEST(CpuCudaAgreementStorage, NarrowStoragesMatchTheCpuEngineBitForBit) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  using ST = EngineTuning::Step;
  for (FieldStorage fs : {FieldStorage::float16, FieldStorage::bfloat16}) {
    std::string first;
    EXPECT_EQ(field_storage_rounding_mismatches(fs, &first), 0u)
        << field_storage_name(fs) << ": first mismatching float pattern " << first;
    struct V { bool everywhere; MaterialMode mode; ST step; const char* name; };
    const V variants[] = {{false, MaterialMode::indexed, ST::two_pass, "two passes + DFT monitor, indexed"},
                          {false, MaterialMode::coefficient_array, ST::one_pass, "one pass, E again, arrays"},
                          {true, MaterialMode::indexed, ST::one_pass, "one pass, CPML folded, indexed"},
                          {true, MaterialMode::coefficient_array, ST::persistent, "persistent, arrays"},
                          {true, MaterialMode::indexed, ST::persistent, "persistent, indexed"}};
    for (const V& v : variants) {
      FdtdSetup setup = v.everywhere ? cpml_everywhere_setup(v.mode, 77) : make_setup(v.mode, 77);
      // The soft sources' moments (1 A m, 377 V m in sub-millimetre cells) give fields near 1e8,
      // beyond float16's 65504: scaled to a few hundred V/m (the hard source stays at 1e-3 V/m).
      for (PointSource& p : setup.sources)
        if (p.kind == PointSource::Kind::electric_current || p.kind == PointSource::Kind::magnetic_current)
          p.amplitude *= 1e-6;
      const FdtdOperator wide(setup);
      setup.field_storage = fs;
      const FdtdOperator op(setup);
      EngineTuning t = two_pass_stream_tuning(v.mode);
      t.step = v.step;
      auto cpu = make_engine(op, Backend::cpu);
      auto gpu = make_engine(op, Backend::cuda, 0, nullptr, t);
      auto gpu32 = make_engine(wide, Backend::cuda, 0, nullptr, t);
      const int n = steps(300);
      const std::string label = std::string(field_storage_name(fs)) + ", " + v.name;
      if (v.step == ST::two_pass) {
        DftMonitor mc(*cpu, {20e9}, {Component::Ez}), mg(*gpu, {20e9}, {Component::Ez});
        ASSERT_EQ(cpu->run(n), n);
        ASSERT_EQ(gpu->run(n), n);
      } else {
        ASSERT_EQ(cpu->run(n), n);
        ASSERT_EQ(gpu->run(n / 2), n / 2);
        ASSERT_EQ(gpu->run(n - n / 2), n - n / 2);
      }
      ASSERT_EQ(gpu32->run(n), n);
      if (v.step == ST::persistent) EXPECT_EQ(gpu->persistent_steps(), n) << label;
      if (v.step == ST::one_pass) EXPECT_EQ(gpu->one_pass_steps(), n) << label;
      for (int ci = 0; ci < 6; ++ci) {
        const Component comp = Component(ci);
        const auto a = gpu->field(comp), b = cpu->field(comp), w = gpu32->field(comp);
        const auto [differ, norm] = count_differences(a, b);
        const auto [differ32, norm32] = count_differences(a, w);
        std::cout << label << " " << component_name(comp) << ": " << differ << " of " << a.size()
                  << " samples differ from the CPU engine's; against float32 storage rel L2 " << rel_l2(a, w)
                  << " (" << differ32 << " samples differ)\n";
        EXPECT_GT(norm, 0.0) << label;
        EXPECT_EQ(differ, 0u) << label << " " << component_name(comp);
        EXPECT_GT(differ32, 0u) << label << " " << component_name(comp) << ": the storage was not narrowed";
        (void)norm32;
      }
      const auto pa = gpu->probes(), pb = cpu->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      for (std::size_t p = 0; p < pa.values.size(); ++p)
        EXPECT_EQ(count_differences(pa.values[p], pb.values[p]).first, 0u) << label << " probe " << p;
    }
  }
}
