// SAR averaging benchmark (issue 16; not a test): vem::spatial_average_sar (IEC/IEEE 62704-1,
// 1 g and 10 g) on the GPU against the CPU engine (OpenMP, all cores of the host) in the same run,
// on the head phantom voxelized to fill an n^3 grid (the volume of bench_fdtd extensions' SAR rows:
// a 0.26 m cube, 0.51 mm voxels at 512^3, tissues at 900 MHz, density 0 for air and sinus air,
// |E|^2 decaying from the side the wave enters).
// For each size and mass: the CPU engine once; the GPU `reps` times (median, and the first run),
// with the stage times of the median run (vem::sar_cuda_last_stages: device allocation, upload,
// tables, cube growth, dilations, assignment + counts, download, waiting for the host output
// arrays, the input checks); optionally once more each with plain pageable cudaMemcpy instead of
// the staged copies (VEM_SAR_PLAIN_COPIES) and without the huge-page advice for the host output
// arrays (VEM_SAR_NO_HUGEPAGES); and the GPU result against the CPU's: status mismatches, the
// largest |SAR difference| / peak, side mismatches, counts, peak value and voxel.
// The time is spatial_average_sar's whole call (input checks, host output arrays, transfers),
// one mass per call; the previous result is freed before the clock starts. A 32^3 GPU call first
// warms the CUDA context and the pinned buffers.
// Usage: bench_sar <out.json> [--commit C] [--sizes 256,512] [--cpu-sizes 256,512] [--reps 3]
//                  [--plain 1]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "bench_common.h"
#include "bench_models.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/models/head_phantom.h"

using namespace vem;
using vem_bench::sar_volume;

namespace {

std::vector<int> int_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) v.push_back(std::atoi(item.c_str()));
  return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Agreement {
  std::size_t status_mismatch = 0, side_mismatch = 0;
  double max_sar_diff_over_peak = 0;
  bool counts_equal = false, peak_equal = false, peak_voxel_equal = false;
};

Agreement compare(const AveragedSar& c, const AveragedSar& g) {
  Agreement a;
  for (std::size_t q = 0; q < c.sar.size(); ++q) {
    if (c.status[q] != g.status[q]) ++a.status_mismatch;
    if (std::fabs(c.side_m[q] - g.side_m[q]) > 1e-6f * std::fabs(c.side_m[q])) ++a.side_mismatch;
    a.max_sar_diff_over_peak = std::max(a.max_sar_diff_over_peak, std::fabs(double(c.sar[q]) - g.sar[q]));
  }
  if (c.peak > 0) a.max_sar_diff_over_peak /= c.peak;
  a.counts_equal = c.valid == g.valid && c.assigned == g.assigned && c.unassigned == g.unassigned;
  a.peak_equal = c.peak == g.peak;
  a.peak_voxel_equal = c.peak_voxel == g.peak_voxel;
  return a;
}

