// Distributed TF/SF, near-to-far and SAR (issue 17) against one domain: a CW plane wave (oblique
// incidence and polarization, so every face of the TF/SF box is corrected through interpolated
// 1D values) on a heterogeneous lossy block with air pockets inside a CPML box, run on the ranks
// of MPI_COMM_WORLD with decompositions along each axis, in 2D/3D (np 8: 2 x 2 x 2) and uneven
// (cuts on the TF/SF and near-to-far faces), and on one engine in the same process for the
// reference. Tolerances:
//   fields (all six components), E phasors: bit for bit;
//   local SAR per piece, whole-body SAR, absorbed power, peak local SAR, psSAR 1 g / 10 g (peak,
//   voxel, cube side, valid / assigned / unassigned counts) and the 1 g / 10 g arrays of every
//   piece: bit for bit (the single-domain SAR code runs on the gathered arrays);
//   RCS (E and H plane, 0..180 deg), scattering cross-section, power through the box: 1e-9
//   relative to the largest RCS of the table / to the value (the surface sums are reduced over
//   ranks: only the summation order differs);
//   every reduced value identical on all ranks (MPI min == max).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "mpi_test_util.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_extensions.h"
#include "vem/fdtd/extensions/dft_monitor.h"

using namespace vem;
using vem_mpi_test::bit_mismatches;
using vem_mpi_test::Case;
using vem_mpi_test::uneven;
using vem_mpi_test::world_rank;
using vem_mpi_test::world_size;

