#include "fdtd/fdtd_engine_cpu.h"

#include <algorithm>
#include <cmath>

#include "fdtd/engine_common.h"
#include "vem/core/error.h"

namespace vem {

namespace {

// Material coefficient access, indexed table or per-sample arrays (fdtd_setup.h).
struct IndexedCoefficients {
  const float* table;
  const std::uint16_t* index;
  float a(int c, std::int64_t o) const { return table[index[o] * 12 + 2 * c]; }
  float b(int c, std::int64_t o) const { return table[index[o] * 12 + 2 * c + 1]; }
};
struct ArrayCoefficients {
  const float* arr[12];
  float a(int c, std::int64_t o) const { return arr[2 * c][o]; }
  float b(int c, std::int64_t o) const { return arr[2 * c + 1][o]; }
};

// The value a store keeps (FdtdSetup::field_storage): the CPU engine's arrays are float, each
// stored value rounded as the CUDA engine's 2-byte stores round it (vem/core/field_storage.h).
struct KeepFloat32 {
  float operator()(float v) const { return v; }
};
struct RoundFloat16 {
  float operator()(float v) const { return round_to_float16(v); }
};
struct RoundBfloat16 {
  float operator()(float v) const { return round_to_bfloat16(v); }
};

}  // namespace

FdtdEngineCpu::FdtdEngineCpu(const FdtdOperator& op, const EngineTuning& tuning)
    : FdtdEngine(op),
      // automatic: the arrays (faster than a packed table on the CPU, fdtd.md)
      table_(coefficient_table_for(op, tuning.coefficients, false)) {
  const FieldLayout& L = op.layout();
  for (auto& f : f_) {
    f.p.reset(new float[L.size]);  // uninitialized: first touched below
    float* d = f.data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = -1; k <= L.nz; ++k)
      for (int j = -1; j <= L.ny; ++j) {
        float* row = d + L.at(-1, j, k) - (FieldLayout::kXOffset - 1);
        for (std::int64_t i = 0; i < L.pitch; ++i) row[i] = 0.0f;
      }
  }
  const int n[3] = {op.grid().nx, op.grid().ny, op.grid().nz};
  for (const auto& s : op.cpml_slabs()) {
    const PsiBox be(s, true, n), bh(s, false, n);
    psi_e_.push_back({std::vector<float>(be.size(), 0.0f), std::vector<float>(be.size(), 0.0f)});
    psi_h_.push_back({std::vector<float>(bh.size(), 0.0f), std::vector<float>(bh.size(), 0.0f)});
  }
  if (op.scheme().scheme != Scheme::yee) build_high_order();
}

void FdtdEngineCpu::build_high_order() {
  high_order_ = true;
  s44_ = op_.scheme().stencil.backward4;
  if (s44_)
    for (auto& comp : hist_)
      for (auto& level : comp) level.assign(op_.layout().size, 0.0f);
  HighOrderStencil hs = build_high_order_stencil(op_);
  for (int c = 0; c < 6; ++c)
    for (int a = 0; a < 3; ++a) res_[c][a] = std::move(hs.res[c][a]);
  for (int fw = 0; fw < 2; ++fw) terms_[fw] = std::move(hs.terms[fw]);
  // Interior fast path: every stencil point of a sample at least 2 samples from each face is the
  // plain neighbour (sign +1, no wrap or image), at a fixed offset from the sample.
  const FieldLayout& L = op_.layout();
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  for (int fw = 0; fw < 2; ++fw)
    for (int a = 0; a < 3; ++a) {
      const int b = (a + 1) % 3, d = (a + 2) % 3;
      for (const Term& t : terms_[fw]) {
        const std::int64_t tr = t.tb * stride[b] + t.td * stride[d];
        delta_[fw][a].push_back({t.hi * stride[a] + tr, t.lo * stride[a] + tr, t.w});
      }
    }
}

