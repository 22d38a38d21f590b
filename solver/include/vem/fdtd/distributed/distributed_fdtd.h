// A distributed FDTD run over an MPI communicator (issue 17), VTK-free: every rank steps its piece
// of the grid (decomposition.h) with its own engine (CPU, or CUDA on its own device), joined to
// its neighbours through MpiHaloExchange. What a caller needs is gathered or reduced: probes (each
// recorded by the rank owning its sample), fields (each rank's owned piece with its global
// extent, or the whole grid gathered on one rank), DFT monitors per piece and the steady-state
// criterion reduced over ranks (DistributedDftMonitor).
//
// Every member marked "collective" must be called by all ranks of the communicator in the same
// order. Errors: an exception on one rank (building its piece, stepping, in a callback) ends the
// collective call on every rank with the same vem::Error, "distributed FDTD: rank r of N: <message>"
// (the lowest failing rank's message), without a hang: the ranks meet at checkpoints (one
// MPI_Allreduce after construction steps and after every chunk of `callback_interval` steps), and
// ranks waiting for a failed rank's halo planes are released by its error notice
// (mpi_halo_exchange.h). After such an error the object only throws.
//
// Used from C++ with `mpirun -np N` (examples/mpi/vem_fdtd_mpi.cpp), or by a ParaView filter on
// pvbatch ranks: give the decomposition of the pipeline's pieces in DistributedOptions::cells and
// the piece's materials through DistributedOptions::fill_materials (the global setup then carries
// no material arrays), and output field_piece() with its extent.
//
// Same results as one domain: fields, probes and DFT spectra/phasors of the CPU engine are equal
// bit for bit to a single-domain run of the same setup (every sample is updated with the same
// arithmetic in the same order); reductions (steady-state criterion) agree to rounding. One
// known exception: along a periodic axis a cut into pieces joined around, together with a cut
// of another axis, the H component along that axis on the top node plane N (the repeat of plane
// 0, read by no update and left out of the energy) differs where it meets the other cut (the
// E sample at the corner of two cut planes arrives one step late there; it is read by no
// owned update elsewhere). TF/SF plane waves, near-to-far surfaces and SAR averaging over pieces:
// distributed_extensions.h; the steady-state run: distributed_harmonic.h.
#pragma once

#include <mpi.h>

#include <array>
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vem/fdtd/distributed/decomposition.h"
#include "vem/fdtd/distributed/mpi_halo_exchange.h"
#include "vem/fdtd/extensions/dft_monitor.h"
#include "vem/fdtd/fdtd_engine.h"

