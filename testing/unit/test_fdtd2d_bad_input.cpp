// 2D FDTD proof 5: bad input. Every check of Fdtd2dSetup::validate() (and of the operator, the
// engine factory and the extensions) throws vem::Error naming the member and the value; a valid
// setup passes. The operator validates too (its constructor throws the same message).
#include <cmath>
#include <functional>

#include "option_checks.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd2d/extensions/dft_monitor2d.h"
#include "vem/fdtd2d/extensions/near_to_far2d.h"
#include "vem/fdtd2d/extensions/tfsf2d.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

using namespace vem;
using namespace vem_test;

namespace {

Fdtd2dSetup good() {
  Fdtd2dSetup s;
  s.grid.nx = 31;
  s.grid.ny = 23;
  s.grid.dx = 1e-3;
  s.grid.dy = 1.5e-3;
  s.boundaries = BoundarySpec2D::all(BoundaryType::cpml, 6);
  s.materials = {Material::vacuum(), Material::isotropic("glass", 4.0, 0.01)};
  s.material_index.assign(s.grid.cell_count(), 0);
  PointSource p;
  p.i = 10;
  p.j = 10;
  p.waveform = Waveform::gaussian_for_bandwidth(10e9);
  s.sources = {p};
  s.probes = {{"ez", Component::Ez, 12, 12, 0}};
  return s;
}

// Both validate() and the operator reject `s` with a message naming every part.
void rejected(const Fdtd2dSetup& s, std::initializer_list<const char*> parts) {
  expect_rejected(s, parts);
  SCOPED_TRACE("operator");
  expect_parts(error_of([&] { Fdtd2dOperator op(s); }), parts);
}

}  // namespace

TEST(Fdtd2dBadInput, ValidSetupPasses) {
  EXPECT_NO_THROW(good().validate());
  EXPECT_NO_THROW(Fdtd2dOperator op(good()));
}

TEST(Fdtd2dBadInput, Grid) {
  auto s = good(); s.grid.nx = 0; rejected(s, {"Fdtd2dSetup::grid.nx", "= 0", ">= 1"});
  s = good(); s.grid.ny = -3; rejected(s, {"Fdtd2dSetup::grid.ny", "= -3"});
  s = good(); s.grid.dx = 0; rejected(s, {"Fdtd2dSetup::grid.dx", "= 0", "> 0"});
  s = good(); s.grid.dy = kNan; rejected(s, {"Fdtd2dSetup::grid.dy", "nan"});
  s = good(); s.grid.origin[1] = kInf; rejected(s, {"Fdtd2dSetup::grid.origin[1]", "inf"});
  s = good(); s.grid.nx = 200000; s.grid.ny = 200000; s.boundaries = BoundarySpec2D::all(BoundaryType::pec);
  s.material_index.clear(); rejected(s, {"Fdtd2dSetup::grid", "200000 x 200000", "2^31"});
}

TEST(Fdtd2dBadInput, TimeStep) {
  auto s = good(); s.dt = 1.0; rejected(s, {"Fdtd2dSetup::dt", "= 1", "Courant limit"});
  s = good(); s.dt = -1e-12; rejected(s, {"Fdtd2dSetup::dt", "-1e-12", ">= 0"});
  s = good(); s.courant_factor = 1.5; rejected(s, {"Fdtd2dSetup::courant_factor", "= 1.5", "(0, 1]"});
  s = good(); s.courant_factor = 0; rejected(s, {"Fdtd2dSetup::courant_factor", "= 0"});
}

TEST(Fdtd2dBadInput, Boundaries) {
  auto s = good(); s.boundaries.face[1] = BoundaryType::subdomain;
  rejected(s, {"Fdtd2dSetup::boundaries.face[1]", "subdomain", "not supported in 2D"});
  s = good(); s.boundaries.face[2] = BoundaryType::periodic;
  rejected(s, {"Fdtd2dSetup::boundaries.face[3]", "cpml", "periodic"});
  s = good(); s.boundaries.cpml[0].thickness = 0; rejected(s, {"Fdtd2dSetup::boundaries.cpml[0].thickness", "= 0"});
  s = good(); s.boundaries.cpml[3].kappa_max = 0.5; rejected(s, {"cpml[3].kappa_max", "= 0.5", ">= 1"});
  s = good(); s.boundaries.cpml[2].sigma_factor = -1; rejected(s, {"cpml[2].sigma_factor", "= -1"});
  s = good(); s.boundaries.cpml[1].alpha_max = kNan; rejected(s, {"cpml[1].alpha_max", "nan"});
  s = good(); s.boundaries.cpml[0].grading_order = -2; rejected(s, {"cpml[0].grading_order", "= -2"});
  s = good(); s.boundaries.cpml[0].match_frequency = 1e9; rejected(s, {"cpml[0].alpha_max", "match_frequency"});
  s = good(); s.boundaries.cpml[2].thickness = 17; rejected(s, {"thickness along y", "= 23", "grid.ny = 23"});
}

