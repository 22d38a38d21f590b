#include "vem/models/head_phantom.h"

#include <algorithm>
#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

// All shapes below are in millimetres in the head frame (head_phantom.h).
struct V3 {
  double x, y, z;
};

// Signed distance (negative inside) to the ellipsoid centred at c with semi-axes r: the
// first-order approximation k0 (k0 - 1) / k1 (exact on the surface, good near it).
double sd_ellipsoid(const V3& p, const V3& c, const V3& r) {
  const double qx = (p.x - c.x) / r.x, qy = (p.y - c.y) / r.y, qz = (p.z - c.z) / r.z;
  const double k0 = std::sqrt(qx * qx + qy * qy + qz * qz);
  const double k1 = std::sqrt(qx * qx / (r.x * r.x) + qy * qy / (r.y * r.y) + qz * qz / (r.z * r.z));
  if (k1 == 0.0) return -std::min(r.x, std::min(r.y, r.z));
  return k0 * (k0 - 1.0) / k1;
}

bool in_ellipsoid(const V3& p, const V3& c, const V3& r) {
  const double qx = (p.x - c.x) / r.x, qy = (p.y - c.y) / r.y, qz = (p.z - c.z) / r.z;
  return qx * qx + qy * qy + qz * qz < 1.0;
}

// Polynomial smooth minimum (blends two distance fields over a width k).
double smin(double a, double b, double k) {
  const double h = std::max(k - std::fabs(a - b), 0.0) / k;
  return std::min(a, b) - h * h * k * 0.25;
}

// Outer surface of the head (without the ears).
const V3 kCraniumC{0, 0, 0}, kCraniumR{76, 96, 82};
double sd_head(const V3& p) {
  double d = sd_ellipsoid(p, kCraniumC, kCraniumR);
  d = smin(d, sd_ellipsoid(p, {0, 38, -50}, {60, 58, 50}), 14.0);   // face and cheeks
  d = smin(d, sd_ellipsoid(p, {0, 46, -88}, {46, 44, 26}), 10.0);   // jaw and chin
  d = smin(d, sd_ellipsoid(p, {0, -12, -115}, {52, 55, 55}), 20.0); // neck
  d = smin(d, sd_ellipsoid(p, {0, 96, -45}, {11, 14, 22}), 6.0);    // nose
  return d;
}

// Floor of the cranial cavity (mm) as a function of y: posterior fossa (cerebellum), middle
// fossa, anterior fossa above the orbits; piecewise linear.
double cranial_floor(double y) {
  static const double ys[] = {-200, -30, -5, 20, 38, 200};
  static const double zs[] = {-52, -52, -36, -36, -12, -12};
  for (int q = 0; q < 5; ++q)
    if (y <= ys[q + 1]) return zs[q] + (zs[q + 1] - zs[q]) * (y - ys[q]) / (ys[q + 1] - ys[q]);
  return zs[5];
}

bool is_brain(std::uint8_t l) {
  return l == kCsf || l == kGreyMatter || l == kWhiteMatter || l == kCerebellum;
}

// Arch (horseshoe) in the xy plane between two concentric half ellipses centred at (0, cy),
// anterior half only (y >= cy), for z in [z0, z1].
bool in_arch(const V3& p, double cy, double ox, double oy, double ix, double iy, double z0, double z1) {
  if (p.z < z0 || p.z > z1 || p.y < cy) return false;
  const double qo = (p.x / ox) * (p.x / ox) + ((p.y - cy) / oy) * ((p.y - cy) / oy);
  const double qi = (p.x / ix) * (p.x / ix) + ((p.y - cy) / iy) * ((p.y - cy) / iy);
  return qo < 1.0 && qi >= 1.0;
}

