// VTK outputs of an FDFD solve (vem::solve_fdfd) on a voxel model (vem::FdfdVoxelDomain): the
// field image, the residual-history table and the bistatic RCS table. Glue only: the numbers are
// the solver's; here they become VTK arrays on the output grid (voxels plus padding, PML cells
// dropped).
#ifndef vemFDFDOutputs_h
#define vemFDFDOutputs_h

#include <vector>

#include "vtkFloatArray.h"
#include "vtkSmartPointer.h"

#include "vem/fdfd/fdfd_solver.h"
#include "vem/fdfd/fdfd_voxel_domain.h"

class vtkImageData;
class vtkTable;

namespace vem_vtk
{

// A computational-grid array (one value per cell of d.grid()) on the output grid, named `name`.
vtkSmartPointer<vtkFloatArray> OutputGridArray(
  const vem::FdfdVoxelDomain& d, const char* name, const std::vector<float>& total);

// The field image: output-grid extent, spacing and origin; cell arrays at the cell centres (each
// Yee component averaged over its 4 samples around the centre) "E_scat_real", "E_scat_imag",
// "E_total_real", "E_total_imag" (3 components), "E_magnitude" (active scalars), "SAR" = absorbed
// power density (vem::fdfd_absorbed_power_density) / rho where rho is tissue (0 elsewhere) when
// `density` (per computational cell, kg/m^3) is not empty; then the arrays of `materials`.
void FillFDFDFieldImage(vtkImageData* output, const vem::FdfdVoxelDomain& d,
  const vem::FdfdOperator& op, const vem::FdfdFields& f, const std::vector<float>& density,
  const std::vector<vtkSmartPointer<vtkFloatArray>>& materials);

// Residual history: "iteration", "relative_residual" (the solver's estimate), and
// "true_relative_residual" (at the outer steps of refinement and the last row; NaN elsewhere).
void FillFDFDResidualTable(vtkTable* table, const vem::FdfdSolveStats& st);

// Bistatic RCS from the near-to-far-field transform on d.ntff_box(), in the E-plane (k, E0) and
// the H-plane (k, k x E0) of the incidence, theta 0 (forward) .. 180 (backscatter) in steps of
// about `stepDeg`: "theta_deg", "rcs_E_plane_dBsm", "rcs_H_plane_dBsm", "rcs_E_plane_m2",
// "rcs_H_plane_m2". The columns stay empty when the padding leaves no room for the box.
void FillFDFDRCSTable(vtkTable* table, const vem::FdfdVoxelDomain& d, const vem::FdfdProblem& p,
  const vem::FdfdFields& f, double stepDeg);

} // namespace vem_vtk

#endif
