// SAR (sar.h): local and whole-body SAR and the CPU (OpenMP) peak spatial-average SAR.
// The GPU twin (tables, cube growth, assignment) is in sar_cuda.cu.
#include "vem/fdtd/extensions/sar.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "fdtd/extensions/sar/sar_internal.h"
#include "vem/core/error.h"
#include "vem/fdfd/fdfd_operator.h"

namespace vem {

namespace {

// Summed-volume tables (double, (nx+1)(ny+1)(nz+1)) of tissue mass (kg), absorbed power (W) and
// tissue voxel count.
struct SarTables {
  int nx = 0, ny = 0, nz = 0;
  double voxel_volume = 0, d = 0;
  std::vector<double> mass, power, tissue;
};

std::mutex last_stages_mutex;
SarCudaStages last_stages;

// The first voxel (in index order) whose inputs are bad, n if none (all threads).
std::size_t first_bad_voxel(const SarInput& in, std::size_t n) {
  const bool pd = !in.power_density.empty();
  std::int64_t first = std::int64_t(n);
#pragma omp parallel for reduction(min : first) schedule(static)
  for (std::int64_t q = 0; q < std::int64_t(n); ++q) {
    const bool ok = pd ? std::isfinite(in.density[q]) && std::isfinite(in.power_density[q]) && in.power_density[q] >= 0
                       : std::isfinite(in.sigma[q]) && in.sigma[q] >= 0 && std::isfinite(in.density[q]) &&
                             std::isfinite(in.e_squared[q]) && in.e_squared[q] >= 0;
    if (!ok) first = std::min(first, q);
  }
  return std::size_t(first);
}

void check_input(const SarInput& in) {
  in.grid.validate();
  const std::size_t n = std::size_t(in.grid.cell_count());
  if (in.density.size() != n) fail("SAR: density has ", in.density.size(), " entries, the grid ", n, " voxels");
  if (!in.power_density.empty()) {
    if (in.power_density.size() != n)
      fail("SAR: power density has ", in.power_density.size(), " entries, the grid ", n, " voxels");
    // The values are checked on every thread; the first bad voxel gets the serial checks' message.
    for (std::size_t q = first_bad_voxel(in, n); q < n; ++q) {
      if (!std::isfinite(in.density[q])) fail("SAR: density at voxel ", q, " is not finite");
      if (!std::isfinite(in.power_density[q]) || in.power_density[q] < 0)
        fail("SAR: power density ", in.power_density[q], " W/m^3 at voxel ", q, " is negative or not finite");
    }
    return;
  }
  if (in.sigma.size() != n || in.e_squared.size() != n)
    fail("SAR: sigma (", in.sigma.size(), "), density (", in.density.size(), ") and |E|^2 (",
         in.e_squared.size(), ") must each have one entry per voxel (", n, ")");
  for (std::size_t q = first_bad_voxel(in, n); q < n; ++q) {
    if (!std::isfinite(in.sigma[q]) || in.sigma[q] < 0)
      fail("SAR: conductivity ", in.sigma[q], " S/m at voxel ", q, " is negative or not finite");
    if (!std::isfinite(in.density[q])) fail("SAR: density at voxel ", q, " is not finite");
    if (!std::isfinite(in.e_squared[q]) || in.e_squared[q] < 0)
      fail("SAR: |E|^2 at voxel ", q, " is negative or not finite");
  }
}

// Absorbed power density of voxel q, W/m^3.
inline double power_density_at(const SarInput& in, std::size_t q) {
  return in.power_density.empty() ? 0.5 * double(in.sigma[q]) * in.e_squared[q] : double(in.power_density[q]);
}

// Sum of a summed-volume table over voxels [i0,i1) x [j0,j1) x [k0,k1) (clipped by the caller).
inline double box_sum(const double* S, int nx, int ny, int i0, int i1, int j0, int j1, int k0, int k1) {
  const std::size_t sx = nx + 1, sxy = sx * (ny + 1);
  auto at = [&](int i, int j, int k) { return S[i + sx * j + sxy * k]; };
  return sar_detail::box_sum8(at(i1, j1, k1), at(i0, j1, k1), at(i1, j0, k1), at(i1, j1, k0), at(i0, j0, k1),
                              at(i0, j1, k0), at(i1, j0, k0), at(i0, j0, k0));
}

}  // namespace

// Centred cube around voxel (i,j,k) (sar.h); identical logic to the CUDA kernel. The tables may be
// a box of the whole grid's tables (sar_internal.h SarTableView): the cube is clipped at the whole
// grid's faces, the entries read at their global indices minus the box's origin.
sar_detail::CubeResult sar_detail::grow_cube(const SarTableView& t, int i, int j, int k, double m, int n_last) {
  const int nmax = std::max({t.nx, t.ny, t.nz});
  const int last = std::min(nmax, n_last);
  const int bx = t.dims[0] - 1, by = t.dims[1] - 1;
  double Mp = 0, Pp = 0, Ap = 0, Vp = 0;
  for (int n = 0; n <= last; ++n) {
    const int i0 = std::max(0, i - n) - t.lo[0], i1 = std::min(t.nx, i + n + 1) - t.lo[0];
    const int j0 = std::max(0, j - n) - t.lo[1], j1 = std::min(t.ny, j + n + 1) - t.lo[1];
    const int k0 = std::max(0, k - n) - t.lo[2], k1 = std::min(t.nz, k + n + 1) - t.lo[2];
    const double M = box_sum(t.mass, bx, by, i0, i1, j0, j1, k0, k1);
    const double P = box_sum(t.power, bx, by, i0, i1, j0, j1, k0, k1);
    const double cnt = box_sum(t.tissue, bx, by, i0, i1, j0, j1, k0, k1);
    const double side = 2.0 * n + 1.0;
    const double V = side * side * side;  // voxel volumes
    const double A = V - cnt;             // air, including voxels outside the grid
    if (M >= m) {
      if (n == 0) return {float(P / M), float(t.d * std::cbrt(m / M)), true, 0, true, 0, 0};
      const double f = (m - Mp) / (M - Mp);
      const double Pm = Pp + f * (P - Pp), Vm = Vp + f * (V - Vp), Am = Ap + f * (A - Ap);
      return {float(Pm / m), cube_side(n, Mp, M, m, t.d), Am <= 0.1 * Vm + 1e-9 * Vm, f >= 0.5 ? n : n - 1, true,
              n, Mp};
    }
    Mp = M; Pp = P; Ap = A; Vp = V;
  }
  // last < nmax: not decided within the box (next size last + 1, Mp = M(last)); else the whole
  // grid holds less than the target mass.
  return {0.0f, 0.0f, false, -1, last >= nmax, last + 1, Mp};
}

float sar_detail::cube_side(int n, double Mp, double M, double m, double d) {
  const double f = (m - Mp) / (M - Mp);
  return float((2.0 * n - 1.0 + 2.0 * f) * d);
}

// For every voxel q, the largest avg[u] over the valid cubes that contain it: cover[u] >= 0 is
// the half-width (voxels) of u's cube, -1 for no valid cube; -1 where none contains q.
// A cube of half-width r is the L-infinity ball of radius r, i.e. r unit dilations, and dilation
// distributes over max, so with D the 3x3x3 max filter and V_r = avg where cover == r:
//     U_rmax = V_rmax,   U_r = max(D(U_{r+1}), V_r),   result = U_0
// (rmax dilations, each three 1-D passes: O(rmax N) instead of O(N rmax^3) for a gather).
std::vector<float> sar_detail::largest_containing_average(int nx, int ny, int nz, const std::vector<float>& avg,
                                                          const std::vector<int>& cover) {
  const std::size_t n = avg.size(), sy = std::size_t(nx), sz = std::size_t(nx) * ny;
  int rmax = -1;
  for (int c : cover) rmax = std::max(rmax, c);
  std::vector<float> u(n, -1.0f), t(n);
  if (rmax < 0) return u;
  const int len[3] = {nx, ny, nz};
  const std::size_t stride[3] = {1, sy, sz};
  // out = max of in over the neighbours +-1 along `axis` (inside the grid)
  auto max_filter_1 = [&](const std::vector<float>& in, std::vector<float>& out, int axis) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const std::size_t q = i + sy * j + sz * k;
          const int at = axis == 0 ? i : axis == 1 ? j : k;
          float m = in[q];
          if (at > 0) m = std::max(m, in[q - stride[axis]]);
          if (at + 1 < len[axis]) m = std::max(m, in[q + stride[axis]]);
          out[q] = m;
        }
  };
  for (int r = rmax; r >= 0; --r) {
    if (r < rmax) {
      // D = three 1-D max filters of half-width 1: x (u into t), y (t into u), z (u into t)
      max_filter_1(u, t, 0);
      max_filter_1(t, u, 1);
      max_filter_1(u, t, 2);
      u.swap(t);
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < std::int64_t(n); ++q)
      if (cover[q] == r) u[q] = std::max(u[q], avg[q]);
  }
  return u;
}

