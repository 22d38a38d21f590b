// One pass per time step (fused_step.h): the Yee H and E updates of one leap-frog step in one
// kernel, ping-pong arrays. Also the persistent kernel (persistent_steps, further down): many
// steps per launch, each as two phases in place with grid barriers, from the same per-sample
// update functions.
//
// onepass_bulk: a block of 32 x TY worker threads owns a tile of 32 x TY (i, j) columns and marches
// over a chunk of z planes. At plane k each worker computes H^{n+1/2} of its sample from E^n (its
// own column's E at k and k+1 in registers, the x/y neighbours through L1), stores it to `next`
// and to shared memory; one more warp computes the H that the tile's E needs from outside the tile
// (the row j0-1: Hx, Hz; the column i0-1: Hy, Hz), recomputed redundantly there. After one barrier
// each worker updates E^{n+1} of its sample from shared memory (x/y neighbours) and registers (its
// own H at k-1). The shared planes are double-buffered, so one barrier per plane suffices. The
// first plane of a chunk needs the own column's Hx, Hy at k0-1, computed once more.
// Arithmetic: the expressions of update_h_bulk / update_e_bulk (fdtd_engine_cuda.cu), operand for
// operand, so the same floats come out. Samples outside a component's update range keep their
// value (copied into `next`). Offsets are 64-bit (grids beyond 2^31 layout samples).
//
// CPML folded into the pass (CpmlSet, fused_step.h): every H sample computed here, the worker's,
// the halo warp's and the first plane's again, gets the corrections of the slabs that hold it
// right after its bulk value (cpml_cell's expressions in fdtd_engine_cuda.cu, slabs in axis
// order), so the E of the same pass reads corrected H and nothing is computed again. Only the
// worker that owns a sample stores its psi (into the second psi array: the halo warps of the
// neighbouring blocks still read the old one). The E corrections are applied before E is
// stored, from the same H differences the E update used (own H, shared memory, the k-1
// registers). Measured against the slab kernels in testing/benchmarks/results/fdtd_onepass_h100.md.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <functional>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "fdtd/cuda/fused_step.h"
#include "fdtd/cuda/kernel_common.cuh"
#include "fdtd/engine_common.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem::onepass {
namespace {

__constant__ float c_onepass_table[kConstantTableCapacity * 12];
std::atomic<const void*> g_owner{nullptr};

// VEM_BLOCK_TRACE (0 by default; the CMake option of the same name turns it on for this file only,
// a measurement build): the kernels of a two-step pair (the interior tiles, the shell tiles, the
// rest's pass blocks) record each block's start and end (%globaltimer, ns) and multiprocessor
// (%smid) into a ring armed by block_trace_arm (fused_step.h); block_trace_dump writes the newest.
// The timeline of the blocks says how well the pair's launches fill the machine (results/fdtd.md,
// session 34). Off, the kernels are unchanged (BlockTrace::done is empty).
#ifndef VEM_BLOCK_TRACE
#define VEM_BLOCK_TRACE 0
#endif
struct BlockTraceRecord {
  unsigned long long t0, t1;  // ns
  unsigned sm, id;            // id: kind << 28 | list << 24 | block
};
__device__ BlockTraceRecord* g_block_trace = nullptr;
__device__ unsigned long long g_block_trace_n = 0;
__device__ unsigned long long g_block_trace_mask = 0;
struct BlockTrace {
  // kinds of BlockTraceRecord::id
  static constexpr unsigned kInterior = 0, kShell = 1, kPass = 2;
#if VEM_BLOCK_TRACE
  unsigned long long t0 = 0;
  __device__ BlockTrace() {
    if (threadIdx.x + threadIdx.y == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  }
  __device__ void done(unsigned kind, unsigned list) const {
    if (threadIdx.x + threadIdx.y != 0 || g_block_trace == nullptr) return;
    unsigned long long t1;
    unsigned sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    const unsigned long long n = atomicAdd(&g_block_trace_n, 1ull);
    g_block_trace[n & g_block_trace_mask] = BlockTraceRecord{t0, t1, sm, kind << 28 | list << 24 | blockIdx.x};
  }
#else
  __device__ void done(unsigned, unsigned) const {}
#endif
};

// The field arrays in their storage type T (float, __half, __nv_bfloat16; kernel_common.cuh):
// loads widen to float, stores narrow, and a value that two-pass kernels would have stored before
// adding to it (an H or E bulk value before its CPML corrections) is rounded first (rnd), so
// every storage gives the two-pass fields bit for bit. For float every rnd is the identity.
template <class T>
using Fields = cuda_kernels::FieldsOf<T>;
using cuda_kernels::ld;
using cuda_kernels::ldg;
using cuda_kernels::rnd;
using cuda_kernels::st;

struct ConstTab {
  const std::uint16_t* __restrict__ index;
  __device__ __forceinline__ int key(long long o) const { return int(__ldg(index + o)) * 12; }
  __device__ __forceinline__ float a(int c, long long, int key) const { return c_onepass_table[key + 2 * c]; }
  __device__ __forceinline__ float b(int c, long long, int key) const { return c_onepass_table[key + 2 * c + 1]; }
};
// The table in the block's shared memory (Coefs::shared_table): `table` is the global copy on the
// host side; bind_table (the kernel's first statement) copies it into dynamic shared memory and
// points `table` there. Shared-memory loads of a warp's 4-5 different rows take one or two
// transactions where the constant bank serves distinct addresses one after another.
struct SharedTab {
  const std::uint16_t* __restrict__ index;
  const float* table;
  int floats;  // entries x 12
  __device__ __forceinline__ int key(long long o) const { return int(__ldg(index + o)) * 12; }
  __device__ __forceinline__ float a(int c, long long, int key) const { return table[key + 2 * c]; }
  __device__ __forceinline__ float b(int c, long long, int key) const { return table[key + 2 * c + 1]; }
};
template <class Coef>
__device__ __forceinline__ void bind_table(Coef&) {}
__device__ __forceinline__ void bind_table(SharedTab& c) {
  extern __shared__ float s_table[];
  const int nt = int(blockDim.x * blockDim.y * blockDim.z);
  const int tid = int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  for (int q = tid; q < c.floats; q += nt) s_table[q] = __ldg(c.table + q);
  __syncthreads();
  c.table = s_table;
}
template <class Coef>
std::size_t table_bytes(const Coef&) { return 0; }
std::size_t table_bytes(const SharedTab& c) { return std::size_t(c.floats) * sizeof(float); }
using cuda_kernels::CoefficientArrays;  // kernel_common.cuh
using cuda_kernels::GlobalTable;
using cuda_kernels::in;
using cuda_kernels::pdl_begin;

constexpr int kHx = 1, kHy = 2, kHz = 4;

// How the pass reads fields and H psi. ReadOnlyLoad (onepass_bulk, one step per launch): nothing it
// reads is written during the launch, so the fields go through the read-only cache (__ldg).
// CoherentLoad (persistent_steps, many steps per launch): the arrays read in a phase were written
// by other blocks in the phase before, after a grid barrier: not through the read-only cache,
// which may keep lines from an earlier phase, but from L2 (__ldcg). (Plain L1-cached loads, which
// the memory model makes coherent after the barrier, measured 0-3 % faster on an H100, within
// the run-to-run spread: fdtd_small_grids_h100.md.)
struct ReadOnlyLoad {
  template <class T>
  static __device__ __forceinline__ float field(const T* p) { return cuda_kernels::ldg(p); }
  static __device__ __forceinline__ float psi(const float* p) { return *p; }
};
struct CoherentLoad {
  template <class T>
  static __device__ __forceinline__ float field(const T* p) { return cuda_kernels::ldcg(p); }
  static __device__ __forceinline__ float psi(const float* p) { return __ldcg(p); }
};


// The tests of a sample that do not depend on its plane, as bits (the tile kernel computes them
// once per thread before marching along z; TILE below):
//   bits 0-2: the x/y part of the update range of H_x, H_y, H_z (h_bits) or E_x, E_y, E_z (e_bits);
//   bits 3-8: the x/y part of the box of CPML slab p = 0..5 of the set (in_slab's x/y tests).
// The z parts are tested per plane: the H ranges along z are 0 <= k < nz (H_x, H_y) and
// 0 <= k <= nz (H_z) (FdtdOperator::build_ranges), the E ranges g.lo / g.hi[c][2].
constexpr int kSlabBit = 3;
__device__ __forceinline__ bool in_slab_xy(const Slab& s, int i, int j) {
  return i >= s.o[0] && i < s.o[0] + s.d[0] && j >= s.o[1] && j < s.o[1] + s.d[1];
}
__device__ __forceinline__ bool in_slab_z(const Slab& s, int k) { return k >= s.o[2] && k < s.o[2] + s.d[2]; }
__device__ __forceinline__ unsigned slab_bits(const CpmlSet& cs, int i, int j) {
  unsigned b = 0;
  for (int p = 0; p < cs.count; ++p)
    if (in_slab_xy(cs.s[p], i, j)) b |= 1u << (kSlabBit + p);
  return b;
}
__device__ __forceinline__ unsigned range_bits(const Grid& g, int first, int i, int j) {
  unsigned b = 0;
  for (int c = 0; c < 3; ++c)
    if (in(i, g.lo[first + c][0], g.hi[first + c][0]) && in(j, g.lo[first + c][1], g.hi[first + c][1])) b |= 1u << c;
  return b;
}
__device__ __forceinline__ unsigned h_bits(const Grid& g, const CpmlSet& ch, int i, int j) {
  return range_bits(g, 3, i, j) | slab_bits(ch, i, j);
}
__device__ __forceinline__ unsigned e_bits(const Grid& g, const CpmlSet& ce, int i, int j) {
  return range_bits(g, 0, i, j) | slab_bits(ce, i, j);
}

// The kernels that walk samples one by one (persistent steps, E again) test each sample in full
// instead (TILE = false below): its ranges, then the inner box of the slab set (finish_cpml_set)
// before the slabs one by one. Computing the bits per sample there measured slower (64^3
// persistent: 10,140 against 11,373 Mcells/s; fdtd_onepass_h100.md).
__device__ __forceinline__ bool inner(const CpmlSet& cs, int i, int j, int k) {
  return i >= cs.inner_lo[0] && i < cs.inner_hi[0] && j >= cs.inner_lo[1] && j < cs.inner_hi[1] &&
         k >= cs.inner_lo[2] && k < cs.inner_hi[2];
}

// One slab's H corrections at (i, j, k): cpml_cell<A, false>'s, through the same
// cpml_component / cpml_source / cpml_increment (kernel_common.cuh). upd: bit c - 3 set when H_c
// is updated at this sample (its update range: the range test of cpml_cell); key: the sample's
// material key (h_sample's).
template <int A, int MASK, class LD, class Coef, class T>
__device__ __forceinline__ void h_slab(const Slab& s, const Fields<T>& F, const Grid& g, const Coef& coef, int i,
                                       int j, int k, long long o, bool store, unsigned upd, int key, float& hx,
                                       float& hy, float& hz) {
  const int x = A == 0 ? i : (A == 1 ? j : k);
  const long long sa = A == 0 ? 1 : (A == 1 ? g.sy : g.sz);
  const int t = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
  const float b = __ldg(s.b + x), c = __ldg(s.c + x), km1 = __ldg(s.kinv + x) - 1.0f;
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int comp = cuda_kernels::cpml_component(A, false, q);
    const int src = cuda_kernels::cpml_source(A, false, q);
    if (!(MASK & (1 << (comp - 3))) || !(upd & (1u << (comp - 3)))) continue;
    const T* S = F.f[src];
    const float dF = (LD::field(S + o + sa) - LD::field(S + o)) * s.inv_d;
    float p;
    float& h = comp == 3 ? hx : (comp == 4 ? hy : hz);
    h = rnd<T>(h) + cuda_kernels::cpml_increment(b, c, km1, coef.b(comp, o, key), q == 0 ? 1.0f : -1.0f, dF, LD::psi(s.psi_in[q] + t),
                                      s.lagged, &p);
    if (store) s.psi_out[q][t] = p;
  }
}

// The H slabs holding (i, j, k), in the set's (axis) order: TILE, from their x/y bits (h_bits) and
// the plane test; otherwise each slab tested in full, unless the sample is in the inner box.
template <int MASK, class LD, bool TILE, class Coef, class T>
__device__ __forceinline__ void h_cpml(const CpmlSet& cs, const Fields<T>& F, const Grid& g, const Coef& coef, int i,
                                       int j, int k, long long o, bool store, unsigned bits, unsigned upd, int key,
                                       float& hx, float& hy, float& hz) {
  if (!TILE && (cs.count == 0 || inner(cs, i, j, k))) return;
  for (unsigned m = TILE ? bits >> kSlabBit : (1u << cs.count) - 1u; m != 0; m &= m - 1) {
    const Slab& s = cs.s[__ffs(int(m)) - 1];
    if (!in_slab_z(s, k) || (!TILE && !in_slab_xy(s, i, j))) continue;
    switch (s.axis) {
      case 0: h_slab<0, MASK, LD>(s, F, g, coef, i, j, k, o, store, upd, key, hx, hy, hz); break;
      case 1: h_slab<1, MASK, LD>(s, F, g, coef, i, j, k, o, store, upd, key, hx, hy, hz); break;
      default: h_slab<2, MASK, LD>(s, F, g, coef, i, j, k, o, store, upd, key, hx, hy, hz); break;
    }
  }
}

// One slab's E corrections at (i, j, k): cpml_cell<A, true>'s, with d0 / d1 the differences along
// A of the sources of corrections 0 / 1 (cpml_source), taken from e_sample's operands; upd: bit c
// set when E_c is updated at this sample; key: the sample's material key.
template <int A, class T, class Coef>
__device__ __forceinline__ void e_slab(const Slab& s, const Coef& coef, int i, int j, int k, long long o,
                                       unsigned upd, int key, const float d0, const float d1, float& ex, float& ey,
                                       float& ez) {
  const int x = A == 0 ? i : (A == 1 ? j : k);
  const int t = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
  const float b = __ldg(s.b + x), c = __ldg(s.c + x), km1 = __ldg(s.kinv + x) - 1.0f;
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int comp = cuda_kernels::cpml_component(A, true, q);
    if (!(upd & (1u << comp))) continue;
    float& e = comp == 0 ? ex : (comp == 1 ? ey : ez);
    e = rnd<T>(e) + cuda_kernels::cpml_increment(b, c, km1, coef.b(comp, o, key), q == 0 ? 1.0f : -1.0f,
                                      (q == 0 ? d0 : d1) * s.inv_d, s.psi_in[q][t], s.lagged, &s.psi_out[q][t]);
  }
}

// H^{n+1/2} at sample (i, j, k), layout offset o, from E^n and H^{n-1/2} in A: the components in
// MASK (update_h_bulk's expressions and range tests: x/y ranges, 0 <= k < nz for Hx and Hy,
// 0 <= k <= nz for Hz; outside, the old value). Returns E^n at (i, j, k) in ex, ey, ez.
// TILE: bits = h_bits(g, ch, i, j) (tile_pass); otherwise the sample is tested in full (bits unused).
// FAST: the caller knows the sample is inside every H component's update range (with k < nz) and
// outside every CPML slab (tile_pass's interior blocks): no range or slab tests, the same floats.
// *key_out (when given): the material key read (0 when none was).
template <int MASK, class LD, bool FAST = false, bool TILE = true, class Coef, class T>
__device__ __forceinline__ void h_sample(const Fields<T>& A, const Grid& g, const Coef& coef, const CpmlSet& ch,
                                         unsigned bits, bool store_psi, int i, int j, int k, long long o, float& hx,
                                         float& hy, float& hz, float& ex, float& ey, float& ez,
                                         int* key_out = nullptr) {
  const T* __restrict__ Ex = A.f[0];
  const T* __restrict__ Ey = A.f[1];
  const T* __restrict__ Ez = A.f[2];
  const long long sy = g.sy, sz = g.sz;
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  const bool more = k < g.nz;
  const bool kin = k >= 0 && k <= g.nz;
  ex = LD::field(Ex + o);
  ey = LD::field(Ey + o);
  ez = LD::field(Ez + o);
  auto xy = [&](int c) {
    return TILE ? (bits & (1u << (c - 3))) != 0u : in(i, g.lo[c][0], g.hi[c][0]) && in(j, g.lo[c][1], g.hi[c][1]);
  };
  const bool ux = (MASK & kHx) && (FAST || (kin && more && xy(3)));
  const bool uy = (MASK & kHy) && (FAST || (kin && more && xy(4)));
  const bool uz = (MASK & kHz) && (FAST || (kin && xy(5)));
  const int key = (ux || uy || uz) ? coef.key(o) : 0;
  if (key_out) *key_out = key;
  if (MASK & kHx) {
    const float h = LD::field(A.f[3] + o);
    if (ux) {
      const float ey_p = LD::field(Ey + o + sz);
      hx = coef.a(3, o, key) * h - coef.b(3, o, key) * ((LD::field(Ez + o + sy) - ez) * idy - (ey_p - ey) * idz);
    } else {
      hx = h;
    }
  }
  if (MASK & kHy) {
    const float h = LD::field(A.f[4] + o);
    if (uy) {
      const float ex_p = LD::field(Ex + o + sz);
      hy = coef.a(4, o, key) * h - coef.b(4, o, key) * ((ex_p - ex) * idz - (LD::field(Ez + o + 1) - ez) * idx);
    } else {
      hy = h;
    }
  }
  if (MASK & kHz) {
    const float h = LD::field(A.f[5] + o);
    if (uz)
      hz = coef.a(5, o, key) * h - coef.b(5, o, key) * ((LD::field(Ey + o + 1) - ey) * idx - (LD::field(Ex + o + sy) - ex) * idy);
    else
      hz = h;
  }
  if (!FAST && kin)
    h_cpml<MASK, LD, TILE>(ch, A, g, coef, i, j, k, o, store_psi, bits, unsigned(ux) | unsigned(uy) << 1 | unsigned(uz) << 2,
                     key, hx, hy, hz);
  // The stored values (the E update of this pass reads them from registers and shared memory).
  if (MASK & kHx) hx = rnd<T>(hx);
  if (MASK & kHy) hy = rnd<T>(hy);
  if (MASK & kHz) hz = rnd<T>(hz);
}

