// FdfdOperator: materials, SC-PML profiles, coefficients (CAS values, CIS tables), right-hand
// side, diagonal, symmetrizer and the double-precision reference product. Equations in
// fdfd_operator.h.
#include "vem/fdfd/fdfd_operator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "fdfd/fdfd_stencil.h"
#include "vem/core/error.h"

namespace vem {

namespace {

constexpr cdouble kJ{0.0, 1.0};

// Coefficients computed on the fly from the operator (host reference; not for speed).
struct OperatorCoefficients {
  const FdfdOperator* op;
  int nx, ny;
  static fdfd::Pair<double> convert(const CoefficientPair& p) {
    return {{p.c1.real(), p.c1.imag()}, {p.c2.real(), p.c2.imag()}};
  }
  void ijk(std::int64_t idx, int& i, int& j, int& k) const {
    i = int(idx % nx);
    const std::int64_t r = idx / nx;
    j = int(r % ny);
    k = int(r / ny);
  }
  template <int A> fdfd::Pair<double> hget(std::int64_t idx) const {
    int i, j, k;
    ijk(idx, i, j, k);
    return convert(op->h_coefficients(A, i, j, k));
  }
  template <int A> fdfd::Pair<double> eget(std::int64_t idx) const {
    int i, j, k;
    ijk(idx, i, j, k);
    return convert(op->e_coefficients(A, i, j, k));
  }
};

fdfd::Dims dims_of(const YeeGrid& g) {
  fdfd::Dims d;
  d.n[0] = g.nx; d.n[1] = g.ny; d.n[2] = g.nz;
  d.s[0] = 1; d.s[1] = g.nx; d.s[2] = std::int64_t(g.nx) * g.ny;
  d.cells = g.cell_count();
  return d;
}

// Hash of a coefficient pair by its bit pattern (exact de-duplication).
struct PairKey {
  std::uint64_t w[4];
  bool operator==(const PairKey& o) const { return std::memcmp(w, o.w, sizeof w) == 0; }
};
struct PairKeyHash {
  std::size_t operator()(const PairKey& k) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::uint64_t v : k.w) h = (h ^ v) * 1099511628211ull ^ (v >> 29);
    return std::size_t(h);
  }
};
PairKey key_of(const CoefficientPair& p) {
  PairKey k;
  const double v[4] = {p.c1.real(), p.c1.imag(), p.c2.real(), p.c2.imag()};
  std::memcpy(k.w, v, sizeof v);
  return k;
}

const Component kEComp[3] = {Component::Ex, Component::Ey, Component::Ez};
const Component kHComp[3] = {Component::Hx, Component::Hy, Component::Hz};

}  // namespace

FdfdOperator::FdfdOperator(const FdfdProblem& problem) : p_(problem) {
  p_.validate();
  n_ = p_.grid.cell_count();
  omega_ = 2.0 * kPi * p_.frequency;
  k0_ = omega_ / kC0;
  if (p_.material_mode == MaterialMode::indexed) {
    for (const Material& m : p_.materials) {
      std::array<cdouble, 3> e, u;
      for (int a = 0; a < 3; ++a) {
        e[a] = cdouble(m.eps_r[a], -m.sigma_e[a] / (omega_ * kEps0));
        u[a] = cdouble(m.mu_r[a], -m.sigma_m[a] / (omega_ * kMu0));
      }
      mat_eps_.push_back(e);
      mat_mu_.push_back(u);
    }
  }
  build_stretch();
  check_pml_material();
  build_cis();
}

cdouble FdfdOperator::cell_eps(int a, std::int64_t cell) const {
  if (p_.material_mode == MaterialMode::indexed) {
    const int m = p_.material_index.empty() ? 0 : p_.material_index[cell];
    return mat_eps_[m][a];
  }
  const PerCellMedium& md = p_.medium;
  const double er = md.eps_r[md.eps_r.size() == 3 ? a : 0][cell];
  const double se = md.sigma_e.empty() ? 0.0 : md.sigma_e[md.sigma_e.size() == 3 ? a : 0][cell];
  return {er, -se / (omega_ * kEps0)};
}

