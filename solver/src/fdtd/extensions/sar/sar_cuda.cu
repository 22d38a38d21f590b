// GPU peak spatial-average SAR (sar.h), with the CPU engine's results (sar.cpp):
//  1. density and sigma, |E|^2 (or the power density) go up through two pinned buffers that host
//     threads fill while the previous chunk's DMA runs (pageable copies are single-threaded);
//  2. the summed-volume tables are built on the device: mass and power in double, the tissue
//     count in 32-bit integers (exact, like the CPU's double counts), every prefix pass running
//     sequentially along its lines in the CPU's order, so each entry is the CPU's sum of the same
//     doubles in the same order, bit for bit;
//  3. one thread per voxel grows its centred cube as grow_cube does, but from n0, a bound below
//     which no cube can reach the target mass (M(n) <= rho_max V (2n+1)^3 plus the tables'
//     rounding, so the CPU's loop never stops below n0), and reads the power and tissue tables
//     only at the last two sizes: the same box sums as the CPU's, so the same result;
//  4. the assignment is the CPU's (rmax unit dilations of a max image, sar.cpp
//     largest_containing_average), one fused 3x3x3-max + seed pass per level, over the tissue's
//     bounding box only (exact: valid cubes and invalid voxels are tissue voxels, and iterated
//     unit dilations clipped to a box reach exactly the cube clipped to it);
//  5. counts and the peak (the largest SAR, the lowest voxel index among equals, as the CPU's
//     scan picks) on the device; averaged SAR, side and status come back through the pinned
//     buffers into output arrays that other host threads allocate (page faults) meanwhile.
// Compiled with -fmad=false (solver/CMakeLists.txt): no contraction, the CPU's roundings.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <type_traits>

#include "core/cuda_check.h"
#include "fdtd/extensions/sar/sar_internal.h"

