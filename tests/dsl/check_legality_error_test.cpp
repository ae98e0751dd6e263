// Configurations that cannot run on the target device are rejected with what would be legal.
#include "check_test_util.h"

namespace kforge::dsl::testing {
namespace {

// bf16 linear + bias + relu, M = N = 8192, K = 4096, on the H200 (227 KiB per block).
CheckResult gemm(const std::string& knobs, const std::string& problem = "linear_bias_relu_bf16") {
    return check_suite(problem, "program p for \"" + problem + "\"\nkernel k0 = gemm(X[M,K], "
                       "W[N,K]) " + knobs + " { add b[N]; relu; cast bf16; store Y[M,N] }\n");
}

TEST(CheckLegalityError, SharedMemory) {
    auto r = gemm("tile 128x256x64 stages 8");
    expect_one_error(r, "t.kf:2:50", {"stages 8 needs 401 KiB of shared memory",
                                      "the H200 allows 227 KiB; at most 4 fit"});
}

TEST(CheckLegalityError, Cluster) {
    auto r = gemm("cluster 4x2");
    expect_one_error(r, "t.kf:2:34", {"cluster 4x2", "M*N at most 4"});
    auto s = gemm("schedule multistage tile 128x128x32 cluster 2x1");
    expect_one_error(s, "t.kf:2:70", {"cluster 2x1 needs an sm_90 schedule"});
}

TEST(CheckLegalityError, TileForSchedule) {
    auto r = gemm("tile 64x128x64 schedule cooperative");
    expect_one_error(r, "t.kf:2:34", {"tile M must be 128 or 256", "tma_ws or pingpong"});
}

TEST(CheckLegalityError, TileKBytesForTma) {
    auto r = gemm("tile 128x128x16");
    expect_one_error(r, "t.kf:2:34", {"tile K 16 x 2 bytes = 32 bytes",
                                      "multiple of 64 bytes: tile K in {32, 64, 128}"});
}

TEST(CheckLegalityError, AccumulatorRegisters) {
    auto r = gemm("tile 256x256x64 schedule pingpong stages 2");
    expect_one_error(r, "t.kf:2:34", {"keeps 512 accumulator registers per thread",
                                      "(128 consumer threads)", "schedule cooperative"});
}

// 3xTF32 on a Hopper schedule holds the accumulator twice (promotion): cooperative 128x256
// spills, so it is refused with the spill as the reason; 128x192 fits.
TEST(CheckLegalityError, PromotedAccumulatorRegisters) {
    const std::string head = "program p for \"gemm_f32_4096\"\nkernel k0 = gemm(A[M,K], B[K,N]) ";
    auto r = check_suite("gemm_f32_4096", head + "tile 128x256x32 cluster 2x1 schedule cooperative "
                                                 "math tf32x3 { store C[M,N] }");
    expect_one_error(r, "t.kf:2:34", {"tile 128x256x32 with math tf32x3 on schedule cooperative",
                                      "256 consumer threads holds 2 x 128 accumulator registers",
                                      "exceeds the 232", "spill", "N <= 192"});
    // math auto resolves to tf32x3 under fp32_strict: the same limit.
    r = check_suite("gemm_f32_4096", head + "tile 128x256x32 schedule cooperative { store C[M,N] }");
    expect_one_error(r, "t.kf:2:34", {"with math tf32x3", "2 x 128"});
    // Pingpong gives one warpgroup the whole tile: 128x128 is already 2 x 128.
    r = check_suite("gemm_f32_4096", head + "tile 128x128x32 schedule pingpong math tf32x3 "
                                            "{ store C[M,N] }");
    expect_one_error(r, "t.kf:2:34", {"schedule pingpong", "128 consumer threads holds 2 x 128",
                                      "N <= 96"});
    for (const char* ok : {"tile 128x192x32 cluster 2x1 schedule cooperative math tf32x3",
                           "tile 128x128x32 cluster 2x1 schedule stream_k math tf32x3",
                           "tile 256x96x32 schedule cooperative math tf32x3",
                           "tile 64x192x32 schedule pingpong math tf32x3",
                           "tile 64x128x32 schedule tma_ws math tf32x3",
                           "tile 128x256x32 schedule multistage math tf32x3 stages 3",
                           "tile 128x256x32 schedule pingpong math f32_simt"}) {
        auto c = check_suite("gemm_f32_4096", head + ok + " { store C[M,N] }");
        bool promotion_error = false;
        for (const auto& e : c.errors)
            promotion_error |= e.message.find("promotes wgmma") != std::string::npos;
        EXPECT_FALSE(promotion_error) << ok << ": " << c.errors[0].message;
        if (std::string(ok).find("f32_simt") == std::string::npos)
            EXPECT_TRUE(c.errors.empty()) << ok << ": " << c.errors[0].message;
    }
}

TEST(CheckLegalityError, MathVsPolicy) {
    auto s = check_suite("gemm_f32_4096", R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) math tf32 { store C[M,N] })");
    expect_one_error(s, "t.kf:2:34", {"math tf32 on f32 operands is not allowed under precision "
                                      "policy fp32_strict", "fp32_strict allows f32_simt or tf32x3"});
    auto t = check_suite("gemm_tf32_4096", R"(program p for "gemm_tf32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) math bf16 { store C[M,N] })");
    expect_one_error(t, "t.kf:2:34", {"tf32 allows f32_simt, tf32x3 or tf32"});
}

