// CUDA backend of the 2D DFT monitor (dft_monitor2d_backend.h); the CPU twin is Dft2dCpu in
// dft_monitor2d.cpp. The accumulators S[slot][f][sample] (float2) live on the device:
//  - accumulate: one thread per box sample loops over the frequencies; the nf per-step weights
//    dt exp(-j w t) travel in the kernel's parameter block (constant memory, at most kMaxW);
//    same float arithmetic as the CPU (a += v w, -fmad=false), zero samples skipped as there;
//  - window: the steady-state sums are reduced on the device (no host copy of the accumulators):
//    a first kernel writes per-block partial sums (double) for every (slot, frequency) chunk, a
//    second one adds each chunk's partials in a fixed order (deterministic), and the host reads
//    3 doubles per chunk and adds them per frequency in slot order, as the CPU does;
//  - read / read_phasor: one box copy to the host.
// Every CUDA call and launch is checked (cuda_check.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>

#include "core/cuda_check.h"
#include "fdtd2d/extensions/dft_monitor2d/dft_monitor2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace dft2d {

namespace {

constexpr int kMaxW = 64;  // DftMonitor2d allows at most 64 frequencies per monitor
struct Weights { float re[kMaxW], im[kMaxW]; };

constexpr int kWindowThreads = 256;
constexpr int kMaxWindowBlocks = 128;  // per chunk

__global__ void dft2d_accumulate(const float* __restrict__ F, float2* __restrict__ acc, Weights w, int nf,
                                 long long nbox, int d0, int d1, long long base, long long pitch) {
  const int ii = blockIdx.x * blockDim.x + threadIdx.x;
  const int jj = blockIdx.y * blockDim.y + threadIdx.y;
  if (ii >= d0 || jj >= d1) return;
  const float v = F[base + ii + jj * pitch];
  if (v == 0.0f) return;
  const long long b = ii + (long long)d0 * jj;
  for (int f = 0; f < nf; ++f) {
    float2 a = acc[f * nbox + b];
    a.x += v * w.re[f];
    a.y += v * w.im[f];
    acc[f * nbox + b] = a;
  }
}

// Chunk q = blockIdx.y (slot-major, then frequency) of n samples: P = scale (S - S_prev), partial
// sums of |P - P_old|^2, |P|^2, |S|^2 per block into part[(q * gridDim.x + block) * 3 + k];
// then P_old = P, S_prev = S. Arithmetic as in Dft2dCpu::window.
__global__ void __launch_bounds__(kWindowThreads)
dft2d_window(const float2* __restrict__ acc, float2* __restrict__ s_prev, float2* __restrict__ p, long long n,
             double scale, double* __restrict__ part) {
  const long long o = (long long)blockIdx.y * n;
  double num = 0, den = 0, s2 = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const float2 s = acc[o + i], sp = s_prev[o + i], po = p[o + i];
    const double sr = s.x, si = s.y;
    const float pr = float(scale * (sr - double(sp.x)));
    const float pi = float(scale * (si - double(sp.y)));
    const double dr = double(pr) - double(po.x), di = double(pi) - double(po.y);
    num += dr * dr + di * di;
    den += double(pr) * pr + double(pi) * pi;
    s2 += sr * sr + si * si;
    p[o + i] = make_float2(pr, pi);
    s_prev[o + i] = s;
  }
  for (int off = 16; off > 0; off >>= 1) {
    num += __shfl_down_sync(0xffffffffu, num, off);
    den += __shfl_down_sync(0xffffffffu, den, off);
    s2 += __shfl_down_sync(0xffffffffu, s2, off);
  }
  __shared__ double sh[3][kWindowThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) { sh[0][warp] = num; sh[1][warp] = den; sh[2][warp] = s2; }
  __syncthreads();
  if (threadIdx.x < 3) {
    double a = 0;
    for (int w = 0; w < int(blockDim.x >> 5); ++w) a += sh[threadIdx.x][w];
    part[((long long)blockIdx.y * gridDim.x + blockIdx.x) * 3 + threadIdx.x] = a;
  }
}

// One thread per (chunk, k): the chunk's partials in block order.
__global__ void dft2d_window_sum(const double* __restrict__ part, int blocks, int chunks, double* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= 3 * chunks) return;
  const int q = t / 3, k = t % 3;
  double a = 0;
  for (int b = 0; b < blocks; ++b) a += part[((long long)q * blocks + b) * 3 + k];
  out[t] = a;
}

class Dft2dCuda final : public Backend {
 public:
  Dft2dCuda(const Fdtd2dOperator& op, int nf, int nc, std::array<int, 2> lo, std::array<int, 2> dims)
      : op_(op), nf_(nf), nc_(nc), lo_(lo), dims_(dims), nbox_(std::size_t(dims[0]) * dims[1]) {
    if (nf < 1 || nf > kMaxW) fail("DftMonitor2d: ", nf, " frequencies: the CUDA backend takes 1 to ", kMaxW);
    if (nc < 1 || nc > 3) fail("DftMonitor2d: ", nc, " components: 1 to 3 expected");
    VEM_CUDA_CHECK(cudaGetDevice(&device_));
    const std::size_t bytes = std::size_t(nc) * nf * nbox_ * sizeof(float2);
    check_free(bytes, "the accumulators");
    if (bytes) {
      VEM_CUDA_CHECK(cudaMalloc(&acc_, bytes));
      VEM_CUDA_CHECK(cudaMemset(acc_, 0, bytes));
    }
  }
  ~Dft2dCuda() override {
    cudaSetDevice(device_);
    cudaFree(acc_);
    cudaFree(s_prev_);
    cudaFree(p_);
    cudaFree(part_);
    cudaFree(sums_);
  }

