// Coefficients of the high-order schemes: see vem/fdtd/schemes/fdtd_scheme.h for the derivation.
#include "vem/fdtd/schemes/fdtd_scheme.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vem/core/error.h"
#include "vem/core/yee_grid.h"

namespace vem {

const char* scheme_name(Scheme s) {
  switch (s) {
    case Scheme::yee: return "yee";
    case Scheme::fv24: return "fv24";
    case Scheme::fv24_wb: return "fv24_wb";
    case Scheme::s22: return "s22";
    case Scheme::s44: return "s44";
  }
  return "?";
}

Scheme scheme_from_name(const std::string& name) {
  for (Scheme s : {Scheme::yee, Scheme::fv24, Scheme::fv24_wb, Scheme::s22, Scheme::s44})
    if (name == scheme_name(s)) return s;
  fail("unknown FDTD scheme '", name, "' (expected yee, fv24, fv24_wb, s22 or s44)");
}

double SchemeStencil::symbol(int a, const std::array<double, 3>& th) const {
  const double cb = std::cos(th[(a + 1) % 3]), cd = std::cos(th[(a + 2) % 3]);
  double k = 0;
  for (int p = 0; p < 2; ++p) {
    const double t = w[p][0] + 2 * w[p][1] * (cb + cd) + 4 * w[p][2] * cb * cd;
    k += 2 * std::sin((p + 0.5) * th[a]) * t;
  }
  return k;
}

double SchemeStencil::symbol_norm(const std::array<double, 3>& th) const {
  double s = 0;
  for (int a = 0; a < 3; ++a) s += symbol(a, th) * symbol(a, th);
  return std::sqrt(s);
}

// max |K| h over the Brillouin zone: |K| is even in each theta and symmetric under permutations,
// so theta_x >= theta_y >= theta_z in [0, pi] suffices; a 41-point scan, then a pattern search
// (step halved down to 1e-12) from the best scan point. For yee, fv24 and fv24_wb the maximum is
// the corner (pi, pi, pi); for s22 (narrow transverse weights) it is not.
double SchemeStencil::courant_limit() const {
  const int n = 40;
  std::array<double, 3> best{kPi, kPi, kPi};
  double bv = symbol_norm(best);
  for (int a = 0; a <= n; ++a)
    for (int b = 0; b <= a; ++b)
      for (int c = 0; c <= b; ++c) {
        const std::array<double, 3> t{kPi * a / n, kPi * b / n, kPi * c / n};
        const double v = symbol_norm(t);
        if (v > bv) { bv = v; best = t; }
      }
  for (double step = kPi / n; step > 1e-12;) {
    bool moved = false;
    for (int a = 0; a < 3; ++a)
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        std::array<double, 3> t = best;
        t[a] = std::min(kPi, std::max(0.0, t[a] + sgn * step));
        const double v = symbol_norm(t);
        if (v > bv) { bv = v; best = t; moved = true; }
      }
    if (!moved) step /= 2;
  }
  return (backward4 ? 1.0 : 2.0) / bv;
}

bool SchemeStencil::is_yee() const {
  return !backward4 && w[0][0] == 1 && w[0][1] == 0 && w[0][2] == 0 && w[1][0] == 0 && w[1][1] == 0 && w[1][2] == 0;
}

namespace {

// Solves the n x n system A x = r (partial pivoting); n <= 6.
void solve(int n, double A[6][6], double r[6], double x[6]) {
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int i = c + 1; i < n; ++i) if (std::fabs(A[i][c]) > std::fabs(A[piv][c])) piv = i;
    if (std::fabs(A[piv][c]) < 1e-300) fail("scheme design: singular system");
    for (int j = 0; j < n; ++j) std::swap(A[c][j], A[piv][j]);
    std::swap(r[c], r[piv]);
    for (int i = c + 1; i < n; ++i) {
      const double f = A[i][c] / A[c][c];
      for (int j = c; j < n; ++j) A[i][j] -= f * A[c][j];
      r[i] -= f * r[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    double s = r[c];
    for (int j = c + 1; j < n; ++j) s -= A[c][j] * x[j];
    x[c] = s / A[c][c];
  }
}

// fv24 / s22: consistency plus (D) exact at the design resolution along an axis, a face diagonal
// and a body diagonal; `free` lists the 4 weights (index p*3 + cls) that are solved for.
SchemeStencil design_exact(const int free[4], double S, double nd) {
  if (!(nd >= 4)) fail("scheme design resolution ", nd, " cells per wavelength must be >= 4");
  const double th0 = 2 * kPi / nd;
  const double target = 2.0 / S * std::sin(S * th0 / 2);  // |K| h that makes (D) exact
  double A[6][6] = {}, r[6] = {}, x[6] = {};
  // Row 0: consistency, the derivative of K_x h at theta = 0 along x: sum_p 2 p A_p = 1.
  for (int q = 0; q < 4; ++q) {
    const int p = free[q] / 3, cls = free[q] % 3;
    const double mult = cls == 0 ? 1 : 4;  // A_p = w_p0 + 4 w_p1 + 4 w_p2
    A[0][q] = 2 * (p + 0.5) * mult;
  }
  r[0] = 1;
  const double dirs[3][3] = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  for (int row = 1; row <= 3; ++row) {
    const double* d = dirs[row - 1];
    const double nrm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    const std::array<double, 3> th{th0 * d[0] / nrm, th0 * d[1] / nrm, th0 * d[2] / nrm};
    for (int q = 0; q < 4; ++q) {
      SchemeStencil unit;
      unit.w[0][0] = 0;
      unit.w[free[q] / 3][free[q] % 3] = 1;
      A[row][q] = unit.symbol(0, th);  // K_x h is linear in the weights
    }
    r[row] = target * d[0] / nrm;  // by symmetry K = |K| theta / |theta| along these directions
  }
  solve(4, A, r, x);
  SchemeStencil st;
  st.w[0][0] = 0;
  for (int q = 0; q < 4; ++q) st.w[free[q] / 3][free[q] % 3] = x[q];
  return st;
}

}  // namespace

