// `kforge eval --problem SPEC --program PROG [--tier quick|full] [--device cuda|sim|auto]
// [--gpu N] [--sim-model h200] [--sim-fault F] [--baseline PROG] [--db PATH] [--json]`:
// evaluates one program through every gate (eval/evaluate.h) and prints the verdict with its
// evidence. `auto` picks the CUDA device when a GPU is usable, else the simulated device, and
// says so loudly. Exit 0 passed, 1 the candidate failed, 2 user error, 3 environment.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "eval/evaluate.h"
#include "problem/spec.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

struct EvalArgs {
    std::string problem_path;
    std::string program_path;
    std::string baseline_path;
    std::string tier = "quick";
    std::string device = "auto";
    std::string sim_model = "h200";
    std::string sim_fault = "none";
    int gpu = 0;
    std::string db;
    bool json = false;
    uint64_t seed = 1;
};

int user_error(const std::string& text) {
    std::fprintf(stderr, "kforge eval: %s\n", text.c_str());
    return kExitUserError;
}

bool read_file(const std::string& path, std::string& out) {
    std::ifstream in(path);
    if (!in) return false;
    std::stringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
}

std::string cache_dir() {
    if (const char* e = std::getenv("KFORGE_CACHE_DIR"); e && *e) return e;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kforge/cubin";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kforge/cubin";
    return "";
}

void print_text(const eval::EvalReport& r) {
    const char* sim = r.simulated ? " (simulated)" : "";
    std::printf("device: %s%s\n", r.device.name.c_str(), sim);
    std::printf("program %s, shapes %s, tier %s%s\n", r.program_hash.substr(0, 12).c_str(),
                r.shapes_key.c_str(), std::string(to_string(r.tier)).c_str(),
                r.cached ? " (from the evaluation cache)" : "");
    for (const eval::GateOutcome& g : r.gates) {
        const char* mark = g.skipped ? "skip" : g.passed ? "ok  " : "FAIL";
        std::printf("  [%s] %-18s %s\n", mark, g.gate.c_str(), g.message.c_str());
        if (!g.passed) std::printf("%s\n", g.evidence.dump(2).c_str());
    }
    if (r.stats.count > 0) {
        std::printf("time: median %.2f us, IQR %.2f us, 95%% CI [%.2f, %.2f] us, %d samples%s\n",
                    r.stats.median_ns / 1e3, r.stats.iqr_ns / 1e3, r.stats.ci95_low_ns / 1e3,
                    r.stats.ci95_high_ns / 1e3, r.stats.count, sim);
        double s = r.stats.median_ns * 1e-9;
        std::printf("work: %.3g FLOP, %.3g bytes -> %.2f TFLOP/s, %.1f GB/s%s\n", r.flops,
                    r.bytes, r.flops / s / 1e12, r.bytes / s / 1e9, sim);
        if (r.baseline_stats.count > 0)
            std::printf("baseline: median %.2f us -> speedup %.3fx%s\n",
                        r.baseline_stats.median_ns / 1e3,
                        r.baseline_stats.median_ns / r.stats.median_ns, sim);
    }
    if (!r.store_error.empty()) std::printf("warning: not stored: %s\n", r.store_error.c_str());
    std::printf("verdict: %s%s%s%s\n", std::string(to_string(r.status)).c_str(),
                r.message.empty() ? "" : " - ", r.message.c_str(), sim);
}

int run(const EvalArgs& a) {
    auto tier = eval_tier_from_string(a.tier);
    if (!tier) return user_error("--tier must be one of static, cost_model, compile, quick, full");
    auto fault = eval::sim_fault_from_string(a.sim_fault);
    if (!fault) return user_error("unknown --sim-fault '" + a.sim_fault + "'");
    if (a.device != "auto" && a.device != "cuda" && a.device != "sim")
        return user_error("--device must be cuda, sim or auto");
    auto problem = load_problem(a.problem_path);
    if (!problem) return user_error(problem.error().to_string());
    eval::EvalRequest request;
    request.problem = *problem;
    request.tier = *tier;
    request.sim_fault = *fault;
    request.seed = a.seed;
    request.program_file = a.program_path;
    request.compile_cache_dir = cache_dir();
    if (!read_file(a.program_path, request.program_text))
        return user_error("cannot read program file " + a.program_path);
    if (!a.baseline_path.empty()) {
        std::string text;
        if (!read_file(a.baseline_path, text))
            return user_error("cannot read baseline file " + a.baseline_path);
        request.baseline_program_text = text;
    }

    std::unique_ptr<eval::Device> device;
    if (a.device != "sim") {
        auto cuda = eval::make_cuda_device(a.gpu);
        if (cuda) device = std::move(*cuda);
        else if (a.device == "cuda") {
            std::fprintf(stderr, "kforge eval: no usable GPU: %s\n",
                         cuda.error().to_string().c_str());
            return kExitEnvironment;
        } else {
            std::fprintf(stderr, "kforge eval: *** no usable GPU (%s): using the SIMULATED device; "
                                 "times are model estimates, not measurements ***\n",
                         cuda.error().message.c_str());
        }
    }
    if (!device) {
        auto sim = eval::make_sim_device(a.sim_model);
        if (!sim) return user_error(sim.error().to_string());
        device = std::move(*sim);
    }
    std::optional<Store> store;
    if (!a.db.empty()) {
        auto opened = open_store(a.db);
        if (!opened) return user_error(opened.error().to_string());
        store.emplace(std::move(*opened));
        request.store = &*store;
    }
    eval::EvalReport report = eval::evaluate(*device, request);
    if (a.json) std::printf("%s\n", eval::to_json(report).dump(2).c_str());
    else print_text(report);
    if (report.environment_error) return kExitEnvironment;
    return report.status == EvalStatus::kPassed ? kExitOk : kExitFailure;
}

}  // namespace

void register_eval(CLI::App& app) {
    auto args = std::make_shared<EvalArgs>();
    auto* cmd = app.add_subcommand("eval", "evaluate a program through every gate");
    cmd->add_option("--problem", args->problem_path, "problem spec (JSON)")->required();
    cmd->add_option("--program", args->program_path, "program (kernel language)")->required();
    cmd->add_option("--tier", args->tier, "static, compile, quick (default) or full");
    cmd->add_option("--device", args->device, "cuda, sim or auto (default)");
    cmd->add_option("--gpu", args->gpu, "GPU index for the CUDA device (default 0)");
    cmd->add_option("--sim-model", args->sim_model, "device table entry the simulator models");
    cmd->add_option("--sim-fault", args->sim_fault, "fault the simulated device injects");
    cmd->add_option("--baseline", args->baseline_path, "baseline program, timed interleaved");
    cmd->add_option("--seed", args->seed, "input seed (default 1)");
    cmd->add_option("--db", args->db, "store: evaluation cache and results");
    cmd->add_flag("--json", args->json, "print the report as JSON");
    cmd->callback([args] { exit_code() = run(*args); });
}

}  // namespace kforge::cli
