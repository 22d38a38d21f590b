// The 2D CUDA engine: the update equations of fdtd2d_setup.h on FieldLayout2D arrays, the same
// arithmetic as the CPU engine (the library compiles CUDA with -fmad=false).
//
// Two ways to step (Fdtd2dTuning::time_block, results in testing/benchmarks/results/fdtd2d.md):
//  - plain (time_block 1): one kernel for H and one for E per step (Takada et al.'s scheme), either
//    one thread per sample and `rows` consecutive y rows per thread (the y-neighbour carried in a
//    register, the x-neighbour from L1), or 2 / 4 consecutive x samples per thread with float2 /
//    float4 loads and stores (Fdtd2dTuning::plain_cells; more bytes in flight per thread), then
//    the CPML slabs (one merged launch per half step),
//    point sources, PMC/periodic ghosts and probes, all on the device; extension hooks between.
//    On Hopper the stepping kernels use programmatic dependent launch as the 3D engine does.
//  - temporally blocked (time_block T >= 2): each block loads a tile of the three fields (and the
//    material index) with a halo of T cells into shared memory, advances it T steps there (the
//    halo recomputed redundantly: overlapped / trapezoidal tiling, the valid region shrinking by
//    one cell per side and step) and writes its interior to a second set of arrays (ping-pong:
//    neighbouring blocks still read the old values of their halos). DRAM traffic per step falls
//    from 36-40 bytes per cell to about 24/T. Covered: PEC faces, uniform coefficients or a
//    material table that fits constant memory, up to kBlockedMaxPoints point-source samples and
//    kBlockedMaxProbes probes, no extensions; anything else (CPML, PMC, periodic, coefficient
//    arrays with many tuples, TF/SF, DFT monitors) steps with the plain kernels. The cell updates
//    are the same inline functions in both paths, so both give the same fields bit for bit.
// For benchmark sweeps and tests only, environment variables override the measured defaults:
// VEM_FDTD2D_ROWS (rows per thread of the one-cell plain kernels: 1, 2 or 4), VEM_FDTD2D_CELLS
// (x cells per thread of the plain kernels: 1, 2 or 4), VEM_FDTD2D_STORES (cs: streaming stores in
// the 2- and 4-cell kernels, anything else ordinary), VEM_FDTD2D_PLAIN_TABLE (constant | global: where
// the 2- and 4-cell kernels read a material table that fits constant memory) and VEM_FDTD2D_TILE ("WxH": the blocked
// kernel's tile in cells, halo included; W a multiple of 32).
// Every CUDA call and launch is checked (cuda_check.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cuda_check.h"
#include "core/device_array.h"
#include "core/exclusive_claim.h"
#include "fdtd2d/fdtd2d_engine_cuda.h"
#include "vem/core/error.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine_cuda(const Fdtd2dOperator& op, int device,
                                                       const Fdtd2dTuning& tuning);

