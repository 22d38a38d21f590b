// FDFD benchmark (not a test): time to a relative residual of 1e-6 for the paper's cases
// (Demir, PIER 2012, Tables 1-2) on the CPU and the GPU, for the storage schemes (CAS, CIS),
// precisions (complex128, complex64), Krylov methods and kernel variants.
//
// Cases
//   sphere64, sphere80, sphere96: the dielectric sphere (a = 7.2 cm, eps_r = 4, 1 GHz, x-pol
//     along +z) in a 32 cm cube of 64^3 / 80^3 / 96^3 cells (5 / 4 / 3.33 mm), plus a 10-cell
//     SC-PML on every face (84^3 / 100^3 / 116^3 cells in all). Also reports the RCS error
//     against Mie (E and H planes, where Mie is within 15 dB of the plane maximum) and the
//     scattering cross-section error, from the first complex128 solution.
//   sphere32, sphere48: the same sphere on 1 cm / 6.67 mm cells (small CPU checks).
//   head: a 160 x 160 x 93 heterogeneous domain (2.2 x 2.2 x 2.8 mm cells, PML included), a
//     synthetic head-sized ellipsoid of 16 tissue-like lossy materials (eps_r 5..80,
//     sigma 0.05..2 S/m) in 4-cell blocks, z-polarized wave at 900 MHz hitting it on the side.
//   head_x2, head_x3, head_x4: the same head (geometry, materials, labels) on cells 2 / 3 / 4
//     times larger (80 x 80 x 47, 53 x 53 x 31, 40 x 40 x 23 cells; 8-cell PML).
//
// Per run: iterations, products with A, solve seconds, seconds per iteration, bytes per
// iteration by our count (every array touched once per kernel or cuBLAS call, fdfd_solver.h),
// achieved GB/s = bytes/iteration * iterations / seconds, its fraction of the device-to-device
// copy bandwidth measured in the same run (cudaMemcpy of 2 GiB, bytes read + written), the
// true residual (recomputed in double on the host), setup seconds and device memory.
//
// Usage: bench_fdfd <out.json> [options]
//   --commit <id>             recorded in the JSON
//   --cases a,b,...           default sphere64,sphere80,sphere96,head
//   --backends cpu,cuda       default: both (cuda skipped without a device)
//   --variants quick|full     quick: the paper's BiCGSTAB (CAS, CIS) and our default per
//                             precision; full (default): all variants listed in variants()
//   --cpu-max-cells <n>       skip CPU runs above n cells (default 2000000; not applied with
//                             --cpu-iterations)
//   --cpu-variants quick|full CPU variants (default quick: BiCGSTAB/CIS and COCG/CIS, c128)
//   --max-iterations <n>      default 30000
//   --tolerance <t>           default 1e-6
//   --threads <n>             OpenMP threads of the CPU backend (default: OMP_NUM_THREADS / all)
//   --cpu-iterations <n>      CPU runs do exactly n iterations (tolerance 1e-300) and report the
//                             time per iteration, status "per_iteration": for cases whose CPU solve
//                             to tolerance is too long. Not a time to tolerance.
//   --only a,b,...            run only these variants (names as listed in gpu/cpu_variants)
//   --gd-scale <s>            scale s of the grad-div variants (*_graddiv*), default 1
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "vem/fdfd/fdfd_solver.h"
#include "vem/models/mie.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/models/voxel_shapes.h"
#include "bench_common.h"
#include "../unit/fdfd_test_problems.h"

using namespace vem;

