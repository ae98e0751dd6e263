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

// BatchNorm's statistics: mean over N, H, W of [N, C, H, W] in one launch (kernels/reduce_set.cuh):
// the kept C and the reduced N as groups, H * W one contiguous run read in vectors of 4, slices
// over the run that fill the SMs and a finish launch over C (32 images; at 2 one block an
// output does); the chain indexes the 64 outputs.
TEST(RowwiseCodegen, SetMeanIsOneLaunchPlusFinish) {
    Tensors t;
    t.add("X", {"N", "C", "H", "W"}, {32, 64, 56, 56}).add("Y", {"C"}, {64});
    dsl::Kernel k = rowwise("bn", dsl::RowOp::kMean, {ref("X", {"N", "C", "H", "W"})},
                            {store("Y", {"C"})});
    k.over = "N,H,W";
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("set_mean_bn", code->device_source);
    ASSERT_EQ(code->launches.size(), 2u);
    const KernelLaunch& l = code->launches[0];
    EXPECT_EQ(l.grid[0], 64u);
    const auto param = [&](const std::string& name) {
        for (const auto& p : l.params)
            if (p.name == name) return p.int_value;
        ADD_FAILURE() << "no param " << name;
        return int64_t{-1};
    };
    EXPECT_EQ(param("run"), 56 * 56);
    EXPECT_EQ(param("total"), 32 * 56 * 56);
    EXPECT_EQ(param("outputs"), 64);
    EXPECT_EQ(param("kext0"), 64);
    EXPECT_EQ(param("kstr0"), 56 * 56);
    EXPECT_EQ(param("rext0"), 32);
    EXPECT_EQ(param("rstr0"), 64 * 56 * 56);
    EXPECT_EQ(param("chunk") % 4, 0);
    EXPECT_GT(l.grid[1], 1u);
    EXPECT_EQ(int64_t(l.grid[1]), code->buffers.at(0).shape[0]);
    EXPECT_EQ(code->launches[1].symbol, "kforge_bn_finish");
    EXPECT_NE(code->device_source.find("reduce_set<256, 4, 1, 1"), std::string::npos);

    // up to 32768 elements an output: one block each, no finish launch
    Tensors small;
    small.add("X", {"N", "C", "H", "W"}, {2, 64, 56, 56}).add("Y", {"C"}, {64});
    auto one = lower_rowwise(k, small.ctx);
    ASSERT_TRUE(one.ok()) << one.error().to_string();
    EXPECT_EQ(one->launches.size(), 1u);
    EXPECT_EQ(one->launches[0].grid[1], 1u);
    EXPECT_TRUE(one->buffers.empty());

    // a user's set with a dim the input lacks, or a row op that does not reduce
    k.over = "N,Q";
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
    k.over = "N,H,W";
    k.row_op = dsl::RowOp::kSoftmax;
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
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

// l1 / l2 normalize: norm_rows in the normalize modes, no weight, the eps as given (0: plain
// division) or the problem's; only over the last dim.
TEST(RowwiseCodegen, NormalizeGolden) {
    Tensors t;
    t.add("X", {"M", "N"}, {16384, 4096}, DType::kBF16)
        .add("Y", {"M", "N"}, {16384, 4096}, DType::kBF16);
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kL2Normalize, {ref("X", {"M", "N"})},
                            {cast(DType::kBF16), store("Y", {"M", "N"})});
    k.rowwise.vec = 8;
    k.eps = 1e-12;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    expect_golden("l2_normalize_bf16", code->device_source);
    EXPECT_NE(code->device_source.find("kforge::NormMode::kL2Normalize, false, false"),
              std::string::npos);
    EXPECT_EQ(code->launches.at(0).grid[0], 16384u);
    ASSERT_EQ(code->launches[0].params.size(), 4u);  // X Y rows n: no weight
    dsl::Kernel l1 = rowwise("k1", dsl::RowOp::kL1Normalize, {ref("X", {"M", "N"})},
                             {store("Y", {"M", "N"})});
    auto c1 = lower_rowwise(l1, t.ctx);
    ASSERT_TRUE(c1.ok()) << c1.error().to_string();
    EXPECT_NE(c1->device_source.find("kforge::NormMode::kL1Normalize"), std::string::npos);
    EXPECT_NE(c1->device_source.find("kforge::NormShape{0.0f"), std::string::npos)
        << c1->device_source;
    dsl::Kernel over = l1;
    over.over = "M";
    auto bad = lower_rowwise(over, t.ctx);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().to_string().find("run over the last dim"), std::string::npos);
    dsl::Kernel weighted = l1;
    weighted.args.push_back(ref("Y", {"M", "N"}));
    EXPECT_FALSE(lower_rowwise(weighted, t.ctx).ok());
}