// E^{n+1} at sample (i, j, k) from E^n (ex, ey, ez) and H^{n+1/2}: the own sample's hx, hy, hz, hx and
// hy at k-1 (hx_m, hy_m), Hz and Hx at j-1 (hz_jm, hx_jm), Hz and Hy at i-1 (hz_im, hy_im); update_e_bulk's
// expressions and range tests. Writes the three components into B.
// With E slabs in ce, their corrections before the store. TILE: bits = e_bits(g, ce, i, j);
// otherwise tested in full. FAST: as h_sample's, with known_key the sample's material key
// (h_sample's).
template <bool FAST = false, bool TILE = true, class Coef, class T>
__device__ __forceinline__ void e_sample(const Fields<T>& B, const Grid& g, const Coef& coef, const CpmlSet& ce,
                                         unsigned bits, int i, int j, int k, long long o, float ex, float ey, float ez,
                                         float hx, float hy, float hz, float hx_m, float hy_m, float hz_jm,
                                         float hx_jm, float hz_im, float hy_im, int known_key = 0) {
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  auto xy = [&](int c) {
    return TILE ? (bits & (1u << c)) != 0u : in(i, g.lo[c][0], g.hi[c][0]) && in(j, g.lo[c][1], g.hi[c][1]);
  };
  const bool ux = FAST || (xy(0) && in(k, g.lo[0][2], g.hi[0][2]));
  const bool uy = FAST || (xy(1) && in(k, g.lo[1][2], g.hi[1][2]));
  const bool uz = FAST || (xy(2) && in(k, g.lo[2][2], g.hi[2][2]));
  const int key = FAST ? known_key : ((ux || uy || uz) ? coef.key(o) : 0);
  float nx = ux ? coef.a(0, o, key) * ex + coef.b(0, o, key) * ((hz - hz_jm) * idy - (hy - hy_m) * idz) : ex;
  float ny = uy ? coef.a(1, o, key) * ey + coef.b(1, o, key) * ((hx - hx_m) * idz - (hz - hz_im) * idx) : ey;
  float nz = uz ? coef.a(2, o, key) * ez + coef.b(2, o, key) * ((hy - hy_im) * idx - (hx - hx_jm) * idy) : ez;
  const unsigned upd = unsigned(ux) | unsigned(uy) << 1 | unsigned(uz) << 2;
  unsigned slabs = 0;
  if (!FAST) slabs = TILE ? bits >> kSlabBit : (ce.count == 0 || inner(ce, i, j, k) ? 0u : (1u << ce.count) - 1u);
  for (unsigned m = slabs; m != 0; m &= m - 1) {
    const Slab& s = ce.s[__ffs(int(m)) - 1];
    if (!in_slab_z(s, k) || (!TILE && !in_slab_xy(s, i, j))) continue;
    switch (s.axis) {
      case 0: e_slab<0, T>(s, coef, i, j, k, o, upd, key, hy - hy_im, hz - hz_im, nx, ny, nz); break;
      case 1: e_slab<1, T>(s, coef, i, j, k, o, upd, key, hz - hz_jm, hx - hx_jm, nx, ny, nz); break;
      default: e_slab<2, T>(s, coef, i, j, k, o, upd, key, hx - hx_m, hy - hy_m, nx, ny, nz); break;
    }
  }
  st(B.f[0] + o, nx);
  st(B.f[1] + o, ny);
  st(B.f[2] + o, nz);
}

// The slab of each axis holding (i, j, k), -1 where none, and its psi index.
struct SlabHits {
  int p[3] = {-1, -1, -1};
  int t[3] = {0, 0, 0};
};
// The slabs of `cs` holding (i, j, k), each tested in full (the persistent kernel's samples).
__device__ __forceinline__ SlabHits slab_hits(const CpmlSet& cs, int i, int j, int k) {
  SlabHits h;
  if (cs.count == 0 || inner(cs, i, j, k)) return h;
#pragma unroll
  for (int p = 0; p < kMaxCpmlSlabs; ++p) {
    if (p >= cs.count) break;
    const Slab& s = cs.s[p];
    if (!in_slab_xy(s, i, j) || !in_slab_z(s, k)) continue;
    const int t = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
    switch (s.axis) {
      case 0: h.p[0] = p; h.t[0] = t; break;
      case 1: h.p[1] = p; h.t[1] = t; break;
      default: h.p[2] = p; h.t[2] = t; break;
    }
  }
  return h;
}
// The psi pair of each hit slab, loaded now; of an H slab (not ELECTRIC) only the pairs of the
// components in MASK (bit c-3 for component c).
template <class LD, int MASK = kHx | kHy | kHz, bool ELECTRIC = true>
__device__ __forceinline__ void load_psi(const CpmlSet& cs, const SlabHits& h, float (&psi)[3][2]) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    psi[a][0] = psi[a][1] = 0.0f;
    if (h.p[a] < 0) continue;
    const Slab& s = cs.s[h.p[a]];
#pragma unroll
    for (int q = 0; q < 2; ++q)
      if (ELECTRIC || (MASK & (1 << (cuda_kernels::cpml_component(a, false, q) - 3))))
        psi[a][q] = LD::psi(s.psi_in[q] + h.t[a]);
  }
}
// The profile values of each hit slab at the sample (hoisted_corrections' prof), loaded now.
__device__ __forceinline__ void load_profiles(const CpmlSet& cs, const SlabHits& h, int i, int j, int k,
                                              float (&prof)[3][3]) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    prof[a][0] = prof[a][1] = prof[a][2] = 0.0f;
    if (h.p[a] < 0) continue;
    const Slab& s = cs.s[h.p[a]];
    const int x = a == 0 ? i : (a == 1 ? j : k);
    prof[a][0] = __ldg(s.b + x);
    prof[a][1] = __ldg(s.c + x);
    prof[a][2] = __ldg(s.kinv + x) - 1.0f;
  }
}
// The corrections of the hit slabs in axis order, each slab's two in cpml_component's order
// (h_slab's / e_slab's expressions): component c = cpml_component(A, ELECTRIC, Q) % 3 of v, where
// it is updated (u[c]), gets the increment from the difference d[A][Q] (times the slab's
// 1 / cell size) and the preloaded psi[A][Q]; the slab's psi_out[Q] gets the new psi (store: a
// tile's halo samples store none), and keep[A][Q] too where given (the shell tiles' first step,
// which carries it to their second). prof: the slabs' profile values b, c and 1/kappa - 1 at the
// sample, [axis][3], loaded before (load_profiles; the persistent kernel's planned samples), else
// loaded here.
template <bool ELECTRIC, class T, class Coef>
__device__ __forceinline__ void hoisted_corrections(const CpmlSet& cs, const SlabHits& hit, const float (&psi)[3][2],
                                                    const float (&d)[3][2], const Coef& coef, long long o, int key,
                                                    int i, int j, int k, const bool (&u)[3], float (&v)[3],
                                                    bool store = true, float (*keep)[2] = nullptr,
                                                    const float (*prof)[3] = nullptr) {
#pragma unroll
  for (int A = 0; A < 3; ++A) {
    if (hit.p[A] < 0) continue;
    const Slab& s = cs.s[hit.p[A]];
    const int x = A == 0 ? i : (A == 1 ? j : k);
#pragma unroll
    for (int Q = 0; Q < 2; ++Q) {
      const int comp = cuda_kernels::cpml_component(A, ELECTRIC, Q);
      if (!u[comp % 3]) continue;
      const float b = prof ? prof[A][0] : __ldg(s.b + x), c = prof ? prof[A][1] : __ldg(s.c + x),
                  km1 = prof ? prof[A][2] : __ldg(s.kinv + x) - 1.0f;
      float p;
      v[comp % 3] = rnd<T>(v[comp % 3]) + cuda_kernels::cpml_increment(b, c, km1, coef.b(comp, o, key), Q == 0 ? 1.0f : -1.0f,
                                                                       d[A][Q] * s.inv_d, psi[A][Q], s.lagged, &p);
      if (store) s.psi_out[Q][hit.t[A]] = p;
      if (keep) keep[A][Q] = p;
    }
  }
}

// Hoisted slabs in the tile pass (tile_pass<..., HOIST>): as the persistent kernel's hoisted
// samples (below), every psi a sample's corrections read is loaded before its arithmetic, and an
// own sample's E psi before the barrier, so a sample in a slab waits for one load round trip
// instead of one per slab after its bulk value. tile_slabs: the slabs holding tile sample
// (i, j, k) from its x/y bits (mask: bit p for slab p of the set) and the plane test, and the psi
// pairs of the components in MASK (H: bit c-3 for component c; E: all three) loaded. At most one
// slab of each axis may hold a sample (hoistable; the engine checks it).
// tile_hits: the slabs only (tile_slabs without the loads).
__device__ __forceinline__ void tile_hits(const CpmlSet& cs, unsigned mask, int i, int j, int k, SlabHits& h) {
#pragma unroll
  for (int p = 0; p < kMaxCpmlSlabs; ++p) {
    if (!(mask & (1u << p))) continue;
    const Slab& s = cs.s[p];
    if (!in_slab_z(s, k)) continue;
    const int t = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
    switch (s.axis) {
      case 0: h.p[0] = p; h.t[0] = t; break;
      case 1: h.p[1] = p; h.t[1] = t; break;
      default: h.p[2] = p; h.t[2] = t; break;
    }
  }
}
template <int MASK, bool ELECTRIC, class LD>
__device__ __forceinline__ void tile_slabs(const CpmlSet& cs, unsigned mask, int i, int j, int k, SlabHits& h,
                                           float (&psi)[3][2]) {
  tile_hits(cs, mask, i, j, k, h);
  load_psi<LD, MASK, ELECTRIC>(cs, h, psi);
}

// The sample `d` layout samples on from offset o of array p: 32-bit offsets (Off int) add before
// the pointer (one wide multiply-add), 64-bit ones after (the expressions as they were).
template <class P, class Off>
__device__ __forceinline__ P* at(P* p, Off o, Off d) {
  if constexpr (sizeof(Off) == 4)
    return p + (o + d);
  else
    return p + o + d;
}

// The H update of a sample with hoisted slabs (h_tile_hoisted, h_hoisted), after its psi was
// loaded: the loads of E^n (returned in ex, ey, ez) and of H^{n-1/2} (the components in MASK),
// h_sample's bulk expressions for the components updated (ux, uy, uz), then the corrections of
// the slabs in `hit` (each psi stored where `store`). h: the values, not yet rounded.
template <int MASK, class LD, class Coef, class T, class Off>
__device__ __forceinline__ void h_update_hoisted(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ch,
                                                 bool ux, bool uy, bool uz, int i, int j, int k, Off o,
                                                 const SlabHits& hit, const float (&psi)[3][2], bool store,
                                                 float& ex, float& ey, float& ez, float (&h)[3],
                                                 const float (*prof)[3] = nullptr) {
  const T* __restrict__ Ex = F.f[0];
  const T* __restrict__ Ey = F.f[1];
  const T* __restrict__ Ez = F.f[2];
  const Off sy = Off(g.sy), sz = Off(g.sz), one = 1;
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  ex = LD::field(Ex + o);
  ey = LD::field(Ey + o);
  ez = LD::field(Ez + o);
  const float hx0 = (MASK & kHx) ? LD::field(F.f[3] + o) : 0.0f;
  const float hy0 = (MASK & kHy) ? LD::field(F.f[4] + o) : 0.0f;
  const float hz0 = (MASK & kHz) ? LD::field(F.f[5] + o) : 0.0f;
  const float ez_y = ux ? LD::field(at(Ez, o, sy)) : 0.0f, ey_z = ux ? LD::field(at(Ey, o, sz)) : 0.0f;
  const float ex_z = uy ? LD::field(at(Ex, o, sz)) : 0.0f, ez_x = uy ? LD::field(at(Ez, o, one)) : 0.0f;
  const float ey_x = uz ? LD::field(at(Ey, o, one)) : 0.0f, ex_y = uz ? LD::field(at(Ex, o, sy)) : 0.0f;
  const int key = (ux || uy || uz) ? coef.key(o) : 0;
  h[0] = ux ? coef.a(3, o, key) * hx0 - coef.b(3, o, key) * ((ez_y - ez) * idy - (ey_z - ey) * idz) : hx0;
  h[1] = uy ? coef.a(4, o, key) * hy0 - coef.b(4, o, key) * ((ex_z - ex) * idz - (ez_x - ez) * idx) : hy0;
  h[2] = uz ? coef.a(5, o, key) * hz0 - coef.b(5, o, key) * ((ey_x - ey) * idx - (ex_y - ex) * idy) : hz0;
  // h_slab's differences (cpml_source): x: d_x Ez for Hy, d_x Ey for Hz; y: d_y Ex for Hz, d_y Ez
  // for Hx; z: d_z Ey for Hx, d_z Ex for Hy.
  const float d[3][2] = {{ez_x - ez, ey_x - ey}, {ex_y - ex, ez_y - ez}, {ey_z - ey, ex_z - ex}};
  const bool upd[3] = {ux, uy, uz};
  hoisted_corrections<false, T>(ch, hit, psi, d, coef, o, key, i, j, k, upd, h, store, nullptr, prof);
}

// h_sample (TILE, not FAST) with hoisted slabs: the same tests, expressions and rounding.
template <int MASK, class LD, class Coef, class T>
__device__ __forceinline__ void h_tile_hoisted(const Fields<T>& A, const Grid& g, const Coef& coef, const CpmlSet& ch,
                                               unsigned bits, bool store_psi, int i, int j, int k, long long o,
                                               float& hx, float& hy, float& hz, float& ex, float& ey, float& ez) {
  const bool more = k < g.nz;
  const bool kin = k >= 0 && k <= g.nz;
  const bool ux = (MASK & kHx) && kin && more && (bits & 1u);
  const bool uy = (MASK & kHy) && kin && more && (bits & 2u);
  const bool uz = (MASK & kHz) && kin && (bits & 4u);
  SlabHits hit;
  float psi[3][2];
  tile_slabs<MASK, false, LD>(ch, kin ? bits >> kSlabBit : 0u, i, j, k, hit, psi);
  float h[3];
  h_update_hoisted<MASK, LD>(A, g, coef, ch, ux, uy, uz, i, j, k, o, hit, psi, store_psi, ex, ey, ez, h);
  if (MASK & kHx) hx = rnd<T>(h[0]);
  if (MASK & kHy) hy = rnd<T>(h[1]);
  if (MASK & kHz) hz = rnd<T>(h[2]);
}

// The E update of a sample with hoisted slabs (e_tile_hoisted, e_hoisted): e_sample's bulk
// expressions for the components updated (ux, uy, uz), the corrections of the slabs in `hit` from
// the preloaded psi, the stores into F.
template <class T, class Coef, class Off>
__device__ __forceinline__ void e_update_hoisted(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ce,
                                                 bool ux, bool uy, bool uz, int i, int j, int k, Off o, float ex,
                                                 float ey, float ez, float hx, float hy, float hz, float hx_m,
                                                 float hy_m, float hz_jm, float hx_jm, float hz_im, float hy_im,
                                                 const SlabHits& hit, const float (&psi)[3][2],
                                                 const float (*prof)[3] = nullptr) {
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  const int key = (ux || uy || uz) ? coef.key(o) : 0;
  float e[3] = {ux ? coef.a(0, o, key) * ex + coef.b(0, o, key) * ((hz - hz_jm) * idy - (hy - hy_m) * idz) : ex,
                uy ? coef.a(1, o, key) * ey + coef.b(1, o, key) * ((hx - hx_m) * idz - (hz - hz_im) * idx) : ey,
                uz ? coef.a(2, o, key) * ez + coef.b(2, o, key) * ((hy - hy_im) * idx - (hx - hx_jm) * idy) : ez};
  // e_slab's differences (cpml_source): x: d_x Hy for Ez, d_x Hz for Ey; y: d_y Hz for Ex, d_y Hx
  // for Ez; z: d_z Hx for Ey, d_z Hy for Ex.
  const float d[3][2] = {{hy - hy_im, hz - hz_im}, {hz - hz_jm, hx - hx_jm}, {hx - hx_m, hy - hy_m}};
  const bool upd[3] = {ux, uy, uz};
  hoisted_corrections<true, T>(ce, hit, psi, d, coef, o, key, i, j, k, upd, e, true, nullptr, prof);
  st(F.f[0] + o, e[0]);
  st(F.f[1] + o, e[1]);
  st(F.f[2] + o, e[2]);
}

// e_sample (TILE, not FAST) with the slabs and psi found and loaded before (tile_slabs).
template <class T, class Coef>
__device__ __forceinline__ void e_tile_hoisted(const Fields<T>& B, const Grid& g, const Coef& coef, const CpmlSet& ce,
                                               unsigned bits, int i, int j, int k, long long o, float ex, float ey,
                                               float ez, float hx, float hy, float hz, float hx_m, float hy_m,
                                               float hz_jm, float hx_jm, float hz_im, float hy_im, const SlabHits& hit,
                                               const float (&psi)[3][2]) {
  const bool ux = (bits & 1u) && in(k, g.lo[0][2], g.hi[0][2]);
  const bool uy = (bits & 2u) && in(k, g.lo[1][2], g.hi[1][2]);
  const bool uz = (bits & 4u) && in(k, g.lo[2][2], g.hi[2][2]);
  e_update_hoisted<T>(B, g, coef, ce, ux, uy, uz, i, j, k, o, ex, ey, ez, hx, hy, hz, hx_m, hy_m, hz_jm, hx_jm, hz_im,
                      hy_im, hit, psi);
}

// Resident blocks asked of the compiler (registers per thread <= 65536 / (blocks x threads)):
// 32x8 tiles at 5 blocks (40 registers, no spills; 54 without the bound) measured 32,491 against
// 29,476 Mcells/s at 512^3 (fdtd_onepass_h100.md); 32x4 at 8 (48 registers). 32x16 is left alone
// (3 blocks would spill; 2 changes nothing).
template <int TY>
constexpr int kMinBlocks = TY == 8 ? 5 : (TY == 4 ? 8 : 1);
// The persistent kernel's blocks: 256 threads, 4 resident per multiprocessor (hoisted samples; the
// chained ones 5 from 2 M samples; persistent_launch).
constexpr int kPersistentThreads = 256;
constexpr long long kPersistentFiveBlocksFrom = 2000000;

// The shared H planes of a tile, double-buffered: [buffer][row][column], row 0 = j0-1, column 0 = i0-1.
template <int TY>
struct Planes {
  float hx[2][TY + 1][33], hy[2][TY + 1][33], hz[2][TY + 1][33];
};

