// 2D near-to-far-field transform on a closed rectangular contour (Taflove & Hagness, 3rd ed.,
// ch. 8, in its 2D form): from phasors of the polarization's fields on the contour (e^{+jwt},
// e.g. DftMonitor2d::spectrum or ::phasor at frequency f) to the far-field pattern of the field
// radiated outward by the equivalent currents J = n x H, M = E x n (n the outward normal):
//   main component (TM: Ez, TE: Hz) at distance rho -> infinity in direction phi:
//   F(phi) e^{-j k rho} / sqrt(rho),  with the 2D far-zone Green's function
//   (1 / 4j) H0^(2)(k |r - r'|) ~ (1 / 4j) sqrt(2j / (pi k rho)) e^{-j k rho} e^{j k rhohat . r'}:
//     TM: F = (k / 4) sqrt(2j / (pi k)) [ -eta0 N_z + cos(phi) L_y - sin(phi) L_x ]
//     TE: F = (k / 4) sqrt(2j / (pi k)) [ -L_z / eta0 - cos(phi) N_y + sin(phi) N_x ]
//   N = closed-contour integral of J e^{j k rhohat . r'} dl, L the same of M (r' in world
//   coordinates), k = 2 pi f / c0 (the contour must lie in vacuum).
// Bistatic scattering width (m): sigma = 2 pi |F|^2 / |incident main component|^2 (TM: A; TE:
// A / eta0 for a plane wave of peak E amplitude A).
// Sampling: TM at the contour's nodes (Ez there, the tangential H averaged from the two samples
// half a cell either side; trapezoidal rule); TE at the edge midpoints (Ex or Ey there, Hz
// averaged likewise; midpoint rule).
#pragma once

#include <array>
#include <complex>
#include <vector>

#include "vem/fdtd2d/fdtd2d_operator.h"

namespace vem {

struct NearToFarContour2D {
  std::array<int, 2> lo{0, 0}, hi{0, 0};  // node indices of the rectangle's edges
};

// phasors[s]: the compact (nx+1)(ny+1) phasor of component slot s (Fdtd2dOperator::components())
// at `frequency_hz`. Throws vem::Error for a contour not strictly inside the grid (one cell to
// spare), a wrong array size or a non-positive frequency.
std::vector<std::complex<double>> near_to_far_2d(const Fdtd2dOperator& op, const NearToFarContour2D& contour,
                                                 double frequency_hz,
                                                 const std::array<std::vector<std::complex<float>>, 3>& phasors,
                                                 const std::vector<double>& phi);

// sigma(phi) = 2 pi |F|^2 / |incident|^2 (m), incident = the main component's incident phasor.
std::vector<double> scattering_width_2d(const std::vector<std::complex<double>>& far_field,
                                        std::complex<double> incident);

}  // namespace vem
