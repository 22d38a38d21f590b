// Small and mid-size grids of the CUDA FDTD engine (issue 16), not a test.
//
//   bench_fdtd_small rows <out.json> [commit] [target_s] [variant]
//     Mcells/s of the CUDA engine on the model of bench_fdtd (16 lossy materials in 8^3-cell
//     blocks, indexed, 1 mm cells, 10-cell CPML on every face, one point source) at 64^3, 96^3,
//     128^3, 160 x 160 x 93 (the size of the FDFD benchmark's head), 192^3 and 256^3, for the small-grid
//     variants of EngineTuning, all in one process (compare rows of one run only):
//       stream      two passes (EngineTuning::step), one launch per kernel (programmatic dependent
//                   launch), no graph, no L2 window;
//       graph       two passes in CUDA graphs of 32 steps (graph_chunk), re-captured per chunk
//                   and updated;
//       onepass_slabs+graph  one pass per step (EngineTuning::step) with the CPML slab kernels and
//                   E computed again, in graphs;
//       onepass     one pass with the CPML folded in (EngineTuning::onepass_cpml), stream launches;
//       onepass+graph  the same in graphs;
//       persistent  the steps of a run() call in one cooperative kernel, two phases per step in
//                   place (EngineTuning::Step::persistent), the automatic sample walk (hoisted
//                   below 4 M samples, EngineTuning::PersistentSamples);
//       persistent_chained  the same with the chained samples (EngineTuning::PersistentSamples);
//       persistent_global_table  persistent with the material table in global memory instead of
//                   constant memory (EngineTuning::table);
//       default     EngineTuning{} (what users get).
//     (The graph8 / graph128 / L2-window variants of fdtd_small_grids_h100.md are left out since
//     they were measured: no difference / slower.)
//     Each: 5 warm-up steps, the step count calibrated to ~target_s (default 0.3 s), median of 3.
//     [variant]: that variant's rows only.
//     Bytes per cell-step: bench_fdtd's ideal count (76 + 2 x 42 x CPML-slab fraction; one pass with
//     the CPML folded: 50 + 32 x the fraction, the psi arrays read and written; with the slab
//     kernels: 50 + 2 x 42 x fraction + 38 x the samples computed again; persistent: 76 + 32 x the
//     fraction; bench_models.h).
//   bench_fdtd_small head <out.json> [commit] [runs]
//     The steady-state head SAR run as the ParaView FDTD Steady State filter makes it, without
//     VTK: the head phantom (HeadPhantom defaults: 0.2816 x 0.2816 x 0.179 m) voxelized at 2 mm,
//     the filter's default domain (8 cells of air padding, 10-cell CPML), the tissue table at
//     900 MHz (one material per label, the density per voxel), a 1 V/m plane wave, DFT at
//     900 MHz, far field on, 1 g and 10 g averaged SAR, the CUDA backend; run_fdtd_harmonic's
//     stage times (HarmonicTimings) plus the model build. `runs` times (default 2: the first pays
//     the CUDA context and module load). The VTK conversion of the outputs
//     (vem_vtk::MakeSteadyStateOutputs) is not measured here: the device machine has no VTK.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_models.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/models/head_phantom.h"
#include "vem/models/mie.h"
#include "vem/models/voxel_shapes.h"
#include "../unit/mie_rcs_error.h"

#if VEM_WITH_CUDA
// The two-step pair's block timeline (fused_step.h; a build with the CMake option VEM_BLOCK_TRACE).
namespace vem::onepass {
bool block_trace_arm(std::size_t records);
long long block_trace_dump(const std::string& path);
}  // namespace vem::onepass
#endif

using namespace vem;
using clk = std::chrono::steady_clock;

