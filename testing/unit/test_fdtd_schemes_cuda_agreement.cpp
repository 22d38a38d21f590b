// Issue 15: the CUDA engine's high-order kernels (fv24, fv24_wb, s22, s44) compute the CPU engine's
// function. One set-up with every boundary rule of the wide stencil at once: CPML on x-low, x-high
// and z-high (the CPML stretches the wide derivative; PEC images behind it), periodic y (wrap),
// PEC z-low (images); random lossy, magnetic materials per cell (indexed table of 40, and the same
// as coefficient arrays), a soft electric-current point source, a magnetic-current source and
// probes. After 400 steps every component must agree to max |CUDA - CPU| / max |CPU| <= 1e-5
// (both float32; the difference is rounding order / FMA contraction only), and the probe series
// to the same bound. The high-order block shape (EngineTuning::ho_block_*) does not change the
// arithmetic of a sample: two shapes must give the same fields bit for bit, and neither do the
// kernel variants (EngineTuning::ho_kernel) or the CPML corrections folded into the kernels
// (EngineTuning::ho_cpml), nor how the tiled kernel's work is launched (the bands in one launch or
// one each, the shell beside the interior on a second stream or after it).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

#ifdef VEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "test_support.h"
#include "vem/fdtd/extensions/harmonic_current.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

FdtdSetup make_setup(Scheme scheme, MaterialMode mode, const YeeGrid& grid = YeeGrid{37, 29, 31, 1e-3, 1e-3, 1e-3}) {
  FdtdSetup s;
  s.grid = grid;
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::periodic,
                       BoundaryType::periodic, BoundaryType::pec, BoundaryType::cpml};
  for (auto& c : s.boundaries.cpml) c.thickness = 8;
  s.scheme = scheme;
  std::mt19937 rng(151);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::int64_t n = s.grid.cell_count();
  if (mode == MaterialMode::indexed) {
    s.material_mode = MaterialMode::indexed;
    for (int m = 0; m < 40; ++m) {
      Material mat;
      mat.name = "random " + std::to_string(m);
      for (int a = 0; a < 3; ++a) {
        mat.eps_r[a] = 1.0 + 10.0 * u(rng);
        mat.sigma_e[a] = 0.5 * u(rng);
        mat.mu_r[a] = 1.0 + u(rng);
        mat.sigma_m[a] = 20.0 * u(rng);
      }
      s.materials.push_back(mat);
    }
    s.material_index.resize(n);
    std::uniform_int_distribution<int> pick(0, 39);
    for (auto& v : s.material_index) v = std::uint16_t(pick(rng));
  } else {
    s.material_mode = MaterialMode::coefficient_array;
    s.medium.eps_r.assign(1, std::vector<float>(n));
    s.medium.sigma_e.assign(1, std::vector<float>(n));
    for (auto& v : s.medium.eps_r[0]) v = float(1.0 + 10.0 * u(rng));
    for (auto& v : s.medium.sigma_e[0]) v = float(0.5 * u(rng));
  }
  const Waveform w = Waveform::differentiated_gaussian_for_bandwidth(40e9);
  PointSource j1; j1.i = 18; j1.j = 14; j1.k = 12; j1.direction = {0.2, 0.3, 1.0}; j1.waveform = w;
  PointSource m1; m1.kind = PointSource::Kind::magnetic_current; m1.i = 9; m1.j = 3; m1.k = 20;
  m1.direction = {1, 0, 0}; m1.amplitude = 377.0; m1.waveform = w;
  s.sources = {j1, m1};
  // Probes inside a CPML slab, next to the PEC wall, on the periodic seam and in the bulk.
  s.probes = {{"ez", Component::Ez, 25, 14, 15}, {"hy", Component::Hy, 3, 10, 27},
              {"ex", Component::Ex, 20, 0, 1}, {"hz", Component::Hz, 30, 28, 5}};
  return s;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}
// Samples that are not bit for bit equal.
std::size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

struct Case {
  Scheme scheme;
  MaterialMode mode;
  const char* name;
};

class SchemeCpuCudaAgreement : public testing::TestWithParam<Case> {};

