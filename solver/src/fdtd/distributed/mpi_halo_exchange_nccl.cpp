// The NCCL path of MpiHaloExchange (mpi_halo_exchange.h): halo planes from device memory to the
// neighbours' GPUs with ncclSend / ncclRecv, where the library is built with NCCL
// (VEM_WITH_NCCL); otherwise use_nccl() says so and the MPI path stays.
//
// Matching: NCCL has no tags; sends and receives between two ranks match in the order they are
// posted within a group. In one half step a rank sends at most one plane to each neighbour and
// receives at most one from it (planes go up through the high faces after H and down through the
// low faces after E; two faces lead to the same rank only along an axis of two pieces, and then
// only one of them sends in a half step), so every pair exchanges at most one message each way.
#include "vem/fdtd/distributed/mpi_halo_exchange.h"

#include <thread>

#ifdef VEM_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#endif

namespace vem {

#ifndef VEM_WITH_NCCL

struct MpiHaloExchange::Nccl {};

bool MpiHaloExchange::use_nccl(int cuda_device, std::string* why) {
  (void)cuda_device;
  if (why) *why = "this build has no NCCL (it was not found when VoxelEM was configured)";
  return false;
}
void MpiHaloExchange::nccl_start(bool, const std::vector<HaloBuffer>&, const std::vector<HaloBuffer>&, void*) {
  fail("MpiHaloExchange: built without NCCL");
}
void MpiHaloExchange::nccl_finish() { fail("MpiHaloExchange: built without NCCL"); }
void MpiHaloExchange::nccl_release() { delete nccl_; nccl_ = nullptr; }

#else

struct MpiHaloExchange::Nccl {
  ncclComm_t comm = nullptr;
  cudaEvent_t done = nullptr;
  int device = -1;
};

namespace {

std::string nccl_text(ncclResult_t r) { return ncclGetErrorString(r); }

}  // namespace

bool MpiHaloExchange::use_nccl(int cuda_device, std::string* why) {
  // 1. Every rank has a GPU engine, and no two ranks on one host share a GPU (NCCL refuses it).
  constexpr int kIdLen = 64;
  char id[kIdLen] = {};
  int len = 0;
  if (cuda_device >= 0) {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    MPI_Get_processor_name(name, &len);
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, int(sizeof bus), cuda_device) != cudaSuccess) bus[0] = '?';
    std::snprintf(id, kIdLen, "%.30s/%.30s", name, bus);
  }
  std::vector<char> all(std::size_t(size_) * kIdLen);
  MPI_Allgather(id, kIdLen, MPI_CHAR, all.data(), kIdLen, MPI_CHAR, halo_comm_);
  std::string reason;
  for (int r = 0; r < size_ && reason.empty(); ++r) {
    const char* a = all.data() + std::size_t(r) * kIdLen;
    if (a[0] == 0) reason = "rank " + std::to_string(r) + " has no CUDA engine";
    for (int q = 0; q < r && reason.empty(); ++q)
      if (std::strncmp(a, all.data() + std::size_t(q) * kIdLen, kIdLen) == 0)
        reason = "ranks " + std::to_string(q) + " and " + std::to_string(r) + " share the GPU " + a +
                 " (NCCL needs one GPU per rank)";
    if (reason.empty() && a[std::strlen(a) - 1] == '?') reason = "rank " + std::to_string(r) + " could not name its GPU";
  }
  if (!reason.empty()) {
    if (why) *why = reason;
    return false;
  }
  // 2. One communicator over all ranks, its id from rank 0.
  ncclUniqueId uid;
  int ok = 1;
  if (rank_ == 0 && ncclGetUniqueId(&uid) != ncclSuccess) ok = 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, halo_comm_);
  if (!ok) {
    if (why) *why = "ncclGetUniqueId failed on rank 0";
    return false;
  }
  MPI_Bcast(&uid, int(sizeof uid), MPI_BYTE, 0, halo_comm_);
  auto n = new Nccl;
  n->device = cuda_device;
  std::string mine;
  if (cudaSetDevice(cuda_device) != cudaSuccess) mine = "cudaSetDevice failed";
  ncclResult_t r = ncclSuccess;
  if (mine.empty()) r = ncclCommInitRank(&n->comm, size_, uid, rank_);
  if (mine.empty() && r != ncclSuccess) mine = "ncclCommInitRank: " + nccl_text(r);
  if (mine.empty() && cudaEventCreateWithFlags(&n->done, cudaEventDisableTiming) != cudaSuccess)
    mine = "cudaEventCreate failed";
  // Every rank learns whether every rank has a communicator.
  int good = mine.empty() ? 1 : 0, all_good = 0;
  MPI_Allreduce(&good, &all_good, 1, MPI_INT, MPI_MIN, halo_comm_);
  nccl_ = n;
  if (!all_good) {
    nccl_release();
    if (why) *why = mine.empty() ? "NCCL failed to start on another rank" : "NCCL failed to start: " + mine;
    return false;
  }
  return true;
}

void MpiHaloExchange::nccl_release() {
  if (!nccl_) return;
  // Abort, not destroy: it neither waits for the other ranks nor for unfinished transfers.
  if (nccl_->comm) ncclCommAbort(nccl_->comm);
  if (nccl_->done) cudaEventDestroy(nccl_->done);
  delete nccl_;
  nccl_ = nullptr;
}

void MpiHaloExchange::nccl_start(bool electric, const std::vector<HaloBuffer>& send,
                                 const std::vector<HaloBuffer>& recv, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  auto check = [](ncclResult_t r, const char* what) {
    if (r != ncclSuccess) fail("NCCL halo exchange: ", what, ": ", nccl_text(r));
  };
  for (const HaloBuffer& b : recv)
    if (b.face < 0 || b.face > 5 || neighbour_[b.face] < 0 || halo_face_sends(b.face, electric) ||
        b.count != plane_values_[b.face])
      fail("MpiHaloExchange: bad receive plane for face ", b.face, " (", b.count, " values)");
  for (const HaloBuffer& b : send)
    if (b.face < 0 || b.face > 5 || neighbour_[b.face] < 0)
      fail("MpiHaloExchange: the engine sends a plane through face ", b.face, ", which has no neighbour rank");
  check(ncclGroupStart(), "ncclGroupStart");
  for (const HaloBuffer& b : recv)
    check(ncclRecv(b.values, b.count, ncclFloat, neighbour_[b.face], nccl_->comm, s), "ncclRecv");
  for (const HaloBuffer& b : send) {
    check(ncclSend(b.values, b.count, ncclFloat, neighbour_[b.face], nccl_->comm, s), "ncclSend");
    stats_.bytes_sent += std::int64_t(b.count * sizeof(float));
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  if (cudaEventRecord(nccl_->done, s) != cudaSuccess) fail("NCCL halo exchange: cudaEventRecord failed");
}

// Waits on the host until the transfers are done, watching for error notices: a neighbour that
// failed never sends, so its planes would be awaited for ever; the communicator is aborted then.
void MpiHaloExchange::nccl_finish() {
  for (;;) {
    const cudaError_t e = cudaEventQuery(nccl_->done);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) fail("NCCL halo exchange: ", cudaGetErrorString(e));
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(nccl_->comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      const std::string text = nccl_text(async);
      nccl_release();
      fail("NCCL halo exchange: ", text);
    }
    if (poll_error()) {
      nccl_release();
      throw HaloAborted(error_rank_);
    }
    std::this_thread::yield();
  }
}

#endif

}  // namespace vem