// D_a F_f at a sample whose whole stencil is interior (see build_high_order): the same sum, in
// the same order, as ho_diff (the sign products there are exactly 1).
float FdtdEngineCpu::ho_diff_interior(int f, int a, bool forward, std::int64_t o) const {
  const float* F = f_[f].data();
  float sum = 0.0f;
  for (const Delta& t : delta_[forward ? 1 : 0][a]) sum += t.w * (F[o + t.hi] - F[o + t.lo]);
  return sum;
}

bool FdtdEngineCpu::ho_interior(const int idx[3]) const {
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  for (int ax = 0; ax < 3; ++ax)
    if (idx[ax] < 2 || idx[ax] > n[ax] - 3) return false;
  return true;
}

// D_a F_f at sample idx (unscaled by 1/h): sum of w (F(hi) - F(lo)) over the stencil's terms.
float FdtdEngineCpu::ho_diff(int f, int a, bool forward, const int idx[3]) const {
  const int b = (a + 1) % 3, d = (a + 2) % 3;
  const float* F = f_[f].data();
  const auto& R = res_[f];
  const std::int64_t base = op_.layout().origin;
  float sum = 0.0f;
  for (const Term& t : terms_[forward ? 1 : 0]) {
    int hi[3], lo[3];
    hi[a] = idx[a] + t.hi; lo[a] = idx[a] + t.lo;
    hi[b] = lo[b] = idx[b] + t.tb;
    hi[d] = lo[d] = idx[d] + t.td;
    float vh = R[0].sign[hi[0] + kReach] * R[1].sign[hi[1] + kReach] * R[2].sign[hi[2] + kReach];
    float vl = R[0].sign[lo[0] + kReach] * R[1].sign[lo[1] + kReach] * R[2].sign[lo[2] + kReach];
    if (vh != 0.0f)
      vh *= F[base + R[0].off[hi[0] + kReach] + R[1].off[hi[1] + kReach] + R[2].off[hi[2] + kReach]];
    if (vl != 0.0f)
      vl *= F[base + R[0].off[lo[0] + kReach] + R[1].off[lo[1] + kReach] + R[2].off[lo[2] + kReach]];
    sum += t.w * (vh - vl);
  }
  return sum;
}

// The bulk update of fdtd_operator.h with D_a in place of the Yee differences:
//   E_c <- ca E_c + cb [ D_{c+1} H_{c+2} - D_{c+2} H_{c+1} ],  H_c <- da H_c - db [ D_{c+1} E_{c+2} - D_{c+2} E_{c+1} ]
template <class Coef>
void FdtdEngineCpu::bulk_ho(bool electric, int c, const Coef& coef) {
  const FieldLayout& L = op_.layout();
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const int b = (c + 1) % 3, d = (c + 2) % 3;
  const int self = electric ? c : 3 + c, other = electric ? 3 : 0;
  float* U = f_[self].data();
  const float ib = float(1.0 / dd[b]), id = float(1.0 / dd[d]);
  const float sgn = electric ? 1.0f : -1.0f;
  const Component cc = static_cast<Component>(self);
  const int i0 = op_.range_lo(cc, 0), i1 = op_.range_hi(cc, 0);
  const int j0 = op_.range_lo(cc, 1), j1 = op_.range_hi(cc, 1);
  const int k0 = op_.range_lo(cc, 2), k1 = op_.range_hi(cc, 2);
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = k0; k <= k1; ++k)
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        const int idx[3] = {i, j, k};
        const std::int64_t o = L.at(i, j, k);
        const float curl = ho_interior(idx) ? ho_diff_interior(other + d, b, !electric, o) * ib -
                                                  ho_diff_interior(other + b, d, !electric, o) * id
                                            : ho_diff(other + d, b, !electric, idx) * ib -
                                                  ho_diff(other + b, d, !electric, idx) * id;
        if (s44_) {
          const S44Coefficients q = s44_coefficients(coef.a(self, o), coef.b(self, o));
          float* h1 = hist_[self][0].data();
          float* h2 = hist_[self][1].data();
          float* h3 = hist_[self][2].data();
          const float u0 = U[o], u1 = h1[o], u2 = h2[o], u3 = h3[o];
          U[o] = q.c[0] * u0 + q.c[1] * u1 + q.c[2] * u2 + q.c[3] * u3 + sgn * q.cb * curl;
          h3[o] = u2;
          h2[o] = u1;
          h1[o] = u0;
        } else {
          U[o] = coef.a(self, o) * U[o] + sgn * coef.b(self, o) * curl;
        }
      }
}

