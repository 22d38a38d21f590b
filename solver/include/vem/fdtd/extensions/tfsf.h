// Total-field / scattered-field plane-wave source (Taflove & Hagness ch. 5), any direction and
// polarization, fed by an auxiliary 1D FDTD grid whose numerical dispersion is matched to the 3D
// grid's along the propagation direction at a design frequency. Attached to an engine as an
// EngineExtension (fdtd_engine.h); CPU corrections in src/fdtd/extensions/tfsf/tfsf.cpp, CUDA in
// src/fdtd/extensions/tfsf/tfsf_cuda.cu. The auxiliary grid is stepped on the host (a few hundred cells; its
// per-half-step array is uploaded for the CUDA correction kernel).
//
// Geometry: the total-field region is the box of node positions lo[a] <= x_a <= hi[a] (node
// indices, yee_grid.h); samples inside or on its faces hold the total field, samples outside the
// scattered field. Every E (H) sample whose curl stencil reaches across the box surface is
// corrected after the bulk update by cb (db) times the incident H (E) of the neighbour. The box
// must lie inside the non-CPML interior with at least 2 cells to spare on every face, and in
// vacuum (every corrected sample; checked). The source must not outlive its engine.
//
// High-order schemes (fdtd_scheme.h; issue 15): fv24, fv24_wb and s22 get the same corrections for
// every term of their wide curl (3/2-cell offsets, axis and diagonal neighbours) that crosses the
// surface, so targets lie up to 2 samples outside the box and the box needs 3 cells to spare; the
// 1D grid's dispersion is matched to the scheme's own relation (D) at the design frequency.
// Measured (test_fdtd_tfsf, 20 cells per wavelength): leakage at f0 below -107 dB; in the time
// domain -53 to -60 dB, the 1D Yee grid's mismatch away from f0 (the 3D scheme is not Yee's even
// along an axis).
// s44 (Hwang & Ihm's backward time differences over five time levels): the history holds each
// sample's own earlier values, so a correction added to the current level after the update is
// the correction of the curl and enters the history with it; the corrections use the s44 curl
// coefficient D_b = (24/22) b in vacuum, and the 1D grid steps with the same backward differences,
// matched on the real part of (D44)'s q at the design frequency (derivation in tfsf.cpp).
// Measured (FdtdTfsfS44, 32^3 cells, 20 cells per wavelength): leakage at f0 -139 dB (normal),
// -109 dB (oblique); time domain -56 / -57 dB; incident field within 1.2e-4.
//
// Incident wave (SI; E in V/m): propagation direction k = (sin th cos ph, sin th sin ph, cos th);
// E_inc = amplitude * e_hat * g(t - delay(r)), H_inc = (k x E_inc) / eta0, with
// e_hat = cos(psi) theta_hat + sin(psi) phi_hat, g = the waveform, and delay(r) the travel time
// from the 1D source node (numerical phase velocity at the design frequency).
//
// Auxiliary 1D grid (matched dispersion, Taflove 3rd ed. 5.10): spacing d1 = the smallest of
// dx, dy, dz; the numerical wavenumber k3 of the 3D grid along k at f_design solves
//   sum_a (sin(k3 k_a d_a / 2) / d_a)^2 = (sin(w dt / 2) / (c0 dt))^2,
// and the 1D medium is scaled (eps = mu = alpha, so eta stays eta0) so that its own numerical
// wavenumber equals k3: alpha = c0 dt sin(k3 d1 / 2) / (d1 sin(w dt / 2)). Incident values at
// the 3D sample positions are cubic Lagrange interpolations of the 1D E (integer nodes) and H
// (half nodes); along an axis with d1 = that cell size they fall on nodes (exact). The 1D grid
// is hard-sourced at node 0 and ends in a matched graded absorber (40 cells, ~-160 dB).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "vem/fdtd/fdtd_engine.h"
#include "vem/core/waveform.h"

namespace vem {

struct PlaneWave {
  double theta = 0.0, phi = 0.0;  // propagation direction, radians
  double psi = 0.0;               // polarization angle from theta_hat towards phi_hat, radians
  double amplitude = 1.0;         // V/m
  Waveform waveform;
  double design_frequency = 0.0;  // Hz; 0: the waveform's f0 (modulated Gaussian / sinusoid)
};

struct TfsfBox {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};  // node indices of the total-field box faces
};

