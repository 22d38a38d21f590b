// CUDA backend of the FDFD solver. The Krylov iterations (fdfd_krylov.h) run on the host and
// call the operations below on device vectors:
//  - the product with A: the paper's two kernels (H stage writing t, then E stage) or one fused
//    kernel recomputing t; the stencil is fdfd_stencil.h, shared with the CPU backend, with the
//    coefficients from CAS arrays (global memory) or CIS tables (constant memory while they fit
//    kFdfdConstantBytes, global memory otherwise) and 16-bit per-sample indices;
//  - BLAS-1: cuBLAS, one call per vector operation (the paper), or our fused kernels that do one
//    solver step's updates and reductions in a single pass (FdfdBlas::fused).
// Reductions accumulate in double per thread and per block; the host sums the block partials.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda_check.h"
#include "fdfd/fdfd_backend.h"
#include "fdfd/fdfd_stencil.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {
namespace fdfd {

namespace {

// CIS tables in constant memory: H pairs first, then E pairs (both of the solve's precision).
__constant__ __align__(16) unsigned char c_tables[kFdfdConstantBytes];
std::mutex g_constant_mutex;  // one solve at a time owns c_tables

#define VEM_CUBLAS_CHECK(call)                                                            \
  do {                                                                                    \
    const cublasStatus_t vem_st_ = (call);                                                \
    if (vem_st_ != CUBLAS_STATUS_SUCCESS)                                                 \
      ::vem::fail("cuBLAS error ", int(vem_st_), " in ", #call, " (", __FILE__, ":",      \
                  __LINE__, ")");                                                         \
  } while (0)

template <class T>
struct CisConstCoefficients {
  const std::uint16_t* hi[3];
  const std::uint16_t* ei[3];
  int e_offset;  // first E pair in c_tables, in Pair<T> units
  template <int A> VEM_HD Pair<T> hget(std::int64_t idx) const {
#ifdef __CUDA_ARCH__
    return reinterpret_cast<const Pair<T>*>(c_tables)[hi[A][idx]];
#else
    (void)idx;
    return Pair<T>{};  // device only
#endif
  }
  template <int A> VEM_HD Pair<T> eget(std::int64_t idx) const {
#ifdef __CUDA_ARCH__
    return reinterpret_cast<const Pair<T>*>(c_tables)[e_offset + ei[A][idx]];
#else
    (void)idx;
    return Pair<T>{};
#endif
  }
};

// ---------------------------------------------------------------- matrix-vector kernels
constexpr int kBx = 32, kBy = 4;

// H stage; with grad-div (Reg) it also writes the node value phi (fdfd_stencil.h).
template <class T, class Coef, bool Reg>
__global__ void h_stage_kernel(const Cx<T>* __restrict__ x, Cx<T>* __restrict__ t, Dims d,
                               Coef coef, GradDiv<T> gd, Cx<T>* __restrict__ phi) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= d.n[0] || j >= d.n[1]) return;
  const std::int64_t idx = i + d.s[1] * j + d.s[2] * k;
  t[idx] = h_stage<0>(x, d, i, j, k, idx, coef);
  t[d.cells + idx] = h_stage<1>(x, d, i, j, k, idx, coef);
  t[2 * d.cells + idx] = h_stage<2>(x, d, i, j, k, idx, coef);
  if constexpr (Reg) phi[idx] = grad_div_node<T, Coef>(x, d, i, j, k, idx, coef, gd);
}

// E stage; PhiSrc = NoGradDiv, StoredPhi (two-stage) or RecomputedPhi (fused) for grad-div.
template <class T, class Coef, class TSrc, class PhiSrc>
__global__ void e_stage_kernel(const Cx<T>* __restrict__ x, Cx<T>* __restrict__ y, Dims d,
                               Coef coef, TSrc ts, PhiSrc ph) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= d.n[0] || j >= d.n[1]) return;
  const std::int64_t idx = i + d.s[1] * j + d.s[2] * k;
  y[idx] = e_stage_gd<0>(x, d, i, j, k, idx, coef, ts, ph);
  y[d.cells + idx] = e_stage_gd<1>(x, d, i, j, k, idx, coef, ts, ph);
  y[2 * d.cells + idx] = e_stage_gd<2>(x, d, i, j, k, idx, coef, ts, ph);
}

// ---------------------------------------------------------------- fused BLAS-1 kernels
constexpr int kThreads = 256;
constexpr int kMaxK = 4;  // reduced quantities per kernel

template <class F>
__global__ void map_kernel(std::int64_t n, F f) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    f(i);
}

