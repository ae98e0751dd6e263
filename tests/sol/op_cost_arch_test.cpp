// The instruction table per arch (sol/op_cost.h), the SOL share shown everywhere
// (sol/sol_share.h) and the anti-gaming verdict on a time (sol/bounds.h judge_time): issue 31,
// item 5. A bound reads its device's arch column, so it differs between archs where the SASS
// count does; a time under the bound is flagged and never shown as more than 100% of SOL.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "problem/spec.h"
#include "sol/bounds.h"
#include "sol/op_cost.h"
#include "sol/sol_share.h"
#include "sol/target.h"

namespace kforge {
namespace {

Problem builtin(const std::string& name) {
    auto p = load_problem(
        (std::filesystem::path(KFORGE_SOURCE_DIR) / "problems" / (name + ".json")).string());
    EXPECT_TRUE(p.ok()) << p.error().to_string();
    return *p;
}

Ceilings ceilings_of(const std::string& device) {
    return effective_ceilings(*find_device(device), std::nullopt);
}

// Each device of the table reads a column counted on its own arch (none falls back).
TEST(OpCostArch, EveryDeviceOfTheTableHasItsOwnColumn) {
    std::set<std::string> archs;
    for (const DeviceSpec& d : device_table()) {
        const Ceilings c = effective_ceilings(d, std::nullopt);
        EXPECT_EQ(c.arch, cuda_arch(d.cc_major, d.cc_minor)) << d.name;
        EXPECT_EQ(counted_arch(c.arch), c.arch) << d.name << ": count its column";
        archs.insert(c.arch);
    }
    EXPECT_EQ(archs, (std::set<std::string>{"sm_80", "sm_89", "sm_90a", "sm_100"}));
    EXPECT_EQ(counted_arch("sm_75"), "sm_90a");  // an arch never counted: the first column
    EXPECT_EQ(counted_arch(""), "sm_90a");
}

// problems/mish_softplus_chain_f32 per element (add, mish, softplus beta 2, mul): 80 SIMT
// instructions on sm_80, sm_89 and sm_90a, 89 on sm_100 (mish 47, softplus 40), 4 MUFU
// everywhere; the bound follows the column.
TEST(OpCostArch, MishChainBoundDiffersOnBlackwellWhereTheCountDoes) {
    const Problem p = builtin("mish_softplus_chain_f32");
    const double n = 16384.0 * 8192.0;
    auto per_element = [&](std::string_view arch) {
        double simt = 0, sfu = 0;
        for (const Op& op : p.ops) {
            auto c = op_cost(op, arch);
            EXPECT_TRUE(c.has_value());
            simt += c->simt_per_element;
            sfu += c->sfu_per_element;
        }
        return std::pair{simt, sfu};
    };
    EXPECT_EQ(per_element("sm_90a"), (std::pair{80.0, 4.0}));
    EXPECT_EQ(per_element("sm_80"), (std::pair{80.0, 4.0}));
    EXPECT_EQ(per_element("sm_89"), (std::pair{80.0, 4.0}));
    EXPECT_EQ(per_element("sm_100"), (std::pair{89.0, 4.0}));

    auto b200 = compute_bounds(p, ceilings_of("b200"));
    ASSERT_TRUE(b200.ok());
    EXPECT_EQ(b200->arch, "sm_100");
    EXPECT_DOUBLE_EQ(b200->instructions_simt, 89.0 * n);
    EXPECT_NEAR(b200->time_simt_s, 2.0 * 89.0 * n / 75e12, 1e-12);
    // the same ceilings read through the sm_90a column count 80: the arch alone moves it
    Ceilings as_hopper = ceilings_of("b200");
    as_hopper.arch = "sm_90a";
    auto hopper_count = compute_bounds(p, as_hopper);
    ASSERT_TRUE(hopper_count.ok());
    EXPECT_DOUBLE_EQ(hopper_count->instructions_simt, 80.0 * n);
    EXPECT_GT(b200->time_fused_s, hopper_count->time_fused_s);
}

TEST(OpCostArch, ColumnsDifferOnlyWhereTheSassDoes) {
    Op softplus{};
    softplus.kind = OpKind::kSoftplus;
    softplus.attrs.beta = 3.0;  // no power of two
    EXPECT_DOUBLE_EQ(op_cost(softplus, "sm_90a")->simt_per_element, 42.5);
    EXPECT_DOUBLE_EQ(op_cost(softplus, "sm_89")->simt_per_element, 41.5);
    EXPECT_DOUBLE_EQ(op_cost(softplus, "sm_100")->simt_per_element, 46.0);
    EXPECT_DOUBLE_EQ(divide_by_number_cost(3.0, "sm_80").simt_per_element, 8.0);
    EXPECT_DOUBLE_EQ(divide_by_number_cost(3.0, "sm_90a").simt_per_element, 7.0);
    EXPECT_DOUBLE_EQ(divide_by_number_cost(-4.0, "sm_80").simt_per_element, 1.0);  // an FMUL
    Op exp{};
    exp.kind = OpKind::kExp;
    for (const char* arch : {"sm_80", "sm_89", "sm_90a", "sm_100"}) {
        EXPECT_DOUBLE_EQ(op_cost(exp, arch)->sfu_per_element, 1.0) << arch;
        EXPECT_DOUBLE_EQ(op_cost(exp, arch)->simt_per_element, 7.0) << arch;
    }
}

// The run of the issue: 263 us against a 320.5 us bound printed "121.7% of SOL".
TEST(SolShare, UnderTheBoundIsShownAsOneHundredPercentAndFlagged) {
    const SolShare s = sol_share(263e-6, 320.5e-6);
    EXPECT_TRUE(s.known);
    EXPECT_TRUE(s.under_bound);
    EXPECT_DOUBLE_EQ(sol_percent(s), 100.0);
    EXPECT_NEAR(s.time_over_sol, 263.0 / 320.5, 1e-12);
    const std::string text = format_sol_share(s);
    EXPECT_EQ(text.rfind("100.0% of SOL (flagged: under the SOL bound", 0), 0u) << text;
    EXPECT_EQ(text.find("121"), std::string::npos) << text;

    const SolShare over = sol_share(400e-6, 320.5e-6);
    EXPECT_FALSE(over.under_bound);
    EXPECT_NEAR(sol_percent(over), 80.125, 1e-9);
    EXPECT_EQ(format_sol_share(over), "80.1% of SOL");
    EXPECT_EQ(format_sol_share(sol_share(320.5e-6, 320.5e-6), 0), "100% of SOL");
    EXPECT_EQ(format_sol_share(sol_share(0.0, 1e-3)), "n/a");
    EXPECT_EQ(sol_percent(sol_share(1e-3, 0.0)), 0.0);
}

// One verdict for any time, measured or modelled: under T_sol flagged, under the gaming
// threshold implausible.
TEST(SolShare, JudgeTimeFlagsEveryTimeUnderTheBound) {
    auto b = compute_bounds(builtin("mish_softplus_chain_f32"), ceilings_of("h200"));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(judge_time(b->time_fused_s * 1.01, *b), SolVerdict::kPlausible);
    EXPECT_EQ(judge_time(b->time_fused_s, *b), SolVerdict::kPlausible);
    EXPECT_EQ(judge_time(263e-6, *b), SolVerdict::kUnderBound);  // the time
    EXPECT_EQ(judge_time(b->time_fused_s * 0.999, *b), SolVerdict::kUnderBound);
    EXPECT_EQ(judge_time(b->gaming_threshold_s * 0.99, *b), SolVerdict::kBelowGamingThreshold);
    EXPECT_EQ(to_string(SolVerdict::kUnderBound), "under_sol_bound");
}

}  // namespace
}  // namespace kforge
