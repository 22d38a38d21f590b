// Subpixel smoothing (core/subpixel_smoothing.h) against exact answers for planar interfaces:
// Farjadpour et al. 2006 / Oskooi et al. 2009: a dual cell cut by a plane with fill fraction f of
// eps_a gives the normal component the harmonic mean 1 / (f / eps_a + (1 - f) / eps_b) and the
// tangential ones the arithmetic mean f eps_a + (1 - f) eps_b. Also: label volumes, the sphere,
// the conductivity choice, both voxel domains sharing one implementation, option messages.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>

#include "vem/core/error.h"
#include "vem/core/subpixel_smoothing.h"
#include "vem/fdfd/fdfd_voxel_domain.h"
#include "vem/fdtd/fdtd_operator.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/models/voxel_shapes.h"

using namespace vem;

namespace {

// Half space x < x0 of material 1, else material 0; optional analytic normal.
class PlaneX final : public SubpixelGeometry {
 public:
  PlaneX(double x0, bool analytic) : x0_(x0), analytic_(analytic) {}
  int material_at(const std::array<double, 3>& p) const override { return p[0] < x0_ ? 1 : 0; }
  bool uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& m) const override {
    if (hi[0] <= x0_) { m = 1; return true; }
    if (lo[0] >= x0_) { m = 0; return true; }
    return false;
  }
  bool normal_at(const std::array<double, 3>&, std::array<double, 3>& n) const override {
    if (!analytic_) return false;
    n = {1, 0, 0};
    return true;
  }

 private:
  double x0_;
  bool analytic_;
};

std::size_t cell(const YeeGrid& g, int i, int j, int k) { return std::size_t(i + g.nx * (j + g.ny * k)); }

}  // namespace

TEST(SubpixelSmoothing, PlaneGivesHarmonicNormalAndArithmeticTangentialMeans) {
  const double h = 1e-3, ea = 4.0, eb = 1.0;
  const YeeGrid g{6, 5, 5, h, h, h};
  const std::vector<Material> mats = {Material::vacuum(), Material::isotropic("a", ea)};
  SubpixelOptions o;
  o.samples = 10;  // fill fractions 0.3 and 0.8 are exact on 10 points
  for (int variant = 0; variant < 3; ++variant) {
    const bool analytic = variant > 0;
    // Both diagonal choices are exact for a normal along an axis.
    o.diagonal = variant == 2 ? SubpixelDiagonal::tensor : SubpixelDiagonal::inverse;
    SubpixelStats st;
    // Plane at x = 2.3 h: the Ex box of i = 2 spans [2, 3] h (fraction 0.3 of eps_a); the Ey/Ez
    // boxes of i = 2 span [1.5, 2.5] h (fraction 0.8).
    const PerCellMedium md = subpixel_smoothed_medium(g, mats, PlaneX(2.3 * h, analytic), o, &st);
    ASSERT_EQ(md.eps_r.size(), 3u);
    EXPECT_FALSE(md.average_at_edges);
    const double ex = 1.0 / (0.3 / ea + 0.7 / eb), et = 0.8 * ea + 0.2 * eb;
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j) {
        EXPECT_NEAR(md.eps_r[0][cell(g, 2, j, k)], ex, 1e-5);
        EXPECT_NEAR(md.eps_r[1][cell(g, 2, j, k)], et, 1e-5);
        EXPECT_NEAR(md.eps_r[2][cell(g, 2, j, k)], et, 1e-5);
        // Away from the plane: the materials themselves.
        EXPECT_FLOAT_EQ(md.eps_r[0][cell(g, 1, j, k)], float(ea));
        EXPECT_FLOAT_EQ(md.eps_r[1][cell(g, 1, j, k)], float(ea));
        EXPECT_FLOAT_EQ(md.eps_r[0][cell(g, 3, j, k)], float(eb));
        EXPECT_FLOAT_EQ(md.eps_r[2][cell(g, 4, j, k)], float(eb));
      }
    EXPECT_EQ(st.interface_samples, 3 * g.ny * g.nz);
    EXPECT_EQ(analytic ? st.analytic_normals : st.moment_normals, st.interface_samples);
  }
}

