// FdfdProblem validation, the incident plane wave, option names.
#include "vem/fdfd_problem.h"

#include <cmath>

#include "vem/error.h"
#include "vem/fdfd_solver.h"

namespace vem {

std::array<double, 3> PlaneWave::direction() const {
  return {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)};
}

std::array<double, 3> PlaneWave::e_polarization() const {
  const std::array<double, 3> th{std::cos(theta) * std::cos(phi), std::cos(theta) * std::sin(phi),
                                 -std::sin(theta)};
  const std::array<double, 3> ph{-std::sin(phi), std::cos(phi), 0.0};
  const double c = std::cos(polarization), s = std::sin(polarization);
  return {c * th[0] + s * ph[0], c * th[1] + s * ph[1], c * th[2] + s * ph[2]};
}

std::array<double, 3> PlaneWave::h_polarization() const {
  const auto k = direction();
  const auto e = e_polarization();
  return {k[1] * e[2] - k[2] * e[1], k[2] * e[0] - k[0] * e[2], k[0] * e[1] - k[1] * e[0]};
}

namespace {
cdouble plane_wave_phase(const PlaneWave& w, const std::array<double, 3>& origin, double f,
                         const std::array<double, 3>& r) {
  const double k0 = 2.0 * kPi * f / kC0;
  const auto kh = w.direction();
  const double d = kh[0] * (r[0] - origin[0]) + kh[1] * (r[1] - origin[1]) +
                   kh[2] * (r[2] - origin[2]);
  return std::polar(1.0, -k0 * d);
}
}  // namespace

std::array<cdouble, 3> incident_e(const PlaneWave& w, const std::array<double, 3>& origin,
                                  double frequency, const std::array<double, 3>& r) {
  const cdouble ph = plane_wave_phase(w, origin, frequency, r);
  const auto e = w.e_polarization();
  return {e[0] * ph, e[1] * ph, e[2] * ph};
}

std::array<cdouble, 3> incident_h(const PlaneWave& w, const std::array<double, 3>& origin,
                                  double frequency, const std::array<double, 3>& r) {
  const cdouble ph = plane_wave_phase(w, origin, frequency, r) / kEta0;
  const auto h = w.h_polarization();
  return {h[0] * ph, h[1] * ph, h[2] * ph};
}

std::array<double, 3> phase_origin(const FdfdProblem& p) {
  if (p.incident.phase_origin_set) return p.incident.phase_origin;
  const YeeGrid& g = p.grid;
  return {g.origin[0] + 0.5 * g.nx * g.dx, g.origin[1] + 0.5 * g.ny * g.dy,
          g.origin[2] + 0.5 * g.nz * g.dz};
}

namespace {

void validate_medium_arrays(const std::vector<std::vector<float>>& arrays, const char* what,
                            bool required, std::int64_t cells, bool positive) {
  if (arrays.empty()) {
    if (required) fail("FDFD: coefficient_array mode needs medium.", what, " (1 or 3 arrays)");
    return;
  }
  if (arrays.size() != 1 && arrays.size() != 3)
    fail("FDFD: medium.", what, " has ", arrays.size(),
         " arrays; expected 1 (isotropic) or 3 (x, y, z)");
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    if (std::int64_t(arrays[a].size()) != cells)
      fail("FDFD: medium.", what, "[", a, "] has ", arrays[a].size(), " entries; the grid has ",
           cells, " cells");
    for (std::int64_t c = 0; c < cells; ++c) {
      const float v = arrays[a][c];
      if (!std::isfinite(v) || (positive ? v <= 0 : v < 0))
        fail("FDFD: medium.", what, "[", a, "] at cell ", c, " = ", v, " must be finite and ",
             positive ? "> 0" : ">= 0");
    }
  }
}

}  // namespace

