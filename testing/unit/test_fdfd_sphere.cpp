// Validation of the scattered-field FDFD solver against the Mie series (mie.h), through the
// near-to-far transform (near_to_far.h).
//
// The paper's case (Demir 2012, sec. 5.1): a sphere of radius 7.2 cm, eps_r = 4, in a 32 cm
// cubic domain, x-polarized plane wave along +z at 1 GHz. x = k0 a = 1.509 sits just below the
// first magnetic-dipole resonance of the sphere (m x ~ pi), so the RCS is sensitive to the
// effective electrical size: the Yee grid's numerical dispersion (phase error ~ (k d)^2 / 24
// inside the dielectric) dominates the error, which falls roughly with d^2.
//  - CI (CPU): 1 cm cells (48^3 with an 8-cell PML). Measured: RCS within 1.2 dB (E plane) and
//    0.3 dB (H plane, outside the deep null near 135 deg) of Mie, sigma_sca +2.4 %. Asserted:
//    1.5 dB where Mie is within 15 dB of the plane's maximum, sigma_sca within 4 %.
//  - GPU (skipped without CUDA): the paper's 4 mm cells (80^3 + 10-cell PML): within 1 dB
//    outside deep nulls, sigma_sca within 3 % (the task's acceptance numbers).
// Lossy sphere (eps_r = 4, sigma = 0.2 S/m, a = 6 cm): internal |E| against the Mie internal
// field, and the absorption cross-section from the solution's own dissipation, 1/2 w eps0 eps''
// |E|^2 summed over the E samples, cross-checked by the net Poynting flux of the total field.
// Measured (edge-averaged materials): sigma_abs +30 % / +9.4 % / +5.6 % and sigma_sca +18 % /
// +4.1 % / +0.9 % at 2 / 1 / 0.75 cm cells (discretization error, converging); interior |E_x|
// rms error 3 % at 1 cm. Asserted at 1 cm: |E| rms 5 %, sigma_abs 12 %, sigma_sca 6 %.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#include "fdfd_test_problems.h"
#include "test_support.h"
#include "vem/fdfd/fdfd_solver.h"
#include "vem/models/mie.h"
#include "vem/fdtd/extensions/near_to_far.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;
using cd = std::complex<double>;

namespace {

constexpr double kDeg = kPi / 180.0;

// Cubic domain of `inner` metres plus `pml` cells per face; sphere of radius a at the centre,
// eps_c = eps - j sigma / (w eps0); edge-averaged materials.
struct RcsCheck {
  double worst_e = 0, worst_h = 0;  // dB, where checked
  double sigma_ff = 0, sigma_flux = 0;
};

// Compare E- and H-plane RCS every 5 degrees where Mie is within `window` dB of the plane's
// maximum; prints the table.
RcsCheck compare_with_mie(const FdfdProblem& p, const FdfdOperator& op, const FdfdSolution& s,
                          const MieSphere& mie, int gap, double window) {
  const FdfdFields f = fdfd_fields(op, s.e_scat);
  const int pml = p.pml.thickness[0];
  NtffBox box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = pml + gap;
    box.hi[a] = p.grid.n()[a] - pml - gap;
  }
  const NearToFarTransform nf(p.grid, p.frequency, f.e_scat, f.h_scat, box, phase_origin(p));
  RcsCheck r;
  double emax = -1e9, hmax = -1e9;
  for (int t = 0; t <= 180; t += 5) {
    emax = std::max(emax, 10 * std::log10(mie.rcs_e_plane(t * kDeg)));
    hmax = std::max(hmax, 10 * std::log10(mie.rcs_h_plane(t * kDeg)));
  }
  std::printf("  theta   E: FDFD   Mie    diff |  H: FDFD   Mie    diff  (dBsm)\n");
  for (int t = 0; t <= 180; t += 5) {
    const double th = t * kDeg;
    const double fe = 10 * std::log10(nf.rcs(th, 0.0)), me = 10 * std::log10(mie.rcs_e_plane(th));
    const double fh = 10 * std::log10(nf.rcs(th, 0.5 * kPi)),
                 mh = 10 * std::log10(mie.rcs_h_plane(th));
    const bool ce = me > emax - window, ch = mh > hmax - window;
    if (ce) r.worst_e = std::max(r.worst_e, std::fabs(fe - me));
    if (ch) r.worst_h = std::max(r.worst_h, std::fabs(fh - mh));
    if (t % 15 == 0)
      std::printf("  %4d  %7.2f %7.2f %+5.2f%s | %7.2f %7.2f %+5.2f%s\n", t, fe, me, fe - me,
                  ce ? " " : "*", fh, mh, fh - mh, ch ? " " : "*");
  }
  r.sigma_ff = nf.scattering_cross_section();
  r.sigma_flux = nf.power_out() / (0.5 / kEta0);
  std::printf("  (* = deep null, not checked)  worst |dB| E %.2f H %.2f; sigma_sca: far field %.5g "
              "(%+.2f %%), flux %.5g (%+.2f %%), Mie %.5g m^2\n",
              r.worst_e, r.worst_h, r.sigma_ff, 100 * (r.sigma_ff / mie.sigma_sca() - 1),
              r.sigma_flux, 100 * (r.sigma_flux / mie.sigma_sca() - 1), mie.sigma_sca());
  return r;
}

}  // namespace

