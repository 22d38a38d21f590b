// Drives the VoxelEM VTK algorithms directly (no ParaView client): head phantom extents, tissue
// tables, and the FDTD filter on the CPU engine - time steps, cached snapshots, spilling, abort,
// error messages - and the CUDA engine against the CPU engine when a GPU is usable (skipped with
// the reason otherwise). Run on the GPU machine as: test_plugin_filters --gtest_filter='*Cuda*'
#include <gtest/gtest.h>

#include "vtkCallbackCommand.h"
#include "vtkCellData.h"
#include "vtkCommand.h"
#include "vtkDataArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkTrivialProducer.h"
#include "vtkUnsignedCharArray.h"
#include "vtkVEMFDTDSolver.h"
#include "vtkVEMHeadPhantom.h"
#include "vtkVEMTissueProperties.h"

#include "vem/fdtd_engine.h"
#include "vem/head_phantom.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace
{

// Collects the error and warning messages an algorithm emits (vtkErrorMacro / vtkWarningMacro
// invoke these events when observed, instead of printing).
struct Messages
{
  std::string errors, warnings;
  vtkNew<vtkCallbackCommand> cb;
  explicit Messages(vtkObject* o)
  {
    cb->SetClientData(this);
    cb->SetCallback([](vtkObject*, unsigned long ev, void* client, void* call) {
      auto* self = static_cast<Messages*>(client);
      const char* text = static_cast<const char*>(call);
      (ev == vtkCommand::ErrorEvent ? self->errors : self->warnings) += text ? text : "";
    });
    o->AddObserver(vtkCommand::ErrorEvent, cb);
    o->AddObserver(vtkCommand::WarningEvent, cb);
  }
};

// A small phantom (40 x 40 x 20 voxels of 6.6 x 6.6 x 8.4 mm) with tissue properties.
struct SmallPipeline
{
  vtkNew<vtkVEMHeadPhantom> phantom;
  vtkNew<vtkVEMTissueProperties> tissues;
  vtkNew<vtkVEMFDTDSolver> fdtd;
  SmallPipeline()
  {
    phantom->SetDimensions(40, 40, 20);
    phantom->SetSpacing(0.0066, 0.0066, 0.0084);
    phantom->SetOrigin(-0.132, -0.132, -0.095);
    tissues->SetInputConnection(phantom->GetOutputPort());
    tissues->SetFrequency(900e6);
    fdtd->SetInputConnection(tissues->GetOutputPort());
    fdtd->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
    fdtd->SetNumberOfSteps(120);
    fdtd->SetSnapshotInterval(40);
    fdtd->SetAirPadding(4);
    fdtd->SetCPMLThickness(6);
    fdtd->SetSourcePosition(0.1, 0.0, -0.01);
    fdtd->SetSourceWaveform(vtkVEMFDTDSolver::WAVEFORM_SINUSOID);
    fdtd->SetProgressInterval(5);
  }
  vtkImageData* Run(double time = -1)
  {
    if (time >= 0)
    {
      fdtd->UpdateTimeStep(time);
    }
    else
    {
      fdtd->Update();
    }
    return vtkImageData::SafeDownCast(fdtd->GetOutputDataObject(0));
  }
  std::vector<double> TimeSteps()
  {
    fdtd->UpdateInformation();
    vtkInformation* info = fdtd->GetOutputInformation(0);
    const int n = info->Length(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
    std::vector<double> t(static_cast<std::size_t>(n));
    if (n > 0)
    {
      info->Get(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), t.data());
    }
    return t;
  }
};

double SumSquares(vtkDataArray* a)
{
  double s = 0;
  for (vtkIdType t = 0; t < a->GetNumberOfTuples(); ++t)
  {
    for (int c = 0; c < a->GetNumberOfComponents(); ++c)
    {
      const double v = a->GetComponent(t, c);
      s += v * v;
    }
  }
  return s;
}

double MaxAbsDiff(vtkDataArray* a, vtkDataArray* b)
{
  double m = 0;
  for (vtkIdType t = 0; t < a->GetNumberOfTuples(); ++t)
  {
    for (int c = 0; c < a->GetNumberOfComponents(); ++c)
    {
      m = std::max(m, std::fabs(a->GetComponent(t, c) - b->GetComponent(t, c)));
    }
  }
  return m;
}

std::string TempFile(const std::string& name, const std::string& text)
{
  const std::filesystem::path p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

} // namespace

//------------------------------------------------------------------------------
TEST(PluginHeadPhantom, LabelsNamesAndSubExtents)
{
  vtkNew<vtkVEMHeadPhantom> ph;
  ph->Update();
  vtkImageData* img = ph->GetOutput();
  int ext[6];
  img->GetExtent(ext);
  EXPECT_EQ(ext[1], 128);
  EXPECT_EQ(ext[3], 128);
  EXPECT_EQ(ext[5], 64);
  vtkDataArray* tissue = img->GetCellData()->GetArray("tissue");
  ASSERT_NE(tissue, nullptr);
  EXPECT_EQ(tissue->GetDataType(), VTK_UNSIGNED_CHAR);
  EXPECT_EQ(tissue->GetNumberOfTuples(), 128 * 128 * 64);
  std::vector<int> count(256, 0);
  for (vtkIdType c = 0; c < tissue->GetNumberOfTuples(); ++c)
  {
    ++count[static_cast<int>(tissue->GetComponent(c, 0))];
  }
  for (int l = 0; l < vem::kHeadTissueCount; ++l)
  {
    EXPECT_GT(count[l], 0) << vem::head_tissue_name(l);
  }
  auto* names = vtkStringArray::SafeDownCast(img->GetFieldData()->GetAbstractArray("tissue_names"));
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(names->GetValue(vem::kGreyMatter), "grey_matter");
  EXPECT_EQ(names->GetValue(vem::kLens), "lens");

  // A sub-extent (as a streaming or parallel consumer asks for) matches the whole image.
  vtkNew<vtkVEMHeadPhantom> part;
  part->SetLabelType(VTK_UNSIGNED_SHORT);
  part->UpdateInformation();
  int sub[6] = { 30, 70, 60, 61, 20, 45 };
  part->UpdateExtent(sub);
  vtkImageData* p = part->GetOutput();
  int pe[6];
  p->GetExtent(pe);
  for (int q = 0; q < 6; ++q)
  {
    EXPECT_EQ(pe[q], sub[q]);
  }
  vtkDataArray* pt = p->GetCellData()->GetArray("tissue");
  ASSERT_NE(pt, nullptr);
  EXPECT_EQ(pt->GetDataType(), VTK_UNSIGNED_SHORT);
  ASSERT_EQ(pt->GetNumberOfTuples(), 40 * 1 * 25);
  vtkIdType q = 0;
  for (int k = sub[4]; k < sub[5]; ++k)
    for (int j = sub[2]; j < sub[3]; ++j)
      for (int i = sub[0]; i < sub[1]; ++i, ++q)
      {
        ASSERT_EQ(pt->GetComponent(q, 0), tissue->GetComponent(i + 128 * (j + 128 * k), 0));
      }
}

TEST(PluginTissueProperties, BuiltInValuesAndCsvOverride)
{
  vtkNew<vtkVEMHeadPhantom> ph;
  ph->SetDimensions(32, 32, 16);
  ph->SetSpacing(0.0088, 0.0088, 0.0112);
  ph->SetOrigin(-0.1408, -0.1408, -0.095);
  vtkNew<vtkVEMTissueProperties> tp;
  tp->SetInputConnection(ph->GetOutputPort());
  tp->Update();
  vtkImageData* out = tp->GetOutput();
  vtkDataArray* labels = out->GetCellData()->GetArray("tissue");
  vtkDataArray* eps = out->GetCellData()->GetArray("permittivity");
  vtkDataArray* sig = out->GetCellData()->GetArray("conductivity");
  vtkDataArray* rho = out->GetCellData()->GetArray("density");
  ASSERT_TRUE(labels && eps && sig && rho);
  bool sawMuscle = false;
  for (vtkIdType c = 0; c < labels->GetNumberOfTuples(); ++c)
  {
    if (labels->GetComponent(c, 0) == vem::kMuscle)
    {
      sawMuscle = true;
      EXPECT_NEAR(eps->GetComponent(c, 0), 55.03, 0.1);
      EXPECT_NEAR(sig->GetComponent(c, 0), 0.943, 0.005);
      EXPECT_DOUBLE_EQ(rho->GetComponent(c, 0), 1090.0);
    }
    if (labels->GetComponent(c, 0) == vem::kAir)
    {
      EXPECT_DOUBLE_EQ(eps->GetComponent(c, 0), 1.0);
    }
  }
  EXPECT_TRUE(sawMuscle);

  const std::string csv = TempFile("vem_test_tissues.csv",
    "label,name,model,eps_r,sigma,density\n3, muscle_fixed, fixed, 50.0, 0.5, 1000\n");
  tp->SetTissueTableFile(csv.c_str());
  tp->Update();
  eps = tp->GetOutput()->GetCellData()->GetArray("permittivity");
  labels = tp->GetOutput()->GetCellData()->GetArray("tissue");
  for (vtkIdType c = 0; c < labels->GetNumberOfTuples(); ++c)
  {
    if (labels->GetComponent(c, 0) == vem::kMuscle)
    {
      ASSERT_DOUBLE_EQ(eps->GetComponent(c, 0), 50.0);
    }
  }

  // Only a CSV that lacks the phantom's labels: the error names them.
  Messages msg(tp);
  tp->SetUseBuiltInTable(false);
  tp->Update();
  EXPECT_NE(msg.errors.find("have no tissue properties"), std::string::npos) << msg.errors;
  EXPECT_NE(msg.errors.find("3 muscle_fixed"), std::string::npos) << msg.errors;

  // A malformed row is reported with its line and label.
  const std::string bad = TempFile("vem_test_bad.csv", "# header\n5, marrow, fixed, 12, -1, 1000\n");
  msg.errors.clear();
  tp->SetUseBuiltInTable(true);
  tp->SetTissueTableFile(bad.c_str());
  tp->Update();
  EXPECT_NE(msg.errors.find("line 2 (label 5, 'marrow')"), std::string::npos) << msg.errors;
  EXPECT_EQ(tp->GetOutput()->GetNumberOfCells(), 0);
}

//------------------------------------------------------------------------------
TEST(PluginFdtd, CpuRunProducesTimeSeriesAndProbes)
{
  SmallPipeline p;
  p.fdtd->SetNumberOfProbePositions(1);
  p.fdtd->SetProbePosition(0, 0.05, 0.0, 0.0);
  const std::vector<double> times = p.TimeSteps();
  ASSERT_EQ(times.size(), 3u);
  const double dt = p.fdtd->GetTimeStep();
  EXPECT_GT(dt, 0.0);
  EXPECT_NEAR(times[0], 40 * dt, 1e-6 * dt);
  EXPECT_NEAR(times[2], 120 * dt, 1e-6 * dt);

  vtkImageData* out = p.Run(times[2]);
  int ext[6];
  out->GetExtent(ext);
  EXPECT_EQ(ext[1], 40 + 2 * 4);
  EXPECT_EQ(ext[3], 40 + 2 * 4);
  EXPECT_EQ(ext[5], 20 + 2 * 4);
  EXPECT_NEAR(out->GetOrigin()[0], -0.132 - 4 * 0.0066, 1e-12);
  vtkDataArray* E = out->GetCellData()->GetArray("E");
  vtkDataArray* Emag = out->GetCellData()->GetArray("E_magnitude");
  ASSERT_TRUE(E && Emag);
  EXPECT_EQ(E->GetNumberOfComponents(), 3);
  EXPECT_EQ(E->GetNumberOfTuples(), out->GetNumberOfCells());
  ASSERT_TRUE(out->GetCellData()->GetArray("permittivity"));
  const double energy = SumSquares(E);
  EXPECT_TRUE(std::isfinite(energy));
  EXPECT_GT(energy, 0.0);
  EXPECT_NEAR(SumSquares(Emag), energy, 1e-3 * energy);
  EXPECT_TRUE(std::isfinite(p.fdtd->GetLastFieldEnergy()));
  EXPECT_GT(p.fdtd->GetLastFieldEnergy(), 0.0);
  EXPECT_DOUBLE_EQ(out->GetInformation()->Get(vtkDataObject::DATA_TIME_STEP()), times[2]);
  // The strongest field sits in the cells around the source (world position (0.1, 0, -0.01)).
  vtkIdType peakCell = 0;
  for (vtkIdType c = 1; c < Emag->GetNumberOfTuples(); ++c)
  {
    if (Emag->GetComponent(c, 0) > Emag->GetComponent(peakCell, 0))
    {
      peakCell = c;
    }
  }
  const int nx = ext[1], ny = ext[3];
  const int pi = static_cast<int>(peakCell % nx), pj = static_cast<int>((peakCell / nx) % ny),
            pk = static_cast<int>(peakCell / (static_cast<vtkIdType>(nx) * ny));
  const double* o = out->GetOrigin();
  EXPECT_NEAR(o[0] + (pi + 0.5) * 0.0066, 0.1, 0.0066);
  EXPECT_NEAR(o[1] + (pj + 0.5) * 0.0066, 0.0, 0.0066);
  EXPECT_NEAR(o[2] + (pk + 0.5) * 0.0084, -0.01, 0.0084);
  EXPECT_STREQ(p.fdtd->GetLastBackend(), "cpu");

  vtkTable* probes = p.fdtd->GetProbeOutput();
  ASSERT_NE(probes, nullptr);
  EXPECT_EQ(probes->GetNumberOfRows(), 120);
  ASSERT_NE(probes->GetColumnByName("source_Ez"), nullptr);
  ASSERT_NE(probes->GetColumnByName("probe0_Ez"), nullptr);
  ASSERT_NE(probes->GetColumnByName("time"), nullptr);
  double peak = 0;
  vtkDataArray* ez = vtkDataArray::SafeDownCast(probes->GetColumnByName("source_Ez"));
  for (vtkIdType r = 0; r < ez->GetNumberOfTuples(); ++r)
  {
    peak = std::max(peak, std::fabs(ez->GetComponent(r, 0)));
  }
  EXPECT_GT(peak, 0.0);
}

TEST(PluginFdtd, ScrubbingReadsCachedSnapshots)
{
  SmallPipeline p;
  const std::vector<double> times = p.TimeSteps();
  std::vector<double> norms;
  for (double t : times)
  {
    vtkImageData* out = p.Run(t);
    norms.push_back(SumSquares(out->GetCellData()->GetArray("E")));
  }
  for (auto it = times.rbegin(); it != times.rend(); ++it)
  {
    p.Run(*it);
  }
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 1);
  EXPECT_NE(norms[0], norms[2]);
  // A property change solves again.
  p.fdtd->SetSourceAmplitude(2.0);
  vtkImageData* out = p.Run(times[2]);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 2);
  EXPECT_NEAR(SumSquares(out->GetCellData()->GetArray("E")), 4.0 * norms[2], 1e-3 * 4.0 * norms[2]);
  // So does a change upstream.
  p.tissues->SetFrequency(1.8e9);
  p.Run(times[2]);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 3);
}

