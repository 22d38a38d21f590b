// CPU backend of the FDFD solver (OpenMP): the reference and the fallback. Runs the same Krylov
// templates and the same stencil as the CUDA backend; reductions accumulate in double.
#include <omp.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "fdfd/fdfd_backend.h"
#include "fdfd/fdfd_stencil.h"
#include "vem/core/error.h"

namespace vem {
namespace fdfd {

namespace {

template <class T>
Cx<T> to_cx(cdouble v) {
  return {T(v.real()), T(v.imag())};
}
template <class T>
cdouble to_cd(Cx<T> v) {
  return {double(v.re), double(v.im)};
}

template <class T>
class CpuOps {
 public:
  static constexpr bool kOnDevice = false;  // vectors live in host memory
  using C = Cx<T>;

  CpuOps(const FdfdOperator& op, FdfdStorage storage, FdfdMatvec mv, bool grad_div = false,
         double scale = 1.0)
      : op_(op), storage_(storage), mv_(mv), reg_(grad_div) {
    const YeeGrid& g = op.grid();
    d_.n[0] = g.nx; d_.n[1] = g.ny; d_.n[2] = g.nz;
    d_.s[0] = 1; d_.s[1] = g.nx; d_.s[2] = std::int64_t(g.nx) * g.ny;
    d_.cells = g.cell_count();
    n_ = 3 * d_.cells;
    if (storage == FdfdStorage::cas) {
      for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s) {
          hcas_[a][s].resize(d_.cells);
          ecas_[a][s].resize(d_.cells);
        }
      for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s) {
          cas_coefficients<T>(op, 0, a, s, hcas_[a][s].data());
          cas_coefficients<T>(op, 1, a, s, ecas_[a][s].data());
        }
      for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s) {
          cas_.h[a][s] = hcas_[a][s].data();
          cas_.e[a][s] = ecas_[a][s].data();
        }
      coef_bytes_ = 12.0 * d_.cells * sizeof(C);
    } else {
      if (!op.cis_available()) fail("FDFD: CIS storage unavailable: ", op.cis_unavailable_reason());
      for (const auto& p : op.h_table()) htab_.push_back({to_cx<T>(p.c1), to_cx<T>(p.c2)});
      for (const auto& p : op.e_table()) etab_.push_back({to_cx<T>(p.c1), to_cx<T>(p.c2)});
      for (int a = 0; a < 3; ++a) {
        cis_.hi[a] = op.h_index(a).data();
        cis_.ei[a] = op.e_index(a).data();
      }
      cis_.htab = htab_.data();
      cis_.etab = etab_.data();
      coef_bytes_ = 6.0 * d_.cells * 2 + (htab_.size() + etab_.size()) * sizeof(Pair<T>);
    }
    if (mv_ == FdfdMatvec::two_stage) t_.resize(n_);
    if (reg_) {
      prof_.reset(new GradDivProfiles<T>(op, scale));
      for (int a = 0; a < 3; ++a) {
        gd_.se[a] = prof_->se[a].data();
        gd_.gsh[a] = prof_->gsh[a].data();
        gd_.inv_d[a] = prof_->inv_d[a];
        gd_.kd[a] = prof_->kd[a];
      }
      gd_.c36 = prof_->c36;
      if (mv_ == FdfdMatvec::two_stage) phi_.resize(d_.cells);
    }
    matvec_bytes_ = matvec_bytes(storage, mv, double(d_.cells), double(sizeof(C)), reg_);
  }

  std::int64_t size() const { return n_; }
  double bytes() const { return bytes_; }
  double matvec_bytes_nominal() const { return matvec_bytes_; }
  double allocated_bytes() const {
    return coef_bytes_ + double(pool_.size() + (t_.empty() ? 0 : 1)) * n_ * sizeof(C) +
           double(phi_.size()) * sizeof(C);
  }

