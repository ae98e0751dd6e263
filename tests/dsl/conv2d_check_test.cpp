// The checker on conv2d kernels: a conv2d kernel implements the problem's conv2d op (its bias an
// `add b[K]`), programs that compute something else are rejected at the statement, and the
// multistage gemm's legality rules hold for the implicit GEMM (groups > 1 too).
#include "check_test_util.h"

namespace kforge::dsl::testing {
namespace {

// relu(conv2d(x, w, b)), 3x3 stride 1 padding 1: y [N,K,P,Q] (the spec names them).
std::string conv_spec(std::string_view policy = "fp32_strict", std::string_view dtype = "f32",
                      std::string_view conv_attrs = R"("padding": 1, "out_dims": ["P", "Q"])") {
    const std::string d(dtype);
    return R"({"name": "conv_relu", "dims": {"N": 2, "C": 3, "H": 16, "W": 16, "K": 8, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": ")" + d + R"("},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": ")" + d + R"(", "param": true},
                   "b": {"shape": ["K"], "dtype": ")" + d + R"(", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h", )" +
           std::string(conv_attrs) + R"(},
                  {"op": "relu", "inputs": ["h"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": ")" + std::string(policy) + R"("}})";
}

constexpr std::string_view kHead = "program p for \"conv_relu\"\n";

std::string conv_program(std::string_view knobs, std::string_view chain = "add b[K]; relu; store y[N,K,P,Q]") {
    return std::string(kHead) + "kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) " + std::string(knobs) +
           " { " + std::string(chain) + " }\n";
}

TEST(Conv2dCheck, BiasAndReluFusedIsTheProblem) {
    auto r = check_text(conv_spec(), conv_program("tile 128x64x32 stages 3 math tf32x3"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    // and with the default knobs (math auto) and a bias-then-relu spelled as max 0
    r = check_text(conv_spec(), conv_program("", "add b[K]; max 0; store y[N,K,P,Q]"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(Conv2dCheck, StridedOutputDimsAreTheDerivedOnes) {
    // 3x3 stride 2 padding 1 on 16x16: 8x8, named Ho, Wo by default
    const std::string spec = conv_spec("tf32", "f32", R"("stride": 2, "padding": 1)");
    auto r = check_text(spec, conv_program("math tf32", "add b[K]; relu; store y[N,K,Ho,Wo]"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(spec, conv_program("math tf32", "add b[K]; relu; store y[N,K,H,W]"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.errors[0].where, "t.kf:2:78");
    EXPECT_EQ(r.errors[0].message,
              "y is [N,K,Ho,Wo] in the problem; the program writes y[N,K,H,W] (write y[N,K,Ho,Wo])");
}

TEST(Conv2dCheck, MissingBiasRejectedAtTheStore) {
    auto r = check_text(conv_spec(), conv_program("math tf32x3", "relu; store y[N,K,P,Q]"));
    expect_one_error(r, "t.kf:2:70", {"the problem adds b at graph[0] (conv2d stride 1 padding 1 "
                                      "dilation 1)", "the program's chain for y does not"});
}

TEST(Conv2dCheck, WrongActivationRejected) {
    auto r = check_text(conv_spec(), conv_program("math tf32x3", "add b[K]; sigmoid; store y[N,K,P,Q]"));
    expect_one_error(r, "t.kf:2:83", {"the problem applies relu to h at graph[1]",
                                      "has sigmoid at 2:68"});
}

TEST(Conv2dCheck, SwappedOperandsRejected) {
    // conv2d's operands are ordered: a weight where the input goes is another computation
    auto r = check_text(conv_spec(), std::string(kHead) +
        "kernel k0 = conv2d(w[K,C,R,S], x[N,C,H,W]) { add b[K]; relu; store y[N,K,P,Q] }\n");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.errors[0].where, "t.kf:2:1");
    EXPECT_EQ(r.errors[0].message,
              "conv2d(w[K,C,R,S], x[N,C,H,W]): no conv2d op of the problem reads w and x (the "
              "problem has graph[0] conv2d(x, w)); a conv2d kernel reads its op's input and weight");
}

TEST(Conv2dCheck, FilterOfAtMost32) {
    std::string spec = conv_spec("tf32", "f32", R"("padding": 20, "out_dims": ["P", "Q"])");
    spec.replace(spec.find("\"R\": 3"), 6, "\"R\": 33");
    auto r = check_text(spec, conv_program("math tf32"));
    expect_one_error(r, "t.kf:2:32", {"a 33x3 filter: CUTLASS's optimized conv2d iterator takes R, S <= 32"});
}

TEST(Conv2dCheck, UnrelatedProgramsRejected) {
    // a conv2d kernel for a problem without a conv2d op
    auto r = check_text(R"({"name": "lin", "dims": {"M": 64, "N": 32, "K": 16},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "f32"},
                   "W": {"shape": ["N", "K"], "dtype": "f32", "param": true},
                   "A": {"shape": ["M", "K", "N", "N"], "dtype": "f32"},
                   "B": {"shape": ["N", "K", "N", "N"], "dtype": "f32"}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "tf32"}})",
                        "program p for \"lin\"\nkernel k0 = conv2d(A[M,K,N,N], B[N,K,N,N]) { store Y[M,N] }");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.errors[0].where, "t.kf:2:1");
    EXPECT_NE(r.errors[0].message.find("the problem has no conv2d op"), std::string::npos)
        << all_errors(r);
    EXPECT_NE(r.errors[0].detail.find('^'), std::string::npos);
    // a gemm on a conv problem's tensors
    r = check_text(conv_spec(), std::string(kHead) +
        "kernel k0 = gemm(x[N,C,H,W], w[K,C,R,S]) { add b[K]; relu; store y[N,K,P,Q] }\n");
    EXPECT_FALSE(r.ok());
}

// groups > 1 checks (CUTLASS's group fprop; what it cannot run, the lowering refuses by name).
TEST(Conv2dCheck, GroupedConvolutionChecks) {
    const std::string spec = R"({"name": "conv_relu", "dims": {"N": 2, "C": 4, "H": 8, "W": 8, "K": 8, "Cg": 2, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "Cg", "R", "S"], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "y", "padding": 1, "groups": 2,
                   "out_dims": ["P", "Q"]}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})";
    auto r = check_text(spec, std::string(kHead) +
        "kernel k0 = conv2d(x[N,C,H,W], w[K,Cg,R,S]) math tf32 { store y[N,K,P,Q] }\n");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.errors[0].to_string());
}

TEST(Conv2dCheck, MathFollowsThePrecisionPolicy) {
    auto r = check_text(conv_spec(), conv_program("math tf32"));
    expect_one_error(r, "t.kf:2:44", {"math tf32 on f32 operands is not allowed under precision "
                                      "policy fp32_strict"});
    r = check_text(conv_spec("fp16", "f16"), conv_program("tile 128x128x32 math f16",
                                                           "add b[K]; relu; cast f16; store y[N,K,P,Q]"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(conv_spec("fp16", "f16"), conv_program("math bf16", "add b[K]; relu; cast f16; store y[N,K,P,Q]"));
    expect_one_error(r, "t.kf:2:44", {"math bf16 on f16 operands; use math f16"});
    // what the policy allows but the lowering does not: f32 operands multiplied as bf16, acc f16
    r = check_text(conv_spec("bf16"), conv_program("math bf16"));
    expect_one_error(r, "t.kf:2:44", {"math bf16 on f32 operands: a conv2d kernel stages x and w "
                                      "without rounding them"});
    r = check_text(conv_spec("fp16", "f16"), conv_program("math f16 acc f16",
                                                           "add b[K]; relu; cast f16; store y[N,K,P,Q]"));
    expect_one_error(r, "t.kf:2:53", {"acc f16: a conv2d kernel's accumulators are staged as f32"});
}

TEST(Conv2dCheck, TileRulesOfTheMultistageGemm) {
    // f32 tile K 64: a 256-byte row, more than the crosswise layout's 128
    auto r = check_text(conv_spec(), conv_program("tile 128x64x64 math tf32x3"));
    expect_one_error(r, "t.kf:2:44", {"tile K <= 32"});
    // shared memory: 128x256x64 of f16 is 48 KiB a stage; 6 do not fit
    r = check_text(conv_spec("fp16", "f16"), conv_program("tile 128x256x64 stages 6 math f16",
                                                           "add b[K]; relu; cast f16; store y[N,K,P,Q]"));
    expect_one_error(r, "t.kf:2:60", {"stages 6 needs 289 KiB of shared memory", "at most 4 fit"});
    // f32_simt: the SIMT tile rules (both operands K-major), with any chain (the conv epilogue is
    // kforge's own)
    r = check_text(conv_spec(), conv_program("tile 64x64x32 math f32_simt"));
    expect_one_error(r, "t.kf:2:44", {"math f32_simt with tile K 32 and a K-major operand"});
    r = check_text(conv_spec(), conv_program("tile 64x64x16 math f32_simt"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    // the few-channels iterator is a tensor-op mainloop only
    r = check_text(conv_spec(), conv_program("tile 64x64x16 math f32_simt iterator few_channels"));
    expect_one_error(r, "t.kf:2:72", {"iterator few_channels with math f32_simt"});
    r = check_text(conv_spec(), conv_program("tile 128x64x32 math tf32x3 iterator few_channels"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

// schedule tma_ws: CUTLASS 3.x's sm90 fprop (codegen/lower_conv_sm90.cpp) - one consumer warp
// group (tile M 64 or 128, its accumulators in 255 registers), tile K one 128-byte row, a
// tensor-op math, no iterator; stages are CUTLASS's carveout (any 2..6 the knob takes).
TEST(Conv2dCheck, HopperScheduleTiles) {
    CheckResult r = check_text(conv_spec(), conv_program("tile 128x128x32 schedule tma_ws math tf32x3"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 64x256x32 stages 6 schedule tma_ws math tf32x3"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x128x16 schedule tma_ws math tf32x3"));
    EXPECT_NE(all_errors(r).find("with schedule tma_ws: tile K 32 (one 128-byte row of the staged "
                                 "operands)"), std::string::npos) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 256x128x32 schedule tma_ws math tf32x3"));
    EXPECT_NE(all_errors(r).find("tile M 64 or 128 (one consumer warp group)"), std::string::npos)
        << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x256x32 schedule tma_ws math tf32x3"));
    EXPECT_NE(all_errors(r).find("256 accumulator registers per thread"), std::string::npos)
        << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x64x32 schedule tma_ws math tf32x3 "
                                             "iterator few_channels"));
    EXPECT_NE(all_errors(r).find("iterator few_channels with schedule tma_ws"), std::string::npos)
        << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x64x32 schedule tma_ws math f32_simt"));
    EXPECT_NE(all_errors(r).find("math f32_simt with schedule tma_ws"), std::string::npos)
        << all_errors(r);
}

// schedule direct (dsl/conv_direct.h): f32 FMA on dense fprops of f32 operands; its tile is
// positions x filters x channels a step, at most 1024 threads, the staged patch and weights
// within shared memory; gemm kernels refuse it.
TEST(Conv2dCheck, DirectScheduleRules) {
    CheckResult r = check_text(conv_spec(), conv_program("tile 128x64x16 stages 1 schedule direct "
                                                         "math f32_simt"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x8x4 stages 2 schedule direct math f32_simt"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x64x16 stages 1 schedule direct math tf32x3"));
    EXPECT_NE(all_errors(r).find("math tf32x3 with schedule direct"), std::string::npos)
        << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 256x256x16 stages 1 schedule direct "
                                             "math f32_simt"));
    EXPECT_NE(all_errors(r).find("2048 threads (M / 4 * N / 8)"), std::string::npos)
        << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 128x24x16 stages 1 schedule direct "
                                             "math f32_simt iterator few_channels"));
    EXPECT_NE(all_errors(r).find("iterator with schedule direct"), std::string::npos)
        << all_errors(r);
    // a patch past shared memory: 64 channels of a 3x3 stride-4 patch at tile M 256 (dilation 5)
    std::string deep = conv_spec("fp32_strict", "f32", R"("stride": 4, "dilation": 5, "out_dims": ["P", "Q"])");
    deep.replace(deep.find("\"C\": 3"), 6, "\"C\": 64");
    r = check_text(deep, conv_program("tile 256x8x64 stages 6 schedule direct math f32_simt"));
    EXPECT_NE(all_errors(r).find("of shared memory a block"), std::string::npos) << all_errors(r);
    // f16 operands and grouped convolutions keep the implicit GEMM
    r = check_text(conv_spec("fp16", "f16"),
                   conv_program("tile 128x64x16 stages 1 schedule direct math f32_simt",
                                "add b[K]; relu; store y[N,K,P,Q]"));
    EXPECT_NE(all_errors(r).find("schedule direct takes f32 operands"), std::string::npos)
        << all_errors(r);
}

// tile N 16 on the multistage tensor-op fprop does not compile (CUTLASS's epilogue thread map);
// 32 does, and the SIMT depthwise forms keep their own tiles
TEST(Conv2dCheck, MultistageTileNAtLeast32) {
    CheckResult r = check_text(conv_spec(), conv_program("tile 64x16x32 math tf32x3"));
    EXPECT_NE(all_errors(r).find("a multistage tensor-op conv2d takes tile N 32 or more"),
              std::string::npos) << all_errors(r);
    r = check_text(conv_spec(), conv_program("tile 64x32x32 math tf32x3 iterator few_channels"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(Conv2dCheck, HandBuiltKnobsOutsideTheConvTable) {
    auto problem = parse_problem(conv_spec(), "p.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto parsed = parse_program(conv_program("math tf32x3"), "t.kf");
    ASSERT_TRUE(parsed.ok());
    Program p = *parsed;
    p.kernels[0].gemm.schedule = Schedule::kCooperative;
    p.kernels[0].gemm.stages = 8;
    CheckResult r = check_program(p, *problem, h200());
    EXPECT_NE(all_errors(r).find("a conv2d kernel runs on schedule multistage (CUTLASS's sm80 "
                                 "implicit-GEMM convolution), tma_ws (its sm90 one) or direct"),
              std::string::npos)
        << all_errors(r);
    EXPECT_NE(all_errors(r).find("stages 8: a conv2d kernel takes 2..6 stages"), std::string::npos)
        << all_errors(r);
    // a weight of 3 dims (the parser refuses it; a built program is refused, not a crash)
    p = *parsed;
    p.kernels[0].args[1].dims.pop_back();
    r = check_program(p, *problem, h200());
    EXPECT_NE(all_errors(r).find("conv2d takes X[N,C,H,W] and Wt[K,C,R,S] (4 dims each)"),
              std::string::npos)
        << all_errors(r);
}

TEST(Conv2dCheck, ChainOperandsPerChannelResidualOrScalar) {
    const std::string spec = R"({"name": "conv_relu", "dims": {"N": 2, "C": 3, "H": 8, "W": 8, "K": 8, "R": 1, "S": 1},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true},
                   "s": {"shape": ["K", 1, 1], "dtype": "f32", "param": true},
                   "r": {"shape": ["N", "K", "H", "W"], "dtype": "f32"},
                   "t": {"shape": ["N", "K", 1, 1], "dtype": "f32"}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "h", "out_dims": ["H", "W"]},
                  {"op": "mul", "inputs": ["h", "s"], "output": "h2"},
                  {"op": "add", "inputs": ["h2", "r"], "output": "h3"},
                  {"op": "add", "inputs": ["h3", "t"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})";
    auto r = check_text(spec, std::string(kHead) +
        "kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) math tf32\n"
        "    { mul s[K,1,1]; add r[N,K,H,W]; add t[N,K,1,1]; store y[N,K,H,W] }\n");
    expect_one_error(r, "t.kf:3:41", {"add t[N,K,1,1]: a conv2d chain reads per-channel tensors [K]",
                                      "in a map kernel"});
}

}  // namespace
}  // namespace kforge::dsl::testing
