// The checks of the FDFD options (issue 12: the options are checked by the solver, the ParaView
// filter only translates its properties): every validate() rejects each bad value with a message
// that names the option (C++ member and, where there is one, the FDFDSolver property), the value
// and the allowed limit; default-constructed options pass; solve_fdfd and make_fdfd_voxel_domain
// run the same checks, so a C++ user reads the same message as a ParaView user.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "option_checks.h"
#include "vem/core/error.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdfd/fdfd_voxel_domain.h"

using namespace vem;
using namespace vem_test;

namespace {

FdfdProblem small_problem() {
  FdfdProblem p;
  p.grid = {12, 12, 12, 0.01, 0.01, 0.01};
  p.frequency = 1e9;
  p.pml = FdfdPml::uniform(3);
  return p;
}

}  // namespace

TEST(FdfdOptions, DefaultsAreValid) {
  EXPECT_NO_THROW(FdfdSolverOptions{}.validate());
  EXPECT_NO_THROW(FdfdTimeDomainOptions{}.validate());
  EXPECT_NO_THROW(PlaneWave{}.validate());
  EXPECT_NO_THROW(FdfdPml{}.validate());
  EXPECT_NO_THROW(FdfdVoxelOptions{}.validate());
  EXPECT_NO_THROW(small_problem().validate());
  // The older free-function spelling runs the same checks.
  EXPECT_NO_THROW(validate(FdfdSolverOptions{}));
  FdfdSolverOptions bad;
  bad.tolerance = 2.0;
  EXPECT_THROW(validate(bad), Error);
}

TEST(FdfdOptions, SolverToleranceAndLimits) {
  for (double tol : {-1.0, 0.0, 1.0, 2.0}) {
    FdfdSolverOptions o;
    o.tolerance = tol;
    const std::string value = "= " + std::to_string(int(tol));
    expect_rejected(o, {"FdfdSolverOptions::tolerance (Tolerance)", value.c_str(),
                        "must lie in (0, 1)"});
  }
  FdfdSolverOptions o;
  o.tolerance = kNan;
  expect_rejected(o, {"FdfdSolverOptions::tolerance (Tolerance) = nan", "(0, 1)"});

  o = {};
  o.max_iterations = 0;
  expect_rejected(o, {"FdfdSolverOptions::max_iterations (MaxIterations) = 0", "must be >= 1"});
  o = {};
  o.max_restarts = -1;
  expect_rejected(o, {"FdfdSolverOptions::max_restarts = -1", "must be >= 0"});
  o = {};
  o.inner_tolerance = 0.0;
  expect_rejected(o, {"FdfdSolverOptions::inner_tolerance = 0", "must lie in (0, 1)"});
  o.inner_tolerance = 1.5;
  expect_rejected(o, {"FdfdSolverOptions::inner_tolerance = 1.5", "must lie in (0, 1)"});
  o = {};
  o.max_refinements = 0;
  expect_rejected(o, {"FdfdSolverOptions::max_refinements = 0", "must be >= 1"});
  o = {};
  o.regularization_scale = -1.0;
  expect_rejected(o, {"FdfdSolverOptions::regularization_scale = -1", "must be finite and > 0"});
  o.regularization_scale = kInf;
  expect_rejected(o, {"FdfdSolverOptions::regularization_scale = inf", "must be finite and > 0"});
  o = {};
  o.device_index = -1;
  expect_rejected(o, {"FdfdSolverOptions::device_index (DeviceIndex) = -1", "must be >= 0"});
}