  C* alloc() {
    pool_.emplace_back(new C[n_]);
    C* p = pool_.back().get();
    zero(p);
    return p;
  }
  // Host data -> backend vector.
  C* upload(const std::vector<cdouble>& v) {
    C* p = alloc();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) p[i] = to_cx<T>(v[i]);
    return p;
  }
  void upload_to(const std::vector<cdouble>& v, C* p) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) p[i] = to_cx<T>(v[i]);
  }
  std::vector<cdouble> download(const C* p) const {
    std::vector<cdouble> v(n_);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) v[i] = to_cd(p[i]);
    return v;
  }

  void matvec(const C* x, C* y) {
    bytes_ += matvec_bytes_;
    if (storage_ == FdfdStorage::cas)
      matvec_with(cas_, x, y);
    else
      matvec_with(cis_, x, y);
  }

  void copy(const C* s, C* d) {
    bytes_ += 2.0 * n_ * sizeof(C);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) d[i] = s[i];
  }
  void zero(C* x) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) x[i] = cx_zero<T>();
  }
  void axpy(cdouble a, const C* x, C* y) {
    bytes_ += 3.0 * n_ * sizeof(C);
    const C ca = to_cx<T>(a);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) y[i] = cfma(ca, x[i], y[i]);
  }
  void residual(const C* b, const C* ax, C* r) {
    bytes_ += 3.0 * n_ * sizeof(C);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) r[i] = b[i] - ax[i];
  }
  void diag_mul(const C* dg, const C* x, C* y) {
    bytes_ += 3.0 * n_ * sizeof(C);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) y[i] = dg[i] * x[i];
  }
  double nrm2sq(const C* x) {
    bytes_ += 1.0 * n_ * sizeof(C);
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (std::int64_t i = 0; i < n_; ++i) s += double(x[i].re) * x[i].re + double(x[i].im) * x[i].im;
    return s;
  }
  DotNorm dotc_norm(const C* a, const C* b) {
    bytes_ += 2.0 * n_ * sizeof(C);
    double re = 0, im = 0, nn = 0;
#pragma omp parallel for schedule(static) reduction(+ : re, im, nn)
    for (std::int64_t i = 0; i < n_; ++i) {
      const double ar = a[i].re, ai = a[i].im, br = b[i].re, bi = b[i].im;
      re += ar * br + ai * bi;  // conj(a) b
      im += ar * bi - ai * br;
      nn += br * br + bi * bi;
    }
    return {{re, im}, nn};
  }
  void bicg_p(C* p, const C* r, const C* v, cdouble beta, cdouble omega) {
    bytes_ += 4.0 * n_ * sizeof(C);
    const C cb = to_cx<T>(beta), cw = to_cx<T>(-omega);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) p[i] = cfma(cb, cfma(cw, v[i], p[i]), r[i]);
  }
  double axpy_nrm2sq(cdouble a, const C* x, C* y) {
    bytes_ += 3.0 * n_ * sizeof(C);
    const C ca = to_cx<T>(a);
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (std::int64_t i = 0; i < n_; ++i) {
      const C v = cfma(ca, x[i], y[i]);
      y[i] = v;
      s += double(v.re) * v.re + double(v.im) * v.im;
    }
    return s;
  }
  DotNorm bicg_xr(C* x, const C* ph, const C* sh, C* r, const C* t, const C* r0, cdouble alpha,
                  cdouble omega) {
    const bool alias = sh == r;
    bytes_ += (alias ? 7.0 : 8.0) * n_ * sizeof(C);
    const C ca = to_cx<T>(alpha), cw = to_cx<T>(omega), cmw = to_cx<T>(-omega);
    double re = 0, im = 0, nn = 0;
#pragma omp parallel for schedule(static) reduction(+ : re, im, nn)
    for (std::int64_t i = 0; i < n_; ++i) {
      const C s = r[i];
      const C shi = sh[i];
      x[i] = cfma(cw, shi, cfma(ca, ph[i], x[i]));
      const C rn = cfma(cmw, t[i], s);
      r[i] = rn;
      const double ar = r0[i].re, ai = r0[i].im;
      re += ar * rn.re + ai * rn.im;
      im += ar * rn.im - ai * rn.re;
      nn += double(rn.re) * rn.re + double(rn.im) * rn.im;
    }
    return {{re, im}, nn};
  }
  WDot wdotu(const C* w, const C* a, const C* b) {
    bytes_ += 3.0 * n_ * sizeof(C);
    double re = 0, im = 0, ab = 0;
#pragma omp parallel for schedule(static) reduction(+ : re, im, ab)
    for (std::int64_t i = 0; i < n_; ++i) {
      const Cx<double> v = Cx<double>{double(w[i].re), double(w[i].im)} *
                           Cx<double>{double(a[i].re), double(a[i].im)} *
                           Cx<double>{double(b[i].re), double(b[i].im)};
      re += v.re;
      im += v.im;
      ab += std::fabs(v.re) + std::fabs(v.im);
    }
    return {{re, im}, ab};
  }
  WDot cocg_xr(C* x, C* r, const C* p, const C* q, const C* wm, cdouble alpha, double* rr) {
    bytes_ += (wm ? 7.0 : 6.0) * n_ * sizeof(C);
    const C ca = to_cx<T>(alpha), cma = to_cx<T>(-alpha);
    double re = 0, im = 0, ab = 0, nn = 0;
#pragma omp parallel for schedule(static) reduction(+ : re, im, ab, nn)
    for (std::int64_t i = 0; i < n_; ++i) {
      x[i] = cfma(ca, p[i], x[i]);
      const C rn = cfma(cma, q[i], r[i]);
      r[i] = rn;
      const Cx<double> rd{double(rn.re), double(rn.im)};
      nn += rd.re * rd.re + rd.im * rd.im;
      if (wm) {
        const Cx<double> v = Cx<double>{double(wm[i].re), double(wm[i].im)} * rd * rd;
        re += v.re;
        im += v.im;
        ab += std::fabs(v.re) + std::fabs(v.im);
      }
    }
    *rr = nn;
    return {{re, im}, ab};
  }
  WDot cocr_pq(C* p, C* q, const C* r, const C* ar, const C* dw, cdouble beta) {
    bytes_ += 7.0 * n_ * sizeof(C);
    const C cb = to_cx<T>(beta);
    double re = 0, im = 0, ab = 0;
#pragma omp parallel for schedule(static) reduction(+ : re, im, ab)
    for (std::int64_t i = 0; i < n_; ++i) {
      p[i] = cfma(cb, p[i], r[i]);
      const C qn = cfma(cb, q[i], ar[i]);
      q[i] = qn;
      const Cx<double> qd{double(qn.re), double(qn.im)};
      const Cx<double> v = Cx<double>{double(dw[i].re), double(dw[i].im)} * qd * qd;
      re += v.re;
      im += v.im;
      ab += std::fabs(v.re) + std::fabs(v.im);
    }
    return {{re, im}, ab};
  }
  void cocg_p(C* p, const C* minv, const C* r, cdouble beta) {
    bytes_ += (minv ? 4.0 : 3.0) * n_ * sizeof(C);
    const C cb = to_cx<T>(beta);
    if (minv) {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n_; ++i) p[i] = cfma(cb, p[i], minv[i] * r[i]);
    } else {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n_; ++i) p[i] = cfma(cb, p[i], r[i]);
    }
  }

 private:
  template <class Coef>
  void matvec_with(const Coef& coef, const C* x, C* y) {
    if (!reg_) {
      matvec_impl(coef, x, y, NoGradDiv{}, NoGradDiv{});
    } else if (mv_ == FdfdMatvec::two_stage) {
      matvec_impl(coef, x, y, StoredPhi<T>{phi_.data(), gd_}, NoGradDiv{});
    } else {
      matvec_impl(coef, x, y, NoGradDiv{}, RecomputedPhi<T, Coef>{x, coef, gd_});
    }
  }
  // Stored: the H stage writes phi, the E stage reads it; Recomputed: the fused E stage
  // recomputes phi at the nodes it needs.
  template <class Coef, class Stored, class Recomputed>
  void matvec_impl(const Coef& coef, const C* x, C* y, const Stored& stored,
                   const Recomputed& recomputed) {
    const Dims d = d_;
    const int nx = d.n[0], ny = d.n[1], nz = d.n[2];
    const std::int64_t N = d.cells;
    if (mv_ == FdfdMatvec::two_stage) {
      C* t = t_.data();
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j) {
          std::int64_t idx = d.s[2] * k + d.s[1] * j;
          for (int i = 0; i < nx; ++i, ++idx) {
            t[idx] = h_stage<0>(x, d, i, j, k, idx, coef);
            t[N + idx] = h_stage<1>(x, d, i, j, k, idx, coef);
            t[2 * N + idx] = h_stage<2>(x, d, i, j, k, idx, coef);
            if constexpr (Stored::enabled)
              phi_[idx] = grad_div_node<T, Coef>(x, d, i, j, k, idx, coef, gd_);
          }
        }
      const StoredT<T> ts{t, N};
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j) {
          std::int64_t idx = d.s[2] * k + d.s[1] * j;
          for (int i = 0; i < nx; ++i, ++idx) {
            y[idx] = e_stage_gd<0>(x, d, i, j, k, idx, coef, ts, stored);
            y[N + idx] = e_stage_gd<1>(x, d, i, j, k, idx, coef, ts, stored);
            y[2 * N + idx] = e_stage_gd<2>(x, d, i, j, k, idx, coef, ts, stored);
          }
        }
    } else {
      const RecomputedT<T, Coef> ts{x, coef};
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j) {
          std::int64_t idx = d.s[2] * k + d.s[1] * j;
          for (int i = 0; i < nx; ++i, ++idx) {
            y[idx] = e_stage_gd<0>(x, d, i, j, k, idx, coef, ts, recomputed);
            y[N + idx] = e_stage_gd<1>(x, d, i, j, k, idx, coef, ts, recomputed);
            y[2 * N + idx] = e_stage_gd<2>(x, d, i, j, k, idx, coef, ts, recomputed);
          }
        }
    }
  }

  const FdfdOperator& op_;
  FdfdStorage storage_;
  FdfdMatvec mv_;
  bool reg_ = false;
  std::unique_ptr<GradDivProfiles<T>> prof_;
  GradDiv<T> gd_{};
  std::vector<C> phi_;
  Dims d_;
  std::int64_t n_ = 0;
  std::vector<std::unique_ptr<C[]>> pool_;
  std::vector<C> t_;
  std::vector<C> hcas_[3][2], ecas_[3][2];
  CasCoefficients<T> cas_{};
  std::vector<Pair<T>> htab_, etab_;
  CisCoefficients<T> cis_{};
  double bytes_ = 0, matvec_bytes_ = 0, coef_bytes_ = 0;
};

