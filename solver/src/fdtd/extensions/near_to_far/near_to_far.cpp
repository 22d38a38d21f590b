// Near-to-far-field transform on the Yee grid (see near_to_far.h).
#include "vem/fdtd/extensions/near_to_far.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

using cd = std::complex<double>;

std::array<cd, 3> cross(const std::array<double, 3>& a, const std::array<cd, 3>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

}  // namespace

void gauss_legendre(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(n, 0.0);
  w.assign(n, 0.0);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5));
    double dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = 0;
      for (int k = 1; k <= n; ++k) {
        const double p2 = p1;
        p1 = p0;
        p0 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p2) / k;
      }
      dp = n * (z * p0 - p1) / (z * z - 1.0);
      const double dz = p0 / dp;
      z -= dz;
      if (std::fabs(dz) < 1e-15) break;
    }
    x[i] = -z;
    x[n - 1 - i] = z;
    w[i] = w[n - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
}

namespace {

std::int64_t checked_cells(const YeeGrid& g, std::size_t ne, std::size_t nh) {
  g.validate();
  const std::int64_t N = g.cell_count();
  if (std::int64_t(ne) != 3 * N || std::int64_t(nh) != 3 * N)
    fail("near-to-far: field arrays hold ", ne, " and ", nh, " entries; expected 3 N = ", 3 * N);
  return N;
}

}  // namespace

NearToFarTransform::NearToFarTransform(const YeeGrid& g, double frequency,
                                       const std::vector<cd>& e, const std::vector<cd>& h,
                                       const NtffBox& box, const std::array<double, 3>& origin)
    : NearToFarTransform(
          g, frequency,
          [&e, &h, &g, N = checked_cells(g, e.size(), h.size())](Component c, int i, int j, int k) {
            return (is_electric(c) ? e : h)[axis_of(c) * N + i + std::int64_t(g.nx) * (j + std::int64_t(g.ny) * k)];
          },
          box, origin) {}

NearToFarTransform::NearToFarTransform(const YeeGrid& g, double frequency, const Sampler& sample,
                                       const NtffBox& box, const std::array<double, 3>& origin)
    : NearToFarTransform(g, frequency, sample, box, origin, PatchFilter()) {}

NearToFarTransform::NearToFarTransform(const YeeGrid& g, double frequency, const Sampler& sample,
                                       const NtffBox& box, const std::array<double, 3>& origin,
                                       const PatchFilter& keep) {
  g.validate();
  if (!std::isfinite(frequency) || frequency <= 0)
    fail("near-to-far: frequency = ", frequency, " Hz must be > 0");
  const int n[3] = {g.nx, g.ny, g.nz};
  const double d[3] = {g.dx, g.dy, g.dz};
  for (int a = 0; a < 3; ++a)
    if (box.lo[a] < 1 || box.hi[a] <= box.lo[a] || box.hi[a] > n[a] - 1)
      fail("near-to-far: box ", "xyz"[a], " range [", box.lo[a], ", ", box.hi[a],
           "] must satisfy 1 <= lo < hi <= ", n[a] - 1);
  k_ = 2.0 * kPi * frequency / kC0;
  auto at = [&](int comp, int i, int j, int k) -> cd { return sample(static_cast<Component>(comp), i, j, k); };
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int side = 0; side < 2; ++side) {
      const int q = side == 0 ? box.lo[a] : box.hi[a];
      std::array<double, 3> nrm{0, 0, 0};
      nrm[a] = side == 0 ? -1.0 : 1.0;
      for (int v = box.lo[c]; v < box.hi[c]; ++v)
        for (int u = box.lo[b]; u < box.hi[b]; ++u) {
          if (keep && !keep(a, q, u, v)) continue;
          int p[3];
          auto idx = [&](int pa, int pb, int pc, int comp) {
            p[a] = pa;
            p[b] = pb;
            p[c] = pc;
            return at(comp, p[0], p[1], p[2]);
          };
          std::array<cd, 3> ev{0, 0, 0}, hv{0, 0, 0};
          // E_b at (q, u+1/2, v) and (q, u+1/2, v+1); E_c at (q, u, v+1/2) and (q, u+1, v+1/2).
          ev[b] = 0.5 * (idx(q, u, v, b) + idx(q, u, v + 1, b));
          ev[c] = 0.5 * (idx(q, u, v, c) + idx(q, u + 1, v, c));
          // H_b at (q -+ 1/2, u, v+1/2) ... averaged to (q, u+1/2, v+1/2); H_c likewise.
          hv[b] = 0.25 * (idx(q - 1, u, v, 3 + b) + idx(q, u, v, 3 + b) +
                          idx(q - 1, u + 1, v, 3 + b) + idx(q, u + 1, v, 3 + b));
          hv[c] = 0.25 * (idx(q - 1, u, v, 3 + c) + idx(q, u, v, 3 + c) +
                          idx(q - 1, u, v + 1, 3 + c) + idx(q, u, v + 1, 3 + c));
          Patch pt;
          const double area = d[b] * d[c];
          double pos[3];
          pos[a] = g.origin[a] + q * d[a];
          pos[b] = g.origin[b] + (u + 0.5) * d[b];
          pos[c] = g.origin[c] + (v + 0.5) * d[c];
          pt.r = {pos[0] - origin[0], pos[1] - origin[1], pos[2] - origin[2]};
          pt.n = {nrm[0] * area, nrm[1] * area, nrm[2] * area};
          pt.j = cross(pt.n, hv);  // n x H dS
          const auto nxe = cross(pt.n, ev);
          pt.m = {-nxe[0], -nxe[1], -nxe[2]};  // -n x E dS
          pt.e = ev;
          pt.h = hv;
          patch_.push_back(pt);
        }
    }
  }
}

