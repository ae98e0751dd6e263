// The fusion planner and the knob moves on pooling problems: a pool op is one pool kernel whose
// chain absorbs the element-wise ops after it; a conv2d followed by a pool plans as the conv2d
// kernel, then the pool kernel reading the conv's stored output; each seed's canonical text
// parses, checks and lowers; the search's knob moves reach the pool kernel's knobs and stay legal.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "sol/device.h"
#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::h200;
using seedtest::problem_of;
using seedtest::seed_checked;

// x [N, C, *spatial] -> pool `op` with `attrs` -> h, then `ops` (writing y).
std::string pool_spec(const std::string& op, const std::string& x_shape, const std::string& attrs,
                      const std::string& ops = "", const std::string& dtype = "f32") {
    const std::string policy = dtype == "bf16" ? "bf16" : "fp32_strict";
    return R"({"name": "pool_seed", "dims": {"N": 8, "C": 64, "D": 12, "H": 56, "W": 48},
        "inputs": {"x": {"shape": )" + x_shape + R"(, "dtype": ")" + dtype + R"("},
                   "b": {"shape": ["C", 1, 1], "dtype": ")" + dtype + R"("}},
        "graph": [{"op": ")" + op + R"(", "inputs": ["x"], "output": )" +
           (ops.empty() ? R"("y")" : R"("h")") + ", " + attrs + "}" + ops + R"(],
        "outputs": ["y"], "precision": {"policy": ")" + policy + R"("}})";
}

