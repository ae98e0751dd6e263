// Supervisor: task round trips with deadlines, and the restart policy (timeout, crash, broken
// device, memory leak, recycling).
#include "worker/supervisor.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

namespace kforge::eval {

namespace {

Clock::time_point after(double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(seconds));
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}

size_t file_size(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

constexpr size_t kLogTailBytes = 4000;

// The "used_bytes" of a memory report; -1 when absent or not an integer.
int64_t used_bytes_of(const nlohmann::json& report) {
    auto it = report.find("used_bytes");
    return it != report.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

}  // namespace

std::vector<std::string> worker_command(const std::string& kforge_path, const std::string& device,
                                        int gpu, const std::string& sim_model) {
    std::vector<std::string> argv{kforge_path, "worker", "--device", device};
    if (device == "cuda") {
        argv.insert(argv.end(), {"--gpu", std::to_string(gpu)});
    } else {
        argv.insert(argv.end(), {"--sim-model", sim_model});
    }
    return argv;
}

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
    // A write to a dead worker must be an EPIPE error, not the death of the supervisor.
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, nullptr);
    }
    log_path_ = options_.log_path;
    if (log_path_.empty()) {
        char name[] = "/tmp/kforge-worker-XXXXXX.log";
        int fd = mkstemps(name, 4);
        if (fd >= 0) {
            close(fd);
            log_path_ = name;
            log_is_temporary_ = true;
        } else {
            log_path_ = "/dev/null";
        }
    }
}

Supervisor::~Supervisor() {
    shutdown();
    if (log_is_temporary_) unlink(log_path_.c_str());
}

std::string Supervisor::log_tail() const {
    std::string tail = file_tail(log_path_, log_offset_, kLogTailBytes);
    if (tail.empty()) return "";
    return "\nworker stderr (" + log_path_ + "):\n" + tail;
}

Status Supervisor::start() {
    if (worker_.running()) return Ok{};
    log_offset_ = file_size(log_path_);
    auto spawned = WorkerProcess::spawn(options_.worker_argv, log_path_);
    if (!spawned) return spawned.error();
    worker_ = std::move(*spawned);
    ++stats_.workers_started;
    LineRead rd = worker_.read_line(after(options_.start_timeout_s));
    std::string what;
    if (rd.end == ReadEnd::kLine) {
        auto hello = decode(rd.line);
        if (!hello) {
            what = "bad hello from the worker: " + hello.error().to_string();
        } else if (hello->type != MessageType::kHello) {
            what = "the worker's first message is '" + std::string(to_string(hello->type)) +
                   "', not hello";
        } else {
            device_ = hello->device;
        }
    } else if (rd.end == ReadEnd::kTimeout) {
        what = "no hello from the worker within " + seconds_text(options_.start_timeout_s);
    } else if (rd.end == ReadEnd::kOverflow) {
        what = "the worker wrote an over-long line instead of its hello";
    } else {
        what = "the worker ended before its hello";
    }
    if (!what.empty()) {
        std::string how = worker_.kill_group();
        return make_error(options_.worker_argv[0], what + " (" + how + ")" + log_tail());
    }
    if (options_.check_memory) {
        auto used = run_task(TaskKind::kMemory, nlohmann::json::object(),
                             options_.control_timeout_s);
        if (!used) return used.error();
        if (used->status != EvalStatus::kPassed)
            return make_error(options_.worker_argv[0],
                              "the worker failed its first memory query: " + used->message);
        worker_.memory_baseline_bytes = used_bytes_of(used->report);
    }
    return Ok{};
}

void Supervisor::stop_worker(TaskResult& result, const std::string& why, bool politely) {
    std::string how;
    if (politely) {
        auto deadline = after(options_.control_timeout_s);
        uint64_t id = next_id_++;
        if (worker_.write_all(encode(make_task(id, TaskKind::kShutdown)), deadline))
            (void)worker_.read_line(deadline);
        how = worker_.finish(deadline);
    } else {
        how = worker_.kill_group();
    }
    result.notes.push_back("worker restarted: " + why + " (old worker " + how + ")");
}

