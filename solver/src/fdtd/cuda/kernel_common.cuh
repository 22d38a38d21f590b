// Device helpers shared by the CUDA FDTD kernels (fdtd_engine_cuda.cu, cuda/fused_step.cu): the
// coefficient access policies of the global table and of per-sample coefficient arrays (the
// constant-memory table is each file's own __constant__ symbol), the range test, the CPML
// correction, and the programmatic-dependent-launch prologue.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "vem/core/field_storage.h"

namespace vem {
namespace cuda_kernels {

// Coefficient access policies: key(o) once per sample, then a(c, o, key) / b(c, o, key) for
// component c (0-5) of the sample at layout offset o.
struct GlobalTable {
  const std::uint16_t* __restrict__ index;
  const float* __restrict__ table;
  __device__ __forceinline__ int key(long long o) const { return int(__ldg(index + o)) * 12; }
  __device__ __forceinline__ float a(int c, long long, int key) const { return __ldg(table + key + 2 * c); }
  __device__ __forceinline__ float b(int c, long long, int key) const { return __ldg(table + key + 2 * c + 1); }
};
struct CoefficientArrays {
  const float* __restrict__ arr[12];
  __device__ __forceinline__ int key(long long) const { return 0; }
  __device__ __forceinline__ float a(int c, long long o, int) const { return __ldg(arr[2 * c] + o); }
  __device__ __forceinline__ float b(int c, long long o, int) const { return __ldg(arr[2 * c + 1] + o); }
};

__device__ __forceinline__ bool in(int v, int lo, int hi) { return v >= lo && v <= hi; }

// Field storage (vem/core/field_storage.h): T is the element type of the field arrays (float,
// __half, __nv_bfloat16); values are float in registers. to_f widens (exact), from_f narrows
// (round to nearest, ties to even: the CPU engine's round_to_float16 / round_to_bfloat16),
// rnd(v) = to_f(from_f(v)): the value a store of v keeps.
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <class T> __device__ __forceinline__ float rnd(float v) { return to_f(from_f<T>(v)); }
// Loads: plain, through the read-only cache, from L2 only; the store narrows.
template <class T> __device__ __forceinline__ float ld(const T* p) { return to_f(*p); }
template <class T> __device__ __forceinline__ float ldg(const T* p) { return to_f(__ldg(p)); }
template <class T> __device__ __forceinline__ float ldcg(const T* p) { return to_f(__ldcg(p)); }
template <class T> __device__ __forceinline__ void st(T* p, float v) { *p = from_f<T>(v); }
// The six field arrays in storage type T.
template <class T>
struct FieldsOf {
  T* f[6];
};
// Calls fn(T{}) with the element type of storage s (host side, for launches).
template <class Fn>
void with_storage(FieldStorage s, Fn&& fn) {
  switch (s) {
    case FieldStorage::float16: fn(__half{}); break;
    case FieldStorage::bfloat16: fn(__nv_bfloat16{}); break;
    default: fn(float{}); break;
  }
}

// CPML corrections (fdtd_operator.h), written once for the slab kernels (cpml_cell in
// fdtd_engine_cuda.cu) and the one-pass step (fused_step.cu), which must give the same floats.
// A slab with normal A corrects two components, q = 0 with sign +, q = 1 with sign -: for E the
// components (A+2)%3 and (A+1)%3 from d_A of H_{3+(A+1)%3} and H_{3+(A+2)%3}; for H the components
// 3+(A+1)%3 and 3+(A+2)%3 from d_A of E_{(A+2)%3} and E_{(A+1)%3} (FdtdEngineCpu::cpml_e / cpml_h).
__host__ __device__ constexpr int cpml_component(int A, bool electric, int q) {
  return electric ? (q == 0 ? (A + 2) % 3 : (A + 1) % 3) : 3 + (q == 0 ? (A + 1) % 3 : (A + 2) % 3);
}
__host__ __device__ constexpr int cpml_source(int A, bool electric, int q) {
  return electric ? 3 + (q == 0 ? (A + 1) % 3 : (A + 2) % 3) : (q == 0 ? (A + 2) % 3 : (A + 1) % 3);
}
// One psi and its field's increment: psi <- b psi + c dF, the field gets
// sign cb ((1/kappa - 1) dF + psi), with the new psi, or the old one for a lagged profile.
// Returns the increment; *psi_new the updated psi.
__device__ __forceinline__ float cpml_increment(float b, float c, float km1, float cb, float sign, float dF,
                                                float old, bool lagged, float* psi_new) {
  const float p = b * old + c * dF;
  *psi_new = p;
  return sign * cb * (km1 * dF + (lagged ? old : p));
}

// Programmatic dependent launch (Hopper, EngineTuning::launch): the stepping kernels are launched
// so that the next one's blocks are scheduled while this one's last blocks still run; each waits
// here, before touching memory, until the previous kernel has finished and its writes are
// visible, then lets the following kernel be scheduled. Without the launch attribute (or before
// sm_90) the wait returns at once and the kernels run one after the other as usual.
__device__ __forceinline__ void pdl_begin() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace cuda_kernels
}  // namespace vem
