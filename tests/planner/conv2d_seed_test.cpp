// The fusion planner and the knob moves on conv2d problems: the seed is one conv2d kernel with
// the op's bias and the following element-wise ops in its chain (as a gemm's epilogue), the
// reductions after it as after a gemm; its canonical text parses, checks and lowers; the knob
// moves stay within the conv2d knob table.
#include <gtest/gtest.h>

#include <string>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::h200;
using seedtest::problem_of;
using seedtest::seed_checked;

// x [16,3,32,32] * w [128,3,3,3], padding 1 -> [16,128,32,32] (P, Q): the implicit GEMM is
// 16384 x 128 x 27, 256 CTAs of 128x64. `ops` follow the conv2d, whose output is h.
std::string conv_spec(const std::string& policy, const std::string& dtype, const std::string& ops,
                      const std::string& output = "y", const std::string& extra_inputs = "",
                      const std::string& conv_attrs = "") {
    return R"({"name": "conv_seed", "dims": {"N": 16, "C": 3, "H": 32, "W": 32, "K": 128, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": ")" + dtype + R"("},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": ")" + dtype + R"(", "param": true},
                   "b": {"shape": ["K"], "dtype": ")" + dtype + R"(", "param": true})" + extra_inputs + R"(},
        "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h", "padding": 1,
                   "out_dims": ["P", "Q"])" + conv_attrs + "}" + ops + R"(],
        "outputs": [")" + output + R"("], "precision": {"policy": ")" + policy + R"("}})";
}

constexpr const char* kRelu = R"(, {"op": "relu", "inputs": ["h"], "output": "y"})";

// C 8 and a 7x7 filter: 392 products an output, past the direct convolution's first range
std::string wide_filter(std::string spec) {
    spec.replace(spec.find("\"C\": 3"), 6, "\"C\": 8");
    spec.replace(spec.find("\"R\": 3, \"S\": 3"), 14, "\"R\": 7, \"S\": 7");
    return spec;
}

// C 3 at 3x3 (27 products an output): the direct convolution, one launch in f32 FMA, all three
// channels in one step (stages 1), 64 filters a block
TEST(Conv2dSeed, BiasAndReluInOneKernelFp32Strict) {
    const Problem p = problem_of(conv_spec("fp32_strict", "f32", kRelu));
    EXPECT_EQ(seed_checked(p),
              "program seed_conv_seed for \"conv_seed\"\n"
              "kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) tile 128x64x16 stages 1 schedule "
              "direct math f32_simt acc f32 swizzle 1\n"
              "    { add b[K]; relu; store y[N,K,P,Q] }\n");
}

// Past 256 products an output the implicit GEMM first: C 8 (padded to 8) under tile K 32 takes
// the few-channels iterator, not 3 of 4 MMA slices of zeros; f16 operands never run direct.
TEST(Conv2dSeed, ImplicitGemmPastTheDirectRange) {
    EXPECT_EQ(seed_checked(problem_of(wide_filter(conv_spec("fp32_strict", "f32", kRelu)))),
              "program seed_conv_seed for \"conv_seed\"\n"
              "kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) tile 128x64x32 stages 3 schedule "
              "multistage math tf32x3 acc f32 swizzle 1 iterator few_channels\n"
              "    { add b[K]; relu; store y[N,K,P,Q] }\n");
    auto half = planner::seed_program(problem_of(conv_spec("fp16", "f16", kRelu)), h200());
    ASSERT_TRUE(half.ok()) << half.error().to_string();
    EXPECT_EQ(half->kernels[0].gemm.schedule, dsl::Schedule::kMultistage);
}

