// The input image and its arrays as an FDTD model (shared by FDTDSolver and FDTDSteadyState):
// the vem::VoxelDomain of its voxels, the FdtdSetup's grid, boundaries and materials (a label array
// through a tissue table, or per-voxel property arrays), the density per computational cell for
// SAR, and the material arrays of the output grid. VTK glue only: the geometry and the checks of
// the options are the solver's (voxel_domain.h).
#ifndef vemVoxelModel_h
#define vemVoxelModel_h

#include "vtkDataArray.h"
#include "vtkSmartPointer.h"

#include "vem/fdtd/fdtd_setup.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/fdtd2d/fdtd2d_transient.h"

#include "vemArrayUtils.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkImageData;
class vtkInformation;

namespace vem_vtk
{

struct VoxelModelRequest
{
  vem::VoxelDomainOptions domain;
  bool label_mode = false;          // labels + tissue table (array 4), else property arrays (0-3)
  bool average_at_edges = true;     // property arrays: averaged at the E samples
  bool builtin_tissue_table = true;
  std::string tissue_table_file;
  double tissue_frequency = 0;      // Hz, label mode; > 0
  const char* tissue_frequency_origin = "TissueFrequency"; // named in its error message
  bool density = false;             // also the density (array 5 or the tissue table)
  bool keep_materials = true;       // output-grid material arrays
  int dimension = 0;                // FDTD filters: 0 automatic (2D for one voxel along an axis), 3
  /// FDTD filters on several ParaView ranks: the input holds this rank's piece of the image
  /// (vemInputPiece.h), and the model is built for the piece only.
  bool split_over_ranks = false;
};

/// Dimension property of the FDTD filters.
enum Dimensions
{
  DIMENSION_AUTOMATIC = 0, // 2D when exactly one axis has one voxel
  DIMENSION_3D = 3
};

/// The grid of a run from the input geometry: `normal` < 0 for 3D; `flat`: the input has one
/// point along the normal (cell arrays on pixels), the output is then a flat image in its plane.
struct RunGeometry
{
  vem::VoxelDomain domain; // 2D: one cell along the normal (periodic faces), dt of the 2D grid
  int normal = -1;
  bool flat = false;
  /// A distributed run (FDTD Solver on several ParaView ranks): this rank's piece of the output
  /// grid, in output cells (first cell and cell count per axis); the whole output grid when
  /// piece_cells[0] < 0. The output image of the rank has the piece's extent within the whole one.
  std::array<int, 3> piece_lo{ 0, 0, 0 };
  std::array<int, 3> piece_cells{ -1, -1, -1 };
  bool IsPiece() const { return this->piece_cells[0] >= 0; }
  /// The output cells of this rank (x y z): the piece, or the whole output grid.
  std::array<int, 3> OutputCells() const;
  long long OutputCellCount() const;
  /// The piece's image extent (points) in the whole output extent.
  void PieceExtent(int ext[6]) const;
  bool Is2D() const { return this->normal >= 0; }
  vem::VoxelDomain2D Domain2D() const { return { this->domain, vem::Plane2D::for_normal(this->normal) }; }
};

/// The FDTD filters' geometry (2D or 3D per `dimension`); throws vem::Error.
RunGeometry GeometryOfInput(const int extent[6], const double spacing[3], const double origin[3],
  bool pointsAsVoxels, const vem::VoxelDomainOptions& options, int dimension);
void SetOutputGeometry(vtkInformation* info, const RunGeometry& g);
void SetOutputGeometry(vtkImageData* image, const RunGeometry& g);

/// A model built from this rank's piece of the input (vemInputPiece.h): the setup then carries the
/// material table but no per-cell arrays, `fill` fills a piece's (vem::DistributedOptions::
/// fill_materials) for the decomposition `cells` (DistributedOptions::cells), and the density and
/// material arrays are the piece's (density: the piece's computational cells; materials: its
/// output cells).
struct ModelPiece
{
  bool split = false;
  std::array<std::vector<int>, 3> cells;
  std::function<void(const std::array<int, 3>&, const std::array<int, 3>&, vem::FdtdSetup&)> fill;
  std::array<int, 6> input_extent{ 0, -1, 0, -1, 0, -1 }; // the extent this rank read
};

struct VoxelModel
{
  vem::VoxelDomain domain;
  vem::FdtdSetup setup;
  std::vector<float> density;       // kg/m^3 per computational cell (0 = air); empty = none
  std::vector<vtkSmartPointer<vtkDataArray>> materials; // on the output grid
  std::string warning;              // e.g. voxels so large that millimetres were probably meant
  RunGeometry geometry;             // the domain again, with the plane of a 2D model
  ModelPiece piece;                 // split_over_ranks: this rank's piece
};

/// Label mode: the tissue table's properties of the distinct labels `values` (voxel `counts`) at
/// the request's tissue frequency; throws vem::Error (a bad frequency, a label not in the table).
vem::LabelProperties LookupLabels(const VoxelModelRequest& r, const std::vector<std::int64_t>& values,
  const std::vector<std::int64_t>& counts);

/// Label mode's material table: material 0 the padding's vacuum, material q + 1 the label
/// props.labels[q] (appended to setup.materials); `material[label]` and `density[material]`.
struct LabelTable
{
  std::vector<std::uint16_t> material; // 65536 entries
  std::vector<double> density;         // kg/m^3 per material
};
/// Throws vem::Error for more than 65535 distinct labels.
LabelTable AddLabelMaterials(const vem::LabelProperties& props, vem::FdtdSetup& setup);

/// The setup's grid, time step rule, scheme and boundaries from the model's domain, and the
/// warning for voxels so large that millimetres were probably meant.
void SetGridAndBoundaries(VoxelModel& m);

/// The domain from the input's geometry alone (RequestInformation); throws vem::Error.
vem::VoxelDomain DomainFromGeometry(const int extent[6], const double spacing[3],
  const double origin[3], bool pointsAsVoxels, const vem::VoxelDomainOptions& options);

/// Reads the arrays and builds the model (on the 3D grid; a 2D model's grid is one cell thick); throws vem::Error naming the array, value and limit.
void BuildVoxelModel(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
  const VoxelModelRequest& request, VoxelModel& model);

/// A float array of the output grid from a computational-grid array (CPML cells dropped).
vtkSmartPointer<vtkDataArray> OutputArray(
  const vem::VoxelDomain& d, const std::string& name, const std::vector<float>& total);

/// The cells [lo, lo + n) (output cells, per axis) of a cell array of domain d's whole output grid.
vtkSmartPointer<vtkDataArray> CropOutputArray(vtkDataArray* full, const vem::VoxelDomain& d,
  const std::array<int, 3>& lo, const std::array<int, 3>& n);

/// Where a rank's piece of the computational grid (first cell `pieceLo`, `pieceCells` cells per
/// axis) meets domain d's output grid: `outLo` / `outCells` in output cells, and `first`, the first
/// of those cells in the piece.
void PieceOutputCells(const vem::VoxelDomain& d, const std::array<int, 3>& pieceLo,
  const std::array<int, 3>& pieceCells, std::array<int, 3>& outLo, std::array<int, 3>& outCells,
  std::array<int, 3>& first);

/// The output image's geometry (extent, spacing, origin) for domain d.
void SetOutputGeometry(vtkImageData* image, const vem::VoxelDomain& d);
void SetOutputGeometry(vtkInformation* info, const vem::VoxelDomain& d);

/// The solver's message about a plane-wave box that meets the model, with the property to change
/// (the total-field box lies `margin` cells inside the CPML).
[[noreturn]] void ThrowWithPaddingHint(const std::exception& err, const vem::VoxelDomain& d, int margin);

} // namespace vem_vtk

#endif
