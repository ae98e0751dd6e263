// Nsight Compute runner (profile/ncu_runner.h).
#include "profile/ncu_runner.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "common/process.h"

namespace kforge::profile {
namespace {

constexpr std::array<std::pair<ProfileStatus, std::string_view>, 7> kStatusNames{{
    {ProfileStatus::kOk, "ok"},
    {ProfileStatus::kNcuMissing, "ncu_missing"},
    {ProfileStatus::kCountersNotPermitted, "counters_not_permitted"},
    {ProfileStatus::kTimedOut, "timed_out"},
    {ProfileStatus::kNoKernelsProfiled, "no_kernels_profiled"},
    {ProfileStatus::kTargetFailed, "target_failed"},
    {ProfileStatus::kNcuFailed, "ncu_failed"},
}};

bool contains(const std::string& s, std::string_view what) {
    return s.find(what) != std::string::npos;
}

// The first line of `output` containing `what` (for a short message).
std::string line_with(const std::string& output, std::string_view what) {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);)
        if (contains(line, what)) return line;
    return {};
}

}  // namespace

std::string_view to_string(ProfileStatus s) {
    for (const auto& [v, name] : kStatusNames)
        if (v == s) return name;
    return "ncu_failed";
}

std::optional<ProfileStatus> profile_status_from_string(std::string_view s) {
    for (const auto& [v, name] : kStatusNames)
        if (name == s) return v;
    return std::nullopt;
}

const std::vector<std::string>& ncu_metrics() {
    static const std::vector<std::string> metrics{
#include "profile/metrics.inc"
    };
    return metrics;
}

std::vector<std::string> ncu_command(const NcuOptions& o) {
    const std::vector<std::string>& metrics = o.metrics.empty() ? ncu_metrics() : o.metrics;
    std::string list;
    for (const std::string& m : metrics) list += (list.empty() ? "" : ",") + m;
    std::vector<std::string> argv{o.ncu, "--clock-control", "none", "--csv", "--page", "raw",
                                  "--print-units", "base", "--metrics", list,
                                  "--target-processes", "all"};
    if (!o.kernel_regex.empty()) {
        argv.push_back("--kernel-name");
        argv.push_back("regex:" + o.kernel_regex);
    }
    if (o.launch_count > 0) {
        argv.push_back("--launch-count");
        argv.push_back(std::to_string(o.launch_count));
    }
    argv.insert(argv.end(), o.target.begin(), o.target.end());
    return argv;
}

std::string shell_join(const std::vector<std::string>& argv) {
    std::string out;
    for (const std::string& a : argv) {
        bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:,^").find(c) != std::string_view::npos;
        });
        if (!out.empty()) out += ' ';
        if (plain) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

NcuRun classify_ncu_output(int exit_code, bool timed_out, const std::string& output) {
    NcuRun r;
    r.output = output;
    bool has_csv = contains(output, "\"ID\",") && contains(output, "\"Kernel Name\"");
    if (timed_out) {
        r.status = ProfileStatus::kTimedOut;
        r.message = "ncu did not finish within the timeout (its process group was killed)";
    } else if (contains(output, "ERR_NVGPUCTRPERM")) {
        r.status = ProfileStatus::kCountersNotPermitted;
        r.message = "GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM); "
                    "run as root or set NVreg_RestrictProfilingToAdminUsers=0";
    } else if (has_csv) {
        r.status = ProfileStatus::kOk;
        if (exit_code != 0) r.message = "ncu exited with " + std::to_string(exit_code);
    } else if (contains(output, "No kernels were profiled")) {
        r.status = ProfileStatus::kNoKernelsProfiled;
        r.message = "ncu profiled no kernel (no GPU, or the kernel filter matched nothing)";
    } else if (std::string line = line_with(output, "==ERROR=="); !line.empty()) {
        r.status = ProfileStatus::kNcuFailed;
        r.message = line;
    } else if (exit_code != 0) {
        r.status = ProfileStatus::kTargetFailed;
        r.message = "the profiled program exited with " + std::to_string(exit_code) +
                    " and ncu reported no kernel";
    } else {
        r.status = ProfileStatus::kNoKernelsProfiled;
        r.message = "ncu printed no raw CSV page (no kernel profiled)";
    }
    return r;
}

std::vector<std::string> rejected_metrics(const std::string& output,
                                          const std::vector<std::string>& metrics) {
    std::vector<std::string> out;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        if (!contains(line, "ERROR")) continue;
        for (const std::string& m : metrics)
            if (contains(line, m) && std::find(out.begin(), out.end(), m) == out.end())
                out.push_back(m);
    }
    return out;
}

NcuRun run_ncu(const NcuOptions& options) {
    NcuOptions o = options;
    if (o.metrics.empty()) o.metrics = ncu_metrics();
    std::vector<std::string> dropped;
    for (int attempt = 0;; ++attempt) {
        std::vector<std::string> argv = ncu_command(o);
        auto proc = run_process(argv, o.timeout_s, o.cwd);
        if (!proc) {
            NcuRun r;
            r.status = ProfileStatus::kNcuMissing;
            r.message = "cannot run '" + o.ncu + "': " + proc.error().message;
            r.command = argv;
            return r;
        }
        NcuRun r = classify_ncu_output(proc->exit_code, proc->timed_out || proc->signaled,
                                       proc->output);
        r.command = argv;
        if (proc->signaled && !proc->timed_out) {
            r.status = ProfileStatus::kNcuFailed;
            r.message = "ncu was killed by a signal";
        }
        std::vector<std::string> bad = r.status == ProfileStatus::kNcuFailed
                                           ? rejected_metrics(proc->output, o.metrics)
                                           : std::vector<std::string>{};
        if (bad.empty() || attempt >= 8 || bad.size() == o.metrics.size()) {
            r.dropped_metrics = dropped;
            return r;
        }
        for (const std::string& m : bad) {
            dropped.push_back(m);
            o.metrics.erase(std::find(o.metrics.begin(), o.metrics.end(), m));
        }
    }
}

}  // namespace kforge::profile
