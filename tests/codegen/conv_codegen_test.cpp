// The conv2d lowering (codegen/lower_conv.cpp): four launches (x and w staged channels last with
// zero-padded channels, the CUTLASS fprop through its param builder, the NCHW output through the
// chain), their grids and params, the workspace buffers and their padded sizes, the CUTLASS
// types per math mode, the op's stride/padding/dilation in the source, no shape literal in the
// builder, and the user errors. Text and plan only: conv_compile_test.cpp compiles.
#include <map>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "codegen/lower_conv.h"
#include "tests/codegen/conv_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace conv_testing;

Lowered lower_ok(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? *out : Lowered{};
}

std::string lower_error(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, LowerOptions{});
    EXPECT_FALSE(out.ok()) << "expected a lowering error";
    return out.ok() ? "" : out.error().to_string();
}

const BufferDecl* buffer(const LaunchPlan& plan, const std::string& name) {
    for (const BufferDecl& b : plan.buffers)
        if (b.name == name) return &b;
    return nullptr;
}

int64_t int_param(const KernelLaunch& l, const std::string& name) {
    for (const KernelParam& p : l.params)
        if (p.kind == ParamKind::kInt64 && p.name == name) return p.int_value;
    ADD_FAILURE() << l.symbol << " has no int64 param " << name;
    return -1;
}

TEST(ConvCodegen, F32PlanHasFourLaunchesAndPaddedWorkspaces) {
    Lowered out = lower_ok(conv_program("tile 128x64x32 stages 3 math tf32x3"), conv_problem());
    const LaunchPlan& plan = out.plan;
    EXPECT_TRUE(out.uses_cutlass);
    EXPECT_TRUE(out.has_host_code);
    ASSERT_EQ(plan.kernels.size(), 4u);
    // 1. x [2,3,17,19] -> [2,17,19,4]: 323 positions, channels padded 3 -> 4 (16 bytes of f32)
    const KernelLaunch& sx = plan.kernels[0];
    EXPECT_EQ(sx.name, "k0");
    EXPECT_EQ(sx.symbol, "kforge_k0_conv_x");
    EXPECT_TRUE(sx.param_builder.empty());
    EXPECT_EQ(sx.grid, (std::array<unsigned, 3>{11, 1, 2}));  // ceil(323/32), ceil(4/32), N
    EXPECT_EQ(sx.block, (std::array<unsigned, 3>{32, 8, 1}));
    ASSERT_GE(sx.params.size(), 2u);
    EXPECT_EQ(sx.params[0].kind, ParamKind::kTensor);
    EXPECT_EQ(sx.params[0].name, "x");
    EXPECT_EQ(sx.params[1].kind, ParamKind::kWorkspace);
    EXPECT_EQ(sx.params[1].name, "k0_conv_x");
    EXPECT_EQ(int_param(sx, "channels"), 3);
    EXPECT_EQ(int_param(sx, "positions"), 17 * 19);
    EXPECT_EQ(int_param(sx, "padded_channels"), 4);
    EXPECT_EQ(int_param(sx, "images_valid"), 2);
    // 2. w [10,3,3,3] -> [12,3,3,4]: filters padded 10 -> 12, the last two all zero
    const KernelLaunch& sw = plan.kernels[1];
    EXPECT_EQ(sw.symbol, "kforge_k0_conv_w");
    EXPECT_EQ(sw.grid, (std::array<unsigned, 3>{1, 1, 12}));
    EXPECT_EQ(sw.params[0].name, "w");
    EXPECT_EQ(sw.params[1].name, "k0_conv_w");
    EXPECT_EQ(int_param(sw, "positions"), 9);
    EXPECT_EQ(int_param(sw, "images_valid"), 10);
    // 3. CUTLASS: a param blob over the three workspaces
    const KernelLaunch& cv = plan.kernels[2];
    EXPECT_EQ(cv.symbol, "kforge_k0");
    EXPECT_EQ(cv.param_builder, "kforge_build_k0");
    EXPECT_EQ(cv.builder_tensors, (std::vector<std::string>{"k0_conv_x", "k0_conv_w", "k0_conv_y"}));
    ASSERT_EQ(cv.params.size(), 1u);
    EXPECT_EQ(cv.params[0].kind, ParamKind::kParamBlob);
    // 4. output: [2,9,10,12] -> y [2,10,9,10] via the chain (b and y its params)
    const KernelLaunch& o = plan.kernels[3];
    EXPECT_EQ(o.symbol, "kforge_k0_conv_out");
    EXPECT_EQ(o.grid, (std::array<unsigned, 3>{3, 1, 2}));  // ceil(90/32), ceil(10/32), N
    EXPECT_EQ(o.params[0].kind, ParamKind::kWorkspace);
    EXPECT_EQ(o.params[0].name, "k0_conv_y");
    std::set<std::string> tensors;
    for (const KernelParam& p : o.params)
        if (p.kind == ParamKind::kTensor) tensors.insert(p.name);
    EXPECT_EQ(tensors, (std::set<std::string>{"b", "y"}));
    EXPECT_EQ(int_param(o, "batch"), 2);
    EXPECT_EQ(int_param(o, "filters"), 10);
    EXPECT_EQ(int_param(o, "out_h"), 9);
    EXPECT_EQ(int_param(o, "out_w"), 10);
    EXPECT_EQ(int_param(o, "padded_filters"), 12);

    const BufferDecl* bx = buffer(plan, "k0_conv_x");
    const BufferDecl* bw = buffer(plan, "k0_conv_w");
    const BufferDecl* by = buffer(plan, "k0_conv_y");
    ASSERT_TRUE(bx && bw && by);
    EXPECT_EQ(bx->shape, (std::vector<int64_t>{2, 17, 19, 4}));
    EXPECT_EQ(bw->shape, (std::vector<int64_t>{12, 3, 3, 4}));
    EXPECT_EQ(by->shape, (std::vector<int64_t>{2, 9, 10, 12}));
    for (const BufferDecl* b : {bx, bw, by}) {
        EXPECT_TRUE(b->workspace) << b->name;
        EXPECT_EQ(b->dtype, DType::kF32) << b->name;
        // every element is written before it is read: no memset needed (poisoned by the harness)
        EXPECT_FALSE(b->zero_init) << b->name;
    }
    // the plan survives its JSON form
    auto back = launch_plan_from_json(nlohmann::json::parse(to_json(plan).dump()));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->kernels.size(), 4u);
}

