// Drives the VoxelEM VTK algorithms directly (no ParaView client): head phantom extents, tissue
// tables, the transient FDTD filter (vtkVEMFDTDSolver: time steps, cached snapshots, spilling,
// abort, error messages) and the steady-state one (vtkVEMFDTDSteadyState: phasors, SAR, summary,
// far field) on the CPU engine, and the CUDA engine against the CPU engine when a GPU is usable
// (skipped with the reason otherwise). Run on the GPU machine as:
// test_plugin_filters --gtest_filter='*Cuda*'
#include <gtest/gtest.h>

#include "filter_messages.h"
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
#include "vtkVEMFDTDSteadyState.h"
#include "vtkVEMHeadPhantom.h"
#include "vtkVEMTissueProperties.h"

#include "vem/fdtd/fdtd_engine.h"
#include "vem/models/head_phantom.h"

#ifdef VEM_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace
{

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

//------------------------------------------------------------------------------
// Soak on the GPU (issue 13): 100 executions of FDTD Solver on the CUDA backend in one process,
// host RSS and free device memory flat (within max(1 %, 2 MiB) and 1 % after the first run), an
// abort in the middle of run 50 leaves empty outputs and the run after it equals the first.
namespace
{
double RssMiB()
{
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
  {
    if (line.rfind("VmRSS:", 0) == 0)
    {
      return std::stod(line.substr(6)) / 1024.0;
    }
  }
  return -1;
}
} // namespace

TEST(PluginFdtdCuda, SoakHundredRunsMemoryFlatAndAbortRecovers)
{
  std::string why;
  if (!vem::cuda_available(&why))
  {
    GTEST_SKIP() << "CUDA backend not tested here: " << why;
  }
#ifdef VEM_WITH_CUDA
  SmallPipeline p;
  p.fdtd->SetBackend(vtkVEMFDTDSolver::BACKEND_CUDA);
  p.fdtd->SetNumberOfSteps(60);
  p.fdtd->SetSnapshotInterval(60);
  auto freeBytes = [] {
    std::size_t f = 0, t = 0;
    EXPECT_EQ(cudaMemGetInfo(&f, &t), cudaSuccess);
    return double(f);
  };
  vtkImageData* out = p.Run();
  ASSERT_GT(out->GetNumberOfCells(), 0);
  const double reference = SumSquares(out->GetCellData()->GetArray("E"));
  ASSERT_GT(reference, 0);
  const double rss0 = RssMiB(), free0 = freeBytes();
  double rssMax = rss0, freeMin = free0;

  struct State
  {
    bool armed = false, asked = false;
  } st;
  vtkNew<vtkCallbackCommand> abortAt;
  abortAt->SetClientData(&st);
  abortAt->SetCallback([](vtkObject* caller, unsigned long, void* client, void* call) {
    auto* s = static_cast<State*>(client);
    if (s->armed && !s->asked && *static_cast<double*>(call) > 0.3)
    {
      s->asked = true;
      static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
    }
  });
  p.fdtd->AddObserver(vtkCommand::ProgressEvent, abortAt);
  int aborted = 0;
  for (int run = 2; run <= 100; ++run)
  {
    st.armed = (run == 50);
    p.fdtd->SetAbortExecute(0);
    p.fdtd->Modified();
    out = p.Run();
    if (run == 50)
    {
      EXPECT_TRUE(st.asked);
      EXPECT_EQ(out->GetNumberOfCells(), 0) << "an aborted run left output";
      EXPECT_EQ(p.fdtd->GetProbeOutput()->GetNumberOfRows(), 0);
      ++aborted;
      continue;
    }
    ASSERT_GT(out->GetNumberOfCells(), 0) << "run " << run;
    const double ss = SumSquares(out->GetCellData()->GetArray("E"));
    EXPECT_EQ(ss, reference) << "run " << run << " differs from the first";
    rssMax = std::max(rssMax, RssMiB());
    freeMin = std::min(freeMin, freeBytes());
  }
  EXPECT_EQ(aborted, 1);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 99) << "every run but the aborted one solved again";
  std::printf("  soak: RSS %.1f MiB after run 1, at most %.1f MiB over runs 2-100; device free %.0f MiB "
              "after run 1, at least %.0f MiB later\n",
    rss0, rssMax, free0 / 1048576.0, freeMin / 1048576.0);
  EXPECT_LE(rssMax - rss0, std::max(0.01 * rss0, 2.0)) << "host memory grew";
  EXPECT_GE(freeMin, 0.99 * free0) << "device memory was not given back";
#endif
}