namespace {

double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

// bench_fdtd's model on an nx x ny x nz grid (the same for cubic grids).
FdtdSetup block_setup(int nx, int ny, int nz) {
  FdtdSetup s;
  s.grid = {nx, ny, nz, 1e-3, 1e-3, 1e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, 10);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const int bx = (nx + 7) / 8, by = (ny + 7) / 8, bz = (nz + 7) / 8;
  std::vector<int> block_label(std::size_t(bx) * by * bz);
  for (auto& v : block_label) v = int(16 * u(rng)) % 16;
  std::vector<double> eps(16), sig(16);
  for (int m = 0; m < 16; ++m) { eps[m] = 1 + 60 * u(rng); sig[m] = 1.5 * u(rng); }
  s.material_mode = MaterialMode::indexed;
  for (int m = 0; m < 16; ++m) s.materials.push_back(Material::isotropic("m" + std::to_string(m), eps[m], sig[m]));
  s.material_index.resize(std::size_t(s.grid.cell_count()));
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        s.material_index[i + std::size_t(nx) * (j + std::size_t(ny) * k)] =
            std::uint16_t(block_label[i / 8 + bx * (j / 8 + by * (k / 8))]);
  PointSource src;
  src.i = nx / 2; src.j = ny / 2; src.k = nz / 2;
  src.waveform = Waveform::modulated_gaussian(10e9, 10e9);
  s.sources = {src};
  return s;
}

struct Variant {
  const char* name;
  EngineTuning t;
};

std::vector<Variant> variants() {
  using GR = EngineTuning::Graph;
  using LP = EngineTuning::L2Persist;
  auto mk = [](GR g, int chunk, LP l) {
    EngineTuning t;
    t.step = EngineTuning::Step::two_pass;
    t.graph = g;
    t.graph_chunk = chunk;
    t.l2_persist = l;
    return t;
  };
  auto one = [&](GR g, EngineTuning::OnePassCpml cp) {
    EngineTuning t = mk(g, 0, LP::off);
    t.step = EngineTuning::Step::one_pass;
    t.onepass_cpml = cp;
    return t;
  };
  using OC = EngineTuning::OnePassCpml;
  auto persistent = [&]() {
    EngineTuning t = mk(GR::off, 0, LP::off);
    t.step = EngineTuning::Step::persistent;
    return t;
  };
  using TP = EngineTuning::TablePlacement;
  auto persistent_with = [&](EngineTuning::PersistentSamples ps, TP table) {
    EngineTuning t = persistent();
    t.persistent_samples = ps;
    t.table = table;
    return t;
  };
  return {{"stream", mk(GR::off, 0, LP::off)},
          {"graph", mk(GR::on, 0, LP::off)},
          {"onepass_slabs+graph", one(GR::on, OC::slab_kernels)},
          {"onepass", one(GR::off, OC::folded)},
          {"onepass+graph", one(GR::on, OC::folded)},
          {"persistent", persistent()},
          {"persistent_chained", persistent_with(EngineTuning::PersistentSamples::chained, TP::automatic)},
          {"persistent_global_table", persistent_with(EngineTuning::PersistentSamples::automatic, TP::global)},
          {"default", EngineTuning{}}};
}

int run_rows(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_small_grids.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  const double target_s = argc > 4 ? std::atof(argv[4]) : 0.3;
  const std::string only = argc > 5 ? argv[5] : "";  // one variant's rows only
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  if (!cuda_available()) { std::cerr << "no CUDA device\n"; return 1; }
  struct Size { int nx, ny, nz; };
  const Size sizes[] = {{64, 64, 64}, {96, 96, 96}, {128, 128, 128}, {160, 160, 93}, {192, 192, 192}, {256, 256, 256}};
  std::ostringstream js, md;
  const std::string date = vem_bench::utc_date();
  js << std::setprecision(6) << "{\n  \"benchmark\": \"fdtd_small_grids\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << date << "\",\n  \"copy_bandwidth_GBps\": " << copy
     << ",\n  \"model\": \"indexed, 16 lossy materials in 8^3 blocks, 1 mm, 10-cell CPML on every face, one point source\""
     << ",\n  \"results\": [\n";
  md << "Device: " << device << "; commit " << commit << "; " << date << "; copy bandwidth measured in the same run: "
     << std::fixed << std::setprecision(0) << copy << " GB/s.\n\n"
     << "| grid | variant | steps | us/step | Mcells/s | B/cell-step | GB/s | of copy BW |\n|---|---|---|---|---|---|---|---|\n";
  bool first = true;
  // VEM_SMALL_MAX_N=n / VEM_SMALL_MIN_N=n: the grids up to / from n cells along x only (a quicker
  // A/B run).
  const char* max_n = std::getenv("VEM_SMALL_MAX_N");
  const char* min_n = std::getenv("VEM_SMALL_MIN_N");
  // VEM_BLOCK_TRACE_OUT=<prefix>: the block timeline of the last timed run of each row into
  // <prefix>_<grid>_<variant>.csv (a build with the CMake option VEM_BLOCK_TRACE; fused_step.cu).
  const char* trace_out = std::getenv("VEM_BLOCK_TRACE_OUT");
  for (const Size& sz : sizes) {
    if (max_n && sz.nx > std::atoi(max_n)) continue;
    if (min_n && sz.nx < std::atoi(min_n)) continue;
    const FdtdOperator op(block_setup(sz.nx, sz.ny, sz.nz));
    const double cells = double(op.grid().cell_count());
    for (const Variant& v : variants()) {
      if (!only.empty() && only != v.name) continue;
      auto eng = make_engine(op, Backend::cuda, 0, nullptr, v.t);
      auto t0 = clk::now();
      eng->run(5, {}, 5);
      const double per = since(t0) / 5;
      int steps = std::min(20000, std::max(20, int(target_s / std::max(per, 1e-6))));
      std::vector<double> secs;
      bool traced = false;
      for (int r = 0; r < 3; ++r) {
#if VEM_WITH_CUDA
        if (trace_out && r == 2) traced = onepass::block_trace_arm(std::size_t(1) << 16);
#endif
        t0 = clk::now();
        eng->run(steps, {}, steps);
        secs.push_back(since(t0));
      }
#if VEM_WITH_CUDA
      if (traced) {
        const std::string path = std::string(trace_out) + "_" + std::to_string(sz.nx) + "x" + std::to_string(sz.ny) +
                                 "x" + std::to_string(sz.nz) + "_" + v.name + ".csv";
        std::cerr << "block trace: " << onepass::block_trace_dump(path) << " records into " << path << "\n";
      } else if (trace_out) {
        std::cerr << "block trace: this build records none (CMake option VEM_BLOCK_TRACE)\n";
      }
#endif
      std::sort(secs.begin(), secs.end());
      const double s = secs[1];
      const double mcells = steps * cells / s / 1e6;
      std::ostringstream grid;
      grid << sz.nx << "x" << sz.ny << "x" << sz.nz;
      // Bytes by the path the steps took (the default variant picks one by itself).
      const long long pers = (long long)eng->persistent_steps(), onep = (long long)eng->one_pass_steps();
      const bool folded = v.t.onepass_cpml != EngineTuning::OnePassCpml::slab_kernels;
      const double bpc = vem_bench::ideal_bytes_for(*eng, op, folded);
      const double gbs = mcells * 1e6 * bpc / 1e9;
      std::cerr << grid.str() << " " << v.name << ": " << mcells << " Mcells/s, " << s / steps * 1e6
                << " us/step, one-pass steps " << onep << ", persistent " << pers << "\n";
      js << (first ? "" : ",\n") << "    {\"grid\": \"" << grid.str() << "\", \"cells\": " << cells << ", \"variant\": \""
         << v.name << "\", \"steps\": " << steps << ", \"seconds\": " << s << ", \"us_per_step\": " << s / steps * 1e6
         << ", \"mcells_per_s\": " << mcells << ", \"bytes_per_cell_step\": " << bpc << ", \"GBps\": " << gbs
         << ", \"fraction_of_copy\": " << (copy > 0 ? gbs / copy : 0) << ", \"one_pass_steps\": " << onep
         << ", \"persistent_steps\": " << pers << "}";
      first = false;
      md << "| " << grid.str() << " | " << v.name << " | " << steps << " | " << std::setprecision(1) << s / steps * 1e6
         << " | " << std::setprecision(0) << mcells << " | " << std::setprecision(1) << bpc << " | "
         << std::setprecision(0) << gbs << " | " << std::setprecision(2) << (copy > 0 ? gbs / copy : 0) << " |\n";
    }
  }
  js << "\n  ]\n}\n";
  std::ofstream(out) << js.str();
  const std::string stem = out.size() > 5 && out.substr(out.size() - 5) == ".json" ? out.substr(0, out.size() - 5) : out;
  std::ofstream(stem + ".md") << md.str();
  std::cout << md.str();
  return 0;
}

int run_head(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_head_e2e.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  const int runs = argc > 4 ? std::max(1, std::atoi(argv[4])) : 2;
  std::string device = "none";
  const double copy = vem_bench::copy_bandwidth_gbs(&device);
  const double f = 900e6, h = 2e-3;
  std::ostringstream js;
  js << std::setprecision(6) << "{\n  \"benchmark\": \"fdtd_head_end_to_end\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << vem_bench::utc_date()
     << "\",\n  \"copy_bandwidth_GBps\": " << copy
     << ",\n  \"case\": \"head phantom (HeadPhantom defaults) at 2 mm, 900 MHz plane wave 1 V/m, DFT 900 MHz, "
        "far field, 1 g + 10 g SAR; padding 8, CPML 10 (filter defaults); CUDA\""
     << ",\n  \"not_measured\": \"VTK conversion of the outputs (no VTK on the device machine)\",\n  \"runs\": [\n";
  for (int run = 0; run < runs; ++run) {
    const auto t_all = clk::now();
    // ---- the model, as vem_vtk::BuildVoxelModel's label mode builds it -------------------------
    auto t0 = clk::now();
    std::array<int, 3> vox{};
    const std::vector<std::uint16_t> labels = head_phantom_image(h, vox);
    const double t_phantom = since(t0);
    t0 = clk::now();
    const VoxelDomain d = make_voxel_domain(vox, {h, h, h}, kHeadPhantomDefaultOrigin, VoxelDomainOptions{});
    const LabelProperties props = head_phantom_tissue_table().lookup_image(labels, f);
    FdtdSetup setup;
    setup.courant_factor = d.options.courant_factor;
    setup.boundaries = d.boundaries();
    d.set_label_materials(setup, labels, props);
    HarmonicOptions o;
    o.frequencies = {f};
    o.far_field = true;
    o.averaged_sar = true;
    o.backend = Backend::cuda;
    o.density = d.tissue_density(labels, props);
    const double t_model = since(t0);
    // ---- the solve ---------------------------------------------------------------------------
    t0 = clk::now();
    const HarmonicResult r = run_fdtd_harmonic(setup, o);
    const double t_solve = since(t0);
    const double total = since(t_all);
    const HarmonicTimings& tm = r.timings;
    const auto& fr = r.frequencies.at(0);
    std::cerr << "head run " << run << ": grid " << setup.grid.nx << "x" << setup.grid.ny << "x" << setup.grid.nz
              << ", " << r.steps << " steps (" << (r.converged ? "converged" : "not converged") << "), "
              << r.mcells_per_second << " Mcells/s; phantom " << t_phantom << " s, model " << t_model
              << " s, plan " << tm.plan << ", operator " << tm.op << ", engine " << tm.engine << ", extensions "
              << tm.extensions << ", stepping " << tm.stepping << ", checks " << tm.checks << ", phasors "
              << tm.phasors << ", local SAR " << tm.local_sar << ", averaged SAR " << tm.averaged_sar
              << ", far field " << tm.far_field << "; run_fdtd_harmonic " << t_solve << " s, all " << total
              << " s; peak 10 g " << fr.sar_10g.peak << " W/kg\n";
    js << (run ? ",\n" : "") << "    {\"run\": " << run << ", \"grid\": [" << setup.grid.nx << ", " << setup.grid.ny
       << ", " << setup.grid.nz << "], \"cells\": " << setup.grid.cell_count() << ", \"backend\": \"" << r.backend
       << "\", \"steps\": " << r.steps << ", \"converged\": " << (r.converged ? "true" : "false")
       << ", \"dft_sample_interval\": " << r.dft_sample_interval << ", \"mcells_per_s_stepping\": " << r.mcells_per_second
       << ", \"seconds\": {\"phantom_voxelization\": " << t_phantom << ", \"model_build\": " << t_model
       << ", \"plan\": " << tm.plan << ", \"operator\": " << tm.op << ", \"engine_create_upload\": " << tm.engine
       << ", \"extensions_create\": " << tm.extensions << ", \"extensions_tfsf\": " << tm.extensions_tfsf
       << ", \"stepping_with_tfsf_dft_hooks\": " << tm.stepping
       << ", \"steady_state_checks\": " << tm.checks << ", \"phasor_download_e2\": " << tm.phasors
       << ", \"phasor_read\": " << tm.phasors_read
       << ", \"local_sar\": " << tm.local_sar << ", \"averaged_sar_1g_10g\": " << tm.averaged_sar
       << ", \"far_field\": " << tm.far_field << ", \"far_field_transform\": " << tm.far_field_transform
       << ", \"run_fdtd_harmonic_total\": " << tm.total
       << ", \"run_fdtd_harmonic_outside\": " << t_solve << ", \"all\": " << total << "}, \"peak_local_sar\": "
       << fr.peak_local_sar << ", \"peak_1g\": " << fr.sar_1g.peak << ", \"peak_10g\": " << fr.sar_10g.peak
       << ", \"whole_body_sar\": " << fr.whole_body_sar << ", \"scattering_cross_section\": " << std::setprecision(17)
       << fr.scattering_cross_section << ", \"rcs_e_plane_0_90_180\": [" << fr.far_field.front().e_plane << ", "
       << fr.far_field[fr.far_field.size() / 2].e_plane << ", " << fr.far_field.back().e_plane << "]"
       << std::setprecision(6) << ", \"warning\": \"" << r.warning << "\"}";
  }
  js << "\n  ]\n}\n";
  std::ofstream(out) << js.str();
  std::cout << js.str();
  return 0;
}

// Relative L2 difference of two arrays of the same layout.
template <class A>
double rel_l2(const std::vector<A>& a, const std::vector<A>& b) {
  double num = 0, den = 0;
  for (std::size_t q = 0; q < a.size() && q < b.size(); ++q) {
    num += std::norm(std::complex<double>(a[q]) - std::complex<double>(b[q]));
    den += std::norm(std::complex<double>(b[q]));
  }
  return den > 0 ? std::sqrt(num / den) : 0.0;
}

// storage <out.json> [commit]: the error of the 2-byte field storages (FdtdSetup::field_storage)
// against float32 on the two cases, with the stepping rate of each, CUDA:
//  - the steady-state head at 2 mm (run_head's model: 900 MHz plane wave of 1 V/m, 1 g and 10 g
//    SAR): peaks and the relative L2 difference of |E|^2, local SAR and the 10 g SAR map;
//  - the dielectric sphere of issue 15 (a = 7.2 cm, eps_r 4, 1 GHz, 5 mm cells, staircase and
//    subpixel-smoothed): the RCS error against Mie (worst angle within 20 dB, rms, C_sca).
int run_storage_accuracy(int argc, char** argv) {
  const std::string out = argc > 2 ? argv[2] : "fdtd_storage_accuracy.json";
  const std::string commit = argc > 3 ? argv[3] : "unknown";
  std::string device = "none";
  vem_bench::copy_bandwidth_gbs(&device);
  const FieldStorage kinds[] = {FieldStorage::float32, FieldStorage::float16, FieldStorage::bfloat16};
  std::ostringstream js;
  js << std::setprecision(6) << "{\n  \"benchmark\": \"fdtd_field_storage_accuracy\",\n  \"device\": \"" << device
     << "\",\n  \"commit\": \"" << commit << "\",\n  \"date\": \"" << vem_bench::utc_date() << "\",\n  \"head\": [\n";
  {
    const double f = 900e6, h = 2e-3;
    std::array<int, 3> vox{};
    const std::vector<std::uint16_t> labels = head_phantom_image(h, vox);
    const VoxelDomain d = make_voxel_domain(vox, {h, h, h}, kHeadPhantomDefaultOrigin, VoxelDomainOptions{});
    const LabelProperties props = head_phantom_tissue_table().lookup_image(labels, f);
    const std::vector<float> density = d.tissue_density(labels, props);
    HarmonicResult ref;
    bool first = true;
    // float32 to its steady state (tolerance 1e-3); float16 to its own (tolerance 1e-2, the least
    // the solver accepts with float16: fdtd_harmonic.cpp) and for exactly the float32 run's steps
    // (fixed_steps); bfloat16 (no steady state accepted) for the float32 run's steps.
    for (FieldStorage fs : kinds) {
      for (int fixed = fs == FieldStorage::bfloat16 ? 1 : 0; fixed < (fs == FieldStorage::float32 ? 1 : 2); ++fixed) {
        FdtdSetup setup;
        setup.courant_factor = d.options.courant_factor;
        setup.boundaries = d.boundaries();
        d.set_label_materials(setup, labels, props);
        setup.field_storage = fs;
        HarmonicOptions o;
        o.frequencies = {f};
        o.averaged_sar = true;
        o.backend = Backend::cuda;
        o.density = density;
        if (fs != FieldStorage::float32) {
          if (fixed) o.fixed_steps = int(ref.steps);
          else o.steady_state_tolerance = 1e-2;
        }
        const std::string label = std::string(field_storage_name(fs)) + (fixed ? " fixed steps" : " steady state");
        js << (first ? "" : ",\n") << "    {\"storage\": \"" << field_storage_name(fs) << "\", \"steps_rule\": \""
           << (fixed ? "fixed: the float32 run's steps" : "steady state, tolerance ") << (fixed ? "" : fs == FieldStorage::float32 ? "1e-3" : "1e-2") << "\"";
        first = false;
        double last = -1;
        if (std::getenv("VEM_TRACE_CHANGE"))  // the steady-state check's relative change at each check
          o.progress = [&](int done, int, double change) {
            if (change != last) std::cerr << "  " << label << " step " << done << ": change " << change << "\n";
            last = change;
            return true;
          };
        HarmonicResult r;
        try {
          r = run_fdtd_harmonic(setup, o);
        } catch (const std::exception& e) {
          std::cerr << "head " << label << ": error: " << e.what() << "\n";
          js << ", \"error\": \"" << e.what() << "\"}";
          continue;
        }
        if (fs == FieldStorage::float32) ref = r;
        const auto& fr = r.frequencies.at(0);
        const auto& f0 = ref.frequencies.at(0);
        // |E|^2 over the tissue voxels only (density > 0) and over the whole grid.
        std::vector<float> t_now, t_ref;
        for (std::size_t q = 0; q < density.size() && q < fr.e_squared.size(); ++q)
          if (density[q] > 0) { t_now.push_back(fr.e_squared[q]); t_ref.push_back(f0.e_squared[q]); }
        const double e2 = rel_l2(fr.e_squared, f0.e_squared), e2t = rel_l2(t_now, t_ref);
        const double ls = rel_l2(fr.local_sar, f0.local_sar);
        const double s10 = rel_l2(fr.sar_10g.sar, f0.sar_10g.sar), s1 = rel_l2(fr.sar_1g.sar, f0.sar_1g.sar);
        std::cerr << "head " << label << ": " << r.steps << " steps (" << (r.converged ? "converged" : "not converged")
                  << ", last relative change " << r.last_relative_change
                  << "), " << r.mcells_per_second << " Mcells/s, stepping " << r.timings.stepping << " s, peak 1 g "
                  << fr.sar_1g.peak << " (float32 " << f0.sar_1g.peak << "), 10 g " << fr.sar_10g.peak << " ("
                  << f0.sar_10g.peak << ") W/kg; rel L2 |E|^2 all " << e2 << ", tissue " << e2t << ", local SAR " << ls
                  << ", 1 g " << s1 << ", 10 g " << s10 << "\n";
        js << ", \"steps\": " << r.steps << ", \"converged\": " << (r.converged ? "true" : "false")
           << ", \"last_relative_change\": " << r.last_relative_change << ", \"mcells_per_s_stepping\": " << r.mcells_per_second << ", \"stepping_s\": " << r.timings.stepping
           << ", \"peak_local_sar\": " << fr.peak_local_sar << ", \"peak_1g\": " << fr.sar_1g.peak
           << ", \"peak_10g\": " << fr.sar_10g.peak << ", \"whole_body_sar\": " << fr.whole_body_sar
           << ", \"peak_1g_rel_error\": " << fr.sar_1g.peak / f0.sar_1g.peak - 1
           << ", \"peak_10g_rel_error\": " << fr.sar_10g.peak / f0.sar_10g.peak - 1
           << ", \"whole_body_rel_error\": " << fr.whole_body_sar / f0.whole_body_sar - 1
           << ", \"rel_l2_e_squared_all\": " << e2 << ", \"rel_l2_e_squared_tissue\": " << e2t
           << ", \"rel_l2_local_sar\": " << ls << ", \"rel_l2_sar_1g\": " << s1 << ", \"rel_l2_sar_10g\": " << s10 << "}";
      }
    }
  }
  js << "\n  ],\n  \"sphere\": [\n";
  {
    constexpr double kF = 1e9, kA = 0.072, kEpsIn = 4.0, kInner = 0.32, d = 0.005;
    const int pml = 10, n = int(std::lround(kInner / d)) + 2 * pml, c = n / 2;
    bool first = true;
    int ref_steps = 0;
    // float32 to its steady state (tolerance 1e-4, as test_subpixel_sphere), float16 to its own
    // (1e-2) and for the float32 run's steps, bfloat16 for the float32 run's steps.
    for (const bool smoothed : {false, true}) {
      for (int v = 0; v < 4; ++v) {
        const FieldStorage fs = v == 0 ? FieldStorage::float32 : v == 3 ? FieldStorage::bfloat16 : FieldStorage::float16;
        const bool fixed = v >= 2;
        FdtdSetup s;
        s.grid = {n, n, n, d, d, d};
        s.grid.origin = {-c * d, -c * d, -c * d};
        s.boundaries = BoundarySpec::all(BoundaryType::cpml, pml);
        s.materials = {Material::vacuum(), Material::isotropic("sphere", kEpsIn)};
        if (smoothed) {
          SubpixelOptions so;
          so.frequency = kF;
          so.samples = 8;
          s.material_mode = MaterialMode::coefficient_array;
          s.medium = subpixel_smoothed_medium(s.grid, s.materials, SphereGeometry({0, 0, 0}, kA, 1, 0), so);
        } else {
          s.material_mode = MaterialMode::indexed;
          paint_sphere(s.grid, {0, 0, 0}, kA, 1, s.material_index);
        }
        s.field_storage = fs;
        HarmonicOptions o = vem_test::sphere_rcs_options(kF, Backend::cuda);
        if (v == 1) o.steady_state_tolerance = 1e-2;
        if (fixed) o.fixed_steps = ref_steps;
        js << (first ? "" : ",\n") << "    {\"model\": \"" << (smoothed ? "smoothed" : "staircase")
           << "\", \"storage\": \"" << field_storage_name(fs) << "\", \"steps_rule\": \""
           << (fixed ? "fixed: the float32 run's steps" : v == 0 ? "steady state, tolerance 1e-4" : "steady state, tolerance 1e-2") << "\"";
        first = false;
        HarmonicResult r;
        try {
          r = run_fdtd_harmonic(s, o);
        } catch (const std::exception& ex) {
          std::cerr << "sphere " << field_storage_name(fs) << ": error: " << ex.what() << "\n";
          js << ", \"error\": \"" << ex.what() << "\"}";
          continue;
        }
        if (fs == FieldStorage::float32) ref_steps = int(r.steps);
        const auto& fr = r.frequencies.at(0);
        const MieSphere mie(kA, kF, kEpsIn);
        const vem_test::RcsError e = vem_test::rcs_error(fr, mie);
        std::cerr << "sphere " << (smoothed ? "smoothed " : "staircase ") << field_storage_name(fs) << (fixed ? " fixed" : "") << ": " << r.steps
                  << " steps (" << (r.converged ? "converged" : "NOT converged") << "), worst " << e.worst_db
                  << " dB at " << e.plane << " " << e.worst_deg << " deg, rms " << e.rms_db << " dB, C_sca ratio "
                  << e.csca_ratio << "\n";
        js << ", \"steps\": " << r.steps << ", \"converged\": " << (r.converged ? "true" : "false") << ", \"worst_db\": " << e.worst_db
           << ", \"worst_plane\": \"" << e.plane << "\", \"worst_deg\": " << e.worst_deg << ", \"rms_db\": " << e.rms_db
           << ", \"csca_ratio\": " << e.csca_ratio << ", \"compared_angles\": " << e.compared << "}";
      }
    }
  }
  js << "\n  ]\n}\n";
  std::ofstream(out) << js.str();
  std::cout << js.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "rows") return run_rows(argc, argv);
    if (mode == "storage") return run_storage_accuracy(argc, argv);
    if (mode == "head") return run_head(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_fdtd_small: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: bench_fdtd_small rows <out.json> [commit] [target_s] | head <out.json> [commit] [runs]\n";
  return 2;
}
