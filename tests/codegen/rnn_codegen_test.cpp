// rnn kernels (codegen/lower_rnn.cpp, kernels/rnn.cuh) through the pipeline without a GPU:
// - the planner's seed of an lstm / gru problem is one rnn kernel that prints and parses back;
// - its lowering: a projection and a persistent recurrent launch per layer, the workspaces;
// - NVRTC compiles the generated source for sm_90a;
// - the seed passes every gate of the evaluator on the simulated device;
// - a program that names the wrong state, too many CTAs or a chain beyond its store is refused
//   with a message naming the problem.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "device/device.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/kernel_checks.h"
#include "tests/reference/rnn_specs.h"

namespace kforge::codegen {
namespace {

using eval::testing::rnn_spec_json;

dsl::DeviceLimits h200() { return dsl::device_limits(find_device("h200").value()); }

struct Seeded {
    Problem problem;
    dsl::Program program;
};

Seeded seed(const std::string& json) {
    auto p = parse_problem(json, "rnn.json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    if (!p.ok()) return {};
    auto prog = planner::seed_program(*p, h200());
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    if (!prog.ok()) return {*p, {}};
    return {*p, *prog};
}

const std::string kLstm = rnn_spec_json("lstm2", "lstm", 2, false, false, true, "output");
const std::string kGru = rnn_spec_json("gru_bi", "gru", 2, true, true, true, "h_n");

TEST(RnnCodegen, SeedIsOneRnnKernelThatRoundTrips) {
    Seeded s = seed(kLstm);
    ASSERT_EQ(s.program.kernels.size(), 1u);
    const std::string text = dsl::print_canonical(s.program);
    EXPECT_NE(text.find("kernel k0 = rnn lstm(x[T,B,I], h0[2,B,H], c0[2,B,H]) units 1 threads 64\n    { store Y[T,B,H] }"),
              std::string::npos) << text;
    auto again = dsl::parse_program(text, "p.kf");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(dsl::print_canonical(*again), text);
}

TEST(RnnCodegen, LowersToAProjectionAndARecurrentLaunchPerLayer) {
    Seeded s = seed(kGru);
    ASSERT_EQ(s.program.kernels.size(), 1u);
    s.program.kernels[0].rnn.units = 4;
    auto low = lower_program(s.program, s.problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    ASSERT_EQ(low->plan.kernels.size(), 4u);
    EXPECT_EQ(low->plan.kernels[0].symbol, "kforge_k0_proj_l0");
    EXPECT_EQ(low->plan.kernels[1].symbol, "kforge_k0_rec_l0");
    EXPECT_EQ(low->plan.kernels[0].grid[2], 2u);  // one z-slice per direction
    EXPECT_EQ(low->plan.kernels[1].grid[0], 4u);  // 2 directions x ceil(6 / 4)
    EXPECT_EQ(low->plan.kernels[1].smem_bytes,
              unsigned(rnn_recurrent_smem_bytes(false, 3, 6, 4)));
    bool sync_zeroed = false;
    for (const BufferDecl& b : low->plan.buffers)
        if (b.name == "k0_sync") sync_zeroed = b.zero_init && b.dtype == DType::kI32;
    EXPECT_TRUE(sync_zeroed);
    // h_n from every layer's last step: layer 1 writes the slots after layer 0's two
    EXPECT_NE(low->cuda_source.find("t_Y + 36LL"), std::string::npos) << low->cuda_source;
}

TEST(RnnCodegen, NvrtcCompilesLstmAndGru) {
    for (const std::string& json : {kLstm, kGru}) {
        Seeded s = seed(json);
        ASSERT_FALSE(s.program.kernels.empty());
        auto low = lower_program(s.program, s.problem, {});
        ASSERT_TRUE(low.ok()) << low.error().to_string();
        testing::expect_nvrtc_compiles(low->cuda_source);
    }
}

TEST(RnnSim, SeedsPassEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    for (const std::string& json : {kLstm, kGru}) {
        Seeded s = seed(json);
        ASSERT_FALSE(s.program.kernels.empty());
        testing::expect_full_tier_passes(**device, s.problem, s.program);
    }
}

std::string check_errors(const Problem& problem, const std::string& text) {
    auto prog = dsl::parse_program(text, "p.kf");
    if (!prog.ok()) return prog.error().to_string();
    dsl::CheckResult r = dsl::check_program(*prog, problem, h200(), {});
    std::string all;
    for (const auto& e : r.errors) all += e.to_string() + "\n";
    return all;
}

TEST(RnnCheck, WrongProgramsAreRefusedByName) {
    Seeded s = seed(kLstm);
    const std::string head = "program p for \"lstm2\"\nkernel k0 = rnn ";
    std::string e = check_errors(s.problem, head + "lstm(x[T,B,I], c0[2,B,H], h0[2,B,H]) { store Y[T,B,H] }");
    EXPECT_NE(e.find("no lstm op of the problem reads x, c0, h0 as x, h0, c0"), std::string::npos) << e;
    e = check_errors(s.problem, head + "gru(x[T,B,I], h0[2,B,H]) { store Y[T,B,H] }");
    EXPECT_NE(e.find("no gru op of the problem"), std::string::npos) << e;
    e = check_errors(s.problem, head + "lstm(x[T,B,I], h0[2,B,H], c0[2,B,H]) { relu; store Y[T,B,H] }");
    EXPECT_NE(e.find("an rnn kernel's chain is one store of the op's result"), std::string::npos) << e;
    e = check_errors(s.problem, head + "lstm(x[T,B,I], h0[2,B,H], c0[2,B,H]) units 0 { store Y[T,B,H] }");
    EXPECT_NE(e.find("units"), std::string::npos) << e;
    e = check_errors(s.problem, head + "lst(x[T,B,I], h0[2,B,H]) { store Y[T,B,H] }");
    EXPECT_NE(e.find("a recurrent op (lstm, gru)"), std::string::npos) << e;
    // 2 directions x 512 hidden units over units 1 would need 1024 resident CTAs
    auto big = parse_problem(rnn_spec_json("big", "gru", 1, true, false, true, "output", 2, 1, 4, 512), "b.json");
    ASSERT_TRUE(big.ok());
    e = check_errors(*big, "program p for \"big\"\nkernel k0 = rnn gru(x[T,B,I], h0[2,B,H]) units 1 { store Y[T,B,1024] }");
    EXPECT_NE(e.find("1024 recurrent CTAs"), std::string::npos) << e;
}

}  // namespace
}  // namespace kforge::codegen