// One tile of one step: H^{n+1/2} and E^{n+1} from A into B (see the top of this file). The tile:
// block (bx, by, bz) of the grid of 32 x TY x chunk tiles (onepass_bulk), or with a list
// (onepass_blocks) the list's entry bx (PassBlock: first column, row and plane, last plane, and
// the last column and row of its box). HOIST: the hoisted slabs (h_tile_hoisted, e_tile_hoisted) on
// the general path.
template <int TY, bool FAST, bool LIST = false, bool HOIST = false, class Coef, class T>
__device__ __forceinline__ void tile_pass(const Fields<T>& A, const Fields<T>& B, const Grid& g, const Coef& coef, int chunk,
                                          const CpmlSet& ch, const CpmlSet& ce, int bx, int by, int bz,
                                          Planes<TY>& sm, const PassBlock* __restrict__ list = nullptr) {
  using LD = ReadOnlyLoad;
  int p = 0;
  const int tx = threadIdx.x, r = threadIdx.y;  // r = 0: the halo warp
  const int i0 = LIST ? list[bx].i0 : bx * 32, j0 = LIST ? list[bx].j0 : by * TY;
  const int k0 = LIST ? list[bx].k0 : bz * chunk;
  const int k1 = LIST ? list[bx].k1 : min(g.nz, k0 + chunk - 1);
  const int i = i0 + tx, j = j0 + r - 1;
  // (the last column and row read where they are used: the grid's keep onepass_bulk's code as it was)
  const bool own = r > 0 && i <= (LIST ? list[bx].ilast : g.nx) && j <= (LIST ? list[bx].jlast : g.ny);
  const bool yhalo = r == 0 && i <= (LIST ? list[bx].ilast : g.nx);                    // (i0+tx, j0-1)
  const bool xhalo = r == 0 && tx < TY && j0 + tx <= (LIST ? list[bx].jlast : g.ny);  // (i0-1, j0+tx)
  const long long base = g.origin + (long long)i + (long long)j * g.sy;
  const long long base_y = g.origin + (long long)i + (long long)(j0 - 1) * g.sy;
  const long long base_x = g.origin + (long long)(i0 - 1) + (long long)(j0 + tx) * g.sy;
  // The plane-independent tests, once: a worker's H bits (low half) and E bits (high half); the
  // halo warp's H bits of (i0+tx, j0-1) (low) and (i0-1, j0+tx) (high).
  unsigned bits = 0;
  if (!FAST) {
    if (r > 0)
      bits = h_bits(g, ch, i, j) | e_bits(g, ce, i, j) << 16;
    else
      bits = h_bits(g, ch, i, j0 - 1) | h_bits(g, ch, i0 - 1, j0 + tx) << 16;
  }
  float hx_m = 0.0f, hy_m = 0.0f;
  if (own) {  // the own column's Hx, Hy at k0-1
    float unused_hz, unused_ex, unused_ey, unused_ez;
    h_sample<kHx | kHy, LD, FAST>(A, g, coef, ch, bits & 0xffffu, false, i, j, k0 - 1,
                                  base + (long long)(k0 - 1) * g.sz, hx_m, hy_m, unused_hz, unused_ex, unused_ey,
                                  unused_ez);
  }
  for (int k = k0; k <= k1; ++k) {
    const long long kz = (long long)k * g.sz;
    float hx = 0.0f, hy = 0.0f, hz = 0.0f, ex = 0.0f, ey = 0.0f, ez = 0.0f;
    int key = 0;  // the own sample's material key (FAST: e_sample uses it instead of reading it again)
    constexpr bool kHoist = HOIST && !FAST;
    SlabHits ehit;         // kHoist: the own sample's E slabs and their psi, loaded before the barrier
    float epsi[3][2];
    if (own) {
      const long long o = base + kz;
      if (kHoist) {
        h_tile_hoisted<kHx | kHy | kHz, LD>(A, g, coef, ch, bits & 0xffffu, true, i, j, k, o, hx, hy, hz, ex, ey, ez);
        tile_slabs<kHx | kHy | kHz, true, LD>(ce, bits >> (16 + kSlabBit), i, j, k, ehit, epsi);
      } else {
        h_sample<kHx | kHy | kHz, LD, FAST>(A, g, coef, ch, bits & 0xffffu, true, i, j, k, o, hx, hy, hz, ex, ey, ez,
                                            FAST ? &key : nullptr);
      }
      st(B.f[3] + o, hx);
      st(B.f[4] + o, hy);
      st(B.f[5] + o, hz);
      sm.hx[p][r][tx + 1] = hx;
      sm.hy[p][r][tx + 1] = hy;
      sm.hz[p][r][tx + 1] = hz;
    } else if (r == 0) {
      float a, b, c, d0, d1, d2;
      if (yhalo) {
        if (kHoist)
          h_tile_hoisted<kHx | kHz, LD>(A, g, coef, ch, bits & 0xffffu, false, i, j0 - 1, k, base_y + kz, a, b, c, d0,
                                        d1, d2);
        else
          h_sample<kHx | kHz, LD, FAST>(A, g, coef, ch, bits & 0xffffu, false, i, j0 - 1, k, base_y + kz, a, b, c, d0,
                                        d1, d2);
        sm.hx[p][0][tx + 1] = a;
        sm.hz[p][0][tx + 1] = c;
      }
      if (xhalo) {
        if (kHoist)
          h_tile_hoisted<kHy | kHz, LD>(A, g, coef, ch, bits >> 16, false, i0 - 1, j0 + tx, k, base_x + kz, a, b, c,
                                        d0, d1, d2);
        else
          h_sample<kHy | kHz, LD, FAST>(A, g, coef, ch, bits >> 16, false, i0 - 1, j0 + tx, k, base_x + kz, a, b, c,
                                        d0, d1, d2);
        sm.hy[p][tx + 1][0] = b;
        sm.hz[p][tx + 1][0] = c;
      }
    }
    __syncthreads();
    if (own) {
      const long long o = base + kz;
      if (kHoist)
        e_tile_hoisted<T>(B, g, coef, ce, bits >> 16, i, j, k, o, ex, ey, ez, hx, hy, hz, hx_m, hy_m,
                          sm.hz[p][r - 1][tx + 1], sm.hx[p][r - 1][tx + 1], sm.hz[p][r][tx], sm.hy[p][r][tx], ehit,
                          epsi);
      else
        e_sample<FAST>(B, g, coef, ce, bits >> 16, i, j, k, o, ex, ey, ez, hx, hy, hz, hx_m, hy_m,
                       sm.hz[p][r - 1][tx + 1], sm.hx[p][r - 1][tx + 1], sm.hz[p][r][tx], sm.hy[p][r][tx], key);
    }
    hx_m = hx;
    hy_m = hy;
    p ^= 1;
  }
}

// A block whose samples (its 32 x TY columns, the halo row j0-1 and column i0-1, planes k0-1 .. k1)
// are all inside every component's update range, with k1 < nz, and inside the inner boxes of both
// CPML sets (no slab): tile_pass<TY, true> skips every range and slab test there (block-uniform;
// the kernel is bound by instruction issue at 512^3, not by DRAM: fdtd_reduced_storage.md).
__device__ __forceinline__ bool interior_box(const Grid& g, const CpmlSet& ch, const CpmlSet& ce, const int (&lo)[3],
                                             const int (&hi)[3]) {
  if (lo[2] < 0 || hi[2] >= g.nz || hi[0] > g.nx || hi[1] > g.ny) return false;
  for (int c = 0; c < 6; ++c)
    for (int a = 0; a < 3; ++a)
      if (lo[a] < g.lo[c][a] || hi[a] > g.hi[c][a]) return false;
  for (int a = 0; a < 3; ++a) {
    if (ch.count > 0 && (lo[a] < ch.inner_lo[a] || hi[a] >= ch.inner_hi[a])) return false;
    if (ce.count > 0 && (lo[a] < ce.inner_lo[a] || hi[a] >= ce.inner_hi[a])) return false;
  }
  return true;
}
template <int TY>
__device__ __forceinline__ bool interior_tile(const Grid& g, const CpmlSet& ch, const CpmlSet& ce, int chunk, int bx,
                                              int by, int bz) {
  const int lo[3] = {bx * 32 - 1, by * TY - 1, bz * chunk - 1};
  const int hi[3] = {bx * 32 + 31, by * TY + TY - 1, min(g.nz, bz * chunk + chunk - 1)};
  return interior_box(g, ch, ce, lo, hi);
}

// HOIST: the boundary tiles with the hoisted slabs (tile_pass).
template <int TY, bool HOIST, class Coef, class T>
__global__ void __launch_bounds__(32 * (TY + 1), kMinBlocks<TY>)
    onepass_bulk(Fields<T> A, Fields<T> B, Grid g, Coef coef, int chunk, CpmlSet ch, CpmlSet ce) {
  pdl_begin();
  __shared__ Planes<TY> sm;
  const int bx = int(blockIdx.x), by = int(blockIdx.y), bz = int(blockIdx.z);
  // The interior path for every storage (session 13: with the plane-independent tests out of the
  // z loop the general path no longer spills beside it at 40 registers; fdtd_onepass_h100.md).
  if (interior_tile<TY>(g, ch, ce, chunk, bx, by, bz)) {
    tile_pass<TY, true>(A, B, g, coef, chunk, ch, ce, bx, by, bz, sm);
    return;
  }
  tile_pass<TY, false, false, HOIST>(A, B, g, coef, chunk, ch, ce, bx, by, bz, sm);
}

// The one-pass step over a list of blocks (temporal blocking's boundary steps, fused_step.h): the
// same tile pass, each block's box from the list. 4 resident blocks asked of the compiler (48
// registers): at onepass_bulk's 5 (40) the list's block bounds spill.
constexpr int kPassMinBlocks = 4;
template <bool HOIST, class Coef, class T>
__global__ void __launch_bounds__(32 * (kPassTileY + 1), kPassMinBlocks)
    onepass_blocks(Fields<T> A, Fields<T> B, Grid g, Coef coef, const PassBlock* __restrict__ blocks, CpmlSet ch,
                   CpmlSet ce) {
  bind_table(coef);
  const BlockTrace trace{};
  __shared__ Planes<kPassTileY> sm;
  const int bx = int(blockIdx.x);
  const PassBlock pb = blocks[bx];
  const int lo[3] = {pb.i0 - 1, pb.j0 - 1, pb.k0 - 1};
  const int hi[3] = {pb.i0 + 31, pb.j0 + kPassTileY - 1, pb.k1};
  // (a block narrower than its 32 x kPassTileY threads takes the general path)
  if (hi[0] <= pb.ilast && hi[1] <= pb.jlast && interior_box(g, ch, ce, lo, hi)) {
    tile_pass<kPassTileY, true, true>(A, B, g, coef, 0, ch, ce, bx, 0, 0, sm, blocks);
    trace.done(BlockTrace::kPass, 0);
    return;
  }
  tile_pass<kPassTileY, false, true, HOIST>(A, B, g, coef, 0, ch, ce, bx, 0, 0, sm, blocks);
  trace.done(BlockTrace::kPass, 1);
}

// Two steps per pass (temporal blocking, fused_step.h): the interior tiles. A block of 32 x TY
// threads; thread (tx, ty) owns the column (i0-2+tx, j0-2+ty), clamped to the tile's last needed
// column i0+cw and row j0+ch (the threads past a narrow tile's edge repeat that column; what they
// compute is never used). It marches from plane k0-3 to k1; at iteration k, with kk = k+1:
//   H1 = H^{n+1/2} at kk from E^n at kk (own, carried), kk+1 (own, loaded), x+1 / y+1 (loads, L1);
//   E1 = E^{n+1}   at kk from H1 at kk (own; x-1 / y-1 through shared memory), H1 at k (carried);
//   H2 = H^{n+3/2} at k  from H1 at k, E1 at k (own; x+1 / y+1 through shared memory, stored in
//                        the iteration before), E1 at kk (own);
//   E2 = E^{n+2}   at k  from E1 at k, H2 at k (own; x-1 / y-1 shared), H2 at k-1 (carried);
// the core threads (tx 2..cw+1, ty 2..ch+1) store E2 and H2 of planes k0..k1. The rim's values are
// wrong (a clamped neighbour) and only the rim uses them: E2 at column c needs H2 at c-1..c, E1 at
// c-1..c+1, H1 at c-2..c+1. The first three iterations fill the carried registers (nothing of
// theirs is stored). plan_two_step keeps the samples whose values are used (the core grown by 2
// towards the low faces, 1 towards the high ones) inside the plain box; the reads (E^n up to
// c1+2, planes from k0-2) stay inside the grid. Arithmetic: h_sample / e_sample's FAST expressions operand for operand,
// each value rounded to the storage as its store would (rnd): two one-pass steps bit for bit.
// Shared memory: H1 of plane kk, E1 of planes k and kk (by parity), H2 of plane k; two barriers a
// plane (E1's parity buffers need none of their own).
template <int TY, int TX = 32>
struct TwoStepShared {
  float h1[3][TY][TX];
  float e1[2][3][TY][TX];
  float h2[3][TY][TX];
};
// MINB: resident blocks asked of the compiler. 32 x 16: 3 (40 registers, no spills) measured
// 36,950 against 36,380 Mcells/s at 2 (48 registers) at 512^3 in one call (results/fdtd.md,
// session 18); 32 x 32: 1.
// two_step_tile: one tile's march (the body of both interior kernels below). Consecutive calls of
// one block need no barrier between them: a tile's last shared-memory reads (H2, after its last
// second barrier) and its first writes (H1, before its first barrier) are of different arrays, and
// every thread has passed the previous tile's last barrier before any writes E1 or H2 again.
// (tx, ty): the thread's place in the tile (a 2D block's threadIdx; the merged shell launch's 1D
// blocks pass theirs).
template <int TY, class Coef, class T>
__device__ __forceinline__ void two_step_tile(const Fields<T>& A, const Fields<T>& B, const Grid& g, const Coef& coef,
                                              const TwoStepTile t, TwoStepShared<TY>& sm, const int tx, const int ty) {
  using LD = ReadOnlyLoad;
  const int i = t.i0 - 2 + min(tx, t.cw + 2), j = t.j0 - 2 + min(ty, t.ch + 2);
  const bool core = tx >= 2 && tx < t.cw + 2 && ty >= 2 && ty < t.ch + 2;
  const int xm = max(tx - 1, 0), xp = min(tx + 1, 31), ym = max(ty - 1, 0), yp = min(ty + 1, TY - 1);
  const long long sy = g.sy, sz = g.sz;
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  const T* __restrict__ Ex = A.f[0];
  const T* __restrict__ Ey = A.f[1];
  const T* __restrict__ Ez = A.f[2];
  long long o1 = g.origin + (long long)i + (long long)j * sy + (long long)(t.k0 - 2) * sz;  // plane kk
  float ex1 = LD::field(Ex + o1), ey1 = LD::field(Ey + o1), ez1 = LD::field(Ez + o1);    // E^n at kk
  float h1x_k = 0.0f, h1y_k = 0.0f, h1z_k = 0.0f;  // H1 at k
  float e1x_k = 0.0f, e1y_k = 0.0f, e1z_k = 0.0f;  // E1 at k
  float h2x_m = 0.0f, h2y_m = 0.0f;                // H2 at k-1
  int key_k = 0;
  for (int k = t.k0 - 3; k <= t.k1; ++k, o1 += sz) {
    const int pk = k & 1, pkk = pk ^ 1;
    const long long o2 = o1 + sz, o0 = o1 - sz;
    const float ex2 = LD::field(Ex + o2), ey2 = LD::field(Ey + o2), ez2 = LD::field(Ez + o2);
    const int key = coef.key(o1);
    const float h1x = rnd<T>(coef.a(3, o1, key) * LD::field(A.f[3] + o1) -
                             coef.b(3, o1, key) * ((LD::field(Ez + o1 + sy) - ez1) * idy - (ey2 - ey1) * idz));
    const float h1y = rnd<T>(coef.a(4, o1, key) * LD::field(A.f[4] + o1) -
                             coef.b(4, o1, key) * ((ex2 - ex1) * idz - (LD::field(Ez + o1 + 1) - ez1) * idx));
    const float h1z = rnd<T>(coef.a(5, o1, key) * LD::field(A.f[5] + o1) -
                             coef.b(5, o1, key) * ((LD::field(Ey + o1 + 1) - ey1) * idx - (LD::field(Ex + o1 + sy) - ex1) * idy));
    sm.h1[0][ty][tx] = h1x;
    sm.h1[1][ty][tx] = h1y;
    sm.h1[2][ty][tx] = h1z;
    __syncthreads();
    const float e1x = rnd<T>(coef.a(0, o1, key) * ex1 +
                             coef.b(0, o1, key) * ((h1z - sm.h1[2][ym][tx]) * idy - (h1y - h1y_k) * idz));
    const float e1y = rnd<T>(coef.a(1, o1, key) * ey1 +
                             coef.b(1, o1, key) * ((h1x - h1x_k) * idz - (h1z - sm.h1[2][ty][xm]) * idx));
    const float e1z = rnd<T>(coef.a(2, o1, key) * ez1 +
                             coef.b(2, o1, key) * ((h1y - sm.h1[1][ty][xm]) * idx - (h1x - sm.h1[0][ym][tx]) * idy));
    sm.e1[pkk][0][ty][tx] = e1x;
    sm.e1[pkk][1][ty][tx] = e1y;
    sm.e1[pkk][2][ty][tx] = e1z;
    const float h2x = rnd<T>(coef.a(3, o0, key_k) * h1x_k -
                             coef.b(3, o0, key_k) * ((sm.e1[pk][2][yp][tx] - e1z_k) * idy - (e1y - e1y_k) * idz));
    const float h2y = rnd<T>(coef.a(4, o0, key_k) * h1y_k -
                             coef.b(4, o0, key_k) * ((e1x - e1x_k) * idz - (sm.e1[pk][2][ty][xp] - e1z_k) * idx));
    const float h2z = rnd<T>(coef.a(5, o0, key_k) * h1z_k -
                             coef.b(5, o0, key_k) * ((sm.e1[pk][1][ty][xp] - e1y_k) * idx - (sm.e1[pk][0][yp][tx] - e1x_k) * idy));
    sm.h2[0][ty][tx] = h2x;
    sm.h2[1][ty][tx] = h2y;
    sm.h2[2][ty][tx] = h2z;
    __syncthreads();
    if (core && k >= t.k0) {
      const float e2x = coef.a(0, o0, key_k) * e1x_k +
                        coef.b(0, o0, key_k) * ((h2z - sm.h2[2][ym][tx]) * idy - (h2y - h2y_m) * idz);
      const float e2y = coef.a(1, o0, key_k) * e1y_k +
                        coef.b(1, o0, key_k) * ((h2x - h2x_m) * idz - (h2z - sm.h2[2][ty][xm]) * idx);
      const float e2z = coef.a(2, o0, key_k) * e1z_k +
                        coef.b(2, o0, key_k) * ((h2y - sm.h2[1][ty][xm]) * idx - (h2x - sm.h2[0][ym][tx]) * idy);
      st(B.f[0] + o0, e2x);
      st(B.f[1] + o0, e2y);
      st(B.f[2] + o0, e2z);
      st(B.f[3] + o0, h2x);
      st(B.f[4] + o0, h2y);
      st(B.f[5] + o0, h2z);
    }
    // Carried along z: H2 at k, H1 and E1 at kk, E^n at kk+1, the key of kk.
    h2x_m = h2x, h2y_m = h2y;
    h1x_k = h1x, h1y_k = h1y, h1z_k = h1z;
    e1x_k = e1x, e1y_k = e1y, e1z_k = e1z;
    ex1 = ex2, ey1 = ey2, ez1 = ez2, key_k = key;
  }
}

