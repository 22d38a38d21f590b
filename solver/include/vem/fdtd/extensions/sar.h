// Specific absorption rate (SAR) from frequency-domain E fields (e.g. DftMonitor::phasor at steady
// state): local SAR, whole-body average, and peak spatial-average SAR over 1 g / 10 g cubes
// following the averaging rules of IEC/IEEE 62704-1:2017 (section 6), CPU (OpenMP) in
// src/fdtd/extensions/sar/sar.cpp and GPU in src/fdtd/extensions/sar/sar_cuda.cu.
//
// Units: sigma S/m, density kg/m^3, |E| the peak phasor amplitude in V/m, SAR W/kg, mass kg.
//   local SAR (voxel)  = sigma |E|^2 / (2 rho)          (or power_density / rho)
//   whole-body SAR     = sum_tissue sigma |E|^2 / 2 V  /  sum_tissue rho V
// Averaging (cubic voxels of side d; voxels whose density is below kMinTissueDensity are
// air/background (gases: the tissue tables give air 1.16 kg/m^3) and carry no mass; voxels
// outside the grid count as air):
//  - a cube is centred on every tissue voxel and grown layer by layer (side (2n+1) d) until its
//    tissue mass reaches the target mass m; the last layer is taken fractionally: with M(n) the
//    tissue mass of the cube of half-width n and M(n-1) < m <= M(n), f = (m - M(n-1)) /
//    (M(n) - M(n-1)); absorbed power, volume and air volume are interpolated with the same f,
//    side = (2n - 1 + 2f) d, averaged SAR = P / m;
//  - the cube is valid when its air volume is at most 10 % of its volume;
//  - voxels whose centred cube is invalid get the largest averaged SAR of the valid cubes that
//    contain them (centre within the cube's side); voxels in no valid cube stay unassigned
//    (status 3, SAR 0) and are counted;
//  - the peak spatial-average SAR is the maximum over valid cubes.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"
#include "vem/core/yee_grid.h"

