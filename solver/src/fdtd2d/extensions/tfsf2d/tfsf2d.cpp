// 2D TF/SF plane wave (tfsf2d.h): the incident wave, the dispersion-matched 1D auxiliary grid and
// the correction lists; the CPU corrections. The CUDA backend implements tfsf2d::Backend
// (tfsf2d_backend.h) in tfsf2d_cuda.cu.
//
// Method (Taflove & Hagness, 3rd ed., ch. 5; the 3D tfsf.cpp of this project):
//  - total-field rectangle: node positions lo <= x <= hi (both axes); a sample inside or on its
//    edge holds the total field, outside the scattered field. Every sample whose curl stencil
//    mixes the two is corrected after its bulk update by sign * coef * (+-1/d) * incident value of
//    the neighbour across the edge (sign + for a total-field target, - for a scattered one);
//  - the incident values come from a 1D FDTD grid along k with spacing d1 (the cell size along k
//    when k is axis-aligned, else min(dx, dy, 1.05 c0 dt)), its medium scaled by alpha so that its numerical
//    wavenumber equals the 2D grid's along k at the design frequency f:
//      (sin(k2 cos(phi) dx / 2) / dx)^2 + (sin(k2 sin(phi) dy / 2) / dy)^2 = (sin(w dt / 2) / (c0 dt))^2,
//      alpha = c0 dt sin(k2 d1 / 2) / (d1 sin(w dt / 2)),
//    values at the 2D sample positions interpolated with cubic Lagrange weights (exact on nodes);
//  - the 1D grid is hard-sourced at node 0 and ends in a graded matched absorber of 40 cells.
#include "vem/fdtd2d/extensions/tfsf2d.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fdtd2d/extensions/tfsf2d/tfsf2d_backend.h"
#include "vem/core/error.h"

namespace vem {

namespace {

constexpr int kAbsorberCells2d = 40;

class Tfsf2dCpu final : public tfsf2d::Backend {
 public:
  Tfsf2dCpu(const tfsf2d::Targets& te, const tfsf2d::Targets& th) : te_(te), th_(th) {}
  void apply(Fdtd2dEngine& eng, bool electric, const std::vector<float>& inc) override {
    const tfsf2d::Targets& t = electric ? te_ : th_;
    const auto comps = eng.op().components();
    float* f[3];
    for (int s = 0; s < 3; ++s) f[s] = eng.raw_field(comps[s]);
    const float* in = inc.data();
    const int n = int(t.slot.size());
    // Each target appears once in a list: no two iterations write the same sample.
#pragma omp parallel for schedule(static)
    for (int q = 0; q < n; ++q) {
      float sum = 0.0f;
      for (int r = t.begin[q]; r < t.begin[q + 1]; ++r) {
        const tfsf2d::Term& m = t.terms[r];
        sum += m.coef * (m.w[0] * in[m.base] + m.w[1] * in[m.base + 1] + m.w[2] * in[m.base + 2] +
                         m.w[3] * in[m.base + 3]);
      }
      f[t.slot[q]][t.offset[q]] += sum;
    }
  }

