// `kforge eval` exit codes and messages: 0 passed, 1 candidate failed, 2 user error.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include "tests/cli_run.h"

namespace {

using kforge::test::CliRun;
using kforge::test::run_cli;

const std::string kProblem = std::string(KFORGE_SOURCE_DIR) + "/problems/row_sum_f32.json";
const std::string kProgram = std::string(KFORGE_TEST_DATA_DIR) + "/data/row_sum_f32.kf";

TEST(EvalCli, SimulatedPassExitsZeroAndSaysSimulated) {
    CliRun r = run_cli("eval --device sim --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("verdict: passed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(simulated)"), std::string::npos) << r.out;
}

TEST(EvalCli, FailingCandidateExitsOne) {
    CliRun r = run_cli("eval --device sim --sim-fault nan --problem " + kProblem + " --program " +
                      kProgram);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("verdict: incorrect"), std::string::npos) << r.out;
}

TEST(EvalCli, JsonReport) {
    CliRun r = run_cli("eval --device sim --json --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("\"simulated\": true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"gates\""), std::string::npos);
}

// A profiler run times one warm-up and N runs, not the tier's 3 + 20.
TEST(EvalCli, TimingRunsOverrideTheProtocol) {
    CliRun r = run_cli("eval --device sim --json --timing-runs 2 --problem " + kProblem +
                       " --program " + kProgram);
    ASSERT_EQ(r.rc, 0) << r.out;
    auto at = r.out.find("\"samples\"");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"iterations\": 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"warmup\": 1"), std::string::npos) << r.out;
    EXPECT_EQ(run_cli("eval --device sim --timing-runs 0 --problem " + kProblem + " --program " +
                      kProgram).rc, 2);
    EXPECT_EQ(run_cli("eval --device sim --isolate --timing-runs 2 --problem " + kProblem +
                      " --program " + kProgram).rc, 2);
}

TEST(EvalCli, UserErrorsExitTwo) {
    EXPECT_EQ(run_cli("eval --device sim --problem /nonexistent.json --program " + kProgram).rc, 2);
    EXPECT_EQ(run_cli("eval --device sim --problem " + kProblem + " --program /nonexistent.kf").rc,
              2);
    CliRun r = run_cli("eval --device tpu --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("--device must be"), std::string::npos) << r.out;
    EXPECT_EQ(run_cli("eval --device sim --tier warp --problem " + kProblem + " --program " +
                     kProgram).rc, 2);
}

TEST(EvalCli, AutoFallsBackToTheSimulatorLoudlyWithoutAGpu) {
    CliRun r = run_cli("eval --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.rc, 0) << r.out;
    if (r.out.find("simulated") == std::string::npos) GTEST_SKIP() << "SKIP: a GPU is present";
    EXPECT_NE(r.out.find("SIMULATED device"), std::string::npos) << r.out;
}

}  // namespace

namespace {

TEST(EvalCli, SeveralProgramsRunInOneWorkerSessionWithRepeatedTiming) {
    CliRun r = run_cli("eval --device sim --problem " + kProblem + " --program " + kProgram +
                      " --program " + kProgram + " --repeat 3");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("[1/2] row_sum_f32.kf: passed, wall"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[2/2] row_sum_f32.kf: passed, wall"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("spread (max-min)/min of 3 medians"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gates: static"), std::string::npos) << r.out;
}

TEST(EvalCli, AWorkerCrashIsACandidateFailureNotOurs) {
    CliRun r = run_cli("eval --device sim --isolate --sim-fault process_crash --problem " +
                      kProblem + " --program " + kProgram);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("crashed"), std::string::npos) << r.out;
    CliRun direct = run_cli("eval --device sim --sim-fault process_crash --problem " + kProblem +
                           " --program " + kProgram);
    EXPECT_EQ(direct.rc, 2) << direct.out;
    EXPECT_NE(direct.out.find("--isolate"), std::string::npos) << direct.out;
}

TEST(EvalCli, FaultSuiteOnTheSimulatedDevice) {
    CliRun r = run_cli("eval --device sim --fault-suite " + std::string(KFORGE_SOURCE_DIR) +
                      "/tests/faults/scenarios.json");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("9 scenario(s), 0 mismatch(es)"), std::string::npos) << r.out;
}

TEST(EvalCli, SessionUserErrors) {
    EXPECT_EQ(run_cli("eval --device sim --program " + kProgram).rc, 2);
    EXPECT_EQ(run_cli("eval --device sim --problem " + kProblem).rc, 2);
    EXPECT_EQ(run_cli("eval --device sim --problem " + kProblem + " --programs-dir /nonexistent")
                  .rc, 2);
    EXPECT_EQ(run_cli("eval --device sim --problem " + kProblem + " --program " + kProgram +
                     " --program " + kProgram + " --baseline " + kProgram).rc, 2);
    EXPECT_EQ(run_cli("eval --device cuda --fault-suite " + std::string(KFORGE_SOURCE_DIR) +
                     "/tests/faults/scenarios.json").rc, 2);  // no --cubin-dir
}

}  // namespace
