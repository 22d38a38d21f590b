// The steady-state extensions over a distributed run (issue 17): a TF/SF plane wave, the
// near-to-far transform and SAR with IEC/IEEE 62704-1 1 g / 10 g averaging, each equal to the
// single-domain result. VTK-free; every member marked "collective" must be called by all ranks of
// the run's communicator in the same order; errors on one rank end the call on every rank with
// the message (DistributedFdtd::collective).
//
// TF/SF (DistributedTfsfSource): every rank holds the same 1D auxiliary grid as the single-domain
// source (computed from the global grid and box: identical arithmetic) and corrects the targets
// its engine updates (tfsf.h TfsfFrame). The corrections run before the halo exchange, so the
// neighbours receive corrected planes. Fields equal the single-domain run bit for bit (CPU).
//
// Near-to-far (DistributedNearToFar): the six face slabs of the Huygens box are DFT-monitored per
// piece (DistributedDftMonitor: each rank the samples it owns, bit for bit the single-domain
// accumulators). For a transform the slabs of one frequency are gathered on rank 0 (4 components
// x 3 node planes per face: O(N^2) values, not O(N^3)) and every rank receives the part within one
// sample of the samples it owns; it keeps the patches (cell faces of the box) whose sample
// (q, u, v) it owns (decomposition.h), whose stencil lies in that part. The radiation
// vectors N, L of each rank's part are summed over ranks (MPI_Reduce to rank 0 and MPI_Bcast: the
// same bits everywhere), so patterns, RCS,
// scattering cross-section and the power through the box are identical on every rank and equal
// to the single-domain values up to the summation order (measured ~1e-15 relative; tests: 1e-9).
//
// SAR (distributed_sar): nothing is gathered. Each rank receives the E phasors, the conductivity
// each E sample is updated with and the density one cell (one sample) around its piece from their
// owners, computes its cells' absorbed power density, local SAR and |E|^2 exactly as the
// single-domain code does per cell, and the sums (absorbed power, whole-body SAR) are reduced over
// the ranks (equal to one domain up to the summation order; the peaks exactly). The 1 g / 10 g
// averaging is distributed_spatial_average_sar below (halo boxes; see there for the bound and the
// fallback), bit for bit the single-domain arrays, peak and counts.
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "vem/fdtd/distributed/distributed_fdtd.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/fdtd/extensions/tfsf.h"

namespace vem {

// ---- TF/SF plane wave ----------------------------------------------------------------------
class DistributedTfsfSource {
 public:
  // Collective. `box` in global node indices (automatic_tfsf_box() of the global grid and
  // boundaries, or given). Attach before stepping starts, like TfsfSource.
  DistributedTfsfSource(DistributedFdtd& run, const PlaneWave& wave, const TfsfBox& box);
  ~DistributedTfsfSource();
  DistributedTfsfSource(const DistributedTfsfSource&) = delete;
  DistributedTfsfSource& operator=(const DistributedTfsfSource&) = delete;

  // This rank's source: k_hat(), e_hat(), h_hat(), delay(), alpha() are those of the global
  // source (identical on every rank); corrected_samples() counts this rank's targets.
  const TfsfSource& local() const { return *source_; }

 private:
  std::unique_ptr<TfsfSource> source_;
};

// ---- near-to-far transform -----------------------------------------------------------------
class DistributedFarField {
 public:
  // Collective: the far-zone patterns (F_theta, F_phi) for the directions (theta, phi), identical
  // on every rank (one reduction of 6 complex values per direction, all directions at once).
  // Holds the run's communicator: use it while the DistributedFdtd lives.
  std::vector<std::array<std::complex<double>, 2>> patterns(const std::vector<std::array<double, 2>>& dirs) const;
  // Collective: bistatic RCS (m^2) for the directions; incident amplitude |E0| (V/m).
  std::vector<double> rcs(const std::vector<std::array<double, 2>>& dirs, double incident_amplitude = 1.0) const;
  // Collective: the scattering cross-section (m^2), same quadrature as NearToFarTransform's.
  double scattering_cross_section(int n_theta = 24, int n_phi = 48, double incident_amplitude = 1.0) const;
  // Collective: net power (W) out through the box.
  double power_out() const;
  std::size_t local_patches() const { return local_->patches(); }
  const NearToFarTransform& local() const { return *local_; }

