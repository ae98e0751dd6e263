// `kforge suite` as a library call (driver/suite.h).
#include "driver/suite.h"

#include <algorithm>
#include <filesystem>

#include "driver/llm_watch.h"
#include "driver/start_program.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "search/suite.h"

namespace kforge::driver {
namespace {

struct Entry {
    std::string spec;
    Problem problem;
    std::string text;
};

// The folder's *.json specs in name order, with their start programs; a problem that cannot
// be loaded or started is printed as skipped. A synthesized start adds the seed proposer.
std::vector<Entry> load_entries(const std::string& dir, const eval::DeviceInfo& device,
                                std::vector<std::string>& proposers, const Console& console) {
    std::error_code ec;
    std::vector<std::string> specs;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") specs.push_back(e.path().string());
    std::sort(specs.begin(), specs.end());
    std::vector<Entry> entries;
    for (const std::string& spec : specs) {
        auto problem = load_problem(spec);
        if (!problem) {
            if (console.print)
                console.print("skip " + spec + ": " + problem.error().to_string() + "\n");
            continue;
        }
        auto start = start_program(spec, "", *problem, device);
        if (!start) {
            if (console.print)
                console.print("skip " + spec + ": " + start.error().to_string() + "\n");
            continue;
        }
        if (start->synthesized) {
            if (console.note)
                console.note(problem->name + ": no start program: synthesized one from the "
                             "problem (fusion plan: " + start->fusion_plan + ")");
            if (std::find(proposers.begin(), proposers.end(), "seed") == proposers.end())
                proposers.push_back("seed");
        }
        entries.push_back({spec, std::move(*problem), std::move(start->text)});
    }
    return entries;
}

// The newest run of `problem` in suite `suite` that a stop interrupted (to resume), if any.
std::optional<int64_t> interrupted_run(Store& store, const std::string& suite,
                                       const std::string& problem) {
    auto runs = store.list_runs();
    if (!runs) return std::nullopt;
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->problem != problem || it->status != RunStatus::kInterrupted) continue;
        auto run = store.get_run(it->id);
        if (run && run->suite && *run->suite == suite) return it->id;
    }
    return std::nullopt;
}

// The fusion plan of a state's start program (its kernels, what each fuses).
std::string fusion_plan_of(const search::SearchState& st) {
    auto it = st.candidates.find(st.start_hash);
    if (it == st.candidates.end() || !it->second.program) return "?";
    return planner::describe_fusion_plan(*it->second.program);
}

}  // namespace