//------------------------------------------------------------------------------
// Steady-state analysis (vtkVEMFDTDSteadyState: vem::run_fdtd_harmonic through the filter): ports
// 0 (phasors, SAR), 1 (summary), 2 (far field).
namespace
{

// n^3 cubic voxels of h metres in air with a centred block of b^3 voxels of tissue (eps, sigma,
// density 1000 kg/m^3); "density" is 0 in air.
vtkSmartPointer<vtkImageData> LossyBlock(int n, int b, double h, float eps, float sigma)
{
  auto img = vtkSmartPointer<vtkImageData>::New();
  img->SetDimensions(n + 1, n + 1, n + 1);
  img->SetSpacing(h, h, h);
  img->SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h);
  vtkNew<vtkFloatArray> e, s, rho;
  e->SetName("permittivity");
  s->SetName("conductivity");
  rho->SetName("density");
  const int lo = (n - b) / 2, hi = lo + b;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
      {
        const bool in = i >= lo && i < hi && j >= lo && j < hi && k >= lo && k < hi;
        e->InsertNextValue(in ? eps : 1.0f);
        s->InsertNextValue(in ? sigma : 0.0f);
        rho->InsertNextValue(in ? 1000.0f : 0.0f);
      }
  img->GetCellData()->AddArray(e);
  img->GetCellData()->AddArray(s);
  img->GetCellData()->AddArray(rho);
  return img;
}

// nx x ny x nz voxels of vacuum (permittivity 1, conductivity 0), centred on the origin.
vtkSmartPointer<vtkImageData> Vacuum(int nx, int ny, int nz, double h)
{
  auto img = vtkSmartPointer<vtkImageData>::New();
  img->SetDimensions(nx + 1, ny + 1, nz + 1);
  img->SetSpacing(h, h, h);
  img->SetOrigin(-0.5 * nx * h, -0.5 * ny * h, -0.5 * nz * h);
  vtkNew<vtkFloatArray> e, s;
  e->SetName("permittivity");
  e->SetNumberOfTuples(img->GetNumberOfCells());
  e->Fill(1.0f);
  s->SetName("conductivity");
  s->SetNumberOfTuples(img->GetNumberOfCells());
  s->Fill(0.0f);
  img->GetCellData()->AddArray(e);
  img->GetCellData()->AddArray(s);
  return img;
}

struct SteadyPipeline
{
  vtkNew<vtkTrivialProducer> src;
  vtkNew<vtkVEMFDTDSteadyState> fdtd;
  explicit SteadyPipeline(vtkImageData* img)
  {
    src->SetOutput(img);
    fdtd->SetInputConnection(src->GetOutputPort());
    fdtd->SetBackend(vtkVEMFDTDSteadyState::BACKEND_CPU);
    fdtd->SetProgressInterval(50);
  }
  vtkImageData* Run()
  {
    fdtd->Update();
    return vtkImageData::SafeDownCast(fdtd->GetOutputDataObject(0));
  }
};

double FieldValue(vtkImageData* img, const char* name, int tuple = 0, int comp = 0)
{
  vtkDataArray* a = img->GetFieldData()->GetArray(name);
  return a && a->GetNumberOfTuples() > tuple ? a->GetComponent(tuple, comp)
                                             : std::numeric_limits<double>::infinity();
}

double TableValue(vtkTable* t, const char* name, int row = 0)
{
  vtkDataArray* a = vtkDataArray::SafeDownCast(t->GetColumnByName(name));
  return a && a->GetNumberOfTuples() > row ? a->GetComponent(row, 0)
                                           : std::numeric_limits<double>::infinity();
}

// Same value, or both NaN.
bool Same(double a, double b)
{
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

} // namespace