namespace {

using cd = std::complex<double>;
using cf = std::complex<float>;

constexpr int kNx = 30, kNy = 28, kNz = 30, kCpml = 3;
constexpr double kD = 3e-3, kF = 2e9;
constexpr int kM = 2, kK = 44;          // a period is kM kK steps; DFT every kM steps
constexpr int kWindow = kM * kK;        // steady-state window: one period
constexpr int kChecks = 3;              // checks after 1, 2, 3 windows: phasors of the last
const TfsfBox kTfsf{{7, 7, 7}, {kNx - 7, kNy - 7, kNz - 7}};
const NtffBox kNtff{{5, 5, 5}, {kNx - 5, kNy - 5, kNz - 5}};
const cd kUnit(0, 1);  // the source runs as sin(w t): phasor -j per unit amplitude (fdtd_harmonic.cpp)

FdtdSetup global_setup() {
  FdtdSetup s;
  s.grid = {kNx, kNy, kNz, kD, kD, kD};
  s.grid.origin = {-0.04, 0.01, -0.02};
  s.boundaries = BoundarySpec::all(BoundaryType::cpml);
  for (auto& c : s.boundaries.cpml) c.thickness = kCpml;
  s.dt = 1.0 / kF / (kM * kK);
  s.materials.push_back(Material::vacuum());
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(0, 1);
  for (int m = 1; m < 9; ++m)
    s.materials.push_back(Material::isotropic("t" + std::to_string(m), 20 + 30 * u(rng), 0.3 + 1.5 * u(rng)));
  s.material_index.assign(s.grid.cell_count(), 0);
  for (int k = 9; k < 20; ++k)  // an 11^3-cell block (~35 g): room for valid 10 g cubes
    for (int j = 9; j < 20; ++j)
      for (int i = 10; i < 21; ++i) {
        const double r = u(rng);
        s.material_index[i + kNx * (j + std::size_t(kNy) * k)] = r < 0.08 ? 0 : std::uint16_t(1 + int(8 * u(rng)) % 8);
      }
  return s;
}

// kg/m^3 per cell: tissue 900..1100 where the material is not vacuum, air elsewhere.
std::vector<float> global_density(const FdtdSetup& s) {
  std::vector<float> rho(s.material_index.size(), 1.16f);
  for (std::size_t c = 0; c < rho.size(); ++c)
    if (s.material_index[c] != 0) rho[c] = 900.0f + 25.0f * float(s.material_index[c]);
  return rho;
}

PlaneWave plane_wave() {
  PlaneWave w;
  w.theta = 0.6;
  w.phi = 0.4;
  w.psi = 0.3;
  w.amplitude = 2.0;
  w.waveform = Waveform::sinusoid(kF, 1.0);
  return w;
}

std::vector<std::array<double, 2>> far_directions(const TfsfSource& src) {
  // The E- and H-plane tables of fdtd_harmonic.cpp, 10 deg steps.
  std::vector<std::array<double, 2>> dirs;
  const auto k = src.k_hat(), eh = src.e_hat(), hh = src.h_hat();
  for (int q = 0; q <= 18; ++q) {
    const double t = q * 10.0 * kPi / 180.0;
    for (const auto& u : {eh, hh}) {
      std::array<double, 3> d;
      for (int a = 0; a < 3; ++a) d[a] = std::cos(t) * k[a] + std::sin(t) * u[a];
      const double r = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      dirs.push_back({std::acos(std::clamp(d[2] / r, -1.0, 1.0)), std::atan2(d[1], d[0])});
    }
  }
  return dirs;
}

std::array<double, 3> ntff_centre(const YeeGrid& g) {
  std::array<double, 3> c;
  const auto d = g.d();
  for (int a = 0; a < 3; ++a) c[a] = g.origin[a] + 0.5 * (kNtff.lo[a] + kNtff.hi[a]) * d[a];
  return c;
}

// The single-domain run and its SAR / far field, computed once per program on every rank.
struct Reference {
  std::array<std::vector<float>, 6> fields;
  std::array<std::vector<cf>, 3> phasor;  // raw E phasors
  std::vector<float> local_sar;
  double whole_body = 0, absorbed = 0, peak_local = 0;
  std::array<int, 3> peak_local_voxel{-1, -1, -1};
  AveragedSar s1, s10;
  std::vector<double> rcs;
  double scs = 0, pout = 0;
  std::size_t tfsf_targets = 0;
};

Reference& reference() {
  static Reference ref = [] {
    Reference r;
    const FdtdSetup s = global_setup();
    FdtdOperator op(s);
    auto eng = make_engine(op, Backend::cpu);
    TfsfSource tfsf(*eng, plane_wave(), kTfsf);
    r.tfsf_targets = tfsf.corrected_samples();
    DftMonitor main(*eng, {kF}, {Component::Ex, Component::Ey, Component::Ez}, {}, kM);
    // The near-to-far slabs of fdtd_harmonic.cpp.
    std::vector<std::unique_ptr<DftMonitor>> faces;
    std::vector<std::vector<Component>> comps;
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        const int p = side == 0 ? kNtff.lo[a] : kNtff.hi[a];
        const int b = (a + 1) % 3, c = (a + 2) % 3;
        comps.push_back({Component(b), Component(c), Component(3 + b), Component(3 + c)});
        DftBox db;
        for (int q = 0; q < 3; ++q) {
          db.lo[q] = q == a ? p - 1 : kNtff.lo[q] - 1;
          db.hi[q] = q == a ? p + 1 : kNtff.hi[q] + 1;
        }
        faces.push_back(std::make_unique<DftMonitor>(*eng, std::vector<double>{kF}, comps.back(), db, kM));
      }
    for (int w = 0; w < kChecks; ++w) {
      eng->run(kWindow);
      main.check_steady_state();
      for (auto& f : faces) f->check_steady_state();
    }
    for (int c = 0; c < 6; ++c) r.fields[c] = eng->field(Component(c));
    for (int a = 0; a < 3; ++a) r.phasor[a] = main.phasor(Component(a), 0);

    // SAR as run_fdtd_harmonic computes it.
    std::array<std::vector<cf>, 3> E = r.phasor;
    for (auto& v : E)
      for (cf& x : v) x = cf(cd(x) * kUnit);
    SarInput in;
    in.grid = s.grid;
    in.density = global_density(s);
    in.power_density = cell_absorbed_power_density(s.grid, E[0], E[1], E[2], edge_conductivity(op), in.density);
    r.local_sar = local_sar(in);
    const double vol = kD * kD * kD;
    for (std::size_t c = 0; c < in.density.size(); ++c)
      if (is_tissue_density(in.density[c])) {
        r.absorbed += double(in.power_density[c]) * vol;
        if (r.local_sar[c] > r.peak_local) {
          r.peak_local = r.local_sar[c];
          r.peak_local_voxel = {int(c % kNx), int((c / kNx) % kNy), int(c / (kNx * kNy))};
        }
      }
    r.whole_body = whole_body_sar(in);
    auto both = spatial_average_sar(in, std::vector<double>{1e-3, 1e-2}, Backend::cpu);
    r.s1 = std::move(both[0]);
    r.s10 = std::move(both[1]);

    // Far field as run_fdtd_harmonic computes it.
    std::vector<std::vector<std::vector<cf>>> slab(faces.size());
    for (std::size_t q = 0; q < faces.size(); ++q)
      for (Component c : comps[q]) slab[q].push_back(faces[q]->box_phasor(c, 0));
    auto sample = [&](Component c, int i, int j, int k) -> cd {
      for (std::size_t q = 0; q < faces.size(); ++q) {
        const auto it = std::find(comps[q].begin(), comps[q].end(), c);
        if (it == comps[q].end()) continue;
        const auto lo = faces[q]->box_lo();
        const auto dims = faces[q]->box_dims();
        const int u = i - lo[0], v = j - lo[1], w = k - lo[2];
        if (u < 0 || v < 0 || w < 0 || u >= dims[0] || v >= dims[1] || w >= dims[2]) continue;
        return cd(slab[q][it - comps[q].begin()][u + std::size_t(dims[0]) * (v + std::size_t(dims[1]) * w)]) * kUnit;
      }
      fail("reference near-to-far: sample outside the slabs");
    };
    NearToFarTransform nf(s.grid, kF, sample, kNtff, ntff_centre(s.grid));
    for (const auto& d : far_directions(tfsf)) r.rcs.push_back(nf.rcs(d[0], d[1], plane_wave().amplitude));
    r.scs = nf.scattering_cross_section(24, 48, plane_wave().amplitude);
    r.pout = nf.power_out();
    return r;
  }();
  return ref;
}

