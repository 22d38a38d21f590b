#include "vem/fdtd/distributed/distributed_fdtd.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "vem/core/error.h"

namespace vem {

namespace {

constexpr const char* kPrefix = "distributed FDTD: ";
// The full smoothed tensor (SubpixelOptions::full_tensor) couples E samples through a list whose
// neighbours may sit on other ranks; the distributed run does not exchange them.
constexpr const char* kNoTensorRows =
    "the medium has off-diagonal inverse-permittivity rows (subpixel smoothing with full_tensor), "
    "which a distributed run does not support yet: use the diagonal smoothing (full_tensor off; in ParaView "
    "SubpixelTensor = Diagonal) or one rank";

// The CUDA device of this rank (DistributedOptions::device_index, devices_per_node).
int cuda_device_of(const DistributedOptions& options, int local_rank) {
  return options.device_index >= 0 ? options.device_index : local_rank % std::max(1, options.devices_per_node);
}

}  // namespace

namespace distributed_detail {

namespace {
// Every rank's box (lo x y z, hi x y z) on the root, 6 ints per rank (empty elsewhere); also this
// rank's index and the communicator's size.
std::vector<int> gather_box_table(MPI_Comm comm, int root, const SampleBox& mine, int& rank, int& size) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int box[6];
  for (int a = 0; a < 3; ++a) { box[a] = mine.lo[a]; box[3 + a] = mine.hi[a]; }
  std::vector<int> boxes(rank == root ? 6 * size : 0);
  MPI_Gather(box, 6, MPI_INT, boxes.data(), 6, MPI_INT, root, comm);
  return boxes;
}
}  // namespace

std::vector<float> gather_boxes(MPI_Comm comm, int root, const SampleBox& mine, const std::vector<float>& values,
                                int k, const SampleBox& global) {
  int rank = 0, size = 1;
  const std::vector<int> boxes = gather_box_table(comm, root, mine, rank, size);
  const int count = int(mine.empty() ? 0 : values.size());
  std::vector<int> counts(rank == root ? size : 0), displs(rank == root ? size : 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::vector<float> all;
  long long total = 0;
  if (rank == root)
    for (int r = 0; r < size; ++r) {
      displs[r] = total > INT_MAX ? 0 : int(total);
      total += counts[r];
    }
  // The root's limit check reaches every rank (no rank left in the gather).
  MPI_Bcast(&total, 1, MPI_LONG_LONG, root, comm);
  if (total > INT_MAX) fail(kPrefix, "gather of ", total, " values exceeds the 2^31 limit of one MPI message");
  if (rank == root) all.resize(std::size_t(total));
  MPI_Gatherv(values.data(), count, MPI_FLOAT, all.data(), counts.data(), displs.data(), MPI_FLOAT, root, comm);
  if (rank != root) return {};
  const auto gd = global.dims();
  std::vector<float> out(std::size_t(global.count()) * k, 0.0f);
  for (int r = 0; r < size; ++r) {
    SampleBox b;
    for (int a = 0; a < 3; ++a) { b.lo[a] = boxes[6 * r + a]; b.hi[a] = boxes[6 * r + 3 + a]; }
    if (b.empty() || counts[r] == 0) continue;
    const auto d = b.dims();
    const float* src = all.data() + displs[r];
    for (int z = 0; z < d[2]; ++z)
      for (int y = 0; y < d[1]; ++y) {
        const std::size_t from = std::size_t(d[0]) * (y + std::size_t(d[1]) * z) * k;
        const std::size_t to = (std::size_t(b.lo[0] - global.lo[0]) +
                                std::size_t(gd[0]) * ((b.lo[1] - global.lo[1] + y) +
                                                      std::size_t(gd[1]) * (b.lo[2] - global.lo[2] + z))) * k;
        std::copy_n(src + from, std::size_t(d[0]) * k, out.begin() + to);
      }
  }
  return out;
}

std::vector<float> scatter_boxes(MPI_Comm comm, int root, const SampleBox& mine, const std::vector<float>& all,
                                 int k, const SampleBox& global) {
  int rank = 0, size = 1;
  const std::vector<int> boxes = gather_box_table(comm, root, mine, rank, size);
  std::vector<int> counts(rank == root ? size : 0), displs(rank == root ? size : 0);
  std::vector<float> packed;
  // The root's checks reach every rank (no rank left waiting in the scatter).
  std::string error;
  long long total = 0;
  if (rank == root) {
    if (all.size() != std::size_t(global.count()) * k)
      error = "scatter of " + std::to_string(all.size()) + " values; the global box holds " +
              std::to_string(global.count() * k);
    for (int r = 0; r < size; ++r) {
      SampleBox b;
      for (int a = 0; a < 3; ++a) { b.lo[a] = boxes[6 * r + a]; b.hi[a] = boxes[6 * r + 3 + a]; }
      const long long c = b.empty() ? 0 : b.count() * k;
      if (c > INT_MAX || total > INT_MAX) {
        counts[r] = displs[r] = 0;
      } else {
        displs[r] = int(total);
        counts[r] = int(c);
      }
      total += c;
    }
    if (error.empty() && total > INT_MAX)
      error = "scatter of " + std::to_string(total) + " values exceeds the 2^31 limit of one MPI message";
  }
  int len = int(error.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  if (len > 0) {
    error.resize(std::size_t(len));
    MPI_Bcast(error.data(), len, MPI_CHAR, root, comm);
    fail(kPrefix, error);
  }
  if (rank == root) {
    packed.resize(std::size_t(total));
    const auto gd = global.dims();
    for (int r = 0; r < size; ++r) {
      if (counts[r] == 0) continue;
      SampleBox b;
      for (int a = 0; a < 3; ++a) { b.lo[a] = boxes[6 * r + a]; b.hi[a] = boxes[6 * r + 3 + a]; }
      const auto d = b.dims();
      float* dst = packed.data() + displs[r];
      for (int z = 0; z < d[2]; ++z)
        for (int y = 0; y < d[1]; ++y) {
          const std::size_t to = std::size_t(d[0]) * (y + std::size_t(d[1]) * z) * k;
          const std::size_t from = (std::size_t(b.lo[0] - global.lo[0]) +
                                    std::size_t(gd[0]) * ((b.lo[1] - global.lo[1] + y) +
                                                          std::size_t(gd[1]) * (b.lo[2] - global.lo[2] + z))) * k;
          std::copy_n(all.begin() + from, std::size_t(d[0]) * k, dst + to);
        }
    }
  }
  std::vector<float> out(mine.empty() ? 0 : std::size_t(mine.count()) * k);
  MPI_Scatterv(packed.data(), counts.data(), displs.data(), MPI_FLOAT, out.data(), int(out.size()), MPI_FLOAT, root,
               comm);
  return out;
}

}  // namespace distributed_detail

using distributed_detail::gather_boxes;

DistributedFdtd::DistributedFdtd(MPI_Comm comm, const FdtdSetup& global, const DistributedOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) fail(kPrefix, "MPI is not initialized (call MPI_Init before constructing DistributedFdtd)");
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);

