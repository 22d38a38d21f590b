// A transient FDTD run of the input image, 3D or 2D, kept alive between calls: what FDTDSolver
// (all steps at once, snapshots) and FDTDLive (a few steps per tick) share. It builds the voxel
// model (vemVoxelModel), the excitation (vem::add_transient_excitation or, for an image with one
// voxel along an axis, vem::add_transient_excitation_2d), the operator and the engine, and gives
// back cell-centred fields and probe records. VTK glue: the physics and the checks are the solver's.
#ifndef vemFDTDRun_h
#define vemFDTDRun_h

#include "vemArrayUtils.h"
#include "vemParallel.h"
#include "vemVoxelModel.h"

#include "vtkDataArray.h"
#include "vtkSmartPointer.h"

#include "vem/core/waveform.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/fdtd2d/fdtd2d_engine.h"
#include "vem/fdtd2d/fdtd2d_transient.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class vtkImageData;
class vtkInformation;

namespace vem_vtk
{

struct TransientRequest
{
  VoxelModelRequest model; // its `dimension` selects 2D or 3D
  vem::TransientOptions options;
  vem::Transient2dOptions options2d;
  vem::Backend backend = vem::Backend::automatic;
  int device = 0;
  /// Several ranks (pvbatch / pvserver under MPI): a 3D model is stepped by vem::DistributedFdtd,
  /// one piece per rank, and each rank's outputs are its piece (RunGeometry::piece_*). Serial by
  /// default (FDTD Live and 2D runs stay serial).
  ParallelContext parallel;
};

/// The output cells a decimated display shows (FDTD Live's DisplayStride / MaximumDisplayCells):
/// display cell (I, J, K) is output cell (cells[0][I], cells[1][J], cells[2][K]) of the full
/// output grid (voxels + padding, x fastest). Along an axis of n output cells the display has
/// m = ceil(n / stride) cells spanning the same length (spacing n * d / m; = stride * d when
/// stride divides n) and display cell I samples the full cell nearest its centre,
/// floor((I + 1/2) n / m) (= I * stride + stride / 2 when stride divides n). Point sampling, not
/// an average: the values are the full-resolution output's values at those cells.
struct DisplaySampling
{
  int stride = 1;
  std::array<std::vector<int>, 3> cells;
  bool Full() const;
  long long Count() const;
};

/// The stride for `requested` (>= 1: that stride; 0: automatic, the smallest stride whose display
/// has at most `maxCells` cells).
int DisplayStrideFor(const RunGeometry& g, int requested, long long maxCells);
DisplaySampling MakeDisplaySampling(const RunGeometry& g, int stride);
/// The display image's geometry: the output's origin and bounds, the sampling's cell counts.
void SetDisplayGeometry(vtkInformation* info, const RunGeometry& g, const DisplaySampling& s);
void SetDisplayGeometry(vtkImageData* image, const RunGeometry& g, const DisplaySampling& s);
/// A material array of the output grid sampled at the display cells.
vtkSmartPointer<vtkDataArray> SampleCells(vtkDataArray* full, const RunGeometry& g, const DisplaySampling& s);

class FDTDRun
{
public:
  FDTDRun();
  ~FDTDRun();
  FDTDRun(const FDTDRun&) = delete;
  FDTDRun& operator=(const FDTDRun&) = delete;

  /// Builds model, excitation, operator and engine (replacing any previous run). Throws
  /// vem::Error; `warnings` receives the model's and the engine's warnings.
  void Start(vtkAlgorithm* self, const ArrayLookup& lookup, vtkImageData* input,
    const TransientRequest& request, std::vector<std::string>& warnings);
  void Clear();
  bool Started() const;

  /// Advances up to `steps` steps; `callback(done)` every `interval` steps may stop the run.
  /// Returns the steps advanced.
  int Advance(int steps, const std::function<bool(int)>& callback, int interval);

  const RunGeometry& Geometry() const { return this->Geom; }
  int Steps() const;
  double Dt() const;
  double FieldEnergy() const;
  const std::string& Backend() const { return this->BackendName; }
  long long ComputationalCells() const;
  /// The distributed run's description ("2 x 1 x 2 (x cuts ...)") or "" for a serial run.
  const std::string& Decomposition() const { return this->DecompositionText; }
  /// E (electric) or H at the output cells' centres, 3 components (x, y, z): the rank's piece of
  /// the output grid in a distributed run (RunGeometry::OutputCells).
  std::vector<float> CellCentred(bool electric) const;
  /// E and H (3 components, x y z) and |E| at the centres of the display cells of `s`, written to
  /// the buffers given (nullptr: not wanted; s.Count() tuples each), multi-threaded (OpenMP),
  /// read straight from the engine's arrays (the CPU engines' host memory; the CUDA engines' host
  /// copies). The values equal CellCentred()'s at those cells.
  void SampleDisplay(const DisplaySampling& s, float* e, float* h, float* magnitude) const;
  vem::ProbeRecord Probes() const;
  const vem::Waveform& Waveform() const { return this->SourceWaveform; }
  const std::vector<vtkSmartPointer<vtkDataArray>>& Materials() const { return this->MaterialArrays; }
  /// The model's piece (split input on several ranks: the extent this rank read).
  const ModelPiece& Piece() const { return this->InputPiece; }
  /// The 2D engine (nullptr for a 3D run or none).
  vem::Fdtd2dEngine* Engine2D() const;

private:
  struct Engines;
  void StartDistributed(Engines& e, VoxelModel& model, const vem::TransientExcitation& x,
    const TransientRequest& r, std::vector<std::string>& warnings);
  std::array<int, 3> PieceCellLo{ 0, 0, 0 }; // first computational cell of this rank's piece
  std::unique_ptr<Engines> E;
  RunGeometry Geom;
  std::string BackendName;
  std::string DecompositionText;
  vem::Waveform SourceWaveform;
  std::vector<vtkSmartPointer<vtkDataArray>> MaterialArrays;
  ModelPiece InputPiece;
};

} // namespace vem_vtk

#endif
