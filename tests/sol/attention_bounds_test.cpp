// SOL bounds of attention problems (issue 25): the FLOPs of both products (Q K^T and P V, 2 S L E
// + 2 S L F per batch entry) at the policy's matrix unit, the softmax and scale on SIMT, and the
// compulsory traffic Q, K, V (and a mask) read once and O written once - what one fused attention
// kernel must move; the unfused bytes count the [.., S, L] scores each op writes and reads. A
// causal mask is data (a bool input drawn at random), so nothing is halved. Hand arithmetic on
// the H200's datasheet ceilings (989.4 TFLOP/s bf16, 4.8 TB/s).
#include <gtest/gtest.h>

#include <algorithm>

#include "problem/spec.h"
#include "sol/bounds.h"

namespace kforge {
namespace {

Ceilings h200() { return effective_ceilings(*find_device("h200"), std::nullopt); }

Problem attention(bool mask) {
    const std::string text = std::string(R"({"name": "attention",
        "dims": {"B": 4, "H": 16, "S": 2048, "E": 64},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"},
                   "k": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"},
                   "v": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"})") +
        (mask ? R"(, "m": {"shape": ["S", "S"], "dtype": "bool"})" : "") + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},)" +
        (mask ? R"({"op": "masked_fill", "inputs": ["t", "m"], "value": "-inf", "output": "u"},
                  {"op": "softmax", "inputs": ["u"], "axis": -1, "output": "p"},)"
              : R"({"op": "softmax", "inputs": ["t"], "axis": -1, "output": "p"},)") + R"(
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "bf16"}})";
    auto p = parse_problem(text, "attention");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

TEST(AttentionBounds, BothProductsAtTheTensorCoresAgainstQkvoTraffic) {
    auto b = compute_bounds(attention(false), h200());
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    const double scores = 4.0 * 16 * 2048 * 2048;
    EXPECT_DOUBLE_EQ(b->work.flops_matrix, 2.0 * scores * (64 + 64));  // 68.7 GFLOP
    EXPECT_EQ(b->matrix_unit, ComputeUnit::kBf16Tensor);
    const double qkvo = 4.0 * 4 * 16 * 2048 * 64 * 2;  // 33.6 MB
    EXPECT_DOUBLE_EQ(b->work.bytes_fused, qkvo);
    EXPECT_NEAR(b->time_fused_s, std::max(b->time_compute_s, qkvo / 4.8e12), 1e-12);
    // the busiest of the tensor cores (69 us) and the softmax's SIMT / SFU work over the scores
    const double tensor = 2.0 * scores * 128 / 989.4e12;
    EXPECT_NEAR(b->time_compute_s, std::max({tensor, b->time_simt_s, b->time_sfu_s}), 1e-9);
    EXPECT_GE(b->time_compute_s, tensor);
    EXPECT_EQ(b->kind, BoundKind::kCompute);
    // unfused: the bf16 scores written and read by each of scale, softmax and the second matmul
    EXPECT_GT(b->work.bytes_unfused, qkvo + 5 * scores * 2);
}

TEST(AttentionBounds, AMaskIsReadOnceAndHalvesNothing) {
    auto plain = compute_bounds(attention(false), h200());
    auto masked = compute_bounds(attention(true), h200());
    ASSERT_TRUE(plain.ok() && masked.ok());
    EXPECT_DOUBLE_EQ(masked->work.bytes_fused, plain->work.bytes_fused + 2048.0 * 2048);
    EXPECT_DOUBLE_EQ(masked->work.flops_matrix, plain->work.flops_matrix);
}

}  // namespace
}  // namespace kforge
