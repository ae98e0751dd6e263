// Attention on CUTLASS's Hopper FMHA (issue 25) through the planner and the lowering, device-free
// and with no CUTLASS compile (that takes minutes; bench/attention/run.sh compiles and times it
// on the GPU): the seed is `impl cutlass_fmha` where it applies (bf16 / f16 under its policy, one
// head dim, no mask, a chain that only stores O), with the fmha tile of the smallest head-dim
// instance that holds the head dim; the WMMA kernel is the fallback elsewhere and a seed
// variant; the lowered source instantiates 88_hopper_fmha's FmhaBuilder from the installed
// package and a param builder that reads the run-time dims and the program's scale.
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

// softmax(q k^T * 0.125 [mask]) v [after] over [B, H, S, E] x [B, H, L, E|F].
Problem sdpa(const std::string& dtype, const std::string& policy, int64_t e, int64_t f,
             bool mask = false, const std::string& after = "") {
    const std::string l = mask ? "S" : "L";
    const std::string out = after.empty() ? "o" : "h";
    return problem_of(R"({"name": "sdpa", "dims": {"B": 2, "H": 3, "S": 128, "L": 72, "E": )" +
                      std::to_string(e) + R"(, "F": )" + std::to_string(f) + R"(},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + dtype + R"("},
                   "k": {"shape": ["B", "H", ")" + l + R"(", "E"], "dtype": ")" + dtype + R"("},
                   "v": {"shape": ["B", "H", ")" + l + R"(", "F"], "dtype": ")" + dtype + R"("})" +
                      (mask ? R"(, "m": {"shape": ["S", "S"], "dtype": "bool"})" : "") + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  )" + (mask ? R"({"op": "masked_fill", "inputs": ["t", "m"], "output": "u", "value": "-inf"},
                  {"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},)"
                             : R"({"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},)") + R"(
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

TEST(AttentionFmhaPlan, SeedIsCutlassFmhaWhereItApplies) {
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 64, 64)),
                    "scale 0.125 impl cutlass_fmha fmha_tile 128x64x64 fmha_schedule cooperative"));
    EXPECT_TRUE(has(seed_checked(sdpa("f16", "fp16", 32, 32)),
                    "impl cutlass_fmha fmha_tile 128x64x32 fmha_schedule cooperative"));
    // 96 runs in the 128 head-dim tile (CUTLASS pads D within the tile); 256 has one instance
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 96, 96)), "fmha_tile 128x128x128"));
    EXPECT_TRUE(has(seed_checked(sdpa("bf16", "bf16", 256, 256)), "fmha_tile 128x64x256"));
}

TEST(AttentionFmhaPlan, OthersWhereFmhaDoesNotApply) {
    // CUTLASS's memory-efficient attention where it computes the kernel (two head dims, f32, a
    // bool mask filled with -inf: tests/planner/attention_mea_plan_test.cpp), else WMMA
    for (const Problem& p : {sdpa("bf16", "bf16", 64, 48), sdpa("f32", "fp32_strict", 64, 64),
                             sdpa("bf16", "bf16", 64, 64, true)}) {
        const std::string t = seed_checked(p);
        EXPECT_FALSE(has(t, "cutlass_fmha")) << t;
        EXPECT_TRUE(has(t, "attention(")) << t;
        EXPECT_TRUE(has(t, " tile ") || has(t, "impl cutlass_mea")) << t;
    }
}

TEST(AttentionFmhaPlan, ConsumersOfOStayApartFromTheCutlassKernel) {
    // CUTLASS's kernels write O themselves: a relu after it is its own kernel, not a reason to
    // seed the (slower) WMMA kernel, which absorbs it in the WMMA seed variant
    const Problem p = sdpa("bf16", "bf16", 64, 64, false, "relu");
    const std::string t = seed_checked(p);
    EXPECT_TRUE(has(t, "impl cutlass_fmha")) << t;
    EXPECT_EQ(seedtest::kernels(t), 2u) << t;
    planner::SeedOptions wmma;
    wmma.attention_wmma = true;
    const std::string w = seed_checked(p, wmma);
    EXPECT_EQ(seedtest::kernels(w), 1u) << w;
    EXPECT_TRUE(has(w, "relu")) << w;
}

TEST(AttentionFmhaPlan, WmmaStaysASeedVariant) {
    const Problem p = sdpa("bf16", "bf16", 64, 64);
    const std::vector<dsl::Program> v = planner::seed_variants(p, h200());
    ASSERT_FALSE(v.empty());
    EXPECT_TRUE(has(dsl::print_canonical(v.front()), "impl cutlass_fmha"));
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](const dsl::Program& prog) {
        const std::string t = dsl::print_canonical(prog);
        return has(t, "attention(") && has(t, "tile 64x64") && !has(t, "cutlass_fmha");
    }));
    planner::SeedOptions wmma;
    wmma.attention_wmma = true;
    EXPECT_FALSE(has(seed_checked(p, wmma), "cutlass_fmha"));
}

