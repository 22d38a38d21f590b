// The 2D FDTD operator (fdtd2d_operator.h): time step, update ranges, material coefficients,
// CPML profiles, sources and probes, the 2D restriction of fdtd_operator.cpp.
//
// Materials of the components (Material's per-axis values, index 0..2 = x, y, z):
//   Ez: eps_r[2], sigma_e[2]   Ex: eps_r[0], sigma_e[0]   Ey: eps_r[1], sigma_e[1]
//   Hx: mu_r[0],  sigma_m[0]   Hy: mu_r[1],  sigma_m[1]   Hz: mu_r[2],  sigma_m[2]
// Update coefficients: the semi-implicit lossy-medium form (Taflove & Hagness, 3rd ed., eq. 3.31;
// Demir & Elsherbeni 2010) of material.h. Indexed mode: every sample stored at (i, j) takes the
// material of cell (i, j) (clamped to the grid), as in 3D. Coefficient-array mode with
// average_at_edges: Ez at node (i, j) averages eps and sigma_e over the 4 cells around the node;
// Ex (Ey) over the 2 cells sharing its edge (i, j-1), (i, j) ((i-1, j), (i, j)); Hx (Hy) takes the
// harmonic mean of mu over the 2 cells sharing its face ((i-1, j), (i, j) / (i, j-1), (i, j)) and
// the mean sigma_m; Hz lies inside cell (i, j).
#include "vem/fdtd2d/fdtd2d_operator.h"

#include <algorithm>
#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

bool e_terminating(BoundaryType t) { return t == BoundaryType::pec || t == BoundaryType::cpml; }
int clampi(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

}  // namespace

Fdtd2dOperator::Fdtd2dOperator(const Fdtd2dSetup& setup) : setup_(setup) {
  setup_.validate();
  const YeeGrid2D& g = setup_.grid;
  layout_ = FieldLayout2D::for_grid(g.nx, g.ny);
  dt_ = setup_.dt > 0 ? setup_.dt : setup_.courant_factor * g.courant_limit();
  const auto comps = components();
  const auto& bc = setup_.boundaries;
  const int n[2] = {g.nx, g.ny};

  // Ranges (the 3D rules of fdtd_operator.cpp in the z = const plane).
  for (int s = 0; s < 3; ++s) {
    const Component c = comps[s];
    const int own = axis_of(c);
    for (int a = 0; a < 2; ++a) {
      if (is_electric(c)) {
        if (a == own) {
          lo_[s][a] = 0;
          hi_[s][a] = n[a] - 1;
        } else {
          lo_[s][a] = e_terminating(bc.face[2 * a]) ? 1 : 0;
          const BoundaryType h = bc.face[2 * a + 1];
          hi_[s][a] = (e_terminating(h) || h == BoundaryType::periodic) ? n[a] - 1 : n[a];
        }
      } else {
        lo_[s][a] = 0;
        hi_[s][a] = a == own ? n[a] : n[a] - 1;
      }
    }
  }

  // Materials.
  auto cell_of = [&](int i, int j) {
    return std::int64_t(clampi(i, 0, g.nx - 1)) + std::int64_t(g.nx) * clampi(j, 0, g.ny - 1);
  };
  const FieldLayout2D& L = layout_;
  if (setup_.material_mode == MaterialMode::indexed) {
    const auto& mats = setup_.materials;
    table_.resize(mats.size() * 6);
    for (std::size_t m = 0; m < mats.size(); ++m)
      for (int s = 0; s < 3; ++s) {
        const int a = axis_of(comps[s]);
        const UpdateCoefficients u = is_electric(comps[s])
                                         ? electric_coefficients(mats[m].eps_r[a], mats[m].sigma_e[a], dt_)
                                         : magnetic_coefficients(mats[m].mu_r[a], mats[m].sigma_m[a], dt_);
        table_[m * 6 + 2 * s] = float(u.ca);
        table_[m * 6 + 2 * s + 1] = float(u.cb);
      }
    index_.assign(L.size, 0);
    const auto& idx = setup_.material_index;
    if (!idx.empty())
      for (int j = -1; j <= g.ny; ++j)
        for (int i = -FieldLayout2D::kXOffset; i < int(L.pitch) - FieldLayout2D::kXOffset; ++i)
          index_[L.at(i, j)] = idx[cell_of(i, j)];
  } else {
    const PerCellMedium& med = setup_.medium;
    auto val = [&](const std::vector<std::vector<float>>& arrs, int axis, std::int64_t cell, double dflt) {
      return arrs.empty() ? dflt : double(arrs[arrs.size() == 3 ? axis : 0][cell]);
    };
    coef_arrays_.assign(6, std::vector<float>(L.size, 0.0f));
    const bool avg = med.average_at_edges;
#pragma omp parallel for schedule(static)
    for (int j = -1; j <= g.ny; ++j)
      for (int i = -1; i <= g.nx; ++i) {
        const std::int64_t o = L.at(i, j);
        for (int s = 0; s < 3; ++s) {
          const Component c = comps[s];
          const int a = axis_of(c);
          // Cells sharing the sample: shifts by -1 along x and/or y.
          bool sx = false, sy = false;
          if (avg) {
            if (is_electric(c)) { sx = a != 0; sy = a != 1; }   // Ez: both; Ex: y; Ey: x
            else { sx = a == 0; sy = a == 1; }                 // Hx: x; Hy: y; Hz: none
          }
          double q1 = 0, q2 = 0;
          int cnt = 0;
          for (int dj = 0; dj <= (sy ? 1 : 0); ++dj)
            for (int di = 0; di <= (sx ? 1 : 0); ++di) {
              const std::int64_t cell = cell_of(i - di, j - dj);
              if (is_electric(c)) {
                q1 += val(med.eps_r, a, cell, 1.0);
                q2 += val(med.sigma_e, a, cell, 0.0);
              } else {
                q1 += 1.0 / val(med.mu_r, a, cell, 1.0);
                q2 += val(med.sigma_m, a, cell, 0.0);
              }
              ++cnt;
            }
          const UpdateCoefficients u = is_electric(c) ? electric_coefficients(q1 / cnt, q2 / cnt, dt_)
                                                      : magnetic_coefficients(cnt / q1, q2 / cnt, dt_);
          coef_arrays_[2 * s][o] = float(u.ca);
          coef_arrays_[2 * s + 1][o] = float(u.cb);
        }
      }
  }

  // CPML (boundary.h; Roden & Gedney, MOTL 27(5) 2000): the 3D operator's profiles per axis.
  const double d[2] = {g.dx, g.dy};
  for (int a = 0; a < 2; ++a)
    profile_[a] = build_cpml_axis(a, n[a], d[a], dt_, {bc.face[2 * a], bc.face[2 * a + 1]},
                                  {bc.cpml[2 * a], bc.cpml[2 * a + 1]}, slabs_);

  // Sources: line currents per unit length, J = I / (dx dy) (fdtd2d_setup.h).
  const double area = g.dx * g.dy;
  for (std::size_t q = 0; q < setup_.sources.size(); ++q) {
    const PointSource& ps = setup_.sources[q];
    const double norm = std::sqrt(ps.direction[0] * ps.direction[0] + ps.direction[1] * ps.direction[1] +
                                  ps.direction[2] * ps.direction[2]);
    ResolvedSource r;
    r.kind = ps.kind;
    r.waveform = ps.waveform;
    r.electric = ps.kind == PointSource::Kind::electric_current || ps.kind == PointSource::Kind::hard_e;
    bool any = false;
    for (int s = 0; s < 3; ++s) {
      const Component c = comps[s];
      const double w = is_electric(c) == r.electric ? ps.direction[axis_of(c)] / norm : 0.0;
      const bool inside = ps.i >= lo_[s][0] && ps.i <= hi_[s][0] && ps.j >= lo_[s][1] && ps.j <= hi_[s][1];
      r.offset[s] = L.at(ps.i, ps.j);
      r.active[s] = w != 0.0 && inside;
      r.scale[s] = 0.0f;
      if (!r.active[s]) continue;
      any = true;
      const bool soft = ps.kind == PointSource::Kind::electric_current || ps.kind == PointSource::Kind::magnetic_current;
      r.scale[s] = soft ? float(-coefficients_at(s, ps.i, ps.j)[1] * w * ps.amplitude / area)
                        : float(w * ps.amplitude);
    }
    if (!any)
      fail("Fdtd2dSetup::sources[", q, "] at (i, j) = (", ps.i, ", ", ps.j,
           "): drives no updated sample (its components lie on PEC/CPML-terminated faces or outside the grid)");
    sources_.push_back(r);
  }
  for (const Probe& p : setup_.probes) probes_.push_back({p, L.at(p.i, p.j)});
}

