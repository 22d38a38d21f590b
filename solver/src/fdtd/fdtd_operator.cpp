#include "vem/fdtd/fdtd_operator.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <unordered_map>

#include "vem/core/error.h"

namespace vem {

const char* source_kind_name(PointSource::Kind k) {
  switch (k) {
    case PointSource::Kind::electric_current: return "electric_current";
    case PointSource::Kind::magnetic_current: return "magnetic_current";
    case PointSource::Kind::hard_e: return "hard_e";
    case PointSource::Kind::hard_h: return "hard_h";
  }
  return "?";
}

PointSource::Kind source_kind_from_name(const std::string& name) {
  for (auto k : {PointSource::Kind::electric_current, PointSource::Kind::magnetic_current,
                 PointSource::Kind::hard_e, PointSource::Kind::hard_h})
    if (name == source_kind_name(k)) return k;
  fail("unknown source kind '", name,
       "' (expected electric_current, magnetic_current, hard_e or hard_h)");
}

namespace {

bool is_e_terminating(BoundaryType t) { return t == BoundaryType::pec || t == BoundaryType::cpml; }

int clampi(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

}  // namespace

// High-order schemes (vem/fdtd/schemes/fdtd_scheme.h): cubic cells, dt from the scheme's own
// Courant limit, the combinations not yet supported refused with the scheme's name.
void FdtdOperator::build_scheme_time_step() {
  const YeeGrid& g = setup_.grid;
  const char* name = scheme_name(setup_.scheme);
  const double h = g.dx;
  if (std::fabs(g.dy - h) > 1e-9 * h || std::fabs(g.dz - h) > 1e-9 * h)
    fail("scheme ", name, " needs cubic cells: dx = ", g.dx, ", dy = ", g.dy, ", dz = ", g.dz,
         " m (the weights are derived for dx = dy = dz)");
  const double nd = setup_.scheme_design_cells_per_wavelength;
  if (!std::isfinite(nd) || nd < 4)
    fail("scheme ", name, ": scheme_design_cells_per_wavelength = ", nd, " must be >= 4");
  for (int f = 0; f < 6; ++f)
    if (setup_.boundaries.face[f] == BoundaryType::subdomain)
      fail("scheme ", name, ": subdomain face ", face_name(f),
           " is not supported yet (the wide stencil needs a 2-layer halo); use scheme yee");
  if (!std::isfinite(setup_.dt) || setup_.dt < 0)
    fail("time step dt = ", setup_.dt, " s must be finite and >= 0 (0 selects the Courant step)");
  if (setup_.dt > 0) {
    scheme_ = scheme_design_for_courant(setup_.scheme, kC0 * setup_.dt / h, nd);
    if (scheme_.courant > scheme_.courant_limit)
      fail("time step dt = ", setup_.dt, " s exceeds the Courant limit ",
           scheme_.courant_limit * h / kC0, " s of scheme ", name, " (S = c dt / h = ",
           scheme_.courant, " > S_max = ", scheme_.courant_limit, ") for h = ", h, " m");
    dt_ = setup_.dt;
  } else {
    const double cf = setup_.courant_factor;
    if (!std::isfinite(cf) || cf <= 0 || cf > 1)
      fail("Courant factor ", cf, " must be in (0, 1]");
    scheme_ = scheme_design_for_factor(setup_.scheme, cf, nd);
    dt_ = scheme_.courant * h / kC0;
  }
}

FdtdOperator::FdtdOperator(const FdtdSetup& setup) : setup_(setup) {
  const YeeGrid& g = setup_.grid;
  g.validate();
  layout_ = FieldLayout::for_grid(g.nx, g.ny, g.nz);

  // Field storage (vem/core/field_storage.h).
  if (setup_.field_storage != FieldStorage::float32) {
    const char* fs = field_storage_name(setup_.field_storage);
    if (setup_.scheme != Scheme::yee)
      fail("field_storage ", fs, " is available with scheme yee only (scheme ", scheme_name(setup_.scheme),
           " given); use field_storage float32");
    if (!setup_.medium.inverse_eps_rows.empty())
      fail("field_storage ", fs, " is not available with an off-diagonal permittivity (",
           setup_.medium.inverse_eps_rows.size(), " inverse_eps_rows, full-tensor subpixel smoothing); use field_storage float32");
  }

  // Time step.
  if (setup_.scheme != Scheme::yee) {
    build_scheme_time_step();
  } else {
  const double limit = g.courant_limit_dt();
  if (!std::isfinite(setup_.dt) || setup_.dt < 0)
    fail("time step dt = ", setup_.dt, " s must be finite and >= 0 (0 selects the Courant step)");
  if (setup_.dt > 0) {
    if (setup_.dt > limit)
      fail("time step dt = ", setup_.dt, " s exceeds the Courant limit ", limit,
           " s for dx = ", g.dx, ", dy = ", g.dy, ", dz = ", g.dz, " m");
    dt_ = setup_.dt;
  } else {
    const double cf = setup_.courant_factor;
    if (!std::isfinite(cf) || cf <= 0 || cf > 1)
      fail("Courant factor ", cf, " must be in (0, 1]");
    dt_ = cf * limit;
  }
  scheme_.courant = kC0 * dt_ / g.dx;  // informative (S = c dt / dx); the stencil is Yee's
  scheme_.courant_limit = kC0 * limit / g.dx;
  }

  // Boundaries.
  const auto& bc = setup_.boundaries;
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int a = 0; a < 3; ++a) {
    const bool plo = bc.face[2 * a] == BoundaryType::periodic;
    const bool phi = bc.face[2 * a + 1] == BoundaryType::periodic;
    if (plo != phi)
      fail("periodic boundary on ", face_name(plo ? 2 * a : 2 * a + 1), " needs ",
           face_name(plo ? 2 * a + 1 : 2 * a), " to be periodic too");
    int t = 0;
    for (int s = 0; s < 2; ++s) {
      const int f = 2 * a + s;
      if (bc.face[f] != BoundaryType::cpml) continue;
      const CpmlParameters& p = bc.cpml[f];
      if (p.thickness < 1)
        fail("CPML on ", face_name(f), ": thickness ", p.thickness, " cells must be >= 1");
      if (!(p.grading_order >= 0) || !(p.sigma_factor >= 0) || !(p.kappa_max >= 1) ||
          !(p.alpha_max >= 0) || !(p.alpha_order >= 0) || !std::isfinite(p.sigma_factor) ||
          !std::isfinite(p.kappa_max) || !std::isfinite(p.alpha_max) || !std::isfinite(p.grading_order))
        fail("CPML on ", face_name(f), ": parameters must be finite with grading order >= 0, ",
             "sigma factor >= 0, kappa_max >= 1, alpha_max >= 0");
      if (!(p.match_frequency >= 0) || !std::isfinite(p.match_frequency))
        fail("CPML on ", face_name(f), ": match_frequency ", p.match_frequency, " Hz must be finite and >= 0");
      if (p.match_frequency > 0 && p.alpha_max != 0)
        fail("CPML on ", face_name(f), ": a steady-state fit (match_frequency ", p.match_frequency,
             " Hz) needs alpha_max = 0 (got ", p.alpha_max, " S/m)");
      t += p.thickness;
    }
    if (t >= n[a])
      fail("CPML is thicker than the domain along ", "xyz"[a], ": ", t, " PML cells for ", n[a],
           " cells (at least one non-PML cell is needed)");
  }