TEST(PluginFdtdSteady, PlaneWaveOnLossyBlockGivesSarTablesAndRcs)
{
  const int n = 12, b = 6, pad = 8, pml = 6;
  const double h = 0.005;
  vtkSmartPointer<vtkImageData> img = LossyBlock(n, b, h, 40.0f, 0.8f);
  SteadyPipeline p(img);
  p.fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_PLANE_WAVE);
  p.fdtd->SetDFTFrequency(0, 1e9);
  p.fdtd->SetIncidentAmplitude(2.0);
  p.fdtd->SetAirPadding(pad);
  p.fdtd->SetCPMLThickness(pml);
  p.fdtd->SetFarFieldStep(2.0);
  Messages msg(p.fdtd);
  const auto t0 = std::chrono::steady_clock::now();
  vtkImageData* out = p.Run();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("steady-state plane wave on a %d^3 block: %d steps, %.1f s, converged %d\n", b,
    p.fdtd->GetLastSteps(), sec, p.fdtd->GetLastConverged() ? 1 : 0);
  EXPECT_EQ(msg.errors, "");
  EXPECT_TRUE(p.fdtd->GetLastConverged()) << msg.warnings;
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 1);

  // No time series in the steady state: three ports (fields, summary, far field), no time steps.
  EXPECT_EQ(p.fdtd->GetNumberOfOutputPorts(), 3);
  EXPECT_FALSE(p.fdtd->GetOutputInformation(0)->Has(vtkStreamingDemandDrivenPipeline::TIME_STEPS()));

  // Port 0: the transient filter's grid.
  const int m = n + 2 * pad;
  int ext[6];
  out->GetExtent(ext);
  EXPECT_EQ(ext[1], m);
  EXPECT_EQ(ext[3], m);
  EXPECT_EQ(ext[5], m);
  EXPECT_NEAR(out->GetOrigin()[0], -0.5 * n * h - pad * h, 1e-12);
  vtkCellData* cd = out->GetCellData();
  for (const char* name : { "E_real", "E_imag" })
  {
    ASSERT_TRUE(cd->GetArray(name)) << name;
    EXPECT_EQ(cd->GetArray(name)->GetNumberOfComponents(), 3);
  }
  for (const char* name : { "E_magnitude", "SAR", "SAR_1g", "SAR_10g", "permittivity",
         "conductivity", "density" })
  {
    ASSERT_TRUE(cd->GetArray(name)) << name;
    EXPECT_EQ(cd->GetArray(name)->GetNumberOfTuples(), static_cast<vtkIdType>(m) * m * m);
  }
  vtkDataArray* sar = cd->GetArray("SAR");
  vtkDataArray* sar1 = cd->GetArray("SAR_1g");
  vtkDataArray* sar10 = cd->GetArray("SAR_10g");
  vtkDataArray* rho = cd->GetArray("density");
  double tissueSum = 0, max1 = 0, max10 = 0;
  int tissue = 0, badTissue = 0, badAir = 0;
  for (vtkIdType c = 0; c < sar->GetNumberOfTuples(); ++c)
  {
    const double s = sar->GetComponent(c, 0);
    if (rho->GetComponent(c, 0) > 0)
    {
      ++tissue;
      tissueSum += s;
      badTissue += !(std::isfinite(s) && s > 0);
    }
    else
    {
      badAir += s != 0 || sar1->GetComponent(c, 0) != 0 || sar10->GetComponent(c, 0) != 0;
    }
    max1 = std::max(max1, sar1->GetComponent(c, 0));
    max10 = std::max(max10, sar10->GetComponent(c, 0));
  }
  EXPECT_EQ(tissue, b * b * b);
  EXPECT_EQ(badTissue, 0) << "tissue voxels with SAR not finite or not > 0";
  EXPECT_EQ(badAir, 0) << "air voxels with SAR != 0";

  // Field data = summary table; whole-body SAR = mean local SAR (uniform density) = P / mass.
  vtkTable* sum = p.fdtd->GetSummaryOutput();
  ASSERT_EQ(sum->GetNumberOfRows(), 1);
  const double wb = FieldValue(out, "whole_body_SAR_W_per_kg");
  EXPECT_TRUE(std::isfinite(wb) && wb > 0) << wb;
  EXPECT_NEAR(wb, tissueSum / tissue, 1e-4 * wb);
  const double mass = 1000.0 * b * b * b * h * h * h;
  EXPECT_NEAR(FieldValue(out, "absorbed_power_W") / mass, wb, 1e-4 * wb);
  const double ps1 = FieldValue(out, "psSAR1g_W_per_kg"), ps10 = FieldValue(out, "psSAR10g_W_per_kg");
  EXPECT_NEAR(max1, ps1, 1e-5 * ps1);  // assigned voxels carry the largest containing cube's value
  EXPECT_NEAR(max10, ps10, 1e-5 * ps10);
  EXPECT_GT(ps1, ps10);
  EXPECT_GE(FieldValue(out, "peak_local_SAR_W_per_kg"), ps1);
  const char* same[][2] = { { "frequency_Hz", "frequency_Hz" },
    { "whole_body_SAR_W_per_kg", "whole_body_SAR_W_per_kg" },
    { "peak_local_SAR_W_per_kg", "peak_local_SAR_W_per_kg" },
    { "psSAR1g_W_per_kg", "psSAR1g_W_per_kg" }, { "psSAR10g_W_per_kg", "psSAR10g_W_per_kg" },
    { "absorbed_power_W", "absorbed_power_W" }, { "accepted_power_W", "accepted_power_W" },
    { "radiated_power_W", "radiated_power_W" },
    { "scattering_cross_section_m2", "scattering_cross_section_m2" }, { "steps", "steps" },
    { "converged", "converged" } };
  for (const auto& s : same)
  {
    EXPECT_TRUE(Same(FieldValue(out, s[0]), TableValue(sum, s[1]))) << s[0];
  }
  const char* xyz[3] = { "x", "y", "z" };
  for (int a = 0; a < 3; ++a)
  {
    EXPECT_TRUE(Same(FieldValue(out, "psSAR1g_location_m", 0, a),
      TableValue(sum, ("psSAR1g_" + std::string(xyz[a]) + "_m").c_str())));
    EXPECT_TRUE(Same(FieldValue(out, "psSAR10g_location_m", 0, a),
      TableValue(sum, ("psSAR10g_" + std::string(xyz[a]) + "_m").c_str())));
    // The 1 g peak lies in the block.
    EXPECT_LE(std::fabs(FieldValue(out, "psSAR1g_location_m", 0, a)), 0.5 * b * h);
  }
  EXPECT_DOUBLE_EQ(TableValue(sum, "frequency_Hz"), 1e9);
  EXPECT_TRUE(std::isnan(TableValue(sum, "feed_impedance_real_ohm")));  // no feed
  EXPECT_TRUE(std::isnan(TableValue(sum, "accepted_power_W")));
  EXPECT_GT(TableValue(sum, "scattering_cross_section_m2"), 0.0);
  EXPECT_GT(FieldValue(out, "steps"), 0.0);
  EXPECT_EQ(FieldValue(out, "converged"), 1.0);

  // The incident field (x-polarized along +z, 2 V/m) in the total-field region; only the
  // scattered field outside the TF/SF box (the outer 5 padding cells).
  vtkDataArray* re = cd->GetArray("E_real");
  vtkDataArray* im = cd->GetArray("E_imag");
  auto ex = [&](int i, int j, int k) {
    const vtkIdType c = i + m * (j + static_cast<vtkIdType>(m) * k);
    return std::hypot(re->GetComponent(c, 0), im->GetComponent(c, 0));
  };
  const double inside = ex(6, 6, 6), outside = ex(1, 1, 1);
  std::printf("|Ex| total-field region %.3f V/m, scattered-field region %.3f V/m\n", inside, outside);
  EXPECT_GT(inside, 1.4);
  EXPECT_LT(inside, 2.6);
  EXPECT_LT(outside, 0.5);

  // Port 2: FDFDSolver's RCS columns, 0..180 degrees.
  vtkTable* far = p.fdtd->GetFarFieldOutput();
  for (const char* c : { "theta_deg", "rcs_E_plane_dBsm", "rcs_H_plane_dBsm", "rcs_E_plane_m2",
         "rcs_H_plane_m2" })
  {
    EXPECT_NE(far->GetColumnByName(c), nullptr) << c;
  }
  EXPECT_EQ(far->GetColumnByName("frequency_Hz"), nullptr);  // one frequency
  ASSERT_EQ(far->GetNumberOfRows(), 91);
  EXPECT_EQ(TableValue(far, "theta_deg", 0), 0.0);
  EXPECT_EQ(TableValue(far, "theta_deg", 90), 180.0);
  for (int r = 0; r < 91; ++r)
  {
    const double e = TableValue(far, "rcs_E_plane_m2", r), hp = TableValue(far, "rcs_H_plane_m2", r);
    ASSERT_TRUE(std::isfinite(e) && e > 0 && std::isfinite(hp) && hp > 0) << "row " << r;
  }
  EXPECT_NEAR(TableValue(far, "rcs_E_plane_dBsm", 0), TableValue(far, "rcs_H_plane_dBsm", 0), 1e-6);
  EXPECT_NEAR(TableValue(far, "rcs_E_plane_dBsm", 10),
    10 * std::log10(TableValue(far, "rcs_E_plane_m2", 10)), 1e-9);
  EXPECT_LT(sec, 60.0);
}

