// Worker task loop: hello, then one answer per task line until shutdown or EOF.
#include "worker/worker.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "eval/payload_json.h"
#include "eval/time_programs.h"
#include "problem/spec.h"
#include "worker/protocol.h"

namespace kforge::eval {

namespace {

bool write_fully(int fd, const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t put = write(fd, bytes.data() + done, bytes.size() - done);
        if (put > 0) done += static_cast<size_t>(put);
        else if (put < 0 && errno != EINTR) return false;
    }
    return true;
}

// The answer to one task; exceptions from the device or the evaluator end as kCrashed here
// (an internal error of the harness, never the candidate's status alone), with a restart.
Message answer(Device& device, const TaskHandlers& handlers, const Message& task) {
    switch (task.kind) {
    case TaskKind::kPing:
    case TaskKind::kShutdown:
        return make_result(task.id, EvalStatus::kPassed, nlohmann::json::object());
    case TaskKind::kMemory:
        return make_result(task.id, EvalStatus::kPassed,
                           {{"used_bytes", device.memory_used_bytes()}});
    case TaskKind::kEvaluate:
    case TaskKind::kTime:
    case TaskKind::kWarm:
        break;
    }
    const EvaluateTask& handler = task.kind == TaskKind::kTime   ? handlers.time
                                  : task.kind == TaskKind::kWarm ? handlers.warm
                                                                 : handlers.evaluate;
    if (!handler)
        return make_error_message(task.id, "this worker does not serve " +
                                               std::string(to_string(task.kind)) + " tasks");
    try {
        auto outcome = handler(device, task.payload);
        if (!outcome) return make_error_message(task.id, outcome.error().to_string());
        bool restart = outcome->restart || device_in_doubt(outcome->status);
        return make_result(task.id, outcome->status, std::move(outcome->report), restart);
    } catch (const std::exception& e) {
        return make_result(task.id, EvalStatus::kCrashed,
                           {{"message", std::string("worker internal error: ") + e.what()}},
                           true);
    }
}

// The id of a task line that failed to decode, so the error can still be matched (0: none).
uint64_t salvage_id(const std::string& line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) {
        auto it = j.find("id");
        if (it != j.end() && it->is_number_unsigned()) return it->get<uint64_t>();
    }
    return 0;
}

}  // namespace

nlohmann::ordered_json eval_request_to_json(const EvalRequest& r) {
    nlohmann::ordered_json j;
    j["problem"] = problem_to_json(r.problem);
    j["program"] = r.program_text;
    j["program_file"] = r.program_file;
    j["tier"] = to_string(r.tier);
    if (r.baseline_program_text) j["baseline_program"] = *r.baseline_program_text;
    j["sim_fault"] = to_string(r.sim_fault);
    j["seed"] = r.seed;
    j["run_timeout_s"] = r.run_timeout_s;
    j["compile_cache_dir"] = r.compile_cache_dir;
    j["work_dir"] = r.work_dir;
    j["proposer"] = r.proposer;
    if (r.prebuilt)
        j["prebuilt"] = {{"cubin", r.prebuilt->cubin_path},
                         {"plan", codegen::to_json(r.prebuilt->plan)}};
    if (!r.reusable_gates.empty()) {
        EvalReport holder;
        holder.gates = r.reusable_gates;
        j["reusable_gates"] = to_json(holder)["gates"];
    }
    return j;
}

Expected<EvalRequest> eval_request_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("payload", "not an object");
    EvalRequest r;
    if (auto pb = j.find("prebuilt"); pb != j.end()) {  // e.g. a tests/faults/ kernel
        if (!pb->is_object() || !pb->contains("cubin") || !(*pb)["cubin"].is_string() ||
            !pb->contains("plan"))
            return make_error("payload.prebuilt", "needs {\"cubin\": path, \"plan\": {...}}");
        auto plan = codegen::launch_plan_from_json((*pb)["plan"]);
        if (!plan) return make_error("payload.prebuilt.plan", plan.error().to_string());
        r.prebuilt = PrebuiltCandidate{(*pb)["cubin"].get<std::string>(), std::move(*plan)};
    }
    if (auto gates = j.find("reusable_gates"); gates != j.end()) {
        if (!gates->is_array()) return make_error("payload.reusable_gates", "not an array");
        nlohmann::json wrapper{{"status", "passed"}, {"gates", *gates}};
        auto parsed = report_from_json(wrapper);
        if (!parsed) return make_error("payload.reusable_gates", parsed.error().to_string());
        r.reusable_gates = std::move(parsed->gates);
    }
    if (auto st = read_problem_and_program(j, r.problem, r.program_text); !st) return st.error();
    auto file = payload_string(j, "program_file", false, "<program>");
    auto tier = payload_string(j, "tier", false, "quick");
    auto fault = payload_string(j, "sim_fault", false, "none");
    auto cache = payload_string(j, "compile_cache_dir", false);
    auto work = payload_string(j, "work_dir", false);
    auto proposer = payload_string(j, "proposer", false, "human");
    for (auto* f : {&file, &tier, &fault, &cache, &work, &proposer})
        if (!*f) return f->error();
    r.program_file = *file;
    auto t = eval_tier_from_string(*tier);
    if (!t) return make_error("payload.tier", "unknown tier '" + *tier + "'");
    r.tier = *t;
    auto sf = sim_fault_from_string(*fault);
    if (!sf) return make_error("payload.sim_fault", "unknown fault '" + *fault + "'");
    r.sim_fault = *sf;
    r.compile_cache_dir = *cache;
    r.work_dir = *work;
    r.proposer = *proposer;
    if (j.contains("baseline_program")) {
        auto b = payload_string(j, "baseline_program", true);
        if (!b) return b.error();
        r.baseline_program_text = std::move(*b);
    }
    if (auto it = j.find("seed"); it != j.end()) {
        if (!it->is_number_unsigned()) return make_error("payload.seed", "not an unsigned integer");
        r.seed = it->get<uint64_t>();
    }
    if (auto it = j.find("run_timeout_s"); it != j.end()) {
        if (!it->is_number() || it->get<double>() <= 0)
            return make_error("payload.run_timeout_s", "not a positive number");
        r.run_timeout_s = it->get<double>();
    }
    return r;
}

