// A voxel model placed in an FDTD grid (voxel_domain.h).
#include "vem/fdtd/voxel_domain.h"

#include <cmath>
#include <sstream>

#include "vem/core/error.h"
#include "vem/core/field_sampling.h"

namespace vem {

void VoxelDomainOptions::validate() const {
  if (cpml_thickness < 1 || cpml_thickness > 1000)
    fail("VoxelDomainOptions::cpml_thickness (CPMLThickness) = ", cpml_thickness, " cells: must be in 1..1000");
  if (air_padding < 0)
    fail("VoxelDomainOptions::air_padding (AirPadding) = ", air_padding, " cells: must be >= 0");
  if (!(courant_factor > 0 && courant_factor <= 1))
    fail("VoxelDomainOptions::courant_factor (CourantFactor) = ", courant_factor, ": must be in (0, 1]");
  for (int a = 0; a < 3; ++a) {
    const bool lo = boundaries[2 * a] == BoundaryType::periodic, hi = boundaries[2 * a + 1] == BoundaryType::periodic;
    if (lo != hi)
      fail("VoxelDomainOptions::boundaries (", "XYZ"[a], "LowBoundary, ", "XYZ"[a], "HighBoundary): a periodic ",
           "boundary needs both ", "xyz"[a], " faces periodic (", face_name(2 * a), ": ",
           boundary_name(boundaries[2 * a]), ", ", face_name(2 * a + 1), ": ", boundary_name(boundaries[2 * a + 1]), ")");
    if (boundaries[2 * a] == BoundaryType::subdomain || boundaries[2 * a + 1] == BoundaryType::subdomain)
      fail("VoxelDomainOptions::boundaries: a voxel model's outer faces cannot be subdomain faces");
  }
}

BoundarySpec VoxelDomainOptions::boundary_spec() const {
  BoundarySpec b;
  for (int f = 0; f < 6; ++f) {
    b.face[f] = boundaries[f];
    b.cpml[f].thickness = cpml_thickness;
  }
  return b;
}

VoxelDomain make_voxel_domain(const std::array<int, 3>& voxels, const std::array<double, 3>& spacing,
                              const std::array<double, 3>& voxel_origin, const VoxelDomainOptions& o) {
  o.validate();
  VoxelDomain d;
  d.options = o;
  d.voxels = voxels;
  d.spacing = spacing;
  d.voxel_origin = voxel_origin;
  for (int a = 0; a < 3; ++a) {
    if (voxels[a] < 1)
      fail("the voxel model has ", voxels[a], " voxels along ", "xyz"[a], "; it needs at least one on each axis");
    if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
      fail("the voxel spacing along ", "xyz"[a], " is ", spacing[a], " m; it must be finite and > 0 (metres)");
    if (!std::isfinite(voxel_origin[a]))
      fail("the voxel origin along ", "xyz"[a], " is ", voxel_origin[a], " m; it must be finite");
    const bool periodic = o.boundaries[2 * a] == BoundaryType::periodic;
    for (int s = 0; s < 2; ++s) {
      const int f = 2 * a + s;
      d.pad[f] = periodic ? 0 : o.air_padding;
      d.pml[f] = o.boundaries[f] == BoundaryType::cpml ? o.cpml_thickness : 0;
    }
    const std::int64_t out = std::int64_t(voxels[a]) + d.pad[2 * a] + d.pad[2 * a + 1];
    const std::int64_t total = out + d.pml[2 * a] + d.pml[2 * a + 1];
    if (total > (1 << 30))
      fail("the grid would have ", total, " cells along ", "xyz"[a], " (", voxels[a], " voxels + padding + CPML); limit 2^30");
    d.n_out[a] = int(out);
    d.n_total[a] = int(total);
    d.lo_total[a] = d.pad[2 * a] + d.pml[2 * a];
    d.origin_out[a] = voxel_origin[a] - d.pad[2 * a] * spacing[a];
    d.origin_total[a] = d.origin_out[a] - d.pml[2 * a] * spacing[a];
  }
  const YeeGrid g = d.grid();
  g.validate();
  d.dt = o.courant_factor * g.courant_limit_dt();
  return d;
}

YeeGrid VoxelDomain::grid() const {
  YeeGrid g;
  g.nx = n_total[0];
  g.ny = n_total[1];
  g.nz = n_total[2];
  g.dx = spacing[0];
  g.dy = spacing[1];
  g.dz = spacing[2];
  g.origin = origin_total;
  return g;
}

std::int64_t VoxelDomain::total_index(std::int64_t v) const {
  const std::int64_t i = v % voxels[0];
  const std::int64_t j = (v / voxels[0]) % voxels[1];
  const std::int64_t k = v / (std::int64_t(voxels[0]) * voxels[1]);
  return (i + lo_total[0]) + n_total[0] * ((j + lo_total[1]) + std::int64_t(n_total[1]) * (k + lo_total[2]));
}

std::string VoxelDomain::bounds() const {
  std::ostringstream os;
  for (int a = 0; a < 3; ++a)
    os << (a ? " x [" : "[") << origin_total[a] << ", " << origin_total[a] + n_total[a] * spacing[a] << "]";
  os << " m";
  return os.str();
}

std::array<int, 3> VoxelDomain::sample_at(Component c, const std::array<double, 3>& p, const std::string& what,
                                          bool outside_cpml) const {
  const std::array<int, 3> idx = nearest_sample(grid(), c, p);
  for (int a = 0; a < 3; ++a) {
    if (idx[a] < 0 || idx[a] > n_total[a])
      fail(what, " at (", p[0], ", ", p[1], ", ", p[2], ") m is outside the computational domain ", bounds());
    if (outside_cpml && (idx[a] < pml[2 * a] || idx[a] > n_total[a] - pml[2 * a + 1]))
      fail(what, " at (", p[0], ", ", p[1], ", ", p[2], ") m lies in the CPML layer; move it inside the padded ",
           "model (the absorbing layer is the outer ", options.cpml_thickness, " cells of ", bounds(), ")");
  }
  return idx;
}

void VoxelDomain::crop_to_output(const std::vector<float>& total, float* dst, int components, int comp) const {
  if (std::int64_t(total.size()) != total_cells())
    fail("internal: an array of ", total.size(), " values cropped from a grid of ", total_cells(), " cells");
  std::int64_t o = 0;
  for (int K = 0; K < n_out[2]; ++K)
    for (int J = 0; J < n_out[1]; ++J)
      for (int I = 0; I < n_out[0]; ++I, ++o) {
        const std::int64_t t = (I + pml[0]) + n_total[0] * ((J + pml[2]) + std::int64_t(n_total[1]) * (K + pml[4]));
        dst[components * o + comp] = total[std::size_t(t)];
      }
}

}  // namespace vem