namespace {

constexpr int kTable2dCapacity = 1024;  // materials (6 floats each) in constant memory
__constant__ float c_table2d[kTable2dCapacity * 6];
std::atomic<const void*> g_table2d_owner{nullptr};

constexpr int kBlockedMaxPoints = 8;
constexpr int kBlockedMaxSteps = 16;
constexpr int kBlockedMaxProbes = 64;
constexpr int kMaxPointUpdates = 64;
// Where the blocked kernel reads an indexed model's coefficient table (BlockedParams::table_mode):
// constant memory (as the plain kernels), shared memory (copied at the start of each pass; tables of
// up to kBlockedSmemTableFloats floats) or global memory through L1 (__ldg). A warp's samples span
// several materials (the benchmark's 8-cell blocks: 4 per warp row); divergent constant-memory
// reads are serialized, which the on-chip-bound blocked kernel pays for. Default by measurement
// (fdtd2d.md); VEM_FDTD2D_BLOCKED_TABLE=constant|shared|global overrides it for benchmark sweeps.
constexpr int kBlockedSmemTableFloats = 6 * 256;
enum BlockedTable : int { kTableConstant = 0, kTableShared = 1, kTableGlobal = 2 };
constexpr BlockedTable kBlockedTableDefault = kTableShared;  // measured best (fdtd2d.md)
// Plain kernels (Fdtd2dTuning::plain_cells / plain_stores automatic): cells per thread along x,
// streaming stores, and the threads per block of the 2- and 4-cell kernels ([0]: 2, [1]: 4).
constexpr int kPlainCellsDefault = 4;
constexpr bool kPlainStreamingDefault = false;
constexpr int kPlainBlockVec[2][2] = {{128, 2}, {256, 1}};
constexpr bool kPlainTableGlobalDefault = false;  // constant: 0.97 vs 0.93 at 8192^2 (fdtd2d.md)

struct Grid2 {
  int nx, ny;
  int pitch, origin;
  float idx, idy;
  int lo[3][2], hi[3][2];
};

struct Fields {
  float* f[3];
};

__device__ __forceinline__ bool in_range(const Grid2& g, int s, int i, int j) {
  return i >= g.lo[s][0] && i <= g.hi[s][0] && j >= g.lo[s][1] && j <= g.hi[s][1];
}

// The cell updates, shared by the plain and the blocked kernels (bit-for-bit agreement).
// H <- a H - b curl, E <- a E + b curl (fdtd2d_setup.h); curls as written there.
__device__ __forceinline__ float upd_h(float a, float b, float h, float curl) { return a * h - b * curl; }
__device__ __forceinline__ float upd_e(float a, float b, float e, float curl) { return a * e + b * curl; }
// TM: Hx(i,j) from Ez(i,j), Ez(i,j+1); Hy(i,j) from Ez(i,j), Ez(i+1,j); Ez from Hy(i-1), Hx(j-1).
__device__ __forceinline__ float curl_hx_tm(float ez, float ez_jp, float idy) { return (ez_jp - ez) * idy; }
__device__ __forceinline__ float curl_hy_tm(float ez, float ez_ip, float idx) { return -((ez_ip - ez) * idx); }
__device__ __forceinline__ float curl_ez_tm(float hx, float hx_jm, float hy, float hy_im, float idx, float idy) {
  return (hy - hy_im) * idx - (hx - hx_jm) * idy;
}
// TE: Hz from Ey(i+1), Ex(j+1); Ex(i,j) from Hz(i,j), Hz(i,j-1); Ey from Hz(i,j), Hz(i-1,j).
__device__ __forceinline__ float curl_hz_te(float ex, float ex_jp, float ey, float ey_ip, float idx, float idy) {
  return (ey_ip - ey) * idx - (ex_jp - ex) * idy;
}
__device__ __forceinline__ float curl_ex_te(float hz, float hz_jm, float idy) { return (hz - hz_jm) * idy; }
__device__ __forceinline__ float curl_ey_te(float hz, float hz_im, float idx) { return -((hz - hz_im) * idx); }

// The material keys (index * 6) of V consecutive samples from offset o (o a multiple of V: the
// 16-bit index array has the field layout, so 2 V bytes aligned).
template <int V>
__device__ __forceinline__ void index_keys(const std::uint16_t* __restrict__ index, int o, int* k) {
  if constexpr (V == 4) {
    const ushort4 u = __ldg(reinterpret_cast<const ushort4*>(index + o));
    k[0] = int(u.x) * 6; k[1] = int(u.y) * 6; k[2] = int(u.z) * 6; k[3] = int(u.w) * 6;
  } else if constexpr (V == 2) {
    const ushort2 u = __ldg(reinterpret_cast<const ushort2*>(index + o));
    k[0] = int(u.x) * 6; k[1] = int(u.y) * 6;
  } else {
    k[0] = int(__ldg(index + o)) * 6;
  }
}

// Coefficient policies: (a, b) of slot s at layout offset o.
struct CoefUniform {
  float a[3], b[3];
  __device__ __forceinline__ int key(int) const { return 0; }
  template <int V> __device__ __forceinline__ void keys(int, int* k) const {
#pragma unroll
    for (int e = 0; e < V; ++e) k[e] = 0;
  }
  __device__ __forceinline__ float ca(int s, int, int) const { return a[s]; }
  __device__ __forceinline__ float cb(int s, int, int) const { return b[s]; }
};
struct CoefConstTable {
  const std::uint16_t* __restrict__ index;
  __device__ __forceinline__ int key(int o) const { return int(__ldg(index + o)) * 6; }
  template <int V> __device__ __forceinline__ void keys(int o, int* k) const { index_keys<V>(index, o, k); }
  __device__ __forceinline__ float ca(int s, int, int k) const { return c_table2d[k + 2 * s]; }
  __device__ __forceinline__ float cb(int s, int, int k) const { return c_table2d[k + 2 * s + 1]; }
};
struct CoefGlobalTable {
  const std::uint16_t* __restrict__ index;
  const float* __restrict__ table;
  __device__ __forceinline__ int key(int o) const { return int(__ldg(index + o)) * 6; }
  template <int V> __device__ __forceinline__ void keys(int o, int* k) const { index_keys<V>(index, o, k); }
  __device__ __forceinline__ float ca(int s, int, int k) const { return __ldg(table + k + 2 * s); }
  __device__ __forceinline__ float cb(int s, int, int k) const { return __ldg(table + k + 2 * s + 1); }
};
struct CoefArrays {
  const float* __restrict__ arr[6];
  __device__ __forceinline__ int key(int) const { return 0; }
  template <int V> __device__ __forceinline__ void keys(int, int* k) const {
#pragma unroll
    for (int e = 0; e < V; ++e) k[e] = 0;
  }
  __device__ __forceinline__ float ca(int s, int o, int) const { return __ldg(arr[2 * s] + o); }
  __device__ __forceinline__ float cb(int s, int o, int) const { return __ldg(arr[2 * s + 1] + o); }
};

__device__ __forceinline__ void pdl_begin() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Plain H update: one thread per (i, j..j+ROWS-1); slot 0 of TM is Ez, of TE Hz.
template <bool TE, int ROWS, class Coef>
__global__ void update_h_plain(Fields F, Grid2 g, Coef coef) {
  pdl_begin();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
  if (i > g.nx || j0 > g.ny) return;
  const int p = g.pitch;
  int o = g.origin + i + j0 * p;
  if (!TE) {
    const float* __restrict__ Ez = F.f[0];
    float* __restrict__ Hx = F.f[1];
    float* __restrict__ Hy = F.f[2];
    float ez = Ez[o];
#pragma unroll
    for (int r = 0; r < ROWS; ++r, o += p) {
      const int j = j0 + r;
      if (j > g.ny) break;
      const float ez_jp = j < g.ny ? Ez[o + p] : 0.0f;  // row ny + 1 is not in the layout
      const int k = coef.key(o);
      if (in_range(g, 1, i, j)) Hx[o] = upd_h(coef.ca(1, o, k), coef.cb(1, o, k), Hx[o], curl_hx_tm(ez, ez_jp, g.idy));
      if (in_range(g, 2, i, j)) Hy[o] = upd_h(coef.ca(2, o, k), coef.cb(2, o, k), Hy[o], curl_hy_tm(ez, Ez[o + 1], g.idx));
      ez = ez_jp;
    }
  } else {
    float* __restrict__ Hz = F.f[0];
    const float* __restrict__ Ex = F.f[1];
    const float* __restrict__ Ey = F.f[2];
    float ex = Ex[o];
#pragma unroll
    for (int r = 0; r < ROWS; ++r, o += p) {
      const int j = j0 + r;
      if (j > g.ny) break;
      const float ex_jp = j < g.ny ? Ex[o + p] : 0.0f;
      const int k = coef.key(o);
      if (in_range(g, 0, i, j))
        Hz[o] = upd_h(coef.ca(0, o, k), coef.cb(0, o, k), Hz[o], curl_hz_te(ex, ex_jp, Ey[o], Ey[o + 1], g.idx, g.idy));
      ex = ex_jp;
    }
  }
}

template <bool TE, int ROWS, class Coef>
__global__ void update_e_plain(Fields F, Grid2 g, Coef coef) {
  pdl_begin();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
  if (i > g.nx || j0 > g.ny) return;
  const int p = g.pitch;
  int o = g.origin + i + j0 * p;
  if (!TE) {
    float* __restrict__ Ez = F.f[0];
    const float* __restrict__ Hx = F.f[1];
    const float* __restrict__ Hy = F.f[2];
    float hx_m = Hx[o - p];
#pragma unroll
    for (int r = 0; r < ROWS; ++r, o += p) {
      const int j = j0 + r;
      if (j > g.ny) break;
      const float hx = Hx[o];
      const int k = coef.key(o);
      if (in_range(g, 0, i, j))
        Ez[o] = upd_e(coef.ca(0, o, k), coef.cb(0, o, k), Ez[o], curl_ez_tm(hx, hx_m, Hy[o], Hy[o - 1], g.idx, g.idy));
      hx_m = hx;
    }
  } else {
    const float* __restrict__ Hz = F.f[0];
    float* __restrict__ Ex = F.f[1];
    float* __restrict__ Ey = F.f[2];
    float hz_m = Hz[o - p];
#pragma unroll
    for (int r = 0; r < ROWS; ++r, o += p) {
      const int j = j0 + r;
      if (j > g.ny) break;
      const float hz = Hz[o];
      const int k = coef.key(o);
      if (in_range(g, 1, i, j)) Ex[o] = upd_e(coef.ca(1, o, k), coef.cb(1, o, k), Ex[o], curl_ex_te(hz, hz_m, g.idy));
      if (in_range(g, 2, i, j)) Ey[o] = upd_e(coef.ca(2, o, k), coef.cb(2, o, k), Ey[o], curl_ey_te(hz, Hz[o - 1], g.idx));
      hz_m = hz;
    }
  }
}

// Plain kernels with V = 2 or 4 consecutive x cells per thread (one row): the fields move as
// float2 / float4 (FieldLayout2D: pitch a multiple of 32 floats, sample i = 0 of a row 32-byte
// aligned, so a group i = V t .. V t + V - 1 is V * 4-byte aligned and, with i <= nx, inside its
// row: the row holds i up to pitch - 9 >= V ceil((nx + 1) / V) - 1). Every group is loaded whole;
// the update of each sample is the one-cell kernels' (same expressions, same guards), and a group
// with a sample outside its component's range stores only the updated samples, one by one. The
// x-neighbour beyond the group (Ez[i + V] for Hy, Hy[i - 1] for Ez, ...) is one scalar load, made
// only where the one-cell kernel reads it. CS: streaming stores (st.global.cs).
template <int V>
__device__ __forceinline__ void vld(const float* p, float* v) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
  } else {
    const float2 t = *reinterpret_cast<const float2*>(p);
    v[0] = t.x; v[1] = t.y;
  }
}
template <int V, bool CS>
__device__ __forceinline__ void vst(float* p, const float* v) {
  if constexpr (V == 4) {
    const float4 t = make_float4(v[0], v[1], v[2], v[3]);
    if (CS) __stcs(reinterpret_cast<float4*>(p), t); else *reinterpret_cast<float4*>(p) = t;
  } else {
    const float2 t = make_float2(v[0], v[1]);
    if (CS) __stcs(reinterpret_cast<float2*>(p), t); else *reinterpret_cast<float2*>(p) = t;
  }
}
// Store the samples i..i+V-1 of slot s that are in its range (the whole vector where all are).
template <int V, bool CS>
__device__ __forceinline__ void vstore_range(const Grid2& g, int s, int i, int j, float* p, const float* v) {
  if (j < g.lo[s][1] || j > g.hi[s][1]) return;
  if (i >= g.lo[s][0] && i + V - 1 <= g.hi[s][0]) {
    vst<V, CS>(p, v);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (i + e >= g.lo[s][0] && i + e <= g.hi[s][0]) p[e] = v[e];
  }
}

template <bool TE, int V, bool CS, class Coef>
__global__ void update_h_vec(Fields F, Grid2 g, Coef coef) {
  pdl_begin();
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int j = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > g.nx || j > g.ny) return;
  const int p = g.pitch;
  const int o = g.origin + i + j * p;
  int k[V];
  coef.template keys<V>(o, k);
  if (!TE) {
    const float* __restrict__ Ez = F.f[0];
    float* __restrict__ Hx = F.f[1];
    float* __restrict__ Hy = F.f[2];
    float ez[V + 1], ez_jp[V], hx[V], hy[V];
    vld<V>(Ez + o, ez);
    if (j < g.ny) vld<V>(Ez + o + p, ez_jp);  // row ny + 1 is not in the layout
    else
#pragma unroll
      for (int e = 0; e < V; ++e) ez_jp[e] = 0.0f;
    ez[V] = in_range(g, 2, i + V - 1, j) ? Ez[o + V] : 0.0f;
    vld<V>(Hx + o, hx);
    vld<V>(Hy + o, hy);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (in_range(g, 1, i + e, j))
        hx[e] = upd_h(coef.ca(1, o + e, k[e]), coef.cb(1, o + e, k[e]), hx[e], curl_hx_tm(ez[e], ez_jp[e], g.idy));
      if (in_range(g, 2, i + e, j))
        hy[e] = upd_h(coef.ca(2, o + e, k[e]), coef.cb(2, o + e, k[e]), hy[e], curl_hy_tm(ez[e], ez[e + 1], g.idx));
    }
    vstore_range<V, CS>(g, 1, i, j, Hx + o, hx);
    vstore_range<V, CS>(g, 2, i, j, Hy + o, hy);
  } else {
    float* __restrict__ Hz = F.f[0];
    const float* __restrict__ Ex = F.f[1];
    const float* __restrict__ Ey = F.f[2];
    float ex[V], ex_jp[V], ey[V + 1], hz[V];
    vld<V>(Ex + o, ex);
    if (j < g.ny) vld<V>(Ex + o + p, ex_jp);
    else
#pragma unroll
      for (int e = 0; e < V; ++e) ex_jp[e] = 0.0f;
    vld<V>(Ey + o, ey);
    ey[V] = in_range(g, 0, i + V - 1, j) ? Ey[o + V] : 0.0f;
    vld<V>(Hz + o, hz);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (in_range(g, 0, i + e, j))
        hz[e] = upd_h(coef.ca(0, o + e, k[e]), coef.cb(0, o + e, k[e]), hz[e],
                      curl_hz_te(ex[e], ex_jp[e], ey[e], ey[e + 1], g.idx, g.idy));
    vstore_range<V, CS>(g, 0, i, j, Hz + o, hz);
  }
}

