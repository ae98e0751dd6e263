// The supervisor: runs evaluation tasks in a worker process (one per device) and survives
// whatever a candidate does to it (DESIGN decision 3). Each task has a hard deadline; past it
// the worker's whole process group is killed and the task ends kTimedOut. A worker that dies
// (EOF, signal, garbage on its stdout) ends the task kCrashed with its exit status and the tail
// of its stderr log. A worker whose device is broken (a sticky CUDA error: the result says
// restart), whose device memory grew past a threshold, or that ran `recycle_after_tasks` tasks
// is replaced. Replacement is lazy: the next task starts a fresh worker. No read or write
// blocks past a deadline; SIGPIPE is ignored in the supervising process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "device/device.h"
#include "store/enums.h"
#include "worker/protocol.h"
#include "worker/supervisor_process.h"

namespace kforge::eval {

struct SupervisorOptions {
    std::vector<std::string> worker_argv;  // e.g. worker_command(kforge_path, ...)
    std::string log_path;           // worker stderr is appended here; empty: a temporary file
    double start_timeout_s = 60.0;  // until the hello (CUDA context creation is slow)
    double task_timeout_s = 120.0;  // default hard deadline of one evaluate task
    double control_timeout_s = 10.0;  // ping, memory and shutdown
    int recycle_after_tasks = 0;    // replace the worker after this many tasks (0: never)
    bool check_memory = true;       // query device memory after every evaluate task
    int64_t memory_leak_bytes = int64_t{256} << 20;  // growth over the worker's baseline
};

// argv of `kforge worker` bound to one device: device "cuda" (on `gpu`) or "sim" (`sim_model`).
std::vector<std::string> worker_command(const std::string& kforge_path, const std::string& device,
                                        int gpu = 0, const std::string& sim_model = "h200");

struct TaskResult {
    EvalStatus status = EvalStatus::kPassed;
    std::string message;              // what ended a timed-out or crashed task, with log tail
    nlohmann::json report = nlohmann::json::object();  // the worker's report (evaluate tasks)
    std::vector<std::string> notes;   // worker restarts and why
    double time_wall_s = 0.0;
};

struct SupervisorStats {
    int workers_started = 0;
    int tasks = 0;
    int timeouts = 0;
    int crashes = 0;
    int restarts_broken = 0;  // the worker reported an unusable device
    int restarts_leak = 0;
    int recycles = 0;
};

class Supervisor {
public:
    explicit Supervisor(SupervisorOptions options);
    ~Supervisor();  // shuts the worker down (politely, then by SIGKILL)
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    // Starts a worker unless one runs. An Error (an environment problem: the worker cannot be
    // executed, exits before its hello, says nothing within start_timeout_s, or speaks another
    // protocol version) carries the worker's stderr tail.
    Status start();
    // The device of the current (or last) worker; empty before the first start().
    const DeviceInfo& device() const { return device_; }

    // Runs one evaluate task (payload: an EvalRequest as JSON). A candidate's failure, a
    // timeout and a worker crash are TaskResult statuses; an Error only when no worker can be
    // started or the worker rejects the payload as malformed (its error message).
    Expected<TaskResult> evaluate(const nlohmann::json& payload,
                                  std::optional<double> timeout_s = std::nullopt);
    // Runs one time task (payload: a TimeRequest as JSON), like evaluate().
    Expected<TaskResult> time(const nlohmann::json& payload,
                              std::optional<double> timeout_s = std::nullopt);
    // Runs one warm task (payload: a WarmRequest as JSON) with the deadline and crash handling
    // of evaluate(), but not counted as a task: it neither recycles the worker (which would lose
    // the cache it fills) nor sets the memory baseline.
    Expected<TaskResult> warm(const nlohmann::json& payload,
                              std::optional<double> timeout_s = std::nullopt);
    // Round trip to the worker (starting one if needed).
    Expected<TaskResult> ping();
    // Device memory the worker's device reports in use.
    Expected<int64_t> memory_used_bytes();
    // Asks the worker to exit (bounded), kills it otherwise. The next task starts a new one.
    void shutdown();

    const SupervisorStats& stats() const { return stats_; }
    const std::string& log_path() const { return log_path_; }
    bool worker_running() const { return worker_.running(); }

private:
    Expected<TaskResult> run_task(TaskKind kind, const nlohmann::json& payload, double timeout_s);
    // evaluate / time: the task, then the leak check and the recycling policy.
    Expected<TaskResult> run_counted(TaskKind kind, const nlohmann::json& payload,
                                     std::optional<double> timeout_s);
    void stop_worker(TaskResult& result, const std::string& why, bool politely);
    std::string log_tail() const;

    SupervisorOptions options_;
    std::string log_path_;
    size_t log_offset_ = 0;  // the current worker's stderr starts here
    bool log_is_temporary_ = false;
    WorkerProcess worker_;
    DeviceInfo device_;
    uint64_t next_id_ = 1;
    SupervisorStats stats_;
};

}  // namespace kforge::eval