TEST(SubpixelSmoothing, DiagonalOfTheInverseTensorForAnObliqueNormal) {
  // n = (cos 30, sin 30, 0): 1/eps_xx = n_x^2 <1/eps> + (1 - n_x^2) / <eps>.
  const double me = 2.5, mi = 0.625;  // f = 1/2 of eps 4 and 1
  const double nx = std::cos(kPi / 6);
  EXPECT_NEAR(subpixel_inverse_eps(me, mi, nx), 0.75 * mi + 0.25 / me, 1e-15);
  EXPECT_NEAR(subpixel_inverse_eps(me, mi, 1.0), mi, 1e-15);        // normal: harmonic
  EXPECT_NEAR(subpixel_inverse_eps(me, mi, 0.0), 1.0 / me, 1e-15);  // tangential: arithmetic
}

TEST(SubpixelSmoothing, TheTwoDiagonalsDifferForAnObliquePlane) {
  // Plane through the Ex samples' boxes with normal (1, 1, 0) / sqrt 2, analytic normal: the
  // inverse diagonal gives 1 / (<1/eps> / 2 + 1 / (2 <eps>)), the tensor diagonal
  // 1 / (2 <1/eps>) + <eps> / 2, with the supersampled fill fraction f of each box.
  class Oblique final : public SubpixelGeometry {
   public:
    int material_at(const std::array<double, 3>& p) const override { return p[0] + p[1] < 5.05e-3 ? 1 : 0; }
    bool uniform_in(const std::array<double, 3>&, const std::array<double, 3>&, int&) const override { return false; }
    bool normal_at(const std::array<double, 3>&, std::array<double, 3>& n) const override {
      n = {std::sqrt(0.5), std::sqrt(0.5), 0};
      return true;
    }
  };
  const YeeGrid g{6, 6, 2, 1e-3, 1e-3, 1e-3};
  const std::vector<Material> mats = {Material::vacuum(), Material::isotropic("a", 4.0)};
  SubpixelOptions o;
  const PerCellMedium inv = subpixel_smoothed_medium(g, mats, Oblique(), o);
  o.diagonal = SubpixelDiagonal::tensor;
  const PerCellMedium ten = subpixel_smoothed_medium(g, mats, Oblique(), o);
  int mixed = 0;
  for (std::size_t q = 0; q < inv.eps_r[0].size(); ++q) {
    const double a = inv.eps_r[0][q], b = ten.eps_r[0][q];
    if (a > 1.0001 && a < 3.9999) {
      ++mixed;
      EXPECT_LT(a, b);  // 1 / (x/2 + 1/(2y)) <= (1/x + y) / 2 (harmonic <= arithmetic mean)
    } else {
      EXPECT_FLOAT_EQ(a, b);
    }
  }
  EXPECT_GT(mixed, 4);
}

TEST(SubpixelSmoothing, ConductivityComplexAtAFrequencyOrVolumeMeanWithout) {
  const double h = 1e-3, f = 1e9, sig = 0.5;
  const YeeGrid g{6, 4, 4, h, h, h};
  const std::vector<Material> mats = {Material::vacuum(), Material::isotropic("lossy", 4.0, sig)};
  SubpixelOptions o;
  o.samples = 10;
  const PerCellMedium plain = subpixel_smoothed_medium(g, mats, PlaneX(2.3 * h, true), o);
  EXPECT_NEAR(plain.sigma_e[0][cell(g, 2, 1, 1)], 0.3 * sig, 1e-6);  // volume mean, every axis
  EXPECT_NEAR(plain.sigma_e[1][cell(g, 2, 1, 1)], 0.8 * sig, 1e-6);
  EXPECT_NEAR(plain.eps_r[0][cell(g, 2, 1, 1)], 1.0 / (0.3 / 4.0 + 0.7), 1e-5);
  o.frequency = f;
  const PerCellMedium cx = subpixel_smoothed_medium(g, mats, PlaneX(2.3 * h, true), o);
  const double w = 2 * kPi * f;
  const std::complex<double> ein(4.0, -sig / (w * kEps0)), eout(1.0, 0.0);
  const std::complex<double> enorm = 1.0 / (0.3 / ein + 0.7 / eout), etan = 0.8 * ein + 0.2 * eout;
  EXPECT_NEAR(cx.eps_r[0][cell(g, 2, 1, 1)], enorm.real(), 1e-5);
  EXPECT_NEAR(cx.sigma_e[0][cell(g, 2, 1, 1)], -enorm.imag() * w * kEps0, 1e-6);
  EXPECT_NEAR(cx.eps_r[1][cell(g, 2, 1, 1)], etan.real(), 1e-5);
  EXPECT_NEAR(cx.sigma_e[1][cell(g, 2, 1, 1)], 0.8 * sig, 1e-6);  // tangential: the volume mean again
  EXPECT_LT(cx.sigma_e[0][cell(g, 2, 1, 1)], plain.sigma_e[0][cell(g, 2, 1, 1)]);
}