TEST(PluginFdtd, SpillToDiskGivesTheSameSnapshots)
{
  SmallPipeline mem, disk;
  disk.fdtd->SetMemoryBudgetMB(1.0);  // each snapshot is ~1.5 MB: all spill
  disk.fdtd->SetSpillToDisk(true);
  const std::vector<double> times = mem.TimeSteps();
  for (double t : times)
  {
    vtkImageData* a = mem.Run(t);
    vtkImageData* b = disk.Run(t);
    EXPECT_EQ(MaxAbsDiff(a->GetCellData()->GetArray("E"), b->GetCellData()->GetArray("E")), 0.0);
  }
  EXPECT_EQ(disk.fdtd->GetNumberOfSolves(), 1);

  SmallPipeline refused;
  Messages msg(refused.fdtd);
  refused.fdtd->SetMemoryBudgetMB(1.0);
  refused.fdtd->SetSpillToDisk(false);
  vtkImageData* out = refused.Run();
  EXPECT_NE(msg.errors.find("memory budget"), std::string::npos) << msg.errors;
  EXPECT_EQ(out->GetNumberOfCells(), 0);
}

TEST(PluginFdtd, AbortStopsPromptlyAndLeavesNoOutput)
{
  SmallPipeline p;
  p.fdtd->SetNumberOfSteps(4000);
  p.fdtd->SetSnapshotInterval(1000);
  Messages msg(p.fdtd);
  // Ask for an abort at 5 % progress; count the progress reports that follow it.
  struct State
  {
    bool asked = false;
    int after = 0;
    double last = 0;
  } st;
  vtkNew<vtkCallbackCommand> abortAt;
  abortAt->SetClientData(&st);
  abortAt->SetCallback([](vtkObject* caller, unsigned long, void* client, void* call) {
    auto* s = static_cast<State*>(client);
    const double progress = *static_cast<double*>(call);
    if (s->asked && progress < 1.0)
    {
      ++s->after;
      s->last = progress;
    }
    if (!s->asked && progress > 0.05)
    {
      s->asked = true;
      static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
    }
  });
  const unsigned long tag = p.fdtd->AddObserver(vtkCommand::ProgressEvent, abortAt);
  vtkImageData* out = p.Run();
  EXPECT_TRUE(st.asked);
  EXPECT_LE(st.after, 1);      // stopped at the next progress interval
  EXPECT_LT(st.last, 0.1);
  EXPECT_EQ(out->GetNumberOfCells(), 0);
  EXPECT_EQ(p.fdtd->GetProbeOutput()->GetNumberOfRows(), 0);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 0);
  EXPECT_NE(msg.warnings.find("aborted"), std::string::npos) << msg.warnings;

  // The next update runs again to completion.
  p.fdtd->RemoveObserver(tag);
  p.fdtd->SetAbortExecute(0);
  p.fdtd->SetNumberOfSteps(200);
  out = p.Run();
  EXPECT_GT(out->GetNumberOfCells(), 0);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 1);
}

