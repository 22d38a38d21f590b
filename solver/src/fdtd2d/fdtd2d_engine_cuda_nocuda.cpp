// Stand-in for fdtd2d_engine_cuda.cu when the library is built without CUDA.
#include <memory>

#include "vem/core/error.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine_cuda(const Fdtd2dOperator& op, int device,
                                                       const Fdtd2dTuning& tuning) {
  (void)op;
  (void)device;
  (void)tuning;
  fail("the 2D CUDA engine is not available: VoxelEM was built without CUDA");
}

}  // namespace vem
