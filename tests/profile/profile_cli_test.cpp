// `kforge profile`: diagnosis of a recorded raw page with expectations, the ncu command line,
// the no-ncu fallback (ptxas + SOL, exit 3) and user errors.
#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include "tests/cli_run.h"

namespace {

using kforge::test::CliRun;
using kforge::test::run_cli;

std::string data(const std::string& name) { return std::string(KFORGE_TEST_DATA_DIR) + "/" + name; }
std::string problem(const std::string& name) {
    return std::string(KFORGE_SOURCE_DIR) + "/problems/" + name;
}

TEST(ProfileCli, DiagnosesARecordedPageAgainstExpectations) {
    std::string expect = testing::TempDir() + "/expect_ok.txt";
    FILE* f = std::fopen(expect.c_str(), "w");
    std::fputs("# kernel class\ncopy_streaming dram_bound\ntiny_grid_copy launch_tail_bound\n", f);
    std::fclose(f);
    auto r = run_cli("profile --csv " + data("fixtures/synthetic_flawed.csv") + " --expect " + expect);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("uncoalesced_memory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("move: "), std::string::npos);

    f = std::fopen(expect.c_str(), "w");
    std::fputs("pointer_chase dram_bound\n", f);
    std::fclose(f);
    r = run_cli("profile --csv " + data("fixtures/synthetic_flawed.csv") + " --expect " + expect);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("MISDIAGNOSED"), std::string::npos) << r.out;
}

TEST(ProfileCli, JsonCarriesEvidence) {
    auto r = run_cli("profile --json --csv " + data("fixtures/synthetic_flawed.csv"));
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("\"evidence\""), std::string::npos);
    EXPECT_NE(r.out.find("\"bottleneck\": \"spill_bound\""), std::string::npos) << r.out;
}

TEST(ProfileCli, PrintsTheNcuCommandForACandidate) {
    auto r = run_cli("profile --print-ncu-args --ncu /opt/ncu --problem " +
                     problem("softmax_short_rows_f32.json") + " --program " + problem("softmax_short_rows_f32.kf"));
    EXPECT_EQ(r.rc, 0) << r.out;
    for (const char* part : {"/opt/ncu --clock-control none --csv --page raw", "--metrics ",
                             "--target-processes all", "eval --problem", "--tier quick",
                             "--device cuda", "--timing-runs 2"})
        EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(ProfileCli, WithoutNcuFallsBackToPtxasAndSolAndExits3) {
    auto r = run_cli("profile --ncu /nonexistent/ncu --problem " + problem("softmax_short_rows_f32.json") +
                     " --program " + problem("softmax_short_rows_f32.kf"));
    EXPECT_EQ(r.rc, 3) << r.out;
    EXPECT_NE(r.out.find("ncu_missing"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[ptxas + SOL only]"), std::string::npos) << r.out;
}

TEST(ProfileCli, UserErrors) {
    EXPECT_EQ(run_cli("profile").rc, 2);
    EXPECT_EQ(run_cli("profile --csv /nonexistent.csv").rc, 2);
    auto r = run_cli("profile --csv " + data("fixtures/expected_classes.txt"));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("header"), std::string::npos) << r.out;
}

}  // namespace
