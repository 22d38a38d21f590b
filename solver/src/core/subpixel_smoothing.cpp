// Subpixel smoothing of the permittivity (subpixel_smoothing.h).
#include "vem/core/subpixel_smoothing.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <utility>

#include "vem/core/error.h"

namespace vem {

void SubpixelOptions::validate(const char* owner) const {
  if (samples < 2 || samples > 64)
    fail(owner, "::samples = ", samples, ": the supersampling points per axis of a dual cell must be in 2..64");
  if (!std::isfinite(frequency) || frequency < 0)
    fail(owner, "::frequency = ", frequency,
         " Hz: must be finite and >= 0 (0: conductivity averaged by volume; > 0: complex averaging at that frequency)");
  if (full_tensor && diagonal != SubpixelDiagonal::inverse)
    fail(owner, "::full_tensor = true needs ", owner,
         "::diagonal = inverse (the tensor's rows keep the diagonal of eps_eff^-1 that the medium arrays hold)");
}

LabelGeometry::LabelGeometry(const VoxelPlacement& placement, const std::vector<std::uint16_t>& material_per_voxel,
                             int outside, const std::array<bool, 3>& periodic)
    : n_(placement.voxels), h_(placement.spacing), origin_(placement.voxel_origin), m_(material_per_voxel),
      outside_(outside), periodic_(periodic) {
  if (std::int64_t(m_.size()) != placement.voxel_count())
    fail("subpixel smoothing: ", m_.size(), " voxel materials for ", placement.voxel_count(), " voxels");
}

int LabelGeometry::voxel(long i, long j, long k) const {
  long* idx[3] = {&i, &j, &k};
  for (int a = 0; a < 3; ++a)
    if (periodic_[a]) *idx[a] = ((*idx[a] % n_[a]) + n_[a]) % n_[a];
  if (i < 0 || j < 0 || k < 0 || i >= n_[0] || j >= n_[1] || k >= n_[2]) return outside_;
  return m_[std::size_t(i + long(n_[0]) * (j + long(n_[1]) * k))];
}

int LabelGeometry::material_at(const std::array<double, 3>& p) const {
  // Trilinear weights of the 8 voxel centres around p; the material with the largest summed weight.
  long i0[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    const double u = (p[a] - origin_[a]) / h_[a] - 0.5;
    const double f = std::floor(u);
    i0[a] = long(f);
    t[a] = u - f;
  }
  int mat[8];
  double w[8];
  int distinct = 0;
  for (int q = 0; q < 8; ++q) {
    const int m = voxel(i0[0] + (q & 1), i0[1] + ((q >> 1) & 1), i0[2] + ((q >> 2) & 1));
    const double wq = ((q & 1) ? t[0] : 1 - t[0]) * (((q >> 1) & 1) ? t[1] : 1 - t[1]) * (((q >> 2) & 1) ? t[2] : 1 - t[2]);
    int s = 0;
    while (s < distinct && mat[s] != m) ++s;
    if (s == distinct) {
      mat[distinct] = m;
      w[distinct++] = 0;
    }
    w[s] += wq;
  }
  int best = 0;
  for (int s = 1; s < distinct; ++s)
    if (w[s] > w[best] || (w[s] == w[best] && mat[s] > mat[best])) best = s;
  return mat[best];
}

bool LabelGeometry::uniform_in(const std::array<double, 3>& lo, const std::array<double, 3>& hi, int& material) const {
  long a0[3], a1[3];
  for (int a = 0; a < 3; ++a) {
    a0[a] = long(std::floor((lo[a] - origin_[a]) / h_[a] - 0.5));
    a1[a] = long(std::floor((hi[a] - origin_[a]) / h_[a] - 0.5)) + 1;
    if (periodic_[a]) continue;  // voxel() wraps
    // Entirely outside the voxels along this axis: the outside material.
    if (a1[a] < 0 || a0[a] >= n_[a]) {
      material = outside_;
      return true;
    }
    a0[a] = std::max(a0[a], -1L);
    a1[a] = std::min(a1[a], long(n_[a]));
  }
  material = voxel(a0[0], a0[1], a0[2]);
  for (long k = a0[2]; k <= a1[2]; ++k)
    for (long j = a0[1]; j <= a1[1]; ++j)
      for (long i = a0[0]; i <= a1[0]; ++i)
        if (voxel(i, j, k) != material) return false;
  return true;
}

namespace {

using cplx = std::complex<double>;

}  // namespace

PerCellMedium subpixel_smoothed_medium(const YeeGrid& g, const std::vector<Material>& materials,
                                       const SubpixelGeometry& geo, const SubpixelOptions& o, SubpixelStats* stats) {
  o.validate();
  g.validate();
  if (materials.empty()) fail("subpixel smoothing: the materials table is empty");
  bool magnetic = false;
  for (std::size_t m = 0; m < materials.size(); ++m) {
    validate_material(materials[m], m);
    for (int a = 0; a < 3; ++a) magnetic = magnetic || materials[m].mu_r[a] != 1.0 || materials[m].sigma_m[a] != 0.0;
  }
  const int nmat = int(materials.size());
  const double w = 2 * kPi * o.frequency;
  auto eps_of = [&](int m, int c) -> cplx {
    if (m < 0 || m >= nmat) fail("subpixel smoothing: material index ", m, " outside the table of ", nmat);
    const Material& mt = materials[std::size_t(m)];
    return w > 0 ? cplx(mt.eps_r[c], -mt.sigma_e[c] / (w * kEps0)) : cplx(mt.eps_r[c], 0.0);
  };
  const std::size_t cells = std::size_t(g.cell_count());
  PerCellMedium md;
  md.average_at_edges = false;
  md.eps_r.assign(3, std::vector<float>(cells, 1.0f));
  md.sigma_e.assign(3, std::vector<float>(cells, 0.0f));
  if (magnetic) {
    md.mu_r.assign(3, std::vector<float>(cells, 1.0f));
    md.sigma_m.assign(3, std::vector<float>(cells, 0.0f));
  }
  const std::array<double, 3> d = g.d();
  const int S = o.samples;
  std::int64_t n_iface = 0, n_ana = 0, n_mom = 0, n_none = 0;
  bool bad = false;
  int bad_index = 0;
  std::vector<std::vector<InverseEpsRow>> rows_of_plane(o.full_tensor ? std::size_t(g.nz) : 0);
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : n_iface, n_ana, n_mom, n_none)
  for (int k = 0; k < g.nz; ++k) {
    std::vector<std::pair<int, int>> count;  // (material, supersamples)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const std::size_t cell = std::size_t(i) + std::size_t(g.nx) * (std::size_t(j) + std::size_t(g.ny) * k);
        if (magnetic) {
          for (int c = 0; c < 3; ++c) {
            const int m = geo.material_at(g.position(Component(3 + c), i, j, k));
            if (m < 0 || m >= nmat) {
#pragma omp critical
              { bad = true; bad_index = m; }
              continue;
            }
            md.mu_r[c][cell] = float(materials[std::size_t(m)].mu_r[c]);
            md.sigma_m[c][cell] = float(materials[std::size_t(m)].sigma_m[c]);
          }
        }
        for (int c = 0; c < 3; ++c) {
          const std::array<double, 3> p = g.position(Component(c), i, j, k);
          std::array<double, 3> lo, hi;
          for (int a = 0; a < 3; ++a) {
            lo[a] = p[a] - 0.5 * d[a];
            hi[a] = p[a] + 0.5 * d[a];
          }
          int m0 = 0;
          bool uniform = geo.uniform_in(lo, hi, m0);
          count.clear();
          std::array<double, 3> moment{0, 0, 0};
          if (!uniform) {
            for (int sz = 0; sz < S; ++sz)
              for (int sy = 0; sy < S; ++sy)
                for (int sx = 0; sx < S; ++sx) {
                  const double u[3] = {(sx + 0.5) / S - 0.5, (sy + 0.5) / S - 0.5, (sz + 0.5) / S - 0.5};
                  const std::array<double, 3> x{p[0] + u[0] * d[0], p[1] + u[1] * d[1], p[2] + u[2] * d[2]};
                  const int m = geo.material_at(x);
                  std::size_t s = 0;
                  while (s < count.size() && count[s].first != m) ++s;
                  if (s == count.size()) count.emplace_back(m, 0);
                  ++count[s].second;
                  if (m >= 0 && m < nmat) {
                    const double e = std::abs(eps_of(m, c));
                    for (int a = 0; a < 3; ++a) moment[a] += u[a] * e;
                  }
                }
            if (count.size() == 1) {
              uniform = true;
              m0 = count[0].first;
            }
          }
          bool index_ok = true;
          int offending = 0;
          if (uniform) {
            index_ok = m0 >= 0 && m0 < nmat;
            offending = m0;
          } else {
            for (const auto& q : count)
              if (q.first < 0 || q.first >= nmat) {
                index_ok = false;
                offending = q.first;
              }
          }
          if (!index_ok) {
#pragma omp critical
            { bad = true; bad_index = offending; }
            continue;
          }
          if (uniform) {
            const Material& mt = materials[std::size_t(m0)];
            md.eps_r[c][cell] = float(mt.eps_r[c]);
            md.sigma_e[c][cell] = float(mt.sigma_e[c]);
            continue;
          }
          ++n_iface;
          const double total = double(S) * S * S;
          cplx mean_eps = 0, mean_inv = 0;
          double mean_sigma = 0;
          for (const auto& q : count) {
            const double f = q.second / total;
            const cplx e = eps_of(q.first, c);
            mean_eps += f * e;
            mean_inv += f / e;
            mean_sigma += f * materials[std::size_t(q.first)].sigma_e[c];
          }
          std::array<double, 3> n{0, 0, 0};
          if (geo.normal_at(p, n)) {
            ++n_ana;
          } else {
            // Moment in units of the box: compare with the largest possible, max|eps| / 4.
            double scale = 0;
            for (const auto& q : count) scale = std::max(scale, std::abs(eps_of(q.first, c)));
            const double len = std::sqrt(moment[0] * moment[0] + moment[1] * moment[1] + moment[2] * moment[2]) / total;
            if (len > 1e-6 * scale) {
              for (int a = 0; a < 3; ++a) n[a] = moment[a] / total / len;
              ++n_mom;
            } else {
              n = {0, 0, 0};
              ++n_none;
            }
          }
          const double nc = n[c];
          const bool tensor = o.diagonal == SubpixelDiagonal::tensor;
          if (o.full_tensor) {
            // Off-diagonal elements of eps_eff^-1 = P <1/eps> + (1 - P) <eps>^-1: n_c n_b (<1/eps> - 1/<eps>),
            // only where every material of the box is lossless and isotropic in eps_r.
            bool plain = true;
            for (const auto& q : count) {
              const Material& mt = materials[std::size_t(q.first)];
              for (int a = 0; a < 3; ++a) plain = plain && mt.sigma_e[a] == 0.0 && mt.eps_r[a] == mt.eps_r[0];
            }
            if (plain) {
              const double delta = mean_inv.real() - 1.0 / mean_eps.real();
              const double inv_cc = subpixel_inverse_eps(mean_eps.real(), mean_inv.real(), nc);
              InverseEpsRow r;
              r.i = i;
              r.j = j;
              r.k = k;
              r.component = std::uint8_t(c);
              r.inv[0] = float(nc * n[(c + 1) % 3] * delta);
              r.inv[1] = float(nc * n[(c + 2) % 3] * delta);
              if (std::max(std::fabs(r.inv[0]), std::fabs(r.inv[1])) > 1e-7 * inv_cc)
                rows_of_plane[std::size_t(k)].push_back(r);
            }
          }
          if (w > 0) {
            const cplx e = tensor ? nc * nc / mean_inv + (1.0 - nc * nc) * mean_eps
                                  : 1.0 / (nc * nc * mean_inv + (1.0 - nc * nc) / mean_eps);
            md.eps_r[c][cell] = float(e.real());
            md.sigma_e[c][cell] = float(std::max(0.0, -e.imag() * w * kEps0));
          } else {
            md.eps_r[c][cell] = float(tensor ? nc * nc / mean_inv.real() + (1.0 - nc * nc) * mean_eps.real()
                                             : 1.0 / subpixel_inverse_eps(mean_eps.real(), mean_inv.real(), nc));
            md.sigma_e[c][cell] = float(mean_sigma);
          }
        }
      }
  }
  if (bad) fail("subpixel smoothing: the geometry gave material index ", bad_index, " outside the table of ", nmat);
  for (auto& rows : rows_of_plane) md.inverse_eps_rows.insert(md.inverse_eps_rows.end(), rows.begin(), rows.end());
  if (stats) {
    stats->tensor_rows = std::int64_t(md.inverse_eps_rows.size());
    stats->samples = 3 * std::int64_t(cells);
    stats->interface_samples = n_iface;
    stats->analytic_normals = n_ana;
    stats->moment_normals = n_mom;
    stats->no_normal = n_none;
  }
  return md;
}