TEST(CheckLegalityError, SplitKWithStreamK) {
    auto r = gemm("schedule stream_k splitk 2");
    expect_one_error(r, "t.kf:2:52", {"splitk 2 with schedule stream_k"});
}

// CUTLASS splits K only in the cooperative kernel's stream-K scheduler: the lowering refused
// these after the checker passed them (three compile failures in an H200 search, 2026-12-01).
TEST(CheckLegalityError, SplitKNeedsTheCooperativeSchedule) {
    expect_one_error(gemm("schedule pingpong splitk 2"), "t.kf:2:52",
                     {"splitk 2 with schedule pingpong", "split-K needs schedule cooperative"});
    expect_one_error(gemm("schedule tma_ws splitk 4"), "t.kf:2:50",
                     {"splitk 4 with schedule tma_ws"});
    EXPECT_TRUE(gemm("schedule cooperative splitk 2").ok());
}

// multistage with a 64-wide f32 K tile passed the checker and failed to compile (CUTLASS's
// crosswise shared-memory row holds 128 bytes); 32 x 4 bytes and f32_simt still pass.
TEST(CheckLegalityError, MultistageTileKFitsOneSharedMemoryLine) {
    const std::string head = "program p for \"gemm_f32_4096\"\nkernel k0 = gemm(A[M,K], B[K,N]) ";
    auto r = check_suite("gemm_f32_4096", head + "tile 128x128x64 schedule multistage { store C[M,N] }");
    expect_one_error(r, "t.kf:2:34", {"tile K 64 x 4 bytes = 256 bytes; multistage's tensor-core "
                                      "shared-memory rows hold at most 128: tile K <= 32"});
    EXPECT_TRUE(check_suite("gemm_f32_4096",
                            head + "tile 128x128x32 schedule multistage { store C[M,N] }").ok());
    auto bf = check_suite("gemm_bf16_4096", "program p for \"gemm_bf16_4096\"\nkernel k0 = gemm(A[M,K], "
                          "B[K,N]) tile 128x128x128 schedule multistage { cast bf16; store C[M,N] }");
    expect_one_error(bf, "t.kf:2:34", {"tile K <= 64"});
}

TEST(CheckLegalityError, TmaAlignment) {
    auto r = check_text(R"({"name": "odd_k", "dims": {"M": 512, "N": 512, "K": 1001},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
                   "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "bf16"}})",
                        R"(program p for "odd_k"
kernel k0 = gemm(X[M,K], W[N,K]) { cast bf16; store Y[M,N] })");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);  // X and W
    EXPECT_EQ(r.errors[0].where, "t.kf:2:18");
    EXPECT_NE(r.errors[0].message.find("X[M,K]: its contiguous dim K = 1001 elements of 2 bytes "
                                       "= 2002 bytes, not a multiple of 16 as TMA requires; nor "
                                       "of 4 as multistage's cp.async requires: no schedule reads "
                                       "it (f32_simt takes f32 operands only): cast X to f32"),
              std::string::npos) << all_errors(r);
    // multistage on those rows: the same advice, not f32_simt (which the lowering refuses on bf16)
    r = check_text(R"({"name": "odd_k", "dims": {"M": 512, "N": 512, "K": 1001},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
                   "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "bf16"}})",
                   R"(program p for "odd_k"
kernel k0 = gemm(X[M,K], W[N,K]) schedule multistage { cast bf16; store Y[M,N] })");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("not a multiple of 4 as cp.async requires; no schedule "
                                       "reads it"), std::string::npos) << all_errors(r);
    EXPECT_EQ(r.errors[0].message.find("use math f32_simt"), std::string::npos) << all_errors(r);
    // K = 1004: 8-byte rows, multistage reads them
    r = check_text(R"({"name": "k1004", "dims": {"M": 512, "N": 512, "K": 1004},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
                   "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "bf16"}})",
                   R"(program p for "k1004"
kernel k0 = gemm(X[M,K], W[N,K]) { cast bf16; store Y[M,N] })");
    ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("as TMA requires; use schedule multistage"),
              std::string::npos) << all_errors(r);
}

