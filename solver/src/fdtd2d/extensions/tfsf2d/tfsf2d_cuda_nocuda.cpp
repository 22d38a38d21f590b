// Stand-in for tfsf2d_cuda.cu when the library is built without CUDA.
#include "fdtd2d/extensions/tfsf2d/tfsf2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace tfsf2d {

std::unique_ptr<Backend> make_backend_cuda(const Targets&, const Targets&, std::size_t) {
  fail("Tfsf2dSource: the engine keeps its fields on a GPU but VoxelEM was built without CUDA");
}

}  // namespace tfsf2d
}  // namespace vem
