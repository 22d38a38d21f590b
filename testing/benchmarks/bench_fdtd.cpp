// FDTD throughput benchmark (not a test). For cubic grids up to 512^3, with a 10-cell CPML on
// every face and lossy materials, for both material modes and both engines, reports
//   Mcells/s = steps * cells / seconds,
//   bytes moved per cell-step by our own count (below), achieved GB/s, and the fraction of the
//   device-to-device copy bandwidth measured in the same run (bytes read + written).
// Also sweeps the CUDA block shape and the coefficient-table placement at the largest size.
//
// Byte count per cell-step (ideal: every array touched once per kernel, neighbours from cache):
//   indexed:           E kernel: E read+write 24, H read 12, index 2  = 38; H kernel the same = 76
//   coefficient_array: E kernel: 24 + 12 + 6 coefficients * 4 = 60;      H kernel the same = 120
//   CPML slab samples, per phase: psi read+write 16, field read+write 16, source field 8,
//                      index 2 or coefficients 8: 42 (indexed) or 48 (arrays), both phases.
// Usage: bench_fdtd <out.json> [commit] [max_n] [cpu_max_n]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "vem/fdtd_engine.h"
#include "bench_common.h"

using namespace vem;

namespace {


// Lossy, heterogeneous model: 16 tissue-like materials in 8^3-cell blocks.
FdtdSetup make_setup(int n, MaterialMode mode, BoundaryType faces = BoundaryType::cpml) {
  FdtdSetup s;
  s.grid = {n, n, n, 1e-3, 1e-3, 1e-3};
  s.boundaries = BoundarySpec::all(faces, 10);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::int64_t cells = s.grid.cell_count();
  std::vector<int> label(cells);
  const int nb = (n + 7) / 8;
  std::vector<int> block_label(std::size_t(nb) * nb * nb);
  for (auto& v : block_label) v = int(16 * u(rng)) % 16;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        label[i + std::size_t(n) * (j + std::size_t(n) * k)] = block_label[i / 8 + nb * (j / 8 + nb * (k / 8))];
  std::vector<double> eps(16), sig(16);
  for (int m = 0; m < 16; ++m) { eps[m] = 1 + 60 * u(rng); sig[m] = 1.5 * u(rng); }
  s.material_mode = mode;
  if (mode == MaterialMode::indexed) {
    for (int m = 0; m < 16; ++m) s.materials.push_back(Material::isotropic("m" + std::to_string(m), eps[m], sig[m]));
    s.material_index.resize(cells);
    for (std::int64_t c = 0; c < cells; ++c) s.material_index[c] = std::uint16_t(label[c]);
  } else {
    s.medium.eps_r.assign(1, std::vector<float>(cells));
    s.medium.sigma_e.assign(1, std::vector<float>(cells));
    for (std::int64_t c = 0; c < cells; ++c) {
      s.medium.eps_r[0][c] = float(eps[label[c]]);
      s.medium.sigma_e[0][c] = float(sig[label[c]]);
    }
  }
  PointSource src;
  src.i = n / 2; src.j = n / 2; src.k = n / 2;
  src.waveform = Waveform::modulated_gaussian(10e9, 10e9);
  s.sources = {src};
  return s;
}

double slab_fraction(const FdtdOperator& op) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  double samples = 0;
  for (const auto& s : op.cpml_slabs()) {
    const double across = double(n[(s.axis + 1) % 3] + 1) * (n[(s.axis + 2) % 3] + 1);
    samples += across * 0.5 * ((s.e_end - s.e_begin + 1) + (s.h_end - s.h_begin + 1));
  }
  return samples / double(g.cell_count());
}

struct Result {
  std::string engine, mode, table;
  int n, bx, by, chunk, steps;
  double seconds, mcells, bytes_per_cell, gbs, fraction;
};

