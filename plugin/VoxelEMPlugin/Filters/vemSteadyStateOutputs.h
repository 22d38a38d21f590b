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

#include <array>
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

/// The part of the output grid that the arrays of a HarmonicResult cover: the whole grid, or (a
/// distributed run) this rank's piece. `grid` is the grid of the result's arrays (E phasors in
/// FdtdEngine::field()'s compact layout of that grid, per-cell arrays of its cells); the output
/// cells are its cells first .. first + cells - 1, at output cell out_lo of the whole image.
struct OutputWindow
{
  vem::YeeGrid grid;
  std::array<int, 3> first{ 0, 0, 0 };
  std::array<int, 3> cells{ 0, 0, 0 };
  std::array<int, 3> out_lo{ 0, 0, 0 };
  bool piece = false;
  static OutputWindow Whole(const vem::VoxelDomain& d);
  /// The piece of `pieceCells` cells from global cell `pieceLo`.
  static OutputWindow Piece(const vem::VoxelDomain& d, const std::array<int, 3>& pieceLo,
    const std::array<int, 3>& pieceCells);
};

/// `phasorSign` flips the phasors of a point source with a negative moment; `materials` are the
/// output arrays of the window's cells; `tissueFrequency` is NaN outside label mode.
SteadyStateOutputs MakeSteadyStateOutputs(const vem::HarmonicResult& result,
  const vem::HarmonicOptions& options, const vem::VoxelDomain& domain, const OutputWindow& window,
  float phasorSign, const std::vector<vtkSmartPointer<vtkDataArray>>& materials,
  double tissueFrequency);

} // namespace vem_vtk

#endif