namespace vem {

namespace {

using u32 = unsigned int;
using u64 = unsigned long long;

constexpr int kFillRows = 32;  // rows (j) per block of the fill + x scan
constexpr int kDilateDz = 16;  // z planes per block of the dilation

__host__ __device__ inline long long tab(int i, int j, int k, int nx, int ny) {
  return i + (long long)(nx + 1) * (j + (long long)(ny + 1) * k);
}

// Per-voxel mass, power, tissue flag (as sar.cpp fills the tables) and the x prefix sums. Block
// (32, 8): rows j0..j0+31 of plane k, along x in tiles of 32 staged in shared memory; warp 0
// runs each row's sum sequentially (the CPU's order). Also the largest tissue density and the
// tissue's bounding box.
__global__ void __launch_bounds__(256) sar_fill_scan_x(int nx, int ny, const float* __restrict__ dens,
                                                       const float* __restrict__ a, const float* __restrict__ b,
                                                       bool power_given, double vv, double* __restrict__ M,
                                                       double* __restrict__ P, u32* __restrict__ C, u32* rho_bits,
                                                       int* box) {
  __shared__ double sm[kFillRows][33], sp[kFillRows][33];
  __shared__ u32 sc[kFillRows][33];
  const int k = blockIdx.y, j0 = blockIdx.x * kFillRows, lane = threadIdx.x, ty = threadIdx.y;
  double rm = 0, rp = 0;
  u32 rc = 0, rho_max = 0;
  int lo[3] = {INT_MAX, INT_MAX, INT_MAX}, hi[3] = {-1, -1, -1};
  for (int i0 = 0; i0 < nx; i0 += 32) {
    for (int r = ty; r < kFillRows; r += 8) {
      const int j = j0 + r, i = i0 + lane;
      double mv = 0, pv = 0;
      u32 cv = 0;
      if (i < nx && j < ny) {
        const long long q = i + (long long)nx * (j + (long long)ny * k);
        const float rho = dens[q];
        if (rho >= kMinTissueDensity) {
          mv = double(rho) * vv;
          pv = (power_given ? double(a[q]) : 0.5 * double(a[q]) * double(b[q])) * vv;
          cv = 1;
          rho_max = max(rho_max, __float_as_uint(rho));  // positive floats order as their bits
          lo[0] = min(lo[0], i); hi[0] = max(hi[0], i);
          lo[1] = min(lo[1], j); hi[1] = max(hi[1], j);
          lo[2] = min(lo[2], k); hi[2] = max(hi[2], k);
        }
      }
      sm[r][lane] = mv; sp[r][lane] = pv; sc[r][lane] = cv;
    }
    __syncthreads();
    if (ty == 0) {  // row `lane`: S_i = v_i + S_{i-1}, as sar.cpp's v[i] += v[i-1]
      for (int x = 0; x < 32; ++x) {
        rm = sm[lane][x] + rm; sm[lane][x] = rm;
        rp = sp[lane][x] + rp; sp[lane][x] = rp;
        rc = sc[lane][x] + rc; sc[lane][x] = rc;
      }
    }
    __syncthreads();
    for (int r = ty; r < kFillRows; r += 8) {
      const int j = j0 + r, i = i0 + lane;
      if (i < nx && j < ny) {
        const long long s = tab(i + 1, j + 1, k + 1, nx, ny);
        M[s] = sm[r][lane]; P[s] = sp[r][lane]; C[s] = sc[r][lane];
      }
    }
    __syncthreads();
  }
  rho_max = __reduce_max_sync(0xffffffffu, rho_max);
  for (int d = 0; d < 3; ++d) {
    lo[d] = __reduce_min_sync(0xffffffffu, lo[d]);
    hi[d] = __reduce_max_sync(0xffffffffu, hi[d]);
  }
  if (lane == 0 && hi[0] >= 0) {
    atomicMax(rho_bits, rho_max);
    for (int d = 0; d < 3; ++d) { atomicMin(box + d, lo[d]); atomicMax(box + 3 + d, hi[d]); }
  }
}

// Running sums along one line of the tables, S(q) += S(q - 1) for q = 1..n in order, from entry s
// (q = 0) with stride st: the same additions in the same order as sar.cpp's passes, four entries
// loaded ahead.
__device__ __forceinline__ void scan_line(double* __restrict__ M, double* __restrict__ P, u32* __restrict__ C,
                                          long long s, long long st, int n) {
  double rm = M[s], rp = P[s];
  u32 rc = C[s];
  int q = 1;
  for (; q + 3 <= n; q += 4) {
    double m[4], p[4];
    u32 c[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) { m[u] = M[s + st * (u + 1)]; p[u] = P[s + st * (u + 1)]; c[u] = C[s + st * (u + 1)]; }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      rm = m[u] + rm; rp = p[u] + rp; rc = c[u] + rc;
      M[s + st * (u + 1)] = rm; P[s + st * (u + 1)] = rp; C[s + st * (u + 1)] = rc;
    }
    s += 4 * st;
  }
  for (; q <= n; ++q) {
    s += st;
    rm = M[s] + rm; rp = P[s] + rp; rc = C[s] + rc;
    M[s] = rm; P[s] = rp; C[s] = rc;
  }
}

// S(i, j, k) += S(i, j-1, k) for j = 1..ny in order (sar.cpp's y pass), one thread per (i, k);
// loads four entries ahead (they do not depend on the running sums).
__global__ void sar_scan_y(int nx, int ny, double* __restrict__ M, double* __restrict__ P, u32* __restrict__ C) {
  const int i = 1 + blockIdx.x * blockDim.x + threadIdx.x, k = 1 + blockIdx.y;
  if (i > nx) return;
  scan_line(M, P, C, tab(i, 0, k, nx, ny), nx + 1, ny);
}

// S(i, j, k) += S(i, j, k-1) for k = 1..nz in order (sar.cpp's z pass), one thread per (i, j).
__global__ void sar_scan_z(int nx, int ny, int nz, double* __restrict__ M, double* __restrict__ P,
                           u32* __restrict__ C) {
  const int i = 1 + blockIdx.x * blockDim.x + threadIdx.x, j = 1 + blockIdx.y;
  if (i > nx) return;
  scan_line(M, P, C, tab(i, j, 0, nx, ny), (long long)(nx + 1) * (ny + 1), nz);
}

// Where each mass's cube search may start: the smallest n with rho_max V (2n+1)^3 (1 + 1e-9) +
// err >= m, err bounding the rounding of a computed box sum (the table entries are sums of at
// most nx + ny + nz rounded additions of nonnegative terms, each <= the total mass Mtot; a box sum
// adds eight of them): err = (16 (nx + ny + nz) + 128) eps Mtot, twice that bound. Below it the
// computed M(n) < m, so sar.cpp's loop from n = 0 would not have stopped there.
__global__ void sar_search_start(int nx, int ny, int nz, const double* M, const u32* rho_bits, double vv,
                                 const double* masses, int count, int* start) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const int nmax = max(nx, max(ny, nz));
  const double mtot = M[tab(nx, ny, nz, nx, ny)];
  const double err = (16.0 * (double(nx) + ny + nz) + 128.0) * DBL_EPSILON * mtot;
  const double cap = double(__uint_as_float(*rho_bits)) * vv * (1.0 + 1e-9);
  for (int q = 0; q < count; ++q) {
    int n = 0;
    while (n <= nmax) {
      const double s = 2.0 * n + 1.0;
      if (cap * s * s * s + err >= masses[q]) break;
      ++n;
    }
    start[q] = n;
  }
}

