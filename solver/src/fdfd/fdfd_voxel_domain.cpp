// A voxel model in an FDFD grid (fdfd_voxel_domain.h).
#include "vem/fdfd/fdfd_voxel_domain.h"

#include <cmath>

#include "vem/core/error.h"

namespace vem {

void FdfdVoxelOptions::validate() const {
  if (!std::isfinite(frequency) || frequency <= 0)
    fail("FdfdVoxelOptions::frequency (Frequency) = ", frequency, " Hz: must be finite and > 0");
  incident.validate();
  if (pml_thickness < 0)
    fail("FdfdVoxelOptions::pml_thickness (PMLThickness) = ", pml_thickness,
         " cells: must be >= 0");
  if (air_padding < 0)
    fail("FdfdVoxelOptions::air_padding (AirPadding) = ", air_padding, " cells: must be >= 0");
  if (subpixel_smoothing) subpixel.validate("FdfdVoxelOptions::subpixel (SubpixelSmoothing)");
  if (subpixel_smoothing && subpixel.full_tensor)
    fail("FdfdVoxelOptions::subpixel.full_tensor = true: the FDFD operator is diagonal; the full smoothed ",
         "tensor is FDTD-only (VoxelDomainOptions::subpixel, SubpixelTensorExtension); set it false here");
}

FdfdProblem FdfdVoxelDomain::problem() const {
  FdfdProblem p;
  p.grid = grid();
  p.frequency = options.frequency;
  p.pml = FdfdPml::uniform(pml_cells());
  p.incident = options.incident;
  return p;
}

NtffBox FdfdVoxelDomain::ntff_box() const {
  const int b = pad_cells() / 2;
  NtffBox box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = pml_cells() + b;
    box.hi[a] = n_total[a] - pml_cells() - b;
  }
  return box;
}

FdfdLabelCells FdfdVoxelDomain::set_label_materials(FdfdProblem& p,
                                                    const std::vector<std::uint16_t>& labels,
                                                    const LabelProperties& props) const {
  if (props.labels.size() + 1 > 65536)
    fail("FDFD voxel model: too many distinct labels (", props.labels.size(),
         "); at most 65535 (16-bit material indices, 0 is vacuum)");
  if (std::int64_t(labels.size()) != voxel_count())
    fail("FDFD voxel model: ", labels.size(), " labels for ", voxel_count(), " voxels");
  p.material_mode = MaterialMode::indexed;
  p.materials = {Material::vacuum()};
  std::vector<std::uint16_t> to_material(65536, 0);  // labels without properties: vacuum
  std::vector<double> density(1, 0.0);
  for (std::size_t q = 0; q < props.labels.size(); ++q) {
    p.materials.push_back(
        Material::isotropic(props.names[q], props.dielectric[q].eps_r, props.dielectric[q].sigma));
    density.push_back(props.density[q]);
    to_material[static_cast<std::size_t>(props.labels[q])] = static_cast<std::uint16_t>(q + 1);
  }
  const std::size_t n = static_cast<std::size_t>(total_cells());
  p.material_index.assign(n, 0);
  FdfdLabelCells c;
  c.eps_r.assign(n, 1.0f);
  c.sigma_e.assign(n, 0.0f);
  c.label.assign(n, 0.0f);
  c.density.assign(n, 0.0f);
  const std::int64_t nv = voxel_count();
  for (std::int64_t v = 0; v < nv; ++v) {
    const std::size_t t = static_cast<std::size_t>(total_index(v));
    const std::uint16_t m = to_material[labels[static_cast<std::size_t>(v)]];
    p.material_index[t] = m;
    c.eps_r[t] = static_cast<float>(p.materials[m].eps_r[0]);
    c.sigma_e[t] = static_cast<float>(p.materials[m].sigma_e[0]);
    c.label[t] = labels[static_cast<std::size_t>(v)];
    c.density[t] = static_cast<float>(density[m]);
  }
  smooth_materials(p);
  return c;
}

void FdfdVoxelDomain::smooth_materials(FdfdProblem& p) const {
  if (!options.subpixel_smoothing) return;
  SubpixelOptions so = options.subpixel;
  if (so.frequency == 0) so.frequency = options.frequency;
  if (p.material_mode == MaterialMode::indexed) {
    const std::int64_t nv = voxel_count();
    std::vector<std::uint16_t> per_voxel(static_cast<std::size_t>(nv), 0);
    if (!p.material_index.empty()) {
      if (static_cast<std::int64_t>(p.material_index.size()) != total_cells())
        fail("subpixel smoothing: ", p.material_index.size(), " material indices for ", total_cells(), " cells");
      for (std::int64_t v = 0; v < nv; ++v)
        per_voxel[static_cast<std::size_t>(v)] = p.material_index[static_cast<std::size_t>(total_index(v))];
    }
    p.medium = subpixel_label_medium(*this, per_voxel, p.materials, so);
  } else {
    p.medium = subpixel_array_medium(*this, p.medium, so);
  }
  p.material_mode = MaterialMode::coefficient_array;
}

FdfdVoxelDomain make_fdfd_voxel_domain(const std::array<int, 3>& voxels,
                                       const std::array<double, 3>& spacing,
                                       const std::array<double, 3>& voxel_origin,
                                       const FdfdVoxelOptions& options) {
  options.validate();
  std::array<int, 6> pad{}, pml{};
  pad.fill(options.air_padding);
  pml.fill(options.pml_thickness);
  FdfdVoxelDomain d;
  static_cast<VoxelPlacement&>(d) = place_voxels(voxels, spacing, voxel_origin, pad, pml);
  d.options = options;
  return d;
}

}  // namespace vem
