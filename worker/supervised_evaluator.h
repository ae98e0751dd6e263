// The evaluator that runs each request in a worker process under a Supervisor (`kforge worker`),
// so that a candidate that crashes or hangs its process costs one kCrashed / kTimedOut result
// and a fresh worker, never the caller (eval/evaluator.h has the interface and the in-process
// evaluator).
#pragma once

#include <map>
#include <string>

#include "eval/evaluator.h"
#include "worker/deadline.h"
#include "worker/supervisor.h"

namespace kforge::eval {

// Through `supervisor`'s worker (`kforge worker`). A worker that dies or misses the deadline
// ends the evaluation kCrashed / kTimedOut with a failed "worker" gate carrying the
// supervisor's message; the next evaluation gets a fresh worker. The deadline of each request
// follows its expected time (worker/deadline.h), and the longest earlier evaluation of the same
// problem, shapes and tier.
class SupervisedEvaluator final : public Evaluator {
public:
    // `task_timeout_s`: the longest deadline of one evaluation (compiles included); the policy's
    // cap.
    explicit SupervisedEvaluator(Supervisor& supervisor, double task_timeout_s = 900.0);
    SupervisedEvaluator(Supervisor& supervisor, const HangPolicy& policy);
    Expected<DeviceInfo> device_info() override;
    EvalReport run_pipeline(const EvalRequest& request) override;
    TimeReport time(const TimeRequest& request) override;
    // A warm task in the worker; a worker that dies or misses the deadline is the report's
    // error (and a fresh worker for the next task, as for evaluate).
    WarmReport warm(const WarmRequest& request) override;

    // The deadline the next evaluation of `request` gets.
    double deadline_s(const EvalRequest& request);

private:
    Supervisor& supervisor_;
    HangPolicy policy_;
    std::map<std::string, double> longest_s_;  // answered evaluations by problem, shapes, tier
};

}  // namespace kforge::eval