TEST(PluginFdtd, LabelModeMatchesStaircasePropertyArrays)
{
  SmallPipeline arrays, labels;
  arrays.fdtd->SetAverageAtEdges(false);
  labels.fdtd->SetMaterialMode(vtkVEMFDTDSolver::LABELS_AND_TISSUE_TABLE);
  labels.fdtd->SetInputConnection(labels.phantom->GetOutputPort());
  vtkImageData* a = arrays.Run();
  vtkImageData* b = labels.Run();
  ASSERT_TRUE(b->GetCellData()->GetArray("tissue"));
  const double scale = std::sqrt(SumSquares(a->GetCellData()->GetArray("E")) / a->GetNumberOfCells());
  EXPECT_LT(MaxAbsDiff(a->GetCellData()->GetArray("E"), b->GetCellData()->GetArray("E")), 1e-3 * scale + 1e-6);
}

TEST(PluginFdtd, PointArraysAreVoxelsToo)
{
  // A uniform medium given as point data: one voxel per point.
  vtkNew<vtkImageData> img;
  img->SetDimensions(20, 16, 12);
  img->SetSpacing(0.005, 0.005, 0.005);
  vtkNew<vtkFloatArray> eps, sig;
  eps->SetName("permittivity");
  sig->SetName("conductivity");
  eps->SetNumberOfTuples(img->GetNumberOfPoints());
  sig->SetNumberOfTuples(img->GetNumberOfPoints());
  eps->Fill(4.0);
  sig->Fill(0.01);
  img->GetPointData()->AddArray(eps);
  img->GetPointData()->AddArray(sig);
  vtkNew<vtkVEMFDTDSolver> f;
  f->SetInputData(img);
  f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "permittivity");
  f->SetInputArrayToProcess(1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "conductivity");
  f->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
  f->SetNumberOfSteps(40);
  f->SetSnapshotInterval(20);
  f->SetAirPadding(2);
  f->SetCPMLThickness(4);
  f->SetSourcePosition(0.05, 0.04, 0.03);
  f->Update();
  vtkImageData* out = vtkImageData::SafeDownCast(f->GetOutputDataObject(0));
  int ext[6];
  out->GetExtent(ext);
  EXPECT_EQ(ext[1], 20 + 4);  // 20 voxels (points) + 2 x 2 padding
  EXPECT_EQ(ext[5], 12 + 4);
  EXPECT_NEAR(out->GetOrigin()[0], -0.0025 - 2 * 0.005, 1e-12);
  EXPECT_GT(SumSquares(out->GetCellData()->GetArray("E")), 0.0);
}