// On sm_90 a dense conv of 16 channels or more that one 3xTF32 chunk holds starts on the Hopper
// form (schedule tma_ws); a few filters (K <= 32) take tile N 32 on the multistage kernel.
TEST(Conv2dSeed, HopperFormFirstFromSixteenChannels) {
    std::string spec = conv_spec("fp32_strict", "f32", kRelu);
    spec.replace(spec.find("\"C\": 3"), 6, "\"C\": 64");
    auto wide = planner::seed_program(problem_of(spec), h200());
    ASSERT_TRUE(wide.ok()) << wide.error().to_string();
    EXPECT_EQ(wide->kernels[0].gemm.schedule, dsl::Schedule::kTmaWarpSpecialized);
    EXPECT_EQ(wide->kernels[0].gemm.tile_m, 128);
    EXPECT_EQ(wide->kernels[0].gemm.tile_n, 64);  // 128 tiles of 128x128 leave SMs idle: 256
    EXPECT_EQ(wide->kernels[0].gemm.iterator, dsl::ConvIterator::kAuto);
    // 64 filters (ResNet's first stage) at many tiles: tile N 64, not 128 (half the MMA work
    // padding: 1642 us at 128x128 on the H100, session 28)
    std::string k64 = spec;
    k64.replace(k64.find("\"K\": 128"), 8, "\"K\": 64");
    k64.replace(k64.find("\"N\": 16"), 7, "\"N\": 64");  // 1024 CTAs of 128x64
    auto resnet = planner::seed_program(problem_of(k64), h200());
    ASSERT_TRUE(resnet.ok()) << resnet.error().to_string();
    EXPECT_EQ(resnet->kernels[0].gemm.schedule, dsl::Schedule::kTmaWarpSpecialized);
    EXPECT_EQ(resnet->kernels[0].gemm.tile_m, 128);
    EXPECT_EQ(resnet->kernels[0].gemm.tile_n, 64);
    // C 256 at 3x3 is four chunks of 64 channels under 3xTF32: not yet first (unmeasured)
    std::string deep = conv_spec("fp32_strict", "f32", kRelu);
    deep.replace(deep.find("\"C\": 3"), 6, "\"C\": 256");
    auto chunked = planner::seed_program(problem_of(deep), h200());
    ASSERT_TRUE(chunked.ok()) << chunked.error().to_string();
    EXPECT_EQ(chunked->kernels[0].gemm.schedule, dsl::Schedule::kMultistage);
    std::string few = conv_spec("fp32_strict", "f32", kRelu);
    few.replace(few.find("\"K\": 128"), 8, "\"K\": 6");
    few.replace(few.find("\"N\": 16"), 7, "\"N\": 64");  // 512 CTAs of 128x32
    auto narrow = planner::seed_program(problem_of(few), h200());
    ASSERT_TRUE(narrow.ok()) << narrow.error().to_string();
    EXPECT_EQ(narrow->kernels[0].gemm.schedule, dsl::Schedule::kDirect);  // 27 products
    EXPECT_EQ(narrow->kernels[0].gemm.tile_n, 8);
    EXPECT_EQ(narrow->kernels[0].gemm.tile_m, 256);
    auto narrow_wide = planner::seed_program(problem_of(wide_filter(few)), h200());
    ASSERT_TRUE(narrow_wide.ok()) << narrow_wide.error().to_string();
    EXPECT_EQ(narrow_wide->kernels[0].gemm.schedule, dsl::Schedule::kMultistage);
    EXPECT_EQ(narrow_wide->kernels[0].gemm.tile_n, 32);
    EXPECT_EQ(narrow_wide->kernels[0].gemm.iterator, dsl::ConvIterator::kFewChannels);
}

TEST(Conv2dSeed, MathAndTileByPrecision) {
    std::string text = seed_checked(problem_of(wide_filter(conv_spec("tf32", "f32", kRelu))));
    EXPECT_NE(text.find("tile 128x64x32 stages 3 schedule multistage math tf32 "), std::string::npos)
        << text;
    // f16 with K = 256: 256 CTAs of 128x128
    std::string spec = conv_spec("fp16", "f16", kRelu);
    spec.replace(spec.find("\"K\": 128"), 8, "\"K\": 256");
    text = seed_checked(problem_of(spec));
    EXPECT_NE(text.find("tile 128x128x32 stages 3 schedule multistage math f16 "), std::string::npos)
        << text;
    EXPECT_NE(text.find("{ add b[K]; relu; cast f16; store y[N,K,P,Q] }"), std::string::npos) << text;
    // with K = 128, 128x128 tiles are 128 CTAs on 132 SMs: 128x64 (256 CTAs) first
    text = seed_checked(problem_of(conv_spec("fp16", "f16", kRelu)));
    EXPECT_NE(text.find("tile 128x64x32 stages 3 schedule multistage math f16 "), std::string::npos)
        << text;
}

