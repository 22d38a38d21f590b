// Small-grid stepping of the CUDA engine (issue 16): CUDA graphs over chunks of time steps and an
// L2 persisting access-policy window over the field arrays. Included by fdtd_engine_cuda.cu (not
// compiled on its own: the name ends in .cuh); the engine keeps one GraphState and calls
// run_steps_graph() from do_steps() when a run is eligible (no extensions, no halo exchange, no
// fused source, no s44 array rotation: everything a step launches then comes from step_once).
//
// Graphs: a chunk of `chunk` steps is recorded by stream capture of the engine's own step_once()
// (the very launches of the direct path, with the same arguments: the fields are bit for bit
// those of the direct path) and replayed with one cudaGraphLaunch. Every chunk is captured again,
// because point-source values and probe slots change from step to step, and the captured graph
// is applied to the executable graph of that chunk length with cudaGraphExecUpdate (no new
// instantiation): capturing costs the host about what launching costs, but it overlaps the
// device's replay of the previous chunk, and on the device the kernels of a chunk follow each
// other without the per-launch gaps of stream launches. A failed capture (e.g. a driver without
// programmatic edges in graphs) is retried once without programmatic dependent launch, then
// graphs are switched off for the engine (one line on stderr) and the steps run directly
// (VEM_CUDA_GRAPH_STRICT=1 makes it an error instead: the tests set it).
//
// Measured on an H100 (testing/benchmarks/results/fdtd_small_grids_h100.md, same run): graphs
// +5.8 % at 64^3, +2.8 % at 96^3, +0.5-1 % at 128^3 and 160x160x93, +0 % at 192^3 (default on below
// 8 M cells, chunk 32; 8 and 128 measure the same); the L2 window -8 % at 64^3 and -39..-51 % at
// 96^3-192^3 (default off).
//
// L2 window: the field arrays (and the material index) as one access-policy window with
// hitProp persisting, attached to every stepping launch as a launch attribute (so it is captured
// into the graph's kernel nodes too); the persisting set-aside is sized to the window, at most
// the device's maximum. Same arithmetic: only the cache policy changes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "core/cuda_check.h"
#include "vem/core/error.h"

namespace vem {
namespace small_grid {

struct GraphState {
  bool enabled = false;   // EngineTuning::graph resolved
  bool failed = false;    // capture failed twice: direct stepping from then on
  bool pdl_in_graph = true;
  int chunk = 0;          // steps per captured graph
  cudaStream_t stream = nullptr;
  unsigned long long instantiate_flags = 0;  // cudaGraphInstantiate's flags
  std::map<int, cudaGraphExec_t> exec;  // by chunk length (at most a few: the full chunk, remainders)
  int captures = 0, updates = 0, instantiations = 0;

  GraphState() = default;
  GraphState(const GraphState&) = delete;
  GraphState& operator=(const GraphState&) = delete;
  ~GraphState() {
    for (auto& e : exec) cudaGraphExecDestroy(e.second);
    if (stream) cudaStreamDestroy(stream);
  }
};

// Records `count` steps, first step `first`, through step(s) while `launch_stream` points at the
// capture stream; returns the executable graph for that chunk length (updated or instantiated).
// Throws vem::Error on a capture failure (after ending the capture).
template <class StepFn>
cudaGraphExec_t capture_chunk(GraphState& gs, int first, int count, StepFn&& step, cudaStream_t& launch_stream) {
  VEM_CUDA_CHECK(cudaStreamBeginCapture(gs.stream, cudaStreamCaptureModeThreadLocal));
  launch_stream = gs.stream;
  try {
    for (int s = 0; s < count; ++s) step(first + s);
  } catch (...) {
    launch_stream = nullptr;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(gs.stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    throw;
  }
  launch_stream = nullptr;
  cudaGraph_t graph = nullptr;
  VEM_CUDA_CHECK(cudaStreamEndCapture(gs.stream, &graph));
  ++gs.captures;
  cudaGraphExec_t exec = nullptr;
  auto it = gs.exec.find(count);
  if (it != gs.exec.end()) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(it->second, graph, &info) == cudaSuccess) {
      exec = it->second;
      ++gs.updates;
    } else {
      cudaGetLastError();
      cudaGraphExecDestroy(it->second);
      gs.exec.erase(it);
    }
  }
  if (!exec) {
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, gs.instantiate_flags);
    cudaGraphDestroy(graph);
    graph = nullptr;
    if (e != cudaSuccess) {
      cudaGetLastError();
      fail("cudaGraphInstantiate: ", cudaGetErrorString(e));
    }
    ++gs.instantiations;
    gs.exec[count] = exec;
  }
  if (graph) cudaGraphDestroy(graph);
  return exec;
}