namespace vem {

struct DistributedOptions {
  Backend backend = Backend::cpu;
  // Pieces: `cells` (uneven: the cell counts of the pieces along each axis, all three given) wins;
  // else `ranks` > 0 on all axes (even split); else chosen by choose_decomposition().
  std::array<std::vector<int>, 3> cells;
  std::array<int, 3> ranks{0, 0, 0};
  // CUDA: the device of this rank; -1 = node-local rank modulo devices_per_node.
  int device_index = -1;
  int devices_per_node = 1;
  EngineTuning tuning;
  // How the halo planes of CUDA engines travel (mpi_halo_exchange.h): MPI through page-locked
  // host memory, or NCCL device to device (needs a build with NCCL and one GPU per rank).
  // automatic: NCCL where it can run, else MPI; nccl: an error where it cannot. CPU engines: MPI.
  enum class HaloTransport { automatic, mpi, nccl } halo_transport = HaloTransport::automatic;
  // Optional: fills the piece's material arrays (material_index or medium arrays, piece cells,
  // x fastest) for the piece of `cells` cells starting at global cell `lo`; the global setup
  // then carries the material table / the array layout but no per-cell arrays. A coefficient-array
  // medium averaged at the edges is filled on the box piece.medium already names (array_lo /
  // array_n in piece cells: the neighbours' cells beside the cuts), not on the piece's cells.
  std::function<void(const std::array<int, 3>& lo, const std::array<int, 3>& cells, FdtdSetup& piece)> fill_materials;
};

// One rank's owned samples of a component (decomposition.h) with their global sample extent.
struct FieldPiece {
  SampleBox box;              // global sample indices, inclusive
  std::vector<float> values;  // box.dims(), x fastest
};

class DistributedFdtd {
 public:
  // Collective. Decomposes `global` over the ranks of `comm` and builds this rank's piece,
  // operator, engine and halo exchange. Throws vem::Error on every rank if any rank fails.
  DistributedFdtd(MPI_Comm comm, const FdtdSetup& global, const DistributedOptions& options = {});
  ~DistributedFdtd();
  DistributedFdtd(const DistributedFdtd&) = delete;
  DistributedFdtd& operator=(const DistributedFdtd&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  const Decomposition& decomposition() const { return decomp_; }
  const FdtdSetup& global_setup() const { return global_; }
  const FdtdSetup& piece() const { return piece_; }              // this rank's sub-setup
  std::array<int, 3> piece_lo() const { return decomp_.piece_lo(rank_); }  // first global cell
  SampleBox owned() const { return owned_samples(decomp_, rank_); }
  const FdtdOperator& op() const { return *op_; }
  FdtdEngine& engine() { return *engine_; }                      // add extensions here
  const FdtdEngine& engine() const { return *engine_; }
  MpiHaloExchange& halo() { return *halo_; }
  const char* halo_transport() const { return halo_->transport(); }  // "nccl" or "mpi"
  const std::string& halo_transport_note() const { return transport_note_; }  // why not NCCL
  double dt() const { return op_->dt(); }

  // Collective. Advances every rank `steps` steps in chunks of `callback_interval`; after each
  // chunk the ranks meet: the callback runs on every rank and the run stops when it returns false
  // on any of them. Returns the steps done (equal on all ranks).
  int run(int steps, const StepCallback& callback = {}, int callback_interval = 100);
  int steps_completed() const { return engine_->steps_completed(); }

  // This rank's owned samples of component c (local, no communication).
  FieldPiece field_piece(Component c) const;
  // Collective: the whole grid's compact array of c (FdtdEngine::field() layout) on `root`,
  // empty on the other ranks. For tests and small grids (it holds the whole field on one rank).
  std::vector<float> gather_field(Component c, int root = 0) const;
  // Collective: the probes of the global setup, in its order, on every rank.
  ProbeRecord probes() const;

  // Collective: runs f() on every rank, then meets; if it threw on any rank every rank throws
  // (the checkpoint protocol above). For callers' own per-rank steps (e.g. attaching extensions).
  void collective(const std::function<void()>& f);

 private:
  // Meets the other ranks: `error` (empty = none) is this rank's failure; `go` is ANDed.
  void checkpoint(const std::string& error, bool* go = nullptr);
  void require_alive() const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  FdtdSetup global_;  // without per-cell material arrays (they may be large)
  Decomposition decomp_;
  FdtdSetup piece_;
  std::vector<int> probe_ids_;  // global indices of this rank's probes
  std::unique_ptr<FdtdOperator> op_;
  std::unique_ptr<FdtdEngine> engine_;
  std::unique_ptr<MpiHaloExchange> halo_;
  std::string transport_note_;
  bool failed_ = false;
};

// DFT monitors (dft_monitor.h) over a distributed run: each rank accumulates the part of the box
// it owns; spectra and phasors are gathered in the global box layout; the steady-state criterion
// sums its norms over all ranks (equal to the single-domain criterion up to summation order).
class DistributedDftMonitor {
 public:
  // Collective. `box` in global sample indices (hi < 0: up to N).
  DistributedDftMonitor(DistributedFdtd& run, std::vector<double> frequencies_hz, std::vector<Component> components,
                        const DftBox& box = {}, int sample_interval = 1);
  ~DistributedDftMonitor();

  const SampleBox& global_box() const { return box_; }
  const SampleBox& local_box() const { return local_; }  // global indices; may be empty
  const DftMonitor* local() const { return local_monitor_.get(); }  // null where local_box is empty

  // Collective (call it on every rank at the same step, as DftMonitor::check_steady_state).
  SteadyStateCheck check_steady_state();
  // Collective: S_c(f) / the last window's phasor over the global box (x fastest) on `root`.
  std::vector<std::complex<float>> gather_box_spectrum(Component c, int freq_index, int root = 0) const;
  std::vector<std::complex<float>> gather_box_phasor(Component c, int freq_index, int root = 0) const;

 private:
  std::vector<std::complex<float>> gather(bool phasor, Component c, int freq_index, int root) const;

  DistributedFdtd& run_;
  std::vector<double> freqs_;
  std::vector<Component> comps_;
  SampleBox box_, local_;
  std::unique_ptr<DftMonitor> local_monitor_;
  std::vector<std::vector<std::complex<float>>> previous_phasor_;  // [slot * nf + f], for the criterion
  int checks_ = 0;
};

// Internal helpers shared by the distributed extensions (distributed_extensions.h). Collective.
namespace distributed_detail {
// Gathers each rank's box `mine` of `k` floats per sample (x fastest) into the global box
// `global` (x fastest) on `root`; empty elsewhere. Ranks whose box is empty send nothing.
std::vector<float> gather_boxes(MPI_Comm comm, int root, const SampleBox& mine, const std::vector<float>& values,
                                int k, const SampleBox& global);
// The inverse: `all` (global box on `root`, ignored elsewhere) cut into each rank's box `mine`.
std::vector<float> scatter_boxes(MPI_Comm comm, int root, const SampleBox& mine, const std::vector<float>& all,
                                 int k, const SampleBox& global);
}  // namespace distributed_detail

}  // namespace vem
