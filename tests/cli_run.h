// Runs the kforge binary built for the tests (KFORGE_CLI_PATH, set for NEEDS_CLI tests) with
// arguments, and returns its exit code and its stdout and stderr together (run_cli) or its
// stdout alone (run_cli_stdout).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace kforge::test {

struct CliRun {
    int rc = -1;      // exit code; -1 when the process could not run or died of a signal
    std::string out;  // stdout and stderr together
};

// Runs a shell command line: its exit code and what it wrote to stdout.
inline CliRun run_command(const std::string& cmd) {
    CliRun r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline CliRun run_cli(const std::string& args) {
    return run_command(std::string(KFORGE_CLI_PATH) + " " + args + " 2>&1");
}

// As run_cli, with stdout alone in `out` (stderr discarded): what a tool reading stdout gets.
inline CliRun run_cli_stdout(const std::string& args) {
    return run_command(std::string(KFORGE_CLI_PATH) + " " + args + " 2>/dev/null");
}

}  // namespace kforge::test
