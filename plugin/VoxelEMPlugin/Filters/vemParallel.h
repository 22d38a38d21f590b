// The ranks ParaView runs on (pvbatch / pvserver under mpirun), for the FDTD filters' distributed
// runs (issue 17). VTK glue: the distributed solver is vem::DistributedFdtd (solver/, VTK-free);
// this only finds the MPI communicator of VTK's global controller and keeps mpi.h out of the
// filters' headers.
#ifndef vemParallel_h
#define vemParallel_h

#include <memory>
#include <string>
#include <vector>

namespace vem_vtk
{

struct ParallelContext
{
  int rank = 0;
  int size = 1;
  /// True when the plugin was built with MPI (vem_distributed) and VTK's global controller is an
  /// MPI controller over more than one rank.
  bool distributed = false;
  /// MPI_Comm of the global controller (a copy of the handle), valid when `distributed`.
  std::shared_ptr<void> comm;
  std::string Describe() const; // "rank 1 of 4" or "serial"
};

/// The global controller's ranks (size 1 without MPI, under the GUI's builtin server, or in
/// pvpython).
ParallelContext GlobalParallelContext();

/// GPUs per node for the distributed runs: rank r uses device (node-local rank) modulo this
/// (environment VEM_GPUS_PER_NODE, default 1).
int GpusPerNode();

/// True when the plugin can run a model over several ranks (built with MPI).
bool PluginHasMPI();

/// Collective over p's ranks (a no-op when not distributed): `error` is this rank's failure (empty:
/// none). When any rank failed, every rank throws vem::Error with the lowest failing rank's
/// message, "rank r of N: <message>" (so a bad value in one rank's piece ends every rank, without
/// a hang).
void CheckOnEveryRank(const ParallelContext& p, const std::string& error);

/// Collective: v summed element-wise over p's ranks, in place (v the same size on every rank).
void SumOverRanks(const ParallelContext& p, std::vector<long long>& v);

} // namespace vem_vtk

#endif
