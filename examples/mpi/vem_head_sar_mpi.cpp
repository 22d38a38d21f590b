// The steady-state head SAR run over MPI ranks without ParaView (issue 18): the procedural head
// phantom (HeadPhantom defaults: 0.2816 x 0.2816 x 0.179 m, tissues of head_phantom.h) voxelized
// at a chosen cubic cell size, the model built as the FDTD Steady State filter builds it (label
// mode: padding 8, CPML 10, indexed materials, tissue densities), a 1 V/m plane wave at 900 MHz,
// run with run_fdtd_harmonic_distributed on the ranks (CUDA: one GPU per rank), and the SAR
// summary: whole-head SAR, peak local SAR, psSAR 1 g / 10 g with their voxel, the wall time of
// the stages. For the convergence of psSAR with the cell size (2, 1, 0.5 mm).
//
//   mpirun -np 4 vem_head_sar_mpi --cell 0.5e-3 --backend cuda --gpus-per-node 4 --json out.json
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_harmonic.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/models/head_phantom.h"

using namespace vem;

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

struct Args {
  double cell = 2e-3, frequency = 900e6;
  std::string backend = "cuda", json;
  int gpus_per_node = 1;
};

[[noreturn]] void usage(int rank, int code) {
  if (rank == 0)
    std::printf("usage: mpirun -np N vem_head_sar_mpi [--cell m] [--frequency Hz] [--backend cpu|cuda|auto]\n"
                "                                   [--gpus-per-node G] [--json FILE]\n");
  MPI_Finalize();
  std::exit(code);
}

Args parse(int argc, char** argv, int rank) {
  Args a;
  for (int q = 1; q < argc; ++q) {
    const std::string s = argv[q];
    if (q + 1 >= argc && s != "--help") usage(rank, 2);
    if (s == "--cell") a.cell = std::atof(argv[++q]);
    else if (s == "--frequency") a.frequency = std::atof(argv[++q]);
    else if (s == "--backend") a.backend = argv[++q];
    else if (s == "--gpus-per-node") a.gpus_per_node = std::atoi(argv[++q]);
    else if (s == "--json") a.json = argv[++q];
    else usage(rank, s == "--help" ? 0 : 2);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Args a = parse(argc, argv, rank);
  int rc = 0;
  try {
    const auto t_all = clk::now();
    // The model on every rank (the whole grid's labels; the pieces are cut by the run).
    auto t0 = clk::now();
    const double h = a.cell;
    std::array<int, 3> vox{};
    const std::vector<std::uint16_t> labels = head_phantom_image(h, vox);
    const VoxelDomain d = make_voxel_domain(vox, {h, h, h}, kHeadPhantomDefaultOrigin, VoxelDomainOptions{});
    const LabelProperties props = head_phantom_tissue_table().lookup_image(labels, a.frequency);
    FdtdSetup setup;
    setup.courant_factor = d.options.courant_factor;
    setup.boundaries = d.boundaries();
    d.set_label_materials(setup, labels, props);
    HarmonicOptions o;
    o.frequencies = {a.frequency};
    o.far_field = false;
    o.averaged_sar = true;
    o.backend = backend_from_name(a.backend);
    o.density = d.tissue_density(labels, props);
    const double t_model = since(t0);
    DistributedOptions dopt;
    dopt.backend = o.backend;
    dopt.devices_per_node = std::max(1, a.gpus_per_node);
    t0 = clk::now();
    const DistributedHarmonicResult dr = run_fdtd_harmonic_distributed(MPI_COMM_WORLD, setup, o, dopt);
    const double t_solve = since(t0);
    const double t_total = since(t_all);
    const HarmonicResult& r = dr.result;
    const auto& fr = r.frequencies.at(0);
    if (rank == 0) {
      const auto& g = setup.grid;
      std::printf("head phantom at %.3g mm, %d ranks (%s), grid %d x %d x %d = %.1f M cells, %s\n", 1e3 * h, size,
                  dr.decomposition.describe().c_str(), g.nx, g.ny, g.nz, g.cell_count() / 1e6, r.backend.c_str());
      std::printf("  %d steps (%s); model %.2f s, run_fdtd_harmonic_distributed %.2f s (%.0f Mcells/s over the whole "
                  "call), all %.2f s\n", r.steps, r.converged ? "converged" : "NOT converged", t_model, t_solve,
                  double(g.cell_count()) * r.steps / t_solve / 1e6, t_total);
      const HarmonicTimings& tm = r.timings;
      std::printf("  stages on rank 0 (s): plan %.2f, engine %.2f, extensions %.2f, stepping %.2f, SAR %.2f\n", tm.plan,
                  tm.engine, tm.extensions, tm.stepping, tm.local_sar);
      std::printf("  whole-head SAR %.6g W/kg, peak local %.6g W/kg, psSAR 1 g %.6g W/kg at (%d %d %d), "
                  "psSAR 10 g %.6g W/kg at (%d %d %d)\n", fr.whole_body_sar, fr.peak_local_sar, fr.sar_1g.peak,
                  fr.sar_1g.peak_voxel[0], fr.sar_1g.peak_voxel[1], fr.sar_1g.peak_voxel[2], fr.sar_10g.peak,
                  fr.sar_10g.peak_voxel[0], fr.sar_10g.peak_voxel[1], fr.sar_10g.peak_voxel[2]);
      if (!a.json.empty()) {
        std::ofstream js(a.json);
        js.precision(9);
        js << "{\"cell_m\": " << h << ", \"ranks\": " << size << ", \"decomposition\": \"" << dr.decomposition.describe()
           << "\", \"grid\": [" << g.nx << ", " << g.ny << ", " << g.nz << "], \"cells\": " << g.cell_count()
           << ", \"backend\": \"" << r.backend << "\", \"frequency_hz\": " << a.frequency << ", \"steps\": " << r.steps
           << ", \"converged\": " << (r.converged ? "true" : "false") << ", \"seconds\": {\"model\": " << t_model
           << ", \"run_fdtd_harmonic_distributed\": " << t_solve << ", \"all\": " << t_total
           << ", \"rank0_stages\": {\"plan\": " << r.timings.plan << ", \"engine\": " << r.timings.engine
           << ", \"extensions\": " << r.timings.extensions << ", \"stepping\": " << r.timings.stepping
           << ", \"sar\": " << r.timings.local_sar << "}"
           << "}, \"whole_head_sar\": " << fr.whole_body_sar
           << ", \"peak_local_sar\": " << fr.peak_local_sar << ", \"pssar_1g\": " << fr.sar_1g.peak
           << ", \"pssar_10g\": " << fr.sar_10g.peak << ", \"pssar_10g_voxel\": [" << fr.sar_10g.peak_voxel[0] << ", "
           << fr.sar_10g.peak_voxel[1] << ", " << fr.sar_10g.peak_voxel[2] << "], \"pssar_10g_centre_m\": ["
           << g.origin[0] + (fr.sar_10g.peak_voxel[0] + 0.5) * g.dx << ", " << g.origin[1] + (fr.sar_10g.peak_voxel[1] + 0.5) * g.dy
           << ", " << g.origin[2] + (fr.sar_10g.peak_voxel[2] + 0.5) * g.dz << "], \"warning\": \"" << r.warning
           << "\"}\n";
      }
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "vem_head_sar_mpi: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
