// 2D FDTD proof 2: CPML reflection. A broadband soft line source (differentiated Gaussian, -20 dB
// at 30 GHz, 10 cells per wavelength there; dx = 1 mm, dy = 1.2 mm) in a 60 x 52 grid with a
// 10-cell CPML (the default CpmlParameters) on all four edges; probes 2 cells inside the PML
// interface next to every edge and two corners. The reference run has the same source and
// probes in a grid padded by 280 cells on each side, so that nothing it reflects reaches a probe
// within the 700 steps recorded. The CPML's error is the largest difference between the two
// records over all probes and steps, relative to the largest reference value: it must be below
// -60 dB, for TM (Ez source) and TE (Ex + Ey source).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd2d/fdtd2d_engine.h"

using namespace vem;
using namespace vem_test;

namespace {

constexpr int kSteps = 700;

ProbeRecord run(Polarization2D pol, int pad, Backend backend) {
  Fdtd2dSetup s;
  s.grid.nx = 60 + 2 * pad;
  s.grid.ny = 52 + 2 * pad;
  s.grid.dx = 1.0e-3;
  s.grid.dy = 1.2e-3;
  s.polarization = pol;
  s.boundaries = BoundarySpec2D::all(BoundaryType::cpml, 10);
  s.materials = {Material::vacuum()};
  PointSource src;
  src.i = 25 + pad;
  src.j = 21 + pad;
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(30e9);
  src.direction = pol == Polarization2D::tm ? std::array<double, 3>{0, 0, 1} : std::array<double, 3>{1, 1, 0};
  s.sources = {src};
  const int pts[6][2] = {{12, 21}, {47, 30}, {25, 12}, {33, 39}, {12, 12}, {47, 39}};
  const auto comps = polarization_components(pol);
  for (int p = 0; p < 6; ++p)
    for (Component c : comps)
      s.probes.push_back({std::string(component_name(c)) + std::to_string(p), c, pts[p][0] + pad, pts[p][1] + pad, 0});
  const ThreadsForGrid threads(s.grid.cell_count());
  Fdtd2dOperator op(s);
  auto eng = make_fdtd2d_engine(op, backend);
  eng->run(kSteps, {}, 1000);
  return eng->probes();
}

double reflection_db(Polarization2D pol, Backend backend) {
  const auto t0 = std::chrono::steady_clock::now();
  const ProbeRecord test = run(pol, 0, backend);
  const ProbeRecord ref = run(pol, 280, backend);
  double peak = 0, err = 0;
  for (std::size_t p = 0; p < ref.values.size(); ++p) {
    // E and H in comparable units: H scaled by eta0.
    const double scale = is_electric(ref.components[p]) ? 1.0 : kEta0;
    for (int s = 0; s < kSteps; ++s) {
      peak = std::max(peak, scale * std::fabs(ref.values[p][s]));
      err = std::max(err, scale * std::fabs(double(test.values[p][s]) - ref.values[p][s]));
    }
  }
  const double db = 20 * std::log10(err / peak);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "  " << polarization_name(pol) << ": peak " << peak << ", largest difference " << err << " -> " << db
            << " dB (" << secs << " s)\n";
  testing::Test::RecordProperty("reflection_db", std::to_string(db));
  EXPECT_GT(peak, 0.0);
  return db;
}

}  // namespace

class Fdtd2dCpml : public testing::TestWithParam<Backend> {};

TEST_P(Fdtd2dCpml, TmReflectionBelowMinus60dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  EXPECT_LT(reflection_db(Polarization2D::tm, GetParam()), -60.0);
}

TEST_P(Fdtd2dCpml, TeReflectionBelowMinus60dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  EXPECT_LT(reflection_db(Polarization2D::te, GetParam()), -60.0);
}

VEM_INSTANTIATE_BACKENDS(Fdtd2dCpml);
