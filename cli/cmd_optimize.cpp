// `kforge optimize SPEC [--program START.kf] [--budget-wall S] [--budget-gpu S]
// [--budget-compiles N] [--rounds N] [--patience N] [--within-sol PCT] [--device sim|cuda|auto]
// [--db PATH] [--resume RUN] [--seed N] [-o|--out DIR] [--proposers a,b] [--llm CONFIG
// [--budget-tokens N] [--budget-cost USD]] [--profile-top N] [--ncu PATH]
// [--progress auto|tty|plain|json|none] [--json]`: the budget-aware
// search of search/loop.h on one problem (driver/optimize.h). Without a start program (no
// --program, no .kf beside the spec) the fusion planner synthesizes one (planner/plan.h). With
// --llm the LLM proposer joins the built-in ones until its budget is spent or its endpoint is
// dead. The best few candidates of each round are diagnosed (ncu on cuda, ptxas + SOL
// otherwise) for the diagnosis proposer and the LLM prompt. Without a budget or round limit the
// wall-clock budget is kDefaultWallBudgetS. Ctrl-C (SIGINT) or SIGTERM stops the search after the
// evaluation in flight: --out is written, the run marked interrupted, the --resume command
// printed, exit 128 + signal. Exit 0 a candidate passed, 1 none did, 2 user error, 3 env.
#include "cli/cmd_optimize.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/console.h"
#include "cli/llm_common.h"
#include "cli/progress.h"
#include "common/stop_request.h"
#include "driver/optimize.h"
#include "sol/sol_share.h"

#ifndef KFORGE_GIT_COMMIT
#define KFORGE_GIT_COMMIT ""
#endif