// The same value on every rank (bitwise: min == max).
bool same_on_all_ranks(double v) {
  double lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// Cuts on the TF/SF faces (x = 7, y = 21, z = 7 and 23) and on the near-to-far faces (x = 5 and
// 25, y = 5; pieces on CPML faces need more than CPML + 1 = 4 cells).
std::vector<Case> cases_for(int n) {
  std::vector<Case> c;
  if (n == 1) c.push_back({"single", {1, 1, 1}, {}});
  if (n == 2) {
    c.push_back({"x", {2, 1, 1}, {}});
    c.push_back({"y", {1, 2, 1}, {}});
    c.push_back({"z", {1, 1, 2}, {}});
    c.push_back(uneven("uneven_x_on_tfsf_face", {7, 23}, {kNy}, {kNz}));
    c.push_back(uneven("uneven_y_on_tfsf_face", {kNx}, {21, 7}, {kNz}));
  }
  if (n == 3) {
    c.push_back({"auto", {0, 0, 0}, {}});
    c.push_back({"y", {1, 3, 1}, {}});
    c.push_back(uneven("uneven_z_on_tfsf_faces", {kNx}, {kNy}, {7, 16, 7}));
    c.push_back(uneven("uneven_x_on_ntff_faces", {5, 20, 5}, {kNy}, {kNz}));
  }
  if (n == 4) {
    c.push_back({"x", {4, 1, 1}, {}});
    c.push_back({"z", {1, 1, 4}, {}});
    c.push_back({"xy", {2, 2, 1}, {}});
    c.push_back(uneven("uneven_yz", {kNx}, {5, 23}, {23, 7}));
    c.push_back(uneven("uneven_xz", {25, 5}, {kNy}, {14, 16}));
  }
  if (n == 8) c.push_back(uneven("uneven_3d_2x2x2", {13, 17}, {7, 21}, {16, 14}));
  return c;
}

}  // namespace