std::uint8_t label_mm(const V3& p, double min_layer) {
  auto T = [min_layer](double nominal) { return std::max(nominal, min_layer); };
  const double skin_t = T(2.0), fat_t = T(2.5), muscle_t = T(2.5);
  const double outer_t = T(2.5), diploe_t = T(3.0), inner_t = T(2.5);
  const double csf_t = T(2.5), grey_t = T(3.5), base_t = T(5.0);
  const double scalp = skin_t + fat_t + muscle_t;
  const double skull = outer_t + diploe_t + inner_t;

  const double dh = -sd_head(p);
  if (dh <= 0.0) {
    // Ears (pinnae): skin outside the head surface.
    if (in_ellipsoid(p, {79, -8, -25}, {6, 13, 24}) || in_ellipsoid(p, {-79, -8, -25}, {6, 13, 24}))
      return kSkin;
    return kAir;
  }

  std::uint8_t l = kMuscle;
  if (dh < skin_t) l = kSkin;
  else if (dh < skin_t + fat_t) l = kFat;
  else if (dh < scalp) l = kMuscle;
  const bool under_scalp = dh >= scalp;

  // Skull vault, skull base and cranial cavity, measured from the cranium ellipsoid.
  const double dc = -sd_ellipsoid(p, kCraniumC, kCraniumR);
  const double floor_z = cranial_floor(p.y);
  bool cavity = false;
  if (under_scalp && dc >= scalp && p.z >= floor_z - base_t) {
    if (dc >= scalp + skull && p.z >= floor_z) {
      cavity = true;
      const double depth = std::min(dc - scalp - skull, p.z - floor_z);
      // Gyral undulation of the grey / white boundary.
      const double s = std::sin(0.18 * p.x) * std::sin(0.16 * p.y) * std::cos(0.17 * p.z);
      if (depth < csf_t) l = kCsf;
      else if (depth < csf_t + grey_t * (1.0 + 0.45 * s)) l = kGreyMatter;
      else l = kWhiteMatter;
    } else if (dc < scalp + skull && p.z >= floor_z) {
      const double t = dc - scalp;  // depth into the vault
      l = (t < outer_t || t >= outer_t + diploe_t) ? kSkull : kBoneMarrow;
    } else {
      // Skull base: cortical plates with a cancellous core.
      const double t = p.z - (floor_z - base_t);
      l = (t < 0.3 * base_t || t >= 0.7 * base_t) ? kSkull : kBoneMarrow;
      if (base_t < 2.5 * min_layer) l = kSkull;
    }
  }

  if (cavity && l != kCsf) {
    // Falx cerebri (interhemispheric CSF) above the base of the frontal and occipital lobes.
    const double half = std::max(1.0, 0.5 * min_layer);
    if (std::fabs(p.x) < half && p.z > floor_z + 12.0 && p.y > -88 && p.y < 82) l = kCsf;
    // Lateral ventricles.
    if (in_ellipsoid(p, {9, 4, 10}, {5, 28, 9}) || in_ellipsoid(p, {-9, 4, 10}, {5, 28, 9})) l = kCsf;
    // Cerebellum in the posterior fossa, separated from the occipital lobes by the tentorium.
    const double dcb = std::min(sd_ellipsoid(p, {22, -50, -32}, {28, 24, 18}),
                                sd_ellipsoid(p, {-22, -50, -32}, {28, 24, 18}));
    if (dcb < 0.0) l = kCerebellum;
    else if (dcb < std::max(1.5, min_layer) && p.y < -30) l = kCsf;
  }

  // Brainstem and spinal cord (white matter) in a CSF sheath, inside a cervical vertebra below
  // the skull base.
  {
    const double rx = p.x, ry = (p.y + 22.0) * 1.2;
    const double r = std::sqrt(rx * rx + ry * ry);
    if (under_scalp && p.z < -5.0 && p.z > -200.0) {
      const double cord = p.z < -45 ? 7.0 : 11.0;
      const double sheath = cord + std::max(2.5, min_layer);
      if (r < cord) l = kWhiteMatter;
      else if (r < sheath) l = kCsf;
      else if (p.z < cranial_floor(-22.0) - base_t && r < sheath + T(4.0) + T(3.0)) {
        l = (r < sheath + T(4.0)) ? kBoneMarrow : kSkull;
      }
    }
  }
  if (!cavity && under_scalp) {
    // Maxillary sinuses (air in bone shells).
    for (double sx : {27.0, -27.0}) {
      const V3 c{sx, 60, -58}, r{11, 14, 11};
      const double sh = T(2.5);
      if (in_ellipsoid(p, c, {r.x + sh, r.y + sh, r.z + sh})) l = kSkull;
      if (in_ellipsoid(p, c, r)) l = kSinusAir;
    }
    // Hard palate.
    if (std::fabs(p.x) < 28 && p.y > 20 && p.y < 86 && p.z > -76 - std::max(0.0, min_layer - 4.0) &&
        p.z < -72)
      l = kSkull;
    // Oral cavity (air) above the tongue, then the tongue.
    if (in_ellipsoid(p, {0, 55, -79}, {18, 26, std::max(2.5, 0.5 * min_layer + 0.5)})) l = kSinusAir;
    if (p.z < -80.0 && in_ellipsoid(p, {0, 40, -89}, {22, 34, 9})) l = kTongue;
    // Upper teeth and mandible (arch and rami).
    if (in_arch(p, 30, 40, 58, 40 - T(7.0), 58 - T(7.0), -82, -75)) l = kSkull;
    if (in_arch(p, 20, 46, 66, 46 - T(8.0), 66 - T(8.0), -112, -92)) l = kSkull;
    if (std::fabs(p.x) > 40 && std::fabs(p.x) < 40 + T(6.0) && p.y > -5 && p.y < 12 && p.z > -112 &&
        p.z < -68)
      l = kSkull;
    // Orbital fat around the eyes (over soft tissue only).
    if ((l == kMuscle || l == kFat) &&
        (in_ellipsoid(p, {32, 72, -28}, {16, 16, 16}) || in_ellipsoid(p, {-32, 72, -28}, {16, 16, 16})))
      l = kFat;
  }
  if (!cavity && dh >= skin_t) {
    // Nasal cavity (air) from the nose down to the palate, inside the skin of the nose.
    if (in_ellipsoid(p, {0, 74, -50}, {9, 26, 21})) l = kSinusAir;
  }
  // Frontal sinus: air inside the frontal bone.
  if ((l == kSkull || l == kBoneMarrow) && in_ellipsoid(p, {0, 84, 5}, {13, std::max(3.5, 0.5 * min_layer + 1.0), 8}))
    l = kSinusAir;
  // Eyes (vitreous humour) and lenses; the eye surface reaches the skin surface.
  if (!is_brain(l)) {
    for (double ex : {32.0, -32.0}) {
      if (in_ellipsoid(p, {ex, 72, -28}, {12, 12, 12})) l = kVitreous;
      if (in_ellipsoid(p, {ex, 80.5, -28}, {4.5, std::max(2.2, 0.5 * min_layer + 0.2), 4.5})) l = kLens;
    }
  }
  return l;
}

}  // namespace

