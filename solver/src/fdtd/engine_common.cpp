#include "fdtd/engine_common.h"

#include "vem/core/error.h"

namespace vem {

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

}  // namespace vem
