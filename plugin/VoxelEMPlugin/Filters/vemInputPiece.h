// The input image split by the pipeline over ParaView's ranks (issue 17): a 3D FDTD model run on
// several ranks (pvbatch / pvserver under mpirun) is cut into pieces (vem::Decomposition, chosen by
// the solver's rule), and each rank asks its input only for the voxels its piece needs: the
// piece's own, plus the neighbours' cells beside the cuts that a coefficient-array medium averaged
// at the edges reads (two below, one above: vem::piece_setup). Each rank then builds only its
// piece's materials (DistributedOptions::fill_materials), its piece's density for SAR and its
// piece's material output arrays; no rank holds the whole model. The label -> material table is
// made from the labels of all ranks (counts summed over the ranks), so it is the same everywhere.
//
// VTK glue only: the decomposition and the box are the solver's (decomposition.h).
#ifndef vemInputPiece_h
#define vemInputPiece_h

#include "vemParallel.h"
#include "vemVoxelModel.h"

#include "vem/fdtd/distributed/decomposition.h"

#include <array>

class vtkInformation;

namespace vem_vtk
{

struct InputPiece
{
  bool split = false;                 // false: every rank reads the whole input (as on one rank)
  vem::Decomposition decomposition;   // of the computational grid over the ranks
  int rank = 0;
  std::array<int, 3> cellLo{ 0, 0, 0 }, cellCount{ 0, 0, 0 };   // the rank's piece (computational cells)
  std::array<int, 3> boxLo{ 0, 0, 0 }, boxCount{ 0, 0, 0 };     // the cells its materials cover
  std::array<int, 3> voxelLo{ 0, 0, 0 }, voxelCount{ 0, 0, 0 }; // the input voxels in the box
  bool HasVoxels() const { return this->voxelCount[0] > 0 && this->voxelCount[1] > 0 && this->voxelCount[2] > 0; }
};

/// The piece of rank `p.rank` for geometry g: split for a 3D model on several ranks, with labels
/// (indexed materials) or property arrays; not for 2D models or subpixel smoothing (whole input).
/// A grid that cannot be split is not split here: the solver then reports why.
InputPiece PlanInputPiece(const RunGeometry& g, const ParallelContext& p, bool coefficientArrays,
  bool averageAtEdges);

/// RequestUpdateExtent: the input extent of the plan's voxels (points or cells), within the
/// input's whole extent; a rank with no voxels (its piece is padding and CPML) asks for the one
/// voxel nearest to its piece.
void RequestInputPiece(vtkInformation* inInfo, const InputPiece& plan, bool pointsAsVoxels);

/// The input's whole extent (the pipeline's WHOLE_EXTENT of input 0); false when unknown.
bool WholeInputExtent(vtkAlgorithm* self, int whole[6]);

/// BuildVoxelModel's part on a split input (collective over p's ranks), after the geometry (the
/// whole input's, in m.geometry / m.domain / m.setup): `input` holds at least the plan's voxels,
/// `primary` is the label or permittivity array (of `association`). The model's setup carries the material table but
/// no per-cell arrays (model.piece.fill fills them); density and material arrays are the piece's.
/// Errors end every rank with the lowest failing rank's message.
void BuildVoxelModelPiece(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  vtkDataArray* primary, int association, const VoxelModelRequest& r, const ParallelContext& p,
  VoxelModel& m);

/// Field data "input_extent" (6 ints) on a split run's output: the input extent this rank read,
/// so a user (and the tests) can see that no rank read the whole image. Nothing when not split.
void AddInputExtent(vtkImageData* output, const ModelPiece& piece);

} // namespace vem_vtk

#endif
