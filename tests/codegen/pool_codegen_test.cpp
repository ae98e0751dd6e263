// Pool kernels lowered (codegen/lower_pool.cpp) and run through the pipeline without a GPU:
// - the lowered source: one launch of kernels/pool.cuh with the op's geometry baked in (lower
//   ranks padded with size-1 axes), the knobs as template arguments, the chain after the pool;
// - NVRTC compiles the generated source for sm_90a (1-d, 2-d, 3-d, max / avg / adaptive, bf16),
//   about 2 s a compile on a loaded 2-core machine;
// - a pooling problem's seed passes every gate of the evaluator on the simulated device (the
//   checker, the lowering, the fp64 interpreter's outputs, the analytic time model).
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "device/device.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/kernel_checks.h"

namespace kforge::codegen {
namespace {

dsl::DeviceLimits h200() { return dsl::device_limits(find_device("h200").value()); }

// x [N, C, *] -> `op` (attrs) -> h -> relu -> y
std::string pool_spec(const std::string& op, const std::string& x_shape, const std::string& attrs,
                      const std::string& dtype = "f32") {
    const std::string policy = dtype == "bf16" ? "bf16" : "fp32_strict";
    return R"({"name": "pool_cg", "dims": {"N": 2, "C": 24, "D": 9, "H": 30, "W": 22},
        "inputs": {"x": {"shape": )" + x_shape + R"(, "dtype": ")" + dtype + R"("}},
        "graph": [{"op": ")" + op + R"(", "inputs": ["x"], "output": "h", )" + attrs + R"(},
                  {"op": "relu", "inputs": ["h"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": ")" + policy + R"("}})";
}

struct Case {
    const char* op;
    const char* shape;
    const char* attrs;
    const char* dtype;
};

const Case kCases[] = {
    {"max_pool", R"(["N", "C", "W"])", R"("kernel_size": 4, "stride": 3, "padding": 2, "dilation": 2, "ceil_mode": true)", "f32"},
    {"avg_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": [3, 2], "stride": 2, "padding": 1, "ceil_mode": true, "count_include_pad": false)", "f32"},
    {"avg_pool", R"(["N", "C", "D", "H", "W"])", R"("kernel_size": 3, "stride": [1, 2, 2], "padding": 1, "divisor_override": 5)", "bf16"},
    {"adaptive_max_pool", R"(["N", "C", "H", "W"])", R"("output_size": [7, 5])", "f32"},
    {"adaptive_avg_pool", R"(["N", "C", "D", "H", "W"])", R"("output_size": 1)", "f32"},
};

struct Seeded {
    Problem problem;
    dsl::Program program;
};

Seeded seed(const Case& c) {
    auto p = parse_problem(pool_spec(c.op, c.shape, c.attrs, c.dtype), "pool.json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    if (!p.ok()) return {};
    auto prog = planner::seed_program(*p, h200());
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    return {*p, prog.ok() ? *prog : dsl::Program{}};
}

TEST(PoolCodegen, OneLaunchWithTheGeometryBakedIn) {
    auto p = parse_problem(pool_spec("max_pool", R"(["N", "C", "H", "W"])",
                                     R"("kernel_size": 3, "stride": 2, "padding": 1)"),
                           "pool.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto prog = dsl::parse_program(R"(program p for "pool_cg"
kernel k0 = pool max(x[N,C,H,W]) threads 128 items 4
    { relu; store y[N,C,Ho,Wo] }
)", "p.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    auto low = lower_program(*prog, *p, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const std::string& src = low->cuda_source;
    EXPECT_NE(src.find("#include \"kernels/pool.cuh\""), std::string::npos);
    // max pool, lanes 1: a thread per tile of rows x items outputs (1 x 4), scalar loads
    EXPECT_NE(src.find("kforge::pool_tiles<kforge_k0_pool, 128, 4, 1, 1>(t_x, int(planes), chain)"),
              std::string::npos) << src;
    EXPECT_NE(src.find("static constexpr int kKind = 0;"), std::string::npos) << src;
    // the padded leading axis, then H: 30 -> 15, W: 22 -> 11 (kernel 3, stride 2, padding 1)
    EXPECT_NE(src.find("kforge::PoolAxis{1LL, 1LL, 1LL, 1LL, 0LL, 1LL}"), std::string::npos) << src;
    EXPECT_NE(src.find("kforge::PoolAxis{30LL, 15LL, 3LL, 2LL, 1LL, 1LL}"), std::string::npos) << src;
    EXPECT_NE(src.find("kforge::PoolAxis{22LL, 11LL, 3LL, 2LL, 1LL, 1LL}"), std::string::npos) << src;
    EXPECT_FALSE(low->uses_cutlass);
    ASSERT_EQ(low->plan.kernels.size(), 1u);
    const auto& k = low->plan.kernels[0];
    EXPECT_EQ(k.block[0], 128u);
    // 2*24 planes * 15 rows * ceil(11 / 4) groups = 2160 threads: 17 blocks of 128
    EXPECT_EQ(k.grid[0], 17u);
}

TEST(PoolCodegen, NvrtcCompilesEveryForm) {
    // max (1-d, dilated), avg (3-d, bf16), global adaptive avg (a warp per output: lanes 32)
    for (const Case& c : {kCases[0], kCases[2], kCases[4]}) {
        SCOPED_TRACE(std::string(c.op) + " " + c.shape + " " + c.dtype);
        Seeded s = seed(c);
        ASSERT_FALSE(s.program.kernels.empty());
        auto low = lower_program(s.program, s.problem, {});
        ASSERT_TRUE(low.ok()) << low.error().to_string();
        if (std::string(c.op) == "adaptive_avg_pool")  // 9*30*22 taps an output
            EXPECT_NE(low->cuda_source.find(", 32>(t_x"), std::string::npos) << low->cuda_source;
        testing::expect_nvrtc_compiles(low->cuda_source);
    }
}

// The seeds of KernelBench level 1's pooling forms (41-46; rows of 48 allow float4 loads):
// pool_tiles with the aligned vector body and its scalar fallback, compiled with NVRTC.
TEST(PoolCodegen, NvrtcCompilesTheTileForms) {
    struct Form {
        const char* op;
        const char* shape;
        const char* attrs;
        const char* call;
    };
    const Form forms[] = {
        {"max_pool", R"(["N", "C", "W"])", R"("kernel_size": 8, "stride": 1, "padding": 4, "dilation": 3)", "256, 4, 1, 4>"},
        {"max_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 4, "stride": 1, "padding": 1)", "256, 4, 4, 4>"},
        {"max_pool", R"(["N", "C", "D", "H", "W"])", R"("kernel_size": 3, "stride": 2, "padding": 1, "dilation": 3)", "256, 2, 1, 4>"},
        {"avg_pool", R"(["N", "C", "W"])", R"("kernel_size": 8, "stride": 1, "padding": 4)", "256, 4, 1, 4>"},
        {"avg_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 11)", "256, 1, 1, 1>"},
        {"avg_pool", R"(["N", "C", "D", "H", "W"])", R"("kernel_size": 3, "stride": 2, "padding": 1)", "256, 2, 4, 4>"},
    };
    for (const Form& f : forms) {
        SCOPED_TRACE(std::string(f.op) + " " + f.shape + " " + f.attrs);
        const std::string spec = std::string(R"({"name": "pool_cg", "dims": {"N": 2, "C": 4, "D": 12, "H": 40, "W": 48},
            "inputs": {"x": {"shape": )") + f.shape + R"(, "dtype": "f32"}},
            "graph": [{"op": ")" + f.op + R"(", "inputs": ["x"], "output": "y", )" + f.attrs + R"(}],
            "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
        auto p = parse_problem(spec, "pool.json");
        ASSERT_TRUE(p.ok()) << p.error().to_string();
        auto prog = planner::seed_program(*p, h200());
        ASSERT_TRUE(prog.ok()) << prog.error().to_string();
        auto low = lower_program(*prog, *p, {});
        ASSERT_TRUE(low.ok()) << low.error().to_string();
        EXPECT_NE(low->cuda_source.find(std::string("pool_tiles<kforge_k0_pool, ") + f.call),
                  std::string::npos) << low->cuda_source;
        testing::expect_nvrtc_compiles(low->cuda_source);
    }
}

// vec must divide the row and the tile's step along it: a user error naming both.
TEST(PoolCodegen, VecThatSplitsAVectorIsRefused) {
    auto p = parse_problem(pool_spec("max_pool", R"(["N", "C", "H", "W"])",
                                     R"("kernel_size": 3, "stride": 1, "padding": 1)"),
                           "pool.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    // W 22: not a multiple of 4
    auto prog = dsl::parse_program(R"(program p for "pool_cg"
kernel k0 = pool max(x[N,C,H,W]) threads 128 items 4 rows 2 vec 4
    { relu; store y[N,C,Ho,Wo] }
)", "p.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    auto low = lower_program(*prog, *p, {});
    ASSERT_FALSE(low.ok());
    EXPECT_NE(low.error().to_string().find("vec 4 needs the row length (22)"), std::string::npos)
        << low.error().to_string();
}

TEST(PoolSim, SeedsPassEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    for (const Case& c : kCases) {
        SCOPED_TRACE(std::string(c.op) + " " + c.shape + " " + c.dtype);
        Seeded s = seed(c);
        ASSERT_FALSE(s.program.kernels.empty());
        eval::EvalReport rep = testing::expect_full_tier_passes(**device, s.problem, s.program);
        EXPECT_GT(rep.stats.median_ns, 0);
    }
}

}  // namespace
}  // namespace kforge::codegen
