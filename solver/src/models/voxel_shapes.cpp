// Voxelized shapes (voxel_shapes.h).
#include "vem/models/voxel_shapes.h"

#include <algorithm>
#include <cmath>

#include "vem/core/error.h"

namespace vem {

std::int64_t paint_sphere(const YeeGrid& g, const std::array<double, 3>& centre, double radius,
                          std::uint16_t label, std::vector<std::uint16_t>& cells) {
  g.validate();
  if (!(radius > 0)) fail("paint_sphere: radius ", radius, " m must be > 0");
  if (std::int64_t(cells.size()) != g.cell_count()) cells.resize(std::size_t(g.cell_count()), 0);
  std::int64_t count = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double x = g.origin[0] + (i + 0.5) * g.dx - centre[0];
        const double y = g.origin[1] + (j + 0.5) * g.dy - centre[1];
        const double z = g.origin[2] + (k + 0.5) * g.dz - centre[2];
        if (x * x + y * y + z * z < radius * radius) {
          cells[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = label;
          ++count;
        }
      }
  return count;
}

std::vector<float> sphere_volume_fraction(const YeeGrid& g, const std::array<double, 3>& centre, double radius,
                                          int samples) {
  g.validate();
  if (!(radius > 0)) fail("sphere_volume_fraction: radius ", radius, " m must be > 0");
  if (samples < 1 || samples > 64) fail("sphere_volume_fraction: ", samples, " samples per axis (1..64)");
  std::vector<float> frac(std::size_t(g.cell_count()), 0.0f);
  const double r2 = radius * radius;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const double lo[3] = {g.origin[0] + i * g.dx - centre[0], g.origin[1] + j * g.dy - centre[1],
                              g.origin[2] + k * g.dz - centre[2]};
        const double d[3] = {g.dx, g.dy, g.dz};
        double near2 = 0, far2 = 0;  // squared distances of the nearest / farthest cell points
        for (int a = 0; a < 3; ++a) {
          const double u = lo[a], v = lo[a] + d[a];
          const double n = u > 0 ? u : (v < 0 ? -v : 0.0);
          const double f = std::max(std::fabs(u), std::fabs(v));
          near2 += n * n;
          far2 += f * f;
        }
        float value;
        if (far2 < r2) {
          value = 1.0f;
        } else if (near2 >= r2) {
          value = 0.0f;
        } else {
          int inside = 0;
          for (int c = 0; c < samples; ++c)
            for (int b = 0; b < samples; ++b)
              for (int a = 0; a < samples; ++a) {
                const double x = lo[0] + (a + 0.5) * d[0] / samples, y = lo[1] + (b + 0.5) * d[1] / samples,
                             z = lo[2] + (c + 0.5) * d[2] / samples;
                inside += x * x + y * y + z * z < r2 ? 1 : 0;
              }
          value = float(double(inside) / (double(samples) * samples * samples));
        }
        frac[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = value;
      }
  return frac;
}

SphereGeometry::SphereGeometry(const std::array<double, 3>& centre, double radius, int inside, int outside)
    : c_(centre), r_(radius), in_(inside), out_(outside) {
  if (!(radius > 0) || !std::isfinite(radius)) fail("SphereGeometry: radius ", radius, " m must be finite and > 0");
  for (int a = 0; a < 3; ++a)
    if (!std::isfinite(centre[a])) fail("SphereGeometry: centre ", "xyz"[a], " = ", centre[a], " m must be finite");
}

int SphereGeometry::material_at(const std::array<double, 3>& p) const {
  const double x = p[0] - c_[0], y = p[1] - c_[1], z = p[2] - c_[2];
  return x * x + y * y + z * z < r_ * r_ ? in_ : out_;
}

bool SphereGeometry::uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& material) const {
  double near2 = 0, far2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double q = std::clamp(c_[a], lo[a], hi[a]) - c_[a];
    near2 += q * q;
    const double f = std::max(std::fabs(lo[a] - c_[a]), std::fabs(hi[a] - c_[a]));
    far2 += f * f;
  }
  if (near2 >= r_ * r_) {
    material = out_;
    return true;
  }
  if (far2 < r_ * r_) {
    material = in_;
    return true;
  }
  return false;
}

bool SphereGeometry::normal_at(const std::array<double, 3>& p, std::array<double, 3>& n) const {
  const double x = p[0] - c_[0], y = p[1] - c_[1], z = p[2] - c_[2];
  const double r = std::sqrt(x * x + y * y + z * z);
  if (!(r > 1e-12 * r_)) return false;
  n = {x / r, y / r, z / r};
  return true;
}

}  // namespace vem
