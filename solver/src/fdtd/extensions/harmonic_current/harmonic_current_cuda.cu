// CUDA update of the harmonic current source (harmonic_current.h); the CPU twin is in
// harmonic_current.cpp. One thread per layout entry and component, float2 amplitudes.
#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "fdtd/cuda/kernel_common.cuh"
#include "vem/fdtd/extensions/harmonic_current.h"

namespace vem {

namespace {

// T: the engine's field storage element; the difference is rounded to it (kernel_common.cuh).
template <class T>
__global__ void harmonic_current_apply(T* __restrict__ ex, T* __restrict__ ey,
                                       T* __restrict__ ez, const float2* __restrict__ sx,
                                       const float2* __restrict__ sy, const float2* __restrict__ sz,
                                       long long n, float cr, float ci) {
  const long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (o >= n) return;
  const float2 a = sx[o], b = sy[o], c = sz[o];
  using cuda_kernels::ld;
  using cuda_kernels::st;
  st(ex + o, ld(ex + o) - (a.x * cr - a.y * ci));
  st(ey + o, ld(ey + o) - (b.x * cr - b.y * ci));
  st(ez + o, ld(ez + o) - (c.x * cr - c.y * ci));
}

class HarmonicCurrentCuda final : public HarmonicCurrentSource::Backend {
 public:
  explicit HarmonicCurrentCuda(std::size_t n) {
    n_ = (long long)(n / 2);
    for (int c = 0; c < 3; ++c) {
      VEM_CUDA_CHECK(cudaMalloc(&s_[c], n * sizeof(float)));
      VEM_CUDA_CHECK(cudaMemset(s_[c], 0, n * sizeof(float)));
    }
  }
  float* amplitudes(int c) override { return reinterpret_cast<float*>(s_[c]); }
  ~HarmonicCurrentCuda() override {
    for (auto* p : s_) cudaFree(p);
  }
  void apply(FdtdEngine& eng, float cr, float ci) override {
    const int threads = 256;
    const long long blocks = (n_ + threads - 1) / threads;
    cuda_kernels::with_storage(eng.raw_field_element(), [&](auto t) {
      using T = decltype(t);
      harmonic_current_apply<<<(unsigned)blocks, threads>>>(
          static_cast<T*>(eng.raw_field_storage(Component::Ex)), static_cast<T*>(eng.raw_field_storage(Component::Ey)),
          static_cast<T*>(eng.raw_field_storage(Component::Ez)), s_[0], s_[1], s_[2], n_, cr, ci);
    });
    VEM_CUDA_CHECK_LAUNCH("harmonic_current_apply");
  }

 private:
  float2* s_[3] = {nullptr, nullptr, nullptr};
  long long n_ = 0;
};

}  // namespace

std::unique_ptr<HarmonicCurrentSource::Backend> make_harmonic_current_backend_cuda(std::size_t n) {
  return std::make_unique<HarmonicCurrentCuda>(n);
}

}  // namespace vem