 private:
  const tfsf2d::Targets& te_;
  const tfsf2d::Targets& th_;
};

// Offsets (in cells) of a component's samples from its index (fdtd2d_setup.h).
std::array<double, 2> offset_of(Component c) {
  switch (c) {
    case Component::Ez: return {0.0, 0.0};
    case Component::Hx: return {0.0, 0.5};
    case Component::Hy: return {0.5, 0.0};
    case Component::Hz: return {0.5, 0.5};
    case Component::Ex: return {0.5, 0.0};
    case Component::Ey: return {0.0, 0.5};
  }
  return {0.0, 0.0};
}

}  // namespace

namespace tfsf2d {
std::unique_ptr<Backend> make_backend_cpu(const Targets& e_targets, const Targets& h_targets) {
  return std::make_unique<Tfsf2dCpu>(e_targets, h_targets);
}
}  // namespace tfsf2d

TfsfBox2D automatic_tfsf_box_2d(const YeeGrid2D& g, const BoundarySpec2D& b, int margin) {
  TfsfBox2D box;
  const int n[2] = {g.nx, g.ny};
  for (int a = 0; a < 2; ++a) {
    box.lo[a] = b.cpml_cells(2 * a) + margin;
    box.hi[a] = n[a] - b.cpml_cells(2 * a + 1) - margin;
    if (box.hi[a] <= box.lo[a])
      fail("automatic_tfsf_box_2d: the grid is too small along ", "xy"[a], " for a total-field box ", margin,
           " cells inside the CPML (", n[a] - b.cpml_cells(2 * a) - b.cpml_cells(2 * a + 1),
           " cells inside the CPML; more than ", 2 * margin, " needed)");
  }
  return box;
}

struct Tfsf2dSource::Impl {
  Fdtd2dEngine* engine = nullptr;
  PlaneWave2D wave;
  double f_design = 0;
  std::array<double, 2> k{};
  std::array<double, 3> e{}, h{};  // unit vectors of E_inc and H_inc (h = k x e)
  double alpha = 1, k2 = 0, d1 = 0, xi0 = 0, ref = 0;
  std::vector<float> e1, h1;  // 1D E at xi0 + m d1, H at xi0 + (m + 1/2) d1 (H in A/m)
  std::vector<float> ca1, cb1, da1, db1;
  tfsf2d::Targets te, th;  // E targets read the 1D H, H targets the 1D E
  std::unique_ptr<tfsf2d::Backend> backend;
};

Tfsf2dSource::Tfsf2dSource(Fdtd2dEngine& engine, const PlaneWave2D& wave, const TfsfBox2D& box)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.engine = &engine;
  m.wave = wave;
  const Fdtd2dOperator& op = engine.op();
  const YeeGrid2D& g = op.grid();
  const int n[2] = {g.nx, g.ny};
  const double d[2] = {g.dx, g.dy};
  const double dt = op.dt();
  wave.waveform.validate();
  if (!std::isfinite(wave.amplitude)) fail("Tfsf2dSource: PlaneWave2D::amplitude = ", wave.amplitude, ": must be finite");
  if (!std::isfinite(wave.phi)) fail("Tfsf2dSource: PlaneWave2D::phi = ", wave.phi, ": must be finite (radians)");
  m.f_design = wave.design_frequency > 0 ? wave.design_frequency : wave.waveform.f0;
  if (!std::isfinite(m.f_design) || !(m.f_design > 0))
    fail("Tfsf2dSource: PlaneWave2D::design_frequency = ", wave.design_frequency,
         ": needs a frequency > 0 Hz (or a waveform with f0)");
  const auto& bc = op.setup().boundaries;
  for (int a = 0; a < 2; ++a) {
    const int lo_min = 2 + bc.cpml_cells(2 * a), hi_max = n[a] - 2 - bc.cpml_cells(2 * a + 1);
    if (box.lo[a] >= box.hi[a] || box.lo[a] < lo_min || box.hi[a] > hi_max)
      fail("Tfsf2dSource: TfsfBox2D ", "xy"[a], " range [", box.lo[a], ", ", box.hi[a], "]: needs lo < hi within [",
           lo_min, ", ", hi_max, "] (2 cells clear of the grid edge and the CPML)");
  }
  m.k = {std::cos(wave.phi), std::sin(wave.phi)};
  const bool tm = op.polarization() == Polarization2D::tm;
  if (tm) {
    m.e = {0.0, 0.0, 1.0};
    m.h = {m.k[1], -m.k[0], 0.0};  // k x z
  } else {
    m.e = {-m.k[1], m.k[0], 0.0};  // z x k
    m.h = {0.0, 0.0, 1.0};
  }

