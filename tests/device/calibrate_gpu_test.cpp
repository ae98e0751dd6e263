// Calibration on a real GPU (label gpu): skips visibly where no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "device/calibrate.h"

namespace kforge {
namespace {

bool have_gpu() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(CalibrateGpu, WithoutGpuReturnsAnError) {
    if (have_gpu()) GTEST_SKIP() << "a GPU is present; this case covers machines without one";
    auto c = calibrate(CalibrateOptions{});
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("no CUDA device"), std::string::npos);
    EXPECT_EQ(cuda_device_count(), 0);
}

TEST(CalibrateGpu, MeasuresPlausibleCeilings) {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount found none)";
    CalibrateOptions o;
    o.gemm_size = 4096;  // quicker than the CLI's 8192; still saturates a large GPU
    o.timed_runs = 5;
    auto c = calibrate(o);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    std::printf("%s", calibration_to_json(*c).c_str());
    EXPECT_GT(c->dram_bytes_per_s, 1e11);
    for (const char* unit : {"fp32_simt", "tf32_tensor", "bf16_tensor", "fp16_tensor"}) {
        ASSERT_EQ(c->peak_flops.count(unit), 1u) << unit;
        EXPECT_GT(c->peak_flops.at(unit), 1e12) << unit;
    }
    EXPECT_GT(c->peak_flops.at("bf16_tensor"), c->peak_flops.at("fp32_simt"));
    auto spec = device_from_cuda_name(*cuda_device_name(0));
    if (spec) {  // a known device: measured ceilings do not exceed the datasheet by much
        EXPECT_EQ(c->device, spec->name);
        EXPECT_LT(c->dram_bytes_per_s, 1.05 * spec->dram_bytes_per_s);
        EXPECT_LT(c->peak_flops.at("bf16_tensor"),
                  1.05 * spec->peak_flops.at(ComputeUnit::kBf16Tensor));
    }
}

}  // namespace
}  // namespace kforge
