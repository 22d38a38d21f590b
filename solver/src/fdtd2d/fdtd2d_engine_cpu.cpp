// The 2D CPU engine (fdtd2d_engine_cpu.h). Slots: TM 0 Ez, 1 Hx, 2 Hy; TE 0 Hz, 1 Ex, 2 Ey.
#include "fdtd2d/fdtd2d_engine_cpu.h"

#include <algorithm>

#include "vem/core/error.h"

namespace vem {

namespace {

struct TableCoefficients {  // indexed mode: 6 floats per material
  const float* table;
  const std::uint16_t* index;
  float a(int s, std::int64_t o) const { return table[index[o] * 6 + 2 * s]; }
  float b(int s, std::int64_t o) const { return table[index[o] * 6 + 2 * s + 1]; }
};
struct ArrayCoefficients {  // coefficient-array mode
  const float* arr[6];
  float a(int s, std::int64_t o) const { return arr[2 * s][o]; }
  float b(int s, std::int64_t o) const { return arr[2 * s + 1][o]; }
};

}  // namespace

Fdtd2dEngineCpu::Fdtd2dEngineCpu(const Fdtd2dOperator& op)
    : Fdtd2dEngine(op), te_(op.polarization() == Polarization2D::te) {
  for (auto& f : f_) f.assign(op.layout().size, 0.0f);
  const int n[2] = {op.grid().nx, op.grid().ny};
  for (const CpmlSlab& s : op.cpml_slabs()) {
    const std::size_t across = std::size_t(n[1 - s.axis] + 1);
    psi_e_.emplace_back(across * std::max(0, s.e_end - s.e_begin + 1), 0.0f);
    psi_h_.emplace_back(across * std::max(0, s.h_end - s.h_begin + 1), 0.0f);
  }
}

int Fdtd2dEngineCpu::slot_of(Component c) const {
  const auto comps = op_.components();
  for (int s = 0; s < 3; ++s)
    if (comps[s] == c) return s;
  fail("2D engine: component ", component_name(c), " is not a field of the ", polarization_name(op_.polarization()),
       " polarization");
}

void Fdtd2dEngineCpu::do_steps(int n) {
  probe_buf_.reserve(probe_buf_.size() + std::size_t(n) * op_.probes().size());
  if (op_.material_mode() == MaterialMode::indexed) {
    const TableCoefficients coef{op_.coefficient_table().data(), op_.index_array().data()};
    for (int s = 0; s < n; ++s) step_once(coef, steps_ + s);
  } else {
    ArrayCoefficients coef;
    for (int q = 0; q < 6; ++q) coef.arr[q] = op_.coefficient_arrays()[q].data();
    for (int s = 0; s < n; ++s) step_once(coef, steps_ + s);
  }
}

// One leap-frog step (0-based `step`): H to (step + 1/2) dt, then E to (step + 1) dt, with the
// hook points of fdtd_engine.h.
template <class Coef>
void Fdtd2dEngineCpu::step_once(const Coef& coef, int step) {
  bulk_h(coef);
  cpml(false, coef);
  apply_sources(false, step);
  run_hooks(HookPoint::after_h, step);
  fill_h_ghosts();
  bulk_e(coef);
  cpml(true, coef);
  apply_sources(true, step);
  run_hooks(HookPoint::after_e, step);
  copy_periodic_e();
  for (const auto& p : op_.probes()) probe_buf_.push_back(f_[slot_of(p.probe.component)][p.offset]);
  run_hooks(HookPoint::end_of_step, step);
}

template <class Coef>
void Fdtd2dEngineCpu::bulk_h(const Coef& coef) {
  const FieldLayout2D& L = op_.layout();
  const std::int64_t p = L.pitch;
  const float idx = float(1.0 / op_.grid().dx), idy = float(1.0 / op_.grid().dy);
  if (!te_) {
    // Hx <- da Hx - db dEz/dy;  Hy <- da Hy - db (-dEz/dx)
    const float* Ez = f_[0].data();
    for (int s = 1; s <= 2; ++s) {
      float* H = f_[s].data();
      const int i0 = op_.range_lo(s, 0), i1 = op_.range_hi(s, 0), j0 = op_.range_lo(s, 1), j1 = op_.range_hi(s, 1);
#pragma omp parallel for schedule(static)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) {
          const std::int64_t o = L.at(i, j);
          const float curl = s == 1 ? (Ez[o + p] - Ez[o]) * idy : -((Ez[o + 1] - Ez[o]) * idx);
          H[o] = coef.a(s, o) * H[o] - coef.b(s, o) * curl;
        }
    }
  } else {
    // Hz <- da Hz - db (dEy/dx - dEx/dy)
    float* Hz = f_[0].data();
    const float* Ex = f_[1].data();
    const float* Ey = f_[2].data();
    const int i0 = op_.range_lo(0, 0), i1 = op_.range_hi(0, 0), j0 = op_.range_lo(0, 1), j1 = op_.range_hi(0, 1);
#pragma omp parallel for schedule(static)
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        const std::int64_t o = L.at(i, j);
        const float curl = (Ey[o + 1] - Ey[o]) * idx - (Ex[o + p] - Ex[o]) * idy;
        Hz[o] = coef.a(0, o) * Hz[o] - coef.b(0, o) * curl;
      }
  }
}