// The grid a TF/SF box is given in when the engine steps only a piece of it (distributed runs,
// issue 17): the global grid and boundaries, and the global index of the piece's sample 0
// (global index = local index + offset). The 1D auxiliary grid, its origin and the correction
// coefficients are computed from the global grid, so every piece holds the same 1D grid as the
// single-domain run (same arithmetic: bit for bit); the piece corrects the targets its engine
// updates (FdtdOperator::range_lo/hi of the piece).
struct TfsfFrame {
  YeeGrid grid;
  BoundarySpec boundaries;
  std::array<int, 3> offset{0, 0, 0};
};

// The total-field box `margin` cells inside the CPML on every face (inside the grid edge on
// faces without CPML). Throws vem::Error when the grid is too small for it.
TfsfBox automatic_tfsf_box(const YeeGrid& grid, const BoundarySpec& boundaries, int margin);

class TfsfSource final : public EngineExtension {
 public:
  // Attaches itself to `engine` (detached in the destructor); attach before stepping starts.
  // Throws vem::Error for a box too close to the CPML / grid edge, a bad direction or frequency.
  TfsfSource(FdtdEngine& engine, const PlaneWave& wave, const TfsfBox& box);
  // The same on an engine stepping a piece of `frame.grid` (box in global node indices).
  TfsfSource(FdtdEngine& engine, const PlaneWave& wave, const TfsfBox& box, const TfsfFrame& frame);
  ~TfsfSource() override;
  TfsfSource(const TfsfSource&) = delete;
  TfsfSource& operator=(const TfsfSource&) = delete;

  void hook(FdtdEngine& engine, HookPoint where, int step) override;

  std::array<double, 3> k_hat() const { return k_; }
  std::array<double, 3> e_hat() const { return e_; }
  std::array<double, 3> h_hat() const { return h_; }  // k x e
  double alpha() const { return alpha_; }              // 1D medium scaling (1 = vacuum)
  double numerical_wavenumber() const { return k3_; }  // k3 at the design frequency, rad/m
  // Travel time (s) of the incident wave from the 1D source to world position r, at the
  // numerical phase velocity of the design frequency: phasor E_inc(r) = A e_hat G(f) e^{-jw delay}
  // at f_design, G the waveform's spectrum.
  double delay(const std::array<double, 3>& r) const;
  std::size_t corrected_samples() const;  // E + H samples touched per step

  // Internal: one corrected sample = target (component, layout offset) plus terms
  // coef * interp(1D array at base..base+3, weights w).
  struct Term { float coef; int base; float w[4]; };
  struct Targets {
    std::vector<int> comp;             // 0..5
    std::vector<std::int64_t> offset;  // layout offset
    std::vector<int> begin;            // CSR: terms[begin[t] .. begin[t+1])
    std::vector<Term> terms;
  };
  struct Backend {
    virtual ~Backend() = default;
    virtual void apply(FdtdEngine& eng, bool electric, const std::vector<float>& inc1d) = 0;
  };

 private:
  FdtdEngine* engine_;
  PlaneWave wave_;
  std::array<double, 3> k_{}, e_{}, h_{};
  double alpha_ = 1, k3_ = 0, d1_ = 0, xi0_ = 0, ref_ = 0;
  std::vector<float> e1_, h1_;             // 1D fields: E at xi0 + m d1, H at xi0 + (m + 1/2) d1
  std::vector<float> ca1_, cb1_, da1_, db1_;
  bool s44_ = false;                        // s44: the 1D grid steps with its backward differences
  std::vector<float> e1h_[3], h1h_[3];      // s44: the 1D fields' three earlier time levels
  Targets te_, th_;                         // E targets use H1d; H targets use E1d
  std::unique_ptr<Backend> backend_;
};

// Internal: CUDA correction backend (tfsf_cuda.cu; only with VEM_WITH_CUDA).
std::unique_ptr<TfsfSource::Backend> make_tfsf_backend_cuda(const TfsfSource::Targets& te,
                                                            const TfsfSource::Targets& th,
                                                            std::size_t n1d);

}  // namespace vem
