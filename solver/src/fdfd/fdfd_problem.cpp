// Validation of FdfdProblem and FdfdSolverOptions, the incident plane wave, option names.
#include "vem/fdfd/fdfd_problem.h"

#include <cmath>

#include "vem/core/error.h"
#include "vem/fdfd/fdfd_solver.h"

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

// Messages name the option as Type::member (ParaView property), its value and the limit.

void PlaneWave::validate() const {
  if (!std::isfinite(theta))
    fail("PlaneWave::theta (IncidentTheta) = ", theta, " rad: must be finite");
  if (!std::isfinite(phi)) fail("PlaneWave::phi (IncidentPhi) = ", phi, " rad: must be finite");
  if (!std::isfinite(polarization))
    fail("PlaneWave::polarization (Polarization) = ", polarization, " rad: must be finite");
  if (phase_origin_set)
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(phase_origin[a]))
        fail("PlaneWave::phase_origin[", a, "] = ", phase_origin[a], " m: must be finite");
}

void FdfdPml::validate() const {
  for (int f = 0; f < 6; ++f)
    if (thickness[f] < 0)
      fail("FdfdPml::thickness[", face_name(f), "] (PMLThickness) = ", thickness[f],
           " cells: must be >= 0");
  if (!std::isfinite(grading_order) || grading_order < 0)
    fail("FdfdPml::grading_order = ", grading_order, ": must be finite and >= 0");
  if (!std::isfinite(reflection) || reflection <= 0 || reflection >= 1)
    fail("FdfdPml::reflection R0 = ", reflection, ": must lie in (0, 1)");
  if (!std::isfinite(kappa_max) || kappa_max < 1)
    fail("FdfdPml::kappa_max = ", kappa_max, ": must be finite and >= 1");
}

void FdfdProblem::validate() const {
  if (!std::isfinite(frequency) || frequency <= 0)
    fail("FdfdProblem::frequency (Frequency) = ", frequency, " Hz: must be finite and > 0");
  grid.validate();
  if (3.0 * double(grid.cell_count()) >= 2147483647.0)
    fail("FDFD: grid ", grid.nx, " x ", grid.ny, " x ", grid.nz, " has ",
         3 * grid.cell_count(), " unknowns; the limit is 2^31 - 1");
  pml.validate();
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  for (int a = 0; a < 3; ++a) {
    const int t = pml.thickness[2 * a] + pml.thickness[2 * a + 1];
    if (t >= n[a])
      fail("FdfdProblem::pml.thickness along ", "xyz"[a], " (PMLThickness) = ",
           pml.thickness[2 * a], " + ", pml.thickness[2 * a + 1], " cells: must be < the ", n[a],
           " cells of the grid along ", "xyz"[a], " (else the PML leaves no interior)");
  }
  incident.validate();

  const std::int64_t cells = grid.cell_count();
  if (material_mode == MaterialMode::indexed) {
    if (materials.empty()) fail("FDFD: indexed material mode needs at least one material");
    for (std::size_t m = 0; m < materials.size(); ++m) validate_material(materials[m], m);
    if (!material_index.empty()) {
      if (std::int64_t(material_index.size()) != cells)
        fail("FDFD: material_index has ", material_index.size(), " entries; the grid has ",
             cells, " cells");
      for (std::int64_t c = 0; c < cells; ++c)
        if (material_index[c] >= materials.size())
          fail("FDFD: material_index at cell ", c, " = ", material_index[c],
               " but only ", materials.size(), " materials are defined");
    }
  } else {
    validate_medium_arrays(medium.eps_r, "eps_r", true, cells, true);
    validate_medium_arrays(medium.sigma_e, "sigma_e", false, cells, false);
    validate_medium_arrays(medium.mu_r, "mu_r", false, cells, true);
    validate_medium_arrays(medium.sigma_m, "sigma_m", false, cells, false);
  }
}

void FdfdSolverOptions::validate() const {
  if (!(tolerance > 0.0 && tolerance < 1.0))
    fail("FdfdSolverOptions::tolerance (Tolerance) = ", tolerance, ": must lie in (0, 1)");
  if (max_iterations < 1)
    fail("FdfdSolverOptions::max_iterations (MaxIterations) = ", max_iterations, ": must be >= 1");
  if (max_restarts < 0)
    fail("FdfdSolverOptions::max_restarts = ", max_restarts, ": must be >= 0");
  if (!(inner_tolerance > 0.0 && inner_tolerance < 1.0))
    fail("FdfdSolverOptions::inner_tolerance = ", inner_tolerance, ": must lie in (0, 1)");
  if (max_refinements < 1)
    fail("FdfdSolverOptions::max_refinements = ", max_refinements, ": must be >= 1");
  if (!(std::isfinite(regularization_scale) && regularization_scale > 0.0))
    fail("FdfdSolverOptions::regularization_scale = ", regularization_scale,
         ": must be finite and > 0");
  if (device_index < 0)
    fail("FdfdSolverOptions::device_index (DeviceIndex) = ", device_index, ": must be >= 0");
  if (method == FdfdMethod::cocr && preconditioner != FdfdPreconditioner::none)
    fail("FdfdSolverOptions::preconditioner = ", fdfd_name(preconditioner),
         " with method (Method) = cocr: must be none (COCR takes no preconditioner; use "
         "COCG/BiCGSTAB with jacobi)");
  const bool td = preconditioner == FdfdPreconditioner::time_domain;
  if (method == FdfdMethod::gcr && !td)
    fail("FdfdSolverOptions::method (Method) = gcr with preconditioner = ",
         fdfd_name(preconditioner), ": needs preconditioner time_domain (GCR is the outer "
         "method of the time_domain preconditioner)");
  if (td) {
    const char* with = " with preconditioner (Method) = time_domain: must be ";
    if (method != FdfdMethod::automatic && method != FdfdMethod::gcr)
      fail("FdfdSolverOptions::method (Method) = ", fdfd_name(method), with,
           "gcr or auto (the time_domain preconditioner runs with the GCR method)");
    if (precision != FdfdPrecision::complex128)
      fail("FdfdSolverOptions::precision (Precision) = ", fdfd_name(precision), with,
           "complex128 (the outer GCR runs in complex128)");
    if (refinement == FdfdRefinement::on)
      fail("FdfdSolverOptions::refinement = on", with, "off or auto (iterative refinement does not "
           "combine with the time_domain preconditioner)");
    if (regularization != FdfdRegularization::none)
      fail("FdfdSolverOptions::regularization = ", fdfd_name(regularization), with,
           "none (grad-div regularization does not combine with the time_domain preconditioner)");
    time_domain.validate();
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
