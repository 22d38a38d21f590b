// TFSF plane-wave source (tfsf.h): the operator-side description (incident direction,
// matched-dispersion 1D grid, correction lists) and the CPU corrections. CUDA: tfsf_cuda.cu.
//
// s44 (Hwang & Ihm's backward time differences; fdtd_scheme.h, "s44"): the derivation.
// The 3D update of a sample u (E or H component; lossless or lossy, a = (c_0..c_3), D_b from
// s44_coefficients of its leap-frog pair) is
//   u^{n+1/2} = c_0 u^{n-1/2} + c_1 u^{n-3/2} + c_2 u^{n-5/2} + c_3 u^{n-7/2} + D_b C[F^n],   (U)
// C the (wide) curl of the other field at the single time level n. It is linear, and the
// history holds the sample's OWN earlier values (FdtdEngineCpu: hist_ shifted in place; CUDA:
// the ho_hist_ arrays rotated so that the updated array becomes the current level), not curls.
// TF/SF: every sample holds the total field inside the box and the scattered field outside, so
// its own history is of the same kind as its new value; only the curl may mix kinds, where its
// stencil crosses the surface. The update the sample needs is (U) with C[F] replaced by C[F] -/+
// C[F_inc restricted to the neighbours of the other kind] (- for a scattered sample reading total
// neighbours, + for a total sample reading scattered ones). C is linear and enters (U) once,
// multiplied by D_b, so
//   u^{n+1/2} = (U as the engine computes it) +/- D_b C[F_inc on the crossing terms]^n,
// i.e. the correction added to the field AFTER the update, with D_b in place of leap-frog's b
// (vacuum: D_b = (24/22) b), is the correction added to the curl BEFORE it: the same number.
// The corrected value is the current level, and the next update moves it into the history (CPU:
// h1 <- u; CUDA: the array rotation, which runs before the hook), so the history stores exactly
// the corrected fields - the history needs no correction of its own, and the engines no new hook
// (after_h / after_e run after the bulk, CPML and history update of that half step). Only the
// incident field at the curl's time level n enters (E_inc at n dt for H targets, H_inc at
// (n + 1/2) dt for E targets), as for leap-frog.
// No leakage requires the incident field to satisfy (U) itself on the samples next to the
// surface (then scattered = total - incident obeys (U) everywhere and is zero outside): F_inc
// must be a discrete s44 plane wave of the 3D grid. For e^{j w t} at the real design frequency,
// (U) in vacuum gives (D44): q = v dt |K(k)| with q = (22 z^8 - 17 z^6 - 9 z^4 + 5 z^2 - 1) /
// (24 j z^7), z = e^{j w dt / 2} (independent of k: one q per frequency). The 1D auxiliary grid
// is stepped with the same backward differences (step_s44_1d: the same (U) with its own (a, b)
// pairs, so its graded absorber is lossy s44 too) on a Yee space difference scaled by alpha, so
// its relation is q = (c dt / (alpha d1)) 2 sin(k d1 / 2); alpha makes its k equal the 3D k3
// along k_hat: |K(k3 k_hat)| = Re q / (c dt), alpha = 2 c dt sin(k3 d1 / 2) / (d1 Re q).
// Im q / Re q (the dissipation) is -1.1e-7 at 20 cells per wavelength and S = 0.245: matching
// Re q leaves a mismatch of that order times the 1D/3D group-velocity difference. Stable for
// 2 c dt / (alpha d1) <= 1 (v dt max|K| <= 1). A 1D grid stepped by leap-frog instead (matched to
// leap-frog's relation) is NOT a discrete s44 wave: it leaks -67 dB at f0 (measured,
// test_fdtd_tfsf FdtdTfsfS44), against -139 dB (normal) / -109 dB (oblique) with this one.
#include "vem/fdtd/extensions/tfsf.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <exception>
#include <limits>

#include "vem/core/error.h"

