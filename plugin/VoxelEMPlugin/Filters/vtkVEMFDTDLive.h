/**
 * @class   vtkVEMFDTDLive
 * @brief   A transient FDTD run shown while it is computed: StepsPerTick steps per tick, the
 *          engine kept alive between ticks (ParaView's live-source mechanism)
 *
 * The model, illumination and options are FDTD Solver's (vtkVEMFDTDSolver, 3D or 2D); instead of
 * a time series the output is the field now. A tick advances the run by StepsPerTick steps:
 *   - ParaView GUI: the proxy has the <LiveSource> hint, so pqLiveSourceBehavior polls
 *     GetNeedsUpdate() on a timer; it returns true (and marks the filter modified) while the run
 *     is started, not paused, not at MaximumSteps and not failed; the GUI then re-executes the
 *     pipeline and re-renders the views;
 *   - pvpython: the same through examples/voxelem_live.py (tick(): GetNeedsUpdate(), then
 *     MarkModified on the proxy and Render), or the command Tick() then UpdatePipeline().
 * Paused (property): no ticks; un-pausing resumes where the run stopped. Reset() (a button):
 * back to step 0 with the same model. Changing any other property of this filter (materials,
 * source, boundaries, ...) or anything upstream restarts the run at step 0 at the next update;
 * changing StepsPerTick, MaximumSteps or Paused does not, and display properties never reach the
 * filter. A request without a tick (another view, another output port) re-sends the current state.
 *
 * Output port 0: vtkImageData on the voxels + padding (a flat input gives a flat output), cell
 * arrays "E", "E_magnitude" (and "H" with KeepH) at the cell centres as FDTD Solver's, materials,
 * decimated for display when the grid is large (DisplayStride, MaximumDisplayCells: the solver
 * keeps its full resolution; the image shows every stride-th cell, point-sampled, with the same
 * bounds; vem_vtk::DisplaySampling says which cells). FDTD Solver gives the full-resolution fields.
 * field data "step", "time_E", "time_H", "time_step_dt", "backend"; DATA_TIME_STEP = time of E.
 * Output port 1: the probe table from step 1 to now (FDTD Solver's columns).
 * Errors are reported once (one vtkErrorMacro) with empty outputs; the run does not tick again
 * until a property or the input changes.
 */
#ifndef vtkVEMFDTDLive_h
#define vtkVEMFDTDLive_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkVEMFDTDSolver.h"

#include <memory>

class VOXELEMFILTERS_EXPORT vtkVEMFDTDLive : public vtkVEMFDTDSolver
{
public:
  static vtkVEMFDTDLive* New();
  vtkTypeMacro(vtkVEMFDTDLive, vtkVEMFDTDSolver);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Steps per tick (>= 1, checked when the run starts); changing it does not restart the run.
  void SetStepsPerTick(int n);
  vtkGetMacro(StepsPerTick, int);
  /// 0 = no limit; otherwise the run stops ticking at this step. Does not restart the run.
  void SetMaximumSteps(int n);
  vtkGetMacro(MaximumSteps, int);
  /// Pause / resume; does not restart the run.
  void SetPaused(bool p);
  vtkGetMacro(Paused, bool);
  vtkBooleanMacro(Paused, bool);
  /// Display decimation (does not restart the run): 0 = automatic (the smallest stride whose
  /// image has at most MaximumDisplayCells cells), n >= 1 = every n-th cell along each axis
  /// (1 = full resolution).
  void SetDisplayStride(int n);
  vtkGetMacro(DisplayStride, int);
  /// The automatic stride's limit (cells of the displayed image, >= 1; default 1048576 = 1024^2).
  void SetMaximumDisplayCells(int n);
  vtkGetMacro(MaximumDisplayCells, int);
  /// The stride in use (information).
  int GetCurrentDisplayStride() const;
  ///@}

  /// Back to step 0 (same model, rebuilt at the next update).
  void Reset();
  /// Requests one tick (pvpython); the next update advances StepsPerTick steps unless paused.
  void Tick();

  /// ParaView's live-source poll: true when a tick is due (and the filter is then marked
  /// modified so that the pipeline re-executes).
  bool GetNeedsUpdate();

  ///@{
  /// State of the run (information only).
  int GetCurrentStep() const;
  double GetCurrentTime() const;
  vtkGetMacro(NumberOfResets, int);
  vtkGetMacro(LastTickSeconds, double);
  vtkGetMacro(LastOutputSeconds, double);
  bool GetRunning() const;
  ///@}

  /// Any other modification restarts the run (see the class comment).
  void Modified() override;

protected:
  vtkVEMFDTDLive();
  ~vtkVEMFDTDLive() override;

  const char* Label() const override { return "FDTD Live"; }
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int StepsPerTick;
  int MaximumSteps;
  bool Paused;
  int DisplayStride;
  int MaximumDisplayCells;

private:
  vtkVEMFDTDLive(const vtkVEMFDTDLive&) = delete;
  void operator=(const vtkVEMFDTDLive&) = delete;

  void QuietModified(); // a modification that keeps the run
  bool Restart(vtkImageData* input, vtkInformationVector** inputVector);
  void FillOutputs(vtkImageData* output, vtkTable* table);
  int StrideOf(const vem_vtk::RunGeometry& g) const;

  bool Quiet = false;
  bool ConfigChanged = true;
  bool ResetRequested = false;
  bool TickRequested = false;
  bool Failed = false;
  unsigned long UpstreamMTime = 0;
  const void* InputSeen = nullptr;
  int NumberOfResets = 0;
  double LastTickSeconds = 0.0;
  double LastOutputSeconds = 0.0;

  struct LiveInternals;
  std::unique_ptr<LiveInternals> Live;
};

#endif