// The knob `iterator`: auto and optimized lower to kOptimized (GEMM-K as r, s, then C in tile-K
// steps), few_channels to kFewChannels (the flattened r, s, c); SIMT has no few-channels mainloop.
TEST(ConvCodegen, IteratorKnobPicksTheFpropIterator) {
    const auto source = [](const std::string& knobs) {
        return lower_ok(conv_program(knobs), conv_problem()).cuda_source;
    };
    expect_has(source("tile 128x64x32 stages 3 math tf32x3 iterator few_channels"),
               "cutlass::arch::OpMultiplyAddFastF32, cutlass::conv::IteratorAlgorithm::kFewChannels");
    expect_has(source("tile 128x64x32 stages 3 math tf32 iterator optimized"),
               "cutlass::conv::IteratorAlgorithm::kOptimized");
    const std::string simt = lower_error(
        conv_program("tile 64x64x16 stages 3 math f32_simt iterator few_channels"), conv_problem());
    EXPECT_NE(simt.find("iterator few_channels with math f32_simt"), std::string::npos) << simt;
}

TEST(ConvCodegen, F32SourceHasTheFpropTypesAndTheOpAttributes) {
    Lowered out = lower_ok(conv_program("tile 128x64x32 stages 4 math tf32x3 swizzle 2"),
                           conv_problem());
    const std::string& s = out.cuda_source;
    expect_has(s, "#include \"kernels/conv_layout.cuh\"");
    expect_has(s, "cutlass::conv::kernel::DefaultConv2dFprop<");
    expect_has(s, "cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80");
    expect_has(s, "cutlass::arch::OpMultiplyAddFastF32, cutlass::conv::IteratorAlgorithm::kOptimized");
    expect_has(s, "using ThreadblockShape = cutlass::gemm::GemmShape<128, 64, 32>;");
    expect_has(s, "using WarpShape = cutlass::gemm::GemmShape<32, 32, 32>;");  // 3xTF32: 8 warps
    expect_has(s, "GemmIdentityThreadblockSwizzle<2>");
    expect_has(s, "EpilogueOp, Swizzle, 4,");
    expect_has(s, "constexpr int kStrideH = 2, kStrideW = 2;");
    expect_has(s, "constexpr int kPadH = 1, kPadW = 1;");
    expect_has(s, "constexpr int kDilationH = 1, kDilationW = 1;");
    expect_has(s, "constexpr int kAlignment = 4;");
    expect_has(s, "kforge::conv_channels_last(t_x, w_k0_conv_x, channels, positions");
    expect_has(s, "kforge::conv_output_nchw(w_k0_conv_y, filters, out_h * out_w, padded_filters, chain)");
    // the chain takes the output's sizes at run time: b[K] at ((e / (P Q)) % K)
    expect_has(s, "const kforge_k0_chain chain{t_b, t_y, batch, filters, out_h, out_w};");
    expect_has(s, "[this](int64_t e) -> int64_t { return ((e / (d2 * d3)) % d1); }");
    expect_has(s, "extern \"C\" int kforge_build_k0(");
    expect_has(s, "cutlass::conv::Mode::kCrossCorrelation");
    // the builder reads every size from the harness (dims sorted: C H K N Q? R S W ...)
    expect_has(s, "int64_t N = in->dims[");
    expect_has(s, "const int64_t K = in->dims[");
    EXPECT_EQ(s.find("int(17)"), std::string::npos);
    // the bias is applied by the chain, in the output kernel
    expect_has(s, "struct kforge_k0_chain");
}

