// The CUDA engine: the same update equations as the CPU engine (fdtd_operator.h), on the same
// padded layout (field_layout.h), arranged for the memory system of the GPU:
//  - bulk kernels map one thread to an (i,j) column and march over a chunk of z planes (the
//    xy-mapping of Demir & Elsherbeni), keeping the z-neighbour of the previous plane in
//    registers; the x- and y-neighbours come from L1/L2. The chunk length is a tuning knob:
//    1 (one thread per sample, the default) and 64 measure the same on an H100, whole columns
//    are slower (testing/benchmarks/results/fdtd.md). Each field value is loaded from DRAM once
//    per kernel (checked with Nsight Compute);
//  - the x pitch is a multiple of 32 floats with sample 0 on a 32-byte boundary (coalesced);
//  - indexed materials read one 16-bit index per sample and look the six coefficients up in a
//    table held in constant memory (up to kConstantTableCapacity entries) or global memory;
//    coefficient-array models with at most 65536 distinct tuples are read the same way, from
//    their packed table (FdtdOperator::coefficient_index, EngineTuning::coefficients);
//  - on Hopper the stepping kernels use programmatic dependent launch (pdl_begin below,
//    EngineTuning::launch): the next kernel is scheduled while the previous one drains;
//  - CPML corrections run only over the CPML slabs (cost proportional to their volume);
//  - the high-order schemes (fv24, fv24_wb, s22, s44) take a separate kernel path (update_ho_bulk,
//    ho_cpml_slab below), so the Yee kernels are unchanged.
// Every launch is checked (cuda_check.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fdtd/engine_common.h"
#include "fdtd/cuda/fused_step.h"
#include "fdtd/cuda/graph_stepping.cuh"
#include "fdtd/cuda/kernel_common.cuh"
#include "core/cuda_check.h"
#include "core/device_array.h"
#include "core/exclusive_claim.h"
#include "vem/core/error.h"
#include "vem/core/gpu_availability.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {

bool cuda_device_usable(std::string* why);

namespace {

// One constant-memory table per process: the first live engine that wants it gets it; engines
// created while it is taken use the global-memory table (automatic placement) or are refused
// (forced constant placement), so engines may run concurrently from several threads.
__constant__ float c_table[kConstantTableCapacity * 12];
std::atomic<const void*> g_constant_table_owner{nullptr};

// The engine's six field arrays. With a 2-byte field storage (FdtdSetup::field_storage) the
// pointers address __half / __nv_bfloat16 elements: the Yee kernels take them as FieldsOf<T>
// (as_storage below; kernel_common.cuh: loads widen, stores narrow), the high-order kernels only
// as float (the operator refuses the narrow storages with them).
struct FieldPtrs {
  float* f[6];
};
using cuda_kernels::FieldsOf;
template <class T>
FieldsOf<T> as_storage(const FieldPtrs& F) {
  FieldsOf<T> r;
  for (int c = 0; c < 6; ++c) r.f[c] = reinterpret_cast<T*>(F.f[c]);
  return r;
}

// A volume E source folded into the bulk E update (FdtdEngine::set_fused_e_source):
// E_c -= s_c.x cr - s_c.y ci; s[0] == nullptr means none.
struct FusedSource {
  const float2* s[3];
  float cr, ci;
};

struct GridParams {
  int nx, ny, nz;
  int sy, sz;          // strides (fit in 32 bits: one x-y plane of the layout)
  long long origin;    // offsets are 64-bit: layouts past 2^31 samples
  float inv_d[3];
  int lo[6][3], hi[6][3];  // update ranges (fdtd_operator.h)
};

// Coefficient access policies ------------------------------------------------------------
struct ConstantTable {
  const std::uint16_t* __restrict__ index;
  __device__ __forceinline__ int key(long long o) const { return int(__ldg(index + o)) * 12; }
  __device__ __forceinline__ float a(int c, long long o, int key) const { return c_table[key + 2 * c]; }
  __device__ __forceinline__ float b(int c, long long o, int key) const { return c_table[key + 2 * c + 1]; }
};
// The environment variable `name` is set to `value` (the engine's measurement switches).
inline bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::string(v) == value;
}
// A measurement switch `name`=1 / 0 that overrides the measured default `fallback` when set.
inline bool env_switch(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) == "1" : fallback;
}
// A measurement switch `name` holding an integer >= `least` that overrides `fallback` when set and
// not empty; any other value is refused with a message naming it.
inline int env_int(const char* name, int fallback, int least) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  const int x = std::atoi(v);
  if (x < least) fail(name, "=", v, ": expected an integer >= ", least);
  return x;
}
// A second stream whose work runs beside the engine's stream: fork() makes it wait for the work
// queued on `from` so far, join() makes `into` wait for the work queued on it so far. Temporal
// blocking's interior and the high-order shell run there.
struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  void create() {
    if (stream) return;
    VEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    VEM_CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
    VEM_CUDA_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  }
  void fork(cudaStream_t from) {
    VEM_CUDA_CHECK(cudaEventRecord(forked, from));
    VEM_CUDA_CHECK(cudaStreamWaitEvent(stream, forked, 0));
  }
  void join(cudaStream_t into) {
    VEM_CUDA_CHECK(cudaEventRecord(joined, stream));
    VEM_CUDA_CHECK(cudaStreamWaitEvent(into, joined, 0));
  }
  // Not checked: called from destructors, and a failed release leaves nothing to do.
  void release() {
    if (forked) cudaEventDestroy(forked);
    if (joined) cudaEventDestroy(joined);
    if (stream) cudaStreamDestroy(stream);
    stream = nullptr;
    forked = joined = nullptr;
  }
};
using cuda_kernels::CoefficientArrays;  // kernel_common.cuh
using cuda_kernels::GlobalTable;
using cuda_kernels::in;
using cuda_kernels::pdl_begin;
using cuda_kernels::cpml_component;  // the CPML corrections, written once (kernel_common.cuh)
using cuda_kernels::cpml_increment;
using cuda_kernels::cpml_source;

// The box of samples a bulk launch covers (inclusive, node indices): the whole grid, or, while a
// halo exchange overlaps the update, the interior or one of the slabs beside the receiving faces
// (FdtdEngineCuda::halo_setup). Thread (0,0,0) of the launch is sample w.lo.
struct Window {
  int lo[3], hi[3];
};

// Bulk E update. E_c <- ca E_c + cb [d_{c+1} H_{c+2} - d_{c+2} H_{c+1}] (fdtd_operator.h).
// Each thread updates `chunk` consecutive z planes of one (i,j) column, carrying H at k-1 in
// registers (chunk 1: one thread per sample).
// T: the storage's element type. A fused source is subtracted from the stored (rounded) bulk value,
// as the CPU engine's harmonic-current extension subtracts it from the stored E.
template <class Coef, class T>
__global__ void update_e_bulk(FieldsOf<T> F, GridParams g, Coef coef, int chunk, FusedSource src, Window w) {
  using cuda_kernels::ld;
  using cuda_kernels::rnd;
  using cuda_kernels::st;
  pdl_begin();
  const int i = w.lo[0] + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = w.lo[1] + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > w.hi[0] || j > w.hi[1]) return;
  const bool ex = in(i, g.lo[0][0], g.hi[0][0]) && in(j, g.lo[0][1], g.hi[0][1]);
  const bool ey = in(i, g.lo[1][0], g.hi[1][0]) && in(j, g.lo[1][1], g.hi[1][1]);
  const bool ez = in(i, g.lo[2][0], g.hi[2][0]) && in(j, g.lo[2][1], g.hi[2][1]);
  if (!ex && !ey && !ez) return;
  const int kfirst = max(w.lo[2], min(min(g.lo[0][2], g.lo[1][2]), g.lo[2][2]));
  const int k0 = kfirst + int(blockIdx.z) * chunk;
  const int k1 = min(min(w.hi[2], max(max(g.hi[0][2], g.hi[1][2]), g.hi[2][2])), k0 + chunk - 1);
  if (k0 > k1) return;
  T* __restrict__ Ex = F.f[0];
  T* __restrict__ Ey = F.f[1];
  T* __restrict__ Ez = F.f[2];
  const T* __restrict__ Hx = F.f[3];
  const T* __restrict__ Hy = F.f[4];
  const T* __restrict__ Hz = F.f[5];
  const int sy = g.sy, sz = g.sz;
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  long long o = g.origin + i + (long long)j * sy + (long long)k0 * sz;  // 64-bit: layouts past 2^31 samples
  float hx_m = ld(Hx + o - sz), hy_m = ld(Hy + o - sz);  // H at k0-1 (ghost plane when k0 = 0)
  const bool fused = src.s[0] != nullptr;
  for (int k = k0; k <= k1; ++k, o += sz) {
    const float hx = ld(Hx + o), hy = ld(Hy + o), hz = ld(Hz + o);
    const int key = coef.key(o);
    float jx = 0.0f, jy = 0.0f, jz = 0.0f;  // fused volume source (zero without one)
    if (src.s[0]) {
      const float2 a = src.s[0][o], b = src.s[1][o], c = src.s[2][o];
      jx = a.x * src.cr - a.y * src.ci;
      jy = b.x * src.cr - b.y * src.ci;
      jz = c.x * src.cr - c.y * src.ci;
    }
    // (fused ? rnd : identity): for float the same expression as before, a - 0 for no source.
    if (ex && in(k, g.lo[0][2], g.hi[0][2])) {
      const float v = coef.a(0, o, key) * ld(Ex + o) + coef.b(0, o, key) * ((hz - ld(Hz + o - sy)) * idy - (hy - hy_m) * idz);
      st(Ex + o, (fused ? rnd<T>(v) : v) - jx);
    }
    if (ey && in(k, g.lo[1][2], g.hi[1][2])) {
      const float v = coef.a(1, o, key) * ld(Ey + o) + coef.b(1, o, key) * ((hx - hx_m) * idz - (hz - ld(Hz + o - 1)) * idx);
      st(Ey + o, (fused ? rnd<T>(v) : v) - jy);
    }
    if (ez && in(k, g.lo[2][2], g.hi[2][2])) {
      const float v = coef.a(2, o, key) * ld(Ez + o) + coef.b(2, o, key) * ((hy - ld(Hy + o - 1)) * idx - (hx - ld(Hx + o - sy)) * idy);
      st(Ez + o, (fused ? rnd<T>(v) : v) - jz);
    }
    hx_m = hx;
    hy_m = hy;
  }
}

// Bulk H update. H_c <- da H_c - db [d_{c+1} E_{c+2} - d_{c+2} E_{c+1}].
template <class Coef, class T>
__global__ void update_h_bulk(FieldsOf<T> F, GridParams g, Coef coef, int chunk, Window w) {
  using cuda_kernels::ld;
  using cuda_kernels::st;
  pdl_begin();
  const int i = w.lo[0] + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = w.lo[1] + int(blockIdx.y * blockDim.y + threadIdx.y);
  if (i > w.hi[0] || j > w.hi[1]) return;
  const bool hx = in(i, g.lo[3][0], g.hi[3][0]) && in(j, g.lo[3][1], g.hi[3][1]);
  const bool hy = in(i, g.lo[4][0], g.hi[4][0]) && in(j, g.lo[4][1], g.hi[4][1]);
  const bool hz = in(i, g.lo[5][0], g.hi[5][0]) && in(j, g.lo[5][1], g.hi[5][1]);
  if (!hx && !hy && !hz) return;
  const T* __restrict__ Ex = F.f[0];
  const T* __restrict__ Ey = F.f[1];
  const T* __restrict__ Ez = F.f[2];
  T* __restrict__ Hx = F.f[3];
  T* __restrict__ Hy = F.f[4];
  T* __restrict__ Hz = F.f[5];
  const int sy = g.sy, sz = g.sz, nz = g.nz;
  const float idx = g.inv_d[0], idy = g.inv_d[1], idz = g.inv_d[2];
  const int k0 = w.lo[2] + int(blockIdx.z) * chunk;
  const int k1 = min(min(nz, w.hi[2]), k0 + chunk - 1);
  if (k0 > k1) return;
  long long o = g.origin + i + (long long)j * sy + (long long)k0 * sz;
  float ex_k = ld(Ex + o), ey_k = ld(Ey + o);  // E at plane k, carried from the previous iteration
  for (int k = k0; k <= k1; ++k, o += sz) {
    const bool more = k < nz;
    const float ex_p = more ? ld(Ex + o + sz) : 0.0f;
    const float ey_p = more ? ld(Ey + o + sz) : 0.0f;
    const float ez = ld(Ez + o);
    const int key = coef.key(o);
    if (hx && more)
      st(Hx + o, coef.a(3, o, key) * ld(Hx + o) - coef.b(3, o, key) * ((ld(Ez + o + sy) - ez) * idy - (ey_p - ey_k) * idz));
    if (hy && more)
      st(Hy + o, coef.a(4, o, key) * ld(Hy + o) - coef.b(4, o, key) * ((ex_p - ex_k) * idz - (ld(Ez + o + 1) - ez) * idx));
    if (hz)
      st(Hz + o, coef.a(5, o, key) * ld(Hz + o) - coef.b(5, o, key) * ((ld(Ey + o + 1) - ey_k) * idx - (ld(Ex + o + sy) - ex_k) * idy));
    ex_k = ex_p;
    ey_k = ey_p;
  }
}

// CPML correction over one slab (fdtd_operator.h), templated on the slab axis and on E/H so all
// indexing is resolved at compile time; a 3D launch over the slab's psi box (x fastest).
struct SlabParams {
  int o[3], d[3];   // box origin and extent (see PsiBox)
  const float* b;   // profile along the axis (E- or H-type positions)
  const float* c;
  const float* kinv;
  float* psi[2];
  float inv_d;
  int lagged;       // CpmlProfile::lagged: the derivative uses psi before this step's update
};

// CPML correction of one sample (li, lj, lk) of a slab box (SlabParams) whose normal is axis A.
template <int A, bool ELECTRIC, class Coef, class T>
__device__ __forceinline__ void cpml_cell(const FieldsOf<T>& F, const GridParams& g, const SlabParams& s,
                                          const Coef& coef, int li, int lj, int lk) {
  const int i = s.o[0] + li, j = s.o[1] + lj, k = s.o[2] + lk;
  const int x = A == 0 ? i : (A == 1 ? j : k);
  const long long o = g.origin + i + (long long)j * g.sy + (long long)k * g.sz;
  const int sa = A == 0 ? 1 : (A == 1 ? g.sy : g.sz);
  const int t = li + s.d[0] * (lj + s.d[1] * lk);
  const int key = coef.key(o);
  const float b = __ldg(s.b + x), c = __ldg(s.c + x), km1 = __ldg(s.kinv + x) - 1.0f;
  // Components, sources and signs: cpml_component / cpml_source (kernel_common.cuh).
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    const int comp = cuda_kernels::cpml_component(A, ELECTRIC, q);
    const int src = cuda_kernels::cpml_source(A, ELECTRIC, q);
    if (!in(i, g.lo[comp][0], g.hi[comp][0]) || !in(j, g.lo[comp][1], g.hi[comp][1]) ||
        !in(k, g.lo[comp][2], g.hi[comp][2]))
      continue;
    using cuda_kernels::ld;
    const T* S = F.f[src];
    const float dF = ELECTRIC ? (ld(S + o) - ld(S + o - sa)) * s.inv_d : (ld(S + o + sa) - ld(S + o)) * s.inv_d;
    T* U = F.f[comp] + o;
    cuda_kernels::st(U, ld(U) + cuda_kernels::cpml_increment(b, c, km1, coef.b(comp, o, key), q == 0 ? 1.0f : -1.0f,
                                                             dF, s.psi[q][t], s.lagged, &s.psi[q][t]));
  }
}

// CPML slabs in one launch, one thread per psi sample, the slabs one after the other along
// blockIdx.x in face order (x-low, x-high, y-low, ..., z-high). Per-face launches cost more than
// their work on small grids. Two ways to launch (EngineTuning::cpml):
//  - merged: all six slabs in one launch per half step. Slabs of different axes overlap along the
//    domain's edges and correct the same samples there; such a sample is handled by the thread of
//    the first axis whose slab holds it, which applies the corrections of every slab holding it in
//    the order x, y, z (the order of the CPU engine's per-slab loops: the same sums in the same
//    order); the later axes' threads for that sample return at once.
//  - per axis: one launch per axis (its two slabs never overlap), in the order x, y, z; the same
//    kernel with a set of one axis (the membership tests then find nothing).
// Same-session A/B on an H100 (results/fdtd.md), Mcells/s merged / per axis: indexed 64^3
// 8,016-8,228 / 5,899-6,465, 128^3 11,889-11,938 / 11,354-11,376, 256^3 15,962-15,973 /
// 16,250-16,255; coefficient arrays alike. Automatic: merged below 8 M cells.
constexpr int kMaxSlabs = 6;
struct SlabSet {
  SlabParams s[kMaxSlabs];
  int axis[kMaxSlabs];
  long long begin[kMaxSlabs + 1];  // first thread of each slab; begin[count] = total
  int count;
};

__device__ __forceinline__ bool in_slab(const SlabParams& s, int i, int j, int k) {
  return i >= s.o[0] && i < s.o[0] + s.d[0] && j >= s.o[1] && j < s.o[1] + s.d[1] && k >= s.o[2] &&
         k < s.o[2] + s.d[2];
}

template <bool ELECTRIC, class Coef, class T>
__device__ __forceinline__ void cpml_slab_cell(const FieldsOf<T>& F, const GridParams& g, const SlabParams& s,
                                               int axis, const Coef& coef, int i, int j, int k) {
  const int li = i - s.o[0], lj = j - s.o[1], lk = k - s.o[2];
  switch (axis) {
    case 0: cpml_cell<0, ELECTRIC>(F, g, s, coef, li, lj, lk); break;
    case 1: cpml_cell<1, ELECTRIC>(F, g, s, coef, li, lj, lk); break;
    default: cpml_cell<2, ELECTRIC>(F, g, s, coef, li, lj, lk); break;
  }
}

template <bool ELECTRIC, class Coef, class T>
__global__ void cpml_correct_all(FieldsOf<T> F, GridParams g, SlabSet set, Coef coef) {
  pdl_begin();
  const long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (u >= set.begin[set.count]) return;
  int q = 0;
  while (u >= set.begin[q + 1]) ++q;
  const SlabParams& s = set.s[q];
  const long long t = u - set.begin[q];
  const int i = s.o[0] + int(t % s.d[0]);
  const long long r = t / s.d[0];
  const int j = s.o[1] + int(r % s.d[1]);
  const int k = s.o[2] + int(r / s.d[1]);
  const int axis = set.axis[q];
  for (int p = 0; p < set.count; ++p)  // an earlier axis's thread owns this sample
    if (set.axis[p] < axis && in_slab(set.s[p], i, j, k)) return;
  for (int p = q; p < set.count; ++p)  // this slab, then the later axes' slabs holding it
    if (p == q || (set.axis[p] > axis && in_slab(set.s[p], i, j, k)))
      cpml_slab_cell<ELECTRIC>(F, g, set.s[p], set.axis[p], coef, i, j, k);
}

// Ghost H samples for PMC (mirror, opposite sign) and periodic (wrap) faces of axis a.
template <class T>
__global__ void fill_h_ghosts(FieldsOf<T> F, GridParams g, int a, int lo_type, int hi_type) {
  const int n[3] = {g.nx, g.ny, g.nz};
  const int b = (a + 1) % 3, d = (a + 2) % 3;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u > n[b] || v > n[d]) return;
  int idx3[3];
  idx3[a] = 0; idx3[b] = u; idx3[d] = v;
  const int s[3] = {1, g.sy, g.sz};
  const long long sa = s[a];
  const long long o0 = g.origin + idx3[0] + (long long)idx3[1] * g.sy + (long long)idx3[2] * g.sz;
  const long long oN = o0 + n[a] * sa;
  for (int q = 1; q <= 2; ++q) {
    T* H = F.f[3 + (a + q) % 3];  // copies and sign changes: exact in every storage
    if (lo_type == int(BoundaryType::pmc)) H[o0 - sa] = -H[o0];
    if (lo_type == int(BoundaryType::periodic)) H[o0 - sa] = H[oN - sa];
    if (hi_type == int(BoundaryType::pmc)) H[oN] = -H[oN - sa];
    if (hi_type == int(BoundaryType::periodic)) H[oN] = H[o0];
  }
}

// Periodic axis a: tangential E on node plane N equals plane 0.
template <class T>
__global__ void copy_periodic_e(FieldsOf<T> F, GridParams g, int a) {
  const int n[3] = {g.nx, g.ny, g.nz};
  const int b = (a + 1) % 3, d = (a + 2) % 3;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u > n[b] || v > n[d]) return;
  int idx3[3];
  idx3[a] = 0; idx3[b] = u; idx3[d] = v;
  const int s[3] = {1, g.sy, g.sz};
  const long long o0 = g.origin + idx3[0] + (long long)idx3[1] * g.sy + (long long)idx3[2] * g.sz;
  for (int q = 1; q <= 2; ++q) {
    T* E = F.f[(a + q) % 3];
    E[o0 + (long long)n[a] * s[a]] = E[o0];
  }
}

// One node plane of one array <-> a dense buffer (halo exchange through subdomain faces).
// The buffer is float; a plane written into a narrow storage is rounded to it.
template <class T>
__global__ void plane_copy(T* field, GridParams g, int axis, int index, float* buf, bool to_buffer) {
  const int n[3] = {g.nx, g.ny, g.nz};
  const int b = (axis + 1) % 3, d = (axis + 2) % 3;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u > n[b] || v > n[d]) return;
  int idx3[3];
  idx3[axis] = index; idx3[b] = u; idx3[d] = v;
  const long long o = g.origin + idx3[0] + (long long)idx3[1] * g.sy + (long long)idx3[2] * g.sz;
  const long long t = u + (long long)(n[b] + 1) * v;
  if (to_buffer) buf[t] = cuda_kernels::to_f(field[o]);
  else cuda_kernels::st(field + o, buf[t]);
}

constexpr int kMaxPointUpdates = 128;  // per launch (a thin-wire antenna has ~100 PEC edges)
struct PointUpdates {
  int count;
  int field[kMaxPointUpdates];
  long long offset[kMaxPointUpdates];
  float value[kMaxPointUpdates];
  int set[kMaxPointUpdates];  // 1: overwrite (hard source), 0: add (soft source)
};

// The smallest offset of a non-finite element (first_non_finite), grid-stride.
template <class T>
__global__ void find_non_finite(const T* __restrict__ f, long long n, unsigned long long* first) {
  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < n; o += (long long)gridDim.x * blockDim.x)
    if (!isfinite(cuda_kernels::to_f(f[o]))) atomicMin(first, (unsigned long long)o);
}

// Element-wise conversion between a field array and a float buffer (field(), set_field()).
template <class S, class D>
__global__ void storage_convert(const S* __restrict__ src, D* __restrict__ dst, long long n) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t < n) dst[t] = cuda_kernels::from_f<D>(cuda_kernels::to_f(src[t]));
}

template <class T>
__global__ void apply_point_updates(FieldsOf<T> F, PointUpdates u) {
  const int t = threadIdx.x;
  if (t >= u.count) return;
  T* p = F.f[u.field[t]] + u.offset[t];
  cuda_kernels::st(p, u.set[t] ? u.value[t] : cuda_kernels::ld(p) + u.value[t]);
}

template <class T>
__global__ void gather_probes(FieldsOf<T> F, const int* __restrict__ field, const long long* __restrict__ offset,
                              int count, float* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) out[t] = cuda_kernels::to_f(F.f[field[t]][offset[t]]);
}


// High-order schemes (fv24, fv24_wb, s22, s44; vem/fdtd/schemes/fdtd_scheme.h) --------------
// A separate kernel path: the Yee kernels above are untouched. The stencil is the CPU engine's
// (build_high_order_stencil, engine_common.h): for every component and axis an offset and a sign
// per index -kReach..n+kReach, which apply the periodic wrap and the PEC/PMC images (PEC behind a
// CPML) exactly as the CPU engine does, with the same terms in the same order. Those tables are
// the identity for samples at least 2 from every face (FdtdEngineCpu::ho_interior), so three
// kernel variants (EngineTuning::ho_kernel) give the same fields bit for bit:
//  - tables (update_ho_bulk): every stencil point of every sample through the tables, the terms
//    from HoTerms at run time. The first version (9-10x Yee at 512^3, results/highorder_bench_
//    h100_512.md): 6 table loads per field load. Kept for comparison and for stencils of another
//    shape than the four schemes'.
//  - direct (ho_interior_direct + ho_shell): the interior box (2..n-3 on every axis, within every
//    component's update range) with the stencil's shape a template parameter (kShape*: which of the
//    six weight classes are present; the weights themselves depend on S and the design resolution,
//    so they are kernel parameters, read from the constant bank like immediates), neighbours at
//    compile-time offsets from the sample, through L1; the three components of a sample in one
//    thread (as the Yee kernels). The boundary shell (the samples outside the interior box, ~3 %
//    at 512^3) through the tables, each source component's entries loaded once per sample and
//    only along the axes where the sample is within 2 of a face (table_acc). The shell is cut
//    into faces (near the faces of one axis: ho_shell<..., A>, that axis's entries only, 56-72
//    registers) and edges (ho_shell<..., -1>, 100-104 registers): fv24 +9 % at 512^3.
//  - tiled (ho_interior_tiled + ho_shell): the interior through shared memory: a block of 32 x 8
//    columns marches over a chunk of z planes keeping a ring of 4 planes of the three source
//    components with their 3-sample halo (the stencil reaches -2..+1 (E) or -1..+2 (H) on each axis);
//    the next plane is loaded into registers before the current one is computed (its loads overlap
//    the arithmetic; the first version loaded it between two barriers: 1.67-1.70x Yee on the H100).
//    The sample's own material key and updated values are loaded a plane ahead as well (+30-38 %
//    at 512^3; a ring of 6 planes filled by asynchronous copies two planes ahead lost:
//    testing/benchmarks/results/highorder.md). In the core (the launches without the CPML
//    corrections) a thread updates two samples one row apart, whose stencils share most of their
//    shared-memory loads (32 x 16 tiles; fv24 +5.8 %, s22 +2.1 % at 512^3 on an H200, fv24_wb's H
//    keeps one row: session 41).
//    With the leap-frog schemes the CPML corrections are folded into the tiled and shell kernels
//    (HoFold, ho_cpml_fold; EngineTuning::ho_cpml): the interior box is cut into the bands that
//    meet a slab, run by an instance with the corrections, and the core, run without them.
//    The folded box also takes the shell's x and z faces (0..n-1 along x and z): the band
//    instance reads those axes' tables into its ring near a face and tests each component's x and
//    z ranges, so only the column x = n, the plane z = n, the y faces and the edges are left to
//    ho_shell (fv24 +11 %, fv24_wb +11 %, s22 +11 % at 512^3 against the same build's shell;
//    VEM_HO_X_FACES / VEM_HO_Z_FACES=shell for measurement).
//    Launches (session 20, results/highorder.md): the bands go in one launch (HoTileSet), and the
//    shell's kernels run on a side stream beside the interior's (SideStream). Each launch on
//    its own ended on a partial wave or left the machine idle: fv24 +4.3 %, fv24_wb +6.0 %, s22
//    +5.4 % at 512^3 with the core instances' launch bounds (ho_core_blocks).
// s44's direct kernel (s44_direct) starts its folded core on a 128-byte line (the low x band
// takes the columns below), so the core's warps load and store whole lines: +12.4 % at 512^3 on
// an H200 (session 38; the other launches' blocks started on a line too lost 3.4 %).
// s44 (Hwang & Ihm) keeps three earlier time levels per component (HoParams::hist). They are not
// shifted in memory: the update writes F^{n+1/2} into the array of F^{n-7/2}, and the host rotates
// the four arrays' roles (FdtdEngineCuda::rotate_s44), 5 accesses a sample instead of 8.
struct HoTerms {
  int count;
  int hi[HighOrderStencil::kMaxTerms], lo[HighOrderStencil::kMaxTerms];
  int tb[HighOrderStencil::kMaxTerms], td[HighOrderStencil::kMaxTerms];
  float w[HighOrderStencil::kMaxTerms];
};
struct HoParams {
  const int* __restrict__ off;     // resolve offsets, all (component, axis) tables one after the other
  const float* __restrict__ sign;  // resolve signs, same indexing
  int base[6][3];                  // first entry of each table (index -kReach)
  HoTerms terms[2];                // [0] backward (E from H), [1] forward (H from E)
  float w[2][3];                   // SchemeStencil::w as float (the same values as the terms')
  int s44;                         // s44: Hwang & Ihm backward time differences (fdtd_scheme.h)
  float* hist[6][3];               // s44: the arrays of F^{n-1}, F^{n-2}, F^{n-3}
  float* dst[6];                   // s44: the array receiving F^{n+1}: hist[c][2], or a spare with the pair
                                   // (FdtdEngineCuda::step_pair_s44)
};

// The resolve table entry of source component src along axis a for index m (-kReach..n+kReach;
// build_high_order_stencil): its layout offset along a and its sign.
__device__ __forceinline__ int ho_table_entry(const HoParams& p, int src, int a, int m) {
  return p.base[src][a] + HighOrderStencil::kReach + m;
}
__device__ __forceinline__ void ho_table(const HoParams& p, int src, int a, int m, int& off, float& sign) {
  const int e = ho_table_entry(p, src, a, m);
  off = __ldg(p.off + e);
  sign = __ldg(p.sign + e);
}

// Stencil shapes (bits: which weight classes besides the two centre ones are present).
constexpr int kShapeN1 = 1, kShapeN2 = 2, kShapeW1 = 4, kShapeW2 = 8;  // narrow/wide axis, diagonal
constexpr int kShapeS44 = 0;                     // 9/8, -1/24
constexpr int kShapeFv24Wb = kShapeW2;           // + wide diagonal neighbours
constexpr int kShapeFv24 = kShapeW1 | kShapeW2;  // + wide axis and diagonal neighbours
constexpr int kShapeS22 = kShapeN1 | kShapeW1;   // + narrow and wide axis neighbours
constexpr int kShapeTables = -1;                 // any other shape: the tables kernel
// Shapes whose tiled and shell kernels are compiled with the CPML folded in (the leap-frog
// schemes; the tables kernel keeps the slab kernels).
constexpr bool ho_foldable(int shape) { return shape == kShapeFv24 || shape == kShapeFv24Wb || shape == kShapeS22; }
// Shapes whose shell kernels fold them: those, and s44, which folds them into its direct kernel
// (s44_direct) and its shell kernels (ho_shell_component).
constexpr bool ho_shell_foldable(int shape) { return ho_foldable(shape) || shape == kShapeS44; }

// D_A F (unscaled by 1/h) from an accessor acc(x, y, z) = F at that offset from the sample; FW:
// forward difference. The terms and their order are build_high_order_stencil's (p = 1/2 then
// 3/2; centre, axis neighbours (s, 0), (0, s) for s = -1, 1, diagonal ones (s, u)), each added as
// sum += w (F(hi) - F(lo)), so every accessor gives the same arithmetic.
template <int A, bool FW, int SHAPE, class Acc>
__device__ __forceinline__ float ho_dfast(const Acc& acc, const float (&w)[2][3]) {
  constexpr int B = (A + 1) % 3, D = (A + 2) % 3;
  float sum = 0.0f;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const int hi = FW ? p + 1 : p;       // backward (0, -1), (1, -2); forward (1, 0), (2, -1)
    const int lo = FW ? -p : -1 - p;
    auto term = [&](float wt, int tb, int td) {
      int h[3], l[3];
      h[A] = hi; l[A] = lo;
      h[B] = l[B] = tb;
      h[D] = l[D] = td;
      sum += wt * (acc(h[0], h[1], h[2]) - acc(l[0], l[1], l[2]));
    };
    term(w[p][0], 0, 0);
    if ((p == 0 && (SHAPE & kShapeN1)) || (p == 1 && (SHAPE & kShapeW1))) {
      const float wt = w[p][1];
      term(wt, -1, 0); term(wt, 0, -1); term(wt, 1, 0); term(wt, 0, 1);
    }
    if ((p == 0 && (SHAPE & kShapeN2)) || (p == 1 && (SHAPE & kShapeW2))) {
      const float wt = w[p][2];
      term(wt, -1, -1); term(wt, -1, 1); term(wt, 1, -1); term(wt, 1, 1);
    }
  }
  return sum;
}

// Interior accessor: plain loads at compile-time offsets (through L1).
struct DirectAcc {
  const float* __restrict__ f;  // the field at the sample
  int sy, sz;
  __device__ __forceinline__ float operator()(int x, int y, int z) const { return __ldg(f + x + y * sy + z * sz); }
};

// Boundary accessor: the resolve tables' entries for the sample's -2..+2 neighbourhood, loaded
// once (the stencil's offsets are within 2 of the sample on every axis); the same products as
// the CPU engine's ho_diff (sign product, then times the field where it is nonzero).
struct TableAcc {
  const float* __restrict__ f;  // field + layout origin
  int off[3][5];
  float sg[3][5];
  __device__ __forceinline__ float operator()(int x, int y, int z) const {
    const float s = sg[0][x + 2] * sg[1][y + 2] * sg[2][z + 2];
    return s != 0.0f ? s * __ldg(f + off[0][x + 2] + off[1][y + 2] + off[2][z + 2]) : 0.0f;
  }
};
// Along an axis where the sample is at least 2 from both faces the table entries are the identity
// (index times stride, sign 1: no wrap or image reaches there), so only the other axes' entries
// are loaded: a sample of the boundary shell near one face loads 10 entries, not 30.
template <int SRC>
__device__ __forceinline__ TableAcc table_acc(const HoParams& p, const GridParams& g, const float* f, int i, int j,
                                              int k) {
  TableAcc t;
  t.f = f + g.origin;
  const int idx[3] = {i, j, k};
  const int n[3] = {g.nx, g.ny, g.nz};
  const int stride[3] = {1, g.sy, g.sz};
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    if (idx[a] >= 2 && idx[a] <= n[a] - 3) {
#pragma unroll
      for (int d = 0; d < 5; ++d) {
        t.off[a][d] = (idx[a] + d - 2) * stride[a];
        t.sg[a][d] = 1.0f;
      }
    } else {
#pragma unroll
      for (int d = 0; d < 5; ++d) ho_table(p, SRC, a, idx[a] + d - 2, t.off[a][d], t.sg[a][d]);
    }
  }
  return t;
}

// Shared-memory accessor of the tiled kernel: pb[q] = the sample's position in the ring slot of
// plane k + ZLO + q (ho_smem, one ring of 4 planes of WX-wide rows per source component).
extern __shared__ float ho_smem[];
template <int WX, int ZLO>
struct TileAcc {
  int pb[4];
  __device__ __forceinline__ float operator()(int x, int y, int z) const { return ho_smem[pb[z - ZLO] + x + y * WX]; }
};

// The leap-frog update of component SELF (C of E or H) at layout offset o from its curl, with the
// sample's material key and current value u given (FdtdEngineCpu::bulk_ho's arithmetic; ho_store
// reads key and u itself, the tiled kernel a plane ahead).
template <bool ELECTRIC, int C, class Coef>
__device__ __forceinline__ float ho_leapfrog(const Coef& coef, const FusedSource& src, int o, int key, float u,
                                             float curl) {
  constexpr int SELF = ELECTRIC ? C : 3 + C;
  if (ELECTRIC) {
    float jc = 0.0f;
    if (src.s[0]) {
      const float2 v = src.s[C][o];
      jc = v.x * src.cr - v.y * src.ci;
    }
    return coef.a(SELF, o, key) * u + coef.b(SELF, o, key) * curl - jc;
  }
  return coef.a(SELF, o, key) * u - coef.b(SELF, o, key) * curl;
}

