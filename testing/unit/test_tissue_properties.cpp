// Cole-Cole model (Gabriel et al. 1996) and tissue CSV tables: published values at 900 MHz,
// CSV override / extension, and errors that name the row and label.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "vem/core/error.h"
#include "vem/models/head_phantom.h"
#include "vem/models/tissue_properties.h"

using namespace vem;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Reference values: the IT'IS / IFAC-CNR evaluations of the same parametric models at 900 MHz
// (relative permittivity, conductivity in S/m).
TEST(TissueColeCole, PublishedValuesAt900MHz) {
  struct Ref {
    const char* model;
    double eps_r, sigma;
  };
  const Ref refs[] = {
      {"muscle", 55.03, 0.943},          {"brain_grey_matter", 52.73, 0.942},
      {"brain_white_matter", 38.89, 0.591}, {"cerebellum", 49.44, 1.263},
      {"cerebro_spinal_fluid", 68.64, 2.413}, {"fat_not_infiltrated", 5.46, 0.051},
      {"bone_cortical", 12.45, 0.143},   {"bone_cancellous", 20.79, 0.340},
      {"skin_dry", 41.41, 0.867},        {"vitreous_humour", 68.90, 1.636},
      {"tongue", 55.27, 0.936},          {"blood", 61.36, 1.538},
      {"lens_cortex", 46.57, 0.793},     {"skin_wet", 46.08, 0.845},
  };
  for (const Ref& r : refs) {
    const DielectricProperties p = cole_cole_properties(gabriel_model(r.model), 900e6);
    EXPECT_NEAR(p.eps_r, r.eps_r, 0.01 * r.eps_r) << r.model;
    EXPECT_NEAR(p.sigma, r.sigma, 0.01 * r.sigma + 1e-3) << r.model;
  }
}

TEST(TissueColeCole, LowFrequencyLimitIsIonicPlusDispersions) {
  // Far below every dispersion the conductivity tends to sigma_ionic for CSF (no low poles).
  const DielectricProperties p = cole_cole_properties(gabriel_model("cerebro_spinal_fluid"), 10.0);
  EXPECT_NEAR(p.sigma, 2.0, 1e-3);
  // Far above: eps -> eps_inf.
  const DielectricProperties q = cole_cole_properties(gabriel_model("muscle"), 1e14);
  EXPECT_NEAR(q.eps_r, 4.0, 0.1);
}

TEST(TissueColeCole, UnknownModelAndBadFrequency) {
  EXPECT_NE(error_of([] { gabriel_model("brain"); }).find("brain_grey_matter"), std::string::npos);
  EXPECT_NE(error_of([] { cole_cole_properties(gabriel_model("muscle"), -1.0); }).find("frequency"),
            std::string::npos);
}

TEST(TissueTable, HeadPhantomTableCoversEveryLabel) {
  const TissueTable t = head_phantom_tissue_table();
  std::vector<std::int64_t> labels;
  for (int l = 0; l < kHeadTissueCount; ++l) labels.push_back(l);
  const LabelProperties p = t.lookup(labels, 900e6);
  ASSERT_EQ(p.labels.size(), labels.size());
  EXPECT_EQ(p.names[kMuscle], "muscle");
  EXPECT_NEAR(p.dielectric[kMuscle].eps_r, 55.03, 0.1);
  EXPECT_NEAR(p.dielectric[kGreyMatter].sigma, 0.942, 0.01);
  EXPECT_DOUBLE_EQ(p.dielectric[kAir].eps_r, 1.0);
  EXPECT_DOUBLE_EQ(p.density[kSkull], 1908.0);
  for (double d : p.density) EXPECT_GT(d, 0.0);
}

TEST(TissueTable, CsvOverridesAndExtends) {
  TissueTable t = head_phantom_tissue_table();
  const std::string csv =
      "# my tissues\n"
      "label,name,model,p1,p2,p3\n"
      "3, muscle_fixed, fixed, 50.0, 1.0, 1050\n"
      "20; implant; fixed; 3.0; 0.0; 1200\n"
      "21, blood, gabriel, blood, 1050\n"
      "22, custom, colecole, 4.0,50,7.234,0.1,7000,353.678,0.1,0.2,1.2e6,318.310,0.1,2.5e7,2.274,0.0, 1090\n"
      "\n";
  EXPECT_EQ(t.merge_csv(csv, "test.csv"), 4);
  const LabelProperties p = t.lookup({3, 20, 21, 22}, 900e6);
  EXPECT_DOUBLE_EQ(p.dielectric[0].eps_r, 50.0);
  EXPECT_EQ(p.names[0], "muscle_fixed");
  EXPECT_DOUBLE_EQ(p.density[1], 1200.0);
  EXPECT_NEAR(p.dielectric[2].eps_r, 61.36, 0.5);
  EXPECT_NEAR(p.dielectric[3].eps_r, 55.03, 0.1);  // the muscle row typed in by hand
  EXPECT_NEAR(p.dielectric[3].sigma, 0.943, 0.01);
}

TEST(TissueTable, ErrorsNameRowAndLabel) {
  TissueTable t = head_phantom_tissue_table();
  std::string e = error_of([&] { t.merge_csv("3, muscle, fixed, 50, -1, 1000\n", "a.csv"); });
  EXPECT_NE(e.find("a.csv line 1"), std::string::npos) << e;
  EXPECT_NE(e.find("label 3"), std::string::npos) << e;
  EXPECT_NE(e.find("conductivity"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("# c\n5, x, fixed, 0.5, 0, 1000\n", "b.csv"); });
  EXPECT_NE(e.find("b.csv line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("permittivity"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("30, x, fixed, 50, 1\n", "c.csv"); });
  EXPECT_NE(e.find("expects 6 fields"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("30, x, fixed, 50, abc, 1000\n", "d.csv"); });
  EXPECT_NE(e.find("'abc' is not a number"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("30, x, fixed, 50, 1, 0\n", "e.csv"); });
  EXPECT_NE(e.find("density"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("30, x, debye, 50, 1, 1000\n", "f.csv"); });
  EXPECT_NE(e.find("unknown model 'debye'"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("30, x, fixed, 50, 1, 1000\n30, y, fixed, 40, 1, 1000\n", "g.csv"); });
  EXPECT_NE(e.find("g.csv line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("already defined on line 1"), std::string::npos) << e;

  e = error_of([&] {
    t.merge_csv("9, x, colecole, 4,50,7.2,0.1,7000,353,1.5,0.2,1e6,318,0.1,2e7,2.2,0, 1000\n", "h.csv");
  });
  EXPECT_NE(e.find("alf2"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("9, x, fixed, nan, 0, 1000\n", "i.csv"); });
  EXPECT_NE(e.find("i.csv line 1 (label 9, 'x')"), std::string::npos) << e;

  e = error_of([&] { t.merge_csv("x, y, z\n# only a header\n", "j.csv"); });
  EXPECT_NE(e.find("no tissue rows"), std::string::npos) << e;

  // Nothing of a failed file is applied.
  EXPECT_EQ(t.find(30), nullptr);
}

TEST(TissueTable, UnknownLabelsAreListed) {
  const TissueTable t = head_phantom_tissue_table();
  const std::vector<std::int64_t> counts = {10, 5, 7};
  const std::string e = error_of([&] { t.lookup({1, 42, 99}, 900e6, &counts); });
  EXPECT_NE(e.find("42 (5 voxels)"), std::string::npos) << e;
  EXPECT_NE(e.find("99 (7 voxels)"), std::string::npos) << e;
  EXPECT_NE(e.find("3 muscle"), std::string::npos) << e;
}
