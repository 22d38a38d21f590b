// A time-harmonic electric current density on every E sample, as an engine extension
// (fdtd_engine.h): the source the time-domain preconditioner of the FDFD solver drives the FDTD
// grid with (fdfd_time_domain.h), usable on its own for any distributed CW excitation.
//
//   J_c(r, t) = ramp(t) Re( J_c(r) e^{j w t} )     (A/m^2; e^{+jwt} phasors, as the FDFD side)
//
// ramp(t) = u - sin(2 pi u) / (2 pi), u = t / T_r, for t < T_r = ramp_periods / f, 1 after: its
// derivative is a Hann window of unit area. Why this ramp: the charge a current deposits is
//   -div of  int_0^t ramp(s) e^{j w s} ds = ramp(t) e^{j w t} / (j w) - (1/(j w)) int ramp'(s) e^{j w s} ds,
// and for t >= T_r the last integral is the Hann window's transform at w, which vanishes when
// T_r is a whole number >= 2 of periods. Then no static charge is left behind by the turn-on;
// with a raised-cosine ramp (Waveform::sinusoid) the residue relaxes with eps / sigma in lossy
// tissue (many periods) and leaks into the steady-state windows. Measured on the coarse bench
// head (FDFD time-domain preconditioner to 1e-6, steady tolerance 1e-3, FDTD periods over all
// applications): raised cosine over 0 / 1 / 3 / 5 / 8 periods 265 / 142 / 53 / 47 / 48; this
// ramp over 2 / 3 / 4 / 5 / 6 / 8 periods 85 / 63 / 55 / 28 / 28 / 30 (results/fdfd.md).
// It enters Ampere's law like the point sources' current (source.h):
//   E_c <- ca E_c + cb (curl H - J_c(t_{n+1/2}))
// i.e. at the after_e hook of step n, E_c -= Re(S_c e^{j w t}) ramp(t) with t = (n + 1/2) dt and
// S_c = cb_c J_c precomputed per sample (the engine's own cb, so the lossy semi-implicit update
// and the CPML are those of the bulk). In the time-harmonic steady state the sources then give
//   (j w~ eps0 eps_r + sigma cos(w dt / 2)) E = curl H - J,   w~ = 2 sin(w dt / 2) / dt
// (leap-frog at frequency w; the factor e^{j w dt / 2} cancels against H's half-step offset).
//
// Cost per step: 3 complex (float2) amplitude arrays in the field layout are read, 24 bytes per
// cell, inside the CUDA engine's bulk E update (FdtdEngine::set_fused_e_source: the phase is set
// at the after_h hook of the same step); the CPU engine gets a separate loop that also
// reads and writes E (48 bytes per cell).
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"

namespace vem {

class HarmonicCurrentSource final : public EngineExtension {
 public:
  // Attaches itself to `engine` (detached in the destructor) with zero amplitudes; the caller
  // writes S_c = cb_c J_c into amplitude_data() (the preconditioner's scatter,
  // fdfd_time_domain.h). Throws vem::Error for a bad frequency or ramp.
  HarmonicCurrentSource(FdtdEngine& engine, double frequency_hz, double ramp_periods = 2.0);
  // S_c: interleaved (re, im) floats, 2 x layout size, in the engine's memory (device memory for
  // CUDA engines): E_c -= Re(S_c e^{j w t}) ramp(t) each step; 0 outside the update range.
  float* amplitude_data(int c) { return backend_->amplitudes(c); }
  ~HarmonicCurrentSource() override;
  HarmonicCurrentSource(const HarmonicCurrentSource&) = delete;
  HarmonicCurrentSource& operator=(const HarmonicCurrentSource&) = delete;

  void hook(FdtdEngine& engine, HookPoint where, int step) override;
  double frequency() const { return f_; }
  double ramp(double t) const;

  struct Backend {  // CPU loops or a CUDA kernel (internal)
    virtual ~Backend() = default;
    // E_c[o] -= Re(S_c[o] (cr + j ci)) over the whole field layout.
    virtual void apply(FdtdEngine& eng, float cr, float ci) = 0;
    // The amplitude arrays in the engine's memory (for FdtdEngine::set_fused_e_source).
    virtual float* amplitudes(int c) = 0;
  };

 private:
  FdtdEngine* engine_;
  double f_, ramp_periods_;
  bool fused_ = false;  // the engine folds the source into its E update
  std::unique_ptr<Backend> backend_;
};

// Internal: CUDA backend (harmonic_current_cuda.cu; only with VEM_WITH_CUDA): 3 zeroed arrays of
// n = 2 * layout.size floats (interleaved re, im) in the field layout.
std::unique_ptr<HarmonicCurrentSource::Backend> make_harmonic_current_backend_cuda(std::size_t n);

}  // namespace vem