TEST(AttentionFmhaPlan, LoweredSourceInstantiatesCutlassFmha) {
    const Problem p = sdpa("bf16", "bf16", 64, 64);
    auto low = lowered(p, seed_checked(p));
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const std::string& src = low->cuda_source;
    EXPECT_TRUE(low->uses_cutlass);
    EXPECT_TRUE(low->has_host_code);
    for (const char* want :
         {"#include \"88_hopper_fmha/kernel/fmha_kernel_builder.hpp\"",
          "using Element = cutlass::bfloat16_t;", "using TileShape = Shape<_128, _64, _64>;",
          "cutlass::fmha::collective::ResidualFusion, "
          "cutlass::gemm::KernelTmaWarpSpecializedCooperative>::Kernel;",
          "kforge_k0(CUTLASS_GRID_CONSTANT typename kforge_fmha_k0::Kernel::Params const params)",
          "extern \"C\" int kforge_build_k0(const KforgeBuildArgs* in, KforgeBuiltLaunch* out)",
          // dims sorted B, E, F, H, L, S: B, H, S, L and the head dim E read at run time
          "    B *= in->dims[0];\n    H *= in->dims[3];\n    S *= in->dims[5];\n"
          "    L *= in->dims[4];\n    D *= in->dims[1];\n",
          "params.mainloop.scale_softmax = 0.125f;",
          "params.mainloop.scale_softmax_log2 = 0.125f * 1.4426950408889634f;"})
        EXPECT_TRUE(has(src, want)) << want << "\n" << src;
    EXPECT_FALSE(has(src, "2 * 3 * 128")) << "no shape literal in the source";
    ASSERT_EQ(low->plan.kernels.size(), 1u);
    const codegen::KernelLaunch& k = low->plan.kernels[0];
    EXPECT_EQ(k.param_builder, "kforge_build_k0");
    EXPECT_EQ(k.builder_tensors, (std::vector<std::string>{"q", "k", "v", "o", "k0_lse"}));
    const auto lse = std::find_if(low->plan.buffers.begin(), low->plan.buffers.end(),
                                  [](const codegen::BufferDecl& b) { return b.name == "k0_lse"; });
    ASSERT_NE(lse, low->plan.buffers.end());
    EXPECT_EQ(lse->shape, (std::vector<int64_t>{2 * 3 * 128}));  // a log-sum-exp per query row
    EXPECT_TRUE(lse->workspace);
    // pingpong and the plain TMA schedule name their kernel types
    std::string t = seed_checked(p);
    t.replace(t.find("fmha_schedule cooperative"), 25, "fmha_schedule pingpong");
    auto ping = lowered(p, t);
    ASSERT_TRUE(ping.ok()) << ping.error().to_string();
    EXPECT_TRUE(has(ping->cuda_source, "cutlass::gemm::KernelTmaWarpSpecializedPingpong>"));
}

TEST(AttentionFmhaPlan, LoweringRefusesAnotherArch) {
    const Problem p = sdpa("bf16", "bf16", 64, 64);
    auto low = lowered(p, seed_checked(p), "sm_80");
    ASSERT_FALSE(low.ok());
    EXPECT_TRUE(has(low.error().to_string(), "needs an sm_90a target")) << low.error().to_string();
}

TEST(AttentionFmhaPlan, SuiteStartCountsItAnNvccCompile) {
    // the suite's start phase plans compiles by class: CUTLASS's FMHA is nvcc, WMMA NVRTC
    const Problem p = sdpa("bf16", "bf16", 64, 64);
    auto fmha = dsl::parse_program(seed_checked(p), "seed.kf");
    ASSERT_TRUE(fmha.ok());
    const search::CompileClass c = search::compile_class(*fmha);
    EXPECT_EQ(c.kind, "attention_fmha");
    EXPECT_EQ(c.config, "128x64x64 cooperative");
    EXPECT_TRUE(c.needs_nvcc);
    planner::SeedOptions wmma;
    wmma.attention_wmma = true;
    auto w = dsl::parse_program(seed_checked(p, wmma), "seed.kf");
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE(search::compile_class(*w).needs_nvcc);
}

TEST(AttentionFmhaPlan, SeedPassesTheSimulatedPipeline) {
    // every gate's shape (the reduced correctness shapes too) checks and lowers; the simulated
    // device (a labelled test double: fp64 interpreter and time model) compiles nothing
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    const Problem p = sdpa("bf16", "bf16", 128, 128);
    eval::EvalRequest req;
    req.problem = p;
    req.program_text = seed_checked(p);
    ASSERT_TRUE(has(req.program_text, "impl cutlass_fmha")) << req.program_text;
    eval::EvalReport r = eval::evaluate(evaluator, req);
    EXPECT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_TRUE(r.simulated);
}

}  // namespace
}  // namespace kforge
