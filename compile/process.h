// Runs a command (argv, no shell) in its own process group with a wall-clock timeout; on
// timeout the whole group is killed (nvcc spawns cicc/ptxas/gcc children). Output is captured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"

namespace kforge::compile {

struct ProcessResult {
    int exit_code = -1;      // valid when !timed_out and !signaled
    bool timed_out = false;
    bool signaled = false;
    int signal = 0;          // the signal that ended it, when signaled
    std::string output;      // stdout and stderr, interleaved
    int64_t time_wall_ns = 0;
};

// An Error only when the process cannot be started (e.g. the program does not exist).
Expected<ProcessResult> run_process(const std::vector<std::string>& argv, int timeout_s,
                                    const std::string& cwd = {});

}  // namespace kforge::compile
