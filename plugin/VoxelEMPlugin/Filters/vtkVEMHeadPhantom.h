/**
 * @class   vtkVEMHeadPhantom
 * @brief   procedural anatomical head phantom as a labelled vtkImageData
 *
 * Produces an image whose voxels are cells, with a cell array "tissue" (unsigned char or
 * unsigned short) holding the tissue label of each voxel, and in field data the label names
 * ("tissue_names", a string array indexed by label) and label values ("tissue_labels").
 * The anatomy (ellipsoids, smooth unions, depth shells) is vem::head_phantom_label in
 * solver/src/models/head_phantom.cpp; this class only fills the requested extent.
 *
 * Like vtkRTAnalyticSource it can produce any sub-extent of its whole extent, reports progress
 * per slab of z and honours AbortExecute. Lengths are in metres.
 */
#ifndef vtkVEMHeadPhantom_h
#define vtkVEMHeadPhantom_h

#include "VoxelEMFiltersModule.h" // for export macro
#include "vtkImageAlgorithm.h"

namespace vem
{
struct HeadPhantomGeometry;
}

class VOXELEMFILTERS_EXPORT vtkVEMHeadPhantom : public vtkImageAlgorithm
{
public:
  static vtkVEMHeadPhantom* New();
  vtkTypeMacro(vtkVEMHeadPhantom, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Number of voxels (cells) along x, y, z. Default 128 x 128 x 64.
  vtkSetVector3Macro(Dimensions, int);
  vtkGetVector3Macro(Dimensions, int);
  ///@}

  ///@{
  /// Voxel size in metres. Default 2.2 x 2.2 x 2.8 mm.
  vtkSetVector3Macro(Spacing, double);
  vtkGetVector3Macro(Spacing, double);
  ///@}

  ///@{
  /// World position of the lower corner of voxel (0,0,0), metres. Default (-0.1408, -0.1408,
  /// -0.095), which frames the head of the default grid.
  vtkSetVector3Macro(Origin, double);
  vtkGetVector3Macro(Origin, double);
  ///@}

  ///@{
  /// World position of the head-frame origin (centre of the cranium), metres. Default (0,0,0).
  vtkSetVector3Macro(HeadCenter, double);
  vtkGetVector3Macro(HeadCenter, double);
  ///@}

  ///@{
  /// Uniform scale of the anatomy (1 = adult head about 155 x 200 mm).
  vtkSetMacro(Scale, double);
  vtkGetMacro(Scale, double);
  ///@}

  ///@{
  /// Minimum thickness of every tissue shell in metres; 0 (default) uses the largest voxel size
  /// so thin layers (skin, skull tables) stay closed.
  vtkSetMacro(MinimumLayerThickness, double);
  vtkGetMacro(MinimumLayerThickness, double);
  ///@}

  ///@{
  /// Type of the label array: VTK_UNSIGNED_CHAR (default) or VTK_UNSIGNED_SHORT.
  vtkSetMacro(LabelType, int);
  vtkGetMacro(LabelType, int);
  ///@}

protected:
  vtkVEMHeadPhantom();
  ~vtkVEMHeadPhantom() override = default;

  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Dimensions[3];
  double Spacing[3];
  double Origin[3];
  double HeadCenter[3];
  double Scale;
  double MinimumLayerThickness;
  int LabelType;

private:
  vem::HeadPhantomGeometry Geometry() const;
  bool Valid = false; // the last RequestInformation found the options valid

  vtkVEMHeadPhantom(const vtkVEMHeadPhantom&) = delete;
  void operator=(const vtkVEMHeadPhantom&) = delete;
};

#endif