namespace vem {

namespace {

class TfsfCpu final : public TfsfSource::Backend {
 public:
  TfsfCpu(const TfsfSource::Targets& te, const TfsfSource::Targets& th) : te_(te), th_(th) {}
  void apply(FdtdEngine& eng, bool electric, const std::vector<float>& inc) override {
    const TfsfSource::Targets& t = electric ? te_ : th_;
    float* f[6];
    for (int c = 0; c < 6; ++c) f[c] = eng.raw_field(Component(c));
    const float* in = inc.data();
    const int n = int(t.comp.size());
#pragma omp parallel for schedule(static)
    for (int q = 0; q < n; ++q) {
      float sum = 0.0f;
      for (int r = t.begin[q]; r < t.begin[q + 1]; ++r) {
        const TfsfSource::Term& m = t.terms[r];
        const float v = m.w[0] * in[m.base] + m.w[1] * in[m.base + 1] + m.w[2] * in[m.base + 2] +
                        m.w[3] * in[m.base + 3];
        sum += m.coef * v;
      }
      f[t.comp[q]][t.offset[q]] += sum;
    }
  }

 private:
  const TfsfSource::Targets& te_;
  const TfsfSource::Targets& th_;
};

constexpr int kAbsorberCells = 40;

}  // namespace

TfsfBox automatic_tfsf_box(const YeeGrid& g, const BoundarySpec& bs, int margin) {
  TfsfBox box;
  const std::array<int, 3> n = g.n();
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = bs.cpml_cells(2 * a) + margin;
    box.hi[a] = n[a] - bs.cpml_cells(2 * a + 1) - margin;
    if (box.hi[a] <= box.lo[a])
      fail("the grid is too small along ", "xyz"[a], " for a plane wave's total-field box ", margin,
           " cells inside the CPML (", n[a] - bs.cpml_cells(2 * a) - bs.cpml_cells(2 * a + 1),
           " cells inside the CPML; the box needs more than ", 2 * margin, ")");
  }
  return box;
}

namespace {
TfsfFrame own_frame(const FdtdEngine& engine) {
  TfsfFrame f;
  f.grid = engine.op().grid();
  f.boundaries = engine.op().setup().boundaries;
  return f;
}
}  // namespace

TfsfSource::TfsfSource(FdtdEngine& engine, const PlaneWave& wave, const TfsfBox& box)
    : TfsfSource(engine, wave, box, own_frame(engine)) {}

