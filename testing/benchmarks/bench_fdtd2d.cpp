// 2D FDTD throughput benchmark (not a test): the CUDA engine of fdtd2d_engine.h on L x L grids,
// L = 1024 ... max_l, TM and TE, two models:
//   vacuum_pec:   one material (vacuum), PEC on all four edges (Takada et al.'s benchmark: a
//                 sinusoidal point source in the centre of a PEC-bounded square);
//   indexed_cpml: 16 lossy materials (eps_r 1-61, sigma 0-1.5 S/m) in 8 x 8-cell blocks, a 10-cell
//                 CPML on every edge, the same source.
// Each with the plain one-step kernels (time_block 1) and the engine's default (temporally blocked
// where it applies; the CPML model falls back to the plain kernels). Reports
//   Mcells/s = steps * L^2 / seconds;  GFLOPS = 12 * Mcells/s / 1000 (Takada's count: 12
//   operations per cell-step for the three update equations with the constants folded);
//   the one-pass roofline = copy bandwidth (measured in the same run, bytes read + written) /
//   bytes per cell-step of one pass over every array per kernel:
//     vacuum_pec   36 B (Takada's 9 words: H kernel reads Ez Hx Hy, writes Hx Hy; E kernel reads
//                  Ez Hx Hy, writes Ez);
//     indexed_cpml 40 B (+ the 16-bit material index in each kernel) plus, per CPML slab sample and
//                  half step, 22 B (psi read + write 8, field read + write 8, source field 4,
//                  index 2), averaged over the grid.
//   "of roofline" = Mcells/s over that roofline (the plain kernel's target is >= 0.85 at 8192^2,
//   the blocked kernel's >= 1.5). The real DRAM traffic per cell-step is measured separately with
//   Nsight Compute (`bench_fdtd2d profile`, device_check.sh fdtd2d) and reported in fdtd2d.md.
// Timing: one warm-up run, then 3 runs of about target seconds each (run(steps) synchronizes with
// the device at its end; one do_steps call for all steps), median.
// Sweep (--sweep, at 8192^2, TM vacuum_pec unless noted): block shapes x rows per thread of the
// plain kernels (VEM_FDTD2D_ROWS), time_block x tile (VEM_FDTD2D_TILE) of the blocked kernel, and
// the blocked kernel with indexed materials and PEC edges.
// --sweep-indexed: only the indexed_pec part of the sweep (VEM_FDTD2D_BLOCKED_TABLE picks where the
// blocked kernel reads the coefficient table; recorded as "blocked_table").
// The main table times the plain kernels twice: "plain" (the engine's default plain kernels) and
// "plain 1-cell" (Fdtd2dTuning::plain_cells = 1, the one-cell kernels that were the default up to
// issue 14's vector kernels), in the same run.
// --variants: at 8192^2 (or max_l), vacuum_pec and indexed_cpml, TM and TE, the plain kernels'
// variants (x cells per thread 1 / 2 / 4 with float2 / float4 accesses, ordinary or streaming
// stores, threads per block), each its own engine, all against the copy bandwidth of this run.
// --variants-l L: at L^2 instead. --variants-indexed: indexed_cpml only, fewer variants (for
// comparing the coefficient table's location, VEM_FDTD2D_PLAIN_TABLE=constant|global).
// Usage: bench_fdtd2d <out.json> [--commit id] [--max-l L] [--target-s s] [--sweep] [--sweep-indexed] [--variants] [--variants-indexed] [--variants-l L] [--no-main]
//        bench_fdtd2d profile   (a few steps of each kernel at 8192^2, for ncu)
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

using namespace vem;