  // Matched dispersion.
  int aligned = -1;
  for (int a = 0; a < 2; ++a)
    if (std::fabs(m.k[a]) > 1.0 - 1e-12) aligned = a;
  // Along an axis the 1D nodes fall on the 2D samples (no interpolation error). Otherwise the
  // finest stable 1D spacing, about c0 dt (1D Courant number ~0.95), makes the cubic
  // interpolation's error (~ (k d1)^4) about 10 dB smaller than d1 = min(dx, dy) would.
  m.d1 = aligned >= 0 ? d[aligned] : std::min(std::min(d[0], d[1]), 1.05 * kC0 * dt);
  const double w = 2 * kPi * m.f_design;
  const double rhs = std::pow(std::sin(w * dt / 2) / (kC0 * dt), 2);
  auto disp = [&](double kk) {
    double s = 0;
    for (int a = 0; a < 2; ++a) s += std::pow(std::sin(kk * m.k[a] * d[a] / 2) / d[a], 2);
    return s - rhs;
  };
  double klo = 0.5 * w / kC0, khi = w / kC0;
  while (disp(khi) < 0 && khi < 10 * w / kC0) khi *= 1.05;
  if (disp(khi) < 0 || khi > kPi / std::max(d[0], d[1]))
    fail("Tfsf2dSource: design frequency ", m.f_design, " Hz is not resolved by the grid (fewer than ~2 cells per wavelength)");
  for (int it = 0; it < 200; ++it) {
    const double km = 0.5 * (klo + khi);
    (disp(km) < 0 ? klo : khi) = km;
  }
  m.k2 = 0.5 * (klo + khi);
  // The transverse fields of the grid's own plane wave at f_design: with K_a = sin(k2 k_a d_a / 2) /
  // (d_a / 2) and W = sin(w dt / 2) / (dt / 2) the discrete Faraday / Ampere laws give
  //   TM: (Hx, Hy) = (E / eta0) c0 (K_y, -K_x) / W;   TE: (Ex, Ey) = A c0 (-K_y, K_x) / W,
  // the continuum (sin phi, -cos phi) and (-sin phi, cos phi) up to O((k d)^2), direction-dependent
  // terms (K_x^2 + K_y^2 = (W / c0)^2 is the dispersion relation k2 solves). Using them makes the
  // corrections cancel the grid's plane wave at f_design (about -60 dB leakage otherwise at 20
  // cells per wavelength and oblique incidence; exactly the continuum values along an axis).
  {
    const double W = std::sin(w * dt / 2) / (dt / 2);
    const double Kx = std::sin(m.k2 * m.k[0] * d[0] / 2) / (d[0] / 2), Ky = std::sin(m.k2 * m.k[1] * d[1] / 2) / (d[1] / 2);
    if (tm) m.h = {kC0 * Ky / W, -kC0 * Kx / W, 0.0};
    else m.e = {-kC0 * Ky / W, kC0 * Kx / W, 0.0};
  }
  m.alpha = kC0 * dt * std::sin(m.k2 * m.d1 / 2) / (m.d1 * std::sin(w * dt / 2));
  if (kC0 * dt / (m.alpha * m.d1) > 1.0)
    fail("Tfsf2dSource: the 1D auxiliary grid would be unstable (c dt / (alpha d1) = ", kC0 * dt / (m.alpha * m.d1), ")");

  // Reference: the corner the wave reaches first.
  m.ref = std::numeric_limits<double>::infinity();
  for (int q = 0; q < 4; ++q) {
    const double x = g.origin[0] + ((q & 1) ? box.hi[0] : box.lo[0]) * d[0];
    const double y = g.origin[1] + ((q & 2) ? box.hi[1] : box.lo[1]) * d[1];
    m.ref = std::min(m.ref, m.k[0] * x + m.k[1] * y);
  }

