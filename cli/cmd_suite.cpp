// `kforge suite DIR [the options of optimize]`: one search per problem spec in DIR (each with a
// start program beside it), one shared budget; every round goes to the problem with the largest
// expected gain (SOL headroom x recent improvement), problems near SOL are deprioritized with
// the reason printed. Exit 0 when every problem has a passing candidate, 1 otherwise.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/cmd_optimize.h"
#include "cli/commands.h"
#include "problem/spec.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

int run_suite(const OptimizeArgs& a) {
    const char* cmd = "suite";
    std::error_code ec;
    if (!std::filesystem::is_directory(a.spec, ec)) {
        std::fprintf(stderr, "kforge suite: %s is not a folder\n", a.spec.c_str());
        return kExitUserError;
    }
    auto proposers = make_proposers(a, cmd);
    if (proposers.empty()) return kExitUserError;
    int rc = 0;
    auto device = open_device(a, cmd, rc);
    if (!device) return rc;
    auto store = open_store(a.db);
    if (!store) {
        std::fprintf(stderr, "kforge suite: %s\n", store.error().to_string().c_str());
        return kExitUserError;
    }
    search::SearchOptions options = search_options(a, cmd);
    options.suite = std::filesystem::path(a.spec).filename().string();
    std::vector<std::string> specs;
    for (const auto& e : std::filesystem::directory_iterator(a.spec, ec))
        if (e.path().extension() == ".json") specs.push_back(e.path().string());
    std::sort(specs.begin(), specs.end());
    std::vector<search::SearchState> states;
    std::vector<std::string> names;
    for (const std::string& spec : specs) {
        auto problem = load_problem(spec);
        auto text = start_program(spec, "");
        if (!problem || !text) {
            std::printf("skip %s: %s\n", spec.c_str(),
                        !problem ? problem.error().to_string().c_str() : "no start program beside it");
            continue;
        }
        auto st = search::start_search(*device, *store, *problem, *text, options);
        if (!st) {
            std::printf("skip %s: %s\n", spec.c_str(), st.error().to_string().c_str());
            continue;
        }
        names.push_back(problem->name);
        states.push_back(std::move(*st));
    }
    if (states.empty()) {
        std::fprintf(stderr, "kforge suite: no problem with a start program in %s\n", a.spec.c_str());
        return kExitUserError;
    }
    std::printf("suite %s: %zu problems on %s%s\n", options.suite.c_str(), states.size(),
                states[0].device_name.c_str(), states[0].simulated ? " (simulated)" : "");
    std::vector<search::Proposer*> ps;
    for (auto& p : proposers) ps.push_back(p.get());
    search::Spent spent;
    std::vector<bool> done(states.size(), false);
    auto t0 = std::chrono::steady_clock::now();
    while (true) {
        spent.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i])
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
        if (auto s = search::search_round(st, *device, *store, ps, options, spent); !s) {
            std::fprintf(stderr, "kforge suite: %s\n", s.error().to_string().c_str());
            return kExitUserError;
        }
        std::printf("%s\n", search::progress_line(st, options, spent).c_str());
        if (st.counts.proposed + st.counts.quick + st.counts.full == before) {
            done[*choice.next] = true;
            st.stop_reason = "the proposers have nothing new to propose";
        }
    }
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
    return all ? kExitOk : kExitFailure;
}

}  // namespace

void register_suite(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("suite", "optimize every problem of a folder under one budget");
    cmd->add_option("dir", args->spec, "folder of problem specs with start programs")->required();
    add_optimize_options(cmd, *args);
    cmd->callback([args] { exit_code() = run_suite(*args); });
}

}  // namespace kforge::cli