// Runs n steps from `first`: captured chunks replayed on gs.stream, or directly (step(s) on the
// default stream) when graphs are off or have failed. `pdl` is the engine's programmatic-launch
// flag (switched off for captures when the first capture with it failed).
template <class StepFn>
void run_steps_graph(GraphState& gs, int n, int first, StepFn&& step, cudaStream_t& launch_stream, bool& pdl) {
  int done = 0;
  while (done < n && !gs.failed) {
    const int count = std::min(gs.chunk, n - done);
    cudaGraphExec_t exec = nullptr;
    const bool pdl_saved = pdl;
    try {
      if (!gs.pdl_in_graph) pdl = false;
      exec = capture_chunk(gs, first + done, count, step, launch_stream);
      pdl = pdl_saved;
    } catch (const Error& e) {
      pdl = pdl_saved;
      if (gs.pdl_in_graph && pdl_saved) {
        gs.pdl_in_graph = false;  // retry this chunk without programmatic dependent launch
        std::fprintf(stderr, "VoxelEM CUDA engine: CUDA graph capture with programmatic launch failed (%s); "
                     "capturing without it\n", e.what());
        continue;
      }
      // VEM_CUDA_GRAPH_STRICT=1 (the tests): a failed capture is an error, not a quiet fallback.
      const char* strict = std::getenv("VEM_CUDA_GRAPH_STRICT");
      if (strict && *strict && *strict != '0') throw;
      gs.failed = true;
      std::fprintf(stderr, "VoxelEM CUDA engine: CUDA graph capture failed (%s); stepping without graphs\n",
                   e.what());
      break;
    }
    VEM_CUDA_CHECK(cudaGraphLaunch(exec, gs.stream));
    done += count;
  }
  for (; done < n; ++done) step(first + done);
}

// The L2 persisting window over [lo, hi) (the span of the field arrays and the index); false
// when the device has no persisting L2 or the span is empty. Sets the device's persisting
// set-aside (a device-wide limit) to min(span, maximum).
inline bool make_l2_window(const cudaDeviceProp& prop, const char* lo, const char* hi, cudaAccessPolicyWindow& w) {
  if (prop.persistingL2CacheMaxSize <= 0 || prop.accessPolicyMaxWindowSize <= 0 || hi <= lo) return false;
  const std::size_t span = std::size_t(hi - lo);
  const std::size_t bytes = std::min<std::size_t>(span, std::size_t(prop.accessPolicyMaxWindowSize));
  const std::size_t setaside = std::min<std::size_t>(bytes, std::size_t(prop.persistingL2CacheMaxSize));
  VEM_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, setaside));
  w = cudaAccessPolicyWindow{};
  w.base_ptr = const_cast<char*>(lo);
  w.num_bytes = bytes;
  w.hitRatio = float(std::min(1.0, double(setaside) / double(bytes)));
  w.hitProp = cudaAccessPropertyPersisting;
  w.missProp = cudaAccessPropertyStreaming;
  return true;
}

}  // namespace small_grid
}  // namespace vem