namespace {

enum class Model { vacuum_pec, indexed_cpml, indexed_pec };
const char* model_name(Model m) {
  return m == Model::vacuum_pec ? "vacuum_pec" : (m == Model::indexed_cpml ? "indexed_cpml" : "indexed_pec");
}

Fdtd2dSetup make_setup(int L, Polarization2D pol, Model model) {
  Fdtd2dSetup s;
  s.grid.nx = L;
  s.grid.ny = L;
  s.grid.dx = 1e-3;
  s.grid.dy = 1e-3;
  s.polarization = pol;
  s.boundaries = BoundarySpec2D::all(model == Model::indexed_cpml ? BoundaryType::cpml : BoundaryType::pec, 10);
  s.material_mode = MaterialMode::indexed;
  if (model == Model::vacuum_pec) {
    s.materials = {Material::vacuum()};
  } else {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    for (int m = 0; m < 16; ++m)
      s.materials.push_back(Material::isotropic("m" + std::to_string(m), 1 + 60 * u(rng), 1.5 * u(rng)));
    const int nb = (L + 7) / 8;
    std::vector<std::uint16_t> block(std::size_t(nb) * nb);
    for (auto& v : block) v = std::uint16_t(int(16 * u(rng)) % 16);
    s.material_index.resize(std::size_t(L) * L);
    for (int j = 0; j < L; ++j)
      for (int i = 0; i < L; ++i) s.material_index[i + std::size_t(L) * j] = block[i / 8 + nb * (j / 8)];
  }
  PointSource src;
  src.kind = PointSource::Kind::electric_current;
  src.i = L / 2;
  src.j = L / 2;
  src.k = 0;
  src.direction = pol == Polarization2D::tm ? std::array<double, 3>{0, 0, 1} : std::array<double, 3>{1, 0, 0};
  src.waveform = Waveform::sinusoid(3e9);
  s.sources = {src};
  return s;
}

double bytes_per_cell_step(const Fdtd2dOperator& op, Model model) {
  if (model == Model::vacuum_pec) return 36.0;
  double slab = 0;
  for (const auto& s : op.cpml_slabs()) {
    const int across = (s.axis == 0 ? op.grid().ny : op.grid().nx) + 1;
    slab += double(s.e_end - s.e_begin + 1) * across + double(s.h_end - s.h_begin + 1) * across;
  }
  return 40.0 + 22.0 * slab / double(op.grid().cell_count());
}

struct Timing {
  double mcells = 0;
  int steps = 0;
  std::string backend;
};

Timing time_engine(const Fdtd2dOperator& op, const Fdtd2dTuning& tuning, double target_s) {
  auto eng = make_fdtd2d_engine(op, Backend::cuda, 0, nullptr, tuning);
  const double cells = double(op.grid().cell_count());
  // Warm-up and calibration.
  int steps = 16;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    eng->run(steps, {}, steps);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0.05 || steps > (1 << 22)) {
      steps = std::max(16, int(steps * target_s / s));
      break;
    }
    steps *= 4;
  }
  std::vector<double> rates;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    eng->run(steps, {}, steps);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rates.push_back(cells * steps / s / 1e6);
  }
  std::sort(rates.begin(), rates.end());
  return {rates[1], steps, eng->backend()};
}

std::string fmt(double v, int prec) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(prec);
  o << v;
  return o.str();
}