template <bool TE, int V, bool CS, class Coef>
__global__ void update_e_vec(Fields F, Grid2 g, Coef coef) {
  pdl_begin();
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int j = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > g.nx || j > g.ny) return;
  const int p = g.pitch;
  const int o = g.origin + i + j * p;
  int k[V];
  coef.template keys<V>(o, k);
  if (!TE) {
    float* __restrict__ Ez = F.f[0];
    const float* __restrict__ Hx = F.f[1];
    const float* __restrict__ Hy = F.f[2];
    float hx[V], hx_m[V], hy[V + 1], ez[V];  // hy[e + 1] = Hy(i + e), hy[0] = Hy(i - 1)
    vld<V>(Hx + o, hx);
    vld<V>(Hx + o - p, hx_m);
    vld<V>(Hy + o, hy + 1);
    hy[0] = in_range(g, 0, i, j) ? Hy[o - 1] : 0.0f;
    vld<V>(Ez + o, ez);
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (in_range(g, 0, i + e, j))
        ez[e] = upd_e(coef.ca(0, o + e, k[e]), coef.cb(0, o + e, k[e]), ez[e],
                      curl_ez_tm(hx[e], hx_m[e], hy[e + 1], hy[e], g.idx, g.idy));
    vstore_range<V, CS>(g, 0, i, j, Ez + o, ez);
  } else {
    const float* __restrict__ Hz = F.f[0];
    float* __restrict__ Ex = F.f[1];
    float* __restrict__ Ey = F.f[2];
    float hz[V + 1], hz_m[V], ex[V], ey[V];  // hz[e + 1] = Hz(i + e), hz[0] = Hz(i - 1)
    vld<V>(Hz + o, hz + 1);
    vld<V>(Hz + o - p, hz_m);
    hz[0] = in_range(g, 2, i, j) ? Hz[o - 1] : 0.0f;
    vld<V>(Ex + o, ex);
    vld<V>(Ey + o, ey);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (in_range(g, 1, i + e, j))
        ex[e] = upd_e(coef.ca(1, o + e, k[e]), coef.cb(1, o + e, k[e]), ex[e], curl_ex_te(hz[e + 1], hz_m[e], g.idy));
      if (in_range(g, 2, i + e, j))
        ey[e] = upd_e(coef.ca(2, o + e, k[e]), coef.cb(2, o + e, k[e]), ey[e], curl_ey_te(hz[e + 1], hz[e], g.idx));
    }
    vstore_range<V, CS>(g, 1, i, j, Ex + o, ex);
    vstore_range<V, CS>(g, 2, i, j, Ey + o, ey);
  }
}

// CPML (fdtd_operator.h, Roden & Gedney): in 2D each slab corrects one component per half step.
// comp/src are slots, sign as in the update equations (see slab_roles()).
struct Slab2 {
  int o[2], d[2];
  int axis, comp, src;
  float sign, inv_d;
  int lagged;
  const float* b;
  const float* c;
  const float* kinv;
  float* psi;
};
constexpr int kMaxSlabs2 = 4;
struct SlabSet2 {
  Slab2 s[kMaxSlabs2];
  long long begin[kMaxSlabs2 + 1];
  int count;
};

__device__ __forceinline__ bool in_slab(const Slab2& s, int i, int j) {
  return i >= s.o[0] && i < s.o[0] + s.d[0] && j >= s.o[1] && j < s.o[1] + s.d[1];
}

template <bool ELECTRIC, class Coef>
__device__ __forceinline__ void cpml_cell(const Fields& F, const Grid2& g, const Slab2& s, const Coef& coef,
                                          int i, int j) {
  if (!in_range(g, s.comp, i, j)) return;
  const int o = g.origin + i + j * g.pitch;
  const int sa = s.axis == 0 ? 1 : g.pitch;
  const int x = s.axis == 0 ? i : j;
  const int t = (i - s.o[0]) + s.d[0] * (j - s.o[1]);
  const float b = __ldg(s.b + x), c = __ldg(s.c + x), km1 = __ldg(s.kinv + x) - 1.0f;
  const float* S = F.f[s.src];
  const float dF = ELECTRIC ? (S[o] - S[o - sa]) * s.inv_d : (S[o + sa] - S[o]) * s.inv_d;
  const float old = s.psi[t];
  const float p = b * old + c * dF;
  s.psi[t] = p;
  const int k = coef.key(o);
  F.f[s.comp][o] += s.sign * coef.cb(s.comp, o, k) * (km1 * dF + (s.lagged ? old : p));
}

// All slabs of one half step in one launch, one thread per psi sample. A sample in several slabs
// (the corners) is handled by the thread of the first slab holding it, which applies every slab's
// correction in slab (face) order: no two threads write one sample.
template <bool ELECTRIC, class Coef>
__global__ void cpml_all(Fields F, Grid2 g, SlabSet2 set, Coef coef) {
  pdl_begin();
  const long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (u >= set.begin[set.count]) return;
  int q = 0;
  while (u >= set.begin[q + 1]) ++q;
  const Slab2& s = set.s[q];
  const long long t = u - set.begin[q];
  const int i = s.o[0] + int(t % s.d[0]);
  const int j = s.o[1] + int(t / s.d[0]);
  for (int p = 0; p < q; ++p)
    if (in_slab(set.s[p], i, j)) return;
  for (int p = q; p < set.count; ++p)
    if (p == q || in_slab(set.s[p], i, j)) cpml_cell<ELECTRIC>(F, g, set.s[p], coef, i, j);
}

struct PointUpdates2 {
  int count;
  int slot[kMaxPointUpdates];
  int offset[kMaxPointUpdates];
  float value[kMaxPointUpdates];
  int set[kMaxPointUpdates];
};

__global__ void apply_points2(Fields F, PointUpdates2 u) {
  const int t = threadIdx.x;
  if (t >= u.count) return;
  float* p = F.f[u.slot[t]] + u.offset[t];
  *p = u.set[t] ? u.value[t] : *p + u.value[t];
}

// PMC / periodic ghosts of the H component tangential to the faces of axis a (slot hs).
__global__ void fill_h_ghosts2(Fields F, Grid2 g, int a, int hs, int lo_type, int hi_type) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = a == 0 ? g.nx : g.ny, m = a == 0 ? g.ny : g.nx;
  if (u > m) return;
  const int sa = a == 0 ? 1 : g.pitch;
  const int o0 = g.origin + (a == 0 ? u * g.pitch : u);
  const int oN = o0 + n * sa;
  float* H = F.f[hs];
  if (lo_type == int(BoundaryType::pmc)) H[o0 - sa] = -H[o0];
  if (lo_type == int(BoundaryType::periodic)) H[o0 - sa] = H[oN - sa];
  if (hi_type == int(BoundaryType::pmc)) H[oN] = -H[oN - sa];
  if (hi_type == int(BoundaryType::periodic)) H[oN] = H[o0];
}

// Periodic axis a: E slots es[0..1] (tangential; -1 = none) on node plane N equal plane 0.
__global__ void copy_periodic_e2(Fields F, Grid2 g, int a, int es0, int es1) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = a == 0 ? g.nx : g.ny, m = a == 0 ? g.ny : g.nx;
  if (u > m) return;
  const int sa = a == 0 ? 1 : g.pitch;
  const int o0 = g.origin + (a == 0 ? u * g.pitch : u);
  if (es0 >= 0) F.f[es0][o0 + n * sa] = F.f[es0][o0];
  if (es1 >= 0) F.f[es1][o0 + n * sa] = F.f[es1][o0];
}

__global__ void gather_probes2(Fields F, const int* __restrict__ slot, const int* __restrict__ offset, int count,
                               float* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) out[t] = F.f[slot[t]][offset[t]];
}

