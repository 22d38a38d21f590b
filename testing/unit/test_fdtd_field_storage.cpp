// Narrow field storage (issue 16; vem/core/field_storage.h, FdtdSetup::field_storage): the rounding
// to float16 / bfloat16 against values worked out by hand from the formats (binary16: 10 fraction
// bits, exponent bias 15, subnormal step 2^-24; bfloat16: 7 fraction bits, float32's exponent),
// the option checks with their messages, and the CPU engine's emulation: every stored value is a
// value of the storage, and a run stays near the float32 run (a lossy cavity with CPML, a pulse).
// The CUDA engine's 2-byte arrays against the CPU engine, bit for bit, and the rounding against
// the CUDA conversions for all 2^32 floats: test_fdtd_cpu_cuda_agreement.cpp (GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "option_checks.h"
#include "test_support.h"
#include "vem/core/field_storage.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/voxel_domain.h"

using namespace vem;
using namespace vem_test;

namespace {

std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Same float, sign of zero included.
void expect_same(float got, float want, const char* what) {
  EXPECT_EQ(bits(got), bits(want)) << what << ": got " << got << ", want " << want;
}

}  // namespace

TEST(FieldStorage, Float16RoundsToNearestEven) {
  const float u = std::ldexp(1.0f, -10);  // binary16 step at 1
  expect_same(round_to_float16(1.0f), 1.0f, "1");
  expect_same(round_to_float16(1.0f + u / 2), 1.0f, "tie below an even neighbour");
  expect_same(round_to_float16(1.0f + 1.5f * u), 1.0f + 2 * u, "tie below an odd neighbour");
  expect_same(round_to_float16(1.0f + 0.51f * u), 1.0f + u, "above the tie");
  expect_same(round_to_float16(-3.14159265f), -3.140625f, "pi (step 2^-8 in [2, 4))");
  expect_same(round_to_float16(0.1f), 0.0999755859375f, "0.1");
  expect_same(round_to_float16(2047.5f), 2048.0f, "carry into the exponent");
  expect_same(round_to_float16(65504.0f), 65504.0f, "largest finite");
  expect_same(round_to_float16(65519.0f), 65504.0f, "below the overflow tie");
  expect_same(round_to_float16(65520.0f), std::numeric_limits<float>::infinity(), "overflow tie");
  expect_same(round_to_float16(-1e6f), -std::numeric_limits<float>::infinity(), "overflow, negative");
  const float s = std::ldexp(1.0f, -24);  // smallest subnormal
  expect_same(round_to_float16(s), s, "smallest subnormal");
  expect_same(round_to_float16(s / 2), 0.0f, "half the smallest subnormal (tie to 0)");
  expect_same(round_to_float16(-s / 2), -0.0f, "negative tie keeps the sign");
  expect_same(round_to_float16(0.75f * s), s, "above that tie");
  expect_same(round_to_float16(2.5f * s), 2 * s, "subnormal tie to even");
  expect_same(round_to_float16(std::ldexp(1.0f, -14) - s / 4), std::ldexp(1.0f, -14), "up to the smallest normal");
  expect_same(round_to_float16(1e-30f), 0.0f, "far below");
  EXPECT_TRUE(std::isnan(round_to_float16(std::numeric_limits<float>::quiet_NaN())));
  // Idempotent on a sweep of magnitudes: a stored value stores unchanged.
  for (float x = 1e-9f; x < 6e4f; x *= 1.0137f) {
    const float r = round_to_float16(x);
    ASSERT_EQ(bits(round_to_float16(r)), bits(r)) << x;
    ASSERT_LE(std::fabs(r - x), x >= 6.2e-5f ? x * std::ldexp(1.0f, -11) : s / 2) << x;
  }
}