TEST(Fdtd2dBadInput, Materials) {
  auto s = good(); s.materials.clear(); rejected(s, {"Fdtd2dSetup::materials.size() = 0"});
  s = good(); s.materials[1].eps_r[2] = -4; rejected(s, {"Fdtd2dSetup::materials[1]", "glass", "-4"});
  s = good(); s.materials[0].sigma_m[0] = kNan; rejected(s, {"Fdtd2dSetup::materials[0]", "nan"});
  s = good(); s.material_index.resize(10); rejected(s, {"Fdtd2dSetup::material_index.size() = 10", "713"});
  s = good(); s.material_index[40] = 2;
  rejected(s, {"Fdtd2dSetup::material_index[40] = 2", "cell 9, 1", "materials.size() = 2"});
  s = good(); s.material_mode = MaterialMode::coefficient_array;
  rejected(s, {"Fdtd2dSetup::medium.eps_r = {}"});
  s.medium.eps_r = {std::vector<float>(s.grid.cell_count(), 2.0f), std::vector<float>(s.grid.cell_count(), 2.0f)};
  rejected(s, {"Fdtd2dSetup::medium.eps_r.size() = 2"});
  s.medium.eps_r = {std::vector<float>(100, 2.0f)};
  rejected(s, {"Fdtd2dSetup::medium.eps_r[0].size() = 100", "713"});
  s.medium.eps_r = {std::vector<float>(s.grid.cell_count(), 2.0f)};
  s.medium.eps_r[0][33] = 0.0f; rejected(s, {"Fdtd2dSetup::medium.eps_r[0][33] = 0", "> 0"});
  s.medium.eps_r[0][33] = 2.0f;
  s.medium.sigma_e = {std::vector<float>(s.grid.cell_count(), -1.0f)};
  rejected(s, {"Fdtd2dSetup::medium.sigma_e[0][0] = -1", ">= 0"});
  s.medium.sigma_e.clear();
  s.medium.mu_r = {std::vector<float>(s.grid.cell_count(), 1.0f)};
  s.medium.mu_r[0][5] = std::nanf("");
  rejected(s, {"Fdtd2dSetup::medium.mu_r[0][5] = nan"});
}

TEST(Fdtd2dBadInput, SourcesAndProbes) {
  auto s = good(); s.sources[0].k = 1; rejected(s, {"Fdtd2dSetup::sources[0].k = 1", "0 in 2D"});
  s = good(); s.sources[0].i = 32; rejected(s, {"Fdtd2dSetup::sources[0].i = 32", "nx = 31"});
  s = good(); s.sources[0].j = -1; rejected(s, {"Fdtd2dSetup::sources[0].j = -1"});
  s = good(); s.sources[0].amplitude = kInf; rejected(s, {"Fdtd2dSetup::sources[0].amplitude = inf"});
  s = good(); s.sources[0].direction = {0, 0, 0}; rejected(s, {"Fdtd2dSetup::sources[0].direction = (0, 0, 0)"});
  s = good(); s.sources[0].direction = {1, 0, 0};
  rejected(s, {"Fdtd2dSetup::sources[0].direction = (1, 0, 0)", "TM", "(z)"});
  s = good(); s.polarization = Polarization2D::te; s.probes.clear();
  rejected(s, {"Fdtd2dSetup::sources[0].direction = (0, 0, 1)", "TE", "x or y"});
  s = good(); s.sources[0].waveform.tau = -1; rejected(s, {"Fdtd2dSetup::sources[0].waveform"});
  s = good(); s.sources[0].i = 0;  // Ez on the CPML's terminating PEC
  expect_parts(error_of([&] { Fdtd2dOperator op(s); }), {"Fdtd2dSetup::sources[0]", "(0, 10)", "no updated sample"});
  s = good(); s.probes[0].component = Component::Hz;
  rejected(s, {"Fdtd2dSetup::probes[0].component = Hz", "TM", "Ez, Hx, Hy"});
  s = good(); s.probes[0].component = Component::Hx; s.probes[0].j = 23;
  rejected(s, {"Fdtd2dSetup::probes[0].j = 23", "[0, 22]", "Hx"});
  s = good(); s.probes[0].k = 2; rejected(s, {"Fdtd2dSetup::probes[0].k = 2"});
}

