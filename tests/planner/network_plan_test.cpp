// Constructs of whole networks (KernelBench Level 3, issue 26) through the planner, the checker
// and the lowering: a reduction over an axis of extent 1 (a batch-statistics norm after a global
// pool, whose [N, C, 1, 1] value repeats the dim 1) is its input's value, planned as a view.
// Each plan passes the gated pipeline on the simulated device (a labelled test double: the fp64
// interpreter plus the time model). A binary op whose output spans dims neither operand has
// (NetVLAD's [B,1,K] cluster mass times [1,F,K] centroids) is one copy kernel that expands one
// operand by dim names, the op in its chain; a reduction over a dim written as its extent
// (`over 30`) parses, checks and lowers. A grouped 1x1 conv of 3 groups of 40 filters (a
// ShuffleNet unit's), which CUTLASS's group fprop cannot tile on tile N 64, is one dense conv2d
// kernel on a block-diagonal filter (codegen/lower_conv.h group_fprop_tiles).
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "codegen/lower_conv.h"
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
using seedtest::problem_of;
using seedtest::seed_checked;

// The mean over H and W of x[B, C, 1, 1] (two reductions of one element each), then over the
// batch; x minus it, a max over the last axis (dropped) and a sum over H (dropped) as outputs.
Problem unit_reductions() {
    return problem_of(R"({"name": "unitred", "dims": {"B": 4, "C": 24},
        "inputs": {"x": {"shape": ["B", "C", 1, 1], "dtype": "f32"}},
        "graph": [{"op": "mean", "inputs": ["x"], "output": "m3", "axis": 3, "keepdim": true},
                  {"op": "mean", "inputs": ["m3"], "output": "m2", "axis": 2, "keepdim": true},
                  {"op": "mean", "inputs": ["m2"], "output": "m0", "axis": 0, "keepdim": true},
                  {"op": "sub", "inputs": ["x", "m0"], "output": "d"},
                  {"op": "max", "inputs": ["d"], "output": "s", "axis": -1, "keepdim": false},
                  {"op": "relu", "inputs": ["s"], "output": "y"},
                  {"op": "sum", "inputs": ["d"], "output": "z", "axis": 2, "keepdim": false}],
        "outputs": ["y", "z"], "precision": {"policy": "fp32_strict"}})");
}

TEST(NetworkPlan, AReductionOverAnAxisOfExtentOneIsAView) {
    const Problem p = unit_reductions();
    const std::string text = seed_checked(p);
    // the batch mean reads x itself; the relu reads d through the dropped axis; the sum that is
    // an output is a copy (map) kernel
    EXPECT_EQ(kernels(text), 4u) << text;
    EXPECT_TRUE(has(text, "rowwise mean(x[B,C,1,1]) over B")) << text;
    EXPECT_FALSE(has(text, "m3[")) << text;
    EXPECT_FALSE(has(text, "m2[")) << text;
    EXPECT_FALSE(has(text, "store s[")) << text;
}

TEST(NetworkPlan, TheCheckerReadsAUnitReductionAsItsInput) {
    const Problem p = unit_reductions();
    // the max and the sum over one element read d itself: accepted; one more add: refused
    const std::string right = R"(program ok for "unitred"
kernel k0 = rowwise mean(x[B,C,1,1]) over B { store m0[1,C,1,1] }
kernel k1 = map(x[B,C,1,1]) { sub m0[1,C,1,1]; store d[B,C,1,1] }
kernel k2 = map(d[B,C,1,1]) { relu; store y[B,C,1] }
kernel k3 = map(d[B,C,1,1]) { store z[B,C,1] }
)";
    auto ok = dsl::parse_program(right, "ok.kf");
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    auto res = dsl::check_program(*ok, p, h200(), {"ok.kf", right});
    EXPECT_TRUE(res.ok()) << (res.ok() ? "" : res.errors.front().to_string());
    std::string wrong = right;
    wrong.replace(wrong.find("relu;"), 5, "relu; add 1;");
    auto parsed = dsl::parse_program(wrong, "bad.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", wrong}).ok());
}