// The CPML corrections of cpml_e / cpml_h with the high-order derivative D_a.
template <class Coef>
void FdtdEngineCpu::cpml_ho(bool electric, std::size_t si, const Coef& coef) {
  const CpmlSlab& s = op_.cpml_slabs()[si];
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const FieldLayout& L = op_.layout();
  const int a = s.axis;
  const CpmlProfile& prof = op_.cpml_profile(a);
  const bool lagged = prof.lagged;
  const PsiBox box(s, electric, n);
  const float inv_d = float(1.0 / dd[a]);
  const float* pb = electric ? prof.b_e.data() : prof.b_h.data();
  const float* pc = electric ? prof.c_e.data() : prof.c_h.data();
  const float* pk = electric ? prof.kinv_e.data() : prof.kinv_h.data();
  for (int q = 0; q < 2; ++q) {
    // E: q = 0 updates E_{a+2} from H_{a+1} (+), q = 1 E_{a+1} from H_{a+2} (-).
    // H: q = 0 updates H_{a+1} from E_{a+2} (+), q = 1 H_{a+2} from E_{a+1} (-).
    const int c = electric ? (q == 0 ? (a + 2) % 3 : (a + 1) % 3) : (q == 0 ? (a + 1) % 3 : (a + 2) % 3);
    const int src = electric ? 3 + (q == 0 ? (a + 1) % 3 : (a + 2) % 3) : (q == 0 ? (a + 2) % 3 : (a + 1) % 3);
    const int self = electric ? c : 3 + c;
    const float sign = q == 0 ? 1.0f : -1.0f;
    float* U = f_[self].data();
    float* psi = (electric ? psi_e_ : psi_h_)[si][q].data();
    const Component cc = static_cast<Component>(self);
    int lo[3], hi[3];
    for (int ax = 0; ax < 3; ++ax) { lo[ax] = op_.range_lo(cc, ax); hi[ax] = op_.range_hi(cc, ax); }
    lo[a] = std::max(lo[a], electric ? s.e_begin : s.h_begin);
    hi[a] = std::min(hi[a], electric ? s.e_end : s.h_end);
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = lo[2]; k <= hi[2]; ++k)
      for (int j = lo[1]; j <= hi[1]; ++j)
        for (int i = lo[0]; i <= hi[0]; ++i) {
          const int idx[3] = {i, j, k};
          const int x = idx[a];
          const std::int64_t o = L.at(i, j, k);
          const float dF = (ho_interior(idx) ? ho_diff_interior(src, a, !electric, o)
                                             : ho_diff(src, a, !electric, idx)) * inv_d;
          float& p = psi[box.at(i, j, k)];
          const float old = p;
          p = pb[x] * p + pc[x] * dF;
          const float cb = s44_ ? s44_coefficients(coef.a(self, o), coef.b(self, o)).cb : coef.b(self, o);
          U[o] += sign * cb * ((pk[x] - 1.0f) * dF + (lagged ? old : p));
        }
  }
}

void FdtdEngineCpu::do_steps(int n) {
  probe_buf_.reserve(probe_buf_.size() + std::size_t(n) * op_.probes().size());
  if (table_) {
    step_coef(IndexedCoefficients{table_.table, table_.index}, n);
  } else {
    ArrayCoefficients coef;
    for (int q = 0; q < 12; ++q) coef.arr[q] = op_.coefficient_arrays()[q].data();
    step_coef(coef, n);
  }
}