// ------------------------------------------------------------------------------------------
// Temporally blocked kernel. A block owns the interior (W - 2T) x (H - 2T) of a W x H tile whose
// lower-left corner is at (bx (W - 2T) - T, by (H - 2T) - T); local (lx, ly) <-> global
// (i0 + lx, j0 + ly). After step s (0-based) of the pass, H is exact on local [s, W-2-s] and E on
// [s+1, W-2-s] (each axis), so after T steps the interior [T, W-1-T] is exact.
struct BlockedParams {
  Grid2 g;
  int W, H, T, steps;
  int array_lo_i, array_hi_i;  // columns present in the layout rows (ghost / padding included)
  const float* in[3];
  float* out[3];
  const std::uint16_t* index;  // INDEXED only
  int table_mode;              // INDEXED: BlockedTable
  int table_floats;            // INDEXED, kTableShared: floats of the table in shared memory (even)
  const float* gtable;         // INDEXED, kTableGlobal: the table in global memory
  CoefUniform uni;             // !INDEXED
  // Point sources: sample (i, j, slot), electric (after E) or magnetic (after H), hard or soft;
  // value[step of the pass][point].
  int npts;
  int pt_i[kBlockedMaxPoints], pt_j[kBlockedMaxPoints], pt_slot[kBlockedMaxPoints];
  int pt_electric[kBlockedMaxPoints], pt_hard[kBlockedMaxPoints];
  float pt_value[kBlockedMaxSteps][kBlockedMaxPoints];
  // Probes: recorded after each step by the block owning the sample.
  int nprobes;
  int pr_i[kBlockedMaxProbes], pr_j[kBlockedMaxProbes], pr_slot[kBlockedMaxProbes];
  float* probe_out;  // row (step of the pass) * nprobes; nullptr without probes
};

template <bool INDEXED>
__device__ __forceinline__ void blocked_coef(const BlockedParams& P, const std::uint16_t* sidx, const float* stab,
                                             int l, int s, float& a, float& b) {
  if (INDEXED) {
    const int k = int(sidx[l]) * 6 + 2 * s;
    if (P.table_mode == kTableShared) {
      const float2 v = *reinterpret_cast<const float2*>(stab + k);  // k even: 8-byte aligned
      a = v.x;
      b = v.y;
    } else if (P.table_mode == kTableGlobal) {
      const float2 v = __ldg(reinterpret_cast<const float2*>(P.gtable + k));
      a = v.x;
      b = v.y;
    } else {
      a = c_table2d[k];
      b = c_table2d[k + 1];
    }
  } else {
    a = P.uni.a[s];
    b = P.uni.b[s];
  }
}

template <bool TE, bool INDEXED>
__global__ void __launch_bounds__(512) step_blocked(const __grid_constant__ BlockedParams P) {
  extern __shared__ float sm[];
  const int W = P.W, Hh = P.H, T = P.T;
  const int WH = W * Hh;
  float* s0 = sm;
  float* s1 = sm + WH;
  float* s2 = sm + 2 * WH;
  // Shared memory: the three fields, the material table (INDEXED, table_floats, even), the index.
  float* stab = sm + 3 * WH;
  const int tfl = INDEXED && P.table_mode == kTableShared ? P.table_floats : 0;
  std::uint16_t* sidx = reinterpret_cast<std::uint16_t*>(sm + 3 * WH + tfl);
  const Grid2& g = P.g;
  const int i0 = int(blockIdx.x) * (W - 2 * T) - T;
  const int j0 = int(blockIdx.y) * (Hh - 2 * T) - T;
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int tid = tx + bx * ty;
  for (int t = tid; t < tfl; t += bx * by) stab[t] = c_table2d[t];
  // Load (0 outside the layout; such cells are never updated nor read by an updated cell).
  for (int ly = ty; ly < Hh; ly += by) {
    const int j = j0 + ly;
    const bool row = j >= -1 && j <= g.ny;
    for (int lx = tx; lx < W; lx += bx) {
      const int i = i0 + lx;
      const int l = lx + W * ly;
      const bool ok = row && i >= P.array_lo_i && i <= P.array_hi_i;
      const int o = g.origin + i + j * g.pitch;
      s0[l] = ok ? __ldg(P.in[0] + o) : 0.0f;
      s1[l] = ok ? __ldg(P.in[1] + o) : 0.0f;
      s2[l] = ok ? __ldg(P.in[2] + o) : 0.0f;
      if (INDEXED) sidx[l] = ok ? __ldg(P.index + o) : std::uint16_t(0);
    }
  }
  __syncthreads();
  const float idx = g.idx, idy = g.idy;
  for (int s = 0; s < P.steps; ++s) {
    // H on local [s, W-2-s] x [s, H-2-s].
    for (int ly = s + ty; ly <= Hh - 2 - s; ly += by) {
      const int j = j0 + ly;
      for (int lx = s + tx; lx <= W - 2 - s; lx += bx) {
        const int i = i0 + lx;
        const int l = lx + W * ly;
        float a, b;
        if (!TE) {
          const float ez = s0[l];
          if (in_range(g, 1, i, j)) {
            blocked_coef<INDEXED>(P, sidx, stab, l, 1, a, b);
            s1[l] = upd_h(a, b, s1[l], curl_hx_tm(ez, s0[l + W], idy));
          }
          if (in_range(g, 2, i, j)) {
            blocked_coef<INDEXED>(P, sidx, stab, l, 2, a, b);
            s2[l] = upd_h(a, b, s2[l], curl_hy_tm(ez, s0[l + 1], idx));
          }
        } else if (in_range(g, 0, i, j)) {
          blocked_coef<INDEXED>(P, sidx, stab, l, 0, a, b);
          s0[l] = upd_h(a, b, s0[l], curl_hz_te(s1[l], s1[l + W], s2[l], s2[l + 1], idx, idy));
        }
      }
    }
    __syncthreads();
    if (P.npts > 0) {
      if (tid < P.npts && !P.pt_electric[tid]) {
        const int lx = P.pt_i[tid] - i0, ly = P.pt_j[tid] - j0;
        if (lx >= 0 && lx < W && ly >= 0 && ly < Hh) {
          float* f = P.pt_slot[tid] == 0 ? s0 : (P.pt_slot[tid] == 1 ? s1 : s2);
          const int l = lx + W * ly;
          const float v = P.pt_value[s][tid];
          f[l] = P.pt_hard[tid] ? v : f[l] + v;
        }
      }
      __syncthreads();
    }
    // E on local [s+1, W-2-s].
    for (int ly = s + 1 + ty; ly <= Hh - 2 - s; ly += by) {
      const int j = j0 + ly;
      for (int lx = s + 1 + tx; lx <= W - 2 - s; lx += bx) {
        const int i = i0 + lx;
        const int l = lx + W * ly;
        float a, b;
        if (!TE) {
          if (in_range(g, 0, i, j)) {
            blocked_coef<INDEXED>(P, sidx, stab, l, 0, a, b);
            s0[l] = upd_e(a, b, s0[l], curl_ez_tm(s1[l], s1[l - W], s2[l], s2[l - 1], idx, idy));
          }
        } else {
          const float hz = s0[l];
          if (in_range(g, 1, i, j)) {
            blocked_coef<INDEXED>(P, sidx, stab, l, 1, a, b);
            s1[l] = upd_e(a, b, s1[l], curl_ex_te(hz, s0[l - W], idy));
          }
          if (in_range(g, 2, i, j)) {
            blocked_coef<INDEXED>(P, sidx, stab, l, 2, a, b);
            s2[l] = upd_e(a, b, s2[l], curl_ey_te(hz, s0[l - 1], idx));
          }
        }
      }
    }
    __syncthreads();
    if (P.npts > 0) {
      if (tid < P.npts && P.pt_electric[tid]) {
        const int lx = P.pt_i[tid] - i0, ly = P.pt_j[tid] - j0;
        if (lx >= 0 && lx < W && ly >= 0 && ly < Hh) {
          float* f = P.pt_slot[tid] == 0 ? s0 : (P.pt_slot[tid] == 1 ? s1 : s2);
          const int l = lx + W * ly;
          const float v = P.pt_value[s][tid];
          f[l] = P.pt_hard[tid] ? v : f[l] + v;
        }
      }
      __syncthreads();
    }
    if (P.nprobes > 0 && tid < P.nprobes) {
      const int lx = P.pr_i[tid] - i0, ly = P.pr_j[tid] - j0;
      if (lx >= T && lx < W - T && ly >= T && ly < Hh - T) {
        const float* f = P.pr_slot[tid] == 0 ? s0 : (P.pr_slot[tid] == 1 ? s1 : s2);
        P.probe_out[s * P.nprobes + tid] = f[lx + W * ly];
      }
    }
    if (P.nprobes > 0) __syncthreads();  // the next step's H update must not overwrite an H probe first
  }
  // Write the interior (samples of the grid, 0..nx x 0..ny).
  for (int ly = T + ty; ly < Hh - T; ly += by) {
    const int j = j0 + ly;
    if (j > g.ny) break;
    for (int lx = T + tx; lx < W - T; lx += bx) {
      const int i = i0 + lx;
      if (i > g.nx) break;
      const int l = lx + W * ly;
      const int o = g.origin + i + j * g.pitch;
      P.out[0][o] = s0[l];
      P.out[1][o] = s1[l];
      P.out[2][o] = s2[l];
    }
  }
}


