#include "vemArrayUtils.h"

#include "vtkAlgorithm.h"
#include "vtkObject.h"
#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSet.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkInformation.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vem/core/error.h"
#include "vem/models/head_phantom.h"

#include <algorithm>
#include <cctype>
#include <new>
#include <cmath>
#include <initializer_list>
#include <sstream>

namespace vem_vtk
{

VoxelGrid VoxelGridFromExtent(const int e[6], const double spacing[3], const double origin[3],
  bool points_as_voxels, bool flat_as_one_voxel)
{
  VoxelGrid g;
  for (int a = 0; a < 3; ++a)
  {
    const int npts = e[2 * a + 1] - e[2 * a] + 1;
    g.spacing[a] = spacing[a];
    if (points_as_voxels)
    {
      g.n[a] = npts;
      g.origin[a] = origin[a] + (e[2 * a] - 0.5) * spacing[a];
    }
    else
    {
      g.n[a] = (npts == 1 && flat_as_one_voxel) ? 1 : npts - 1;
      g.origin[a] = origin[a] + e[2 * a] * spacing[a];
    }
  }
  return g;
}

namespace
{
void describe(std::ostringstream& os, vtkDataSetAttributes* attrs)
{
  const int n = attrs->GetNumberOfArrays();
  if (n == 0)
  {
    os << "none";
    return;
  }
  for (int q = 0; q < n; ++q)
  {
    vtkAbstractArray* a = attrs->GetAbstractArray(q);
    os << (q ? ", " : "") << "'" << (a->GetName() ? a->GetName() : "(unnamed)") << "' ("
       << a->GetDataTypeAsString() << ", " << a->GetNumberOfComponents() << " component"
       << (a->GetNumberOfComponents() == 1 ? "" : "s") << ")";
  }
}
} // namespace

std::string DescribeArrays(vtkDataSet* ds)
{
  std::ostringstream os;
  os << "the input has point arrays: ";
  describe(os, ds->GetPointData());
  os << "; cell arrays: ";
  describe(os, ds->GetCellData());
  return os.str();
}

std::string SelectedArrayName(vtkInformation* info)
{
  if (!info || !info->Has(vtkDataObject::FIELD_NAME()))
  {
    return "";
  }
  const char* name = info->Get(vtkDataObject::FIELD_NAME());
  if (!name)
  {
    return "";
  }
  std::string s(name);
  if (s == "None" || s == "none")
  {
    return "";
  }
  return s;
}

vtkDataArray* ResolveSelectedArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, const char* fallback, int& assoc, std::string& name)
{
  name = SelectedArrayName(info);
  if (found)
  {
    if (name.empty() && found->GetName())
    {
      name = found->GetName();  // selected by attribute type (e.g. the active scalars)
    }
    return found;
  }
  if (name.empty())
  {
    assoc = -1;
    return nullptr;
  }
  if (fallback && name == std::to_string(idx))
  {
    name = fallback;
    if (vtkDataArray* a = input->GetCellData()->GetArray(fallback))
    {
      assoc = vtkDataObject::FIELD_ASSOCIATION_CELLS;
      return a;
    }
    if (vtkDataArray* a = input->GetPointData()->GetArray(fallback))
    {
      assoc = vtkDataObject::FIELD_ASSOCIATION_POINTS;
      return a;
    }
  }
  return nullptr;
}

namespace
{
void voxel_ijk(long long v, const VoxelGrid& g, int& i, int& j, int& k)
{
  i = g.first[0] + static_cast<int>(v % g.n[0]);
  j = g.first[1] + static_cast<int>((v / g.n[0]) % g.n[1]);
  k = g.first[2] + static_cast<int>(v / (static_cast<long long>(g.n[0]) * g.n[1]));
}
} // namespace

