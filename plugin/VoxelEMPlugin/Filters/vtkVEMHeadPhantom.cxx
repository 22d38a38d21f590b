#include "vtkVEMHeadPhantom.h"

#include "vtkCellData.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkUnsignedCharArray.h"
#include "vtkUnsignedShortArray.h"

#include "vem/core/error.h"
#include "vem/models/head_phantom.h"

#include <algorithm>
#include <vector>

vtkStandardNewMacro(vtkVEMHeadPhantom);

vtkVEMHeadPhantom::vtkVEMHeadPhantom()
{
  this->SetNumberOfInputPorts(0);
  for (int a = 0; a < 3; ++a)
  {
    this->Dimensions[a] = vem::kHeadPhantomDefaultCells[a];
    this->Spacing[a] = vem::kHeadPhantomDefaultSpacing[a];
    this->Origin[a] = vem::kHeadPhantomDefaultOrigin[a];
    this->HeadCenter[a] = 0.0;
  }
  this->Scale = 1.0;
  this->MinimumLayerThickness = 0.0;
  this->LabelType = VTK_UNSIGNED_CHAR;
}

vem::HeadPhantomGeometry vtkVEMHeadPhantom::Geometry() const
{
  vem::HeadPhantomGeometry g;
  g.center = { this->HeadCenter[0], this->HeadCenter[1], this->HeadCenter[2] };
  g.scale = this->Scale;
  g.min_layer = this->MinimumLayerThickness;
  return g;
}

int vtkVEMHeadPhantom::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  // The options are the solver's to check; an error is reported once, here, and the output is
  // empty (RequestData sees no whole extent).
  this->Valid = false;
  try
  {
    this->Geometry().validate();
    vem::validate_head_phantom_image({ this->Dimensions[0], this->Dimensions[1], this->Dimensions[2] },
      { this->Spacing[0], this->Spacing[1], this->Spacing[2] },
      { this->Origin[0], this->Origin[1], this->Origin[2] });
    if (this->LabelType != VTK_UNSIGNED_CHAR && this->LabelType != VTK_UNSIGNED_SHORT)
    {
      vem::fail("LabelType = ", this->LabelType, ": must be unsigned char (3) or unsigned short (5)");
    }
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("Head Phantom: " << err.what());
    const int none[6] = { 0, -1, 0, -1, 0, -1 };
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), none, 6);
    return 1;
  }
  this->Valid = true;
  // Voxels are cells: N voxels need N + 1 points.
  int whole[6] = { 0, this->Dimensions[0], 0, this->Dimensions[1], 0, this->Dimensions[2] };
  outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
  outInfo->Set(vtkDataObject::SPACING(), this->Spacing, 3);
  outInfo->Set(vtkDataObject::ORIGIN(), this->Origin, 3);
  outInfo->Set(vtkAlgorithm::CAN_PRODUCE_SUB_EXTENT(), 1);
  return 1;
}

int vtkVEMHeadPhantom::RequestData(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkImageData* output = vtkImageData::GetData(outInfo);
  if (!output)
  {
    return 0;
  }
  int ext[6];
  outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), ext);
  output->SetExtent(ext);
  output->SetSpacing(this->Spacing);
  output->SetOrigin(this->Origin);

  if (!this->Valid)
  {
    output->Initialize(); // the error was reported by RequestInformation
    return 1;
  }

  // Cells of the requested piece; a piece one point thick along an axis has no cells.
  const int cells[6] = { ext[0], ext[1] - 1, ext[2], ext[3] - 1, ext[4], ext[5] - 1 };
  const bool empty = cells[1] < cells[0] || cells[3] < cells[2] || cells[5] < cells[4];
  const vtkIdType nx = empty ? 0 : cells[1] - cells[0] + 1;
  const vtkIdType ny = empty ? 0 : cells[3] - cells[2] + 1;
  const vtkIdType nz = empty ? 0 : cells[5] - cells[4] + 1;

  std::vector<std::uint8_t> labels(static_cast<std::size_t>(nx * ny * nz));
  const vem::HeadPhantomGeometry g = this->Geometry();
  const std::array<double, 3> origin{ this->Origin[0], this->Origin[1], this->Origin[2] };
  const std::array<double, 3> spacing{ this->Spacing[0], this->Spacing[1], this->Spacing[2] };
  try
  {
    // Slabs of z, with progress and abort between them.
    const vtkIdType slab = std::max<vtkIdType>(1, nz / 20);
    for (vtkIdType k0 = 0; k0 < nz; k0 += slab)
    {
      if (this->GetAbortExecute())
      {
        output->Initialize();
        vtkWarningMacro("Head Phantom: aborted; no output.");
        return 1;
      }
      const vtkIdType k1 = std::min(nz, k0 + slab) - 1;
      const int e[6] = { cells[0], cells[1], cells[2], cells[3], static_cast<int>(cells[4] + k0),
        static_cast<int>(cells[4] + k1) };
      vem::head_phantom_fill(g, origin, spacing, e, labels.data() + k0 * nx * ny);
      this->UpdateProgress(static_cast<double>(k1 + 1) / nz);
    }
  }
  catch (const vem::Error& err)
  {
    vtkErrorMacro("Head Phantom: " << err.what());
    output->Initialize();
    return 1;
  }

  vtkSmartPointer<vtkDataArray> arr;
  if (this->LabelType == VTK_UNSIGNED_SHORT)
  {
    vtkNew<vtkUnsignedShortArray> a;
    a->SetNumberOfTuples(static_cast<vtkIdType>(labels.size()));
    std::copy(labels.begin(), labels.end(), a->GetPointer(0));
    arr = a;
  }
  else
  {
    vtkNew<vtkUnsignedCharArray> a;
    a->SetNumberOfTuples(static_cast<vtkIdType>(labels.size()));
    std::copy(labels.begin(), labels.end(), a->GetPointer(0));
    arr = a;
  }
  arr->SetName("tissue");
  output->GetCellData()->SetScalars(arr);

  vtkNew<vtkStringArray> names;
  names->SetName("tissue_names");
  vtkNew<vtkIntArray> values;
  values->SetName("tissue_labels");
  for (int l = 0; l < vem::kHeadTissueCount; ++l)
  {
    names->InsertNextValue(vem::head_tissue_name(l));
    values->InsertNextValue(l);
  }
  output->GetFieldData()->AddArray(names);
  output->GetFieldData()->AddArray(values);
  return 1;
}

void vtkVEMHeadPhantom::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Dimensions: " << this->Dimensions[0] << " " << this->Dimensions[1] << " "
     << this->Dimensions[2] << "\n";
  os << indent << "Spacing: " << this->Spacing[0] << " " << this->Spacing[1] << " "
     << this->Spacing[2] << "\n";
  os << indent << "Origin: " << this->Origin[0] << " " << this->Origin[1] << " " << this->Origin[2]
     << "\n";
  os << indent << "HeadCenter: " << this->HeadCenter[0] << " " << this->HeadCenter[1] << " "
     << this->HeadCenter[2] << "\n";
  os << indent << "Scale: " << this->Scale << "\n";
  os << indent << "MinimumLayerThickness: " << this->MinimumLayerThickness << "\n";
  os << indent << "LabelType: " << this->LabelType << "\n";
}
