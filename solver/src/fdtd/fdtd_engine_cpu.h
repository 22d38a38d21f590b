// The CPU engine: plain OpenMP loops over the shared padded layout (field_layout.h). It is the
// readable reference for the update equations of fdtd_operator.h and the fallback without a GPU.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "fdtd/engine_common.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {

class FdtdEngineCpu final : public FdtdEngine {
 public:
  // tuning.coefficients picks arrays or their packed table for coefficient-array models.
  explicit FdtdEngineCpu(const FdtdOperator& op, const EngineTuning& tuning = {});
  std::string backend() const override { return "cpu"; }
  std::vector<float> field(Component c) const override;
  void set_field(Component c, const std::vector<float>& values) override;
  float* raw_field(Component c) override { return f_[int(c)].data(); }
  std::int64_t first_non_finite(Component c) const override;

 protected:
  void do_steps(int n) override;
  CoefficientTable table_;  // set: coefficients from this table (indexed or packed), else the arrays
  std::vector<float> probe_values() const override { return probe_buf_; }
  void read_plane(Component c, int axis, int index, float* out) const override;
  void write_plane(Component c, int axis, int index, const float* in) override;

 private:
  // Rnd: the rounding of every stored value to the field storage (fdtd_engine_cpu.cpp: identity
  // for float32, round_to_float16 / round_to_bfloat16 of vem/core/field_storage.h otherwise).
  template <class Coef> void step_coef(const Coef& coef, int n);
  template <class Coef, class Rnd> void step_once(const Coef& coef, int step);
  template <class Coef, class Rnd> void bulk_e(int c, const Coef& coef);
  template <class Coef, class Rnd> void bulk_h(int c, const Coef& coef);
  template <class Coef, class Rnd> void cpml_e(std::size_t slab, const Coef& coef);
  template <class Coef, class Rnd> void cpml_h(std::size_t slab, const Coef& coef);
  // Narrow field storage: every sample of the six arrays rounded (after the extensions' hooks,
  // which may add to any sample; rounding is idempotent, so untouched samples keep their value).
  void round_all_fields();
  void round_field(int c);  // component c's array, every sample
  // High-order schemes (vem/fdtd/schemes/fdtd_scheme.h). Every stencil point is resolved
  // through per-component, per-axis tables over the extended index range -kReach..n+kReach:
  // offset part and sign (periodic wrap, PEC/PMC images), so no ghost beyond the layout's one
  // is read. Terms: the stencil's (hi, lo) sample pairs along the derivative axis with their
  // transverse offsets and weights.
  // (tables built by build_high_order_stencil, engine_common.h, shared with the CUDA engine)
  static constexpr int kReach = HighOrderStencil::kReach;
  using Resolve = HighOrderStencil::Resolve;
  using Term = HighOrderStencil::Term;
  void build_high_order();
  float ho_diff(int f, int a, bool forward, const int idx[3]) const;
  struct Delta { std::int64_t hi, lo; float w; };
  std::vector<Delta> delta_[2][3];  // [forward][axis]: the terms as layout offsets (interior)
  bool ho_interior(const int idx[3]) const;
  float ho_diff_interior(int f, int a, bool forward, std::int64_t o) const;
  template <class Coef> void bulk_ho(bool electric, int c, const Coef& coef);
  template <class Coef> void cpml_ho(bool electric, std::size_t slab, const Coef& coef);
  bool high_order_ = false;
  // s44 (Hwang & Ihm backward time differences): the three earlier time levels of each
  // component, [component][0] = F^{n-1}, [1] = F^{n-2}, [2] = F^{n-3} (same layout).
  bool s44_ = false;
  std::array<std::array<std::vector<float>, 3>, 6> hist_;
  std::array<std::array<Resolve, 3>, 6> res_;
  std::vector<Term> terms_[2];  // [0] backward (E update from H), [1] forward (H update from E)

  void apply_sources(bool electric, int step);
  void fill_h_ghosts();
  void copy_periodic_e_planes();

  // Field arrays in the padded layout, zeroed in parallel so that each thread's pages are local
  // to it (first touch on NUMA machines) with the same static partition the update loops use.
  struct FieldArray {
    std::unique_ptr<float[]> p;
    float* data() { return p.get(); }
    const float* data() const { return p.get(); }
    float& operator[](std::int64_t o) { return p[o]; }
  };
  std::array<FieldArray, 6> f_;
  std::vector<std::array<std::vector<float>, 2>> psi_e_, psi_h_;  // per CPML slab
  std::vector<float> probe_buf_;
};

}  // namespace vem
