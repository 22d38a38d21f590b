// Running DFT monitors (vem/fdtd/extensions/dft_monitor.h).
//
// 1. Pulse: a z dipole radiates a differentiated Gaussian in a small CPML box; probes record E and
//    H components. The monitor's accumulated spectrum at the probe samples must equal the DTFT of
//    the probe records taken with the documented sample times (E at s dt, H at (s - 1/2) dt),
//    to float round-off (2e-4 relative to the largest value). The monitor is over a sub-box and
//    over the whole volume (both must agree).
// 2. CW: a uniform current sheet (Ex point sources on every column of a periodic 2 x 2 cross
//    section) radiates plane waves along +-z into CPML. The run stops when the steady-state
//    criterion (relative change of the windowed phasor between two-period windows) is below 1e-4;
//    the phasors must match the exact discrete (Yee 1D) solution
//        Ex(z) = -(eta0 K / (2 cos(k dz / 2))) exp(-j k |z - zs|),   Hy = sign(z - zs) Ex / eta0,
//    with k the numerical wavenumber, sin(k dz/2)/dz = sin(w dt/2)/(c0 dt), K the sheet current
//    phasor (A/m). Tolerance 1e-3 relative (CPML reflection, float; measured ~3e-6); an H phasor taken at the wrong
//    half step would be off by w dt / 2 = 0.045 rad.
// 3. CUDA vs CPU: the same pulse run on both engines; spectra agree to 1e-4 relative (skips
//    without a GPU).
#include <algorithm>
#include <cmath>
#include <complex>
#include <iostream>

#include "spectrum_util.h"
#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;
using namespace vem_test;

namespace {

FdtdSetup pulse_setup() {
  FdtdSetup s;
  s.grid = {26, 24, 28, 1.0e-3, 1.0e-3, 1.0e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, 6);
  s.materials = {Material::vacuum(), Material::isotropic("block", 4.0, 0.2)};
  s.material_index.assign(s.grid.cell_count(), 0);
  for (int k = 14; k < 18; ++k)
    for (int j = 8; j < 14; ++j)
      for (int i = 15; i < 19; ++i) s.material_index[i + 26 * (j + 24 * k)] = 1;
  PointSource src;
  src.i = 12; src.j = 12; src.k = 12;
  src.direction = {0.3, 0.2, 1.0};
  src.amplitude = 1e-3;
  src.waveform = Waveform::differentiated_gaussian_for_bandwidth(20e9);
  s.sources = {src};
  s.probes = {{"Ez", Component::Ez, 16, 13, 15}, {"Hy", Component::Hy, 15, 12, 14},
              {"Ex", Component::Ex, 9, 14, 17},  {"Hz", Component::Hz, 17, 9, 10}};
  return s;
}

std::size_t compact_index(const YeeGrid& g, int i, int j, int k) {
  return i + std::size_t(g.nx + 1) * (j + std::size_t(g.ny + 1) * k);
}

}  // namespace

class FdtdDft : public testing::TestWithParam<Backend> {};

TEST_P(FdtdDft, PulseMonitorEqualsProbeDtftWithTrueSampleTimes) {
  VEM_REQUIRE_BACKEND(GetParam());
  const FdtdSetup s = pulse_setup();
  const ThreadsForGrid threads(s.grid.cell_count());
  FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
  const std::vector<double> freqs = {5e9, 10e9, 15e9};
  DftMonitor whole(*eng, freqs, {Component::Ex, Component::Ez, Component::Hy, Component::Hz});
  DftBox box;
  box.lo = {8, 8, 9};
  box.hi = {18, 15, 18};
  DftMonitor part(*eng, freqs, {Component::Ez, Component::Hy, Component::Ex, Component::Hz}, box);
  const int steps = 400;
  eng->run(steps, {}, 100);
  EXPECT_EQ(whole.steps_accumulated(), steps);
  const ProbeRecord rec = eng->probes();
  double worst = 0;
  for (std::size_t p = 0; p < s.probes.size(); ++p) {
    const Probe& pr = s.probes[p];
    for (std::size_t f = 0; f < freqs.size(); ++f) {
      const cplx ref = dtft(rec.values[p], 0, steps, eng->probe_time(pr.component, 1), op.dt(), freqs[f]);
      const auto w = whole.spectrum(pr.component, int(f));
      const auto q = part.spectrum(pr.component, int(f));
      const cplx a(w[compact_index(s.grid, pr.i, pr.j, pr.k)]);
      const cplx b(q[compact_index(s.grid, pr.i, pr.j, pr.k)]);
      const double err = std::max(std::abs(a - ref), std::abs(b - ref)) / std::abs(ref);
      worst = std::max(worst, err);
      EXPECT_LT(err, 2e-4) << pr.name << " at " << freqs[f] << " Hz: monitor " << a << " / " << b
                           << ", probe DTFT " << ref;
    }
  }
  // outside the sub-box the compact output is zero; non-existent samples are zero
  const auto q = part.spectrum(Component::Ez, 1);
  EXPECT_EQ(q[compact_index(s.grid, 2, 2, 2)], std::complex<float>(0.0f));
  const auto w = whole.spectrum(Component::Ex, 1);
  EXPECT_EQ(w[compact_index(s.grid, s.grid.nx, 5, 5)], std::complex<float>(0.0f));
  std::cout << "  worst relative difference monitor vs probe DTFT: " << worst << " on " << eng->backend() << "\n";
  RecordProperty("worst_rel_diff", std::to_string(worst));
}