int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::atoi(v);
}

}  // namespace

class Fdtd2dEngineCuda final : public Fdtd2dEngine {
 public:
  Fdtd2dEngineCuda(const Fdtd2dOperator& op, int device, const Fdtd2dTuning& tuning);
  std::string backend() const override { return "cuda:" + device_name_; }
  std::vector<float> field(Component c) const override;
  void set_field(Component c, const std::vector<float>& values) override;
  float* raw_field(Component c) override { return fields_[slot_of(c)].ptr; }
  bool fields_on_device() const override { return true; }
  std::string coefficient_storage() const override {
    switch (coef_kind_) {
      case CoefKind::uniform: return "uniform";
      case CoefKind::const_table: return "constant table";
      case CoefKind::global_table: return "global table";
      case CoefKind::arrays: break;
    }
    return "arrays";
  }

 protected:
  void do_steps(int n) override;
  std::vector<float> probe_values() const override;

 private:
  int slot_of(Component c) const {
    const auto comps = op_.components();
    for (int s = 0; s < 3; ++s)
      if (comps[s] == c) return s;
    fail("component ", component_name(c), " is not a component of the ", polarization_name(op_.polarization()),
         " polarization");
  }
  template <class Coef> void step_plain(const Coef& coef, int step);
  template <bool TE, class Coef> void launch_bulk(bool electric, const Coef& coef);
  template <class Coef> void run_plain(const Coef& coef, int first, int n);
  void push_points(bool electric, int step);
  void run_blocked(int n);
  bool blocked_usable() const;
  template <class... KArgs, class... Args>
  void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, Args&&... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl_ ? 1 : 0;
    VEM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  }

  // The constant-memory table (g_table2d_owner's), given back also when the constructor throws
  // after the claim (core/exclusive_claim.h).
  ExclusiveClaim table_claim_;
  int device_;
  std::string device_name_;
  bool te_ = false;
  bool pdl_ = false;
  dim3 block_;
  int rows_ = 1;
  int cells_ = 1;          // x cells per thread of the plain kernels (1, 2, 4)
  bool streaming_ = false;  // st.global.cs in the 2- and 4-cell kernels
  bool plain_table_global_ = false;  // const_table models: the plain kernels read table_ (L1), not constant memory
  int time_block_ = 1;
  int tile_w_ = 128, tile_h_ = 32;
  int blocked_table_ = kTableConstant;  // where the blocked kernel reads an indexed model's table
  int blocked_table_floats_ = 0;        // its floats in shared memory (kTableShared)
  enum class CoefKind { uniform, const_table, global_table, arrays } coef_kind_ = CoefKind::arrays;
  CoefUniform uniform_{};
  Grid2 g_{};
  Fields F_{};
  DeviceArray<float> fields_[3];
  DeviceArray<float> alt_[3];  // the blocked kernel's second set (ping-pong)
  DeviceArray<std::uint16_t> index_;
  DeviceArray<float> table_;
  DeviceArray<float> coef_[6];
  struct ProfileArrays { DeviceArray<float> b_e, c_e, kinv_e, b_h, c_h, kinv_h; } profile_[2];
  std::vector<std::unique_ptr<DeviceArray<float>>> psi_;
  SlabSet2 set_e_{}, set_h_{};
  DeviceArray<int> probe_slot_, probe_offset_;
  DeviceArray<float> probe_buf_;
  std::size_t probe_capacity_steps_ = 0;
  // Point-source samples (for the blocked kernel): resolved once.
  struct Point { int i, j, slot, electric, hard; std::size_t source; int a; };
  std::vector<Point> points_;
};