template <int TY, int MINB, class Coef, class T>
__global__ void __launch_bounds__(32 * TY, MINB)
    two_step_interior(Fields<T> A, Fields<T> B, Grid g, Coef coef, const TwoStepTile* __restrict__ tiles) {
  bind_table(coef);
  const BlockTrace trace{};
  __shared__ TwoStepShared<TY> sm;
  two_step_tile<TY>(A, B, g, coef, tiles[blockIdx.x], sm, int(threadIdx.x), int(threadIdx.y));
  trace.done(BlockTrace::kInterior, 0);
}

// The same tiles taken in turn by fewer blocks (gridDim.x < count): with b blocks a multiprocessor
// of the interior resident, the registers left let blocks of the rest's launch run beside them
// (results/fdtd.md, session 22: VEM_TWO_STEP_INTERIOR_GRID).
template <int TY, int MINB, class Coef, class T>
__global__ void __launch_bounds__(32 * TY, MINB)
    two_step_interior_strided(Fields<T> A, Fields<T> B, Grid g, Coef coef, const TwoStepTile* __restrict__ tiles,
                              int count) {
  bind_table(coef);
  const BlockTrace trace{};
  __shared__ TwoStepShared<TY> sm;
  for (int b = int(blockIdx.x); b < count; b += int(gridDim.x))
    two_step_tile<TY>(A, B, g, coef, tiles[b], sm, int(threadIdx.x), int(threadIdx.y));
  trace.done(BlockTrace::kInterior, 1);
}

// Two steps per pass in the CPML shell and at the faces (fused_step.h, "shell tiles"): tiles of
// TX x TY threads (a core of (TX-3) x (TY-3) columns) marching as
// two_step_tile does, with the one-pass tile's general path in every update: each thread's x/y
// range and slab bits once (h_bits, e_bits), the plane tests per plane, and the hoisted slabs'
// corrections (h_update_hoisted's and e_update_hoisted's expressions and rounding, operand for
// operand, with the operands of the second step from shared memory and registers as in
// two_step_tile). Psi: the first step reads psi^{n-1/2} (H) and psi^n (E) of every sample it
// computes from the sets' psi_in and keeps the new values in registers (keep); the second step
// corrects from those, one plane behind, and the core stores psi^{n+3/2} and psi^{n+2} into
// psi_out. psi_in and psi_out are different arrays for both kinds (the tiles' rims read the
// neighbours' psi^{n-1/2} / psi^n), so after a pair the engine exchanges them.
// Columns and planes outside the layout's ghost layer (field_layout.h) are clamped into it: the
// threads past a face (rows j < -1 or > ny, planes < -1 or > nz, columns > nx) compute the values
// of the last sample again. No update in range reads them: along each axis the E samples of
// planes 0 and n that read a neighbour outside are tangential on a PEC face (not updated), and an
// H sample reads only E at its own index and +1. The neighbour loads of each component are issued
// only where it is updated (h_update_hoisted), so every load stays inside the arrays.
// AXIS 0-2: a tile whose computed samples meet no CPML slab but (at most) the slab t.sh of ch
// and t.se of ce, both of axis AXIS (plan_two_step's classes): each sample's hits from that slab
// alone (shell_hits), so the other axes' psi and corrections drop out at compile time (fewer
// registers and instructions; the same expressions). AXIS 3-5 (shell_edges): the slabs of two
// axes, x and y, x and z, y and z, t.sh / t.se of the first and t.sh2 / t.se2 of the
// second; the third axis drops out. AXIS < 0: every slab tested (tile_hits).
// p, col_in: the slab of the (first) axis and whether the thread's column lies in it; p2, col2:
// those of the second axis.
__device__ __forceinline__ void shell_hit(const CpmlSet& cs, int p, int axis, int i, int j, int k, SlabHits& h) {
  const Slab& s = cs.s[p];
  if (!in_slab_z(s, k)) return;
  h.p[axis] = p;
  h.t[axis] = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
}
template <int AXIS>
__device__ __forceinline__ void shell_hits(const CpmlSet& cs, unsigned bits, int p, bool col_in, int p2, bool col2,
                                           int i, int j, int k, SlabHits& h) {
  if constexpr (AXIS < 0) {
    tile_hits(cs, bits >> kSlabBit, i, j, k, h);
  } else {
    constexpr int first = AXIS < 3 ? AXIS : (AXIS == 5 ? 1 : 0);
    if (col_in) shell_hit(cs, p, first, i, j, k, h);
    if constexpr (AXIS >= 3) {
      constexpr int second = AXIS == 3 ? 1 : 2;
      if (col2) shell_hit(cs, p2, second, i, j, k, h);
    }
  }
}
template <int AXIS, class LD, bool ELECTRIC>
__device__ __forceinline__ void shell_slabs(const CpmlSet& cs, unsigned bits, int p, bool col_in, int p2, bool col2,
                                            int i, int j, int k, SlabHits& h, float (&psi)[3][2]) {
  shell_hits<AXIS>(cs, bits, p, col_in, p2, col2, i, j, k, h);
  load_psi<LD, kHx | kHy | kHz, ELECTRIC>(cs, h, psi);
}

// VEM_SHELL_PSI_SHARED (1 by default; 0: the register version, kept as a measurement switch): the
// psi the first step leaves at plane kk for the second (ph_k / pe_k below, 12 floats a thread) kept
// in a per-thread slot of shared memory (psi_sm: 12 x 512 floats, 24 KB a block, each slot read
// and refilled by its own thread only, so no barrier) instead of registers across the iteration.
// The first step swaps: it reads every slot (the psi of plane k) and leaves its own psi of kk in
// the slots of the slabs kk is in, so the first step's psi are not live through the second. A
// slot not written the iteration before holds an older plane's psi, which the second step does not
// read: its slab tests at k are the first step's at kk of that iteration. Aim: the merged shell
// kernel's spills (64 registers for 2 resident blocks of 512 threads; results/fdtd.md, sessions
// 26 and 29): ptxas 16 / 24 bytes of spill stores / loads instead of 168 / 136 (32-bit offsets,
// table). Measured on an H200 (results/fdtd.md, session 31): the same fields bit for bit (the
// agreement program's shell cases), the head 2.5 % and 128^3 0.6 % faster, the rest within noise.
// (Session 30's first version read only the slots of kk's slabs, so a slab's last plane read
// zeros; a version reading the slots on bits of the iteration before was correct but spilled
// 96 / 104 bytes and gained nothing.)
#ifndef VEM_SHELL_PSI_SHARED
#define VEM_SHELL_PSI_SHARED 1
#endif
constexpr bool kShellPsiShared = VEM_SHELL_PSI_SHARED != 0;
constexpr int kShellPsiSlots = 12;

template <int TX, int TY, int AXIS, class Off, class Coef, class T>
__device__ __forceinline__ void two_step_shell_tile(const Fields<T>& A, const Fields<T>& B, const Grid& g,
                                                    const Coef& coef, const CpmlSet& ch, const CpmlSet& ce,
                                                    const TwoStepTile t, TwoStepShared<TY, TX>& sm, int tid,
                                                    float* __restrict__ psi_sm = nullptr) {
  using LD = ReadOnlyLoad;
  const int tx = tid % TX, ty = tid / TX;
  const int i = min(t.i0 - 2 + min(tx, t.cw + 2), g.nx);
  const int j = max(-1, min(t.j0 - 2 + min(ty, t.ch + 2), g.ny));
  const bool core = tx >= 2 && tx < t.cw + 2 && ty >= 2 && ty < t.ch + 2;
  const int xm = max(tx - 1, 0), xp = min(tx + 1, TX - 1), ym = max(ty - 1, 0), yp = min(ty + 1, TY - 1);
  const Off sy = Off(g.sy), sz = Off(g.sz);
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  const T* __restrict__ Ex = A.f[0];
  const T* __restrict__ Ey = A.f[1];
  const T* __restrict__ Ez = A.f[2];
  const unsigned hb = h_bits(g, ch, i, j), eb = e_bits(g, ce, i, j);
  // (AXIS >= 0: the thread's column inside the tile's slab of each set; AXIS >= 3: of the second
  // axis's too)
  const bool hcol = AXIS >= 0 && t.sh >= 0 && in_slab_xy(ch.s[t.sh], i, j);
  const bool ecol = AXIS >= 0 && t.se >= 0 && in_slab_xy(ce.s[t.se], i, j);
  const bool hcol2 = AXIS >= 3 && t.sh2 >= 0 && in_slab_xy(ch.s[t.sh2], i, j);
  const bool ecol2 = AXIS >= 3 && t.se2 >= 0 && in_slab_xy(ce.s[t.se2], i, j);
  const Off base = Off(g.origin) + Off(i) + Off(j) * sy;
  auto plane = [&](int k) { return max(-1, min(k, g.nz)); };
  // H_c updated at plane k (h_sample's tests), E_c (e_sample's).
  auto h_upd = [&](int k, bool (&u)[3]) {
    const bool kin = k >= 0 && k <= g.nz, more = k < g.nz;
    u[0] = kin && more && (hb & 1u);
    u[1] = kin && more && (hb & 2u);
    u[2] = kin && (hb & 4u);
  };
  auto e_upd = [&](int k, bool (&u)[3]) {
    for (int c = 0; c < 3; ++c) u[c] = (eb & (1u << c)) && in(k, g.lo[c][2], g.hi[c][2]);
  };
  int kc1 = plane(t.k0 - 2);  // plane kk (clamped)
  Off o1 = base + Off(kc1) * sz;
  float ex1 = LD::field(Ex + o1), ey1 = LD::field(Ey + o1), ez1 = LD::field(Ez + o1);  // E^n at kk
  float h1x_k = 0.0f, h1y_k = 0.0f, h1z_k = 0.0f;  // H1 at k
  float e1x_k = 0.0f, e1y_k = 0.0f, e1z_k = 0.0f;  // E1 at k
  float h2x_m = 0.0f, h2y_m = 0.0f;                // H2 at k-1
  float ph_k[3][2] = {}, pe_k[3][2] = {};          // psi after the first step at k (H, E)
  int key_k = 0;
  // psi_sm's slot of set e (0 H, 1 E), axis a, component q of this thread
  auto slot = [&](int e, int a, int q) -> float& { return psi_sm[((e * 3 + a) * 2 + q) * (TX * TY) + tid]; };
  // The swap of set e: every slot's psi (plane k's where its slab holds k) into was, now's of kk
  // into the slots of the slabs holding kk (hit).
  auto swap_slots = [&](int e, const SlabHits& hit, const float (&now)[3][2], float (&was)[3][2]) {
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        was[a][q] = slot(e, a, q);
        if (hit.p[a] >= 0) slot(e, a, q) = now[a][q];
      }
  };
  if constexpr (kShellPsiShared) {
#pragma unroll
    for (int e = 0; e < 2; ++e)
#pragma unroll
      for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int q = 0; q < 2; ++q) slot(e, a, q) = 0.0f;
  }
  for (int k = t.k0 - 3; k <= t.k1; ++k) {
    const int pk = k & 1, pkk = pk ^ 1;
    const int kc0 = plane(k), kc2 = plane(k + 2);
    const Off o0 = base + Off(kc0) * sz, o2 = base + Off(kc2) * sz;
    const float ex2 = LD::field(Ex + o2), ey2 = LD::field(Ey + o2), ez2 = LD::field(Ez + o2);
    // H1 = H^{n+1/2} at kk, and the E slabs' psi of E1 (loaded before the barrier).
    bool hu[3], eu[3];
    h_upd(kc1, hu);
    e_upd(kc1, eu);
    SlabHits hh, eh;
    float ph[3][2], pe[3][2];
    shell_slabs<AXIS, LD, false>(ch, kc1 >= 0 ? hb : 0u, t.sh, hcol && kc1 >= 0, t.sh2, hcol2 && kc1 >= 0, i, j, kc1,
                                 hh, ph);
    shell_slabs<AXIS, LD, true>(ce, eb, t.se, ecol, t.se2, ecol2, i, j, kc1, eh, pe);
    const float hx0 = LD::field(A.f[3] + o1), hy0 = LD::field(A.f[4] + o1), hz0 = LD::field(A.f[5] + o1);
    const float ez_y = hu[0] ? LD::field(at(Ez, o1, sy)) : 0.0f;
    const float ez_x = hu[1] ? LD::field(at(Ez, o1, Off(1))) : 0.0f;
    const float ey_x = hu[2] ? LD::field(at(Ey, o1, Off(1))) : 0.0f, ex_y = hu[2] ? LD::field(at(Ex, o1, sy)) : 0.0f;
    const int key = (hu[0] || hu[1] || hu[2] || eu[0] || eu[1] || eu[2]) ? coef.key(o1) : 0;
    float h1[3] = {hu[0] ? coef.a(3, o1, key) * hx0 - coef.b(3, o1, key) * ((ez_y - ez1) * idy - (ey2 - ey1) * idz) : hx0,
                   hu[1] ? coef.a(4, o1, key) * hy0 - coef.b(4, o1, key) * ((ex2 - ex1) * idz - (ez_x - ez1) * idx) : hy0,
                   hu[2] ? coef.a(5, o1, key) * hz0 - coef.b(5, o1, key) * ((ey_x - ey1) * idx - (ex_y - ex1) * idy) : hz0};
    {
      const float d[3][2] = {{ez_x - ez1, ey_x - ey1}, {ex_y - ex1, ez_y - ez1}, {ey2 - ey1, ex2 - ex1}};
      hoisted_corrections<false, T>(ch, hh, ph, d, coef, o1, key, i, j, kc1, hu, h1, false, ph);
    }
    // (kShellPsiShared: the H psi of plane k out of the slots, those of kk in; phl / pel are read
    // only where the second step's slabs are the first's of the iteration before: the same tests)
    float phl[3][2], pel[3][2];
    if constexpr (kShellPsiShared) swap_slots(0, hh, ph, phl);
    const float h1x = rnd<T>(h1[0]), h1y = rnd<T>(h1[1]), h1z = rnd<T>(h1[2]);
    sm.h1[0][ty][tx] = h1x;
    sm.h1[1][ty][tx] = h1y;
    sm.h1[2][ty][tx] = h1z;
    __syncthreads();
    // E1 = E^{n+1} at kk.
    float e1[3];
    {
      const float hz_jm = sm.h1[2][ym][tx], hx_jm = sm.h1[0][ym][tx];
      const float hz_im = sm.h1[2][ty][xm], hy_im = sm.h1[1][ty][xm];
      e1[0] = eu[0] ? coef.a(0, o1, key) * ex1 + coef.b(0, o1, key) * ((h1z - hz_jm) * idy - (h1y - h1y_k) * idz) : ex1;
      e1[1] = eu[1] ? coef.a(1, o1, key) * ey1 + coef.b(1, o1, key) * ((h1x - h1x_k) * idz - (h1z - hz_im) * idx) : ey1;
      e1[2] = eu[2] ? coef.a(2, o1, key) * ez1 + coef.b(2, o1, key) * ((h1y - hy_im) * idx - (h1x - hx_jm) * idy) : ez1;
      const float d[3][2] = {{h1y - hy_im, h1z - hz_im}, {h1z - hz_jm, h1x - hx_jm}, {h1x - h1x_k, h1y - h1y_k}};
      hoisted_corrections<true, T>(ce, eh, pe, d, coef, o1, key, i, j, kc1, eu, e1, false, pe);
    }
    if constexpr (kShellPsiShared) swap_slots(1, eh, pe, pel);
    const float e1x = rnd<T>(e1[0]), e1y = rnd<T>(e1[1]), e1z = rnd<T>(e1[2]);
    sm.e1[pkk][0][ty][tx] = e1x;
    sm.e1[pkk][1][ty][tx] = e1y;
    sm.e1[pkk][2][ty][tx] = e1z;
    // H2 = H^{n+3/2} at k from H1 and E1 (E1 at kk own, at k own and x+1 / y+1 shared).
    const bool store = core && k >= t.k0;
    float h2[3];
    {
      bool u[3];
      h_upd(kc0, u);
      SlabHits hit;
      shell_hits<AXIS>(ch, kc0 >= 0 ? hb : 0u, t.sh, hcol && kc0 >= 0, t.sh2, hcol2 && kc0 >= 0, i, j, kc0, hit);
      const float e_zy = sm.e1[pk][2][yp][tx], e_zx = sm.e1[pk][2][ty][xp];
      const float e_yx = sm.e1[pk][1][ty][xp], e_xy = sm.e1[pk][0][yp][tx];
      h2[0] = u[0] ? coef.a(3, o0, key_k) * h1x_k - coef.b(3, o0, key_k) * ((e_zy - e1z_k) * idy - (e1y - e1y_k) * idz) : h1x_k;
      h2[1] = u[1] ? coef.a(4, o0, key_k) * h1y_k - coef.b(4, o0, key_k) * ((e1x - e1x_k) * idz - (e_zx - e1z_k) * idx) : h1y_k;
      h2[2] = u[2] ? coef.a(5, o0, key_k) * h1z_k - coef.b(5, o0, key_k) * ((e_yx - e1y_k) * idx - (e_xy - e1x_k) * idy) : h1z_k;
      const float d[3][2] = {{e_zx - e1z_k, e_yx - e1y_k}, {e_xy - e1x_k, e_zy - e1z_k}, {e1y - e1y_k, e1x - e1x_k}};
      if constexpr (kShellPsiShared)
        hoisted_corrections<false, T>(ch, hit, phl, d, coef, o0, key_k, i, j, kc0, u, h2, store);
      else
        hoisted_corrections<false, T>(ch, hit, ph_k, d, coef, o0, key_k, i, j, kc0, u, h2, store);
    }
    const float h2x = rnd<T>(h2[0]), h2y = rnd<T>(h2[1]), h2z = rnd<T>(h2[2]);
    sm.h2[0][ty][tx] = h2x;
    sm.h2[1][ty][tx] = h2y;
    sm.h2[2][ty][tx] = h2z;
    __syncthreads();
    // E2 = E^{n+2} at k, the core only.
    if (store) {
      bool u[3];
      e_upd(kc0, u);
      SlabHits hit;
      shell_hits<AXIS>(ce, eb, t.se, ecol, t.se2, ecol2, i, j, kc0, hit);
      const float hz_jm = sm.h2[2][ym][tx], hx_jm = sm.h2[0][ym][tx];
      const float hz_im = sm.h2[2][ty][xm], hy_im = sm.h2[1][ty][xm];
      float e2[3] = {u[0] ? coef.a(0, o0, key_k) * e1x_k + coef.b(0, o0, key_k) * ((h2z - hz_jm) * idy - (h2y - h2y_m) * idz) : e1x_k,
                     u[1] ? coef.a(1, o0, key_k) * e1y_k + coef.b(1, o0, key_k) * ((h2x - h2x_m) * idz - (h2z - hz_im) * idx) : e1y_k,
                     u[2] ? coef.a(2, o0, key_k) * e1z_k + coef.b(2, o0, key_k) * ((h2y - hy_im) * idx - (h2x - hx_jm) * idy) : e1z_k};
      const float d[3][2] = {{h2y - hy_im, h2z - hz_im}, {h2z - hz_jm, h2x - hx_jm}, {h2x - h2x_m, h2y - h2y_m}};
      if constexpr (kShellPsiShared)
        hoisted_corrections<true, T>(ce, hit, pel, d, coef, o0, key_k, i, j, kc0, u, e2);
      else
        hoisted_corrections<true, T>(ce, hit, pe_k, d, coef, o0, key_k, i, j, kc0, u, e2);
      st(B.f[0] + o0, e2[0]);
      st(B.f[1] + o0, e2[1]);
      st(B.f[2] + o0, e2[2]);
      st(B.f[3] + o0, h2x);
      st(B.f[4] + o0, h2y);
      st(B.f[5] + o0, h2z);
    }
    // Carried along z: H2 at k, H1, E1 and their psi at kk, E^n at kk+1, the key of kk.
    h2x_m = h2x, h2y_m = h2y;
    h1x_k = h1x, h1y_k = h1y, h1z_k = h1z;
    e1x_k = e1x, e1y_k = e1y, e1z_k = e1z;
    if constexpr (!kShellPsiShared) {
#pragma unroll
      for (int a = 0; a < 3; ++a)
#pragma unroll
        for (int q = 0; q < 2; ++q) ph_k[a][q] = ph[a][q], pe_k[a][q] = pe[a][q];
    }
    ex1 = ex2, ey1 = ey2, ez1 = ez2, key_k = key;
    kc1 = plane(k + 2);
    o1 = o2;
  }
}

