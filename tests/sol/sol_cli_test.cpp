// `kforge sol` and `kforge calibrate` through the binary: exit codes and messages for bad input,
// JSON output on a built-in problem.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include "tests/cli_run.h"

namespace {

using kforge::test::CliRun;
using kforge::test::run_cli;

const std::string kGemm = std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_f32_4096.json";

TEST(SolCli, BoundsAsJson) {
    CliRun r = run_cli("sol --json --gpu-model h200 " + kGemm);
    ASSERT_EQ(r.rc, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 1u);
    EXPECT_EQ(j[0]["device"], "h200");
    EXPECT_EQ(j[0]["bound_kind"], "compute");
    // fp32_strict: the 4096^3 matmul as 3xTF32, 3 x 1.374e11 / 494.7e12
    EXPECT_NEAR(j[0]["time_fused_s"].get<double>(), 0.8335e-3, 1e-6);
    EXPECT_EQ(j[0]["matrix_unit"], "tf32_tensor (3xTF32)");
}

// A transcendental chain: SIMT and SFU times beside the others, compute-bound on fp32 SIMT
// (sol/op_cost.cpp: 80 instructions and 4 MUFU per element of 128M).
TEST(SolCli, SfuAndSimtTermsOfATranscendentalChain) {
    const std::string mish =
        std::string(KFORGE_SOURCE_DIR) + "/problems/mish_softplus_chain_f32.json";
    CliRun r = run_cli("sol --json --gpu-model h200 " + mish);
    ASSERT_EQ(r.rc, 0) << r.out;
    auto j = nlohmann::json::parse(r.out)[0];
    const double n = 16384.0 * 8192.0;
    EXPECT_EQ(j["bound_kind"], "compute");
    EXPECT_EQ(j["compute_unit"], "fp32_simt");
    EXPECT_NEAR(j["time_sfu_s"].get<double>(), 4.0 * n / (16.0 * 132 * 1980e6), 1e-9);
    EXPECT_NEAR(j["time_simt_s"].get<double>(), 160.0 * n / 67e12, 1e-9);
    EXPECT_NEAR(j["time_fused_s"].get<double>(), 0.3205e-3, 1e-6);
    EXPECT_DOUBLE_EQ(j["instructions_sfu"].get<double>(), 4.0 * n);
    EXPECT_TRUE(j["per_op"][1].contains("time_sfu_s"));
    r = run_cli("sol --gpu-model h200 " + mish);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("sfu 0.1284 ms"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("compute-bound on fp32_simt"), std::string::npos) << r.out;
}

TEST(SolCli, PolicyOverride) {
    CliRun r = run_cli("sol --json --policy tf32 " + kGemm);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NEAR(nlohmann::json::parse(r.out)[0]["time_fused_s"].get<double>(), 0.2778e-3, 1e-6);
}

TEST(SolCli, BadDeviceIsUserError) {
    CliRun r = run_cli("sol --gpu-model h300 " + kGemm);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("unknown device \"h300\"; known devices: "), std::string::npos) << r.out;
}

TEST(SolCli, BadPolicyIsUserError) {
    CliRun r = run_cli("sol --policy bf17 " + kGemm);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("unknown policy"), std::string::npos) << r.out;
}

TEST(SolCli, MissingSpecIsUserError) {
    CliRun r = run_cli("sol /nonexistent/kforge/problem.json");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("/nonexistent/kforge/problem.json"), std::string::npos) << r.out;
}

TEST(SolCli, CalibrationFromAnotherDeviceIsUserError) {
    const auto path = std::filesystem::temp_directory_path() / "kforge_sol_cli_cal.json";
    std::ofstream(path) << R"({"device": "a100-sxm", "dram_bytes_per_s": 1.9e12})";
    CliRun r = run_cli("sol --gpu-model h200 --calibration " + path.string() + " " + kGemm);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("measured on \"a100-sxm\""), std::string::npos) << r.out;
    std::ofstream(path) << R"({"device": "h200", "dram_bytes_per_s": 1e12,
                               "peak_flops": {"fp32_simt": 50e12, "tf32_tensor": 400e12}})";
    r = run_cli("sol --json --calibration " + path.string() + " " + kGemm);
    ASSERT_EQ(r.rc, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j[0]["time_compute_s"].get<double>(), 3 * 2.0 * 4096.0 * 4096 * 4096 / 400e12,
                1e-9);
    std::filesystem::remove(path);
}

TEST(CalibrateCli, NoGpuIsEnvironmentError) {
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        GTEST_SKIP() << "a GPU is present; this case covers machines without one";
    }
    CliRun r = run_cli("calibrate");
    EXPECT_EQ(r.rc, 3);
    EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r.out;
}

}  // namespace
