// Work counting (problem/work.h): FLOP and byte conventions checked by hand arithmetic on
// problems built directly (no parser).
#include "problem/work.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Tensor tensor(std::string name, std::vector<int64_t> shape, DType dtype, TensorRole role) {
    Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dim_names.assign(t.shape.size(), "");
    t.dtype = dtype;
    t.role = role;
    return t;
}

Op op(OpKind kind, std::vector<std::string> inputs, std::string output) {
    Op o;
    o.kind = kind;
    o.inputs = std::move(inputs);
    o.output = std::move(output);
    return o;
}

constexpr auto kIn = TensorRole::kInput;
constexpr auto kParam = TensorRole::kParam;
constexpr auto kMid = TensorRole::kIntermediate;
constexpr auto kOut = TensorRole::kOutput;

TEST(Work, MatmulFp32_4096) {
    Problem p;
    p.tensors = {tensor("A", {4096, 4096}, DType::kF32, kIn),
                 tensor("B", {4096, 4096}, DType::kF32, kIn),
                 tensor("C", {4096, 4096}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kMatmul, {"A", "B"}, "C")};
    p.outputs = {"C"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    EXPECT_DOUBLE_EQ(w->flops_matrix, 2.0 * 4096.0 * 4096.0 * 4096.0);  // 1.374e11
    EXPECT_DOUBLE_EQ(w->flops_other, 0.0);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 3.0 * 4096 * 4096 * 4);
    EXPECT_DOUBLE_EQ(w->bytes_unfused, 3.0 * 4096 * 4096 * 4);
    ASSERT_EQ(w->per_op.size(), 1u);
    EXPECT_EQ(w->per_op[0].output, "C");
}

TEST(Work, BatchedTransposedMatmulUsesContractedDim) {
    // A [8, K=64, M=32] transposed -> [8, 32, 64]; B [8, 64, 16]; C [8, 32, 16].
    Problem p;
    p.tensors = {tensor("A", {8, 64, 32}, DType::kBF16, kIn),
                 tensor("B", {8, 64, 16}, DType::kBF16, kIn),
                 tensor("C", {8, 32, 16}, DType::kBF16, kOut)};
    p.ops = {op(OpKind::kMatmul, {"A", "B"}, "C")};
    p.ops[0].attrs.transpose_a = true;
    p.outputs = {"C"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_DOUBLE_EQ(w->flops_matrix, 2.0 * 8 * 32 * 16 * 64);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 2.0 * (8 * 64 * 32 + 8 * 64 * 16 + 8 * 32 * 16));
}

TEST(Work, LinearBiasCountsBiasAddAsOther) {
    Problem p;
    p.tensors = {
        tensor("X", {128, 256}, DType::kBF16, kIn), tensor("W", {512, 256}, DType::kBF16, kParam),
        tensor("b", {512}, DType::kBF16, kParam), tensor("Y", {128, 512}, DType::kBF16, kOut)};
    p.ops = {op(OpKind::kLinear, {"X", "W", "b"}, "Y")};
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_DOUBLE_EQ(w->flops_matrix, 2.0 * 128 * 512 * 256);
    EXPECT_DOUBLE_EQ(w->flops_other, 128.0 * 512);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 2.0 * (128 * 256 + 512 * 256 + 512 + 128 * 512));
}

TEST(Work, SoftmaxIsFivePerElement) {
    Problem p;
    p.tensors = {tensor("X", {1024, 4096}, DType::kF32, kIn),
                 tensor("Y", {1024, 4096}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kSoftmax, {"X"}, "Y")};
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_DOUBLE_EQ(w->flops_matrix, 0.0);
    EXPECT_DOUBLE_EQ(w->flops_other, 5.0 * 1024 * 4096);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 2.0 * 1024 * 4096 * 4);
}