TEST(SubpixelSmoothing, LabelPlaneOnVoxelFacesIsReproducedExactly) {
  // Labels: voxels i < 3 are material 1. Trilinear indicator: the 0.5 level set is the voxel face.
  const VoxelPlacement pl = place_voxels({8, 6, 6}, {1e-3, 1e-3, 1e-3}, {0, 0, 0}, {2, 2, 2, 2, 2, 2}, {0, 0, 0, 0, 0, 0});
  std::vector<std::uint16_t> m(std::size_t(pl.voxel_count()), 0);
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 3; ++i) m[std::size_t(i + 8 * (j + 6 * k))] = 1;
  const std::vector<Material> mats = {Material::vacuum(), Material::isotropic("a", 4.0)};
  SubpixelStats st;
  const PerCellMedium md = subpixel_label_medium(pl, m, mats, SubpixelOptions{}, &st);
  const YeeGrid g = pl.grid();
  // Inside the label block, away from its y/z ends (voxels j, k in 1..4; computational + 2).
  const int face = 2 + 3;  // computational x index of the face
  for (int k = 3; k <= 6; ++k)
    for (int j = 3; j <= 6; ++j) {
      EXPECT_FLOAT_EQ(md.eps_r[0][cell(g, face - 1, j, k)], 4.0f);  // Ex boxes end on the face
      EXPECT_FLOAT_EQ(md.eps_r[0][cell(g, face, j, k)], 1.0f);
      EXPECT_NEAR(md.eps_r[1][cell(g, face, j, k)], 2.5, 1e-6);  // tangential, half and half
      EXPECT_NEAR(md.eps_r[2][cell(g, face, j, k)], 2.5, 1e-6);
    }
  EXPECT_GT(st.moment_normals, 0);
}

TEST(SubpixelSmoothing, SphereSamplesLieBetweenTheMaterialsAndKeepThePolarizability) {
  const double h = 1e-3, a = 5.3e-3;
  const YeeGrid g{16, 16, 16, h, h, h};
  const std::vector<Material> mats = {Material::vacuum(), Material::isotropic("s", 4.0)};
  SubpixelStats st;
  const PerCellMedium md = subpixel_smoothed_medium(g, mats, SphereGeometry({8 * h, 8 * h, 8 * h}, a, 1, 0), {}, &st);
  EXPECT_EQ(st.analytic_normals, st.interface_samples);
  EXPECT_GT(st.interface_samples, 3 * 200);
  // sum over Ex samples of (eps - 1): between the staircase extremes, and near the exact sphere
  // volume times 3, weighted by the normal/tangential mix: at least the harmonic and at most the
  // arithmetic value of the exact volume.
  double excess = 0;
  for (float v : md.eps_r[0]) {
    EXPECT_GE(v, 1.0f);
    EXPECT_LE(v, 4.0f);
    excess += v - 1.0;
  }
  const double vol = 4.0 / 3 * kPi * a * a * a / (h * h * h);
  EXPECT_LT(excess, 3.0 * vol * 1.01);  // arithmetic mean everywhere would give exactly 3 vol
  EXPECT_GT(excess, 3.0 * vol * 0.6);
}