  // Correction lists.
  const auto comps = op.components();
  auto slot_of = [&](Component c) {
    for (int s = 0; s < 3; ++s)
      if (comps[s] == c) return s;
    return -1;
  };
  auto inside = [&](Component c, int i, int j) {
    const auto o = offset_of(c);
    return i + o[0] >= box.lo[0] && i + o[0] <= box.hi[0] && j + o[1] >= box.lo[1] && j + o[1] <= box.hi[1];
  };
  struct Nb { Component c; int di, dj; double wgt; };
  // Curl stencils of each target (fdtd2d_setup.h), weights of the neighbour in the curl.
  auto stencil = [&](Component c, std::vector<Nb>& nb) {
    nb.clear();
    switch (c) {
      case Component::Ez:
        nb = {{Component::Hy, 0, 0, 1 / d[0]}, {Component::Hy, -1, 0, -1 / d[0]},
              {Component::Hx, 0, 0, -1 / d[1]}, {Component::Hx, 0, -1, 1 / d[1]}};
        break;
      case Component::Hx: nb = {{Component::Ez, 0, 1, 1 / d[1]}, {Component::Ez, 0, 0, -1 / d[1]}}; break;
      case Component::Hy: nb = {{Component::Ez, 1, 0, -1 / d[0]}, {Component::Ez, 0, 0, 1 / d[0]}}; break;
      case Component::Hz:
        nb = {{Component::Ey, 1, 0, 1 / d[0]}, {Component::Ey, 0, 0, -1 / d[0]},
              {Component::Ex, 0, 1, -1 / d[1]}, {Component::Ex, 0, 0, 1 / d[1]}};
        break;
      case Component::Ex: nb = {{Component::Hz, 0, 0, 1 / d[1]}, {Component::Hz, 0, -1, -1 / d[1]}}; break;
      case Component::Ey: nb = {{Component::Hz, 0, 0, -1 / d[0]}, {Component::Hz, -1, 0, 1 / d[0]}}; break;
    }
  };
  struct Raw { int slot; bool electric; std::int64_t off; float coef; double xi; };
  std::vector<Raw> raw;
  double xi_min = std::numeric_limits<double>::infinity(), xi_max = -xi_min;
  std::vector<Nb> nb;
  for (int s = 0; s < 3; ++s) {
    const Component c = comps[s];
    const bool electric = is_electric(c);
    stencil(c, nb);
    for (int j = box.lo[1] - 1; j <= box.hi[1] + 1; ++j)
      for (int i = box.lo[0] - 1; i <= box.hi[0] + 1; ++i) {
        if (i < op.range_lo(s, 0) || i > op.range_hi(s, 0) || j < op.range_lo(s, 1) || j > op.range_hi(s, 1)) continue;
        const bool t_in = inside(c, i, j);
        const auto ab = op.coefficients_at(s, i, j);
        const double factor = electric ? ab[1] : -ab[1];
        bool checked = false;
        for (const Nb& q : nb) {
          if (inside(q.c, i + q.di, j + q.dj) == t_in) continue;
          if (!checked) {  // the incident field is a vacuum plane wave
            const UpdateCoefficients v = electric ? electric_coefficients(1.0, 0.0, dt) : magnetic_coefficients(1.0, 0.0, dt);
            if (std::fabs(ab[0] - v.ca) > 1e-6 * std::fabs(v.ca) || std::fabs(ab[1] - v.cb) > 1e-6 * std::fabs(v.cb))
              fail("Tfsf2dSource: the total-field rectangle's edge must lie in vacuum: ", component_name(c), " sample (", i,
                   ", ", j, ") next to it has a non-vacuum material");
            checked = true;
          }
          const double proj = is_electric(q.c) ? m.e[axis_of(q.c)] : m.h[axis_of(q.c)];
          if (proj == 0.0) continue;
          const auto r = g.position(q.c, i + q.di, j + q.dj);
          const double xi = m.k[0] * r[0] + m.k[1] * r[1] - m.ref;
          raw.push_back({slot_of(c), electric, op.layout().at(i, j),
                         float((t_in ? 1.0 : -1.0) * factor * q.wgt * proj * wave.amplitude), xi});
          xi_min = std::min(xi_min, xi);
          xi_max = std::max(xi_max, xi);
        }
      }
  }
  if (raw.empty()) fail("Tfsf2dSource: internal error, no corrected samples");
  m.xi0 = m.d1 * std::floor(xi_min / m.d1 + 1e-9) - 4 * m.d1;
  const int m1 = int(std::ceil((xi_max - m.xi0) / m.d1)) + 4 + kAbsorberCells2d;
  m.e1.assign(m1, 0.0f);
  m.h1.assign(m1, 0.0f);
  // Matched graded absorber (sigma / eps = sigma_m / mu) over the last cells.
  const double v = kC0 / m.alpha;
  const double L = kAbsorberCells2d * m.d1;
  const double s_max = 4.0 * v * 18.42 / L;
  const int start = m1 - 1 - kAbsorberCells2d;
  m.ca1.resize(m1); m.cb1.resize(m1); m.da1.resize(m1); m.db1.resize(m1);
  for (int q = 0; q < m1; ++q) {
    const double xe = std::max(0.0, double(q - start)) / kAbsorberCells2d;
    const double xh = std::max(0.0, q + 0.5 - start) / kAbsorberCells2d;
    const double se = s_max * xe * xe * xe * dt / 2, sh = s_max * xh * xh * xh * dt / 2;
    m.ca1[q] = float((1 - se) / (1 + se));
    m.cb1[q] = float(dt / (m.alpha * kEps0 * m.d1) / (1 + se));
    m.da1[q] = float((1 - sh) / (1 + sh));
    m.db1[q] = float(dt / (m.alpha * kMu0 * m.d1) / (1 + sh));
  }
  // CSR lists, cubic Lagrange weights.
  std::stable_sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) {
    return a.electric != b.electric ? a.electric : (a.slot != b.slot ? a.slot < b.slot : a.off < b.off);
  });
  for (const Raw& r : raw) {
    tfsf2d::Targets& t = r.electric ? m.te : m.th;
    if (t.slot.empty() || t.slot.back() != r.slot || t.offset.back() != r.off) {
      t.slot.push_back(r.slot);
      t.offset.push_back(r.off);
      t.begin.push_back(int(t.terms.size()));
    }
    // E targets interpolate the 1D H (half nodes), H targets the 1D E (integer nodes).
    const double x = (r.xi - m.xi0) / m.d1 - (r.electric ? 0.5 : 0.0);
    double fl = std::floor(x);
    double tt = x - fl;
    if (tt > 1.0 - 1e-7) { fl += 1.0; tt = 0.0; }
    if (tt < 1e-7) tt = 0.0;
    tfsf2d::Term term;
    term.coef = r.coef;
    term.base = int(fl) - 1;
    term.w[0] = float(-tt * (tt - 1) * (tt - 2) / 6);
    term.w[1] = float((tt + 1) * (tt - 1) * (tt - 2) / 2);
    term.w[2] = float(-(tt + 1) * tt * (tt - 2) / 2);
    term.w[3] = float((tt + 1) * tt * (tt - 1) / 6);
    if (term.base < 0 || term.base + 3 >= m1) fail("Tfsf2dSource: internal error, interpolation outside the 1D grid");
    t.terms.push_back(term);
  }
  for (tfsf2d::Targets* t : {&m.te, &m.th}) t->begin.push_back(int(t->terms.size()));
  m.backend = engine.fields_on_device() ? tfsf2d::make_backend_cuda(m.te, m.th, m.e1.size())
                                        : tfsf2d::make_backend_cpu(m.te, m.th);
  m.e1[0] = float(wave.waveform.value(engine.time_of_e()));
  engine.add_extension(this);
}