template <class T>
BackendResult solve_cpu_t(const FdfdOperator& op, const FdfdSolverOptions& o,
                          const HostVectors& hv, const KrylovParams& kp) {
  using Clock = std::chrono::steady_clock;
  BackendResult out;
  const auto t0 = Clock::now();
  CpuOps<T> ops(op, o.storage, o.matvec, o.regularization == FdfdRegularization::grad_div,
                o.regularization_scale);
  // The time-domain preconditioner's FDTD operator is setup too (fdfd_time_domain.h).
  std::unique_ptr<FdfdTimeDomainPreconditioner> pre;
  if (o.method == FdfdMethod::gcr)
    pre = std::make_unique<FdfdTimeDomainPreconditioner>(op, o.time_domain, o.backend, o.device_index);
  using C = typename CpuOps<T>::C;
  C* b = ops.upload(hv.b);
  C* x = ops.alloc();
  C* minv = hv.minv.empty() ? nullptr : ops.upload(hv.minv);
  C* d = hv.d.empty() ? nullptr : ops.upload(hv.d);
  C* wm = hv.wm.empty() ? nullptr : ops.upload(hv.wm);
  const auto t1 = Clock::now();
  const double bytes0 = ops.bytes();
  std::vector<cdouble> xh;
  const bool refined = o.refinement == FdfdRefinement::on;
  out.krylov = refined ? refine(ops, op, o, hv, kp, b, x, minv, d, wm, xh)
               : pre   ? run_time_domain_gcr(ops, *pre, o, kp, b, x, out)
                       : run_method(ops, o.method, b, x, minv, d, wm, kp);
  const auto t2 = Clock::now();
  out.x = refined ? std::move(xh) : ops.download(x);
  out.backend = "cpu (" + std::to_string(omp_get_max_threads()) + " threads)";
  out.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
  out.solve_seconds = std::chrono::duration<double>(t2 - t1).count();
  out.bytes_per_matvec = ops.matvec_bytes_nominal();
  if (out.krylov.iterations > 0)
    out.bytes_per_iteration = (ops.bytes() - bytes0) / out.krylov.iterations;
  out.device_bytes = std::int64_t(ops.allocated_bytes());
  return out;
}

}  // namespace

