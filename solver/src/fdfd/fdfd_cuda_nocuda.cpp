// Built instead of fdfd_cuda.cu when VEM_ENABLE_CUDA=OFF.
#include "fdfd/fdfd_backend.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {
namespace fdfd {

BackendResult solve_cuda(const FdfdOperator&, const FdfdSolverOptions&, const HostVectors&,
                         const KrylovParams&) {
  fail("FDFD: the CUDA backend was requested, but VoxelEM was built without CUDA "
       "(VEM_ENABLE_CUDA=OFF)");
}

bool cuda_usable(std::string* why) { return cuda_available(why); }

}  // namespace fdfd
}  // namespace vem