TEST(PluginFdtdSteady, HalfWaveDipoleInFreeSpaceIsNormalizedToAcceptedPower)
{
  const double h = 0.01;  // 900 MHz: lambda / 33, a 17-edge half-wave dipole
  vtkSmartPointer<vtkImageData> img = Vacuum(4, 4, 20, h);
  SteadyPipeline p(img);
  p.fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_HALF_WAVE_DIPOLE);
  p.fdtd->SetDFTFrequency(0, 900e6);
  p.fdtd->SetDipoleCentre(0.0, 0.0, 0.0);
  p.fdtd->SetDipoleAxis(2);
  p.fdtd->SetAcceptedPower(0.5);
  p.fdtd->SetAirPadding(4);
  p.fdtd->SetCPMLThickness(8);
  p.fdtd->SetFarFieldStep(5.0);
  Messages msg(p.fdtd);
  const auto t0 = std::chrono::steady_clock::now();
  vtkImageData* out = p.Run();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(msg.errors, "");
  ASSERT_GT(out->GetNumberOfCells(), 0);
  EXPECT_TRUE(p.fdtd->GetLastConverged()) << msg.warnings;
  // No density: no SAR arrays, NaN SAR in the tables.
  EXPECT_EQ(out->GetCellData()->GetArray("SAR"), nullptr);
  ASSERT_NE(out->GetCellData()->GetArray("E_magnitude"), nullptr);
  vtkTable* sum = p.fdtd->GetSummaryOutput();
  ASSERT_EQ(sum->GetNumberOfRows(), 1);
  EXPECT_TRUE(std::isnan(TableValue(sum, "whole_body_SAR_W_per_kg")));
  EXPECT_TRUE(std::isnan(TableValue(sum, "psSAR1g_W_per_kg")));
  EXPECT_TRUE(std::isnan(TableValue(sum, "scattering_cross_section_m2")));
  const double pacc = TableValue(sum, "accepted_power_W");
  const double prad = TableValue(sum, "radiated_power_W");
  const double zr = TableValue(sum, "feed_impedance_real_ohm");
  const double zi = TableValue(sum, "feed_impedance_imag_ohm");
  EXPECT_NEAR(pacc, 0.5, 1e-6);
  EXPECT_TRUE(Same(pacc, FieldValue(out, "accepted_power_W")));
  EXPECT_TRUE(Same(zr, FieldValue(out, "feed_impedance_ohm", 0, 0)));
  EXPECT_TRUE(Same(zi, FieldValue(out, "feed_impedance_ohm", 0, 1)));
  EXPECT_NEAR(prad / pacc, 1.0, 0.1);  // free space: everything accepted is radiated

  vtkTable* far = p.fdtd->GetFarFieldOutput();
  for (const char* c : { "theta_deg", "gain_E_plane_dBi", "gain_H_plane_dBi", "gain_E_plane",
         "gain_H_plane" })
  {
    EXPECT_NE(far->GetColumnByName(c), nullptr) << c;
  }
  ASSERT_EQ(far->GetNumberOfRows(), 73);  // 0..360 in 5 degree steps
  EXPECT_EQ(TableValue(far, "theta_deg", 72), 360.0);
  const double broadside = TableValue(far, "gain_E_plane_dBi", 18);  // 90 degrees from the axis
  const double axial = TableValue(far, "gain_E_plane_dBi", 0);
  double hmin = 1e300, hmax = -1e300;
  for (int r = 0; r < 73; ++r)
  {
    hmin = std::min(hmin, TableValue(far, "gain_H_plane_dBi", r));
    hmax = std::max(hmax, TableValue(far, "gain_H_plane_dBi", r));
  }
  std::printf("half-wave dipole, 1 cm cells, 900 MHz: %d steps, %.1f s; Z = %.1f %+.1fj ohm, "
              "P_rad / P_acc = %.3f, gain %.2f dBi broadside, %.1f dBi on the axis, H-plane %.2f..%.2f dBi\n",
    p.fdtd->GetLastSteps(), sec, zr, zi, prad / pacc, broadside, axial, hmin, hmax);
  EXPECT_GT(broadside, 1.0);
  EXPECT_LT(broadside, 2.5);
  EXPECT_LT(axial, -10.0);
  EXPECT_LT(hmax - hmin, 0.3);  // omnidirectional
  EXPECT_GT(zr, 40.0);  // measured 133 + 87j ohm (17 edges of 1 cm, CPML 6 cells from the wire)
  EXPECT_LT(zr, 200.0);
  EXPECT_LT(sec, 60.0);
}