TEST(SubpixelSmoothing, FdtdAndFdfdVoxelDomainsShareOneImplementation) {
  // A voxel sphere (label 7) in both voxel domains: the same E-sample permittivities.
  const std::array<int, 3> nv{10, 10, 10};
  const std::array<double, 3> sp{2e-3, 2e-3, 2e-3}, org{-0.01, -0.01, -0.01};
  std::vector<std::uint16_t> labels(1000, 0);
  for (int k = 0; k < 10; ++k)
    for (int j = 0; j < 10; ++j)
      for (int i = 0; i < 10; ++i) {
        const double x = (i - 4.5), y = (j - 4.5), z = (k - 4.5);
        if (x * x + y * y + z * z < 3.2 * 3.2) labels[std::size_t(i + 10 * (j + 10 * k))] = 7;
      }
  LabelProperties props;
  props.labels = {7};
  props.names = {"muscle"};
  props.density = {1000};
  DielectricProperties dp;
  dp.eps_r = 55;
  dp.sigma = 0.9;
  props.dielectric = {dp};
  VoxelDomainOptions vo;
  vo.air_padding = 3;
  vo.cpml_thickness = 4;
  vo.subpixel_smoothing = true;
  vo.subpixel.frequency = 900e6;
  const VoxelDomain vd = make_voxel_domain(nv, sp, org, vo);
  FdtdSetup s;
  vd.set_label_materials(s, labels, props);
  ASSERT_EQ(s.material_mode, MaterialMode::coefficient_array);
  FdfdVoxelOptions fo;
  fo.frequency = 900e6;
  fo.air_padding = 3;
  fo.pml_thickness = 4;
  fo.subpixel_smoothing = true;
  const FdfdVoxelDomain fd = make_fdfd_voxel_domain(nv, sp, org, fo);
  FdfdProblem p = fd.problem();
  fd.set_label_materials(p, labels, props);
  ASSERT_EQ(p.material_mode, MaterialMode::coefficient_array);
  ASSERT_EQ(p.medium.eps_r.size(), 3u);
  int mixed = 0;
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(s.medium.eps_r[c], p.medium.eps_r[c]);
    EXPECT_EQ(s.medium.sigma_e[c], p.medium.sigma_e[c]);
    for (float v : s.medium.eps_r[c]) mixed += v > 1.0f && v < 55.0f;
  }
  EXPECT_GT(mixed, 100);
  // The FDTD operator accepts it (coefficient arrays, per sample).
  s.boundaries = vd.boundaries();
  s.dt = vd.dt;
  EXPECT_NO_THROW(FdtdOperator op(s));
  // Off: the staircase, indexed.
  vo.subpixel_smoothing = false;
  FdtdSetup s2;
  make_voxel_domain(nv, sp, org, vo).set_label_materials(s2, labels, props);
  EXPECT_EQ(s2.material_mode, MaterialMode::indexed);
  EXPECT_EQ(s2.materials.size(), 2u);
}

TEST(SubpixelSmoothing, OptionsAreValidatedWithReadableMessages) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  VoxelDomainOptions vo;
  vo.subpixel_smoothing = true;
  vo.subpixel.samples = 1;
  EXPECT_NE(message([&] { vo.validate(); }).find("VoxelDomainOptions::subpixel (SubpixelSmoothing)::samples = 1"),
            std::string::npos)
      << message([&] { vo.validate(); });
  vo.subpixel.samples = 8;
  vo.subpixel.frequency = -1;  // message: frequency = -1 Hz
  EXPECT_NE(message([&] { vo.validate(); }).find("frequency = -1"), std::string::npos);
  vo.subpixel_smoothing = false;  // ignored while off
  EXPECT_EQ(message([&] { vo.validate(); }), "no error");
  FdfdVoxelOptions fo;
  fo.subpixel_smoothing = true;
  fo.subpixel.samples = 100;
  EXPECT_NE(message([&] { fo.validate(); }).find("FdfdVoxelOptions::subpixel (SubpixelSmoothing)::samples = 100"),
            std::string::npos);
  // A geometry giving an index outside the table.
  const YeeGrid g{4, 4, 4, 1e-3, 1e-3, 1e-3};
  EXPECT_NE(message([&] {
              subpixel_smoothed_medium(g, {Material::vacuum()}, SphereGeometry({2e-3, 2e-3, 2e-3}, 1.3e-3, 3, 0), {});
            }).find("material index 3 outside the table of 1"),
            std::string::npos);
  EXPECT_NE(message([] { SphereGeometry({0, 0, 0}, -1, 1); }).find("radius -1"), std::string::npos);
}

