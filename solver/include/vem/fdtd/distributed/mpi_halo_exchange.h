// HaloExchange (halo_exchange.h) over MPI: the face planes of one rank's engine go to the face
// neighbours with non-blocking sends and receives (MPI_Isend / MPI_Irecv, then a wait), staged in
// host memory. A CUDA engine hands its planes through read_plane / write_plane (host copies);
// packing on the device, CUDA-aware sends from device memory and overlapping the exchange with
// the interior update are future work (issue 17).
//
// Failure without a hang: while it waits for its planes, exchange() also watches for an error
// notice (notify_error() of another rank, on its own duplicated communicator). When one arrives
// it cancels its pending receives, abandons its pending sends and throws HaloAborted, so a rank
// whose neighbour died never blocks; DistributedFdtd then learns at its next checkpoint (a
// collective every rank reaches) which rank failed and why.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "vem/core/error.h"
#include "vem/fdtd/halo_exchange.h"

namespace vem {

// Thrown by MpiHaloExchange::exchange() when another rank reported an error.
class HaloAborted : public Error {
 public:
  explicit HaloAborted(int failed_rank)
      : Error("halo exchange abandoned: rank " + std::to_string(failed_rank) + " reported an error"),
        failed_rank(failed_rank) {}
  int failed_rank;
};

class MpiHaloExchange final : public HaloExchange {
 public:
  // `comm` is duplicated (twice: halo planes, error notices). neighbour[f]: the rank across face
  // f of this rank's piece, -1 where the face is not a subdomain face. plane_values[f]: the
  // values of one plane message through face f (2 (N_b + 1)(N_c + 1) of the local grid).
  MpiHaloExchange(MPI_Comm comm, const std::array<int, 6>& neighbour, const std::array<std::size_t, 6>& plane_values);
  ~MpiHaloExchange() override;
  MpiHaloExchange(const MpiHaloExchange&) = delete;
  MpiHaloExchange& operator=(const MpiHaloExchange&) = delete;

  std::vector<HaloPlane> exchange(bool electric, std::vector<HaloPlane> outgoing) override;

  // Tells every other rank of the communicator that this rank failed (non-blocking; idempotent).
  void notify_error();
  // The rank whose notice was seen, or -1.
  int error_seen() const { return error_rank_; }

  // Accounting since construction (or reset_stats()): exchange() calls, bytes this rank sent,
  // and wall time spent inside exchange() (posting, waiting, copying).
  struct Stats {
    std::int64_t calls = 0, bytes_sent = 0;
    double seconds = 0;
  };
  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  bool poll_error();  // tests the pre-posted notice receive
  void abandon(std::vector<MPI_Request>& recv, std::vector<MPI_Request>& send);

  MPI_Comm halo_comm_ = MPI_COMM_NULL, error_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::array<int, 6> neighbour_;
  std::array<std::size_t, 6> plane_values_;
  MPI_Request error_recv_ = MPI_REQUEST_NULL;
  int error_buf_ = -1, error_rank_ = -1;
  bool notified_ = false;
  std::vector<MPI_Request> notices_;
  int notice_buf_ = -1;
  std::vector<MPI_Request> abandoned_;        // sends never received (a neighbour failed): freed on destruction
  std::vector<std::vector<float>> kept_;      // their buffers
  Stats stats_;
};

}  // namespace vem
