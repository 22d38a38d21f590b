// Cell-centre interpolation and nearest-sample lookup (field_sampling.h): a field that is linear in
// position is reproduced exactly at the cell centres for every component, and the nearest sample
// of each component to a world point is the one whose Yee position is closest.
#include <gtest/gtest.h>

#include <cmath>

#include "vem/core/error.h"
#include "vem/core/field_sampling.h"

using namespace vem;

TEST(FieldSampling, LinearFieldIsExactAtCellCentres) {
  YeeGrid g{7, 5, 4, 1e-3, 2e-3, 1.5e-3, {0.1, -0.2, 0.3}};
  auto lin = [](const std::array<double, 3>& p) { return 3.0 + 20 * p[0] - 7 * p[1] + 11 * p[2]; };
  for (int ci = 0; ci < 6; ++ci) {
    const Component c = Component(ci);
    std::vector<float> f(std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1));
    for (int k = 0; k <= g.nz; ++k)
      for (int j = 0; j <= g.ny; ++j)
        for (int i = 0; i <= g.nx; ++i) f[i + (g.nx + 1) * (j + (g.ny + 1) * k)] = float(lin(g.position(c, i, j, k)));
    const std::array<int, 3> first{1, 2, 0}, count{5, 3, 4};
    std::vector<float> out(3 * 5 * 3 * 4, -1.0f);
    cell_centred(g, f, c, first, count, out.data(), 3, 1);
    for (int K = 0; K < count[2]; ++K)
      for (int J = 0; J < count[1]; ++J)
        for (int I = 0; I < count[0]; ++I) {
          const std::array<double, 3> centre{g.origin[0] + (first[0] + I + 0.5) * g.dx,
                                             g.origin[1] + (first[1] + J + 0.5) * g.dy,
                                             g.origin[2] + (first[2] + K + 0.5) * g.dz};
          const float v = out[3 * (I + count[0] * (J + count[1] * K)) + 1];
          EXPECT_NEAR(v, lin(centre), 1e-5) << component_name(c) << " at cell " << I << "," << J << "," << K;
        }
    EXPECT_EQ(out[0], -1.0f) << "only the requested component slot is written";
  }
}

TEST(FieldSampling, NearestSampleIsTheClosestYeeSample) {
  YeeGrid g{10, 10, 10, 1e-3, 1e-3, 2e-3, {0, 0, 0}};
  for (int ci = 0; ci < 6; ++ci) {
    const Component c = Component(ci);
    const auto idx = nearest_sample(g, c, {4.3e-3, 5.6e-3, 7.1e-3});
    const auto p = g.position(c, idx[0], idx[1], idx[2]);
    const std::array<double, 3> q{4.3e-3, 5.6e-3, 7.1e-3};
    const std::array<double, 3> d = g.d();
    for (int a = 0; a < 3; ++a) EXPECT_LE(std::fabs(p[a] - q[a]), 0.5 * d[a] + 1e-12) << component_name(c);
  }
}

TEST(FieldSampling, BoxOutsideTheGridIsRefused) {
  YeeGrid g{4, 4, 4, 1e-3, 1e-3, 1e-3};
  std::vector<float> f(125, 0.0f), out(64);
  EXPECT_THROW(cell_centred(g, f, Component::Ex, {1, 0, 0}, {4, 4, 4}, out.data()), Error);
}
