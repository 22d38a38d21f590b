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
//                      (the CUDA engine stores arrays equal to another of their kind once and
//                      reads them once: 4 B per stored array, coefficient_arrays_stored)
//   CPML slab samples, per phase: psi read+write 16, field read+write 16, source field 8,
//                      index 2 or coefficients 8: 42 (indexed) or 48 (arrays), both phases.
//   one pass per step (CUDA, from 8 M cells; fused_step.h): E and H read 24, written 24, index 2
//                      or the arrays; the CPML folded in: psi read+write 32 per slab sample.
// Usage: bench_fdtd <out.json> [commit] [max_n] [cpu_max_n]
//        bench_fdtd extensions <out.json> [options]   (overhead of TF/SF, DFT monitors, SAR; below)
//        bench_fdtd profile [n] [scheme]
//        bench_fdtd schemes <out.md> [n] [commit]   (issue 15: every update scheme, below;
//                                                    VEM_SCHEMES_DEFAULT_ONLY=1: default kernels only;
//                                                    VEM_SCHEMES_ONLY=s44,...: Yee and those schemes)
//        bench_fdtd accuracy <out.md> [options]     (issue 15: wall time to a phase accuracy; at run_accuracy)
//
// Schemes mode (issue 15): the same lossy indexed model (10-cell CPML) at n^3 (default 512 on
// CUDA, 64 on the CPU) stepped with each scheme (yee, fv24, fv24_wb, s22, s44) on one engine in
// one run, Mcells/s (cell-steps per second: the schemes' different time steps are not folded in),
// the cost relative to Yee, the copy bandwidth, and the ideal bytes per cell-step (our count: the
// Yee kernels' 76 B for every leap-frog scheme, as the wide stencil's neighbours should come from
// cache; s44 reads its three earlier time levels and writes the new level into the oldest one's
// array (the CUDA engine rotates the arrays): +72 B). Then the high-order kernel variants
// (EngineTuning::ho_kernel, ho_block_*, ho_z_chunk) for each high-order scheme; on CUDA s44 also
// with two steps per pass (EngineTuning::s44_stepping, a row of its own). Real DRAM bytes:
// from a profiler (bench_fdtd profile), not measured here.
//
// Extensions mode (issue #5): on one engine configuration (indexed materials: the 16 lossy block
// materials above inside, vacuum in a 16-cell shell so that a TF/SF box 3 cells inside the 10-cell
// CPML lies in vacuum; 1 mm cells; default tuning), times
//   bare            the engine alone (one CW point source at the centre, as in every variant);
//   tfsf            + TfsfSource plane wave (CW, box 3 cells inside the CPML);
//   dft1 / dft8     + DftMonitor, whole volume, Ex Ey Ez, 1 or 8 frequencies, at sample interval 1
//                   (every step) and at DftMonitor::nyquist_interval(dt, f_cw, 16);
//   tfsf+dft1       what a CW steady-state run does (run_fdtd_harmonic): TF/SF + 1 frequency at
//                   the Nyquist interval;
//   bare (again)    at the end, to show the drift of the baseline.
// Also the cost of one DftMonitor::check_steady_state() on the 1-frequency whole-volume monitor
// (what a CW run calls every `periods_per_check` = 2 periods), in seconds, bare steps and % of
// the stepping of a 2-period window.
// Overhead % = (seconds per step / bare seconds per step - 1) * 100, bare = mean of both bare runs.
// CW frequency: 10 cells per wavelength in tissue of eps_r 40 (the usual accuracy limit of a
// staircased tissue model): lambda0 = 10 d sqrt(40), f_cw = c0 / lambda0 = 4.74 GHz at d = 1 mm,
// 110.6 steps per period at Courant factor 0.99, so the Nyquist interval (16 samples per period)
// is 6 steps whatever d is. The 8 frequencies are f_cw * (1..8) / 8 (f_max = f_cw, same interval).
// All variants step one engine (extensions attach and detach between them) whose field samples
// all start at nonzero pseudo-random values (the DFT kernels skip zero samples; a whole-volume
// monitor at steady state sees none), so the DFT cost is the full cost. 3 repetitions (CUDA) of
// ~target-s each, median; timed after run() returns (it synchronizes with the device).
// SAR post-processing: vem::spatial_average_sar (1 g and 10 g) on the head phantom voxelized to
// fill a sar_n^3 grid (0.26 m cube: 0.51 mm voxels at 512^3, the head's real size), tissues at
// 900 MHz, density 0 for air and sinus air, |E|^2 decaying from the side the wave enters;
// seconds per backend and the same time in bare steps of the timed grid.
//   --commit <id>      recorded in the JSON
//   --n <n>            grid cells per side (default 512)
//   --backend cuda|cpu default: cuda when usable, else cpu
//   --sar-n <n>        SAR volume cells per side for the CUDA backend (default: n)
//   --sar-cpu-n <n>    SAR volume for the CPU backend (default: min(sar-n, 256); 0 skips it; the
//                      CUDA backend is timed on this size too when it differs). The CPU 10 g
//                      average of a 512^3 volume took 119 s on the H100 host (16 cores): too long
//                      for one device call next to the build.
//   --target-s <s>     seconds per timed repetition (default 1.0; 3 repetitions on CUDA, median)
#include <algorithm>
#include <array>
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

#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/models/head_phantom.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "bench_common.h"
#include "bench_models.h"

using namespace vem;
using vem_bench::sar_volume;
using vem_bench::slab_fraction;

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

struct Result {
  std::string engine, mode, table;
  int n, bx, by, chunk, steps;
  double seconds, mcells, bytes_per_cell, gbs, fraction;
  bool two_steps = false;  // stepped two steps per pass (temporal blocking): no ideal byte count
  bool one_pass = false;   // stepped one pass per step
};

