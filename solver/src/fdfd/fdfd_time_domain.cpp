// The FDTD-driven preconditioner of the FDFD solver (fdfd_time_domain.h).
#include "vem/fdfd_time_domain.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "vem/dft_monitor.h"
#include "vem/error.h"
#include "vem/harmonic_current.h"
#ifdef VEM_WITH_CUDA
#include "fdfd/fdfd_time_domain_device.h"
#endif

namespace vem {

void validate(const FdfdTimeDomainOptions& o) {
  if (!(o.steady_tolerance > 0 && o.steady_tolerance < 1))
    fail("FDFD time-domain preconditioner: steady_tolerance ", o.steady_tolerance, " must lie in (0, 1)");
  if (o.periods_per_check < 1)
    fail("FDFD time-domain preconditioner: periods_per_check ", o.periods_per_check, " must be >= 1");
  if (o.max_periods < 2 * o.periods_per_check)
    fail("FDFD time-domain preconditioner: max_periods ", o.max_periods,
         " must be >= 2 periods_per_check = ", 2 * o.periods_per_check, " (two windows to compare)");
  if (!(o.ramp_periods >= 0) || !std::isfinite(o.ramp_periods))
    fail("FDFD time-domain preconditioner: ramp_periods ", o.ramp_periods, " must be finite and >= 0");
  if (!(o.courant_factor > 0 && o.courant_factor <= 1))
    fail("FDFD time-domain preconditioner: courant_factor ", o.courant_factor, " must lie in (0, 1]");
  if (o.gcr_restart < 1)
    fail("FDFD time-domain preconditioner: gcr_restart ", o.gcr_restart, " must be >= 1");
}

FdfdTimeDomainPreconditioner::FdfdTimeDomainPreconditioner(const FdfdOperator& op,
                                                           const FdfdTimeDomainOptions& o,
                                                           Backend backend, int device_index)
    : op_(op), o_(o), backend_(backend), device_(device_index) {
  validate(o);
  const FdfdProblem& p = op.problem();
  const YeeGrid& g = p.grid;
  const double wt = op.omega();

  // Time step: a period of P = 16 K steps with w~ = w_t (header).
  const double dt_c = o.courant_factor * g.courant_limit_dt();
  const int K = std::max(1, int(std::ceil(1.0 / (p.frequency * dt_c * 16.0) - 1e-12)));
  period_steps_ = 16 * K;
  sample_interval_ = K;
  dt_ = 2.0 * std::sin(kPi / period_steps_) / wt;
  f_run_ = 1.0 / (period_steps_ * dt_);
  const double loss_scale = 1.0 / std::cos(kPi / period_steps_);

  setup_.grid = g;
  setup_.dt = dt_;
  // PML: the SC-PML profile as a Crank-Nicolson CPML matched at the run frequency (alpha = 0,
  // boundary.h); FDFD sigma_max = -(m+1) ln(R0) / (2 eta0 L d), CPML sigma_max = f 0.8 (m+1) / (eta0 d).
  for (int f = 0; f < 6; ++f) {
    const int t = p.pml.thickness[f];
    if (t == 0) {
      setup_.boundaries.face[f] = BoundaryType::pec;
      continue;
    }
    setup_.boundaries.face[f] = BoundaryType::cpml;
    CpmlParameters& c = setup_.boundaries.cpml[f];
    c.thickness = t;
    c.grading_order = p.pml.grading_order;
    c.sigma_factor = -std::log(p.pml.reflection) / (1.6 * t);
    c.kappa_max = p.pml.kappa_max;
    c.alpha_max = 0.0;
    c.match_frequency = f_run_;  // its steady state has the SC-PML stretch at w_t (boundary.h)
  }
  // Materials: conductivities / cos(pi / P) (header).
  auto scaled = [&](Material m) {
    for (int a = 0; a < 3; ++a) {
      m.sigma_e[a] *= loss_scale;
      m.sigma_m[a] *= loss_scale;
    }
    return m;
  };
  if (p.material_mode == MaterialMode::indexed && !p.average_at_edges) {
    setup_.material_mode = MaterialMode::indexed;
    for (const Material& m : p.materials) setup_.materials.push_back(scaled(m));
    setup_.material_index = p.material_index;
  } else {
    setup_.material_mode = MaterialMode::coefficient_array;
    PerCellMedium& md = setup_.medium;
    if (p.material_mode == MaterialMode::coefficient_array) {
      md = p.medium;
      for (auto& arr : md.sigma_e)
        for (float& v : arr) v = float(v * loss_scale);
      for (auto& arr : md.sigma_m)
        for (float& v : arr) v = float(v * loss_scale);
    } else {  // indexed with edge averaging: per-cell arrays from the table
      const std::int64_t n = g.cell_count();
      md.eps_r.assign(3, std::vector<float>(n));
      md.sigma_e.assign(3, std::vector<float>(n));
      md.mu_r.assign(3, std::vector<float>(n));
      md.sigma_m.assign(3, std::vector<float>(n));
      for (std::int64_t c = 0; c < n; ++c) {
        const Material m = scaled(p.materials[p.material_index.empty() ? 0 : p.material_index[c]]);
        for (int a = 0; a < 3; ++a) {
          md.eps_r[a][c] = float(m.eps_r[a]);
          md.sigma_e[a][c] = float(m.sigma_e[a]);
          md.mu_r[a][c] = float(m.mu_r[a]);
          md.sigma_m[a][c] = float(m.sigma_m[a]);
        }
      }
      md.average_at_edges = true;
    }
  }
  fdtd_ = std::make_unique<FdtdOperator>(setup_);

  // J = -j w_t eps0 eps_c v per E sample; walls (identity rows) get 0.
  const std::int64_t N = op.cells();
  jscale_.assign(3 * N, cdouble(0));
  for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
          if (op.is_wall(a, i, j, k)) continue;
          jscale_[a * N + op.linear(i, j, k)] = cdouble(0, -wt * kEps0) * op.eps_at(a, i, j, k);
        }