cdouble FdfdOperator::cell_mu(int a, std::int64_t cell) const {
  if (p_.material_mode == MaterialMode::indexed) {
    const int m = p_.material_index.empty() ? 0 : p_.material_index[cell];
    return mat_mu_[m][a];
  }
  const PerCellMedium& md = p_.medium;
  const double ur = md.mu_r.empty() ? 1.0 : md.mu_r[md.mu_r.size() == 3 ? a : 0][cell];
  const double sm = md.sigma_m.empty() ? 0.0 : md.sigma_m[md.sigma_m.size() == 3 ? a : 0][cell];
  return {ur, -sm / (omega_ * kMu0)};
}

cdouble FdfdOperator::eps_at(int a, int i, int j, int k) const {
  const bool avg = p_.material_mode == MaterialMode::indexed ? p_.average_at_edges
                                                               : p_.medium.average_at_edges;
  if (!avg) return cell_eps(a, linear(i, j, k));
  // Average over the cells sharing the edge: along b and c the cells q-1 and q (when inside).
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  cdouble sum = 0.0;
  int count = 0;
  for (int db = -1; db <= 0; ++db)
    for (int dc = -1; dc <= 0; ++dc) {
      int q[3] = {i, j, k};
      q[b] += db;
      q[c] += dc;
      if (q[b] < 0 || q[b] >= n[b] || q[c] < 0 || q[c] >= n[c]) continue;
      sum += cell_eps(a, linear(q[0], q[1], q[2]));
      ++count;
    }
  return sum / double(count);
}

cdouble FdfdOperator::mu_at(int a, int i, int j, int k) const {
  const bool avg = p_.material_mode == MaterialMode::indexed ? p_.average_at_edges
                                                               : p_.medium.average_at_edges;
  if (!avg) return cell_mu(a, linear(i, j, k));
  // Harmonic mean over the two cells sharing the face (the component is normal to it).
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  cdouble inv = 0.0;
  int count = 0;
  for (int da = -1; da <= 0; ++da) {
    int q[3] = {i, j, k};
    q[a] += da;
    if (q[a] < 0 || q[a] >= n[a]) continue;
    inv += 1.0 / cell_mu(a, linear(q[0], q[1], q[2]));
    ++count;
  }
  return double(count) / inv;
}

void FdfdOperator::build_stretch() {
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  const double d[3] = {p_.grid.dx, p_.grid.dy, p_.grid.dz};
  const double m = p_.pml.grading_order;
  for (int a = 0; a < 3; ++a) {
    const int lo = p_.pml.thickness[2 * a], hi = p_.pml.thickness[2 * a + 1];
    // Depth in half cells, an exact integer, so equal layers give bit-identical profiles.
    auto stretch = [&](int half_pos) -> cdouble {
      int depth = 0, L = 0;
      if (lo > 0 && half_pos < 2 * lo) {
        depth = 2 * lo - half_pos;
        L = lo;
      } else if (hi > 0 && half_pos > 2 * (n[a] - hi)) {
        depth = half_pos - 2 * (n[a] - hi);
        L = hi;
      }
      if (L == 0) return 1.0;
      const double rho = double(depth) / double(2 * L);
      const double g = std::pow(rho, m);
      const double sigma_max = -(m + 1.0) * std::log(p_.pml.reflection) / (2.0 * kEta0 * L * d[a]);
      const double kappa = 1.0 + (p_.pml.kappa_max - 1.0) * g;
      return cdouble(kappa, -sigma_max * g / (omega_ * kEps0));
    };
    se_[a].resize(n[a] + 1);
    sh_[a].resize(n[a]);
    for (int q = 0; q <= n[a]; ++q) se_[a][q] = stretch(2 * q);
    for (int q = 0; q < n[a]; ++q) sh_[a][q] = stretch(2 * q + 1);
  }
}

