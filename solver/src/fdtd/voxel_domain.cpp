// A voxel model placed in an FDTD grid (voxel_domain.h).
#include "vem/fdtd/voxel_domain.h"

#include <cmath>
#include <sstream>

#include "vem/core/error.h"
#include "vem/core/field_sampling.h"
#include "vem/fdtd/extensions/sar.h"

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
  if (subpixel_smoothing) subpixel.validate("VoxelDomainOptions::subpixel (SubpixelSmoothing)");
  if (field_storage != FieldStorage::float32 && scheme != Scheme::yee)
    fail("VoxelDomainOptions::field_storage (FieldStorage) = ", field_storage_name(field_storage), " with scheme ",
         scheme_name(scheme), " (Scheme): the 2-byte storages are available with scheme yee only; use float32");
  if (field_storage != FieldStorage::float32 && subpixel_smoothing && subpixel.full_tensor)
    fail("VoxelDomainOptions::field_storage (FieldStorage) = ", field_storage_name(field_storage),
         " with subpixel.full_tensor (SubpixelTensor = Full): the full-tensor extension reads float32 fields; use ",
         "float32 or the diagonal smoothing");
  if (subpixel_smoothing && subpixel.full_tensor && scheme == Scheme::s44)
    fail("VoxelDomainOptions::subpixel.full_tensor (SubpixelTensor = Full) = true with scheme s44 (Scheme): the ",
         "full-tensor extension needs a leap-frog E update (yee, fv24, fv24_wb, s22); s44 steps E from four earlier ",
         "time levels. Use the diagonal smoothing (full_tensor false, SubpixelTensor = Diagonal) or another scheme");
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
  std::array<int, 6> pad{}, pml{};
  for (int f = 0; f < 6; ++f) {
    pad[f] = o.boundaries[f] == BoundaryType::periodic ? 0 : o.air_padding;
    pml[f] = o.boundaries[f] == BoundaryType::cpml ? o.cpml_thickness : 0;
  }
  VoxelDomain d;
  static_cast<VoxelPlacement&>(d) = place_voxels(voxels, spacing, voxel_origin, pad, pml);
  d.options = o;
  const YeeGrid g = d.grid();
  g.validate();
  if (o.scheme == Scheme::yee) {
    d.dt = o.courant_factor * g.courant_limit_dt();
  } else {
    // The operator's own rule (fdtd_operator.cpp build_scheme_time_step): cubic cells, dt from the
    // scheme's limit at the default design resolution.
    if (g.dx != g.dy || g.dx != g.dz)
      fail("VoxelDomainOptions::scheme (Scheme) = ", scheme_name(o.scheme), " needs cubic voxels: the spacing is ",
           g.dx, " x ", g.dy, " x ", g.dz, " m (use scheme yee, or resample the image to cubic voxels)");
    const SchemeDesign sd = scheme_design_for_factor(o.scheme, o.courant_factor, FdtdSetup().scheme_design_cells_per_wavelength);
    d.dt = sd.courant * g.dx / kC0;
  }
  return d;
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

void VoxelDomain::set_label_materials(FdtdSetup& s, const std::vector<std::uint16_t>& labels,
                                      const LabelProperties& props) const {
  if (props.labels.size() + 1 > 65536)
    fail("FDTD voxel model: too many distinct labels (", props.labels.size(),
         "); at most 65535 (16-bit material indices, 0 is vacuum)");
  if (std::int64_t(labels.size()) != voxel_count())
    fail("FDTD voxel model: ", labels.size(), " labels for ", voxel_count(), " voxels");
  s.grid = grid();
  s.materials = {Material::vacuum()};
  std::vector<std::uint16_t> to_material(65536, 0);  // labels without properties: vacuum
  for (std::size_t q = 0; q < props.labels.size(); ++q) {
    s.materials.push_back(Material::isotropic(props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
    to_material[static_cast<std::size_t>(props.labels[q]) & 0xffff] = static_cast<std::uint16_t>(q + 1);
  }
  s.material_mode = MaterialMode::indexed;
  s.material_index.assign(std::size_t(total_cells()), 0);
  for (std::size_t v = 0; v < labels.size(); ++v)
    s.material_index[std::size_t(total_index(std::int64_t(v)))] = to_material[labels[v]];
  smooth_materials(s);
}

std::vector<float> VoxelDomain::tissue_density(const std::vector<std::uint16_t>& labels,
                                               const LabelProperties& props) const {
  if (std::int64_t(labels.size()) != voxel_count())
    fail("FDTD voxel model: ", labels.size(), " labels for ", voxel_count(), " voxels");
  std::vector<float> rho_of(65536, 0.0f);
  for (std::size_t q = 0; q < props.labels.size(); ++q) {
    const float rho = float(props.density[q]);
    rho_of[static_cast<std::size_t>(props.labels[q]) & 0xffff] = is_tissue_density(rho) ? rho : 0.0f;
  }
  std::vector<float> density(std::size_t(total_cells()), 0.0f);
  for (std::size_t v = 0; v < labels.size(); ++v)
    density[std::size_t(total_index(std::int64_t(v)))] = rho_of[labels[v]];
  return density;
}

void VoxelDomain::smooth_materials(FdtdSetup& s) const {
  if (!options.subpixel_smoothing) return;
  std::array<bool, 3> periodic{};  // no padding on periodic faces: the voxels repeat there
  for (int a = 0; a < 3; ++a) periodic[std::size_t(a)] = options.boundaries[std::size_t(2 * a)] == BoundaryType::periodic;
  if (s.material_mode == MaterialMode::indexed) {
    if (std::int64_t(s.material_index.size()) != total_cells())
      fail("subpixel smoothing: ", s.material_index.size(), " material indices for ", total_cells(), " cells");
    std::vector<std::uint16_t> per_voxel(static_cast<std::size_t>(voxel_count()));
    for (std::int64_t v = 0; v < voxel_count(); ++v)
      per_voxel[std::size_t(v)] = s.material_index[std::size_t(total_index(v))];
    s.medium = subpixel_label_medium(*this, per_voxel, s.materials, options.subpixel, nullptr, periodic);
    s.material_index.clear();
  } else {
    s.medium = subpixel_array_medium(*this, s.medium, options.subpixel, nullptr, periodic);
  }
  s.material_mode = MaterialMode::coefficient_array;
}

}  // namespace vem
