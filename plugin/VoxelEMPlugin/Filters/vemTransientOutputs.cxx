#include "vemTransientOutputs.h"

#include "vemFDTDRun.h"
#include "vemSnapshotStore.h"
#include "vemVoxelModel.h"

#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkStringArray.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vem_vtk
{

std::vector<std::vector<float>> SnapshotArrays(const FDTDRun& run, bool keepE, bool keepH, bool keepEMagnitude)
{
  std::vector<std::vector<float>> data;
  std::vector<float> e;
  if (keepE || keepEMagnitude)
  {
    e = run.CellCentred(true);
  }
  if (keepE)
  {
    data.push_back(e);
  }
  if (keepH)
  {
    data.push_back(run.CellCentred(false));
  }
  if (keepEMagnitude)
  {
    std::vector<float> mag(e.size() / 3);
    for (std::size_t o = 0; o < mag.size(); ++o)
    {
      mag[o] = std::sqrt(e[3 * o] * e[3 * o] + e[3 * o + 1] * e[3 * o + 1] + e[3 * o + 2] * e[3 * o + 2]);
    }
    data.push_back(std::move(mag));
  }
  return data;
}

void FillSnapshotImage(vtkImageData* output, const SnapshotStore& store, double t,
  const RunGeometry& geometry, const std::vector<vtkSmartPointer<vtkDataArray>>& materials,
  const std::string& backend)
{
  const vem::VoxelDomain& d = geometry.domain;
  output->Initialize();
  SetOutputGeometry(output, geometry);
  if (geometry.IsPiece())
  {
    int ext[6];
    geometry.PieceExtent(ext);
    output->SetExtent(ext);
  }
  int snap = store.Size() - 1;
  if (std::isfinite(t))
  {
    double best = std::numeric_limits<double>::infinity();
    for (int s = 0; s < store.Size(); ++s)
    {
      if (std::fabs(store.Time(s) - t) < best)
      {
        best = std::fabs(store.Time(s) - t);
        snap = s;
      }
    }
  }
  if (snap < 0)
  {
    return;
  }
  vtkCellData* cd = output->GetCellData();
  const auto& fields = store.Fields();
  for (int f = 0; f < static_cast<int>(fields.size()); ++f)
  {
    vtkNew<vtkFloatArray> a;
    a->SetName(fields[f].name.c_str());
    a->SetNumberOfComponents(fields[f].components);
    a->SetNumberOfTuples(geometry.OutputCellCount());
    store.Read(snap, f, a->GetPointer(0));
    cd->AddArray(a);
  }
  if (cd->GetArray("E_magnitude"))
  {
    cd->SetActiveScalars("E_magnitude");
  }
  if (cd->GetArray("E"))
  {
    cd->SetActiveVectors("E");
  }
  for (const auto& m : materials)
  {
    cd->AddArray(m);
  }
  const double time = store.Time(snap);
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), time);
  vtkFieldData* fd = output->GetFieldData();
  const std::pair<const char*, double> scalars[3] = { { "time_E", time },
    { "time_H", time - 0.5 * d.dt }, { "time_step_dt", d.dt } };
  for (const auto& s : scalars)
  {
    vtkNew<vtkDoubleArray> a;
    a->SetName(s.first);
    a->InsertNextValue(s.second);
    fd->AddArray(a);
  }
  vtkNew<vtkIntArray> step;
  step->SetName("step");
  step->InsertNextValue(store.Step(snap));
  fd->AddArray(step);
  vtkNew<vtkStringArray> name;
  name->SetName("backend");
  name->InsertNextValue(backend);
  fd->AddArray(name);
}

vtkSmartPointer<vtkTable> ProbeTable(
  const vem::ProbeRecord& rec, int steps, double dt, const vem::Waveform& waveform)
{
  vtkSmartPointer<vtkTable> t = vtkSmartPointer<vtkTable>::New();
  vtkNew<vtkIntArray> stepCol;
  stepCol->SetName("step");
  vtkNew<vtkDoubleArray> timeCol, waveCol;
  timeCol->SetName("time");
  waveCol->SetName("source_waveform");
  for (int s = 1; s <= steps; ++s)
  {
    stepCol->InsertNextValue(s);
    timeCol->InsertNextValue(s * dt);
    waveCol->InsertNextValue(waveform.value(s * dt));
  }
  t->AddColumn(stepCol);
  t->AddColumn(timeCol);
  for (std::size_t q = 0; q < rec.names.size(); ++q)
  {
    vtkNew<vtkFloatArray> col;
    col->SetName(rec.names[q].c_str());
    col->SetNumberOfTuples(static_cast<vtkIdType>(rec.values[q].size()));
    std::copy(rec.values[q].begin(), rec.values[q].end(), col->GetPointer(0));
    t->AddColumn(col);
  }
  t->AddColumn(waveCol);
  return t;
}

} // namespace vem_vtk
