// The 2D FDTD operator: everything about a 2D problem that does not change while stepping (the
// counterpart of fdtd_operator.h): grid, time step, update ranges, material coefficients, CPML
// profiles, sources and probes resolved to layout offsets. Built once from an Fdtd2dSetup (which
// it validates) and shared by the 2D engines (CPU and CUDA), which own the fields.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vem/fdtd/fdtd_operator.h"  // CpmlProfile, CpmlSlab, ResolvedSource, ResolvedProbe
#include "vem/fdtd2d/fdtd2d_setup.h"

namespace vem {

// Layout of every 2D field, coefficient and index array (CPU and CUDA): sample (i,j) at
// origin + i + j * pitch; x fastest, pitch a multiple of 32 floats with sample i = 0 of each row at
// a 32-byte boundary (kXOffset), one ghost row/column on each side (i, j = -1 and = N) for the
// PMC and periodic faces. Index N is a real sample where the component has N+1 samples.
struct FieldLayout2D {
  static constexpr int kXOffset = 8;
  int nx = 0, ny = 0;
  std::int64_t pitch = 0, origin = 0, size = 0;
  static FieldLayout2D for_grid(int nx, int ny) {
    FieldLayout2D l;
    l.nx = nx; l.ny = ny;
    l.pitch = ((kXOffset + nx + 1 + 31) / 32) * 32;
    l.origin = kXOffset + l.pitch;
    l.size = l.pitch * (ny + 2);
    return l;
  }
  std::int64_t at(int i, int j) const { return origin + i + j * pitch; }
};

class Fdtd2dOperator {
 public:
  explicit Fdtd2dOperator(const Fdtd2dSetup& setup);  // validates; throws vem::Error

  const Fdtd2dSetup& setup() const { return setup_; }
  const YeeGrid2D& grid() const { return setup_.grid; }
  Polarization2D polarization() const { return setup_.polarization; }
  // The polarization's components, slot 0..2 (polarization_components()).
  std::array<Component, 3> components() const { return polarization_components(setup_.polarization); }
  const FieldLayout2D& layout() const { return layout_; }
  double dt() const { return dt_; }
  MaterialMode material_mode() const { return setup_.material_mode; }

  // Inclusive update range of component slot s along axis a (0 = x, 1 = y): boundaries decide
  // (PEC faces keep tangential E at 0 by not updating it; periodic faces update plane 0 and copy).
  int range_lo(int slot, int axis) const { return lo_[slot][axis]; }
  int range_hi(int slot, int axis) const { return hi_[slot][axis]; }

  // Indexed mode: 6 floats per material: for slot s = 0..2, (a, b) = (ca, cb) or (da, db).
  const std::vector<float>& coefficient_table() const { return table_; }
  // Indexed mode: material index per sample of the layout (ghosts clamped).
  const std::vector<std::uint16_t>& index_array() const { return index_; }
  // Coefficient-array mode: 6 arrays in the layout, [2s] = a, [2s+1] = b.
  const std::vector<std::vector<float>>& coefficient_arrays() const { return coef_arrays_; }
  std::array<float, 2> coefficients_at(int slot, int i, int j) const;
  double relative_constitutive_at(int slot, int i, int j) const;  // eps_r (E) or mu_r (H)

  // CPML: slabs with face 0..3 and axis 0..1 (psi boxes: extent along the axis as in 3D,
  // N+1 samples across); profiles per axis (x, y).
  const std::vector<CpmlSlab>& cpml_slabs() const { return slabs_; }
  const CpmlProfile& cpml_profile(int axis) const { return profile_[axis]; }

  // Sources and probes; offsets index the layout, ResolvedSource::offset[s] / active[s] are per
  // component slot s (not per x, y, z).
  const std::vector<ResolvedSource>& sources() const { return sources_; }
  const std::vector<ResolvedProbe>& probes() const { return probes_; }

  // Bytes an engine needs for fields, coefficients or index, CPML (device memory for CUDA).
  std::int64_t device_bytes() const;

 private:
  Fdtd2dSetup setup_;
  FieldLayout2D layout_;
  double dt_ = 0;
  int lo_[3][2] = {}, hi_[3][2] = {};
  std::vector<float> table_;
  std::vector<std::uint16_t> index_;
  std::vector<std::vector<float>> coef_arrays_;
  std::vector<CpmlSlab> slabs_;
  std::array<CpmlProfile, 2> profile_;
  std::vector<ResolvedSource> sources_;
  std::vector<ResolvedProbe> probes_;
};

}  // namespace vem
