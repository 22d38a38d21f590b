#include "vem/fdtd/distributed/distributed_output.h"

#include <string>

#include "vem/core/error.h"

namespace vem {

std::vector<float> piece_field_with_owner_planes(const DistributedFdtd& run, Component c) {
  std::vector<float> f = run.engine().field(c);
  const std::array<int, 3> cells = run.decomposition().piece_cells(run.rank());
  const std::array<long long, 3> n{cells[0] + 1LL, cells[1] + 1LL, cells[2] + 1LL};  // samples per axis
  if (static_cast<long long>(f.size()) != n[0] * n[1] * n[2])
    fail("piece_field_with_owner_planes: the engine's array has ", f.size(), " samples, the piece ",
         n[0] * n[1] * n[2]);
  const std::array<int, 6> nb = face_neighbours(run.decomposition(), run.global_setup(), run.rank());
  const long long stride[3] = {1, n[0], n[0] * n[1]};
  for (int a = 0; a < 3; ++a) {
    const int lo_rank = nb[2 * a] >= 0 ? nb[2 * a] : MPI_PROC_NULL;
    const int hi_rank = nb[2 * a + 1] >= 0 ? nb[2 * a + 1] : MPI_PROC_NULL;
    if (lo_rank == MPI_PROC_NULL && hi_rank == MPI_PROC_NULL) continue;
    const int b = (a + 1) % 3, d = (a + 2) % 3;
    const long long plane = n[b] * n[d];
    // Plane index 0 goes down to the lower neighbour; the upper neighbour's plane 0 becomes our
    // plane n - 1 (the shared node plane it owns).
    std::vector<float> send(static_cast<std::size_t>(plane)), recv(static_cast<std::size_t>(plane));
    auto at = [&](long long i, long long jb, long long jd) { return i * stride[a] + jb * stride[b] + jd * stride[d]; };
    for (long long jd = 0; jd < n[d]; ++jd)
      for (long long jb = 0; jb < n[b]; ++jb) send[std::size_t(jb + n[b] * jd)] = f[std::size_t(at(0, jb, jd))];
    const int rc = MPI_Sendrecv(send.data(), int(plane), MPI_FLOAT, lo_rank, 9300 + a, recv.data(), int(plane), MPI_FLOAT,
                                hi_rank, 9300 + a, run.comm(), MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail("piece_field_with_owner_planes: MPI_Sendrecv along axis ", a, " failed (", rc, ")");
    if (hi_rank != MPI_PROC_NULL)
      for (long long jd = 0; jd < n[d]; ++jd)
        for (long long jb = 0; jb < n[b]; ++jb) f[std::size_t(at(n[a] - 1, jb, jd))] = recv[std::size_t(jb + n[b] * jd)];
  }
  return f;
}

}  // namespace vem
