// Boundary conditions, chosen per face of the domain. Faces are numbered
//   0: x-low, 1: x-high, 2: y-low, 3: y-high, 4: z-low, 5: z-high.
//
// - pec:      tangential E = 0 on the face plane.
// - pmc:      tangential H = 0 on the face plane (H ghost samples mirror with opposite sign).
// - periodic: the opposite faces are identified (both faces of the axis must be periodic).
// - cpml:     convolutional PML (the CFS-PML of Roden & Gedney, MOTL 27(5), 2000) of `thickness`
//             cells inside the domain, terminated by PEC. Graded profiles, depth rho in [0,1]
//             measured from the PML's inner interface:
//               sigma(rho) = sigma_max rho^m,  sigma_max = sigma_factor * 0.8 (m+1) / (eta0 d)
//               kappa(rho) = 1 + (kappa_max - 1) rho^m
//               alpha(rho) = alpha_max (1 - rho)^m_alpha      (alpha in S/m, like sigma)
//             The CPML occupies the outer `thickness` cells of the grid: those cells belong to
//             the grid the user gives (pad the model with air beforehand if needed).
// - subdomain: the face is shared with a neighbouring subdomain; its ghost samples come through
//             a HaloExchange (halo_exchange.h) set on the engine.
#pragma once

#include <array>
#include <string>

namespace vem {

enum class BoundaryType { pec, pmc, periodic, cpml, subdomain };
const char* boundary_name(BoundaryType t);
BoundaryType boundary_from_name(const std::string& name);  // "pec", "pmc", "periodic", "cpml"

// Defaults from a scan (testing/unit/test_fdtd_cpml.cpp): m in {3,4}, sigma_factor in
// {0.5..1.5}, kappa_max in {1,3,8}, alpha_max in {0.02..0.1} S/m; the chosen set reflects
// < -80 dB in 2D and 3D broadband tests at 10 cells. alpha_max > 0 matters: without it a slowly
// growing low-frequency field builds up at PML corners late in long runs. alpha is in S/m, so it
// acts below f ~ alpha / (2 pi eps0) (0.9 GHz for 0.05 S/m); for very low frequencies (MRI bands)
// lower it accordingly.
struct CpmlParameters {
  int thickness = 10;          // cells
  double grading_order = 4.0;  // m
  double sigma_factor = 0.75;  // sigma_max relative to 0.8 (m+1) / (eta0 d)
  double kappa_max = 3.0;
  double alpha_max = 0.05;     // S/m
  double alpha_order = 1.0;    // m_alpha
  // > 0 (Hz): a Crank-Nicolson CPML matched to a CW steady state at this frequency f (used by
  // the FDFD solver's time-domain preconditioner, fdfd_time_domain.h; needs alpha_max = 0 and the
  // same value on both faces of an axis). The auxiliary field of the stretch
  // 1/s = 1/kappa - (sigma/kappa^2) / (sigma/kappa + j w eps0) is then stepped with the
  // trapezoidal rule, the way the bulk treats its loss term, with sigma / cos(w dt / 2):
  //   eps0 (psi' - psi) / dt + (a / 2)(psi' + psi) = -(g / 2)(dF' + dF),
  //   a = sigma / (kappa cos(w dt/2)),  g = sigma / (kappa^2 cos(w dt/2)),
  // and the derivative becomes dF' / kappa + psi'. In the time-harmonic steady state at f this is
  // exactly d/ds with s = kappa - j sigma / (w~ eps0), w~ = 2 sin(w dt / 2) / dt: the SC-PML
  // stretch at the frequency the bulk's steady state solves (harmonic_current.h). Stored in the
  // usual (b, c, 1/kappa) form with a lagged state chi = psi - c' dF (CpmlProfile::lagged):
  //   derivative = (1/kappa + c') dF + chi,  then  chi <- b' chi + c' (1 + b') dF,
  //   b' = (eps0/dt - a/2) / (eps0/dt + a/2),  c' = -(g/2) / (eps0/dt + a/2);
  // |b'| < 1 and 0 < 1/kappa + c' <= 1/kappa, so it is stable wherever the usual CPML is.
  double match_frequency = 0.0;
};

struct BoundarySpec {
  std::array<BoundaryType, 6> face{BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                                   BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml};
  std::array<CpmlParameters, 6> cpml{};

  static BoundarySpec all(BoundaryType t, int cpml_thickness = 10);
  int cpml_cells(int face_index) const {
    return face[face_index] == BoundaryType::cpml ? cpml[face_index].thickness : 0;
  }
};

const char* face_name(int face_index);  // "x-low", ...

}  // namespace vem
