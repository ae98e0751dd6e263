// Calibration JSON round trip and validation; calibrated ceilings overriding the datasheet.
#include "sol/calibration.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kforge {
namespace {

Calibration sample() {
    Calibration c;
    c.device = "h200";
    c.dram_bytes_per_s = 4.3e12;
    c.peak_flops["bf16_tensor"] = 790e12;
    c.peak_flops["fp32_simt"] = 55e12;
    c.measured_at = "2026-12-01T10:00:00Z";
    c.driver = "CUDA driver 13000, runtime 13000";
    c.notes = "test";
    return c;
}

TEST(Calibration, JsonRoundTrip) {
    const Calibration c = sample();
    auto back = calibration_from_json(calibration_to_json(c), "mem");
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->device, c.device);
    EXPECT_DOUBLE_EQ(back->dram_bytes_per_s, c.dram_bytes_per_s);
    EXPECT_EQ(back->peak_flops, c.peak_flops);
    EXPECT_EQ(back->measured_at, c.measured_at);
    EXPECT_EQ(back->driver, c.driver);
    EXPECT_EQ(back->notes, c.notes);
}

TEST(Calibration, FileRoundTrip) {
    const auto dir = std::filesystem::temp_directory_path() / "kforge_calibration_test";
    std::filesystem::remove_all(dir);
    const std::string path = (dir / "sub" / "cal.json").string();
    ASSERT_TRUE(save_calibration(sample(), path).ok());
    auto back = load_calibration(path);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_DOUBLE_EQ(back->peak_flops.at("bf16_tensor"), 790e12);
    std::filesystem::remove_all(dir);
}

TEST(Calibration, BadInputsAreUserErrors) {
    auto expect_error = [](const std::string& text, const std::string& needle) {
        auto c = calibration_from_json(text, "cal.json");
        ASSERT_FALSE(c.ok()) << text;
        EXPECT_NE(c.error().to_string().find(needle), std::string::npos) << c.error().to_string();
    };
    expect_error("{", "malformed");
    expect_error("[1]", "JSON object");
    expect_error(R"({"dram_bytes_per_s": 1e12})", "missing key \"device\"");
    expect_error(R"({"device": "h200"})", "dram_bytes_per_s");
    expect_error(R"({"device": "h200", "dram_bytes_per_s": -1})", "positive");
    expect_error(R"({"device": "h200", "dram_bytes_per_s": 1e12, "peak_flops": {"bf16": 1}})",
                 "unknown compute unit");
    expect_error(R"({"device": "h200", "dram_bytes_per_s": 1e12,
                     "peak_flops": {"bf16_tensor": "fast"}})",
                 "positive number");
    EXPECT_FALSE(load_calibration("/nonexistent/kforge/cal.json").ok());
}

TEST(Ceilings, DatasheetWithoutCalibration) {
    const auto spec = *find_device("h200");
    const Ceilings c = effective_ceilings(spec, std::nullopt);
    EXPECT_EQ(c.source, "datasheet");
    EXPECT_DOUBLE_EQ(c.dram_bytes_per_s, 4.8e12);
    EXPECT_DOUBLE_EQ(c.peak(ComputeUnit::kBf16Tensor), 989.4e12);
    EXPECT_FALSE(c.calibrated_dram);
}

TEST(Ceilings, CalibrationOverridesMeasuredUnitsOnly) {
    const auto spec = *find_device("h200");
    const Ceilings c = effective_ceilings(spec, sample());
    EXPECT_EQ(c.source, "calibrated 2026-12-01T10:00:00Z");
    EXPECT_DOUBLE_EQ(c.dram_bytes_per_s, 4.3e12);
    EXPECT_TRUE(c.calibrated_dram);
    EXPECT_DOUBLE_EQ(c.peak(ComputeUnit::kBf16Tensor), 790e12);
    EXPECT_DOUBLE_EQ(c.peak(ComputeUnit::kFp32Simt), 55e12);
    EXPECT_DOUBLE_EQ(c.peak(ComputeUnit::kTf32Tensor), 494.7e12);  // not measured: datasheet
    EXPECT_TRUE(c.calibrated.at(ComputeUnit::kBf16Tensor));
    EXPECT_EQ(c.calibrated.count(ComputeUnit::kTf32Tensor), 0u);
}

TEST(Ceilings, CalibrationMustMatchTheDevice) {
    Calibration c = sample();
    EXPECT_TRUE(check_calibration(*find_device("h200"), c).ok());
    c.device = "NVIDIA H200";  // a CUDA name also identifies it
    EXPECT_TRUE(check_calibration(*find_device("h200"), c).ok());
    auto wrong = check_calibration(*find_device("a100"), c);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().where, "--calibration");
}

}  // namespace
}  // namespace kforge
