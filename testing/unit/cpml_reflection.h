// The CPML reflection measurement shared by test_fdtd_cpml (Yee) and test_fdtd_schemes_cpml (the
// high-order schemes): a small domain A terminated by the CPML and a reference domain B padded so
// that nothing from its boundary reaches the probes within the window; the reflection is the worst
// probe's max |A - B| over max |B| (dB).
#pragma once

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "test_support.h"
#include "threads_util.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem_cpml_test {

using namespace vem;

constexpr int kPml = 10;

inline CpmlParameters recommended_cpml() {
  CpmlParameters p;
  p.thickness = kPml;
  p.grading_order = 4.0;
  p.sigma_factor = 0.75;
  p.kappa_max = 3.0;
  p.alpha_max = 0.05;
  p.alpha_order = 1.0;
  return p;
}

struct Geometry {
  bool two_d;
  int n_small;   // cells per side of domain A (x, y; and z in 3D)
  double d;      // cell size, m
  int steps;     // window length (test_fdtd_schemes_cpml: 0 = 1.2 x the shortest holding the reflection)
};

struct Run {
  std::vector<std::vector<float>> values;
  std::vector<std::string> names;
  double dt = 0;
};

// The pulse: differentiated Gaussian, -20 dB at the frequency with 20 cells per wavelength.
inline Waveform pulse(const Geometry& g) { return Waveform::differentiated_gaussian_for_bandwidth(kC0 / (20 * g.d)); }

inline Run run_domain(const Geometry& g, int pad, const CpmlParameters& cp, Backend backend,
                      Scheme scheme = Scheme::yee) {
  const int n = g.n_small + 2 * pad;
  FdtdSetup s;
  s.grid = {n, n, g.two_d ? 1 : n, g.d, g.d, g.d};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, kPml);
  for (auto& c : s.boundaries.cpml) c = cp;
  if (g.two_d) s.boundaries.face[4] = s.boundaries.face[5] = BoundaryType::periodic;
  s.materials = {Material::vacuum()};
  s.scheme = scheme;
  const int c0 = g.n_small / 2 + pad;        // source at the centre of A
  const int kc = g.two_d ? 0 : c0;
  PointSource src;
  src.i = c0; src.j = c0; src.k = kc;
  src.direction = {0.8, 0.3, 1.0};           // all components: TMz and TEz (2D), no symmetry zero
  src.waveform = pulse(g);
  s.sources = {src};
  const int q = g.n_small - kPml - 2 + pad;  // 2 cells inside A's PML interface (high side)
  const int o = g.n_small / 2 - 7 + pad;     // oblique: off the axis through the source
  const int kq = g.two_d ? 0 : q, ko = g.two_d ? 0 : o;
  s.probes = {{"Ez normal", Component::Ez, q, c0, kc}, {"Hz normal", Component::Hz, q, c0, kc},
              {"Ey normal", Component::Ey, q, c0, kc}, {"Ez oblique", Component::Ez, q, o, ko},
              {"Hz oblique", Component::Hz, q, o, ko}, {"Ez corner", Component::Ez, q, q, kq},
              {"Hz corner", Component::Hz, q, q, kq},  {"Ex corner", Component::Ex, q, q, kq}};
  const vem_test::ThreadsForGrid threads(s.grid.cell_count());  // one CPU thread (threads_util.h)
  FdtdOperator op(s);
  auto eng = make_engine(op, backend);
  eng->run(g.steps, {}, 1000);
  Run r;
  const ProbeRecord rec = eng->probes();
  r.values = rec.values;
  r.names = rec.names;
  r.dt = op.dt();
  return r;
}

// Worst-probe reflection (dB) of `a` against the reference `b`.
inline double reflection_db(const Run& a, const Run& b, bool print) {
  double worst = -1e9;
  for (std::size_t p = 0; p < a.values.size(); ++p) {
    double peak = 0, diff = 0;
    for (std::size_t t = 0; t < a.values[p].size(); ++t) {
      peak = std::max(peak, double(std::fabs(b.values[p][t])));
      diff = std::max(diff, double(std::fabs(a.values[p][t] - b.values[p][t])));
    }
    EXPECT_GT(peak, 0.0) << a.names[p] << " saw no field";
    const double db = 20.0 * std::log10(std::max(diff, 1e-30) / peak);
    if (print) std::cout << "    " << a.names[p] << ": " << db << " dB\n";
    worst = std::max(worst, db);
  }
  return worst;
}

// Padding of the reference so that any signal from its boundary arrives after the window:
// source -> B's PML interface -> probe is at least (n_small/2 - kPml + P) + (that - 8 or less).
inline int reference_padding(const Geometry& g, double dt) {
  const double reach = 1.05 * g.steps * kC0 * dt / g.d;  // cells travelled at c (+5 %) in the window
  const int half_a = g.n_small / 2 - kPml;                 // source to A's interface
  // Shortest return path from B's boundary to a probe: 2 (half_a + P) - (source-probe distance),
  // the probes being at most half_a - 2 cells from the source along each axis.
  const int p = int(std::ceil((reach - 2.0 * half_a + (half_a - 2)) / 2.0)) + 1;
  return std::max(p, 1);
}

}  // namespace vem_cpml_test