Tfsf2dSource::~Tfsf2dSource() { impl_->engine->remove_extension(this); }

double Tfsf2dSource::delay(const std::array<double, 2>& r) const {
  const Impl& m = *impl_;
  const double xi = m.k[0] * r[0] + m.k[1] * r[1] - m.ref;
  return (xi - m.xi0) * m.k2 / (2 * kPi * m.f_design);
}

void Tfsf2dSource::hook(Fdtd2dEngine& eng, HookPoint where, int step) {
  Impl& m = *impl_;
  const int m1 = int(m.e1.size());
  if (where == HookPoint::after_h) {
    m.backend->apply(eng, false, m.e1);  // H targets: E_inc at step dt
    for (int q = 0; q < m1 - 1; ++q) m.h1[q] = m.da1[q] * m.h1[q] - m.db1[q] * (m.e1[q + 1] - m.e1[q]);
  } else if (where == HookPoint::after_e) {
    m.backend->apply(eng, true, m.h1);  // E targets: H_inc at (step + 1/2) dt
    for (int q = 1; q < m1 - 1; ++q) m.e1[q] = m.ca1[q] * m.e1[q] - m.cb1[q] * (m.h1[q] - m.h1[q - 1]);
    m.e1[0] = float(m.wave.waveform.value((step + 1.0) * eng.op().dt()));
  }
}

}  // namespace vem
