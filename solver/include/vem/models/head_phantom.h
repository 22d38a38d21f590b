// A procedural anatomical head phantom (no VTK): a labelled voxel model built from ellipsoids,
// smooth unions and depth shells, anatomically plausible but not patient-specific.
//
// Head frame (before scaling):
//   x: lateral (ears at +-x), y: posterior -> anterior (the face looks to +y),
//   z: inferior -> superior. Origin: centre of the cranial ellipsoid (about the thalamus).
// World position = center + scale * head-frame position.
//
// Structure (nominal thicknesses; see the code for every shape):
//   - outer surface: smooth union of cranium, face, jaw, nose and neck ellipsoids, plus ears;
//   - scalp: skin 2 mm, subcutaneous fat 2.5 mm, muscle 2.5 mm (temporalis thicker at the sides);
//   - skull: outer table 2.5 mm (cortical bone), diploe 3 mm (cancellous bone / marrow), inner
//     table 2.5 mm; the skull base follows the anterior, middle and posterior cranial fossae;
//   - cranial cavity: CSF 2.5 mm, cortical grey matter 3.5 mm with gyral undulation, white matter,
//     falx (CSF), lateral ventricles (CSF), cerebellum in the posterior fossa, brainstem and
//     spinal cord (white matter) in a CSF sheath;
//   - face: orbits with orbital fat, eyes (vitreous humour) with lenses, nasal cavity and
//     maxillary / frontal sinuses (air) in bone shells, hard palate, tongue, oral cavity (air),
//     teeth and mandible (cortical bone), cervical vertebra (cortical shell, marrow core);
//   - everything else inside the head is muscle / soft tissue, everything outside is air.
// Layers thinner than a voxel would break up when sampled, so every shell is made at least
// `min_layer` thick (the fill function sets it to the largest voxel size).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vem/models/tissue_properties.h"

namespace vem {

enum HeadTissue : std::uint8_t {
  kAir = 0,
  kSkin = 1,
  kFat = 2,
  kMuscle = 3,
  kSkull = 4,          // cortical bone (skull tables, mandible, teeth, vertebra shell)
  kBoneMarrow = 5,     // cancellous bone / diploe with red marrow
  kCsf = 6,
  kGreyMatter = 7,
  kWhiteMatter = 8,
  kCerebellum = 9,
  kVitreous = 10,      // eye: vitreous humour
  kLens = 11,
  kSinusAir = 12,      // nasal cavity, sinuses and oral cavity
  kTongue = 13,
  kHeadTissueCount = 14
};

// "air", "skin", "fat", "muscle", "skull", "bone_marrow", "csf", "grey_matter", "white_matter",
// "cerebellum", "vitreous_humour", "lens", "sinus_air", "tongue"; "" for other labels.
const char* head_tissue_name(int label);

struct HeadPhantomGeometry {
  std::array<double, 3> center{0.0, 0.0, 0.0};  // world position of the head-frame origin, m
  double scale = 1.0;                           // uniform scale of the whole head
  double min_layer = 0.0;                       // minimum shell thickness, m (world units)

  // Throws vem::Error naming the member and the HeadPhantom property (HeadCenter, Scale in
  // (0, 1000], MinimumLayerThickness in [0, 1] m), the value and the limit.
  void validate() const;
};

// The phantom's image as the HeadPhantom filter makes it: cells per axis >= 1 (Dimensions),
// spacing finite and > 0 (Spacing, m), origin finite (Origin, m). Throws vem::Error.
void validate_head_phantom_image(const std::array<int, 3>& cells, const std::array<double, 3>& spacing,
                                 const std::array<double, 3>& origin);

// Default image of the phantom: 128 x 128 x 64 cells of 2.2 x 2.2 x 2.8 mm. The default origin puts
// the head (vertex at z = +82 mm, lower edge through the tongue and mandible) in the box with
// about 55 mm of air on each side in x and 40 mm in front of the nose.
constexpr std::array<int, 3> kHeadPhantomDefaultCells{128, 128, 64};
constexpr std::array<double, 3> kHeadPhantomDefaultSpacing{2.2e-3, 2.2e-3, 2.8e-3};
constexpr std::array<double, 3> kHeadPhantomDefaultOrigin{-0.1408, -0.1408, -0.095};

// Label at a world position (m).
std::uint8_t head_phantom_label(const HeadPhantomGeometry& g, double x, double y, double z);

// Labels of the cells i in [cell_extent[0], cell_extent[1]], j in [cell_extent[2], cell_extent[3]],
// k in [cell_extent[4], cell_extent[5]] (inclusive) of the image whose cell (0,0,0) has its lower
// corner at `origin`; each cell takes the label at its centre. out has (i1-i0+1)(j1-j0+1)(k1-k0+1)
// entries, i fastest. Any sub-extent gives the same labels as the whole image. If g.min_layer is 0,
// the largest spacing is used. Throws vem::Error for non-positive spacing or an empty extent.
void head_phantom_fill(const HeadPhantomGeometry& g, const std::array<double, 3>& origin,
                       const std::array<double, 3>& spacing, const int cell_extent[6],
                       std::uint8_t* out);

// The default phantom box (kHeadPhantomDefaultCells x kHeadPhantomDefaultSpacing from
// kHeadPhantomDefaultOrigin) voxelized at cubic cells of side `cell` (m, > 0): the cells per axis
// in `cells` (the box's extent / cell, rounded), labels i fastest, 16-bit as the FDTD voxel domain
// takes them. The drivers and benchmarks that run the phantom at several resolutions use it.
std::vector<std::uint16_t> head_phantom_image(double cell, std::array<int, 3>& cells);

// Tissue table of the phantom's labels: Gabriel (1996) models and IT'IS densities.
TissueTable head_phantom_tissue_table();

}  // namespace vem