template <class Coef>
void Fdtd2dEngineCpu::bulk_e(const Coef& coef) {
  const FieldLayout2D& L = op_.layout();
  const std::int64_t p = L.pitch;
  const float idx = float(1.0 / op_.grid().dx), idy = float(1.0 / op_.grid().dy);
  if (!te_) {
    // Ez <- ca Ez + cb (dHy/dx - dHx/dy)
    float* Ez = f_[0].data();
    const float* Hx = f_[1].data();
    const float* Hy = f_[2].data();
    const int i0 = op_.range_lo(0, 0), i1 = op_.range_hi(0, 0), j0 = op_.range_lo(0, 1), j1 = op_.range_hi(0, 1);
#pragma omp parallel for schedule(static)
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        const std::int64_t o = L.at(i, j);
        const float curl = (Hy[o] - Hy[o - 1]) * idx - (Hx[o] - Hx[o - p]) * idy;
        Ez[o] = coef.a(0, o) * Ez[o] + coef.b(0, o) * curl;
      }
  } else {
    // Ex <- ca Ex + cb dHz/dy;  Ey <- ca Ey + cb (-dHz/dx)
    const float* Hz = f_[0].data();
    for (int s = 1; s <= 2; ++s) {
      float* E = f_[s].data();
      const int i0 = op_.range_lo(s, 0), i1 = op_.range_hi(s, 0), j0 = op_.range_lo(s, 1), j1 = op_.range_hi(s, 1);
#pragma omp parallel for schedule(static)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) {
          const std::int64_t o = L.at(i, j);
          const float curl = s == 1 ? (Hz[o] - Hz[o - p]) * idy : -((Hz[o] - Hz[o - 1]) * idx);
          E[o] = coef.a(s, o) * E[o] + coef.b(s, o) * curl;
        }
    }
  }
}

