// CUDA backend of the 2D DFT monitor: NOT IMPLEMENTED YET (issue 14, open item). This placeholder
// keeps the CUDA build linking; a DftMonitor2d on the CUDA engine throws.
#include "fdtd2d/extensions/dft_monitor2d/dft_monitor2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace dft2d {

std::unique_ptr<Backend> make_backend_cuda(const Fdtd2dOperator&, int, int, std::array<int, 2>,
                                           std::array<int, 2>) {
  fail("DftMonitor2d: the CUDA backend of the 2D DFT monitor is not implemented yet; use the CPU engine");
}

}  // namespace dft2d
}  // namespace vem