// TX x TY threads: 32 x 16 (cores of 29 x 13) for the boxes of the y and z faces, 16 x 32 (13 x 29)
// for those of the x faces.
// Every shell tile in one launch of 512 threads a block (32 x kShellTileY or 16 x 2 kShellTileY,
// the thread's column from its flat index): the blocks take the lists in ShellOrder's order, the
// general tiles (the slowest) first, so every class's tiles share the machine. (One launch per
// class measured slower at 256^3, where each class has less than a wave of blocks:
// results/fdtd.md, session 23.) 2 resident blocks asked of the compiler: 64 registers, with
// spills (stack frames by cuobjdump, session 26): this merged kernel 72-88 bytes a thread and the
// most spill code (it holds every class); the class kernels general 96-112, two axes 56-72, one
// axis 0-48, by storage and coefficients. 1 block (up to 128 registers, no spills) lost 12-26 %
// from 128^3 to 256^3 (results/fdtd.md, session 26). The tiles of two axes (shell_edges) come
// after the general ones. The packed pair (fdtd_engine_cuda.cu, setup_two_step; from 2 M cells
// below 4 M) puts the interior tiles after all of them (ShellOrder::interior): the short tiles
// last, to fill the machine while the shell's blocks drain (results/fdtd.md, session 34).
struct ShellOrder {
  static constexpr int kLists = 8;
  const TwoStepTile* tiles[kLists];
  // cumulative block counts: general 32 x 16, general 16 x 32, x and y 32 x 16, x and z, y and z,
  // x 16 x 32, y and z 32 x 16
  int end[kLists];
  // the interior tiles after them (ShellLists::interior; two_step_shell's INTERIOR)
  const TwoStepTile* interior;
  int interior_count;
};
// ShellOrder's lists as [shape][class] of ShellLists, in that order.
constexpr int kShellOrder[ShellOrder::kLists][2] = {{0, 0}, {1, 0}, {0, 4}, {0, 5}, {0, 6}, {1, 1}, {0, 2}, {0, 3}};
constexpr int kShellThreads = 32 * kShellTileY;
static_assert(sizeof(TwoStepShared<kShellTileY, 32>) == sizeof(TwoStepShared<2 * kShellTileY, 16>),
              "the two shell shapes share the block's shared memory");
// The shell kernels' psi slots (VEM_SHELL_PSI_SHARED): 24 KB of static shared memory beside the
// 24 KB of TwoStepShared, so a shared-memory table (SharedTab) needs the opt-in (allow_table_bytes).
#if VEM_SHELL_PSI_SHARED
#define VEM_SHELL_PSI_BUFFER                                  \
  __shared__ float psi_buffer[kShellPsiSlots * kShellThreads]; \
  float* const psi_sm = psi_buffer;
#else
#define VEM_SHELL_PSI_BUFFER float* const psi_sm = nullptr;
#endif
// One class per launch (ShellLists::one_launch false): its own kernel, TX x TY threads.
template <int TX, int TY, int AXIS, class Off, class Coef, class T>
__global__ void __launch_bounds__(TX * TY, 2)
    two_step_shell_class(Fields<T> A, Fields<T> B, Grid g, Coef coef, const TwoStepTile* __restrict__ tiles,
                         CpmlSet ch, CpmlSet ce) {
  bind_table(coef);
  const BlockTrace trace{};
  __shared__ TwoStepShared<TY, TX> sm;
  VEM_SHELL_PSI_BUFFER
  two_step_shell_tile<TX, TY, AXIS, Off>(A, B, g, coef, ch, ce, tiles[blockIdx.x], sm,
                                         int(threadIdx.x + TX * threadIdx.y), psi_sm);
  trace.done(BlockTrace::kShell, unsigned(AXIS + 1));
}
// EDGES: the kernel also holds the classes of two axes (their lists non-empty); without them it
// holds only the code of the classes the default plan uses. INTERIOR: the interior tiles after the
// shell's (o.interior), two_step_tile's code in 32 x kShellTileY threads.
template <bool EDGES, bool INTERIOR, class Off, class Coef, class T>
__global__ void __launch_bounds__(kShellThreads, 2)
    two_step_shell(Fields<T> A, Fields<T> B, Grid g, Coef coef, ShellOrder o, CpmlSet ch, CpmlSet ce) {
  bind_table(coef);
  const BlockTrace trace{};
  __shared__ TwoStepShared<kShellTileY, 32> sm;
  auto& sm_narrow = *reinterpret_cast<TwoStepShared<2 * kShellTileY, 16>*>(&sm);
  VEM_SHELL_PSI_BUFFER
  const int b = int(blockIdx.x), tid = int(threadIdx.x);
  if constexpr (INTERIOR) {
    if (b >= o.end[ShellOrder::kLists - 1]) {
      two_step_tile<kShellTileY>(A, B, g, coef, o.interior[b - o.end[ShellOrder::kLists - 1]], sm, tid % 32, tid / 32);
      trace.done(BlockTrace::kInterior, 2);
      return;
    }
  }
  if (b < o.end[0]) {
    two_step_shell_tile<32, kShellTileY, -1, Off>(A, B, g, coef, ch, ce, o.tiles[0][b], sm, tid, psi_sm);
    trace.done(BlockTrace::kShell, 0);
    return;
  }
  if (b < o.end[1]) {
    two_step_shell_tile<16, 2 * kShellTileY, -1, Off>(A, B, g, coef, ch, ce, o.tiles[1][b - o.end[0]], sm_narrow, tid, psi_sm);
    trace.done(BlockTrace::kShell, 1);
    return;
  }
  if constexpr (EDGES) {
    if (b < o.end[2]) {
      two_step_shell_tile<32, kShellTileY, 3, Off>(A, B, g, coef, ch, ce, o.tiles[2][b - o.end[1]], sm, tid, psi_sm);
      trace.done(BlockTrace::kShell, 2);
      return;
    }
    if (b < o.end[3]) {
      two_step_shell_tile<32, kShellTileY, 4, Off>(A, B, g, coef, ch, ce, o.tiles[3][b - o.end[2]], sm, tid, psi_sm);
      trace.done(BlockTrace::kShell, 3);
      return;
    }
    if (b < o.end[4]) {
      two_step_shell_tile<32, kShellTileY, 5, Off>(A, B, g, coef, ch, ce, o.tiles[4][b - o.end[3]], sm, tid, psi_sm);
      trace.done(BlockTrace::kShell, 4);
      return;
    }
  }
  if (b < o.end[5])
    two_step_shell_tile<16, 2 * kShellTileY, 0, Off>(A, B, g, coef, ch, ce, o.tiles[5][b - o.end[4]], sm_narrow, tid, psi_sm);
  else if (b < o.end[6])
    two_step_shell_tile<32, kShellTileY, 1, Off>(A, B, g, coef, ch, ce, o.tiles[6][b - o.end[5]], sm, tid, psi_sm);
  else
    two_step_shell_tile<32, kShellTileY, 2, Off>(A, B, g, coef, ch, ce, o.tiles[7][b - o.end[6]], sm, tid, psi_sm);
  trace.done(BlockTrace::kShell, b < o.end[5] ? 5u : (b < o.end[6] ? 6u : 7u));
}

// Sample indices of a grid-stride loop without a division per sample: the first sample and the
// stride are split into (i, j, k) once, and each advance adds the stride's parts with carries.
struct SampleWalk {
  int nx1, ny1, si, sj, sk;
  __device__ __forceinline__ SampleWalk(const Grid& g, long long stride) : nx1(g.nx + 1), ny1(g.ny + 1) {
    split(stride, si, sj, sk);
  }
  __device__ __forceinline__ void split(long long u, int& i, int& j, int& k) const {
    i = int(u % nx1);
    const long long r = u / nx1;
    j = int(r % ny1);
    k = int(r / ny1);
  }
  __device__ __forceinline__ void advance(int& i, int& j, int& k) const {
    i += si;
    int c = i >= nx1;
    i -= c * nx1;
    j += sj + c;
    c = j >= ny1;
    j -= c * ny1;
    k += sk + c;
  }
};

// The threads of one block copy the E (electric) or H probes of step `step` into pr.out.
template <class T>
__device__ __forceinline__ void record_probes(const ProbeSet& pr, int step, bool electric) {
  const int nt = int(blockDim.x);
  for (int q = int(threadIdx.x); q < pr.count; q += nt) {
    const int c = pr.field[q];
    if ((c < 3) != electric) continue;
    pr.out[(long long)step * pr.count + q] = cuda_kernels::ldcg(reinterpret_cast<const T*>(pr.fields[c]) + pr.offset[q]);
  }
}

// Hoisted samples (persistent_steps with HOIST): the same expressions in the same order as
// h_sample / e_sample with their slabs, but every load of a sample, each CPML slab's psi pair
// included, is issued before its arithmetic and its stores, and the H slabs take their
// differences from the bulk update's operands instead of loading them again. The chained path
// waits for one load round trip per slab after the bulk update (a corner sample lies in three);
// this one waits for one in all. It needs at most one slab of each axis to hold any sample:
// the operator leaves at least one non-PML cell along every axis, so the low slab's E and H nodes
// end before the high slab's begin (FdtdOperator's CPML slabs); persistent_launch checks it
// (hoistable). The slabs and psi of a sample: slab_hits, load_psi (above, with the tile pass's).

// PROF: the slabs' profile values loaded with the psi (load_profiles) instead of after the bulk
// update (the planned samples; VEM_PERSISTENT_PROFILES).
// TESTS: the sample's range tests and slabs come from `tests` (plan_persistent's tests word:
// kTestsHSlabs ... kTestsERange, fused_step.h) instead of being worked out here.
// The slabs of `cs` given by a tests word's slab fields (bit `first` on: the slab of axis a, plus
// one, in bits first + 3a .. first + 3a + 2; 0: none), with their psi indices as slab_hits has them.
__device__ __forceinline__ SlabHits hits_from_tests(const CpmlSet& cs, unsigned tests, int first, int i, int j, int k) {
  SlabHits h;
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    const int p = int((tests >> (first + 3 * a)) & 7u) - 1;
    h.p[a] = p;
    if (p < 0) continue;
    const Slab& s = cs.s[p];
    h.t[a] = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
  }
  return h;
}

template <bool PROF = false, bool TESTS = false, class Coef, class T, class Off>
__device__ __forceinline__ void h_hoisted(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ch,
                                          int i, int j, int k, Off o, unsigned tests = 0) {
  using LD = CoherentLoad;
  // h_sample's range tests (0 <= k <= nz holds for every sample of the walk).
  const bool more = k < g.nz;
  const bool ux = TESTS ? (tests & (1u << kTestsHRange)) != 0
                        : more && in(i, g.lo[3][0], g.hi[3][0]) && in(j, g.lo[3][1], g.hi[3][1]);
  const bool uy = TESTS ? (tests & (2u << kTestsHRange)) != 0
                        : more && in(i, g.lo[4][0], g.hi[4][0]) && in(j, g.lo[4][1], g.hi[4][1]);
  const bool uz = TESTS ? (tests & (4u << kTestsHRange)) != 0
                        : in(i, g.lo[5][0], g.hi[5][0]) && in(j, g.lo[5][1], g.hi[5][1]);
  const SlabHits hit = TESTS ? hits_from_tests(ch, tests, kTestsHSlabs, i, j, k) : slab_hits(ch, i, j, k);
  float psi[3][2];
  load_psi<LD>(ch, hit, psi);
  float prof[3][3];
  if (PROF) load_profiles(ch, hit, i, j, k, prof);
  float ex, ey, ez, h[3];
  h_update_hoisted<kHx | kHy | kHz, LD>(F, g, coef, ch, ux, uy, uz, i, j, k, o, hit, psi, true, ex, ey, ez, h,
                                        PROF ? prof : nullptr);
  st(F.f[3] + o, h[0]);
  st(F.f[4] + o, h[1]);
  st(F.f[5] + o, h[2]);
}

// The field loads of an E sample (its own E and H, the H one sample below along each axis) and
// e_update_hoisted (e_hoisted, e_plain).
template <class Coef, class T, class Off>
__device__ __forceinline__ void e_load_update(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ce,
                                              bool ux, bool uy, bool uz, int i, int j, int k, Off o, const SlabHits& hit,
                                              const float (&psi)[3][2], const float (*prof)[3]) {
  using LD = CoherentLoad;
  const T* __restrict__ Hx = F.f[3];
  const T* __restrict__ Hy = F.f[4];
  const T* __restrict__ Hz = F.f[5];
  const float ex = LD::field(F.f[0] + o), ey = LD::field(F.f[1] + o), ez = LD::field(F.f[2] + o);
  const float hx = LD::field(Hx + o), hy = LD::field(Hy + o), hz = LD::field(Hz + o);
  const Off msz = -Off(g.sz), msy = -Off(g.sy), m1 = -1;
  const float hx_m = LD::field(at(Hx, o, msz)), hy_m = LD::field(at(Hy, o, msz));
  const float hz_jm = LD::field(at(Hz, o, msy)), hx_jm = LD::field(at(Hx, o, msy));
  const float hz_im = LD::field(at(Hz, o, m1)), hy_im = LD::field(at(Hy, o, m1));
  e_update_hoisted<T>(F, g, coef, ce, ux, uy, uz, i, j, k, o, ex, ey, ez, hx, hy, hz, hx_m, hy_m, hz_jm, hx_jm, hz_im,
                      hy_im, hit, psi, prof);
}

template <bool PROF = false, bool TESTS = false, class Coef, class T, class Off>
__device__ __forceinline__ void e_hoisted(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ce,
                                          int i, int j, int k, Off o, unsigned tests = 0) {
  using LD = CoherentLoad;
  const bool ux = TESTS ? (tests & (1u << kTestsERange)) != 0
                        : in(i, g.lo[0][0], g.hi[0][0]) && in(j, g.lo[0][1], g.hi[0][1]) && in(k, g.lo[0][2], g.hi[0][2]);
  const bool uy = TESTS ? (tests & (2u << kTestsERange)) != 0
                        : in(i, g.lo[1][0], g.hi[1][0]) && in(j, g.lo[1][1], g.hi[1][1]) && in(k, g.lo[1][2], g.hi[1][2]);
  const bool uz = TESTS ? (tests & (4u << kTestsERange)) != 0
                        : in(i, g.lo[2][0], g.hi[2][0]) && in(j, g.lo[2][1], g.hi[2][1]) && in(k, g.lo[2][2], g.hi[2][2]);
  const SlabHits hit = TESTS ? hits_from_tests(ce, tests, kTestsESlabs, i, j, k) : slab_hits(ce, i, j, k);
  float psi[3][2];
  load_psi<LD>(ce, hit, psi);
  float prof[3][3];
  if (PROF) load_profiles(ce, hit, i, j, k, prof);
  e_load_update(F, g, coef, ce, ux, uy, uz, i, j, k, o, hit, psi, PROF ? prof : nullptr);
}

// Persistent stepping (launch_persistent): `steps` leap-frog steps in one cooperative launch, in
// place (no second set of arrays). Each step is two phases over all samples, one sample per thread
// and grid-stride: H^{n+1/2} with its CPML corrections (h_sample with the H slabs' psi read and
// written in place: a sample's psi is touched by its own thread only), a grid barrier, E^{n+1}
// from the H just written (e_sample with its slabs, as recompute_e reads H) and the E point
// sources, a grid barrier. The two-pass kernels' expressions in their order (H bulk, H slabs;
// E bulk, E slabs, point sources): the same floats. After the first barrier block 0 records the
// H probes (nothing writes H in the E phase), after the second the E probes (nothing writes E in
// the next H phase). HOIST: h_hoisted / e_hoisted instead (above); MINB: the resident blocks
// asked of the compiler.
// PLANNED 1-3 (hoisted samples only): the samples of each thread come from `plan` (plan_persistent,
// [round][thread], packed coordinates) instead of the grid-stride walk; a plain sample (kPlanPlain:
// every component in its update range, in no CPML slab of either set) takes the same expressions
// with the range and slab tests known at compile time (h_plain / e_plain), and a warp's samples of
// a round are all plain or all not (the plan makes them so). The thread's sample of the first
// round is held for the whole launch, each later one loaded while the one before is computed.
// PLANNED 2: the other samples load their CPML slabs' profile values with their psi
// (h_hoisted / e_hoisted PROF; PlanView::profiles). PLANNED 3: also their range tests and slabs
// from the plan's tests words (h_hoisted / e_hoisted TESTS; PlanView::tests).
template <class Coef, class T, class Off>
__device__ __forceinline__ void h_plain(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ch, int i,
                                        int j, int k, Off o) {
  using LD = CoherentLoad;
  const float psi[3][2] = {};
  float ex, ey, ez, h[3];
  h_update_hoisted<kHx | kHy | kHz, LD>(F, g, coef, ch, true, true, true, i, j, k, o, SlabHits{}, psi, true, ex, ey, ez, h);
  st(F.f[3] + o, h[0]);
  st(F.f[4] + o, h[1]);
  st(F.f[5] + o, h[2]);
}
template <class Coef, class T, class Off>
__device__ __forceinline__ void e_plain(const Fields<T>& F, const Grid& g, const Coef& coef, const CpmlSet& ce, int i,
                                        int j, int k, Off o) {
  const float psi[3][2] = {};
  e_load_update(F, g, coef, ce, true, true, true, i, j, k, o, SlabHits{}, psi, nullptr);
}