// The evaluator lowers the small and check shapes with the full shape's configuration: every
// size is a param or a builder dim, so all shapes share one source (one CUTLASS compile).
TEST(ConvCodegen, OneSourceServesEveryShape) {
    const dsl::Program program = conv_program("tile 128x64x32 stages 3 math tf32x3");
    auto small = parse_problem(conv_problem_json("f32", "fp32_strict", 2, 17, 19), "<test>");
    auto full = parse_problem(conv_problem_json("f32", "fp32_strict", 16, 224, 160), "<test>");
    ASSERT_TRUE(small.ok() && full.ok());
    Lowered a = lower_ok(program, *small), b = lower_ok(program, *full);
    EXPECT_EQ(a.cuda_source, b.cuda_source);
    ASSERT_EQ(b.plan.kernels.size(), 4u);
    EXPECT_EQ(int_param(b.plan.kernels[3], "out_h"), 112);  // (224 + 2 - 2 - 1) / 2 + 1
    EXPECT_EQ(buffer(b.plan, "k0_conv_x")->shape, (std::vector<int64_t>{16, 224, 160, 4}));
}

TEST(ConvCodegen, MathModesPickTheirCutlassTypes) {
    struct Case {
        const char* math;
        const char* dtype;
        const char* policy;
        const char* op_class;
        const char* op;
        const char* element;
        int channels;  // padded C for C = 3
    } cases[] = {
        {"tf32", "f32", "tf32", "OpClassTensorOp", "cutlass::arch::OpMultiplyAdd,", "float", 4},
        {"f32_simt", "f32", "fp32_strict", "OpClassSimt", "cutlass::arch::OpMultiplyAdd,", "float",
         4},
        {"f16", "f16", "fp16", "OpClassTensorOp", "cutlass::arch::OpMultiplyAdd,",
         "cutlass::half_t", 8},
        {"bf16", "bf16", "bf16", "OpClassTensorOp", "cutlass::arch::OpMultiplyAdd,",
         "cutlass::bfloat16_t", 8},
        {"auto", "f32", "fp32_strict", "OpClassTensorOp", "OpMultiplyAddFastF32", "float", 4},
        {"auto", "f16", "fp16", "OpClassTensorOp", "cutlass::arch::OpMultiplyAdd,",
         "cutlass::half_t", 8},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.math) + " on " + c.dtype);
        const std::string tile = std::string(c.math) == "f32_simt" ? "tile 64x64x16" : "tile 128x64x32";
        Lowered out = lower_ok(conv_program(tile + " stages 3 math " + c.math),
                               conv_problem(c.dtype, c.policy));
        expect_has(out.cuda_source, std::string("cutlass::arch::") + c.op_class);
        expect_has(out.cuda_source, c.op);
        expect_has(out.cuda_source, std::string("using Element = ") + c.element + ";");
        const BufferDecl* bx = buffer(out.plan, "k0_conv_x");
        ASSERT_NE(bx, nullptr);
        EXPECT_EQ(bx->shape.back(), c.channels);
        EXPECT_EQ(bx->dtype, std::string(c.dtype) == "f32" ? DType::kF32
                             : std::string(c.dtype) == "f16" ? DType::kF16 : DType::kBF16);
        // the accumulators stay f32 whatever the operands
        EXPECT_EQ(buffer(out.plan, "k0_conv_y")->dtype, DType::kF32);
    }
}

