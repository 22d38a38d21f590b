// Built instead of the CUDA engine when VEM_ENABLE_CUDA=OFF.
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {

std::unique_ptr<FdtdEngine> make_cuda_engine(const FdtdOperator&, int, const EngineTuning&) {
  fail("the CUDA backend was requested, but VoxelEM was built without CUDA (VEM_ENABLE_CUDA=OFF)");
}

bool cuda_device_usable(std::string* why) {
  if (why) *why = "VoxelEM was built without CUDA";
  return false;
}

}  // namespace vem
