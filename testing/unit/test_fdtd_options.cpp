// The checks of the FDTD options (issue 12: the options are checked by the solver, the ParaView
// filters FDTDSolver and FDTDSteadyState only translate their properties): VoxelDomainOptions,
// TransientOptions, HarmonicOptions with its plane wave and dipole, and point_source_as_dipole
// reject each bad value with a vem::Error whose message names the C++ member, the ParaView
// property in parentheses, the value and the limit; the defaults pass. Also the geometry of
// make_voxel_domain (padding, CPML, a periodic axis) and TransientOptions::snapshot_steps.
// testing/paraview/test_option_messages.py compares these messages with the filters' output.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "option_checks.h"
#include "vem/core/error.h"
#include "vem/core/yee_grid.h"
#include "vem/fdtd/boundary.h"
#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/fdtd/voxel_domain.h"

using namespace vem;
using namespace vem_test;

namespace {

HarmonicOptions harmonic_900() {
  HarmonicOptions o;
  o.frequencies = {900e6};
  return o;
}

HarmonicOptions harmonic_dipole() {
  HarmonicOptions o = harmonic_900();
  o.source = HarmonicSource::dipole;
  return o;
}

YeeGrid grid_2mm() {
  YeeGrid g;
  g.nx = g.ny = g.nz = 10;
  g.dx = g.dy = g.dz = 0.002;
  g.origin = {-0.01, -0.01, -0.01};
  return g;
}

}  // namespace

//------------------------------------------------------------------------------
TEST(FdtdOptions, DefaultsAreValid) {
  EXPECT_NO_THROW(VoxelDomainOptions{}.validate());
  EXPECT_NO_THROW(TransientOptions{}.validate());
  EXPECT_NO_THROW(HarmonicPlaneWave{}.validate());
  EXPECT_NO_THROW(HarmonicDipole{}.validate());
  // HarmonicOptions has no default frequency: with one, its defaults pass (plane wave and dipole).
  EXPECT_NO_THROW(harmonic_900().validate());
  EXPECT_NO_THROW(harmonic_dipole().validate());
  // The transient defaults with the other illuminations pass too.
  for (Illumination il : {Illumination::plane_wave, Illumination::dipole}) {
    TransientOptions t;
    t.illumination = il;
    EXPECT_NO_THROW(t.validate());
  }
}

//------------------------------------------------------------------------------
TEST(FdtdOptions, VoxelDomainOptionsRejectEachBadValue) {
  VoxelDomainOptions o;
  o.cpml_thickness = 0;
  expect_rejected(o, {"VoxelDomainOptions::cpml_thickness (CPMLThickness) = 0 cells", "must be in 1..1000"});
  o.cpml_thickness = 1001;
  expect_rejected(o, {"VoxelDomainOptions::cpml_thickness (CPMLThickness) = 1001 cells", "1..1000"});
  o.cpml_thickness = -3;
  expect_rejected(o, {"(CPMLThickness) = -3 cells", "1..1000"});
  for (int ok : {1, 1000}) {
    o.cpml_thickness = ok;
    EXPECT_NO_THROW(o.validate()) << ok;
  }

  o = VoxelDomainOptions{};
  o.air_padding = -1;
  expect_rejected(o, {"VoxelDomainOptions::air_padding (AirPadding) = -1 cells", "must be >= 0"});
  o.air_padding = 0;
  EXPECT_NO_THROW(o.validate());

  o = VoxelDomainOptions{};
  o.courant_factor = 1.5;
  expect_rejected(o, {"VoxelDomainOptions::courant_factor (CourantFactor) = 1.5", "must be in (0, 1]"});
  o.courant_factor = 0.0;
  expect_rejected(o, {"(CourantFactor) = 0:", "(0, 1]"});
  o.courant_factor = -0.5;
  expect_rejected(o, {"(CourantFactor) = -0.5", "(0, 1]"});
  o.courant_factor = kNan;
  expect_rejected(o, {"(CourantFactor) = nan", "(0, 1]"});
  o.courant_factor = kInf;
  expect_rejected(o, {"(CourantFactor) = inf", "(0, 1]"});
  o.courant_factor = 1.0;
  EXPECT_NO_THROW(o.validate());

  // Periodic on one face of an axis only: both properties named, each face's type.
  o = VoxelDomainOptions{};
  o.boundaries[0] = BoundaryType::periodic;
  expect_rejected(o, {"VoxelDomainOptions::boundaries (XLowBoundary, XHighBoundary)", "needs both x faces periodic",
                      "x-low: periodic", "x-high: cpml"});
  o.boundaries[0] = BoundaryType::cpml;
  o.boundaries[5] = BoundaryType::periodic;
  o.boundaries[4] = BoundaryType::pec;
  expect_rejected(o, {"(ZLowBoundary, ZHighBoundary)", "z-low: pec", "z-high: periodic"});
  o.boundaries[4] = BoundaryType::periodic;
  EXPECT_NO_THROW(o.validate());
  o.boundaries[2] = BoundaryType::subdomain;
  o.boundaries[3] = BoundaryType::subdomain;
  expect_rejected(o, {"VoxelDomainOptions::boundaries", "subdomain"});
}

