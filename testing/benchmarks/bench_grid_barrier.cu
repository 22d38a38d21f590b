// Grid barriers of a cooperative launch, timed alone (issue 16: the persistent kernel steps small
// grids with two grid barriers a step; this says what one barrier costs and whether another
// barrier than cooperative_groups' grid.sync costs less). Not a test.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o bench_grid_barrier testing/benchmarks/bench_grid_barrier.cu
//   ./bench_grid_barrier [iterations]
// (standalone, not in the CMake build: it needs nothing of the project; session 33's rows are in
// results/fdtd_session33_h200.json, call 1)
//
// For each launch shape (resident blocks a multiprocessor x threads a block, the whole GPU
// resident), the time of `iterations` barriers in one launch divided by their count, for:
//   cg        cooperative_groups::this_grid().sync();
//   flat      one counter: each block's thread 0 adds 1 (after a fence) and waits until the
//             counter reaches the phase's total (acquire loads);
//   tree G    blocks in groups of G: a group's counter (own 128-byte line), the group's last
//             arrival adds 1 to the top counter, every block waits on the top counter;
//   tree2 G   as tree, but only each group's first block waits on the top counter and then
//             raises the group's release word, on which the group's other blocks wait.
// Optionally with `spread` work between barriers: each thread adds up `work` float loads from
// an L2-resident array (so the barrier's wait includes the blocks' skew, as in the kernel).
// Output: one JSON line a row on stdout.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

constexpr int kLine = 32;  // words between counters (128 bytes)

__device__ __forceinline__ float busy(const float* data, int n, int work, int phase) {
  float s = 0.0f;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int q = 0; q < work; ++q) s += __ldcg(data + ((t * 7 + q * 4099 + phase * 131) % n));
  return s;
}

// mode 0 cg, 1 flat, 2 tree, 3 tree2
template <int MODE>
__global__ void barriers(unsigned* counters, int iters, int group, const float* data, int n, int work, float* sink) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const unsigned nb = gridDim.x;
  const unsigned ng = (nb + group - 1) / group;
  const unsigned grp = blockIdx.x / group;
  const unsigned gsize = min(unsigned(group), nb - grp * group);
  unsigned* top = counters;
  unsigned* sub = counters + kLine * (1 + grp);
  unsigned* rel = counters + kLine * (1 + ng + grp);
  float acc = 0.0f;
  for (int it = 0; it < iters; ++it) {
    if (work) acc += busy(data, n, work, it);
    if (MODE == 0) {
      grid.sync();
      continue;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned phase = unsigned(it) + 1;
      if (MODE == 1) {
        atom_add_acq_rel(top, 1);
        while (ld_acquire(top) < nb * phase) {
        }
      } else {
        const unsigned old = atom_add_acq_rel(sub, 1);
        if (old == gsize * phase - 1) atom_add_acq_rel(top, 1);
        if (MODE == 2 || blockIdx.x % group == 0) {
          while (ld_acquire(top) < ng * phase) {
          }
          if (MODE == 3) st_release(rel, phase);
        } else {
          while (ld_acquire(rel) < phase) {
          }
        }
      }
    }
    __syncthreads();
  }
  if (acc == 12345.0f) *sink = acc;
}

template <int MODE>
double time_mode(int blocks, int threads, int iters, int group, const float* data, int n, int work, unsigned* counters,
                 float* sink) {
  CK(cudaMemset(counters, 0, sizeof(unsigned) * kLine * (2 + 2 * blocks)));
  void* args[] = {&counters, &iters, &group, &data, &n, &work, &sink};
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  // warm-up
  int one = 10;
  void* args1[] = {&counters, &one, &group, &data, &n, &work, &sink};
  CK(cudaLaunchCooperativeKernel((void*)barriers<MODE>, blocks, threads, args1, 0, 0));
  CK(cudaDeviceSynchronize());
  CK(cudaMemset(counters, 0, sizeof(unsigned) * kLine * (2 + 2 * blocks)));
  CK(cudaEventRecord(a));
  CK(cudaLaunchCooperativeKernel((void*)barriers<MODE>, blocks, threads, args, 0, 0));
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms * 1e3 / iters;
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20000;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int n = 1 << 20;
  float* data = nullptr;
  float* sink = nullptr;
  unsigned* counters = nullptr;
  CK(cudaMalloc(&data, n * sizeof(float)));
  CK(cudaMemset(data, 0, n * sizeof(float)));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMalloc(&counters, sizeof(unsigned) * kLine * (2 + 2 * 8 * sms)));
  const int shapes[][2] = {{4, 256}, {2, 512}, {1, 1024}, {8, 128}};
  for (int work : {0, 16}) {
    for (auto& s : shapes) {
      const int blocks = s[0] * sms, threads = s[1];
      auto row = [&](const char* mode, int group, double us) {
        std::printf("{\"device\": \"%s\", \"blocks_per_sm\": %d, \"threads\": %d, \"blocks\": %d, \"work_loads\": %d, "
                    "\"barrier\": \"%s\", \"group\": %d, \"us_per_iteration\": %.4f}\n",
                    prop.name, s[0], threads, blocks, work, mode, group, us);
        std::fflush(stdout);
      };
      const int it = work ? iters / 4 : iters;
      row("cg", 0, time_mode<0>(blocks, threads, it, 1, data, n, work, counters, sink));
      row("flat", 0, time_mode<1>(blocks, threads, it, 1, data, n, work, counters, sink));
      for (int g : {8, 16, 33})
        row("tree", g, time_mode<2>(blocks, threads, it, g, data, n, work, counters, sink));
      for (int g : {8, 16, 33})
        row("tree2", g, time_mode<3>(blocks, threads, it, g, data, n, work, counters, sink));
    }
  }
  return 0;
}