// CPML corrections (fdtd_operator.h): in a slab on axis a the derivative d_a F of the update of
// component U becomes d_a F / kappa + psi, psi <- b psi + c d_a F, applied after the bulk update as
//   U += sign * coef_b(U) * [(1/kappa - 1) d_a F + psi]
// with sign the sign of d_a F in U's update (fdtd2d_setup.h):
//   TM  E: Ez (x: +dHy/dx, y: -dHx/dy)     H: x: Hy (+dEz/dx), y: Hx (-dEz/dy)
//   TE  E: x: Ey (-dHz/dx), y: Ex (+dHz/dy)  H: Hz (x: -dEy/dx, y: +dEx/dy)
template <class Coef>
void Fdtd2dEngineCpu::cpml(bool electric, const Coef& coef) {
  const FieldLayout2D& L = op_.layout();
  const double dd[2] = {op_.grid().dx, op_.grid().dy};
  const auto& slabs = op_.cpml_slabs();
  for (std::size_t si = 0; si < slabs.size(); ++si) {
    const CpmlSlab& sl = slabs[si];
    const int a = sl.axis;
    int comp, src;
    float sign;
    if (!te_) {
      if (electric) { comp = 0; src = a == 0 ? 2 : 1; sign = a == 0 ? 1.0f : -1.0f; }
      else { comp = a == 0 ? 2 : 1; src = 0; sign = a == 0 ? 1.0f : -1.0f; }
    } else {
      if (electric) { comp = a == 0 ? 2 : 1; src = 0; sign = a == 0 ? -1.0f : 1.0f; }
      else { comp = 0; src = a == 0 ? 2 : 1; sign = a == 0 ? -1.0f : 1.0f; }
    }
    const CpmlProfile& prof = op_.cpml_profile(a);
    const float* pb = electric ? prof.b_e.data() : prof.b_h.data();
    const float* pc = electric ? prof.c_e.data() : prof.c_h.data();
    const float* pk = electric ? prof.kinv_e.data() : prof.kinv_h.data();
    const bool lagged = prof.lagged;
    const int begin = electric ? sl.e_begin : sl.h_begin, end = electric ? sl.e_end : sl.h_end;
    float* psi = electric ? psi_e_[si].data() : psi_h_[si].data();
    float* U = f_[comp].data();
    const float* F = f_[src].data();
    const std::int64_t sa = a == 0 ? 1 : L.pitch;
    const float inv_d = float(1.0 / dd[a]);
    int lo[2] = {op_.range_lo(comp, 0), op_.range_lo(comp, 1)};
    int hi[2] = {op_.range_hi(comp, 0), op_.range_hi(comp, 1)};
    lo[a] = std::max(lo[a], begin);
    hi[a] = std::min(hi[a], end);
    // psi box: along a from `begin`, across all N+1 samples from 0 (x fastest).
    const int box_x = a == 0 ? end - begin + 1 : op_.grid().nx + 1;
    const int off_x = a == 0 ? begin : 0, off_y = a == 1 ? begin : 0;
#pragma omp parallel for schedule(static)
    for (int j = lo[1]; j <= hi[1]; ++j)
      for (int i = lo[0]; i <= hi[0]; ++i) {
        const std::int64_t o = L.at(i, j);
        const int x = a == 0 ? i : j;
        const float dF = electric ? (F[o] - F[o - sa]) * inv_d : (F[o + sa] - F[o]) * inv_d;
        float& ps = psi[(i - off_x) + std::size_t(box_x) * (j - off_y)];
        const float old = ps;
        ps = pb[x] * ps + pc[x] * dF;
        U[o] += sign * coef.b(comp, o) * ((pk[x] - 1.0f) * dF + (lagged ? old : ps));
      }
  }
}

// Source times as in 3D (source.h): J at (step + 1/2) dt for the E update to (step + 1) dt, M at
// step dt for the H update to (step + 1/2) dt; hard sources at the field's own time.
void Fdtd2dEngineCpu::apply_sources(bool electric, int step) {
  const double dt = op_.dt();
  for (const ResolvedSource& s : op_.sources()) {
    if (s.electric != electric) continue;
    double t = 0;
    switch (s.kind) {
      case PointSource::Kind::electric_current: t = (step + 0.5) * dt; break;
      case PointSource::Kind::hard_e: t = (step + 1.0) * dt; break;
      case PointSource::Kind::magnetic_current: t = step * dt; break;
      case PointSource::Kind::hard_h: t = (step + 0.5) * dt; break;
    }
    const bool hard = s.kind == PointSource::Kind::hard_e || s.kind == PointSource::Kind::hard_h;
    const double w = s.waveform.value(t);
    for (int q = 0; q < 3; ++q) {
      if (!s.active[q]) continue;
      float& v = f_[q][s.offset[q]];
      const float add = float(s.scale[q] * w);
      v = hard ? add : v + add;
    }
  }
}