//------------------------------------------------------------------------------
TEST(FdtdOptions, MakeVoxelDomainPadsNonPeriodicFacesAndAddsCpml) {
  // 4 x 5 x 6 voxels, x: CPML both sides, y: periodic, z: PEC below, CPML above.
  VoxelDomainOptions o;
  o.air_padding = 2;
  o.cpml_thickness = 3;
  o.boundaries = {BoundaryType::cpml, BoundaryType::cpml, BoundaryType::periodic,
                  BoundaryType::periodic, BoundaryType::pec, BoundaryType::cpml};
  const std::array<double, 3> h{0.001, 0.002, 0.003}, origin{0.1, -0.2, 0.3};
  const VoxelDomain d = make_voxel_domain({4, 5, 6}, h, origin, o);

  EXPECT_EQ(d.voxels, (std::array<int, 3>{4, 5, 6}));
  EXPECT_EQ(d.pad, (std::array<int, 6>{2, 2, 0, 0, 2, 2}));  // no padding on a periodic axis
  EXPECT_EQ(d.pml, (std::array<int, 6>{3, 3, 0, 0, 0, 3}));  // CPML faces only
  EXPECT_EQ(d.n_out, (std::array<int, 3>{4 + 4, 5, 6 + 4}));
  EXPECT_EQ(d.n_total, (std::array<int, 3>{4 + 4 + 6, 5, 6 + 4 + 3}));
  EXPECT_EQ(d.lo_total, (std::array<int, 3>{2 + 3, 0, 2 + 0}));
  EXPECT_NEAR(d.origin_out[0], 0.1 - 2 * 0.001, 1e-15);
  EXPECT_NEAR(d.origin_out[1], -0.2, 1e-15);
  EXPECT_NEAR(d.origin_out[2], 0.3 - 2 * 0.003, 1e-15);
  EXPECT_NEAR(d.origin_total[0], 0.1 - 5 * 0.001, 1e-15);
  EXPECT_NEAR(d.origin_total[1], -0.2, 1e-15);
  EXPECT_NEAR(d.origin_total[2], 0.3 - 2 * 0.003, 1e-15);  // PEC below: no CPML cells
  EXPECT_EQ(d.voxel_count(), 4 * 5 * 6);
  EXPECT_EQ(d.out_cells(), 8 * 5 * 10);
  EXPECT_EQ(d.total_cells(), 14 * 5 * 13);

  // The Yee grid, dt = courant_factor x the Courant limit, the boundary spec.
  const YeeGrid g = d.grid();
  EXPECT_EQ(g.nx, 14);
  EXPECT_EQ(g.ny, 5);
  EXPECT_EQ(g.nz, 13);
  EXPECT_DOUBLE_EQ(g.dy, 0.002);
  const double limit = 1.0 / (kC0 * std::sqrt(1 / (h[0] * h[0]) + 1 / (h[1] * h[1]) + 1 / (h[2] * h[2])));
  EXPECT_NEAR(d.dt, 0.99 * limit, 1e-12 * limit);
  const BoundarySpec b = d.boundaries();
  EXPECT_EQ(b.face[2], BoundaryType::periodic);
  EXPECT_EQ(b.face[4], BoundaryType::pec);
  EXPECT_EQ(b.cpml_cells(1), 3);
  EXPECT_EQ(b.cpml_cells(4), 0);

  // Voxel v -> computational cell: voxel (0,0,0) is cell lo_total, the last voxel (3,4,5).
  EXPECT_EQ(d.total_index(0), 5 + 14 * (0 + 5 * 2));
  EXPECT_EQ(d.total_index(4 * 5 * 6 - 1), (3 + 5) + 14 * ((4 + 0) + 5 * (5 + 2)));
  EXPECT_EQ(d.total_index(1 + 4 * (2 + 5 * 3)), (1 + 5) + 14 * ((2 + 0) + 5 * (3 + 2)));

  // crop_to_output drops the CPML cells: output cell (I,J,K) = total cell + (pml x, y, z low).
  std::vector<float> total(static_cast<std::size_t>(d.total_cells()));
  for (std::size_t t = 0; t < total.size(); ++t) total[t] = float(t);
  std::vector<float> out(static_cast<std::size_t>(d.out_cells()));
  d.crop_to_output(total, out.data(), 1, 0);
  EXPECT_EQ(out[0], float(3 + 14 * (0 + 5 * 0)));
  EXPECT_EQ(out.back(), float((7 + 3) + 14 * (4 + 5 * 9)));

  // sample_at: inside, outside, in the CPML.
  const std::array<double, 3> centre{0.1 + 2e-3, -0.2 + 5e-3, 0.3 + 9e-3};
  EXPECT_NO_THROW(d.sample_at(Component::Ez, centre, "the source position", true));
  expect_parts(error_of([&] { d.sample_at(Component::Ez, {1.0, 0.0, 0.3}, "the source position", true); }),
               {"the source position at (1, 0, 0.3) m", "outside the computational domain"});
  const std::array<double, 3> in_cpml{0.1 - 4e-3, -0.2 + 5e-3, 0.3 + 9e-3};
  expect_parts(error_of([&] { d.sample_at(Component::Ez, in_cpml, "the source position", true); }),
               {"lies in the CPML layer", "outer 3 cells"});
  EXPECT_NO_THROW(d.sample_at(Component::Ez, in_cpml, "probe", false));

  // All CPML, the defaults (padding 8, CPML 10): a 2 x 2 x 2 model.
  const VoxelDomain e = make_voxel_domain({2, 2, 2}, {0.01, 0.01, 0.01}, {0, 0, 0}, VoxelDomainOptions{});
  EXPECT_EQ(e.n_out, (std::array<int, 3>{18, 18, 18}));
  EXPECT_EQ(e.n_total, (std::array<int, 3>{38, 38, 38}));
  EXPECT_EQ(e.lo_total, (std::array<int, 3>{18, 18, 18}));
  EXPECT_NEAR(e.origin_out[0], -0.08, 1e-15);
  EXPECT_NEAR(e.origin_total[2], -0.18, 1e-15);
}