TEST(ConvCodegen, HalfWorkspacesAreTypedInTheStagingSignature) {
    Lowered out = lower_ok(conv_program("tile 128x64x32 stages 3 math f16"),
                           conv_problem("f16", "fp16"));
    expect_has(out.cuda_source, "const __half* __restrict__ t_x, __half* __restrict__ w_k0_conv_x");
    expect_has(out.cuda_source, "float* __restrict__ w_k0_conv_y");
}

TEST(ConvCodegen, UnsupportedConfigurationsAreUserErrors) {
    const Problem f32 = conv_problem();
    EXPECT_NE(lower_error(conv_program("tile 128x64x32 math f16"), f32).find("math f16 on operands stored as f32"),
              std::string::npos);
    EXPECT_NE(lower_error(conv_program("tile 128x64x32 acc f16"), f32).find("acc f16"),
              std::string::npos);
    dsl::Program narrow = conv_program("tile 64x64x32");  // the parser takes tile M >= 64
    narrow.kernels[0].gemm.tile_m = 16;
    EXPECT_NE(lower_error(narrow, f32).find("2x2 warps"), std::string::npos);
    dsl::Program sm90 = conv_program("tile 128x64x32");
    sm90.kernels[0].gemm.schedule = dsl::Schedule::kCooperative;
    EXPECT_NE(lower_error(sm90, f32).find("schedule multistage, or its sm90 one, schedule tma_ws"),
              std::string::npos);
    EXPECT_NE(lower_error(conv_program("tile 64x64x32 math f32_simt"), f32).find("tile K 8 or 16"),
              std::string::npos);
}