Fdtd2dEngineCuda::Fdtd2dEngineCuda(const Fdtd2dOperator& op, int device, const Fdtd2dTuning& tuning)
    : Fdtd2dEngine(op), device_(device) {
  int count = 0;
  VEM_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    fail("CUDA device index ", device, " is out of range: ", count, " device(s) present");
  VEM_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  VEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  device_name_ = prop.name;
  te_ = op.polarization() == Polarization2D::te;
  const FieldLayout2D& L = op.layout();
  const YeeGrid2D& gr = op.grid();
  if (L.size > std::int64_t(2147483647))
    fail("the 2D grid ", gr.nx, " x ", gr.ny, " has ", L.size, " samples per array: the CUDA engine indexes "
         "with 32-bit offsets (at most 2^31 - 1)");

  // Step mode and coefficient path.
  const auto& bc = op.setup().boundaries;
  bool all_pec = true;
  for (int f = 0; f < 4; ++f) all_pec = all_pec && bc.face[f] == BoundaryType::pec;
  if (tuning.time_block < 0 || tuning.time_block > kBlockedMaxSteps)
    fail("Fdtd2dTuning::time_block = ", tuning.time_block, ": 0 (automatic) to ", kBlockedMaxSteps);
  // Defaults by measurement at 8192^2 on an H100 (fdtd2d.md): blocked, T = 4, 128 x 32 tiles where
  // it applies (228 Gcells/s; T = 6 and 128 x 64 tiles within 5 %), plain kernels elsewhere.
  time_block_ = tuning.time_block > 0 ? tuning.time_block : (all_pec ? 4 : 1);
  rows_ = env_int("VEM_FDTD2D_ROWS", 1);
  if (rows_ != 1 && rows_ != 2 && rows_ != 4) fail("VEM_FDTD2D_ROWS = ", rows_, ": 1, 2 or 4");
  // Tile: 128 x 32 cells (measured), taller for T > 6 so that half of it stays interior.
  tile_h_ = std::max(32, (4 * time_block_ + 15) / 16 * 16);
  if (const char* t = std::getenv("VEM_FDTD2D_TILE")) {
    if (std::sscanf(t, "%dx%d", &tile_w_, &tile_h_) != 2 || tile_w_ % 32 != 0 || tile_w_ < 64 || tile_h_ < 8)
      fail("VEM_FDTD2D_TILE = '", t, "': WxH with W a multiple of 32 (>= 64), H >= 8");
  }
  // Plain kernels. Cells per thread along x (VEM_FDTD2D_CELLS / VEM_FDTD2D_STORES=cs override the
  // tuning, for tests and sweeps): default by measurement at 8192^2 (fdtd2d.md, "Plain kernels:
  // cells per thread").
  cells_ = tuning.plain_cells > 0 ? tuning.plain_cells : (rows_ > 1 ? 1 : kPlainCellsDefault);
  cells_ = env_int("VEM_FDTD2D_CELLS", cells_);
  if (cells_ != 1 && cells_ != 2 && cells_ != 4)
    fail("Fdtd2dTuning::plain_cells = ", cells_, ": 0 (automatic), 1, 2 or 4");
  if (tuning.plain_stores < 0 || tuning.plain_stores > 2)
    fail("Fdtd2dTuning::plain_stores = ", tuning.plain_stores, ": 0 (automatic), 1 (ordinary) or 2 (streaming)");
  streaming_ = tuning.plain_stores > 0 ? tuning.plain_stores == 2 : kPlainStreamingDefault;
  if (const char* st = std::getenv("VEM_FDTD2D_STORES")) streaming_ = std::string(st) == "cs";
  if (cells_ > 1 && rows_ != 1) fail("VEM_FDTD2D_ROWS = ", rows_, " needs the one-cell kernels (plain_cells 1)");
  // One-cell kernels: 128 x 2 threads, one row each (fdtd2d.md: 256x1, 128x2 and 64x4 within 1 %,
  // 32x8 2 % and Takada's 32x4 21 % slower; two or four rows per thread slower). Several cells:
  // kPlainBlockVec threads (by measurement).
  const int dbx = cells_ == 1 ? 128 : kPlainBlockVec[cells_ / 4][0];
  const int dby = cells_ == 1 ? 2 : kPlainBlockVec[cells_ / 4][1];
  block_ = dim3(tuning.block_x > 0 ? tuning.block_x : dbx, tuning.block_y > 0 ? tuning.block_y : dby, 1);
  if (block_.x * block_.y > 1024)
    fail("Fdtd2dTuning block ", block_.x, " x ", block_.y, ": at most 1024 threads");

  std::vector<float> table;
  std::vector<std::uint16_t> index;
  using CS = Fdtd2dTuning::Coefficients;
  if (op.material_mode() == MaterialMode::indexed) {
    table = op.coefficient_table();
    const auto& ix = op.index_array();
    const bool uniform = std::all_of(ix.begin(), ix.end(), [&](std::uint16_t v) { return v == ix[0]; });
    if (uniform && !ix.empty()) {
      coef_kind_ = CoefKind::uniform;
      for (int s = 0; s < 3; ++s) {
        uniform_.a[s] = table[std::size_t(ix[0]) * 6 + 2 * s];
        uniform_.b[s] = table[std::size_t(ix[0]) * 6 + 2 * s + 1];
      }
    } else {
      index = ix;
      coef_kind_ = CoefKind::const_table;
    }
  } else if (tuning.coefficients != CS::arrays) {
    // Coefficient arrays packed as a table of the distinct 6-tuples and a 16-bit index (fewer
    // bytes per step), when there are at most 65536 tuples.
    const auto& arr = op.coefficient_arrays();
    struct Hash {
      std::size_t operator()(const std::array<std::uint32_t, 6>& k) const {
        std::size_t h = 1469598103934665603ull;
        for (auto v : k) h = (h ^ v) * 1099511628211ull;
        return h;
      }
    };
    std::unordered_map<std::array<std::uint32_t, 6>, int, Hash> seen;
    index.resize(L.size);
    bool fits = true;
    for (std::int64_t o = 0; o < L.size && fits; ++o) {
      std::array<std::uint32_t, 6> k;
      for (int q = 0; q < 6; ++q) std::memcpy(&k[q], &arr[q][o], 4);
      auto it = seen.find(k);
      if (it == seen.end()) {
        if (seen.size() == 65536) { fits = false; break; }
        it = seen.emplace(k, int(seen.size())).first;
        for (int q = 0; q < 6; ++q) table.push_back(arr[q][o]);
      }
      index[o] = std::uint16_t(it->second);
    }
    if (!fits) {
      if (tuning.coefficients == CS::table)
        fail("Fdtd2dTuning::coefficients = table: the model has more than 65536 distinct coefficient tuples");
      index.clear();
      table.clear();
    } else {
      coef_kind_ = CoefKind::const_table;
    }
  }
  if (coef_kind_ == CoefKind::const_table) {
    const std::size_t entries = table.size() / 6;
    if (entries > std::size_t(kTable2dCapacity) || !table_claim_.take(g_table2d_owner, this))
      coef_kind_ = CoefKind::global_table;
    else
      VEM_CUDA_CHECK(cudaMemcpyToSymbol(c_table2d, table.data(), table.size() * sizeof(float)));
  }
  if (coef_kind_ == CoefKind::uniform && tuning.coefficients == CS::table) {
    // A forced table reads the index even for one material (for measurements).
    index = op.index_array();
    table = op.coefficient_table();
    coef_kind_ = table.size() / 6 <= std::size_t(kTable2dCapacity) && table_claim_.take(g_table2d_owner, this)
                     ? CoefKind::const_table : CoefKind::global_table;
    if (coef_kind_ == CoefKind::const_table)
      VEM_CUDA_CHECK(cudaMemcpyToSymbol(c_table2d, table.data(), table.size() * sizeof(float)));
  }

  if (coef_kind_ == CoefKind::const_table) {
    blocked_table_ = kBlockedTableDefault;
    if (const char* t = std::getenv("VEM_FDTD2D_BLOCKED_TABLE")) {
      const std::string v = t;
      if (v == "constant") blocked_table_ = kTableConstant;
      else if (v == "shared") blocked_table_ = kTableShared;
      else if (v == "global") blocked_table_ = kTableGlobal;
      else fail("VEM_FDTD2D_BLOCKED_TABLE = '", v, "': constant, shared or global");
    }
    if (blocked_table_ == kTableShared && table.size() > std::size_t(kBlockedSmemTableFloats))
      blocked_table_ = kTableGlobal;
    if (blocked_table_ == kTableShared) blocked_table_floats_ = int(table.size());  // 6 per material: even
  }

  // Memory check before allocating: fields (x2 for the blocked kernel), index, table, arrays, CPML.
  std::int64_t need = op.device_bytes();
  if (time_block_ >= 2 && all_pec) need += 3 * L.size * std::int64_t(sizeof(float));
  std::size_t free_b = 0, total_b = 0;
  VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need > std::int64_t(free_b))
    fail("the 2D grid ", gr.nx, " x ", gr.ny, " needs ", need, " bytes of GPU memory; device ", device, " (",
         device_name_, ") has ", free_b, " bytes free of ", total_b);

  g_.nx = gr.nx; g_.ny = gr.ny;
  g_.pitch = int(L.pitch); g_.origin = int(L.origin);
  g_.idx = float(1.0 / gr.dx); g_.idy = float(1.0 / gr.dy);
  for (int s = 0; s < 3; ++s)
    for (int a = 0; a < 2; ++a) { g_.lo[s][a] = op.range_lo(s, a); g_.hi[s][a] = op.range_hi(s, a); }
  for (int s = 0; s < 3; ++s) {
    fields_[s].allocate(L.size, "field arrays");
    fields_[s].zero();
    F_.f[s] = fields_[s].ptr;
  }
  if (time_block_ >= 2 && all_pec)
    for (int s = 0; s < 3; ++s) { alt_[s].allocate(L.size, "second field arrays (temporal blocking)"); alt_[s].zero(); }
  if (!index.empty()) {
    index_.allocate(L.size, "material index array");
    index_.upload(index.data(), L.size);
  }
  // Where the 2- and 4-cell plain kernels read a material table that fits constant memory: constant
  // memory by default (kPlainTableGlobalDefault), or global memory through L1
  // (VEM_FDTD2D_PLAIN_TABLE=global). A warp's 4-cell groups span 4x the materials of a one-cell
  // warp row and divergent constant reads serialize; L1 is faster where the fields sit in L2
  // (1024^2) but slower at 8192^2 (fdtd2d.md, a470155).
  plain_table_global_ = cells_ > 1 && kPlainTableGlobalDefault;
  if (const char* t = std::getenv("VEM_FDTD2D_PLAIN_TABLE")) plain_table_global_ = cells_ > 1 && std::string(t) == "global";
  if (coef_kind_ == CoefKind::global_table ||
      (coef_kind_ == CoefKind::const_table && (blocked_table_ == kTableGlobal || plain_table_global_))) {
    table_.allocate(table.size(), "material coefficient table");
    table_.upload(table.data(), table.size());
  }
  if (coef_kind_ == CoefKind::arrays)
    for (int q = 0; q < 6; ++q) {
      coef_[q].allocate(L.size, "coefficient arrays");
      coef_[q].upload(op.coefficient_arrays()[q].data(), L.size);
    }

  // CPML: profiles and one psi box per slab and half step.
  for (int a = 0; a < 2; ++a) {
    const CpmlProfile& p = op.cpml_profile(a);
    ProfileArrays& d = profile_[a];
    auto up = [](DeviceArray<float>& dst, const std::vector<float>& src) {
      dst.allocate(src.size(), "CPML profiles");
      dst.upload(src.data(), src.size());
    };
    up(d.b_e, p.b_e); up(d.c_e, p.c_e); up(d.kinv_e, p.kinv_e);
    up(d.b_h, p.b_h); up(d.c_h, p.c_h); up(d.kinv_h, p.kinv_h);
  }
  const int n[2] = {gr.nx, gr.ny};
  for (const CpmlSlab& s : op.cpml_slabs()) {
    const int a = s.axis;
    for (int electric = 0; electric < 2; ++electric) {
      Slab2 sp{};
      for (int ax = 0; ax < 2; ++ax) { sp.o[ax] = 0; sp.d[ax] = n[ax] + 1; }
      sp.o[a] = electric ? s.e_begin : s.h_begin;
      sp.d[a] = std::max(0, electric ? s.e_end - s.e_begin + 1 : s.h_end - s.h_begin + 1);
      const std::int64_t cells = std::int64_t(sp.d[0]) * sp.d[1];
      if (cells == 0) continue;
      sp.axis = a;
      // Roles (slots: TM 0 Ez 1 Hx 2 Hy, TE 0 Hz 1 Ex 2 Ey), signs from the update equations.
      if (!te_) {
        if (electric) { sp.comp = 0; sp.src = a == 0 ? 2 : 1; sp.sign = a == 0 ? 1.0f : -1.0f; }
        else { sp.comp = a == 0 ? 2 : 1; sp.src = 0; sp.sign = a == 0 ? 1.0f : -1.0f; }
      } else {
        if (electric) { sp.comp = a == 0 ? 2 : 1; sp.src = 0; sp.sign = a == 0 ? -1.0f : 1.0f; }
        else { sp.comp = 0; sp.src = a == 0 ? 2 : 1; sp.sign = a == 0 ? -1.0f : 1.0f; }
      }
      sp.inv_d = a == 0 ? g_.idx : g_.idy;
      sp.lagged = op.cpml_profile(a).lagged ? 1 : 0;
      const ProfileArrays& pr = profile_[a];
      sp.b = electric ? pr.b_e.ptr : pr.b_h.ptr;
      sp.c = electric ? pr.c_e.ptr : pr.c_h.ptr;
      sp.kinv = electric ? pr.kinv_e.ptr : pr.kinv_h.ptr;
      auto psi = std::make_unique<DeviceArray<float>>();
      psi->allocate(std::size_t(cells), "CPML psi arrays");
      psi->zero();
      sp.psi = psi->ptr;
      psi_.push_back(std::move(psi));
      SlabSet2& set = electric ? set_e_ : set_h_;
      if (set.count == kMaxSlabs2) fail("2D CUDA engine: more than ", kMaxSlabs2, " CPML slabs");
      set.s[set.count] = sp;
      set.begin[set.count + 1] = set.begin[set.count] + cells;
      ++set.count;
    }
  }

  const auto& probes = op.probes();
  if (!probes.empty()) {
    std::vector<int> ps, po;
    for (const auto& p : probes) { ps.push_back(slot_of(p.probe.component)); po.push_back(int(p.offset)); }
    probe_slot_.allocate(ps.size(), "probe tables");
    probe_slot_.upload(ps.data(), ps.size());
    probe_offset_.allocate(po.size(), "probe tables");
    probe_offset_.upload(po.data(), po.size());
  }
  const auto& srcs = op.sources();
  for (std::size_t q = 0; q < srcs.size(); ++q) {
    const auto& s = srcs[q];
    for (int a = 0; a < 3; ++a) {
      if (!s.active[a]) continue;
      const std::int64_t r = s.offset[a] - FieldLayout2D::kXOffset;
      Point p;
      p.i = int(r % L.pitch);
      p.j = int(r / L.pitch) - 1;
      p.slot = a;
      p.electric = s.electric ? 1 : 0;
      p.hard = (s.kind == PointSource::Kind::hard_e || s.kind == PointSource::Kind::hard_h) ? 1 : 0;
      p.source = q;
      p.a = a;
      points_.push_back(p);
    }
  }
  pdl_ = prop.major >= 9;
  if (time_block_ >= 2) {
    const std::size_t smem = std::size_t(tile_w_) * tile_h_ * (3 * sizeof(float) + sizeof(std::uint16_t)) +
                             std::size_t(blocked_table_floats_) * sizeof(float);
    // The limit is per kernel and device, shared by every engine: only ever raised (an engine with
    // a smaller tile or no table must not lower it under one still running).
    static std::mutex mu;
    static std::unordered_map<int, std::size_t> set_smem;
    std::lock_guard<std::mutex> lock(mu);
    if (smem > set_smem[device]) {
      for (auto k : {step_blocked<false, false>, step_blocked<false, true>, step_blocked<true, false>,
                     step_blocked<true, true>})
        VEM_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      set_smem[device] = smem;
    }
    if (2 * time_block_ >= std::min(tile_w_, tile_h_))
      fail("Fdtd2dTuning::time_block = ", time_block_, " leaves no interior in a ", tile_w_, " x ", tile_h_, " tile");
  }
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

