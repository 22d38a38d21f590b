// The outputs of FDTDSolver (the transient analysis): the snapshot image of port 0 for a
// requested time and the probe table of port 1, as vtkVEMFDTDSolver.h documents them. VTK glue.
#ifndef vemTransientOutputs_h
#define vemTransientOutputs_h

#include "vtkDataArray.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "vem/core/waveform.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/voxel_domain.h"

#include <string>
#include <vector>

class vtkImageData;

namespace vem_vtk
{
class SnapshotStore;
class FDTDRun;
struct RunGeometry;

/// The arrays of one snapshot of a run, in SnapshotStore's field order: "E", "H", "E_magnitude"
/// (those kept).
std::vector<std::vector<float>> SnapshotArrays(const FDTDRun& run, bool keepE, bool keepH, bool keepEMagnitude);

/// The snapshot nearest to time t (s; infinity = the last) as the output image: its field arrays,
/// the material arrays, and field data time_E, time_H, time_step_dt, step, backend. An empty store
/// gives the bare grid. Throws vem::Error when a spilled snapshot cannot be read.
void FillSnapshotImage(vtkImageData* output, const SnapshotStore& store, double t,
  const RunGeometry& geometry, const std::vector<vtkSmartPointer<vtkDataArray>>& materials,
  const std::string& backend);

/// Columns step, time, one per probe component, source_waveform; one row per step.
vtkSmartPointer<vtkTable> ProbeTable(
  const vem::ProbeRecord& record, int steps, double dt, const vem::Waveform& waveform);

} // namespace vem_vtk

#endif
