// vem_fdtd_mpi: a distributed FDTD run from C++ without ParaView (issue 17), and the benchmark of
// the halo exchange's cost per step.
//
//   mpirun -np 4 vem_fdtd_mpi --grid 96 96 96 --steps 200
//   mpirun -np 2 vem_fdtd_mpi --grid 128 64 64 --ranks 2 1 1 --benchmark --json out.json
//
// The model: a cubic grid of `--cell` m cells, a 10-cell CPML on every face, a lossy dielectric
// sphere (eps_r 40, 0.8 S/m) in the middle of air, a z-directed current source beside it and a
// probe of Ez at the opposite side. Rank 0 prints the decomposition, the time per step, Mcells/s,
// the halo values and bytes per step (all ranks together), the time spent in the exchange, and
// with --benchmark the same pieces stepped without any exchange (each rank its piece alone,
// subdomain faces closed by PEC): the exchange's cost per step is the difference.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_fdtd.h"

using namespace vem;

namespace {

struct Args {
  std::array<int, 3> n{64, 64, 64};
  std::array<int, 3> ranks{0, 0, 0};
  double cell = 1e-3;
  int steps = 200, cpml = 10;
  std::string backend = "cpu", json;
  bool benchmark = false;
  bool check = false;
  int gpus_per_node = 0;  // 0: VEM_GPUS_PER_NODE, else 1
  std::string halo = "auto";  // DistributedOptions::halo_transport
};

[[noreturn]] void usage(int rank, int code) {
  if (rank == 0)
    std::printf(
        "usage: mpirun -np N vem_fdtd_mpi [--grid NX NY NZ] [--ranks PX PY PZ] [--cell m] [--steps S]\n"
        "                                [--cpml T] [--backend cpu|cuda|auto] [--benchmark] [--check] [--json FILE]\n"
        "                                [--gpus-per-node G] [--halo auto|mpi|nccl]\n"
        "  --gpus-per-node: rank r uses GPU (node-local rank) modulo G (default VEM_GPUS_PER_NODE, else 1).\n"
        "  --check: rank 0 also runs the whole grid as one domain (same backend) and compares the six\n"
        "           field components and the probe with the distributed run's, sample by sample.\n"
        "  --ranks 0 0 0 (default) chooses the decomposition with the fewest halo values.\n"
        "  --halo: how CUDA engines' halo planes travel: NCCL device to device where it can run (auto),\n"
        "          MPI through host memory (mpi), or NCCL or an error (nccl). VEM_HALO_OVERLAP=0 turns off\n"
        "          the overlap of the exchange with the interior update (for measuring it).\n");
  MPI_Finalize();
  std::exit(code);
}

Args parse(int argc, char** argv, int rank) {
  Args a;
  for (int q = 1; q < argc; ++q) {
    const std::string s = argv[q];
    auto need = [&](int k) {
      if (q + k >= argc) {
        if (rank == 0) std::fprintf(stderr, "vem_fdtd_mpi: %s needs %d value(s)\n", s.c_str(), k);
        usage(rank, 2);
      }
    };
    if (s == "--grid") { need(3); for (int k = 0; k < 3; ++k) a.n[k] = std::atoi(argv[++q]); }
    else if (s == "--ranks") { need(3); for (int k = 0; k < 3; ++k) a.ranks[k] = std::atoi(argv[++q]); }
    else if (s == "--cell") { need(1); a.cell = std::atof(argv[++q]); }
    else if (s == "--steps") { need(1); a.steps = std::atoi(argv[++q]); }
    else if (s == "--cpml") { need(1); a.cpml = std::atoi(argv[++q]); }
    else if (s == "--backend") { need(1); a.backend = argv[++q]; }
    else if (s == "--json") { need(1); a.json = argv[++q]; }
    else if (s == "--benchmark") a.benchmark = true;
    else if (s == "--check") a.check = true;
    else if (s == "--gpus-per-node") { need(1); a.gpus_per_node = std::atoi(argv[++q]); }
    else if (s == "--halo") { need(1); a.halo = argv[++q]; }
    else if (s == "--help" || s == "-h") usage(rank, 0);
    else {
      if (rank == 0) std::fprintf(stderr, "vem_fdtd_mpi: unknown argument '%s'\n", s.c_str());
      usage(rank, 2);
    }
  }
  return a;
}

FdtdSetup model(const Args& a) {
  FdtdSetup s;
  s.grid = {a.n[0], a.n[1], a.n[2], a.cell, a.cell, a.cell};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, a.cpml);
  s.materials = {Material::isotropic("air", 1, 0, 1), Material::isotropic("tissue", 40, 0.8, 1)};
  s.material_index.assign(s.grid.cell_count(), 0);
  const double r = 0.25 * std::min({a.n[0], a.n[1], a.n[2]});
  for (int k = 0; k < a.n[2]; ++k)
    for (int j = 0; j < a.n[1]; ++j)
      for (int i = 0; i < a.n[0]; ++i) {
        const double x = i + 0.5 - 0.5 * a.n[0], y = j + 0.5 - 0.5 * a.n[1], z = k + 0.5 - 0.5 * a.n[2];
        if (x * x + y * y + z * z < r * r) s.material_index[i + std::size_t(a.n[0]) * (j + std::size_t(a.n[1]) * k)] = 1;
      }
  PointSource src;
  src.i = std::max(a.cpml + 2, int(a.n[0] / 2 - r - 3));
  src.j = a.n[1] / 2;
  src.k = a.n[2] / 2;
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(kC0 / (20 * a.cell));
  s.sources = {src};
  Probe p;
  p.name = "Ez_far";
  p.component = Component::Ez;
  p.i = std::min(a.n[0] - a.cpml - 2, int(a.n[0] / 2 + r + 3));
  p.j = a.n[1] / 2;
  p.k = a.n[2] / 2;
  s.probes = {p};
  return s;
}