std::array<float, 2> Fdtd2dOperator::coefficients_at(int slot, int i, int j) const {
  const std::int64_t o = layout_.at(i, j);
  if (setup_.material_mode == MaterialMode::indexed) {
    const std::size_t m = index_[o];
    return {table_[m * 6 + 2 * slot], table_[m * 6 + 2 * slot + 1]};
  }
  return {coef_arrays_[2 * slot][o], coef_arrays_[2 * slot + 1][o]};
}

double Fdtd2dOperator::relative_constitutive_at(int slot, int i, int j) const {
  // cb = dt / (base eps_r (1 + loss)) and ca = (1 - loss) / (1 + loss)  =>  1 + loss = 2 / (1 + ca).
  const auto ab = coefficients_at(slot, i, j);
  const double base = is_electric(components()[slot]) ? kEps0 : kMu0;
  return dt_ / (base * double(ab[1]) * (2.0 / (1.0 + double(ab[0]))));
}

std::int64_t Fdtd2dOperator::device_bytes() const {
  const YeeGrid2D& g = setup_.grid;
  std::int64_t bytes = 3 * layout_.size * 4;
  if (setup_.material_mode == MaterialMode::indexed)
    bytes += layout_.size * 2 + std::int64_t(table_.size()) * 4;
  else
    bytes += 6 * layout_.size * 4;
  const int n[2] = {g.nx, g.ny};
  for (const auto& s : slabs_) {
    const std::int64_t across = n[1 - s.axis] + 1;
    bytes += 4 * across * (std::max(0, s.e_end - s.e_begin + 1) + (s.h_end - s.h_begin + 1));
    bytes += 6 * 4 * std::int64_t(n[s.axis] + 1);  // profiles
  }
  return bytes;
}

}  // namespace vem
