/**
 * @class   vtkVEMFDTDSteadyState
 * @brief   Steady-state FDTD of a voxel model: DFT phasors, SAR (local, 1 g, 10 g), a summary and
 *          the far field (RCS or gain)
 *
 * One call of vem::run_fdtd_harmonic (fdtd_harmonic.h) on the voxel model of
 * vtkVEMFDTDFilterBase; the options are vem::HarmonicOptions, whose validate() checks them.
 * Running DFTs at DFTFrequencies (Hz, at least one). One frequency: CW excitation, the run stops
 *   when the relative change of the phasors between checks is below SteadyStateTolerance. Several:
 *   a pulse covering them, phasors normalized by the source spectrum, stop when they no longer
 *   change. MaxSteps caps the run (0 = automatic), FixedSteps > 0 runs exactly that many steps
 *   without the criterion. DFTSampleInterval: steps between DFT samples (0 = automatic).
 *   Illumination:
 *   - plane wave: as in FDTDSolver, incident peak amplitude IncidentAmplitude at every frequency,
 *     the same automatic TF/SF box (AirPadding >= 6); the near-to-far box lies 2 cells inside the
 *     CPML, in the scattered-field region;
 *   - half-wave dipole: a thin PEC wire along DipoleAxis (0 x, 1 y, 2 z) centred at DipoleCentre
 *     (world, snapped to the nearest E sample), DipoleLength (0 = half the free-space wavelength at
 *     the first frequency; rounded to an odd number of edges), fed at a one-edge centre gap;
 *     normalized to AcceptedPower (W) when > 0, otherwise to a feed current of FeedCurrent (A, peak);
 *     the wire must stay inside the near-to-far box (2 cells inside the CPML);
 *   - point source: mapped to a one-edge dipole (a Hertzian dipole: the gap only, no wire) at
 *     SourcePosition along the axis of SourcePolarization (which must be along x, y or z) with the
 *     current moment SourceAmplitude (A m), i.e. a feed current |SourceAmplitude| / edge length (a
 *     negative direction or amplitude flips the sign of the phasors); not power-normalized.
 *     SourceType "hard E" is refused.
 *   Tissue tables are evaluated at TissueFrequency, or at the first DFT frequency when it is 0
 *   (one material model for all frequencies; a warning says so when several are requested).
 *   Output port 0: vtkImageData with the extent, origin and spacing of FDTDSolver's output (voxels + padding,
 *   CPML dropped), cell data for each frequency: "E_real", "E_imag" (V/m,
 *   peak phasors e^{jwt}, 3 components: each Yee component averaged over its 4 samples around the
 *   cell centre), "E_magnitude" = sqrt(|E|^2) at the cell centre as the SAR uses it (|Ex|^2
 *   averaged over the 4 x edges, likewise y, z; sar.h), and with a density: "SAR" (local,
 *   absorbed power density / rho from each E sample's own conductivity (sar.h), W/kg), "SAR_1g",
 *   "SAR_10g" (IEC/IEEE 62704-1 cube averages, only with ComputeAveragedSAR and cubic voxels;
 *   with other voxels they are skipped with a warning and their table values are NaN). With one
 *   frequency the names are exactly these;
 *   with several each gets the suffix "_<f>MHz", f = frequency / 1e6 printed with up to 6
 *   significant digits and '.' written as 'p' ("SAR_900MHz", "E_real_1800MHz",
 *   "SAR_1g_433p92MHz"). Materials, once: "permittivity", "conductivity", "density" (when known;
 *   the density used for SAR: values below 10 kg/m^3, gases such as the tables' air at 1.16, are
 *   air and written as 0),
 *   "tissue" (label mode). For a plane wave, cells outside the total-field box hold the scattered
 *   field only. Field data (arrays with one tuple per frequency, in the order of DFTFrequencies):
 *   "frequency_Hz", "whole_body_SAR_W_per_kg", "peak_local_SAR_W_per_kg", "psSAR1g_W_per_kg",
 *   "psSAR1g_location_m" (3 components, world centre of the peak cube), "psSAR10g_W_per_kg",
 *   "psSAR10g_location_m", "absorbed_power_W", "accepted_power_W", "radiated_power_W",
 *   "scattering_cross_section_m2", "feed_impedance_ohm" (2 components: real, imaginary); and one
 *   value each: "steps", "converged" (1/0), "relative_change", "time_step_dt", "simulated_time",
 *   "dft_sample_interval", "tissue_frequency_Hz" (label mode; NaN otherwise), "backend".
 *   Quantities that do not apply are NaN (SAR without a density, feed quantities and accepted
 *   power for a plane wave, the cross-section for a dipole, 1 g / 10 g without ComputeAveragedSAR
 *   or cubic voxels, or when no averaging cube is valid).
 *   Output port 1: vtkTable "summary", one row per frequency: frequency_Hz,
 *   whole_body_SAR_W_per_kg, peak_local_SAR_W_per_kg, psSAR1g_W_per_kg, psSAR1g_x_m, psSAR1g_y_m,
 *   psSAR1g_z_m, psSAR10g_W_per_kg, psSAR10g_x_m, psSAR10g_y_m, psSAR10g_z_m, absorbed_power_W,
 *   accepted_power_W, radiated_power_W, feed_impedance_real_ohm, feed_impedance_imag_ohm,
 *   scattering_cross_section_m2, steps, converged (same NaN rule; the same values as the field
 *   data of port 0).
 *   Output port 2: vtkTable far field in FarFieldStep steps. Plane wave, theta 0..180: FDFDSolver's
 *   columns "theta_deg" (scattering angle from the forward direction towards E0 in the E plane,
 *   towards k x E0 in the H plane; 180 = backscatter), "rcs_E_plane_dBsm", "rcs_H_plane_dBsm",
 *   "rcs_E_plane_m2", "rcs_H_plane_m2". Dipole (and point source) along axis a, theta 0..360:
 *   "theta_deg", "gain_E_plane_dBi", "gain_H_plane_dBi", "gain_E_plane", "gain_H_plane"
 *   (linear, 4 pi U / accepted power, so losses in the body count); with b = a+1, c = a+2
 *   cyclically the E-plane direction is cos(t) a_hat + sin(t) c_hat (theta from the axis), the
 *   H-plane direction cos(t) b_hat + sin(t) c_hat (for a z dipole: the xz and xy planes). With
 *   several frequencies a first column "frequency_Hz" is added and the rows of each frequency
 *   follow each other in the order of DFTFrequencies.
 *   A run that does not meet the criterion before MaxSteps still gives outputs, with converged 0
 *   and a warning.
 *
 * 2D (an image with one voxel along an axis, see vtkVEMFDTDFilterBase): one DFT frequency, a CW
 * run of the 2D solver; outputs as vemSteadyState2D.h lists them (phasors of E and H, a summary of
 * frequency / steps / convergence, the far field per unit length: scattering width for a plane
 * wave). SAR, powers and the feed impedance are not computed in 2D (a warning says so).
 *
 * Progress reports steps and the relative change; AbortExecute stops the run at the next
 * progress interval and leaves every output empty (no partial result).
 */