PerCellMedium subpixel_label_medium(const VoxelPlacement& placement, const std::vector<std::uint16_t>& material_per_voxel,
                                    const std::vector<Material>& materials, const SubpixelOptions& options,
                                    SubpixelStats* stats, const std::array<bool, 3>& periodic) {
  const LabelGeometry geo(placement, material_per_voxel, 0, periodic);
  return subpixel_smoothed_medium(placement.grid(), materials, geo, options, stats);
}

PerCellMedium subpixel_array_medium(const VoxelPlacement& placement, const PerCellMedium& cells,
                                    const SubpixelOptions& options, SubpixelStats* stats,
                                    const std::array<bool, 3>& periodic) {
  options.validate();
  if (cells.has_array_box()) fail("subpixel smoothing: property arrays with an array box (a piece's arrays)");
  const std::size_t total = std::size_t(placement.total_cells());
  const std::vector<std::vector<float>>* q[4] = {&cells.eps_r, &cells.sigma_e, &cells.mu_r, &cells.sigma_m};
  const char* names[4] = {"eps_r", "sigma_e", "mu_r", "sigma_m"};
  if (cells.eps_r.empty()) fail("subpixel smoothing: the property arrays have no permittivity");
  for (int a = 0; a < 4; ++a) {
    const std::size_t n = q[a]->size();
    if (n != 0 && n != 1 && n != 3)
      fail("subpixel smoothing: ", n, " ", names[a], " arrays (1 or 3, or none)");
    for (const std::vector<float>& v : *q[a])
      if (v.size() != total)
        fail("subpixel smoothing: an ", names[a], " array of ", v.size(), " values for ", total, " cells");
  }
  // A material per distinct tuple (eps_r, sigma_e, mu_r, sigma_m per axis) among the voxels.
  using Tuple = std::array<float, 12>;
  const float absent[4] = {1.0f, 0.0f, 1.0f, 0.0f};  // defaults of the optional arrays
  auto tuple_at = [&](std::size_t t) {
    Tuple r;
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) {
        const std::vector<std::vector<float>>& arr = *q[a];
        r[std::size_t(3 * a + c)] = arr.empty() ? absent[a] : arr[arr.size() == 3 ? std::size_t(c) : 0][t];
      }
    return r;
  };
  // Voxels of vacuum are material 0, the padding's: one material on both sides of the model's
  // faces (two would split the label interpolation's weights there).
  std::map<Tuple, std::uint16_t> index{{Tuple{1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0}, std::uint16_t(0)}};
  std::vector<Material> materials{Material::vacuum()};
  std::vector<std::uint16_t> per_voxel(std::size_t(placement.voxel_count()));
  Tuple last{};
  std::uint16_t last_m = 0;
  bool have_last = false;
  for (std::int64_t v = 0; v < placement.voxel_count(); ++v) {
    const Tuple tv = tuple_at(std::size_t(placement.total_index(v)));
    if (!have_last || tv != last) {
      auto it = index.find(tv);
      if (it == index.end()) {
        if (materials.size() > 65535)
          fail("subpixel smoothing of property arrays: more than 65535 distinct values of (permittivity, ",
               "conductivity, permeability) among the voxels; smoothing takes the arrays as piecewise-constant ",
               "materials (labels with a tissue table, or arrays with fewer distinct values)");
        Material m;
        m.name = "array value " + std::to_string(materials.size());
        for (int c = 0; c < 3; ++c) {
          m.eps_r[std::size_t(c)] = tv[std::size_t(c)];
          m.sigma_e[std::size_t(c)] = tv[std::size_t(3 + c)];
          m.mu_r[std::size_t(c)] = tv[std::size_t(6 + c)];
          m.sigma_m[std::size_t(c)] = tv[std::size_t(9 + c)];
        }
        it = index.emplace(tv, std::uint16_t(materials.size())).first;
        materials.push_back(std::move(m));
      }
      last = tv;
      last_m = it->second;
      have_last = true;
    }
    per_voxel[std::size_t(v)] = last_m;
  }
  return subpixel_label_medium(placement, per_voxel, materials, options, stats, periodic);
}

}  // namespace vem
