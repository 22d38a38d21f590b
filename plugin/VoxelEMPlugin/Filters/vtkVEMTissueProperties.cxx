#include "vtkVEMTissueProperties.h"

#include "vemArrayUtils.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include "vem/core/error.h"
#include "vem/models/head_phantom.h"
#include "vem/models/tissue_properties.h"

#include <vector>

vtkStandardNewMacro(vtkVEMTissueProperties);

vtkVEMTissueProperties::vtkVEMTissueProperties()
  : Frequency(900e6)
  , UseBuiltInTable(true)
{
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_CELLS, vtkDataSetAttributes::SCALARS);
}

int vtkVEMTissueProperties::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* input = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector);
  if (!input || !output)
  {
    vtkErrorMacro("Tissue Properties: the input must be a vtkImageData.");
    return 0;
  }
  const vtkMTimeType mtime = vem_vtk::PipelineMTime(this);
  if (mtime == this->FailedMTime && input == this->FailedInput)
  {
    output->Initialize();
    return 1;
  }
  output->ShallowCopy(input);

  try
  {
    int association = -1;
    std::string name;
    vtkDataArray* labels = vem_vtk::ResolveSelectedArray(
      this->GetInputArrayToProcess(0, inputVector, association), this->GetInputArrayInformation(0),
      0, input, "tissue", association, name);
    if (!labels)
    {
      vem::fail("the label array ", name.empty() ? std::string("(none selected)") : "'" + name + "'",
        " was not found; ", vem_vtk::DescribeArrays(input));
    }
    if (association != vtkDataObject::FIELD_ASSOCIATION_POINTS &&
      association != vtkDataObject::FIELD_ASSOCIATION_CELLS)
    {
      vem::fail("the label array must be point or cell data");
    }
    std::vector<vem_vtk::ArraySelection> selection{ { vem_vtk::Quantity::labels,
      labels->GetName() ? labels->GetName() : "" } };
    vem_vtk::CheckArraySelections(input, selection);
    const bool points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
    const vem_vtk::VoxelGrid grid = vem_vtk::VoxelGridFromExtent(
      input->GetExtent(), input->GetSpacing(), input->GetOrigin(), points);
    const std::vector<std::uint16_t> lab = vem_vtk::ReadLabels(labels, grid, "label");

    vem::TissueTable table;
    if (this->UseBuiltInTable)
    {
      table = vem::head_phantom_tissue_table();
    }
    if (!this->TissueTableFile.empty())
    {
      table.merge_csv_file(this->TissueTableFile);
    }
    if (table.empty())
    {
      vem::fail("no tissue table: enable the built-in table or give a CSV file");
    }
    vem::validate_frequency(this->Frequency);
    if (this->Frequency < vem::kGabrielMinFrequency || this->Frequency > vem::kGabrielMaxFrequency)
    {
      vtkWarningMacro("Tissue Properties: " << this->Frequency
                                            << " Hz is outside 10 Hz - 100 GHz, where the "
                                               "Gabriel (1996) models were fitted.");
    }
    std::vector<std::int64_t> values, counts;
    vem_vtk::UniqueLabels(lab, values, counts);
    const vem::LabelProperties props = table.lookup(values, this->Frequency, &counts);

    std::vector<float> eps(65536, 1.0f), sig(65536, 0.0f), rho(65536, 0.0f);
    for (std::size_t q = 0; q < props.labels.size(); ++q)
    {
      eps[props.labels[q]] = static_cast<float>(props.dielectric[q].eps_r);
      sig[props.labels[q]] = static_cast<float>(props.dielectric[q].sigma);
      rho[props.labels[q]] = static_cast<float>(props.density[q]);
    }
    const vtkIdType n = static_cast<vtkIdType>(lab.size());
    vtkNew<vtkFloatArray> aeps, asig, arho;
    aeps->SetName("permittivity");
    asig->SetName("conductivity");
    arho->SetName("density");
    for (vtkFloatArray* a : { aeps.GetPointer(), asig.GetPointer(), arho.GetPointer() })
    {
      a->SetNumberOfTuples(n);
    }
    float* pe = aeps->GetPointer(0);
    float* ps = asig->GetPointer(0);
    float* pr = arho->GetPointer(0);
    for (vtkIdType v = 0; v < n; ++v)
    {
      const std::uint16_t l = lab[static_cast<std::size_t>(v)];
      pe[v] = eps[l];
      ps[v] = sig[l];
      pr[v] = rho[l];
    }
    vtkDataSetAttributes* attrs = points
      ? static_cast<vtkDataSetAttributes*>(output->GetPointData())
      : static_cast<vtkDataSetAttributes*>(output->GetCellData());
    attrs->AddArray(asig);
    attrs->AddArray(arho);
    attrs->AddArray(aeps);
    attrs->SetActiveScalars("permittivity");

    vtkNew<vtkDoubleArray> freq;
    freq->SetName("frequency_hz");
    freq->InsertNextValue(this->Frequency);
    output->GetFieldData()->AddArray(freq);
  }
  catch (const vem::Error& err)
  {
    // Reported once; the request succeeds so that the executive adds no second message.
    vtkErrorMacro("Tissue Properties: " << err.what());
    output->Initialize();
    this->FailedMTime = mtime;
    this->FailedInput = input;
    return 1;
  }
  return 1;
}

void vtkVEMTissueProperties::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Frequency: " << this->Frequency << "\n";
  os << indent << "TissueTableFile: " << this->TissueTableFile << "\n";
  os << indent << "UseBuiltInTable: " << this->UseBuiltInTable << "\n";
}