// Decimated accumulation (sample_interval M): the pulse is band-limited far below the Nyquist
// frequency of the decimated sampling (1 / (2 M dt) = 53 GHz for M = 5; the differentiated
// Gaussian is 20 dB down at 20 GHz and Gaussian beyond), so the M dt Riemann sum equals the
// every-step sum up to aliasing and round-off: required 1e-3 of the largest value at 5, 10,
// 15 GHz over the whole volume (measured 7e-6 on the CPU).
TEST_P(FdtdDft, DecimatedMonitorMatchesEveryStepMonitorForBandLimitedPulse) {
  VEM_REQUIRE_BACKEND(GetParam());
  const FdtdSetup s = pulse_setup();
  const ThreadsForGrid threads(s.grid.cell_count());
  FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
  const std::vector<double> freqs = {5e9, 10e9, 15e9};
  const std::vector<Component> comps = {Component::Ez, Component::Hx};
  DftMonitor full(*eng, freqs, comps);
  DftMonitor m3(*eng, freqs, comps, {}, 3);
  DftMonitor m5(*eng, freqs, comps, {}, 5);
  EXPECT_EQ(DftMonitor::nyquist_interval(op.dt(), 20e9, 4.0), int(1.0 / (20e9 * op.dt() * 4.0)));
  eng->run(600, {}, 100);
  EXPECT_EQ(m5.samples_accumulated(), 120);
  EXPECT_EQ(m3.samples_accumulated(), 200);
  double worst = 0;
  for (Component c : comps)
    for (std::size_t f = 0; f < freqs.size(); ++f) {
      const auto a = full.spectrum(c, int(f));
      double peak = 0;
      for (const auto& v : a) peak = std::max(peak, double(std::abs(v)));
      for (const DftMonitor* m : {&m3, &m5}) {
        const auto b = m->spectrum(c, int(f));
        double diff = 0;
        for (std::size_t q = 0; q < a.size(); ++q) diff = std::max(diff, double(std::abs(a[q] - b[q])));
        worst = std::max(worst, diff / peak);
        EXPECT_LT(diff / peak, 1e-3) << component_name(c) << " at " << freqs[f] << " Hz, M = "
                                     << m->sample_interval();
      }
    }
  std::cout << "  worst decimated-vs-full difference (relative to the peak): " << worst << " on "
            << eng->backend() << "\n";
  EXPECT_THROW(DftMonitor(*eng, freqs, comps, {}, 0), Error);
}