TEST(FdtdOptions, VoxelDomainTissueDensity) {
  // Labels 7 (tissue, 1050 kg/m^3), 3 (air-like, 1.2 kg/m^3: below the tissue limit) and 9 (no
  // properties): only label 7's voxel carries a density; padding and CPML are 0.
  const VoxelDomain e = make_voxel_domain({2, 2, 2}, {0.01, 0.01, 0.01}, {0, 0, 0}, VoxelDomainOptions{});
  std::vector<std::uint16_t> labels(8, 9);
  labels[0] = 7;
  labels[5] = 3;
  LabelProperties props;
  props.labels = {3, 7};
  props.dielectric = {{1.0, 0.0}, {40.0, 0.5}};
  props.density = {1.2, 1050.0};
  props.names = {"air", "muscle"};
  const std::vector<float> rho = e.tissue_density(labels, props);
  ASSERT_EQ(std::int64_t(rho.size()), e.total_cells());
  double sum = 0;
  for (float v : rho) sum += v;
  EXPECT_FLOAT_EQ(rho[std::size_t(e.total_index(0))], 1050.0f);
  EXPECT_EQ(rho[std::size_t(e.total_index(5))], 0.0f);
  EXPECT_DOUBLE_EQ(sum, 1050.0);
  EXPECT_THROW(e.tissue_density(std::vector<std::uint16_t>(7, 7), props), Error);
}

