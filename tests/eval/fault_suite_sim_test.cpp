// The fault suite on the simulated device (CI): each scenario's SimFault through one supervisor
// session with `kforge worker --device sim`; the statuses must match tests/faults/scenarios.json.
#include "fault_suite.h"

namespace kforge::eval {
namespace {

TEST(FaultSuiteSim, EveryScenarioGetsItsStatusInOneSession) {
    SupervisorOptions o;
    o.worker_argv = worker_command(KFORGE_CLI_PATH, "sim", 0, "h200");
    o.task_timeout_s = 60;
    Supervisor s(o);
    ASSERT_TRUE(s.start().ok());
    EXPECT_TRUE(s.device().simulated);
    faults::run_fault_suite(s, true, [](const std::string&) { return std::string(); });
    // The out-of-bounds scenario loses the (simulated) context: the worker was replaced.
    EXPECT_GE(s.stats().restarts_broken, 1);
    EXPECT_EQ(s.stats().crashes, 0);  // no worker process died: faults are statuses
}

}  // namespace
}  // namespace kforge::eval