void validate(const FdfdProblem& p) {
  if (!std::isfinite(p.frequency) || p.frequency <= 0)
    fail("FDFD: frequency = ", p.frequency, " Hz must be finite and > 0");
  p.grid.validate();
  if (3.0 * double(p.grid.cell_count()) >= 2147483647.0)
    fail("FDFD: grid ", p.grid.nx, " x ", p.grid.ny, " x ", p.grid.nz, " has ",
         3 * p.grid.cell_count(), " unknowns; the limit is 2^31 - 1");
  const int n[3] = {p.grid.nx, p.grid.ny, p.grid.nz};
  for (int f = 0; f < 6; ++f) {
    if (p.pml.thickness[f] < 0)
      fail("FDFD: PML thickness on face ", face_name(f), " = ", p.pml.thickness[f],
           " cells must be >= 0");
  }
  for (int a = 0; a < 3; ++a) {
    const int t = p.pml.thickness[2 * a] + p.pml.thickness[2 * a + 1];
    if (t >= n[a])
      fail("FDFD: PML of ", p.pml.thickness[2 * a], " + ", p.pml.thickness[2 * a + 1],
           " cells along ", "xyz"[a], " leaves no interior in a grid of ", n[a], " cells");
  }
  if (!std::isfinite(p.pml.grading_order) || p.pml.grading_order < 0)
    fail("FDFD: PML grading order = ", p.pml.grading_order, " must be finite and >= 0");
  if (!std::isfinite(p.pml.reflection) || p.pml.reflection <= 0 || p.pml.reflection >= 1)
    fail("FDFD: PML reflection R0 = ", p.pml.reflection, " must lie in (0, 1)");
  if (!std::isfinite(p.pml.kappa_max) || p.pml.kappa_max < 1)
    fail("FDFD: PML kappa_max = ", p.pml.kappa_max, " must be finite and >= 1");
  if (!std::isfinite(p.incident.theta) || !std::isfinite(p.incident.phi) ||
      !std::isfinite(p.incident.polarization))
    fail("FDFD: incident wave angles must be finite");
  if (p.incident.phase_origin_set)
    for (double v : p.incident.phase_origin)
      if (!std::isfinite(v)) fail("FDFD: incident wave phase origin must be finite");

  const std::int64_t cells = p.grid.cell_count();
  if (p.material_mode == MaterialMode::indexed) {
    if (p.materials.empty()) fail("FDFD: indexed material mode needs at least one material");
    for (std::size_t m = 0; m < p.materials.size(); ++m) validate_material(p.materials[m], m);
    if (!p.material_index.empty()) {
      if (std::int64_t(p.material_index.size()) != cells)
        fail("FDFD: material_index has ", p.material_index.size(), " entries; the grid has ",
             cells, " cells");
      for (std::int64_t c = 0; c < cells; ++c)
        if (p.material_index[c] >= p.materials.size())
          fail("FDFD: material_index at cell ", c, " = ", p.material_index[c],
               " but only ", p.materials.size(), " materials are defined");
    }
  } else {
    validate_medium_arrays(p.medium.eps_r, "eps_r", true, cells, true);
    validate_medium_arrays(p.medium.sigma_e, "sigma_e", false, cells, false);
    validate_medium_arrays(p.medium.mu_r, "mu_r", false, cells, true);
    validate_medium_arrays(p.medium.sigma_m, "sigma_m", false, cells, false);
  }
}