template <bool HOIST, int MINB, class Off, int PLANNED, class Coef, class T>
__global__ void __launch_bounds__(kPersistentThreads, MINB)
    persistent_steps(Fields<T> F, Grid g, Coef coef, CpmlSet ch, CpmlSet ce, SourceSet src, ProbeSet probes,
                     int steps, const unsigned* __restrict__ plan, const unsigned* __restrict__ tests_words,
                     int rounds) {
  constexpr bool PLAN = PLANNED > 0, PROF = PLANNED > 1, TESTS = PLANNED > 2;
  static_assert(!PLAN || HOIST, "the plan is walked with hoisted samples only");
  bind_table(coef);
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const Off samples = Off(g.nx + 1) * Off(g.ny + 1) * Off(g.nz + 1);
  const Off stride = Off(gridDim.x) * Off(blockDim.x);
  const Off first = Off(blockIdx.x) * Off(blockDim.x) + Off(threadIdx.x);
  using LD = CoherentLoad;
  const SampleWalk walk(g, stride);
  int i0 = 0, j0 = 0, k0 = 0;
  if (!PLAN) walk.split(first, i0, j0, k0);
  // The plan: the thread's sample of round r; that of round 0 held for the whole launch, each
  // later one loaded while the one before is computed.
  auto plan_at = [&](int r) { return __ldg(plan + (long long)r * (long long)stride + (long long)first); };
  // PLANNED 3: the tests word of the sample of round r (plan_persistent).
  auto tests_at = [&](int r) { return __ldg(tests_words + (long long)r * (long long)stride + (long long)first); };
  const unsigned c0 = PLAN && rounds > 0 ? plan_at(0) : kPlanNone;
  // The E point sources of sample o at step s.
  auto sources = [&](int s, Off o) {
    for (int q = 0; q < src.count; ++q) {
      if (src.offset[q] != o) continue;
      T* f = (src.field[q] == 0 ? F.f[0] : (src.field[q] == 1 ? F.f[1] : F.f[2])) + o;
      const float v = __ldg(src.value + (long long)s * src.count + q);
      st(f, src.set[q] ? v : ld(f) + v);
    }
  };
  // The thread's planned samples of a phase: fn(plain, i, j, k, o, round) for each.
  auto over_plan = [&](auto&& fn) {
    unsigned c = c0;
    for (int r = 0; r < rounds; ++r) {
      const unsigned next = r + 1 < rounds ? plan_at(r + 1) : kPlanNone;
      if (c != kPlanNone) {
        const int i = int(c & kPlanMask), j = int((c >> kPlanBits) & kPlanMask), k = int((c >> (2 * kPlanBits)) & kPlanMask);
        fn((c & kPlanPlain) != 0, i, j, k, Off(g.origin) + Off(i) + Off(j) * Off(g.sy) + Off(k) * Off(g.sz), r);
      }
      c = next;
    }
  };
  for (int s = 0; s < steps; ++s) {
    if constexpr (PLAN) {
      over_plan([&](bool plain, int i, int j, int k, Off o, int r) {
        if (plain)
          h_plain(F, g, coef, ch, i, j, k, o);
        else
          h_hoisted<PROF, TESTS>(F, g, coef, ch, i, j, k, o, TESTS ? tests_at(r) : 0u);
      });
    } else {
      int i = i0, j = j0, k = k0;
      for (Off u = first; u < samples; u += stride, walk.advance(i, j, k)) {
        const Off o = Off(g.origin) + Off(i) + Off(j) * Off(g.sy) + Off(k) * Off(g.sz);
        if (HOIST) {
          h_hoisted(F, g, coef, ch, i, j, k, o);
          continue;
        }
        float hx, hy, hz, ex, ey, ez;
        h_sample<kHx | kHy | kHz, LD, false, false>(F, g, coef, ch, 0u, true, i, j, k, o, hx, hy, hz, ex, ey, ez);
        st(F.f[3] + o, hx);
        st(F.f[4] + o, hy);
        st(F.f[5] + o, hz);
      }
    }
    grid.sync();
    if (blockIdx.x == 0) record_probes<T>(probes, s, false);
    if constexpr (PLAN) {
      over_plan([&](bool plain, int i, int j, int k, Off o, int r) {
        if (plain)
          e_plain(F, g, coef, ce, i, j, k, o);
        else
          e_hoisted<PROF, TESTS>(F, g, coef, ce, i, j, k, o, TESTS ? tests_at(r) : 0u);
        sources(s, o);
      });
    } else {
      int i = i0, j = j0, k = k0;
      for (Off u = first; u < samples; u += stride, walk.advance(i, j, k)) {
        const Off o = Off(g.origin) + Off(i) + Off(j) * Off(g.sy) + Off(k) * Off(g.sz);
        if (HOIST) {
          e_hoisted(F, g, coef, ce, i, j, k, o);
        } else {
          const T* Hx = F.f[3];
          const T* Hy = F.f[4];
          const T* Hz = F.f[5];
          e_sample<false, false>(F, g, coef, ce, 0u, i, j, k, o, LD::field(F.f[0] + o), LD::field(F.f[1] + o),
                                 LD::field(F.f[2] + o), LD::field(Hx + o), LD::field(Hy + o), LD::field(Hz + o),
                                 LD::field(Hx + o - g.sz), LD::field(Hy + o - g.sz), LD::field(Hz + o - g.sy),
                                 LD::field(Hx + o - g.sy), LD::field(Hz + o - 1), LD::field(Hy + o - 1));
        }
        sources(s, o);
      }
    }
    grid.sync();
    if (blockIdx.x == 0) record_probes<T>(probes, s, true);
  }
}

// E again in boxes: one thread per sample, the boxes one after the other along the flat index.
constexpr int kMaxBoxes = 24;
struct BoxSet {
  Box b[kMaxBoxes];
  long long begin[kMaxBoxes + 1];
  int count;
};

template <class Coef, class T>
__global__ void recompute_e(Fields<T> A, Fields<T> B, Grid g, Coef coef, BoxSet set) {
  pdl_begin();
  const long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (u >= set.begin[set.count]) return;
  int q = 0;
  while (u >= set.begin[q + 1]) ++q;
  const Box& bx = set.b[q];
  const long long t = u - set.begin[q];
  const int i = bx.o[0] + int(t % bx.d[0]);
  const long long rr = t / bx.d[0];
  const int j = bx.o[1] + int(rr % bx.d[1]);
  const int k = bx.o[2] + int(rr / bx.d[1]);
  const long long o = g.origin + (long long)i + (long long)j * g.sy + (long long)k * g.sz;
  const T* __restrict__ Hx = B.f[3];
  const T* __restrict__ Hy = B.f[4];
  const T* __restrict__ Hz = B.f[5];
  const float hx = ld(Hx + o), hy = ld(Hy + o), hz = ld(Hz + o);
  const float ex = ldg(A.f[0] + o), ey = ldg(A.f[1] + o), ez = ldg(A.f[2] + o);
  // e_sample writes all three components; a component outside its range gets its E^n, which is
  // what the bulk pass wrote there.
  e_sample<false, false>(B, g, coef, CpmlSet{}, 0u, i, j, k, o, ex, ey, ez, hx, hy, hz, ld(Hx + o - g.sz), ld(Hy + o - g.sz),
           ld(Hz + o - g.sy), ld(Hx + o - g.sy), ld(Hz + o - 1), ld(Hy + o - 1));
}

template <class... KArgs, class... Args>
void launch(bool pdl, cudaStream_t stream, void (*kernel)(KArgs...), dim3 grid, dim3 block, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.stream = stream;
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  VEM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

// The engine's arrays (float pointers to the storage's elements) as storage type T.
template <class T>
Fields<T> fields(float* const f[6]) {
  Fields<T> F;
  for (int c = 0; c < 6; ++c) F.f[c] = reinterpret_cast<T*>(f[c]);
  return F;
}

// SHARED: the launch's kernel binds SharedTab (bind_table), which it gets where c asks for the
// table in shared memory; the other launches keep ConstTab (and instantiate no SharedTab kernel).
template <bool SHARED = false, class Fn>
void with_coef(const Coefs& c, Fn&& fn) {
  if constexpr (SHARED) {
    if (c.kind == CoefKind::constant_table && c.shared_table) {
      fn(SharedTab{c.index, c.table, c.table_entries * 12});
      return;
    }
  }
  switch (c.kind) {
    case CoefKind::constant_table: fn(ConstTab{c.index}); break;
    case CoefKind::global_table: fn(GlobalTable{c.index, c.table}); break;
    default: {
      CoefficientArrays a;
      for (int q = 0; q < 12; ++q) a.arr[q] = c.arr[q];
      fn(a);
    }
  }
}

// Calls fn(A, B, coef): cur and next as arrays of the storage's element type, the coefficients
// through c's access policy (every launch of this file instantiates its kernel for each).
template <bool SHARED = false, class Fn>
void with_fields_and_coef(FieldStorage storage, const Coefs& c, float* const cur[6], float* const next[6], Fn&& fn) {
  cuda_kernels::with_storage(storage, [&](auto t) {
    using T = decltype(t);
    const Fields<T> A = fields<T>(cur), B = fields<T>(next);
    with_coef<SHARED>(c, [&](const auto& coef) { fn(A, B, coef); });
  });
}

template <int TY, class Coef, class T>
void bulk_ty(const Grid& g, const Coef& coef, Fields<T> A, Fields<T> B, int chunk, const CpmlSet& ch, const CpmlSet& ce,
             bool pdl, bool hoist, cudaStream_t stream) {
  const dim3 grid(unsigned((g.nx + 1 + 31) / 32), unsigned((g.ny + 1 + TY - 1) / TY),
                  unsigned((g.nz + 1 + chunk - 1) / chunk));
  // (the hoisted slabs built for the default tiles of 32 x 8 only)
  auto kernel = TY == 8 && hoist ? onepass_bulk<TY, TY == 8, Coef, T> : onepass_bulk<TY, false, Coef, T>;
  launch(pdl, stream, kernel, grid, dim3(32, TY + 1), A, B, g, coef, chunk, ch, ce);
  VEM_CUDA_CHECK_LAUNCH("onepass_bulk");
}

// Layout offsets in 32 bits (the shell tiles' and the persistent kernel's hoisted samples' Off)
// where every offset they form fits: field arrays of fewer than 2^31 layout samples (up to about
// 1250^3 cells); else, or when the shell's `wide` is asked, 64 bits. The same samples and floats.
// Measured on an H200 (results/fdtd.md, session 29):
//  - the merged shell kernel's spill code halves (ptxas: 232 / 200 bytes of spill stores / loads
//    against 480 / 416, float32 with the table in shared memory) and its 128^3 launch takes 112 us
//    instead of 123: 128^3 26,085-26,238 Mcells/s against 25,045-25,082, 512^3 60,050 against
//    58,508;
//  - the persistent kernel (no spills either way) issues 5.5 % fewer instructions: 64^3
//    15,050-15,149 against 14,774-14,839, 96^3 21,968-22,015 against 21,325-21,466;
//  - the interior tiles (two_step_tile) keep 64 bits: with 32 their 128^3 launch took 53 us
//    instead of 46 (with 7 % fewer instructions), and the pairs lost 3 % against the shell's 32
//    bits alone.
bool offsets_fit_int(const Grid& g) {
  const long long last = g.origin + (long long)(g.nx + 2) + (long long)(g.ny + 2) * g.sy + (long long)(g.nz + 3) * g.sz;
  return last < (long long)INT_MAX;
}

// The hoisted samples with 32-bit offsets where the arrays allow (offsets_fit_int, measured
// there; the walk's sample counter passes the sample count by at most one stride, far less than
// 2^24 threads); the chained ones keep 64 bits. The plan: 32-bit offsets only (plan_persistent).
bool persistent_narrow(const Grid& g, bool wide_offsets) {
  const long long samples = (long long)(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  return !wide_offsets && offsets_fit_int(g) && samples + (1LL << 24) < (long long)INT_MAX;
}

// The persistent kernel a launch takes: hoisted or chained samples, 32- or 64-bit offsets, the
// plan or the walk (persistent_launch below).
template <class Coef, class T>
using PersistentKernel = void (*)(Fields<T>, Grid, Coef, CpmlSet, CpmlSet, SourceSet, ProbeSet, int, const unsigned*,
                                  const unsigned*, int);
template <class Coef, class T>
PersistentKernel<Coef, T> persistent_kernel(const Grid& g, bool hoisted, bool wide_offsets, bool plan,
                                            bool profiles = true, bool tests = true) {
  const long long samples = (long long)(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  const bool narrow = persistent_narrow(g, wide_offsets);
  if (hoisted && plan && narrow)
    return tests ? persistent_steps<true, 4, int, 3, Coef, T>
                 : (profiles ? persistent_steps<true, 4, int, 2, Coef, T> : persistent_steps<true, 4, int, 1, Coef, T>);
  if (plan) fail("persistent stepping: the sample plan needs the hoisted samples with 32-bit offsets");
  if (hoisted) return narrow ? persistent_steps<true, 4, int, 0, Coef, T> : persistent_steps<true, 4, long long, 0, Coef, T>;
  return samples < kPersistentFiveBlocksFrom ? persistent_steps<false, 4, long long, 0, Coef, T>
                                             : persistent_steps<false, 5, long long, 0, Coef, T>;
}

// The blocks of a persistent launch: as many as are resident on the device, at most one per 256
// samples.
template <class Coef, class T>
long long persistent_blocks(PersistentKernel<Coef, T> kernel, const Grid& g, const Coef& coef, int device) {
  const long long samples = (long long)(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  int per_sm = 0, sms = 0, coop = 0;
  VEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kPersistentThreads, table_bytes(coef)));
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  if (!coop) fail("persistent stepping: device ", device, " cannot launch cooperative kernels");
  if (per_sm < 1) fail("persistent stepping: no block of ", kPersistentThreads, " threads fits on a multiprocessor");
  return std::min<long long>((long long)per_sm * sms, (samples + kPersistentThreads - 1) / kPersistentThreads);
}

template <class Coef, class T>
void persistent_launch(const Grid& g, const Coef& coef, Fields<T> F, const CpmlSet& ch, const CpmlSet& ce,
                       const SourceSet& src, const ProbeSet& probes, int steps, bool hoisted, bool wide_offsets,
                       const PlanView& plan, int device, cudaStream_t stream) {
  // The chained samples' resident blocks, measured (fdtd_small_grids_h100.md, one H100, same run,
  // Mcells/s at 4 / 5 blocks): 64^3 11,250 / 10,349, 96^3 13,561 / 13,109, 128^3 14,326 / 15,241,
  // 160 x 160 x 93 15,422 / 15,316, 192^3 18,051 / 18,268. 4 blocks: 62 registers; 5: 48 (a few
  // spilled bytes); 6 (40) lost at every size but the head's.
  // The hoisted samples (EngineTuning::PersistentSamples; the engine picks them below 4 M samples),
  // 4 blocks of 256 threads at every size. Against the chained samples at 4 blocks in one call
  // (fdtd_small_grids_h100.md, session 16), Mcells/s: 64^3 11,440 -> 13,664, 96^3 13,463 -> 16,826,
  // 128^3 14,223 -> 15,647, 160 x 160 x 93 15,355 -> 16,409, 192^3 18,037 -> 18,015. Hoisted at
  // 5 blocks spills (48 registers) and lost at every size; 2 x 512 and 1 x 1024 threads were within
  // 3 % either way (1 x 1024: +3.4 % at 96^3, -6 % at 64^3); 4 x 288 (two rounds at 64^3 instead
  // of three, 56 registers, spills) +0.9 % at 64^3 and lost elsewhere.
  if (hoisted && !(hoistable(ch) && hoistable(ce)))
    fail("persistent stepping: two CPML slabs of one axis overlap, which the hoisted samples cannot take "
         "(the operator should have refused a CPML as thick as the domain)");
  const bool planned = plan.samples != nullptr;
  const bool tests = plan.tests != nullptr;
  if (planned && tests && !plan.profiles) fail("persistent stepping: a plan with tests words loads the profiles early");
  auto kernel = persistent_kernel<Coef, T>(g, hoisted, wide_offsets, planned, plan.profiles, tests);
  const long long blocks = persistent_blocks(kernel, g, coef, device);
  if (planned && blocks * kPersistentThreads != plan.threads)
    fail("persistent stepping: the sample plan is for ", plan.threads, " threads, the launch has ",
         blocks * kPersistentThreads);
  cudaLaunchConfig_t cfg = {};
  cfg.stream = stream;
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(kPersistentThreads);
  cfg.dynamicSmemBytes = table_bytes(coef);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  VEM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, F, g, coef, ch, ce, src, probes, steps, plan.samples, plan.tests, plan.rounds));
  VEM_CUDA_CHECK_LAUNCH("persistent_steps");
}

// The launches of temporal blocking (fused_step.h).
template <class Coef, class T>
void pass_blocks(const Grid& g, const Coef& coef, Fields<T> A, Fields<T> B, const PassBlock* blocks, int count,
                 const CpmlSet& ch, const CpmlSet& ce, bool hoist, cudaStream_t stream) {
  auto kernel = hoist ? onepass_blocks<true, Coef, T> : onepass_blocks<false, Coef, T>;
  kernel<<<unsigned(count), dim3(32, kPassTileY + 1), table_bytes(coef), stream>>>(A, B, g, coef, blocks, ch, ce);
}

// A kernel with 48 KB of static shared memory (`full`: the 32 x 32 interior; the shell kernels
// with their psi slots, VEM_SHELL_PSI_SHARED, the default) needs the opt-in for the table's
// dynamic bytes beside it (32 x 16 and the shell kernels without the slots have 24 KB and need
// none).
template <class Kernel, class Coef>
void allow_table_bytes(Kernel kernel, const Coef& coef, bool full) {
  if (full && table_bytes(coef) > 0)
    VEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(table_bytes(coef))));
}

