// The evaluation worker: a process bound to one device that reads tasks (worker/protocol.h) from
// stdin and writes exactly one answer per task to stdout, nothing else. It says hello first.
// Anything a library prints to stdout is redirected to stderr (the worker's log), so that the
// protocol stream can only be corrupted by a crash, which the supervisor detects.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "device/device.h"
#include "eval/evaluate.h"
#include "eval/reference_cache.h"
#include "store/enums.h"

namespace kforge::eval {

struct TaskOutcome {
    EvalStatus status = EvalStatus::kPassed;
    nlohmann::json report = nlohmann::json::object();
    bool restart = false;  // the device is unusable now (e.g. a sticky CUDA error)
};

// Runs one evaluate (or time) task's payload on `device`. An Error means a malformed payload
// (answered with an error message; the worker goes on).
using EvaluateTask = std::function<Expected<TaskOutcome>(Device&, const nlohmann::json&)>;

struct TaskHandlers {
    EvaluateTask evaluate;
    EvaluateTask time;  // empty: time tasks are answered with an error
    EvaluateTask warm;  // empty: warm tasks are answered with an error
};

// evaluate_task, time_task and warm_task sharing one ReferenceCache for the worker's lifetime,
// so the candidates of one problem share inputs and fp64 references (warmed ahead or not).
TaskHandlers default_task_handlers();

// The evaluate payload: an EvalRequest without its in-process parts (store, run id):
// {"problem": spec JSON, "program": text, "program_file", "tier", "baseline_program",
//  "sim_fault", "seed", "run_timeout_s", "compile_cache_dir", "work_dir", "proposer",
//  "prebuilt": {"cubin": path, "plan": launch plan JSON}, "reusable_gates": [gate JSON]}.
nlohmann::ordered_json eval_request_to_json(const EvalRequest& request);
// An Error names the field ("payload.tier") or the problem spec's own error.
Expected<EvalRequest> eval_request_from_json(const nlohmann::json& payload);

// The default: decodes the payload as an EvalRequest and runs evaluate(); the report is
// to_json(EvalReport) and a lost CUDA context asks for a restart.
Expected<TaskOutcome> evaluate_task(Device& device, const nlohmann::json& payload,
                                    ReferenceCache* cache = nullptr);
// The time payload (time_request_from_json) through time_programs().
Expected<TaskOutcome> time_task(Device& device, const nlohmann::json& payload,
                                ReferenceCache* cache = nullptr);

// The warm payload (to_json(WarmRequest): "problem", "program", "seed", "tier", "first_case",
// "max_cases") through warm_cases() into `cache`. The status is passed, or not_supported when
// the warm-up reports an error (the report's "error"); a lost CUDA context asks for a restart.
Expected<TaskOutcome> warm_task(Device& device, const nlohmann::json& payload,
                                ReferenceCache& cache);

// Whether a task that ended with `status` leaves the worker's device in doubt, so the
// supervisor must replace the worker: a launch failure or crash may be a sticky CUDA error
// (illegal address, trap, device-side timeout) that poisons the context for every later task.
bool device_in_doubt(EvalStatus status);

// Writes the hello, then serves tasks from `in_fd` until a shutdown task or EOF. Returns the
// process exit code: 0 after shutdown or EOF, 1 when the supervisor cannot be written to.
int serve_tasks(Device& device, const TaskHandlers& handlers, int in_fd, int out_fd);

// serve_tasks on stdin and a private duplicate of stdout, with stdout itself pointed at stderr.
int run_worker(Device& device, const TaskHandlers& handlers);

}  // namespace kforge::eval
