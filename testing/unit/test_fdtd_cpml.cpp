// Proof item 2: reflection of the 10-cell CPML.
//
// Method (Taflove & Hagness ch. 7; Roden & Gedney 2000): a broadband pulse (differentiated
// Gaussian, -20 dB at 20 cells per wavelength) from a point current source in a small domain A
// whose outer 10 cells are CPML, probes 2 cells inside the PML's inner interface (normal, oblique
// and corner positions, E and H components of both polarizations). Reference: the same source
// and probes in a domain B padded by P cells on every side, P chosen from the window length so
// that nothing coming back from B's boundary can reach any probe within the window (even at c, +5
// %). Within the window A - B at a probe is the wave reflected by A's CPML. Reported figure:
//   R = 20 log10( max_t |A(t) - B(t)| / max_t |B(t)| ), worst probe.
// Two set-ups: a thin 2D domain (periodic along z with nz = 1: TMz and TEz at once) with a long
// window, which exposes the late-time low-frequency error, and a 3D domain (faces, edges and
// corners of the PML) with a shorter window to keep CPU time modest.
//
// The defaults of CpmlParameters (m = 3, sigma_factor = 1, kappa_max = 1, alpha_max = 0) reach
// only -56 dB in the 2D set-up (1000-step window; -80 dB in the 200-step 3D window, but -60 dB
// when that window is stretched to 420 steps) because, with alpha = 0, a slowly oscillating
// low-frequency field (~0.3 GHz here) builds up near the PML corners at late time, the known
// weakness of the plain PML that the CFS alpha removes. The test therefore asserts on explicit
// parameters, the best of a scan of m in {3, 4}, sigma_factor in {0.5, 0.75, 1, 1.5}, kappa_max
// in {1, 3, 8}, alpha_max in {0.02, 0.05, 0.1} S/m on these set-ups:
//   m = 4, sigma_factor = 0.75, kappa_max = 3, alpha_max = 0.05 S/m (for 1 mm cells; at fixed
//   cells-per-wavelength alpha_max scales as 1/d)
// (-90 dB 2D, -84 dB 3D; -84 dB also in the 420-step 3D window), and records the default
// parameters' figure as a property without asserting on it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>

#include "cpml_reflection.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

using namespace vem_cpml_test;

void check_cpml(const Geometry& g, Backend backend, const char* label) {
  const auto t_start = std::chrono::steady_clock::now();
  // dt does not depend on the domain size (same cells): take it from a small operator.
  const Run a = run_domain(g, 0, recommended_cpml(), backend);
  const int pad = reference_padding(g, a.dt);
  // The window must hold the whole pulse at the probes plus its reflection: the source is done
  // at 2 t0, and the longest path source -> PML interface -> probe is the corner one,
  // sqrt(dims) (half_a + 2) cells.
  const Waveform w = pulse(g);
  const double corner_path = std::sqrt(g.two_d ? 2.0 : 3.0) * (g.n_small / 2 - kPml + 2);
  const double needed = (2 * w.t0 + corner_path * g.d / kC0) / a.dt;
  ASSERT_GT(g.steps, needed) << "window too short to contain the reflected pulse";
  const Run b = run_domain(g, pad, recommended_cpml(), backend);
  std::cout << "  " << label << ": domain " << g.n_small << (g.two_d ? "^2 x 1" : "^3")
            << ", reference padded by " << pad << " cells, window " << g.steps << " steps\n"
            << "  recommended CPML (m=4, sigma_factor=0.75, kappa_max=3, alpha_max=0.05 S/m):\n";
  const double r_rec = reflection_db(a, b, true);
  const Run a_def = run_domain(g, 0, CpmlParameters{}, backend);
  const double r_def = reflection_db(a_def, b, false);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::cout << "  " << label << ": reflection " << r_rec << " dB (recommended), " << r_def
            << " dB (CpmlParameters defaults); " << secs << " s\n";
  testing::Test::RecordProperty("reflection_db_recommended", std::to_string(r_rec));
  testing::Test::RecordProperty("reflection_db_defaults", std::to_string(r_def));
  // Measured -84 dB (3D) / -90 dB (2D) on the CPU. -70 dB is the project's aim (the brief's floor
  // is -60 dB); the margin of 14-20 dB is far above what rounding-order differences between the
  // backends can move (float32 rounding sits near -130 dB of the pulse).
  EXPECT_LT(r_rec, -70.0);
}

}  // namespace

class FdtdCpml : public testing::TestWithParam<Backend> {};

TEST_P(FdtdCpml, ThinDomainReflectionBelowMinus70dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_cpml({true, 50, 1e-3, 1000}, GetParam(), "2D (TMz + TEz)");
}

TEST_P(FdtdCpml, ThreeDimensionalReflectionBelowMinus70dB) {
  VEM_REQUIRE_BACKEND(GetParam());
  check_cpml({false, 40, 1e-3, 200}, GetParam(), "3D");
}

VEM_INSTANTIATE_BACKENDS(FdtdCpml);
