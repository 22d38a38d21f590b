// HaloExchange (halo_exchange.h) over MPI: the face planes of one rank's engine go to the face
// neighbours with non-blocking sends and receives (MPI_Isend / MPI_Irecv, then a wait).
// Two ways a plane travels:
//  - MPI from host memory (always available): the CPU engine's planes, or a CUDA engine's planes
//    packed on the device and staged through page-locked host memory (the split-phase
//    start_exchange / finish_exchange, which the CUDA engine overlaps with its interior update).
//    Debian's and Ubuntu's Open MPI are not CUDA-aware (opal_built_with_cuda_support false,
//    checked on the device machine), so device pointers never go to MPI;
//  - NCCL from device memory (use_nccl(); built where NCCL is found, VEM_WITH_NCCL): ncclSend /
//    ncclRecv between the ranks' GPUs (NVLink or PCIe peer-to-peer), ordered on the engine's copy
//    stream. It needs one GPU per rank.
//
// Failure without a hang: while it waits for its planes, the exchange also watches for an error
// notice (notify_error() of another rank, on its own duplicated communicator). When one arrives
// it cancels its pending receives, abandons its pending sends (NCCL: aborts the communicator) and
// throws HaloAborted, so a rank whose neighbour died never blocks; DistributedFdtd then learns at
// its next checkpoint (a collective every rank reaches) which rank failed and why.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
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
  bool device_buffers() const override { return nccl_ != nullptr; }
  void start_exchange(bool electric, const std::vector<HaloBuffer>& send, const std::vector<HaloBuffer>& recv,
                      void* stream) override;
  void finish_exchange() override;

  // Collective. Moves the planes between the ranks' GPUs with NCCL from now on (device buffers of
  // a CUDA engine on CUDA device `cuda_device`; -1: this rank has no GPU engine). Returns true on
  // every rank, or false on every rank with the reason in *why (built without NCCL, a rank without
  // a GPU engine, two ranks on one GPU, NCCL failing to start); the MPI path stays then.
  bool use_nccl(int cuda_device, std::string* why = nullptr);
  // "nccl" or "mpi" (host memory).
  const char* transport() const { return nccl_ ? "nccl" : "mpi"; }

  // Tells every other rank of the communicator that this rank failed (non-blocking; idempotent).
  void notify_error();
  // The rank whose notice was seen, or -1.
  int error_seen() const { return error_rank_; }

  // Accounting since construction (or reset_stats()): exchanges completed, bytes this rank sent,
  // and wall time spent inside exchange() / start_exchange() / finish_exchange() (posting, waiting).
  struct Stats {
    std::int64_t calls = 0, bytes_sent = 0;
    double seconds = 0;
  };
  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  bool poll_error();  // tests the pre-posted notice receive
  void abandon(std::vector<MPI_Request>& recv, std::vector<MPI_Request>& send);
  void post(bool electric, const std::vector<HaloBuffer>& send, const std::vector<HaloBuffer>& recv);
  bool wait();  // false: an error notice came first (the requests are abandoned)
  struct Nccl;  // mpi_halo_exchange_nccl.cpp
  void nccl_start(bool electric, const std::vector<HaloBuffer>& send, const std::vector<HaloBuffer>& recv, void* stream);
  void nccl_finish();
  void nccl_release();

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
  std::vector<MPI_Request> recv_, send_;  // the started exchange's requests
  Nccl* nccl_ = nullptr;  // owned; released by nccl_release()
};

}  // namespace vem