std::vector<float> cell_centre_e_squared(const YeeGrid& g, const std::vector<std::complex<float>>& ex,
                                         const std::vector<std::complex<float>>& ey,
                                         const std::vector<std::complex<float>>& ez) {
  g.validate();
  const std::size_t sx = g.nx + 1, sxy = sx * (g.ny + 1), nc = sxy * (g.nz + 1);
  if (ex.size() != nc || ey.size() != nc || ez.size() != nc)
    fail("SAR: E phasors must be in the compact layout of ", nc, " samples ((nx+1)(ny+1)(nz+1))");
  std::vector<float> out(std::size_t(g.cell_count()));
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        auto at = [&](int a, int b, int c) { return a + sx * b + sxy * c; };
        const double x = std::norm(ex[at(i, j, k)]) + std::norm(ex[at(i, j + 1, k)]) +
                         std::norm(ex[at(i, j, k + 1)]) + std::norm(ex[at(i, j + 1, k + 1)]);
        const double y = std::norm(ey[at(i, j, k)]) + std::norm(ey[at(i + 1, j, k)]) +
                         std::norm(ey[at(i, j, k + 1)]) + std::norm(ey[at(i + 1, j, k + 1)]);
        const double z = std::norm(ez[at(i, j, k)]) + std::norm(ez[at(i + 1, j, k)]) +
                         std::norm(ez[at(i, j + 1, k)]) + std::norm(ez[at(i + 1, j + 1, k)]);
        out[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = float(0.25 * (x + y + z));
      }
  return out;
}