TEST(FieldStorage, Bfloat16RoundsToNearestEven) {
  const float u = std::ldexp(1.0f, -7);
  expect_same(round_to_bfloat16(1.0f + u / 2), 1.0f, "tie below an even neighbour");
  expect_same(round_to_bfloat16(1.0f + 1.5f * u), 1.0f + 2 * u, "tie below an odd neighbour");
  expect_same(round_to_bfloat16(-3.14159265f), -3.140625f, "pi (step 2^-6 in [2, 4))");
  expect_same(round_to_bfloat16(bits_float(0x00012345u)), bits_float(0x00010000u), "float subnormal, down");
  expect_same(round_to_bfloat16(bits_float(0x00018000u)), bits_float(0x00020000u), "float subnormal, tie to even");
  expect_same(round_to_bfloat16(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity(), "overflow");
  expect_same(round_to_bfloat16(3.3895314e38f), 3.3895314e38f, "largest finite");
  EXPECT_TRUE(std::isnan(round_to_bfloat16(std::numeric_limits<float>::quiet_NaN())));
  for (float x = 1e-30f; x < 1e30f; x *= 1.37f) {
    const float r = round_to_bfloat16(x);
    ASSERT_EQ(bits(round_to_bfloat16(r)), bits(r)) << x;
    ASSERT_LE(std::fabs(r - x), x * std::ldexp(1.0f, -8)) << x;
  }
}

TEST(FieldStorage, NamesAndOptionChecks) {
  for (FieldStorage s : {FieldStorage::float32, FieldStorage::float16, FieldStorage::bfloat16})
    EXPECT_EQ(field_storage_from_name(field_storage_name(s)), s);
  expect_parts(error_of([] { field_storage_from_name("fp8"); }), {"fp8", "float32, float16 or bfloat16"});
  EXPECT_EQ(field_storage_bytes(FieldStorage::float16), 2);

  FdtdSetup s;
  s.grid = YeeGrid{12, 12, 12, 1e-3, 1e-3, 1e-3};
  s.field_storage = FieldStorage::float16;
  s.scheme = Scheme::fv24;
  expect_parts(error_of([&] { FdtdOperator op(s); }), {"field_storage float16", "scheme yee only", "fv24"});
  s.scheme = Scheme::yee;
  s.material_mode = MaterialMode::coefficient_array;
  s.medium.eps_r.assign(1, std::vector<float>(s.grid.cell_count(), 2.0f));
  s.medium.inverse_eps_rows.push_back(InverseEpsRow{});
  expect_parts(error_of([&] { FdtdOperator op(s); }), {"field_storage float16", "inverse_eps_rows", "float32"});

  // The filters' options: the same check with the ParaView property names.
  VoxelDomainOptions o;
  o.field_storage = FieldStorage::bfloat16;
  o.scheme = Scheme::s44;
  expect_rejected(o, {"VoxelDomainOptions::field_storage (FieldStorage) = bfloat16", "s44 (Scheme)", "yee only"});
  o.scheme = Scheme::yee;
  o.subpixel_smoothing = true;
  o.subpixel.full_tensor = true;
  expect_rejected(o, {"VoxelDomainOptions::field_storage (FieldStorage) = bfloat16", "SubpixelTensor = Full"});
  o.subpixel.full_tensor = false;
  EXPECT_NO_THROW(o.validate());
}

TEST(FieldStorage, DeviceBytesCountTwoBytesAField) {
  FdtdSetup s;
  s.grid = YeeGrid{40, 30, 20, 1e-3, 1e-3, 1e-3};
  for (auto& c : s.boundaries.cpml) c.thickness = 4;
  Material vac;
  vac.name = "vacuum";
  s.materials = {vac};
  const FdtdOperator wide(s);
  s.field_storage = FieldStorage::float16;
  const FdtdOperator narrow(s);
  EXPECT_EQ(wide.device_bytes() - narrow.device_bytes(), 6 * 2 * wide.layout().size);
}

// A lossy box with CPML on four faces and PEC on two, a soft E pulse and a magnetic-current
// pulse: the CPU engine's narrow runs keep only storable values and stay near the float32 run.
TEST(FieldStorage, CpuEngineStoresOnlyStorableValues) {
  FdtdSetup s;
  s.grid = YeeGrid{36, 30, 26, 1e-3, 1e-3, 1e-3};
  s.boundaries.face = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                       BoundaryType::cpml, BoundaryType::pec, BoundaryType::pec};
  for (auto& c : s.boundaries.cpml) c.thickness = 6;
  Material m;
  m.name = "lossy";
  for (int a = 0; a < 3; ++a) { m.eps_r[a] = 4.0; m.sigma_e[a] = 0.05; }
  Material vac;
  vac.name = "vacuum";
  s.materials = {vac, m};
  s.material_index.assign(s.grid.cell_count(), 0);
  for (int k = 8; k < 18; ++k)
    for (int j = 10; j < 20; ++j)
      for (int i = 12; i < 24; ++i) s.material_index[i + 36 * (j + 30 * k)] = 1;
  const Waveform w = Waveform::differentiated_gaussian_for_bandwidth(40e9);
  // Moments of 1e-6 A m and 377e-6 V m in 1 mm cells: fields of a few hundred V/m, within
  // float16's range (|E| or |H| above 65504 would overflow: field_storage.h).
  PointSource e; e.i = 18; e.j = 15; e.k = 13; e.direction = {0.3, 0.2, 1.0}; e.amplitude = 1e-6; e.waveform = w;
  PointSource h; h.kind = PointSource::Kind::magnetic_current; h.i = 10; h.j = 9; h.k = 12;
  h.direction = {1, 0, 0}; h.amplitude = 377e-6; h.waveform = w;
  s.sources = {e, h};
  const FdtdOperator wide(s);
  auto ref = make_engine(wide, Backend::cpu);
  const int n = 300;
  ASSERT_EQ(ref->run(n), n);
  for (FieldStorage fs : {FieldStorage::float16, FieldStorage::bfloat16}) {
    s.field_storage = fs;
    const FdtdOperator op(s);
    auto eng = make_engine(op, Backend::cpu);
    ASSERT_EQ(eng->run(n), n);
    for (int c = 0; c < 6; ++c) {
      const auto a = eng->field(Component(c)), b = ref->field(Component(c));
      std::size_t unstorable = 0, differ = 0;
      double num = 0, den = 0;
      for (std::size_t q = 0; q < a.size(); ++q) {
        unstorable += bits(round_to_storage(a[q], fs)) != bits(a[q]);
        differ += a[q] != b[q];
        num += (double(a[q]) - b[q]) * (double(a[q]) - b[q]);
        den += double(b[q]) * b[q];
      }
      const double rel = std::sqrt(num / den);
      std::cout << field_storage_name(fs) << " " << component_name(Component(c)) << ": rel L2 against float32 " << rel
                << ", " << differ << " of " << a.size() << " samples differ\n";
      EXPECT_EQ(unstorable, 0u) << component_name(Component(c));
      EXPECT_GT(den, 0.0);
      EXPECT_GT(differ, 0u) << "the storage was not narrowed";
      // Rounding errors of 2^-11 (float16) / 2^-8 (bfloat16) a store, accumulated over the run
      // (a few hundred stores a sample): loose bounds, the printout tells.
      EXPECT_LT(rel, fs == FieldStorage::float16 ? 2e-2 : 0.3) << component_name(Component(c));
    }
  }
}

