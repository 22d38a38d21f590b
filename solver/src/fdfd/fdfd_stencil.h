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

}  // namespace fdfd
}  // namespace vem
