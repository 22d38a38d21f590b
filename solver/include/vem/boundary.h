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
#pragma once

#include <array>
#include <string>

namespace vem {

enum class BoundaryType { pec, pmc, periodic, cpml };
const char* boundary_name(BoundaryType t);
BoundaryType boundary_from_name(const std::string& name);  // "pec", "pmc", "periodic", "cpml"

struct CpmlParameters {
  int thickness = 10;          // cells
  double grading_order = 3.0;  // m
  double sigma_factor = 1.0;   // sigma_max relative to 0.8 (m+1) / (eta0 d)
  double kappa_max = 1.0;
  double alpha_max = 0.0;      // S/m; >0 helps evanescent / low-frequency absorption
  double alpha_order = 1.0;    // m_alpha
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
