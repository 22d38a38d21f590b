// The FDTD-driven preconditioner of the FDFD solver (fdfd_time_domain.h).
#include "vem/fdfd/fdfd_time_domain.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/core/error.h"
#include "vem/fdtd/extensions/harmonic_current.h"
#include "fdfd/fdfd_time_domain_device.h"

namespace vem {

void FdfdTimeDomainOptions::validate() const {
  if (!(steady_tolerance > 0 && steady_tolerance < 1))
    fail("FdfdTimeDomainOptions::steady_tolerance = ", steady_tolerance, ": must lie in (0, 1)");
  if (periods_per_check < 1)
    fail("FdfdTimeDomainOptions::periods_per_check = ", periods_per_check, ": must be >= 1");
  if (max_periods < 2 * periods_per_check)
    fail("FdfdTimeDomainOptions::max_periods = ", max_periods,
         ": must be >= 2 periods_per_check = ", 2 * periods_per_check, " (two windows to compare)");
  if (!(ramp_periods >= 0) || !std::isfinite(ramp_periods))
    fail("FdfdTimeDomainOptions::ramp_periods = ", ramp_periods, ": must be finite and >= 0");
  if (!(courant_factor > 0 && courant_factor <= 1))
    fail("FdfdTimeDomainOptions::courant_factor = ", courant_factor, ": must lie in (0, 1]");
  if (gcr_restart < 1)
    fail("FdfdTimeDomainOptions::gcr_restart = ", gcr_restart, ": must be >= 1");
}

FdfdTimeDomainPreconditioner::FdfdTimeDomainPreconditioner(const FdfdOperator& op,
                                                           const FdfdTimeDomainOptions& o,
                                                           Backend backend, int device_index)
    : op_(op), o_(o), backend_(backend), device_(device_index) {
  o.validate();
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

  // The factor S / v = cb J / v = cb (-j w_t eps0 eps_c) per E sample (J from v: header; cb the
  // engine's, as harmonic_current.h applies it), so one pass turns a residual into source
  // amplitudes; 0 on the walls (identity rows) and outside the component's update range.
  const std::int64_t N = op.cells();
  std::vector<std::complex<float>> factors(3 * N);
  for (int a = 0; a < 3; ++a) {
    const Component c = Component(a);
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
          const bool inside = !op.is_wall(a, i, j, k) && i >= fdtd_->range_lo(c, 0) &&
                              i <= fdtd_->range_hi(c, 0) && j >= fdtd_->range_lo(c, 1) &&
                              j <= fdtd_->range_hi(c, 1) && k >= fdtd_->range_lo(c, 2) &&
                              k <= fdtd_->range_hi(c, 2);
          const cdouble f = inside ? double(fdtd_->coefficients_at(c, i, j, k)[1]) *
                                         cdouble(0, -wt * kEps0) * op.eps_at(a, i, j, k)
                                   : cdouble(0);
          factors[a * N + op.linear(i, j, k)] = std::complex<float>(float(f.real()), float(f.imag()));
        }
  }
  const FieldLayout& L = fdtd_->layout();
  map_ = {g.nx, g.ny, g.nz, (long long)L.sy, (long long)L.sz, (long long)L.origin};

  // The engine make_engine() picks; no engine is built here.
  if (backend_ == Backend::automatic) backend_ = cuda_available() ? Backend::cuda : Backend::cpu;
  backend_name_ = backend_name(backend_);
  if (backend_ == Backend::cuda) {
#ifdef VEM_WITH_CUDA
    factors_dev_ = fdfd_td::upload(factors.data(), factors.size() * sizeof(factors[0]));
#else
    fail("FDFD time-domain preconditioner: the CUDA backend needs a build with CUDA");
#endif
  } else {
    factors_ = std::move(factors);
  }
}

FdfdTimeDomainPreconditioner::~FdfdTimeDomainPreconditioner() {
#ifdef VEM_WITH_CUDA
  if (factors_dev_) fdfd_td::release(factors_dev_);
#endif
}

TimeDomainApplyStats FdfdTimeDomainPreconditioner::apply(const std::vector<cdouble>& v,
                                                         std::vector<cdouble>& z,
                                                         const std::function<bool()>& keep_going,
                                                         double steady_tolerance) {
  const std::int64_t n = 3 * op_.cells();
  if (std::int64_t(v.size()) != n)
    fail("FDFD time-domain preconditioner: vector of ", v.size(), " entries, expected 3 N = ", n);
  z.assign(n, cdouble(0));
  if (!device_path()) return run(v.data(), z.data(), keep_going, steady_tolerance);
#ifdef VEM_WITH_CUDA
  // Host vectors with the CUDA engine: through device copies.
  const std::size_t bytes = std::size_t(n) * sizeof(cdouble);
  void* vd = fdfd_td::upload(v.data(), bytes);
  void* zd = fdfd_td::upload(z.data(), bytes);
  TimeDomainApplyStats st;
  try {
    st = run(vd, zd, keep_going, steady_tolerance);
  } catch (...) {
    fdfd_td::release(vd);
    fdfd_td::release(zd);
    throw;
  }
  fdfd_td::download(zd, z.data(), bytes);
  fdfd_td::release(vd);
  fdfd_td::release(zd);
  return st;
#else
  fail("FDFD time-domain preconditioner: the CUDA backend needs a build with CUDA");
#endif
}