std::vector<float> ReadVoxelValues(
  vtkDataArray* a, int comp, const VoxelGrid& g, const std::string& what, bool positive)
{
  const long long n = g.count();
  if (a->GetNumberOfTuples() != n)
  {
    vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' has ", a->GetNumberOfTuples(),
      " values, the image has ", n, " voxels");
  }
  std::vector<float> out(static_cast<std::size_t>(n));
  for (long long v = 0; v < n; ++v)
  {
    const double x = a->GetComponent(v, comp);
    if (!std::isfinite(x) || (positive ? !(x > 0) : x < 0))
    {
      int i, j, k;
      voxel_ijk(v, g, i, j, k);
      vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' has the value ", x,
        " at voxel (", i, ", ", j, ", ", k, ") (world position ",
        g.origin[0] + (i - g.first[0] + 0.5) * g.spacing[0], ", ",
        g.origin[1] + (j - g.first[1] + 0.5) * g.spacing[1], ", ",
        g.origin[2] + (k - g.first[2] + 0.5) * g.spacing[2],
        " m); it must be finite and ", positive ? "> 0" : ">= 0");
    }
    out[static_cast<std::size_t>(v)] = static_cast<float>(x);
  }
  return out;
}

int AppendPaddedComponents(vtkDataArray* a, const VoxelGrid& g, const std::string& what, bool positive,
  float pad, long long total, const std::function<long long(long long)>& totalIndex,
  std::vector<std::vector<float>>* dst)
{
  const int nc = a->GetNumberOfComponents();
  const long long nVox = g.count();
  for (int c = 0; c < nc; ++c)
  {
    const std::vector<float> vox = ReadVoxelValues(a, c, g, what, positive);
    std::vector<float> grid(static_cast<std::size_t>(total), pad);
    for (long long v = 0; v < nVox; ++v)
    {
      const long long t = totalIndex(v);
      if (t >= 0)
      {
        grid[static_cast<std::size_t>(t)] = vox[static_cast<std::size_t>(v)];
      }
    }
    dst->push_back(std::move(grid));
  }
  return nc;
}

std::vector<std::uint16_t> ReadLabels(vtkDataArray* a, const VoxelGrid& g, const std::string& what)
{
  const int type = a->GetDataType();
  if (type == VTK_FLOAT || type == VTK_DOUBLE)
  {
    vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' is of type ",
      a->GetDataTypeAsString(), "; tissue labels must be an integer array (uint8 or uint16)");
  }
  if (a->GetNumberOfComponents() != 1)
  {
    vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' has ",
      a->GetNumberOfComponents(), " components; tissue labels need 1");
  }
  const long long n = g.count();
  if (a->GetNumberOfTuples() != n)
  {
    vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' has ", a->GetNumberOfTuples(),
      " values, the image has ", n, " voxels");
  }
  std::vector<std::uint16_t> out(static_cast<std::size_t>(n));
  for (long long v = 0; v < n; ++v)
  {
    const double x = a->GetComponent(v, 0);
    if (x < 0 || x > 65535)
    {
      int i, j, k;
      voxel_ijk(v, g, i, j, k);
      vem::fail(what, " array '", a->GetName() ? a->GetName() : "", "' has the label ", x,
        " at voxel (", i, ", ", j, ", ", k, "); labels must be in 0..65535");
    }
    out[static_cast<std::size_t>(v)] = static_cast<std::uint16_t>(x);
  }
  return out;
}

void UniqueLabels(const std::vector<std::uint16_t>& labels, std::vector<std::int64_t>& values,
  std::vector<std::int64_t>& counts)
{
  std::vector<std::int64_t> hist(65536, 0);
  for (std::uint16_t l : labels)
  {
    ++hist[l];
  }
  values.clear();
  counts.clear();
  for (int l = 0; l < 65536; ++l)
  {
    if (hist[l])
    {
      values.push_back(l);
      counts.push_back(hist[l]);
    }
  }
}

