// The Yee grid and THE staggering convention of the project (referenced everywhere else).
//
// The domain is Nx x Ny x Nz cells of size dx, dy, dz (metres). Cell (i,j,k) spans
// [i dx,(i+1) dx] x [j dy,(j+1) dy] x [k dz,(k+1) dz] relative to the grid origin.
// Field component samples carry the integer index (i,j,k) of the cell whose lower corner they
// hang from; positions, in units of the cell sizes:
//
//   Ex(i,j,k) at (i+1/2, j,     k    )    Hx(i,j,k) at (i,     j+1/2, k+1/2)
//   Ey(i,j,k) at (i,     j+1/2, k    )    Hy(i,j,k) at (i+1/2, j,     k+1/2)
//   Ez(i,j,k) at (i,     j,     k+1/2)    Hz(i,j,k) at (i+1/2, j+1/2, k    )
//
// So E lies on the three cell edges that leave the corner (i,j,k), H on the three cell faces that
// touch it. Along its own axis an E component has N samples (0..N-1); along the other two axes it
// has N+1 node planes (0..N), the outer planes 0 and N being the domain faces. An H component has
// N+1 samples along its own axis and N along the other two.
//
// Time: E is known at t = n dt, H at t = (n + 1/2) dt. One step advances H from n-1/2 to n+1/2,
// then E from n to n+1 (leap-frog). After s completed steps E is at s dt and H at (s - 1/2) dt.
//
// Material of a sample: all six components stored at index (i,j,k) take the material of cell
// (i,j,k) (staircase assignment). The coefficient-array material mode may instead average the
// adjacent cells (see fdtd_setup.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace vem {

enum class Component : int { Ex = 0, Ey = 1, Ez = 2, Hx = 3, Hy = 4, Hz = 5 };

inline bool is_electric(Component c) { return static_cast<int>(c) < 3; }
inline int axis_of(Component c) { return static_cast<int>(c) % 3; }
const char* component_name(Component c);
Component component_from_name(const std::string& name);  // "Ex", ..., "Hz"; throws otherwise

// Physical constants (SI).
constexpr double kC0 = 299792458.0;                       // speed of light, m/s
constexpr double kMu0 = 1.25663706212e-6;                 // vacuum permeability, H/m
constexpr double kEps0 = 1.0 / (kMu0 * kC0 * kC0);        // vacuum permittivity, F/m
constexpr double kEta0 = kMu0 * kC0;                      // free-space impedance, ohm
constexpr double kPi = 3.14159265358979323846;

struct YeeGrid {
  int nx = 0, ny = 0, nz = 0;        // cells
  double dx = 0, dy = 0, dz = 0;     // cell size, m
  std::array<double, 3> origin{0, 0, 0};  // world position of the corner of cell (0,0,0), m

  std::array<int, 3> n() const { return {nx, ny, nz}; }
  std::array<double, 3> d() const { return {dx, dy, dz}; }
  std::int64_t cell_count() const { return std::int64_t(nx) * ny * nz; }

  // World position (m) of component c sampled at index (i,j,k), following the table above.
  std::array<double, 3> position(Component c, int i, int j, int k) const;

  // Throws vem::Error for zero/negative sizes or non-finite/non-positive spacing.
  void validate() const;

  // Largest stable time step of the Yee scheme: 1 / (c0 sqrt(1/dx^2 + 1/dy^2 + 1/dz^2)), s.
  double courant_limit_dt() const;
};

}  // namespace vem