namespace vem {

class FdfdOperator;

// Densities below this (kg/m^3) are gases, i.e. air for SAR: no mass, no absorbed power, and
// air volume for the 10 % rule (lung tissue, the lightest tissue, is ~260-1050 kg/m^3).
constexpr float kMinTissueDensity = 10.0f;
inline bool is_tissue_density(float rho) { return rho >= kMinTissueDensity; }

struct SarInput {
  YeeGrid grid;                 // voxels = cells; cubic (dx = dy = dz) for the averaging
  std::vector<float> sigma;     // S/m, cell_count() entries, x fastest
  std::vector<float> density;   // kg/m^3; below kMinTissueDensity marks air / background
  std::vector<float> e_squared; // |E|^2 at the voxel centre (peak amplitude), V^2/m^2
  // Optional: absorbed power density per voxel (W/m^3), e.g. cell_absorbed_power_density().
  // When given it replaces sigma |E|^2 / 2 (sigma and e_squared may then be empty).
  std::vector<float> power_density;
};

// Absorbed power density per voxel (W/m^3) from Yee-staggered phasors (compact layout, as for
// cell_centre_e_squared) and the conductivity each E sample is updated with (edge_sigma[c], same
// layout, S/m). Every sample dissipates 1/2 sigma_edge |E|^2 per unit volume over the volume it
// represents (one cell); that power is shared equally by the tissue voxels (is_tissue_density) among
// the four cells around the edge, so the total over the tissue equals the dissipated power
// exactly. Why not sigma_cell |E_cell|^2 / 2: at a tissue/air face the normal E outside is
// |eps_c| times the one inside, and averaging air edges into a tissue voxel overstates the
// absorbed power of the surface layer (by 2x for a 12-cell-radius eps_r 42 sphere).
std::vector<float> cell_absorbed_power_density(const YeeGrid& g, const std::vector<std::complex<float>>& ex,
                                               const std::vector<std::complex<float>>& ey,
                                               const std::vector<std::complex<float>>& ez,
                                               const std::array<std::vector<float>, 3>& edge_sigma,
                                               const std::vector<float>& density);

// The same for FDFD fields: E total in fdfd_fields' layout (3 N, sample (i,j,k) of component a at
// a N + i + nx (j + ny k)), each sample's conductivity sigma = -Im(eps_c) w eps0 from the
// operator's complex permittivity (fdfd_problem.h), density per cell of op's grid.
std::vector<float> fdfd_absorbed_power_density(const FdfdOperator& op, const std::vector<std::complex<double>>& e_total,
                                               const std::vector<float>& density);

// The conductivity (S/m) each E sample of `op` is updated with, recovered from the operator's own
// coefficients (material.h: ca = (1 - l)/(1 + l), cb = (dt/eps)/(1 + l), l = sigma dt/(2 eps)),
// so SAR uses exactly the losses the engine applies, whatever the material mode. Compact layout
// of FdtdEngine::field() per component (Ex, Ey, Ez); 0 where a component has no sample.
std::array<std::vector<float>, 3> edge_conductivity(const FdtdOperator& op);

// |E|^2 at cell centres from Yee-staggered phasors in the compact layout of FdtdEngine::field
// ((nx+1)(ny+1)(nz+1), e.g. DftMonitor::phasor): |Ex|^2 averaged over the cell's four x edges,
// likewise y and z, summed.
std::vector<float> cell_centre_e_squared(const YeeGrid& g, const std::vector<std::complex<float>>& ex,
                                         const std::vector<std::complex<float>>& ey,
                                         const std::vector<std::complex<float>>& ez);

std::vector<float> local_sar(const SarInput& in);  // W/kg, 0 in air
double whole_body_sar(const SarInput& in);          // W/kg; throws when there is no tissue

struct AveragedSar {
  double target_mass_kg = 0;
  std::vector<float> sar;            // W/kg per voxel (see status)
  std::vector<std::uint8_t> status;  // 0 air, 1 valid centred cube, 2 assigned, 3 unassigned
  std::vector<float> side_m;         // side of the centred cube (valid or not), m; 0 in air
  double peak = 0;                   // W/kg, maximum over valid cubes
  std::array<int, 3> peak_voxel{-1, -1, -1};
  double peak_side_m = 0;
  std::size_t valid = 0, assigned = 0, unassigned = 0;
};

// Averaged SAR for a target mass (0.001 kg = 1 g, 0.01 kg = 10 g). Backend::cuda builds the tables,
// grows the cubes and assigns on the GPU, with the CPU's results (sar_cuda.cu; throws when CUDA is
// not available); automatic picks it when usable. Throws vem::Error for inconsistent arrays,
// non-cubic voxels or a bad mass.
AveragedSar spatial_average_sar(const SarInput& in, double target_mass_kg,
                                Backend backend = Backend::cpu);
// Several masses (e.g. 1 g and 10 g) on one set of summed-volume tables (built once).
std::vector<AveragedSar> spatial_average_sar(const SarInput& in, const std::vector<double>& target_masses_kg,
                                             Backend backend = Backend::cpu);

// Stage times of the last Backend::cuda averaging in this process (one spatial_average_sar call,
// all its masses; for the benchmark). Seconds of wall time on the host; the GPU stages from
// CUDA events. upload: density and sigma / |E|^2 (or power density) to the device, staged through
// pinned buffers; tables: the three summed-volume tables built on the device; grow: the centred
// cubes; dilate: the assignment's unit dilations; finish: assignment, counts and peak;
// download: averaged SAR, side and status back; alloc_wait: time spent waiting for the host
// output arrays (allocated on other threads while the GPU works); device_alloc: cudaMalloc;
// checks: the input checks before the GPU path (sar.cpp).
struct SarCudaStages {
  double checks = 0, device_alloc = 0, upload = 0, tables = 0, grow = 0, dilate = 0, finish = 0, download = 0,
         alloc_wait = 0, total = 0;
  int search_start = 0;   // n the cube search starts from (a bound from the largest density)
  int max_cover = -1;     // dilations = max_cover (last mass)
  std::size_t box_voxels = 0;  // voxels of the tissue bounding box the dilations run over
  bool staged_copies = true;
};
SarCudaStages sar_cuda_last_stages();

}  // namespace vem