TEST(Conv2dSeed, EpilogueOperandsFusedOthersAfter) {
    // a per-channel scale [K,1,1] fuses; a per-(n, k) shift [N,K,1,1] does not (a map kernel
    // after the conv reads it); then a mean over the last dim is a rowwise kernel
    const std::string extra = R"(, "s": {"shape": ["K", 1, 1], "dtype": "f32", "param": true},
                   "t": {"shape": ["N", "K", 1, 1], "dtype": "f32"})";
    const std::string ops = R"(, {"op": "mul", "inputs": ["h", "s"], "output": "h1"},
                  {"op": "gelu", "inputs": ["h1"], "output": "h2"},
                  {"op": "add", "inputs": ["h2", "t"], "output": "h3"},
                  {"op": "mean", "inputs": ["h3"], "output": "y", "axis": -1})";
    const std::string text = seed_checked(problem_of(conv_spec("tf32", "f32", ops, "y", extra)));
    EXPECT_NE(text.find("kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S])"), std::string::npos) << text;
    EXPECT_NE(text.find("{ add b[K]; mul s[K,1,1]; gelu erf; store h2[N,K,P,Q] }"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) tile 128x64x32 stages 3 "
                        "schedule multistage math tf32 acc f32 swizzle 1\n    { add b[K]; mul "
                        "s[K,1,1]; gelu erf; add t"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("rowwise mean("), std::string::npos) << text;
}

TEST(Conv2dSeed, WrongProgramRejected) {
    const Problem p = problem_of(conv_spec("fp32_strict", "f32", kRelu));
    std::string text = seed_checked(p);
    // the seed's program with sigmoid for relu, and without the bias
    for (auto [from, to] : {std::pair<std::string, std::string>{"relu", "sigmoid"},
                            std::pair<std::string, std::string>{"add b[K]; ", ""}}) {
        std::string wrong = text;
        ASSERT_NE(wrong.find(from), std::string::npos);
        wrong.replace(wrong.find(from), from.size(), to);
        auto parsed = dsl::parse_program(wrong, "wrong.kf");
        ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
        auto res = dsl::check_program(*parsed, p, h200(), {"wrong.kf", wrong});
        ASSERT_FALSE(res.ok()) << wrong;
        EXPECT_NE(res.errors.front().message.find("y is not what the problem computes"),
                  std::string::npos)
            << res.errors.front().to_string();
    }
}

TEST(Conv2dSeed, IntermediateInputKeepsTheWeightsDtype) {
    // relu(x) feeds the conv: a map kernel stores it, and in the f32-intermediates variant too
    // it stays f16 (conv2d operands share one dtype, as a gemm's)
    const std::string spec = R"({"name": "relu_conv", "dims": {"N": 16, "C": 8, "H": 32, "W": 32, "K": 256, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f16"},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": "f16", "param": true}},
        "graph": [{"op": "relu", "inputs": ["x"], "output": "a"},
                  {"op": "conv2d", "inputs": ["a", "w"], "output": "y", "padding": 1, "out_dims": ["P", "Q"]}],
        "outputs": ["y"], "precision": {"policy": "fp16"}})";
    const Problem p = problem_of(spec);
    planner::SeedOptions f32;
    f32.intermediates_f32 = true;
    for (const planner::SeedOptions& o : {planner::SeedOptions{}, f32}) {
        auto prog = planner::seed_program(p, h200(), o);
        ASSERT_TRUE(prog.ok()) << prog.error().to_string();
        const std::string text = dsl::print_canonical(*prog);
        EXPECT_NE(text.find("{ relu; cast f16; store a[N,C,H,W] }"), std::string::npos) << text;
        EXPECT_NE(text.find("kernel k1 = conv2d(a[N,C,H,W], w[K,C,R,S]) tile 128x128x32 stages 3 "
                            "schedule multistage math f16"),
                  std::string::npos)
            << text;
    }
}

// groups 2 with 4 filters per group: CUTLASS's group fprop, several groups per CTA (tile N 64,
// 16 groups of 4; planner/knobs_conv.cpp), tile K 16 for the 2 channels per group.
TEST(Conv2dSeed, GroupedConvolutionSeedsTheGroupFprop) {
    const std::string spec = R"({"name": "conv_g", "dims": {"N": 2, "C": 4, "H": 8, "W": 8, "K": 8, "Cg": 2, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "Cg", "R", "S"], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "y", "groups": 2}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})";
    auto prog = planner::seed_program(problem_of(spec), h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);
    const dsl::GemmConfig& c = prog->kernels[0].gemm;
    EXPECT_EQ(c.tile_n, 64);
    EXPECT_EQ(c.tile_k, 16);
    EXPECT_EQ(c.math, dsl::MathMode::kTf32);
}

