// 2D FDTD: fields uniform along z, the project's staggering convention (yee_grid.h) restricted to
// one z = const plane. Two decoupled polarizations:
//   TM_z (Polarization2D::tm): Ez, Hx, Hy      TE_z (Polarization2D::te): Hz, Ex, Ey
// Sample positions (units of dx, dy; index (i,j) as in yee_grid.h with k dropped):
//   Ez(i,j) at (i,     j    )  i = 0..nx, j = 0..ny      Hz(i,j) at (i+1/2, j+1/2)  0..nx-1, 0..ny-1
//   Hx(i,j) at (i,     j+1/2)  i = 0..nx, j = 0..ny-1    Ex(i,j) at (i+1/2, j    )  0..nx-1, 0..ny
//   Hy(i,j) at (i+1/2, j    )  i = 0..nx-1, j = 0..ny    Ey(i,j) at (i,     j+1/2)  0..nx, 0..ny-1
// Updates (the 3D equations of fdtd_operator.h with d/dz = 0):
//   TM: Ez <- ca Ez + cb (dHy/dx - dHx/dy - Jz);  Hx <- da Hx - db (dEz/dy + Mx);
//       Hy <- da Hy - db (-dEz/dx + My)
//   TE: Hz <- da Hz - db (dEy/dx - dEx/dy + Mz);  Ex <- ca Ex + cb (dHz/dy - Jx);
//       Ey <- ca Ey + cb (-dHz/dx - Jy)
// Time as in 3D: E at n dt, H at (n + 1/2) dt; a step advances H, then E.
// Sources are per unit length along z: an electric_current "point" source is a line current of
// I = amplitude * w(t) (A), J = I / (dx dy); magnetic_current in V, M = K / (dx dy); hard_e/hard_h
// overwrite the sample. Stability: dt <= 1 / (c0 sqrt(1/dx^2 + 1/dy^2)).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vem/core/material.h"
#include "vem/core/yee_grid.h"
#include "vem/fdtd/boundary.h"
#include "vem/fdtd/fdtd_setup.h"
#include "vem/fdtd/source.h"

namespace vem {

enum class Polarization2D { tm, te };
const char* polarization_name(Polarization2D p);             // "TM", "TE"
Polarization2D polarization_from_name(const std::string& s);  // "TM"/"tm"/"TE"/"te"; throws otherwise
// The three components of a polarization: TM {Ez, Hx, Hy}, TE {Hz, Ex, Ey} (the "main" one first).
std::array<Component, 3> polarization_components(Polarization2D p);
bool in_polarization(Component c, Polarization2D p);

struct YeeGrid2D {
  int nx = 0, ny = 0;                 // cells
  double dx = 0, dy = 0;              // m
  std::array<double, 2> origin{0, 0}; // world (x, y) of the corner of cell (0,0), m

  std::int64_t cell_count() const { return std::int64_t(nx) * ny; }
  // Number of samples of component c along x and y (table above).
  std::array<int, 2> samples(Component c) const;
  std::array<double, 2> position(Component c, int i, int j) const;  // world (x, y), m
  double courant_limit() const;  // s
  void validate() const;         // throws vem::Error naming the member and value
};

// Faces: 0 x-low, 1 x-high, 2 y-low, 3 y-high (boundary.h's numbering without z).
struct BoundarySpec2D {
  std::array<BoundaryType, 4> face{BoundaryType::cpml, BoundaryType::cpml, BoundaryType::cpml,
                                   BoundaryType::cpml};
  std::array<CpmlParameters, 4> cpml{};
  static BoundarySpec2D all(BoundaryType t, int cpml_thickness = 10);
  int cpml_cells(int f) const { return face[f] == BoundaryType::cpml ? cpml[f].thickness : 0; }
};

struct Fdtd2dSetup {
  YeeGrid2D grid;
  Polarization2D polarization = Polarization2D::tm;
  double courant_factor = 0.99;  // dt = courant_factor * courant_limit when dt == 0
  double dt = 0.0;               // s; above the limit is refused
  BoundarySpec2D boundaries;     // subdomain faces are not supported in 2D (refused)

  MaterialMode material_mode = MaterialMode::indexed;
  std::vector<Material> materials;            // indexed: the table (axis x, y, z components used)
  std::vector<std::uint16_t> material_index;  // indexed: nx*ny cells (i + nx j), or empty = all 0
  PerCellMedium medium;                       // coefficient_array: arrays of nx*ny cells; averaging
                                              // at edges as in 3D (2 cells per edge sample, 4 per node)

  std::vector<PointSource> sources;  // k must be 0; direction weights the polarization's components
  std::vector<Probe> probes;         // k must be 0; component of the polarization

  // Throws vem::Error: "Fdtd2dSetup::member = value: limit" (grid, dt, boundaries, CPML thicker
  // than the grid, materials, index beyond the table, array sizes, sources/probes outside the grid
  // or of the other polarization).
  void validate() const;
};

}  // namespace vem
