// Why no GPU can be used, in words a user can act on. The CUDA runtime answers a machine without
// an NVIDIA driver with "CUDA driver version is insufficient for CUDA runtime version"
// (cudaErrorInsufficientDriver), which sends a user looking for a driver upgrade; this names the
// real cause. Used by both solvers' "running on the CPU engine" warnings (fdtd_engine.h
// cuda_available, the FDFD solver) and by the GPU tests' skip message.
#pragma once

#include <string>

namespace vem {

// CUDA runtime error codes this reads (cuda_runtime_api.h), kept here so that the function builds
// and is tested without CUDA.
constexpr int kCudaErrorInsufficientDriver = 35;
constexpr int kCudaErrorNoDevice = 100;

// True when an NVIDIA kernel driver is loaded (/proc/driver/nvidia/version exists).
bool nvidia_driver_loaded();

// The reason for cudaGetDeviceCount's error `cuda_error` (its runtime message `cuda_message`),
// given whether a driver is loaded, e.g. "no NVIDIA GPU or driver was found (no NVIDIA kernel
// driver is loaded: /proc/driver/nvidia/version is absent)".
std::string cuda_unavailable_reason(int cuda_error, const std::string& cuda_message, bool driver_loaded);

}  // namespace vem
