// The supervisor's deadline of one evaluation (worker/deadline.h): seconds for a small problem
// on the simulated device, the compile's time on a real one, more for a bigger problem or a
// slower earlier evaluation, never past the cap.
#include <gtest/gtest.h>

#include "tests/eval/eval_fixture.h"
#include "worker/deadline.h"

namespace kforge::eval {
namespace {

using testing::request_for;

DeviceInfo simulated() {
    DeviceInfo d;
    d.name = "simulated (h200 model)";
    d.simulated = true;
    d.datasheet_key = "h200";
    return d;
}

DeviceInfo gpu() {
    DeviceInfo d = simulated();
    d.name = "NVIDIA H200";
    d.simulated = false;
    return d;
}

TEST(HangDeadline, SmallProblemOnTheSimulatedDeviceIsSeconds) {
    HangPolicy policy;
    double s = evaluation_deadline_s(request_for("row_sum_f32"), simulated(), policy);
    EXPECT_GE(s, policy.floor_s);
    EXPECT_LT(s, 30.0);
}

TEST(HangDeadline, ARealDeviceAddsTheCompileAndTheFullShape) {
    HangPolicy policy;
    EvalRequest req = request_for("row_sum_f32");
    double sim = evaluation_deadline_s(req, simulated(), policy);
    double cuda = evaluation_deadline_s(req, gpu(), policy);
    EXPECT_GE(cuda, sim + policy.compile_s);
    EXPECT_LE(cuda, policy.cap_s);
    req.prebuilt = PrebuiltCandidate{"k.cubin", {}};  // nothing to compile
    EXPECT_LT(evaluation_deadline_s(req, gpu(), policy), policy.compile_s);
}

TEST(HangDeadline, TheFullTierAndABiggerProblemWaitLonger) {
    HangPolicy policy;
    policy.cap_s = 1e9;
    EvalRequest quick = request_for("gemm_f32_4096");
    EvalRequest full = request_for("gemm_f32_4096", EvalTier::kFull);
    EXPECT_GT(evaluation_deadline_s(full, simulated(), policy),
              evaluation_deadline_s(quick, simulated(), policy));
    EXPECT_GT(expected_evaluation_s(quick, gpu()), expected_evaluation_s(quick, simulated()));
}

TEST(HangDeadline, AnEarlierSlowerEvaluationRaisesItAndTheCapBoundsIt) {
    HangPolicy policy;
    EvalRequest req = request_for("row_sum_f32");
    double first = evaluation_deadline_s(req, simulated(), policy);
    EXPECT_NEAR(evaluation_deadline_s(req, simulated(), policy, 20.0),
                policy.floor_s + policy.factor * 20.0, 1e-9);
    EXPECT_GT(evaluation_deadline_s(req, simulated(), policy, 20.0), first);
    policy.cap_s = 12;
    EXPECT_DOUBLE_EQ(evaluation_deadline_s(req, simulated(), policy, 1000.0), 12.0);
}

TEST(HangDeadline, WarmUpFollowsTheReferenceCost) {
    HangPolicy policy;
    WarmRequest w;
    w.problem = request_for("row_sum_f32").problem;
    w.program_text = request_for("row_sum_f32").program_text;
    double s = warm_deadline_s(w, simulated(), policy);
    EXPECT_GE(s, policy.floor_s);
    EXPECT_LE(s, policy.cap_s);
}

}  // namespace
}  // namespace kforge::eval