// s44's new level of component C at layout offset o from its curl (FdtdEngineCpu::bulk_ho's
// arithmetic); *cb: the curl's coefficient (the CPML corrections' too).
template <bool ELECTRIC, int C, class Coef>
__device__ __forceinline__ float s44_value(const FieldPtrs& F, const HoParams& p, const Coef& coef,
                                           const FusedSource& src, int o, int key, float curl, float* cb) {
  constexpr int SELF = ELECTRIC ? C : 3 + C;
  const float b = coef.b(SELF, o, key);
  const S44Coefficients q = s44_coefficients(coef.a(SELF, o, key), b);
  float jc = 0.0f;  // a fused source was scaled with b: rescale to the curl's coefficient
  if (ELECTRIC && src.s[0] && b != 0.0f) {
    const float2 v = src.s[C][o];
    jc = (v.x * src.cr - v.y * src.ci) * (q.cb / b);
  }
  const float u0 = F.f[SELF][o], u1 = p.hist[SELF][0][o], u2 = p.hist[SELF][1][o], u3 = p.hist[SELF][2][o];
  *cb = q.cb;
  return q.c[0] * u0 + q.c[1] * u1 + q.c[2] * u2 + q.c[3] * u3 + (ELECTRIC ? 1.0f : -1.0f) * q.cb * curl - jc;
}

// The update of component SELF at layout offset o from its curl (same arithmetic as
// FdtdEngineCpu::bulk_ho); s44 writes F^{n+1} into p.dst (the array of F^{n-3}, or a spare with the pair).
template <bool ELECTRIC, int C, class Coef>
__device__ __forceinline__ void ho_store(const FieldPtrs& F, const HoParams& p, const Coef& coef,
                                         const FusedSource& src, int o, float curl) {
  constexpr int SELF = ELECTRIC ? C : 3 + C;
  const int key = coef.key(o);
  float* U = F.f[SELF];
  if (p.s44) {
    float cb;
    p.dst[SELF][o] = s44_value<ELECTRIC, C>(F, p, coef, src, o, key, curl, &cb);
  } else {
    U[o] = ho_leapfrog<ELECTRIC, C>(coef, src, o, key, U[o], curl);
  }
}

// The curl term of component C's update: D_{C+1} of accD's component minus D_{C+2} of accB's, each
// scaled by its inverse cell size.
template <bool ELECTRIC, int C, int SHAPE, class AccD, class AccB>
__device__ __forceinline__ float ho_curl(const GridParams& g, const HoParams& p, const AccD& accD, const AccB& accB) {
  constexpr int B = (C + 1) % 3, D = (C + 2) % 3;
  return ho_dfast<B, !ELECTRIC, SHAPE>(accD, p.w) * g.inv_d[B] - ho_dfast<D, !ELECTRIC, SHAPE>(accB, p.w) * g.inv_d[D];
}

// The curl's two scaled derivatives, kept for the folded CPML corrections (ho_cpml_fold): the curl
// is dB - dD, the same arithmetic as ho_curl.
template <bool ELECTRIC, int C, int SHAPE, class AccD, class AccB>
__device__ __forceinline__ void ho_curl_parts(const GridParams& g, const HoParams& p, const AccD& accD,
                                              const AccB& accB, float& dB, float& dD) {
  constexpr int B = (C + 1) % 3, D = (C + 2) % 3;
  dB = ho_dfast<B, !ELECTRIC, SHAPE>(accD, p.w) * g.inv_d[B];
  dD = ho_dfast<D, !ELECTRIC, SHAPE>(accB, p.w) * g.inv_d[D];
}

// CPML corrections folded into the high-order update (EngineTuning::ho_cpml, issue 15). The slab
// kernel (ho_cpml_slab) recomputes D_a of a source component that the curl has just computed: the
// correction of component C by the slab normal to axis a uses D_a of the curl's own derivative
// along a (dB for a = C+1, dD for a = C+2; the slab's inv_d is the grid's, so the values are the
// same bit for bit). A half step's corrections read only the other field, and each psi sample
// belongs to one component, so applying them to the updated value in a register before it is
// stored, slab by slab in the slab kernels' order (axis ascending, low face first), gives the
// fields of the bulk kernel followed by the slab kernels bit for bit.
struct HoFold {
  SlabParams s[3][2];  // [axis][low face, high face]; the box spans every sample along the other axes
  int has[3][2];
};

// Correction of component C of E (ELECTRIC) or H by slab (A, SIDE) at (i, j, k), layout offset o:
// the slab's psi q whose component (cpml_component, kernel_common.cuh) is C, its source the one
// the curl differentiates along A.
template <bool ELECTRIC, int C, int A, int SIDE>
__device__ __forceinline__ void ho_fold_slab(const HoFold& f, int i, int j, int k, float& v, float dB, float dD,
                                             float cb) {
  constexpr int B = (C + 1) % 3, D = (C + 2) % 3;
  constexpr int SELF = ELECTRIC ? C : 3 + C, OTHER = ELECTRIC ? 3 : 0;
  constexpr int Q = cpml_component(A, ELECTRIC, 0) == SELF ? 0 : 1;
  static_assert(cpml_component(A, ELECTRIC, Q) == SELF, "slab A does not correct component C");
  static_assert(cpml_source(A, ELECTRIC, Q) == OTHER + (A == B ? D : B), "the curl's derivative along A");
  const SlabParams& s = f.s[A][SIDE];
  if (!f.has[A][SIDE]) return;
  const int x = A == 0 ? i : (A == 1 ? j : k);
  if (x < s.o[A] || x >= s.o[A] + s.d[A]) return;
  const int t = (i - s.o[0]) + s.d[0] * ((j - s.o[1]) + s.d[1] * (k - s.o[2]));
  float np;
  v += cpml_increment(__ldg(s.b + x), __ldg(s.c + x), __ldg(s.kinv + x) - 1.0f, cb, Q == 0 ? 1.0f : -1.0f,
                      A == B ? dB : dD, s.psi[Q][t], s.lagged, &np);
  s.psi[Q][t] = np;
}

// cb: the curl's coefficient of the sample's component (the leap-frog b; s44's D_b, as the slab
// kernel's).
template <bool ELECTRIC, int C>
__device__ __forceinline__ float ho_cpml_fold(const HoFold& f, int i, int j, int k, float v, float dB, float dD,
                                              float cb) {
  constexpr int A0 = (C + 1) % 3 < (C + 2) % 3 ? (C + 1) % 3 : (C + 2) % 3;
  constexpr int A1 = (C + 1) % 3 < (C + 2) % 3 ? (C + 2) % 3 : (C + 1) % 3;
  ho_fold_slab<ELECTRIC, C, A0, 0>(f, i, j, k, v, dB, dD, cb);
  ho_fold_slab<ELECTRIC, C, A0, 1>(f, i, j, k, v, dB, dD, cb);
  ho_fold_slab<ELECTRIC, C, A1, 0>(f, i, j, k, v, dB, dD, cb);
  ho_fold_slab<ELECTRIC, C, A1, 1>(f, i, j, k, v, dB, dD, cb);
  return v;
}

// Leap-frog update of component C plus its folded CPML corrections, from the sample's key and
// current value u (FOLD false: ho_leapfrog alone).
template <bool ELECTRIC, int C, int SHAPE, bool FOLD, class AccD, class AccB, class Coef>
__device__ __forceinline__ float ho_update_value(const GridParams& g, const HoParams& p, const HoFold& f,
                                                 const Coef& coef, const FusedSource& src, int o, int key, float u,
                                                 int i, int j, int k, const AccD& accD, const AccB& accB) {
  if constexpr (FOLD) {
    float dB, dD;
    ho_curl_parts<ELECTRIC, C, SHAPE>(g, p, accD, accB, dB, dD);
    const float v = ho_leapfrog<ELECTRIC, C>(coef, src, o, key, u, dB - dD);
    return ho_cpml_fold<ELECTRIC, C>(f, i, j, k, v, dB, dD, coef.b(ELECTRIC ? C : 3 + C, o, key));
  } else {
    return ho_leapfrog<ELECTRIC, C>(coef, src, o, key, u, ho_curl<ELECTRIC, C, SHAPE>(g, p, accD, accB));
  }
}

// Update of component C (0..2) of E (ELECTRIC) or H at layout offset o, D_a from the accessors of
// the two source components (accD: component c+2 of the other field, accB: c+1):
//   E_c <- ca E_c + cb [D_{c+1} H_{c+2} - D_{c+2} H_{c+1}],  H_c <- da H_c - db [D_{c+1} E_{c+2} - D_{c+2} E_{c+1}]
template <bool ELECTRIC, int C, int SHAPE, class AccD, class AccB, class Coef>
__device__ __forceinline__ void ho_apply(const FieldPtrs& F, const GridParams& g, const HoParams& p,
                                         const Coef& coef, const FusedSource& src, int o, const AccD& accD,
                                         const AccB& accB) {
  ho_store<ELECTRIC, C>(F, p, coef, src, o, ho_curl<ELECTRIC, C, SHAPE>(g, p, accD, accB));
}

// A sample outside component SELF's update range keeps its value: with s44 it is copied into the
// array that becomes the current level (the update writes there), as the CPU engine's in-place
// arrays keep it.
template <int SELF>
__device__ __forceinline__ void ho_keep(const FieldPtrs& F, const HoParams& p, int o) {
  if (p.s44) p.dst[SELF][o] = F.f[SELF][o];
}

// ---- tables: the first version (see above).
// D_A F (unscaled by 1/h) of source component SRC at sample (i, j, k); FW: forward difference.
template <int SRC, int A, bool FW>
__device__ __forceinline__ float ho_diff(const float* __restrict__ F, const HoParams& p, int origin,
                                         int i, int j, int k) {
  constexpr int B = (A + 1) % 3, D = (A + 2) % 3;
  constexpr int R = HighOrderStencil::kReach;
  const int idx[3] = {i, j, k};
  const int* o0 = p.off + p.base[SRC][0] + R;
  const int* o1 = p.off + p.base[SRC][1] + R;
  const int* o2 = p.off + p.base[SRC][2] + R;
  const float* s0 = p.sign + p.base[SRC][0] + R;
  const float* s1 = p.sign + p.base[SRC][1] + R;
  const float* s2 = p.sign + p.base[SRC][2] + R;
  const HoTerms& T = p.terms[FW ? 1 : 0];
  float sum = 0.0f;
  // Unrolled to the maximum so every term's fields are compile-time offsets into the kernel's
  // parameter space (no local copy of HoParams).
#pragma unroll
  for (int t = 0; t < HighOrderStencil::kMaxTerms; ++t) {
    if (t >= T.count) break;
    int hi[3], lo[3];
    hi[A] = idx[A] + T.hi[t];
    lo[A] = idx[A] + T.lo[t];
    hi[B] = lo[B] = idx[B] + T.tb[t];
    hi[D] = lo[D] = idx[D] + T.td[t];
    float vh = __ldg(s0 + hi[0]) * __ldg(s1 + hi[1]) * __ldg(s2 + hi[2]);
    float vl = __ldg(s0 + lo[0]) * __ldg(s1 + lo[1]) * __ldg(s2 + lo[2]);
    if (vh != 0.0f) vh *= __ldg(F + origin + __ldg(o0 + hi[0]) + __ldg(o1 + hi[1]) + __ldg(o2 + hi[2]));
    if (vl != 0.0f) vl *= __ldg(F + origin + __ldg(o0 + lo[0]) + __ldg(o1 + lo[1]) + __ldg(o2 + lo[2]));
    sum += T.w[t] * (vh - vl);
  }
  return sum;
}

template <bool ELECTRIC, int C, class Coef>
__device__ __forceinline__ void ho_update(const FieldPtrs& F, const GridParams& g, const HoParams& p,
                                          const Coef& coef, const FusedSource& src, int i, int j, int k) {
  constexpr int B = (C + 1) % 3, D = (C + 2) % 3;
  constexpr int SELF = ELECTRIC ? C : 3 + C, OTHER = ELECTRIC ? 3 : 0;
  const int o = g.origin + i + j * g.sy + k * g.sz;
  if (!in(i, g.lo[SELF][0], g.hi[SELF][0]) || !in(j, g.lo[SELF][1], g.hi[SELF][1]) ||
      !in(k, g.lo[SELF][2], g.hi[SELF][2])) {
    ho_keep<SELF>(F, p, o);
    return;
  }
  const float curl = ho_diff<OTHER + D, B, !ELECTRIC>(F.f[OTHER + D], p, g.origin, i, j, k) * g.inv_d[B] -
                     ho_diff<OTHER + B, D, !ELECTRIC>(F.f[OTHER + B], p, g.origin, i, j, k) * g.inv_d[D];
  ho_store<ELECTRIC, C>(F, p, coef, src, o, curl);
}

template <bool ELECTRIC, class Coef>
__global__ void update_ho_bulk(FieldPtrs F, GridParams g, HoParams p, Coef coef, FusedSource src) {
  pdl_begin();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z * blockDim.z + threadIdx.z;
  if (i > g.nx || j > g.ny || k > g.nz) return;
  ho_update<ELECTRIC, 0>(F, g, p, coef, src, i, j, k);
  ho_update<ELECTRIC, 1>(F, g, p, coef, src, i, j, k);
  ho_update<ELECTRIC, 2>(F, g, p, coef, src, i, j, k);
}

// ---- direct and tiled: the interior box, and the boundary shell.
struct HoBox {
  int lo[3], hi[3];  // inclusive; empty when lo > hi on an axis
};
// `outer` less `inner` (inside it), as up to six boxes: the z slabs, then the y rows, then the x
// columns.
inline std::vector<HoBox> box_less(const HoBox& outer, const HoBox& inner) {
  std::vector<HoBox> r;
  auto add = [&](int x0, int x1, int y0, int y1, int z0, int z1) {
    if (x0 <= x1 && y0 <= y1 && z0 <= z1) r.push_back(HoBox{{x0, y0, z0}, {x1, y1, z1}});
  };
  const HoBox &b = outer, &c = inner;
  add(b.lo[0], b.hi[0], b.lo[1], b.hi[1], b.lo[2], c.lo[2] - 1);
  add(b.lo[0], b.hi[0], b.lo[1], b.hi[1], c.hi[2] + 1, b.hi[2]);
  add(b.lo[0], b.hi[0], b.lo[1], c.lo[1] - 1, c.lo[2], c.hi[2]);
  add(b.lo[0], b.hi[0], c.hi[1] + 1, b.hi[1], c.lo[2], c.hi[2]);
  add(b.lo[0], c.lo[0] - 1, c.lo[1], c.hi[1], c.lo[2], c.hi[2]);
  add(c.hi[0] + 1, b.hi[0], c.lo[1], c.hi[1], c.lo[2], c.hi[2]);
  return r;
}

template <bool ELECTRIC, int SHAPE, class Coef>
__global__ void ho_interior_direct(FieldPtrs F, GridParams g, HoParams p, HoBox box, Coef coef, FusedSource src) {
  pdl_begin();
  const int i = box.lo[0] + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = box.lo[1] + int(blockIdx.y * blockDim.y + threadIdx.y);
  const int k = box.lo[2] + int(blockIdx.z * blockDim.z + threadIdx.z);
  if (i > box.hi[0] || j > box.hi[1] || k > box.hi[2]) return;
  constexpr int OTHER = ELECTRIC ? 3 : 0;
  const int o = g.origin + i + j * g.sy + k * g.sz;
  const DirectAcc a0{F.f[OTHER] + o, g.sy, g.sz}, a1{F.f[OTHER + 1] + o, g.sy, g.sz},
      a2{F.f[OTHER + 2] + o, g.sy, g.sz};
  // Component C reads sources C+2 (accD) and C+1 (accB).
  ho_apply<ELECTRIC, 0, SHAPE>(F, g, p, coef, src, o, a2, a1);
  ho_apply<ELECTRIC, 1, SHAPE>(F, g, p, coef, src, o, a0, a2);
  ho_apply<ELECTRIC, 2, SHAPE>(F, g, p, coef, src, o, a1, a0);
}

// s44's direct kernel with the stores last (the default; VEM_S44_DIRECT=interleaved runs
// ho_interior_direct, for measurement; results/highorder.md, session 37). ho_interior_direct stores each component's new level before the next component's
// loads: the four levels are plain loads that may alias the store, so they wait for it, and a
// thread waits for three memory round trips in a row. Here every load of the sample (the other
// field's stencil, the key, the four levels of each component and, with a material table, the s44
// coefficients of the key from s44_coefficient_table, four 16-byte loads) comes before the three
// stores. The table also replaces the two divisions per component of s44_coefficients (the same
// function fills it, so the floats are the same). Arithmetic: ho_store's, operand for operand.
// FOLD: the CPML corrections folded in (ho_cpml_fold with s44's D_b, the slab kernels' arithmetic
// and order; launched on the bands of the box that meet a slab, ho_bands_), as the tiled kernel
// does for the leap-frog schemes.
// LEVELS_FIRST: the key, the levels and the coefficients are read before the stencil in the source
// (VEM_S44_LOAD_ORDER=levels_first, measurement; the same floats).
// s44_direct's body is s44_direct_sample, a function of the sample, which s44_wavefront (below) runs
// too with its options: Acc, the other field's accessor; WAVE: the point updates of the sample's
// half step applied before its stores (pts, when `here`), as apply_point_updates would after the
// pass (the same floats); STREAM: the levels read and E^{n+1} written with the evict-first hints
// (__ldcs / __stcs), so that L2 keeps H^{n+1/2} and E^n for the E stage.
// The point updates that the pair, one-pass and wavefront kernels apply themselves (s44_points).
constexpr int kS44PairPoints = 6;  // point updates per stage handled in the kernel
struct S44PairPoints {
  int count[4];  // [stage]: H1, E1, H2, E2 (H sources of step s, E of s, H of s+1, E of s+1)
  int comp[4][kS44PairPoints];
  int off[4][kS44PairPoints];
  float value[4][kS44PairPoints];
  int set[4][kS44PairPoints];
  int at[4][kS44PairPoints][3];  // the sample (i, j, k): blocks whose footprint holds none skip the tests
};
// Stage st's point updates of component FIRST + c at offset o, on the values out[c] before they
// are stored: apply_point_updates' arithmetic, in the sources' order.
__device__ __forceinline__ void s44_apply_points(const S44PairPoints& pts, int st, int first, int o, float (&out)[3]) {
  for (int e = 0; e < pts.count[st]; ++e)
    if (pts.off[st][e] == o) {
      const int c = pts.comp[st][e] - first;
      if (c >= 0 && c < 3) {
#pragma unroll
        for (int q = 0; q < 3; ++q)
          if (q == c) out[q] = pts.set[st][e] ? pts.value[st][e] : out[q] + pts.value[st][e];
      }
    }
}
template <bool ELECTRIC, bool FOLD, class Coef, bool LEVELS_FIRST, class Acc, bool WAVE, bool STREAM>
__device__ __forceinline__ void s44_direct_sample(const FieldPtrs& F, const GridParams& g, const HoParams& p, int i,
                                                  int j, int k, const Coef& coef, const FusedSource& src,
                                                  const float* __restrict__ tab, const HoFold& fold,
                                                  const S44PairPoints* pts, bool here);
template <bool ELECTRIC, bool FOLD, class Coef, bool LEVELS_FIRST = false>
__global__ void s44_direct(FieldPtrs F, GridParams g, HoParams p, HoBox box, Coef coef, FusedSource src,
                           const float* __restrict__ tab, HoFold fold);

// H's stencil in s44_wavefront's E stage: written by other blocks in the same launch, so through
// L1-cached coherent loads (ld.global.ca, which the acquire before the stage makes current), not
// the read-only cache.
struct CoherentAcc {
  const float* f;
  int sy, sz;
  __device__ __forceinline__ float operator()(int x, int y, int z) const { return __ldca(f + x + y * sy + z * sz); }
};

template <bool ELECTRIC, bool FOLD, class Coef, bool LEVELS_FIRST, class Acc, bool WAVE, bool STREAM>
__device__ __forceinline__ void s44_direct_sample(const FieldPtrs& F, const GridParams& g, const HoParams& p, int i,
                                                  int j, int k, const Coef& coef, const FusedSource& src,
                                                  const float* __restrict__ tab, const HoFold& fold,
                                                  const S44PairPoints* pts, bool here) {
  constexpr int OTHER = ELECTRIC ? 3 : 0, FIRST = ELECTRIC ? 0 : 3;
  const int o = g.origin + i + j * g.sy + k * g.sz;
  const Acc a0{F.f[OTHER] + o, g.sy, g.sz}, a1{F.f[OTHER + 1] + o, g.sy, g.sz}, a2{F.f[OTHER + 2] + o, g.sy, g.sz};
  // Component C reads sources C+2 (accD) and C+1 (accB), as ho_interior_direct; the curl is dB - dD
  // (ho_curl's arithmetic), the parts kept for the folded corrections.
  float dB[3], dD[3];
  auto curls = [&] {
    ho_curl_parts<ELECTRIC, 0, kShapeS44>(g, p, a2, a1, dB[0], dD[0]);
    ho_curl_parts<ELECTRIC, 1, kShapeS44>(g, p, a0, a2, dB[1], dD[1]);
    ho_curl_parts<ELECTRIC, 2, kShapeS44>(g, p, a1, a0, dB[2], dD[2]);
  };
  if constexpr (!LEVELS_FIRST) curls();
  const int key = coef.key(o);
  float u[3][4];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    if constexpr (STREAM) {
      u[c][0] = __ldcs(F.f[FIRST + c] + o);
      u[c][1] = __ldcs(p.hist[FIRST + c][0] + o);
      u[c][2] = __ldcs(p.hist[FIRST + c][1] + o);
      u[c][3] = __ldcs(p.hist[FIRST + c][2] + o);
    } else {
      u[c][0] = F.f[FIRST + c][o];
      u[c][1] = p.hist[FIRST + c][0][o];
      u[c][2] = p.hist[FIRST + c][1][o];
      u[c][3] = p.hist[FIRST + c][2][o];
    }
  }
  float q[3][5];
  if constexpr (std::is_same_v<Coef, CoefficientArrays>) {
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const S44Coefficients s = s44_coefficients(coef.a(FIRST + c, o, key), coef.b(FIRST + c, o, key));
      q[c][0] = s.c[0]; q[c][1] = s.c[1]; q[c][2] = s.c[2]; q[c][3] = s.c[3]; q[c][4] = s.cb;
    }
  } else {
    const float4* t = reinterpret_cast<const float4*>(tab + (key / 12) * 32 + (ELECTRIC ? 0 : 16));
    float v[16];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const float4 x = __ldg(t + w);
      v[4 * w] = x.x; v[4 * w + 1] = x.y; v[4 * w + 2] = x.z; v[4 * w + 3] = x.w;
    }
#pragma unroll
    for (int c = 0; c < 3; ++c)
#pragma unroll
      for (int e = 0; e < 5; ++e) q[c][e] = v[5 * c + e];
  }
  if constexpr (LEVELS_FIRST) curls();
  float out[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    float jc = 0.0f;  // a fused source was scaled with b: rescale to the curl's coefficient (ho_store)
    if (ELECTRIC && src.s[0]) {
      const float b = coef.b(FIRST + c, o, key);
      if (b != 0.0f) {
        const float2 sv = src.s[c][o];
        jc = (sv.x * src.cr - sv.y * src.ci) * (q[c][4] / b);
      }
    }
    out[c] = q[c][0] * u[c][0] + q[c][1] * u[c][1] + q[c][2] * u[c][2] + q[c][3] * u[c][3] +
             (ELECTRIC ? 1.0f : -1.0f) * q[c][4] * (dB[c] - dD[c]) - jc;
  }
  if constexpr (FOLD) {
    out[0] = ho_cpml_fold<ELECTRIC, 0>(fold, i, j, k, out[0], dB[0], dD[0], q[0][4]);
    out[1] = ho_cpml_fold<ELECTRIC, 1>(fold, i, j, k, out[1], dB[1], dD[1], q[1][4]);
    out[2] = ho_cpml_fold<ELECTRIC, 2>(fold, i, j, k, out[2], dB[2], dD[2], q[2][4]);
  }
  if constexpr (WAVE) {
    if (here) s44_apply_points(*pts, ELECTRIC ? 1 : 0, FIRST, o, out);
  }
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    if constexpr (STREAM && ELECTRIC) __stcs(p.dst[FIRST + c] + o, out[c]);
    else p.dst[FIRST + c][o] = out[c];
  }
}

template <bool ELECTRIC, bool FOLD, class Coef, bool LEVELS_FIRST>
__global__ void s44_direct(FieldPtrs F, GridParams g, HoParams p, HoBox box, Coef coef, FusedSource src,
                           const float* __restrict__ tab, HoFold fold) {
  pdl_begin();
  const int i = box.lo[0] + int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = box.lo[1] + int(blockIdx.y * blockDim.y + threadIdx.y);
  const int k = box.lo[2] + int(blockIdx.z * blockDim.z + threadIdx.z);
  if (i > box.hi[0] || j > box.hi[1] || k > box.hi[2]) return;
  s44_direct_sample<ELECTRIC, FOLD, Coef, LEVELS_FIRST, DirectAcc, false, false>(F, g, p, i, j, k, coef, src, tab, fold,
                                                                                 nullptr, false);
}

// ---- s44, two steps per pass (EngineTuning::s44_stepping, results/highorder.md "Session 27").
// The interior pair kernel computes H^{n+1/2}, E^{n+1}, H^{n+3/2} and E^{n+2} of the samples of
// a core box (FdtdEngineCuda::setup_s44_pair) in one pass over the time levels n, n-1, n-2, n-3:
// 96 bytes read and 48 written a sample for two steps (73 a step) against about 157 a step for
// the direct kernels. The rest of the grid (the CPML, the faces, the boundary shell and the layers
// next to them) steps twice after it with the one-step kernels. Both write the new levels into
// two spare arrays per component (S44Pair::out1 / out2), never into a level the pair reads: the
// pair's tiles read their neighbours' old levels in their halos.
// A block of 32 x 32 threads owns a 20 x 20 core of columns; thread t holds column c0 - 6 + t
// (clamped to the tile's last needed column). Along z it marches one plane a an iteration:
//   H1 = H^{n+1/2} at a     from E^n at a-1..a+2 (own column: registers), in-plane (shared);
//   E1 = E^{n+1}   at a-1   from H1 at a-3..a (own column), in-plane at a-1 (shared);
//   H2 = H^{n+3/2} at a-3   from E1 at a-4..a-1, in-plane at a-3;
//   E2 = E^{n+2}   at a-4   from H2 at a-6..a-3, in-plane at a-4.
// The stencil (9/8, -1/24) reaches -1..+2 (H from E) and -2..+1 (E from H) along an axis, so the
// values are right on columns 1..29 (H1), 3..28 (E1), 4..26 (H2) and 6..25 (E2, the core); the
// rim's are wrong and only the rim reads them (rows outside those skip the stage). The shared
// planes are one flat array with guards, so a rim thread's neighbour index needs no clamp (it
// reads another row or plane, never past the array). H1, E1 and the x / y components of H2 are kept in rings of 5 planes, which the
// own column's z differences read; a ring slot is written again only after a barrier that
// follows its last read by any thread, so one barrier an iteration suffices. Each sample's
// arithmetic is ho_store's (ho_dfast, the curl, the four levels, the sign of cb), with the
// coefficients of s44_coefficients from a table per material key (s44_coefficient_table, the same
// function on the device), and the point updates of apply_point_updates in the same order: the
// pair gives the one-step kernels' floats bit for bit (test_fdtd_schemes_cuda_agreement).
constexpr int kS44PairT = 32;                      // threads a side of a block (32 x 32)
constexpr int kS44PairHalo = 6;                    // columns on each side of the core
constexpr int kS44PairCore = kS44PairT - 12;       // 20 core columns a side
constexpr int kS44PairPlane = kS44PairT * kS44PairT;
constexpr int kS44PairGuard = 128;                 // >= 2 rows + 2 columns either side
constexpr int kS44PairPlanes = 6 + 15 + 15 + 10 + 2;  // E^n x2x3, H1 5x3, E1 5x3, H2 xy 5x2, H2 z x2
constexpr std::size_t kS44PairSmemBytes =
    (std::size_t(kS44PairPlanes) * kS44PairPlane + 2 * kS44PairGuard) * sizeof(float);
// Whether a point update of stages 0..stages-1 acts on a sample in the box lo..hi (a block's
// footprint; block-uniform): blocks without one skip the per-sample tests.
__device__ __forceinline__ bool s44_points_in(const S44PairPoints& pts, int stages, const int (&lo)[3],
                                              const int (&hi)[3]) {
  bool here = false;
  for (int st = 0; st < stages; ++st)
    for (int e = 0; e < pts.count[st]; ++e) {
      const int* at = pts.at[st][e];
      here = here || (at[0] >= lo[0] && at[0] <= hi[0] && at[1] >= lo[1] && at[1] <= hi[1] && at[2] >= lo[2] &&
                      at[2] <= hi[2]);
    }
  return here;
}
struct S44Pair {
  float* out1[6];  // H^{n+1/2} (3..5) and E^{n+1} (0..2)
  float* out2[6];  // H^{n+3/2} and E^{n+2}
  const float* __restrict__ tab;  // [material][E, H][component][c0, c1, c2, c3, cb], 16 floats a field
  HoBox core;
  int chunk;  // z planes per block
};

// The s44 coefficients of every material key and component (the pair's table).
template <class Coef>
__global__ void s44_coefficient_table(Coef coef, int keys, float* tab) {
  const int m = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (m >= keys) return;
  for (int c = 0; c < 6; ++c) {
    const S44Coefficients q = s44_coefficients(coef.a(c, 0, m * 12), coef.b(c, 0, m * 12));
    float* t = tab + m * 32 + (c < 3 ? 0 : 16) + (c % 3) * 5;
    t[0] = q.c[0]; t[1] = q.c[1]; t[2] = q.c[2]; t[3] = q.c[3]; t[4] = q.cb;
  }
}

extern __shared__ float s44_smem[];
// Reads of one source component: in-plane (x, y) from the shared plane at `pl`, along z from the
// own column's planes zp[z - ZLO] (shared ring slots) or, for E^n, registers (S44RegAcc).
template <int ZLO>
struct S44SmemAcc {
  int pl;     // the stage plane's slot + the thread's index
  int zp[4];  // slots of planes ZLO..ZLO+3 + the thread's index
  __device__ __forceinline__ float operator()(int x, int y, int z) const {
    return z != 0 ? s44_smem[zp[z - ZLO]] : s44_smem[pl + x + y * kS44PairT];
  }
};
struct S44RegAcc {
  int pl;
  float zr[4];  // planes a-1..a+2 of the own column
  __device__ __forceinline__ float operator()(int x, int y, int z) const {
    return z != 0 ? zr[z + 1] : s44_smem[pl + x + y * kS44PairT];
  }
};

// ho_store's s44 value (jc = 0: no fused source with the pair) and the stage's point updates.
template <bool ELECTRIC>
__device__ __forceinline__ float s44_pair_value(float q0, float q1, float q2, float q3, float qb, float u0, float u1,
                                                float u2, float u3, float curl, const S44PairPoints& pts, bool here,
                                                int st, int self, int o) {
  float v = q0 * u0 + q1 * u1 + q2 * u2 + q3 * u3 + (ELECTRIC ? 1.0f : -1.0f) * qb * curl - 0.0f;
  if (here)  // block-uniform: a point sample in the block's footprint
    for (int e = 0; e < pts.count[st]; ++e)
      if (pts.off[st][e] == o && pts.comp[st][e] == self) v = pts.set[st][e] ? pts.value[st][e] : v + pts.value[st][e];
  return v;
}
// A field's (0: E, 1: H) s44 coefficients at a material key (S44Pair::tab): component c's c0..c3,
// cb at 5c..5c+4, in four 16-byte loads.
struct S44Coefs {
  float v[16];
  __device__ __forceinline__ S44Coefs(const float* __restrict__ tab, int key, int field) {
    const float4* t = reinterpret_cast<const float4*>(tab + (key / 12) * 32 + field * 16);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float4 x = __ldg(t + q);
      v[4 * q] = x.x; v[4 * q + 1] = x.y; v[4 * q + 2] = x.z; v[4 * q + 3] = x.w;
    }
  }
};

// A stage's curl from the accessors of its three source components (ho_curl's arithmetic): FW for
// H from E (forward differences), otherwise E from H. need: the components computed (bits 1, 2, 4;
// the one-pass kernel's halo warps take two).
template <bool FW, class AX, class AY, class AZ>
__device__ __forceinline__ void s44_pair_curl(const AX& ax, const AY& ay, const AZ& az, const float (&w)[2][3],
                                              const float (&inv)[3], float (&cc)[3], int need = 7) {
  if (need & 1) cc[0] = ho_dfast<1, FW, kShapeS44>(az, w) * inv[1] - ho_dfast<2, FW, kShapeS44>(ay, w) * inv[2];
  if (need & 2) cc[1] = ho_dfast<2, FW, kShapeS44>(ax, w) * inv[2] - ho_dfast<0, FW, kShapeS44>(az, w) * inv[0];
  if (need & 4) cc[2] = ho_dfast<0, FW, kShapeS44>(ay, w) * inv[0] - ho_dfast<1, FW, kShapeS44>(ax, w) * inv[1];
}