SchemeStencil scheme_stencil(Scheme scheme, double S, double nd) {
  SchemeStencil st;
  const double S2 = S * S;
  switch (scheme) {
    case Scheme::yee: break;
    case Scheme::fv24_wb: {
      const double d3 = S2 / 144, a3 = -(1 - S2) / 24;
      st.w[0][0] = 1 + (1 - S2) / 8;
      st.w[1][2] = d3;
      st.w[1][0] = a3 - 4 * d3;
      break;
    }
    case Scheme::fv24: {
      const int free[4] = {0, 3, 4, 5};  // w_1/2,0  w_3/2,0  w_3/2,1  w_3/2,2
      st = design_exact(free, S, nd);
      break;
    }
    case Scheme::s22: {
      const int free[4] = {0, 1, 3, 4};  // w_1/2,0  w_1/2,1  w_3/2,0  w_3/2,1
      st = design_exact(free, S, nd);
      break;
    }
    case Scheme::s44:
      st.backward4 = true;
      st.w[0][0] = 9.0 / 8;
      st.w[1][0] = -1.0 / 24;
      break;
  }
  return st;
}

SchemeDesign scheme_design_for_courant(Scheme scheme, double S, double nd) {
  SchemeDesign d;
  d.scheme = scheme;
  d.courant = S;
  d.stencil = scheme_stencil(scheme, S, nd);
  d.courant_limit = d.stencil.courant_limit();
  return d;
}

SchemeDesign scheme_design_for_factor(Scheme scheme, double f, double nd) {
  // S = f S_max(w(S)): S_max depends weakly on S (|dS_max/dS| << 1), so the iteration contracts.
  double S = f / std::sqrt(3.0);
  for (int it = 0; it < 200; ++it) {
    const double next = f * scheme_stencil(scheme, S, nd).courant_limit();
    if (!(next > 0) || !std::isfinite(next)) fail("scheme ", scheme_name(scheme), ": no stable time step");
    const bool done = std::fabs(next - S) <= 1e-15 * S;
    S = next;
    if (done) break;
  }
  return scheme_design_for_courant(scheme, S, nd);
}

std::array<std::complex<double>, 8> s44_roots(double q) {
  using C = std::complex<double>;
  // 22 z^8 - 24 j q z^7 - 17 z^6 - 9 z^4 + 5 z^2 - 1, made monic.
  const C c[9] = {22.0, C(0, -24 * q), -17.0, 0.0, -9.0, 0.0, 5.0, 0.0, -1.0};
  auto p = [&](C z) {
    C s = 0;
    for (const C& x : c) s = s * z + x / c[0];
    return s;
  };
  std::array<C, 8> r;
  for (int i = 0; i < 8; ++i) r[i] = std::pow(C(0.4, 0.9), i);
  for (int it = 0; it < 5000; ++it) {
    double delta = 0;
    for (int i = 0; i < 8; ++i) {
      C d = 1;
      for (int j = 0; j < 8; ++j)
        if (j != i) d *= r[i] - r[j];
      const C step = p(r[i]) / d;
      r[i] -= step;
      delta = std::max(delta, std::abs(step));
    }
    if (delta < 1e-15) break;
  }
  return r;
}

std::complex<double> s44_physical_root(const SchemeStencil& st, double h, double dt, double v,
                                       const std::array<double, 3>& k) {
  const double K = st.symbol_norm({k[0] * h, k[1] * h, k[2] * h}) / h;
  const double kn = std::sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
  const std::complex<double> guess = std::polar(1.0, v * kn * dt / 2);
  const auto r = s44_roots(v * dt * K);
  std::complex<double> best = r[0];
  for (const auto& z : r)
    if (std::abs(z - guess) < std::abs(best - guess)) best = z;
  return best;
}

double scheme_numerical_omega(const SchemeStencil& st, double h, double dt, double v,
                              const std::array<double, 3>& k) {
  if (st.backward4) {
    if (v * dt * st.symbol_norm({k[0] * h, k[1] * h, k[2] * h}) / h > 1)
      return std::numeric_limits<double>::quiet_NaN();
    return 2 * std::arg(s44_physical_root(st, h, dt, v, k)) / dt;
  }
  const double K = st.symbol_norm({k[0] * h, k[1] * h, k[2] * h}) / h;
  const double s = v * dt * K / 2;
  if (s > 1) return std::numeric_limits<double>::quiet_NaN();
  return 2 * std::asin(s) / dt;
}

}  // namespace vem
