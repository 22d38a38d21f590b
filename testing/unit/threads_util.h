// OpenMP thread count for the CPU engine in tests. The engine opens ~20 parallel regions per
// step; when the machine is oversubscribed (ctest running several test executables at once on a
// 2-core CI machine, other jobs) every barrier can wait a scheduler time slice for a descheduled
// thread: on the 2-core development machine under load a 1000-step run of a 4e5-cell 2D grid
// went from 4 s to 45 s on two threads, and a 3.5e6-cell 3D run from 11 s (one thread) to 48 s.
// One thread costs at most a factor 2 on an idle machine, so the physics tests pin grids below
// 1e7 cells (all of theirs) to one thread for the scope of the guard.
#pragma once

#include <omp.h>

#include <cstdint>

namespace vem_test {

class ThreadsForGrid {
 public:
  explicit ThreadsForGrid(std::int64_t cells, std::int64_t single_thread_below = 10000000)
      : saved_(omp_get_max_threads()) {
    if (cells < single_thread_below) omp_set_num_threads(1);
  }
  ~ThreadsForGrid() { omp_set_num_threads(saved_); }
  ThreadsForGrid(const ThreadsForGrid&) = delete;
  ThreadsForGrid& operator=(const ThreadsForGrid&) = delete;

 private:
  int saved_;
};

}  // namespace vem_test
