// SOL bounds of conv2d problems: the implicit GEMM's FLOPs at the policy's matrix unit (as a
// matmul's), the bias add on SIMT, memory bound as usual; hand arithmetic on the H200's datasheet
// ceilings (67 TFLOP/s fp32, 494.7 tf32, 989.4 bf16, 4.8 TB/s).
#include <gtest/gtest.h>

#include "problem/spec.h"
#include "sol/bounds.h"

namespace kforge {
namespace {

Ceilings h200() { return effective_ceilings(*find_device("h200"), std::nullopt); }

constexpr double kBw = 4.8e12;

Problem conv_problem(int n, int c, int k, int hw, int pad, const char* dtype, const char* policy,
                     bool bias) {
    std::string dt = std::string("\"") + dtype + "\"";
    std::string text = R"({"name": "conv", "dims": {"N": )" + std::to_string(n) +
                       R"(, "C": )" + std::to_string(c) + R"(, "K": )" + std::to_string(k) +
                       R"(, "H": )" + std::to_string(hw) + R"(, "W": )" + std::to_string(hw) +
                       R"(}, "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": )" + dt +
                       R"(}, "w": {"shape": ["K", "C", 3, 3], "dtype": )" + dt +
                       (bias ? R"(}, "b": {"shape": ["K"], "dtype": )" + dt : std::string()) +
                       R"(}}, "graph": [{"op": "conv2d", "inputs": )" +
                       (bias ? R"(["x", "w", "b"])" : R"(["x", "w"])") +
                       R"(, "output": "y", "padding": )" + std::to_string(pad) +
                       R"(}], "outputs": ["y"], "precision": {"policy": ")" + policy + R"("}})";
    auto p = parse_problem(text, "conv");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// KernelBench level 1's 3-channel 256x256 input, 3x3 to 64 channels: y [16, 64, 254, 254] is
// 264 MB against 3.6 GFLOP, so the bound is the memory's.
TEST(ConvBounds, KernelBenchThreeChannelConvIsMemoryBound) {
    Problem p = conv_problem(16, 3, 64, 256, 0, "f32", "tf32", false);
    auto b = compute_bounds(p, h200());
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    const double flops = 2.0 * 16 * 64 * 254 * 254 * 3 * 9;
    EXPECT_DOUBLE_EQ(b->work.flops_matrix, flops);
    EXPECT_EQ(b->matrix_unit, ComputeUnit::kTf32Tensor);
    EXPECT_NEAR(b->time_compute_s, flops / 494.7e12, 1e-12);
    const double bytes = (16.0 * 3 * 256 * 256 + 64 * 3 * 9 + 16.0 * 64 * 254 * 254) * 4;
    EXPECT_DOUBLE_EQ(b->work.bytes_fused, bytes);
    EXPECT_NEAR(b->time_fused_s, bytes / kBw, 1e-12);  // 55 us
    EXPECT_EQ(b->kind, BoundKind::kMemory);
}

// 256 -> 256 channels at 64x64: compute-bound; fp32_strict takes 3xTF32 like a matmul, bf16 the
// bf16 tensor peak; the bias is one SIMT FLOP per output element.
TEST(ConvBounds, WideConvIsComputeBoundAtTheMatrixUnit) {
    const double flops = 2.0 * 8 * 256 * 64 * 64 * 256 * 9;  // 3.87e10
    auto strict = compute_bounds(conv_problem(8, 256, 256, 64, 1, "f32", "fp32_strict", true), h200());
    ASSERT_TRUE(strict.ok()) << strict.error().to_string();
    EXPECT_TRUE(strict->matrix_tf32x3);
    EXPECT_NEAR(strict->time_compute_s, 3.0 * flops / 494.7e12, 1e-12);
    EXPECT_EQ(strict->kind, BoundKind::kCompute);
    EXPECT_DOUBLE_EQ(strict->work.flops_other, 8.0 * 256 * 64 * 64);
    EXPECT_NEAR(strict->time_simt_s, 8.0 * 256 * 64 * 64 / 67e12, 1e-12);

    auto bf16 = compute_bounds(conv_problem(8, 256, 256, 64, 1, "bf16", "bf16", true), h200());
    ASSERT_TRUE(bf16.ok());
    EXPECT_EQ(bf16->matrix_unit, ComputeUnit::kBf16Tensor);
    EXPECT_NEAR(bf16->time_fused_s, flops / 989.4e12, 1e-12);  // 39 us
    EXPECT_EQ(bf16->kind, BoundKind::kCompute);
    EXPECT_NEAR(bf16->gaming_threshold_s, 0.9 * flops / 989.4e12, 1e-12);
}

}  // namespace
}  // namespace kforge
