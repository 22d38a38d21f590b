// CUDA update of the subpixel full-tensor extension (subpixel_tensor.h); the CPU twin is in
// subpixel_tensor.cpp (the same float operations in the same order; -fmad=false). One thread per
// listed sample; the two phases of the after_e hook are two launches (every D before any E).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/cuda_check.h"
#include "vem/fdtd/extensions/subpixel_tensor.h"

namespace vem {

namespace {

struct TensorFields {
  float* e[3];
};

// The component's array without a dynamically indexed parameter array (no local-memory copy).
__device__ __forceinline__ float* field_of(const TensorFields& f, unsigned char c) {
  return c == 0 ? f.e[0] : (c == 1 ? f.e[1] : f.e[2]);
}

__global__ void tensor_save(TensorFields f, const unsigned char* __restrict__ comp, const long long* __restrict__ off,
                            float* __restrict__ old, int n) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  old[s] = field_of(f, comp[s])[off[s]];
}

__global__ void tensor_init(TensorFields f, const unsigned char* __restrict__ comp, const long long* __restrict__ off,
                            const float* __restrict__ eps, float* __restrict__ d, int n) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  d[s] = eps[s] * field_of(f, comp[s])[off[s]];
}

__global__ void tensor_advance_d(TensorFields f, const unsigned char* __restrict__ comp,
                                 const long long* __restrict__ off, const float* __restrict__ eps,
                                 const float* __restrict__ old, float* __restrict__ d, int n) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const float inc = field_of(f, comp[s])[off[s]] - old[s];
  d[s] = d[s] + inc * eps[s];
}

__global__ void tensor_set_e(TensorFields f, const unsigned char* __restrict__ comp, const long long* __restrict__ off,
                             const float* __restrict__ inv, const int* __restrict__ begin,
                             const int* __restrict__ nb, const float* __restrict__ w, const float* __restrict__ d,
                             int n) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  float v = inv[s] * d[s];
  for (int p = begin[s]; p < begin[s + 1]; ++p) v = v + w[p] * d[nb[p]];
  field_of(f, comp[s])[off[s]] = v;
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* p = nullptr;
  const std::size_t bytes = std::max<std::size_t>(1, v.size()) * sizeof(T);
  VEM_CUDA_CHECK(cudaMalloc(&p, bytes));
  if (!v.empty()) VEM_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

class SubpixelTensorCuda final : public SubpixelTensorExtension::Backend {
 public:
  explicit SubpixelTensorCuda(const TensorSampleList& l) : n_(int(l.size())) {
    static_assert(sizeof(long long) == sizeof(std::int64_t), "offsets");
    comp_ = upload(l.component);
    off_ = reinterpret_cast<long long*>(upload(l.offset));
    eps_ = upload(l.eps);
    inv_ = upload(l.inv);
    begin_ = upload(l.begin);
    nb_ = upload(l.neighbour);
    w_ = upload(l.weight);
    const std::vector<float> zero(l.size(), 0.0f);
    d_ = upload(zero);
    old_ = upload(zero);
  }
  ~SubpixelTensorCuda() override {
    cudaFree(comp_);
    cudaFree(off_);
    cudaFree(eps_);
    cudaFree(inv_);
    cudaFree(begin_);
    cudaFree(nb_);
    cudaFree(w_);
    cudaFree(d_);
    cudaFree(old_);
  }
  void init(FdtdEngine& eng) override {
    if (n_ == 0) return;
    tensor_init<<<blocks(), kThreads>>>(fields(eng), comp_, off_, eps_, d_, n_);
    VEM_CUDA_CHECK_LAUNCH("tensor_init");
  }
  void save(FdtdEngine& eng) override {
    if (n_ == 0) return;
    tensor_save<<<blocks(), kThreads>>>(fields(eng), comp_, off_, old_, n_);
    VEM_CUDA_CHECK_LAUNCH("tensor_save");
  }
  void apply(FdtdEngine& eng) override {
    if (n_ == 0) return;
    const TensorFields f = fields(eng);
    tensor_advance_d<<<blocks(), kThreads>>>(f, comp_, off_, eps_, old_, d_, n_);
    VEM_CUDA_CHECK_LAUNCH("tensor_advance_d");
    tensor_set_e<<<blocks(), kThreads>>>(f, comp_, off_, inv_, begin_, nb_, w_, d_, n_);
    VEM_CUDA_CHECK_LAUNCH("tensor_set_e");
  }

 private:
  static constexpr int kThreads = 256;
  unsigned blocks() const { return unsigned((n_ + kThreads - 1) / kThreads); }
  static TensorFields fields(FdtdEngine& eng) {
    return {{eng.raw_field(Component::Ex), eng.raw_field(Component::Ey), eng.raw_field(Component::Ez)}};
  }
  int n_;
  unsigned char* comp_ = nullptr;
  long long* off_ = nullptr;
  float *eps_ = nullptr, *inv_ = nullptr, *w_ = nullptr, *d_ = nullptr, *old_ = nullptr;
  int *begin_ = nullptr, *nb_ = nullptr;
};

}  // namespace

std::unique_ptr<SubpixelTensorExtension::Backend> make_subpixel_tensor_backend_cuda(const TensorSampleList& list) {
  return std::make_unique<SubpixelTensorCuda>(list);
}

}  // namespace vem
