// Attention on CUTLASS's memory-efficient attention (issue 25: f32, masks, any head dim) through
// the planner and the lowering, device-free and with no CUTLASS compile (the bench-labelled
// test_codegen_attention_mea_compile compiles it; bench/attention/run.sh times it on the GPU):
// the seed is `impl cutlass_mea` where the Hopper FMHA does not apply and it does (f32 inputs,
// additive masks, causal masks, head dims past 256, E != F), with PyTorch's sm_80 tile for the
// head dims; a bool mask filled with -inf is converted to the additive form by a launch of its
// own (another fill keeps the WMMA kernel), O's consumers are their own kernels; the lowered source
// instantiates kernel_forward.h's AttentionKernel from the installed package with a param
// builder that reads the run-time dims, the mask's strides and the causal diagonal.
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/lower.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluator.h"
#include "planner/plan.h"
#include "search/suite_start.h"
#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::has;
using seedtest::h200;
using seedtest::problem_of;
using seedtest::seed_checked;

// softmax(q k^T * 0.125 [+ m | masked_fill m | causal]) v over [B, H, S, E] x [B, H, L, E|F];
// `mask` is "", "add" (m of `mask_shape`, the inputs' dtype), "bool" or "causal".
Problem sdpa(const std::string& dtype, const std::string& policy, int64_t e, int64_t f,
             const std::string& mask = "", const std::string& mask_shape = R"("S", "L")",
             const std::string& after = "", const std::string& fill = "\"-inf\"") {
    const std::string out = after.empty() ? "o" : "h";
    const int64_t l = mask == "causal" ? 128 : 72;
    std::string m, op;
    if (mask == "add" || mask == "bool")
        m = R"(, "m": {"shape": [)" + mask_shape + R"(], "dtype": ")" +
            (mask == "bool" ? std::string("bool") : dtype) + R"("})";
    if (mask == "add") op = R"({"op": "add", "inputs": ["t", "m"], "output": "u"},)";
    if (mask == "bool")
        op = R"({"op": "masked_fill", "inputs": ["t", "m"], "output": "u", "value": )" + fill + "},";
    if (mask == "causal")
        op = R"({"op": "masked_fill", "inputs": ["t"], "mask": "triu", "diagonal": 1, "output": "u", "value": "-inf"},)";
    return problem_of(R"({"name": "sdpa", "dims": {"B": 2, "H": 3, "S": 128, "L": )" +
                      std::to_string(l) + R"(, "E": )" + std::to_string(e) + R"(, "F": )" +
                      std::to_string(f) + R"(},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": ")" + dtype + R"("},
                   "v": {"shape": ["B", "H", "L", "F"], "dtype": ")" + dtype + R"("})" + m + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  )" + op + R"({"op": "softmax", "inputs": [")" + (mask.empty() ? "t" : "u") +
                      R"("], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": ")" + out + R"("})" +
                      (after.empty() ? "" : R"(, {"op": ")" + after + R"(", "inputs": ["h"], "output": "o"})") +
                      R"(],
        "outputs": ["o"], "precision": {"policy": ")" + policy + R"("}})");
}

Expected<codegen::Lowered> lowered(const Problem& p, const std::string& text,
                                   const std::string& arch = "sm_90a") {
    auto parsed = dsl::parse_program(text, "seed.kf");
    if (!parsed.ok()) return parsed.error();
    codegen::LowerOptions o;
    o.arch = arch;
    return codegen::lower_program(*parsed, p, o);
}

TEST(AttentionMeaPlan, SeedIsCutlassMeaWhereFmhaDoesNotApply) {
    EXPECT_TRUE(has(seed_checked(sdpa("f32", "fp32_strict", 64, 64)),
                    "scale 0.125 impl cutlass_mea mea_tile 64x64"));
    EXPECT_TRUE(has(seed_checked(sdpa("f32", "fp32_strict", 128, 128)), "impl cutlass_mea mea_tile 32x128"));
    // head dims past any fused tile of the WMMA kernel: fused now, not the unfused path
    const std::string wide = seed_checked(sdpa("f32", "fp32_strict", 1024, 1024));
    EXPECT_TRUE(has(wide, "impl cutlass_mea mea_tile 32x128")) << wide;
    EXPECT_EQ(seedtest::kernels(wide), 1u) << wide;
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 64, 48)), "impl cutlass_mea mea_tile 64x64"));
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 64, 64, "add")), "impl cutlass_mea"));
    EXPECT_TRUE(has(seed_checked(sdpa("f32", "fp32_strict", 64, 64, "add", R"("B", "H", "S", "L")")),
                    "impl cutlass_mea"));
    const std::string causal = seed_checked(sdpa("f32", "fp32_strict", 64, 64, "causal"));
    EXPECT_TRUE(has(causal, "mask triu diagonal 1 impl cutlass_mea mea_tile 64x64")) << causal;
    // 16-bit without a mask keeps the Hopper FMHA first
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 64, 64)), "impl cutlass_fmha"));
}

