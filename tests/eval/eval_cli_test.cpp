// `kforge eval` exit codes and messages: 0 passed, 1 candidate failed, 2 user error.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include "tests/cli_run.h"
#include "tests/doubling_inputs.h"

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

namespace {

// Writes `text` to `name` in the test's temporary folder; its path.
std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + "/kforge_eval_cli_" + name;
    std::ofstream(path) << text;
    return path;
}

// A program that does not parse or check against the problem is the user's error (README: exit
// 2, the message names the place), not a failed candidate (exit 1): issue 31, item 10.
TEST(EvalCli, InvalidProgramsExitTwoNamingThePlace) {
    struct Case {
        const char* name;
        std::string text;
        std::string place;  // file:line: as the message names it
    };
    const std::string head = "program p for \"row_sum_f32\"\n";
    const std::vector<Case> cases = {
        {"syntax.kf", head + "kernel k0 = rowwise sum(X[R,C] { store Y[R] }\n", "syntax.kf:2:"},
        {"empty.kf", "", "empty.kf:1:"},
        {"unknown_tensor.kf", head + "kernel k0 = rowwise sum(Z[R,C]) { store Y[R] }\n",
         "unknown_tensor.kf:2:"},
        {"other_problem.kf", "program p for \"softmax\"\nkernel k0 = rowwise sum(X[R,C]) "
                             "{ store Y[R] }\n", "other_problem.kf:1:"},
        {"wrong_op.kf", head + "kernel k0 = rowwise max(X[R,C]) { store Y[R] }\n",
         "wrong_op.kf:2:"},
        {"never_stored.kf", head + "kernel k0 = rowwise sum(X[R,C]) { store T[R] }\n",
         "never_stored.kf:1:"},
        {"bad_knob.kf", head + "kernel k0 = rowwise sum(X[R,C]) threads 4096 { store Y[R] }\n",
         "bad_knob.kf:2:"},
        // fp32_strict: a round trip through bf16 (item 6) is refused statically.
        {"bf16_round_trip.kf",
         head + "kernel k0 = rowwise sum(X[R,C]) { cast bf16; cast f32; store Y[R] }\n",
         "bf16_round_trip.kf:2:"},
    };
    for (const Case& c : cases) {
        const std::string path = write_temp(c.name, c.text);
        CliRun r = run_cli("eval --device sim --problem " + kProblem + " --program " + path);
        EXPECT_EQ(r.rc, 2) << c.name << ":\n" << r.out;
        EXPECT_NE(r.out.find("verdict: invalid_program"), std::string::npos) << c.name << r.out;
        EXPECT_NE(r.out.find(c.place), std::string::npos) << c.name << ": " << c.place << r.out;
        EXPECT_EQ(r.out.find("internal error"), std::string::npos) << c.name << r.out;
        CliRun j = run_cli("eval --device sim --json --problem " + kProblem + " --program " + path);
        EXPECT_EQ(j.rc, 2) << c.name << ":\n" << j.out;
        const size_t said = j.out.find("kforge eval: invalid program: static: ");
        ASSERT_NE(said, std::string::npos) << c.name << j.out;
        EXPECT_NE(j.out.substr(said, j.out.find('\n', said) - said).find(c.place),
                  std::string::npos) << c.name << j.out;
        EXPECT_NE(j.out.find("\"status\": \"invalid_program\""), std::string::npos) << j.out;
    }
    // In a session of several programs: one invalid program makes it the user's error.
    const std::string bad = write_temp("wrong_op.kf", cases[4].text);
    CliRun s = run_cli("eval --device sim --problem " + kProblem + " --program " + kProgram +
                       " --program " + bad);
    EXPECT_EQ(s.rc, 2) << s.out;
    EXPECT_NE(s.out.find("[2/2] kforge_eval_cli_wrong_op.kf: invalid_program"), std::string::npos)
        << s.out;
    // A candidate that checks but fails a gate is still a negative result (exit 1).
    EXPECT_EQ(run_cli("eval --device sim --sim-fault nan --problem " + kProblem + " --program " +
                      kProgram).rc, 1);
}

// Issue 31, item 1: `eval` on a 200-op spec whose every op reads its input twice ended in
// `internal error: std::bad_alloc` (the checker spelled out 2^200 operands); now it is a clean
// user error naming the counts, and the matching program is a clean result.
TEST(EvalCli, ADoublingSpecOf200OpsEndsCleanly) {
    const std::string spec = write_temp("doubling.json", kforge::test::doubling_spec(200));
    const std::string one = write_temp("doubling_1.kf", kforge::test::doubling_program(1));
    CliRun r = run_cli("eval --device sim --problem " + spec + " --program " + one);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("Y is not what the problem computes"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("times; the program's chain for Y twice"), std::string::npos) << r.out;
    const std::string all = write_temp("doubling_200.kf", kforge::test::doubling_program(200, 50));
    CliRun m = run_cli("eval --device sim --problem " + spec + " --program " + all);
    EXPECT_TRUE(m.rc == 0 || m.rc == 1) << m.out;
    EXPECT_NE(m.out.find("[ok  ] static"), std::string::npos) << m.out;
    EXPECT_EQ(m.out.find("internal error"), std::string::npos) << m.out;
}

// Issue 31, item 6: the simulated device says which gates it could not run as on a GPU.
TEST(EvalCli, TheSimulatedDeviceSaysWhatItDidNotCheck) {
    CliRun r = run_cli("eval --device sim --problem " + kProblem + " --program " + kProgram);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("correctness_small       "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(numerics not checked on the simulated device)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("not checked on the simulated device:\n  compile"), std::string::npos)
        << r.out;
    CliRun j = run_cli("eval --device sim --json --problem " + kProblem + " --program " + kProgram);
    ASSERT_EQ(j.rc, 0) << j.out;
    EXPECT_NE(j.out.find("\"not_checked\": {\n    \"compile\""), std::string::npos) << j.out;
    EXPECT_NE(j.out.find("\"correctness_small\": \"numerics not checked on the simulated device:"),
              std::string::npos) << j.out;
}

}  // namespace