const char* head_tissue_name(int label) {
  static const char* names[kHeadTissueCount] = {
      "air",         "skin",         "fat",        "muscle",          "skull", "bone_marrow", "csf",
      "grey_matter", "white_matter", "cerebellum", "vitreous_humour", "lens",  "sinus_air",   "tongue"};
  return (label >= 0 && label < kHeadTissueCount) ? names[label] : "";
}

void HeadPhantomGeometry::validate() const {
  if (!std::isfinite(center[0] + center[1] + center[2]))
    fail("HeadPhantomGeometry::center (HeadCenter) = (", center[0], ", ", center[1], ", ", center[2],
         ") m: must be finite");
  if (!(scale > 0 && scale <= 1000))
    fail("HeadPhantomGeometry::scale (Scale) = ", scale, ": must be in (0, 1000]");
  if (!(min_layer >= 0 && min_layer <= 1))
    fail("HeadPhantomGeometry::min_layer (MinimumLayerThickness) = ", min_layer,
         " m: must be in [0, 1] (0 = the largest voxel size)");
}

void validate_head_phantom_image(const std::array<int, 3>& cells, const std::array<double, 3>& spacing,
                                 const std::array<double, 3>& origin) {
  for (int a = 0; a < 3; ++a) {
    if (cells[a] < 1)
      fail("head phantom cells along ", "xyz"[a], " (Dimensions) = ", cells[a], ": must be >= 1");
    if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
      fail("head phantom voxel size along ", "xyz"[a], " (Spacing) = ", spacing[a], " m: must be finite and > 0");
    if (!std::isfinite(origin[a]))
      fail("head phantom origin along ", "xyz"[a], " (Origin) = ", origin[a], " m: must be finite");
  }
}

std::uint8_t head_phantom_label(const HeadPhantomGeometry& g, double x, double y, double z) {
  if (!(g.scale > 0) || !std::isfinite(g.scale)) fail("head phantom scale ", g.scale, " must be > 0");
  const double s = 1000.0 / g.scale;
  const V3 p{(x - g.center[0]) * s, (y - g.center[1]) * s, (z - g.center[2]) * s};
  return label_mm(p, g.min_layer * s);
}

