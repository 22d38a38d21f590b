// A 3D Cartesian decomposition of an FDTD grid over ranks (issue 17), and the piece of the
// problem (sub-FdtdSetup) that one rank steps. Plain data and functions, no MPI: the MPI run
// (distributed_fdtd.h) and its tests use them, and so can a caller that hands each rank its piece.
//
// Pieces: along axis a the cells are cut at cuts[a][0] = 0 < cuts[a][1] < ... < cuts[a][P_a] = N_a;
// piece p along a holds cells [cuts[a][p], cuts[a][p+1]) and node planes cuts[a][p] ..
// cuts[a][p+1] (halo_exchange.h: the rank above a shared node plane owns it). Ranks are numbered
// x fastest: rank = px + P_x (py + P_y pz).
//
// Sample ownership (probes, gathered fields, DFT pieces): along each axis the sample index g
// belongs to the piece with cuts[p] <= g < cuts[p+1], and the top node plane g = N_a to the last
// piece. Every sample of the global grid has exactly one owner, whose value equals the
// single-domain run's.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_setup.h"

namespace vem {

struct Decomposition {
  std::array<int, 3> ranks{1, 1, 1};          // pieces along x, y, z
  std::array<std::vector<int>, 3> cuts;       // ranks[a] + 1 cell indices per axis (see above)

  int size() const { return ranks[0] * ranks[1] * ranks[2]; }
  std::array<int, 3> coords_of(int rank) const;
  int rank_of(const std::array<int, 3>& coords) const;
  // First cell and cell count of `rank`'s piece along each axis.
  std::array<int, 3> piece_lo(int rank) const;
  std::array<int, 3> piece_cells(int rank) const;
  // "2 x 1 x 3 (x cuts 0 20 40; z cuts 0 6 12 17)".
  std::string describe() const;
  // Field values sent per leap-frog step over all cuts, all ranks together (each cut carries the
  // two tangential H components up after the H update and the two tangential E down after the E
  // update, (N_b + 1)(N_c + 1) samples each): 4 (N_b + 1)(N_c + 1) per cut. A periodic axis cut
  // into pieces has one cut more (the wrap). The quantity the automatic choice minimises.
  long long halo_values_per_step(const std::array<int, 3>& n, const std::array<bool, 3>& periodic) const;
};

// Even split of n[a] cells into ranks[a] pieces (the first n % P pieces one cell longer).
Decomposition even_decomposition(const std::array<int, 3>& n, const std::array<int, 3>& ranks);
// Pieces of the given cell counts along each axis (uneven splits): cells[a] sums to n[a].
Decomposition decomposition_from_cells(const std::array<std::vector<int>, 3>& cells);

// Throws vem::Error naming the values when the decomposition cannot run `setup` on `nranks`
// ranks: rank count mismatch, more ranks than cells along an axis, a piece thinner than the
// stencil (1 cell), a piece on a CPML face not thicker than the CPML (thickness + 1 cells),
// high-order schemes (their wide stencil needs a 2-layer halo), a coefficient-array medium
// averaged at material edges without its arrays (the averages at a cut need the neighbours' cells)
// unless `materials_per_piece` (DistributedOptions::fill_materials fills each piece's box).
void validate_decomposition(const Decomposition& d, const FdtdSetup& setup, int nranks,
                            bool materials_per_piece = false);

// The decomposition of `setup`'s grid over `nranks` ranks with the fewest halo samples among the
// valid even splits (ties: the one cutting the slowest axis z, then y). Throws vem::Error when none
// is valid, with the reason for the most balanced candidate.
Decomposition choose_decomposition(const FdtdSetup& setup, int nranks, bool materials_per_piece = false);

// Owned sample-index box of `rank` along each axis (see above): [lo, hi] inclusive, global indices.
struct SampleBox {
  std::array<int, 3> lo{0, 0, 0}, hi{-1, -1, -1};
  bool empty() const { return hi[0] < lo[0] || hi[1] < lo[1] || hi[2] < lo[2]; }
  std::array<int, 3> dims() const { return {hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1}; }
  long long count() const { return empty() ? 0 : 1LL * dims()[0] * dims()[1] * dims()[2]; }
};
// The samples in both boxes (empty when they do not meet).
SampleBox intersect(const SampleBox& a, const SampleBox& b);
SampleBox owned_samples(const Decomposition& d, int rank);
// The rank owning global sample (i, j, k).
int owner_of_sample(const Decomposition& d, const std::array<int, 3>& sample);

// The piece of `global` that `rank` steps: its cells (materials sliced), world origin shifted,
// boundaries of the global faces on its outer faces (CPML there only) and `subdomain` on the
// cuts (periodic axes cut into pieces become subdomain faces joined around), the point sources
// that drive one of its updated samples, and the probes it owns (`probe_ids`: their indices in
// global.probes). `global`'s material arrays may be left empty when `fill_materials` is used
// (distributed_fdtd.h); then the piece's are empty too, and a coefficient-array medium averaged at
// the edges still gets its box (PerCellMedium::array_lo/array_n/clamp_lo/clamp_hi: the piece's
// cells, two more below and one more above each cut) for the filler to fill.
FdtdSetup piece_setup(const FdtdSetup& global, const Decomposition& d, int rank, std::vector<int>* probe_ids);

// The cells (global indices: first cell and count per axis) whose materials `rank`'s piece of
// `global` holds: for a coefficient-array medium averaged at the edges, the piece's cells with two
// more below and one more above along each axis, clamped to the grid (the cells the averages next
// to a cut read); otherwise the piece's own cells. What piece_setup copies and a fill_materials
// callback fills.
void piece_material_box(const FdtdSetup& global, const Decomposition& d, int rank, std::array<int, 3>& first,
                        std::array<int, 3>& count);

// Neighbour rank across each face of `rank` (boundary.h numbering), -1 on outer faces.
std::array<int, 6> face_neighbours(const Decomposition& d, const FdtdSetup& global, int rank);

}  // namespace vem