// float16 overflows above 65504: a 1 A m current moment in a 1 mm cell drives E to about 1e8 V/m.
// run() finds the non-finite samples and says so (no silent infinities); float32 runs on.
class FieldStorageOverflow : public testing::TestWithParam<Backend> {};

TEST_P(FieldStorageOverflow, OverflowIsReportedNotSilent) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s;
  s.grid = YeeGrid{20, 20, 20, 1e-3, 1e-3, 1e-3};
  for (auto& c : s.boundaries.cpml) c.thickness = 4;
  Material vac;
  vac.name = "vacuum";
  s.materials = {vac};
  PointSource e;
  e.i = 10; e.j = 10; e.k = 10;
  e.direction = {0, 0, 1};
  e.amplitude = 1.0;
  e.waveform = Waveform::differentiated_gaussian_for_bandwidth(40e9);
  s.sources = {e};
  const FdtdOperator wide(s);
  auto ok = make_engine(wide, GetParam());
  EXPECT_EQ(ok->run(60), 60);
  s.field_storage = FieldStorage::float16;
  const FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
  expect_parts(error_of([&] { eng->run(60); }), {"field storage float16", "is not finite", "65504", "float32"});
}

VEM_INSTANTIATE_BACKENDS(FieldStorageOverflow);

// The steady-state test with a 2-byte storage: the phasors' change between checks has a floor
// from the rounding (float16 5e-3, bfloat16 4e-2 and growing; fdtd_reduced_storage.md), so a
// tolerance below it is refused before any step, and bfloat16 needs fixed_steps.
TEST(FieldStorage, SteadyStateToleranceAboveTheRoundingFloor) {
  FdtdSetup s;
  s.grid = YeeGrid{24, 24, 24, 2e-3, 2e-3, 2e-3};
  for (auto& c : s.boundaries.cpml) c.thickness = 6;
  Material vac;
  vac.name = "vacuum";
  s.materials = {vac};
  s.field_storage = FieldStorage::float16;
  HarmonicOptions o;
  o.frequencies = {10e9};
  o.backend = Backend::cpu;
  expect_parts(error_of([&] { run_fdtd_harmonic(s, o); }),
               {"HarmonicOptions::steady_state_tolerance (SteadyStateTolerance) = 0.001", "float16", ">= 0.01"});
  s.field_storage = FieldStorage::bfloat16;
  o.steady_state_tolerance = 0.05;
  expect_parts(error_of([&] { run_fdtd_harmonic(s, o); }), {"bfloat16", "fixed_steps"});
}
