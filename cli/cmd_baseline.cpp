// `kforge baseline SPEC... [--db PATH] [--run RUN] [--modes eager,compile_default,...]
// [--fp32-strict] [--iters N] [--warmup N] [--gpu N] [--json]`: times PyTorch eager and
// torch.compile (default, max-autotune) on the GPU for each problem, with the evaluator's
// protocol (python/kforge_py/baseline.py does the timing), and stores the samples as baseline
// measurements (report/baseline.h): one evaluation of a carrier candidate, proposer
// "baseline:pytorch", labels "baseline:<mode>", tier full, at the problem's full shapes_key,
// in RUN (which must be on this GPU), in the newest run over each problem (--latest-run), or in a
// new run per problem. Exit 0 when every mode was
// timed, 1 when a mode failed or disagreed with eager, 2 on bad input, 3 without a GPU, Python
// or PyTorch.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/console.h"
#include "driver/baseline.h"
#include "report/baseline.h"

namespace kforge::cli {
namespace {

struct BaselineArgs {
    std::vector<std::string> specs;
    std::string db;
    int64_t run_id = 0;
    bool latest_run = false;
    std::string modes = "eager,compile_default,compile_max_autotune";
    bool fp32_strict = false;
    int iters = 100;
    int warmup = 10;
    int gpu = 0;
    bool json = false;
};

int fail(const std::string& message, int rc) {
    eprintf("kforge baseline: %s\n", message.c_str());
    return rc;
}

void print_summary(const nlohmann::json& doc) {
    std::printf("PyTorch baselines on %s (torch %s)\n",
                doc["device"].value("name", "?").c_str(), doc.value("torch", "?").c_str());
    for (const auto& r : doc["results"]) {
        std::printf("%s (policy %s, tf32 %s):\n", r.value("problem", "?").c_str(),
                    r.value("policy", "?").c_str(),
                    r["settings"].value("cuda.matmul.allow_tf32", false) ? "on" : "off");
        for (const auto& [mode, m] : r["modes"].items()) {
            if (!m.contains("stats")) {
                std::printf("  %-22s %s: %s\n", mode.c_str(), m.value("status", "?").c_str(),
                            m.value("message", "").c_str());
                continue;
            }
            const auto& s = m["stats"];
            std::printf("  %-22s median %10.3f us  IQR %8.3f us  CI95 [%.3f, %.3f] us  n=%d%s\n",
                        mode.c_str(), s.value("median_ns", 0.0) / 1e3, s.value("iqr_ns", 0.0) / 1e3,
                        s["ci95_median_ns"][0].get<double>() / 1e3,
                        s["ci95_median_ns"][1].get<double>() / 1e3, s.value("n", 0),
                        m.value("status", "ok") == "ok" ? "" : "  (INCORRECT: not stored)");
        }
        if (r.contains("stored"))
            std::printf("  stored: run %lld, evaluation %lld\n",
                        static_cast<long long>(r["stored"].value("run_id", 0)),
                        static_cast<long long>(r["stored"].value("evaluation_id", 0)));
    }
}

int run_baseline(BaselineArgs a) {
    if (a.latest_run && a.run_id > 0)
        return fail("--run and --latest-run exclude each other", kExitUserError);
    std::set<std::string> known{std::string(report::kBaselineEager),
                                std::string(report::kBaselineCompileDefault),
                                std::string(report::kBaselineCompileMaxAutotune)};
    std::stringstream ss(a.modes);
    std::string mode;
    while (std::getline(ss, mode, ',')) {
        if (!known.count(mode))
            return fail("--modes: unknown mode \"" + mode +
                            "\"; known modes: eager, compile_default, compile_max_autotune",
                        kExitUserError);
    }
    if (a.iters < 50) return fail("--iters: the protocol needs a median of >= 50", kExitUserError);
    if (a.warmup < 1) return fail("--warmup: expected at least 1", kExitUserError);
    if (a.db.empty()) {
        const char* env = std::getenv("KFORGE_DB");
        a.db = env && *env ? env : ".kforge/kforge.db";
    }
    driver::BaselineRequest r;
    r.specs = a.specs;
    r.python = python_options();
    r.modes = a.modes;
    r.iters = a.iters;
    r.warmup = a.warmup;
    r.gpu = a.gpu;
    r.fp32_strict = a.fp32_strict;
    r.db = a.db;
    if (a.run_id > 0) r.run_id = a.run_id;
    r.latest_run = a.latest_run;
    driver::BaselineResult result = driver::run_baselines(r);
    if (result.outcome.exit == driver::Exit::kOk || result.outcome.exit == driver::Exit::kFailure) {
        if (a.json) print_json(result.doc);
        else print_summary(result.doc);
    }
    return exit_code_of(result.outcome, "baseline");
}

}  // namespace

void register_baseline(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "baseline", "Time PyTorch eager and torch.compile for problems on the GPU and store them");
    static BaselineArgs args;
    cmd->add_option("spec", args.specs, "problem spec files (JSON)")->required();
    cmd->add_option("--db", args.db, "store (default .kforge/kforge.db, or $KFORGE_DB)");
    cmd->add_option("--run", args.run_id, "store into this run (it must be on this GPU)");
    cmd->add_flag("--latest-run", args.latest_run,
                  "store each problem into the newest run over it (e.g. after `kforge suite`), "
                  "so `kforge report` shows the speedups; a new run where there is none");
    cmd->add_option("--modes", args.modes,
                    "comma-separated: eager, compile_default, compile_max_autotune (default all)");
    cmd->add_flag("--fp32-strict", args.fp32_strict,
                  "TF32 off and matmul precision 'highest' even for tf32 problems");
    cmd->add_option("--iters", args.iters, "timed iterations per mode (>= 50, default 100)");
    cmd->add_option("--warmup", args.warmup, "warm-up iterations per mode (default 10)");
    cmd->add_option("--gpu", args.gpu, "GPU index (default 0)");
    cmd->add_flag("--json", args.json, "print the measurements as JSON");
    cmd->callback([] { exit_code() = run_baseline(args); });
}

}  // namespace kforge::cli
