// Gemm lowering: golden CUDA for pinned programs (a codegen refactor must produce identical
// source), the plan it writes, and the constructs the CUTLASS lowering refuses.
// Update the goldens: configure with -DKFORGE_UPDATE_GOLDENS=ON, run this test, review the diff.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace gemm_testing;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void expect_golden(const std::string& name, const std::string& source) {
    std::string path = std::string(KFORGE_TEST_DATA_DIR) + "/golden/" + name + ".cu";
#ifdef KFORGE_UPDATE_GOLDENS
    std::ofstream(path) << source;
    GTEST_SKIP() << "golden updated: " << path;
#else
    std::string want = read_file(path);
    ASSERT_FALSE(want.empty()) << "missing golden " << path
                               << " (configure with -DKFORGE_UPDATE_GOLDENS=ON to write it)";
    EXPECT_EQ(source, want) << "generated source differs from " << path;
#endif
}

Lowered lower_ok(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? *out : Lowered{};
}

TEST(GemmGolden, BiasReluBf16Cooperative) {
    Lowered out = lower_ok(program_gemm_bias_relu_bf16(), problem_gemm_bias_relu_bf16());
    expect_golden("gemm_bias_relu_bf16", out.cuda_source);
}

TEST(GemmGolden, ResidualGeluF16Pingpong) {
    Lowered out = lower_ok(program_residual_gelu_f16(), problem_residual_gelu_f16());
    expect_golden("residual_gelu_f16_pingpong", out.cuda_source);
}

TEST(GemmGolden, LinearTf32x3Multistage) {
    Lowered out = lower_ok(program_linear_f32(dsl::Schedule::kMultistage, dsl::MathMode::kTf32x3),
                           problem_linear_f32());
    expect_golden("linear_tf32x3_multistage", out.cuda_source);
}

// math f32_simt went through the Sm80 epilogue visitor tree, whose thread map is the tensor-op
// one: every thread stored its SIMT accumulators at another thread's coordinates and the kernel
// returned (almost) all zeros (H200 2026-12-02, bench/kernels/fp32acc/ms_simt.kf). f32_simt now
// takes CUTLASS's SIMT GemmUniversal with its default epilogue (D = 1 * acc + 0 * C), scalar
// accesses (CUTLASS's SIMT epilogue stores one element per access).
TEST(GemmGolden, SquareF32SimtMultistage) {
    Lowered out = lower_ok(program_square_f32(dsl::MathMode::kF32Simt), problem_square_f32());
    expect_golden("square_f32_simt_multistage", out.cuda_source);
}

TEST(GemmCodegen, SimtMultistageTakesTheDefaultEpilogue) {
    Lowered out = lower_ok(program_square_f32(dsl::MathMode::kF32Simt), problem_square_f32());
    const std::string& src = out.cuda_source;
    EXPECT_NE(src.find("cutlass::arch::OpClassSimt"), std::string::npos);
    EXPECT_NE(src.find("cutlass::gemm::kernel::DefaultGemmUniversal<"), std::string::npos);
    EXPECT_EQ(src.find("DefaultGemmWithVisitor"), std::string::npos);
    EXPECT_EQ(src.find("OutputTileThreadLayout"), std::string::npos);
    EXPECT_NE(src.find("constexpr int AlignmentSimt = 1;"), std::string::npos);
    // alpha 1, beta 0; D (builder tensor 2) is written, C aliases it and is never read
    EXPECT_NE(src.find("Params epilogue(/*alpha=*/1.0f, /*beta=*/0.0f)"), std::string::npos);
    EXPECT_NE(src.find("tensors[0], tensors[1], tensors[2], tensors[2],"), std::string::npos);
    // row-major A [M,K], row-major B [K,N], row-major D: leading dims K, N, N, N
    EXPECT_NE(src.find("M * K, N * K, M * N, M * N, K, N, N, N);"), std::string::npos);
    ASSERT_EQ(out.plan.kernels.size(), 1u);
    EXPECT_EQ(out.plan.kernels[0].builder_tensors,
              (std::vector<std::string>{"A", "B", "matmul"}));
    // the tensor-op multistage path keeps the visitor tree, guarded by the thread-map check
    Lowered tc = lower_ok(program_square_f32(dsl::MathMode::kTf32x3), problem_square_f32());
    EXPECT_NE(tc.cuda_source.find("DefaultGemmWithVisitor"), std::string::npos);
    EXPECT_NE(tc.cuda_source.find("the EVT thread map differs from the epilogue's"),
              std::string::npos);
    EXPECT_EQ(tc.cuda_source.find("AlignmentSimt"), std::string::npos);
}