struct Tabs {
  const double* M; const double* P; const u32* C;
  int nx, ny, nz;
};

// Box sums over voxels [i0,i1) x [j0,j1) x [k0,k1): the CPU's box_sum, term for term.
__device__ __forceinline__ double box_d(const double* S, long long sx, long long sxy, int i0, int i1, int j0, int j1,
                                        int k0, int k1) {
#define AT(i, j, k) S[(i) + sx * (j) + sxy * (k)]
  return AT(i1, j1, k1) - AT(i0, j1, k1) - AT(i1, j0, k1) - AT(i1, j1, k0) + AT(i0, j0, k1) + AT(i0, j1, k0) +
         AT(i1, j0, k0) - AT(i0, j0, k0);
#undef AT
}
__device__ __forceinline__ u32 box_u(const u32* S, long long sx, long long sxy, int i0, int i1, int j0, int j1, int k0,
                                     int k1) {
#define AT(i, j, k) S[(i) + sx * (j) + sxy * (k)]
  // modulo 2^32: exact, the count is < 2^32
  return AT(i1, j1, k1) - AT(i0, j1, k1) - AT(i1, j0, k1) - AT(i1, j1, k0) + AT(i0, j0, k1) + AT(i0, j1, k0) +
         AT(i1, j0, k0) - AT(i0, j0, k0);
#undef AT
}