void FdfdOperator::check_pml_material() {
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  const auto& t = p_.pml.thickness;
  bool found = false;
#pragma omp parallel for collapse(2) schedule(static) reduction(|| : found)
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const bool in = i < t[0] || i >= n[0] - t[1] || j < t[2] || j >= n[1] - t[3] ||
                        k < t[4] || k >= n[2] - t[5];
        if (!in || found) continue;
        const std::int64_t c = linear(i, j, k);
        for (int a = 0; a < 3; ++a)
          if (cell_eps(a, c) != cdouble(1.0) || cell_mu(a, c) != cdouble(1.0)) found = true;
      }
  material_in_pml_ = found;
}

bool FdfdOperator::is_wall(int a, int i, int j, int k) const {
  const int p[3] = {i, j, k};
  return p[(a + 1) % 3] == 0 || p[(a + 2) % 3] == 0;
}

CoefficientPair FdfdOperator::h_coefficients(int a, int i, int j, int k) const {
  const int p[3] = {i, j, k};
  if (p[a] == 0) return {0.0, 0.0};  // H normal to the wall: t = 0 there
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const double d[3] = {p_.grid.dx, p_.grid.dy, p_.grid.dz};
  const cdouble kmu = k0_ * mu_at(a, i, j, k);
  return {1.0 / (kmu * sh_[b][p[b]] * d[b]), 1.0 / (kmu * sh_[c][p[c]] * d[c])};
}

CoefficientPair FdfdOperator::e_coefficients(int a, int i, int j, int k) const {
  if (is_wall(a, i, j, k)) return {0.0, 0.0};
  const int p[3] = {i, j, k};
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const double d[3] = {p_.grid.dx, p_.grid.dy, p_.grid.dz};
  const cdouble keps = k0_ * eps_at(a, i, j, k);
  return {1.0 / (keps * se_[b][p[b]] * d[b]), 1.0 / (keps * se_[c][p[c]] * d[c])};
}

void FdfdOperator::build_cis() {
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  for (int stage = 0; stage < 2; ++stage) {
    std::unordered_map<PairKey, std::uint32_t, PairKeyHash> seen;
    std::vector<CoefficientPair>& table = stage == 0 ? h_table_ : e_table_;
    for (int a = 0; a < 3; ++a) {
      std::vector<std::uint16_t>& index = stage == 0 ? h_index_[a] : e_index_[a];
      index.resize(n_);
      PairKey last{};
      std::uint32_t last_id = 0;
      bool have_last = false;
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) {
            const CoefficientPair cp =
                stage == 0 ? h_coefficients(a, i, j, k) : e_coefficients(a, i, j, k);
            const PairKey key = key_of(cp);
            std::uint32_t id;
            if (have_last && key == last) {
              id = last_id;
            } else {
              auto it = seen.find(key);
              if (it == seen.end()) {
                if (table.size() >= kFdfdCisMaxEntries) {
                  cis_ok_ = false;
                  cis_why_ = std::string("more than ") + std::to_string(kFdfdCisMaxEntries) +
                             " unique " + (stage == 0 ? "H" : "E") +
                             "-stage coefficient pairs (16-bit indices)";
                  h_table_.clear(); e_table_.clear();
                  for (auto& v : h_index_) std::vector<std::uint16_t>().swap(v);
                  for (auto& v : e_index_) std::vector<std::uint16_t>().swap(v);
                  return;
                }
                id = std::uint32_t(table.size());
                seen.emplace(key, id);
                table.push_back(cp);
              } else {
                id = it->second;
              }
              last = key;
              last_id = id;
              have_last = true;
            }
            index[linear(i, j, k)] = std::uint16_t(id);
          }
    }
  }
  cis_ok_ = true;
}

