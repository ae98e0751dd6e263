// Budgets, stop conditions and the allocation of rounds across the problems of a suite.
// Pure functions (but tick(), which reads the clock): the loop (search/loop.h) keeps the
// counters and asks.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::search {

// Limits; nullopt = unlimited.
struct Budget {
    std::optional<double> wall_s;
    std::optional<double> gpu_s;         // time spent evaluating at the timed tiers
    std::optional<int64_t> compiles;
    std::optional<int64_t> llm_tokens;   // tokens in + out (ProposerUsage)
    std::optional<double> llm_cost_usd;
};

struct Spent {
    double wall_s = 0;
    double gpu_s = 0;
    int64_t compiles = 0;
    int64_t llm_tokens = 0;
    double llm_cost_usd = 0;
    // The clock wall_s runs with once started (start_wall_clock): tick() sets wall_s to
    // wall_at_origin plus the time since origin, so that a round checks the wall budget between
    // its evaluations, not only after it.
    std::optional<std::chrono::steady_clock::time_point> wall_origin;
    double wall_at_origin = 0;
};

// Starts `spent`'s wall clock from its wall_s now (a resumed run keeps what it had spent).
void start_wall_clock(Spent& spent);
// Brings wall_s up to date with the clock (nothing before start_wall_clock).
void tick(Spent& spent);

// The first limit reached that ends the run, in words ("wall-clock budget spent (60.0 of 60
// s)"); nullopt when none. `wall_grace_s` lets the wall clock run that far past its limit (work
// already paid for, such as quick timings of programs compiled for the round). The compile
// limit is not among them: it stops compiles, not evaluations (compile_budget_spent).
std::optional<std::string> budget_exhausted(const Budget& budget, const Spent& spent,
                                            double wall_grace_s = 0.0);

// "compile budget spent (2 of 2)" once Spent::compiles reached the compile limit; nullopt
// before (or without one). After it the run evaluates only programs that need no compile of
// their own (launch-knob variants of compiled ones: search/knob_space.h), and stops when none
// is left (search/loop_propose.cpp).
std::optional<std::string> compile_budget_spent(const Budget& budget, const Spent& spent);

// "wall 12.0 of 60 s, compiles 10 of 40" (the limited ones only; "unlimited" when none).
std::string budget_left_text(const Budget& budget, const Spent& spent);

// Where one problem's search stands.
struct Progress {
    int rounds = 0;
    std::vector<double> best_ns_by_round;  // best passed time after each round (0: none yet)
    std::optional<double> fraction_of_sol;  // T_sol / T_best
};

// Composable stop conditions; each unset one never fires.
struct StopConditions {
    std::optional<double> within_sol_percent;  // stop when T_best <= T_sol * (1 + x/100)
    std::optional<int> patience_rounds;        // stop after N rounds without improvement
    std::optional<int> max_rounds;
};

std::optional<std::string> stop_within_sol(const StopConditions& c, const Progress& p);
std::optional<std::string> stop_no_improvement(const StopConditions& c, const Progress& p);
std::optional<std::string> stop_max_rounds(const StopConditions& c, const Progress& p);
// The first condition that fires, budget included.
std::optional<std::string> should_stop(const StopConditions& c, const Progress& p,
                                       const Budget& budget, const Spent& spent);

// Whether a problem has had no search round yet: at most its start timed (the round that timed
// it). Such problems get their first round before any problem a second (choose_next_problem).
inline bool never_searched(const Progress& p) { return p.best_ns_by_round.size() < 2; }

// Relative improvement of the best time over the last `window` rounds (0 without history of a
// passed time; a problem with no search round yet - no rounds, or only the round that timed its
// start - gets `prior`, so a suite tries every problem before it keeps feeding one).
double improvement_rate(const Progress& p, int window = 3, double prior = 0.25);

// Expected gain of one more round: SOL headroom (1 - fraction of SOL, 1 when unknown) times the
// recent improvement rate (at least a small floor, so a stalled problem far from SOL is not
// starved forever).
double expected_gain(const Progress& p);

struct SuiteChoice {
    std::optional<size_t> next;            // nullopt: every problem is done
    std::vector<std::string> reasons;      // one line per problem passed over, and why
};

// The problem to give the next round: one never searched yet (at most its start timed) first,
// then the largest expected gain among those not `done`;
// problems at or above `near_sol_fraction` of SOL are deprioritized (chosen only when nothing
// else is left) with a printed reason. Among those never searched, one whose round would wait
// for a compile wave (`waiting`, by index; empty: none waits) goes after those ready to time, so
// that the GPU times ready rounds while the waves compile (search/suite_rounds.h).
// How a suite gives its rounds: by SOL headroom (choose_next_problem, the default) or uniformly
// (choose_uniform: the baseline issue 27's allocation benchmark compares it with).
enum class SuiteAllocation { kSolHeadroom, kUniform };
std::string_view to_string(SuiteAllocation a);  // "sol", "uniform"
std::optional<SuiteAllocation> suite_allocation_from_string(std::string_view s);

// Uniform allocation: the problem not `done` with the fewest rounds (the lowest index among
// equals), one whose round would wait for a compile wave (`waiting`) after those ready; no
// headroom, no near-SOL deprioritizing, so every problem gets the same number of rounds.
SuiteChoice choose_uniform(const std::vector<Progress>& progress, const std::vector<bool>& done,
                           const std::vector<bool>& waiting = {});

SuiteChoice choose_next_problem(const std::vector<Progress>& progress,
                                const std::vector<bool>& done,
                                const std::vector<std::string>& names,
                                double near_sol_fraction = 0.9,
                                const std::vector<bool>& waiting = {});

}  // namespace kforge::search
