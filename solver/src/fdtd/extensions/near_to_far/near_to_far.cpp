// Near-to-far-field transform on the Yee grid (see near_to_far.h).
#include "vem/fdtd/extensions/near_to_far.h"

#include <cmath>
#include <cstdint>
#include <vector>

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
  {
    std::size_t all = 0;
    for (int a = 0; a < 3; ++a)
      all += 2 * std::size_t(box.hi[(a + 1) % 3] - box.lo[(a + 1) % 3]) * std::size_t(box.hi[(a + 2) % 3] - box.lo[(a + 2) % 3]);
    patch_.reserve(keep ? 0 : all);
  }
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int side = 0; side < 2; ++side) {
      const int q = side == 0 ? box.lo[a] : box.hi[a];
      std::array<double, 3> nrm{0, 0, 0};
      nrm[a] = side == 0 ? -1.0 : 1.0;
      Face face;
      face.a = a;
      face.ra = (g.origin[a] + q * d[a]) - origin[a];
      const int nu = box.hi[b] - box.lo[b], nv = box.hi[c] - box.lo[c];
      for (int u = box.lo[b]; u < box.hi[b]; ++u) face.rb.push_back((g.origin[b] + (u + 0.5) * d[b]) - origin[b]);
      for (int v = box.lo[c]; v < box.hi[c]; ++v) face.rc.push_back((g.origin[c] + (v + 0.5) * d[c]) - origin[c]);
      face.cur.assign(std::size_t(8) * nu * nv, 0.0);
      bool any = false;
      for (int v = box.lo[c]; v < box.hi[c]; ++v)
        for (int u = box.lo[b]; u < box.hi[b]; ++u) {
          if (keep && !keep(a, q, u, v)) continue;
          any = true;
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
          double* row = face.cur.data() + std::size_t(8) * nu * (v - box.lo[c]);
          const int iu = u - box.lo[b];
          const cd t[4] = {pt.j[b], pt.j[c], pt.m[b], pt.m[c]};  // the normal components are 0
          for (int s = 0; s < 4; ++s) {
            row[(2 * s) * nu + iu] = t[s].real();
            row[(2 * s + 1) * nu + iu] = t[s].imag();
          }
        }
      if (any) face_.push_back(std::move(face));
    }
  }
}

std::array<cd, 6> NearToFarTransform::radiation_vectors_direct(double theta, double phi) const {
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

std::array<cd, 6> NearToFarTransform::radiation_vectors(double theta, double phi) const {
  const double st = std::sin(theta), ct = std::cos(theta), sp = std::sin(phi), cp = std::cos(phi);
  const double rh[3] = {st * cp, st * sp, ct};
  std::array<cd, 6> nl{0, 0, 0, 0, 0, 0};
  std::vector<double> tb;
  for (const Face& f : face_) {
    const int a = f.a, b = (a + 1) % 3, c = (a + 2) % 3;
    const int nu = int(f.rb.size()), nv = int(f.rc.size());
    tb.resize(2 * std::size_t(nu));
    double* tr = tb.data();
    double* ti = tb.data() + nu;
    for (int u = 0; u < nu; ++u) {
      const double ph = k_ * rh[b] * f.rb[u];
      tr[u] = std::cos(ph);
      ti[u] = std::sin(ph);
    }
    cd acc[4] = {0, 0, 0, 0};  // J_b, J_c, M_b, M_c
    for (int v = 0; v < nv; ++v) {
      const double* row = f.cur.data() + std::size_t(8) * nu * v;
      const double *x0 = row, *x1 = row + nu, *x2 = row + 2 * nu, *x3 = row + 3 * nu;
      const double *x4 = row + 4 * nu, *x5 = row + 5 * nu, *x6 = row + 6 * nu, *x7 = row + 7 * nu;
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3, s4, s5, s6, s7)
      for (int u = 0; u < nu; ++u) {
        const double pr = tr[u], pi = ti[u];
        s0 += pr * x0[u] - pi * x1[u];
        s1 += pr * x1[u] + pi * x0[u];
        s2 += pr * x2[u] - pi * x3[u];
        s3 += pr * x3[u] + pi * x2[u];
        s4 += pr * x4[u] - pi * x5[u];
        s5 += pr * x5[u] + pi * x4[u];
        s6 += pr * x6[u] - pi * x7[u];
        s7 += pr * x7[u] + pi * x6[u];
      }
      const cd tc = std::polar(1.0, k_ * rh[c] * f.rc[v]);
      acc[0] += tc * cd(s0, s1);
      acc[1] += tc * cd(s2, s3);
      acc[2] += tc * cd(s4, s5);
      acc[3] += tc * cd(s6, s7);
    }
    const cd ta = std::polar(1.0, k_ * rh[a] * f.ra);
    nl[b] += ta * acc[0];
    nl[c] += ta * acc[1];
    nl[3 + b] += ta * acc[2];
    nl[3 + c] += ta * acc[3];
  }
  return nl;
}

std::vector<std::array<cd, 6>> NearToFarTransform::radiation_vectors(
    const std::vector<std::array<double, 2>>& dirs) const {
  std::vector<std::array<cd, 6>> out(dirs.size());
  const std::int64_t n = std::int64_t(dirs.size());
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t q = 0; q < n; ++q) out[std::size_t(q)] = radiation_vectors(dirs[std::size_t(q)][0], dirs[std::size_t(q)][1]);
  return out;
}

std::vector<std::array<cd, 2>> NearToFarTransform::patterns(const std::vector<std::array<double, 2>>& dirs) const {
  const auto nl = radiation_vectors(dirs);
  std::vector<std::array<cd, 2>> out(dirs.size());
  for (std::size_t q = 0; q < dirs.size(); ++q) out[q] = pattern_from(nl[q], k_, dirs[q][0], dirs[q][1]);
  return out;
}

std::vector<double> NearToFarTransform::rcs(const std::vector<std::array<double, 2>>& dirs, double e0) const {
  const auto F = patterns(dirs);
  std::vector<double> out(F.size());
  for (std::size_t q = 0; q < F.size(); ++q) out[q] = 4.0 * kPi * (std::norm(F[q][0]) + std::norm(F[q][1])) / (e0 * e0);
  return out;
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
  std::vector<std::array<double, 2>> dirs;
  for (int i = 0; i < n_theta; ++i)
    for (int j = 0; j < n_phi; ++j) dirs.push_back({std::acos(mu[i]), 2.0 * kPi * j / n_phi});
  const auto F = patterns(dirs);
  double sum = 0;
  for (int i = 0; i < n_theta; ++i)
    for (int j = 0; j < n_phi; ++j) {
      const auto& f = F[std::size_t(i) * n_phi + j];
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
