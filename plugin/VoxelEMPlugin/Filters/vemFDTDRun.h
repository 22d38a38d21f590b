// A transient FDTD run of the input image, 3D or 2D, kept alive between calls: what FDTDSolver
// (all steps at once, snapshots) and FDTDLive (a few steps per tick) share. It builds the voxel
// model (vemVoxelModel), the excitation (vem::add_transient_excitation or, for an image with one
// voxel along an axis, vem::add_transient_excitation_2d), the operator and the engine, and gives
// back cell-centred fields and probe records. VTK glue: the physics and the checks are the solver's.
#ifndef vemFDTDRun_h
#define vemFDTDRun_h

#include "vemArrayUtils.h"
#include "vemVoxelModel.h"

#include "vtkDataArray.h"
#include "vtkSmartPointer.h"

#include "vem/core/waveform.h"
#include "vem/fdtd/fdtd_engine.h"
#include "vem/fdtd/fdtd_transient.h"
#include "vem/fdtd/voxel_domain.h"
#include "vem/fdtd2d/fdtd2d_engine.h"
#include "vem/fdtd2d/fdtd2d_transient.h"

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
};

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
  /// E (electric) or H at the output cells' centres, 3 components (x, y, z).
  std::vector<float> CellCentred(bool electric) const;
  vem::ProbeRecord Probes() const;
  const vem::Waveform& Waveform() const { return this->SourceWaveform; }
  const std::vector<vtkSmartPointer<vtkDataArray>>& Materials() const { return this->MaterialArrays; }
  /// The 2D engine (nullptr for a 3D run or none).
  vem::Fdtd2dEngine* Engine2D() const;

private:
  struct Engines;
  std::unique_ptr<Engines> E;
  RunGeometry Geom;
  std::string BackendName;
  vem::Waveform SourceWaveform;
  std::vector<vtkSmartPointer<vtkDataArray>> MaterialArrays;
};

} // namespace vem_vtk

#endif
