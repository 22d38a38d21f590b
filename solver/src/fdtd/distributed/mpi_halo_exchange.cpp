#include "vem/fdtd/distributed/mpi_halo_exchange.h"

#include <thread>

#include "vem/fdtd/boundary.h"

namespace vem {

namespace {

constexpr int kErrorTag = 1717;

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("MPI error in ", what, ": ", std::string(text, len));
}

// Tag of a plane message by the face through which the receiver gets it, and the field: two
// neighbours that are the same rank (a periodic axis cut in two) are told apart by the face.
int plane_tag(int receiving_face, bool electric) { return receiving_face + (electric ? 6 : 0); }

}  // namespace

MpiHaloExchange::MpiHaloExchange(MPI_Comm comm, const std::array<int, 6>& neighbour,
                                 const std::array<std::size_t, 6>& plane_values)
    : neighbour_(neighbour), plane_values_(plane_values) {
  check_mpi(MPI_Comm_dup(comm, &halo_comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(comm, &error_comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  for (int f = 0; f < 6; ++f)
    if (neighbour_[f] >= size_) fail("MpiHaloExchange: neighbour rank ", neighbour_[f], " across ", face_name(f),
                                     " is outside the communicator of ", size_, " ranks");
  check_mpi(MPI_Irecv(&error_buf_, 1, MPI_INT, MPI_ANY_SOURCE, kErrorTag, error_comm_, &error_recv_), "MPI_Irecv");
}

MpiHaloExchange::~MpiHaloExchange() {
  nccl_release();
  if (!recv_.empty() || !send_.empty()) abandon(recv_, send_);
  if (error_recv_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&error_recv_);
    MPI_Wait(&error_recv_, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& r : notices_) MPI_Wait(&r, MPI_STATUS_IGNORE);  // 1 int each: sent eagerly
  for (MPI_Request& r : abandoned_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  MPI_Comm_free(&halo_comm_);
  MPI_Comm_free(&error_comm_);
}

bool MpiHaloExchange::poll_error() {
  if (error_rank_ >= 0) return true;
  if (error_recv_ == MPI_REQUEST_NULL) return false;
  int flag = 0;
  MPI_Test(&error_recv_, &flag, MPI_STATUS_IGNORE);
  if (flag) error_rank_ = error_buf_;
  return flag != 0;
}

void MpiHaloExchange::notify_error() {
  if (notified_) return;
  notified_ = true;
  notice_buf_ = rank_;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request q;
    MPI_Isend(&notice_buf_, 1, MPI_INT, r, kErrorTag, error_comm_, &q);
    notices_.push_back(q);
  }
}

void MpiHaloExchange::abandon(std::vector<MPI_Request>& recv, std::vector<MPI_Request>& send) {
  for (MPI_Request& r : recv)
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  // A send to a rank that will never receive it may not complete: the request (and its buffer,
  // kept by the caller) stay until destruction, where the request is freed.
  for (MPI_Request& r : send)
    if (r != MPI_REQUEST_NULL) abandoned_.push_back(r);
  recv.clear();
  send.clear();
}

void MpiHaloExchange::post(bool electric, const std::vector<HaloBuffer>& send, const std::vector<HaloBuffer>& recv) {
  if (!recv_.empty() || !send_.empty()) fail("MpiHaloExchange: an exchange was started while another is pending");
  // After H: receive through low faces; after E: through high faces (halo_exchange.h).
  for (const HaloBuffer& b : recv) {
    if (b.face < 0 || b.face > 5 || neighbour_[b.face] < 0 || halo_face_sends(b.face, electric))
      fail("MpiHaloExchange: the engine receives a ", electric ? "E" : "H", " plane through face ", b.face,
           ", which has no neighbour rank or receives none");
    if (b.count != plane_values_[b.face])
      fail("MpiHaloExchange: the plane for face ", face_name(b.face), " has ", b.count, " values, expected ",
           plane_values_[b.face]);
    MPI_Request q;
    check_mpi(MPI_Irecv(b.values, int(b.count), MPI_FLOAT, neighbour_[b.face], plane_tag(b.face, electric),
                        halo_comm_, &q), "MPI_Irecv");
    recv_.push_back(q);
  }
  for (const HaloBuffer& b : send) {
    if (b.face < 0 || b.face > 5 || neighbour_[b.face] < 0)
      fail("MpiHaloExchange: the engine sends a plane through face ", b.face, ", which has no neighbour rank");
    MPI_Request q;
    // The neighbour receives it through the opposite face.
    check_mpi(MPI_Isend(b.values, int(b.count), MPI_FLOAT, neighbour_[b.face], plane_tag(b.face ^ 1, electric),
                        halo_comm_, &q), "MPI_Isend");
    send_.push_back(q);
    stats_.bytes_sent += std::int64_t(b.count * sizeof(float));
  }
}

bool MpiHaloExchange::wait() {
  // Wait for all, watching for an error notice; yield between tests (ranks may share cores).
  std::vector<MPI_Request> all = recv_;
  all.insert(all.end(), send_.begin(), send_.end());
  for (;;) {
    int done = 0;
    check_mpi(MPI_Testall(int(all.size()), all.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) break;
    if (poll_error()) {
      for (std::size_t q = 0; q < recv_.size(); ++q) recv_[q] = all[q];
      for (std::size_t q = 0; q < send_.size(); ++q) send_[q] = all[recv_.size() + q];
      abandon(recv_, send_);
      return false;
    }
    std::this_thread::yield();
  }
  recv_.clear();
  send_.clear();
  return true;
}

std::vector<HaloPlane> MpiHaloExchange::exchange(bool electric, std::vector<HaloPlane> outgoing) {
  const double t0 = MPI_Wtime();
  if (poll_error()) throw HaloAborted(error_rank_);
  std::vector<HaloPlane> incoming;
  for (int f = 0; f < 6; ++f) {
    if (neighbour_[f] < 0 || halo_face_sends(f, electric)) continue;
    HaloPlane p;
    p.face = f;
    p.values.resize(plane_values_[f]);
    incoming.push_back(std::move(p));
  }
  std::vector<HaloBuffer> send, recv;
  for (HaloPlane& p : incoming) recv.push_back({p.face, p.values.data(), p.values.size()});
  for (HaloPlane& p : outgoing) send.push_back({p.face, p.values.data(), p.values.size()});
  post(electric, send, recv);
  if (!wait()) {
    // `outgoing` holds the buffers of abandoned sends: keep them alive with the requests.
    for (HaloPlane& p : outgoing) kept_.push_back(std::move(p.values));
    throw HaloAborted(error_rank_);
  }
  ++stats_.calls;
  stats_.seconds += MPI_Wtime() - t0;
  return incoming;
}

// Host buffers: straight into MPI, no copies. The engine keeps them alive past an abandoned send
// (it is destroyed before this exchange in DistributedFdtd, and a send to a failed rank is never
// progressed).
void MpiHaloExchange::start_exchange(bool electric, const std::vector<HaloBuffer>& send,
                                     const std::vector<HaloBuffer>& recv, void* stream) {
  const double t0 = MPI_Wtime();
  if (poll_error()) throw HaloAborted(error_rank_);
#ifdef VEM_WITH_NCCL
  if (nccl_) {
    nccl_start(electric, send, recv, stream);
    stats_.seconds += MPI_Wtime() - t0;
    return;
  }
#endif
  (void)stream;
  post(electric, send, recv);
  stats_.seconds += MPI_Wtime() - t0;
}

void MpiHaloExchange::finish_exchange() {
  const double t0 = MPI_Wtime();
#ifdef VEM_WITH_NCCL
  if (nccl_) {
    nccl_finish();
    ++stats_.calls;
    stats_.seconds += MPI_Wtime() - t0;
    return;
  }
#endif
  if (!wait()) throw HaloAborted(error_rank_);
  ++stats_.calls;
  stats_.seconds += MPI_Wtime() - t0;
}

}  // namespace vem
