// The evaluator that runs each request in a worker process under a Supervisor (`kforge worker`),
// so that a candidate that crashes or hangs its process costs one kCrashed / kTimedOut result
// and a fresh worker, never the caller (eval/evaluator.h has the interface and the in-process
// evaluator).
#pragma once

#include "eval/evaluator.h"
#include "worker/supervisor.h"

namespace kforge::eval {

// Through `supervisor`'s worker (`kforge worker`). A worker that dies or misses the deadline
// ends the evaluation kCrashed / kTimedOut with a failed "worker" gate carrying the
// supervisor's message; the next evaluation gets a fresh worker.
class SupervisedEvaluator final : public Evaluator {
public:
    // `task_timeout_s`: the hard deadline of one evaluation (compiles included).
    explicit SupervisedEvaluator(Supervisor& supervisor, double task_timeout_s = 900.0);
    Expected<DeviceInfo> device_info() override;
    EvalReport run_pipeline(const EvalRequest& request) override;
    TimeReport time(const TimeRequest& request) override;
    // A warm task in the worker; a worker that dies or misses the deadline is the report's
    // error (and a fresh worker for the next task, as for evaluate).
    WarmReport warm(const WarmRequest& request) override;

private:
    Supervisor& supervisor_;
    double task_timeout_s_;
};

}  // namespace kforge::eval