namespace {

// The incident E (magnetic = false) or H at the sample positions of the FDFD unknowns (3 N
// values, component blocks; fdfd_problem.h).
std::vector<cdouble> incident_on_grid(const FdfdProblem& p, bool magnetic) {
  const YeeGrid& g = p.grid;
  const std::int64_t n = g.cell_count();
  std::vector<cdouble> v(3 * n);
  const auto org = phase_origin(p);
  for (int a = 0; a < 3; ++a) {
    const Component c = magnetic ? kHComp[a] : kEComp[a];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < g.nz; ++k)
      for (int j = 0; j < g.ny; ++j)
        for (int i = 0; i < g.nx; ++i) {
          const auto r = g.position(c, i, j, k);
          const auto f = magnetic ? vem::incident_h(p.incident, org, p.frequency, r)
                                  : vem::incident_e(p.incident, org, p.frequency, r);
          v[a * n + i + std::int64_t(g.nx) * (j + std::int64_t(g.ny) * k)] = f[a];
        }
  }
  return v;
}

}  // namespace

std::vector<cdouble> FdfdOperator::incident_e() const { return incident_on_grid(p_, false); }

std::vector<cdouble> FdfdOperator::incident_h() const { return incident_on_grid(p_, true); }

std::vector<cdouble> FdfdOperator::rhs() const {
  const int nx = p_.grid.nx, ny = p_.grid.ny, nz = p_.grid.nz;
  const std::vector<cdouble> einc = incident_e();
  // g = eta0 (1/mu - 1) H_inc, only where mu != 1.
  bool magnetic = false;
  for (int a = 0; a < 3 && !magnetic; ++a)
    for (int k = 0; k < nz && !magnetic; ++k)
      for (int j = 0; j < ny && !magnetic; ++j)
        for (int i = 0; i < nx; ++i)
          if (mu_at(a, i, j, k) != cdouble(1.0)) {
            magnetic = true;
            break;
          }
  std::vector<cdouble> g;
  if (magnetic) {
    g = incident_h();
    for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
      for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) {
            cdouble& v = g[a * n_ + linear(i, j, k)];
            v *= kEta0 * (1.0 / mu_at(a, i, j, k) - 1.0);
          }
  }
  std::vector<cdouble> b(3 * n_, 0.0);
  const std::int64_t s[3] = {1, nx, std::int64_t(nx) * ny};
  for (int a = 0; a < 3; ++a) {
    const int bb = (a + 1) % 3, cc = (a + 2) % 3;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          if (is_wall(a, i, j, k)) continue;
          const std::int64_t idx = linear(i, j, k);
          cdouble v = (1.0 / eps_at(a, i, j, k) - 1.0) * einc[a * n_ + idx];
          if (magnetic) {
            const CoefficientPair e = e_coefficients(a, i, j, k);
            const cdouble* gc = g.data() + cc * n_;
            const cdouble* gb = g.data() + bb * n_;
            v -= kJ * (e.c1 * (gc[idx] - gc[idx - s[bb]]) - e.c2 * (gb[idx] - gb[idx - s[cc]]));
          }
          b[a * n_ + idx] = v;
        }
  }
  return b;
}

std::vector<cdouble> FdfdOperator::diagonal() const {
  const int nx = p_.grid.nx, ny = p_.grid.ny, nz = p_.grid.nz;
  std::vector<cdouble> dg(3 * n_, 1.0);
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          if (is_wall(a, i, j, k)) continue;
          const int p[3] = {i, j, k};
          int qb[3] = {i, j, k}, qc[3] = {i, j, k};
          qb[b] -= 1;
          qc[c] -= 1;
          const CoefficientPair e = e_coefficients(a, i, j, k);
          const cdouble hc = h_coefficients(c, p[0], p[1], p[2]).c2 +
                             h_coefficients(c, qb[0], qb[1], qb[2]).c2;
          const cdouble hb = h_coefficients(b, p[0], p[1], p[2]).c1 +
                             h_coefficients(b, qc[0], qc[1], qc[2]).c1;
          dg[a * n_ + linear(i, j, k)] = 1.0 - e.c1 * hc - e.c2 * hb;
        }
  }
  return dg;
}

