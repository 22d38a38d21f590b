// Helpers shared by the VoxelEM VTK algorithms: voxel grids of vtkImageData (cells, or points
// taken as voxels), array look-up with messages that list what the input has, and conversion of
// VTK arrays to the plain vectors the solver takes. Glue only: no physics here.
#ifndef vemArrayUtils_h
#define vemArrayUtils_h

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vem/fdtd/fdtd_setup.h"
#include "vem/models/tissue_properties.h"

class vtkDataArray;
class vtkDataSet;
class vtkImageData;
class vtkInformation;
class vtkAlgorithm;

namespace vem_vtk
{

// A voxel grid: nx * ny * nz voxels, voxel (0,0,0) with its lower corner at `origin`.
struct VoxelGrid
{
  std::array<int, 3> n{ 0, 0, 0 };
  std::array<double, 3> spacing{ 1, 1, 1 };
  std::array<double, 3> origin{ 0, 0, 0 };
  /// Index of voxel (0,0,0) in the whole image (a rank's piece of it): messages name whole-image
  /// voxels. `origin` stays the world corner of voxel (0,0,0) of these voxels.
  std::array<int, 3> first{ 0, 0, 0 };
  long long count() const { return static_cast<long long>(n[0]) * n[1] * n[2]; }
};

// Voxels of an image from its extent, spacing and origin: cells when `points_as_voxels` is
// false; otherwise each point is the centre of a voxel (origin shifted by half a spacing).
// With `flat_as_one_voxel`, an axis of one point with cell arrays (a flat image: its cells are
// pixels) counts as one voxel of that axis' spacing starting at the image's plane.
VoxelGrid VoxelGridFromExtent(const int extent[6], const double spacing[3],
  const double origin[3], bool points_as_voxels, bool flat_as_one_voxel = false);

// "point arrays: a (float, 1 component), ...; cell arrays: ..." for error messages.
std::string DescribeArrays(vtkDataSet* ds);

// Name of the array selected for index `idx` of an algorithm (FIELD_NAME of its input array
// information), or "" when none / "None" is selected.
std::string SelectedArrayName(vtkInformation* arrayInfo);

// Resolves the array selected for input array `idx`: `found` is what GetInputArrayToProcess
// returned for it (with `assoc`), `info` its input-array information. When ParaView set the
// selection before the input had arrays, the name is a placeholder (the index number); then the
// array named `fallback` (cell data first) is used. `name` receives the name looked for ("" when
// nothing or "None" is selected). Returns nullptr when nothing matches.
vtkDataArray* ResolveSelectedArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, const char* fallback, int& assoc, std::string& name);

// Reads component `comp` of a 1- or 3-component numeric array into floats, voxel order
// (x fastest), checking every value is finite and > 0 (positive) or >= 0. Throws vem::Error
// naming the array, the voxel (i,j,k) and its value.
std::vector<float> ReadVoxelValues(vtkDataArray* a, int comp, const VoxelGrid& g,
  const std::string& what, bool positive);

// Every component of `a` (ReadVoxelValues) placed on the computational grid: one array of
// `total` values per component, voxel v at totalIndex(v) (left out where it is < 0), `pad`
// elsewhere; appended to *dst.
// Returns the number of components.
int AppendPaddedComponents(vtkDataArray* a, const VoxelGrid& g, const std::string& what, bool positive,
  float pad, long long total, const std::function<long long(long long)>& totalIndex,
  std::vector<std::vector<float>>* dst);

// RequestUpdateExtent of the solvers: the whole input, exactly (EXACT_EXTENT), and no time step
// (the simulation time is the filter's own).
void RequestWholeInput(vtkInformation* inInfo);
// The same for the input extent `ext` (a rank's piece of the image: vemInputPiece.h).
void RequestInputExtent(vtkInformation* inInfo, const int ext[6]);

// Integer labels of a 1-component integer array (voxel order). Throws vem::Error for
// floating-point or multi-component arrays and for values outside 0..65535, naming the voxel.
std::vector<std::uint16_t> ReadLabels(vtkDataArray* a, const VoxelGrid& g, const std::string& what);

// Sorted distinct labels and their voxel counts.
void UniqueLabels(const std::vector<std::uint16_t>& labels, std::vector<std::int64_t>& values,
  std::vector<std::int64_t>& counts);

// The array that defines the voxels (the label array in label mode, the permittivity array
// otherwise), resolved as ResolveSelectedArray does; `assoc` becomes its field association.
// Throws vem::Error listing the arrays present when it is missing, or when it is neither point
// nor cell data.
vtkDataArray* ResolvePrimaryMaterialArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, bool labelMode, int& assoc);

// An optional material-property array (conductivity, permeability, density, ...) resolved as
// ResolveSelectedArray does and checked against the primary array: nullptr when none is selected
// (an error when `required`) or when only the default name `fallback` was looked for and is
// absent and `fallbackMayBeAbsent`. Throws vem::Error naming the array when it is missing, of
// another association than `primaryAssoc`, or has a component count other than 1 (or 3 when
// `vectorAllowed`). `assoc` is the association GetInputArrayToProcess reported for `found`.
vtkDataArray* ResolvePropertyArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, const char* what, const char* fallback, bool required, bool vectorAllowed,
  bool fallbackMayBeAbsent, int primaryAssoc, int& assoc);

