// The convolution forms other than conv2d (issue 24): conv1d lowers as a conv2d kernel with
// H = 1 (x [N,C,W] staged as [N,1,W,Cp], the CUTLASS fprop with R = 1 and the op's W-axis
// attributes, the chain over y [N,K,Q]), conv3d as a conv2d kernel on CUTLASS's 3-D fprop
// (NDHWC staging, Conv3dProblemSize, the chain over y [N,K,Z,P,Q]); both pass every gate on the
// simulated device; the planner seeds the transposed forms and a grouped conv1d too (their
// lowerings: conv_forms_test.cpp). Text and plan only: nothing here compiles CUDA.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "device/device.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "sol/device.h"
#include "tests/codegen/conv_fixtures.h"

namespace kforge::codegen {
namespace {

using conv_testing::expect_has;
using conv_testing::h200;
using conv_testing::parsed;

// y = relu(conv1d(x, w, b)): x [N,C,L] = [2,3,40], w [K,C,5] = [6,3,5], stride 2, padding 3,
// dilation 2 -> y [2,6,Lo] with Lo = (40 + 6 - 8 - 1) / 2 + 1 = 19.
constexpr int kLo = 19;

std::string conv1d_json(int n = 2, int l = 40) {
    return R"({"name": "conv1d_relu", "dims": {"N": )" + std::to_string(n) + R"(, "C": 3, "L": )" +
           std::to_string(l) + R"(, "K": 6},
      "inputs": {"x": {"shape": ["N", "C", "L"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 5], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv1d", "inputs": ["x", "w", "b"], "output": "h",
                 "stride": 2, "padding": 3, "dilation": 2, "out_dims": ["Lo"]},
                {"op": "relu", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
}

const char* kConv1dProgram =
    "program c1 for \"conv1d_relu\"\n"
    "kernel k0 = conv2d(x[N,C,L], w[K,C,5]) tile 128x64x32 stages 3 math tf32x3\n"
    "    { add b[K]; relu; store y[N,K,Lo] }\n";

TEST(ConvNdLowering, Conv1dIsAConv2dWithUnitHeight) {
    Problem problem = parsed(conv1d_json());
    ASSERT_EQ(problem.find_tensor("y")->shape, (std::vector<int64_t>{2, 6, kLo}));
    auto program = dsl::parse_program(kConv1dProgram, "c1.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto out = lower_program(*program, problem, LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ(out->plan.kernels.size(), 4u);
    const std::string& s = out->cuda_source;
    // the W axis carries the op's attributes; H is the unit axis
    expect_has(s, "constexpr int kStrideH = 1, kStrideW = 2;");
    expect_has(s, "constexpr int kPadH = 0, kPadW = 3;");
    expect_has(s, "constexpr int kDilationH = 1, kDilationW = 2;");
    expect_has(s, ", H = 1, W = in->dims[");
    expect_has(s, ", R = 1, S = 5;");
    // the chain runs over y [N,K,Lo]: three run-time sizes
    expect_has(s, "chain{t_b, t_y, batch, filters, out_w};");
    for (const BufferDecl& b : out->plan.buffers) {
        if (b.name == "k0_conv_x") EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 1, 40, 4}));
        if (b.name == "k0_conv_y") EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 1, kLo, 8}));
    }
}

TEST(ConvNdLowering, Conv1dPassesEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::EvalRequest r;
    r.problem = parsed(conv1d_json(4, 300));
    r.program_text = kConv1dProgram;
    r.tier = EvalTier::kFull;
    eval::EvalReport rep = eval::evaluate(**device, r);
    EXPECT_EQ(rep.status, EvalStatus::kPassed) << eval::to_json(rep).dump(2);
}

