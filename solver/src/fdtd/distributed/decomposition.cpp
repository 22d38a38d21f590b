#include "vem/fdtd/distributed/decomposition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "vem/core/error.h"

namespace vem {

namespace {

const char* kAxis = "xyz";

std::array<int, 3> grid_cells(const FdtdSetup& s) { return {s.grid.nx, s.grid.ny, s.grid.nz}; }

std::array<bool, 3> periodic_axes(const FdtdSetup& s) {
  std::array<bool, 3> p{};
  for (int a = 0; a < 3; ++a) p[a] = s.boundaries.face[2 * a] == BoundaryType::periodic;
  return p;
}

bool e_terminating(BoundaryType t) { return t == BoundaryType::pec || t == BoundaryType::cpml; }

// Update range of component c along axis a for a piece of n cells with faces lo/hi (the rule of
// FdtdOperator::build_ranges).
void update_range(Component c, int a, int n, BoundaryType lo, BoundaryType hi, int& r0, int& r1) {
  const int ci = int(c);
  if (ci < 3) {
    if (ci == a) { r0 = 0; r1 = n - 1; return; }
    r0 = e_terminating(lo) ? 1 : 0;
    r1 = (e_terminating(hi) || hi == BoundaryType::periodic || hi == BoundaryType::subdomain) ? n - 1 : n;
  } else {
    r0 = 0;
    r1 = (ci - 3 == a) ? n : n - 1;
  }
}

// Whether point source `src` (sample indices relative to a box of n cells with faces `face`)
// drives an updated sample there.
bool drives_update(const PointSource& src, const std::array<int, 3>& n, const std::array<BoundaryType, 6>& face) {
  const double norm = std::sqrt(src.direction[0] * src.direction[0] + src.direction[1] * src.direction[1] +
                                src.direction[2] * src.direction[2]);
  const bool electric = src.kind == PointSource::Kind::electric_current || src.kind == PointSource::Kind::hard_e;
  const int idx[3] = {src.i, src.j, src.k};
  for (int q = 0; q < 3; ++q) {
    if (!(norm > 0) || src.direction[q] / norm == 0.0) continue;
    const Component c = Component(q + (electric ? 0 : 3));
    bool inside = true;
    for (int a = 0; a < 3 && inside; ++a) {
      int r0, r1;
      update_range(c, a, n[a], face[2 * a], face[2 * a + 1], r0, r1);
      inside = idx[a] >= r0 && idx[a] <= r1;
    }
    if (inside) return true;
  }
  return false;
}

}  // namespace

std::array<int, 3> Decomposition::coords_of(int rank) const {
  if (rank < 0 || rank >= size()) fail("rank ", rank, " is outside the decomposition of ", size(), " ranks");
  return {rank % ranks[0], (rank / ranks[0]) % ranks[1], rank / (ranks[0] * ranks[1])};
}

int Decomposition::rank_of(const std::array<int, 3>& c) const { return c[0] + ranks[0] * (c[1] + ranks[1] * c[2]); }

std::array<int, 3> Decomposition::piece_lo(int rank) const {
  const auto c = coords_of(rank);
  return {cuts[0][c[0]], cuts[1][c[1]], cuts[2][c[2]]};
}

std::array<int, 3> Decomposition::piece_cells(int rank) const {
  const auto c = coords_of(rank);
  std::array<int, 3> n;
  for (int a = 0; a < 3; ++a) n[a] = cuts[a][c[a] + 1] - cuts[a][c[a]];
  return n;
}

std::string Decomposition::describe() const {
  std::ostringstream os;
  os << ranks[0] << " x " << ranks[1] << " x " << ranks[2];
  bool first = true;
  for (int a = 0; a < 3; ++a) {
    if (ranks[a] < 2) continue;
    os << (first ? " (" : "; ") << kAxis[a] << " cuts";
    for (int v : cuts[a]) os << ' ' << v;
    first = false;
  }
  if (!first) os << ')';
  return os.str();
}

long long Decomposition::halo_values_per_step(const std::array<int, 3>& n, const std::array<bool, 3>& periodic) const {
  long long total = 0;
  for (int a = 0; a < 3; ++a) {
    const long long area = 1LL * (n[(a + 1) % 3] + 1) * (n[(a + 2) % 3] + 1);
    // The pieces of a cut plane each send their part over the full transverse node range: the
    // shared edges are counted by each of them, which this total leaves out.
    const int cut_planes = ranks[a] - 1 + ((periodic[a] && ranks[a] > 1) ? 1 : 0);
    total += 4 * area * cut_planes;
  }
  return total;
}

Decomposition even_decomposition(const std::array<int, 3>& n, const std::array<int, 3>& ranks) {
  Decomposition d;
  d.ranks = ranks;
  for (int a = 0; a < 3; ++a) {
    if (ranks[a] < 1) fail("decomposition: ", ranks[a], " ranks along ", kAxis[a], " (must be >= 1)");
    d.cuts[a].assign(1, 0);
    const int base = n[a] / ranks[a], extra = n[a] % ranks[a];
    for (int p = 0; p < ranks[a]; ++p) d.cuts[a].push_back(d.cuts[a].back() + base + (p < extra ? 1 : 0));
  }
  return d;
}

Decomposition decomposition_from_cells(const std::array<std::vector<int>, 3>& cells) {
  Decomposition d;
  for (int a = 0; a < 3; ++a) {
    if (cells[a].empty()) fail("decomposition: no pieces along ", kAxis[a], " (give at least one cell count)");
    d.ranks[a] = int(cells[a].size());
    d.cuts[a].assign(1, 0);
    for (int c : cells[a]) d.cuts[a].push_back(d.cuts[a].back() + c);
  }
  return d;
}

void validate_decomposition(const Decomposition& d, const FdtdSetup& setup, int nranks, bool materials_per_piece) {
  const auto n = grid_cells(setup);
  const auto& bc = setup.boundaries;
  const std::string what = "decomposition " + d.describe() + " of the " + std::to_string(n[0]) + " x " +
                           std::to_string(n[1]) + " x " + std::to_string(n[2]) + "-cell grid";
  for (int a = 0; a < 3; ++a) {
    if (d.ranks[a] < 1) fail(what, ": ", d.ranks[a], " ranks along ", kAxis[a], " (must be >= 1)");
    if (d.ranks[a] > n[a])
      fail(what, ": ", d.ranks[a], " ranks along ", kAxis[a], " but only ", n[a],
           " cells (more ranks than cells: each rank needs at least 1 cell)");
  }
  if (d.size() != nranks)
    fail(what, ": ", d.size(), " pieces for ", nranks, " ranks (the product of the ranks per axis must equal "
         "the number of ranks)");
  for (int a = 0; a < 3; ++a) {
    if (int(d.cuts[a].size()) != d.ranks[a] + 1)
      fail(what, ": ", d.cuts[a].size(), " cuts along ", kAxis[a], ", expected ", d.ranks[a] + 1);
    if (d.cuts[a].front() != 0 || d.cuts[a].back() != n[a])
      fail(what, ": the pieces along ", kAxis[a], " cover cells ", d.cuts[a].front(), "..", d.cuts[a].back(),
           ", the grid has ", n[a], " cells along ", kAxis[a]);
    for (int p = 0; p < d.ranks[a]; ++p) {
      const int cells = d.cuts[a][p + 1] - d.cuts[a][p];
      if (cells < 1)
        fail(what, ": piece ", p, " along ", kAxis[a], " has ", cells,
             " cells, thinner than the Yee stencil (each piece needs at least 1 cell)");
    }
    if (d.ranks[a] == 1) continue;
    // Outer pieces with a CPML face must hold the whole CPML and one interior cell.
    for (int s = 0; s < 2; ++s) {
      const int f = 2 * a + s;
      if (bc.face[f] != BoundaryType::cpml) continue;
      const int p = s == 0 ? 0 : d.ranks[a] - 1;
      const int cells = d.cuts[a][p + 1] - d.cuts[a][p];
      const int t = bc.cpml[f].thickness;
      if (cells < t + 1)
        fail(what, ": piece ", p, " along ", kAxis[a], " has ", cells, " cells, thinner than the ", face_name(f),
             " CPML (", t, " cells; a piece on a CPML face needs at least ", t + 1,
             " cells: the whole CPML and one interior cell)");
    }
  }
  if (d.size() > 1) {
    if (setup.material_mode == MaterialMode::coefficient_array && setup.medium.average_at_edges &&
        setup.medium.eps_r.empty() && !materials_per_piece)
      fail(what, ": a coefficient-array medium averaged at the edges has no arrays in the setup (each piece "
           "keeps its neighbours' cells beside the cuts): give the whole model's arrays, or fill each piece's "
           "box through DistributedOptions::fill_materials");
    if (setup.scheme != Scheme::yee)
      fail(what, ": scheme ", scheme_name(setup.scheme),
           " cannot run distributed yet (its wide stencil needs a 2-layer halo); use scheme yee");
  }
}

Decomposition choose_decomposition(const FdtdSetup& setup, int nranks, bool materials_per_piece) {
  if (nranks < 1) fail("decomposition: ", nranks, " ranks (must be >= 1)");
  const auto n = grid_cells(setup);
  const auto periodic = periodic_axes(setup);
  const long long cells = 1LL * n[0] * n[1] * n[2];
  if (nranks > cells)
    fail("decomposition: ", nranks, " ranks for the ", n[0], " x ", n[1], " x ", n[2], "-cell grid (", cells,
         " cells): more ranks than cells");
  Decomposition best;
  long long best_cost = std::numeric_limits<long long>::max();
  bool found = false;
  std::string reason;  // why the cheapest rejected candidate was rejected
  long long reason_cost = std::numeric_limits<long long>::max();
  // z outermost and descending so that, on ties, cuts along z (then y) win.
  for (int pz = nranks; pz >= 1; --pz) {
    if (nranks % pz) continue;
    for (int py = nranks / pz; py >= 1; --py) {
      if ((nranks / pz) % py) continue;
      const int px = nranks / pz / py;
      const Decomposition d = even_decomposition(n, {px, py, pz});
      const long long cost = d.halo_values_per_step(n, periodic);
      try {
        validate_decomposition(d, setup, nranks, materials_per_piece);
      } catch (const Error& e) {
        if (cost < reason_cost) { reason_cost = cost; reason = e.what(); }
        continue;
      }
      if (cost < best_cost) { best_cost = cost; best = d; found = true; }
    }
  }
  if (!found)
    fail("decomposition: no split of the ", n[0], " x ", n[1], " x ", n[2], "-cell grid over ", nranks,
         " ranks is valid; the one with the smallest halo: ", reason);
  return best;
}

SampleBox intersect(const SampleBox& a, const SampleBox& b) {
  SampleBox r;
  for (int q = 0; q < 3; ++q) {
    r.lo[q] = std::max(a.lo[q], b.lo[q]);
    r.hi[q] = std::min(a.hi[q], b.hi[q]);
  }
  return r;
}

SampleBox owned_samples(const Decomposition& d, int rank) {
  const auto c = d.coords_of(rank);
  SampleBox b;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = d.cuts[a][c[a]];
    b.hi[a] = d.cuts[a][c[a] + 1] - 1 + (c[a] == d.ranks[a] - 1 ? 1 : 0);
  }
  return b;
}

