// Proof item 6: bad input is refused with a message that says what is wrong (error.h). Each case
// builds the operator and the engine of the backend under test and checks the vem::Error text.
// The CUDA-only case asks for a grid that needs more GPU memory than the device has free.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#ifdef VEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "test_support.h"
#include "threads_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

namespace {

// A small valid problem every case starts from.
FdtdSetup valid_setup() {
  FdtdSetup s;
  s.grid = {12, 10, 8, 1.0e-3, 1.3e-3, 0.8e-3};
  s.boundaries = BoundarySpec::all(BoundaryType::pec);
  s.materials = {Material::vacuum(), Material::isotropic("muscle", 55.0, 0.9)};
  PointSource src;
  src.i = 5; src.j = 4; src.k = 3;
  src.waveform = Waveform::gaussian_for_bandwidth(50e9);
  s.sources = {src};
  s.probes = {{"ez", Component::Ez, 3, 3, 3}};
  return s;
}

// Builds operator and engine; returns the vem::Error message, or "" when nothing was thrown.
std::string error_of(const FdtdSetup& s, Backend b) {
  const vem_test::ThreadsForGrid threads(960);  // small grids: one CPU thread (threads_util.h)
  try {
    FdtdOperator op(s);
    auto eng = make_engine(op, b);
    eng->run(1);
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a vem::Error> ") + e.what();
  }
  return "";
}

// Every piece must occur in the message (and it must be a vem::Error).
#define EXPECT_ERROR_WITH(setup, ...)                                                   \
  do {                                                                                  \
    const std::string msg_ = error_of((setup), GetParam());                             \
    EXPECT_FALSE(msg_.empty()) << "no error thrown";                                    \
    EXPECT_EQ(msg_.find("<not a vem::Error>"), std::string::npos) << msg_;              \
    for (const std::string& piece_ : std::vector<std::string>{__VA_ARGS__})             \
      EXPECT_NE(msg_.find(piece_), std::string::npos)                                   \
          << "message lacks '" << piece_ << "': " << msg_;                              \
  } while (0)

}  // namespace

class FdtdBadInput : public testing::TestWithParam<Backend> {};

TEST_P(FdtdBadInput, ValidSetupIsAccepted) {  // the baseline the other cases perturb
  VEM_REQUIRE_BACKEND(GetParam());
  EXPECT_EQ(error_of(valid_setup(), GetParam()), "");
}

TEST_P(FdtdBadInput, ZeroOrNegativeGridSize) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.grid.nx = 0;
  EXPECT_ERROR_WITH(s, "grid size nx = 0", "positive");
  s = valid_setup();
  s.grid.ny = -3;
  EXPECT_ERROR_WITH(s, "grid size ny = -3", "positive");
  s = valid_setup();
  s.grid.nz = -1;
  EXPECT_ERROR_WITH(s, "nz = -1");
}

TEST_P(FdtdBadInput, NonFiniteOrNonPositiveSpacing) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.grid.dy = std::numeric_limits<double>::quiet_NaN();
  EXPECT_ERROR_WITH(s, "grid spacing dy", "finite");
  s = valid_setup();
  s.grid.dz = std::numeric_limits<double>::infinity();
  EXPECT_ERROR_WITH(s, "grid spacing dz", "finite");
  s = valid_setup();
  s.grid.dx = 0.0;
  EXPECT_ERROR_WITH(s, "grid spacing dx = 0", "positive");
  s = valid_setup();
  s.grid.dx = -1e-3;
  EXPECT_ERROR_WITH(s, "grid spacing dx = -0.001");
}

TEST_P(FdtdBadInput, NonPositivePermittivityNamesMaterial) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.materials[1].eps_r[1] = 0.0;
  EXPECT_ERROR_WITH(s, "material 1", "'muscle'", "eps_r y = 0");
  s = valid_setup();
  s.materials[1].eps_r = {-2.0, -2.0, -2.0};
  EXPECT_ERROR_WITH(s, "'muscle'", "eps_r x = -2");
}

TEST_P(FdtdBadInput, NonPositivePermeabilityNamesMaterial) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.materials[1].mu_r[2] = -1.0;
  EXPECT_ERROR_WITH(s, "'muscle'", "mu_r z = -1");
  s = valid_setup();
  s.materials[0].mu_r[0] = 0.0;
  EXPECT_ERROR_WITH(s, "material 0", "'vacuum'", "mu_r x = 0");
}

