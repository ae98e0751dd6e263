// `kforge optimize` as a library call (driver/optimize.h).
#include "driver/optimize.h"

#include <algorithm>
#include <filesystem>

#include "driver/llm_watch.h"
#include "driver/start_program.h"
#include "problem/spec.h"

namespace kforge::driver {
namespace {

void print(const Console& c, const std::string& text) {
    if (c.print) c.print(text);
}

void add_seed_proposer(std::vector<std::string>& proposers) {
    // the other seed variants, structurally different
    if (std::find(proposers.begin(), proposers.end(), "seed") == proposers.end())
        proposers.push_back("seed");
}

}  // namespace

Outcome run_optimize(OptimizeRequest r, const Console& console) {
    if (auto check = make_proposers(r.search.proposers); !check || check->empty())
        return fail(Exit::kUserError, check ? "" : check.error().to_string());
    auto opened = open_search_session(r.session, console);
    if (!opened.session) return opened.failure;
    auto& [backend, store, llm] = *opened.session;
    Expected<search::SearchState> state = make_error("", "");
    std::optional<Problem> problem;
    std::string start_text;
    if (r.resume) {
        state = search::resume_search(backend->evaluator(), *store, *r.resume);
    } else {
        auto loaded = load_problem(r.spec);
        if (!loaded) return fail(Exit::kUserError, loaded.error().to_string());
        auto start = start_program(r.spec, r.program, *loaded, backend->info());
        if (!start) return fail(Exit::kUserError, start.error().to_string());
        if (start->synthesized) {
            if (console.note)
                console.note("no start program: synthesized one from the problem (fusion plan: " +
                             start->fusion_plan + ")");
            add_seed_proposer(r.search.proposers);
        }
        problem = std::move(*loaded);
        start_text = std::move(start->text);
    }
    auto builtin = make_proposers(r.search.proposers);
    const std::vector<std::string> builtin_names = r.search.proposers;
    search::SearchOptions options = r.search;
    if (llm) options.proposers.insert(options.proposers.begin(), "llm");
    if (!r.resume)
        state = search::start_search(backend->evaluator(), *store, *problem, start_text, options);
    if (!state) return fail(Exit::kUserError, state.error().to_string());
    print(console, "run " + std::to_string(state->run_id) + " on " + state->device_name +
                       (state->simulated ? " (simulated)" : "") + "\n");
    if (r.on_start) r.on_start(*state);
    std::vector<search::Proposer*> ps;
    if (llm) {
        llm->set_run_id(state->run_id);
        ps.push_back(llm.get());
    }
    for (auto& p : *builtin) ps.push_back(p.get());
    LlmWatch watch(llm.get(), builtin_names, console.note);
    if (auto log = options.log) options.log = [log, &watch](const std::string& line) {
        log(line);
        watch.check();
    };
    if (auto on_event = options.on_event)
        options.on_event = [on_event, &watch](const search::ProgressEvent& e) {
            on_event(e);
            if (e.kind == search::ProgressEvent::Kind::kRound) watch.check();
        };
    const std::string work_dir = work_dir_for("optimize");
    search::SearchState* st = &*state;
    set_profile_hook(options, r.profile, state->simulated,
                     [st](const std::string& name) { return name == st->problem.name ? st : nullptr; },
                     work_dir);
    search::Spent spent;
    auto ran = search::run_search(*state, backend->evaluator(), *store, ps, options, spent);
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    if (!ran) {
        // A store that failed a write (a full disk, a damaged database) is the environment's
        // failure; the run is marked failed if the store still takes that much.
        (void)store->finish_run(state->run_id, RunStatus::kFailed);
        bool store_failed = ran.error().where == store->path();
        return {store_failed ? Exit::kEnvironment : Exit::kUserError, ran.error().to_string(),
                true};
    }
    if (r.log_done) r.log_done();
    watch.check();
    const RunStatus end = state->interrupted ? RunStatus::kInterrupted : RunStatus::kFinished;
    if (auto done = store->finish_run(state->run_id, end); !done)
        return {Exit::kEnvironment, done.error().to_string(), true};
    auto summary = search::write_outputs(*state, *store, r.out);
    if (!summary) return fail(Exit::kUserError, summary.error().to_string());
    print(console, *summary + watch.summary());
    if (state->interrupted) {
        const std::string resume = r.resume_command ? r.resume_command(state->run_id)
                                                    : "--resume " + std::to_string(state->run_id);
        print(console, "interrupted: run " + std::to_string(state->run_id) +
                           " is marked interrupted" +
                           (r.out.empty() ? "" : ", its best so far written to " + r.out) +
                           "; continue it with:\n  " + resume + "\n");
    }
    const bool passed = search::best_hash(*state).has_value();
    if (r.export_to && passed) {
        ExportResult exported = export_runs(*r.export_to, {{state->run_id, state->problem.name}},
                                            false, console);
        if (exported.outcome.exit != Exit::kOk) return exported.outcome;
    } else if (r.export_to) {
        if (console.note)
            console.note("nothing exported to " + r.export_to->out_dir +
                         ": no candidate passed every gate");
    }
    return {passed ? Exit::kOk : Exit::kFailure, "", false};
}

}  // namespace kforge::driver
