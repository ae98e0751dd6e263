// The fault suite (tests/faults/scenarios.json): faulty candidates, each of which must end in
// its expected status, and correct ones that must pass, all evaluated through ONE evaluator
// session (a supervised worker: an out-of-bounds kernel or a hang costs a worker restart, never
// the session). On the simulated device each scenario is a SimFault on the manifest's program;
// on a GPU each is a hand-written CUDA kernel (tests/faults/*.cu, compiled by nvcc into
// `cubin_dir` as <source>.cubin) run as a prebuilt candidate with the manifest's launch plan.
// A scenario matches when the status is the expected one, the report contains its `caught_by`
// phrase, and a `slow` scenario's median is over 10x the first correct scenario's.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "eval/evaluator.h"

namespace kforge::eval {

struct FaultScenarioResult {
    std::string name;
    std::string expected;
    std::string got;
    bool matched = false;
    std::string why;        // what did not match
    std::string failed_gates;
    double median_ns = 0;
    double wall_ms = 0;
    bool worker_restarted = false;
};

struct FaultSuiteResult {
    std::vector<FaultScenarioResult> scenarios;
    int mismatches = 0;
};

// Reads `manifest_path` (problem, program, plan and scenarios relative to its folder). An Error
// for an unreadable manifest or a missing cubin; scenario outcomes are results.
Expected<FaultSuiteResult> run_fault_suite(Evaluator& evaluator, const std::string& manifest_path,
                                           bool simulated, const std::string& cubin_dir);

// The table "scenario expected got median wall notes", one line per scenario.
std::string fault_suite_table(const FaultSuiteResult& result);

}  // namespace kforge::eval