 private:
  friend class DistributedNearToFar;
  DistributedFarField(MPI_Comm comm, std::unique_ptr<NearToFarTransform> local);
  MPI_Comm comm_;
  std::shared_ptr<NearToFarTransform> local_;
};

class DistributedNearToFar {
 public:
  // Collective: DFT monitors on the six face slabs of `box` (global node indices, as
  // NearToFarTransform's: 1 <= lo < hi <= N - 1), tangential E and H, every `sample_interval`
  // steps (the slabs of fdtd_harmonic.h: node planes p-1..p+1 across the face, the box +-1 along it).
  DistributedNearToFar(DistributedFdtd& run, const std::vector<double>& frequencies_hz, const NtffBox& box,
                       int sample_interval = 1);
  ~DistributedNearToFar();

  // Collective: each slab's steady-state check (DistributedDftMonitor); the result with the
  // largest relative change.
  SteadyStateCheck check_steady_state();

  // Collective: the transform at frequency `freq_index` from the slabs' last-window phasors
  // (phasor = true; needs two checks) or accumulated spectra, multiplied by `scale` (e.g. the
  // normalization of fdtd_harmonic.h), phases relative to `phase_origin` (m).
  DistributedFarField transform(int freq_index, bool phasor, std::complex<double> scale,
                                const std::array<double, 3>& phase_origin) const;
  const NtffBox& box() const { return box_; }