template <class Coef>
__global__ void __launch_bounds__(kS44PairT * kS44PairT, 1)
    s44_pair_interior(FieldPtrs F, GridParams g, HoParams p, S44Pair pr, Coef coef, S44PairPoints pts) {
  pdl_begin();
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int c0 = pr.core.lo[0] + int(blockIdx.x) * kS44PairCore, r0 = pr.core.lo[1] + int(blockIdx.y) * kS44PairCore;
  const int cw = min(kS44PairCore, pr.core.hi[0] - c0 + 1), ch = min(kS44PairCore, pr.core.hi[1] - r0 + 1);
  const int k0 = pr.core.lo[2] + int(blockIdx.z) * pr.chunk, k1 = min(pr.core.hi[2], k0 + pr.chunk - 1);
  const int i = c0 - kS44PairHalo + min(tx, cw + 11), j = r0 - kS44PairHalo + min(ty, ch + 11);
  const bool core = tx >= 6 && tx < cw + 6 && ty >= 6 && ty < ch + 6;
  // The rows whose values a stage's later stages read (a full tile's; warp-uniform): the other
  // rows skip the stage and leave its shared slots stale, which no valid value reads.
  const bool row_h1 = ty >= 1 && ty <= 29, row_e1 = ty >= 3 && ty <= 28, row_h2 = ty >= 4 && ty <= 26;
  const bool here = s44_points_in(pts, 4, {c0 - 6, r0 - 6, k0 - 6}, {c0 + cw + 5, r0 + ch + 5, k1 + 6});
  const int sz = g.sz;
  const int col = int(g.origin) + i + j * g.sy;  // the column's offset at plane 0
  const int me = kS44PairGuard + ty * kS44PairT + tx;
  // Plane slots (shared): E^n [parity][c], H1 [ring][c], E1 [ring][c], H2 x/y [ring][c], H2 z [parity].
  auto e0s = [&](int par, int c) { return me + (par * 3 + c) * kS44PairPlane; };
  auto h1s = [&](int r, int c) { return me + (6 + r * 3 + c) * kS44PairPlane; };
  auto e1s = [&](int r, int c) { return me + (21 + r * 3 + c) * kS44PairPlane; };
  auto h2s = [&](int r, int par, int c) { return me + (c < 2 ? 36 + r * 2 + c : 46 + par) * kS44PairPlane; };
  const float* __restrict__ Ex = F.f[0];
  const float* __restrict__ Ey = F.f[1];
  const float* __restrict__ Ez = F.f[2];
  // E^n of the own column at planes a-1..a+2.
  float ex[4], ey[4], ez[4];
  {
    const int o = col + (k0 - 6) * sz;
#pragma unroll
    for (int q = 0; q < 3; ++q) {
      ex[q] = __ldg(Ex + o + q * sz);
      ey[q] = __ldg(Ey + o + q * sz);
      ez[q] = __ldg(Ez + o + q * sz);
    }
  }
  for (int a = k0 - 5; a <= k1 + 4; ++a) {
    const int oa = col + a * sz;
    ex[3] = __ldg(Ex + oa + 2 * sz);
    ey[3] = __ldg(Ey + oa + 2 * sz);
    ez[3] = __ldg(Ez + oa + 2 * sz);
    // H1's own levels, issued before the barrier so their latency overlaps it.
    float hl[3][4];
    if (row_h1) {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        hl[c][0] = __ldg(F.f[3 + c] + oa);
        hl[c][1] = __ldg(p.hist[3 + c][0] + oa);
        hl[c][2] = __ldg(p.hist[3 + c][1] + oa);
        hl[c][3] = __ldg(p.hist[3 + c][2] + oa);
      }
    }
    const int par = a & 1, r = a % 5;
    auto ring = [&](int d) { return r - d + (r < d ? 5 : 0); };  // slot of plane a - d (d 0..4)
    s44_smem[e0s(par, 0)] = ex[1];
    s44_smem[e0s(par, 1)] = ey[1];
    s44_smem[e0s(par, 2)] = ez[1];
    __syncthreads();
    // H1 at plane a.
    if (row_h1) {
      const int o = oa;
      const S44Coefs q(pr.tab, coef.key(o), 1);
      const S44RegAcc ax{e0s(par, 0), {ex[0], ex[1], ex[2], ex[3]}}, ay{e0s(par, 1), {ey[0], ey[1], ey[2], ey[3]}},
          az{e0s(par, 2), {ez[0], ez[1], ez[2], ez[3]}};
      float cc[3];
      s44_pair_curl<true>(ax, ay, az, p.w, g.inv_d, cc);
      const bool st = core && a >= k0 && a <= k1;
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const float v = s44_pair_value<false>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                              hl[c][0], hl[c][1], hl[c][2], hl[c][3], cc[c], pts, here, 0, 3 + c, o);
        s44_smem[h1s(r, c)] = v;
        if (st) pr.out1[3 + c][o] = v;
      }
    }
    // E1 at plane a-1.
    if (a - 1 >= k0 - 3 && row_e1) {
      const int o = oa - sz;
      const S44Coefs q(pr.tab, coef.key(o), 0);
      const int pl = ring(1);
      S44SmemAcc<-2> hx, hy, hz;
      hx.pl = h1s(pl, 0); hy.pl = h1s(pl, 1); hz.pl = h1s(pl, 2);
#pragma unroll
      for (int z = 0; z < 4; ++z) {  // planes a-3..a
        hx.zp[z] = h1s(ring(3 - z), 0);
        hy.zp[z] = h1s(ring(3 - z), 1);
        hz.zp[z] = h1s(ring(3 - z), 2);
      }
      float cc[3];
      s44_pair_curl<false>(hx, hy, hz, p.w, g.inv_d, cc);
      const float own[3] = {ex[0], ey[0], ez[0]};
      const bool st = core && a - 1 >= k0 && a - 1 <= k1;
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const float v = s44_pair_value<true>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                             own[c], __ldg(p.hist[c][0] + o), __ldg(p.hist[c][1] + o),
                                             __ldg(p.hist[c][2] + o), cc[c], pts, here, 1, c, o);
        s44_smem[e1s(pl, c)] = v;
        if (st) pr.out1[c][o] = v;
      }
    }
    // H2 at plane a-3.
    if (a - 3 >= k0 - 2 && row_h2) {
      const int o = oa - 3 * sz;
      const S44Coefs q(pr.tab, coef.key(o), 1);
      const int pl = ring(3);
      S44SmemAcc<-1> ex1, ey1, ez1;
      ex1.pl = e1s(pl, 0); ey1.pl = e1s(pl, 1); ez1.pl = e1s(pl, 2);
#pragma unroll
      for (int z = 0; z < 4; ++z) {  // planes a-4..a-1
        ex1.zp[z] = e1s(ring(4 - z), 0);
        ey1.zp[z] = e1s(ring(4 - z), 1);
        ez1.zp[z] = e1s(ring(4 - z), 2);
      }
      float cc[3];
      s44_pair_curl<true>(ex1, ey1, ez1, p.w, g.inv_d, cc);
      const bool st = core && a - 3 >= k0 && a - 3 <= k1;
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const float v = s44_pair_value<false>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                              s44_smem[h1s(pl, c)], __ldg(F.f[3 + c] + o), __ldg(p.hist[3 + c][0] + o),
                                              __ldg(p.hist[3 + c][1] + o), cc[c], pts, here, 2, 3 + c, o);
        s44_smem[h2s(pl, (a - 3) & 1, c)] = v;
        if (st) pr.out2[3 + c][o] = v;
      }
    }
    // E2 at plane a-4 (the core only).
    if (a - 4 >= k0 && core) {
      const int o = oa - 4 * sz;
      const S44Coefs q(pr.tab, coef.key(o), 0);
      const int pl = ring(4), pp = (a - 4) & 1;
      S44SmemAcc<-2> hx, hy, hz;
      hx.pl = h2s(pl, pp, 0); hy.pl = h2s(pl, pp, 1); hz.pl = h2s(pl, pp, 2);
#pragma unroll
      for (int z = 0; z < 4; ++z) {  // planes a-6..a-3 (x, y only: z differences of H2 z are not taken)
        const int d = 6 - z, sl = r - d + 10;
        hx.zp[z] = h2s(sl % 5, 0, 0);
        hy.zp[z] = h2s(sl % 5, 0, 1);
        hz.zp[z] = 0;
      }
      float cc[3];
      s44_pair_curl<false>(hx, hy, hz, p.w, g.inv_d, cc);
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const float v = s44_pair_value<true>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                             s44_smem[e1s(pl, c)], __ldg(F.f[c] + o), __ldg(p.hist[c][0] + o),
                                             __ldg(p.hist[c][1] + o), cc[c], pts, here, 3, c, o);
        pr.out2[c][o] = v;
      }
    }
#pragma unroll
    for (int q = 0; q < 3; ++q) {
      ex[q] = ex[q + 1];
      ey[q] = ey[q + 1];
      ez[q] = ez[q + 1];
    }
  }
}

// ---- s44, one pass per step through L2: the wavefront (EngineTuning::s44_stepping wavefront).
// s44_direct's H and E passes over the core both fields share (S44Wave::box), as tasks of one
// persistent launch in plane order: H at plane p, then E at plane p - lag (a task: `rows` rows of
// one plane, every column). E at plane k reads H^{n+1/2} at k-2..k+1, so an E task first waits
// until the H tasks of those planes are done (per-plane counters, release / acquire). Each sample
// is computed once, with s44_direct's arithmetic (s44_direct_sample), so the fields are the
// one-step kernels' bit for bit. E^n, which the H stage reads, and the H^{n+1/2} it writes are still
// in L2 when the E stage of the same planes reads them a few planes later: about 122 bytes of DRAM
// traffic a sample and step against the two passes' 148, with no sample computed twice and no
// barrier but the task's. The bands, the shell and what the two fields' cores do not share step
// with the direct kernels around it (H before, E after: FdtdEngineCuda::step_wavefront_s44).
// Tasks are claimed from a counter in order, so a task waits only for tasks claimed before it,
// which run in resident blocks: no deadlock whatever the grid. The counters grow over launches
// (S44Wave::base, done), so nothing is reset between steps.
// Measured (session 40, 512^3, H200, results/highorder.md): 2 % slower than the direct passes
// (18,030-18,055 against 18,420-18,479 Mcells/s). The launch moves 138 B a core sample (ideal 122;
// the direct passes about 154) but at 76 % of the copy bandwidth against their 86-90 %: it is
// latency-bound (half the warps resident, 18 % of the stalls on the tasks' barriers). So
// `automatic` stays one_step.
// Blocks of 256 threads, 64 registers: 4 a multiprocessor. Measured at 512^3 on an H200 (session
// 40), and lost: blocks of 64 and 128 threads (2-10 %), the kernel held to 5 or 6 blocks (48 and 40
// registers, spilling: 4 % and 16 %).
constexpr int kS44WaveThreads = 256;
// The box's rows are cut into `strips` strips stepped one after the other, each a wavefront along z:
// the samples between the H and the E front that L2 must hold (about lag + 3 planes of E^n and
// H^{n+1/2}) shrink with the strip. H of strip s takes its rows [a, b); E takes [a - 1, b - 1) (the
// first strip from a, the last to the box's end), so an E row reads the H of its own strip and of
// the one before, never of the one after.
struct S44Wave {
  HoBox box;                    // the core both fields share
  int rows;                     // rows a task
  int strips, strip_rows;       // strips of strip_rows rows (the last may be shorter)
  int chunks;                   // tasks a plane, field and strip: ceil((strip_rows + 1) / rows)
  int lag;                      // E of plane p - lag is claimed after H of plane p (>= 1)
  long long strip_tasks;        // 2 chunks (planes + lag)
  long long tasks;              // strips strip_tasks
  unsigned long long* counter;  // [0] the task counter, [1 + strip * planes + plane - box.lo[2]] H tasks done
  unsigned long long base;      // counter[0] at this launch's start
  unsigned long long done;      // a (strip, plane)'s H count once this launch's H tasks of it are done
};

__device__ __forceinline__ unsigned long long s44_load_acquire(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

template <class Coef>
__global__ void __launch_bounds__(kS44WaveThreads)
    s44_wavefront(FieldPtrs Fh, HoParams ph, FieldPtrs Fe, HoParams pe, GridParams g, S44Wave w, Coef coef,
                  FusedSource src, const float* __restrict__ tab, S44PairPoints pts) {
  pdl_begin();
  __shared__ long long claimed;
  const int tid = int(threadIdx.x);
  const int z0 = w.box.lo[2], z1 = w.box.hi[2], planes = z1 - z0 + 1;
  const HoFold nofold{};
  unsigned long long next = 0;
  if (tid == 0) next = atomicAdd(w.counter, 1ULL);
  for (;;) {
    if (tid == 0) claimed = (long long)(next - w.base);
    __syncthreads();
    const long long t = claimed;
    __syncthreads();  // every thread has read `claimed` before thread 0 writes it again
    if (t >= w.tasks) break;
    if (tid == 0) next = atomicAdd(w.counter, 1ULL);  // the next task, claimed while this one runs
    const int strip = int(t / w.strip_tasks);
    const long long u = t % w.strip_tasks;
    const int slot = int(u / (2 * w.chunks)), r = int(u % (2 * w.chunks));
    const bool electric = r >= w.chunks;
    const int k = z0 + slot - (electric ? w.lag : 0);
    if (k < z0 || k > z1) continue;
    const int a = w.box.lo[1] + strip * w.strip_rows, b = min(w.box.hi[1] + 1, a + w.strip_rows);
    const int ra = electric && strip > 0 ? a - 1 : a;
    const int rb = !electric ? b : strip == w.strips - 1 ? b : b - 1;
    const int r0 = ra + (r % w.chunks) * w.rows, r1 = min(rb - 1, r0 + w.rows - 1);
    unsigned long long* done = w.counter + 1 + std::size_t(strip) * planes;
    if (electric) {
      // H^{n+1/2} of planes k-2..k+1 in this strip and the one before (the planes outside the box
      // were stepped before the launch).
      if (tid < 8) {
        const int pl = k - 2 + (tid & 3), before = tid >> 2;
        if (pl >= z0 && pl <= z1 && (!before || strip > 0))
          while (s44_load_acquire(done - (before ? planes : 0) + (pl - z0)) < w.done) __nanosleep(100);
      }
      __syncthreads();
    }
    if (r0 <= r1) {
      const bool here = s44_points_in(pts, electric ? 2 : 1, {w.box.lo[0], r0, k}, {w.box.hi[0], r1, k});
      for (int j = r0; j <= r1; ++j)
        for (int i = w.box.lo[0] + tid; i <= w.box.hi[0]; i += kS44WaveThreads) {
          if (electric)
            s44_direct_sample<true, false, Coef, false, CoherentAcc, true, true>(Fe, g, pe, i, j, k, coef, src, tab,
                                                                                   nofold, &pts, here);
          else
            s44_direct_sample<false, false, Coef, false, DirectAcc, true, true>(Fh, g, ph, i, j, k, coef, src, tab,
                                                                                  nofold, &pts, here);
        }
    }
    if (!electric) {
      __syncthreads();  // the task's H stored
      if (tid == 0) {
        __threadfence();
        atomicAdd(done + (k - z0), 1ULL);
      }
    }
  }
}

// ---- s44, one pass per step (EngineTuning::s44_stepping one_pass, results/highorder.md "Session 39").
// s44_onepass_interior computes H^{n+1/2} and E^{n+1} of a core box (setup_s44_pair) in one pass
// over the time levels: 4 levels of E and H read and one of each written, 122 bytes a sample and
// step against about 157 for the two direct passes. The rest steps once after it with the direct
// kernels (step_onepass_s44; its H pass beside the kernel on the side stream, its E after both).
// Both write the new levels into one spare array per component (S44Pair::out1): a block's halo
// warps read the old H levels of its neighbours' samples.
// Measured (session 39, 512^3, H200): 20 % slower than the direct passes (14,767-14,771 against
// 18,423-18,424 Mcells/s). The kernel is latency-bound: 2 blocks of 12 warps a multiprocessor
// (80 registers), its bytes at 57 % of the copy bandwidth, L2 throughput 76 %, L1 hit rate 48 %.
// So `automatic` stays one step.
// A block owns a tile of 32 x 8 columns (worker threads, one column each) and marches along z:
//   H at plane a   from E^n at a-1..a+2 (through L1, as s44_direct), into a shared plane;
//   E at plane a-1 from H at a-3..a (the own column's Hx, Hy in registers), in-plane from the
//   shared plane of a-1.
// E reads H at -2..+1 along x and y (the stencil (9/8, -1/24), backward), so the H of the rows
// j0-2, j0-1, j0+8 (Hx, Hz: E's y differences) and of the columns i0-2, i0-1, i0+32 (Hy, Hz: x
// differences) is computed again by 4 halo warps. The core's footprint (grown
// by 3: the halo's H and the E^n it reads) lies clear of the CPML and the shell, so every H computed
// here is the direct kernel's. A chunk's first two planes and the one past it are computed again
// along z. Two shared planes (parity) and one barrier an iteration: a plane's slot is written
// again two iterations later, after the barrier that ends the iteration reading it. Each sample's
// arithmetic is the pair's (s44_pair_curl, s44_pair_value, ho_store's floats), with the point
// updates of stages 0 (H) and 1 (E): the one-step kernels' fields bit for bit
// (test_fdtd_schemes_cuda_agreement, SchemeCudaS44Pair).
constexpr int kS44OpX = 32;            // worker columns a block along x
constexpr int kS44OpW = kS44OpX + 3;   // a shared row: columns i0-2..i0+32
constexpr int kS44OpHalo = 3;          // the core's footprint: 3 samples on every side
constexpr int kS44OpY = 8;             // worker rows (16 lost 3 %, session 39)
constexpr int kS44OpPlane = kS44OpW * (kS44OpY + 3);                 // rows j0-2..j0+8
constexpr int kS44OpThreadsY = kS44OpY + 3 + (3 * kS44OpY + 31) / 32;  // + 3 row warps, 1 column warp
// E's source accessor: in-plane from the shared plane at the sample, along z the own column's
// planes -2..+1 (registers).
struct S44OpAcc {
  const float* pl;
  float zr[4];
  __device__ __forceinline__ float operator()(int x, int y, int z) const {
    return z != 0 ? zr[z + 2] : pl[x + y * kS44OpW];
  }
};

// EARLY (the default): E's four levels of plane a-1 loaded at the top of the iteration, before
// H's loads, so both stages' DRAM loads are in flight together (+6.7 % over loading them in E's
// stage, VEM_S44_ONEPASS_LOADS=in_stage; the same floats). Two blocks a multiprocessor (80 and
// 79 registers; held to three, 56 registers, the early order spilled and lost 8 %).
template <bool EARLY, class Coef>
__global__ void __launch_bounds__(kS44OpX * kS44OpThreadsY, 2)
    s44_onepass_interior(FieldPtrs F, GridParams g, HoParams p, S44Pair pr, Coef coef, S44PairPoints pts) {
  constexpr int TY = kS44OpY;
  __shared__ float sh[2][3][kS44OpPlane];
  pdl_begin();
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int i0 = pr.core.lo[0] + int(blockIdx.x) * kS44OpX, j0 = pr.core.lo[1] + int(blockIdx.y) * TY;
  const int k0 = pr.core.lo[2] + int(blockIdx.z) * pr.chunk, k1 = min(pr.core.hi[2], k0 + pr.chunk - 1);
  // The thread's column and the H components it computes (bits 1, 2, 4: Hx, Hy, Hz).
  const bool worker = ty < TY;
  int i, j, need;
  if (worker) {
    i = i0 + tx; j = j0 + ty; need = 7;
  } else if (ty < TY + 3) {  // the rows j0-2, j0-1, j0+TY
    const int r = ty - TY;
    i = i0 + tx; j = r == 2 ? j0 + TY : j0 - 2 + r; need = 1 | 4;
  } else {  // the columns i0-2, i0-1, i0+32
    const int q = (ty - TY - 3) * 32 + tx, cq = q / TY;
    i = cq == 2 ? i0 + kS44OpX : i0 - 2 + cq; j = j0 + q % TY; need = q < 3 * TY ? 2 | 4 : 0;
  }
  // H is needed at columns core.lo-2..core.hi+1 along x and y (a partial tile's last ones are not).
  if (i < pr.core.lo[0] - 2 || i > pr.core.hi[0] + 1 || j < pr.core.lo[1] - 2 || j > pr.core.hi[1] + 1) need = 0;
  const bool ecore = worker && i <= pr.core.hi[0] && j <= pr.core.hi[1];
  const int me = need ? (j - j0 + 2) * kS44OpW + (i - i0 + 2) : 0;
  const bool here = s44_points_in(pts, 2, {i0 - 3, j0 - 3, k0 - 3}, {i0 + kS44OpX + 2, j0 + TY + 2, k1 + 3});
  const int sz = g.sz;
  const int col = int(g.origin) + i + j * g.sy;  // the column's offset at plane 0
  float hq[2][4] = {};  // the own column's Hx, Hy at planes a-3..a (workers)
  int key_prev = 0;     // the material key at plane a-1
  for (int a = k0 - 2; a <= k1 + 1; ++a) {
    const int o = col + a * sz;
    const bool e_here = ecore && a - 1 >= k0;  // E at plane a-1 in this iteration
    float ue[3][4];
    auto e_loads = [&] {
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        ue[c][0] = __ldg(F.f[c] + o - sz);
        ue[c][1] = __ldg(p.hist[c][0] + o - sz);
        ue[c][2] = __ldg(p.hist[c][1] + o - sz);
        ue[c][3] = __ldg(p.hist[c][2] + o - sz);
      }
    };
    if (EARLY && e_here) e_loads();
    int key = 0;
    if (need) {
      key = coef.key(o);
      const S44Coefs q(pr.tab, key, 1);
      const DirectAcc ax{F.f[0] + o, g.sy, sz}, ay{F.f[1] + o, g.sy, sz}, az{F.f[2] + o, g.sy, sz};
      // Every load (the stencil, the four levels) before the stores (s44_direct's order).
      float cc[3], u[3][4];
      s44_pair_curl<true>(ax, ay, az, p.w, g.inv_d, cc, need);
#pragma unroll
      for (int c = 0; c < 3; ++c)
        if (need & (1 << c)) {
          u[c][0] = __ldg(F.f[3 + c] + o);
          u[c][1] = __ldg(p.hist[3 + c][0] + o);
          u[c][2] = __ldg(p.hist[3 + c][1] + o);
          u[c][3] = __ldg(p.hist[3 + c][2] + o);
        }
      const bool st = ecore && a >= k0 && a <= k1;
      float v[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll
      for (int c = 0; c < 3; ++c)
        if (need & (1 << c)) {
          v[c] = s44_pair_value<false>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                       u[c][0], u[c][1], u[c][2], u[c][3], cc[c], pts, here, 0, 3 + c, o);
          sh[a & 1][c][me] = v[c];
        }
      if (st) {
#pragma unroll
        for (int c = 0; c < 3; ++c) pr.out1[3 + c][o] = v[c];
      }
      if (worker) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          hq[c][0] = hq[c][1]; hq[c][1] = hq[c][2]; hq[c][2] = hq[c][3]; hq[c][3] = v[c];
        }
      }
    }
    // E at plane a-1 (the core's workers).
    if (e_here) {
      const int o1 = o - sz;
      const S44Coefs q(pr.tab, key_prev, 0);
      const int pb = (a - 1) & 1;
      const S44OpAcc hx{&sh[pb][0][me], {hq[0][0], hq[0][1], hq[0][2], hq[0][3]}},
          hy{&sh[pb][1][me], {hq[1][0], hq[1][1], hq[1][2], hq[1][3]}}, hz{&sh[pb][2][me], {0.0f, 0.0f, 0.0f, 0.0f}};
      if (!EARLY) e_loads();
      const float (&u)[3][4] = ue;
      float cc[3];
      s44_pair_curl<false>(hx, hy, hz, p.w, g.inv_d, cc);
      float v[3];
#pragma unroll
      for (int c = 0; c < 3; ++c)
        v[c] = s44_pair_value<true>(q.v[5 * c], q.v[5 * c + 1], q.v[5 * c + 2], q.v[5 * c + 3], q.v[5 * c + 4],
                                    u[c][0], u[c][1], u[c][2], u[c][3], cc[c], pts, here, 1, c, o1);
#pragma unroll
      for (int c = 0; c < 3; ++c) pr.out1[c][o1] = v[c];
    }
    key_prev = key;
    __syncthreads();
  }
}

constexpr int kTileX = 32, kTileY = 8;  // the tiled kernel's threads a block
constexpr int kTileWX = kTileX + 3;
// A tile is kTileX columns by kTileY * RY rows: each thread updates RY samples one row apart (RY 2:
// the core instance (ho_core_rows_); the two samples share most of their stencil's shared-memory
// loads). A ring plane (kTilePlane) holds the tile with its 3-sample halo.
template <int RY>
constexpr int kTilePlane = kTileWX * (kTileY * RY + 3);
template <int RY>
constexpr std::size_t kTileSmemBytes = std::size_t(3) * 4 * kTilePlane<RY> * sizeof(float);

// The boxes of one launch of the tiled kernel: the core (one box), or every band of the folded
// CPML (up to six: the z, y and x bands), so that the bands' blocks fill the machine together
// instead of each band's launch ending on a partial wave. Blocks are numbered box after box, in
// each box x tile fastest, then y tile, then z chunk (the order of a 3D grid).
constexpr int kMaxTileBoxes = 8;
struct HoTileSet {
  HoBox box[kMaxTileBoxes];
  int chunk[kMaxTileBoxes];    // z planes per block
  int tiles_x[kMaxTileBoxes];  // tiles along x
  int tiles_y[kMaxTileBoxes];  // tiles along y
  int begin[kMaxTileBoxes];    // first block of each box
  int count;
  int blocks;                  // blocks in all
};

// The set of the given boxes, each with its z planes per block, in tiles of kTileX x tile_y;
// empty boxes are left out.
inline HoTileSet tile_set(const std::vector<std::pair<HoBox, int>>& boxes, int tile_y = kTileY) {
  HoTileSet ts{};
  for (const auto& [b, chunk] : boxes) {
    const int x[3] = {b.hi[0] - b.lo[0] + 1, b.hi[1] - b.lo[1] + 1, b.hi[2] - b.lo[2] + 1};
    if (x[0] <= 0 || x[1] <= 0 || x[2] <= 0) continue;
    if (ts.count == kMaxTileBoxes) fail("internal: more than ", kMaxTileBoxes, " boxes in one launch of the tiled kernel");
    const int q = ts.count++;
    ts.box[q] = b;
    ts.chunk[q] = chunk;
    ts.tiles_x[q] = (x[0] + kTileX - 1) / kTileX;
    ts.tiles_y[q] = (x[1] + tile_y - 1) / tile_y;
    ts.begin[q] = ts.blocks;
    const long long blocks = (long long)ts.tiles_x[q] * ts.tiles_y[q] * ((x[2] + chunk - 1) / chunk);
    if (ts.blocks + blocks > 0x7fffffffLL) fail("internal: more than 2^31 - 1 blocks in one launch of the tiled kernel");
    ts.blocks += int(blocks);
  }
  return ts;
}

// The tile of block `blk` in the set: its first column, row and plane, its last plane and the
// last column and row of its box. The loop is unrolled so each box's fields are read from the
// parameter bank at fixed offsets (a dynamic index would copy the set to local memory).
struct HoTile {
  int i0, j0, k0, k1, hi0, hi1;
};
__device__ __forceinline__ HoTile ho_tile(const HoTileSet& ts, int blk) {
  int q = 0;
#pragma unroll
  for (int b = 1; b < kMaxTileBoxes; ++b)
    if (b < ts.count && blk >= ts.begin[b]) q = b;
  HoTile t{};
#pragma unroll
  for (int b = 0; b < kMaxTileBoxes; ++b)
    if (b == q) {
      const int local = blk - ts.begin[b], tx = local % ts.tiles_x[b], r = local / ts.tiles_x[b];
      const int ty = r % ts.tiles_y[b], tz = r / ts.tiles_y[b];
      t.i0 = ts.box[b].lo[0] + tx * kTileX;
      t.j0 = ts.box[b].lo[1] + ty * kTileY;
      t.k0 = ts.box[b].lo[2] + tz * ts.chunk[b];
      t.k1 = min(ts.box[b].hi[2], t.k0 + ts.chunk[b] - 1);
      t.hi0 = ts.box[b].hi[0];
      t.hi1 = ts.box[b].hi[1];
    }
  return t;
}
// The tile of this block when the set has one box launched as a 3D grid (tiles_x, tiles_y,
// chunks): the core's launch. Its fields stay operands from the parameter bank (ho_tile's
// selection cost the core instances up to 8 registers, and a resident block for some). TY: the
// tile's rows.
template <int TY>
__device__ __forceinline__ HoTile ho_tile_grid(const HoTileSet& ts) {
  HoTile t;
  t.i0 = ts.box[0].lo[0] + int(blockIdx.x) * kTileX;
  t.j0 = ts.box[0].lo[1] + int(blockIdx.y) * TY;
  t.k0 = ts.box[0].lo[2] + int(blockIdx.z) * ts.chunk[0];
  t.k1 = min(ts.box[0].hi[2], t.k0 + ts.chunk[0] - 1);
  t.hi0 = ts.box[0].hi[0];
  t.hi1 = ts.box[0].hi[1];
  return t;
}

// FOLD: the CPML corrections folded in (ho_cpml_fold; launched on the boxes that meet a slab, the
// leap-frog schemes only), an instance of its own so the kernel without them keeps its registers.
// Its resident blocks are asked of the compiler (H 5: 48 registers, E 4: 64, no spills): left to
// itself it gave the H instance anywhere from 48 to 75 registers as nearby code changed; the H
// bands took 1.16 ms a step at 48 registers (H100) and 1.52 ms at 75 (3 blocks; H200, whose core
// kernels ran as fast as the H100's): results/highorder.md, session 17. The core instance asks
// for the blocks ho_core_blocks says.
//
// The core instance's resident blocks with one row a thread, asked where ptxas reaches them without
// spilling (session 20, -Xptxas=-v, indexed materials through the constant bank): fv24's H core
// 40 registers (6 blocks;
// left alone 48: 5) and s22's E core 48 (5 blocks; left alone 58-64: 4). The others ask nothing:
// fv24's E core and s22's H core spill when asked, and the other coefficient policies spill
// (fv24_wb's E core went from 55 registers to 48 by itself when the kernel's parameters changed,
// and gained 2.2 % at 512^3: results/highorder.md, session 20).
template <bool ELECTRIC, int SHAPE, class Coef>
constexpr int ho_core_blocks() {
  if constexpr (!std::is_same_v<Coef, ConstantTable>) return 0;
  else return SHAPE == kShapeFv24 && !ELECTRIC ? 6 : SHAPE == kShapeS22 && ELECTRIC ? 5 : 0;
}
//
// RY: the samples a thread updates, one row apart (kTilePlane): 1, or 2 in the core instance
// (ho_core_rows_). The second row's stencil reads the first's ring positions one row down, the
// same shared-memory addresses, so the compiler can load each once: the stencil needs 108 distinct
// positions a sample with one row, 78 with two for fv24 (Nsight: 15 % fewer shared loads in the H
// core; results/highorder.md, session 41). Each sample's arithmetic is unchanged. Two rows take
// 62-64 registers (4 blocks a multiprocessor) and ask for no bound.
template <bool ELECTRIC, int SHAPE, bool FOLD, class Coef, int RY = 1>
__global__ void __launch_bounds__(kTileX * kTileY, FOLD ? (ELECTRIC ? 4 : 5)
                                                   : RY == 1 ? ho_core_blocks<ELECTRIC, SHAPE, Coef>() : 0)
    ho_interior_tiled(FieldPtrs F, GridParams g, HoParams p, HoTileSet tiles, Coef coef, FusedSource src,
                      HoFold fold) {
  static_assert(RY == 1 || (RY == 2 && !FOLD), "two rows a thread in the core instance only");
  pdl_begin();
  constexpr int LO = ELECTRIC ? -2 : -1;  // the stencil's lowest offset on any axis; it reaches LO..LO+3
  constexpr int OTHER = ELECTRIC ? 3 : 0;
  constexpr int PL = kTilePlane<RY>, WX = kTileWX;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + kTileX * ty;
  // The band instance takes its tiles from a set of boxes (1D grid), the core from one box (3D grid).
  const HoTile tile = FOLD ? ho_tile(tiles, int(blockIdx.x)) : ho_tile_grid<kTileY * RY>(tiles);
  const int i0 = tile.i0, j0 = tile.j0, k0 = tile.k0, k1 = tile.k1;
  const int i = i0 + tx, j = j0 + RY * ty;  // the first of the thread's rows
  const bool active = i <= tile.hi0 && j <= tile.hi1;
  const int ilast = tile.hi0 + LO + 3, jlast = tile.hi1 + LO + 3;  // the last column a tile reads
  const float* __restrict__ S0 = F.f[OTHER];
  const float* __restrict__ S1 = F.f[OTHER + 1];
  const float* __restrict__ S2 = F.f[OTHER + 2];
  // Plane kz of the three source components (with the halo): each thread holds kPerThread
  // positions of it in registers (fetch), then writes them into ring slot kz & 3 (put). The next
  // plane is fetched before the current one is computed, so its loads overlap the arithmetic.
  constexpr int kThreads = kTileX * kTileY, kPerThread = (PL + kThreads - 1) / kThreads;
  float r[kPerThread][3];
  // The band instance's box spans x = 0..n-1 and z = 0..n-1 (ho_face_tiles_): a tile whose ring
  // reaches within 2 of an x face (block-uniform), or a plane within 2 of a z face, is fetched
  // through those axes' tables (TABLES below), the image or wrap and the sign product, TableAcc's
  // value (a band's rows are within 2..n-3 along y, where the tables are the identity).
  const bool xface = FOLD && (i0 + LO < 2 || i0 + LO + WX - 1 > g.nx - 3);
  const bool zface = FOLD && (k0 + LO < 2 || k1 + LO + 4 > g.nz - 3);  // some plane of the chunk's ring
  auto table_plane = [&](int kz) { return FOLD && (kz < 2 || kz > g.nz - 3); };
  auto fetch = [&](int kz, auto tables_tag) {
    constexpr bool TABLES = decltype(tables_tag)::value;
    int zoff[3];
    float zsg[3];
    if constexpr (TABLES) {
      const bool zt = table_plane(kz);
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        const int e = ho_table_entry(p, OTHER + c, 2, kz);
        zoff[c] = zt ? __ldg(p.off + e) : kz * g.sz;
        zsg[c] = zt ? __ldg(p.sign + e) : 1.0f;
      }
    }
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      const int t = tid + q * kThreads;
      const int ly = t / WX, lx = t - ly * WX;
      const int gi = i0 + LO + lx, gj = j0 + LO + ly;
      r[q][0] = r[q][1] = r[q][2] = 0.0f;
      if (t < PL && gi <= ilast && gj <= jlast) {
        if constexpr (TABLES) {
          const float* S[3] = {S0, S1, S2};
          const int row = g.origin + gj * g.sy;
          const bool xt = gi < 2 || gi > g.nx - 3;
#pragma unroll
          for (int c = 0; c < 3; ++c) {
            const int e = ho_table_entry(p, OTHER + c, 0, gi);
            const float sg = (xt ? __ldg(p.sign + e) : 1.0f) * zsg[c];
            const int off = xt ? __ldg(p.off + e) : gi;
            r[q][c] = sg != 0.0f ? sg * __ldg(S[c] + row + off + zoff[c]) : 0.0f;
          }
        } else {
          const int o = g.origin + gi + gj * g.sy + kz * g.sz;
          r[q][0] = __ldg(S0 + o);
          r[q][1] = __ldg(S1 + o);
          r[q][2] = __ldg(S2 + o);
        }
      }
    }
  };
  auto put = [&](int kz) {
    const int slot = (kz & 3) * PL;
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      const int t = tid + q * kThreads;
      if (t < PL) {
        ho_smem[slot + t] = r[q][0];
        ho_smem[4 * PL + slot + t] = r[q][1];
        ho_smem[8 * PL + slot + t] = r[q][2];
      }
    }
  };
  for (int kz = k0 + LO; kz < k0 + LO + 4; ++kz) {
    if (xface || table_plane(kz)) fetch(kz, std::true_type{});
    else fetch(kz, std::false_type{});
    put(kz);
  }
  __syncthreads();
  const int lbase = (RY * ty - LO) * WX + (tx - LO);
  // The own sample's material key and three updated components (leap-frog schemes) are loaded a
  // plane ahead, with the ring's next plane, instead of after the curls: those loads were the
  // kernel's main stall (Nsight Compute; loading them at the start of the plane instead gained
  // less: testing/benchmarks/results/highorder.md). Same values and arithmetic as ho_store's
  // (ho_leapfrog); s44 reads its time levels in ho_store.
  constexpr int SELF0 = ELECTRIC ? 0 : 3;
  const bool own_ahead = !p.s44;
  bool act[RY];  // the thread's samples within the box
#pragma unroll
  for (int r = 0; r < RY; ++r) act[r] = i <= tile.hi0 && j + r <= tile.hi1;
  int key_n[RY];
  float u_n[RY][3];
