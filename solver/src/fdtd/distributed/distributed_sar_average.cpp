// Peak spatial-average SAR over the pieces without gathering the grid (issue 17):
// distributed_spatial_average_sar (distributed_extensions.h has the method and the bound).
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "fdtd/extensions/sar/sar_internal.h"
#include "vem/core/error.h"
#include "vem/fdtd/distributed/distributed_extensions.h"

namespace vem {

namespace {

constexpr const char* kSar = "distributed SAR averaging: ";

// Every rank fails with the lowest failing rank's message when any rank has one.
void agree(MPI_Comm comm, const std::string& error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = error.empty() ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int len = rank == first ? int(error.size()) : 0;
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  std::string msg = rank == first ? error : std::string(std::size_t(len), ' ');
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  fail(kSar, "rank ", first, " of ", size, ": ", msg);
}

std::size_t box_index(const SampleBox& b, int i, int j, int k) {
  const auto d = b.dims();
  return std::size_t(i - b.lo[0]) + std::size_t(d[0]) * (std::size_t(j - b.lo[1]) + std::size_t(d[1]) * (k - b.lo[2]));
}

}  // namespace

namespace distributed_detail {

// Collective: the values of box `want` (k elements of T per sample, x fastest) from the ranks
// owning them (each rank's `own` box and its values); samples nobody owns stay T{}. Adds the
// bytes this rank received to *bytes.
template <class T>
std::vector<T> fetch_box(MPI_Comm comm, const SampleBox& own, const std::vector<T>& values, const SampleBox& want,
                         int k, long long* bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine[12];
  for (int a = 0; a < 3; ++a) {
    mine[a] = own.lo[a]; mine[3 + a] = own.hi[a];
    mine[6 + a] = want.lo[a]; mine[9 + a] = want.hi[a];
  }
  std::vector<int> all(12 * std::size_t(size));
  MPI_Allgather(mine, 12, MPI_INT, all.data(), 12, MPI_INT, comm);
  auto box_of = [&](int r, int off) {
    SampleBox b;
    for (int a = 0; a < 3; ++a) { b.lo[a] = all[12 * r + off + a]; b.hi[a] = all[12 * r + off + 3 + a]; }
    return b;
  };
  const std::size_t es = sizeof(T) * std::size_t(k);
  std::vector<int> scount(size), sdispl(size), rcount(size), rdispl(size);
  long long st = 0, rt = 0;
  for (int r = 0; r < size; ++r) {
    const SampleBox s = own.empty() ? SampleBox{} : intersect(own, box_of(r, 6));
    const SampleBox v = want.empty() ? SampleBox{} : intersect(box_of(r, 0), want);
    const long long sb = s.count() * (long long)es, rb = v.count() * (long long)es;
    if (st + sb > INT_MAX || rt + rb > INT_MAX)
      fail(kSar, "a halo exchange of more than 2^31 bytes on one rank (", st + sb, ", ", rt + rb, ")");
    scount[r] = int(sb); sdispl[r] = int(st); st += sb;
    rcount[r] = int(rb); rdispl[r] = int(rt); rt += rb;
  }
  std::vector<char> sbuf(static_cast<std::size_t>(st)), rbuf(static_cast<std::size_t>(rt));
  for (int r = 0; r < size; ++r) {
    if (scount[r] == 0) continue;
    const SampleBox s = intersect(own, box_of(r, 6));
    char* p = sbuf.data() + sdispl[r];
    for (int z = s.lo[2]; z <= s.hi[2]; ++z)
      for (int y = s.lo[1]; y <= s.hi[1]; ++y) {
        const std::size_t len = std::size_t(s.dims()[0]) * es;
        std::memcpy(p, values.data() + box_index(own, s.lo[0], y, z) * k, len);
        p += len;
      }
  }
  MPI_Alltoallv(sbuf.data(), scount.data(), sdispl.data(), MPI_BYTE, rbuf.data(), rcount.data(), rdispl.data(),
                MPI_BYTE, comm);
  std::vector<T> out(want.empty() ? 0 : std::size_t(want.count()) * k, T{});
  for (int r = 0; r < size; ++r) {
    if (rcount[r] == 0) continue;
    const SampleBox v = intersect(box_of(r, 0), want);
    const char* p = rbuf.data() + rdispl[r];
    for (int z = v.lo[2]; z <= v.hi[2]; ++z)
      for (int y = v.lo[1]; y <= v.hi[1]; ++y) {
        const std::size_t len = std::size_t(v.dims()[0]) * es;
        std::memcpy(out.data() + box_index(want, v.lo[0], y, z) * k, p, len);
        p += len;
      }
  }
  if (bytes) *bytes += rt - rcount[rank];  // from the other ranks
  return out;
}

template std::vector<float> fetch_box(MPI_Comm, const SampleBox&, const std::vector<float>&, const SampleBox&, int,
                                      long long*);

}  // namespace distributed_detail

namespace {

using distributed_detail::fetch_box;

struct AvgCover {
  float avg;
  int cover;
};

SampleBox cells_of(const Decomposition& d, int rank) {
  SampleBox b;
  const auto lo = d.piece_lo(rank), c = d.piece_cells(rank);
  for (int a = 0; a < 3; ++a) { b.lo[a] = lo[a]; b.hi[a] = lo[a] + c[a] - 1; }
  return b;
}

SampleBox grown(const SampleBox& b, int below, int above, const std::array<int, 3>& n) {
  SampleBox r;
  for (int a = 0; a < 3; ++a) {
    r.lo[a] = std::max(0, b.lo[a] - below);
    r.hi[a] = std::min(n[a] - 1, b.hi[a] + above);
  }
  return r;
}

// The piece of the whole grid's summed-volume tables (3 doubles per cell: mass, power, tissue;
// entry of cell c = the table at index c + 1), every prefix pass in sar.cpp's order: along x,
// then y, then z, each line summed from the grid's first cell, the piece below handing on its
// last plane (nonblocking sends, receives only from lower pieces: no cycle).
std::vector<double> piece_tables(MPI_Comm comm, const Decomposition& d, int rank, const YeeGrid& g,
                                 const std::vector<float>& rho, const std::vector<float>& pd, long long* bytes) {
  const SampleBox own = cells_of(d, rank);
  const auto c = own.dims();
  const std::size_t n = std::size_t(own.count());
  const double vv = g.dx * g.dy * g.dz;
  std::vector<double> t(3 * n, 0.0);
  for (std::size_t q = 0; q < n; ++q)
    if (is_tissue_density(rho[q])) {
      t[3 * q] = rho[q] * vv;
      t[3 * q + 1] = double(pd[q]) * vv;
      t[3 * q + 2] = 1.0;
    }
  const auto coords = d.coords_of(rank);
  std::vector<std::vector<double>> sent(3);
  std::vector<MPI_Request> reqs;
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, e = (a + 2) % 3;  // the plane's axes
    const std::size_t plane = std::size_t(c[b]) * c[e];
    std::vector<double> carry(3 * plane, 0.0);
    auto at = [&](int ia, int ib, int ie) {
      int idx[3];
      idx[a] = ia; idx[b] = ib; idx[e] = ie;
      return std::size_t(idx[0]) + std::size_t(c[0]) * (std::size_t(idx[1]) + std::size_t(c[1]) * idx[2]);
    };
    if (coords[a] > 0) {
      auto lower = coords;
      --lower[a];
      MPI_Recv(carry.data(), int(3 * plane), MPI_DOUBLE, d.rank_of(lower), 700 + a, comm, MPI_STATUS_IGNORE);
      if (bytes) *bytes += (long long)(3 * plane * sizeof(double));
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < std::int64_t(plane); ++p) {
      const int ib = int(p % c[b]), ie = int(p / c[b]);
      double prev[3] = {carry[3 * p], carry[3 * p + 1], carry[3 * p + 2]};
      for (int ia = 0; ia < c[a]; ++ia) {
        double* v = &t[3 * at(ia, ib, ie)];
        for (int w = 0; w < 3; ++w) {
          v[w] += prev[w];  // sar.cpp: v[i] += v[i - 1]
          prev[w] = v[w];
        }
      }
      for (int w = 0; w < 3; ++w) carry[3 * p + w] = prev[w];
    }
    if (coords[a] + 1 < d.ranks[a]) {
      auto upper = coords;
      ++upper[a];
      sent[a] = std::move(carry);
      reqs.emplace_back();
      MPI_Isend(sent[a].data(), int(3 * plane), MPI_DOUBLE, d.rank_of(upper), 700 + a, comm, &reqs.back());
    }
  }
  MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  return t;
}

// R for the masses (see distributed_extensions.h): the last half-width n at which a valid cube
// can stop, capped at nmax.
int halo_bound(const YeeGrid& g, double rho_min, double mtot, const std::vector<double>& masses) {
  const int nmax = std::max({g.nx, g.ny, g.nz});
  if (!(rho_min > 0) || !std::isfinite(rho_min)) return 0;  // no tissue
  const double vv = g.dx * g.dy * g.dz;
  const double err = (16.0 * (double(g.nx) + g.ny + g.nz) + 128.0) * DBL_EPSILON * mtot;
  int R = 0;
  for (double m : masses) {
    int n = 0;
    // smallest n whose next size n + 1 cannot hold a valid cube: 0.899 rho V (2n+1)^3 > m + 4 err
    while (n < nmax) {
      const double s = 2.0 * n + 1.0;
      if (0.899 * rho_min * vv * s * s * s > m + 4.0 * err) break;
      ++n;
    }
    R = std::max(R, n);
  }
  return R;
}

std::vector<AveragedSar> gather_average(MPI_Comm comm, const Decomposition& d, const YeeGrid& g,
                                        const std::vector<float>& rho, const std::vector<float>& pd,
                                        const std::vector<double>& masses, Backend backend, int root) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const SampleBox own = cells_of(d, rank);
  SampleBox all;
  all.hi = {g.nx - 1, g.ny - 1, g.nz - 1};
  using distributed_detail::gather_boxes;
  using distributed_detail::scatter_boxes;
  std::vector<float> rho_all = gather_boxes(comm, root, own, rho, 1, all);
  std::vector<float> pd_all = gather_boxes(comm, root, own, pd, 1, all);
  std::vector<AveragedSar> out(masses.size());
  std::string error;
  if (rank == root) {
    try {
      SarInput in;
      in.grid = g;
      in.density = std::move(rho_all);
      in.power_density = std::move(pd_all);
      out = spatial_average_sar(in, masses, backend);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree(comm, error);
  for (AveragedSar& s : out) {
    double v[9] = {s.target_mass_kg, s.peak, double(s.peak_voxel[0]), double(s.peak_voxel[1]),
                   double(s.peak_voxel[2]), s.peak_side_m, double(s.valid), double(s.assigned), double(s.unassigned)};
    MPI_Bcast(v, 9, MPI_DOUBLE, root, comm);
    s.target_mass_kg = v[0];
    s.peak = v[1];
    s.peak_voxel = {int(v[2]), int(v[3]), int(v[4])};
    s.peak_side_m = v[5];
    s.valid = std::size_t(v[6]);
    s.assigned = std::size_t(v[7]);
    s.unassigned = std::size_t(v[8]);
    s.sar = scatter_boxes(comm, root, own, s.sar, 1, all);
    s.side_m = scatter_boxes(comm, root, own, s.side_m, 1, all);
    std::vector<float> st;
    if (rank == root) st.assign(s.status.begin(), s.status.end());
    st = scatter_boxes(comm, root, own, st, 1, all);
    s.status.assign(st.begin(), st.end());
  }
  return out;
}

}  // namespace

std::vector<AveragedSar> distributed_spatial_average_sar(MPI_Comm comm, const Decomposition& d, const YeeGrid& g,
                                                         const std::vector<float>& rho, const std::vector<float>& pd,
                                                         const std::vector<double>& masses, SarAveraging averaging,
                                                         Backend backend, int root, SarAveragingReport* report) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  SarAveragingReport rep;
  const SampleBox own = cells_of(d, rank);
  const std::array<int, 3> n{g.nx, g.ny, g.nz};
  {
    std::string error;
    if (d.size() != size) error = "the decomposition has " + std::to_string(d.size()) + " pieces for " +
                                  std::to_string(size) + " ranks";
    else if (rho.size() != std::size_t(own.count()) || pd.size() != rho.size())
      error = "the piece has " + std::to_string(own.count()) + " cells; density " + std::to_string(rho.size()) +
              ", power density " + std::to_string(pd.size()) + " entries";
    else if (std::fabs(g.dy - g.dx) > 1e-6 * g.dx || std::fabs(g.dz - g.dx) > 1e-6 * g.dx)
      error = "spatial averaging needs cubic voxels";
    else if (root < 0 || root >= size)
      error = "root rank " + std::to_string(root) + " is not in 0.." + std::to_string(size - 1);
    else
      for (double m : masses)
        if (!(m > 0) || !std::isfinite(m)) error = "target mass " + std::to_string(m) + " kg must be > 0";
    if (error.empty())
      for (std::size_t q = 0; q < rho.size(); ++q)
        if (!std::isfinite(rho[q]) || !std::isfinite(pd[q]) || pd[q] < 0) {
          error = "bad density or power density at local cell " + std::to_string(q);
          break;
        }
    agree(comm, error);
  }
  // rho_min over the tissue and the total mass (for the bound only).
  float rmin = std::numeric_limits<float>::infinity();
  double msum = 0;
  for (float r : rho)
    if (is_tissue_density(r)) { rmin = std::min(rmin, r); msum += r; }
  float rho_min = rmin;
  double mtot = 0;
  MPI_Allreduce(&rmin, &rho_min, 1, MPI_FLOAT, MPI_MIN, comm);
  MPI_Allreduce(&msum, &mtot, 1, MPI_DOUBLE, MPI_SUM, comm);
  mtot *= 1.01 * g.dx * g.dy * g.dz;
  rep.min_tissue_density = std::isfinite(rho_min) ? rho_min : 0.0;
  const int R = halo_bound(g, rho_min, mtot, masses);
  rep.halo_cells = R;
  const int nmax = std::max({g.nx, g.ny, g.nz});
  bool halo = averaging == SarAveraging::halo;
  if (averaging == SarAveraging::automatic) {
    // The halo gains nothing where every rank's box is the whole grid (light tissue: R of the
    // order of the grid): then one rank gathers instead of every rank holding the whole tables.
    const SampleBox box = grown(own, R + 1, R, n);
    int whole = box.count() == (long long)g.nx * g.ny * g.nz ? 1 : 0, all_whole = 0;
    MPI_Allreduce(&whole, &all_whole, 1, MPI_INT, MPI_MIN, comm);
    halo = size == 1 || !all_whole;
    if (!halo)
      rep.reason = "gathered: the bound R = " + std::to_string(R) + " cells (tissue down to " +
                   std::to_string(rho_min) + " kg/m^3) makes every rank's halo box the whole grid";
  } else if (!halo) {
    rep.reason = "gathered: SarAveraging::gather requested";
  }
  rep.halo = halo;
  if (!halo) {
    auto out = gather_average(comm, d, g, rho, pd, masses, backend, root);
    if (report) *report = rep;
    return out;
  }