// f(i, acc) adds element i's contributions to acc[0..K-1]; partial[block * K + q] receives the
// block sums.
template <int K, class F>
__global__ void reduce_kernel(std::int64_t n, F f, double* __restrict__ partial) {
  double acc[K];
  for (int q = 0; q < K; ++q) acc[q] = 0.0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    f(i, acc);
  __shared__ double sh[K][kThreads];
  for (int q = 0; q < K; ++q) sh[q][threadIdx.x] = acc[q];
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      for (int q = 0; q < K; ++q) sh[q][threadIdx.x] += sh[q][threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int q = 0; q < K; ++q) partial[blockIdx.x * K + q] = sh[q][0];
}

template <class T>
__device__ __forceinline__ Cx<double> wide(Cx<T> v) {
  return {double(v.re), double(v.im)};
}

template <class T>
struct CopyF {
  const Cx<T>* s; Cx<T>* d;
  __device__ void operator()(std::int64_t i) const { d[i] = s[i]; }
};
template <class T>
struct AxpyF {
  Cx<T> a; const Cx<T>* x; Cx<T>* y;
  __device__ void operator()(std::int64_t i) const { y[i] = cfma(a, x[i], y[i]); }
};
template <class T>
struct ResidualF {
  const Cx<T>* b; const Cx<T>* ax; Cx<T>* r;
  __device__ void operator()(std::int64_t i) const { r[i] = b[i] - ax[i]; }
};
template <class T>
struct DiagMulF {
  const Cx<T>* d; const Cx<T>* x; Cx<T>* y;
  __device__ void operator()(std::int64_t i) const { y[i] = d[i] * x[i]; }
};
template <class T>
struct BicgPF {  // p = r + beta (p - omega v)
  Cx<T> beta, momega; Cx<T>* p; const Cx<T>* r; const Cx<T>* v;
  __device__ void operator()(std::int64_t i) const {
    p[i] = cfma(beta, cfma(momega, v[i], p[i]), r[i]);
  }
};
template <class T>
struct CocgPF {  // p = minv o r + beta p
  Cx<T> beta; Cx<T>* p; const Cx<T>* minv; const Cx<T>* r;
  __device__ void operator()(std::int64_t i) const {
    const Cx<T> z = minv ? minv[i] * r[i] : r[i];
    p[i] = cfma(beta, p[i], z);
  }
};
template <class T>
struct Nrm2F {
  const Cx<T>* x;
  __device__ void operator()(std::int64_t i, double* acc) const {
    const Cx<double> v = wide(x[i]);
    acc[0] += v.re * v.re + v.im * v.im;
  }
};
template <class T>
struct DotcNormF {  // {a^H b, ||b||^2}
  const Cx<T>* a; const Cx<T>* b;
  __device__ void operator()(std::int64_t i, double* acc) const {
    const Cx<double> u = wide(a[i]), v = wide(b[i]);
    acc[0] += u.re * v.re + u.im * v.im;
    acc[1] += u.re * v.im - u.im * v.re;
    acc[2] += v.re * v.re + v.im * v.im;
  }
};
template <class T>
struct AxpyNrmF {  // y += a x; ||y||^2
  Cx<T> a; const Cx<T>* x; Cx<T>* y;
  __device__ void operator()(std::int64_t i, double* acc) const {
    const Cx<T> v = cfma(a, x[i], y[i]);
    y[i] = v;
    const Cx<double> w = wide(v);
    acc[0] += w.re * w.re + w.im * w.im;
  }
};
template <class T>
struct BicgXrF {  // x += alpha ph + omega sh; r = s - omega t; {r0^H r, ||r||^2}
  Cx<T> alpha, omega, momega; Cx<T>* x; const Cx<T>* ph; const Cx<T>* sh; Cx<T>* r;
  const Cx<T>* t; const Cx<T>* r0;
  __device__ void operator()(std::int64_t i, double* acc) const {
    const Cx<T> s = r[i];
    const Cx<T> shi = sh[i];
    x[i] = cfma(omega, shi, cfma(alpha, ph[i], x[i]));
    const Cx<T> rn = cfma(momega, t[i], s);
    r[i] = rn;
    const Cx<double> u = wide(r0[i]), v = wide(rn);
    acc[0] += u.re * v.re + u.im * v.im;
    acc[1] += u.re * v.im - u.im * v.re;
    acc[2] += v.re * v.re + v.im * v.im;
  }
};
template <class T>
struct WdotuF {  // {sum w a b, sum |w a b|_1}
  const Cx<T>* w; const Cx<T>* a; const Cx<T>* b;
  __device__ void operator()(std::int64_t i, double* acc) const {
    const Cx<double> v = wide(w[i]) * wide(a[i]) * wide(b[i]);
    acc[0] += v.re;
    acc[1] += v.im;
    acc[2] += fabs(v.re) + fabs(v.im);
  }
};
template <class T>
struct CocgXrF {  // x += alpha p; r -= alpha q; {sum wm r r, sum |.|, ||r||^2}
  Cx<T> alpha, malpha; Cx<T>* x; Cx<T>* r; const Cx<T>* p; const Cx<T>* q; const Cx<T>* wm;
  __device__ void operator()(std::int64_t i, double* acc) const {
    x[i] = cfma(alpha, p[i], x[i]);
    const Cx<T> rn = cfma(malpha, q[i], r[i]);
    r[i] = rn;
    const Cx<double> rd = wide(rn);
    acc[3] += rd.re * rd.re + rd.im * rd.im;
    if (wm) {
      const Cx<double> v = wide(wm[i]) * rd * rd;
      acc[0] += v.re;
      acc[1] += v.im;
      acc[2] += fabs(v.re) + fabs(v.im);
    }
  }
};
template <class T>
struct CocrPqF {  // p = r + beta p; q = ar + beta q; {sum d q q, sum |.|}
  Cx<T> beta; Cx<T>* p; Cx<T>* q; const Cx<T>* r; const Cx<T>* ar; const Cx<T>* d;
  __device__ void operator()(std::int64_t i, double* acc) const {
    p[i] = cfma(beta, p[i], r[i]);
    const Cx<T> qn = cfma(beta, q[i], ar[i]);
    q[i] = qn;
    const Cx<double> qd = wide(qn);
    const Cx<double> v = wide(d[i]) * qd * qd;
    acc[0] += v.re;
    acc[1] += v.im;
    acc[2] += fabs(v.re) + fabs(v.im);
  }
};

