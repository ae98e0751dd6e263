// Where evaluations run (a real plug-in point): in this process on a Device (here), or in a
// worker process under a Supervisor (worker/supervised_evaluator.h), so that a candidate that
// crashes or hangs its process costs one kCrashed / kTimedOut result and a fresh worker, never
// the caller (DESIGN decision 3). Search and `kforge eval` talk to an Evaluator;
// evaluate(Evaluator&, request) wraps it in the store (cache lookup, recording) in the calling
// process, so the worker never opens the database.
#pragma once

#include <memory>

#include "common/expected.h"
#include "eval/evaluate.h"
#include "eval/reference_cache.h"
#include "eval/time_programs.h"

namespace kforge::eval {

class Evaluator {
public:
    virtual ~Evaluator() = default;
    // The device evaluations run on (a supervised evaluator starts its worker to learn it).
    virtual Expected<DeviceInfo> device_info() = 0;
    // The gated pipeline for one request, without the store (request.store is not used).
    // Never throws; an evaluator that cannot run at all says so with environment_error.
    virtual EvalReport run_pipeline(const EvalRequest& request) = 0;
    // Interleaved or repeated timing (eval/time_programs.h).
    virtual TimeReport time(const TimeRequest& request) = 0;
    // Builds the correctness cases `request` lists (eval/evaluate.h: warm_cases) where the
    // evaluations run, so that later evaluations of that program, problem and seed find them
    // cached. Never throws; a failure is the report's error and changes no later evaluation's
    // result. An evaluator without a reference cache says so in the error.
    virtual WarmReport warm(const WarmRequest& request);
};

// The pipeline with the store wrapper, on any evaluator; wall_ms covers all of it.
EvalReport evaluate(Evaluator& evaluator, const EvalRequest& request);

// In this process, on `device`; inputs and references shared across calls (`cache`, or its own).
class InProcessEvaluator final : public Evaluator {
public:
    explicit InProcessEvaluator(Device& device, ReferenceCache* cache = nullptr);
    Expected<DeviceInfo> device_info() override { return device_.info(); }
    EvalReport run_pipeline(const EvalRequest& request) override;
    TimeReport time(const TimeRequest& request) override;
    WarmReport warm(const WarmRequest& request) override;

private:
    Device& device_;
    std::unique_ptr<ReferenceCache> own_cache_;
    ReferenceCache* cache_;
};

}  // namespace kforge::eval
