// The FDFD matrix-vector stencil, written once for the CPU and the CUDA backends (the same
// arithmetic, the same masking), with the coefficient source (CAS arrays, CIS tables) as a
// policy. Equations and names: fdfd_operator.h.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VEM_HD __host__ __device__ __forceinline__
#else
#define VEM_HD inline
#endif

namespace vem {
namespace fdfd {

// Plain complex number, layout-compatible with std::complex<T>, cuDoubleComplex, cuComplex;
// aligned like double2 / float2 so that the GPU loads it in one instruction.
template <class T>
struct alignas(2 * sizeof(T)) Cx {
  T re, im;
};
template <class T> VEM_HD Cx<T> operator+(Cx<T> a, Cx<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T> VEM_HD Cx<T> operator-(Cx<T> a, Cx<T> b) { return {a.re - b.re, a.im - b.im}; }
template <class T> VEM_HD Cx<T> operator*(Cx<T> a, Cx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T> VEM_HD Cx<T> operator*(T s, Cx<T> a) { return {s * a.re, s * a.im}; }
template <class T> VEM_HD Cx<T> cx_zero() { return {T(0), T(0)}; }
// a * b + c
template <class T> VEM_HD Cx<T> cfma(Cx<T> a, Cx<T> b, Cx<T> c) {
  return {a.re * b.re - a.im * b.im + c.re, a.re * b.im + a.im * b.re + c.im};
}

// 1 / a
template <class T> VEM_HD Cx<T> cx_inv(Cx<T> a) {
  const T m = T(1) / (a.re * a.re + a.im * a.im);
  return {a.re * m, -a.im * m};
}

template <class T>
struct Pair {
  Cx<T> c1, c2;
};

// Grid extents and strides of the unknown layout (x fastest, no padding).
struct Dims {
  int n[3];
  std::int64_t s[3];  // 1, nx, nx ny
  std::int64_t cells; // N
};

// ---- coefficient policies: get<A>(idx) returns the pair of the A-component sample at idx.
template <class T>
struct CasCoefficients {
  const Cx<T>* h[3][2];
  const Cx<T>* e[3][2];
  template <int A> VEM_HD Pair<T> hget(std::int64_t idx) const { return {h[A][0][idx], h[A][1][idx]}; }
  template <int A> VEM_HD Pair<T> eget(std::int64_t idx) const { return {e[A][0][idx], e[A][1][idx]}; }
};

template <class T>
struct CisCoefficients {  // tables in ordinary (host or global) memory
  const std::uint16_t* hi[3];
  const std::uint16_t* ei[3];
  const Pair<T>* htab;
  const Pair<T>* etab;
  template <int A> VEM_HD Pair<T> hget(std::int64_t idx) const { return htab[hi[A][idx]]; }
  template <int A> VEM_HD Pair<T> eget(std::int64_t idx) const { return etab[ei[A][idx]]; }
};

// ---- H stage: t_A at sample p (linear index idx) from E (x: 3N, blocks of N).
// E_C(q) is zero on the walls q_A == 0, q_B == 0 and beyond the last sample; E_B(q) likewise
// on q_C == 0, q_A == 0. t_A on the wall p_A == 0 is therefore zero.
template <int A, class T, class Coef>
VEM_HD Cx<T> h_stage(const Cx<T>* x, const Dims& d, int i, int j, int k, std::int64_t idx,
                     const Coef& coef) {
  constexpr int B = (A + 1) % 3, C = (A + 2) % 3;
  const int p[3] = {i, j, k};
  if (p[A] == 0) return cx_zero<T>();
  const Cx<T>* ec = x + C * d.cells;
  const Cx<T>* eb = x + B * d.cells;
  const Cx<T> ec0 = p[B] == 0 ? cx_zero<T>() : ec[idx];
  const Cx<T> ec1 = p[B] + 1 == d.n[B] ? cx_zero<T>() : ec[idx + d.s[B]];
  const Cx<T> eb0 = p[C] == 0 ? cx_zero<T>() : eb[idx];
  const Cx<T> eb1 = p[C] + 1 == d.n[C] ? cx_zero<T>() : eb[idx + d.s[C]];
  const Pair<T> h = coef.template hget<A>(idx);
  return h.c1 * (ec1 - ec0) - h.c2 * (eb1 - eb0);
}

// t from a stored array (two-stage product).
template <class T>
struct StoredT {
  const Cx<T>* t;  // 3N
  std::int64_t cells;
  template <int A> VEM_HD Cx<T> get(const Dims&, int, int, int, std::int64_t idx) const {
    return t[A * cells + idx];
  }
};

// t recomputed from E where needed (fused product).
template <class T, class Coef>
struct RecomputedT {
  const Cx<T>* x;
  Coef coef;
  template <int A> VEM_HD Cx<T> get(const Dims& d, int i, int j, int k, std::int64_t idx) const {
    return h_stage<A, T, Coef>(x, d, i, j, k, idx, coef);
  }
};

// ---- E stage: y_A at sample p. Wall rows (p_B == 0 or p_C == 0) are identity rows.
template <int A, class T, class Coef, class TSrc>
VEM_HD Cx<T> e_stage(const Cx<T>* x, const Dims& d, int i, int j, int k, std::int64_t idx,
                     const Coef& coef, const TSrc& t) {
  constexpr int B = (A + 1) % 3, C = (A + 2) % 3;
  const int p[3] = {i, j, k};
  const Cx<T> xa = x[A * d.cells + idx];
  if (p[B] == 0 || p[C] == 0) return xa;
  int qb[3] = {i, j, k};
  qb[B] -= 1;
  int qc[3] = {i, j, k};
  qc[C] -= 1;
  const Cx<T> tc0 = t.template get<C>(d, i, j, k, idx);
  const Cx<T> tc1 = t.template get<C>(d, qb[0], qb[1], qb[2], idx - d.s[B]);
  const Cx<T> tb0 = t.template get<B>(d, i, j, k, idx);
  const Cx<T> tb1 = t.template get<B>(d, qc[0], qc[1], qc[2], idx - d.s[C]);
  const Pair<T> e = coef.template eget<A>(idx);
  return xa - (e.c1 * (tc0 - tc1) - e.c2 * (tb0 - tb1));
}

// ---- Grad-div regularization (fdfd_operator.h, "Grad-div regularization"): the term
// (Q x)_A(p) = gsh_A(p_A) [phi(p + e_A) - phi(p)] added to the non-wall E rows, with the node
// value (node n = (i,j,k) at integer positions; zero unless i, j, k >= 1)
//     phi(n) = 36 c W_n div / S^2,  c = s / k0^2,  W_n = se_x se_y se_z at n,
//     div = sum_A [g_A(n) x_A(n) - g_A(n - e_A) x_A(n - e_A)] / d_A,
//     S = sum_A se_A(n_A) [g_A(n) + g_A(n - e_A)]   (= 6 W_n eps_n, eps_n the mean of the six),
//     g_A(q) = eps_A(q) se_B(q_B) se_C(q_C) = se_C(q_C) / (k0 d_B e_AB(q)),
// i.e. phi = c M D(eps x) with M = 1 / eps_n^2 (eps_n read off the E-stage coefficients, so no
// extra per-sample storage) and D the stretched divergence.
template <class T>
struct GradDiv {
  const Cx<T>* se[3];   // se_A(q), q = 0..n_A (n_A + 1 entries)
  const Cx<T>* gsh[3];  // 1 / (sh_A(q) d_A), q = 0..n_A - 1
  T inv_d[3];           // 1 / d_A
  T kd[3];              // k0 d_A
  T c36;                // 36 s / k0^2
};

template <int A, class T, class Coef>
VEM_HD void grad_div_term(const Cx<T>* x, const Dims& d, const int* p, std::int64_t idx,
                          const Coef& coef, const GradDiv<T>& g, Cx<T>& div, Cx<T>& sum) {
  constexpr int B = (A + 1) % 3, C = (A + 2) % 3;
  const Cx<T> sc = g.se[C][p[C]];
  const Cx<T> g0 = sc * cx_inv(g.kd[B] * coef.template eget<A>(idx).c1);
  const Cx<T> g1 = sc * cx_inv(g.kd[B] * coef.template eget<A>(idx - d.s[A]).c1);
  const Cx<T>* xa = x + A * d.cells;
  div = div + g.inv_d[A] * (g0 * xa[idx] - g1 * xa[idx - d.s[A]]);
  sum = cfma(g.se[A][p[A]], g0 + g1, sum);
}

template <class T, class Coef>
VEM_HD Cx<T> grad_div_node(const Cx<T>* x, const Dims& d, int i, int j, int k, std::int64_t idx,
                           const Coef& coef, const GradDiv<T>& g) {
  if (i == 0 || j == 0 || k == 0) return cx_zero<T>();
  const int p[3] = {i, j, k};
  Cx<T> div = cx_zero<T>(), sum = cx_zero<T>();
  grad_div_term<0>(x, d, p, idx, coef, g, div, sum);
  grad_div_term<1>(x, d, p, idx, coef, g, div, sum);
  grad_div_term<2>(x, d, p, idx, coef, g, div, sum);
  const Cx<T> w = g.se[0][i] * g.se[1][j] * g.se[2][k];
  const Cx<T> inv = cx_inv(sum);
  return (g.c36 * w) * (inv * inv) * div;
}

// Sources of phi for the E stage: none (unregularized), stored (two-stage product: the H stage
// wrote phi), recomputed (fused product).
struct NoGradDiv {
  static constexpr bool enabled = false;
};
template <class T>
struct StoredPhi {
  static constexpr bool enabled = true;
  const Cx<T>* phi;  // N
  GradDiv<T> g;
  VEM_HD Cx<T> get(const Dims&, int, int, int, std::int64_t idx) const { return phi[idx]; }
};
template <class T, class Coef>
struct RecomputedPhi {
  static constexpr bool enabled = true;
  const Cx<T>* x;
  Coef coef;
  GradDiv<T> g;
  VEM_HD Cx<T> get(const Dims& d, int i, int j, int k, std::int64_t idx) const {
    return grad_div_node<T, Coef>(x, d, i, j, k, idx, coef, g);
  }
};

// E stage plus the grad-div term (when PhiSrc::enabled) for row A at p.
template <int A, class T, class Coef, class TSrc, class PhiSrc>
VEM_HD Cx<T> e_stage_gd(const Cx<T>* x, const Dims& d, int i, int j, int k, std::int64_t idx,
                        const Coef& coef, const TSrc& t, const PhiSrc& ph) {
  Cx<T> y = e_stage<A>(x, d, i, j, k, idx, coef, t);
  if constexpr (PhiSrc::enabled) {
    constexpr int B = (A + 1) % 3, C = (A + 2) % 3;
    const int p[3] = {i, j, k};
    if (p[B] != 0 && p[C] != 0) {  // wall rows stay identity rows (G phi vanishes there)
      int q[3] = {i, j, k};
      q[A] += 1;
      const Cx<T> f0 = ph.get(d, i, j, k, idx);
      const Cx<T> f1 = q[A] == d.n[A] ? cx_zero<T>() : ph.get(d, q[0], q[1], q[2], idx + d.s[A]);
      y = cfma(ph.g.gsh[A][p[A]], f1 - f0, y);
    }
  }
  return y;
}

}  // namespace fdfd
}  // namespace vem