TEST(PluginFdtdSteady, ErrorsAndAbortLeaveEveryPortEmpty)
{
  vtkSmartPointer<vtkImageData> img = LossyBlock(8, 4, 0.005, 40.0f, 0.8f);
  auto allEmpty = [](vtkVEMFDTDSteadyState* f) {
    return vtkImageData::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfCells() == 0 &&
      f->GetSummaryOutput()->GetNumberOfColumns() == 0 && f->GetFarFieldOutput()->GetNumberOfColumns() == 0;
  };
  auto transientEmpty = [](vtkVEMFDTDSolver* f) {
    return vtkImageData::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfCells() == 0 &&
      f->GetProbeOutput()->GetNumberOfRows() == 0;
  };
  SteadyPipeline p(img);
  p.fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_PLANE_WAVE);
  p.fdtd->SetAirPadding(8);
  p.fdtd->SetCPMLThickness(6);
  Messages msg(p.fdtd);

  p.fdtd->ClearDFTFrequencies();
  p.Run();
  EXPECT_NE(msg.errors.find("FDTD Steady State: HarmonicOptions::frequencies (DFTFrequencies): none "
                            "given; need at least one (Hz)"),
    std::string::npos)
    << msg.errors;
  EXPECT_TRUE(allEmpty(p.fdtd));

  msg.errors.clear();
  p.fdtd->SetDFTFrequency(0, 1e9);
  p.fdtd->SetDFTFrequency(1, 1.0000000001e9);
  p.Run();
  EXPECT_NE(msg.errors.find("must differ in 6 significant digits in MHz (both are '1000MHz')"),
    std::string::npos)
    << msg.errors;
  EXPECT_TRUE(allEmpty(p.fdtd));

  msg.errors.clear();
  p.fdtd->SetNumberOfDFTFrequencies(1);
  p.fdtd->SetAirPadding(3);  // the model crosses the total-field box
  p.Run();
  EXPECT_NE(msg.errors.find("set AirPadding to at least 6"), std::string::npos) << msg.errors;
  EXPECT_TRUE(allEmpty(p.fdtd));

  msg.errors.clear();
  p.fdtd->SetAirPadding(8);
  p.fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_POINT_SOURCE);
  p.fdtd->SetSourcePosition(0.0, 0.0, 0.03);
  p.fdtd->SetSourcePolarization(1.0, 0.0, 1.0);
  p.Run();
  EXPECT_NE(msg.errors.find("TransientOptions::source_polarization (SourcePolarization) = (1, 0, 1): "
                            "in the steady state a point source is a one-edge dipole and must point "
                            "along x, y or z"),
    std::string::npos)
    << msg.errors;
  EXPECT_TRUE(allEmpty(p.fdtd));

  // The transient filter on the same input: a dipole without feed current.
  vtkNew<vtkVEMFDTDSolver> transient;
  transient->SetInputConnection(p.src->GetOutputPort());
  transient->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
  transient->SetAirPadding(8);
  transient->SetCPMLThickness(6);
  transient->SetIllumination(vtkVEMFDTDSolver::ILLUMINATION_HALF_WAVE_DIPOLE);
  transient->SetFeedCurrent(0.0);
  Messages transientMsg(transient);
  transient->Update();
  EXPECT_NE(transientMsg.errors.find("FDTD Solver: HarmonicDipole::feed_current (FeedCurrent) = 0 A: "
                                     "must be > 0"),
    std::string::npos)
    << transientMsg.errors;
  EXPECT_TRUE(transientEmpty(transient));
  EXPECT_EQ(transient->GetNumberOfSolves(), 0);
  transient->SetFeedCurrent(1.0);

  // Abort during the steady-state run: every port empty, a warning, the next update runs again.
  msg.errors.clear();
  p.fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_PLANE_WAVE);
  p.fdtd->SetProgressInterval(10);
  int reports = 0;
  vtkNew<vtkCallbackCommand> abortAt;
  abortAt->SetClientData(&reports);
  abortAt->SetCallback([](vtkObject* caller, unsigned long, void* client, void* call) {
    const double progress = *static_cast<double*>(call);
    if (progress > 0.0 && progress < 1.0 && ++*static_cast<int*>(client) == 3)
    {
      static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
    }
  });
  const unsigned long tag = p.fdtd->AddObserver(vtkCommand::ProgressEvent, abortAt);
  p.Run();
  EXPECT_EQ(msg.errors, "");
  EXPECT_NE(msg.warnings.find("aborted"), std::string::npos) << msg.warnings;
  EXPECT_TRUE(allEmpty(p.fdtd));
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 0);
  p.fdtd->RemoveObserver(tag);
  p.fdtd->SetAbortExecute(0);
  p.fdtd->SetFixedSteps(600);
  vtkImageData* out = p.Run();
  EXPECT_GT(out->GetNumberOfCells(), 0);
  EXPECT_EQ(p.fdtd->GetNumberOfSolves(), 1);
  EXPECT_EQ(p.fdtd->GetLastSteps(), 600);
  EXPECT_FALSE(p.fdtd->GetLastConverged());  // fixed steps: no criterion
}