// The centred cube of every voxel (sar.cpp grow_cube; see the file comment). avg = averaged SAR
// of a valid cube (else 0), side (0 in air and where the grid holds less than m), cover = the
// half-width it covers (-1 unless valid), status 0 air / 1 valid / 3 invalid; max_cover: the
// largest cover.
__global__ void __launch_bounds__(128) sar_grow(Tabs t, const float* __restrict__ dens, double m, double d,
                                                const int* __restrict__ start, float* __restrict__ avg,
                                                float* __restrict__ side, int* __restrict__ cover,
                                                unsigned char* __restrict__ status, int* max_cover) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  const bool in_grid = i < t.nx && j < t.ny;
  int cv = -1;
  if (in_grid) {
    const long long q = i + (long long)t.nx * (j + (long long)t.ny * k);
    float a = 0.0f, sd = 0.0f;
    unsigned char st = 0;
    if (dens[q] >= kMinTissueDensity) {
      st = 3;
      const long long sx = t.nx + 1, sxy = sx * (t.ny + 1);
      const int nmax = max(t.nx, max(t.ny, t.nz));
      int i0, i1, j0, j1, k0, k1;
      auto clip = [&](int n) {
        i0 = max(0, i - n); i1 = min(t.nx, i + n + 1);
        j0 = max(0, j - n); j1 = min(t.ny, j + n + 1);
        k0 = max(0, k - n); k1 = min(t.nz, k + n + 1);
      };
      int n = *start;
      double Mp = 0, M = 0;
      bool found = false;
      if (n > 0 && n <= nmax) { clip(n - 1); Mp = box_d(t.M, sx, sxy, i0, i1, j0, j1, k0, k1); }
      for (; n <= nmax; ++n) {
        clip(n);
        M = box_d(t.M, sx, sxy, i0, i1, j0, j1, k0, k1);
        if (M >= m) { found = true; break; }
        Mp = M;
      }
      if (found && n == 0) {
        const double P = box_d(t.P, sx, sxy, i0, i1, j0, j1, k0, k1);
        a = float(P / M); sd = float(d * cbrt(m / M)); cv = 0; st = 1;
      } else if (found) {
        const double P = box_d(t.P, sx, sxy, i0, i1, j0, j1, k0, k1);
        const double cnt = double(box_u(t.C, sx, sxy, i0, i1, j0, j1, k0, k1));
        clip(n - 1);
        const double Pp = box_d(t.P, sx, sxy, i0, i1, j0, j1, k0, k1);
        const double cntp = double(box_u(t.C, sx, sxy, i0, i1, j0, j1, k0, k1));
        const double s1 = 2.0 * n + 1.0, V = s1 * s1 * s1, A = V - cnt;
        const double s0 = 2.0 * (n - 1) + 1.0, Vp = s0 * s0 * s0, Ap = Vp - cntp;
        const double f = (m - Mp) / (M - Mp);
        const double Pm = Pp + f * (P - Pp), Vm = Vp + f * (V - Vp), Am = Ap + f * (A - Ap);
        sd = float((2.0 * n - 1.0 + 2.0 * f) * d);
        if (Am <= 0.1 * Vm + 1e-9 * Vm) { a = float(Pm / m); cv = f >= 0.5 ? n : n - 1; st = 1; }
      }
    }
    avg[q] = a; side[q] = sd; cover[q] = cv; status[q] = st;
  }
  cv = __reduce_max_sync(0xffffffffu, cv);
  if ((threadIdx.x & 31) == 0 && cv >= 0 && cv > *(volatile int*)max_cover) atomicMax(max_cover, cv);
}

struct Box {
  int x0, y0, z0, bx, by, bz;
};

__device__ __forceinline__ long long grid_index(const Box& b, int nx, int ny, int x, int y, int z) {
  return (b.x0 + x) + (long long)nx * ((b.y0 + y) + (long long)ny * (b.z0 + z));
}

// U_rmax = V_rmax over the box (sar.cpp: u = -1, then max(u, avg) where cover == rmax).
__global__ void sar_seed_top(Box b, int nx, int ny, int r, const float* __restrict__ avg,
                             const int* __restrict__ cover, float* __restrict__ u) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
  if (x >= b.bx || y >= b.by) return;
  const long long g = grid_index(b, nx, ny, x, y, z);
  u[x + (long long)b.bx * (y + (long long)b.by * z)] = cover[g] == r ? fmaxf(-1.0f, avg[g]) : -1.0f;
}

// out = max(D(in), V_r): the 3x3x3 max filter (clipped to the box) and level r's seeds in one
// pass. Block (32, 8) over x, y; kDilateDz planes in z, each plane's 3x3 max from a shared tile
// (values are >= -1, so -1 outside the box is the clipping), the z max from three registers.
__global__ void __launch_bounds__(256) sar_dilate(Box b, int nx, int ny, int r, const float* __restrict__ avg,
                                                  const int* __restrict__ cover, const float* __restrict__ in,
                                                  float* __restrict__ out) {
  __shared__ float tile[10][34];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;
  const int z0 = blockIdx.z * kDilateDz, z1 = min(b.bz, z0 + kDilateDz);
  const long long pxy = (long long)b.bx * b.by;
  const bool inside = x < b.bx && y < b.by;
  auto plane = [&](int z) {
    __syncthreads();
    for (int e = ty * 32 + tx; e < 340; e += 256) {
      const int ey = e / 34, ex = e - ey * 34;
      const int gx = blockIdx.x * 32 + ex - 1, gy = blockIdx.y * 8 + ey - 1;
      tile[ey][ex] = gx >= 0 && gx < b.bx && gy >= 0 && gy < b.by ? in[gx + (long long)b.bx * gy + pxy * z] : -1.0f;
    }
    __syncthreads();
    float v = tile[ty][tx];
#pragma unroll
    for (int e = 1; e < 9; ++e) v = fmaxf(v, tile[ty + e / 3][tx + e % 3]);
    return v;
  };
  float prev = z0 > 0 ? plane(z0 - 1) : -1.0f;
  float cur = plane(z0);
  for (int z = z0; z < z1; ++z) {
    const float next = z + 1 < b.bz ? plane(z + 1) : -1.0f;
    if (inside) {
      float v = fmaxf(fmaxf(prev, cur), next);
      const long long g = grid_index(b, nx, ny, x, y, z);
      if (cover[g] == r) v = fmaxf(v, avg[g]);
      out[x + (long long)b.bx * y + pxy * z] = v;
    }
    prev = cur;
    cur = next;
  }
}

