// Every CUDA runtime call and every kernel launch is checked; failures become vem::Error with the
// CUDA message, the call and the source line.
#pragma once

#include <cuda_runtime.h>

#include "vem/core/error.h"

#define VEM_CUDA_CHECK(call)                                                             \
  do {                                                                                   \
    const cudaError_t vem_err_ = (call);                                                 \
    if (vem_err_ != cudaSuccess)                                                         \
      ::vem::fail("CUDA error in ", #call, " (", __FILE__, ":", __LINE__, "): ",         \
                  cudaGetErrorString(vem_err_));                                         \
  } while (0)

#define VEM_CUDA_CHECK_LAUNCH(what)                                                      \
  do {                                                                                   \
    const cudaError_t vem_err_ = cudaGetLastError();                                     \
    if (vem_err_ != cudaSuccess)                                                         \
      ::vem::fail("CUDA kernel launch ", what, " failed (", __FILE__, ":", __LINE__,     \
                  "): ", cudaGetErrorString(vem_err_));                                  \
  } while (0)