template <class Coef>
void FdtdEngineCpu::step_coef(const Coef& coef, int n) {
  switch (field_storage()) {
    case FieldStorage::float16:
      for (int s = 0; s < n; ++s) step_once<Coef, RoundFloat16>(coef, steps_ + s);
      break;
    case FieldStorage::bfloat16:
      for (int s = 0; s < n; ++s) step_once<Coef, RoundBfloat16>(coef, steps_ + s);
      break;
    default:
      for (int s = 0; s < n; ++s) step_once<Coef, KeepFloat32>(coef, steps_ + s);
  }
}

void FdtdEngineCpu::round_field(int c) {
  const FieldStorage st = field_storage();
  const std::int64_t n = op_.layout().size;
  float* d = f_[c].data();
#pragma omp parallel for schedule(static)
  for (std::int64_t o = 0; o < n; ++o) d[o] = round_to_storage(d[o], st);
}

void FdtdEngineCpu::round_all_fields() {
  for (int c = 0; c < 6; ++c) round_field(c);
}

// One leap-frog step `step` (0-based): H from (step-1/2) dt to (step+1/2) dt, E to (step+1) dt.
template <class Coef, class Rnd>
void FdtdEngineCpu::step_once(const Coef& coef, int step) {
  const bool narrow = field_storage() != FieldStorage::float32;
  if (high_order_) {
    for (int c = 0; c < 3; ++c) bulk_ho(false, c, coef);
    for (std::size_t s = 0; s < op_.cpml_slabs().size(); ++s) cpml_ho(false, s, coef);
  } else {
    for (int c = 0; c < 3; ++c) bulk_h<Coef, Rnd>(c, coef);
    for (std::size_t s = 0; s < op_.cpml_slabs().size(); ++s) cpml_h<Coef, Rnd>(s, coef);
  }
  apply_sources(false, step);
  run_hooks(HookPoint::after_h, step);
  if (narrow && has_extensions()) round_all_fields();
  fill_h_ghosts();
  exchange_halo(false);
  if (high_order_) {
    for (int c = 0; c < 3; ++c) bulk_ho(true, c, coef);
    for (std::size_t s = 0; s < op_.cpml_slabs().size(); ++s) cpml_ho(true, s, coef);
  } else {
    for (int c = 0; c < 3; ++c) bulk_e<Coef, Rnd>(c, coef);
    for (std::size_t s = 0; s < op_.cpml_slabs().size(); ++s) cpml_e<Coef, Rnd>(s, coef);
  }
  apply_sources(true, step);
  run_hooks(HookPoint::after_e, step);
  if (narrow && has_extensions()) round_all_fields();
  copy_periodic_e_planes();
  exchange_halo(true);
  for (const auto& p : op_.probes()) probe_buf_.push_back(f_[int(p.probe.component)][p.offset]);
  run_hooks(HookPoint::end_of_step, step);
  if (narrow && has_extensions()) round_all_fields();
}

// E_c <- ca E_c + cb [ (H_{c+2}(o) - H_{c+2}(o - s_{c+1})) / d_{c+1} - (H_{c+1}(o) - H_{c+1}(o - s_{c+2})) / d_{c+2} ]
template <class Coef, class Rnd>
void FdtdEngineCpu::bulk_e(int c, const Coef& coef) {
  const Rnd rnd;
  const FieldLayout& L = op_.layout();
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const int b = (c + 1) % 3, d = (c + 2) % 3;
  float* E = f_[c].data();
  const float* Hd = f_[3 + d].data();
  const float* Hb = f_[3 + b].data();
  const std::int64_t sb = stride[b], sd = stride[d];
  const float ib = float(1.0 / dd[b]), id = float(1.0 / dd[d]);
  const Component cc = static_cast<Component>(c);
  const int i0 = op_.range_lo(cc, 0), i1 = op_.range_hi(cc, 0);
  const int j0 = op_.range_lo(cc, 1), j1 = op_.range_hi(cc, 1);
  const int k0 = op_.range_lo(cc, 2), k1 = op_.range_hi(cc, 2);
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = k0; k <= k1; ++k)
    for (int j = j0; j <= j1; ++j) {
      const std::int64_t row = L.at(0, j, k);
#pragma omp simd
      for (int i = i0; i <= i1; ++i) {
        const std::int64_t o = row + i;
        E[o] = rnd(coef.a(c, o) * E[o] + coef.b(c, o) * ((Hd[o] - Hd[o - sb]) * ib - (Hb[o] - Hb[o - sd]) * id));
      }
    }
}

