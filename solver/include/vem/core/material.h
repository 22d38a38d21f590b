// Linear, non-dispersive, diagonally anisotropic media: the general lossy medium of
// Demir & Elsherbeni (ACES J. 2010, eq. 1 and siblings). Per axis: relative permittivity eps_r,
// relative permeability mu_r, electric conductivity sigma_e (S/m), magnetic conductivity
// sigma_m (ohm/m). Index 0..2 = x, y, z.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace vem {

struct Material {
  std::string name;
  std::array<double, 3> eps_r{1, 1, 1};
  std::array<double, 3> mu_r{1, 1, 1};
  std::array<double, 3> sigma_e{0, 0, 0};  // S/m
  std::array<double, 3> sigma_m{0, 0, 0};  // ohm/m

  static Material isotropic(std::string name, double eps_r, double sigma_e = 0.0,
                            double mu_r = 1.0, double sigma_m = 0.0);
  static Material vacuum() { return isotropic("vacuum", 1.0); }
};

// Throws vem::Error naming the material (index and name) and the offending value when
// eps_r <= 0, mu_r <= 0, or a conductivity is negative or any value is non-finite.
void validate_material(const Material& m, std::size_t index);

// Coefficients of the update E <- ca E + cb (curl H - J) for one axis (and likewise
// H <- da H - db (curl E + M)), from the semi-implicit (averaged) loss term.
struct UpdateCoefficients {
  double ca, cb;
};
UpdateCoefficients electric_coefficients(double eps_r, double sigma_e, double dt);
UpdateCoefficients magnetic_coefficients(double mu_r, double sigma_m, double dt);

}  // namespace vem