TEST(FdtdOptions, MakeVoxelDomainValidatesOptionsAndGeometry) {
  VoxelDomainOptions o;
  o.cpml_thickness = 0;
  // The same message as validate().
  const std::string direct = error_of([&] { o.validate(); });
  EXPECT_EQ(error_of([&] { make_voxel_domain({4, 4, 4}, {0.01, 0.01, 0.01}, {0, 0, 0}, o); }), direct);
  o = VoxelDomainOptions{};
  expect_parts(error_of([&] { make_voxel_domain({4, 0, 4}, {0.01, 0.01, 0.01}, {0, 0, 0}, o); }),
               {"0 voxels along y", "at least one"});
  expect_parts(error_of([&] { make_voxel_domain({4, 4, 4}, {0.01, 0.01, 0.0}, {0, 0, 0}, o); }),
               {"spacing along z is 0 m", "finite and > 0"});
  expect_parts(error_of([&] { make_voxel_domain({4, 4, 4}, {kNan, 0.01, 0.01}, {0, 0, 0}, o); }),
               {"spacing along x is nan m", "finite and > 0"});
  expect_parts(error_of([&] { make_voxel_domain({4, 4, 4}, {0.01, 0.01, 0.01}, {0, kInf, 0}, o); }),
               {"origin along y is inf m", "finite"});
}

//------------------------------------------------------------------------------
TEST(FdtdOptions, TransientOptionsRejectEachBadValue) {
  TransientOptions t;
  for (double f : {0.0, -1.0}) {
    t.frequency = f;
    expect_rejected(t, {"TransientOptions::frequency (SourceFrequency) = ", "Hz: must be finite and > 0"});
  }
  t.frequency = -1.0;
  expect_rejected(t, {"(SourceFrequency) = -1 Hz"});
  t.frequency = kNan;
  expect_rejected(t, {"(SourceFrequency) = nan Hz", "> 0"});
  t.frequency = kInf;
  expect_rejected(t, {"(SourceFrequency) = inf Hz", "finite"});

  t = TransientOptions{};
  t.bandwidth = -1.0;
  expect_rejected(t, {"TransientOptions::bandwidth (SourceBandwidth) = -1 Hz", "must be finite and >= 0"});
  t.bandwidth = kNan;
  expect_rejected(t, {"(SourceBandwidth) = nan Hz", ">= 0"});
  t.bandwidth = 0.0;
  EXPECT_NO_THROW(t.validate());

  t = TransientOptions{};
  for (int n : {0, -5, 100000001}) {
    t.steps = n;
    const std::string value = "TransientOptions::steps (NumberOfSteps) = " + std::to_string(n) + ":";
    expect_rejected(t, {value.c_str(), "must be in 1..100000000"});
  }
  for (int n : {1, 100000000}) {
    t.steps = n;
    EXPECT_NO_THROW(t.validate()) << n;
  }
  t.steps = 0;
  t.stop_at_time = true;  // the step count does not matter then
  EXPECT_NO_THROW(t.validate());

  for (double s : {0.0, -1e-9}) {
    t.simulated_time = s;
    expect_rejected(t, {"TransientOptions::simulated_time (SimulatedTime) = ", " s: must be finite and > 0"});
  }
  t.simulated_time = kNan;
  expect_rejected(t, {"(SimulatedTime) = nan s", "> 0"});
  t.simulated_time = kInf;
  expect_rejected(t, {"(SimulatedTime) = inf s", "finite"});
  t.stop_at_time = false;
  t.steps = 10;
  EXPECT_NO_THROW(t.validate());  // the simulated time does not matter when stopping after steps

  t = TransientOptions{};
  for (int s : {0, -1}) {
    t.snapshot_interval = s;
    const std::string value = "TransientOptions::snapshot_interval (SnapshotInterval) = " + std::to_string(s) + " steps";
    expect_rejected(t, {value.c_str(), "must be >= 1"});
  }
  t.snapshot_interval = 1;
  EXPECT_NO_THROW(t.validate());

  t = TransientOptions{};
  t.probe_positions = {{0, 0, 0}, {0.01, kNan, 0}};
  expect_rejected(t, {"TransientOptions::probe_positions (ProbePositions) #2 = (0.01, nan, 0) m", "must be finite"});
}