std::vector<float> cell_absorbed_power_density(const YeeGrid& g, const std::vector<std::complex<float>>& ex,
                                               const std::vector<std::complex<float>>& ey,
                                               const std::vector<std::complex<float>>& ez,
                                               const std::array<std::vector<float>, 3>& edge_sigma,
                                               const std::vector<float>& density) {
  g.validate();
  const std::size_t sx = g.nx + 1, sxy = sx * (g.ny + 1), nc = sxy * (g.nz + 1);
  const std::size_t ncell = std::size_t(g.cell_count());
  if (ex.size() != nc || ey.size() != nc || ez.size() != nc || edge_sigma[0].size() != nc ||
      edge_sigma[1].size() != nc || edge_sigma[2].size() != nc)
    fail("SAR: E phasors and edge conductivities must be in the compact layout of ", nc,
         " samples ((nx+1)(ny+1)(nz+1))");
  if (density.size() != ncell) fail("SAR: density has ", density.size(), " entries, the grid ", ncell, " voxels");
  const std::vector<std::complex<float>>* e[3] = {&ex, &ey, &ez};
  const int n[3] = {g.nx, g.ny, g.nz};
  auto tissue = [&](int i, int j, int k) {
    return i >= 0 && j >= 0 && k >= 0 && i < g.nx && j < g.ny && k < g.nz &&
           is_tissue_density(density[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)]);
  };
  // Each edge's power 1/2 sigma |E|^2 split over the tissue cells around it, once per edge (issue
  // 16: the voxel-centric form counted every edge's tissue cells up to four times), then gathered
  // per voxel in the same order: the same double operations, the same sums.
  std::array<std::unique_ptr<double[]>, 3> share_of;  // not zeroed here: first touched in parallel
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    share_of[a].reset(new double[nc]);
    double* q = share_of[a].get();
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k <= g.nz; ++k)
      for (int j = 0; j <= g.ny; ++j)
        for (int i = 0; i <= g.nx; ++i) {
          const std::size_t s = i + sx * j + sxy * k;
          const int idx[3] = {i, j, k};
          double v = 0;
          if (idx[a] < n[a]) {
            const double pw = 0.5 * double(edge_sigma[a][s]) * std::norm((*e[a])[s]);
            if (pw != 0) {
              int share = 0;  // tissue cells around this edge
              for (int qb = 0; qb < 2; ++qb)
                for (int qc = 0; qc < 2; ++qc) {
                  int cell[3] = {idx[0], idx[1], idx[2]};
                  cell[b] -= qb;
                  cell[c] -= qc;
                  share += tissue(cell[0], cell[1], cell[2]) ? 1 : 0;
                }
              if (share > 0) v = pw / share;
            }
          }
          q[s] = v;
        }
  }
  std::vector<float> out(ncell);
  // Gather form (no write races): each voxel collects its share of its 12 edges.
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        double sum = 0;
        if (tissue(i, j, k)) {
          for (int a = 0; a < 3; ++a) {
            const int b = (a + 1) % 3, c = (a + 2) % 3;
            for (int ob = 0; ob < 2; ++ob)
              for (int oc = 0; oc < 2; ++oc) {
                int idx[3] = {i, j, k};
                idx[b] += ob;
                idx[c] += oc;
                const double v = share_of[a][idx[0] + sx * idx[1] + sxy * idx[2]];
                if (v != 0) sum += v;
              }
          }
        }
        out[i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)] = float(sum);
      }
  return out;
}