TEST(Fdtd2dBadInput, EngineAndExtensions) {
  Fdtd2dOperator op(good());
  auto eng = make_fdtd2d_engine(op, Backend::cpu);
  expect_parts(error_of([&] { eng->field(Component::Hz); }), {"Hz", "TM"});
  expect_parts(error_of([&] { eng->set_field(Component::Ez, std::vector<float>(5)); }), {"5 values", "(nx+1)(ny+1)"});
  expect_parts(error_of([&] { eng->run(-1); }), {"steps = -1"});
  expect_parts(error_of([&] { DftMonitor2d m(*eng, {}, {Component::Ez}); }), {"frequencies = {}"});
  expect_parts(error_of([&] { DftMonitor2d m(*eng, {-1e9}, {Component::Ez}); }), {"frequencies[0] = -1e+09"});
  expect_parts(error_of([&] { DftMonitor2d m(*eng, {1e9}, {Component::Ex}); }), {"components[0] = Ex", "TM"});
  DftBox2D bad_box;
  bad_box.lo = {5, 0};
  bad_box.hi = {40, -1};
  expect_parts(error_of([&] { DftMonitor2d m(*eng, {1e9}, {Component::Ez}, bad_box); }), {"box x range [5, 40]", "[0, 31]"});
  expect_parts(error_of([&] { DftMonitor2d m(*eng, {1e9}, {Component::Ez}, {}, 0); }), {"sample_interval = 0"});
  {
    DftMonitor2d m(*eng, {1e9}, {Component::Ez});
    expect_parts(error_of([&] { m.phasor(Component::Ez, 0); }), {"no steady-state window"});
    expect_parts(error_of([&] { m.spectrum(Component::Ez, 3); }), {"frequency index 3"});
  }
  PlaneWave2D pw;
  pw.waveform = Waveform::modulated_gaussian(10e9, 5e9);
  TfsfBox2D box;
  box.lo = {7, 9};
  box.hi = {20, 14};
  expect_parts(error_of([&] { Tfsf2dSource t(*eng, pw, box); }), {"TfsfBox2D x range [7, 20]", "[8, 23]"});
  box.lo = {9, 9};
  pw.phi = kNan;
  expect_parts(error_of([&] { Tfsf2dSource t(*eng, pw, box); }), {"PlaneWave2D::phi = nan"});
  pw.phi = 0;
  pw.waveform = Waveform::gaussian_for_bandwidth(1e9);
  expect_parts(error_of([&] { Tfsf2dSource t(*eng, pw, box); }), {"design_frequency = 0"});
  pw.design_frequency = 400e9;
  expect_parts(error_of([&] { Tfsf2dSource t(*eng, pw, box); }), {"not resolved"});
  expect_parts(error_of([&] { automatic_tfsf_box_2d(op.grid(), op.setup().boundaries, 6); }), {"too small along y"});
  NearToFarContour2D c;
  c.lo = {0, 2};
  c.hi = {10, 12};
  const std::vector<std::complex<float>> z(std::size_t(32) * 24);
  expect_parts(error_of([&] { near_to_far_2d(op, c, 1e9, {z, z, z}, {0.0}); }), {"contour x range [0, 10]"});
  c.lo = {2, 2};
  expect_parts(error_of([&] { near_to_far_2d(op, c, 1e9, {z, z, std::vector<std::complex<float>>(3)}, {0.0}); }),
               {"phasors[2].size() = 3"});
  expect_parts(error_of([&] { polarization_from_name("TX"); }), {"'TX'"});
}

class Fdtd2dBackends : public testing::TestWithParam<Backend> {};

// The factory: the CPU engine always; CUDA only with a usable device (skips visibly here).
TEST_P(Fdtd2dBackends, FactoryGivesTheBackendAsked) {
  VEM_REQUIRE_BACKEND(GetParam());
  const ThreadsForGrid threads(31 * 23);
  Fdtd2dOperator op(good());
  auto eng = make_fdtd2d_engine(op, GetParam());
  EXPECT_EQ(eng->backend().substr(0, 3), GetParam() == Backend::cpu ? "cpu" : "cud");
  eng->run(20);
  EXPECT_EQ(eng->steps_completed(), 20);
  EXPECT_GT(eng->field_energy(), 0.0);
}

VEM_INSTANTIATE_BACKENDS(Fdtd2dBackends);
