// The simulated device's time model and the SOL bounds count the same work (issue 31, item 5):
// both price a chain's statements with sol/op_cost.h's table on the device's arch, so
// problems/mish_softplus_chain_f32, which the model used to run in 263 us against a 320.5 us
// bound ("121.7% of SOL" with no flag), now costs at least its bound before any floor, and no
// built-in program on any device of the table models under its problem's speed of light.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dsl/parser.h"
#include "perfmodel/sim_model.h"
#include "problem/spec.h"
#include "sol/bounds.h"
#include "sol/device.h"
#include "sol/sol_share.h"

namespace kforge::perfmodel {
namespace {

namespace fs = std::filesystem;

const fs::path kProblems = fs::path(KFORGE_SOURCE_DIR) / "problems";

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Case {
    Problem problem;
    dsl::Program program;
};

Case builtin(const std::string& name) {
    auto p = load_problem((kProblems / (name + ".json")).string());
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    auto prog = dsl::parse_program(read(kProblems / (name + ".kf")), name + ".kf");
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    return Case{p.ok() ? *p : Problem{}, prog.ok() ? *prog : dsl::Program{}};
}

Ceilings ceilings_of(const std::string& device) {
    return effective_ceilings(*find_device(device), std::nullopt);
}

// The kernel itself (no floor) costs at least its bound: the SIMT pipe, 80 instructions per
// element on sm_90a, or the memory side where that binds; shown at most 100% of SOL.
TEST(SolConsistency, MishChainModelsAtItsBoundNotUnderIt) {
    const Case c = builtin("mish_softplus_chain_f32");
    for (const char* device : {"h200", "h100-sxm", "b200", "a100-sxm", "l40s"}) {
        const Ceilings ceil = ceilings_of(device);
        auto e = model_time(c.problem, c.program, ceil, find_device(device)->sm_count);
        ASSERT_TRUE(e.ok()) << e.error().to_string();
        auto b = compute_bounds(c.problem, ceil);
        ASSERT_TRUE(b.ok());
        EXPECT_DOUBLE_EQ(e->time_sol_ns, b->time_fused_s * 1e9) << device;
        EXPECT_FALSE(e->floored_at_sol) << device << ": the pricing itself must reach the bound";
        EXPECT_GE(e->time_kernels_ns, e->time_sol_ns) << device;
        // at most the map kernel's vector-width efficiency (0.86 at vec 4) above where memory
        // binds, plus a launch
        EXPECT_LE(e->time_kernels_ns, e->time_sol_ns / 0.86 + kSimLaunchOverheadNs + 1) << device;
        const SolShare share = sol_share(e->time_ns * 1e-9, b->time_fused_s);
        EXPECT_FALSE(share.under_bound);
        EXPECT_LE(sol_percent(share), 100.0);
        EXPECT_GT(sol_percent(share), 80.0) << device;
    }
    // the H200 figures of the issue: bound 320.5 us, model now just above it (was 263 us)
    const Ceilings h200 = ceilings_of("h200");
    auto e = model_time(c.problem, c.program, h200, 132);
    ASSERT_TRUE(e.ok());
    EXPECT_NEAR(e->time_sol_ns, 320.5e3, 0.5e3);
    EXPECT_GT(e->time_kernels_ns, 320.5e3);
    EXPECT_LT(e->time_kernels_ns, 1.02 * e->time_sol_ns);  // compute-bound: the same count
}

// Every built-in program on every device of the table: the model time is at or above the
// problem's T_sol on the same ceilings, and where the model had to be floored the unfloored
// kernels still count at least the bound's memory time (the floor covers only instruction
// counts a program may legitimately undercut, never a missing byte).
TEST(SolConsistency, NoBuiltinProgramModelsUnderItsBoundOnAnyDevice) {
    int checked = 0, floored = 0;
    for (const auto& entry : fs::directory_iterator(kProblems)) {
        if (entry.path().extension() != ".json") continue;
        const std::string name = entry.path().stem().string();
        if (!fs::exists(kProblems / (name + ".kf"))) continue;
        const Case c = builtin(name);
        for (const DeviceSpec& d : device_table()) {
            const Ceilings ceil = effective_ceilings(d, std::nullopt);
            auto e = model_time(c.problem, c.program, ceil, d.sm_count);
            ASSERT_TRUE(e.ok()) << name << " on " << d.name << ": " << e.error().to_string();
            auto b = compute_bounds(c.problem, ceil);
            ASSERT_TRUE(b.ok()) << name;
            EXPECT_GE(e->time_ns, b->time_fused_s * 1e9) << name << " on " << d.name;
            EXPECT_GE(e->time_kernels_ns, b->time_memory_fused_s * 1e9) << name << " on "
                                                                          << d.name;
            ++checked;
            if (e->floored_at_sol) {
                ++floored;
                ADD_FAILURE() << name << " on " << d.name << ": kernels "
                              << e->time_kernels_ns << " ns under T_sol " << e->time_sol_ns;
            }
        }
    }
    EXPECT_GE(checked, 30 * 7);
    EXPECT_EQ(floored, 0);
}

}  // namespace
}  // namespace kforge::perfmodel
