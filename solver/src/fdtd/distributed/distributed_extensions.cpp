// TF/SF, near-to-far and SAR over a distributed run (distributed_extensions.h).
#include "vem/fdtd/distributed/distributed_extensions.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

using cd = std::complex<double>;
using cf = std::complex<float>;

// Sum over ranks, the same bits on every rank: reduced on rank 0 and broadcast (MPI_Allreduce
// does not promise every rank the same rounding).
void sum_to_all(MPI_Comm comm, const double* mine, double* all, int count) {
  MPI_Reduce(mine, all, count, MPI_DOUBLE, MPI_SUM, 0, comm);
  MPI_Bcast(all, count, MPI_DOUBLE, 0, comm);
}

// This rank's cells [lo, lo + cells - 1] as a SampleBox of cell indices.
SampleBox cell_box(const DistributedFdtd& run) {
  SampleBox b;
  const auto lo = run.piece_lo();
  const auto m = run.decomposition().piece_cells(run.rank());
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = lo[a];
    b.hi[a] = lo[a] + m[a] - 1;
  }
  return b;
}

}  // namespace

// ---- TF/SF -----------------------------------------------------------------------------------

DistributedTfsfSource::DistributedTfsfSource(DistributedFdtd& run, const PlaneWave& wave, const TfsfBox& box) {
  run.collective([&] {
    TfsfFrame frame;
    frame.grid = run.global_setup().grid;
    frame.boundaries = run.global_setup().boundaries;
    frame.offset = run.piece_lo();
    source_ = std::make_unique<TfsfSource>(run.engine(), wave, box, frame);
  });
}

DistributedTfsfSource::~DistributedTfsfSource() = default;

// ---- near-to-far -----------------------------------------------------------------------------

struct DistributedNearToFar::Face {
  int axis = 0;
  std::vector<Component> comps;
  std::unique_ptr<DistributedDftMonitor> mon;
};

DistributedNearToFar::DistributedNearToFar(DistributedFdtd& run, const std::vector<double>& freqs,
                                           const NtffBox& box, int sample_interval)
    : run_(run), box_(box), freqs_(freqs) {
  const YeeGrid& g = run.global_setup().grid;
  const std::array<int, 3> n = g.n();
  run.collective([&] {
    for (int a = 0; a < 3; ++a)
      if (box.lo[a] < 1 || box.hi[a] <= box.lo[a] || box.hi[a] > n[a] - 1)
        fail("near-to-far: box ", "xyz"[a], " range [", box.lo[a], ", ", box.hi[a],
             "] must satisfy 1 <= lo < hi <= ", n[a] - 1);
  });
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const int p = side == 0 ? box.lo[a] : box.hi[a];
      auto face = std::make_unique<Face>();
      face->axis = a;
      const int b = (a + 1) % 3, c = (a + 2) % 3;
      face->comps = {static_cast<Component>(b), static_cast<Component>(c), static_cast<Component>(3 + b),
                     static_cast<Component>(3 + c)};
      DftBox db;
      for (int q = 0; q < 3; ++q) {
        db.lo[q] = q == a ? p - 1 : box.lo[q] - 1;
        db.hi[q] = q == a ? p + 1 : box.hi[q] + 1;
      }
      face->mon = std::make_unique<DistributedDftMonitor>(run, freqs, face->comps, db, sample_interval);
      faces_.push_back(std::move(face));
    }
}

DistributedNearToFar::~DistributedNearToFar() = default;

SteadyStateCheck DistributedNearToFar::check_steady_state() {
  SteadyStateCheck worst;
  bool first = true;
  for (auto& f : faces_) {
    const SteadyStateCheck c = f->mon->check_steady_state();
    if (first || (c.has_previous && (!worst.has_previous || c.relative_change > worst.relative_change))) worst = c;
    first = false;
  }
  return worst;
}

