#include "eval/evaluator.h"

#include <exception>

#include "eval/evaluate_internal.h"

namespace kforge::eval {

InProcessEvaluator::InProcessEvaluator(Device& device, ReferenceCache* cache)
    : device_(device), cache_(cache) {
    if (!cache_) {
        own_cache_ = std::make_unique<ReferenceCache>();
        cache_ = own_cache_.get();
    }
}

WarmReport Evaluator::warm(const WarmRequest&) {
    WarmReport r;
    r.error = "this evaluator does not warm correctness cases";
    return r;
}

WarmReport InProcessEvaluator::warm(const WarmRequest& request) {
    try {
        return warm_cases(device_, request, *cache_);
    } catch (const std::exception& e) {  // the gates will meet (and report) it themselves
        WarmReport r;
        r.error = std::string("warm-up internal error: ") + e.what();
        return r;
    }
}

EvalReport InProcessEvaluator::run_pipeline(const EvalRequest& request) {
    return detail::Pipeline(device_, request, cache_).run();
}

TimeReport InProcessEvaluator::time(const TimeRequest& request) {
    return time_programs(device_, request, cache_);
}

}  // namespace kforge::eval