// Assignment (status 3 -> 2 where a valid cube contains the voxel), counts and the peak key
// (orderable SAR bits << 32 | (2^32 - 1 - q): the largest SAR, then the lowest index).
__global__ void sar_finish(long long n, int nx, int ny, Box b, const float* __restrict__ best, float* sar,
                           unsigned char* status, u64* counts, u64* peak) {
  u64 c1 = 0, c2 = 0, c3 = 0, key = 0;
  for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n; q += (long long)gridDim.x * blockDim.x) {
    unsigned char st = status[q];
    if (st == 3 && best) {
      const long long k = q / ((long long)nx * ny), rem = q - k * (long long)nx * ny;
      const int j = int(rem / nx), i = int(rem - (long long)j * nx);
      const float v = best[(i - b.x0) + (long long)b.bx * ((j - b.y0) + (long long)b.by * (k - b.z0))];
      if (v >= 0.0f) { sar[q] = v; status[q] = st = 2; }
    }
    if (st == 1) {
      ++c1;
      const u32 bits = __float_as_uint(sar[q] + 0.0f);  // -0 as +0 (equal for the CPU's >)
      const u32 ord = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
      key = max(key, (u64(ord) << 32) | u64(0xFFFFFFFFu - u32(q)));
    } else if (st == 2) {
      ++c2;
    } else if (st == 3) {
      ++c3;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    c1 += __shfl_down_sync(0xffffffffu, c1, o);
    c2 += __shfl_down_sync(0xffffffffu, c2, o);
    c3 += __shfl_down_sync(0xffffffffu, c3, o);
    key = max(key, __shfl_down_sync(0xffffffffu, key, o));
  }
  if ((threadIdx.x & 31) == 0) {
    if (c1) atomicAdd(counts, c1);
    if (c2) atomicAdd(counts + 1, c2);
    if (c3) atomicAdd(counts + 2, c3);
    if (key) atomicMax(peak, key);
  }
}