TEST(Work, ReductionCountsInputElementsAndNormsEight) {
    Problem p;
    p.tensors = {tensor("X", {64, 1000}, DType::kF32, kIn),
                 tensor("N", {64, 1000}, DType::kF32, kMid), tensor("S", {64}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kRmsNorm, {"X"}, "N"), op(OpKind::kSum, {"N"}, "S")};
    p.outputs = {"S"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_DOUBLE_EQ(w->per_op[0].flops_other, 8.0 * 64000);
    EXPECT_DOUBLE_EQ(w->per_op[1].flops_other, 64000.0);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 4.0 * (64000 + 64));
    EXPECT_DOUBLE_EQ(w->bytes_unfused, 4.0 * (64000 + 64000 + 64000 + 64));
}

TEST(Work, NormalizeCountsThreePerElementAndOneReadOneWrite) {
    Problem p;
    p.tensors = {tensor("X", {16384, 4096}, DType::kBF16, kIn),
                 tensor("Y", {16384, 4096}, DType::kBF16, kOut)};
    p.ops = {op(OpKind::kL2Normalize, {"X"}, "Y")};
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    const double n = 16384.0 * 4096;
    EXPECT_DOUBLE_EQ(w->flops_other, 3.0 * n);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 2.0 * n * 2);
    EXPECT_DOUBLE_EQ(w->bytes_unfused, 2.0 * n * 2);
    p.ops[0].kind = OpKind::kL1Normalize;
    EXPECT_DOUBLE_EQ(count_work(p)->flops_other, 3.0 * n);
}

TEST(Work, ScanCountsOnePerElementAndOneReadOneWrite) {
    Problem p;
    p.tensors = {tensor("X", {128, 32768}, DType::kF32, kIn),
                 tensor("Y", {128, 32768}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kCumsum, {"X"}, "Y")};
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    const double n = 128.0 * 32768;
    EXPECT_DOUBLE_EQ(w->flops_other, n);
    EXPECT_DOUBLE_EQ(w->flops_matrix, 0.0);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 2.0 * n * 4);
    EXPECT_DOUBLE_EQ(w->bytes_unfused, 2.0 * n * 4);
    p.ops[0].kind = OpKind::kCumprod;
    EXPECT_DOUBLE_EQ(count_work(p)->flops_other, n);
}

TEST(Work, FusedChainCountsIntermediatesOnlyUnfused) {
    // Y = gelu(X + b) * G, b broadcast [C]: fused reads X, b, G and writes Y once.
    const int64_t r = 1024, c = 512, n = r * c;
    Problem p;
    p.tensors = {tensor("X", {r, c}, DType::kF32, kIn),  tensor("b", {c}, DType::kF32, kParam),
                 tensor("G", {r, c}, DType::kF32, kIn),  tensor("H", {r, c}, DType::kF32, kMid),
                 tensor("A", {r, c}, DType::kF32, kMid), tensor("Y", {r, c}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kAdd, {"X", "b"}, "H"), op(OpKind::kGelu, {"H"}, "A"),
             op(OpKind::kMul, {"A", "G"}, "Y")};
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_DOUBLE_EQ(w->flops_other, (1.0 + 8.0 + 1.0) * n);
    EXPECT_DOUBLE_EQ(w->bytes_fused, 4.0 * (3 * n + c));
    // add: X + b -> H; gelu: H -> A; mul: A + G -> Y
    EXPECT_DOUBLE_EQ(w->bytes_unfused, 4.0 * ((n + c + n) + (n + n) + (n + n + n)));
    EXPECT_GT(w->bytes_unfused, w->bytes_fused);
}

TEST(Work, ElementwiseTable) {
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kAdd), 1.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kDropout), 0.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kExp), 4.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kGelu), 8.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kMish), 10.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kMatmul), -1.0);
    EXPECT_EQ(elementwise_flops_per_element(OpKind::kSoftmax), -1.0);
}

TEST(Work, UnknownTensorIsAnErrorNamingTheOp) {
    Problem p;
    p.tensors = {tensor("X", {4}, DType::kF32, kIn), tensor("Y", {4}, DType::kF32, kOut)};
    p.ops = {op(OpKind::kRelu, {"Z"}, "Y")};
    p.ops[0].json_path = "graph[0]";
    p.outputs = {"Y"};
    auto w = count_work(p);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().where, "graph[0]");
    EXPECT_NE(w.error().message.find("\"Z\""), std::string::npos);
}

}  // namespace
}  // namespace kforge