// ---------------------------------------------------------------- cuBLAS type dispatch
template <class T> struct Blas;
template <> struct Blas<double> {
  using C = cuDoubleComplex;
  static C c(cdouble v) { return make_cuDoubleComplex(v.real(), v.imag()); }
  static cublasStatus_t axpy(cublasHandle_t h, int n, const C* a, const C* x, C* y) {
    return cublasZaxpy(h, n, a, x, 1, y, 1);
  }
  static cublasStatus_t scal(cublasHandle_t h, int n, const C* a, C* x) {
    return cublasZscal(h, n, a, x, 1);
  }
  static cublasStatus_t copy(cublasHandle_t h, int n, const C* x, C* y) {
    return cublasZcopy(h, n, x, 1, y, 1);
  }
  static cublasStatus_t dotc(cublasHandle_t h, int n, const C* x, const C* y, C* r) {
    return cublasZdotc(h, n, x, 1, y, 1, r);
  }
  static cublasStatus_t dotu(cublasHandle_t h, int n, const C* x, const C* y, C* r) {
    return cublasZdotu(h, n, x, 1, y, 1, r);
  }
  static cublasStatus_t nrm2(cublasHandle_t h, int n, const C* x, double* r) {
    return cublasDznrm2(h, n, x, 1, r);
  }
  static cublasStatus_t dgmm(cublasHandle_t h, int n, const C* a, const C* d, C* c) {
    return cublasZdgmm(h, CUBLAS_SIDE_LEFT, n, 1, a, n, d, 1, c, n);
  }
  static cdouble back(C v) { return {cuCreal(v), cuCimag(v)}; }
};
template <> struct Blas<float> {
  using C = cuComplex;
  static C c(cdouble v) { return make_cuComplex(float(v.real()), float(v.imag())); }
  static cublasStatus_t axpy(cublasHandle_t h, int n, const C* a, const C* x, C* y) {
    return cublasCaxpy(h, n, a, x, 1, y, 1);
  }
  static cublasStatus_t scal(cublasHandle_t h, int n, const C* a, C* x) {
    return cublasCscal(h, n, a, x, 1);
  }
  static cublasStatus_t copy(cublasHandle_t h, int n, const C* x, C* y) {
    return cublasCcopy(h, n, x, 1, y, 1);
  }
  static cublasStatus_t dotc(cublasHandle_t h, int n, const C* x, const C* y, C* r) {
    return cublasCdotc(h, n, x, 1, y, 1, r);
  }
  static cublasStatus_t dotu(cublasHandle_t h, int n, const C* x, const C* y, C* r) {
    return cublasCdotu(h, n, x, 1, y, 1, r);
  }
  static cublasStatus_t nrm2(cublasHandle_t h, int n, const C* x, float* r) {
    return cublasScnrm2(h, n, x, 1, r);
  }
  static cublasStatus_t dgmm(cublasHandle_t h, int n, const C* a, const C* d, C* c) {
    return cublasCdgmm(h, CUBLAS_SIDE_LEFT, n, 1, a, n, d, 1, c, n);
  }
  static cdouble back(C v) { return {double(cuCrealf(v)), double(cuCimagf(v))}; }
};