  // Which engine: probe once (make_engine decides automatic the same way).
  std::string warning;
  auto eng = make_engine(*fdtd_, backend_, device_, &warning, o_.tuning);
  backend_name_ = eng->backend();
  backend_ = backend_name_.rfind("cuda", 0) == 0 ? Backend::cuda : Backend::cpu;
#ifdef VEM_WITH_CUDA
  if (backend_ == Backend::cuda) {
    // Device path: the factor cb J / v = cb (-j w_t eps0 eps_c) per E sample, so one kernel turns
    // a residual into source amplitudes (the engine's cb: harmonic_current.h).
    std::vector<std::complex<float>> f(3 * N);
    for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < g.nz; ++k)
        for (int j = 0; j < g.ny; ++j)
          for (int i = 0; i < g.nx; ++i) {
            const std::int64_t q = a * N + op.linear(i, j, k);
            const bool inside = i >= fdtd_->range_lo(Component(a), 0) && i <= fdtd_->range_hi(Component(a), 0) &&
                                j >= fdtd_->range_lo(Component(a), 1) && j <= fdtd_->range_hi(Component(a), 1) &&
                                k >= fdtd_->range_lo(Component(a), 2) && k <= fdtd_->range_hi(Component(a), 2);
            const cdouble c = inside ? double(fdtd_->coefficients_at(Component(a), i, j, k)[1]) * jscale_[q] : 0.0;
            f[q] = std::complex<float>(float(c.real()), float(c.imag()));
          }
    g_dev_ = fdfd_td::upload_factors(f);
  }
#endif
}

FdfdTimeDomainPreconditioner::~FdfdTimeDomainPreconditioner() {
#ifdef VEM_WITH_CUDA
  if (g_dev_) fdfd_td::free_factors(g_dev_);
#endif
}