template <class T>
void cas_coefficients(const FdfdOperator& op, int stage, int a, int which, Cx<T>* out) {
  const int nx = op.grid().nx, ny = op.grid().ny, nz = op.grid().nz;
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const CoefficientPair cp =
            stage == 0 ? op.h_coefficients(a, i, j, k) : op.e_coefficients(a, i, j, k);
        out[op.linear(i, j, k)] = to_cx<T>(which == 0 ? cp.c1 : cp.c2);
      }
}
template void cas_coefficients<float>(const FdfdOperator&, int, int, int, Cx<float>*);
template void cas_coefficients<double>(const FdfdOperator&, int, int, int, Cx<double>*);

template <class T>
void convert_vector(const std::vector<cdouble>& in, Cx<T>* out) {
  const std::int64_t n = std::int64_t(in.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = to_cx<T>(in[i]);
}
template void convert_vector<float>(const std::vector<cdouble>&, Cx<float>*);
template void convert_vector<double>(const std::vector<cdouble>&, Cx<double>*);

template <class T>
void convert_back(const Cx<T>* in, std::int64_t n, cdouble* out) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[i] = {double(in[i].re), double(in[i].im)};
}
template void convert_back<float>(const Cx<float>*, std::int64_t, cdouble*);
template void convert_back<double>(const Cx<double>*, std::int64_t, cdouble*);

BackendResult solve_cpu(const FdfdOperator& op, const FdfdSolverOptions& o,
                        const HostVectors& hv, const KrylovParams& kp) {
  if (o.precision == FdfdPrecision::complex128) return solve_cpu_t<double>(op, o, hv, kp);
  return solve_cpu_t<float>(op, o, hv, kp);
}

}  // namespace fdfd
}  // namespace vem
