#include "fdtd/engine_common.h"

#include "vem/core/error.h"

namespace vem {

double point_source_waveform(const ResolvedSource& s, int step, double dt) {
  double t;
  switch (s.kind) {
    case PointSource::Kind::electric_current: t = (step + 0.5) * dt; break;
    case PointSource::Kind::hard_e: t = (step + 1.0) * dt; break;
    case PointSource::Kind::magnetic_current: t = step * dt; break;
    default: t = (step + 0.5) * dt; break;
  }
  return s.waveform.value(t);
}

CoefficientTable coefficient_table_for(const FdtdOperator& op, EngineTuning::Coefficients choice,
                                       bool table_by_default) {
  using CS = EngineTuning::Coefficients;
  if (op.material_mode() == MaterialMode::indexed)
    return {op.coefficient_table().data(), op.index_array().data(), op.coefficient_table().size() / 12};
  if (choice == CS::arrays || (choice == CS::automatic && !table_by_default)) return {};
  const FdtdOperator::CoefficientIndex* packed = op.coefficient_index();
  if (!packed) {
    if (choice == CS::table)
      fail("coefficients as a table: the model has more than 65536 distinct coefficient tuples; "
           "use EngineTuning::Coefficients::arrays or automatic");
    return {};
  }
  return {packed->table.data(), packed->index.data(), packed->entries()};
}

bool sample_exists(Component c, int axis, int idx, const int n[3]) {
  const bool own = axis_of(c) == axis;
  const int count = (is_electric(c) == own) ? n[axis] : n[axis] + 1;
  return idx >= 0 && idx < count;
}

std::vector<float> compact_from_layout(const FdtdOperator& op, Component c, const float* f) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  std::vector<float> out(std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1), 0.0f);
#pragma omp parallel for
  for (int k = 0; k <= g.nz; ++k)
    for (int j = 0; j <= g.ny; ++j)
      for (int i = 0; i <= g.nx; ++i)
        if (sample_exists(c, 0, i, n) && sample_exists(c, 1, j, n) && sample_exists(c, 2, k, n))
          out[i + (g.nx + 1) * (j + std::size_t(g.ny + 1) * k)] = f[op.layout().at(i, j, k)];
  return out;
}

void layout_from_compact(const FdtdOperator& op, Component c, const std::vector<float>& values, float* f) {
  const YeeGrid& g = op.grid();
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t expected = std::size_t(g.nx + 1) * (g.ny + 1) * (g.nz + 1);
  if (values.size() != expected)
    fail("set_field(", component_name(c), "): expected ", expected, " values, got ", values.size());
  for (int k = 0; k <= g.nz; ++k)
    for (int j = 0; j <= g.ny; ++j)
      for (int i = 0; i <= g.nx; ++i)
        if (sample_exists(c, 0, i, n) && sample_exists(c, 1, j, n) && sample_exists(c, 2, k, n))
          f[op.layout().at(i, j, k)] = values[i + (g.nx + 1) * (j + std::size_t(g.ny + 1) * k)];
}

HighOrderStencil build_high_order_stencil(const FdtdOperator& op) {
  HighOrderStencil hs;
  constexpr int kReach = HighOrderStencil::kReach;
  const FieldLayout& L = op.layout();
  const auto& bc = op.setup().boundaries;
  const int n[3] = {op.grid().nx, op.grid().ny, op.grid().nz};
  const std::int64_t stride[3] = {1, L.sy, L.sz};
  for (int comp = 0; comp < 6; ++comp) {
    const Component cc = static_cast<Component>(comp);
    const bool electric = is_electric(cc);
    for (int a = 0; a < 3; ++a) {
      const bool tangential = axis_of(cc) != a;
      const bool integer = electric == tangential;  // node (integer) positions along a
      const int count = integer ? n[a] + 1 : n[a];
      // Image parity at a PEC face: tangential E and normal H odd, normal E and tangential H even.
      const float pec_sign = (electric == tangential) ? -1.0f : 1.0f;
      auto parity = [&](BoundaryType t) {
        if (t == BoundaryType::pec || t == BoundaryType::cpml) return pec_sign;
        if (t == BoundaryType::pmc) return -pec_sign;
        fail("scheme ", scheme_name(op.scheme().scheme), ": boundary ", boundary_name(t),
             " is not supported by the high-order stencil");
      };
      HighOrderStencil::Resolve& r = hs.res[comp][a];
      for (int m = -kReach; m <= n[a] + kReach; ++m) {
        int x = m;
        float sign = 1.0f;
        if (bc.face[2 * a] == BoundaryType::periodic) {
          x = ((m % n[a]) + n[a]) % n[a];
        } else {
          for (int guard = 0; guard < 16 && (x < 0 || x > count - 1); ++guard) {
            if (x < 0) {
              x = integer ? -x : -1 - x;
              sign *= parity(bc.face[2 * a]);
            } else {
              x = integer ? 2 * n[a] - x : 2 * n[a] - 1 - x;
              sign *= parity(bc.face[2 * a + 1]);
            }
          }
          if (x < 0 || x > count - 1)
            fail("scheme ", scheme_name(op.scheme().scheme), ": the grid has ", n[a],
                 " cells along ", "xyz"[a], ", too few for the wide stencil");
        }
        r.off.push_back(x * stride[a]);
        r.sign.push_back(sign);
      }
    }
  }
  // Terms. Backward (E from H: H at half-integer offsets -1/2 -> index 0 / -1, etc.) and forward.
  const SchemeStencil& st = op.scheme().stencil;
  const int pairs[2][2][2] = {{{0, -1}, {1, -2}}, {{1, 0}, {2, -1}}};  // [forward][p] = (hi, lo)
  for (int fw = 0; fw < 2; ++fw)
    for (int p = 0; p < 2; ++p)
      for (int cls = 0; cls < 3; ++cls) {
        const float w = float(st.w[p][cls]);
        if (w == 0.0f) continue;
        const int hi = pairs[fw][p][0], lo = pairs[fw][p][1];
        auto& t = hs.terms[fw];
        if (cls == 0) t.push_back({hi, lo, 0, 0, w});
        if (cls == 1)
          for (int s = -1; s <= 1; s += 2) {
            t.push_back({hi, lo, s, 0, w});
            t.push_back({hi, lo, 0, s, w});
          }
        if (cls == 2)
          for (int s = -1; s <= 1; s += 2)
            for (int u = -1; u <= 1; u += 2) t.push_back({hi, lo, s, u, w});
      }
  return hs;
}

}  // namespace vem