TEST(Conv2dSeed, KnobMovesStayInTheConvTable) {
    const Problem p = problem_of(wide_filter(conv_spec("tf32", "f32", kRelu)));
    auto seed = planner::seed_program(p, h200());
    ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    const auto moves = search::knob_neighbours(*seed);
    std::set<std::string> knobs, legal;
    for (const auto& m : moves) {
        knobs.insert(m.knob);
        const dsl::Kernel& k = m.program.kernels[0];
        EXPECT_TRUE(k.gemm.schedule == dsl::Schedule::kMultistage ||
                    k.gemm.schedule == dsl::Schedule::kTmaWarpSpecialized ||
                    k.gemm.schedule == dsl::Schedule::kDirect) << m.move;
        // every move reads back from its canonical text
        auto again = dsl::parse_program(dsl::print_canonical(m.program), "m.kf");
        ASSERT_TRUE(again.ok()) << m.move << ": " << again.error().to_string();
        EXPECT_EQ(dsl::strip_locations(*again), m.program) << m.move;
        if (dsl::check_program(m.program, p, h200()).ok()) legal.insert(m.move);
    }
    EXPECT_EQ(knobs, (std::set<std::string>{"k0 tile", "k0 stages", "k0 schedule", "k0 math",
                                            "k0 acc", "k0 swizzle", "k0 iterator"}));
    for (const char* move : {"k0 stages 3 -> 4", "k0 stages 3 -> 2", "k0 tile 128x64x32 -> 128x128x32",
                             "k0 iterator few_channels -> optimized",
                             "k0 tile 128x64x32 -> 128x64x16", "k0 math tf32 -> tf32x3",
                             "k0 swizzle 1 -> 2"})
        EXPECT_TRUE(legal.count(move)) << move;
    // tile K 64 of f32 (a 256-byte row) and math bf16 under tf32 are moves the checker refuses
    EXPECT_FALSE(legal.count("k0 tile 128x64x32 -> 128x64x64"));
    EXPECT_FALSE(legal.count("k0 math tf32 -> bf16"));
    // the seed's few-channels iterator is the sm80 kernel's: tma_ws with it is refused (the pair
    // move with iterator auto is not)
    EXPECT_FALSE(legal.count("k0 schedule multistage -> tma_ws"));
    // a random draw of the conv's knobs is a conv2d kernel on one of its three schedules
    search::Rng rng{7};
    for (int i = 0; i < 20; ++i) {
        const auto m = search::random_kernel_knobs(*seed, 0, rng);
        const dsl::Schedule s = m.program.kernels[0].gemm.schedule;
        EXPECT_TRUE(s == dsl::Schedule::kMultistage || s == dsl::Schedule::kTmaWarpSpecialized ||
                    s == dsl::Schedule::kDirect);
        EXPECT_TRUE(m.program.kernels[0].gemm.stages >= 1 && m.program.kernels[0].gemm.stages <= 6);
    }
}

// The direct seed's moves: its tile (filters, positions, channels a step) and stages move to
// legal direct kernels; math off f32_simt is refused on direct.
TEST(Conv2dSeed, KnobMovesOfTheDirectConvolution) {
    const Problem p = problem_of(conv_spec("fp32_strict", "f32", kRelu));
    auto seed = planner::seed_program(p, h200());
    ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    ASSERT_EQ(seed->kernels[0].gemm.schedule, dsl::Schedule::kDirect);
    std::set<std::string> legal, all;
    for (const auto& m : search::knob_neighbours(*seed)) {
        all.insert(m.move);
        if (dsl::check_program(m.program, p, h200()).ok()) legal.insert(m.move);
    }
    std::string listed;
    for (const auto& m : legal) listed += m + "; ";
    for (const char* move : {"k0 tile 128x64x16 -> 128x32x16", "k0 stages 1 -> 2"})
        EXPECT_TRUE(legal.count(move)) << move << " among " << listed;
    EXPECT_TRUE(all.count("k0 math f32_simt -> tf32x3"));
    EXPECT_FALSE(legal.count("k0 math f32_simt -> tf32x3"));
}

}  // namespace
}  // namespace kforge