DistributedFarField DistributedNearToFar::transform(int fi, bool phasor, cd scale,
                                                    const std::array<double, 3>& origin) const {
  // Each rank receives the part of every slab its patches read: the slab box within one sample of
  // the samples it owns (a patch (q, u, v) reads q-1..q, u..u+1, v..v+1). Gathered on rank 0 and
  // cut there (scatter_boxes), so a rank holds O(its share of the surface), rank 0 one frequency of
  // the whole slabs.
  SampleBox near = run_.owned();
  for (int a = 0; a < 3; ++a) {
    near.lo[a] -= 1;
    near.hi[a] += 1;
  }
  std::vector<SampleBox> part(faces_.size());
  std::vector<std::vector<std::vector<cf>>> slab(faces_.size());
  for (std::size_t q = 0; q < faces_.size(); ++q) {
    const SampleBox& gb = faces_[q]->mon->global_box();
    for (int a = 0; a < 3; ++a) {
      part[q].lo[a] = std::max(gb.lo[a], near.lo[a]);
      part[q].hi[a] = std::min(gb.hi[a], near.hi[a]);
    }
    for (Component c : faces_[q]->comps) {
      const std::vector<cf> all =
          phasor ? faces_[q]->mon->gather_box_phasor(c, fi, 0) : faces_[q]->mon->gather_box_spectrum(c, fi, 0);
      std::vector<float> flat(2 * all.size());
      std::copy_n(reinterpret_cast<const float*>(all.data()), flat.size(), flat.begin());
      const std::vector<float> mine = distributed_detail::scatter_boxes(run_.comm(), 0, part[q], flat, 2, gb);
      std::vector<cf> v(mine.size() / 2);
      std::copy_n(mine.begin(), mine.size(), reinterpret_cast<float*>(v.data()));
      slab[q].push_back(std::move(v));
    }
  }
  // The sampler of fdtd_harmonic.cpp (the first face slab holding the sample, in face order); a
  // sample a kept patch reads lies in this rank's part of that slab whenever it lies in the slab.
  auto sample = [&](Component c, int i, int j, int k) -> cd {
    for (std::size_t q = 0; q < faces_.size(); ++q) {
      const auto& comps = faces_[q]->comps;
      const auto it = std::find(comps.begin(), comps.end(), c);
      if (it == comps.end()) continue;
      const SampleBox& gb = faces_[q]->mon->global_box();
      if (i < gb.lo[0] || j < gb.lo[1] || k < gb.lo[2] || i > gb.hi[0] || j > gb.hi[1] || k > gb.hi[2]) continue;
      const SampleBox& b = part[q];
      const auto dims = b.dims();
      const int u = i - b.lo[0], v = j - b.lo[1], w = k - b.lo[2];
      if (b.empty() || u < 0 || v < 0 || w < 0 || u >= dims[0] || v >= dims[1] || w >= dims[2])
        fail("internal error: the near-to-far transform asked rank ", run_.rank(), " for ", component_name(c), " at (",
             i, ", ", j, ", ", k, "), outside its part of the face slab");
      return cd(slab[q][it - comps.begin()][u + std::size_t(dims[0]) * (v + std::size_t(dims[1]) * w)]) * scale;
    }
    fail("internal error: the near-to-far transform asked for ", component_name(c), " at (", i, ", ", j, ", ", k,
         "), outside every monitored face slab");
  };
  const Decomposition& d = run_.decomposition();
  const int rank = run_.rank();
  run_.collective([&] {
    if (fi < 0 || fi >= int(freqs_.size()))
      fail("near-to-far: frequency index ", fi, " out of range (", freqs_.size(), " frequencies)");
  });
  const double freq = freqs_[std::size_t(fi)];
  std::unique_ptr<NearToFarTransform> local;
  run_.collective([&] {
    local = std::make_unique<NearToFarTransform>(
        run_.global_setup().grid, freq, sample, box_, origin, [&](int a, int q, int u, int v) {
          std::array<int, 3> s;
          s[a] = q;
          s[(a + 1) % 3] = u;
          s[(a + 2) % 3] = v;
          return owner_of_sample(d, s) == rank;
        });
  });
  return DistributedFarField(run_.comm(), std::move(local));
}

DistributedFarField::DistributedFarField(MPI_Comm comm, std::unique_ptr<NearToFarTransform> local)
    : comm_(comm), local_(std::move(local)) {}

std::vector<std::array<cd, 2>> DistributedFarField::patterns(const std::vector<std::array<double, 2>>& dirs) const {
  const std::size_t n = dirs.size();
  std::vector<cd> mine(6 * n), all(6 * n);
  const auto local = local_->radiation_vectors(dirs);  // batched: in parallel over the directions
  for (std::size_t q = 0; q < n; ++q) std::copy(local[q].begin(), local[q].end(), mine.begin() + 6 * q);
  if (12 * n > std::size_t(INT_MAX)) fail("distributed near-to-far: too many directions (", n, ") for one reduction");
  sum_to_all(comm_, reinterpret_cast<double*>(mine.data()), reinterpret_cast<double*>(all.data()), int(12 * n));
  std::vector<std::array<cd, 2>> out(n);
  for (std::size_t q = 0; q < n; ++q) {
    std::array<cd, 6> nl;
    std::copy(all.begin() + 6 * q, all.begin() + 6 * (q + 1), nl.begin());
    out[q] = NearToFarTransform::pattern_from(nl, local_->wavenumber(), dirs[q][0], dirs[q][1]);
  }
  return out;
}