// cumsum / cumprod: scan_rows with the mode and flags as template arguments, one block per row
// (or per rows_per_block rows), the vector width a divisor of the row; split, passes 2, wide
// row groups beside rows_per_block > 1 and leading dims are refused.
TEST(RowwiseCodegen, ScanRows) {
    Tensors t;
    t.add("X", {"M", "N"}, {128, 4000}).add("Y", {"M", "N"}, {128, 4000});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kCumsum, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise.vec = 8;
    k.rowwise.reverse = true;
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    const std::string& src = code->device_source;
    EXPECT_NE(src.find("#include \"kernels/scan.cuh\""), std::string::npos) << src;
    EXPECT_NE(src.find("kforge::scan_rows<kforge::ScanCfg<256, 1, 8>, kforge::ScanMode::kSum, "
                       "true, false>(t_X, rows, n, chain)"),
              std::string::npos)
        << src;
    EXPECT_NE(src.find("kforge::ScanCfg<256, 1, 1>"), std::string::npos) << src;  // unaligned
    EXPECT_EQ(code->launches.at(0).grid[0], 128u);
    EXPECT_EQ(code->launches[0].block[0], 256u);
    ASSERT_EQ(code->launches[0].params.size(), 4u);  // X Y rows n

    t.add("Z", {"M", "N"}, {128, 4002}).add("W", {"M", "N"}, {128, 4002});
    dsl::Kernel p = rowwise("k1", dsl::RowOp::kCumprod, {ref("Z", {"M", "N"})},
                            {store("W", {"M", "N"})});
    p.rowwise.threads = 128;
    p.rowwise.rows_per_block = 4;
    p.rowwise.exclusive = true;
    auto c1 = lower_rowwise(p, t.ctx);
    ASSERT_TRUE(c1.ok()) << c1.error().to_string();
    EXPECT_NE(c1->device_source.find("kforge::ScanCfg<128, 4, 2>, kforge::ScanMode::kProd, "
                                     "false, true>"),
              std::string::npos)
        << c1->device_source;
    EXPECT_EQ(c1->launches.at(0).grid[0], 32u);

    dsl::Kernel wide = p;
    wide.rowwise.threads = 256;
    wide.rowwise.rows_per_block = 2;
    auto bad = lower_rowwise(wide, t.ctx);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().to_string().find("one row per warp or less"), std::string::npos);
    dsl::Kernel split = k;
    split.rowwise.split = 2;
    EXPECT_FALSE(lower_rowwise(split, t.ctx).ok());
    dsl::Kernel passes = k;
    passes.rowwise.passes = 2;
    EXPECT_FALSE(lower_rowwise(passes, t.ctx).ok());
    dsl::Kernel over = k;
    over.over = "M";
    bad = lower_rowwise(over, t.ctx);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().to_string().find("cumsum and cumprod run over the last dim"),
              std::string::npos);
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

