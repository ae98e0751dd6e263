// Attention under a structured mask (issues 25 / 26: MinGPT's causal attention, SDPA
// is_causal): matmul -> scale -> masked_fill "triu" 1 -> softmax -> dropout p = 0 -> matmul plans
// as one attention kernel with `mask triu` (no mask tensor), the lowered WMMA kernel computes the
// mask from the indices and skips the fully masked tiles, NVRTC compiles it, CUTLASS's FMHA is
// seeded with its CausalFusion under bf16; a bool data mask is not taken for a causal one, a
// program claiming the wrong triangle is refused, and a standalone structured masked_fill is a
// tril / triu rowwise kernel writing the value. Every plan passes the simulated pipeline (a
// labelled test double: the fp64 interpreter plus the time model).
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluator.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::has;
using seedtest::h200;
using seedtest::kernels;
using seedtest::lowered_source;
using seedtest::problem_of;
using seedtest::seed_checked;

// softmax(q k^T * 0.125, masked) [dropout 0] v over [B, H, S, E]; `mask`: the masked_fill's
// attributes and inputs after "t" (`], "mask": "triu", "diagonal": 1` or `, "m"]`).
Problem masked(const std::string& dtype, const std::string& policy, const std::string& mask,
               bool bool_input = false, int64_t s = 80) {
    const std::string m = bool_input ? R"(, "m": {"shape": ["S", "S"], "dtype": "bool"})" : "";
    return problem_of(R"({"name": "causal", "dims": {"B": 2, "H": 3, "S": )" + std::to_string(s) +
                      R"(, "E": 64},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("},
                   "k": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("},
                   "v": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("})" + m + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  {"op": "masked_fill", "inputs": ["t")" + mask + R"(, "value": "-inf", "output": "u"},
                  {"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},
                  {"op": "dropout", "inputs": ["p"], "output": "d"},
                  {"op": "matmul", "inputs": ["d", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": ")" + policy + R"("}})");
}

const char* kCausal = R"(], "mask": "triu", "diagonal": 1)";

TEST(AttentionCausal, CausalMaskIsOneAttentionKernelWithoutAMaskTensor) {
    const Problem p = masked("f32", "fp32_strict", kCausal);
    // the seed: CUTLASS's memory-efficient attention, its CausalFromTopLeft (attention_mea_plan_test)
    EXPECT_TRUE(has(seed_checked(p), "mask triu diagonal 1 impl cutlass_mea mea_tile 64x64"));
    planner::SeedOptions wmma;
    wmma.attention_wmma = true;
    const std::string t = seed_checked(p, wmma);
    EXPECT_EQ(kernels(t), 1u) << t;
    EXPECT_TRUE(has(t, "attention(q[B,H,S,E], k[B,H,S,E], v[B,H,S,E]) tile")) << t;
    EXPECT_TRUE(has(t, "mask triu diagonal 1")) << t;
    const std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "kMask = 3")) << src;
    EXPECT_TRUE(has(src, "kTri = 2, kDiag = 1")) << src;
    EXPECT_TRUE(has(src, "kSkip = true")) << src;
    auto rtc = compile::nvrtc_compile_cubin(src, compile::default_compile_options("sm_90a"));
    EXPECT_TRUE(rtc.ok()) << (rtc.ok() ? "" : rtc.error().to_string()) << "\n" << src;
}

TEST(AttentionCausal, ADataMaskIsNotTakenForACausalOne) {
    // a bool input mask keeps its tensor (any pattern: drawn at random in evaluation)
    const Problem p = masked("f16", "fp16", R"(, "m"])", true);
    planner::SeedOptions wmma;  // (the seed: cutlass_mea with the mask converted)
    wmma.attention_wmma = true;
    const std::string t = seed_checked(p, wmma);
    EXPECT_EQ(kernels(t), 1u) << t;
    EXPECT_TRUE(has(t, "v[B,H,S,E], m[S,S])")) << t;
    EXPECT_FALSE(has(t, "mask triu")) << t;
    EXPECT_TRUE(has(lowered_source(p, t), "kMask = 1")) << t;
    // tril 0 (fill j <= i: the anti-causal triangle) is its own mask, not triu
    const Problem q = masked("f16", "fp16", R"(], "mask": "tril")");
    const std::string u = seed_checked(q);
    EXPECT_TRUE(has(u, "mask tril")) << u;
    EXPECT_FALSE(has(u, "diagonal")) << u;
    EXPECT_TRUE(has(lowered_source(q, u), "kTri = 1, kDiag = 0")) << u;
}

TEST(AttentionCausal, WrongTriangleOrDiagonalIsRefused) {
    const Problem p = masked("f32", "fp32_strict", kCausal);
    const std::string t = seed_checked(p);
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"mask triu", "mask tril"},
                                   {"diagonal 1", "diagonal 0"}, {" mask triu diagonal 1", ""}}) {
        std::string bad = t;
        ASSERT_NE(bad.find(from), std::string::npos) << t;
        bad.replace(bad.find(from), from.size(), to);
        auto parsed = dsl::parse_program(bad, "bad.kf");
        ASSERT_TRUE(parsed.ok()) << bad;
        EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", bad}).ok()) << bad;
    }
}

TEST(AttentionCausal, Bf16SeedsCutlassFmhaWithCausalFusion) {
    const Problem p = masked("bf16", "bf16", kCausal, false, 128);
    const std::string t = seed_checked(p);
    EXPECT_TRUE(has(t, "impl cutlass_fmha")) << t;
    EXPECT_TRUE(has(t, "mask triu diagonal 1")) << t;
    const std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "cutlass::fmha::collective::CausalFusion")) << src;
    // another triangle is not CUTLASS's: the WMMA kernel is seeded
    const Problem q = masked("bf16", "bf16", R"(], "mask": "triu", "diagonal": 2)", false, 128);
    const std::string u = seed_checked(q);
    EXPECT_FALSE(has(u, "cutlass_fmha")) << u;
    EXPECT_TRUE(has(u, "mask triu diagonal 2")) << u;
}

TEST(AttentionCausal, StandaloneStructuredMaskIsATriangleKernel) {
    // Mamba-2's segsum: exp(masked_fill(x, ~tril(ones)) = triu 1, -inf)
    const Problem p = problem_of(R"({"name": "segsum", "dims": {"B": 4, "T": 32},
        "inputs": {"x": {"shape": ["B", "T", "T"], "dtype": "f32"}},
        "graph": [{"op": "masked_fill", "inputs": ["x"], "mask": "triu", "diagonal": 1,
                   "value": "-inf", "output": "m"},
                  {"op": "exp", "inputs": ["m"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    const std::string t = seed_checked(p);
    EXPECT_TRUE(has(t, "rowwise tril(x[B,T,T])")) << t;  // keeps tril 0, fills the rest
    const std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "diagonal 0, the rest filled")) << src;
    EXPECT_TRUE(has(src, "-INFINITY") || has(src, "-inf") || has(src, "__int_as_float")) << src;
}

TEST(AttentionCausal, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {masked("f32", "fp32_strict", kCausal),
                             masked("f16", "fp16", R"(], "mask": "tril", "diagonal": -3)")}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << p.name << ": " << r.message;
    }
}

}  // namespace
}  // namespace kforge