// The tissue table of the label mode: the built-in one (Gabriel 1996 / head phantom) when
// `builtIn`, merged with a user CSV file when `csvFile` is not empty. Throws when both are off.
vem::TissueTable LoadTissueTable(bool builtIn, const std::string& csvFile);

// Reads WHOLE_EXTENT, SPACING and ORIGIN of an image input's pipeline information (spacing 1 and
// origin 0 when absent). False when the input announces no whole extent (not an image).
bool ReadInputGeometry(vtkInformation* inInfo, int extent[6], double spacing[3], double origin[3]);

// Whether the array selected as input array `idx` of an algorithm is point data (whose values are
// then taken as one per voxel, like cell data).
bool SelectedArrayIsPointData(vtkAlgorithm* self, int idx);

/// The quantities a filter reads from input arrays, with the property that selects each.
enum class Quantity
{
  permittivity,
  conductivity,
  permeability,
  magnetic_conductivity,
  labels,
  density
};
const char* QuantityName(Quantity q);     // "permittivity", "tissue label", ...
const char* QuantityProperty(Quantity q); // "PermittivityArray", "LabelArray", ...

/// The quantity an array's name is usually given for ("eps_r", "Epsilon", "PermittivityArray":
/// permittivity; "sigma", "cond": conductivity; "mu_r": permeability; "sigma_m": magnetic
/// conductivity; "tissue", "labels", "segmentation": labels; "rho", "density": density), or
/// false when the name says nothing.
bool RecognisedQuantity(const std::string& arrayName, Quantity& q);

/// One array a filter selected for a quantity (an empty name: none selected). An optional one
/// (the density: no SAR without it) is dropped with a warning instead of an error.
struct ArraySelection
{
  Quantity quantity;
  std::string name;
  bool optional = false;
};

/// Throws vem::Error when one array is selected for two quantities, or when the array selected
/// for a quantity is named like another one (ParaView's menus fall back to the first array when
/// the default name is absent, e.g. ConductivityArray = 'eps_r'): the message names the property
/// to set, an array named like the quantity if the input has one, and lists the input's arrays.
/// An optional selection in conflict is cleared instead; the returned warnings say so.
std::vector<std::string> CheckArraySelections(vtkDataSet* input, std::vector<ArraySelection>& selected);

/// The voxel grid of an input extent, refusing an axis without voxels (the message quotes the
/// extent and whether cell or point arrays define the voxels).
VoxelGrid VoxelGridOfInput(const int extent[6], const double spacing[3], const double origin[3],
  bool points_as_voxels, bool flat_as_one_voxel = false);

/// The solver filters' default input arrays: 0 permittivity, 1 conductivity, 2 permeability
/// (None), 3 magnetic conductivity (None), 4 tissue labels, 5 density (cell data).
void SetDefaultMaterialArrays(vtkAlgorithm* self);

/// Runs `solve` (false: aborted) and reports what went wrong once, as "<label>: <message>":
/// a vem::Error, an out-of-memory, any other exception (vtkErrorMacro), or an abort (a warning).
/// Returns 1 on success, 0 on an error, -1 on an abort.
int RunReported(vtkAlgorithm* self, const char* label, const std::function<bool()>& solve);

/// The MTime of the filter and of everything upstream (its executive's pipeline MTime): a
/// result, or an error, is current while this does not change and the input is the same object.
unsigned long PipelineMTime(vtkAlgorithm* self);

/// What a filter's last run gave for a pipeline state (its PipelineMTime and input object).
enum RunOutcome
{
  RUN_NONE = 0,
  RUN_SOLVED = 1,
  RUN_FAILED = 2,
  RUN_ABORTED = 3
};

/// Runs `solve` through RunReported unless an outcome is recorded for the current state (in
/// `outcome`, `mtime`, `input_seen`), then records it. A failure is reported once: the other
/// output ports' requests of the same update, and later updates until a property or the input
/// changes, get RUN_FAILED without running again. An abort likewise, while the abort request
/// (AbortExecute) stands. A recorded RUN_SOLVED is returned without running only when
/// `cache_solved` (the filter keeps its results).
int RunOnce(vtkAlgorithm* self, const char* label, const void* input, bool cache_solved,
  int& outcome, unsigned long& mtime, const void*& input_seen, const std::function<bool()>& solve);

/// GetInputArrayToProcess(idx, inputVector, association) of the calling filter.
using ArrayLookup = std::function<vtkDataArray*(int idx, int& association)>;

/// Property-array mode of the FDTD and FDFD filters: resolves the permittivity, conductivity,
/// permeability and magnetic conductivity arrays (input array indices 0-3) and, with
/// `withDensity`, the density (5), checks the selections (CheckArraySelections), then reads them
/// into `medium` and `density`, padded to `total` computational cells (voxel v at totalIndex(v);
/// vacuum outside). `association` is the permittivity's (ResolvePrimaryMaterialArray). Returns
/// the warnings (a density selection dropped). Throws vem::Error naming array, value and limit.
std::vector<std::string> ReadPropertyArrays(vtkAlgorithm* self, const ArrayLookup& lookup,
  vtkDataSet* input, const VoxelGrid& g, int association, bool withDensity, long long total,
  const std::function<long long(long long)>& totalIndex, vem::PerCellMedium& medium,
  std::vector<float>& density);

} // namespace vem_vtk

#endif