Expected<TaskOutcome> evaluate_task(Device& device, const nlohmann::json& payload,
                                    ReferenceCache* cache) {
    auto request = eval_request_from_json(payload);
    if (!request) return request.error();
    EvalReport report = evaluate(device, *request, cache);
    TaskOutcome out;
    out.status = report.status;
    out.restart = report.context_lost;
    out.report = to_json(report, /*with_artefacts=*/true);
    return out;
}

Expected<TaskOutcome> time_task(Device& device, const nlohmann::json& payload,
                                ReferenceCache* cache) {
    auto request = time_request_from_json(payload);
    if (!request) return request.error();
    TimeReport report = time_programs(device, *request, cache);
    TaskOutcome out;
    out.status = report.status;
    out.restart = report.context_lost;
    out.report = to_json(report);
    return out;
}

Expected<TaskOutcome> warm_task(Device& device, const nlohmann::json& payload,
                                ReferenceCache& cache) {
    auto request = warm_request_from_json(payload);
    if (!request) return request.error();
    WarmReport report = warm_cases(device, *request, cache);
    TaskOutcome out;
    // A failed warm-up is reported, not a candidate's status: kNotSupported never restarts.
    out.status = report.error.empty() ? EvalStatus::kPassed : EvalStatus::kNotSupported;
    out.restart = report.context_lost;
    out.report = to_json(report);
    return out;
}

TaskHandlers default_task_handlers() {
    auto cache = std::make_shared<ReferenceCache>();
    return TaskHandlers{
        [cache](Device& d, const nlohmann::json& p) { return evaluate_task(d, p, cache.get()); },
        [cache](Device& d, const nlohmann::json& p) { return time_task(d, p, cache.get()); },
        [cache](Device& d, const nlohmann::json& p) { return warm_task(d, p, *cache); }};
}

bool device_in_doubt(EvalStatus status) {
    return status == EvalStatus::kLaunchFailed || status == EvalStatus::kCrashed ||
           status == EvalStatus::kTimedOut;
}

int serve_tasks(Device& device, const TaskHandlers& handlers, int in_fd, int out_fd) {
    if (!write_fully(out_fd, encode(make_hello(device.info(), getpid())))) return 1;
    LineReader reader;
    char buf[65536];
    while (true) {
        std::optional<std::string> line = reader.next_line();
        if (!line) {
            if (reader.overflowed()) {
                (void)write_fully(out_fd, encode(make_error_message(0, "task line too long")));
                return 1;
            }
            ssize_t got = read(in_fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return 0;  // the supervisor closed our stdin: exit quietly
            reader.append(std::string_view(buf, static_cast<size_t>(got)));
            continue;
        }
        auto task = decode(*line);
        Message reply;
        if (!task) {
            reply = make_error_message(salvage_id(*line),
                                       "bad task: " + task.error().to_string());
        } else if (task->type != MessageType::kTask) {
            reply = make_error_message(task->id, "expected a task, got " +
                                             std::string(to_string(task->type)));
        } else {
            reply = answer(device, handlers, *task);
        }
        if (!write_fully(out_fd, encode(reply))) return 1;
        if (task && task->type == MessageType::kTask && task->kind == TaskKind::kShutdown)
            return 0;
    }
}

int run_worker(Device& device, const TaskHandlers& handlers) {
    signal(SIGPIPE, SIG_IGN);  // a vanished supervisor is a write error, then exit 1
    int protocol_fd = dup(STDOUT_FILENO);
    if (protocol_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 1;
    int rc = serve_tasks(device, handlers, STDIN_FILENO, protocol_fd);
    close(protocol_fd);
    return rc;
}

}  // namespace kforge::eval