std::array<cd, 6> NearToFarTransform::radiation_vectors(double theta, double phi) const {
  const double st = std::sin(theta), ct = std::cos(theta), sp = std::sin(phi), cp = std::cos(phi);
  const double rh[3] = {st * cp, st * sp, ct};
  std::array<cd, 6> nl{0, 0, 0, 0, 0, 0};
  for (const Patch& p : patch_) {
    const cd ph = std::polar(1.0, k_ * (rh[0] * p.r[0] + rh[1] * p.r[1] + rh[2] * p.r[2]));
    for (int i = 0; i < 3; ++i) {
      nl[i] += p.j[i] * ph;
      nl[3 + i] += p.m[i] * ph;
    }
  }
  return nl;
}

std::array<cd, 2> NearToFarTransform::pattern(double theta, double phi) const {
  return pattern_from(radiation_vectors(theta, phi), k_, theta, phi);
}

std::array<cd, 2> NearToFarTransform::pattern_from(const std::array<cd, 6>& nl, double k, double theta, double phi) {
  const double st = std::sin(theta), ct = std::cos(theta), sp = std::sin(phi), cp = std::cos(phi);
  const cd nv[3] = {nl[0], nl[1], nl[2]}, lv[3] = {nl[3], nl[4], nl[5]};
  const double th[3] = {ct * cp, ct * sp, -st};
  const double ps[3] = {-sp, cp, 0.0};
  const cd n_th = nv[0] * th[0] + nv[1] * th[1] + nv[2] * th[2];
  const cd n_ph = nv[0] * ps[0] + nv[1] * ps[1] + nv[2] * ps[2];
  const cd l_th = lv[0] * th[0] + lv[1] * th[1] + lv[2] * th[2];
  const cd l_ph = lv[0] * ps[0] + lv[1] * ps[1] + lv[2] * ps[2];
  const cd jk(0.0, k);
  return {-jk / (4.0 * kPi) * (l_ph + kEta0 * n_th), jk / (4.0 * kPi) * (l_th - kEta0 * n_ph)};
}

double NearToFarTransform::rcs(double theta, double phi, double e0) const {
  const auto f = pattern(theta, phi);
  return 4.0 * kPi * (std::norm(f[0]) + std::norm(f[1])) / (e0 * e0);
}

double NearToFarTransform::scattering_cross_section(int n_theta, int n_phi, double e0) const {
  if (n_theta < 2 || n_phi < 4) fail("near-to-far: need n_theta >= 2 and n_phi >= 4");
  std::vector<double> mu, w;
  gauss_legendre(n_theta, mu, w);
  double sum = 0;
#pragma omp parallel for collapse(2) reduction(+ : sum) schedule(dynamic)
  for (int i = 0; i < n_theta; ++i)
    for (int j = 0; j < n_phi; ++j) {
      const double th = std::acos(mu[i]), ph = 2.0 * kPi * j / n_phi;
      const auto f = pattern(th, ph);
      sum += w[i] * (std::norm(f[0]) + std::norm(f[1]));
    }
  return sum * (2.0 * kPi / n_phi) / (e0 * e0);
}

double NearToFarTransform::power_out() const {
  double p = 0;
  for (const Patch& pt : patch_) {
    const auto& e = pt.e;
    const std::array<cd, 3> hc{std::conj(pt.h[0]), std::conj(pt.h[1]), std::conj(pt.h[2])};
    const cd s[3] = {e[1] * hc[2] - e[2] * hc[1], e[2] * hc[0] - e[0] * hc[2],
                     e[0] * hc[1] - e[1] * hc[0]};
    p += 0.5 * (s[0].real() * pt.n[0] + s[1].real() * pt.n[1] + s[2].real() * pt.n[2]);
  }
  return p;
}

}  // namespace vem