TEST(PluginFdtd, TransientPlaneWaveFillsTheTotalFieldBoxOnly)
{
  // Vacuum: a modulated Gaussian plane wave along +z, x-polarized, 3 V/m. Inside the total-field
  // box the peak Ex over the run is the amplitude; outside it (scattered field) nothing.
  vtkSmartPointer<vtkImageData> img = Vacuum(8, 8, 8, 0.005);
  vtkNew<vtkTrivialProducer> src;
  src->SetOutput(img);
  vtkNew<vtkVEMFDTDSolver> f;
  f->SetInputConnection(src->GetOutputPort());
  f->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
  f->SetIllumination(vtkVEMFDTDSolver::ILLUMINATION_PLANE_WAVE);
  f->SetIncidentAmplitude(3.0);
  f->SetSourceFrequency(3e9);
  f->SetAirPadding(7);
  f->SetCPMLThickness(6);
  f->SetNumberOfSteps(400);
  f->SetSnapshotInterval(400);
  f->SetNumberOfProbePositions(2);
  f->SetProbePosition(0, 0.0, 0.0, 0.0);     // centre: total field
  f->SetProbePosition(1, 0.0, 0.0, -0.0475); // 1.5 cells from the CPML: scattered field
  Messages msg(f);
  f->Update();
  EXPECT_EQ(msg.errors, "");
  vtkTable* probes = f->GetProbeOutput();
  ASSERT_EQ(probes->GetNumberOfRows(), 400);
  EXPECT_EQ(probes->GetColumnByName("source_Ex"), nullptr);  // no point source
  auto peak = [&](const char* name) {
    vtkDataArray* a = vtkDataArray::SafeDownCast(probes->GetColumnByName(name));
    double m = 0;
    for (vtkIdType r = 0; a && r < a->GetNumberOfTuples(); ++r)
    {
      m = std::max(m, std::fabs(a->GetComponent(r, 0)));
    }
    return a ? m : -1.0;
  };
  const double inside = peak("probe0_Ex"), outside = peak("probe1_Ex"), cross = peak("probe0_Ey");
  const double expect = 3.0 * peak("source_waveform");  // the pulse's own peak (< 1)
  std::printf("transient plane wave: peak Ex %.3f V/m inside the box (waveform peak x amplitude "
              "%.3f), %.2e outside, Ey %.1e\n", inside, expect, outside, cross);
  EXPECT_NEAR(inside, expect, 0.03 * expect);
  EXPECT_LT(outside, 0.03);
  EXPECT_LT(cross, 0.03);
  // The transient filter has the time series and the probe table only (the steady state's
  // outputs are vtkVEMFDTDSteadyState's).
  EXPECT_EQ(f->GetNumberOfOutputPorts(), 2);
  EXPECT_EQ(f->GetOutputDataObject(1), probes);
  EXPECT_GT(vtkImageData::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfCells(), 0);
}