  // 1. The decomposition (the same on every rank: the same inputs).
  std::string error;
  try {
    const std::array<int, 3> n{global.grid.nx, global.grid.ny, global.grid.nz};
    global.grid.validate();
    if (!global.medium.inverse_eps_rows.empty()) fail(kNoTensorRows);
    const bool given_cells = !options.cells[0].empty() || !options.cells[1].empty() || !options.cells[2].empty();
    const bool given_ranks = options.ranks[0] > 0 || options.ranks[1] > 0 || options.ranks[2] > 0;
    if (given_cells) {
      for (int a = 0; a < 3; ++a)
        if (options.cells[a].empty())
          fail("DistributedOptions::cells: no pieces along ", "xyz"[a], " (give the cell counts on all three axes)");
      decomp_ = decomposition_from_cells(options.cells);
    } else if (given_ranks) {
      for (int a = 0; a < 3; ++a)
        if (options.ranks[a] < 1)
          fail("DistributedOptions::ranks = ", options.ranks[0], " x ", options.ranks[1], " x ", options.ranks[2],
               ": every axis needs >= 1 (or all 0 for the automatic choice)");
      decomp_ = even_decomposition(n, options.ranks);
    } else {
      decomp_ = choose_decomposition(global, size_, bool(options.fill_materials));
    }
    validate_decomposition(decomp_, global, size_, bool(options.fill_materials));
  } catch (const std::exception& e) {
    error = e.what();
  }
  checkpoint(error);

