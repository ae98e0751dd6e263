// The suite loop: one search per problem under one shared budget, every round given to the
// problem that choose_next_problem() (search/budget.h) picks. The policy is there; this is the
// loop that calls it (TVM's TaskScheduler::NextTaskId vs Tune).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/loop.h"
#include "search/suite_start.h"

namespace kforge::search {

// The suite as it goes, for a display (SuiteHooks::progress); the pointers live as long as the
// call to run_suite.
struct SuiteProgress {
    const std::vector<SearchState>* states = nullptr;  // every problem of the suite
    const Spent* spent = nullptr;                      // the suite's spending
    std::optional<size_t> current;  // the problem this round is given to (none: the start phase,
                                    // or between rounds)
    size_t done = 0;                // problems done (a stop condition, the budget, not reached)
    bool finished = false;          // the loop has ended: the last call
};

// What the caller sees of the loop, each optional.
struct SuiteHooks {
    // A problem passed over this round, and why (choose_next_problem's reasons).
    std::function<void(const std::string& reason)> passed_over;
    // Before a round of `state` (e.g. point the LLM proposer at its run).
    std::function<void(SearchState& state)> before_round;
    // After a round of `state`, with the suite's spending so far.
    std::function<void(const SearchState& state, const Spent& spent)> after_round;
    // Before the start phase, after it, before and after each round, and once at the end.
    std::function<void(const SuiteProgress& progress)> progress;
    // The start phase: its compiler (a test's), jobs, plan and per-start lines.
    StartPhaseOptions start;
};

// Runs the suite on `states` (started with start_search, each over its own problem): starts the
// wall clock, runs the start phase (search/suite_start.h: every start compiled and timed within
// the wall budget, the rest "not reached"), then gives rounds until every problem is done - a
// stop condition fired (checked once its start was evaluated), the suite's budget is spent, a
// round hit the wall budget (budget_stop), or a round proposed nothing new. Each state's
// stop_reason says why. A stop asked from outside (common/stop_request.h: SIGTERM, SIGINT) ends
// it after the evaluation in flight: every problem not done then has a stop_reason starting with
// "interrupted". Error only when the store fails.
Status run_suite(std::vector<SearchState>& states, eval::Evaluator& evaluator, Store& store,
                 const std::vector<Proposer*>& proposers, const SearchOptions& options,
                 Spent& spent, const SuiteHooks& hooks = {});

}  // namespace kforge::search
