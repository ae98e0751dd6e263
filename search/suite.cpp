// The suite loop (search/suite.h).
#include "search/suite.h"

namespace kforge::search {
namespace {

int64_t work_done(const SearchState& s) {
    return s.counts.proposed + s.counts.quick + s.counts.full;
}

}  // namespace

Status run_suite(std::vector<SearchState>& states, eval::Evaluator& evaluator, Store& store,
                 const std::vector<Proposer*>& proposers, const SearchOptions& options,
                 Spent& spent, const SuiteHooks& hooks) {
    std::vector<std::string> names;
    for (const SearchState& s : states) names.push_back(s.problem.name);
    start_wall_clock(spent);  // the starts' compiles count against the budget
    std::vector<SearchState*> starts;
    for (SearchState& s : states) starts.push_back(&s);
    precompile_starts(starts, evaluator, options, spent);
    std::vector<bool> done(states.size(), false);
    while (true) {
        tick(spent);
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i] && states[i].progress.rounds > 0)  // every start is evaluated once
                if (auto why = should_stop(options.stop, states[i].progress, options.budget, spent)) {
                    done[i] = true;
                    states[i].stop_reason = *why;
                }
        std::vector<Progress> progress;
        for (const SearchState& s : states) progress.push_back(s.progress);
        SuiteChoice choice = choose_next_problem(progress, done, names);
        if (!choice.next) break;
        if (hooks.passed_over)
            for (const std::string& r : choice.reasons) hooks.passed_over(r);
        SearchState& st = states[*choice.next];
        const int64_t before = work_done(st);
        if (hooks.before_round) hooks.before_round(st);
        if (auto s = search_round(st, evaluator, store, proposers, options, spent); !s) return s;
        if (hooks.after_round) hooks.after_round(st, spent);
        if (!st.budget_stop.empty()) {
            done[*choice.next] = true;
            st.stop_reason = st.budget_stop;
        } else if (work_done(st) == before) {
            done[*choice.next] = true;
            st.stop_reason = "the proposers have nothing new to propose";
        }
    }
    return Ok{};
}

}  // namespace kforge::search
