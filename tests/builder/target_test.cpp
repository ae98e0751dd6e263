// Target (sol/target.h) and the one arch rule: a Target from device table entries, an unknown
// device, a device's reported SM count, and checker limits; no GPU, no toolchain.
#include <gtest/gtest.h>

#include "builder/build.h"
#include "sol/target.h"

namespace kforge {
namespace {

Target table_target(const char* key) {
    auto t = find_target(key);
    EXPECT_TRUE(t.ok()) << key;
    return t.ok() ? *t : Target{};
}

TEST(Target, ArchRuleAddsTheArchSpecificSuffixOnCc9Only) {
    // CUTLASS's sm90 kernels (wgmma, TMA multicast, setmaxnreg) need the arch-specific "a"
    // features, which exist on cc 9.0 only; other parts get the portable arch.
    EXPECT_EQ(cuda_arch(9, 0), "sm_90a");
    EXPECT_EQ(cuda_arch(8, 0), "sm_80");
    EXPECT_EQ(cuda_arch(8, 9), "sm_89");
    EXPECT_EQ(cuda_arch(10, 0), "sm_100");
    EXPECT_EQ(sm_name(9, 0), "sm_90");
    EXPECT_EQ(sm_name(10, 0), "sm_100");
}

TEST(Target, FromDeviceTableEntries) {
    Target h200 = table_target("h200");
    EXPECT_TRUE(h200.known);
    EXPECT_EQ(h200.device_key, "h200");
    EXPECT_EQ(h200.arch, "sm_90a");
    EXPECT_EQ(h200.cc_major, 9);
    EXPECT_EQ(h200.cc_minor, 0);
    EXPECT_EQ(h200.sm_count, 132);
    EXPECT_EQ(h200.l2_bytes, 60 * 1024 * 1024);
    EXPECT_EQ(h200.dram_bytes, 141LL * 1000 * 1000 * 1000);
    EXPECT_DOUBLE_EQ(h200.boost_clock_mhz, 1980.0);

    EXPECT_EQ(table_target("h100").arch, "sm_90a");  // an alias of h100-sxm
    EXPECT_EQ(table_target("h100-pcie").sm_count, 114);
    EXPECT_EQ(table_target("a100-sxm").arch, "sm_80");
    EXPECT_EQ(table_target("l40s").arch, "sm_89");
    // cc 10: the evaluator's rule (cc_major == 9 for "a") holds, not the seed's old >= 9.
    Target b200 = table_target("b200");
    EXPECT_EQ(b200.cc_major, 10);
    EXPECT_EQ(b200.arch, "sm_100");

    EXPECT_FALSE(find_target("no-such-gpu").ok());
}

TEST(Target, ForADeviceByKeyAndReportedSmCount) {
    Target unknown = target_for_device("no-such-gpu");
    EXPECT_FALSE(unknown.known);
    EXPECT_EQ(unknown.device_key, "no-such-gpu");
    EXPECT_EQ(unknown.arch, "sm_90a");  // the evaluator has always compiled sm_90a for it
    EXPECT_EQ(unknown.sm_count, 132);
    EXPECT_EQ(target_for_device("no-such-gpu", 100).sm_count, 100);
    Target mig = target_for_device("h100-sxm", 66);  // a device reporting fewer SMs
    EXPECT_TRUE(mig.known);
    EXPECT_EQ(mig.sm_count, 66);
    EXPECT_EQ(mig.arch, "sm_90a");
    EXPECT_EQ(target_for_device("a100", 0).arch, "sm_80");
}

TEST(Target, CheckLimitsAndBack) {
    dsl::DeviceLimits a100 = builder::check_limits(table_target("a100-sxm"));
    EXPECT_EQ(a100.name, "a100-sxm");
    EXPECT_EQ(a100.cc_major, 8);
    EXPECT_EQ(a100.cluster_max, 1);
    // the checker takes the table's figures for a known device, as it always has
    EXPECT_EQ(builder::check_limits(target_for_device("h200", 66)).sm_count, 132);
    // an unknown device: the default limits with its SM count
    dsl::DeviceLimits unknown = builder::check_limits(target_for_device("no-such-gpu", 100));
    EXPECT_EQ(unknown.sm_count, 100);
    EXPECT_EQ(unknown.cc_major, 9);

    dsl::DeviceLimits custom;  // limits the planner gets, e.g. an sm_80 variant of the default
    custom.cc_major = 8;
    custom.sm_count = 108;
    Target t = builder::target_of(custom);
    EXPECT_EQ(t.arch, "sm_80");
    EXPECT_EQ(t.sm_count, 108);
    EXPECT_EQ(builder::target_of(builder::check_limits(table_target("h200"))).arch, "sm_90a");
}

}  // namespace
}  // namespace kforge
