// The suite loop (search/suite.h).
#include "search/suite.h"

#include <algorithm>
#include <csignal>
#include <cstdio>

#include <thread>

#include "common/stop_request.h"
#include "search/loop_internal.h"
#include "search/suite_rounds.h"

namespace kforge::search {
namespace {

int64_t work_done(const SearchState& s) {
    return s.counts.proposed + s.counts.quick + s.counts.full;
}

// The least a round of `st` costs: a quick timing, and its start's full tier when the start has
// none yet (the first full tier pays for the full-shape correctness cases: 16-80 s on the H200,
// 1-5 s on the simulated device), at the suite's measured means; before any full tier was
// measured, at least 30 s on a GPU (2 s simulated). A round whose proposals are not compiled
// yet also waits for one compile wave, at the problem's measured wave time: without it, a
// cold 120 s suite on an H100 started a CUTLASS round with 39 s left and ended at 140 s.
double round_floor_s(const SearchState& st, const std::vector<SearchState>& states) {
    double quick = 0;
    int nq = 0;
    for (const SearchState& s : states)
        if (s.screen_costs.quick_samples > 0) quick += s.screen_costs.quick_s, ++nq;
    quick = nq > 0 ? quick / nq : 0;
    // the problem's own full tier, by its size (search/suite_rounds.h): a large reduction's took
    // 40 s where the suite's mean was a few, and its round ran 16 s past a 600 s budget
    const double full =
        full_tier_estimate_s(st, states, std::max(4 * quick, st.simulated ? 2.0 : 30.0));
    auto it = st.candidates.find(st.start_hash);
    const bool start_full = it != st.candidates.end() && it->second.full.has_value();
    const bool compiles = st.precompiled.empty() && st.screen_costs.compile_samples > 0;
    return quick + (start_full ? 0.0 : full) + (compiles ? st.screen_costs.compile_wave_s : 0.0);
}

}  // namespace

Status run_suite(std::vector<SearchState>& states, eval::Evaluator& evaluator, Store& store,
                 const std::vector<Proposer*>& proposers, const SearchOptions& options,
                 Spent& spent, const SuiteHooks& hooks) {
    std::vector<std::string> names;
    for (const SearchState& s : states) names.push_back(s.problem.name);
    std::vector<bool> done(states.size(), false);
    auto report = [&](std::optional<size_t> current, bool finished = false) {
        if (!hooks.progress) return;
        SuiteProgress p{&states, &spent, current,
                        static_cast<size_t>(std::count(done.begin(), done.end(), true)), finished};
        hooks.progress(p);
    };
    start_wall_clock(spent);  // the starts' compiles and timings count against the budget
    report(std::nullopt);
    auto started = run_start_phase(states, evaluator, store, options, spent, hooks.start);
    if (!started) return started.error();
    // A round times programs compiled for it up to kCompiledTimingGraceS past its wall budget:
    // the suite keeps that grace inside its own budget, so that it ends near the budget
    SearchOptions round_options = options;
    if (options.budget.wall_s && *options.budget.wall_s > 4 * detail::kCompiledTimingGraceS)
        round_options.budget.wall_s = *options.budget.wall_s - detail::kCompiledTimingGraceS;
    for (const auto* list : {&started->not_reached, &started->failed})
        for (size_t i : *list) done[i] = true;
    report(std::nullopt);
    // the next problems' compile waves run while the GPU times this one's round: waves of four
    // workers, as many at once as the cores hold (at least two), each holding one row of
    // programs while problems wait for their first round (search/suite_rounds.h): a CUTLASS
    // compile is ~45 s on one core, so a first round's wait is about one compile
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int waves = std::max(2, cores / 4);
    RoundPrefetcher prefetcher(states, evaluator, store, proposers, spent, hooks.before_round,
                               waves, std::max(1, cores / waves));
    while (!stop_requested()) {
        tick(spent);
        if (auto spent_all = budget_exhausted(options.budget, spent)) {
            for (size_t i = 0; i < states.size(); ++i)
                if (!done[i]) done[i] = true, states[i].stop_reason = *spent_all;
            break;
        }
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i] && states[i].progress.rounds > 0)  // every start is evaluated once
                if (auto why = should_stop(options.stop, states[i].progress, options.budget, spent)) {
                    done[i] = true;
                    states[i].stop_reason = *why;
                }
        // while problems wait for their first round, a round plans for its fair share
        size_t first_waiting = 0;
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i] && never_searched(states[i].progress)) ++first_waiting;
        round_options.round_share_s = first_round_share_s(round_options.budget, spent, first_waiting);
        if (auto s = prefetcher.pump(done, round_options); !s) return s;
        std::vector<Progress> progress;
        for (const SearchState& s : states) progress.push_back(s.progress);
        SuiteChoice choice =
            options.allocation == SuiteAllocation::kUniform
                ? choose_uniform(progress, done, prefetcher.waiting(done))
                : choose_next_problem(progress, done, names, 0.9, prefetcher.waiting(done));
        if (!choice.next) break;
        prefetcher.join(*choice.next);  // its wave, if one runs ahead
        if (hooks.passed_over)
            for (const std::string& r : choice.reasons) hooks.passed_over(r);
        SearchState& st = states[*choice.next];
        // a round that cannot do its least in the wall budget left is not started: it would
        // run past the budget (its start's full tier is never cut short)
        if (options.budget.wall_s) {
            const double left = *options.budget.wall_s - spent.wall_s;
            if (const double floor = round_floor_s(st, states); left < floor) {
                done[*choice.next] = true;
                char why[160];
                std::snprintf(why, sizeof why,
                              "wall-clock budget: %.1f s left, less than a round's least "
                              "(est %.1f s: a compile wave, a quick timing and the start's "
                              "full tier)",
                              std::max(0.0, left), floor);
                st.stop_reason = why;
                continue;
            }
        }
        const int64_t before = work_done(st);
        if (hooks.before_round) hooks.before_round(st);
        report(choice.next);
        if (auto s = search_round(st, evaluator, store, proposers, round_options, spent); !s)
            return s;
        tick(spent);
        if (hooks.after_round) hooks.after_round(st, spent);
        if (!st.budget_stop.empty()) {
            done[*choice.next] = true;
            st.stop_reason = st.budget_stop;
        } else if (work_done(st) == before) {
            done[*choice.next] = true;
            st.stop_reason = "the proposers have nothing new to propose";
        }
        report(std::nullopt);
    }
    if (stop_requested()) {
        const int sig = stop_signal();
        const std::string by = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a stop request";
        for (size_t i = 0; i < states.size(); ++i)
            if (!done[i]) states[i].stop_reason = "interrupted by " + by;
    }
    tick(spent);
    report(std::nullopt, true);
    return Ok{};
}

}  // namespace kforge::search