  // 2. This rank's piece, operator and engine. The node-local rank (for the CUDA device) first:
  // MPI_Comm_split_type is collective, so every rank calls it before anything that can fail.
  int local_rank = 0;
  {
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
  }
  try {
    piece_ = piece_setup(global, decomp_, rank_, &probe_ids_);
    if (options.fill_materials) options.fill_materials(piece_lo(), decomp_.piece_cells(rank_), piece_);
    if (!piece_.medium.inverse_eps_rows.empty()) fail(kNoTensorRows);
    op_ = std::make_unique<FdtdOperator>(piece_);
    engine_ = make_engine(*op_, options.backend, cuda_device_of(options, local_rank), nullptr, options.tuning);
  } catch (const std::exception& e) {
    error = e.what();
  }
  checkpoint(error);

  // 3. The halo exchange (collective: it duplicates the communicator).
  global_ = global;
  global_.material_index.clear();
  global_.medium = {};
  global_.medium.average_at_edges = global.medium.average_at_edges;
  const auto nb = face_neighbours(decomp_, global, rank_);
  std::array<std::size_t, 6> values{};
  const auto m = decomp_.piece_cells(rank_);
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    values[f] = 2 * std::size_t(m[(a + 1) % 3] + 1) * (m[(a + 2) % 3] + 1);
  }
  halo_ = std::make_unique<MpiHaloExchange>(comm_, nb, values);
  engine_->set_halo_exchange(halo_.get());

  // 4. NCCL for CUDA engines (collective: every rank takes part, -1 where it has no GPU engine).
  using HT = DistributedOptions::HaloTransport;
  if (options.halo_transport != HT::mpi) {
    const int device = engine_->fields_on_device() ? cuda_device_of(options, local_rank) : -1;
    if (!halo_->use_nccl(device, &transport_note_) && options.halo_transport == HT::nccl) {
      failed_ = true;
      fail(kPrefix, "halo_transport nccl: ", transport_note_);
    }
  }
}

DistributedFdtd::~DistributedFdtd() {
  engine_.reset();
  halo_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void DistributedFdtd::require_alive() const {
  if (failed_) fail(kPrefix, "the run failed earlier on some rank; this object can no longer be used");
}

void DistributedFdtd::checkpoint(const std::string& error, bool* go) {
  int in[2] = {error.empty() ? INT_MAX : rank_, (go && !*go) ? 0 : 1};
  int out[2];
  MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, comm_);
  if (out[0] != INT_MAX) {
    const int root = out[0];
    std::string msg = rank_ == root ? error : std::string();
    int len = int(msg.size());
    MPI_Bcast(&len, 1, MPI_INT, root, comm_);
    msg.resize(std::size_t(len));
    MPI_Bcast(msg.data(), len, MPI_CHAR, root, comm_);
    failed_ = true;
    throw Error(std::string(kPrefix) + "rank " + std::to_string(root) + " of " + std::to_string(size_) + ": " + msg);
  }
  if (go) *go = out[1] != 0;
}

void DistributedFdtd::collective(const std::function<void()>& f) {
  require_alive();
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
  }
  checkpoint(error);
}

