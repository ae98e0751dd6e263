// The ncu command line, failure classification on captured outputs, and run_ncu against fake
// ncu executables (missing, rejecting a metric, hanging, printing a CSV).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "profile/ncu_runner.h"

namespace kforge::profile {
namespace {

namespace fs = std::filesystem;

TEST(NcuRunner, CommandHasTheFixedMetricListAndTarget) {
    NcuOptions o;
    o.ncu = "/opt/ncu";
    o.target = {"kforge", "eval", "--tier", "quick"};
    o.kernel_regex = "^kforge_";
    auto argv = ncu_command(o);
    ASSERT_GE(argv.size(), 12u);
    EXPECT_EQ(argv[0], "/opt/ncu");
    std::string line = shell_join(argv);
    for (const char* part : {"--clock-control none", "--csv", "--page raw", "--target-processes all",
                             "--kernel-name regex:^kforge_", "kforge eval --tier quick"})
        EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
    EXPECT_GE(ncu_metrics().size(), 30u);
    for (const char* m : {"gpu__time_duration.sum", "launch__waves_per_multiprocessor",
                          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"})
        EXPECT_NE(line.find(m), std::string::npos) << m;
    EXPECT_EQ(argv.back(), "quick");
}

TEST(NcuRunner, StatusNamesRoundTrip) {
    for (auto s : {ProfileStatus::kOk, ProfileStatus::kNcuMissing, ProfileStatus::kTimedOut,
                   ProfileStatus::kCountersNotPermitted, ProfileStatus::kNoKernelsProfiled,
                   ProfileStatus::kTargetFailed, ProfileStatus::kNcuFailed})
        EXPECT_EQ(profile_status_from_string(to_string(s)), s);
}

TEST(NcuRunner, ClassifiesCapturedFailures) {
    EXPECT_EQ(classify_ncu_output(1, false,
                                  "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission "
                                  "to access NVIDIA GPU Performance Counters").status,
              ProfileStatus::kCountersNotPermitted);
    EXPECT_EQ(classify_ncu_output(0, false, "==WARNING== No kernels were profiled.\n").status,
              ProfileStatus::kNoKernelsProfiled);
    EXPECT_EQ(classify_ncu_output(0, true, "").status, ProfileStatus::kTimedOut);
    EXPECT_EQ(classify_ncu_output(3, false, "program says no\n").status,
              ProfileStatus::kTargetFailed);
    auto err = classify_ncu_output(1, false, "==ERROR== Failed to find metric foo__bar.sum\n");
    EXPECT_EQ(err.status, ProfileStatus::kNcuFailed);
    EXPECT_NE(err.message.find("foo__bar"), std::string::npos);
    EXPECT_EQ(classify_ncu_output(0, false, "\"ID\",\"Kernel Name\"\n\"\",\"\"\n").status,
              ProfileStatus::kOk);
    EXPECT_EQ(rejected_metrics("==ERROR== Failed to find metric b.sum\n==PROF== a.sum\n",
                               {"a.sum", "b.sum"}),
              std::vector<std::string>{"b.sum"});
}

std::string fake_ncu(const std::string& name, const std::string& body) {
    fs::path p = fs::temp_directory_path() / ("kforge_fake_ncu_" + name + ".sh");
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
}

TEST(NcuRunner, MissingNcuIsAStatus) {
    NcuOptions o;
    o.ncu = "/nonexistent/ncu";
    o.target = {"true"};
    NcuRun r = run_ncu(o);
    EXPECT_EQ(r.status, ProfileStatus::kNcuMissing);
    EXPECT_NE(r.message.find("/nonexistent/ncu"), std::string::npos);
}

TEST(NcuRunner, RejectedMetricIsDroppedAndRetried) {
    // Fails while the metric list still holds lts__t_sector_hit_rate.pct, then prints a CSV.
    NcuOptions o;
    o.ncu = fake_ncu("reject", "case \"$*\" in *lts__t_sector_hit_rate.pct*) "
                               "echo '==ERROR== Failed to find metric lts__t_sector_hit_rate.pct';"
                               " exit 1;; esac\n"
                               "printf '\"ID\",\"Kernel Name\",\"m\"\\n\"\",\"\",\"%%\"\\n"
                               "\"0\",\"k\",\"1\"\\n'\n");
    o.target = {"true"};
    NcuRun r = run_ncu(o);
    EXPECT_EQ(r.status, ProfileStatus::kOk) << r.message << r.output;
    EXPECT_EQ(r.dropped_metrics, std::vector<std::string>{"lts__t_sector_hit_rate.pct"});
    EXPECT_EQ(shell_join(r.command).find("lts__t_sector_hit_rate.pct"), std::string::npos);
}

TEST(NcuRunner, HangingNcuTimesOut) {
    NcuOptions o;
    o.ncu = fake_ncu("hang", "sleep 30\n");
    o.timeout_s = 1;
    NcuRun r = run_ncu(o);
    EXPECT_EQ(r.status, ProfileStatus::kTimedOut);
}

}  // namespace
}  // namespace kforge::profile