void profile() {
  // A few steps of each kernel at 8192^2 for Nsight Compute (DRAM bytes per kernel).
  for (Model m : {Model::vacuum_pec, Model::indexed_cpml}) {
    Fdtd2dOperator op(make_setup(8192, Polarization2D::tm, m));
    for (int tb : {1, 4}) {
      if (m == Model::indexed_cpml && tb == 4) continue;
      Fdtd2dTuning t;
      t.time_block = tb;
      for (int cells : {1, 0}) {  // the one-cell kernels, then the default plain kernels
        if (tb != 1 && cells == 1) continue;
        t.plain_cells = cells;
        auto eng = make_fdtd2d_engine(op, Backend::cuda, 0, nullptr, t);
        eng->run(tb == 1 ? 3 : 16, {}, 100);
        std::cout << model_name(m) << " time_block " << tb << " plain_cells " << cells << " done\n";
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "profile") {
    profile();
    return 0;
  }
  if (argc < 2) {
    std::cerr << "usage: bench_fdtd2d <out.json> [--commit id] [--max-l L] [--target-s s] [--sweep] [--sweep-indexed] [--variants] [--no-main]\n";
    return 2;
  }
  const std::string out_path = argv[1];
  std::string commit = "unknown";
  int max_l = 16384;
  double target_s = 0.3;
  bool sweep = false, main_table = true, sweep_vacuum = true, variants = false, variants_indexed_only = false;
  int variants_l = 0;
  for (int a = 2; a < argc; ++a) {
    const std::string k = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) { std::cerr << k << " needs a value\n"; std::exit(2); }
      return argv[++a];
    };
    if (k == "--commit") commit = next();
    else if (k == "--max-l") max_l = std::atoi(next().c_str());
    else if (k == "--target-s") target_s = std::atof(next().c_str());
    else if (k == "--sweep") sweep = true;
    else if (k == "--no-main") main_table = false;
    else if (k == "--variants") variants = true;
    else if (k == "--variants-l") variants_l = std::atoi(next().c_str());
    else if (k == "--variants-indexed") { variants = true; variants_indexed_only = true; }
    else if (k == "--sweep-indexed") { sweep = true; sweep_vacuum = false; }
    else { std::cerr << "unknown option " << k << "\n"; return 2; }
  }
  std::string why;
  if (!cuda_available(&why)) {
    std::cerr << "bench_fdtd2d: no CUDA device (" << why << ")\n";
    return 1;
  }
  std::string device;
  const double bw = vem_bench::copy_bandwidth_gbs(&device);
  const std::string date = vem_bench::utc_date();
  std::ostringstream json;
  json << "{\n  \"benchmark\": \"fdtd2d\",\n  \"device\": \"" << device << "\",\n  \"commit\": \"" << commit
       << "\",\n  \"date\": \"" << date << "\",\n  \"copy_bandwidth_gbs\": " << fmt(bw, 1)
       << ",\n  \"flops_per_cell_step\": 12,\n  \"results\": [";
  std::cout << "Device: " << device << "; commit " << commit << "; " << date
            << "; copy bandwidth measured in the same run: " << fmt(bw, 0) << " GB/s\n\n";
  bool first = true;
  auto record = [&](const std::string& section, const std::string& variant, Model m, Polarization2D pol, int L,
                    const Fdtd2dTuning& t, const std::string& extra_json, const Timing& r, double bpc) {
    const double roof = bw * 1e9 / bpc / 1e6;
    const double gbs = r.mcells * 1e6 * bpc / 1e9;
    json << (first ? "\n" : ",\n") << "    {\"section\": \"" << section << "\", \"variant\": \"" << variant
         << "\", \"model\": \"" << model_name(m) << "\", \"polarization\": \"" << polarization_name(pol)
         << "\", \"L\": " << L << ", \"block_x\": " << t.block_x << ", \"block_y\": " << t.block_y
         << ", \"time_block\": " << t.time_block << extra_json << ", \"steps\": " << r.steps
         << ", \"mcells_per_s\": " << fmt(r.mcells, 1) << ", \"gflops\": " << fmt(12 * r.mcells / 1000, 1)
         << ", \"bytes_per_cell_step\": " << fmt(bpc, 2) << ", \"gb_per_s_counted\": " << fmt(gbs, 1)
         << ", \"roofline_mcells_per_s\": " << fmt(roof, 1) << ", \"of_roofline\": " << fmt(r.mcells / roof, 3)
         << "}";
    first = false;
    return roof;
  };
  if (main_table) {
    std::cout << "| model | pol | L | kernel | Mcells/s | GFLOPS | B/cell-step (one pass) | roofline Mcells/s | of roofline |\n"
                 "|---|---|---|---|---|---|---|---|---|\n";
    for (Model m : {Model::vacuum_pec, Model::indexed_cpml})
      for (Polarization2D pol : {Polarization2D::tm, Polarization2D::te})
        for (int L = 1024; L <= max_l; L *= 2) {
          Fdtd2dOperator op(make_setup(L, pol, m));
          const double bpc = bytes_per_cell_step(op, m);
          for (int tb : {-1, 1, 0}) {  // -1: plain, one-cell kernels
            Fdtd2dTuning t;
            t.time_block = tb < 0 ? 1 : tb;
            if (tb < 0) t.plain_cells = 1;
            const Timing r = time_engine(op, t, target_s);
            const std::string variant = tb < 0 ? "plain 1-cell" : tb == 1 ? "plain" : (m == Model::vacuum_pec ? "default (blocked)" : "default (plain: CPML)");
            const double roof = record("main", variant, m, pol, L, t, ", \"plain_cells\": " + std::to_string(t.plain_cells), r, bpc);
            std::cout << "| " << model_name(m) << " | " << polarization_name(pol) << " | " << L << "^2 | " << variant
                      << " | " << fmt(r.mcells, 0) << " | " << fmt(12 * r.mcells / 1000, 1) << " | " << fmt(bpc, 1)
                      << " | " << fmt(roof, 0) << " | " << fmt(r.mcells / roof, 2) << " |\n";
            std::cout.flush();
          }
        }
  }
  if (variants) {
    const int L = variants_l > 0 ? variants_l : std::min(8192, max_l);
    const char* ptab = std::getenv("VEM_FDTD2D_PLAIN_TABLE");
    std::cout << "\nPlain-kernel variants at " << L << "^2, VEM_FDTD2D_PLAIN_TABLE " << (ptab ? ptab : "unset")
              << " (copy bandwidth " << fmt(bw, 0)
              << " GB/s):\n\n| model | pol | cells/thread | stores | threads | Mcells/s | of roofline |\n"
                 "|---|---|---|---|---|---|---|\n";
    // {cells, stores (1 ordinary, 2 streaming), block_x, block_y}; the first is the old default.
    const int all[][4] = {{1, 1, 128, 2}, {2, 1, 64, 4}, {2, 1, 128, 2}, {2, 2, 64, 4}, {4, 1, 32, 8}, {4, 1, 64, 4},
                          {4, 1, 128, 2}, {4, 1, 256, 1}, {4, 1, 64, 2}, {4, 1, 128, 4}, {4, 2, 64, 4}};
    // --variants-indexed: indexed_cpml only, the 2- and 4-cell kernels' best blocks (coefficient
    // table location from VEM_FDTD2D_PLAIN_TABLE, recorded as "plain_table").
    const int few[][4] = {{1, 1, 128, 2}, {2, 1, 128, 2}, {4, 1, 128, 2}, {4, 1, 256, 1}};
    std::vector<std::array<int, 4>> vs;
    if (variants_indexed_only) for (const auto& v : few) vs.push_back({v[0], v[1], v[2], v[3]});
    else for (const auto& v : all) vs.push_back({v[0], v[1], v[2], v[3]});
    for (Model m : {Model::vacuum_pec, Model::indexed_cpml})
      for (Polarization2D pol : {Polarization2D::tm, Polarization2D::te}) {
        if (variants_indexed_only && m != Model::indexed_cpml) continue;
        Fdtd2dOperator op(make_setup(L, pol, m));
        const double bpc = bytes_per_cell_step(op, m);
        for (const auto& v : vs) {
          Fdtd2dTuning t;
          t.time_block = 1;
          t.plain_cells = v[0];
          t.plain_stores = v[1];
          t.block_x = v[2];
          t.block_y = v[3];
          const Timing r = time_engine(op, t, target_s / 2);
          const double roof = record("variants", "plain", m, pol, L, t,
                                     ", \"plain_cells\": " + std::to_string(v[0]) + ", \"plain_stores\": \"" +
                                         (v[1] == 2 ? "streaming" : "ordinary") + "\", \"plain_table\": \"" +
                                         (ptab ? ptab : "default") + "\"", r, bpc);
          std::cout << "| " << model_name(m) << " | " << polarization_name(pol) << " | " << v[0] << " | "
                    << (v[1] == 2 ? "cs" : "-") << " | " << v[2] << "x" << v[3] << " | " << fmt(r.mcells, 0) << " | "
                    << fmt(r.mcells / roof, 3) << " |\n";
          std::cout.flush();
        }
      }
  }
  if (sweep) {
    const int L = std::min(8192, max_l);
    std::cout << "\nSweep at " << L << "^2 (TM):\n\n| model | kernel | block / tile | rows | T | Mcells/s | of roofline |\n"
                 "|---|---|---|---|---|---|---|\n";
    if (sweep_vacuum) {
      Fdtd2dOperator op(make_setup(L, Polarization2D::tm, Model::vacuum_pec));
      const double bpc = 36.0;
      const int shapes[][2] = {{32, 1}, {32, 2}, {32, 4}, {32, 8}, {32, 16}, {64, 1}, {64, 2}, {64, 4},
                               {64, 8}, {128, 1}, {128, 2}, {128, 4}, {256, 1}, {256, 2}, {16, 16}, {16, 8}, {8, 32}};
      for (int rows : {1, 2, 4}) {
        setenv("VEM_FDTD2D_ROWS", std::to_string(rows).c_str(), 1);
        for (const auto& sh : shapes) {
          if (rows > 1 && sh[0] < 32) continue;
          Fdtd2dTuning t;
          t.time_block = 1;
          t.plain_cells = 1;  // the block-shape x rows sweep of the one-cell kernels
          t.block_x = sh[0];
          t.block_y = sh[1];
          const Timing r = time_engine(op, t, target_s / 2);
          const double roof = record("sweep", "plain", Model::vacuum_pec, Polarization2D::tm, L, t,
                                     ", \"rows\": " + std::to_string(rows), r, bpc);
          std::cout << "| vacuum_pec | plain | " << sh[0] << "x" << sh[1] << " | " << rows << " | 1 | " << fmt(r.mcells, 0)
                    << " | " << fmt(r.mcells / roof, 2) << " |\n";
          std::cout.flush();
        }
      }
      unsetenv("VEM_FDTD2D_ROWS");
      const int tiles[][2] = {{64, 64}, {128, 32}, {128, 64}, {256, 32}, {128, 128}, {256, 64}};
      for (const auto& tile : tiles)
        for (int T : {2, 4, 6, 8, 12, 16}) {
          if (4 * T > std::min(tile[0], tile[1])) continue;  // interior under half the tile
          setenv("VEM_FDTD2D_TILE", (std::to_string(tile[0]) + "x" + std::to_string(tile[1])).c_str(), 1);
          Fdtd2dTuning t;
          t.time_block = T;
          Timing r;
          try {
            r = time_engine(op, t, target_s / 2);
          } catch (const std::exception& e) {
            std::cout << "| vacuum_pec | blocked | " << tile[0] << "x" << tile[1] << " | - | " << T << " | failed: " << e.what() << " | |\n";
            continue;
          }
          const double roof = record("sweep", "blocked", Model::vacuum_pec, Polarization2D::tm, L, t,
                                     ", \"tile\": \"" + std::to_string(tile[0]) + "x" + std::to_string(tile[1]) + "\"", r, bpc);
          std::cout << "| vacuum_pec | blocked | " << tile[0] << "x" << tile[1] << " | - | " << T << " | "
                    << fmt(r.mcells, 0) << " | " << fmt(r.mcells / roof, 2) << " |\n";
          std::cout.flush();
        }
      unsetenv("VEM_FDTD2D_TILE");
    }
    {
      // Materials in the blocked kernel: indexed, PEC edges (same 36 + 4 B count as indexed bulk).
      for (Polarization2D pol : {Polarization2D::tm, Polarization2D::te}) {
        Fdtd2dOperator op(make_setup(L, pol, Model::indexed_pec));
        for (int T : {1, 4, 8}) {
          Fdtd2dTuning t;
          t.time_block = T;
          const Timing r = time_engine(op, t, target_s / 2);
          const char* tab = std::getenv("VEM_FDTD2D_BLOCKED_TABLE");
          const double roof = record("sweep", T == 1 ? "plain" : "blocked", Model::indexed_pec, pol, L, t,
                                     std::string(", \"blocked_table\": \"") + (tab ? tab : "default") + "\"", r, 40.0);
          std::cout << "| indexed_pec " << polarization_name(pol) << " | " << (T == 1 ? "plain" : "blocked")
                    << " | default | 1 | " << T << " | " << fmt(r.mcells, 0) << " | " << fmt(r.mcells / roof, 2) << " |\n";
          std::cout.flush();
        }
      }
    }
  }
  json << "\n  ]\n}\n";
  std::ofstream(out_path) << json.str();
  return 0;
}
