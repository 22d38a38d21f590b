// Internal: the field corrections of the 2D TF/SF source (tfsf2d.h), behind one interface so that
// the CPU (tfsf2d.cpp) and CUDA (tfsf2d_cuda.cu; tfsf2d_cuda_nocuda.cpp throws without CUDA)
// backends apply the same lists. Tfsf2dSource builds the lists and steps the 1D auxiliary grid on
// the host; the backend only applies, after each half step,
//   F_slot[offset] += sum over the target's terms of coef * (w0 a[base] + w1 a[base+1] +
//                                                          w2 a[base+2] + w3 a[base+3])
// where a is the 1D incident array handed to apply() (the 1D H for E targets, the 1D E for H
// targets) and F_slot = engine.raw_field(engine.op().components()[slot]) (host or device memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {
namespace tfsf2d {

struct Term {
  float coef;  // signed update coefficient x amplitude x projection / cell size
  int base;    // first of the 4 1D samples of the cubic Lagrange stencil
  float w[4];  // interpolation weights
};

struct Targets {
  std::vector<int> slot;             // component slot 0..2 (Fdtd2dOperator::components())
  std::vector<std::int64_t> offset;  // FieldLayout2D offset
  std::vector<int> begin;            // CSR: terms[begin[t] .. begin[t+1]) belong to target t
  std::vector<Term> terms;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // electric: apply the E-target list with inc1d = the 1D H; otherwise the H list with the 1D E.
  virtual void apply(Fdtd2dEngine& engine, bool electric, const std::vector<float>& inc1d) = 0;
};

std::unique_ptr<Backend> make_backend_cpu(const Targets& e_targets, const Targets& h_targets);
// CUDA: the lists are uploaded once; inc1d (n1d floats) is uploaded at each apply().
std::unique_ptr<Backend> make_backend_cuda(const Targets& e_targets, const Targets& h_targets,
                                           std::size_t n1d);

}  // namespace tfsf2d
}  // namespace vem
