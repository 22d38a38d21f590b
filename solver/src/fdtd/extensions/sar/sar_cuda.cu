// GPU peak spatial-average SAR (sar.h): one thread per voxel grows its centred cube on the
// summed-volume tables (built on the host, double precision), then rmax unit dilations give each
// invalid voxel the largest averaged SAR of the valid cubes containing it. The CPU twin is in
// sar.cpp (grow_cube); the logic is the same line for line.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "vem/fdtd/extensions/sar.h"

namespace vem {

namespace {

struct Tables {
  const double* mass; const double* power; const double* tissue;
  int nx, ny, nz;
  double d;
};

__device__ double box_sum_d(const double* S, int nx, int ny, int i0, int i1, int j0, int j1, int k0, int k1) {
  const long long sx = nx + 1, sxy = sx * (ny + 1);
#define AT(i, j, k) S[(i) + sx * (j) + sxy * (k)]
  return AT(i1, j1, k1) - AT(i0, j1, k1) - AT(i1, j0, k1) - AT(i1, j1, k0) + AT(i0, j0, k1) +
         AT(i0, j1, k0) + AT(i1, j0, k0) - AT(i0, j0, k0);
#undef AT
}

__global__ void sar_grow(Tables t, const float* __restrict__ density, double m, float* avg,
                         float* side_out, int* cover, unsigned char* status) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.nx || j >= t.ny || k >= t.nz) return;
  const long long q = i + (long long)t.nx * (j + (long long)t.ny * k);
  avg[q] = 0.0f; cover[q] = -1; side_out[q] = 0.0f; status[q] = 0;
  if (!(density[q] >= kMinTissueDensity)) return;
  const int nmax = max(t.nx, max(t.ny, t.nz));
  double Mp = 0, Pp = 0, Ap = 0, Vp = 0;
  for (int n = 0; n <= nmax; ++n) {
    const int i0 = max(0, i - n), i1 = min(t.nx, i + n + 1);
    const int j0 = max(0, j - n), j1 = min(t.ny, j + n + 1);
    const int k0 = max(0, k - n), k1 = min(t.nz, k + n + 1);
    const double M = box_sum_d(t.mass, t.nx, t.ny, i0, i1, j0, j1, k0, k1);
    const double P = box_sum_d(t.power, t.nx, t.ny, i0, i1, j0, j1, k0, k1);
    const double cnt = box_sum_d(t.tissue, t.nx, t.ny, i0, i1, j0, j1, k0, k1);
    const double side = 2.0 * n + 1.0;
    const double V = side * side * side;
    const double A = V - cnt;
    if (M >= m) {
      if (n == 0) {
        avg[q] = float(P / M); side_out[q] = float(t.d * cbrt(m / M)); cover[q] = 0; status[q] = 1;
        return;
      }
      const double f = (m - Mp) / (M - Mp);
      const double Pm = Pp + f * (P - Pp), Vm = Vp + f * (V - Vp), Am = Ap + f * (A - Ap);
      side_out[q] = float((2.0 * n - 1.0 + 2.0 * f) * t.d);
      if (Am <= 0.1 * Vm + 1e-9 * Vm) {
        avg[q] = float(Pm / m); cover[q] = f >= 0.5 ? n : n - 1; status[q] = 1;
      } else {
        status[q] = 3;
      }
      return;
    }
    Mp = M; Pp = P; Ap = A; Vp = V;
  }
  status[q] = 3;
}

// Assignment (sar.h), as on the CPU (sar.cpp largest_containing_average): the largest
// average over the valid cubes containing a voxel is U_0 of U_rmax = V_rmax,
// U_r = max(D(U_{r+1}), V_r), D the 3x3x3 max filter as three 1-D passes, V_r = avg where
// cover == r.
__global__ void sar_seed(long long n, int r, const float* __restrict__ avg, const int* __restrict__ cover,
                         float* __restrict__ u, bool merge) {
  const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (q >= n) return;
  const float v = cover[q] == r ? avg[q] : -1.0f;
  u[q] = merge ? fmaxf(u[q], v) : v;
}

template <int AXIS>
__global__ void sar_max1(int nx, int ny, int nz, const float* __restrict__ in, float* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= nx || j >= ny || k >= nz) return;
  const long long sy = nx, sz = (long long)nx * ny;
  const long long q = i + sy * j + sz * k;
  float m = in[q];
  if (AXIS == 0) {
    if (i > 0) m = fmaxf(m, in[q - 1]);
    if (i + 1 < nx) m = fmaxf(m, in[q + 1]);
  } else if (AXIS == 1) {
    if (j > 0) m = fmaxf(m, in[q - sy]);
    if (j + 1 < ny) m = fmaxf(m, in[q + sy]);
  } else {
    if (k > 0) m = fmaxf(m, in[q - sz]);
    if (k + 1 < nz) m = fmaxf(m, in[q + sz]);
  }
  out[q] = m;
}