// CUTLASS's SIMT mainloop pads its shared-memory transpose of a K-major operand by tile K / 32
// elements, a multiple of the lane tile (4 f32 for 64-wide warps): tile K 32 fails its
// static_assert at compile time, so the lowering refuses it by name; 16 and 128 lower.
TEST(GemmLowerError, F32SimtTileKFitsTheSimtTranspose) {
    for (int tile_k : {16, 32, 64, 128}) {
        dsl::Program p = program_square_f32(dsl::MathMode::kF32Simt);
        p.kernels[0].gemm.tile_k = tile_k;
        auto out = lower_program(p, problem_square_f32(), LowerOptions{});
        if (tile_k == 16 || tile_k == 128) {
            EXPECT_TRUE(out.ok()) << tile_k << ": " << out.error().to_string();
        } else {
            ASSERT_FALSE(out.ok()) << tile_k;
            EXPECT_NE(out.error().message.find("use tile K 8 or 16"), std::string::npos)
                << out.error().to_string();
        }
    }
}

// The visitor tree has no SIMT thread map: f32_simt with a fused epilogue is refused, not
// emitted wrong.
TEST(GemmLowerError, F32SimtRefusesAFusedEpilogue) {
    auto out = lower_program(program_linear_f32(dsl::Schedule::kMultistage,
                                                dsl::MathMode::kF32Simt),
                             problem_linear_f32(), LowerOptions{});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("math f32_simt with a fused epilogue"), std::string::npos)
        << out.error().to_string();
    EXPECT_EQ(out.error().where, "k0");
}

// Staged 3xTF32 on sm90 with the fused bias and column epilogue: the staging pre-kernels and the
// accumulator-promoting mainloop (the builder's collective with CUTLASS's FP8 dispatch policy).
TEST(GemmGolden, LinearTf32x3CooperativePromoted) {
    Lowered out = lower_ok(program_linear_f32(dsl::Schedule::kCooperative, dsl::MathMode::kTf32x3),
                           problem_linear_f32());
    expect_golden("linear_tf32x3_cooperative_promoted", out.cuda_source);
}

TEST(GemmGolden, SplitKStreamK) {
    dsl::Program p = program_gemm_bias_relu_bf16();
    p.kernels[0].gemm.schedule = dsl::Schedule::kStreamK;
    p.kernels[0].gemm.split_k = 4;
    Lowered out = lower_ok(p, problem_gemm_bias_relu_bf16());
    expect_golden("gemm_bias_relu_bf16_splitk", out.cuda_source);
}

TEST(GemmLower, PlanNamesWrapperBuilderAndTensors) {
    Lowered out = lower_ok(program_gemm_bias_relu_bf16(), problem_gemm_bias_relu_bf16());
    ASSERT_EQ(out.plan.kernels.size(), 1u);
    const KernelLaunch& k = out.plan.kernels[0];
    EXPECT_EQ(k.symbol, "kforge_k0");
    EXPECT_EQ(k.param_builder, "kforge_build_k0");
    EXPECT_EQ(k.builder_tensors, (std::vector<std::string>{"X", "W", "Y", "b"}));
    EXPECT_EQ(k.cluster, (std::array<unsigned, 3>{2, 1, 1}));
    ASSERT_EQ(k.params.size(), 1u);
    EXPECT_EQ(k.params[0].kind, ParamKind::kParamBlob);
    EXPECT_TRUE(out.has_host_code);
    EXPECT_TRUE(out.uses_cutlass);
    EXPECT_EQ(out.plan.host_library, "kernels_host.so");
    EXPECT_TRUE(out.plan.buffers.empty());
    EXPECT_NE(out.cuda_source.find("extern \"C\" __global__"), std::string::npos);
    EXPECT_NE(out.cuda_source.find("cutlass::epilogue::fusion::Sm90RowBroadcast"),
              std::string::npos);
    // raster and swizzle are launch knobs (codegen/launch_knobs.h): in the plan, not the source
    EXPECT_EQ(k.knobs.raster, KFORGE_RASTER_ALONG_N);
    EXPECT_EQ(k.knobs.swizzle, 8);
}

