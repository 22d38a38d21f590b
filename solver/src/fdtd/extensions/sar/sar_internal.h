// Between sar.cpp (OpenMP, host side) and sar_cuda.cu (the GPU averaging); see sar.h.
#pragma once

#include <cstddef>
#include <vector>

#include "vem/fdtd/extensions/sar.h"

namespace vem::sar_detail {

// The whole averaging on the GPU for every mass: summed-volume tables built on the device,
// cube growth, assignment, counts and peak. `in` is checked, the voxels cubic; outs[q] gets
// target_mass_kg = masses[q] and every other field. Returns the stage times.
SarCudaStages average_cuda(const SarInput& in, const std::vector<double>& masses, std::vector<AveragedSar>& outs);

// dst[0, bytes) = src[0, bytes) on up to `threads` OpenMP threads (the host side of the staged
// copies; the .cu is not compiled with OpenMP).
void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads);

// Fault in fresh storage [p, p + bytes) (zeros) on up to `threads` OpenMP threads, with
// transparent huge pages requested for it (Linux): what a zero-filling std::vector::resize would
// otherwise do page by page on one thread (the largest host cost of the GPU averaging).
void prefault(void* p, std::size_t bytes, int threads);

}  // namespace vem::sar_detail
