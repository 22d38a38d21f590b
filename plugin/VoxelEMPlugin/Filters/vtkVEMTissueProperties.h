/**
 * @class   vtkVEMTissueProperties
 * @brief   per-voxel permittivity, conductivity and density from tissue labels
 *
 * Input: vtkImageData with an integer label array (input array 0, point or cell data).
 * Output: the input (shallow copy) plus float arrays with the same association as the labels:
 * "permittivity" (relative), "conductivity" (S/m) and "density" (kg/m^3), evaluated at
 * Frequency (Hz) from the four-pole Cole-Cole models of Gabriel et al. 1996 (see
 * solver/include/vem/tissue_properties.h for the parameters and their sources).
 *
 * The built-in table covers the labels of vtkVEMHeadPhantom; a CSV file (TissueTableFile, format
 * in tissue_properties.h) overrides or extends it row by row. Labels without properties,
 * malformed rows and non-physical values are errors naming the row and label.
 */
#ifndef vtkVEMTissueProperties_h
#define vtkVEMTissueProperties_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkImageAlgorithm.h"

#include <string>

class VOXELEMFILTERS_EXPORT vtkVEMTissueProperties : public vtkImageAlgorithm
{
public:
  static vtkVEMTissueProperties* New();
  vtkTypeMacro(vtkVEMTissueProperties, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Frequency at which the Cole-Cole models are evaluated, Hz. Default 900 MHz.
  vtkSetMacro(Frequency, double);
  vtkGetMacro(Frequency, double);
  ///@}

  ///@{
  /// Optional CSV tissue table; empty = none.
  vtkSetStdStringFromCharMacro(TissueTableFile);
  vtkGetCharFromStdStringMacro(TissueTableFile);
  ///@}

  ///@{
  /// Start from the built-in head-phantom table (default on); off = only the CSV table.
  vtkSetMacro(UseBuiltInTable, bool);
  vtkGetMacro(UseBuiltInTable, bool);
  vtkBooleanMacro(UseBuiltInTable, bool);
  ///@}

protected:
  vtkVEMTissueProperties();
  ~vtkVEMTissueProperties() override = default;

  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  double Frequency;
  std::string TissueTableFile;
  bool UseBuiltInTable;
  // The pipeline state of the last error (reported once; the same state gives an empty output).
  vtkMTimeType FailedMTime = 0;
  const void* FailedInput = nullptr;

private:
  vtkVEMTissueProperties(const vtkVEMTissueProperties&) = delete;
  void operator=(const vtkVEMTissueProperties&) = delete;
};

#endif
