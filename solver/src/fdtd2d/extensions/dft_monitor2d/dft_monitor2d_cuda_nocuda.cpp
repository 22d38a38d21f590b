// Stand-in for dft_monitor2d_cuda.cu when the library is built without CUDA.
#include "fdtd2d/extensions/dft_monitor2d/dft_monitor2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace dft2d {

std::unique_ptr<Backend> make_backend_cuda(const Fdtd2dOperator&, int, int, std::array<int, 2>,
                                           std::array<int, 2>) {
  fail("DftMonitor2d: the engine keeps its fields on a GPU but VoxelEM was built without CUDA");
}

}  // namespace dft2d
}  // namespace vem
