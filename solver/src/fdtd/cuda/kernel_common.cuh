// Device helpers shared by the CUDA FDTD kernels (fdtd_engine_cuda.cu, cuda/fused_step.cu): the
// coefficient access policies of the global table and of per-sample coefficient arrays (the
// constant-memory table is each file's own __constant__ symbol), the range test, and the
// programmatic-dependent-launch prologue.
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