  // 1. The whole grid's tables over the pieces, then each rank's box of them (cells +-R, and the
  //    entry below: table index lo - R is cell lo - R - 1).
  const std::vector<double> tab = piece_tables(comm, d, rank, g, rho, pd, &rep.bytes_received);
  rep.table_box = grown(own, R + 1, R, n);
  std::vector<double> tbox = fetch_box(comm, own, tab, rep.table_box, 3, &rep.bytes_received);
  sar_detail::SarTableView view;
  for (int a = 0; a < 3; ++a) {
    view.lo[a] = rep.table_box.lo[a] + 1 - (own.lo[a] - R <= 0 ? 1 : 0);
    view.dims[a] = rep.table_box.hi[a] + 1 - view.lo[a] + 1;
  }
  std::vector<double> vt[3];
  const std::size_t vcount = std::size_t(view.dims[0]) * view.dims[1] * view.dims[2];
  for (auto& v : vt) v.assign(vcount, 0.0);
  for (int k = 0; k < view.dims[2]; ++k)
    for (int j = 0; j < view.dims[1]; ++j)
      for (int i = 0; i < view.dims[0]; ++i) {
        const int ti = view.lo[0] + i, tj = view.lo[1] + j, tk = view.lo[2] + k;
        if (ti == 0 || tj == 0 || tk == 0) continue;  // the tables' zero planes
        const std::size_t src = box_index(rep.table_box, ti - 1, tj - 1, tk - 1);
        const std::size_t dst = i + std::size_t(view.dims[0]) * (j + std::size_t(view.dims[1]) * k);
        for (int w = 0; w < 3; ++w) vt[w][dst] = tbox[3 * src + w];
      }
  std::vector<double>().swap(tbox);
  view.mass = vt[0].data(); view.power = vt[1].data(); view.tissue = vt[2].data();
  view.nx = g.nx; view.ny = g.ny; view.nz = g.nz;
  view.d = g.dx;

