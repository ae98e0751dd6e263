// The grouped, depthwise and transposed convolutions (issue 24; codegen/lower_conv_forms.cpp):
// the planner's seed for each form checks and lowers to the CUTLASS kernel of its form (the
// emitted source's kernel type, problem size and staging, golden-ish), the forms pass every gate
// on the simulated device, and what CUTLASS cannot run is refused by name with its constraint.
// Text and plan only: nothing here compiles CUDA (tests/codegen/conv_gpu_test.cpp runs them).
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "device/device.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "sol/device.h"
#include "tests/codegen/conv_fixtures.h"
#include "tests/codegen/conv_forms_fixtures.h"

namespace kforge::codegen {
namespace {

using conv_testing::expect_has;
using conv_testing::h200;
using conv_testing::parsed;

using conv_forms::form_json;
using conv_forms::FormCase;

const BufferDecl* buffer(const Lowered& out, const std::string& name) {
    for (const BufferDecl& b : out.plan.buffers)
        if (b.name == name) return &b;
    return nullptr;
}

// The seed of `json`, checked and lowered.
struct Seeded {
    dsl::Program program;
    Lowered lowered;
};

// The CUTLASS form of each case (SeedOptions::conv_direct off: the dense f32 forms of few
// channels otherwise start on the direct convolution, conv_direct_host_run_test.cpp).
planner::SeedOptions cutlass_forms() {
    planner::SeedOptions o;
    o.conv_direct = false;
    return o;
}

Seeded seed_and_lower(const std::string& json) {
    const Problem p = parsed(json);
    auto seed = planner::seed_program(p, h200(), cutlass_forms());
    EXPECT_TRUE(seed.ok()) << (seed.ok() ? "" : seed.error().to_string());
    if (!seed.ok()) return {};
    auto checked = dsl::check_program(*seed, p, h200());
    EXPECT_TRUE(checked.ok()) << (checked.ok() ? "" : checked.errors[0].to_string());
    auto out = lower_program(*seed, p, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    Seeded s;
    s.program = *seed;
    if (out.ok()) s.lowered = *out;
    return s;
}

// What each case's seed lowers to: CUTLASS's kernel for its form, its staging and sizes.
struct Expect {
    std::string name;
    std::vector<std::string> source;                // substrings of the lowered source
    std::vector<int64_t> x_staged, w_staged, y_staged;  // the workspace buffers' shapes
};

std::vector<Expect> expectations() {
    return {
        {"depthwise2d",
         {"DefaultDepthwiseDirect2dConvFprop<", "IteratorAlgorithm::kFixedStrideDilation",
          "using OutputTile = cutlass::conv::TensorNHWCShape<1, 8, 8, 32>;",
          "using DirectThreadblockShape = cutlass::gemm::GemmShape<64, 32, 9>;",
          "using DirectWarpShape = cutlass::gemm::GemmShape<16, 32, 9>;",
          "constexpr int kGroups = 32;", "if (C != K || R != kFilterR || S != kFilterS)",
          "/*ref_reordered_B=*/ref_w);", "DirectConvolution<ConvKernel>::can_implement(args)",
          "out->smem_bytes = unsigned(params.get_smem_size());"},
         {2, 20, 18, 32}, {1, 3, 3, 32}, {2, 20, 18, 32}},
        {"depthwise2d_strided",
         {"DefaultDepthwiseDirect2dConvFprop<", "constexpr int kStrideH = 2, kStrideW = 2;",
          "constexpr int kDilationH = 1, kDilationW = 2;",
          "cutlass::MatrixShape<kStrideH, kStrideW>, cutlass::MatrixShape<kDilationH, kDilationW>",
          "using FilterShape = cutlass::MatrixShape<kFilterR, kFilterS>;",
          "constexpr int kFilterR = 5, kFilterS = 3;"},
         {2, 21, 19, 16}, {1, 5, 3, 16}, {2, 11, 9, 16}},
        {"depthwise1d",
         {"using OutputTile = cutlass::conv::TensorNHWCShape<1, 1, 64, 16>;",
          // one row: warp M 8 (1 x 2 positions a thread), not 16 (2 x 2: half the tile unwritten)
          "using DirectWarpShape = cutlass::gemm::GemmShape<8, 16, 5>;",
          "constexpr int kStrideH = 1, kStrideW = 2;", ", H = 1, W = 45;"},
         {2, 1, 45, 16}, {1, 1, 5, 16}, {2, 1, 23, 16}},
        // 8 channels padded with zeros to a CTA's 16
        {"depthwise2d_padded",
         {"DefaultDepthwiseDirect2dConvFprop<", "OutputTile::kC - 1) / OutputTile::kC * OutputTile::kC"},
         {2, 24, 20, 16}, {1, 3, 1, 16}, {2, 22, 20, 16}},
        {"grouped2d_multiple",
         {"DefaultConv2dGroupFprop<",
          "GroupMode::kMultipleGroup, cutlass::conv::IteratorAlgorithm::kAnalytic",
          "constexpr int kGroups = 4;", "constexpr int kAlignment = 2;",
          "constexpr int kAlignmentB = 2;", "int(P), int(Q), kPadH, kPadW",
          "const int64_t Cx = C, Kx = K, Gx = kGroups;",
          "Layout::packed({int(Kx), int(R), int(S), int(Cx / Gx)})"},
         {2, 13, 11, 8}, {16, 3, 3, 2}, {2, 13, 11, 16}},
        {"grouped2d_single",
         {"GroupMode::kSingleGroup, cutlass::conv::IteratorAlgorithm::kOptimized",
          "constexpr int kGroups = 2;", "constexpr int kAlignment = 4;"},
         {2, 9, 10, 64}, {128, 3, 3, 32}, {2, 4, 4, 128}},
        // (9 - 1) * 2 - 2 + 2 + 1 + 1 = 18 rows, (7 - 1) * 2 - 2 + 2 + 1 + 1 = 14 columns;
        // C = 6 and K = 5 padded to 8
        {"transpose2d_strided",
         {"DefaultConv2dDgrad<", "StridedDgradIdentityThreadblockSwizzle<1>",
          "IteratorAlgorithm::kOptimized,\n    cutlass::conv::StrideSupport::kStrided",
          "constexpr int kOutPadH = 1, kOutPadW = 1, kOutPadD = 0;",
          "const int64_t P = (Hs - 1) * kStrideH - 2 * kPadH + kDilationH * (R - 1) + kOutPadH + 1;",
          "problem(int(N), int(P), int(Q), int(Kp), int(Cp),\n        int(R), int(S), int(Hs), int(Ws)",
          "const int64_t Kp = (K + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;"},
         {2, 9, 7, 8}, {8, 3, 3, 8}, {2, 18, 14, 8}},
        {"transpose2d_dilated",
         {"DefaultConv2dDgrad<", "GemmIdentityThreadblockSwizzle<1>",
          "cutlass::conv::StrideSupport::kUnity, kAlignment, kAlignmentB>::Kernel;",
          "constexpr int kDilationH = 2, kDilationW = 1;"},
         {2, 8, 9, 8}, {8, 3, 5, 8}, {2, 10, 9, 8}},
        {"transpose1d",
         {"DefaultConv2dDgrad<", "constexpr int kStrideH = 1, kStrideW = 3;",
          "constexpr int kOutPadH = 0, kOutPadW = 2, kOutPadD = 0;", "StrideSupport::kStrided"},
         {2, 1, 33, 4}, {4, 1, 3, 8}, {2, 1, 99, 8}},
        // (7 - 1) * 2 + 1 = 13 and (6 - 1) * 3 + 1 = 16 staged positions; y: (13 - 1) - 2 + 4
        // + 1 + 1 = 16 rows, (16 - 1) - 2 + 4 + 1 + 1 = 19 columns
        {"transpose2d_strided_dilated",
         {"DefaultConv2dDgrad<", "StrideSupport::kUnity", "constexpr int kStrideH = 1, kStrideW = 1;",
          "constexpr int kUpStrideD = 1, kUpStrideH = 2, kUpStrideW = 3;",
          "kforge::conv_channels_last_upsampled(t_x, w_k0_conv_x, channels,",
          "const int64_t Ds = (D - 1) * kUpStrideD + 1, Hs = (H - 1) * kUpStrideH + 1,",
          "int(R), int(S), int(Hs), int(Ws), kPadH, kPadW"},
         {2, 13, 16, 4}, {4, 3, 3, 8}, {2, 16, 19, 8}},
        // (50 - 1) * 2 + 1 = 99 staged positions; y: 98 - 2 + 4 + 1 = 101
        {"transpose1d_strided_dilated",
         {"constexpr int kUpStrideD = 1, kUpStrideH = 1, kUpStrideW = 2;",
          "ConvUpsample{in_d, in_h, in_w, up_d, up_h, up_w}"},
         {2, 1, 99, 8}, {8, 1, 3, 4}, {2, 1, 101, 4}},
        // the weight [8, 3, 3, 3] staged as the dense [Cp 8, 3, 3, Kp 12] filter, zero between
        // groups; y: (6 - 1) * 2 - 2 + 2 + 1 + 1 = 12 rows, (7 - 1) * 2 - 2 + 2 + 1 + 1 = 14
        {"transpose2d_grouped",
         {"DefaultConv2dDgrad<", "StridedDgradIdentityThreadblockSwizzle<1>",
          "kforge::conv_channels_last_block_diagonal(t_w, w_k0_conv_w, group_filters,",
          "const int64_t K = 3 * 4,", "/*groups=*/1);"},
         {2, 6, 7, 8}, {8, 3, 3, 12}, {2, 12, 14, 12}},
        {"transpose3d_grouped",
         {"DefaultConv3dDgrad<", "kforge::conv_channels_last_block_diagonal("},
         {2, 3, 4, 5, 8}, {8, 3, 3, 3, 8}, {2, 6, 7, 10, 8}},
        {"transpose3d_strided",
         {"DefaultConv3dDgrad<", "IteratorAlgorithm::kAnalytic",
          "cutlass::conv::StrideSupport::kStrided>::Kernel;",
          "constexpr int kOutPadH = 0, kOutPadW = 1, kOutPadD = 1;",
          "Conv3dProblemSize problem(int(N), int(Z), int(P), int(Q), int(Kp)"},
         {2, 5, 6, 7, 4}, {4, 3, 3, 3, 8}, {2, 10, 11, 14, 8}},
        {"transpose3d_dilated",
         {"DefaultConv3dDgrad<", "IteratorAlgorithm::kOptimized",
          "cutlass::conv::StrideSupport::kUnity>::Kernel;"},
         {2, 4, 5, 6, 4}, {4, 3, 2, 3, 8}, {2, 6, 5, 8, 8}},
    };
}

TEST(ConvForms, SeedsLowerToTheCutlassKernelOfTheirForm) {
    const auto all = conv_forms::cases();
    for (const Expect& e : expectations()) {
        SCOPED_TRACE(e.name);
        const FormCase* f = nullptr;
        for (const FormCase& c : all)
            if (c.name == e.name) f = &c;
        ASSERT_NE(f, nullptr);
        Seeded s = seed_and_lower(form_json(*f));
        ASSERT_EQ(s.lowered.plan.kernels.size(), 4u);  // staging x, w; CUTLASS; the output
        for (const std::string& text : e.source) expect_has(s.lowered.cuda_source, text);
        const BufferDecl* x = buffer(s.lowered, "k0_conv_x");
        const BufferDecl* w = buffer(s.lowered, "k0_conv_w");
        const BufferDecl* y = buffer(s.lowered, "k0_conv_y");
        ASSERT_TRUE(x && w && y);
        EXPECT_EQ(x->shape, e.x_staged);
        EXPECT_EQ(w->shape, e.w_staged);
        EXPECT_EQ(y->shape, e.y_staged);
    }
}

// The seeds through every gate of the evaluator on the simulated H200 (the checker's proof at
// each shape, the lowering inside the pipeline, the fp64 interpreter's outputs).
TEST(ConvForms, SeedsPassEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    for (const FormCase& f : conv_forms::cases()) {
        SCOPED_TRACE(f.name);
        const Problem p = parsed(form_json(f, 3));
        auto seed = planner::seed_program(p, h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        eval::EvalRequest r;
        r.problem = p;
        r.program_text = dsl::print_canonical(*seed);
        r.tier = EvalTier::kFull;
        eval::EvalReport rep = eval::evaluate(**device, r);
        EXPECT_EQ(rep.status, EvalStatus::kPassed) << eval::to_json(rep).dump(2);
    }
}

// The search's knob moves reach every form: some moves of each seed check and lower.
TEST(ConvForms, KnobMovesOnEachFormCheckAndLower) {
    for (const FormCase& f : conv_forms::cases()) {
        SCOPED_TRACE(f.name);
        const Problem p = parsed(form_json(f));
        auto seed = planner::seed_program(p, h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        int lowered = 0;
        for (const auto& m : search::knob_neighbours(*seed)) {
            if (!dsl::check_program(m.program, p, h200()).ok()) continue;
            if (!lower_program(m.program, p, LowerOptions{}).ok()) continue;
            ++lowered;
        }
        EXPECT_GE(lowered, 1);
    }
}

// What CUTLASS's kernels cannot run, the planner refuses by name with the constraint.
TEST(ConvForms, PlannerRefusesWhatCutlassCannotRunByName) {
    struct Refused {
        FormCase form;
        std::string dtype, words;
    };
    const Refused refused[] = {
        {{"g3d", "conv3d", 4, 4, {4, 4, 4}, {3, 3, 3}, "", 2}, "f32", "no 3-D group fprop"},
        {{"dw_f16", "conv2d", 16, 16, {8, 8}, {3, 3}, "", 16}, "f16",
         "1 channel(s) per group"},
    };
    for (const Refused& r : refused) {
        SCOPED_TRACE(r.form.name);
        const Problem p = parsed(form_json(r.form, 2, 1, r.dtype, r.dtype == "f16" ? "fp16"
                                                                                 : "fp32_strict"));
        auto s = planner::seed_program(p, h200());
        ASSERT_FALSE(s.ok());
        EXPECT_NE(s.error().message.find("not supported"), std::string::npos) << s.error().message;
        EXPECT_NE(s.error().message.find(r.words), std::string::npos) << s.error().message;
    }
}

// A conv1d's direct depthwise tile is one row, which CUTLASS's threads cover on tile N 16 only:
// the planner gives a 64-channel conv1d tile N 16 (a 2-D one keeps 64), and it lowers.
TEST(ConvForms, DepthwiseConv1dSeedTakesTileN16) {
    for (const FormCase& f : {FormCase{"dw1d_64", "conv1d", 64, 64, {45}, {5}, "", 64},
                              FormCase{"dw2d_64", "conv2d", 64, 64, {9, 9}, {3, 3}, "", 64}}) {
        SCOPED_TRACE(f.name);
        const Problem p = parsed(form_json(f));
        auto seed = planner::seed_program(p, h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        const std::string text = dsl::print_canonical(*seed);
        EXPECT_NE(text.find(f.op == "conv1d" ? "tile 64x16x16" : "tile 64x64x16"), std::string::npos) << text;
        auto out = lower_program(*seed, p, LowerOptions{});
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        EXPECT_NE(out->cuda_source.find(f.op == "conv1d" ? "GemmShape<8, 16, 5>" : "GemmShape<16, 64, 9>"),
                  std::string::npos);
    }
}

// Knobs a form's CUTLASS kernel cannot take: user errors from the lowering, naming the knob.
TEST(ConvForms, LoweringRefusesKnobsTheFormCannotTake) {
    struct Edit {
        std::string form, from, to, words;
    };
    const Edit edits[] = {
        {"depthwise2d", "tile 64x32x16", "tile 64x16x16", ""},  // 32 channels over two CTAs
        // 24 channel lanes: CUTLASS's thread groups would not tile the output
        {"depthwise2d", "tile 64x32x16", "tile 64x48x16", "threads would not cover"},
        {"depthwise1d", "tile 64x16x16", "tile 128x16x16", ""},
        {"depthwise1d", "tile 64x16x16", "tile 64x32x16", "one-row tile takes tile N 16"},
        {"depthwise1d", "tile 64x16x16", "tile 256x16x16", "one-row tile takes tile N 16 and tile M 64 or 128"},
        {"depthwise2d", "tile 64x32x16", "tile 64x32x128", "write tile K 16"},
        {"grouped2d_single", "math tf32x3", "math f32_simt", "depthwise only"},
        {"grouped2d_single", "swizzle 1", "swizzle 1 iterator optimized", ""},
        {"transpose2d_strided", "swizzle 1", "swizzle 2", "strided dgrad swizzle takes 1, 4 or 8"},
        {"transpose2d_strided", "swizzle 1", "swizzle 1 iterator few_channels",
         "iterator few_channels for a transposed convolution"},
    };
    const auto all = conv_forms::cases();
    for (const Edit& e : edits) {
        SCOPED_TRACE(e.form + ": " + e.to);
        const FormCase* f = nullptr;
        for (const FormCase& c : all)
            if (c.name == e.form) f = &c;
        ASSERT_NE(f, nullptr);
        const Problem p = parsed(form_json(*f));
        auto seed = planner::seed_program(p, h200(), cutlass_forms());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        std::string text = dsl::print_canonical(*seed);
        ASSERT_NE(text.find(e.from), std::string::npos) << text;
        text.replace(text.find(e.from), e.from.size(), e.to);
        auto program = dsl::parse_program(text, "edit.kf");
        ASSERT_TRUE(program.ok()) << program.error().to_string();
        auto out = lower_program(*program, p, LowerOptions{});
        if (e.words.empty()) {  // a legal edit
            EXPECT_TRUE(out.ok()) << out.error().to_string();
            continue;
        }
        ASSERT_FALSE(out.ok()) << text;
        EXPECT_NE(out.error().to_string().find(e.words), std::string::npos)
            << out.error().to_string();
    }
}

}  // namespace
}  // namespace kforge::codegen