bool ReadInputGeometry(vtkInformation* inInfo, int extent[6], double spacing[3], double origin[3])
{
  if (!inInfo->Has(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT()))
  {
    return false;
  }
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), extent);
  for (int a = 0; a < 3; ++a)
  {
    spacing[a] = 1.0;
    origin[a] = 0.0;
  }
  if (inInfo->Has(vtkDataObject::SPACING()))
  {
    inInfo->Get(vtkDataObject::SPACING(), spacing);
  }
  if (inInfo->Has(vtkDataObject::ORIGIN()))
  {
    inInfo->Get(vtkDataObject::ORIGIN(), origin);
  }
  return true;
}

bool SelectedArrayIsPointData(vtkAlgorithm* self, int idx)
{
  vtkInformation* info = self->GetInputArrayInformation(idx);
  return info && info->Has(vtkDataObject::FIELD_ASSOCIATION()) &&
    info->Get(vtkDataObject::FIELD_ASSOCIATION()) == vtkDataObject::FIELD_ASSOCIATION_POINTS;
}

vtkDataArray* ResolvePrimaryMaterialArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, bool labelMode, int& assoc)
{
  std::string name;
  vtkDataArray* a = ResolveSelectedArray(
    found, info, idx, input, labelMode ? "tissue" : "permittivity", assoc, name);
  if (!a)
  {
    vem::fail(labelMode ? "the label array " : "the permittivity array ",
      name.empty() ? std::string("(none selected)") : "'" + name + "'",
      " was not found or is not numeric; set ", labelMode ? "LabelArray" : "PermittivityArray",
      " to one of the input's arrays: ", DescribeArrays(input),
      labelMode ? "" : ". Run Tissue Properties first, or switch Material Mode to labels.");
  }
  if (assoc != vtkDataObject::FIELD_ASSOCIATION_POINTS && assoc != vtkDataObject::FIELD_ASSOCIATION_CELLS)
  {
    vem::fail("material arrays must be point or cell data");
  }
  return a;
}

vtkDataArray* ResolvePropertyArray(vtkDataArray* found, vtkInformation* info, int idx,
  vtkDataSet* input, const char* what, const char* fallback, bool required, bool vectorAllowed,
  bool fallbackMayBeAbsent, int primaryAssoc, int& assoc)
{
  std::string name;
  vtkDataArray* a = ResolveSelectedArray(found, info, idx, input, fallback, assoc, name);
  if (name.empty())
  {
    if (required)
    {
      vem::fail("no ", what, " array selected; set ", QuantityProperty(static_cast<Quantity>(idx)),
        " to one of the input's arrays: ", DescribeArrays(input));
    }
    return nullptr;
  }
  if (!a)
  {
    if (fallbackMayBeAbsent && fallback && name == fallback)
    {
      return nullptr;
    }
    vem::fail("the ", what, " array '", name, "' was not found or is not numeric; set ",
      QuantityProperty(static_cast<Quantity>(idx)), " to one of the input's arrays: ", DescribeArrays(input));
  }
  if (assoc != primaryAssoc)
  {
    const bool points = primaryAssoc == vtkDataObject::FIELD_ASSOCIATION_POINTS;
    vem::fail("the ", what, " array '", name, "' is ",
      assoc == vtkDataObject::FIELD_ASSOCIATION_POINTS ? "point" : "cell",
      " data but the permittivity array is ", points ? "point" : "cell",
      " data; all material arrays must have the same association");
  }
  const int nc = a->GetNumberOfComponents();
  if (nc != 1 && (nc != 3 || !vectorAllowed))
  {
    vem::fail("the ", what, " array '", name, "' has ", nc, " components; it needs ",
      vectorAllowed ? "1 (isotropic) or 3 (x, y, z)" : "1");
  }
  return a;
}

