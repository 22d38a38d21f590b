// Internal: where a 2D DFT monitor (dft_monitor2d.h) keeps and accumulates its spectra. CPU:
// dft_monitor2d.cpp; CUDA: dft_monitor2d_cuda.cu (dft_monitor2d_cuda_nocuda.cpp throws without
// CUDA). DftMonitor2d chooses the CUDA backend when engine.fields_on_device().
//
// Storage: per monitored component slot q (0..nc-1, the order given to DftMonitor2d) and frequency
// f, a box of dims[0] x dims[1] samples (x fastest) starting at sample lo = (i0, j0).
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "vem/fdtd2d/fdtd2d_engine.h"

namespace vem {
namespace dft2d {

class Backend {
 public:
  virtual ~Backend() = default;
  // S[q][f][b] += F(b) * (w_re[f] + j w_im[f]) for every box sample b of component c (the
  // engine's raw_field(c)), nf weights.
  virtual void accumulate(Fdtd2dEngine& engine, int slot, Component c, const float* w_re,
                          const float* w_im) = 0;
  // Box copy (dims[0] * dims[1]) of S[q][f].
  virtual std::vector<std::complex<float>> read(int slot, int freq_index) const = 0;
  // Steady-state window for every sample: P = scale (S - S_prev); per frequency f, summed over
  // all slots and samples: out[3f] += |P - P_old|^2, out[3f+1] += |P|^2, out[3f+2] += |S|^2;
  // then P_old = P, S_prev = S. first = true only records S_prev (P_old = 0). out has 3 nf entries.
  virtual void window(bool first, double scale, std::vector<double>& out) = 0;
  virtual std::vector<std::complex<float>> read_phasor(int slot, int freq_index) const = 0;
};

std::unique_ptr<Backend> make_backend_cpu(const Fdtd2dOperator& op, int nf, int nc,
                                          std::array<int, 2> lo, std::array<int, 2> dims);
std::unique_ptr<Backend> make_backend_cuda(const Fdtd2dOperator& op, int nf, int nc,
                                           std::array<int, 2> lo, std::array<int, 2> dims);

}  // namespace dft2d
}  // namespace vem
