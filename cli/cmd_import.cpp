// `kforge import kernelbench FILE... [-o DIR] [--policy P] [--atol X --rtol Y]
// [--allow-degenerate] [--timeout-s S] [--max-memory-mb M]`: turns KernelBench-format PyTorch
// modules into problem specs. The work is done by python/kforge_py/import_kernelbench.py
// (torch.fx tracing, op mapping, and a check of each spec's fp64 interpreter against the
// module); this command locates the Python (KFORGE_PYTHON or the project's .venv), checks the
// flags and passes its own path so the Python side can call `kforge check` and `kforge
// interpret`. Each file runs in a child process under the time and memory limits (their
// defaults are the Python side's). Exit 0 when every file imported, 1 when any failed
// (unsupported op, mismatch, degenerate problem, limit reached), 2 on bad flags, 3 when Python
// or PyTorch is missing.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "problem/problem.h"

namespace kforge::cli {
namespace {

struct ImportArgs {
    std::vector<std::string> files;
    std::string out_dir = ".";
    std::string policy;
    std::optional<double> atol;
    std::optional<double> rtol;
    bool allow_degenerate = false;
    std::optional<double> timeout_s;
    std::optional<double> max_memory_mb;
};

int run_import(const ImportArgs& a) {
    auto user_error = [](const std::string& m) {
        eprintf("kforge import: %s\n", m.c_str());
        return kExitUserError;
    };
    std::vector<std::string> args{"--kforge", kforge_executable(), "-o", a.out_dir};
    if (!a.policy.empty()) {
        if (!policy_from_string(a.policy))
            return user_error("--policy: unknown policy \"" + a.policy +
                              "\"; known policies: fp32_strict, tf32, bf16, fp16");
        args.insert(args.end(), {"--policy", a.policy});
    }
    for (auto [flag, v] : {std::pair{"--atol", a.atol}, std::pair{"--rtol", a.rtol}}) {
        if (!v) continue;
        if (!std::isfinite(*v) || *v < 0)
            return user_error(std::string(flag) + ": expected a finite number >= 0");
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        args.insert(args.end(), {flag, buf});
    }
    if (a.allow_degenerate) args.push_back("--allow-degenerate");
    if (a.timeout_s) {
        if (!std::isfinite(*a.timeout_s) || *a.timeout_s <= 0)
            return user_error("--timeout-s: expected a number of seconds > 0");
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *a.timeout_s);
        args.insert(args.end(), {"--timeout-s", buf});
    }
    if (a.max_memory_mb) {
        if (!(*a.max_memory_mb >= 1 && *a.max_memory_mb <= 1 << 30) ||
            *a.max_memory_mb != std::floor(*a.max_memory_mb))
            return user_error("--max-memory-mb: expected a whole number of MB >= 1");
        args.insert(args.end(),
                    {"--max-memory-mb", std::to_string(static_cast<long>(*a.max_memory_mb))});
    }
    args.insert(args.end(), a.files.begin(), a.files.end());
    auto run = driver::run_python_tool(python_options(), "kforge_py.import_kernelbench", args, false);
    if (!run) {
        eprintf("kforge import: %s\n", run.error().to_string().c_str());
        return kExitEnvironment;
    }
    return run->exit_code;
}

}  // namespace

void register_import(CLI::App& app) {
    auto* cmd = app.add_subcommand("import", "Import problems from other formats");
    cmd->require_subcommand(1);
    auto* kb = cmd->add_subcommand(
        "kernelbench", "KernelBench-format PyTorch modules -> problem specs (needs PyTorch)");
    static ImportArgs args;
    kb->add_option("files", args.files, "KernelBench .py files")->required();
    kb->add_option("-o,--out,--out-dir", args.out_dir, "folder for the specs (default .)");
    kb->add_option("--policy", args.policy,
                   "precision policy (default: from the input dtypes, fp32_strict for f32)");
    kb->add_option("--atol", args.atol, "absolute tolerance written into the specs");
    kb->add_option("--rtol", args.rtol, "relative tolerance written into the specs");
    kb->add_flag("--allow-degenerate", args.allow_degenerate,
                 "keep problems whose output is constant or ignores the inputs (exit 0)");
    kb->add_option("--timeout-s", args.timeout_s,
                   "wall-clock limit per file, in its child process (default 300)");
    kb->add_option("--max-memory-mb", args.max_memory_mb,
                   "address-space limit (RLIMIT_AS) per file's child process; PyTorch alone maps "
                   "~3.5 GB (default 8192)");
    kb->callback([] { exit_code() = run_import(args); });
}

}  // namespace kforge::cli
