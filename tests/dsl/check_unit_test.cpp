// Correct programs for several problem shapes pass the checker, with their tensors resolved.
#include "check_test_util.h"

namespace kforge::dsl::testing {
namespace {

TEST(CheckUnit, GemmBiasRelu) {
    auto r = check_suite("linear_bias_relu_bf16", R"(program p for "linear_bias_relu_bf16"
kernel k0 = gemm(X[M,K], W[N,K])
    tile 128x256x64 cluster 2x1 stages auto schedule cooperative math bf16 acc f32
    raster along_n swizzle 8 splitk 1
    { add b[N]; relu; cast bf16; store Y[M,N] }
)");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    EXPECT_TRUE(r.warnings.empty()) << all_errors(r);
    const ResolvedTensor* y = r.find_tensor("Y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->role, TensorRole::kOutput);
    EXPECT_EQ(y->dtype, DType::kBF16);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{8192, 8192}));
    EXPECT_EQ(y->stored_by, 0);
    ASSERT_NE(r.find_tensor("W"), nullptr);
    EXPECT_EQ(r.find_tensor("W")->role, TensorRole::kParam);
}

TEST(CheckUnit, ReluAsMaxZeroAndBiasFirst) {
    // relu == max 0 == clamp(0, inf); add is commutative.
    auto r = check_suite("linear_bias_relu_bf16", R"(program p for "linear_bias_relu_bf16"
kernel k0 = gemm(X[M,K], W[N,K]) schedule pingpong tile 64x128x64
    { add b[N]; max 0; cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, LinearLogsumexpTwoKernels) {
    auto r = check_suite("linear_logsumexp_bf16", R"(program p for "linear_logsumexp_bf16"
kernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x64 schedule cooperative
    { add b[N]; store T[M,N] }
kernel k1 = rowwise logsumexp(T[M,N]) threads 256 vec 4 online
    { cast bf16; store Y[M] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    const ResolvedTensor* t = r.find_tensor("T");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->role, TensorRole::kIntermediate);
    EXPECT_EQ(t->dtype, DType::kF32);
    EXPECT_EQ(t->stored_by, 0);
    EXPECT_EQ(t->read_by, (std::vector<int>{1}));
}

TEST(CheckUnit, Softmax) {
    auto r = check_suite("softmax_short_rows_f32", R"(program p for "softmax_short_rows_f32"
kernel k0 = rowwise softmax(X[R,C]) over C rows_per_block 4 threads 128 vec 4 online
    { store Y[R,C] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, LayerNormEpsFromProblem) {
    auto r = check_suite("layer_norm_f32", R"(program p for "layer_norm_f32"
kernel k0 = rowwise layer_norm(X[R,C], w[C], b[C]) threads 512 vec 4 passes 1
    { store Y[R,C] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, GroupNorm) {
    auto r = check_suite("group_norm_f32", R"(program p for "group_norm_f32"
kernel k0 = rowwise group_norm(X[N,C,H,W], w[C], b[C]) threads 1024 vec 4 passes 2
    { store Y[N,C,H,W] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, SwigluTwoGemms) {
    auto r = check_suite("swiglu_bf16", R"(program p for "swiglu_bf16"
kernel k0 = gemm(X[M,K], W3[N,K]) { store U[M,N] }
kernel k1 = gemm(X[M,K], W1[N,K]) tile 128x128x64
    { silu; mul U[M,N]; cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, MapChainWithBroadcast) {
    auto r = check_suite("bias_gelu_mul_f32", R"(program p for "bias_gelu_mul_f32"
kernel k0 = map(X[R,C]) block 256 vec 4
    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, BatchedMatmul) {
    auto r = check_suite("bmm_bf16", R"(program p for "bmm_bf16"
kernel k0 = gemm(A[B,M,K], Bm[B,K,N]) tile 128x128x64 { cast bf16; store C[B,M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, TransposedMatmul) {
    // transpose_b in the problem: B is stored [N,K]; the dims say so.
    auto r = check_suite("gemm_nt_fp16", R"(program p for "gemm_nt_fp16"
kernel k0 = gemm(A[M,K], B[N,K]) math f16 { cast f16; store C[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, Tf32WithNMajorBOnHopper) {
    // Lowered with B staged K-major by a pre-kernel (codegen/gemm_stage.h), with any epilogue;
    // before, the checker sent it to schedule multistage.
    for (const char* sched : {"cooperative", "pingpong", "tma_ws"}) {
        auto r = check_suite("gemm_tf32_4096", std::string(R"(program p for "gemm_tf32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 cluster 2x1 schedule )") + sched +
                                                   " math tf32 { store C[M,N] }");
        EXPECT_TRUE(r.ok()) << sched << ": " << all_errors(r);
    }
}

TEST(CheckUnit, MatmulRowsumAsEpilogueReduce) {
    // Semantically right, but no code generator lowers `reduce` yet: the checker says so
    // instead of letting codegen refuse it after a compile slot was spent.
    auto r = check_suite("matmul_rowsum_f32", R"(program p for "matmul_rowsum_f32"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 schedule multistage math tf32x3
    { reduce sum over N -> Y[M] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("reduce in a chain is not lowered yet"), std::string::npos)
        << all_errors(r);
}

// l2_normalize(x) = x / clamp(sqrt(sum(x^2)), eps, inf): the one row kernel, and the old plan of
// separate kernels (square, a row sum with sqrt and the clamp, a divide), check against the op.
std::string normalize_problem(const std::string& op, const std::string& attrs) {
    return R"({"name": "nz", "dims": {"M": 64, "N": 4096},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "bf16"}},
        "graph": [{"op": ")" + op + R"(", "inputs": ["X"], "output": "Y")" + attrs + R"(}],
        "outputs": ["Y"], "precision": {"policy": "bf16"}})";
}

TEST(CheckUnit, NormalizeOneKernelAndSeparateKernels) {
    const std::string eps = normalize_problem("l2_normalize", R"(, "eps": 1e-12)");
    auto r = check_text(eps, R"(program p for "nz"
kernel k0 = rowwise l2_normalize(X[M,N]) threads 256 vec 8 { cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(eps, R"(program p for "nz"
kernel k0 = rowwise l2_normalize(X[M,N]) eps 1e-12 smem_stage passes 2 { cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(eps, R"(program p for "nz"
kernel k0 = map(X[M,N]) { square; store Q[M,N] }
kernel k1 = rowwise sum(Q[M,N]) { sqrt; max 1e-12; store S[M] }
kernel k2 = map(X[M,N]) { div S[M]; cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    const std::string l1 = normalize_problem("l1_normalize", "");
    r = check_text(l1, R"(program p for "nz"
kernel k0 = rowwise l1_normalize(X[M,N]) { cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(l1, R"(program p for "nz"
kernel k0 = map(X[M,N]) { abs; store A[M,N] }
kernel k1 = rowwise sum(A[M,N]) { store S[M] }
kernel k2 = map(X[M,N]) { div S[M]; cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, NormalizeWrongNormEpsOrDimIsRefused) {
    const std::string l1 = normalize_problem("l1_normalize", "");
    auto r = check_text(l1, R"(program p for "nz"
kernel k0 = rowwise l2_normalize(X[M,N]) { cast bf16; store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(l1, R"(program p for "nz"
kernel k0 = rowwise l1_normalize(X[M,N]) eps 0.001 { cast bf16; store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(normalize_problem("l1_normalize", R"(, "axis": 0)"), R"(program p for "nz"
kernel k0 = rowwise l1_normalize(X[M,N]) over M { cast bf16; store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("lowered over the last dim only"), std::string::npos)
        << all_errors(r);
}

// prod (KernelBench level 1, 50: torch.prod(x, dim=1) on [16, 256, 256]): `rowwise prod` over the
// problem's dim proves equal to it; a sum, a prod over another dim or with a prologue does not.
std::string prod_problem() {
    return R"({"name": "pr", "dims": {"B": 16, "R": 256, "C": 256},
        "inputs": {"X": {"shape": ["B", "R", "C"], "dtype": "f32"}},
        "graph": [{"op": "prod", "inputs": ["X"], "output": "Y", "axis": 1}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
}

TEST(CheckUnit, ProdIsOneRowKernel) {
    auto r = check_text(prod_problem(), R"(program p for "pr"
kernel k0 = rowwise prod(X[B,R,C]) over R threads 256 vec 4 { store Y[B,C] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(prod_problem(), R"(program p for "pr"
kernel k0 = rowwise sum(X[B,R,C]) over R { store Y[B,C] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("prod"), std::string::npos) << all_errors(r);
    r = check_text(prod_problem(), R"(program p for "pr"
kernel k0 = rowwise prod(X[B,R,C]) over B { store Y[R,C] })");
    EXPECT_FALSE(r.ok());
    r = check_text(prod_problem(), R"(program p for "pr"
kernel k0 = rowwise prod(X[B,R,C]) pre { relu } over R { store Y[B,C] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("not prod"), std::string::npos) << all_errors(r);
}

// erf, log1p, expm1, sin, cos, sign, reciprocal and the maximum / minimum of two tensors
// (KernelBench's torch.erf, ..., torch.maximum(a, b)): one map chain proves equal to the graph
// (`max G[..]`, `min b[..]`: a tensor operand; reciprocal = rdiv 1; maximum commutes); another
// op order, a clamp at a number or the other bound does not.
std::string ewops_problem() {
    return R"({"name": "ew", "dims": {"M": 64, "N": 128},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "f32"}, "G": {"shape": ["M", "N"], "dtype": "f32"},
                   "b": {"shape": ["N"], "dtype": "f32"}},
        "graph": [{"op": "erf", "inputs": ["X"], "output": "E"},
                  {"op": "log1p", "inputs": ["E"], "output": "L"},
                  {"op": "maximum", "inputs": ["G", "L"], "output": "Mx"},
                  {"op": "sin", "inputs": ["Mx"], "output": "S"},
                  {"op": "cos", "inputs": ["S"], "output": "C"},
                  {"op": "expm1", "inputs": ["C"], "output": "Q"},
                  {"op": "reciprocal", "inputs": ["Q"], "output": "R"},
                  {"op": "sign", "inputs": ["R"], "output": "Sg"},
                  {"op": "minimum", "inputs": ["Sg", "b"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
}

TEST(CheckUnit, ElementwiseMathAndTwoTensorBounds) {
    const char* head = "program p for \"ew\"\nkernel k0 = map(X[M,N]) ";
    auto ok = [&](const std::string& chain) {
        auto r = check_text(ewops_problem(), head + chain);
        EXPECT_TRUE(r.ok()) << chain << "\n" << all_errors(r);
    };
    ok("{ erf; log1p; max G[M,N]; sin; cos; expm1; reciprocal; sign; min b[N]; store Y[M,N] }");
    ok("{ erf; log1p; max G[M,N]; sin; cos; expm1; rdiv 1; sign; min b[N]; store Y[M,N] }");
    ok("{ erf; log1p; let l; use l; max G[M,N]; let m; sin; cos; expm1; reciprocal; sign; "
       "min b[N]; store Y[M,N] }");
    auto bad = [&](const std::string& chain, const std::string& says) {
        auto r = check_text(ewops_problem(), head + chain);
        EXPECT_FALSE(r.ok()) << chain;
        EXPECT_NE(all_errors(r).find(says), std::string::npos) << chain << "\n" << all_errors(r);
    };
    bad("{ erf; log1p; max G[M,N]; cos; sin; expm1; reciprocal; sign; min b[N]; store Y[M,N] }",
        "Y");
    bad("{ erf; log1p; max 0; sin; cos; expm1; reciprocal; sign; min b[N]; store Y[M,N] }", "Y");
    bad("{ erf; log1p; max G[M,N]; sin; cos; expm1; reciprocal; sign; max b[N]; store Y[M,N] }",
        "Y");
    bad("{ erf; log1p; max G[M,N]; sin; cos; exp; reciprocal; sign; min b[N]; store Y[M,N] }",
        "Y");
}

// A named value as the other operand of max: torch.maximum(x, relu-free branch) in one kernel.
TEST(CheckUnit, MaxWithANamedValue) {
    const char* spec = R"({"name": "mn", "dims": {"M": 64, "N": 128},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "f32"}},
        "graph": [{"op": "sin", "inputs": ["X"], "output": "S"},
                  {"op": "maximum", "inputs": ["X", "S"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
    auto r = check_text(spec, R"(program p for "mn"
kernel k0 = map(X[M,N]) { let x; sin; max x; store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(spec, R"(program p for "mn"
kernel k0 = map(X[M,N]) { let x; sin; min x; store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(spec, R"(program p for "mn"
kernel k0 = map(X[M,N]) { sin; max y; store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("let y"), std::string::npos) << all_errors(r);
}

// cumsum / cumprod: the row kernel checks against the problem op with the same flags; another
// op, a missing or extra flag, a leading dim and the knobs a scan does not lower are refused.
std::string scan_problem(const std::string& op, const std::string& attrs) {
    return R"({"name": "sc", "dims": {"M": 128, "N": 4000},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "f32"}},
        "graph": [{"op": ")" + op + R"(", "inputs": ["X"], "output": "Y")" + attrs + R"(}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
}

TEST(CheckUnit, ScanOneKernel) {
    auto r = check_text(scan_problem("cumsum", ""), R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) threads 1024 vec 4 { store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(scan_problem("cumsum", R"(, "axis": 1, "reverse": true, "exclusive": true)"),
                   R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) reverse exclusive { store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(scan_problem("cumprod", R"(, "reverse": true)"), R"(program p for "sc"
kernel k0 = rowwise cumprod(X[M,N]) reverse rows_per_block 8 threads 256 { store Y[M,N] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(CheckUnit, ScanWrongOpFlagOrKnobIsRefused) {
    const std::string fwd = scan_problem("cumsum", "");
    auto r = check_text(fwd, R"(program p for "sc"
kernel k0 = rowwise cumprod(X[M,N]) { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(fwd, R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) reverse { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(scan_problem("cumsum", R"(, "exclusive": true)"), R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(fwd, R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) split 2 { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("split is not lowered for scans"), std::string::npos)
        << all_errors(r);
    r = check_text(fwd, R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) passes 2 { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    r = check_text(fwd, R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) rows_per_block 2 threads 256 { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("one row per warp or less"), std::string::npos) << all_errors(r);
    r = check_text(scan_problem("cumsum", R"(, "axis": 0)"), R"(program p for "sc"
kernel k0 = rowwise cumsum(X[M,N]) over M { store Y[M,N] })");
    EXPECT_FALSE(r.ok());
    EXPECT_NE(all_errors(r).find("lowered over the last dim only"), std::string::npos)
        << all_errors(r);
}

TEST(CheckUnit, IntermediateNeverReadWarns) {
    auto r = check_suite("bias_gelu_mul_f32", R"(program p for "bias_gelu_mul_f32"
kernel k0 = map(X[R,C]) { add b[C]; store H2[R,C]; gelu erf; mul G[R,C]; store Y[R,C] })");
    EXPECT_TRUE(r.ok()) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("H2"), std::string::npos) << r.warnings[0];
}

}  // namespace
}  // namespace kforge::dsl::testing
