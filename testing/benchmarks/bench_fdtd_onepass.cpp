// One pass per time step and memory per cell (issue 16; not a test).
//   bench_fdtd_onepass rates <out.json> [commit] [n]
//     bench_fdtd's model (n^3, 1 mm cells, 10-cell CPML on every face, 16 lossy materials in 8^3
//     blocks, one point source) stepped by the two-pass kernels and the one-pass kernel
//     (EngineTuning::step) with its variants, indexed and coefficient arrays, in one run; copy
//     bandwidth of the same run. Ideal bytes per cell-step (each array once per kernel):
//       two-pass bulk 76 (indexed) / 72 + 4 per stored coefficient array (120 with 12 arrays);
//       one-pass bulk 50 / 48 + 4 per stored array (E, H read 24, written 24, index 2 or the
//       arrays: the engine stores arrays equal to another of their kind once, 8 of 12 for this
//       isotropic, edge-averaged model; the sessions before this counted 98 for 12 arrays);
//       CPML slabs: 2 x 42 (indexed) / 2 x 48 (arrays) per slab sample (bench_fdtd);
//       one pass only: E computed again where H was corrected (each slab's H psi box grown by one
//       sample per axis; edge overlaps are computed twice, as counted): E read 12, written 12,
//       H 12, index 2 (38) or coefficients 24 (60) per such sample;
//       one pass with the CPML folded in (the default, rows "one_pass"; "one_pass_slabs": the slab
//       kernels): bulk + 32 per slab sample (two psi read and written for H and for E).
//     `rates <out.json> <commit> <n> quick`: the folded one-pass rows at 16 planes only.
//   bench_fdtd_onepass storage <out.json> [commit] [n...]
//     The field storages (FdtdSetup::field_storage: float32, float16, bfloat16) on the same model,
//     indexed, the engine's automatic step (persistent below 8 M cells, one pass above), and the
//     one-pass step forced, for each n; the copy bandwidth of the same run. Ideal bytes with the
//     bulk field bytes halved for the 2-byte storages (bench_models.h).
//   bench_fdtd_onepass memory <out.json> [commit] [n...]
//     Memory per cell of the CUDA engine (two-pass, indexed) from its allocations (cudaMemGetInfo
//     before / after the engine) against our count from the layout, for the first n of the list
//     whose predicted bytes fit the free memory; then steps it a few times (Mcells/s).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_models.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

// bench_fdtd's model; the labels filled block by block (large grids).
FdtdSetup make_setup(int n, MaterialMode mode) {
  FdtdSetup s;
  s.grid = {n, n, n, 1e-3, 1e-3, 1e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, 10);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::int64_t cells = s.grid.cell_count();
  const int nb = (n + 7) / 8;
  std::vector<std::uint16_t> block_label(std::size_t(nb) * nb * nb);
  for (auto& v : block_label) v = std::uint16_t(int(16 * u(rng)) % 16);
  std::vector<double> eps(16), sig(16);
  for (int m = 0; m < 16; ++m) { eps[m] = 1 + 60 * u(rng); sig[m] = 1.5 * u(rng); }
  s.material_mode = mode;
  auto label = [&](std::int64_t c) {
    const int i = int(c % n);
    const std::int64_t r = c / n;
    const int j = int(r % n), k = int(r / n);
    return block_label[i / 8 + std::size_t(nb) * (j / 8 + std::size_t(nb) * (k / 8))];
  };
  if (mode == MaterialMode::indexed) {
    for (int m = 0; m < 16; ++m) s.materials.push_back(Material::isotropic("m" + std::to_string(m), eps[m], sig[m]));
    s.material_index.resize(cells);
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c) s.material_index[c] = label(c);
  } else {
    s.medium.eps_r.assign(1, std::vector<float>(cells));
    s.medium.sigma_e.assign(1, std::vector<float>(cells));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c) {
      s.medium.eps_r[0][c] = float(eps[label(c)]);
      s.medium.sigma_e[0][c] = float(sig[label(c)]);
    }
  }
  PointSource src;
  src.i = n / 2; src.j = n / 2; src.k = n / 2;
  src.waveform = Waveform::modulated_gaussian(10e9, 10e9);
  s.sources = {src};
  s.probes = {{"ez", Component::Ez, n / 2 + 1, n / 2, n / 2}};
  return s;
}

struct Row {
  std::string variant, mode;
  int tile_y = 0, chunk = 0, steps = 0;
  double seconds = 0, mcells = 0, bytes = 0, gbs = 0, fraction = 0, one_pass_steps = 0;
  int arrays_stored = 0;  // coefficient arrays held by the engine (arrays mode; 0: table)
};

