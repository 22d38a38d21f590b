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

std::vector<HaloPlane> MpiHaloExchange::exchange(bool electric, std::vector<HaloPlane> outgoing) {
  const double t0 = MPI_Wtime();
  if (poll_error()) throw HaloAborted(error_rank_);
  // After H: receive through low faces; after E: through high faces (halo_exchange.h).
  std::vector<HaloPlane> incoming;
  std::vector<MPI_Request> recv, send;
  for (int f = 0; f < 6; ++f) {
    if (neighbour_[f] < 0 || (f % 2 == 1) != electric) continue;
    HaloPlane p;
    p.face = f;
    p.values.resize(plane_values_[f]);
    incoming.push_back(std::move(p));
  }
  for (HaloPlane& p : incoming) {
    MPI_Request q;
    check_mpi(MPI_Irecv(p.values.data(), int(p.values.size()), MPI_FLOAT, neighbour_[p.face],
                        plane_tag(p.face, electric), halo_comm_, &q), "MPI_Irecv");
    recv.push_back(q);
  }
  for (const HaloPlane& p : outgoing) {
    if (p.face < 0 || p.face > 5 || neighbour_[p.face] < 0)
      fail("MpiHaloExchange: the engine sends a plane through face ", p.face, ", which has no neighbour rank");
    MPI_Request q;
    // The neighbour receives it through the opposite face.
    check_mpi(MPI_Isend(p.values.data(), int(p.values.size()), MPI_FLOAT, neighbour_[p.face],
                        plane_tag(p.face ^ 1, electric), halo_comm_, &q), "MPI_Isend");
    send.push_back(q);
    stats_.bytes_sent += std::int64_t(p.values.size() * sizeof(float));
  }
  // Wait for all, watching for an error notice; yield between tests (ranks may share cores).
  std::vector<MPI_Request> all = recv;
  all.insert(all.end(), send.begin(), send.end());
  for (;;) {
    int done = 0;
    check_mpi(MPI_Testall(int(all.size()), all.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) break;
    if (poll_error()) {
      for (std::size_t q = 0; q < recv.size(); ++q) recv[q] = all[q];
      for (std::size_t q = 0; q < send.size(); ++q) send[q] = all[recv.size() + q];
      abandon(recv, send);
      // `outgoing` holds the buffers of abandoned sends: keep them alive with the requests.
      for (HaloPlane& p : outgoing) kept_.push_back(std::move(p.values));
      throw HaloAborted(error_rank_);
    }
    std::this_thread::yield();
  }
  ++stats_.calls;
  stats_.seconds += MPI_Wtime() - t0;
  return incoming;
}

}  // namespace vem