std::vector<double> DistributedFarField::rcs(const std::vector<std::array<double, 2>>& dirs, double e0) const {
  const auto F = patterns(dirs);
  std::vector<double> out(F.size());
  for (std::size_t q = 0; q < F.size(); ++q) out[q] = 4.0 * kPi * (std::norm(F[q][0]) + std::norm(F[q][1])) / (e0 * e0);
  return out;
}

double DistributedFarField::scattering_cross_section(int n_theta, int n_phi, double e0) const {
  if (n_theta < 2 || n_phi < 4) fail("near-to-far: need n_theta >= 2 and n_phi >= 4");
  std::vector<double> mu, w;
  gauss_legendre(n_theta, mu, w);
  std::vector<std::array<double, 2>> dirs;
  for (int i = 0; i < n_theta; ++i)
    for (int j = 0; j < n_phi; ++j) dirs.push_back({std::acos(mu[i]), 2.0 * kPi * j / n_phi});
  const auto F = patterns(dirs);
  double sum = 0;
  for (int i = 0; i < n_theta; ++i)
    for (int j = 0; j < n_phi; ++j) {
      const auto& f = F[std::size_t(i) * n_phi + j];
      sum += w[i] * (std::norm(f[0]) + std::norm(f[1]));
    }
  return sum * (2.0 * kPi / n_phi) / (e0 * e0);
}

double DistributedFarField::power_out() const {
  const double mine = local_->power_out();
  double all = 0;
  sum_to_all(comm_, &mine, &all, 1);
  return all;
}

// ---- SAR -------------------------------------------------------------------------------------

std::vector<float> piece_of_cells(const DistributedFdtd& run, const std::vector<float>& global) {
  const YeeGrid& g = run.global_setup().grid;
  if (std::int64_t(global.size()) != g.cell_count())
    fail("piece_of_cells: the array has ", global.size(), " entries, the grid has ", g.cell_count(), " cells");
  const SampleBox b = cell_box(run);
  const auto d = b.dims();
  std::vector<float> out(std::size_t(b.count()));
  for (int z = 0; z < d[2]; ++z)
    for (int y = 0; y < d[1]; ++y)
      for (int x = 0; x < d[0]; ++x)
        out[x + std::size_t(d[0]) * (y + std::size_t(d[1]) * z)] =
            global[(b.lo[0] + x) + std::size_t(g.nx) * ((b.lo[1] + y) + std::size_t(g.ny) * (b.lo[2] + z))];
  return out;
}

namespace distributed_detail {
template <class T>
std::vector<T> fetch_box(MPI_Comm comm, const SampleBox& own, const std::vector<T>& values, const SampleBox& want,
                         int k, long long* bytes);  // distributed_sar_average.cpp
}  // namespace distributed_detail

