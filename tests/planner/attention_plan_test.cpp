// Attention through the planner, the checker, the lowering and NVRTC (issue 25): the pattern
// matmul(Q, K^T) -> scale -> [masked_fill | add mask] -> softmax -> matmul(., V) plans as one
// attention kernel (bf16 / f16 on the tensor cores, f32 on the CUDA cores), the unfused variant
// keeps the gemm / softmax / gemm kernels, the lowered CUDA compiles with NVRTC for sm_90a, a
// wrong program is refused, a head dim past shared memory is refused with both reasons, and each
// plan passes the gated pipeline on the simulated device (a labelled test double: the fp64
// interpreter plus the time model).
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

// softmax(q k^T * 0.125 [mask]) v over [B, H, S|L, E|F]; `mask_op`: "" (none), "masked_fill"
// (bool m [S, L], fill -inf) or "add" (float m [S, L]); S == L when a mask is read.
Problem attention(const std::string& dtype, const std::string& policy, const std::string& mask_op = "",
                  int64_t e = 64, const std::string& after = "") {
    const std::string l = mask_op.empty() ? "L" : "S";
    const std::string mask_in =
        mask_op.empty() ? ""
                        : R"(, "m": {"shape": ["S", "S"], "dtype": ")" +
                              std::string(mask_op == "add" ? dtype : "bool") + R"("})";
    const std::string mask_node =
        mask_op.empty() ? R"({"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},)"
        : mask_op == "add"
            ? R"({"op": "add", "inputs": ["t", "m"], "output": "u"},
                 {"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},)"
            : R"({"op": "masked_fill", "inputs": ["t", "m"], "output": "u", "value": "-inf"},
                 {"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},)";
    const std::string out = after.empty() ? "o" : "h";
    std::string json = R"({"name": "attention", "dims": {"B": 2, "H": 3, "S": 80, "L": 72, "E": )" +
                       std::to_string(e) + R"(, "F": 48},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("},
                   "k": {"shape": ["B", "H", ")" + l + R"(", "E"], "dtype": ")" + dtype + R"("},
                   "v": {"shape": ["B", "H", ")" + l + R"(", "F"], "dtype": ")" + dtype + R"("})" +
                       mask_in + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  )" + mask_node + R"(
                  {"op": "matmul", "inputs": ["p", "v"], "output": ")" + out + R"("})" +
                       (after.empty() ? "" : R"(, {"op": ")" + after + R"(", "inputs": ["h"], "output": "o"})") +
                       R"(],
        "outputs": ["o"], "precision": {"policy": ")" + policy + R"("}})";
    return problem_of(json);
}

// The seed options that plan kforge's WMMA kernel (or the unfused path) only: the CUTLASS
// kernels come first where they apply (attention_fmha_plan_test.cpp, attention_mea_plan_test.cpp).
planner::SeedOptions wmma() {
    planner::SeedOptions o;
    o.attention_wmma = true;
    return o;
}

void expect_nvrtc_compiles(const Problem& p, const std::string& text) {
    const std::string src = lowered_source(p, text);
    ASSERT_FALSE(src.empty()) << text;
    auto rtc = compile::nvrtc_compile_cubin(src, compile::default_compile_options("sm_90a"));
    ASSERT_TRUE(rtc.ok()) << rtc.error().to_string() << "\n" << src;
}

TEST(AttentionPlan, SdpaIsOneAttentionKernel) {
    const Problem p = attention("bf16", "bf16");
    const std::string t = seed_checked(p, wmma());
    EXPECT_EQ(kernels(t), 1u) << t;
    EXPECT_TRUE(has(t, "kernel k0 = attention(q[B,H,S,E], k[B,H,L,E], v[B,H,L,F]) tile 64x64 "
                       "scale 0.125")) << t;
    EXPECT_TRUE(has(t, "{ cast bf16; store o[B,H,S,F] }")) << t;
    const std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "kforge::attention_forward<kforge_k0_attention, 64, 64, __nv_bfloat16, "
                         "__nv_bfloat16, float, 0>")) << src;
    EXPECT_TRUE(has(src, "kMask = 0")) << src;
}

TEST(AttentionPlan, MasksAndTheChainAfterTheOutput) {
    // a bool causal-style mask: masked_fill -inf, tiles fully masked are skipped
    Problem p = attention("f16", "fp16", "masked_fill");
    std::string t = seed_checked(p, wmma());
    EXPECT_EQ(kernels(t), 1u) << t;
    EXPECT_TRUE(has(t, "attention(q[B,H,S,E], k[B,H,S,E], v[B,H,S,F], m[S,S])")) << t;
    std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "kMask = 1")) << src;
    EXPECT_TRUE(has(src, "kSkip = true")) << src;
    // a float mask added, the element-wise consumer absorbed
    p = attention("f32", "fp32_strict", "add", 64, "relu");
    t = seed_checked(p, wmma());  // (the seed: cutlass_mea, and relu its own kernel)
    EXPECT_EQ(kernels(t), 1u) << t;
    EXPECT_TRUE(has(t, "{ relu; store o[B,H,S,F] }")) << t;
    src = lowered_source(p, t);
    EXPECT_TRUE(has(src, "kMask = 2")) << src;
    EXPECT_TRUE(has(src, ", float, float, float, 3>")) << src;  // 3xTF32 under fp32_strict
}

