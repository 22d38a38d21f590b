// Shared by the benchmark programs: the device-to-device copy bandwidth measured in the same run
// (the yardstick every GB/s figure is compared with) and the UTC date stamp of the JSON files.
#pragma once

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"
#ifdef VEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace vem_bench {

// Median of 10 cudaMemcpy D2D copies of 2 GiB, timed with CUDA events, counting bytes read plus
// bytes written. 0 without a usable device; *device_name is set to the device's name.
inline double copy_bandwidth_gbs(std::string* device_name) {
#ifdef VEM_WITH_CUDA
  if (!vem::cuda_available()) return 0;
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 0;
  *device_name = prop.name;
  const std::size_t bytes = std::size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    cudaFree(a);
    return 0;
  }
  cudaMemset(a, 1, bytes);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int w = 0; w < 3; ++w) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  std::vector<float> ms;
  for (int r = 0; r < 10; ++r) {
    cudaEventRecord(e0);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaFree(a);
  cudaFree(b);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return 2.0 * bytes / (ms[ms.size() / 2] * 1e-3) / 1e9;
#else
  (void)device_name;
  return 0;
#endif
}

inline std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

}  // namespace vem_bench
