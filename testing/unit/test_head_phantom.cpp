// The procedural head phantom: every tissue present, layers in anatomical order, sub-extents
// identical to the whole image, and errors for bad grids.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "vem/core/error.h"
#include "vem/models/head_phantom.h"

using namespace vem;

namespace {

std::vector<std::uint8_t> fill_default(const int e[6]) {
  HeadPhantomGeometry g;
  std::vector<std::uint8_t> out(std::size_t(e[1] - e[0] + 1) * (e[3] - e[2] + 1) * (e[5] - e[4] + 1));
  head_phantom_fill(g, kHeadPhantomDefaultOrigin, kHeadPhantomDefaultSpacing, e, out.data());
  return out;
}

}  // namespace

TEST(HeadPhantom, DefaultImageHasEveryTissue) {
  const auto& n = kHeadPhantomDefaultCells;
  const int e[6] = {0, n[0] - 1, 0, n[1] - 1, 0, n[2] - 1};
  const auto labels = fill_default(e);
  std::map<int, long> count;
  for (auto l : labels) ++count[l];
  for (int l = 0; l < kHeadTissueCount; ++l)
    EXPECT_GT(count[l], 0) << "tissue " << l << " (" << head_tissue_name(l) << ") missing";
  // Plausible proportions: the brain dominates the head, air surrounds it.
  EXPECT_GT(count[kWhiteMatter] + count[kGreyMatter], 5 * count[kSkull] / 10);
  EXPECT_GT(count[kAir], long(labels.size() / 3));
  EXPECT_EQ(count.size(), std::size_t(kHeadTissueCount));
}

TEST(HeadPhantom, LayersFromTheVertexInward) {
  // Walk down from above the vertex along the z axis at x = 0.5 mm off the falx plane... use a
  // lateral ray instead: from the right side (+x) toward the centre at the level z = 30 mm.
  HeadPhantomGeometry g;
  g.min_layer = 0.5e-3;
  std::vector<int> seq;
  for (double x = 0.1; x > 0.0; x -= 0.0002) {
    const int l = head_phantom_label(g, x, 0.0, 0.03);
    if (seq.empty() || seq.back() != l) seq.push_back(l);
  }
  const std::vector<int> expected = {kAir,  kSkin, kFat,       kMuscle, kSkull,      kBoneMarrow,
                                     kSkull, kCsf, kGreyMatter, kWhiteMatter};
  ASSERT_GE(seq.size(), expected.size());
  for (std::size_t q = 0; q < expected.size(); ++q) EXPECT_EQ(seq[q], expected[q]) << "position " << q;
}

TEST(HeadPhantom, FacialStructures) {
  HeadPhantomGeometry g;
  EXPECT_EQ(head_phantom_label(g, 0.032, 0.072, -0.028), kVitreous);
  EXPECT_EQ(head_phantom_label(g, -0.032, 0.0805, -0.028), kLens);
  EXPECT_EQ(head_phantom_label(g, 0.0, 0.074, -0.05), kSinusAir);
  EXPECT_EQ(head_phantom_label(g, 0.0, 0.04, -0.088), kTongue);
  EXPECT_EQ(head_phantom_label(g, 0.022, -0.05, -0.032), kCerebellum);
  EXPECT_EQ(head_phantom_label(g, 0.0, 0.0, 0.2), kAir);
  // Scaling and moving the head moves the labels with it.
  HeadPhantomGeometry h;
  h.center = {0.01, 0.02, 0.03};
  h.scale = 0.9;
  EXPECT_EQ(head_phantom_label(h, 0.01 + 0.9 * 0.032, 0.02 + 0.9 * 0.072, 0.03 - 0.9 * 0.028), kVitreous);
}

TEST(HeadPhantom, SubExtentsMatchTheWholeImage) {
  const auto& n = kHeadPhantomDefaultCells;
  const int whole[6] = {0, n[0] - 1, 0, n[1] - 1, 0, n[2] - 1};
  const auto all = fill_default(whole);
  const int sub[6] = {17, 90, 40, 41, 10, 50};
  const auto part = fill_default(sub);
  std::size_t q = 0;
  for (int k = sub[4]; k <= sub[5]; ++k)
    for (int j = sub[2]; j <= sub[3]; ++j)
      for (int i = sub[0]; i <= sub[1]; ++i, ++q)
        ASSERT_EQ(part[q], all[i + std::size_t(n[0]) * (j + std::size_t(n[1]) * k)]);
}

TEST(HeadPhantom, BadGridThrows) {
  HeadPhantomGeometry g;
  std::uint8_t dummy[8];
  const int e[6] = {0, 1, 0, 1, 0, 1};
  EXPECT_THROW(head_phantom_fill(g, {0, 0, 0}, {0.0, 1e-3, 1e-3}, e, dummy), Error);
  const int empty[6] = {0, -1, 0, 1, 0, 1};
  EXPECT_THROW(head_phantom_fill(g, {0, 0, 0}, {1e-3, 1e-3, 1e-3}, empty, dummy), Error);
  g.scale = 0;
  EXPECT_THROW(head_phantom_fill(g, {0, 0, 0}, {1e-3, 1e-3, 1e-3}, e, dummy), Error);
}

TEST(HeadPhantom, ImageAtACubicCellSizeAndItsTissueLookup) {
  // 8 mm: the default box (281.6 x 281.6 x 179.2 mm) in 35 x 35 x 22 cells; the labels are those of
  // head_phantom_fill at that spacing, and lookup_image counts them.
  std::array<int, 3> cells{};
  const std::vector<std::uint16_t> img = head_phantom_image(8e-3, cells);
  EXPECT_EQ(cells, (std::array<int, 3>{35, 35, 22}));
  ASSERT_EQ(img.size(), std::size_t(35) * 35 * 22);
  std::vector<std::uint8_t> ref(img.size());
  const int e[6] = {0, 34, 0, 34, 0, 21};
  head_phantom_fill(HeadPhantomGeometry{}, kHeadPhantomDefaultOrigin, {8e-3, 8e-3, 8e-3}, e, ref.data());
  for (std::size_t q = 0; q < img.size(); ++q) ASSERT_EQ(img[q], ref[q]) << q;
  const LabelProperties p = head_phantom_tissue_table().lookup_image(img, 900e6);
  std::map<int, long> count;
  for (auto l : img) ++count[l];
  ASSERT_EQ(p.labels.size(), count.size());
  for (std::size_t q = 0; q < p.labels.size(); ++q) EXPECT_GT(count[int(p.labels[q])], 0);
  // A label the table does not have is named with its voxel count.
  std::vector<std::uint16_t> bad = img;
  bad[0] = 250;
  bad[1] = 250;
  try {
    head_phantom_tissue_table().lookup_image(bad, 900e6);
    ADD_FAILURE() << "label 250 was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("250"), std::string::npos) << err.what();
  }
  EXPECT_THROW(head_phantom_image(0.0, cells), Error);
}