TEST(FdtdOptions, TransientPointSourceChecks) {
  TransientOptions t;
  t.source_polarization = {0, 0, 0};
  expect_rejected(t, {"TransientOptions::source_polarization (SourcePolarization) = (0, 0, 0)",
                      "must be a finite non-zero vector"});
  t.source_polarization = {kNan, 0, 1};
  expect_rejected(t, {"(SourcePolarization) = (nan, 0, 1)", "finite non-zero"});
  t.source_polarization = {1, 0, 1};  // any direction is fine in the transient analysis
  EXPECT_NO_THROW(t.validate());

  t = TransientOptions{};
  t.source_position = {0.1, kInf, 0};
  expect_rejected(t, {"TransientOptions::source_position (SourcePosition) = (0.1, inf, 0) m", "must be finite"});

  t = TransientOptions{};
  t.source_amplitude = kNan;
  expect_rejected(t, {"TransientOptions::source_amplitude (SourceAmplitude) = nan", "must be finite"});

  t = TransientOptions{};
  t.source_kind = PointSource::Kind::magnetic_current;
  expect_rejected(t, {"TransientOptions::source_kind (SourceType) = magnetic_current",
                      "must be electric_current or hard_e"});
  t.source_kind = PointSource::Kind::hard_e;  // a hard source is fine in the transient analysis
  EXPECT_NO_THROW(t.validate());

  // The point-source checks apply only to the point source.
  t = TransientOptions{};
  t.source_polarization = {0, 0, 0};
  t.illumination = Illumination::plane_wave;
  EXPECT_NO_THROW(t.validate());
}

TEST(FdtdOptions, TransientPlaneWaveAndDipoleChecks) {
  TransientOptions t;
  t.illumination = Illumination::plane_wave;
  t.plane_wave.amplitude = 0.0;
  expect_rejected(t, {"HarmonicPlaneWave::amplitude (IncidentAmplitude) = 0 V/m", "must be finite and > 0"});
  t.plane_wave.amplitude = 1.0;
  t.plane_wave.theta = kNan;
  expect_rejected(t, {"HarmonicPlaneWave angles (IncidentTheta, IncidentPhi, Polarization) = (nan, 0, 0) rad",
                      "must be finite"});

  t = TransientOptions{};
  t.illumination = Illumination::dipole;
  t.dipole.feed_current = 0.0;
  // Zero feed current: named with its property and the limit (> 0). Which sentence follows
  // depends on whether validate() mentions the steady state's AcceptedPower (see below).
  expect_rejected(t, {"HarmonicDipole::feed_current (FeedCurrent) = 0 A: must be > 0"});
  t.dipole.feed_current = -1.0;
  expect_rejected(t, {"HarmonicDipole::feed_current (FeedCurrent) = -1 A", ">= 0"});
  // An accepted power does not drive a transient dipole: the feed current must still be > 0.
  t.dipole.feed_current = 0.0;
  t.dipole.accepted_power = 1.0;
  expect_rejected(t, {"HarmonicDipole::feed_current (FeedCurrent) = 0 A: must be > 0 in the transient analysis",
                      "AcceptedPower applies to the steady state only"});
  t = TransientOptions{};
  t.illumination = Illumination::dipole;
  t.dipole.length = -0.1;
  expect_rejected(t, {"HarmonicDipole::length (DipoleLength) = -0.1 m", "must be finite and >= 0"});
  t.dipole.length = 0.0;
  t.dipole.axis = 3;
  expect_rejected(t, {"HarmonicDipole::axis (DipoleAxis) = 3", "0 (x), 1 (y) or 2 (z)"});
}

TEST(FdtdOptions, SnapshotStepsEveryIntervalAndTheLastStep) {
  TransientOptions t;
  t.steps = 120;
  t.snapshot_interval = 40;
  EXPECT_EQ(t.snapshot_steps(1e-12), (std::vector<int>{40, 80, 120}));
  t.steps = 130;
  EXPECT_EQ(t.snapshot_steps(1e-12), (std::vector<int>{40, 80, 120, 130}));
  t.snapshot_interval = 200;  // longer than the run: the last step only
  EXPECT_EQ(t.snapshot_steps(1e-12), (std::vector<int>{130}));
  t.snapshot_interval = 1;
  t.steps = 3;
  EXPECT_EQ(t.snapshot_steps(1e-12), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.step_count(1e-12), 3);

  // Stopping at a time: ceil(time / dt) steps (an exact multiple is not rounded up).
  const double dt = 2e-12;
  t.stop_at_time = true;
  t.snapshot_interval = 5;
  t.simulated_time = 10.5 * dt;
  EXPECT_EQ(t.step_count(dt), 11);
  EXPECT_EQ(t.snapshot_steps(dt), (std::vector<int>{5, 10, 11}));
  t.simulated_time = 10 * dt;
  EXPECT_EQ(t.step_count(dt), 10);
  EXPECT_EQ(t.snapshot_steps(dt), (std::vector<int>{5, 10}));
  t.simulated_time = 0.1 * dt;  // at least one step
  EXPECT_EQ(t.snapshot_steps(dt), (std::vector<int>{1}));
  // More than 1e8 steps: named, with the limit.
  t.simulated_time = 1.0;
  expect_parts(error_of([&] { t.snapshot_steps(dt); }),
               {"TransientOptions::simulated_time (SimulatedTime) = 1 s needs", "limit 1e8 steps"});
}