#pragma unroll
  for (int r = 0; r < RY; ++r) key_n[r] = 0, u_n[r][0] = u_n[r][1] = u_n[r][2] = 0.0f;
  auto load_own = [&](int kz) {
#pragma unroll
    for (int r = 0; r < RY; ++r) {
      if (!act[r]) continue;
      const int o = g.origin + i + (j + r) * g.sy + kz * g.sz;
      key_n[r] = coef.key(o);
#pragma unroll
      for (int c = 0; c < 3; ++c) u_n[r][c] = F.f[SELF0 + c][o];
    }
  };
  if (own_ahead) load_own(k0);
  for (int k = k0; k <= k1; ++k) {
    // Window k+LO .. k+LO+3 is in the ring; plane k+LO+4 goes into the slot of k+LO after use.
    const bool more = k < k1;
    int key[RY];
    float u[RY][3];
#pragma unroll
    for (int r = 0; r < RY; ++r) key[r] = key_n[r], u[r][0] = u_n[r][0], u[r][1] = u_n[r][1], u[r][2] = u_n[r][2];
    if (more) {
      if (xface || table_plane(k + LO + 4)) fetch(k + LO + 4, std::true_type{});
      else fetch(k + LO + 4, std::false_type{});
    }
    if (own_ahead && more) load_own(k + 1);
    if constexpr (RY == 1) {
      if (active) {
        TileAcc<WX, LO> a[3];
#pragma unroll
        for (int c = 0; c < 3; ++c)
#pragma unroll
          for (int q = 0; q < 4; ++q) a[c].pb[q] = c * 4 * PL + ((k + LO + q) & 3) * PL + lbase;
        const int o = g.origin + i + j * g.sy + k * g.sz;
        if (own_ahead) {
          // The band instance's box is the union of the components' x and z ranges: in a tile at an
          // x or z face a component keeps its value outside its own (the y ranges hold for the box).
          auto upd = [&](int c) {
            return !(xface || zface) ||
                   (in(i, g.lo[SELF0 + c][0], g.hi[SELF0 + c][0]) && in(k, g.lo[SELF0 + c][2], g.hi[SELF0 + c][2]));
          };
          if (upd(0))
            F.f[SELF0][o] = ho_update_value<ELECTRIC, 0, SHAPE, FOLD>(g, p, fold, coef, src, o, key[0], u[0][0], i, j, k,
                                                                      a[2], a[1]);
          if (upd(1))
            F.f[SELF0 + 1][o] = ho_update_value<ELECTRIC, 1, SHAPE, FOLD>(g, p, fold, coef, src, o, key[0], u[0][1], i, j,
                                                                          k, a[0], a[2]);
          if (upd(2))
            F.f[SELF0 + 2][o] = ho_update_value<ELECTRIC, 2, SHAPE, FOLD>(g, p, fold, coef, src, o, key[0], u[0][2], i, j,
                                                                          k, a[1], a[0]);
        } else {
          ho_apply<ELECTRIC, 0, SHAPE>(F, g, p, coef, src, o, a[2], a[1]);
          ho_apply<ELECTRIC, 1, SHAPE>(F, g, p, coef, src, o, a[0], a[2]);
          ho_apply<ELECTRIC, 2, SHAPE>(F, g, p, coef, src, o, a[1], a[0]);
        }
      }
    } else {
      // Two rows (core instance: no folded corrections, no faces). The curls read shared memory
      // only, so both rows' are computed whatever the rows' place in the box (the ring holds the
      // halo of every thread's samples); the global loads and stores are the box's samples only.
      TileAcc<WX, LO> a[RY][3];
#pragma unroll
      for (int r = 0; r < RY; ++r)
#pragma unroll
        for (int c = 0; c < 3; ++c)
#pragma unroll
          for (int q = 0; q < 4; ++q) a[r][c].pb[q] = c * 4 * PL + ((k + LO + q) & 3) * PL + lbase + r * WX;
      auto component = [&](auto c_tag) {
        constexpr int C = decltype(c_tag)::value, B = (C + 1) % 3, D = (C + 2) % 3;
        float curl[RY];
#pragma unroll
        for (int r = 0; r < RY; ++r) curl[r] = ho_curl<ELECTRIC, C, SHAPE>(g, p, a[r][D], a[r][B]);
#pragma unroll
        for (int r = 0; r < RY; ++r) {
          if (!act[r]) continue;
          const int o = g.origin + i + (j + r) * g.sy + k * g.sz;
          if (own_ahead) F.f[SELF0 + C][o] = ho_leapfrog<ELECTRIC, C>(coef, src, o, key[r], u[r][C], curl[r]);
          else ho_store<ELECTRIC, C>(F, p, coef, src, o, curl[r]);
        }
      };
      component(std::integral_constant<int, 0>{});
      component(std::integral_constant<int, 1>{});
      component(std::integral_constant<int, 2>{});
    }
    if (more) {
      __syncthreads();
      put(k + LO + 4);
      __syncthreads();
    }
  }
}

// The samples outside the interior box: up to six boxes (z-low/high slabs, then y, then x within
// them), one thread per sample, x fastest; the update ranges and the tables as update_ho_bulk.
// The shell is cut further (setup) where an axis enters or leaves the range 2..n-3 in which its
// tables are the identity: a box whose samples are near the faces of one axis at most (axis[q], the
// faces) goes to ho_shell<..., A>, which loads that axis's table entries only and indexes the others
// directly; the boxes near two or three faces (the edges) go to ho_shell<..., -1>.
constexpr int kMaxShellBoxes = 96;
struct HoShell {
  int o[kMaxShellBoxes][3], d[kMaxShellBoxes][3];
  long long begin[kMaxShellBoxes + 1];  // first thread of each box; begin[count] = total
  int axis[kMaxShellBoxes];             // faces: the axis whose tables are used
  int count;
};

// The sample of thread u, x fastest within its box (binary search over begin).
__device__ __forceinline__ void shell_box(const HoShell& sh, long long u, int& i, int& j, int& k) {
  int lo = 0, hi = sh.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (u >= sh.begin[mid]) lo = mid;
    else hi = mid - 1;
  }
  const long long t = u - sh.begin[lo];
  i = sh.o[lo][0] + int(t % sh.d[lo][0]);
  const long long r = t / sh.d[lo][0];
  j = sh.o[lo][1] + int(r % sh.d[lo][1]);
  k = sh.o[lo][2] + int(r / sh.d[lo][1]);
}

// Face accessor: the tables along axis A only (the other two axes are within 2..n-3, where the
// tables are the identity). The same values as TableAcc: its sign product has two factors 1.
template <int A>
struct AxisTableAcc {
  const float* __restrict__ f;  // field + layout origin + the sample's offset along the other two axes
  int off[5];
  float sg[5];
  int sy, sz;
  __device__ __forceinline__ float operator()(int x, int y, int z) const {
    const int d = A == 0 ? x : (A == 1 ? y : z);
    const int rel = (A == 0 ? 0 : x) + (A == 1 ? 0 : y * sy) + (A == 2 ? 0 : z * sz);
    const float s = sg[d + 2];
    return s != 0.0f ? s * __ldg(f + off[d + 2] + rel) : 0.0f;
  }
};
template <int SRC, int A>
__device__ __forceinline__ AxisTableAcc<A> axis_table_acc(const HoParams& p, const GridParams& g, const float* f,
                                                          int i, int j, int k) {
  AxisTableAcc<A> t;
  const int idx[3] = {i, j, k};
  t.f = f + g.origin + (A == 0 ? 0 : i) + (A == 1 ? 0 : j * g.sy) + (A == 2 ? 0 : k * g.sz);
  t.sy = g.sy;
  t.sz = g.sz;
#pragma unroll
  for (int d = 0; d < 5; ++d) ho_table(p, SRC, A, idx[A] + d - 2, t.off[d], t.sg[d]);
  return t;
}

template <bool ELECTRIC, int C, int SHAPE, bool FOLD, class Coef, class Acc>
__device__ __forceinline__ void ho_shell_component(const FieldPtrs& F, const GridParams& g, const HoParams& p,
                                                   const HoFold& fold, const Coef& coef, const FusedSource& src,
                                                   int i, int j, int k, const Acc (&acc)[3]) {
  constexpr int B = (C + 1) % 3, D = (C + 2) % 3;
  constexpr int SELF = ELECTRIC ? C : 3 + C;
  const int o = g.origin + i + j * g.sy + k * g.sz;
  if (!in(i, g.lo[SELF][0], g.hi[SELF][0]) || !in(j, g.lo[SELF][1], g.hi[SELF][1]) ||
      !in(k, g.lo[SELF][2], g.hi[SELF][2])) {
    ho_keep<SELF>(F, p, o);
    return;
  }
  if constexpr (FOLD) {
    const int key = coef.key(o);
    if (p.s44) {  // s44_direct's folded arithmetic
      float dB, dD, cb;
      ho_curl_parts<ELECTRIC, C, SHAPE>(g, p, acc[D], acc[B], dB, dD);
      const float v = s44_value<ELECTRIC, C>(F, p, coef, src, o, key, dB - dD, &cb);
      p.dst[SELF][o] = ho_cpml_fold<ELECTRIC, C>(fold, i, j, k, v, dB, dD, cb);
      return;
    }
    F.f[SELF][o] = ho_update_value<ELECTRIC, C, SHAPE, true>(g, p, fold, coef, src, o, key, F.f[SELF][o], i, j, k,
                                                             acc[D], acc[B]);
  } else {
    ho_apply<ELECTRIC, C, SHAPE>(F, g, p, coef, src, o, acc[D], acc[B]);
  }
}

// The accessor of source component SRC for a shell sample: A < 0 (edges) every axis's table
// entries (table_acc), else axis A's only (AxisTableAcc, faces).
template <int SRC, int A>
__device__ __forceinline__ auto shell_acc(const HoParams& p, const GridParams& g, const float* f, int i, int j, int k) {
  if constexpr (A < 0) return table_acc<SRC>(p, g, f, i, j, k);
  else return axis_table_acc<SRC, A>(p, g, f, i, j, k);
}

// The shell's boxes, one thread per sample, x fastest. A < 0: the edges (ho_shell_[e]); A = 0..2:
// the face boxes whose table axis is A (ho_shell_face_[e][A], one launch per axis). The x faces'
// boxes are 2-3 samples wide, so their warps read 11-16 rows per load: they take about three times
// as long as the y or z faces (L1-bound; one thread per row, or x faces 4-8 samples wide, were
// slower: testing/benchmarks/results/highorder.md).
template <bool ELECTRIC, int SHAPE, bool FOLD, int A, class Coef>
__global__ void ho_shell(FieldPtrs F, GridParams g, HoParams p, HoShell sh, Coef coef, FusedSource src,
                         HoFold fold) {
  pdl_begin();
  const long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (u >= sh.begin[sh.count]) return;
  int i, j, k;
  shell_box(sh, u, i, j, k);
  // The three source components' table entries, each loaded once for the two components using it.
  constexpr int OTHER = ELECTRIC ? 3 : 0;
  using Acc = decltype(shell_acc<OTHER, A>(p, g, F.f[OTHER], i, j, k));
  const Acc acc[3] = {shell_acc<OTHER, A>(p, g, F.f[OTHER], i, j, k),
                      shell_acc<OTHER + 1, A>(p, g, F.f[OTHER + 1], i, j, k),
                      shell_acc<OTHER + 2, A>(p, g, F.f[OTHER + 2], i, j, k)};
  ho_shell_component<ELECTRIC, 0, SHAPE, FOLD>(F, g, p, fold, coef, src, i, j, k, acc);
  ho_shell_component<ELECTRIC, 1, SHAPE, FOLD>(F, g, p, fold, coef, src, i, j, k, acc);
  ho_shell_component<ELECTRIC, 2, SHAPE, FOLD>(F, g, p, fold, coef, src, i, j, k, acc);
}

// CPML correction of one slab with the high-order derivative (FdtdEngineCpu::cpml_ho): one thread
// per psi sample, both components of the slab; the slabs are launched one after the other in the
// CPU engine's order (op.cpml_slabs()), so samples on the edges where slabs overlap receive the
// same corrections in the same order. SHAPE >= 0: D_a as the direct/tiled kernels (direct loads
// for interior samples, table_acc near the faces); kShapeTables: ho_diff.
template <int A, bool ELECTRIC, int Q, int SHAPE, class Coef>
__device__ __forceinline__ void ho_cpml_component(const FieldPtrs& F, const GridParams& g, const HoParams& p,
                                                  const SlabParams& s, const Coef& coef, int i, int j, int k,
                                                  int t, float b, float c, float km1) {
  // Components, sources and signs: cpml_component / cpml_source (kernel_common.cuh).
  constexpr int COMP = cpml_component(A, ELECTRIC, Q), SRC = cpml_source(A, ELECTRIC, Q);
  if (!in(i, g.lo[COMP][0], g.hi[COMP][0]) || !in(j, g.lo[COMP][1], g.hi[COMP][1]) ||
      !in(k, g.lo[COMP][2], g.hi[COMP][2]))
    return;
  const int o = g.origin + i + j * g.sy + k * g.sz;
  float d;
  if constexpr (SHAPE == kShapeTables) {
    d = ho_diff<SRC, A, !ELECTRIC>(F.f[SRC], p, g.origin, i, j, k);
  } else {
    if (i >= 2 && i <= g.nx - 3 && j >= 2 && j <= g.ny - 3 && k >= 2 && k <= g.nz - 3)
      d = ho_dfast<A, !ELECTRIC, SHAPE>(DirectAcc{F.f[SRC] + o, g.sy, g.sz}, p.w);
    else
      d = ho_dfast<A, !ELECTRIC, SHAPE>(table_acc<SRC>(p, g, F.f[SRC], i, j, k), p.w);
  }
  const int key = coef.key(o);
  const float cb = p.s44 ? s44_coefficients(coef.a(COMP, o, key), coef.b(COMP, o, key)).cb : coef.b(COMP, o, key);
  float np;
  F.f[COMP][o] += cpml_increment(b, c, km1, cb, Q == 0 ? 1.0f : -1.0f, d * s.inv_d, s.psi[Q][t], s.lagged, &np);
  s.psi[Q][t] = np;
}

template <int A, bool ELECTRIC, int SHAPE, class Coef>
__global__ void ho_cpml_slab(FieldPtrs F, GridParams g, HoParams p, SlabParams s, Coef coef) {
  pdl_begin();
  const long long u = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long total = (long long)s.d[0] * s.d[1] * s.d[2];
  if (u >= total) return;
  const int li = int(u % s.d[0]);
  const long long r = u / s.d[0];
  const int lj = int(r % s.d[1]), lk = int(r / s.d[1]);
  const int i = s.o[0] + li, j = s.o[1] + lj, k = s.o[2] + lk;
  const int x = A == 0 ? i : (A == 1 ? j : k);
  const float b = __ldg(s.b + x), c = __ldg(s.c + x), km1 = __ldg(s.kinv + x) - 1.0f;
  const int t = int(u);
  ho_cpml_component<A, ELECTRIC, 0, SHAPE>(F, g, p, s, coef, i, j, k, t, b, c, km1);
  ho_cpml_component<A, ELECTRIC, 1, SHAPE>(F, g, p, s, coef, i, j, k, t, b, c, km1);
}

}  // namespace

class FdtdEngineCuda final : public FdtdEngine {
 public:
  FdtdEngineCuda(const FdtdOperator& op, int device, const EngineTuning& tuning);
  ~FdtdEngineCuda() override {
    // (the constant-memory tables: given back by their claims, members)
    // Not checked: destructors must not throw, and a failed release leaves nothing to do.
    side_.release();
    shell_side_.release();
    if (l2_persist_) {  // give the persisting L2 back (a device-wide limit)
      cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
      cudaCtxResetPersistingL2Cache();
    }
  }
  std::string backend() const override { return "cuda:" + device_name_; }
  std::vector<float> field(Component c) const override;
  void set_field(Component c, const std::vector<float>& values) override;
  float* raw_field(Component c) override {
    if (storage_ != FieldStorage::float32)
      fail("raw_field(", component_name(c), "): the CUDA engine stores the fields as ", field_storage_name(storage_),
           " (2-byte elements) and this caller reads float; use field_storage float32");
    return fields_[int(c)].ptr;
  }
  void* raw_field_storage(Component c) override { return fields_[int(c)].ptr; }
  FieldStorage raw_field_element() const override { return storage_; }
  std::int64_t first_non_finite(Component c) const override;
  bool fields_on_device() const override { return true; }
  std::int64_t one_pass_steps() const override { return one_pass_steps_; }
  std::int64_t two_step_steps() const override { return two_step_steps_; }
  std::int64_t two_step_shell_steps() const override { return two_step_shell_steps_; }
  std::int64_t persistent_steps() const override { return persistent_steps_; }
  std::int64_t persistent_planned_steps() const override { return persistent_planned_steps_; }
  int coefficient_arrays_stored() const override { return use_table_ ? 0 : coef_distinct_; }
  bool set_fused_e_source(const float* const s[3]) override {
    if (s && fused_.s[0]) return false;  // one fused source at a time; others run their own pass
    for (int c = 0; c < 3; ++c) fused_.s[c] = s ? reinterpret_cast<const float2*>(s[c]) : nullptr;
    fused_.cr = fused_.ci = 0.0f;
    return true;
  }
  void set_fused_e_source_phase(float cr, float ci) override {
    fused_.cr = cr;
    fused_.ci = ci;
  }

 protected:
  void do_steps(int n) override;
  std::vector<float> probe_values() const override;
  void read_plane(Component c, int axis, int index, float* out) const override;
  void write_plane(Component c, int axis, int index, const float* in) override;
  void copy_plane(Component c, int axis, int index, float* host, bool to_host) const;
  void layout_to_host(Component c, std::vector<float>& host) const;
  void layout_from_host(Component c, const std::vector<float>& host);

 private:
  template <class Coef> void step_once(const Coef& coef, int step);
  template <class Coef> void update_bulk(bool electric, const Coef& coef, bool split);
  // Subdomain faces (halo_exchange.h) with the update overlapping the exchange: the planes a
  // half step sends are packed on the device into one buffer, handed to the HaloExchange as
  // device buffers (NCCL) or staged through page-locked host memory on the copy stream, while
  // the bulk kernels update the interior box; the slabs next to the receiving faces (the only
  // samples that read the received planes) are updated after the planes are unpacked. Each
  // sample's arithmetic is unchanged, so the fields equal the unsplit update's bit for bit.
  struct HaloState {
    bool ready = false, device = false;
    int faces[2][6] = {};        // [electric]: sending then receiving faces
    int nsend[2] = {}, nrecv[2] = {};
    std::size_t offset[2][6] = {};  // [electric][slot]: the plane's first value in dev / host
    std::size_t plane[3] = {};      // values of one component's plane normal to each axis
    DeviceArray<float> dev;
    float* host = nullptr;          // page-locked mirror of dev (host staging only)
    cudaStream_t copy = nullptr;
    cudaEvent_t packed = nullptr, staged = nullptr, arrived = nullptr;
    std::vector<HaloBuffer> send[2], recv[2];  // [electric]
    std::vector<Window> interior[2], border[2];  // [electric]: interior box and border slabs
    int pending = -1;               // the half step whose exchange is started but not finished
    bool probe_on_received = false; // a probe samples a received E plane (no deferred finish)
    ~HaloState();
  };
  HaloState hs_;
  bool halo_overlap_ = true;  // EngineTuning::halo_overlap
  // Some face is a subdomain face (an exchange set on an engine without one, e.g. a distributed
  // run of one rank, changes nothing: one pass and graphs stay allowed).
  bool subdomain_ = false;
  void halo_setup();
  void halo_start(bool electric);
  void halo_finish(bool electric);
  void halo_copy_planes(bool electric, bool pack);
  template <class Coef> void run_steps(const Coef& coef, int n);
  // skip: leave out the samples inside this box (the s44 pair's core, whose kernel applied them).
  void push_point_updates(bool electric, int step, const HoBox* skip = nullptr);
  // The point updates of step `step` on E (electric) or H, in the sources' order:
  // fn(component 0-5, layout offset, value, hard) for each active component.
  template <class Fn> void for_each_point_update(bool electric, int step, Fn&& fn) const;