  const auto c = own.dims();
  const std::size_t ncell = std::size_t(own.count());
  std::vector<AveragedSar> results;
  for (const double m : masses) {
    AveragedSar out;
    out.target_mass_kg = m;
    out.sar.assign(ncell, 0.0f);
    out.status.assign(ncell, 0);
    out.side_m.assign(ncell, 0.0f);
    std::vector<AvgCover> ac(ncell, AvgCover{0.0f, -1});
    std::vector<sar_detail::CubeResult> cube(ncell);
    // 2. Every cube up to R.
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (int k = 0; k < c[2]; ++k)
      for (int j = 0; j < c[1]; ++j)
        for (int i = 0; i < c[0]; ++i) {
          const std::size_t q = i + std::size_t(c[0]) * (j + std::size_t(c[1]) * k);
          if (!is_tissue_density(rho[q])) continue;
          const sar_detail::CubeResult r =
              sar_detail::grow_cube(view, own.lo[0] + i, own.lo[1] + j, own.lo[2] + k, m, R);
          cube[q] = r;
          out.side_m[q] = r.side;
          if (r.valid) { ac[q] = {r.sar, r.cover}; out.status[q] = 1; out.sar[q] = r.sar; }
          else out.status[q] = 3;
        }
    // 3. Voxels growing past R: invalid (the bound); their side from the owners' mass entries.
    struct Residual { std::size_t q; int i, j, k, next; double Mp; };
    std::vector<Residual> res;
    for (std::size_t q = 0; q < ncell; ++q)
      if (is_tissue_density(rho[q]) && !cube[q].reached) {
        if (cube[q].valid) fail(kSar, "internal: a cube valid past the bound");
        const int i = own.lo[0] + int(q % c[0]), j = own.lo[1] + int((q / c[0]) % c[1]),
                  k = own.lo[2] + int(q / (std::size_t(c[0]) * c[1]));
        res.push_back({q, i, j, k, cube[q].next_n, cube[q].mass_prev});
      }
    rep.residual_voxels += (long long)res.size();
    for (int round = 0;; ++round) {
      long long left = (long long)res.size(), any = 0;
      MPI_Allreduce(&left, &any, 1, MPI_LONG_LONG, MPI_SUM, comm);
      if (any == 0) break;
      ++rep.residual_rounds;
      // sizes per voxel this round: 8, 16, 32, ..., at most ~2^24 entries (128 MiB) a rank a round
      const long long budget = (1LL << 21) / std::max<long long>(1, (long long)res.size());
      const int K = int(std::max<long long>(1, std::min<long long>(8LL << std::min(round, 16), budget)));
      // requests: per residual voxel, sizes next .. next + K - 1 (<= nmax), 8 entries each
      std::vector<std::vector<long long>> ask(size);  // owner's local cell index
      std::vector<std::vector<std::pair<std::size_t, int>>> where(size);  // (slot, rank's slot)
      std::vector<std::unordered_map<long long, int>> asked(size);  // each entry asked once a round
      std::vector<double> slot;  // entry values, 8 per (voxel, size)
      std::vector<std::size_t> base(res.size());
      for (std::size_t v = 0; v < res.size(); ++v) {
        const Residual& r = res[v];
        base[v] = slot.size();
        const int last = std::min(nmax, r.next + K - 1);
        for (int s = r.next; s <= last; ++s) {
          const int lo3[3] = {std::max(0, r.i - s), std::max(0, r.j - s), std::max(0, r.k - s)};
          const int hi3[3] = {std::min(g.nx, r.i + s + 1), std::min(g.ny, r.j + s + 1), std::min(g.nz, r.k + s + 1)};
          // box_sum order: (1,1,1) (0,1,1) (1,0,1) (1,1,0) (0,0,1) (0,1,0) (1,0,0) (0,0,0)
          static const int pick[8][3] = {{1, 1, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0},
                                         {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 0, 0}};
          for (const auto& p : pick) {
            const int t[3] = {p[0] ? hi3[0] : lo3[0], p[1] ? hi3[1] : lo3[1], p[2] ? hi3[2] : lo3[2]};
            const std::size_t at = slot.size();
            slot.push_back(0.0);
            if (t[0] == 0 || t[1] == 0 || t[2] == 0) continue;
            std::array<int, 3> oc;
            for (int a = 0; a < 3; ++a)
              oc[a] = int(std::upper_bound(d.cuts[a].begin(), d.cuts[a].end(), t[a] - 1) - d.cuts[a].begin()) - 1;
            const int o = d.rank_of(oc);
            const SampleBox ob = cells_of(d, o);
            const long long cell = (long long)box_index(ob, t[0] - 1, t[1] - 1, t[2] - 1);
            const auto [it, fresh] = asked[o].emplace(cell, int(ask[o].size()));
            if (fresh) ask[o].push_back(cell);
            where[o].push_back({at, it->second});
          }
        }
      }
      std::vector<int> sc(size), sd(size), rc(size), rd(size);
      std::vector<long long> sbuf;
      for (int r = 0; r < size; ++r) {
        sc[r] = int(ask[r].size());
        sd[r] = int(sbuf.size());
        sbuf.insert(sbuf.end(), ask[r].begin(), ask[r].end());
      }
      MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, comm);
      long long rt = 0;
      for (int r = 0; r < size; ++r) { rd[r] = int(rt); rt += rc[r]; }
      if (rt > INT_MAX || (long long)sbuf.size() > INT_MAX) fail(kSar, "residual requests exceed 2^31 entries");
      std::vector<long long> rbuf(static_cast<std::size_t>(rt));
      MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_LONG_LONG, rbuf.data(), rc.data(), rd.data(),
                    MPI_LONG_LONG, comm);
      std::vector<double> answer(rbuf.size());
      for (std::size_t q = 0; q < rbuf.size(); ++q) answer[q] = tab[3 * std::size_t(rbuf[q])];
      std::vector<double> got(sbuf.size());
      MPI_Alltoallv(answer.data(), rc.data(), rd.data(), MPI_DOUBLE, got.data(), sc.data(), sd.data(), MPI_DOUBLE,
                    comm);
      // bytes from the other ranks (requests received, answers received)
      rep.residual_bytes += (long long)((got.size() - sc[rank]) * sizeof(double) +
                                        (rbuf.size() - rc[rank]) * sizeof(long long));
      for (int r = 0; r < size; ++r)
        for (const auto& [at, idx] : where[r]) slot[at] = got[std::size_t(sd[r]) + idx];
      std::vector<Residual> still;
      for (std::size_t v = 0; v < res.size(); ++v) {
        Residual r = res[v];
        const int last = std::min(nmax, r.next + K - 1);
        bool done = false;
        for (int s = r.next; s <= last && !done; ++s) {
          const double* e = &slot[base[v] + 8 * std::size_t(s - r.next)];
          const double M = sar_detail::box_sum8(e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]);
          if (M >= m) {
            out.side_m[r.q] = sar_detail::cube_side(s, r.Mp, M, m, g.dx);
            done = true;
          } else {
            r.Mp = M;
          }
        }
        if (done) continue;
        if (last >= nmax) { out.side_m[r.q] = 0.0f; continue; }  // the whole grid holds less than m
        r.next = last + 1;
        still.push_back(r);
      }
      res.swap(still);
    }
    // 4. The assignment over the cells +-rmax.
    int rmax_local = -1, rmax = -1;
    for (const AvgCover& a : ac) rmax_local = std::max(rmax_local, a.cover);
    MPI_Allreduce(&rmax_local, &rmax, 1, MPI_INT, MPI_MAX, comm);
    rep.dilation_cells = std::max(rep.dilation_cells, rmax);
    if (rmax >= 0) {
      const SampleBox db = grown(own, rmax, rmax, n);
      if (db.count() > rep.dilation_box.count()) rep.dilation_box = db;
      long long got = 0;
      const std::vector<AvgCover> box = fetch_box(comm, own, ac, db, 1, &got);
      rep.bytes_received += got;
      std::vector<float> avg(box.size());
      std::vector<int> cover(box.size());
      for (std::size_t q = 0; q < box.size(); ++q) { avg[q] = box[q].avg; cover[q] = box[q].cover; }
      const auto dd = db.dims();
      const std::vector<float> best = sar_detail::largest_containing_average(dd[0], dd[1], dd[2], avg, cover);
      for (int k = 0; k < c[2]; ++k)
        for (int j = 0; j < c[1]; ++j)
          for (int i = 0; i < c[0]; ++i) {
            const std::size_t q = i + std::size_t(c[0]) * (j + std::size_t(c[1]) * k);
            const float b = best[box_index(db, own.lo[0] + i, own.lo[1] + j, own.lo[2] + k)];
            if (out.status[q] == 3 && b >= 0) { out.sar[q] = b; out.status[q] = 2; }
          }
    }
    // 5. Counts and the peak (largest SAR, lowest global index: the local scan runs in global order).
    long long cnt[3] = {0, 0, 0}, tot[3] = {0, 0, 0};
    double peak = -1, side = 0;
    long long at = -1;
    for (std::size_t q = 0; q < ncell; ++q) {
      if (out.status[q] == 1) {
        ++cnt[0];
        if (out.sar[q] > peak || at < 0) {
          peak = out.sar[q];
          side = out.side_m[q];
          const int i = own.lo[0] + int(q % c[0]), j = own.lo[1] + int((q / c[0]) % c[1]),
                    k = own.lo[2] + int(q / (std::size_t(c[0]) * c[1]));
          at = i + (long long)g.nx * (j + (long long)g.ny * k);
        }
      } else if (out.status[q] == 2) {
        ++cnt[1];
      } else if (out.status[q] == 3) {
        ++cnt[2];
      }
    }
    MPI_Allreduce(cnt, tot, 3, MPI_LONG_LONG, MPI_SUM, comm);
    out.valid = std::size_t(tot[0]);
    out.assigned = std::size_t(tot[1]);
    out.unassigned = std::size_t(tot[2]);
    double mine[3] = {peak, double(at), side};
    std::vector<double> all(3 * std::size_t(size));
    MPI_Allgather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, comm);
    long long best_at = -1;
    for (int r = 0; r < size; ++r) {
      const double p = all[3 * r];
      const long long a = (long long)all[3 * r + 1];
      if (a < 0) continue;
      if (best_at < 0 || p > out.peak || (p == out.peak && a < best_at)) {
        out.peak = p;
        best_at = a;
        out.peak_side_m = all[3 * r + 2];
      }
    }
    if (best_at >= 0)
      out.peak_voxel = {int(best_at % g.nx), int((best_at / g.nx) % g.ny), int(best_at / ((long long)g.nx * g.ny))};
    results.push_back(std::move(out));
  }
  rep.bytes_received += rep.residual_bytes;
  const auto tb = rep.table_box, db = rep.dilation_box;
  rep.bytes_halo_bound = 24 * tb.count() + 8 * (long long)masses.size() * db.count() +
                         24 * ((long long)c[1] * c[2] + (long long)c[0] * c[2] + (long long)c[0] * c[1]) +
                         rep.residual_bytes;
  if (report) *report = rep;
  return results;
}

}  // namespace vem