Expected<TaskResult> Supervisor::run_task(TaskKind kind, const nlohmann::json& payload,
                                          double timeout_s) {
    if (auto st = start(); !st) return st.error();
    TaskResult r;
    auto t0 = Clock::now();
    auto deadline = after(timeout_s);
    uint64_t id = next_id_++;
    ++stats_.tasks;
    LineRead rd{ReadEnd::kEof, {}};
    if (worker_.write_all(encode(make_task(id, kind, payload)), deadline)) {
        rd = worker_.read_line(deadline);
    } else if (Clock::now() >= deadline) {
        rd.end = ReadEnd::kTimeout;
    }
    std::string violation;
    if (rd.end == ReadEnd::kLine) {
        auto m = decode(rd.line);
        if (!m) {
            violation = "unreadable message: " + m.error().to_string();
        } else if (m->id != id || (m->type != MessageType::kResult &&
                                   m->type != MessageType::kError)) {
            violation = "unexpected " + std::string(to_string(m->type)) + " message (id " +
                        std::to_string(m->id) + ", expected " + std::to_string(id) + ")";
        } else if (m->type == MessageType::kError) {
            return make_error("worker", "the worker rejected the " +
                                            std::string(to_string(kind)) + " task: " + m->message);
        } else {
            r.status = m->status;
            r.report = std::move(m->report);
            r.time_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (m->restart) {
                ++stats_.restarts_broken;
                stop_worker(r, "its device is unusable after this task (" +
                                   std::string(to_string(r.status)) + ")", false);
            }
            return r;
        }
    }
    r.time_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rd.end == ReadEnd::kTimeout) {
        ++stats_.timeouts;
        std::string how = worker_.kill_group();
        r.status = EvalStatus::kTimedOut;
        r.message = "no result within " + seconds_text(timeout_s) +
                    "; the worker's process group was killed (" + how + ")";
        r.notes.push_back("worker restarted after a time-out");
        return r;
    }
    ++stats_.crashes;
    std::string how = worker_.kill_group();
    r.status = EvalStatus::kCrashed;
    if (violation.empty() && rd.end == ReadEnd::kOverflow)
        violation = "a line over " + std::to_string(kMaxMessageBytes) + " bytes";
    if (!violation.empty()) {
        r.message = "protocol violation by the worker: " + violation + " (worker " + how + ")";
    } else {
        r.message = "the worker died during the task: " + how;
        if (!rd.line.empty()) r.message += "; partial output: " + rd.line.substr(0, 200);
    }
    r.message += log_tail();
    r.notes.push_back("worker restarted after a crash");
    return r;
}

Expected<TaskResult> Supervisor::evaluate(const nlohmann::json& payload,
                                          std::optional<double> timeout_s) {
    return run_counted(TaskKind::kEvaluate, payload, timeout_s);
}

Expected<TaskResult> Supervisor::time(const nlohmann::json& payload,
                                      std::optional<double> timeout_s) {
    return run_counted(TaskKind::kTime, payload, timeout_s);
}

Expected<TaskResult> Supervisor::warm(const nlohmann::json& payload,
                                      std::optional<double> timeout_s) {
    return run_task(TaskKind::kWarm, payload, timeout_s.value_or(options_.task_timeout_s));
}

Expected<TaskResult> Supervisor::run_counted(TaskKind kind, const nlohmann::json& payload,
                                             std::optional<double> timeout_s) {
    auto r = run_task(kind, payload, timeout_s.value_or(options_.task_timeout_s));
    if (!r || !worker_.running()) return r;
    ++worker_.tasks_done;
    if (options_.check_memory) {
        auto used = run_task(TaskKind::kMemory, nlohmann::json::object(),
                             options_.control_timeout_s);
        if (!used) return used.error();
        for (auto& n : used->notes) r->notes.push_back("memory query: " + n);
        if (used->status != EvalStatus::kPassed) return r;  // that worker is gone already
        int64_t used_bytes = used_bytes_of(used->report);
        // The worker keeps the last candidate's buffers until the next one loads (seen on the
        // H200: a 1 GiB input stayed allocated and restarted the worker after every task, losing
        // its reference cache). So the baseline is the memory in use after the first evaluate
        // task; a leak is what keeps growing past it.
        if (kind == TaskKind::kEvaluate && !worker_.baseline_after_task && used_bytes >= 0) {
            worker_.memory_baseline_bytes = used_bytes;
            worker_.baseline_after_task = true;
        }
        int64_t grown = used_bytes < 0 || worker_.memory_baseline_bytes < 0
                            ? 0 : used_bytes - worker_.memory_baseline_bytes;
        if (grown > options_.memory_leak_bytes) {
            ++stats_.restarts_leak;
            stop_worker(*r, "device memory grew by " + std::to_string(grown >> 20) +
                                " MiB over the worker's baseline", true);
            return r;
        }
    }
    if (options_.recycle_after_tasks > 0 &&
        worker_.tasks_done >= options_.recycle_after_tasks) {
        ++stats_.recycles;
        stop_worker(*r, "recycled after " + std::to_string(worker_.tasks_done) + " tasks", true);
    }
    return r;
}

Expected<TaskResult> Supervisor::ping() {
    return run_task(TaskKind::kPing, nlohmann::json::object(), options_.control_timeout_s);
}

Expected<int64_t> Supervisor::memory_used_bytes() {
    auto r = run_task(TaskKind::kMemory, nlohmann::json::object(), options_.control_timeout_s);
    if (!r) return r.error();
    if (r->status != EvalStatus::kPassed)
        return make_error("worker", "memory query failed: " + r->message);
    int64_t used = used_bytes_of(r->report);
    if (used < 0) return make_error("worker", "memory report without used_bytes");
    return used;
}

void Supervisor::shutdown() {
    if (!worker_.running()) return;
    TaskResult ignored;
    stop_worker(ignored, "shutdown", true);
}

}  // namespace kforge::eval