// H_c <- da H_c - db [ (E_{c+2}(o + s_{c+1}) - E_{c+2}(o)) / d_{c+1} - (E_{c+1}(o + s_{c+2}) - E_{c+1}(o)) / d_{c+2} ]
template <class Coef, class Rnd>
void FdtdEngineCpu::bulk_h(int c, const Coef& coef) {
  const Rnd rnd;
  const FieldLayout& L = op_.layout();
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const int b = (c + 1) % 3, d = (c + 2) % 3;
  float* H = f_[3 + c].data();
  const float* Ed = f_[d].data();
  const float* Eb = f_[b].data();
  const std::int64_t sb = stride[b], sd = stride[d];
  const float ib = float(1.0 / dd[b]), id = float(1.0 / dd[d]);
  const Component cc = static_cast<Component>(3 + c);
  const int i0 = op_.range_lo(cc, 0), i1 = op_.range_hi(cc, 0);
  const int j0 = op_.range_lo(cc, 1), j1 = op_.range_hi(cc, 1);
  const int k0 = op_.range_lo(cc, 2), k1 = op_.range_hi(cc, 2);
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = k0; k <= k1; ++k)
    for (int j = j0; j <= j1; ++j) {
      const std::int64_t row = L.at(0, j, k);
#pragma omp simd
      for (int i = i0; i <= i1; ++i) {
        const std::int64_t o = row + i;
        H[o] = rnd(coef.a(3 + c, o) * H[o] -
                   coef.b(3 + c, o) * ((Ed[o + sb] - Ed[o]) * ib - (Eb[o + sd] - Eb[o]) * id));
      }
    }
}

// CPML corrections in one slab on axis a (fdtd_operator.h):
//   E_{a+2} += cb [(1/kappa - 1) d_a H_{a+1} + psi],  E_{a+1} -= cb [(1/kappa - 1) d_a H_{a+2} + psi]
template <class Coef, class Rnd>
void FdtdEngineCpu::cpml_e(std::size_t si, const Coef& coef) {
  const Rnd rnd;
  const CpmlSlab& s = op_.cpml_slabs()[si];
  const FieldLayout& L = op_.layout();
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  const int a = s.axis;
  const CpmlProfile& prof = op_.cpml_profile(a);
  const bool lagged = prof.lagged;
  const PsiBox box(s, true, n);
  const float inv_d = float(1.0 / dd[a]);
  for (int q = 0; q < 2; ++q) {
    const int c = q == 0 ? (a + 2) % 3 : (a + 1) % 3;
    const int src = q == 0 ? 3 + (a + 1) % 3 : 3 + (a + 2) % 3;
    const float sign = q == 0 ? 1.0f : -1.0f;
    float* E = f_[c].data();
    const float* H = f_[src].data();
    float* psi = psi_e_[si][q].data();
    const Component cc = static_cast<Component>(c);
    int lo[3], hi[3];
    for (int ax = 0; ax < 3; ++ax) { lo[ax] = op_.range_lo(cc, ax); hi[ax] = op_.range_hi(cc, ax); }
    lo[a] = std::max(lo[a], s.e_begin);
    hi[a] = std::min(hi[a], s.e_end);
    const std::int64_t sa = stride[a];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = lo[2]; k <= hi[2]; ++k)
      for (int j = lo[1]; j <= hi[1]; ++j)
        for (int i = lo[0]; i <= hi[0]; ++i) {
          const int x = a == 0 ? i : (a == 1 ? j : k);
          const std::int64_t o = L.at(i, j, k);
          const float dH = (H[o] - H[o - sa]) * inv_d;
          float& p = psi[box.at(i, j, k)];
          const float old = p;
          p = prof.b_e[x] * p + prof.c_e[x] * dH;
          E[o] = rnd(E[o] + sign * coef.b(c, o) * ((prof.kinv_e[x] - 1.0f) * dH + (lagged ? old : p)));
        }
  }
}

