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

SampleBox all_cells(const YeeGrid& g) {
  SampleBox b;
  b.hi = {g.nx - 1, g.ny - 1, g.nz - 1};
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
  for (std::size_t q = 0; q < n; ++q) {
    const auto nl = local_->radiation_vectors(dirs[q][0], dirs[q][1]);
    std::copy(nl.begin(), nl.end(), mine.begin() + 6 * q);
  }
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

DistributedSar distributed_sar(DistributedFdtd& run, const DistributedDftMonitor& e, int fi, bool phasor, cd scale,
                               const std::vector<float>& density_piece, const DistributedSarOptions& o) {
  using distributed_detail::gather_boxes;
  using distributed_detail::scatter_boxes;
  const YeeGrid& g = run.global_setup().grid;
  const std::array<int, 3> n = g.n();
  const int root = o.root;
  const bool is_root = run.rank() == root;
  const SampleBox cells = cell_box(run);
  run.collective([&] {
    if (root < 0 || root >= run.size()) fail("distributed SAR: root rank ", root, " is not in 0..", run.size() - 1);
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
  std::vector<float> density;
  if (any_density) density = gather_boxes(run.comm(), root, cells, density_piece, 1, all_cells(g));
  std::vector<float> e_squared_all;
  std::array<std::vector<float>, 3> e_flat;  // root: the scaled phasors as (re, im) floats (e_piece)

  // 2. The E phasors (whole grid, compact layout) on the root.
  std::array<std::vector<cf>, 3> E;
  for (int a = 0; a < 3; ++a) {
    const Component c = static_cast<Component>(a);
    E[a] = phasor ? e.gather_box_phasor(c, fi, root) : e.gather_box_spectrum(c, fi, root);
  }
  // 3. The conductivity each owned E sample is updated with, from this rank's operator.
  std::array<std::vector<float>, 3> sigma;
  if (any_density) {
    std::array<std::vector<float>, 3> local;
    run.collective([&] { local = edge_conductivity(run.op()); });
    const SampleBox own = run.owned();
    SampleBox all;
    all.hi = n;
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
      sigma[a] = gather_boxes(run.comm(), root, own, mine, 1, all);
    }
  }
  // 4. The single-domain SAR code on the root (as run_fdtd_harmonic).
  DistributedSar r;
  std::vector<float> local_sar_all;
  run.collective([&] {
    if (!is_root) return;
    for (auto* v : {&E[0], &E[1], &E[2]})
      for (cf& x : *v) x = cf(cd(x) * scale);
    if (o.e_squared) e_squared_all = cell_centre_e_squared(g, E[0], E[1], E[2]);
    if (o.e_piece)
      for (int a = 0; a < 3; ++a) {
        e_flat[a].resize(2 * E[a].size());
        std::copy_n(reinterpret_cast<const float*>(E[a].data()), e_flat[a].size(), e_flat[a].begin());
      }
    if (!any_density) return;
    SarInput in;
    in.grid = g;
    in.density = density;
    in.power_density = cell_absorbed_power_density(g, E[0], E[1], E[2], sigma, density);
    for (auto* v : {&E[0], &E[1], &E[2]}) std::vector<cf>().swap(*v);
    local_sar_all = local_sar(in);
    bool tissue = false;
    const std::array<double, 3> d = g.d();
    const double vol = d[0] * d[1] * d[2];
    const std::int64_t N = g.cell_count();
    for (std::int64_t c = 0; c < N; ++c) {
      if (is_tissue_density(density[c])) {
        tissue = true;
        r.absorbed_power += double(in.power_density[c]) * vol;
        if (local_sar_all[c] > r.peak_local_sar) {
          r.peak_local_sar = local_sar_all[c];
          r.peak_local_voxel = {int(c % n[0]), int((c / n[0]) % n[1]), int(c / (std::int64_t(n[0]) * n[1]))};
        }
      }
    }
    if (!tissue) {
      r.warning = "no SAR: the density is <= 0 everywhere";  // run_fdtd_harmonic's words
      return;
    }
    r.has_sar = true;
    r.whole_body_sar = whole_body_sar(in);
    const bool cubic = std::fabs(d[0] - d[1]) <= 1e-9 * d[0] && std::fabs(d[0] - d[2]) <= 1e-9 * d[0];
    if (o.averaged && cubic) {
      auto both = spatial_average_sar(in, std::vector<double>{1e-3, 1e-2}, o.backend);
      r.sar_1g = std::move(both[0]);
      r.sar_10g = std::move(both[1]);
      r.has_averaged = true;
    } else if (o.averaged) {
      r.warning = "1 g / 10 g averaged SAR skipped: the voxels are not cubic (IEC/IEEE 62704-1 cubes)";
    }
  });

  // 5. The summary to every rank.
  {
    std::vector<double> v;
    auto put_avg = [&](const AveragedSar& s) {
      v.insert(v.end(), {s.target_mass_kg, s.peak, double(s.peak_voxel[0]), double(s.peak_voxel[1]),
                         double(s.peak_voxel[2]), s.peak_side_m, double(s.valid), double(s.assigned),
                         double(s.unassigned)});
    };
    v = {double(r.has_sar), r.whole_body_sar, r.absorbed_power, r.peak_local_sar, double(r.peak_local_voxel[0]),
         double(r.peak_local_voxel[1]), double(r.peak_local_voxel[2]), double(r.has_averaged)};
    put_avg(r.sar_1g);
    put_avg(r.sar_10g);
    MPI_Bcast(v.data(), int(v.size()), MPI_DOUBLE, root, run.comm());
    r.has_sar = v[0] != 0;
    r.whole_body_sar = v[1];
    r.absorbed_power = v[2];
    r.peak_local_sar = v[3];
    r.peak_local_voxel = {int(v[4]), int(v[5]), int(v[6])};
    r.has_averaged = v[7] != 0;
    auto get_avg = [&](AveragedSar& s, std::size_t at) {
      s.target_mass_kg = v[at];
      s.peak = v[at + 1];
      s.peak_voxel = {int(v[at + 2]), int(v[at + 3]), int(v[at + 4])};
      s.peak_side_m = v[at + 5];
      s.valid = std::size_t(v[at + 6]);
      s.assigned = std::size_t(v[at + 7]);
      s.unassigned = std::size_t(v[at + 8]);
    };
    get_avg(r.sar_1g, 8);
    get_avg(r.sar_10g, 17);
    int len = int(r.warning.size());
    MPI_Bcast(&len, 1, MPI_INT, root, run.comm());
    r.warning.resize(std::size_t(len));
    MPI_Bcast(r.warning.data(), len, MPI_CHAR, root, run.comm());
  }

  // 6. The per-cell arrays back to the pieces.
  if (o.e_squared) r.e_squared = scatter_boxes(run.comm(), root, cells, e_squared_all, 1, all_cells(g));
  if (o.e_piece) {
    SampleBox all;
    all.hi = n;
    r.e_piece_box.lo = run.piece_lo();
    for (int a = 0; a < 3; ++a) r.e_piece_box.hi[a] = cells.hi[a] + 1;
    for (int a = 0; a < 3; ++a) {
      const std::vector<float> v = scatter_boxes(run.comm(), root, r.e_piece_box, e_flat[a], 2, all);
      std::vector<float>().swap(e_flat[a]);
      r.e_piece[a].resize(v.size() / 2);
      std::copy_n(v.begin(), v.size(), reinterpret_cast<float*>(r.e_piece[a].data()));
    }
  }
  if (o.scatter_fields && r.has_sar) {
    const SampleBox all = all_cells(g);
    r.local_sar = scatter_boxes(run.comm(), root, cells, local_sar_all, 1, all);
    if (r.has_averaged) {
      for (AveragedSar* s : {&r.sar_1g, &r.sar_10g}) {
        s->sar = scatter_boxes(run.comm(), root, cells, s->sar, 1, all);
        s->side_m = scatter_boxes(run.comm(), root, cells, s->side_m, 1, all);
        std::vector<float> st;
        if (is_root) st.assign(s->status.begin(), s->status.end());
        st = scatter_boxes(run.comm(), root, cells, st, 1, all);
        s->status.assign(st.size(), 0);
        for (std::size_t q = 0; q < st.size(); ++q) s->status[q] = std::uint8_t(st[q]);
      }
    }
  } else if (is_root) {
    r.sar_1g.sar.clear();
    r.sar_1g.status.clear();
    r.sar_1g.side_m.clear();
    r.sar_10g.sar.clear();
    r.sar_10g.status.clear();
    r.sar_10g.side_m.clear();
  }
  return r;
}

}  // namespace vem