TEST(CheckLegalityError, DivisibilityIsAWarning) {
    auto r = gemm("tile 128x192x64");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("not a multiple of the tile 128 x 192"), std::string::npos);
}

constexpr const char* kSoftmax = "program p for \"softmax_short_rows_f32\"\n"
                                 "kernel k0 = rowwise softmax(X[R,C]) ";

TEST(CheckLegalityError, RowwiseKnobs) {
    auto r = check_edited("softmax_short_rows_f32", std::string(kSoftmax) + "{ store Y[R,C] }",
                          [](Program& p) { p.kernels[0].rowwise.threads = 100; });
    expect_one_error(r, "t.kf:2:1", {"threads 100: use a multiple of 32 from 32 to 1024"});
    r = check_suite("layer_norm_f32", "program p for \"layer_norm_f32\"\nkernel k0 = rowwise "
                    "layer_norm(X[R,C], w[C], b[C]) online { store Y[R,C] }");
    expect_one_error(r, "t.kf:2:52", {"online applies to softmax, log_softmax and logsumexp"});
    r = check_suite("softmax_short_rows_f32", std::string(kSoftmax) + "vec 8 { store Y[R,C] }");
    expect_one_error(r, "t.kf:2:37", {"vec 8 x 4 bytes = 32 bytes", "use vec 1, 2, 4"});
    r = check_suite("softmax_short_rows_f32", std::string(kSoftmax) + "rows_per_block 3 { store Y[R,C] }");
    expect_one_error(r, "t.kf:2:37", {"rows_per_block 3 with threads 256"});
}

TEST(CheckLegalityError, RowLengthNotDivisibleByVec) {
    auto r = check_text(R"({"name": "sm", "dims": {"R": 64, "C": 1002},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "softmax", "inputs": ["X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                        "program p for \"sm\"\nkernel k0 = rowwise softmax(X[R,C]) vec 4 { store Y[R,C] }");
    expect_one_error(r, "t.kf:2:37", {"vec 4 does not divide the row length = 1002",
                                      "legal vec values: 1, 2"});
}

TEST(CheckLegalityError, MapKnobs) {
    const std::string head = "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) ";
    const std::string chain = " { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }";
    auto r = check_edited("bias_gelu_mul_f32", head + chain,
                          [](Program& p) { p.kernels[0].map.block = 2048; });
    expect_one_error(r, "t.kf:2:1", {"block 2048: use a multiple of 32 from 32 to 1024"});
    r = check_suite("bias_gelu_mul_f32", head + "vec 8" + chain);
    expect_one_error(r, "t.kf:2:25", {"vec 8 x 4 bytes = 32 bytes per access; at most 16"});
}

TEST(CheckLoweringError, LimitsOfTheCodeGenerators) {
    auto a = check_suite("gemm_f32_4096", R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 math tf32x3 { store C[M,N] })");
    // tf32x3 with a Hopper schedule lowers (staged hi/lo operands, promoted accumulator).
    EXPECT_TRUE(a.errors.empty()) << (a.errors.empty() ? "" : a.errors[0].message);
    // A 16-CTA (non-portable) cluster is lowered; staging a row read once is refused.
    auto b = check_suite("softmax_long_rows_f32", R"(program p for "softmax_long_rows_f32"
kernel k0 = rowwise softmax(X[R,C]) threads 1024 vec 4 passes 2 online split 16 smem_stage { store Y[R,C] })");
    EXPECT_TRUE(b.errors.empty()) << (b.errors.empty() ? "" : b.errors[0].message);
    auto c = check_suite("row_sum_f32", R"(program p for "row_sum_f32"
kernel k0 = rowwise sum(X[R,C]) threads 256 vec 4 passes 2 smem_stage { store Y[R] })");
    expect_one_error(c, "t.kf:2:60", {"smem_stage stages a row that is swept more than once",
                                      "sum reads it once"});
}

