// run_fdtd_harmonic over MPI ranks (distributed_harmonic.h): run_fdtd_harmonic's plan, loop,
// normalization and tables (harmonic_internal.h) on the distributed extensions.
#include "vem/fdtd/distributed/distributed_harmonic.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "fdtd/harmonic_internal.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_extensions.h"

namespace vem {

namespace {
using cd = std::complex<double>;
using cf = std::complex<float>;
}  // namespace

DistributedHarmonicResult run_fdtd_harmonic_distributed(MPI_Comm comm, const FdtdSetup& setup_in,
                                                        const HarmonicOptions& o, const DistributedOptions& dist) {
  using namespace harmonic_detail;
  // Stage timings (HarmonicTimings; this rank's wall clock, the whole call on every rank): plan,
  // engine (DistributedFdtd: operator, engine, halo), extensions, stepping (with the steady-state
  // checks), local_sar (E, |E|^2 and SAR over the pieces, the 1 g / 10 g averaging included: it
  // is one collective), far_field.
  StageClock stages;
  auto lap = [&stages]() { return stages.lap(); };
  HarmonicTimings tm;
  // The plan depends on the inputs only: every rank computes (or fails) the same way.
  const Plan plan = make_plan(setup_in, o, /*check_density=*/false);
  tm.plan = lap();
  const YeeGrid& g = setup_in.grid;
  const std::int64_t ncell = g.cell_count();
  const bool cw = plan.cw, dipole = plan.dipole;
  const std::array<double, 3> d = g.d();
  const int M = plan.M;

  DistributedOptions dopt = dist;
  dopt.backend = o.backend;
  dopt.tuning = o.tuning;
  DistributedFdtd run(comm, plan.setup, dopt);
  tm.engine = lap();

  DistributedHarmonicResult out;
  out.decomposition = run.decomposition();
  out.piece_grid = run.piece().grid;
  {
    const auto lo = run.piece_lo();
    const auto m = run.decomposition().piece_cells(run.rank());
    for (int a = 0; a < 3; ++a) {
      out.piece_cells.lo[a] = lo[a];
      out.piece_cells.hi[a] = lo[a] + m[a] - 1;
    }
  }
  HarmonicResult& res = out.result;
  res.backend = run.engine().backend();
  res.dt = plan.dt;
  res.dft_sample_interval = M;
  if (dipole) {
    res.dipole_gap = plan.gap;
    res.dipole_edges = plan.dipole_edges;
  }

  // Density: the whole grid's cells, or this rank's piece.
  std::vector<float> density;
  run.collective([&] {
    if (o.density.empty()) return;
    if (std::int64_t(o.density.size()) == ncell) {
      density = piece_of_cells(run, o.density);
    } else if (std::int64_t(o.density.size()) == out.piece_cells.count()) {
      density = o.density;
    } else {
      fail("HarmonicOptions::density (DensityArray): rank ", run.rank(), " has ", o.density.size(),
           " entries; the grid has ", ncell, " cells and this rank's piece ", out.piece_cells.count());
    }
  });

  std::unique_ptr<DistributedTfsfSource> tfsf;
  if (!dipole) {
    TfsfBox box;
    box.lo = plan.tf_lo;
    box.hi = plan.tf_hi;
    tfsf = std::make_unique<DistributedTfsfSource>(run, plane_wave_of(plan, o), box);
    res.tfsf_lo = plan.tf_lo;
    res.tfsf_hi = plan.tf_hi;
  }
  DistributedDftMonitor main(run, o.frequencies, {Component::Ex, Component::Ey, Component::Ez}, {}, M);
  std::unique_ptr<DistributedNearToFar> ntff;
  if (o.far_field) ntff = std::make_unique<DistributedNearToFar>(run, o.frequencies, plan.nbox, M);
  std::unique_ptr<DistributedDftMonitor> gap_mon;  // the feed gap's E sample
  if (dipole) {
    DftBox gb;
    gb.lo = plan.gap;
    gb.hi = plan.gap;
    gap_mon = std::make_unique<DistributedDftMonitor>(run, o.frequencies, std::vector<Component>{Component(plan.axis)},
                                                      gb, M);
  }

  tm.extensions = lap();

  // ---- stepping (run_fdtd_harmonic's loop) -----------------------------------------------------
  const int max_steps = plan.max_steps;
  double change_now = 1.0;
  const Stepping st = step(
      plan, o,
      [&](int chunk, int base) {
        return run.run(
            chunk,
            [&](int k, int) {
              if (!o.progress) return true;
              return o.progress(base + k, max_steps, change_now);
            },
            std::max(1, o.progress_interval));
      },
      [&]() -> std::optional<double> {
        if (cw) {
          const SteadyStateCheck sc = main.check_steady_state();
          double worst = sc.has_previous ? sc.relative_change : 1.0;
          if (ntff) {
            const SteadyStateCheck fc = ntff->check_steady_state();
            if (fc.has_previous) worst = std::max(worst, fc.relative_change);
          }
          if (gap_mon) gap_mon->check_steady_state();  // keeps its window with the others
          if (sc.has_previous) change_now = worst;
          return sc.has_previous ? std::optional<double>(worst) : std::nullopt;
        }
        change_now = main.check_steady_state().spectrum_change;
        return change_now;
      },
      [&](int done, double change) {
        int go = 1, all = 1;
        run.collective([&] { go = o.progress(done, max_steps, change) ? 1 : 0; });
        MPI_Allreduce(&go, &all, 1, MPI_INT, MPI_MIN, run.comm());
        return all != 0;
      });
  tm.stepping = lap();
  finish(res, plan, o, st, ncell, std::string());
  auto stamp = [&]() {
    tm.total = stages.since_start();
    res.timings = tm;
  };
  if (res.aborted) {
    stamp();
    return out;
  }
  const int done = st.done;
  const bool cubic = std::fabs(d[0] - d[1]) <= 1e-9 * d[0] && std::fabs(d[0] - d[2]) <= 1e-9 * d[0];
  std::array<double, 3> centre{};
  for (int a = 0; a < 3; ++a) centre[a] = g.origin[a] + 0.5 * (plan.nbox.lo[a] + plan.nbox.hi[a]) * d[a];

  // ---- per-frequency results (run_fdtd_harmonic's order) ---------------------------------------
  for (std::size_t fi = 0; fi < o.frequencies.size(); ++fi) {
    const double f = o.frequencies[fi];
    HarmonicFrequencyResult r;
    r.frequency = f;
    const cd unit = harmonic_detail::unit(plan, done, f);
    lap();
    std::unique_ptr<DistributedFarField> nf;
    if (ntff) nf = std::make_unique<DistributedFarField>(ntff->transform(int(fi), cw, unit, centre));
    tm.far_field += lap();
    double accepted_unit = 0;
    double scale = 1.0;  // plane wave: the run already has the requested amplitude
    if (dipole) {
      std::vector<cf> eg = cw ? gap_mon->gather_box_phasor(Component(plan.axis), int(fi), 0)
                              : gap_mon->gather_box_spectrum(Component(plan.axis), int(fi), 0);
      float v2[2] = {0, 0};
      if (!eg.empty()) { v2[0] = eg[0].real(); v2[1] = eg[0].imag(); }
      MPI_Bcast(v2, 2, MPI_FLOAT, 0, run.comm());
      const cd e_gap = cd(cf(v2[0], v2[1])) * unit;
      const cd v = -e_gap * plan.gap_len;  // per 1 A feed current
      const double p_unit = 0.5 * v.real();
      r.feed_impedance = v;
      accepted_unit = p_unit;
      double p_rad_unit = 0;
      if (o.dipole.radiated_power > 0) p_rad_unit = nf->power_out();  // collective: on every rank
      run.collective([&] { scale = harmonic_detail::dipole_scale(o, f, p_unit, p_rad_unit); });
      r.accepted_power = p_unit * scale * scale;
    }
    r.normalization = scale;
    const cd factor = unit * scale;
    // E over the piece's samples, |E|^2 and SAR per piece (halo exchanges; distributed_sar).
    DistributedSarOptions so;
    so.averaged = o.averaged_sar;
    so.backend = run.engine().fields_on_device() ? Backend::cuda : Backend::cpu;
    so.e_squared = true;
    so.e_piece = true;
    lap();
    DistributedSar sar = distributed_sar(run, main, int(fi), cw, factor, density, so);
    tm.local_sar += lap();
    r.e_squared = std::move(sar.e_squared);
    r.ex = std::move(sar.e_piece[0]);
    r.ey = std::move(sar.e_piece[1]);
    r.ez = std::move(sar.e_piece[2]);
    out.piece_samples = sar.e_piece_box;
    if (sar.has_sar) {
      r.has_sar = true;
      r.local_sar = std::move(sar.local_sar);
      r.whole_body_sar = sar.whole_body_sar;
      r.absorbed_power = sar.absorbed_power;
      r.peak_local_sar = sar.peak_local_sar;
      r.peak_local_voxel = sar.peak_local_voxel;
      if (sar.has_averaged) {
        r.sar_1g = std::move(sar.sar_1g);
        r.sar_10g = std::move(sar.sar_10g);
      } else if (o.averaged_sar && !cubic && fi == 0) {
        res.warning += std::string(res.warning.empty() ? "" : "; ") +
                       "1 g / 10 g averaged SAR skipped: the voxels are not cubic (IEC/IEEE 62704-1 cubes)";
      }
    } else if (!density.empty() && fi == 0) {
      res.warning += std::string(res.warning.empty() ? "" : "; ") + "no SAR: the density is <= 0 everywhere";
    }
    lap();
    if (nf) {
      r.has_far_field = true;
      r.radiated_power = nf->power_out() * r.normalization * r.normalization;
      if (!dipole) {
        const TfsfSource& src = tfsf->local();
        r.far_field = plane_wave_table(src.k_hat(), src.e_hat(), src.h_hat(), o.far_field_step_deg,
                                       [&](const Directions& dirs) { return nf->rcs(dirs, o.plane_wave.amplitude); });
        r.scattering_cross_section = nf->scattering_cross_section(24, 48, o.plane_wave.amplitude);
      } else {
        r.far_field = dipole_table(plan.axis, o.far_field_step_deg, accepted_unit,
                                   [&](const Directions& dirs) { return nf->patterns(dirs); });
      }
    }
    tm.far_field += lap();
    res.frequencies.push_back(std::move(r));
  }
  stamp();
  return out;
}

}  // namespace vem
