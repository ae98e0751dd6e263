// Worker task loop: hello, then one answer per task line until shutdown or EOF.
#include "eval/worker.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "eval/protocol.h"

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
Message answer(Device& device, const EvaluateTask& evaluate, const Message& task) {
    switch (task.kind) {
    case TaskKind::kPing:
    case TaskKind::kShutdown:
        return make_result(task.id, EvalStatus::kPassed, nlohmann::json::object());
    case TaskKind::kMemory:
        return make_result(task.id, EvalStatus::kPassed,
                           {{"used_bytes", device.memory_used_bytes()}});
    case TaskKind::kEvaluate:
        break;
    }
    try {
        auto outcome = evaluate(device, task.payload);
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

bool device_in_doubt(EvalStatus status) {
    return status == EvalStatus::kLaunchFailed || status == EvalStatus::kCrashed ||
           status == EvalStatus::kTimedOut;
}

int serve_tasks(Device& device, const EvaluateTask& evaluate, int in_fd, int out_fd) {
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
            reply = answer(device, evaluate, *task);
        }
        if (!write_fully(out_fd, encode(reply))) return 1;
        if (task && task->type == MessageType::kTask && task->kind == TaskKind::kShutdown)
            return 0;
    }
}

int run_worker(Device& device, const EvaluateTask& evaluate) {
    signal(SIGPIPE, SIG_IGN);  // a vanished supervisor is a write error, then exit 1
    int protocol_fd = dup(STDOUT_FILENO);
    if (protocol_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 1;
    int rc = serve_tasks(device, evaluate, STDIN_FILENO, protocol_fd);
    close(protocol_fd);
    return rc;
}

}  // namespace kforge::eval