void head_phantom_fill(const HeadPhantomGeometry& g, const std::array<double, 3>& origin,
                       const std::array<double, 3>& spacing, const int e[6], std::uint8_t* out) {
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(spacing[a]) || spacing[a] <= 0)
      fail("head phantom: voxel size along ", "xyz"[a], " = ", spacing[a], " m must be > 0");
    if (!std::isfinite(origin[a])) fail("head phantom: origin is not finite");
    if (e[2 * a + 1] < e[2 * a])
      fail("head phantom: empty cell extent along ", "xyz"[a], " (", e[2 * a], "..", e[2 * a + 1], ")");
  }
  if (!(g.scale > 0) || !std::isfinite(g.scale)) fail("head phantom scale ", g.scale, " must be > 0");
  HeadPhantomGeometry gg = g;
  if (gg.min_layer <= 0) gg.min_layer = std::max(spacing[0], std::max(spacing[1], spacing[2]));
  const double s = 1000.0 / gg.scale;
  const double min_layer_mm = gg.min_layer * s;
  const int nx = e[1] - e[0] + 1, ny = e[3] - e[2] + 1, nz = e[5] - e[4] + 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int kk = 0; kk < nz; ++kk) {
    const double z = origin[2] + (e[4] + kk + 0.5) * spacing[2];
    for (int jj = 0; jj < ny; ++jj) {
      const double y = origin[1] + (e[2] + jj + 0.5) * spacing[1];
      std::uint8_t* row = out + (std::size_t(kk) * ny + jj) * nx;
      for (int ii = 0; ii < nx; ++ii) {
        const double x = origin[0] + (e[0] + ii + 0.5) * spacing[0];
        const V3 p{(x - gg.center[0]) * s, (y - gg.center[1]) * s, (z - gg.center[2]) * s};
        row[ii] = label_mm(p, min_layer_mm);
      }
    }
  }
}

TissueTable head_phantom_tissue_table() {
  // Dielectric models: Gabriel et al. 1996 (tissue_properties.h). Mass densities: IT'IS
  // Foundation tissue properties database v4.1 (Hasgall et al., 2022), average values; air at
  // 1.16 kg/m^3. The diploe uses cancellous bone (Gabriel's "contains red bone marrow") and the
  // lens the lens-cortex model, as the IT'IS "Lens" entry does.
  struct Row {
    int label;
    const char* model;  // Gabriel model name, or nullptr for air
    double density;
  };
  static const Row rows[] = {
      {kAir, nullptr, 1.16},
      {kSkin, "skin_dry", 1109},
      {kFat, "fat_not_infiltrated", 911},
      {kMuscle, "muscle", 1090},
      {kSkull, "bone_cortical", 1908},
      {kBoneMarrow, "bone_cancellous", 1178},
      {kCsf, "cerebro_spinal_fluid", 1007},
      {kGreyMatter, "brain_grey_matter", 1045},
      {kWhiteMatter, "brain_white_matter", 1041},
      {kCerebellum, "cerebellum", 1045},
      {kVitreous, "vitreous_humour", 1005},
      {kLens, "lens_cortex", 1076},
      {kSinusAir, nullptr, 1.16},
      {kTongue, "tongue", 1090},
  };
  TissueTable t;
  for (const Row& r : rows) {
    TissueEntry e;
    e.label = r.label;
    e.name = head_tissue_name(r.label);
    e.density = r.density;
    if (r.model) {
      e.model = TissueEntry::Model::cole_cole;
      e.cole_cole = gabriel_model(r.model);
      e.origin = std::string("built-in (Gabriel 1996 '") + r.model + "')";
    } else {
      e.model = TissueEntry::Model::fixed;
      e.fixed = {1.0, 0.0};
      e.origin = "built-in (air)";
    }
    t.set(e);
  }
  return t;
}

std::vector<std::uint16_t> head_phantom_image(double cell, std::array<int, 3>& cells) {
  if (!std::isfinite(cell) || cell <= 0) fail("head phantom image: cell size ", cell, " m must be finite and > 0");
  for (int a = 0; a < 3; ++a)
    cells[std::size_t(a)] = std::max(1, int(std::lround(kHeadPhantomDefaultCells[std::size_t(a)] *
                                                        kHeadPhantomDefaultSpacing[std::size_t(a)] / cell)));
  std::vector<std::uint8_t> label8(std::size_t(cells[0]) * std::size_t(cells[1]) * std::size_t(cells[2]));
  const int ext[6] = {0, cells[0] - 1, 0, cells[1] - 1, 0, cells[2] - 1};
  head_phantom_fill(HeadPhantomGeometry{}, kHeadPhantomDefaultOrigin, {cell, cell, cell}, ext, label8.data());
  return std::vector<std::uint16_t>(label8.begin(), label8.end());
}

}  // namespace vem