std::vector<float> fdfd_absorbed_power_density(const FdfdOperator& op, const std::vector<std::complex<double>>& e_total,
                                               const std::vector<float>& density) {
  const YeeGrid& g = op.grid();
  const std::size_t N = std::size_t(g.cell_count());
  if (e_total.size() != 3 * N) fail("SAR: FDFD field has ", e_total.size(), " samples, expected 3 x ", N);
  const std::size_t sx = g.nx + 1, sxy = sx * (g.ny + 1), nc = sxy * (g.nz + 1);
  const double w_eps0 = op.omega() * kEps0;
  std::vector<std::complex<float>> e[3];
  std::array<std::vector<float>, 3> sig;
  for (int a = 0; a < 3; ++a) {
    e[a].assign(nc, 0.0f);
    sig[a].assign(nc, 0.0f);
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
          const std::size_t s = i + sx * j + sxy * k;
          e[a][s] = std::complex<float>(e_total[a * N + i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k)]);
          sig[a][s] = float(std::max(0.0, -op.eps_at(a, i, j, k).imag() * w_eps0));
        }
  }
  return cell_absorbed_power_density(g, e[0], e[1], e[2], sig, density);
}

std::vector<float> local_sar(const SarInput& in) {
  check_input(in);
  std::vector<float> s(in.density.size(), 0.0f);
#pragma omp parallel for schedule(static)
  for (std::int64_t q = 0; q < std::int64_t(s.size()); ++q)
    if (is_tissue_density(in.density[q])) s[q] = float(power_density_at(in, q) / in.density[q]);
  return s;
}

double whole_body_sar(const SarInput& in) {
  check_input(in);
  double p = 0, m = 0;
  for (std::size_t q = 0; q < in.density.size(); ++q)
    if (is_tissue_density(in.density[q])) {
      p += power_density_at(in, q);
      m += in.density[q];
    }
  if (!(m > 0)) fail("SAR: the volume holds no tissue (every density below ", kMinTissueDensity, " kg/m^3)");
  return p / m;
}