// ---------------------------------------------------------------- the device Ops
template <class T>
class CudaOps {
 public:
  static constexpr bool kOnDevice = true;  // vectors live in GPU memory
  using C = Cx<T>;
  using BC = typename Blas<T>::C;

  CudaOps(const FdfdOperator& op, const FdfdSolverOptions& o)
      : storage_(o.storage), mv_(o.matvec), blas_(o.blas),
        reg_(o.regularization == FdfdRegularization::grad_div) {
    try {
      setup(op, o);
    } catch (...) {
      release();
      throw;
    }
  }

  ~CudaOps() { release(); }
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

 private:
  void setup(const FdfdOperator& op, const FdfdSolverOptions& o) {
    int count = 0;
    VEM_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (o.device_index >= count)
      fail("FDFD: CUDA device index ", o.device_index, " requested but ", count,
           " device(s) are present");
    VEM_CUDA_CHECK(cudaSetDevice(o.device_index));
    cudaDeviceProp prop;
    VEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device_index));
    name_ = prop.name;
    sms_ = prop.multiProcessorCount;
    const YeeGrid& g = op.grid();
    d_.n[0] = g.nx; d_.n[1] = g.ny; d_.n[2] = g.nz;
    d_.s[0] = 1; d_.s[1] = g.nx; d_.s[2] = std::int64_t(g.nx) * g.ny;
    d_.cells = g.cell_count();
    n_ = 3 * d_.cells;
    const std::int64_t N = d_.cells;
    if (storage_ == FdfdStorage::cas) {
      std::vector<C> host(N);
      for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s)
          for (int stage = 0; stage < 2; ++stage) {
            cas_coefficients<T>(op, stage, a, s, host.data());
            C* dev = static_cast<C*>(device_alloc(N * sizeof(C)));
            VEM_CUDA_CHECK(cudaMemcpy(dev, host.data(), N * sizeof(C), cudaMemcpyHostToDevice));
            (stage == 0 ? cas_.h : cas_.e)[a][s] = dev;
          }
    } else {
      if (!op.cis_available()) fail("FDFD: CIS storage unavailable: ", op.cis_unavailable_reason());
      std::vector<Pair<T>> tab;
      for (const auto& p : op.h_table())
        tab.push_back({{T(p.c1.real()), T(p.c1.imag())}, {T(p.c2.real()), T(p.c2.imag())}});
      const int e_offset = int(tab.size());
      for (const auto& p : op.e_table())
        tab.push_back({{T(p.c1.real()), T(p.c1.imag())}, {T(p.c2.real()), T(p.c2.imag())}});
      const std::size_t tab_bytes = tab.size() * sizeof(Pair<T>);
      FdfdTablePlacement place = o.tables;
      if (place == FdfdTablePlacement::automatic)
        place = tab_bytes <= kFdfdConstantBytes ? FdfdTablePlacement::constant_memory
                                                : FdfdTablePlacement::global_memory;
      if (place == FdfdTablePlacement::constant_memory && tab_bytes > kFdfdConstantBytes)
        fail("FDFD: the CIS tables need ", tab_bytes, " bytes (", op.h_table().size(), " H + ",
             op.e_table().size(), " E pairs) but constant memory holds ", kFdfdConstantBytes,
             "; use global placement or automatic");
      placement_ = place;
      std::uint16_t* idx[2][3];
      for (int stage = 0; stage < 2; ++stage)
        for (int a = 0; a < 3; ++a) {
          const auto& v = stage == 0 ? op.h_index(a) : op.e_index(a);
          idx[stage][a] = static_cast<std::uint16_t*>(device_alloc(N * sizeof(std::uint16_t)));
          VEM_CUDA_CHECK(cudaMemcpy(idx[stage][a], v.data(), N * sizeof(std::uint16_t),
                                    cudaMemcpyHostToDevice));
        }
      if (place == FdfdTablePlacement::constant_memory) {
        lock_ = std::unique_lock<std::mutex>(g_constant_mutex);
        VEM_CUDA_CHECK(cudaMemcpyToSymbol(c_tables, tab.data(), tab_bytes));
        for (int a = 0; a < 3; ++a) {
          cisc_.hi[a] = idx[0][a];
          cisc_.ei[a] = idx[1][a];
        }
        cisc_.e_offset = e_offset;
      } else {
        Pair<T>* dtab = static_cast<Pair<T>*>(device_alloc(tab_bytes));
        VEM_CUDA_CHECK(cudaMemcpy(dtab, tab.data(), tab_bytes, cudaMemcpyHostToDevice));
        for (int a = 0; a < 3; ++a) {
          cisg_.hi[a] = idx[0][a];
          cisg_.ei[a] = idx[1][a];
        }
        cisg_.htab = dtab;
        cisg_.etab = dtab + e_offset;
      }
    }
    if (mv_ == FdfdMatvec::two_stage) t_ = static_cast<C*>(device_alloc(n_ * sizeof(C)));
    if (reg_) {
      // 1-D profiles (a few hundred values; cached reads) and, two-stage, the node values phi.
      const GradDivProfiles<T> prof(op, o.regularization_scale);
      for (int a = 0; a < 3; ++a) {
        gd_.se[a] = upload_small(prof.se[a]);
        gd_.gsh[a] = upload_small(prof.gsh[a]);
        gd_.inv_d[a] = prof.inv_d[a];
        gd_.kd[a] = prof.kd[a];
      }
      gd_.c36 = prof.c36;
      if (mv_ == FdfdMatvec::two_stage) phi_ = static_cast<C*>(device_alloc(N * sizeof(C)));
    }
    partial_ = static_cast<double*>(device_alloc(kReduceBlocks * kMaxK * sizeof(double)));
    if (blas_ == FdfdBlas::cublas) {
      VEM_CUBLAS_CHECK(cublasCreate(&handle_));
      VEM_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
      tmp_ = alloc();
    }
    matvec_bytes_ = matvec_bytes(storage_, mv_, double(N), double(sizeof(C)), reg_);
    VEM_CUDA_CHECK(cudaDeviceSynchronize());
  }

  const C* upload_small(const std::vector<C>& v) {
    C* p = static_cast<C*>(device_alloc(v.size() * sizeof(C)));
    VEM_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(C), cudaMemcpyHostToDevice));
    return p;
  }

  void release() {
    if (staging_) cudaFreeHost(staging_);
    staging_ = nullptr;
    if (handle_) cublasDestroy(handle_);
    handle_ = nullptr;
    for (void* p : allocations_) cudaFree(p);
    allocations_.clear();
    if (lock_.owns_lock()) lock_.unlock();
  }

 public:
  std::string name() const { return name_; }
  FdfdTablePlacement placement() const { return placement_; }
  double bytes() const { return bytes_; }
  double matvec_bytes_nominal() const { return matvec_bytes_; }
  std::int64_t allocated_bytes() const { return allocated_; }

  C* alloc() {
    C* p = static_cast<C*>(device_alloc(n_ * sizeof(C)));
    VEM_CUDA_CHECK(cudaMemset(p, 0, n_ * sizeof(C)));
    return p;
  }
  C* upload(const std::vector<cdouble>& v) {
    C* p = alloc();
    upload_to(v, p);
    return p;
  }
  // Host <-> device copies of whole vectors (refinement, the time-domain preconditioner) go
  // through one pinned staging buffer, converted with OpenMP on the host (fdfd_cpu.cpp).
  void upload_to(const std::vector<cdouble>& v, C* p) {
    C* h = staging();
    convert_vector<T>(v, h);
    VEM_CUDA_CHECK(cudaMemcpy(p, h, n_ * sizeof(C), cudaMemcpyHostToDevice));
  }
  std::vector<cdouble> download(const C* p) const {
    C* h = staging();
    VEM_CUDA_CHECK(cudaMemcpy(h, p, n_ * sizeof(C), cudaMemcpyDeviceToHost));
    std::vector<cdouble> v(n_);
    convert_back<T>(h, n_, v.data());
    return v;
  }
  C* staging() const {
    if (!staging_) VEM_CUDA_CHECK(cudaMallocHost(&staging_, n_ * sizeof(C)));
    return staging_;
  }
  void synchronize() const { VEM_CUDA_CHECK(cudaDeviceSynchronize()); }

  // ---- product with A
  void matvec(const C* x, C* y) {
    bytes_ += matvec_bytes_;
    if (storage_ == FdfdStorage::cas)
      matvec_with(cas_, x, y);
    else if (placement_ == FdfdTablePlacement::constant_memory)
      matvec_with(cisc_, x, y);
    else
      matvec_with(cisg_, x, y);
  }

  // ---- BLAS-1
  void copy(const C* s, C* d) {
    bytes_ += 2.0 * n_ * sizeof(C);
    if (blas_ == FdfdBlas::cublas)
      VEM_CUBLAS_CHECK(Blas<T>::copy(handle_, int(n_), bc(s), bc(d)));
    else
      launch_map(CopyF<T>{s, d}, "copy");
  }
  void zero(C* x) { VEM_CUDA_CHECK(cudaMemset(x, 0, n_ * sizeof(C))); }
  void axpy(cdouble a, const C* x, C* y) {
    bytes_ += 3.0 * n_ * sizeof(C);
    if (blas_ == FdfdBlas::cublas) {
      const BC ca = Blas<T>::c(a);
      VEM_CUBLAS_CHECK(Blas<T>::axpy(handle_, int(n_), &ca, bc(x), bc(y)));
    } else {
      launch_map(AxpyF<T>{cx(a), x, y}, "axpy");
    }
  }
  void residual(const C* b, const C* ax, C* r) {
    if (blas_ == FdfdBlas::cublas) {
      copy(b, r);
      axpy(-1.0, ax, r);
    } else {
      bytes_ += 3.0 * n_ * sizeof(C);
      launch_map(ResidualF<T>{b, ax, r}, "residual");
    }
  }
  void diag_mul(const C* dg, const C* x, C* y) {
    bytes_ += 3.0 * n_ * sizeof(C);
    if (blas_ == FdfdBlas::cublas)
      VEM_CUBLAS_CHECK(Blas<T>::dgmm(handle_, int(n_), bc(x), bc(dg), bc(y)));
    else
      launch_map(DiagMulF<T>{dg, x, y}, "diag_mul");
  }
  double nrm2sq(const C* x) {
    bytes_ += 1.0 * n_ * sizeof(C);
    if (blas_ == FdfdBlas::cublas) {
      T r = 0;
      VEM_CUBLAS_CHECK(Blas<T>::nrm2(handle_, int(n_), bc(x), &r));
      return double(r) * double(r);
    }
    double acc[1];
    reduce<1>(Nrm2F<T>{x}, acc);
    return acc[0];
  }
  DotNorm dotc_norm(const C* a, const C* b) {
    if (blas_ == FdfdBlas::cublas) {
      bytes_ += 2.0 * n_ * sizeof(C);
      BC r;
      VEM_CUBLAS_CHECK(Blas<T>::dotc(handle_, int(n_), bc(a), bc(b), &r));
      return {Blas<T>::back(r), nrm2sq(b)};
    }
    bytes_ += 2.0 * n_ * sizeof(C);
    double acc[3];
    reduce<3>(DotcNormF<T>{a, b}, acc);
    return {{acc[0], acc[1]}, acc[2]};
  }
  void bicg_p(C* p, const C* r, const C* v, cdouble beta, cdouble omega) {
    if (blas_ == FdfdBlas::cublas) {
      axpy(-omega, v, p);
      bytes_ += 2.0 * n_ * sizeof(C);
      const BC cb = Blas<T>::c(beta);
      VEM_CUBLAS_CHECK(Blas<T>::scal(handle_, int(n_), &cb, bc(p)));
      axpy(1.0, r, p);
      return;
    }
    bytes_ += 4.0 * n_ * sizeof(C);
    launch_map(BicgPF<T>{cx(beta), cx(-omega), p, r, v}, "bicg_p");
  }
  double axpy_nrm2sq(cdouble a, const C* x, C* y) {
    if (blas_ == FdfdBlas::cublas) {
      axpy(a, x, y);
      return nrm2sq(y);
    }
    bytes_ += 3.0 * n_ * sizeof(C);
    double acc[1];
    reduce<1>(AxpyNrmF<T>{cx(a), x, y}, acc);
    return acc[0];
  }
  DotNorm bicg_xr(C* x, const C* ph, const C* sh, C* r, const C* t, const C* r0, cdouble alpha,
                  cdouble omega) {
    if (blas_ == FdfdBlas::cublas) {
      axpy(alpha, ph, x);
      axpy(omega, sh, x);
      axpy(-omega, t, r);
      bytes_ += 2.0 * n_ * sizeof(C);
      BC rho;
      VEM_CUBLAS_CHECK(Blas<T>::dotc(handle_, int(n_), bc(r0), bc(r), &rho));
      return {Blas<T>::back(rho), nrm2sq(r)};
    }
    bytes_ += (sh == r ? 7.0 : 8.0) * n_ * sizeof(C);
    double acc[3];
    reduce<3>(BicgXrF<T>{cx(alpha), cx(omega), cx(-omega), x, ph, sh, r, t, r0}, acc);
    return {{acc[0], acc[1]}, acc[2]};
  }
  WDot wdotu(const C* w, const C* a, const C* b) {
    if (blas_ == FdfdBlas::cublas) {
      // tmp = w o b; dotu(a, tmp); |.|-sum bounded by ||a|| ||tmp|| (Cauchy-Schwarz).
      diag_mul(w, b, tmp_);
      bytes_ += 2.0 * n_ * sizeof(C);
      BC r;
      VEM_CUBLAS_CHECK(Blas<T>::dotu(handle_, int(n_), bc(a), bc(tmp_), &r));
      const double bound = std::sqrt(nrm2sq(a) * nrm2sq(tmp_));
      return {Blas<T>::back(r), bound};
    }
    bytes_ += 3.0 * n_ * sizeof(C);
    double acc[3];
    reduce<3>(WdotuF<T>{w, a, b}, acc);
    return {{acc[0], acc[1]}, acc[2]};
  }
  WDot cocg_xr(C* x, C* r, const C* p, const C* q, const C* wm, cdouble alpha, double* rr) {
    if (blas_ == FdfdBlas::cublas) {
      axpy(alpha, p, x);
      axpy(-alpha, q, r);
      *rr = nrm2sq(r);
      return wm ? wdotu(wm, r, r) : WDot{0.0, 0.0};
    }
    bytes_ += (wm ? 7.0 : 6.0) * n_ * sizeof(C);
    double acc[4];
    reduce<4>(CocgXrF<T>{cx(alpha), cx(-alpha), x, r, p, q, wm}, acc);
    *rr = acc[3];
    return {{acc[0], acc[1]}, acc[2]};
  }
  WDot cocr_pq(C* p, C* q, const C* r, const C* ar, const C* dw, cdouble beta) {
    if (blas_ == FdfdBlas::cublas) {
      bytes_ += 4.0 * n_ * sizeof(C);
      const BC cb = Blas<T>::c(beta);
      VEM_CUBLAS_CHECK(Blas<T>::scal(handle_, int(n_), &cb, bc(p)));
      VEM_CUBLAS_CHECK(Blas<T>::scal(handle_, int(n_), &cb, bc(q)));
      axpy(1.0, r, p);
      axpy(1.0, ar, q);
      return wdotu(dw, q, q);
    }
    bytes_ += 7.0 * n_ * sizeof(C);
    double acc[3];
    reduce<3>(CocrPqF<T>{cx(beta), p, q, r, ar, dw}, acc);
    return {{acc[0], acc[1]}, acc[2]};
  }
  void cocg_p(C* p, const C* minv, const C* r, cdouble beta) {
    if (blas_ == FdfdBlas::cublas) {
      bytes_ += 2.0 * n_ * sizeof(C);
      const BC cb = Blas<T>::c(beta);
      VEM_CUBLAS_CHECK(Blas<T>::scal(handle_, int(n_), &cb, bc(p)));
      if (minv) {
        diag_mul(minv, r, tmp_);
        axpy(1.0, tmp_, p);
      } else {
        axpy(1.0, r, p);
      }
      return;
    }
    bytes_ += (minv ? 4.0 : 3.0) * n_ * sizeof(C);
    launch_map(CocgPF<T>{cx(beta), p, minv, r}, "cocg_p");
  }

 private:
  static constexpr int kReduceBlocks = 1024;

  static const BC* bc(const C* p) { return reinterpret_cast<const BC*>(p); }
  static BC* bc(C* p) { return reinterpret_cast<BC*>(p); }
  static C cx(cdouble v) { return {T(v.real()), T(v.imag())}; }

  void* device_alloc(std::size_t bytes) {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      fail("FDFD: cannot allocate ", bytes, " bytes on the GPU (", allocated_,
           " already allocated): ", cudaGetErrorString(e));
    allocations_.push_back(p);
    allocated_ += std::int64_t(bytes);
    return p;
  }

  int map_blocks() const {
    const std::int64_t want = (n_ + kThreads - 1) / kThreads;
    return int(std::min<std::int64_t>(want, std::int64_t(sms_) * 32));
  }
  template <class F>
  void launch_map(const F& f, const char* what) {
    map_kernel<<<map_blocks(), kThreads>>>(n_, f);
    VEM_CUDA_CHECK_LAUNCH(what);
  }
  template <int K, class F>
  void reduce(const F& f, double* out) {
    const int blocks =
        int(std::min<std::int64_t>((n_ + kThreads - 1) / kThreads, kReduceBlocks));
    reduce_kernel<K><<<blocks, kThreads>>>(n_, f, partial_);
    VEM_CUDA_CHECK_LAUNCH("reduction");
    double host[kReduceBlocks * kMaxK];
    VEM_CUDA_CHECK(cudaMemcpy(host, partial_, blocks * K * sizeof(double), cudaMemcpyDeviceToHost));
    for (int q = 0; q < K; ++q) out[q] = 0.0;
    for (int b = 0; b < blocks; ++b)
      for (int q = 0; q < K; ++q) out[q] += host[b * K + q];
  }

  template <class Coef>
  void matvec_with(const Coef& coef, const C* x, C* y) {
    const dim3 block(kBx, kBy, 1);
    const dim3 grid((d_.n[0] + kBx - 1) / kBx, (d_.n[1] + kBy - 1) / kBy, d_.n[2]);
    const StoredT<T> ts{t_, d_.cells};
    const RecomputedT<T, Coef> rt{x, coef};
    if (mv_ == FdfdMatvec::two_stage && !reg_) {
      h_stage_kernel<T, Coef, false><<<grid, block>>>(x, t_, d_, coef, gd_, nullptr);
      VEM_CUDA_CHECK_LAUNCH("FDFD H stage");
      e_stage_kernel<<<grid, block>>>(x, y, d_, coef, ts, NoGradDiv{});
      VEM_CUDA_CHECK_LAUNCH("FDFD E stage");
    } else if (mv_ == FdfdMatvec::two_stage) {
      h_stage_kernel<T, Coef, true><<<grid, block>>>(x, t_, d_, coef, gd_, phi_);
      VEM_CUDA_CHECK_LAUNCH("FDFD H stage + grad-div nodes");
      e_stage_kernel<<<grid, block>>>(x, y, d_, coef, ts, StoredPhi<T>{phi_, gd_});
      VEM_CUDA_CHECK_LAUNCH("FDFD E stage + grad-div");
    } else if (!reg_) {
      e_stage_kernel<<<grid, block>>>(x, y, d_, coef, rt, NoGradDiv{});
      VEM_CUDA_CHECK_LAUNCH("FDFD fused product");
    } else {
      e_stage_kernel<<<grid, block>>>(x, y, d_, coef, rt, RecomputedPhi<T, Coef>{x, coef, gd_});
      VEM_CUDA_CHECK_LAUNCH("FDFD fused product + grad-div");
    }
  }

  FdfdStorage storage_;
  FdfdMatvec mv_;
  FdfdBlas blas_;
  bool reg_ = false;
  GradDiv<T> gd_{};
  C* phi_ = nullptr;
  FdfdTablePlacement placement_ = FdfdTablePlacement::global_memory;
  std::string name_;
  int sms_ = 1;
  Dims d_{};
  std::int64_t n_ = 0;
  CasCoefficients<T> cas_{};
  CisCoefficients<T> cisg_{};
  CisConstCoefficients<T> cisc_{};
  C* t_ = nullptr;
  C* tmp_ = nullptr;
  double* partial_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  std::vector<void*> allocations_;
  mutable C* staging_ = nullptr;  // pinned host buffer of n_ entries (upload_to / download)
  std::int64_t allocated_ = 0;
  double bytes_ = 0, matvec_bytes_ = 0;
  std::unique_lock<std::mutex> lock_;
};

