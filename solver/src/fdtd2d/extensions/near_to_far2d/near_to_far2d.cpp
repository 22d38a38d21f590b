// 2D near-to-far-field transform (near_to_far2d.h).
#include "vem/fdtd2d/extensions/near_to_far2d.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

using cd = std::complex<double>;

// One contour sample: world position, outward normal, weight (length), and the fields there.
struct ContourSample {
  double x, y, nx, ny, w;
  cd e[3], h[3];  // x, y, z components
};

}  // namespace

std::vector<cd> near_to_far_2d(const Fdtd2dOperator& op, const NearToFarContour2D& c, double f,
                               const std::array<std::vector<std::complex<float>>, 3>& ph,
                               const std::vector<double>& phi) {
  const YeeGrid2D& g = op.grid();
  if (!std::isfinite(f) || !(f > 0)) fail("near_to_far_2d: frequency = ", f, " Hz: must be finite and > 0");
  const int n[2] = {g.nx, g.ny};
  for (int a = 0; a < 2; ++a)
    if (c.lo[a] < 1 || c.hi[a] > n[a] - 1 || c.lo[a] >= c.hi[a])
      fail("near_to_far_2d: contour ", "xy"[a], " range [", c.lo[a], ", ", c.hi[a], "]: needs lo < hi within [1, ",
           n[a] - 1, "]");
  const std::size_t size = std::size_t(g.nx + 1) * (g.ny + 1);
  for (int s = 0; s < 3; ++s)
    if (ph[s].size() != size)
      fail("near_to_far_2d: phasors[", s, "].size() = ", ph[s].size(), ": must be (nx+1)(ny+1) = ", size);
  const bool tm = op.polarization() == Polarization2D::tm;
  // Slots: TM 0 Ez 1 Hx 2 Hy; TE 0 Hz 1 Ex 2 Ey.
  auto at = [&](int s, int i, int j) { return cd(ph[s][i + std::size_t(g.nx + 1) * j]); };
  std::vector<ContourSample> pts;
  const double dx = g.dx, dy = g.dy;
  // Edges: (normal, fixed node index along the normal axis, running axis).
  for (int edge = 0; edge < 4; ++edge) {
    const int a = edge / 2;         // normal axis
    const int b = 1 - a;            // running axis
    const int side = edge % 2;
    const int fixed = side ? c.hi[a] : c.lo[a];
    const double nrm = side ? 1.0 : -1.0;
    const double d_run = b == 0 ? dx : dy;
    if (tm) {
      for (int u = c.lo[b]; u <= c.hi[b]; ++u) {
        const int i = a == 0 ? fixed : u, j = a == 0 ? u : fixed;
        ContourSample p{};
        p.x = g.origin[0] + i * dx;
        p.y = g.origin[1] + j * dy;
        p.nx = a == 0 ? nrm : 0.0;
        p.ny = a == 1 ? nrm : 0.0;
        p.w = (u == c.lo[b] || u == c.hi[b]) ? 0.5 * d_run : d_run;
        p.e[2] = at(0, i, j);
        // Tangential H: Hy on x edges (half a cell either side along x), Hx on y edges.
        if (a == 0) p.h[1] = 0.5 * (at(2, i - 1, j) + at(2, i, j));
        else p.h[0] = 0.5 * (at(1, i, j - 1) + at(1, i, j));
        pts.push_back(p);
      }
    } else {
      for (int u = c.lo[b]; u < c.hi[b]; ++u) {
        const int i = a == 0 ? fixed : u, j = a == 0 ? u : fixed;
        ContourSample p{};
        p.x = g.origin[0] + (a == 0 ? i : i + 0.5) * dx;
        p.y = g.origin[1] + (a == 1 ? j : j + 0.5) * dy;
        p.nx = a == 0 ? nrm : 0.0;
        p.ny = a == 1 ? nrm : 0.0;
        p.w = d_run;
        // Tangential E: Ey on x edges (sample (i, j) at (i, j + 1/2)), Ex on y edges.
        if (a == 0) {
          p.e[1] = at(2, i, j);
          p.h[2] = 0.5 * (at(0, i - 1, j) + at(0, i, j));
        } else {
          p.e[0] = at(1, i, j);
          p.h[2] = 0.5 * (at(0, i, j - 1) + at(0, i, j));
        }
        pts.push_back(p);
      }
    }
  }
  const double k = 2 * kPi * f / kC0;
  const cd pre = (k / 4.0) * std::sqrt(cd(0.0, 2.0) / (kPi * k));
  std::vector<cd> out(phi.size());
  for (std::size_t q = 0; q < phi.size(); ++q) {
    const double cp = std::cos(phi[q]), sp = std::sin(phi[q]);
    cd N[3] = {}, L[3] = {};
    for (const ContourSample& p : pts) {
      const cd w = p.w * std::exp(cd(0.0, k * (cp * p.x + sp * p.y)));
      // J = n x H, M = E x n (n = (nx, ny, 0)).
      const cd J[3] = {p.ny * p.h[2], -p.nx * p.h[2], p.nx * p.h[1] - p.ny * p.h[0]};
      const cd M[3] = {-p.e[2] * p.ny, p.e[2] * p.nx, p.e[0] * p.ny - p.e[1] * p.nx};
      for (int a = 0; a < 3; ++a) {
        N[a] += J[a] * w;
        L[a] += M[a] * w;
      }
    }
    out[q] = tm ? pre * (-kEta0 * N[2] + cp * L[1] - sp * L[0]) : pre * (-L[2] / kEta0 - cp * N[1] + sp * N[0]);
  }
  return out;
}

std::vector<double> scattering_width_2d(const std::vector<cd>& far, cd incident) {
  if (!(std::abs(incident) > 0)) fail("scattering_width_2d: incident = 0: the incident phasor must be non-zero");
  std::vector<double> s(far.size());
  for (std::size_t q = 0; q < far.size(); ++q) s[q] = 2 * kPi * std::norm(far[q]) / std::norm(incident);
  return s;
}

}  // namespace vem