TEST(PluginFdtd, ErrorsNameTheProblem)
{
  // Missing permittivity array: the message lists the arrays present.
  {
    SmallPipeline p;
    p.fdtd->SetInputConnection(p.phantom->GetOutputPort());  // labels only
    Messages msg(p.fdtd);
    vtkImageData* out = p.Run();
    EXPECT_NE(msg.errors.find("permittivity array 'permittivity' was not found"), std::string::npos)
      << msg.errors;
    EXPECT_NE(msg.errors.find("cell arrays: 'tissue' (unsigned char, 1 component)"), std::string::npos)
      << msg.errors;
    EXPECT_EQ(out->GetNumberOfCells(), 0);
  }
  // Labels of the wrong type.
  {
    vtkNew<vtkImageData> img;
    img->SetDimensions(9, 9, 9);
    img->SetSpacing(0.01, 0.01, 0.01);
    vtkNew<vtkFloatArray> lab;
    lab->SetName("tissue");
    lab->SetNumberOfTuples(img->GetNumberOfCells());
    lab->Fill(3.0f);
    img->GetCellData()->AddArray(lab);
    vtkNew<vtkVEMFDTDSolver> f;
    f->SetInputData(img);
    f->SetMaterialMode(vtkVEMFDTDSolver::LABELS_AND_TISSUE_TABLE);
    f->SetSourcePosition(0.04, 0.04, 0.04);
    Messages msg(f);
    f->Update();
    EXPECT_NE(msg.errors.find("is of type float"), std::string::npos) << msg.errors;
  }
  // Unknown labels, non-finite values, source outside, CUDA without a GPU.
  {
    vtkNew<vtkImageData> img;
    img->SetDimensions(9, 9, 9);
    img->SetSpacing(0.01, 0.01, 0.01);
    vtkNew<vtkUnsignedCharArray> lab;
    lab->SetName("tissue");
    lab->SetNumberOfTuples(img->GetNumberOfCells());
    lab->Fill(3);
    lab->SetValue(100, 77);
    img->GetCellData()->AddArray(lab);
    vtkNew<vtkFloatArray> eps;
    eps->SetName("permittivity");
    eps->SetNumberOfTuples(img->GetNumberOfCells());
    eps->Fill(2.0f);
    eps->SetValue(5, std::nanf(""));
    img->GetCellData()->AddArray(eps);
    vtkNew<vtkFloatArray> sig;
    sig->SetName("conductivity");
    sig->SetNumberOfTuples(img->GetNumberOfCells());
    sig->Fill(0.0f);
    img->GetCellData()->AddArray(sig);

    vtkNew<vtkVEMFDTDSolver> f;
    f->SetInputData(img);
    f->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
    f->SetMaterialMode(vtkVEMFDTDSolver::LABELS_AND_TISSUE_TABLE);
    f->SetSourcePosition(0.04, 0.04, 0.04);
    f->SetNumberOfSteps(10);
    Messages msg(f);
    f->Update();
    EXPECT_NE(msg.errors.find("77 (1 voxels)"), std::string::npos) << msg.errors;

    msg.errors.clear();
    f->SetMaterialMode(vtkVEMFDTDSolver::PROPERTY_ARRAYS);
    f->Update();
    EXPECT_NE(msg.errors.find("value nan at voxel (5, 0, 0)"), std::string::npos) << msg.errors;

    eps->SetValue(5, 2.0f);
    eps->Modified();
    msg.errors.clear();
    f->SetSourcePosition(1.0, 0.0, 0.0);
    f->Update();
    EXPECT_NE(msg.errors.find("outside the computational domain"), std::string::npos) << msg.errors;

    f->SetSourcePosition(0.04, 0.04, 0.04);
    msg.errors.clear();
    f->Update();
    EXPECT_EQ(msg.errors, "");
    EXPECT_GT(vtkImageData::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfCells(), 0);

    std::string why;
    if (!vem::cuda_available(&why))
    {
      f->SetBackend(vtkVEMFDTDSolver::BACKEND_CUDA);
      f->Update();
      EXPECT_NE(msg.errors.find("CUDA"), std::string::npos) << msg.errors;
      EXPECT_EQ(vtkImageData::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfCells(), 0);

      msg.errors.clear();
      msg.warnings.clear();
      f->SetBackend(vtkVEMFDTDSolver::BACKEND_AUTO);
      f->Update();
      EXPECT_EQ(msg.errors, "");
      EXPECT_NE(msg.warnings.find("running on the CPU engine"), std::string::npos) << msg.warnings;
      EXPECT_STREQ(f->GetLastBackend(), "cpu");
    }
  }
}