Result time_engine(const FdtdOperator& op, Backend backend, const EngineTuning& tuning, double target_s,
                   double copy_gbs) {
  auto eng = make_engine(op, backend, 0, nullptr, tuning);
  const double cells = double(op.grid().cell_count());
  // Warm-up (module load, first touch), then calibrate the step count to ~target_s.
  auto t0 = std::chrono::steady_clock::now();
  eng->run(backend == Backend::cpu ? 1 : 5);
  double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double per_step = warm / (backend == Backend::cpu ? 1 : 5);
  int steps = std::max(3, int(target_s / std::max(per_step, 1e-6)));
  steps = std::min(steps, 20000);
  std::vector<double> secs;
  const int reps = backend == Backend::cpu ? 1 : 3;
  for (int r = 0; r < reps; ++r) {
    t0 = std::chrono::steady_clock::now();
    eng->run(steps, {}, steps);  // run() synchronizes with the device at the end
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  const double s = secs[secs.size() / 2];
  const bool indexed = op.material_mode() == MaterialMode::indexed;
  const double bulk = indexed ? 76.0 : 120.0;
  const double bpc = bulk + 2.0 * (indexed ? 42.0 : 48.0) * slab_fraction(op);
  Result res;
  res.engine = backend_name(backend);
  res.mode = indexed ? "indexed" : "coefficient_array";
  res.table = !indexed ? "-" : (tuning.table == EngineTuning::TablePlacement::global ? "global" : "constant");
  res.n = op.grid().nx;
  res.bx = tuning.block_x ? tuning.block_x : 32;
  res.by = tuning.block_y ? tuning.block_y : 4;
  res.chunk = tuning.z_chunk ? tuning.z_chunk : 1;
  res.steps = steps;
  res.seconds = s;
  res.mcells = steps * cells / s / 1e6;
  res.bytes_per_cell = bpc;
  res.gbs = res.mcells * 1e6 * bpc / 1e9;
  res.fraction = copy_gbs > 0 && backend == Backend::cuda ? res.gbs / copy_gbs : 0;
  std::cerr << res.engine << " " << res.mode << " " << res.table << " n=" << res.n << " block " << res.bx << "x"
            << res.by << " chunk " << res.chunk << ": " << res.mcells << " Mcells/s, " << res.gbs << " GB/s\n";
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "profile") {
    // A few steps at 512^3 for a profiler (ncu) to count DRAM bytes per kernel.
    const FdtdOperator op(make_setup(argc > 2 ? std::atoi(argv[2]) : 512, MaterialMode::indexed));
    auto eng = make_engine(op, Backend::cuda);
    eng->run(3);
    return 0;
  }
  const std::string out = argc > 1 ? argv[1] : "bench_fdtd.json";
  const std::string commit = argc > 2 ? argv[2] : "unknown";
  const int max_n = argc > 3 ? std::atoi(argv[3]) : 512;
  const int cpu_max_n = argc > 4 ? std::atoi(argv[4]) : 256;
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  std::string why;
  const bool gpu = cuda_available(&why);
  std::cerr << "device " << device << ", copy bandwidth " << copy << " GB/s\n";

  std::vector<Result> results;
  std::vector<int> sizes;
  for (int n : {64, 128, 256, 384, 512})
    if (n <= max_n) sizes.push_back(n);
  // Tuning sweep first, at the largest size (indexed materials): block shape x z-chunk, then
  // table placement. The fastest configuration is used for the size/mode table below.
  EngineTuning best;
  if (gpu && !sizes.empty()) {
    const FdtdOperator op(make_setup(sizes.back(), MaterialMode::indexed));
    const int shapes[][2] = {{32, 4}, {32, 8}, {64, 4}};
    double best_rate = 0;
    for (int chunk : {1, 8, 64, 1024}) {
      for (auto& sh : shapes) {
        EngineTuning t;
        t.block_x = sh[0];
        t.block_y = sh[1];
        t.z_chunk = chunk;
        results.push_back(time_engine(op, Backend::cuda, t, 0.4, copy));
        results.back().engine = "cuda-sweep";
        if (results.back().mcells > best_rate) { best_rate = results.back().mcells; best = t; }
      }
    }
    EngineTuning t = best;
    t.table = EngineTuning::TablePlacement::global;
    results.push_back(time_engine(op, Backend::cuda, t, 1.0, copy));
    results.back().engine = "cuda-sweep";
  }
  // Bulk update alone (PEC faces, no CPML) at the largest size: separates the CPML cost.
  if (gpu && !sizes.empty()) {
    for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
      const FdtdOperator op(make_setup(sizes.back(), mode, BoundaryType::pec));
      results.push_back(time_engine(op, Backend::cuda, best, 1.0, copy));
      results.back().engine = "cuda-pec-only";
    }
  }
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    for (int n : sizes) {
      const FdtdOperator op(make_setup(n, mode));
      if (gpu) results.push_back(time_engine(op, Backend::cuda, best, 1.0, copy));
      if (n <= cpu_max_n) results.push_back(time_engine(op, Backend::cpu, {}, 2.0, copy));
    }
  }

  const std::string date = vem_bench::utc_date();
  std::ofstream js(out);
  js << "{\n  \"benchmark\": \"fdtd\",\n  \"device\": \"" << device << "\",\n  \"commit\": \"" << commit
     << "\",\n  \"date\": \"" << date << "\",\n  \"copy_bandwidth_GBps\": " << copy
     << ",\n  \"cpml_cells\": 10,\n  \"results\": [\n";
  for (std::size_t r = 0; r < results.size(); ++r) {
    const Result& x = results[r];
    js << "    {\"engine\": \"" << x.engine << "\", \"material_mode\": \"" << x.mode << "\", \"table\": \"" << x.table
       << "\", \"n\": " << x.n << ", \"block\": [" << x.bx << ", " << x.by << "], \"z_chunk\": " << x.chunk << ", \"steps\": " << x.steps
       << ", \"seconds\": " << x.seconds << ", \"mcells_per_s\": " << x.mcells
       << ", \"bytes_per_cell_step\": " << x.bytes_per_cell << ", \"achieved_GBps\": " << x.gbs
       << ", \"fraction_of_copy_bw\": " << x.fraction << "}" << (r + 1 < results.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";

  // Markdown table on stdout.
  std::cout << "| engine | materials | table | n | block | z-chunk | Mcells/s | B/cell-step | GB/s | of copy BW |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Result& x : results)
    std::cout << "| " << x.engine << " | " << x.mode << " | " << x.table << " | " << x.n << "^3 | " << x.bx << "x"
              << x.by << " | " << (x.engine == "cpu" ? std::string("-") : std::to_string(x.chunk)) << " | " << std::fixed << std::setprecision(0) << x.mcells << " | " << std::setprecision(1)
              << x.bytes_per_cell << " | " << std::setprecision(0) << x.gbs << " | " << std::setprecision(2)
              << x.fraction << " |\n";
  std::cout << "\ncopy bandwidth (D2D, read+write): " << std::setprecision(0) << copy << " GB/s on " << device << "\n";
  return 0;
}
