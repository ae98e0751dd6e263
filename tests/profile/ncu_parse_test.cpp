// The raw-page parser on a hand-made fixture in ncu's exact format, and on malformed input.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "profile/ncu_parse.h"

namespace kforge::profile {
namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(KFORGE_TEST_DATA_DIR) + "/fixtures/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(NcuParse, ReadsEveryRecordSkippingProfilerAndProgramLines) {
    auto ks = parse_ncu_csv(fixture("synthetic_flawed.csv"));
    ASSERT_TRUE(ks.ok()) << ks.error().to_string();
    ASSERT_EQ(ks->size(), 7u);
    const KernelProfile& k = ks->front();
    EXPECT_EQ(k.id, 0);
    EXPECT_EQ(k.name, "copy_streaming(const float4 *, float4 *, long)");
    EXPECT_EQ(k.block[0], 256);
    EXPECT_EQ(k.grid[0], 65536);
    EXPECT_EQ(k.threads(), int64_t{256} * 65536);
    EXPECT_EQ(ks->at(5).block[0], 32);
}

TEST(NcuParse, NormalisesUnitsAndThousandsSeparators) {
    auto ks = parse_ncu_csv(fixture("synthetic_flawed.csv"));
    ASSERT_TRUE(ks.ok());
    const KernelProfile& k = ks->front();
    EXPECT_DOUBLE_EQ(*k.metric("gpu__time_duration.sum"), 1402.30e3);      // usecond -> ns
    EXPECT_DOUBLE_EQ(*k.metric("dram__bytes_read.sum"), 536.87e6);         // Mbyte -> byte
    EXPECT_DOUBLE_EQ(*k.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 8388608);
    EXPECT_DOUBLE_EQ(*k.metric("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 91.5);
    EXPECT_FALSE(k.metric("not_collected__metric.sum").has_value());
}

TEST(NcuParse, UnitTable) {
    EXPECT_DOUBLE_EQ(normalise_unit(2, "msecond"), 2e6);
    EXPECT_DOUBLE_EQ(normalise_unit(3, "Kbyte"), 3e3);
    EXPECT_DOUBLE_EQ(normalise_unit(1.5, "Gbyte/second"), 1.5e9);
    EXPECT_DOUBLE_EQ(normalise_unit(7, "%"), 7);
    EXPECT_DOUBLE_EQ(normalise_unit(7, "register/thread"), 7);
}

TEST(NcuParse, MissingValuesAndQuotesAreTolerated) {
    std::string csv =
        "\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\",\"a__x.sum\",\"b__y.pct\"\n"
        "\"\",\"\",\"\",\"\",\"byte\",\"%\"\n"
        "\"3\",\"k<\"\"q\"\">(int, int)\",\"(4, 2, 1)\",\"(64, 1, 1)\",\"n/a\",\"12.5\"\n";
    auto ks = parse_ncu_csv(csv);
    ASSERT_TRUE(ks.ok()) << ks.error().to_string();
    ASSERT_EQ(ks->size(), 1u);
    EXPECT_EQ(ks->at(0).name, "k<\"q\">(int, int)");
    EXPECT_EQ(ks->at(0).grid[1], 2);
    EXPECT_FALSE(ks->at(0).metric("a__x.sum"));
    EXPECT_DOUBLE_EQ(*ks->at(0).metric("b__y.pct"), 12.5);
}

TEST(NcuParse, ErrorsOnBadInput) {
    EXPECT_FALSE(parse_ncu_csv("==PROF== nothing here\n").ok());
    EXPECT_FALSE(parse_ncu_csv("\"ID\",\"Kernel Name\"\n").ok());  // no units row
    auto short_row = parse_ncu_csv("\"ID\",\"Kernel Name\",\"m\"\n\"\",\"\",\"%\"\n\"1\",\"k\"\n");
    ASSERT_FALSE(short_row.ok());
    EXPECT_NE(short_row.error().message.find("fields"), std::string::npos);
    EXPECT_FALSE(parse_ncu_csv("\"ID\",\"Kernel Name\n").ok());  // unterminated quote
}

TEST(NcuParse, RepresentativeLaunchIsTheLargestWithMedianMetrics) {
    std::string csv =
        "\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\",\"gpu__time_duration.sum\"\n"
        "\"\",\"\",\"\",\"\",\"nsecond\"\n"
        "\"0\",\"kforge_k0\",\"(8, 1, 1)\",\"(256, 1, 1)\",\"5\"\n"
        "\"1\",\"kforge_k1\",\"(4, 1, 1)\",\"(256, 1, 1)\",\"7\"\n"
        "\"2\",\"kforge_k0\",\"(1024, 1, 1)\",\"(256, 1, 1)\",\"300\"\n"
        "\"3\",\"kforge_k0\",\"(1024, 1, 1)\",\"(256, 1, 1)\",\"100\"\n"
        "\"4\",\"kforge_k0\",\"(1024, 1, 1)\",\"(256, 1, 1)\",\"200\"\n";
    auto ks = parse_ncu_csv(csv);
    ASSERT_TRUE(ks.ok());
    auto reps = representative_launches(*ks);
    ASSERT_EQ(reps.size(), 2u);
    EXPECT_EQ(reps[0].name, "kforge_k0");
    EXPECT_EQ(reps[0].grid[0], 1024);
    EXPECT_DOUBLE_EQ(*reps[0].metric("gpu__time_duration.sum"), 200);
    EXPECT_EQ(reps[1].name, "kforge_k1");
}

}  // namespace
}  // namespace kforge::profile
