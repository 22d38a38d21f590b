// CUDA accumulation of the running DFT monitors (dft_monitor.h); the CPU twin is in
// common/dft_monitor.cpp. One thread per box sample loops over the frequencies; the per-step
// weights dt exp(-j w t) travel as kernel parameters.
#include <cuda_runtime.h>

#include <complex>

#include "common/engine_common.h"
#include "cuda/cuda_check.h"
#include "vem/dft_monitor.h"

namespace vem {

namespace {

constexpr int kMaxW = 64;
struct DftWeights { float re[kMaxW], im[kMaxW]; };

__global__ void dft_accumulate(const float* __restrict__ F, float2* __restrict__ acc, DftWeights w,
                               int nf, long long nbox, int d0, int d1, int d2, long long base,
                               long long sy, long long sz) {
  const int ii = blockIdx.x * blockDim.x + threadIdx.x;
  const int jj = blockIdx.y * blockDim.y + threadIdx.y;
  const int kk = blockIdx.z;
  if (ii >= d0 || jj >= d1 || kk >= d2) return;
  const float v = F[base + ii + jj * sy + kk * sz];
  if (v == 0.0f) return;
  const long long b = ii + (long long)d0 * (jj + (long long)d1 * kk);
  for (int f = 0; f < nf; ++f) {
    float2 a = acc[f * nbox + b];
    a.x += v * w.re[f];
    a.y += v * w.im[f];
    acc[f * nbox + b] = a;
  }
}

class DftCuda final : public DftMonitor::Backend {
 public:
  DftCuda(const FdtdOperator& op, int nf, int nc, std::array<int, 3> lo, std::array<int, 3> dims)
      : op_(op), nf_(nf), lo_(lo), dims_(dims) {
    nbox_ = std::size_t(dims[0]) * dims[1] * dims[2];
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
  ~DftCuda() override { cudaFree(acc_); }
  void accumulate(FdtdEngine& eng, int slot, Component c, const float* wr, const float* wi) override {
    DftWeights w;
    for (int f = 0; f < nf_; ++f) { w.re[f] = wr[f]; w.im[f] = wi[f]; }
    const FieldLayout& L = op_.layout();
    const dim3 block(32, 4, 1);
    const dim3 grid((dims_[0] + 31) / 32, (dims_[1] + 3) / 4, dims_[2]);
    dft_accumulate<<<grid, block>>>(eng.raw_field(c), acc_ + std::size_t(slot) * nf_ * nbox_, w, nf_,
                                    (long long)nbox_, dims_[0], dims_[1], dims_[2],
                                    (long long)L.at(lo_[0], lo_[1], lo_[2]), (long long)L.sy,
                                    (long long)L.sz);
    VEM_CUDA_CHECK_LAUNCH("dft_accumulate");
  }
  std::vector<std::complex<float>> read(int slot, int f) const override {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    std::vector<std::complex<float>> out(nbox_);
    VEM_CUDA_CHECK(cudaMemcpy(out.data(), acc_ + (std::size_t(slot) * nf_ + f) * nbox_,
                              nbox_ * sizeof(float2), cudaMemcpyDeviceToHost));
    return out;
  }

 private:
  const FdtdOperator& op_;
  int nf_;
  std::array<int, 3> lo_, dims_;
  std::size_t nbox_ = 0;
  int device_ = 0;
  float2* acc_ = nullptr;
};

}  // namespace

std::unique_ptr<DftMonitor::Backend> make_dft_backend_cuda(const FdtdOperator& op, int nfreq, int ncomp,
                                                           std::array<int, 3> lo, std::array<int, 3> dims) {
  return std::make_unique<DftCuda>(op, nfreq, ncomp, lo, dims);
}

}  // namespace vem