DistributedSar distributed_sar(DistributedFdtd& run, const DistributedDftMonitor& e, int fi, bool phasor, cd scale,
                               const std::vector<float>& density_piece, const DistributedSarOptions& o) {
  using distributed_detail::fetch_box;
  const YeeGrid& g = run.global_setup().grid;
  const std::array<int, 3> n = g.n();
  const SampleBox cells = cell_box(run);
  run.collective([&] {
    if (o.root < 0 || o.root >= run.size())
      fail("distributed SAR: root rank ", o.root, " is not in 0..", run.size() - 1);
    const SampleBox& b = e.global_box();
    for (int a = 0; a < 3; ++a)
      if (b.lo[a] != 0 || b.hi[a] != n[a])
        fail("distributed SAR: the E monitor's box (", b.lo[0], "..", b.hi[0], ", ", b.lo[1], "..", b.hi[1], ", ",
             b.lo[2], "..", b.hi[2], ") must cover the whole grid (0..", n[0], ", 0..", n[1], ", 0..", n[2], ")");
    if (!density_piece.empty() && std::int64_t(density_piece.size()) != cells.count())
      fail("distributed SAR: the density of rank ", run.rank(), "'s piece has ", density_piece.size(),
           " entries; the piece has ", cells.count(), " cells");
  });

  // 1. The density (cells); empty on every rank: no SAR.
  int with_density = density_piece.empty() ? 0 : 1, any_density = 0;
  MPI_Allreduce(&with_density, &any_density, 1, MPI_INT, MPI_MAX, run.comm());
  run.collective([&] {
    if (any_density && !with_density)
      fail("distributed SAR: rank ", run.rank(), " has no density for its piece while other ranks have one");
  });
  DistributedSar r;
  // The cells one around the piece (what a cell's absorbed power and |E|^2 read: its edges and,
  // for the share of each edge, the tissue flags of the four cells around it) and their samples.
  SampleBox ext;
  for (int a = 0; a < 3; ++a) {
    ext.lo[a] = std::max(0, cells.lo[a] - 1);
    ext.hi[a] = std::min(n[a] - 1, cells.hi[a] + 1);
  }
  SampleBox ext_samples = ext;
  for (int a = 0; a < 3; ++a) ext_samples.hi[a] = ext.hi[a] + 1;
  YeeGrid sub = g;
  sub.nx = ext.dims()[0];
  sub.ny = ext.dims()[1];
  sub.nz = ext.dims()[2];

  // 2. The scaled E phasors over those samples, from their owners.
  std::array<std::vector<cf>, 3> E;
  for (int a = 0; a < 3; ++a) {
    const Component c = static_cast<Component>(a);
    std::vector<float> flat;
    run.collective([&] {
      if (phasor && e.local() == nullptr) return;
      if (!e.local()) return;
      const auto v = phasor ? e.local()->box_phasor(c, fi) : e.local()->box_spectrum(c, fi);
      flat.resize(2 * v.size());
      std::copy_n(reinterpret_cast<const float*>(v.data()), flat.size(), flat.begin());
    });
    const std::vector<float> got = fetch_box(run.comm(), e.local_box(), flat, ext_samples, 2, &r.bytes_received);
    E[a].resize(got.size() / 2);
    for (std::size_t q = 0; q < E[a].size(); ++q) E[a][q] = cf(cd(cf(got[2 * q], got[2 * q + 1])) * scale);
  }
  auto keep_cells = [&](const std::vector<float>& v) {  // the piece's cells of an ext-box array
    std::vector<float> out(std::size_t(cells.count()));
    const auto d = cells.dims(), ed = ext.dims();
    for (int k = 0; k < d[2]; ++k)
      for (int j = 0; j < d[1]; ++j)
        for (int i = 0; i < d[0]; ++i)
          out[i + std::size_t(d[0]) * (j + std::size_t(d[1]) * k)] =
              v[(cells.lo[0] - ext.lo[0] + i) +
                std::size_t(ed[0]) * ((cells.lo[1] - ext.lo[1] + j) + std::size_t(ed[1]) * (cells.lo[2] - ext.lo[2] + k))];
    return out;
  };
  if (o.e_squared) r.e_squared = keep_cells(cell_centre_e_squared(sub, E[0], E[1], E[2]));
  if (o.e_piece) {
    r.e_piece_box.lo = run.piece_lo();
    for (int a = 0; a < 3; ++a) r.e_piece_box.hi[a] = cells.hi[a] + 1;
    const auto d = r.e_piece_box.dims(), ed = ext_samples.dims();
    for (int a = 0; a < 3; ++a) {
      r.e_piece[a].resize(std::size_t(r.e_piece_box.count()));
      for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j)
          for (int i = 0; i < d[0]; ++i)
            r.e_piece[a][i + std::size_t(d[0]) * (j + std::size_t(d[1]) * k)] =
                E[a][(r.e_piece_box.lo[0] - ext.lo[0] + i) +
                     std::size_t(ed[0]) * ((r.e_piece_box.lo[1] - ext.lo[1] + j) +
                                           std::size_t(ed[1]) * (r.e_piece_box.lo[2] - ext.lo[2] + k))];
    }
  }
  if (!any_density) return r;

  // 3. The conductivity of each E sample (its owner's operator) and the density, over the box.
  std::array<std::vector<float>, 3> sigma;
  {
    std::array<std::vector<float>, 3> local;
    run.collective([&] { local = edge_conductivity(run.op()); });
    const SampleBox own = run.owned();
    const auto lo = run.piece_lo();
    const YeeGrid& pg = run.op().grid();
    const auto dd = own.dims();
    for (int a = 0; a < 3; ++a) {
      std::vector<float> mine(std::size_t(own.count()));
      for (int z = 0; z < dd[2]; ++z)
        for (int y = 0; y < dd[1]; ++y)
          for (int x = 0; x < dd[0]; ++x) {
            const int i = own.lo[0] - lo[0] + x, j = own.lo[1] - lo[1] + y, k = own.lo[2] - lo[2] + z;
            mine[x + std::size_t(dd[0]) * (y + std::size_t(dd[1]) * z)] =
                local[a][i + std::size_t(pg.nx + 1) * (j + std::size_t(pg.ny + 1) * k)];
          }
      sigma[a] = fetch_box(run.comm(), own, mine, ext_samples, 1, &r.bytes_received);
    }
  }
  const std::vector<float> density = fetch_box(run.comm(), cells, density_piece, ext, 1, &r.bytes_received);

  // 4. Per cell as the single-domain code; the sums reduced over the ranks.
  std::vector<float> pd;
  run.collective([&] {
    pd = keep_cells(cell_absorbed_power_density(sub, E[0], E[1], E[2], sigma, density));
    for (auto* v : {&E[0], &E[1], &E[2]}) std::vector<cf>().swap(*v);
    SarInput in;
    in.grid = g;
    in.grid.nx = cells.dims()[0];
    in.grid.ny = cells.dims()[1];
    in.grid.nz = cells.dims()[2];
    in.density = density_piece;
    in.power_density = pd;
    r.local_sar = local_sar(in);
  });
  const std::array<double, 3> d = g.d();
  const double vol = d[0] * d[1] * d[2];
  double sums[3] = {0, 0, 0}, tot[3] = {0, 0, 0};  // absorbed power, power density, mass density
  double peak = -1;
  long long peak_at = -1;
  const auto cd3 = cells.dims();
  for (std::size_t c = 0; c < density_piece.size(); ++c)
    if (is_tissue_density(density_piece[c])) {
      sums[0] += double(pd[c]) * vol;
      sums[1] += double(pd[c]);
      sums[2] += density_piece[c];
      if (r.local_sar[c] > peak) {
        peak = r.local_sar[c];
        const int i = cells.lo[0] + int(c % cd3[0]), j = cells.lo[1] + int((c / cd3[0]) % cd3[1]),
                  k = cells.lo[2] + int(c / (std::size_t(cd3[0]) * cd3[1]));
        peak_at = i + (long long)n[0] * (j + (long long)n[1] * k);
      }
    }
  sum_to_all(run.comm(), sums, tot, 3);
  {
    // The largest local SAR, the lowest global index among equals (the single-domain scan's pick:
    // strictly larger replaces). Ranks without tissue send -1.
    double mine[2] = {peak, double(peak_at)};
    std::vector<double> all(2 * std::size_t(run.size()));
    MPI_Allgather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, run.comm());
    long long best = -1;
    double best_v = 0;
    for (int q = 0; q < run.size(); ++q) {
      const long long at = (long long)all[2 * q + 1];
      if (at < 0) continue;
      if (best < 0 || all[2 * q] > best_v || (all[2 * q] == best_v && at < best)) {
        best_v = all[2 * q];
        best = at;
      }
    }
    if (best >= 0) {
      r.has_sar = true;
      r.peak_local_sar = best_v > 0 ? best_v : 0.0;
      if (best_v > 0)
        r.peak_local_voxel = {int(best % n[0]), int((best / n[0]) % n[1]), int(best / ((long long)n[0] * n[1]))};
    }
  }
  if (!r.has_sar) {
    r.warning = "no SAR: the density is <= 0 everywhere";  // run_fdtd_harmonic's words
    r.local_sar.clear();
    return r;
  }
  r.absorbed_power = tot[0];
  r.whole_body_sar = tot[1] / tot[2];
  const bool cubic = std::fabs(d[0] - d[1]) <= 1e-9 * d[0] && std::fabs(d[0] - d[2]) <= 1e-9 * d[0];
  if (o.averaged && cubic) {
    auto both = distributed_spatial_average_sar(run.comm(), run.decomposition(), g, density_piece, pd,
                                                std::vector<double>{1e-3, 1e-2}, o.averaging, o.backend, o.root,
                                                &r.averaging);
    r.sar_1g = std::move(both[0]);
    r.sar_10g = std::move(both[1]);
    r.has_averaged = true;
  } else if (o.averaged) {
    r.warning = "1 g / 10 g averaged SAR skipped: the voxels are not cubic (IEC/IEEE 62704-1 cubes)";
  }
  if (!o.scatter_fields) {
    r.local_sar.clear();
    for (AveragedSar* s : {&r.sar_1g, &r.sar_10g}) {
      s->sar.clear();
      s->status.clear();
      s->side_m.clear();
    }
  }
  return r;
}

}  // namespace vem
