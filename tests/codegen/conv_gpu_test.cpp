// conv2d end to end on a GPU (skipped without one): a conv2d program is checked, lowered to its
// four launches (codegen/lower_conv.cpp), compiled, run by the harness and compared with the
// fp64 reference through every gate of the evaluator. Covers C = 3 (padded channels), K not a
// multiple of 4 (padded filters), stride 2 with padding, dilation, the bias and activation of
// the chain, and the f32 (3xTF32, TF32) and f16 math modes; and the other forms (issue 24):
// grouped, depthwise (CUTLASS's direct convolution) and transposed (its dgrad) convolutions at
// several strides, paddings, dilations and output_paddings, each the planner's seed (and knob
// variants), one test per case so that shards can run them in parallel (each is an nvcc compile).
#include <gtest/gtest.h>

#include "device/device.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/codegen/conv_fixtures.h"
#include "tests/codegen/conv_forms_fixtures.h"

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

// One grouped / depthwise / transposed case on the GPU: the seed of the case's problem (batch 4,
// x's spatial sizes doubled) with `edit` applied to its program text ("" none; "a=>b" replaces
// a by b), through every gate (full tier: the GPU fp64 reference at the real shape).
struct GpuForm {
    std::string name, dtype = "f32", policy = "fp32_strict", edit;
};

void PrintTo(const GpuForm& g, std::ostream* os) { *os << g.name << " " << g.dtype << " " << g.edit; }

std::string label(const testing::TestParamInfo<GpuForm>& info) {
    std::string s = info.param.name + "_" + info.param.dtype;
    if (!info.param.edit.empty()) s += "_edit" + std::to_string(info.index);
    return s;
}

class ConvFormsGpu : public testing::TestWithParam<GpuForm> {};

TEST_P(ConvFormsGpu, SeedPassesEveryGate) {
    SKIP_WITHOUT_GPU();
    const GpuForm& g = GetParam();
    const conv_forms::FormCase* f = nullptr;
    const auto all = conv_forms::cases();
    for (const auto& c : all)
        if (c.name == g.name) f = &c;
    ASSERT_NE(f, nullptr);
    auto problem = parse_problem(conv_forms::form_json(*f, 4, 2, g.dtype, g.policy), "<test>");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto seed = planner::seed_program(*problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    std::string text = dsl::print_canonical(*seed);
    if (!g.edit.empty()) {
        const size_t arrow = g.edit.find("=>");
        const std::string from = g.edit.substr(0, arrow), to = g.edit.substr(arrow + 2);
        ASSERT_NE(text.find(from), std::string::npos) << text;
        text.replace(text.find(from), from.size(), to);
    }
    eval::EvalRequest r;
    r.problem = *problem;
    r.program_text = text;
    r.program_file = g.name + ".kf";
    r.tier = EvalTier::kFull;
    auto device = gpu_or_skip();
    eval::EvalReport rep = eval::evaluate(*device, r);
    EXPECT_FALSE(rep.simulated);
    EXPECT_EQ(rep.status, EvalStatus::kPassed) << text << "\n" << eval::to_json(rep).dump(2);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, ConvFormsGpu,
    testing::Values(GpuForm{"depthwise2d"}, GpuForm{"depthwise2d_strided"},
                    GpuForm{"depthwise2d_padded"}, GpuForm{"depthwise1d"},
                    GpuForm{"grouped2d_multiple"},
                    GpuForm{"grouped2d_single"}, GpuForm{"transpose2d_strided"},
                    GpuForm{"transpose2d_dilated"}, GpuForm{"transpose1d"},
                    GpuForm{"transpose2d_strided_dilated"},
                    GpuForm{"transpose1d_strided_dilated"},
                    GpuForm{"transpose2d_grouped"}, GpuForm{"transpose3d_grouped"},
                    GpuForm{"transpose3d_strided"}, GpuForm{"transpose3d_dilated"},
                    // knob variants: run-time stride/dilation on the direct convolution, the
                    // depthwise problem on the tensor-op group fprop, f16 grouped and transposed
                    GpuForm{"depthwise2d_strided", "f32", "fp32_strict",
                            "swizzle 1=>swizzle 1 iterator optimized"},
                    GpuForm{"depthwise2d", "f32", "fp32_strict",
                            "tile 64x32x16 stages 3 schedule multistage math f32_simt=>"
                            "tile 128x64x16 stages 3 schedule multistage math tf32x3"},
                    GpuForm{"depthwise1d", "f32", "fp32_strict",
                            "tile 64x16x16=>tile 128x16x16"},  // 1 x 128: 512 threads
                    GpuForm{"grouped2d_single", "f16", "fp16"},
                    GpuForm{"transpose2d_strided", "f16", "fp16"}),
    label);

}  // namespace
}  // namespace kforge::codegen
