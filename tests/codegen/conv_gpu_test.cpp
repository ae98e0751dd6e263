// conv2d end to end on a GPU (skipped without one): a conv2d program is checked, lowered to its
// four launches (codegen/lower_conv.cpp), compiled, run by the harness and compared with the
// fp64 reference through every gate of the evaluator. Covers C = 3 (padded channels), K not a
// multiple of 4 (padded filters), stride 2 with padding, dilation, the bias and activation of
// the chain, and the f32 (3xTF32, TF32) and f16 math modes.
#include <gtest/gtest.h>

#include "device/device.h"
#include "eval/evaluate.h"
#include "tests/codegen/conv_fixtures.h"

namespace kforge::codegen {
namespace {

std::unique_ptr<eval::Device> gpu_or_skip() {
    auto d = eval::make_cuda_device(0);
    if (!d) return nullptr;
    return std::move(*d);
}

// y = relu(conv2d(x, w, b)) with x [N,3,H,W], w [10,3,3,3], stride 2, padding 1.
eval::EvalReport run(const std::string& dtype, const std::string& policy,
                     const std::string& knobs, EvalTier tier, const std::string& cast = "") {
    eval::EvalRequest r;
    auto problem =
        parse_problem(conv_testing::conv_problem_json(dtype, policy, 8, 64, 60), "<test>");
    EXPECT_TRUE(problem.ok()) << (problem.ok() ? "" : problem.error().to_string());
    if (problem.ok()) r.problem = *problem;
    r.program_text = conv_testing::conv_program_text(knobs, cast);
    r.program_file = "conv.kf";
    r.tier = tier;
    auto device = gpu_or_skip();
    return eval::evaluate(*device, r);
}

#define SKIP_WITHOUT_GPU()                                                                   \
    if (!gpu_or_skip())                                                                      \
    GTEST_SKIP() << "SKIP: no usable GPU (" << eval::make_cuda_device(0).error().message << ")"

TEST(ConvGpu, F32Tf32x3PassesEveryGate) {
    SKIP_WITHOUT_GPU();
    eval::EvalReport r = run("f32", "fp32_strict", "tile 128x64x32 stages 3 math tf32x3",
                             EvalTier::kFull);
    EXPECT_FALSE(r.simulated);
    EXPECT_EQ(r.status, EvalStatus::kPassed) << eval::to_json(r).dump(2);
    EXPECT_GT(r.stats.median_ns, 0);
}

TEST(ConvGpu, F32Tf32Passes) {
    SKIP_WITHOUT_GPU();
    eval::EvalReport r =
        run("f32", "tf32", "tile 64x64x32 stages 4 math tf32", EvalTier::kQuick);
    EXPECT_EQ(r.status, EvalStatus::kPassed) << eval::to_json(r).dump(2);
}

TEST(ConvGpu, F16Passes) {
    SKIP_WITHOUT_GPU();
    eval::EvalReport r =
        run("f16", "fp16", "tile 128x64x32 stages 3 math f16", EvalTier::kQuick, "cast f16; ");
    EXPECT_EQ(r.status, EvalStatus::kPassed) << eval::to_json(r).dump(2);
}

}  // namespace
}  // namespace kforge::codegen
