// field_storage_rounding_mismatches (vem/core/field_storage.h): the CPU engine's rounding to the
// 2-byte storages against the CUDA conversions the CUDA engine stores with, over every float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "core/cuda_check.h"
#include "core/device_array.h"
#include "vem/core/error.h"
#include "vem/core/field_storage.h"

namespace vem {

bool cuda_device_usable(std::string* why);

namespace {

__device__ __forceinline__ bool same(float a, float b) {
  return float_bits(a) == float_bits(b) || (a != a && b != b);  // NaN: any NaN
}

// Patterns base .. base + n - 1: counts mismatches, keeps the smallest mismatching pattern.
__global__ void rounding_check(unsigned long long base, unsigned long long n, int bf16,
                               unsigned long long* count, unsigned int* first) {
  const unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (t >= n) return;
  const std::uint32_t u = std::uint32_t(base + t);
  const float x = bits_float(u);
  const float want = bf16 ? __bfloat162float(__float2bfloat16_rn(x)) : __half2float(__float2half_rn(x));
  const float got = bf16 ? round_to_bfloat16(x) : round_to_float16(x);
  if (!same(want, got)) {
    atomicAdd(count, 1ull);
    atomicMin(first, u);
  }
}

}  // namespace

std::uint64_t field_storage_rounding_mismatches(FieldStorage s, std::string* first) {
  if (s == FieldStorage::float32) return 0;
  std::string why;
  if (!cuda_device_usable(&why)) fail("field_storage_rounding_mismatches: ", why);
  DeviceArray<unsigned long long> count;
  DeviceArray<unsigned int> lowest;
  count.allocate(1, "rounding check counter");
  lowest.allocate(1, "rounding check counter");
  count.zero();
  const unsigned int none = 0xffffffffu;
  lowest.upload(&none, 1);
  const unsigned long long chunk = 1ull << 30;
  for (unsigned long long base = 0; base < (1ull << 32); base += chunk) {
    rounding_check<<<unsigned(chunk / 256), 256>>>(base, chunk, s == FieldStorage::bfloat16 ? 1 : 0, count.ptr,
                                                    lowest.ptr);
    VEM_CUDA_CHECK_LAUNCH("rounding_check");
  }
  unsigned long long n = 0;
  unsigned int lo = 0;
  VEM_CUDA_CHECK(cudaMemcpy(&n, count.ptr, sizeof(n), cudaMemcpyDeviceToHost));
  VEM_CUDA_CHECK(cudaMemcpy(&lo, lowest.ptr, sizeof(lo), cudaMemcpyDeviceToHost));
  if (first && n > 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", lo);
    *first = buf;
  }
  return n;
}

}  // namespace vem