TfsfSource::TfsfSource(FdtdEngine& engine, const PlaneWave& wave, const TfsfBox& box, const TfsfFrame& frame)
    : engine_(&engine), wave_(wave) {
  const FdtdOperator& op = engine.op();
  const SchemeStencil& stencil = op.scheme().stencil;
  // s44 (Hwang & Ihm backward time differences, fdtd_scheme.h): see "s44" in tfsf.h. The
  // corrections are the leap-frog ones with the s44 curl coefficient D_b in place of b, and the 1D
  // grid steps with the same backward time differences.
  s44_ = stencil.backward4;
  // The wide stencils reach 3/2 cells along the derivative and 1 across (fdtd_scheme.h): the
  // corrected targets lie up to 2 samples outside the box.
  const int reach = stencil.is_yee() ? 1 : 2;
  // Everything geometric in the global frame (global indices); the piece's operator only decides
  // which targets this engine updates and supplies their coefficients and layout offsets.
  const YeeGrid& g = frame.grid;
  const std::array<int, 3> off = frame.offset;
  const int n[3] = {g.nx, g.ny, g.nz};
  const double d[3] = {g.dx, g.dy, g.dz};
  const double dt = op.dt();
  wave_.waveform.validate();
  if (!std::isfinite(wave.amplitude)) fail("TFSF plane wave: amplitude ", wave.amplitude, " is not finite");
  for (double v : {wave.theta, wave.phi, wave.psi})
    if (!std::isfinite(v)) fail("TFSF plane wave: angles must be finite (theta, phi, psi in radians)");
  double f0 = wave.design_frequency > 0 ? wave.design_frequency : wave.waveform.f0;
  if (!(f0 > 0))
    fail("TFSF plane wave: no design frequency (set PlaneWave::design_frequency for a waveform "
         "without f0)");
  const auto& bc = frame.boundaries;
  {
    const YeeGrid& lg = op.grid();
    if (std::fabs(lg.dx - g.dx) > 1e-12 * g.dx || std::fabs(lg.dy - g.dy) > 1e-12 * g.dy ||
        std::fabs(lg.dz - g.dz) > 1e-12 * g.dz || off[0] < 0 || off[1] < 0 || off[2] < 0 ||
        off[0] + lg.nx > g.nx || off[1] + lg.ny > g.ny || off[2] + lg.nz > g.nz)
      fail("TFSF: the engine's grid (", lg.nx, " x ", lg.ny, " x ", lg.nz, " cells at offset ", off[0], ", ", off[1],
           ", ", off[2], ") is not a piece of the frame's grid (", g.nx, " x ", g.ny, " x ", g.nz, " cells)");
  }
  for (int a = 0; a < 3; ++a) {
    const int lo_min = 1 + reach + bc.cpml_cells(2 * a), hi_max = n[a] - 1 - reach - bc.cpml_cells(2 * a + 1);
    if (box.lo[a] >= box.hi[a] || box.lo[a] < lo_min || box.hi[a] > hi_max)
      fail("TFSF box ", "xyz"[a], " range [", box.lo[a], ", ", box.hi[a],
           "] must satisfy lo < hi inside [", lo_min, ", ", hi_max,
           "] (", 1 + reach, " cells clear of the grid edge and the CPML", stencil.is_yee() ? "" : " with a wide stencil",
           ")");
  }
  const double st = std::sin(wave.theta), ct = std::cos(wave.theta);
  const double sp = std::sin(wave.phi), cp = std::cos(wave.phi);
  k_ = {st * cp, st * sp, ct};
  const std::array<double, 3> th = {ct * cp, ct * sp, -st}, ph = {-sp, cp, 0.0};
  for (int a = 0; a < 3; ++a) e_[a] = std::cos(wave.psi) * th[a] + std::sin(wave.psi) * ph[a];
  h_ = {k_[1] * e_[2] - k_[2] * e_[1], k_[2] * e_[0] - k_[0] * e_[2], k_[0] * e_[1] - k_[1] * e_[0]};

  // Matched dispersion (tfsf.h).
  int axis_aligned = -1;
  for (int a = 0; a < 3; ++a)
    if (std::fabs(k_[a]) > 1.0 - 1e-12) axis_aligned = a;
  d1_ = axis_aligned >= 0 ? d[axis_aligned] : std::min({d[0], d[1], d[2]});
  const double w = 2 * kPi * f0;
  double rhs = std::pow(std::sin(w * dt / 2) / (kC0 * dt), 2);
  // s44: the 3D relation is (D44) of fdtd_scheme.h, linear in q = c dt |K|: for the real design
  // frequency q = (22 z^8 - 17 z^6 - 9 z^4 + 5 z^2 - 1) / (24 j z^7), z = exp(j w dt / 2). Its
  // imaginary part (the scheme's dissipation) is ~1e-7 of the real part at 20 cells per
  // wavelength; the match is on Re q: |K(k3 k_hat)| = Re q / (c dt) (tfsf.h).
  double q44 = 0;
  if (s44_) {
    const std::complex<double> z = std::polar(1.0, w * dt / 2);
    const std::complex<double> z2 = z * z, z4 = z2 * z2, z6 = z4 * z2, z8 = z4 * z4;
    q44 = ((22.0 * z8 - 17.0 * z6 - 9.0 * z4 + 5.0 * z2 - 1.0) / (std::complex<double>(0.0, 24.0) * z6 * z)).real();
    rhs = std::pow(q44 / (2 * kC0 * dt), 2);
  }
  // The 3D scheme's own relation sin(w dt / 2) = (c dt / 2) |K| (fdtd_scheme.h (D); Yee: K_a d_a =
  // 2 sin(k_a d_a / 2)).
  auto disp = [&](double k) {
    double s = 0;
    if (stencil.is_yee()) {
      for (int a = 0; a < 3; ++a) s += std::pow(std::sin(k * k_[a] * d[a] / 2) / d[a], 2);
    } else {
      const std::array<double, 3> theta{k * k_[0] * d[0], k * k_[1] * d[1], k * k_[2] * d[2]};
      for (int a = 0; a < 3; ++a) s += std::pow(stencil.symbol(a, theta) / (2 * d[a]), 2);
    }
    return s - rhs;
  };
  double klo = 0.5 * w / kC0, khi = w / kC0 * 1.0;
  while (disp(khi) < 0 && khi < 10 * w / kC0) khi *= 1.05;
  const double kmax_ok = kPi / std::max({d[0], d[1], d[2]});
  if (disp(khi) < 0 || khi > kmax_ok)
    fail("TFSF plane wave: design frequency ", f0, " Hz is not resolved by the grid (fewer than ~2 cells per wavelength)");
  for (int it = 0; it < 200; ++it) {
    const double km = 0.5 * (klo + khi);
    (disp(km) < 0 ? klo : khi) = km;
  }
  k3_ = 0.5 * (klo + khi);
  // 1D Yee space difference, leap-frog: sin(w dt / 2) = (c dt / (alpha d1)) sin(k d1 / 2), stable
  // for c dt / (alpha d1) <= 1; s44 time stepping: q = (c dt / (alpha d1)) 2 sin(k d1 / 2), stable
  // for 2 c dt / (alpha d1) <= 1 (v dt max|K| <= 1, fdtd_scheme.h).
  alpha_ = s44_ ? 2 * kC0 * dt * std::sin(k3_ * d1_ / 2) / (d1_ * q44)
                : kC0 * dt * std::sin(k3_ * d1_ / 2) / (d1_ * std::sin(w * dt / 2));
  const double courant1 = (s44_ ? 2 : 1) * kC0 * dt / (alpha_ * d1_);
  if (courant1 > 1.0)
    fail("TFSF plane wave: the auxiliary 1D grid would be unstable (", s44_ ? "2 " : "",
         "c dt / (alpha d1) = ", courant1, ")");

  // Reference: the box corner the wave reaches first.
  ref_ = std::numeric_limits<double>::infinity();
  for (int q = 0; q < 8; ++q) {
    const int idx[3] = {(q & 1) ? box.hi[0] : box.lo[0], (q & 2) ? box.hi[1] : box.lo[1],
                        (q & 4) ? box.hi[2] : box.lo[2]};
    double s = 0;
    for (int a = 0; a < 3; ++a) s += k_[a] * (g.origin[a] + idx[a] * d[a]);
    ref_ = std::min(ref_, s);
  }

  // Correction lists: every target sample within one index of the box whose curl stencil
  // crosses the total/scattered boundary.
  auto inside = [&](int comp, const int idx[3]) {
    for (int a = 0; a < 3; ++a) {
      const bool half = comp < 3 ? (a == comp) : (a != comp - 3);
      const double p = idx[a] + (half ? 0.5 : 0.0);
      if (p < box.lo[a] || p > box.hi[a]) return false;
    }
    return true;
  };
  struct Raw { int comp; std::int64_t off; float coef; double xi; bool to_e; };
  // The (component, z plane) pairs of the walk are done in parallel (OpenMP), each into its own
  // list; joined in (component, plane) order below, so the lists are those of a serial walk.
  const int planes = box.hi[2] - box.lo[2] + 2 * reach + 1;
  const int tasks = 6 * planes;
  std::vector<std::vector<Raw>> task_raw(tasks);
  std::vector<double> task_xi_min(tasks, std::numeric_limits<double>::infinity()),
      task_xi_max(tasks, -std::numeric_limits<double>::infinity());
  std::vector<std::exception_ptr> task_error(tasks);
  const float amp = float(wave.amplitude);
  // The curl's terms (fdtd_scheme.h): D_a F at the target = sum over p = 1/2, 3/2 and the
  // transverse classes (centre, 4 axis neighbours, 4 diagonal neighbours) of w_p,cls (F(+p) -
  // F(-p)) / h. Each is a (source component, shift along the derivative axis, transverse shifts,
  // weight) term; Yee has the centre p = 1/2 pair only.
  struct Nb { int comp; int axis; int shift; int t_axis[2]; int t_shift[2]; double wgt; };
  auto curl_terms = [&](bool electric, int c) {
    const int b = (c + 1) % 3, dd = (c + 2) % 3;
    std::vector<Nb> terms;
    // E_c: + D_b H_dd - D_dd H_b; H_c: -(D_b E_dd - D_dd E_b) (the sign is in `factor`).
    const struct { int comp, axis; double sign; } parts[2] = {{electric ? 3 + dd : dd, b, 1.0},
                                                             {electric ? 3 + b : b, dd, -1.0}};
    for (const auto& pt : parts) {
      const int t0 = (pt.axis + 1) % 3, t1 = (pt.axis + 2) % 3;
      for (int p = 0; p < 2; ++p)
        for (int cls = 0; cls < 3; ++cls) {
          const double w = stencil.w[p][cls];
          if (w == 0.0) continue;
          std::vector<std::array<int, 2>> tr;
          if (cls == 0) tr = {{0, 0}};
          if (cls == 1) tr = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
          if (cls == 2) tr = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
          // Offsets +-(p + 1/2) along the axis: E targets read H at shifts p and -p - 1, H targets
          // read E at p + 1 and -p (sample index shifts).
          const int up = electric ? p : p + 1, down = electric ? -p - 1 : -p;
          for (const auto& t : tr) {
            terms.push_back({pt.comp, pt.axis, up, {t0, t1}, {t[0], t[1]}, pt.sign * w / d[pt.axis]});
            terms.push_back({pt.comp, pt.axis, down, {t0, t1}, {t[0], t[1]}, -pt.sign * w / d[pt.axis]});
          }
        }
    }
    return terms;
  };
  std::vector<Nb> comp_nb[6];
  for (int c6 = 0; c6 < 6; ++c6) comp_nb[c6] = curl_terms(c6 < 3, c6 % 3);
  // Deep inside the box no term crosses the surface: every neighbour lies within `reach` samples
  // of the target along each axis (curl_terms: shifts -1..1 for Yee, -2..2 and transverse -1..1
  // for the wide stencils) and the half-sample positions add 1/2, so a target with
  // lo + reach <= idx <= hi - reach - 1 on every axis and all its neighbours are inside, and it
  // contributes nothing (issue 16: this shell-only walk replaced a walk over the whole box volume,
  // 0.6 s of a 177 x 177 x 126 head run's set-up; the lists are the same, in the same order).
  auto deep = [&](int a, int v) { return v >= box.lo[a] + reach && v <= box.hi[a] - reach - 1; };
#pragma omp parallel for schedule(dynamic, 1)
  for (int task = 0; task < tasks; ++task) try {
    const int c6 = task / planes;
    std::vector<Raw>& raw = task_raw[task];
    double& xi_min = task_xi_min[task];
    double& xi_max = task_xi_max[task];
    const bool electric = c6 < 3;
    const Component cc = Component(c6);
    const std::vector<Nb>& nb = comp_nb[c6];
    int idx[3];
    idx[2] = box.lo[2] - reach + task % planes;
    for (idx[1] = box.lo[1] - reach; idx[1] <= box.hi[1] + reach; ++idx[1])
      for (idx[0] = box.lo[0] - reach; idx[0] <= box.hi[0] + reach; ++idx[0]) {
        if (deep(0, idx[0]) && deep(1, idx[1]) && deep(2, idx[2])) {
          idx[0] = box.hi[0] - reach - 1;  // the loop's ++ continues at hi - reach
          continue;
        }
        // Every target lies in the global update range (the box is >= 2 cells inside the grid
        // edge, so 1 <= idx <= N - 1); `local`: this engine updates it (its piece's range).
        int li[3];
        bool local = true;
        for (int a = 0; a < 3; ++a) {
          li[a] = idx[a] - off[a];
          local = local && li[a] >= op.range_lo(cc, a) && li[a] <= op.range_hi(cc, a);
        }
        const bool t_in = inside(c6, idx);
        std::array<float, 2> ab{0.0f, 0.0f};
        if (local) {
          const std::array<float, 2> c2 = op.coefficients_at(cc, li[0], li[1], li[2]);
          ab = c2;
        }
        // The coefficient of the curl in the target's update: b (leap-frog), D_b (s44).
        const double cb = s44_ ? double(s44_coefficients(ab[0], ab[1]).cb) : double(ab[1]);
        const double factor = electric ? cb : -cb;
        bool checked_vacuum = false;
        for (const Nb& m : nb) {
          int j[3] = {idx[0], idx[1], idx[2]};
          j[m.axis] += m.shift;
          j[m.t_axis[0]] += m.t_shift[0];
          j[m.t_axis[1]] += m.t_shift[1];
          const bool n_in = inside(m.comp, j);
          if (n_in == t_in) continue;
          if (local && !checked_vacuum) {  // the incident wave is a vacuum plane wave
            const UpdateCoefficients v = electric ? electric_coefficients(1.0, 0.0, dt)
                                                  : magnetic_coefficients(1.0, 0.0, dt);
            if (std::fabs(ab[0] - v.ca) > 1e-6 * std::fabs(v.ca) || std::fabs(ab[1] - v.cb) > 1e-6 * std::fabs(v.cb))
              fail("TFSF box surface must lie in vacuum: ", component_name(cc), " sample (",
                   idx[0], ", ", idx[1], ", ", idx[2], ") next to it has a non-vacuum material");
            checked_vacuum = true;
          }
          const double proj = m.comp < 3 ? e_[m.comp] : h_[m.comp - 3];  // 1D H is in A/m
          if (proj == 0.0) continue;
          const double sign = t_in ? 1.0 : -1.0;
          const auto r = g.position(Component(m.comp), j[0], j[1], j[2]);
          const double xi = k_[0] * r[0] + k_[1] * r[1] + k_[2] * r[2] - ref_;
          if (local)
            raw.push_back({c6, op.layout().at(li[0], li[1], li[2]),
                           float(sign * factor * m.wgt * proj) * amp, xi, !electric});
          xi_min = std::min(xi_min, xi);
          xi_max = std::max(xi_max, xi);
        }
      }
  } catch (...) {
    task_error[task] = std::current_exception();
  }
  for (const auto& e : task_error)  // the first error in walk order, as the serial walk throws it
    if (e) std::rethrow_exception(e);
  std::vector<Raw> raw;
  double xi_min = std::numeric_limits<double>::infinity(), xi_max = -xi_min;
  std::size_t total = 0;
  for (const auto& r : task_raw) total += r.size();
  raw.reserve(total);
  for (int task = 0; task < tasks; ++task) {
    raw.insert(raw.end(), task_raw[task].begin(), task_raw[task].end());
    xi_min = std::min(xi_min, task_xi_min[task]);
    xi_max = std::max(xi_max, task_xi_max[task]);
  }
  xi0_ = d1_ * std::floor(xi_min / d1_ + 1e-9) - 4 * d1_;
  const int m1 = int(std::ceil((xi_max - xi0_) / d1_)) + 4 + kAbsorberCells;
  e1_.assign(m1, 0.0f);
  h1_.assign(m1, 0.0f);  // entry m1-1 unused (kept for the interpolation stencil)
  // Absorber: matched graded loss s = sigma/eps = sigma_m/mu (1/s) over the last cells.
  const double v = kC0 / alpha_;
  const double L = kAbsorberCells * d1_;
  const double s_max = 4.0 * v * 18.42 / (2.0 * L) * 2.0;
  const int start = m1 - 1 - kAbsorberCells;
  ca1_.resize(m1); cb1_.resize(m1); da1_.resize(m1); db1_.resize(m1);
  for (int m = 0; m < m1; ++m) {
    const double xe = std::max(0.0, double(m - start)) / kAbsorberCells;
    const double xh = std::max(0.0, m + 0.5 - start) / kAbsorberCells;
    const double se = s_max * xe * xe * xe * dt / 2, sh = s_max * xh * xh * xh * dt / 2;
    ca1_[m] = float((1 - se) / (1 + se));
    cb1_[m] = float(dt / (alpha_ * kEps0 * d1_) / (1 + se));
    da1_[m] = float((1 - sh) / (1 + sh));
    db1_[m] = float(dt / (alpha_ * kMu0 * d1_) / (1 + sh));
  }
  if (s44_) {  // the three earlier time levels (zero before t = 0, as the 3D engine's)
    for (int l = 0; l < 3; ++l) {
      e1h_[l].assign(m1, 0.0f);
      h1h_[l].assign(m1, 0.0f);
    }
  }

  // CSR lists with cubic Lagrange weights.
  // (The walk emits them in this order already on a single-domain grid; the sort is then a no-op.)
  const auto by_target = [](const Raw& a, const Raw& b) { return a.comp != b.comp ? a.comp < b.comp : a.off < b.off; };
  if (!std::is_sorted(raw.begin(), raw.end(), by_target)) std::stable_sort(raw.begin(), raw.end(), by_target);
  for (Targets* t : {&te_, &th_}) t->begin.clear();
  for (std::size_t q = 0; q < raw.size(); ++q) {
    const Raw& r = raw[q];
    Targets& t = r.comp < 3 ? te_ : th_;
    if (t.comp.empty() || t.comp.back() != r.comp || t.offset.back() != r.off) {
      t.comp.push_back(r.comp);
      t.offset.push_back(r.off);
      t.begin.push_back(int(t.terms.size()));
    }
    // E targets interpolate the 1D H (half nodes), H targets the 1D E (integer nodes).
    const double x = (r.xi - xi0_) / d1_ - (r.to_e ? 0.0 : 0.5);
    double fl = std::floor(x);
    double tt = x - fl;
    if (tt > 1.0 - 1e-7) { fl += 1.0; tt = 0.0; }
    if (tt < 1e-7) tt = 0.0;
    Term m;
    m.coef = r.coef;
    m.base = int(fl) - 1;
    m.w[0] = float(-tt * (tt - 1) * (tt - 2) / 6);
    m.w[1] = float((tt + 1) * (tt - 1) * (tt - 2) / 2);
    m.w[2] = float(-(tt + 1) * tt * (tt - 2) / 2);
    m.w[3] = float((tt + 1) * tt * (tt - 1) / 6);
    if (m.base < 0 || m.base + 3 >= m1) fail("TFSF: internal error, interpolation outside the 1D grid");
    t.terms.push_back(m);
  }
  for (Targets* t : {&te_, &th_}) t->begin.push_back(int(t->terms.size()));

  if (engine.fields_on_device()) {
#ifdef VEM_WITH_CUDA
    backend_ = make_tfsf_backend_cuda(te_, th_, e1_.size());
#else
    fail("TFSF: engine keeps fields on a device but the library was built without CUDA");
#endif
  } else {
    backend_ = std::make_unique<TfsfCpu>(te_, th_);
  }
  e1_[0] = float(wave_.waveform.value(engine.time_of_e()));
  engine.add_extension(this);
}