TEST_P(SchemeCpuCudaAgreement, FieldsAndProbesAgree) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const Case c = GetParam();
  const FdtdOperator op(make_setup(c.scheme, c.mode));
  auto cpu = make_engine(op, Backend::cpu);
  auto gpu = make_engine(op, Backend::cuda);
  const int n = 400;
  ASSERT_EQ(cpu->run(n), n);
  ASSERT_EQ(gpu->run(n), n);
  for (int ci = 0; ci < 6; ++ci) {
    const Component comp = Component(ci);
    const auto a = gpu->field(comp), b = cpu->field(comp);
    const double ref = max_abs(b), e = max_diff(a, b) / ref;
    std::cout << c.name << " " << component_name(comp) << " max|CUDA - CPU| / max|CPU| = " << e
              << " (max|CPU| = " << ref << ")\n";
    EXPECT_GT(ref, 0.0) << component_name(comp) << " is identically zero: the test would be vacuous";
    EXPECT_LE(e, 1e-5) << component_name(comp);
  }
  const auto pa = gpu->probes(), pb = cpu->probes();
  ASSERT_EQ(pa.values.size(), pb.values.size());
  for (std::size_t p = 0; p < pa.values.size(); ++p) {
    const double ref = max_abs(pb.values[p]);
    EXPECT_GT(ref, 0.0) << "probe " << p;
    EXPECT_LE(max_diff(pa.values[p], pb.values[p]) / ref, 1e-5) << "probe " << p;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, SchemeCpuCudaAgreement,
    testing::Values(Case{Scheme::fv24, MaterialMode::indexed, "fv24_indexed"},
                    Case{Scheme::fv24_wb, MaterialMode::indexed, "fv24_wb_indexed"},
                    Case{Scheme::s22, MaterialMode::indexed, "s22_indexed"},
                    Case{Scheme::fv24, MaterialMode::coefficient_array, "fv24_arrays"},
                    Case{Scheme::s22, MaterialMode::coefficient_array, "s22_arrays"},
                    Case{Scheme::s44, MaterialMode::indexed, "s44_indexed"},
                    Case{Scheme::s44, MaterialMode::coefficient_array, "s44_arrays"}),
    [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(SchemeCudaBlock, BlockShapeDoesNotChangeTheFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(make_setup(Scheme::fv24, MaterialMode::indexed));
  EngineTuning t1, t2;
  t2.ho_block_x = 64; t2.ho_block_y = 2; t2.ho_block_z = 1;
  auto e1 = make_engine(op, Backend::cuda, 0, nullptr, t1);
  auto e2 = make_engine(op, Backend::cuda, 0, nullptr, t2);
  ASSERT_EQ(e1->run(200), 200);
  ASSERT_EQ(e2->run(200), 200);
  for (int ci = 0; ci < 6; ++ci) {
    const auto a = e1->field(Component(ci)), b = e2->field(Component(ci));
    EXPECT_EQ(differing(a, b), 0u) << component_name(Component(ci));
    EXPECT_GT(max_abs(a), 0.0);
  }
}

// The high-order kernel variants (EngineTuning::ho_kernel: tables, direct, tiled; fdtd_engine.h)
// differ only in how a sample's stencil points are fetched (boundary tables, direct offsets in the
// interior, shared-memory tiles): the same terms in the same order, so the same fields bit for bit.
// Each scheme's shape is its own compiled stencil; tiled with 8-plane chunks so the test grid's
// interior spans several chunks and tiles; direct with a block that does not divide the box.
class SchemeCudaKernels : public testing::TestWithParam<Scheme> {};

TEST_P(SchemeCudaKernels, VariantsGiveTheSameFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(make_setup(GetParam(), MaterialMode::indexed));
  using HK = EngineTuning::HighOrderKernel;
  EngineTuning tables, direct, tiled;
  tables.ho_kernel = HK::tables;
  direct.ho_kernel = HK::direct;
  direct.ho_block_x = 32; direct.ho_block_y = 3; direct.ho_block_z = 5;
  tiled.ho_kernel = HK::tiled;
  tiled.ho_z_chunk = 8;
  auto e0 = make_engine(op, Backend::cuda, 0, nullptr, tables);
  auto e1 = make_engine(op, Backend::cuda, 0, nullptr, direct);
  auto e2 = make_engine(op, Backend::cuda, 0, nullptr, tiled);
  // The tiled core's threads one row each, and two rows each (the default: two, but one for
  // fv24_wb's H).
  ::setenv("VEM_HO_CORE_ROWS", "1", 1);
  auto e3 = make_engine(op, Backend::cuda, 0, nullptr, tiled);
  ::setenv("VEM_HO_CORE_ROWS", "2", 1);
  auto e4 = make_engine(op, Backend::cuda, 0, nullptr, tiled);
  ::unsetenv("VEM_HO_CORE_ROWS");
  const int n = 150;
  ASSERT_EQ(e0->run(n), n);
  ASSERT_EQ(e1->run(n), n);
  ASSERT_EQ(e2->run(n), n);
  ASSERT_EQ(e3->run(n), n);
  ASSERT_EQ(e4->run(n), n);
  for (int ci = 0; ci < 6; ++ci) {
    const auto a = e0->field(Component(ci)), b = e1->field(Component(ci)), c = e2->field(Component(ci)),
               d = e3->field(Component(ci)), f = e4->field(Component(ci));
    EXPECT_EQ(differing(a, b), 0u) << scheme_name(GetParam()) << " direct " << component_name(Component(ci));
    EXPECT_EQ(differing(a, c), 0u) << scheme_name(GetParam()) << " tiled " << component_name(Component(ci));
    EXPECT_EQ(differing(a, d), 0u) << scheme_name(GetParam()) << " tiled, one row " << component_name(Component(ci));
    EXPECT_EQ(differing(a, f), 0u) << scheme_name(GetParam()) << " tiled, two rows " << component_name(Component(ci));
    EXPECT_GT(max_abs(a), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, SchemeCudaKernels,
                         testing::Values(Scheme::fv24, Scheme::fv24_wb, Scheme::s22, Scheme::s44),
                         [](const testing::TestParamInfo<Scheme>& i) { return std::string(scheme_name(i.param)); });

// The CPML corrections folded into the tiled and shell kernels (EngineTuning::ho_cpml) give the
// slab kernels' fields bit for bit. A box large enough that the folded bands (x: 32 columns, y: 8
// rows, z: the slab planes) leave a core on every axis, CPML on five faces (edges and corners where
// two and three slabs overlap), PEC on z-low; a point source in a CPML corner; 8-plane chunks so the
// core and the z bands span several. s44 folds them into its direct kernel (s44_direct) and its
// shell kernels, so its variants run the direct kernel; with VEM_S44_DIRECT=interleaved (the old
// direct kernel) it keeps the slab kernels.
FdtdSetup make_cpml_box(Scheme scheme, MaterialMode mode) {
  FdtdSetup s = make_setup(scheme, mode, YeeGrid{80, 44, 40, 1e-3, 1e-3, 1e-3});
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                       BoundaryType::cpml, BoundaryType::pec, BoundaryType::cpml};
  s.sources[0].i = 40; s.sources[0].j = 22; s.sources[0].k = 20;
  s.sources[1].i = 4; s.sources[1].j = 40; s.sources[1].k = 36;
  s.probes = {{"ez", Component::Ez, 76, 5, 37}, {"hy", Component::Hy, 40, 30, 20}};
  return s;
}

class SchemeCudaCpmlFold : public testing::TestWithParam<Case> {};

TEST_P(SchemeCudaCpmlFold, FoldedCorrectionsGiveTheSameFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const Case c = GetParam();
  const FdtdOperator op(make_cpml_box(c.scheme, c.mode));
  using HK = EngineTuning::HighOrderKernel;
  using HC = EngineTuning::HighOrderCpml;
  EngineTuning tables, slabs, folded, folded_default;
  tables.ho_kernel = HK::tables;
  slabs.ho_kernel = folded.ho_kernel = folded_default.ho_kernel = c.scheme == Scheme::s44 ? HK::direct : HK::tiled;
  slabs.ho_z_chunk = folded.ho_z_chunk = 8;
  slabs.ho_cpml = HC::slab_kernels;
  folded.ho_cpml = folded_default.ho_cpml = HC::folded;
  const int n = 120;
  auto e0 = make_engine(op, Backend::cuda, 0, nullptr, tables);
  ASSERT_EQ(e0->run(n), n);
  // The default launches (the bands in one launch, the shell on a side stream beside the interior)
  // and the measurement switches that undo them (VEM_HO_BAND_LAUNCH, VEM_HO_SHELL_STREAM,
  // VEM_HO_CORE_ROWS=1: the core's threads one row each instead of two) or change
  // s44's kernels (VEM_S44_DIRECT; VEM_S44_BAND_BLOCK and VEM_S44_CORE_X: the bands' widths and
  // the core's first column).
  struct Variant {
    const EngineTuning* tuning;
    const char* env;
    const char* value;
    const char* what;
  };
  const Variant variants[] = {{&slabs, nullptr, nullptr, "slab kernels"},
                              {&folded, nullptr, nullptr, "folded, 8-plane chunks"},
                              {&folded_default, nullptr, nullptr, "folded"},
                              {&folded_default, "VEM_HO_BAND_LAUNCH", "separate", "folded, a launch per band"},
                              {&folded_default, "VEM_HO_SHELL_STREAM", "0", "folded, the shell after the interior"},
                              {&folded_default, "VEM_HO_CORE_ROWS", "1", "folded, one row a thread in the core"},
                              {&folded, "VEM_HO_CORE_ROWS", "1", "folded, 8-plane chunks, one row a thread"},
                              {&folded_default, "VEM_S44_DIRECT", "interleaved", "s44's interleaved direct kernel"},
                              {&folded_default, "VEM_S44_BAND_BLOCK", "64x4", "s44's bands in 64 x 4 blocks"},
                              {&folded_default, "VEM_S44_BAND_BLOCK", "16x16", "s44's bands in 16 x 16 blocks"},
                              {&folded_default, "VEM_S44_CORE_X", "blocks", "s44's core at the bands' blocks"}};
  for (const Variant& v : variants) {
    if (v.env) ::setenv(v.env, v.value, 1);
    auto e = make_engine(op, Backend::cuda, 0, nullptr, *v.tuning);
    if (v.env) ::unsetenv(v.env);
    ASSERT_EQ(e->run(n), n);
    const char* what = v.what;
    for (int ci = 0; ci < 6; ++ci) {
      const auto a = e0->field(Component(ci)), b = e->field(Component(ci));
      EXPECT_EQ(differing(a, b), 0u) << c.name << " " << what << " " << component_name(Component(ci));
      EXPECT_GT(max_abs(a), 0.0);
    }
    const auto pa = e0->probes(), pb = e->probes();
    ASSERT_EQ(pa.values.size(), pb.values.size());
    for (std::size_t p = 0; p < pa.values.size(); ++p) EXPECT_EQ(pa.values[p], pb.values[p]) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, SchemeCudaCpmlFold,
                         testing::Values(Case{Scheme::fv24, MaterialMode::indexed, "fv24_indexed"},
                                         Case{Scheme::fv24_wb, MaterialMode::indexed, "fv24_wb_indexed"},
                                         Case{Scheme::s22, MaterialMode::indexed, "s22_indexed"},
                                         Case{Scheme::fv24, MaterialMode::coefficient_array, "fv24_arrays"},
                                         Case{Scheme::s44, MaterialMode::indexed, "s44_indexed"}),
                         [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// The folded tiled kernel computes the x and z faces of the shell itself (its band instance reads
// the x and z tables into its ring and tests each component's x and z ranges; VEM_HO_X_FACES=shell
// and VEM_HO_Z_FACES=shell leave them to the shell kernels): every boundary rule of the wide
// stencil on those faces, bit for bit against the tables kernel. CPML on the y faces so the bands
// are folded; x and z periodic, PEC, PMC or CPML.
struct XFaces {
  BoundaryType xlo, xhi, zlo, zhi;
  const char* name;
};
class SchemeCudaXFaces : public testing::TestWithParam<XFaces> {};

TEST_P(SchemeCudaXFaces, TiledXFacesGiveTheTablesFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const XFaces x = GetParam();
  for (Scheme scheme : {Scheme::fv24, Scheme::fv24_wb, Scheme::s22}) {
    FdtdSetup s = make_cpml_box(scheme, MaterialMode::indexed);
    s.boundaries.face = {x.xlo, x.xhi, BoundaryType::cpml, BoundaryType::cpml, x.zlo, x.zhi};
    s.sources[1].i = 1;  // the magnetic current next to the x-low face
    s.probes = {{"ez", Component::Ez, 79, 5, 30}, {"hy", Component::Hy, 0, 30, 20}, {"hx", Component::Hx, 78, 20, 20}};
    const FdtdOperator op(s);
    using HK = EngineTuning::HighOrderKernel;
    EngineTuning tables, tiled;
    tables.ho_kernel = HK::tables;
    tiled.ho_kernel = HK::tiled;
    tiled.ho_z_chunk = 8;
    const int n = 120;
    auto e0 = make_engine(op, Backend::cuda, 0, nullptr, tables);
    ASSERT_EQ(e0->run(n), n);
    for (const char* mode : {"tiles", "shell"}) {
      ::setenv("VEM_HO_X_FACES", mode, 1);
      ::setenv("VEM_HO_Z_FACES", mode, 1);
      auto e = make_engine(op, Backend::cuda, 0, nullptr, tiled);
      ::unsetenv("VEM_HO_X_FACES");
      ::unsetenv("VEM_HO_Z_FACES");
      ASSERT_EQ(e->run(n), n);
      for (int ci = 0; ci < 6; ++ci) {
        const auto a = e0->field(Component(ci)), b = e->field(Component(ci));
        EXPECT_EQ(differing(a, b), 0u) << scheme_name(scheme) << " x and z faces " << x.name << ", " << mode << " "
                              << component_name(Component(ci));
        EXPECT_GT(max_abs(a), 0.0) << scheme_name(scheme) << " " << component_name(Component(ci));
      }
      const auto pa = e0->probes(), pb = e->probes();
      ASSERT_EQ(pa.values.size(), pb.values.size());
      for (std::size_t p = 0; p < pa.values.size(); ++p) {
        EXPECT_EQ(pa.values[p], pb.values[p]) << scheme_name(scheme) << " " << mode << " probe " << p;
        EXPECT_GT(max_abs(pa.values[p]), 0.0) << scheme_name(scheme) << " probe " << p;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Boundaries, SchemeCudaXFaces,
                         testing::Values(XFaces{BoundaryType::periodic, BoundaryType::periodic, BoundaryType::periodic,
                                                BoundaryType::periodic, "periodic"},
                                         XFaces{BoundaryType::pec, BoundaryType::pmc, BoundaryType::pmc, BoundaryType::cpml,
                                                "pec_pmc"},
                                         XFaces{BoundaryType::cpml, BoundaryType::pec, BoundaryType::pec, BoundaryType::cpml,
                                                "cpml_pec"}),
                         [](const testing::TestParamInfo<XFaces>& i) { return std::string(i.param.name); });

// s44 two steps per pass (EngineTuning::s44_stepping two_steps: the pair kernel on a core box, the
// rest stepped twice by the direct kernels) gives the one-step fields and probes bit for bit. A
// box whose core (43 x 35 x 30 samples: 15 from each CPML face, 8 from the PEC face) spans three
// tile columns, two tile rows and, with 8-plane chunks, four chunks, the last ones narrow; a soft
// electric source inside the core, a hard one just outside it and a magnetic source in the
// pair's halo (their updates applied by the pair kernel in its halo and by the rest); probes in
// the core and in the rest; an odd step count (the last step alone). Both table placements.
// The model of the s44 core tests below.
FdtdSetup s44_core_setup(MaterialMode mode = MaterialMode::indexed) {
  FdtdSetup s = make_setup(Scheme::s44, mode, YeeGrid{72, 64, 52, 1e-3, 1e-3, 1e-3});
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                       BoundaryType::cpml, BoundaryType::pec, BoundaryType::cpml};
  s.sources[0].i = 30; s.sources[0].j = 30; s.sources[0].k = 25;
  PointSource hard = s.sources[0];
  hard.kind = PointSource::Kind::hard_e;
  hard.i = 14; hard.j = 40; hard.k = 20;
  hard.direction = {0, 0, 1};
  s.sources.push_back(hard);
  s.sources[1].i = 36; s.sources[1].j = 12; s.sources[1].k = 30;  // y = 12: in the halo (core from 15)
  s.probes = {{"ez", Component::Ez, 40, 30, 25}, {"hx", Component::Hx, 36, 30, 20}, {"ey", Component::Ey, 5, 30, 20},
              {"hz", Component::Hz, 36, 13, 30}};
  return s;
}

// The material storage the s44 kernels read their coefficients from: indexed with the table in
// constant and in global memory, and coefficient arrays.
struct MaterialVariant {
  MaterialMode mode;
  EngineTuning::TablePlacement table;
  const char* what;
};
std::vector<MaterialVariant> material_variants() {
  using TP = EngineTuning::TablePlacement;
  return {{MaterialMode::indexed, TP::automatic, "indexed, constant table"},
          {MaterialMode::indexed, TP::global, "indexed, global table"},
          {MaterialMode::coefficient_array, TP::automatic, "coefficient arrays"}};
}

// Every component and probe of `b` equal to `a`'s, bit for bit, and not all zero.
void expect_same_fields_and_probes(const FdtdEngine& a, const FdtdEngine& b, const std::string& where) {
  for (int ci = 0; ci < 6; ++ci) {
    const auto fa = a.field(Component(ci)), fb = b.field(Component(ci));
    EXPECT_EQ(differing(fa, fb), 0u) << where << " " << component_name(Component(ci)) << ", max difference "
                                     << max_diff(fa, fb) << " of " << max_abs(fa);
    EXPECT_GT(max_abs(fa), 0.0) << component_name(Component(ci));
  }
  const auto pa = a.probes(), pb = b.probes();
  ASSERT_EQ(pa.values.size(), pb.values.size());
  for (std::size_t p = 0; p < pa.values.size(); ++p) {
    EXPECT_EQ(pa.values[p], pb.values[p]) << where << " probe " << p;
    EXPECT_GT(max_abs(pa.values[p]), 0.0) << "probe " << p;
  }
}

TEST(SchemeCudaS44Pair, TwoStepsPerPassGiveTheOneStepFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(s44_core_setup());
  using SS = EngineTuning::S44Stepping;
  using TP = EngineTuning::TablePlacement;
  for (TP table : {TP::automatic, TP::global}) {
    EngineTuning one, two;
    one.s44_stepping = SS::one_step;
    two.s44_stepping = SS::two_steps;
    one.table = two.table = table;
    const int n = 121;
    auto e0 = make_engine(op, Backend::cuda, 0, nullptr, one);
    ASSERT_EQ(e0->run(n), n);
    EXPECT_EQ(e0->two_step_steps(), 0);
    ::setenv("VEM_S44_PAIR_CHUNK", "8", 1);
    auto e = make_engine(op, Backend::cuda, 0, nullptr, two);
    ::unsetenv("VEM_S44_PAIR_CHUNK");
    ASSERT_EQ(e->run(n), n);
    EXPECT_EQ(e->two_step_steps(), n - 1) << "the pair did not run";
    expect_same_fields_and_probes(*e0, *e, table == TP::global ? "global table" : "constant table");
  }
}

// s44 one pass per step (EngineTuning::s44_stepping one_pass: s44_onepass_interior on a core box,
// the rest stepped once by the direct kernels) gives the one-step fields and probes bit for bit.
// The same model: the core (x 24..58 from the 128-byte line, y 13..50, z 5..38: 3 from the PEC
// face, 13 from the CPML faces) spans two tile columns (the second 3 wide), 5 tile rows (the last
// 6 high) and, with 8-plane chunks, 5 chunks; the soft source in the core, the hard one outside
// it, the magnetic source in the halo (y = 12: its H computed again by the halo warps, which apply
// its update too); probes in the core and in the rest; both table placements; the default (E's
// loads early, the kernel beside the rest's H pass), E's loads in its stage, the rest after.
TEST(SchemeCudaS44Pair, OnePassGivesTheOneStepFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(s44_core_setup());
  using SS = EngineTuning::S44Stepping;
  using TP = EngineTuning::TablePlacement;
  const int n = 121;
  for (TP table : {TP::automatic, TP::global}) {
    EngineTuning one, pass;
    one.s44_stepping = SS::one_step;
    pass.s44_stepping = SS::one_pass;
    one.table = pass.table = table;
    auto e0 = make_engine(op, Backend::cuda, 0, nullptr, one);
    ASSERT_EQ(e0->run(n), n);
    EXPECT_EQ(e0->one_pass_steps(), 0);
    for (const char* variant : {"default", "in_stage", "after"}) {
      const std::string v = variant;
      ::setenv("VEM_S44_ONEPASS_CHUNK", "8", 1);
      if (v == "in_stage") ::setenv("VEM_S44_ONEPASS_LOADS", "in_stage", 1);
      if (v == "after") ::setenv("VEM_S44_ONEPASS_REST", "after", 1);
      auto e = make_engine(op, Backend::cuda, 0, nullptr, pass);
      ::unsetenv("VEM_S44_ONEPASS_CHUNK");
      ::unsetenv("VEM_S44_ONEPASS_LOADS");
      ::unsetenv("VEM_S44_ONEPASS_REST");
      ASSERT_EQ(e->run(n), n);
      EXPECT_EQ(e->one_pass_steps(), n) << "the one-pass kernel did not run";
      expect_same_fields_and_probes(*e0, *e,
                                    std::string(table == TP::global ? "global table" : "constant table") + ", " + v);
    }
  }
}

// s44's wavefront (EngineTuning::s44_stepping wavefront: the direct kernels' H and E passes over the
// shared core as tasks of one persistent launch, E of a plane after H of the planes it reads) gives
// the one-step fields and probes bit for bit: s44_core_setup's model (CPML on five faces, PEC on
// one; a soft and a hard source in the core, a magnetic one near its edge), both table placements
// and coefficient arrays. Variants: the defaults; one strip of 1-row tasks with lag 1 (an E task
// right after the H of its last plane: the waits are exercised); 3-row tasks, lag 5, 3 blocks;
// 2-row tasks in 3 strips with lag 3; 1-row tasks in 5 strips, lag 1, 7 blocks.
TEST(SchemeCudaS44Wavefront, GivesTheOneStepFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  using SS = EngineTuning::S44Stepping;
  for (const MaterialVariant& m : material_variants()) {
    const FdtdOperator op(s44_core_setup(m.mode));
    EngineTuning one, wave;
    one.s44_stepping = SS::one_step;
    wave.s44_stepping = SS::wavefront;
    one.table = wave.table = m.table;
    const int n = 121;
    auto e0 = make_engine(op, Backend::cuda, 0, nullptr, one);
    ASSERT_EQ(e0->run(n), n);
    EXPECT_EQ(e0->one_pass_steps(), 0);
    struct Variant {
      const char *rows, *lag, *blocks, *strips;
    };
    for (const Variant& v : {Variant{"", "", "", ""}, Variant{"1", "1", "", "1"}, Variant{"3", "5", "3", "1"},
                             Variant{"2", "3", "", "3"}, Variant{"1", "1", "7", "5"}}) {
      const std::string what = std::string(m.what) + ", rows " + v.rows + " lag " + v.lag + " blocks " + v.blocks +
                               " strips " + v.strips;
      ::setenv("VEM_S44_WAVE_ROWS", v.rows, 1);
      ::setenv("VEM_S44_WAVE_LAG", v.lag, 1);
      ::setenv("VEM_S44_WAVE_BLOCKS", v.blocks, 1);
      ::setenv("VEM_S44_WAVE_STRIPS", v.strips, 1);
      auto e = make_engine(op, Backend::cuda, 0, nullptr, wave);
      for (const char* name : {"VEM_S44_WAVE_ROWS", "VEM_S44_WAVE_LAG", "VEM_S44_WAVE_BLOCKS", "VEM_S44_WAVE_STRIPS"})
        ::unsetenv(name);
      ASSERT_EQ(e->run(n), n);
      EXPECT_EQ(e->one_pass_steps(), n) << "the wavefront did not run: " << what;
      expect_same_fields_and_probes(*e0, *e, what);
    }
  }
}

// s44's direct kernel with the stores last (s44_direct, the default: every load of a sample before
// its three stores, the s44 coefficients from the per-key table with a material table) gives
// ho_interior_direct's fields (VEM_S44_DIRECT=interleaved) bit for bit, and so does its variant with
// the levels read first (VEM_S44_LOAD_ORDER=levels_first). Indexed with both table
// placements, and coefficient arrays (the coefficients computed per sample); a harmonic current
// folded into the E update (the fused source, rescaled to the curl's coefficient) beside the
// point sources; the block shape of SchemeCudaKernels, which does not divide the box.
TEST(SchemeCudaS44Direct, StoresLastGiveTheInterleavedFields) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  for (const MaterialVariant& v : material_variants()) {
    const FdtdOperator op(make_setup(Scheme::s44, v.mode));
    EngineTuning t;
    t.table = v.table;
    t.ho_kernel = EngineTuning::HighOrderKernel::direct;
    t.ho_block_x = 32; t.ho_block_y = 3; t.ho_block_z = 5;
    const int n = 150;
    std::vector<float> fields[3][6];
    std::vector<std::vector<float>> probes[3];
    for (int variant = 0; variant < 3; ++variant) {
      ::setenv("VEM_S44_DIRECT", variant == 0 ? "interleaved" : "stores_last", 1);
      if (variant == 2) ::setenv("VEM_S44_LOAD_ORDER", "levels_first", 1);
      auto e = make_engine(op, Backend::cuda, 0, nullptr, t);
      ::unsetenv("VEM_S44_DIRECT");
      ::unsetenv("VEM_S44_LOAD_ORDER");
#ifdef VEM_WITH_CUDA
      HarmonicCurrentSource current(*e, 20e9);
      const std::size_t count = 2 * std::size_t(op.layout().size);
      std::vector<float> amp(count);
      for (int c = 0; c < 3; ++c) {
        for (std::size_t q = 0; q < count; ++q) amp[q] = std::sin(0.0007f * float(q) + float(c));
        ASSERT_EQ(cudaMemcpy(current.amplitude_data(c), amp.data(), count * sizeof(float), cudaMemcpyHostToDevice),
                  cudaSuccess);
      }
#endif
      ASSERT_EQ(e->run(n), n);
      for (int ci = 0; ci < 6; ++ci) fields[variant][ci] = e->field(Component(ci));
      probes[variant] = e->probes().values;
    }
    for (int w = 1; w < 3; ++w) {
      const char* which = w == 1 ? "stores last" : "levels first";
      for (int ci = 0; ci < 6; ++ci) {
        const auto& a = fields[0][ci];
        const auto& b = fields[w][ci];
        EXPECT_EQ(differing(a, b), 0u) << v.what << ", " << which << ": " << component_name(Component(ci))
                                       << ", max difference " << max_diff(a, b) << " of " << max_abs(a);
        EXPECT_GT(max_abs(a), 0.0) << component_name(Component(ci));
      }
      ASSERT_EQ(probes[0].size(), probes[w].size());
      for (std::size_t p = 0; p < probes[0].size(); ++p)
        EXPECT_EQ(probes[0][p], probes[w][p]) << v.what << ", " << which << ": probe " << p;
    }
  }
}

TEST(SchemeCudaBlock, BadBlockShapeIsRefusedWithItsValue) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdOperator op(make_setup(Scheme::fv24, MaterialMode::indexed));
  EngineTuning t;
  t.ho_block_x = 64; t.ho_block_y = 8; t.ho_block_z = 4;  // 2048 threads
  try {
    make_engine(op, Backend::cuda, 0, nullptr, t);
    FAIL() << "a 2048-thread block was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("64 x 8 x 4"), std::string::npos) << e.what();
  }
}

}  // namespace