  // The constant-memory tables this engine may hold (g_constant_table_owner's, onepass's), given
  // back also when the constructor throws after the claim (core/exclusive_claim.h).
  ExclusiveClaim table_claim_, onepass_claim_;
  int device_;
  std::string device_name_;
  dim3 block_;
  int chunk_ = 1;  // z planes per thread in the bulk kernels
  bool use_table_ = false;       // a table and an index (indexed, or packed coefficient arrays)
  bool constant_table_ = false;
  GridParams g_{};
  FieldPtrs F_{};
  FieldStorage storage_ = FieldStorage::float32;  // FdtdSetup::field_storage
  std::size_t field_floats_ = 0;  // floats allocated per field array (layout size x element bytes / 4, rounded up)
  // Calls fn(T{}) with the storage's element type (kernel_common.cuh with_storage).
  template <class Fn>
  void with_storage(Fn&& fn) const { cuda_kernels::with_storage(storage_, std::forward<Fn>(fn)); }
  FusedSource fused_{};
  DeviceArray<float> fields_[6];
  DeviceArray<std::uint16_t> index_;
  DeviceArray<float> table_;
  // Coefficient arrays (no table): coef_ptr_[q] is the device array coefficient q reads. Arrays
  // equal bit for bit to another of the same kind (the a or b of the three E or of the three H
  // components: an isotropic medium, a non-magnetic one) are uploaded once and read through
  // one pointer (coef_[q] of the first), which saves their memory and, since the kernels then
  // load the same address for each component, their DRAM traffic (fdtd_onepass_h100.md).
  DeviceArray<float> coef_[12];
  const float* coef_ptr_[12] = {};
  int coef_distinct_ = 0;
  struct AxisProfile { DeviceArray<float> b_e, c_e, kinv_e, b_h, c_h, kinv_h; };
  AxisProfile profile_[3];
  // psi_h_next: the second H psi set of a one-pass step with folded CPML (onepass::Slab);
  // psi_e_next: the second E psi set of temporal blocking (setup_two_step); psi_h_mid, psi_e_mid:
  // the third sets of its shell tiles' pairs (the rest's psi between its two steps).
  struct SlabState {
    int axis, face;
    SlabParams e, h;
    DeviceArray<float> psi_e[2], psi_h[2], psi_h_next[2], psi_e_next[2], psi_h_mid[2], psi_e_mid[2];
    std::int64_t ne = 0, nh = 0;
  };
  void swap_psi(bool electric);
  template <bool ELECTRIC, class Coef> void launch_cpml(const Coef& coef);
  // High-order schemes: resolve tables and terms on the device, the bulk kernels' block.
  bool high_order_ = false;
  HoParams ho_{};
  DeviceArray<int> ho_off_;
  DeviceArray<float> ho_sign_;
  DeviceArray<float> ho_hist_[6][3];  // s44: the three earlier time levels
  dim3 ho_block_;
  dim3 ho_band_block_;  // the folded bands' block (s44: 32 x 4 x 1 by default; else ho_block_)
  EngineTuning::HighOrderKernel ho_kernel_ = EngineTuning::HighOrderKernel::tables;
  int ho_shape_ = kShapeTables;  // the stencil's shape (kShape*), kShapeTables: another shape
  int ho_chunk_ = 32;            // tiled: z planes per block
  int ho_core_rows_[2] = {2, 2};  // tiled: rows a thread in the launches without the corrections, H and E
  HoBox ho_box_[2] = {};         // [electric]: the interior box of the direct and tiled kernels
  HoShell ho_shell_[2] = {};     // [electric]: the samples outside it (the edges with ho_shell_faces_)
  HoShell ho_shell_face_[2][3] = {};  // [electric][table axis]: the shell's face boxes (ho_shell<..., A>)
  bool ho_shell_faces_ = true;     // VEM_HO_SHELL_FACES=0: the whole shell in ho_shell (measurement)
  // The x and z faces of the shell computed by the folded tiled kernel (the interior box's setup
  // below); VEM_HO_X_FACES=shell / VEM_HO_Z_FACES=shell leave them to ho_shell (measurement).
  bool ho_face_tiles_[3] = {true, false, true};
  int ho_band_chunk_ = 16;         // z planes per block in the folded bands (VEM_HO_BAND_CHUNK; 0: ho_chunk_)
  // CPML corrections folded into the tiled and shell kernels (EngineTuning::ho_cpml): the interior
  // box cut into the bands that meet a slab (kernel with the corrections) and the core (without).
  bool ho_fold_ = false;
  struct HoBand {
    HoBox box;
    int chunk;  // z planes per block
  };
  std::vector<HoBand> ho_bands_[2];  // [electric]
  // The launches of the tiled kernel (HoTileSet), set up from ho_box_, ho_bands_ and ho_core_: the
  // box whole (CPML not folded), or the bands (one launch: VEM_HO_BAND_LAUNCH=separate, one each)
  // and the core.
  HoTileSet ho_box_tiles_[2] = {}, ho_core_tiles_[2] = {};
  std::vector<HoTileSet> ho_band_tiles_[2];
  // The shell's kernels run on side_ beside the interior's (forked from stream_ before them,
  // joined after): they update other samples from the same source field, and alone they leave
  // most of the machine idle (short, latency-bound launches). Not while a graph is recorded.
  // VEM_HO_SHELL_STREAM=0: on stream_ after the interior (measurement).
  bool ho_shell_beside_ = false;
  // z planes per block of the x, y and z bands (0: ho_band_chunk_); VEM_HO_BAND_CHUNK_X / _Y / _Z.
  // The x bands at 16 (two tile columns, the thickest bands): fv24_wb +0.7 % against 8 at 512^3 on
  // an H100, 32 lost (results/highorder.md, session 17). The y and z bands at 16 (ho_band_chunk_;
  // a z band's 10 planes of a 10-cell CPML in one block): fv24_wb +1.0 %, fv24 +0.8 %, s22 +0.9 %
  // against 8 at 512^3 on an H200 (session 41).
  int ho_band_chunk_axis_[3] = {16, 0, 0};
  HoBox ho_core_[2] = {};
  HoFold make_ho_fold(bool electric) const;
  template <bool ELECTRIC, class Coef> void launch_ho(const Coef& coef);
  template <bool ELECTRIC, int SHAPE, class Coef> void launch_ho_shape(const Coef& coef);
  template <bool ELECTRIC, int SHAPE, class Coef>
  void launch_ho_shell(const Coef& coef, const HoFold& fold, cudaStream_t stream);
  template <bool ELECTRIC> void rotate_s44();
  // s44 two steps per pass (EngineTuning::s44_stepping; s44_pair_interior above): the core box the
  // pair kernel steps, the direct box less the core per field (the rest's direct launches while
  // s44_rest_now_), two spare time levels per component (the pair and the rest write steps 1 and
  // 2 there; the levels they free become the spares), the coefficient table per material key.
  bool s44_pair_ = false;
  bool s44_rest_now_ = false;
  int s44_spare_slot_ = -1;  // rotate_s44: the spare that becomes the current level (-1: hist[c][2])
  S44Pair s44_pr_{};
  dim3 s44_grid_;
  std::vector<HoBox> s44_rest_[2];  // [electric]
  DeviceArray<float> s44_spare_[6][2];
  DeviceArray<float> s44_tab_;
  void setup_s44_pair(const EngineTuning& tuning);
  bool s44_core_steppable() const;
  // s44's one-step direct kernel: s44_direct (the stores last, the coefficients from s44_tab_ with
  // a material table) unless VEM_S44_DIRECT=interleaved asks for ho_interior_direct (measurement).
  bool s44_stores_last_ = false;
  bool s44_core_align_ = false;   // s44's folded core's rows from a 128-byte line (VEM_S44_CORE_X)
  bool s44_levels_first_ = env_is("VEM_S44_LOAD_ORDER", "levels_first");  // (measurement)
  void setup_s44_table();
  bool s44_pair_now() const { return s44_pair_ && !has_extensions() && !fused_.s[0]; }
  template <class Coef> void step_pair_s44(const Coef& coef, int step);
  // The point updates of `stages` half steps from step `step` on (H, E, H of step + 1, E of
  // step + 1) for the pair and one-pass kernels.
  S44PairPoints s44_points(int stages, int step) const;
  // s44 one pass per step (EngineTuning::s44_stepping one_pass; s44_onepass_interior above): the
  // same core / rest split as the pair's (s44_pr_, s44_rest_, one spare level per component),
  // the core grown by 3 instead of 6 and its rows from a 128-byte line.
  bool s44_onepass_ = false;
  // The kernel on the side stream beside the rest's H pass (default), or before it
  // (VEM_S44_ONEPASS_REST=after, measurement).
  bool s44_op_beside_ = true;
  bool s44_op_early_ = true;  // s44_onepass_interior's EARLY (VEM_S44_ONEPASS_LOADS=in_stage: false)
  bool s44_onepass_now() const { return s44_onepass_ && !has_extensions() && !fused_.s[0]; }
  template <class Coef> void step_onepass_s44(const Coef& coef, int step);
  // s44's wavefront (EngineTuning::s44_stepping wavefront; s44_wavefront above): the task layout
  // (s44_wave_.box: the cores' intersection), what each field's core holds beyond it (stepped with
  // the bands while s44_wave_now_), the counters, the launch's blocks and the launches so far.
  bool s44_wavefront_ = false;
  bool s44_wave_now_ = false;
  S44Wave s44_wave_{};
  std::vector<HoBox> s44_wave_rest_[2];
  DeviceArray<unsigned long long> s44_wave_counter_;
  int s44_wave_blocks_ = 0;
  unsigned long long s44_wave_launches_ = 0;
  void setup_s44_wavefront();
  bool s44_wavefront_now() const { return s44_wavefront_ && !has_extensions() && !fused_.s[0]; }
  template <class Coef> void step_wavefront_s44(const Coef& coef, int step);
  // Whether stream_ is being captured into a graph (work forked onto side_ would not be in it).
  bool stream_capturing() const {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    VEM_CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
    return capture != cudaStreamCaptureStatusNone;
  }
  // A stepping kernel on the engine's stream (launch_on: on `stream`, with dynamic shared memory),
  // with programmatic dependent launch when pdl_.
  template <class... KArgs, class... Args>
  void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, Args&&... args) {
    launch_on(stream_, kernel, grid, block, 0, std::forward<Args>(args)...);
  }
  template <class... KArgs, class... Args>
  void launch_on(cudaStream_t stream, void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem,
                 Args&&... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned na = 0;
    if (pdl_) {
      attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[na++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (l2_persist_) {
      attr[na].id = cudaLaunchAttributeAccessPolicyWindow;
      attr[na++].val.accessPolicyWindow = l2_window_;
    }
    cfg.attrs = attr;
    cfg.numAttrs = na;
    VEM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  }
  bool pdl_ = false;
  // One pass per step (issue 16, fdtd/cuda/fused_step.h): the second set of field arrays (the
  // pass writes H^{n+1/2} and E^{n+1} there; swapped with fields_ after the step), the kernels'
  // grid and coefficients, the E samples computed again after the H corrections.
  bool onepass_ = false;
  DeviceArray<float> next_[6];
  onepass::Grid onepass_grid_{};
  onepass::Coefs onepass_coefs_{};
  std::vector<onepass::Box> onepass_boxes_;
  onepass::CpmlSet onepass_cpml_h_, onepass_cpml_e_;  // folded slabs (count 0: slab kernels)
  int onepass_tile_y_ = 8, onepass_chunk_ = 64;
  bool onepass_hoist_ = false;  // the boundary tiles with the hoisted slabs (setup_onepass)
  std::int64_t one_pass_steps_ = 0;
  void setup_onepass(const EngineTuning& tuning);
  // Temporal blocking (EngineTuning::temporal_blocking; onepass::plan_two_step): step pairs from
  // fields_ (level n) into next_ (level n+2): the first one-pass step of the rest (fields_ -> mid_,
  // the rest grown by one sample), its second (mid_ -> next_), and the interior tiles on
  // side_ beside the second (tb_rest_first_) or the first. E psi: read from psi_e and written into psi_e_next in the first step, back in
  // the second (tb_cpml_e_[step]); H psi likewise through the one-pass pair of sets, so a pair
  // leaves both where they were.
  // Shell tiles (tb_shell_, plan_two_step's `shell`): the CPML shell and the faces step in pairs too
  // (onepass::launch_two_step_shell), the rest's blocks hold only the tiles next to sources and
  // probes. psi: the shell tiles read the current sets and write the second ones, the rest goes
  // through the third (psi_*_mid) in its step 1 and into the second in its step 2; after the pair
  // swap_psi makes the second sets of both kinds current.
  bool two_step_ = false;
  bool tb_shell_ = false;
  // Where a shell pair's interior goes (setup_two_step): forked and launched before the shell
  // launch; forked before it but launched after it (beside it, the shell's blocks dispatched
  // first); forked after it (waiting for it).
  enum class ShellInterior { before, after_beside, after } tb_shell_interior_ = ShellInterior::before;
  // The shell launch on shell_side_, beside the rest's two steps on stream_ (setup_two_step).
  bool tb_shell_beside_rest_ = false;
  bool tb_tail_before_join_ = false;  // step 2's point updates and probes before the joins (setup_two_step)
  SideStream shell_side_;
  DeviceArray<onepass::TwoStepTile> tb_shell_tiles_;  // every list of the plan's shell, one after the other
  onepass::ShellLists tb_shell_lists_;
  onepass::CpmlSet tb_mid_h_[2], tb_mid_e_[2];  // the rest's sets of a shell pair: [step]; rebuilt per pair
  void shell_pair_sets();
  DeviceArray<float> mid_[6];
  DeviceArray<onepass::TwoStepTile> tb_tiles_;
  DeviceArray<onepass::PassBlock> tb_first_, tb_second_;
  int tb_tile_y_ = 16;
  bool tb_rest_first_ = true;  // the interior waits for step 1 of the rest and runs beside step 2 (setup_two_step)
  int tb_interior_blocks_ = 0;  // 0: one interior block a tile; else that many take the tiles in turn (setup_two_step)
  bool tb_interior_in_shell_ = false;  // the interior tiles in the shell launch (ShellLists::interior)
  bool tb_hoist_ = true;       // the rest's blocks with the hoisted slabs (setup_two_step)
  onepass::CpmlSet tb_cpml_e_[2];
  SideStream side_;  // temporal blocking's interior; the high-order shell (ho_shell_beside_)
  std::int64_t two_step_steps_ = 0, two_step_shell_steps_ = 0;
  // automatic: chosen by default (setup_onepass); a model it cannot take then steps one pass at a
  // time instead of failing.
  void setup_two_step(const EngineTuning& tuning, bool automatic);
  template <class Coef> void step_pair(const Coef& coef, int step);
  void gather_probes_at(int step);
  // Persistent stepping (EngineTuning::Step::persistent, onepass::launch_persistent): the steps of
  // a do_steps call in one cooperative kernel (at most kPersistentLaunchSteps per launch), in place,
  // when nothing runs between steps but E point sources and probes. persistent_cpml_h_ / _e_: the
  // folded slabs with psi read and written in place; persistent_values_: the sources' values of a
  // launch's steps, [step][component]; persistent_table_: the 6 field arrays (ProbeSet::fields).
  bool persistent_ = false;
  onepass::CpmlSet persistent_cpml_h_, persistent_cpml_e_;
  onepass::SourceSet persistent_src_{};
  bool persistent_hoisted_ = true;  // EngineTuning::PersistentSamples (setup_persistent)
  bool persistent_wide_ = false;    // VEM_PERSISTENT_OFFSETS=64 (setup_persistent)
  // The sample plan (onepass::plan_persistent; setup_persistent): null view for the walk.
  DeviceArray<std::uint32_t> persistent_plan_;
  onepass::PlanView persistent_plan_view_;
  DeviceArray<float> persistent_values_;
  DeviceArray<float*> persistent_table_;
  std::int64_t persistent_steps_ = 0, persistent_planned_steps_ = 0;
  static constexpr int kPersistentLaunchSteps = 1024;
  // Automatic: persistent stepping below this many cells where the model allows it (measured,
  // testing/benchmarks/results/fdtd_small_grids_h100.md, one H100, same run, Mcells/s default
  // before / persistent: 64^3 9,434 / 11,433, 96^3 12,853 / 13,510, 128^3 12,859 / 15,194,
  // 160 x 160 x 93 14,452 / 15,292, 192^3 17,562 / 18,238, 256^3 23,318 / 19,133).
  static constexpr std::int64_t kPersistentBelowCells = std::int64_t(8) * 1000 * 1000;
  // Temporal blocking by default from this many cells (setup_onepass).
  static constexpr std::int64_t kTwoStepFromCells = std::int64_t(2) * 1000 * 1000;
  // Shell tiles with temporal blocking from this many cells (setup_two_step), that is wherever
  // temporal blocking is on by default. One H100, one call, Mcells/s without / with them: 256^3
  // 30,804 / 36,618, 320^3 34,049 / 39,824, 384^3 37,867 / 42,745, 512^3 39,856 / 47,196
  // (results/fdtd.md, session 23); one H200, one call, without / with them (the interior forked
  // before them): 128^3 18,870 / 23,326, 160 x 160 x 93 20,461 / 21,565, 192^3 27,027 / 35,114
  // (session 24).
  static constexpr std::int64_t kShellFromCells = std::int64_t(2) * 1000 * 1000;
  // The general shell tiles cut into pieces of 8 planes from this many cells, whole below
  // (setup_two_step). Mcells/s cut / whole, one call each: one H100, 512^3 47,196 / 44,623, 384^3
  // 42,745 / 40,847, 320^3 39,824 / 39,600, 256^3 36,618 / 37,742 (results/fdtd.md, session 23);
  // one H200, 256^3 42,928 / 44,303, 192^3 35,162 / 36,725, 128^3 23,396 / 23,306, 160 x 160 x 93
  // 21,518 / 21,359 (session 24).
  static constexpr std::int64_t kShellGeneralCutFromCells = std::int64_t(32) * 1000 * 1000;
  // With shell tiles the interior is forked after their launch from this many cells, before it
  // below (setup_two_step).
  static constexpr std::int64_t kShellInteriorAfterCells = std::int64_t(16) * 1000 * 1000;
  // With shell tiles the shell launch runs on a stream of its own beside the rest's steps, and the
  // pairs are captured in CUDA graphs, below this many cells (setup_two_step). One H200, one call,
  // Mcells/s on stream_ / beside the rest (twice) / beside in graphs: 128^3 24,119 / 25,257, 25,182 /
  // 25,111; 160 x 160 x 93 22,654 / 24,306, 24,286 / 27,173; 192^3 37,636 / 37,083, 36,309 /
  // 37,354; 256^3 45,564 / 45,320, 45,326 / 45,693 (results/fdtd.md, session 25).
  static constexpr std::int64_t kShellBesideRestBelowCells = std::int64_t(4) * 1000 * 1000;
  // The shell tiles' planes in the packed pair, and from kShellBesideRestBelowCells below
  // kShellInteriorAfterCells (setup_two_step; results/fdtd.md, session 34).
  static constexpr int kPackedShellChunk = 14;
  static constexpr int kMidShellChunk = 24;
  // The packed pair's general shell tiles (the corners, the slowest a plane) cut into pieces of at
  // most this many planes (setup_two_step; results/fdtd.md, session 36).
  static constexpr int kPackedGeneralChunk = 6;
  bool persistent_now() const { return persistent_ && !has_extensions() && !fused_.s[0]; }
  // The one-pass slab sets let the hoisted slabs run (onepass::hoistable).
  bool hoistable_slabs() const { return onepass::hoistable(onepass_cpml_h_) && onepass::hoistable(onepass_cpml_e_); }
  void setup_persistent(const EngineTuning& tuning, const onepass::SourceSet& src);
  void fill_cpml_set(onepass::CpmlSet& cs, bool electric, bool second_set);
  void set_onepass_coefs(const EngineTuning& tuning);
  void run_persistent(int n);
  // Small grids (fdtd/cuda/graph_stepping.cuh): CUDA graphs of chunks of steps (the stream the
  // stepping launches go to: 0, or the capture stream while a chunk is recorded) and the L2
  // persisting window.
  small_grid::GraphState graph_;
  cudaStream_t stream_ = nullptr;
  bool l2_persist_ = false;
  cudaAccessPolicyWindow l2_window_{};
  std::vector<std::unique_ptr<SlabState>> slabs_;
  // CPML launch sets (cpml_correct_all): all slabs in one (merged) or one per axis.
  SlabSet set_e_ = {}, set_h_ = {};
  SlabSet set_axis_e_[3] = {}, set_axis_h_[3] = {};
  bool merged_cpml_ = true;
  DeviceArray<int> probe_field_;
  DeviceArray<long long> probe_offset_;
  DeviceArray<float> probe_buf_;
  std::size_t probe_capacity_steps_ = 0;
};

FdtdEngineCuda::FdtdEngineCuda(const FdtdOperator& op, int device, const EngineTuning& tuning)
    : FdtdEngine(op), device_(device) {
  int count = 0;
  VEM_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    fail("CUDA device index ", device, " is out of range: ", count, " device(s) present");
  VEM_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  VEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  device_name_ = prop.name;

  const std::int64_t need = op.device_bytes();
  std::size_t free_b = 0, total_b = 0;
  VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need > std::int64_t(free_b))
    fail("the grid ", op.grid().nx, " x ", op.grid().ny, " x ", op.grid().nz, " needs ", need,
         " bytes of GPU memory; device ", device, " (", device_name_, ") has ", free_b,
         " bytes free of ", total_b);

  const FieldLayout& L = op.layout();
  const YeeGrid& gr = op.grid();
  g_.nx = gr.nx; g_.ny = gr.ny; g_.nz = gr.nz;
  g_.sy = int(L.sy); g_.sz = int(L.sz); g_.origin = L.origin;
  g_.inv_d[0] = float(1.0 / gr.dx); g_.inv_d[1] = float(1.0 / gr.dy); g_.inv_d[2] = float(1.0 / gr.dz);
  for (int c = 0; c < 6; ++c)
    for (int a = 0; a < 3; ++a) {
      g_.lo[c][a] = op.range_lo(Component(c), a);
      g_.hi[c][a] = op.range_hi(Component(c), a);
    }

  storage_ = op.setup().field_storage;
  field_floats_ = (std::size_t(L.size) * field_storage_bytes(storage_) + 3) / 4;
  for (int c = 0; c < 6; ++c) {
    fields_[c].allocate(field_floats_, "field arrays");
    fields_[c].zero();
    F_.f[c] = fields_[c].ptr;
  }
  // Coefficients: an indexed model's table, a coefficient-array model's distinct tuples as a
  // table (automatic: whenever they fit, fewer bytes per step), or the 12 arrays.
  const CoefficientTable ct = coefficient_table_for(op, tuning.coefficients, true);
  use_table_ = bool(ct);
  if (use_table_) {
    const std::size_t entries = ct.entries;
    index_.allocate(L.size, "material index array");
    index_.upload(ct.index, L.size);
    using TP = EngineTuning::TablePlacement;
    const bool fits = entries <= std::size_t(kConstantTableCapacity);
    if (tuning.table == TP::constant && !fits)
      fail("material table of ", entries, " entries does not fit constant memory (",
           kConstantTableCapacity, " entries)");
    constant_table_ = tuning.table == TP::constant || (tuning.table == TP::automatic && fits);
    if (constant_table_) {
      if (!table_claim_.take(g_constant_table_owner, this)) {
        if (tuning.table == TP::constant)
          fail("the constant-memory material table is in use by another live CUDA engine; use "
               "TablePlacement::automatic or global for concurrent engines");
        constant_table_ = false;
      } else {
        VEM_CUDA_CHECK(cudaMemcpyToSymbol(c_table, ct.table, entries * 12 * sizeof(float)));
      }
    }
    table_.allocate(entries * 12, "material coefficient table");
    table_.upload(ct.table, entries * 12);
  } else {
    const auto& arrays = op.coefficient_arrays();
    for (int q = 0; q < 12; ++q) {
      // Same kind: q and q - 2, q - 4 within its group of three (E a, E b, H a, H b: arr[2c], arr[2c+1]).
      const int first_of_group = (q < 6 ? 0 : 6) + (q & 1);
      int same = -1;
      for (int p = first_of_group; p < q && same < 0; p += 2)
        if (coef_[p].ptr && arrays[p].size() == arrays[q].size() &&
            std::memcmp(arrays[p].data(), arrays[q].data(), arrays[q].size() * sizeof(float)) == 0)
          same = p;
      if (same >= 0) {
        coef_ptr_[q] = coef_[same].ptr;
        continue;
      }
      coef_[q].allocate(L.size, "coefficient arrays");
      coef_[q].upload(arrays[q].data(), L.size);
      coef_ptr_[q] = coef_[q].ptr;
      ++coef_distinct_;
    }
  }
  for (int a = 0; a < 3; ++a) {
    const CpmlProfile& p = op.cpml_profile(a);
    AxisProfile& d = profile_[a];
    auto up = [](DeviceArray<float>& dst, const std::vector<float>& src) {
      dst.allocate(src.size(), "CPML profiles");
      dst.upload(src.data(), src.size());
    };
    up(d.b_e, p.b_e); up(d.c_e, p.c_e); up(d.kinv_e, p.kinv_e);
    up(d.b_h, p.b_h); up(d.c_h, p.c_h); up(d.kinv_h, p.kinv_h);
  }
  const int n[3] = {gr.nx, gr.ny, gr.nz};
  for (const CpmlSlab& s : op.cpml_slabs()) {
    auto st = std::make_unique<SlabState>();
    const int a = s.axis;
    st->axis = a;
    st->face = s.face;
    for (int electric = 0; electric < 2; ++electric) {
      const PsiBox box(s, electric, n);
      SlabParams& sp = electric ? st->e : st->h;
      for (int ax = 0; ax < 3; ++ax) { sp.o[ax] = box.o[ax]; sp.d[ax] = box.d[ax]; }
      sp.inv_d = g_.inv_d[a];
      sp.lagged = op.cpml_profile(a).lagged ? 1 : 0;
      const AxisProfile& pr = profile_[a];
      sp.b = electric ? pr.b_e.ptr : pr.b_h.ptr;
      sp.c = electric ? pr.c_e.ptr : pr.c_h.ptr;
      sp.kinv = electric ? pr.kinv_e.ptr : pr.kinv_h.ptr;
      DeviceArray<float>* psi = electric ? st->psi_e : st->psi_h;
      for (int q = 0; q < 2; ++q) {
        psi[q].allocate(box.size(), "CPML psi arrays");
        psi[q].zero();
        sp.psi[q] = psi[q].ptr;
      }
      (electric ? st->ne : st->nh) = std::int64_t(box.size());
    }
    slabs_.push_back(std::move(st));
  }
  auto add = [](SlabSet& set, const SlabParams& sp, int a, std::int64_t cells) {
    if (set.count == kMaxSlabs) fail("CUDA engine: more than ", kMaxSlabs, " CPML slabs (one per face)");
    set.s[set.count] = sp;
    set.axis[set.count] = a;
    set.begin[set.count + 1] = set.begin[set.count] + cells;
    ++set.count;
  };
  for (int electric = 0; electric < 2; ++electric)
    for (int a = 0; a < 3; ++a)  // axis order (op.cpml_slabs() is in face order already)
      for (const auto& st : slabs_) {
        const std::int64_t cells = electric ? st->ne : st->nh;
        if (st->axis != a || cells == 0) continue;
        add(electric ? set_e_ : set_h_, electric ? st->e : st->h, a, cells);
        add(electric ? set_axis_e_[a] : set_axis_h_[a], electric ? st->e : st->h, a, cells);
      }
  using KL = EngineTuning::KernelLaunch;
  pdl_ = tuning.launch == KL::programmatic || (tuning.launch == KL::automatic && prop.major >= 9);
  halo_overlap_ = tuning.halo_overlap != EngineTuning::HaloOverlap::off;
  for (int f = 0; f < 6; ++f) subdomain_ = subdomain_ || op.setup().boundaries.face[f] == BoundaryType::subdomain;
  if (const char* v = std::getenv("VEM_HALO_OVERLAP")) {
    if (std::string(v) == "0") halo_overlap_ = false;
    else if (std::string(v) == "1") halo_overlap_ = true;
    else fail("VEM_HALO_OVERLAP=", v, ": use 0 (exchange between whole updates) or 1 (overlap)");
  }
  using CL = EngineTuning::CpmlLaunch;
  merged_cpml_ = tuning.cpml == CL::merged ||
                 (tuning.cpml == CL::automatic && gr.cell_count() < std::int64_t(8) * 1000 * 1000);
  const auto& probes = op.probes();
  if (!probes.empty()) {
    std::vector<int> pf;
    std::vector<long long> po;
    for (const auto& p : probes) { pf.push_back(int(p.probe.component)); po.push_back((long long)p.offset); }
    probe_field_.allocate(pf.size(), "probe tables");
    probe_field_.upload(pf.data(), pf.size());
    probe_offset_.allocate(po.size(), "probe tables");
    probe_offset_.upload(po.data(), po.size());
  }
  // Defaults measured on an H100 at 512^3 (testing/benchmarks/results/fdtd.md): 32 x 4 threads and
  // z-chunks of 1 plane (21.2 Gcells/s; 64-plane marching 20.4, whole columns 17.0 - the last
  // wave ran nearly empty; Hopper's L1/L2 serve the z-neighbour as well as registers do).
  block_ = dim3(tuning.block_x > 0 ? tuning.block_x : 32, tuning.block_y > 0 ? tuning.block_y : 4, 1);
  chunk_ = tuning.z_chunk > 0 ? tuning.z_chunk : 1;
  if (block_.x % 32 != 0 || block_.x * block_.y > 1024)
    fail("CUDA block shape ", block_.x, " x ", block_.y, " is invalid (x a multiple of 32, at most 1024 threads)");
  if (op.scheme().scheme != Scheme::yee) {
    high_order_ = true;
    if (op.layout().size >= std::int64_t(2147483647))
      fail("scheme ", scheme_name(op.scheme().scheme), " on the CUDA engine: the grid ", g_.nx, " x ", g_.ny, " x ",
           g_.nz, " has ", op.layout().size, " samples per padded field array, and the high-order kernels' offset "
           "tables are 32-bit (limit 2^31 - 1 = 2147483647): use scheme yee (64-bit offsets) or a smaller grid");
    // Default block 32 x 8 x 1: the best of the direct kernel for s44 (results/highorder_bench_h100_512_v2.md;
    // the tables kernel measured the same with 32 x 4 x 2 and 32 x 8 x 1).
    ho_block_ = dim3(tuning.ho_block_x > 0 ? tuning.ho_block_x : 32, tuning.ho_block_y > 0 ? tuning.ho_block_y : 8,
                     tuning.ho_block_z > 0 ? tuning.ho_block_z : 1);
    if (tuning.ho_block_x < 0 || tuning.ho_block_y < 0 || tuning.ho_block_z < 0 || ho_block_.z > 64 ||
        ho_block_.x * ho_block_.y * ho_block_.z > 1024)
      fail("CUDA high-order block shape ", tuning.ho_block_x, " x ", tuning.ho_block_y, " x ", tuning.ho_block_z,
           " is invalid (each >= 0, z at most 64, at most 1024 threads)");
    const HighOrderStencil hs = build_high_order_stencil(op);
    std::vector<int> off;
    std::vector<float> sign;
    for (int c = 0; c < 6; ++c)
      for (int a = 0; a < 3; ++a) {
        ho_.base[c][a] = int(off.size());
        for (std::int64_t v : hs.res[c][a].off) off.push_back(int(v));
        sign.insert(sign.end(), hs.res[c][a].sign.begin(), hs.res[c][a].sign.end());
      }
    ho_off_.allocate(off.size(), "high-order stencil tables");
    ho_off_.upload(off.data(), off.size());
    ho_sign_.allocate(sign.size(), "high-order stencil tables");
    ho_sign_.upload(sign.data(), sign.size());
    ho_.off = ho_off_.ptr;
    ho_.sign = ho_sign_.ptr;
    ho_.s44 = op.scheme().stencil.backward4 ? 1 : 0;
    if (ho_.s44)
      for (int c = 0; c < 6; ++c)
        for (int l = 0; l < 3; ++l) {
          ho_hist_[c][l].allocate(L.size, "s44 time levels");
          ho_hist_[c][l].zero();
          ho_.hist[c][l] = ho_hist_[c][l].ptr;
          ho_.dst[c] = ho_.hist[c][2];
        }
    const SchemeStencil& st = op.scheme().stencil;
    for (int q = 0; q < 2; ++q)
      for (int cls = 0; cls < 3; ++cls) ho_.w[q][cls] = float(st.w[q][cls]);
    // The stencil's shape: the direct and tiled kernels are compiled for the four schemes' shapes.
    const int shape = (ho_.w[0][1] != 0.0f ? kShapeN1 : 0) | (ho_.w[0][2] != 0.0f ? kShapeN2 : 0) |
                      (ho_.w[1][1] != 0.0f ? kShapeW1 : 0) | (ho_.w[1][2] != 0.0f ? kShapeW2 : 0);
    const bool centres = ho_.w[0][0] != 0.0f && ho_.w[1][0] != 0.0f;
    ho_shape_ = centres && (shape == kShapeS44 || shape == kShapeFv24Wb || shape == kShapeFv24 || shape == kShapeS22)
                    ? shape : kShapeTables;
    using HK = EngineTuning::HighOrderKernel;
    // automatic (measured at 512^3 on an H100, results/highorder_bench_h100_512_v2.md): tiled for the
    // leap-frog schemes (wide stencils: fv24 1.67-1.70x Yee against direct's 1.96-2.01x), direct
    // for s44 (narrow stencil, bandwidth-bound on its time levels: 1.74x against tiled's 1.96x).
    ho_kernel_ = tuning.ho_kernel != HK::automatic ? tuning.ho_kernel : ho_.s44 ? HK::direct : HK::tiled;
    if (ho_shape_ == kShapeTables) ho_kernel_ = HK::tables;
    ho_band_block_ = ho_block_;  // (the folded bands' block: the kernel's, but for s44 below)
    if (ho_.s44 && ho_kernel_ == HK::direct) {
      // s44_direct's block: 64 x 4 x 1 measured 16,244 Mcells/s at 512^3 on an H200 against 15,733
      // for 32 x 8 x 1 (128 x 2 x 1 16,171, 32 x 4 x 2 15,560, 32 x 16 x 1 15,536; results/highorder.md,
      // session 37).
      // Its folded bands (s44_direct<..., FOLD>; the bands are widened to whole blocks of theirs):
      // 32 x 4 x 1, so the x bands are 32 columns wide instead of 64 and the core, compiled without
      // the corrections, takes the rest: 16,505 Mcells/s at 512^3 on an H200 against 16,337 with
      // the bands in 64 x 4 blocks (32 x 8 16,345, 16 x 16 16,160, 32 x 16 16,148;
      // results/highorder.md, session 38). VEM_S44_BAND_BLOCK=XxY for measurement.
      if (tuning.ho_block_x == 0 && tuning.ho_block_y == 0 && tuning.ho_block_z == 0) {
        ho_block_ = dim3(64, 4, 1);
        ho_band_block_ = dim3(32, 4, 1);
      }
      if (const char* v = std::getenv("VEM_S44_BAND_BLOCK")) {
        unsigned bx = 0, by = 0;
        if (std::sscanf(v, "%ux%u", &bx, &by) != 2 || bx == 0 || by == 0 || bx * by > 1024)
          fail("VEM_S44_BAND_BLOCK=", v, ": use XxY with at most 1024 threads, e.g. 32x4");
        ho_band_block_ = dim3(bx, by, 1);
      }
      s44_stores_last_ = true;
      if (const char* v = std::getenv("VEM_S44_DIRECT")) {
        if (std::string(v) == "interleaved") s44_stores_last_ = false;
        else if (std::string(v) != "stores_last") fail("VEM_S44_DIRECT=", v, ": use stores_last or interleaved");
      }
      // The folded core starts on a 128-byte line: 18,465-18,474 Mcells/s at 512^3 on an H200
      // against 16,423-16,426 with it at the bands' block boundary (+12.4 %; results/highorder.md,
      // session 38). VEM_S44_CORE_X=blocks for measurement.
      s44_core_align_ = true;
      if (const char* v = std::getenv("VEM_S44_CORE_X")) {
        if (std::string(v) == "blocks") s44_core_align_ = false;
        else if (std::string(v) != "align") fail("VEM_S44_CORE_X=", v, ": use align or blocks");
      }
    }
    if (tuning.ho_z_chunk < 0) fail("CUDA high-order z chunk ", tuning.ho_z_chunk, " is invalid (>= 0)");
    ho_chunk_ = tuning.ho_z_chunk > 0 ? tuning.ho_z_chunk : env_int("VEM_HO_CHUNK", 32, 1);
    // The core's rows a thread (ho_interior_tiled's RY), measured at 512^3 on an H200 (session 41,
    // results/highorder.md): two for fv24 (+5.8 %) and s22 (+2.1 %); fv24_wb two for E, one for H
    // (its stencil shares fewer loads between rows, and two rows take 64 registers: 4 blocks a
    // multiprocessor instead of 6). VEM_HO_CORE_ROWS=r (both fields) or h,e for measurement.
    ho_core_rows_[0] = ho_shape_ == kShapeFv24Wb ? 1 : 2;
    ho_core_rows_[1] = 2;
    if (const char* v = std::getenv("VEM_HO_CORE_ROWS"); v && *v) {
      int h = 0, e = 0;
      const int got = std::sscanf(v, "%d,%d", &h, &e);
      if (got == 1) e = h;
      if (got < 1 || h < 1 || h > 2 || e < 1 || e > 2)
        fail("VEM_HO_CORE_ROWS=", v, ": expected 1 or 2, or two of them (H,E) separated by a comma");
      ho_core_rows_[0] = h;
      ho_core_rows_[1] = e;
    }
    if (const char* v = std::getenv("VEM_HO_SHELL_FACES")) ho_shell_faces_ = std::string(v) != "0";
    if (const char* v = std::getenv("VEM_HO_BAND_CHUNK")) ho_band_chunk_ = std::max(0, std::atoi(v));
    for (int a = 0; a < 3; ++a)
      if (const char* v = std::getenv(a == 0 ? "VEM_HO_BAND_CHUNK_X" : a == 1 ? "VEM_HO_BAND_CHUNK_Y" : "VEM_HO_BAND_CHUNK_Z"))
        ho_band_chunk_axis_[a] = std::max(0, std::atoi(v));
    for (int a : {0, 2})
      if (const char* v = std::getenv(a == 0 ? "VEM_HO_X_FACES" : "VEM_HO_Z_FACES")) {
        if (std::string(v) == "shell") ho_face_tiles_[a] = false;
        else if (std::string(v) == "tiles") ho_face_tiles_[a] = true;
        else fail(a == 0 ? "VEM_HO_X_FACES=" : "VEM_HO_Z_FACES=", v, ": use tiles or shell");
      }
    {
      using HC = EngineTuning::HighOrderCpml;
      HC mode = tuning.ho_cpml;
      if (const char* v = std::getenv("VEM_HO_CPML")) {
        if (std::string(v) == "folded") mode = HC::folded;
        else if (std::string(v) == "slab_kernels") mode = HC::slab_kernels;
        else fail("VEM_HO_CPML=", v, ": use folded or slab_kernels");
      }
      // Folding needs the tiled kernel's leap-frog path and one slab per face in the slab kernels'
      // order (axis ascending, low face first), which op.cpml_slabs() gives.
      bool order_ok = true;
      int last = -1;
      for (const auto& st : slabs_) {
        order_ok = order_ok && st->face > last;
        last = st->face;
      }
      // s44: the direct kernel with the stores last (s44_direct) folds them.
      const bool s44_folds = ho_.s44 && ho_kernel_ == HK::direct && s44_stores_last_ && ho_shape_ == kShapeS44;
      ho_fold_ = mode != HC::slab_kernels && order_ok &&
                 ((ho_kernel_ == HK::tiled && !ho_.s44 && ho_foldable(ho_shape_)) || s44_folds);
    }
    // Interior box per field: 2..n-3 on every axis (the tables are the identity there, as
    // FdtdEngineCpu::ho_interior) within the update range of each of the field's components; the
    // shell: the samples 0..n outside it, as up to six boxes.
    // With the CPML folded (the tiled kernel's band instance, ho_interior_tiled<..., FOLD>) the box
    // spans x = 0..n-1 and z = 0..n-1 instead, the union of the components' ranges along those
    // axes: the band instance reads the x and z tables into its ring where a column or plane is
    // within 2 of a face and tests each component's x and z ranges, so the x and z faces of the
    // shell (the x faces 2-3-sample rows, the shell's slowest part) become whole tiles. Only the
    // column x = n and the plane z = n stay in the shell (a 33rd column would cost a tile column).
    for (bool& t : ho_face_tiles_) t = t && ho_fold_ && ho_kernel_ == HK::tiled;
    const int nn[3] = {g_.nx, g_.ny, g_.nz};
    for (int e = 0; e < 2; ++e) {
      HoBox& bx = ho_box_[e];
      bool empty = false;
      for (int a = 0; a < 3; ++a) {
        const bool join = ho_face_tiles_[a];
        bx.lo[a] = join ? nn[a] : 2;
        bx.hi[a] = join ? 0 : nn[a] - 3;
        for (int c = 0; c < 3; ++c) {
          const int comp = e ? c : 3 + c;
          bx.lo[a] = join ? std::min(bx.lo[a], g_.lo[comp][a]) : std::max(bx.lo[a], g_.lo[comp][a]);
          bx.hi[a] = join ? std::max(bx.hi[a], g_.hi[comp][a]) : std::min(bx.hi[a], g_.hi[comp][a]);
        }
        if (join) bx.hi[a] = std::min(bx.hi[a], nn[a] - 1);
        empty = empty || bx.lo[a] > bx.hi[a];
      }
      HoShell& sh = ho_shell_[e];
      sh = HoShell{};
      auto add_box = [&](int o0, int o1, int o2, int d0, int d1, int d2) {
        if (d0 <= 0 || d1 <= 0 || d2 <= 0) return;
        // A box where none of the field's components is updated (e.g. E on x = n next to PEC) is
        // left out, but not with s44, whose kernels copy the samples they keep (ho_keep).
        bool any = ho_.s44 != 0;
        for (int c = 0; c < 3 && !any; ++c) {
          const int comp = e ? c : 3 + c;
          const int o[3] = {o0, o1, o2}, d[3] = {d0, d1, d2};
          bool meets = true;
          for (int a = 0; a < 3; ++a) meets = meets && o[a] <= g_.hi[comp][a] && o[a] + d[a] - 1 >= g_.lo[comp][a];
          any = meets;
        }
        if (!any) return;
        const int q = sh.count++;
        sh.o[q][0] = o0; sh.o[q][1] = o1; sh.o[q][2] = o2;
        sh.d[q][0] = d0; sh.d[q][1] = d1; sh.d[q][2] = d2;
        sh.begin[q + 1] = sh.begin[q] + (long long)d0 * d1 * d2;
      };
      const int X = nn[0] + 1, Y = nn[1] + 1;
      if (empty) {
        for (int a = 0; a < 3; ++a) { bx.lo[a] = 0; bx.hi[a] = -1; }
        add_box(0, 0, 0, X, Y, nn[2] + 1);
      } else {
        const int bz = bx.hi[2] - bx.lo[2] + 1, by = bx.hi[1] - bx.lo[1] + 1;
        add_box(0, 0, 0, X, Y, bx.lo[2]);
        add_box(0, 0, bx.hi[2] + 1, X, Y, nn[2] - bx.hi[2]);
        add_box(0, 0, bx.lo[2], X, bx.lo[1], bz);
        add_box(0, bx.hi[1] + 1, bx.lo[2], X, nn[1] - bx.hi[1], bz);
        add_box(0, bx.lo[1], bx.lo[2], bx.lo[0], by, bz);
        add_box(bx.hi[0] + 1, bx.lo[1], bx.lo[2], nn[0] - bx.hi[0], by, bz);
      }
      // Faces and edges: each box cut where an axis enters or leaves 2..n-3.
      HoShell (&faces)[3] = ho_shell_face_[e];
      for (HoShell& f : faces) f = HoShell{};
      if (ho_shell_faces_) {
        HoShell edges{};
        bool fits = true;
        auto push = [&fits](HoShell& to, const int (&o)[3], const int (&d)[3], int axis) {
          if (to.count == kMaxShellBoxes) { fits = false; return; }
          const int q = to.count++;
          for (int a = 0; a < 3; ++a) { to.o[q][a] = o[a]; to.d[q][a] = d[a]; }
          to.axis[q] = axis;
          to.begin[q + 1] = to.begin[q] + (long long)d[0] * d[1] * d[2];
        };
        for (int q = 0; q < sh.count; ++q) {
          int seg_lo[3][3], seg_hi[3][3], nseg[3];
          for (int a = 0; a < 3; ++a) {
            const int lo = sh.o[q][a], hi = sh.o[q][a] + sh.d[q][a] - 1;
            const int cut[4] = {lo, std::max(lo, 2), std::min(hi, nn[a] - 3) + 1, hi + 1};
            nseg[a] = 0;
            // below 2, within 2..n-3, above n-3 (in that order; empty pieces dropped)
            const int b[3][2] = {{cut[0], std::min(cut[1], hi + 1) - 1},
                                 {cut[1], cut[2] - 1},
                                 {std::max(cut[2], cut[1]), cut[3] - 1}};
            for (int sgm = 0; sgm < 3; ++sgm)
              if (b[sgm][0] <= b[sgm][1]) {
                seg_lo[a][nseg[a]] = b[sgm][0];
                seg_hi[a][nseg[a]] = b[sgm][1];
                ++nseg[a];
              }
          }
          for (int s0 = 0; s0 < nseg[0]; ++s0)
            for (int s1 = 0; s1 < nseg[1]; ++s1)
              for (int s2 = 0; s2 < nseg[2]; ++s2) {
                const int sg[3] = {s0, s1, s2};
                int o[3], d[3], tables = 0, axis = 0;
                for (int a = 0; a < 3; ++a) {
                  o[a] = seg_lo[a][sg[a]];
                  d[a] = seg_hi[a][sg[a]] - o[a] + 1;
                  if (o[a] < 2 || seg_hi[a][sg[a]] > nn[a] - 3) { ++tables; axis = a; }
                }
                // no table axis (outside the interior box only by the update ranges): z's list
                if (tables == 0) axis = 2;
                push(tables <= 1 ? faces[axis] : edges, o, d, axis);
              }
        }
        if (fits) sh = edges;
        else for (HoShell& f : faces) f = HoShell{};  // more boxes than a launch holds: all through the tables
      }
    }
    // The bands of the interior box that meet a CPML slab, per field: the low and high z planes,
    // then y rows, then x columns, the rest the core. The x and y bands are widened to whole tiles
    // (32 columns, 8 rows: a tile's threads cost the same with fewer of them in the box), the z
    // bands are the slabs' planes.
    for (int e = 0; e < 2 && ho_fold_; ++e) {
      const HoBox& bx = ho_box_[e];
      ho_bands_[e].clear();
      // A band's z planes per block: its axis's (ho_band_chunk_axis_), else ho_band_chunk_, else ho_chunk_.
      auto band_chunk = [&](int axis) {
        const int c = axis >= 0 ? ho_band_chunk_axis_[axis] : 0;
        return c > 0 ? c : ho_band_chunk_ > 0 ? ho_band_chunk_ : ho_chunk_;
      };
      ho_core_[e] = HoBox{{0, 0, 0}, {-1, -1, -1}};
      if (bx.lo[0] > bx.hi[0] || bx.lo[1] > bx.hi[1] || bx.lo[2] > bx.hi[2]) continue;
      HoBox c = bx;
      for (const auto& st : slabs_) {
        const SlabParams& sp = e ? st->e : st->h;
        if ((e ? st->ne : st->nh) == 0) continue;
        const int a = st->axis;
        if (st->face % 2 == 0) c.lo[a] = std::max(c.lo[a], sp.o[a] + sp.d[a]);
        else c.hi[a] = std::min(c.hi[a], sp.o[a] - 1);
      }
      // The core instance reads no tables: its ring (2 samples either side) stays within 2..n-3.
      for (int a = 0; a < 3; ++a)
        if (ho_face_tiles_[a]) {
          c.lo[a] = std::max(c.lo[a], 4);
          c.hi[a] = std::min(c.hi[a], nn[a] - 5);
        }
      // (the direct kernel's bands: whole blocks)
      const int tile[3] = {ho_kernel_ == HK::tiled ? kTileX : int(ho_band_block_.x),
                           ho_kernel_ == HK::tiled ? kTileY : int(ho_band_block_.y), 1};
      bool core = true;
      for (int a = 0; a < 3; ++a) {
        auto up = [&](int d) { return (d + tile[a] - 1) / tile[a] * tile[a]; };
        // s44 (s44_core_align_): the core's rows start on a 128-byte line (x + the layout's x
        // offset a multiple of 32), so its warps' own-sample loads and stores cover 4 sectors
        // instead of 5; the low x band takes the columns below.
        if (a == 0 && s44_core_align_ && c.lo[0] > bx.lo[0]) {
          const int aligned = (c.lo[0] + FieldLayout::kXOffset + 31) / 32 * 32 - FieldLayout::kXOffset;
          c.lo[0] = aligned;
        } else if (c.lo[a] > bx.lo[a]) {
          c.lo[a] = bx.lo[a] + up(c.lo[a] - bx.lo[a]);
        }
        if (c.hi[a] < bx.hi[a]) c.hi[a] = bx.hi[a] - up(bx.hi[a] - c.hi[a]);
        core = core && c.lo[a] <= c.hi[a];
      }
      if (!core) {
        ho_bands_[e].push_back({bx, band_chunk(-1)});
        continue;
      }
      auto band = [&](int a, bool high, const int (&lo)[3], const int (&hi)[3]) {
        HoBox b{{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
        if (high) b.lo[a] = c.hi[a] + 1, b.hi[a] = bx.hi[a];
        else b.lo[a] = bx.lo[a], b.hi[a] = c.lo[a] - 1;
        if (b.lo[a] <= b.hi[a]) ho_bands_[e].push_back({b, band_chunk(a)});
      };
      for (int high = 0; high < 2; ++high) band(2, high, bx.lo, bx.hi);
      const int lz[3] = {bx.lo[0], bx.lo[1], c.lo[2]}, hz[3] = {bx.hi[0], bx.hi[1], c.hi[2]};
      for (int high = 0; high < 2; ++high) band(1, high, lz, hz);
      const int ly[3] = {bx.lo[0], c.lo[1], c.lo[2]}, hy[3] = {bx.hi[0], c.hi[1], c.hi[2]};
      for (int high = 0; high < 2; ++high) band(0, high, ly, hy);
      ho_core_[e] = c;
    }
    ho_shell_beside_ = ho_kernel_ != HK::tables && !env_is("VEM_HO_SHELL_STREAM", "0");
    if (ho_shell_beside_) side_.create();
    // The tiled kernel's launches. The bands go in one launch, the longest blocks first (the x
    // bands' 16 planes): with one launch per band each ended on a partial wave.
    const bool bands_merged = !env_is("VEM_HO_BAND_LAUNCH", "separate");
    for (int e = 0; e < 2; ++e) {
      ho_box_tiles_[e] = tile_set({{ho_box_[e], ho_chunk_}}, kTileY * ho_core_rows_[e]);
      ho_core_tiles_[e] = tile_set({{ho_core_[e], ho_chunk_}}, kTileY * ho_core_rows_[e]);
      ho_band_tiles_[e].clear();
      std::vector<std::pair<HoBox, int>> bands;
      for (const HoBand& b : ho_bands_[e]) bands.push_back({b.box, b.chunk});
      if (bands_merged) {
        std::stable_sort(bands.begin(), bands.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        ho_band_tiles_[e].push_back(tile_set(bands));
      } else {
        for (const auto& b : bands) ho_band_tiles_[e].push_back(tile_set({b}));
      }
    }
    for (int fw = 0; fw < 2; ++fw) {
      const auto& ts = hs.terms[fw];
      if (ts.size() > std::size_t(HighOrderStencil::kMaxTerms))
        fail("scheme ", scheme_name(op.scheme().scheme), ": ", ts.size(), " stencil terms, more than the ",
             HighOrderStencil::kMaxTerms, " the CUDA kernels hold");
      HoTerms& d = ho_.terms[fw];
      d.count = int(ts.size());
      for (std::size_t q = 0; q < ts.size(); ++q) {
        d.hi[q] = ts[q].hi; d.lo[q] = ts[q].lo; d.tb[q] = ts[q].tb; d.td[q] = ts[q].td; d.w[q] = ts[q].w;
      }
    }
    setup_s44_table();
    setup_s44_pair(tuning);
  }
  // Small grids (issue 16): graphs and the L2 window, defaults measured on an H100
  // (testing/benchmarks/results/fdtd_small_grids_h100.md).
  {
    using GR = EngineTuning::Graph;
    using LP = EngineTuning::L2Persist;
    const bool small = gr.cell_count() < std::int64_t(8) * 1000 * 1000;
    graph_.enabled = tuning.graph == GR::on || (tuning.graph == GR::automatic && small);
    if (tuning.graph_chunk < 0) fail("CUDA graph chunk ", tuning.graph_chunk, " is invalid (>= 0; 0: 32 steps)");
    graph_.chunk = tuning.graph_chunk > 0 ? tuning.graph_chunk : 32;
    if (graph_.enabled) VEM_CUDA_CHECK(cudaStreamCreateWithFlags(&graph_.stream, cudaStreamDefault));
    if (tuning.l2_persist == LP::on) {
      const char* lo = reinterpret_cast<const char*>(fields_[0].ptr);
      const char* hi = lo;
      auto span = [&](const void* p, std::size_t bytes) {
        if (!p) return;
        lo = std::min(lo, static_cast<const char*>(p));
        hi = std::max(hi, static_cast<const char*>(p) + bytes);
      };
      for (int c = 0; c < 6; ++c) span(fields_[c].ptr, field_floats_ * sizeof(float));
      span(index_.ptr, index_.count * sizeof(std::uint16_t));
      l2_persist_ = small_grid::make_l2_window(prop, lo, hi, l2_window_);
    }
  }
  setup_onepass(tuning);
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

namespace {
// The set with every slab's psi_in and psi_out exchanged (the next step of a ping-pong pair).
onepass::CpmlSet swapped_psi(const onepass::CpmlSet& cs) {
  onepass::CpmlSet r = cs;
  for (int p = 0; p < r.count; ++p)
    for (int q = 0; q < 2; ++q) {
      r.s[p].psi_in[q] = cs.s[p].psi_out[q];
      r.s[p].psi_out[q] = const_cast<float*>(cs.s[p].psi_in[q]);
    }
  return r;
}
// The device has `bytes` free beside a 512 MB margin (the arrays a stepping choice adds).
bool device_has_room(std::size_t bytes) {
  std::size_t free_b = 0, total_b = 0;
  VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return bytes + (std::size_t(512) << 20) <= free_b;
}
}  // namespace

// One pass per step and persistent stepping (issue 16): Yee scheme; EngineTuning::step or
// VEM_FDTD_STEP=one_pass|two_pass|persistent. automatic: persistent below 8 M cells where the model
// allows it (setup_persistent; measured, testing/benchmarks/results/fdtd_small_grids_h100.md);
// otherwise one pass from 2.3 M cells where the second set of arrays fits in free memory
// (measured, fdtd_onepass_h100.md), in CUDA graphs below 8 M cells; below 2.3 M cells two passes
// (in graphs).
// Runs with extensions or a fused source step in two passes (checked per step). With subdomain
// faces (a distributed piece) the pass runs between the halo exchanges, without overlap.
void FdtdEngineCuda::setup_onepass(const EngineTuning& tuning) {
  using ST = EngineTuning::Step;
  ST want = tuning.step;
  if (want == ST::automatic) {
    const char* v = std::getenv("VEM_FDTD_STEP");
    const std::string e = v ? v : "";
    want = e == "one_pass"     ? ST::one_pass
           : e == "two_pass"   ? ST::two_pass
           : e == "persistent" ? ST::persistent
                               : ST::automatic;
  }
  using TB = EngineTuning::TemporalBlocking;
  TB tb = tuning.temporal_blocking;
  if (tb == TB::automatic) {
    const char* v = std::getenv("VEM_TEMPORAL_BLOCKING");
    const std::string e = v ? v : "";
    if (e == "two_steps") tb = TB::two_steps;
    else if (e == "off") tb = TB::off;
    else if (!e.empty()) fail("VEM_TEMPORAL_BLOCKING=", e, ": use two_steps or off");
  }
  if (tb == TB::two_steps) {
    if (high_order_) fail("temporal blocking (two steps per pass) is built for the Yee scheme only, not ", scheme_name(op_.scheme().scheme));
    if (want == ST::two_pass || want == ST::persistent)
      fail("temporal blocking (two steps per pass) runs on the one-pass step; the step asked for is ",
           want == ST::two_pass ? "two_pass" : "persistent");
    want = ST::one_pass;
  }
  const FdtdOperator& op = op_;
  if (high_order_ || want == ST::two_pass) return;
  const std::size_t size = std::size_t(op.layout().size);
  // What persistent stepping needs of the model (onepass::launch_persistent): nothing between
  // the steps but E point sources (at most kMaxPersistentSources components) and probes, i.e. no
  // PMC / periodic / subdomain face (H ghosts, plane copies, exchanges) and no H point source; the
  // CPML folded; a device that launches cooperative kernels. Extensions and a fused source are
  // checked per call (persistent_now).
  const auto& bc = op.setup().boundaries;
  bool persistent_ok = tuning.onepass_cpml != EngineTuning::OnePassCpml::slab_kernels;
  if (const char* v = std::getenv("VEM_ONEPASS_CPML"))
    if (std::string(v) == "slab_kernels" && tuning.onepass_cpml == EngineTuning::OnePassCpml::automatic)
      persistent_ok = false;
  // (temporal blocking needs the same of the model but for the E source count: tb_model_ok)
  bool tb_model_ok = persistent_ok;
  for (int f = 0; f < 6; ++f)
    if (bc.face[f] == BoundaryType::pmc || bc.face[f] == BoundaryType::periodic ||
        bc.face[f] == BoundaryType::subdomain)
      persistent_ok = tb_model_ok = false;
  onepass::SourceSet src{};
  for (const auto& ps : op.sources())
    for (int a = 0; a < 3; ++a) {
      if (!ps.active[a]) continue;
      if (!ps.electric) tb_model_ok = false;
      if (!ps.electric || src.count == onepass::kMaxPersistentSources) {
        persistent_ok = false;
        continue;
      }
      src.field[src.count] = a;
      src.offset[src.count] = ps.offset[a];
      src.set[src.count] = ps.kind == PointSource::Kind::hard_e ? 1 : 0;
      ++src.count;
    }
  int coop = 0;
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device_));
  if (!coop) persistent_ok = false;
  // Temporal blocking by default from kTwoStepFromCells where the model allows it and the device
  // holds a third set of field arrays beside the other two (results/fdtd.md, session 19: one H100,
  // same call, Mcells/s against the default before: 128^3 16,597 / 15,704 (persistent), 192^3
  // 24,309 / 18,148 (persistent), 256^3 30,652 / 24,902, 384^3 37,294 / 31,336, 512^3 39,773 /
  // 35,250). Only when the step too is left to the engine. A model whose plan has no interior tile
  // steps one pass at a time (setup_two_step).
  bool tb_automatic = false;
  if (tb == TB::automatic) {
    tb = TB::off;
    if (tb_model_ok && want == ST::automatic &&
        op.grid().cell_count() >= kTwoStepFromCells && device_has_room(12 * field_floats_ * sizeof(float))) {
      tb = TB::two_steps;
      tb_automatic = true;
      want = ST::one_pass;
    }
  }
  if (want == ST::automatic) {
    // Persistent below kPersistentBelowCells where the model allows it, else one pass from 2.3 M
    // cells (testing/benchmarks/results/fdtd_onepass_h100.md, one H100, same run, Mcells/s two
    // passes in graphs / one pass with the CPML folded in): 128^3 12,621 / 12,056, 160 x 160 x 93
    // 12,904 / 14,322, 192^3 14,963 / 17,445, 512^3 19,553 / 32,710.
    const std::int64_t cells = op.grid().cell_count();
    if (persistent_ok && cells < kPersistentBelowCells) {
      want = ST::persistent;
    } else {
      if (cells < std::int64_t(2300) * 1000) return;
      if (!device_has_room(6 * field_floats_ * sizeof(float))) return;
    }
  }
  if (tuning.onepass_tile_y != 0 && tuning.onepass_tile_y != 4 && tuning.onepass_tile_y != 8 &&
      tuning.onepass_tile_y != 16)
    fail("one-pass tile height ", tuning.onepass_tile_y, " is not 4, 8 or 16");
  if (tuning.onepass_z_chunk < 0) fail("one-pass z chunk ", tuning.onepass_z_chunk, " is invalid (>= 0)");
  using OC = EngineTuning::OnePassCpml;
  OC cpml = tuning.onepass_cpml;
  if (cpml == OC::automatic) {
    if (const char* v = std::getenv("VEM_ONEPASS_CPML")) {
      const std::string e = v;
      if (e == "folded") cpml = OC::folded;
      else if (e == "slab_kernels") cpml = OC::slab_kernels;
      else if (!e.empty()) fail("VEM_ONEPASS_CPML=", e, ": use folded or slab_kernels");
    }
  }
  const bool fold = cpml != OC::slab_kernels;
  if (want == ST::persistent && persistent_ok) {
    setup_persistent(tuning, src);
    return;
  }
  onepass_tile_y_ = tuning.onepass_tile_y ? tuning.onepass_tile_y : 8;
  for (int c = 0; c < 6; ++c) {
    next_[c].allocate(field_floats_, "one-pass field arrays");
    next_[c].zero();
  }
  onepass_grid_ = onepass::grid_for(op);
  int sms = 0;
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
  onepass_chunk_ = tuning.onepass_z_chunk ? tuning.onepass_z_chunk
                                          : onepass::automatic_z_chunk(onepass_grid_, onepass_tile_y_, sms);
  onepass_boxes_ = onepass::recompute_boxes(op, fold);
  // Subdomain faces: the pass computes E on node plane 0 of a low face from the H ghost plane
  // before the neighbour's H plane has arrived; that plane is computed again after it is unpacked
  // (step_once), like the E samples next to corrected H.
  for (int a = 0; a < 3; ++a) {
    if (op.setup().boundaries.face[2 * a] != BoundaryType::subdomain) continue;
    onepass::Box b{{0, 0, 0}, {g_.nx + 1, g_.ny + 1, g_.nz + 1}};
    b.d[a] = 1;
    onepass_boxes_.push_back(b);
  }
  // Folded CPML (onepass::CpmlSet): the slabs in the order of set_h_ / set_e_ (axis order). H psi
  // gets a second set (the pass reads one and writes the other; swap_psi after each step). The
  // E corrections fold only when no E sample is computed again after the pass (it would be
  // corrected twice, from a psi updated once already).
  onepass_cpml_h_ = {};
  onepass_cpml_e_ = {};
  if (fold) {
    for (int electric = 0; electric < 2; ++electric) {
      if (electric && !onepass_boxes_.empty()) break;
      onepass::CpmlSet& cs = electric ? onepass_cpml_e_ : onepass_cpml_h_;
      fill_cpml_set(cs, electric, !electric);
    }
  }
  // VEM_ONEPASS_HOIST=1: the boundary tiles with the hoisted slabs (measured in results/fdtd.md,
  // session 19).
  onepass_hoist_ = env_is("VEM_ONEPASS_HOIST", "1") && onepass_tile_y_ == 8 && hoistable_slabs();
  set_onepass_coefs(tuning);
  onepass_ = true;
  if (tb == TB::two_steps) setup_two_step(tuning, tb_automatic);
}

// Temporal blocking (see the members): the model must let every step run as one pass with the
// CPML folded and nothing computed again (no PMC / periodic / subdomain face, no H point source),
// and the plan must have interior tiles. automatic: where it cannot, the one-pass step stays (no
// error); CUDA graphs asked for keep it off.
void FdtdEngineCuda::setup_two_step(const EngineTuning& tuning, bool automatic) {
  std::ostringstream why;
  if (!onepass_boxes_.empty())
    why << "needs every E sample computed in the pass: no PMC, periodic or subdomain face and no magnetic point "
           "source (this model has "
        << onepass_boxes_.size() << " box(es) of E samples computed again)";
  else if (onepass_cpml_h_.count == 0 && !slabs_.empty())
    why << "needs the CPML folded into the pass (onepass_cpml = slab_kernels was asked)";
  else if (tuning.graph == EngineTuning::Graph::on)
    why << "does not run in CUDA graphs: set graph = off or automatic";
  if (!why.str().empty()) {
    if (automatic) return;
    fail("temporal blocking (two steps per pass) ", why.str());
  }
  if (tuning.two_step_tile_y != 0 && tuning.two_step_tile_y != 16 && tuning.two_step_tile_y != 32)
    fail("two-step tile height ", tuning.two_step_tile_y, " is not 16 or 32");
  if (tuning.two_step_z_chunk < 0) fail("two-step z chunk ", tuning.two_step_z_chunk, " is invalid (>= 0)");
  tb_tile_y_ = tuning.two_step_tile_y ? tuning.two_step_tile_y : 16;
  // VEM_TWO_STEP_Z_CHUNK=<planes>: the interior tiles' planes, as two_step_z_chunk (a measurement
  // switch; it wins over the tuning).
  const char* z_chunk_env = std::getenv("VEM_TWO_STEP_Z_CHUNK");
  const int fixed_z_chunk = z_chunk_env ? std::max(1, std::atoi(z_chunk_env)) : tuning.two_step_z_chunk;
  int z_chunk = fixed_z_chunk ? fixed_z_chunk : 32;
  std::vector<std::array<int, 3>> keep_out;
  for (const auto& ps : op_.sources())
    for (int a = 0; a < 3; ++a)
      if (ps.active[a]) keep_out.push_back(op_.layout().sample(ps.offset[a]));
  for (const auto& pr : op_.probes()) keep_out.push_back(op_.layout().sample(pr.offset));
  // Measurement switches (results/fdtd.md, session 19): VEM_TWO_STEP_ALIGN=0 keeps the interior box
  // as wide as it can be; VEM_TWO_STEP_PASS_CHUNK sets the rest's planes per block.
  const bool align = !env_is("VEM_TWO_STEP_ALIGN", "0");
  const char* chunk_env = std::getenv("VEM_TWO_STEP_PASS_CHUNK");
  int pass_chunk = chunk_env ? std::max(1, std::atoi(chunk_env)) : 16;
  // Shell tiles (the CPML shell and the faces in two-step tiles too) by default from
  // kShellFromCells (results/fdtd.md, session 23); VEM_TWO_STEP_SHELL=1 / 0 asks for them or not
  // at any size. The shell tiles correct at most one slab of each axis (hoistable).
  // VEM_TWO_STEP_SHELL_NARROW=0: the x faces' shell tiles of 32 x 16 threads like the others
  // instead of 16 x 32.
  const bool want_shell = env_switch("VEM_TWO_STEP_SHELL", op_.grid().cell_count() >= kShellFromCells);
  tb_shell_ = want_shell && hoistable_slabs();
  // VEM_TWO_STEP_SHELL_GENERAL_CHUNK=<planes>: the general shell tiles cut into pieces of at most
  // that many planes (0: not cut). Default: 8 from kShellGeneralCutFromCells, not cut below
  // except in the packed pair (kPackedGeneralChunk, below).
  const bool shell_narrow = !env_is("VEM_TWO_STEP_SHELL_NARROW", "0");
  const char* general_env = std::getenv("VEM_TWO_STEP_SHELL_GENERAL_CHUNK");
  int general_chunk = general_env ? std::max(0, std::atoi(general_env))
                                  : (op_.grid().cell_count() >= kShellGeneralCutFromCells ? 8 : 0);
  // The 32 x 16 shell tiles that meet the slabs of two axes in classes of their own instead of the
  // general one: one H200, one call, Mcells/s with / without, twice each: 128^3 24,001 / 24,124
  // against 23,384 / 23,378, 160 x 160 x 93 22,414 / 22,617 against 21,523 / 21,491, 192^3 37,586 /
  // 37,686 against 36,773 / 36,745, 256^3 45,561 / 45,621 against 44,352 / 44,335, 512^3 58,780
  // against 57,989 (results/fdtd.md, session 25). VEM_TWO_STEP_SHELL_EDGES=0: in the general class.
  const bool shell_edges = !env_is("VEM_TWO_STEP_SHELL_EDGES", "0");
  // VEM_TWO_STEP_SHELL_CHUNK=<planes>: the shell tiles' planes per tile (a measurement switch);
  // unset: the interior's z chunk, or kPackedShellChunk in the packed pair (below).
  const char* shell_chunk_env = std::getenv("VEM_TWO_STEP_SHELL_CHUNK");
  int shell_chunk = shell_chunk_env ? std::max(0, std::atoi(shell_chunk_env)) : 0;
  // VEM_TWO_STEP_SHELL_EDGE_CHUNK=<planes>: the two-axis shell tiles cut into pieces of at most that
  // many planes (a measurement switch; unset: not cut).
  const char* edge_env = std::getenv("VEM_TWO_STEP_SHELL_EDGE_CHUNK");
  const int edge_chunk = edge_env ? std::max(0, std::atoi(edge_env)) : 0;
  auto make_plan = [&] {
    return onepass::plan_two_step(onepass_grid_, onepass_cpml_h_, onepass_cpml_e_, keep_out, tb_tile_y_, z_chunk,
                                  pass_chunk, align, tb_shell_, shell_narrow, general_chunk, shell_edges, shell_chunk,
                                  edge_chunk);
  };
  onepass::TwoStepPlan plan = make_plan();
  // The chunks left to the engine (interior 32 planes, the rest's blocks 16) are halved, down to 8
  // and 4, while their launch would have fewer than 8 blocks a multiprocessor: a block marches its
  // planes one after the other, so a small grid needs more, shorter blocks (results/fdtd.md,
  // session 19).
  int sms = 0;
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
  const std::size_t enough = std::size_t(8) * std::size_t(sms);
  while (fixed_z_chunk == 0 && z_chunk > 8 && plan.interior.size() + plan.shell_tiles() < enough) {
    z_chunk /= 2;
    plan = make_plan();
  }
  while (!chunk_env && pass_chunk > 4 && plan.first.size() < enough) {
    pass_chunk /= 2;
    plan = make_plan();
  }
  // The interior launched after step 1 of the rest (its fork event then waits for step 1, so it runs
  // beside step 2) measured 37,717 against 36,950 Mcells/s launched first (beside step 1) at 512^3
  // in one call (results/fdtd.md, session 18). VEM_TWO_STEP_ORDER=interior_first for the other order.
  tb_rest_first_ = !env_is("VEM_TWO_STEP_ORDER", "interior_first");
  // With shell tiles the interior waits for them (forked after their launch): measured 47,196 /
  // 42,745 / 39,824 / 36,618 against 46,773 / 40,500 / 38,223 / 36,640 Mcells/s forked before them
  // at 512^3 / 384^3 / 320^3 / 256^3 in one call (results/fdtd.md, session 23). Below
  // kShellInteriorAfterCells it is forked before them (both start at once): one H200, one call,
  // Mcells/s after / before: 128^3 22,093 / 23,326, 160 x 160 x 93 21,794 / 21,565, 192^3 32,532 /
  // 35,114 (session 24). VEM_TWO_STEP_ORDER=interior_first / interior_after asks for one order.
  // VEM_TWO_STEP_ORDER=shell_first: the interior launched after the shell launch and beside it
  // (forked before it, as interior_first), so the shell's blocks, the longest (corner and edge
  // tiles) first, are dispatched before the interior's; written in session 25 after call 5 (the
  // shell throughput-bound, results/fdtd.md), not yet measured: off.
  using SI = ShellInterior;
  tb_shell_interior_ = env_is("VEM_TWO_STEP_ORDER", "shell_first")      ? SI::after_beside
                       : env_is("VEM_TWO_STEP_ORDER", "interior_first") ? SI::before
                       : env_is("VEM_TWO_STEP_ORDER", "interior_after") ? SI::after
                       : op_.grid().cell_count() < kShellInteriorAfterCells ? SI::before
                                                                            : SI::after;
  // The shell launch on a stream of its own, so that the rest's two steps (the tiles next to the
  // sources and probes) and their point updates and probes run beside it on stream_ instead of
  // after it (both read only fields_ and write disjoint samples of next_ and of the psi sets;
  // step_pair): below kShellBesideRestBelowCells; VEM_TWO_STEP_SHELL_STREAM=1 / 0 asks for it or not.
  const bool beside_by_default = op_.grid().cell_count() < kShellBesideRestBelowCells;
  const bool stream_switch = std::getenv("VEM_TWO_STEP_SHELL_STREAM") != nullptr;
  tb_shell_beside_rest_ = tb_shell_ && env_switch("VEM_TWO_STEP_SHELL_STREAM", beside_by_default);
  if (tb_shell_beside_rest_) shell_side_.create();
  // Step 2's point updates and probes before the joins where the shell runs beside the rest, after
  // them otherwise. One H200, one call, Mcells/s before / after, twice each: 128^3 25,364 / 25,413
  // against 25,123 / 25,198, 160 x 160 x 93 27,196 / 27,221 against 27,178 / 27,239, 192^3 (shell
  // on stream_) 36,179 / 36,307 against 37,652 / 37,663, 256^3 46,012 / 45,975 against 45,848 /
  // 45,856, 512^3 58,858 against 58,867 (results/fdtd.md, session 25). VEM_TWO_STEP_TAIL=
  // before_join / after_join asks for one.
  tb_tail_before_join_ = env_is("VEM_TWO_STEP_TAIL", "before_join") ||
                         (tb_shell_beside_rest_ && !env_is("VEM_TWO_STEP_TAIL", "after_join"));
  // VEM_TWO_STEP_INTERIOR_GRID=<b>: b interior blocks a multiprocessor (fractions allowed, at least
  // one block) take the tiles in turn, which leaves registers for the rest's blocks beside them
  // (measured in results/fdtd.md, session 22); unset: one block a tile.
  tb_interior_blocks_ = 0;
  if (const char* grid_env = std::getenv("VEM_TWO_STEP_INTERIOR_GRID")) {
    const double b = std::atof(grid_env);
    if (!(b > 0.0)) fail("VEM_TWO_STEP_INTERIOR_GRID=", grid_env, " is not a positive number of blocks a multiprocessor");
    tb_interior_blocks_ = int(std::max(1.0, std::round(b * sms)));
  }
  // The rest's blocks with the hoisted slabs (onepass::tile_pass) where the slab sets allow them;
  // VEM_TWO_STEP_HOIST=0 for the chained ones (measured in results/fdtd.md, session 19).
  tb_hoist_ = !env_is("VEM_TWO_STEP_HOIST", "0") && hoistable_slabs();
  if (plan.interior.empty() && plan.shell_tiles() == 0) {
    if (automatic) return;
    fail("temporal blocking (two steps per pass): no interior tile fits this model (a tile's core and 2 samples "
         "around it must be clear of every face, update-range edge, CPML slab, point source and probe)");
  }
  // Pairs in CUDA graphs (EngineTuning::graph automatic) where the shell launch runs beside the
  // rest by default (below kShellBesideRestBelowCells, the switch VEM_TWO_STEP_SHELL_STREAM unset);
  // else stream launches (graphs without it: results/fdtd.md, session 24). EngineTuning::graph on /
  // off, or VEM_TWO_STEP_GRAPH=1 / 0 (the measurement switch, first), asks for graphs or not.
  using GR = EngineTuning::Graph;
  graph_.enabled = env_switch("VEM_TWO_STEP_GRAPH", tuning.graph != GR::automatic
                                                        ? tuning.graph == GR::on
                                                        : tb_shell_beside_rest_ && beside_by_default && !stream_switch);
  if (graph_.enabled && !graph_.stream) VEM_CUDA_CHECK(cudaStreamCreateWithFlags(&graph_.stream, cudaStreamDefault));
  // The packed pair (results/fdtd.md, session 34: a block timeline of the pair, fused_step.cu's
  // VEM_BLOCK_TRACE): from kShellFromCells to kShellBesideRestBelowCells (pairs in graphs, the shell
  // beside the rest) the pair's launches left 15 % of the block slots idle. The interior's launch
  // took every multiprocessor first, so the shell started a third of the way in and drained alone
  // (two thirds of its slots busy for the last 25 us at 128^3), and the rest's blocks found room
  // only at the end, its two steps one after the other past the shell's last block. So:
  //  - the rest first: the graphs' capture stream, which holds the rest's blocks and the point
  //    updates, at the device's greatest priority (the kernel nodes keep it:
  //    cudaGraphInstantiateFlagUseNodePriority), so its blocks are dispatched before the others'
  //    and its two steps end beside the shell; VEM_TWO_STEP_REST_FIRST=1 / 0 (a measurement switch,
  //    graphs only);
  //  - the interior tiles as the shell launch's last blocks (ShellLists::interior): a launch's
  //    blocks are dispatched in order, the longest shell tiles first and the short interior tiles
  //    last, which fill the machine while the shell drains; VEM_TWO_STEP_INTERIOR_IN_SHELL=1 / 0.
  // One H200, one call, Mcells/s, twice each: default / rest first / interior in the shell / both:
  // 128^3 26,175-26,180 / 26,528-26,570 / 24,699-24,876 / 27,229-27,358, 160 x 160 x 93
  // 28,400-28,432 / 29,102-29,173 / 26,749-26,785 / 29,131-29,221 (the interior in the shell alone
  // loses: the rest's blocks then wait for the end); the final build against both switches 0:
  // 128^3 27,258-27,305 / 26,557-26,604, 160 x 160 x 93 29,423-29,445 / 28,727-28,749. Above 4 M
  // cells (no graphs) the interior in the shell lost 3-4 % at 256^3 and 512^3.
  const bool packed = graph_.enabled && tb_shell_beside_rest_ && op_.grid().cell_count() >= kShellFromCells;
  if (graph_.enabled && env_switch("VEM_TWO_STEP_REST_FIRST", packed)) {
    int least = 0, greatest = 0;
    VEM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    if (graph_.stream) VEM_CUDA_CHECK(cudaStreamDestroy(graph_.stream));
    graph_.stream = nullptr;
    VEM_CUDA_CHECK(cudaStreamCreateWithPriority(&graph_.stream, cudaStreamDefault, greatest));
    graph_.instantiate_flags = cudaGraphInstantiateFlagUseNodePriority;
  }
  // The packed pair's shell tiles march kPackedShellChunk planes instead of the interior's 8: the
  // shell's blocks no longer end the pair (the interior tiles fill its end), so longer tiles, which
  // compute fewer planes again, pay. One H200, one call, Mcells/s, twice each, the shell's planes
  // (VEM_TWO_STEP_SHELL_CHUNK) 8 / 10 / 14 / 16 / 20 / 24 / 32: 128^3 26,871-26,949 /
  // 27,765-27,907 / 28,385-28,480 / 28,051-28,149 / 27,254-27,287 / 24,836-24,842 / 21,119-21,160,
  // 160 x 160 x 93 28,996-29,020 / 29,598-29,602 / 31,787-31,850 / 31,782-31,797 / 30,926-30,937 /
  // 25,377-25,422 / 25,475-25,492; 16 planes without the packing 23,835-23,931 / 27,971-27,974
  // (results/fdtd.md, session 34).
  // From kShellBesideRestBelowCells below kShellInteriorAfterCells (the shell on stream_, no
  // graphs) the shell tiles march kMidShellChunk planes: one H200, one call, 192^3, the interior's
  // 16 / 20 / 24 / 32: 39,362-39,427 / 39,594-39,704 / 39,938-40,087 / 39,802-40,153 Mcells/s
  // (session 34). (Unpacked below 4 M cells longer tiles lose: 128^3 at 16 planes 23,835-23,931,
  // call 8, against 26,557-26,604 at 8, call 4.)
  // The packed pair's general tiles (the 8 corner boxes' tiles, one block each at 128^3) then ran
  // longest: 139.5 us of a 141.7 us pair at 128^3 (block timeline, session 36), so they end the
  // pair. In pieces of kPackedGeneralChunk planes (two of 6 for the 12-plane corners): one H200,
  // one call, Mcells/s, whole / pieces of 6 (twice each) / 5 / 4: 128^3 28,618-28,784 /
  // 30,603-30,615 / 30,370 / 30,353, 160 x 160 x 93 32,376-32,440 / 32,767-32,778 / 32,241 /
  // 32,315. The two-axis tiles cut as well (VEM_TWO_STEP_SHELL_EDGE_CHUNK 5 / 7 / 10 beside the
  // pieces of 6) lost: 26,791 / 27,721-27,821 / 27,868 and 29,214 / 30,643-30,646 / 30,657 (more
  // shell blocks before the interior's). VEM_TWO_STEP_SHELL_GENERAL_CHUNK still asks for any cut.
  if (tb_shell_) {
    const std::int64_t cells = op_.grid().cell_count();
    const bool mid = cells >= kShellBesideRestBelowCells && cells < kShellInteriorAfterCells;
    const int planes = shell_chunk_env ? shell_chunk : packed ? kPackedShellChunk : (mid ? kMidShellChunk : 0);
    const int general = packed && !general_env ? kPackedGeneralChunk : general_chunk;
    if (planes != shell_chunk || general != general_chunk) {
      shell_chunk = planes;
      general_chunk = general;
      plan = make_plan();
    }
  }
  tb_tiles_.allocate(plan.interior.size(), "two-step interior tiles");
  tb_tiles_.upload(plan.interior.data(), plan.interior.size());
  tb_first_.allocate(plan.first.size(), "two-step pass blocks");
  tb_first_.upload(plan.first.data(), plan.first.size());
  tb_second_.allocate(plan.second.size(), "two-step pass blocks");
  tb_second_.upload(plan.second.data(), plan.second.size());
  if (tb_shell_) {
    std::vector<onepass::TwoStepTile> all;
    constexpr int kClasses = onepass::TwoStepPlan::kShellClasses;
    std::size_t at[2][kClasses];
    for (int shape = 0; shape < 2; ++shape)
      for (int cls = 0; cls < kClasses; ++cls) {
        at[shape][cls] = all.size();
        all.insert(all.end(), plan.shell[shape][cls].begin(), plan.shell[shape][cls].end());
      }
    tb_shell_tiles_.allocate(all.size(), "two-step shell tiles");
    tb_shell_tiles_.upload(all.data(), all.size());
    for (int shape = 0; shape < 2; ++shape)
      for (int cls = 0; cls < kClasses; ++cls) {
        tb_shell_lists_.tiles[shape][cls] = tb_shell_tiles_.ptr + at[shape][cls];
        tb_shell_lists_.count[shape][cls] = int(plan.shell[shape][cls].size());
      }
    // VEM_TWO_STEP_SHELL_LAUNCH=classes: one launch a class of shell tiles instead of one for all
    // (measured in results/fdtd.md, session 23).
    tb_shell_lists_.one_launch = !env_is("VEM_TWO_STEP_SHELL_LAUNCH", "classes");
    // VEM_TWO_STEP_OFFSETS=64: the shell tiles' offsets in 64 bits on any grid (a test switch: the
    // path of grids beyond 2^31 layout samples; fused_step.cu, offsets_fit_int).
    tb_shell_lists_.wide_offsets = env_is("VEM_TWO_STEP_OFFSETS", "64");
    onepass::check_shell_lists(tb_shell_lists_);
    // The interior tiles as the shell launch's last blocks (the packed pair, above; one launch for
    // the shell, tiles of 32 x kShellTileY, one block a tile).
    tb_interior_in_shell_ = env_switch("VEM_TWO_STEP_INTERIOR_IN_SHELL", packed) && tb_shell_lists_.one_launch &&
                            tb_tile_y_ == onepass::kShellTileY && tb_interior_blocks_ == 0 && !plan.interior.empty();
    if (tb_interior_in_shell_) {
      tb_shell_lists_.interior = tb_tiles_.ptr;
      tb_shell_lists_.interior_count = int(plan.interior.size());
    }
    for (const auto& st : slabs_)
      for (int q = 0; q < 2; ++q) {
        if (st->nh > 0) {
          st->psi_h_mid[q].allocate(std::size_t(st->nh), "CPML psi arrays (third set)");
          st->psi_h_mid[q].zero();
        }
        if (st->ne > 0) {
          st->psi_e_mid[q].allocate(std::size_t(st->ne), "CPML psi arrays (third set)");
          st->psi_e_mid[q].zero();
        }
      }
  }
  for (int c = 0; c < 6; ++c) {
    mid_[c].allocate(field_floats_, "temporal blocking's third set of field arrays");
    mid_[c].zero();
  }
  fill_cpml_set(tb_cpml_e_[0], true, true);
  tb_cpml_e_[1] = swapped_psi(tb_cpml_e_[0]);
  side_.create();
  if (std::getenv("VEM_TEMPORAL_BLOCKING_PLAN"))
    std::fprintf(stderr,
                 "temporal blocking: %zu interior tiles (%lld samples, %d planes), %zu shell tiles (%lld samples), "
                 "%zu of them 16 x 32, %zu general, %zu of two axes, "
                 "step 1 %zu blocks (%lld samples), step 2 %zu blocks (%lld samples, %d planes)\n",
                 plan.interior.size(), plan.interior_samples, z_chunk, plan.shell_tiles(), plan.shell_samples,
                 plan.shell[1][0].size() + plan.shell[1][1].size() + plan.shell[1][2].size() + plan.shell[1][3].size(),
                 plan.shell[0][0].size() + plan.shell[1][0].size(),
                 plan.shell[0][4].size() + plan.shell[0][5].size() + plan.shell[0][6].size(),
                 plan.first.size(), plan.first_samples, plan.second.size(), plan.second_samples, pass_chunk);
  two_step_ = true;
}

// The folded slabs of one kind in the order of set_h_ / set_e_ (axis order); psi read from the
// slab's current array and written into the same one, or (second_set) into a second array
// allocated here: psi_h_next for the one-pass step's H ping-pong, psi_e_next for temporal
// blocking's E one.
void FdtdEngineCuda::fill_cpml_set(onepass::CpmlSet& cs, bool electric, bool second_set) {
  cs = {};
  for (int a = 0; a < 3; ++a)
    for (const auto& st : slabs_) {
      if (st->axis != a || (electric ? st->ne : st->nh) == 0) continue;
      if (cs.count == onepass::kMaxCpmlSlabs) fail("one-pass step: more than 6 CPML slabs");
      const SlabParams& sp = electric ? st->e : st->h;
      onepass::Slab& d = cs.s[cs.count++];
      for (int x = 0; x < 3; ++x) { d.o[x] = sp.o[x]; d.d[x] = sp.d[x]; }
      d.b = sp.b;
      d.c = sp.c;
      d.kinv = sp.kinv;
      d.inv_d = sp.inv_d;
      d.lagged = sp.lagged;
      d.axis = a;
      for (int q = 0; q < 2; ++q) {
        d.psi_in[q] = sp.psi[q];
        d.psi_out[q] = sp.psi[q];
        if (second_set) {
          DeviceArray<float>& next = electric ? st->psi_e_next[q] : st->psi_h_next[q];
          next.allocate(std::size_t(electric ? st->ne : st->nh), "CPML psi arrays (second set)");
          next.zero();
          d.psi_out[q] = next.ptr;
        }
      }
    }
  const int n[3] = {g_.nx, g_.ny, g_.nz};
  onepass::finish_cpml_set(cs, n);
}

// How the one-pass and persistent kernels read the coefficients (onepass::Coefs).
void FdtdEngineCuda::set_onepass_coefs(const EngineTuning& tuning) {
  const FdtdOperator& op = op_;
  if (use_table_) {
    const CoefficientTable ct = coefficient_table_for(op, tuning.coefficients, true);
    const bool constant = constant_table_ && onepass::acquire_constant_table(onepass_claim_, this, ct.table, ct.entries);
    onepass_coefs_.kind = constant ? onepass::CoefKind::constant_table : onepass::CoefKind::global_table;
    onepass_coefs_.index = index_.ptr;
    onepass_coefs_.table = table_.ptr;
    // The two-step and persistent kernels read a copy of the constant table in each block's shared
    // memory (onepass::Coefs::shared_table), for tables of up to 256 entries (12 KB): +0.7-1.5 %
    // at 128^3-512^3 with two steps per pass, +5 % at 64^3 persistent, in one call (results/fdtd.md,
    // session 22). VEM_SHARED_TABLE=0 keeps them on the constant bank.
    onepass_coefs_.table_entries = int(ct.entries);
    onepass_coefs_.shared_table = constant && ct.entries <= 256 && !env_is("VEM_SHARED_TABLE", "0");
  } else {
    onepass_coefs_.kind = onepass::CoefKind::arrays;
    for (int q = 0; q < 12; ++q) onepass_coefs_.arr[q] = coef_ptr_[q];
  }
}

// Persistent stepping (onepass::launch_persistent): in place on fields_, the CPML folded with
// psi in place, so no second set of anything.
void FdtdEngineCuda::setup_persistent(const EngineTuning& tuning, const onepass::SourceSet& src) {
  onepass_grid_ = onepass::grid_for(op_);
  set_onepass_coefs(tuning);
  fill_cpml_set(persistent_cpml_h_, false, false);
  fill_cpml_set(persistent_cpml_e_, true, false);
  persistent_src_ = src;
  // EngineTuning::PersistentSamples; VEM_PERSISTENT_KERNEL=hoisted|chained overrides it.
  using PS = EngineTuning::PersistentSamples;
  PS ps = tuning.persistent_samples;
  if (const char* v = std::getenv("VEM_PERSISTENT_KERNEL")) {
    const std::string e = v;
    if (e == "hoisted") ps = PS::hoisted;
    else if (e == "chained") ps = PS::chained;
    else if (!e.empty()) fail("VEM_PERSISTENT_KERNEL=", e, ": expected hoisted or chained");
  }
  // automatic: hoisted below 4 M samples, chained from there (measured in one call, Mcells/s
  // chained -> hoisted: 64^3 11,488 -> 13,606, 96^3 13,375 -> 16,734, 128^3 15,263 -> 15,731,
  // 160 x 160 x 93 15,223 -> 16,465, 192^3 18,325 -> 18,088; fdtd_small_grids_h100.md, session 16).
  const YeeGrid& gr = op_.grid();
  const double samples = double(gr.nx + 1) * double(gr.ny + 1) * double(gr.nz + 1);
  persistent_hoisted_ = ps == PS::hoisted || (ps == PS::automatic && samples < 4e6);
  // VEM_PERSISTENT_OFFSETS=64: the hoisted samples' offsets in 64 bits on any grid (a test switch:
  // the path of grids beyond 2^31 layout samples; fused_step.cu, offsets_fit_int).
  persistent_wide_ = env_is("VEM_PERSISTENT_OFFSETS", "64");
  // The hoisted samples with 32-bit offsets take the sample plan (onepass::plan_persistent) unless
  // VEM_PERSISTENT_PLAN=walk; VEM_PERSISTENT_PLAN_WEIGHT: a task of samples other than plain ones
  // weighs that many plain ones (default 2; a measurement switch).
  persistent_plan_view_ = onepass::PlanView{};
  const char* pv = std::getenv("VEM_PERSISTENT_PLAN");
  if (pv && *pv && std::string(pv) != "walk" && std::string(pv) != "plan")
    fail("VEM_PERSISTENT_PLAN=", pv, ": expected walk or plan");
  if (persistent_hoisted_ && !env_is("VEM_PERSISTENT_PLAN", "walk")) {
    // Weights 2, 3, 4 measured on an H200 in one call, before the tests words (results/fdtd.md,
    // session 33, call 3), Mcells/s: 64^3 16,504-16,512 / 16,441-16,513 / 16,492-16,516, 96^3
    // 22,672-22,939 / 22,204-22,346 / 21,756-22,029. With the tests words (call 4): 64^3
    // 20,221-20,422, 96^3 23,379-23,530, against the walk's 15,016-15,097 / 21,679-21,815.
    int weight = 2;
    if (const char* w = std::getenv("VEM_PERSISTENT_PLAN_WEIGHT"); w && *w) weight = std::atoi(w);
    if (weight < 1) fail("VEM_PERSISTENT_PLAN_WEIGHT=", std::getenv("VEM_PERSISTENT_PLAN_WEIGHT"), ": expected an integer >= 1");
    // VEM_PERSISTENT_PROFILES=0: the planned samples load their slabs' profile values after the
    // bulk update (a measurement switch).
    // VEM_PERSISTENT_TESTS=0: they work out their range tests and slabs per sample instead of
    // reading the plan's tests words (a measurement switch; with profiles only).
    const bool profiles = !env_is("VEM_PERSISTENT_PROFILES", "0");
    const bool tests = profiles && !env_is("VEM_PERSISTENT_TESTS", "0");
    const long long threads = onepass::persistent_threads(onepass_grid_, onepass_coefs_, storage_, true, persistent_wide_,
                                                          true, profiles, tests, device_);
    onepass::PersistentPlan plan;
    if (threads > 0 && onepass::plan_persistent(onepass_grid_, persistent_cpml_h_, persistent_cpml_e_, threads, weight, plan)) {
      const std::size_t n = plan.samples.size();
      persistent_plan_.allocate(2 * n, "persistent sample plan");
      persistent_plan_.upload(plan.samples.data(), n);
      VEM_CUDA_CHECK(cudaMemcpy(persistent_plan_.ptr + n, plan.tests.data(), n * sizeof(std::uint32_t),
                                cudaMemcpyHostToDevice));
      persistent_plan_view_ = onepass::PlanView{persistent_plan_.ptr, plan.rounds, plan.threads, profiles,
                                                tests ? persistent_plan_.ptr + n : nullptr};
    }
  }
  float* t[6];
  for (int c = 0; c < 6; ++c) t[c] = fields_[c].ptr;
  persistent_table_.allocate(6, "persistent probe table");
  persistent_table_.upload(t, 6);
  persistent_ = true;
}

namespace {
// Every psi pointer of `cs` equal to a becomes b and the other way round.
void exchange_psi(onepass::CpmlSet& cs, const float* a, const float* b) {
  for (int p = 0; p < cs.count; ++p)
    for (int q = 0; q < 2; ++q) {
      const float* in = cs.s[p].psi_in[q];
      float* out = cs.s[p].psi_out[q];
      if (in == a) cs.s[p].psi_in[q] = b;
      else if (in == b) cs.s[p].psi_in[q] = a;
      if (out == a) cs.s[p].psi_out[q] = const_cast<float*>(b);
      else if (out == b) cs.s[p].psi_out[q] = const_cast<float*>(a);
    }
}
}  // namespace

// The second psi set of one kind becomes the current one everywhere the engine keeps the
// pointers: the slab kernels' sets (steps in two passes) and the one-pass sets. H: after a
// one-pass step with folded H corrections, which wrote psi^n into psi_h_next, and after a pair
// with shell tiles. E: after a pair with shell tiles, which wrote psi^{n+2} into psi_e_next
// (the one-pass step's in-place set and temporal blocking's pair of sets follow).
void FdtdEngineCuda::swap_psi(bool electric) {
  SlabSet* const sets[] = {electric ? &set_e_ : &set_h_, electric ? &set_axis_e_[0] : &set_axis_h_[0],
                           electric ? &set_axis_e_[1] : &set_axis_h_[1], electric ? &set_axis_e_[2] : &set_axis_h_[2]};
  onepass::CpmlSet* const passes[] = {electric ? &onepass_cpml_e_ : &onepass_cpml_h_, electric ? &tb_cpml_e_[0] : nullptr,
                                      electric ? &tb_cpml_e_[1] : nullptr};
  for (const auto& st : slabs_) {
    for (int q = 0; q < 2; ++q) {
      DeviceArray<float>& cur = electric ? st->psi_e[q] : st->psi_h[q];
      DeviceArray<float>& next = electric ? st->psi_e_next[q] : st->psi_h_next[q];
      float* const was = cur.ptr;
      float* const now = next.ptr;
      if (!now) continue;
      std::swap(cur.ptr, next.ptr);
      (electric ? st->e : st->h).psi[q] = now;
      for (SlabSet* set : sets)
        for (int p = 0; p < set->count; ++p)
          if (set->s[p].psi[q] == was) set->s[p].psi[q] = now;
      for (onepass::CpmlSet* cs : passes)
        if (cs) exchange_psi(*cs, was, now);
    }
  }
}

// The rest's slab sets of a pair with shell tiles: step 1 from the current psi into the third set,
// step 2 from there into the second (the sets' slabs in fill_cpml_set's order).
void FdtdEngineCuda::shell_pair_sets() {
  tb_mid_h_[0] = tb_mid_h_[1] = onepass_cpml_h_;
  tb_mid_e_[0] = tb_mid_e_[1] = tb_cpml_e_[0];
  for (int electric = 0; electric < 2; ++electric) {
    onepass::CpmlSet* m = electric ? tb_mid_e_ : tb_mid_h_;
    int p = 0;
    for (int a = 0; a < 3; ++a)
      for (const auto& st : slabs_) {
        if (st->axis != a || (electric ? st->ne : st->nh) == 0) continue;
        for (int q = 0; q < 2; ++q) {
          float* const mid = electric ? st->psi_e_mid[q].ptr : st->psi_h_mid[q].ptr;
          m[0].s[p].psi_out[q] = mid;
          m[1].s[p].psi_in[q] = mid;
        }
        ++p;
      }
    if (p != m[0].count) fail("temporal blocking: the CPML slab sets changed");
  }
}

template <class Fn>
void FdtdEngineCuda::for_each_point_update(bool electric, int step, Fn&& fn) const {
  const double dt = op_.dt();
  for (const auto& s : op_.sources()) {
    if (s.electric != electric) continue;
    const bool hard = s.kind == PointSource::Kind::hard_e || s.kind == PointSource::Kind::hard_h;
    const double w = point_source_waveform(s, step, dt);
    for (int a = 0; a < 3; ++a)
      if (s.active[a]) fn((electric ? 0 : 3) + a, s.offset[a], float(s.scale[a] * w), hard);
  }
}

void FdtdEngineCuda::push_point_updates(bool electric, int step, const HoBox* skip) {
  PointUpdates u{};
  auto flush = [&]() {
    if (u.count == 0) return;
    with_storage([&](auto t) {
      apply_point_updates<<<1, kMaxPointUpdates, 0, stream_>>>(as_storage<decltype(t)>(F_), u);
    });
    VEM_CUDA_CHECK_LAUNCH("apply_point_updates");
    u.count = 0;
  };
  for_each_point_update(electric, step, [&](int field, std::int64_t offset, float value, bool hard) {
    if (skip) {
      const std::array<int, 3> ijk = op_.layout().sample(offset);
      bool inside = true;
      for (int a = 0; a < 3; ++a) inside = inside && ijk[a] >= skip->lo[a] && ijk[a] <= skip->hi[a];
      if (inside) return;
    }
    if (u.count == kMaxPointUpdates) flush();
    u.field[u.count] = field;
    u.offset[u.count] = offset;
    u.value[u.count] = value;
    u.set[u.count] = hard ? 1 : 0;
    ++u.count;
  });
  flush();
}

template <bool ELECTRIC, class Coef>
void FdtdEngineCuda::launch_cpml(const Coef& coef) {
  for (int a = 0; a < (merged_cpml_ ? 1 : 3); ++a) {
    const SlabSet& set = merged_cpml_ ? (ELECTRIC ? set_e_ : set_h_) : (ELECTRIC ? set_axis_e_[a] : set_axis_h_[a]);
    if (set.count == 0) continue;
    const long long total = set.begin[set.count];
    with_storage([&](auto t) {
      using T = decltype(t);
      launch(cpml_correct_all<ELECTRIC, Coef, T>, dim3(unsigned((total + 127) / 128)), dim3(128), as_storage<T>(F_),
             g_, set, coef);
    });
    VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "cpml_correct_all (E)" : "cpml_correct_all (H)");
  }
}

template <bool ELECTRIC, class Coef>
void FdtdEngineCuda::launch_ho(const Coef& coef) {
  switch (ho_shape_) {
    case kShapeS44: launch_ho_shape<ELECTRIC, kShapeS44>(coef); break;
    case kShapeFv24Wb: launch_ho_shape<ELECTRIC, kShapeFv24Wb>(coef); break;
    case kShapeFv24: launch_ho_shape<ELECTRIC, kShapeFv24>(coef); break;
    case kShapeS22: launch_ho_shape<ELECTRIC, kShapeS22>(coef); break;
    default: launch_ho_shape<ELECTRIC, kShapeTables>(coef); break;
  }
}

// s44: the bulk kernels wrote F^{n+1} into the array of F^{n-3} (hist[c][2]); that array becomes
// the current level and the others move one level back (no copies).
template <bool ELECTRIC>
void FdtdEngineCuda::rotate_s44() {
  for (int c = ELECTRIC ? 0 : 3; c < (ELECTRIC ? 3 : 6); ++c) {
    float* cur = fields_[c].ptr;
    if (s44_spare_slot_ >= 0) {
      // The pair (step_pair_s44): the spare written becomes the current level, F^{n-3} a spare.
      DeviceArray<float>& sp = s44_spare_[c][s44_spare_slot_];
      fields_[c].ptr = sp.ptr;
      sp.ptr = ho_hist_[c][2].ptr;
    } else {
      fields_[c].ptr = ho_hist_[c][2].ptr;
    }
    ho_hist_[c][2].ptr = ho_hist_[c][1].ptr;
    ho_hist_[c][1].ptr = ho_hist_[c][0].ptr;
    ho_hist_[c][0].ptr = cur;
    F_.f[c] = fields_[c].ptr;
    for (int l = 0; l < 3; ++l) ho_.hist[c][l] = ho_hist_[c][l].ptr;
    ho_.dst[c] = ho_.hist[c][2];
  }
}

// Whether a kernel of s44's (the pair, one pass, the wavefront) may step a core box of this model:
// the direct kernels, float32 fields, no subdomain, PMC or periodic face (their ghost fills run
// between the half steps), and at most kS44PairPoints point-source components a field (the kernels
// apply those of the core themselves).
bool FdtdEngineCuda::s44_core_steppable() const {
  if (ho_kernel_ != EngineTuning::HighOrderKernel::direct || storage_ != FieldStorage::float32 || subdomain_)
    return false;
  for (int f = 0; f < 6; ++f) {
    const BoundaryType b = op_.setup().boundaries.face[f];
    if (b == BoundaryType::pmc || b == BoundaryType::periodic) return false;
  }
  int points[2] = {0, 0};
  for (const auto& ps : op_.sources())
    for (int a = 0; a < 3; ++a) points[ps.electric ? 1 : 0] += ps.active[a] ? 1 : 0;
  return points[0] <= kS44PairPoints && points[1] <= kS44PairPoints;
}

// s44 two steps per pass (EngineTuning::s44_stepping, s44_pair_interior): the core is the
// largest box whose footprint (the core grown by 6 samples on every side: the samples whose
// levels the pair reads or computes again) lies inside both fields' direct boxes and clear of
// every CPML slab, so every sample the pair computes takes the direct kernel's update and nothing
// else (the slab kernels, the ghost fills, the shell never touch it).
void FdtdEngineCuda::setup_s44_pair(const EngineTuning& tuning) {
  using SS = EngineTuning::S44Stepping;
  SS mode = tuning.s44_stepping;
  if (const char* v = std::getenv("VEM_S44_STEPPING")) {
    if (std::string(v) == "one_step") mode = SS::one_step;
    else if (std::string(v) == "two_steps") mode = SS::two_steps;
    else if (std::string(v) == "one_pass") mode = SS::one_pass;
    else if (std::string(v) == "wavefront") mode = SS::wavefront;
    else fail("VEM_S44_STEPPING=", v, ": use one_step, two_steps, one_pass or wavefront");
  }
  if (mode == SS::wavefront) {
    setup_s44_wavefront();
    return;
  }
  if ((mode != SS::two_steps && mode != SS::one_pass) || !ho_.s44) return;
  const bool one_pass = mode == SS::one_pass;
  // The footprint: the samples around the core whose levels the kernel reads or computes again.
  const int halo = one_pass ? kS44OpHalo : kS44PairHalo;
  // What the pair cannot take steps one at a time (documented at EngineTuning::s44_stepping).
  if (!s44_core_steppable() || !use_table_) return;
  HoBox c{};
  for (int a = 0; a < 3; ++a) {
    c.lo[a] = std::max(ho_box_[0].lo[a], ho_box_[1].lo[a]) + halo;
    c.hi[a] = std::min(ho_box_[0].hi[a], ho_box_[1].hi[a]) - halo;
  }
  for (const auto& st : slabs_)
    for (int e = 0; e < 2; ++e) {
      const SlabParams& sp = e ? st->e : st->h;
      if ((e ? st->ne : st->nh) == 0) continue;
      const int a = st->axis, lo = sp.o[a], hi = sp.o[a] + sp.d[a] - 1;
      if (st->face % 2 == 0) c.lo[a] = std::max(c.lo[a], hi + 1 + halo);
      else c.hi[a] = std::min(c.hi[a], lo - 1 - halo);
    }
  // One pass: the core's rows start on a 128-byte line (as s44_direct's core, session 38), the
  // rest's low x box takes the columns below.
  if (one_pass) c.lo[0] = (c.lo[0] + FieldLayout::kXOffset + 31) / 32 * 32 - FieldLayout::kXOffset;
  for (int a = 0; a < 3; ++a)
    if (c.hi[a] - c.lo[a] + 1 < (one_pass ? 8 : kS44PairCore)) return;  // too small to pay
  s44_pr_ = S44Pair{};
  s44_pr_.core = c;
  const int ext[3] = {c.hi[0] - c.lo[0] + 1, c.hi[1] - c.lo[1] + 1, c.hi[2] - c.lo[2] + 1};
  if (one_pass) {
    s44_pr_.chunk = 64;
    if (const char* v = std::getenv("VEM_S44_ONEPASS_CHUNK")) s44_pr_.chunk = std::max(1, std::atoi(v));
    s44_grid_ = dim3(unsigned((ext[0] + kS44OpX - 1) / kS44OpX), unsigned((ext[1] + kS44OpY - 1) / kS44OpY),
                     unsigned((ext[2] + s44_pr_.chunk - 1) / s44_pr_.chunk));
  } else {
    s44_pr_.chunk = 128;
    if (const char* v = std::getenv("VEM_S44_PAIR_CHUNK")) s44_pr_.chunk = std::max(1, std::atoi(v));
    s44_grid_ = dim3(unsigned((ext[0] + kS44PairCore - 1) / kS44PairCore),
                     unsigned((ext[1] + kS44PairCore - 1) / kS44PairCore),
                     unsigned((ext[2] + s44_pr_.chunk - 1) / s44_pr_.chunk));
  }
  // The rest: each field's direct box less the core.
  for (int e = 0; e < 2; ++e) s44_rest_[e] = box_less(ho_box_[e], c);
  for (int q = 0; q < 6; ++q)
    for (int l = 0; l < (one_pass ? 1 : 2); ++l) {
      s44_spare_[q][l].allocate(ho_hist_[q][0].count, "s44 spare time levels");
      s44_spare_[q][l].zero();  // the ghost samples stay zero, as in the other levels
    }
  s44_pr_.tab = s44_tab_.ptr;
  if (one_pass) {
    if (const char* v = std::getenv("VEM_S44_ONEPASS_REST")) {
      if (std::string(v) != "beside" && std::string(v) != "after")
        fail("VEM_S44_ONEPASS_REST=", v, ": use beside or after");
      s44_op_beside_ = std::string(v) == "beside";
    }
    if (s44_op_beside_) side_.create();
    if (const char* v = std::getenv("VEM_S44_ONEPASS_LOADS")) {
      if (std::string(v) != "early" && std::string(v) != "in_stage")
        fail("VEM_S44_ONEPASS_LOADS=", v, ": use early or in_stage");
      s44_op_early_ = std::string(v) == "early";
    }
    s44_onepass_ = true;
    return;
  }
  if (constant_table_)
    VEM_CUDA_CHECK(cudaFuncSetAttribute(s44_pair_interior<ConstantTable>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(kS44PairSmemBytes)));
  else
    VEM_CUDA_CHECK(cudaFuncSetAttribute(s44_pair_interior<GlobalTable>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(kS44PairSmemBytes)));
  s44_pr_.tab = s44_tab_.ptr;
  s44_pair_ = true;
}

// The s44 coefficients per material key (s44_coefficient_table) for the pair kernel and
// s44_direct, wherever s44 runs with a material table (indexed or packed coefficients).
void FdtdEngineCuda::setup_s44_table() {
  if (!ho_.s44 || !use_table_) return;
  const int keys = int(table_.count / 12);
  s44_tab_.allocate(std::size_t(keys) * 32, "s44 coefficient table");
  s44_tab_.zero();
  const unsigned blocks = unsigned((keys + 127) / 128);
  if (constant_table_)
    s44_coefficient_table<<<blocks, 128, 0, stream_>>>(ConstantTable{index_.ptr}, keys, s44_tab_.ptr);
  else
    s44_coefficient_table<<<blocks, 128, 0, stream_>>>(GlobalTable{index_.ptr, table_.ptr}, keys, s44_tab_.ptr);
  VEM_CUDA_CHECK_LAUNCH("s44_coefficient_table");
}

S44PairPoints FdtdEngineCuda::s44_points(int stages, int step) const {
  S44PairPoints pts{};
  for (int st = 0; st < stages; ++st)
    for_each_point_update(st % 2 == 1, step + st / 2, [&](int field, std::int64_t offset, float value, bool hard) {
      const int q = pts.count[st]++;
      pts.comp[st][q] = field;
      pts.off[st][q] = int(offset);
      pts.value[st][q] = value;
      pts.set[st][q] = hard ? 1 : 0;
      const std::array<int, 3> ijk = op_.layout().sample(offset);
      for (int a = 0; a < 3; ++a) pts.at[st][q][a] = ijk[a];
    });
  return pts;
}

// Steps `step` and step+1 of s44 with the pair (setup_s44_pair): the pair kernel writes both
// steps' levels of the core into the spares, then the rest steps twice as step_once would, each
// half step writing into the spare of its step and rotating it in (rotate_s44), its point updates
// left out of the core (the pair kernel applied them there), its probes gathered after its E.
template <class Coef>
void FdtdEngineCuda::step_pair_s44(const Coef& coef, int step) {
  if constexpr (std::is_same_v<Coef, CoefficientArrays>) {
    (void)coef;
    fail("internal: the s44 pair without a material table");
  } else {
    const S44PairPoints pts = s44_points(4, step);
    S44Pair pr = s44_pr_;
    for (int c = 0; c < 6; ++c) {
      pr.out1[c] = s44_spare_[c][0].ptr;
      pr.out2[c] = s44_spare_[c][1].ptr;
    }
    launch_on(stream_, s44_pair_interior<Coef>, s44_grid_, dim3(kS44PairT, kS44PairT), kS44PairSmemBytes, F_, g_, ho_,
              pr, coef, pts);
    VEM_CUDA_CHECK_LAUNCH("s44_pair_interior");
    s44_rest_now_ = true;
    for (int s = 0; s < 2; ++s) {
      // Both fields write spare s (rotate_s44 turns it in and points dst back at hist[c][2]).
      s44_spare_slot_ = s;
      for (int c = 0; c < 6; ++c) ho_.dst[c] = s44_spare_[c][s].ptr;
      launch_ho<false>(coef);
      push_point_updates(false, step + s, &s44_pr_.core);
      launch_ho<true>(coef);
      push_point_updates(true, step + s, &s44_pr_.core);
      gather_probes_at(step + s);
    }
    s44_spare_slot_ = -1;
    s44_rest_now_ = false;
    two_step_steps_ += 2;
  }
}

// Step `step` of s44 with one pass over the core (setup_s44_pair, one_pass): the kernel writes
// the core's H^{n+1/2} and E^{n+1} into the spare, then the rest steps as step_once would, each
// half step writing into the spare and rotating it in (rotate_s44), its point updates left out of
// the core (the kernel applied them there), the probes gathered after its E.
template <class Coef>
void FdtdEngineCuda::step_onepass_s44(const Coef& coef, int step) {
  if constexpr (std::is_same_v<Coef, CoefficientArrays>) {
    (void)coef;
    (void)step;
    fail("internal: s44's one pass without a material table");
  } else {
    const S44PairPoints pts = s44_points(2, step);
    S44Pair pr = s44_pr_;
    for (int c = 0; c < 6; ++c) pr.out1[c] = s44_spare_[c][0].ptr;
    // Beside the rest's H pass: it reads what the kernel reads and writes other samples of the
    // spares; the rest's E waits for both (the join below).
    const bool beside = s44_op_beside_ && !stream_capturing();
    cudaStream_t ks = stream_;
    if (beside) {
      side_.fork(stream_);
      ks = side_.stream;
    }
    const dim3 block(kS44OpX, kS44OpThreadsY);
    if (s44_op_early_)
      launch_on(ks, s44_onepass_interior<true, Coef>, s44_grid_, block, 0, F_, g_, ho_, pr, coef, pts);
    else
      launch_on(ks, s44_onepass_interior<false, Coef>, s44_grid_, block, 0, F_, g_, ho_, pr, coef, pts);
    VEM_CUDA_CHECK_LAUNCH("s44_onepass_interior");
    s44_rest_now_ = true;
    s44_spare_slot_ = 0;
    for (int c = 0; c < 6; ++c) ho_.dst[c] = s44_spare_[c][0].ptr;
    launch_ho<false>(coef);
    push_point_updates(false, step, &s44_pr_.core);
    if (beside) side_.join(stream_);
    launch_ho<true>(coef);
    push_point_updates(true, step, &s44_pr_.core);
    gather_probes_at(step);
    s44_spare_slot_ = -1;
    s44_rest_now_ = false;
    one_pass_steps_ += 1;
  }
}

// s44's wavefront (s44_wavefront): the core both fields' direct boxes share (the intersection of
// their folded cores, which no CPML slab touches), split into tasks of `rows` rows a plane; what
// either core holds beyond it steps with that field's bands. The launch takes as many blocks as
// stay resident (more would only wait to claim nothing).
void FdtdEngineCuda::setup_s44_wavefront() {
  if (!ho_.s44 || !s44_core_steppable() || !s44_stores_last_ || s44_levels_first_ || !ho_fold_) return;
  HoBox w{};
  for (int a = 0; a < 3; ++a) {
    w.lo[a] = std::max(ho_core_[0].lo[a], ho_core_[1].lo[a]);
    w.hi[a] = std::min(ho_core_[0].hi[a], ho_core_[1].hi[a]);
    if (w.hi[a] - w.lo[a] + 1 < 4) return;  // too small to pay
  }
  for (int e = 0; e < 2; ++e) s44_wave_rest_[e] = box_less(ho_core_[e], w);
  S44Wave& sw = s44_wave_;
  sw = S44Wave{};
  sw.box = w;
  const int rows = w.hi[1] - w.lo[1] + 1, planes = w.hi[2] - w.lo[2] + 1;
  sw.rows = env_int("VEM_S44_WAVE_ROWS", 2, 1);
  sw.strips = std::min(env_int("VEM_S44_WAVE_STRIPS", 4, 1), std::max(1, rows / 4));
  sw.strip_rows = (rows + sw.strips - 1) / sw.strips;
  sw.strips = (rows + sw.strip_rows - 1) / sw.strip_rows;
  sw.chunks = (sw.strip_rows + 1 + sw.rows - 1) / sw.rows;
  int device = 0, sms = 0, per_sm = 0;
  VEM_CUDA_CHECK(cudaGetDevice(&device));
  VEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  auto occupancy = [&](auto coef_tag) {
    VEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s44_wavefront<decltype(coef_tag)>,
                                                                 kS44WaveThreads, 0));
  };
  if (!use_table_) occupancy(CoefficientArrays{});
  else if (constant_table_) occupancy(ConstantTable{});
  else occupancy(GlobalTable{});
  s44_wave_blocks_ = std::max(1, per_sm) * std::max(1, sms);
  s44_wave_blocks_ = env_int("VEM_S44_WAVE_BLOCKS", s44_wave_blocks_, 1);
  // The lag: an E task should find the H of its planes done, so the tasks in flight (one a block)
  // should span fewer planes of a strip than it: the rows in flight over the strip's, plus 2
  // (measured at 512^3: 4 / 6 / 10 / 20 best for 4-row tasks / 2-row tasks in 4 and 8 strips).
  const long long in_flight = (long long)s44_wave_blocks_ * sw.rows;
  sw.lag = env_int("VEM_S44_WAVE_LAG", int((in_flight + sw.strip_rows - 1) / sw.strip_rows) + 2, 1);
  sw.strip_tasks = 2LL * sw.chunks * (planes + sw.lag);
  sw.tasks = sw.strips * sw.strip_tasks;
  s44_wave_blocks_ = int(std::min<long long>(s44_wave_blocks_, sw.tasks));
  s44_wave_counter_.allocate(1 + std::size_t(sw.strips) * planes, "s44 wavefront counters");
  s44_wave_counter_.zero();
  sw.counter = s44_wave_counter_.ptr;
  s44_wave_launches_ = 0;
  s44_wavefront_ = true;
}

