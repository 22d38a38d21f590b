#include "vemParallel.h"

#include "vtkMultiProcessController.h"

#ifdef VEM_WITH_MPI
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#include "vtkMPIController.h"
#endif

#include "vem/core/error.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace vem_vtk
{

std::string ParallelContext::Describe() const
{
  if (!this->distributed)
  {
    return "serial";
  }
  std::ostringstream s;
  s << "rank " << this->rank << " of " << this->size;
  return s.str();
}

int GpusPerNode()
{
  const char* env = std::getenv("VEM_GPUS_PER_NODE");
  return env ? std::max(1, std::atoi(env)) : 1;
}

bool PluginHasMPI()
{
#ifdef VEM_WITH_MPI
  return true;
#else
  return false;
#endif
}

void CheckOnEveryRank(const ParallelContext& p, const std::string& error)
{
  if (!p.distributed)
  {
    if (!error.empty())
    {
      throw vem::Error(error);
    }
    return;
  }
#ifdef VEM_WITH_MPI
  const MPI_Comm comm = *static_cast<const MPI_Comm*>(p.comm.get());
  const int mine = error.empty() ? p.size : p.rank;
  int first = p.size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == p.size)
  {
    return;
  }
  std::string text = p.rank == first ? error : std::string();
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(&text[0], length, MPI_CHAR, first, comm);
  throw vem::Error("rank " + std::to_string(first) + " of " + std::to_string(p.size) + ": " + text);
#else
  if (!error.empty())
  {
    throw vem::Error(error);
  }
#endif
}

void SumOverRanks(const ParallelContext& p, std::vector<long long>& v)
{
#ifdef VEM_WITH_MPI
  if (p.distributed && !v.empty())
  {
    const MPI_Comm comm = *static_cast<const MPI_Comm*>(p.comm.get());
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_LONG_LONG, MPI_SUM, comm);
  }
#else
  (void)p, (void)v;
#endif
}

ParallelContext GlobalParallelContext()
{
  ParallelContext p;
  vtkMultiProcessController* c = vtkMultiProcessController::GetGlobalController();
  if (!c || c->GetNumberOfProcesses() <= 1)
  {
    return p;
  }
  p.rank = c->GetLocalProcessId();
  p.size = c->GetNumberOfProcesses();
#ifdef VEM_WITH_MPI
  auto* mpi = vtkMPIController::SafeDownCast(c);
  auto* comm = mpi ? vtkMPICommunicator::SafeDownCast(mpi->GetCommunicator()) : nullptr;
  if (comm && comm->GetMPIComm() && comm->GetMPIComm()->GetHandle())
  {
    p.comm = std::shared_ptr<void>(new MPI_Comm(*comm->GetMPIComm()->GetHandle()),
      [](void* h) { delete static_cast<MPI_Comm*>(h); });
    p.distributed = true;
  }
#endif
  return p;
}

} // namespace vem_vtk