std::vector<AveragedSar> spatial_average_sar(const SarInput& in, const std::vector<double>& target_masses_kg,
                                             Backend backend) {
  [[maybe_unused]] const auto t_enter = std::chrono::steady_clock::now();
  check_input(in);
  for (double m : target_masses_kg)
    if (!(m > 0) || !std::isfinite(m))
      fail("SAR: target mass ", m, " kg must be > 0 (0.001 for 1 g, 0.01 for 10 g)");
  const YeeGrid& g = in.grid;
  if (std::fabs(g.dy - g.dx) > 1e-6 * g.dx || std::fabs(g.dz - g.dx) > 1e-6 * g.dx)
    fail("SAR: spatial averaging needs cubic voxels; the grid has dx, dy, dz = ", g.dx, ", ", g.dy,
         ", ", g.dz, " m (resample the volume first)");
  if (backend == Backend::automatic) backend = cuda_available() ? Backend::cuda : Backend::cpu;
  if (backend == Backend::cuda) {
    std::string why;
    if (!cuda_available(&why)) fail("SAR: the CUDA backend was requested but ", why);
  }
  if (backend == Backend::cuda) {
#ifdef VEM_WITH_CUDA
    std::vector<AveragedSar> results;
    const double checks = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_enter).count();
    SarCudaStages stages = sar_detail::average_cuda(in, target_masses_kg, results);
    stages.checks = checks;
    std::lock_guard<std::mutex> lock(last_stages_mutex);
    last_stages = stages;
    return results;
#else
    fail("SAR: built without CUDA");
#endif
  }
  SarTables t;
  t.nx = g.nx; t.ny = g.ny; t.nz = g.nz;
  t.d = g.dx;
  t.voxel_volume = g.dx * g.dy * g.dz;
  const std::size_t sx = g.nx + 1, sxy = sx * (g.ny + 1), ns = sxy * (g.nz + 1);
  t.mass.assign(ns, 0.0); t.power.assign(ns, 0.0); t.tissue.assign(ns, 0.0);
  // Summed-volume tables (OpenMP: the fill over rows, each prefix pass over the lines it runs along).
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const std::size_t q = i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k);
        const std::size_t s = (i + 1) + sx * (j + 1) + sxy * (k + 1);
        if (is_tissue_density(in.density[q])) {
          t.mass[s] = in.density[q] * t.voxel_volume;
          t.power[s] = power_density_at(in, q) * t.voxel_volume;
          t.tissue[s] = 1.0;
        }
      }
  for (auto* S : {&t.mass, &t.power, &t.tissue}) {  // prefix sums along x, y, z
    double* v = S->data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 1; k <= g.nz; ++k)
      for (int j = 1; j <= g.ny; ++j)
        for (int i = 1; i <= g.nx; ++i) v[i + sx * j + sxy * k] += v[i - 1 + sx * j + sxy * k];
#pragma omp parallel for schedule(static)
    for (int k = 1; k <= g.nz; ++k)
      for (int j = 1; j <= g.ny; ++j)
        for (int i = 1; i <= g.nx; ++i) v[i + sx * j + sxy * k] += v[i + sx * (j - 1) + sxy * k];
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= g.ny; ++j)
      for (int k = 1; k <= g.nz; ++k)
        for (int i = 1; i <= g.nx; ++i) v[i + sx * j + sxy * k] += v[i + sx * j + sxy * (k - 1)];
  }
  // The tables serve every mass; the cube growth and assignment run once per mass.
  sar_detail::SarTableView view;
  view.mass = t.mass.data(); view.power = t.power.data(); view.tissue = t.tissue.data();
  view.dims = {g.nx + 1, g.ny + 1, g.nz + 1};
  view.nx = g.nx; view.ny = g.ny; view.nz = g.nz;
  view.d = t.d;
  std::vector<AveragedSar> results;
  for (const double target_mass_kg : target_masses_kg) {
    AveragedSar out;
    out.target_mass_kg = target_mass_kg;
    const std::size_t n = std::size_t(g.cell_count());
    out.sar.assign(n, 0.0f);
    out.status.assign(n, 0);
    out.side_m.assign(n, 0.0f);
    {
      std::vector<float> avg(n, 0.0f);
      std::vector<int> cover(n, -1);
#pragma omp parallel for collapse(2) schedule(dynamic)
      for (int k = 0; k < g.nz; ++k)
        for (int j = 0; j < g.ny; ++j)
          for (int i = 0; i < g.nx; ++i) {
            const std::size_t q = i + std::size_t(g.nx) * (j + std::size_t(g.ny) * k);
            if (!is_tissue_density(in.density[q])) continue;
            const sar_detail::CubeResult r = sar_detail::grow_cube(view, i, j, k, target_mass_kg, INT_MAX);
            out.side_m[q] = r.side;
            if (r.valid) { avg[q] = r.sar; cover[q] = r.cover; out.status[q] = 1; out.sar[q] = r.sar; }
            else out.status[q] = 3;
          }
      const std::vector<float> best = sar_detail::largest_containing_average(g.nx, g.ny, g.nz, avg, cover);
      for (std::size_t q = 0; q < n; ++q)
        if (out.status[q] == 3 && best[q] >= 0) { out.sar[q] = best[q]; out.status[q] = 2; }
    }
    for (std::size_t q = 0; q < n; ++q) {
      if (out.status[q] == 1) {
        ++out.valid;
        if (out.sar[q] > out.peak || out.peak_voxel[0] < 0) {
          out.peak = out.sar[q];
          out.peak_voxel = {int(q % g.nx), int((q / g.nx) % g.ny), int(q / (std::size_t(g.nx) * g.ny))};
          out.peak_side_m = out.side_m[q];
        }
      } else if (out.status[q] == 2) {
        ++out.assigned;
      } else if (out.status[q] == 3) {
        ++out.unassigned;
      }
    }
    results.push_back(std::move(out));
  }
  return results;
}

