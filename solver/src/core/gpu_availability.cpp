// Why no GPU can be used (gpu_availability.h).
#include "vem/core/gpu_availability.h"

#include <fstream>

namespace vem {

bool nvidia_driver_loaded() { return std::ifstream("/proc/driver/nvidia/version").good(); }

std::string cuda_unavailable_reason(int cuda_error, const std::string& cuda_message, bool driver_loaded) {
  if (!driver_loaded && (cuda_error == kCudaErrorInsufficientDriver || cuda_error == kCudaErrorNoDevice))
    return "no NVIDIA GPU or driver was found (no NVIDIA kernel driver is loaded: "
           "/proc/driver/nvidia/version is absent)";
  if (cuda_error == kCudaErrorNoDevice)
    return "no NVIDIA GPU was found (the NVIDIA driver is loaded but reports no device)";
  if (cuda_error == kCudaErrorInsufficientDriver)
    return "the NVIDIA driver is older than this build's CUDA runtime needs (" + cuda_message +
           "); update the driver";
  return "the CUDA runtime reports: " + cuda_message;
}

}  // namespace vem