TEST(AttentionMeaPlan, WmmaWhereMeaDoesNotApply) {
    for (const Problem& p : {sdpa("bf16", "bf16", 64, 64, "bool", R"("S", "L")", "", "-1e9"),
                             sdpa("f32", "fp32_strict", 62, 62),
                             sdpa("f32", "fp32_strict", 64, 64, "add", R"("B", 1, "S", "L")")}) {
        const std::string t = seed_checked(p);
        EXPECT_FALSE(has(t, "cutlass_mea")) << t;
        EXPECT_TRUE(has(t, "attention(")) << t;
        EXPECT_TRUE(has(t, " tile ")) << t;
    }
    planner::SeedOptions wmma;
    wmma.attention_wmma = true;
    EXPECT_FALSE(has(seed_checked(sdpa("f32", "fp32_strict", 64, 64), wmma), "cutlass_mea"));
}

TEST(AttentionMeaPlan, ABoolMaskFilledWithMinusInfIsConvertedFirst) {
    // masked_fill(m, -inf) is adding -inf where m: a launch writes the additive mask (the
    // inputs' dtype, the mask's shape) into a workspace the kernel reads as its attn_bias
    const Problem p = sdpa("bf16", "bf16", 64, 64, "bool");
    const std::string t = seed_checked(p);
    ASSERT_TRUE(has(t, "impl cutlass_mea")) << t;
    auto low = lowered(p, t);
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const std::string& src = low->cuda_source;
    for (const char* want :
         {"kforge_k0_bias(const bool* __restrict__ t_m, kforge_mea_k0::Kernel::scalar_t* "
          "__restrict__ t_k0_bias)",
          "i < 9216LL;", "t_k0_bias[i] = t_m[i] ? T(-cutlass::platform::numeric_limits<float>::infinity()) : T(0.0f);",
          "AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, false, true>"})
        EXPECT_TRUE(has(src, want)) << want << "\n" << src;
    ASSERT_EQ(low->plan.kernels.size(), 2u);
    EXPECT_EQ(low->plan.kernels[0].symbol, "kforge_k0_bias");
    EXPECT_EQ(low->plan.kernels[1].builder_tensors,
              (std::vector<std::string>{"q", "k", "v", "o", "k0_bias"}));
    const auto b = std::find_if(low->plan.buffers.begin(), low->plan.buffers.end(),
                                [](const codegen::BufferDecl& d) { return d.name == "k0_bias"; });
    ASSERT_NE(b, low->plan.buffers.end());
    EXPECT_EQ(b->dtype, DType::kBF16);
    EXPECT_EQ(b->shape, (std::vector<int64_t>{128, 72}));
}

TEST(AttentionMeaPlan, ConsumersOfOAreTheirOwnKernel) {
    const std::string t = seed_checked(sdpa("f32", "fp32_strict", 64, 64, "", R"("S", "L")", "relu"));
    EXPECT_TRUE(has(t, "impl cutlass_mea")) << t;
    EXPECT_EQ(seedtest::kernels(t), 2u) << t;
}

