// Pieces shared by the CPU and CUDA engines: conversion between the padded layout
// (field_layout.h) and the compact (nx+1)(ny+1)(nz+1) arrays of FdtdEngine::field(), and the
// dense psi boxes of the CPML slabs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_operator.h"

namespace vem {

// A point source's waveform at the time of step `step`'s update (dt the time step): J at
// (n+1/2) dt, hard E at (n+1) dt, M at n dt, hard H at (n+1/2) dt. Both engines take it from here.
double point_source_waveform(const ResolvedSource& s, int step, double dt);

// Whether component c has a sample at index idx along axis (yee_grid.h).
bool sample_exists(Component c, int axis, int idx, const int n[3]);
std::vector<float> compact_from_layout(const FdtdOperator& op, Component c, const float* layout_array);
void layout_from_compact(const FdtdOperator& op, Component c, const std::vector<float>& compact,
                         float* layout_array);

// The coefficient table and 16-bit index an engine reads: an indexed model's own, or a
// coefficient-array model's packed tuples (FdtdOperator::coefficient_index); empty (false) when
// the engine reads the 12 arrays. `choice` is EngineTuning::coefficients; automatic packs when
// `table_by_default` and the model has at most 65536 tuples; a forced table that the model
// cannot give throws.
struct CoefficientTable {
  const float* table = nullptr;
  const std::uint16_t* index = nullptr;
  std::size_t entries = 0;
  explicit operator bool() const { return table != nullptr; }
};
CoefficientTable coefficient_table_for(const FdtdOperator& op, EngineTuning::Coefficients choice,
                                       bool table_by_default);

// The wide stencil of the high-order schemes (vem/fdtd/schemes/fdtd_scheme.h), resolved once for
// both engines. Every stencil point is resolved through per-component, per-axis tables over the
// extended index range -kReach..n+kReach: offset part (index times the layout stride of that axis)
// and sign (periodic wrap, PEC/PMC images; PEC also behind a CPML), so no ghost beyond the
// layout's one is read. Terms: the stencil's (hi, lo) sample pairs along the derivative axis with
// their transverse offsets (tb along axis a+1, td along a+2) and weights; [0] the backward
// difference (E update from H), [1] the forward one (H update from E). Unsupported faces (subdomain)
// and grids too thin for the images are refused with the scheme's name.
struct HighOrderStencil {
  static constexpr int kReach = 3;
  static constexpr int kMaxTerms = 18;  // 2 offsets x (1 centre + 4 axis + 4 diagonal neighbours)
  struct Resolve { std::vector<std::int64_t> off; std::vector<float> sign; };
  struct Term { int hi, lo, tb, td; float w; };
  Resolve res[6][3];
  std::vector<Term> terms[2];
};
HighOrderStencil build_high_order_stencil(const FdtdOperator& op);

// Dense psi box of a CPML slab: along the slab axis the E- or H-type node range of the slab,
// N+1 samples across; x fastest.
struct PsiBox {
  int o[3], d[3];
  PsiBox(const CpmlSlab& s, bool electric, const int n[3]) {
    for (int a = 0; a < 3; ++a) { o[a] = 0; d[a] = n[a] + 1; }
    o[s.axis] = electric ? s.e_begin : s.h_begin;
    d[s.axis] = std::max(0, electric ? s.e_end - s.e_begin + 1 : s.h_end - s.h_begin + 1);
  }
  std::size_t size() const { return std::size_t(d[0]) * d[1] * d[2]; }
  std::size_t at(int i, int j, int k) const {
    return (i - o[0]) + std::size_t(d[0]) * ((j - o[1]) + std::size_t(d[1]) * (k - o[2]));
  }
};

}  // namespace vem