vem::TissueTable LoadTissueTable(bool builtIn, const std::string& csvFile)
{
  vem::TissueTable tissues;
  if (builtIn)
  {
    tissues = vem::head_phantom_tissue_table();
  }
  if (!csvFile.empty())
  {
    tissues.merge_csv_file(csvFile);
  }
  if (tissues.empty())
  {
    vem::fail("no tissue table: enable the built-in table or give a CSV file");
  }
  return tissues;
}

void RequestWholeInput(vtkInformation* inInfo)
{
  int whole[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  RequestInputExtent(inInfo, whole);
}

void RequestInputExtent(vtkInformation* inInfo, const int ext[6])
{
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), ext, 6);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::EXACT_EXTENT(), 1);
  // On several ranks (pvbatch / pvserver) the executive would otherwise translate this rank's
  // piece number into a piece of the input's extent and override the extent asked above: every
  // rank then solved a different part of the model. Piece 0 of 1: the extent is ours.
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER(), 0);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES(), 1);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_GHOST_LEVELS(), 0);
  inInfo->Remove(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
}

const char* QuantityName(Quantity q)
{
  static const char* names[] = { "permittivity", "conductivity", "permeability",
    "magnetic conductivity", "tissue label", "density" };
  return names[static_cast<int>(q)];
}

const char* QuantityProperty(Quantity q)
{
  static const char* names[] = { "PermittivityArray", "ConductivityArray", "PermeabilityArray",
    "MagneticConductivityArray", "LabelArray", "DensityArray" };
  return names[static_cast<int>(q)];
}