TEST(AttentionMeaPlan, LoweredSourceInstantiatesTheKernelAndItsBuilder) {
    const Problem p = sdpa("f32", "fp32_strict", 64, 64, "add", R"("B", "H", "S", "L")");
    auto low = lowered(p, seed_checked(p));
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const std::string& src = low->cuda_source;
    EXPECT_TRUE(low->uses_cutlass);
    EXPECT_TRUE(low->has_host_code);
    for (const char* want :
         {"#include \"41_fused_multi_head_attention/kernel_forward.h\"",
          "using Kernel = AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, false, true>;",
          "kforge_k0(typename kforge_mea_k0::Kernel::Params p)",
          "kforge_mea_k0::Kernel::attention_kernel(p);",
          "extern \"C\" int kforge_build_k0(const KforgeBuildArgs* in, KforgeBuiltLaunch* out)",
          // dims sorted B, E, F, H, L, S: every batch dim into B, then S, L, E, F at run time
          "    B *= in->dims[0];\n    B *= in->dims[3];\n    S *= in->dims[5];\n"
          "    L *= in->dims[4];\n    E *= in->dims[1];\n    F *= in->dims[2];\n",
          "params.bias_strideM = int32_t(L);", "params.bias_strideB = S * L;", "params.scale = 0.125f;",
          "params.custom_mask_type = Kernel::NoCustomMask;", "params.num_heads = 1;",
          "out->workspace_bytes = 0;"})
        EXPECT_TRUE(has(src, want)) << want << "\n" << src;
    ASSERT_EQ(low->plan.kernels.size(), 1u);
    const codegen::KernelLaunch& k = low->plan.kernels[0];
    EXPECT_EQ(k.param_builder, "kforge_build_k0");
    EXPECT_EQ(k.builder_tensors, (std::vector<std::string>{"q", "k", "v", "o", "m"}));

    // a mask broadcast over the batch dims: no batch stride
    const Problem b = sdpa("f32", "fp32_strict", 64, 64, "add");
    auto lb = lowered(b, seed_checked(b));
    ASSERT_TRUE(lb.ok()) << lb.error().to_string();
    EXPECT_TRUE(has(lb->cuda_source, "params.bias_strideB = 0;"));
    EXPECT_TRUE(has(lb->cuda_source, "params.bias_strideM = int32_t(L);"));

    // causal: CausalFromTopLeft, diagonal 1 is offset 0; no bias
    const Problem c = sdpa("f32", "fp32_strict", 64, 64, "causal");
    auto lc = lowered(c, seed_checked(c));
    ASSERT_TRUE(lc.ok()) << lc.error().to_string();
    for (const char* want : {"AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, false, false>",
                             "params.custom_mask_type = Kernel::CausalFromTopLeft;",
                             "params.causal_diagonal_offset = 0u;"})
        EXPECT_TRUE(has(lc->cuda_source, want)) << want << "\n" << lc->cuda_source;

    // 16-bit head dims past the key tile: the f32 accumulator is the builder's workspace
    const Problem w = sdpa("bf16", "bf16", 512, 512, "add");
    auto lw = lowered(w, seed_checked(w));
    ASSERT_TRUE(lw.ok()) << lw.error().to_string();
    EXPECT_TRUE(has(lw->cuda_source, "true, 32, 128, 65536, false, true>")) << lw->cuda_source;
    EXPECT_TRUE(has(lw->cuda_source, "return KFORGE_BUILD_NEED_WORKSPACE;"));
}

TEST(AttentionMeaPlan, ALiteralHeadCountIsALiteralInTheBuilder) {
    // MinGPT's heads are written as a number ([B, 8, T, 96] after the importer's view): the
    // builder multiplies it in as a literal (it had looked the number up as a run-time dim and
    // refused, so the planner fell back to WMMA for L3 43 / 44)
    const Problem p = problem_of(R"({"name": "heads", "dims": {"B": 2, "T": 64, "E": 96},
        "inputs": {"q": {"shape": ["B", 8, "T", "E"], "dtype": "f32"},
                   "k": {"shape": ["B", 8, "T", "E"], "dtype": "f32"},
                   "v": {"shape": ["B", 8, "T", "E"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "softmax", "inputs": ["s"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "fp32_strict"}})");
    const std::string t = seed_checked(p);
    ASSERT_TRUE(has(t, "impl cutlass_mea")) << t;
    auto low = lowered(p, t);
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    EXPECT_TRUE(has(low->cuda_source, "    B *= in->dims[0];\n    B *= 8LL;\n")) << low->cuda_source;
}

TEST(AttentionMeaPlan, LoweringRefusesAnOlderArch) {
    const Problem p = sdpa("f32", "fp32_strict", 64, 64);
    auto low = lowered(p, seed_checked(p), "sm_75");
    ASSERT_FALSE(low.ok());
    EXPECT_TRUE(has(low.error().to_string(), "needs sm_80 or later")) << low.error().to_string();
    EXPECT_TRUE(lowered(p, seed_checked(p), "sm_80").ok());
}

TEST(AttentionMeaPlan, SuiteStartCountsItAnNvccCompile) {
    const Problem p = sdpa("f32", "fp32_strict", 64, 64);
    auto mea = dsl::parse_program(seed_checked(p), "seed.kf");
    ASSERT_TRUE(mea.ok());
    const search::CompileClass c = search::compile_class(*mea);
    EXPECT_EQ(c.kind, "attention_mea");
    EXPECT_EQ(c.config, "64x64");
    EXPECT_TRUE(c.needs_nvcc);
}

TEST(AttentionMeaPlan, SeedsPassTheSimulatedPipeline) {
    // every gate's shape (the reduced correctness shapes too) checks and lowers; the simulated
    // device (a labelled test double: fp64 interpreter and time model) compiles nothing
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {sdpa("f32", "fp32_strict", 64, 64, "add", R"("B", "H", "S", "L")"),
                             sdpa("f32", "fp32_strict", 64, 64, "causal"),
                             sdpa("bf16", "bf16", 64, 64, "bool")}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        ASSERT_TRUE(has(req.program_text, "impl cutlass_mea")) << req.program_text;
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << r.message;
        EXPECT_TRUE(r.simulated);
    }
}

}  // namespace
}  // namespace kforge