TEST_P(FdtdBadInput, NegativeOrNonFiniteConductivityNamesMaterial) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.materials[1].sigma_e[0] = -0.5;
  EXPECT_ERROR_WITH(s, "'muscle'", "sigma_e x = -0.5");
  s = valid_setup();
  s.materials[1].sigma_e[2] = std::numeric_limits<double>::infinity();
  EXPECT_ERROR_WITH(s, "'muscle'", "sigma_e z = inf");
  s = valid_setup();
  s.materials[1].sigma_m[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_ERROR_WITH(s, "'muscle'", "sigma_m y");
  s = valid_setup();
  s.materials[1].sigma_m[1] = -3.0;
  EXPECT_ERROR_WITH(s, "'muscle'", "sigma_m y = -3");
}

TEST_P(FdtdBadInput, BadPerCellMediumNamesArrayAndCell) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.material_mode = MaterialMode::coefficient_array;
  const std::size_t n = std::size_t(s.grid.cell_count());
  s.medium.eps_r = {std::vector<float>(n, 2.0f)};
  s.medium.sigma_e = {std::vector<float>(n, 0.1f)};
  EXPECT_EQ(error_of(s, GetParam()), "");
  s.medium.sigma_e[0][3 + 12 * (2 + 10 * 1)] = -1.0f;  // cell (3, 2, 1)
  EXPECT_ERROR_WITH(s, "'sigma_e'", "cell (3, 2, 1)", ">= 0");
  s.medium.sigma_e[0][3 + 12 * (2 + 10 * 1)] = 0.1f;
  s.medium.eps_r[0][0] = 0.0f;
  EXPECT_ERROR_WITH(s, "'eps_r'", "cell (0, 0, 0)", "> 0");
}

TEST_P(FdtdBadInput, MaterialIndexOutsideTable) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.material_index.assign(std::size_t(s.grid.cell_count()), 1);
  EXPECT_EQ(error_of(s, GetParam()), "");
  s.material_index[7 + 12 * (4 + 10 * 6)] = 2;  // cell (7, 4, 6); the table has 2 entries
  EXPECT_ERROR_WITH(s, "material index 2", "cell (7, 4, 6)", "outside the material table (2 entries)");
  s = valid_setup();
  s.material_index.assign(5, 0);
  EXPECT_ERROR_WITH(s, "5 entries", "960 cells");
}

TEST_P(FdtdBadInput, SourceOrProbeOutsideGrid) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.sources[0].i = 13;  // sample indices go to nx = 12
  EXPECT_ERROR_WITH(s, "source 0", "(13, 4, 3)", "outside the grid");
  s = valid_setup();
  s.sources[0].k = -1;
  EXPECT_ERROR_WITH(s, "source 0", "outside the grid");
  s = valid_setup();
  s.probes[0].j = 11;
  EXPECT_ERROR_WITH(s, "probe 0", "'ez'", "outside the grid");
  // On the PEC face the source's Ez sample is never updated: refused rather than silently inert.
  s = valid_setup();
  s.sources[0].i = 0;
  EXPECT_ERROR_WITH(s, "source 0", "drives no updated field sample");
}

TEST_P(FdtdBadInput, PmlThickerThanDomain) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.boundaries = BoundarySpec::all(BoundaryType::cpml, 5);  // 2 x 5 = 10 cells along y: all PML
  s.sources[0].j = 5;
  EXPECT_ERROR_WITH(s, "CPML is thicker than the domain along y", "10 PML cells for 10 cells");
  s = valid_setup();
  s.boundaries.face[5] = BoundaryType::cpml;  // one face, 9 cells for nz = 8
  s.boundaries.cpml[5].thickness = 9;
  EXPECT_ERROR_WITH(s, "along z", "9 PML cells for 8 cells");
  s = valid_setup();
  s.boundaries.face[0] = BoundaryType::cpml;
  s.boundaries.cpml[0].kappa_max = 0.5;
  EXPECT_ERROR_WITH(s, "CPML on x-low", "kappa_max >= 1");
}

TEST_P(FdtdBadInput, TimeStepAboveCourantLimitReportsLimit) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  const double limit = s.grid.courant_limit_dt();
  s.dt = 1.001 * limit;
  const std::string msg = error_of(s, GetParam());
  ASSERT_NE(msg.find("exceeds the Courant limit"), std::string::npos) << msg;
  // The number after "Courant limit" is the limit, to the 6 digits the message prints.
  const std::size_t at = msg.find("Courant limit") + std::string("Courant limit").size();
  const double reported = std::strtod(msg.c_str() + at, nullptr);
  EXPECT_NEAR(reported / limit, 1.0, 1e-5) << msg;
  s.dt = limit;  // exactly at the limit is allowed
  EXPECT_EQ(error_of(s, GetParam()), "");
  s.dt = 0;
  s.courant_factor = 1.5;
  EXPECT_ERROR_WITH(s, "Courant factor 1.5", "(0, 1]");
}

