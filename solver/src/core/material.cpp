#include "vem/core/material.h"

#include <cmath>

#include "vem/core/error.h"
#include "vem/core/yee_grid.h"

namespace vem {

Material Material::isotropic(std::string name, double eps_r, double sigma_e, double mu_r,
                             double sigma_m) {
  Material m;
  m.name = std::move(name);
  m.eps_r = {eps_r, eps_r, eps_r};
  m.sigma_e = {sigma_e, sigma_e, sigma_e};
  m.mu_r = {mu_r, mu_r, mu_r};
  m.sigma_m = {sigma_m, sigma_m, sigma_m};
  return m;
}

void validate_material(const Material& m, std::size_t index) {
  const char* axis = "xyz";
  for (int a = 0; a < 3; ++a) {
    auto where = [&]() {
      std::string s = "material " + std::to_string(index);
      if (!m.name.empty()) s += " ('" + m.name + "')";
      return s;
    };
    if (!std::isfinite(m.eps_r[a]) || m.eps_r[a] <= 0)
      fail(where(), ": eps_r ", axis[a], " = ", m.eps_r[a], " must be finite and > 0");
    if (!std::isfinite(m.mu_r[a]) || m.mu_r[a] <= 0)
      fail(where(), ": mu_r ", axis[a], " = ", m.mu_r[a], " must be finite and > 0");
    if (!std::isfinite(m.sigma_e[a]) || m.sigma_e[a] < 0)
      fail(where(), ": sigma_e ", axis[a], " = ", m.sigma_e[a], " S/m must be finite and >= 0");
    if (!std::isfinite(m.sigma_m[a]) || m.sigma_m[a] < 0)
      fail(where(), ": sigma_m ", axis[a], " = ", m.sigma_m[a], " ohm/m must be finite and >= 0");
  }
}

UpdateCoefficients electric_coefficients(double eps_r, double sigma_e, double dt) {
  const double eps = kEps0 * eps_r;
  const double loss = sigma_e * dt / (2.0 * eps);
  return {(1.0 - loss) / (1.0 + loss), (dt / eps) / (1.0 + loss)};
}

UpdateCoefficients magnetic_coefficients(double mu_r, double sigma_m, double dt) {
  const double mu = kMu0 * mu_r;
  const double loss = sigma_m * dt / (2.0 * mu);
  return {(1.0 - loss) / (1.0 + loss), (dt / mu) / (1.0 + loss)};
}

}  // namespace vem