SarCudaStages sar_cuda_last_stages() {
  std::lock_guard<std::mutex> lock(last_stages_mutex);
  return last_stages;
}

void sar_detail::parallel_copy(void* dst, const void* src, std::size_t bytes, int threads) {
  std::size_t nt = std::size_t(std::max(1, std::min(threads, omp_get_max_threads())));
  nt = std::max<std::size_t>(1, std::min(nt, bytes >> 18));  // at least 256 KiB a thread
  const std::size_t per = (bytes + nt - 1) / nt;
#pragma omp parallel for num_threads(int(nt)) schedule(static)
  for (int p = 0; p < int(nt); ++p) {
    const std::size_t off = std::size_t(p) * per;
    if (off < bytes) std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, std::min(per, bytes - off));
  }
}

void sar_detail::prefault(void* p, std::size_t bytes, int threads) {
  char* c = static_cast<char*>(p);
#ifdef __linux__
  // Transparent huge pages for the 2 MiB-aligned inside (honoured where THP is "madvise", the
  // default of many kernels): 512x fewer faults. VEM_SAR_NO_HUGEPAGES skips it (benchmark switch).
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(c) + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(c) + bytes) & ~(kHuge - 1);
  if (hi > lo && !std::getenv("VEM_SAR_NO_HUGEPAGES"))
    madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  std::size_t nt = std::size_t(std::max(1, std::min(threads, omp_get_max_threads())));
  nt = std::max<std::size_t>(1, std::min(nt, bytes >> 21));  // at least 2 MiB a thread
  const std::size_t per = (bytes + nt - 1) / nt;
#pragma omp parallel for num_threads(int(nt)) schedule(static)
  for (int t = 0; t < int(nt); ++t) {
    const std::size_t off = std::size_t(t) * per;
    if (off < bytes) std::memset(c + off, 0, std::min(per, bytes - off));
  }
}

AveragedSar spatial_average_sar(const SarInput& in, double target_mass_kg, Backend backend) {
  return std::move(spatial_average_sar(in, std::vector<double>{target_mass_kg}, backend).front());
}

// Moved from fdtd_harmonic.cpp (issue 17: the distributed SAR needs it per piece); see sar.h.
std::array<std::vector<float>, 3> edge_conductivity(const FdtdOperator& op) {
  const YeeGrid& g = op.grid();
  const std::size_t sx = g.nx + 1, sxy = sx * (g.ny + 1);
  std::array<std::vector<float>, 3> out;
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int a = 0; a < 3; ++a) {
    out[a].assign(sxy * (g.nz + 1), 0.0f);
    const Component c = static_cast<Component>(a);
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k <= g.nz; ++k)
      for (int j = 0; j <= g.ny; ++j)
        for (int i = 0; i <= g.nx; ++i) {
          const int idx[3] = {i, j, k};
          if (idx[a] >= n[a]) continue;  // no sample
          const auto cf = op.coefficients_at(c, i, j, k);
          const double ca = cf[0], cb = cf[1];
          if (!(cb > 0) || !(ca > -1)) continue;
          const double l = (1.0 - ca) / (1.0 + ca);
          out[a][i + sx * j + sxy * k] = float(std::max(0.0, 2.0 * l / (cb * (1.0 + l))));
        }
  }
  return out;
}

}  // namespace vem
