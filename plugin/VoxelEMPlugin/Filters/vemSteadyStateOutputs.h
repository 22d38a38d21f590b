// The outputs of FDTDSteadyState from a vem::HarmonicResult: the phasor / SAR image (port 0), the
// summary table (port 1) and the far-field table (port 2), as vtkVEMFDTDSteadyState.h documents
// them. VTK glue only.
#ifndef vemSteadyStateOutputs_h
#define vemSteadyStateOutputs_h

#include "vtkDataArray.h"
#include "vtkImageData.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "vem/fdtd/fdtd_harmonic.h"
#include "vem/fdtd/voxel_domain.h"

#include <string>
#include <vector>

namespace vem_vtk
{

struct SteadyStateOutputs
{
  vtkSmartPointer<vtkImageData> fields;
  vtkSmartPointer<vtkTable> summary, far;
  std::vector<std::string> warnings; // for the filter to report
};

/// `phasorSign` flips the phasors of a point source with a negative moment; `materials` are the
/// output-grid material arrays; `tissueFrequency` is NaN outside label mode.
SteadyStateOutputs MakeSteadyStateOutputs(const vem::HarmonicResult& result,
  const vem::HarmonicOptions& options, const vem::VoxelDomain& domain, float phasorSign,
  const std::vector<vtkSmartPointer<vtkDataArray>>& materials, double tissueFrequency);

} // namespace vem_vtk

#endif
