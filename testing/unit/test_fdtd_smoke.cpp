// Smoke test of the engine plumbing: a pulse in a small PEC box leaves finite, non-zero energy,
// probes record every step, and the time axis follows the leap-frog convention.
#include <cmath>

#include "test_support.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

class FdtdSmoke : public testing::TestWithParam<Backend> {};

TEST_P(FdtdSmoke, PulseInPecBoxHasFiniteEnergyAndProbes) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s;
  s.grid = {12, 10, 9, 1e-3, 1.1e-3, 0.9e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::pec);
  s.materials = {Material::vacuum()};
  PointSource src;
  src.i = 5; src.j = 4; src.k = 3;
  src.direction = {0.3, 0.5, 1.0};
  src.waveform = Waveform::gaussian_for_bandwidth(100e9);
  s.sources = {src};
  s.probes = {{"ez", Component::Ez, 3, 3, 3}, {"hx", Component::Hx, 4, 4, 4}};
  FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
  EXPECT_EQ(eng->run(300), 300);
  EXPECT_EQ(eng->steps_completed(), 300);
  const double energy = eng->field_energy();
  EXPECT_TRUE(std::isfinite(energy));
  EXPECT_GT(energy, 0.0);
  const ProbeRecord r = eng->probes();
  ASSERT_EQ(r.values.size(), 2u);
  ASSERT_EQ(r.values[0].size(), 300u);
  double peak = 0;
  for (float v : r.values[0]) peak = std::max(peak, double(std::fabs(v)));
  EXPECT_GT(peak, 0.0);
  EXPECT_DOUBLE_EQ(eng->probe_time(Component::Ez, 10), 10 * op.dt());
  EXPECT_DOUBLE_EQ(eng->probe_time(Component::Hx, 10), 9.5 * op.dt());
}

VEM_INSTANTIATE_BACKENDS(FdtdSmoke);