TEST(FdfdOptions, SolverCombinations) {
  FdfdSolverOptions o;
  o.method = FdfdMethod::cocr;
  o.preconditioner = FdfdPreconditioner::jacobi;
  expect_rejected(o, {"FdfdSolverOptions::preconditioner = jacobi", "method (Method) = cocr",
                      "must be none"});
  o = {};
  o.method = FdfdMethod::gcr;
  expect_rejected(o, {"FdfdSolverOptions::method (Method) = gcr", "preconditioner = none",
                      "needs preconditioner time_domain"});

  FdfdSolverOptions td;  // what Method "GCR + FDTD preconditioner" sets
  td.method = FdfdMethod::gcr;
  td.preconditioner = FdfdPreconditioner::time_domain;
  EXPECT_NO_THROW(td.validate());
  o = td;
  o.method = FdfdMethod::automatic;
  EXPECT_NO_THROW(o.validate());
  o.method = FdfdMethod::cocg;
  expect_rejected(o, {"FdfdSolverOptions::method (Method) = cocg",
                      "preconditioner (Method) = time_domain", "must be gcr or auto"});
  o = td;
  o.precision = FdfdPrecision::complex64;
  expect_rejected(o,
                  {"FdfdSolverOptions::precision (Precision) = complex64", "must be complex128"});
  o = td;
  o.refinement = FdfdRefinement::on;
  expect_rejected(o, {"FdfdSolverOptions::refinement = on", "must be off or auto"});
  o = td;
  o.regularization = FdfdRegularization::grad_div;
  expect_rejected(o, {"FdfdSolverOptions::regularization = grad_div", "must be none"});
  // The preconditioner's own options are checked with it (and only with it).
  o = td;
  o.time_domain.gcr_restart = 0;
  expect_rejected(o, {"FdfdTimeDomainOptions::gcr_restart = 0", "must be >= 1"});
  o.preconditioner = FdfdPreconditioner::none;
  o.method = FdfdMethod::automatic;
  EXPECT_NO_THROW(o.validate());

  // Combinations that run.
  for (FdfdMethod m : {FdfdMethod::bicgstab, FdfdMethod::cocg}) {
    o = {};
    o.method = m;
    o.preconditioner = FdfdPreconditioner::jacobi;
    EXPECT_NO_THROW(o.validate()) << fdfd_name(m);
  }
  o = {};
  o.precision = FdfdPrecision::complex64;
  o.refinement = FdfdRefinement::on;
  o.regularization = FdfdRegularization::grad_div;
  EXPECT_NO_THROW(o.validate());
}

TEST(FdfdOptions, TimeDomainPreconditioner) {
  FdfdTimeDomainOptions o;
  o.steady_tolerance = 0.0;
  expect_rejected(o, {"FdfdTimeDomainOptions::steady_tolerance = 0", "must lie in (0, 1)"});
  o.steady_tolerance = 1.0;
  expect_rejected(o, {"FdfdTimeDomainOptions::steady_tolerance = 1", "must lie in (0, 1)"});
  o = {};
  o.periods_per_check = 0;
  expect_rejected(o, {"FdfdTimeDomainOptions::periods_per_check = 0", "must be >= 1"});
  o = {};
  o.periods_per_check = 2;
  o.max_periods = 3;
  expect_rejected(o, {"FdfdTimeDomainOptions::max_periods = 3",
                      "must be >= 2 periods_per_check = 4"});
  o = {};
  o.ramp_periods = -1.0;
  expect_rejected(o, {"FdfdTimeDomainOptions::ramp_periods = -1", "must be finite and >= 0"});
  o.ramp_periods = kNan;
  expect_rejected(o, {"FdfdTimeDomainOptions::ramp_periods = nan", "must be finite and >= 0"});
  o = {};
  o.courant_factor = 1.5;
  expect_rejected(o, {"FdfdTimeDomainOptions::courant_factor = 1.5", "must lie in (0, 1]"});
  o.courant_factor = 0.0;
  expect_rejected(o, {"FdfdTimeDomainOptions::courant_factor = 0", "must lie in (0, 1]"});
  o = {};
  o.gcr_restart = 0;
  expect_rejected(o, {"FdfdTimeDomainOptions::gcr_restart = 0", "must be >= 1"});
}

TEST(FdfdOptions, PlaneWaveAndPml) {
  PlaneWave w;
  w.theta = kNan;
  expect_rejected(w, {"PlaneWave::theta (IncidentTheta) = nan rad", "must be finite"});
  w = {};
  w.phi = kInf;
  expect_rejected(w, {"PlaneWave::phi (IncidentPhi) = inf rad", "must be finite"});
  w = {};
  w.polarization = -kInf;
  expect_rejected(w, {"PlaneWave::polarization (Polarization) = -inf rad", "must be finite"});
  w = {};
  w.phase_origin = {0.0, kNan, 0.0};
  EXPECT_NO_THROW(w.validate());  // not used unless phase_origin_set
  w.phase_origin_set = true;
  expect_rejected(w, {"PlaneWave::phase_origin[1] = nan m", "must be finite"});

  FdfdPml p;
  p.thickness[3] = -1;
  expect_rejected(p, {"FdfdPml::thickness[y-high] (PMLThickness) = -1 cells", "must be >= 0"});
  p = {};
  p.grading_order = -1.0;
  expect_rejected(p, {"FdfdPml::grading_order = -1", "must be finite and >= 0"});
  p = {};
  p.reflection = 0.0;
  expect_rejected(p, {"FdfdPml::reflection R0 = 0", "must lie in (0, 1)"});
  p.reflection = 1.5;
  expect_rejected(p, {"FdfdPml::reflection R0 = 1.5", "must lie in (0, 1)"});
  p = {};
  p.kappa_max = 0.5;
  expect_rejected(p, {"FdfdPml::kappa_max = 0.5", "must be finite and >= 1"});
  EXPECT_NO_THROW(FdfdPml::uniform(0).validate());  // bare PEC walls
}