TEST(SubpixelSmoothing, PropertyArraysGiveTheLabelResultAndDistinctValuesAreMaterials) {
  // The same sphere as labels (indexed) and as per-cell arrays (the ParaView "Property arrays"
  // mode): VoxelDomain::smooth_materials gives the same smoothed medium both ways.
  const std::array<int, 3> nv{8, 8, 8};
  const std::array<double, 3> sp{2e-3, 2e-3, 2e-3}, org{0, 0, 0};
  VoxelDomainOptions vo;
  vo.air_padding = 2;
  vo.cpml_thickness = 2;
  vo.subpixel_smoothing = true;
  const VoxelDomain vd = make_voxel_domain(nv, sp, org, vo);
  FdtdSetup labels, arrays;
  labels.grid = arrays.grid = vd.grid();
  labels.materials = {Material::vacuum(), Material::isotropic("a", 4.0, 0.5), Material::isotropic("b", 9.0, 0.25)};
  labels.material_index.assign(std::size_t(vd.total_cells()), 0);
  arrays.material_mode = MaterialMode::coefficient_array;
  arrays.medium.eps_r.assign(1, std::vector<float>(std::size_t(vd.total_cells()), 1.0f));
  arrays.medium.sigma_e.assign(1, std::vector<float>(std::size_t(vd.total_cells()), 0.0f));
  for (std::int64_t v = 0; v < vd.voxel_count(); ++v) {
    const int i = int(v % 8), j = int((v / 8) % 8), k = int(v / 64);
    const double r2 = (i - 3.5) * (i - 3.5) + (j - 3.5) * (j - 3.5) + (k - 3.5) * (k - 3.5);
    const std::uint16_t m = r2 < 2.5 * 2.5 ? 2 : (r2 < 3.6 * 3.6 ? 1 : 0);
    const std::size_t t = std::size_t(vd.total_index(v));
    labels.material_index[t] = m;
    arrays.medium.eps_r[0][t] = float(labels.materials[m].eps_r[0]);
    arrays.medium.sigma_e[0][t] = float(labels.materials[m].sigma_e[0]);
  }
  vd.smooth_materials(labels);
  vd.smooth_materials(arrays);
  ASSERT_EQ(labels.material_mode, MaterialMode::coefficient_array);
  ASSERT_EQ(arrays.material_mode, MaterialMode::coefficient_array);
  EXPECT_TRUE(labels.material_index.empty());
  EXPECT_FALSE(arrays.medium.average_at_edges);
  int between = 0;
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(labels.medium.eps_r[c], arrays.medium.eps_r[c]);
    EXPECT_EQ(labels.medium.sigma_e[c], arrays.medium.sigma_e[c]);
    for (float e : arrays.medium.eps_r[c]) between += e > 4.0f && e < 9.0f;  // the inner interface
  }
  EXPECT_GT(between, 50);
}

TEST(SubpixelSmoothing, PeriodicFacesWrapTheVoxelsInsteadOfMeetingVacuum) {
  // A homogeneous dielectric filling a box periodic on every face has no interface: every sample
  // keeps eps 4. A slab along z (periodic in x and y, CPML in z) keeps the exact planar answer at
  // the periodic faces too: tangential samples on the slab's faces get the arithmetic mean.
  const std::array<int, 3> nv{6, 5, 8};
  const std::array<double, 3> sp{1e-3, 1e-3, 1e-3}, org{0, 0, 0};
  VoxelDomainOptions vo;
  vo.subpixel_smoothing = true;
  vo.air_padding = 2;
  vo.cpml_thickness = 3;
  vo.boundaries.fill(BoundaryType::periodic);
  LabelProperties props;
  props.labels = {1};
  props.names = {"d"};
  props.density = {1000};
  DielectricProperties dp;
  dp.eps_r = 4;
  dp.sigma = 0.5;
  props.dielectric = {dp};
  {
    const VoxelDomain vd = make_voxel_domain(nv, sp, org, vo);
    FdtdSetup s;
    vd.set_label_materials(s, std::vector<std::uint16_t>(std::size_t(vd.voxel_count()), 1), props);
    for (int c = 0; c < 3; ++c)
      for (std::size_t q = 0; q < s.medium.eps_r[c].size(); ++q) {
        ASSERT_EQ(s.medium.eps_r[c][q], 4.0f) << "component " << c << " cell " << q;
        ASSERT_EQ(s.medium.sigma_e[c][q], 0.5f) << "component " << c << " cell " << q;
      }
  }
  vo.boundaries[4] = vo.boundaries[5] = BoundaryType::cpml;
  const VoxelDomain vd = make_voxel_domain(nv, sp, org, vo);
  std::vector<std::uint16_t> labels(std::size_t(vd.voxel_count()), 0);
  for (std::int64_t v = 0; v < vd.voxel_count(); ++v)
    if (v / 30 >= 3) labels[std::size_t(v)] = 1;  // voxel layers k >= 3 (z from 3 mm)
  FdtdSetup s;
  vd.set_label_materials(s, labels, props);
  const YeeGrid g = vd.grid();
  const int kface = vd.lo_total[2] + 3;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      EXPECT_NEAR(s.medium.eps_r[0][cell(g, i, j, kface)], 2.5, 1e-6) << i << " " << j;  // Ex, tangential
      EXPECT_NEAR(s.medium.eps_r[1][cell(g, i, j, kface)], 2.5, 1e-6) << i << " " << j;  // Ey
      EXPECT_EQ(s.medium.eps_r[2][cell(g, i, j, kface)], 4.0f) << i << " " << j;  // Ez box inside the slab
      EXPECT_EQ(s.medium.eps_r[2][cell(g, i, j, kface - 1)], 1.0f) << i << " " << j;
      EXPECT_EQ(s.medium.eps_r[0][cell(g, i, j, kface + 1)], 4.0f) << i << " " << j;
    }
}