//------------------------------------------------------------------------------
// The CUDA engine through the VTK filter, against the CPU engine.
TEST(PluginFdtdCuda, MatchesCpuOnTheHeadPhantom)
{
  std::string why;
  if (!vem::cuda_available(&why))
  {
    GTEST_SKIP() << "CUDA backend not tested here: " << why;
  }
  SmallPipeline cpu, gpu;
  gpu.fdtd->SetBackend(vtkVEMFDTDSolver::BACKEND_CUDA);
  const std::vector<double> times = cpu.TimeSteps();
  for (double t : times)
  {
    vtkImageData* a = cpu.Run(t);
    vtkImageData* b = gpu.Run(t);
    vtkDataArray* ea = a->GetCellData()->GetArray("E");
    vtkDataArray* eb = b->GetCellData()->GetArray("E");
    ASSERT_TRUE(ea && eb);
    const double rms = std::sqrt(SumSquares(ea) / ea->GetNumberOfTuples());
    const double peak = ea->GetRange(-1)[1];
    EXPECT_LT(MaxAbsDiff(ea, eb), 1e-4 * peak + 1e-3 * rms) << "t = " << t;
  }
  EXPECT_EQ(std::string(gpu.fdtd->GetLastBackend()).rfind("cuda", 0), 0u) << gpu.fdtd->GetLastBackend();
  EXPECT_EQ(gpu.fdtd->GetNumberOfSolves(), 1);
}