// VEM_CPML_LAUNCH=per_axis|merged overrides the engine's CPML launch layout (same-binary A/B).
EngineTuning::CpmlLaunch cpml_launch_from_env() {
  const char* v = std::getenv("VEM_CPML_LAUNCH");
  const std::string s = v ? v : "";
  using CL = EngineTuning::CpmlLaunch;
  return s == "per_axis" ? CL::per_axis : s == "merged" ? CL::merged : CL::automatic;
}

// VEM_KERNEL_LAUNCH=plain|programmatic overrides the stepping kernels' launch (same-binary A/B).
EngineTuning::KernelLaunch kernel_launch_from_env() {
  const char* v = std::getenv("VEM_KERNEL_LAUNCH");
  const std::string s = v ? v : "";
  using KL = EngineTuning::KernelLaunch;
  return s == "plain" ? KL::plain : s == "programmatic" ? KL::programmatic : KL::automatic;
}

Result time_engine(const FdtdOperator& op, Backend backend, const EngineTuning& tuning_in, double target_s,
                   double copy_gbs) {
  EngineTuning tuning = tuning_in;
  tuning.cpml = cpml_launch_from_env();
  tuning.launch = kernel_launch_from_env();
  // The coefficient_array rows measure the 12 arrays (the byte model above); the engine would
  // otherwise read this model's coefficients as a packed table where they fit (fdtd_engine.h).
  if (tuning.coefficients == EngineTuning::Coefficients::automatic)
    tuning.coefficients = EngineTuning::Coefficients::arrays;
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
  // By the path the steps took: persistent (the CUDA default below 8 M cells where the model
  // allows it), one pass (with the CPML folded in) or two; the arrays the engine stores (equal
  // ones once: coefficient_arrays_stored; the CPU engine reads all 12).
  const double bpc = vem_bench::ideal_bytes_for(*eng, op, true);
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
  res.two_steps = eng->two_step_steps() > 0;
  res.one_pass = eng->one_pass_steps() > 0;
  std::cerr << res.engine << " " << res.mode << " " << res.table << " n=" << res.n << " block " << res.bx << "x"
            << res.by << " chunk " << res.chunk << ": " << res.mcells << " Mcells/s, " << res.gbs << " GB/s\n";
  return res;
}

// ---- Extensions mode ------------------------------------------------------------------------

struct ExtResult {
  std::string variant;
  int frequencies = 0, sample_interval = 0, steps = 0;
  bool tfsf = false;
  double seconds = 0, per_step = 0, mcells = 0, overhead = 0;
};

struct SarRow {
  std::string backend;
  double mass_g = 0, seconds = 0, equivalent_bare_steps = 0, peak = 0;
  std::size_t valid = 0, assigned = 0, unassigned = 0;
};

// make_setup's block materials inside, vacuum (material 0) in a shell of `shell` cells, one CW
// point source at the centre.
FdtdSetup make_ext_setup(int n, double f_cw, int shell) {
  FdtdSetup s = make_setup(n, MaterialMode::indexed);
  s.materials.insert(s.materials.begin(), Material::vacuum());
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        auto& m = s.material_index[i + std::size_t(n) * (j + std::size_t(n) * k)];
        const bool inner = std::min({i, j, k}) >= shell && std::max({i, j, k}) < n - shell;
        m = inner ? std::uint16_t(m + 1) : std::uint16_t(0);
      }
  s.sources[0].waveform = Waveform::sinusoid(f_cw);
  return s;
}

// Nonzero pseudo-random values in [-1, 1) for every sample of every component (a hash, fast).
void fill_fields(FdtdEngine& eng) {
  const YeeGrid& g = eng.op().grid();
  const std::size_t np = std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  std::vector<float> v(np);
  for (int c = 0; c < 6; ++c) {
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < std::int64_t(np); ++q) {
      std::uint64_t x = std::uint64_t(q) * 0x9E3779B97F4A7C15ull + std::uint64_t(c + 1) * 0xBF58476D1CE4E5B9ull;
      x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29;
      const float u = float((x >> 40) & 0xFFFFFF) / float(1 << 24);  // [0, 1)
      v[q] = (u < 0.5f ? -1.0f : 1.0f) * (0.05f + u);                 // never 0
    }
    eng.set_field(Component(c), v);
  }
}

// Median seconds of `reps` runs of `steps` steps (run() synchronizes with the device at the end).
double time_steps(FdtdEngine& eng, int steps, int reps) {
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    eng.run(steps, {}, steps);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return secs[secs.size() / 2];
}

