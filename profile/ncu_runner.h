// The Nsight Compute runner: builds the ncu command line for a target program (a `kforge eval`
// of one candidate, or a standalone executable such as bench/profile/flawed_kernels), runs it
// under a timeout with process-group kill (common/process.h), and maps every way it can fail
// to a ProfileStatus with the message. Metrics: profile/metrics.txt, embedded at build time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::profile {

enum class ProfileStatus {
    kOk,
    kNcuMissing,            // ncu cannot be started
    kCountersNotPermitted,  // ERR_NVGPUCTRPERM: GPU performance counters need admin rights
    kTimedOut,
    kNoKernelsProfiled,     // ncu ran but reported no kernel (no GPU, filter matched nothing)
    kTargetFailed,          // the target program failed and nothing was profiled
    kNcuFailed,             // any other ncu error
};
std::string_view to_string(ProfileStatus s);
std::optional<ProfileStatus> profile_status_from_string(std::string_view s);

// The fixed metric list (profile/metrics.txt), in file order.
const std::vector<std::string>& ncu_metrics();

struct NcuOptions {
    std::string ncu = "ncu";
    std::vector<std::string> target;   // argv of the program to profile
    std::vector<std::string> metrics;  // empty: ncu_metrics()
    std::string kernel_regex;          // e.g. "^kforge_" (empty: every kernel)
    int launch_count = 0;              // 0: every launch
    int timeout_s = 600;
    std::string cwd;
};

// ncu --clock-control none --csv --page raw --print-units base --metrics <list>
//     --target-processes all [-k regex:R] [-c N] <target...>
std::vector<std::string> ncu_command(const NcuOptions& options);

// The command as one shell-quoted line (for logs and --print-ncu-args).
std::string shell_join(const std::vector<std::string>& argv);

struct NcuRun {
    ProfileStatus status = ProfileStatus::kNcuFailed;
    std::string message;
    std::string output;                          // ncu's stdout+stderr (the CSV is in it)
    std::vector<std::string> command;            // the last command run
    std::vector<std::string> dropped_metrics;    // unknown to this ncu/GPU, removed and retried
};

// What a finished ncu process means: kOk when a raw CSV header is present, else the failure
// class with a one-line message. Pure (tested on captured outputs).
NcuRun classify_ncu_output(int exit_code, bool timed_out, const std::string& output);

// Metrics of `metrics` that an ncu error line names (an ERROR line that mentions the metric).
std::vector<std::string> rejected_metrics(const std::string& output,
                                          const std::vector<std::string>& metrics);

// Runs ncu; a metric that ncu rejects is dropped and the run retried (at most 8 times).
NcuRun run_ncu(const NcuOptions& options);

}  // namespace kforge::profile
