// run_fdtd_harmonic_distributed (issue 17) against run_fdtd_harmonic in the same process: a CW
// plane wave on a heterogeneous lossy block with air pockets (SAR with 1 g / 10 g averaging, RCS
// tables, scattering cross-section) and a pulsed thin-wire dipole at two frequencies beside it
// (accepted-power normalization, gain tables, feed impedance), with fixed step counts, on
// decompositions along each axis, 2D and uneven. Tolerances: step counts, normalization, feed
// impedance, accepted power, every E phasor, |E|^2, local / 1 g / 10 g SAR array of every piece
// and every SAR scalar: bit for bit; far-field tables, scattering cross-section and radiated
// power: 1e-9 relative (reduced surface sums; measured ~1e-15); all scalars equal on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "mpi_test_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_extensions.h"
#include "vem/fdtd/distributed/distributed_harmonic.h"

using namespace vem;
using vem_mpi_test::bit_mismatches;
using vem_mpi_test::world_rank;
using vem_mpi_test::world_size;

namespace {

using cf = std::complex<float>;

constexpr int kNx = 30, kNy = 28, kNz = 30, kCpml = 3;
constexpr double kD = 3e-3;

FdtdSetup global_setup() {
  FdtdSetup s;
  s.grid = {kNx, kNy, kNz, kD, kD, kD};
  s.grid.origin = {-0.04, 0.01, -0.02};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml);
  for (auto& c : s.boundaries.cpml) c.thickness = kCpml;
  s.materials.push_back(Material::vacuum());
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(0, 1);
  for (int m = 1; m < 9; ++m)
    s.materials.push_back(Material::isotropic("t" + std::to_string(m), 20 + 30 * u(rng), 0.3 + 1.5 * u(rng)));
  s.material_index.assign(s.grid.cell_count(), 0);
  for (int k = 9; k < 20; ++k)
    for (int j = 9; j < 20; ++j)
      for (int i = 10; i < 21; ++i)
        s.material_index[i + kNx * (j + std::size_t(kNy) * k)] = u(rng) < 0.08 ? 0 : std::uint16_t(1 + int(8 * u(rng)) % 8);
  return s;
}

std::vector<float> density(const FdtdSetup& s) {
  std::vector<float> rho(s.material_index.size(), 1.16f);
  for (std::size_t c = 0; c < rho.size(); ++c)
    if (s.material_index[c] != 0) rho[c] = 900.0f + 25.0f * float(s.material_index[c]);
  return rho;
}

HarmonicOptions plane_wave_options(const FdtdSetup& s) {
  HarmonicOptions o;
  o.source = HarmonicSource::plane_wave;
  o.plane_wave.theta = 0.6;
  o.plane_wave.phi = 0.4;
  o.plane_wave.psi = 0.3;
  o.plane_wave.amplitude = 2.0;
  o.plane_wave.tfsf_margin = 4;
  o.ntff_margin = 2;
  o.frequencies = {2e9};
  o.periods_per_check = 1;
  o.fixed_steps = 180;  // two windows of one period (M = 5, 18 samples)
  o.density = density(s);
  o.far_field_step_deg = 10;
  o.backend = Backend::cpu;
  return o;
}

HarmonicOptions dipole_options(const FdtdSetup& s) {
  HarmonicOptions o;
  o.source = HarmonicSource::dipole;
  o.dipole.axis = 2;
  o.dipole.centre = {s.grid.origin[0] + 7.5 * kD, s.grid.origin[1] + 14 * kD, s.grid.origin[2] + 15 * kD};
  o.dipole.length = 5 * kD;
  o.dipole.accepted_power = 0.5;
  o.frequencies = {1.5e9, 2.5e9};
  o.fixed_steps = 200;
  o.density = density(s);
  o.far_field_step_deg = 15;
  o.backend = Backend::cpu;
  return o;
}

const HarmonicResult& reference(int which) {
  static const HarmonicResult pw = run_fdtd_harmonic(global_setup(), plane_wave_options(global_setup()));
  static const HarmonicResult dp = run_fdtd_harmonic(global_setup(), dipole_options(global_setup()));
  return which == 0 ? pw : dp;
}

template <class T>
std::vector<T> slice(const std::vector<T>& all, const std::array<int, 3>& n, const SampleBox& b) {
  std::vector<T> out;
  for (int k = b.lo[2]; k <= b.hi[2]; ++k)
    for (int j = b.lo[1]; j <= b.hi[1]; ++j)
      for (int i = b.lo[0]; i <= b.hi[0]; ++i) out.push_back(all[i + std::size_t(n[0]) * (j + std::size_t(n[1]) * k)]);
  return out;
}