bool Fdtd2dEngineCuda::blocked_usable() const {
  if (time_block_ < 2 || !alt_[0].ptr || has_extensions()) return false;
  if (coef_kind_ != CoefKind::uniform && coef_kind_ != CoefKind::const_table) return false;
  if (points_.size() > std::size_t(kBlockedMaxPoints)) return false;
  if (op_.probes().size() > std::size_t(kBlockedMaxProbes)) return false;
  return true;
}

void Fdtd2dEngineCuda::push_points(bool electric, int step) {
  const double dt = op_.dt();
  PointUpdates2 u{};
  auto flush = [&]() {
    if (u.count == 0) return;
    apply_points2<<<1, kMaxPointUpdates>>>(F_, u);
    VEM_CUDA_CHECK_LAUNCH("apply_points2");
    u.count = 0;
  };
  for (const auto& s : op_.sources()) {
    if (s.electric != electric) continue;
    const bool hard = s.kind == PointSource::Kind::hard_e || s.kind == PointSource::Kind::hard_h;
    double t;  // the source times of the CPU engine (3D convention)
    switch (s.kind) {
      case PointSource::Kind::electric_current: t = (step + 0.5) * dt; break;
      case PointSource::Kind::hard_e: t = (step + 1.0) * dt; break;
      case PointSource::Kind::magnetic_current: t = step * dt; break;
      default: t = (step + 0.5) * dt; break;
    }
    const double w = s.waveform.value(t);
    for (int a = 0; a < 3; ++a) {
      if (!s.active[a]) continue;
      if (u.count == kMaxPointUpdates) flush();
      u.slot[u.count] = a;
      u.offset[u.count] = int(s.offset[a]);
      u.value[u.count] = float(s.scale[a] * w);
      u.set[u.count] = hard ? 1 : 0;
      ++u.count;
    }
  }
  flush();
}

template <bool TE, class Coef>
void Fdtd2dEngineCuda::launch_bulk(bool electric, const Coef& coef) {
  if (cells_ > 1) {
    const unsigned cx = block_.x * unsigned(cells_);
    const dim3 grid((g_.nx + 1 + cx - 1) / cx, (g_.ny + 1 + block_.y - 1) / block_.y);
    switch ((cells_ == 4 ? 4 : 0) + (streaming_ ? 2 : 0) + (electric ? 1 : 0)) {
      case 0: launch(update_h_vec<TE, 2, false, Coef>, grid, block_, F_, g_, coef); break;
      case 1: launch(update_e_vec<TE, 2, false, Coef>, grid, block_, F_, g_, coef); break;
      case 2: launch(update_h_vec<TE, 2, true, Coef>, grid, block_, F_, g_, coef); break;
      case 3: launch(update_e_vec<TE, 2, true, Coef>, grid, block_, F_, g_, coef); break;
      case 4: launch(update_h_vec<TE, 4, false, Coef>, grid, block_, F_, g_, coef); break;
      case 5: launch(update_e_vec<TE, 4, false, Coef>, grid, block_, F_, g_, coef); break;
      case 6: launch(update_h_vec<TE, 4, true, Coef>, grid, block_, F_, g_, coef); break;
      default: launch(update_e_vec<TE, 4, true, Coef>, grid, block_, F_, g_, coef); break;
    }
    VEM_CUDA_CHECK_LAUNCH(electric ? "update_e_vec" : "update_h_vec");
    return;
  }
  const dim3 grid((g_.nx + 1 + block_.x - 1) / block_.x,
                  (g_.ny + 1 + block_.y * rows_ - 1) / (block_.y * rows_));
  switch (rows_ * 2 + (electric ? 1 : 0)) {
    case 2: launch(update_h_plain<TE, 1, Coef>, grid, block_, F_, g_, coef); break;
    case 3: launch(update_e_plain<TE, 1, Coef>, grid, block_, F_, g_, coef); break;
    case 4: launch(update_h_plain<TE, 2, Coef>, grid, block_, F_, g_, coef); break;
    case 5: launch(update_e_plain<TE, 2, Coef>, grid, block_, F_, g_, coef); break;
    case 8: launch(update_h_plain<TE, 4, Coef>, grid, block_, F_, g_, coef); break;
    default: launch(update_e_plain<TE, 4, Coef>, grid, block_, F_, g_, coef); break;
  }
  VEM_CUDA_CHECK_LAUNCH(electric ? "update_e_plain" : "update_h_plain");
}

template <class Coef>
void Fdtd2dEngineCuda::step_plain(const Coef& coef, int step) {
  const auto& bc = op_.setup().boundaries;
  if (te_) launch_bulk<true>(false, coef); else launch_bulk<false>(false, coef);
  if (set_h_.count) {
    const long long total = set_h_.begin[set_h_.count];
    launch(cpml_all<false, Coef>, dim3(unsigned((total + 255) / 256)), dim3(256), F_, g_, set_h_, coef);
    VEM_CUDA_CHECK_LAUNCH("cpml_all (H)");
  }
  push_points(false, step);
  run_hooks(HookPoint::after_h, step);
  for (int a = 0; a < 2; ++a) {
    const BoundaryType lo = bc.face[2 * a], hi = bc.face[2 * a + 1];
    const bool any = lo == BoundaryType::pmc || lo == BoundaryType::periodic || hi == BoundaryType::pmc ||
                     hi == BoundaryType::periodic;
    if (!any) continue;
    const int m = a == 0 ? g_.ny : g_.nx;
    // The H component tangential to the faces of axis a: TM Hy (x) / Hx (y), TE Hz.
    const int hs = te_ ? 0 : (a == 0 ? 2 : 1);
    fill_h_ghosts2<<<(m + 1 + 255) / 256, 256>>>(F_, g_, a, hs, int(lo), int(hi));
    VEM_CUDA_CHECK_LAUNCH("fill_h_ghosts2");
  }
  if (te_) launch_bulk<true>(true, coef); else launch_bulk<false>(true, coef);
  if (set_e_.count) {
    const long long total = set_e_.begin[set_e_.count];
    launch(cpml_all<true, Coef>, dim3(unsigned((total + 255) / 256)), dim3(256), F_, g_, set_e_, coef);
    VEM_CUDA_CHECK_LAUNCH("cpml_all (E)");
  }
  push_points(true, step);
  run_hooks(HookPoint::after_e, step);
  for (int a = 0; a < 2; ++a) {
    if (bc.face[2 * a] != BoundaryType::periodic) continue;
    const int m = a == 0 ? g_.ny : g_.nx;
    // Tangential E of axis a: TM Ez; TE Ey (x faces) / Ex (y faces).
    const int es = te_ ? (a == 0 ? 2 : 1) : 0;
    copy_periodic_e2<<<(m + 1 + 255) / 256, 256>>>(F_, g_, a, es, -1);
    VEM_CUDA_CHECK_LAUNCH("copy_periodic_e2");
  }
  const int np = int(op_.probes().size());
  if (np > 0) {
    gather_probes2<<<(np + 127) / 128, 128>>>(F_, probe_slot_.ptr, probe_offset_.ptr, np,
                                             probe_buf_.ptr + std::size_t(step) * np);
    VEM_CUDA_CHECK_LAUNCH("gather_probes2");
  }
  run_hooks(HookPoint::end_of_step, step);
}