void validate(const FdfdSolverOptions& o) {
  if (!(o.tolerance > 0.0 && o.tolerance < 1.0))
    fail("FDFD: solver tolerance = ", o.tolerance, " must lie in (0, 1)");
  if (o.max_iterations < 1)
    fail("FDFD: max_iterations = ", o.max_iterations, " must be >= 1");
  if (o.max_restarts < 0) fail("FDFD: max_restarts = ", o.max_restarts, " must be >= 0");
  if (!(o.inner_tolerance > 0.0 && o.inner_tolerance < 1.0))
    fail("FDFD: refinement inner_tolerance = ", o.inner_tolerance, " must lie in (0, 1)");
  if (o.max_refinements < 1)
    fail("FDFD: max_refinements = ", o.max_refinements, " must be >= 1");
  if (!(std::isfinite(o.regularization_scale) && o.regularization_scale > 0.0))
    fail("FDFD: regularization_scale = ", o.regularization_scale, " must be finite and > 0");
  if (o.device_index < 0) fail("FDFD: device_index = ", o.device_index, " must be >= 0");
  if (o.method == FdfdMethod::cocr && o.preconditioner != FdfdPreconditioner::none)
    fail("FDFD: the COCR method takes no preconditioner (use none, or COCG/BiCGSTAB with jacobi)");
  const bool td = o.preconditioner == FdfdPreconditioner::time_domain;
  if (o.method == FdfdMethod::gcr && !td)
    fail("FDFD: the GCR method is the outer method of the time_domain preconditioner (got preconditioner ",
         fdfd_name(o.preconditioner), ")");
  if (td) {
    if (o.method != FdfdMethod::automatic && o.method != FdfdMethod::gcr)
      fail("FDFD: the time_domain preconditioner runs with the GCR method (got ", fdfd_name(o.method), ")");
    if (o.precision != FdfdPrecision::complex128)
      fail("FDFD: the time_domain preconditioner's outer GCR runs in complex128 (got complex64)");
    if (o.refinement == FdfdRefinement::on)
      fail("FDFD: iterative refinement does not combine with the time_domain preconditioner");
    if (o.regularization != FdfdRegularization::none)
      fail("FDFD: grad-div regularization does not combine with the time_domain preconditioner");
    validate(o.time_domain);
  }
}

const char* fdfd_name(FdfdPrecision v) {
  return v == FdfdPrecision::complex128 ? "complex128" : "complex64";
}
const char* fdfd_name(FdfdStorage v) {
  switch (v) {
    case FdfdStorage::automatic: return "auto";
    case FdfdStorage::cas: return "cas";
    case FdfdStorage::cis: return "cis";
  }
  return "?";
}
const char* fdfd_name(FdfdTablePlacement v) {
  switch (v) {
    case FdfdTablePlacement::automatic: return "auto";
    case FdfdTablePlacement::constant_memory: return "constant";
    case FdfdTablePlacement::global_memory: return "global";
  }
  return "?";
}
const char* fdfd_name(FdfdMethod v) {
  switch (v) {
    case FdfdMethod::automatic: return "auto";
    case FdfdMethod::bicgstab: return "bicgstab";
    case FdfdMethod::cocg: return "cocg";
    case FdfdMethod::cocr: return "cocr";
    case FdfdMethod::gcr: return "gcr";
  }
  return "?";
}
const char* fdfd_name(FdfdPreconditioner v) {
  switch (v) {
    case FdfdPreconditioner::none: return "none";
    case FdfdPreconditioner::jacobi: return "jacobi";
    case FdfdPreconditioner::time_domain: return "time_domain";
  }
  return "?";
}
const char* fdfd_name(FdfdRegularization v) {
  return v == FdfdRegularization::none ? "none" : "grad_div";
}
const char* fdfd_name(FdfdBlas v) { return v == FdfdBlas::cublas ? "cublas" : "fused"; }
const char* fdfd_name(FdfdMatvec v) { return v == FdfdMatvec::two_stage ? "two_stage" : "fused"; }
const char* fdfd_name(FdfdRefinement v) {
  switch (v) {
    case FdfdRefinement::automatic: return "auto";
    case FdfdRefinement::off: return "off";
    case FdfdRefinement::on: return "on";
  }
  return "?";
}
const char* fdfd_name(FdfdStatus v) {
  switch (v) {
    case FdfdStatus::converged: return "converged";
    case FdfdStatus::max_iterations: return "max_iterations";
    case FdfdStatus::breakdown: return "breakdown";
    case FdfdStatus::stopped: return "stopped";
  }
  return "?";
}

}  // namespace vem