template <class T>
BackendResult solve_cuda_t(const FdfdOperator& op, const FdfdSolverOptions& o,
                           const HostVectors& hv, const KrylovParams& kp) {
  using Clock = std::chrono::steady_clock;
  BackendResult out;
  const auto t0 = Clock::now();
  CudaOps<T> ops(op, o);
  // The time-domain preconditioner's FDTD operator is setup too (fdfd_time_domain.h).
  std::unique_ptr<FdfdTimeDomainPreconditioner> pre;
  if (o.method == FdfdMethod::gcr)
    pre = std::make_unique<FdfdTimeDomainPreconditioner>(op, o.time_domain, o.backend, o.device_index);
  using C = typename CudaOps<T>::C;
  C* b = ops.upload(hv.b);
  C* x = ops.alloc();
  const C* minv = hv.minv.empty() ? nullptr : ops.upload(hv.minv);
  const C* d = hv.d.empty() ? nullptr : ops.upload(hv.d);
  const C* wm = hv.wm.empty() ? nullptr : ops.upload(hv.wm);
  ops.synchronize();
  const auto t1 = Clock::now();
  const double bytes0 = ops.bytes();
  std::vector<cdouble> xh;
  const bool refined = o.refinement == FdfdRefinement::on;
  out.krylov = refined ? refine(ops, op, o, hv, kp, b, x, minv, d, wm, xh)
               : pre   ? run_time_domain_gcr(ops, *pre, o, kp, b, x, out)
                       : run_method(ops, o.method, b, x, minv, d, wm, kp);
  ops.synchronize();
  const auto t2 = Clock::now();
  out.x = refined ? std::move(xh) : ops.download(x);
  out.backend = "cuda:" + ops.name();
  out.tables = ops.placement();
  out.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  out.solve_seconds = std::chrono::duration<double>(t2 - t1).count();
  out.bytes_per_matvec = ops.matvec_bytes_nominal();
  if (out.krylov.iterations > 0)
    out.bytes_per_iteration = (ops.bytes() - bytes0) / out.krylov.iterations;
  out.device_bytes = ops.allocated_bytes();
  return out;
}

}  // namespace

BackendResult solve_cuda(const FdfdOperator& op, const FdfdSolverOptions& o,
                         const HostVectors& hv, const KrylovParams& kp) {
  if (o.precision == FdfdPrecision::complex128) return solve_cuda_t<double>(op, o, hv, kp);
  return solve_cuda_t<float>(op, o, hv, kp);
}

bool cuda_usable(std::string* why) { return cuda_available(why); }

}  // namespace fdfd
}  // namespace vem