TfsfSource::~TfsfSource() { engine_->remove_extension(this); }

std::size_t TfsfSource::corrected_samples() const { return te_.comp.size() + th_.comp.size(); }

double TfsfSource::delay(const std::array<double, 3>& r) const {
  const double xi = k_[0] * r[0] + k_[1] * r[1] + k_[2] * r[2] - ref_;
  const double f0 = wave_.design_frequency > 0 ? wave_.design_frequency : wave_.waveform.f0;
  return (xi - xi0_) * k3_ / (2 * kPi * f0);
}

// One s44 update of the 1D array u (samples lo..hi, curl(m) its Yee difference): the same
// arithmetic as the 3D engines' s44 update (FdtdEngineCpu::bulk_ho) with the 1D (a, b) pairs.
template <class Curl>
static void step_s44_1d(std::vector<float>& u, std::vector<float> (&hist)[3], const std::vector<float>& a,
                        const std::vector<float>& b, int lo, int hi, const Curl& curl) {
  float* h1 = hist[0].data();
  float* h2 = hist[1].data();
  float* h3 = hist[2].data();
  for (int m = lo; m <= hi; ++m) {
    const S44Coefficients q = s44_coefficients(a[m], b[m]);
    const float u0 = u[m], u1 = h1[m], u2 = h2[m], u3 = h3[m];
    u[m] = q.c[0] * u0 + q.c[1] * u1 + q.c[2] * u2 + q.c[3] * u3 - q.cb * curl(m);
    h3[m] = u2;
    h2[m] = u1;
    h1[m] = u0;
  }
}

void TfsfSource::hook(FdtdEngine& eng, HookPoint where, int step) {
  const int m1 = int(e1_.size());
  if (where == HookPoint::after_h) {
    backend_->apply(eng, false, e1_);  // H targets need E_inc at step dt
    if (s44_) {
      step_s44_1d(h1_, h1h_, da1_, db1_, 0, m1 - 2, [&](int m) { return e1_[m + 1] - e1_[m]; });
    } else {
      for (int m = 0; m < m1 - 1; ++m) h1_[m] = da1_[m] * h1_[m] - db1_[m] * (e1_[m + 1] - e1_[m]);
    }
  } else if (where == HookPoint::after_e) {
    backend_->apply(eng, true, h1_);  // E targets need H_inc at (step + 1/2) dt
    if (s44_) {
      step_s44_1d(e1_, e1h_, ca1_, cb1_, 1, m1 - 2, [&](int m) { return h1_[m] - h1_[m - 1]; });
    } else {
      for (int m = 1; m < m1 - 1; ++m) e1_[m] = ca1_[m] * e1_[m] - cb1_[m] * (h1_[m] - h1_[m - 1]);
    }
    e1_[0] = float(wave_.waveform.value((step + 1.0) * eng.op().dt()));
  }
}

}  // namespace vem