  void accumulate(Fdtd2dEngine& eng, int slot, Component c, const float* wr, const float* wi) override {
    if (slot < 0 || slot >= nc_) fail("DftMonitor2d: internal error, slot ", slot, " of ", nc_);
    if (nbox_ == 0) return;
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    Weights w;
    for (int f = 0; f < nf_; ++f) { w.re[f] = wr[f]; w.im[f] = wi[f]; }
    for (int f = nf_; f < kMaxW; ++f) { w.re[f] = 0.0f; w.im[f] = 0.0f; }
    const FieldLayout2D& L = op_.layout();
    const dim3 block(32, 8);
    const dim3 grid(unsigned((dims_[0] + 31) / 32), unsigned((dims_[1] + 7) / 8));
    dft2d_accumulate<<<grid, block>>>(eng.raw_field(c), acc_ + std::size_t(slot) * nf_ * nbox_, w, nf_,
                                      (long long)nbox_, dims_[0], dims_[1], (long long)L.at(lo_[0], lo_[1]),
                                      (long long)L.pitch);
    VEM_CUDA_CHECK_LAUNCH("dft2d_accumulate");
  }

  std::vector<std::complex<float>> read(int slot, int f) const override { return copy_out(acc_, slot, f); }
  std::vector<std::complex<float>> read_phasor(int slot, int f) const override { return copy_out(p_, slot, f); }

  void window(bool first, double scale, std::vector<double>& out) override {
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    const std::size_t n = std::size_t(nc_) * nf_ * nbox_;
    const int chunks = nc_ * nf_;
    if (n == 0) return;
    if (!s_prev_) {
      const std::size_t bytes = 2 * n * sizeof(float2);
      check_free(bytes, "the steady-state check's two more copies of the accumulators");
      VEM_CUDA_CHECK(cudaMalloc(&s_prev_, n * sizeof(float2)));
      VEM_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(float2)));
      blocks_ = int(std::min<std::size_t>((nbox_ + kWindowThreads - 1) / kWindowThreads, kMaxWindowBlocks));
      VEM_CUDA_CHECK(cudaMalloc(&part_, std::size_t(chunks) * blocks_ * 3 * sizeof(double)));
      VEM_CUDA_CHECK(cudaMalloc(&sums_, std::size_t(chunks) * 3 * sizeof(double)));
    }
    if (first) {
      VEM_CUDA_CHECK(cudaMemcpy(s_prev_, acc_, n * sizeof(float2), cudaMemcpyDeviceToDevice));
      VEM_CUDA_CHECK(cudaMemset(p_, 0, n * sizeof(float2)));
      return;
    }
    if (out.size() < std::size_t(3 * nf_))
      fail("DftMonitor2d: internal error, window sums of ", out.size(), " entries, ", 3 * nf_, " expected");
    dft2d_window<<<dim3(unsigned(blocks_), unsigned(chunks)), kWindowThreads>>>(acc_, s_prev_, p_,
                                                                              (long long)nbox_, scale, part_);
    VEM_CUDA_CHECK_LAUNCH("dft2d_window");
    dft2d_window_sum<<<(3 * chunks + 127) / 128, 128>>>(part_, blocks_, chunks, sums_);
    VEM_CUDA_CHECK_LAUNCH("dft2d_window_sum");
    std::vector<double> h(std::size_t(chunks) * 3);
    VEM_CUDA_CHECK(cudaMemcpy(h.data(), sums_, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    for (int q = 0; q < chunks; ++q) {  // slot-major: the CPU's order
      const int f = q % nf_;
      out[3 * f] += h[3 * q];
      out[3 * f + 1] += h[3 * q + 1];
      out[3 * f + 2] += h[3 * q + 2];
    }
  }

 private:
  void check_free(std::size_t bytes, const char* what) const {
    std::size_t free_b = 0, total_b = 0;
    VEM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > free_b)
      fail("DftMonitor2d: ", what, " (", nc_, " components x ", nf_, " frequencies x ", nbox_, " samples) need ",
           bytes, " bytes of GPU memory; ", free_b, " bytes are free");
  }
  std::vector<std::complex<float>> copy_out(const float2* v, int slot, int f) const {
    if (slot < 0 || slot >= nc_ || f < 0 || f >= nf_)
      fail("DftMonitor2d: internal error, slot ", slot, " / frequency ", f, " out of range");
    std::vector<std::complex<float>> out(nbox_);
    if (!v || nbox_ == 0) return out;  // no window yet: zeros, as the CPU backend
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    static_assert(sizeof(std::complex<float>) == sizeof(float2), "complex<float> and float2 differ");
    VEM_CUDA_CHECK(cudaMemcpy(out.data(), v + (std::size_t(slot) * nf_ + f) * nbox_, nbox_ * sizeof(float2),
                              cudaMemcpyDeviceToHost));
    return out;
  }

  const Fdtd2dOperator& op_;
  int nf_, nc_;
  std::array<int, 2> lo_, dims_;
  std::size_t nbox_;
  int device_ = 0;
  int blocks_ = 1;
  float2* acc_ = nullptr;     // [slot][f][sample]
  float2* s_prev_ = nullptr;  // accumulators at the previous check
  float2* p_ = nullptr;       // phasors of the last window
  double* part_ = nullptr;    // [chunk][block][3]
  double* sums_ = nullptr;    // [chunk][3]
};

}  // namespace

std::unique_ptr<Backend> make_backend_cuda(const Fdtd2dOperator& op, int nf, int nc, std::array<int, 2> lo,
                                           std::array<int, 2> dims) {
  return std::make_unique<Dft2dCuda>(op, nf, nc, lo, dims);
}

}  // namespace dft2d
}  // namespace vem
