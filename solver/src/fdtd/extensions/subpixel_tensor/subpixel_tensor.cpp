// SubpixelTensorExtension (subpixel_tensor.h): the list built from the operator and the CPU
// update. CUDA: subpixel_tensor_cuda.cu (the same float operations in the same order).
#include "vem/fdtd/extensions/subpixel_tensor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "vem/core/error.h"

namespace vem {

TensorSampleList build_tensor_sample_list(const FdtdOperator& op) {
  TensorSampleList L;
  const std::vector<InverseEpsRow>& rows = op.setup().medium.inverse_eps_rows;
  if (rows.empty()) return L;
  if (op.scheme().stencil.backward4)
    fail("subpixel full tensor: the s44 scheme steps E from four earlier time levels, not by one increment; use yee, ",
         "fv24, fv24_wb or s22 (or SubpixelOptions::full_tensor = false)");
  if (op.material_mode() != MaterialMode::coefficient_array)
    fail("subpixel full tensor: inverse_eps_rows need material_mode coefficient_array (the smoothed medium)");
  const YeeGrid& g = op.grid();
  const FieldLayout& lay = op.layout();
  const int n[3] = {g.nx, g.ny, g.nz};
  auto key = [&](int c, const std::array<int, 3>& p) { return lay.at(p[0], p[1], p[2]) * 3 + c; };
  auto usable = [&](int c, const std::array<int, 3>& p) {
    for (int a = 0; a < 3; ++a)
      if (p[a] < op.range_lo(Component(c), a) || p[a] > op.range_hi(Component(c), a)) return false;
    return op.coefficients_at(Component(c), p[0], p[1], p[2])[0] == 1.0f;  // lossless update
  };
  // The rows that can be used, by sample key.
  std::unordered_map<std::int64_t, const InverseEpsRow*> row_of;
  row_of.reserve(rows.size() * 2);
  for (const InverseEpsRow& r : rows) {
    const std::array<int, 3> p{r.i, r.j, r.k};
    if (r.component > 2 || r.i < 0 || r.j < 0 || r.k < 0 || r.i > n[0] || r.j > n[1] || r.k > n[2])
      fail("subpixel full tensor: row of component ", int(r.component), " at (", r.i, ", ", r.j, ", ", r.k,
           ") is outside the grid of ", n[0], " x ", n[1], " x ", n[2], " cells");
    if (!usable(r.component, p)) {
      ++L.rows_dropped;
      continue;
    }
    row_of[key(r.component, p)] = &r;
    ++L.rows_used;
  }
  // Listed samples (index by key) and couplings (row sample, neighbour sample, weight).
  std::unordered_map<std::int64_t, std::int32_t> index;
  std::vector<std::array<int, 4>> where;  // c, i, j, k
  auto listed = [&](int c, const std::array<int, 3>& p) {
    const std::int64_t kk = key(c, p);
    auto it = index.find(kk);
    if (it != index.end()) return it->second;
    const std::int32_t s = std::int32_t(where.size());
    index.emplace(kk, s);
    where.push_back({c, p[0], p[1], p[2]});
    return s;
  };
  struct Coupling {
    std::int32_t row, nb;
    float w;
  };
  std::vector<Coupling> cp;
  for (const InverseEpsRow& r : rows) {
    const int c = r.component;
    const std::array<int, 3> p{r.i, r.j, r.k};
    const std::int64_t kc = key(c, p);
    if (!row_of.count(kc)) continue;
    const std::int32_t si = listed(c, p);
    for (int q = 0; q < 2; ++q) {
      const int b = (c + 1 + q) % 3;
      const float t_cb = r.inv[q];
      // The four E_b samples around the E_c sample: p + {0, e_c} + {0, -e_b}.
      for (int u = 0; u < 2; ++u)
        for (int v = 0; v < 2; ++v) {
          std::array<int, 3> nb = p;
          nb[c] += u;
          nb[b] -= v;
          bool inside = true;
          for (int a = 0; a < 3; ++a) inside = inside && nb[a] >= 0 && nb[a] <= n[a];
          if (!inside || !usable(b, nb)) continue;
          const std::int64_t kb = key(b, nb);
          auto it = row_of.find(kb);
          float t_bc = 0.0f;  // element (b, c) of the neighbour's row: c = b+1 -> inv[0], c = b+2 -> inv[1]
          if (it != row_of.end()) t_bc = it->second->inv[c == (b + 1) % 3 ? 0 : 1];
          if (it != row_of.end() && kb < kc) continue;  // the pair is made from the neighbour's row
          const float w = 0.125f * (t_cb + t_bc);
          if (w == 0.0f) continue;
          const std::int32_t sb = listed(b, nb);
          cp.push_back({si, sb, w});
          cp.push_back({sb, si, w});
        }
    }
  }
  std::stable_sort(cp.begin(), cp.end(), [](const Coupling& a, const Coupling& b) { return a.row < b.row; });
  const std::size_t ns = where.size();
  L.component.resize(ns);
  L.offset.resize(ns);
  L.eps.resize(ns);
  L.inv.resize(ns);
  L.begin.assign(ns + 1, 0);
  for (std::size_t s = 0; s < ns; ++s) {
    const auto& w = where[s];
    L.component[s] = std::uint8_t(w[0]);
    L.offset[s] = lay.at(w[1], w[2], w[3]);
    const double e = op.relative_constitutive_at(Component(w[0]), w[1], w[2], w[3]);
    L.eps[s] = float(e);
    L.inv[s] = float(1.0 / e);
  }
  for (const Coupling& c : cp) ++L.begin[std::size_t(c.row) + 1];
  for (std::size_t s = 0; s < ns; ++s) L.begin[s + 1] += L.begin[s];
  L.neighbour.resize(cp.size());
  L.weight.resize(cp.size());
  for (std::size_t q = 0; q < cp.size(); ++q) {
    L.neighbour[q] = cp[q].nb;
    L.weight[q] = cp[q].w;
  }
  return L;
}

namespace {

class SubpixelTensorCpu final : public SubpixelTensorExtension::Backend {
 public:
  explicit SubpixelTensorCpu(const TensorSampleList& l) : l_(l), d_(l.size(), 0.0f), old_(l.size(), 0.0f) {}
  void init(FdtdEngine& eng) override {
    float* E[3] = {eng.raw_field(Component::Ex), eng.raw_field(Component::Ey), eng.raw_field(Component::Ez)};
    for (std::size_t s = 0; s < l_.size(); ++s) d_[s] = l_.eps[s] * E[l_.component[s]][l_.offset[s]];
  }
  void save(FdtdEngine& eng) override {
    float* E[3] = {eng.raw_field(Component::Ex), eng.raw_field(Component::Ey), eng.raw_field(Component::Ez)};
    const std::int64_t ns = std::int64_t(l_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < ns; ++s) old_[std::size_t(s)] = E[l_.component[std::size_t(s)]][l_.offset[std::size_t(s)]];
  }
  void apply(FdtdEngine& eng) override {
    float* E[3] = {eng.raw_field(Component::Ex), eng.raw_field(Component::Ey), eng.raw_field(Component::Ez)};
    const std::int64_t ns = std::int64_t(l_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < ns; ++s) {
      const std::size_t q = std::size_t(s);
      const float inc = E[l_.component[q]][l_.offset[q]] - old_[q];
      d_[q] = d_[q] + inc * l_.eps[q];
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < ns; ++s) {
      const std::size_t q = std::size_t(s);
      float v = l_.inv[q] * d_[q];
      for (std::int32_t p = l_.begin[q]; p < l_.begin[q + 1]; ++p) v = v + l_.weight[std::size_t(p)] * d_[std::size_t(l_.neighbour[std::size_t(p)])];
      E[l_.component[q]][l_.offset[q]] = v;
    }
  }

 private:
  const TensorSampleList& l_;
  std::vector<float> d_, old_;
};

}  // namespace

SubpixelTensorExtension::SubpixelTensorExtension(FdtdEngine& engine)
    : engine_(&engine), list_(build_tensor_sample_list(engine.op())) {
  if (engine.fields_on_device()) {
#ifdef VEM_WITH_CUDA
    backend_ = make_subpixel_tensor_backend_cuda(list_);
#else
    fail("subpixel full tensor: engine keeps fields on a device but the library was built without CUDA");
#endif
  } else {
    backend_ = std::make_unique<SubpixelTensorCpu>(list_);
  }
  backend_->init(engine);
  engine.add_extension(this);
}

SubpixelTensorExtension::~SubpixelTensorExtension() { engine_->remove_extension(this); }

void SubpixelTensorExtension::hook(FdtdEngine& eng, HookPoint where, int) {
  if (list_.size() == 0) return;
  if (where == HookPoint::after_h)
    backend_->save(eng);
  else if (where == HookPoint::after_e)
    backend_->apply(eng);
}

}  // namespace vem