namespace {


// The paper's sphere with `inner` cells across the 32 cm cube and a 10-cell PML.
FdfdProblem sphere_case(int inner) {
  return vem_test::dielectric_sphere_problem(0.32 / inner, 10, 0.32, 0.072, 4.0, 0.0);
}

// The synthetic head; `coarsen` > 1 keeps the physical geometry, materials and labels and
// multiplies the cell size (coarsen = 1: the 160 x 160 x 93 case of the H100 tables exactly).
FdfdProblem head_case(double coarsen = 1.0) {
  FdfdProblem p;
  const int nx = int(std::lround(160 / coarsen)), nz = int(std::lround(93 / coarsen));
  p.grid = {nx, nx, nz, 2.2e-3 * coarsen, 2.2e-3 * coarsen, 2.8e-3 * coarsen};
  p.frequency = 900e6;
  p.pml = FdfdPml::uniform(coarsen > 1.0 ? 8 : 10);
  // z-polarized, travelling along +x (hits the head on its side): theta = 90 deg, phi = 0,
  // polarization psi = 0 gives E along theta_hat = -z; a unit amplitude either way.
  p.incident.theta = 0.5 * kPi;
  p.incident.phi = 0.0;
  p.materials = {Material::vacuum()};
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int m = 0; m < 16; ++m)
    p.materials.push_back(Material::isotropic("tissue" + std::to_string(m), 5.0 + 75.0 * u(rng),
                                              0.05 + 1.95 * u(rng)));
  p.material_index.assign(p.grid.cell_count(), 0);
  // Centre and semi-axes in fine (2.2 x 2.2 x 2.8 mm) cells (~14 x 11.4 x 9 cm), as is the
  // 4-fine-cell block pattern; a coarse cell samples them at its centre.
  const double cx = 80, cy = 80, cz = 46.5;
  const double ax = 64, ay = 52, az = 32;
  std::vector<int> block_label(40 * 40 * 24);
  for (int& l : block_label) l = 1 + int(16 * u(rng)) % 16;
  for (int k = 0; k < p.grid.nz; ++k)
    for (int j = 0; j < p.grid.ny; ++j)
      for (int i = 0; i < p.grid.nx; ++i) {
        // centre of the cell in fine-cell units (the fine cell itself when coarsen = 1)
        const double fi = (i + 0.5) * coarsen, fj = (j + 0.5) * coarsen, fk = (k + 0.5) * coarsen;
        const double x = (fi - cx) / ax, y = (fj - cy) / ay, z = (fk - cz) / az;
        const double r2 = x * x + y * y + z * z;
        if (r2 >= 1.0) continue;
        // skin/bone shell, then blocks of random tissue inside
        const int bi = std::min(39, int(fi) / 4), bj = std::min(39, int(fj) / 4),
                  bk = std::min(23, int(fk) / 4);
        const int label = r2 > 0.85 ? 1 : r2 > 0.7 ? 2 : block_label[bi + 40 * (bj + 40 * bk)];
        p.material_index[i + std::int64_t(p.grid.nx) * (j + std::int64_t(p.grid.ny) * k)] =
            std::uint16_t(label);
      }
  return p;
}

struct Variant {
  const char* name;
  FdfdMethod method;
  FdfdPrecision precision;
  FdfdStorage storage;
  FdfdTablePlacement tables;
  FdfdBlas blas;
  FdfdMatvec matvec;
  FdfdRegularization regularization = FdfdRegularization::none;
  FdfdPreconditioner preconditioner = FdfdPreconditioner::none;
};