// Step `step` of s44 with the wavefront: the bands, the shell and the rest of each core step their H
// (rotated in), then s44_wavefront steps the shared core's H and E with the point updates there,
// then the rest's E (rotated in), its point updates and the probes.
template <class Coef>
void FdtdEngineCuda::step_wavefront_s44(const Coef& coef, int step) {
  const S44PairPoints pts = s44_points(2, step);
  const FieldPtrs Fh = F_;  // H^{n-1/2} current: the H stage's view
  const HoParams ph = ho_;
  s44_wave_now_ = true;
  launch_ho<false>(coef);
  push_point_updates(false, step, &s44_wave_.box);
  S44Wave w = s44_wave_;
  w.base = s44_wave_launches_ * (static_cast<unsigned long long>(w.tasks) + unsigned(s44_wave_blocks_));
  w.done = (s44_wave_launches_ + 1) * static_cast<unsigned long long>(w.chunks);
  const dim3 grid{unsigned(s44_wave_blocks_)}, block{unsigned(kS44WaveThreads)};
  const float* tab = s44_tab_.ptr;
  launch(s44_wavefront<Coef>, grid, block, Fh, ph, F_, ho_, g_, w, coef, fused_, tab, pts);
  VEM_CUDA_CHECK_LAUNCH("s44_wavefront");
  ++s44_wave_launches_;
  launch_ho<true>(coef);
  push_point_updates(true, step, &s44_wave_.box);
  gather_probes_at(step);
  s44_wave_now_ = false;
  one_pass_steps_ += 1;
}