TEST_P(FdtdDft, CwSheetPhasorsMatchExactDiscretePlaneWaveAtSteadyState) {
  VEM_REQUIRE_BACKEND(GetParam());
  const double f = 7.5e9;
  const int steps_per_period = 70;
  FdtdSetup s;
  s.grid = {2, 2, 160, 1e-3, 1e-3, 1e-3};
  s.dt = 1.0 / (f * steps_per_period);  // 1.905 ps < Courant limit 1.926 ps
  s.boundaries = BoundarySpec::all(BoundaryType::periodic, 0);
  s.boundaries.face[4] = s.boundaries.face[5] = BoundaryType::cpml;
  for (auto& c : s.boundaries.cpml) { c.thickness = 12; c.grading_order = 4.0; c.sigma_factor = 0.75; c.kappa_max = 1.0; c.alpha_max = 0.05; }
  s.materials = {Material::vacuum()};
  const int ks = 80;
  const double amp = 1e-6;  // A m per column
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      PointSource p;
      p.i = i; p.j = j; p.k = ks;
      p.direction = {1, 0, 0};
      p.amplitude = amp;
      p.waveform = Waveform::sinusoid(f, 3.0);
      s.sources.push_back(p);
    }
  const ThreadsForGrid threads(s.grid.cell_count());
  FdtdOperator op(s);
  auto eng = make_engine(op, GetParam());
  DftBox box;
  box.lo = {0, 0, 20};
  box.hi = {1, 1, 140};
  DftMonitor mon(*eng, {f}, {Component::Ex, Component::Hy}, box);
  SteadyStateCheck last;
  int checks = 0;
  eng->run(8000, [&](int, int) {
    last = mon.check_steady_state();
    ++checks;
    return !(last.has_previous && last.relative_change < 1e-4);
  }, 2 * steps_per_period);
  std::cout << "  steady state after " << eng->steps_completed() << " steps (" << checks
            << " checks), relative change " << last.relative_change << "\n";
  ASSERT_TRUE(last.has_previous);
  ASSERT_LT(last.relative_change, 1e-4) << "no steady state within 8000 steps";
  EXPECT_NEAR(last.window_s, 2.0 / f, 1e-15);

  const double dz = s.grid.dz, dt = op.dt();
  const double k = 2.0 / dz * std::asin(dz / (kC0 * dt) * std::sin(kTwoPi * f * dt / 2));
  const cplx K = amp / (s.grid.dx * s.grid.dy) * cplx(0, -1);  // sin(wt) = Re(-j e^{jwt})
  const cplx A = -kEta0 * K / (2.0 * std::cos(k * dz / 2));
  const auto ex = mon.phasor(Component::Ex, 0);
  const auto hy = mon.phasor(Component::Hy, 0);
  double worst_e = 0, worst_h = 0;
  for (int kk = 30; kk <= 130; ++kk) {
    const double ze = (kk - ks) * dz, zh = (kk + 0.5 - ks) * dz;
    const cplx e_ref = A * std::exp(cplx(0, -k * std::fabs(ze)));
    const cplx h_ref = (zh > 0 ? 1.0 : -1.0) * A * std::exp(cplx(0, -k * std::fabs(zh))) / kEta0;
    for (int i = 0; i < 2; ++i) {
      const cplx e(ex[compact_index(s.grid, i, 1, kk)]);
      const cplx h(hy[compact_index(s.grid, i, 0, kk)]);
      worst_e = std::max(worst_e, std::abs(e - e_ref) / std::abs(A));
      worst_h = std::max(worst_h, std::abs(h - h_ref) / (std::abs(A) / kEta0));
    }
  }
  std::cout << "  worst relative phasor error: Ex " << worst_e << ", Hy " << worst_h << " on "
            << eng->backend() << " (|Ex| = " << std::abs(A) << " V/m)\n";
  RecordProperty("worst_ex_err", std::to_string(worst_e));
  RecordProperty("worst_hy_err", std::to_string(worst_h));
  EXPECT_LT(worst_e, 1e-3);
  EXPECT_LT(worst_h, 1e-3);
}

VEM_INSTANTIATE_BACKENDS(FdtdDft);

TEST(FdtdDftAgreement, CudaSpectraMatchCpu) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
  const FdtdSetup s = pulse_setup();
  FdtdOperator op(s);
  auto cpu = make_engine(op, Backend::cpu);
  auto gpu = make_engine(op, Backend::cuda);
  const std::vector<double> freqs = {6e9, 12e9};
  const std::vector<Component> comps = {Component::Ex, Component::Ey, Component::Ez,
                                        Component::Hx, Component::Hy, Component::Hz};
  DftMonitor mc(*cpu, freqs, comps), mg(*gpu, freqs, comps);
  cpu->run(300);
  gpu->run(300);
  for (Component c : comps)
    for (int f = 0; f < 2; ++f) {
      const auto a = mc.spectrum(c, f), b = mg.spectrum(c, f);
      double num = 0, den = 0;
      for (std::size_t q = 0; q < a.size(); ++q) {
        num = std::max(num, double(std::abs(a[q] - b[q])));
        den = std::max(den, double(std::abs(a[q])));
      }
      EXPECT_LT(num, 1e-4 * den) << component_name(c) << " f" << f;
    }
}

TEST(FdtdDftInput, BadMonitorsAreRefusedWithReadableErrors) {
  FdtdSetup s = pulse_setup();
  FdtdOperator op(s);
  auto eng = make_engine(op, Backend::cpu);
  EXPECT_THROW({ DftMonitor m0(*eng, {}, {Component::Ex}); }, Error);
  EXPECT_THROW({ DftMonitor m1(*eng, {-1.0}, {Component::Ex}); }, Error);
  EXPECT_THROW({ DftMonitor m2(*eng, {1e9}, {}); }, Error);
  DftBox b;
  b.lo = {0, 0, 0};
  b.hi = {40, 3, 3};
  try {
    DftMonitor m(*eng, {1e9}, {Component::Ex}, b);
    FAIL() << "box outside the grid accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not inside"), std::string::npos) << e.what();
  }
  DftMonitor m(*eng, {1e9}, {Component::Ex});
  EXPECT_THROW(m.phasor(Component::Ex, 0), Error);
  EXPECT_THROW(m.spectrum(Component::Hz, 0), Error);
}
