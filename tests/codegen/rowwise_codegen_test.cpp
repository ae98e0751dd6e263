// Row-wise and map lowering: golden CUDA for a few programs (tests/codegen/golden_rowwise/*.cu;
// a missing golden file is written and the test fails once, so delete one to regenerate it),
// launch plans (grid, block, cluster, params, workspaces) and user errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/codegen/rowwise_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace testing;
using K = dsl::ChainOpKind;

void expect_golden(const std::string& name, const std::string& source) {
    const std::filesystem::path path =
        std::filesystem::path(KFORGE_TEST_DATA_DIR) / "golden_rowwise" / (name + ".cu");
    std::ifstream in(path);
    if (!in) {
        std::ofstream(path) << source;
        FAIL() << "wrote missing golden file " << path << "; rerun";
    }
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(want.str(), source) << "generated source differs from " << path;
}

TEST(RowwiseCodegen, SoftmaxBf16Golden) {
    Tensors t;
    t.add("X", {"M", "N"}, {4096, 1024}, DType::kBF16).add("Y", {"M", "N"}, {4096, 1024}, DType::kBF16);
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise.vec = 8;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("softmax_bf16", code->device_source);
    ASSERT_EQ(code->launches.size(), 1u);
    const KernelLaunch& l = code->launches[0];
    EXPECT_EQ(l.symbol, "kforge_k0");
    EXPECT_EQ(l.grid[0], 4096u);
    EXPECT_EQ(l.block[0], 256u);
    ASSERT_EQ(l.params.size(), 4u);
    EXPECT_EQ(l.params[0].name, "X");
    EXPECT_EQ(l.params[1].name, "Y");
    EXPECT_EQ(l.params[2].kind, ParamKind::kInt64);
    EXPECT_EQ(l.params[2].int_value, 4096);
    EXPECT_EQ(l.params[3].int_value, 1024);
    EXPECT_TRUE(code->buffers.empty());
}

TEST(RowwiseCodegen, LayerNormChainGolden) {
    Tensors t;
    t.add("X", {"B", "S", "H"}, {8, 512, 768}).add("w", {"H"}, {768}).add("b", {"H"}, {768});
    t.add("R", {"B", "S", "H"}, {8, 512, 768}).add("Y", {"B", "S", "H"}, {8, 512, 768}, DType::kBF16);
    dsl::Kernel k = rowwise("ln", dsl::RowOp::kLayerNorm,
                            {ref("X", {"B", "S", "H"}), ref("w", {"H"}), ref("b", {"H"})},
                            {with(K::kAdd, "R", {"B", "S", "H"}), gelu(GeluApprox::kTanh),
                             store("Y", {"B", "S", "H"})});
    k.rowwise.threads = 128;
    k.rowwise.rows_per_block = 4;
    k.eps = 1e-6;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("layer_norm_residual_gelu", code->device_source);
    EXPECT_EQ(code->launches[0].grid[0], 8u * 512 / 4);
}

TEST(RowwiseCodegen, SplitLogsumexpUsesCluster) {
    Tensors t;
    t.add("T", {"M", "N"}, {128, 65536}).add("Y", {"M"}, {128});
    dsl::Kernel k = rowwise("k1", dsl::RowOp::kLogsumexp, {ref("T", {"M", "N"})},
                            {store("Y", {"M"})});
    k.rowwise.threads = 1024;
    k.rowwise.split = 8;
    k.rowwise.online = true;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("logsumexp_split8", code->device_source);
    EXPECT_EQ(code->launches[0].grid[0], 128u * 8);
    EXPECT_EQ(code->launches[0].cluster[0], 8u);
}

TEST(RowwiseCodegen, ColumnSumUsesWorkspaceAndFinish) {
    Tensors t;
    t.add("X", {"R", "C"}, {262144, 128}).add("Y", {"C"}, {128});
    dsl::Kernel k = rowwise("cs", dsl::RowOp::kSum, {ref("X", {"R", "C"})}, {store("Y", {"C"})});
    k.over = "R";
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("column_sum", code->device_source);
    ASSERT_EQ(code->launches.size(), 2u);
    EXPECT_EQ(code->launches[1].symbol, "kforge_cs_finish");
    ASSERT_EQ(code->buffers.size(), 1u);
    EXPECT_TRUE(code->buffers[0].workspace);
    EXPECT_EQ(code->buffers[0].shape[1], 128);
    EXPECT_EQ(code->launches[0].grid[1], code->buffers[0].shape[0]);
    EXPECT_EQ(code->launches[0].params[1].kind, ParamKind::kWorkspace);
}

TEST(MapCodegen, BiasGeluMulGolden) {
    Tensors t;
    t.add("X", {"R", "C"}, {4096, 4096}).add("b", {"C"}, {4096}).add("G", {"R", "C"}, {4096, 4096});
    t.add("c", {"R"}, {4096}).add("Y", {"R", "C"}, {4096, 4096});
    dsl::Kernel k = map("k0", ref("X", {"R", "C"}),
                        {with(K::kAdd, "b", {"C"}), gelu(GeluApprox::kErf),
                         with(K::kMul, "G", {"R", "C"}), with(K::kSub, "c", {"R"}),
                         op(K::kMul, {0.5}), store("Y", {"R", "C"})});
    k.map.items_per_thread = 2;
    auto code = lower_map(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("map_bias_gelu_mul", code->device_source);
    const KernelLaunch& l = code->launches[0];
    EXPECT_EQ(l.params.size(), 6u);  // X b G c Y numel
    EXPECT_EQ(l.params.back().int_value, 4096LL * 4096);
}

TEST(RowwiseCodegen, VecFallsBackToADivisorOfTheRow) {
    Tensors t;
    t.add("X", {"M", "N"}, {64, 1002}).add("Y", {"M", "N"}, {64, 1002});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kRmsNorm, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    EXPECT_NE(code->device_source.find("kforge::RowCfg<256, 1, 2,"), std::string::npos);
}

TEST(RowwiseCodegenError, RowTooLongForRegisters) {
    Tensors t;
    t.add("X", {"M", "N"}, {128, 262144}).add("Y", {"M", "N"}, {128, 262144});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_FALSE(code.ok());
    EXPECT_NE(code.error().message.find("use passes 2"), std::string::npos);
    k.rowwise.passes = 2;
    EXPECT_TRUE(lower_rowwise(k, t.ctx).ok());
}

TEST(RowwiseCodegenError, BadKnobsAndShapes) {
    Tensors t;
    t.add("X", {"M", "N"}, {128, 512}).add("Y", {"M", "N"}, {128, 512}).add("Z", {"M"}, {128});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise.rows_per_block = 3;
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
    k.rowwise.rows_per_block = 2;
    k.rowwise.split = 2;
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
    k.rowwise.split = 1;
    k.over = "M";
    auto over = lower_rowwise(k, t.ctx);
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.error().message.find("last dim"), std::string::npos);
    k.over.clear();
    k.chain = {store("Z", {"M"})};
    auto size = lower_rowwise(k, t.ctx);
    ASSERT_FALSE(size.ok());
    EXPECT_NE(size.error().message.find("elements"), std::string::npos);
    k.chain = {with(K::kAdd, "Q", {"N"}), store("Y", {"M", "N"})};
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
    k.chain = {op(K::kRelu)};
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
}

}  // namespace
}  // namespace kforge::codegen