HoFold FdtdEngineCuda::make_ho_fold(bool electric) const {
  HoFold f{};
  for (const auto& st : slabs_) {
    if ((electric ? st->ne : st->nh) == 0) continue;
    f.s[st->axis][st->face % 2] = electric ? st->e : st->h;
    f.has[st->axis][st->face % 2] = 1;
  }
  return f;
}

template <bool ELECTRIC, int SHAPE, class Coef>
void FdtdEngineCuda::launch_ho_shape(const Coef& coef) {
  using HK = EngineTuning::HighOrderKernel;
  const int e = ELECTRIC ? 1 : 0;
  const HoFold fold = ho_fold_ ? make_ho_fold(ELECTRIC) : HoFold{};
  if (SHAPE == kShapeTables || ho_kernel_ == HK::tables) {
    const dim3 grid((g_.nx + 1 + ho_block_.x - 1) / ho_block_.x, (g_.ny + 1 + ho_block_.y - 1) / ho_block_.y,
                    (g_.nz + 1 + ho_block_.z - 1) / ho_block_.z);
    launch(update_ho_bulk<ELECTRIC, Coef>, grid, ho_block_, F_, g_, ho_, coef, fused_);
    VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "update_ho_bulk (E)" : "update_ho_bulk (H)");
  } else {
    // The shell first, on the side stream (ho_shell_beside_), then the interior.
    const bool side = ho_shell_beside_ && !stream_capturing();
    if (side) {
      side_.fork(stream_);
      launch_ho_shell<ELECTRIC, SHAPE>(coef, fold, side_.stream);
    }
    const HoBox& bx = ho_box_[e];
    const int ext[3] = {bx.hi[0] - bx.lo[0] + 1, bx.hi[1] - bx.lo[1] + 1, bx.hi[2] - bx.lo[2] + 1};
    if (ext[0] > 0 && ext[1] > 0 && ext[2] > 0) {
      if (ho_kernel_ == HK::tiled) {
        auto tiled = [&](auto fold_tag, const HoTileSet& ts) {
          constexpr bool FOLD = decltype(fold_tag)::value;
          if (ts.blocks == 0) return;
          // The band instance: every box of the set in a 1D grid; the core: its one box, 3D.
          const dim3 grid = FOLD ? dim3(unsigned(ts.blocks))
                                 : dim3(unsigned(ts.tiles_x[0]), unsigned(ts.tiles_y[0]),
                                        unsigned(ts.blocks / (ts.tiles_x[0] * ts.tiles_y[0])));
          // The core's threads one or two rows each (ho_core_rows_); the bands one.
          if (!FOLD && ho_core_rows_[e] == 2)
            launch_on(stream_, ho_interior_tiled<ELECTRIC, SHAPE, false, Coef, 2>, grid, dim3(kTileX, kTileY),
                      kTileSmemBytes<2>, F_, g_, ho_, ts, coef, fused_, fold);
          else
            launch_on(stream_, ho_interior_tiled<ELECTRIC, SHAPE, FOLD, Coef, 1>, grid, dim3(kTileX, kTileY),
                      kTileSmemBytes<1>, F_, g_, ho_, ts, coef, fused_, fold);
          VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "ho_interior_tiled (E)" : "ho_interior_tiled (H)");
        };
        if constexpr (ho_foldable(SHAPE)) {
          if (ho_fold_) {
            for (const HoTileSet& ts : ho_band_tiles_[e]) tiled(std::true_type{}, ts);
            tiled(std::false_type{}, ho_core_tiles_[e]);
          } else {
            tiled(std::false_type{}, ho_box_tiles_[e]);
          }
        } else {
          tiled(std::false_type{}, ho_box_tiles_[e]);
        }
      } else {
        auto direct = [&](const HoBox& b, bool folded) {
          const int x[3] = {b.hi[0] - b.lo[0] + 1, b.hi[1] - b.lo[1] + 1, b.hi[2] - b.lo[2] + 1};
          if (x[0] <= 0 || x[1] <= 0 || x[2] <= 0) return;
          // The pair's rest: its x boxes are about 15 columns wide, so 16 x 16 blocks there.
          // One pass's low x box is about 22 columns wide: 32 x 8 blocks there.
          const dim3 bl = s44_rest_now_ && x[0] <= 16 && ho_block_.x * ho_block_.y == 256   ? dim3(16, 16, 1)
                          : s44_rest_now_ && x[0] <= 32 && ho_block_.x * ho_block_.y == 256 ? dim3(32, 8, 1)
                          : folded && !s44_rest_now_                                         ? ho_band_block_
                                                                                             : ho_block_;
          const dim3 grid((x[0] + bl.x - 1) / bl.x, (x[1] + bl.y - 1) / bl.y, (x[2] + bl.z - 1) / bl.z);
          if constexpr (SHAPE == kShapeS44) {
            if (ho_.s44 && s44_stores_last_) {
              if (s44_levels_first_) {
                if (folded)
                  launch(s44_direct<ELECTRIC, true, Coef, true>, grid, bl, F_, g_, ho_, b, coef, fused_, s44_tab_.ptr, fold);
                else
                  launch(s44_direct<ELECTRIC, false, Coef, true>, grid, bl, F_, g_, ho_, b, coef, fused_, s44_tab_.ptr, fold);
              } else if (folded) {
                launch(s44_direct<ELECTRIC, true, Coef>, grid, bl, F_, g_, ho_, b, coef, fused_, s44_tab_.ptr, fold);
              } else {
                launch(s44_direct<ELECTRIC, false, Coef>, grid, bl, F_, g_, ho_, b, coef, fused_, s44_tab_.ptr, fold);
              }
              VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "s44_direct (E)" : "s44_direct (H)");
              return;
            }
          }
          launch(ho_interior_direct<ELECTRIC, SHAPE, Coef>, grid, bl, F_, g_, ho_, b, coef, fused_);
          VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "ho_interior_direct (E)" : "ho_interior_direct (H)");
        };
        // (ho_fold_ here: s44's folded corrections, on the bands that meet a slab; the pair's rest
        // holds the slabs)
        if (s44_rest_now_) {
          for (const HoBox& b : s44_rest_[e]) direct(b, ho_fold_);  // the pair kernel stepped the core
        } else if (s44_wave_now_) {
          // s44_wavefront steps the shared core: the bands and the field's own core beyond it here
          for (const HoBand& b : ho_bands_[e]) direct(b.box, true);
          for (const HoBox& b : s44_wave_rest_[e]) direct(b, false);
        } else if (ho_fold_) {
          for (const HoBand& b : ho_bands_[e]) direct(b.box, true);
          direct(ho_core_[e], false);
        } else {
          direct(bx, false);
        }
      }
    }
    if (side) side_.join(stream_);
    else launch_ho_shell<ELECTRIC, SHAPE>(coef, fold, stream_);
  }
  if (ho_.s44) rotate_s44<ELECTRIC>();
  if (ho_fold_) return;  // the corrections were folded into the tiled and shell kernels
  for (const auto& st : slabs_) {
    const SlabParams& sp = ELECTRIC ? st->e : st->h;
    const std::int64_t cells = ELECTRIC ? st->ne : st->nh;
    if (cells == 0) continue;
    const dim3 g1(unsigned((cells + 127) / 128)), b1(128);
    switch (st->axis) {
      case 0: launch(ho_cpml_slab<0, ELECTRIC, SHAPE, Coef>, g1, b1, F_, g_, ho_, sp, coef); break;
      case 1: launch(ho_cpml_slab<1, ELECTRIC, SHAPE, Coef>, g1, b1, F_, g_, ho_, sp, coef); break;
      default: launch(ho_cpml_slab<2, ELECTRIC, SHAPE, Coef>, g1, b1, F_, g_, ho_, sp, coef); break;
    }
    VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "ho_cpml_slab (E)" : "ho_cpml_slab (H)");
  }
}