int owner_of_sample(const Decomposition& d, const std::array<int, 3>& s) {
  std::array<int, 3> c;
  for (int a = 0; a < 3; ++a) {
    const auto& cut = d.cuts[a];
    if (s[a] < 0 || s[a] > cut.back())
      fail("sample index ", s[a], " along ", kAxis[a], " is outside 0..", cut.back());
    // last p with cut[p] <= s, capped at the last piece (the top node plane)
    const int p = int(std::upper_bound(cut.begin(), cut.end(), s[a]) - cut.begin()) - 1;
    c[a] = std::min(p, d.ranks[a] - 1);
  }
  return d.rank_of(c);
}

std::array<int, 6> face_neighbours(const Decomposition& d, const FdtdSetup& global, int rank) {
  const auto c = d.coords_of(rank);
  std::array<int, 6> nb{-1, -1, -1, -1, -1, -1};
  for (int a = 0; a < 3; ++a) {
    if (d.ranks[a] == 1) continue;
    const bool periodic = global.boundaries.face[2 * a] == BoundaryType::periodic;
    for (int s = 0; s < 2; ++s) {
      auto q = c;
      q[a] += s == 0 ? -1 : 1;
      if (q[a] < 0 || q[a] >= d.ranks[a]) {
        if (!periodic) continue;
        q[a] = (q[a] + d.ranks[a]) % d.ranks[a];
      }
      nb[2 * a + s] = d.rank_of(q);
    }
  }
  return nb;
}

