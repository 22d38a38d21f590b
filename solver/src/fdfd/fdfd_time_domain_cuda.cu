// Device side of the FDFD time-domain preconditioner (fdfd_time_domain.h): the residual in the
// FDFD layout becomes the source amplitudes in the FDTD field layout, and the steady-state
// phasors become the preconditioned vector, without leaving the GPU; the CUDA twins of the host
// loops in fdfd_time_domain.cpp (layouts in fdfd_time_domain_device.h).
#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "fdfd/fdfd_time_domain_device.h"

namespace vem {
namespace fdfd_td {

namespace {

__global__ void scatter_kernel(LayoutMap m, const float2* __restrict__ g, const double2* __restrict__ v,
                               float2* __restrict__ s0, float2* __restrict__ s1, float2* __restrict__ s2) {
  const long long N = (long long)m.nx * m.ny * m.nz;
  const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (q >= 3 * N) return;
  const int a = int(q / N);
  const long long r = q - a * N;
  const int i = int(r % m.nx), j = int((r / m.nx) % m.ny), k = int(r / ((long long)m.nx * m.ny));
  const float2 f = g[q];
  const double2 x = v[q];
  const float xr = float(x.x), xi = float(x.y);
  float2* s = a == 0 ? s0 : (a == 1 ? s1 : s2);
  s[m.origin + i + j * m.sy + k * m.sz] = make_float2(f.x * xr - f.y * xi, f.x * xi + f.y * xr);
}

__global__ void gather_kernel(LayoutMap m, const float2* __restrict__ p0, const float2* __restrict__ p1,
                              const float2* __restrict__ p2, const double2* __restrict__ v,
                              double2* __restrict__ z) {
  const long long N = (long long)m.nx * m.ny * m.nz;
  const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (q >= 3 * N) return;
  const int a = int(q / N);
  const long long r = q - a * N;
  const int idx[3] = {int(r % m.nx), int((r / m.nx) % m.ny), int(r / ((long long)m.nx * m.ny))};
  if (idx[(a + 1) % 3] == 0 || idx[(a + 2) % 3] == 0) {  // PEC wall sample: identity row
    z[q] = v[q];
    return;
  }
  const float2* p = a == 0 ? p0 : (a == 1 ? p1 : p2);
  const float2 e = p[idx[0] + (long long)(m.nx + 1) * (idx[1] + (long long)(m.ny + 1) * idx[2])];
  z[q] = make_double2(double(e.x), double(e.y));
}

}  // namespace

void* upload(const void* host, std::size_t bytes) {
  void* p = nullptr;
  VEM_CUDA_CHECK(cudaMalloc(&p, bytes));
  VEM_CUDA_CHECK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
  return p;
}

void download(const void* device, void* host, std::size_t bytes) {
  VEM_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

void release(void* p) { cudaFree(p); }

void scatter(const LayoutMap& m, const void* g, const void* v, float* const s[3]) {
  const long long n = 3LL * m.nx * m.ny * m.nz;
  scatter_kernel<<<unsigned((n + 255) / 256), 256>>>(
      m, static_cast<const float2*>(g), static_cast<const double2*>(v), reinterpret_cast<float2*>(s[0]),
      reinterpret_cast<float2*>(s[1]), reinterpret_cast<float2*>(s[2]));
  VEM_CUDA_CHECK_LAUNCH("time-domain preconditioner: scatter");
}

void gather(const LayoutMap& m, const std::complex<float>* const p[3], const void* v, void* z) {
  const long long n = 3LL * m.nx * m.ny * m.nz;
  gather_kernel<<<unsigned((n + 255) / 256), 256>>>(
      m, reinterpret_cast<const float2*>(p[0]), reinterpret_cast<const float2*>(p[1]),
      reinterpret_cast<const float2*>(p[2]), static_cast<const double2*>(v), static_cast<double2*>(z));
  VEM_CUDA_CHECK_LAUNCH("time-domain preconditioner: gather");
  VEM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace fdfd_td
}  // namespace vem