template <class T>
std::size_t mismatches(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size()) + 1;
  std::size_t bad = 0;
  for (std::size_t q = 0; q < a.size(); ++q) bad += std::memcmp(&a[q], &b[q], sizeof(T)) != 0 && !(a[q] == b[q]);
  return bad;
}

bool same_on_all_ranks(double v) {
  double lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

void compare(const DistributedHarmonicResult& got, const HarmonicResult& want) {
  const HarmonicResult& r = got.result;
  EXPECT_EQ(r.steps, want.steps);
  EXPECT_EQ(r.dt, want.dt);
  EXPECT_EQ(r.converged, want.converged);
  EXPECT_EQ(r.aborted, false);
  EXPECT_EQ(r.dft_sample_interval, want.dft_sample_interval);
  EXPECT_EQ(r.tfsf_lo, want.tfsf_lo);
  EXPECT_EQ(r.dipole_gap, want.dipole_gap);
  EXPECT_EQ(r.warning, want.warning);
  ASSERT_EQ(r.frequencies.size(), want.frequencies.size());
  const std::array<int, 3> ns{kNx + 1, kNy + 1, kNz + 1}, nc{kNx, kNy, kNz};
  for (std::size_t fi = 0; fi < want.frequencies.size(); ++fi) {
    SCOPED_TRACE("frequency " + std::to_string(fi));
    const auto& a = r.frequencies[fi];
    const auto& b = want.frequencies[fi];
    EXPECT_EQ(a.normalization, b.normalization);
    EXPECT_EQ(a.accepted_power, b.accepted_power);
    EXPECT_EQ(a.feed_impedance, b.feed_impedance);
    EXPECT_EQ(mismatches(a.ex, slice(b.ex, ns, got.piece_samples)), 0u);
    EXPECT_EQ(mismatches(a.ey, slice(b.ey, ns, got.piece_samples)), 0u);
    EXPECT_EQ(mismatches(a.ez, slice(b.ez, ns, got.piece_samples)), 0u);
    EXPECT_EQ(mismatches(a.e_squared, slice(b.e_squared, nc, got.piece_cells)), 0u);
    ASSERT_TRUE(b.has_sar);
    ASSERT_EQ(a.has_sar, b.has_sar);
    // Sums over the tissue: each rank's part, reduced (the single-domain code sums in index order).
    EXPECT_NEAR(a.whole_body_sar, b.whole_body_sar, 1e-12 * b.whole_body_sar);
    EXPECT_NEAR(a.absorbed_power, b.absorbed_power, 1e-12 * b.absorbed_power);
    EXPECT_EQ(a.peak_local_sar, b.peak_local_sar);
    EXPECT_EQ(a.peak_local_voxel, b.peak_local_voxel);
    EXPECT_EQ(mismatches(a.local_sar, slice(b.local_sar, nc, got.piece_cells)), 0u);
    for (const auto& [x, y] : {std::pair{&a.sar_1g, &b.sar_1g}, std::pair{&a.sar_10g, &b.sar_10g}}) {
      EXPECT_EQ(x->peak, y->peak);
      EXPECT_EQ(x->peak_voxel, y->peak_voxel);
      EXPECT_EQ(x->peak_side_m, y->peak_side_m);
      EXPECT_EQ(x->valid, y->valid);
      EXPECT_EQ(x->assigned, y->assigned);
      EXPECT_EQ(x->unassigned, y->unassigned);
      EXPECT_EQ(mismatches(x->sar, slice(y->sar, nc, got.piece_cells)), 0u);
      EXPECT_EQ(mismatches(x->status, slice(y->status, nc, got.piece_cells)), 0u);
      EXPECT_EQ(mismatches(x->side_m, slice(y->side_m, nc, got.piece_cells)), 0u);
      EXPECT_TRUE(same_on_all_ranks(x->peak));
    }
    EXPECT_GT(b.sar_10g.valid, 0u);
    ASSERT_EQ(a.has_far_field, b.has_far_field);
    ASSERT_EQ(a.far_field.size(), b.far_field.size());
    double peak = 0, worst = 0;
    for (const auto& row : b.far_field) peak = std::max({peak, row.e_plane, row.h_plane});
    for (std::size_t q = 0; q < b.far_field.size(); ++q) {
      EXPECT_EQ(a.far_field[q].theta_deg, b.far_field[q].theta_deg);
      worst = std::max({worst, std::fabs(a.far_field[q].e_plane - b.far_field[q].e_plane) / peak,
                        std::fabs(a.far_field[q].h_plane - b.far_field[q].h_plane) / peak});
      EXPECT_TRUE(same_on_all_ranks(a.far_field[q].e_plane));
    }
    EXPECT_GT(peak, 0.0);
    EXPECT_LE(worst, 1e-9);
    EXPECT_NEAR(a.scattering_cross_section, b.scattering_cross_section, 1e-9 * b.scattering_cross_section);
    EXPECT_NEAR(a.radiated_power, b.radiated_power, 1e-9 * std::fabs(b.radiated_power));
    EXPECT_TRUE(same_on_all_ranks(a.radiated_power));
    EXPECT_TRUE(same_on_all_ranks(a.whole_body_sar));
    if (got.decomposition.size() > 0 && fi == 0) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0)
        std::cout << "  far field max relative difference " << worst << ", psSAR10g " << a.sar_10g.peak << " W/kg\n";
    }
  }
}