bool RecognisedQuantity(const std::string& arrayName, Quantity& q)
{
  std::string n; // lower case, letters and digits only
  for (char c : arrayName)
  {
    if (std::isalnum(static_cast<unsigned char>(c)))
    {
      n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  auto has = [&n](const char* part) { return n.find(part) != std::string::npos; };
  auto is = [&n](std::initializer_list<const char*> names) {
    for (const char* x : names)
    {
      if (n == x)
      {
        return true;
      }
    }
    return false;
  };
  if ((has("magnetic") && has("cond")) || is({ "sigmam", "sigmamag", "sigmastar" }))
  {
    q = Quantity::magnetic_conductivity;
  }
  else if (has("permeab") || is({ "mu", "mur", "murel" }))
  {
    q = Quantity::permeability;
  }
  else if (has("permittiv") || has("epsilon") || n.rfind("eps", 0) == 0 ||
    is({ "er", "dielectricconstant" }))
  {
    q = Quantity::permittivity;
  }
  else if (has("conductiv") || n.rfind("sigma", 0) == 0 || is({ "sig", "cond", "sige" }))
  {
    q = Quantity::conductivity;
  }
  else if (has("densit") || is({ "rho", "massdensity" }))
  {
    q = Quantity::density;
  }
  else if (has("tissue") || has("label") || has("segment") || is({ "material", "materials",
             "materialid", "materialids" }))
  {
    q = Quantity::labels;
  }
  else
  {
    return false;
  }
  return true;
}

namespace
{
// The input's arrays named like q ("'sigma'", "'cond' or 'sigma_e'"), empty if none.
std::string ArraysNamedLike(vtkDataSet* input, Quantity q)
{
  std::string out;
  for (vtkDataSetAttributes* attrs :
    { static_cast<vtkDataSetAttributes*>(input->GetCellData()), static_cast<vtkDataSetAttributes*>(input->GetPointData()) })
  {
    for (int i = 0; i < attrs->GetNumberOfArrays(); ++i)
    {
      const char* name = attrs->GetArrayName(i);
      Quantity r;
      if (name && RecognisedQuantity(name, r) && r == q)
      {
        out += (out.empty() ? "'" : " or '") + std::string(name) + "'";
      }
    }
  }
  return out;
}
} // namespace

std::vector<std::string> CheckArraySelections(vtkDataSet* input, std::vector<ArraySelection>& selected)
{
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < selected.size(); ++i)
  {
    const Quantity q = selected[i].quantity;
    const std::string name = selected[i].name;
    if (name.empty())
    {
      continue;
    }
    const std::string candidates = ArraysNamedLike(input, q);
    const std::string hint = candidates.empty()
      ? std::string(" (no input array is named like a ") + QuantityName(q) + ")"
      : " (" + candidates + " is named like one)";
    // The array named like another quantity is the wrong one; of two unrecognised selections of
    // one array, the later property is named.
    std::string problem;
    Quantity r;
    const bool recognised = RecognisedQuantity(name, r);
    if (recognised && r != q)
    {
      problem = std::string(QuantityProperty(q)) + " selects the array '" + name +
        "', which is named like a " + QuantityName(r) + ", not a " + QuantityName(q) +
        " (ParaView's menu falls back to the first array when no array has the default name)";
    }
    for (std::size_t j = 0; j < i && problem.empty() && !recognised; ++j)
    {
      if (selected[j].name == name && selected[j].quantity != q)
      {
        problem = std::string(QuantityProperty(selected[j].quantity)) + " and " + QuantityProperty(q) +
          " both select the array '" + name + "'; one array cannot be the " +
          QuantityName(selected[j].quantity) + " and the " + QuantityName(q);
      }
    }
    if (problem.empty())
    {
      continue;
    }
    if (selected[i].optional)
    {
      warnings.push_back(problem + "; it is not used (no " + QuantityName(q) + "). Set " +
        QuantityProperty(q) + " to the " + QuantityName(q) + " array" + hint + " or to None.");
      selected[i].name.clear();
      continue;
    }
    vem::fail(problem, ". Set ", QuantityProperty(q), " to the ", QuantityName(q), " array", hint,
      "; ", DescribeArrays(input));
  }
  return warnings;
}

std::vector<std::string> ReadPropertyArrays(vtkAlgorithm* self, const ArrayLookup& lookup,
  vtkDataSet* input, const VoxelGrid& g, int association, bool withDensity, long long total,
  const std::function<long long(long long)>& totalIndex, vem::PerCellMedium& medium,
  std::vector<float>& density)
{
  struct Slot
  {
    int idx;
    Quantity quantity;
    bool required, positive;
    float pad; // value outside the voxels
    std::vector<std::vector<float>>* dst;
    const char* fallback;
  };
  std::vector<std::vector<float>> densityArrays;
  const Slot slots[5] = {
    { 0, Quantity::permittivity, true, true, 1.0f, &medium.eps_r, "permittivity" },
    { 1, Quantity::conductivity, false, false, 0.0f, &medium.sigma_e, "conductivity" },
    { 2, Quantity::permeability, false, true, 1.0f, &medium.mu_r, nullptr },
    { 3, Quantity::magnetic_conductivity, false, false, 0.0f, &medium.sigma_m, nullptr },
    { 5, Quantity::density, false, false, 0.0f, &densityArrays, "density" },
  };
  // Every slot resolved first: one array for two quantities, or an array named like another
  // quantity (a menu's fallback), is refused before anything is read.
  vtkDataArray* arrays[5] = {};
  std::vector<ArraySelection> selections;
  for (int q = 0; q < 5; ++q)
  {
    const Slot& s = slots[q];
    if (s.idx == 5 && !withDensity)
    {
      continue;
    }
    // Density: scalar and optional (absent without an error when only its default name
    // "density" was looked for).
    int assoc = -1;
    arrays[q] = ResolvePropertyArray(lookup(s.idx, assoc), self->GetInputArrayInformation(s.idx),
      s.idx, input, QuantityName(s.quantity), s.fallback, s.required, s.idx != 5, s.idx == 5,
      association, assoc);
    if (arrays[q] && arrays[q]->GetName())
    {
      selections.push_back({ s.quantity, arrays[q]->GetName(), s.idx == 5 });
    }
  }
  const std::vector<std::string> warnings = CheckArraySelections(input, selections);
  for (const ArraySelection& sel : selections)
  {
    if (sel.name.empty() && sel.quantity == Quantity::density) // the optional one, dropped
    {
      arrays[4] = nullptr;
    }
  }
  for (int q = 0; q < 5; ++q)
  {
    if (arrays[q])
    {
      const Slot& s = slots[q];
      AppendPaddedComponents(
        arrays[q], g, QuantityName(s.quantity), s.positive, s.pad, total, totalIndex, s.dst);
    }
  }
  if (!densityArrays.empty())
  {
    density = std::move(densityArrays[0]);
  }
  return warnings;
}

VoxelGrid VoxelGridOfInput(const int extent[6], const double spacing[3], const double origin[3],
  bool points_as_voxels, bool flat_as_one_voxel)
{
  const VoxelGrid v =
    VoxelGridFromExtent(extent, spacing, origin, points_as_voxels, flat_as_one_voxel);
  for (int a = 0; a < 3; ++a)
  {
    if (v.n[a] < 1)
    {
      vem::fail("the input image has no voxels along ", "xyz"[a], " (extent ", extent[2 * a], "..",
        extent[2 * a + 1], " with ", points_as_voxels ? "point" : "cell",
        " arrays); it needs at least one voxel on each axis");
    }
  }
  return v;
}

void SetDefaultMaterialArrays(vtkAlgorithm* self)
{
  const int cells = vtkDataObject::FIELD_ASSOCIATION_CELLS;
  const char* names[6] = { "permittivity", "conductivity", "None", "None", "tissue", "density" };
  for (int idx = 0; idx < 6; ++idx)
  {
    self->SetInputArrayToProcess(idx, 0, 0, cells, names[idx]);
  }
}

int RunReported(vtkAlgorithm* self, const char* label, const std::function<bool()>& solve)
{
  try
  {
    if (solve())
    {
      return 1;
    }
    vtkWarningWithObjectMacro(self, << label << ": the run was aborted; no output was produced. "
                                    << "It runs again at the next update once the abort request "
                                    << "is cleared.");
    return -1;
  }
  catch (const vem::Error& err)
  {
    vtkErrorWithObjectMacro(self, << label << ": " << err.what());
  }
  catch (const std::bad_alloc&)
  {
    vtkErrorWithObjectMacro(self, << label << ": out of host memory for this input's grid; use "
                                  << "coarser voxels, less padding, or fewer snapshots.");
  }
  catch (const std::exception& err)
  {
    vtkErrorWithObjectMacro(self, << label << ": " << err.what());
  }
  return 0;
}

unsigned long PipelineMTime(vtkAlgorithm* self)
{
  vtkDemandDrivenPipeline* exec = vtkDemandDrivenPipeline::SafeDownCast(self->GetExecutive());
  return std::max<vtkMTimeType>(self->GetMTime(), exec ? exec->GetPipelineMTime() : 0);
}

int RunOnce(vtkAlgorithm* self, const char* label, const void* input, bool cache_solved,
  int& outcome, unsigned long& mtime, const void*& input_seen, const std::function<bool()>& solve)
{
  const unsigned long now = PipelineMTime(self);
  const bool current = now == mtime && input == input_seen;
  if (current && (outcome == RUN_FAILED || (cache_solved && outcome == RUN_SOLVED)))
  {
    return outcome;
  }
  // After an abort the executive flips the algorithm's abort flags (and so its MTime): the abort
  // request itself marks the state. While it stands, the other ports' requests do not run again.
  if (outcome == RUN_ABORTED && input == input_seen && self->GetAbortExecute())
  {
    return outcome;
  }
  const int status = RunReported(self, label, solve);
  outcome = status == 1 ? RUN_SOLVED : (status == 0 ? RUN_FAILED : RUN_ABORTED);
  mtime = PipelineMTime(self);
  input_seen = input;
  return outcome;
}

} // namespace vem_vtk