 private:
  struct Face;
  DistributedFdtd& run_;
  NtffBox box_;
  std::vector<double> freqs_;
  std::vector<std::unique_ptr<Face>> faces_;
};

// ---- SAR -----------------------------------------------------------------------------------
// What distributed_spatial_average_sar did on this rank (scalars other than the byte counts and
// table_box / dilation_box are identical on every rank).
struct SarAveragingReport {
  bool halo = false;                // false: gathered on the root (reason says why)
  std::string reason;
  double min_tissue_density = 0;    // kg/m^3, over the whole model (the bound's rho_min)
  int halo_cells = 0;               // R: largest half-width of a valid cube (all masses)
  int dilation_cells = -1;          // largest cover of a valid cube (the assignment's dilations)
  SampleBox table_box;              // cells whose table entries this rank received (global indices)
  SampleBox dilation_box;           // cells whose averages / covers it received
  long long bytes_received = 0;     // by this rank for the averaging (tables, planes, averages, residual entries)
  long long bytes_halo_bound = 0;   // 24 B x table_box + 8 B x dilation_box + the three scan planes + residual_bytes
  long long residual_bytes = 0;     // table entries received for the voxels grown past R
  long long residual_voxels = 0;    // this rank's voxels grown past R (their side from the owners' entries)
  int residual_rounds = 0;
};

// How distributed_spatial_average_sar averages: automatic = halo unless, on several ranks, the bound
// R makes every rank's box the whole grid (light tissue): then gather, with the reason.
enum class SarAveraging { automatic, halo, gather };

struct DistributedSarOptions {
  bool averaged = true;             // 1 g and 10 g averages (cubic cells; skipped with a warning otherwise)
  // Of the averaging on the gathering rank when the averaging gathers (sar.h); the halo averaging
  // runs on each rank's CPU (the GPU code builds its own tables from its box, which are not the
  // whole grid's prefix sums: not bit for bit; see distributed_sar_average.cpp).
  Backend backend = Backend::cpu;
  SarAveraging averaging = SarAveraging::automatic;
  int root = 0;                     // the gathering rank (SarAveraging::gather)
  bool scatter_fields = true;       // false: only the summary (no per-cell arrays on the pieces)
  bool e_squared = false;           // also |E|^2 at the cell centres (sar.h cell_centre_e_squared), scattered
  // Also the scaled E phasors over each rank's piece sample box (piece_lo .. piece_lo + cells,
  // the shared node planes included: what a piece needs to average E to its cell centres).
  bool e_piece = false;
};

// Summary identical on every rank; per-cell arrays (when scattered) are this rank's piece cells
// (DistributedFdtd::piece_lo(), decomposition piece_cells(), x fastest).
struct DistributedSar {
  bool has_sar = false;             // false: no tissue (density < kMinTissueDensity everywhere)
  double whole_body_sar = 0;        // W/kg
  double absorbed_power = 0;        // W, in the tissue voxels
  double peak_local_sar = 0;        // W/kg
  std::array<int, 3> peak_local_voxel{-1, -1, -1};  // global cell indices
  // Scalars (target_mass_kg, peak, peak_voxel in global cells, peak_side_m, valid, assigned,
  // unassigned) on every rank; sar / status / side_m hold this rank's cells.
  bool has_averaged = false;
  AveragedSar sar_1g, sar_10g;
  std::vector<float> local_sar;     // W/kg, this rank's cells
  std::vector<float> e_squared;     // V^2/m^2, this rank's cells (DistributedSarOptions::e_squared)
  // DistributedSarOptions::e_piece: Ex, Ey, Ez (V/m) over e_piece_box (global sample indices,
  // x fastest; compact-layout values, 0 where a component has no sample).
  std::array<std::vector<std::complex<float>>, 3> e_piece;
  SampleBox e_piece_box;
  std::string warning;
  SarAveragingReport averaging;     // how the 1 g / 10 g averages were made (this rank)
  long long bytes_received = 0;     // by this rank for the SAR inputs (E, conductivity, density halos)
};

// Collective. `e` monitors Ex, Ey, Ez over the whole grid; its phasors (phasor = true) or
// spectra at `freq_index`, times `scale`, are the E field (V/m, peak). `density_piece`: kg/m^3
// for this rank's piece cells (x fastest), or empty on every rank for no SAR (only |E|^2). Throws vem::Error on every rank for a monitor that
// does not cover the grid, a density of the wrong size, ...
DistributedSar distributed_sar(DistributedFdtd& run, const DistributedDftMonitor& e, int freq_index, bool phasor,
                               std::complex<double> scale, const std::vector<float>& density_piece,
                               const DistributedSarOptions& options = {});

// Collective: peak spatial-average SAR for each target mass over the pieces of decomposition `d`
// of `grid` (cubic voxels), each rank giving its piece's density and absorbed power density
// (W/m^3; cells x fastest). Returns per mass an AveragedSar whose sar / status / side_m hold this
// rank's cells and whose scalars (peak, peak_voxel in global cells, peak_side_m, counts) are the
// whole model's, identical on every rank: all equal to spatial_average_sar on the whole grid bit
// for bit.
// Halo averaging (SarAveraging::halo):
//  1. the whole grid's summed-volume tables are built over the pieces: every prefix pass runs
//     along its lines in the single-domain order, a piece starting from the last entry of the
//     piece below it (pipelined along each axis), so every entry is the single-domain entry bit
//     for bit (a box's own prefix sums round differently: 31,263 of 31,944 cube masses of a
//     random 40^3 model differed in their bits with tables started 12 cells in);
//  2. R = the largest half-width at which a valid cube can stop: a valid cube of half-width n >= 1
//     has tissue volume >= 0.9 (2n-1)^3 voxels, each of mass >= rho_min V, and mass m, so
//     0.899 rho_min V (2n-1)^3 <= m + 4 err (err: the tables' rounding, as sar_cuda.cu bounds it);
//     R = the last n meeting that for the largest mass. Each rank receives the table entries of
//     its cells +-R (clamped to the grid; the cubes are clipped at the whole grid's faces only),
//     grows its voxels' cubes up to R with the single-domain code (sar.cpp grow_cube): every
//     valid cube and every cube stopping by R is decided there;
//  3. voxels still growing at R are invalid (status 3, by the bound); only their side needs the
//     size at which they reach the mass: it is found by asking the owners for the eight mass-table
//     entries of each further size (rounds of 8, 16, 32, ... sizes);
//  4. the assignment (unit dilations of the valid averages) runs on the averages and covers of the
//     cells +-rmax (rmax: the largest cover, <= R) received from their owners; exact because the
//     cubes containing a cell are centred within rmax of it;
//  5. counts summed, the peak the largest SAR with the lowest global voxel index (as the scan).
// Gather (SarAveraging::gather, or automatic when every rank's box would be the whole grid): density and
// power density gathered on `root`, which runs spatial_average_sar with `backend`; arrays
// scattered back. Throws vem::Error on every rank for bad sizes or inputs.
std::vector<AveragedSar> distributed_spatial_average_sar(MPI_Comm comm, const Decomposition& d, const YeeGrid& grid,
                                                         const std::vector<float>& density_piece,
                                                         const std::vector<float>& power_density_piece,
                                                         const std::vector<double>& target_masses_kg,
                                                         SarAveraging averaging = SarAveraging::automatic,
                                                         Backend backend = Backend::cpu, int root = 0,
                                                         SarAveragingReport* report = nullptr);

// This rank's piece of a global per-cell array (x fastest), e.g. a density known on every rank.
std::vector<float> piece_of_cells(const DistributedFdtd& run, const std::vector<float>& global_cells);

}  // namespace vem
