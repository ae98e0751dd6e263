// The element-wise prologue of a row reduction (`rowwise sum(A[M,K]) pre { mul B[K,1] }`):
// golden CUDA (tests/codegen/golden_rowwise/*.cu; a missing golden file is written and the test
// fails once), launch parameters, and the reductions without a prologue left unchanged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/codegen/rowwise_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace testing;
using K = dsl::ChainOpKind;

std::string golden(const std::string& name, const std::string& source) {
    const std::filesystem::path path =
        std::filesystem::path(KFORGE_TEST_DATA_DIR) / "golden_rowwise" / (name + ".cu");
    std::ifstream in(path);
    if (!in) {
        std::ofstream(path) << source;
        ADD_FAILURE() << "wrote missing golden file " << path << "; rerun";
        return source;
    }
    std::stringstream want;
    want << in.rdbuf();
    return want.str();
}

TEST(RowPrologueCodegen, MatvecGolden) {
    Tensors t;
    t.add("A", {"M", "K"}, {2048, 65536}).add("B", {"K", "1"}, {65536, 1});
    t.add("C", {"M", "1"}, {2048, 1});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSum, {ref("A", {"M", "K"})}, {store("C", {"M", "1"})});
    k.pre = {with(K::kMul, "B", {"K", "1"})};
    k.rowwise.threads = 512;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    const std::string& src = code->device_source;
    EXPECT_EQ(golden("matvec_row_sum_pre", src), src);
    // The operand is loaded as a vector of 4 (contiguous along K) and is part of the aligned check.
    EXPECT_NE(src.find("kforge::load_bcast<V, (V == 1 || 65536 % V == 0)>(s[1], t_B"),
              std::string::npos)
        << src;
    EXPECT_NE(src.find("pre.aligned<4>()"), std::string::npos) << src;
    EXPECT_NE(src.find(", chain, pre);"), std::string::npos) << src;
    ASSERT_EQ(code->launches.size(), 1u);
    const KernelLaunch& l = code->launches[0];
    EXPECT_EQ(l.grid[0], 2048u);
    EXPECT_EQ(l.block[0], 512u);
    ASSERT_EQ(l.params.size(), 5u);  // A, C, B, rows, n
    EXPECT_EQ(l.params[0].name, "A");
    EXPECT_EQ(l.params[1].name, "C");
    EXPECT_EQ(l.params[2].name, "B");
    EXPECT_EQ(l.params[3].int_value, 2048);
    EXPECT_EQ(l.params[4].int_value, 65536);
}

TEST(RowPrologueCodegen, MseChainWithBroadcastsGolden) {
    Tensors t;
    t.add("P", {"R", "C"}, {128, 4096}, DType::kBF16).add("T", {"R", "C"}, {128, 4096}, DType::kBF16);
    t.add("w", {"C"}, {4096}).add("s", {"R"}, {128}).add("Y", {"R"}, {128});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kMean, {ref("P", {"R", "C"})},
                            {op(K::kMul, {0.5}), store("Y", {"R"})});
    dsl::ChainOp let_d = op(K::kLet);
    let_d.name = "d";
    dsl::ChainOp mul_d = op(K::kMul);
    mul_d.name = "d";
    k.pre = {with(K::kSub, "T", {"R", "C"}), let_d, mul_d, with(K::kMul, "w", {"C"}),
             with(K::kDiv, "s", {"R"}), op(K::kAdd, {1.0})};
    k.rowwise.vec = 8;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    const std::string& src = code->device_source;
    EXPECT_EQ(golden("mse_row_mean_pre", src), src);
    // T and w are contiguous along C, s[R] is one value per row (element loads).
    EXPECT_NE(src.find("load_bcast<V, (V == 1 || 4096 % V == 0)>(s[1], t_T"), std::string::npos)
        << src;
    EXPECT_NE(src.find("load_bcast<V, (V == 1 || 4096 % V == 0)>(s[2], t_w"), std::string::npos)
        << src;
    EXPECT_NE(src.find("load_bcast<V, (V == 1)>(s[3], t_s"), std::string::npos) << src;
}

TEST(RowPrologueCodegen, NoPrologueSourceUnchanged) {
    // The same reduction without `pre` emits no prologue functor and calls the template as before.
    Tensors t;
    t.add("A", {"M", "K"}, {64, 1024}).add("C", {"M"}, {64});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSum, {ref("A", {"M", "K"})}, {store("C", {"M"})});
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    EXPECT_EQ(code->device_source.find("_pre"), std::string::npos);
    EXPECT_NE(code->device_source.find("(t_A, rows, n, chain);"), std::string::npos)
        << code->device_source;
}

TEST(RowPrologueCodegen, Errors) {
    Tensors t;
    t.add("A", {"M", "K"}, {64, 1024}).add("B", {"K"}, {1024}).add("C", {"M"}, {64});
    t.add("S", {"K"}, {1024}).add("Y", {"M", "K"}, {64, 1024});
    // A column reduction has no prologue.
    dsl::Kernel col = rowwise("k0", dsl::RowOp::kSum, {ref("A", {"M", "K"})}, {store("S", {"K"})});
    col.over = "M";
    col.pre = {op(K::kAbs)};
    auto code = lower_rowwise(col, t.ctx);
    ASSERT_FALSE(code.ok());
    EXPECT_NE(code.error().message.find("over the last dim only"), std::string::npos)
        << code.error().to_string();
    // Nor does softmax.
    dsl::Kernel sm = rowwise("k0", dsl::RowOp::kSoftmax, {ref("A", {"M", "K"})}, {store("Y", {"M", "K"})});
    sm.pre = {op(K::kAbs)};
    code = lower_rowwise(sm, t.ctx);
    ASSERT_FALSE(code.ok());
    // A store inside the prologue.
    dsl::Kernel st = rowwise("k0", dsl::RowOp::kSum, {ref("A", {"M", "K"})}, {store("C", {"M"})});
    st.pre = {with(K::kMul, "B", {"K"}), store("Y", {"M", "K"})};
    code = lower_rowwise(st, t.ctx);
    ASSERT_FALSE(code.ok());
    EXPECT_NE(code.error().message.find("stores nothing"), std::string::npos)
        << code.error().to_string();
}

}  // namespace
}  // namespace kforge::codegen