TEST(PluginFdtd, TransientHalfWaveDipoleHoldsItsArmsAtZero)
{
  // Vacuum, a 10 cm (21-edge) z dipole at the centre fed with 2 A times a 1.5 GHz modulated
  // Gaussian: the wire's axial E is held at exactly 0 (PEC arms), the feed gap and a broadside
  // point see the pulse, and the probe at the feed is named "feed".
  vtkSmartPointer<vtkImageData> img = Vacuum(8, 8, 26, 0.005);
  vtkNew<vtkTrivialProducer> src;
  src->SetOutput(img);
  vtkNew<vtkVEMFDTDSolver> f;
  f->SetInputConnection(src->GetOutputPort());
  f->SetBackend(vtkVEMFDTDSolver::BACKEND_CPU);
  f->SetIllumination(vtkVEMFDTDSolver::ILLUMINATION_HALF_WAVE_DIPOLE);
  f->SetDipoleCentre(0.0, 0.0, 0.0);
  f->SetDipoleAxis(2);
  f->SetDipoleLength(0.1);
  f->SetFeedCurrent(2.0);
  f->SetSourceFrequency(1.5e9);
  f->SetAirPadding(4);
  f->SetCPMLThickness(6);
  f->SetNumberOfSteps(300);
  f->SetSnapshotInterval(300);
  f->SetProbeAtSource(true);
  f->SetNumberOfProbePositions(2);
  f->SetProbePosition(0, 0.0, 0.0, 0.03);  // on the upper arm
  f->SetProbePosition(1, 0.03, 0.0, 0.0);  // broadside, 3 cm from the gap
  Messages msg(f);
  f->Update();
  EXPECT_EQ(msg.errors, "");
  vtkTable* probes = f->GetProbeOutput();
  ASSERT_EQ(probes->GetNumberOfRows(), 300);
  auto peak = [&](const char* name) {
    vtkDataArray* a = vtkDataArray::SafeDownCast(probes->GetColumnByName(name));
    double m = 0;
    for (vtkIdType r = 0; a && r < a->GetNumberOfTuples(); ++r)
    {
      m = std::max(m, std::fabs(a->GetComponent(r, 0)));
    }
    return a ? m : -1.0;
  };
  const double arm = peak("probe0_Ez"), gap = peak("feed_Ez"), side = peak("probe1_Ez");
  std::printf("transient dipole: peak Ez on the arm %.3g, at the feed %.3g, broadside %.3g V/m\n", arm, gap,
    side);
  EXPECT_EQ(arm, 0.0);
  EXPECT_GT(gap, 0.0);
  EXPECT_GT(side, 1e-3 * gap);
  EXPECT_EQ(f->GetNumberOfOutputPorts(), 2);  // no steady-state outputs
}

