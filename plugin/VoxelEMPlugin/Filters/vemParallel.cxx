#include "vemParallel.h"

#include "vtkMultiProcessController.h"

#ifdef VEM_WITH_MPI
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#include "vtkMPIController.h"
#endif

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