TEST(FdfdOptions, Problem) {
  FdfdProblem p = small_problem();
  p.frequency = 0.0;
  expect_rejected(p, {"FdfdProblem::frequency (Frequency) = 0 Hz", "must be finite and > 0"});
  p.frequency = -1e9;
  expect_rejected(p, {"FdfdProblem::frequency (Frequency) = -1e+09 Hz", "must be finite and > 0"});
  p.frequency = kNan;
  expect_rejected(p, {"FdfdProblem::frequency (Frequency) = nan Hz", "must be finite and > 0"});
  p = small_problem();
  p.pml = FdfdPml::uniform(6);
  expect_rejected(p, {"FdfdProblem::pml.thickness along x (PMLThickness) = 6 + 6 cells",
                      "must be < the 12 cells"});
  p.pml.thickness = {1, 1, 1, 1, 6, 6};
  expect_rejected(p, {"FdfdProblem::pml.thickness along z (PMLThickness) = 6 + 6 cells"});
  p = small_problem();
  p.pml.thickness[0] = -2;
  expect_rejected(p, {"FdfdPml::thickness[x-low] (PMLThickness) = -2 cells"});
  p = small_problem();
  p.incident.theta = kNan;
  expect_rejected(p, {"PlaneWave::theta (IncidentTheta) = nan rad"});
  // FdfdOperator checks the problem the same way.
  p = small_problem();
  p.frequency = 0.0;
  std::string direct;
  try {
    p.validate();
  } catch (const Error& e) {
    direct = e.what();
  }
  EXPECT_EQ(error_of([&] { FdfdOperator op(p); }), direct);
}

TEST(FdfdOptions, SolveFdfdReportsTheSameMessage) {
  const FdfdProblem p = small_problem();
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.tolerance = -1.0;
  const std::string direct = error_of([&] { o.validate(); });
  EXPECT_EQ(direct, "FdfdSolverOptions::tolerance (Tolerance) = -1: must lie in (0, 1)");
  EXPECT_EQ(error_of([&] { solve_fdfd(p, o); }), direct);
  const FdfdOperator op(p);
  EXPECT_EQ(error_of([&] { solve_fdfd(op, o); }), direct);
  o = {};
  o.backend = Backend::cpu;
  o.preconditioner = FdfdPreconditioner::time_domain;
  o.precision = FdfdPrecision::complex64;
  EXPECT_EQ(error_of([&] { solve_fdfd(op, o); }), error_of([&] { o.validate(); }));
}

TEST(FdfdOptions, VoxelOptions) {
  FdfdVoxelOptions o;
  o.frequency = 0.0;
  expect_rejected(o, {"FdfdVoxelOptions::frequency (Frequency) = 0 Hz", "must be finite and > 0"});
  o.frequency = kInf;
  expect_rejected(o,
                  {"FdfdVoxelOptions::frequency (Frequency) = inf Hz", "must be finite and > 0"});
  o = {};
  o.pml_thickness = -1;
  expect_rejected(o, {"FdfdVoxelOptions::pml_thickness (PMLThickness) = -1 cells", "must be >= 0"});
  o = {};
  o.air_padding = -3;
  expect_rejected(o, {"FdfdVoxelOptions::air_padding (AirPadding) = -3 cells", "must be >= 0"});
  o = {};
  o.incident.polarization = kNan;
  expect_rejected(o, {"PlaneWave::polarization (Polarization) = nan rad"});
  o = {};
  o.pml_thickness = 0;
  o.air_padding = 0;
  EXPECT_NO_THROW(o.validate());

  // make_fdfd_voxel_domain checks the options and the geometry.
  o = {};
  o.air_padding = -1;
  EXPECT_EQ(error_of([&] { make_fdfd_voxel_domain({4, 4, 4}, {0.01, 0.01, 0.01}, {0, 0, 0}, o); }),
            error_of([&] { o.validate(); }));
  o = {};
  std::string msg =
      error_of([&] { make_fdfd_voxel_domain({4, 0, 4}, {0.01, 0.01, 0.01}, {0, 0, 0}, o); });
  EXPECT_NE(msg.find("0 voxels along y"), std::string::npos) << msg;
  msg = error_of([&] { make_fdfd_voxel_domain({4, 4, 4}, {0.01, 0.01, -0.01}, {0, 0, 0}, o); });
  EXPECT_NE(msg.find("spacing along z is -0.01"), std::string::npos) << msg;
  EXPECT_NE(msg.find("finite and > 0"), std::string::npos) << msg;
}

