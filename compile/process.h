// Runs a command (argv, no shell) in its own process group with a wall-clock timeout; on
// timeout the whole group is killed (nvcc spawns cicc/ptxas/gcc children), and so it is when a
// stop is asked for (common/stop_request.h: SIGTERM, SIGINT - the group does not get the
// signal itself), within a second, so that a stopped run does not wait minutes for a CUTLASS
// compile nobody will use. Output is captured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"

namespace kforge::compile {

struct ProcessResult {
    int exit_code = -1;      // valid when !timed_out and !signaled
    bool timed_out = false;
    bool stopped = false;    // killed because a stop was asked for (stop_requested())
    bool signaled = false;
    int signal = 0;          // the signal that ended it, when signaled
    std::string output;      // stdout and stderr, interleaved
    int64_t time_wall_ns = 0;
};

// An Error only when the process cannot be started (e.g. the program does not exist).
Expected<ProcessResult> run_process(const std::vector<std::string>& argv, int timeout_s,
                                    const std::string& cwd = {});

}  // namespace kforge::compile
