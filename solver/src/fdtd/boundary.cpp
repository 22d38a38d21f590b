#include "vem/fdtd/boundary.h"

#include "vem/core/error.h"

namespace vem {

const char* boundary_name(BoundaryType t) {
  switch (t) {
    case BoundaryType::pec: return "pec";
    case BoundaryType::pmc: return "pmc";
    case BoundaryType::periodic: return "periodic";
    case BoundaryType::cpml: return "cpml";
    case BoundaryType::subdomain: return "subdomain";
  }
  return "?";
}

BoundaryType boundary_from_name(const std::string& name) {
  for (auto t : {BoundaryType::pec, BoundaryType::pmc, BoundaryType::periodic, BoundaryType::cpml,
                 BoundaryType::subdomain})
    if (name == boundary_name(t)) return t;
  fail("unknown boundary '", name, "' (expected pec, pmc, periodic, cpml or subdomain)");
}

BoundarySpec BoundarySpec::all(BoundaryType t, int cpml_thickness) {
  BoundarySpec b;
  b.face.fill(t);
  for (auto& c : b.cpml) c.thickness = cpml_thickness;
  return b;
}

const char* face_name(int f) {
  static const char* names[] = {"x-low", "x-high", "y-low", "y-high", "z-low", "z-high"};
  return (f >= 0 && f < 6) ? names[f] : "?";
}

}  // namespace vem