// math f32_simt has no fused epilogue (codegen/lower_gemm_sm80.cpp): refused before a compile.
TEST(CheckLoweringError, F32SimtTakesAPlainStoreOnly) {
    auto ok = check_suite("gemm_f32_4096", R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x16 schedule multistage math f32_simt { store C[M,N] })");
    EXPECT_TRUE(ok.errors.empty()) << (ok.errors.empty() ? "" : ok.errors[0].message);
    auto r = check_text(R"({"name": "gemm_relu_f32", "dims": {"M": 512, "N": 512, "K": 512},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
                {"op": "relu", "inputs": ["H"], "output": "C"}],
      "outputs": ["C"], "precision": {"policy": "fp32_strict"}})",
                        R"(program p for "gemm_relu_f32"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x16 schedule multistage math f32_simt { relu; store C[M,N] })");
    expect_one_error(r, "t.kf:2:86", {"math f32_simt lowers with a plain store only",
                                      "use math tf32x3 for a fused epilogue"});
}

// The SIMT mainloop's limits are refused before a compile: tile K 32 with K-major A (lane tile
// 4 does not divide the padding of 1); tile K 16 pads nothing and passes.
TEST(CheckLoweringError, F32SimtTilesTheSimtMainloopCannotBuild) {
    auto k32 = check_suite("gemm_f32_4096", R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 schedule multistage math f32_simt { store C[M,N] })");
    expect_one_error(k32, "t.kf:2:34", {"math f32_simt with tile K 32 and a K-major operand",
                                        "use tile K 8 or 16"});
    auto k16 = check_suite("gemm_f32_4096", R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 64x16x16 schedule multistage math f32_simt { store C[M,N] })");
    EXPECT_TRUE(k16.errors.empty()) << (k16.errors.empty() ? "" : k16.errors[0].message);
}

// f32 C = A^T B under the tf32 policy: A [K,M] and B [K,N] are both MN-major.
constexpr std::string_view kTf32TnProblem = R"({"name": "gemm_tn_tf32",
    "dims": {"M": 1024, "N": 1024, "K": 512},
    "inputs": {"A": {"shape": ["K", "M"], "dtype": "f32"},
               "B": {"shape": ["K", "N"], "dtype": "f32"}},
    "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C", "transpose_a": true}],
    "outputs": ["C"], "precision": {"policy": "tf32"}})";

TEST(CheckLoweringError, Tf32OnHopperStagesMnMajorOperands) {
    // Both operands MN-major: codegen stages them K-major (codegen/gemm_stage.h), with any
    // schedule.
    for (const char* sched : {"cooperative", "multistage"}) {
        auto ok = check_text(kTf32TnProblem, std::string(R"(program p for "gemm_tn_tf32"
kernel k0 = gemm(A[K,M], B[K,N]) tile 128x128x32 schedule )") + sched +
                                                 " math tf32 { store C[M,N] }");
        EXPECT_TRUE(ok.ok()) << sched << ": " << all_errors(ok);
    }
}

TEST(CheckLegalityError, StagedTf32TileRulesApplyToTileM) {
    // B[K,N] is N-major: staged K-major, the kernel's wgmma M is the program's tile M.
    auto r = check_suite("gemm_tf32_4096", R"(program p for "gemm_tf32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 64x128x32 schedule cooperative math tf32 { store C[M,N] })");
    expect_one_error(r, "t.kf:2:34", {"tile 64x128x32: schedule cooperative splits tile M",
                                      "tile M must be 128 or 256"});
    auto ok = check_suite("gemm_tf32_4096", R"(program p for "gemm_tf32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x64x32 schedule cooperative math tf32 { store C[M,N] })");
    EXPECT_TRUE(ok.ok()) << all_errors(ok);
}

}  // namespace
}  // namespace kforge::dsl::testing
