// Internal: the 2D CUDA engine's factory (fdtd2d_engine_cuda.cu; fdtd2d_engine_cuda_nocuda.cpp
// throws "built without CUDA" when VEM_ENABLE_CUDA=OFF). make_fdtd2d_engine() calls it.
#pragma once

#include <memory>

#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

std::unique_ptr<Fdtd2dEngine> make_fdtd2d_engine_cuda(const Fdtd2dOperator& op, int device,
                                                       const Fdtd2dTuning& tuning);

}  // namespace vem