TEST(AttentionPlan, UnfusedVariantKeepsTheOpsApart) {
    // one batch dim, so the unfused gemm path is expressible: the variant the search may choose
    const Problem p = problem_of(R"({"name": "bmm_attention", "dims": {"N": 6, "S": 64, "L": 48, "E": 32},
        "inputs": {"q": {"shape": ["N", "S", "E"], "dtype": "bf16"},
                   "k": {"shape": ["N", "L", "E"], "dtype": "bf16"},
                   "v": {"shape": ["N", "L", "E"], "dtype": "bf16"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "softmax", "inputs": ["s"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "bf16"}})");
    // (fused: CUTLASS's FMHA, as bf16 with one head dim of 32 allows; attention_fmha_plan_test)
    EXPECT_TRUE(has(seed_checked(p), "attention(q[N,S,E], k[N,L,E], v[N,L,E]) impl cutlass_fmha"));
    planner::SeedOptions unfused;
    unfused.fuse = false;
    const std::string t = seed_checked(p, unfused);
    EXPECT_FALSE(has(t, "attention(")) << t;
    EXPECT_TRUE(has(t, "gemm(")) << t;
    EXPECT_TRUE(has(t, "rowwise softmax(")) << t;
}

TEST(AttentionPlan, NvrtcCompilesEachOperandPath) {
    // bf16 and f16 tensor cores, 3xTF32 (fp32_strict), TF32, f32 rounded to bf16 (bf16 policy)
    for (const Problem& p : {attention("bf16", "bf16"), attention("f16", "fp16", "masked_fill"),
                             attention("f32", "fp32_strict", "add", 40),
                             attention("f32", "tf32", "", 32), attention("f32", "bf16", "", 96)}) {
        SCOPED_TRACE(p.tensors.front().name + " " + std::string(to_string(p.policy)));
        expect_nvrtc_compiles(p, seed_checked(p, wmma()));
    }
    // `math f32`: FMA on the CUDA cores
    const Problem p = attention("f32", "fp32_strict");
    std::string t = seed_checked(p, wmma());
    t.replace(t.find("tile 64x64"), 10, "tile 64x64 math f32");
    const std::string src = lowered_source(p, t);
    EXPECT_TRUE(has(src, ", float, float, float, 0>")) << t << src;
    expect_nvrtc_compiles(p, t);
}

TEST(AttentionPlan, WrongProgramsAreRefused) {
    const Problem p = attention("bf16", "bf16");
    const std::string t = seed_checked(p, wmma());
    std::string bad = t;
    bad.replace(bad.find("scale 0.125"), 11, "scale 0.25");  // another scale
    auto parsed = dsl::parse_program(bad, "bad.kf");
    ASSERT_TRUE(parsed.ok()) << bad;
    EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", bad}).ok()) << bad;
    bad = t;
    bad.replace(bad.find("tile 64x64"), 10, "tile 64x48");  // not a tile
    EXPECT_FALSE(dsl::parse_program(bad, "bad.kf").ok()) << bad;
    bad = t;
    bad.replace(bad.find(", v[B,H,L,F])"), 13, ")");  // no V
    auto missing = dsl::parse_program(bad, "bad.kf");
    ASSERT_FALSE(missing.ok()) << bad;
    EXPECT_TRUE(has(missing.error().to_string(), "attention takes Q")) << missing.error().to_string();
}

TEST(AttentionPlan, HeadDimPastSharedMemoryPlansUnfused) {
    // E = F = 1024 in f32 (KernelBench level 1, 97's head dim): CUTLASS's memory-efficient
    // attention takes it (a loop over the value columns); the WMMA kernel's output accumulator
    // would spill its registers, so without the CUTLASS kernels the unfused path plans (rank-4
    // batched gemms over B*H, planner/plan_gemm.cpp, and the softmax between)
    const Problem p = problem_of(R"({"name": "wide", "dims": {"B": 2, "H": 2, "S": 64, "L": 64, "E": 1024},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": "f32"},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": "f32"},
                   "v": {"shape": ["B", "H", "L", "E"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "softmax", "inputs": ["s"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "fp32_strict"}})");
    EXPECT_TRUE(has(seed_checked(p), "impl cutlass_mea mea_tile 32x128"));
    auto prog = planner::seed_program(p, h200(), wmma());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const std::string plan = planner::describe_fusion_plan(*prog);
    EXPECT_FALSE(has(plan, "attention")) << plan;
    EXPECT_TRUE(has(plan, "k0 gemm")) << plan;
    EXPECT_TRUE(has(plan, "gemm -> o")) << plan;
}

// bf16 at head dim 512 (the fused kernels' tiles do not fit): planned unfused, its scaled
// scores stored as f32 for the softmax (bf16 scores failed the bf16 band on the H100), the
// probabilities in bf16 for the second gemm, the output in the problem's dtype.
TEST(AttentionPlan, UnfusedScoresStayF32) {
    const Problem p = problem_of(R"({"name": "wide_bf16", "dims": {"B": 2, "H": 2, "S": 256, "L": 256, "E": 512},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"},
                   "v": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.044, "output": "t"},
                  {"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "bf16"}})");
    const std::string t = seed_checked(p, wmma());  // (the seed is cutlass_mea)
    EXPECT_FALSE(has(t, "attention(")) << t;
    EXPECT_TRUE(has(t, "{ mul 0.044; store t[B,H,S,L] }")) << t;  // no cast: f32 from the accumulator
    EXPECT_TRUE(has(t, "{ cast bf16; store p[B,H,S,L] }")) << t;
    EXPECT_TRUE(has(t, "{ cast bf16; store o[B,H,S,E] }")) << t;
}

TEST(AttentionPlan, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {attention("bf16", "bf16"), attention("f16", "fp16", "masked_fill"),
                             attention("f32", "fp32_strict", "add", 40, "relu")}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << p.name << ": " << r.message;
        EXPECT_TRUE(r.simulated);
    }
}

}  // namespace
}  // namespace kforge