// Ghost samples of the H component tangential to the faces of axis a (TM: Hy on x faces, Hx on
// y faces; TE: Hz): PMC mirrors with opposite sign (tangential H = 0 on the face), periodic wraps.
void Fdtd2dEngineCpu::fill_h_ghosts() {
  const auto& bc = op_.setup().boundaries;
  const FieldLayout2D& L = op_.layout();
  const int n[2] = {op_.grid().nx, op_.grid().ny};
  for (int a = 0; a < 2; ++a) {
    const BoundaryType lo = bc.face[2 * a], hi = bc.face[2 * a + 1];
    const bool any = lo == BoundaryType::pmc || lo == BoundaryType::periodic || hi == BoundaryType::pmc ||
                     hi == BoundaryType::periodic;
    if (!any) continue;
    float* H = f_[te_ ? 0 : (a == 0 ? 2 : 1)].data();
    const std::int64_t sa = a == 0 ? 1 : L.pitch;
    for (int u = 0; u <= n[1 - a]; ++u) {
      const std::int64_t o0 = a == 0 ? L.at(0, u) : L.at(u, 0);
      const std::int64_t oN = o0 + n[a] * sa;
      if (lo == BoundaryType::pmc) H[o0 - sa] = -H[o0];
      if (lo == BoundaryType::periodic) H[o0 - sa] = H[oN - sa];
      if (hi == BoundaryType::pmc) H[oN] = -H[oN - sa];
      if (hi == BoundaryType::periodic) H[oN] = H[o0];
    }
  }
}

// Periodic axis a: the tangential E on node plane N repeats plane 0 (TM: Ez; TE: Ey on x, Ex on y).
void Fdtd2dEngineCpu::copy_periodic_e() {
  const auto& bc = op_.setup().boundaries;
  const FieldLayout2D& L = op_.layout();
  const int n[2] = {op_.grid().nx, op_.grid().ny};
  for (int a = 0; a < 2; ++a) {
    if (bc.face[2 * a] != BoundaryType::periodic) continue;
    float* E = f_[te_ ? (a == 0 ? 2 : 1) : 0].data();
    const std::int64_t sa = a == 0 ? 1 : L.pitch;
    for (int u = 0; u <= n[1 - a]; ++u) {
      const std::int64_t o0 = a == 0 ? L.at(0, u) : L.at(u, 0);
      E[o0 + n[a] * sa] = E[o0];
    }
  }
}

std::vector<float> Fdtd2dEngineCpu::field(Component c) const {
  const int s = slot_of(c);
  const YeeGrid2D& g = op_.grid();
  const auto n = g.samples(c);
  std::vector<float> out(std::size_t(g.nx + 1) * (g.ny + 1), 0.0f);
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) out[i + std::size_t(g.nx + 1) * j] = f_[s][op_.layout().at(i, j)];
  return out;
}

void Fdtd2dEngineCpu::set_field(Component c, const std::vector<float>& values) {
  const int s = slot_of(c);
  const YeeGrid2D& g = op_.grid();
  if (values.size() != std::size_t(g.nx + 1) * (g.ny + 1))
    fail("set_field(", component_name(c), "): ", values.size(), " values, expected (nx+1)(ny+1) = ",
         std::size_t(g.nx + 1) * (g.ny + 1));
  const auto n = g.samples(c);
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) f_[s][op_.layout().at(i, j)] = values[i + std::size_t(g.nx + 1) * j];
}

}  // namespace vem
