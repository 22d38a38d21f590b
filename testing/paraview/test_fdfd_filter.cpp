// Drives vtkVEMFDFDSolver directly (no ParaView client) on a small dielectric sphere: outputs
// (arrays, extents, residual and RCS tables), complex64 with iterative refinement against
// complex128, label mode with SAR from the tissue table, abort between iterations, readable errors,
// and the CUDA backend against the CPU when a GPU is usable (skipped with the reason otherwise).
// Run on the GPU machine as: test_fdfd_filter --gtest_filter='*Cuda*'
#include <gtest/gtest.h>

#include "filter_messages.h"
#include "vtkCallbackCommand.h"
#include "vtkCellData.h"
#include "vtkCommand.h"
#include "vtkDataArray.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkNew.h"
#include "vtkTable.h"
#include "vtkTrivialProducer.h"
#include "vtkVEMFDFDSolver.h"
#include "vtkVEMHeadPhantom.h"

#include "vem/fdfd/fdfd_solver.h"

#include <cmath>
#include <limits>
#include <cstdio>
#include <string>
#include <vector>

namespace
{

// n^3 voxels of h metres, a sphere of radius r with eps_r and sigma, density 1000 inside.
vtkSmartPointer<vtkImageData> Sphere(int n, double h, double r, float eps, float sigma,
  bool withEps = true)
{
  auto img = vtkSmartPointer<vtkImageData>::New();
  img->SetDimensions(n + 1, n + 1, n + 1);
  img->SetSpacing(h, h, h);
  img->SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h);
  vtkNew<vtkFloatArray> e, s, rho;
  e->SetName("permittivity");
  s->SetName("conductivity");
  rho->SetName("density");
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
      {
        const double x = (i + 0.5 - 0.5 * n) * h, y = (j + 0.5 - 0.5 * n) * h,
                     z = (k + 0.5 - 0.5 * n) * h;
        const bool in = x * x + y * y + z * z < r * r;
        e->InsertNextValue(in ? eps : 1.0f);
        s->InsertNextValue(in ? sigma : 0.0f);
        rho->InsertNextValue(in ? 1000.0f : 0.0f);
      }
  if (withEps)
  {
    img->GetCellData()->AddArray(e);
  }
  img->GetCellData()->AddArray(s);
  img->GetCellData()->AddArray(rho);
  return img;
}

struct SpherePipeline
{
  vtkNew<vtkTrivialProducer> src;
  vtkNew<vtkVEMFDFDSolver> fdfd;
  explicit SpherePipeline(vtkImageData* img)
  {
    src->SetOutput(img);
    fdfd->SetInputConnection(src->GetOutputPort());
    fdfd->SetBackend(vtkVEMFDFDSolver::BACKEND_CPU);
    fdfd->SetFrequency(1e9);
    fdfd->SetPMLThickness(6);
    fdfd->SetAirPadding(4);
    fdfd->SetTolerance(1e-6);
    fdfd->SetRCSAngleStep(10.0);
    fdfd->SetProgressInterval(5);
  }
  vtkImageData* Run()
  {
    fdfd->Update();
    return fdfd->GetOutput();
  }
};

std::vector<double> Column(vtkTable* t, const char* name)
{
  std::vector<double> v;
  vtkAbstractArray* a = t->GetColumnByName(name);
  vtkDataArray* d = vtkDataArray::SafeDownCast(a);
  if (d)
  {
    for (vtkIdType i = 0; i < d->GetNumberOfTuples(); ++i)
    {
      v.push_back(d->GetTuple1(i));
    }
  }
  return v;
}

double RelDiff(vtkDataArray* a, vtkDataArray* b)
{
  if (!a || !b || a->GetNumberOfTuples() != b->GetNumberOfTuples())
  {
    ADD_FAILURE() << "RelDiff: an array is missing or the sizes differ (did the filter fail?)";
    return std::numeric_limits<double>::infinity();
  }
  double num = 0, den = 0;
  for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i)
    for (int c = 0; c < a->GetNumberOfComponents(); ++c)
    {
      const double x = a->GetComponent(i, c), y = b->GetComponent(i, c);
      num += (x - y) * (x - y);
      den += y * y;
    }
  return std::sqrt(num / den);
}

} // namespace