TEST(DistributedExtensions, TfsfNearToFarAndSarMatchTheSingleDomain) {
  const int n = world_size(), rank = world_rank();
  const std::vector<Case> cases = cases_for(n);
  if (cases.empty()) GTEST_SKIP() << "no decomposition for " << n << " ranks";
  Reference& ref = reference();
  const FdtdSetup setup = global_setup();
  const std::vector<float> rho = global_density(setup);
  for (const Case& cs : cases) {
    SCOPED_TRACE("decomposition " + cs.name);
    DistributedOptions opt;
    opt.ranks = cs.ranks;
    opt.cells = cs.cells;
    std::unique_ptr<DistributedFdtd> run;
    // Pieces on CPML faces must be thicker than the CPML: a case that does not fit is a test bug.
    ASSERT_NO_THROW(run = std::make_unique<DistributedFdtd>(MPI_COMM_WORLD, setup, opt));
    if (rank == 0) std::cout << cs.name << ": " << run->decomposition().describe() << "\n";
    DistributedTfsfSource tfsf(*run, plane_wave(), kTfsf);
    DistributedDftMonitor main(*run, {kF}, {Component::Ex, Component::Ey, Component::Ez}, {}, kM);
    DistributedNearToFar ntff(*run, {kF}, kNtff, kM);
    for (int w = 0; w < kChecks; ++w) {
      run->run(kWindow);
      main.check_steady_state();
      ntff.check_steady_state();
    }
    // The TF/SF source on every rank has the global source's direction and 1D grid.
    EXPECT_TRUE(same_on_all_ranks(tfsf.local().alpha()));
    EXPECT_TRUE(same_on_all_ranks(tfsf.local().delay({0.0, 0.0, 0.0})));
    long long targets = (long long)tfsf.local().corrected_samples(), total = 0;
    MPI_Allreduce(&targets, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GE(total, (long long)ref.tfsf_targets);  // shared planes are corrected on both sides
    if (rank == 0) std::cout << "  TF/SF corrected samples: " << total << " over the ranks, " << ref.tfsf_targets << " on one domain\n";

    // Fields and E phasors, bit for bit.
    for (int c = 0; c < 6; ++c) {
      const auto got = run->gather_field(Component(c), 0);
      if (rank != 0) continue;
      double peak = 0;
      for (float v : ref.fields[c]) peak = std::max(peak, double(std::fabs(v)));
      EXPECT_GT(peak, 0.0) << component_name(Component(c));
      EXPECT_EQ(bit_mismatches(got, ref.fields[c]), 0u) << component_name(Component(c));
    }
    for (int a = 0; a < 3; ++a) {
      const auto got = main.gather_box_phasor(Component(a), 0, 0);
      if (rank != 0) continue;
      ASSERT_EQ(got.size(), ref.phasor[a].size());
      std::size_t bad = 0;
      for (std::size_t q = 0; q < got.size(); ++q) bad += got[q] != ref.phasor[a][q];
      EXPECT_EQ(bad, 0u) << "E phasor " << a;
    }

    // SAR, bit for bit, identical on every rank; per-cell arrays on the pieces.
    const DistributedSar sar = distributed_sar(*run, main, 0, true, kUnit, piece_of_cells(*run, rho));
    ASSERT_TRUE(sar.has_sar);
    ASSERT_TRUE(sar.has_averaged) << sar.warning;
    // Sums over the tissue: each rank's part, reduced (the single-domain code sums in index order).
    EXPECT_NEAR(sar.whole_body_sar, ref.whole_body, 1e-12 * ref.whole_body);
    EXPECT_NEAR(sar.absorbed_power, ref.absorbed, 1e-12 * ref.absorbed);
    EXPECT_EQ(sar.peak_local_sar, ref.peak_local);
    EXPECT_EQ(sar.peak_local_voxel, ref.peak_local_voxel);
    EXPECT_GT(ref.whole_body, 0.0);
    for (const auto& [got, want] : {std::pair{&sar.sar_1g, &ref.s1}, std::pair{&sar.sar_10g, &ref.s10}}) {
      EXPECT_EQ(got->peak, want->peak);
      EXPECT_EQ(got->peak_voxel, want->peak_voxel);
      EXPECT_EQ(got->peak_side_m, want->peak_side_m);
      EXPECT_EQ(got->valid, want->valid);
      EXPECT_EQ(got->assigned, want->assigned);
      EXPECT_EQ(got->unassigned, want->unassigned);
      EXPECT_GT(want->valid, 0u);
      EXPECT_TRUE(same_on_all_ranks(got->peak));
      EXPECT_EQ(bit_mismatches(got->sar, piece_of_cells(*run, want->sar)), 0u) << want->target_mass_kg;
      std::vector<float> st(want->status.begin(), want->status.end()), gs(got->status.begin(), got->status.end());
      EXPECT_EQ(bit_mismatches(gs, piece_of_cells(*run, st)), 0u) << want->target_mass_kg;
      EXPECT_EQ(bit_mismatches(got->side_m, piece_of_cells(*run, want->side_m)), 0u) << want->target_mass_kg;
      EXPECT_TRUE(sar.averaging.halo) << sar.averaging.reason;
      EXPECT_LE(sar.averaging.bytes_received, sar.averaging.bytes_halo_bound);
    }
    EXPECT_GT(ref.s10.assigned + ref.s10.unassigned, 0u);  // the 10 g cubes meet the rules' edge cases
    EXPECT_EQ(bit_mismatches(sar.local_sar, piece_of_cells(*run, ref.local_sar)), 0u);
    EXPECT_TRUE(same_on_all_ranks(sar.whole_body_sar));
    EXPECT_TRUE(same_on_all_ranks(sar.sar_10g.peak));

    // Far field: surface sums reduced over ranks.
    const DistributedFarField ff = ntff.transform(0, true, kUnit, ntff_centre(setup.grid));
    const auto rcs = ff.rcs(far_directions(tfsf.local()), plane_wave().amplitude);
    ASSERT_EQ(rcs.size(), ref.rcs.size());
    double rmax = 0;
    for (double v : ref.rcs) rmax = std::max(rmax, v);
    EXPECT_GT(rmax, 0.0);
    double worst = 0;
    for (std::size_t q = 0; q < rcs.size(); ++q) {
      worst = std::max(worst, std::fabs(rcs[q] - ref.rcs[q]) / rmax);
      EXPECT_TRUE(same_on_all_ranks(rcs[q])) << q;
    }
    EXPECT_LE(worst, 1e-9);
    const double scs = ff.scattering_cross_section(24, 48, plane_wave().amplitude);
    EXPECT_NEAR(scs, ref.scs, 1e-9 * ref.scs);
    EXPECT_GT(ref.scs, 0.0);
    const double pout = ff.power_out();
    EXPECT_NEAR(pout, ref.pout, 1e-9 * std::fabs(ref.pout));
    EXPECT_TRUE(same_on_all_ranks(scs));
    EXPECT_TRUE(same_on_all_ranks(pout));
    long long patches = (long long)ff.local_patches(), all = 0;
    MPI_Allreduce(&patches, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const auto& b = kNtff;
    const long long want_patches = 2LL * ((b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]) + (b.hi[0] - b.lo[0]) * (b.hi[2] - b.lo[2]) +
                                          (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]));
    EXPECT_EQ(all, want_patches);  // every patch on exactly one rank
    if (rank == 0)
      std::cout << "  RCS max relative difference " << worst << ", psSAR10g " << sar.sar_10g.peak << " W/kg, SCS "
                << scs << " m^2\n";
  }
}