TEST(FdfdSphere, DielectricSphereRcsMatchesMieOnACoarseGrid) {
  const FdfdProblem p = vem_test::dielectric_sphere_problem(0.01, 8, 0.32, 0.072, 4.0, 0.0);
  const FdfdOperator op(p);
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.method = FdfdMethod::cocg;
  o.tolerance = 1e-5;
  const FdfdSolution s = solve_fdfd(op, o);
  ASSERT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  std::printf("  %d^3 cells, %s %s: %d iterations, %.2f s, true residual %.2e\n", p.grid.nx,
              fdfd_name(s.stats.method), s.stats.backend.c_str(), s.stats.iterations,
              s.stats.solve_seconds, s.stats.true_relative_residual);
  EXPECT_LT(s.stats.true_relative_residual, 2e-5);
  const MieSphere mie(0.072, 1e9, 4.0);
  const RcsCheck r = compare_with_mie(p, op, s, mie, 3, 15.0);
  EXPECT_LT(r.worst_e, 1.5);
  EXPECT_LT(r.worst_h, 1.5);
  EXPECT_NEAR(r.sigma_ff / mie.sigma_sca(), 1.0, 0.04);
  EXPECT_NEAR(r.sigma_flux / mie.sigma_sca(), 1.0, 0.04);
}

TEST(FdfdSphere, LossySphereInternalFieldAndAbsorptionMatchMie) {
  // eps_r = 4, sigma = 0.2 S/m at 1 GHz (eps_c = 4 - 3.6j, skin depth ~ 5.7 cm), a = 6 cm,
  // 1 cm cells.
  const double a = 0.06, sigma = 0.2, h = 0.01;
  const FdfdProblem p = vem_test::dielectric_sphere_problem(h, 8, 0.28, a, 4.0, sigma);
  const FdfdOperator op(p);
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.method = FdfdMethod::cocg;
  o.tolerance = 1e-6;
  const FdfdSolution s = solve_fdfd(op, o);
  ASSERT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  const cd eps(4.0, -sigma / (2 * kPi * 1e9 * kEps0));
  const MieSphere mie(a, 1e9, eps);
  const FdfdFields f = fdfd_fields(op, s.e_scat);
  // |E| of the total field at E samples well inside the sphere (> 1.5 cells from the surface),
  // per component, against Mie at the same positions.
  const auto org = phase_origin(p);
  double num = 0, den = 0, worst = 0;
  int count = 0;
  for (int k = 0; k < p.grid.nz; ++k)
    for (int j = 0; j < p.grid.ny; ++j)
      for (int i = 0; i < p.grid.nx; ++i) {
        const auto r = p.grid.position(Component::Ex, i, j, k);
        const std::array<double, 3> q{r[0] - org[0], r[1] - org[1], r[2] - org[2]};
        if (std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) > a - 1.5 * h) continue;
        const cd fd = f.e_total[op.linear(i, j, k)];
        const cd mi = mie.e_field(q)[0];
        num += std::norm(std::abs(fd) - std::abs(mi));
        den += std::norm(mi);
        worst = std::max(worst, std::fabs(std::abs(fd) - std::abs(mi)) / std::abs(mi));
        ++count;
      }
  const double rms = std::sqrt(num / den);
  // Absorbed power from the solution itself: 1/2 w eps0 sum eps'' |E|^2 dV over the E samples.
  double pabs = 0;
  const double dv = h * h * h, w = 2 * kPi * p.frequency;
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < p.grid.nz; ++k)
      for (int j = 0; j < p.grid.ny; ++j)
        for (int i = 0; i < p.grid.nx; ++i) {
          const double loss = -op.eps_at(c, i, j, k).imag();
          if (loss > 0)
            pabs += 0.5 * w * kEps0 * loss * std::norm(f.e_total[c * op.cells() + op.linear(i, j, k)]) * dv;
        }
  const double sigma_abs = pabs / (0.5 / kEta0);
  // Absorption: minus the net power of the total field through a box around the sphere.
  NtffBox box;
  for (int ax = 0; ax < 3; ++ax) {
    box.lo[ax] = 8 + 3;
    box.hi[ax] = p.grid.n()[ax] - 8 - 3;
  }
  const NearToFarTransform tot(p.grid, p.frequency, f.e_total, f.h_total, box, org);
  const double sigma_abs_flux = -tot.power_out() / (0.5 / kEta0);
  const NearToFarTransform sca(p.grid, p.frequency, f.e_scat, f.h_scat, box, org);
  const double sigma_sca = sca.scattering_cross_section();
  std::printf("  lossy sphere: %d interior E_x samples, |E_x| rms rel. error %.3f (worst %.3f); "
              "sigma_abs %.4g (flux %.4g) vs Mie %.4g (%+.1f %%), sigma_sca %.4g vs %.4g "
              "(%+.1f %%); %d its\n",
              count, rms, worst, sigma_abs, sigma_abs_flux, mie.sigma_abs(),
              100 * (sigma_abs / mie.sigma_abs() - 1), sigma_sca, mie.sigma_sca(),
              100 * (sigma_sca / mie.sigma_sca() - 1), s.stats.iterations);
  EXPECT_GT(count, 200);
  EXPECT_LT(rms, 0.05);
  EXPECT_NEAR(sigma_abs / mie.sigma_abs(), 1.0, 0.12);
  EXPECT_NEAR(sigma_abs_flux / sigma_abs, 1.0, 0.02);  // Poynting theorem of the discrete fields
  EXPECT_NEAR(sigma_sca / mie.sigma_sca(), 1.0, 0.06);
}

