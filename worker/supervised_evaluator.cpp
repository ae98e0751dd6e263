// The supervised evaluator: each request as a task for the supervisor's worker; a worker that
// does not answer gives a report with a failed "worker" gate.
#include "worker/supervised_evaluator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/work.h"
#include "worker/worker.h"

namespace kforge::eval {
namespace {

// The report of a request the worker did not answer (it died, hung, or could not start).
EvalReport unanswered(const EvalRequest& request, const DeviceInfo& device, EvalStatus status,
                      const std::string& message, double wall_ms) {
    EvalReport r;
    r.status = status;
    r.message = "worker: " + message;
    r.device = device;
    r.simulated = device.simulated;
    r.tier = request.tier == EvalTier::kProfile ? EvalTier::kFull : request.tier;
    r.shapes_key = shapes_key(request.problem);
    if (auto w = count_work(request.problem); w.ok()) {
        r.flops = w->flops();
        r.bytes = w->bytes_fused;
    }
    if (!request.prebuilt)
        if (auto p = dsl::parse_program(request.program_text, request.program_file))
            r.program_hash = dsl::program_hash(*p);
    r.gates.push_back(GateOutcome{"worker", false, false, status, message,
                                  {{"wall_ms", wall_ms}}, wall_ms});
    return r;
}

// The key of an evaluation's earlier wall times.
std::string previous_key(const EvalRequest& request) {
    return request.problem.name + "|" + shapes_key(request.problem) + "|" +
           std::string(to_string(request.tier));
}

HangPolicy capped(double cap_s) {
    HangPolicy p;
    p.cap_s = cap_s;
    return p;
}

}  // namespace

SupervisedEvaluator::SupervisedEvaluator(Supervisor& supervisor, double task_timeout_s)
    : SupervisedEvaluator(supervisor, capped(task_timeout_s)) {}

SupervisedEvaluator::SupervisedEvaluator(Supervisor& supervisor, const HangPolicy& policy)
    : supervisor_(supervisor), policy_(policy) {}

double SupervisedEvaluator::deadline_s(const EvalRequest& request) {
    std::optional<double> previous;
    if (auto it = longest_s_.find(previous_key(request)); it != longest_s_.end())
        previous = it->second;
    return evaluation_deadline_s(request, supervisor_.device(), policy_, previous);
}

Expected<DeviceInfo> SupervisedEvaluator::device_info() {
    if (auto st = supervisor_.start(); !st) return st.error();
    return supervisor_.device();
}

EvalReport SupervisedEvaluator::run_pipeline(const EvalRequest& request) {
    auto t0 = std::chrono::steady_clock::now();
    if (auto st = supervisor_.start(); !st) {  // the deadline needs the worker's device
        EvalReport r = unanswered(request, supervisor_.device(), EvalStatus::kNotSupported,
                                  st.error().to_string(), ms_since(t0));
        r.environment_error = true;
        return r;
    }
    const double deadline = deadline_s(request);
    auto result = supervisor_.evaluate(eval_request_to_json(request), deadline);
    if (!result) {
        EvalReport r = unanswered(request, supervisor_.device(), EvalStatus::kNotSupported,
                                  result.error().to_string(), ms_since(t0));
        r.environment_error = true;
        return r;
    }
    EvalReport r;
    auto parsed = report_from_json(result->report);
    if (result->report.contains("gates") && parsed) {
        r = std::move(*parsed);
    } else {
        std::string message = result->message;
        if (message.empty()) message = result->report.value("message", "no report");
        r = unanswered(request, supervisor_.device(), result->status, message, ms_since(t0));
    }
    r.status = result->status;
    r.worker_notes = result->notes;
    if (result->status == EvalStatus::kTimedOut) {
        char why[160];
        std::snprintf(why, sizeof why, "the deadline was %.1f s (expected time of the problem "
                      "and tier, worker/deadline.h)", deadline);
        r.worker_notes.push_back(why);
    } else if (result->status != EvalStatus::kCrashed) {
        double& longest = longest_s_[previous_key(request)];
        longest = std::max(longest, result->time_wall_s);
    }
    return r;
}

TimeReport SupervisedEvaluator::time(const TimeRequest& request) {
    TimeReport r;
    auto result = supervisor_.time(to_json(request), policy_.cap_s);
    if (result && result->report.contains("programs")) {
        auto parsed = time_report_from_json(result->report);
        if (parsed) return *parsed;
        r.message = "unreadable time report: " + parsed.error().to_string();
        r.status = EvalStatus::kCrashed;
        return r;
    }
    r.device = supervisor_.device();
    r.simulated = r.device.simulated;
    r.status = result ? result->status : EvalStatus::kNotSupported;
    r.message = result ? result->message : result.error().to_string();
    return r;
}

WarmReport SupervisedEvaluator::warm(const WarmRequest& request) {
    auto t0 = std::chrono::steady_clock::now();
    WarmReport r;
    double deadline = policy_.cap_s;
    if (supervisor_.start()) deadline = warm_deadline_s(request, supervisor_.device(), policy_);
    auto result = supervisor_.warm(to_json(request), deadline);
    if (!result) {
        r.error = "worker: " + result.error().to_string();
    } else if (auto parsed = warm_report_from_json(result->report); parsed) {
        r = std::move(*parsed);
    } else {
        r.error = "worker: " + (result->message.empty()
                                    ? "unreadable warm report: " + parsed.error().to_string()
                                    : result->message);
    }
    r.wall_ms = ms_since(t0);
    return r;
}

}  // namespace kforge::eval
