// RAII device buffer for the CUDA engines (3D and 2D): cudaMalloc with an out-of-memory message
// that names what was allocated, the bytes needed and the bytes free; checked uploads and zeroing.
// CUDA sources only.
#pragma once

#include <cstddef>

#include "core/cuda_check.h"

namespace vem {

template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  std::size_t count = 0;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { if (ptr) cudaFree(ptr); }
  void allocate(std::size_t n, const char* what) {
    if (ptr) { cudaFree(ptr); ptr = nullptr; }
    count = n;
    if (n == 0) return;
    const cudaError_t e = cudaMalloc(&ptr, n * sizeof(T));
    if (e != cudaSuccess) {
      cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      ptr = nullptr;
      fail("CUDA out of memory allocating ", what, ": ", n * sizeof(T), " bytes needed, ", free_b,
           " bytes free of ", total_b, " (", cudaGetErrorString(e), ")");
    }
  }
  void upload(const T* host, std::size_t n) {
    if (n) VEM_CUDA_CHECK(cudaMemcpy(ptr, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void zero() { if (count) VEM_CUDA_CHECK(cudaMemset(ptr, 0, count * sizeof(T))); }
};

}  // namespace vem