TEST(FdfdSphere, ObliqueIncidenceGivesTheSameCrossSection) {
  // Rotation invariance of the sphere: sigma_sca and the forward RCS do not depend on the
  // incidence direction and polarization (up to grid anisotropy). Coarse 2 cm grid.
  FdfdProblem p = vem_test::dielectric_sphere_problem(0.02, 6, 0.32, 0.072, 4.0, 0.0);
  FdfdSolverOptions o;
  o.backend = Backend::cpu;
  o.method = FdfdMethod::cocg;
  o.tolerance = 1e-5;
  double sig[2], fwd[2];
  for (int run = 0; run < 2; ++run) {
    if (run == 1) {
      p.incident.theta = 60 * kDeg;
      p.incident.phi = 30 * kDeg;
      p.incident.polarization = 45 * kDeg;
    }
    const FdfdOperator op(p);
    const FdfdSolution s = solve_fdfd(op, o);
    ASSERT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
    const FdfdFields f = fdfd_fields(op, s.e_scat);
    NtffBox box;
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = 8;
      box.hi[a] = p.grid.n()[a] - 8;
    }
    const NearToFarTransform nf(p.grid, p.frequency, f.e_scat, f.h_scat, box, phase_origin(p));
    sig[run] = nf.scattering_cross_section();
    fwd[run] = nf.rcs(p.incident.theta, p.incident.phi);
  }
  std::printf("  sigma_sca normal %.5g oblique %.5g; forward RCS %.5g / %.5g m^2\n", sig[0],
              sig[1], fwd[0], fwd[1]);
  EXPECT_NEAR(sig[1] / sig[0], 1.0, 0.03);
  EXPECT_NEAR(fwd[1] / fwd[0], 1.0, 0.05);
}

// The paper's resolution (4 mm, 80^3 + PML = 100^3 cells, 3e6 unknowns): GPU only.
class FdfdSpherePaper : public testing::TestWithParam<FdfdPrecision> {};

TEST_P(FdfdSpherePaper, FourMillimetreSphereWithin1dBAnd3Percent) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdfdProblem p = vem_test::dielectric_sphere_problem(0.004, 10, 0.32, 0.072, 4.0, 0.0);
  const FdfdOperator op(p);
  FdfdSolverOptions o;
  o.backend = Backend::cuda;
  o.method = FdfdMethod::automatic;  // COCG in complex128, BiCGSTAB in complex64
  o.blas = FdfdBlas::fused;
  o.precision = GetParam();
  // complex64 attains a true residual of ~1e-4 (fdfd_solver.h): ask for what it can reach.
  o.tolerance = GetParam() == FdfdPrecision::complex128 ? 1e-6 : 1e-4;
  o.max_iterations = 20000;
  const FdfdSolution s = solve_fdfd(op, o);
  ASSERT_EQ(s.stats.status, FdfdStatus::converged) << s.warning;
  std::printf("  %d^3 cells on %s (%s): %d iterations, %.2f s, true residual %.2e\n", p.grid.nx,
              s.stats.backend.c_str(), fdfd_name(o.precision), s.stats.iterations,
              s.stats.solve_seconds, s.stats.true_relative_residual);
  const MieSphere mie(0.072, 1e9, 4.0);
  const RcsCheck r = compare_with_mie(p, op, s, mie, 4, 15.0);
  EXPECT_LT(r.worst_e, 1.0);
  EXPECT_LT(r.worst_h, 1.0);
  EXPECT_NEAR(r.sigma_ff / mie.sigma_sca(), 1.0, 0.03);
  EXPECT_NEAR(r.sigma_flux / mie.sigma_sca(), 1.0, 0.03);
}

INSTANTIATE_TEST_SUITE_P(Gpu, FdfdSpherePaper,
                         testing::Values(FdfdPrecision::complex128, FdfdPrecision::complex64),
                         [](const testing::TestParamInfo<FdfdPrecision>& i) {
                           return std::string(fdfd_name(i.param));
                         });