int DistributedFdtd::run(int steps, const StepCallback& callback, int callback_interval) {
  require_alive();
  if (steps < 0) fail(kPrefix, "number of steps ", steps, " must be >= 0");
  if (callback_interval < 1) callback_interval = 1;
  int done = 0;
  while (done < steps) {
    const int n = std::min(callback_interval, steps - done);
    std::string error;
    bool aborted = false;
    try {
      engine_->run(n);
    } catch (const HaloAborted&) {
      aborted = true;  // another rank failed; its message comes with the checkpoint
    } catch (const std::exception& e) {
      error = e.what();
      halo_->notify_error();  // release the ranks waiting for this rank's planes
    }
    bool go = true;
    if (error.empty() && !aborted) {
      done += n;
      if (callback) {
        try {
          go = callback(done, steps);
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
    }
    checkpoint(error, &go);
    if (aborted) {  // cannot happen: the notifying rank reports its error at this checkpoint
      failed_ = true;
      fail(kPrefix, "rank ", rank_, " was released from the halo exchange by rank ", halo_->error_seen(),
           ", which reported no error");
    }
    if (!go) break;
  }
  return done;
}

FieldPiece DistributedFdtd::field_piece(Component c) const {
  require_alive();
  FieldPiece p;
  p.box = owned();
  const auto lo = piece_lo();
  const YeeGrid& g = op_->grid();
  const std::vector<float> local = engine_->field(c);
  const auto d = p.box.dims();
  p.values.resize(std::size_t(p.box.count()));
  for (int z = 0; z < d[2]; ++z)
    for (int y = 0; y < d[1]; ++y)
      for (int x = 0; x < d[0]; ++x) {
        const int i = p.box.lo[0] - lo[0] + x, j = p.box.lo[1] - lo[1] + y, k = p.box.lo[2] - lo[2] + z;
        p.values[x + std::size_t(d[0]) * (y + std::size_t(d[1]) * z)] =
            local[i + std::size_t(g.nx + 1) * (j + std::size_t(g.ny + 1) * k)];
      }
  return p;
}

std::vector<float> DistributedFdtd::gather_field(Component c, int root) const {
  require_alive();
  const FieldPiece p = field_piece(c);
  SampleBox all;
  all.hi = {global_.grid.nx, global_.grid.ny, global_.grid.nz};
  return gather_boxes(comm_, root, p.box, p.values, 1, all);
}

ProbeRecord DistributedFdtd::probes() const {
  require_alive();
  const ProbeRecord local = engine_->probes();
  const int steps = engine_->steps_completed();
  const int np = int(global_.probes.size());
  // Every probe has one owner: a sum over ranks of zero-filled rows assembles them exactly.
  std::vector<float> mine(std::size_t(np) * steps, 0.0f), all(mine.size());
  for (std::size_t q = 0; q < probe_ids_.size(); ++q)
    std::copy(local.values[q].begin(), local.values[q].end(), mine.begin() + std::size_t(probe_ids_[q]) * steps);
  MPI_Allreduce(mine.data(), all.data(), int(mine.size()), MPI_FLOAT, MPI_SUM, comm_);
  ProbeRecord r;
  for (int p = 0; p < np; ++p) {
    r.names.push_back(global_.probes[p].name);
    r.components.push_back(global_.probes[p].component);
    r.values.emplace_back(all.begin() + std::size_t(p) * steps, all.begin() + std::size_t(p + 1) * steps);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------

DistributedDftMonitor::DistributedDftMonitor(DistributedFdtd& run, std::vector<double> frequencies_hz,
                                             std::vector<Component> components, const DftBox& box,
                                             int sample_interval)
    : run_(run), freqs_(std::move(frequencies_hz)), comps_(std::move(components)) {
  const YeeGrid& g = run.global_setup().grid;
  const int n[3] = {g.nx, g.ny, g.nz};
  run.collective([&] {
    for (int a = 0; a < 3; ++a) {
      box_.lo[a] = box.lo[a];
      box_.hi[a] = box.hi[a] < 0 ? n[a] : box.hi[a];
      if (box_.lo[a] < 0 || box_.hi[a] > n[a] || box_.lo[a] > box_.hi[a])
        fail("DFT monitor: box ", "xyz"[a], " range [", box.lo[a], ", ", box.hi[a],
             "] is not inside the sample range [0, ", n[a], "]");
    }
    local_ = intersect(box_, run.owned());
    if (!local_.empty()) {
      const auto lo = run.piece_lo();
      DftBox lb;
      for (int a = 0; a < 3; ++a) {
        lb.lo[a] = local_.lo[a] - lo[a];
        lb.hi[a] = local_.hi[a] - lo[a];
      }
      local_monitor_ = std::make_unique<DftMonitor>(run.engine(), freqs_, comps_, lb, sample_interval);
    } else {
      // The same argument checks on the ranks without a part of the box.
      if (sample_interval < 1) fail("DFT monitor: sample interval ", sample_interval, " steps must be >= 1");
      if (freqs_.empty()) fail("DFT monitor: no frequencies given");
      if (comps_.empty()) fail("DFT monitor: no field components given");
    }
  });
}

DistributedDftMonitor::~DistributedDftMonitor() = default;

SteadyStateCheck DistributedDftMonitor::check_steady_state() {
  const std::size_t nf = freqs_.size(), nc = comps_.size();
  // Per frequency: ||P - P_old||^2, ||P||^2, ||S||^2 over this rank's part, and the window.
  std::vector<double> sums(3 * nf + 1, 0.0);
  run_.collective([&] {
    if (!local_monitor_) return;
    const SteadyStateCheck local = local_monitor_->check_steady_state();
    sums[3 * nf] = local.window_s;
    if (checks_ == 0) return;
    previous_phasor_.resize(nc * nf);
    for (std::size_t s = 0; s < nc; ++s)
      for (std::size_t f = 0; f < nf; ++f) {
        const auto P = local_monitor_->box_phasor(comps_[s], int(f));
        const auto S = local_monitor_->box_spectrum(comps_[s], int(f));
        auto& old = previous_phasor_[s * nf + f];
        const bool have_old = old.size() == P.size();
        double num = 0, den = 0, s2 = 0;
        for (std::size_t q = 0; q < P.size(); ++q) {
          const std::complex<double> p(P[q]), sv(S[q]);
          const std::complex<double> po = have_old ? std::complex<double>(old[q]) : 0.0;
          num += std::norm(p - po);
          den += std::norm(p);
          s2 += std::norm(sv);
        }
        sums[3 * f] += num;
        sums[3 * f + 1] += den;
        sums[3 * f + 2] += s2;
        old = P;
      }
  });
  std::vector<double> total(sums.size());
  MPI_Allreduce(sums.data(), total.data(), int(nf * 3), MPI_DOUBLE, MPI_SUM, run_.comm());
  MPI_Allreduce(&sums[3 * nf], &total[3 * nf], 1, MPI_DOUBLE, MPI_MAX, run_.comm());
  SteadyStateCheck r;
  if (checks_ > 0) {
    const double win = total[3 * nf];
    r.window_s = win;
    r.spectrum_change = 0;
    for (std::size_t f = 0; f < nf; ++f) {
      const double num = total[3 * f], den = total[3 * f + 1], s2 = total[3 * f + 2];
      const double ds2 = den * (0.5 * win) * (0.5 * win);  // ||S - S_prev||^2 = ||P||^2 (win / 2)^2
      r.spectrum_change = std::max(r.spectrum_change, s2 > 0 ? std::sqrt(ds2 / s2) : (ds2 > 0 ? 1.0 : 0.0));
      if (checks_ >= 2) {
        r.has_previous = true;
        const double rc = den > 0 ? std::sqrt(num / den) : (num > 0 ? 1.0 : 0.0);
        r.relative_change = f == 0 ? rc : std::max(r.relative_change, rc);
      }
    }
  }
  ++checks_;
  return r;
}

std::vector<std::complex<float>> DistributedDftMonitor::gather(bool phasor, Component c, int fi, int root) const {
  std::vector<float> flat;
  run_.collective([&] {
    if (std::find(comps_.begin(), comps_.end(), c) == comps_.end())
      fail("DFT monitor: component ", component_name(c), " is not monitored");
    if (fi < 0 || fi >= int(freqs_.size()))
      fail("DFT monitor: frequency index ", fi, " out of range (", freqs_.size(), " frequencies)");
    if (phasor && checks_ < 2)
      fail("DFT monitor: no steady-state window yet (call check_steady_state() at least twice)");
    if (!local_monitor_) return;
    const auto v = phasor ? local_monitor_->box_phasor(c, fi) : local_monitor_->box_spectrum(c, fi);
    flat.resize(2 * v.size());
    for (std::size_t q = 0; q < v.size(); ++q) {
      flat[2 * q] = v[q].real();
      flat[2 * q + 1] = v[q].imag();
    }
  });
  const std::vector<float> all = gather_boxes(run_.comm(), root, local_, flat, 2, box_);
  std::vector<std::complex<float>> out(all.size() / 2);
  for (std::size_t q = 0; q < out.size(); ++q) out[q] = {all[2 * q], all[2 * q + 1]};
  return out;
}

std::vector<std::complex<float>> DistributedDftMonitor::gather_box_spectrum(Component c, int fi, int root) const {
  return gather(false, c, fi, root);
}

std::vector<std::complex<float>> DistributedDftMonitor::gather_box_phasor(Component c, int fi, int root) const {
  return gather(true, c, fi, root);
}

}  // namespace vem