TEST(FdfdVoxelDomain, GeometryAndLabels) {
  FdfdVoxelOptions o;
  o.frequency = 1e9;
  o.air_padding = 2;
  o.pml_thickness = 3;
  const FdfdVoxelDomain d = make_fdfd_voxel_domain({4, 5, 6}, {0.01, 0.02, 0.03}, {1, 2, 3}, o);
  EXPECT_EQ(d.n_out, (std::array<int, 3>{8, 9, 10}));
  EXPECT_EQ(d.n_total, (std::array<int, 3>{14, 15, 16}));
  EXPECT_DOUBLE_EQ(d.origin_out[1], 2 - 2 * 0.02);
  EXPECT_DOUBLE_EQ(d.origin_total[2], 3 - 5 * 0.03);
  EXPECT_EQ(d.total_index(0), 5 + 14 * (5 + 15 * 5));
  EXPECT_EQ(d.total_index(1 + 4 * (2 + 5 * 3)), 6 + 14 * (7 + 15 * 8));
  EXPECT_EQ(d.out_to_total(0, 0, 0), 3 + 14 * (3 + 15 * 3));
  EXPECT_TRUE(d.has_ntff_room());
  EXPECT_EQ(d.ntff_box().lo, (std::array<int, 3>{4, 4, 4}));
  EXPECT_EQ(d.ntff_box().hi, (std::array<int, 3>{10, 11, 12}));
  const FdfdProblem p0 = d.problem();
  EXPECT_NO_THROW(p0.validate());
  EXPECT_EQ(p0.pml.thickness[5], 3);
  EXPECT_DOUBLE_EQ(p0.frequency, 1e9);

  // Labels 7 (known) and 9 (no properties: vacuum).
  FdfdProblem p = d.problem();
  std::vector<std::uint16_t> labels(std::size_t(d.voxel_count()), 9);
  labels[0] = 7;
  LabelProperties props;
  props.labels = {7};
  props.dielectric = {{40.0, 0.5}};
  props.density = {1050.0};
  props.names = {"muscle"};
  const FdfdLabelCells c = d.set_label_materials(p, labels, props);
  EXPECT_NO_THROW(p.validate());
  ASSERT_EQ(p.materials.size(), 2u);
  const std::size_t t0 = std::size_t(d.total_index(0)), t1 = std::size_t(d.total_index(1));
  EXPECT_EQ(p.material_index[t0], 1);
  EXPECT_EQ(p.material_index[t1], 0);
  EXPECT_FLOAT_EQ(c.eps_r[t0], 40.0f);
  EXPECT_FLOAT_EQ(c.sigma_e[t0], 0.5f);
  EXPECT_FLOAT_EQ(c.density[t0], 1050.0f);
  EXPECT_FLOAT_EQ(c.label[t0], 7.0f);
  EXPECT_FLOAT_EQ(c.label[t1], 9.0f);
  EXPECT_FLOAT_EQ(c.eps_r[t1], 1.0f);
  EXPECT_FLOAT_EQ(c.eps_r[0], 1.0f);  // PML corner

  FdfdVoxelOptions thin = o;
  thin.air_padding = 1;
  EXPECT_FALSE(
      make_fdfd_voxel_domain({4, 4, 4}, {0.01, 0.01, 0.01}, {0, 0, 0}, thin).has_ntff_room());
}
