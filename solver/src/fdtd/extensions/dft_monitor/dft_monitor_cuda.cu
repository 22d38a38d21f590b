// CUDA accumulation of the running DFT monitors (dft_monitor.h); the CPU twin is in
// dft_monitor.cpp. One thread per box sample loops over the frequencies; the per-step
// weights dt exp(-j w t) travel as kernel parameters.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>

#include "fdtd/engine_common.h"
#include "fdtd/cuda/kernel_common.cuh"
#include "core/cuda_check.h"
#include "vem/fdtd/extensions/dft_monitor.h"

namespace vem {

namespace {

constexpr int kMaxW = 64;
struct DftWeights { float re[kMaxW], im[kMaxW]; };

// T: the engine's field storage element (FdtdEngine::field_storage; kernel_common.cuh).
template <class T>
__global__ void dft_accumulate(const T* __restrict__ F, float2* __restrict__ acc, DftWeights w,
                               int nf, long long nbox, int d0, int d1, int d2, long long base,
                               long long sy, long long sz) {
  const int ii = blockIdx.x * blockDim.x + threadIdx.x;
  const int jj = blockIdx.y * blockDim.y + threadIdx.y;
  const int kk = blockIdx.z;
  if (ii >= d0 || jj >= d1 || kk >= d2) return;
  const float v = cuda_kernels::to_f(F[base + ii + jj * sy + kk * sz]);
  if (v == 0.0f) return;
  const long long b = ii + (long long)d0 * (jj + (long long)d1 * kk);
  for (int f = 0; f < nf; ++f) {
    float2 a = acc[f * nbox + b];
    a.x += v * w.re[f];
    a.y += v * w.im[f];
    acc[f * nbox + b] = a;
  }
}

// Steady-state window over one (slot, frequency) chunk of n samples: P = scale (S - S_prev),
// sums |P - P_old|^2, |P|^2, |S|^2 into out[0..2] (double atomics), then P_old = P, S_prev = S.
__global__ void dft_window(const float2* __restrict__ acc, float2* __restrict__ s_prev, float2* __restrict__ p,
                           long long n, double scale, double* __restrict__ out) {
  double num = 0, den = 0, s2 = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const float2 s = acc[i], sp = s_prev[i], po = p[i];
    const float pr = float(scale * (double(s.x) - double(sp.x)));
    const float pi = float(scale * (double(s.y) - double(sp.y)));
    const double dr = double(pr) - double(po.x), di = double(pi) - double(po.y);
    num += dr * dr + di * di;
    den += double(pr) * pr + double(pi) * pi;
    s2 += double(s.x) * s.x + double(s.y) * s.y;
    p[i] = make_float2(pr, pi);
    s_prev[i] = s;
  }
  for (int off = 16; off > 0; off >>= 1) {
    num += __shfl_down_sync(0xffffffffu, num, off);
    den += __shfl_down_sync(0xffffffffu, den, off);
    s2 += __shfl_down_sync(0xffffffffu, s2, off);
  }
  __shared__ double part[3][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) { part[0][warp] = num; part[1][warp] = den; part[2][warp] = s2; }
  __syncthreads();
  if (threadIdx.x == 0) {
    double a = 0, b = 0, c = 0;
    for (int w = 0; w < int(blockDim.x >> 5); ++w) { a += part[0][w]; b += part[1][w]; c += part[2][w]; }
    atomicAdd(out, a);
    atomicAdd(out + 1, b);
    atomicAdd(out + 2, c);
  }
}

class DftCuda final : public DftMonitor::Backend {
 public:
  DftCuda(const FdtdOperator& op, int nf, int nc, std::array<int, 3> lo, std::array<int, 3> dims)
      : op_(op), nf_(nf), lo_(lo), dims_(dims) {
    nbox_ = std::size_t(dims[0]) * dims[1] * dims[2];
    nc_ = nc;
    VEM_CUDA_CHECK(cudaGetDevice(&device_));
    const std::size_t bytes = std::size_t(nc) * nf * nbox_ * sizeof(float2);
    std::size_t free_b = 0, total_b = 0;
    VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > free_b)
      fail("DFT monitor: ", nc, " components x ", nf, " frequencies x ", nbox_, " samples need ",
           bytes, " bytes of GPU memory; ", free_b, " bytes are free");
    VEM_CUDA_CHECK(cudaMalloc(&acc_, bytes));
    VEM_CUDA_CHECK(cudaMemset(acc_, 0, bytes));
  }
  ~DftCuda() override {
    cudaFree(acc_);
    cudaFree(s_prev_);
    cudaFree(p_);
    cudaFree(sums_);
  }
  void accumulate(FdtdEngine& eng, int slot, Component c, const float* wr, const float* wi) override {
    DftWeights w;
    for (int f = 0; f < nf_; ++f) { w.re[f] = wr[f]; w.im[f] = wi[f]; }
    const FieldLayout& L = op_.layout();
    const dim3 block(32, 4, 1);
    const dim3 grid((dims_[0] + 31) / 32, (dims_[1] + 3) / 4, dims_[2]);
    cuda_kernels::with_storage(eng.raw_field_element(), [&](auto t) {
      using T = decltype(t);
      dft_accumulate<<<grid, block>>>(static_cast<const T*>(eng.raw_field_storage(c)),
                                      acc_ + std::size_t(slot) * nf_ * nbox_, w, nf_, (long long)nbox_, dims_[0],
                                      dims_[1], dims_[2], (long long)L.at(lo_[0], lo_[1], lo_[2]), (long long)L.sy,
                                      (long long)L.sz);
    });
    VEM_CUDA_CHECK_LAUNCH("dft_accumulate");
  }
  std::vector<std::complex<float>> read(int slot, int f) const override { return copy_out(acc_, slot, f); }
  std::vector<std::complex<float>> read_phasor(int slot, int f) const override { return copy_out(p_, slot, f); }
  const std::complex<float>* phasor_data(int slot, int f) const override {
    if (!p_) fail("DFT monitor: no steady-state window on the device yet");
    return reinterpret_cast<const std::complex<float>*>(p_ + (std::size_t(slot) * nf_ + f) * nbox_);
  }
  void window(bool first, double scale, std::vector<double>& out) override {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    const std::size_t n = std::size_t(nc_) * nf_ * nbox_;
    if (!s_prev_) {
      const std::size_t bytes = 2 * n * sizeof(float2);
      std::size_t free_b = 0, total_b = 0;
      VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      if (bytes > free_b)
        fail("DFT monitor: the steady-state check keeps two more copies of the accumulators (", bytes,
             " bytes of GPU memory); ", free_b, " bytes are free");
      VEM_CUDA_CHECK(cudaMalloc(&s_prev_, n * sizeof(float2)));
      VEM_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(float2)));
      VEM_CUDA_CHECK(cudaMalloc(&sums_, 3 * sizeof(double)));
    }
    if (first) {
      VEM_CUDA_CHECK(cudaMemcpy(s_prev_, acc_, n * sizeof(float2), cudaMemcpyDeviceToDevice));
      VEM_CUDA_CHECK(cudaMemset(p_, 0, n * sizeof(float2)));
      return;
    }
    const int threads = 256;
    const long long blocks = std::min<long long>((long long)(nbox_ + threads - 1) / threads, 132LL * 16);
    for (int slot = 0; slot < nc_; ++slot)
      for (int f = 0; f < nf_; ++f) {
        const std::size_t o = (std::size_t(slot) * nf_ + f) * nbox_;
        VEM_CUDA_CHECK(cudaMemset(sums_, 0, 3 * sizeof(double)));
        dft_window<<<unsigned(std::max(1LL, blocks)), threads>>>(acc_ + o, s_prev_ + o, p_ + o,
                                                                 (long long)nbox_, scale, sums_);
        VEM_CUDA_CHECK_LAUNCH("dft_window");
        double h[3];
        VEM_CUDA_CHECK(cudaMemcpy(h, sums_, sizeof(h), cudaMemcpyDeviceToHost));
        out[3 * f] += h[0];
        out[3 * f + 1] += h[1];
        out[3 * f + 2] += h[2];
      }
  }

 private:
  const FdtdOperator& op_;
  int nf_;
  std::array<int, 3> lo_, dims_;
  std::vector<std::complex<float>> copy_out(const float2* v, int slot, int f) const {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    if (!v) fail("DFT monitor: no steady-state window on the device yet");
    std::vector<std::complex<float>> out(nbox_);
    VEM_CUDA_CHECK(cudaMemcpy(out.data(), v + (std::size_t(slot) * nf_ + f) * nbox_, nbox_ * sizeof(float2),
                              cudaMemcpyDeviceToHost));
    return out;
  }
  std::size_t nbox_ = 0;
  int nc_ = 0;
  int device_ = 0;
  float2* acc_ = nullptr;
  float2* s_prev_ = nullptr;  // accumulators at the previous check
  float2* p_ = nullptr;       // phasors of the last window
  double* sums_ = nullptr;
};

}  // namespace

std::unique_ptr<DftMonitor::Backend> make_dft_backend_cuda(const FdtdOperator& op, int nfreq, int ncomp,
                                                           std::array<int, 3> lo, std::array<int, 3> dims) {
  return std::make_unique<DftCuda>(op, nfreq, ncomp, lo, dims);
}

}  // namespace vem