// snapshot_steps() with snapshot_interval < 1 loops for ever (s += 0) until the vector exhausts
// memory; the FDTDSolver filter calls it from RequestInformation before any validate(), so
// SnapshotInterval = 0 takes ParaView down with std::bad_alloc. Enable once snapshot_steps()
// (or step_count()) validates.
TEST(FdtdOptions, SnapshotStepsRefusesABadInterval) {
  TransientOptions t;
  t.snapshot_interval = 0;
  expect_parts(error_of([&] { t.snapshot_steps(1e-12); }), {"(SnapshotInterval) = 0 steps", ">= 1"});
}

//------------------------------------------------------------------------------
TEST(FdtdOptions, HarmonicFrequencies) {
  HarmonicOptions o;  // none
  expect_rejected(o, {"HarmonicOptions::frequencies (DFTFrequencies): none given", "need at least one (Hz)"});
  o.frequencies = {-1.0};
  expect_rejected(o, {"HarmonicOptions::frequencies (DFTFrequencies) #1 = -1 Hz", "must be finite and > 0"});
  o.frequencies = {0.0};
  expect_rejected(o, {"(DFTFrequencies) #1 = 0 Hz", "> 0"});
  o.frequencies = {900e6, kNan};
  expect_rejected(o, {"(DFTFrequencies) #2 = nan Hz", "> 0"});
  o.frequencies = {900e6, 1800e6, kInf};
  expect_rejected(o, {"(DFTFrequencies) #3 = inf Hz", "finite"});

  // Two frequencies with the same array-name label.
  o.frequencies = {900e6, 1800e6, 900.0000001e6};
  expect_rejected(o, {"HarmonicOptions::frequencies (DFTFrequencies) #1 = 9e+08 Hz and #3 = 9e+08 Hz",
                      "must differ in 6 significant digits in MHz", "both are '900MHz'"});
  o.frequencies = {1e9, 1.0000000001e9};
  expect_rejected(o, {"#1", "#2", "'1000MHz'"});
  o.frequencies = {900e6, 900.001e6, 433.92e6};  // 900MHz, 900p001MHz, 433p92MHz
  EXPECT_NO_THROW(o.validate());
  EXPECT_EQ(frequency_label(900e6), "900MHz");
  EXPECT_EQ(frequency_label(900.001e6), "900p001MHz");
  EXPECT_EQ(frequency_label(433.92e6), "433p92MHz");
}

