// The fault suite on the simulated device (CI): each scenario's SimFault through one supervisor
// session with `kforge worker --device sim`; the statuses must match tests/faults/scenarios.json.
#include <gtest/gtest.h>

#include "eval/evaluator.h"
#include "eval/fault_suite.h"
#include "eval_fixture.h"
#include "worker/supervised_evaluator.h"

namespace kforge::eval {
namespace {

using testing::sim_worker;

const std::string kManifest = std::string(KFORGE_SOURCE_DIR) + "/tests/faults/scenarios.json";

TEST(FaultSuiteSim, EveryScenarioGetsItsStatusInOneSession) {
    Supervisor s(sim_worker());
    ASSERT_TRUE(s.start().ok());
    EXPECT_TRUE(s.device().simulated);
    SupervisedEvaluator evaluator(s, 120);
    auto r = run_fault_suite(evaluator, kManifest, true, "");
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    std::printf("%s", fault_suite_table(*r).c_str());
    EXPECT_EQ(r->mismatches, 0);
    EXPECT_EQ(r->scenarios.size(), 9u);
    for (const FaultScenarioResult& row : r->scenarios) EXPECT_TRUE(row.matched) << row.why;
    // The out-of-bounds scenario loses the (simulated) context: the worker was replaced.
    EXPECT_GE(s.stats().restarts_broken, 1);
    EXPECT_EQ(s.stats().crashes, 0);  // no worker process died: faults are statuses
    EXPECT_EQ(s.stats().workers_started, 1 + s.stats().restarts_broken);
}

TEST(FaultSuiteSim, AMissingCubinOnTheGpuPathIsAnError) {
    Supervisor s(sim_worker());
    SupervisedEvaluator evaluator(s, 60);
    auto r = run_fault_suite(evaluator, kManifest, false, "/nonexistent");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("nvcc"), std::string::npos);
    EXPECT_FALSE(run_fault_suite(evaluator, "/nonexistent/scenarios.json", true, "").ok());
}

}  // namespace
}  // namespace kforge::eval