template <class Fn>
void with_offsets(const Grid& g, bool wide, Fn&& fn) {
  if (!wide && offsets_fit_int(g))
    fn(int{});
  else
    fn((long long){});
}

template <int TY, class Coef, class T>
void two_step_ty(const Grid& g, const Coef& coef, Fields<T> A, Fields<T> B, const TwoStepTile* tiles, int count,
                 int grid_blocks, cudaStream_t stream) {
  constexpr int kMinBlocks = TY == 32 ? 1 : 3;
  const std::size_t smem = table_bytes(coef);
  if (grid_blocks > 0 && grid_blocks < count) {
    auto kernel = two_step_interior_strided<TY, kMinBlocks, Coef, T>;
    allow_table_bytes(kernel, coef, TY == 32);
    kernel<<<unsigned(grid_blocks), dim3(32, TY), smem, stream>>>(A, B, g, coef, tiles, count);
    VEM_CUDA_CHECK_LAUNCH("two_step_interior_strided");
    return;
  }
  auto kernel = two_step_interior<TY, kMinBlocks, Coef, T>;
  allow_table_bytes(kernel, coef, TY == 32);
  kernel<<<unsigned(count), dim3(32, TY), smem, stream>>>(A, B, g, coef, tiles);
  VEM_CUDA_CHECK_LAUNCH("two_step_interior");
}


// (Compiled for 1 resident block, 118 registers and no spill, the general code measured 1-2 %
// slower at 256^3 and 512^3 than at 2: results/fdtd.md, session 23.)
template <int TX, int TY, int AXIS, class Coef, class T>
void two_step_shell_class_launch(const Grid& g, const Coef& coef, Fields<T> A, Fields<T> B, const TwoStepTile* tiles,
                                 int count, const CpmlSet& ch, const CpmlSet& ce, cudaStream_t stream) {
  if (count <= 0) return;
  // (a measurement switch: 64-bit offsets only, so no second set of class kernels to compile)
  auto kernel = two_step_shell_class<TX, TY, AXIS, long long, Coef, T>;
  allow_table_bytes(kernel, coef, kShellPsiShared);
  kernel<<<unsigned(count), dim3(TX, TY), table_bytes(coef), stream>>>(A, B, g, coef, tiles, ch, ce);
  VEM_CUDA_CHECK_LAUNCH("two_step_shell_class");
}
template <class Coef, class T>
void two_step_shell_launch(const Grid& g, const Coef& coef, Fields<T> A, Fields<T> B, const ShellOrder& o,
                           const CpmlSet& ch, const CpmlSet& ce, bool wide_offsets, cudaStream_t stream) {
  const int blocks = o.end[ShellOrder::kLists - 1] + o.interior_count;
  if (blocks <= 0) return;
  with_offsets(g, wide_offsets, [&](auto off) {
    using Off = decltype(off);
    auto kernel = o.interior_count > 0  ? two_step_shell<true, true, Off, Coef, T>
                  : o.end[4] > o.end[1] ? two_step_shell<true, false, Off, Coef, T>
                                        : two_step_shell<false, false, Off, Coef, T>;
    allow_table_bytes(kernel, coef, kShellPsiShared);
    kernel<<<unsigned(blocks), kShellThreads, table_bytes(coef), stream>>>(A, B, g, coef, o, ch, ce);
  });
  VEM_CUDA_CHECK_LAUNCH("two_step_shell");
}

}  // namespace

// The slabs of one axis do not overlap along it (fused_step.h).
bool hoistable(const CpmlSet& cs) {
  for (int p = 0; p < cs.count; ++p)
    for (int q = p + 1; q < cs.count; ++q) {
      const Slab &s = cs.s[p], &t = cs.s[q];
      if (s.axis != t.axis) continue;
      const int a = s.axis;
      if (s.o[a] < t.o[a] + t.d[a] && t.o[a] < s.o[a] + s.d[a]) return false;
    }
  return true;
}

bool acquire_constant_table(ExclusiveClaim& claim, const void* owner, const float* host_table, std::size_t entries) {
  if (entries > std::size_t(kConstantTableCapacity) || !claim.take(g_owner, owner)) return false;
  VEM_CUDA_CHECK(cudaMemcpyToSymbol(c_onepass_table, host_table, entries * 12 * sizeof(float)));
  return true;
}

void launch_bulk(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6], float* const next[6],
                 int tile_y, int z_chunk, const CpmlSet& cpml_h, const CpmlSet& cpml_e, bool pdl,
                 cudaStream_t stream, bool hoist) {
  const int chunk = std::max(1, z_chunk);
  with_fields_and_coef(storage, c, cur, next, [&](const auto& A, const auto& B, const auto& coef) {
    switch (tile_y) {
      case 4: bulk_ty<4>(g, coef, A, B, chunk, cpml_h, cpml_e, pdl, false, stream); break;
      case 16: bulk_ty<16>(g, coef, A, B, chunk, cpml_h, cpml_e, pdl, false, stream); break;
      default: bulk_ty<8>(g, coef, A, B, chunk, cpml_h, cpml_e, pdl, hoist, stream); break;
    }
  });
}

void finish_cpml_set(CpmlSet& cs, const int n[3]) {
  for (int a = 0; a < 3; ++a) {
    cs.inner_lo[a] = 0;
    cs.inner_hi[a] = n[a] + 1;
  }
  for (int p = 0; p < cs.count; ++p) {
    const Slab& s = cs.s[p];
    const int a = s.axis;
    // A slab nearer the low face excludes everything below its end, one nearer the high face
    // everything from its start (E and H boxes start / end a sample or two inside the faces).
    if (s.o[a] < n[a] + 1 - (s.o[a] + s.d[a]))
      cs.inner_lo[a] = std::max(cs.inner_lo[a], s.o[a] + s.d[a]);
    else
      cs.inner_hi[a] = std::min(cs.inner_hi[a], s.o[a]);
  }
}

int automatic_z_chunk(const Grid& g, int tile_y, int multiprocessors) {
  const long long columns = (long long)((g.nx + 1 + 31) / 32) * ((g.ny + 1 + tile_y - 1) / tile_y);
  int chunk = 16;
  while (chunk > 4 && columns * ((g.nz + 1 + chunk - 1) / chunk) < 8LL * multiprocessors) chunk /= 2;
  return chunk;
}

void launch_recompute_e(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                        float* const next[6], const std::vector<Box>& boxes, bool pdl, cudaStream_t stream) {
  for (std::size_t first = 0; first < boxes.size(); first += kMaxBoxes) {
    BoxSet set{};
    for (std::size_t q = first; q < boxes.size() && set.count < kMaxBoxes; ++q) {
      const Box& b = boxes[q];
      if (b.d[0] <= 0 || b.d[1] <= 0 || b.d[2] <= 0) continue;
      set.b[set.count] = b;
      set.begin[set.count + 1] = set.begin[set.count] + (long long)b.d[0] * b.d[1] * b.d[2];
      ++set.count;
    }
    const long long total = set.begin[set.count];
    if (total == 0) continue;
    with_fields_and_coef(storage, c, cur, next, [&](const auto& A, const auto& B, const auto& coef) {
      using C = std::decay_t<decltype(coef)>;
      using T = std::remove_pointer_t<std::decay_t<decltype(A.f[0])>>;
      launch(pdl, stream, recompute_e<C, T>, dim3(unsigned((total + 127) / 128)), dim3(128), A, B, g, coef, set);
    });
    VEM_CUDA_CHECK_LAUNCH("onepass recompute_e");
  }
}

Grid grid_for(const FdtdOperator& op) {
  const FieldLayout& L = op.layout();
  const YeeGrid& gr = op.grid();
  Grid g{};
  g.nx = gr.nx; g.ny = gr.ny; g.nz = gr.nz;
  g.sy = L.sy; g.sz = L.sz; g.origin = L.origin;
  g.inv_d[0] = float(1.0 / gr.dx); g.inv_d[1] = float(1.0 / gr.dy); g.inv_d[2] = float(1.0 / gr.dz);
  for (int c = 0; c < 6; ++c)
    for (int a = 0; a < 3; ++a) {
      g.lo[c][a] = op.range_lo(Component(c), a);
      g.hi[c][a] = op.range_hi(Component(c), a);
    }
  return g;
}

std::vector<Box> recompute_boxes(const FdtdOperator& op, bool cpml_h_folded) {
  const YeeGrid& gr = op.grid();
  const int n[3] = {gr.nx, gr.ny, gr.nz};
  std::vector<Box> boxes;
  auto add = [&](const int o[3], const int d[3]) {
    Box b;
    for (int a = 0; a < 3; ++a) {
      b.o[a] = std::max(0, o[a]);
      b.d[a] = std::min(d[a], n[a] + 1 - b.o[a]);
    }
    if (b.d[0] > 0 && b.d[1] > 0 && b.d[2] > 0) boxes.push_back(b);
  };
  // H samples in a CPML slab's psi box are corrected; E at the same sample and one further along
  // each axis reads them.
  for (const CpmlSlab& s : op.cpml_slabs()) {
    if (cpml_h_folded) break;
    const PsiBox h(s, false, n);
    if (h.size() == 0) continue;
    const int d[3] = {h.d[0] + 1, h.d[1] + 1, h.d[2] + 1};
    add(h.o, d);
  }
  // PMC and periodic faces: the H ghosts (index -1 and n along the axis) are written after the
  // H update; E on node planes 0 and n reads them.
  const auto& bc = op.setup().boundaries;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const BoundaryType t = bc.face[2 * a + side];
      if (t != BoundaryType::pmc && t != BoundaryType::periodic) continue;
      int o[3] = {0, 0, 0}, d[3] = {n[0] + 1, n[1] + 1, n[2] + 1};
      o[a] = side ? n[a] : 0;
      d[a] = 1;
      add(o, d);
    }
  // H point sources (soft and hard): E at the sample and one further along each axis.
  const FieldLayout& L = op.layout();
  for (const auto& s : op.sources()) {
    if (s.electric) continue;
    for (int a = 0; a < 3; ++a) {
      if (!s.active[a]) continue;
      const std::array<int, 3> q = L.sample(s.offset[a]);
      const int o[3] = {q[0], q[1], q[2]}, d[3] = {2, 2, 2};
      add(o, d);
    }
  }
  return boxes;
}

void launch_persistent(const Grid& g, const Coefs& c, FieldStorage storage, float* const fields_now[6],
                       const CpmlSet& cpml_h,
                       const CpmlSet& cpml_e, const SourceSet& src, const ProbeSet& probes, int steps, bool hoisted,
                       bool wide_offsets, const PlanView& plan, int device, cudaStream_t stream) {
  if (src.count < 0 || src.count > kMaxPersistentSources)
    fail("persistent stepping: ", src.count, " E point-source components (at most ", kMaxPersistentSources, ")");
  if (steps <= 0) return;
  cuda_kernels::with_storage(storage, [&](auto t) {
    using T = decltype(t);
    const Fields<T> F = fields<T>(fields_now);
    with_coef<true>(c, [&](const auto& coef) {
      persistent_launch(g, coef, F, cpml_h, cpml_e, src, probes, steps, hoisted, wide_offsets, plan, device, stream);
    });
  });
}

long long persistent_threads(const Grid& g, const Coefs& c, FieldStorage storage, bool hoisted, bool wide_offsets,
                             bool plan, bool profiles, bool tests, int device) {
  if (plan && !(hoisted && persistent_narrow(g, wide_offsets))) return 0;
  long long blocks = 0;
  cuda_kernels::with_storage(storage, [&](auto t) {
    using T = decltype(t);
    with_coef<true>(c, [&](const auto& coef) {
      using Coef = std::decay_t<decltype(coef)>;
      blocks = persistent_blocks(persistent_kernel<Coef, T>(g, hoisted, wide_offsets, plan, profiles, tests), g, coef, device);
    });
  });
  return blocks * kPersistentThreads;
}

bool plan_persistent(const Grid& g, const CpmlSet& ch, const CpmlSet& ce, long long threads, int weight,
                     PersistentPlan& plan) {
  const int n1[3] = {g.nx + 1, g.ny + 1, g.nz + 1};
  if (threads <= 0 || threads % 32 != 0 || weight < 1) return false;
  for (int a = 0; a < 3; ++a)
    if (n1[a] > int(kPlanMask) + 1) return false;
  // A plain sample: h_hoisted's and e_hoisted's update-range tests all true, and no slab of either
  // set holds it (slab_hits: an empty set, or inside the set's inner box).
  auto in_range = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  auto inner_box = [](const CpmlSet& cs, int i, int j, int k) {
    return cs.count == 0 || (i >= cs.inner_lo[0] && i < cs.inner_hi[0] && j >= cs.inner_lo[1] && j < cs.inner_hi[1] &&
                             k >= cs.inner_lo[2] && k < cs.inner_hi[2]);
  };
  auto plain = [&](int i, int j, int k) {
    if (k >= g.nz) return false;
    for (int c = 0; c < 6; ++c) {
      if (!in_range(i, g.lo[c][0], g.hi[c][0]) || !in_range(j, g.lo[c][1], g.hi[c][1])) return false;
      if (c < 3 && !in_range(k, g.lo[c][2], g.hi[c][2])) return false;
    }
    return inner_box(ch, i, j, k) && inner_box(ce, i, j, k);
  };
  // The samples in layout order (x fastest), the plain ones and the others in two lists; each list
  // cut into warp tasks of 32 consecutive samples.
  std::vector<std::uint32_t> list[2];
  for (int k = 0; k < n1[2]; ++k)
    for (int j = 0; j < n1[1]; ++j)
      for (int i = 0; i < n1[0]; ++i) {
        const bool p = plain(i, j, k);
        list[p ? 1 : 0].push_back(std::uint32_t(i) | (std::uint32_t(j) << kPlanBits) |
                                  (std::uint32_t(k) << (2 * kPlanBits)) | (p ? kPlanPlain : 0u));
      }
  struct Task {
    int list;
    std::size_t first;
    int count;
  };
  std::vector<Task> tasks;
  for (int l = 0; l < 2; ++l)
    for (std::size_t f = 0; f < list[l].size(); f += 32)
      tasks.push_back(Task{l, f, int(std::min<std::size_t>(32, list[l].size() - f))});
  // Longest task first to the least loaded warp (ties: the lowest warp): the tasks of other samples
  // weigh `weight`, the plain ones 1; the list order already puts the heavier tasks first.
  const long long warps = threads / 32;
  using Load = std::pair<long long, long long>;  // (load, warp)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> least;
  for (long long w = 0; w < warps; ++w) least.push({0, w});
  std::vector<std::vector<int>> of_warp(static_cast<std::size_t>(warps));
  int rounds = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    Load l = least.top();
    least.pop();
    of_warp[std::size_t(l.second)].push_back(int(t));
    rounds = std::max(rounds, int(of_warp[std::size_t(l.second)].size()));
    l.first += tasks[t].list == 1 ? 1 : weight;
    least.push(l);
  }
  // A sample's tests word: h_hoisted's and e_hoisted's range tests and slab_hits of both sets.
  auto slab_fields = [&](const CpmlSet& cs, int i, int j, int k) {
    unsigned f = 0;
    if (inner_box(cs, i, j, k)) return f;
    for (int p = 0; p < cs.count; ++p) {
      const Slab& s = cs.s[p];
      if (i < s.o[0] || i >= s.o[0] + s.d[0] || j < s.o[1] || j >= s.o[1] + s.d[1] || k < s.o[2] || k >= s.o[2] + s.d[2])
        continue;
      f = (f & ~(7u << (3 * s.axis))) | (unsigned(p + 1) << (3 * s.axis));
    }
    return f;
  };
  auto tests_word = [&](int i, int j, int k) {
    unsigned w = slab_fields(ch, i, j, k) << kTestsHSlabs | slab_fields(ce, i, j, k) << kTestsESlabs;
    const bool more = k < g.nz;
    for (int c = 0; c < 3; ++c) {
      if ((c < 2 ? more : true) && in_range(i, g.lo[3 + c][0], g.hi[3 + c][0]) && in_range(j, g.lo[3 + c][1], g.hi[3 + c][1]))
        w |= 1u << (kTestsHRange + c);
      if (in_range(i, g.lo[c][0], g.hi[c][0]) && in_range(j, g.lo[c][1], g.hi[c][1]) && in_range(k, g.lo[c][2], g.hi[c][2]))
        w |= 1u << (kTestsERange + c);
    }
    return w;
  };
  plan.threads = threads;
  plan.rounds = rounds;
  plan.samples.assign(std::size_t(rounds) * std::size_t(threads), kPlanNone);
  plan.tests.assign(std::size_t(rounds) * std::size_t(threads), 0u);
  for (long long w = 0; w < warps; ++w)
    for (std::size_t r = 0; r < of_warp[std::size_t(w)].size(); ++r) {
      const Task& t = tasks[std::size_t(of_warp[std::size_t(w)][r])];
      for (int q = 0; q < t.count; ++q) {
        const std::uint32_t v = list[t.list][t.first + std::size_t(q)];
        const std::size_t at = r * std::size_t(threads) + std::size_t(w) * 32 + std::size_t(q);
        plan.samples[at] = v;
        plan.tests[at] = tests_word(int(v & kPlanMask), int((v >> kPlanBits) & kPlanMask), int((v >> (2 * kPlanBits)) & kPlanMask));
      }
    }
  return true;
}