TEST(GemmLower, DumpHookSeesEveryPassInOrder) {
    std::vector<std::string> passes;
    LowerOptions options;
    options.dump = [&](std::string_view pass, std::string_view) { passes.emplace_back(pass); };
    auto out = lower_program(program_gemm_bias_relu_bf16(), problem_gemm_bias_relu_bf16(), options);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(passes, (std::vector<std::string>{"tensors", "kernel k0", "source", "plan"}));
}

TEST(GemmLower, IntermediateTakesDtypeOfLastCast) {
    dsl::Program p = program_gemm_bias_relu_bf16();
    p.kernels[0].chain.back().tensor->name = "T";  // store into an intermediate instead of Y
    auto table = build_tensor_table(p, problem_gemm_bias_relu_bf16());
    ASSERT_TRUE(table.ok()) << table.error().to_string();
    ASSERT_TRUE(table->count("T"));
    EXPECT_TRUE(table->at("T").intermediate);
    EXPECT_EQ(table->at("T").dtype, DType::kBF16);
    EXPECT_EQ(table->at("T").shape, (std::vector<int64_t>{4096, 4096}));
}

// Each case: a change to a valid program and the phrase its error must contain.
struct Refusal {
    const char* what;
    void (*mutate)(dsl::Program&);
    const char* message;
};

TEST(GemmLowerError, RefusesWhatCutlassCannotExpress) {
    const Refusal cases[] = {
        {"second store", [](dsl::Program& p) {
             auto& c = p.kernels[0].chain;
             c.insert(c.begin() + 1, chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"}));
         }, "second `store`"},
        {"reduce", [](dsl::Program& p) {
             dsl::ChainOp r = chain_tensor(dsl::ChainOpKind::kReduce, "S", {"M"});
             r.reduce_over = "N";
             auto& c = p.kernels[0].chain;
             c.insert(c.begin() + 1, r);
         }, "`reduce`"},
        {"pingpong split-K", [](dsl::Program& p) {
             p.kernels[0].gemm.schedule = dsl::Schedule::kPingpong;
             p.kernels[0].gemm.split_k = 2;
         }, "pingpong"},
        {"cooperative tile 64", [](dsl::Program& p) { p.kernels[0].gemm.tile_m = 64; },
         "multiple of 128"},
        {"bf16 math on sm80", [](dsl::Program& p) {
             p.kernels[0].gemm.math = dsl::MathMode::kTf32;
         }, "not supported by the CUTLASS lowering: math tf32 on bf16"},
        {"broadcast [K]", [](dsl::Program& p) {
             p.kernels[0].chain[0].tensor->dims = {"K"};
         }, "broadcast"},
    };
    for (const auto& c : cases) {
        dsl::Program p = program_gemm_bias_relu_bf16();
        c.mutate(p);
        auto out = lower_program(p, problem_gemm_bias_relu_bf16(), LowerOptions{});
        ASSERT_FALSE(out.ok()) << c.what;
        EXPECT_NE(out.error().message.find(c.message), std::string::npos)
            << c.what << ": " << out.error().to_string();
        EXPECT_EQ(out.error().where, "k0") << c.what;
    }
}

TEST(GemmLowerError, F32SimtNeedsMultistage) {
    // (math tf32x3 with a Hopper schedule lowers staged: tests/codegen/gemm_stage_test.cpp)
    auto out = lower_program(program_linear_f32(dsl::Schedule::kCooperative,
                                                dsl::MathMode::kF32Simt),
                             problem_linear_f32(), LowerOptions{});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("use schedule multistage"), std::string::npos)
        << out.error().to_string();
}