std::vector<cdouble> FdfdOperator::symmetrizer() const {
  const int nx = p_.grid.nx, ny = p_.grid.ny, nz = p_.grid.nz;
  std::vector<cdouble> w(3 * n_, 1.0);
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const int p[3] = {i, j, k};
          w[a * n_ + linear(i, j, k)] =
              sh_[a][p[a]] * se_[b][p[b]] * se_[c][p[c]] * eps_at(a, i, j, k);
        }
  }
  return w;
}

void FdfdOperator::apply(const cdouble* x, cdouble* y) const {
  using C = fdfd::Cx<double>;
  const fdfd::Dims d = dims_of(p_.grid);
  const OperatorCoefficients coef{this, p_.grid.nx, p_.grid.ny};
  const C* cx = reinterpret_cast<const C*>(x);
  C* cy = reinterpret_cast<C*>(y);
  std::vector<C> t(3 * n_);
  const int nx = d.n[0], ny = d.n[1], nz = d.n[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const std::int64_t idx = linear(i, j, k);
        t[idx] = fdfd::h_stage<0>(cx, d, i, j, k, idx, coef);
        t[n_ + idx] = fdfd::h_stage<1>(cx, d, i, j, k, idx, coef);
        t[2 * n_ + idx] = fdfd::h_stage<2>(cx, d, i, j, k, idx, coef);
      }
  const fdfd::StoredT<double> ts{t.data(), n_};
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const std::int64_t idx = linear(i, j, k);
        cy[idx] = fdfd::e_stage<0>(cx, d, i, j, k, idx, coef, ts);
        cy[n_ + idx] = fdfd::e_stage<1>(cx, d, i, j, k, idx, coef, ts);
        cy[2 * n_ + idx] = fdfd::e_stage<2>(cx, d, i, j, k, idx, coef, ts);
      }
}

namespace {
// Node weights m(n) = 36 c W_n / S^2 (zero off the interior nodes) and g_a = eps_a s_b^e s_c^e
// at every E sample, for the grad-div term (fdfd_operator.h; fdfd_stencil.h has the same
// arithmetic from the coefficients).
struct GradDivHost {
  std::vector<cdouble> m, g;  // N, 3 N
};
}  // namespace

static GradDivHost grad_div_host(const FdfdOperator& op, double s) {
  const YeeGrid& gr = op.grid();
  const int n[3] = {gr.nx, gr.ny, gr.nz};
  const std::int64_t N = op.cells();
  const double c = s / (op.k0() * op.k0());
  GradDivHost h;
  h.g.assign(3 * N, 0.0);
  h.m.assign(N, 0.0);
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, cc = (a + 2) % 3;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) {
          if (op.is_wall(a, i, j, k)) continue;
          const int p[3] = {i, j, k};
          h.g[a * N + op.linear(i, j, k)] =
              op.eps_at(a, i, j, k) * op.stretch_e(b, p[b]) * op.stretch_e(cc, p[cc]);
        }
  }
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 1; k < n[2]; ++k)
    for (int j = 1; j < n[1]; ++j)
      for (int i = 1; i < n[0]; ++i) {
        const int p[3] = {i, j, k};
        const std::int64_t idx = op.linear(i, j, k);
        const std::int64_t st[3] = {1, n[0], std::int64_t(n[0]) * n[1]};
        cdouble sum = 0.0;
        for (int a = 0; a < 3; ++a)
          sum += op.stretch_e(a, p[a]) * (h.g[a * N + idx] + h.g[a * N + idx - st[a]]);
        const cdouble w = op.stretch_e(0, i) * op.stretch_e(1, j) * op.stretch_e(2, k);
        h.m[idx] = 36.0 * c * w / (sum * sum);
      }
  return h;
}

