// Internal: the CUDA kernels of the time-domain preconditioner (fdfd_time_domain_cuda.cu; only
// with VEM_WITH_CUDA). Vectors are complex128 (FDFD, device), amplitudes float2 (FDTD layout).
#pragma once

#include <complex>
#include <vector>

namespace vem {
namespace fdfd_td {

struct DeviceMap {
  int nx, ny, nz;                 // cells
  long long sy, sz, origin;       // FDTD field layout (field_layout.h)
};

void* upload_factors(const std::vector<std::complex<float>>& g);  // 3 N complex64 factors
void free_factors(void* p);
// s_a[o(i,j,k)] = g[q] v[q] for every FDFD entry q = (a, i, j, k).
void scatter(const DeviceMap& m, const void* g, const void* v, float* const s[3]);
// z[q] = v[q] on the PEC wall rows, else the phasor p_a at (i,j,k) of the compact layout;
// synchronizes the device.
void gather(const DeviceMap& m, const std::complex<float>* const p[3], const void* v, void* z);

}  // namespace fdfd_td
}  // namespace vem
