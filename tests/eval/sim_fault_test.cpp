// Every fault the simulated device injects ends the evaluation in the right status, at the gate
// that should catch it.
#include <gtest/gtest.h>

#include "device/sim_device.h"
#include "eval/evaluate.h"
#include "eval_fixture.h"

namespace kforge::eval {
namespace {

struct FaultCase {
    SimFault fault;
    EvalStatus status;
    const char* gate;     // the gate that fails
    const char* message;  // a phrase of the failure message
};

class SimFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(SimFaults, EndInTheRightStatus) {
    const FaultCase& c = GetParam();
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    EvalRequest req = testing::request_for("row_sum_f32");
    req.sim_fault = c.fault;
    EvalReport r = evaluate(**device, req);
    EXPECT_EQ(r.status, c.status) << to_string(c.fault) << ": " << r.message;
    ASSERT_FALSE(r.gates.empty());
    EXPECT_EQ(r.gates.back().gate, c.gate) << r.message;
    EXPECT_NE(r.message.find(c.message), std::string::npos) << r.message;
}

INSTANTIATE_TEST_SUITE_P(
    AllFaults, SimFaults,
    ::testing::Values(
        FaultCase{SimFault::kOutOfBounds, EvalStatus::kCrashed, "correctness_small",
                  "CUDA_ERROR_ILLEGAL_ADDRESS"},
        FaultCase{SimFault::kHang, EvalStatus::kTimedOut, "correctness_small", "deadline"},
        FaultCase{SimFault::kPartialWrite, EvalStatus::kIncorrect, "correctness_small",
                  "unwritten"},
        FaultCase{SimFault::kCachedResult, EvalStatus::kIncorrect, "correctness_small",
                  "outputs did not change"},
        FaultCase{SimFault::kLowPrecision, EvalStatus::kFlaggedGaming, "correctness_small",
                  "looks like bf16"},
        FaultCase{SimFault::kNaN, EvalStatus::kIncorrect, "correctness_small", "NaN"}),
    [](const auto& info) { return std::string(to_string(info.param.fault)); });

TEST(SimFaults, SlowIsCorrectButFiftyTimesSlower) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    EvalRequest req = testing::request_for("row_sum_f32");
    EvalReport normal = evaluate(**device, req);
    req.sim_fault = SimFault::kSlow;
    EvalReport slow = evaluate(**device, req);
    ASSERT_EQ(slow.status, EvalStatus::kPassed) << slow.message;
    EXPECT_NEAR(slow.stats.median_ns / normal.stats.median_ns, kSimSlowFactor, 2.0);
}

TEST(SimFaults, HangReturnsAtOnceAndContextLossIsReported) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    Problem p = testing::suite_problem("row_sum_f32");
    Candidate c;
    dsl::Program program;
    c.problem = &p;
    c.program = &program;
    c.sim_fault = SimFault::kOutOfBounds;
    ASSERT_TRUE((*device)->load(c).ok());
    RunResult r = (*device)->run({});
    EXPECT_EQ(r.status, EvalStatus::kCrashed);
    EXPECT_TRUE(r.context_lost);
    c.sim_fault = SimFault::kHang;
    c.run_timeout_s = 3600;
    ASSERT_TRUE((*device)->load(c).ok());
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ((*device)->run({}).status, EvalStatus::kTimedOut);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(SimFaults, NamesRoundTrip) {
    for (SimFault f : {SimFault::kNone, SimFault::kOutOfBounds, SimFault::kHang,
                       SimFault::kPartialWrite, SimFault::kCachedResult, SimFault::kLowPrecision,
                       SimFault::kNaN, SimFault::kSlow, SimFault::kProcessCrash,
                       SimFault::kProcessHang})
        EXPECT_EQ(sim_fault_from_string(to_string(f)), f);
    EXPECT_FALSE(sim_fault_from_string("bogus"));
}

}  // namespace
}  // namespace kforge::eval
