// Models shared by the benchmark programs: the head phantom's SAR volume (bench_fdtd extensions,
// bench_sar), the CPML slabs' share of a grid's samples and the ideal bytes of a Yee step
// (bench_fdtd, bench_fdtd_small, bench_fdtd_onepass).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "vem/core/yee_grid.h"
#include "vem/fdtd/extensions/sar.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/models/head_phantom.h"
#include "vem/models/tissue_properties.h"

namespace vem_bench {

using namespace vem;

// The head phantom voxelized to fill an n^3 cube of 0.26 m (0.51 mm voxels at 512^3), tissues at
// 900 MHz, and an |E|^2 of a wave entering from -x; *tissue_fraction: the share of tissue voxels.
inline SarInput sar_volume(int n, double* tissue_fraction) {
  const double side = 0.26, d = side / n;
  SarInput in;
  in.grid = {n, n, n, d, d, d};
  in.grid.origin = {-0.13, -0.124, -0.175};
  const std::size_t cells = std::size_t(in.grid.cell_count());
  std::vector<std::uint8_t> label(cells);
  HeadPhantomGeometry geo;
  const int ext[6] = {0, n - 1, 0, n - 1, 0, n - 1};
  head_phantom_fill(geo, in.grid.origin, {d, d, d}, ext, label.data());
  const TissueTable table = head_phantom_tissue_table();
  std::vector<float> sig(256, 0.0f), rho(256, 0.0f);
  for (const auto& e : table.entries()) {
    sig[e.label] = float(e.at(900e6).sigma);
    rho[e.label] = (e.label == kAir || e.label == kSinusAir) ? 0.0f : float(e.density);
  }
  in.sigma.resize(cells);
  in.density.resize(cells);
  in.e_squared.resize(cells);
  std::size_t tissue = 0;
#pragma omp parallel for reduction(+ : tissue) schedule(static)
  for (std::int64_t q = 0; q < std::int64_t(cells); ++q) {
    const int i = int(q % n);
    const int j = int((q / n) % n), k = int(q / (std::int64_t(n) * n));
    in.sigma[q] = sig[label[q]];
    in.density[q] = rho[label[q]];
    // A wave entering from -x: 2 cm power decay depth, a standing-wave ripple along x, smooth in y, z.
    const double x = (i + 0.5) * d, y = (j + 0.5) * d, z = (k + 0.5) * d;
    in.e_squared[q] = float(400.0 * std::exp(-x / 0.02) * (1.2 + std::sin(2 * kPi * x / 0.045)) *
                            (1.0 + 0.3 * std::cos(2 * kPi * y / side)) * (1.0 + 0.2 * std::sin(2 * kPi * z / side)));
    tissue += rho[label[q]] > 0 ? 1 : 0;
  }
  *tissue_fraction = double(tissue) / double(cells);
  return in;
}

// Samples of the CPML slabs per cell of the grid (the slab kernels' extra traffic).
inline double slab_fraction(const FdtdOperator& op) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  double samples = 0;
  for (const auto& s : op.cpml_slabs()) {
    const double across = double(n[(s.axis + 1) % 3] + 1) * (n[(s.axis + 2) % 3] + 1);
    samples += across * 0.5 * ((s.e_end - s.e_begin + 1) + (s.h_end - s.h_begin + 1));
  }
  return samples / double(g.cell_count());
}

// Samples per cell whose E the one-pass step with the CPML slab kernels computes again: each
// slab's H psi box grown by one sample along its axis (edge overlaps counted twice, as computed).
inline double recompute_fraction(const FdtdOperator& op) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  double samples = 0;
  for (const auto& s : op.cpml_slabs()) {
    const int hd = s.h_end - s.h_begin + 1;
    if (hd > 0)
      samples += double(n[(s.axis + 1) % 3] + 1) * (n[(s.axis + 2) % 3] + 1) *
                 std::min(hd + 1, n[s.axis] + 1 - s.h_begin);
  }
  return samples / double(g.cell_count());
}

// Ideal bytes per cell-step of the Yee step (every array once per kernel, neighbours from cache):
//  - coefficients a sample: the 16-bit index (2), or 4 per coefficient array the engine stores
//    (arrays_stored; 0: all 12, as the CPU engine reads them);
//  - two passes: E and H each read and written once (48), each kernel reads the other field (24),
//    the index twice (4) or the arrays once; CPML slab kernels
//    2 x 42 (indexed) / 2 x 48 (arrays) per slab sample;
//  - one pass (fused_step.h): E and H read 24, written 24, coefficients once; with the CPML
//    folded in, psi read and written 32 per slab sample; with the slab kernels, their bytes plus
//    E computed again: 38 (indexed) / 60 (arrays) per recomputed sample.
//  - a 2-byte field storage (FdtdSetup::field_storage) halves the field bytes of the bulk (72 / 48);
//    the CPML and recompute terms are counted as for float32 (psi stays float32).
inline double field_bytes_factor(const FdtdOperator& op) {
  return field_storage_bytes(op.setup().field_storage) / 4.0;
}
inline double ideal_bytes_per_cell(const FdtdOperator& op, bool one_pass, bool cpml_folded, int arrays_stored) {
  const bool indexed = op.material_mode() == MaterialMode::indexed;
  const double coef = indexed ? 2.0 : 4.0 * (arrays_stored > 0 ? arrays_stored : 12);
  const double slab = slab_fraction(op);
  const double slab_kernels = 2.0 * (indexed ? 42.0 : 48.0) * slab;
  const double f = field_bytes_factor(op);
  if (!one_pass) return 72.0 * f + (indexed ? 2 * coef : coef) + slab_kernels;
  if (cpml_folded) return 48.0 * f + coef + 32.0 * slab;
  return 48.0 * f + coef + slab_kernels + (indexed ? 38.0 : 60.0) * recompute_fraction(op);
}

// The persistent step (fused_step.h launch_persistent): two phases in place as the two passes
// (72 + the coefficients twice / the arrays once) with the CPML folded into them (psi read and
// written, 32 per slab sample).
inline double ideal_bytes_per_cell_persistent(const FdtdOperator& op, int arrays_stored) {
  const bool indexed = op.material_mode() == MaterialMode::indexed;
  const double coef = indexed ? 2.0 : 4.0 * (arrays_stored > 0 ? arrays_stored : 12);
  return 72.0 * field_bytes_factor(op) + (indexed ? 2 * coef : coef) + 32.0 * slab_fraction(op);
}

// The ideal bytes of the path an engine's steps took: persistent, one pass (cpml_folded: the
// CPML folded into it) or two passes; the coefficient arrays the engine stores.
inline double ideal_bytes_for(const FdtdEngine& eng, const FdtdOperator& op, bool cpml_folded) {
  const int stored = eng.coefficient_arrays_stored();
  return eng.persistent_steps() > 0 ? ideal_bytes_per_cell_persistent(op, stored)
                                    : ideal_bytes_per_cell(op, eng.one_pass_steps() > 0, cpml_folded, stored);
}

}  // namespace vem_bench