TEST(GemmLowerError, UnknownTensorIsAUserError) {
    dsl::Program p = program_gemm_bias_relu_bf16();
    p.kernels[0].args[1].name = "Wt";
    auto out = lower_program(p, problem_gemm_bias_relu_bf16(), LowerOptions{});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("\"Wt\""), std::string::npos) << out.error().to_string();
}

TEST(GemmLowerError, MisalignedRowsAreRefused) {
    Problem problem = problem_gemm_bias_relu_bf16();
    problem.dims["K"] = 4095;
    for (auto& t : problem.tensors)
        for (size_t i = 0; i < t.dim_names.size(); ++i)
            if (t.dim_names[i] == "K") t.shape[i] = 4095;
    auto out = lower_program(program_gemm_bias_relu_bf16(), problem, LowerOptions{});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("16 bytes"), std::string::npos) << out.error().to_string();
}

// The multistage (sm80) kernel reads A and B as wide as their rows allow, down to 4 bytes, and
// writes D down to one element: KernelBench's irregular fp32 matmul (K = 2949, N = 5921) lowers.
TEST(GemmLower, MultistageAccessWidthFollowsTheRows) {
    auto with_dims = [](Problem problem, int64_t k, int64_t n) {
        problem.dims["K"] = k;
        problem.dims["N"] = n;
        for (auto& t : problem.tensors)
            for (size_t i = 0; i < t.dim_names.size(); ++i)
                if (t.dim_names[i] == "K" || t.dim_names[i] == "N")
                    t.shape[i] = t.dim_names[i] == "K" ? k : n;
        return problem;
    };
    auto align = [](const Lowered& l, const std::string& which) {
        const std::string key = "constexpr int Alignment" + which + " = ";
        const size_t at = l.cuda_source.find(key);
        return at == std::string::npos ? -1 : std::stoi(l.cuda_source.substr(at + key.size()));
    };
    const dsl::Program p = program_linear_f32(dsl::Schedule::kMultistage, dsl::MathMode::kTf32x3);
    auto odd = lower_program(p, with_dims(problem_linear_f32(), 2949, 5921), LowerOptions{});
    ASSERT_TRUE(odd.ok()) << odd.error().to_string();
    EXPECT_EQ(align(*odd, "A"), 1);
    EXPECT_EQ(align(*odd, "B"), 1);
    EXPECT_EQ(align(*odd, "D"), 1);
    auto even = lower_program(p, with_dims(problem_linear_f32(), 2950, 5922), LowerOptions{});
    ASSERT_TRUE(even.ok()) << even.error().to_string();
    EXPECT_EQ(align(*even, "A"), 2);
    EXPECT_EQ(align(*even, "D"), 2);
    // bf16 rows of an odd length are 2-byte aligned: below cp.async's 4 bytes
    Problem bf = problem_gemm_bias_relu_bf16();
    dsl::Program pb = program_gemm_bias_relu_bf16();
    pb.kernels[0].gemm.schedule = dsl::Schedule::kMultistage;
    pb.kernels[0].gemm.cluster_m = pb.kernels[0].gemm.cluster_n = 1;
    auto bf_odd = lower_program(pb, with_dims(bf, 4095, bf.dims.at("N")), LowerOptions{});
    ASSERT_FALSE(bf_odd.ok());
    EXPECT_NE(bf_odd.error().message.find("multiple of 4 bytes"), std::string::npos)
        << bf_odd.error().to_string();
}