TimeDomainApplyStats FdfdTimeDomainPreconditioner::apply_device(const void* v, void* z,
                                                                const std::function<bool()>& keep_going,
                                                                double steady_tolerance) {
#ifdef VEM_WITH_CUDA
  if (!device_path()) fail("FDFD time-domain preconditioner: the device path needs the CUDA FDTD engine");
  const auto t0 = std::chrono::steady_clock::now();
  const double tol = steady_tolerance > 0 ? steady_tolerance : o_.steady_tolerance;
  const YeeGrid& g = op_.grid();
  const FieldLayout& L = fdtd_->layout();
  const fdfd_td::DeviceMap map{g.nx, g.ny, g.nz, (long long)L.sy, (long long)L.sz, (long long)L.origin};
  TimeDomainApplyStats st;
  auto eng = make_engine(*fdtd_, backend_, device_, nullptr, o_.tuning);
  DftMonitor mon(*eng, {f_run_}, {Component::Ex, Component::Ey, Component::Ez}, {}, sample_interval_);
  HarmonicCurrentSource src(*eng, f_run_, o_.ramp_periods);
  float* const amp[3] = {src.amplitude_data(0), src.amplitude_data(1), src.amplitude_data(2)};
  fdfd_td::scatter(map, g_dev_, v, amp);
  const auto t1 = std::chrono::steady_clock::now();
  st.prepare_seconds = std::chrono::duration<double>(t1 - t0).count();
  step_to_steady_state(*eng, mon, st, keep_going, tol);
  const auto t2 = std::chrono::steady_clock::now();
  st.step_seconds = std::chrono::duration<double>(t2 - t1).count();
  if (st.periods >= 1) {
    const std::complex<float>* ph[3] = {mon.device_phasor(Component::Ex, 0), mon.device_phasor(Component::Ey, 0),
                                        mon.device_phasor(Component::Ez, 0)};
    fdfd_td::gather(map, ph, v, z);
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
#else
  (void)v;
  (void)z;
  (void)keep_going;
  (void)steady_tolerance;
  fail("FDFD time-domain preconditioner: the device path needs a build with CUDA");
#endif
}

void FdfdTimeDomainPreconditioner::step_to_steady_state(FdtdEngine& eng, DftMonitor& mon,
                                                        TimeDomainApplyStats& st,
                                                        const std::function<bool()>& keep_going,
                                                        double tol) const {
    const int window = o_.periods_per_check * period_steps_;
    mon.check_steady_state();  // S = 0 at t = 0: the first window starts now
    while (st.periods + o_.periods_per_check <= o_.max_periods) {
      eng.run(window);
      st.steps += window;
      st.periods += o_.periods_per_check;
      const SteadyStateCheck c = mon.check_steady_state();
      if (c.has_previous) {
        st.last_change = c.relative_change;
        if (c.relative_change <= tol && st.periods >= o_.ramp_periods + 2 * o_.periods_per_check) {
          st.settled = true;
          break;
        }
      }
      if (!std::isfinite(c.relative_change))
        fail("FDFD time-domain preconditioner: the FDTD run became non-finite after ", st.periods,
             " periods (", st.steps, " steps of ", dt_, " s on ", backend_name_, ")");
      if (keep_going && !keep_going()) {
        st.stopped = true;
        break;
      }
    }
}

TimeDomainApplyStats FdfdTimeDomainPreconditioner::apply(const std::vector<cdouble>& v,
                                                         std::vector<cdouble>& z,
                                                         const std::function<bool()>& keep_going,
                                                         double steady_tolerance) {
  const double tol = steady_tolerance > 0 ? steady_tolerance : o_.steady_tolerance;
  const auto t0 = std::chrono::steady_clock::now();
  const YeeGrid& g = op_.grid();
  const std::int64_t N = op_.cells();
  if (std::int64_t(v.size()) != 3 * N)
    fail("FDFD time-domain preconditioner: vector of ", v.size(), " entries, expected 3 N = ", 3 * N);
  const std::size_t nxp = g.nx + 1, nyp = g.ny + 1;
  const std::size_t compact = nxp * nyp * (g.nz + 1);
  std::array<std::vector<std::complex<float>>, 3> j;
  for (int a = 0; a < 3; ++a) {
    j[a].assign(compact, std::complex<float>(0.0f));
    std::complex<float>* out = j[a].data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int jj = 0; jj < g.ny; ++jj)
        for (int i = 0; i < g.nx; ++i) {
          const std::int64_t q = a * N + op_.linear(i, jj, k);
          const cdouble s = jscale_[q] * v[q];
          out[i + nxp * (jj + nyp * k)] = std::complex<float>(float(s.real()), float(s.imag()));
        }
  }

  TimeDomainApplyStats st;
  {
    auto eng = make_engine(*fdtd_, backend_, device_, nullptr, o_.tuning);
    DftMonitor mon(*eng, {f_run_}, {Component::Ex, Component::Ey, Component::Ez}, {}, sample_interval_);
    HarmonicCurrentSource src(*eng, f_run_, j, o_.ramp_periods);
    const auto t1 = std::chrono::steady_clock::now();
    st.prepare_seconds = std::chrono::duration<double>(t1 - t0).count();
    step_to_steady_state(*eng, mon, st, keep_going, tol);
    const auto t2 = std::chrono::steady_clock::now();
    st.step_seconds = std::chrono::duration<double>(t2 - t1).count();
    z.assign(3 * N, cdouble(0));
    if (st.periods >= 1) {  // a window exists
      for (int a = 0; a < 3; ++a) {
        // The monitor's box is the whole grid, so its layout is the compact one.
        const std::vector<std::complex<float>> ph = mon.box_phasor(Component(a), 0);
#pragma omp parallel for collapse(2) schedule(static)
        for (int k = 0; k < g.nz; ++k)
          for (int jj = 0; jj < g.ny; ++jj)
            for (int i = 0; i < g.nx; ++i) {
              const std::int64_t q = a * N + op_.linear(i, jj, k);
              if (op_.is_wall(a, i, jj, k)) {
                z[q] = v[q];
              } else {
                const std::complex<float> e = ph[i + nxp * (jj + nyp * k)];
                z[q] = cdouble(e.real(), e.imag());
              }
            }
      }
    }
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace vem