void FdfdOperator::grad_div(double s, const cdouble* x, cdouble* out) const {
  const GradDivHost h = grad_div_host(*this, s);
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  const double d[3] = {p_.grid.dx, p_.grid.dy, p_.grid.dz};
  const std::int64_t st[3] = {1, n[0], std::int64_t(n[0]) * n[1]};
  std::vector<cdouble> phi(n_, 0.0);
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 1; k < n[2]; ++k)
    for (int j = 1; j < n[1]; ++j)
      for (int i = 1; i < n[0]; ++i) {
        const std::int64_t idx = linear(i, j, k);
        cdouble div = 0.0;
        for (int a = 0; a < 3; ++a) {
          const std::int64_t q = a * n_ + idx;
          div += (h.g[q] * x[q] - h.g[q - st[a]] * x[q - st[a]]) / d[a];
        }
        phi[idx] = h.m[idx] * div;
      }
  for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) {
          const int p[3] = {i, j, k};
          const std::int64_t idx = linear(i, j, k);
          const cdouble f1 = p[a] + 1 == n[a] ? cdouble(0.0) : phi[idx + st[a]];
          out[a * n_ + idx] = (f1 - phi[idx]) / (sh_[a][p[a]] * d[a]);
        }
}

std::vector<cdouble> FdfdOperator::grad_div_diagonal(double s) const {
  const GradDivHost h = grad_div_host(*this, s);
  const int n[3] = {p_.grid.nx, p_.grid.ny, p_.grid.nz};
  const double d[3] = {p_.grid.dx, p_.grid.dy, p_.grid.dz};
  const std::int64_t st[3] = {1, n[0], std::int64_t(n[0]) * n[1]};
  std::vector<cdouble> dg(3 * n_, 0.0);
  for (int a = 0; a < 3; ++a)
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) {
          const int p[3] = {i, j, k};
          const std::int64_t idx = linear(i, j, k);
          // x_a(p) enters phi(p) with + m(p) g / d_a and phi(p + e_a) with - m(p + e_a) g / d_a.
          const cdouble m1 = p[a] + 1 == n[a] ? cdouble(0.0) : h.m[idx + st[a]];
          dg[a * n_ + idx] = -h.g[a * n_ + idx] * (h.m[idx] + m1) / (sh_[a][p[a]] * d[a] * d[a]);
        }
  return dg;
}

std::vector<cdouble> FdfdOperator::scattered_h(const std::vector<cdouble>& e_scat) const {
  if (std::int64_t(e_scat.size()) != 3 * n_)
    fail("FDFD: scattered E has ", e_scat.size(), " entries; expected 3 N = ", 3 * n_);
  using C = fdfd::Cx<double>;
  const fdfd::Dims d = dims_of(p_.grid);
  const OperatorCoefficients coef{this, p_.grid.nx, p_.grid.ny};
  const C* cx = reinterpret_cast<const C*>(e_scat.data());
  std::vector<cdouble> h = incident_h();
  const int nx = d.n[0], ny = d.n[1], nz = d.n[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const std::int64_t idx = linear(i, j, k);
        const C t[3] = {fdfd::h_stage<0>(cx, d, i, j, k, idx, coef),
                        fdfd::h_stage<1>(cx, d, i, j, k, idx, coef),
                        fdfd::h_stage<2>(cx, d, i, j, k, idx, coef)};
        for (int a = 0; a < 3; ++a) {
          // eta0 H_s = j t + eta0 (1/mu - 1) H_inc
          cdouble& v = h[a * n_ + idx];
          const cdouble tm(t[a].re, t[a].im);
          v = kJ * tm / kEta0 + (1.0 / mu_at(a, i, j, k) - 1.0) * v;
        }
      }
  return h;
}

}  // namespace vem