TEST(FdtdOptions, HarmonicStoppingAndOutputs) {
  HarmonicOptions o = harmonic_900();
  for (double tol : {0.0, 1.0, 2.0, -1e-3, kNan}) {
    o.steady_state_tolerance = tol;
    expect_rejected(o, {"HarmonicOptions::steady_state_tolerance (SteadyStateTolerance) = ", "must be in (0, 1)"});
  }
  o.steady_state_tolerance = 2.0;
  expect_rejected(o, {"(SteadyStateTolerance) = 2:"});
  o.steady_state_tolerance = 0.5;
  EXPECT_NO_THROW(o.validate());

  o = harmonic_900();
  o.periods_per_check = 0;
  expect_rejected(o, {"HarmonicOptions::periods_per_check = 0", "must be >= 1"});

  o = harmonic_900();
  o.max_steps = -1;
  expect_rejected(o, {"HarmonicOptions::max_steps (MaxSteps) = -1", "must be >= 0 (0 = automatic)"});
  o.max_steps = 0;
  EXPECT_NO_THROW(o.validate());

  o = harmonic_900();
  o.fixed_steps = -1;
  expect_rejected(o, {"HarmonicOptions::fixed_steps (FixedSteps) = -1", "must be >= 0"});

  o = harmonic_900();
  o.dft_sample_interval = -2;
  expect_rejected(o, {"HarmonicOptions::dft_sample_interval (DFTSampleInterval) = -2", "must be >= 0"});

  o = harmonic_900();
  for (double step : {0.0, -2.0, 91.0, kNan}) {
    o.far_field_step_deg = step;
    expect_rejected(o, {"HarmonicOptions::far_field_step_deg (FarFieldStep) = ", " deg: must be in (0, 90]"});
  }
  o.far_field_step_deg = 0.0;
  expect_rejected(o, {"(FarFieldStep) = 0 deg"});
  o.far_field = false;  // no far field: the step does not matter
  EXPECT_NO_THROW(o.validate());
  o.far_field_step_deg = 90.0;
  o.far_field = true;
  EXPECT_NO_THROW(o.validate());

  o = harmonic_900();
  o.ntff_margin = 0;
  expect_rejected(o, {"HarmonicOptions::ntff_margin = 0 cells", "must be >= 1"});

  o = harmonic_900();
  o.progress_interval = 0;
  expect_rejected(o, {"HarmonicOptions::progress_interval (ProgressInterval) = 0", "must be >= 1"});
}

TEST(FdtdOptions, HarmonicPlaneWave) {
  HarmonicPlaneWave w;
  w.amplitude = -1.0;
  expect_rejected(w, {"HarmonicPlaneWave::amplitude (IncidentAmplitude) = -1 V/m", "must be finite and > 0"});
  w.amplitude = kInf;
  expect_rejected(w, {"(IncidentAmplitude) = inf V/m", "finite"});
  w = HarmonicPlaneWave{};
  w.psi = kInf;
  expect_rejected(w, {"HarmonicPlaneWave angles (IncidentTheta, IncidentPhi, Polarization) = (0, 0, inf) rad",
                      "must be finite"});
  w = HarmonicPlaneWave{};
  w.tfsf_margin = 0;
  expect_rejected(w, {"HarmonicPlaneWave::tfsf_margin = 0 cells", "must be >= 1"});

  // Through HarmonicOptions: checked for a plane wave, not for a dipole.
  HarmonicOptions o = harmonic_900();
  o.plane_wave.amplitude = 0.0;
  expect_rejected(o, {"HarmonicPlaneWave::amplitude (IncidentAmplitude) = 0 V/m"});
  o.source = HarmonicSource::dipole;
  EXPECT_NO_THROW(o.validate());
}

TEST(FdtdOptions, HarmonicDipole) {
  HarmonicDipole d;
  for (int axis : {-1, 3}) {
    d.axis = axis;
    const std::string value = "HarmonicDipole::axis (DipoleAxis) = " + std::to_string(axis) + ":";
    expect_rejected(d, {value.c_str(), "must be 0 (x), 1 (y) or 2 (z)"});
  }
  d = HarmonicDipole{};
  d.centre = {0, kNan, 0};
  expect_rejected(d, {"HarmonicDipole::centre (DipoleCentre) = (0, nan, 0) m", "must be finite"});
  d = HarmonicDipole{};
  d.length = -1.0;
  expect_rejected(d, {"HarmonicDipole::length (DipoleLength) = -1 m",
                      "must be finite and >= 0 (0 = half a wavelength)"});
  d.length = kInf;
  expect_rejected(d, {"(DipoleLength) = inf m", "finite"});
  d = HarmonicDipole{};
  d.accepted_power = -1.0;
  expect_rejected(d, {"HarmonicDipole::accepted_power (AcceptedPower) = -1 W", "must be finite and >= 0"});
  d.accepted_power = kNan;
  expect_rejected(d, {"(AcceptedPower) = nan W", ">= 0"});
  d = HarmonicDipole{};
  d.radiated_power = -2.0;
  expect_rejected(d, {"HarmonicDipole::radiated_power = -2 W", "must be finite and >= 0"});
  // Both powers.
  d = HarmonicDipole{};
  d.accepted_power = 1.0;
  d.radiated_power = 2.0;
  expect_rejected(d, {"HarmonicDipole::accepted_power (AcceptedPower) = 1 W", "radiated_power = 2 W", "not both"});
  // The feed current: >= 0, and > 0 when no power is given.
  d = HarmonicDipole{};
  d.feed_current = -1.0;
  expect_rejected(d, {"HarmonicDipole::feed_current (FeedCurrent) = -1 A", "must be finite and >= 0"});
  d.feed_current = kNan;
  expect_rejected(d, {"(FeedCurrent) = nan A", ">= 0"});
  d.feed_current = 0.0;
  d.accepted_power = 0.0;
  expect_rejected(d, {"HarmonicDipole::feed_current (FeedCurrent) = 0 A",
                      "must be > 0 when the accepted power (AcceptedPower) is 0"});
  d.accepted_power = 0.5;  // normalized to the power: no feed current needed
  EXPECT_NO_THROW(d.validate());
  d.accepted_power = 0.0;
  d.radiated_power = 0.5;
  EXPECT_NO_THROW(d.validate());

  // Through HarmonicOptions: checked for a dipole, not for a plane wave; a radiated power needs
  // the near-to-far box.
  HarmonicOptions o = harmonic_dipole();
  o.dipole.length = -0.1;
  expect_rejected(o, {"HarmonicDipole::length (DipoleLength) = -0.1 m", ">= 0"});
  o.source = HarmonicSource::plane_wave;
  EXPECT_NO_THROW(o.validate());
  o = harmonic_dipole();
  o.dipole.radiated_power = 1.0;
  o.far_field = false;
  expect_rejected(o, {"HarmonicDipole::radiated_power = 1 W", "near-to-far box"});
}