struct Case {
  std::string name;
  std::array<int, 3> ranks{0, 0, 0};
  std::array<std::vector<int>, 3> cells;
};

std::vector<Case> cases_for(int n) {
  std::vector<Case> c;
  auto uneven = [](std::string name, std::vector<int> xs, std::vector<int> ys, std::vector<int> zs) {
    Case k;
    k.name = std::move(name);
    k.cells = {std::move(xs), std::move(ys), std::move(zs)};
    return k;
  };
  if (n == 1) c.push_back({"single", {1, 1, 1}, {}});
  if (n == 2) {
    c.push_back({"x", {2, 1, 1}, {}});
    c.push_back(uneven("uneven_y", {kNx}, {21, 7}, {kNz}));
  }
  if (n == 3) {
    c.push_back({"auto", {0, 0, 0}, {}});
    c.push_back(uneven("uneven_z", {kNx}, {kNy}, {7, 16, 7}));
  }
  if (n == 4) {
    c.push_back({"xy", {2, 2, 1}, {}});
    c.push_back(uneven("uneven_xz", {8, 22}, {kNy}, {14, 16}));
  }
  return c;
}

}  // namespace

TEST(DistributedHarmonic, PlaneWaveAndDipoleMatchRunFdtdHarmonic) {
  const FdtdSetup setup = global_setup();
  for (int which = 0; which < 2; ++which) {
    const HarmonicOptions o = which == 0 ? plane_wave_options(setup) : dipole_options(setup);
    const HarmonicResult& want = reference(which);
    for (const Case& cs : cases_for(world_size())) {
      SCOPED_TRACE(std::string(which == 0 ? "plane wave, " : "dipole, ") + cs.name);
      DistributedOptions d;
      d.ranks = cs.ranks;
      d.cells = cs.cells;
      const DistributedHarmonicResult got = run_fdtd_harmonic_distributed(MPI_COMM_WORLD, setup, o, d);
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) std::cout << (which == 0 ? "plane wave " : "dipole ") << cs.name << ": " << got.decomposition.describe() << "\n";
      compare(got, want);
      EXPECT_EQ(got.piece_grid.nx, got.piece_cells.dims()[0]);
      EXPECT_DOUBLE_EQ(got.piece_grid.origin[2], setup.grid.origin[2] + got.piece_cells.lo[2] * kD);
      // The density given per piece instead of the whole grid: the same result.
      if (which == 0 && cs.name != "single") {
        HarmonicOptions op = o;
        op.density = slice(o.density, {kNx, kNy, kNz}, got.piece_cells);
        const DistributedHarmonicResult g2 = run_fdtd_harmonic_distributed(MPI_COMM_WORLD, setup, op, d);
        EXPECT_EQ(g2.result.frequencies[0].sar_10g.peak, want.frequencies[0].sar_10g.peak);
        EXPECT_EQ(mismatches(g2.result.frequencies[0].local_sar, got.result.frequencies[0].local_sar), 0u);
      }
    }
  }
}

TEST(DistributedHarmonic, ProgressAbortAndBadInputOnEveryRank) {
  const FdtdSetup setup = global_setup();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // The last rank asks to stop at the first callback: every rank ends the run, marked aborted.
  HarmonicOptions o = plane_wave_options(setup);
  o.progress_interval = 20;
  int calls = 0;
  o.progress = [&](int, int, double) {
    ++calls;
    return rank != world_size() - 1;
  };
  const DistributedHarmonicResult r = run_fdtd_harmonic_distributed(MPI_COMM_WORLD, setup, o);
  EXPECT_TRUE(r.result.aborted);
  EXPECT_EQ(r.result.steps, 20);
  EXPECT_TRUE(r.result.frequencies.empty());
  EXPECT_EQ(calls, 1);
  // A density of the wrong size on one rank only.
  HarmonicOptions b = plane_wave_options(setup);
  if (rank == 0) b.density.resize(7);
  try {
    run_fdtd_harmonic_distributed(MPI_COMM_WORLD, setup, b);
    ADD_FAILURE() << "no error for a bad density";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HarmonicOptions::density (DensityArray): rank 0 has 7 entries"),
              std::string::npos) << e.what();
  }
}
