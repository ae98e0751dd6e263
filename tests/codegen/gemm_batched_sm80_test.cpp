// Batched gemm with `schedule multistage` (CUTLASS 2.x GemmUniversal kBatched + Sm80 EVT): the
// emitted builder sets the batch mode, the batch count from the L dim, A/B batch strides, and
// per-tensor L strides in the visitor arguments (0 for an epilogue tensor without the batch dim).
// Text-level only: the CUTLASS compile of such a kernel is checked by hand (see the report).
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace gemm_testing;

// Y[B,M,N] = A[B,M,K] @ W[B,K,N] + R + b[N] (fp32_strict); R is [M,N] (shared by every batch)
// or [B,M,N] (one per batch).
Problem problem_bmm_f32(bool residual_batched) {
    std::string r_shape = residual_batched ? R"(["B", "M", "N"])" : R"(["M", "N"])";
    return problem_from(R"({"name": "bmm_f32", "dims": {"B": 8, "M": 256, "N": 192, "K": 128},
      "inputs": {"A": {"shape": ["B", "M", "K"], "dtype": "f32"},
                 "W": {"shape": ["B", "K", "N"], "dtype": "f32"},
                 "R": {"shape": )" + r_shape + R"(, "dtype": "f32"},
                 "b": {"shape": ["N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "W"], "output": "H"},
                {"op": "add", "inputs": ["H", "R"], "output": "S"},
                {"op": "add", "inputs": ["S", "b"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})");
}

dsl::Program program_bmm_f32(bool residual_batched, bool epilogue) {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 32;
    c.stages = 3;
    c.schedule = dsl::Schedule::kMultistage;
    c.math = dsl::MathMode::kTf32x3;
    std::vector<std::string> r_dims = residual_batched ? std::vector<std::string>{"B", "M", "N"}
                                                       : std::vector<std::string>{"M", "N"};
    std::vector<dsl::ChainOp> chain;
    if (epilogue) {
        chain.push_back(chain_tensor(dsl::ChainOpKind::kAdd, "R", r_dims));
        chain.push_back(chain_tensor(dsl::ChainOpKind::kAdd, "b", {"N"}));
    }
    chain.push_back(chain_tensor(dsl::ChainOpKind::kStore, "Y", {"B", "M", "N"}));
    return program_of("bmm_f32", "bmm_f32",
                      {gemm_kernel("k0", tref("A", {"B", "M", "K"}), tref("W", {"B", "K", "N"}),
                                   c, std::move(chain))});
}

std::string lower_source(const dsl::Program& p, const Problem& problem) {
    auto out = lower_program(p, problem, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->cuda_source : std::string{};
}

bool has(const std::string& s, const std::string& what) {
    return s.find(what) != std::string::npos;
}

TEST(GemmBatchedSm80, BuilderSetsBatchModeCountAndStrides) {
    std::string src = lower_source(program_bmm_f32(false, false), problem_bmm_f32(false));
    ASSERT_FALSE(src.empty());
    EXPECT_TRUE(has(src, "CUTLASS 2.x sm80 multistage gemm, math tf32x3")) << src;
    EXPECT_TRUE(has(src, "cutlass::arch::OpMultiplyAddFastF32")) << src;
    // The problem's dims sorted: B K M N, so L is dims[0].
    EXPECT_TRUE(has(src, "L = in->dims[0];")) << src;
    EXPECT_TRUE(has(src, "K = in->dims[1];")) << src;
    EXPECT_TRUE(has(src, "cutlass::gemm::GemmUniversalMode::kBatched")) << src;
    EXPECT_FALSE(has(src, "GemmUniversalMode::kGemm")) << src;
    EXPECT_TRUE(has(src, "/*batch_count=*/int(L)")) << src;
    // A [B,M,K] and W [B,K,N] are packed per batch: M*K and N*K elements apart.
    EXPECT_TRUE(has(src, "int64_t batch_stride_a = M * K, batch_stride_b = N * K;")) << src;
    EXPECT_TRUE(has(src, "batch_stride_a, batch_stride_b, /*batch_stride_C=*/0")) << src;
    EXPECT_TRUE(has(src, "if (L > 65535) return KFORGE_BUILD_CANNOT_IMPLEMENT;")) << src;
    // A row-major [M,K] (lda K), W [K,N] row-major (ldb N).
    EXPECT_TRUE(has(src, "        K, N, 0, 0);")) << src;
    // D [B,M,N] written by the visitor tree with its own L stride.
    EXPECT_TRUE(has(src, "Stride<int64_t, _1, int64_t>>")) << src;
    EXPECT_TRUE(has(src, "static_cast<float*>(tensors[2]), {N, _1{}, M * N}}")) << src;
}

TEST(GemmBatchedSm80, BroadcastEpilogueTensorsGetBatchStrideZero) {
    std::string src = lower_source(program_bmm_f32(false, true), problem_bmm_f32(false));
    ASSERT_FALSE(src.empty());
    // R [M,N] is read by every batch: L stride 0. b [N]: a row broadcast, L stride 0.
    EXPECT_TRUE(has(src, "VisitorAuxLoad<OutputTileThreadMap, float, Stride<int64_t, _1, "
                         "int64_t>>")) << src;
    EXPECT_TRUE(has(src, "{const_cast<float*>(static_cast<const float*>(tensors[3])), float(0), "
                         "{N, _1{}, int64_t(0)}}")) << src;
    EXPECT_TRUE(has(src, "{static_cast<const float*>(tensors[4]), float(0), "
                         "{_0{}, _1{}, int32_t(0)}}")) << src;
    EXPECT_TRUE(has(src, "/*batch_count=*/int(L)")) << src;
}

TEST(GemmBatchedSm80, BatchedResidualGetsItsOwnBatchStride) {
    std::string src = lower_source(program_bmm_f32(true, true), problem_bmm_f32(true));
    ASSERT_FALSE(src.empty());
    EXPECT_TRUE(has(src, "{const_cast<float*>(static_cast<const float*>(tensors[3])), float(0), "
                         "{N, _1{}, M * N}}")) << src;
    EXPECT_FALSE(has(src, "{N, _1{}, int64_t(0)}")) << src;
}

TEST(GemmBatchedSm80, PlanTakesGridFromTheBuilder) {
    auto out = lower_program(program_bmm_f32(false, true), problem_bmm_f32(false), LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ(out->plan.kernels.size(), 1u);
    const auto& k = out->plan.kernels[0];
    // The grid (z = batch count) comes from the builder at run time, for any B of the problem.
    EXPECT_EQ(k.param_builder, "kforge_build_k0");
    EXPECT_EQ(k.builder_tensors, (std::vector<std::string>{"A", "W", "Y", "R", "b"}));
    EXPECT_FALSE(has(out->cuda_source, "= 8;")) << "batch count must not be a literal";
}

TEST(GemmBatchedSm80, UnbatchedMultistageKeepsGemmMode) {
    auto out = lower_program(program_linear_f32(dsl::Schedule::kMultistage,
                                                dsl::MathMode::kTf32x3),
                             problem_linear_f32(), LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_TRUE(has(out->cuda_source, "GemmUniversalMode::kGemm")) << out->cuda_source;
    EXPECT_TRUE(has(out->cuda_source, "/*batch_count=*/1")) << out->cuda_source;
    EXPECT_FALSE(has(out->cuda_source, "kBatched")) << out->cuda_source;
}

// A program whose GEMMs take both paths (sm90 cooperative and sm80 multistage, as the planner
// picks for a small GEMM beside big ones) is one translation unit: every kernel's dynamic shared
// memory array has its own name, so no two `extern __shared__` declarations of one name differ
// in type (nvcc: "declaration is incompatible with previous smem", seen on the H100 for an
// imported attention block and Swin V2).
TEST(GemmBatchedSm80, MixedPathsDeclareDistinctSharedArrays) {
    Problem problem = problem_from(R"({"name": "two_gemms", "dims": {"M": 256, "N": 128, "K": 64, "P": 64},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"},
                 "C": {"shape": ["N", "P"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
                {"op": "matmul", "inputs": ["H", "C"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})");
    dsl::GemmConfig sm90;
    sm90.tile_m = 128; sm90.tile_n = 128; sm90.tile_k = 32;
    sm90.schedule = dsl::Schedule::kCooperative;
    sm90.math = dsl::MathMode::kTf32x3;
    dsl::GemmConfig sm80 = sm90;
    sm80.tile_n = 64;
    sm80.stages = 3;
    sm80.schedule = dsl::Schedule::kMultistage;
    auto p = program_of("two_gemms", "two_gemms",
                        {gemm_kernel("k0", tref("A", {"M", "K"}), tref("B", {"K", "N"}), sm90,
                                     {chain_tensor(dsl::ChainOpKind::kStore, "H", {"M", "N"})}),
                         gemm_kernel("k1", tref("H", {"M", "N"}), tref("C", {"N", "P"}), sm80,
                                     {chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "P"})})});
    std::string src = lower_source(p, problem);
    ASSERT_FALSE(src.empty());
    EXPECT_TRUE(has(src, "CUTLASS 2.x sm80 multistage gemm")) << src;
    std::regex decl(R"(extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*\[\s*\])");
    std::map<std::string, std::string> type_of;
    int n = 0;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), decl); it != std::sregex_iterator(); ++it) {
        ++n;
        auto [at, fresh] = type_of.emplace((*it)[2].str(), (*it)[1].str());
        EXPECT_TRUE(fresh || at->second == (*it)[1].str())
            << "extern __shared__ " << (*it)[2] << " declared as " << at->second << " and " << (*it)[1];
    }
    EXPECT_EQ(n, 2) << src;
    EXPECT_EQ(type_of.size(), 2u) << "each kernel names its own shared array";
}

// Kernels of one CUTLASS configuration share one entry point: nvcc compiles the kernel once
// (a ResNet stage's convolutions), each keeps its own host builder (its tensors, its dims) and
// its launch takes the first one's symbol. Another tile is another kernel type: its own entry.
TEST(GemmBatchedSm80, OneEntryPerDistinctKernelType) {
    Problem problem = problem_from(R"({"name": "three_gemms", "dims": {"M": 256, "N": 128, "K": 64},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"},
                 "C": {"shape": ["N", "N"], "dtype": "f32"}, "D": {"shape": ["N", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
                {"op": "matmul", "inputs": ["H", "C"], "output": "G"},
                {"op": "matmul", "inputs": ["G", "D"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})");
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 64; c.tile_k = 32;
    c.stages = 3;
    c.schedule = dsl::Schedule::kMultistage;
    c.math = dsl::MathMode::kTf32x3;
    dsl::GemmConfig other = c;
    other.tile_m = 64;
    auto p = program_of("three_gemms", "three_gemms",
                        {gemm_kernel("k0", tref("A", {"M", "K"}), tref("B", {"K", "N"}), c,
                                     {chain_tensor(dsl::ChainOpKind::kStore, "H", {"M", "N"})}),
                         gemm_kernel("k1", tref("H", {"M", "N"}), tref("C", {"N", "N"}), c,
                                     {chain_tensor(dsl::ChainOpKind::kStore, "G", {"M", "N"})}),
                         gemm_kernel("k2", tref("G", {"M", "N"}), tref("D", {"N", "N"}), other,
                                     {chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"})})});
    auto out = lower_program(p, problem, LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    const std::string& src = out->cuda_source;
    ASSERT_EQ(out->plan.kernels.size(), 3u);
    EXPECT_EQ(out->plan.kernels[0].symbol, "kforge_k0");
    EXPECT_EQ(out->plan.kernels[1].symbol, "kforge_k0") << "k1 is k0's kernel type";
    EXPECT_EQ(out->plan.kernels[2].symbol, "kforge_k2");
    EXPECT_EQ(out->plan.kernels[1].param_builder, "kforge_build_k1");
    EXPECT_TRUE(has(src, "\nkforge_k0(typename kforge_gemm_k0::GemmKernel::Params params)")) << src;
    EXPECT_FALSE(has(src, "kforge_k1(typename")) << src;
    EXPECT_TRUE(has(src, "\nkforge_k2(typename kforge_gemm_k2::GemmKernel::Params params)")) << src;
    // k1's types stay for its host builder, which fills the same Params type
    EXPECT_TRUE(has(src, "namespace kforge_gemm_k1 {")) << src;
    EXPECT_TRUE(has(src, "kforge_build_k1(")) << src;
}

// The spec/program pairs under tests/codegen/batched/ (the ones to run on a GPU: see the files'
// descriptions) parse, pass the checker for the h200 and lower to a kBatched kernel.
Expected<Lowered> lower_files(const std::string& stem) {
    std::string dir = std::string(KFORGE_TEST_DATA_DIR) + "/batched/";
    auto problem = load_problem(dir + stem + ".json");
    if (!problem) return problem.error();
    std::ifstream in(dir + stem + ".kf");
    std::stringstream text;
    text << in.rdbuf();
    auto program = dsl::parse_program(text.str(), stem + ".kf");
    if (!program) return program.error();
    auto checked = dsl::check_program(*program, *problem, dsl::DeviceLimits{});
    if (!checked.ok()) return checked.errors.front();
    return lower_program(*program, *problem, LowerOptions{});
}

TEST(GemmBatchedSm80, ProgramFilesCheckAndLower) {
    auto bmm = lower_files("bmm_f32");
    ASSERT_TRUE(bmm.ok()) << bmm.error().to_string();
    EXPECT_TRUE(has(bmm->cuda_source, "GemmUniversalMode::kBatched")) << bmm->cuda_source;
    EXPECT_TRUE(has(bmm->cuda_source, "L = in->dims[0];")) << bmm->cuda_source;
    auto res = lower_files("bmm_res_f32");
    ASSERT_TRUE(res.ok()) << res.error().to_string();
    EXPECT_TRUE(has(res->cuda_source, "{N, _1{}, int64_t(0)}")) << res->cuda_source;
    EXPECT_TRUE(has(res->cuda_source, "{_0{}, _1{}, int32_t(0)}")) << res->cuda_source;
}

}  // namespace
}  // namespace kforge::codegen