void piece_material_box(const FdtdSetup& global, const Decomposition& d, int rank, std::array<int, 3>& first,
                        std::array<int, 3>& count) {
  const auto n = grid_cells(global);
  const auto lo = d.piece_lo(rank), m = d.piece_cells(rank);
  const bool boxed = global.material_mode == MaterialMode::coefficient_array && global.medium.average_at_edges;
  for (int a = 0; a < 3; ++a) {
    first[a] = boxed ? std::max(0, lo[a] - 2) : lo[a];
    const int last = boxed ? std::min(n[a] - 1, lo[a] + m[a]) : lo[a] + m[a] - 1;
    count[a] = last - first[a] + 1;
  }
}

FdtdSetup piece_setup(const FdtdSetup& global, const Decomposition& d, int rank, std::vector<int>* probe_ids) {
  const auto n = grid_cells(global);
  const auto lo = d.piece_lo(rank);
  const auto m = d.piece_cells(rank);
  const auto nb = face_neighbours(d, global, rank);
  FdtdSetup s;
  s.grid = global.grid;
  s.grid.nx = m[0];
  s.grid.ny = m[1];
  s.grid.nz = m[2];
  const double h[3] = {global.grid.dx, global.grid.dy, global.grid.dz};
  for (int a = 0; a < 3; ++a) s.grid.origin[a] = global.grid.origin[a] + lo[a] * h[a];
  s.courant_factor = global.courant_factor;
  s.dt = global.dt;
  s.scheme = global.scheme;
  s.field_storage = global.field_storage;
  s.scheme_design_cells_per_wavelength = global.scheme_design_cells_per_wavelength;
  s.boundaries = global.boundaries;
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    if (d.ranks[a] == 1) continue;  // both faces are the global ones (periodic stays periodic)
    if (nb[f] >= 0) s.boundaries.face[f] = BoundaryType::subdomain;
  }

  // Materials: the cells [first, first + count) of the whole grid's per-cell array (x fastest).
  auto copy_box = [&](const auto& src, auto& dst, const std::array<int, 3>& first, const std::array<int, 3>& count) {
    dst.resize(std::size_t(count[0]) * count[1] * count[2]);
    for (int k = 0; k < count[2]; ++k)
      for (int j = 0; j < count[1]; ++j) {
        const std::size_t from =
            std::size_t(first[0]) + std::size_t(n[0]) * ((first[1] + j) + std::size_t(n[1]) * (first[2] + k));
        std::copy_n(src.begin() + from, count[0], dst.begin() + std::size_t(count[0]) * (j + std::size_t(count[1]) * k));
      }
  };
  s.material_mode = global.material_mode;
  s.materials = global.materials;
  const std::size_t ncell = std::size_t(n[0]) * n[1] * n[2];
  if (!global.material_index.empty()) {
    if (global.material_index.size() != ncell)
      fail("material index array has ", global.material_index.size(), " entries, the grid has ", ncell, " cells");
    copy_box(global.material_index, s.material_index, lo, m);
  }
  s.medium.average_at_edges = global.medium.average_at_edges;
  // Averaged at the edges: the averages next to a cut read the neighbours' cells (up to two cells
  // below the piece and one above, fdtd_operator.cpp), so the piece keeps that box of cells and
  // clamps at the whole model's faces as the whole grid does: coefficients bit for bit.
  // With no arrays in `global` (DistributedOptions::fill_materials) the box is set all the same:
  // the filler fills the box's cells.
  const bool boxed = global.material_mode == MaterialMode::coefficient_array && global.medium.average_at_edges;
  std::array<int, 3> blo, bn;  // the cells each medium array keeps: the piece's, or the box
  piece_material_box(global, d, rank, blo, bn);
  if (boxed) {
    for (int a = 0; a < 3; ++a) {
      s.medium.array_lo[a] = blo[a] - lo[a];
      s.medium.array_n[a] = bn[a];
      s.medium.clamp_lo[a] = -lo[a];
      s.medium.clamp_hi[a] = n[a] - 1 - lo[a];
    }
  }
  auto slice_all = [&](const std::vector<std::vector<float>>& src, std::vector<std::vector<float>>& dst,
                       const char* name) {
    dst.resize(src.size());
    for (std::size_t q = 0; q < src.size(); ++q) {
      if (src[q].size() != ncell)
        fail("coefficient-array medium: array '", name, "' has ", src[q].size(), " values, the grid has ", ncell, " cells");
      copy_box(src[q], dst[q], blo, bn);
    }
  };
  slice_all(global.medium.eps_r, s.medium.eps_r, "eps_r");
  slice_all(global.medium.sigma_e, s.medium.sigma_e, "sigma_e");
  slice_all(global.medium.mu_r, s.medium.mu_r, "mu_r");
  slice_all(global.medium.sigma_m, s.medium.sigma_m, "sigma_m");

  // Sources: checked against the whole grid, as FdtdOperator checks them on one domain.
  for (std::size_t q = 0; q < global.sources.size(); ++q) {
    const PointSource& src = global.sources[q];
    if (src.i < 0 || src.i > n[0] || src.j < 0 || src.j > n[1] || src.k < 0 || src.k > n[2])
      fail("source ", q, " at sample (", src.i, ", ", src.j, ", ", src.k, ") is outside the grid of ", n[0], " x ",
           n[1], " x ", n[2], " cells (valid sample indices 0..", n[0], ", 0..", n[1], ", 0..", n[2], ")");
    if (!drives_update(src, n, global.boundaries.face))
      fail("source ", q, " at sample (", src.i, ", ", src.j, ", ", src.k,
           ") drives no updated field sample (its components lie on PEC/CPML-terminated faces)");
  }
  // Sources of the piece: those that drive an updated sample of the piece (a soft source on a node plane two
  // pieces share is applied by both: each updates its copy of that sample).
  for (std::size_t q = 0; q < global.sources.size(); ++q) {
    PointSource src = global.sources[q];
    if (src.i < lo[0] || src.i > lo[0] + m[0] || src.j < lo[1] || src.j > lo[1] + m[1] || src.k < lo[2] ||
        src.k > lo[2] + m[2])
      continue;
    src.i -= lo[0];
    src.j -= lo[1];
    src.k -= lo[2];
    if (drives_update(src, m, s.boundaries.face)) s.sources.push_back(src);
  }
  // Probes: those whose sample the piece owns.
  if (probe_ids) probe_ids->clear();
  for (std::size_t q = 0; q < global.probes.size(); ++q) {
    const Probe& p = global.probes[q];
    if (p.i < 0 || p.i > n[0] || p.j < 0 || p.j > n[1] || p.k < 0 || p.k > n[2])
      fail("probe ", q, " ('", p.name, "') at sample (", p.i, ", ", p.j, ", ", p.k, ") is outside the grid of ",
           n[0], " x ", n[1], " x ", n[2], " cells");
    if (owner_of_sample(d, {p.i, p.j, p.k}) != rank) continue;
    Probe lp = p;
    lp.i -= lo[0];
    lp.j -= lo[1];
    lp.k -= lo[2];
    s.probes.push_back(lp);
    if (probe_ids) probe_ids->push_back(int(q));
  }
  return s;
}

}  // namespace vem