// At a correctness shape configured by the full one (LowerContext::config), the row kernel
// keeps the full rows' vector width and holding, so both shapes lower to one source; the launch
// is still this shape's. Rows the full vector width does not divide get their own configuration.
TEST(RowwiseCodegen, CorrectnessShapeSharesTheFullShapesSource) {
    auto lower_at = [](int64_t rows, int64_t n, const LowerContext* config) {
        Tensors t;
        t.add("X", {"M", "N"}, {rows, n}, DType::kBF16).add("Y", {"M", "N"}, {rows, n}, DType::kBF16);
        t.ctx.config = config;
        dsl::Kernel k = rowwise("k0", dsl::RowOp::kLogSoftmax, {ref("X", {"M", "N"})},
                                {store("Y", {"M", "N"})});
        k.rowwise.vec = 8;
        return lower_rowwise(k, t.ctx);
    };
    Tensors full;
    full.add("X", {"M", "N"}, {4096, 32000}, DType::kBF16)
        .add("Y", {"M", "N"}, {4096, 32000}, DType::kBF16);
    auto at_full = lower_at(4096, 32000, nullptr);
    auto alone = lower_at(64, 256, nullptr);
    auto shared = lower_at(64, 256, &full.ctx);
    auto odd = lower_at(64, 252, &full.ctx);
    ASSERT_TRUE(at_full.ok() && alone.ok() && shared.ok() && odd.ok());
    EXPECT_NE(alone->device_source, at_full->device_source);  // 16 items: 2 per thread
    EXPECT_EQ(shared->device_source, at_full->device_source);
    EXPECT_NE(shared->device_source.find("configured for rows of 32000"), std::string::npos);
    const KernelLaunch& l = shared->launches.at(0);
    EXPECT_EQ(l.grid[0], 64u);
    EXPECT_EQ(l.params.at(3).int_value, 256);  // n: this shape's
    EXPECT_EQ(l.smem_bytes, at_full->launches.at(0).smem_bytes);
    // 252 is not a multiple of 8: vec 4 and the holding of these rows
    EXPECT_EQ(odd->device_source, lower_at(64, 252, nullptr)->device_source);
    EXPECT_NE(odd->device_source.find("kforge::RowCfg<256, 1, 4,"), std::string::npos);
}

TEST(RowwiseCodegen, Split16UsesA16CtaCluster) {
    Tensors t;
    t.add("X", {"M", "N"}, {128, 1048576}).add("Y", {"M", "N"}, {128, 1048576});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise = {1, 1024, 4, 2, true, 16, false};
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    EXPECT_EQ(code->launches[0].grid[0], 128u * 16);
    EXPECT_EQ(code->launches[0].cluster[0], 16u);
    EXPECT_EQ(code->launches[0].smem_bytes, 0u);
    EXPECT_NE(code->device_source.find("kforge::RowCfg<1024, 1, 4, 0, 16>"), std::string::npos);
    k.rowwise.split = 17;
    EXPECT_FALSE(lower_rowwise(k, t.ctx).ok());
}

// passes 2 smem_stage: as many vectors per thread as 227 KiB (less the static reserve) hold;
// the CTA's part of a 1M-f32 row over 16 CTAs is 256 KiB, so 14 of its 16 vectors per thread.
TEST(RowwiseCodegen, SmemStageFillsSharedMemoryAndRereadsTheRest) {
    Tensors t;
    t.add("X", {"M", "N"}, {128, 1048576}).add("Y", {"M", "N"}, {128, 1048576});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise = {1, 1024, 4, 2, true, 16, true};
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    EXPECT_NE(code->device_source.find("kforge::RowCfg<1024, 1, 4, 0, 16, 14>"), std::string::npos)
        << code->device_source;
    // the scalar fallback (unaligned pointers) streams
    EXPECT_NE(code->device_source.find("kforge::RowCfg<1024, 1, 1, 0, 16>"), std::string::npos);
    EXPECT_EQ(code->launches[0].smem_bytes, 14u * 1024 * 16);
    // sm_80 has 163 KiB: 10 vectors per thread
    Tensors a = t;
    a.ctx.arch = "sm_80";
    auto code80 = lower_rowwise(k, a.ctx);
    ASSERT_TRUE(code80.ok()) << code80.error().to_string();
    EXPECT_EQ(code80->launches[0].smem_bytes, 10u * 1024 * 16);
}

