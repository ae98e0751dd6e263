// The device table: lookups, CUDA-name mapping, unit names and datasheet sanity.
#include "sol/device.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

TEST(Device, LooksUpByNameAndAliasCaseInsensitively) {
    EXPECT_EQ(find_device("h200")->name, "h200");
    EXPECT_EQ(find_device("H200-SXM")->name, "h200");
    EXPECT_EQ(find_device("h100")->name, "h100-sxm");
    EXPECT_EQ(find_device("h100-pcie")->name, "h100-pcie");
    EXPECT_EQ(find_device("A100")->name, "a100-sxm");
    EXPECT_EQ(find_device("l40s")->name, "l40s");
    EXPECT_EQ(find_device("b200")->name, "b200");
    EXPECT_EQ(find_device("rtx-4090")->name, "rtx4090");
}

TEST(Device, UnknownNameListsKnownDevices) {
    auto d = find_device("h300");
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().where, "--device");
    EXPECT_NE(d.error().message.find("\"h300\""), std::string::npos);
    for (const auto& spec : device_table()) {
        EXPECT_NE(d.error().message.find(spec.name), std::string::npos) << spec.name;
    }
}

TEST(Device, MapsCudaNames) {
    EXPECT_EQ(device_from_cuda_name("NVIDIA H200")->name, "h200");
    EXPECT_EQ(device_from_cuda_name("NVIDIA H100 80GB HBM3")->name, "h100-sxm");
    EXPECT_EQ(device_from_cuda_name("NVIDIA H100 PCIe")->name, "h100-pcie");
    EXPECT_EQ(device_from_cuda_name("NVIDIA A100-SXM4-80GB")->name, "a100-sxm");
    EXPECT_EQ(device_from_cuda_name("NVIDIA GeForce RTX 4090")->name, "rtx4090");
    EXPECT_EQ(device_from_cuda_name("nvidia b200")->name, "b200");
    EXPECT_FALSE(device_from_cuda_name("NVIDIA H200 NVL").has_value());  // other power class
    EXPECT_FALSE(device_from_cuda_name("").has_value());
}

TEST(Device, H200Datasheet) {
    const auto d = *find_device("h200");
    EXPECT_EQ(d.sm_count, 132);
    EXPECT_EQ(d.cc_major, 9);
    EXPECT_DOUBLE_EQ(d.dram_bytes_per_s, 4.8e12);
    EXPECT_DOUBLE_EQ(d.peak_flops.at(ComputeUnit::kFp32Simt), 67e12);
    EXPECT_NEAR(d.peak_flops.at(ComputeUnit::kTf32Tensor), 495e12, 1e12);
    EXPECT_NEAR(d.peak_flops.at(ComputeUnit::kBf16Tensor), 989e12, 1e12);
    EXPECT_NEAR(d.peak_flops.at(ComputeUnit::kFp8Tensor), 1979e12, 1e12);
    EXPECT_EQ(d.smem_per_block_optin_bytes, 227 * 1024);
    EXPECT_EQ(d.l2_bytes, 60LL * 1024 * 1024);
    EXPECT_DOUBLE_EQ(sfu_ops_per_s(d), 16.0 * 132 * 1980e6);  // 4.18e12 MUFU/s
}

TEST(Device, EveryEntryIsComplete) {
    for (const auto& d : device_table()) {
        SCOPED_TRACE(d.name);
        EXPECT_GT(d.sm_count, 0);
        EXPECT_GT(d.boost_clock_mhz, 0.0);
        EXPECT_GT(d.l2_bytes, 0);
        EXPECT_GT(d.dram_bytes_per_s, 0.0);
        EXPECT_GT(d.smem_per_sm_bytes, d.smem_per_block_optin_bytes);
        EXPECT_EQ(d.regs_per_sm, 65536);
        EXPECT_FALSE(d.cuda_names.empty());
        const double fp32 = d.peak_flops.at(ComputeUnit::kFp32Simt);
        const double tf32 = d.peak_flops.at(ComputeUnit::kTf32Tensor);
        const double bf16 = d.peak_flops.at(ComputeUnit::kBf16Tensor);
        EXPECT_GE(tf32, fp32);
        EXPECT_NEAR(bf16, 2.0 * tf32, 0.03 * bf16) << "bf16 tensor is about twice tf32";
        EXPECT_DOUBLE_EQ(bf16, d.peak_flops.at(ComputeUnit::kFp16Tensor));
        EXPECT_GT(d.peak_flops.at(ComputeUnit::kFp64Simt), 0.0);
        // MUFU: 16 results per clock per SM on cc 7.x-9.0 (programming guide's throughput
        // table), below the fp32 FMA rate of every entry
        EXPECT_EQ(d.sfu_per_clock_per_sm, 16);
        EXPECT_LT(sfu_ops_per_s(d), fp32 / 2.0);
        // A name is unique across names and aliases.
        for (const auto& other : device_table()) {
            if (other.name == d.name) continue;
            EXPECT_NE(find_device(other.name)->name, d.name);
        }
    }
}

TEST(ComputeUnit, RoundTrips) {
    for (ComputeUnit u : all_compute_units()) {
        EXPECT_EQ(compute_unit_from_string(to_string(u)), u);
    }
    EXPECT_EQ(to_string(ComputeUnit::kBf16Tensor), "bf16_tensor");
    EXPECT_FALSE(compute_unit_from_string("bf16").has_value());
}

}  // namespace
}  // namespace kforge
