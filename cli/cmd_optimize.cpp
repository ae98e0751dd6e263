// `kforge optimize SPEC [--program START.kf] [--budget-wall S] [--budget-gpu S]
// [--budget-compiles N] [--rounds N] [--patience N] [--within-sol PCT] [--device sim|cuda|auto]
// [--db PATH] [--resume RUN] [--seed N] [--out DIR] [--proposers a,b] [--llm CONFIG
// [--budget-tokens N] [--budget-cost USD]] [--profile-top N] [--ncu PATH]`: the budget-aware
// search of search/loop.h on one problem. Without a start program (no --program, no .kf beside
// the spec) the fusion planner synthesizes one (planner/plan.h). With --llm the LLM proposer
// joins the built-in ones until its budget is spent or its endpoint is dead. The best few
// candidates of each round are diagnosed (ncu on cuda, ptxas + SOL otherwise) for the diagnosis
// proposer and the LLM prompt. Exit 0 a candidate passed, 1 none did, 2 user error, 3 env.
#include "cli/cmd_optimize.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/eval_backend.h"
#include "cli/llm_common.h"
#include "cli/optimize_profile.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/proposers.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "store/store.h"

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

search::SearchOptions search_options(const OptimizeArgs& a, const char*) {
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

std::vector<std::unique_ptr<search::Proposer>> make_proposers(const OptimizeArgs& a, const char* cmd) {
    std::vector<std::unique_ptr<search::Proposer>> out;
    for (const std::string& n : a.proposers) {
        auto p = search::make_builtin_proposer(n);
        if (!p) {
            std::fprintf(stderr, "kforge %s: unknown proposer '%s' (parameter, diagnosis, random, "
                                 "seed; the LLM joins with --llm CONFIG)\n", cmd, n.c_str());
            return {};
        }
        out.push_back(std::move(p));
    }
    return out;
}

Expected<StartProgram> start_program(const std::string& spec, const std::string& program,
                                     const Problem& problem, const eval::DeviceInfo& device) {
    std::string path = program;
    if (path.empty()) {
        path = spec;
        if (path.size() > 5 && path.substr(path.size() - 5) == ".json") path.resize(path.size() - 5);
        path += ".kf";
    }
    if (std::ifstream in(path); in) {
        std::stringstream s;
        s << in.rdbuf();
        return StartProgram{s.str(), false, ""};
    }
    if (!program.empty()) return make_error(program, "cannot read the start program");
    auto spec_entry = find_device(device.datasheet_key);
    if (!spec_entry) return spec_entry.error();
    auto seeded = planner::seed_program(problem, dsl::device_limits(*spec_entry));
    if (!seeded) {
        Error e = seeded.error();
        e.message = "no start program (no --program, no " + path + ") and none can be "
                    "synthesized: " + e.message;
        return e;
    }
    return StartProgram{dsl::print_canonical(*seeded), true, planner::describe_fusion_plan(*seeded)};
}

std::unique_ptr<llm::LlmProposer> make_llm(const OptimizeArgs& a, Store& store, const char* cmd,
                                           int& rc) {
    rc = kExitOk;
    if (a.llm.empty()) {
        if (a.budget_tokens || a.budget_cost) {
            std::fprintf(stderr, "kforge %s: --budget-tokens/--budget-cost limit the LLM: give "
                                 "--llm CONFIG too\n", cmd);
            rc = kExitUserError;
        }
        return nullptr;
    }
    auto p = make_search_llm_proposer(a.llm, {a.budget_tokens, a.budget_cost}, &store);
    if (!p) {
        std::fprintf(stderr, "kforge %s: %s\n", cmd, p.error().to_string().c_str());
        rc = kExitUserError;
        return nullptr;
    }
    return std::move(*p);
}

void set_profile_hook(search::SearchOptions& options, const OptimizeArgs& a, bool simulated,
                      std::function<const search::SearchState*(const std::string&)> find_state,
                      const std::string& work_dir) {
    options.profile_top = a.profile_top;
    if (a.profile_top <= 0) return;
    ProfileHookOptions p;
    p.use_ncu = !simulated;
    p.ncu = a.ncu;
    p.compile_cache_dir = options.compile_cache_dir;
    p.work_dir = work_dir;
    auto log = options.log;
    p.log = [log](const std::string& line) {
        if (log) log("  " + line);
    };
    options.profile_hook = make_profile_hook(std::move(find_state), std::move(p));
}

namespace {

std::string work_dir_for(const char* cmd) {
    return (std::filesystem::temp_directory_path() /
            ("kforge-" + std::string(cmd) + "-" + std::to_string(::getpid())))
        .string();
}

int run_optimize(OptimizeArgs a) {
    const char* cmd = "optimize";
    if (a.proposers.empty() || a.promote_ratio <= 0 || a.promote_ratio > 1) {
        std::fprintf(stderr, "kforge optimize: --promote-ratio must be in (0, 1] and a proposer given\n");
        return kExitUserError;
    }
    if (make_proposers(a, cmd).empty()) return kExitUserError;
    int rc = 0;
    auto session = open_search_session(a, cmd, rc);
    if (!session) return rc;
    auto& [backend, store, llm] = *session;
    Expected<search::SearchState> state = make_error("", "");
    std::optional<Problem> problem;
    std::string start_text;
    if (a.resume) {
        state = search::resume_search(backend->evaluator(), *store, *a.resume);
    } else {
        auto loaded = load_problem(a.spec);
        if (!loaded) {
            std::fprintf(stderr, "kforge optimize: %s\n", loaded.error().to_string().c_str());
            return kExitUserError;
        }
        auto start = start_program(a.spec, a.program, *loaded, backend->info());
        if (!start) {
            std::fprintf(stderr, "kforge optimize: %s\n", start.error().to_string().c_str());
            return kExitUserError;
        }
        if (start->synthesized) {
            std::fprintf(stderr, "kforge optimize: no start program: synthesized one from the "
                                 "problem (fusion plan: %s)\n", start->fusion_plan.c_str());
            if (std::find(a.proposers.begin(), a.proposers.end(), "seed") == a.proposers.end())
                a.proposers.push_back("seed");  // the other seed variants, structurally different
        }
        problem = std::move(*loaded);
        start_text = std::move(start->text);
    }
    auto builtin = make_proposers(a, cmd);
    search::SearchOptions options = search_options(a, cmd);
    if (llm) options.proposers.insert(options.proposers.begin(), "llm");
    if (!a.resume) state = search::start_search(backend->evaluator(), *store, *problem, start_text, options);
    if (!state) {
        std::fprintf(stderr, "kforge optimize: %s\n", state.error().to_string().c_str());
        return kExitUserError;
    }
    std::printf("run %lld on %s%s\n", (long long)state->run_id, state->device_name.c_str(),
                state->simulated ? " (simulated)" : "");
    std::vector<search::Proposer*> ps;
    if (llm) {
        llm->set_run_id(state->run_id);
        ps.push_back(llm.get());
    }
    for (auto& p : builtin) ps.push_back(p.get());
    LlmWatch watch(llm.get(), cmd, a.proposers);
    if (auto log = options.log) options.log = [log, &watch](const std::string& line) {
        log(line);
        watch.check();
    };
    const std::string work_dir = work_dir_for(cmd);
    search::SearchState* st = &*state;
    set_profile_hook(options, a, state->simulated,
                     [st](const std::string& name) { return name == st->problem.name ? st : nullptr; },
                     work_dir);
    search::Spent spent;
    auto ran = search::run_search(*state, backend->evaluator(), *store, ps, options, spent);
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    if (!ran) {
        std::fprintf(stderr, "\nkforge optimize: %s\n", ran.error().to_string().c_str());
        return kExitUserError;
    }
    if (isatty(fileno(stdout))) std::printf("\n");
    watch.check();
    (void)store->finish_run(state->run_id, RunStatus::kFinished);
    auto summary = search::write_outputs(*state, *store, a.out);
    if (!summary) {
        std::fprintf(stderr, "kforge optimize: %s\n", summary.error().to_string().c_str());
        return kExitUserError;
    }
    std::printf("%s%s", summary->c_str(), watch.summary().c_str());
    return search::best_hash(*state) ? kExitOk : kExitFailure;
}

}  // namespace

void register_optimize(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("optimize", "search for the fastest correct program of a problem");
    cmd->add_option("spec", args->spec, "problem spec (JSON); not needed with --resume");
    cmd->add_option("--resume", args->resume, "continue run RUN from the store");
    add_optimize_options(cmd, *args);
    cmd->callback([args, cmd] {
        if (args->spec.empty() && !args->resume) {
            std::fprintf(stderr, "kforge optimize: a SPEC or --resume RUN is required\n");
            exit_code() = kExitUserError;
            return;
        }
        (void)cmd;
        exit_code() = run_optimize(*args);
    });
}

}  // namespace kforge::cli