// passes 1 beyond 64 values per thread keeps the row in shared memory (here a 32000-entry bf16
// row over 256 threads: 16 vectors of 8 per thread, 64 KiB per block), and smem_stage does so
// even where registers would do; a row that shared memory cannot hold is refused.
TEST(RowwiseCodegen, PassesOneKeepsLongRowsInSharedMemory) {
    Tensors t;
    t.add("X", {"M", "N"}, {16384, 32000}, DType::kBF16).add("Y", {"M", "N"}, {16384, 32000}, DType::kBF16);
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kLogSoftmax, {ref("X", {"M", "N"})},
                            {store("Y", {"M", "N"})});
    k.rowwise = {1, 256, 8, 1, true, 1, false};
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    EXPECT_NE(code->device_source.find("kforge::RowCfg<256, 1, 8, 0, 1, 16>"), std::string::npos)
        << code->device_source;
    EXPECT_EQ(code->launches[0].smem_bytes, 16u * 256 * 8 * 2);
    k.rowwise = {1, 512, 8, 1, true, 1, false};
    auto regs = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(regs.ok());
    EXPECT_NE(regs->device_source.find("kforge::RowCfg<512, 1, 8, 8, 1>"), std::string::npos);
    EXPECT_EQ(regs->launches[0].smem_bytes, 0u);
    k.rowwise.smem_stage = true;
    auto staged = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(staged.ok());
    EXPECT_NE(staged->device_source.find("kforge::RowCfg<512, 1, 8, 0, 1, 8>"), std::string::npos);
    EXPECT_EQ(staged->launches[0].smem_bytes, 8u * 512 * 8 * 2);

    Tensors big;
    big.add("X", {"M", "N"}, {128, 262144}).add("Y", {"M", "N"}, {128, 262144});
    dsl::Kernel kb = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"M", "N"})},
                             {store("Y", {"M", "N"})});
    kb.rowwise = {1, 1024, 4, 1, false, 1, true};
    auto too_big = lower_rowwise(kb, big.ctx);
    ASSERT_FALSE(too_big.ok());
    EXPECT_NE(too_big.error().message.find("bytes of shared memory exceed"), std::string::npos);
    kb.rowwise.split = 8;  // 128 KiB per CTA
    auto split = lower_rowwise(kb, big.ctx);
    ASSERT_TRUE(split.ok()) << split.error().to_string();
    EXPECT_EQ(split->launches[0].smem_bytes, 8u * 1024 * 16);
}

// passes 1 on a row part too long for registers and for shared memory alone: both hold it.
TEST(RowwiseCodegen, PassesOneHoldsLongRowsInRegistersAndSharedMemory) {
    Tensors t;
    t.add("X", {"R", "C"}, {128, 1048576}).add("Y", {"R", "C"}, {128, 1048576});
    dsl::Kernel k = rowwise("k0", dsl::RowOp::kSoftmax, {ref("X", {"R", "C"})},
                            {store("Y", {"R", "C"})});
    k.rowwise.threads = 512;
    k.rowwise.vec = 4;
    k.rowwise.passes = 1;
    k.rowwise.split = 16;  // 65536 values a CTA: 32 vectors a thread
    auto code = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    // 16 vectors (64 values) in registers, 16 staged: 16 x 512 x 4 x 4 bytes
    EXPECT_NE(code->device_source.find("kforge::RowCfg<512, 1, 4, 16, 16, 16>"), std::string::npos)
        << code->device_source;
    EXPECT_EQ(code->launches.at(0).smem_bytes, 16u * 512 * 4 * 4);
    // 256 threads: 64 vectors, 16 in registers, 48 staged (192 KiB)
    k.rowwise.threads = 256;
    auto wide = lower_rowwise(k, t.ctx);
    ASSERT_TRUE(wide.ok()) << wide.error().to_string();
    EXPECT_NE(wide->device_source.find("kforge::RowCfg<256, 1, 4, 16, 16, 48>"), std::string::npos);
    // split 8: 128 vectors, 112 staged = 448 KiB: refused
    k.rowwise.split = 8;
    auto too_long = lower_rowwise(k, t.ctx);
    ASSERT_FALSE(too_long.ok());
    EXPECT_NE(too_long.error().to_string().find("of them in registers"), std::string::npos)
        << too_long.error().to_string();
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