// s = sum over an axis written as its extent 30 (kept), m = s[B,1,K] * c[1,F,K], y = t - m.
Problem mutual_broadcast() {
    return problem_of(R"({"name": "bcast", "dims": {"B": 6, "F": 40, "K": 16},
        "inputs": {"x": {"shape": ["B", 30, "K"], "dtype": "f32"},
                   "c": {"shape": [1, "F", "K"], "dtype": "f32", "param": true},
                   "t": {"shape": ["B", "F", "K"], "dtype": "f32"}},
        "graph": [{"op": "sum", "inputs": ["x"], "output": "s", "axis": 1, "keepdim": true},
                  {"op": "mul", "inputs": ["s", "c"], "output": "m"},
                  {"op": "sub", "inputs": ["t", "m"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(NetworkPlan, AMutualBroadcastIsACopyKernelExpandingOneOperand) {
    const Problem p = mutual_broadcast();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 2u) << text;
    EXPECT_TRUE(has(text, "rowwise sum(x[B,30,K]) over 30")) << text;
    EXPECT_TRUE(has(text, "copy expand(s[B,1,K])")) << text;
    EXPECT_TRUE(has(text, "{ mul c[1,F,K]; neg; add t[B,F,K]; store y[B,F,K] }")) << text;
    EXPECT_TRUE(has(text, "store y[B,F,K]")) << text;
    EXPECT_FALSE(has(text, "store m[")) << text;  // m is never stored
}

TEST(NetworkPlan, AnExpandOfTheProgramsOwnMustKeepItsInputsDims) {
    const Problem p = mutual_broadcast();
    const auto check = [&](const std::string& expand) {
        const std::string text = "program e for \"bcast\"\n"
                                 "kernel k0 = rowwise sum(x[B,30,K]) over 30 vec 2 { store s[B,1,K] }\n"
                                 "kernel k1 = copy expand(s[B,1,K]) { " + expand + " }\n";
        auto parsed = dsl::parse_program(text, "e.kf");
        EXPECT_TRUE(parsed.ok()) << parsed.error().to_string();
        return parsed.ok() && dsl::check_program(*parsed, p, h200(), {"e.kf", text}).ok();
    };
    EXPECT_TRUE(check("mul c[1,F,K]; neg; add t[B,F,K]; store y[B,F,K]"));
    EXPECT_FALSE(check("mul c[1,F,K]; add t[B,F,K]; store y[B,F,K]"));   // t + m, not t - m
    EXPECT_FALSE(check("mul c[1,F,K]; neg; add t[B,F,K]; store y[F,K]"));  // drops B
}

// x [B, 24, H, W] -> a 1x1 conv of 3 groups (8 channels, 40 filters each) -> relu.
Problem grouped_forty() {
    return problem_of(R"({"name": "g40", "dims": {"B": 2, "C": 24, "K": 120, "H": 6, "W": 5},
        "inputs": {"x": {"shape": ["B", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", 8, 1, 1], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "c", "stride": [1, 1],
                   "padding": [0, 0], "dilation": [1, 1], "groups": 3},
                  {"op": "relu", "inputs": ["c"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(NetworkPlan, GroupsCutlassCannotTileRunDenseOnABlockDiagonalFilter) {
    const Problem p = grouped_forty();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "conv2d(x[B,C,H,W], w[K,8,1,1])")) << text;
    // the seed: the direct convolution, a block's 8 filters in one group of 40 (f32, 8 products
    // an output), one launch
    EXPECT_TRUE(has(text, "tile 256x8x16 stages 1 schedule direct math f32_simt")) << text;
    auto direct = codegen::lower_program(*planner::seed_program(p, h200()), p,
                                         codegen::LowerOptions{});
    ASSERT_TRUE(direct.ok()) << direct.error().to_string();
    EXPECT_EQ(direct->plan.kernels.size(), 1u);
    EXPECT_NE(direct->cuda_source.find("kGroups = 3;"), std::string::npos);
    // CUTLASS's forms (the seed variant without the direct convolution)
    planner::SeedOptions cutlass;
    cutlass.conv_direct = false;
    auto prog = planner::seed_program(p, h200(), cutlass);
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    // the seed's tile N tiles 40 filters neither way: the lowering stages a block-diagonal filter
    EXPECT_FALSE(codegen::group_fprop_tiles(40, prog->kernels[0].gemm.tile_n)) << text;
    auto low = codegen::lower_program(*prog, p, codegen::LowerOptions{});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    EXPECT_NE(low->cuda_source.find("conv_channels_last_block_diagonal"), std::string::npos);
    EXPECT_NE(low->cuda_source.find("DefaultConv2dFprop<"), std::string::npos);
}

TEST(NetworkPlan, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {unit_reductions(), mutual_broadcast(), grouped_forty()}) {
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