#ifndef vtkVEMFDTDSteadyState_h
#define vtkVEMFDTDSteadyState_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkVEMFDTDFilterBase.h"

#include <memory>
#include <vector>

class vtkTable;

class VOXELEMFILTERS_EXPORT vtkVEMFDTDSteadyState : public vtkVEMFDTDFilterBase
{
public:
  static vtkVEMFDTDSteadyState* New();
  vtkTypeMacro(vtkVEMFDTDSteadyState, vtkVEMFDTDFilterBase);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// W; > 0 normalizes the dipole to this accepted power, 0 uses FeedCurrent.
  vtkSetMacro(AcceptedPower, double);
  vtkGetMacro(AcceptedPower, double);

  void SetNumberOfDFTFrequencies(int n);
  int GetNumberOfDFTFrequencies() const;
  void SetDFTFrequency(int i, double f);
  double GetDFTFrequency(int i) const;
  void ClearDFTFrequencies();
  vtkSetMacro(SteadyStateTolerance, double);
  vtkGetMacro(SteadyStateTolerance, double);
  /// 0 = automatic.
  vtkSetMacro(MaxSteps, int);
  vtkGetMacro(MaxSteps, int);
  /// > 0: exactly this many steps, no steady-state criterion.
  vtkSetMacro(FixedSteps, int);
  vtkGetMacro(FixedSteps, int);
  /// Steps between DFT samples; 0 = automatic.
  vtkSetMacro(DFTSampleInterval, int);
  vtkGetMacro(DFTSampleInterval, int);
  /// Theta step of the far-field tables, degrees.
  vtkSetMacro(FarFieldStep, double);
  vtkGetMacro(FarFieldStep, double);
  vtkSetMacro(ComputeAveragedSAR, bool);
  vtkGetMacro(ComputeAveragedSAR, bool);

  ///@{
  /// Steps run, criterion met, last relative change of the last run (information only).
  vtkGetMacro(LastSteps, int);
  vtkGetMacro(LastConverged, bool);
  vtkGetMacro(LastRelativeChange, double);
  ///@}

  /// Output ports 1 and 2.
  vtkTable* GetSummaryOutput();
  vtkTable* GetFarFieldOutput();

protected:
  vtkVEMFDTDSteadyState();
  ~vtkVEMFDTDSteadyState() override;

  const char* Label() const override { return "FDTD Steady State"; }
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  double AcceptedPower;
  std::vector<double> DFTFrequencies;
  double SteadyStateTolerance;
  int MaxSteps;
  int FixedSteps;
  int DFTSampleInterval;
  double FarFieldStep;
  bool ComputeAveragedSAR;
  int LastSteps;
  bool LastConverged;
  double LastRelativeChange;

private:
  vtkVEMFDTDSteadyState(const vtkVEMFDTDSteadyState&) = delete;
  void operator=(const vtkVEMFDTDSteadyState&) = delete;

  // Returns false when aborted; throws vem::Error.
  bool Solve(vtkImageData* input, vtkInformationVector** inputVector);
  // The 2D run (an image with one voxel along an axis; vemSteadyState2D.h).
  bool Solve2D(vtkImageData* input, vtkInformationVector** inputVector);

  struct Internals;
  std::unique_ptr<Internals> Internal;
};

#endif
