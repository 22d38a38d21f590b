// FdtdOperator::coefficient_index: a coefficient-array model's coefficients packed as a table of
// distinct tuples and a 16-bit index (what the CUDA engine reads by default, fdtd_engine.h).
// The table must reproduce every array value bit for bit, the engines must give the same fields
// from it as from the arrays, and a model with too many distinct tuples must fall back to the
// arrays (automatic) or be refused with a readable message (forced table).
#include <cstring>
#include <random>

#include "test_support.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_operator.h"

using namespace vem;

namespace {

// A sphere of eps_r 4 (sigma 0.5 S/m) in air, per-cell arrays averaged at the edges (what the
// FDFD time-domain preconditioner builds for the paper's sphere), CPML on every face.
FdtdSetup sphere_setup(int n) {
  FdtdSetup s;
  s.grid = {n, n, n, 2e-3, 2e-3, 2e-3};
  s.boundaries.face.fill(BoundaryType::cpml);
  for (auto& c : s.boundaries.cpml) c.thickness = 6;
  s.material_mode = MaterialMode::coefficient_array;
  const std::int64_t cells = s.grid.cell_count();
  s.medium.eps_r.assign(1, std::vector<float>(cells, 1.0f));
  s.medium.sigma_e.assign(1, std::vector<float>(cells, 0.0f));
  s.medium.average_at_edges = true;
  const double c = 0.5 * n, r = 0.3 * n;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = i + 0.5 - c, y = j + 0.5 - c, z = k + 0.5 - c;
        if (x * x + y * y + z * z <= r * r) {
          const std::int64_t q = i + std::int64_t(n) * (j + std::int64_t(n) * k);
          s.medium.eps_r[0][q] = 4.0f;
          s.medium.sigma_e[0][q] = 0.5f;
        }
      }
  PointSource src;
  src.i = n / 2;
  src.j = n / 2;
  src.k = n / 2;
  src.direction = {1, 0, 0};
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(20e9);
  s.sources = {src};
  return s;
}

}  // namespace

TEST(CoefficientIndex, TableReproducesTheArraysBitForBit) {
  const FdtdOperator op(sphere_setup(30));
  const auto* ix = op.coefficient_index();
  ASSERT_NE(ix, nullptr);
  // Air, sphere, the averaged edge values around the surface, and the zero padding.
  EXPECT_GT(ix->entries(), 3u);
  EXPECT_LT(ix->entries(), 200u);
  std::cout << "sphere of 30^3 cells: " << ix->entries() << " distinct coefficient tuples\n";
  RecordProperty("entries", int(ix->entries()));
  const auto& arr = op.coefficient_arrays();
  ASSERT_EQ(ix->index.size(), arr[0].size());
  std::size_t differ = 0;
  for (std::size_t o = 0; o < ix->index.size(); ++o)
    for (int q = 0; q < 12; ++q)
      differ += std::memcmp(&ix->table[ix->index[o] * 12 + q], &arr[q][o], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(op.coefficient_index(), ix) << "built once and kept";
}

TEST(CoefficientIndex, EnginesGiveTheFieldsOfTheArrays) {
  const FdtdOperator op(sphere_setup(24));
  for (Backend b : {Backend::cpu, Backend::cuda}) {
    if (b == Backend::cuda && !cuda_available()) {
      std::cout << "CUDA backend not tested here (no usable device)\n";
      continue;
    }
    EngineTuning arrays, table;
    arrays.coefficients = EngineTuning::Coefficients::arrays;
    table.coefficients = EngineTuning::Coefficients::table;
    auto ref = make_engine(op, b, 0, nullptr, arrays);
    auto eng = make_engine(op, b, 0, nullptr, table);
    ref->run(150);
    eng->run(150);
    for (int ci = 0; ci < 6; ++ci) {
      const auto fa = eng->field(Component(ci)), fb = ref->field(Component(ci));
      ASSERT_EQ(fa.size(), fb.size());
      std::size_t differ = 0;
      double norm = 0;
      for (std::size_t i = 0; i < fa.size(); ++i) {
        differ += fa[i] != fb[i];
        norm += double(fb[i]) * fb[i];
      }
      EXPECT_EQ(differ, 0u) << backend_name(b) << " " << component_name(Component(ci));
      EXPECT_GT(norm, 0.0) << "the field is zero: the comparison would be vacuous";
    }
  }
}

TEST(CoefficientIndex, TooManyDistinctTuplesFallBackOrFail) {
  // 48^3 cells with their own random permittivity: more than 65536 distinct tuples.
  FdtdSetup s = sphere_setup(48);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(1.0f, 80.0f);
  for (auto& v : s.medium.eps_r[0]) v = u(rng);
  const FdtdOperator op(s);
  EXPECT_EQ(op.coefficient_index(), nullptr);
  EngineTuning automatic, table;
  table.coefficients = EngineTuning::Coefficients::table;
  EXPECT_NO_THROW(make_engine(op, Backend::cpu, 0, nullptr, automatic));
  try {
    make_engine(op, Backend::cpu, 0, nullptr, table);
    ADD_FAILURE() << "a forced table with more than 65536 tuples was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("65536 distinct coefficient tuples"), std::string::npos) << e.what();
  }
}

TEST(CoefficientIndex, IndexedModelsHaveNone) {
  FdtdSetup s = sphere_setup(16);
  s.material_mode = MaterialMode::indexed;
  s.materials = {Material::vacuum()};
  const FdtdOperator op(s);
  EXPECT_EQ(op.coefficient_index(), nullptr);
}