TEST(FdtdOptions, PointSourceAsDipole) {
  const YeeGrid g = grid_2mm();
  const std::array<double, 3> at{0.001, 0.0, -0.002};
  // Hard (and magnetic) sources have no steady-state form.
  for (PointSource::Kind k : {PointSource::Kind::hard_e, PointSource::Kind::hard_h, PointSource::Kind::magnetic_current}) {
    const std::string value = std::string("TransientOptions::source_kind (SourceType) = ") + source_kind_name(k);
    expect_parts(error_of([&] { point_source_as_dipole(k, at, {0, 0, 1}, 1.0, g); }),
                 {value.c_str(), "has no steady-state form"});
  }
  // Off-axis (or zero, or non-finite) polarizations.
  for (const std::array<double, 3>& pol : {std::array<double, 3>{1, 0, 1}, std::array<double, 3>{0, 0, 0},
                                           std::array<double, 3>{0, kNan, 1}}) {
    expect_parts(
      error_of([&] { point_source_as_dipole(PointSource::Kind::electric_current, at, pol, 1.0, g); }),
      {"TransientOptions::source_polarization (SourcePolarization) = (",
       "in the steady state a point source is a one-edge dipole and must point along x, y or z"});
  }
  expect_parts(error_of([&] { point_source_as_dipole(PointSource::Kind::electric_current, at, {1, 0, 1}, 1.0, g); }),
               {"(SourcePolarization) = (1, 0, 1):"});
  for (double a : {0.0, kNan}) {
    expect_parts(error_of([&] { point_source_as_dipole(PointSource::Kind::electric_current, at, {0, 1, 0}, a, g); }),
                 {"TransientOptions::source_amplitude (SourceAmplitude) = ", " A m: must be finite and non-zero"});
  }

  // A one-edge dipole along the polarization's axis, fed with |moment| / edge.
  YeeGrid h = g;
  h.dz = 0.004;
  const PointDipole pd = point_source_as_dipole(PointSource::Kind::electric_current, at, {0, 0, -1}, 0.01, h);
  EXPECT_EQ(pd.dipole.axis, 2);
  EXPECT_DOUBLE_EQ(pd.dipole.length, 0.004);
  EXPECT_DOUBLE_EQ(pd.dipole.feed_current, 0.01 / 0.004);
  EXPECT_EQ(pd.dipole.accepted_power, 0.0);
  EXPECT_EQ(pd.dipole.centre, at);
  EXPECT_EQ(pd.phasor_sign, -1.0f);  // a negative direction flips the phasors
  EXPECT_NO_THROW(pd.dipole.validate());
  EXPECT_EQ(point_source_as_dipole(PointSource::Kind::electric_current, at, {0, -2, 0}, -0.5, g).phasor_sign, 1.0f);
  EXPECT_EQ(point_source_as_dipole(PointSource::Kind::electric_current, at, {3, 0, 0}, 0.5, g).dipole.axis, 0);
}
