// Issue 15: the CPML below -60 dB with a high-order interior (fv24, s22, fv24_wb).
//
// Method and set-up of test_fdtd_cpml.cpp (Taflove & Hagness ch. 7): a broadband point-current
// pulse (differentiated Gaussian, -20 dB at 20 cells per wavelength) in a domain A whose outer 10
// cells are CPML; probes 2 cells inside the PML interface (normal, oblique and corner positions, E
// and H of both polarizations); the reference B is the same source and probes in a domain padded
// so that nothing from B's boundary reaches a probe within the window. R = 20 log10(max_t |A - B| /
// max_t |B|), worst probe. The scheme's wide derivative D_a is the one the CPML stretches (psi <- b
// psi + c D_a F) and the PEC behind the PML is an image plane of the wide stencil
// (vem/fdtd/schemes/fdtd_scheme.h). CPML parameters: the recommended set of test_fdtd_cpml.cpp
// (m = 4, sigma_factor = 0.75, kappa_max = 3, alpha_max = 0.05 S/m). The thin 2D set-up (periodic
// z, nz = 1: TMz and TEz at once) runs a long window (late-time low-frequency error), the 3D one a
// shorter window over faces, edges and corners; the windows are shorter than the Yee test's to
// keep the high-order CPU engine within CI time (one thread).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>

#include "cpml_reflection.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd/fdtd_engine.h"
#include <iomanip>

using namespace vem;

namespace {

using namespace vem_cpml_test;

void check_cpml(Geometry g, Backend backend, Scheme scheme, const char* label, double limit_db) {
  const auto t_start = std::chrono::steady_clock::now();
  // The window must hold the whole pulse at the probes plus its reflection: the source is done
  // at 2 t0, and the longest path source -> PML interface -> probe is the corner one.
  const Waveform w = pulse(g);
  const double corner_path = std::sqrt(g.two_d ? 2.0 : 3.0) * (g.n_small / 2 - kPml + 2);
  const double dt = scheme_design_for_factor(scheme, FdtdSetup{}.courant_factor, 20).courant * g.d / kC0;
  const double needed = (2 * w.t0 + corner_path * g.d / kC0) / dt;
  if (g.steps == 0) g.steps = int(std::ceil(1.2 * needed));
  const Run a = run_domain(g, 0, recommended_cpml(), backend, scheme);
  ASSERT_NEAR(a.dt, dt, 1e-9 * dt);
  const int pad = reference_padding(g, a.dt);
  ASSERT_GT(g.steps, needed) << "window too short to contain the reflected pulse: " << needed << " steps needed";
  const Run b = run_domain(g, pad, recommended_cpml(), backend, scheme);
  std::cout << "  " << scheme_name(scheme) << " " << label << ": domain " << g.n_small
            << (g.two_d ? "^2 x 1" : "^3") << ", reference padded by " << pad << " cells, window "
            << g.steps << " steps\n";
  const double r = reflection_db(a, b, true);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::cout << "  " << scheme_name(scheme) << " " << label << ": reflection " << r << " dB; " << secs << " s\n";
  testing::Test::RecordProperty(std::string("reflection_db_") + scheme_name(scheme), std::to_string(r));
  EXPECT_LT(r, limit_db) << scheme_name(scheme) << " " << label;
}

}  // namespace

class SchemeCpml : public testing::TestWithParam<Backend> {};

TEST_P(SchemeCpml, ThinDomainReflectionBelowMinus60dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  for (Scheme sc : {Scheme::fv24, Scheme::s22})
    check_cpml({true, 40, 1e-3, 0}, GetParam(), sc, "2D (TMz + TEz)", -60.0);
}

// s44 (Hwang & Ihm backward time differences; the CPML keeps its leap-frog psi recursion, see
// fdtd_scheme.h): its own case, as its step is half as long (twice the steps of fv24).
TEST_P(SchemeCpml, ThinDomainReflectionS44BelowMinus60dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_cpml({true, 40, 1e-3, 0}, GetParam(), Scheme::s44, "2D (TMz + TEz)", -60.0);
}

// 3D: faces, edges and corners of the PML. The reference domain (about 130^3 cells for a window
// that holds the reflected pulse) is beyond the high-order CPU engine's CI budget (one thread, one
// minute), so this case runs on the CUDA engine only (which agrees with the CPU engine to 1e-5,
// test_fdtd_schemes_cuda_agreement); the CPU case is the 2D one above.
TEST_P(SchemeCpml, ThreeDimensionalReflectionBelowMinus60dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  if (GetParam() == Backend::cpu)
    GTEST_SKIP() << "the 3D reference domain is too large for the CPU engine in CI time; runs on CUDA";
  for (Scheme sc : {Scheme::fv24, Scheme::s22, Scheme::fv24_wb, Scheme::s44})
    check_cpml({false, 40, 1e-3, 0}, GetParam(), sc, "3D", -60.0);
}

VEM_INSTANTIATE_BACKENDS(SchemeCpml);