namespace {
// The one-pass blocks covering box [lo, hi] (inclusive): 32 columns x kPassTileY rows x `chunk` planes.
void add_pass_blocks(std::vector<PassBlock>& out, const int lo[3], const int hi[3], int chunk, long long& samples) {
  if (hi[0] < lo[0] || hi[1] < lo[1] || hi[2] < lo[2]) return;
  samples += (long long)(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
  for (int k = lo[2]; k <= hi[2]; k += chunk)
    for (int j = lo[1]; j <= hi[1]; j += kPassTileY)
      for (int i = lo[0]; i <= hi[0]; i += 32) out.push_back(PassBlock{i, j, k, std::min(hi[2], k + chunk - 1), hi[0], hi[1]});
}
}  // namespace

TwoStepPlan plan_two_step(const Grid& g, const CpmlSet& ch, const CpmlSet& ce,
                          const std::vector<std::array<int, 3>>& keep_out, int tile_y, int z_chunk, int pass_chunk,
                          bool align_rest, bool shell, bool shell_narrow, int general_chunk, bool shell_edges,
                          int shell_chunk, int edge_chunk) {
  TwoStepPlan plan;
  const int n[3] = {g.nx, g.ny, g.nz};
  // The plain box (inclusive): every component updated (its range; H_x and H_y along z need
  // k < nz), no CPML slab of either set. Every value an interior tile computes and uses lies within
  // its core grown by 2 samples towards the low faces and 1 towards the high ones
  // (two_step_interior: H^{n+1/2} at c0-2 .. c1+1 along each axis); those samples must be plain,
  // and hold no point source or probe (an E source changes E^{n+1}, which the tile uses from c0-1
  // to c1+1; a probe reads E^{n+1} or H^{n+1/2}, which the tile never stores). Its reads (E^n up
  // to c1+2) need only be inside the grid. (3 samples on every side measured 0.7 % slower at 512^3:
  // results/fdtd.md, session 18.)
  constexpr int margin_lo = 2, margin_hi = 1;
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = 0;
    hi[a] = n[a];
    for (int c = 0; c < 6; ++c) {
      lo[a] = std::max(lo[a], g.lo[c][a]);
      hi[a] = std::min(hi[a], g.hi[c][a]);
    }
    for (const CpmlSet* cs : {&ch, &ce})
      if (cs->count > 0) {
        lo[a] = std::max(lo[a], cs->inner_lo[a]);
        hi[a] = std::min(hi[a], cs->inner_hi[a] - 1);
      }
  }
  hi[2] = std::min(hi[2], g.nz - 1);
  int rlo[3], rhi[3];
  for (int a = 0; a < 3; ++a) {
    rlo[a] = lo[a] + margin_lo;
    rhi[a] = hi[a] - margin_hi;
  }
  const int cw = 29, chh = tile_y - 3;
  // Filled rest blocks (align_rest): the rest's one-pass blocks cost by the block, not by the
  // sample (session 18: 10 % fewer rest samples, the same blocks, the same time), and the boxes of
  // the x faces are 12-14 samples wide in blocks of 32 columns. Along x and y the interior box
  // shrinks to the fewest interior tiles that keep the rest's step-1 boxes on each side (the shell
  // grown by one: [0, rlo] and [rhi, n]) in the blocks they take now; of those, the widest box.
  // Shell tiles: the shell's boxes along x and y made whole tiles (their tiles' cores would run
  // over into the interior box anyway: the x faces' boxes are about 12 samples wide), so the
  // interior box shrinks to make them so.
  if (shell && rhi[0] >= rlo[0] && rhi[1] >= rlo[1] && rhi[2] >= rlo[2]) {
    const int core[2] = {shell_narrow ? 13 : cw, kShellTileY - 3};
    for (int a = 0; a < 2; ++a) {
      const int C = core[a];
      rlo[a] = (rlo[a] + C - 1) / C * C;
      rhi[a] = n[a] - (n[a] - rhi[a] + C - 1) / C * C;
    }
  }
  if (!shell && align_rest && rhi[0] >= rlo[0] && rhi[1] >= rlo[1] && rhi[2] >= rlo[2]) {
    const int block[2] = {32, kPassTileY}, core[2] = {cw, chh};
    for (int a = 0; a < 2; ++a) {
      const int B = block[a], C = core[a];
      const int l0 = rlo[a], l1 = (rlo[a] + B) / B * B - 1;                         // rlo keeps [0, rlo]'s blocks
      const int h1 = rhi[a], h0 = n[a] + 1 - (n[a] - rhi[a] + B) / B * B;           // rhi keeps [rhi, n]'s
      const int narrowest = std::max(1, h0 - l1 + 1), widest = h1 - l0 + 1;
      const int width = std::min(widest, (narrowest + C - 1) / C * C);
      rlo[a] = std::max(l0, h0 - width + 1);
      rhi[a] = rlo[a] + width - 1;
    }
  }
  std::vector<std::array<int, 6>> rest;  // boxes (lo, hi inclusive) left to the one-pass blocks
  // The tiles of box [blo, bhi] with cores of w x h columns and `chunk` planes: those clear of
  // keep_out (no source or probe within their core grown by margin_lo / margin_hi) into `tiles`,
  // the others into `rest`.
  auto tile_box = [&](const int blo[3], const int bhi[3], int w, int h, int chunk, std::vector<TwoStepTile>& tiles,
                      long long& samples) {
    if (bhi[0] < blo[0] || bhi[1] < blo[1] || bhi[2] < blo[2]) return;
    for (int k = blo[2]; k <= bhi[2]; k += chunk)
      for (int j = blo[1]; j <= bhi[1]; j += h)
        for (int i = blo[0]; i <= bhi[0]; i += w) {
          const TwoStepTile t{i, j, k, std::min(bhi[2], k + chunk - 1), std::min(w, bhi[0] - i + 1),
                              std::min(h, bhi[1] - j + 1)};
          const int thi[3] = {i + t.cw - 1, j + t.ch - 1, t.k1};
          bool clear = true;
          for (const auto& s : keep_out) {
            bool inside = true;
            for (int a = 0; a < 3; ++a) {
              const int o = a == 0 ? i : (a == 1 ? j : k);
              inside = inside && s[a] >= o - margin_lo && s[a] <= thi[a] + margin_hi;
            }
            clear = clear && !inside;
          }
          if (clear) {
            tiles.push_back(t);
            samples += (long long)t.cw * t.ch * (t.k1 - t.k0 + 1);
          } else {
            rest.push_back({i, j, k, thi[0], thi[1], thi[2]});
          }
        }
  };
  std::vector<std::array<int, 6>> around;  // the boxes around the interior box
  const bool any = rhi[0] >= rlo[0] && rhi[1] >= rlo[1] && rhi[2] >= rlo[2];
  if (any) {
    tile_box(rlo, rhi, cw, chh, z_chunk, plan.interior, plan.interior_samples);
    // The shell around the interior box [rlo, rhi]: the z slabs whole, the y slabs within the
    // box's z range, the x slabs within its y and z ranges (disjoint).
    around.push_back({0, 0, 0, n[0], n[1], rlo[2] - 1});
    around.push_back({0, 0, rhi[2] + 1, n[0], n[1], n[2]});
    around.push_back({0, 0, rlo[2], n[0], rlo[1] - 1, rhi[2]});
    around.push_back({0, rhi[1] + 1, rlo[2], n[0], n[1], rhi[2]});
    around.push_back({0, rlo[1], rlo[2], rlo[0] - 1, rhi[1], rhi[2]});
    around.push_back({rhi[0] + 1, rlo[1], rlo[2], n[0], rhi[1], rhi[2]});
  } else {
    around.push_back({0, 0, 0, n[0], n[1], n[2]});
  }
  for (const auto& b : around) {
    if (!shell) {
      rest.push_back(b);
      continue;
    }
    // Shell tiles: the box's planes in chunks of at most shell_chunk (0: z_chunk), as even as they go.
    const int blo[3] = {b[0], b[1], b[2]}, bhi[3] = {b[3], b[4], b[5]};
    const int depth = bhi[2] - blo[2] + 1;
    if (depth <= 0) continue;
    const int shell_planes = shell_chunk > 0 ? shell_chunk : z_chunk;
    const int chunks = (depth + shell_planes - 1) / shell_planes;
    const int chunk = (depth + chunks - 1) / chunks;
    // (the boxes of the x faces are the last two: 16 x 32 threads there when shell_narrow)
    const bool x_face = any && (&b - around.data()) >= 4;
    const int shape = shell_narrow && x_face ? 1 : 0;
    std::vector<TwoStepTile> tiles;
    if (shape == 1)
      tile_box(blo, bhi, 13, 2 * kShellTileY - 3, chunk, tiles, plan.shell_samples);
    else
      tile_box(blo, bhi, cw, kShellTileY - 3, chunk, tiles, plan.shell_samples);
    // The tile's class (two_step_shell_tile's AXIS + 1): the slabs its computed samples meet
    // (columns i0-2 .. i0+cw, rows j0-2 .. j0+ch, planes k0-2 .. k1+1). One slab of each set at
    // most, all of one axis: that axis (the x faces' shape takes only x, the other only y and z);
    // none: the shape's first axis class; at most one slab of each set and axis, two axes
    // (shell_edges, shape 0): the class of that pair of axes; otherwise general (0).
    auto classify = [&](TwoStepTile& t) {
      t.sh = t.se = t.sh2 = t.se2 = -1;
      const int clo[3] = {t.i0 - 2, t.j0 - 2, t.k0 - 2}, chi[3] = {t.i0 + t.cw, t.j0 + t.ch, t.k1 + 1};
      int met[2][3] = {{-1, -1, -1}, {-1, -1, -1}};  // [set][axis]: the slab met, -2: more than one
      for (int e = 0; e < 2; ++e) {
        const CpmlSet& cs = e ? ce : ch;
        for (int p = 0; p < cs.count; ++p) {
          const Slab& sl = cs.s[p];
          bool meets = true;
          for (int a = 0; a < 3; ++a) meets = meets && sl.o[a] <= chi[a] && sl.o[a] + sl.d[a] - 1 >= clo[a] && sl.d[a] > 0;
          if (meets) met[e][sl.axis] = met[e][sl.axis] == -1 ? p : -2;
        }
      }
      int axes[3], count = 0;
      bool twice = false;  // two slabs of one axis in one set
      for (int a = 0; a < 3; ++a) {
        if (met[0][a] != -1 || met[1][a] != -1) axes[count++] = a;
        twice = twice || met[0][a] == -2 || met[1][a] == -2;
      }
      int cls = 0;
      if (twice || count == 3) {
        cls = 0;
      } else if (count == 0) {
        cls = shape == 1 ? 1 : 3;
      } else if (count == 1) {
        const int axis = axes[0];
        if (shape == 1 ? axis == 0 : axis != 0) {
          cls = axis + 1;
          t.sh = met[0][axis];
          t.se = met[1][axis];
        }
      } else if (shell_edges && shape == 0) {
        cls = axes[0] == 0 ? (axes[1] == 1 ? 4 : 5) : 6;
        t.sh = met[0][axes[0]];
        t.se = met[1][axes[0]];
        t.sh2 = met[0][axes[1]];
        t.se2 = met[1][axes[1]];
      }
      return cls;
    };
    // General tiles deeper than general_chunk planes are cut into pieces of at most that many
    // (the general code is the slowest a plane, and a mid-size grid has few such tiles), each
    // classified again; the two-axis classes' tiles (4-6, shape 0) likewise by edge_chunk.
    for (TwoStepTile& t : tiles) {
      const int cls = classify(t);
      const int depth = t.k1 - t.k0 + 1;
      const int cut = cls == 0 ? general_chunk : (shape == 0 && cls >= 4 ? edge_chunk : 0);
      if (cut <= 0 || depth <= cut) {
        plan.shell[shape][cls].push_back(t);
        continue;
      }
      const int pieces = (depth + cut - 1) / cut, step = (depth + pieces - 1) / pieces;
      for (int k = t.k0; k <= t.k1; k += step) {
        TwoStepTile piece = t;
        piece.k0 = k;
        piece.k1 = std::min(t.k1, k + step - 1);
        plan.shell[shape][classify(piece)].push_back(piece);
      }
    }
  }
  for (const auto& b : rest) {
    const int blo[3] = {b[0], b[1], b[2]}, bhi[3] = {b[3], b[4], b[5]};
    add_pass_blocks(plan.second, blo, bhi, pass_chunk, plan.second_samples);
    // Step 1 also computes the samples one further on every side (step 2 reads them).
    int glo[3], ghi[3];
    for (int a = 0; a < 3; ++a) {
      glo[a] = std::max(0, blo[a] - 1);
      ghi[a] = std::min(n[a], bhi[a] + 1);
    }
    if (bhi[0] >= blo[0] && bhi[1] >= blo[1] && bhi[2] >= blo[2])
      add_pass_blocks(plan.first, glo, ghi, pass_chunk, plan.first_samples);
  }
  return plan;
}

void launch_two_step_interior(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                              float* const next[6], const TwoStepTile* tiles, int count, int tile_y,
                              int grid_blocks, cudaStream_t stream) {
  if (count <= 0) return;
  with_fields_and_coef<true>(storage, c, cur, next, [&](const auto& A, const auto& B, const auto& coef) {
    if (tile_y == 32)
      two_step_ty<32>(g, coef, A, B, tiles, count, grid_blocks, stream);
    else
      two_step_ty<16>(g, coef, A, B, tiles, count, grid_blocks, stream);
  });
}

void check_shell_lists(const ShellLists& lists) {
  int listed = 0, ordered = 0;
  for (const auto& shape : lists.count)
    for (const int count : shape) listed += count;
  for (const auto& q : kShellOrder) ordered += lists.count[q[0]][q[1]];
  if (listed != ordered) fail("two steps per pass in the CPML shell: a shell tile in a class its shape has no kernel for");
}

void launch_two_step_shell(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6],
                           float* const next[6], const ShellLists& lists, const CpmlSet& cpml_h,
                           const CpmlSet& cpml_e, cudaStream_t stream) {
  with_fields_and_coef<true>(storage, c, cur, next, [&](const auto& A, const auto& B, const auto& coef) {
    // shape 1 (16 x 32): the x faces' boxes (class x, or general); shape 0 (32 x 16): the y and z
    // faces' (classes y, z, general, and with shell_edges the classes of two axes). plan_two_step
    // puts no tile in the other classes (check_shell_lists, once at set-up).
    ShellOrder o{};
    int end = 0;
    for (int q = 0; q < ShellOrder::kLists; ++q) {
      o.tiles[q] = lists.tiles[kShellOrder[q][0]][kShellOrder[q][1]];
      end += lists.count[kShellOrder[q][0]][kShellOrder[q][1]];
      o.end[q] = end;
    }
    o.interior = lists.interior;
    o.interior_count = lists.one_launch && lists.interior ? lists.interior_count : 0;
    if (lists.one_launch) {
      two_step_shell_launch(g, coef, A, B, o, cpml_h, cpml_e, lists.wide_offsets, stream);
      return;
    }
    constexpr int W = 2 * kShellTileY;
    two_step_shell_class_launch<32, kShellTileY, -1>(g, coef, A, B, lists.tiles[0][0], lists.count[0][0], cpml_h, cpml_e,
                                                     stream);
    two_step_shell_class_launch<16, W, -1>(g, coef, A, B, lists.tiles[1][0], lists.count[1][0], cpml_h, cpml_e, stream);
    two_step_shell_class_launch<16, W, 0>(g, coef, A, B, lists.tiles[1][1], lists.count[1][1], cpml_h, cpml_e, stream);
    two_step_shell_class_launch<32, kShellTileY, 1>(g, coef, A, B, lists.tiles[0][2], lists.count[0][2], cpml_h, cpml_e,
                                                    stream);
    two_step_shell_class_launch<32, kShellTileY, 2>(g, coef, A, B, lists.tiles[0][3], lists.count[0][3], cpml_h, cpml_e,
                                                    stream);
    // the classes of two axes (x and y, x and z, y and z)
    two_step_shell_class_launch<32, kShellTileY, 3>(g, coef, A, B, lists.tiles[0][4], lists.count[0][4], cpml_h, cpml_e,
                                                    stream);
    two_step_shell_class_launch<32, kShellTileY, 4>(g, coef, A, B, lists.tiles[0][5], lists.count[0][5], cpml_h, cpml_e,
                                                    stream);
    two_step_shell_class_launch<32, kShellTileY, 5>(g, coef, A, B, lists.tiles[0][6], lists.count[0][6], cpml_h, cpml_e,
                                                    stream);
  });
}

void launch_pass_blocks(const Grid& g, const Coefs& c, FieldStorage storage, float* const cur[6], float* const next[6],
                        const PassBlock* blocks, int count, const CpmlSet& cpml_h, const CpmlSet& cpml_e,
                        bool hoist, cudaStream_t stream) {
  if (count <= 0) return;
  with_fields_and_coef<true>(storage, c, cur, next, [&](const auto& A, const auto& B, const auto& coef) {
    pass_blocks(g, coef, A, B, blocks, count, cpml_h, cpml_e, hoist, stream);
  });
  VEM_CUDA_CHECK_LAUNCH("onepass_blocks");
}

// The block trace (VEM_BLOCK_TRACE): a ring of `records` (a power of two) records, zeroed count.
namespace {
BlockTraceRecord* g_block_trace_host = nullptr;
std::size_t g_block_trace_records = 0;
}  // namespace
bool block_trace_arm(std::size_t records) {
  if (!VEM_BLOCK_TRACE) return false;
  if (records == 0 || (records & (records - 1)) != 0) fail("block trace: ", records, " records is not a power of two");
  if (g_block_trace_host) VEM_CUDA_CHECK(cudaFree(g_block_trace_host));
  g_block_trace_host = nullptr;
  VEM_CUDA_CHECK(cudaMalloc(&g_block_trace_host, records * sizeof(BlockTraceRecord)));
  g_block_trace_records = records;
  const unsigned long long zero = 0, mask = records - 1;
  VEM_CUDA_CHECK(cudaMemcpyToSymbol(g_block_trace, &g_block_trace_host, sizeof(g_block_trace_host)));
  VEM_CUDA_CHECK(cudaMemcpyToSymbol(g_block_trace_n, &zero, sizeof(zero)));
  VEM_CUDA_CHECK(cudaMemcpyToSymbol(g_block_trace_mask, &mask, sizeof(mask)));
  return true;
}
long long block_trace_dump(const std::string& path) {
  if (!g_block_trace_host) return -1;
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long n = 0;
  VEM_CUDA_CHECK(cudaMemcpyFromSymbol(&n, g_block_trace_n, sizeof(n)));
  std::vector<BlockTraceRecord> ring(g_block_trace_records);
  VEM_CUDA_CHECK(cudaMemcpy(ring.data(), g_block_trace_host, ring.size() * sizeof(BlockTraceRecord),
                            cudaMemcpyDeviceToHost));
  const unsigned long long kept = std::min<unsigned long long>(n, g_block_trace_records);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) fail("block trace: cannot write ", path);
  std::fprintf(f, "t0_ns,t1_ns,sm,kind,list,block\n");
  for (unsigned long long q = n - kept; q < n; ++q) {
    const BlockTraceRecord& r = ring[q & (g_block_trace_records - 1)];
    std::fprintf(f, "%llu,%llu,%u,%u,%u,%u\n", r.t0, r.t1, r.sm, r.id >> 28, (r.id >> 24) & 15u, r.id & 0xffffffu);
  }
  std::fclose(f);
  // disarmed: later launches record nothing
  BlockTraceRecord* none = nullptr;
  VEM_CUDA_CHECK(cudaMemcpyToSymbol(g_block_trace, &none, sizeof(none)));
  VEM_CUDA_CHECK(cudaFree(g_block_trace_host));
  g_block_trace_host = nullptr;
  return (long long)kept;
}

}  // namespace vem::onepass
