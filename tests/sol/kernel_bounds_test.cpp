// Per-kernel SOL bounds (sol/kernel_bounds.h): a kernel's part of the graph as a problem of its
// own, its boundary tensors read and written once.
#include <gtest/gtest.h>

#include "problems.h"
#include "sol/device.h"
#include "sol/kernel_bounds.h"

namespace kforge {
namespace {

using testing::op;
using testing::tensor;

// Y = softmax(scale(linear(X, W, b))), planned as a gemm (linear, scale -> S) and a rowwise
// softmax (S -> Y).
Problem linear_softmax() {
    const int64_t m = 4096, n = 4096, k = 1024;
    Problem p;
    p.name = "linear_softmax";
    p.tensors = {tensor("X", {m, k}, DType::kBF16, TensorRole::kInput),
                 tensor("W", {n, k}, DType::kBF16, TensorRole::kParam),
                 tensor("b", {n}, DType::kBF16, TensorRole::kParam),
                 tensor("H", {m, n}, DType::kBF16, TensorRole::kIntermediate),
                 tensor("S", {m, n}, DType::kBF16, TensorRole::kIntermediate),
                 tensor("Y", {m, n}, DType::kBF16, TensorRole::kOutput)};
    p.ops = {op(OpKind::kLinear, {"X", "W", "b"}, "H"), op(OpKind::kScale, {"H"}, "S"),
             op(OpKind::kSoftmax, {"S"}, "Y")};
    p.ops[1].attrs.scalar = 0.5;
    p.ops[2].attrs.axis = 1;
    p.outputs = {"Y"};
    p.policy = PrecisionPolicy::kBf16;
    return p;
}

Ceilings h200() { return effective_ceilings(*find_device("h200"), std::nullopt); }

TEST(KernelBounds, AKernelReadsItsInputsAndWritesItsStoresOnce) {
    Problem p = linear_softmax();
    auto gemm = sub_problem(p, {0, 1}, {"S"});
    ASSERT_TRUE(gemm.ok()) << gemm.error().to_string();
    EXPECT_EQ(gemm->outputs, (std::vector<std::string>{"S"}));
    ASSERT_EQ(gemm->tensors.size(), 5u);  // X W b, H intermediate, S out; Y dropped
    EXPECT_EQ(gemm->find_tensor("W")->role, TensorRole::kParam);
    EXPECT_EQ(gemm->find_tensor("H")->role, TensorRole::kIntermediate);
    EXPECT_EQ(gemm->find_tensor("S")->role, TensorRole::kOutput);
    EXPECT_EQ(gemm->find_tensor("Y"), nullptr);
    auto b0 = kernel_bounds(p, {0, 1}, {"S"}, h200());
    ASSERT_TRUE(b0.ok()) << b0.error().to_string();
    const double xwbs = 4096.0 * 1024 * 2 * 2 + 4096.0 * 2 + 4096.0 * 4096 * 2;
    EXPECT_DOUBLE_EQ(b0->work.bytes_fused, xwbs);
    EXPECT_DOUBLE_EQ(b0->work.flops_matrix, 2.0 * 4096 * 4096 * 1024);
    EXPECT_EQ(b0->kind, BoundKind::kCompute);
    // the softmax reads S (an input here) and writes Y: memory-bound
    auto b1 = kernel_bounds(p, {2}, {"Y"}, h200());
    ASSERT_TRUE(b1.ok()) << b1.error().to_string();
    EXPECT_DOUBLE_EQ(b1->work.bytes_fused, 2 * 4096.0 * 4096 * 2);
    EXPECT_EQ(b1->kind, BoundKind::kMemory);
    // every boundary tensor crosses DRAM: the kernels' bounds sum to at least the problem's
    auto whole = compute_bounds(p, h200());
    ASSERT_TRUE(whole.ok());
    EXPECT_GE(b0->time_fused_s + b1->time_fused_s, whole->time_fused_s);
    // the whole graph as one kernel is the problem's own bound
    auto all = kernel_bounds(p, {0, 1, 2}, {"Y"}, h200());
    ASSERT_TRUE(all.ok());
    EXPECT_DOUBLE_EQ(all->time_fused_s, whole->time_fused_s);
}

TEST(KernelBounds, NoOpsOrAnIndexOutOfRangeIsAnError) {
    Problem p = linear_softmax();
    EXPECT_FALSE(sub_problem(p, {}, {"Y"}).ok());
    EXPECT_FALSE(sub_problem(p, {0, 7}, {"S"}).ok());
    // a store the problem does not produce among the ops: the last op's output stands for it
    auto sub = sub_problem(p, {2}, {"T_private"});
    ASSERT_TRUE(sub.ok());
    EXPECT_EQ(sub->outputs, (std::vector<std::string>{"Y"}));
}

}  // namespace
}  // namespace kforge
