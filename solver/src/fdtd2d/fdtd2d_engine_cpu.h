// The 2D CPU engine: plain OpenMP loops over the FieldLayout2D arrays, the readable reference for
// the update equations of fdtd2d_setup.h (the CUDA engine is held to it by
// test_fdtd2d_cpu_cuda_agreement).
#pragma once

#include <array>
#include <vector>

#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {

class Fdtd2dEngineCpu final : public Fdtd2dEngine {
 public:
  explicit Fdtd2dEngineCpu(const Fdtd2dOperator& op);
  std::string backend() const override { return "cpu"; }
  std::vector<float> field(Component c) const override;
  void set_field(Component c, const std::vector<float>& values) override;
  float* raw_field(Component c) override { return f_[slot_of(c)].data(); }
  std::string coefficient_storage() const override {
    return op_.material_mode() == MaterialMode::indexed ? "table" : "arrays";
  }

 protected:
  void do_steps(int n) override;
  std::vector<float> probe_values() const override { return probe_buf_; }

 private:
  int slot_of(Component c) const;  // throws for a component of the other polarization
  template <class Coef> void step_once(const Coef& coef, int step);
  template <class Coef> void bulk_h(const Coef& coef);
  template <class Coef> void bulk_e(const Coef& coef);
  template <class Coef> void cpml(bool electric, const Coef& coef);
  void apply_sources(bool electric, int step);
  void fill_h_ghosts();
  void copy_periodic_e();

  bool te_;
  std::array<std::vector<float>, 3> f_;  // slots of Fdtd2dOperator::components()
  // Per CPML slab: psi of the E correction and of the H correction (CpmlSlab boxes).
  std::vector<std::vector<float>> psi_e_, psi_h_;
  std::vector<float> probe_buf_;
};

}  // namespace vem
