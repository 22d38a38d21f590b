// Between sar.cpp (OpenMP, host side) and sar_cuda.cu (the GPU averaging); see sar.h.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "vem/fdtd/extensions/sar.h"

namespace vem::sar_detail {

// Summed-volume tables of tissue mass (kg), absorbed power (W) and tissue voxel count (double),
// entries at table indices t = 0..N along each axis (entry t: the sum over cells < t), x fastest.
// A view may hold only a box of the whole grid's tables (distributed SAR, issue 17): entries
// lo[a] .. lo[a] + dims[a] - 1, still the whole grid's values (the prefix sums from the grid's
// origin), and nx, ny, nz the whole grid's cells, so cubes are clipped at the real faces only.
struct SarTableView {
  const double* mass = nullptr;
  const double* power = nullptr;
  const double* tissue = nullptr;
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> dims{1, 1, 1};
  int nx = 0, ny = 0, nz = 0;
  double d = 0;  // voxel side, m
};

// The centred cube of voxel (i, j, k) (global indices) grown from n = 0 to at most n_last (the
// single-domain code: INT_MAX). reached: the growth ended (the mass was reached, or the whole
// grid holds less than it); otherwise next_n = n_last + 1 and mass_prev = M(n_last), to be
// continued elsewhere (only the side is then unknown: see distributed_sar_average.cpp). The
// view must hold every entry the cubes up to n_last read.
struct CubeResult {
  float sar; float side; bool valid; int cover;
  bool reached; int next_n; double mass_prev;
};
CubeResult grow_cube(const SarTableView& t, int i, int j, int k, double m, int n_last);

// A box sum from its eight table entries in box_sum's order: S(i1,j1,k1), S(i0,j1,k1),
// S(i1,j0,k1), S(i1,j1,k0), S(i0,j0,k1), S(i0,j1,k0), S(i1,j0,k0), S(i0,j0,k0).
inline double box_sum8(double a, double b, double c, double d, double e, double f, double g, double h) {
  return a - b - c - d + e + f + g - h;
}
// The side (m) of the cube reaching mass m at half-width n >= 1 from M(n-1) = Mp < m <= M(n) = M.
float cube_side(int n, double Mp, double M, double m, double d);

// For every voxel of an nx x ny x nz box, the largest avg[u] over the valid cubes (cover[u] >= 0:
// half-width) of the box that contain it, -1 where none (sar.cpp).
std::vector<float> largest_containing_average(int nx, int ny, int nz, const std::vector<float>& avg,
                                             const std::vector<int>& cover);

// The whole averaging on the GPU for every mass: summed-volume tables built on the device,
// cube growth, assignment, counts and peak. `in` is checked, the voxels cubic; outs[q] gets
// target_mass_kg = masses[q] and every other field. Returns the stage times.
SarCudaStages average_cuda(const SarInput& in, const std::vector<double>& masses, std::vector<AveragedSar>& outs);

// dst[0, bytes) = src[0, bytes) on up to `threads` OpenMP threads (the host side of the staged
// copies; the .cu is not compiled with OpenMP).
void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads);

// Fault in fresh storage [p, p + bytes) (zeros) on up to `threads` OpenMP threads, with
// transparent huge pages requested for it (Linux): what a zero-filling std::vector::resize would
// otherwise do page by page on one thread (the largest host cost of the GPU averaging).
void prefault(void* p, std::size_t bytes, int threads);

}  // namespace vem::sar_detail