//   H_{a+1} += db [(1/kappa - 1) d_a E_{a+2} + psi],  H_{a+2} -= db [(1/kappa - 1) d_a E_{a+1} + psi]
template <class Coef, class Rnd>
void FdtdEngineCpu::cpml_h(std::size_t si, const Coef& coef) {
  const Rnd rnd;
  const CpmlSlab& s = op_.cpml_slabs()[si];
  const FieldLayout& L = op_.layout();
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  const double dd[3] = {op_.grid().dx, op_.grid().dy, op_.grid().dz};
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  const int a = s.axis;
  const CpmlProfile& prof = op_.cpml_profile(a);
  const bool lagged = prof.lagged;
  const PsiBox box(s, false, n);
  const float inv_d = float(1.0 / dd[a]);
  for (int q = 0; q < 2; ++q) {
    const int c = q == 0 ? (a + 1) % 3 : (a + 2) % 3;
    const int src = q == 0 ? (a + 2) % 3 : (a + 1) % 3;
    const float sign = q == 0 ? 1.0f : -1.0f;
    float* H = f_[3 + c].data();
    const float* E = f_[src].data();
    float* psi = psi_h_[si][q].data();
    const Component cc = static_cast<Component>(3 + c);
    int lo[3], hi[3];
    for (int ax = 0; ax < 3; ++ax) { lo[ax] = op_.range_lo(cc, ax); hi[ax] = op_.range_hi(cc, ax); }
    lo[a] = std::max(lo[a], s.h_begin);
    hi[a] = std::min(hi[a], s.h_end);
    const std::int64_t sa = stride[a];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = lo[2]; k <= hi[2]; ++k)
      for (int j = lo[1]; j <= hi[1]; ++j)
        for (int i = lo[0]; i <= hi[0]; ++i) {
          const int x = a == 0 ? i : (a == 1 ? j : k);
          const std::int64_t o = L.at(i, j, k);
          const float dE = (E[o + sa] - E[o]) * inv_d;
          float& p = psi[box.at(i, j, k)];
          const float old = p;
          p = prof.b_h[x] * p + prof.c_h[x] * dE;
          H[o] = rnd(H[o] + sign * coef.b(3 + c, o) * ((prof.kinv_h[x] - 1.0f) * dE + (lagged ? old : p)));
        }
  }
}

void FdtdEngineCpu::apply_sources(bool electric, int step) {
  const double dt = op_.dt();
  for (const auto& s : op_.sources()) {
    if (s.electric != electric) continue;
    const bool hard = s.kind == PointSource::Kind::hard_e || s.kind == PointSource::Kind::hard_h;
    const double w = point_source_waveform(s, step, dt);  // engine_common.h
    for (int a = 0; a < 3; ++a) {
      if (!s.active[a]) continue;
      float& v = f_[(electric ? 0 : 3) + a][s.offset[a]];
      v = round_to_storage(hard ? float(s.scale[a] * w) : v + float(s.scale[a] * w), field_storage());
    }
  }
}

