// Device helpers shared by the CUDA FDTD kernels (fdtd_engine_cuda.cu, cuda/fused_step.cu): the
// coefficient access policies of the global table and of per-sample coefficient arrays (the
// constant-memory table is each file's own __constant__ symbol), the range test, the CPML
// correction, and the programmatic-dependent-launch prologue.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

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
