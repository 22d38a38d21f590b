// CUDA backend of the 2D TF/SF plane wave (tfsf2d_backend.h); the CPU twin is Tfsf2dCpu in
// tfsf2d.cpp. The E and H target lists (CSR) are uploaded once. At each apply() the 1D incident
// array (n1d floats, stepped on the host by Tfsf2dSource) is copied to the device and one kernel
// adds the corrections: one thread per target sums its terms in the CPU's order with the CPU's
// float arithmetic (the library compiles CUDA with -fmad=false), so both backends give the same
// corrections bit for bit; each target appears once in a list, so no atomics.
// The upload goes through a ring of pinned staging slots (asynchronous on the default stream, as
// the engine's kernels), so the host does not wait for the queued field updates: it may run up to
// kRing half steps ahead, and a slot is reused only once its last copy has completed (its event).
// Every CUDA call and launch is checked (cuda_check.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "fdtd2d/extensions/tfsf2d/tfsf2d_backend.h"
#include "vem/core/error.h"

namespace vem {
namespace tfsf2d {

namespace {

struct Fields3 { float* f[3]; };

__global__ void tfsf2d_correct(Fields3 F, int n, const int* __restrict__ slot,
                               const long long* __restrict__ offset, const int* __restrict__ begin,
                               const Term* __restrict__ terms, const float* __restrict__ in) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= n) return;
  float sum = 0.0f;
  for (int r = begin[q]; r < begin[q + 1]; ++r) {
    const Term m = terms[r];
    // Same expression and order as tfsf2d.cpp: coef * (((w0 a0 + w1 a1) + w2 a2) + w3 a3).
    sum += m.coef * (m.w[0] * in[m.base] + m.w[1] * in[m.base + 1] + m.w[2] * in[m.base + 2] +
                     m.w[3] * in[m.base + 3]);
  }
  float* p = F.f[slot[q]] + offset[q];
  *p += sum;
}

template <class T>
T* upload(const std::vector<T>& v, const char* what) {
  T* p = nullptr;
  if (v.empty()) return p;
  const cudaError_t e = cudaMalloc(&p, v.size() * sizeof(T));
  if (e != cudaSuccess) {
    cudaGetLastError();
    fail("Tfsf2dSource: CUDA out of memory allocating the ", what, " (", v.size() * sizeof(T), " bytes): ",
         cudaGetErrorString(e));
  }
  VEM_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

class Tfsf2dCuda final : public Backend {
 public:
  Tfsf2dCuda(const Targets& te, const Targets& th, std::size_t n1d) : n1d_(n1d) {
    VEM_CUDA_CHECK(cudaGetDevice(&device_));
    try {
      const Targets* t[2] = {&th, &te};
      for (int e = 0; e < 2; ++e) {
        const Targets& s = *t[e];
        if (s.offset.size() != s.slot.size() || (!s.slot.empty() && s.begin.size() != s.slot.size() + 1))
          fail("Tfsf2dSource: internal error, malformed correction list (", s.slot.size(), " targets, ",
               s.offset.size(), " offsets, ", s.begin.size(), " CSR entries)");
        for (const Term& m : s.terms)
          if (m.base < 0 || std::size_t(m.base) + 3 >= n1d)
            fail("Tfsf2dSource: internal error, term reads 1D sample ", m.base, "..", m.base + 3, " of ", n1d);
        L_[e].n = int(s.slot.size());
        L_[e].slot = upload(s.slot, "TF/SF target list");
        const std::vector<long long> off(s.offset.begin(), s.offset.end());
        L_[e].offset = upload(off, "TF/SF target list");
        L_[e].begin = upload(s.begin, "TF/SF target list");
        L_[e].terms = upload(s.terms, "TF/SF terms");
      }
      if (n1d_ > 0) {
        VEM_CUDA_CHECK(cudaMalloc(&in_, kRing * n1d_ * sizeof(float)));
        VEM_CUDA_CHECK(cudaMallocHost(&pinned_, kRing * n1d_ * sizeof(float)));
      }
      for (auto& ev : done_) VEM_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    } catch (...) {
      release();
      throw;
    }
  }
  ~Tfsf2dCuda() override {
    // Copies still queued read the pinned slots: let them finish before freeing.
    cudaSetDevice(device_);
    for (int s = 0; s < kRing; ++s)
      if (used_[s]) cudaEventSynchronize(done_[s]);
    release();
  }

  void apply(Fdtd2dEngine& eng, bool electric, const std::vector<float>& inc) override {
    const List& l = L_[electric ? 1 : 0];
    if (l.n == 0) return;
    if (inc.size() < n1d_)
      fail("Tfsf2dSource: internal error, 1D incident array of ", inc.size(), " samples, ", n1d_, " expected");
    VEM_CUDA_CHECK(cudaSetDevice(device_));
    const int s = next_;
    next_ = (next_ + 1) % kRing;
    if (used_[s]) VEM_CUDA_CHECK(cudaEventSynchronize(done_[s]));  // the slot's last copy is done
    float* host = pinned_ + std::size_t(s) * n1d_;
    float* dev = in_ + std::size_t(s) * n1d_;
    std::copy(inc.begin(), inc.begin() + n1d_, host);
    VEM_CUDA_CHECK(cudaMemcpyAsync(dev, host, n1d_ * sizeof(float), cudaMemcpyHostToDevice, 0));
    VEM_CUDA_CHECK(cudaEventRecord(done_[s], 0));
    used_[s] = true;
    const auto comps = eng.op().components();
    Fields3 F;
    for (int c = 0; c < 3; ++c) F.f[c] = eng.raw_field(comps[c]);
    tfsf2d_correct<<<(l.n + 127) / 128, 128>>>(F, l.n, l.slot, l.offset, l.begin, l.terms, dev);
    VEM_CUDA_CHECK_LAUNCH(electric ? "tfsf2d_correct (E)" : "tfsf2d_correct (H)");
  }

 private:
  void release() {
    for (auto& l : L_) {
      cudaFree(l.slot); cudaFree(l.offset); cudaFree(l.begin); cudaFree(l.terms);
      l = List{};
    }
    for (auto& ev : done_)
      if (ev) { cudaEventDestroy(ev); ev = nullptr; }
    cudaFree(in_);
    in_ = nullptr;
    if (pinned_) cudaFreeHost(pinned_);
    pinned_ = nullptr;
  }

  struct List {
    int n = 0;
    int* slot = nullptr;
    long long* offset = nullptr;
    int* begin = nullptr;
    Term* terms = nullptr;
  };
  static constexpr int kRing = 64;
  List L_[2];  // [0] H targets, [1] E targets
  std::size_t n1d_ = 0;
  int device_ = 0;
  float* in_ = nullptr;      // kRing device slots of n1d floats
  float* pinned_ = nullptr;  // kRing pinned host slots
  cudaEvent_t done_[kRing] = {};
  bool used_[kRing] = {};
  int next_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_backend_cuda(const Targets& e_targets, const Targets& h_targets, std::size_t n1d) {
  return std::make_unique<Tfsf2dCuda>(e_targets, h_targets, n1d);
}

}  // namespace tfsf2d
}  // namespace vem