TEST(DistributedExtensions, BadInputEndsEveryRankWithTheMessage) {
  // After an error the run object only throws (distributed_fdtd.h): one run per case.
  const FdtdSetup setup = global_setup();
  {  // A TF/SF box reaching into the CPML.
    DistributedFdtd run(MPI_COMM_WORLD, setup);
    TfsfBox bad = kTfsf;
    bad.lo[0] = 3;
    try {
      DistributedTfsfSource t(run, plane_wave(), bad);
      ADD_FAILURE() << "no error for a TF/SF box in the CPML";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("TFSF box x range [3, 23]"), std::string::npos) << e.what();
    }
  }
  {  // A TF/SF surface cutting the lossy block (non-vacuum): seen by the ranks holding it only.
    DistributedFdtd run(MPI_COMM_WORLD, setup);
    const TfsfBox in_block{{12, 7, 7}, {kNx - 7, kNy - 7, kNz - 7}};
    try {
      DistributedTfsfSource t(run, plane_wave(), in_block);
      ADD_FAILURE() << "no error for a TF/SF surface in the block";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must lie in vacuum"), std::string::npos) << e.what();
    }
  }
  {  // A density of the wrong size on the last rank only: every rank throws with its message.
    DistributedFdtd run(MPI_COMM_WORLD, setup);
    DistributedDftMonitor main(run, {kF}, {Component::Ex, Component::Ey, Component::Ez}, {}, kM);
    run.run(2);
    main.check_steady_state();
    std::vector<float> rho = piece_of_cells(run, global_density(setup));
    if (run.rank() == run.size() - 1) rho.pop_back();
    try {
      distributed_sar(run, main, 0, false, 1.0, rho);
      ADD_FAILURE() << "no error for a short density";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(run.size() - 1) + "'s piece has"),
                std::string::npos) << e.what();
    }
  }
  {  // A near-to-far box outside the grid; phasors asked for before two checks.
    DistributedFdtd run(MPI_COMM_WORLD, setup);
    NtffBox nb = kNtff;
    nb.hi[2] = kNz;
    EXPECT_THROW(DistributedNearToFar(run, {kF}, nb, kM), Error);
  }
  {
    DistributedFdtd run(MPI_COMM_WORLD, setup);
    DistributedNearToFar ntff(run, {kF}, kNtff, kM);
    run.run(2);
    ntff.check_steady_state();
    try {
      ntff.transform(0, true, 1.0, {0.0, 0.0, 0.0});
      ADD_FAILURE() << "no error for phasors after one check";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no steady-state window yet"), std::string::npos) << e.what();
    }
  }
}