TEST_P(FdtdBadInput, PeriodicOnOneFaceOnly) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.boundaries.face[5] = BoundaryType::periodic;
  EXPECT_ERROR_WITH(s, "periodic boundary on z-high needs z-low to be periodic too");
  s = valid_setup();
  s.boundaries.face[0] = BoundaryType::periodic;
  EXPECT_ERROR_WITH(s, "periodic boundary on x-low needs x-high to be periodic too");
}

TEST_P(FdtdBadInput, BadSourceParameters) {
  VEM_REQUIRE_BACKEND(GetParam());
  FdtdSetup s = valid_setup();
  s.sources[0].direction = {0, 0, 0};
  EXPECT_ERROR_WITH(s, "source 0", "direction", "non-zero");
  s = valid_setup();
  s.sources[0].waveform.tau = -1e-12;
  EXPECT_ERROR_WITH(s, "tau", "> 0");
  s = valid_setup();
  s.sources[0].amplitude = std::numeric_limits<double>::quiet_NaN();
  EXPECT_ERROR_WITH(s, "source 0", "amplitude is not finite");
}

VEM_INSTANTIATE_BACKENDS(FdtdBadInput);

// CUDA only: a grid that needs more GPU memory than the
// device has free must be refused up front with the byte counts in the message.
TEST(FdtdBadInputCuda, GridLargerThanGpuMemoryIsRefusedWithByteCount) {
  VEM_REQUIRE_BACKEND(Backend::cuda);
#ifdef VEM_WITH_CUDA
  std::size_t free_b = 0, total_b = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  // Candidates, smallest first: 1200^3 with PEC faces (~46 GB), then the largest box the layout
  // allows (2039 x 1022 x 1021, pitch 2048) with CPML filling every axis (~158 GB). The host
  // side of each is ~4 GB (the 16-bit index array).
  struct Candidate { int nx, ny, nz, tx, ty, tz; };
  const Candidate cands[] = {{1200, 1200, 1200, 0, 0, 0}, {2039, 1022, 1021, 1018, 510, 510}};
  bool tried = false;
  for (const Candidate& c : cands) {
    FdtdSetup s;
    s.grid = {c.nx, c.ny, c.nz, 1e-3, 1e-3, 1e-3};
    s.materials = {Material::vacuum()};
    if (c.tx == 0) {
      s.boundaries = BoundarySpec::all(BoundaryType::pec);
    } else {
      s.boundaries = BoundarySpec::all(BoundaryType::cpml);
      const int t[3] = {c.tx, c.ty, c.tz};
      for (int f = 0; f < 6; ++f) s.boundaries.cpml[f].thickness = t[f / 2];
    }
    FdtdOperator op(s);
    if (op.device_bytes() <= std::int64_t(free_b)) continue;
    tried = true;
    std::cout << "  " << c.nx << " x " << c.ny << " x " << c.nz << " needs " << op.device_bytes()
              << " bytes; " << free_b << " free\n";
    try {
      auto eng = make_engine(op, Backend::cuda);
      ADD_FAILURE() << "a grid needing " << op.device_bytes() << " bytes was accepted with "
                    << free_b << " bytes free";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("bytes"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::to_string(op.device_bytes())), std::string::npos)
          << "message lacks the byte count needed: " << msg;
      EXPECT_NE(msg.find("bytes free"), std::string::npos) << "message lacks the free bytes: " << msg;
    }
    break;
  }
  // Nothing is left behind: a grid that fits runs next, on the same device, and the free memory
  // is back to what it was.
  if (tried) {
    FdtdSetup s;
    s.grid = {48, 40, 32, 1e-3, 1e-3, 1e-3};
    s.materials = {Material::vacuum()};
    s.boundaries = BoundarySpec::all(BoundaryType::cpml, 6);
    PointSource src;
    src.i = 24; src.j = 20; src.k = 16;
    src.waveform = Waveform::gaussian_for_bandwidth(10e9);
    s.sources = {src};
    Probe pr;
    pr.component = Component::Ez; pr.i = 30; pr.j = 20; pr.k = 16;
    s.probes = {pr};
    FdtdOperator op(s);
    auto eng = make_engine(op, Backend::cuda);
    EXPECT_EQ(eng->run(60), 60);
    const ProbeRecord rec = eng->probes();
    ASSERT_EQ(rec.values.size(), 1u);
    float peak = 0;
    for (float v : rec.values[0]) peak = std::max(peak, std::fabs(v));
    EXPECT_GT(peak, 0.0f) << "the run after the refused one produced no field";
    eng.reset();
    std::size_t free_after = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_after, &total_b), cudaSuccess);
    EXPECT_GE(double(free_after), 0.99 * double(free_b))
        << "free device memory " << free_after << " bytes after the runs, " << free_b << " before";
  }
  if (!tried)
    GTEST_SKIP() << "the device has " << free_b
                 << " bytes free, more than the candidate grids need";
#endif
}
