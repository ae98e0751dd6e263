// `kforge eval` exit codes and messages: 0 passed, 1 candidate failed, 2 user error.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Result {
    int code = -1;
    std::string out;
};

Result kforge(const std::string& args) {
    std::string cmd = std::string(KFORGE_CLI_PATH) + " " + args + " 2>&1";
    Result r;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

const std::string kProblem = std::string(KFORGE_SOURCE_DIR) + "/problems/row_sum_f32.json";
const std::string kProgram = std::string(KFORGE_TEST_DATA_DIR) + "/data/row_sum_f32.kf";

TEST(EvalCli, SimulatedPassExitsZeroAndSaysSimulated) {
    Result r = kforge("eval --device sim --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("verdict: passed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(simulated)"), std::string::npos) << r.out;
}

TEST(EvalCli, FailingCandidateExitsOne) {
    Result r = kforge("eval --device sim --sim-fault nan --problem " + kProblem + " --program " +
                      kProgram);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("verdict: incorrect"), std::string::npos) << r.out;
}

TEST(EvalCli, JsonReport) {
    Result r = kforge("eval --device sim --json --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\"simulated\": true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"gates\""), std::string::npos);
}

TEST(EvalCli, UserErrorsExitTwo) {
    EXPECT_EQ(kforge("eval --device sim --problem /nonexistent.json --program " + kProgram).code, 2);
    EXPECT_EQ(kforge("eval --device sim --problem " + kProblem + " --program /nonexistent.kf").code,
              2);
    Result r = kforge("eval --device tpu --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("--device must be"), std::string::npos) << r.out;
    EXPECT_EQ(kforge("eval --device sim --tier warp --problem " + kProblem + " --program " +
                     kProgram).code, 2);
}

TEST(EvalCli, AutoFallsBackToTheSimulatorLoudlyWithoutAGpu) {
    Result r = kforge("eval --problem " + kProblem + " --program " + kProgram);
    EXPECT_EQ(r.code, 0) << r.out;
    if (r.out.find("simulated") == std::string::npos) GTEST_SKIP() << "SKIP: a GPU is present";
    EXPECT_NE(r.out.find("SIMULATED device"), std::string::npos) << r.out;
}

}  // namespace

namespace {

TEST(EvalCli, SeveralProgramsRunInOneWorkerSessionWithRepeatedTiming) {
    Result r = kforge("eval --device sim --problem " + kProblem + " --program " + kProgram +
                      " --program " + kProgram + " --repeat 3");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("[1/2] row_sum_f32.kf: passed, wall"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[2/2] row_sum_f32.kf: passed, wall"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("spread (max-min)/min of 3 medians"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gates: static"), std::string::npos) << r.out;
}

TEST(EvalCli, AWorkerCrashIsACandidateFailureNotOurs) {
    Result r = kforge("eval --device sim --isolate --sim-fault process_crash --problem " +
                      kProblem + " --program " + kProgram);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("crashed"), std::string::npos) << r.out;
    Result direct = kforge("eval --device sim --sim-fault process_crash --problem " + kProblem +
                           " --program " + kProgram);
    EXPECT_EQ(direct.code, 2) << direct.out;
    EXPECT_NE(direct.out.find("--isolate"), std::string::npos) << direct.out;
}

TEST(EvalCli, FaultSuiteOnTheSimulatedDevice) {
    Result r = kforge("eval --device sim --fault-suite " + std::string(KFORGE_SOURCE_DIR) +
                      "/tests/faults/scenarios.json");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("9 scenario(s), 0 mismatch(es)"), std::string::npos) << r.out;
}

TEST(EvalCli, SessionUserErrors) {
    EXPECT_EQ(kforge("eval --device sim --program " + kProgram).code, 2);
    EXPECT_EQ(kforge("eval --device sim --problem " + kProblem).code, 2);
    EXPECT_EQ(kforge("eval --device sim --problem " + kProblem + " --programs-dir /nonexistent")
                  .code, 2);
    EXPECT_EQ(kforge("eval --device sim --problem " + kProblem + " --program " + kProgram +
                     " --program " + kProgram + " --baseline " + kProgram).code, 2);
    EXPECT_EQ(kforge("eval --device cuda --fault-suite " + std::string(KFORGE_SOURCE_DIR) +
                     "/tests/faults/scenarios.json").code, 2);  // no --cubin-dir
}

}  // namespace