// nn.Linear on [batch, seq, features]: X[F,M,K] x W[N,K] -> Y[F,M,N] is one [F*M, K] GEMM; the
// builder multiplies M by F at run time, [F,M,N] residuals stay matrices; a residual that would
// broadcast over the folded F ([M,N]) makes F a batch dim instead (W and Q with batch stride 0).
TEST(GemmLower, ALeadingDimOfXFoldsIntoM) {
    const std::string head = R"({"name": "linear3d", "dims": {"F": 8, "M": 512, "N": 256, "K": 128},
      "inputs": {"X": {"shape": ["F", "M", "K"], "dtype": "bf16"},
                 "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
                 "R": {"shape": ["F", "M", "N"], "dtype": "bf16"},
                 "Q": {"shape": ["M", "N"], "dtype": "bf16"}},)";
    Problem problem = problem_from(head + R"(
      "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "H"},
                {"op": "add", "inputs": ["H", "R"], "output": "S"},
                {"op": "add", "inputs": ["S", "Q"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "bf16"}})");
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 64;
    auto program = [&](std::vector<dsl::ChainOp> chain, dsl::TensorRef x) {
        chain.push_back(chain_cast(DType::kBF16));
        chain.push_back(chain_tensor(dsl::ChainOpKind::kStore, "Y", {"F", "M", "N"}));
        return program_of("linear3d", "linear3d",
                          {gemm_kernel("k0", x, tref("W", {"N", "K"}), c, chain)});
    };
    auto out = lower_program(
        program({chain_tensor(dsl::ChainOpKind::kAdd, "R", {"F", "M", "N"})},
                tref("X", {"F", "M", "K"})),
        problem, LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_NE(out->cuda_source.find("    M *= F;\n"), std::string::npos);
    EXPECT_EQ(out->cuda_source.find("batch_count=*/int(L)"), std::string::npos);  // not batched
    auto over = lower_program(
        program({chain_tensor(dsl::ChainOpKind::kAdd, "Q", {"M", "N"})}, tref("X", {"F", "M", "K"})),
        problem, LowerOptions{});
    ASSERT_TRUE(over.ok()) << over.error().to_string();
    EXPECT_EQ(over->cuda_source.find("    M *= F;\n"), std::string::npos);  // not folded
    EXPECT_NE(over->cuda_source.find("L = in->dims[0];"), std::string::npos);  // F, the batch
    EXPECT_NE(over->cuda_source.find("cute::get<2>(stride_b) = 0;"), std::string::npos);
    EXPECT_NE(over->cuda_source.find("cute::get<2>(stride_c) = 0;"), std::string::npos);  // Q
}

// Two leading dims ([P,F,M,K] x [N,K], einsum 'bijl,lk->bijk'): both fold into M, each dim read
// from the harness; a [P,F,M,N] residual stays a matrix, an [F,M,N] one has part of the batch
// dims P, F (no fold fits it): refused.
TEST(GemmLower, EveryLeadingDimOfXFoldsIntoM) {
    Problem problem = problem_from(R"({"name": "linear4d",
      "dims": {"P": 2, "F": 8, "M": 512, "N": 256, "K": 128},
      "inputs": {"X": {"shape": ["P", "F", "M", "K"], "dtype": "bf16"},
                 "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
                 "R": {"shape": ["P", "F", "M", "N"], "dtype": "bf16"},
                 "Q": {"shape": ["F", "M", "N"], "dtype": "bf16"}},
      "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "H"},
                {"op": "add", "inputs": ["H", "R"], "output": "S"},
                {"op": "add", "inputs": ["S", "Q"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "bf16"}})");
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 64;
    auto program = [&](const char* operand, std::vector<std::string> dims) {
        std::vector<dsl::ChainOp> chain = {chain_tensor(dsl::ChainOpKind::kAdd, operand, dims),
                                           chain_cast(DType::kBF16),
                                           chain_tensor(dsl::ChainOpKind::kStore, "Y",
                                                        {"P", "F", "M", "N"})};
        return program_of("linear4d", "linear4d",
                          {gemm_kernel("k0", tref("X", {"P", "F", "M", "K"}),
                                       tref("W", {"N", "K"}), c, chain)});
    };
    auto out = lower_program(program("R", {"P", "F", "M", "N"}), problem, LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    const std::string& src = out->cuda_source;
    size_t folds = 0;  // P and F, each read from the harness's dims
    for (size_t at = src.find("F *= in->dims["); at != std::string::npos;
         at = src.find("F *= in->dims[", at + 1))
        ++folds;
    EXPECT_EQ(folds, 2u) << src;
    EXPECT_NE(src.find("    M *= F;\n"), std::string::npos);
    auto over = lower_program(program("Q", {"F", "M", "N"}), problem, LowerOptions{});
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.error().message.find("operand Q broadcast as it is"), std::string::npos)
        << over.error().to_string();
}

}  // namespace
}  // namespace kforge::codegen
