// The supervisor's handle on one worker process: fork/exec in its own process group, dying with
// its supervisor (a parent-death signal), with pipes for stdin/stdout and stderr appended to a
// log file; deadline-bounded line reads and writes; kill of the whole group and a bounded reap.
// Internal to worker/supervisor.cpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/expected.h"
#include "worker/protocol.h"

namespace kforge::eval {

using Clock = std::chrono::steady_clock;

enum class ReadEnd { kLine, kTimeout, kEof, kOverflow };

struct LineRead {
    ReadEnd end = ReadEnd::kEof;
    std::string line;
};

class WorkerProcess {
public:
    // Starts argv[0] (searched in PATH) with stdin/stdout on pipes and stderr appended to
    // `log_path`. An Error when the pipes, the log or the exec fail. The worker gets SIGKILL
    // when the calling thread ends (PR_SET_PDEATHSIG): the supervisor killed, crashed or
    // interrupted takes its worker with it, so call this from a thread that lives as long as
    // the worker should (the supervisor's callers run it on the main thread).
    static Expected<WorkerProcess> spawn(const std::vector<std::string>& argv,
                                         const std::string& log_path);
    WorkerProcess() = default;
    WorkerProcess(WorkerProcess&& other) noexcept;
    WorkerProcess& operator=(WorkerProcess&& other) noexcept;
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;
    ~WorkerProcess();  // kills and reaps a worker still running

    bool running() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }

    // Writes all of `bytes` before `deadline`; false when the worker is gone or too slow.
    bool write_all(const std::string& bytes, Clock::time_point deadline);
    // The next line the worker writes, waiting until `deadline` at most.
    LineRead read_line(Clock::time_point deadline);
    // Closes the worker's stdin and waits for it to exit until `deadline`; then kills the group.
    // Returns how it ended ("exited with code 0", "killed by signal 9 (SIGKILL)").
    std::string finish(Clock::time_point deadline);
    // Kills the whole process group at once and reaps the worker (bounded); returns how it ended.
    std::string kill_group();

    int tasks_done = 0;
    int64_t memory_baseline_bytes = -1;  // -1: not measured yet
    bool baseline_after_task = false;     // the baseline was retaken after the first task

private:
    std::string reap(Clock::time_point deadline);
    void close_fds();

    pid_t pid_ = -1;   // -1 once reaped
    pid_t pgid_ = -1;  // the group outlives its leader while a grandchild holds on
    std::string ended_how_;
    int to_fd_ = -1;
    int from_fd_ = -1;
    LineReader reader_;
};

// "exited with code 3" / "killed by signal 11 (SIGSEGV)" for a waitpid status.
std::string describe_wait_status(int status);
// The last `max_bytes` of the file at `path` past byte `from` ("" when it cannot be read), cut
// at a line start.
std::string file_tail(const std::string& path, size_t from, size_t max_bytes);

}  // namespace kforge::eval