namespace kforge::cli {

void add_optimize_options(CLI::App* cmd, OptimizeArgs& a) {
    cmd->add_option("--program", a.program, "start program (default: SPEC's .kf beside it)");
    cmd->add_option("--budget-wall", a.budget_wall_s,
                    "wall-clock budget, seconds (optimize: 600 when no budget, --rounds or "
                    "--budget-* is given)");
    cmd->add_option("--budget-gpu", a.budget_gpu_s, "evaluation-time budget, seconds");
    cmd->add_option("--budget-compiles", a.budget_compiles,
                    "compiles, at least 1 (one per compile configuration; launch-knob variants of "
                    "a compiled program are free and still timed once it is spent)")
        ->check(CLI::Validator(
            [](const std::string& v) {
                char* end = nullptr;
                const long long n = std::strtoll(v.c_str(), &end, 10);
                return end && *end == '\0' && n >= 1
                           ? std::string()
                           : "must be at least 1, not " + v + " (the start program is a compile)";
            },
            "N >= 1"));
    cmd->add_option("--rounds", a.max_rounds, "round limit");
    cmd->add_option("--patience", a.patience, "stop after N rounds without improvement");
    cmd->add_option("--within-sol", a.within_sol_percent, "stop within PCT % of SOL");
    cmd->add_option("--device", a.device, "sim, cuda or auto (default)");
    cmd->add_option("--sim-model", a.sim_model, "device table entry the simulator models");
    cmd->add_option("--db", a.db, "store (default .kforge/kforge.db)")->envname("KFORGE_DB");
    cmd->add_option("--seed", a.seed, "search seed (default 1)");
    cmd->add_option("-o,--out", a.out, "folder for best.kf, best.cu, plan.json, evidence.json");
    CLI::Option* export_dir = cmd->add_option("--export", a.export_dir,
                    "export the best program when the search ends, as `kforge export RUN -o DIR` "
                    "would (a suite: DIR/<problem>)");
    cmd->add_option("--export-kernelbench", a.export_kernelbench,
                    "with --export: the KernelBench file the problem was imported from, or a "
                    "folder of them (writes model_new.py)")
        ->needs(export_dir);
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
    cmd->add_flag("--json", a.json, "print the result (or the error) as one JSON object; "
                                    "progress goes to stderr");
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
    o.kforge_version = KFORGE_VERSION;
    o.git_commit = KFORGE_GIT_COMMIT;
    // whole lines (a suite's rounds and notes never glue together); optimize shows a status line
    o.log = [json = a.json](const std::string& line) {
        std::FILE* to = json ? stderr : stdout;
        std::fprintf(to, "%s\n", line.c_str());
        std::fflush(to);
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

std::optional<driver::ExportRequest> export_request(const OptimizeArgs& a) {
    if (a.export_dir.empty()) return std::nullopt;
    driver::ExportRequest e;
    e.out_dir = a.export_dir;
    e.db = a.db;
    e.kernelbench = a.export_kernelbench;
    e.compile_cache_dir = default_compile_cache_dir();
    e.runtime_library = runtime_library("");
    e.python = python_options();
    return e;
}

driver::ProfileSettings profile_settings(const OptimizeArgs& a) {
    driver::ProfileSettings p;
    p.top = a.profile_top;
    p.ncu = a.ncu;
    p.kforge_executable = kforge_executable();
    return p;
}

namespace {

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./=:,+@%") == std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// The command line that continues run `run` with the limits and choices this one was given
// (a default budget is the default again).
std::string resume_command(const OptimizeArgs& a, int64_t run) {
    std::ostringstream c;
    auto num = [](double v) {
        std::ostringstream o;
        o << v;
        return o.str();
    };
    c << shell_quote(invoked_as()) << " optimize --resume " << run << " --db " << shell_quote(a.db);
    if (!a.out.empty()) c << " --out " << shell_quote(a.out);
    if (a.device != "auto") c << " --device " << a.device;
    if (a.sim_model != "h200") c << " --sim-model " << shell_quote(a.sim_model);
    if (a.budget_wall_s) c << " --budget-wall " << num(*a.budget_wall_s);
    if (a.budget_gpu_s) c << " --budget-gpu " << num(*a.budget_gpu_s);
    if (a.budget_compiles) c << " --budget-compiles " << *a.budget_compiles;
    if (a.max_rounds) c << " --rounds " << *a.max_rounds;
    if (a.patience) c << " --patience " << *a.patience;
    if (a.within_sol_percent) c << " --within-sol " << num(*a.within_sol_percent);
    if (a.seed != 1) c << " --seed " << a.seed;
    if (a.proposers != OptimizeArgs{}.proposers) {
        std::string list;
        for (const auto& p : a.proposers) list += (list.empty() ? "" : ",") + p;
        c << " --proposers " << shell_quote(list);
    }
    if (a.promote_ratio != OptimizeArgs{}.promote_ratio) c << " --promote-ratio " << num(a.promote_ratio);
    if (a.per_round != OptimizeArgs{}.per_round) c << " --per-round " << a.per_round;
    if (!a.llm.empty()) c << " --llm " << shell_quote(a.llm);
    if (a.budget_tokens) c << " --budget-tokens " << *a.budget_tokens;
    if (a.budget_cost) c << " --budget-cost " << num(*a.budget_cost);
    if (a.profile_top != 2) c << " --profile-top " << a.profile_top;
    if (a.ncu != "ncu") c << " --ncu " << shell_quote(a.ncu);
    if (a.progress != "auto") c << " --progress " << a.progress;
    if (a.json) c << " --json";
    if (!a.export_dir.empty()) c << " --export " << shell_quote(a.export_dir);
    if (!a.export_kernelbench.empty())
        c << " --export-kernelbench " << shell_quote(a.export_kernelbench);
    return c.str();
}

// The result of a run as JSON (--json, and the last event of --progress json).
nlohmann::ordered_json result_json(const search::SearchState& st, const OptimizeArgs& a) {
    nlohmann::ordered_json j{{"run", st.run_id},
                             {"problem", st.problem.name},
                             {"device", st.device_name},
                             {"simulated", st.simulated},
                             {"status", st.interrupted ? "interrupted" : "finished"},
                             {"stop_reason", st.stop_reason},
                             {"rounds", st.progress.rounds}};
    if (auto h = search::best_hash(st)) {
        const search::CandidateState& c = st.candidates.at(*h);
        const double t = c.full->median_ns;
        auto start = search::start_time_ns(st);
        j["best"] = {{"candidate", *h},
                     {"id", c.id},
                     {"time_ns", t},
                     {"ci95_ns", {c.full->ci95_low_ns, c.full->ci95_high_ns}},
                     {"samples", c.full->count},
                     {"sol_percent", sol_percent(sol_share(t * 1e-9, st.bounds.time_fused_s))},
                     {"under_sol_bound", sol_share(t * 1e-9, st.bounds.time_fused_s).under_bound},
                     {"speedup_vs_start", start ? nlohmann::ordered_json(*start / t) : nullptr},
                     {"tier", "full"}};
    } else {
        j["best"] = nullptr;
    }
    const search::TierCounts& n = st.counts;
    j["counts"] = {{"proposed", n.proposed}, {"quick", n.quick},   {"full", n.full},
                   {"invalid", n.invalid},   {"cached", n.cached}, {"profiled", n.profiled},
                   {"compiles", n.compiles}, {"free", n.free}};
    j["out"] = a.out.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.out);
    j["resume"] = st.interrupted ? nlohmann::ordered_json(resume_command(a, st.run_id)) : nullptr;
    return j;
}

int run_optimize(OptimizeArgs a) {
    const char* cmd = "optimize";
    install_stop_handlers();  // Ctrl-C: stop after the evaluation in flight (a second: now)
    if (a.proposers.empty() || a.promote_ratio <= 0 || a.promote_ratio > 1) {
        eprintf("kforge optimize: --promote-ratio must be in (0, 1] and a proposer given\n");
        return kExitUserError;
    }
    std::FILE* progress_out = a.json ? stderr : stdout;
    auto mode = progress_mode_flag("optimize", a.progress, progress_out);
    if (!mode) return kExitUserError;
    auto session = session_options(a);
    if (!session) return exit_code_of(driver::fail(driver::Exit::kUserError,
                                                   session.error().to_string()), cmd);
    const bool default_budget =
        !a.budget_wall_s && !a.budget_gpu_s && !a.budget_compiles && !a.max_rounds;
    auto printer = std::make_shared<ProgressPrinter>(*mode, progress_out);
    driver::OptimizeRequest r;
    r.spec = a.spec;
    r.program = a.program;
    r.resume = a.resume;
    r.out = a.out;
    r.session = std::move(*session);
    r.search = search_options(a);
    if (default_budget) r.search.budget.wall_s = kDefaultWallBudgetS;
    auto limits = std::make_shared<search::SearchOptions>(r.search);  // what the display reads
    r.search.log = [printer](const std::string& line) { printer->line(line); };
    r.search.on_event = [printer, limits](const search::ProgressEvent& e) {
        printer->event(e, *limits);
    };
    r.profile = profile_settings(a);
    r.export_to = export_request(a);
    const search::SearchState* state = nullptr;
    std::optional<nlohmann::ordered_json> result;
    r.on_start = [&](const search::SearchState& st) {
        state = &st;
        const std::string budget = budget_text(*limits) +
                                   (default_budget ? " (the default; set --budget-wall, "
                                                     "--budget-gpu, --budget-compiles or --rounds)"
                                                   : "");
        printer->json({{"event", "start"}, {"run", st.run_id}, {"problem", st.problem.name},
                       {"device", st.device_name}, {"simulated", st.simulated},
                       {"budget", budget}});
        if (printer->mode() != ProgressMode::kJson) printer->line("budget: " + budget);
    };
    r.log_done = [&] {
        printer->finish();
        if (state) result = result_json(*state, a);
    };
    r.resume_command = [&a](int64_t run) { return resume_command(a, run); };
    driver::Console console = console_for(cmd);
    const bool text_results = !a.json && *mode != ProgressMode::kJson;
    console.print = [text_results](const std::string& text) {
        std::FILE* to = text_results ? stdout : stderr;
        std::fputs(text.c_str(), to);
        std::fflush(to);
    };
    console.note = [printer](const std::string& line) {
        printer->line("kforge optimize: " + line, stderr);
    };
    const driver::Outcome outcome = driver::run_optimize(std::move(r), console);
    printer->finish();
    int rc = exit_code_of(outcome, cmd);
    if (stop_requested() && result) rc = interrupted_exit_code();
    if (result && (outcome.exit == driver::Exit::kOk || outcome.exit == driver::Exit::kFailure)) {
        (*result)["exit"] = rc;
        if (a.json) {
            print_json(*result);
        } else if (printer->mode() == ProgressMode::kJson) {
            nlohmann::ordered_json e{{"event", "result"}};
            e.update(*result);
            printer->json(e);
        }
    } else if (printer->mode() == ProgressMode::kJson && !a.json) {
        printer->json({{"event", "error"}, {"error", outcome.message}, {"exit", rc}});
    }
    return rc;
}

}  // namespace

void register_optimize(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("optimize", "search for the fastest correct program of a problem");
    cmd->add_option("spec", args->spec, "problem spec (JSON); not needed with --resume");
    cmd->add_option("--problem", args->spec, "the problem spec, as the positional SPEC");
    cmd->add_option("--resume", args->resume, "continue run RUN from the store (an interrupted "
                                               "one prints this command)");
    add_optimize_options(cmd, *args);
    cmd->add_option("--progress", args->progress,
                    "auto (a status line on a terminal, plain lines otherwise), tty, plain, json "
                    "(one JSON object per event) or none");
    cmd->callback([args] {
        if (args->spec.empty() && !args->resume) {
            eprintf("kforge optimize: a SPEC or --resume RUN is required\n");
            exit_code() = kExitUserError;
            return;
        }
        exit_code() = run_optimize(*args);
    });
}

}  // namespace kforge::cli