TEST(PluginFdfd, SphereOutputsArraysAndTables)
{
  SpherePipeline p(Sphere(10, 0.01, 0.04, 4.0f, 0.05f));
  Messages msg(p.fdfd);
  vtkImageData* out = p.Run();
  EXPECT_TRUE(msg.errors.empty()) << msg.errors;
  int ext[6];
  out->GetExtent(ext);
  EXPECT_EQ(ext[1], 10 + 8);
  EXPECT_EQ(ext[5], 10 + 8);
  EXPECT_NEAR(out->GetOrigin()[0], -0.05 - 0.04, 1e-12);
  for (const char* name : { "E_scat_real", "E_scat_imag", "E_total_real", "E_total_imag" })
  {
    vtkDataArray* a = out->GetCellData()->GetArray(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ(a->GetNumberOfComponents(), 3);
    EXPECT_EQ(a->GetNumberOfTuples(), 18 * 18 * 18);
  }
  ASSERT_NE(out->GetCellData()->GetArray("E_magnitude"), nullptr);
  ASSERT_NE(out->GetCellData()->GetArray("SAR"), nullptr);
  EXPECT_TRUE(p.fdfd->GetLastConverged());
  EXPECT_LT(p.fdfd->GetLastTrueResidual(), 2e-6);
  EXPECT_EQ(p.fdfd->GetNumberOfSolves(), 1);

  vtkTable* res = p.fdfd->GetResidualOutput();
  const std::vector<double> it = Column(res, "iteration"), rr = Column(res, "relative_residual");
  ASSERT_GT(it.size(), 10u);
  EXPECT_EQ(rr.front(), 1.0);
  EXPECT_LE(rr.back(), 1e-6);
  EXPECT_EQ(static_cast<int>(it.back()), p.fdfd->GetLastIterations());

  vtkTable* rcs = p.fdfd->GetRCSOutput();
  const std::vector<double> th = Column(rcs, "theta_deg"), e = Column(rcs, "rcs_E_plane_dBsm"),
                            h = Column(rcs, "rcs_H_plane_dBsm");
  ASSERT_EQ(th.size(), 19u);
  ASSERT_EQ(e.size(), 19u);
  ASSERT_EQ(h.size(), 19u);
  EXPECT_EQ(th.back(), 180.0);
  EXPECT_NEAR(e.front(), h.front(), 0.05); // forward: both planes see the same field
  for (double v : e)
  {
    EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(PluginFdfd, Complex64WithRefinementMatchesComplex128)
{
  auto img = Sphere(10, 0.01, 0.04, 4.0f, 0.05f);
  SpherePipeline a(img), b(img);
  b.fdfd->SetPrecision(vtkVEMFDFDSolver::PRECISION_COMPLEX64);
  a.Run();
  b.Run();
  EXPECT_TRUE(b.fdfd->GetLastConverged());
  EXPECT_LT(b.fdfd->GetLastTrueResidual(), 2e-6);
  EXPECT_LT(RelDiff(b.fdfd->GetOutput()->GetCellData()->GetArray("E_scat_real"),
              a.fdfd->GetOutput()->GetCellData()->GetArray("E_scat_real")),
    1e-4);
  const std::vector<double> tr = Column(b.fdfd->GetResidualOutput(), "true_relative_residual");
  int measured = 0;
  for (double v : tr)
  {
    measured += std::isfinite(v) ? 1 : 0;
  }
  EXPECT_GE(measured, 3); // start + at least two outer steps
}

// Method 4: flexible GCR with the FDTD time-domain preconditioner gives the COCG answer in a
// few outer iterations, on the CPU here (and on the GPU below when there is one).
TEST(PluginFdfd, TimeDomainPreconditionedGcrMatchesCocg)
{
  auto img = Sphere(10, 0.01, 0.04, 4.0f, 0.05f);
  for (int backend : { vtkVEMFDFDSolver::BACKEND_CPU, vtkVEMFDFDSolver::BACKEND_CUDA })
  {
    if (backend == vtkVEMFDFDSolver::BACKEND_CUDA && !vem::fdfd_cuda_available(nullptr))
    {
      std::printf("[ SKIP ] GCR + FDTD preconditioner on CUDA: no usable CUDA device\n");
      continue;
    }
    SpherePipeline a(img), b(img);
    b.fdfd->SetMethod(vtkVEMFDFDSolver::METHOD_GCR_TIME_DOMAIN);
    b.fdfd->SetBackend(backend);
    Messages msg(b.fdfd);
    a.Run();
    b.Run();
    EXPECT_TRUE(msg.errors.empty()) << msg.errors;
    EXPECT_STREQ(b.fdfd->GetLastMethod(), "gcr");
    EXPECT_TRUE(b.fdfd->GetLastConverged());
    EXPECT_LE(b.fdfd->GetLastIterations(), 5);
    EXPECT_LT(b.fdfd->GetLastTrueResidual(), 1e-6);
    EXPECT_LT(RelDiff(b.fdfd->GetOutput()->GetCellData()->GetArray("E_scat_real"),
                a.fdfd->GetOutput()->GetCellData()->GetArray("E_scat_real")),
      1e-5);
  }
}

TEST(PluginFdfd, LabelModeGivesSarFromTheTissueTable)
{
  vtkNew<vtkVEMHeadPhantom> phantom;
  phantom->SetDimensions(16, 16, 10);
  phantom->SetSpacing(0.016, 0.016, 0.019);
  phantom->SetOrigin(-0.128, -0.128, -0.095);
  vtkNew<vtkVEMFDFDSolver> fdfd;
  fdfd->SetInputConnection(phantom->GetOutputPort());
  fdfd->SetMaterialMode(vtkVEMFDFDSolver::LABELS_AND_TISSUE_TABLE);
  fdfd->SetBackend(vtkVEMFDFDSolver::BACKEND_CPU);
  fdfd->SetFrequency(900e6);
  fdfd->SetIncidentTheta(90);
  fdfd->SetPolarization(180);
  fdfd->SetPMLThickness(6);
  fdfd->SetAirPadding(2);
  fdfd->SetTolerance(1e-3);
  Messages msg(fdfd);
  fdfd->Update();
  EXPECT_TRUE(msg.errors.empty()) << msg.errors;
  vtkImageData* out = fdfd->GetOutput();
  vtkDataArray* sar = out->GetCellData()->GetArray("SAR");
  vtkDataArray* tissue = out->GetCellData()->GetArray("tissue");
  ASSERT_NE(sar, nullptr);
  ASSERT_NE(tissue, nullptr);
  double maxSar = 0;
  for (vtkIdType i = 0; i < sar->GetNumberOfTuples(); ++i)
  {
    EXPECT_TRUE(std::isfinite(sar->GetTuple1(i)));
    if (tissue->GetTuple1(i) == 0)
    {
      EXPECT_EQ(sar->GetTuple1(i), 0.0);
    }
    maxSar = std::max(maxSar, sar->GetTuple1(i));
  }
  EXPECT_GT(maxSar, 0.0);
  // k along +x, E0 = +z: the corner (air) total field is mostly E_z.
  vtkDataArray* re = out->GetCellData()->GetArray("E_total_real");
  vtkDataArray* im = out->GetCellData()->GetArray("E_total_imag");
  const double ez = std::hypot(re->GetComponent(0, 2), im->GetComponent(0, 2));
  const double ex = std::hypot(re->GetComponent(0, 0), im->GetComponent(0, 0));
  EXPECT_GT(ez, 0.8);
  EXPECT_LT(ex, 0.2);
}

TEST(PluginFdfd, AbortStopsBetweenIterationsAndLeavesNoOutput)
{
  SpherePipeline p(Sphere(10, 0.01, 0.04, 4.0f, 0.05f));
  p.fdfd->SetTolerance(1e-12);
  p.fdfd->SetProgressInterval(2);
  Messages msg(p.fdfd);
  struct State
  {
    int reports = 0;
    int after = 0;
    bool asked = false;
  } st;
  vtkNew<vtkCallbackCommand> abortAt;
  abortAt->SetClientData(&st);
  abortAt->SetCallback([](vtkObject* caller, unsigned long, void* client, void*) {
    auto* s = static_cast<State*>(client);
    if (s->asked)
    {
      ++s->after;
    }
    if (++s->reports == 5)
    {
      s->asked = true;
      static_cast<vtkAlgorithm*>(caller)->SetAbortExecute(1);
    }
  });
  const unsigned long tag = p.fdfd->AddObserver(vtkCommand::ProgressEvent, abortAt);
  vtkImageData* out = p.Run();
  EXPECT_TRUE(st.asked);
  EXPECT_LE(st.after, 1);
  EXPECT_EQ(out->GetNumberOfCells(), 0);
  EXPECT_EQ(p.fdfd->GetResidualOutput()->GetNumberOfRows(), 0);
  EXPECT_EQ(p.fdfd->GetNumberOfSolves(), 0);
  EXPECT_LE(p.fdfd->GetLastIterations(), 12);
  EXPECT_NE(msg.warnings.find("aborted"), std::string::npos) << msg.warnings;

  p.fdfd->RemoveObserver(tag);
  p.fdfd->SetAbortExecute(0);
  p.fdfd->SetTolerance(1e-4);
  out = p.Run();
  EXPECT_GT(out->GetNumberOfCells(), 0);
  EXPECT_EQ(p.fdfd->GetNumberOfSolves(), 1);
}

TEST(PluginFdfd, ErrorsAreReadableAndLeaveEmptyOutputs)
{
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, 4.0f, 0.0f, /*withEps=*/false));
    Messages msg(p.fdfd);
    p.fdfd->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_CELLS, "permittivity");
    vtkImageData* out = p.Run();
    EXPECT_EQ(out->GetNumberOfCells(), 0);
    EXPECT_NE(msg.errors.find("permittivity"), std::string::npos) << msg.errors;
  }
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, -2.0f, 0.0f));
    Messages msg(p.fdfd);
    vtkImageData* out = p.Run();
    EXPECT_EQ(out->GetNumberOfCells(), 0);
    EXPECT_NE(msg.errors.find("voxel"), std::string::npos) << msg.errors;
  }
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, 4.0f, 0.0f));
    Messages msg(p.fdfd);
    p.fdfd->SetFrequency(0.0);
    p.Run();
    EXPECT_NE(msg.errors.find("frequency"), std::string::npos) << msg.errors;
  }
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, 4.0f, 0.0f));
    Messages msg(p.fdfd);
    p.fdfd->SetTolerance(2.0);
    p.Run();
    EXPECT_NE(msg.errors.find("tolerance"), std::string::npos) << msg.errors;
  }
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, 4.0f, 0.0f));
    Messages msg(p.fdfd);
    p.fdfd->SetAirPadding(1);
    vtkImageData* out = p.Run();
    EXPECT_GT(out->GetNumberOfCells(), 0);
    EXPECT_EQ(p.fdfd->GetRCSOutput()->GetNumberOfRows(), 0);
    EXPECT_NE(msg.warnings.find("RCS"), std::string::npos) << msg.warnings;
  }
  if (!vem::fdfd_cuda_available())
  {
    SpherePipeline p(Sphere(6, 0.01, 0.02, 4.0f, 0.0f));
    Messages msg(p.fdfd);
    p.fdfd->SetBackend(vtkVEMFDFDSolver::BACKEND_CUDA);
    vtkImageData* out = p.Run();
    EXPECT_EQ(out->GetNumberOfCells(), 0);
    EXPECT_NE(msg.errors.find("CUDA"), std::string::npos) << msg.errors;
  }
}