// schedule tma_ws (codegen/lower_conv_sm90.cpp): the same four launches around CUTLASS 3.x's
// sm90 fprop. Under 3xTF32 x and w are staged in chunks of channels, each channel as three
// tf32 parts ([hi|lo|hi] and [hi|hi|lo]); the builder runs a chunk per part (beta 1 after the
// first); one source for every shape.
TEST(ConvCodegen, HopperFormStagesChunksOfHiLoChannels) {
    // C 96, 5x5: 32 channels a chunk (3 x 32 x 25 = 2400 products), 3 chunks
    const std::string json = R"({"name": "c", "dims": {"N": 4, "C": 96, "H": 27, "W": 27,
        "K": 250, "R": 5, "S": 5},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "h", "padding": 2,
                 "out_dims": ["P", "Q"]}, {"op": "relu", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
    const Problem problem = parsed(json);
    auto program = dsl::parse_program(
        "program p for \"c\"\nkernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) tile 128x128x32 "
        "schedule tma_ws math tf32x3 { relu; store y[N,K,P,Q] }\n", "p.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    ASSERT_TRUE(dsl::check_program(*program, problem, h200()).ok());
    Lowered out = lower_ok(*program, problem);
    const LaunchPlan& plan = out.plan;
    ASSERT_EQ(plan.kernels.size(), 4u);
    EXPECT_EQ(plan.kernels[0].symbol, "kforge_k0_conv_x");
    EXPECT_EQ(int_param(plan.kernels[0], "chunk_channels"), 32);
    EXPECT_EQ(int_param(plan.kernels[0], "chunks"), 3);
    EXPECT_EQ(plan.kernels[0].grid, (std::array<unsigned, 3>{23, 3, 4}));  // 729 positions, 96 ch
    EXPECT_EQ(plan.kernels[1].grid, (std::array<unsigned, 3>{1, 3, 252}));  // 25 taps, Kp images
    EXPECT_EQ(int_param(plan.kernels[1], "images_valid"), 250);
    EXPECT_EQ(plan.kernels[2].param_builder, "kforge_build_k0");
    EXPECT_EQ(buffer(plan, "k0_conv_x")->shape, (std::vector<int64_t>{3, 4, 27, 27, 96}));
    EXPECT_EQ(buffer(plan, "k0_conv_w")->shape, (std::vector<int64_t>{3, 252, 5, 5, 96}));
    EXPECT_EQ(buffer(plan, "k0_conv_y")->shape, (std::vector<int64_t>{4, 27, 27, 252}));
    const std::string& src = out.cuda_source;
    expect_has(src, "kforge::conv_channels_last_split<true, 2u>(t_x");  // x' = [hi|lo|hi]
    expect_has(src, "kforge::conv_channels_last_split<true, 4u>(t_w");  // w' = [hi|hi|lo]
    expect_has(src, "cutlass::conv::collective::CollectiveBuilder<\n    cutlass::arch::Sm90");
    expect_has(src, "using Element = cutlass::tfloat32_t;");
    expect_has(src, "constexpr int kPadH = 2, kPadW = 2;");
    expect_has(src, "const float beta = chunk == 0 ? 0.0f : 1.0f;");
    expect_has(src, "kforge::conv_split_of(C, R * S, kParts, kChannelMultiple, kChunkK)");
    // every size is a builder dim or a param: the small shape lowers to the same source
    auto small = parse_problem(json, "<test>");
    ASSERT_TRUE(small.ok());
    small->dims["N"] = 1, small->dims["H"] = 9, small->dims["W"] = 7;
    EXPECT_EQ(lower_ok(*program, *small).cuda_source, src);
    // f16 operands: one part, no chunks, no rounding
    const Problem half = conv_problem("f16", "fp16");
    Lowered h = lower_ok(conv_program("tile 128x64x64 schedule tma_ws math f16"), half);
    expect_has(h.cuda_source, "kforge::conv_channels_last_split<false, 0u>(t_x");
    expect_has(h.cuda_source, "using Element = cutlass::half_t;");
    EXPECT_EQ(buffer(h.plan, "k0_conv_x")->shape, (std::vector<int64_t>{1, 2, 17, 19, 8}));
    // what the Hopper form does not run is refused by name, also past the checker
    dsl::Program wide = conv_program("tile 128x64x32 schedule tma_ws math tf32x3");
    wide.kernels[0].gemm.tile_m = 256;
    EXPECT_NE(lower_error(wide, conv_problem()).find("tile M 256 with schedule tma_ws"),
              std::string::npos);
    dsl::Program k16 = conv_program("tile 128x64x32 schedule tma_ws math tf32x3");
    k16.kernels[0].gemm.tile_k = 16;
    EXPECT_NE(lower_error(k16, conv_problem()).find("tile K 16 with schedule tma_ws"),
              std::string::npos);
    // the knobs no conv kernel has are refused on this form too
    dsl::Program split = conv_program("tile 128x64x32 schedule tma_ws math tf32x3");
    split.kernels[0].gemm.split_k = 2;
    EXPECT_NE(lower_error(split, conv_problem()).find("splitk > 1"), std::string::npos);
    dsl::Program acc = conv_program("tile 128x64x32 schedule tma_ws math tf32x3");
    acc.kernels[0].gemm.acc = DType::kF16;
    EXPECT_NE(lower_error(acc, conv_problem()).find("acc f16"), std::string::npos);
}

// 3 groups of 3 filters: no power-of-two tile N of CUTLASS's group fprop is a multiple or a
// divisor of 3 filters per group, so the conv runs as one dense fprop on a block-diagonal filter
// (codegen/lower_conv.h group_fprop_tiles): the weight staged zero across groups, w [K, C/groups]
// read as 1 source channel per filter, 3 filters per group.
TEST(ConvCodegen, GroupedConvolutionWithThreeFiltersPerGroupRunsDenseOnABlockDiagonalFilter) {
    std::string json = conv_problem_json("f32", "fp32_strict");
    json.replace(json.find("\"stride\": 2"), 11, "\"stride\": 2, \"groups\": 3");
    // w [K, C/groups, R, S] = [9, 1, 3, 3] for 3 groups
    json.replace(json.find("\"K\": 10"), 7, "\"K\": 9");
    json.replace(json.find("\"shape\": [\"K\", \"C\", \"R\", \"S\"]"), 29,
                 "\"shape\": [\"K\", 1, \"R\", \"S\"]");
    auto problem = parse_problem(json, "<test>");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto program = dsl::parse_program(
        "program conv for \"conv_bias_relu\"\nkernel k0 = conv2d(x[N,C,H,W], w[K,1,R,S]) "
        "{ add b[K]; relu; store y[N,K,P,Q] }\n", "conv.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto low = lower_program(*program, *problem, LowerOptions{});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    EXPECT_NE(low->cuda_source.find("DefaultConv2dFprop<"), std::string::npos);
    EXPECT_EQ(low->cuda_source.find("GroupFprop"), std::string::npos);
    EXPECT_NE(low->cuda_source.find("kforge::conv_channels_last_block_diagonal(t_w"),
              std::string::npos);
    EXPECT_NE(low->cuda_source.find("/*groups=*/1"), std::string::npos);
    bool staged = false;
    for (const auto& l : low->plan.kernels) {
        if (l.symbol != "kforge_k0_conv_w") continue;
        staged = true;
        std::map<std::string, int64_t> v;
        for (const auto& p : l.params) v[p.name] = p.int_value;
        EXPECT_EQ(v["group_filters"], 1);   // C / groups source channels per filter
        EXPECT_EQ(v["group_channels"], 3);  // K / groups filters per group
        EXPECT_EQ(v["images_valid"], 9);    // one staged image per filter, K = 9,
        EXPECT_EQ(l.grid[2], 12u);          // padded with zero filters to Kp = 12
    }
    EXPECT_TRUE(staged);
}

TEST(ConvCodegen, KernelWithoutItsConvOpIsAnError) {
    auto program = dsl::parse_program(
        "program conv for \"conv_bias_relu\"\nkernel k0 = conv2d(w[K,C,R,S], x[N,C,H,W]) "
        "{ store y[N,K,P,Q] }\n", "conv.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    EXPECT_NE(lower_error(*program, conv_problem()).find("no conv2d op of the problem reads w and x"),
              std::string::npos);
}

}  // namespace
}  // namespace kforge::codegen