std::vector<Variant> gpu_variants(bool full) {
  using M = FdfdMethod;
  using P = FdfdPrecision;
  using S = FdfdStorage;
  using T = FdfdTablePlacement;
  using B = FdfdBlas;
  using V = FdfdMatvec;
  using G = FdfdRegularization;
  using J = FdfdPreconditioner;
  std::vector<Variant> v = {
      {"paper_bicgstab_cas_c128", M::bicgstab, P::complex128, S::cas, T::automatic, B::cublas, V::two_stage},
      {"paper_bicgstab_cis_c128", M::bicgstab, P::complex128, S::cis, T::automatic, B::cublas, V::two_stage},
      {"cocg_cis_c128", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage},
      {"cocg_cis_c128_fusedmv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::fused},
      {"cocg_cis_c128_graddiv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"cocg_cis_c128_graddiv_fusedmv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::fused, G::grad_div},
      {"cocg_cis_c128_graddiv_jacobi", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div, J::jacobi},
      {"cocg_cis_c128_graddiv_jacobi_fusedmv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::fused, G::grad_div, J::jacobi},
      {"bicgstab_cis_c64", M::bicgstab, P::complex64, S::cis, T::automatic, B::fused, V::two_stage},
      // Flexible GCR (host, double) preconditioned by FDTD runs on the GPU (fdfd_time_domain.h).
      {"gcr_fdtd_c128", M::gcr, P::complex128, S::automatic, T::automatic, B::fused, V::two_stage, G::none, J::time_domain},
  };
  if (!full) return v;
  const std::vector<Variant> more = {
      {"paper_bicgstab_cas_c64", M::bicgstab, P::complex64, S::cas, T::automatic, B::cublas, V::two_stage},
      {"paper_bicgstab_cis_c64", M::bicgstab, P::complex64, S::cis, T::automatic, B::cublas, V::two_stage},
      {"bicgstab_cis_c128_fusedblas", M::bicgstab, P::complex128, S::cis, T::automatic, B::fused, V::two_stage},
      {"bicgstab_cis_c128_fusedall", M::bicgstab, P::complex128, S::cis, T::automatic, B::fused, V::fused},
      {"cocg_cas_c128", M::cocg, P::complex128, S::cas, T::automatic, B::fused, V::two_stage},
      {"cocg_cas_c128_fusedmv", M::cocg, P::complex128, S::cas, T::automatic, B::fused, V::fused},
      {"cocg_cis_c128_jacobi", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::none, J::jacobi},
      {"cocg_cas_c128_graddiv", M::cocg, P::complex128, S::cas, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"cocr_cis_c128_graddiv", M::cocr, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"bicgstab_cis_c128_graddiv_fusedall", M::bicgstab, P::complex128, S::cis, T::automatic, B::fused, V::fused, G::grad_div},
      {"cocg_cis_c128_global", M::cocg, P::complex128, S::cis, T::global_memory, B::fused, V::two_stage},
      {"cocg_cis_c128_cublas", M::cocg, P::complex128, S::cis, T::automatic, B::cublas, V::two_stage},
      {"cocr_cis_c128", M::cocr, P::complex128, S::cis, T::automatic, B::fused, V::two_stage},
      {"bicgstab_cas_c64", M::bicgstab, P::complex64, S::cas, T::automatic, B::fused, V::two_stage},
      {"bicgstab_cis_c64_fusedmv", M::bicgstab, P::complex64, S::cis, T::automatic, B::fused, V::fused},
  };
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

std::vector<Variant> cpu_variants(bool full) {
  using M = FdfdMethod;
  using P = FdfdPrecision;
  using S = FdfdStorage;
  using T = FdfdTablePlacement;
  using B = FdfdBlas;
  using V = FdfdMatvec;
  using G = FdfdRegularization;
  using J = FdfdPreconditioner;
  std::vector<Variant> v = {
      {"cpu_bicgstab_cis_c128", M::bicgstab, P::complex128, S::cis, T::automatic, B::fused, V::two_stage},
      {"cpu_cocg_cis_c128", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage},
      {"cpu_cocg_cis_c128_graddiv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"cpu_gcr_fdtd_c128", M::gcr, P::complex128, S::automatic, T::automatic, B::fused, V::two_stage, G::none, J::time_domain},
  };
  if (!full) return v;
  const std::vector<Variant> more = {
      {"cpu_bicgstab_cas_c128", M::bicgstab, P::complex128, S::cas, T::automatic, B::fused, V::two_stage},
      {"cpu_cocg_cas_c128", M::cocg, P::complex128, S::cas, T::automatic, B::fused, V::two_stage},
      {"cpu_bicgstab_cis_c64", M::bicgstab, P::complex64, S::cis, T::automatic, B::fused, V::two_stage},
      {"cpu_cocg_cis_c128_fusedmv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::fused},
      {"cpu_cocg_cis_c128_graddiv_fusedmv", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::fused, G::grad_div},
      {"cpu_cocr_cis_c128_graddiv", M::cocr, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"cpu_bicgstab_cis_c128_graddiv", M::bicgstab, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div},
      {"cpu_cocg_cis_c128_jacobi", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::none, J::jacobi},
      {"cpu_cocg_cis_c128_graddiv_jacobi", M::cocg, P::complex128, S::cis, T::automatic, B::fused, V::two_stage, G::grad_div, J::jacobi},
  };
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
  return out;
}

std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') { o += "\\n"; continue; }
    o += c;
  }
  return o + "\"";
}

std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_fdfd <out.json> [--commit id] [--cases a,b] [--backends cpu,cuda] "
                 "[--variants quick|full] [--cpu-variants quick|full] [--cpu-max-cells n] "
                 "[--max-iterations n] [--tolerance t] [--threads n] [--cpu-iterations n] "
                 "[--gd-scale s] [--only v1,v2] [--td-tolerance t] [--td-ramp periods] [--td-cpml auto|per_axis|merged]\n"
                 "       [--td-coefficients auto|arrays|table] [--td-launch auto|plain|programmatic]\n"
                 "       [--td-block XxY] [--td-z-chunk n]\n";
    return 2;
  }
  const std::string out_path = argv[1];
  std::string commit = "unknown";
  std::vector<std::string> cases = {"sphere64", "sphere80", "sphere96", "head"};
  std::vector<std::string> backends = {"cpu", "cuda"};
  bool full = true, cpu_full = false;
  std::int64_t cpu_max_cells = 2000000;
  int max_iterations = 30000;
  double tolerance = 1e-6;
  int threads = 0, cpu_iterations = 0;
  double gd_scale = 1.0;
  double td_tolerance = FdfdTimeDomainOptions{}.steady_tolerance;
  double td_ramp = FdfdTimeDomainOptions{}.ramp_periods;
  std::string td_cpml = "auto";
  std::string td_coefficients = "auto";
  std::string td_launch = "auto";
  int td_block_x = 0, td_block_y = 0, td_z_chunk = 0;
  std::vector<std::string> only;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "missing value after " << a << "\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--commit") commit = next();
    else if (a == "--cases") cases = split(next());
    else if (a == "--backends") backends = split(next());
    else if (a == "--variants") full = next() == "full";
    else if (a == "--cpu-variants") cpu_full = next() == "full";
    else if (a == "--cpu-max-cells") cpu_max_cells = std::atoll(next().c_str());
    else if (a == "--max-iterations") max_iterations = std::atoi(next().c_str());
    else if (a == "--tolerance") tolerance = std::atof(next().c_str());
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--cpu-iterations") cpu_iterations = std::atoi(next().c_str());
    else if (a == "--gd-scale") gd_scale = std::atof(next().c_str());
    else if (a == "--only") only = split(next());
    else if (a == "--td-tolerance") td_tolerance = std::atof(next().c_str());
    else if (a == "--td-ramp") td_ramp = std::atof(next().c_str());
    else if (a == "--td-cpml") td_cpml = next();
    else if (a == "--td-coefficients") td_coefficients = next();
    else if (a == "--td-launch") td_launch = next();
    else if (a == "--td-block") {
      const std::string v = next();
      td_block_x = std::atoi(v.c_str());
      td_block_y = std::atoi(v.substr(v.find('x') + 1).c_str());
    }
    else if (a == "--td-z-chunk") td_z_chunk = std::atoi(next().c_str());
    else if (i == 2 && a.rfind("--", 0) != 0) commit = a;  // bench_fdtd-style positional commit
    else {
      std::cerr << "unknown option " << a << "\n";
      return 2;
    }
  }

  if (threads > 0) omp_set_num_threads(threads);
  std::string device = "none";
  const double copy_gbs = vem_bench::copy_bandwidth_gbs(&device);
  std::string why;
  const bool have_cuda = fdfd_cuda_available(&why);
  std::fprintf(stderr, "bench_fdfd: device %s, copy bandwidth %.0f GB/s%s\n", device.c_str(),
               copy_gbs, have_cuda ? "" : (" (no CUDA: " + why + ")").c_str());

  std::ostringstream runs;
  bool first_run = true;
  std::printf("| case | cells | backend | variant | status | iters | products | solve s | s/iter | "
              "GB/iter | GB/s | %% copy BW | true res. | setup s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::ostringstream accuracy_json;
  bool first_acc = true;

  for (const std::string& cname : cases) {
    FdfdProblem p;
    if (cname == "sphere64") p = sphere_case(64);
    else if (cname == "sphere80") p = sphere_case(80);
    else if (cname == "sphere96") p = sphere_case(96);
    else if (cname == "sphere32") p = sphere_case(32);
    else if (cname == "sphere48") p = sphere_case(48);
    else if (cname == "head") p = head_case();
    else if (cname == "head_x2") p = head_case(2.0);
    else if (cname == "head_x3") p = head_case(3.0);
    else if (cname == "head_x4") p = head_case(4.0);
    else {
      std::cerr << "unknown case " << cname << "\n";
      return 2;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const FdfdOperator op(p);
    const double op_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "case %s: %d x %d x %d cells, operator %.2f s, CIS %s (%zu H + %zu E pairs)\n",
                 cname.c_str(), p.grid.nx, p.grid.ny, p.grid.nz, op_seconds,
                 op.cis_available() ? "yes" : "no", op.h_table().size(), op.e_table().size());
    bool accuracy_done = cname.rfind("sphere", 0) != 0;
    for (const std::string& bname : backends) {
      const bool gpu = bname == "cuda";
      if (gpu && !have_cuda) {
        std::fprintf(stderr, "  cuda skipped: %s\n", why.c_str());
        continue;
      }
      if (!gpu && p.grid.cell_count() > cpu_max_cells && cpu_iterations == 0) {
        std::fprintf(stderr, "  cpu skipped: %lld cells > --cpu-max-cells %lld\n",
                     (long long)p.grid.cell_count(), (long long)cpu_max_cells);
        continue;
      }
      for (const Variant& v : gpu ? gpu_variants(full) : cpu_variants(cpu_full)) {
        if (v.storage == FdfdStorage::cis && !op.cis_available()) continue;
        const bool td = v.preconditioner == FdfdPreconditioner::time_domain;
        if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
        FdfdSolverOptions o;
        o.backend = gpu ? Backend::cuda : Backend::cpu;
        o.method = v.method;
        o.precision = v.precision;
        o.storage = v.storage;
        o.tables = v.tables;
        o.blas = v.blas;
        o.matvec = v.matvec;
        // The paper's rows are its plain BiCGSTAB; the other complex64 rows use the default
        // mixed-precision refinement.
        if (std::string(v.name).rfind("paper_", 0) == 0) o.refinement = FdfdRefinement::off;
        o.regularization = v.regularization;
        o.preconditioner = v.preconditioner;
        o.regularization_scale = gd_scale;
        o.time_domain.steady_tolerance = td_tolerance;
        o.time_domain.ramp_periods = td_ramp;
        o.time_domain.tuning.cpml = td_cpml == "per_axis" ? EngineTuning::CpmlLaunch::per_axis
                                    : td_cpml == "merged"  ? EngineTuning::CpmlLaunch::merged
                                                           : EngineTuning::CpmlLaunch::automatic;
        o.time_domain.tuning.coefficients = td_coefficients == "arrays" ? EngineTuning::Coefficients::arrays
                                            : td_coefficients == "table" ? EngineTuning::Coefficients::table
                                                                         : EngineTuning::Coefficients::automatic;
        o.time_domain.tuning.launch = td_launch == "plain" ? EngineTuning::KernelLaunch::plain
                                      : td_launch == "programmatic" ? EngineTuning::KernelLaunch::programmatic
                                                                    : EngineTuning::KernelLaunch::automatic;
        o.time_domain.tuning.block_x = td_block_x;
        o.time_domain.tuning.block_y = td_block_y;
        o.time_domain.tuning.z_chunk = td_z_chunk;
        const bool per_iteration = !gpu && cpu_iterations > 0 && !td;
        if (!gpu && cpu_iterations > 0 && td) continue;  // per-iteration rows are for the Krylov loops
        o.tolerance = per_iteration ? 1e-300 : tolerance;
        o.max_iterations = per_iteration ? cpu_iterations : max_iterations;
        o.max_restarts = per_iteration ? 0 : o.max_restarts;
        o.keep_history = false;
        FdfdSolution s;
        try {
          s = solve_fdfd(op, o);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "  %s %s failed: %s\n", bname.c_str(), v.name, e.what());
          continue;
        }
        FdfdSolveStats& st = s.stats;
        const std::string status = per_iteration ? "per_iteration" : fdfd_name(st.status);
        const double spi = st.iterations > 0 ? st.solve_seconds / st.iterations : 0;
        const double gbs = st.solve_seconds > 0
                               ? st.bytes_per_iteration * st.iterations / st.solve_seconds / 1e9
                               : 0;
        const double frac = gpu && copy_gbs > 0 ? gbs / copy_gbs : 0;
        std::printf("| %s | %lld | %s | %s | %s | %d | %d | %.2f | %.3g | %.3f | %.0f | %.0f | %.1e | %.2f |\n",
                    cname.c_str(), (long long)p.grid.cell_count(), st.backend.c_str(), v.name,
                    status.c_str(), st.iterations, st.matvecs, st.solve_seconds, spi,
                    st.bytes_per_iteration / 1e9, gbs, 100 * frac, st.true_relative_residual,
                    st.setup_seconds);
        std::fflush(stdout);
        if (!first_run) runs << ",\n";
        first_run = false;
        runs << "    {\"case\": " << jstr(cname) << ", \"nx\": " << p.grid.nx << ", \"ny\": "
             << p.grid.ny << ", \"nz\": " << p.grid.nz << ", \"cells\": " << p.grid.cell_count()
             << ", \"unknowns\": " << 3 * p.grid.cell_count() << ", \"backend\": "
             << jstr(st.backend) << ", \"variant\": " << jstr(v.name) << ", \"method\": "
             << jstr(fdfd_name(st.method)) << ", \"preconditioner\": "
             << jstr(fdfd_name(st.preconditioner)) << ", \"precision\": "
             << jstr(fdfd_name(st.precision)) << ", \"storage\": " << jstr(fdfd_name(st.storage))
             << ", \"tables\": " << jstr(fdfd_name(st.tables)) << ", \"blas\": "
             << jstr(gpu ? fdfd_name(st.blas) : "openmp") << ", \"matvec\": "
             << jstr(fdfd_name(st.matvec)) << ", \"regularization\": "
             << jstr(fdfd_name(st.regularization)) << ", \"regularization_scale\": "
             << jnum(st.regularization_scale) << ", \"tolerance\": "
             << jnum(per_iteration ? 0.0 : tolerance)
             << ", \"status\": " << jstr(status) << ", \"iterations\": "
             << st.iterations << ", \"matvecs\": " << st.matvecs << ", \"restarts\": "
             << st.restarts << ", \"solve_seconds\": " << jnum(st.solve_seconds)
             << ", \"setup_seconds\": " << jnum(st.setup_seconds)
             << ", \"seconds_per_iteration\": " << jnum(spi)
             << ", \"seconds_per_matvec\": "
             << jnum(st.matvecs > 0 ? st.solve_seconds / st.matvecs : 0)
             << ", \"bytes_per_iteration\": " << jnum(st.bytes_per_iteration)
             << ", \"bytes_per_matvec\": " << jnum(st.bytes_per_matvec)
             << ", \"achieved_gbs\": " << jnum(gbs) << ", \"fraction_of_copy_bandwidth\": "
             << jnum(frac) << ", \"relative_residual\": " << jnum(st.relative_residual)
             << ", \"true_relative_residual\": " << jnum(st.true_relative_residual)
             << ", \"device_bytes\": " << st.device_bytes << ", \"h_table_entries\": "
             << st.h_table_entries << ", \"e_table_entries\": " << st.e_table_entries
             << ", \"preconditioner_backend\": " << jstr(st.preconditioner_backend)
             << ", \"preconditioner_steps\": " << st.preconditioner_steps
             << ", \"preconditioner_on_device\": " << (st.preconditioner_on_device ? "true" : "false")
             << ", \"preconditioner_steps_per_period\": " << st.preconditioner_steps_per_period
             << ", \"preconditioner_seconds\": " << jnum(st.preconditioner_seconds)
             << ", \"preconditioner_step_seconds\": " << jnum(st.preconditioner_step_seconds)
             << ", \"preconditioner_prepare_seconds\": " << jnum(st.preconditioner_prepare_seconds)
             << ", \"preconditioner_steady_tolerance\": " << jnum(td ? td_tolerance : 0.0)
             << ", \"preconditioner_ramp_periods\": " << jnum(td ? td_ramp : 0.0)
             << ", \"preconditioner_cpml_launch\": " << jstr(td ? td_cpml : "")
             << ", \"preconditioner_coefficients\": " << jstr(td ? td_coefficients : "")
             << ", \"preconditioner_kernel_launch\": " << jstr(td ? td_launch : "")
             << ", \"preconditioner_block\": " << jstr(td ? std::to_string(td_block_x) + "x" + std::to_string(td_block_y) : "")
             << ", \"preconditioner_z_chunk\": " << (td ? td_z_chunk : 0)
             << ", \"preconditioner_periods\": [";
        for (std::size_t q = 0; q < st.preconditioner_periods.size(); ++q)
          runs << (q ? ", " : "") << st.preconditioner_periods[q];
        runs << "]"
             << ", \"message\": " << jstr(st.message) << "}";
        if (td)
        {
          std::string per;
          for (int q : st.preconditioner_periods) per += (per.empty() ? "" : " ") + std::to_string(q);
          std::fprintf(stderr, "  %s: %d outer GCR iterations, %lld FDTD steps (%d per period; periods per "
                       "application: %s) in %.2f s (stepping %.2f s, set-up %.2f s), outside them %.2f s\n",
                       v.name, st.iterations, (long long)st.preconditioner_steps,
                       st.preconditioner_steps_per_period, per.c_str(), st.preconditioner_seconds,
                       st.preconditioner_step_seconds, st.preconditioner_prepare_seconds,
                       st.solve_seconds - st.preconditioner_seconds);
        }
        if (!accuracy_done && !per_iteration && st.precision == FdfdPrecision::complex128 &&
            st.status == FdfdStatus::converged) {
          const vem_test::MieAccuracy acc = vem_test::sphere_rcs_against_mie(p, op, s.e_scat, 10, 0.072, 4.0);
          accuracy_done = true;
          std::fprintf(stderr, "  %s vs Mie: worst E-plane %.2f dB, H-plane %.2f dB, sigma_sca %+.2f %%\n",
                       cname.c_str(), acc.worst_e_db, acc.worst_h_db, 100 * acc.sigma_rel_err);
          if (!first_acc) accuracy_json << ",\n";
          first_acc = false;
          accuracy_json << "    {\"case\": " << jstr(cname) << ", \"from\": " << jstr(v.name)
                        << ", \"worst_e_plane_db\": " << jnum(acc.worst_e_db)
                        << ", \"worst_h_plane_db\": " << jnum(acc.worst_h_db)
                        << ", \"sigma_sca_relative_error\": " << jnum(acc.sigma_rel_err) << "}";
        }
      }
    }
  }

  std::ofstream js(out_path);
  if (!js) {
    std::cerr << "cannot write " << out_path << "\n";
    return 1;
  }
  const std::string date = vem_bench::utc_date();
  js << "{\n  \"benchmark\": \"bench_fdfd\",\n  \"commit\": " << jstr(commit) << ",\n  \"date\": "
     << jstr(date) << ",\n  \"device\": " << jstr(device)
     << ",\n  \"copy_bandwidth_gbs\": " << jnum(copy_gbs)
     << ",\n  \"byte_count\": " << jstr("nominal: every array touched once per kernel or cuBLAS call; "
                                       "product: H stage reads E and coefficients, writes t; E stage "
                                       "reads E, t and coefficients, writes y (fused product: no t)")
     << ",\n  \"paper_table_1_seconds\": {\"sphere64\": {\"cpu\": 337, \"gpu_cas\": 22, \"gpu_cis\": 21}, "
        "\"sphere80\": {\"cpu\": 851, \"gpu_cas\": 49, \"gpu_cis\": 42}, \"sphere96\": {\"cpu\": 1901, "
        "\"gpu_cas\": 115, \"gpu_cis\": 99}, \"head_minutes\": {\"cpu\": 130, \"gpu_cas\": 5.4, \"gpu_cis\": 4.6}}"
     << ",\n  \"accuracy\": [\n" << accuracy_json.str() << "\n  ],\n  \"runs\": [\n" << runs.str()
     << "\n  ]\n}\n";
  std::fprintf(stderr, "bench_fdfd: wrote %s\n", out_path.c_str());
  return 0;
}