  build_ranges();
  build_materials();
  build_cpml();
  build_sources_and_probes();
}

void FdtdOperator::build_ranges() {
  const auto& bc = setup_.boundaries;
  const int n[3] = {setup_.grid.nx, setup_.grid.ny, setup_.grid.nz};
  for (int c = 0; c < 3; ++c) {
    for (int a = 0; a < 3; ++a) {
      // E_c: N samples along its own axis; N+1 node planes across, minus terminated faces.
      if (a == c) {
        lo_[c][a] = 0;
        hi_[c][a] = n[a] - 1;
      } else {
        lo_[c][a] = is_e_terminating(bc.face[2 * a]) ? 1 : 0;
        // The plane N is a copy on periodic faces and the neighbour's on subdomain faces.
        const BoundaryType h = bc.face[2 * a + 1];
        hi_[c][a] = (is_e_terminating(h) || h == BoundaryType::periodic || h == BoundaryType::subdomain)
                        ? n[a] - 1 : n[a];
      }
      // H_c: N+1 samples along its own axis, N across.
      lo_[3 + c][a] = 0;
      hi_[3 + c][a] = (a == c) ? n[a] : n[a] - 1;
    }
  }
}

void FdtdOperator::build_materials() {
  const YeeGrid& g = setup_.grid;
  const FieldLayout& L = layout_;
  const std::int64_t ncell = g.cell_count();
  auto cell_of = [&](int i, int j, int k) {
    return std::int64_t(clampi(i, 0, g.nx - 1)) +
           g.nx * (std::int64_t(clampi(j, 0, g.ny - 1)) + std::int64_t(g.ny) * clampi(k, 0, g.nz - 1));
  };

  if (setup_.material_mode == MaterialMode::indexed) {
    const auto& mats = setup_.materials;
    if (mats.empty()) fail("material table is empty: give at least one material");
    if (mats.size() > 65536)
      fail("material table has ", mats.size(), " entries; the 16-bit index allows 65536");
    for (std::size_t m = 0; m < mats.size(); ++m) validate_material(mats[m], m);
    const auto& idx = setup_.material_index;
    if (!idx.empty() && std::int64_t(idx.size()) != ncell)
      fail("material index array has ", idx.size(), " entries, the grid has ", ncell, " cells");
    if (!idx.empty()) {
      for (std::int64_t c = 0; c < ncell; ++c) {
        if (idx[c] >= mats.size()) {
          const int i = int(c % g.nx), j = int((c / g.nx) % g.ny), k = int(c / (std::int64_t(g.nx) * g.ny));
          fail("material index ", idx[c], " at cell (", i, ", ", j, ", ", k,
               ") is outside the material table (", mats.size(), " entries)");
        }
      }
    }
    table_.resize(mats.size() * 12);
    for (std::size_t m = 0; m < mats.size(); ++m) {
      for (int a = 0; a < 3; ++a) {
        const auto e = electric_coefficients(mats[m].eps_r[a], mats[m].sigma_e[a], dt_);
        const auto h = magnetic_coefficients(mats[m].mu_r[a], mats[m].sigma_m[a], dt_);
        table_[m * 12 + 2 * a] = float(e.ca);
        table_[m * 12 + 2 * a + 1] = float(e.cb);
        table_[m * 12 + 6 + 2 * a] = float(h.ca);
        table_[m * 12 + 6 + 2 * a + 1] = float(h.cb);
      }
    }
    index_.assign(L.size, 0);
    if (!idx.empty()) {
#pragma omp parallel for
      for (int k = -1; k <= g.nz; ++k)
        for (int j = -1; j <= g.ny; ++j)
          for (int i = -1; i <= g.nx; ++i) index_[L.at(i, j, k)] = idx[cell_of(i, j, k)];
    }
    return;
  }

  // Coefficient-array mode.
  const PerCellMedium& med = setup_.medium;
  // The medium arrays' cells: the grid's, or a box around it (a distributed piece with its
  // neighbours' cells beside the cuts; fdtd_setup.h).
  const bool box = med.has_array_box();
  const std::int64_t med_cells =
      box ? std::int64_t(med.array_n[0]) * med.array_n[1] * med.array_n[2] : ncell;
  if (box) {
    for (int a = 0; a < 3; ++a) {
      const int n_a = a == 0 ? g.nx : a == 1 ? g.ny : g.nz;
      // The averages read cells -2 .. n (sample indices -1 .. n, less one), clamped to the model.
      const int need_lo = std::max(med.clamp_lo[a], -2), need_hi = std::min(med.clamp_hi[a], n_a);
      if (med.array_n[a] <= 0 || med.clamp_lo[a] > 0 || med.clamp_hi[a] < n_a - 1 || med.array_lo[a] > need_lo ||
          med.array_lo[a] + med.array_n[a] - 1 < need_hi)
        fail("coefficient-array medium: array box along axis ", a, " (first cell ", med.array_lo[a], ", ",
             med.array_n[a], " cells, clamped to ", med.clamp_lo[a], "..", med.clamp_hi[a],
             ") does not cover the grid's ", n_a, " cells");
    }
  }
  auto medium_cell = [&](int i, int j, int k) -> std::int64_t {
    if (!box) return cell_of(i, j, k);
    const int q[3] = {clampi(i, med.clamp_lo[0], med.clamp_hi[0]) - med.array_lo[0],
                      clampi(j, med.clamp_lo[1], med.clamp_hi[1]) - med.array_lo[1],
                      clampi(k, med.clamp_lo[2], med.clamp_hi[2]) - med.array_lo[2]};
    return std::int64_t(q[0]) + std::int64_t(med.array_n[0]) * (q[1] + std::int64_t(med.array_n[1]) * q[2]);
  };
  auto check = [&](const std::vector<std::vector<float>>& arrs, const char* name, bool required,
                   bool positive) {
    if (arrs.empty()) {
      if (required) fail("coefficient-array medium: array '", name, "' is missing");
      return;
    }
    if (arrs.size() != 1 && arrs.size() != 3)
      fail("coefficient-array medium: '", name, "' needs 1 (isotropic) or 3 (x, y, z) arrays, got ",
           arrs.size());
    for (std::size_t a = 0; a < arrs.size(); ++a) {
      if (std::int64_t(arrs[a].size()) != med_cells)
        fail("coefficient-array medium: array '", name, "' has ", arrs[a].size(),
             box ? " values, its cell box has " : " values, the grid has ", med_cells, " cells");
      const int ax = box ? med.array_n[0] : g.nx, ay = box ? med.array_n[1] : g.ny;
      const int ox = box ? med.array_lo[0] : 0, oy = box ? med.array_lo[1] : 0, oz = box ? med.array_lo[2] : 0;
      for (std::int64_t c = 0; c < med_cells; ++c) {
        const float v = arrs[a][c];
        if (!std::isfinite(v) || (positive ? v <= 0 : v < 0)) {
          const int i = int(c % ax) + ox, j = int((c / ax) % ay) + oy, k = int(c / (std::int64_t(ax) * ay)) + oz;
          fail("coefficient-array medium: array '", name, "' has value ", v, " at cell (", i, ", ",
               j, ", ", k, "); it must be finite and ", positive ? "> 0" : ">= 0");
        }
      }
    }
  };
  check(med.eps_r, "eps_r", true, true);
  check(med.sigma_e, "sigma_e", false, false);
  check(med.mu_r, "mu_r", false, true);
  check(med.sigma_m, "sigma_m", false, false);
  auto val = [&](const std::vector<std::vector<float>>& arrs, int axis, std::int64_t cell,
                 double dflt) -> double {
    if (arrs.empty()) return dflt;
    return arrs[arrs.size() == 3 ? axis : 0][cell];
  };

  coef_arrays_.assign(12, std::vector<float>(L.size, 0.0f));
  const bool avg = med.average_at_edges;
#pragma omp parallel for
  for (int k = -1; k <= g.nz; ++k) {
    for (int j = -1; j <= g.ny; ++j) {
      for (int i = -1; i <= g.nx; ++i) {
        const std::int64_t o = L.at(i, j, k);
        const int idx3[3] = {i, j, k};
        for (int c = 0; c < 3; ++c) {
          // E_c: cells sharing the edge differ by -1 along the two transverse axes.
          double eps = 0, sig = 0;
          const int b = (c + 1) % 3, d = (c + 2) % 3;
          const int nsamp = avg ? 4 : 1;
          for (int s = 0; s < nsamp; ++s) {
            int q[3] = {idx3[0], idx3[1], idx3[2]};
            if (s & 1) q[b] -= 1;
            if (s & 2) q[d] -= 1;
            const std::int64_t cell = medium_cell(q[0], q[1], q[2]);
            eps += val(med.eps_r, c, cell, 1.0);
            sig += val(med.sigma_e, c, cell, 0.0);
          }
          const auto e = electric_coefficients(eps / nsamp, sig / nsamp, dt_);
          coef_arrays_[2 * c][o] = float(e.ca);
          coef_arrays_[2 * c + 1][o] = float(e.cb);
          // H_c: the two cells sharing the face differ by -1 along axis c.
          double inv_mu = 0, sigm = 0;
          const int nh = avg ? 2 : 1;
          for (int s = 0; s < nh; ++s) {
            int q[3] = {idx3[0], idx3[1], idx3[2]};
            if (s) q[c] -= 1;
            const std::int64_t cell = medium_cell(q[0], q[1], q[2]);
            inv_mu += 1.0 / val(med.mu_r, c, cell, 1.0);
            sigm += val(med.sigma_m, c, cell, 0.0);
          }
          const auto h = magnetic_coefficients(nh / inv_mu, sigm / nh, dt_);
          coef_arrays_[6 + 2 * c][o] = float(h.ca);
          coef_arrays_[6 + 2 * c + 1][o] = float(h.cb);
        }
      }
    }
  }
}

CpmlProfile build_cpml_axis(int axis, int n, double d, double dt, const std::array<BoundaryType, 2>& face,
                            const std::array<CpmlParameters, 2>& cpml, std::vector<CpmlSlab>& slabs) {
  CpmlProfile p;
  p.b_e.assign(n + 1, 0.0f);
  p.c_e.assign(n + 1, 0.0f);
  p.kinv_e.assign(n + 1, 1.0f);
  p.b_h.assign(n + 1, 0.0f);
  p.c_h.assign(n + 1, 0.0f);
  p.kinv_h.assign(n + 1, 1.0f);
  for (int s = 0; s < 2; ++s) {
    const int f = 2 * axis + s;
    if (face[s] != BoundaryType::cpml) continue;
    const CpmlParameters& cp = cpml[s];
    const int T = cp.thickness;
    const double m = cp.grading_order;
    const double sigma_max = cp.sigma_factor * 0.8 * (m + 1.0) / (kEta0 * d);
    // depth rho in [0,1] of a position x (in cells) measured from the inner interface
    auto rho = [&](double x) {
      const double r = (s == 0) ? (T - x) / T : (x - (n - T)) / T;
      return std::max(0.0, std::min(1.0, r));
    };
    auto fill = [&](double x, float& b, float& c, float& kinv) {
      const double r = rho(x);
      const double sigma = sigma_max * std::pow(r, m);
      const double kappa = 1.0 + (cp.kappa_max - 1.0) * std::pow(r, m);
      const double alpha = cp.alpha_max * std::pow(1.0 - r, cp.alpha_order);
      const double bb = std::exp(-(sigma / kappa + alpha) * dt / kEps0);
      const double cc = (sigma > 0) ? sigma / (sigma * kappa + kappa * kappa * alpha) * (bb - 1.0) : 0.0;
      b = float(bb);
      c = float(cc);
      kinv = float(1.0 / kappa);
      if (cp.match_frequency > 0) {  // Crank-Nicolson CPML matched to a steady state (boundary.h)
        const double half = kPi * cp.match_frequency * dt;  // w dt / 2
        const double aa = sigma / (kappa * std::cos(half)), gg = sigma / (kappa * kappa * std::cos(half));
        const double den = kEps0 / dt + 0.5 * aa;
        const double b1 = (kEps0 / dt - 0.5 * aa) / den, c1 = -0.5 * gg / den;
        b = float(b1);
        c = float(c1 * (1.0 + b1));
        kinv = float(1.0 / kappa + c1);
      }
    };
    CpmlSlab slab;
    slab.face = f;
    slab.axis = axis;
    if (s == 0) {
      slab.e_begin = 1; slab.e_end = T - 1;       // node 0 is the PEC wall, node T the interface
      slab.h_begin = 0; slab.h_end = T - 1;
    } else {
      slab.e_begin = n - T + 1; slab.e_end = n - 1;
      slab.h_begin = n - T; slab.h_end = n - 1;
    }
    if (cp.match_frequency > 0) {
      const int other = 1 - s;
      if (face[other] == BoundaryType::cpml && cpml[other].match_frequency != cp.match_frequency)
        fail("CPML on ", face_name(f), ": match_frequency ", cp.match_frequency, " Hz differs from ",
             cpml[other].match_frequency, " Hz on ", face_name(2 * axis + other), " (one scheme per axis)");
      p.lagged = true;
    }
    for (int x = slab.e_begin; x <= slab.e_end; ++x) fill(x, p.b_e[x], p.c_e[x], p.kinv_e[x]);
    for (int x = slab.h_begin; x <= slab.h_end; ++x) fill(x + 0.5, p.b_h[x], p.c_h[x], p.kinv_h[x]);
    slabs.push_back(slab);
  }
  return p;
}

void FdtdOperator::build_cpml() {
  const YeeGrid& g = setup_.grid;
  const auto& bc = setup_.boundaries;
  const int n[3] = {g.nx, g.ny, g.nz};
  const double d[3] = {g.dx, g.dy, g.dz};
  for (int a = 0; a < 3; ++a)
    profile_[a] = build_cpml_axis(a, n[a], d[a], dt_, {bc.face[2 * a], bc.face[2 * a + 1]},
                                  {bc.cpml[2 * a], bc.cpml[2 * a + 1]}, slabs_);
}

void FdtdOperator::build_sources_and_probes() {
  const YeeGrid& g = setup_.grid;
  const double volume = g.dx * g.dy * g.dz;
  for (std::size_t s = 0; s < setup_.sources.size(); ++s) {
    const PointSource& ps = setup_.sources[s];
    if (ps.i < 0 || ps.i > g.nx || ps.j < 0 || ps.j > g.ny || ps.k < 0 || ps.k > g.nz)
      fail("source ", s, " at sample (", ps.i, ", ", ps.j, ", ", ps.k, ") is outside the grid of ",
           g.nx, " x ", g.ny, " x ", g.nz, " cells (valid sample indices 0..", g.nx, ", 0..", g.ny,
           ", 0..", g.nz, ")");
    ps.waveform.validate();
    if (!std::isfinite(ps.amplitude)) fail("source ", s, ": amplitude is not finite");
    const double norm = std::sqrt(ps.direction[0] * ps.direction[0] + ps.direction[1] * ps.direction[1] +
                                  ps.direction[2] * ps.direction[2]);
    if (!(norm > 0) || !std::isfinite(norm))
      fail("source ", s, ": direction (", ps.direction[0], ", ", ps.direction[1], ", ",
           ps.direction[2], ") must be a finite non-zero vector");
    ResolvedSource r;
    r.kind = ps.kind;
    r.waveform = ps.waveform;
    r.electric = ps.kind == PointSource::Kind::electric_current || ps.kind == PointSource::Kind::hard_e;
    bool any = false;
    for (int a = 0; a < 3; ++a) {
      const double w = ps.direction[a] / norm;
      const Component c = static_cast<Component>(a + (r.electric ? 0 : 3));
      const bool inside = ps.i >= range_lo(c, 0) && ps.i <= range_hi(c, 0) && ps.j >= range_lo(c, 1) &&
                          ps.j <= range_hi(c, 1) && ps.k >= range_lo(c, 2) && ps.k <= range_hi(c, 2);
      r.active[a] = (w != 0.0) && inside;
      r.offset[a] = layout_.at(ps.i, ps.j, ps.k);
      r.scale[a] = 0.0f;
      if (!r.active[a]) continue;
      any = true;
      const double coef_b = coefficients_at(c, ps.i, ps.j, ps.k)[1];
      switch (ps.kind) {
        case PointSource::Kind::electric_current:
        case PointSource::Kind::magnetic_current:
          r.scale[a] = float(-coef_b * w * ps.amplitude / volume);
          if (scheme_.stencil.backward4) {  // s44: the current enters with the curl's D_b
            const auto ab = coefficients_at(c, ps.i, ps.j, ps.k);
            const S44Coefficients k4 = s44_coefficients(float(ab[0]), float(ab[1]));
            if (ab[1] != 0) r.scale[a] = float(r.scale[a] * (double(k4.cb) / ab[1]));
          }
          break;
        case PointSource::Kind::hard_e:
        case PointSource::Kind::hard_h:
          r.scale[a] = float(w * ps.amplitude);
          break;
      }
    }
    if (!any)
      fail("source ", s, " at sample (", ps.i, ", ", ps.j, ", ", ps.k,
           ") drives no updated field sample (its components lie on PEC/CPML-terminated faces)");
    sources_.push_back(r);
  }
  for (std::size_t p = 0; p < setup_.probes.size(); ++p) {
    const Probe& pr = setup_.probes[p];
    if (pr.i < 0 || pr.i > g.nx || pr.j < 0 || pr.j > g.ny || pr.k < 0 || pr.k > g.nz)
      fail("probe ", p, " ('", pr.name, "') at sample (", pr.i, ", ", pr.j, ", ", pr.k,
           ") is outside the grid of ", g.nx, " x ", g.ny, " x ", g.nz, " cells");
    probes_.push_back({pr, layout_.at(pr.i, pr.j, pr.k)});
  }
}

std::array<float, 2> FdtdOperator::coefficients_at(Component c, int i, int j, int k) const {
  const std::int64_t o = layout_.at(i, j, k);
  const int ci = static_cast<int>(c);
  if (setup_.material_mode == MaterialMode::indexed) {
    const std::size_t m = index_[o];
    return {table_[m * 12 + 2 * ci], table_[m * 12 + 2 * ci + 1]};
  }
  return {coef_arrays_[2 * ci][o], coef_arrays_[2 * ci + 1][o]};
}

const FdtdOperator::CoefficientIndex* FdtdOperator::coefficient_index() const {
  if (setup_.material_mode == MaterialMode::indexed) return nullptr;
  std::call_once(lazy_index_->once, [this] {
    // Tuples compared bit for bit, so the table holds exactly the floats of the arrays.
    struct Key {
      std::uint32_t w[12];
      bool operator==(const Key& o) const { return std::memcmp(w, o.w, sizeof(w)) == 0; }
    };
    struct KeyHash {
      std::size_t operator()(const Key& k) const {
        std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the 12 words
        for (std::uint32_t v : k.w) h = (h ^ v) * 1099511628211ull;
        return std::size_t(h ^ (h >> 29));
      }
    };
    auto r = std::make_unique<CoefficientIndex>();
    const std::int64_t n = layout_.size;
    r->index.resize(n);
    std::unordered_map<Key, std::uint16_t, KeyHash> ids;
    Key prev{};
    int prev_id = -1;
    for (std::int64_t o = 0; o < n; ++o) {
      Key key;
      for (int q = 0; q < 12; ++q) std::memcpy(&key.w[q], &coef_arrays_[q][o], 4);
      if (prev_id >= 0 && key == prev) {  // neighbours along x mostly share their tuple
        r->index[o] = std::uint16_t(prev_id);
        continue;
      }
      auto it = ids.find(key);
      if (it == ids.end()) {
        if (ids.size() == 65536) return;  // too many distinct tuples: no index
        it = ids.emplace(key, std::uint16_t(ids.size())).first;
        for (int q = 0; q < 12; ++q) r->table.push_back(coef_arrays_[q][o]);
      }
      prev = key;
      prev_id = it->second;
      r->index[o] = it->second;
    }
    lazy_index_->value = std::move(r);
  });
  return lazy_index_->value.get();
}

double FdtdOperator::relative_constitutive_at(Component c, int i, int j, int k) const {
  // dt / (eps0 eps_r) = cb (1 + loss) and ca = (1 - loss)/(1 + loss) => 1 + loss = 2 / (1 + ca).
  const auto ab = coefficients_at(c, i, j, k);
  const double one_plus_loss = 2.0 / (1.0 + double(ab[0]));
  const double base = is_electric(c) ? kEps0 : kMu0;
  return dt_ / (base * double(ab[1]) * one_plus_loss);
}

std::int64_t FdtdOperator::device_bytes() const {
  const YeeGrid& g = setup_.grid;
  std::int64_t bytes = 6 * layout_.size * field_storage_bytes(setup_.field_storage);
  if (scheme_.stencil.backward4) bytes += 3 * 6 * layout_.size * 4;  // s44: three more time levels
  if (setup_.material_mode == MaterialMode::indexed)
    bytes += layout_.size * 2 + std::int64_t(table_.size()) * 4;
  else
    bytes += 12 * layout_.size * 4;
  const int n[3] = {g.nx, g.ny, g.nz};
  for (const auto& s : slabs_) {
    const std::int64_t across = std::int64_t(n[(s.axis + 1) % 3] + 1) * (n[(s.axis + 2) % 3] + 1);
    bytes += 2 * 4 * across * (std::max(0, s.e_end - s.e_begin + 1) + (s.h_end - s.h_begin + 1));
  }
  return bytes;
}

}  // namespace vem