template <class Coef>
void Fdtd2dEngineCuda::run_plain(const Coef& coef, int first, int n) {
  for (int s = 0; s < n; ++s) step_plain(coef, first + s);
}

void Fdtd2dEngineCuda::run_blocked(int n) {
  // An even number of passes (the fields end in the engine's own arrays), steps spread evenly.
  int passes = (n + time_block_ - 1) / time_block_;
  if (passes % 2) ++passes;
  const FieldLayout2D& L = op_.layout();
  BlockedParams P{};
  P.g = g_;
  P.W = tile_w_;
  P.H = tile_h_;
  P.T = time_block_;
  P.array_lo_i = -FieldLayout2D::kXOffset;
  P.array_hi_i = int(L.pitch) - FieldLayout2D::kXOffset - 1;
  P.index = index_.ptr;
  P.uni = uniform_;
  P.npts = int(points_.size());
  for (int q = 0; q < P.npts; ++q) {
    P.pt_i[q] = points_[q].i;
    P.pt_j[q] = points_[q].j;
    P.pt_slot[q] = points_[q].slot;
    P.pt_electric[q] = points_[q].electric;
    P.pt_hard[q] = points_[q].hard;
  }
  const auto& probes = op_.probes();
  P.nprobes = int(probes.size());
  for (int q = 0; q < P.nprobes; ++q) {
    const std::int64_t r = probes[q].offset - FieldLayout2D::kXOffset;
    P.pr_i[q] = int(r % L.pitch);
    P.pr_j[q] = int(r / L.pitch) - 1;
    P.pr_slot[q] = slot_of(probes[q].probe.component);
  }
  const int inner_w = tile_w_ - 2 * time_block_, inner_h = tile_h_ - 2 * time_block_;
  const dim3 grid((g_.nx + 1 + inner_w - 1) / inner_w, (g_.ny + 1 + inner_h - 1) / inner_h);
  const dim3 block(32, 16);
  const bool indexed = coef_kind_ == CoefKind::const_table;
  P.table_mode = indexed ? blocked_table_ : kTableConstant;
  P.table_floats = indexed && blocked_table_ == kTableShared ? blocked_table_floats_ : 0;
  P.gtable = table_.ptr;
  const std::size_t smem = std::size_t(tile_w_) * tile_h_ * (3 * sizeof(float) + (index_.ptr ? sizeof(std::uint16_t) : 0)) +
                           std::size_t(P.table_floats) * sizeof(float);
  const double dt = op_.dt();
  const auto& srcs = op_.sources();
  float* a[3] = {fields_[0].ptr, fields_[1].ptr, fields_[2].ptr};
  float* b[3] = {alt_[0].ptr, alt_[1].ptr, alt_[2].ptr};
  int step = steps_;
  for (int pass = 0; pass < passes; ++pass) {
    const int k = n / passes + (pass < n % passes ? 1 : 0);
    P.steps = k;
    for (int s = 0; s < k; ++s)
      for (int q = 0; q < P.npts; ++q) {
        const Point& pt = points_[q];
        const auto& src = srcs[pt.source];
        double t;
        switch (src.kind) {
          case PointSource::Kind::electric_current: t = (step + s + 0.5) * dt; break;
          case PointSource::Kind::hard_e: t = (step + s + 1.0) * dt; break;
          case PointSource::Kind::magnetic_current: t = (step + s) * dt; break;
          default: t = (step + s + 0.5) * dt; break;
        }
        P.pt_value[s][q] = float(src.scale[pt.a] * src.waveform.value(t));
      }
    for (int c = 0; c < 3; ++c) { P.in[c] = a[c]; P.out[c] = b[c]; }
    P.probe_out = P.nprobes ? probe_buf_.ptr + std::size_t(step) * P.nprobes : nullptr;
    if (te_) {
      if (indexed) step_blocked<true, true><<<grid, block, smem>>>(P);
      else step_blocked<true, false><<<grid, block, smem>>>(P);
    } else {
      if (indexed) step_blocked<false, true><<<grid, block, smem>>>(P);
      else step_blocked<false, false><<<grid, block, smem>>>(P);
    }
    VEM_CUDA_CHECK_LAUNCH("step_blocked");
    std::swap(a, b);
    step += k;
  }
}

void Fdtd2dEngineCuda::do_steps(int n) {
  if (n <= 0) return;
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  const std::size_t np = op_.probes().size();
  if (np > 0 && std::size_t(steps_ + n) > probe_capacity_steps_) {
    const std::size_t cap = std::max<std::size_t>(steps_ + n, 2 * probe_capacity_steps_);
    DeviceArray<float> bigger;
    bigger.allocate(cap * np, "probe record");
    if (steps_ > 0)
      VEM_CUDA_CHECK(cudaMemcpy(bigger.ptr, probe_buf_.ptr, std::size_t(steps_) * np * sizeof(float),
                                cudaMemcpyDeviceToDevice));
    std::swap(bigger.ptr, probe_buf_.ptr);
    std::swap(bigger.count, probe_buf_.count);
    probe_capacity_steps_ = cap;
  }
  if (n >= 2 && blocked_usable()) {
    run_blocked(n);
  } else {
    switch (coef_kind_) {
      case CoefKind::uniform: run_plain(uniform_, steps_, n); break;
      case CoefKind::const_table:
        if (plain_table_global_) run_plain(CoefGlobalTable{index_.ptr, table_.ptr}, steps_, n);
        else run_plain(CoefConstTable{index_.ptr}, steps_, n);
        break;
      case CoefKind::global_table: run_plain(CoefGlobalTable{index_.ptr, table_.ptr}, steps_, n); break;
      case CoefKind::arrays: {
        CoefArrays c;
        for (int q = 0; q < 6; ++q) c.arr[q] = coef_[q].ptr;
        run_plain(c, steps_, n);
        break;
      }
    }
  }
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<float> Fdtd2dEngineCuda::probe_values() const {
  const std::size_t count = std::size_t(steps_) * op_.probes().size();
  std::vector<float> out(count);
  if (count) {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    VEM_CUDA_CHECK(cudaMemcpy(out.data(), probe_buf_.ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return out;
}

std::vector<float> Fdtd2dEngineCuda::field(Component c) const {
  const int s = slot_of(c);
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  const FieldLayout2D& L = op_.layout();
  std::vector<float> host(L.size);
  VEM_CUDA_CHECK(cudaMemcpy(host.data(), fields_[s].ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const YeeGrid2D& g = op_.grid();
  const auto n = g.samples(c);
  std::vector<float> out(std::size_t(g.nx + 1) * (g.ny + 1), 0.0f);
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) out[i + std::size_t(g.nx + 1) * j] = host[L.at(i, j)];
  return out;
}

void Fdtd2dEngineCuda::set_field(Component c, const std::vector<float>& values) {
  const int s = slot_of(c);
  const YeeGrid2D& g = op_.grid();
  if (values.size() != std::size_t(g.nx + 1) * (g.ny + 1))
    fail("set_field(", component_name(c), "): ", values.size(), " values, expected (nx+1)(ny+1) = ",
         std::size_t(g.nx + 1) * (g.ny + 1));
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  const FieldLayout2D& L = op_.layout();
  std::vector<float> host(L.size);
  VEM_CUDA_CHECK(cudaMemcpy(host.data(), fields_[s].ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const auto n = g.samples(c);
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) host[L.at(i, j)] = values[i + std::size_t(g.nx + 1) * j];
  VEM_CUDA_CHECK(cudaMemcpy(fields_[s].ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
}

std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine_cuda(const Fdtd2dOperator& op, int device,
                                                       const Fdtd2dTuning& tuning) {
  std::string why;
  if (!cuda_available(&why)) fail("the CUDA backend was requested but ", why);
  return std::make_unique<Fdtd2dEngineCuda>(op, device, tuning);
}

}  // namespace vem