TimeDomainApplyStats FdfdTimeDomainPreconditioner::apply_device(const void* v, void* z,
                                                                const std::function<bool()>& keep_going,
                                                                double steady_tolerance) {
  if (!device_path()) fail("FDFD time-domain preconditioner: the device path needs the CUDA FDTD engine");
  return run(v, z, keep_going, steady_tolerance);
}

// One application, where the engine keeps its fields: v, z are complex128 vectors in that memory
// (host for the CPU engine, device for CUDA); scatter and gather are the host loops below or their
// CUDA twins (fdfd_time_domain_cuda.cu).
TimeDomainApplyStats FdfdTimeDomainPreconditioner::run(const void* v, void* z,
                                                       const std::function<bool()>& keep_going,
                                                       double steady_tolerance) {
  const auto t0 = std::chrono::steady_clock::now();
  const double tol = steady_tolerance > 0 ? steady_tolerance : o_.steady_tolerance;
  TimeDomainApplyStats st;
  auto eng = make_engine(*fdtd_, backend_, device_, nullptr, o_.tuning);
  backend_name_ = eng->backend();
  DftMonitor mon(*eng, {f_run_}, {Component::Ex, Component::Ey, Component::Ez}, {}, sample_interval_);
  HarmonicCurrentSource src(*eng, f_run_, o_.ramp_periods);
  float* const amp[3] = {src.amplitude_data(0), src.amplitude_data(1), src.amplitude_data(2)};
  if (device_path()) {
#ifdef VEM_WITH_CUDA
    fdfd_td::scatter(map_, factors_dev_, v, amp);
#endif
  } else {
    fdfd_td::scatter_host(map_, factors_.data(), static_cast<const cdouble*>(v), amp);
  }
  const auto t1 = std::chrono::steady_clock::now();
  st.prepare_seconds = std::chrono::duration<double>(t1 - t0).count();
  step_to_steady_state(*eng, mon, st, keep_going, tol);
  const auto t2 = std::chrono::steady_clock::now();
  st.step_seconds = std::chrono::duration<double>(t2 - t1).count();
  if (st.periods >= 1) {
    const std::complex<float>* ph[3] = {mon.phasor_data(Component::Ex, 0), mon.phasor_data(Component::Ey, 0),
                                        mon.phasor_data(Component::Ez, 0)};
    if (device_path()) {
#ifdef VEM_WITH_CUDA
      fdfd_td::gather(map_, ph, v, z);
#endif
    } else {
      fdfd_td::gather_host(map_, ph, static_cast<const cdouble*>(v), static_cast<cdouble*>(z));
    }
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
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

namespace fdfd_td {

namespace {

// Calls f(a, i, j, k, q) for every FDFD unknown: component a, cell (i,j,k), vector index q
// (component-major, x fastest; the host twins of the CUDA kernels' thread mapping).
template <class F>
void for_each_unknown(const LayoutMap& m, F&& f) {
  const std::int64_t N = std::int64_t(m.nx) * m.ny * m.nz;
  for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < m.nz; ++k)
      for (int j = 0; j < m.ny; ++j)
        for (int i = 0; i < m.nx; ++i)
          f(a, i, j, k, a * N + i + std::int64_t(m.nx) * (j + std::int64_t(m.ny) * k));
}

}  // namespace

void scatter_host(const LayoutMap& m, const std::complex<float>* g, const cdouble* v, float* const s[3]) {
  for_each_unknown(m, [&](int a, int i, int j, int k, std::int64_t q) {
    const std::complex<float> y = g[q] * std::complex<float>(float(v[q].real()), float(v[q].imag()));
    float* out = s[a] + 2 * (m.origin + i + j * m.sy + k * m.sz);
    out[0] = y.real();
    out[1] = y.imag();
  });
}

void gather_host(const LayoutMap& m, const std::complex<float>* const p[3], const cdouble* v, cdouble* z) {
  for_each_unknown(m, [&](int a, int i, int j, int k, std::int64_t q) {
    const int idx[3] = {i, j, k};
    if (idx[(a + 1) % 3] == 0 || idx[(a + 2) % 3] == 0) {  // PEC wall sample: identity row
      z[q] = v[q];
      return;
    }
    const std::complex<float> e = p[a][i + std::int64_t(m.nx + 1) * (j + std::int64_t(m.ny + 1) * k)];
    z[q] = cdouble(e.real(), e.imag());
  });
}

}  // namespace fdfd_td

}  // namespace vem