struct Row {
  int n = 0;
  double mass_g = 0, cpu_s = -1, gpu_median_s = 0, gpu_first_s = 0, gpu_plain_s = -1, gpu_small_pages_s = -1,
         peak = 0;
  std::vector<double> gpu_runs;
  SarCudaStages stages, plain_stages, small_pages_stages;
  std::size_t valid = 0, assigned = 0, unassigned = 0;
  bool compared = false;
  Agreement agree;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "bench_sar.json";
  std::string commit = "unknown";
  std::vector<int> sizes = {256, 512}, cpu_sizes = {256, 512};
  int reps = 3;
  bool plain = true;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--commit") commit = v;
    else if (k == "--sizes") sizes = int_list(v);
    else if (k == "--cpu-sizes") cpu_sizes = int_list(v);
    else if (k == "--reps") reps = std::max(1, std::atoi(v.c_str()));
    else if (k == "--plain") plain = std::atoi(v.c_str()) != 0;
    else { std::cerr << "unknown option " << k << "\n"; return 2; }
  }
  std::string device = "none";
  vem_bench::copy_bandwidth_gbs(&device);
  const bool gpu = cuda_available();
  const int threads = omp_get_max_threads();
  std::cerr << "bench_sar: device " << device << ", CPU threads " << threads << "\n";
  if (gpu) {  // warm-up: CUDA context, pinned staging buffers
    double f = 0;
    const SarInput w = sar_volume(32, &f);
    spatial_average_sar(w, 1e-3, Backend::cuda);
  }
  std::vector<Row> rows;
  std::vector<std::pair<int, double>> volumes;  // n, tissue fraction
  for (int n : sizes) {
    const bool cpu = std::find(cpu_sizes.begin(), cpu_sizes.end(), n) != cpu_sizes.end();
    if (!gpu && !cpu) continue;
    double frac = 0;
    const auto tv = std::chrono::steady_clock::now();
    const SarInput in = sar_volume(n, &frac);
    std::cerr << "volume " << n << "^3: " << seconds_since(tv) << " s, tissue " << frac << "\n";
    volumes.push_back({n, frac});
    for (double mass : {1e-3, 1e-2}) {
      Row r;
      r.n = n;
      r.mass_g = mass * 1e3;
      AveragedSar ref;
      if (cpu) {
        const auto t0 = std::chrono::steady_clock::now();
        ref = spatial_average_sar(in, mass, Backend::cpu);
        r.cpu_s = seconds_since(t0);
        r.peak = ref.peak;
        r.valid = ref.valid; r.assigned = ref.assigned; r.unassigned = ref.unassigned;
        std::cerr << "  cpu " << n << "^3 " << r.mass_g << " g: " << r.cpu_s << " s (peak " << ref.peak << ")\n";
      }
      if (gpu) {
        std::vector<std::pair<double, SarCudaStages>> runs;
        AveragedSar res;
        for (int rep = 0; rep < reps; ++rep) {
          res = AveragedSar{};  // free the previous result outside the timing
          const auto t0 = std::chrono::steady_clock::now();
          res = spatial_average_sar(in, mass, Backend::cuda);
          runs.push_back({seconds_since(t0), sar_cuda_last_stages()});
          std::cerr << "  cuda " << n << "^3 " << r.mass_g << " g: " << runs.back().first << " s\n";
        }
        r.gpu_first_s = runs.front().first;
        for (const auto& x : runs) r.gpu_runs.push_back(x.first);
        std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        r.gpu_median_s = runs[runs.size() / 2].first;
        r.stages = runs[runs.size() / 2].second;
        if (cpu) {
          r.compared = true;
          r.agree = compare(ref, res);
        } else {
          r.peak = res.peak;
          r.valid = res.valid; r.assigned = res.assigned; r.unassigned = res.unassigned;
        }
        if (plain) {  // the variants, once each
          res = AveragedSar{};
          for (int v = 0; v < 2; ++v) {
            const char* var = v == 0 ? "VEM_SAR_PLAIN_COPIES" : "VEM_SAR_NO_HUGEPAGES";
            setenv(var, "1", 1);
            AveragedSar x;
            const auto t0 = std::chrono::steady_clock::now();
            x = spatial_average_sar(in, mass, Backend::cuda);
            (v == 0 ? r.gpu_plain_s : r.gpu_small_pages_s) = seconds_since(t0);
            (v == 0 ? r.plain_stages : r.small_pages_stages) = sar_cuda_last_stages();
            unsetenv(var);
          }
        }
      }
      rows.push_back(r);
    }
  }

  auto stages_json = [](const SarCudaStages& s) {
    std::ostringstream o;
    o << std::setprecision(6) << "{\"checks\": " << s.checks << ", \"device_alloc\": " << s.device_alloc << ", \"upload\": " << s.upload
      << ", \"tables\": " << s.tables << ", \"grow\": " << s.grow << ", \"dilate\": " << s.dilate
      << ", \"finish\": " << s.finish << ", \"alloc_wait\": " << s.alloc_wait << ", \"download\": " << s.download
      << ", \"total_in_cuda_path\": " << s.total << ", \"search_start_n\": " << s.search_start
      << ", \"dilations\": " << std::max(0, s.max_cover) << ", \"box_voxels\": " << s.box_voxels
      << ", \"staged_copies\": " << (s.staged_copies ? "true" : "false") << "}";
    return o.str();
  };
  std::ofstream js(out);
  js << std::setprecision(6);
  js << "{\n  \"benchmark\": \"sar_averaging\",\n  \"device\": \"" << device << "\",\n  \"commit\": \"" << commit
     << "\",\n  \"date\": \"" << vem_bench::utc_date() << "\",\n  \"cpu_threads\": " << threads
     << ",\n  \"model\": \"head phantom in a 0.26 m cube, tissues at 900 MHz\",\n  \"gpu_reps\": " << reps
     << ",\n  \"volumes\": [";
  for (std::size_t v = 0; v < volumes.size(); ++v)
    js << (v ? ", " : "") << "{\"n\": " << volumes[v].first << ", \"tissue_fraction\": " << volumes[v].second << "}";
  js << "],\n  \"rows\": [\n";
  for (std::size_t q = 0; q < rows.size(); ++q) {
    const Row& r = rows[q];
    js << "    {\"n\": " << r.n << ", \"mass_g\": " << r.mass_g << ", \"cpu_seconds\": " << r.cpu_s
       << ", \"gpu_seconds_median\": " << r.gpu_median_s << ", \"gpu_seconds_first\": " << r.gpu_first_s
       << ", \"gpu_seconds_runs\": [";
    for (std::size_t k = 0; k < r.gpu_runs.size(); ++k) js << (k ? ", " : "") << r.gpu_runs[k];
    js << "], \"speedup\": " << (r.cpu_s > 0 && r.gpu_median_s > 0 ? r.cpu_s / r.gpu_median_s : 0)
       << ", \"gpu_stages\": " << stages_json(r.stages) << ", \"gpu_plain_copies_seconds\": " << r.gpu_plain_s
       << ", \"gpu_plain_copies_stages\": " << stages_json(r.plain_stages)
       << ", \"gpu_no_hugepage_advice_seconds\": " << r.gpu_small_pages_s
       << ", \"gpu_no_hugepage_advice_stages\": " << stages_json(r.small_pages_stages) << ", \"peak_W_per_kg\": " << r.peak
       << ", \"valid\": " << r.valid << ", \"assigned\": " << r.assigned << ", \"unassigned\": " << r.unassigned;
    if (r.compared)
      js << ", \"agreement\": {\"status_mismatches\": " << r.agree.status_mismatch
         << ", \"side_mismatches\": " << r.agree.side_mismatch
         << ", \"max_abs_sar_diff_over_peak\": " << r.agree.max_sar_diff_over_peak
         << ", \"counts_equal\": " << (r.agree.counts_equal ? "true" : "false")
         << ", \"peak_equal\": " << (r.agree.peak_equal ? "true" : "false")
         << ", \"peak_voxel_equal\": " << (r.agree.peak_voxel_equal ? "true" : "false") << "}";
    js << "}" << (q + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";

  std::cout << "| voxels | mass | CPU s (" << threads << " threads) | GPU s (median) | speed-up | GPU first | plain copies | "
               "no huge pages | checks | upload | tables | grow | dilate | finish | alloc wait | download | status mism. | "
               "max dSAR/peak |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const SarCudaStages& s = r.stages;
    std::cout << std::fixed << "| " << r.n << "^3 | " << std::setprecision(0) << r.mass_g << " g | "
              << std::setprecision(3) << r.cpu_s << " | " << std::setprecision(4) << r.gpu_median_s << " | "
              << std::setprecision(1) << (r.cpu_s > 0 && r.gpu_median_s > 0 ? r.cpu_s / r.gpu_median_s : 0) << "x | "
              << std::setprecision(4) << r.gpu_first_s << " | " << r.gpu_plain_s << " | " << r.gpu_small_pages_s << " | "
              << s.checks << " | " << s.upload << " | "
              << s.tables << " | " << s.grow << " | " << s.dilate << " (" << std::max(0, s.max_cover) << ") | "
              << s.finish << " | " << s.alloc_wait << " | " << s.download << " | "
              << (r.compared ? std::to_string(r.agree.status_mismatch) : std::string("-")) << " | "
              << std::scientific << std::setprecision(2) << r.agree.max_sar_diff_over_peak << " |\n";
  }
  std::cout << "\n" << device << "\n";
  return 0;
}