template <class T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { VEM_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

// Two pinned buffers for the staged copies, allocated at the first use and kept for the process
// (2 x 16 MiB); one averaging uses them at a time.
struct Staging {
  static constexpr std::size_t kChunk = std::size_t(16) << 20;
  static constexpr int kThreads = 8;  // host threads filling / draining a chunk
  std::mutex mu;
  char* buf[2] = {nullptr, nullptr};
  cudaEvent_t ev[2] = {nullptr, nullptr};
  bool staged = true;
  cudaStream_t s = nullptr;

  void prepare(cudaStream_t stream) {
    s = stream;
    staged = std::getenv("VEM_SAR_PLAIN_COPIES") == nullptr;  // benchmark switch: pageable cudaMemcpy
    if (!staged) return;
    for (int b = 0; b < 2; ++b) {
      if (!buf[b]) VEM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&buf[b]), kChunk, cudaHostAllocPortable));
      VEM_CUDA_CHECK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    }
  }
  void release() {
    for (auto& e : ev)
      if (e) { cudaEventDestroy(e); e = nullptr; }
  }
  void upload(void* dst, const void* src, std::size_t bytes) {
    if (!staged) {
      VEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
      return;
    }
    std::size_t c = 0;
    for (std::size_t off = 0; off < bytes; off += kChunk, ++c) {
      const int b = int(c & 1);
      const std::size_t len = std::min(kChunk, bytes - off);
      VEM_CUDA_CHECK(cudaEventSynchronize(ev[b]));  // the DMA that last used buffer b is done
      sar_detail::parallel_copy(buf[b], static_cast<const char*>(src) + off, len, kThreads);
      VEM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, buf[b], len, cudaMemcpyHostToDevice, s));
      VEM_CUDA_CHECK(cudaEventRecord(ev[b], s));
    }
  }
  void download(void* dst, const void* src, std::size_t bytes) {
    if (!staged) {
      VEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
      VEM_CUDA_CHECK(cudaStreamSynchronize(s));
      return;
    }
    const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
    auto issue = [&](std::size_t c) {
      const int b = int(c & 1);
      const std::size_t off = c * kChunk, len = std::min(kChunk, bytes - off);
      VEM_CUDA_CHECK(cudaEventSynchronize(ev[b]));
      VEM_CUDA_CHECK(cudaMemcpyAsync(buf[b], static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, s));
      VEM_CUDA_CHECK(cudaEventRecord(ev[b], s));
    };
    if (chunks > 0) issue(0);
    for (std::size_t c = 0; c < chunks; ++c) {
      if (c + 1 < chunks) issue(c + 1);  // buffer (c+1)&1 was drained in the previous iteration
      const int b = int(c & 1);
      const std::size_t off = c * kChunk, len = std::min(kChunk, bytes - off);
      VEM_CUDA_CHECK(cudaEventSynchronize(ev[b]));
      sar_detail::parallel_copy(static_cast<char*>(dst) + off, buf[b], len, kThreads);
    }
  }
};