// The shell's kernels (the direct and tiled paths) on `stream`: the face boxes, one launch per table
// axis, then the edges.
template <bool ELECTRIC, int SHAPE, class Coef>
void FdtdEngineCuda::launch_ho_shell(const Coef& coef, const HoFold& fold, cudaStream_t stream) {
  const int e = ELECTRIC ? 1 : 0;
  auto face = [&](auto axis_tag) {
    constexpr int A = decltype(axis_tag)::value;
    const HoShell& fc = ho_shell_face_[e][A];
    if (fc.count == 0) return;
    const long long total = fc.begin[fc.count];
    const dim3 gs(unsigned((total + 127) / 128)), bs(128);
    bool folded = false;
    if constexpr (ho_shell_foldable(SHAPE)) {
      if (ho_fold_)
        launch_on(stream, ho_shell<ELECTRIC, SHAPE, true, A, Coef>, gs, bs, 0, F_, g_, ho_, fc, coef, fused_, fold);
      folded = ho_fold_;
    }
    if (!folded)
      launch_on(stream, ho_shell<ELECTRIC, SHAPE, false, A, Coef>, gs, bs, 0, F_, g_, ho_, fc, coef, fused_, fold);
    VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "ho_shell, faces (E)" : "ho_shell, faces (H)");
  };
  face(std::integral_constant<int, 0>{});
  face(std::integral_constant<int, 1>{});
  face(std::integral_constant<int, 2>{});
  const HoShell& sh = ho_shell_[e];
  const long long total = sh.count > 0 ? sh.begin[sh.count] : 0;
  if (total > 0) {
    const dim3 gs(unsigned((total + 127) / 128)), bs(128);
    bool folded = false;
    if constexpr (ho_shell_foldable(SHAPE)) {
      if (ho_fold_)
        launch_on(stream, ho_shell<ELECTRIC, SHAPE, true, -1, Coef>, gs, bs, 0, F_, g_, ho_, sh, coef, fused_, fold);
      folded = ho_fold_;
    }
    if (!folded)
      launch_on(stream, ho_shell<ELECTRIC, SHAPE, false, -1, Coef>, gs, bs, 0, F_, g_, ho_, sh, coef, fused_, fold);
    VEM_CUDA_CHECK_LAUNCH(ELECTRIC ? "ho_shell, edges (E)" : "ho_shell, edges (H)");
  }
}

// The Yee bulk update of E or H over the whole grid (split: false) or, with halo planes in flight,
// the interior box, then (after the planes are unpacked) the slabs beside the receiving faces.
template <class Coef>
void FdtdEngineCuda::update_bulk(bool electric, const Coef& coef, bool split) {
  auto run = [&](const Window& w) {
    for (int a = 0; a < 3; ++a)
      if (w.hi[a] < w.lo[a]) return;
    const dim3 grid(unsigned((w.hi[0] - w.lo[0] + block_.x) / block_.x),
                    unsigned((w.hi[1] - w.lo[1] + block_.y) / block_.y),
                    unsigned((w.hi[2] - w.lo[2] + chunk_) / chunk_));
    if (electric) {
      with_storage([&](auto t) {
        using T = decltype(t);
        launch(update_e_bulk<Coef, T>, grid, block_, as_storage<T>(F_), g_, coef, chunk_, fused_, w);
      });
      VEM_CUDA_CHECK_LAUNCH("update_e_bulk");
    } else {
      with_storage([&](auto t) {
        using T = decltype(t);
        launch(update_h_bulk<Coef, T>, grid, block_, as_storage<T>(F_), g_, coef, chunk_, w);
      });
      VEM_CUDA_CHECK_LAUNCH("update_h_bulk");
    }
  };
  const Window full = {{0, 0, 0}, {g_.nx, g_.ny, g_.nz}};
  if (!split) {
    run(full);
    return;
  }
  const int e = electric ? 1 : 0;
  for (const Window& w : hs_.interior[e]) run(w);
  halo_finish(!electric);  // E updates wait for the H planes of this step, H for the E of the last
  for (const Window& w : hs_.border[e]) run(w);
}

template <class Coef>
void FdtdEngineCuda::step_once(const Coef& coef, int step) {
  const auto& bc = op_.setup().boundaries;
  const int n[3] = {g_.nx, g_.ny, g_.nz};
  // One pass (setup_onepass): H and E bulk from fields_ into next_, then the H corrections (they
  // read E^n in fields_), E again where H was corrected, the E corrections; swap at the end.
  // With subdomain faces the pass runs between the exchanges, which are then not overlapped.
  // Graphs record the pass too: every chunk is captured again (graph_stepping.cuh), so each
  // capture holds the array parity of its own steps.
  const bool one = onepass_ && !has_extensions() && !fused_.s[0];
  const bool fold_h = one && onepass_cpml_h_.count > 0, fold_e = one && onepass_cpml_e_.count > 0;
  float* cur[6];
  float* nxt[6];
  if (one) {
    for (int c = 0; c < 6; ++c) { cur[c] = fields_[c].ptr; nxt[c] = next_[c].ptr; }
    onepass::launch_bulk(onepass_grid_, onepass_coefs_, storage_, cur, nxt, onepass_tile_y_, onepass_chunk_,
                         fold_h ? onepass_cpml_h_ : onepass::CpmlSet{}, fold_e ? onepass_cpml_e_ : onepass::CpmlSet{},
                         pdl_, stream_, onepass_hoist_ && fold_h && fold_e);
    for (int c = 3; c < 6; ++c) F_.f[c] = nxt[c];
  }

  if (high_order_) {
    launch_ho<false>(coef);
  } else if (one) {
    if (!fold_h) launch_cpml<false>(coef);
  } else if (hs_.ready && hs_.pending == 1) {
    // The E planes of the last step are still travelling: the H interior first.
    update_bulk(false, coef, true);
    launch_cpml<false>(coef);
  } else {
    update_bulk(false, coef, false);
    launch_cpml<false>(coef);
  }
  push_point_updates(false, step);
  run_hooks(HookPoint::after_h, step);
  for (int a = 0; a < 3; ++a) {
    const BoundaryType lo = bc.face[2 * a], hi = bc.face[2 * a + 1];
    const bool any = lo == BoundaryType::pmc || lo == BoundaryType::periodic ||
                     hi == BoundaryType::pmc || hi == BoundaryType::periodic;
    if (!any) continue;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    const dim3 pb(32, 8), pg((n[b] + 1 + 31) / 32, (n[d] + 1 + 7) / 8);
    with_storage([&](auto t) {
      fill_h_ghosts<<<pg, pb, 0, stream_>>>(as_storage<decltype(t)>(F_), g_, a, int(lo), int(hi));
    });
    VEM_CUDA_CHECK_LAUNCH("fill_h_ghosts");
  }
  if (hs_.ready) {
    halo_start(false);
    if (!halo_overlap_ || one) halo_finish(false);  // one pass: before E is computed again below
  } else {
    exchange_halo(false);
  }

  if (high_order_) {
    launch_ho<true>(coef);
  } else if (one) {
    if (!onepass_boxes_.empty())
      onepass::launch_recompute_e(onepass_grid_, onepass_coefs_, storage_, cur, nxt, onepass_boxes_, pdl_, stream_);
    for (int c = 0; c < 3; ++c) F_.f[c] = nxt[c];
    if (!fold_e) launch_cpml<true>(coef);
  } else if (hs_.ready) {
    update_bulk(true, coef, halo_overlap_);  // with the overlap: interior, H planes, border
    launch_cpml<true>(coef);
  } else {
    update_bulk(true, coef, false);
    launch_cpml<true>(coef);
  }
  push_point_updates(true, step);
  run_hooks(HookPoint::after_e, step);
  for (int a = 0; a < 3; ++a) {
    if (bc.face[2 * a] != BoundaryType::periodic) continue;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    const dim3 pb(32, 8), pg((n[b] + 1 + 31) / 32, (n[d] + 1 + 7) / 8);
    with_storage([&](auto t) { copy_periodic_e<<<pg, pb, 0, stream_>>>(as_storage<decltype(t)>(F_), g_, a); });
    VEM_CUDA_CHECK_LAUNCH("copy_periodic_e");
  }
  if (hs_.ready) {
    halo_start(true);
    // Finished in the next step's H update (after its interior) when nothing reads the received
    // planes in between: no extensions (their end_of_step hooks), no probe on those planes.
    if (!halo_overlap_ || one || has_extensions() || hs_.probe_on_received) halo_finish(true);
  } else {
    exchange_halo(true);
  }
  if (one) {
    for (int c = 0; c < 6; ++c) std::swap(fields_[c].ptr, next_[c].ptr);  // F_ already holds next_
    if (fold_h) swap_psi(false);
    ++one_pass_steps_;
  }
  gather_probes_at(step);
  run_hooks(HookPoint::end_of_step, step);
}

void FdtdEngineCuda::gather_probes_at(int step) {
  const int np = int(op_.probes().size());
  if (np == 0) return;
  with_storage([&](auto t) {
    gather_probes<<<(np + 127) / 128, 128, 0, stream_>>>(as_storage<decltype(t)>(F_), probe_field_.ptr,
                                                         probe_offset_.ptr, np, probe_buf_.ptr + std::size_t(step) * np);
  });
  VEM_CUDA_CHECK_LAUNCH("gather_probes");
}

// Steps `step` and step+1 with temporal blocking (setup_two_step; onepass::plan_two_step). The
// interior tiles read only fields_ and write only their cores of next_, so they run on side_
// beside either step of the rest (forked after step 1 with tb_rest_first_, before it otherwise);
// the E point sources and the probes of each step act on the rest's arrays of that step (no
// interior tile holds or reads them).
template <class Coef>
void FdtdEngineCuda::step_pair(const Coef&, int step) {
  float *a[6], *b[6], *m[6];
  for (int c = 0; c < 6; ++c) {
    a[c] = fields_[c].ptr;
    b[c] = next_[c].ptr;
    m[c] = mid_[c].ptr;
  }
  auto launch_interior = [&] {
    onepass::launch_two_step_interior(onepass_grid_, onepass_coefs_, storage_, a, b, tb_tiles_.ptr,
                                      int(tb_tiles_.count), tb_tile_y_, tb_interior_blocks_, side_.stream);
  };
  auto interior = [&](cudaStream_t from) {
    side_.fork(from);
    launch_interior();
  };
  // psi sets of the rest's two steps. Plain pairs: E psi from the current set into the second and
  // back; H likewise through the one-pass pair of sets, so a pair leaves both where they were.
  // With shell tiles: from the current sets through the third into the second (shell_pair_sets),
  // which swap_psi then makes current.
  onepass::CpmlSet h1 = onepass_cpml_h_, e1 = tb_cpml_e_[0], h2, e2 = tb_cpml_e_[1];
  if (tb_shell_) {
    shell_pair_sets();
    h1 = tb_mid_h_[0];
    e1 = tb_mid_e_[0];
    h2 = tb_mid_h_[1];
    e2 = tb_mid_e_[1];
    // The interior (both it and the shell read only fields_) as tb_shell_interior_ says; the shell
    // on shell_side_ (tb_shell_beside_rest_) or on stream_, before the rest.
    const cudaStream_t shell_stream = tb_shell_beside_rest_ ? shell_side_.stream : stream_;
    // (tb_interior_in_shell_: the shell launch holds the interior tiles too)
    const bool own = !tb_interior_in_shell_;
    if (own && tb_shell_interior_ != ShellInterior::after) side_.fork(stream_);
    if (own && tb_shell_interior_ == ShellInterior::before) launch_interior();
    if (tb_shell_beside_rest_) shell_side_.fork(stream_);
    onepass::launch_two_step_shell(onepass_grid_, onepass_coefs_, storage_, a, b, tb_shell_lists_, onepass_cpml_h_,
                                   tb_cpml_e_[0], shell_stream);
    if (own && tb_shell_interior_ == ShellInterior::after_beside) launch_interior();
    if (own && tb_shell_interior_ == ShellInterior::after) interior(shell_stream);
  } else {
    h2 = swapped_psi(onepass_cpml_h_);
    if (!tb_rest_first_) interior(stream_);
  }
  onepass::launch_pass_blocks(onepass_grid_, onepass_coefs_, storage_, a, m, tb_first_.ptr, int(tb_first_.count), h1, e1,
                              tb_hoist_, stream_);
  if (!tb_shell_ && tb_rest_first_) interior(stream_);
  for (int c = 0; c < 6; ++c) F_.f[c] = m[c];
  push_point_updates(true, step);
  gather_probes_at(step);
  onepass::launch_pass_blocks(onepass_grid_, onepass_coefs_, storage_, m, b, tb_second_.ptr, int(tb_second_.count), h2, e2,
                              tb_hoist_, stream_);
  // Step 2's point updates and probes act on samples of the rest's cores (no interior or shell tile
  // holds them), so they may go before the joins, beside the other streams' tails
  // (tb_tail_before_join_).
  auto tail = [&] {
    for (int c = 0; c < 6; ++c) F_.f[c] = b[c];
    push_point_updates(true, step + 1);
    gather_probes_at(step + 1);
  };
  if (tb_tail_before_join_) tail();
  if (!tb_interior_in_shell_) side_.join(stream_);  // (the interior's stream, where it was forked)
  if (tb_shell_beside_rest_) shell_side_.join(stream_);
  if (!tb_tail_before_join_) tail();
  for (int c = 0; c < 6; ++c) std::swap(fields_[c].ptr, next_[c].ptr);  // F_ already holds next_
  if (tb_shell_) {
    swap_psi(false);
    swap_psi(true);
    two_step_shell_steps_ += 2;
  }
  one_pass_steps_ += 2;
  two_step_steps_ += 2;
}

// Graphs where the run allows them (fdtd/cuda/graph_stepping.cuh), else one launch per kernel.
template <class Coef>
void FdtdEngineCuda::run_steps(const Coef& coef, int n) {
  if (persistent_now()) {
    run_persistent(n);
    return;
  }
  if (high_order_ && s44_onepass_now()) {
    for (int s = 0; s < n; ++s) step_onepass_s44(coef, steps_ + s);
    return;
  }
  if (high_order_ && s44_wavefront_now()) {
    for (int s = 0; s < n; ++s) step_wavefront_s44(coef, steps_ + s);
    return;
  }
  if (high_order_ && s44_pair_now()) {
    int s = 0;
    for (; s + 1 < n; s += 2) step_pair_s44(coef, steps_ + s);
    for (; s < n; ++s) step_once(coef, steps_ + s);
    return;
  }
  const bool graph = graph_.enabled && !graph_.failed && !has_extensions() && !subdomain_ && !fused_.s[0] &&
                     !(high_order_ && ho_.s44);
  if (!graph) {
    int s = 0;
    if (two_step_ && !has_extensions() && !fused_.s[0])
      for (; s + 1 < n; s += 2) step_pair(coef, steps_ + s);
    for (; s < n; ++s) step_once(coef, steps_ + s);
    return;
  }
  if (two_step_) {
    // Graphs of graph_.chunk pairs (each pair's interior forked onto side_ inside the capture).
    const int pairs = n / 2;
    small_grid::run_steps_graph(graph_, pairs, 0, [&](int p) { step_pair(coef, steps_ + 2 * p); }, stream_, pdl_);
    for (int s = 2 * pairs; s < n; ++s) step_once(coef, steps_ + s);
    return;
  }
  small_grid::run_steps_graph(graph_, n, steps_, [&](int s) { step_once(coef, s); }, stream_, pdl_);
}

// Persistent stepping (setup_persistent, onepass::launch_persistent): launches of at most
// kPersistentLaunchSteps steps. The E point sources' values of a launch's steps are computed here
// as push_point_updates computes them and uploaded; the probes are written into probe_buf_ by the
// kernel.
void FdtdEngineCuda::run_persistent(int n) {
  const double dt = op_.dt();
  const int np = int(op_.probes().size());
  for (int done = 0; done < n;) {
    const int m = std::min(n - done, kPersistentLaunchSteps);
    const int first = steps_ + done;
    onepass::SourceSet src = persistent_src_;
    if (src.count > 0) {
      std::vector<float> v(std::size_t(m) * src.count);
      for (int s = 0; s < m; ++s) {
        int q = 0;
        for (const auto& ps : op_.sources()) {
          const double w = point_source_waveform(ps, first + s, dt);
          for (int a = 0; a < 3; ++a)
            if (ps.active[a]) v[std::size_t(s) * src.count + q++] = float(ps.scale[a] * w);
        }
      }
      if (persistent_values_.count < v.size()) persistent_values_.allocate(v.size(), "persistent source values");
      persistent_values_.upload(v.data(), v.size());
      src.value = persistent_values_.ptr;
    }
    onepass::ProbeSet probes;
    if (np > 0) {
      probes.count = np;
      probes.fields = persistent_table_.ptr;
      probes.field = probe_field_.ptr;
      probes.offset = probe_offset_.ptr;
      probes.out = probe_buf_.ptr + std::size_t(first) * np;
    }
    float* now[6];
    for (int c = 0; c < 6; ++c) now[c] = fields_[c].ptr;
    onepass::launch_persistent(onepass_grid_, onepass_coefs_, storage_, now, persistent_cpml_h_, persistent_cpml_e_, src, probes,
                               m, persistent_hoisted_, persistent_wide_, persistent_plan_view_, device_, stream_);
    persistent_steps_ += m;
    if (persistent_plan_view_.samples) persistent_planned_steps_ += m;
    done += m;
  }
}

void FdtdEngineCuda::do_steps(int n) {
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  if (halo_ && !hs_.ready && !high_order_) halo_setup();
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
  if (use_table_) {
    if (constant_table_) {
      const ConstantTable coef{index_.ptr};
      run_steps(coef, n);
    } else {
      const GlobalTable coef{index_.ptr, table_.ptr};
      run_steps(coef, n);
    }
  } else {
    CoefficientArrays coef;
    for (int q = 0; q < 12; ++q) coef.arr[q] = coef_ptr_[q];
    run_steps(coef, n);
  }
  if (hs_.pending >= 0) halo_finish(hs_.pending == 1);
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

// Halo state (see HaloState) ---------------------------------------------------------------
FdtdEngineCuda::HaloState::~HaloState() {
  // Not checked: destructors must not throw, and a failed release leaves nothing to do.
  if (host) cudaFreeHost(host);
  if (packed) cudaEventDestroy(packed);
  if (staged) cudaEventDestroy(staged);
  if (arrived) cudaEventDestroy(arrived);
  if (copy) cudaStreamDestroy(copy);
}

void FdtdEngineCuda::halo_setup() {
  const auto& bc = op_.setup().boundaries;
  bool any = false;
  for (int f = 0; f < 6; ++f) any = any || bc.face[f] == BoundaryType::subdomain;
  if (!any) return;
  const int n[3] = {g_.nx, g_.ny, g_.nz};
  for (int a = 0; a < 3; ++a) hs_.plane[a] = std::size_t(n[(a + 1) % 3] + 1) * (n[(a + 2) % 3] + 1);
  hs_.device = halo_->device_buffers();
  std::size_t total = 0;
  for (int e = 0; e < 2; ++e) {
    // After H (e = 0) the planes go up through the high faces and come in through the low ones;
    // after E the other way round (halo_exchange.h).
    int slot = 0;
    hs_.nsend[e] = hs_.nrecv[e] = 0;
    for (int pass = 0; pass < 2; ++pass)
      for (int f = 0; f < 6; ++f) {
        if (bc.face[f] != BoundaryType::subdomain) continue;
        if (halo_face_sends(f, e == 1) != (pass == 0)) continue;
        hs_.faces[e][slot] = f;
        hs_.offset[e][slot] = total;
        total += 2 * hs_.plane[f / 2];
        ++(pass == 0 ? hs_.nsend[e] : hs_.nrecv[e]);
        ++slot;
      }
  }
  hs_.dev.allocate(total, "halo plane buffers");
  if (!hs_.device) VEM_CUDA_CHECK(cudaMallocHost(&hs_.host, total * sizeof(float)));
  float* base = hs_.device ? hs_.dev.ptr : hs_.host;
  for (int e = 0; e < 2; ++e) {
    hs_.send[e].clear();
    hs_.recv[e].clear();
    for (int slot = 0; slot < hs_.nsend[e] + hs_.nrecv[e]; ++slot) {
      const int f = hs_.faces[e][slot];
      HaloBuffer b{f, base + hs_.offset[e][slot], 2 * hs_.plane[f / 2]};
      (slot < hs_.nsend[e] ? hs_.send[e] : hs_.recv[e]).push_back(b);
    }
  }
  VEM_CUDA_CHECK(cudaStreamCreateWithFlags(&hs_.copy, cudaStreamNonBlocking));
  VEM_CUDA_CHECK(cudaEventCreateWithFlags(&hs_.packed, cudaEventDisableTiming));
  VEM_CUDA_CHECK(cudaEventCreateWithFlags(&hs_.staged, cudaEventDisableTiming));
  VEM_CUDA_CHECK(cudaEventCreateWithFlags(&hs_.arrived, cudaEventDisableTiming));
  // The update boxes: the slabs of two node planes beside each receiving face (the E update
  // reads the H ghost plane -1 only at plane 0; the H update reads E plane N at planes N-1 and
  // N), cut off the box one face after the other, so that interior and slabs partition the grid.
  for (int e = 0; e < 2; ++e) {
    Window rest = {{0, 0, 0}, {n[0], n[1], n[2]}};
    hs_.border[e].clear();
    hs_.interior[e].clear();
    for (int f = 0; f < 6; ++f) {
      if (bc.face[f] != BoundaryType::subdomain) continue;
      const int a = f / 2;
      const bool low = f % 2 == 0;
      // The E update reads the planes received after H; the H update those received after E.
      if (halo_face_sends(f, e == 0)) continue;
      Window slab = rest;
      if (low) {
        slab.hi[a] = std::min(rest.hi[a], rest.lo[a] + 1);
        rest.lo[a] = slab.hi[a] + 1;
      } else {
        slab.lo[a] = std::max(rest.lo[a], rest.hi[a] - 1);
        rest.hi[a] = slab.lo[a] - 1;
      }
      hs_.border[e].push_back(slab);
    }
    hs_.interior[e].push_back(rest);
  }
  hs_.probe_on_received = false;
  for (const auto& p : op_.probes()) {
    const int c = int(p.probe.component), idx[3] = {p.probe.i, p.probe.j, p.probe.k};
    for (int a = 0; a < 3; ++a)
      if (bc.face[2 * a + 1] == BoundaryType::subdomain && c < 3 && c != a && idx[a] == n[a])
        hs_.probe_on_received = true;
  }
  hs_.pending = -1;
  hs_.ready = true;
}

void FdtdEngineCuda::halo_start(bool electric) {
  const int e = electric ? 1 : 0;
  float* dev = hs_.dev.ptr;
  halo_copy_planes(electric, true);
  VEM_CUDA_CHECK(cudaEventRecord(hs_.packed, stream_));
  VEM_CUDA_CHECK(cudaStreamWaitEvent(hs_.copy, hs_.packed, 0));
  if (hs_.device) {
    halo_->start_exchange(electric, hs_.send[e], hs_.recv[e], hs_.copy);
  } else if (hs_.nsend[e] > 0) {
    const std::size_t first = hs_.offset[e][0];
    const std::size_t count = hs_.offset[e][hs_.nsend[e] - 1] + 2 * hs_.plane[hs_.faces[e][hs_.nsend[e] - 1] / 2] - first;
    VEM_CUDA_CHECK(cudaMemcpyAsync(hs_.host + first, dev + first, count * sizeof(float), cudaMemcpyDeviceToHost, hs_.copy));
  }
  if (!hs_.device) VEM_CUDA_CHECK(cudaEventRecord(hs_.staged, hs_.copy));
  hs_.pending = e;
}

void FdtdEngineCuda::halo_finish(bool electric) {
  const int e = electric ? 1 : 0;
  if (hs_.pending != e) fail("CUDA engine: halo exchange of ", electric ? "E" : "H", " finished without being started");
  hs_.pending = -1;
  float* dev = hs_.dev.ptr;
  if (hs_.device) {
    halo_->finish_exchange();
  } else {
    VEM_CUDA_CHECK(cudaEventSynchronize(hs_.staged));
    halo_->start_exchange(electric, hs_.send[e], hs_.recv[e], nullptr);
    halo_->finish_exchange();
    if (hs_.nrecv[e] > 0) {
      const int last = hs_.nsend[e] + hs_.nrecv[e] - 1;
      const std::size_t first = hs_.offset[e][hs_.nsend[e]];
      const std::size_t count = hs_.offset[e][last] + 2 * hs_.plane[hs_.faces[e][last] / 2] - first;
      VEM_CUDA_CHECK(cudaMemcpyAsync(dev + first, hs_.host + first, count * sizeof(float), cudaMemcpyHostToDevice, hs_.copy));
    }
  }
  VEM_CUDA_CHECK(cudaEventRecord(hs_.arrived, hs_.copy));
  VEM_CUDA_CHECK(cudaStreamWaitEvent(stream_, hs_.arrived, 0));
  halo_copy_planes(electric, false);
}

// The half step's planes between the fields and the device buffer, on the stream: the sending
// faces' planes into it (pack) or the receiving faces' planes out of it (unpack).
void FdtdEngineCuda::halo_copy_planes(bool electric, bool pack) {
  const int e = electric ? 1 : 0;
  const int n[3] = {g_.nx, g_.ny, g_.nz};
  const int first = pack ? 0 : hs_.nsend[e], last = pack ? hs_.nsend[e] : hs_.nsend[e] + hs_.nrecv[e];
  for (int slot = first; slot < last; ++slot) {
    const int f = hs_.faces[e][slot], a = f / 2;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    const dim3 pb(32, 8), pg((n[b] + 1 + 31) / 32, (n[d] + 1 + 7) / 8);
    const int index = pack ? halo_send_plane(electric, n[a]) : halo_receive_plane(electric, n[a]);
    for (int q = 0; q < 2; ++q) {
      with_storage([&](auto t) {
        using T = decltype(t);
        plane_copy<<<pg, pb, 0, stream_>>>(reinterpret_cast<T*>(F_.f[halo_component(electric, a, q)]), g_, a, index,
                                           hs_.dev.ptr + hs_.offset[e][slot] + q * hs_.plane[a], pack);
      });
      VEM_CUDA_CHECK_LAUNCH(pack ? "plane_copy (halo pack)" : "plane_copy (halo unpack)");
    }
  }
}

std::vector<float> FdtdEngineCuda::probe_values() const {
  const std::size_t count = std::size_t(steps_) * op_.probes().size();
  std::vector<float> out(count);
  if (count) {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    VEM_CUDA_CHECK(cudaMemcpy(out.data(), probe_buf_.ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return out;
}

void FdtdEngineCuda::copy_plane(Component c, int axis, int index, float* host, bool to_host) const {
  const int n[3] = {g_.nx, g_.ny, g_.nz};
  const int b = (axis + 1) % 3, d = (axis + 2) % 3;
  const std::size_t count = std::size_t(n[b] + 1) * (n[d] + 1);
  DeviceArray<float> buf;
  buf.allocate(count, "halo plane buffer");
  if (!to_host) buf.upload(host, count);
  const dim3 pb(32, 8), pg((n[b] + 1 + 31) / 32, (n[d] + 1 + 7) / 8);
  with_storage([&](auto t) {
    using T = decltype(t);
    plane_copy<<<pg, pb>>>(reinterpret_cast<T*>(F_.f[int(c)]), g_, axis, index, buf.ptr, to_host);
  });
  VEM_CUDA_CHECK_LAUNCH("plane_copy");
  if (to_host) VEM_CUDA_CHECK(cudaMemcpy(host, buf.ptr, count * sizeof(float), cudaMemcpyDeviceToHost));
  else VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

void FdtdEngineCuda::read_plane(Component c, int axis, int index, float* out) const {
  copy_plane(c, axis, index, out, true);
}

void FdtdEngineCuda::write_plane(Component c, int axis, int index, const float* in) {
  copy_plane(c, axis, index, const_cast<float*>(in), false);
}

// The whole layout array of component c as float on the host (widened on the device from a
// 2-byte storage), and back (narrowed on the device: rounded to the storage).
void FdtdEngineCuda::layout_to_host(Component c, std::vector<float>& host) const {
  host.resize(std::size_t(op_.layout().size));
  if (storage_ == FieldStorage::float32) {
    VEM_CUDA_CHECK(cudaMemcpy(host.data(), fields_[int(c)].ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return;
  }
  DeviceArray<float> wide;
  wide.allocate(host.size(), "field download buffer");
  const long long n = (long long)host.size();
  with_storage([&](auto t) {
    using T = decltype(t);
    storage_convert<<<unsigned((n + 255) / 256), 256>>>(reinterpret_cast<const T*>(fields_[int(c)].ptr), wide.ptr, n);
  });
  VEM_CUDA_CHECK_LAUNCH("storage_convert (widen)");
  VEM_CUDA_CHECK(cudaMemcpy(host.data(), wide.ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
}

void FdtdEngineCuda::layout_from_host(Component c, const std::vector<float>& host) {
  if (storage_ == FieldStorage::float32) {
    VEM_CUDA_CHECK(cudaMemcpy(fields_[int(c)].ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    return;
  }
  DeviceArray<float> wide;
  wide.allocate(host.size(), "field upload buffer");
  wide.upload(host.data(), host.size());
  const long long n = (long long)host.size();
  with_storage([&](auto t) {
    using T = decltype(t);
    storage_convert<<<unsigned((n + 255) / 256), 256>>>(static_cast<const float*>(wide.ptr),
                                                         reinterpret_cast<T*>(fields_[int(c)].ptr), n);
  });
  VEM_CUDA_CHECK_LAUNCH("storage_convert (narrow)");
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

std::int64_t FdtdEngineCuda::first_non_finite(Component c) const {
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  DeviceArray<unsigned long long> first;
  first.allocate(1, "finiteness check");
  const unsigned long long none = ~0ull;
  first.upload(&none, 1);
  const long long n = op_.layout().size;
  const unsigned blocks = unsigned(std::min<long long>((n + 255) / 256, 4096));
  with_storage([&](auto t) {
    using T = decltype(t);
    find_non_finite<<<blocks, 256, 0, stream_>>>(reinterpret_cast<const T*>(fields_[int(c)].ptr), n, first.ptr);
  });
  VEM_CUDA_CHECK_LAUNCH("find_non_finite");
  unsigned long long o = none;
  VEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  VEM_CUDA_CHECK(cudaMemcpy(&o, first.ptr, sizeof(o), cudaMemcpyDeviceToHost));
  return o == none ? -1 : std::int64_t(o);
}

std::vector<float> FdtdEngineCuda::field(Component c) const {
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  std::vector<float> host;
  layout_to_host(c, host);
  return compact_from_layout(op_, c, host.data());
}

void FdtdEngineCuda::set_field(Component c, const std::vector<float>& values) {
  VEM_CUDA_CHECK(cudaSetDevice(device_));
  std::vector<float> host;
  layout_to_host(c, host);
  layout_from_compact(op_, c, values, host.data());
  layout_from_host(c, host);
}

std::unique_ptr<FdtdEngine> make_cuda_engine(const FdtdOperator& op, int device_index,
                                             const EngineTuning& tuning) {
  std::string why;
  if (!cuda_device_usable(&why)) fail("the CUDA backend was requested but ", why);
  return std::make_unique<FdtdEngineCuda>(op, device_index, tuning);
}

bool cuda_device_usable(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = cuda_unavailable_reason(int(e), cudaGetErrorString(e), nvidia_driver_loaded());
    return false;
  }
  if (count == 0) {
    if (why) *why = cuda_unavailable_reason(kCudaErrorNoDevice, "no CUDA-capable device", nvidia_driver_loaded());
    return false;
  }
  return true;
}

}  // namespace vem
