// CUDA backend of the 2D TF/SF plane wave: NOT IMPLEMENTED YET (issue 14, open item). This
// placeholder keeps the CUDA build linking; a Tfsf2dSource on the CUDA engine throws.
#include "fdtd2d/extensions/tfsf2d/tfsf2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace tfsf2d {

std::unique_ptr<Backend> make_backend_cuda(const Targets&, const Targets&, std::size_t) {
  fail("Tfsf2dSource: the CUDA backend of the 2D TF/SF source is not implemented yet; use the CPU engine");
}

}  // namespace tfsf2d
}  // namespace vem
