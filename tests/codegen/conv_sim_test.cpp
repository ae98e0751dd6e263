// conv2d programs through the evaluator on the simulated H200 (no GPU): the checker accepts them
// (static gate), the lowering runs inside the evaluator (compile gate: four launches) and the
// analytic time model times the plan. The simulated device computes outputs with the fp64
// interpreter, so this checks the pipeline, not the kernels (conv_gpu_test.cpp does).
#include <gtest/gtest.h>

#include "device/device.h"
#include "eval/evaluate.h"
#include "tests/codegen/conv_fixtures.h"

namespace kforge::codegen {
namespace {

TEST(ConvSim, PassesEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    for (const char* knobs : {"tile 128x64x32 stages 3 math tf32x3", "tile 64x64x16 math f32_simt"}) {
        SCOPED_TRACE(knobs);
        eval::EvalRequest r;
        auto problem = parse_problem(conv_testing::conv_problem_json("f32", "fp32_strict", 8, 64, 60),
                                     "<test>");
        ASSERT_TRUE(problem.ok()) << problem.error().to_string();
        r.problem = *problem;
        r.program_text = conv_testing::conv_program_text(knobs);
        r.tier = EvalTier::kFull;
        eval::EvalReport rep = eval::evaluate(**device, r);
        EXPECT_EQ(rep.status, EvalStatus::kPassed) << eval::to_json(rep).dump(2);
        // lowered (the plan's four launches) and timed by the analytic model
        const eval::GateOutcome* compile = nullptr;
        for (const eval::GateOutcome& g : rep.gates)
            if (g.gate == "compile") compile = &g;
        ASSERT_NE(compile, nullptr);
        EXPECT_EQ(compile->evidence.value("kernels", 0), 4);
        EXPECT_GT(rep.stats.median_ns, 0);
    }
}

}  // namespace
}  // namespace kforge::codegen
