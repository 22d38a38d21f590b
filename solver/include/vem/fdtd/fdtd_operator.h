// The FDTD operator: everything about a problem that does not change while stepping - grid,
// time step, per-component update ranges, material update coefficients, CPML profiles, sources
// and probes resolved to memory offsets. Built once from an FdtdSetup (which it validates) and
// shared by the engines; the engines own the fields and do the stepping.
//
// Update equations (Demir & Elsherbeni 2010, eq. 1 and siblings, with the spatial differences
// divided by the cell size inside the kernels):
//   E_c <- ca_c E_c + cb_c [ d_{c+1} H_{c+2} - d_{c+2} H_{c+1} - J_c ]
//   H_c <- da_c H_c - db_c [ d_{c+1} E_{c+2} - d_{c+2} E_{c+1} + M_c ]      (c+1, c+2 cyclic)
// CPML (Roden & Gedney) adds, inside its slabs only, for a derivative d_a of a field F:
//   psi <- b_a psi + c_a d_a F,   and replaces d_a F by d_a F / kappa_a + psi,
// applied as a correction after the bulk update: U +- coef [ (1/kappa_a - 1) d_a F + psi ].
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vem/fdtd/fdtd_setup.h"
#include "vem/core/field_layout.h"

namespace vem {

// One CPML slab: the part of the grid within `thickness` cells of one face.
struct CpmlSlab {
  int face = 0;        // 0..5, see boundary.h
  int axis = 0;        // face / 2
  // Node-index range along `axis` covered by the slab: E-type (integer) positions
  // [e_begin, e_end] and H-type (half-integer) positions [h_begin, h_end], inclusive.
  int e_begin = 0, e_end = -1, h_begin = 0, h_end = -1;
  // The slab's psi arrays are dense boxes: extent along axis = e_end - e_begin + 1 (E) or
  // h_end - h_begin + 1 (H); along the other axes N+1 samples.
};

// CPML profiles along one axis, indexed by node position: *_e at integer positions 0..N,
// *_h at half-integer positions (index p means p + 1/2), 0..N-1 (entry N unused). Outside the
// slabs b = 0, c = 0, kinv = 1 (no effect).
struct CpmlProfile {
  std::vector<float> b_e, c_e, kinv_e;
  std::vector<float> b_h, c_h, kinv_h;
  // false: psi <- b psi + c dF, then the derivative is dF / kappa + psi (Roden & Gedney).
  // true:  the derivative is dF / kappa + psi with the psi of the previous step, then
  //        psi <- b psi + c dF (the Crank-Nicolson CPML of CpmlParameters::match_frequency).
  bool lagged = false;
};

// The CPML profile of one axis and its slabs (appended to `slabs`), with the grading of boundary.h:
// `face` and `cpml` of the axis's low and high faces (2 axis, 2 axis + 1), n cells of size d (m),
// time step dt (s). Shared by the 3D and 2D operators. Throws vem::Error when both faces are
// CPML with different match_frequency.
CpmlProfile build_cpml_axis(int axis, int n, double d, double dt, const std::array<BoundaryType, 2>& face,
                            const std::array<CpmlParameters, 2>& cpml, std::vector<CpmlSlab>& slabs);

struct ResolvedSource {
  PointSource::Kind kind;
  Waveform waveform;
  bool electric;                  // acts on E (electric_current, hard_e) or H
  std::array<std::int64_t, 3> offset;  // layout offset of the 3 components' samples
  std::array<float, 3> scale;     // multiplies waveform(t): field increment (soft) or value (hard)
  std::array<bool, 3> active;     // component weight != 0 and sample inside its update range
};

struct ResolvedProbe {
  Probe probe;
  std::int64_t offset;
};

class FdtdOperator {
 public:
  explicit FdtdOperator(const FdtdSetup& setup);  // validates; throws vem::Error

  const FdtdSetup& setup() const { return setup_; }
  const YeeGrid& grid() const { return setup_.grid; }
  const FieldLayout& layout() const { return layout_; }
  double dt() const { return dt_; }
  // The update scheme, its weights and Courant number (FdtdSetup::scheme; yee by default).
  const SchemeDesign& scheme() const { return scheme_; }
  MaterialMode material_mode() const { return setup_.material_mode; }

  // Inclusive update range of component c along axis a (see yee_grid.h and boundary.h).
  int range_lo(Component c, int axis) const { return lo_[int(c)][axis]; }
  int range_hi(Component c, int axis) const { return hi_[int(c)][axis]; }

  // Indexed mode: 12 floats per material: for c = Ex..Hz, (a, b) = (ca, cb) or (da, db).
  const std::vector<float>& coefficient_table() const { return table_; }
  std::size_t material_count() const { return setup_.materials.size(); }
  // Indexed mode: material index in the field layout (ghosts and upper planes clamped).
  const std::vector<std::uint16_t>& index_array() const { return index_; }
  // Coefficient-array mode: 12 arrays in the field layout, [2*c] = a, [2*c+1] = b.
  const std::vector<std::vector<float>>& coefficient_arrays() const { return coef_arrays_; }

  // Coefficient-array mode: the same coefficients stored as indexed mode stores them, a table of
  // the distinct 12-tuples (same order as coefficient_table()) and a 16-bit index per sample of
  // the layout, bit for bit the values of coefficient_arrays(). A segmented model with averaging
  // at material edges has a few dozen to a few thousand distinct tuples, and an engine reading
  // 2 bytes per sample instead of 48 moves about 30 % fewer bytes per step (EngineTuning::
  // coefficients). nullptr in indexed mode and when there are more than 65536 distinct tuples.
  // Built on the first call (thread-safe, O(samples)) and kept.
  struct CoefficientIndex {
    std::vector<float> table;
    std::vector<std::uint16_t> index;
    std::size_t entries() const { return table.size() / 12; }
  };
  const CoefficientIndex* coefficient_index() const;

  // (a, b) coefficient of component c at sample (i,j,k), whatever the mode.
  std::array<float, 2> coefficients_at(Component c, int i, int j, int k) const;
  // Relative permittivity (E) or permeability (H) seen by a sample, for energy accounting.
  double relative_constitutive_at(Component c, int i, int j, int k) const;

  const std::vector<CpmlSlab>& cpml_slabs() const { return slabs_; }
  const CpmlProfile& cpml_profile(int axis) const { return profile_[axis]; }

  const std::vector<ResolvedSource>& sources() const { return sources_; }
  const std::vector<ResolvedProbe>& probes() const { return probes_; }

  // Bytes of device memory an engine needs for fields, coefficients, CPML and index arrays.
  std::int64_t device_bytes() const;

 private:
  void build_scheme_time_step();
  void build_ranges();
  void build_materials();
  void build_cpml();
  void build_sources_and_probes();

  FdtdSetup setup_;
  FieldLayout layout_;
  double dt_ = 0;
  SchemeDesign scheme_;
  int lo_[6][3], hi_[6][3];
  std::vector<float> table_;
  std::vector<std::uint16_t> index_;
  std::vector<std::vector<float>> coef_arrays_;
  struct LazyIndex {
    std::once_flag once;
    std::unique_ptr<CoefficientIndex> value;
  };
  std::shared_ptr<LazyIndex> lazy_index_ = std::make_shared<LazyIndex>();
  std::vector<CpmlSlab> slabs_;
  std::array<CpmlProfile, 3> profile_;
  std::vector<ResolvedSource> sources_;
  std::vector<ResolvedProbe> probes_;
};

}  // namespace vem