Outcome run_suite(SuiteRequest r, const Console& console) {
    auto print = [&console](const std::string& text) {
        if (console.print) console.print(text);
    };
    std::error_code ec;
    if (!std::filesystem::is_directory(r.dir, ec))
        return fail(Exit::kUserError, r.dir + " is not a folder");
    if (auto check = make_proposers(r.search.proposers); !check || check->empty())
        return fail(Exit::kUserError, check ? "" : check.error().to_string());
    // the wall budget holds from the first second: opening the backend (a GPU worker's start),
    // synthesizing the start programs and creating the runs count against it
    search::Spent spent;
    search::start_wall_clock(spent);
    auto opened = open_search_session(r.session, console);
    if (!opened.session) return opened.failure;
    auto& [backend, store, llm] = *opened.session;
    std::vector<Entry> entries = load_entries(r.dir, backend->info(), r.search.proposers, console);
    auto proposers = make_proposers(r.search.proposers);
    search::SearchOptions options = r.search;
    options.suite = std::filesystem::path(r.dir).filename().string();
    if (llm) options.proposers.insert(options.proposers.begin(), "llm");
    std::vector<search::SearchState> states;
    for (const Entry& e : entries) {
        // a run of this suite that a stop interrupted goes on where it stopped
        if (auto id = interrupted_run(*store, options.suite, e.problem.name)) {
            auto st = search::resume_search(backend->evaluator(), *store, *id);
            if (st) {
                print("resume " + e.problem.name + ": run " + std::to_string(*id) +
                      " (interrupted)\n");
                states.push_back(std::move(*st));
                continue;
            }
            print("resume " + e.problem.name + ": run " + std::to_string(*id) +
                  " cannot be resumed (" + st.error().to_string() + "): a new run\n");
        }
        auto st = search::start_search(backend->evaluator(), *store, e.problem, e.text, options);
        if (!st) {
            print("skip " + e.spec + ": " + st.error().to_string() + "\n");
            continue;
        }
        states.push_back(std::move(*st));
    }
    if (states.empty())
        return fail(Exit::kUserError, "no problem in " + r.dir + " could be started");
    print("suite " + options.suite + ": " + std::to_string(states.size()) + " problems on " +
          states[0].device_name + (states[0].simulated ? " (simulated)" : "") + "\n");
    std::vector<search::Proposer*> ps;
    if (llm) ps.push_back(llm.get());
    for (auto& p : *proposers) ps.push_back(p.get());
    LlmWatch watch(llm.get(), r.search.proposers, console.note);
    const std::string work_dir = work_dir_for("suite");
    set_profile_hook(options, r.profile, states[0].simulated,
                     [&states](const std::string& name) -> const search::SearchState* {
                         for (const auto& s : states)
                             if (s.problem.name == name) return &s;
                         return nullptr;
                     },
                     work_dir);
    search::SuiteHooks hooks;
    hooks.passed_over = [&print](const std::string& reason) { print("  " + reason + "\n"); };
    hooks.before_round = [&llm](search::SearchState& st) {
        if (!llm) return;
        llm->set_run_id(st.run_id);
        llm->set_problem(st.problem.name);
    };
    hooks.after_round = [&](const search::SearchState& st, const search::Spent& spent) {
        print(search::progress_line(st, options, spent) + "\n");
        watch.check();
    };
    hooks.start.print = print;
    hooks.progress = r.on_progress;
    search::tick(spent);  // run_suite's clock goes on from here
    auto ran = search::run_suite(states, backend->evaluator(), *store, ps, options, spent, hooks);
    std::filesystem::remove_all(work_dir, ec);
    if (!ran) return fail(Exit::kUserError, ran.error().to_string());
    bool all = true;
    std::string not_reached, without_best;
    int interrupted = 0;
    for (search::SearchState& st : states) {
        const bool stopped = st.stop_reason.rfind("interrupted", 0) == 0;
        interrupted += stopped ? 1 : 0;
        (void)store->finish_run(st.run_id, stopped ? RunStatus::kInterrupted : RunStatus::kFinished);
        std::string out =
            r.out.empty() ? "" : (std::filesystem::path(r.out) / st.problem.name).string();
        auto summary = search::write_outputs(st, *store, out);
        if (!summary) return fail(Exit::kUserError, summary.error().to_string());
        print("\n" + *summary);
        if (!search::best_hash(st)) {
            all = false;
            without_best += (without_best.empty() ? "" : ", ") + st.problem.name;
        }
        if (st.stop_reason.rfind("not reached", 0) == 0)
            not_reached += "  " + st.problem.name + " (fusion plan: " + fusion_plan_of(st) + ")\n";
    }
    if (!not_reached.empty())
        print("\nnot reached within the wall budget (start program not compiled and timed):\n" +
              not_reached);
    print(watch.summary());
    if (r.export_to) {
        std::vector<std::pair<int64_t, std::string>> runs;
        for (const search::SearchState& st : states)
            if (search::best_hash(st)) runs.emplace_back(st.run_id, st.problem.name);
        if (runs.size() < states.size())
            print(std::to_string(states.size() - runs.size()) +
                  " problem(s) without a passing candidate: not exported\n");
        ExportResult e = export_runs(*r.export_to, runs, true, console);
        if (e.outcome.exit != Exit::kOk) return e.outcome;
    }
    if (interrupted > 0)
        return fail(Exit::kFailure, "interrupted: " + std::to_string(interrupted) +
                                        " run(s) marked interrupted; the same command resumes "
                                        "them");
    if (!all)  // the exit status says why: no problem ends a suite with a bare 1
        return fail(Exit::kFailure, "no candidate passed the full tier for: " + without_best);
    return {Exit::kOk, "", false};
}

}  // namespace kforge::driver
