// CUDA corrections of the TFSF plane-wave source (tfsf.h); the CPU twin is in tfsf.cpp.
// One thread per corrected sample sums its terms (CSR, no atomics: same order as the CPU). The
// 1D auxiliary array (host-stepped, a few hundred floats) is uploaded before each launch.
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.h"
#include "fdtd/cuda/kernel_common.cuh"
#include "vem/fdtd/extensions/tfsf.h"

namespace vem {

namespace {

// T: the engine's field storage element; the corrected value is rounded to it (kernel_common.cuh).
template <class T>
__global__ void tfsf_correct(cuda_kernels::FieldsOf<T> F, int n, const int* __restrict__ comp,
                             const long long* __restrict__ offset, const int* __restrict__ begin,
                             const TfsfSource::Term* __restrict__ terms, const float* __restrict__ in) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= n) return;
  float sum = 0.0f;
  for (int r = begin[q]; r < begin[q + 1]; ++r) {
    const TfsfSource::Term m = terms[r];
    const float v = m.w[0] * in[m.base] + m.w[1] * in[m.base + 1] + m.w[2] * in[m.base + 2] +
                    m.w[3] * in[m.base + 3];
    sum += m.coef * v;
  }
  T* p = F.f[comp[q]] + offset[q];
  cuda_kernels::st(p, cuda_kernels::ld(p) + sum);
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* p = nullptr;
  if (v.empty()) return p;
  VEM_CUDA_CHECK(cudaMalloc(&p, v.size() * sizeof(T)));
  VEM_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

class TfsfCuda final : public TfsfSource::Backend {
 public:
  TfsfCuda(const TfsfSource::Targets& te, const TfsfSource::Targets& th, std::size_t n1d) {
    const TfsfSource::Targets* t[2] = {&th, &te};
    for (int e = 0; e < 2; ++e) {
      L_[e].n = int(t[e]->comp.size());
      L_[e].comp = upload(t[e]->comp);
      std::vector<long long> off(t[e]->offset.begin(), t[e]->offset.end());
      L_[e].offset = upload(off);
      L_[e].begin = upload(t[e]->begin);
      L_[e].terms = upload(t[e]->terms);
    }
    n1d_ = n1d;
    // A ring of kRing staging slots (pinned host -> device, asynchronous on the default stream),
    // so uploading the 1D field does not wait for the queued 3D kernels: the host may run up to
    // kRing half steps ahead; a slot is reused only after its copy has completed (its event).
    VEM_CUDA_CHECK(cudaMalloc(&in_, kRing * n1d * sizeof(float)));
    VEM_CUDA_CHECK(cudaMallocHost(&pinned_, kRing * n1d * sizeof(float)));
    for (auto& e : done_) VEM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~TfsfCuda() override {
    for (auto& l : L_) { cudaFree(l.comp); cudaFree(l.offset); cudaFree(l.begin); cudaFree(l.terms); }
    for (auto& e : done_) cudaEventDestroy(e);
    cudaFree(in_);
    cudaFreeHost(pinned_);
  }
  void apply(FdtdEngine& eng, bool electric, const std::vector<float>& inc) override {
    const List& l = L_[electric ? 1 : 0];
    if (l.n == 0) return;
    const int slot = next_;
    next_ = (next_ + 1) % kRing;
    if (used_[slot]) VEM_CUDA_CHECK(cudaEventSynchronize(done_[slot]));  // its last copy is done
    float* host = pinned_ + std::size_t(slot) * n1d_;
    float* dev = in_ + std::size_t(slot) * n1d_;
    std::copy(inc.begin(), inc.begin() + n1d_, host);
    VEM_CUDA_CHECK(cudaMemcpyAsync(dev, host, n1d_ * sizeof(float), cudaMemcpyHostToDevice, 0));
    VEM_CUDA_CHECK(cudaEventRecord(done_[slot], 0));
    used_[slot] = true;
    cuda_kernels::with_storage(eng.raw_field_element(), [&](auto t) {
      using T = decltype(t);
      cuda_kernels::FieldsOf<T> F;
      for (int c = 0; c < 6; ++c) F.f[c] = static_cast<T*>(eng.raw_field_storage(Component(c)));
      tfsf_correct<<<(l.n + 127) / 128, 128>>>(F, l.n, l.comp, l.offset, l.begin, l.terms, dev);
    });
    VEM_CUDA_CHECK_LAUNCH(electric ? "tfsf_correct (E)" : "tfsf_correct (H)");
  }

 private:
  struct List { int n = 0; int* comp = nullptr; long long* offset = nullptr; int* begin = nullptr; TfsfSource::Term* terms = nullptr; };
  List L_[2];  // [0] H targets, [1] E targets
  static constexpr int kRing = 64;
  std::size_t n1d_ = 0;
  float* in_ = nullptr;       // kRing device slots
  float* pinned_ = nullptr;   // kRing pinned host slots
  cudaEvent_t done_[kRing] = {};
  bool used_[kRing] = {};
  int next_ = 0;
};

}  // namespace

std::unique_ptr<TfsfSource::Backend> make_tfsf_backend_cuda(const TfsfSource::Targets& te,
                                                            const TfsfSource::Targets& th,
                                                            std::size_t n1d) {
  return std::make_unique<TfsfCuda>(te, th, n1d);
}

}  // namespace vem
