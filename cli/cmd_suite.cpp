// `kforge suite DIR [the options of optimize]`: one search per problem spec in DIR (from the
// start program beside it, or from one the fusion planner synthesizes), one shared budget; every
// round goes to the problem with the largest expected gain (SOL headroom x recent improvement),
// problems near SOL are deprioritized with the reason printed. --llm adds the LLM proposer, one
// for the whole suite (its run budget is the suite's). Exit 0 when every problem has a passing
// candidate, 1 otherwise.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/cmd_optimize.h"
#include "cli/commands.h"
#include "cli/eval_backend.h"
#include "cli/llm_common.h"
#include "problem/spec.h"
#include "store/store.h"

namespace kforge::cli {

std::optional<SearchSession> open_search_session(const OptimizeArgs& a, const char* cmd, int& rc) {
    SearchSession s;
    s.backend = EvalBackend::open(a.device, a.sim_model, cmd, rc);
    if (!s.backend) return std::nullopt;
    std::error_code ec;
    auto parent = std::filesystem::path(a.db).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    auto store = open_store(a.db);
    if (!store) {
        std::fprintf(stderr, "kforge %s: %s\n", cmd, store.error().to_string().c_str());
        rc = kExitUserError;
        return std::nullopt;
    }
    s.store = std::make_unique<Store>(std::move(*store));
    s.llm = make_llm(a, *s.store, cmd, rc);
    if (rc != kExitOk) return std::nullopt;
    return s;
}

namespace {

int run_suite(OptimizeArgs a) {
    const char* cmd = "suite";
    std::error_code ec;
    if (!std::filesystem::is_directory(a.spec, ec)) {
        std::fprintf(stderr, "kforge suite: %s is not a folder\n", a.spec.c_str());
        return kExitUserError;
    }
    if (make_proposers(a, cmd).empty()) return kExitUserError;
    int rc = 0;
    auto session = open_search_session(a, cmd, rc);
    if (!session) return rc;
    auto& [backend, store, llm] = *session;
    std::vector<std::string> specs;
    for (const auto& e : std::filesystem::directory_iterator(a.spec, ec))
        if (e.path().extension() == ".json") specs.push_back(e.path().string());
    std::sort(specs.begin(), specs.end());
    struct Entry {
        std::string spec;
        Problem problem;
        std::string text;
    };
    std::vector<Entry> entries;
    for (const std::string& spec : specs) {
        auto problem = load_problem(spec);
        if (!problem) {
            std::printf("skip %s: %s\n", spec.c_str(), problem.error().to_string().c_str());
            continue;
        }
        auto start = start_program(spec, "", *problem, backend->info());
        if (!start) {
            std::printf("skip %s: %s\n", spec.c_str(), start.error().to_string().c_str());
            continue;
        }
        if (start->synthesized) {
            std::fprintf(stderr, "kforge suite: %s: no start program: synthesized one from the "
                                 "problem (fusion plan: %s)\n", problem->name.c_str(),
                         start->fusion_plan.c_str());
            if (std::find(a.proposers.begin(), a.proposers.end(), "seed") == a.proposers.end())
                a.proposers.push_back("seed");
        }
        entries.push_back({spec, std::move(*problem), std::move(start->text)});
    }
    auto proposers = make_proposers(a, cmd);
    search::SearchOptions options = search_options(a, cmd);
    options.suite = std::filesystem::path(a.spec).filename().string();
    if (llm) options.proposers.insert(options.proposers.begin(), "llm");
    std::vector<search::SearchState> states;
    std::vector<std::string> names;
    for (const Entry& e : entries) {
        const std::string& spec = e.spec;
        auto st = search::start_search(backend->evaluator(), *store, e.problem, e.text, options);
        if (!st) {
            std::printf("skip %s: %s\n", spec.c_str(), st.error().to_string().c_str());
            continue;
        }
        names.push_back(e.problem.name);
        states.push_back(std::move(*st));
    }
    if (states.empty()) {
        std::fprintf(stderr, "kforge suite: no problem in %s could be started\n", a.spec.c_str());
        return kExitUserError;
    }
    std::printf("suite %s: %zu problems on %s%s\n", options.suite.c_str(), states.size(),
                states[0].device_name.c_str(), states[0].simulated ? " (simulated)" : "");
    std::vector<search::Proposer*> ps;
    if (llm) ps.push_back(llm.get());
    for (auto& p : proposers) ps.push_back(p.get());
    LlmWatch watch(llm.get(), cmd, a.proposers);
    const std::string work_dir = (std::filesystem::temp_directory_path() /
                                  ("kforge-suite-" + std::to_string(::getpid()))).string();
    set_profile_hook(options, a, states[0].simulated,
                     [&states](const std::string& name) -> const search::SearchState* {
                         for (const auto& s : states)
                             if (s.problem.name == name) return &s;
                         return nullptr;
                     },
                     work_dir);
    search::Spent spent;
    search::start_wall_clock(spent);  // the starts' compiles count against the budget
    std::vector<search::SearchState*> starts;
    for (auto& s : states) starts.push_back(&s);
    search::precompile_starts(starts, backend->evaluator(), options, spent);
    std::vector<bool> done(states.size(), false);
    while (true) {
        search::tick(spent);
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i] && states[i].progress.rounds > 0)  // every start is evaluated once
                if (auto why = search::should_stop(options.stop, states[i].progress, options.budget, spent)) {
                    done[i] = true;
                    states[i].stop_reason = *why;
                }
        std::vector<search::Progress> progress;
        for (const auto& s : states) progress.push_back(s.progress);
        search::SuiteChoice choice = search::choose_next_problem(progress, done, names);
        if (!choice.next) break;
        for (const std::string& r : choice.reasons) std::printf("  %s\n", r.c_str());
        search::SearchState& st = states[*choice.next];
        int64_t before = st.counts.proposed + st.counts.quick + st.counts.full;
        if (llm) {
            llm->set_run_id(st.run_id);
            llm->set_problem(st.problem.name);
        }
        if (auto s = search::search_round(st, backend->evaluator(), *store, ps, options, spent); !s) {
            std::fprintf(stderr, "kforge suite: %s\n", s.error().to_string().c_str());
            return kExitUserError;
        }
        std::printf("%s\n", search::progress_line(st, options, spent).c_str());
        watch.check();
        if (!st.budget_stop.empty()) {
            done[*choice.next] = true;
            st.stop_reason = st.budget_stop;
        } else if (st.counts.proposed + st.counts.quick + st.counts.full == before) {
            done[*choice.next] = true;
            st.stop_reason = "the proposers have nothing new to propose";
        }
    }
    std::filesystem::remove_all(work_dir, ec);
    bool all = true;
    for (size_t i = 0; i < states.size(); ++i) {
        (void)store->finish_run(states[i].run_id, RunStatus::kFinished);
        std::string out = a.out.empty() ? "" : (std::filesystem::path(a.out) / names[i]).string();
        auto summary = search::write_outputs(states[i], *store, out);
        if (!summary) {
            std::fprintf(stderr, "kforge suite: %s\n", summary.error().to_string().c_str());
            return kExitUserError;
        }
        std::printf("\n%s", summary->c_str());
        all = all && search::best_hash(states[i]).has_value();
    }
    std::printf("%s", watch.summary().c_str());
    return all ? kExitOk : kExitFailure;
}

}  // namespace

void register_suite(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("suite", "optimize every problem of a folder under one budget");
    cmd->add_option("dir", args->spec, "folder of problem specs (start programs beside them "
                                       "optional)")->required();
    add_optimize_options(cmd, *args);
    cmd->callback([args] { exit_code() = run_suite(*args); });
}

}  // namespace kforge::cli