// Steps of about target_s seconds (measured from 5 warm-up steps, 3 .. 20000), run three times:
// the median wall time; *steps_out the steps of each run.
double median_seconds(FdtdEngine& eng, double target_s, int* steps_out) {
  auto t0 = std::chrono::steady_clock::now();
  eng.run(5);
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5;
  const int steps = std::min(20000, std::max(3, int(target_s / std::max(per, 1e-6))));
  std::vector<double> secs;
  for (int r = 0; r < 3; ++r) {
    t0 = std::chrono::steady_clock::now();
    eng.run(steps, {}, steps);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  *steps_out = steps;
  return secs[1];
}

Row time_variant(const FdtdOperator& op, const std::string& name, EngineTuning t, double copy, double target_s) {
  const bool indexed = op.material_mode() == MaterialMode::indexed;
  if (!indexed) t.coefficients = EngineTuning::Coefficients::arrays;  // the arrays, as bench_fdtd's rows
  auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
  int steps = 0;
  const double seconds = median_seconds(*eng, target_s, &steps);
  const bool one = t.step == EngineTuning::Step::one_pass;
  const bool folded = one && t.onepass_cpml != EngineTuning::OnePassCpml::slab_kernels;
  Row r;
  r.variant = name;
  r.mode = indexed ? "indexed" : "coefficient_array";
  r.tile_y = one ? (t.onepass_tile_y ? t.onepass_tile_y : 8) : 0;
  r.chunk = one ? (t.onepass_z_chunk ? t.onepass_z_chunk : 16) : 0;
  r.steps = steps;
  r.seconds = seconds;
  r.mcells = steps * double(op.grid().cell_count()) / r.seconds / 1e6;
  r.arrays_stored = eng->coefficient_arrays_stored();
  r.bytes = vem_bench::ideal_bytes_per_cell(op, one, folded, r.arrays_stored);
  r.gbs = r.mcells * 1e6 * r.bytes / 1e9;
  r.fraction = copy > 0 ? r.gbs / copy : 0;
  r.one_pass_steps = double(eng->one_pass_steps());
  std::cerr << name << " " << r.mode << ": " << r.mcells << " Mcells/s, " << r.bytes << " B/cell-step, "
            << r.fraction << " of copy BW, one-pass steps " << r.one_pass_steps << "\n";
  return r;
}

// The opening of a rates JSON file, up to the results array.
void rates_header(std::ofstream& js, const char* benchmark, const std::string& device, const std::string& commit,
                  const std::string& date, int n, double copy) {
  js << std::setprecision(6) << "{\n  \"benchmark\": \"" << benchmark << "\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << date << "\",\n  \"n\": " << n
     << ",\n  \"copy_bandwidth_GBps\": " << copy << ",\n  \"results\": [\n";
}

int run_rates(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_onepass.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  const int n = argc > 4 ? std::atoi(argv[4]) : 512;
  const bool quick = argc > 5 && std::string(argv[5]) == "quick";  // the best rows only
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  using ST = EngineTuning::Step;
  std::vector<Row> rows;
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(make_setup(n, mode));
    using OC = EngineTuning::OnePassCpml;
    auto tun = [](ST s, int ty, int ch, EngineTuning::TablePlacement tp, OC cp = OC::folded) {
      EngineTuning t;
      t.step = s;
      t.onepass_tile_y = ty;
      t.onepass_z_chunk = ch;
      t.table = tp;
      t.onepass_cpml = cp;
      return t;
    };
    using TP = EngineTuning::TablePlacement;
    // one_pass_slabs: the CPML by the slab kernels, E computed again (the step before the CPML
    // was folded in); one_pass: the CPML folded into the pass.
    if (quick) {
      for (const int ty : {8, 16, 4})
        rows.push_back(time_variant(op, "one_pass", tun(ST::one_pass, ty, 16, TP::automatic), copy, 1.0));
      continue;
    }
    rows.push_back(time_variant(op, "two_pass", tun(ST::two_pass, 0, 0, TP::automatic), copy, 1.0));
    rows.push_back(time_variant(op, "one_pass_slabs", tun(ST::one_pass, 8, 64, TP::automatic, OC::slab_kernels), copy, 1.0));
    if (mode == MaterialMode::indexed) {
      rows.push_back(time_variant(op, "one_pass_slabs", tun(ST::one_pass, 8, 16, TP::automatic, OC::slab_kernels), copy, 1.0));
      for (const int ty : {8, 4, 16})
        for (const int ch : {64, 16})
          rows.push_back(time_variant(op, "one_pass", tun(ST::one_pass, ty, ch, TP::automatic), copy, 1.0));
      for (const int ch : {32, 8})
        rows.push_back(time_variant(op, "one_pass", tun(ST::one_pass, 8, ch, TP::automatic), copy, 1.0));
      rows.push_back(time_variant(op, "one_pass_global_table", tun(ST::one_pass, 8, 16, TP::global), copy, 1.0));
      rows.push_back(time_variant(op, "default", EngineTuning{}, copy, 1.0));
      rows.push_back(time_variant(op, "two_pass_again", tun(ST::two_pass, 0, 0, TP::automatic), copy, 1.0));
    } else {
      for (const int ch : {64, 16})
        rows.push_back(time_variant(op, "one_pass", tun(ST::one_pass, 8, ch, TP::automatic), copy, 1.0));
      rows.push_back(time_variant(op, "default", EngineTuning{}, copy, 1.0));
    }
  }
  const std::string date = vem_bench::utc_date();
  std::ofstream js(out);
  rates_header(js, "fdtd_onepass", device, commit, date, n, copy);
  for (std::size_t q = 0; q < rows.size(); ++q) {
    const Row& r = rows[q];
    js << "    {\"variant\": \"" << r.variant << "\", \"materials\": \"" << r.mode << "\", \"tile_y\": " << r.tile_y
       << ", \"z_chunk\": " << r.chunk << ", \"steps\": " << r.steps << ", \"seconds\": " << r.seconds
       << ", \"mcells_per_s\": " << r.mcells << ", \"bytes_per_cell_step\": " << r.bytes << ", \"GBps\": " << r.gbs
       << ", \"fraction_of_copy_bw\": " << r.fraction << ", \"one_pass_steps\": " << r.one_pass_steps
       << ", \"coefficient_arrays_stored\": " << r.arrays_stored << "}"
       << (q + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  std::cout << device << ", " << date << ", commit " << commit << ", copy bandwidth " << std::setprecision(0)
            << std::fixed << copy << " GB/s, n = " << n << "\n\n| variant | materials | tile | z-chunk | Mcells/s | "
            << "B/cell-step | GB/s | of copy BW |\n|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows)
    std::cout << "| " << r.variant << " | " << r.mode << " | " << (r.tile_y ? "32x" + std::to_string(r.tile_y) : "-")
              << " | " << (r.chunk ? std::to_string(r.chunk) : "-") << " | " << std::setprecision(0) << r.mcells
              << " | " << std::setprecision(1) << r.bytes << " | " << std::setprecision(0) << r.gbs << " | "
              << std::setprecision(2) << r.fraction << " |\n";
  return 0;
}

// VEM_TEMPORAL_ROWS=a,b,...: only the rows of run_temporal whose variant name is one of these (with
// the quick switches, a shorter call on the device); unset: every row of the selection.
bool row_wanted(const std::string& name) {
  const char* rows = std::getenv("VEM_TEMPORAL_ROWS");
  if (!rows) return true;
  std::istringstream list(rows);
  for (std::string r; std::getline(list, r, ',');)
    if (r == name) return true;
  return false;
}

// Temporal blocking (EngineTuning::temporal_blocking) against the one-pass step in one run, 512^3
// (or n), indexed and coefficient arrays: the one-pass default, two steps per pass with interior
// blocks of 32 x 16 / 32 x 32 threads and z chunks of 64 / 32, the one-pass step again (the
// drift of the run); VEM_TEMPORAL_QUICK adds the measurement switches' rows and the material table
// in global memory instead of the constant bank (*_global_table), or the constant bank instead of
// the two-step and persistent kernels' shared-memory copy (*_constant_table); VEM_TEMPORAL_ROWS
// (above) picks rows by name. Rates only: the bytes a step moves are measured with Nsight Compute.
int run_temporal(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_temporal.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  const int n = argc > 4 ? std::atoi(argv[4]) : 512;
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  struct TRow { std::string variant, mode; int ty, chunk, steps; double seconds, mcells; std::int64_t pairs; };
  std::vector<TRow> rows;
  using TB = EngineTuning::TemporalBlocking;
  for (MaterialMode mode : {MaterialMode::indexed, MaterialMode::coefficient_array}) {
    const FdtdOperator op(make_setup(n, mode));
    // env: a measurement switch of the engine set while the variant's engine is made (fdtd_engine_cuda.cu).
    // default: EngineTuning{} (what a user gets).
    // table: where the material table lives (EngineTuning::table; automatic: the constant bank when it fits).
    using TP = EngineTuning::TablePlacement;
    struct V { const char* name; TB tb; int ty, chunk; const char* env = nullptr; bool quick_only = false; TP table = TP::automatic; };
    const std::vector<V> all = {{"default", TB::automatic, 0, 0},
                          {"one_pass", TB::off, 0, 0},
                          {"one_pass_hoisted", TB::off, 0, 0, "VEM_ONEPASS_HOIST=1", true},
                          {"one_pass_global_table", TB::off, 0, 0, nullptr, true, TP::global},
                          {"two_steps_global_table", TB::two_steps, 16, 32, nullptr, true, TP::global},
                          {"default_global_table", TB::automatic, 0, 0, nullptr, true, TP::global},
                          {"two_steps", TB::two_steps, 16, 64},
                          {"two_steps", TB::two_steps, 16, 32},
                          {"two_steps_unaligned", TB::two_steps, 16, 32, "VEM_TWO_STEP_ALIGN=0", true},
                          {"two_steps_chained", TB::two_steps, 16, 32, "VEM_TWO_STEP_HOIST=0", true},
                          {"two_steps_pass_chunk_32", TB::two_steps, 16, 32, "VEM_TWO_STEP_PASS_CHUNK=32", true},
                          {"two_steps_interior_first", TB::two_steps, 16, 32, "VEM_TWO_STEP_ORDER=interior_first", true},
                          {"two_steps_constant_table", TB::two_steps, 16, 32, "VEM_SHARED_TABLE=0", true},
                          {"default_constant_table", TB::automatic, 0, 0, "VEM_SHARED_TABLE=0", true},
                          {"two_steps_interior_grid_1", TB::two_steps, 16, 32, "VEM_TWO_STEP_INTERIOR_GRID=1", true},
                          {"two_steps_interior_grid_2", TB::two_steps, 16, 32, "VEM_TWO_STEP_INTERIOR_GRID=2", true},
                          {"two_steps_interior_grid_3", TB::two_steps, 16, 32, "VEM_TWO_STEP_INTERIOR_GRID=3", true},
                          {"two_steps_interior_grid_1_first", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_INTERIOR_GRID=1 VEM_TWO_STEP_ORDER=interior_first", true},
                          {"two_steps_interior_grid_2_first", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_INTERIOR_GRID=2 VEM_TWO_STEP_ORDER=interior_first", true},
                          // the shell tiles (results/fdtd.md, sessions 23 and 24; on by default with
                          // temporal blocking, the interior forked after them from 16 M cells, before
                          // them below)
                          {"two_steps_no_shell", TB::two_steps, 16, 32, "VEM_TWO_STEP_SHELL=0", true},
                          {"default_no_shell", TB::automatic, 0, 0, "VEM_TWO_STEP_SHELL=0", true},
                          {"two_steps_shell", TB::two_steps, 16, 32, "VEM_TWO_STEP_SHELL=1", true},
                          {"two_steps_shell_beside", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_ORDER=interior_first", true},
                          {"two_steps_shell_after", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_ORDER=interior_after", true},
                          {"two_steps_shell_classes", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_SHELL_LAUNCH=classes", true},
                          {"two_steps_shell_unsplit", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_SHELL_GENERAL_CHUNK=0", true},
                          {"two_steps_shell_wide", TB::two_steps, 16, 32,
                           "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_SHELL_NARROW=0", true},
                          {"default_shell", TB::automatic, 0, 0, "VEM_TWO_STEP_SHELL=1", true},
                          // the shell tiles of two axes in classes of their own (sessions 24 and 25, the
                          // default) or general; the shell launch beside the rest's steps (session 25)
                          {"two_steps_shell_no_edges", TB::two_steps, 16, 32, "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_SHELL_EDGES=0",
                           true},
                          {"default_no_edges", TB::automatic, 0, 0, "VEM_TWO_STEP_SHELL_EDGES=0", true},
                          // the interior tiles as the shell launch's last blocks (session 34; the
                          // default from 2 M cells below 4 M only)
                          {"default_interior_in_shell", TB::automatic, 0, 0, "VEM_TWO_STEP_INTERIOR_IN_SHELL=1", true},
                          {"default_shell_stream", TB::automatic, 0, 0, "VEM_TWO_STEP_SHELL_STREAM=1", true},
                          {"default_shell_first", TB::automatic, 0, 0, "VEM_TWO_STEP_ORDER=shell_first", true},
                          // pairs in CUDA graphs (session 24); chunk 0: the engine's z chunk
                          {"two_steps_auto", TB::two_steps, 16, 0, nullptr, true},
                          {"two_steps_auto_graph", TB::two_steps, 16, 0, "VEM_TWO_STEP_GRAPH=1", true},
                          {"two_steps_shell_auto", TB::two_steps, 16, 0, "VEM_TWO_STEP_SHELL=1", true},
                          {"two_steps_shell_auto_graph", TB::two_steps, 16, 0, "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_GRAPH=1",
                           true},
                          {"default_graph", TB::automatic, 0, 0, "VEM_TWO_STEP_GRAPH=1", true},
                          {"default_shell_graph", TB::automatic, 0, 0, "VEM_TWO_STEP_SHELL=1 VEM_TWO_STEP_GRAPH=1", true},
                          {"two_steps", TB::two_steps, 32, 64},
                          {"one_pass_again", TB::off, 0, 0}};
    // The planes per block: two_steps_<interior z chunk>_<rest's planes per block>; chunk 0 and no
    // switch: the engine's choice (setup_two_step).
    const std::vector<V> chunks = {{"default", TB::automatic, 0, 0},
                                   {"one_pass", TB::off, 0, 0},
                                   {"two_steps_32_16", TB::two_steps, 16, 32, "VEM_TWO_STEP_PASS_CHUNK=16"},
                                   {"two_steps_16_16", TB::two_steps, 16, 16, "VEM_TWO_STEP_PASS_CHUNK=16"},
                                   {"two_steps_16_8", TB::two_steps, 16, 16, "VEM_TWO_STEP_PASS_CHUNK=8"},
                                   {"two_steps_8_8", TB::two_steps, 16, 8, "VEM_TWO_STEP_PASS_CHUNK=8"},
                                   {"two_steps_8_4", TB::two_steps, 16, 8, "VEM_TWO_STEP_PASS_CHUNK=4"},
                                   {"two_steps_automatic", TB::two_steps, 16, 0},
                                   {"one_pass_again", TB::off, 0, 0}};
    // VEM_TEMPORAL_QUICK=1: indexed, the one-pass step, 32 x 16 / 32 planes (or the engine's chunk) and
    // the switches only;
    // =chunks: indexed, the chunk rows.
    const char* quick_env = std::getenv("VEM_TEMPORAL_QUICK");
    const bool quick = quick_env != nullptr, chunk_rows = quick && std::string(quick_env) == "chunks";
    if (quick && mode != MaterialMode::indexed) continue;
    for (const V& v : chunk_rows ? chunks : all) {
      if (mode != MaterialMode::indexed && v.ty == 32) continue;
      if (v.quick_only && !quick) continue;
      if (!row_wanted(v.name)) continue;
      if (quick && !chunk_rows && v.ty != 0 && !(v.ty == 16 && (v.chunk == 32 || v.chunk == 0))) continue;
      EngineTuning t;
      if (v.tb != TB::automatic) t.step = EngineTuning::Step::one_pass;  // (default: both left to the engine)
      t.temporal_blocking = v.tb;
      t.two_step_tile_y = v.ty;
      t.two_step_z_chunk = v.chunk;
      t.table = v.table;
      // v.env: NAME=value, or several separated by spaces
      std::vector<std::string> env_names;
      if (v.env) {
        std::istringstream words(v.env);
        for (std::string e; words >> e;) {
          env_names.push_back(e.substr(0, e.find('=')));
          setenv(env_names.back().c_str(), e.substr(e.find('=') + 1).c_str(), 1);
        }
      }
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
      for (const std::string& name : env_names) unsetenv(name.c_str());
      TRow r;
      r.variant = v.name;
      r.mode = mode == MaterialMode::indexed ? "indexed" : "coefficient_array";
      r.ty = v.ty;
      r.chunk = v.chunk;
      r.seconds = median_seconds(*eng, 1.0, &r.steps);
      r.mcells = r.steps * double(op.grid().cell_count()) / r.seconds / 1e6;
      r.pairs = eng->two_step_steps();
      std::cerr << r.variant << " " << r.mode << " 32x" << r.ty << "/" << r.chunk << ": " << r.mcells
                << " Mcells/s, steps two per pass " << r.pairs << ", persistent " << eng->persistent_steps()
                << ", one pass " << eng->one_pass_steps() << "\n";
      rows.push_back(r);
    }
  }
  const std::string date = vem_bench::utc_date();
  std::ofstream js(out);
  rates_header(js, "fdtd_temporal_blocking", device, commit, date, n, copy);
  for (std::size_t q = 0; q < rows.size(); ++q) {
    const TRow& r = rows[q];
    js << "    {\"variant\": \"" << r.variant << "\", \"materials\": \"" << r.mode << "\", \"tile_y\": " << r.ty
       << ", \"z_chunk\": " << r.chunk << ", \"steps\": " << r.steps << ", \"seconds\": " << r.seconds
       << ", \"mcells_per_s\": " << r.mcells << ", \"two_step_steps\": " << r.pairs << "}"
       << (q + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  std::cout << device << ", " << date << ", commit " << commit << ", copy bandwidth " << std::setprecision(0)
            << std::fixed << copy << " GB/s, n = " << n << "\n\n| variant | materials | interior block | z-chunk | Mcells/s |\n"
            << "|---|---|---|---|---|\n";
  for (const TRow& r : rows)
    std::cout << "| " << r.variant << " | " << r.mode << " | " << (r.ty ? "32x" + std::to_string(r.ty) : "-") << " | "
              << (r.chunk ? std::to_string(r.chunk) : "-") << " | " << std::setprecision(0) << r.mcells << " |\n";
  return 0;
}

// For Nsight: 2 warm-up steps, then 4 steps of the one-pass step and 4 with two steps per pass
// (interior blocks 32 x ty, z chunk), indexed, n^3.
int run_profile(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[2]) : 512;
  const int ty = argc > 3 ? std::atoi(argv[3]) : 16;
  const int chunk = argc > 4 ? std::atoi(argv[4]) : 32;
  const FdtdOperator op(make_setup(n, MaterialMode::indexed));
  for (int tb = 0; tb < 2; ++tb) {
    EngineTuning t;
    t.step = EngineTuning::Step::one_pass;
    if (tb) {
      t.temporal_blocking = EngineTuning::TemporalBlocking::two_steps;
      t.two_step_tile_y = ty;
      t.two_step_z_chunk = chunk;
    }
    auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
    eng->run(2);
    eng->run(4);
    std::cerr << (tb ? "two steps per pass" : "one pass") << ": " << eng->two_step_steps() << " steps two per pass\n";
  }
  return 0;
}

int run_storage(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_storage.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  std::vector<int> sizes;
  for (int a = 4; a < argc; ++a) sizes.push_back(std::atoi(argv[a]));
  if (sizes.empty()) sizes = {512, 128, 64};
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  struct SRow { int n; std::string storage, step; double mcells, bytes, gbs, fraction; std::int64_t persistent, one_pass; };
  std::vector<SRow> rows;
  for (const int n : sizes) {
    FdtdSetup base = make_setup(n, MaterialMode::indexed);
    for (const char* step : {"automatic", "one_pass"}) {
      for (FieldStorage fs : {FieldStorage::float32, FieldStorage::float16, FieldStorage::bfloat16}) {
        FdtdSetup s = base;
        s.field_storage = fs;
        // The 1 A m source in 1 mm cells drives E to ~1e8 V/m, past float16's 65504 (run() would
        // throw): scaled for every storage alike (the rates do not depend on the values).
        for (PointSource& p : s.sources) p.amplitude *= 1e-6;
        const FdtdOperator op(s);
        EngineTuning t;
        if (std::string(step) == "one_pass") t.step = EngineTuning::Step::one_pass;
        auto eng = make_engine(op, Backend::cuda, 0, nullptr, t);
        int steps = 0;
        const double seconds = median_seconds(*eng, 1.0, &steps);
        SRow r;
        r.n = n;
        r.storage = field_storage_name(fs);
        r.step = step;
        r.mcells = steps * double(op.grid().cell_count()) / seconds / 1e6;
        r.bytes = vem_bench::ideal_bytes_for(*eng, op, true);
        r.gbs = r.mcells * 1e6 * r.bytes / 1e9;
        r.fraction = copy > 0 ? r.gbs / copy : 0;
        r.persistent = eng->persistent_steps();
        r.one_pass = eng->one_pass_steps();
        std::cerr << n << "^3 " << r.storage << " " << step << ": " << r.mcells << " Mcells/s, " << r.bytes
                  << " B/cell-step ideal, persistent steps " << r.persistent << ", one-pass steps " << r.one_pass << "\n";
        rows.push_back(r);
      }
    }
  }
  const std::string date = vem_bench::utc_date();
  std::ofstream js(out);
  js << std::setprecision(6) << "{\n  \"benchmark\": \"fdtd_field_storage\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << date
     << "\",\n  \"copy_bandwidth_GBps\": " << copy << ",\n  \"results\": [\n";
  for (std::size_t q = 0; q < rows.size(); ++q) {
    const SRow& r = rows[q];
    js << "    {\"n\": " << r.n << ", \"storage\": \"" << r.storage << "\", \"step\": \"" << r.step
       << "\", \"mcells_per_s\": " << r.mcells << ", \"ideal_bytes_per_cell_step\": " << r.bytes << ", \"GBps\": "
       << r.gbs << ", \"fraction_of_copy_bw\": " << r.fraction << ", \"persistent_steps\": " << r.persistent
       << ", \"one_pass_steps\": " << r.one_pass << "}" << (q + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  std::cout << device << ", " << date << ", commit " << commit << ", copy bandwidth " << std::setprecision(0)
            << std::fixed << copy << " GB/s\n\n| n | storage | step asked | Mcells/s | ideal B/cell-step | GB/s | of copy BW |\n"
            << "|---|---|---|---|---|---|---|\n";
  for (const SRow& r : rows)
    std::cout << "| " << r.n << "^3 | " << r.storage << " | " << r.step << (r.persistent ? " (persistent)" : r.one_pass ? " (one pass)" : " (two passes)")
              << " | " << std::setprecision(0) << r.mcells << " | " << std::setprecision(1) << r.bytes << " | "
              << std::setprecision(0) << r.gbs << " | " << std::setprecision(2) << r.fraction << " |\n";
  return 0;
}

int run_memory(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_memory.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  std::vector<int> sizes;
  for (int a = 4; a < argc; ++a) sizes.push_back(std::atoi(argv[a]));
  // Largest first: 1358^3 = 2,504 M cells (the 2,500 M, past the 2^31-sample layout the
  // engine was limited to before its offsets were made 64-bit), then smaller ones if it does not fit.
  if (sizes.empty()) sizes = {1358, 1276};
  // VEM_FIELD_STORAGE=float16|bfloat16: the fields stored in 2 bytes (FdtdSetup::field_storage).
  const char* fs_env = std::getenv("VEM_FIELD_STORAGE");
  const FieldStorage fs = fs_env && *fs_env ? field_storage_from_name(fs_env) : FieldStorage::float32;
  std::string device = "none";
  vem_bench::copy_bandwidth_gbs(&device);
  std::size_t free0 = 0, total = 0;
  cudaMemGetInfo(&free0, &total);
  std::ofstream js(out);
  js << std::setprecision(8) << "{\n  \"benchmark\": \"fdtd_memory\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << vem_bench::utc_date()
     << "\",\n  \"field_storage\": \"" << field_storage_name(fs) << "\",\n  \"total_bytes\": " << total
     << ",\n  \"free_bytes_before\": " << free0 << ",\n  \"rows\": [\n";
  bool first = true;
  for (int n : sizes) {
    // Predicted: 6 float fields + a 16-bit index over the padded layout, psi (4 floats per slab
    // sample: 2 E + 2 H psi) over the 10-cell slabs, a few kB of tables and profiles.
    const FieldLayout L = FieldLayout::for_grid(n, n, n);
    const double cells = double(n) * n * n;
    const double slab_samples = 6.0 * 10.5 * double(n + 1) * (n + 1);
    const double predicted = (6.0 * field_storage_bytes(fs) + 2.0) * double(L.size) + 8.0 * 2 * slab_samples;
    std::cerr << "n = " << n << ": predicted " << predicted / 1e9 << " GB, free " << free0 / 1e9 << " GB\n";
    if (predicted > double(free0) - 256e6) continue;
    const auto t0 = std::chrono::steady_clock::now();
    // A second source and probe near the top face, where the layout offsets pass 2^31 on the big
    // grids, checked below against a small grid cut out around them (the light cone).
    FdtdSetup big = make_setup(n, MaterialMode::indexed);
    big.field_storage = fs;
    const int sk = n - 30, si = n / 2 + 5, sj = n / 2 - 7;
    {
      PointSource src;
      src.i = si; src.j = sj; src.k = sk;
      src.direction = {0.3, 0.5, 1.0};
      src.waveform = Waveform::sinusoid(20e9, 0.5);  // nonzero from the first steps
      big.sources.push_back(src);
      big.probes.push_back({"ez_top", Component::Ez, si + 2, sj, sk});
      big.probes.push_back({"hx_top", Component::Hx, si, sj + 1, sk + 1});
    }
    // 1 A m moments in 1 mm cells drive E to ~1e8 V/m, past float16's 65504: scaled for 2-byte storage.
    if (fs != FieldStorage::float32)
      for (PointSource& p : big.sources) p.amplitude *= 1e-6;
    const FdtdOperator op(big);
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t f1 = 0;
    cudaMemGetInfo(&f1, &total);
    EngineTuning t;
    t.step = EngineTuning::Step::two_pass;
    std::unique_ptr<FdtdEngine> eng;
    try {
      eng = make_engine(op, Backend::cuda, 0, nullptr, t);
    } catch (const std::exception& e) {
      std::cerr << "n = " << n << ": " << e.what() << "\n";
      continue;
    }
    std::size_t f2 = 0;
    cudaMemGetInfo(&f2, &total);
    eng->run(2);
    const int steps = 5;
    const auto t1 = std::chrono::steady_clock::now();
    eng->run(steps, {}, steps);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    const ProbeRecord rec = eng->probes();
    const std::vector<float> probe = rec.values.empty() ? std::vector<float>{} : rec.values[0];
    const double e2 = probe.empty() ? 0.0 : double(probe.back()) * probe.back();
    // Light-cone check: a 96^3 window of the same materials whose top face (with its 10-cell CPML)
    // is the big grid's, the second source at the same place in it, PEC on its other faces (48
    // cells or more from the source). After 7 steps (the fields spread at most 2 cells a step),
    // both grids hold the same values around the source, so the top probes must agree bit for
    // bit: the samples near offset 2^31+ of the big layout are read and written where they belong.
    std::size_t mismatches = 0, compared = 0;
    std::int64_t top_offset = 0;
    {
      eng.reset();
      const int W = 96, i0 = si - 48, j0 = sj - 48, k0 = n - W;
      FdtdSetup w;
      w.grid = {W, W, W, 1e-3, 1e-3, 1e-3};
      w.boundaries = BoundarySpec::all(BoundaryType::pec);
      w.boundaries.face[5] = BoundaryType::cpml;
      w.boundaries.cpml[5].thickness = 10;
      w.materials = big.materials;
      w.field_storage = fs;
      w.material_index.resize(std::size_t(W) * W * W);
      for (int k = 0; k < W; ++k)
        for (int j = 0; j < W; ++j)
          for (int i = 0; i < W; ++i)
            w.material_index[i + std::size_t(W) * (j + std::size_t(W) * k)] =
                big.material_index[(i0 + i) + std::size_t(n) * ((j0 + j) + std::size_t(n) * (k0 + k))];
      w.sources = {big.sources.back()};
      w.sources[0].i -= i0; w.sources[0].j -= j0; w.sources[0].k -= k0;
      w.probes = {{"ez_top", Component::Ez, si + 2 - i0, sj - j0, sk - k0},
                  {"hx_top", Component::Hx, si - i0, sj + 1 - j0, sk + 1 - k0}};
      const FdtdOperator wop(w);
      top_offset = op.layout().at(si + 2, sj, sk);
      auto weng = make_engine(wop, Backend::cuda, 0, nullptr, t);
      weng->run(2 + steps);
      const ProbeRecord wr = weng->probes();
      for (int p = 0; p < 2; ++p) {
        const auto& a = rec.values[1 + p];
        const auto& b = wr.values[p];
        for (std::size_t q = 0; q < std::min(a.size(), b.size()); ++q, ++compared)
          if (std::memcmp(&a[q], &b[q], 4) != 0) ++mismatches;
        if (a.size() != b.size()) mismatches += 1000000;
      }
      float peak = 0;
      for (float v : wr.values[0]) peak = std::max(peak, std::fabs(v));
      std::cerr << "n = " << n << ": light-cone check at layout offset " << top_offset << ": " << mismatches
                << " of " << compared << " probe samples differ (peak |Ez| " << peak << ")\n";
    }
    const double used = double(f1) - double(f2);
    const double mcells = steps * cells / s / 1e6;
    std::cerr << "n = " << n << ": engine allocated " << used / 1e9 << " GB = " << used / cells
              << " B/cell (predicted " << predicted / cells << "), layout/cells " << double(L.size) / cells << ", "
              << mcells << " Mcells/s, probe Ez^2 " << e2 << "\n";
    js << (first ? "" : ",\n") << "    {\"n\": " << n << ", \"cells\": " << cells << ", \"layout_samples\": " << L.size
       << ", \"engine_bytes\": " << used << ", \"bytes_per_cell\": " << used / cells
       << ", \"predicted_bytes\": " << predicted << ", \"operator_build_s\": " << build_s << ", \"steps\": " << steps
       << ", \"seconds\": " << s << ", \"mcells_per_s\": " << mcells << ", \"probe_ez2\": " << e2
       << ", \"finite\": " << (std::isfinite(e2) ? "true" : "false") << ", \"light_cone_check\": {\"layout_offset\": "
       << top_offset << ", \"probe_samples\": " << compared << ", \"differing\": " << mismatches << "}}";
    first = false;
    break;
  }
  js << "\n  ]\n}\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "rates") return run_rates(argc, argv);
  if (mode == "memory") return run_memory(argc, argv);
  if (mode == "storage") return run_storage(argc, argv);
  if (mode == "temporal") return run_temporal(argc, argv);
  if (mode == "profile") return run_profile(argc, argv);
  std::cerr << "usage: bench_fdtd_onepass rates|memory|storage|temporal <out.json> [commit] [n...]\n";
  return 2;
}