int run_extensions(int argc, char** argv) {
  std::string out = argc > 2 ? argv[2] : "bench_fdtd_ext.json";
  std::string commit = "unknown", backend_arg;
  int n = 512, sar_n = -1, sar_cpu_n = -1;
  double target_s = 1.0;
  for (int a = 3; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--commit") commit = v;
    else if (k == "--n") n = std::atoi(v.c_str());
    else if (k == "--backend") backend_arg = v;
    else if (k == "--sar-n") sar_n = std::atoi(v.c_str());
    else if (k == "--sar-cpu-n") sar_cpu_n = std::atoi(v.c_str());
    else if (k == "--target-s") target_s = std::atof(v.c_str());
    else { std::cerr << "unknown option " << k << "\n"; return 2; }
  }
  if (sar_n < 0) sar_n = n;
  if (sar_cpu_n < 0) sar_cpu_n = std::min(sar_n, 256);
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  const bool gpu = cuda_available();
  const Backend backend = backend_arg.empty() ? (gpu ? Backend::cuda : Backend::cpu) : backend_from_name(backend_arg);
  if (backend == Backend::cpu && device == "none") device = "cpu";
  std::cerr << "extensions: device " << device << ", backend " << backend_name(backend) << ", n = " << n
            << ", copy bandwidth " << copy << " GB/s\n";

  auto clock0 = std::chrono::steady_clock::now();
  auto lap = [&clock0](const char* what) {
    const auto now = std::chrono::steady_clock::now();
    std::cerr << "  [" << std::chrono::duration<double>(now - clock0).count() << " s] " << what << "\n";
    clock0 = now;
  };
  const double d = 1e-3, f_cw = kC0 / (10.0 * d * std::sqrt(40.0));
  const int pml = 10, margin = 3, shell = pml + margin + 3;
  const FdtdOperator op(make_ext_setup(n, f_cw, shell));
  lap("operator built");
  const double dt = op.dt(), cells = double(op.grid().cell_count());
  const int m_nyq = DftMonitor::nyquist_interval(dt, f_cw, 16.0);
  const double steps_per_period = 1.0 / (f_cw * dt);
  std::vector<double> f8;
  for (int q = 1; q <= 8; ++q) f8.push_back(f_cw * q / 8.0);
  const std::vector<Component> ecomp = {Component::Ex, Component::Ey, Component::Ez};
  PlaneWave pw;
  pw.waveform = Waveform::sinusoid(f_cw);
  TfsfBox box;
  box.lo = {pml + margin, pml + margin, pml + margin};
  box.hi = {n - pml - margin, n - pml - margin, n - pml - margin};
  const int reps = backend == Backend::cpu ? 1 : 3;

  struct Variant { const char* name; bool tfsf; int nf; int interval; };
  const Variant variants[] = {{"bare", false, 0, 0},          {"tfsf", true, 0, 0},
                              {"dft1_every_step", false, 1, 1}, {"dft1_nyquist", false, 1, m_nyq},
                              {"dft8_every_step", false, 8, 1}, {"dft8_nyquist", false, 8, m_nyq},
                              {"tfsf+dft1_nyquist", true, 1, m_nyq}, {"bare_again", false, 0, 0}};
  std::vector<ExtResult> rows;
  int steps = 0;
  std::size_t tfsf_samples = 0;
  double check_seconds = 0;
  // One engine for every variant (extensions attach to a running engine and detach when destroyed;
  // the TF/SF source takes its waveform time from the step index, so a late start is a later
  // switch-on of the same CW wave).
  auto eng = make_engine(op, backend);
  fill_fields(*eng);
  lap("engine created, fields filled");
  for (const Variant& v : variants) {
    std::unique_ptr<TfsfSource> tf;
    std::unique_ptr<DftMonitor> mon;
    if (v.tfsf) { tf = std::make_unique<TfsfSource>(*eng, pw, box); tfsf_samples = tf->corrected_samples(); }
    if (v.nf > 0)
      mon = std::make_unique<DftMonitor>(*eng, v.nf == 1 ? std::vector<double>{f_cw} : f8, ecomp, DftBox{}, v.interval);
    // Warm-up; the step count is calibrated once, on the warm bare engine, to ~target_s and
    // rounded to a multiple of the Nyquist interval (every variant then runs the same steps).
    const int warm = backend == Backend::cpu ? m_nyq : 4 * m_nyq;
    eng->run(warm, {}, warm);
    if (steps == 0) {
      const auto t0 = std::chrono::steady_clock::now();
      eng->run(warm, {}, warm);
      const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      steps = std::max(m_nyq, int(target_s / std::max(w / warm, 1e-7)) / m_nyq * m_nyq);
      steps = std::min(steps, 20000 / m_nyq * m_nyq);
    }
    ExtResult r;
    r.variant = v.name;
    r.tfsf = v.tfsf;
    r.frequencies = v.nf;
    r.sample_interval = v.interval;
    r.steps = steps;
    r.seconds = time_steps(*eng, steps, reps);
    r.per_step = r.seconds / steps;
    r.mcells = steps * cells / r.seconds / 1e6;
    std::cerr << "  " << r.variant << ": " << r.mcells << " Mcells/s (" << r.per_step * 1e3 << " ms/step)\n";
    rows.push_back(r);
    // The steady-state check of a CW run (DftMonitor::check_steady_state: reads the accumulated
    // spectra back and forms the window phasors and their change on the host), on the 1-frequency
    // whole-volume monitor: median of 3 checks, each after one more sample.
    if (v.nf == 1 && !v.tfsf && v.interval > 1) {
      std::vector<double> cs;
      mon->check_steady_state();
      for (int q = 0; q < 3; ++q) {
        eng->run(v.interval, {}, v.interval);
        const auto t0 = std::chrono::steady_clock::now();
        mon->check_steady_state();
        cs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(cs.begin(), cs.end());
      check_seconds = cs[1];
      std::cerr << "  check_steady_state: " << check_seconds << " s\n";
    }
  }
  eng.reset();
  lap("stepping variants done");
  const double bare = 0.5 * (rows.front().per_step + rows.back().per_step);
  for (auto& r : rows) r.overhead = 100.0 * (r.per_step / bare - 1.0);

  // SAR post-processing.
  std::vector<SarRow> sar_rows;
  double tissue_fraction = 0, sar_voxel = 0, fill_s = 0;
  int sar_cells_n = 0;
  SarInput in;
  std::vector<std::pair<Backend, int>> sar_runs;
  if (gpu && sar_n > 0) sar_runs.push_back({Backend::cuda, sar_n});
  if (gpu && sar_cpu_n > 0 && sar_cpu_n != sar_n) sar_runs.push_back({Backend::cuda, sar_cpu_n});
  if (sar_cpu_n > 0) sar_runs.push_back({Backend::cpu, sar_cpu_n});
  for (const auto& run : sar_runs) {
    const Backend b = run.first;
    const int sn = run.second;
    if (in.grid.nx != sn) {  // build the volume once per size
      const auto t0 = std::chrono::steady_clock::now();
      double frac = 0;
      in = sar_volume(sn, &frac);
      const double fs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (sar_cells_n == 0) { sar_cells_n = sn; tissue_fraction = frac; sar_voxel = in.grid.dx; fill_s = fs; }
      lap("SAR volume built");
    }
    for (double mass : {1e-3, 1e-2}) {
      const auto t1 = std::chrono::steady_clock::now();
      const AveragedSar a = spatial_average_sar(in, mass, b);
      SarRow r;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
      r.backend = backend_name(b);
      r.mass_g = mass * 1e3;
      r.equivalent_bare_steps = r.seconds / bare;
      r.peak = a.peak;
      r.valid = a.valid; r.assigned = a.assigned; r.unassigned = a.unassigned;
      std::cerr << "  SAR " << r.backend << " " << sn << "^3 " << r.mass_g << " g: " << r.seconds << " s = "
                << r.equivalent_bare_steps << " bare steps (peak " << a.peak << " W/kg)\n";
      // Keep the volume size with the row (CPU and CUDA may differ).
      r.backend += "@" + std::to_string(sn);
      sar_rows.push_back(r);
    }
  }

  const std::string date = vem_bench::utc_date();
  std::ofstream js(out);
  js << std::setprecision(6);
  js << "{\n  \"benchmark\": \"fdtd_extensions\",\n  \"device\": \"" << device << "\",\n  \"commit\": \"" << commit
     << "\",\n  \"date\": \"" << date << "\",\n  \"copy_bandwidth_GBps\": " << copy << ",\n  \"backend\": \""
     << backend_name(backend) << "\",\n  \"n\": " << n << ",\n  \"cell_m\": " << d
     << ",\n  \"cpml_cells\": " << pml << ",\n  \"material_mode\": \"indexed\",\n  \"tuning\": \"default\""
     << ",\n  \"vacuum_shell_cells\": " << shell << ",\n  \"tfsf_box\": [" << box.lo[0] << ", " << box.hi[0]
     << "],\n  \"tfsf_corrected_samples\": " << tfsf_samples << ",\n  \"cw_frequency_Hz\": " << f_cw
     << ",\n  \"cw_choice\": \"10 cells per wavelength in tissue eps_r 40\",\n  \"dt_s\": " << dt
     << ",\n  \"steps_per_period\": " << steps_per_period << ",\n  \"nyquist_interval\": " << m_nyq
     << ",\n  \"dft_frequencies_8\": [";
  for (std::size_t q = 0; q < f8.size(); ++q) js << f8[q] << (q + 1 < f8.size() ? ", " : "");
  js << "],\n  \"dft_components\": \"Ex Ey Ez, whole volume\",\n  \"initial_fields\": \"nonzero pseudo-random\",\n"
     << "  \"bare_seconds_per_step\": " << bare << ",\n  \"steady_state_check_seconds\": " << check_seconds
     << ",\n  \"steady_state_check_equivalent_bare_steps\": " << check_seconds / bare
     << ",\n  \"steady_state_check_overhead_pct_every_2_periods\": "
     << 100.0 * check_seconds / (2.0 * steps_per_period * bare) << ",\n  \"results\": [\n";
  for (std::size_t q = 0; q < rows.size(); ++q) {
    const ExtResult& r = rows[q];
    js << "    {\"variant\": \"" << r.variant << "\", \"tfsf\": " << (r.tfsf ? "true" : "false")
       << ", \"dft_frequencies\": " << r.frequencies << ", \"sample_interval\": " << r.sample_interval
       << ", \"steps\": " << r.steps << ", \"seconds\": " << r.seconds << ", \"seconds_per_step\": " << r.per_step
       << ", \"mcells_per_s\": " << r.mcells << ", \"overhead_pct\": " << r.overhead << "}"
       << (q + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ],\n  \"sar\": {\"n\": " << sar_cells_n << ", \"voxel_m\": " << sar_voxel << ", \"tissue_fraction\": "
     << tissue_fraction << ", \"volume_build_seconds\": " << fill_s
     << ", \"model\": \"head phantom in a 0.26 m cube, tissues at 900 MHz\", \"rows\": [\n";
  for (std::size_t q = 0; q < sar_rows.size(); ++q) {
    const SarRow& r = sar_rows[q];
    const auto at = r.backend.find('@');
    js << "    {\"backend\": \"" << r.backend.substr(0, at) << "\", \"n\": " << r.backend.substr(at + 1)
       << ", \"mass_g\": " << r.mass_g << ", \"seconds\": " << r.seconds << ", \"equivalent_bare_steps\": "
       << r.equivalent_bare_steps << ", \"peak_W_per_kg\": " << r.peak << ", \"valid\": " << r.valid
       << ", \"assigned\": " << r.assigned << ", \"unassigned\": " << r.unassigned << "}"
       << (q + 1 < sar_rows.size() ? "," : "") << "\n";
  }
  js << "  ]}\n}\n";

  std::cout << "| variant | DFT freqs | interval | steps | ms/step | Mcells/s | overhead |\n|---|---|---|---|---|---|---|\n";
  for (const ExtResult& r : rows)
    std::cout << "| " << r.variant << " | " << r.frequencies << " | " << r.sample_interval << " | " << r.steps << " | "
              << std::fixed << std::setprecision(3) << r.per_step * 1e3 << " | " << std::setprecision(0) << r.mcells
              << " | " << std::setprecision(1) << r.overhead << " % |\n";
  std::cout << "\nsteady-state check (1 frequency, whole volume): " << std::setprecision(3) << check_seconds
            << " s = " << std::setprecision(0) << check_seconds / bare << " bare steps = " << std::setprecision(1)
            << 100.0 * check_seconds / (2.0 * steps_per_period * bare) << " % when checked every 2 periods\n";
  std::cout << "\n| SAR backend | mass | seconds | bare steps |\n|---|---|---|---|\n";
  for (const SarRow& r : sar_rows)
    std::cout << "| " << r.backend << " | " << std::setprecision(0) << r.mass_g << " g | " << std::setprecision(3)
              << r.seconds << " | " << std::setprecision(0) << r.equivalent_bare_steps << " |\n";
  std::cout << "\n" << device << ", n = " << n << ", f_cw = " << std::setprecision(3) << f_cw / 1e9
            << " GHz, Nyquist interval " << m_nyq << ", copy bandwidth " << std::setprecision(0) << copy << " GB/s\n";
  return 0;
}

}  // namespace

// Issue 15: every scheme on one engine, same model (see the header). Rows per high-order scheme
// (CUDA): the kernel variants of EngineTuning::ho_kernel in one run - tables (the first version),
// direct (several blocks), tiled (z chunks); the default (tiled with 32 planes for the leap-frog
// schemes, direct 32 x 8 x 1 for s44) first - so the cost relative to Yee of each is measured
// against the Yee rows of the same run (Yee's one-pass step and its default step). Also writes
// <out stem>.json.
int run_schemes(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "bench_fdtd_schemes.md";
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  const bool gpu = cuda_available();
  const Backend be = gpu ? Backend::cuda : Backend::cpu;
  const int n = argc > 3 ? std::atoi(argv[3]) : (gpu ? 512 : 64);
  const std::string commit = argc > 4 ? argv[4] : "unknown";
  const std::string date = vem_bench::utc_date();
  std::ostringstream md, js;
  md << "Schemes at " << n << "^3, indexed lossy model, 10-cell CPML, engine " << backend_name(be) << ", device "
     << device << ", copy bandwidth " << std::fixed << std::setprecision(0) << copy << " GB/s, commit " << commit
     << ", " << date << "\n\n| scheme | kernel | block / z chunk | Mcells/s | cost / one-pass Yee | cost / default Yee | S = c dt / h | ideal B/cell-step | GB/s (ideal bytes) | of copy BW |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  js << std::setprecision(6) << "{\n  \"benchmark\": \"fdtd_schemes\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << date << "\",\n  \"n\": " << n
     << ",\n  \"engine\": \"" << backend_name(be) << "\",\n  \"model\": \"indexed lossy, 10-cell CPML\""
     << ",\n  \"copy_bandwidth_GBps\": " << copy << ",\n  \"results\": [\n";
  using HK = EngineTuning::HighOrderKernel;
  using Step = EngineTuning::Step;
  using SS = EngineTuning::S44Stepping;
  struct Variant {
    HK kernel; int bx, by, bz, chunk; bool is_default; Step step = Step::automatic;
    SS s44 = SS::automatic;  // s44: two steps per pass (the pair kernel) or one
  };
  // Two Yee rows: the one-pass step (one time step per pass over the fields, as every high-order
  // kernel takes: the cost basis of issue 15's targets) and Yee's default (from 2 M cells two steps
  // per pass, issue 16), whose ratio says what a high-order scheme costs a user against the
  // fastest Yee step.
  double yee_rate = 0, yee_default_rate = 0;
  bool first = true;
  // VEM_SCHEMES_DEFAULT_ONLY=1: the default kernel of each scheme only (a quicker run).
  const char* only = std::getenv("VEM_SCHEMES_DEFAULT_ONLY");
  const bool all = gpu && !(only && std::string(only) == "1");
  // VEM_SCHEMES_ONLY=s44 (a comma list): Yee and those schemes only (a profiler's run).
  const char* only_list = std::getenv("VEM_SCHEMES_ONLY");
  for (Scheme sc : {Scheme::yee, Scheme::fv24, Scheme::fv24_wb, Scheme::s22, Scheme::s44}) {
    const std::string listed = only_list ? "," + std::string(only_list) + "," : "";
    if (only_list && sc != Scheme::yee && listed.find("," + std::string(scheme_name(sc)) + ",") == std::string::npos)
      continue;
    FdtdSetup s = make_setup(n, MaterialMode::indexed);
    s.scheme = sc;
    const FdtdOperator op(s);
    std::vector<Variant> variants = {{HK::automatic, 0, 0, 0, 0, true}};
    if (sc == Scheme::yee && gpu)
      variants = {{HK::automatic, 0, 0, 0, 0, false, Step::one_pass}, {HK::automatic, 0, 0, 0, 0, true}};
    if (sc != Scheme::yee && sc != Scheme::s44 && all)  // default: tiled, 32 planes
      variants = {{HK::automatic, 0, 0, 0, 0, true}, {HK::tables, 0, 0, 0, 0, false},
                  {HK::direct, 32, 4, 2, 0, false},  {HK::direct, 32, 8, 1, 0, false},
                  {HK::tiled, 0, 0, 0, 16, false},   {HK::tiled, 0, 0, 0, 64, false}};
    // s44 on the GPU: also two steps per pass and one pass per step (EngineTuning::s44_stepping,
    // issue 15, sessions 27 and 39).
    if (sc == Scheme::s44 && gpu) {
      variants.push_back({HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::two_steps});
      variants.push_back({HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::one_pass});
      variants.push_back({HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::wavefront});
    }
    if (sc == Scheme::s44 && all)  // default: direct, 64 x 4 x 1
      variants = {{HK::automatic, 0, 0, 0, 0, true}, {HK::tables, 0, 0, 0, 0, false},
                  {HK::direct, 32, 4, 2, 0, false},  {HK::direct, 64, 4, 1, 0, false},
                  {HK::direct, 32, 16, 1, 0, false}, {HK::direct, 128, 2, 1, 0, false},
                  {HK::direct, 32, 8, 1, 0, false},  {HK::direct, 64, 8, 1, 0, false},
                  {HK::direct, 128, 4, 1, 0, false}, {HK::direct, 64, 2, 2, 0, false},
                  {HK::tiled, 0, 0, 0, 32, false},
                  {HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::two_steps},
                  {HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::one_pass},
                  {HK::automatic, 0, 0, 0, 0, false, Step::automatic, SS::wavefront}};
    // VEM_SCHEMES_S44_STEPPING=wavefront (a comma list of one_step, two_steps, one_pass, wavefront):
    // s44's default row and those steppings only (a measurement's run).
    if (const char* keep = std::getenv("VEM_SCHEMES_S44_STEPPING"); keep && *keep && sc == Scheme::s44) {
      const std::string k = "," + std::string(keep) + ",";
      auto name = [](SS m) {
        return m == SS::two_steps ? "two_steps" : m == SS::one_pass ? "one_pass" : m == SS::wavefront ? "wavefront" : "one_step";
      };
      std::vector<Variant> kept;
      for (const Variant& v : variants)
        if (v.is_default || k.find("," + std::string(name(v.s44)) + ",") != std::string::npos) kept.push_back(v);
      variants = kept;
    }
    for (const Variant& v : variants) {
      EngineTuning t;
      t.s44_stepping = v.s44;
      t.ho_kernel = v.kernel;
      t.ho_block_x = v.bx; t.ho_block_y = v.by; t.ho_block_z = v.bz;
      t.ho_z_chunk = v.chunk;
      t.step = v.step;
      const Result r = time_engine(op, be, t, gpu ? (v.is_default || sc == Scheme::yee ? 1.0 : 0.5) : 2.0, copy);
      if (sc == Scheme::yee && (v.step == Step::one_pass || !gpu)) yee_rate = r.mcells;
      if (sc == Scheme::yee && v.is_default) yee_default_rate = r.mcells;
      const double bpc = r.bytes_per_cell + (sc == Scheme::s44 ? 72.0 : 0.0);
      const double gbs = r.mcells * 1e6 * bpc / 1e9;
      const double ratio = r.mcells > 0 ? yee_rate / r.mcells : 0;
      const double ratio_default = r.mcells > 0 && yee_default_rate > 0 ? yee_default_rate / r.mcells : 0;
      std::string kernel, shape;
      {
        std::ostringstream k, b;
        if (sc == Scheme::yee) {
          k << (v.step == Step::one_pass ? "one pass" : gpu ? "default (automatic)" : "CPU");
          b << "-";
        }
        else if (!gpu) { k << "CPU"; b << "-"; }
        else {
          const HK kk = v.kernel != HK::automatic ? v.kernel : sc == Scheme::s44 ? HK::direct : HK::tiled;
          k << (kk == HK::tables ? "tables" : kk == HK::direct ? "direct" : "tiled") << (v.is_default ? " (default)" : "")
            << (v.s44 == SS::two_steps ? (r.two_steps ? ", two steps per pass" : ", two steps asked, one taken") : "")
            << (v.s44 == SS::one_pass ? (r.one_pass ? ", one pass per step" : ", one pass asked, two taken") : "")
            << (v.s44 == SS::wavefront ? (r.one_pass ? ", wavefront" : ", wavefront asked, two passes taken") : "");
          if (v.s44 == SS::one_pass && r.one_pass) {  // s44_onepass_interior's tile (VEM_S44_ONEPASS_CHUNK)
            const char* ch = std::getenv("VEM_S44_ONEPASS_CHUNK");
            b << "32x8 tile, " << (ch ? ch : "64") << " planes";
          } else if (v.s44 == SS::wavefront && r.one_pass) {  // s44_wavefront's tasks (VEM_S44_WAVE_ROWS, _LAG)
            auto env = [](const char* name, const char* fallback) {
              const char* x = std::getenv(name);
              return x && *x ? x : fallback;
            };
            b << env("VEM_S44_WAVE_ROWS", "2") << "-row tasks, " << env("VEM_S44_WAVE_STRIPS", "4") << " strips, lag "
              << env("VEM_S44_WAVE_LAG", "auto");
          } else if (kk == HK::tiled) {  // the core's rows a thread: VEM_HO_CORE_ROWS, else the engine's
            const char* rows = std::getenv("VEM_HO_CORE_ROWS");
            b << "32x8, " << (v.chunk ? v.chunk : 32) << " planes" << (rows && *rows ? ", core rows " : "")
              << (rows && *rows ? rows : "");
          }
          else {  // the engine's default block: 32 x 8 x 1, s44's direct kernel 64 x 4 x 1
            const bool s44d = sc == Scheme::s44 && kk == HK::direct && !v.bx && !v.by && !v.bz;
            b << (v.bx ? v.bx : s44d ? 64 : 32) << "x" << (v.by ? v.by : s44d ? 4 : 8) << "x" << (v.bz ? v.bz : 1);
          }
        }
        kernel = k.str(); shape = b.str();
      }
      md << "| " << scheme_name(sc) << " | " << kernel << " | " << shape << " | " << std::setprecision(1) << r.mcells
         << " | " << std::setprecision(2) << ratio << " | ";
      if (ratio_default > 0) md << ratio_default;
      else md << "-";  // the one-pass Yee row runs before the default's
      md << " | " << std::setprecision(4) << op.scheme().courant << " | ";
      // Two steps per pass: the one-pass byte model does not apply (the pair's bytes are measured
      // with Nsight Compute: bench_fdtd_onepass temporal, results/fdtd.md).
      if (r.two_steps) md << "- | - | - |\n";
      else
        md << std::setprecision(0) << bpc << " | " << gbs << " | " << std::setprecision(2)
           << (copy > 0 && gpu ? gbs / copy : 0) << " |\n";
      js << (first ? "" : ",\n") << "    {\"scheme\": \"" << scheme_name(sc) << "\", \"kernel\": \"" << kernel
         << "\", \"block\": \"" << shape << "\", \"default\": " << (v.is_default ? "true" : "false")
         << ", \"steps\": " << r.steps << ", \"seconds\": " << r.seconds << ", \"mcells_per_s\": " << r.mcells
         << ", \"cost_vs_yee\": " << ratio << ", \"cost_vs_default_yee\": ";
      if (ratio_default > 0) js << ratio_default;
      else js << "null";
      js << ", \"courant\": " << op.scheme().courant << ", \"two_steps_per_pass\": " << (r.two_steps ? "true" : "false");
      if (r.two_steps)
        js << ", \"ideal_bytes_per_cell_step\": null, \"GBps_ideal\": null, \"fraction_of_copy\": null}";
      else
        js << ", \"ideal_bytes_per_cell_step\": " << bpc << ", \"GBps_ideal\": " << gbs
           << ", \"fraction_of_copy\": " << (copy > 0 && gpu ? gbs / copy : 0) << "}";
      first = false;
      std::cerr << scheme_name(sc) << " " << kernel << " " << shape << ": " << r.mcells << " Mcells/s\n";
    }
  }
  js << "\n  ]\n}\n";
  std::cout << md.str();
  std::ofstream(out) << md.str();
  const std::string stem = out.size() > 3 && out.substr(out.size() - 3) == ".md" ? out.substr(0, out.size() - 3) : out;
  std::ofstream(stem + ".json") << js.str();
  return 0;
}


// Accuracy mode (issue 15, "wall time to a given accuracy"): for each scheme the coarsest grid
// (cells per wavelength N) whose own dispersion relation (scheme_numerical_omega, checked against
// measured phase velocities by test_fdtd_schemes_dispersion) keeps the phase error of a plane wave
// after W wavelengths (default 50) within the target (default 1e-2 rad) in EVERY direction
// (worst of the axes, the face and body diagonals and a 5-degree grid of the octant):
//   phase error = 2 pi W |c / v_p - 1|,  v_p = omega_num(k) / |k|,
// at the engine's own time step (Courant factor 0.99 of the scheme's limit; fv24 and s22 designed
// at N, scheme_design_cells_per_wavelength = N, as a user would design them). N is scanned upward
// from 4. Then that run is timed on the engine: a periodic vacuum cube of B wavelengths per side
// (default 2; (B N)^3 cells), a CW point source, W periods of steps (ceil(W N / S)), the whole
// run() timed (engine creation reported apart). Also the throughput-bound estimate: cell-steps /
// (Mcells/s of that scheme at 512^3 from --rates, when given), which a large problem would see.
//   bench_fdtd accuracy <out.md> [--commit c] [--box B] [--wavelengths W] [--phase rad]
int run_accuracy(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "bench_fdtd_accuracy.md";
  std::string commit = "unknown";
  double box = 2, waves = 50, target = 1e-2;
  for (int a = 3; a + 1 < argc; a += 2) {
    const std::string k = argv[a];
    if (k == "--commit") commit = argv[a + 1];
    else if (k == "--box") box = std::atof(argv[a + 1]);
    else if (k == "--wavelengths") waves = std::atof(argv[a + 1]);
    else if (k == "--phase") target = std::atof(argv[a + 1]);
    else { std::cerr << "bench_fdtd accuracy: unknown option " << k << "\n"; return 2; }
  }
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  const bool gpu = cuda_available();
  const Backend be = gpu ? Backend::cuda : Backend::cpu;
  const double c0 = kC0, lambda = 1e-2;  // any wavelength: everything scales with N
  std::vector<std::array<double, 3>> dirs;
  for (int t = 0; t <= 18; ++t)
    for (int p = 0; p <= 18; ++p) {
      const double th = kPi / 2 * t / 18, ph = kPi / 2 * p / 18;
      dirs.push_back({std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)});
    }
  dirs.push_back({1 / std::sqrt(2.0), 1 / std::sqrt(2.0), 0});
  dirs.push_back({1 / std::sqrt(3.0), 1 / std::sqrt(3.0), 1 / std::sqrt(3.0)});
  auto worst_phase = [&](const SchemeDesign& d, double N, std::array<double, 3>* worst_dir) {
    const double h = lambda / N, dt = d.courant * h / c0, k = 2 * kPi / lambda, w = c0 * k;
    double worst = 0;
    for (const auto& u : dirs) {
      const double wn = scheme_numerical_omega(d.stencil, h, dt, c0, {k * u[0], k * u[1], k * u[2]});
      const double e = std::isfinite(wn) ? 2 * kPi * waves * std::fabs(w / wn - 1) : 1e300;
      if (e > worst) { worst = e; if (worst_dir) *worst_dir = u; }
    }
    return worst;
  };
  std::ostringstream md, js;
  const std::string date = vem_bench::utc_date();
  md << "Wall time to a phase error of " << target << " rad after " << waves << " wavelengths (worst direction), "
     << "periodic vacuum cube of " << box << " wavelengths per side, CW point source, " << waves
     << " periods of steps; engine " << backend_name(be) << ", device " << device << ", copy bandwidth "
     << std::fixed << std::setprecision(0) << copy << " GB/s, commit " << commit << ", " << date << "\n\n"
     << "| scheme | coarsest N (cells/wavelength) | predicted phase error (rad) | worst direction | S = c dt / h | grid | steps | cell-steps | engine setup (s) | run wall time (s) | Mcells/s in the run | wall time / Yee's |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  js << std::setprecision(8) << "{\n  \"benchmark\": \"fdtd_schemes_accuracy\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << date << "\",\n  \"engine\": \""
     << backend_name(be) << "\",\n  \"copy_bandwidth_GBps\": " << copy << ",\n  \"phase_target_rad\": " << target
     << ",\n  \"wavelengths\": " << waves << ",\n  \"box_wavelengths\": " << box << ",\n  \"results\": [\n";
  double yee_wall = 0;
  bool first = true;
  for (Scheme sc : {Scheme::yee, Scheme::fv24, Scheme::fv24_wb, Scheme::s22, Scheme::s44}) {
    int N = 0;
    double err = 0;
    std::array<double, 3> wdir{};
    for (int n = 4; n <= 1000 && !N; ++n) {
      try {
        const SchemeDesign d = scheme_design_for_factor(sc, 0.99, double(n));
        const double e = worst_phase(d, n, &wdir);
        if (e <= target) { N = n; err = e; }
      } catch (const std::exception&) {  // no valid design at this resolution
      }
    }
    if (!N) { std::cerr << scheme_name(sc) << ": no N <= 1000 meets the target\n"; continue; }
    const int n = int(std::lround(box * N));
    FdtdSetup s;
    const double h = lambda / N;
    s.grid = {n, n, n, h, h, h};
    s.boundaries = BoundarySpec::all(BoundaryType::periodic);
    s.material_mode = MaterialMode::indexed;
    s.materials = {Material::isotropic("vacuum", 1.0, 0.0)};
    s.material_index.assign(std::size_t(s.grid.cell_count()), 0);
    s.scheme = sc;
    s.scheme_design_cells_per_wavelength = N;
    PointSource src;
    src.i = n / 2; src.j = n / 2; src.k = n / 2;
    src.waveform = Waveform::sinusoid(c0 / lambda);
    s.sources = {src};
    const FdtdOperator op(s);
    // The engine's own design must give the same predicted error (same S, same weights).
    const double err_op = worst_phase(op.scheme(), N, nullptr);
    const int steps = int(std::ceil(waves * lambda / (c0 * op.dt())));
    auto t0 = std::chrono::steady_clock::now();
    auto eng = make_engine(op, be);
    const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    eng->run(steps, {}, steps);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sc == Scheme::yee) yee_wall = wall;
    const double cs = double(op.grid().cell_count()) * steps;
    std::ostringstream dir;
    dir << std::setprecision(2) << "(" << wdir[0] << ", " << wdir[1] << ", " << wdir[2] << ")";
    md << "| " << scheme_name(sc) << " | " << N << " | " << std::scientific << std::setprecision(2) << err_op
       << std::fixed << " | " << dir.str() << " | " << std::setprecision(4) << op.scheme().courant << " | " << n << "^3 | "
       << steps << " | " << std::scientific << std::setprecision(3) << cs << std::fixed << " | " << std::setprecision(2)
       << setup << " | " << std::setprecision(3) << wall << " | " << std::setprecision(0) << cs / wall / 1e6 << " | "
       << std::setprecision(4) << (yee_wall > 0 ? wall / yee_wall : 0) << " |\n";
    js << (first ? "" : ",\n") << "    {\"scheme\": \"" << scheme_name(sc) << "\", \"cells_per_wavelength\": " << N
       << ", \"predicted_phase_error_rad\": " << err_op << ", \"search_phase_error_rad\": " << err
       << ", \"courant\": " << op.scheme().courant << ", \"n\": " << n << ", \"steps\": " << steps
       << ", \"cell_steps\": " << cs << ", \"setup_seconds\": " << setup << ", \"run_seconds\": " << wall
       << ", \"mcells_per_s\": " << cs / wall / 1e6 << ", \"wall_vs_yee\": " << (yee_wall > 0 ? wall / yee_wall : 0)
       << "}";
    first = false;
    std::cerr << scheme_name(sc) << ": N " << N << ", " << n << "^3, " << steps << " steps, " << wall << " s\n";
  }
  js << "\n  ]\n}\n";
  std::cout << md.str();
  std::ofstream(out) << md.str();
  const std::string stem = out.size() > 3 && out.substr(out.size() - 3) == ".md" ? out.substr(0, out.size() - 3) : out;
  std::ofstream(stem + ".json") << js.str();
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "extensions") return run_extensions(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "schemes") return run_schemes(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "accuracy") return run_accuracy(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "profile") {
    // A few steps at 512^3 for a profiler (ncu) to count DRAM bytes per kernel.
    // bench_fdtd profile [n] [scheme]: the scheme's default kernels (issue 15).
    FdtdSetup s = make_setup(argc > 2 ? std::atoi(argv[2]) : 512, MaterialMode::indexed);
    if (argc > 3) s.scheme = scheme_from_name(argv[3]);
    // VEM_FIELD_STORAGE=float16|bfloat16: 2-byte field storage, the source scaled into float16's range.
    if (const char* fs = std::getenv("VEM_FIELD_STORAGE"); fs && *fs) {
      s.field_storage = field_storage_from_name(fs);
      for (PointSource& p : s.sources) p.amplitude *= 1e-6;
    }
    const FdtdOperator op(s);
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