TEST(PluginFdfdCuda, CudaMatchesCpuInBothPrecisions)
{
  std::string why;
  if (!vem::fdfd_cuda_available(&why))
  {
    GTEST_SKIP() << "CUDA backend not tested here: " << why;
  }
  auto img = Sphere(10, 0.01, 0.04, 4.0f, 0.05f);
  SpherePipeline cpu(img);
  cpu.Run();
  for (int prec : { vtkVEMFDFDSolver::PRECISION_COMPLEX128, vtkVEMFDFDSolver::PRECISION_COMPLEX64 })
  {
    SpherePipeline gpu(img);
    gpu.fdfd->SetBackend(vtkVEMFDFDSolver::BACKEND_CUDA);
    gpu.fdfd->SetPrecision(prec);
    Messages msg(gpu.fdfd);
    gpu.Run();
    EXPECT_TRUE(msg.errors.empty()) << msg.errors;
    EXPECT_NE(std::string(gpu.fdfd->GetLastBackend()).find("cuda"), std::string::npos);
    EXPECT_TRUE(gpu.fdfd->GetLastConverged());
    EXPECT_LT(RelDiff(gpu.fdfd->GetOutput()->GetCellData()->GetArray("E_total_real"),
                cpu.fdfd->GetOutput()->GetCellData()->GetArray("E_total_real")),
      1e-4);
  }
}
