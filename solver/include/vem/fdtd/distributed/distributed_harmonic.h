// The steady-state run of fdtd_harmonic.h over MPI ranks (issue 17): run_fdtd_harmonic on a
// DistributedFdtd, composed of the distributed extensions (distributed_extensions.h): TF/SF plane
// wave or thin-wire dipole, DFT monitors per piece, the steady-state criterion reduced over
// ranks, near-to-far surface sums reduced, SAR and |E|^2 per piece (no gather). The plan
// (time step, excitation, DFT sampling, boxes, step limits), the stepping loop and its stopping
// rule, the normalization and the far-field tables are run_fdtd_harmonic's own code
// (src/fdtd/harmonic_internal.h), so both runs take the same steps and normalize the same way.
//
// Results against run_fdtd_harmonic of the same setup (CPU engine; tests under mpirun -np 1..4):
// E phasors, |E|^2, local SAR, psSAR 1 g / 10 g (arrays, value, voxel, side, counts) bit for bit;
// whole-body SAR and absorbed power (sums reduced over the ranks) to ~1e-16 (tests: 1e-12); RCS / gain tables, scattering cross-section, radiated power, feed
// impedance and accepted power to ~1e-15 relative (reduced sums; tests: 1e-9); with a stopping
// criterion the reduced relative change equals the single-domain one up to rounding, so a run
// stopping at the tolerance could stop one window apart (use fixed_steps for a bitwise
// comparison). Every scalar is identical on every rank.
//
// Memory: the E / |E|^2 / SAR step holds each piece's cells plus a one-cell halo of E, conductivity
// and density, and for the 1 g / 10 g averaging the whole grid's tables over the piece +-R
// (distributed_extensions.h distributed_spatial_average_sar; nothing is gathered unless light
// tissue makes every rank's box the whole grid); the near-to-far step holds the six face slabs of one frequency on every rank (O(N^2)).
#pragma once

#include <mpi.h>

#include "vem/fdtd/distributed/distributed_fdtd.h"
#include "vem/fdtd/fdtd_harmonic.h"

namespace vem {

struct DistributedHarmonicResult {
  // Every scalar as run_fdtd_harmonic's, identical on every rank (steps, dt, converged, warning,
  // per frequency: SAR summary and psSAR, far-field table, cross-section, powers, feed impedance,
  // normalization; AveragedSar scalars). The per-frequency arrays hold THIS rank's piece:
  //   ex, ey, ez: the piece's samples (`piece_samples`: global sample indices piece_lo ..
  //               piece_lo + cells, the node planes shared with the neighbours included, x
  //               fastest; FdtdEngine::field()'s compact layout restricted to the piece, so a
  //               piece can average E to its own cell centres: field_sampling.h cell_centred
  //               with the piece's YeeGrid);
  //   e_squared, local_sar, sar_1g / sar_10g .sar / .status / .side_m: the piece's cells
  //               (`piece_cells`, global cell indices, x fastest).
  // peak_local_voxel and AveragedSar::peak_voxel are global cell indices.
  // result.timings: this rank's stage times (plan, engine, extensions, stepping, local_sar = the
  // whole SAR step including the 1 g / 10 g averaging, far_field, total); the other fields 0.
  HarmonicResult result;
  SampleBox piece_samples, piece_cells;
  YeeGrid piece_grid;  // the piece's grid (piece_cells, world origin of its first cell)
  Decomposition decomposition;
};

// Collective over `comm`. `setup` may carry no per-cell material arrays when
// `distributed.fill_materials` fills each piece (distributed_fdtd.h). `options.density`: empty
// (no SAR), the whole grid's cells on every rank, or each rank its piece's cells (the size tells
// which). The engine is options.backend (device: distributed.device_index / devices_per_node);
// options.progress runs on every rank and aborts the run when it returns false on any rank.
// Errors: vem::Error on every rank (the lowest failing rank's message).
DistributedHarmonicResult run_fdtd_harmonic_distributed(MPI_Comm comm, const FdtdSetup& setup,
                                                        const HarmonicOptions& options,
                                                        const DistributedOptions& distributed = {});

}  // namespace vem