// y = sigmoid(conv3d(x, w) + b): x [N,C,D,H,W] = [2,3,6,9,10], w [K,C,3,3,2], stride [1,2,1],
// padding [1,1,0], dilation [2,1,1] -> y [2,5,4,5,9].
std::string conv3d_json(int n = 2) {
    return R"({"name": "conv3d_sig", "dims": {"N": )" + std::to_string(n) + R"(, "C": 3, "D": 6,
      "H": 9, "W": 10, "K": 5},
      "inputs": {"x": {"shape": ["N", "C", "D", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 3, 3, 2], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv3d", "inputs": ["x", "w", "b"], "output": "h",
                 "stride": [1, 2, 1], "padding": [1, 1, 0], "dilation": [2, 1, 1],
                 "out_dims": ["Z", "P", "Q"]},
                {"op": "sigmoid", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
}

const char* kConv3dProgram =
    "program c3 for \"conv3d_sig\"\n"
    "kernel k0 = conv2d(x[N,C,D,H,W], w[K,C,3,3,2]) tile 128x64x32 stages 3 math tf32x3\n"
    "    { add b[K]; sigmoid; store y[N,K,Z,P,Q] }\n";

TEST(ConvNdLowering, Conv3dRunsOnCutlassConv3dFprop) {
    Problem problem = parsed(conv3d_json());
    ASSERT_EQ(problem.find_tensor("y")->shape, (std::vector<int64_t>{2, 5, 4, 5, 9}));
    auto program = dsl::parse_program(kConv3dProgram, "c3.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto out = lower_program(*program, problem, LowerOptions{});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ(out->plan.kernels.size(), 4u);
    const std::string& s = out->cuda_source;
    expect_has(s, "cutlass/conv/kernel/default_conv3d_fprop.h");
    expect_has(s, "using Layout = cutlass::layout::TensorNDHWC;");
    expect_has(s, "cutlass::conv::kernel::DefaultConv3dFprop<");
    expect_has(s, "constexpr int kStrideH = 2, kStrideW = 1;");
    expect_has(s, "constexpr int kPadH = 1, kPadW = 0;");
    expect_has(s, "constexpr int kStrideD = 1, kPadD = 1, kDilationD = 2;");
    expect_has(s, "cutlass::conv::Conv3dProblemSize problem(");
    expect_has(s, "const int64_t D = in->dims[");
    expect_has(s, "chain{t_b, t_y, batch, filters, out_d, out_h, out_w};");
    expect_has(s, "out_d * out_h * out_w, padded_filters, chain");
    for (const BufferDecl& b : out->plan.buffers) {
        if (b.name == "k0_conv_x") EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 6, 9, 10, 4}));
        if (b.name == "k0_conv_w") EXPECT_EQ(b.shape, (std::vector<int64_t>{8, 3, 3, 2, 4}));
        if (b.name == "k0_conv_y") EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 4, 5, 9, 8}));
    }
    // SIMT math has no 3-D fprop here: a user error naming it
    auto simt = dsl::parse_program(
        "program c3 for \"conv3d_sig\"\n"
        "kernel k0 = conv2d(x[N,C,D,H,W], w[K,C,3,3,2]) tile 64x64x16 math f32_simt\n"
        "    { add b[K]; sigmoid; store y[N,K,Z,P,Q] }\n", "c3.kf");
    ASSERT_TRUE(simt.ok()) << simt.error().to_string();
    auto refused = lower_program(*simt, problem, LowerOptions{});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().to_string().find("math f32_simt for a conv3d"), std::string::npos)
        << refused.error().to_string();
}

TEST(ConvNdLowering, Conv3dPassesEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::EvalRequest r;
    r.problem = parsed(conv3d_json(4));
    r.program_text = kConv3dProgram;
    r.tier = EvalTier::kFull;
    eval::EvalReport rep = eval::evaluate(**device, r);
    EXPECT_EQ(rep.status, EvalStatus::kPassed) << eval::to_json(rep).dump(2);
}

TEST(ConvNdLowering, PlannerSeedsEveryConvolutionForm) {
    for (const std::string& json : {conv1d_json(), conv3d_json()}) {
        auto seed = planner::seed_program(parsed(json), h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    }
    // transposed convolutions (CUTLASS's dgrad) and a grouped conv1d (its group fprop with
    // H = 1): seeded, checked and lowered (what stays refused: conv_forms_test.cpp)
    struct Form {
        std::string op, x, w, attrs;
    };
    const Form forms[] = {
        {"conv_transpose1d", "[2, 3, 7]", "[3, 4, 3]", R"(, "stride": 2)"},
        {"conv_transpose2d", "[2, 3, 5, 6]", "[3, 4, 3, 3]", ""},
        {"conv_transpose3d", "[1, 2, 3, 3, 3]", "[2, 2, 2, 2, 2]", ""},
        {"conv1d", "[2, 4, 9]", "[4, 1, 3]", R"(, "groups": 4)"},
    };
    for (const Form& f : forms) {
        SCOPED_TRACE(f.op + f.attrs);
        std::string json = R"({"name": "form", "dims": {},
          "inputs": {"x": {"shape": )" + f.x + R"(, "dtype": "f32"},
                     "w": {"shape": )" + f.w + R"(, "dtype": "f32", "param": true}},
          "graph": [{"op": ")" + f.op + R"(", "inputs": ["x", "w"], "output": "y")" + f.attrs +
                           R"(}], "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
        const Problem p = parsed(json);
        auto s = planner::seed_program(p, h200());
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        EXPECT_TRUE(dsl::check_program(*s, p, h200()).ok());
        EXPECT_TRUE(lower_program(*s, p, LowerOptions{}).ok());
    }
}

// The search's knob moves reach the new forms: on the conv1d and conv3d seeds, moves of the
// conv2d knob table that check and lower (a stages move among them).
TEST(ConvNdLowering, KnobMovesOnConv1dAndConv3dSeedsCheckAndLower) {
    for (const std::string& json : {conv1d_json(), conv3d_json()}) {
        const Problem p = parsed(json);
        SCOPED_TRACE(p.name);
        auto seed = planner::seed_program(p, h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        int lowered = 0;
        bool stages = false;
        for (const auto& m : search::knob_neighbours(*seed)) {
            if (!dsl::check_program(m.program, p, h200()).ok()) continue;
            if (!lower_program(m.program, p, LowerOptions{}).ok()) continue;
            ++lowered;
            stages = stages || m.knob == "k0 stages";
        }
        EXPECT_GE(lowered, 3);
        EXPECT_TRUE(stages);
    }
}

}  // namespace
}  // namespace kforge::codegen
