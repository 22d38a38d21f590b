// 2D FDTD setup (fdtd2d_setup.h): polarization helpers, the 2D grid and the validation of a
// problem. Every message names the member and its value: "Fdtd2dSetup::member = value: limit".
#include "vem/fdtd2d/fdtd2d_setup.h"

#include <cmath>
#include <sstream>

#include "vem/core/error.h"

namespace vem {

const char* polarization_name(Polarization2D p) { return p == Polarization2D::tm ? "TM" : "TE"; }

Polarization2D polarization_from_name(const std::string& s) {
  if (s == "TM" || s == "tm") return Polarization2D::tm;
  if (s == "TE" || s == "te") return Polarization2D::te;
  fail("unknown 2D polarization '", s, "' (expected TM or TE)");
}

std::array<Component, 3> polarization_components(Polarization2D p) {
  if (p == Polarization2D::tm) return {Component::Ez, Component::Hx, Component::Hy};
  return {Component::Hz, Component::Ex, Component::Ey};
}

bool in_polarization(Component c, Polarization2D p) {
  for (Component q : polarization_components(p))
    if (q == c) return true;
  return false;
}

std::array<int, 2> YeeGrid2D::samples(Component c) const {
  // Half-integer positions along an axis have N samples, integer (node) positions N + 1.
  switch (c) {
    case Component::Ez: return {nx + 1, ny + 1};
    case Component::Hx: return {nx + 1, ny};
    case Component::Hy: return {nx, ny + 1};
    case Component::Hz: return {nx, ny};
    case Component::Ex: return {nx, ny + 1};
    case Component::Ey: return {nx + 1, ny};
  }
  return {0, 0};
}

std::array<double, 2> YeeGrid2D::position(Component c, int i, int j) const {
  const auto n = samples(c);
  const double ox = (n[0] == nx) ? 0.5 : 0.0, oy = (n[1] == ny) ? 0.5 : 0.0;
  return {origin[0] + (i + ox) * dx, origin[1] + (j + oy) * dy};
}

double YeeGrid2D::courant_limit() const {
  return 1.0 / (kC0 * std::sqrt(1.0 / (dx * dx) + 1.0 / (dy * dy)));
}

void YeeGrid2D::validate() const {
  if (nx < 1) fail("Fdtd2dSetup::grid.nx = ", nx, ": must be >= 1 cell");
  if (ny < 1) fail("Fdtd2dSetup::grid.ny = ", ny, ": must be >= 1 cell");
  if (!std::isfinite(dx) || dx <= 0) fail("Fdtd2dSetup::grid.dx = ", dx, ": must be finite and > 0 m");
  if (!std::isfinite(dy) || dy <= 0) fail("Fdtd2dSetup::grid.dy = ", dy, ": must be finite and > 0 m");
  for (int a = 0; a < 2; ++a)
    if (!std::isfinite(origin[a]))
      fail("Fdtd2dSetup::grid.origin[", a, "] = ", origin[a], ": must be finite");
  // The CUDA engine indexes the padded layout (FieldLayout2D) with 32-bit offsets.
  const double size = double(((8 + nx + 1 + 31) / 32) * 32) * (ny + 2.0);
  if (size >= 2147483647.0)
    fail("Fdtd2dSetup::grid = ", nx, " x ", ny, ": one padded field array would hold ", size,
         " samples; at most 2^31 - 1");
}

BoundarySpec2D BoundarySpec2D::all(BoundaryType t, int cpml_thickness) {
  BoundarySpec2D b;
  for (int f = 0; f < 4; ++f) {
    b.face[f] = t;
    b.cpml[f].thickness = cpml_thickness;
  }
  return b;
}

namespace {

const char* face2d_name(int f) {
  static const char* n[4] = {"x-low", "x-high", "y-low", "y-high"};
  return n[f];
}

template <class A>
std::string vec3(const A& v) {
  std::ostringstream os;
  os << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return os.str();
}

void validate_boundaries(const Fdtd2dSetup& s) {
  const auto& b = s.boundaries;
  const int n[2] = {s.grid.nx, s.grid.ny};
  for (int f = 0; f < 4; ++f) {
    if (b.face[f] == BoundaryType::subdomain)
      fail("Fdtd2dSetup::boundaries.face[", f, "] (", face2d_name(f),
           ") = subdomain: not supported in 2D (pec, pmc, periodic or cpml)");
    const int ft = int(b.face[f]);
    if (ft < 0 || ft > int(BoundaryType::subdomain))
      fail("Fdtd2dSetup::boundaries.face[", f, "] = ", ft, ": not a boundary type");
  }
  for (int a = 0; a < 2; ++a) {
    const bool plo = b.face[2 * a] == BoundaryType::periodic, phi = b.face[2 * a + 1] == BoundaryType::periodic;
    if (plo != phi)
      fail("Fdtd2dSetup::boundaries.face[", plo ? 2 * a + 1 : 2 * a, "] (", face2d_name(plo ? 2 * a + 1 : 2 * a),
           ") = ", boundary_name(b.face[plo ? 2 * a + 1 : 2 * a]), ": must be periodic like face[",
           plo ? 2 * a : 2 * a + 1, "] (", face2d_name(plo ? 2 * a : 2 * a + 1), ")");
    int total = 0;
    for (int side = 0; side < 2; ++side) {
      const int f = 2 * a + side;
      if (b.face[f] != BoundaryType::cpml) continue;
      const CpmlParameters& p = b.cpml[f];
      const std::string m = "Fdtd2dSetup::boundaries.cpml[" + std::to_string(f) + "].";
      if (p.thickness < 1) fail(m, "thickness = ", p.thickness, ": must be >= 1 cell (", face2d_name(f), ")");
      if (!std::isfinite(p.grading_order) || p.grading_order < 0)
        fail(m, "grading_order = ", p.grading_order, ": must be finite and >= 0");
      if (!std::isfinite(p.sigma_factor) || p.sigma_factor < 0)
        fail(m, "sigma_factor = ", p.sigma_factor, ": must be finite and >= 0");
      if (!std::isfinite(p.kappa_max) || p.kappa_max < 1)
        fail(m, "kappa_max = ", p.kappa_max, ": must be finite and >= 1");
      if (!std::isfinite(p.alpha_max) || p.alpha_max < 0)
        fail(m, "alpha_max = ", p.alpha_max, ": must be finite and >= 0 S/m");
      if (!std::isfinite(p.alpha_order) || p.alpha_order < 0)
        fail(m, "alpha_order = ", p.alpha_order, ": must be finite and >= 0");
      if (!std::isfinite(p.match_frequency) || p.match_frequency < 0)
        fail(m, "match_frequency = ", p.match_frequency, ": must be finite and >= 0 Hz");
      if (p.match_frequency > 0 && p.alpha_max != 0)
        fail(m, "alpha_max = ", p.alpha_max, ": must be 0 with match_frequency = ", p.match_frequency, " Hz");
      if (p.match_frequency > 0) {
        const int o = 2 * a + 1 - side;
        if (b.face[o] == BoundaryType::cpml && b.cpml[o].match_frequency != p.match_frequency)
          fail(m, "match_frequency = ", p.match_frequency, ": differs from cpml[", o, "].match_frequency = ",
               b.cpml[o].match_frequency, " (one scheme per axis)");
      }
      total += p.thickness;
    }
    if (total >= n[a])
      fail("Fdtd2dSetup::boundaries.cpml thickness along ", "xy"[a], " = ", total, ": must be < grid.n",
           "xy"[a], " = ", n[a], " (at least one non-PML cell)");
  }
}

void validate_arrays(const Fdtd2dSetup& s, const std::vector<std::vector<float>>& arrs, const char* name,
                     bool required, bool positive) {
  const std::int64_t ncell = s.grid.cell_count();
  const std::string m = std::string("Fdtd2dSetup::medium.") + name;
  if (arrs.empty()) {
    if (required) fail(m, " = {}: needs 1 (isotropic) or 3 (x, y, z) arrays of nx*ny = ", ncell, " cells");
    return;
  }
  if (arrs.size() != 1 && arrs.size() != 3)
    fail(m, ".size() = ", arrs.size(), ": 1 (isotropic) or 3 (x, y, z) arrays");
  for (std::size_t a = 0; a < arrs.size(); ++a) {
    if (std::int64_t(arrs[a].size()) != ncell)
      fail(m, "[", a, "].size() = ", arrs[a].size(), ": must be nx*ny = ", ncell, " cells");
    for (std::int64_t c = 0; c < ncell; ++c) {
      const float v = arrs[a][c];
      if (!std::isfinite(v) || (positive ? v <= 0 : v < 0))
        fail(m, "[", a, "][", c, "] = ", v, " (cell ", c % s.grid.nx, ", ", c / s.grid.nx, "): must be finite and ",
             positive ? "> 0" : ">= 0");
    }
  }
}

}  // namespace

void Fdtd2dSetup::validate() const {
  grid.validate();
  if (polarization != Polarization2D::tm && polarization != Polarization2D::te)
    fail("Fdtd2dSetup::polarization = ", int(polarization), ": tm or te");
  const double limit = grid.courant_limit();
  if (!std::isfinite(dt) || dt < 0)
    fail("Fdtd2dSetup::dt = ", dt, " s: must be finite and >= 0 (0 selects courant_factor * the Courant limit)");
  if (dt > limit)
    fail("Fdtd2dSetup::dt = ", dt, " s: exceeds the Courant limit ", limit, " s of dx = ", grid.dx, ", dy = ",
         grid.dy, " m");
  if (dt == 0 && (!std::isfinite(courant_factor) || courant_factor <= 0 || courant_factor > 1))
    fail("Fdtd2dSetup::courant_factor = ", courant_factor, ": must be in (0, 1]");
  validate_boundaries(*this);

  const std::int64_t ncell = grid.cell_count();
  if (material_mode == MaterialMode::indexed) {
    if (materials.empty()) fail("Fdtd2dSetup::materials.size() = 0: give at least one material");
    if (materials.size() > 65536)
      fail("Fdtd2dSetup::materials.size() = ", materials.size(), ": at most 65536 (16-bit index)");
    for (std::size_t m = 0; m < materials.size(); ++m) {
      try {
        validate_material(materials[m], m);
      } catch (const Error& e) {
        fail("Fdtd2dSetup::materials[", m, "]: ", e.what());
      }
    }
    if (!material_index.empty() && std::int64_t(material_index.size()) != ncell)
      fail("Fdtd2dSetup::material_index.size() = ", material_index.size(), ": must be nx*ny = ", ncell,
           " cells (or empty: all material 0)");
    for (std::int64_t c = 0; c < std::int64_t(material_index.size()); ++c)
      if (material_index[c] >= materials.size())
        fail("Fdtd2dSetup::material_index[", c, "] = ", material_index[c], " (cell ", c % grid.nx, ", ",
             c / grid.nx, "): must be < materials.size() = ", materials.size());
  } else if (material_mode == MaterialMode::coefficient_array) {
    validate_arrays(*this, medium.eps_r, "eps_r", true, true);
    validate_arrays(*this, medium.sigma_e, "sigma_e", false, false);
    validate_arrays(*this, medium.mu_r, "mu_r", false, true);
    validate_arrays(*this, medium.sigma_m, "sigma_m", false, false);
  } else {
    fail("Fdtd2dSetup::material_mode = ", int(material_mode), ": indexed or coefficient_array");
  }

  const auto comps = polarization_components(polarization);
  for (std::size_t q = 0; q < sources.size(); ++q) {
    const PointSource& p = sources[q];
    const std::string m = "Fdtd2dSetup::sources[" + std::to_string(q) + "].";
    if (p.k != 0) fail(m, "k = ", p.k, ": must be 0 in 2D");
    if (p.i < 0 || p.i > grid.nx) fail(m, "i = ", p.i, ": must be in [0, nx = ", grid.nx, "]");
    if (p.j < 0 || p.j > grid.ny) fail(m, "j = ", p.j, ": must be in [0, ny = ", grid.ny, "]");
    if (!std::isfinite(p.amplitude)) fail(m, "amplitude = ", p.amplitude, ": must be finite");
    const double norm = std::sqrt(p.direction[0] * p.direction[0] + p.direction[1] * p.direction[1] +
                                  p.direction[2] * p.direction[2]);
    if (!std::isfinite(norm) || !(norm > 0))
      fail(m, "direction = ", vec3(p.direction), ": must be a finite non-zero vector");
    const bool electric = p.kind == PointSource::Kind::electric_current || p.kind == PointSource::Kind::hard_e;
    bool any = false;
    for (Component c : comps)
      if (is_electric(c) == electric && p.direction[axis_of(c)] != 0) any = true;
    if (!any)
      fail(m, "direction = ", vec3(p.direction), ": has no component along the ", electric ? "E" : "H",
           " field of ", polarization_name(polarization), " (",
           polarization == Polarization2D::tm ? (electric ? "z" : "x or y") : (electric ? "x or y" : "z"), ")");
    try {
      p.waveform.validate();
    } catch (const Error& e) {
      fail(m, "waveform: ", e.what());
    }
  }
  for (std::size_t q = 0; q < probes.size(); ++q) {
    const Probe& p = probes[q];
    const std::string m = "Fdtd2dSetup::probes[" + std::to_string(q) + "].";
    if (!in_polarization(p.component, polarization))
      fail(m, "component = ", component_name(p.component), ": not a field of ", polarization_name(polarization),
           " (", polarization == Polarization2D::tm ? "Ez, Hx, Hy" : "Hz, Ex, Ey", ")");
    if (p.k != 0) fail(m, "k = ", p.k, ": must be 0 in 2D");
    const auto n = grid.samples(p.component);
    if (p.i < 0 || p.i >= n[0])
      fail(m, "i = ", p.i, ": must be in [0, ", n[0] - 1, "] for ", component_name(p.component));
    if (p.j < 0 || p.j >= n[1])
      fail(m, "j = ", p.j, ": must be in [0, ", n[1] - 1, "] for ", component_name(p.component));
  }
}

}  // namespace vem
