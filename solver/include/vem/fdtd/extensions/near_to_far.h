// Frequency-domain near-to-far-field transform (surface equivalence principle) on the Yee grid:
// from the scattered E and H on a closed box around the scatterer to the far-zone field,
// bistatic RCS and the scattering cross-section.
//
// Equivalent currents on the box (outward normal n): J = n x H, M = -n x E. With the radiation
// vectors  N = sum J e^{+jk r_hat . r'} dS,  L = sum M e^{+jk r_hat . r'} dS  (e^{jwt};
// r' relative to `phase_origin`), the far field is (Balanis, Advanced Engineering
// Electromagnetics, eqs. 6-122):
//     E(r) ~ e^{-jkr} / r (F_theta theta_hat + F_phi phi_hat),
//     F_theta = -jk / (4 pi) (L_phi + eta0 N_theta),   F_phi = jk / (4 pi) (L_theta - eta0 N_phi).
// Bistatic RCS: sigma = 4 pi (|F_theta|^2 + |F_phi|^2) / |E0|^2.
//
// Sampling: the box faces lie on integer node planes, e.g. x = lo[0] and x = hi[0] (node
// indices, positions per yee_grid.h), spanning lo..hi along the other axes. Each face is split
// into the cell faces it contains; on each the tangential E (in the plane) is the average of its
// two edge samples and the tangential H (half a cell either side) the average of four samples.
// The box must stay inside the scattered-field region, at least one cell from the grid edge
// (1 <= lo < hi <= n - 1), and in practice between the scatterer and the PML.
#pragma once

#include <array>
#include <complex>
#include <functional>
#include <vector>

#include "vem/core/yee_grid.h"

namespace vem {

// Gauss-Legendre nodes x and weights w on [-1, 1] (the quadrature in cos(theta) of
// scattering_cross_section).
void gauss_legendre(int n, std::vector<double>& x, std::vector<double>& w);

struct NtffBox {
  std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};  // node indices
};

class NearToFarTransform {
 public:
  // e, h: 3 N entries each ([x | y | z] blocks of N = nx ny nz, sample (i,j,k) at
  // i + nx (j + ny k)), E at the E sample positions, H at the H sample positions (as returned
  // by solve_fdfd() / fdfd_fields()). Throws vem::Error for a box that does not fit.
  NearToFarTransform(const YeeGrid& grid, double frequency, const std::vector<std::complex<double>>& e,
                     const std::vector<std::complex<double>>& h, const NtffBox& box,
                     const std::array<double, 3>& phase_origin);
  // The same from a sampler: sample(c, i, j, k) returns component c (E or H) at sample index
  // (i,j,k); only the samples within one cell of the box faces are asked for (e.g. thin DFT
  // monitor slabs, without whole-volume arrays).
  using Sampler = std::function<std::complex<double>(Component, int, int, int)>;
  NearToFarTransform(const YeeGrid& grid, double frequency, const Sampler& sample, const NtffBox& box,
                     const std::array<double, 3>& phase_origin);
  // Only the patches `keep` accepts: keep(a, q, u, v) for the cell face of the box face on node
  // plane q of axis a at cell indices u along b = a+1, v along c = a+2 (cyclic). A distributed run
  // (issue 17) gives each rank its own patches; the sums below are then that rank's part of the
  // surface integrals, reduced over ranks (distributed_extensions.h). The sampler is asked only
  // for the samples of kept patches.
  using PatchFilter = std::function<bool(int axis, int q, int u, int v)>;
  NearToFarTransform(const YeeGrid& grid, double frequency, const Sampler& sample, const NtffBox& box,
                     const std::array<double, 3>& phase_origin, const PatchFilter& keep);

  // The radiation vectors (N_x, N_y, N_z, L_x, L_y, L_z) of the patches held, towards (theta, phi).
  // Each box face's phase factor is separable, e^{jk r_hat . r'} = e^{jk r_a} e^{jk r_b(u)}
  // e^{jk r_c(v)} (face normal a), so a direction costs a few hundred sines and cosines and four
  // complex multiply-adds per patch (the tangential currents) instead of a sine and cosine per
  // patch (issue 16). Agrees with radiation_vectors_direct() to rounding (~1e-15 relative).
  std::array<std::complex<double>, 6> radiation_vectors(double theta, double phi) const;
  // The same for many directions (theta, phi) at once, in parallel over the directions (OpenMP):
  // entry q is exactly radiation_vectors(dirs[q][0], dirs[q][1]).
  std::vector<std::array<std::complex<double>, 6>> radiation_vectors(
      const std::vector<std::array<double, 2>>& dirs) const;
  // The reference: the plain sum over the patches with one e^{jk r_hat . r'} each (serial; tests).
  std::array<std::complex<double>, 6> radiation_vectors_direct(double theta, double phi) const;
  // (F_theta, F_phi) from radiation vectors (summed over the whole surface) at wavenumber k.
  static std::array<std::complex<double>, 2> pattern_from(const std::array<std::complex<double>, 6>& nl, double k,
                                                          double theta, double phi);
  double wavenumber() const { return k_; }

  // Far-zone pattern (F_theta, F_phi) in V (E = e^{-jkr}/r F).
  std::array<std::complex<double>, 2> pattern(double theta, double phi) const;
  // Bistatic RCS (m^2) for an incident amplitude |E0| (V/m).
  double rcs(double theta, double phi, double incident_amplitude = 1.0) const;
  // pattern() and rcs() for many directions (theta, phi), in parallel over them; entry q is
  // exactly the single-direction value.
  std::vector<std::array<std::complex<double>, 2>> patterns(const std::vector<std::array<double, 2>>& dirs) const;
  std::vector<double> rcs(const std::vector<std::array<double, 2>>& dirs, double incident_amplitude = 1.0) const;
  // Scattering cross-section (m^2): the far-field power integrated over the sphere
  // (Gauss-Legendre in cos(theta), uniform in phi) over the incident power density. The
  // directions in parallel, summed in a fixed order (the same result at any thread count).
  double scattering_cross_section(int n_theta = 24, int n_phi = 48,
                                  double incident_amplitude = 1.0) const;
  // Net power (W) flowing out through the box, 1/2 Re sum (E x H*) . n dS, from the same
  // interpolated tangential fields. With the scattered fields of a lossless scatterer this is
  // the scattered power; with the total fields, minus the absorbed power.
  double power_out() const;

  std::size_t patches() const { return patch_.size(); }

 private:
  struct Patch {
    std::array<double, 3> r;                  // centre relative to the phase origin, m
    std::array<std::complex<double>, 3> j, m;  // currents times the patch area
    std::array<std::complex<double>, 3> e, h;  // tangential fields (for power_out)
    std::array<double, 3> n;                   // outward normal times the area
  };
  // One box face for the separable sum: the kept patches' tangential currents on its nu x nv
  // cell faces (u along b = a+1, v along c = a+2; patches not kept hold 0), a row of 8 x nu
  // doubles per v: J_b, J_c, M_b, M_c as (re[nu], im[nu]) pairs.
  struct Face {
    int a = 0;
    double ra = 0;                 // the face plane's coordinate relative to the phase origin, m
    std::vector<double> rb, rc;    // patch centre coordinates along b (nu) and c (nv), m
    std::vector<double> cur;       // nv rows of 8 nu
  };
  double k_ = 0;
  std::vector<Patch> patch_;
  std::vector<Face> face_;
};

}  // namespace vem
