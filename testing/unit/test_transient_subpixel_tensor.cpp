// attach_subpixel_tensor (fdtd_transient.h): the transient run's hook for the full smoothed
// permittivity tensor (SubpixelOptions::full_tensor, SubpixelTensorExtension), which the ParaView
// FDTD Solver / FDTD Live call after the plane wave's TF/SF source. CPU, a few seconds.
//  - TransientSubpixelTensor.AttachedOnlyWithRows: nullptr for a diagonal medium (no rows), for an
//    indexed medium; an extension listing every row of a smoothed sphere otherwise.
//  - TransientSubpixelTensor.PlaneWaveOnSphere: TF/SF plane wave on an eps_r 4 sphere, 120 steps:
//    the helper's run equals, bit for bit, one with a SubpixelTensorExtension built by hand after
//    the TF/SF source; its fields are finite and differ from the diagonal run's (the extension
//    ran) by a correction (more than 1e-3, less than 0.5 of the peak |E|).
//  - TransientSubpixelTensor.RefusedWithS44: the helper throws the extension's s44 message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "vem/core/error.h"
#include "vem/core/subpixel_smoothing.h"
#include "vem/fdtd/extensions/subpixel_tensor.h"
#include "vem/fdtd/extensions/tfsf.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;

namespace {

constexpr int kN = 28, kPml = 6;
constexpr double kD = 0.005;

// 28^3 cells of 5 mm (6 of CPML), an eps_r 4 sphere of 5 cells' radius off the nodes, smoothed
// (full tensor or diagonal).
FdtdSetup sphere_setup(bool full, Scheme scheme = Scheme::yee) {
  FdtdSetup s;
  s.grid = {kN, kN, kN, kD, kD, kD};
  s.grid.origin = {-0.5 * kN * kD, -0.5 * kN * kD, -0.5 * kN * kD};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, kPml);
  s.scheme = scheme;
  s.materials = {Material::vacuum(), Material::isotropic("sphere", 4.0)};
  SubpixelOptions so;
  so.full_tensor = full;
  s.material_mode = MaterialMode::coefficient_array;
  s.medium = subpixel_smoothed_medium(s.grid, s.materials, SphereGeometry({0.0011, -0.0007, 0.0004}, 5 * kD, 1, 0), so);
  return s;
}

PlaneWave wave() {
  PlaneWave w;
  w.theta = 0.4;
  w.phi = 0.3;
  w.psi = 0.2;
  w.waveform = Waveform::modulated_gaussian(3e9, 3e9);
  return w;
}

struct Fields {
  std::vector<std::vector<float>> e;  // Ex, Ey, Ez
};

// The transient set-up of the plugin (vemFDTDRun.cxx): engine, TF/SF, then the tensor; 120 steps.
// how: 0 attach_subpixel_tensor, 1 a SubpixelTensorExtension by hand, 2 none.
Fields run(const FdtdSetup& s, int how, bool* attached = nullptr) {
  const FdtdOperator op(s);
  auto eng = make_engine(op, Backend::cpu);
  TfsfSource tfsf(*eng, wave(), automatic_tfsf_box(s.grid, s.boundaries, 2));
  std::unique_ptr<SubpixelTensorExtension> x;
  if (how == 0) x = attach_subpixel_tensor(*eng);
  if (how == 1) x = std::make_unique<SubpixelTensorExtension>(*eng);
  if (attached) *attached = x != nullptr;
  eng->run(120);
  Fields f;
  for (int c = 0; c < 3; ++c) f.e.push_back(eng->field(Component(c)));
  return f;
}

}  // namespace

TEST(TransientSubpixelTensor, AttachedOnlyWithRows) {
  const FdtdSetup full = sphere_setup(true), diag = sphere_setup(false);
  ASSERT_GT(full.medium.inverse_eps_rows.size(), 100u);
  EXPECT_TRUE(diag.medium.inverse_eps_rows.empty());
  {
    const FdtdOperator op(diag);
    auto eng = make_engine(op, Backend::cpu);
    EXPECT_EQ(attach_subpixel_tensor(*eng), nullptr) << "a diagonal medium has nothing to attach";
  }
  {
    const FdtdOperator op(full);
    auto eng = make_engine(op, Backend::cpu);
    auto x = attach_subpixel_tensor(*eng);
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->list().rows_used + x->list().rows_dropped, std::int64_t(full.medium.inverse_eps_rows.size()));
    EXPECT_GT(x->list().rows_used, 0);
  }
  {
    // Rows on an indexed medium are not applied (as run_fdtd_harmonic): nothing attached.
    FdtdSetup s = sphere_setup(false);
    s.material_mode = MaterialMode::indexed;
    s.medium = PerCellMedium{};
    s.material_index.assign(std::size_t(kN) * kN * kN, 0);
    s.medium.inverse_eps_rows = full.medium.inverse_eps_rows;
    const FdtdOperator op(s);
    auto eng = make_engine(op, Backend::cpu);
    EXPECT_EQ(attach_subpixel_tensor(*eng), nullptr);
  }
}

TEST(TransientSubpixelTensor, PlaneWaveOnSphere) {
  const FdtdSetup full = sphere_setup(true), diag = sphere_setup(false);
  bool attached = false, none = true;
  const Fields a = run(full, 0, &attached), b = run(full, 1), d = run(diag, 0, &none);
  EXPECT_TRUE(attached);
  EXPECT_FALSE(none);
  double peak = 0, diff = 0;
  for (int c = 0; c < 3; ++c) {
    ASSERT_EQ(a.e[c].size(), b.e[c].size());
    for (std::size_t q = 0; q < a.e[c].size(); ++q) {
      ASSERT_TRUE(std::isfinite(a.e[c][q])) << "component " << c << " sample " << q;
      ASSERT_EQ(a.e[c][q], b.e[c][q]) << "helper vs the extension by hand, component " << c << " sample " << q;
      peak = std::max(peak, double(std::fabs(a.e[c][q])));
      diff = std::max(diff, double(std::fabs(a.e[c][q] - d.e[c][q])));
    }
  }
  EXPECT_GT(peak, 0.1) << "the plane wave reached the grid";
  EXPECT_GT(diff, 1e-3 * peak) << "the full tensor changes the fields near the sphere (max |diff| " << diff
                               << " of peak " << peak << ")";
  EXPECT_LT(diff, 0.5 * peak) << "a correction, not a different model";
}

TEST(TransientSubpixelTensor, RefusedWithS44) {
  const FdtdSetup s = sphere_setup(true, Scheme::s44);
  const FdtdOperator op(s);
  auto eng = make_engine(op, Backend::cpu);
  try {
    auto x = attach_subpixel_tensor(*eng);
    FAIL() << "attach_subpixel_tensor accepted scheme s44";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s44"), std::string::npos) << e.what();
  }
}