TEST(PluginFdtdSteady, LabelModePointSourceAtTwoFrequencies)
{
  // Head phantom labels (12 mm cubic voxels), tissue table densities, a z point source beside
  // the head as a one-edge dipole, a pulse covering 900 and 1800 MHz.
  vtkNew<vtkVEMHeadPhantom> ph;
  ph->SetDimensions(24, 24, 16);
  ph->SetSpacing(0.012, 0.012, 0.012);
  ph->SetOrigin(-0.144, -0.144, -0.096);
  vtkNew<vtkVEMFDTDSteadyState> f;
  f->SetInputConnection(ph->GetOutputPort());
  f->SetMaterialMode(vtkVEMFDTDSteadyState::LABELS_AND_TISSUE_TABLE);
  f->SetBackend(vtkVEMFDTDSteadyState::BACKEND_CPU);
  f->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_POINT_SOURCE);
  f->SetSourcePosition(0.1, 0.0, 0.0);
  f->SetSourcePolarization(0, 0, -1);
  f->SetSourceAmplitude(0.01);
  f->SetNumberOfDFTFrequencies(2);
  f->SetDFTFrequency(0, 900e6);
  f->SetDFTFrequency(1, 1800e6);
  f->SetAirPadding(4);
  f->SetCPMLThickness(6);
  f->SetFarFieldStep(10.0);
  f->SetProgressInterval(50);
  Messages msg(f);
  const auto t0 = std::chrono::steady_clock::now();
  f->Update();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("label mode, two frequencies: %d steps, %.1f s, converged %d\n", f->GetLastSteps(),
    sec, f->GetLastConverged() ? 1 : 0);
  EXPECT_EQ(msg.errors, "");
  EXPECT_NE(msg.warnings.find("evaluated at 9e+08 Hz only"), std::string::npos) << msg.warnings;
  vtkImageData* out = vtkImageData::SafeDownCast(f->GetOutputDataObject(0));
  ASSERT_GT(out->GetNumberOfCells(), 0);
  vtkCellData* cd = out->GetCellData();
  for (const char* name : { "E_real_900MHz", "E_imag_900MHz", "E_magnitude_900MHz", "SAR_900MHz",
         "SAR_1g_900MHz", "SAR_10g_900MHz", "E_real_1800MHz", "SAR_1800MHz", "SAR_10g_1800MHz",
         "permittivity", "conductivity", "density", "tissue" })
  {
    EXPECT_NE(cd->GetArray(name), nullptr) << name;
  }
  EXPECT_EQ(cd->GetArray("SAR"), nullptr);  // suffixed only
  EXPECT_DOUBLE_EQ(FieldValue(out, "tissue_frequency_Hz"), 900e6);
  // SAR: 0 where the table's density is 0 (air, sinuses), > 0 in tissue.
  vtkDataArray* rho = cd->GetArray("density");
  vtkDataArray* lab = cd->GetArray("tissue");
  for (const char* name : { "SAR_900MHz", "SAR_1800MHz" })
  {
    vtkDataArray* sar = cd->GetArray(name);
    ASSERT_NE(sar, nullptr);
    int bad = 0, tissue = 0;
    for (vtkIdType c = 0; c < sar->GetNumberOfTuples(); ++c)
    {
      const double s = sar->GetComponent(c, 0);
      const bool t = rho->GetComponent(c, 0) > 0;
      tissue += t;
      bad += t ? !(std::isfinite(s) && s > 0) : s != 0;
      if (lab->GetComponent(c, 0) == vem::kAir)
      {
        bad += rho->GetComponent(c, 0) != 0;
      }
    }
    EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << tissue;
    EXPECT_GT(tissue, 1000) << name;
  }
  vtkDataArray* freq = out->GetFieldData()->GetArray("frequency_Hz");
  ASSERT_NE(freq, nullptr);
  EXPECT_EQ(freq->GetNumberOfTuples(), 2);
  vtkTable* sum = f->GetSummaryOutput();
  ASSERT_EQ(sum->GetNumberOfRows(), 2);
  for (int r = 0; r < 2; ++r)
  {
    EXPECT_TRUE(Same(TableValue(sum, "psSAR10g_W_per_kg", r), FieldValue(out, "psSAR10g_W_per_kg", r)));
    EXPECT_TRUE(std::isfinite(TableValue(sum, "psSAR10g_W_per_kg", r)));
    EXPECT_TRUE(std::isfinite(TableValue(sum, "feed_impedance_real_ohm", r)));
    EXPECT_GT(TableValue(sum, "accepted_power_W", r), 0.0);
    // Part of the accepted power is absorbed in the head, the rest radiated.
    EXPECT_GT(TableValue(sum, "absorbed_power_W", r), 0.0);
    EXPECT_LT(TableValue(sum, "absorbed_power_W", r), TableValue(sum, "accepted_power_W", r));
  }
  EXPECT_DOUBLE_EQ(TableValue(sum, "frequency_Hz", 1), 1800e6);
  vtkTable* far = f->GetFarFieldOutput();
  ASSERT_NE(far->GetColumnByName("frequency_Hz"), nullptr);
  ASSERT_NE(far->GetColumnByName("gain_E_plane_dBi"), nullptr);
  ASSERT_EQ(far->GetNumberOfRows(), 2 * 37);
  EXPECT_DOUBLE_EQ(TableValue(far, "frequency_Hz", 36), 900e6);
  EXPECT_DOUBLE_EQ(TableValue(far, "frequency_Hz", 37), 1800e6);
  EXPECT_DOUBLE_EQ(TableValue(far, "theta_deg", 37), 0.0);
  EXPECT_LT(sec, 60.0);
}

// The CUDA engine through the steady-state filter, against the CPU engine.
TEST(PluginFdtdSteadyCuda, MatchesCpuOnALossyBlock)
{
  std::string why;
  if (!vem::cuda_available(&why))
  {
    GTEST_SKIP() << "CUDA backend not tested here: " << why;
  }
  vtkSmartPointer<vtkImageData> img = LossyBlock(12, 6, 0.005, 40.0f, 0.8f);
  SteadyPipeline cpu(img), gpu(img);
  for (SteadyPipeline* p : { &cpu, &gpu })
  {
    p->fdtd->SetIllumination(vtkVEMFDTDSteadyState::ILLUMINATION_PLANE_WAVE);
    p->fdtd->SetDFTFrequency(0, 1e9);
    p->fdtd->SetAirPadding(8);
    p->fdtd->SetCPMLThickness(6);
    p->fdtd->SetFixedSteps(1200);
  }
  gpu.fdtd->SetBackend(vtkVEMFDTDSteadyState::BACKEND_CUDA);
  vtkImageData* a = cpu.Run();
  vtkImageData* b = gpu.Run();
  EXPECT_EQ(std::string(gpu.fdtd->GetLastBackend()).rfind("cuda", 0), 0u) << gpu.fdtd->GetLastBackend();
  for (const char* name : { "SAR", "SAR_1g", "SAR_10g", "E_real", "E_imag" })
  {
    vtkDataArray* x = a->GetCellData()->GetArray(name);
    vtkDataArray* y = b->GetCellData()->GetArray(name);
    ASSERT_TRUE(x && y) << name;
    const double peak = x->GetRange(-1)[1];
    EXPECT_LT(MaxAbsDiff(x, y), 1e-3 * peak) << name;
  }
  for (const char* c : { "whole_body_SAR_W_per_kg", "psSAR1g_W_per_kg", "psSAR10g_W_per_kg" })
  {
    const double x = TableValue(cpu.fdtd->GetSummaryOutput(), c);
    EXPECT_NEAR(TableValue(gpu.fdtd->GetSummaryOutput(), c), x, 1e-3 * x) << c;
  }
}
