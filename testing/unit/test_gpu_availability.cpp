// The reason given when no GPU can be used (gpu_availability.h): a machine with no NVIDIA driver
// must not be told to upgrade its driver.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "vem/core/gpu_availability.h"
#include "vem/fdtd/fdtd_engine.h"

using namespace vem;

TEST(GpuAvailability, NoDriverIsNamedAsNoGpuOrDriver) {
  const std::string r = cuda_unavailable_reason(kCudaErrorInsufficientDriver,
                                                "CUDA driver version is insufficient for CUDA runtime version", false);
  EXPECT_NE(r.find("no NVIDIA GPU or driver was found"), std::string::npos) << r;
  EXPECT_EQ(r.find("insufficient"), std::string::npos) << r;
  EXPECT_NE(cuda_unavailable_reason(kCudaErrorNoDevice, "no CUDA-capable device is detected", false)
                .find("no NVIDIA GPU or driver was found"),
            std::string::npos);
}

TEST(GpuAvailability, DriverPresentCasesKeepTheirMeaning) {
  EXPECT_NE(cuda_unavailable_reason(kCudaErrorNoDevice, "x", true).find("reports no device"), std::string::npos);
  const std::string old = cuda_unavailable_reason(kCudaErrorInsufficientDriver, "too old", true);
  EXPECT_NE(old.find("update the driver"), std::string::npos) << old;
  EXPECT_NE(old.find("too old"), std::string::npos) << old;
  EXPECT_NE(cuda_unavailable_reason(999, "odd failure", true).find("odd failure"), std::string::npos);
}

TEST(GpuAvailability, AutomaticBackendWarningSaysTheCpuEngineRuns) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a GPU is usable here: nothing to report";
  EXPECT_FALSE(why.empty());
  std::cout << "  without a GPU: " << why << "\n";
  if (!nvidia_driver_loaded()) {
#ifdef VEM_WITH_CUDA
    EXPECT_NE(why.find("no NVIDIA GPU or driver was found"), std::string::npos) << why;
#else
    EXPECT_NE(why.find("built without CUDA"), std::string::npos) << why;
#endif
  }
}