double max_over_ranks(double v, MPI_Comm c) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, c);
  return m;
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
    const FdtdSetup setup = model(a);
    DistributedOptions opt;
    opt.backend = backend_from_name(a.backend);
    if (a.ranks[0] > 0 || a.ranks[1] > 0 || a.ranks[2] > 0) opt.ranks = a.ranks;
    opt.devices_per_node = a.gpus_per_node > 0 ? a.gpus_per_node
                                               : std::max(1, std::getenv("VEM_GPUS_PER_NODE")
                                                                 ? std::atoi(std::getenv("VEM_GPUS_PER_NODE")) : 1);
    using HT = DistributedOptions::HaloTransport;
    if (a.halo == "auto") opt.halo_transport = HT::automatic;
    else if (a.halo == "mpi") opt.halo_transport = HT::mpi;
    else if (a.halo == "nccl") opt.halo_transport = HT::nccl;
    else fail("--halo ", a.halo, ": use auto, mpi or nccl");
    DistributedFdtd run(MPI_COMM_WORLD, setup, opt);
    const char* overlap_env = std::getenv("VEM_HALO_OVERLAP");
    const bool overlap = !(overlap_env && std::string(overlap_env) == "0");
    const double cells = double(a.n[0]) * a.n[1] * a.n[2];
    const long long halo_values = run.decomposition().halo_values_per_step(a.n, {false, false, false});
    if (rank == 0)
      std::printf("vem_fdtd_mpi: %d rank(s), %d x %d x %d cells, decomposition %s, backend %s, %d steps\n", size,
                  a.n[0], a.n[1], a.n[2], run.decomposition().describe().c_str(), run.engine().backend().c_str(),
                  a.steps);
    run.run(5);  // warm-up (first touch, caches)
    run.halo().reset_stats();
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    run.run(a.steps, {}, std::max(1, a.steps));
    const double t_run = max_over_ranks(MPI_Wtime() - t0, MPI_COMM_WORLD);
    const auto& st = run.halo().stats();
    long long bytes = st.bytes_sent, bytes_all = 0;
    MPI_Allreduce(&bytes, &bytes_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const double t_halo = max_over_ranks(st.seconds, MPI_COMM_WORLD);
    const ProbeRecord pr = run.probes();

    // Without exchange: each rank steps the same piece alone (cuts closed by PEC).
    double t_alone = 0;
    if (a.benchmark) {
      FdtdSetup alone = run.piece();
      for (auto& f : alone.boundaries.face)
        if (f == BoundaryType::subdomain) f = BoundaryType::pec;
      alone.sources.clear();
      PointSource src;
      src.i = alone.grid.nx / 2; src.j = alone.grid.ny / 2; src.k = alone.grid.nz / 2;
      src.waveform = setup.sources[0].waveform;
      alone.sources = {src};
      alone.probes.clear();
      std::unique_ptr<FdtdOperator> op;
      std::unique_ptr<FdtdEngine> eng;
      run.collective([&] {  // a failure on one rank ends every rank (no barrier left waiting)
        op = std::make_unique<FdtdOperator>(alone);
        // The same device as the rank's distributed engine (node-local rank modulo GPUs per node;
        // one node here, so the world rank).
        eng = make_engine(*op, opt.backend, rank % std::max(1, opt.devices_per_node));
        eng->run(5);
      });
      MPI_Barrier(MPI_COMM_WORLD);
      const double t1 = MPI_Wtime();
      eng->run(a.steps);
      t_alone = max_over_ranks(MPI_Wtime() - t1, MPI_COMM_WORLD);
    }
    // --check: the distributed fields against one domain stepped on rank 0 (same steps, same backend).
    double check_max_diff = -1, check_max_field = 0;
    long long check_differing = 0, check_samples = 0;
    double check_probe_diff = -1;
    if (a.check) {
      std::vector<std::vector<float>> dist(6);
      for (int c = 0; c < 6; ++c) dist[c] = run.gather_field(static_cast<Component>(c), 0);
      std::string error;
      if (rank == 0) {
        try {
          FdtdOperator op(setup);
          auto one = make_engine(op, opt.backend);
          one->run(5 + a.steps);
          check_max_diff = 0;
          for (int c = 0; c < 6; ++c) {
            const std::vector<float> ref = one->field(static_cast<Component>(c));
            if (ref.size() != dist[c].size()) fail("--check: gathered size ", dist[c].size(), " != ", ref.size());
            for (std::size_t q = 0; q < ref.size(); ++q) {
              check_max_field = std::max(check_max_field, double(std::fabs(ref[q])));
              const double d = std::fabs(double(ref[q]) - double(dist[c][q]));
              check_max_diff = std::max(check_max_diff, d);
              if (std::memcmp(&ref[q], &dist[c][q], sizeof(float)) != 0) ++check_differing;
            }
            check_samples += static_cast<long long>(ref.size());
          }
          const ProbeRecord one_probes = one->probes();
          const auto& pv = one_probes.values[0];
          check_probe_diff = 0;
          for (std::size_t q = 0; q < pv.size() && q < pr.values[0].size(); ++q)
            check_probe_diff = std::max(check_probe_diff, double(std::fabs(pv[q] - pr.values[0][q])));
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
      int bad = error.empty() ? 0 : 1;
      MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (bad) fail(error.empty() ? std::string("--check failed on rank 0") : error);
    }
    if (rank == 0) {
      const double per_step = t_run / a.steps;
      if (a.check)
        std::printf("  check against one domain (%s): %lld of %lld samples differ in their bits, max |diff| %.3g "
                    "(max |field| %.3g), probe max |diff| %.3g\n",
                    run.engine().backend().c_str(), check_differing, check_samples, check_max_diff, check_max_field,
                    check_probe_diff);
      std::printf("  time per step %.3f ms, %.1f Mcells/s (all ranks)\n", 1e3 * per_step, cells / per_step / 1e6);
      std::printf("  halo transport: %s%s%s, overlap with the update: %s\n", run.halo_transport(),
                  run.halo_transport_note().empty() ? "" : " (not nccl: ", run.halo_transport_note().empty() ? "" :
                  (run.halo_transport_note() + ")").c_str(), overlap ? "on" : "off");
      std::printf("  halo: %lld values per step (model), %.0f bytes per step sent by all ranks (%lld per exchange call"
                  " on rank 0), %.3f ms per step inside the exchange (slowest rank)\n",
                  halo_values, double(bytes_all) / a.steps, st.calls ? (long long)(st.bytes_sent / st.calls) : 0LL,
                  1e3 * t_halo / a.steps);
      if (a.benchmark)
        std::printf("  without exchange (each piece alone): %.3f ms per step; exchange cost %.3f ms per step (%.1f%%)\n",
                    1e3 * t_alone / a.steps, 1e3 * (t_run - t_alone) / a.steps, 100 * (t_run - t_alone) / t_run);
      const auto& v = pr.values[0];
      float peak = 0;
      for (float x : v) peak = std::max(peak, std::fabs(x));
      std::printf("  probe %s: max |Ez| %.6g V/m over %zu steps\n", pr.names[0].c_str(), peak, v.size());
      if (!a.json.empty()) {
        std::ofstream js(a.json);
        js << "{\"ranks\": " << size << ", \"grid\": [" << a.n[0] << ", " << a.n[1] << ", " << a.n[2]
           << "], \"decomposition\": \"" << run.decomposition().describe() << "\", \"backend\": \""
           << run.engine().backend() << "\", \"steps\": " << a.steps << ", \"seconds_per_step\": " << per_step
           << ", \"mcells_per_s\": " << cells / per_step / 1e6 << ", \"halo_values_per_step\": " << halo_values
           << ", \"halo_bytes_per_step\": " << double(bytes_all) / a.steps
           << ", \"seconds_per_step_in_exchange\": " << t_halo / a.steps << ", \"halo_transport\": \""
           << run.halo_transport() << "\", \"halo_overlap\": " << (overlap ? "true" : "false");
        if (a.benchmark) js << ", \"seconds_per_step_without_exchange\": " << t_alone / a.steps;
        if (a.check)
          js << ", \"check_samples\": " << check_samples << ", \"check_samples_differing\": " << check_differing
             << ", \"check_max_abs_diff\": " << check_max_diff << ", \"check_max_abs_field\": " << check_max_field
             << ", \"check_probe_max_abs_diff\": " << check_probe_diff;
        js << "}\n";
      }
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "vem_fdtd_mpi: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