TEST(PoolSeed, OneKernelPerPoolWithItsConsumersInTheChain) {
    const std::string x4 = R"(["N", "C", "H", "W"])";
    std::string t = seed_checked(problem_of(pool_spec(
        "max_pool", x4, R"("kernel_size": 3, "stride": 2, "padding": 1)",
        R"(, {"op": "relu", "inputs": ["h"], "output": "r"},
           {"op": "add", "inputs": ["r", "b"], "output": "y"})")));
    EXPECT_NE(t.find("kernel k0 = pool max(x[N,C,H,W]) threads 256"), std::string::npos) << t;
    EXPECT_NE(t.find("{ relu; add b[C,1,1]; store y[N,C,Ho,Wo] }"), std::string::npos) << t;
    EXPECT_EQ(t.find("kernel k1"), std::string::npos) << t;
    // 1-d, 3-d, adaptive, bf16
    t = seed_checked(problem_of(pool_spec("avg_pool", R"(["N", "C", "W"])",
                                       R"("kernel_size": 4, "padding": 2, "ceil_mode": true, "count_include_pad": false)")));
    EXPECT_NE(t.find("pool avg(x[N,C,W])"), std::string::npos) << t;
    t = seed_checked(problem_of(pool_spec("max_pool", R"(["N", "C", "D", "H", "W"])",
                                       R"("kernel_size": [2, 3, 3], "dilation": 2)")));
    EXPECT_NE(t.find("pool max(x[N,C,D,H,W])"), std::string::npos) << t;
    t = seed_checked(problem_of(pool_spec("adaptive_avg_pool", x4, R"("output_size": 1)", "", "bf16")));
    // global pooling, 56 x 48 taps an output: a warp splits each window
    EXPECT_NE(t.find("pool adaptive_avg(x[N,C,H,W]) threads 256 items 1 rows 1 vec 1 lanes 32"), std::string::npos) << t;
    EXPECT_NE(t.find("store y[N,C,1,1]"), std::string::npos) << t;
}

TEST(PoolSeed, ConvThenPoolPlansAsConvKernelThenPoolKernel) {
    const std::string spec = R"({"name": "conv_pool", "dims": {"N": 8, "C": 16, "H": 34, "W": 34, "K": 32},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "C", 3, 3], "dtype": "f32", "param": true},
                   "b": {"shape": ["K"], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "c"},
                  {"op": "avg_pool", "inputs": ["c"], "output": "p", "kernel_size": 2},
                  {"op": "tanh", "inputs": ["p"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})";
    const std::string t = seed_checked(problem_of(spec));
    const size_t conv = t.find("kernel k0 = conv2d(x[N,C,H,W], w[K,C,3,3])");
    const size_t pool = t.find("kernel k1 = pool avg(c[N,K,Ho,Wo])");
    ASSERT_NE(conv, std::string::npos) << t;
    ASSERT_NE(pool, std::string::npos) << t;
    EXPECT_NE(t.find("{ add b[K]; store c[N,K,Ho,Wo] }"), std::string::npos) << t;
    EXPECT_NE(t.find("{ tanh; store y[N,K,Hoo,Woo] }"), std::string::npos) << t;
}

TEST(PoolSeed, KnobMovesReachThePoolKernel) {
    const Problem p = problem_of(pool_spec("max_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 2)"));
    auto seed = planner::seed_program(p, h200());
    ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    const auto moves = search::knob_neighbours(*seed);
    std::set<std::string> knobs, legal;
    for (const auto& m : moves) {
        knobs.insert(m.knob);
        EXPECT_EQ(m.program.kernels[0].kind, dsl::KernelKind::kPool) << m.move;
        auto again = dsl::parse_program(dsl::print_canonical(m.program), "m.kf");
        ASSERT_TRUE(again.ok()) << m.move << ": " << again.error().to_string();
        EXPECT_EQ(dsl::strip_locations(*again), m.program) << m.move;
        if (dsl::check_program(m.program, p, h200()).ok() &&
            codegen::lower_program(m.program, p, {}).ok())
            legal.insert(m.move);
    }
    EXPECT_EQ(knobs, (std::set<std::string>{"k0 threads", "k0 items", "k0 lanes", "k0 rows",
                                            "k0 vec"}));
    // W 48, stride 2: float4 loads, 2 outputs a thread; windows apart along H: 1 row
    EXPECT_EQ(seed->kernels[0].pool.vec, 4);
    EXPECT_EQ(seed->kernels[0].pool.items, 2);
    EXPECT_EQ(seed->kernels[0].pool.rows, 1);
    EXPECT_TRUE(legal.count("k0 vec 4 -> 2"));
    EXPECT_TRUE(legal.count("k0 rows 1 -> 2"));
    // lanes split a window: the move resets the thread's tile (rows, vec) to 1
    EXPECT_TRUE(legal.count("k0 lanes 1 -> 2"));
    for (const auto& m : moves)
        if (m.move == "k0 lanes 1 -> 2") EXPECT_EQ(m.program.kernels[0].pool.vec, 1);
    const int items = seed->kernels[0].pool.items;
    EXPECT_TRUE(legal.count("k0 items " + std::to_string(items) + " -> " +
                            std::to_string(items * 2)))
        << "moves: " << moves.size();
    EXPECT_TRUE(legal.count("k0 threads 256 -> 512") || legal.count("k0 threads 256 -> 288"));
    search::Rng rng{3};
    for (int i = 0; i < 10; ++i) {
        const auto m = search::random_kernel_knobs(*seed, 0, rng);
        EXPECT_TRUE(dsl::check_program(m.program, p, h200()).ok()) << dsl::print_canonical(m.program);
    }
}

// The tile knobs the seed picks for KernelBench level 1's pooling forms (41-46): float4 loads
// where the row length allows, items so a thread's step along the row is a whole vector, rows
// where windows overlap along the next axis; windows far apart: scalar loads, 1 output.
TEST(PoolSeed, TileKnobsFollowTheGeometry) {
    struct Form {
        const char* shape;
        const char* attrs;
        int items, rows, vec;
    };
    const Form forms[] = {
        {R"(["N", "C", "W"])", R"("kernel_size": 8, "stride": 1, "padding": 4, "dilation": 3)", 4, 1, 4},
        {R"(["N", "C", "H", "W"])", R"("kernel_size": 4, "stride": 1, "padding": 1)", 4, 4, 4},
        {R"(["N", "C", "D", "H", "W"])", R"("kernel_size": 3, "stride": 2, "padding": 1, "dilation": 3)", 2, 1, 4},
        {R"(["N", "C", "H", "W"])", R"("kernel_size": 11)", 1, 1, 1},
        {R"(["N", "C", "D", "H", "W"])", R"("kernel_size": 3, "stride": 2, "padding": 1)", 2, 4, 4},
    };
    for (const Form& f : forms) {
        SCOPED_TRACE(std::string(f.shape) + " " + f.attrs);
        const Problem p = problem_of(pool_spec("max_pool", f.shape, f.attrs));
        auto seed = planner::seed_program(p, h200());
        ASSERT_TRUE(seed.ok()) << seed.error().to_string();
        const dsl::PoolConfig& c = seed->kernels[0].pool;
        EXPECT_EQ(c.lanes, 1);
        EXPECT_EQ(c.items, f.items);
        EXPECT_EQ(c.rows, f.rows);
        EXPECT_EQ(c.vec, f.vec);
        EXPECT_TRUE(codegen::lower_program(*seed, p, {}).ok());
    }
    // adaptive windows keep the window-splitting kernel
    const Problem g = problem_of(pool_spec("adaptive_avg_pool", R"(["N", "C", "H", "W"])", R"("output_size": 1)"));
    auto seed = planner::seed_program(g, h200());
    ASSERT_TRUE(seed.ok()) << seed.error().to_string();
    EXPECT_EQ(seed->kernels[0].pool.lanes, 32);
    EXPECT_EQ(seed->kernels[0].pool.vec, 1);
}

}  // namespace
}  // namespace kforge