Staging& staging() {
  static Staging* s = new Staging;  // never destroyed: its pinned buffers live as long as the process
  return *s;
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point& t) {
  const auto now = Clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

struct StreamGuard {
  cudaStream_t s = nullptr;
  StreamGuard() { VEM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~StreamGuard() {
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
};

}  // namespace

SarCudaStages sar_detail::average_cuda(const SarInput& in, const std::vector<double>& masses,
                                       std::vector<AveragedSar>& outs) {
  SarCudaStages st;
  const auto t_begin = Clock::now();
  auto t = t_begin;
  const YeeGrid& g = in.grid;
  const int nx = g.nx, ny = g.ny, nz = g.nz;
  const std::size_t N = std::size_t(g.cell_count());
  const std::size_t ns = std::size_t(nx + 1) * (ny + 1) * (nz + 1);
  if (N >= 0xFFFFFFFFull)
    fail("SAR: the CUDA averaging handles fewer than 2^32 - 1 voxels; the grid has ", N, " (use Backend::cpu)");
  if (ny > 65535 || nz > 65535)
    fail("SAR: the CUDA averaging needs ny, nz <= 65535 (the grid has ", ny, ", ", nz, "; use Backend::cpu)");
  const bool power_given = !in.power_density.empty();
  const double vv = g.dx * g.dy * g.dz;  // as sar.cpp's voxel_volume

  // Host output arrays, on their own threads while the GPU works: the storage is reserved, faulted
  // in on a few threads with huge pages requested (sar_detail::prefault), then resized (zeros).
  outs.assign(masses.size(), AveragedSar{});
  std::vector<std::future<void>> allocs;
  auto make = [N](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    v.reserve(N);
    sar_detail::prefault(v.data(), N * sizeof(T), 3);
    v.resize(N);
  };
  for (auto& o : outs) {
    AveragedSar* p = &o;
    allocs.push_back(std::async(std::launch::async, [p, make] { make(p->sar); }));
    allocs.push_back(std::async(std::launch::async, [p, make] { make(p->side_m); }));
    allocs.push_back(std::async(std::launch::async, [p, make] { make(p->status); }));
  }
  auto wait_allocs = [&](std::size_t q) {
    for (std::size_t a = 3 * q; a < 3 * q + 3; ++a) allocs[a].get();
  };

  Staging& sg = staging();
  std::lock_guard<std::mutex> lock(sg.mu);
  StreamGuard stream;
  const cudaStream_t s = stream.s;
  sg.prepare(s);
  st.staged_copies = sg.staged;
  struct EvRelease { Staging& sg; ~EvRelease() { sg.release(); } } ev_release{sg};

  // Device arrays. a: sigma or power density, then the side; b: |E|^2, then the cover.
  Dev<float> dens(N), a(N), b(N), avg(N);
  Dev<double> M(ns), P(ns);
  Dev<u32> C(ns);
  Dev<unsigned char> status(N);
  // Small values: [0] rho bits, [1..6] box, [8..] per mass: search start, max cover; counts, peak.
  const int nm = int(masses.size());
  Dev<int> small(8 + 2 * std::max(nm, 1));
  Dev<u64> stats(4);
  Dev<double> dmass(std::max(nm, 1));
  st.device_alloc += since(t);

  VEM_CUDA_CHECK(cudaMemsetAsync(M.p, 0, ns * sizeof(double), s));
  VEM_CUDA_CHECK(cudaMemsetAsync(P.p, 0, ns * sizeof(double), s));
  VEM_CUDA_CHECK(cudaMemsetAsync(C.p, 0, ns * sizeof(u32), s));
  std::vector<int> init(8 + 2 * std::max(nm, 1), -1);
  init[0] = 0;
  init[1] = init[2] = init[3] = INT_MAX;
  VEM_CUDA_CHECK(cudaMemcpyAsync(small.p, init.data(), init.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  if (nm > 0) VEM_CUDA_CHECK(cudaMemcpyAsync(dmass.p, masses.data(), nm * sizeof(double), cudaMemcpyHostToDevice, s));
  sg.upload(dens.p, in.density.data(), N * sizeof(float));
  if (power_given) {
    sg.upload(a.p, in.power_density.data(), N * sizeof(float));
  } else {
    sg.upload(a.p, in.sigma.data(), N * sizeof(float));
    sg.upload(b.p, in.e_squared.data(), N * sizeof(float));
  }
  VEM_CUDA_CHECK(cudaStreamSynchronize(s));
  st.upload += since(t);

  u32* rho_bits = reinterpret_cast<u32*>(small.p);
  int* box = small.p + 1;
  int* start = small.p + 8;
  int* max_cover = small.p + 8 + nm;
  {
    const dim3 grid(unsigned((ny + kFillRows - 1) / kFillRows), unsigned(nz)), block(32, 8);
    sar_fill_scan_x<<<grid, block, 0, s>>>(nx, ny, dens.p, a.p, b.p, power_given, vv, M.p, P.p, C.p, rho_bits, box);
    VEM_CUDA_CHECK_LAUNCH("sar_fill_scan_x");
    sar_scan_y<<<dim3(unsigned((nx + 127) / 128), unsigned(nz)), 128, 0, s>>>(nx, ny, M.p, P.p, C.p);
    VEM_CUDA_CHECK_LAUNCH("sar_scan_y");
    sar_scan_z<<<dim3(unsigned((nx + 127) / 128), unsigned(ny)), 128, 0, s>>>(nx, ny, nz, M.p, P.p, C.p);
    VEM_CUDA_CHECK_LAUNCH("sar_scan_z");
    if (nm > 0) {
      sar_search_start<<<1, 32, 0, s>>>(nx, ny, nz, M.p, rho_bits, vv, dmass.p, nm, start);
      VEM_CUDA_CHECK_LAUNCH("sar_search_start");
    }
  }
  std::vector<int> head(8 + 2 * std::max(nm, 1));
  VEM_CUDA_CHECK(cudaMemcpyAsync(head.data(), small.p, head.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
  VEM_CUDA_CHECK(cudaStreamSynchronize(s));
  st.tables += since(t);
  const bool any_tissue = head[4] >= 0;
  const Box bx = any_tissue ? Box{head[1], head[2], head[3], head[4] - head[1] + 1, head[5] - head[2] + 1,
                                  head[6] - head[3] + 1}
                            : Box{0, 0, 0, 0, 0, 0};
  st.box_voxels = std::size_t(bx.bx) * bx.by * bx.bz;
  if (nm > 0) st.search_start = head[8];

  const Tabs tb{M.p, P.p, C.p, nx, ny, nz};
  float* side = a.p;
  int* cover = reinterpret_cast<int*>(b.p);
  const dim3 gblock(32, 4, 1), ggrid(unsigned((nx + 31) / 32), unsigned((ny + 3) / 4), unsigned(nz));
  int sms = 132;
  {
    int dev = 0;
    VEM_CUDA_CHECK(cudaGetDevice(&dev));
    VEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  }
  for (int q = 0; q < nm; ++q) {
    AveragedSar& out = outs[q];
    out.target_mass_kg = masses[q];
    sar_grow<<<ggrid, gblock, 0, s>>>(tb, dens.p, masses[q], g.dx, start + q, avg.p, side, cover, status.p,
                                      max_cover + q);
    VEM_CUDA_CHECK_LAUNCH("sar_grow");
    int rmax = -1;
    VEM_CUDA_CHECK(cudaMemcpyAsync(&rmax, max_cover + q, sizeof(int), cudaMemcpyDeviceToHost, s));
    VEM_CUDA_CHECK(cudaStreamSynchronize(s));
    st.grow += since(t);
    st.max_cover = rmax;

    // Assignment: U_rmax = V_rmax, U_r = max(D(U_{r+1}), V_r), best = U_0, over the tissue box.
    std::unique_ptr<Dev<float>> u, tmp;
    if (rmax >= 0) {
      const std::size_t nb = st.box_voxels;
      u = std::make_unique<Dev<float>>(nb);
      tmp = std::make_unique<Dev<float>>(nb);
      const dim3 sblock(32, 4, 1), sgrid(unsigned((bx.bx + 31) / 32), unsigned((bx.by + 3) / 4), unsigned(bx.bz));
      sar_seed_top<<<sgrid, sblock, 0, s>>>(bx, nx, ny, rmax, avg.p, cover, u->p);
      VEM_CUDA_CHECK_LAUNCH("sar_seed_top");
      const dim3 dblock(32, 8, 1),
          dgrid(unsigned((bx.bx + 31) / 32), unsigned((bx.by + 7) / 8), unsigned((bx.bz + kDilateDz - 1) / kDilateDz));
      for (int r = rmax - 1; r >= 0; --r) {
        sar_dilate<<<dgrid, dblock, 0, s>>>(bx, nx, ny, r, avg.p, cover, u->p, tmp->p);
        std::swap(u->p, tmp->p);
      }
      VEM_CUDA_CHECK_LAUNCH("sar_dilate");
      VEM_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    st.dilate += since(t);

    VEM_CUDA_CHECK(cudaMemsetAsync(stats.p, 0, 4 * sizeof(u64), s));
    sar_finish<<<unsigned(8 * sms), 256, 0, s>>>((long long)N, nx, ny, bx, u ? u->p : nullptr, avg.p, status.p,
                                                stats.p, stats.p + 3);
    VEM_CUDA_CHECK_LAUNCH("sar_finish");
    u64 hs[4];
    VEM_CUDA_CHECK(cudaMemcpyAsync(hs, stats.p, sizeof(hs), cudaMemcpyDeviceToHost, s));
    VEM_CUDA_CHECK(cudaStreamSynchronize(s));
    u.reset();
    tmp.reset();
    st.finish += since(t);

    wait_allocs(std::size_t(q));
    st.alloc_wait += since(t);
    sg.download(out.sar.data(), avg.p, N * sizeof(float));
    sg.download(out.side_m.data(), side, N * sizeof(float));
    sg.download(out.status.data(), status.p, N);
    st.download += since(t);

    out.valid = std::size_t(hs[0]);
    out.assigned = std::size_t(hs[1]);
    out.unassigned = std::size_t(hs[2]);
    if (hs[3] != 0) {
      const std::size_t pq = std::size_t(0xFFFFFFFFu - u32(hs[3] & 0xFFFFFFFFu));
      out.peak = out.sar[pq];
      out.peak_voxel = {int(pq % nx), int((pq / nx) % ny), int(pq / (std::size_t(nx) * ny))};
      out.peak_side_m = out.side_m[pq];
    }
  }
  st.total = std::chrono::duration<double>(Clock::now() - t_begin).count();
  return st;
}

}  // namespace vem
