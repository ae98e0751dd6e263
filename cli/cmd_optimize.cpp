// `kforge optimize SPEC [--program START.kf] [--budget-wall S] [--budget-gpu S]
// [--budget-compiles N] [--rounds N] [--patience N] [--within-sol PCT] [--device sim|cuda|auto]
// [--db PATH] [--resume RUN] [--seed N] [--out DIR] [--proposers a,b] [--llm CONFIG
// [--budget-tokens N] [--budget-cost USD]] [--profile-top N] [--ncu PATH]`: the budget-aware
// search of search/loop.h on one problem (driver/optimize.h). Without a start program (no
// --program, no .kf beside the spec) the fusion planner synthesizes one (planner/plan.h). With
// --llm the LLM proposer joins the built-in ones until its budget is spent or its endpoint is
// dead. The best few candidates of each round are diagnosed (ncu on cuda, ptxas + SOL
// otherwise) for the diagnosis proposer and the LLM prompt. Exit 0 a candidate passed, 1 none
// did, 2 user error, 3 env.
#include "cli/cmd_optimize.h"

#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/console.h"
#include "cli/llm_common.h"
#include "driver/optimize.h"

namespace kforge::cli {

void add_optimize_options(CLI::App* cmd, OptimizeArgs& a) {
    cmd->add_option("--program", a.program, "start program (default: SPEC's .kf beside it)");
    cmd->add_option("--budget-wall", a.budget_wall_s, "wall-clock budget, seconds");
    cmd->add_option("--budget-gpu", a.budget_gpu_s, "evaluation-time budget, seconds");
    cmd->add_option("--budget-compiles", a.budget_compiles, "compilation budget");
    cmd->add_option("--rounds", a.max_rounds, "round limit");
    cmd->add_option("--patience", a.patience, "stop after N rounds without improvement");
    cmd->add_option("--within-sol", a.within_sol_percent, "stop within PCT % of SOL");
    cmd->add_option("--device", a.device, "sim, cuda or auto (default)");
    cmd->add_option("--sim-model", a.sim_model, "device table entry the simulator models");
    cmd->add_option("--db", a.db, "store (default .kforge/kforge.db)")->envname("KFORGE_DB");
    cmd->add_option("--seed", a.seed, "search seed (default 1)");
    cmd->add_option("--out", a.out, "folder for best.kf, best.cu, plan.json, evidence.json");
    cmd->add_option("--proposers", a.proposers, "parameter, diagnosis, random, seed")
        ->delimiter(',');
    cmd->add_option("--promote-ratio", a.promote_ratio, "fraction promoted at each cut (1/3)");
    cmd->add_option("--per-round", a.per_round, "proposals asked of each proposer per round");
    cmd->add_option("--llm", a.llm, "LLM config (JSON, docs/llm.md): add the LLM proposer");
    cmd->add_option("--budget-tokens", a.budget_tokens, "LLM tokens (in + out) for the run");
    cmd->add_option("--budget-cost", a.budget_cost, "LLM cost for the run, USD");
    cmd->add_option("--profile-top", a.profile_top,
                    "best candidates diagnosed per round (default 2; 0: none)");
    cmd->add_option("--ncu", a.ncu, "path of ncu for the diagnosis on cuda (default: on PATH)");
}

search::SearchOptions search_options(const OptimizeArgs& a) {
    search::SearchOptions o;
    o.budget.wall_s = a.budget_wall_s;
    o.budget.gpu_s = a.budget_gpu_s;
    o.budget.compiles = a.budget_compiles;
    o.stop.max_rounds = a.max_rounds;
    o.stop.patience_rounds = a.patience;
    o.stop.within_sol_percent = a.within_sol_percent;
    o.seed = a.seed;
    o.proposers = a.proposers;
    o.promote_ratio = a.promote_ratio;
    o.proposals_per_round = a.per_round;
    o.compile_cache_dir = default_compile_cache_dir();
    bool tty = isatty(fileno(stdout));
    o.log = [tty](const std::string& line) {
        if (tty) std::printf("\r\033[K%s", line.c_str());
        else std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    };
    return o;
}

Expected<driver::SearchSessionOptions> session_options(const OptimizeArgs& a) {
    auto device = driver::device_choice_from_string(a.device);
    if (!device) return make_error("", "--device must be cuda, sim or auto");
    driver::SearchSessionOptions s;
    s.backend.device = *device;
    s.backend.sim_model = a.sim_model;
    s.backend.worker_executable = kforge_executable();
    s.db = a.db;
    s.make_llm = [a](Store& store) -> Expected<std::unique_ptr<llm::LlmProposer>> {
        if (a.llm.empty()) {
            if (a.budget_tokens || a.budget_cost)
                return make_error("", "--budget-tokens/--budget-cost limit the LLM: give --llm "
                                      "CONFIG too");
            return std::unique_ptr<llm::LlmProposer>();
        }
        return make_search_llm_proposer(a.llm, {a.budget_tokens, a.budget_cost}, &store);
    };
    return s;
}

driver::ProfileSettings profile_settings(const OptimizeArgs& a) {
    driver::ProfileSettings p;
    p.top = a.profile_top;
    p.ncu = a.ncu;
    p.kforge_executable = kforge_executable();
    return p;
}

namespace {

int run_optimize(const OptimizeArgs& a) {
    const char* cmd = "optimize";
    if (a.proposers.empty() || a.promote_ratio <= 0 || a.promote_ratio > 1) {
        std::fprintf(stderr, "kforge optimize: --promote-ratio must be in (0, 1] and a proposer given\n");
        return kExitUserError;
    }
    auto session = session_options(a);
    if (!session) return exit_code_of(driver::fail(driver::Exit::kUserError,
                                                   session.error().to_string()), cmd);
    driver::OptimizeRequest r;
    r.spec = a.spec;
    r.program = a.program;
    r.resume = a.resume;
    r.out = a.out;
    r.session = std::move(*session);
    r.search = search_options(a);
    r.profile = profile_settings(a);
    r.log_done = [] {
        if (isatty(fileno(stdout))) std::printf("\n");
    };
    return exit_code_of(driver::run_optimize(std::move(r), console_for(cmd)), cmd);
}

}  // namespace

void register_optimize(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("optimize", "search for the fastest correct program of a problem");
    cmd->add_option("spec", args->spec, "problem spec (JSON); not needed with --resume");
    cmd->add_option("--resume", args->resume, "continue run RUN from the store");
    add_optimize_options(cmd, *args);
    cmd->callback([args] {
        if (args->spec.empty() && !args->resume) {
            std::fprintf(stderr, "kforge optimize: a SPEC or --resume RUN is required\n");
            exit_code() = kExitUserError;
            return;
        }
        exit_code() = run_optimize(*args);
    });
}

}  // namespace kforge::cli