__global__ void sar_assign(long long n, const float* __restrict__ avg, const float* __restrict__ best,
                           unsigned char* status, float* sar) {
  const long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (q >= n) return;
  if (status[q] == 1) { sar[q] = avg[q]; return; }
  sar[q] = 0.0f;
  if (status[q] == 3 && best[q] >= 0.0f) { sar[q] = best[q]; status[q] = 2; }
}

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { VEM_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

}  // namespace

void spatial_average_sar_cuda(const SarTables& t, const std::vector<float>& density,
                              double target_mass_kg, AveragedSar& out) {
  const std::size_t ns = t.mass.size(), n = density.size();
  Dev<double> mass(ns), power(ns), tissue(ns);
  Dev<float> dens(n), avg(n), side(n), sar(n);
  Dev<int> cover(n);
  Dev<unsigned char> status(n);
  VEM_CUDA_CHECK(cudaMemcpy(mass.p, t.mass.data(), ns * sizeof(double), cudaMemcpyHostToDevice));
  VEM_CUDA_CHECK(cudaMemcpy(power.p, t.power.data(), ns * sizeof(double), cudaMemcpyHostToDevice));
  VEM_CUDA_CHECK(cudaMemcpy(tissue.p, t.tissue.data(), ns * sizeof(double), cudaMemcpyHostToDevice));
  VEM_CUDA_CHECK(cudaMemcpy(dens.p, density.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const Tables tb{mass.p, power.p, tissue.p, t.nx, t.ny, t.nz, t.d};
  const dim3 block(32, 4, 1), grid((t.nx + 31) / 32, (t.ny + 3) / 4, t.nz);
  sar_grow<<<grid, block>>>(tb, dens.p, target_mass_kg, avg.p, side.p, cover.p, status.p);
  VEM_CUDA_CHECK_LAUNCH("sar_grow");
  std::vector<int> cov(n);
  VEM_CUDA_CHECK(cudaMemcpy(cov.data(), cover.p, n * sizeof(int), cudaMemcpyDeviceToHost));
  int rmax = -1;
  for (int c : cov) rmax = std::max(rmax, c);
  const long long nn = (long long)n;
  const unsigned flat = unsigned((nn + 255) / 256);
  Dev<float> u(n), tmp(n);
  if (rmax >= 0) {
    sar_seed<<<flat, 256>>>(nn, rmax, avg.p, cover.p, u.p, false);
    VEM_CUDA_CHECK_LAUNCH("sar_seed");
    for (int r = rmax - 1; r >= 0; --r) {
      sar_max1<0><<<grid, block>>>(t.nx, t.ny, t.nz, u.p, tmp.p);
      sar_max1<1><<<grid, block>>>(t.nx, t.ny, t.nz, tmp.p, u.p);
      sar_max1<2><<<grid, block>>>(t.nx, t.ny, t.nz, u.p, tmp.p);
      VEM_CUDA_CHECK_LAUNCH("sar_max1");
      std::swap(u.p, tmp.p);
      sar_seed<<<flat, 256>>>(nn, r, avg.p, cover.p, u.p, true);
      VEM_CUDA_CHECK_LAUNCH("sar_seed");
    }
  } else {
    sar_seed<<<flat, 256>>>(nn, -2, avg.p, cover.p, u.p, false);  // no valid cube (cover is never -2): u = -1
    VEM_CUDA_CHECK_LAUNCH("sar_seed");
  }
  sar_assign<<<flat, 256>>>(nn, avg.p, u.p, status.p, sar.p);
  VEM_CUDA_CHECK_LAUNCH("sar_assign");
  VEM_CUDA_CHECK(cudaMemcpy(out.sar.data(), sar.p, n * sizeof(float), cudaMemcpyDeviceToHost));
  VEM_CUDA_CHECK(cudaMemcpy(out.side_m.data(), side.p, n * sizeof(float), cudaMemcpyDeviceToHost));
  VEM_CUDA_CHECK(cudaMemcpy(out.status.data(), status.p, n * sizeof(unsigned char), cudaMemcpyDeviceToHost));
}

}  // namespace vem