// Ghost H samples just outside PMC (mirror, opposite sign) and periodic (wrapped) faces.
void FdtdEngineCpu::fill_h_ghosts() {
  const FieldLayout& L = op_.layout();
  const auto& bc = op_.setup().boundaries;
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  for (int a = 0; a < 3; ++a) {
    const BoundaryType lo = bc.face[2 * a], hi = bc.face[2 * a + 1];
    const bool any = lo == BoundaryType::pmc || lo == BoundaryType::periodic ||
                     hi == BoundaryType::pmc || hi == BoundaryType::periodic;
    if (!any) continue;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    const std::int64_t sa = stride[a];
    for (int q = 1; q <= 2; ++q) {
      float* H = f_[3 + (a + q) % 3].data();
#pragma omp parallel for collapse(2)
      for (int v = 0; v <= n[d]; ++v)
        for (int u = 0; u <= n[b]; ++u) {
          int idx[3];
          idx[a] = 0; idx[b] = u; idx[d] = v;
          const std::int64_t o0 = L.at(idx[0], idx[1], idx[2]);  // sample 0 along a
          const std::int64_t oN = o0 + n[a] * sa;                // ghost N along a
          if (lo == BoundaryType::pmc) H[o0 - sa] = -H[o0];
          if (lo == BoundaryType::periodic) H[o0 - sa] = H[oN - sa];
          if (hi == BoundaryType::pmc) H[oN] = -H[oN - sa];
          if (hi == BoundaryType::periodic) H[oN] = H[o0];
        }
    }
  }
}

// Periodic axes: the node plane N is the same as plane 0 for the tangential E components.
void FdtdEngineCpu::copy_periodic_e_planes() {
  const FieldLayout& L = op_.layout();
  const auto& bc = op_.setup().boundaries;
  const int n[3] = {op_.grid().nx, op_.grid().ny, op_.grid().nz};
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  for (int a = 0; a < 3; ++a) {
    if (bc.face[2 * a] != BoundaryType::periodic) continue;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    for (int q = 1; q <= 2; ++q) {
      float* E = f_[(a + q) % 3].data();
#pragma omp parallel for collapse(2)
      for (int v = 0; v <= n[d]; ++v)
        for (int u = 0; u <= n[b]; ++u) {
          int idx[3];
          idx[a] = 0; idx[b] = u; idx[d] = v;
          const std::int64_t o0 = L.at(idx[0], idx[1], idx[2]);
          E[o0 + n[a] * stride[a]] = E[o0];
        }
    }
  }
}

void FdtdEngineCpu::read_plane(Component c, int axis, int index, float* out) const {
  const FieldLayout& L = op_.layout();
  const int n[3] = {L.nx, L.ny, L.nz};
  const int b = (axis + 1) % 3, d = (axis + 2) % 3;
  const float* f = f_[int(c)].data();
  for (int v = 0; v <= n[d]; ++v)
    for (int u = 0; u <= n[b]; ++u) {
      int idx[3];
      idx[axis] = index; idx[b] = u; idx[d] = v;
      out[u + std::size_t(n[b] + 1) * v] = f[L.at(idx[0], idx[1], idx[2])];
    }
}

void FdtdEngineCpu::write_plane(Component c, int axis, int index, const float* in) {
  const FieldLayout& L = op_.layout();
  const int n[3] = {L.nx, L.ny, L.nz};
  const int b = (axis + 1) % 3, d = (axis + 2) % 3;
  float* f = f_[int(c)].data();
  for (int v = 0; v <= n[d]; ++v)
    for (int u = 0; u <= n[b]; ++u) {
      int idx[3];
      idx[axis] = index; idx[b] = u; idx[d] = v;
      f[L.at(idx[0], idx[1], idx[2])] = round_to_storage(in[u + std::size_t(n[b] + 1) * v], field_storage());
    }
}

std::int64_t FdtdEngineCpu::first_non_finite(Component c) const {
  const float* d = f_[int(c)].data();
  for (std::int64_t o = 0; o < op_.layout().size; ++o)
    if (!std::isfinite(d[o])) return o;
  return -1;
}

std::vector<float> FdtdEngineCpu::field(Component c) const {
  return compact_from_layout(op_, c, f_[int(c)].data());
}

void FdtdEngineCpu::set_field(Component c, const std::vector<float>& values) {
  layout_from_compact(op_, c, values, f_[int(c)].data());
  if (field_storage() != FieldStorage::float32) round_field(int(c));
}

}  // namespace vem
