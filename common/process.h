// Starting other programs: the one place kforge forks and execs (nvcc, ncu, the Python tools,
// the evaluation worker). A child always runs in its own process group, so a timeout or a stop
// kills it with everything it started (nvcc spawns cicc/ptxas/gcc; a Python tool, its own
// children), and a failed exec is an Error carrying the child's errno, never a silent exit 127.
//   spawn_process  fork + exec with the caller's pipes (the worker: a long-lived child that dies
//                  with its parent); the caller waits for it
//   run_process    spawn, capture output, wait under a wall-clock timeout, and kill the group on
//                  timeout or when a stop is asked for (common/stop_request.h: SIGTERM, SIGINT -
//                  the group does not get the terminal's signal itself), within a second
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace kforge {

struct SpawnOptions {
    std::string cwd;  // "": the parent's
    // Set (or replaced) in the child's environment; the rest is inherited.
    std::vector<std::pair<std::string, std::string>> env;
    // dup2'd onto the child's 0, 1 and 2; -1 inherits the parent's.
    int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
    // The child is killed (SIGKILL) when this process ends, however it ends (PR_SET_PDEATHSIG,
    // armed from a thread that lives as long as the process, so it does not matter which
    // thread asks), and exits at once if its parent died before that took effect.
    bool die_with_parent = false;
};

// Starts argv[0] (looked up in PATH when it has no '/') as the leader of a new process group
// (pgid = pid). An Error when it cannot be started (fork fails, cwd or the program missing); the
// failed child is reaped then.
Expected<pid_t> spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options);

enum class Capture {
    kAll,     // stdout and stderr into ProcessResult::output, interleaved
    kStdout,  // stdout captured, stderr passes through to the parent's
    kNone,    // both pass through
};

struct RunOptions {
    int timeout_s = 0;  // 0: none (a stop request still ends it)
    std::string cwd;
    std::vector<std::pair<std::string, std::string>> env;
    Capture capture = Capture::kAll;
};

struct ProcessResult {
    int exit_code = -1;      // valid when !timed_out and !signaled
    bool timed_out = false;
    bool stopped = false;    // killed because a stop was asked for (stop_requested())
    bool signaled = false;   // ended by a signal other than the timeout's kill
    int signal = 0;          // the signal that ended it, when signaled
    std::string output;      // what `capture` captured
    int64_t time_wall_ns = 0;
};

// An Error only when the process cannot be started (e.g. the program does not exist).
Expected<ProcessResult> run_process(const std::vector<std::string>& argv,
                                    const RunOptions& options);
// The compiler's and profiler's call: stdout and stderr together, a timeout, a working folder.
Expected<ProcessResult> run_process(const std::vector<std::string>& argv, int timeout_s,
                                    const std::string& cwd = {});

}  // namespace kforge
